"use strict";
// The payload region: values too large for a slot's inline bytes live here,
// in a growable SharedArrayBuffer whose allocator (src/memory/payload.rs)
// runs in Rust. The writer allocates and copies; the reader decodes and frees.

const native = require("./native.js");
const { decode, CODEC_ERRORS } = require("./codec.js");

class PayloadRegion {
  /** `format`: true on the host, which creates the region. */
  constructor(sab, format) {
    this.sab = sab;
    this.max = sab.growable ? sab.maxByteLength : sab.byteLength;
    this.arena = new native.PayloadArena(new Uint8Array(sab), this.max, format);
    // Length-tracking view: follows the buffer as it grows.
    this.u8 = new Uint8Array(sab);
  }

  /** Copies `bytes` into the region; returns its offset. */
  write(bytes) {
    for (;;) {
      let result;
      try {
        result = this.arena.alloc(bytes.length);
      } catch (err) {
        throw limitError(`payload of ${bytes.length} bytes does not fit the payload region (payload.payloadMaxByteLength ${this.max})`, err);
      }
      if (result >= 0) {
        this.u8.set(bytes, result);
        return result;
      }
      const need = -result;
      if (need > this.max) {
        throw limitError(
          `payload region is full: ${bytes.length} more bytes would need ${need} of payload.payloadMaxByteLength ${this.max} (other large payloads are in flight)`,
        );
      }
      this.grow(need);
    }
  }

  grow(minBytes) {
    const target = Math.min(this.max, Math.max(minBytes, this.sab.byteLength * 2));
    if (target > this.sab.byteLength) {
      try {
        this.sab.grow(target);
      } catch {
        // Another thread grew it past `target` meanwhile: fine.
      }
    }
    this.arena.extend(new Uint8Array(this.sab));
  }

  /** Decodes the value at `offset` and frees its block (`shared`: codec.js's decode). */
  read(offset, length, shared) {
    try {
      return decode(this.u8, offset, length, shared);
    } finally {
      this.arena.free(offset);
    }
  }
}

function limitError(message, cause) {
  const err = new RangeError(`knitting-native: ${message}`, cause ? { cause } : undefined);
  err.code = CODEC_ERRORS.LIMIT;
  return err;
}

module.exports = { PayloadRegion };
