// Shared bytes (pool.sharedBytes(n), sharedBytes(n) in a task, pool.readBody):
// bytes written in place cross to a worker and back without a copy, in both
// scheduling modes and to worker processes. What is checked: the bytes
// arrive as written and changes made in place come back; exactly one side
// holds a block (the sender's handle is spent, its views detached); every
// misuse is a clear TypeError/RangeError with its code and the pool goes on;
// what an aborted call, a terminated worker or an expired borrow held goes
// back to the region exactly once (no block of shared bytes is left live).
import test from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { createPool, sharedBytes, isSharedBytes } from "../index.mjs";
import * as t from "./fixtures/shared-bytes-tasks.mjs";
import { internals } from "./helpers/internals.mjs";
import { until, sleep } from "./helpers/wait.mjs";

const { sumOf } = t;
const KIB = 1024;
const MIB = 1024 * KIB;
const TASKS = { ...t };
delete TASKS.sumOf;

/** Blocks of shared bytes live in the pool's region now. */
const liveBlocks = (pool) => internals(pool).payload.arena.regions().length;
const fill = (u8, seed) => {
  for (let i = 0; i < u8.length; i++) u8[i] = (i * 13 + seed) & 0xff;
  return u8;
};
const isBytesError = (Ctor) => (err) => err instanceof Ctor && err.code === "KNT_SHARED_BYTES";

const CONFIGS = [
  ["worker threads, work stealing", { threads: 2 }],
  ["worker threads, private lanes", { threads: 2, host: { steal: false } }],
  ["worker processes", { threads: 2, worker: { runtime: "process" } }],
];

