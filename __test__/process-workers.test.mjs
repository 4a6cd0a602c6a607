// worker.runtime "process": each worker is a Node process; calls still go
// through shared memory (a memfd or a POSIX shm object), waits and wakes
// through the shared futex.
//
// KNITTING_TEST_PROCESS_RUNTIME=bun|deno (with KNITTING_TEST_PROCESS_EXECUTABLE,
// the path of that runtime) runs every test here with worker processes of
// that runtime under this host (process-runtimes.test.mjs does so).
import test from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { createPool, WorkerExitError } from "../index.mjs";
import { zFirst, zSecond } from "./fixtures/process-order-a.mjs";
import { aOnly } from "./fixtures/process-order-b.mjs";
import { add, echo, delayed, failSync, failAsync } from "./fixtures/tasks.mjs";
import {
  pid,
  held,
  crashLater,
  exitWith,
  surroundings,
  checksum,
  spin,
  watchAbortRecorded,
  lastAbort,
} from "./fixtures/process-tasks.mjs";
import { slowDefault } from "./fixtures/lifecycle-tasks.mjs";
import { runtime as hostRuntime } from "./fixtures/runtime.mjs";
import { sleep, until } from "./helpers/wait.mjs";
import { random } from "./helpers/prng.mjs";
import { fixture } from "./helpers/children.mjs";

const linux = process.platform === "linux";
const skip = linux ? false : "process workers need Linux";
const shmEntries = (prefix) => readdirSync("/dev/shm").filter((n) => n.startsWith(`${prefix}-`));
const uniquePrefix = (tag) => `knt-test-${tag}-${process.pid}`;

// Worker processes run on the host's runtime by default.
const childRuntime = process.env.KNITTING_TEST_PROCESS_RUNTIME || hostRuntime;
const childExecutable = process.env.KNITTING_TEST_PROCESS_EXECUTABLE || undefined;
/** The worker options that pick the workers' runtime (none for the default). */
const childOptions =
  childRuntime === hostRuntime ? {} : { processRuntime: childRuntime, processExecutable: childExecutable };
const onlyNodeChildren = (why) =>
  skip !== false ? skip : childRuntime === "node" ? false : `${childRuntime} worker processes: ${why}`;

function processPool(options, tasks) {
  const worker = { runtime: "process", ...childOptions, ...options.worker };
  return createPool({ threads: 1, ...options, worker })(tasks);
}

/** Polls `predicate()` every 20 ms for up to 15 s (a bound on a hang). */
const waitUntil = (predicate, what) => until(predicate, 15_000, what, 20);

function alive(p) {
  try {
    process.kill(p, 0);
    return true;
  } catch {
    return false;
  }
}

test("calls run in another process: sync, async, thrown, isMain false there", { skip }, async () => {
  const pool = processPool({ threads: 2, worker: {} }, { add, delayed, failSync, failAsync, pid, surroundings });
  try {
    await pool.ready;
    const workerPid = await pool.call.pid();
    assert.notEqual(workerPid, process.pid);
    const seen = await pool.call.surroundings("X");
    assert.equal(seen.ppid, process.pid);
    // The host's runtime unless worker.processRuntime names another.
    assert.equal(seen.runtime, childRuntime, "the worker process runs on the expected runtime");
    assert.equal((await pool.call.surroundings("X")).isMain, false);
    assert.equal(await pool.call.add([2, 3]), 5);
    assert.equal(await pool.call.delayed(["later", 5]), "later");
    await assert.rejects(pool.call.failSync("boom"), (err) => err instanceof TypeError && err.message === "boom");
    await assert.rejects(
      pool.call.failAsync("async boom"),
      (err) => err.name === "CustomError" && err.cause.code === 42,
    );
    const many = await Promise.all(Array.from({ length: 5000 }, (_, i) => pool.call.add([i, i])));
    many.forEach((v, i) => assert.equal(v, 2 * i));
  } finally {
    await pool.shutdown();
  }
});

