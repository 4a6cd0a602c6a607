// The payload path: every kind of value at every size class crosses whole,
// both ways, in both topologies, across the inline/region boundary and
// through the region-full wait; large strings and binary values are
// encoded straight into their block of the payload region (one copy).
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { createPool } from "../index.mjs";
import * as t from "./fixtures/room-tasks.mjs";
import { within } from "./helpers/wait.mjs";
import { fillBytes } from "./helpers/prng.mjs";

const require = createRequire(import.meta.url);
const { Encoder, decode } = require("../lib/codec/index.js");
const { PayloadRegion, NO_ROOM } = require("../lib/payload/region.js");
const L = require("../lib/native/index.js").layout();

const MIB = 1024 * 1024;
const SIZES = [64, 1024, 16 * 1024, 64 * 1024, MIB, 4 * MIB];

const bytes = (n, seed) => fillBytes(new Uint8Array(n), seed * 2654435761);
const ascii = (n, seed) => {
  const unit = Array.from({ length: 97 }, (_, i) => String.fromCharCode(33 + ((i * 7 + seed) % 90))).join("");
  return unit.repeat(Math.ceil(n / 97)).slice(0, n);
};

/** Values of about `size` bytes each (encoded), of every kind the fast path covers. */
function valuesOf(size, seed) {
  const b = bytes(size, seed);
  const obj = { id: seed, rows: [] };
  // ~48 bytes of JSON per row
  for (let i = 0; i < Math.max(1, size / 48); i++) obj.rows.push({ i, name: `row ${i}`, ok: true, x: 1.5 });
  return {
    ascii: ascii(size, seed),
    latin1: "é".repeat(size),
    utf16: "€".repeat(size / 2),
    surrogate: "\ud83d\ude00".repeat(size / 4) + "\ud800", // a lone surrogate at the end stays
    Uint8Array: b,
    Buffer: Buffer.from(b),
    subarray: b.subarray(1, size - 1),
    Int32Array: new Int32Array(b.buffer.slice(0, size & ~7)),
    Float64Array: new Float64Array(b.buffer.slice(0, size & ~7)),
    ArrayBuffer: b.buffer.slice(0),
    DataView: new DataView(b.buffer.slice(0)),
    object: obj,
    array: [ascii(size / 2, seed), b.slice(0, size / 2)],
  };
}

function assertSame(got, want, what) {
  if (want instanceof ArrayBuffer || ArrayBuffer.isView(want)) {
    assert.equal(Object.prototype.toString.call(got), Object.prototype.toString.call(want), `${what}: type`);
    assert.equal(got.constructor, want.constructor, `${what}: constructor`);
    const u = (v) =>
      v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    assert.ok(Buffer.from(u(got)).equals(Buffer.from(u(want))), `${what}: bytes differ`);
    const buf = got instanceof ArrayBuffer ? got : got.buffer;
    assert.ok(!(buf instanceof SharedArrayBuffer), `${what}: a copy, not shared memory`);
    return;
  }
  assert.deepEqual(got, want, what);
}

test("Encoder#exactSize is the size encode() produces, for every value it answers for", () => {
  const enc = new Encoder({ maxPayloadBytes: 16 * MIB });
  for (const size of [256, 512, 513, 1024, 64 * 1024]) {
    for (const [kind, v] of Object.entries(valuesOf(size, 3))) {
      const exact = enc.exactSize(v);
      const n = enc.encode(v).length;
      const unknown =
        kind === "object" || kind === "array" || kind === "DataView" || (typeof v === "string" && v.length < 256);
      if (unknown) assert.equal(exact, -1, `${kind} ${size}`);
      else assert.equal(exact, n, `${kind} ${size}: exactSize ${exact}, encode ${n}`);
    }
  }
  // Too small to be worth it, or nothing known up front: -1.
  for (const v of ["x".repeat(255), new Uint8Array(0), 1, null, undefined, { a: 1 }, new Map()])
    assert.equal(enc.exactSize(v), -1);
  // A view over shared memory goes by reference when the encoder has a hook: not by value.
  const hooked = new Encoder({ shared: { ref: () => [1, 1], pending: [], commit() {}, abort() {} } });
  assert.equal(hooked.exactSize(new Uint8Array(new SharedArrayBuffer(4096))), -1);
  assert.equal(enc.exactSize(new Uint8Array(new SharedArrayBuffer(4096))), 4096 + 8);
});

