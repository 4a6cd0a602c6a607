import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { runtime } from "./fixtures/runtime.mjs";
import { random } from "./helpers/prng.mjs";

const require = createRequire(import.meta.url);
const { Encoder, decode, CODEC_ERRORS } = require("../lib/codec/index.js");

// ---- helpers ---------------------------------------------------------------------------------------

const SLOT_OFFSET = 24; // non-zero offset inside the view
const SLOT_LIMIT = 512;
const sab = new SharedArrayBuffer(64 + SLOT_OFFSET + 8192);
// The view itself starts 64 bytes into the SharedArrayBuffer, so both the view's byteOffset and the
// `offset` argument are non-zero.
const slot = new Uint8Array(sab, 64, SLOT_OFFSET + 8192);

function viaSlot(value, enc = new Encoder(), limit = SLOT_LIMIT) {
  const n = enc.encodeInto(value, slot, SLOT_OFFSET, limit);
  assert.ok(n > 0, `encodeInto returned ${n}`);
  return decode(slot, SLOT_OFFSET, n);
}

function viaEncode(value, enc = new Encoder()) {
  const bytes = enc.encode(value);
  assert.ok(bytes instanceof Uint8Array);
  return decode(bytes, 0, bytes.length);
}

function encodedBytes(value) {
  return Array.from(new Encoder().encode(value));
}

// encodeInto a SharedArrayBuffer-backed target at a non-zero offset: the 512-byte slot when the
// value fits, otherwise (after checking the -1 result) a target sized for it.
function viaShared(value) {
  const enc = new Encoder();
  const n = enc.encodeInto(value, slot, SLOT_OFFSET, SLOT_LIMIT);
  if (n >= 0) return decode(slot, SLOT_OFFSET, n);
  const bytes = enc.encode(value);
  const size = bytes.length;
  // -1 although encode() fits: allowed only when encode() switched to the v8 form after the fast
  // path had already run out of room (e.g. a shared reference after the first 512 bytes).
  assert.ok(size > SLOT_LIMIT || bytes[0] === 0x11, `-1 although ${size} bytes fit`);
  // a limit with room to spare: the fast path may need more than the v8 form it ends up using
  const limit = 4 * size + 1024;
  const big = new Uint8Array(new SharedArrayBuffer(limit + 40), 8, limit + 32);
  assert.equal(enc.encodeInto(value, big, 16, limit), size);
  return decode(big, 16, size);
}

// Round trip through both entry points and compare.
function roundTrip(value, check = (out) => assert.deepStrictEqual(out, value)) {
  check(viaShared(value));
  check(viaEncode(value));
}

function assertCodecError(fn, Ctor, code, messagePattern) {
  let caught;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught, "expected an error");
  assert.ok(caught instanceof Ctor, `expected ${Ctor.name}, got ${caught && caught.constructor.name}: ${caught}`);
  assert.equal(caught.code, code);
  if (messagePattern) assert.match(caught.message, messagePattern);
  return caught;
}

// ---- API ---------------------------------------------------------------------------------------------

test("exports and error codes", () => {
  assert.equal(typeof Encoder, "function");
  assert.equal(typeof decode, "function");
  assert.deepEqual(
    { ...CODEC_ERRORS },
    {
      FUNCTION: "KNT_VALUE_FUNCTION",
      SYMBOL: "KNT_VALUE_SYMBOL",
      SERIALIZE: "KNT_VALUE_UNSERIALIZABLE",
      LIMIT: "KNT_VALUE_TOO_LARGE",
    },
  );
  assert.equal(new Encoder().maxPayloadBytes, 8 * 1024 * 1024);
  assert.equal(new Encoder({ maxPayloadBytes: 1000 }).maxPayloadBytes, 1000);
  assert.throws(() => new Encoder({ maxPayloadBytes: -1 }), RangeError);
});

test("encodeInto writes only inside [offset, offset + n) and returns n", () => {
  const enc = new Encoder();
  slot.fill(0xaa);
  const n = enc.encodeInto({ a: [1, 2.5, "x"] }, slot, SLOT_OFFSET, SLOT_LIMIT);
  assert.ok(n > 0 && n <= SLOT_LIMIT);
  for (let i = 0; i < SLOT_OFFSET; i++) assert.equal(slot[i], 0xaa);
  for (let i = SLOT_OFFSET + n; i < slot.length; i++) assert.equal(slot[i], 0xaa);
  assert.deepStrictEqual(decode(slot, SLOT_OFFSET, n), { a: [1, 2.5, "x"] });
  // encode() produces the same bytes
  assert.deepEqual(
    Array.from(enc.encode({ a: [1, 2.5, "x"] })),
    Array.from(slot.subarray(SLOT_OFFSET, SLOT_OFFSET + n)),
  );
});

test("encodeInto returns -1 when the value does not fit, without touching bytes past the limit", () => {
  const enc = new Encoder();
  const value = { text: "x".repeat(600) };
  slot.fill(0x55);
  assert.equal(enc.encodeInto(value, slot, SLOT_OFFSET, SLOT_LIMIT), -1);
  for (let i = SLOT_OFFSET + SLOT_LIMIT; i < slot.length; i++) assert.equal(slot[i], 0x55);
  for (let i = 0; i < SLOT_OFFSET; i++) assert.equal(slot[i], 0x55);
  // exact fit boundary
  const size = enc.encode(value).length;
  assert.equal(enc.encodeInto(value, slot, SLOT_OFFSET, size - 1), -1);
  assert.equal(enc.encodeInto(value, slot, SLOT_OFFSET, size), size);
  assert.deepStrictEqual(decode(slot, SLOT_OFFSET, size), value);
  // big binary and the v8 fallback path report -1 too
  assert.equal(enc.encodeInto(new Float64Array(100), slot, SLOT_OFFSET, SLOT_LIMIT), -1);
  assert.equal(enc.encodeInto(new Map([[1, "y".repeat(1000)]]), slot, SLOT_OFFSET, SLOT_LIMIT), -1);
  // the encoder is still usable afterwards
  assert.deepStrictEqual(viaSlot([1, 2], enc), [1, 2]);
});

test("encodeInto rejects bad arguments", () => {
  const enc = new Encoder();
  assert.throws(() => enc.encodeInto(1, slot, slot.length - 2, 10), RangeError);
  assert.throws(() => enc.encodeInto(1, [], 0, 0), RangeError);
  assert.throws(() => enc.encodeInto(1, slot, 1.5, 10), RangeError);
  assert.throws(() => decode(slot, slot.length, 1), RangeError);
});

test("the Encoder caches per target buffer but handles switching targets", () => {
  const enc = new Encoder();
  const a = new Uint8Array(new SharedArrayBuffer(256), 8, 128);
  const b = new Uint8Array(new ArrayBuffer(300), 100, 100);
  const values = [1.25, "é".repeat(20) + "\u{1f600}", 2n ** 70n, new Date(5), "z".repeat(50), -7n];
  for (let round = 0; round < 3; round++) {
    for (const v of values) {
      const na = enc.encodeInto(v, a, 3, 120);
      const nb = enc.encodeInto(v, b, 1, 99);
      const bytes = enc.encode(v);
      const other = a.subarray(64); // another view over the same buffer, after a's payload
      const nc = enc.encodeInto(v, other, 1, 60);
      assert.deepStrictEqual(decode(a, 3, na), v);
      assert.deepStrictEqual(decode(b, 1, nb), v);
      assert.deepStrictEqual(decode(bytes, 0, bytes.length), v);
      assert.deepStrictEqual(decode(other, 1, nc), v);
      assert.deepStrictEqual(decode(a, 64 + 1, nc), v);
    }
  }
});

