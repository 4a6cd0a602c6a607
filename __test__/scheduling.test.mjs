// Scheduling: every topology (work stealing, private lanes under each
// balancer and dispatcher, the inline lane, polling without the doorbell)
// settles every call exactly once with its own result; stealing lets an idle
// worker take work a busy one has not started; the inline lane follows its
// rules (importTask never inline, tasks in name order in array form).
import test from "node:test";
import assert from "node:assert/strict";
import { createPool } from "../index.mjs";
import * as T from "./fixtures/scheduling-tasks.mjs";
import { within, sleep, until } from "./helpers/wait.mjs";
import { internals } from "./helpers/internals.mjs";

const SETTLE_MS = 60_000;
const CALLS = 20_000;
const WINDOW = 500;

const { numbered, ...TASKS } = T;
const { whereImported, ...HOST_TASKS } = TASKS; // what an inline-only pool can run

/** A deterministic mix: sync adds, echoes of objects and >512-byte strings, throws, async with delays. */
function expected(i) {
  switch (i % 20) {
    case 0:
      return { call: (p) => p.call.later([i, i % 3]), ok: (v) => v === i };
    case 1:
    case 2:
      return {
        call: (p) => p.call.fail(`no ${i}`),
        ok: (v, err) => err instanceof RangeError && err.message === `no ${i}`,
        throws: true,
      };
    case 3:
      return {
        call: (p) => p.call.echo({ i, s: "x".repeat(600 + (i % 7)) }),
        ok: (v) => v.i === i && v.s.length === 600 + (i % 7),
      };
    case 4:
      return { call: (p) => p.call.later([`a${i}`, 0]), ok: (v) => v === `a${i}` };
    default:
      return { call: (p) => p.call.add([i, 7]), ok: (v) => v === i + 7 };
  }
}

/** Runs CALLS mixed calls with WINDOW in flight; counts settlements per call. */
async function mixedCalls(pool) {
  const settled = new Uint8Array(CALLS);
  const wrong = [];
  let next = 0;
  await within(
    new Promise((resolve) => {
      let done = 0;
      const launch = () => {
        const i = next++;
        const e = expected(i);
        const finish = (ok, detail) => {
          settled[i]++;
          if (!ok && wrong.length < 5) wrong.push(`call ${i}: ${detail}`);
          if (++done === CALLS) resolve();
          else if (next < CALLS) launch();
        };
        e.call(pool).then(
          (v) => finish(!e.throws && e.ok(v), `resolved ${JSON.stringify(v)?.slice(0, 80)}`),
          (err) => finish(e.throws === true && e.ok(undefined, err), `rejected ${err && err.stack}`),
        );
      };
      for (let k = 0; k < WINDOW; k++) launch();
    }),
    SETTLE_MS,
    "mixed calls",
  );
  assert.deepEqual(wrong, [], "every call settles with its own result");
  assert.ok(
    settled.every((n) => n === 1),
    "every call settles exactly once",
  );
}

/**
 * One long call, one shorter one, then `shorts` short calls; returns the
 * order they finished in ("long", "other", "short0"...).
 */
async function finishOrder(pool, longMs, otherMs, shorts) {
  await pool.ready;
  const order = [];
  const track = (label, promise) => promise.then((v) => (order.push(label), v));
  const long = track("long", pool.call.spin(["long", longMs]));
  const other = track("other", pool.call.spin(["other", otherMs]));
  const short = Array.from({ length: shorts }, (_, i) => track(`short${i}`, pool.call.add([i, 1])));
  await within(Promise.all([long, other, ...short]), SETTLE_MS, "long and short calls");
  return order;
}

