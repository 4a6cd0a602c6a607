// lib/payload/slot-writer.js: a value goes inline into a slot when it fits, else into
// the payload region; after a plain object or array that did not fit, the
// next ones are encoded once (no failed slot attempt) and still go inline
// when they fit after all. The bytes are the same either way.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { createPool } from "../index.mjs";
import * as t from "./fixtures/slot-write-tasks.mjs";
import { within } from "./helpers/wait.mjs";

const require = createRequire(import.meta.url);
const { SlotWriter } = require("../lib/payload/slot-writer.js");
const { PayloadRegion } = require("../lib/payload/region.js");
const { Encoder, decode } = require("../lib/codec/index.js");
const { NO_EXT } = require("../lib/protocol/slot.js");
const { L } = require("../lib/protocol/layout.js");

const MIB = 1024 * 1024;
const row = (i) => ({ id: i, name: `row-${i}`, price: 1.5 + i, tags: ["a", "b", i], ok: i % 2 === 0 });
const rows = (n, seed) => Array.from({ length: n }, (_, i) => row(seed + i));

/** A writer over a fresh control buffer and region, its encoder's calls counted. */
function setup(regionBytes = 4 * MIB) {
  const control = new Uint8Array(new SharedArrayBuffer(4096));
  const region = new PayloadRegion(new SharedArrayBuffer(regionBytes), true);
  const encoder = new Encoder();
  const count = { encodeInto: 0, encode: 0 };
  for (const name of ["encodeInto", "encode"]) {
    const f = encoder[name].bind(encoder);
    encoder[name] = (...a) => (count[name]++, f(...a));
  }
  const writer = new SlotWriter(encoder, region, control);
  /** Writes v at slot offset 64 and reads it back as a reader would. */
  const roundTrip = (v) => {
    const len = writer.write(v, 64);
    assert.ok(len >= 0, "written");
    const ext = writer.ext;
    const got = region.readSlot(control, 64, len, ext);
    return { len, ext, got };
  };
  return { control, region, encoder, count, writer, roundTrip };
}

test("a large object or array after another skips the slot attempt, and small ones still go inline", () => {
  const { count, roundTrip, control } = setup();
  const plain = new Encoder();
  const steps = [
    // [value, inline?, encodeInto calls, encode calls]
    [row(1), true, 1, 0],
    [rows(20, 0), false, 1, 1], // tried the slot, then the region
    [rows(20, 100), false, 0, 1], // no slot attempt
    [{ big: rows(20, 5) }, false, 0, 1], // an object after an array: as well
    [row(2), true, 0, 1], // encoded once, fits: copied into the slot
    [row(3), true, 1, 0], // the slot first again
    ["x".repeat(5000), false, 2, 0], // strings: the slot first (their size is known at once), then the region
    [rows(20, 7), false, 1, 1],
    ["y".repeat(100), true, 1, 0], // not a plain object or array: the slot first
    [[1, 2, 3], true, 0, 1],
  ];
  for (const [i, [v, inline, nInto, nEnc]] of steps.entries()) {
    count.encodeInto = 0;
    count.encode = 0;
    const { len, ext, got } = roundTrip(v);
    assert.deepEqual(got, v, `step ${i}: round trip`);
    assert.equal(ext === NO_EXT, inline, `step ${i}: inline`);
    assert.equal(count.encodeInto, nInto, `step ${i}: encodeInto calls`);
    assert.equal(count.encode, nEnc, `step ${i}: encode calls`);
    if (inline) {
      // The same bytes as encoding straight into a slot.
      const want = plain.encode(v);
      assert.ok(len <= L.inlineBytes);
      assert.deepEqual(Buffer.from(control.subarray(64, 64 + len)), Buffer.from(want), `step ${i}: bytes`);
    }
  }
});

test("a skipped slot attempt with no room answers -1 with the encoding kept, and errors stay the encoder's", () => {
  // A fixed region of 256 KiB: large values fill it.
  const { writer, region } = setup(256 * 1024);
  const big = (seed) => rows(400, seed);
  assert.ok(writer.write(big(0), 64) >= 0);
  const held = [];
  let len;
  for (let i = 1; i < 50 && (len = writer.write(big(i), 64)) >= 0; i++) held.push(writer.ext);
  assert.equal(len, -1, "the region filled up");
  assert.deepEqual(decode(region.unplaced, 0, region.unplaced.length), big(held.length + 1), "unplaced: the value");
  // Unsendable values throw the encoder's error, on the skipping path too.
  assert.throws(
    () => writer.write({ f() {} }, 64),
    (err) => err.code !== undefined && /function/.test(err.message),
  );
  assert.throws(
    () => writer.write([rows(50, 0), () => 1], 64),
    (err) => err.code !== undefined,
  );
});

test("a pool answers large and small objects in any order, both ways", async () => {
  for (const steal of [true, false]) {
    const pool = createPool({ threads: 2, host: { steal } })(t);
    try {
      const calls = [];
      for (let i = 0; i < 300; i++) {
        const n = [0, 40, 1, 60, 0, 0, 25][i % 7]; // records in the answer (0: one record alone)
        calls.push(pool.call.rows([n, i]).then((r) => [r, n, i]));
        const v = i % 3 === 0 ? rows(30, i) : row(i);
        calls.push(pool.call.echo(v).then((r) => assert.deepEqual(r, v, `echo ${i}`)));
      }
      for (const p of await within(Promise.all(calls), 30_000, "calls")) {
        if (!Array.isArray(p)) continue;
        const [r, n, i] = p;
        if (n === 0) assert.deepEqual(r, { i, seed: i, x: i / 3, tags: ["a", String(i)], on: i % 2 === 0 });
        else assert.equal(r.length, n, `answer ${i}`);
      }
    } finally {
      await pool.shutdown();
    }
  }
});
