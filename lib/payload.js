"use strict";
// The payload region: values too large for a slot's inline bytes live here,
// in a growable SharedArrayBuffer whose allocator (src/memory/payload.rs)
// runs in Rust. The writer allocates and copies; the reader decodes and frees.

const native = require("./native.js");
const { decode, CODEC_ERRORS } = require("./codec.js");
const { regionCorruptError } = require("./errors.js");

const L = native.layout();
const NO_EXT = L.noExt | 0; // as an Int32Array element reads it

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
        if (err && err.code === "KNT_REGION_CORRUPT") throw err;
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

  /**
   * Decodes a value a slot describes: `length` bytes inline at `at` of the
   * control region `control` when `ext` is NO_EXT, else at offset `ext` of
   * this region (whose block is then freed). The words come from shared
   * memory that task code can write: a length or offset that makes no sense
   * throws a KNT_REGION_CORRUPT error for this value, nothing else.
   */
  readSlot(control, at, length, ext, shared) {
    if (ext === NO_EXT) {
      if (length < 0 || length > L.inlineBytes) throw regionCorruptError(`a slot's length word reads ${length} (inline values hold at most ${L.inlineBytes} bytes)`);
      return decodeOrCorrupt(control, at, length, shared);
    }
    const offset = ext >>> 0;
    if (length < 0 || offset + length > this.u8.length) {
      // Not a block of this region: nothing to decode, nothing to free.
      throw regionCorruptError(`a slot points at ${length} payload bytes at offset ${offset}, outside the ${this.u8.length}-byte payload region`);
    }
    try {
      return decodeOrCorrupt(this.u8, offset, length, shared);
    } finally {
      // Throws KNT_REGION_CORRUPT when `offset` is not a live block.
      this.arena.free(offset);
    }
  }
}

/** `decode`, whose "corrupt payload" errors name the cause. */
function decodeOrCorrupt(source, offset, length, shared) {
  try {
    return decode(source, offset, length, shared);
  } catch (err) {
    if (err instanceof RangeError && /corrupt payload|needs a Uint8Array source/.test(err.message)) {
      throw regionCorruptError(`a value read from shared memory does not decode (${err.message})`, err);
    }
    throw err;
  }
}

function limitError(message, cause) {
  const err = new RangeError(`knitting-native: ${message}`, cause ? { cause } : undefined);
  err.code = CODEC_ERRORS.LIMIT;
  return err;
}

module.exports = { PayloadRegion };
