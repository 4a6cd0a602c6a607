"use strict";
// The lane protocol in JavaScript: both ends of one lane. The protocol itself
// (who writes which word, in which order, and why no call is lost,
// duplicated or misdelivered) is written down once, in src/memory/lane.rs;
// this file follows it step by step. All offsets come from Rust's layout().

const native = require("./native.js");

const L = native.layout();
const W_COUNTER = L.wordCounter;
const W_ARMED = L.wordArmed;

/** Index of the lowest set bit of a non-zero 32-bit mask. */
const lowestBit = (mask) => 31 - Math.clz32(mask & -mask);

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

/** The host's end (steps 1, 2 and 6 of the protocol). */
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
  }
  /** Whether a balancer may give this lane another call. */
  accepts() {
    return this.inFlight < L.slotCount;
  }
  /** A free slot, or -1. */
  freeSlot() {
    const free = ~this.busy;
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
    // After the store: the worker sets SLEEPING, then re-reads REQ; one of
    // the two sequentially consistent loads sees the other's store. The
    // exchange makes one notify per parking, however many flushes see it.
    if (Atomics.load(this.i32, this.sleeping) !== 0 && Atomics.compareExchange(this.i32, this.sleeping, 1, 0) === 1) {
      this.wakeWorker(this.req);
    }
  }
  /** Step 6: slots whose responses are ready (cleared from `busy`). */
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

/** The worker's end (steps 3, 4 and 5). */
class WorkerLane extends LaneGeometry {
  constructor(i32, lane, bell) {
    super(lane);
    this.i32 = i32;
    this.bell = bell;
    this.resBits = Atomics.load(i32, this.res); // private copy of RES
    this.started = 0; // requests taken and not yet answered
    this.finished = 0; // answered, not yet published
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
  /** Steps 4 and 5: publish every finished slot with one store, then count. */
  flush() {
    const finished = this.finished;
    if (finished === 0) return;
    this.finished = 0;
    this.started &= ~finished;
    this.resBits ^= finished;
    Atomics.store(this.i32, this.res, this.resBits);
    // The doorbell (src/doorbell.rs): add, then ring only an armed host.
    Atomics.add(this.i32, W_COUNTER, 1);
    if (Atomics.load(this.i32, W_ARMED) !== 0) this.bell.ring();
  }
}

module.exports = { L, HostLane, WorkerLane, lowestBit, W_COUNTER, W_ARMED };
