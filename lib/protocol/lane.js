"use strict";
// The lane protocol: how one call crosses from the host to a worker through
// the worker's private lane and back (pools with `host.steal: false`, and
// single-worker pools; lib/protocol/steal.js is the other topology).
//
// This file is the protocol: both ends and the worker's loop (when it spins
// and when it parks). host/topology/lanes.js and worker/serve.js call into it; the exhaustive
// model checker (__test__/model/) runs these very classes, interleaving
// every shared-memory access they make. Every access to a shared word here
// is an `Atomics` call (the checker stands in for `Atomics`); slot contents
// are plain bytes ordered by them, written by host/slots.js and worker/serve.js. All
// offsets come from Rust's layout() (protocol/layout.js).
//
// # Words
// Every lane belongs to one worker and has `slotCount` (32) slots and two
// words, one bit per slot:
// - REQ, written only by the host: the host flips bit i to hand slot i to
//   the worker.
// - RES, written only by the worker: the worker flips bit i to hand slot i
//   back with a response in it.
// - SLEEPING: 1 while the worker is parking or parked.
// Slot i is the host's when REQ[i] == RES[i] and the worker's when they
// differ. Only the owner touches the slot's words and bytes. Each word has
// one writer, so a plain store of the writer's private copy publishes it.
//
// # One call
// 1. Host (`freeSlot`): pick a slot it owns and has not handed out (a
//    private `busy` mask); host/slots.js writes the request (protocol/slot.js).
// 2. Host (`publish`, `flush`): flip the bit in its private copy of REQ;
//    once per burst, store REQ. Everything written in step 1 happens-before
//    any load that observes the flipped bit.
// 3. Worker (`takeNew`): load REQ; the bits of REQ ^ RES it has not started
//    are new requests. It runs them (several at once when tasks are async).
// 4. Worker (`finish`, `flush`): the response is in the slot (worker/serve.js);
//    finished slots are published by one store of RES, then the doorbell
//    (COUNTER += 1; ring if ARMED, src/doorbell.rs).
// 5. Host (`takeFinished`): load RES; the bits of RES ^ seen are finished
//    slots; it settles each call, clears the bit from `busy`, seen = RES.
//
// # Why a call is never lost, duplicated or misdelivered
// - Lost: a request is visible once its bit flips, and the worker keeps
//   scanning REQ ^ RES until it answers it; a response is visible once its
//   bit flips, and `seen` only advances to values the host has scanned.
// - Duplicated: the worker marks a taken bit started and never takes it
//   again until RES flips it back; the host consumes each flip once.
// - Misdelivered: the host maps slot to call in its own table, and checks
//   the call id the worker echoes (host/slots.js settle).
//
// # Waiting
// A worker with nothing new, and no async call of its own running, spins a
// bounded time on REQ (worker/serve.js: the spin yields the core between polls),
// then parks: SLEEPING = 1, re-read REQ (anything new: SLEEPING = 0, serve
// again after the event loop turns), else sleep while SLEEPING is 1. The
// host, after storing REQ, loads SLEEPING and, if it swaps it from 1 to 0,
// wakes the worker (one notify per parking, however many flushes see it).
// Both sides store then load, sequentially consistent: either the worker's
// re-read sees the request or the host sees SLEEPING.
// The worker sleeps on SLEEPING, not on REQ: a flush that read SLEEPING
// late can swap the 1 of the worker's *next* parking and notify before
// that parking's wait has begun. Waiting on REQ, the worker would then
// sleep through the next flush too (REQ changed, but SLEEPING was 0, so no
// notify came: found by the model checker, __test__/model/lane-model.mjs);
// waiting on SLEEPING, its wait sees the 0 and returns at once.

const { L, lowestBit, maskOf } = require("./layout.js");
const { announce } = require("./doorbell.js");

/** Word and byte offsets of one lane, shared by both ends. */
class LaneGeometry {
  constructor(lane) {
    const laneByte = L.lanesOffset + lane * L.laneStride;
    this.lane = lane;
    this.req = laneByte / 4 + L.laneWordReq;
    this.res = laneByte / 4 + L.laneWordRes;
    this.sleeping = laneByte / 4 + L.laneWordSleeping;
    this.slotsByte = laneByte + L.laneSlotsOffset;
  }
  /** Word index of a slot's first header word. */
  slotWord(slot) {
    return (this.slotsByte + slot * L.slotStride) / 4;
  }
  /** Byte offset of a slot's inline payload. */
  slotPayload(slot) {
    return this.slotsByte + slot * L.slotStride + L.slotHeaderBytes;
  }
}