test("tryPlace encodes a large string or binary value straight into its block (no scratch encode)", () => {
  const region = new PayloadRegion(new SharedArrayBuffer(MIB, { maxByteLength: 8 * MIB }), true);
  const enc = new Encoder({ maxPayloadBytes: 4 * MIB });
  const ref = new Encoder({ maxPayloadBytes: 4 * MIB });
  let scratchEncodes = 0;
  const encode = enc.encode;
  enc.encode = function (v) {
    scratchEncodes++;
    return encode.call(this, v);
  };
  for (const size of [1024, 64 * 1024, MIB]) {
    for (const [kind, v] of Object.entries(valuesOf(size, 5))) {
      const before = scratchEncodes;
      const at = region.tryPlace(enc, v);
      assert.ok(at > 0, `${kind} ${size}`);
      const want = ref.encode(v);
      assert.equal(region.placed, want.length, `${kind} ${size}: byte count`);
      assert.ok(
        // A small value's EXT names a sub-block of the host's chunk: its low bit set.
        Buffer.from(region.u8.subarray(at & ~1, (at & ~1) + want.length)).equals(Buffer.from(want)),
        `${kind} ${size}: bytes`,
      );
      const direct =
        kind !== "object" && kind !== "array" && kind !== "DataView" && !(typeof v === "string" && v.length < 256);
      assert.equal(scratchEncodes - before, direct ? 0 : 1, `${kind} ${size}: encodes into the scratch buffer`);
      assertSame(region.readSlot(null, 0, region.placed, at), v, `${kind} ${size} decoded`);
    }
  }
  // Only the host's chunk is left, until the host gives it back.
  assert.equal(region.arena.stats().liveBlocks, 1, "readSlot freed every block but the chunk");
  assert.equal(region.retire(), true, "the chunk is freed once its writer retires it");
  assert.equal(region.arena.stats().liveBlocks, 0, "readSlot freed every block");
});

test("tryPlace with no room: NO_ROOM, the encoding kept in `unplaced`, no block held", () => {
  const region = new PayloadRegion(new SharedArrayBuffer(256 * 1024), true); // fixed: never grows
  const enc = new Encoder();
  const big = bytes(150 * 1024, 9);
  const first = region.tryPlace(enc, big);
  assert.ok(first > 0);
  for (const v of [bytes(150 * 1024, 10), ascii(150 * 1024, 2), { s: ascii(150 * 1024, 3) }]) {
    assert.equal(region.tryPlace(enc, v), NO_ROOM);
    assert.ok(Buffer.from(region.unplaced).equals(Buffer.from(new Encoder().encode(v))), "unplaced holds the encoding");
    assert.equal(region.arena.stats().liveBlocks, 1, "only the first block is live");
  }
  region.free(first);
  const at = region.tryWrite(region.unplaced.slice());
  assert.ok(at > 0, "once room is freed the kept encoding goes in");
});

test("tryPlace: a value whose size changes between two looks still crosses whole, and no block is lost", () => {
  const region = new PayloadRegion(new SharedArrayBuffer(MIB, { maxByteLength: 4 * MIB }), true);
  const enc = new Encoder();
  let looks = 0;
  class Shifty extends Uint8Array {
    get byteLength() {
      return ++looks === 1 ? 4096 : super.byteLength; // the first look lies
    }
  }
  const v = new Shifty(bytes(8192, 4));
  const at = region.tryPlace(enc, v);
  assert.ok(at > 0);
  const got = region.readSlot(null, 0, region.placed, at);
  assert.equal(got.length, 8192);
  assert.ok(Buffer.from(got).equals(Buffer.from(bytes(8192, 4))));
  region.retire(); // the first look carved a sub-block (released): the host's chunk
  assert.equal(region.arena.stats().liveBlocks, 0);
});

test("a small Uint8Array decodes into a plain Uint8Array of its own, from any source", () => {
  const enc = new Encoder();
  for (const n of [0, 1, 63, 64, 65, 200]) {
    const v = bytes(n, n + 1);
    const b = enc.encode(v);
    const shared = new Uint8Array(new SharedArrayBuffer(b.length + 8));
    shared.set(b, 8);
    for (const src of [shared, Buffer.from(shared.buffer)]) {
      const got = decode(src, 8, b.length);
      assert.equal(Object.getPrototypeOf(got), Uint8Array.prototype, `n=${n}`);
      assert.ok(!(got.buffer instanceof SharedArrayBuffer), `n=${n}: not a view of the source`);
      assert.deepEqual(Array.from(got), Array.from(v));
      if (n > 0) {
        got[0] ^= 1; // writing to the result leaves the source alone
        assert.equal(shared[8 + 8], v[0]); // header 7 bytes + 1 of padding
      }
    }
  }
});

