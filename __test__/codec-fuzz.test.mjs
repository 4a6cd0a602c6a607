// Codec fuzzing, with lib/codec/index.js used directly:
// (a) random bytes and mutations of valid encodings (bit flips, strict
//     prefixes, corrupted length fields, overwrites): `decode` returns a value
//     or throws a RangeError, never anything else, never hangs, never writes
//     to its source and never depends on bytes outside [offset, offset+length);
// (b) a round-trip property test over generated values of every kind.
// Plus the payload region's growth (decode/encode over a growable
// SharedArrayBuffer), through the codec and through a pool.
import test from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { createRequire } from "node:module";
import { createPool } from "../index.mjs";
import { echo, lengthOf } from "./fixtures/fault-tasks.mjs";
import { prng, genValue, assertSame, show } from "./fixtures/codec-values.mjs";
import { settleAll, within } from "./helpers/wait.mjs";
import { runtime } from "./fixtures/runtime.mjs";

const { Encoder, decode } = createRequire(import.meta.url)("../lib/codec/index.js");

const SEED = Number(process.env.KNT_FUZZ_SEED || 0x5eed1234);
const STALL_MS = 15_000; // no progress for this long = a hang

/** Runs the fuzz worker; fails if it stops making progress. */
function fuzz(workerData) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./fixtures/codec-fuzz-worker.mjs", import.meta.url), { workerData });
    let progress = 0;
    let timer = null;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        worker.terminate();
        reject(
          new assert.AssertionError({
            message:
              `decode hung: no progress for ${STALL_MS} ms after case ${progress} (seed ` +
              `${workerData.seed}; rerun with KNT_FUZZ_SEED)`,
          }),
        );
      }, STALL_MS);
    };
    arm();
    worker.on("message", (m) => {
      if (m.progress !== undefined) {
        progress = m.progress;
        arm();
      } else if (m.done !== undefined) {
        clearTimeout(timer);
        resolve(m.done);
        worker.terminate();
      }
    });
    worker.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    worker.on("exit", (code) => {
      clearTimeout(timer);
      if (code !== 0 && code !== 1) reject(new Error(`fuzz worker exited with ${code}`));
    });
  });
}

test(
  "decode of 20,000 random buffers and 20,000 mutated encodings: a value or a RangeError, " +
    "bounded, inside its window",
  async (t) => {
    const result = await fuzz({ seed: SEED, random: 20_000, mutations: 20_000 });
    const { counts, maxMs, maxCase, failures } = result;
    t.diagnostic(`seed ${SEED}: ${JSON.stringify(counts)}, slowest case ${maxMs.toFixed(1)} ms of CPU`);
    const report = failures
      .map((f) => `#${f.index} ${f.kind} len ${f.len} off ${f.off}: ${f.problems.join("; ")}\n    ${f.hex}`)
      .join("\n");
    assert.equal(failures.length, 0, `seed ${SEED}:\n${report}`);
    assert.equal(counts.cases, 40_000);
    assert.equal(counts.values + counts.rangeErrors, counts.cases, JSON.stringify(counts));
    assert.ok(counts.values > 100 && counts.rangeErrors > 1000, `both outcomes exercised: ${JSON.stringify(counts)}`);
    assert.ok(
      counts.truncations > 3000 && counts.bitFlips > 3000 && counts.lengthFields > 3000,
      JSON.stringify(counts),
    );
    // Bounded per case, in CPU time of the decode alone (the fixture says
    // why), with a wide margin: the bound is there to catch a decoder that
    // loops or blows up, not to time it. Node: the slowest case of this seed
    // takes 9 ms. Bun: its node:v8 deserialize is slow to reject a corrupt
    // record; the slowest case is a 50-byte v8 record with one bit flipped,
    // rejected by Bun in 0.2-0.9 s of CPU from one run to the next (Bun
    // 1.4.4, 2026-12-04). It was 3 s when the printing of each value was
    // timed too, and the slowest case took 0.8-1.7 s: too near.
    const boundMs = runtime === "bun" ? 10_000 : 1000;
    assert.ok(maxMs < boundMs, `slowest case #${maxCase} took ${maxMs.toFixed(1)} ms of CPU`);
  },
);

