// worker.abandonGraceMs: a call its caller gave up on (a timeout, an
// AbortSignal, the promise's .reject()) that still holds its worker's thread
// after the grace gets that worker replaced, so later calls never wait
// behind it forever; the calls it held but had not started run elsewhere.
// An async call that merely has not settled, the thread free, is left alone;
// `abandonGraceMs: false` keeps "the worker runs f to its end".
import test from "node:test";
import assert from "node:assert/strict";
import { createPool, WorkerExitError } from "../index.mjs";
import * as t from "./fixtures/abandon-tasks.mjs";
import { within, sleep, until } from "./helpers/wait.mjs";

const outcome = (promise, what) =>
  within(
    promise.then(
      (value) => ({ value }),
      (error) => ({ error }),
    ),
    30_000,
    what,
  );

const modes = [
  ["one worker (the default pool on 2 cores)", { threads: 1 }],
  ["private lanes, two workers", { threads: 2, host: { steal: false } }],
  ["work stealing, two workers", { threads: 2 }],
  ["worker processes, one worker", { threads: 1, worker: { runtime: "process" } }],
];
const linux = process.platform === "linux";
const skipFor = (options) =>
  options.worker && options.worker.runtime === "process" && !linux ? "process workers need Linux" : false;

/** The pool's "workerExit" events, as they come. */
function exits(pool) {
  const seen = [];
  pool.on("workerExit", (e) => seen.push(e));
  return seen;
}

const giveUps = [
  ["its task timeout", (pool) => pool.call.spinTimedOut(), "KNT_TASK_TIMEOUT"],
  ["its AbortSignal", (pool) => pool.call.spin(undefined, { signal: AbortSignal.timeout(100) }), "AbortError"],
  [
    "the promise's .reject()",
    (pool) => {
      const p = pool.call.spinIgnoringAbort();
      setTimeout(() => p.reject(new Error("given up")), 100);
      return p;
    },
    "given up",
  ],
];

for (const [name, options] of modes) {
  for (const [how, start, expected] of giveUps) {
    test(`${name}: a runaway given up by ${how} gets its worker replaced; later calls run`, {
      skip: skipFor(options),
    }, async () => {
      // Before: every later call waited forever (worker.hardTimeoutMs is off by default).
      const pool = createPool(options)(t);
      const exited = exits(pool);
      try {
        await within(pool.ready, 30_000, "start-up");
        // One runaway per worker: each would hold its thread for good.
        const runaways = Array.from({ length: options.threads }, () => outcome(start(pool), "a runaway"));
        for (const r of await Promise.all(runaways)) {
          const err = r.error || {};
          assert.ok([err.code, err.name, err.message].includes(expected), `got ${err.code || err.name || r.value}`);
        }
        const after = await Promise.all([1, 2, 3, 4].map((v) => outcome(pool.call.quick(v), "a call after")));
        assert.deepEqual(after, [{ value: 2 }, { value: 3 }, { value: 4 }, { value: 5 }]);
        // Each runaway's worker is replaced once that runaway has run a grace
        // (a runaway a busy machine started late gets its grace from then).
        const abandoned = () => exited.filter((e) => e.reason === "abandoned");
        await until(() => abandoned().length >= options.threads, 30_000, "every runaway's worker replaced");
        await sleep(100);
        assert.deepEqual(
          exited.map((e) => e.reason),
          Array(options.threads).fill("abandoned"),
          "one replacement per runaway, nothing else ended",
        );
        assert.equal(abandoned()[0].error, undefined);
      } finally {
        await pool.shutdown();
      }
    });
  }

  test(`${name}: calls queued behind a given-up runaway run on the replacement`, {
    skip: skipFor(options),
  }, async () => {
    const pool = createPool({ ...options, host: { ...options.host, steal: false } })(t);
    try {
      await within(pool.ready, 30_000, "start-up");
      const runaways = Array.from({ length: options.threads }, () => outcome(pool.call.spinTimedOut(), "a runaway"));
      // Placed in the runaways' lanes, behind them: never started there.
      const behind = [10, 20, 30, 40].map((v) => outcome(pool.call.quick(v), "a call queued behind"));
      for (const r of await Promise.all(runaways)) assert.equal(r.error && r.error.code, "KNT_TASK_TIMEOUT");
      assert.deepEqual(await Promise.all(behind), [{ value: 11 }, { value: 21 }, { value: 31 }, { value: 41 }]);
    } finally {
      await pool.shutdown();
    }
  });
}

