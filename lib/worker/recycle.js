"use strict";
// worker.maxCallsBeforeRecycle / worker.maxMemoryBeforeRecycle, the
// worker's side: counts the calls this worker ran and looks at its V8 heap
// between calls; server/recycle.js says what happens once a limit is reached.

const { usedHeapSize } = require("../lazy-v8.js");

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
    else if (this.maxMemory !== 0 && usedHeapSize() >= this.maxMemory) this.due = "memory";
    return this.due;
  }
}

/**
 * Work stealing: at its limit the worker claims no new call (`retire`),
 * and leaves the claimants once it holds none: no async call of its own
 * pending (`port.asyncRunning`), no answer waiting for room in the payload
 * region (`answersWaiting`). Publishes its answers
 * and stops claiming (`port.leave()`), then `exit()`s: ends itself or asks
 * the host to end it. `exit()` may return (a worker thread's does: it waits
 * for the host's terminate()), and the worker's queued callbacks may still
 * run; `leave()` makes them take no step. False when it still holds a call:
 * the end of its next async call (or its last answer written) tries again. The host then takes the worker's slots
 * back (finding none) and starts a replacement, which joins as a new
 * claimant (lib/protocol/steal.js, "A worker that dies"). The protocol model runs
 * this very function for its leave steps.
 */
function leaveWhenEmpty(port, answersWaiting, exit) {
  port.retire();
  if (port.asyncRunning !== 0 || answersWaiting !== 0) return false;
  port.leave();
  exit();
  return true;
}

module.exports = { WorkerRecycle, leaveWhenEmpty };
