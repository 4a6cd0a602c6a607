"use strict";
// createPool's options: defaults, and validation that names the key at fault.

const os = require("node:os");
const { resolvePermission } = require("./permission.js");
const { checkPermission, PERMISSION_FLAG } = require("./permission-runtimes.js");
const runtimes = require("../runtimes/index.js");
const server = require("./server.js");
const { resolveElastic, ELASTIC_KEYS } = require("./elastic.js");
const { DEFAULT_ABANDON_GRACE_MS, resolveAbandonGrace } = require("./abandon-grace.js");
const { optionError, describe, checkKeys, checkObject, integerIn, numberIn, boolean } = require("./checks.js");
const {
  resolveHost,
  resolveBalancer,
  resolveInliner,
  resolveTopology,
  envSteal,
  envDispatcher,
  MAX_STEAL_CLAIMANTS,
  LANE_SLOTS,
  BALANCERS,
  DISPATCHERS,
} = require("./scheduling.js");

const { resolvePayload, DEFAULTS } = require("./payload.js");

/** Abort-aware calls that may be in flight at once, by default. */
const DEFAULT_ABORT_SIGNALS = 1024;

/**
 * One worker per core. The host sleeps while workers compute (host/loop.js),
 * so it needs no core of its own. `node bench/threads-default.mjs --reps 2`,
 * 2026-12-06, Node 20.20.2, 2 vCPUs, medians, threads 1 (cores - 1) -> 2:
 * burst of 2,000 x ~1 ms calls 2,050 -> 1,110 ms; HTTP server with a
 * ~0.5 ms task per request 1,943 -> 2,971 req/s; tiny calls 2.09 M -> 1.69 M
 * calls/s (the one shape where the host's own core pays).
 */
function defaultThreads() {
  const cores = typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length;
  return Math.max(1, cores);
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

/** Debug channels `debug: { ... }` may turn on (host/debug.js's namespaces). */
const DEBUG_CHANNELS = ["host", "lifecycle", "imports", "signals"];

/**
 * `debug`: a boolean (every channel or none), or an object of channels as
 * knitting takes it (`{ host: true, imports: true }`). Returns true, false,
 * or the array of channels turned on.
 */
function resolveDebug(debug) {
  if (debug === undefined || typeof debug === "boolean") return debug === true;
  if (debug === null || typeof debug !== "object" || Array.isArray(debug)) {
    throw optionError(
      TypeError,
      `knitting-native: debug must be a boolean or an object of channels { ${DEBUG_CHANNELS.join(", ")} }, got ` +
        `${describe(debug)}`,
    );
  }
  checkKeys(debug, DEBUG_CHANNELS, "debug.");
  const on = [];
  for (const channel of DEBUG_CHANNELS) {
    if (debug[channel] === undefined) continue;
    if (boolean(debug[channel], `debug.${channel}`)) on.push(channel);
  }
  return on.length === 0 ? false : on;
}

/**
 * worker.timers: how long an idle worker spins before it parks
 * (`spinMicroseconds`, default 50: worker/serve.js measures it) and the longest it
 * then sleeps before looking again (`parkMs`, default: until woken).
 */
const DEFAULT_TIMERS = Object.freeze({ spinMicroseconds: undefined, parkMs: undefined });
const MAX_SPIN_MICROS = 1_000_000;
const MAX_PARK_MS = 3_600_000;

function resolveTimers(timers) {
  checkObject(timers, "worker.timers");
  checkKeys(timers, ["spinMicroseconds", "parkMs"], "worker.timers.");
  const out = { spinMicroseconds: undefined, parkMs: undefined };
  if (timers.spinMicroseconds !== undefined) {
    out.spinMicroseconds = numberIn(
      timers.spinMicroseconds,
      "worker.timers.spinMicroseconds",
      0,
      MAX_SPIN_MICROS,
      "µs",
    );
  }
  if (timers.parkMs !== undefined) out.parkMs = numberIn(timers.parkMs, "worker.timers.parkMs", 0, MAX_PARK_MS, "ms");
  return out;
}

/** Keys of the `worker` group that only a process runtime uses. */
const PROCESS_KEYS = [
  "processRuntime",
  "processExecutable",
  "processSharedMemory",
  "processCommandPrefix",
  "processArgs",
  "execArgv",
  "env",
];
const PROCESS_RUNTIMES = ["node", "deno", "bun"];
const SHM_PREFIX = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

function stringArray(value, name) {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw optionError(TypeError, `knitting-native: ${name} must be an array of strings, got ${describe(value)}`);
  }
  return [...value];
}

