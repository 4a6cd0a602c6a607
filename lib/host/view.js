"use strict";
// What a collaborator of the pool sees of it: only the names it declares
// (its POOL_USES), read-only. The topologies, the host loop, the start-up
// watch, the server features and the hard-timeout judge each get such a view,
// never the Pool itself, so a module's POOL_USES is the whole of what it
// reads, and nothing outside host/pool.js, host/calls.js and host/slots.js
// writes the pool's state. __test__/layers.test.mjs holds each module's
// POOL_USES to the names its code reads.

/**
 * A frozen view of `pool` offering `uses`: the pool's methods called on it,
 * its fields read through (a field may be set after the view is made, and
 * many change: `inFlight`, `state`, `failure`). Assigning to a view throws.
 */
function poolView(pool, uses) {
  if (!Array.isArray(uses)) throw new TypeError("knitting-native: a pool view needs the module's POOL_USES");
  const view = {};
  const proto = Object.getPrototypeOf(pool);
  for (const name of uses) {
    // Methods bound to the pool: write and settle run for every call, and a bound method costs a
    // call's dispatch alone. A forwarder that looked the method up by name (pool[name](...)) was
    // one function for every name, so V8 kept its lookup and call megamorphic: 5% of the host's
    // time in a tiny-call burst, 19% fewer calls/s (2026-12-07, Node 20.20, bench/latency-ab.mjs).
    const method = proto[name];
    if (typeof method === "function") view[name] = method.bind(pool);
    else Object.defineProperty(view, name, { get: () => pool[name], enumerable: true });
  }
  return Object.freeze(view);
}

module.exports = { poolView };
