"use strict";
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
//   0x0f binary       u8 kind, u32 n, n bytes              kind: 0 Int8Array 1 Uint8Array
//                     2 Uint8ClampedArray 3 Int16Array 4 Uint16Array 5 Int32Array 6 Uint32Array
//                     7 Float32Array 8 Float64Array 9 BigInt64Array 10 BigUint64Array 11 Buffer
//                     12 DataView 13 ArrayBuffer          (only the view's bytes, raw, in host
//                                                          byte order: little-endian on x64/arm64)
//   0x10 error        u8 flags, name value, message value, stack value,
//                     [cause value if flags&1], [code value if flags&2], [errors value if flags&4],
//                     [u32 n, n x (key string, value) if flags&8: other own enumerable properties]
//   0x11 v8           u32 n, n bytes of require("node:v8").serialize(value)
//   0x12 shared       u8 kind, u32 origin, u32 seq, u32 byteOffset, u32 byteLength
//                     a SharedArrayBuffer (kind 14) or a view over one (kinds 0-12), by
//                     reference: (origin, seq) names the buffer, which travels beside the
//                     payload (the Encoder's `shared` hook; shared-refs.js); a view keeps
//                     pointing at the same memory (without a hook, a view over one is copied
//                     as 0x0f and a SharedArrayBuffer itself is refused)
// A value the fast path does not cover (Map, Set, RegExp, boxed primitive, class instance, ...) is
// sent as a nested 0x11 record in place. When an object is reachable twice (shared reference or
// cycle, also through such a record), an array has holes, or containers nest deeper than MAX_DEPTH,
// the encoder restarts and sends the whole payload as a single 0x11 record, so identity stays exact
// (node:v8 rules then apply to the whole value: Errors lose `code`/custom names, null prototypes
// become Object.prototype, like structuredClone).
//
// Timings quoted below: Node 20.20 on a shared 2-vCPU x64 container (noisy; best of 3 runs of
// 1e6-5e6 iterations), `encodeInto` into a SharedArrayBuffer slot followed by `decode`:
//   [1, 2]                      ~43 ns  (encode ~22, decode ~28)
//   20-field object (literal)   ~1.65 us (encode ~0.5, decode ~1.06)
//   1 KiB Latin-1 string        ~180 ns  (encode ~67, decode ~115; via encode() ~260 ns)

const v8 = require("node:v8");

const CODEC_ERRORS = Object.freeze({
  FUNCTION: "KNT_ERROR_0",
  SYMBOL: "KNT_ERROR_1",
  SERIALIZE: "KNT_ERROR_2",
  LIMIT: "KNT_ERROR_3",
});

const DEFAULT_MAX_PAYLOAD = 8 * 1024 * 1024;
const MAX_DEPTH = 32; // containers nested deeper than this go through node:v8
const INITIAL_SCRATCH = 4096;
const SHRINK_SCRATCH = 1024 * 1024; // a scratch buffer grown past this is dropped on the next encode()
const SEEN_LINEAR = 16; // identity tracking: linear scan up to this many objects, then a Set

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
const K_SHARED_BUFFER = 14;

const K_UINT8 = 1;
const K_BUFFER = 11;
const K_DATAVIEW = 12;
const K_ARRAYBUFFER = 13;
const VIEW_CTORS = [
  Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
  Float32Array, Float64Array, BigInt64Array, BigUint64Array,
];
const KIND_BY_TAG = Object.create(null);
for (let i = 0; i < VIEW_CTORS.length; i++) KIND_BY_TAG[VIEW_CTORS[i].name] = i;
// %TypedArray%.prototype[@@toStringTag] getter: the element kind, immune to subclassing and to
// overwritten `constructor` properties; undefined for anything that is not a typed array.
const typedArrayTag = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get;

