// A full payload region makes calls wait for room, never fail: arguments
// wait on the host, answers in the worker. Only a payload that an empty
// region cannot hold is an error, naming the limit to raise.
import test from "node:test";
import assert from "node:assert/strict";
import { createPool } from "../index.mjs";
import * as t from "./fixtures/room-tasks.mjs";
import { within } from "./helpers/wait.mjs";

const MIB = 1024 * 1024;
const KB = 1000;
// A 4 MiB region holds four 900 KB payloads at most.
const payload = { payloadMaxByteLength: 4 * MIB, payloadInitialBytes: MIB, maxPayloadBytes: 2 * MIB };
const modes = [
  ["work stealing", { threads: 2 }],
  ["private lanes, one worker", { threads: 1 }],
  ["private lanes, two workers", { threads: 2, host: { steal: false } }],
];

const checksum = (s) => {
  let sum = 0;
  for (let i = 0; i < s.length; i += 4096) sum = (sum + s.charCodeAt(i)) | 0;
  return sum;
};

for (const [name, options] of modes) {
  test(`${name}: 60 concurrent 900 KB arguments all run`, async () => {
    const pool = createPool({ ...options, payload })(t);
    try {
      const args = Array.from({ length: 60 }, (_, i) => String.fromCharCode(65 + (i % 26)).repeat(900 * KB));
      const results = await within(Promise.allSettled(args.map((a) => pool.call.measure(a))), 120_000, "the calls");
      const rejected = results.filter((r) => r.status === "rejected");
      assert.equal(
        rejected.length,
        0,
        `rejected: ${rejected.length}, first: ${rejected[0] && rejected[0].reason.message}`,
      );
      results.forEach((r, i) => assert.deepEqual(r.value, [900 * KB, checksum(args[i])]));
    } finally {
      await pool.shutdown();
    }
  });

  test(`${name}: 30 concurrent 900 KB results all arrive, sync and async`, async () => {
    const pool = createPool({ ...options, payload })(t);
    try {
      const calls = Array.from({ length: 30 }, (_, i) => {
        const c = String.fromCharCode(97 + (i % 26));
        return i % 2 === 0 ? pool.call.produce([c, 900 * KB]) : pool.call.produceLater([c, 900 * KB, i % 5]);
      });
      const results = await within(Promise.allSettled(calls), 120_000, "the calls");
      const rejected = results.filter((r) => r.status === "rejected");
      assert.equal(
        rejected.length,
        0,
        `rejected: ${rejected.length}, first: ${rejected[0] && rejected[0].reason.message}`,
      );
      results.forEach((r, i) => {
        assert.equal(r.value.length, 900 * KB);
        assert.equal(r.value[0], String.fromCharCode(97 + (i % 26)));
      });
    } finally {
      await pool.shutdown();
    }
  });

  // The worst case: every call's argument and answer are a third, or nearly
  // half, of the region, so the answers of the calls running now need the
  // room that the arguments of the calls queued behind them hold. A worker
  // that blocked on its answer would never start those calls (deadlock).
  for (const [part, size] of [
    ["a third", 1300 * KB],
    ["nearly half", 2000 * KB],
  ])
    test(`${name}: answers and arguments of ${part} of the region each, all complete`, async () => {
      const pool = createPool({
        ...options,
        payload: { payloadMaxByteLength: 4 * MIB, payloadInitialBytes: MIB, maxPayloadBytes: 4 * MIB },
      })(t);
      try {
        const calls = Array.from({ length: 24 }, (_, i) => {
          const v = String.fromCharCode(65 + (i % 26)).repeat(size);
          return i % 3 === 2 ? pool.call.echoLater([v, i % 4]) : pool.call.echo(v);
        });
        const results = await within(Promise.allSettled(calls), 120_000, "the calls");
        const rejected = results.filter((r) => r.status === "rejected");
        assert.equal(
          rejected.length,
          0,
          `rejected: ${rejected.length}, first: ${rejected[0] && rejected[0].reason.message}`,
        );
        results.forEach((r, i) => {
          assert.equal(r.value.length, size);
          assert.equal(r.value[size - 1], String.fromCharCode(65 + (i % 26)));
        });
        assert.equal(await pool.call.quick(1), 2, "the pool still serves");
      } finally {
        await pool.shutdown();
      }
    });
}

