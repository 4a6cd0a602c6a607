// pool.broadcast.<name>(arg): a task once on every live worker, in lane order.
import test from "node:test";
import assert from "node:assert/strict";
import { createPool, WorkerExitError } from "../index.mjs";
import * as t from "./fixtures/broadcast-tasks.mjs";
import { createRequire } from "node:module";
import { sleep } from "./helpers/wait.mjs";

const { MSG, pack, unpack } = createRequire(import.meta.url)("../lib/protocol/messages.js");

const THREADS = 3;

for (const [mode, host] of [
  ["work stealing", { steal: true }],
  ["private lanes", { steal: false }],
]) {
  test(`threads, ${mode}: every worker runs the broadcast once; its state serves later calls`, async () => {
    const pool = createPool({ threads: THREADS, host })(t);
    try {
      await pool.ready;
      await pool.call.whoAmI(); // the workers then park, idle
      const set = await pool.broadcast.setConfig({ level: 2 });
      assert.equal(set.length, THREADS);
      const ids = set.map((r) => r.threadId);
      assert.equal(new Set(ids).size, THREADS, "one entry per worker");
      // Lane order: another broadcast lists the same workers in the same order.
      assert.deepEqual(
        (await pool.broadcast.readConfig()).map((r) => [r.threadId, r.config, r.setups]),
        ids.map((id) => [id, { level: 2 }, 1]),
      );
      // Normal calls, wherever they run, see the state the broadcast set.
      const reads = await Promise.all(Array.from({ length: 60 }, () => pool.call.readConfig()));
      for (const r of reads) {
        assert.ok(ids.includes(r.threadId));
        assert.deepEqual(r.config, { level: 2 });
        assert.equal(r.setups, 1);
      }
    } finally {
      await pool.shutdown();
    }
  });

  test(`threads, ${mode}: a broadcast reaches workers that hold async calls`, async () => {
    const pool = createPool({ threads: THREADS, host })(t);
    try {
      const ids = (await pool.broadcast.whoAmI()).map((r) => r.threadId);
      const held = Array.from({ length: 12 }, () => pool.call.busy(30));
      const got = await pool.broadcast.asyncWho("x");
      assert.deepEqual(
        got.map((r) => [r.threadId, r.tag]),
        ids.map((id) => [id, "x"]),
      );
      assert.equal((await Promise.all(held)).length, 12);
    } finally {
      await pool.shutdown();
    }
  });
}

test("a throw on one worker rejects, naming it, with the others' results", async () => {
  const pool = createPool({ threads: THREADS })(t);
  try {
    const ids = (await pool.broadcast.whoAmI()).map((r) => r.threadId);
    const err = await pool.broadcast.throwOn(ids[1]).then(
      () => assert.fail("must reject"),
      (e) => e,
    );
    assert.equal(err.code, "KNT_BROADCAST_FAILED");
    assert.equal(err.task, "throwOn");
    assert.match(err.message, new RegExp(`worker 1 \\(threadId ${ids[1]}\\).*RangeError: no config for ${ids[1]}`));
    assert.deepEqual(err.lanes, [0, 1, 2]);
    assert.equal(err.results[0].threadId, ids[0]);
    assert.equal(err.results[1], undefined);
    assert.equal(err.results[2].threadId, ids[2]);
    assert.ok(err.errors[1] instanceof RangeError);
    assert.equal(err.cause, err.errors[1]);
    assert.equal(err.errors[0], undefined);
    // The pool goes on.
    assert.equal((await pool.broadcast.whoAmI()).length, THREADS);
  } finally {
    await pool.shutdown();
  }
});

