// pool.stream.<name>(arg): a task that yields gives its caller an async
// iterator, its values sent through the call's channel as they come, at most
// a window ahead of the caller (lib/protocol/stream.js, host/streams.js,
// worker/stream-task.js); and pool.call.<name>(arg, { onProgress }).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createPool } from "knitting-native";
import * as tasks from "./fixtures/stream-tasks.mjs";
import { internals } from "./helpers/internals.mjs";

const SHAPES = [
  ["threads, work stealing", { threads: 2 }],
  ["threads, private lanes", { threads: 2, host: { steal: false } }],
  ["worker processes", { threads: 2, worker: { runtime: "process" } }],
];
const ONE = [
  ["a thread", { threads: 1 }],
  ["a worker process", { threads: 1, worker: { runtime: "process" } }],
];

async function withPool(options, fn) {
  const pool = createPool(options)(tasks);
  try {
    await fn(pool);
  } finally {
    await pool.shutdown();
  }
}

async function collect(iterable) {
  const out = [];
  for await (const v of iterable) out.push(v);
  return out;
}

/** Payload blocks live in the pool's region (channels and batches are blocks). */
const liveBlocks = (pool) => internals(pool).payload.arena.stats().liveBlocks;

for (const [name, options] of SHAPES) {
  test(`${name}: every value arrives, in order, from async and sync generators, several streams at once`, async () => {
    await withPool(options, async (pool) => {
      const baseline = liveBlocks(pool);
      assert.deepEqual(await collect(pool.stream.count(5)), [0, 1, 2, 3, 4]);
      const [a, b, c] = await Promise.all([
        collect(pool.stream.count(3000)),
        collect(pool.stream.syncCount(5000)),
        collect(pool.stream.count(0)),
      ]);
      assert.equal(a.length, 3000);
      assert.ok(a.every((v, i) => v === i));
      assert.equal(b.length, 5000);
      assert.ok(b.every((v, i) => v === i));
      assert.deepEqual(c, []);
      const big = await collect(pool.stream.chunks({ n: 20, size: 70_000 }, { window: 4 }));
      assert.equal(big.length, 20);
      assert.ok(big.every((u, i) => u.length === 70_000 && u[0] === i && u[69_999] === i));
      // Nothing is left behind: channels and batches are freed with their calls.
      assert.equal(liveBlocks(pool), baseline);
      assert.equal(await pool.call.notAStream(2), 4, "the pool still serves calls");
    });
  });
}

