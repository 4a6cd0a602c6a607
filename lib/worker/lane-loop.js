"use strict";
// A worker of a pool with private lanes: its loop is the lane protocol's
// WorkerLane (lib/protocol/lane.js), which serves the requests of its own lane. This
// module is what worker/serve.js needs of it, the same shape as worker/steal-loop.js.

const { WorkerLane } = require("../protocol/lane.js");

/** `lane`: this worker's lane index; the rest as worker/steal-loop.js's openSteal. */
function openLane(i32, lane, wakeWord, env, bell, spinMicros) {
  const port = new WorkerLane(i32, lane, env);
  return {
    port,
    // Waits a bounded time while REQ still holds `value`.
    spin: (word, value) => bell.spinWhile(word, value, spinMicros),
    hasWork: () => port.hasNew(Atomics.load(i32, port.req)),
    interruptPark: () => {
      // The lane's park sleeps while SLEEPING is 1 (protocol/lane.js, Waiting): as
      // the host does, swap it and wake. A failed swap means the host did.
      if (Atomics.compareExchange(i32, port.sleeping, 1, 0) === 1) wakeWord(port.sleeping);
    },
    // Recycling: the host puts calls into this lane, so it empties the lane
    // and replaces this worker (server/recycle.js); ask it once.
    leave: (_answersWaiting, how) => how.ask(),
  };
}

module.exports = { openLane };
