"use strict";
// The decoder: bytes of the wire format (format.js) -> JS values. Every byte read may come from
// shared memory that task code can write: anything that does not decode is a RangeError.

const v8 = require("../lazy-v8.js");
const {
  MAX_DEPTH,
  T_UNDEFINED,
  T_NULL,
  T_FALSE,
  T_TRUE,
  T_INT32,
  T_FLOAT64,
  T_BIGINT64,
  T_BIGINT,
  T_STR8,
  T_LATIN1,
  T_UTF16,
  T_ARRAY,
  T_OBJECT,
  T_OBJECT_NULL,
  T_DATE,
  T_BINARY,
  T_ERROR,
  T_V8,
  T_SHARED,
  T_TRANSFER,
  T_OBJECT_DEF,
  T_SHAPED,
  T_BYTES,
  BytesDescriptor,
  K_SHARED_BUFFER,
  K_UINT8,
  K_BUFFER,
  K_DATAVIEW,
  K_ARRAYBUFFER,
  VIEW_CTORS,
  E_ERR_FLAG_CAUSE,
  E_ERR_FLAG_CODE,
  E_ERR_FLAG_ERRORS,
  E_ERR_FLAG_PROPS,
  ERROR_CTORS,
  isArray,
  fromCharCode,
} = require("./format.js");
const { describeThrown } = require("./explain.js");
const { copyBytes } = require("./copy.js");
const { longString } = require("./long-string.js");

// ------------------------------------------------------------------------------------------------
// Decoder
// ------------------------------------------------------------------------------------------------
// Module state for the current decode (decode is synchronous and never runs user code).
// `var`, not `let`: closures over module-level `let` pay a TDZ check on every access.
var dU8 = null;
var dPos = 0;
var dEnd = 0;
var dLastSource = null; // first-level cache key (the view), see Encoder#_bind
var dBufKey = null; // source.buffer the DataView/Buffer below belong to
var dDv = null;
var dDvEnd = 0; // dDv's byteLength, kept as a number: reading it throws once the buffer is detached
var dNb = null;
var dBo = 0;
var dPlain = false; // the source is a plain Uint8Array (so its slice() is one too)

function corrupt(why, at) {
  return new RangeError(`knitting-native: corrupt payload (${why} at byte ${at})`);
}

// How the decode in progress finds a SharedArrayBuffer named by (origin, seq): decode's `shared`.
var dShared = null;
// The object shapes of the decode in progress (0x14 records, format.js): offset from the payload's
// start -> { keys, template }, added when a 0x14 record has been read whole.
const dShapes = new Map();
var dStart = 0;

function decode(source, offset, length, shared) {
  if (
    !(source instanceof Uint8Array) ||
    offset >>> 0 !== offset ||
    length >>> 0 !== length ||
    offset + length > source.length
  ) {
    throw new RangeError(
      "knitting-native: decode(source, offset, length) needs a Uint8Array source " +
        "and integer offset/length inside it",
    );
  }
  if (source !== dLastSource) {
    const buf = source.buffer;
    if (buf !== dBufKey || dDvEnd < source.byteOffset + source.length) {
      dBufKey = buf;
      // Fixed-length, also over a growable buffer: see lib/payload/region.js, the region's view.
      dDvEnd = buf.byteLength;
      dDv = new DataView(buf, 0, dDvEnd);
      dNb = null;
    }
    dLastSource = source;
    dBo = source.byteOffset;
    dPlain = Object.getPrototypeOf(source) === Uint8Array.prototype;
  } else if (dDvEnd < dBo + offset + length) {
    // The same length-tracking view, over a buffer that has grown since.
    dDvEnd = dBufKey.byteLength;
    dDv = new DataView(dBufKey, 0, dDvEnd);
    dNb = null;
  }
  dU8 = source;
  dPos = offset;
  dEnd = offset + length;
  dShared = shared === undefined ? null : shared;
  dStart = offset;
  let v;
  try {
    v = readValue(0);
    if (dPos !== dEnd) throw corrupt(`${dEnd - dPos} trailing bytes`, dPos);
  } finally {
    dU8 = null;
    dShared = null;
    if (dShapes.size !== 0) dShapes.clear();
  }
  return v;
}

function need(n) {
  if (dPos + n > dEnd) throw corrupt(`truncated: need ${n} more bytes`, dPos);
}

