"use strict";
// Every control message between a host and its workers, and the exit codes a
// worker ends with, in one table both ends import: the wire values live here
// and nowhere else. A worker thread's messages go over its port as they are.
// A worker process's go over its IPC channel: two Node processes use V8's
// serializer ("advanced" IPC) and send them as they are; Bun and Deno speak
// JSON only (and Bun's serializer is not V8's), so with them a message
// travels as the package's own codec bytes in base64 (pack/unpack below): an
// Error keeps its name, code and cause, undefined stays undefined, on every
// runtime.

const { Encoder, decode } = require("../codec/index.js");

/** A control message's `type`, by name. */
const MSG = Object.freeze({
  // host -> worker process, once, right after spawn: `setup`, the region to map and what to serve (spawn/process.js).
  START: "start",
  // worker process -> host, once it mapped the region: the host may unlink the shm name (spawn/process.js).
  MAPPED: "mapped",
  // worker -> host, once its task modules loaded: it serves its lane (worker/serve.js, host/pool.js).
  READY: "ready",
  // worker -> host, instead of "ready": start-up failed, with `error` and its `code` beside (cloning drops it).
  INIT_ERROR: "init-error",
  // worker -> host, private lanes: a recycle limit (`reason`) was reached; stop choosing this lane (server/recycle.js).
  RECYCLE: "recycle",
  // host -> worker, private lanes: the recycling worker's lane is empty; leave it for good and end (server/recycle.js).
  END: "end",
  // worker thread -> host: it left its lane or the claimants (`reason`); terminate it (a process exits instead).
  LEFT: "left",
  // host -> worker, an elastic work-stealing pool: leave once you hold no call, for "idle" (server/elastic.js).
  LEAVE: "leave",
  // host -> worker: run task `task` once with `arg` (codec bytes), answer with BROADCAST_DONE and the same `id`
  // (host/broadcast.js, worker/broadcast.js). Read by the worker's event loop, not its lane.
  BROADCAST: "broadcast",
  // worker -> host: broadcast `id` ran; `ok`, and `value` (codec bytes): its result, or what it threw.
  BROADCAST_DONE: "broadcast-done",
});

/**
 * Exit codes of a worker process that recycles itself, by reason (EX_TEMPFAIL
 * and the next): the host tells a recycle from a crash by them (server/recycle.js).
 * "idle": an elastic pool's worker told to leave (server/elastic.js); it is not replaced.
 */
const RECYCLE_EXIT_CODES = Object.freeze({ calls: 75, memory: 76, idle: 77 });

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

module.exports = { MSG, RECYCLE_EXIT_CODES, pack, unpack };
