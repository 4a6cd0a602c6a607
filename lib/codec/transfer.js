"use strict";
// transfer(value): the caller gives up an ArrayBuffer (or a typed array, Buffer or DataView that
// spans all of one) so that a call's argument, or a task's result, can move its memory to the
// other thread instead of copying it. The caller's buffer is detached as transfer() returns (its
// memory now belongs to the marker), so nothing the caller does afterwards can reach the memory
// the other side receives, whichever way the bytes then travel:
//
// - by reference (0x13 record, format.js): the marker's buffer goes over the MessagePort of the
//   one thread that will decode the value, with a transfer list (no copy); the record names it
//   (origin, seq) and payload/shared-refs.js finds it there;
// - by copy (0x0f record), when no single receiving thread is known when the value is encoded
//   (work stealing), across processes, or below TRANSFER_MIN_BYTES.
//
// Either way the receiver gets a buffer only it holds, and a marker goes out once: the encoding
// that used it consumes it (the `shared` hook's commit), so a second send is a TypeError.

const {
  ArrayBufferProto,
  SharedArrayBufferProto,
  K_ARRAYBUFFER,
  codecError,
  getProto,
  isDetachedBuffer,
  isView,
  binaryKind,
} = require("./format.js");
const { copyBytes } = require("./copy.js");

const TRANSFER_ERROR = "KNT_TRANSFER";

// Below this many bytes a marker's bytes are copied even where they could move: a move is a
// postMessage (a clone of the message, a mutex, a wake-up of the receiving thread's loop),
// which costs more than copying a small value through the payload region. Measured with
// bench/transfer-ab.mjs (2026-12-03, Node 20.20, 2 vCPUs, load average ~3, echo of a Uint8Array,
// every size moved): moved both ways / copied 0.32 at 1 KiB, 0.80 at 8 KiB, 1.40 at 16 KiB,
// 1.83 at 32 KiB; a result moved and its argument copied (work stealing) 0.83 at 16 KiB,
// 0.96 at 32 KiB, 1.88 at 64 KiB. From 32 KiB a move is no slower in either topology.
const TRANSFER_MIN_BYTES = 32 * 1024;

// A worker thread's result of at least this many bytes, a plain binary value (an ArrayBuffer, or a
// typed array, Buffer or DataView over one), leaves as a moved copy (movedCopy below): the worker
// copies it into a fresh buffer and moves that, so the host neither copies it out of the payload
// region nor allocates (and page-faults) a buffer for it. The host's thread is what a pool of large
// values saturates first (perf, 2026-12-04, Node 20.20, 2 vCPUs: half of all samples at 1 MiB, its
// two copies and the bench's check most of it), so the copy is better spent on a worker.
// `node bench/payload-pool-ab.mjs DIR --cells u8:N --no-seq` against the commit before (echo, 2
// threads, calls/s after/before, median of 3-5 turns, idle VM, 2026-12-04):
//   one size per process     128 KiB -, 256 KiB 1.30-1.37, 1 MiB 1.47-1.48, 4 MiB 1.39
//   after 64 KiB-128 KiB     128 KiB 0.73-0.86 (moved at 128 KiB), 256 KiB 1.02-1.04,
//   cells in the same        1 MiB 0.90-1.03, 4 MiB 0.96-1.01
// The first row is what glibc's trimming does to a fresh buffer per call (a process that has not
// freed larger blocks before gives memory back at ~2 MiB free and faults it in again); the second,
// where the earlier cells left memory in place, is even from 256 KiB and a loss at 128 KiB: a move
// costs a message and the worker's allocation. Hence 256 KiB.
const MOVE_COPY_MIN = 256 * 1024;

// ES2024 ArrayBuffer.prototype.transfer moves the memory into a new buffer (no copy); Node 20's V8
// lacks it, where structuredClone with a transfer list does the same.
const abTransfer = ArrayBuffer.prototype.transfer;

function transferError(message) {
  return codecError(TypeError, TRANSFER_ERROR, `knitting-native: ${message}`);
}

class Transfer {
  #kind;
  #buffer;
  constructor(kind, buffer) {
    this.#kind = kind;
    this.#buffer = buffer;
    // Only the encoder reads a marker, through the functions below. Anything that serializes it
    // another way (node:v8, when the encoder falls back to it for a value with cycles) reads this
    // enumerable getter and fails, instead of sending an empty object.
    Object.defineProperty(this, "transferred", { enumerable: true, get: nestedMarker });
    Object.freeze(this);
  }

  static is(v) {
    return typeof v === "object" && v !== null && #kind in v;
  }

  static kindOf(m) {
    return m.#kind;
  }

  /** The buffer it holds; null once an encoding consumed it. */
  static bufferOf(m) {
    return m.#buffer;
  }