function r32() {
  const u8 = dU8;
  const p = dPos;
  dPos = p + 4;
  return (u8[p] | (u8[p + 1] << 8) | (u8[p + 2] << 16) | (u8[p + 3] << 24)) >>> 0;
}

function readValue(d) {
  if (dPos >= dEnd) throw corrupt("truncated: missing value", dPos);
  const tag = dU8[dPos++];
  switch (tag) {
    case T_UNDEFINED:
      return undefined;
    case T_NULL:
      return null;
    case T_FALSE:
      return false;
    case T_TRUE:
      return true;
    case T_INT32: {
      need(4);
      const u8 = dU8;
      const p = dPos;
      dPos = p + 4;
      return u8[p] | (u8[p + 1] << 8) | (u8[p + 2] << 16) | (u8[p + 3] << 24);
    }
    case T_FLOAT64: {
      need(8);
      const v = dDv.getFloat64(dBo + dPos, true);
      dPos += 8;
      return v;
    }
    case T_STR8:
    case T_LATIN1:
    case T_UTF16:
      return readString(tag);
    case T_ARRAY:
      return readArray(d);
    case T_OBJECT:
      return readObject(d);
    case T_OBJECT_NULL:
      return readNullProtoObject(d);
    case T_BIGINT64: {
      need(8);
      const v = dDv.getBigInt64(dBo + dPos, true);
      dPos += 8;
      return v;
    }
    case T_BIGINT:
      return readBigInt();
    case T_DATE: {
      need(8);
      const t = dDv.getFloat64(dBo + dPos, true);
      dPos += 8;
      return new Date(t);
    }
    case T_BINARY:
      return readBinary();
    case T_ERROR:
      return readError(d);
    case T_V8:
      return readV8();
    case T_SHARED:
      return readShared();
    case T_TRANSFER:
      return readTransfer(d);
    case T_OBJECT_DEF:
      return readObjectDef(d, dPos - 1 - dStart);
    case T_SHAPED:
      return readShaped(d);
    case T_BYTES:
      return readBytes(d);
  }
  throw corrupt(`unknown tag 0x${tag.toString(16).padStart(2, "0")}`, dPos - 1);
}

function readString(tag) {
  let n;
  if (tag === T_STR8) {
    need(1);
    n = dU8[dPos++];
  } else {
    need(4);
    n = r32();
  }
  if (tag === T_UTF16) {
    if (n > (dEnd - dPos) / 2) throw corrupt(`truncated: string of ${n} UTF-16 units`, dPos);
    const p = dPos;
    dPos = p + 2 * n;
    if (n <= 16) {
      const u8 = dU8;
      let s = "";
      for (let i = 0; i < n; i++) s += fromCharCode(u8[p + 2 * i] | (u8[p + 2 * i + 1] << 8));
      return s;
    }
    return longString(dU8, p, n, true) ?? sourceBuffer().ucs2Slice(dBo + p, dBo + p + 2 * n);
  }
  if (n > dEnd - dPos) throw corrupt(`truncated: string of ${n} bytes`, dPos);
  const p = dPos;
  dPos = p + n;
  if (n <= 12) return shortLatin1(dU8, p, n);
  // latin1Slice: ~45 ns fixed; 1 KiB ~110 ns. Long strings leave the V8 heap (long-string.js).
  return longString(dU8, p, n, false) ?? sourceBuffer().latin1Slice(dBo + p, dBo + p + n);
}

// String.fromCharCode with a fixed argument count: 8 chars ~15 ns, vs ~50 ns for a += loop and ~43 ns
// for Buffer#latin1Slice (measured); object keys are usually this short.
function shortLatin1(u8, p, n) {
  switch (n) {
    case 0:
      return "";
    case 1:
      return fromCharCode(u8[p]);
    case 2:
      return fromCharCode(u8[p], u8[p + 1]);
    case 3:
      return fromCharCode(u8[p], u8[p + 1], u8[p + 2]);
    case 4:
      return fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3]);
    case 5:
      return fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3], u8[p + 4]);
    case 6:
      return fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3], u8[p + 4], u8[p + 5]);
    case 7:
      return fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3], u8[p + 4], u8[p + 5], u8[p + 6]);
    case 8:
      return fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3], u8[p + 4], u8[p + 5], u8[p + 6], u8[p + 7]);
  }
  return (
    fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3], u8[p + 4], u8[p + 5], u8[p + 6], u8[p + 7]) +
    shortLatin1(u8, p + 8, n - 8)
  );
}

