// Elastic size (minThreads / maxThreads / idleTimeout, lib/server/elastic.js):
// the pool grows while calls wait and shrinks back to minThreads when idle,
// with every call settled exactly once. Nothing here asserts a duration:
// growth is checked by the workerCreate events a burst causes, shrinking by
// polling for workerExit events with reason "idle" under a generous bound.
import test from "node:test";
import assert from "node:assert/strict";
import { createPool } from "../index.mjs";
import { add, fail, later, double } from "./fixtures/server-tasks.mjs";
import { sleep, until } from "./helpers/wait.mjs";

const tasks = { add, fail, later, double };

/** Counts a pool's worker events: creates, exits by reason, and the workers alive now. */
function watch(pool) {
  const w = { created: 0, exits: {}, alive: new Set(), indexes: new Set() };
  pool.on("workerCreate", (e) => {
    w.created++;
    w.alive.add(e.index);
    w.indexes.add(e.index);
  });
  pool.on("workerExit", (e) => {
    w.exits[e.reason] = (w.exits[e.reason] || 0) + 1;
    w.alive.delete(e.index);
  });
  return w;
}

const MODES = [
  ["work stealing", {}],
  ["private lanes", { host: { steal: false } }],
];

for (const [label, mode] of MODES) {
  test(`elastic (${label}): grows while calls wait, shrinks back to minThreads when idle`, async () => {
    const pool = createPool({ minThreads: 1, maxThreads: 3, idleTimeout: 30, ...mode })(tasks);
    const w = watch(pool);
    await pool.ready;
    assert.equal(w.created, 1, "minThreads workers at the start");
    assert.equal(pool.stats().threads, 1, "stats().threads: the running workers, not maxThreads lanes");
    const calls = [];
    for (let i = 0; i < 60; i++) calls.push(pool.call.double([i, 2]));
    const results = await Promise.all(calls);
    assert.deepEqual(
      results,
      calls.map((_, i) => i * 2),
    );
    // The burst's flush saw 60 calls for 1 worker: it started up to maxThreads.
    assert.equal(w.indexes.size, 3, "grew to maxThreads while calls waited");
    await until(() => w.alive.size === 1, 30_000, "the pool to shrink to minThreads");
    assert.equal(w.exits.idle, w.created - 1, "every worker beyond minThreads left as idle");
    await until(() => pool.stats().threads === 1, 30_000, "stats().threads to count the one worker left");
    // It stays at minThreads: the last worker never leaves for being idle.
    await sleep(200);
    assert.equal(w.alive.size, 1);
    assert.equal(w.exits.idle, w.created - 1);
    // And grows again under the next load.
    const again = [];
    for (let i = 0; i < 40; i++) again.push(pool.call.add([i, 1]));
    assert.deepEqual(
      await Promise.all(again),
      again.map((_, i) => i + 1),
    );
    assert.ok(w.created > 3, "a second burst started workers again");
    await pool.shutdown();
  });
}

/**
 * `total` mixed calls in bursts: tiny adds, ~1 ms busy calls, async calls
 * and a few that throw. After some bursts it waits until a worker has left
 * as idle, so workers leave and join mid-run. Checks each result and counts.
 */
async function mixedRun(pool, w, total, burst) {
  let fulfilled = 0;
  let rejected = 0;
  let expectedRejections = 0;
  const wrong = [];
  const all = [];
  for (let start = 0, round = 0; start < total; start += burst, round++) {
    for (let i = start; i < Math.min(total, start + burst); i++) {
      const kind = i % 10;
      let p;
      let expected;
      if (i % 97 === 5) {
        expectedRejections++;
        p = pool.call.fail(`no ${i}`).then(
          () => wrong.push(`${i}: fail() fulfilled`),
          (err) => {
            rejected++;
            if (!(err instanceof RangeError) || err.message !== `no ${i}`) wrong.push(`${i}: ${err}`);
          },
        );
        all.push(p);
        continue;
      }
      if (kind === 7) {
        p = pool.call.double([i, 1]);
        expected = i * 2;
      } else if (kind === 8) {
        p = pool.call.later([i, 1]);
        expected = i;
      } else {
        p = pool.call.add([i, 1]);
        expected = i + 1;
      }
      all.push(
        p.then(
          (value) => {
            fulfilled++;
            if (value !== expected) wrong.push(`${i}: got ${value}, expected ${expected}`);
          },
          (err) => wrong.push(`${i}: rejected ${err && err.message}`),
        ),
      );
    }
    if (round % 4 === 3) {
      // A pause: let workers go idle and leave, while earlier calls may still run.
      const left = w.exits.idle || 0;
      // (These bursts are far more calls than minThreads workers: the pool has grown.)
      await until(() => (w.exits.idle || 0) > left, 30_000, "an idle worker to leave");
    }
  }
  await Promise.all(all);
  assert.deepEqual(wrong, []);
  assert.equal(rejected, expectedRejections);
  assert.equal(fulfilled + rejected, total, "every call settled exactly once");
}

for (const [label, mode] of MODES) {
  test(`elastic (${label}): 20,000 mixed calls while workers join and leave, each settled once`, async () => {
    const pool = createPool({ minThreads: 1, maxThreads: 4, idleTimeout: 15, ...mode })(tasks);
    const w = watch(pool);
    await pool.ready;
    await mixedRun(pool, w, 20_000, 1000);
    assert.ok(w.created > 1, "workers joined");
    assert.ok((w.exits.idle || 0) >= 1, "workers left mid-run");
    assert.equal(w.exits.crash, undefined);
    await pool.shutdown();
  });
}