test("a worker that dies during a broadcast rejects it with its exit error; the pool stays usable", async () => {
  const pool = createPool({ threads: THREADS, host: { steal: false }, worker: { allowExit: true } })(t);
  try {
    const ids = (await pool.broadcast.whoAmI()).map((r) => r.threadId);
    const err = await pool.broadcast.exitOn(ids[2]).then(
      () => assert.fail("must reject"),
      (e) => e,
    );
    assert.ok(err instanceof WorkerExitError, String(err));
    assert.equal(err.code, "KNT_WORKER_EXIT");
    assert.equal(err.lane, 2);
    assert.equal(err.exitCode, 9);
    assert.equal(err.results[0].threadId, ids[0]);
    assert.equal(err.results[1].threadId, ids[1]);
    // The replacement is a worker of the next broadcast; calls still run.
    const after = await pool.broadcast.whoAmI();
    assert.equal(after.length, THREADS);
    assert.notEqual(after[2].threadId, ids[2]);
    assert.equal(await pool.call.whoAmI().then((r) => typeof r.threadId), "number");
  } finally {
    await pool.shutdown();
  }
});

test("after shutdown a broadcast rejects like a call; one pending at shutdown too", async () => {
  const pool = createPool({ threads: 2 })(t);
  await pool.ready;
  const pending = pool.broadcast.busy(60_000);
  await pool.shutdown();
  await assert.rejects(pending, { code: "KNT_POOL_SHUTDOWN" });
  const callErr = await pool.call.whoAmI().catch((e) => e);
  const err = await pool.broadcast.whoAmI().catch((e) => e);
  assert.equal(err.code, "KNT_POOL_SHUTDOWN");
  assert.equal(err.code, callErr.code);
  assert.equal(err.message, callErr.message);
});

test("bad options and names", async () => {
  const pool = createPool({ threads: 1 })(t);
  try {
    await assert.rejects(pool.broadcast.whoAmI(1, { keep: 1 }), { name: "TypeError", code: "KNT_INVALID_OPTION" });
    await assert.rejects(pool.broadcast.whoAmI(1, { kept: true }), {
      code: "KNT_INVALID_OPTION",
      message: /unknown option kept; allowed: keep/,
    });
    assert.throws(() => pool.broadcast.nope(), {
      name: "TypeError",
      code: "KNT_UNKNOWN_TASK",
      message: /pool\.broadcast\.nope/,
    });
    await assert.rejects(
      pool.broadcast.whoAmI(() => {}),
      { code: "KNT_VALUE_FUNCTION", message: /"whoAmI", arg/ },
    );
  } finally {
    await pool.shutdown();
  }
});

for (const [mode, host] of [
  ["work stealing", { steal: true }],
  ["private lanes", { steal: false }],
]) {
  test(`worker processes, ${mode}: each runs the broadcast; a throw on one names its pid`, async () => {
    const pool = createPool({ threads: 2, host, worker: { runtime: "process" } })(t);
    try {
      const set = await pool.broadcast.setConfig({ cache: [1, 2, 3], at: new Date(0) });
      const pids = set.map((r) => r.pid);
      assert.equal(new Set(pids).size, 2, "one entry per process");
      assert.ok(!pids.includes(process.pid));
      const state = await pool.broadcast.readConfig();
      assert.deepEqual(
        state.map((r) => [r.pid, r.config, r.setups]),
        pids.map((pid) => [pid, { cache: [1, 2, 3], at: new Date(0) }, 1]),
      );
      for (const r of await Promise.all(Array.from({ length: 20 }, () => pool.call.readConfig())))
        assert.deepEqual([pids.includes(r.pid), r.setups], [true, 1]);
      const err = await pool.broadcast.throwOn(pids[0]).catch((e) => e);
      assert.equal(err.code, "KNT_BROADCAST_FAILED");
      assert.match(err.message, new RegExp(`worker 0 \\(pid ${pids[0]}\\)`));
      assert.ok(err.errors[0] instanceof RangeError);
      assert.equal(err.results[1].pid, pids[1]);
    } finally {
      await pool.shutdown();
    }
  });
}