function sourceBuffer() {
  let nb = dNb;
  // A Buffer over a growable SharedArrayBuffer keeps the length it was made
  // with: make a new one when the buffer has grown past it.
  if (nb === null || nb.length < dBo + dEnd) nb = dNb = Buffer.from(dBufKey, 0, dBufKey.byteLength);
  return nb;
}

function readArray(d) {
  if (d >= MAX_DEPTH) throw corrupt("nesting too deep", dPos - 1);
  need(4);
  const n = r32();
  if (n > dEnd - dPos) throw corrupt(`array length ${n} larger than the payload`, dPos - 4);
  // Literals for the smallest arrays: exact-size packed backing store, no growth call (push on []
  // spent ~10% of the [1, 2] decode in GrowFastSmiOrObjectElements).
  d += 1;
  switch (n) {
    case 0:
      return [];
    case 1:
      return [readValue(d)];
    case 2: {
      const a0 = readValue(d);
      return [a0, readValue(d)];
    }
    case 3: {
      const a0 = readValue(d);
      const a1 = readValue(d);
      return [a0, a1, readValue(d)];
    }
    case 4: {
      const a0 = readValue(d);
      const a1 = readValue(d);
      const a2 = readValue(d);
      return [a0, a1, a2, readValue(d)];
    }
  }
  const a = [];
  for (let i = 0; i < n; i++) a.push(readValue(d));
  return a;
}

// Object keys repeat from call to call. Short Latin-1 keys are looked up in a direct-mapped cache
// (hash of the bytes -> the string decoded last time for that slot, verified byte by byte), so a
// repeated key costs no allocation and is already internalized when used as a property name.
// 20-field object decode: ~2.0 us without the cache, ~1.5 us with it.
const KEY_CACHE_MASK = 1023;
const KEY_CACHE_MAX = 24;
const keyCache = new Array(KEY_CACHE_MASK + 1).fill("");
var lastKeySlot = -1; // cache slot of the last key readKey returned, -1 if not cacheable

function readKey() {
  if (dPos >= dEnd) throw corrupt("truncated: missing key", dPos);
  const tag = dU8[dPos++];
  if (tag === T_STR8 && dPos < dEnd) {
    const u8 = dU8;
    const n = u8[dPos];
    const p = dPos + 1;
    if (n <= KEY_CACHE_MAX && p + n <= dEnd) {
      dPos = p + n;
      let h = n;
      for (let i = 0; i < n; i++) h = Math.imul(h ^ u8[p + i], 0x01000193);
      const slot = (h ^ (h >>> 15)) & KEY_CACHE_MASK;
      lastKeySlot = slot;
      const s = keyCache[slot];
      if (s.length === n) {
        let i = 0;
        while (i < n && s.charCodeAt(i) === u8[p + i]) i++;
        if (i === n) return s;
      }
      const k = shortLatin1(u8, p, n);
      keyCache[slot] = k;
      return k;
    }
  }
  lastKeySlot = -1;
  if (tag !== T_STR8 && tag !== T_LATIN1 && tag !== T_UTF16) {
    throw corrupt(`object key has tag 0x${tag.toString(16).padStart(2, "0")}`, dPos - 1);
  }
  return readString(tag);
}

function defineData(o, k, v, enumerable) {
  Object.defineProperty(o, k, { value: v, writable: true, enumerable, configurable: true });
}

function readCount(d) {
  if (d >= MAX_DEPTH) throw corrupt("nesting too deep", dPos - 1);
  need(4);
  const n = r32();
  if (n > (dEnd - dPos) / 3) throw corrupt(`object size ${n} larger than the payload`, dPos - 4);
  return n;
}

function readNullProtoObject(d) {
  const n = readCount(d);
  const o = Object.create(null);
  for (let i = 0; i < n; i++) {
    const k = readKey();
    o[k] = readValue(d + 1); // "__proto__" is an ordinary key without Object.prototype
  }
  return o;
}

