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