/** worker.runtime "process": how each worker process is started. */
function resolveProcess(worker, out) {
  if (worker.resourceLimits !== undefined) {
    throw optionError(
      TypeError,
      'knitting-native: worker.resourceLimits applies to runtime "thread"; for runtime "process" pass V8 flags in ' +
        'worker.execArgv (e.g. "--max-old-space-size=512")',
    );
  }
  // Worker processes run on the host's own runtime unless processRuntime says otherwise.
  const proc = {
    runtime: runtimes.host.name,
    sharedMemory: { mode: "inherit", namePrefix: undefined },
    commandPrefix: [],
    args: [],
    execArgv: undefined,
    env: undefined,
    executable: undefined,
  };
  if (worker.processRuntime !== undefined) {
    if (!PROCESS_RUNTIMES.includes(worker.processRuntime)) {
      throw optionError(
        TypeError,
        `knitting-native: worker.processRuntime must be one of ` +
          `${PROCESS_RUNTIMES.map((r) => JSON.stringify(r)).join(", ")}, got ${describe(worker.processRuntime)}`,
      );
    }
    proc.runtime = worker.processRuntime;
  }
  if (worker.processExecutable !== undefined) {
    if (typeof worker.processExecutable !== "string" || worker.processExecutable === "") {
      throw optionError(
        TypeError,
        `knitting-native: worker.processExecutable must be a non-empty path to the ${proc.runtime} executable, ` +
          `got ${describe(worker.processExecutable)}`,
      );
    }
    proc.executable = worker.processExecutable;
  }
  const shm = worker.processSharedMemory;
  if (shm !== undefined && shm !== "inherit") {
    if (shm === null || typeof shm !== "object" || Array.isArray(shm)) {
      throw optionError(
        TypeError,
        `knitting-native: worker.processSharedMemory must be "inherit" or { mode: "named", namePrefix? }, got ` +
          `${describe(shm)}`,
      );
    }
    checkKeys(shm, ["mode", "namePrefix"], "worker.processSharedMemory.");
    if (shm.mode !== "named" && shm.mode !== "inherit") {
      throw optionError(
        TypeError,
        `knitting-native: worker.processSharedMemory.mode must be "inherit" or "named", got ${describe(shm.mode)}`,
      );
    }
    if (shm.namePrefix !== undefined) {
      if (shm.mode !== "named")
        throw optionError(TypeError, 'knitting-native: worker.processSharedMemory.namePrefix needs mode "named"');
      if (typeof shm.namePrefix !== "string" || !SHM_PREFIX.test(shm.namePrefix)) {
        throw optionError(
          TypeError,
          `knitting-native: worker.processSharedMemory.namePrefix must be 1 to 64 characters of A-Z a-z 0-9 . _ - ` +
            `(not starting with .), got ${describe(shm.namePrefix)}`,
        );
      }
    }
    proc.sharedMemory = { mode: shm.mode, namePrefix: shm.namePrefix };
  }
  if (worker.processCommandPrefix !== undefined)
    proc.commandPrefix = stringArray(worker.processCommandPrefix, "worker.processCommandPrefix");
  if (worker.processArgs !== undefined) proc.args = stringArray(worker.processArgs, "worker.processArgs");
  if (worker.execArgv !== undefined) proc.execArgv = stringArray(worker.execArgv, "worker.execArgv");
  if (worker.env !== undefined) {
    checkObject(worker.env, "worker.env");
    for (const [key, value] of Object.entries(worker.env)) {
      if (typeof value !== "string")
        throw optionError(TypeError, `knitting-native: worker.env.${key} must be a string, got ${describe(value)}`);
    }
    proc.env = { ...worker.env };
  }
  out.process = proc;
}