// Objects with more than SHAPE_MIN_KEYS keys: V8 turns an object that grows past ~17 properties
// through keyed stores into a slow dictionary object (most of the decode time went into that
// normalisation). For those, the decoder remembers the key sequence with a fast-mode template and
// builds later objects of that shape as {...template} + stores into existing fields.
// 20-field object decode: ~1.5 us -> ~1.05 us. Small objects skip this (it cost them ~20%).
const SHAPE_MIN_KEYS = 12;
const SHAPE_MASK = 255;
// The cache: one shape { keys, template, build, seen } per slot, by a hash of the key sequence
// (readFields); 0x14 records (readObjectDef) use it too.
const shapeCache = new Array(SHAPE_MASK + 1).fill(null);
const pendingKeys = []; // a stack shared by nested objects being decoded
const pendingValues = [];
var pendingTop = 0;

// A shape met in BUILD_AFTER payloads (a 0x14 shape, or a key sequence of readObject's cache) gets a
// function that makes its objects from an object literal: for 20 keys ~30 ns an object against
// ~350-540 ns for a template copy and 20 keyed stores (Node 20.20, 2026-12-04, one process, 1e6
// objects). Its source names the keys as JSON string literals (JSON.stringify escapes every
// character that could end one), never "__proto__" (a literal would set the prototype with it),
// and at most BUILD_MAX_KEYS of them, so that the compile (tens of us) is paid once per shape that
// repeats, not per payload. Where code generation is disallowed
// (--disallow-code-generation-from-strings), objects are made as before.
const BUILD_AFTER = 2;
const BUILD_MAX_KEYS = 64;
var canBuild = true;

function builder(keys) {
  if (!canBuild || keys.length > BUILD_MAX_KEYS || keys.includes("__proto__")) return null;
  if (new Set(keys).size !== keys.length) return null; // duplicate keys: only corrupt input
  const fields = keys.map((k, i) => `${JSON.stringify(k)}: v[b + ${i}]`);
  try {
    return new Function("v", "b", `return { ${fields.join(", ")} };`);
  } catch {
    canBuild = false;
    return null;
  }
}

// An object from a shape's builder and the values pendingValues[base, base + n), which it clears.
function built(build, base, n) {
  const o = build(pendingValues, base);
  for (let i = 0; i < n; i++) {
    pendingKeys[base + i] = undefined;
    pendingValues[base + i] = undefined;
  }
  return o;
}

// Reads n keys and their values onto the pending stack, from pendingTop on (the caller's base),
// and returns the cache slot of the key sequence, or -1 when a key cannot be cached (long or not
// string8).
function readFields(d, n) {
  const base = pendingTop;
  pendingTop = base + n;
  let h = n;
  let cacheable = true;
  try {
    for (let i = 0; i < n; i++) {
      const k = readKey();
      if (lastKeySlot < 0) cacheable = false;
      h = Math.imul(h ^ lastKeySlot, 0x01000193);
      pendingKeys[base + i] = k;
      pendingValues[base + i] = readValue(d + 1);
    }
  } finally {
    pendingTop = base;
  }
  return cacheable ? (h ^ (h >>> 13)) & SHAPE_MASK : -1;
}

function readObject(d) {
  const n = readCount(d);
  if (n <= SHAPE_MIN_KEYS) {
    const o = {};
    for (let i = 0; i < n; i++) {
      const k = readKey();
      const v = readValue(d + 1);
      if (k === "__proto__") defineData(o, k, v, true);
      else o[k] = v;
    }
    return o;
  }
  const base = pendingTop;
  const slot = readFields(d, n);
  if (slot < 0) return objectOf(null, base, n);
  return objectOf(cachedShape(slot, base, n), base, n);
}

// 0x14: an object written as 0x0c whose key sequence later 0x15 records of the payload reuse. Its
// shape comes from the cache, so a payload like the one before it allocates no shape.
function readObjectDef(d, at) {
  const n = readCount(d);
  const base = pendingTop;
  const slot = readFields(d, n);
  const shape = slot < 0 ? newShape(base, n) : cachedShape(slot, base, n);
  dShapes.set(at, shape);
  return objectOf(shape, base, n);
}

// The cached shape of the key sequence pendingKeys[base, base + n) (slot: its hash), made when the
// slot holds another; one met in BUILD_AFTER payloads gets its builder.
function cachedShape(slot, base, n) {
  let shape = shapeCache[slot];
  if (shape === null || !sameKeys(shape.keys, base, n)) {
    shape = newShape(base, n);
    shapeCache[slot] = shape;
  } else if (shape.build === null && ++shape.seen === BUILD_AFTER) {
    shape.build = builder(shape.keys);
  }
  return shape;
}

