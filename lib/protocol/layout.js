"use strict";
// The shared-memory layout as JS reads it: the one call to Rust's layout()
// (src/memory/layout.rs decides every offset, slot word and limit), checked
// once at load and frozen, so every module reads the same numbers and a
// field Rust stopped exporting (or renamed) is an error here, not an
// undefined offset that turns into NaN word indices. The protocol's bit
// helpers live here too: a lane's and a steal section's words are 32-bit
// masks.
//
// Every `L.<field>` in lib/ must be one of FIELDS (__test__/structure.test.mjs
// checks it), so a misspelt field is caught before it runs; a plain frozen
// object keeps the hot paths' reads as cheap as a constant's.

const native = require("../native/index.js");

/** The fields lib/ reads. */
const FIELDS = Object.freeze([
  "slotCount",
  "inlineBytes",
  "slotHeaderBytes",
  "slotStride",
  "laneStride",
  "lanesOffset",
  "laneSlotsOffset",
  "maxLanes",
  "noExt",
  "wordCounter",
  "wordArmed",
  "wordRoomSeq",
  "wordRoomWaiters",
  "wordHostCpu",
  "wordKeptSeq",
  "laneWordReq",
  "laneWordRes",
  "laneWordSleeping",
  "slotWordTask",
  "slotWordCall",
  "slotWordLen",
  "slotWordExt",
  "slotWordSignal",
  "slotWordStarted",
  "slotWordOwner",
  "slotWordRunMicros",
  "maxAbortSlots",
  "stealWordPending",
  "stealWordSleepers",
  "stealWordIdle",
  "stealWordSpinner",
  "stealDoneOffset",
  "doneStride",
  "doneSeqWord",
  "wakeWord",
  "maxRegionLanes",
  "maxStealClaimants",
]);

/** `raw` (what layout() returned) checked and frozen: every field a finite number, every one of FIELDS there. */
function checkLayout(raw) {
  if (raw === null || typeof raw !== "object") {
    throw new Error(
      `knitting-native: the native addon's layout() returned ${raw === null ? "null" : typeof raw}, not an object`,
    );
  }
  const out = {};
  for (const name of FIELDS) {
    if (!Object.hasOwn(raw, name)) {
      throw new Error(
        `knitting-native: the native addon's layout() has no field "${name}" (lib/protocol/layout.js reads it): ` +
          "the addon and lib/ are from different builds; rebuild the addon",
      );
    }
  }
  for (const name of Object.keys(raw)) {
    const value = raw[name];
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new Error(
        `knitting-native: the native addon's layout() field "${name}" is ${String(value)}, not a finite number`,
      );
    }
    out[name] = value;
  }
  return Object.freeze(out);
}

const L = checkLayout(native.layout());

/** EXT when a slot's bytes are inline, as an Int32Array element reads it. */
const NO_EXT = L.noExt | 0;

/** The mask of the low `n` bits (0 to 32) of a 32-bit word, as an int32 (`1 << 32` is 1, hence the case). */
const maskOf = (n) => (n >= 32 ? -1 : ((1 << n) - 1) | 0);

/** Index of the lowest set bit of a non-zero 32-bit mask. */
const lowestBit = (mask) => 31 - Math.clz32(mask & -mask);

/** The first set bit of `mask` at or after bit `from` (wrapping around), or -1. */
function nextBit(mask, from) {
  if (mask === 0) return -1;
  const ahead = from >= 32 ? 0 : mask & (-1 << from);
  return lowestBit(ahead !== 0 ? ahead : mask);
}

/** How many bits of `x` are set. */
const popcount = (x) => {
  let n = 0;
  for (; x !== 0; x &= x - 1) n++;
  return n;
};

module.exports = { L, FIELDS, NO_EXT, checkLayout, maskOf, lowestBit, nextBit, popcount };
