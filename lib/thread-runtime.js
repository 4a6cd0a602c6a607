"use strict";
// How a pool runs its workers as worker threads: SharedArrayBuffers for the
// memory, `new Worker` for each lane, Atomics.notify to wake a parked worker.
// (The process runtime, process-runtime.js, offers the same four methods.)

const { Worker } = require("node:worker_threads");
const { join } = require("node:path");

const WORKER_FILE = join(__dirname, "worker.js");

class ThreadRuntime {
  constructor(worker) {
    this.resourceLimits = worker.resourceLimits;
  }

  /** The control region and the (growable) payload region. */
  createMemory(controlBytes, payloadInitialBytes, payloadMaxByteLength) {
    return {
      control: new SharedArrayBuffer(controlBytes),
      payload: new SharedArrayBuffer(payloadInitialBytes, { maxByteLength: payloadMaxByteLength }),
    };
  }

  /** Wakes a worker (or `count` of them) parked in Atomics.waitAsync on word `index`. */
  wakeWorker(i32, index, count = 1) {
    Atomics.notify(i32, index, count);
  }

  /** A worker: emits "message", "error", "exit" (code); terminate() ends it. */
  spawn(workerData) {
    return new Worker(WORKER_FILE, { resourceLimits: this.resourceLimits, workerData });
  }

  close() {}
}

module.exports = { ThreadRuntime };
