// Small arguments are carved out of the host's chunk (lib/payload/chunks.js):
// no native allocator call per call, misuse of a carved offset refused, and
// the room a chunk holds given back whenever room is short.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { createPool } from "../index.mjs";
import * as t from "./fixtures/room-tasks.mjs";
import * as c from "./fixtures/chunk-tasks.mjs";
import { within } from "./helpers/wait.mjs";

const require = createRequire(import.meta.url);
const { PayloadRegion, NO_ROOM } = require("../lib/payload/region.js");
const { Encoder } = require("../lib/codec/index.js");

const MIB = 1024 * 1024;

/** The host's region and a worker's, over one buffer, with the host's allocator calls counted. */
function pair(sab) {
  const host = new PayloadRegion(sab, true);
  const worker = new PayloadRegion(sab, false);
  const count = { alloc: 0, free: 0 };
  for (const name of ["alloc", "free"]) {
    const f = host.arena[name].bind(host.arena);
    host.arena[name] = (...a) => (count[name]++, f(...a));
    const g = worker.arena[name].bind(worker.arena);
    worker.arena[name] = (...a) => (count[name]++, g(...a));
  }
  return { host, worker, count };
}

const text = (n, seed) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + ((i * 7 + seed) % 26))).join("");

test("1,000 small arguments cost a few allocator calls, not two each", () => {
  const { host, worker, count } = pair(new SharedArrayBuffer(4 * MIB, { maxByteLength: 16 * MIB }));
  const enc = new Encoder();
  const held = [];
  for (let i = 0; i < 1000; i++) {
    const v = text(1024, i);
    const at = host.tryPlace(enc, v);
    assert.notEqual(at, NO_ROOM);
    held.push([at, host.placed, v]);
    // Read in bursts of 32, as a worker starts calls.
    if (held.length === 32 || i === 999) {
      for (const [ext, n, want] of held.splice(0)) assert.equal(worker.readSlot(null, 0, n, ext), want);
    }
  }
  // 1 KiB values, 64 KiB chunks: ~17 chunks, each one alloc and one free.
  assert.ok(count.alloc <= 40, `${count.alloc} allocator allocs for 1,000 arguments`);
  assert.ok(count.free <= 40, `${count.free} allocator frees for 1,000 arguments`);
  host.retire();
  assert.equal(host.arena.stats().liveBlocks, 0, "every chunk went back");
});

test("a carved offset released twice, or forged, is refused and no other value changes", () => {
  const { host, worker } = pair(new SharedArrayBuffer(4 * MIB));
  const enc = new Encoder();
  const a = host.tryPlace(enc, text(2000, 1));
  const na = host.placed;
  const b = host.tryPlace(enc, text(2000, 2));
  const nb = host.placed;
  assert.equal(a & 1, 1, "a small argument is carved");
  assert.equal(worker.readSlot(null, 0, na, a), text(2000, 1));
  assert.throws(() => worker.readSlot(null, 0, na, a), { code: "KNT_REGION_CORRUPT" }, "a second release");
  for (const forged of [b + 8, b + 16, b - 8, 65, 4 * MIB - 7]) {
    assert.throws(() => worker.free(forged), { code: "KNT_REGION_CORRUPT" }, `forged offset ${forged}`);
  }
  // b is intact, and its chunk is still counted right: b's release, then the
  // host's retire, free it.
  assert.equal(worker.readSlot(null, 0, nb, b), text(2000, 2));
  assert.equal(host.arena.stats().liveBlocks, 1);
  assert.equal(host.retire(), true);
  assert.equal(host.arena.stats().liveBlocks, 0);
});

test("the host gives its chunk back before it waits for room", () => {
  // A fixed 2 MiB region: a payload as large as the region can hold fits only once the chunk is gone.
  const { host, worker } = pair(new SharedArrayBuffer(2 * MIB));
  const enc = new Encoder({ maxPayloadBytes: 4 * MIB });
  const small = host.tryPlace(enc, text(1024, 3));
  worker.readSlot(null, 0, host.placed, small);
  assert.equal(host.arena.stats().liveBlocks, 1, "the chunk, held by the host");
  const big = new Uint8Array(host.capacity - 32).fill(7);
  const at = host.tryPlace(enc, big);
  assert.notEqual(at, NO_ROOM, "the chunk was retired to make room");
  const got = worker.readSlot(null, 0, host.placed, at);
  assert.equal(got.length, big.length);
  assert.equal(host.arena.stats().liveBlocks, 0);
});

