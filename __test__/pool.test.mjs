import test from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readlinkSync } from "node:fs";
import { createPool, task, isMain } from "../index.mjs";
import * as t from "./fixtures/tasks.mjs";
import { skipOn } from "./fixtures/runtime.mjs";
import { sleep } from "./helpers/wait.mjs";

const settleAll = (promises) => Promise.allSettled(promises);

test("isMain is true on the host and false inside workers", async () => {
  assert.equal(isMain, true);
  const pool = createPool({ threads: 1 })({ whereAmI: t.whereAmI });
  try {
    assert.deepEqual(await pool.call.whereAmI(), { isMain: false, hasWorkerData: true });
  } finally {
    await pool.shutdown();
  }
});

test("calls return their own results, sync and async, several in flight per worker", async () => {
  const pool = createPool({ threads: 2 })({ add: t.add, delayed: t.delayed });
  try {
    assert.equal(await pool.call.add([1, 2]), 3);
    const calls = [];
    for (let i = 0; i < 200; i++) {
      calls.push(i % 2 ? pool.call.add([i, 1]) : pool.call.delayed([i, i % 7]));
    }
    const results = await Promise.all(calls);
    results.forEach((r, i) => assert.equal(r, i % 2 ? i + 1 : i));
  } finally {
    await pool.shutdown();
  }
});

test("a promise argument is awaited before dispatch", async () => {
  const pool = createPool({ threads: 1 })({ add: t.add });
  try {
    const arg = new Promise((resolve) => setTimeout(() => resolve([20, 22]), 10));
    assert.equal(await pool.call.add(arg), 42);
    await assert.rejects(pool.call.add(Promise.reject(new Error("upstream"))), /upstream/);
  } finally {
    await pool.shutdown();
  }
});

test(
  "pool shape: call, shutdown, Symbol.dispose; calling an unknown task throws a TypeError " + "listing the tasks",
  async () => {
    const pool = createPool({ threads: 1 })({ add: t.add, echo: t.echo });
    try {
      assert.deepEqual(Object.keys(pool.call).sort(), ["add", "echo"]);
      assert.equal(typeof pool.shutdown, "function");
      assert.equal(typeof pool[Symbol.dispose], "function");
      assert.equal(typeof pool.call.unknown, "function", "pool.call.<unknown> is a function that throws");
      assert.equal("unknown" in pool.call, false);
      assert.equal(pool.call.then, undefined, "await pool.call does not call a task");
      assert.throws(
        () => pool.call.unknown(1),
        (err) => {
          assert.ok(err instanceof TypeError);
          assert.equal(err.code, "KNT_UNKNOWN_TASK");
          assert.match(err.message, /pool\.call\.unknown is not a task of this pool; its tasks: add, echo/);
          return true;
        },
      );
      assert.equal(await pool.call.add([2, 3]), 5, "the pool still serves");
      assert.equal("send" in pool, false);
      assert.equal("fastCall" in pool, false);
    } finally {
      await pool.shutdown();
    }
  },
);

test("errors thrown in tasks come back as rejections with name, message, stack and cause", async () => {
  const pool = createPool({ threads: 1 })({
    failSync: t.failSync,
    failAsync: t.failAsync,
    throwValue: t.throwValue,
    add: t.add,
  });
  try {
    const sync = await pool.call.failSync("bad input").catch((e) => e);
    assert.ok(sync instanceof TypeError);
    assert.equal(sync.message, "bad input");
    assert.match(sync.stack, /tasks\.mjs/, "stack is the worker's, pointing at the task source");

    const asyncErr = await pool.call.failAsync("async bad").catch((e) => e);
    assert.ok(asyncErr instanceof Error);
    assert.equal(asyncErr.name, "CustomError");
    assert.equal(asyncErr.message, "async bad");
    assert.deepEqual(asyncErr.cause, { code: 42, detail: "inner" });

    assert.equal(await pool.call.throwValue("plain string").catch((e) => e), "plain string");
    assert.deepEqual(await pool.call.throwValue({ reason: 7 }).catch((e) => e), { reason: 7 });
    assert.equal(
      await pool.call.throwValue(undefined).then(
        () => "resolved",
        (e) => e,
      ),
      undefined,
    );
    // The pool is still fine.
    assert.equal(await pool.call.add([2, 3]), 5);
  } finally {
    await pool.shutdown();
  }
});

test("shutdown rejects pending calls, later calls reject, and it is idempotent", async () => {
  const pool = createPool({ threads: 1 })({ delayed: t.delayed, add: t.add });
  const pending = pool.call.delayed(["late", 5_000]);
  const queued = settleAll(Array.from({ length: 100 }, (_, i) => pool.call.add([i, i])));
  const pendingSettled = pending.then(
    () => assert.fail("a call pending at shutdown must not resolve"),
    (err) => err,
  );
  await sleep(20);
  const first = pool.shutdown();
  assert.equal(pool.shutdown(), first, "a second shutdown() returns the same promise");
  await first;
  const err = await pendingSettled;
  assert.equal(err.code, "KNT_POOL_SHUTDOWN");
  assert.match(err.message, /shut down/);
  const results = await queued;
  for (const r of results) {
    // Each queued call either finished before shutdown or was rejected as shut down.
    if (r.status === "rejected") assert.equal(r.reason.code, "KNT_POOL_SHUTDOWN");
    else assert.equal(typeof r.value, "number");
  }
  await assert.rejects(pool.call.add([1, 1]), /shut down/);
});

