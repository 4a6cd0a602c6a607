// What a release binary was built from: its sha256 and a hash of the Rust
// sources (Cargo.toml, Cargo.lock, build.rs, src/**/*.rs). build-release.mjs
// writes it beside the binary; prepublish.mjs refuses a binary whose bytes or
// sources no longer match, so a package never ships a stale or hand-made file.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** sha256 over the Rust sources' paths and contents, in path order. */
export function sourcesHash(root) {
  const files = ["Cargo.toml", "Cargo.lock", "build.rs"];
  for (const f of readdirSync(join(root, "src"), { recursive: true })) {
    const path = `src/${String(f).replaceAll("\\", "/")}`;
    if (path.endsWith(".rs")) files.push(path);
  }
  const hash = createHash("sha256");
  for (const f of files.sort()) {
    hash.update(`${f}\0`);
    hash.update(readFileSync(join(root, f)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

export function fileHash(file) {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

export function binaryManifest(root, file, extra = {}) {
  return { ...extra, sha256: fileHash(file), sources: sourcesHash(root), profile: "release", stripped: true };
}