const TOPOLOGIES = [
  ["stealing (default for 2 threads)", { threads: 2 }, { steal: true }],
  ["stealing, 3 threads, 6 region lanes of 16 slots", { threads: 3, host: { stealRegionLanes: 6 } }, { steal: true }],
  ["stealing without the doorbell", { threads: 2, host: { doorbell: false } }, { steal: true }],
  ["stealing forced with a balancer", { threads: 2, host: { steal: true }, balancer: "randomLane" }, { steal: true }],
  ["private lanes, least-loaded", { threads: 2, host: { steal: false } }, { steal: false }],
  [
    "private lanes, no doorbell, short backoff",
    { threads: 2, host: { steal: false, doorbell: false, stallFreeLoops: 4, maxBackoffMs: 2 } },
    { steal: false },
  ],
];
for (const balancer of ["roundRobin", "robinRound", "firstIdle", "randomLane", "firstIdleOrRandom"]) {
  for (const dispatcher of ["per-thread", "serial-channel"]) {
    TOPOLOGIES.push([`${balancer}, ${dispatcher}`, { threads: 2, balancer, host: { dispatcher } }, { steal: false }]);
  }
}
TOPOLOGIES.push(
  ["inliner last", { threads: 2, inliner: { position: "last" } }, { steal: false, inline: true }],
  [
    "inliner first, batch 4, threshold 8, roundRobin",
    { threads: 1, balancer: "roundRobin", inliner: { position: "first", batchSize: 4, dispatchThreshold: 8 } },
    { steal: false, inline: true },
  ],
  ["inliner only (threads 0)", { threads: 0, inliner: {} }, { steal: false, inline: true }],
  [
    "inliner, serial-channel, firstIdleOrRandom",
    { threads: 2, balancer: "firstIdleOrRandom", host: { dispatcher: "serial-channel" }, inliner: { batchSize: 8 } },
    { steal: false, inline: true },
  ],
);

for (const [name, options, shape] of TOPOLOGIES) {
  test(`${CALLS} mixed calls settle once each with their own result: ${name}`, async () => {
    const pool = createPool(options)(options.threads === 0 ? HOST_TASKS : TASKS);
    try {
      const p = internals(pool);
      assert.equal(p.topology.steal, shape.steal, "stealing or private lanes, as configured");
      assert.equal(p.topology.inline !== null, shape.inline === true, "inline lane as configured");
      await mixedCalls(pool);
      // Nothing is left in a slot once every call settled.
      assert.equal(p.inFlight, 0);
      if (p.topology.steal) assert.equal(p.topology.submit.inFlight, 0);
    } finally {
      await within(pool.shutdown(), SETTLE_MS, "shutdown");
    }
  });
}

test("stealing: an idle worker takes the short calls while a long one runs on the other", async () => {
  const pool = createPool({ threads: 2 })(TASKS);
  try {
    // One long call per worker (one of them short-lived), then many short
    // ones behind them. A worker claims only the call it is about to run,
    // so the worker whose long call ends first takes every short call while
    // the 1.5 s one still runs.
    const order = await finishOrder(pool, 1500, 30, 60);
    assert.equal(
      order.indexOf("long"),
      order.length - 1,
      `every short call finished before the long one: ${order.join(" ")}`,
    );
  } finally {
    await within(pool.shutdown(), SETTLE_MS, "shutdown");
  }
});

// The promise of the default pool, as a new user meets it: a fresh pool,
// one long call, then many tiny ones: every tiny call finishes before the
// long one, round after round, idle or beside a busy core (CI runs this
// file a second time next to one: scripts/with-busy-core.mjs).
for (const runtime of ["thread", "process"]) {
  test(
    `stealing, fresh ${runtime} pools: 100 tiny calls after a long one finish first in 20 of 20 ` + `rounds`,
    async () => {
      const late = [];
      for (let round = 0; round < 20; round++) {
        const pool = createPool({ threads: 2, worker: runtime === "process" ? { runtime: "process" } : {} })(TASKS);
        try {
          await within(pool.ready, SETTLE_MS, "pool.ready");
          const order = [];
          const long = pool.call.spin(["long", 400]).then(() => order.push("long"));
          const tiny = Array.from({ length: 100 }, (_, i) => pool.call.add([i, 1]).then(() => order.push(i)));
          await within(Promise.all([long, ...tiny]), SETTLE_MS, "long and tiny calls");
          if (order.indexOf("long") !== order.length - 1)
            late.push(`round ${round}: ${order.length - 1 - order.indexOf("long")} tiny calls after the long one`);
        } finally {
          await within(pool.shutdown(), SETTLE_MS, "shutdown");
        }
      }
      assert.deepEqual(late, [], "in every round every tiny call finished before the long one");
    },
  );
}