test("worker processes: a process that exits during a broadcast rejects it with its WorkerExitError", async () => {
  const pool = createPool({ threads: 2, host: { steal: false }, worker: { runtime: "process" } })(t);
  try {
    const pids = (await pool.broadcast.whoAmI()).map((r) => r.pid);
    const err = await pool.broadcast.exitOn(pids[1]).catch((e) => e);
    assert.ok(err instanceof WorkerExitError, String(err));
    assert.deepEqual([err.lane, err.pid, err.exitCode], [1, pids[1], 9]);
    assert.equal(err.results[0].pid, pids[0]);
    const after = await pool.broadcast.whoAmI();
    assert.equal(after.length, 2);
    assert.notEqual(after[1].pid, pids[1]);
  } finally {
    await pool.shutdown();
  }
});

test("a broadcast message crosses a JSON-only channel (Bun, Deno) as packed codec bytes", () => {
  const arg = new Uint8Array([1, 2, 250]);
  const sent = pack({ type: MSG.BROADCAST, id: 7, task: 3, arg }, "json");
  const { message, serialization } = unpack(JSON.parse(JSON.stringify(sent)));
  assert.equal(serialization, "json");
  assert.deepEqual(message, { type: "broadcast", id: 7, task: 3, arg });
});

for (const [mode, host] of [
  ["work stealing", { steal: true }],
  ["private lanes", { steal: false }],
]) {
  test(`keep, ${mode}: recycled workers' replacements run the kept setup before their first call`, async () => {
    const pool = createPool({ threads: 2, host, worker: { maxCallsBeforeRecycle: 3 } })(t);
    try {
      const first = (await pool.broadcast.setConfig({ v: 1 }, { keep: true })).map((r) => r.threadId);
      const seen = new Set();
      for (let i = 0; i < 30; i++) {
        const r = await pool.call.readConfig();
        seen.add(r.threadId);
        // Every call, the first on each replacement included, finds the setup done, once.
        assert.deepEqual([r.config, r.setups], [{ v: 1 }, 1], `call ${i} on threadId ${r.threadId}`);
      }
      assert.ok(
        [...seen].some((id) => !first.includes(id)),
        "calls ran on replacements",
      );
    } finally {
      await pool.shutdown();
    }
  });
}

test("keep: a crashed worker's replacement runs the kept broadcasts, last per task, in first-kept order", async () => {
  const pool = createPool({ threads: 2, host: { steal: false }, worker: { allowExit: true } })(t);
  try {
    await pool.broadcast.record("first", { keep: true });
    await pool.broadcast.setConfig({ v: 1 }, { keep: true });
    await pool.broadcast.record("second", { keep: true });
    await pool.broadcast.record("not kept");
    const before = await pool.broadcast.readLog();
    for (const r of before) assert.deepEqual(r.log, ["first", "setConfig", "second", "not kept"]);
    await assert.rejects(pool.call.exitWorker(3), WorkerExitError);
    const after = await pool.broadcast.readLog();
    const fresh = after.filter((r) => !before.some((b) => b.threadId === r.threadId));
    assert.equal(fresh.length, 1, "one replacement");
    assert.deepEqual(fresh[0].log, ["second", "setConfig"]);
    for (let i = 0; i < 8; i++) assert.deepEqual((await pool.call.readConfig()).config, { v: 1 });
  } finally {
    await pool.shutdown();
  }
});

test("keep: an async broadcast made while a worker starts has run before that worker's first call", async () => {
  const pool = createPool({ threads: 1, worker: { allowExit: true } })(t);
  try {
    await pool.broadcast.setConfig({ v: 1 }, { keep: true });
    await assert.rejects(pool.call.exitWorker(3), WorkerExitError);
    // The replacement is starting: it gets this as a message while it loads its tasks.
    const set = pool.broadcast.setConfigLater({ v: 2 }, { keep: true });
    const first = await pool.call.readConfig();
    assert.deepEqual(first.config, { v: 2 }, "its first call saw the setup");
    assert.equal((await set).length, 1);
  } finally {
    await pool.shutdown();
  }
});

