"use strict";
// createPool's options: defaults, and validation that names the key at fault.

const os = require("node:os");

const MIB = 1024 * 1024;
const DEFAULTS = Object.freeze({
  payloadInitialBytes: 4 * MIB,
  payloadMaxByteLength: 64 * MIB,
  maxPayloadBytes: 8 * MIB,
});

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

const RESOURCE_LIMITS = ["maxOldGenerationSizeMb", "maxYoungGenerationSizeMb", "codeRangeSizeMb", "stackSizeMb"];

/** The `worker` group: how each worker thread is started. */
function resolveWorker(worker) {
  if (worker === undefined) return { resourceLimits: undefined };
  checkObject(worker, "worker");
  checkKeys(worker, ["resourceLimits"], "worker.");
  let resourceLimits;
  if (worker.resourceLimits !== undefined) {
    checkObject(worker.resourceLimits, "worker.resourceLimits");
    checkKeys(worker.resourceLimits, RESOURCE_LIMITS, "worker.resourceLimits.");
    resourceLimits = {};
    for (const key of RESOURCE_LIMITS) {
      const value = worker.resourceLimits[key];
      if (value === undefined) continue;
      if (typeof value !== "number" || !(value > 0) || !Number.isFinite(value)) {
        throw new RangeError(`knitting-native: worker.resourceLimits.${key} must be a positive number of MB, got ${describe(value)}`);
      }
      resourceLimits[key] = value;
    }
  }
  return { resourceLimits };
}

/** Validated options with defaults filled in. */
function resolveOptions(options, maxLanes) {
  if (options === undefined) options = {};
  checkObject(options, "createPool(options)");
  checkKeys(options, ["threads", "payload", "worker", "debug"], "");
  const threads = options.threads === undefined ? defaultThreads() : integerIn(options.threads, "threads", 1, maxLanes);
  if (options.debug !== undefined && typeof options.debug !== "boolean") {
    throw new TypeError(`knitting-native: debug must be a boolean, got ${describe(options.debug)}`);
  }
  const payload = options.payload === undefined ? {} : options.payload;
  checkObject(payload, "payload");
  checkKeys(payload, Object.keys(DEFAULTS), "payload.");
  const max = 4 * 1024 * MIB; // a SharedArrayBuffer's practical ceiling here
  const resolved = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS)) {
    if (payload[key] !== undefined) resolved[key] = integerIn(payload[key], `payload.${key}`, 1, max);
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
  return { threads, debug: options.debug === true, worker: resolveWorker(options.worker), ...resolved };
}

module.exports = { resolveOptions, defaultThreads, DEFAULTS, describe };