for (const [label, mode] of MODES) {
  test(`elastic worker processes (${label}): mixed calls while workers join and leave`, async () => {
    const pool = createPool({ minThreads: 1, maxThreads: 3, idleTimeout: 30, worker: { runtime: "process" }, ...mode })(
      tasks,
    );
    const w = watch(pool);
    await pool.ready;
    await mixedRun(pool, w, 4000, 500);
    assert.ok(w.created > 1, "workers joined");
    assert.ok((w.exits.idle || 0) >= 1, `workers left mid-run: ${JSON.stringify({ ...w, alive: [...w.alive] })}`);
    await pool.shutdown();
  });
}

test("elastic: shutdown() while the pool grows, and while it shrinks, settles every call", async () => {
  for (const [, mode] of MODES) {
    const pool = createPool({ minThreads: 1, maxThreads: 4, idleTimeout: 10, ...mode })(tasks);
    const w = watch(pool);
    await pool.ready;
    // Growing: the burst starts workers; shutdown comes before they are ready.
    const calls = [];
    for (let i = 0; i < 200; i++) calls.push(pool.call.double([i, 1]));
    await Promise.resolve();
    const done = pool.shutdown();
    const outcomes = await Promise.allSettled(calls);
    await done;
    assert.ok(w.created > 1, "it was growing");
    outcomes.forEach((o, i) => {
      if (o.status === "fulfilled") assert.equal(o.value, i * 2);
      else assert.equal(o.reason.code, "KNT_POOL_SHUTDOWN");
    });
    await assert.rejects(pool.call.add([1, 1]), { code: "KNT_POOL_SHUTDOWN" });

    // Shrinking: shutdown while idle workers are leaving.
    const pool2 = createPool({ minThreads: 1, maxThreads: 4, idleTimeout: 10, ...mode })(tasks);
    const w2 = watch(pool2);
    await pool2.ready;
    const first = [];
    for (let i = 0; i < 100; i++) first.push(pool2.call.add([i, 1]));
    await Promise.all(first);
    await until(() => (w2.exits.idle || 0) >= 1, 30_000, "a worker to leave");
    const more = [];
    for (let i = 0; i < 50; i++) more.push(pool2.call.later([i, 1]));
    const done2 = pool2.shutdown();
    const outcomes2 = await Promise.allSettled(more);
    await done2;
    outcomes2.forEach((o, i) => {
      if (o.status === "fulfilled") assert.equal(o.value, i);
      else assert.equal(o.reason.code, "KNT_POOL_SHUTDOWN");
    });
  }
});

test("elastic options: threads is the fixed size; bad values are a TypeError/RangeError with a code", () => {
  const bad = [
    [{ minThreads: "2" }, TypeError, /minThreads must be an integer/],
    [{ maxThreads: 1.5 }, TypeError, /maxThreads must be an integer/],
    [{ minThreads: 0 }, RangeError, /minThreads must be between 1 and/],
    [{ maxThreads: 1e9 }, RangeError, /maxThreads must be between 1 and/],
    [{ minThreads: 3, maxThreads: 2 }, RangeError, /minThreads \(3\) must be at most maxThreads \(2\)/],
    [{ threads: 2, maxThreads: 4 }, RangeError, /threads 2 is a fixed size .* maxThreads 4/],
    [{ threads: 2, minThreads: 1 }, RangeError, /threads 2 is a fixed size .* minThreads 1/],
    [{ idleTimeout: 100 }, RangeError, /idleTimeout applies to an elastic pool/],
    [{ threads: 2, idleTimeout: 100 }, RangeError, /idleTimeout applies to an elastic pool/],
    [{ maxThreads: 4, idleTimeout: -1 }, RangeError, /idleTimeout \(milliseconds\) must be between 0 and/],
    [{ maxThreads: 4, idleTimeout: "1s" }, TypeError, /idleTimeout \(milliseconds\) must be an integer/],
    [{ maxThreads: 40, host: { steal: true } }, RangeError, /maxThreads 40 with host.steal: true/],
  ];
  for (const [options, Ctor, message] of bad) {
    assert.throws(
      () => createPool(options),
      (err) => err instanceof Ctor && err.code === "KNT_INVALID_OPTION" && message.test(err.message),
      JSON.stringify(options),
    );
  }
});

test("elastic options: how they resolve", async () => {
  const { resolveOptions } = await import("../lib/options/index.js");
  const r = (o) => resolveOptions(o, 256, 1024);
  assert.deepEqual(r({ minThreads: 2, maxThreads: 5, idleTimeout: 0 }).elastic, {
    minThreads: 2,
    maxThreads: 5,
    idleTimeout: 0,
  });
  assert.equal(r({ minThreads: 2, maxThreads: 5 }).threads, 5, "shared memory for maxThreads");
  assert.equal(r({ maxThreads: 3 }).elastic.minThreads, 1);
  assert.equal(r({ maxThreads: 3 }).elastic.idleTimeout, 10_000);
  // Equal bounds, or threads agreeing with them: a fixed size.
  assert.equal(r({ minThreads: 3, maxThreads: 3 }).elastic, null);
  assert.equal(r({ threads: 3, maxThreads: 3 }).elastic, null);
  assert.equal(r({ threads: 3, maxThreads: 3 }).threads, 3);
  assert.equal(r({ threads: 3 }).elastic, null);
});