const E_ERR_FLAG_CAUSE = 1;
const E_ERR_FLAG_CODE = 2;
const E_ERR_FLAG_ERRORS = 4;
const E_ERR_FLAG_PROPS = 8;
const ERROR_CTORS = Object.assign(Object.create(null), {
  Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError,
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

function codecError(Ctor, code, message, cause) {
  const err = cause === undefined ? new Ctor(message) : new Ctor(message, { cause });
  err.code = code;
  OWN_ERRORS.add(err);
  return err;
}

// ------------------------------------------------------------------------------------------------
// Encoder
// ------------------------------------------------------------------------------------------------

class Encoder {
  constructor(options) {
    let max = DEFAULT_MAX_PAYLOAD;
    if (options !== undefined && options !== null && options.maxPayloadBytes !== undefined) {
      max = options.maxPayloadBytes;
      if (!Number.isSafeInteger(max) || max < 1 || max > 0xffffffff) {
        throw new RangeError(
          `knitting-native: maxPayloadBytes must be an integer in [1, ${0xffffffff}], got ${String(max)}`);
      }
    }
    this.maxPayloadBytes = max;
    // SharedArrayBuffers go by reference through this hook: `ref(sab)` returns
    // [origin, seq] naming it (and may throw when it cannot cross), listed
    // in `pending` until the encoder calls `commit()` (the encoding is used)
    // or `abort()`; without a hook they are refused.
    this.shared = options !== undefined && options !== null && options.shared !== undefined ? options.shared : null;
    // current target
    this.u8 = new Uint8Array(0);
    this.end = 0; // absolute index in u8 that must not be reached
    this.growable = false;
    // DataView / Buffer over the whole target ArrayBuffer, cached by buffer identity, so writing a
    // float into a shared slot does not allocate. Index = bo + position in u8.
    this.lastTarget = null;
    this.cacheBuf = null;
    this.dv = null;
    this.nb = null; // node Buffer over cacheBuf, created lazily for long strings
    this.bo = 0;
    // encode() scratch (a plain Uint8Array so element access in the writers stays monomorphic)
    this.scratch = allocBytes(INITIAL_SCRATCH);
    // identity tracking for shared references / cycles
    this.seenN = 0;
    this.seenA = new Array(SEEN_LINEAR).fill(undefined);
    this.seenS = null;
    this.v8Size = -1;
  }

  // Encodes straight into target[offset, offset + limit) and returns the byte count, or -1 when the
  // encoding does not fit in `limit` (bytes in that range are then unspecified; nothing outside it is
  // touched). -1 is decided where the room runs out, so a function/symbol further on, or a switch to
  // the whole-payload v8 form that would have been smaller, is only seen by encode(). When `limit`
  // exceeds maxPayloadBytes, the limit error is thrown instead of returning -1 for sizes above it.
  encodeInto(value, target, offset, limit) {
    if (!(target instanceof Uint8Array) || (offset >>> 0) !== offset || (limit >>> 0) !== limit ||
        offset + limit > target.length) {
      throw new RangeError("knitting-native: encodeInto(value, target, offset, limit) needs a Uint8Array " +
        "target and integer offset/limit inside it");
    }
    this._bind(target);
    const capped = limit > this.maxPayloadBytes;
    this.end = offset + (capped ? this.maxPayloadBytes : limit);
    this.growable = false;
    const r = this._run(value, offset);
    if (r >= 0) return r - offset;
    if (capped) throw this._limitError(value);
    return -1;
  }

  // Encodes into the Encoder's growable scratch buffer; the returned view is valid until the next
  // encode() on this Encoder. Throws KNT_ERROR_3 above maxPayloadBytes.
  encode(value) {
    let s = this.scratch;
    if (s.length > SHRINK_SCRATCH) s = this.scratch = allocBytes(INITIAL_SCRATCH);
    this._bind(s);
    this.end = s.length < this.maxPayloadBytes ? s.length : this.maxPayloadBytes;
    this.growable = true;
    const r = this._run(value, 0);
    if (r < 0) throw this._limitError(value);
    return this.scratch.subarray(0, r);
  }

  _bind(target) {
    // `.buffer` is a C++ getter (~8 ns, not inlined), so the target view itself is the first-level
    // key; a different view over the same buffer still reuses the DataView.
    if (target !== this.lastTarget) {
      const buf = target.buffer;
      if (buf !== this.cacheBuf) {
        this.cacheBuf = buf;
        this.dv = new DataView(buf);
        this.nb = null;
      }
      this.lastTarget = target;
      this.bo = target.byteOffset;
    }
    this.u8 = target;
  }

  _nodeBuffer() {
    let nb = this.nb;
    // As in sourceBuffer(): a grown shared buffer needs a new, longer Buffer.
    if (nb === null || nb.length < this.bo + this.u8.length) nb = this.nb = Buffer.from(this.cacheBuf);
    return nb;
  }

  // Make [0, need) writable. Only encode() can grow; it stops at maxPayloadBytes.
  _grow(need) {
    if (!this.growable || need > this.maxPayloadBytes) return false;
    const old = this.u8;
    let cap = old.length * 2;
    if (cap < need) cap = need + (need >>> 1);
    if (cap > this.maxPayloadBytes) cap = this.maxPayloadBytes;
    const next = allocBytes(cap);
    next.set(old);
    this.scratch = next;
    this._bind(next);
    this.end = cap;
    return true;
  }

  _run(value, p) {
    let r;
    this.v8Size = -1;
    try {
      r = this._value(value, p, 0);
    } catch (err) {
      this._clearSeen();
      if (this.shared !== null) this.shared.abort();
      throw this._explain(err, value);
    }
    this._clearSeen();
    if (this.shared !== null && this.shared.pending.length !== 0) {
      // References the `shared` hook handed out go out only with an encoding
      // that is used: not one that did not fit (encodeInto's -1, then
      // encode() names them again) nor one restarted through node:v8.
      if (r >= 0) this.shared.commit();
      else this.shared.abort();
    }
    if (r === FALLBACK) r = this._v8(value, p);
    return r;
  }

  _value(v, p, d) {
    // typeof dispatch as an if-chain: `typeof v === "x"` compiles to a type check (TestTypeOf),
    // whereas switch (typeof v) materialises the string through the Typeof builtin (~5 ns on [1, 2]).
    if (typeof v === "number") return this._number(v, p);
    if (typeof v === "string") return this._string(v, p);
    if (typeof v === "object") {
      if (v === null) return this._byte(T_NULL, p);
      return this._object(v, p, d);
    }
    if (typeof v === "boolean") return this._byte(v ? T_TRUE : T_FALSE, p);
    if (typeof v === "undefined") return this._byte(T_UNDEFINED, p);
    if (typeof v === "bigint") return this._bigint(v, p);
    if (typeof v === "function") throw new Unsendable("function", v);
    if (typeof v === "symbol") throw new Unsendable("symbol", v);
    return FALLBACK;
  }

  _byte(tag, p) {
    if (p + 1 > this.end && !this._grow(p + 1)) return OVERFLOW;
    this.u8[p] = tag;
    return p + 1;
  }

  _number(v, p) {
    // int32 as 4 byte stores, float64 through the cached DataView (no allocation; [1, 2] round trip
    // ~43 ns). setFloat64 on the cached view measured the same as a private Float64Array + 8 byte
    // copies and is endian-safe.
    if ((v | 0) === v && (v !== 0 || 1 / v > 0)) {
      if (p + 5 > this.end && !this._grow(p + 5)) return OVERFLOW;
      const u8 = this.u8;
      u8[p] = T_INT32;
      u8[p + 1] = v;
      u8[p + 2] = v >> 8;
      u8[p + 3] = v >> 16;
      u8[p + 4] = v >> 24;
      return p + 5;
    }
    if (p + 9 > this.end && !this._grow(p + 9)) return OVERFLOW;
    this.u8[p] = T_FLOAT64;
    this.dv.setFloat64(this.bo + p + 1, v, true);
    return p + 9;
  }

  _string(s, p) {
    const n = s.length;
    if (n < 256) {
      // Room for the Latin-1 form; a UTF-16 form is never smaller, so failing here is final.
      if (p + 2 + n > this.end && !this._grow(p + 2 + n)) return OVERFLOW;
      const u8 = this.u8;
      const q = p + 2;
      if (n <= 24) {
        // Plain loop: ~2 ns/char vs ~40 ns fixed cost for Buffer#latin1Write (measured).
        for (let i = 0; i < n; i++) {
          const c = s.charCodeAt(i);
          if (c > 255) return this._utf16(s, p);
          u8[q + i] = c;
        }
      } else {
        // The regex is O(1) on V8 one-byte strings (~13 ns at any length), then one native copy.
        if (NON_LATIN1.test(s)) return this._utf16(s, p);
        this._nodeBuffer().latin1Write(s, this.bo + q, n);
      }
      u8[p] = T_STR8;
      u8[p + 1] = n;
      return q + n;
    }
    if (NON_LATIN1.test(s)) return this._utf16(s, p);
    if (p + 5 + n > this.end && !this._grow(p + 5 + n)) return OVERFLOW; // checked before copying
    const u8 = this.u8;
    u8[p] = T_LATIN1;
    w32(u8, p + 1, n);
    this._nodeBuffer().latin1Write(s, this.bo + p + 5, n); // 1 KiB: ~55 ns
    return p + 5 + n;
  }

  _utf16(s, p) {
    const n = s.length;
    const bytes = n * 2;
    if (p + 5 + bytes > this.end && !this._grow(p + 5 + bytes)) return OVERFLOW;
    const u8 = this.u8;
    u8[p] = T_UTF16;
    w32(u8, p + 1, n);
    const q = p + 5;
    if (n <= 16) {
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        u8[q + 2 * i] = c;
        u8[q + 2 * i + 1] = c >> 8;
      }
    } else {
      this._nodeBuffer().ucs2Write(s, this.bo + q, bytes); // raw code units, lone surrogates intact
    }
    return q + bytes;
  }

  _bigint(v, p) {
    if (v >= I64_MIN && v <= I64_MAX) {
      if (p + 9 > this.end && !this._grow(p + 9)) return OVERFLOW;
      this.u8[p] = T_BIGINT64;
      this.dv.setBigInt64(this.bo + p + 1, v, true);
      return p + 9;
    }
    // Arbitrary size through hex text: linear time (BigInt#toString(16) and BigInt("0x..") are
    // O(n) for power-of-two radixes), unlike repeated 64-bit shifts.
    const neg = v < 0n;
    let hex = (neg ? -v : v).toString(16);
    if (hex.length & 1) hex = "0" + hex;
    const n = hex.length >>> 1;
    if (p + 6 + n > this.end && !this._grow(p + 6 + n)) return OVERFLOW;
    const u8 = this.u8;
    u8[p] = T_BIGINT;
    u8[p + 1] = neg ? 1 : 0;
    w32(u8, p + 2, n);
    const q = p + 6;
    for (let i = 0, j = hex.length - 2; i < n; i++, j -= 2) {
      u8[q + i] = (hexDigit(hex.charCodeAt(j)) << 4) | hexDigit(hex.charCodeAt(j + 1));
    }
    return q + n;
  }

  _object(v, p, d) {
    if (d >= MAX_DEPTH || !this._track(v)) return FALLBACK;
    if (isArray(v)) return this._array(v, p, d);
    const proto = getProto(v);
    if (proto === ObjectProto) return this._plain(v, p, d, T_OBJECT);
    if (proto === null) return this._plain(v, p, d, T_OBJECT_NULL);
    if (isView(v)) return this._view(v, p);
    if (proto === DateProto) {
      if (p + 9 > this.end && !this._grow(p + 9)) return OVERFLOW;
      this.u8[p] = T_DATE;
      this.dv.setFloat64(this.bo + p + 1, dateGetTime.call(v), true);
      return p + 9;
    }
    if (proto === ArrayBufferProto) {
      if (isDetachedBuffer(v)) throw new Unsendable("detached", v);
      return this._bytes(K_ARRAYBUFFER, new Uint8Array(v), p);
    }
    if (proto === SharedArrayBufferProto) return this._shared(K_SHARED_BUFFER, v, 0, v.byteLength, p);
    if (v instanceof Error) return this._error(v, p, d);
    return this._leaf(v, p);
  }

  // A value the fast path does not cover (Map, Set, RegExp, boxed primitive, class instance, ...)
  // becomes one nested node:v8 record. Everything it reaches joins the identity tracking first, so
  // an object shared between this record and the rest of the payload (or a cycle through it)
  // restarts the whole encode through node:v8 instead of being duplicated.
  _leaf(v, p) {
    if (!trackGraph(v, this)) return FALLBACK;
    let blob;
    try {
      blob = v8.serialize(v);
    } catch (err) {
      throw new Unsendable("v8", err);
    }
    return this._v8Record(blob, p);
  }

  /** Writes a node:v8 blob as a 0x11 record at p. */
  _v8Record(blob, p) {
    const n = blob.length;
    if (p + 5 + n > this.end && !this._grow(p + 5 + n)) return OVERFLOW;
    const u8 = this.u8;
    u8[p] = T_V8;
    w32(u8, p + 1, n);
    u8.set(blob, p + 5);
    return p + 5 + n;
  }

  _array(a, p, d) {
    const n = a.length;
    if (p + 5 > this.end && !this._grow(p + 5)) return OVERFLOW;
    const u8 = this.u8;
    u8[p] = T_ARRAY;
    w32(u8, p + 1, n);
    p += 5;
    for (let i = 0; i < n; i++) {
      const e = a[i];
      if (e === undefined && !(i in a)) return FALLBACK; // hole: sparse arrays go through v8
      p = this._value(e, p, d + 1);
      if (p < 0) return p;
    }
    return p;
  }

  _plain(o, p, d, tag) {
    if (p + 5 > this.end && !this._grow(p + 5)) return OVERFLOW;
    this.u8[p] = tag;
    const countAt = p + 1;
    p += 5;
    let n = 0;
    // for-in (enum cache) instead of Object.keys: no array allocation. The hasOwnProperty guard
    // keeps enumerable properties added to Object.prototype out of the payload; on a 20-field
    // literal object it is within noise (~0.49 us encode either way).
    for (const k in o) {
      if (tag === T_OBJECT && !hasOwn.call(o, k)) continue;
      p = this._string(k, p);
      if (p < 0) return p;
      p = this._value(o[k], p, d + 1);
      if (p < 0) return p;
      n++;
    }
    w32(this.u8, countAt, n); // this.u8, not a local: encode() may have grown the scratch
    return p;
  }

  _view(v, p) {
    let kind;
    let n;
    if (v instanceof Buffer) {
      kind = K_BUFFER;
    } else {
      const tag = typedArrayTag.call(v);
      kind = tag === undefined ? K_DATAVIEW : KIND_BY_TAG[tag];
      if (kind === undefined) return this._leaf(v, p); // a typed array kind newer than this codec
    }
    if (kind === K_DATAVIEW) {
      // byteLength throws on a detached DataView, so look at the buffer first
      if (isDetachedBuffer(v.buffer)) throw new Unsendable("detached", v);
      n = v.byteLength;
    } else {
      n = v.byteLength;
      if (n === 0 && isDetachedBuffer(v.buffer)) throw new Unsendable("detached", v);
    }
    const buffer = v.buffer;
    // Over shared memory: by reference when a `shared` hook is given, else its bytes are copied.
    if (this.shared !== null && getProto(buffer) === SharedArrayBufferProto) return this._shared(kind, buffer, v.byteOffset, n, p);
    const bytes = kind === K_UINT8 || kind === K_BUFFER ? v : new Uint8Array(buffer, v.byteOffset, n);
    return this._bytes(kind, bytes, p);
  }

  /** A SharedArrayBuffer, or a view over one, by reference (the `shared` hook names it). */
  _shared(kind, sab, byteOffset, byteLength, p) {
    if (this.shared === null) throw new Unsendable("shared", sab);
    if (p + 18 > this.end && !this._grow(p + 18)) return OVERFLOW;
    const [origin, seq] = this.shared.ref(sab);
    const u8 = this.u8;
    u8[p] = T_SHARED;
    u8[p + 1] = kind;
    w32(u8, p + 2, origin);
    w32(u8, p + 6, seq);
    w32(u8, p + 10, byteOffset);
    w32(u8, p + 14, byteLength);
    return p + 18;
  }

  _bytes(kind, bytes, p) {
    const n = bytes.length;
    if (p + 6 + n > this.end && !this._grow(p + 6 + n)) return OVERFLOW; // checked before copying
    const u8 = this.u8;
    u8[p] = T_BINARY;
    u8[p + 1] = kind;
    w32(u8, p + 2, n);
    u8.set(bytes, p + 6);
    return p + 6 + n;
  }

  _error(e, p, d) {
    const name = e.name;
    const message = e.message;
    const stack = e.stack;
    const code = e.code;
    const errors = e.errors;
    let flags = 0;
    if (hasOwn.call(e, "cause")) flags |= E_ERR_FLAG_CAUSE;
    if (code !== undefined) flags |= E_ERR_FLAG_CODE;
    if (isArray(errors)) flags |= E_ERR_FLAG_ERRORS;
    const keys = Object.keys(e);
    let extra = 0;
    for (let i = 0; i < keys.length; i++) if (!ERROR_OWN_HANDLED.has(keys[i])) extra++;
    if (extra > 0) flags |= E_ERR_FLAG_PROPS;

    if (p + 2 > this.end && !this._grow(p + 2)) return OVERFLOW;
    this.u8[p] = T_ERROR;
    this.u8[p + 1] = flags;
    p += 2;
    d += 1;
    if ((p = this._value(name, p, d)) < 0) return p;
    if ((p = this._value(message, p, d)) < 0) return p;
    if ((p = this._value(stack, p, d)) < 0) return p;
    if (flags & E_ERR_FLAG_CAUSE && (p = this._value(e.cause, p, d)) < 0) return p;
    if (flags & E_ERR_FLAG_CODE && (p = this._value(code, p, d)) < 0) return p;
    if (flags & E_ERR_FLAG_ERRORS && (p = this._value(errors, p, d)) < 0) return p;
    if (flags & E_ERR_FLAG_PROPS) {
      if (p + 4 > this.end && !this._grow(p + 4)) return OVERFLOW;
      w32(this.u8, p, extra);
      p += 4;
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        if (ERROR_OWN_HANDLED.has(k)) continue;
        if ((p = this._string(k, p)) < 0) return p;
        if ((p = this._value(e[k], p, d)) < 0) return p;
      }
    }
    return p;
  }

  _v8(value, p) {
    let blob;
    try {
      blob = v8.serialize(value);
    } catch (err) {
      throw v8Failure(err, value);
    }
    this.v8Size = 5 + blob.length;
    return this._v8Record(blob, p);
  }

  // Identity tracking: a second visit to the same object (shared reference or cycle) restarts the
  // encode through node:v8. Linear scan for the first SEEN_LINEAR objects (a Set costs ~25 ns more
  // on [1, 2]), a Set after that.
  _track(o) {
    const n = this.seenN;
    const a = this.seenA;
    if (n < SEEN_LINEAR) {
      for (let i = 0; i < n; i++) if (a[i] === o) return false;
      a[n] = o;
      this.seenN = n + 1;
      return true;
    }
    let s = this.seenS;
    if (s === null) s = this.seenS = new Set();
    if (n === SEEN_LINEAR) for (let i = 0; i < SEEN_LINEAR; i++) s.add(a[i]);
    if (s.has(o)) return false;
    s.add(o);
    this.seenN = n + 1;
    return true;
  }

  _clearSeen() {
    const n = this.seenN;
    if (n === 0) return;
    const a = this.seenA;
    const m = n < SEEN_LINEAR ? n : SEEN_LINEAR;
    for (let i = 0; i < m; i++) a[i] = undefined; // do not keep user objects alive
    if (n >= SEEN_LINEAR && this.seenS !== null) this.seenS.clear();
    this.seenN = 0;
  }

  _explain(err, root) {
    if (err instanceof Unsendable) {
      if (err.kind === "v8") return v8Failure(err.value, root);
      return unsendableError(err.kind, err.value, findPath(root, err.value));
    }
    if (OWN_ERRORS.has(err)) return err; // already explained (v8 path, size check)
    // a getter threw, a revoked Proxy, ...
    return codecError(TypeError, CODEC_ERRORS.SERIALIZE,
      `knitting-native: serialization failed: ${describeThrown(err)}`, err);
  }

  _limitError(value) {
    let size = this.v8Size;
    if (size < 0) {
      try {
        size = sizeOf(value);
      } catch (err) {
        return this._explain(err, value); // a function/symbol past the point where space ran out
      }
    }
    return codecError(RangeError, CODEC_ERRORS.LIMIT,
      `knitting-native: payload of ${size} bytes exceeds payload.maxPayloadBytes (${this.maxPayloadBytes}); ` +
      "raise payload.maxPayloadBytes (createPool option, up to payload.payloadMaxByteLength)");
  }
}