// ---- primitives ------------------------------------------------------------------------------------

test("undefined, null, booleans", () => {
  for (const v of [undefined, null, true, false]) roundTrip(v, (out) => assert.equal(out, v));
  assert.deepEqual(encodedBytes(undefined), [0x00]);
  assert.deepEqual(encodedBytes(null), [0x01]);
  assert.deepEqual(encodedBytes(false), [0x02]);
  assert.deepEqual(encodedBytes(true), [0x03]);
});

test("numbers keep -0, NaN, Infinity and use int32 for small integers", () => {
  const values = [
    0,
    1,
    -1,
    42,
    2 ** 31 - 1,
    -(2 ** 31),
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 53,
    0.1,
    -1.5e300,
    Number.MIN_VALUE,
    Number.MAX_VALUE,
    Number.EPSILON,
    NaN,
    Infinity,
    -Infinity,
  ];
  for (const v of values) roundTrip(v, (out) => assert.ok(Object.is(out, v), `${out} vs ${v}`));
  roundTrip(-0, (out) => assert.ok(Object.is(out, -0)));
  assert.ok(Object.is(viaSlot(-0), -0));
  assert.ok(Object.is(viaEncode([-0])[0], -0));
  // compact tags
  assert.deepEqual(encodedBytes(1), [0x04, 1, 0, 0, 0]);
  assert.deepEqual(encodedBytes(-2), [0x04, 0xfe, 0xff, 0xff, 0xff]);
  assert.equal(encodedBytes(-0).length, 9);
  assert.equal(encodedBytes(-0)[0], 0x05);
  assert.equal(encodedBytes(2 ** 31).length, 9);
  assert.equal(encodedBytes(1.5)[0], 0x05);
});

test("bigint of any size and sign", () => {
  const values = [
    0n,
    1n,
    -1n,
    2n ** 63n - 1n,
    -(2n ** 63n),
    2n ** 63n,
    -(2n ** 63n) - 1n,
    2n ** 64n,
    -(2n ** 64n),
    2n ** 1000n,
    -(2n ** 1000n) + 12345n,
    3n ** 5000n,
    0xffn,
    0x100n,
  ];
  for (const v of values) roundTrip(v, (out) => assert.equal(out, v));
  assert.equal(typeof viaSlot(5n), "bigint");
  assert.equal(encodedBytes(5n).length, 9);
});

test("strings: exact UTF-16 code units, lone surrogates, emoji, Latin-1 at 1 byte/char", () => {
  const values = [
    "",
    "a",
    "hello",
    "\u00e9t\u00e9",
    "\u00ff",
    "\u0100",
    "\ud800",
    "\udfff",
    "a\udc00b",
    "\ud83d\ude00",
    "x\ud83dy",
    "\u{1f600}\u{1f680}",
    "\0\0",
    "\u4e2d\u6587",
    "\uffff\ufffe",
    "z".repeat(24),
    "z".repeat(25),
    "z".repeat(255),
    "z".repeat(256),
    "\u00e9".repeat(70000),
    "\ud800".repeat(17),
    "\u4e2d".repeat(16),
    "\u4e2d".repeat(300) + "\udc00",
    "a".repeat(1 << 20),
  ];
  for (const v of values) {
    roundTrip(v, (out) => {
      assert.equal(typeof out, "string");
      assert.equal(out.length, v.length);
      assert.ok(out === v, `string of length ${v.length} differs`);
    });
  }
  assert.equal(encodedBytes("abc").length, 2 + 3); // string8: tag, u8 length, 1 byte per char
  assert.equal(encodedBytes("\u00e9".repeat(300)).length, 5 + 300); // latin1
  assert.equal(encodedBytes("\u0100").length, 5 + 2); // utf16
  assert.equal(encodedBytes("\ud800")[0], 0x0a);
});

// ---- containers ------------------------------------------------------------------------------------

test("plain objects and arrays, nested", () => {
  const values = [
    [],
    {},
    [1, 2],
    [[[]]],
    { a: 1, b: "two", c: [3, { d: null, e: undefined }] },
    { "": 1, "with space": 2, "\u00e9": 3, "\u4e2d": 4, 10: "int-like", "-1": 5, __ok: true },
    Array.from({ length: 300 }, (_, i) => (i % 2 ? i : `s${i}`)),
    Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i])),
    [undefined, null, undefined],
  ];
  for (const v of values) roundTrip(v);
  // objects with many keys decode the same way twice (shape cache) and stay independent
  const big = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`field${i}`, i]));
  const enc = new Encoder();
  const first = viaSlot(big, enc);
  const second = viaSlot({ ...big, field3: "changed" }, enc);
  assert.deepStrictEqual(first, big);
  assert.equal(second.field3, "changed");
  assert.equal(first.field3, 3);
  assert.deepEqual(Object.keys(second), Object.keys(big));
});

test("null prototype is kept; symbol keys and non-enumerable properties are skipped", () => {
  const np = Object.assign(Object.create(null), { a: 1, nested: Object.assign(Object.create(null), { b: 2 }) });
  roundTrip(np, (out) => {
    assert.equal(Object.getPrototypeOf(out), null);
    assert.equal(Object.getPrototypeOf(out.nested), null);
    assert.deepStrictEqual(out, np);
  });
  const withSymbol = { a: 1, [Symbol("s")]: 2 };
  Object.defineProperty(withSymbol, "hidden", { value: 3, enumerable: false });
  roundTrip(withSymbol, (out) => {
    assert.deepStrictEqual(out, { a: 1 });
    assert.equal(Object.getOwnPropertySymbols(out).length, 0);
  });
});

test("an own __proto__ key stays an own property and does not change the prototype", () => {
  const v = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}');
  roundTrip(v, (out) => {
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.ok(Object.hasOwn(out, "__proto__"));
    assert.deepEqual(out.__proto__, { polluted: true }); // eslint-disable-line no-proto
    assert.equal({}.polluted, undefined);
  });
});

test("inherited enumerable properties are not sent", () => {
  Object.prototype.knittingPolluted = 1; // eslint-disable-line no-extend-native
  try {
    const out = viaSlot({ a: 1 });
    assert.deepEqual(Object.keys(out), ["a"]);
  } finally {
    delete Object.prototype.knittingPolluted;
  }
});

test("Date, including an invalid Date", () => {
  for (const t of [0, 1e12, -1e12, 8.64e15]) {
    roundTrip(new Date(t), (out) => {
      assert.ok(out instanceof Date);
      assert.equal(out.getTime(), t);
    });
  }
  roundTrip(new Date(NaN), (out) => {
    assert.ok(out instanceof Date);
    assert.ok(Number.isNaN(out.getTime()));
  });
});

// ---- binary ----------------------------------------------------------------------------------------

