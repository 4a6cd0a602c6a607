import test from "node:test";
import assert from "node:assert/strict";
import { createPool, task, stableTaskID } from "../index.mjs";
import * as t from "./fixtures/lifecycle-tasks.mjs";
import { within, sleep, until } from "./helpers/wait.mjs";
import { internals } from "./helpers/internals.mjs";
import { hasUsing } from "./fixtures/runtime.mjs";

test("task timeouts: default, maybe, error, and a plain number", async () => {
  const pool = createPool({ threads: 1 })({
    slowDefault: t.slowDefault,
    slowMaybe: t.slowMaybe,
    slowError: t.slowError,
    slowNumber: t.slowNumber,
    echoAfter: t.echoAfter,
  });
  try {
    await pool.ready; // the 1 ms call below must not wait for a worker to start
    assert.equal(await pool.call.slowDefault(500), "fallback");
    assert.equal(await pool.call.slowMaybe(500), undefined);
    await assert.rejects(pool.call.slowError(500), (e) => e instanceof RangeError && e.message === "custom timeout");
    const err = await pool.call.slowNumber(500).catch((e) => e);
    assert.ok(err instanceof Error);
    assert.match(err.message, /^Task timeout/);
    assert.match(err.message, /slowNumber/);
    assert.match(err.message, /50 ms/);
    assert.equal(err.code, "KNT_TASK_TIMEOUT");
    // Fast enough: the real result. A few tries: on a loaded machine a 1 ms
    // call can still miss its 50 ms bound now and then (1 run of 3 under
    // with-load.sh); a timeout that never lets a result through fails all.
    let fast;
    for (let i = 0; i < 5 && fast !== "finished"; i++) fast = await pool.call.slowDefault(1);
    assert.equal(fast, "finished");
    // The worker stays usable and late results never reach other calls.
    const late = await Promise.all(Array.from({ length: 20 }, (_, i) => pool.call.echoAfter([i, 1])));
    assert.deepEqual(
      late,
      Array.from({ length: 20 }, (_, i) => i),
    );
    await sleep(600); // the timed-out calls finish meanwhile
    assert.deepEqual(await pool.call.echoAfter(["after", 0]), "after");
  } finally {
    await pool.shutdown();
  }
});

