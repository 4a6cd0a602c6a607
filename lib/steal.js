"use strict";
// The steal protocol in JavaScript: both ends of a shared submit region. The
// protocol (who writes which word, in which order, and why no call is lost,
// duplicated or misdelivered) is written down once, in src/memory/steal.rs;
// this file follows it step by step. All offsets come from Rust's layout().

const { L, lowestBit } = require("./lane.js");

/**
 * The first set bit of `mask` at or after bit `from` (wrapping around), or
 * -1. Host and claimants both walk their slots from a cursor that follows
 * the last one used, so slots are filled and claimed in rotation: the order
 * calls were published in, roughly. Always the lowest bit would let new
 * calls in freed low slots overtake an old one in a high slot again and
 * again (its p99 grows without bound while the region stays full).
 */
function nextBit(mask, from) {
  if (mask === 0) return -1;
  const ahead = from >= 32 ? 0 : mask & (-1 << from);
  return lowestBit(ahead !== 0 ? ahead : mask);
}

const popcount = (x) => {
  let n = 0;
  for (; x !== 0; x &= x - 1) n++;
  return n;
};

/** Word and byte offsets of one steal section, shared by both ends. */
class StealGeometry {
  /**
   * `sectionByte`: the section's offset in the control region (Rust's
   * stealOffset); `workers` claimants; `regionLanes` lanes of `width` slots.
   */
  constructor(sectionByte, workers, regionLanes, width) {
    this.workers = workers;
    this.regionLanes = regionLanes;
    this.width = width;
    this.slots = regionLanes * width;
    this.full = width === 32 ? -1 : (1 << width) - 1;
    const base = sectionByte / 4;
    this.pending = base + L.stealWordPending; // PENDING[g] = pending + g
    this.sleepers = base + L.stealWordSleepers;
    this.idle = base + L.stealWordIdle;
    this.spinner = base + L.stealWordSpinner;
    this.doneByte = sectionByte + L.stealDoneOffset;
    this.slotsByte = this.doneByte + workers * L.doneStride;
  }
  /** Word index of DONE[w][g]. */
  doneWord(w, g) {
    return (this.doneByte + w * L.doneStride) / 4 + g;
  }
  doneSeqWord(w) {
    return (this.doneByte + w * L.doneStride) / 4 + L.doneSeqWord;
  }
  /** Word index of WAKE[w], the counter worker `w` parks on. */
  wakeWord(w) {
    return (this.doneByte + w * L.doneStride) / 4 + L.wakeWord;
  }
  /** Wakes worker `w` if it is parked (bump its WAKE, then notify it). */
  wakeWorker(w) {
    const word = this.wakeWord(w);
    Atomics.add(this.i32, word, 1);
    this.notify(word);
  }
  /** Word index of the first header word of slot `index` (= g * width + b). */
  slotWord(index) {
    return (this.slotsByte + index * L.slotStride) / 4;
  }
  /** Byte offset of slot `index`'s inline payload. */
  slotPayload(index) {
    return this.slotsByte + index * L.slotStride + L.slotHeaderBytes;
  }
}

