// Builds the Rust addon with cargo and places it where lib/native/index.js looks for
// it: `knitting-native.<platform>-<arch>[-<abi>].node` in the package root, the
// file name napi-rs packages use, so a prebuilt binary from npm/<triple>/ and a
// local build are found the same way.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { platformTriple } from "../lib/native/platform.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const debug = process.argv.includes("--debug");
const dest = join(root, `knitting-native.${platformTriple()}.node`);
// --if-missing (`npm run demo`): a fresh clone gets its build, a checkout
// that has one starts at once (`npm run build` rebuilds after a change).
if (process.argv.includes("--if-missing") && existsSync(dest)) process.exit(0);
const cargo = spawnSync("cargo", ["--version"], { encoding: "utf8" });
if (cargo.error || cargo.status !== 0) {
  console.error(
    "knitting-native: building the addon needs Rust (cargo), which is not on PATH: install it from " +
      "https://rustup.rs and run this again. (Installing the package from npm needs no Rust: " +
      "it ships prebuilt binaries.)",
  );
  process.exit(1);
}
// --publish (macOS, Windows: Linux has build-release.mjs): a stripped release
// build with the manifest scripts/prepublish.mjs requires beside it.
const publish = process.argv.includes("--publish");
if (publish && debug) throw new Error("knitting-native: --publish is a release build, not with --debug");
const args = ["build", "--lib"];
if (!debug) args.push("--release");
const env = publish ? { ...process.env, CARGO_PROFILE_RELEASE_STRIP: "symbols" } : process.env;
execFileSync("cargo", args, { cwd: root, stdio: "inherit", env });

const profile = debug ? "debug" : "release";
const libName = { linux: "libknitting_native.so", darwin: "libknitting_native.dylib", win32: "knitting_native.dll" }[
  process.platform
];
if (!libName) throw new Error(`knitting-native: no build recipe for platform ${process.platform}`);
// cargo honours CARGO_TARGET_DIR (a shared build cache); so does this copy.
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(root, process.env.CARGO_TARGET_DIR) : join(root, "target");
const built = join(targetDir, profile, libName);
if (!existsSync(built)) throw new Error(`knitting-native: cargo finished but ${built} is missing`);
copyFileSync(built, dest);
if (publish) {
  const { binaryManifest } = await import("./release-manifest.mjs");
  const manifest = binaryManifest(root, dest, { triple: platformTriple(), target: "host" });
  writeFileSync(`${dest}.json`, `${JSON.stringify(manifest, null, 2)}\n`);
}
console.log(`knitting-native: built ${dest}`);
