"use strict";
// The options a server sets on a pool: the queue limit (`maxQueue`),
// statistics (`stats`) and worker recycling (`worker.maxCallsBeforeRecycle`,
// `worker.maxMemoryBeforeRecycle`). Validated here, with the same errors as
// every other option (options/index.js: KNT_INVALID_OPTION).

const { L } = require("../protocol/layout.js");

/**
 * maxQueue "auto": the queue may hold as many calls as the workers' slots
 * do (L.slotCount per worker: a lane's, or its share of the stealing
 * region), so calls wait at most about two slots' worth of work
 * before one is refused.
 */
const AUTO_QUEUE_PER_WORKER = L.slotCount;
/** Far past any useful value: there to turn a slip (1e12) into an error. */
const MAX_QUEUE = 2 ** 30;
const MAX_CALLS_BEFORE_RECYCLE = 2 ** 31 - 1;

/** `maxQueue`: null (unbounded, the default), or the most calls that may wait for a slot. */
function resolveMaxQueue(value, threads, optionError, describe) {
  if (value === undefined) return null;
  if (value === "auto") return Math.max(1, threads) * AUTO_QUEUE_PER_WORKER;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw optionError(
      TypeError,
      "knitting-native: maxQueue must be an integer (the most calls that may wait for a free slot) " +
        `or "auto", got ${describe(value)}`,
    );
  }
  if (value < 0 || value > MAX_QUEUE) {
    throw optionError(
      RangeError,
      `knitting-native: maxQueue must be between 0 and ${MAX_QUEUE}, or "auto", got ${value}`,
    );
  }
  return value;
}

/** `stats`: whether workers time their calls for pool.stats() (run/wait times, utilization). */
function resolveStats(value, optionError, describe) {
  if (value === undefined) return false;
  if (typeof value !== "boolean")
    throw optionError(TypeError, `knitting-native: stats must be a boolean, got ${describe(value)}`);
  return value;
}

/**
 * `worker.maxCallsBeforeRecycle` and `worker.maxMemoryBeforeRecycle`:
 * null when neither is set, else `{ maxCalls, maxMemory }` (0 for unset).
 */
function resolveRecycle(worker, optionError, describe) {
  const calls = worker.maxCallsBeforeRecycle;
  const memory = worker.maxMemoryBeforeRecycle;
  if (calls === undefined && memory === undefined) return null;
  const out = { maxCalls: 0, maxMemory: 0 };
  if (calls !== undefined) {
    if (typeof calls !== "number" || !Number.isInteger(calls)) {
      throw optionError(
        TypeError,
        "knitting-native: worker.maxCallsBeforeRecycle must be an integer " +
          `(calls a worker runs before it is replaced), got ${describe(calls)}`,
      );
    }
    if (calls < 1 || calls > MAX_CALLS_BEFORE_RECYCLE) {
      throw optionError(
        RangeError,
        `knitting-native: worker.maxCallsBeforeRecycle must be between 1 and ${MAX_CALLS_BEFORE_RECYCLE}, got ${calls}`,
      );
    }
    out.maxCalls = calls;
  }
  if (memory !== undefined) {
    if (typeof memory !== "number" || !Number.isInteger(memory)) {
      throw optionError(
        TypeError,
        "knitting-native: worker.maxMemoryBeforeRecycle must be an integer number of bytes " +
          `(of the worker's V8 heap), got ${describe(memory)}`,
      );
    }
    if (memory < 1 || memory > Number.MAX_SAFE_INTEGER) {
      throw optionError(
        RangeError,
        "knitting-native: worker.maxMemoryBeforeRecycle must be between 1 and " +
          `${Number.MAX_SAFE_INTEGER} (bytes), got ${memory}`,
      );
    }
    out.maxMemory = memory;
  }
  return out;
}

/** Keys of createPool's options that this module validates. */
const SERVER_KEYS = ["maxQueue", "stats"];
/** Keys of the `worker` group that this module validates. */
const RECYCLE_KEYS = ["maxCallsBeforeRecycle", "maxMemoryBeforeRecycle"];

module.exports = {
  resolveMaxQueue,
  resolveStats,
  resolveRecycle,
  SERVER_KEYS,
  RECYCLE_KEYS,
  AUTO_QUEUE_PER_WORKER,
};
