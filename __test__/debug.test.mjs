// KNITTING_DEBUG namespaces (lib/host/debug.js): child processes run a one-worker
// pool and the test reads their stderr.
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const { makeDebug, parseDebugEnv, NAMESPACES } = require("../lib/host/debug.js");

const fixture = fileURLToPath(new URL("./fixtures/debug-namespaces.mjs", import.meta.url));
const LINE = /^knitting-native:([a-z]+) pool \d+ \+ *\d+\.\d ms \S.*$/;

function run({ debug, breakImport = false, poolDebug = false } = {}) {
  const env = { ...process.env };
  delete env.KNITTING_DEBUG;
  if (debug !== undefined) env.KNITTING_DEBUG = debug;
  if (breakImport) env.KNT_FIXTURE_BREAK_IMPORT = "1";
  if (poolDebug) env.KNT_FIXTURE_POOL_DEBUG = "1";
  const child = spawnSync(process.execPath, [fixture], { encoding: "utf8", timeout: 30_000, env });
  assert.equal(child.error, undefined, String(child.error));
  assert.equal(child.status, 0, child.stderr);
  assert.equal(
    child.stdout,
    breakImport ? "rejected: debug fixture fails in workers on purpose\n" : "result 42\n",
    child.stderr,
  );
  const lines = child.stderr.split("\n").filter(Boolean);
  for (const line of lines) assert.match(line, LINE, `not a trace line: ${line}`);
  const topics = new Set(lines.map((l) => LINE.exec(l)[1]));
  const of = (topic) => lines.filter((l) => l.startsWith(`knitting-native:${topic} `));
  return { stderr: child.stderr, lines, topics, of };
}

test("no output when KNITTING_DEBUG is unset, empty, 0 or false", () => {
  for (const debug of [undefined, "", "0", "false", "off"]) {
    assert.equal(run({ debug }).stderr, "", `KNITTING_DEBUG=${debug}`);
    assert.equal(run({ debug, breakImport: true }).stderr, "", `KNITTING_DEBUG=${debug}, failing import`);
  }
});

test("KNITTING_DEBUG=lifecycle: lifecycle lines only", () => {
  const ok = run({ debug: "lifecycle" });
  assert.deepEqual([...ok.topics], ["lifecycle"]);
  assert.ok(
    ok.of("lifecycle").some((l) => / created: 1 workers, tasks double; private lanes/.test(l)),
    ok.stderr,
  );
  assert.ok(
    ok.of("lifecycle").some((l) => / shutdown:/.test(l)),
    ok.stderr,
  );

  const broken = run({ debug: "lifecycle", breakImport: true });
  assert.deepEqual([...broken.topics], ["lifecycle"], "the failed import is an imports event, not shown");
  assert.equal(broken.of("imports").length, 0);
});

test("KNITTING_DEBUG=imports: the failed task-module import, nothing else", () => {
  const broken = run({ debug: "imports", breakImport: true });
  assert.deepEqual([...broken.topics], ["imports"]);
  assert.ok(
    broken.of("imports").some((l) => l.includes("debug fixture fails in workers on purpose")),
    broken.stderr,
  );
  assert.equal(broken.of("lifecycle").length, 0);

  assert.equal(
    run({ debug: "imports" }).of("lifecycle").length,
    0,
    "a healthy pool has no lifecycle lines under imports",
  );
});

test("a comma-separated list enables each namespace in it (spaces and case ignored)", () => {
  for (const debug of ["imports,lifecycle", "lifecycle, imports", "LIFECYCLE,Imports"]) {
    const r = run({ debug, breakImport: true });
    assert.deepEqual([...r.topics].sort(), ["imports", "lifecycle"], `KNITTING_DEBUG=${debug}`);
  }
  const r = run({ debug: "signals,host", breakImport: true });
  assert.equal(r.of("lifecycle").length + r.of("imports").length, 0, "other namespaces stay quiet");
});

test("KNITTING_DEBUG=* / 1 / true / all, and debug: true, enable every namespace", () => {
  for (const debug of ["*", "1", "true", "all", "lifecycle,*"]) {
    const r = run({ debug, breakImport: true });
    // host: the topology line at start-up.
    assert.deepEqual([...r.topics].sort(), ["host", "imports", "lifecycle"], `KNITTING_DEBUG=${debug}`);
  }
  const pool = run({ poolDebug: true, breakImport: true });
  assert.deepEqual([...pool.topics].sort(), ["host", "imports", "lifecycle"], "debug: true");
  const both = run({ poolDebug: true, debug: "imports", breakImport: true });
  assert.deepEqual(
    [...both.topics].sort(),
    ["host", "imports", "lifecycle"],
    "debug: true wins over a narrower KNITTING_DEBUG",
  );
});

test("unknown namespaces are ignored", () => {
  assert.equal(run({ debug: "nonsense", breakImport: true }).stderr, "");
  assert.deepEqual([...run({ debug: "nonsense,imports", breakImport: true }).topics], ["imports"]);
});

