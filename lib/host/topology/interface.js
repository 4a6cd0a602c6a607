"use strict";
// The one interface every topology offers the pool (host/pool.js, host/slots.js, host/calls.js,
// host/hard-timeout.js and the server features drive a topology through it and nothing else):
// steal.js (one shared submit region, any idle worker claims) and lanes.js (a private lane per
// worker, a balancer, optionally the inline lane). Checked once per pool (checkTopology) and for
// both classes by __test__/layers.test.mjs.

const METHODS = Object.freeze({
  place: "put a call into a free slot; false: all are taken, or it waits for payload room",
  drain: "settle every published answer; returns how many",
  flush: "publish this burst's placements",
  takeBack: "(worker) a worker died: settle its answers, return the calls it held",
  placedCalls: "every call placed and not yet answered (shutdown)",
  heldBy: "(worker) the calls that worker holds now (hard timeouts, given-up calls)",
  workerOf: "(call) the worker holding the call, or -1",
  workersChanged: "the set of live or retiring workers changed (a balancer re-reads it)",
  workerSetup: "what a worker needs at start to reach its calls",
  describe: "the topology in words (debug traces)",
  dispatcherLine: "the topology in knitting's words (debug: { host: true })",
  holdsNone: "(worker) whether the host holds no call of that worker (placed, running, or answered and not drained)",
  askToLeave:
    "(worker, reason) a worker must go (recycling, elastic idle): stealing, it is told to leave by " +
    "itself between calls; private lanes, its lane is emptied first (server/recycle.js)",
});

const FIELDS = Object.freeze({
  steal: "true when workers claim from one region (the pool's choice of topology, host/pool.js)",
  leavesBySelf:
    'a worker that must go leaves by itself between calls and says so (its "left" message, or its recycle ' +
    "exit code): stealing. With private lanes the host empties its lane and tells it to end",
  placesAtOnce: "a call is placed as it is submitted (false: the drain also dispatches, serial-channel)",
  answered: "Float64Array: calls each worker has answered (server/elastic.js tells idle workers by it)",
  inline: "the inline lane (topology/inline.js) or null",
});

/** Throws when `topology` lacks a member of the interface (a topology written without one of them). */
function checkTopology(topology) {
  for (const name of Object.keys(METHODS)) {
    if (typeof topology[name] !== "function") throw new Error(`knitting-native: topology lacks ${name}()`);
  }
  for (const name of Object.keys(FIELDS)) {
    if (!(name in topology)) throw new Error(`knitting-native: topology lacks ${name}`);
  }
  return topology;
}

module.exports = { METHODS, FIELDS, checkTopology };