test(
  "round trip of generated values of every kind (encode and encodeInto, inline and large, shared " +
    "memory at an offset)",
  (t) => {
    const r = prng(SEED ^ 0xabcdef);
    const encoder = new Encoder();
    // Prime the encoder past the 16-object bug (tested on its own below) so
    // that this test checks everything else.
    encoder.encode(Array.from({ length: 20 }, () => ({})));
    const slots = new Uint8Array(new SharedArrayBuffer(64 * 1024));
    const deadline = performance.now() + 4_000;
    const kinds = new Set();
    let cases = 0;
    let inline = 0;
    while (cases < 200_000 && (cases < 2_000 || performance.now() < deadline)) {
      const { v, e } = genValue(r, 0, 1 + r.int(12));
      kinds.add(Object.prototype.toString.call(v) + (Buffer.isBuffer(v) ? "Buffer" : ""));
      const what = () => `case ${cases} (seed ${SEED}): ${show(v)}`;
      // As the pool does: into a slot's 512 inline bytes at an offset, else encode() + copy.
      const at = 64 + 16 * r.int(100);
      let len = encoder.encodeInto(v, slots, at, 512);
      let decoded;
      if (len >= 0) {
        inline++;
        decoded = decode(slots, at, len);
      } else {
        const bytes = encoder.encode(v);
        len = bytes.length;
        const off = 1 + r.int(32);
        const copy = new Uint8Array(new SharedArrayBuffer(off + len + 16));
        copy.set(bytes, off);
        decoded = decode(copy, off, len);
      }
      try {
        assertSame(decoded, e);
      } catch (err) {
        err.message = `${what()}\n${err.message}`;
        throw err;
      }
      // encode() gives the same bytes as the inline path (when both apply).
      if (len <= 512) {
        const again = encoder.encode(v);
        assert.equal(again.length, len, what());
      }
      cases++;
    }
    t.diagnostic(`seed ${SEED}: ${cases} values round-tripped (${inline} inline), ${kinds.size} kinds`);
    assert.ok(cases >= 2_000, `${cases} cases`);
    assert.ok(inline > cases / 4 && inline < cases, `inline ${inline} of ${cases}`);
    for (const tag of [
      "[object Undefined]",
      "[object Null]",
      "[object Number]",
      "[object BigInt]",
      "[object String]",
      "[object Array]",
      "[object Object]",
      "[object Date]",
      "[object Error]",
      "[object ArrayBuffer]",
      "[object DataView]",
      "[object Uint8Array]Buffer",
      "[object Float64Array]",
      "[object BigInt64Array]",
      "[object Map]",
      "[object Set]",
      "[object RegExp]",
      "[object Boolean]",
    ]) {
      assert.ok(kinds.has(tag), `generated ${tag} (kinds: ${[...kinds].join(", ")})`);
    }
  },
);

test("every value kind round-trips at its boundaries (hand-picked)", () => {
  const encoder = new Encoder();
  const values = [
    -0,
    NaN,
    Infinity,
    -Infinity,
    2 ** 31 - 1,
    -(2 ** 31),
    2 ** 31,
    2n ** 63n - 1n,
    -(2n ** 63n),
    2n ** 63n,
    -(2n ** 63n) - 1n,
    0n,
    "",
    "\u00ff".repeat(255),
    "\u00ff".repeat(256),
    "\u0100",
    "\ud800",
    "x".repeat(12),
    "x".repeat(13),
    "\u1234".repeat(16),
    "\u1234".repeat(17),
    [],
    [1],
    [1, 2],
    [1, 2, 3],
    [1, 2, 3, 4],
    [1, 2, 3, 4, 5],
    {},
    Object.create(null),
    JSON.parse('{"__proto__": 1, "a": 2}'),
    Object.assign(Object.create(null), { ["__proto__"]: [1] }),
    Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`k${i}`, i])), // shape-cache path
    Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`k${i}`, -i])), // the same shape again
    new Date(NaN),
    new Date(8.64e15),
    new Uint8Array(0),
    Buffer.from("buf"),
    new DataView(new ArrayBuffer(3)),
    new Float32Array([NaN, -0]),
    new BigUint64Array([2n ** 64n - 1n]),
    new Uint8ClampedArray([255]),
  ];
  for (const v of values) {
    const bytes = encoder.encode(v);
    const copy = Uint8Array.from(bytes);
    assertSame(decode(copy, 0, copy.length), v, show(v));
  }
});