test("Symbol.dispose starts shutdown", async () => {
  const pool = createPool({ threads: 1 })({ add: t.add });
  assert.equal(await pool.call.add([1, 1]), 2);
  pool[Symbol.dispose]();
  await assert.rejects(pool.call.add([1, 1]), /shut down/);
  await pool.shutdown();
});

test("values that cannot be sent are rejected before dispatch, other calls unaffected", async () => {
  const pool = createPool({ threads: 1 })({ echo: t.echo, returnsFunction: t.returnsFunction });
  try {
    const inFlight = Array.from({ length: 1000 }, (_, i) => pool.call.echo(i));
    const fn = pool.call.echo(() => 1).catch((e) => e);
    const nested = pool.call.echo({ a: [1, { b: () => 2 }] }).catch((e) => e);
    const sym = pool.call.echo(Symbol("s")).catch((e) => e);
    const weak = pool.call.echo(new WeakMap()).catch((e) => e);
    const back = pool.call.returnsFunction().catch((e) => e);
    const values = await Promise.all(inFlight);
    values.forEach((v, i) => assert.equal(v, i));
    for (const [err, code] of [
      [await fn, "KNT_VALUE_FUNCTION"],
      [await nested, "KNT_VALUE_FUNCTION"],
      [await sym, "KNT_VALUE_SYMBOL"],
      [await weak, "KNT_VALUE_UNSERIALIZABLE"],
    ]) {
      assert.ok(err instanceof TypeError, `TypeError for ${code}`);
      assert.equal(err.code, code);
    }
    assert.match((await fn).message, /function/);
    assert.match((await sym).message, /symbol/);
    const returned = await back;
    assert.ok(returned instanceof TypeError, "a result that cannot cross rejects the call");
    assert.equal(returned.code, "KNT_VALUE_FUNCTION");
  } finally {
    await pool.shutdown();
  }
});

test("a payload over maxPayloadBytes rejects with a RangeError naming limit and size", async () => {
  const pool = createPool({ threads: 1, payload: { maxPayloadBytes: 64 * 1024 } })({ echo: t.echo });
  try {
    const other = pool.call.echo("fine");
    const err = await pool.call.echo(new Uint8Array(100_000)).catch((e) => e);
    assert.ok(err instanceof RangeError);
    assert.equal(err.code, "KNT_VALUE_TOO_LARGE");
    assert.match(err.message, /65536/);
    assert.match(err.message, /1000\d\d/);
    assert.equal(await other, "fine");
  } finally {
    await pool.shutdown();
  }
});

test("large payloads use the shared payload region and round-trip", async () => {
  const pool = createPool({ threads: 2 })({ echo: t.echo, byteSum: t.byteSum });
  try {
    const big = new Float64Array(512 * 1024); // 4 MiB
    for (let i = 0; i < big.length; i++) big[i] = i * 1.5;
    const back = await pool.call.echo(big);
    assert.ok(back instanceof Float64Array);
    assert.equal(back.length, big.length);
    assert.deepEqual(back, big);
    const text = "é".repeat(300_000) + "\ud800";
    assert.equal(await pool.call.echo(text), text);
    // Many medium payloads at once: the region is shared and grows.
    const bufs = Array.from({ length: 64 }, (_, i) => new Uint8Array(100_000).fill(i));
    const sums = await Promise.all(bufs.map((b) => pool.call.byteSum(b)));
    sums.forEach((s, i) => assert.equal(s, (100_000 * i) | 0));
  } finally {
    await pool.shutdown();
  }
});