test("a worker's answer goes into its carved argument when it fits: no allocator call", () => {
  const { host, worker, count } = pair(new SharedArrayBuffer(4 * MIB));
  const enc = new Encoder();
  const wenc = new Encoder();
  let clears = 0;
  for (let i = 0; i < 200; i++) {
    const v = text(1500, i);
    const ext = host.tryPlace(enc, v);
    const n = host.placed;
    const arg = worker.readHeld(n, ext, null, () => clears++);
    assert.equal(arg, v);
    const answer = arg.toUpperCase(); // the same size
    const back = worker.tryPlace(wenc, answer);
    assert.equal(back, ext, "the answer took the argument's sub-block");
    assert.equal(host.readSlot(null, 0, worker.placed, back), answer);
  }
  assert.equal(clears, 200, "EXT cleared before each rewrite");
  assert.ok(count.alloc <= 10 && count.free <= 10, `${count.alloc} allocs, ${count.free} frees for 200 calls`);
  // An answer too large for the sub-block: released (EXT cleared first), a block of its own.
  const ext = host.tryPlace(enc, text(1024, 1));
  worker.readHeld(host.placed, ext, null, () => clears++);
  const back = worker.tryPlace(wenc, text(4096, 2));
  assert.notEqual(back, ext);
  assert.equal(clears, 201);
  assert.equal(host.readSlot(null, 0, worker.placed, back), text(4096, 2));
  host.retire();
  assert.equal(host.arena.stats().liveBlocks, 0, "nothing kept, nothing lost");
});

const modes = [
  ["work stealing", { threads: 2 }],
  ["private lanes", { threads: 1 }],
];
for (const [name, options] of modes) {
  test(`${name}: a worker's answer that needs the room the host's chunk holds arrives`, async () => {
    const size = 2 * MIB;
    const payload = { mode: "fixed", payloadMaxByteLength: size, maxPayloadBytes: size };
    const pool = createPool({ ...options, payload })(t);
    try {
      // The host now holds a chunk (its small arguments were carved from it).
      for (let i = 0; i < 5; i++) assert.equal(await pool.call.echo(text(1024, i)), text(1024, i));
      // An answer of (almost) the whole region: the worker waits for room
      // until the host, rung, gives its chunk back.
      const n = size - 64 - 16 - 32;
      const got = await within(pool.call.produce(["z", n]), 60_000, "the large answer");
      assert.equal(got.length, n);
      assert.equal(await pool.call.echo(text(1024, 9)), text(1024, 9), "the pool is still usable");
    } finally {
      await pool.shutdown();
    }
  });
}

for (const [name, options] of modes) {
  test(`${name}: workers that die holding a carved argument corrupt no other call and lose no room`, async () => {
    const size = 2 * MIB;
    const payload = { mode: "fixed", payloadMaxByteLength: size, maxPayloadBytes: size };
    const pool = createPool({ ...options, payload, worker: { allowExit: true } })(c);
    try {
      const args = Array.from({ length: 300 }, (_, i) => text(1024 + (i % 7) * 8, i));
      const calls = args.map((a, i) => {
        if (i % 60 === 30) return pool.call.exitHolding(a);
        if (i % 60 === 45) return pool.call.throwHolding(a);
        return i % 3 === 0 ? pool.call.grow(a) : pool.call.echo(a);
      });
      const results = await within(Promise.allSettled(calls), 120_000, "the calls");
      results.forEach((r, i) => {
        if (i % 60 === 30) assert.equal(r.status, "rejected", `call ${i} ended its worker`);
        else if (i % 60 === 45) assert.match(r.reason.message, /no: \d+|exited with code 7/);
        else if (r.status === "fulfilled") {
          assert.equal(r.value, i % 3 === 0 ? args[i] + args[i] : args[i], `call ${i}`);
        }
        // A call its dying worker held rejects with why; none answers wrong.
        else assert.match(r.reason.message, /exited with code 7/, `call ${i}`);
      });
      // Every chunk went back: an answer as large as the region can hold arrives.
      const n = size - 64 - 16 - 32;
      const got = await within(pool.call.produce(["y", n]), 60_000, "the large answer");
      assert.equal(got.length, n);
    } finally {
      await pool.shutdown();
    }
  });
}

test("a chunk count overwritten in shared memory does not end the host when the chunk goes back", async () => {
  const pool = createPool({ threads: 1 })(t);
  try {
    const internal = pool[Symbol.for("knitting-native.pool")];
    const s = text(1000, 3);
    assert.equal(await pool.call.echo(s), s);
    const chunks = internal.payload.chunks;
    assert.ok(chunks.chunk > 0, "the host carves small arguments from a chunk");
    // What task code could write into the shared region: the chunk's count.
    Atomics.store(chunks.i32, chunks.chunk >> 2, 0);
    // A drain gives the chunk back when a worker waits for room and a call
    // is in a slot (host/slots.js drainPass): one call is, for 300 ms.
    const slow = pool.call.block(300);
    internal.payload.hasWaiters = () => true;
    assert.doesNotThrow(() => internal.drainPass());
    assert.equal(chunks.chunk, 0, "the corrupt chunk is abandoned");
    delete internal.payload.hasWaiters;
    assert.equal(await slow, "slept");
    // The pool goes on: small arguments come from a new chunk.
    assert.equal(await pool.call.echo(s), s);
    assert.equal(await pool.call.quick(1), 2);
  } finally {
    await pool.shutdown();
  }
});