for (const [label, options] of CONFIGS) {
  test(`${label}: shared bytes go to a task and come back changed in place, without a copy`, async () => {
    const pool = createPool(options)(TASKS);
    try {
      for (const n of [0, 1, 64 * KIB, MIB]) {
        const bytes = pool.sharedBytes(n);
        assert.equal(bytes.byteLength, n);
        assert.equal(bytes.shared, true);
        assert.ok(isSharedBytes(bytes));
        const view = fill(bytes.u8, n);
        const expected = sumOf(view.map((b) => ~b & 0xff));
        const back = await pool.call.invert(bytes);
        // Handed over: the caller's handle is spent and its view detached.
        assert.equal(bytes.released, true);
        assert.equal(view.length, 0, "the sender's view is detached");
        assert.throws(() => bytes.u8, isBytesError(TypeError));
        assert.ok(isSharedBytes(back) && back !== bytes);
        assert.equal(back.byteLength, n);
        assert.equal(back.shared, true);
        assert.equal(sumOf(back.u8), expected);
        if (n > 0) assert.equal(back.u8[n - 1], ~((n - 1) * 13 + n) & 0xff);
        back.release();
        assert.equal(back.released, true);
      }
      // Read by a task and not returned: released when its call ends.
      const arg = pool.sharedBytes(256 * KIB);
      const sum = sumOf(fill(arg.u8, 3));
      assert.deepEqual(await pool.call.checksum(arg), { isShared: true, sum, n: 256 * KIB });
      // Made in a task: the caller gets the worker's bytes.
      const made = await pool.call.make([100 * KIB, 9]);
      assert.equal(made.byteLength, 100 * KIB);
      assert.equal(made.u8[1000], (1000 * 7 + 9) & 0xff);
      made.release();
      assert.equal(liveBlocks(pool), 0, "no block of shared bytes is left");
      // Many at once, through both calls and results.
      const round = await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const b = pool.sharedBytes(8 * KIB + i);
          fill(b.u8, i);
          return pool.call.invert(b);
        }),
      );
      round.forEach((b, i) => {
        assert.equal(b.u8[5], ~((5 * 13 + i) & 0xff) & 0xff);
        b.release();
      });
      assert.equal(liveBlocks(pool), 0);
    } finally {
      await pool.shutdown();
    }
  });

  test(`${label}: every misuse is refused with KNT_SHARED_BYTES and the pool goes on`, async () => {
    const pool = createPool(options)(TASKS);
    const other = createPool({ threads: 1 })(TASKS);
    try {
      const bytes = pool.sharedBytes(16);
      bytes.release();
      assert.throws(() => bytes.release(), isBytesError(TypeError), "a second release");
      assert.throws(() => bytes.u8, isBytesError(TypeError), "a read after release");
      await assert.rejects(pool.call.invert(bytes), isBytesError(TypeError), "a send after release");
      // Released from the wrong side: the caller's handle after it was handed over.
      const sent = pool.sharedBytes(16);
      const back = await pool.call.invert(sent);
      assert.throws(() => sent.release(), isBytesError(TypeError));
      back.release();
      // Another pool's, nested in a value, a broadcast's argument.
      const mine = pool.sharedBytes(32);
      await assert.rejects(other.call.invert(mine), isBytesError(TypeError));
      await assert.rejects(pool.call.echo({ mine }), isBytesError(TypeError));
      await assert.rejects(pool.broadcast.echo(mine), isBytesError(TypeError));
      // Still the caller's after those refusals (nothing was handed over).
      assert.equal(mine.released, false);
      mine.u8[0] = 7;
      mine.release();
      // Tasks that break the rules.
      assert.deepEqual(await pool.call.releaseTwice(pool.sharedBytes(8)), {
        code: "KNT_SHARED_BYTES",
        name: "TypeError",
      });
      await assert.rejects(pool.call.returnReleased(pool.sharedBytes(8)), (err) => err.code === "KNT_SHARED_BYTES");
      assert.deepEqual(await pool.call.badSize(-1), { code: "KNT_SHARED_BYTES", name: "RangeError" });
      assert.deepEqual(await pool.call.badSize("8"), { code: "KNT_SHARED_BYTES", name: "TypeError" });
      // In the host, the export is for tasks; sizes are checked.
      assert.throws(() => sharedBytes(8), isBytesError(TypeError));
      for (const n of [-1, 1.5, Number.NaN, 2 ** 40])
        assert.throws(() => pool.sharedBytes(n), isBytesError(RangeError));
      assert.throws(() => pool.sharedBytes("8"), isBytesError(TypeError));
      // A task that writes past its view reaches nothing beyond it.
      const victim = pool.sharedBytes(4 * KIB);
      const sum = sumOf(fill(victim.u8, 5));
      const writer = pool.sharedBytes(64);
      const wrote = await pool.call.writePast(writer);
      assert.equal(wrote.length, 64);
      assert.equal(wrote.after, undefined);
      assert.equal(sumOf(victim.u8), sum, "the neighbouring block is intact");
      victim.release();
      // Disposal: releases what this side holds; nothing for a spent handle.
      const disposed = pool.sharedBytes(8);
      disposed[Symbol.dispose]();
      assert.equal(disposed.released, true);
      disposed[Symbol.dispose]();
      // The pool goes on.
      const again = pool.sharedBytes(8);
      fill(again.u8, 1);
      (await pool.call.invert(again)).release();
      assert.equal(liveBlocks(pool), 0);
      // A result that nests what the task made is refused; the task's block stays its worker's.
      await assert.rejects(pool.call.nested(64), (err) => err.code === "KNT_SHARED_BYTES");
      assert.equal(liveBlocks(pool), 1);
    } finally {
      await Promise.all([pool.shutdown(), other.shutdown()]);
    }
  });

  test(`${label}: what an aborted call or a terminated worker held goes back to the region once`, async () => {
    const pool = createPool({ ...options, worker: { ...options.worker, hardTimeoutMs: 300 } })(TASKS);
    try {
      await pool.ready;
      // Aborted while its worker holds the argument: the late answer hands it back, and it is freed.
      const slow = pool.sharedBytes(1024);
      slow.u8[0] = 150;
      const ac = new AbortController();
      const aborted = pool.call.slowEcho(slow, { signal: ac.signal });
      setTimeout(() => ac.abort(), 20);
      await assert.rejects(aborted, { name: "AbortError" });
      await until(() => liveBlocks(pool) === 0, 10_000, "the late answer's block freed");
      // Aborted before it was sent: the call never took it; the caller keeps it.
      const kept = pool.sharedBytes(8);
      await assert.rejects(pool.call.invert(kept, { signal: AbortSignal.abort() }), { name: "AbortError" });
      assert.equal(kept.released, false);
      kept.release();
      // Terminated while holding an argument, and while holding what it made.
      await assert.rejects(pool.call.spinHolding(pool.sharedBytes(4 * KIB)), { code: "KNT_HARD_TIMEOUT" });
      await assert.rejects(pool.call.makeThenSpin(8 * KIB), { code: "KNT_HARD_TIMEOUT" });
      await until(() => liveBlocks(pool) === 0, 10_000, "the dead workers' blocks reclaimed");
      // The pool goes on.
      const bytes = pool.sharedBytes(4);
      fill(bytes.u8, 2);
      const back = await pool.call.invert(bytes);
      assert.equal(back.u8[3], ~((3 * 13 + 2) & 0xff) & 0xff);
      back.release();
      assert.equal(liveBlocks(pool), 0);
    } finally {
      await pool.shutdown();
    }
  });
}