/** The host's end (steps 1, 2 and 5, and reclaiming a dead worker's calls). */
class HostSubmit extends StealGeometry {
  /** `notify(index)`: wakes a worker sleeping on word `index` (the runtime's way). */
  constructor(i32, sectionByte, workers, regionLanes, width, notify) {
    super(sectionByte, workers, regionLanes, width);
    this.i32 = i32;
    this.notify = notify;
    this.busy = new Int32Array(regionLanes); // published, not yet consumed
    this.fresh = new Int32Array(regionLanes); // published since the last flush
    this.calls = new Array(this.slots).fill(null); // the pool's registry of pending calls
    this.seen = [];
    this.seenSeq = new Int32Array(workers);
    for (let w = 0; w < workers; w++) this.seen.push(new Int32Array(regionLanes));
    this.inFlight = 0;
    this.nextLane = 0;
    this.cursor = new Int32Array(regionLanes); // next slot to try, per region lane
  }
  /** A slot the host does not hold (g * width + b), or -1. */
  freeSlot() {
    if (this.inFlight === this.slots) return -1;
    // Start where the last search ended: published calls spread over the
    // region lanes, and a full lane is not rescanned on every call.
    for (let i = 0; i < this.regionLanes; i++) {
      const g = this.nextLane;
      const b = nextBit(~this.busy[g] & this.full, this.cursor[g]);
      if (b >= 0) {
        this.cursor[g] = b + 1;
        return g * this.width + b;
      }
      this.nextLane = g + 1 === this.regionLanes ? 0 : g + 1;
    }
    return -1;
  }
  /** Step 1, after the request is written: the slot joins this burst. */
  publish(index, call) {
    const g = (index / this.width) | 0;
    const bit = 1 << (index - g * this.width);
    this.busy[g] |= bit;
    this.fresh[g] |= bit;
    this.calls[index] = call;
    this.inFlight++;
  }
  /** Step 2: hand the burst to the claimants and wake sleepers. */
  flush() {
    const i32 = this.i32;
    let published = 0;
    for (let g = 0; g < this.regionLanes; g++) {
      let bits = this.fresh[g];
      if (bits === 0) continue;
      this.fresh[g] = 0;
      published += popcount(bits);
      // The bits first, then OWNER = 0 (steal.rs, step 2): a claimant that
      // sees a bit early loses its compare-exchange and tries again, while
      // the other order lets one holding an old PENDING snapshot win a slot
      // before its bit is set, and the bit it then clears is set after.
      Atomics.or(i32, this.pending + g, bits);
      while (bits !== 0) {
        const b = lowestBit(bits);
        bits &= bits - 1;
        // After the request's words: a claimant whose compare-exchange
        // reads 0 reads the request written before it.
        Atomics.store(i32, this.slotWord(g * this.width + b) + L.slotWordOwner, 0);
      }
    }
    if (published === 0) return;
    // After the or: a parking worker sets its SLEEPERS bit, then re-reads
    // PENDING; one of the two sequentially consistent loads sees the other.
    const sleepers = Atomics.load(i32, this.sleepers);
    if (sleepers === 0) return;
    // A spinning worker takes the first call itself (steal.rs, Waiting).
    const wanted = Atomics.load(i32, this.spinner) !== 0 ? published - 1 : published;
    if (wanted > 0) this.wakeSleepers(sleepers, wanted);
  }
  /** Wakes up to `count` of the workers in `sleepers` (lowest first). */
  wakeSleepers(sleepers, count) {
    for (let n = 0; sleepers !== 0 && n < count; n++) {
      const w = lowestBit(sleepers);
      sleepers &= sleepers - 1;
      this.wakeWorker(w);
    }
  }
  /**
   * Step 5 for worker `w`: calls `settle(index)` for each answered slot
   * (freed first); returns how many.
   */
  takeDone(w, settle) {
    const i32 = this.i32;
    const seq = Atomics.load(i32, this.doneSeqWord(w));
    if (seq === this.seenSeq[w]) return 0;
    this.seenSeq[w] = seq;
    const seen = this.seen[w];
    let settled = 0;
    for (let g = 0; g < this.regionLanes; g++) {
      if (this.busy[g] === 0) continue;
      const done = Atomics.load(i32, this.doneWord(w, g));
      // Only slots the host handed out (DONE is writable by task code).
      let answered = (done ^ seen[g]) & this.busy[g];
      if (answered === 0) continue;
      seen[g] = done;
      this.busy[g] &= ~answered;
      while (answered !== 0) {
        const b = lowestBit(answered);
        answered &= answered - 1;
        this.inFlight--;
        settle(g * this.width + b);
        settled++;
      }
    }
    return settled;
  }
  /** Takes the call out of a consumed (or reclaimed) slot. */
  release(index) {
    const call = this.calls[index];
    this.calls[index] = null;
    return call;
  }
  /** Worker `w`'s id in OWNER words. */
  ownerOf(index) {
    return Atomics.load(this.i32, this.slotWord(index) + L.slotWordOwner) - 1;
  }
  /**
   * Worker `w` is gone (call after `takeDone(w)`): the slots it claimed and
   * did not answer. They are freed, their PENDING bits cleared (it may have
   * died between winning and clearing), and its done lines zeroed for its
   * replacement.
   */
  reclaim(w) {
    const i32 = this.i32;
    const held = [];
    for (let g = 0; g < this.regionLanes; g++) {
      let busy = this.busy[g] & ~this.fresh[g];
      while (busy !== 0) {
        const b = lowestBit(busy);
        busy &= busy - 1;
        const index = g * this.width + b;
        if (this.ownerOf(index) !== w) continue;
        this.busy[g] &= ~(1 << b);
        Atomics.and(i32, this.pending + g, ~(1 << b));
        this.inFlight--;
        held.push(index);
      }
      Atomics.store(i32, this.doneWord(w, g), 0);
      this.seen[w][g] = 0;
    }
    Atomics.store(i32, this.doneSeqWord(w), 0);
    this.seenSeq[w] = 0;
    Atomics.and(i32, this.sleepers, ~(1 << w));
    Atomics.and(i32, this.idle, ~(1 << w));
    // A dead spinner spins no more: free its turn, and wake the sleepers
    // for any work the host left to it.
    Atomics.compareExchange(i32, this.spinner, w + 1, 0);
    let pending = false;
    for (let g = 0; g < this.regionLanes; g++) if (Atomics.load(i32, this.pending + g) !== 0) pending = true;
    if (pending) this.wakeSleepers(Atomics.load(i32, this.sleepers), this.workers);
    return held;
  }
}