// The object of the keys (shape's, or pendingKeys' when shape is null) and the values
// pendingValues[base, base + n), which it clears so as not to keep decoded values alive.
function objectOf(shape, base, n) {
  if (shape !== null && shape.build !== null) return built(shape.build, base, n);
  const t = shape === null ? null : shape.template;
  const o = t === null ? {} : { ...t };
  for (let i = 0; i < n; i++) {
    const k = pendingKeys[base + i]; // the shape's keys are these (sameKeys)
    const v = pendingValues[base + i];
    pendingKeys[base + i] = undefined;
    pendingValues[base + i] = undefined;
    if (t === null && k === "__proto__") defineData(o, k, v, true);
    else o[k] = v;
  }
  return o;
}

function sameKeys(keys, base, n) {
  if (keys.length !== n) return false;
  for (let i = 0; i < n; i++) if (keys[i] !== pendingKeys[base + i]) return false;
  return true;
}

function newShape(base, n) {
  const keys = pendingKeys.slice(base, base + n);
  let template = null;
  if (n > SHAPE_MIN_KEYS && !keys.includes("__proto__")) {
    const t = {};
    for (let i = 0; i < n; i++) t[keys[i]] = undefined;
    template = { ...t }; // a fast-mode copy even when `t` went dictionary
    if (Object.keys(template).length !== n) template = null; // duplicate keys: only corrupt input
  }
  return { keys, template, build: null, seen: 0 };
}

// 0x15: an object whose keys are those of an earlier 0x14 record of this payload.
function readShaped(d) {
  const at = dPos - 1;
  if (d >= MAX_DEPTH) throw corrupt("nesting too deep", at);
  need(4);
  const ref = r32();
  const shape = dShapes.get(ref);
  if (shape === undefined) throw corrupt(`no object shape at offset ${ref}`, at + 1);
  const keys = shape.keys;
  const n = keys.length;
  if (n > dEnd - dPos) throw corrupt(`object size ${n} larger than the payload`, at + 1);
  if (shape.build !== null) {
    const base = pendingTop;
    pendingTop = base + n;
    try {
      for (let i = 0; i < n; i++) pendingValues[base + i] = readValue(d + 1);
    } finally {
      pendingTop = base;
    }
    return built(shape.build, base, n);
  }
  const t = shape.template;
  if (t !== null) {
    const o = { ...t };
    for (let i = 0; i < n; i++) o[keys[i]] = readValue(d + 1);
    return o;
  }
  const o = {};
  for (let i = 0; i < n; i++) {
    const k = keys[i];
    const v = readValue(d + 1);
    if (k === "__proto__") defineData(o, k, v, true);
    else o[k] = v;
  }
  return o;
}

const HEX_BYTE = [];
for (let i = 0; i < 256; i++) HEX_BYTE.push(i.toString(16).padStart(2, "0"));

function readBigInt() {
  need(5);
  const sign = dU8[dPos++];
  if (sign > 1) throw corrupt("bad bigint sign", dPos - 1);
  const n = r32();
  if (n > dEnd - dPos) throw corrupt(`truncated: bigint of ${n} bytes`, dPos);
  const u8 = dU8;
  const p = dPos;
  dPos = p + n;
  const parts = new Array(n);
  for (let i = 0; i < n; i++) parts[i] = HEX_BYTE[u8[p + n - 1 - i]];
  const m = n === 0 ? 0n : BigInt("0x" + parts.join(""));
  return sign === 1 ? -m : m;
}

// V8 keeps the bytes of typed arrays up to this size on its heap (typed_array_max_size_in_heap).
const ON_HEAP_BYTES = 64;
// %TypedArray%.prototype.slice on the plain prototype: a Uint8Array over a new, unshared ArrayBuffer
// (not Buffer#slice, which is a view).
const uint8Slice = Uint8Array.prototype.slice;

function copyOut(p, n) {
  // A fresh, unshared ArrayBuffer: the source slot is reused after decode returns. From 1 KiB its
  // memory is not zero-filled first (every byte is written by the copy).
  if (n < 1024) {
    const ab = new ArrayBuffer(n);
    new Uint8Array(ab).set(dU8.subarray(p, p + n));
    return ab;
  }
  const buf = Buffer.allocUnsafeSlow(n);
  copyBytes(buf, 0, dU8.subarray(p, p + n));
  return buf.buffer;
}

