"use strict";
// How a pool runs its workers as worker threads: SharedArrayBuffers for the
// memory, `new Worker` for each lane, Atomics.notify to wake a parked worker.
// (The process runtime, spawn/process.js, offers the same four methods.)

const { CODE } = require("../errors.js");
const { Worker } = require("node:worker_threads");
const { join } = require("node:path");
const runtimes = require("../runtimes/index.js");

const WORKER_FILE = join(__dirname, "..", "worker", "thread-main.js");

class ThreadRuntime {
  constructor(worker) {
    if (worker.resourceLimits !== undefined && !runtimes.host.threadResourceLimits) {
      const err = new TypeError(
        `knitting-native: worker.resourceLimits is not supported on ${runtimes.host.name} ` +
          `${runtimes.host.version()} (its worker threads have no per-worker heap limits); leave it ` +
          `out on this runtime`,
      );
      err.code = CODE.INVALID_OPTION;
      throw err;
    }
    this.threadOptions = runtimes.host.threadOptions(worker.resourceLimits);
    // What worker/exit-guard.js enforces in each worker: the exit guard unless worker.allowExit, and the
    // permission option's muted console.
    const policy = worker.permission === undefined ? null : worker.permission;
    this.guard = { exit: worker.allowExit !== true, console: policy === null || policy.console };
  }

  /** The control region and the payload region (growable unless both sizes are equal: payload.mode "fixed"). */
  createMemory(controlBytes, payloadInitialBytes, payloadMaxByteLength) {
    const payload =
      payloadInitialBytes === payloadMaxByteLength
        ? new SharedArrayBuffer(payloadInitialBytes)
        : new SharedArrayBuffer(payloadInitialBytes, { maxByteLength: payloadMaxByteLength });
    this.payloadWords = new Int32Array(payload);
    return { control: new SharedArrayBuffer(controlBytes), payload };
  }

  /** Wakes whoever waits (Atomics.waitAsync) on word `index` of the payload region (a stream's channel). */
  wakePayloadWord(index) {
    Atomics.notify(this.payloadWords, index);
  }

  /** Wakes a worker (or `count` of them) parked in Atomics.waitAsync on word `index`. */
  wakeWorker(i32, index, count = 1) {
    Atomics.notify(i32, index, count);
  }

  /** A worker: emits "message", "error", "exit" (code); terminate() ends it. */
  spawn(workerData) {
    // The port for SharedArrayBuffers (payload/shared-refs.js) moves to the worker.
    const transferList = workerData.sharedPort !== undefined ? [workerData.sharedPort] : undefined;
    // The runtime's own adjustments to its Worker (runtimes/<name>.js).
    const options = { ...this.threadOptions, workerData: { ...workerData, guard: this.guard }, transferList };
    return runtimes.host.threadWorker(new Worker(WORKER_FILE, options));
  }

  close() {}
}

module.exports = { ThreadRuntime };