/** KNITTING_WORKER_RUNTIME: the default `worker.runtime`, or undefined when unset or empty. */
function envRuntime(env) {
  const raw = env.KNITTING_WORKER_RUNTIME;
  if (raw === undefined || raw.trim() === "") return undefined;
  const value = raw.trim().toLowerCase();
  if (value !== "thread" && value !== "process") {
    throw optionError(
      TypeError,
      `knitting-native: KNITTING_WORKER_RUNTIME must be "thread" or "process", got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

/**
 * The `worker` group: how each worker is started and stopped.
 * KNITTING_WORKER_RUNTIME (in `env`) sets the default `runtime`.
 */
function resolveWorker(worker, env = process.env) {
  const fromEnv = envRuntime(env);
  const isObject = worker !== null && typeof worker === "object" && !Array.isArray(worker);
  if (fromEnv === "process" && (worker === undefined || (isObject && worker.runtime === undefined))) {
    worker = { ...(worker === undefined ? {} : worker), runtime: "process" };
  }
  const out = {
    runtime: "thread",
    process: undefined,
    resourceLimits: undefined,
    hardTimeoutMs: undefined,
    abandonGraceMs: DEFAULT_ABANDON_GRACE_MS,
    resolveAfterFinishingAll: false,
    bootstrap: undefined,
    timers: DEFAULT_TIMERS,
    recycle: null,
    allowExit: false,
  };
  if (worker === undefined) return out;
  checkObject(worker, "worker");
  checkKeys(
    worker,
    [
      "runtime",
      "resourceLimits",
      "hardTimeoutMs",
      "abandonGraceMs",
      "resolveAfterFinishingAll",
      "bootstrap",
      "timers",
      "allowExit",
      ...server.RECYCLE_KEYS,
      ...PROCESS_KEYS,
    ],
    "worker.",
  );
  out.recycle = server.resolveRecycle(worker, optionError, describe);
  if (worker.timers !== undefined) out.timers = resolveTimers(worker.timers);
  if (worker.runtime !== undefined && worker.runtime !== "thread" && worker.runtime !== "process") {
    throw optionError(
      TypeError,
      `knitting-native: worker.runtime must be "thread" or "process", got ${describe(worker.runtime)}`,
    );
  }
  if (worker.runtime === "process") {
    out.runtime = "process";
    resolveProcess(worker, out);
  } else {
    const misplaced = PROCESS_KEYS.find((key) => worker[key] !== undefined);
    if (misplaced !== undefined) {
      throw optionError(
        TypeError,
        `knitting-native: worker.${misplaced} applies to worker.runtime "process"; this pool uses runtime "thread"`,
      );
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
        throw optionError(
          TypeError,
          `knitting-native: worker.resourceLimits.${key} must be a number of MB, got ${describe(value)}`,
        );
      }
      if (!(value > 0 && value <= max)) {
        throw optionError(
          RangeError,
          `knitting-native: worker.resourceLimits.${key} must be more than 0 and at most ${max} (MB), got ${value}`,
        );
      }
      out.resourceLimits[key] = value;
    }
  }
  if (worker.hardTimeoutMs !== undefined) {
    const ms = worker.hardTimeoutMs;
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms <= 0) {
      throw optionError(
        RangeError,
        `knitting-native: worker.hardTimeoutMs must be a positive number of milliseconds, got ${describe(ms)}`,
      );
    }
    out.hardTimeoutMs = ms;
  }
  if (worker.abandonGraceMs !== undefined) out.abandonGraceMs = resolveAbandonGrace(worker.abandonGraceMs);
  if (worker.resolveAfterFinishingAll !== undefined) {
    if (typeof worker.resolveAfterFinishingAll !== "boolean") {
      throw optionError(
        TypeError,
        `knitting-native: worker.resolveAfterFinishingAll must be a boolean, got ` +
          `${describe(worker.resolveAfterFinishingAll)}`,
      );
    }
    out.resolveAfterFinishingAll = worker.resolveAfterFinishingAll;
  }
  if (worker.allowExit !== undefined) {
    if (typeof worker.allowExit !== "boolean") {
      throw optionError(
        TypeError,
        `knitting-native: worker.allowExit must be a boolean, got ${describe(worker.allowExit)}`,
      );
    }
    out.allowExit = worker.allowExit;
  }
  if (worker.bootstrap !== undefined) {
    const b = worker.bootstrap;
    checkObject(b, "worker.bootstrap");
    checkKeys(b, ["href", "name", "data"], "worker.bootstrap.");
    if (typeof b.href !== "string" || b.href === "") {
      throw optionError(
        TypeError,
        `knitting-native: worker.bootstrap.href must be a module URL or relative path, got ${describe(b.href)}`,
      );
    }
    if (b.name !== undefined && (typeof b.name !== "string" || b.name === "")) {
      throw optionError(
        TypeError,
        `knitting-native: worker.bootstrap.name must be the name of an exported function, got ${describe(b.name)}`,
      );
    }
    out.bootstrap = { href: b.href, name: b.name, data: b.data };
  }
  return out;
}

/**
 * `permission`, checked against the runtime that must enforce it
 * (options/permission.js): null when nothing is restricted.
 */
function resolveWorkerPermission(input, worker, inline) {
  const policy = resolvePermission(input);
  const runtime = worker.runtime === "process" ? worker.process.runtime : "thread";
  checkPermission(policy, runtime, inline);
  if (
    policy !== null &&
    !policy.unrestricted &&
    worker.runtime === "process" &&
    worker.process.execArgv !== undefined
  ) {
    const flag = worker.process.execArgv.find((f) => PERMISSION_FLAG.test(f));
    if (flag !== undefined) {
      throw optionError(
        TypeError,
        `knitting-native: worker.execArgv has ${flag}, which would fight the permission option's own flags; say it ` +
          `through permission instead`,
      );
    }
  }
  return policy;
}