for (const [name, options] of ONE) {
  test(`${name}: break ends the generator in the worker (its finally ran when the loop is left)`, async () => {
    await withPool(options, async (pool) => {
      const baseline = liveBlocks(pool);
      const got = [];
      for await (const v of pool.stream.tracked()) {
        got.push(v);
        if (got.length === 3) break;
      }
      assert.deepEqual(got, [0, 1, 2]);
      assert.equal((await pool.call.stats()).finallies, 1);
      assert.equal(liveBlocks(pool), baseline);
    });
  });

  test(`${name}: the worker is never more than a window ahead of its caller`, async () => {
    await withPool(options, async (pool) => {
      const it = pool.stream.tracked(undefined, { window: 8 });
      let consumed = 0;
      for (let i = 0; i < 3; i++) {
        assert.equal((await it.next()).value, i);
        consumed++;
      }
      // Give the worker every chance to run ahead.
      await new Promise((resolve) => setTimeout(resolve, 200));
      let { produced } = await pool.call.stats();
      assert.ok(produced >= consumed && produced <= consumed + 8, `produced ${produced}, consumed ${consumed}`);
      for (let i = 0; i < 40; i++) await it.next();
      consumed += 40;
      await new Promise((resolve) => setTimeout(resolve, 200));
      ({ produced } = await pool.call.stats());
      assert.ok(produced >= consumed && produced <= consumed + 8, `produced ${produced}, consumed ${consumed}`);
      await it.return();
    });
  });

  test(`${name}: large values: the worker runs ahead by about 16 MiB at most, whatever the window`, async () => {
    await withPool(options, async (pool) => {
      const it = pool.stream.trackedChunks(1024 * 1024, { window: 100_000 });
      let consumed = 0;
      for (; consumed < 3; consumed++) assert.equal((await it.next()).value.length, 1024 * 1024);
      await new Promise((resolve) => setTimeout(resolve, 200));
      let { produced } = await pool.call.stats();
      // 16 values of 1 MiB, and the one the generator holds: far below the window of 100,000.
      assert.ok(produced - consumed <= 20, `produced ${produced}, consumed ${consumed}`);
      for (; consumed < 50; consumed++) await it.next();
      await new Promise((resolve) => setTimeout(resolve, 200));
      ({ produced } = await pool.call.stats());
      assert.ok(produced - consumed <= 20, `produced ${produced}, consumed ${consumed}`);
      await it.return();
    });
  });

  test(`${name}: an AbortSignal ends the stream and the generator`, async () => {
    await withPool(options, async (pool) => {
      const controller = new AbortController();
      const got = [];
      await assert.rejects(
        (async () => {
          for await (const v of pool.stream.tracked(undefined, { signal: controller.signal })) {
            got.push(v);
            if (got.length === 4) controller.abort();
          }
        })(),
        { name: "AbortError" },
      );
      assert.ok(got.length >= 4);
      // The generator's finally runs once the worker sees the stop.
      for (let i = 0; i < 100 && (await pool.call.stats()).finallies === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal((await pool.call.stats()).finallies, 1);
    });
  });

  test(`${name}: a throw in the generator reaches the caller after the values before it`, async () => {
    await withPool(options, async (pool) => {
      const got = [];
      await assert.rejects(
        (async () => {
          for await (const v of pool.stream.failing(5)) got.push(v);
        })(),
        { message: "generator failed after 5" },
      );
      assert.deepEqual(got, [0, 1, 2, 3, 4]);
      assert.equal((await pool.call.stats()).finallies, 1);
    });
  });

  test(`${name}: a throw in the caller's loop ends the generator; throw(err) reaches its catch`, async () => {
    await withPool(options, async (pool) => {
      await assert.rejects(
        (async () => {
          for await (const v of pool.stream.tracked()) if (v === 2) throw new Error("the caller failed");
        })(),
        { message: "the caller failed" },
      );
      assert.equal((await pool.call.stats()).finallies, 1);
      const it = pool.stream.tracked();
      assert.equal((await it.next()).value, 0);
      await it.throw(new Error("thrown in"));
      const seen = await pool.call.stats();
      assert.equal(seen.caught, "thrown in");
      assert.equal(seen.finallies, 2);
    });
  });

  test(`${name}: a worker that dies mid-stream ends it with its exit error; the pool goes on`, async () => {
    await withPool(options, async (pool) => {
      const got = [];
      await assert.rejects(
        (async () => {
          for await (const v of pool.stream.crashing(3)) got.push(v);
        })(),
        { code: "KNT_WORKER_EXIT" },
      );
      assert.deepEqual(got, [0, 1, 2]);
      assert.deepEqual(await collect(pool.stream.count(3)), [0, 1, 2], "its replacement streams");
    });
  });

  test(`${name}: a value that cannot be sent fails the stream with where it was`, async () => {
    await withPool(options, async (pool) => {
      const got = [];
      const err = await (async () => {
        try {
          for await (const v of pool.stream.unsendable()) got.push(v);
        } catch (e) {
          return e;
        }
      })();
      assert.deepEqual(got, [{ ok: 1 }]);
      assert.equal(err.code, "KNT_VALUE_FUNCTION");
      assert.equal(err.task, "unsendable");
      assert.equal(err.side, "yield");
      assert.equal(err.path, "yield.fn");
      assert.equal((await pool.call.stats()).finallies, 1);
    });
  });
}

test("a stream never consumed: stopped by shutdown, nothing waits for it", async () => {
  const pool = createPool({ threads: 1, worker: { resolveAfterFinishingAll: true } })(tasks);
  const it = pool.stream.tracked();
  await pool.call.stats(); // the stream is running by now, and blocked on its window
  await pool.shutdown(); // does not wait for a caller that never reads
  await assert.rejects(
    (async () => {
      for await (const _ of it);
    })(),
    { code: "KNT_POOL_SHUTDOWN" },
  );
});

test("progress: onProgress sees increasing values, coalesced, while the call runs", async () => {
  await withPool({ threads: 1 }, async (pool) => {
    const seen = [];
    const result = await pool.call.work(200_000, { onProgress: (v) => seen.push(v) });
    assert.equal(result, 200_000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(seen.length >= 1, "at least one report");
    assert.ok(seen.length < 200_000, `coalesced: ${seen.length} reports of 200000`);
    assert.ok(
      seen.every((v, i) => i === 0 || v > seen[i - 1]),
      "in order",
    );
    // Without onProgress the same task runs, its reports going nowhere.
    assert.equal(await pool.call.work(10), 10);
  });
});

test("bad input: not a stream, a bad window, a bad onProgress, an unknown name", async () => {
  await withPool({ threads: 1 }, async (pool) => {
    await assert.rejects(collect(pool.stream.notAStream(1)), { name: "TypeError", code: "KNT_NOT_A_STREAM" });
    await assert.rejects(collect(pool.stream.count(1, { window: 0 })), {
      name: "RangeError",
      code: "KNT_INVALID_OPTION",
    });
    await assert.rejects(collect(pool.stream.count(1, { onProgress: () => {} })), {
      name: "TypeError",
      code: "KNT_INVALID_OPTION",
    });
    await assert.rejects(pool.call.count(1, { onProgress: 1 }), { name: "TypeError", code: "KNT_INVALID_OPTION" });
    assert.throws(() => pool.stream.nope(1), { code: "KNT_UNKNOWN_TASK", message: /pool\.stream\.nope/ });
    assert.deepEqual(await collect(pool.stream.count(2)), [0, 1], "the pool goes on");
  });
});

test("a stream dropped unconsumed is stopped once collected: its generator ends, its channel is freed", async () => {
  const { spawnSync } = await import("node:child_process");
  const { fileURLToPath } = await import("node:url");
  const script = fileURLToPath(new URL("./fixtures/stream-dropped.mjs", import.meta.url));
  const r = spawnSync(process.execPath, ["--expose-gc", script], { encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^finallies 1 blocks 0$/m);
});

test("a channel word that makes no sense (task code wrote it) fails that stream alone", async () => {
  await withPool({ threads: 1 }, async (pool) => {
    const it = pool.stream.tracked(undefined, { window: 4 });
    assert.equal((await it.next()).value, 0);
    const streams = internals(pool).streams;
    const [stream] = [...streams.open];
    // SENT, as a scribbling task would leave it: far beyond the ring.
    Atomics.store(stream.channel.i32, 6, 1_000_000);
    await new Promise((resolve) => setTimeout(resolve, 50)); // a drain pass reads it
    await assert.rejects(
      (async () => {
        for (;;) if ((await it.next()).done) break;
      })(),
      { code: "KNT_REGION_CORRUPT" },
    );
    assert.deepEqual(await collect(pool.stream.count(3)), [0, 1, 2], "other streams go on");
    assert.equal(await pool.call.notAStream(21), 42);
  });
});
