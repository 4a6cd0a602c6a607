"use strict";
// The payload options (the shared region large arguments and results travel
// through: payload/region.js), validated with the same errors as every other option
// (options/checks.js: KNT_INVALID_OPTION).

const { optionError, checkKeys, checkObject, integerIn, oneOf } = require("./checks.js");

const MIB = 1024 * 1024;
/** Smallest payload region accepted (payloadInitialBytes, payloadMaxByteLength). */
const MIN_REGION_BYTES = 4096;
const DEFAULTS = Object.freeze({
  payloadInitialBytes: 4 * MIB,
  payloadMaxByteLength: 64 * MIB,
  maxPayloadBytes: 8 * MIB,
});

const PAYLOAD_MODES = ["growable", "fixed"];
/**
 * How long a SharedBytes result stays in shared memory, the caller's to
 * read in place, before it is copied out (payload/shared-bytes.js): long
 * enough for any handler to use it, short enough that a forgotten one gives
 * its room back.
 */
const DEFAULT_BORROW_MS = 10_000;
const MAX_BORROW_MS = 2 ** 31 - 1; // setTimeout's ceiling
/** A SharedArrayBuffer's practical ceiling here. */
const MAX_REGION_BYTES = 4 * 1024 * MIB;

/**
 * The `payload` group. Defaults follow the maximum, as knitting's do: the
 * initial size is clamped to `payloadMaxByteLength` and `maxPayloadBytes`
 * defaults to an eighth of it. Values given explicitly are never adjusted:
 * an explicit initial size above an explicit maximum is an error.
 * `mode: "fixed"`: the region is allocated once (at `payloadInitialBytes`
 * if given, else at `payloadMaxByteLength`) and never grows.
 */
function resolvePayload(payload) {
  checkObject(payload, "payload");
  checkKeys(payload, ["mode", "borrowMs", ...Object.keys(DEFAULTS)], "payload.");
  const borrowMs =
    payload.borrowMs === undefined
      ? DEFAULT_BORROW_MS
      : integerIn(payload.borrowMs, "payload.borrowMs", 1, MAX_BORROW_MS);
  const mode = payload.mode === undefined ? "growable" : oneOf(payload.mode, "payload.mode", PAYLOAD_MODES);
  const given = {};
  for (const key of Object.keys(DEFAULTS)) {
    // The region itself needs room for its allocator's header and a block.
    const min = key === "maxPayloadBytes" ? 1 : MIN_REGION_BYTES;
    if (payload[key] !== undefined) given[key] = integerIn(payload[key], `payload.${key}`, min, MAX_REGION_BYTES);
  }
  let max = given.payloadMaxByteLength !== undefined ? given.payloadMaxByteLength : DEFAULTS.payloadMaxByteLength;
  let initial;
  if (given.payloadInitialBytes !== undefined) {
    initial = given.payloadInitialBytes;
    if (initial > max) {
      throw optionError(
        RangeError,
        `knitting-native: payload.payloadInitialBytes (${initial}) must not exceed payload.payloadMaxByteLength ` +
          `(${max})`,
      );
    }
  } else {
    initial = mode === "fixed" ? max : Math.min(DEFAULTS.payloadInitialBytes, max);
  }
  // A fixed region is one buffer of its initial size (spawn/thread.js makes
  // a non-growable SharedArrayBuffer when the two sizes are equal).
  if (mode === "fixed") max = initial;
  const maxPayloadBytes =
    given.maxPayloadBytes !== undefined ? given.maxPayloadBytes : Math.max(1, Math.floor(max / 8));
  if (maxPayloadBytes > max) {
    throw optionError(
      RangeError,
      `knitting-native: payload.maxPayloadBytes (${maxPayloadBytes}) must not exceed ` +
        `${mode === "fixed" ? "the fixed payload region's size" : "payload.payloadMaxByteLength"} (${max})`,
    );
  }
  return { payloadMode: mode, payloadInitialBytes: initial, payloadMaxByteLength: max, maxPayloadBytes, borrowMs };
}

module.exports = { resolvePayload, DEFAULTS };