test("keep: a kept broadcast that throws on a joining worker is its start-up failure", async () => {
  const pool = createPool({ threads: 2, host: { steal: false }, worker: { allowExit: true } })(t);
  try {
    const ids = (await pool.broadcast.whoAmI()).map((r) => r.threadId);
    await pool.broadcast.throwIfJoined(Math.max(...ids), { keep: true });
    await assert.rejects(pool.call.exitWorker(3), WorkerExitError);
    // The surviving worker may answer a few calls before the replacement fails the pool.
    let err = null;
    for (let i = 0; err === null && i < 3000; i++) {
      err = await pool.call.whoAmI().then(
        () => null,
        (e) => e,
      );
      if (err === null) await sleep(10);
    }
    assert.equal(err.code, "KNT_BROADCAST_FAILED");
    assert.match(err.message, /the kept broadcast "throwIfJoined" threw: Error: worker \d+ refuses the setup/);
    await assert.rejects(pool.broadcast.whoAmI(), { code: "KNT_BROADCAST_FAILED" });
  } finally {
    await pool.shutdown();
  }
});

test("keep: an elastic pool's new workers run the kept setup; a broadcast reaches the workers it has", async () => {
  const pool = createPool({ minThreads: 1, maxThreads: 3, idleTimeout: 60_000 })(t);
  try {
    const set = await pool.broadcast.setConfig({ v: 2 }, { keep: true });
    assert.equal(set.length, 1, "minThreads workers at the start");
    const reads = await Promise.all(Array.from({ length: 60 }, () => pool.call.readConfig()));
    for (const r of reads) assert.deepEqual([r.config, r.setups], [{ v: 2 }, 1]);
    const now = await pool.broadcast.readConfig();
    assert.equal(now.length, 3, "grew to maxThreads while the calls waited");
    for (const r of now) assert.deepEqual([r.config, r.setups], [{ v: 2 }, 1]);
  } finally {
    await pool.shutdown();
  }
});

test("task({ f }).createPool(): pool.broadcast(arg) for its one task", async () => {
  const pool = t.setConfig.createPool({ threads: 2 });
  try {
    const got = await pool.broadcast("one");
    assert.equal(new Set(got.map((r) => r.threadId)).size, 2);
  } finally {
    await pool.shutdown();
  }
});

test("a broadcast is not a call in pool.stats(); shutdown() with resolveAfterFinishingAll waits for it", async () => {
  const pool = createPool({ threads: 2, worker: { resolveAfterFinishingAll: true } })(t);
  await pool.call.whoAmI();
  const running = pool.broadcast.busy(50);
  const stats = pool.stats();
  assert.deepEqual([stats.submitted, stats.completed, stats.pending], [1, 1, 0]);
  await pool.shutdown();
  assert.equal((await running).length, 2, "it ran to completion on both workers");
});

test("workers parked until woken (no worker.timers.parkMs) read a broadcast without a wake", async () => {
  const pool = createPool({ threads: 2, host: { steal: false } })(t);
  try {
    await Promise.all([pool.call.whoAmI(), pool.call.whoAmI()]);
    await sleep(100); // past the spin: both workers park in their lane's wait
    assert.equal((await pool.broadcast.whoAmI()).length, 2);
    assert.equal((await pool.call.whoAmI()).pid, process.pid, "the lanes still serve");
  } finally {
    await pool.shutdown();
  }
});

test("keep, recycling worker processes: replacements have the setup; a broadcast still answers", async () => {
  const pool = createPool({ threads: 2, worker: { runtime: "process", maxCallsBeforeRecycle: 2 } })(t);
  try {
    await pool.broadcast.setConfig({ v: 3 }, { keep: true });
    const calls = Array.from({ length: 16 }, () => pool.call.readConfig());
    const during = await pool.broadcast.readConfig();
    assert.equal(during.length, 2);
    for (const r of during) assert.deepEqual(r.config, { v: 3 });
    const pids = new Set();
    for (const r of await Promise.all(calls)) {
      pids.add(r.pid);
      assert.deepEqual([r.config, r.setups], [{ v: 3 }, 1]);
    }
    assert.ok(pids.size > 2, "calls ran on replacements");
  } finally {
    await pool.shutdown();
  }
});
