"use strict";
// Start-up messages between a host and its worker processes ("start",
// "mapped", "ready", "init-error"). Two Node processes use V8's serializer
// ("advanced" IPC) and send them as they are. Bun and Deno speak JSON only
// (and Bun's serializer is not V8's), so with them a message travels as the
// package's own codec bytes in base64: an Error keeps its name, code and
// cause, undefined stays undefined, on every runtime.

const { Encoder, decode } = require("../codec/index.js");

const PACKED = "knittingNativePacked";
let encoder = null;

/** The message as it goes on a channel of this serialization. */
function pack(message, serialization) {
  if (serialization !== "json") return message;
  if (encoder === null) encoder = new Encoder({ maxPayloadBytes: 0xffffffff });
  const bytes = encoder.encode(message);
  return { [PACKED]: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64") };
}

/** A received message, and whether it came packed (the answer goes the same way). */
function unpack(message) {
  if (message === null || typeof message !== "object" || typeof message[PACKED] !== "string")
    return { message, serialization: "advanced" };
  const bytes = new Uint8Array(Buffer.from(message[PACKED], "base64"));
  return { message: decode(bytes, 0, bytes.length), serialization: "json" };
}

module.exports = { pack, unpack };
