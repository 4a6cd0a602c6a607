"use strict";
// createPool's options: defaults, and validation that names the key at fault.

const os = require("node:os");

const MIB = 1024 * 1024;
/** Smallest payload region accepted (payloadInitialBytes, payloadMaxByteLength). */
const MIN_REGION_BYTES = 4096;
const DEFAULTS = Object.freeze({
  payloadInitialBytes: 4 * MIB,
  payloadMaxByteLength: 64 * MIB,
  maxPayloadBytes: 8 * MIB,
});

/** Abort-aware calls that may be in flight at once, by default. */
const DEFAULT_ABORT_SIGNALS = 1024;

/** One worker per core, leaving one core to the host's event loop. */
function defaultThreads() {
  const cores = typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length;
  return Math.max(1, cores - 1);
}

function describe(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" || typeof value === "boolean") return `${typeof value} ${value}`;
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  return typeof value;
}

function checkKeys(object, allowed, where) {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) {
      throw new TypeError(
        `knitting-native: unknown option ${where}${key}; allowed: ${allowed.map((k) => where + k).join(", ")}`,
      );
    }
  }
}

function checkObject(value, name) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(`knitting-native: ${name} must be an object, got ${describe(value)}`);
  }
}

function integerIn(value, name, min, max) {
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new TypeError(`knitting-native: ${name} must be an integer, got ${describe(value)}`);
  }
  if (value < min || value > max) {
    throw new RangeError(`knitting-native: ${name} must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

// Worker heap limits and the largest value of each that starts a worker here
// (past these, V8 aborts the whole process or the worker fails to start
// with an error that names no option).
const RESOURCE_LIMITS = {
  maxOldGenerationSizeMb: 131072,
  maxYoungGenerationSizeMb: 4096,
  codeRangeSizeMb: 4096,
  stackSizeMb: 1024,
};

/** The `worker` group: how each worker thread is started and stopped. */
function resolveWorker(worker) {
  const out = { resourceLimits: undefined, hardTimeoutMs: undefined, resolveAfterFinishingAll: false, bootstrap: undefined };
  if (worker === undefined) return out;
  checkObject(worker, "worker");
  checkKeys(worker, ["resourceLimits", "hardTimeoutMs", "resolveAfterFinishingAll", "bootstrap"], "worker.");
  if (worker.resourceLimits !== undefined) {
    checkObject(worker.resourceLimits, "worker.resourceLimits");
    checkKeys(worker.resourceLimits, Object.keys(RESOURCE_LIMITS), "worker.resourceLimits.");
    out.resourceLimits = {};
    for (const [key, max] of Object.entries(RESOURCE_LIMITS)) {
      const value = worker.resourceLimits[key];
      if (value === undefined) continue;
      if (typeof value !== "number") {
        throw new TypeError(`knitting-native: worker.resourceLimits.${key} must be a number of MB, got ${describe(value)}`);
      }
      if (!(value > 0 && value <= max)) {
        throw new RangeError(`knitting-native: worker.resourceLimits.${key} must be more than 0 and at most ${max} (MB), got ${value}`);
      }
      out.resourceLimits[key] = value;
    }
  }
  if (worker.hardTimeoutMs !== undefined) {
    const ms = worker.hardTimeoutMs;
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms <= 0) {
      throw new RangeError(`knitting-native: worker.hardTimeoutMs must be a positive number of milliseconds, got ${describe(ms)}`);
    }
    out.hardTimeoutMs = ms;
  }
  if (worker.resolveAfterFinishingAll !== undefined) {
    if (typeof worker.resolveAfterFinishingAll !== "boolean") {
      throw new TypeError(`knitting-native: worker.resolveAfterFinishingAll must be a boolean, got ${describe(worker.resolveAfterFinishingAll)}`);
    }
    out.resolveAfterFinishingAll = worker.resolveAfterFinishingAll;
  }
  if (worker.bootstrap !== undefined) {
    const b = worker.bootstrap;
    checkObject(b, "worker.bootstrap");
    checkKeys(b, ["href", "name", "data"], "worker.bootstrap.");
    if (typeof b.href !== "string" || b.href === "") {
      throw new TypeError(`knitting-native: worker.bootstrap.href must be a module URL or relative path, got ${describe(b.href)}`);
    }
    if (b.name !== undefined && (typeof b.name !== "string" || b.name === "")) {
      throw new TypeError(`knitting-native: worker.bootstrap.name must be the name of an exported function, got ${describe(b.name)}`);
    }
    out.bootstrap = { href: b.href, name: b.name, data: b.data };
  }
  return out;
}

/** Validated options with defaults filled in. */
function resolveOptions(options, maxLanes, maxAbortSlots) {
  if (options === undefined) options = {};
  checkObject(options, "createPool(options)");
  checkKeys(options, ["threads", "payload", "worker", "abortSignalCapacity", "debug", "host", "balancer", "inliner"], "");
  const threads = options.threads === undefined ? defaultThreads() : integerIn(options.threads, "threads", options.inliner ? 0 : 1, maxLanes);
  if (options.debug !== undefined && typeof options.debug !== "boolean") {
    throw new TypeError(`knitting-native: debug must be a boolean, got ${describe(options.debug)}`);
  }
  const payload = options.payload === undefined ? {} : options.payload;
  checkObject(payload, "payload");
  checkKeys(payload, Object.keys(DEFAULTS), "payload.");
  const max = 4 * 1024 * MIB; // a SharedArrayBuffer's practical ceiling here
  const resolved = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS)) {
    // The region itself needs room for its allocator's header and a block.
    const min = key === "maxPayloadBytes" ? 1 : MIN_REGION_BYTES;
    if (payload[key] !== undefined) resolved[key] = integerIn(payload[key], `payload.${key}`, min, max);
  }
  if (resolved.payloadInitialBytes > resolved.payloadMaxByteLength) {
    throw new RangeError(
      `knitting-native: payload.payloadInitialBytes (${resolved.payloadInitialBytes}) must not exceed payload.payloadMaxByteLength (${resolved.payloadMaxByteLength})`,
    );
  }
  if (resolved.maxPayloadBytes > resolved.payloadMaxByteLength) {
    throw new RangeError(
      `knitting-native: payload.maxPayloadBytes (${resolved.maxPayloadBytes}) must not exceed payload.payloadMaxByteLength (${resolved.payloadMaxByteLength})`,
    );
  }
  const abortSignalCapacity =
    options.abortSignalCapacity === undefined
      ? DEFAULT_ABORT_SIGNALS
      : integerIn(options.abortSignalCapacity, "abortSignalCapacity", 0, maxAbortSlots);
  // Interim scheduling defaults; full validation lives in resolveTopology.
  const host = { steal: undefined, stealRegionLanes: undefined, dispatcher: undefined, doorbell: true, stallFreeLoops: undefined, maxBackoffMs: undefined, ...(options.host || {}) };
  const inliner = options.inliner ? { position: "last", batchSize: 1, dispatchThreshold: 1, ...options.inliner } : null;
  const balancer = options.balancer === "robinRound" ? "roundRobin" : options.balancer;
  const steal = host.steal !== undefined ? host.steal : threads >= 2 && threads <= 31 && !balancer && !host.dispatcher && !inliner;
  const topology = { steal, regionLanes: steal ? host.stealRegionLanes || threads : 0, regionWidth: steal ? (32 * threads) / (host.stealRegionLanes || threads) : 0, dispatcher: host.dispatcher || "per-thread", balancer: balancer || null, inline: inliner !== null };
  return {
    threads,
    host,
    inliner,
    balancer,
    topology,
    debug: options.debug === true,
    worker: resolveWorker(options.worker),
    abortSignalCapacity,
    ...resolved,
  };
}

module.exports = { resolveOptions, defaultThreads, DEFAULTS, describe };