const TYPED_KINDS = [
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

function fillTyped(arr) {
  for (let i = 0; i < arr.length; i++) {
    arr[i] = arr instanceof BigInt64Array || arr instanceof BigUint64Array ? BigInt(i * 7 + 1) : i * 3 + 1;
  }
  return arr;
}

test("every typed array kind comes back as the same kind with only the view's bytes", () => {
  for (const Kind of TYPED_KINDS) {
    const full = fillTyped(new Kind(16));
    const views = [
      full,
      full.subarray(3, 11),
      new Kind(0),
      fillTyped(new Kind(new SharedArrayBuffer(8 * Kind.BYTES_PER_ELEMENT))),
    ];
    for (const v of views) {
      roundTrip(v, (out) => {
        assert.equal(out.constructor.name, Kind.name);
        assert.equal(out.length, v.length);
        assert.deepEqual(Array.from(out), Array.from(v));
        assert.ok(out.buffer instanceof ArrayBuffer, "fresh non-shared ArrayBuffer");
        assert.equal(out.byteOffset, 0);
        assert.equal(out.buffer.byteLength, v.byteLength);
      });
    }
  }
  const f = new Float64Array([-0, NaN, Infinity, 1.5]);
  roundTrip(f, (out) => {
    assert.ok(Object.is(out[0], -0));
    assert.ok(Number.isNaN(out[1]));
    assert.deepStrictEqual(out, f);
  });
});

test("ArrayBuffer, DataView and Buffer keep their types", () => {
  const ab = new Uint8Array([1, 2, 3, 4, 5]).buffer;
  roundTrip(ab, (out) => {
    assert.ok(out instanceof ArrayBuffer);
    assert.deepEqual(Array.from(new Uint8Array(out)), [1, 2, 3, 4, 5]);
  });
  const dv = new DataView(new Uint8Array([9, 8, 7, 6, 5, 4]).buffer, 1, 3);
  roundTrip(dv, (out) => {
    assert.ok(out instanceof DataView);
    assert.equal(out.byteLength, 3);
    assert.equal(out.byteOffset, 0);
    assert.deepEqual([out.getUint8(0), out.getUint8(1), out.getUint8(2)], [8, 7, 6]);
  });
  const buf = Buffer.from("hello buffer");
  const sub = buf.subarray(6);
  for (const b of [buf, sub, Buffer.alloc(0)]) {
    roundTrip(b, (out) => {
      assert.ok(Buffer.isBuffer(out));
      assert.equal(out.toString(), b.toString());
      assert.equal(out.buffer.byteLength, b.length, "not a slice of a pooled buffer");
    });
  }
  const u8 = new Uint8Array([1, 2]);
  roundTrip(u8, (out) => assert.ok(!Buffer.isBuffer(out)));
});

test("decoded binary data is copied out of the source slot", () => {
  const enc = new Encoder();
  const values = [
    new Uint8Array([1, 2, 3]),
    new Float64Array([1.5, 2.5]),
    Buffer.from("abc"),
    new Uint8Array([7, 7]).buffer,
    new DataView(new ArrayBuffer(4)),
    new Map([["k", new Uint8Array([4, 5])]]),
  ];
  for (const v of values) {
    const n = enc.encodeInto(v, slot, SLOT_OFFSET, SLOT_LIMIT);
    const out = decode(slot, SLOT_OFFSET, n);
    const before =
      out instanceof Map
        ? new Map([["k", out.get("k").slice()]])
        : out instanceof ArrayBuffer
          ? out.slice(0)
          : out instanceof DataView
            ? new DataView(out.buffer.slice(0))
            : Buffer.isBuffer(out)
              ? Buffer.from(out)
              : out.slice();
    slot.fill(0xee, SLOT_OFFSET, SLOT_OFFSET + n); // the slot is reused by the next call
    assert.deepStrictEqual(out, before);
    const inner = out instanceof Map ? out.get("k") : out;
    const backing = ArrayBuffer.isView(inner) ? inner.buffer : inner;
    assert.ok(backing instanceof ArrayBuffer && !(backing instanceof SharedArrayBuffer));
  }
});

test("a 4 MiB Float64Array round-trips through encode()", () => {
  const big = new Float64Array((4 * 1024 * 1024) / 8);
  for (let i = 0; i < big.length; i++) big[i] = i * 0.5 - 1000;
  const enc = new Encoder();
  const bytes = enc.encode(big);
  assert.equal(bytes.length, 8 + big.byteLength); // 7 header bytes + 1 of padding (scratch offset 0)
  const out = decode(bytes, 0, bytes.length);
  assert.ok(out instanceof Float64Array);
  assert.equal(out.length, big.length);
  assert.deepStrictEqual(out, big);
  // the encoder recovers a small scratch buffer afterwards and keeps working
  assert.deepStrictEqual(viaEncode([1, 2], enc), [1, 2]);
});

test("bulk copies take Buffer#fill only where it is one memcpy: never on Deno, whose fill copies byte by byte", () => {
  const { fillCopies } = require("../lib/codec/copy.js");
  assert.equal(typeof fillCopies, "boolean");
  if (runtime === "deno") assert.equal(fillCopies, false);
  if (runtime === "node") assert.equal(fillCopies, true);
});

test("bulk copies into and out of shared memory keep every byte, at every size and offset", () => {
  // Sizes around FILL_MIN (codec/copy.js: below it Uint8Array#set, from it Buffer#fill), sources
  // over plain, offset and shared buffers, targets at odd offsets of a SharedArrayBuffer.
  const { FILL_MIN } = require("../lib/codec/copy.js");
  const region = new Uint8Array(new SharedArrayBuffer(1 << 20), 8);
  const enc = new Encoder();
  const rand = random(7);
  for (const n of [1, 65, FILL_MIN - 1, FILL_MIN, FILL_MIN + 1, 4095, 65536 + 3]) {
    const sources = [
      new Uint8Array(n),
      Buffer.alloc(n),
      new Uint8Array(new ArrayBuffer(n + 9), 5, n),
      new Uint8Array(new SharedArrayBuffer(n + 16), 3, n),
    ];
    for (const [k, v] of sources.entries()) {
      for (let i = 0; i < n; i++) v[i] = (rand() * 256) | 0;
      const at = 1 + k * 3;
      region.fill(0xee);
      const len = enc.encodeInto(v, region, at, region.length - at);
      assert.ok(len > n, `${n} bytes, source ${k}`);
      assert.equal(region[at - 1], 0xee, "nothing written before the record");
      assert.equal(region[at + len], 0xee, "nothing written after the record");
      const out = decode(region, at, len);
      region.fill(0); // the block is reused: the value must not see it
      assert.equal(out.length, n);
      assert.ok(!(out.buffer instanceof SharedArrayBuffer));
      assert.ok(Buffer.from(out.buffer, out.byteOffset, n).equals(Buffer.from(v.buffer, v.byteOffset, n)));
    }
  }
});

test("a Uint8Array subclass sends its own bytes, whatever its length getter says", () => {
  class Short extends Uint8Array {
    get length() {
      return 5;
    }
  }
  for (const n of [100, 2000]) {
    const v = new Short(n);
    for (let i = 0; i < n; i++) v[i] = i & 0xff;
    const out = viaEncode(v);
    assert.equal(out.byteLength, n);
    assert.equal(out[n - 1], (n - 1) & 0xff);
  }
});

// ---- errors as values ------------------------------------------------------------------------------

test("Error values keep name, message, stack, cause and code", () => {
  const ctors = [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError];
  for (const Ctor of ctors) {
    const e = new Ctor(`a ${Ctor.name}`);
    roundTrip(e, (out) => {
      assert.ok(out instanceof Ctor);
      assert.equal(Object.getPrototypeOf(out), Ctor.prototype);
      assert.equal(out.name, Ctor.name);
      assert.equal(out.message, e.message);
      assert.equal(out.stack, e.stack);
      assert.ok(!Object.hasOwn(out, "cause"), "absent cause stays absent");
      assert.ok(!("code" in out));
      assert.deepStrictEqual(out, e);
    });
  }
  const withCause = new TypeError("outer", { cause: new RangeError("inner", { cause: { deep: [1, 2n] } }) });
  withCause.code = "E_OUTER";
  roundTrip(withCause, (out) => {
    assert.ok(out instanceof TypeError);
    assert.equal(out.code, "E_OUTER");
    assert.ok(out.cause instanceof RangeError);
    assert.equal(out.cause.message, "inner");
    assert.equal(out.cause.stack, withCause.cause.stack);
    assert.deepStrictEqual(out.cause.cause, { deep: [1, 2n] });
  });
  const undefinedCause = new Error("x", { cause: undefined });
  roundTrip(undefinedCause, (out) => {
    assert.ok(Object.hasOwn(out, "cause"));
    assert.equal(out.cause, undefined);
  });
  const noStack = new Error("no stack");
  noStack.stack = undefined;
  roundTrip(noStack, (out) => assert.equal(out.stack, undefined));
  const extra = Object.assign(new Error("sys"), { errno: -2, syscall: "open", path: "/x" });
  roundTrip(extra, (out) => {
    assert.equal(out.errno, -2);
    assert.equal(out.syscall, "open");
    assert.equal(out.path, "/x");
  });
});

test("AggregateError keeps errors; custom error classes become Error with the original name", () => {
  const agg = new AggregateError([new Error("one"), new TypeError("two"), 3], "many", { cause: "c" });
  roundTrip(agg, (out) => {
    assert.ok(out instanceof AggregateError);
    assert.equal(out.message, "many");
    assert.equal(out.errors.length, 3);
    assert.ok(out.errors[1] instanceof TypeError);
    assert.equal(out.errors[2], 3);
    assert.equal(out.cause, "c");
    assert.equal(out.stack, agg.stack);
  });
  class DatabaseError extends Error {
    constructor(message, options) {
      super(message, options);
      this.name = "DatabaseError";
      this.code = "E_DB";
    }
  }
  const custom = new DatabaseError("connection lost", { cause: new Error("socket") });
  roundTrip({ err: custom }, ({ err: out }) => {
    assert.equal(Object.getPrototypeOf(out), Error.prototype);
    assert.equal(out.name, "DatabaseError");
    assert.equal(out.message, "connection lost");
    assert.equal(out.code, "E_DB");
    assert.equal(out.stack, custom.stack);
    assert.equal(out.cause.message, "socket");
    assert.match(String(out), /^DatabaseError: connection lost/);
  });
});

// ---- node:v8 fallback ------------------------------------------------------------------------------

test("values structuredClone accepts go through the v8 fallback", () => {
  class Point {
    constructor() {
      this.x = 1;
      this.y = [2];
    }
  }
  const values = [
    new Map([
      [1, "a"],
      [{ k: 1 }, new Set([1, 2])],
    ]),
    new Set(["x", 2n]),
    /ab+c/gi,
    Object(5),
    Object("str"),
    Object(true),
    Object(10n),
    [1, , 3], // eslint-disable-line no-sparse-arrays
    { list: new Array(5) },
  ];
  for (const v of values) {
    assert.equal(new Encoder().encode(v)[0], 0x11, "sent as a v8 record");
    roundTrip(v, (out) => assert.deepStrictEqual(out, v));
  }
  // nested: only the Map/Set/... itself becomes a v8 record; the rest keeps the fast path's fidelity
  const err = Object.assign(new RangeError("r"), { code: "E_R" });
  const mixed = {
    when: new Date(3),
    m: new Map([["k", new Set([Buffer.from("in set")])]]),
    buf: Buffer.from("b"),
    f: new Float32Array([1.5]),
    np: Object.assign(Object.create(null), { z: 1 }),
    err,
    re: [/x/y],
  };
  const bytes = new Encoder().encode(mixed);
  assert.equal(bytes[0], 0x0c, "outer object stays on the fast path");
  roundTrip(mixed, (out) => {
    assert.deepStrictEqual(out, mixed);
    assert.ok(Buffer.isBuffer(out.buf));
    assert.ok(Buffer.isBuffer([...out.m.get("k")][0]), "Buffer stays Buffer inside the v8 record");
    assert.equal(Object.getPrototypeOf(out.np), null);
    assert.equal(out.err.code, "E_R");
    assert.equal(out.err.stack, err.stack);
  });
  // class instances lose their prototype, as with structuredClone
  roundTrip(new Point(), (out) => assert.deepStrictEqual(out, { x: 1, y: [2] }));
});

test("shared references and cycles keep their identity", () => {
  const inner = { shared: true };
  const viaMap = { direct: inner, m: new Map([["again", inner]]) };
  roundTrip(viaMap, (out) => {
    assert.deepStrictEqual(out, viaMap);
    assert.equal(out.m.get("again"), out.direct, "shared between a v8 record and the fast path");
  });
  const loop = { name: "loop" };
  loop.m = new Map([["back", loop]]);
  roundTrip(loop, (out) => assert.equal(out.m.get("back"), out));
  const twoMaps = { a: new Map([[1, inner]]), b: new Set([inner]) };
  roundTrip(twoMaps, (out) => assert.equal(out.a.get(1), [...out.b][0]));
  const shared = { s: 1 };
  const v = { a: shared, b: [shared] };
  roundTrip(v, (out) => {
    assert.deepStrictEqual(out, v);
    assert.equal(out.a, out.b[0]);
  });
  const cyclic = { name: "root", children: [] };
  cyclic.children.push({ parent: cyclic });
  cyclic.self = cyclic;
  roundTrip(cyclic, (out) => {
    assert.equal(out.self, out);
    assert.equal(out.children[0].parent, out);
  });
  const many = Array.from({ length: 40 }, (_, i) => ({ i })); // past the linear identity scan
  many.push(many[3]);
  roundTrip(many, (out) => {
    assert.equal(out.length, 41);
    assert.equal(out[40], out[3]);
  });
  const distinct = Array.from({ length: 40 }, (_, i) => ({ i }));
  assert.equal(new Encoder().encode(distinct)[0], 0x0b, "no shared refs: fast path");
});

test("very deep nesting", () => {
  const nest = (depth) => {
    let v = { leaf: true };
    for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { v };
    return v;
  };
  for (const depth of [31, 32, 33, 200, 1000]) roundTrip(nest(depth));
  // deeper than assert.deepStrictEqual can recurse: walk it
  roundTrip(nest(2000), (out) => {
    let depth = 0;
    while (!out.leaf) {
      out = Array.isArray(out) ? out[0] : out.v;
      depth++;
    }
    assert.equal(depth, 2000);
  });
  let shallow = 1;
  for (let i = 0; i < 31; i++) shallow = [shallow];
  assert.equal(new Encoder().encode(shallow)[0], 0x0b);
  let deep = 1;
  for (let i = 0; i < 40; i++) deep = [deep];
  assert.equal(new Encoder().encode(deep)[0], 0x11);
  // beyond what node:v8 (and structuredClone) can serialize at all
  let tooDeep = 1;
  for (let i = 0; i < 20000; i++) tooDeep = [tooDeep];
  // Bun's serializer has no such depth limit: the value goes through.
  if (runtime !== "bun") {
    assertCodecError(() => new Encoder().encode(tooDeep), TypeError, CODEC_ERRORS.SERIALIZE, /serialization failed/);
  }
});

// ---- encode errors ---------------------------------------------------------------------------------

test("functions are rejected with KNT_VALUE_FUNCTION and a path", () => {
  // A short stack, so that the error fits the 512-byte slot and its cause is
  // reached (under deno test a stack is ~580 bytes: encodeInto says "does
  // not fit" before it gets to the function).
  const withCause = Object.assign(new Error("x", { cause: { cb() {} } }), { stack: "Error: x" });
  const enc = new Encoder();
  const cases = [
    [function named() {}, /cannot send a function "named" \(at top level\); send data, not code/],
    [{ a: { b: [0, 1, () => 1] } }, /cannot send a function.*\(at \.a\.b\[2\]\)/],
    [{ "odd key": [class Foo {}] }, /\(at \["odd key"\]\[0\]\)/],
    [new Map([["k", () => 2]]), /\(at \.get\("k"\)\)/],
    [{ s: new Set([1, async () => 1]) }, /\(at \.s\.values\(\)\[1\]\)/],
    [{ m: new Map(), f: Math.max }, /\(at \.f\)/],
    [withCause, /\(at \.cause\.cb\)/],
  ];
  for (const [value, pattern] of cases) {
    const err = assertCodecError(
      () => enc.encodeInto(value, slot, SLOT_OFFSET, SLOT_LIMIT),
      TypeError,
      CODEC_ERRORS.FUNCTION,
      pattern,
    );
    assert.match(err.message, /^knitting-native: cannot send a function/);
    assertCodecError(() => enc.encode(value), TypeError, CODEC_ERRORS.FUNCTION, pattern);
  }
  // still usable
  assert.deepStrictEqual(viaSlot({ ok: 1 }, enc), { ok: 1 });
});

test("symbols are rejected with KNT_VALUE_SYMBOL", () => {
  const enc = new Encoder();
  const cases = [
    [Symbol("top"), /cannot send a symbol \(Symbol\(top\)\) \(at top level\)/],
    [{ a: [Symbol.iterator] }, /symbol.*\(at \.a\[0\]\)/],
    [new Set([Symbol("in set")]), /symbol \(Symbol\(in set\)\)/],
    [new Map([[Symbol("key"), 1]]), /symbol/],
  ];
  for (const [value, pattern] of cases) {
    assertCodecError(() => enc.encode(value), TypeError, CODEC_ERRORS.SYMBOL, pattern);
    assertCodecError(
      () => enc.encodeInto(value, slot, SLOT_OFFSET, SLOT_LIMIT),
      TypeError,
      CODEC_ERRORS.SYMBOL,
      pattern,
    );
  }
});

function detachedBuffer() {
  const ab = new ArrayBuffer(16);
  const view = new Uint8Array(ab);
  structuredClone(ab, { transfer: [ab] });
  assert.equal(ab.byteLength, 0);
  return { ab, view };
}

test("values structuredClone rejects give KNT_VALUE_UNSERIALIZABLE", () => {
  const enc = new Encoder();
  class Holder {
    constructor() {
      this.callback = () => 1;
    }
  }
  const { ab, view } = detachedBuffer();
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  const boom = new Error("getter exploded");
  const throwingGetter = {
    get x() {
      throw boom;
    },
  };
  const cases = [
    [new WeakMap(), /serialization failed.*WeakMap/, true],
    [{ p: Promise.resolve(1) }, /serialization failed.*Promise/, true],
    [new Holder(), /serialization failed \(at \.callback\)/, true],
    [{ list: [new Holder()] }, /serialization failed/, true],
    [ab, /serialization failed \(at top level\).*detached/, false],
    [{ nested: { buf: ab } }, /\(at \.nested\.buf\).*detached/, false],
    [view, /detached/, false],
    [new DataView(new ArrayBuffer(8)), null, false], // control: not detached
    [new Map([["k", ab]]), /detached/, false],
    [proxy, /serialization failed/, true],
    [throwingGetter, /serialization failed: getter exploded/, true],
  ];
  for (const [value, v8Pattern, hasCause] of cases) {
    // JavaScriptCore's "The object can not be cloned." names no type: on Bun the path and code say it.
    const pattern = runtime === "bun" && /WeakMap|Promise/.test(String(v8Pattern)) ? /serialization failed/ : v8Pattern;
    if (pattern === null) {
      assert.ok(enc.encodeInto(value, slot, SLOT_OFFSET, SLOT_LIMIT) > 0);
      continue;
    }
    const err = assertCodecError(
      () => enc.encodeInto(value, slot, SLOT_OFFSET, SLOT_LIMIT),
      TypeError,
      CODEC_ERRORS.SERIALIZE,
      pattern,
    );
    assert.match(err.message, /^knitting-native: serialization failed/);
    if (hasCause) assert.ok(err.cause !== undefined, "cause carries the original error");
    assertCodecError(() => enc.encode(value), TypeError, CODEC_ERRORS.SERIALIZE, pattern);
  }
  const err = assertCodecError(() => enc.encode(throwingGetter), TypeError, CODEC_ERRORS.SERIALIZE);
  assert.equal(err.cause, boom);
  const dv = new DataView(new ArrayBuffer(8));
  structuredClone(dv.buffer, { transfer: [dv.buffer] });
  assertCodecError(() => enc.encode({ dv }), TypeError, CODEC_ERRORS.SERIALIZE, /detached/);
});

test("payloads over maxPayloadBytes give KNT_VALUE_TOO_LARGE with the limit and the size", () => {
  const small = new Encoder({ maxPayloadBytes: 1000 });
  assertCodecError(
    () => small.encode("x".repeat(2000)),
    RangeError,
    CODEC_ERRORS.LIMIT,
    /^knitting-native: payload of 2005 bytes exceeds payload\.maxPayloadBytes \(1000\); raise payload\.maxPayloadBytes/,
  );
  assertCodecError(
    () => small.encode({ a: "x".repeat(600), b: "\u4e2d".repeat(300) }),
    RangeError,
    CODEC_ERRORS.LIMIT,
    /payload of 1221 bytes exceeds payload\.maxPayloadBytes \(1000\)/,
  );
  assertCodecError(
    () => small.encode(new Map([[1, "y".repeat(2000)]])),
    RangeError,
    CODEC_ERRORS.LIMIT,
    /payload of \d+ bytes exceeds payload\.maxPayloadBytes \(1000\)/,
  );
  // exactly at the limit is fine
  assert.equal(small.encode("x".repeat(995)).length, 1000);
  assertCodecError(() => small.encode("x".repeat(996)), RangeError, CODEC_ERRORS.LIMIT, /payload of 1001 bytes/);
  // encodeInto with a limit larger than maxPayloadBytes enforces maxPayloadBytes
  const target = new Uint8Array(new SharedArrayBuffer(4096));
  assertCodecError(
    () => small.encodeInto("x".repeat(2000), target, 0, 4096),
    RangeError,
    CODEC_ERRORS.LIMIT,
    /payload of 2005 bytes/,
  );
  // ...while a limit below it just reports -1
  assert.equal(small.encodeInto("x".repeat(2000), target, 0, 500), -1);
  // default limit: 8 MiB
  const def = new Encoder();
  const nine = Buffer.alloc(9 * 1024 * 1024);
  assertCodecError(
    () => def.encode(nine),
    RangeError,
    CODEC_ERRORS.LIMIT,
    /payload of 9437192 bytes exceeds payload\.maxPayloadBytes \(8388608\)/,
  );
  // a function behind the oversized part is still reported as a function
  assertCodecError(() => small.encode(["x".repeat(2000), () => 1]), TypeError, CODEC_ERRORS.FUNCTION);
  assert.deepStrictEqual(viaEncode([1, 2], small), [1, 2]);
});

// ---- corrupt input ---------------------------------------------------------------------------------

function assertCorrupt(bytes, offset = 0, length = bytes.length) {
  assert.throws(
    () => decode(bytes, offset, length),
    (err) => {
      assert.ok(err instanceof RangeError, `expected RangeError, got ${err}`);
      assert.match(err.message, /^knitting-native: corrupt payload/);
      return true;
    },
  );
}

test("decoding truncated payloads throws RangeError", () => {
  const enc = new Encoder();
  const samples = [
    { a: [1, 2.5, "str", "\u4e2d\u6587", 2n ** 100n, -5n], b: new Date(1), c: null },
    new Float64Array([1, 2, 3]),
    Buffer.from("buffer"),
    new TypeError("t", { cause: 1 }),
    new Map([[1, 2]]),
    "x".repeat(300),
    "\ud800".repeat(30),
    Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])),
  ];
  for (const v of samples) {
    const bytes = enc.encode(v).slice();
    for (let len = 0; len < bytes.length; len++) {
      // the bytes past the range are valid data: decoding must not look at them
      const padded = new Uint8Array(bytes.length + 8);
      padded.set(bytes, 4);
      assertCorrupt(padded, 4, len);
    }
    assert.deepStrictEqual(decode(bytes, 0, bytes.length), v);
  }
});