/** The host's end (steps 1, 2 and 5). */
class HostLane extends LaneGeometry {
  /** `wakeWorker(index)`: wakes a worker parked on word `index` (the runtime's way). */
  constructor(i32, lane, wakeWorker) {
    super(lane);
    this.i32 = i32;
    this.wakeWorker = wakeWorker;
    this.reqBits = 0; // private copy of REQ (the host is its only writer)
    this.seenRes = 0; // RES as of the last drain
    this.busy = 0; // slots handed out and not yet consumed
    this.calls = new Array(L.slotCount).fill(null);
    this.inFlight = 0;
    this.slotMask = maskOf(L.slotCount);
  }
  /** Whether a balancer may give this lane another call. */
  accepts() {
    return this.inFlight < L.slotCount;
  }
  /** A free slot, or -1. */
  freeSlot() {
    const free = ~this.busy & this.slotMask;
    return free === 0 ? -1 : lowestBit(free);
  }
  /**
   * Step 2, first half: the slot is written; flip its bit in the private
   * copy. `flush()` publishes every slot placed since the last flush with
   * one store (a burst of calls costs one store and at most one wake).
   */
  publish(slot, call) {
    const bit = 1 << slot;
    this.busy |= bit;
    this.calls[slot] = call;
    this.inFlight++;
    this.reqBits ^= bit;
  }
  /** Step 2, second half: store REQ, then wake the worker if it parked. */
  flush() {
    if (Atomics.load(this.i32, this.req) === this.reqBits) return;
    Atomics.store(this.i32, this.req, this.reqBits);
    // After the store: see "Waiting". The exchange makes one notify per
    // parking, however many flushes see it.
    if (Atomics.load(this.i32, this.sleeping) !== 0 && Atomics.compareExchange(this.i32, this.sleeping, 1, 0) === 1) {
      this.wakeWorker(this.sleeping);
    }
  }
  /** Step 5: slots whose responses are ready (cleared from `busy`). */
  takeFinished() {
    const res = Atomics.load(this.i32, this.res);
    // Only slots the host handed out: RES is in memory task code can
    // write, and a bit flipped for an idle slot must not settle anything.
    const finished = (res ^ this.seenRes) & this.busy;
    if (finished !== 0) {
      this.seenRes ^= finished;
      this.busy &= ~finished;
    }
    return finished;
  }
  /** Takes the call out of a consumed slot. */
  release(slot) {
    const call = this.calls[slot];
    this.calls[slot] = null;
    this.inFlight--;
    return call;
  }
  /** After the worker died: nobody else writes this lane now; start clean. */
  reset() {
    Atomics.store(this.i32, this.req, 0);
    Atomics.store(this.i32, this.res, 0);
    Atomics.store(this.i32, this.sleeping, 0);
    this.reqBits = 0;
    this.seenRes = 0;
    this.busy = 0;
    this.inFlight = 0;
    const held = this.calls.filter((c) => c !== null);
    this.calls.fill(null);
    return held;
  }
}

/**
 * The worker's end (steps 3 and 4) and its loop. `env`, supplied by
 * worker/serve.js (or by the model checker):
 * - `run(slot)`: runs the call; true if it went async (its answer comes
 *   through `asyncEnded`), after writing a sync answer and `finish(slot)`.
 * - `spin(word, value)`: waits a bounded time while word `word` holds
 *   `value`.
 * - `sleep(word, value)`: calls `woke()` once word `word` no longer holds
 *   `value` (at once if it already does not).
 * - `later()`: calls `serve()` again after the event loop has turned.
 * - `ring()`: rings the host's doorbell.
 */
class WorkerLane extends LaneGeometry {
  constructor(i32, lane, env) {
    super(lane);
    this.i32 = i32;
    this.env = env;
    this.resBits = Atomics.load(i32, this.res); // private copy of RES
    this.started = 0; // requests taken and not yet answered
    this.finished = 0; // answered, not yet published
    this.left = false; // the host ended its lane (recycling): no shared access from then on
  }
  /** Serves new requests until there are none; then spins or parks. */
  serve() {
    while (this.turn());
  }
  /** One turn: runs the new requests (spinning briefly for some), or parks. True to go on. */
  turn() {
    if (this.left) return false;
    let fresh = this.takeNew();
    if (fresh === 0) {
      // Spin briefly unless async tasks wait for this event loop to turn.
      if (this.started !== 0) return this.stop();
      const req = Atomics.load(this.i32, this.req);
      if (!this.hasNew(req)) this.env.spin(this.req, req);
      fresh = this.takeNew();
      if (fresh === 0) return this.stop();
    }
    while (fresh !== 0) {
      const slot = lowestBit(fresh);
      fresh &= fresh - 1;
      this.env.run(slot);
    }
    this.flush();
    return true;
  }
  /** The loop ends: park. */
  stop() {
    this.park();
    return false;
  }
  /** Sleep until the host publishes a request (it swaps SLEEPING to 0 and wakes us). */
  park() {
    Atomics.store(this.i32, this.sleeping, 1);
    const req = Atomics.load(this.i32, this.req);
    if (this.hasNew(req)) {
      Atomics.store(this.i32, this.sleeping, 0);
      this.env.later();
      return;
    }
    this.env.sleep(this.sleeping, 1);
  }
  /** The sleep of `park` ended. */
  woke() {
    if (this.left) return;
    // The host cleared SLEEPING when it notified; clear it for a spurious
    // wake too.
    Atomics.store(this.i32, this.sleeping, 0);
    this.serve();
  }
  /** An async call's answer is written (and `finish`ed): publish it. */
  asyncEnded() {
    this.flush();
  }
  /**
   * The host emptied this lane to end its worker (server/recycle.js): from now on
   * the worker makes no shared access, so that a thread still running after
   * its "exit" reached the host (Deno's) cannot touch the lane its
   * replacement serves.
   */
  leave() {
    this.flush();
    this.left = true;
  }
  /** Step 3: requests not yet started; they are marked started. */
  takeNew() {
    const fresh = (Atomics.load(this.i32, this.req) ^ this.resBits) & ~this.started;
    this.started |= fresh;
    return fresh;
  }
  /** Whether a request is waiting, without taking it. */
  hasNew(req) {
    return ((req ^ this.resBits) & ~this.started) !== 0;
  }
  /** Step 4, deferred: the slot's response is written. */
  finish(slot) {
    this.finished |= 1 << slot;
  }
  /** Step 4: publish every finished slot with one store, then the doorbell. */
  flush() {
    const finished = this.finished;
    if (finished === 0) return;
    this.finished = 0;
    this.started &= ~finished;
    this.resBits ^= finished;
    Atomics.store(this.i32, this.res, this.resBits);
    announce(this.i32, this.env);
  }
}

module.exports = { HostLane, WorkerLane };