for (const [name, options] of [
  ["work stealing", { threads: 2 }],
  ["private lanes", { threads: 1 }],
])
  test(`worker processes, ${name}: calls wait for room in the shared mapping too`, async () => {
    const pool = createPool({ ...options, payload, worker: { runtime: "process" } })(t);
    try {
      const calls = Array.from({ length: 16 }, (_, i) =>
        i % 2 ? pool.call.echo("p".repeat(900 * KB)) : pool.call.produceLater(["q", 900 * KB, 1]),
      );
      const results = await within(Promise.allSettled(calls), 120_000, "the calls");
      const rejected = results.filter((r) => r.status === "rejected");
      assert.equal(
        rejected.length,
        0,
        `rejected: ${rejected.length}, first: ${rejected[0] && rejected[0].reason.message}`,
      );
      for (const r of results) assert.equal(r.value.length, 900 * KB);
    } finally {
      await pool.shutdown();
    }
  });

test("a call waiting for room ends with its own abort; the others still run", async () => {
  // Private lanes, round robin: worker 0 sleeps while the arguments queued
  // behind it fill the region, so a later large argument must wait.
  const pool = createPool({ threads: 2, host: { steal: false }, balancer: "roundRobin", payload })(t);
  try {
    await within(pool.ready, 30_000, "start-up");
    const blocker = pool.call.block(800); // lane 0
    const queued = [];
    for (let i = 0; i < 4; i++) {
      queued.push(pool.call.quick(i)); // lane 1
      queued.push(pool.call.measure("m".repeat(900 * KB))); // lane 0, behind the blocker
    }
    const controller = new AbortController();
    const waiting = pool.call.measure("w".repeat(900 * KB), { signal: controller.signal });
    const state = await Promise.race([
      waiting.then(
        () => "settled",
        () => "settled",
      ),
      new Promise((resolve) => setImmediate(() => setImmediate(() => resolve("waiting")))),
    ]);
    assert.equal(state, "waiting", "a call that fits an empty region does not fail for lack of room");
    controller.abort(new Error("caller gave up"));
    const aborted = await within(
      waiting.then(
        () => null,
        (e) => e,
      ),
      30_000,
      "the aborted call",
    );
    assert.equal(aborted && aborted.name, "AbortError");
    assert.equal(await within(blocker, 30_000, "the blocker"), "slept");
    const done = await within(Promise.all(queued), 60_000, "the queued calls");
    assert.deepEqual(
      done.filter((_, i) => i % 2 === 0),
      [1, 2, 3, 4],
    );
    for (const r of done.filter((_, i) => i % 2 === 1)) assert.equal(r[0], 900 * KB);
  } finally {
    await pool.shutdown();
  }
});

for (const runtime of ["thread", "process"])
  test(`${runtime} workers: an answer waits while the region stays full, without spinning`, async () => {
    // Worker 0 sleeps (no CPU) while arguments queued behind it fill the
    // region; worker 1's 900 KB answer then has to wait for them, while
    // worker 1 is parked for work. Spinning there would burn CPU for the
    // whole wait: with worker threads the process's CPU time is checked
    // against the wall time it took, with a wide margin.
    const pool = createPool({
      threads: 2,
      host: { steal: false },
      balancer: "roundRobin",
      payload,
      worker: { runtime },
    })(t);
    try {
      await within(pool.ready, 30_000, "start-up");
      const startCpu = process.cpuUsage();
      const startWall = process.hrtime.bigint();
      const blocker = pool.call.block(1500); // lane 0
      const answer = pool.call.produceLater(["z", 900 * KB, 200]); // lane 1: answers while the region is full
      const queued = [];
      for (let i = 0; i < 4; i++) {
        queued.push(pool.call.measure("n".repeat(900 * KB))); // lane 0, behind the blocker
        queued.push(pool.call.quick(i)); // lane 1
      }
      const value = await within(answer, 60_000, "the waiting answer");
      const cpu = process.cpuUsage(startCpu);
      const wallMicros = Number(process.hrtime.bigint() - startWall) / 1000;
      assert.equal(value.length, 900 * KB);
      assert.equal(
        await within(blocker, 30_000, "the blocker"),
        "slept",
        "the answer arrived after the room held behind the blocker freed",
      );
      const used = cpu.user + cpu.system;
      if (runtime === "thread")
        assert.ok(
          used < wallMicros * 0.6,
          `CPU ${Math.round(used / 1000)} ms over ${Math.round(wallMicros / 1000)} ms of waiting`,
        );
      await within(Promise.all(queued), 60_000, "the queued calls");
    } finally {
      await pool.shutdown();
    }
  });