function allocBytes(n) {
  // allocUnsafeSlow: uninitialised, unpooled, exactly n bytes; re-viewed as a plain Uint8Array.
  return new Uint8Array(Buffer.allocUnsafeSlow(n).buffer, 0, n);
}

function w32(u8, p, n) {
  u8[p] = n;
  u8[p + 1] = n >>> 8;
  u8[p + 2] = n >>> 16;
  u8[p + 3] = n >>> 24;
}

function hexDigit(c) {
  return c <= 57 ? c - 48 : c - 87; // '0'-'9', 'a'-'f'
}

// Adds every object reachable from `root` (excluding root itself, which the caller tracked) the way
// node:v8 would walk it: Map keys/values, Set values, own enumerable data properties, Error cause.
// Returns false as soon as an object is reached twice. Accessors are not called here (v8.serialize
// calls them once); objects only reachable through them are not tracked.
function trackGraph(root, tracker) {
  const stack = [root];
  while (stack.length > 0) {
    const o = stack.pop();
    const children = [];
    if (o instanceof Map) {
      for (const [k, val] of o) children.push(k, val);
    } else if (o instanceof Set) {
      for (const val of o) children.push(val);
    } else if (isView(o) || o instanceof ArrayBuffer || o instanceof Date || o instanceof RegExp) {
      continue;
    } else if (isArray(o)) {
      for (let i = 0; i < o.length; i++) if (i in o) children.push(o[i]);
    } else {
      const descs = Object.getOwnPropertyDescriptors(o);
      for (const k of Object.keys(descs)) {
        const desc = descs[k];
        if ("value" in desc && (desc.enumerable || (k === "cause" && o instanceof Error))) children.push(desc.value);
      }
    }
    for (let i = 0; i < children.length; i++) {
      const c = children[i];
      if (c === null || typeof c !== "object") continue;
      if (!tracker._track(c)) return false;
      stack.push(c);
    }
  }
  return true;
}

