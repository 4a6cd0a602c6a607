"use strict";
// How a pool with private lanes picks the lane for a call (createPool's
// `balancer`). A lane here is anything with `inFlight` and `accepts(call)`:
// a worker's lane, or the host's inline lane. Each balancer returns a
// lane that accepts the call, or null when none does (the call then waits
// in the pool's queue).

/**
 * The default: the least-loaded lane, ties to the lowest index, so that a
 * caller awaiting one call at a time keeps hitting the same, still-spinning
 * worker while the others park (round-robin sent such calls to parked
 * workers: sequential p50 13-90 µs instead of ~1.3 µs; docs/measurements.md).
 */
function leastLoaded() {
  return (lanes, call) => {
    let best = null;
    for (let i = 0; i < lanes.length; i++) {
      const lane = lanes[i];
      if ((best === null || lane.inFlight < best.inFlight) && lane.accepts(call)) {
        best = lane;
        if (lane.inFlight === 0) break;
      }
    }
    return best;
  };
}

/** Each call to the next lane in turn (skipping full ones). */
function roundRobin() {
  let next = 0;
  return (lanes, call) => {
    for (let i = 0; i < lanes.length; i++) {
      const lane = lanes[next];
      next = next + 1 === lanes.length ? 0 : next + 1;
      if (lane.accepts(call)) return lane;
    }
    return null;
  };
}

/** A lane chosen uniformly among those that accept the call. */
function randomLane() {
  return (lanes, call) => {
    const start = Math.floor(Math.random() * lanes.length);
    for (let i = 0; i < lanes.length; i++) {
      const lane = lanes[(start + i) % lanes.length];
      if (lane.accepts(call)) return lane;
    }
    return null;
  };
}

/** The first idle lane; when none is idle, `fallback`'s choice. */
function firstIdleThen(fallback) {
  return (lanes, call) => {
    for (let i = 0; i < lanes.length; i++) {
      const lane = lanes[i];
      if (lane.inFlight === 0 && lane.accepts(call)) return lane;
    }
    return fallback(lanes, call);
  };
}

/** The chooser for a resolved `balancer` name (null: the default). */
function makeBalancer(name) {
  switch (name) {
    case null:
    case undefined:
      return leastLoaded();
    case "roundRobin":
      return roundRobin();
    case "randomLane":
      return randomLane();
    case "firstIdle":
      return firstIdleThen(roundRobin());
    case "firstIdleOrRandom":
      return firstIdleThen(randomLane());
    default:
      throw new TypeError(`knitting-native: unknown balancer ${String(name)}`);
  }
}

module.exports = { makeBalancer };
