"use strict";
// What a pool offers a server besides its calls: the queue (`queueSize`,
// `needsDrain`), statistics (`stats()`) and events (`on`, `once`, `off`;
// server/events.js). Added to the public pool object before it is frozen.

/** Workers running now: started, not yet exited (none for an elastic pool's absent lanes or once shut down). */
function runningWorkers(pool) {
  let n = 0;
  for (const worker of pool.workers) if (worker !== null) n++;
  return n;
}

function serverApi(api, pool) {
  Object.defineProperties(api, {
    /** Calls waiting for a free worker slot. */
    queueSize: { get: () => pool.queue.size, enumerable: true },
    /** The queue reached maxQueue and has not emptied since ("drain" comes when it does). */
    needsDrain: { get: () => pool.queueLimit !== null && pool.queueLimit.needsDrain, enumerable: true },
  });
  api.stats = () =>
    pool.stats.snapshot({
      pending: pool.pending,
      inFlight: pool.inFlight + (pool.topology.inline === null ? 0 : pool.topology.inline.inFlight),
      queued: pool.queue.size,
      threads: runningWorkers(pool),
    });
  api.on = (name, listener) => {
    pool.events.listen("on", name, listener);
    return api;
  };
  api.once = (name, listener) => {
    pool.events.listen("once", name, listener);
    return api;
  };
  api.off = (name, listener) => {
    pool.events.listen("off", name, listener);
    return api;
  };
  api.removeListener = api.off; // what events.once(pool, name) calls
  return api;
}

/** What the server API reads of the pool (host/view.js). */
const POOL_USES = Object.freeze([
  "events",
  "stats",
  "queue",
  "queueLimit",
  "pending",
  "inFlight",
  "topology",
  "workers",
]);

module.exports = { POOL_USES, serverApi };