class SetTracker {
  constructor(seen) {
    this.seen = seen;
  }

  _track(o) {
    if (this.seen.has(o)) return false;
    this.seen.add(o);
    return true;
  }
}

// --- exact encoded size (cold path: only for the maxPayloadBytes error message) --------------------

function sizeOf(root) {
  const n = sizeOfValue(root, 0, new Set());
  if (n >= 0) return n;
  let blob;
  try {
    blob = v8.serialize(root);
  } catch (err) {
    throw v8Failure(err, root);
  }
  return 5 + blob.length;
}

function sizeOfString(s) {
  const n = s.length;
  if (NON_LATIN1.test(s)) return 5 + 2 * n;
  return n < 256 ? 2 + n : 5 + n;
}

function sizeOfValue(v, d, seen) {
  switch (typeof v) {
    case "number":
      return (v | 0) === v && (v !== 0 || 1 / v > 0) ? 5 : 9;
    case "string":
      return sizeOfString(v);
    case "boolean":
    case "undefined":
      return 1;
    case "bigint": {
      if (v >= I64_MIN && v <= I64_MAX) return 9;
      const hex = (v < 0n ? -v : v).toString(16);
      return 6 + ((hex.length + 1) >>> 1);
    }
    case "function":
      throw new Unsendable("function", v);
    case "symbol":
      throw new Unsendable("symbol", v);
    case "object":
      break;
    default:
      return FALLBACK;
  }
  if (v === null) return 1;
  if (d >= MAX_DEPTH || seen.has(v)) return FALLBACK;
  seen.add(v);
  let total = 0;
  if (isArray(v)) {
    total = 5;
    for (let i = 0; i < v.length; i++) {
      const e = v[i];
      if (e === undefined && !(i in v)) return FALLBACK;
      const n = sizeOfValue(e, d + 1, seen);
      if (n < 0) return n;
      total += n;
    }
    return total;
  }
  const proto = getProto(v);
  if (proto === ObjectProto || proto === null) {
    total = 5;
    for (const k in v) {
      if (proto !== null && !hasOwn.call(v, k)) continue;
      const n = sizeOfValue(v[k], d + 1, seen);
      if (n < 0) return n;
      total += sizeOfString(k) + n;
    }
    return total;
  }
  if (isView(v)) {
    if (isDetachedBuffer(v.buffer)) throw new Unsendable("detached", v);
    const tag = v instanceof Buffer ? undefined : typedArrayTag.call(v);
    if (tag !== undefined && KIND_BY_TAG[tag] === undefined) return 5 + v8.serialize(v).length;
    return 6 + v.byteLength;
  }
  if (proto === DateProto) return 9;
  if (proto === ArrayBufferProto) {
    if (isDetachedBuffer(v)) throw new Unsendable("detached", v);
    return 6 + v.byteLength;
  }
  if (v instanceof Error) {
    total = 2;
    const parts = [v.name, v.message, v.stack];
    if (hasOwn.call(v, "cause")) parts.push(v.cause);
    if (v.code !== undefined) parts.push(v.code);
    if (isArray(v.errors)) parts.push(v.errors);
    const keys = Object.keys(v).filter((k) => !ERROR_OWN_HANDLED.has(k));
    if (keys.length > 0) total += 4;
    for (const k of keys) {
      total += sizeOfString(k);
      parts.push(v[k]);
    }
    for (const part of parts) {
      const n = sizeOfValue(part, d + 1, seen);
      if (n < 0) return n;
      total += n;
    }
    return total;
  }
  if (!trackGraph(v, new SetTracker(seen))) return FALLBACK;
  let blob;
  try {
    blob = v8.serialize(v);
  } catch (err) {
    throw new Unsendable("v8", err);
  }
  return 5 + blob.length;
}