test("fast-path and structured-clone values round-trip through a worker with their types", async () => {
  const pool = createPool({ threads: 1 })({ echo: t.echo, describeValue: t.describeValue });
  try {
    const values = [
      undefined,
      null,
      true,
      false,
      0,
      -0,
      NaN,
      Infinity,
      -Infinity,
      2 ** 53,
      -1.5,
      123n,
      -(2n ** 200n),
      "",
      "plain",
      "emoji 🎉 and lone \udc00 surrogate",
      { a: 1, b: [1, 2, { c: "d" }], e: null },
      [1, [2, [3]]],
      new Date(1_700_000_000_000),
      new Map([
        [1, "a"],
        ["b", { c: 2 }],
      ]),
      new Set([1, "x"]),
      /re+g/gi,
    ];
    for (const v of values) {
      const back = await pool.call.echo(v);
      if (typeof v === "number" && Number.isNaN(v)) assert.ok(Number.isNaN(back));
      else if (Object.is(v, -0)) assert.ok(Object.is(back, -0), "-0 kept");
      else assert.deepEqual(back, v);
    }
    const kinds = [
      Int8Array,
      Uint8Array,
      Uint8ClampedArray,
      Int16Array,
      Uint16Array,
      Int32Array,
      Uint32Array,
      Float32Array,
      Float64Array,
      BigInt64Array,
      BigUint64Array,
    ];
    for (const Kind of kinds) {
      const v = new Kind(5);
      const back = await pool.call.echo(v);
      assert.equal(back.constructor, Kind);
      assert.deepEqual(back, v);
      const seen = await pool.call.describeValue(v);
      assert.equal(seen.ctor, Kind.name, `${Kind.name} arrives as itself in the worker`);
    }
    const buf = Buffer.from("buffer!");
    const backBuf = await pool.call.echo(buf);
    assert.ok(Buffer.isBuffer(backBuf));
    assert.equal(backBuf.toString(), "buffer!");
    assert.equal((await pool.call.describeValue(buf)).isBuffer, true);
    const ab = new Uint8Array([1, 2, 3]).buffer;
    const backAb = await pool.call.echo(ab);
    assert.ok(backAb instanceof ArrayBuffer);
    assert.deepEqual(new Uint8Array(backAb), new Uint8Array([1, 2, 3]));
    const dv = await pool.call.echo(new DataView(new Uint8Array([9, 8]).buffer));
    assert.ok(dv instanceof DataView);
    assert.equal(dv.getUint8(0), 9);
  } finally {
    await pool.shutdown();
  }
});

test("task() rejects a definition without a function f", () => {
  assert.throws(() => task({}), { name: "TypeError", message: /f must be a function/ });
  assert.throws(() => task(null), { name: "TypeError", message: /definition must be an object/ });
});

test("createPool validates options and tasks, naming the key", () => {
  assert.throws(() => createPool({ threads: 0 }), { name: "RangeError", message: /threads/ });
  assert.throws(() => createPool({ threads: 1.5 }), { name: "TypeError", message: /threads must be an integer/ });
  assert.throws(() => createPool({ threads: "2" }), { name: "TypeError", message: /threads/ });
  assert.throws(() => createPool({ thread: 2 }), { name: "TypeError", message: /unknown option thread/ });
  assert.throws(() => createPool({ payload: { maxPayloadBytes: -1 } }), {
    name: "RangeError",
    message: /payload\.maxPayloadBytes/,
  });
  assert.throws(() => createPool({ payload: { nope: 1 } }), { name: "TypeError", message: /payload\.nope/ });
  assert.throws(
    () => createPool({ payload: { payloadInitialBytes: 2 ** 20 * 8, payloadMaxByteLength: 2 ** 20 * 4 } }),
    { name: "RangeError", message: /payloadInitialBytes/ },
  );
  assert.throws(() => createPool({ threads: 1 })({}), { name: "TypeError", message: /tasks is empty/ });
  assert.throws(() => createPool({ threads: 1 })({ x: 42 }), { name: "TypeError", message: /task "x"/ });
  assert.throws(() => createPool({ threads: 1 })(null), { name: "TypeError", message: /tasks must be an object/ });
});

test("an inline (non-exported) function is rejected at createPool, naming the key", () => {
  assert.throws(() => createPool({ threads: 1 })({ inlineSquare: (v) => v * v }), {
    name: "TypeError",
    message: /task "inlineSquare".*not defined in|task "inlineSquare".*not exported/,
  });
});

const denoKeepsFds =
  "Deno keeps descriptors (an epoll, an eventfd) of ended worker threads that loaded any .node file: " +
  "requiring the addon alone in 20 Deno workers, no pool, leaves 22 open, plain workers 2";
test("pools shut down while their workers are still starting leave no file descriptor open", {
  skip: process.platform !== "linux" ? "reads /proc/self/fd" : skipOn({ deno: denoKeepsFds }),
}, async () => {
  const fds = () => new Set(readdirSync("/proc/self/fd").map((fd) => `${fd} ${safeLink(fd)}`));
  const warm = createPool({ threads: 1 })({ add: t.add });
  await warm.call.add([1, 1]);
  await warm.shutdown();
  const before = fds();
  // Shut down 20-60 ms after creation: the workers are importing their
  // modules then (a terminate() in the middle of that read used to leave
  // its descriptor open).
  for (let i = 0; i < 60; i++) {
    const pool = createPool({ threads: 1 + (i % 2) })({ add: t.add });
    await sleep(20 + ((i * 7) % 40));
    await pool.shutdown();
  }
  const leaked = [...fds()].filter((fd) => !before.has(fd) && !/\/proc\/\d+\/fd$|\(closed\)$/.test(fd));
  assert.deepEqual(leaked, [], "descriptors opened by the pools and never closed");
});

function safeLink(fd) {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return "(closed)";
  }
}
