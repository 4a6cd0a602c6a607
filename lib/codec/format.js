"use strict";
// The wire format of knitting-native's value codec: tags, kinds, limits, and the small helpers
// the encoder (encode.js), the decoder (decode.js) and the error explainer (explain.js) share.
//
// knitting-native value codec: JS values <-> bytes in a (Shared)ArrayBuffer-backed Uint8Array.
//
// Wire format. A payload is exactly one value. Every value starts with a tag byte; all multi-byte
// integers and floats are little-endian; "u32" lengths count bytes unless noted.
//   0x00 undefined
//   0x01 null
//   0x02 false
//   0x03 true
//   0x04 int32        i32                                  (integers in int32 range, never -0)
//   0x05 float64      f64                                  (everything else: -0, NaN, +-Infinity, ...)
//   0x06 bigint64     i64                                  (bigint in [-2^63, 2^63))
//   0x07 bigint       u8 sign (0 = +, 1 = -), u32 n, n magnitude bytes (least significant first)
//   0x08 string8      u8 n, n Latin-1 bytes                (string of < 256 chars, all <= U+00FF)
//   0x09 latin1       u32 n, n Latin-1 bytes
//   0x0a utf16        u32 n (code units), 2n bytes UTF-16LE (exact code units, lone surrogates kept)
//   0x0b array        u32 n, n values                      (dense arrays only)
//   0x0c object       u32 n, n x (key: string8|latin1|utf16 value, value)   prototype Object.prototype
//   0x0d object-null  same as 0x0c                         prototype null
//   0x0e date         f64 time value (NaN for an invalid Date)
//   0x0f binary       u8 kind, u32 n, u8 pad, pad zero bytes, n bytes
//                                                          kind: 0 Int8Array 1 Uint8Array
//                     2 Uint8ClampedArray 3 Int16Array 4 Uint16Array 5 Int32Array 6 Uint32Array
//                     7 Float32Array 8 Float64Array 9 BigInt64Array 10 BigUint64Array 11 Buffer
//                     12 DataView 13 ArrayBuffer          (only the view's bytes, raw, in host
//                                                          byte order: little-endian on x64/arm64)
//                     pad (0-7) puts the n bytes at an 8-aligned offset of the buffer written to:
//                     V8 copies to and from a SharedArrayBuffer byte by byte when the two sides
//                     are not equally aligned (Node 20.20, 2-vCPU VM, 2026-12-03: 64 KiB into a
//                     SharedArrayBuffer at offset 6 ~36 us, at offset 8 ~5 us; out of it ~40 vs
//                     ~13 us), and a payload block starts 16-aligned
//   0x10 error        u8 flags, name value, message value, stack value,
//                     [cause value if flags&1], [code value if flags&2], [errors value if flags&4],
//                     [u32 n, n x (key string, value) if flags&8: other own enumerable properties]
//   0x11 v8           u32 n, n bytes of require("node:v8").serialize(value)
//   0x12 shared       u8 kind, u32 origin, u32 seq, u32 byteOffset, u32 byteLength
//                     a SharedArrayBuffer (kind 14) or a view over one (kinds 0-12), by
//                     reference: (origin, seq) names the buffer, which travels beside the
//                     payload (the Encoder's `shared` hook; payload/shared-refs.js); a view keeps
//                     pointing at the same memory (without a hook, a view over one is copied
//                     as 0x0f and a SharedArrayBuffer itself is refused)
//   0x13 transfer     u8 kind, u32 origin, u32 seq, u32 byteLength
//                     a transfer() marker's buffer (kinds 0-13), moved, not copied: (origin, seq)
//                     names the ArrayBuffer that travels beside the payload with a transfer list
//                     (the `shared` hook's transfer/claim; codec/transfer.js, payload/shared-refs.js); only
//                     ever a whole payload
//   0x16 shared-bytes u32 at, u32 gen, u32 byteLength
//                     a SharedBytes (payload/shared-bytes.js), by reference: a descriptor of a
//                     block of the payload region, never its bytes; the receiver takes the block
//                     (protocol/shared-bytes.js) or the call fails; only ever a whole payload
//   0x14 object-def   same as 0x0c, and its key sequence becomes a shape of this payload, named
//                     by the offset of this tag byte from the payload's start
//   0x15 shaped       u32 at, then n values: an object (prototype Object.prototype) whose keys are
//                     the n keys of the 0x14 record at offset `at`, which must lie earlier in the
//                     same payload and end before this record starts
//                     The encoder writes a nested plain object as 0x0c; when a later object in
//                     the payload has exactly the same own enumerable keys in the same order, it
//                     turns the first one's tag into 0x14 and writes the later ones as 0x15:
//                     rows of records send their keys once (encode.js, _plain)
// A value the fast path does not cover (Map, Set, RegExp, boxed primitive, class instance, ...) is
// sent as a nested 0x11 record in place. When an object is reachable twice (shared reference or
// cycle, also through such a record), an array has holes, or containers nest deeper than MAX_DEPTH,
// the encoder restarts and sends the whole payload as a single 0x11 record, so identity stays exact
//
// become Object.prototype, like structuredClone).
//
// Timings quoted below: Node 20.20 on a shared 2-vCPU x64 container (noisy; best of 3 runs of
// 1e6-5e6 iterations), `encodeInto` into a SharedArrayBuffer slot followed by `decode`:
//   [1, 2]                      ~43 ns  (encode ~22, decode ~28)
//   20-field object (literal)   ~1.65 us (encode ~0.5, decode ~1.06)
//   1 KiB Latin-1 string        ~180 ns  (encode ~67, decode ~115; via encode() ~260 ns)