// --- error reporting (cold path) --------------------------------------------------------------------

function describeThrown(err) {
  if (err instanceof Error) return err.message;
  try {
    return String(err);
  } catch {
    return "unknown error";
  }
}

function unsendableError(kind, value, path) {
  const where = path === null ? "" : path === "" ? " (at top level)" : ` (at ${path})`;
  if (kind === "function") {
    let name = "";
    try {
      if (typeof value.name === "string" && value.name !== "") name = ` "${value.name}"`;
    } catch {}
    return codecError(TypeError, CODEC_ERRORS.FUNCTION,
      `knitting-native: cannot send a function${name}${where}; send data, not code`);
  }
  if (kind === "shared") {
    return codecError(TypeError, CODEC_ERRORS.SERIALIZE,
      `knitting-native: cannot send a SharedArrayBuffer${where} here: it passes by reference only between ` +
      "the threads of one process (worker threads); copy it into an ArrayBuffer or a typed array to send it by value");
  }
  if (kind === "symbol") {
    return codecError(TypeError, CODEC_ERRORS.SYMBOL,
      `knitting-native: cannot send a symbol (${value.toString()})${where}; symbols cannot be serialized`);
  }
  return codecError(TypeError, CODEC_ERRORS.SERIALIZE,
    `knitting-native: serialization failed${where}: ${isView(value) ? "the ArrayBuffer behind this view" : "an ArrayBuffer"} is detached and cannot be sent`);
}