/**
 * Validated options with defaults filled in. `env` (process.env by default)
 * supplies KNITTING_STEAL and KNITTING_DISPATCHER, read on each call.
 */
function resolveOptions(options, maxLanes, maxAbortSlots, env = process.env) {
  if (options === undefined) options = {};
  checkObject(options, "createPool(options)");
  checkKeys(
    options,
    [
      "threads",
      "payload",
      "worker",
      "abortSignalCapacity",
      "debug",
      "host",
      "balancer",
      "inliner",
      "permission",
      ...server.SERVER_KEYS,
      ...ELASTIC_KEYS,
    ],
    "",
  );
  // threads: 0 leaves the inliner's lane in the host as the only one; without it no lane would run calls.
  const minThreads = options.inliner === undefined ? 1 : 0;
  if (options.threads === 0 && minThreads === 1) {
    throw optionError(
      RangeError,
      `knitting-native: threads must be between 1 and ${maxLanes}, got 0 (threads: 0 needs inliner)`,
    );
  }
  const given = options.threads === undefined ? undefined : integerIn(options.threads, "threads", minThreads, maxLanes);
  // minThreads/maxThreads: shared memory for maxThreads workers (options/elastic.js).
  const sizing = resolveElastic(options, given, maxLanes, given === undefined ? defaultThreads() : given);
  const threads = sizing !== null ? sizing.maxThreads : given === undefined ? defaultThreads() : given;
  const debug = resolveDebug(options.debug);
  const resolved = resolvePayload(options.payload === undefined ? {} : options.payload);
  const abortSignalCapacity =
    options.abortSignalCapacity === undefined
      ? DEFAULT_ABORT_SIGNALS
      : integerIn(options.abortSignalCapacity, "abortSignalCapacity", 0, maxAbortSlots);
  const worker = resolveWorker(options.worker, env);
  const host = resolveHost(options.host);
  if (sizing !== null && host.steal === true && threads > MAX_STEAL_CLAIMANTS) {
    throw optionError(
      RangeError,
      `knitting-native: maxThreads ${threads} with host.steal: true: the stealing region holds at most ` +
        `${MAX_STEAL_CLAIMANTS} claimants (its shared memory is sized for maxThreads up front)`,
    );
  }
  const balancer = resolveBalancer(options.balancer);
  const inliner = resolveInliner(options.inliner);
  const topology = resolveTopology({ threads, host, balancer, inliner, worker }, env);
  worker.permission = resolveWorkerPermission(options.permission, worker, topology.inline);
  // host.steal and host.dispatcher as asked for: the option, else the environment.
  const steal = host.steal !== undefined ? host.steal : envSteal(env);
  const dispatcher = host.dispatcher !== undefined ? host.dispatcher : envDispatcher(env);
  return {
    threads,
    // null: a fixed size; else workers come and go between minThreads and maxThreads (= threads).
    elastic: sizing === null || sizing.minThreads === sizing.maxThreads ? null : sizing,
    maxQueue: server.resolveMaxQueue(options.maxQueue, threads, optionError, describe),
    stats: server.resolveStats(options.stats, optionError, describe),
    debug,
    worker,
    abortSignalCapacity,
    ...resolved,
    host: { ...host, steal, dispatcher },
    balancer,
    inliner,
    topology,
  };
}

module.exports = {
  resolveOptions,
  optionError,
  resolveTopology,
  defaultThreads,
  DEFAULTS,
  describe,
  MAX_STEAL_CLAIMANTS,
  LANE_SLOTS,
  BALANCERS,
  DISPATCHERS,
};
