// The release build of the Linux binaries, the napi-rs way: cargo-zigbuild
// links the gnu targets against glibc 2.17 (so that one binary loads on
// every glibc distribution since RHEL 7 / Debian 8), cross-builds arm64 and
// musl on an x86-64 host, and the binaries are stripped. Each lands in
// target/release-binaries/knitting-native.<triple>.node with a manifest
// (`.node.json`: its sha256 and a hash of the Rust sources it was built from)
// that scripts/prepublish.mjs checks before it copies the binary into
// npm/<triple>/. The gnu binaries are checked with scripts/check-glibc.mjs.
//
//   node scripts/build-release.mjs [--targets linux-x64-gnu,linux-arm64-gnu,linux-x64-musl]
//
// Needs: rustup (it adds a missing Rust target) and cargo-zigbuild with zig
// (`python3 -m pip install ziglang cargo-zigbuild`). `npm run build` stays the
// development build (plain cargo, this machine's glibc) and needs neither.
// macOS and Windows binaries are built on those systems (`npm run build`)
// and handed to prepublish.mjs with --artifacts.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import platform from "../lib/native/platform.js";
import { checkBinary, GLIBC_FLOOR } from "./check-glibc.mjs";
import { binaryManifest } from "./release-manifest.mjs";

const { TARGETS } = platform;
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const LINUX = ["linux-x64-gnu", "linux-arm64-gnu", "linux-x64-musl"];

const { values: opts } = parseArgs({ options: { targets: { type: "string" }, out: { type: "string" } } });
const triples = opts.targets ? opts.targets.split(",").map((t) => t.trim()) : LINUX;
const out = resolve(opts.out ?? join(root, "target", "release-binaries"));

function fail(msg) {
  console.error(`build-release: ${msg}`);
  process.exit(1);
}

for (const t of triples) {
  if (!LINUX.includes(t)) fail(`${t}: this script builds ${LINUX.join(", ")}; build ${t} on its own system`);
}

const zigbuild = spawnSync("cargo", ["zigbuild", "--help"], { encoding: "utf8" });
if (zigbuild.status !== 0) {
  fail(
    "cargo-zigbuild is not installed (or zig is missing): `python3 -m pip install ziglang cargo-zigbuild`, " +
      "then run this again. `npm run build` makes a development build without it.",
  );
}

const installed = spawnSync("rustup", ["target", "list", "--installed"], { encoding: "utf8" });
const have = new Set(installed.status === 0 ? installed.stdout.split("\n").map((l) => l.trim()) : []);

mkdirSync(out, { recursive: true });
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(root, process.env.CARGO_TARGET_DIR) : join(root, "target");
for (const triple of triples) {
  const rust = TARGETS[triple].rust;
  if (!have.has(rust)) {
    console.log(`build-release: adding the Rust standard library for ${rust} (rustup target add)`);
    const add = spawnSync("rustup", ["target", "add", rust], { stdio: "inherit" });
    if (add.status !== 0) fail(`rustup could not add ${rust}: without its standard library ${triple} cannot be built`);
  }
  const gnu = TARGETS[triple].libc === "glibc";
  // zig takes the glibc version as a suffix of the target.
  const zigTarget = gnu ? `${rust}.${GLIBC_FLOOR}` : rust;
  const env = { ...process.env, CARGO_PROFILE_RELEASE_STRIP: "symbols" };
  // Rust links musl statically into executables by default; a cdylib loaded
  // by a musl Node must use the process's libc instead.
  if (!gnu) env[`CARGO_TARGET_${rust.toUpperCase().replaceAll("-", "_")}_RUSTFLAGS`] = "-C target-feature=-crt-static";
  console.log(`build-release: cargo zigbuild --release --lib --target ${zigTarget}`);
  execFileSync("cargo", ["zigbuild", "--release", "--lib", "--target", zigTarget], {
    cwd: root,
    stdio: "inherit",
    env,
  });
  const built = join(targetDir, rust, "release", "libknitting_native.so");
  const dest = join(out, `knitting-native.${triple}.node`);
  copyFileSync(built, dest);
  const problems = checkBinary(dest, { stripped: true, glibc: gnu });
  if (problems.length) fail(`${dest}:\n  ${problems.join("\n  ")}`);
  writeFileSync(
    `${dest}.json`,
    `${JSON.stringify(binaryManifest(root, dest, { triple, target: zigTarget }), null, 2)}\n`,
  );
  console.log(`build-release: ${dest} (${gnu ? `glibc <= ${GLIBC_FLOOR}, ` : ""}stripped)`);
}