// BUG (lib/codec/index.js, Encoder#_clearSeen): identity tracking keeps the first
// SEEN_LINEAR (16) objects in an array and creates `seenS` (a Set) only when
// a 17th is tracked. `_clearSeen` calls `this.seenS.clear()` whenever
// `seenN >= 16`, so a value with exactly 16 objects (e.g. an array of 15
// plain objects) on an Encoder that never saw 17 throws "TypeError: Cannot
// read properties of null (reading 'clear')" out of encode()/encodeInto(),
// and leaves `seenN` at 16 with the 16 objects still referenced, so the next
// encode on that Encoder also misbehaves (same objects: rejected again).
// Through a pool: the first call (or result) holding exactly 16 objects
// rejects with that TypeError (no KNT code), and so does the next one.
// Fix: `if (n >= SEEN_LINEAR && this.seenS !== null) this.seenS.clear();`
// (or create the Set when seenN reaches SEEN_LINEAR).
test("a fresh Encoder encodes values holding any number of objects (exactly 16 included)", () => {
  const failed = [];
  for (let n = 0; n <= 40; n++) {
    const value = Array.from({ length: n }, (_, i) => ({ i })); // n + 1 objects
    for (const how of ["encode", "encodeInto"]) {
      const encoder = new Encoder();
      try {
        let decoded;
        if (how === "encode") {
          const bytes = encoder.encode(value);
          decoded = decode(Uint8Array.from(bytes), 0, bytes.length);
        } else {
          const target = new Uint8Array(4096);
          const len = encoder.encodeInto(value, target, 8, 4000);
          decoded = decode(target, 8, len);
        }
        assertSame(decoded, value);
        // The encoder is still fine afterwards.
        const again = encoder.encode([{ again: true }]);
        assertSame(decode(Uint8Array.from(again), 0, again.length), [{ again: true }]);
      } catch (err) {
        failed.push(`${how}, ${n + 1} objects: ${err.name}: ${err.message.split("\n")[0]}`);
      }
    }
  }
  assert.deepEqual(failed, []);
});

test("through a pool: calls and results holding exactly 16 objects succeed", async () => {
  const pool = createPool({ threads: 1 })({ echo, lengthOf });
  try {
    const sixteen = Array.from({ length: 15 }, (_, i) => ({ i })); // the array + 15
    const results = await settleAll(
      [pool.call.echo(sixteen), pool.call.echo(sixteen), pool.call.lengthOf(sixteen)],
      20_000,
      "16-object calls",
    );
    assert.deepEqual(
      results.map((r) => r.status),
      ["fulfilled", "fulfilled", "fulfilled"],
      results.map((r) => r.reason && r.reason.message).join("; "),
    );
    assertSame(results[0].value, sixteen);
    assert.equal(results[2].value, 15);
  } finally {
    await within(pool.shutdown(), 20_000, "shutdown");
  }
});

// BUG (lib/codec/index.js, decode's `sourceBuffer()` cache): decode caches a Node
// Buffer over the source's ArrayBuffer (`dNb = Buffer.from(dBufKey)`), keyed
// on the view and the buffer. `Buffer.from(sab)` has the buffer's length at
// that moment and does not track a growable SharedArrayBuffer. After the
// payload region grows, a string longer than the short-string paths
// (Latin-1 > 12 chars, UTF-16 > 16 units) that lies past the old length is
// decoded with `latin1Slice`/`ucs2Slice` on the stale Buffer and throws
// RangeError ERR_OUT_OF_RANGE "Index out of range": a valid payload fails.
// Fix: in sourceBuffer(), recreate the Buffer when `dNb.length < dBo + dEnd`
// (or key the cache on `buf.byteLength` too).
test("decode over a growable SharedArrayBuffer still works after the buffer grows", () => {
  const sab = new SharedArrayBuffer(64 * 1024, { maxByteLength: 1024 * 1024 });
  const u8 = new Uint8Array(sab); // length-tracking, like PayloadRegion's view
  const encoder = new Encoder();
  const latin1 = "x".repeat(100);
  const utf16 = "\u1234\ud800".repeat(20);
  const a = encoder.encode(latin1);
  u8.set(a, 100);
  assert.equal(decode(u8, 100, a.length), latin1); // caches a Buffer of 64 KiB
  sab.grow(600_000);
  for (const [s, at] of [
    [latin1, 300_000],
    [utf16, 500_000],
    [latin1, 65_530],
  ]) {
    const bytes = Uint8Array.from(encoder.encode(s));
    u8.set(bytes, at);
    let got;
    try {
      got = decode(u8, at, bytes.length);
    } catch (err) {
      assert.fail(`decode at ${at} after growth threw ${err.name} ${err.code}: ${err.message}`);
    }
    assert.equal(got, s);
  }
});

