"use strict";
// Bulk copies of binary values into and out of the payload region (a SharedArrayBuffer).
//
// `Uint8Array#set` with a SharedArrayBuffer on either side is a relaxed, tear-free copy that V8 does
// one machine word at a time (v8::internal::relaxed_memmove); `Buffer#fill` with a view of exactly
// the range's length is one memcpy in Node's C++ (node_buffer.cc Fill). Torn bytes are no concern
// here: what is read from the region is untrusted bytes either way, and the decoder never reads a
// copied value's bytes again. Measured 2026-12-04, Node 20.20.2, 2-vCPU VM (load 3-4), CPU time per
// copy, best of 3 loops of 1,000+ copies each (a loop of this file's two calls, not kept as a bench):
//   out of the region into a buffer   16 KiB 1.57 -> 0.49 us   64 KiB 5.8 -> 2.4 us   1 MiB 52 -> 40 us
//   into the region                   16 KiB 1.58 -> 0.47 us   64 KiB 5.3 -> 2.3 us   1 MiB 54 -> 43 us
// (a worker thread alike; 4 KiB 0.51 -> 0.32 us). Under FILL_MIN bytes (not measured) `set` stays:
// a call into C++ has a fixed cost, and every inline value of a slot (512 bytes) is below it.
// A runtime whose Buffer#fill does not copy a view this way (checked once, below) keeps `set`, and so
// does Deno, whose node:buffer fill copies a view byte by byte in JS: 64 KiB took 180-300 us against
// `set`'s 2.5 us (Deno 2.9.6, 2026-12-07), which made 64 KiB calls and streams 3-10x slower there.

const FILL_MIN = 1024;
const fill = Buffer.prototype.fill;
// %TypedArray%.prototype.length: the view's own length, whatever a subclass defines.
const lengthOf = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), "length").get;
/** A Uint8Array's own length (its elements are its bytes). */
const byteCount = (u8) => lengthOf.call(u8);

const fillCopies = (() => {
  if (require("../runtimes/index.js").host.name === "deno") return false;
  try {
    const src = new Uint8Array(new SharedArrayBuffer(32), 8, 16);
    for (let i = 0; i < 16; i++) src[i] = i + 1;
    const dst = new Uint8Array(24);
    fill.call(dst, src, 4, 20);
    for (let i = 0; i < 24; i++) if (dst[i] !== (i >= 4 && i < 20 ? i - 3 : 0)) return false;
    return true;
  } catch {
    return false;
  }
})();

/**
 * Copies all of `src` (a Uint8Array, any buffer) into `dst` (a plain Uint8Array or Buffer the codec
 * made) at `at`; the caller has checked that it fits. A subclass's own `length` is never called.
 */
function copyBytes(dst, at, src) {
  const n = byteCount(src);
  if (n >= FILL_MIN && fillCopies) fill.call(dst, src, at, at + n);
  else dst.set(src, at);
}

module.exports = { copyBytes, byteCount, FILL_MIN, fillCopies };