test("an error record whose name or message cannot become a string is corrupt, not a TypeError", () => {
  // Well-formed records the encoder never writes (it refuses such errors):
  // error, flags 0, then name, message, stack; 0x0d 0 0 0 0 is an empty
  // null-prototype object, which has no toString; 0x00 is undefined.
  const nullObject = [0x0d, 0, 0, 0, 0];
  assertCorrupt(Uint8Array.of(0x10, 0, ...nullObject, 0x00, 0x00)); // the name
  assertCorrupt(Uint8Array.of(0x10, 0, 0x00, ...nullObject, 0x00)); // the message
  // Found by the garbage fuzz below with another seed: a payload with one byte
  // turned into the error tag.
  const found =
    "0c040000000801610b0600000004010000000500000000000004400801730a010000002d4e10000d0000000000000000" +
    "000000000000001006fbffffffffffffff0833620e000000000000f03f0801630108016403";
  assertCorrupt(Uint8Array.from(Buffer.from(found, "hex")));
});

test("decoding garbage throws RangeError", () => {
  assertCorrupt(Uint8Array.of(0xff));
  assertCorrupt(Uint8Array.of(0x12));
  assertCorrupt(Uint8Array.of(0x01, 0x01)); // trailing bytes
  assertCorrupt(Uint8Array.of(0x0b, 0xff, 0xff, 0xff, 0xff)); // huge array count
  assertCorrupt(Uint8Array.of(0x0c, 1, 0, 0, 0, 0x04, 1, 0, 0, 0, 0x01)); // non-string key
  assertCorrupt(Uint8Array.of(0x0f, 0x08, 3, 0, 0, 0, 0, 1, 2, 3)); // Float64Array of 3 bytes
  assertCorrupt(Uint8Array.of(0x0f, 0x01, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 1)); // padding past 7 bytes
  assertCorrupt(Uint8Array.of(0x0f, 0x01, 2, 0, 0, 0, 1, 0, 5)); // truncated after its padding
  assertCorrupt(Uint8Array.of(0x0f, 0x42, 0, 0, 0, 0, 0)); // unknown binary kind
  assertCorrupt(Uint8Array.of(0x07, 2, 0, 0, 0, 0)); // bad bigint sign
  assertCorrupt(Uint8Array.of(0x11, 3, 0, 0, 0, 0xde, 0xad, 0xbe)); // v8 rejects it
  assertCorrupt(new Uint8Array(0));
  const deep = [];
  for (let i = 0; i < 100; i++) deep.push(0x0b, 1, 0, 0, 0);
  deep.push(0x01);
  assertCorrupt(Uint8Array.from(deep)); // deeper than the encoder ever writes
  // random bytes: either a value or a RangeError, never another kind of failure
  const rand = random(12345);
  let rejected = 0;
  for (let i = 0; i < 3000; i++) {
    const len = 1 + Math.floor(rand() * 24);
    const bytes = new Uint8Array(len);
    for (let j = 0; j < len; j++) bytes[j] = rand() < 0.5 ? Math.floor(rand() * 0x12) : Math.floor(rand() * 256);
    try {
      decode(bytes, 0, len);
    } catch (err) {
      assert.ok(err instanceof RangeError, `${err}`);
      assert.match(err.message, /^knitting-native: corrupt payload/);
      rejected++;
    }
  }
  assert.ok(rejected > 1000);
  // valid payloads with a few bytes changed
  const enc = new Encoder();
  const samples = [
    { a: [1, 2.5, "s", "\u4e2d", 2n ** 100n, -5n], b: new Date(1), c: null, d: true },
    Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i % 2 ? `v${i}` : i])),
    [new Float64Array([1, 2]), Buffer.from("abc"), new DataView(new ArrayBuffer(4)), new ArrayBuffer(3)],
    new TypeError("t", { cause: new AggregateError([new Error("x")], "agg") }),
    { m: new Map([[1, { x: 2 }]]) },
  ];
  let mutatedRejected = 0;
  for (let i = 0; i < 5000; i++) {
    const bytes = enc.encode(samples[i % samples.length]).slice();
    for (let f = 0; f < 1 + Math.floor(rand() * 3); f++)
      bytes[Math.floor(rand() * bytes.length)] = Math.floor(rand() * 256);
    try {
      decode(bytes, 0, bytes.length);
    } catch (err) {
      assert.ok(err instanceof RangeError, `${err}`);
      assert.match(err.message, /^knitting-native: corrupt payload/);
      mutatedRejected++;
    }
  }
  assert.ok(mutatedRejected > 500);
});