test("private lanes (roundRobin): short calls queued behind a long one wait for it", async () => {
  // The contrast that stealing removes: a lane's calls wait for its worker.
  const pool = createPool({ threads: 2, balancer: "roundRobin" })(TASKS);
  try {
    const order = await finishOrder(pool, 600, 10, 20);
    assert.ok(
      order.indexOf("long") < order.length - 1,
      `some short calls waited behind the long one: ${order.join(" ")}`,
    );
  } finally {
    await within(pool.shutdown(), SETTLE_MS, "shutdown");
  }
});

test("inliner: calls run on the host once the threshold is reached; importTask calls never do", async () => {
  const pool = createPool({ threads: 1, inliner: { position: "first", dispatchThreshold: 1 } })(TASKS);
  try {
    await pool.ready;
    const places = await Promise.all(Array.from({ length: 200 }, () => pool.call.where()));
    assert.ok(places.includes(true), "some calls ran inline (isMain in the host)");
    assert.ok(places.includes(false), "some calls ran in the worker");
    const imported = await Promise.all(Array.from({ length: 100 }, () => pool.call.whereImported()));
    assert.ok(
      imported.every((onMain) => onMain === false),
      "an importTask never runs on the host",
    );
  } finally {
    await within(pool.shutdown(), SETTLE_MS, "shutdown");
  }
});

test("inliner: a pool whose only lane is inline refuses importTask tasks", () => {
  assert.throws(
    () => createPool({ threads: 0, inliner: {} })({ add: T.add, whereImported: T.whereImported }),
    (err) => err instanceof TypeError && /whereImported/.test(err.message) && /inline/.test(err.message),
  );
});

test("array-form tasks: every lane, the inline one included, addresses tasks in name order", async () => {
  for (const options of [{ threads: 0, inliner: {} }, { threads: 1, inliner: { position: "first" } }, { threads: 2 }]) {
    const pool = createPool(options)(numbered);
    try {
      const results = await Promise.all(Array.from({ length: 240 }, (_, k) => pool.call[k % 12](k)));
      results.forEach(([n, x], k) =>
        assert.deepEqual([n, x], [k % 12, k], `${JSON.stringify(options)}: call[${k % 12}](${k})`),
      );
      if (options.threads === 1)
        assert.ok(results.some((r) => r[2] === true) && results.some((r) => r[2] === false), "both lanes served");
    } finally {
      await within(pool.shutdown(), SETTLE_MS, "shutdown");
    }
  }
});