// BUG (lib/codec/index.js, Encoder#_nodeBuffer): the same stale cached Buffer on
// the encoding side. encodeInto() into a length-tracking view of a growable
// SharedArrayBuffer that has grown writes long strings with latin1Write /
// ucs2Write on a Buffer of the old length: a string that straddles the old
// end is silently truncated (encodeInto returns the full length, the bytes
// past the old end stay zero: corrupt data), one past it throws a
// KNT_VALUE_UNSERIALIZABLE TypeError. The pool encodes only into the fixed-size control
// region today, so this is latent. Fix: as for decode, recreate `this.nb`
// when it is shorter than `this.bo + this.end`.
test("encodeInto into a growable SharedArrayBuffer after it grows writes every byte", () => {
  const sab = new SharedArrayBuffer(1000, { maxByteLength: 1 << 20 });
  const u8 = new Uint8Array(sab);
  const encoder = new Encoder();
  const s = "y".repeat(100);
  let n = encoder.encodeInto(s, u8, 10, 200);
  assert.equal(decode(Uint8Array.from(u8), 10, n), s);
  sab.grow(5000);
  for (const at of [950, 3000]) {
    try {
      n = encoder.encodeInto(s, u8, at, 200);
    } catch (err) {
      assert.fail(`encodeInto at ${at} after growth threw ${err.name} ${err.code}: ${err.message}`);
    }
    const got = decode(Uint8Array.from(u8), at, n);
    assert.equal(got, s, `encodeInto at ${at} wrote ${JSON.stringify(got.slice(0, 60))}...`);
  }
});

// The codec's DataView over a buffer is fixed-length (lib/payload/region.js says
// why): through the same length-tracking view, a number read or written past
// the length the buffer had when the DataView was made must still work.
test("numbers through the same length-tracking view after its buffer grows", () => {
  const sab = new SharedArrayBuffer(1000, { maxByteLength: 1 << 20 });
  const u8 = new Uint8Array(sab);
  const encoder = new Encoder();
  const value = { f: 1.5, big: 2n ** 70n, d: new Date(86_400_000), n: -0 };
  let n = encoder.encodeInto(value, u8, 16, 900);
  assert.deepEqual(decode(u8, 16, n), value);
  sab.grow(200_000);
  for (const at of [980, 100_000]) {
    n = encoder.encodeInto(value, u8, at, 900);
    assert.ok(n > 0, `encodeInto at ${at} fits`);
    assert.deepEqual(decode(u8, at, n), value, `decoded at ${at}`);
    assert.deepEqual(decode(Uint8Array.from(u8), at, n), value, `the bytes at ${at} themselves`);
  }
});

// The same decode bug through a pool: once the payload region has grown
// while a worker's (or the host's) last decodes were all from the payload
// region, valid large calls reject with "Index out of range".
test("large calls keep working after the pool's payload region grows", async () => {
  const pool = createPool({ threads: 1, payload: { payloadInitialBytes: 1024 * 1024 } })({ echo, lengthOf });
  try {
    const big = (c) => c.repeat(600_000);
    assert.equal(await within(pool.call.lengthOf(big("a")), 20_000, "first large call"), 600_000);
    const results = await settleAll(
      ["b", "c", "d", "e", "f", "g"].map((c) => pool.call.echo(big(c))),
      20_000,
      "large calls",
    );
    results.forEach((r, i) => {
      assert.equal(r.status, "fulfilled", `large call ${i}: ${r.reason && r.reason.message}`);
      assert.equal(r.value, big("bcdefg"[i]));
    });
  } finally {
    await within(pool.shutdown(), 20_000, "shutdown");
  }
});
