// shutdown() settles every pending call, including one whose argument is a
// promise that never settles (it is in no queue and no slot yet).
import test from "node:test";
import assert from "node:assert/strict";
import { createPool } from "../index.mjs";
import * as t from "./fixtures/lifecycle-tasks.mjs";
import { within } from "./helpers/wait.mjs";

const never = () => new Promise(() => {});

const shapes = [
  ["one worker", { threads: 1 }],
  ["work stealing", { threads: 2 }],
  ["inline lane and a worker", { threads: 1, inliner: { position: "first", dispatchThreshold: 1 } }],
  ["inline lane only", { threads: 0, inliner: { dispatchThreshold: 1 } }],
];

for (const [name, options] of shapes) {
  test(`${name}: calls waiting for their argument reject with KNT_POOL_SHUTDOWN`, async () => {
    const pool = createPool(options)({ quick: t.quick, echoAfter: t.echoAfter });
    const waiting = [pool.call.quick(never()), pool.call.quick(never())];
    let resolveLate;
    const late = pool.call.quick(new Promise((resolve) => (resolveLate = resolve)));
    const served = pool.call.quick(Promise.resolve(1));
    assert.equal(await within(served, 10_000, "a call whose argument resolved"), 2);
    const done = pool.shutdown();
    for (const call of [...waiting, late]) {
      const err = await within(
        call.then(
          () => null,
          (e) => e,
        ),
        10_000,
        "a call waiting for its argument",
      );
      assert.ok(err instanceof Error, "it rejects");
      assert.equal(err.code, "KNT_POOL_SHUTDOWN");
    }
    resolveLate(5); // after the rejection: nothing more happens to it
    await within(done, 10_000, "shutdown");
  });
}

test("resolveAfterFinishingAll: submitted calls finish, calls waiting for their argument reject", async () => {
  const pool = createPool({ threads: 1, worker: { resolveAfterFinishingAll: true } })({ echoAfter: t.echoAfter });
  const running = pool.call.echoAfter(["kept", 50]);
  const waiting = pool.call.echoAfter(never());
  const done = pool.shutdown();
  const err = await within(
    waiting.then(
      () => null,
      (e) => e,
    ),
    10_000,
    "the call waiting for its argument",
  );
  assert.equal(err.code, "KNT_POOL_SHUTDOWN");
  assert.equal(await within(running, 10_000, "the submitted call"), "kept");
  await within(done, 10_000, "shutdown");
});

test("an abort-aware call waiting for its argument rejects at shutdown too", async () => {
  const pool = createPool({ threads: 1 })({ watchAbort: t.watchAbort });
  const waiting = pool.call.watchAbort(never());
  assert.equal(typeof waiting.reject, "function");
  const done = pool.shutdown();
  const err = await within(
    waiting.then(
      () => null,
      (e) => e,
    ),
    10_000,
    "the abort-aware call",
  );
  assert.equal(err.code, "KNT_POOL_SHUTDOWN");
  waiting.reject(new Error("after the fact")); // settled already: nothing happens
  await within(done, 10_000, "shutdown");
});

// A call shutdown rejects rejects only once shutdown() has resolved, so
// `const p = call(); await pool.shutdown(); p.catch(...)` is safe: Node ends
// the process on an unhandled rejection by default. With `early`, handlers
// are attached at once and the order of the settlements is checked; without,
// they are attached only after `await pool.shutdown()` and no rejection may
// go unhandled.
async function rejectsAfterShutdown(pool, makeCalls, { early, delayMs }) {
  const unhandled = [];
  const onUnhandled = (reason) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    const order = [];
    const watch = (call) =>
      call.then(
        () => (order.push("call resolved"), null),
        (e) => (order.push("call rejected"), e),
      );
    const calls = makeCalls();
    const done = pool.shutdown(delayMs);
    done.then(() => order.push("shutdown resolved"));
    calls.push(pool.call.echoAfter(["after shutdown()", 0])); // made while shutdown runs
    const watched = early ? calls.map(watch) : null;
    await within(done, 10_000, "shutdown");
    const errors = await within(Promise.all(watched ?? calls.map(watch)), 10_000, "the calls shutdown rejects");
    for (const err of errors) assert.equal(err?.code, "KNT_POOL_SHUTDOWN");
    assert.deepEqual(order, ["shutdown resolved", ...calls.map(() => "call rejected")]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, [], "no unhandled rejection");
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
}

for (const [name, options] of shapes) {
  for (const early of [true, false]) {
    const when = early ? "at once" : "after it";
    test(`${name}: calls shutdown rejects reject after shutdown() resolves (handlers ${when})`, async () => {
      const pool = createPool(options)({ echoAfter: t.echoAfter });
      await within(pool.call.echoAfter(["warm", 0]), 10_000, "a first call");
      const makeCalls = () => [
        pool.call.echoAfter(never()), // waiting for its argument
        pool.call.echoAfter(["running", 2_000]), // submitted, still running at shutdown
      ];
      await rejectsAfterShutdown(pool, makeCalls, { early });
    });
  }
}

test("shutdown(delayMs): the calls still running at the delay reject after shutdown resolves", async () => {
  for (const early of [true, false]) {
    const pool = createPool({ threads: 1 })({ echoAfter: t.echoAfter });
    await within(pool.call.echoAfter(["warm", 0]), 10_000, "a first call");
    const makeCalls = () => [pool.call.echoAfter(never()), pool.call.echoAfter(["slow", 60_000])];
    await rejectsAfterShutdown(pool, makeCalls, { early, delayMs: 20 });
  }
});

test("a call made after shutdown has resolved still rejects with KNT_POOL_SHUTDOWN", async () => {
  const pool = createPool({ threads: 1 })({ echoAfter: t.echoAfter });
  await within(pool.shutdown(), 10_000, "shutdown");
  await assert.rejects(pool.call.echoAfter(["late", 0]), { code: "KNT_POOL_SHUTDOWN" });
});