const modes = [
  ["work stealing", { threads: 2 }],
  ["private lanes", { threads: 2, host: { steal: false } }],
];
for (const [name, options] of modes) {
  test(`${name}: every kind of value at 64 B .. 4 MiB, and around the inline limit, comes back whole`, async () => {
    const pool = createPool({ ...options, payload: { maxPayloadBytes: 8 * MIB } })(t);
    try {
      const cases = [];
      for (const size of SIZES)
        for (const [kind, v] of Object.entries(valuesOf(size, size % 251))) cases.push([`${kind} ${size}`, v]);
      // Encoded sizes L.inlineBytes - 1, L.inlineBytes, L.inlineBytes + 1:
      // a string's header is 5 bytes, a Uint8Array's 6.
      for (const d of [-1, 0, 1]) {
        cases.push([`string of ${L.inlineBytes + d} encoded bytes`, ascii(L.inlineBytes + d - 5, d + 2)]);
        cases.push([`Uint8Array of ${L.inlineBytes + d} encoded bytes`, bytes(L.inlineBytes + d - 6, d + 5)]);
      }
      const results = await within(Promise.all(cases.map(([, v]) => pool.call.echo(v))), 120_000, "the echoes");
      results.forEach((r, i) => assertSame(r, cases[i][1], `${name}: ${cases[i][0]}`));
      // The same one at a time (each on an idle pool: its own placement and answer).
      for (const [what, v] of cases.filter((_, i) => i % 3 === 0))
        assertSame(await pool.call.echo(v), v, `${name} sequential: ${what}`);
    } finally {
      await pool.shutdown();
    }
  });

  test(`${name}: 1 MiB binary values through a 4 MiB region wait for room and all arrive intact`, async () => {
    const pool = createPool({
      ...options,
      payload: { payloadMaxByteLength: 4 * MIB, payloadInitialBytes: MIB, maxPayloadBytes: 2 * MIB },
    })(t);
    try {
      const args = Array.from({ length: 24 }, (_, i) => (i % 3 === 2 ? ascii(MIB, i) : bytes(MIB, i + 1)));
      const results = await within(
        Promise.allSettled(args.map((a, i) => (i % 2 === 0 ? pool.call.echo(a) : pool.call.echoLater([a, i % 4])))),
        120_000,
        "the calls",
      );
      const rejected = results.filter((r) => r.status === "rejected");
      assert.equal(
        rejected.length,
        0,
        `rejected: ${rejected.length}, first: ${rejected[0] && rejected[0].reason.message}`,
      );
      results.forEach((r, i) => assertSame(r.value, args[i], `call ${i}`));
      assert.equal(await pool.call.quick(1), 2, "the pool is still usable");
    } finally {
      await pool.shutdown();
    }
  });
}

test("binary bytes start 8-aligned wherever the record sits (aligned copies to and from shared memory)", () => {
  const enc = new Encoder();
  const target = new Uint8Array(new SharedArrayBuffer(8192));
  for (let at = 0; at < 16; at++) {
    for (const v of [bytes(100, at + 1), new Float64Array(8).fill(at), Buffer.from(bytes(33, at + 2))]) {
      const n = enc.encodeInto(v, target, at, 4096);
      assert.ok(n > 0);
      assert.equal(target[at], 0x0f);
      const pad = target[at + 6];
      assert.ok(pad <= 7);
      assert.equal((at + 7 + pad) % 8, 0, `record at ${at}: bytes at ${at + 7 + pad}`);
      assertSame(decode(target, at, n), v, `record at ${at}`);
    }
    // nested, after values of odd sizes
    const nested = ["abc", true, bytes(40, at + 3)];
    const n = enc.encodeInto(nested, target, at, 4096);
    const got = decode(target, at, n);
    assertSame(got[2], nested[2], `nested at ${at}`);
  }
  const region = new PayloadRegion(new SharedArrayBuffer(MIB), true);
  const at = region.tryPlace(enc, bytes(64 * 1024, 7));
  assert.equal((at + 7 + region.u8[at + 6]) % 8, 0, "in a payload block too");
  region.free(at);
});