test("AbortSignal: before dispatch, while running, and after finishing", async () => {
  const pool = createPool({ threads: 1 })({ echoAfter: t.echoAfter, watchAbort: t.watchAbort, quick: t.quick });
  try {
    const already = AbortSignal.abort("early");
    const before = await pool.call.echoAfter(["x", 0], { signal: already }).catch((e) => e);
    assert.equal(before.name, "AbortError");
    assert.ok(before instanceof DOMException);
    assert.equal(before.cause, "early");

    const controller = new AbortController();
    // The task runs 2 s: the call must reject long before (wide margin for
    // a loaded machine, where the 20 ms timer itself can fire late).
    const running = pool.call.echoAfter(["y", 2000], { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stop")), 20);
    const started = Date.now();
    const err = await running.catch((e) => e);
    assert.equal(err.name, "AbortError");
    assert.equal(err.cause.message, "stop");
    assert.ok(Date.now() - started < 1500, "rejected as soon as the signal fired, not when the task ended");

    // An abort-aware task sees the abort through its shared flag.
    const c2 = new AbortController();
    const watched = pool.call.watchAbort(2000, { signal: c2.signal });
    setTimeout(() => c2.abort(), 30);
    assert.equal((await watched.catch((e) => e)).name, "AbortError");

    // Aborting a finished call changes nothing.
    const c3 = new AbortController();
    assert.equal(await pool.call.quick(1, { signal: c3.signal }), 2);
    c3.abort();
    assert.equal(await pool.call.quick(2), 3);

    await assert.rejects(() => pool.call.quick(1, { signal: "nope" }), TypeError);
    await assert.rejects(() => pool.call.quick(1, { sig: 1 }), /unknown option sig/);
  } finally {
    await pool.shutdown();
  }
});

test("an abort-aware call's promise has reject(), and the worker sees hasAborted()", async () => {
  const pool = createPool({ threads: 1 })({ watchAbort: t.watchAbort, abortFlag: t.abortFlag, quick: t.quick });
  try {
    const p = pool.call.watchAbort(2000);
    assert.equal(typeof p.reject, "function");
    setTimeout(() => p.reject(new Error("caller gave up")), 20);
    await assert.rejects(p, /caller gave up/);
    assert.equal(await pool.call.abortFlag(), false, "a fresh call starts unaborted");
    const plain = pool.call.quick(1);
    assert.equal(typeof plain.reject, "undefined", "only abort-aware calls carry reject()");
    assert.equal(await plain, 2);
  } finally {
    await pool.shutdown();
  }
});

test("abortSignalCapacity: running out is a clear error, not a hang", async () => {
  const pool = createPool({ threads: 1, abortSignalCapacity: 2 })({ watchAbort: t.watchAbort });
  try {
    const a = pool.call.watchAbort(50);
    const b = pool.call.watchAbort(50);
    const c = await pool.call.watchAbort(50).catch((e) => e);
    assert.ok(c instanceof RangeError);
    assert.equal(c.code, "KNT_ABORT_SIGNALS_EXHAUSTED");
    assert.match(c.message, /abortSignalCapacity/);
    assert.deepEqual(await Promise.all([a, b]), ["not aborted", "not aborted"]);
    assert.equal(await pool.call.watchAbort(1), "not aborted", "signals are reused once calls settle");
  } finally {
    await pool.shutdown();
  }
});

test("worker.hardTimeoutMs terminates a runaway worker, rejects its calls, and the pool keeps serving", async () => {
  const pool = createPool({ threads: 1, worker: { hardTimeoutMs: 200 } })({
    spinForever: t.spinForever,
    quick: t.quick,
  });
  try {
    const stuck = pool.call.spinForever();
    const behind = pool.call.quick(1); // same worker, queued behind the loop
    const err = await within(
      stuck.catch((e) => e),
      10_000,
      "the runaway call",
    );
    assert.equal(err.code, "KNT_HARD_TIMEOUT");
    assert.match(err.message, /spinForever/);
    assert.match(err.message, /200 ms/);
    const other = await within(
      behind.then(
        (v) => v,
        (e) => e,
      ),
      10_000,
      "the call behind it",
    );
    assert.ok(other === 2 || other.code === "KNT_WORKER_EXIT", `got ${other}`);
    assert.equal(await within(pool.call.quick(41), 10_000, "a later call"), 42);
  } finally {
    await pool.shutdown();
  }
});

test("worker.resolveAfterFinishingAll: shutdown() lets submitted calls finish", async () => {
  const pool = createPool({ threads: 1, worker: { resolveAfterFinishingAll: true } })({ echoAfter: t.echoAfter });
  const calls = [pool.call.echoAfter(["a", 50]), pool.call.echoAfter(["b", 10])];
  const done = pool.shutdown();
  assert.equal(pool.shutdown(), done, "idempotent");
  await assert.rejects(pool.call.echoAfter(["late", 0]), /shut down/);
  assert.deepEqual(await Promise.all(calls), ["a", "b"]);
  await done;
});

test("shutdown(delayMs) waits that long, then forces", async () => {
  const pool = createPool({ threads: 1 })({ echoAfter: t.echoAfter });
  await pool.ready;
  const fast = pool.call.echoAfter(["fast", 10]).catch((e) => e);
  const slow = pool.call.echoAfter(["slow", 20_000]).catch((e) => e);
  const t0 = Date.now();
  await pool.shutdown(1_000);
  assert.ok(Date.now() - t0 < 15_000, "forced after the delay, not after the slow call");
  assert.equal(await fast, "fast", "a call that finishes within the delay completes");
  assert.equal((await slow).code, "KNT_POOL_SHUTDOWN");
  const other = createPool({ threads: 1 })({ echoAfter: t.echoAfter });
  await assert.rejects(other.shutdown(-1), RangeError);
  assert.equal(await other.call.echoAfter(["still open", 0]), "still open", "a bad delay does not shut the pool");
  await other.shutdown();
});

test("worker.bootstrap runs before task modules; its failure rejects calls and ready", async () => {
  const ok = createPool({
    threads: 1,
    worker: { bootstrap: { href: "./fixtures/bootstrap-ok.mjs", name: "setup", data: { region: "eu" } } },
  })({ bootData: t.bootData });
  try {
    await ok.ready;
    assert.deepEqual(await ok.call.bootData(), { region: "eu", when: "before tasks" });
  } finally {
    await ok.shutdown();
  }
  const bad = createPool({
    threads: 1,
    worker: { bootstrap: { href: "./fixtures/bootstrap-fail.mjs", name: "setup" } },
  })({
    quick: t.quick,
  });
  try {
    const first = await within(
      bad.call.quick(1).catch((e) => e),
      10_000,
      "a call on a pool whose bootstrap fails",
    );
    assert.match(first.message, /bootstrap failed on purpose/);
    await assert.rejects(within(bad.ready, 10_000, "ready"), /bootstrap failed on purpose/);
    await assert.rejects(bad.call.quick(2), /bootstrap failed on purpose/);
  } finally {
    await bad.shutdown();
  }
});

test("errors of task loading, a bad bootstrap and bad arguments each carry a code", async () => {
  const code = (expected) => (err) => {
    assert.equal(err.code, expected, String(err));
    return true;
  };
  const missing = createPool({ threads: 1 })({ missing: t.missing });
  try {
    await assert.rejects(within(missing.call.missing(1), 10_000, "missing export"), code("KNT_TASK_NOT_FOUND"));
    await assert.rejects(missing.ready, code("KNT_TASK_NOT_FOUND"));
  } finally {
    await missing.shutdown();
  }
  const noBoot = createPool({
    threads: 1,
    worker: { bootstrap: { href: "./fixtures/bootstrap-ok.mjs", name: "absent" } },
  })({ quick: t.quick });
  try {
    const err = await within(
      noBoot.call.quick(1).catch((e) => e),
      10_000,
      "bootstrap without that export",
    );
    assert.match(err.message, /worker\.bootstrap: .* has no exported function "absent"/);
    assert.equal(err.code, "KNT_INVALID_OPTION");
  } finally {
    await noBoot.shutdown();
  }
  const open = createPool({ threads: 1 })({ quick: t.quick });
  await assert.rejects(open.shutdown(-1), code("KNT_INVALID_ARGUMENT"));
  await open.shutdown();
  assert.throws(() => stableTaskID(5, 0), code("KNT_INVALID_ARGUMENT"));
  assert.throws(() => stableTaskID("file:///x", "0"), code("KNT_INVALID_ARGUMENT"));
  assert.throws(() => createPool({ threads: 0, inliner: {} })({ triple: t.triple }), code("KNT_INVALID_OPTION"));
});

test("importTask: the worker imports the function; the host never evaluates its module", async () => {
  const pool = createPool({ threads: 1 })({ triple: t.triple });
  try {
    assert.equal(await pool.call.triple(14), 42);
    assert.equal(
      globalThis.__importedEvaluated,
      undefined,
      "the imported module's side effect did not run in the host",
    );
  } finally {
    await pool.shutdown();
  }
  const broken = createPool({ threads: 1 })({ missing: t.missing });
  try {
    const err = await within(
      broken.call.missing(1).catch((e) => e),
      10_000,
      "a call to a missing export",
    );
    assert.match(err.message, /has no exported function "nope"/);
  } finally {
    await broken.shutdown();
  }
});

test("single-task shorthand: task({ f }).createPool(options)", async () => {
  const pool = t.quick.createPool({ threads: 1 });
  try {
    assert.equal(await pool.call(9), 10);
    assert.equal(typeof pool.shutdown, "function");
  } finally {
    await pool.shutdown();
  }
});

// `using` is syntax from Node 24 on (hasUsing); older Node still gets the protocol.
test("Symbol.asyncDispose waits for shutdown; Symbol.dispose starts it", async () => {
  const pool = createPool({ threads: 1 })({ quick: t.quick });
  assert.equal(await pool.call.quick(1), 2);
  const disposing = pool[Symbol.asyncDispose]();
  assert.ok(disposing instanceof Promise);
  assert.equal(disposing, pool.shutdown(), "the same shutdown promise");
  await disposing;
  await assert.rejects(pool.call.quick(1), /shut down/);
  const sync = createPool({ threads: 1 })({ quick: t.quick });
  assert.equal(sync[Symbol.dispose](), undefined);
  await assert.rejects(sync.call.quick(1), /shut down/);
  await sync.shutdown();
});

test("using / await using shut the pool down at scope exit", {
  skip: hasUsing ? false : "this Node has no `using` syntax",
}, async () => {
  const { useAndDispose } = await import("./fixtures/using-scope.mjs");
  const kept = await useAndDispose(t.quick);
  await assert.rejects(kept.call.quick(1), /shut down/);
});

test("task() validates timeout and abortSignal", () => {
  assert.throws(() => task({ f: () => 1, timeout: -5 }), { name: "RangeError", message: /timeout/ });
  assert.throws(() => task({ f: () => 1, timeout: { time: 10, default: 1, error: 2 } }), {
    name: "TypeError",
    message: /one of default, maybe, error/,
  });
  assert.throws(() => task({ f: () => 1, timeout: { tme: 10 } }), { name: "TypeError", message: /unknown key tme/ });
  assert.throws(() => task({ f: () => 1, abortSignal: { hasAborted: "yes" } }), {
    name: "TypeError",
    message: /abortSignal/,
  });
  assert.throws(() => task({ f: () => 1, extra: 1 }), { name: "TypeError", message: /unknown key extra/ });
});

test("every abort-aware call carries reject(): promise arguments, early rejections", async () => {
  const pool = createPool({ threads: 1, abortSignalCapacity: 1 })({ watchAbort: t.watchAbort });
  try {
    // A promise argument: reject() before it resolves, and after.
    let release;
    const gate = new Promise((r) => (release = r));
    const waiting = pool.call.watchAbort(gate);
    assert.equal(typeof waiting.reject, "function");
    waiting.reject(new Error("gave up early"));
    release(5);
    await assert.rejects(waiting, /gave up early/);

    const later = pool.call.watchAbort(Promise.resolve(2000));
    await sleep(30);
    later.reject(new Error("gave up later"));
    await assert.rejects(later, /gave up later/);
    // Its worker sees the abort and answers; then its abort word is free
    // again (waited for, not timed: a worker may take long to start here).
    const p = internals(pool);
    await until(() => p.freeSignals.length === 1, 20_000, "the aborted call's answer", 5);

    // Rejected at once (no abort signal left while one call holds it): reject() is a no-op.
    const holder = pool.call.watchAbort(50);
    const refused = pool.call.watchAbort(1);
    assert.equal(typeof refused.reject, "function");
    refused.reject(new Error("ignored"));
    await assert.rejects(refused, { code: "KNT_ABORT_SIGNALS_EXHAUSTED" });
    assert.equal(await holder, "not aborted");
  } finally {
    await pool.shutdown();
  }
  const closed = pool.call.watchAbort(1);
  assert.equal(typeof closed.reject, "function");
  await assert.rejects(closed, /shut down/);
});
