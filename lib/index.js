"use strict";
// The package's public surface.

const { workerData } = require("node:worker_threads");
const { createPool, WORKER_MARK } = require("./pool.js");
const { PROCESS_WORKER_MARK } = require("./process-runtime.js");
const { task, importTask, stableTaskID } = require("./task.js");
const { WorkerExitError } = require("./errors.js");
const { CODEC_ERRORS } = require("./codec.js");

/** False inside a pool worker (task modules run there too), true elsewhere. */
const isMain =
  !(workerData !== null && typeof workerData === "object" && workerData[WORKER_MARK] === true) && globalThis[PROCESS_WORKER_MARK] !== true;

module.exports = { createPool, task, importTask, isMain, stableTaskID, WorkerExitError, CODEC_ERRORS };