function readBinary() {
  need(6);
  const kind = dU8[dPos++];
  const n = r32();
  const pad = dU8[dPos++];
  if (kind > K_ARRAYBUFFER) throw corrupt(`unknown binary kind ${kind}`, dPos - 6);
  if (pad > 7) throw corrupt(`binary padding of ${pad} bytes`, dPos - 1);
  if (pad + n > dEnd - dPos) throw corrupt(`truncated: binary of ${n} bytes`, dPos);
  const p = dPos + pad;
  if (kind < K_BUFFER) {
    const Ctor = VIEW_CTORS[kind];
    if (n % Ctor.BYTES_PER_ELEMENT !== 0) throw corrupt(`${Ctor.name} of ${n} bytes`, p - 4);
    dPos = p + n;
    // A small Uint8Array: one copy into a fresh array whose bytes V8 keeps
    // on its heap (up to 64 bytes), ~5x faster than an ArrayBuffer first
    // (Node 20.20, 2-vCPU VM, 2026-12-03: 16-64 B ~0.22 us vs ~1.0-1.4 us;
    // from 200 B on both are the same allocation and copy).
    if (kind === K_UINT8 && n <= ON_HEAP_BYTES && dPlain) return uint8Slice.call(dU8, p, p + n);
    return new Ctor(copyOut(p, n));
  }
  dPos = p + n;
  const ab = copyOut(p, n);
  if (kind === K_BUFFER) return Buffer.from(ab);
  if (kind === K_DATAVIEW) return new DataView(ab);
  return ab;
}

function readShared() {
  need(17);
  const at = dPos - 1;
  const kind = dU8[dPos++];
  const origin = r32();
  const seq = r32();
  const byteOffset = r32();
  const byteLength = r32();
  if (kind > K_DATAVIEW && kind !== K_SHARED_BUFFER) throw corrupt(`unknown shared kind ${kind}`, at + 1);
  if (dShared === null) throw corrupt("a SharedArrayBuffer reference where none can be resolved", at);
  const sab = dShared.resolve(origin, seq);
  if (!(sab instanceof SharedArrayBuffer) || byteOffset > sab.byteLength || byteLength > sab.byteLength - byteOffset) {
    throw corrupt(`shared reference ${origin}:${seq} does not resolve to a SharedArrayBuffer holding its range`, at);
  }
  if (kind === K_SHARED_BUFFER) return sab;
  if (kind === K_BUFFER) return Buffer.from(sab, byteOffset, byteLength);
  if (kind === K_DATAVIEW) return new DataView(sab, byteOffset, byteLength);
  const Ctor = VIEW_CTORS[kind];
  if (byteLength % Ctor.BYTES_PER_ELEMENT !== 0 || byteOffset % Ctor.BYTES_PER_ELEMENT !== 0) {
    throw corrupt(`${Ctor.name} over shared bytes ${byteOffset}+${byteLength}`, at);
  }
  return new Ctor(sab, byteOffset, byteLength / Ctor.BYTES_PER_ELEMENT);
}

/** A transfer() marker's buffer, moved beside the payload (codec/transfer.js): only a whole payload. */
// A SharedBytes descriptor: what it names is checked when the receiver takes it (Rust checks the block).
function readBytes(d) {
  need(12);
  const at = dPos - 1;
  if (d !== 0) throw corrupt("a shared-bytes record inside another value", at);
  return new BytesDescriptor(r32(), r32(), r32());
}

function readTransfer(d) {
  need(13);
  const at = dPos - 1;
  const kind = dU8[dPos++];
  const origin = r32();
  const seq = r32();
  const byteLength = r32();
  if (d !== 0) throw corrupt("a transfer record inside another value", at);
  if (kind > K_ARRAYBUFFER) throw corrupt(`unknown transfer kind ${kind}`, at + 1);
  if (dShared === null || typeof dShared.claim !== "function") {
    throw corrupt("a transfer record where no transferred buffer can be received", at);
  }
  const ab = dShared.claim(origin, seq);
  if (ab === undefined || Object.getPrototypeOf(ab) !== ArrayBuffer.prototype || ab.byteLength !== byteLength) {
    throw corrupt(`transfer ${origin}:${seq} does not name a received ArrayBuffer of ${byteLength} bytes`, at);
  }
  if (kind === K_ARRAYBUFFER) return ab;
  if (kind === K_BUFFER) return Buffer.from(ab);
  if (kind === K_DATAVIEW) return new DataView(ab);
  const Ctor = VIEW_CTORS[kind];
  if (byteLength % Ctor.BYTES_PER_ELEMENT !== 0) throw corrupt(`${Ctor.name} over ${byteLength} bytes`, at);
  return new Ctor(ab);
}