// ---- randomized round trip -------------------------------------------------------------------------

// Values that fit the fast path only, or (withV8) trees that may also contain Map/Set/RegExp/boxed
// values and so travel as one node:v8 record. Inside such a record Errors follow v8's rules
// (no `code`), so `code` is only generated for fast-path trees.
function generator(rand) {
  const int = (n) => Math.floor(rand() * n);
  const pick = (arr) => arr[int(arr.length)];
  const CHARS = ["a", "z", "0", " ", "\u00e9", "\u00ff", "\u0100", "\u4e2d", "\ud800", "\udc00", "\ud83d\ude00", "\0"];
  const str = () => {
    const len = pick([0, 1, 3, 8, 20, 30, 300]);
    const latin = rand() < 0.6;
    let s = "";
    for (let i = 0; i < len; i++) s += latin ? String.fromCharCode(32 + int(224)) : pick(CHARS);
    return s;
  };
  const num = () =>
    pick([
      0,
      -0,
      1,
      -1,
      NaN,
      Infinity,
      -Infinity,
      2 ** 31,
      -(2 ** 31),
      0.5,
      1e-300,
      Number.MAX_SAFE_INTEGER,
      int(1000) - 500,
      rand() * 1e6 - 5e5,
      (rand() - 0.5) * 2 ** 60,
    ]);
  const big = () => {
    const bits = pick([1, 8, 63, 64, 65, 200, 1000]);
    let v = 0n;
    for (let i = 0; i < bits; i += 16) v = (v << 16n) | BigInt(int(65536));
    return rand() < 0.5 ? -v : v;
  };
  const typed = () => {
    const Kind = pick(TYPED_KINDS);
    const arr = new Kind(int(12) + 2);
    for (let i = 0; i < arr.length; i++) {
      arr[i] = Kind === BigInt64Array || Kind === BigUint64Array ? BigInt(int(1e9)) : (rand() - 0.3) * 300;
    }
    return rand() < 0.4 ? arr.subarray(1, arr.length - 1) : arr;
  };
  const leaf = () => {
    switch (int(14)) {
      case 0:
        return undefined;
      case 1:
        return null;
      case 2:
        return rand() < 0.5;
      case 3:
      case 4:
        return num();
      case 5:
        return big();
      case 6:
      case 7:
        return str();
      case 8:
        return new Date(int(2e12));
      case 9:
        return typed();
      case 10: {
        const b = Buffer.alloc(int(10));
        for (let i = 0; i < b.length; i++) b[i] = int(256);
        return rand() < 0.5 ? b : new Uint8Array(b).buffer;
      }
      case 11:
        return new DataView(new Uint8Array([int(256), int(256), int(256)]).buffer);
      case 12: {
        const Ctor = pick([Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError]);
        const e = rand() < 0.5 ? new Ctor(str()) : new Ctor(str(), { cause: leaf() });
        if (!withV8 && rand() < 0.3) e.code = `E_${int(100)}`;
        return e;
      }
      default:
        if (!withV8) return str();
        return pick([
          new Map([[str(), num()]]),
          new Set([num(), str()]),
          /x+/g,
          Object("boxed"),
          new Map([[1, { o: [2] }]]),
        ]);
    }
  };
  let withV8 = false;
  const value = (depth) => {
    if (depth > 4 || rand() < 0.35) return leaf();
    if (rand() < 0.45) return Array.from({ length: int(7) }, () => value(depth + 1));
    const o = !withV8 && rand() < 0.1 ? Object.create(null) : {};
    const n = rand() < 0.15 ? 14 + int(10) : int(6);
    for (let i = 0; i < n; i++) o[rand() < 0.8 ? `k${int(30)}` : str()] = value(depth + 1);
    return o;
  };
  return (allowV8) => {
    withV8 = allowV8;
    return value(0);
  };
}

