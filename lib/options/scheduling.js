"use strict";
// createPool's scheduling options: the host loop (`host`), the balancer,
// the inliner, and whether and how the pool steals (the topology).

const native = require("../native/index.js");
const { L } = require("../protocol/layout.js");
const { optionError, describe, checkKeys, checkObject, integerIn, oneOf, boolean, quoteList } = require("./checks.js");

// Slots per worker (a lane's state is one 32-bit mask, lib/protocol/lane.js) and the
// most workers a steal section serves: Rust's layout() owns both.
const LANE_SLOTS = L.slotCount;
const MAX_STEAL_CLAIMANTS = L.maxStealClaimants;

const DISPATCHERS = ["per-thread", "serial-channel"];
const BALANCERS = ["roundRobin", "firstIdle", "randomLane", "firstIdleOrRandom"];
/** Older spellings still accepted, and the name each stands for. */
const BALANCER_ALIASES = { robinRound: "roundRobin" };
const INLINER_POSITIONS = ["first", "last"];
// Upper bounds of the count options (host.stallFreeLoops, inliner.batchSize,
// inliner.dispatchThreshold) and of host.maxBackoffMs: far past any useful
// value, there to turn a slip (1e12, ms given as µs) into an error.
const MAX_COUNT = 1_000_000;
const MAX_BACKOFF_MS = 60_000;

/** The `host` group as the options give it (the environment is applied later). */
function resolveHost(host) {
  const out = {
    steal: undefined,
    stealRegionLanes: undefined,
    dispatcher: undefined,
    doorbell: true,
    stallFreeLoops: undefined,
    maxBackoffMs: undefined,
  };
  if (host === undefined) return out;
  checkObject(host, "host");
  checkKeys(host, Object.keys(out), "host.");
  if (host.steal !== undefined) out.steal = boolean(host.steal, "host.steal");
  if (host.stealRegionLanes !== undefined) {
    // Only the type here: whether it fits depends on threads, checked once
    // stealing is known to be on (resolveTopology).
    out.stealRegionLanes = integerIn(host.stealRegionLanes, "host.stealRegionLanes", 1, Number.MAX_SAFE_INTEGER);
  }
  if (host.dispatcher !== undefined) out.dispatcher = oneOf(host.dispatcher, "host.dispatcher", DISPATCHERS);
  if (host.doorbell !== undefined) out.doorbell = boolean(host.doorbell, "host.doorbell");
  if (host.stallFreeLoops !== undefined)
    out.stallFreeLoops = integerIn(host.stallFreeLoops, "host.stallFreeLoops", 0, MAX_COUNT);
  if (host.maxBackoffMs !== undefined) {
    const ms = host.maxBackoffMs;
    if (typeof ms !== "number") {
      throw optionError(
        TypeError,
        `knitting-native: host.maxBackoffMs must be a number of milliseconds, got ${describe(ms)}`,
      );
    }
    if (!(Number.isFinite(ms) && ms > 0 && ms <= MAX_BACKOFF_MS)) {
      throw optionError(
        RangeError,
        `knitting-native: host.maxBackoffMs must be more than 0 and at most ${MAX_BACKOFF_MS} (ms), got ${ms}`,
      );
    }
    out.maxBackoffMs = ms;
  }
  return out;
}

function resolveBalancer(balancer) {
  if (balancer === undefined) return undefined;
  // knitting's object form: { strategy: "firstIdle" }.
  if (balancer !== null && typeof balancer === "object" && !Array.isArray(balancer)) {
    checkKeys(balancer, ["strategy"], "balancer.");
    if (balancer.strategy === undefined)
      throw optionError(
        TypeError,
        `knitting-native: balancer.strategy is required in the object form, one of ${quoteList(BALANCERS)}`,
      );
    return resolveBalancer(balancer.strategy);
  }
  if (typeof balancer === "string" && Object.hasOwn(BALANCER_ALIASES, balancer)) return BALANCER_ALIASES[balancer];
  if (typeof balancer !== "string" || !BALANCERS.includes(balancer)) {
    throw optionError(
      TypeError,
      `knitting-native: balancer must be one of ${quoteList(BALANCERS)} (or the older "robinRound"), got ` +
        `${describe(balancer)}`,
    );
  }
  return balancer;
}

/** The `inliner` group: null when the host runs no calls itself. */
function resolveInliner(inliner) {
  if (inliner === undefined) return null;
  if (inliner === null || typeof inliner !== "object" || Array.isArray(inliner)) {
    throw optionError(
      TypeError,
      `knitting-native: inliner must be an object ({} for the defaults), got ${describe(inliner)}`,
    );
  }
  const out = { position: "last", batchSize: 1, dispatchThreshold: 1 };
  checkKeys(inliner, Object.keys(out), "inliner.");
  if (inliner.position !== undefined) out.position = oneOf(inliner.position, "inliner.position", INLINER_POSITIONS);
  if (inliner.batchSize !== undefined) out.batchSize = integerIn(inliner.batchSize, "inliner.batchSize", 1, MAX_COUNT);
  if (inliner.dispatchThreshold !== undefined) {
    out.dispatchThreshold = integerIn(inliner.dispatchThreshold, "inliner.dispatchThreshold", 1, MAX_COUNT);
  }
  return out;
}

