// transfer(): a caller gives up a buffer and its memory moves (worker
// threads: results always, arguments in private lanes) or is copied once
// (work stealing's arguments, worker processes, values under
// TRANSFER_MIN_BYTES). What is checked: the values cross whole in every
// topology; the caller's buffer is detached; what a task keeps cannot reach
// another call; misuse is a TypeError with KNT_TRANSFER and the pool goes on;
// a worker that dies holding a moved buffer rejects its calls and the pool
// goes on; a discarded answer's moved buffer is not kept.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { receiveMessageOnPort } from "node:worker_threads";
import { createPool, transfer, WorkerExitError } from "../index.mjs";
import * as t from "./fixtures/transfer-tasks.mjs";
import { within } from "./helpers/wait.mjs";
import { internals } from "./helpers/internals.mjs";
import { fillBytes } from "./helpers/prng.mjs";

const require = createRequire(import.meta.url);
const { TRANSFER_MIN_BYTES } = require("../lib/codec/transfer.js");
const { HostSharedRefs } = require("../lib/payload/shared-refs.js");

const BIG = 1024 * 1024;
const SMALL = 1024;
const bytes = (n, seed) => fillBytes(new Uint8Array(n), seed * 2654435761);
// As the fixture's sumOf.
function sumOf(u8) {
  let s = 0;
  for (let i = 0; i < u8.length; i += 997) s = (s + u8[i] * (i + 1)) >>> 0;
  return s;
}

// Every kind transfer() takes, over `n` bytes of seed `seed`; `tag` is what the receiver sees.
const KINDS = {
  Uint8Array: (u8) => ({ value: u8, tag: "[object Uint8Array]" }),
  ArrayBuffer: (u8) => ({ value: u8.buffer, tag: "[object ArrayBuffer]" }),
  Buffer: (u8) => ({ value: Buffer.from(u8.buffer), tag: "[object Uint8Array]", isBuffer: true }),
  Float64Array: (u8) => ({ value: new Float64Array(u8.buffer), tag: "[object Float64Array]" }),
  DataView: (u8) => ({ value: new DataView(u8.buffer), tag: "[object DataView]" }),
};

const expectTransferError = (err) => {
  assert.ok(err instanceof TypeError, `a TypeError, got ${err}`);
  assert.equal(err.code, "KNT_TRANSFER");
  return true;
};

test("transfer() takes a whole, unshared, attached buffer and detaches the caller's", () => {
  assert.ok(TRANSFER_MIN_BYTES > SMALL && TRANSFER_MIN_BYTES < BIG, "the sizes below straddle the threshold");
  for (const [name, make] of Object.entries(KINDS)) {
    const { value } = make(bytes(4096, 1));
    transfer(value);
    const buffer = value instanceof ArrayBuffer ? value : value.buffer;
    assert.equal(buffer.byteLength, 0, `${name}: the caller's buffer is detached`);
  }
  const refused = [
    ["a number", 5],
    ["a string", "abc"],
    ["null", null],
    ["a plain object", { byteLength: 4 }],
    ["an array", [1, 2]],
    ["a SharedArrayBuffer", new SharedArrayBuffer(16)],
    ["a view over a SharedArrayBuffer", new Uint8Array(new SharedArrayBuffer(16))],
    ["a view over part of its buffer", new Uint8Array(64).subarray(8)],
    ["a view over the start of its buffer", new Uint8Array(new ArrayBuffer(64), 0, 32)],
  ];
  // Node carves small Buffers out of a shared pool (Bun does not): one of those is refused.
  const small = Buffer.from("abc");
  if (small.byteLength !== small.buffer.byteLength) refused.push(["a pooled Buffer", small]);
  const detached = new Uint8Array(8);
  transfer(detached);
  refused.push(["a detached buffer", detached], ["a detached ArrayBuffer", detached.buffer]);
  for (const [what, value] of refused) {
    assert.throws(() => transfer(value), expectTransferError, what);
  }
  // Nothing refused was detached.
  const partial = new Uint8Array(64);
  assert.throws(() => transfer(partial.subarray(1)), expectTransferError);
  assert.equal(partial.byteLength, 64);
});