// The codes of the errors for a value that cannot be sent, by what went wrong.
const CODEC_ERRORS = Object.freeze({
  FUNCTION: "KNT_VALUE_FUNCTION",
  SYMBOL: "KNT_VALUE_SYMBOL",
  SERIALIZE: "KNT_VALUE_UNSERIALIZABLE",
  LIMIT: "KNT_VALUE_TOO_LARGE",
});
// Each such error also carries, as `knittingCode`, the numbered code knitting 0.1.62 gives the same
// kind of failure (its "not serializable" and "over the payload cap" are both KNT_ERROR_3), so that
// code written against knitting keeps working.
const KNITTING_CODES = Object.freeze({
  KNT_VALUE_FUNCTION: "KNT_ERROR_0",
  KNT_VALUE_SYMBOL: "KNT_ERROR_1",
  KNT_VALUE_UNSERIALIZABLE: "KNT_ERROR_3",
  KNT_VALUE_TOO_LARGE: "KNT_ERROR_3",
});

const DEFAULT_MAX_PAYLOAD = 8 * 1024 * 1024;
const MAX_DEPTH = 32; // containers nested deeper than this go through node:v8
// Object shapes the encoder remembers per payload (0x14): a bound on its work and memory for a
// payload of many distinct objects; objects past it are written with their keys (0x0c).
const MAX_SHAPES = 1024;

const T_UNDEFINED = 0x00;
const T_NULL = 0x01;
const T_FALSE = 0x02;
const T_TRUE = 0x03;
const T_INT32 = 0x04;
const T_FLOAT64 = 0x05;
const T_BIGINT64 = 0x06;
const T_BIGINT = 0x07;
const T_STR8 = 0x08;
const T_LATIN1 = 0x09;
const T_UTF16 = 0x0a;
const T_ARRAY = 0x0b;
const T_OBJECT = 0x0c;
const T_OBJECT_NULL = 0x0d;
const T_DATE = 0x0e;
const T_BINARY = 0x0f;
const T_ERROR = 0x10;
const T_V8 = 0x11;
const T_SHARED = 0x12;
const T_TRANSFER = 0x13;
const T_OBJECT_DEF = 0x14;
const T_SHAPED = 0x15;
const T_BYTES = 0x16;

/** The code of every error a SharedBytes gives (errors.js re-exports it: the codec cannot require that module). */
const SHARED_BYTES_ERROR = "KNT_SHARED_BYTES";
/**
 * A SharedBytes's method under this key gives the encoder its descriptor,
 * [at, gen, byteLength] with the generation it is sent under, or throws when
 * it may not be sent (released, sent already, another pool's).
 */
const SEND_BYTES = Symbol("knitting-native.sendBytes");

/** What the decoder makes of a 0x16 record: the receiver turns it into a SharedBytes, or fails the call. */
class BytesDescriptor {
  constructor(at, gen, byteLength) {
    this.at = at;
    this.gen = gen;
    this.byteLength = byteLength;
    Object.freeze(this);
  }
}
const K_SHARED_BUFFER = 14;

const K_UINT8 = 1;
const K_BUFFER = 11;
const K_DATAVIEW = 12;
const K_ARRAYBUFFER = 13;
const VIEW_CTORS = [
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
const KIND_BY_TAG = Object.create(null);
for (let i = 0; i < VIEW_CTORS.length; i++) KIND_BY_TAG[VIEW_CTORS[i].name] = i;
// %TypedArray%.prototype[@@toStringTag] getter: the element kind, immune to subclassing and to
// overwritten `constructor` properties; undefined for anything that is not a typed array.
const typedArrayTag = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype),
  Symbol.toStringTag,
).get;

const E_ERR_FLAG_CAUSE = 1;
const E_ERR_FLAG_CODE = 2;
const E_ERR_FLAG_ERRORS = 4;
const E_ERR_FLAG_PROPS = 8;
const ERROR_CTORS = Object.assign(Object.create(null), {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
  AggregateError,
});
const ERROR_OWN_HANDLED = new Set(["name", "message", "stack", "cause", "code", "errors"]);

