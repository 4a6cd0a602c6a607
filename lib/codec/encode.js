"use strict";
// The encoder: JS values -> bytes of the wire format (format.js), straight into a slot's or region's
// bytes (encodeInto) or into a growable scratch buffer (encode). Errors are explained by explain.js.

const v8 = require("../lazy-v8.js");
const {
  CODEC_ERRORS,
  DEFAULT_MAX_PAYLOAD,
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
  K_SHARED_BUFFER,
  K_UINT8,
  K_BUFFER,
  K_DATAVIEW,
  K_ARRAYBUFFER,
  KIND_BY_TAG,
  typedArrayTag,
  viewKind,
  E_ERR_FLAG_CAUSE,
  E_ERR_FLAG_CODE,
  E_ERR_FLAG_ERRORS,
  E_ERR_FLAG_PROPS,
  ERROR_OWN_HANDLED,
  OVERFLOW,
  FALLBACK,
  ObjectProto,
  DateProto,
  ArrayBufferProto,
  SharedArrayBufferProto,
  getProto,
  hasOwn,
  isArray,
  isView,
  dateGetTime,
  NON_LATIN1,
  I64_MIN,
  I64_MAX,
  isDetachedBuffer,
  Unsendable,
  OWN_ERRORS,
  codecError,
  T_TRANSFER,
  T_OBJECT_DEF,
  T_SHAPED,
  T_BYTES,
  SEND_BYTES,
  SHARED_BYTES_ERROR,
  MAX_SHAPES,
} = require("./format.js");
const { copyBytes, byteCount } = require("./copy.js");
const { Transfer, bytesOf, isTransfer, nestedError } = require("./transfer.js");
const { sizeOf, describeThrown, unsendableError, v8Failure, findPath, trackGraph } = require("./explain.js");