test("a result still held after payload.borrowMs is copied out of shared memory", async () => {
  const pool = createPool({ threads: 1, payload: { borrowMs: 50 } })(TASKS);
  try {
    const result = await pool.call.make([4 * KIB, 4]);
    const view = result.u8;
    assert.equal(result.shared, true);
    await until(() => result.shared === false, 10_000, "the borrowed result copied out");
    assert.equal(view.length, 0, "the shared view is detached");
    assert.equal(result.released, false);
    assert.equal(result.u8.length, 4 * KIB);
    assert.equal(result.u8[100], (100 * 7 + 4) & 0xff);
    assert.equal(liveBlocks(pool), 0, "its block went back at once");
    result.release();
    assert.throws(() => result.u8, isBytesError(TypeError));
    await assert.rejects(
      Promise.resolve().then(() => createPool({ payload: { borrowMs: 0 } })),
      (err) => err.code === "KNT_INVALID_OPTION" && err instanceof RangeError,
    );
  } finally {
    await pool.shutdown();
  }
});

test("a task's argument is its own until the call ends: kept past it, it is released", async () => {
  const pool = createPool({ threads: 1 })(TASKS);
  try {
    assert.equal(await pool.call.keep(pool.sharedBytes(64)), "kept");
    assert.deepEqual(await pool.call.readKept(), { code: "KNT_SHARED_BYTES", name: "TypeError", released: true });
    // What a task makes stays its worker's: freed when the worker ends.
    assert.equal(await pool.call.makeAndKeep(2 * KIB), 2 * KIB);
    assert.equal(liveBlocks(pool), 1);
  } finally {
    await pool.shutdown();
  }
});

test("a STATE word task code overwrote fails its call clearly; the host survives and the pool goes on", async () => {
  const pool = createPool({ threads: 1 })(TASKS);
  try {
    const bytes = pool.sharedBytes(64);
    bytes.u8[0] = 120; // slowEcho waits this many ms holding it
    const at = internalsAt(pool);
    const call = pool.call.slowEcho(bytes);
    await sleep(30);
    new Int32Array(internals(pool).payloadSab)[at >> 2] = 0x5a5a5a5a;
    await assert.rejects(call, (err) => err.code === "KNT_REGION_CORRUPT" || err.code === "KNT_SHARED_BYTES");
    const again = pool.sharedBytes(8);
    (await pool.call.invert(again)).release();
  } finally {
    await pool.shutdown();
  }
});

/** The offset of the pool's one live block of shared bytes. */
function internalsAt(pool) {
  const regions = internals(pool).payload.arena.regions();
  return regions[regions.length - 1];
}

test("readBody: a request body straight into shared bytes, its limit enforced before anything grows", async () => {
  const pool = createPool({ threads: 1 })(TASKS);
  const seen = [];
  const server = http.createServer(async (req, res) => {
    try {
      const bytes = await pool.readBody(req, { maxBytes: 64 * KIB });
      seen.push(bytes.byteLength);
      const { sum } = await pool.call.checksum(bytes);
      res.end(String(sum));
    } catch (err) {
      res.statusCode = err.status ?? 500;
      res.setHeader("connection", "close");
      res.end(err.code);
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const post = async (body, headers = {}) => {
    const res = await fetch(url, { method: "POST", body, headers, duplex: "half" });
    return [res.status, await res.text()];
  };
  const chunked = (parts) =>
    new ReadableStream({
      pull(controller) {
        if (parts.length === 0) controller.close();
        else controller.enqueue(parts.shift());
      },
    });
  try {
    const body = fill(new Uint8Array(40 * KIB), 8);
    assert.deepEqual(await post(body), [200, String(sumOf(body))]);
    assert.deepEqual(await post(new Uint8Array(64 * KIB + 1)), [413, "KNT_BODY_TOO_LARGE"]);
    assert.deepEqual(await post(chunked([body.slice(0, 1000), body.slice(1000)])), [200, String(sumOf(body))]);
    const big = () => Array.from({ length: 20 }, () => new Uint8Array(4 * KIB));
    assert.deepEqual(await post(chunked(big())), [413, "KNT_BODY_TOO_LARGE"]);
    assert.deepEqual(await post(new Uint8Array(0)), [200, "0"]);
    assert.deepEqual(seen, [40 * KIB, 40 * KIB, 0]);
    // A web Request, and bad arguments.
    const fromWeb = await pool.readBody(new Request(url, { method: "POST", body }), { maxBytes: 64 * KIB });
    assert.equal(sumOf(fromWeb.u8), sumOf(body));
    fromWeb.release();
    await assert.rejects(pool.readBody(new Request(url, { method: "POST", body }), { maxBytes: 100 }), {
      code: "KNT_BODY_TOO_LARGE",
      status: 413,
    });
    await assert.rejects(pool.readBody({}, { maxBytes: 10 }), { code: "KNT_INVALID_ARGUMENT", name: "TypeError" });
    await assert.rejects(pool.readBody(new Request(url, { method: "POST", body })), { code: "KNT_INVALID_ARGUMENT" });
    await until(() => liveBlocks(pool) === 0, 5_000, "every body's block given back");
  } finally {
    server.close();
    await pool.shutdown();
  }
});
