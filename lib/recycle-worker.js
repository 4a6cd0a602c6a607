"use strict";
// worker.maxCallsBeforeRecycle / worker.maxMemoryBeforeRecycle, the
// worker's side: counts the calls this worker ran and looks at its V8 heap
// between calls; recycle.js says what happens once a limit is reached.

const v8 = require("node:v8");

class WorkerRecycle {
  /** `limits`: `{ maxCalls, maxMemory }` (0: no limit). */
  constructor(limits) {
    this.maxCalls = limits.maxCalls;
    this.maxMemory = limits.maxMemory;
    this.calls = 0;
    this.due = null; // "calls" or "memory" once a limit is reached
  }

  /** A call ended (answered); returns the reason to recycle, or null. */
  callEnded() {
    if (this.due !== null) return this.due;
    this.calls++;
    if (this.maxCalls !== 0 && this.calls >= this.maxCalls) this.due = "calls";
    else if (this.maxMemory !== 0 && v8.getHeapStatistics().used_heap_size >= this.maxMemory) this.due = "memory";
    return this.due;
  }
}

module.exports = { WorkerRecycle };