// deepStrictEqual checks prototypes (so Buffer vs Uint8Array and Float32Array vs Float64Array would
// differ); this walk additionally names the typed array kind at the first mismatch.
function checkKinds(a, b, path = "") {
  if (ArrayBuffer.isView(a)) {
    assert.equal(b.constructor.name, a.constructor.name, `kind at ${path}`);
    assert.equal(Buffer.isBuffer(b), Buffer.isBuffer(a), `Buffer at ${path}`);
    return;
  }
  if (a !== null && typeof a === "object" && !(a instanceof Map) && !(a instanceof Set)) {
    for (const k of Object.keys(a)) checkKinds(a[k], b[k], `${path}.${k}`);
  }
}

test("randomized round trip (2000 seeded cases)", () => {
  const rand = random(0x6b6e74);
  const value = generator(rand);
  const enc = new Encoder();
  let viaSlotCount = 0;
  let fallbackCount = 0;
  for (let i = 0; i < 2000; i++) {
    const v = value(rand() < 0.3);
    let out;
    const n = enc.encodeInto(v, slot, SLOT_OFFSET, SLOT_LIMIT);
    if (n >= 0) {
      viaSlotCount++;
      out = decode(slot, SLOT_OFFSET, n);
    } else {
      fallbackCount++;
      const bytes = enc.encode(v);
      out = decode(bytes, 0, bytes.length);
    }
    assert.deepStrictEqual(out, v, `case ${i}`);
    checkKinds(v, out);
    const bytes = enc.encode(v);
    const again = decode(bytes, 0, bytes.length);
    assert.deepStrictEqual(again, v, `case ${i} via encode()`);
  }
  assert.ok(viaSlotCount > 500 && fallbackCount > 100, `${viaSlotCount} in the slot, ${fallbackCount} too big`);
});

