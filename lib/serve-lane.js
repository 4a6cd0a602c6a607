"use strict";
// A worker of a pool with private lanes: its loop is the lane protocol's
// WorkerLane (lib/lane.js), which serves the requests of its own lane. This
// module is what serve.js needs of it, the same shape as serve-steal.js.

const { WorkerLane } = require("./lane.js");

/** `lane`: this worker's lane index; the rest as serve-steal.js's openSteal. */
function openLane(i32, lane, wakeWord, env, bell, spinMicros) {
  const port = new WorkerLane(i32, lane, env);
  return {
    port,
    // Waits a bounded time while REQ still holds `value`.
    spin: (word, value) => bell.spinWhile(word, value, spinMicros),
    hasWork: () => port.hasNew(Atomics.load(i32, port.req)),
    interruptPark: () => {
      // The lane's park sleeps while SLEEPING is 1 (lane.js, Waiting): as
      // the host does, swap it and wake. A failed swap means the host did.
      if (Atomics.compareExchange(i32, port.sleeping, 1, 0) === 1) wakeWord(port.sleeping);
    },
    // Recycling: the host puts calls into this lane, so it empties the lane
    // and replaces this worker (recycle.js); ask it once.
    leave: (_answersWaiting, how) => how.ask(),
  };
}

module.exports = { openLane };
