// The minimum Node.js / N-API: lib/native/index.js refuses older ones with a clear
// message, before it looks for a binary. Child processes fake an old runtime
// with a --require preload (fixtures/fake-node-version.cjs).
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { skipOn } from "./fixtures/runtime.mjs";

// Each case starts a child with node's --require preload and -e.
const skip = skipOn({
  deno: "fakes an old Node.js through node's --require and -e, which deno's command line does not take",
});

const root = fileURLToPath(new URL("..", import.meta.url));
const preload = fileURLToPath(new URL("./fixtures/fake-node-version.cjs", import.meta.url));
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

function load({ node, napi, esm = false }) {
  const env = { ...process.env, FAKE_NODE_VERSION: node ?? "", FAKE_NAPI_VERSION: napi ?? "" };
  delete env.KNITTING_NATIVE_BINARY;
  const args = esm
    ? ["--require", preload, "--input-type=module", "-e", 'await import("knitting-native"); console.log("loaded")']
    : ["--require", preload, "-e", 'require("knitting-native"); console.log("loaded")'];
  const child = spawnSync(process.execPath, args, { cwd: root, encoding: "utf8", timeout: 30_000, env });
  assert.equal(child.error, undefined, String(child.error));
  return child;
}

function assertRefused(child, node, napi) {
  assert.notEqual(child.status, 0, "must not load");
  assert.equal(child.stdout, "");
  assert.match(child.stderr, /knitting-native needs Node\.js >= 20 and N-API >= 8; /);
  assert.ok(child.stderr.includes(`this is Node.js v${node} with N-API ${napi}.`), child.stderr);
  assert.match(child.stderr, /Upgrade Node\.js to 20 or newer/);
  assert.doesNotMatch(child.stderr, /native addon|npm run build/, "refused before looking for a binary");
}

test("an N-API older than 8 is refused, naming the N-API and Node.js versions needed (require and import)", {
  skip,
}, () => {
  assertRefused(load({ node: "15.0.0", napi: "7" }), "15.0.0", "7");
  assertRefused(load({ node: "15.0.0", napi: "7", esm: true }), "15.0.0", "7");
  assertRefused(load({ node: "12.0.0", napi: "4" }), "12.0.0", "4");
});

test("a runtime without process.versions.napi is refused", { skip }, () => {
  assertRefused(load({ node: "20.0.0", napi: "none" }), "20.0.0", "(none)");
});

test("Node.js older than 20 is refused even with a recent N-API", { skip }, () => {
  assertRefused(load({ node: "18.20.0", napi: "9" }), "18.20.0", "9");
});

test("the preload itself does not break loading: Node 20 with N-API 8 loads", { skip }, () => {
  const child = load({ node: "20.0.0", napi: "8" });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout, "loaded\n");
});

test("this Node.js qualifies, and package.json engines.node says >= 20", () => {
  assert.ok(Number(process.versions.napi) >= 8, `N-API ${process.versions.napi}`);
  assert.ok(Number(process.versions.node.split(".")[0]) >= 20);
  assert.match(pkg.engines.node, /^>=\s*20(\.0(\.0)?)?$/);
  // The addon's N-API level (Cargo.toml feature) is the one native/index.js demands.
  const cargo = readFileSync(new URL("../Cargo.toml", import.meta.url), "utf8");
  assert.match(cargo, /features\s*=\s*\[[^\]]*"napi8"/);
  const native = readFileSync(new URL("../lib/native/index.js", import.meta.url), "utf8");
  assert.match(native, /const MIN_NAPI = 8;/);
  assert.match(native, /const MIN_NODE_MAJOR = 20;/);
});
