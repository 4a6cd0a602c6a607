"use strict";
// A value into a slot: inline when its encoding fits the slot's bytes, else
// into the payload region (payload/region.js). One writer per thread: the host's
// requests, a worker's answers.
//
// Trying the slot first costs small values nothing and large strings and
// binary values little (their size is known before a byte is written), but
// a plain object or array is encoded field by field until the slot is full
// and then again from the start for the region: for a 1 KiB object the
// failed attempt was 2.2 us of its 5.4 us write (docs/payload-path.md). So
// after a plain object or array that did not fit, the writer encodes the
// next ones once, into the encoder's scratch, and copies the bytes into the
// slot if they fit after all (and then tries the slot first again). The
// bytes are the same either way: encodeInto and encode write one format.

const { L, NO_EXT } = require("../protocol/layout.js");
const { NO_ROOM } = require("./region.js");

const INLINE = L.inlineBytes;
const getProto = Object.getPrototypeOf;
const ObjectProto = Object.prototype;
const isArray = Array.isArray;

/** A plain object or array: encoded field by field, size unknown until done. */
const isStructured = (v) => typeof v === "object" && v !== null && (isArray(v) || getProto(v) === ObjectProto);

class SlotWriter {
  /** `u8`: the control region (the slots' inline bytes); `payload`: the PayloadRegion. */
  constructor(encoder, payload, u8) {
    this.encoder = encoder;
    this.payload = payload;
    this.u8 = u8;
    /** Where the last write put the value: NO_EXT (inline) or its offset in the region. */
    this.ext = NO_EXT;
    // The last plain object or array did not fit a slot.
    this.large = false;
  }

  /**
   * Writes `value` for a slot whose inline bytes start at `at`: returns the
   * byte count (where: `ext`), or -1 when the region has no room now (the
   * encoding is then in `payload.unplaced`, valid until the next encode).
   * Throws as the encoder and the region do.
   */
  write(value, at) {
    const payload = this.payload;
    if (this.large && isStructured(value)) {
      const bytes = this.encoder.encode(value);
      if (bytes.length <= INLINE) {
        this.large = false;
        this.u8.set(bytes, at);
        this.ext = NO_EXT;
        return bytes.length;
      }
      const ext = payload.tryWrite(bytes);
      if (ext === NO_ROOM) {
        payload.unplaced = bytes;
        return -1;
      }
      this.ext = ext;
      return bytes.length;
    }
    const len = this.encoder.encodeInto(value, this.u8, at, INLINE);
    if (len >= 0) {
      this.ext = NO_EXT;
      return len;
    }
    if (isStructured(value)) this.large = true;
    const ext = payload.tryPlace(this.encoder, value);
    if (ext === NO_ROOM) return -1;
    this.ext = ext;
    return payload.placed;
  }
}

module.exports = { SlotWriter, NO_EXT };
