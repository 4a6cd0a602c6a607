// Builds the Rust addon with cargo and places it where lib/native.js looks for
// it: `knitting-native.<platform>-<arch>[-<abi>].node` in the package root, the
// file name napi-rs packages use, so a prebuilt binary from npm/<triple>/ and a
// local build are found the same way.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { platformTriple } from "../lib/platform.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const debug = process.argv.includes("--debug");
const args = ["build", "--lib"];
if (!debug) args.push("--release");
execFileSync("cargo", args, { cwd: root, stdio: "inherit" });

const profile = debug ? "debug" : "release";
const libName = { linux: "libknitting_native.so", darwin: "libknitting_native.dylib", win32: "knitting_native.dll" }[
  process.platform
];
if (!libName) throw new Error(`knitting-native: no build recipe for platform ${process.platform}`);
// cargo honours CARGO_TARGET_DIR (a shared build cache); so does this copy.
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(root, process.env.CARGO_TARGET_DIR) : join(root, "target");
const built = join(targetDir, profile, libName);
if (!existsSync(built)) throw new Error(`knitting-native: cargo finished but ${built} is missing`);
const dest = join(root, `knitting-native.${platformTriple()}.node`);
copyFileSync(built, dest);
console.log(`knitting-native: built ${dest}`);