test("payloads past the inline slot and of ~1 MiB cross both ways", { skip }, async () => {
  const pool = processPool({ worker: {} }, { echo, checksum });
  try {
    const text = "é✓x".repeat(300); // > 512 encoded bytes
    assert.equal(await pool.call.echo(text), text);
    const bytes = new Uint8Array(1024 * 1024 - 17);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) & 255;
    let sum = 0;
    for (let i = 0; i < bytes.length; i++) sum = (sum + bytes[i] * (i + 1)) >>> 0;
    assert.deepEqual(await pool.call.checksum(bytes), { length: bytes.length, sum });
    const back = await pool.call.echo(bytes);
    assert.ok(back instanceof Uint8Array);
    assert.deepEqual(back, bytes);
    // Many large values in flight at once share the fixed-size region.
    const all = await Promise.all(
      Array.from({ length: 20 }, (_, i) => pool.call.echo({ i, pad: "p".repeat(64 * 1024) })),
    );
    all.forEach((v, i) => assert.equal(v.i, i));
  } finally {
    await pool.shutdown();
  }
});

test("mixed sizes, sync, async and throwing calls: every answer right, no payload block left", { skip }, async () => {
  const pool = processPool({ threads: 2, worker: {} }, { echo, delayed, failSync });
  try {
    const rand = random(0x9e3779b9);
    const calls = [];
    for (let i = 0; i < 2000; i++) {
      const r = rand();
      const size = r < 0.6 ? Math.floor(rand() * 400) : r < 0.98 ? Math.floor(rand() * 200_000) : 900_000;
      const value = { i, text: String.fromCharCode(97 + (i % 26)).repeat(size) };
      const kind = i % 3;
      if (kind === 0) calls.push(pool.call.echo(value).then((v) => assert.deepEqual(v, value)));
      else if (kind === 1) calls.push(pool.call.delayed([value, i % 4]).then((v) => assert.deepEqual(v, value)));
      else
        calls.push(
          pool.call.failSync(`no ${i} ${value.text}`).then(
            () => assert.fail("must throw"),
            (e) => assert.equal(e.message, `no ${i} ${value.text}`),
          ),
        );
    }
    await Promise.all(calls);
    // Blocks were allocated and freed on both sides of the process boundary.
    const internal = pool[Symbol.for("knitting-native.pool")];
    // The host keeps the chunk it carves small arguments from until room is short.
    internal.payload.retire();
    assert.equal(internal.payload.arena.stats().liveBlocks, 0);
  } finally {
    await pool.shutdown();
  }
});

test("task ids agree although host and workers import the modules in another order", { skip }, async () => {
  // This file imported process-order-a.mjs before process-order-b.mjs; a
  // worker imports them in table order (aOnly sorts first, so b before a).
  const pool = processPool({ threads: 2, worker: {} }, { zSecond, aOnly, zFirst });
  try {
    assert.equal(await pool.call.zFirst(1), "a.first(1)");
    assert.equal(await pool.call.zSecond(2), "a.second(2)");
    assert.equal(await pool.call.aOnly(3), "b.only(3)");
  } finally {
    await pool.shutdown();
  }
});

test("a SIGKILLed worker rejects the calls it held with its pid and signal; a replacement serves", {
  skip,
}, async () => {
  const pool = processPool({ worker: {} }, { pid, held, add });
  try {
    const victim = await pool.call.pid();
    const calls = [pool.call.held(60_000), pool.call.held(60_000)].map((p) =>
      p.then(
        () => assert.fail("must reject"),
        (e) => e,
      ),
    );
    await sleep(50);
    process.kill(victim, "SIGKILL");
    for (const err of await Promise.all(calls)) {
      assert.ok(err instanceof WorkerExitError, String(err));
      assert.equal(err.code, "KNT_WORKER_EXIT");
      assert.equal(err.pid, victim);
      assert.equal(err.signal, "SIGKILL");
      assert.equal(err.exitCode, null);
      assert.match(err.message, new RegExp(`pid ${victim}\\) exited with signal SIGKILL`));
    }
    const next = await pool.call.pid();
    assert.notEqual(next, victim);
    assert.equal(await pool.call.add([40, 2]), 42);
  } finally {
    await pool.shutdown();
  }
});