test("a payload no empty region can hold is an error naming the limit to raise", async () => {
  const pool = createPool({
    threads: 1,
    payload: { payloadMaxByteLength: 4 * MIB, payloadInitialBytes: MIB, maxPayloadBytes: 4 * MIB },
  })(t);
  try {
    // Under maxPayloadBytes, over what the region holds after its own headers.
    const tooBig = "x".repeat(4 * MIB - 20);
    const arg = await within(
      pool.call.measure(tooBig).then(
        () => null,
        (e) => e,
      ),
      30_000,
      "the argument",
    );
    assert.ok(arg instanceof RangeError);
    assert.equal(arg.code, "KNT_VALUE_TOO_LARGE");
    assert.match(arg.message, /payload\.payloadMaxByteLength \(4194304 bytes\)/);
    assert.match(arg.message, /raise payload\.payloadMaxByteLength/);
    const result = await within(
      pool.call.produce(["y", 4 * MIB - 20]).then(
        () => null,
        (e) => e,
      ),
      30_000,
      "the result",
    );
    assert.ok(result instanceof RangeError, "the task ran; its result cannot cross");
    assert.equal(result.code, "KNT_VALUE_TOO_LARGE");
    assert.match(result.message, /raise payload\.payloadMaxByteLength/);
    assert.equal(await pool.call.quick(1), 2);
  } finally {
    await pool.shutdown();
  }
  const capped = createPool({ threads: 1, payload: { maxPayloadBytes: MIB } })(t);
  try {
    const err = await within(
      capped.call.measure("x".repeat(MIB + 1)).then(
        () => null,
        (e) => e,
      ),
      30_000,
      "the argument",
    );
    assert.equal(err.code, "KNT_VALUE_TOO_LARGE");
    assert.match(err.message, /exceeds payload\.maxPayloadBytes \(1048576\); raise payload\.maxPayloadBytes/);
  } finally {
    await capped.shutdown();
  }
});

test(
  "a region full of lost blocks, with no call in flight, is an error instead of a wait that " + "never ends",
  async () => {
    const pool = createPool({ threads: 1, payload })(t);
    try {
      await within(pool.ready, 30_000, "start-up");
      // Blocks nobody will free (as a worker that died between writing and
      // publishing would leave), taken through the pool's internals.
      const region = pool[Symbol.for("knitting-native.pool")].payload;
      const lost = [];
      for (;;) {
        const at = region.tryWrite(new Uint8Array(512 * KB));
        if (at === 0) break;
        lost.push(at);
      }
      assert.ok(lost.length >= 7, `the region took ${lost.length} blocks`);
      const err = await within(
        pool.call.measure("l".repeat(900 * KB)).then(
          () => null,
          (e) => e,
        ),
        30_000,
        "the call",
      );
      assert.ok(err instanceof RangeError);
      assert.equal(err.code, "KNT_VALUE_TOO_LARGE");
      assert.match(err.message, /no call holds any of it/);
      for (const at of lost) region.free(at);
      const [len] = await within(pool.call.measure("l".repeat(900 * KB)), 30_000, "a call once the blocks are back");
      assert.equal(len, 900 * KB);
    } finally {
      await pool.shutdown();
    }
  },
);
