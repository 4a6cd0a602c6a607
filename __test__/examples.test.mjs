// Every example in examples/ runs as a child process and prints what it should.
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const examples = fileURLToPath(new URL("../examples/", import.meta.url));

function runExample(file, args = []) {
  const env = { ...process.env };
  delete env.KNITTING_DEBUG;
  delete env.KNITTING_NATIVE_BINARY;
  const child = spawnSync(process.execPath, [`examples/${file}`, ...args], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000, // turns a hang into a failure; not a speed target
    env,
  });
  assert.equal(child.error, undefined, `${file}: ${child.error}`);
  assert.equal(child.signal, null, `${file} died by ${child.signal}: ${child.stderr}`);
  assert.equal(child.status, 0, `${file} exited with ${child.status}: ${child.stderr}`);
  assert.equal(child.stderr, "", `${file} wrote to stderr`);
  return child.stdout;
}

test("every example is tested here and listed in examples/README.md", () => {
  const files = readdirSync(examples).filter((f) => f.endsWith(".mjs") || f.endsWith(".js") || f.endsWith(".cjs"));
  assert.deepEqual(files.sort(), [
    "cpu-heavy.mjs",
    "http-server.mjs",
    "process-workers.mjs",
    "quick-start.cjs",
    "quick-start.mjs",
  ]);
  const readme = readFileSync(new URL("../examples/README.md", import.meta.url), "utf8");
  for (const f of files) assert.ok(readme.includes(`(${f})`), `examples/README.md does not link ${f}`);
  for (const f of files) {
    const src = readFileSync(new URL(`../examples/${f}`, import.meta.url), "utf8");
    assert.match(src, /from "knitting-native"|require\("knitting-native"\)/, `${f} imports the package by name`);
    assert.match(src, /if \(isMain\)/, `${f} keeps the pool behind isMain`);
  }
});

test("examples/quick-start.mjs", () => {
  assert.equal(runExample("quick-start.mjs"), "add([1, 2]) = 3\nsquare(7)   = 49\n10,000 calls, last = 19998\n");
});

test("examples/quick-start.cjs: the same as CommonJS", () => {
  assert.equal(runExample("quick-start.cjs"), "add([1, 2]) = 3\nsquare(7)   = 49\n10,000 calls, last = 19998\n");
});

test("examples/cpu-heavy.mjs: SHA-256 in the workers matches the host's", () => {
  const out = runExample("cpu-heavy.mjs", ["64", "64"]);
  assert.match(out, /^hashed 64 buffers \(4\.0 MiB\) on \d+ worker thread\(s\) in \d+ ms$/m);
  assert.match(out, /^first digest [0-9a-f]{64}$/m);
  assert.match(out, /^spot checks: 8\/8 match the host's own SHA-256$/m);
});

test("examples/cpu-heavy.mjs with its default sizes", () => {
  const out = runExample("cpu-heavy.mjs");
  assert.match(out, /^hashed 256 buffers \(64\.0 MiB\)/m);
  assert.match(out, /^spot checks: 8\/8 match/m);
});

test("examples/http-server.mjs --self-test: requests over loopback, answers checked", () => {
  const out = runExample("http-server.mjs", ["--self-test"]);
  assert.match(out, /^listening on http:\/\/127\.0\.0\.1:\d+ /m);
  assert.match(out, /^self-test: 24\/24 answers correct in \d+ ms$/m);
  assert.match(out, /^self-test: bad input -> HTTP 400$/m);
  assert.match(out, /^self-test: ok$/m);
});

test("examples/process-workers.mjs: calls answered by worker processes; a crashed one is replaced", () => {
  const out = runExample("process-workers.mjs");
  // One or both: with work stealing a worker that keeps up with tiny calls
  // may take all of them while the other stays parked (nothing waits).
  assert.match(out, /^10,000 calls answered by [12] worker processes \(host pid is not among them: true\)$/m);
  assert.match(out, /^longest Collatz chain below 10,001: n = 6171, 261 steps$/m);
  assert.match(out, /^a worker process exited: KNT_WORKER_EXIT, exit code 7$/m);
  assert.match(out, /^the pool keeps serving: collatz\(27\) = 111 steps$/m);
});