test("process.exit() in a task and an uncaught exception end the worker; the pool goes on", { skip }, async () => {
  const pool = processPool({ worker: {} }, { pid, exitWith, crashLater, held, add });
  try {
    const first = await pool.call.pid();
    const err = await pool.call.exitWith(7).then(
      () => assert.fail("must reject"),
      (e) => e,
    );
    assert.ok(err instanceof WorkerExitError);
    assert.equal(err.exitCode, 7);
    assert.equal(err.pid, first);
    assert.equal(err.signal, null);
    assert.match(err.message, new RegExp(`pid ${first}\\) exited with code 7`));

    const second = await pool.call.pid();
    assert.notEqual(second, first);
    const waiting = pool.call.held(60_000).then(
      () => assert.fail("must reject"),
      (e) => e,
    );
    assert.equal(await pool.call.crashLater(), second);
    const crashed = await waiting;
    assert.ok(crashed instanceof WorkerExitError);
    assert.equal(crashed.pid, second);
    assert.equal(crashed.exitCode, 1);
    assert.equal(await pool.call.add([1, 1]), 2);
  } finally {
    await pool.shutdown();
  }
});

test("hardTimeoutMs replaces a runaway worker process", { skip }, async () => {
  const pool = processPool({ worker: { hardTimeoutMs: 200 } }, { spin, add });
  try {
    const err = await pool.call.spin().then(
      () => assert.fail("must reject"),
      (e) => e,
    );
    assert.equal(err.code, "KNT_HARD_TIMEOUT", String(err));
    // A call placed while the runaway is being killed goes down with it (as
    // with threads); the replacement serves the next one.
    const sum = await pool.call.add([1, 2]).catch((e) => {
      assert.equal(e.cause && e.cause.code, "KNT_HARD_TIMEOUT", String(e));
      return pool.call.add([1, 2]);
    });
    assert.equal(sum, 3);
  } finally {
    await pool.shutdown();
  }
});

test("timeouts and aborts reach a worker process through the shared abort words", { skip }, async () => {
  const pool = processPool({ worker: {} }, { slowDefault, watchAbortRecorded, lastAbort });
  try {
    assert.equal(await pool.call.slowDefault(2_000), "fallback");
    const controller = new AbortController();
    const call = pool.call.watchAbortRecorded(30_000, { signal: controller.signal });
    setTimeout(() => controller.abort("enough"), 30);
    await assert.rejects(call, (err) => err.name === "AbortError" && err.cause === "enough");
    // The worker process saw its flag flip and ended the task early.
    let seen = null;
    for (let i = 0; i < 200 && seen !== "saw abort"; i++) {
      seen = await pool.call.lastAbort();
      if (seen !== "saw abort") await sleep(10);
    }
    assert.equal(seen, "saw abort");
    assert.equal(await pool.call.watchAbortRecorded(1), "not aborted");
  } finally {
    await pool.shutdown();
  }
});

test("a command prefix that cannot start fails the pool with why", { skip }, async () => {
  const pool = processPool({ worker: { processCommandPrefix: ["/nonexistent/knitting-wrapper"] } }, { pid });
  try {
    await assert.rejects(pool.ready, /cannot start a worker process \(\/nonexistent\/knitting-wrapper\): .*ENOENT/);
    await assert.rejects(pool.call.pid(), /ENOENT/);
  } finally {
    await pool.shutdown();
  }
});

