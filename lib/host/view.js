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
    // Methods are looked up at each call, as fields are read: the view is the pool as it is now.
    if (typeof proto[name] === "function") view[name] = (...args) => pool[name](...args);
    else Object.defineProperty(view, name, { get: () => pool[name], enumerable: true });
  }
  return Object.freeze(view);
}

module.exports = { poolView };