// node:v8 rejected the value. Functions/symbols/detached buffers reachable through data containers
// (arrays, plain objects, Map, Set, Error fields) get their specific error; anything else (a class
// instance holding a function, WeakMap, Promise, ...) is a serialization failure carrying v8's error.
function v8Failure(err, root) {
  let found = null;
  try {
    found = scan(root, null, false);
  } catch {}
  if (found !== null) return unsendableError(found.kind, found.value, found.path);
  let where = "";
  try {
    const inner = scan(root, null, true);
    if (inner !== null) where = inner.path === "" ? " (at top level)" : ` (at ${inner.path})`;
  } catch {}
  return codecError(TypeError, CODEC_ERRORS.SERIALIZE,
    `knitting-native: serialization failed${where}: ${describeThrown(err)}`, err);
}

function findPath(root, target) {
  try {
    const r = scan(root, target, true);
    return r === null ? null : r.path;
  } catch {
    return null;
  }
}

const IDENT = /^[A-Za-z_$][\w$]*$/;

function keyPath(path, k) {
  return IDENT.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;
}

function mapKeyRepr(k, i) {
  if (typeof k === "string") return JSON.stringify(k);
  if (typeof k === "number" || typeof k === "boolean" || k === null || k === undefined) return String(k);
  if (typeof k === "bigint") return `${k}n`;
  return `<key #${i}>`;
}