// ---- object shapes (0x14 / 0x15): rows of records send their keys once ----------------------------

const row = (i) => ({ id: i, name: `n${i}`, ok: i % 2 === 0, tags: ["t", i] });

test("rows of one shape: the keys go once, later rows only carry values, all round-trip", () => {
  const rows = Array.from({ length: 10 }, (_, i) => row(i));
  roundTrip({ rows });
  const bytes = new Encoder().encode(rows);
  // The array header, then the first row as 0x14 with its keys, then nine 0x15 rows.
  assert.equal(bytes[5], 0x14);
  const one = new Encoder().encode([row(0)]).length - 5; // a row with its keys, as 0x0c
  const keys = ["id", "name", "ok", "tags"].reduce((n, k) => n + 2 + k.length, 0); // as string8 records
  assert.equal(bytes.length, 5 + one + 9 * (one - keys));
  // Every row after the first names the first one (offset 5 from the payload's start).
  let refs = 0;
  for (let p = 0; p + 4 < bytes.length; p++) {
    if (bytes[p] === 0x15 && bytes[p + 1] === 5 && bytes[p + 2] === 0 && bytes[p + 3] === 0 && bytes[p + 4] === 0) {
      refs++;
    }
  }
  assert.equal(refs, 9);
  const out = viaEncode(rows);
  for (const r of out) assert.deepEqual(Object.keys(r), ["id", "name", "ok", "tags"]);
});

test("shapes: other orders, extra or missing keys, alternating shapes and a shared first key", () => {
  const mixed = [
    { a: 1, b: 2 },
    { b: 2, a: 1 },
    { a: 1, b: 2, c: 3 },
    { a: 1 },
    { a: 5, b: 6 },
    { b: 7, a: 8 },
    { a: 1, b: 2, c: 3 },
    {},
    { a: 9, b: 10 },
  ];
  roundTrip(mixed);
  for (const [i, o] of viaEncode(mixed).entries()) assert.deepEqual(Object.keys(o), Object.keys(mixed[i]), `row ${i}`);
  // Nested rows inside rows, rows at many depths, and the top-level object itself (never a shape).
  const nested = {
    a: 1,
    b: [
      { a: 1, b: [{ a: 2, b: 3 }] },
      {
        a: 4,
        b: [
          { a: 5, b: 6 },
          { a: 7, b: 8 },
        ],
      },
    ],
  };
  roundTrip(nested);
});

