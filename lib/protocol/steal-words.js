"use strict";
// Where the words of a steal section are (lib/protocol/steal.js is the protocol that
// uses them), from the section's offset and Rust's layout() (protocol/layout.js,
// with the bit helpers); and what both ends do with the words (StealEnd).

const { L, lowestBit, maskOf } = require("./layout.js");

/** Word and byte offsets of one steal section, shared by both ends (addresses only). */
class StealGeometry {
  /**
   * `sectionByte`: the section's offset in the control region (Rust's
   * stealOffset); `workers` claimants; `regionLanes` lanes of `width` slots.
   * `notify(index)`: wakes whoever sleeps on word `index` (the runtime's
   * way: Atomics.notify for threads, a shared futex for processes).
   */
  constructor(i32, sectionByte, workers, regionLanes, width, notify) {
    this.i32 = i32;
    this.notify = notify;
    this.workers = workers;
    this.regionLanes = regionLanes;
    this.width = width;
    this.slots = regionLanes * width;
    this.full = maskOf(width);
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
  /** Word index of the first header word of slot `index` (= g * width + b). */
  slotWord(index) {
    return (this.slotsByte + index * L.slotStride) / 4;
  }
  /** Byte offset of slot `index`'s inline payload. */
  slotPayload(index) {
    return this.slotsByte + index * L.slotStride + L.slotHeaderBytes;
  }
}

/** What both ends of the steal protocol do with the section's words: wake a worker, look for work. */
class StealEnd extends StealGeometry {
  /** Wakes worker `w` if it is parked (bump its WAKE, then notify it). */
  wakeWorker(w) {
    const word = this.wakeWord(w);
    Atomics.add(this.i32, word, 1);
    this.notify(word);
  }
  /** Wakes up to `count` of the workers in `sleepers` (lowest first). */
  wakeSleepers(sleepers, count) {
    for (let n = 0; sleepers !== 0 && n < count; n++) {
      const w = lowestBit(sleepers);
      sleepers &= sleepers - 1;
      this.wakeWorker(w);
    }
  }
  /** Whether any PENDING bit is set. */
  anyPending() {
    for (let g = 0; g < this.regionLanes; g++) {
      if (Atomics.load(this.i32, this.pending + g) !== 0) return true;
    }
    return false;
  }
}

module.exports = { StealGeometry, StealEnd };
