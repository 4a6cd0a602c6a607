"use strict";
// The package's public surface. A task's `createPool` shorthand is attached
// here, where both tasks/task.js and host/pool.js are known (neither requires the other's
// entry point: no import cycle).

// host/pool.js (the host: lanes, the dispatcher, runtimes) loads on the first
// createPool, not here: every worker imports its task module, and so this
// entry, only to declare tasks. Loading the host in each worker took ~40% of
// the time from import to first answer (2026-12-06, Node 24.19, 2 threads:
// bench/user/startup.mjs).
let pool = null;
const loadPool = () => {
  pool ??= require("./api/create-pool.js");
  return pool;
};
const { isPoolWorker, belowPoolWorker } = require("./tasks/worker-context.js");
const inert = require("./api/inert-pool.js");
/** Creates a pool: see api/create-pool.js; inside a pool worker, an inert one (api/inert-pool.js). */
const createPool = (...args) => (belowPoolWorker() ? inert.createInertPool() : loadPool().createPool(...args));
const createSingleTaskPool = (...args) =>
  belowPoolWorker() ? inert.inertSingleTaskPool() : loadPool().createSingleTaskPool(...args);
const tasks = require("./tasks/task.js");
const { WorkerExitError } = require("./errors.js");
const { CODEC_ERRORS, transfer } = require("./codec/index.js");

// Shared bytes (payload/shared-bytes.js), loaded on first use: a task module
// that only declares tasks does not load it.
let bytesModule = null;
const loadBytes = () => {
  bytesModule ??= require("./payload/shared-bytes.js");
  return bytesModule;
};
/** `n` bytes of the pool's shared memory, in a task (pool.sharedBytes(n) in the host). */
const sharedBytes = (n) => loadBytes().sharedBytes(n);
/** Whether `value` is a SharedBytes. */
const isSharedBytes = (value) => loadBytes().isSharedBytes(value);

/** False inside a pool worker (task modules run there too), true elsewhere. */
const isMain = !isPoolWorker();

/** Declares a task: see tasks/task.js. */
const task = (definition) => tasks.task(definition, createSingleTaskPool);
/** Declares a task the worker imports from another module: see tasks/task.js. */
const importTask = (definition) => tasks.importTask(definition, createSingleTaskPool);

module.exports = {
  createPool,
  task,
  importTask,
  isMain,
  stableTaskID: tasks.stableTaskID,
  WorkerExitError,
  CODEC_ERRORS,
  transfer,
  sharedBytes,
  isSharedBytes,
};