test("shapes: 13 and more keys, integer-like keys, non-Latin-1 and __proto__ keys", () => {
  const wide = Array.from({ length: 6 }, (_, i) =>
    Object.fromEntries(Array.from({ length: 20 }, (_, j) => [`f${j}`, i * j])),
  );
  roundTrip(wide);
  const odd = Array.from({ length: 4 }, (_, i) => ({ 10: i, 2: "two", "k\u00e9y": i, "\u4e2d\ud800": [i], z: null }));
  roundTrip(odd);
  const withProto = Array.from({ length: 3 }, (_, i) => JSON.parse(`{"x": ${i}, "__proto__": {"y": ${i}}}`));
  const out = viaEncode(withProto);
  for (const [i, o] of out.entries()) {
    assert.equal(Object.getPrototypeOf(o), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyNames(o), ["x", "__proto__"]);
    assert.deepEqual(Object.getOwnPropertyDescriptor(o, "__proto__").value, { y: i });
  }
  const wideProto = Array.from({ length: 3 }, (_, i) => {
    const o = Object.fromEntries(Array.from({ length: 15 }, (_, j) => [`f${j}`, j]));
    Object.defineProperty(o, "__proto__", { value: i, enumerable: true, writable: true, configurable: true });
    return o;
  });
  for (const [i, o] of viaEncode(wideProto).entries()) {
    assert.equal(Object.getPrototypeOf(o), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(o, "__proto__").value, i);
  }
  // Null-prototype rows keep their prototype (they are never written as shapes).
  const bare = Array.from({ length: 3 }, (_, i) => Object.assign(Object.create(null), { a: i, b: i }));
  for (const o of viaEncode(bare)) assert.equal(Object.getPrototypeOf(o), null);
});

test("shapes: a getter runs once, and one that changes its object's keys sends the payload whole", () => {
  let runs = 0;
  const counted = [
    { a: 1, b: 2 },
    {
      a: 3,
      get b() {
        runs++;
        return 4;
      },
    },
  ];
  assert.deepEqual(viaEncode(counted), [
    { a: 1, b: 2 },
    { a: 3, b: 4 },
  ]);
  assert.equal(runs, 1);
  const changing = {
    a: 1,
    get b() {
      delete this.c;
      return 2;
    },
    c: 3,
  };
  const value = [{ a: 0, b: 0, c: 0 }, changing];
  const bytes = new Encoder().encode(value);
  assert.equal(bytes[0], 0x11, "through node:v8");
  assert.deepEqual(decode(bytes, 0, bytes.length), [
    { a: 0, b: 0, c: 0 },
    { a: 1, b: 2 },
  ]);
});

test("shapes: more distinct shapes than the encoder remembers still round-trip", () => {
  const many = Array.from({ length: 1500 }, (_, i) => ({ [`k${i}`]: i, v: i }));
  roundTrip(many.concat(many.map((o) => ({ ...o }))));
});

test("shapes: the size in the maxPayloadBytes error is the size of the encoding", () => {
  const rows = Array.from({ length: 40 }, (_, i) => row(i));
  const size = new Encoder().encode(rows).length;
  const small = new Encoder({ maxPayloadBytes: 300 });
  assertCodecError(() => small.encode(rows), RangeError, CODEC_ERRORS.LIMIT, new RegExp(`payload of ${size} bytes`));
});

test("shapes: a reference to no shape, to a record that is not one, or to one not yet ended is corrupt", () => {
  const rows = new Encoder().encode([row(1), row(2)]);
  assert.deepEqual(decode(rows, 0, rows.length), [row(1), row(2)]);
  const at = rows.indexOf(0x15);
  const refTo = (off) => {
    const bytes = Uint8Array.from(rows);
    bytes[at + 1] = off;
    bytes[at + 2] = 0;
    bytes[at + 3] = 0;
    bytes[at + 4] = 0;
    return bytes;
  };
  assertCorrupt(refTo(0)); // the array's own tag
  assertCorrupt(refTo(6)); // inside the first row
  assertCorrupt(refTo(at)); // itself
  const beyond = Uint8Array.from(rows);
  beyond[at + 4] = 0x7f;
  assertCorrupt(beyond);
  // The first row as plain 0x0c: nothing defines a shape.
  const plain = Uint8Array.from(rows);
  plain[5] = 0x0c;
  assertCorrupt(plain);
  // A 0x15 inside the 0x14 it names: the shape is not defined until its record ends.
  const inner = new Encoder().encode([{ a: [0, 0, 0, 0, 0], b: 1 }]);
  const self = Uint8Array.from(inner);
  self[5] = 0x14;
  const valueAt = self.indexOf(0x0b, 6); // the inner array [0, 0, 0, 0, 0]
  self.set([0x15, 5, 0, 0, 0, 4, 0, 0, 0, 0], valueAt); // refers to its own record, then filler
  assertCorrupt(self);
  // A shape whose keys outnumber the bytes left.
  const short = rows.subarray(0, at + 5);
  assertCorrupt(Uint8Array.from(short));
});

test("shapes met again in later payloads: objects made from their keys, whatever the keys hold", () => {
  const odd = [
    'q"uote',
    "back\\slash",
    "line\u2028sep",
    "\n",
    "}; throw 1; {",
    "\ud800",
    "constructor",
    "7",
    "`$" + "{x}`",
  ];
  const wide = Array.from({ length: 70 }, (_, i) => `w${i}`); // more keys than a shape gets a builder for
  const make = (keys, seed) =>
    Array.from({ length: 4 }, (_, r) => Object.fromEntries(keys.map((k, i) => [k, [seed, r, i]])));
  const enc = new Encoder();
  for (let payload = 0; payload < 4; payload++) {
    for (const keys of [odd, wide, ["a", "b"]]) {
      const rows = make(keys, payload);
      const bytes = enc.encode(rows);
      const out = decode(bytes, 0, bytes.length);
      assert.deepStrictEqual(out, rows, `payload ${payload}, ${keys.length} keys`);
      for (const o of out) {
        assert.deepEqual(Object.keys(o), Object.keys(rows[0]));
        assert.equal(Object.getPrototypeOf(o), Object.prototype);
      }
    }
  }
});

test("shapes decode where code generation from strings is disallowed", { skip: runtime !== "node" }, async () => {
  const { spawnSync } = await import("node:child_process");
  const script = `
    const { Encoder, decode } = require(${JSON.stringify(require.resolve("../lib/codec/index.js"))});
    const enc = new Encoder();
    for (let p = 0; p < 4; p++) {
      const rows = Array.from({ length: 3 }, (_, r) => ({ a: p, b: r, c: [p, r] }));
      const bytes = enc.encode(rows);
      if (JSON.stringify(decode(bytes, 0, bytes.length)) !== JSON.stringify(rows)) process.exit(3);
    }
    try { new Function("return 1"); process.exit(4); } catch {}
  `;
  const r = spawnSync(process.execPath, ["--disallow-code-generation-from-strings", "-e", script], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
});