// Depth-first search for the first unsendable value (target === null) or for `target` itself.
// `intoInstances` also descends into the own enumerable properties of class instances.
function scan(root, target, intoInstances) {
  const seen = new Set();
  const hit = (v) => {
    if (target !== null) return v === target ? "target" : null;
    if (typeof v === "function") return "function";
    if (typeof v === "symbol") return "symbol";
    if (v !== null && typeof v === "object") {
      if (getProto(v) === ArrayBufferProto && isDetachedBuffer(v)) return "detached";
      if (isView(v) && isDetachedBuffer(v.buffer)) return "detached";
    }
    return null;
  };
  const visit = (v, path, depth) => {
    const kind = hit(v);
    if (kind !== null) return { kind, value: v, path };
    if (v === null || typeof v !== "object" || seen.has(v) || depth > 2000) return null;
    seen.add(v);
    let r;
    if (isArray(v)) {
      for (let i = 0; i < v.length; i++) if ((r = visit(v[i], `${path}[${i}]`, depth + 1))) return r;
      return null;
    }
    if (v instanceof Map) {
      let i = 0;
      for (const [k, val] of v) {
        if ((r = visit(k, `${path}.keys()[${i}]`, depth + 1))) return r;
        if ((r = visit(val, `${path}.get(${mapKeyRepr(k, i)})`, depth + 1))) return r;
        i++;
      }
      return null;
    }
    if (v instanceof Set) {
      let i = 0;
      for (const val of v) {
        if ((r = visit(val, `${path}.values()[${i}]`, depth + 1))) return r;
        i++;
      }
      return null;
    }
    if (isView(v)) return null;
    const proto = getProto(v);
    const isError = v instanceof Error;
    if (!(proto === ObjectProto || proto === null || isError || intoInstances)) return null;
    if (isError) {
      if (hasOwn.call(v, "cause") && (r = visit(v.cause, `${path}.cause`, depth + 1))) return r;
      if (isArray(v.errors) && (r = visit(v.errors, `${path}.errors`, depth + 1))) return r;
      if (v.code !== undefined && (r = visit(v.code, `${path}.code`, depth + 1))) return r;
    }
    for (const k of Object.keys(v)) {
      if ((r = visit(v[k], keyPath(path, k), depth + 1))) return r;
    }
    return null;
  };
  return visit(root, "", 0);
}

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
var dNb = null;
var dBo = 0;

function corrupt(why, at) {
  return new RangeError(`knitting-native: corrupt payload (${why} at byte ${at})`);
}

// How the decode in progress finds a SharedArrayBuffer named by (origin, seq): decode's `shared`.
var dShared = null;

function decode(source, offset, length, shared) {
  if (!(source instanceof Uint8Array) || (offset >>> 0) !== offset || (length >>> 0) !== length ||
      offset + length > source.length) {
    throw new RangeError("knitting-native: decode(source, offset, length) needs a Uint8Array source " +
      "and integer offset/length inside it");
  }
  if (source !== dLastSource) {
    const buf = source.buffer;
    if (buf !== dBufKey) {
      dBufKey = buf;
      dDv = new DataView(buf);
      dNb = null;
    }
    dLastSource = source;
    dBo = source.byteOffset;
  }
  dU8 = source;
  dPos = offset;
  dEnd = offset + length;
  dShared = shared === undefined ? null : shared;
  let v;
  try {
    v = readValue(0);
    if (dPos !== dEnd) throw corrupt(`${dEnd - dPos} trailing bytes`, dPos);
  } finally {
    dU8 = null;
    dShared = null;
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
    return sourceBuffer().ucs2Slice(dBo + p, dBo + p + 2 * n);
  }
  if (n > dEnd - dPos) throw corrupt(`truncated: string of ${n} bytes`, dPos);
  const p = dPos;
  dPos = p + n;
  if (n <= 12) return shortLatin1(dU8, p, n);
  return sourceBuffer().latin1Slice(dBo + p, dBo + p + n); // ~45 ns fixed; 1 KiB ~110 ns
}