for (const [mode, options] of [
  ["work stealing", { threads: 2, host: { steal: true } }],
  ["private lanes", { threads: 2, host: { steal: false } }],
  ["worker processes", { threads: 1, worker: { runtime: "process" } }],
]) {
  test(`${mode}: transferred arguments and results cross whole, in every kind and size`, async () => {
    const pool = createPool(options)(t);
    const refs = internals(pool).sharedRefs;
    let claims = 0;
    if (refs !== null) {
      const claim = refs.claim.bind(refs);
      refs.claim = (...a) => (claims++, claim(...a));
    }
    try {
      let seed = 1;
      let bigArgs = 0;
      for (const n of [SMALL, BIG]) {
        for (const [name, make] of Object.entries(KINDS)) {
          const u8 = bytes(n, seed++);
          const sum = sumOf(u8);
          const { value, tag, isBuffer = false } = make(u8);
          const got = await within(pool.call.inspect(transfer(value)), 30_000, `${mode} ${name} ${n}`);
          assert.deepEqual(got, { tag, isBuffer, n, sum }, `${mode}: ${name} of ${n} bytes`);
          assert.equal(u8.byteLength, 0, "the caller's view sees its buffer detached");
          if (n >= TRANSFER_MIN_BYTES) bigArgs += 2; // this call's and the echo's below
          // Back again, moved by the task.
          const again = make(bytes(n, seed));
          const back = await pool.call.echoMoved(transfer(again.value));
          const backBytes = back instanceof ArrayBuffer ? new Uint8Array(back) : new Uint8Array(back.buffer);
          assert.equal(Object.prototype.toString.call(back), again.tag, `${mode}: ${name} back`);
          assert.equal(Buffer.isBuffer(back), again.isBuffer === true);
          assert.equal(sumOf(backBytes), sumOf(bytes(n, seed++)), `${mode}: ${name} of ${n} bytes, back`);
        }
        const made = await pool.call.produce([n, 42, 0]);
        assert.ok(made instanceof Uint8Array && made.length === n && made[0] === 42 && made[n - 1] === 42);
      }
      if (refs === null) return; // processes: copied, nothing to count
      // Moved arguments: only to a known worker (private lanes), only from TRANSFER_MIN_BYTES.
      assert.equal(refs.moveSeq, options.host.steal ? 0 : bigArgs, "arguments moved");
      // Moved results, in both topologies: the echoes and the produce of BIG bytes.
      assert.equal(claims, Object.keys(KINDS).length + 1, "results moved");
    } finally {
      await pool.shutdown();
    }
  });
}