const OVERFLOW = -1; // internal: does not fit (encodeInto reports it as -1)
const FALLBACK = -2; // internal: restart through node:v8

const ObjectProto = Object.prototype;
const DateProto = Date.prototype;
const ArrayBufferProto = ArrayBuffer.prototype;
const SharedArrayBufferProto = SharedArrayBuffer.prototype;
const getProto = Object.getPrototypeOf;
const hasOwn = Object.prototype.hasOwnProperty;
const isArray = Array.isArray;
const isView = ArrayBuffer.isView;

const dateGetTime = Date.prototype.getTime;
const fromCharCode = String.fromCharCode;
const NON_LATIN1 = /[^\x00-\xff]/;

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/** A view's record kind (typed array, Buffer, DataView); undefined for a typed array kind newer than the codec. */
function viewKind(view) {
  if (view instanceof Buffer) return K_BUFFER;
  const tag = typedArrayTag.call(view);
  return tag === undefined ? K_DATAVIEW : KIND_BY_TAG[tag];
}

/**
 * The record kind of a binary value that can move: an ArrayBuffer (K_ARRAYBUFFER), or a view's kind
 * (viewKind, over any buffer); undefined for anything else. Its buffer is the value itself for
 * K_ARRAYBUFFER, else `value.buffer`.
 */
function binaryKind(value) {
  if (value === null || typeof value !== "object") return undefined;
  if (getProto(value) === ArrayBufferProto) return K_ARRAYBUFFER;
  return isView(value) ? viewKind(value) : undefined;
}

// --- detached buffers -----------------------------------------------------------------------------
// Node 20's V8 has no ArrayBuffer.prototype.detached, so fall back to "zero length and slice() throws".
function isDetachedBuffer(ab) {
  if (ab.byteLength !== 0) return false;
  const d = ab.detached;
  if (typeof d === "boolean") return d;
  try {
    ab.slice(0, 0);
    return false;
  } catch {
    return true;
  }
}

// Thrown inside the encoder and turned into the public error (with a path) at the top level.
class Unsendable {
  constructor(kind, value) {
    this.kind = kind; // "function" | "symbol" | "detached" | "v8" (value = the error v8 threw)
    this.value = value;
  }
}

const OWN_ERRORS = new WeakSet(); // errors this module created, passed through unchanged
// What an error says without where (`detail`) and where in the value (`path`, from its root: "" is
// the value itself, ".a[1]" inside it; null when unknown), for the pool to say which task's
// argument or result it was (errors.js, placeValueError).
const PLACES = new WeakMap();

function codecError(Ctor, code, message, cause, detail = null, path = null) {
  const err = cause === undefined ? new Ctor(message) : new Ctor(message, { cause });
  err.code = code;
  if (KNITTING_CODES[code] !== undefined) err.knittingCode = KNITTING_CODES[code];
  OWN_ERRORS.add(err);
  if (detail !== null) PLACES.set(err, { detail, path });
  return err;
}

/** `{ detail, path }` of an error codecError made with them, else null. */
function placeOf(err) {
  return PLACES.get(err) || null;
}

module.exports = {
  T_BYTES,
  SHARED_BYTES_ERROR,
  SEND_BYTES,
  BytesDescriptor,
  ArrayBufferProto,
  CODEC_ERRORS,
  DEFAULT_MAX_PAYLOAD,
  DateProto,
  ERROR_CTORS,
  ERROR_OWN_HANDLED,
  E_ERR_FLAG_CAUSE,
  E_ERR_FLAG_CODE,
  E_ERR_FLAG_ERRORS,
  E_ERR_FLAG_PROPS,
  FALLBACK,
  I64_MAX,
  I64_MIN,
  KIND_BY_TAG,
  K_ARRAYBUFFER,
  K_BUFFER,
  K_DATAVIEW,
  K_SHARED_BUFFER,
  K_UINT8,
  MAX_DEPTH,
  MAX_SHAPES,
  NON_LATIN1,
  OVERFLOW,
  OWN_ERRORS,
  ObjectProto,
  SharedArrayBufferProto,
  T_ARRAY,
  T_BIGINT,
  T_BIGINT64,
  T_BINARY,
  T_DATE,
  T_ERROR,
  T_FALSE,
  T_FLOAT64,
  T_INT32,
  T_LATIN1,
  T_NULL,
  T_OBJECT,
  T_OBJECT_DEF,
  T_OBJECT_NULL,
  T_SHAPED,
  T_SHARED,
  T_STR8,
  T_TRANSFER,
  T_TRUE,
  T_UNDEFINED,
  T_UTF16,
  T_V8,
  Unsendable,
  VIEW_CTORS,
  codecError,
  placeOf,
  dateGetTime,
  fromCharCode,
  getProto,
  hasOwn,
  isArray,
  isDetachedBuffer,
  isView,
  typedArrayTag,
  viewKind,
  binaryKind,
};