test(
  "stealing + worker.hardTimeoutMs: the runaway's worker is replaced, the other keeps serving, " +
    "calls behind it are not stuck",
  async () => {
    const pool = createPool({ threads: 2, worker: { hardTimeoutMs: 200 } })(TASKS);
    try {
      await pool.ready;
      const p = internals(pool);
      assert.ok(p.topology.steal, "a stealing pool");
      const before = p.workers.map((w) => w.threadId);
      const stuck = pool.call.spin(["stuck", 60_000]);
      // The other worker takes these: a call nobody has started never waits
      // behind the runaway.
      const others = await within(
        Promise.all(Array.from({ length: 50 }, (_, i) => pool.call.add([i, 1]))),
        SETTLE_MS,
        "calls beside the runaway",
      );
      others.forEach((v, i) => assert.equal(v, i + 1));
      const err = await within(
        stuck.then(
          () => null,
          (e) => e,
        ),
        SETTLE_MS,
        "the runaway call",
      );
      assert.equal(err && err.code, "KNT_HARD_TIMEOUT", `got ${err}`);
      assert.match(err.message, /spin/);
      // One worker was replaced, the other is the same thread.
      await until(
        () => !p.workers.some((w) => w === null) && !p.workers.every((w, i) => w.threadId === before[i]),
        SETTLE_MS,
        "a replacement worker",
        5,
      );
      assert.equal(p.workers.filter((w, i) => w.threadId === before[i]).length, 1, "exactly one worker was replaced");
      const after = await within(
        Promise.all(Array.from({ length: 100 }, (_, i) => pool.call.add([i, 2]))),
        SETTLE_MS,
        "after",
      );
      after.forEach((v, i) => assert.equal(v, i + 2));
    } finally {
      await within(pool.shutdown(), SETTLE_MS, "shutdown");
    }
  },
);

// Work stealing over worker processes: the submit region and the pending
// registry live in the cross-process mapping.
test(`process workers, stealing: ${CALLS} mixed calls settle once each with their own result`, async () => {
  const pool = createPool({ threads: 2, worker: { runtime: "process" } })(TASKS);
  try {
    const p = internals(pool);
    assert.ok(p.topology.steal, "a stealing pool");
    await mixedCalls(pool);
    assert.equal(p.topology.submit.inFlight, 0);
  } finally {
    await within(pool.shutdown(), SETTLE_MS, "shutdown");
  }
});

test("process workers, stealing: the idle process takes the short calls while a long one runs", async () => {
  const pool = createPool({ threads: 2, worker: { runtime: "process" } })(TASKS);
  try {
    const order = await finishOrder(pool, 1500, 30, 60);
    assert.equal(
      order.indexOf("long"),
      order.length - 1,
      `every short call finished before the long one: ${order.join(" ")}`,
    );
  } finally {
    await within(pool.shutdown(), SETTLE_MS, "shutdown");
  }
});

test(
  "process workers, stealing: a SIGKILLed worker's claimed calls reject naming its pid; the rest " +
    "complete; a replacement serves",
  async () => {
    const pool = createPool({ threads: 2, worker: { runtime: "process" } })(TASKS);
    try {
      await pool.ready;
      const p = internals(pool);
      const calls = Array.from({ length: 30 }, (_, i) => pool.call.later([i, 300]));
      await sleep(50);
      const held = [0, 0];
      for (let i = 0; i < p.topology.submit.slots; i++)
        if (p.topology.submit.calls[i] !== null && p.topology.submit.ownerOf(i) >= 0)
          held[p.topology.submit.ownerOf(i)]++;
      const v = held[0] > 0 ? 0 : 1;
      const victim = p.workers[v].pid;
      process.kill(victim, "SIGKILL");
      const results = await within(Promise.allSettled(calls), SETTLE_MS, "calls around a killed process");
      let rejected = 0;
      results.forEach((r, i) => {
        if (r.status === "fulfilled") assert.equal(r.value, i);
        else {
          rejected++;
          assert.equal(r.reason.code, "KNT_WORKER_EXIT", String(r.reason));
          assert.match(r.reason.message, new RegExp(`pid ${victim}`));
          assert.match(r.reason.message, /SIGKILL/);
        }
      });
      assert.ok(rejected > 0, "the killed process held calls");
      const after = await within(
        Promise.all(Array.from({ length: 200 }, (_, i) => pool.call.add([i, 3]))),
        SETTLE_MS,
        "after",
      );
      after.forEach((x, i) => assert.equal(x, i + 3));
      assert.ok(p.workers[v] !== null && p.workers[v].pid !== victim, "a replacement process");
    } finally {
      await within(pool.shutdown(), SETTLE_MS, "shutdown");
    }
  },
);