test("named shared memory: the name goes once workers mapped it, and after a crash and shutdown", {
  skip,
}, async () => {
  const prefix = uniquePrefix("named");
  const pool = processPool(
    { threads: 2, worker: { processSharedMemory: { mode: "named", namePrefix: prefix } } },
    { pid, add, echo },
  );
  try {
    const created = shmEntries(prefix);
    assert.equal(created.length, 1, "the name exists while the workers start");
    // <prefix>-<pid namespace>-<creator pid>-<128 random bits>
    assert.match(created[0], new RegExp(`^${prefix}-\\d+-${process.pid}-[0-9a-f]{32}$`));
    await pool.ready;
    assert.deepEqual(shmEntries(prefix), [], "unlinked once every worker mapped it");
    const victim = await pool.call.pid();
    process.kill(victim, "SIGKILL");
    // The replacement opens the memory without the name.
    await waitUntil(() => !alive(victim), "the killed worker to go");
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => pool.call.add([i, 1])));
    results.forEach((v, i) => assert.equal(v, i + 1));
    assert.equal(await pool.call.echo("y".repeat(5000)), "y".repeat(5000));
    assert.deepEqual(shmEntries(prefix), []);
  } finally {
    await pool.shutdown();
  }
  assert.deepEqual(shmEntries(prefix), []);
});

