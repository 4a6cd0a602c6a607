// Long strings decoded as external strings (lib/codec/long-string.js,
// src/external_string.rs): the same characters as a heap string, for
// Latin-1 and UTF-16 (lone surrogates too), alive as long as JS holds them,
// and their memory given back and counted, so that a stream of them does
// not grow the process without bound.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import v8 from "node:v8";
import vm from "node:vm";
import { createPool } from "../index.mjs";
import * as T from "./fixtures/tasks.mjs";
import { fillBytes } from "./helpers/prng.mjs";

const require = createRequire(import.meta.url);
const native = require("../lib/native/index.js");
const { longString, externalStrings, EXTERNAL_MIN } = require("../lib/codec/long-string.js");
const { Encoder, decode } = require("../lib/codec/index.js");

// Node exports N-API's external string functions from 20.4 on, and the
// codec uses them there. Bun and Deno export them too, but the codec keeps
// long strings on the heap there (lib/runtimes/): the pool tests below hold
// either way.
const isNode = !process.versions.bun && !process.versions.deno;
const external = native.externalStrings(); // the addon can make them
const decodesExternal = externalStrings(); // the codec does

/** A full collection: Bun's own call, or V8's gc() exposed for this test. */
const gc = (() => {
  if (globalThis.Bun) return () => globalThis.Bun.gc(true);
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc");
})();

const latin1Bytes = (n, seed) => fillBytes(new Uint8Array(new SharedArrayBuffer(n + 16), 8, n), seed);
const utf16Of = (units) => {
  const u8 = new Uint8Array(new SharedArrayBuffer(units.length * 2 + 8), 4, units.length * 2);
  for (let i = 0; i < units.length; i++) {
    u8[2 * i] = units[i] & 0xff;
    u8[2 * i + 1] = units[i] >> 8;
  }
  return u8;
};

test("on Node the codec decodes long strings as external strings", { skip: !isNode }, () => {
  assert.equal(external, true);
  assert.equal(decodesExternal, true);
});

test("an external Latin-1 string holds exactly the bytes, all 256 values", { skip: !external }, () => {
  const u8 = latin1Bytes(EXTERNAL_MIN + 300, 7);
  for (let i = 0; i < 256; i++) u8[100 + i] = i;
  const s = native.externalString(u8, 3, u8.length - 3, false);
  assert.equal(typeof s, "string");
  assert.equal(s, Buffer.from(u8.buffer, u8.byteOffset + 3, u8.length - 3).latin1Slice());
  assert.equal(s.length, u8.length - 3);
});

test("an external UTF-16 string holds exactly the code units, lone surrogates too", { skip: !external }, () => {
  const units = Array.from({ length: EXTERNAL_MIN + 5 }, (_, i) => [0xd800, 0xdc00, 0xe9, 0x20ac, 0xdfff, 65][i % 6]);
  const u8 = utf16Of(units);
  const s = native.externalString(u8, 0, u8.length, true);
  assert.equal(s, String.fromCharCode(...units.slice(0, 60000)) + String.fromCharCode(...units.slice(60000)));
  // An odd byte count drops the last byte: whole code units only.
  assert.equal(native.externalString(u8, 2, 5, true), String.fromCharCode(units[1], units[2]));
});

test("longString: undefined below EXTERNAL_MIN, the characters from it on", () => {
  const u8 = latin1Bytes(EXTERNAL_MIN + 8, 3);
  assert.equal(longString(u8, 0, EXTERNAL_MIN - 1, false), undefined);
  const s = longString(u8, 8, EXTERNAL_MIN, false);
  if (!decodesExternal) assert.equal(s, undefined);
  else assert.equal(s, Buffer.from(u8.buffer, u8.byteOffset + 8, EXTERNAL_MIN).latin1Slice());
});

test("the codec decodes long strings of both encodings to the same characters", () => {
  const enc = new Encoder();
  const values = [
    "a".repeat(EXTERNAL_MIN - 1),
    "é".repeat(EXTERNAL_MIN),
    `${"x".repeat(EXTERNAL_MIN)}\ud800`,
    "\udc00\ud83d\ude00".repeat(EXTERNAL_MIN),
    [`${"y".repeat(EXTERNAL_MIN * 2)}`, { k: "z".repeat(EXTERNAL_MIN + 1) }],
  ];
  for (const v of values) {
    const bytes = enc.encode(v);
    const buf = new Uint8Array(new SharedArrayBuffer(bytes.length + 8), 8);
    buf.set(bytes);
    assert.deepEqual(decode(buf, 0, bytes.length), v);
  }
});

test("external strings live while JS holds them and are freed and counted after", { skip: !decodesExternal }, () => {
  const u8 = latin1Bytes(64 * 1024, 11);
  const expected = Buffer.from(u8.buffer, u8.byteOffset, u8.length).latin1Slice();
  const held = Array.from({ length: 64 }, () => native.externalString(u8, 0, u8.length, false));
  u8.fill(0); // the strings own copies
  for (let i = 0; i < 4; i++) gc();
  for (const s of held) assert.equal(s, expected);
  // 20,000 strings of 64 KiB that nobody keeps: 1.3 GB made in all. The
  // runtime must learn of their memory to collect them in time (without
  // that, the same loop grew this process by more than 4 GB).
  const before = process.memoryUsage().rss;
  let kept = 0;
  for (let i = 0; i < 20_000; i++) kept += native.externalString(u8, 0, u8.length, false).length & 1;
  const grown = process.memoryUsage().rss - before;
  assert.equal(kept, 0);
  assert.ok(grown < 600 * 1024 * 1024, `rss grew by ${(grown / 1048576).toFixed(0)} MiB`);
});

test("a pool echoes 2,000 long strings of both encodings exactly, with the host holding every answer", async () => {
  const pool = createPool({ threads: 2 })(T);
  try {
    const strings = Array.from({ length: 2000 }, (_, i) =>
      i % 2 === 0
        ? String.fromCharCode(33 + (i % 90)).repeat(EXTERNAL_MIN + i)
        : `\ud800${String.fromCharCode(0x100 + (i % 500)).repeat(EXTERNAL_MIN + i)}`,
    );
    const answers = await Promise.all(strings.map((s) => pool.call.echo(s)));
    for (let i = 0; i < 4; i++) gc();
    let wrong = 0;
    for (let i = 0; i < strings.length; i++) if (answers[i] !== strings[i]) wrong++;
    assert.equal(wrong, 0);
  } finally {
    await pool.shutdown();
  }
});
