// The payload region is read and written through fixed-length views of its
// growable SharedArrayBuffer, made again when any thread has grown it
// (PayloadRegion#bytesTo): the codec runs ~3x slower through length-tracking
// ones on Node 20 (docs/payload-path.md). These tests hold the view to
// that, and check that a region whose view is older than the buffer's
// growth still reads, writes and releases everything right.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { PayloadRegion, NO_ROOM } = require("../lib/payload/region.js");
const { Encoder, decode } = require("../lib/codec/index.js");

const MIB = 1024 * 1024;
const text = (n, seed) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + ((i * 7 + seed) % 26))).join("");
/** An object with floats (the codec's DataView) and a string, different for every i. */
const record = (i) => ({ id: i, price: 0.5 + i / 7, weight: -i * 1.25e-3, note: text(300 + (i % 50), i) });

test("the region's views are fixed-length: another thread's growth does not change them", () => {
  const sab = new SharedArrayBuffer(MIB, { maxByteLength: 16 * MIB });
  const host = new PayloadRegion(sab, true);
  const worker = new PayloadRegion(sab, false);
  const view = host.u8;
  const enc = new Encoder({ maxPayloadBytes: 8 * MIB });
  const big = text(3 * MIB, 1);
  const at = worker.tryPlace(enc, big); // the worker grows the region
  assert.notEqual(at, NO_ROOM);
  assert.ok(sab.byteLength > 3 * MIB, `the region grew (${sab.byteLength} bytes)`);
  assert.equal(view.length, MIB, "the host's view kept its length (a length-tracking view would follow)");
  // The host reads past its old view: the view is made again first.
  assert.equal(host.readSlot(null, 0, worker.placed, at), big);
  assert.ok(host.u8.length >= sab.byteLength - 4096 && host.u8 !== view, "renewed to the buffer's new length");
  assert.equal(host.arena.stats().liveBlocks, 0);
});

test("arguments carved past a reader's old view are read, kept and released right", () => {
  const sab = new SharedArrayBuffer(MIB, { maxByteLength: 16 * MIB });
  const host = new PayloadRegion(sab, true);
  const worker = new PayloadRegion(sab, false); // its view stays at 1 MiB until it reads past it
  const enc = new Encoder();
  const held = [];
  // ~2.3 MiB of carved arguments, none read yet: the host's chunks grow the region.
  for (let i = 0; i < 6000; i++) {
    const at = host.tryPlace(enc, record(i));
    assert.notEqual(at, NO_ROOM);
    held.push([at, host.placed, i]);
  }
  assert.ok(sab.byteLength > 2 * MIB, `the region grew (${sab.byteLength} bytes)`);
  const past = held.filter(([at]) => at > MIB);
  assert.ok(past.length > 500, `${past.length} arguments lie past the reader's old view`);
  assert.equal(worker.u8.length, MIB, "the reader's view is still the old one");
  // One kept for its answer (readHeld), as a worker does with an echo.
  const [keptAt, keptLen, keptI] = past.pop();
  let cleared = 0;
  assert.deepEqual(
    worker.readHeld(keptLen, keptAt, undefined, () => cleared++),
    record(keptI),
  );
  const answerAt = worker.tryPlace(enc, record(keptI)); // the answer goes into the kept sub-block
  assert.equal(answerAt, keptAt, "the answer took the kept sub-block");
  assert.equal(cleared, 1);
  for (const [at, n, i] of held) if (at !== keptAt) assert.deepEqual(worker.readSlot(null, 0, n, at), record(i));
  assert.deepEqual(host.readSlot(null, 0, worker.placed, answerAt), record(keptI));
  host.retire();
  assert.equal(host.arena.stats().liveBlocks, 0, "every chunk went back");
});

test("floats are written and read past the old end of a length-tracking view after the buffer grows", () => {
  // The codec's own DataView is fixed-length too: it must be made again when a
  // view reaches past it (a caller's length-tracking view of a buffer that grew).
  const sab = new SharedArrayBuffer(4096, { maxByteLength: MIB });
  const u8 = new Uint8Array(sab);
  const enc = new Encoder();
  const v = [1.5, -2.25e-300, 123456789.125, 2n ** 60n, new Date(1_700_000_000_123)];
  let n = enc.encodeInto(v, u8, 16, 1024);
  assert.deepEqual(decode(u8, 16, n), v);
  sab.grow(200_000);
  for (const at of [4000, 100_000, 199_000]) {
    n = enc.encodeInto(v, u8, at, 1000);
    assert.ok(n > 0, `encodeInto at ${at} wrote ${n}`);
    assert.deepEqual(decode(Uint8Array.from(u8.subarray(at, at + n)), 0, n), v, `bytes at ${at}`);
  }
  for (const at of [4000, 100_000, 199_000]) assert.deepEqual(decode(u8, at, n), v, `round trip at ${at}`);
  // The same source view read again after the buffer grew: past the DataView the last read made.
  sab.grow(400_000);
  n = enc.encodeInto(v, u8, 300_000, 1000);
  assert.deepEqual(decode(u8, 300_000, n), v, "round trip at 300000, after a second growth");
});

test("a view whose buffer was detached after the codec used it: the usual errors, not a TypeError", () => {
  const ab = new ArrayBuffer(64);
  const u8 = new Uint8Array(ab);
  const enc = new Encoder();
  const n = enc.encodeInto(1.5, u8, 0, 64);
  assert.equal(decode(u8, 0, n), 1.5);
  structuredClone(ab, { transfer: [ab] }); // detaches ab; u8 is now empty
  assert.equal(u8.length, 0);
  // The codec's cached DataView is over the detached buffer: its length must not be read from it.
  assert.equal(enc.encodeInto(1.5, u8, 0, 0), -1, "nothing fits in no room");
  assert.throws(() => decode(u8, 0, 0), RangeError);
  // And the codec goes on with other buffers.
  const other = new Uint8Array(64);
  assert.equal(decode(other, 0, enc.encodeInto(2.5, other, 0, 64)), 2.5);
});