test("named shared memory: nothing is left after the host is SIGKILLed, and its workers exit", { skip }, async () => {
  const prefix = uniquePrefix("killed-host");
  const host = spawn(process.execPath, [fixture("process-host-named.mjs"), prefix, JSON.stringify(childOptions)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  host.stdout.on("data", (chunk) => (out += chunk));
  const exited = new Promise((resolve) => host.on("exit", (code, signal) => resolve(signal)));
  await waitUntil(() => out.includes("\n"), "the host to be ready");
  const workers = JSON.parse(out.slice("ready ".length));
  assert.ok(workers.length >= 1);
  host.kill("SIGKILL");
  assert.equal(await exited, "SIGKILL");
  assert.deepEqual(shmEntries(prefix), []);
  await waitUntil(() => workers.every((p) => !alive(p)), "the orphaned workers to exit");
});

/** Harmless flags of each runtime (Deno's replace its default --allow-all). */
const CHILD_FLAGS = { node: ["--no-warnings"], bun: ["--smol"], deno: ["--allow-all", "--no-prompt"] };

test("worker.processCommandPrefix wraps the command; processArgs, execArgv and env reach the child", {
  skip,
}, async () => {
  const pool = processPool(
    {
      worker: {
        processCommandPrefix: ["/bin/sh", fixture("process-wrapper.sh")],
        processArgs: ["--from-test"],
        execArgv: CHILD_FLAGS[childRuntime],
        env: { ...process.env, KNT_TEST_VALUE: "value from the host" },
      },
    },
    { surroundings },
  );
  try {
    const wrapped = await pool.call.surroundings("KNT_WRAPPED");
    assert.equal(wrapped.env, "wrapped by process-wrapper.sh");
    assert.deepEqual(wrapped.argv, ["--from-test"]);
    // Deno's process.execArgv is always empty: its flags are not shown there.
    if (childRuntime !== "deno") assert.deepEqual(wrapped.execArgv, CHILD_FLAGS[childRuntime]);
    assert.equal((await pool.call.surroundings("KNT_TEST_VALUE")).env, "value from the host");
  } finally {
    await pool.shutdown();
  }
});

const nodeFlags =
  hostRuntime !== "node"
    ? `${hostRuntime}: starts a host with node's --inspect and -e`
    : onlyNodeChildren("a Node host's flags go to Node worker processes only");
test("the host's --inspect flags (and its -e script) are not passed on by default", { skip: nodeFlags }, async () => {
  const script = `
    import { createPool } from ${JSON.stringify(new URL("../index.mjs", import.meta.url).href)};
    import { surroundings } from ${JSON.stringify(new URL("./fixtures/process-tasks.mjs", import.meta.url).href)};
    const pool = createPool({ threads: 1, worker: { runtime: "process" } })({ surroundings });
    const seen = await pool.call.surroundings("X");
    process.stdout.write(JSON.stringify({ host: process.execArgv, worker: seen.execArgv }));
    await pool.shutdown();
  `;
  const child = spawn(
    process.execPath,
    ["--inspect=127.0.0.1:0", "--no-warnings", "--input-type=module", "-e", script],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  child.stdout.on("data", (c) => (out += c));
  child.stderr.on("data", (c) => (err += c));
  const code = await new Promise((resolve) => child.on("exit", resolve));
  assert.equal(code, 0, err);
  const { host, worker } = JSON.parse(out);
  assert.ok(
    host.some((f) => f.startsWith("--inspect")),
    `host flags ${host}`,
  );
  // Other flags carry over; the inspector and the host's --eval entry do not.
  assert.deepEqual(worker, ["--no-warnings", "--input-type=module"]);
});

test("a runtime other than the host's gives a clear error when its executable is absent", { skip }, () => {
  const saved = process.env.PATH;
  process.env.PATH = fixture("");
  try {
    // The host's own runtime is process.execPath, never looked up.
    for (const runtime of ["node", "deno", "bun"].filter((r) => r !== hostRuntime)) {
      assert.throws(
        () => createPool({ threads: 1, worker: { runtime: "process", processRuntime: runtime } })({ add }),
        (err) =>
          err.code === "KNT_RUNTIME_UNAVAILABLE" &&
          err.message.includes(`"${runtime}" is not available on this machine`) &&
          err.message.includes("worker.processExecutable"),
      );
    }
  } finally {
    process.env.PATH = saved;
  }
});

test("worker.processExecutable that is not an executable is refused, naming it and the runtime", { skip }, () => {
  const missing = fixture("no-such-runtime");
  for (const runtime of ["node", "deno", "bun"]) {
    assert.throws(
      () =>
        createPool({ threads: 1, worker: { runtime: "process", processRuntime: runtime, processExecutable: missing } })(
          {
            add,
          },
        ),
      (err) =>
        err.code === "KNT_RUNTIME_UNAVAILABLE" &&
        err.message.includes(`worker.processRuntime "${runtime}"`) &&
        err.message.includes(`worker.processExecutable ${JSON.stringify(missing)}`),
    );
  }
  assert.throws(
    () => createPool({ threads: 1, worker: { runtime: "process", processExecutable: "" } })({ add }),
    (err) =>
      err.code === "KNT_INVALID_OPTION" && /worker\.processExecutable must be a non-empty path/.test(err.message),
  );
});

test("process options are checked and named", { skip }, () => {
  const make = (worker) => () => createPool({ threads: 1, worker })({ add });
  assert.throws(make({ runtime: "fork" }), /worker\.runtime must be "thread" or "process"/);
  assert.throws(make({ execArgv: ["--x"] }), /worker\.execArgv applies to worker\.runtime "process"/);
  assert.throws(make({ runtime: "process", processRuntime: "python" }), /worker\.processRuntime must be one of/);
  assert.throws(make({ runtime: "process", processSharedMemory: "named" }), /worker\.processSharedMemory must be/);
  assert.throws(
    make({ runtime: "process", processSharedMemory: { mode: "named", namePrefix: "a/b" } }),
    /namePrefix must be/,
  );
  assert.throws(
    make({ runtime: "process", processSharedMemory: { mode: "named", extra: 1 } }),
    /unknown option worker\.processSharedMemory\.extra/,
  );
  assert.throws(
    make({ runtime: "process", processCommandPrefix: "sudo" }),
    /processCommandPrefix must be an array of strings/,
  );
  assert.throws(make({ runtime: "process", env: { A: 1 } }), /worker\.env\.A must be a string/);
  assert.throws(make({ runtime: "process", resourceLimits: { maxOldGenerationSizeMb: 64 } }), /worker\.execArgv/);
});
