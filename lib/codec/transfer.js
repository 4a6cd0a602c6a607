"use strict";
// transfer(value): the caller gives up an ArrayBuffer (or a typed array, Buffer or DataView that
// spans all of one) so that a call's argument, or a task's result, can move its memory to the
// other thread instead of copying it. The caller's buffer is detached as transfer() returns (its
// memory now belongs to the marker), so nothing the caller does afterwards can reach the memory
// the other side receives, whichever way the bytes then travel:
//
// - by reference (0x13 record, format.js): the marker's buffer goes over the MessagePort of the
//   one thread that will decode the value, with a transfer list (no copy); the record names it
//   (origin, seq) and shared-refs.js finds it there;
// - by copy (0x0f record), when no single receiving thread is known when the value is encoded
//   (work stealing), across processes, or below TRANSFER_MIN_BYTES.
//
// Either way the receiver gets a buffer only it holds, and a marker goes out once: the encoding
// that used it consumes it (the `shared` hook's commit), so a second send is a TypeError.

const {
  ArrayBufferProto,
  SharedArrayBufferProto,
  KIND_BY_TAG,
  K_ARRAYBUFFER,
  K_BUFFER,
  K_DATAVIEW,
  codecError,
  getProto,
  isDetachedBuffer,
  isView,
  typedArrayTag,
} = require("./format.js");

const TRANSFER_ERROR = "KNT_TRANSFER";

// Below this many bytes a marker's bytes are copied even where they could move: a move is a
// postMessage (a clone of the message, a mutex, a wake-up of the receiving thread's loop),
// which costs more than copying a small value through the payload region. Measured with
// bench/transfer-ab.mjs (2026-12-03, Node 20.20, 2 vCPUs, load average ~3, echo of a Uint8Array,
// every size moved): moved both ways / copied 0.32 at 1 KiB, 0.80 at 8 KiB, 1.40 at 16 KiB,
// 1.83 at 32 KiB; a result moved and its argument copied (work stealing) 0.83 at 16 KiB,
// 0.96 at 32 KiB, 1.88 at 64 KiB. From 32 KiB a move is no slower in either topology.
const TRANSFER_MIN_BYTES = 32 * 1024;

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
  let buffer;
  let kind;
  if (value !== null && typeof value === "object" && getProto(value) === ArrayBufferProto) {
    buffer = value;
    kind = K_ARRAYBUFFER;
  } else if (value !== null && typeof value === "object" && isView(value)) {
    buffer = value.buffer;
    if (value instanceof Buffer) kind = K_BUFFER;
    else {
      const tag = typedArrayTag.call(value);
      kind = tag === undefined ? K_DATAVIEW : KIND_BY_TAG[tag];
    }
    if (kind === undefined) throw transferError(`transfer() does not know the typed array ${describe(value)}`);
  } else {
    throw transferError(
      `transfer() takes an ArrayBuffer, or a typed array, Buffer or DataView over all of one; got ${describe(value)}`,
    );
  }
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
  Transfer,
  bytesOf,
  isTransfer: Transfer.is,
  nestedError,
  transfer,
};
