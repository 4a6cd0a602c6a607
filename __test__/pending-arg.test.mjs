// A call whose argument is a promise still pending: its AbortSignal and its
// task timeout settle it as soon as they fire (the README's "as soon as the
// signal fires"), its task never runs, and the timeout counts from the call.
import test from "node:test";
import assert from "node:assert/strict";
import { createPool } from "../index.mjs";
import * as t from "./fixtures/pending-arg-tasks.mjs";
import { within, sleep } from "./helpers/wait.mjs";

const outcome = (promise, what) =>
  within(
    promise.then(
      (value) => ({ value }),
      (error) => ({ error }),
    ),
    30_000,
    what,
  );
const never = () => new Promise(() => {});
const modes = [
  ["threads", { threads: 1 }],
  ["worker processes", { threads: 1, worker: { runtime: "process" } }],
];
const skipFor = (options) => (options.worker && process.platform !== "linux" ? "process workers need Linux" : false);

for (const [mode, options] of modes) {
  test(`${mode}: an AbortSignal rejects a call whose argument never settles, and its task never runs`, {
    skip: skipFor(options),
  }, async () => {
    // Before: the call never settled (it waited for the argument).
    const pool = createPool(options)(t);
    try {
      await within(pool.ready, 30_000, "start-up");
      const controller = new AbortController();
      const call = pool.call.counted(never(), { signal: controller.signal });
      setTimeout(() => controller.abort(new Error("stop")), 50);
      const got = await outcome(call, "the aborted call");
      assert.equal(got.error && got.error.name, "AbortError");
      assert.equal(got.error.cause.message, "stop");
      // An argument that arrives after the abort is dropped.
      let resolveLate;
      const late = new AbortController();
      const lateCall = pool.call.counted(new Promise((r) => (resolveLate = r)), { signal: late.signal });
      late.abort();
      resolveLate(7);
      assert.equal((await outcome(lateCall, "the call aborted before its argument came")).error.name, "AbortError");
      await sleep(50);
      assert.equal(await pool.call.runs(), 0, "no given-up call ran");
      // Not aborted: the argument's value is used as before.
      const kept = new AbortController();
      assert.equal(await pool.call.counted(Promise.resolve(5), { signal: kept.signal }), 5);
      kept.abort(); // after it settled: nothing happens
      assert.equal(await pool.call.runs(), 1);
    } finally {
      await pool.shutdown();
    }
  });

  test(`${mode}: a task timeout settles a call whose argument never settles, in each timeout form`, {
    skip: skipFor(options),
  }, async () => {
    // Before: the call never settled.
    const pool = createPool(options)(t);
    try {
      await within(pool.ready, 30_000, "start-up");
      const timedOut = await outcome(pool.call.countedTimedOut(never()), "the timed-out call");
      assert.equal(timedOut.error && timedOut.error.code, "KNT_TASK_TIMEOUT");
      assert.match(timedOut.error.message, /"countedTimedOut" did not finish within 100 ms/);
      assert.deepEqual(await outcome(pool.call.countedDefault(never()), "the defaulted call"), {
        value: "the default",
      });
      assert.equal(await pool.call.runs(), 0, "no given-up call ran");
    } finally {
      await pool.shutdown();
    }
  });
}

test("the task timeout counts from the call, not from the argument's arrival", async () => {
  // The argument arrives at 500 ms and the task then takes 1 s: past the
  // 1.2 s timeout counted from the call, within it counted from the arrival.
  // Before: the call resolved (a fresh 1.2 s started once the argument came).
  const pool = createPool({ threads: 1 })(t);
  try {
    await within(pool.ready, 30_000, "start-up");
    const arg = new Promise((resolve) => setTimeout(() => resolve(1000), 500));
    const got = await outcome(pool.call.timed(arg), "the call");
    assert.equal(got.error && got.error.code, "KNT_TASK_TIMEOUT", `got ${JSON.stringify(got)}`);
    assert.match(got.error.message, /"timed" did not finish within 1200 ms/);
    // Within its limit, the same call resolves.
    assert.deepEqual(await outcome(pool.call.timed(Promise.resolve(10)), "a quick call"), { value: 10 });
  } finally {
    await pool.shutdown();
  }
});

test("an abort-aware call's .reject() while its argument is pending still rejects it, once", async () => {
  const pool = createPool({ threads: 1 })(t);
  try {
    await within(pool.ready, 30_000, "start-up");
    const controller = new AbortController();
    const call = pool.call.countedAware(never(), { signal: controller.signal });
    call.reject(new Error("rejected by hand"));
    controller.abort(); // after: changes nothing
    const got = await outcome(call, "the rejected call");
    assert.equal(got.error && got.error.message, "rejected by hand");
    assert.equal(await pool.call.runs(), 0);
  } finally {
    await pool.shutdown();
  }
});