for (const [name, options] of modes.filter(([, o]) => o.threads === 1)) {
  test(`${name}: a started call of the replaced worker rejects with a WorkerExitError caused by the given-up one`, {
    skip: skipFor(options),
  }, async () => {
    const pool = createPool(options)(t);
    try {
      await within(pool.ready, 30_000, "start-up");
      // Started first, then awaits for a minute, leaving the thread to the runaway.
      const waiting = outcome(pool.call.asleep(60_000), "the waiting call");
      const runaway = await outcome(pool.call.spinTimedOut(), "the runaway");
      assert.equal(runaway.error && runaway.error.code, "KNT_TASK_TIMEOUT");
      const { error } = await waiting;
      assert.ok(error instanceof WorkerExitError, `got ${error}`);
      assert.equal(error.code, "KNT_WORKER_EXIT");
      assert.equal(error.cause && error.cause.code, "KNT_ABANDONED_CALL");
      assert.match(error.cause.message, /task "spinTimedOut" was given up by its caller but still held worker 0/);
      assert.deepEqual(await outcome(pool.call.quick(1), "a later call"), { value: 2 });
    } finally {
      await pool.shutdown();
    }
  });
}

test("an async call that never settles, timed out, with its thread free, replaces no worker", async () => {
  const pool = createPool({ threads: 1, worker: { abandonGraceMs: 50 } })(t);
  let created = 0;
  pool.on("workerCreate", () => created++);
  const exited = exits(pool);
  try {
    await within(pool.ready, 30_000, "start-up");
    const hung = await outcome(pool.call.hangTimedOut(), "the hung call");
    assert.equal(hung.error && hung.error.code, "KNT_TASK_TIMEOUT");
    // Many graces later, and calls still run on the same worker.
    await sleep(1000);
    assert.deepEqual(await outcome(pool.call.quick(1), "a later call"), { value: 2 });
    await sleep(0);
    assert.equal(created, 1, "only the first worker was started");
    assert.deepEqual(exited, [], "no worker ended");
  } finally {
    await pool.shutdown();
  }
});

test("abandonGraceMs: false keeps the worker running a given-up call to its end", async () => {
  const pool = createPool({ threads: 1, worker: { abandonGraceMs: false } })(t);
  const exited = exits(pool);
  try {
    await within(pool.ready, 30_000, "start-up");
    // 2 s of work (past the default grace), given up at 50 ms: the later call waits for it.
    const first = await outcome(pool.call.busyPastTimeout(2000), "the long call");
    assert.equal(first.error && first.error.code, "KNT_TASK_TIMEOUT");
    assert.deepEqual(await outcome(pool.call.quick(1), "a later call"), { value: 2 });
    await sleep(0);
    assert.deepEqual(exited, [], "no worker ended");
  } finally {
    await pool.shutdown();
  }
  // The same with a short grace: that worker is replaced instead.
  const short = createPool({ threads: 1, worker: { abandonGraceMs: 100 } })(t);
  const shortExits = exits(short);
  try {
    await within(short.ready, 30_000, "start-up");
    const first = await outcome(short.call.busyPastTimeout(5000), "the long call");
    assert.equal(first.error && first.error.code, "KNT_TASK_TIMEOUT");
    assert.deepEqual(await outcome(short.call.quick(1), "a later call"), { value: 2 });
    await sleep(0);
    assert.deepEqual(
      shortExits.map((e) => e.reason),
      ["abandoned"],
    );
  } finally {
    await short.shutdown();
  }
});

test("worker.abandonGraceMs is checked", () => {
  for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, "100", true, null]) {
    assert.throws(
      () => createPool({ threads: 1, worker: { abandonGraceMs: bad } })(t),
      (err) =>
        err.code === "KNT_INVALID_OPTION" &&
        (typeof bad === "number" ? err instanceof RangeError : err instanceof TypeError) &&
        /worker\.abandonGraceMs must be a positive number of milliseconds, or false/.test(err.message),
      `abandonGraceMs ${String(bad)}`,
    );
  }
});