/** A worker's end (steps 3 and 4, and parking). */
class Claimant extends StealGeometry {
  /** `notify(index)`: wakes whoever sleeps on word `index` (the runtime's way). */
  constructor(i32, sectionByte, workers, regionLanes, width, w, notify) {
    super(sectionByte, workers, regionLanes, width);
    this.i32 = i32;
    this.notify = notify;
    this.w = w;
    this.me = w + 1;
    this.bit = 1 << w;
    this.done = new Int32Array(regionLanes);
    for (let g = 0; g < regionLanes; g++) this.done[g] = Atomics.load(i32, this.doneWord(w, g));
    this.changed = false;
    this.home = w % regionLanes;
    this.cursor = new Int32Array(regionLanes); // where the next claim starts, per region lane
    this.idleSet = false; // this worker's IDLE bit, as last stored
    this.spinning = false; // whether this worker holds SPINNER
  }
  /** IDLE hint: this worker holds no started call (true) or does (false). */
  setIdle(idle) {
    if (idle === this.idleSet) return;
    this.idleSet = idle;
    if (idle) Atomics.or(this.i32, this.idle, this.bit);
    else Atomics.and(this.i32, this.idle, ~this.bit);
  }
  /** Takes the one spinning turn if it is free (or already this worker's). */
  trySpin() {
    if (!this.spinning) this.spinning = Atomics.compareExchange(this.i32, this.spinner, 0, this.me) === 0;
    return this.spinning;
  }
  /** Gives the spinning turn back, if this worker holds it. */
  stopSpinning() {
    if (!this.spinning) return;
    this.spinning = false;
    Atomics.compareExchange(this.i32, this.spinner, this.me, 0);
  }
  /** Whether another worker holds no started call. */
  othersIdle() {
    return (Atomics.load(this.i32, this.idle) & ~this.bit) !== 0;
  }
  /**
   * Step 3: claims up to `max` calls of one region lane; their slot indexes
   * go to `out`; returns how many. One PENDING clear covers them all. Calls
   * claimed together are run one after the other by this worker: the caller
   * keeps `max` at 1 unless calls are short.
   */
  claim(max, out) {
    const i32 = this.i32;
    const lanes = this.regionLanes;
    for (let i = 0, g = this.home; i < lanes; i++, g = g + 1 === lanes ? 0 : g + 1) {
      let pending = Atomics.load(i32, this.pending + g);
      let from = this.cursor[g];
      let won = 0;
      let n = 0;
      while (pending !== 0 && n < max) {
        const b = nextBit(pending, from);
        pending &= ~(1 << b);
        from = b + 1;
        const index = g * this.width + b;
        if (Atomics.compareExchange(i32, this.slotWord(index) + L.slotWordOwner, 0, this.me) === 0) {
          won |= 1 << b;
          out[n++] = index;
          this.cursor[g] = b + 1;
        }
      }
      if (n !== 0) {
        // Only the winner clears the bits it won (see steal.rs, step 3).
        Atomics.and(i32, this.pending + g, ~won);
        return n;
      }
    }
    return 0;
  }
  /** Whether any PENDING bit is set. */
  anyPending() {
    for (let g = 0; g < this.regionLanes; g++) {
      if (Atomics.load(this.i32, this.pending + g) !== 0) return true;
    }
    return false;
  }
  /** Step 4, deferred: the response of slot `index` is written. */
  finish(index) {
    const g = (index / this.width) | 0;
    this.done[g] ^= 1 << (index - g * this.width);
    this.changed = true;
  }
  /** Step 4: publish every answer since the last flush; true if any. */
  flush() {
    if (!this.changed) return false;
    this.changed = false;
    const i32 = this.i32;
    for (let g = 0; g < this.regionLanes; g++) {
      const word = this.doneWord(this.w, g);
      if (i32[word] !== this.done[g]) Atomics.store(i32, word, this.done[g]);
    }
    Atomics.add(i32, this.doneSeqWord(this.w), 1);
    return true;
  }
}

module.exports = { StealGeometry, HostSubmit, Claimant };