const INITIAL_SCRATCH = 4096;
const SHRINK_SCRATCH = 1024 * 1024; // a scratch buffer grown past this is dropped on the next encode()
// Shapes the encoder keeps from payload to payload (_record); past this many it forgets them all.
const KNOWN_SHAPES = 4096;
const SEEN_LINEAR = 16; // identity tracking: linear scan up to this many objects, then a Set

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
          `knitting-native: maxPayloadBytes must be an integer in [1, ${0xffffffff}], got ${String(max)}`,
        );
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
    this.dvEnd = 0; // dv's byteLength (see _newDataView)
    this.nb = null; // node Buffer over cacheBuf, created lazily for long strings
    this.bo = 0;
    // The previous target's cache: a large value tries the slot (one buffer) and then the payload
    // region (another), so the writer alternates between two targets, and one cache entry would
    // make a new DataView and Buffer on every call.
    this.altTarget = null;
    this.altBuf = null;
    this.altDv = null;
    this.altDvEnd = 0;
    this.altNb = null;
    this.altBo = 0;
    // encode() scratch (a plain Uint8Array so element access in the writers stays monomorphic)
    this.scratch = allocBytes(INITIAL_SCRATCH);
    // identity tracking for shared references / cycles
    this.seenN = 0;
    this.seenA = new Array(SEEN_LINEAR).fill(undefined);
    this.seenS = null;
    this.v8Size = -1;
    // Object shapes (see _record): first key -> { keys, epoch, at, def }, kept from payload to
    // payload so that one like the payload before allocates none. A shape belongs to the payload
    // being written when its epoch is this.epoch; `active` counts those.
    this.shapes = new Map();
    this.epoch = 0;
    this.active = 0;
    this.keyStack = []; // the keys written so far by the plain objects being written, nested
    this.keyTop = 0;
    this.base = 0; // where the payload being written starts in u8 (0x15 offsets count from it)
  }

  // Encodes straight into target[offset, offset + limit) and returns the byte count, or -1 when the
  // encoding does not fit in `limit` (bytes in that range are then unspecified; nothing outside it is
  // touched). -1 is decided where the room runs out, so a function/symbol further on, or a switch to
  // the whole-payload v8 form that would have been smaller, is only seen by encode(). When `limit`
  // exceeds maxPayloadBytes, the limit error is thrown instead of returning -1 for sizes above it.
  encodeInto(value, target, offset, limit) {
    if (
      !(target instanceof Uint8Array) ||
      offset >>> 0 !== offset ||
      limit >>> 0 !== limit ||
      offset + limit > target.length
    ) {
      throw new RangeError(
        "knitting-native: encodeInto(value, target, offset, limit) needs a Uint8Array " +
          "target and integer offset/limit inside it",
      );
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
  // encode() on this Encoder. Throws KNT_VALUE_TOO_LARGE above maxPayloadBytes.
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

  // The exact encoded size of `v` when it is known without encoding: a string of 256 chars or more,
  // or a typed array, Buffer or ArrayBuffer sent by value (not empty), written at an 8-aligned
  // offset (as a payload block's start is); else -1. A large value of
  // these kinds can then be encoded straight into its block of the payload region
  // (PayloadRegion#tryPlace) instead of into the scratch buffer first and copied there after.
  exactSize(v) {
    if (typeof v === "string") {
      const n = v.length;
      if (n < 256) return -1;
      return NON_LATIN1.test(v) ? 5 + 2 * n : 5 + n; // as _string / _utf16
    }
    if (typeof v !== "object" || v === null) return -1;
    let n;
    if (isView(v)) {
      const tag = typedArrayTag.call(v);
      if (tag === undefined || KIND_BY_TAG[tag] === undefined) return -1; // DataView, unknown kinds
      n = v.byteLength;
      if (this.shared !== null && getProto(v.buffer) === SharedArrayBufferProto) return -1; // by reference
    } else if (getProto(v) === ArrayBufferProto) {
      n = v.byteLength;
    } else if (isTransfer(v)) {
      // Copied (a by-reference record always fits a slot, so it never comes here).
      const b = Transfer.bufferOf(v);
      n = b === null ? 0 : b.byteLength;
    } else {
      return -1;
    }
    return n === 0 ? -1 : 8 + n; // as _bytes at an aligned offset: pad 1 (an empty one may be detached: left to _view)
  }

  _bind(target) {
    // `.buffer` is a C++ getter (~8 ns, not inlined), so the target view itself is the first-level
    // key; a different view over the same buffer still reuses the DataView.
    if (target !== this.lastTarget) {
      const t = this.lastTarget;
      const b = this.cacheBuf;
      const dv = this.dv;
      const dvEnd = this.dvEnd;
      const nb = this.nb;
      const bo = this.bo;
      if (target === this.altTarget) {
        this.lastTarget = target;
        this.cacheBuf = this.altBuf;
        this.dv = this.altDv;
        this.dvEnd = this.altDvEnd;
        this.nb = this.altNb;
        this.bo = this.altBo;
      } else {
        const buf = target.buffer;
        if (buf !== b) {
          this.cacheBuf = buf;
          this._newDataView();
        }
        this.lastTarget = target;
        this.bo = target.byteOffset;
      }
      this.altTarget = t;
      this.altBuf = b;
      this.altDv = dv;
      this.altDvEnd = dvEnd;
      this.altNb = nb;
      this.altBo = bo;
    }
    this.u8 = target;
    // A length-tracking view whose buffer has grown since its DataView was made.
    if (this.dvEnd < this.bo + target.length) this._newDataView();
  }

  /**
   * A fixed-length DataView over the whole current buffer, also over a growable one (see
   * lib/payload/region.js, the region's view); its length is kept as a number, because reading a
   * DataView's byteLength throws once its buffer is detached.
   */
  _newDataView() {
    const buf = this.cacheBuf;
    this.dvEnd = buf.byteLength;
    this.dv = new DataView(buf, 0, this.dvEnd);
    this.nb = null;
  }

  _nodeBuffer() {
    let nb = this.nb;
    // As in sourceBuffer(): a grown shared buffer needs a new, longer Buffer.
    if (nb === null || nb.length < this.bo + this.u8.length) {
      nb = this.nb = Buffer.from(this.cacheBuf, 0, this.cacheBuf.byteLength);
    }
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
    this.base = p;
    this.keyTop = 0;
    this.epoch++;
    this.active = 0;
    if (this.shapes.size > KNOWN_SHAPES) this.shapes.clear();
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
    if (isTransfer(v)) return this._transfer(v, p, d);
    if (typeof v[SEND_BYTES] === "function") return this._sharedBytes(v, p, d);
    return this._leaf(v, p);
  }

  // A SharedBytes (payload/shared-bytes.js): its descriptor, never its bytes. Only ever the whole
  // value: the call or the answer that carries it is what hands the block over (and reclaims it).
  _sharedBytes(v, p, d) {
    if (d !== 0) {
      throw codecError(
        TypeError,
        SHARED_BYTES_ERROR,
        "knitting-native: a SharedBytes must be the whole argument of a call or the whole value a task returns; " +
          "it cannot be nested inside another value (send it on its own, or copy its bytes: bytes.u8.slice())",
      );
    }
    if (this.shared === null) {
      // Only a call's argument and a task's answer hand a block over (a broadcast's go to many workers).
      throw codecError(
        TypeError,
        SHARED_BYTES_ERROR,
        "knitting-native: a SharedBytes can only be the argument of pool.call.<name>() or the value a task " +
          "returns to it (not a broadcast's argument or result): copy its bytes there (bytes.u8.slice())",
      );
    }
    const [at, gen, byteLength] = v[SEND_BYTES]();
    if (p + 13 > this.end && !this._grow(p + 13)) return OVERFLOW;
    const u8 = this.u8;
    u8[p] = T_BYTES;
    w32(u8, p + 1, at);
    w32(u8, p + 5, gen);
    w32(u8, p + 9, byteLength);
    return p + 13;
  }

  // A transfer() marker (transfer.js), only ever the whole value. The `shared` hook decides: it
  // names the buffer it will move ([origin, seq], 0x13) or returns null, and the bytes are copied
  // (0x0f). Either way the marker is in its `pending` list and the commit consumes it. Without a
  // hook (a bare Encoder) the bytes are copied and the marker stays usable.
  _transfer(m, p, d) {
    if (d !== 0) throw nestedError();
    const bytes = bytesOf(m);
    const ref = this.shared === null ? null : this.shared.transfer(m, bytes.length);
    if (ref === null) return this._bytes(Transfer.kindOf(m), bytes, p);
    if (p + 14 > this.end && !this._grow(p + 14)) return OVERFLOW;
    const u8 = this.u8;
    u8[p] = T_TRANSFER;
    u8[p + 1] = Transfer.kindOf(m);
    w32(u8, p + 2, ref[0]);
    w32(u8, p + 6, ref[1]);
    w32(u8, p + 10, bytes.length);
    return p + 14;
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
    if (tag === T_OBJECT && d !== 0) return this._record(o, p, d);
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

  // A nested plain object (rows of records, say): keys written once per shape and payload. The
  // first object of a key sequence in a payload is written as 0x0c and becomes the payload's shape
  // for its first key; a later one with exactly the same own keys, in the same order, is written
  // as 0x15 (values only) and turns the first one's tag into 0x14. An echo of 1 KiB of 20-field
  // records spent half its encode and decode time on the keys (bench/codec-shapes.mjs, Node 20.20,
  // 2026-12-04: the same values without keys encode in 1.4 against 2.3 us and decode in 1.7
  // against 4.1 us). The keys are compared before any value is read, so a getter runs once; keys
  // that change while the values are written (a getter adding or deleting keys) send the whole
  // payload through node:v8. explain.js sizeOfRecord follows the same rules.
  _record(o, p, d) {
    let shape;
    for (const k in o) {
      if (!hasOwn.call(o, k)) continue;
      shape = this.shapes.get(k);
      break;
    }
    if (shape !== undefined && shape.epoch === this.epoch && sameKeys(o, shape.keys)) {
      return this._shaped(o, p, d, shape);
    }
    return this._recordKeys(o, p, d, shape);
  }

  _shaped(o, p, d, shape) {
    if (p + 5 > this.end && !this._grow(p + 5)) return OVERFLOW;
    const u8 = this.u8;
    if (!shape.def) {
      u8[shape.at] = T_OBJECT_DEF; // this.u8 is the buffer the record is in (or its grown copy)
      shape.def = true;
    }
    u8[p] = T_SHAPED;
    w32(u8, p + 1, shape.at - this.base);
    return this._fields(o, p + 5, d, shape.keys);
  }

  // The values of the own enumerable fields of `o`, whose keys must be exactly `keys`.
  _fields(o, p, d, keys) {
    let j = 0;
    for (const k in o) {
      if (!hasOwn.call(o, k)) continue;
      if (j === keys.length || keys[j] !== k) return FALLBACK;
      p = this._value(o[k], p, d + 1);
      if (p < 0) return p;
      j++;
    }
    return j === keys.length ? p : FALLBACK;
  }

  // As _plain, noting the keys written: a sequence of two keys or more becomes the payload's shape
  // for its first key (`known`, the shape kept for that first key, when the keys are its keys).
  _recordKeys(o, p, d, known) {
    if (p + 5 > this.end && !this._grow(p + 5)) return OVERFLOW;
    const at = p;
    this.u8[p] = T_OBJECT;
    p += 5;
    const stack = this.keyStack;
    const base = this.keyTop;
    let n = 0;
    for (const k in o) {
      if (!hasOwn.call(o, k)) continue;
      p = this._string(k, p);
      if (p < 0) return p;
      stack[base + n] = k;
      n++;
      this.keyTop = base + n; // nested objects note theirs above
      p = this._value(o[k], p, d + 1);
      if (p < 0) return p;
    }
    this.keyTop = base;
    w32(this.u8, at + 1, n);
    if (n >= 2 && this.active < MAX_SHAPES) {
      const same = known !== undefined && known.keys.length === n && noted(stack, base, known.keys);
      this._activate(same ? known : { keys: stack.slice(base, base + n), epoch: 0, at: 0, def: false }, at);
    }
    return p;
  }

  // `shape` (whose record starts at `at`) becomes the payload's shape for its first key, in place
  // of another one with that first key, at most MAX_SHAPES of them per payload.
  _activate(shape, at) {
    if (this.active >= MAX_SHAPES) return;
    const first = shape.keys[0];
    const held = this.shapes.get(first);
    if (held === undefined || held.epoch !== this.epoch) this.active++;
    if (held !== shape) this.shapes.set(first, shape);
    shape.epoch = this.epoch;
    shape.at = at;
    shape.def = false;
  }

  _view(v, p) {
    const kind = viewKind(v);
    if (kind === undefined) return this._leaf(v, p); // a typed array kind newer than this codec
    let n;
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
    if (this.shared !== null && getProto(buffer) === SharedArrayBufferProto)
      return this._shared(kind, buffer, v.byteOffset, n, p);
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
    // The view's own length (not a subclass's getter): exactly what copyBytes copies.
    const n = byteCount(bytes);
    // The bytes start 8-aligned in the target's buffer (see format.js: aligned copies to and from
    // shared memory are ~3-7x faster). A scratch buffer starts aligned and is copied to an aligned
    // block, so the alignment holds where the bytes end up too.
    const pad = -(this.bo + p + 7) & 7;
    const q = p + 7 + pad;
    if (q + n > this.end && !this._grow(q + n)) return OVERFLOW; // checked before copying
    const u8 = this.u8;
    u8[p] = T_BINARY;
    u8[p + 1] = kind;
    w32(u8, p + 2, n);
    u8[p + 6] = pad;
    for (let i = p + 7; i < q; i++) u8[i] = 0;
    copyBytes(u8, q, bytes);
    return q + n;
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
    const detail = `serialization failed: ${describeThrown(err)}`;
    return codecError(TypeError, CODEC_ERRORS.SERIALIZE, `knitting-native: ${detail}`, err, detail);
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
    const detail =
      `payload of ${size} bytes exceeds payload.maxPayloadBytes (${this.maxPayloadBytes}); ` +
      "raise payload.maxPayloadBytes (createPool option, up to payload.payloadMaxByteLength)";
    return codecError(RangeError, CODEC_ERRORS.LIMIT, `knitting-native: ${detail}`, undefined, detail);
  }
}

function allocBytes(n) {
  // allocUnsafeSlow: uninitialised, unpooled, exactly n bytes; re-viewed as a plain Uint8Array.
  return new Uint8Array(Buffer.allocUnsafeSlow(n).buffer, 0, n);
}

// Whether the own enumerable keys of `o` are exactly `keys`, in order.
function sameKeys(o, keys) {
  let i = 0;
  for (const k in o) {
    if (!hasOwn.call(o, k)) continue;
    if (i === keys.length || keys[i] !== k) return false;
    i++;
  }
  return i === keys.length;
}

// Whether stack[base, base + keys.length) holds `keys`.
function noted(stack, base, keys) {
  for (let i = 0; i < keys.length; i++) if (stack[base + i] !== keys[i]) return false;
  return true;
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

module.exports = { Encoder };
