// Fault-injection helpers: blocking the host's event loop, and describing
// a settled call for assertion messages (faults.test.mjs, bad-input.test.mjs).
import { inspect } from "node:util";

/** Blocks this thread (the host's event loop) for `ms` milliseconds. */
export function blockFor(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Blocks this thread until `predicate()` holds (polled every ms), at most `ms`. */
export function blockUntil(predicate, ms) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) return false;
    blockFor(1);
  }
  return true;
}

/** Describes a settled result for assertion messages. */
export function show(r) {
  if (r.status === "fulfilled") return `fulfilled ${inspect(r.value, { depth: 4, maxStringLength: 80 })}`;
  const e = r.reason;
  return `rejected ${e && e.name} ${e && e.code} ${e && e.message}`;
}
