// worker.hardTimeoutMs: the call holding the worker's thread is the one
// that times out, the other calls that worker ran fail with it as cause,
// and calls made after the decision run on the replacement.
import test from "node:test";
import assert from "node:assert/strict";
import { createPool } from "../index.mjs";
import * as t from "./fixtures/hard-timeout-tasks.mjs";
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

const HARD_MS = 300;
const modes = [
  ["private lanes, one worker", { threads: 1 }],
  ["private lanes, two workers", { threads: 2, host: { steal: false } }],
  ["work stealing, two workers", { threads: 2 }],
  ["worker processes, one worker", { threads: 1, worker: { runtime: "process" } }],
];
const withHardTimeout = (options, ms = HARD_MS) => ({ ...options, worker: { ...options.worker, hardTimeoutMs: ms } });

for (const [name, options] of modes) {
  test(`${name}: calls made right after a KNT_HARD_TIMEOUT run on the replacement`, async () => {
    const pool = createPool(withHardTimeout(options))(t);
    try {
      await within(pool.ready, 30_000, "start-up");
      for (let round = 0; round < 2; round++) {
        const runaway = await outcome(pool.call.spinForever(), "the runaway");
        assert.equal(runaway.error && runaway.error.code, "KNT_HARD_TIMEOUT");
        // Made after the decision: none may land on the worker being terminated.
        const after = await Promise.all(
          [1, 2, 3, 4].map((v) => outcome(pool.call.quick(v), "a call after the decision")),
        );
        assert.deepEqual(after, [{ value: 2 }, { value: 3 }, { value: 4 }, { value: 5 }]);
      }
    } finally {
      await pool.shutdown();
    }
  });

  test(
    `${name}: the call holding the thread gets KNT_HARD_TIMEOUT, an async call waiting on that ` +
      `worker KNT_WORKER_EXIT`,
    async () => {
      // A longer limit here: a worker starved of CPU by a loaded machine for
      // that long, before it starts the runaway, would leave the async call
      // past its limit with the thread free (then rightly blamed).
      const limit = 1000;
      const pool = createPool(withHardTimeout(options, limit))(t);
      try {
        await within(pool.ready, 30_000, "start-up");
        // One async call per worker, each well within the limit on its own
        // and waiting for a runaway to start on its worker; then one runaway
        // per worker.
        // Their outcomes are taken at once: one may fail (its worker replaced)
        // while the test still waits for the other worker's runaway.
        const innocents = Array.from({ length: options.threads }, () =>
          outcome(pool.call.waitForRunaway(limit / 4), "an async call"),
        );
        await sleep(10);
        const runaways = Array.from({ length: options.threads }, () => pool.call.spinForever());
        for (const r of await Promise.all(runaways.map((p) => outcome(p, "a runaway")))) {
          assert.equal(
            r.error && r.error.code,
            "KNT_HARD_TIMEOUT",
            `a runaway got ${r.error ? r.error.code : r.value}`,
          );
        }
        for (const r of await Promise.all(innocents)) {
          if (r.error === undefined) {
            // No runaway started on its worker in time (a loaded machine): it ended on its own.
            assert.equal(r.value, "ok");
            continue;
          }
          assert.equal(r.error.code, "KNT_WORKER_EXIT", `an innocent async call got ${r.error.code}`);
          assert.equal(r.error.cause && r.error.cause.code, "KNT_HARD_TIMEOUT", "its cause is the runaway's timeout");
          assert.match(r.error.cause.message, /spinForever/);
        }
        assert.equal(await within(pool.call.quick(41), 30_000, "a later call"), 42);
      } finally {
        await pool.shutdown();
      }
    },
  );

  test(`${name}: an async call that never settles is itself the runaway`, async () => {
    const pool = createPool(withHardTimeout(options))(t);
    try {
      await within(pool.ready, 30_000, "start-up");
      const hung = await outcome(pool.call.hangAsync(), "the hung call");
      assert.equal(hung.error && hung.error.code, "KNT_HARD_TIMEOUT");
      assert.match(hung.error.message, /hangAsync/);
      const after = await Promise.all(
        [1, 2, 3, 4].map((v) => outcome(pool.call.quick(v), "a call after the decision")),
      );
      assert.deepEqual(after, [{ value: 2 }, { value: 3 }, { value: 4 }, { value: 5 }]);
    } finally {
      await pool.shutdown();
    }
  });
}

test("a runaway already settled by its task timeout still gets its worker replaced", async () => {
  const pool = createPool({ threads: 1, worker: { hardTimeoutMs: HARD_MS } })(t);
  try {
    await within(pool.ready, 30_000, "start-up");
    const settled = await outcome(pool.call.spinWithTimeout(), "the runaway with a task timeout");
    assert.equal(settled.error && settled.error.code, "KNT_TASK_TIMEOUT");
    // Placed behind it on the only worker: it must not wait forever.
    const behind = await outcome(pool.call.quick(1), "the call behind it");
    assert.deepEqual(behind, { value: 2 }, "it never started, so it runs on the replacement");
  } finally {
    await pool.shutdown();
  }
});