test("misuse: a marker sent twice, nested, or in a cycle is refused; the pool goes on", async () => {
  for (const host of [{ steal: true }, { steal: false }]) {
    const pool = createPool({ threads: 2, host })(t);
    try {
      const marker = transfer(bytes(BIG, 3));
      const first = await pool.call.inspect(marker);
      assert.equal(first.n, BIG);
      await assert.rejects(pool.call.inspect(marker), expectTransferError, "a marker goes out once");
      await assert.rejects(pool.call.inspect({ a: transfer(bytes(BIG, 4)) }), expectTransferError, "nested");
      await assert.rejects(pool.call.inspect([transfer(bytes(SMALL, 4))]), expectTransferError, "in an array");
      // In a cycle: met first (nested), or after the cycle sends the whole value through node:v8.
      const cyclic = { m: transfer(bytes(SMALL, 5)) };
      cyclic.self = cyclic;
      await assert.rejects(pool.call.inspect(cyclic), expectTransferError, "in a cycle");
      const viaV8 = {};
      viaV8.self = viaV8;
      viaV8.m = transfer(bytes(SMALL, 5));
      await assert.rejects(pool.call.inspect(viaV8), (err) => /transfer\(\) marker/.test(err.message), "via node:v8");
      // From a task: a nested marker, or one returned twice.
      await assert.rejects(pool.call.nested(BIG), (err) => err.code === "KNT_TRANSFER");
      const ok = await pool.call.reuse(BIG);
      assert.ok(ok.length === BIG && ok[0] === 3);
      // The worker that ran it keeps the used marker: the second result is refused (it may run on the
      // other worker, whose first marker is still unused: call until one refuses).
      let refused = 0;
      for (let i = 0; i < 4 && refused === 0; i++) {
        await pool.call.reuse(BIG).then(
          (v) => assert.equal(v[0], 3),
          (err) => (assert.equal(err.code, "KNT_TRANSFER"), refused++),
        );
      }
      assert.equal(refused, 1, "a used marker is refused when a task returns it again");
      // Still usable.
      const u8 = bytes(BIG, 6);
      const sum = sumOf(u8);
      assert.equal((await pool.call.inspect(transfer(u8))).sum, sum);
    } finally {
      await pool.shutdown();
    }
  }
});

test("the caller cannot reach what it gave; a task cannot reach another call's buffer", async () => {
  // One worker, private lane: every call runs on the same thread, so whatever it kept is there.
  const pool = createPool({ threads: 1, host: { steal: false } })(t);
  try {
    const a = bytes(BIG, 7);
    const b = bytes(BIG, 8);
    const sumA = sumOf(a);
    const sumB = sumOf(b);
    const sent = pool.call.keepAndScribble(transfer(a));
    // Detached: index writes go nowhere, methods throw.
    a[0] = 0xff;
    assert.equal(a[0], undefined);
    assert.throws(() => a.fill(0xff), TypeError);
    assert.equal(a.byteLength, 0);
    assert.equal(await sent, sumA, "the task saw the bytes as they were when given up");
    // The task now scribbles over what it kept (a) while it receives b.
    assert.equal(await pool.call.keepAndScribble(transfer(b)), sumB, "b is untouched by the scribble over a");
    // A result the task keeps a (detached) view of and writes to after returning.
    const r1 = await pool.call.giveAndScribble(BIG);
    await pool.call.wait(20); // its scribble has run by now
    const r2 = await pool.call.giveAndScribble(BIG);
    await pool.call.wait(20);
    for (const r of [r1, r2]) assert.ok(r.length === BIG && r.every((x) => x === 7), "results are the host's alone");
    // And the host's result is the host's: writing to it changes nothing the worker sees next.
    r1.fill(1);
    const u8 = bytes(BIG, 9);
    const sum = sumOf(u8);
    assert.equal(await pool.call.keepAndScribble(transfer(u8)), sum);
  } finally {
    await pool.shutdown();
  }
});

test("a worker that dies holding moved arguments rejects its calls; the pool goes on", async () => {
  for (const host of [{ steal: false }, { steal: true }]) {
    const threads = host.steal ? 2 : 1;
    const pool = createPool({ threads, host, worker: { allowExit: true } })(t);
    const refs = internals(pool).sharedRefs;
    try {
      // The dying call and, behind it in the same lane, calls whose buffers went to that worker.
      const dying = pool.call.dieHolding(transfer(bytes(BIG, 10)));
      const behind = host.steal ? [] : [1, 2, 3].map((i) => pool.call.inspect(transfer(bytes(BIG, 10 + i))));
      await assert.rejects(within(dying, 30_000, "the dying call"), (err) => err instanceof WorkerExitError);
      for (const p of behind) {
        // Not started before the worker died: rejected (never re-run); a WorkerExitError.
        await within(
          p.then(
            (v) => assert.fail(`a call behind the dying one answered ${JSON.stringify(v)}`),
            (err) => assert.ok(err instanceof WorkerExitError, String(err)),
          ),
          30_000,
          "a call behind",
        );
      }
      // The replacement: moved arguments and results work, none confused with the lost ones.
      for (let i = 0; i < 4; i++) {
        const u8 = bytes(BIG, 20 + i);
        const sum = sumOf(u8);
        assert.equal((await within(pool.call.inspect(transfer(u8)), 30_000, "after")).sum, sum);
        const made = await pool.call.produce([BIG, i, 0]);
        assert.equal(made[BIG - 1], i);
      }
      for (const store of refs.moved) assert.equal(store.size, 0, "no moved buffer kept");
    } finally {
      await pool.shutdown();
    }
  }
});