  static consume(m) {
    m.#buffer = null;
  }
}

function nestedMarker() {
  throw nestedError();
}

function nestedError() {
  return transferError(
    "a transfer() marker must be the whole argument of a call or the whole value a task returns; " +
      "it cannot be nested inside another value (send the buffer as the argument itself, or without transfer())",
  );
}

function describe(value) {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  const proto = getProto(value);
  const ctor = proto !== null && typeof proto.constructor === "function" ? proto.constructor.name : "";
  return ctor === "" ? "an object" : `a ${ctor}`;
}

/**
 * Marks `value` (an ArrayBuffer, or a typed array / Buffer / DataView that spans its whole
 * ArrayBuffer) for transfer. Detaches the caller's buffer now: its byteLength becomes 0.
 */
function transfer(value) {
  const kind = binaryKind(value);
  if (kind === undefined) {
    if (value !== null && typeof value === "object" && isView(value)) {
      throw transferError(`transfer() does not know the typed array ${describe(value)}`);
    }
    throw transferError(
      `transfer() takes an ArrayBuffer, or a typed array, Buffer or DataView over all of one; got ${describe(value)}`,
    );
  }
  const buffer = kind === K_ARRAYBUFFER ? value : value.buffer;
  if (getProto(buffer) === SharedArrayBufferProto) {
    throw transferError(
      "transfer() cannot take a SharedArrayBuffer (or a view over one): its memory is shared, not given up; " +
        "send it without transfer(), it passes by reference",
    );
  }
  if (isDetachedBuffer(buffer)) {
    throw transferError("transfer() got a detached ArrayBuffer (already transferred, or given up another way)");
  }
  if (buffer !== value && (value.byteOffset !== 0 || value.byteLength !== buffer.byteLength)) {
    throw transferError(
      `transfer() needs a view over its whole ArrayBuffer: this ${describe(value).slice(2)} covers bytes ` +
        `${value.byteOffset}..${value.byteOffset + value.byteLength} of ${buffer.byteLength} (a small Buffer ` +
        "usually shares a pool with others); give up a buffer of its own, or send a copy without transfer()",
    );
  }
  let moved;
  try {
    moved =
      typeof abTransfer === "function" ? abTransfer.call(buffer) : structuredClone(buffer, { transfer: [buffer] });
  } catch (err) {
    // WebAssembly memory and buffers an embedder pinned cannot be detached.
    throw codecError(TypeError, TRANSFER_ERROR, `knitting-native: transfer() cannot detach this buffer: ${err}`, err);
  }
  return new Transfer(kind, moved);
}

/**
 * A marker over a fresh copy of `value`'s bytes, when `value` is a plain binary value (an
 * ArrayBuffer, or a typed array, Buffer or DataView over one) of MOVE_COPY_MIN bytes or more that
 * a copy through the payload region could carry under `maxBytes`; otherwise null. `value` itself
 * is neither detached nor changed: the copy is what moves, so whoever else holds `value` (a task
 * that keeps what it returns) is unaffected. The receiver gets what a copy through the payload
 * region gives it: a view of the same kind over a buffer of exactly its bytes.
 */
function movedCopy(value, maxBytes) {
  const kind = binaryKind(value);
  if (kind === undefined) return null;
  const buffer = kind === K_ARRAYBUFFER ? value : value.buffer;
  if (getProto(buffer) !== ArrayBufferProto || isDetachedBuffer(buffer)) return null;
  const bytes = buffer === value ? new Uint8Array(buffer) : new Uint8Array(buffer, value.byteOffset, value.byteLength);
  const n = bytes.length;
  // Near or over the limit the encoder decides, as for any copied value (a binary record's head and
  // padding are under 16 bytes): a value too large to copy is refused, never moved instead.
  if (n < MOVE_COPY_MIN || n + 16 > maxBytes) return null;
  // A new ArrayBuffer of exactly n bytes, not zero-filled first (the copy writes every byte).
  const copy = Buffer.allocUnsafeSlow(n);
  copyBytes(copy, 0, bytes);
  return new Transfer(kind, copy.buffer);
}

/** A marker the encoder met: its bytes as a Uint8Array (throws when an earlier encoding used it). */
function bytesOf(m) {
  const buffer = Transfer.bufferOf(m);
  if (buffer === null) {
    throw transferError("this transfer() marker was already sent: its buffer went with that call or result");
  }
  return new Uint8Array(buffer);
}

module.exports = {
  TRANSFER_ERROR,
  TRANSFER_MIN_BYTES,
  MOVE_COPY_MIN,
  movedCopy,
  Transfer,
  bytesOf,
  isTransfer: Transfer.is,
  nestedError,
  transfer,
};