/**
 * An environment variable that sets a default: undefined when unset or
 * empty (as KNITTING_DEBUG), else the value of its entry in `values`
 * ([spelling, value] pairs, spellings compared case-insensitively); any
 * other spelling is a TypeError naming the variable, so that a typo does not
 * silently keep the default.
 */
function envChoice(env, name, values) {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const spelt = String(raw).trim().toLowerCase();
  const hit = values.find(([spelling]) => spelling === spelt);
  if (hit === undefined) {
    throw optionError(
      TypeError,
      `knitting-native: environment variable ${name} must be one of ${values.map(([s]) => s).join(", ")}, got ` +
        `${JSON.stringify(raw)}`,
    );
  }
  return hit[1];
}

const STEAL_SPELLINGS = [
  ["1", true],
  ["true", true],
  ["0", false],
  ["false", false],
];
const envSteal = (env) => envChoice(env, "KNITTING_STEAL", STEAL_SPELLINGS);
const envDispatcher = (env) =>
  envChoice(
    env,
    "KNITTING_DISPATCHER",
    DISPATCHERS.map((d) => [d, d]),
  );

/**
 * Checks `host.stealRegionLanes` against the stealing region of `threads`
 * workers and returns the region's shape. The region has LANE_SLOTS slots
 * per worker, split into `lanes` region lanes of `width` slots; whether a
 * shape is valid is Rust's rule (StealGeometry::new, src/memory/layout.rs),
 * asked through native.stealShapeError.
 */
function regionShape(threads, lanes) {
  const slots = LANE_SLOTS * threads;
  if (lanes === undefined) lanes = threads;
  const fits = (n) => slots % n === 0 && native.stealShapeError(threads, n, slots / n) === null;
  if (lanes > slots || !fits(lanes)) {
    const valid = [];
    for (let n = 1; n <= slots; n++) if (fits(n)) valid.push(n);
    const why =
      lanes > slots || slots % lanes !== 0
        ? `the ${slots} slots do not split into ${lanes} equal region lanes`
        : native.stealShapeError(threads, lanes, slots / lanes);
    throw optionError(
      RangeError,
      `knitting-native: host.stealRegionLanes must split the ${slots} submit slots into region lanes of at most ` +
        `${LANE_SLOTS} slots with slots / stealRegionLanes >= consumers + 1 (here ${threads + 1}): got ${lanes}` +
        ` (valid here: ${valid.join(", ")}); ${why}`,
    );
  }
  return { regionLanes: lanes, regionWidth: slots / lanes };
}

/**
 * Decides how calls reach the workers. A pure function of the validated
 * options and the environment:
 *
 * - `validated`: `{ threads, host, balancer, inliner, worker }` as the
 *   options give them (`host.steal` and `host.dispatcher` from the options
 *   only, undefined when not given), as resolveOptions validates them.
 * - `env`: where KNITTING_STEAL and KNITTING_DISPATCHER are read (defaults
 *   that an explicit option overrides).
 *
 * Stealing is on when asked for (the option, else KNITTING_STEAL), and by
 * default when there are 2..31 workers and nothing asks for another way of
 * placing calls (a balancer, a dispatcher, or the inliner). Asking for it
 * with the option where it cannot work is a RangeError; KNITTING_STEAL=1
 * there is only a default, and turns nothing on.
 *
 * Returns `{ steal, regionLanes, regionWidth, dispatcher, balancer, inline }`:
 * regionLanes and regionWidth are 0 without stealing; with stealing,
 * `dispatcher` and `balancer` are left unused.
 */
function resolveTopology(validated, env = process.env) {
  const { threads, host, balancer, inliner, worker } = validated;
  const inline = inliner !== null && inliner !== undefined;
  if (inline && worker !== undefined && worker.bootstrap !== undefined) {
    throw optionError(
      RangeError,
      "knitting-native: worker.bootstrap cannot be used with inliner: the inline lane runs calls in the host, " +
        "which never runs a worker bootstrap; drop one of the two",
    );
  }
  // Both variables are read (and checked) even where an option overrides them.
  const envDispatch = envDispatcher(env);
  const fromEnv = envSteal(env);
  const dispatcher = host.dispatcher !== undefined ? host.dispatcher : envDispatch;
  let steal;
  if (host.steal !== undefined) {
    steal = host.steal;
    if (steal && inline) {
      throw optionError(
        RangeError,
        "knitting-native: host.steal: true contradicts inliner: stealing is not used with the inliner",
      );
    }
    if (steal && (threads < 2 || threads > MAX_STEAL_CLAIMANTS)) {
      throw optionError(
        RangeError,
        `knitting-native: host.steal: true needs 2 to ${MAX_STEAL_CLAIMANTS} worker threads ` +
          `(workers steal from each other, and a region lane holds at most ${MAX_STEAL_CLAIMANTS} claimants), got ` +
          `threads ${threads}`,
      );
    }
  } else {
    const possible = threads >= 2 && threads <= MAX_STEAL_CLAIMANTS && !inline;
    steal =
      fromEnv !== undefined ? fromEnv && possible : possible && balancer === undefined && dispatcher === undefined;
  }
  const shape = steal ? regionShape(threads, host.stealRegionLanes) : { regionLanes: 0, regionWidth: 0 };
  return {
    steal,
    regionLanes: shape.regionLanes,
    regionWidth: shape.regionWidth,
    dispatcher: dispatcher === undefined ? "per-thread" : dispatcher,
    balancer: balancer === undefined ? null : balancer,
    inline,
  };
}

module.exports = {
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
};