function printable(v) {
  if (typeof v !== "object" || v === null) return true;
  try {
    String(v);
    return true;
  } catch {
    return false;
  }
}

function readError(d) {
  if (d >= MAX_DEPTH) throw corrupt("nesting too deep", dPos - 1);
  need(1);
  const at = dPos;
  const flags = dU8[dPos++];
  if (flags > 15) throw corrupt("bad error flags", at);
  d += 1;
  const name = readValue(d);
  const message = readValue(d);
  const stack = readValue(d);
  const hasCause = (flags & E_ERR_FLAG_CAUSE) !== 0;
  const cause = hasCause ? readValue(d) : undefined;
  const code = flags & E_ERR_FLAG_CODE ? readValue(d) : undefined;
  const errors = flags & E_ERR_FLAG_ERRORS ? readValue(d) : undefined;
  if (errors !== undefined && !isArray(errors)) throw corrupt("AggregateError errors is not an array", dPos);
  // An error's name and message become strings when it is printed; one that
  // cannot (a null-prototype object: no toString) is not what the encoder
  // writes. Checked here, not left to the runtime: V8 in Node throws a bare
  // TypeError while formatting such an error, Bun and Deno do not.
  if (!printable(name) || !printable(message)) {
    throw corrupt("error name or message that cannot become a string", at);
  }

  const Ctor = typeof name === "string" ? ERROR_CTORS[name] : undefined;
  const msg = typeof message === "string" ? message : undefined;
  const opts = hasCause ? { cause } : undefined;
  // No stack capture for the new object: its stack is replaced by the original one anyway.
  const limit = Error.stackTraceLimit;
  let e;
  try {
    Error.stackTraceLimit = 0;
    if (Ctor === AggregateError) e = new AggregateError(errors === undefined ? [] : errors, msg, opts);
    else if (Ctor !== undefined) e = new Ctor(msg, opts);
    else e = new Error(msg, opts);
  } finally {
    Error.stackTraceLimit = limit;
  }
  if (Ctor === undefined) {
    Object.defineProperty(e, "name", { value: name, writable: true, enumerable: false, configurable: true });
  }
  if (message !== undefined && msg === undefined) {
    Object.defineProperty(e, "message", { value: message, writable: true, enumerable: false, configurable: true });
  }
  if (errors !== undefined && Ctor !== AggregateError) {
    Object.defineProperty(e, "errors", { value: errors, writable: true, enumerable: false, configurable: true });
  }
  try {
    Object.defineProperty(e, "stack", { value: stack, writable: true, enumerable: false, configurable: true });
  } catch {
    // Replacing the stack makes V8 print the error once, turning name and
    // message into strings: a value the encoder cannot have written there
    // (a null-prototype object has no toString) throws a TypeError.
    throw corrupt("error name or message that cannot become a string", at);
  }
  if (flags & E_ERR_FLAG_CODE) e.code = code;
  if (flags & E_ERR_FLAG_PROPS) {
    need(4);
    const n = r32();
    if (n > (dEnd - dPos) / 3) throw corrupt(`error property count ${n} larger than the payload`, dPos - 4);
    for (let i = 0; i < n; i++) {
      const k = readKey();
      const v = readValue(d);
      Object.defineProperty(e, k, { value: v, writable: true, enumerable: true, configurable: true });
    }
  }
  return e;
}

function readV8() {
  need(4);
  const n = r32();
  if (n > dEnd - dPos) throw corrupt(`truncated: v8 record of ${n} bytes`, dPos);
  const p = dPos;
  dPos = p + n;
  // Copy first: node:v8 deserializes typed arrays as views into its input buffer.
  const copy = Buffer.from(copyOut(p, n));
  try {
    return v8.deserialize(copy);
  } catch (err) {
    const e =
      err instanceof RangeError && /call stack/.test(err.message)
        ? new RangeError(`knitting-native: payload nests too deeply for node:v8 to deserialize (${err.message})`)
        : corrupt(`v8 record rejected: ${describeThrown(err)}`, p);
    e.cause = err;
    throw e;
  }
}

module.exports = { decode };