test("parseDebugEnv and makeDebug (signature, null when off, output format)", (t) => {
  assert.deepEqual(NAMESPACES, ["host", "signals", "imports", "lifecycle"]);
  assert.equal(parseDebugEnv("*"), "all");
  assert.equal(parseDebugEnv(" 1 "), "all");
  assert.equal(parseDebugEnv(undefined).size, 0);
  assert.deepEqual([...parseDebugEnv("host, signals,bogus")], ["host", "signals"]);

  const saved = process.env.KNITTING_DEBUG;
  t.after(() => {
    if (saved === undefined) delete process.env.KNITTING_DEBUG;
    else process.env.KNITTING_DEBUG = saved;
  });
  delete process.env.KNITTING_DEBUG;
  assert.equal(makeDebug(false, 1), null);

  process.env.KNITTING_DEBUG = "signals";
  const debug = makeDebug(false, 7);
  assert.equal(typeof debug, "function");
  assert.equal(debug.enabled("signals"), true);
  assert.equal(debug.enabled("host"), false);
  const written = [];
  const write = process.stderr.write;
  process.stderr.write = (chunk) => written.push(String(chunk)) > 0;
  try {
    debug("signals", "doorbell rung");
    debug("host", "not shown");
  } finally {
    process.stderr.write = write;
  }
  assert.equal(written.length, 1);
  assert.match(written[0], /^knitting-native:signals pool 7 \+ *\d+\.\d ms doorbell rung\n$/);

  delete process.env.KNITTING_DEBUG;
  const all = makeDebug(true, 2);
  assert.ok(NAMESPACES.every((n) => all.enabled(n)));
});

test("KNITTING_DEBUG=host,signals: queueing, doorbell rings and aborts are traced", () => {
  const script = fileURLToPath(new URL("./fixtures/debug-host-signals.mjs", import.meta.url));
  const child = spawnSync(process.execPath, [script], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, KNITTING_DEBUG: "host,signals" },
  });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), "AbortError");
  assert.match(child.stderr, /knitting-native:host pool \d+ .* calls queued behind 32 in slots/);
  assert.match(child.stderr, /knitting-native:signals pool \d+ .* doorbell ring #1: waited [\d.]+ ms/);
  assert.match(child.stderr, /knitting-native:signals pool \d+ .* aborted by its AbortSignal/);
  assert.doesNotMatch(child.stderr, /knitting-native:lifecycle/);
});

// knitting prints its topology on the host channel as `dispatcher=<name> lanes=<n>`
// (stealing adds `g=<region lanes>`); the balancer and the inliner follow.
const TOPOLOGIES = [
  [{ threads: 2 }, /^dispatcher=steal lanes=2 g=\d+$/],
  [{ threads: 2, host: { steal: true } }, /^dispatcher=steal lanes=2 g=\d+$/],
  [{ threads: 1 }, /^dispatcher=per-thread lanes=1$/],
  [{ threads: 2, host: { steal: false } }, /^dispatcher=per-thread lanes=2$/],
  [{ threads: 2, balancer: "firstIdle" }, /^dispatcher=per-thread lanes=2 balancer=firstIdle$/],
  [{ threads: 2, host: { dispatcher: "per-thread" } }, /^dispatcher=per-thread lanes=2$/],
  [{ threads: 2, host: { dispatcher: "serial-channel" } }, /^dispatcher=serial-channel lanes=2$/],
  [{ threads: 2, inliner: { position: "first" } }, /^dispatcher=per-thread lanes=2 inliner=first$/],
];

function runTopology(options, debugOff = false) {
  const env = { ...process.env, KNT_FIXTURE_OPTIONS: JSON.stringify(options) };
  for (const name of ["KNITTING_DEBUG", "KNITTING_STEAL", "KNITTING_DISPATCHER"]) delete env[name];
  if (debugOff) env.KNT_FIXTURE_DEBUG_OFF = "1";
  const file = fileURLToPath(new URL("./fixtures/debug-topology.mjs", import.meta.url));
  const child = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 30_000, env });
  assert.equal(child.error, undefined, String(child.error));
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout, "result 42\n", child.stderr);
  return child.stderr;
}

test("debug: { host: true } names the topology once at start-up: dispatcher=steal by default, others by name", () => {
  for (const [options, expected] of TOPOLOGIES) {
    const stderr = runTopology(options);
    const lines = stderr.split("\n").filter(Boolean);
    for (const line of lines) assert.match(line, /^knitting-native:host /, `only host lines: ${line}`);
    const named = lines.filter((l) => l.includes("dispatcher=")).map((l) => LINE.exec(l)[0].replace(/^.* ms /, ""));
    assert.equal(named.length, 1, `one topology line for ${JSON.stringify(options)}:\n${stderr}`);
    assert.match(named[0], expected, JSON.stringify(options));
  }
});

test("without debug the topology is not printed", () => {
  for (const [options] of TOPOLOGIES) assert.equal(runTopology(options, true), "", JSON.stringify(options));
});
