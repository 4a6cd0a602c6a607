"use strict";
// The shared-bytes protocol: who owns a block of shared bytes (a SharedBytes,
// payload/shared-bytes.js) at each moment, so that exactly one side may use
// it, and exactly one side frees it. A block of shared bytes is a block of
// the payload region that Rust's allocator marks as one (src/memory/payload.rs,
// `alloc_region`): a 16-byte header, then the bytes. Its first header word,
// STATE, says who holds it:
//
//   STATE = (gen << 12) | holder         holder:
//     0         RELEASED  being freed: nobody may touch it again
//     1         HOST      the host's (pool.sharedBytes(n), or a result it took)
//     2         TO_WORKER an argument on its way to whichever worker runs the call
//     3 + 2w    WORKER(w) the worker on lane w's (it took the argument, or
//                         sharedBytes(n) made it there)
//     4 + 2w    FROM(w)   a result on its way from the worker on lane w
//
// `gen` (20 bits, never 0) changes with every send, and Rust starts each new
// block at a generation of its own: a descriptor (offset, gen, length) names
// one hand-over of one block, so a stale descriptor (of a block freed since,
// or of an earlier send of it) matches no STATE word.
//
// # The moves (each one compare-and-swap of STATE: the only writes)
//   send     sender, from (gen, me) to (gen + 1, TO_WORKER or FROM(me)); the
//            descriptor carries gen + 1. The sender's views are detached.
//   take     receiver, from (gen, TO_WORKER or FROM(w)) to (gen, me).
//   release  holder, from (gen, me) to (gen, RELEASED); then it frees the
//            block. Winning this swap is the one licence to free it.
//   reclaim  the host only, for what no live side can release:
//            - a call's argument when the call settles: (gen, HOST) if it was
//              never sent, (gen + 1, TO_WORKER) if no worker took it (the call
//              was aborted, timed out, or its worker died first);
//            - on a worker's death, every block whose holder is WORKER(w) or
//              FROM(w): it found them with Rust's list of live blocks.
// A receiver whose take fails (the host reclaimed the argument first, or a
// stale descriptor) fails the call with a clear error; a reclaim whose swap
// fails does nothing: the worker took the argument and releases it itself.
// So each block is freed once, by whoever won the swap to RELEASED.
//
// Why the send bumps gen: a task may return the argument it was given. The
// call's argument record (gen, HOST) and (gen + 1, TO_WORKER) must then not
// match the result the host took, (gen + 2, HOST), or the call's settling
// would free the caller's result (the model's broken variant "same gen").
//
// STATE is task-writable memory: a word that holds nothing the move expects
// makes the move fail (a clear error), never a free; the offsets and lengths
// come from Rust, which checks them against the block it allocated.

const { L } = require("./layout.js");

const RELEASED = 0;
const HOST = 1;
const TO_WORKER = 2;
const HOLDER_BITS = 12;
const HOLDER_MASK = (1 << HOLDER_BITS) - 1;
const GEN_MASK = (1 << (32 - HOLDER_BITS)) - 1;
/** Lanes a holder can name: WORKER(w) and FROM(w) fit 12 bits. */
const MAX_LANES = (HOLDER_MASK - 3) >> 1;
// Every lane a pool can have (Rust's layout) must be one a holder can name.
if (L.maxLanes > MAX_LANES) throw new Error(`knitting-native: ${L.maxLanes} lanes do not fit a shared-bytes holder`);
/** Bytes of a block's header, before its bytes (src/memory/payload.rs REGION_HEADER). */
const HEADER_BYTES = 16;

const worker = (lane) => 3 + 2 * lane;
const from = (lane) => 4 + 2 * lane;
/** The STATE word for (gen, holder), as an Int32Array element holds it. */
const state = (gen, holder) => (gen << HOLDER_BITS) | holder | 0;
const genOf = (word) => (word >>> HOLDER_BITS) & GEN_MASK;
const holderOf = (word) => word & HOLDER_MASK;
/** The generation after `gen` (never 0). */
const nextGen = (gen) => ((gen & GEN_MASK) === GEN_MASK ? 1 : (gen & GEN_MASK) + 1);

/** What holds the block whose STATE word is `word`, in words (for errors). */
function describeHolder(word) {
  const h = holderOf(word);
  if (h === RELEASED) return "nobody (it was released)";
  if (h === HOST) return "the host";
  if (h === TO_WORKER) return "a call on its way to a worker";
  const lane = (h - 3) >> 1;
  return (h - 3) % 2 === 0 ? `the worker on lane ${lane}` : `a result on its way from the worker on lane ${lane}`;
}

/**
 * Sends the block whose STATE is word `at` of `i32`, held as (gen, me), to
 * `to`: returns the descriptor's generation, or 0 when STATE was not (gen, me).
 */
function send(i32, at, gen, me, to) {
  const next = nextGen(gen);
  // Sequentially consistent (every Atomics op is): the sender's writes into
  // the bytes happen before the swap, and the receiver's take reads STATE
  // with its own swap, so it sees them.
  return Atomics.compareExchange(i32, at, state(gen, me), state(next, to)) === state(gen, me) ? next : 0;
}

/** Takes the block sent as (gen, sentTo) for `me`: true when it is now `me`'s. */
function take(i32, at, gen, sentTo, me) {
  return Atomics.compareExchange(i32, at, state(gen, sentTo), state(gen, me)) === state(gen, sentTo);
}

/**
 * The host takes a result sent as (gen, FROM(w)) by any worker w (the
 * answer's slot does not say which worker wrote it under work stealing).
 */
function takeResult(i32, at, gen, me) {
  const word = Atomics.load(i32, at);
  const h = holderOf(word);
  if (genOf(word) !== gen || h < 4 || (h & 1) !== 0) return false;
  return Atomics.compareExchange(i32, at, word, state(gen, me)) === word;
}

/** The holder gives up the block: true when the caller must now free it (and nobody else may). */
function release(i32, at, gen, holder) {
  return Atomics.compareExchange(i32, at, state(gen, holder), state(gen, RELEASED)) === state(gen, holder);
}

/**
 * The host, once the call whose argument was the block (gen, HOST) settled:
 * true when it must free the block, which no worker took (`sent`: the call
 * was placed, so the block went out as (gen + 1, TO_WORKER)).
 */
function settleArgument(i32, at, gen, sent) {
  return release(i32, at, gen, HOST) || (sent && release(i32, at, nextGen(gen), TO_WORKER));
}

/**
 * The host, once the worker on `lane` is gone: true when it must free the
 * block, which that worker held or was sending.
 */
function reclaim(i32, at, lane) {
  const word = Atomics.load(i32, at);
  const h = holderOf(word);
  if (h !== worker(lane) && h !== from(lane)) return false;
  return Atomics.compareExchange(i32, at, word, state(genOf(word), RELEASED)) === word;
}

module.exports = {
  RELEASED,
  HOST,
  TO_WORKER,
  MAX_LANES,
  HEADER_BYTES,
  worker,
  from,
  state,
  genOf,
  holderOf,
  nextGen,
  describeHolder,
  send,
  take,
  takeResult,
  release,
  settleArgument,
  reclaim,
};
