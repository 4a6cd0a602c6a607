"use strict";
// A slot's header, for both sides: the one module that knows which header
// word holds what (the word indices come from Rust's layout(),
// src/memory/layout.rs). Every function takes the control region's
// Int32Array and `w`, the index of the slot's first header word (a lane's or
// the steal section's `slotWord(slot)`).
//
// A request (host -> worker): TASK, CALL (the call's id), LEN and EXT (where
// its argument is: LEN bytes inline, or in payload block EXT), SIGNAL (its
// abort word + 1, 0 for none), STARTED (written NOT_STARTED by the host,
// then advanced by the worker). A response (worker -> host) reuses the
// same words: TASK holds the status, CALL still holds the id (the host
// checks it), LEN and EXT say where the result is. OWNER is the steal
// protocol's claim word (lib/protocol/steal.js).
//
// Plain reads and writes: the protocol that hands the slot over (protocol/lane.js,
// protocol/steal.js) orders them. STARTED is the exception: the host reads it while
// the worker may write it (hard timeouts, a dead worker), so it loads it
// atomically.

const { L, NO_EXT } = require("./layout.js");

const TASK = L.slotWordTask;
const CALL = L.slotWordCall;
const LEN = L.slotWordLen;
const EXT = L.slotWordExt;
const SIGNAL = L.slotWordSignal;
const STARTED_WORD = L.slotWordStarted;
const OWNER = L.slotWordOwner;
const RUN_MICROS = L.slotWordRunMicros;
const MAX_RUN_MICROS = 2 ** 31 - 1;

/**
 * A response's status (in the TASK word, where the request had its task
 * index, 0 to 65,535). Values no task index takes: a slot read before its
 * worker answered (a forged RES or DONE bit), or whose word was overwritten,
 * is then told from an answer (isStatus) instead of settling its call with
 * its own request, or rejecting it with its value.
 */
const STATUS_VALUE = 0x4b4e5600;
const STATUS_THROWN = 0x4b4e5601;
const isStatus = (status) => status === STATUS_VALUE || status === STATUS_THROWN;

/**
 * The STARTED word: the host's hard timeout reads it to tell the call that
 * holds a worker's thread (RUNNING) from calls that merely wait on that
 * worker (host/hard-timeout.js).
 */
const STARTED = Object.freeze({
  NOT_STARTED: 0,
  RUNNING: 1, // its task is executing on the worker's thread
  AWAITING: 2, // its task returned a promise: the thread is free meanwhile
  ANSWERED: 3, // its task ended; the answer is written or waiting for room
});

/** Host: writes a request's header (its argument's bytes are written already). */
function writeRequest(i32, w, task, callId, len, ext, signal) {
  i32[w + TASK] = task;
  i32[w + CALL] = callId;
  i32[w + LEN] = len;
  i32[w + EXT] = ext;
  i32[w + SIGNAL] = signal + 1;
  i32[w + STARTED_WORD] = STARTED.NOT_STARTED;
}

// A request's TASK word: the task index in its low 16 bits, the call's mode
// above them (protocol/stream.js MODES: a plain call, a streaming call, a call
// that reports progress). No mode makes a word equal to a status.
const TASK_BITS = 16;
const TASK_MASK = (1 << TASK_BITS) - 1;
/** Host: the TASK word of a request for task `task` in mode `mode`. */
const taskWord = (task, mode) => task | (mode << TASK_BITS);
const taskOf = (i32, w) => i32[w + TASK] & TASK_MASK;
/** The call's mode (see taskWord). */
const modeOf = (i32, w) => i32[w + TASK] >>> TASK_BITS;
const callIdOf = (i32, w) => i32[w + CALL];
const lenOf = (i32, w) => i32[w + LEN];
const extOf = (i32, w) => i32[w + EXT];
/** The call's abort word, or -1. */
const signalOf = (i32, w) => i32[w + SIGNAL] - 1;
const statusOf = (i32, w) => i32[w + TASK];

/** Where a response's bytes are (inline: `ext` is NO_EXT). */
function writeBody(i32, w, len, ext) {
  i32[w + LEN] = len;
  i32[w + EXT] = ext;
}

/** The response's status: written last, just before the slot is handed back. */
function writeStatus(i32, w, status) {
  i32[w + TASK] = status;
}

/**
 * The slot no longer owns its payload block: the worker clears EXT before
 * it frees a request's block, the host before it takes one back, so a block
 * is never freed twice.
 */
function clearExt(i32, w) {
  i32[w + EXT] = NO_EXT;
}

/** Worker: where its call is now (STARTED). */
function setStarted(i32, w, state) {
  i32[w + STARTED_WORD] = state;
}

/** Host: the STARTED word, as the worker last wrote it. */
const startedOf = (i32, w) => Atomics.load(i32, w + STARTED_WORD);

/** Worker, with `stats: true`: how long the task ran, in µs (written before the answer is handed back). */
function writeRunMicros(i32, w, micros) {
  i32[w + RUN_MICROS] = micros >= MAX_RUN_MICROS ? MAX_RUN_MICROS : micros > 0 ? micros | 0 : 0;
}

/** Host, with `stats: true`: the run time the worker wrote (untrusted: server/stats.js clamps it). */
const runMicrosOf = (i32, w) => i32[w + RUN_MICROS];

/** Word index of the OWNER word (lib/protocol/steal.js accesses it atomically). */
const ownerWord = (w) => w + OWNER;

module.exports = {
  NO_EXT,
  STATUS_VALUE,
  STATUS_THROWN,
  isStatus,
  STARTED,
  writeRequest,
  taskWord,
  taskOf,
  modeOf,
  callIdOf,
  lenOf,
  extOf,
  signalOf,
  statusOf,
  writeBody,
  writeStatus,
  clearExt,
  setStarted,
  startedOf,
  ownerWord,
  writeRunMicros,
  runMicrosOf,
};
