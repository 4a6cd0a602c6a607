"use strict";
// Whether this code runs inside a pool worker, where createPool returns an
// inert pool (api/inert-pool.js).
//
// Task modules are imported in the host and in every worker, so a module
// that calls createPool at its top level would, without a guard, start a
// pool in each worker, whose workers would start pools of their own. A
// pool worker marks itself (its workerData for threads, a global for
// processes) and sets POOL_WORKER_ENV in its environment, which worker
// threads and child processes started from inside it inherit: no pool
// starts anywhere below a pool worker.

const { workerData } = require("node:worker_threads");

const WORKER_MARK = "__knittingNativeWorker";
/** Set by worker/process-main.js: `isMain` is false in a worker process. */
const PROCESS_WORKER_MARK = Symbol.for("knitting-native.processWorker");
/** Inherited by whatever a pool worker starts. */
const POOL_WORKER_ENV = "KNITTING_NATIVE_POOL_WORKER";

/** True in a pool worker itself (thread or process). */
function isPoolWorker() {
  const marked = workerData !== null && typeof workerData === "object" && workerData[WORKER_MARK] === true;
  return marked || globalThis[PROCESS_WORKER_MARK] === true;
}

/** Called once a pool worker starts: what it starts inherits the mark. */
function markPoolWorker() {
  process.env[POOL_WORKER_ENV] = "1";
}

/** True in a pool worker or in anything started from inside one. */
function belowPoolWorker() {
  return isPoolWorker() || process.env[POOL_WORKER_ENV] === "1";
}

module.exports = {
  WORKER_MARK,
  PROCESS_WORKER_MARK,
  POOL_WORKER_ENV,
  isPoolWorker,
  markPoolWorker,
  belowPoolWorker,
};
