"use strict";
// Long strings out of the payload region as external strings (src/external_string.rs says why):
// their characters live outside the V8 heap, so a caller that keeps its answers for a while does
// not make every scavenge copy them. Measured 2026-12-04, Node 20.20.2, 2-vCPU VM: echo of 64 KiB
// strings, 256 in flight, spent 61% of the host's time in the garbage collector with heap strings
// (docs/payload-path.md, "Long strings outside the V8 heap").
//
// From EXTERNAL_MIN characters: below it a heap string is cheaper than a native call, a malloc and
// a finalizer. Echo through a 2-thread pool, 1,000 in flight, calls/s, heap -> external, three runs
// each (`node bench/payload-profile.mjs string SIZE 100000`, 2026-12-04, Node 20.20, idle VM):
// 4 KiB 314-339 k -> 255-266 k (slower), 6 KiB 190-255 k -> 255-257 k, 8 KiB 138-145 k -> 204-209 k.
// Where the runtime cannot make external strings (older Node 20 releases, other platforms), does
// not collect them in time (Bun, Deno: lib/runtimes/), or the addon cannot be loaded here,
// `longString` returns undefined and the caller decodes into the heap as before.

const EXTERNAL_MIN = 8 * 1024;

let native = null;
try {
  const addon = require("../native/index.js");
  if (require("../runtimes/index.js").host.externalStrings && addon.externalStrings()) native = addon;
} catch {
  native = null;
}

/** Whether long strings are decoded as external strings here. */
const externalStrings = () => native !== null;

/**
 * `n` characters at `p` of `u8` (Latin-1 bytes, or UTF-16 code units when `twoByte`) as an external
 * string, or undefined (too short, or not possible here).
 */
function longString(u8, p, n, twoByte) {
  if (native === null || n < EXTERNAL_MIN) return undefined;
  return native.externalString(u8, p, twoByte ? 2 * n : n, twoByte);
}

module.exports = { longString, externalStrings, EXTERNAL_MIN };
