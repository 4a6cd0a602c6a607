"use strict";
// The steal protocol's host end: publishing calls, taking answers back, and
// taking back a dead (or left) worker's calls. The protocol, both ends and
// why it holds, is written up in lib/protocol/steal.js, which exports this class too;
// the model checker (__test__/model/) runs it as it runs the claimant.

const { lowestBit, popcount, nextBit } = require("./layout.js");
const { StealEnd } = require("./steal-words.js");
const { ownerWord } = require("./slot.js");

/** The host's end (steps 1, 2 and 5, and taking back a dead worker's calls). */
class HostSubmit extends StealEnd {
  constructor(i32, sectionByte, workers, regionLanes, width, notify) {
    super(i32, sectionByte, workers, regionLanes, width, notify);
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
      // The bits first, then OWNER = 0 (see step 2).
      Atomics.or(i32, this.pending + g, bits);
      while (bits !== 0) {
        const b = lowestBit(bits);
        bits &= bits - 1;
        // After the request's words: a claimant whose compare-exchange
        // reads 0 reads the request written before it.
        Atomics.store(i32, ownerWord(this.slotWord(g * this.width + b)), 0);
      }
    }
    if (published === 0) return;
    // After the or: a parking worker sets its SLEEPERS bit, then re-reads
    // PENDING; one of the two sequentially consistent loads sees the other.
    const sleepers = Atomics.load(i32, this.sleepers);
    if (sleepers === 0) return;
    // A spinner takes the first call itself; if it finds more, it passes
    // the baton (Claimant.serve).
    const wanted = Atomics.load(i32, this.spinner) !== 0 ? published - 1 : published;
    if (wanted > 0) this.wakeSleepers(sleepers, wanted);
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
      seen[g] ^= answered;
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
  /** Takes the call out of a consumed (or taken back) slot. */
  release(index) {
    const call = this.calls[index];
    this.calls[index] = null;
    return call;
  }
  /** Worker id in slot `index`'s OWNER word (-1: published, unclaimed). */
  ownerOf(index) {
    return Atomics.load(this.i32, ownerWord(this.slotWord(index))) - 1;
  }
  /**
   * Worker `w` is gone: settles the answers it published (`settle(index)`),
   * then returns the slots it claimed and did not answer (see "A worker
   * that dies"). The caller releases their calls and rejects them.
   */
  takeBack(w, settle) {
    const i32 = this.i32;
    const answered = this.takeDone(w, settle);
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
    if (this.anyPending()) this.wakeSleepers(Atomics.load(i32, this.sleepers), this.workers);
    return { answered, held };
  }
}

module.exports = { HostSubmit };
