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

/** Keys of the `worker` group that only a process runtime uses. */
const PROCESS_KEYS = ["processRuntime", "processSharedMemory", "processCommandPrefix", "processArgs", "execArgv", "env"];
const PROCESS_RUNTIMES = ["node", "deno", "bun"];
const SHM_PREFIX = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

function stringArray(value, name) {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw new TypeError(`knitting-native: ${name} must be an array of strings, got ${describe(value)}`);
  }
  return [...value];
}

/** worker.runtime "process": how each worker process is started. */
function resolveProcess(worker, out) {
  if (worker.resourceLimits !== undefined) {
    throw new TypeError('knitting-native: worker.resourceLimits applies to runtime "thread"; for runtime "process" pass V8 flags in worker.execArgv (e.g. "--max-old-space-size=512")');
  }
  const proc = { runtime: "node", sharedMemory: { mode: "inherit", namePrefix: undefined }, commandPrefix: [], args: [], execArgv: undefined, env: undefined };
  if (worker.processRuntime !== undefined) {
    if (!PROCESS_RUNTIMES.includes(worker.processRuntime)) {
      throw new TypeError(`knitting-native: worker.processRuntime must be one of ${PROCESS_RUNTIMES.map((r) => JSON.stringify(r)).join(", ")}, got ${describe(worker.processRuntime)}`);
    }
    proc.runtime = worker.processRuntime;
  }
  const shm = worker.processSharedMemory;
  if (shm !== undefined && shm !== "inherit") {
    if (shm === null || typeof shm !== "object" || Array.isArray(shm)) {
      throw new TypeError(`knitting-native: worker.processSharedMemory must be "inherit" or { mode: "named", namePrefix? }, got ${describe(shm)}`);
    }
    checkKeys(shm, ["mode", "namePrefix"], "worker.processSharedMemory.");
    if (shm.mode !== "named" && shm.mode !== "inherit") {
      throw new TypeError(`knitting-native: worker.processSharedMemory.mode must be "inherit" or "named", got ${describe(shm.mode)}`);
    }
    if (shm.namePrefix !== undefined) {
      if (shm.mode !== "named") throw new TypeError('knitting-native: worker.processSharedMemory.namePrefix needs mode "named"');
      if (typeof shm.namePrefix !== "string" || !SHM_PREFIX.test(shm.namePrefix)) {
        throw new TypeError(`knitting-native: worker.processSharedMemory.namePrefix must be 1 to 64 characters of A-Z a-z 0-9 . _ - (not starting with .), got ${describe(shm.namePrefix)}`);
      }
    }
    proc.sharedMemory = { mode: shm.mode, namePrefix: shm.namePrefix };
  }
  if (worker.processCommandPrefix !== undefined) proc.commandPrefix = stringArray(worker.processCommandPrefix, "worker.processCommandPrefix");
  if (worker.processArgs !== undefined) proc.args = stringArray(worker.processArgs, "worker.processArgs");
  if (worker.execArgv !== undefined) proc.execArgv = stringArray(worker.execArgv, "worker.execArgv");
  if (worker.env !== undefined) {
    checkObject(worker.env, "worker.env");
    for (const [key, value] of Object.entries(worker.env)) {
      if (typeof value !== "string") throw new TypeError(`knitting-native: worker.env.${key} must be a string, got ${describe(value)}`);
    }
    proc.env = { ...worker.env };
  }
  out.process = proc;
}

/** The `worker` group: how each worker is started and stopped. */
function resolveWorker(worker) {
  const out = { runtime: "thread", process: undefined, resourceLimits: undefined, hardTimeoutMs: undefined, resolveAfterFinishingAll: false, bootstrap: undefined };
  if (worker === undefined) return out;
  checkObject(worker, "worker");
  checkKeys(worker, ["runtime", "resourceLimits", "hardTimeoutMs", "resolveAfterFinishingAll", "bootstrap", ...PROCESS_KEYS], "worker.");
  if (worker.runtime !== undefined && worker.runtime !== "thread" && worker.runtime !== "process") {
    throw new TypeError(`knitting-native: worker.runtime must be "thread" or "process", got ${describe(worker.runtime)}`);
  }
  if (worker.runtime === "process") {
    out.runtime = "process";
    resolveProcess(worker, out);
  } else {
    const misplaced = PROCESS_KEYS.find((key) => worker[key] !== undefined);
    if (misplaced !== undefined) {
      throw new TypeError(`knitting-native: worker.${misplaced} applies to worker.runtime "process"; this pool uses runtime "thread"`);
    }
  }
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
  checkKeys(options, ["threads", "payload", "worker", "abortSignalCapacity", "debug"], "");
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
  return {
    threads,
    debug: options.debug === true,
    worker: resolveWorker(options.worker),
    abortSignalCapacity,
    ...resolved,
  };
}

module.exports = { resolveOptions, defaultThreads, DEFAULTS, describe };
