// The pool object behind the public API, for tests that inject faults or
// look at lanes, workers and abort words directly.
import assert from "node:assert/strict";

/** The internal pool object of `pool` (asserted reachable, so a rename fails here, not later). */
export function internals(pool) {
  const p = pool[Symbol.for("knitting-native.pool")];
  assert.ok(p && Array.isArray(p.workers), "the internal pool object is reachable");
  return p;
}