test("an answer discarded after an abort leaves no moved buffer behind", async () => {
  for (const host of [{ steal: false }, { steal: true }]) {
    const pool = createPool({ threads: host.steal ? 2 : 1, host })(t);
    const refs = internals(pool).sharedRefs;
    try {
      const late = [];
      for (let i = 0; i < 8; i++) {
        const ac = new AbortController();
        const p = pool.call.produce([BIG, 1, 30], { signal: ac.signal });
        ac.abort();
        late.push(assert.rejects(p, (err) => err.name === "AbortError"));
      }
      await Promise.all(late);
      // The late answers came back (moved) and were dropped: wait past them on every worker.
      await Promise.all(Array.from({ length: 4 }, () => pool.call.wait(150)));
      const made = await pool.call.produce([BIG, 2, 0]);
      assert.equal(made[0], 2);
      for (let lane = 0; lane < refs.ports.length; lane++) {
        assert.equal(refs.moved[lane].size, 0, `lane ${lane}: nothing kept`);
        assert.equal(receiveMessageOnPort(refs.ports[lane]), undefined, `lane ${lane}: nothing left on the port`);
      }
    } finally {
      await pool.shutdown();
    }
  }
});

test("a replacement worker's moved results are not confused with its predecessor's", () => {
  // Worker seqs restart at 1 on a new worker: what the dead one moved and never published must go.
  const refs = new HostSharedRefs(1);
  const old = refs.attach(0);
  const stale = new Uint8Array(16).fill(1).buffer;
  const stale2 = new Uint8Array(16).fill(2).buffer;
  old.postMessage({ t: 1, buf: stale }, [stale]);
  old.postMessage({ t: 2, buf: stale2 }, [stale2]);
  assert.equal(new Uint8Array(refs.claim(1, 2))[0], 2, "seq 2 claimed, seq 1 read ahead and kept");
  assert.equal(refs.moved[0].size, 1);
  // The worker dies before publishing seq 1; its replacement moves its own seq 1.
  const fresh = refs.attach(0);
  const mine = new Uint8Array(16).fill(9).buffer;
  fresh.postMessage({ t: 1, buf: mine }, [mine]);
  assert.equal(new Uint8Array(refs.claim(1, 1))[0], 9, "the replacement's own buffer");
  assert.equal(refs.claim(1, 1), undefined, "claimed once");
  refs.close();
  old.close();
  fresh.close();
});

test("a replacement worker's SharedArrayBuffers are not confused with its predecessor's", () => {
  // The same for buffers by reference: read ahead from the dead worker's port, never published.
  const refs = new HostSharedRefs(1);
  const old = refs.attach(0);
  const stale = new SharedArrayBuffer(4);
  old.postMessage({ seq: 1, sab: stale });
  old.postMessage({ seq: 2, sab: new SharedArrayBuffer(8) });
  assert.equal(refs.resolve(1, 2).byteLength, 8);
  const fresh = refs.attach(0);
  const mine = new SharedArrayBuffer(12);
  fresh.postMessage({ seq: 1, sab: mine });
  assert.equal(refs.resolve(1, 1).byteLength, mine.byteLength, "the replacement's own buffer, not the stale one");
  refs.close();
  old.close();
  fresh.close();
});