// String.fromCharCode with a fixed argument count: 8 chars ~15 ns, vs ~50 ns for a += loop and ~43 ns
// for Buffer#latin1Slice (measured); object keys are usually this short.
function shortLatin1(u8, p, n) {
  switch (n) {
    case 0: return "";
    case 1: return fromCharCode(u8[p]);
    case 2: return fromCharCode(u8[p], u8[p + 1]);
    case 3: return fromCharCode(u8[p], u8[p + 1], u8[p + 2]);
    case 4: return fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3]);
    case 5: return fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3], u8[p + 4]);
    case 6: return fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3], u8[p + 4], u8[p + 5]);
    case 7: return fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3], u8[p + 4], u8[p + 5], u8[p + 6]);
    case 8:
      return fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3], u8[p + 4], u8[p + 5], u8[p + 6],
        u8[p + 7]);
  }
  return fromCharCode(u8[p], u8[p + 1], u8[p + 2], u8[p + 3], u8[p + 4], u8[p + 5], u8[p + 6],
    u8[p + 7]) + shortLatin1(u8, p + 8, n - 8);
}

function sourceBuffer() {
  let nb = dNb;
  // A Buffer over a growable SharedArrayBuffer keeps the length it was made
  // with: make a new one when the buffer has grown past it.
  if (nb === null || nb.length < dBo + dEnd) nb = dNb = Buffer.from(dBufKey);
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
    case 0: return [];
    case 1: return [readValue(d)];
    case 2: { const a0 = readValue(d); return [a0, readValue(d)]; }
    case 3: { const a0 = readValue(d); const a1 = readValue(d); return [a0, a1, readValue(d)]; }
    case 4: {
      const a0 = readValue(d); const a1 = readValue(d); const a2 = readValue(d);
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
const shapeKeys = new Array(SHAPE_MASK + 1).fill(null);
const shapeTemplates = new Array(SHAPE_MASK + 1).fill(null);
const pendingKeys = []; // a stack shared by nested objects being decoded
const pendingValues = [];
var pendingTop = 0;

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
  const slot = (h ^ (h >>> 13)) & SHAPE_MASK;
  let o;
  if (cacheable) {
    const keys = shapeKeys[slot];
    if (keys !== null && keys.length === n) {
      let i = 0;
      while (i < n && keys[i] === pendingKeys[base + i]) i++;
      if (i === n) {
        o = { ...shapeTemplates[slot] };
        for (let j = 0; j < n; j++) {
          o[pendingKeys[base + j]] = pendingValues[base + j];
          pendingKeys[base + j] = undefined; // do not keep decoded values alive
          pendingValues[base + j] = undefined;
        }
        return o;
      }
    }
  }
  o = {};
  let plainKeys = true;
  for (let j = 0; j < n; j++) {
    const k = pendingKeys[base + j];
    const v = pendingValues[base + j];
    pendingKeys[base + j] = undefined;
    pendingValues[base + j] = undefined;
    if (k === "__proto__") {
      plainKeys = false;
      defineData(o, k, v, true);
    } else {
      o[k] = v;
    }
  }
  if (cacheable && plainKeys) {
    const template = { ...o }; // a fast-mode copy even when `o` went dictionary
    // The encoder writes keys in enumeration order, so Object.keys matches the wire order; only
    // corrupt input with duplicate keys differs (and then never hits the cache).
    const keys = Object.keys(template);
    if (keys.length === n) {
      for (let j = 0; j < n; j++) template[keys[j]] = undefined;
      shapeKeys[slot] = keys;
      shapeTemplates[slot] = template;
    }
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

function copyOut(p, n) {
  // A fresh, unshared ArrayBuffer: the source slot is reused after decode returns.
  const ab = n < 1024 ? new ArrayBuffer(n) : Buffer.allocUnsafeSlow(n).buffer;
  new Uint8Array(ab).set(dU8.subarray(p, p + n));
  return ab;
}

function readBinary() {
  need(5);
  const kind = dU8[dPos++];
  const n = r32();
  if (n > dEnd - dPos) throw corrupt(`truncated: binary of ${n} bytes`, dPos);
  if (kind > K_ARRAYBUFFER) throw corrupt(`unknown binary kind ${kind}`, dPos - 5);
  const p = dPos;
  if (kind < K_BUFFER) {
    const Ctor = VIEW_CTORS[kind];
    if (n % Ctor.BYTES_PER_ELEMENT !== 0) throw corrupt(`${Ctor.name} of ${n} bytes`, p - 4);
    dPos = p + n;
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

function readError(d) {
  if (d >= MAX_DEPTH) throw corrupt("nesting too deep", dPos - 1);
  need(1);
  const flags = dU8[dPos++];
  if (flags > 15) throw corrupt("bad error flags", dPos - 1);
  d += 1;
  const name = readValue(d);
  const message = readValue(d);
  const stack = readValue(d);
  const hasCause = (flags & E_ERR_FLAG_CAUSE) !== 0;
  const cause = hasCause ? readValue(d) : undefined;
  const code = flags & E_ERR_FLAG_CODE ? readValue(d) : undefined;
  const errors = flags & E_ERR_FLAG_ERRORS ? readValue(d) : undefined;
  if (errors !== undefined && !isArray(errors)) throw corrupt("AggregateError errors is not an array", dPos);

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
  Object.defineProperty(e, "stack", { value: stack, writable: true, enumerable: false, configurable: true });
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
    const e = err instanceof RangeError && /call stack/.test(err.message)
      ? new RangeError(`knitting-native: payload nests too deeply for node:v8 to deserialize (${err.message})`)
      : corrupt(`v8 record rejected: ${describeThrown(err)}`, p);
    e.cause = err;
    throw e;
  }
}

module.exports = { Encoder, decode, CODEC_ERRORS, codecError };
