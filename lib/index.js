"use strict";
// The package's public surface.

const { createPool } = require("./pool.js");
const { isPoolWorker } = require("./worker-context.js");
const { task, importTask, stableTaskID } = require("./task.js");
const { WorkerExitError } = require("./errors.js");
const { CODEC_ERRORS } = require("./codec.js");

/** False inside a pool worker (task modules run there too), true elsewhere. */
const isMain = !isPoolWorker();

module.exports = { createPool, task, importTask, isMain, stableTaskID, WorkerExitError, CODEC_ERRORS };
