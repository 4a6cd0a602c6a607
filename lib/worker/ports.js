"use strict";
// The worker's end of each topology: what worker/serve.js drives, one shape
// for both (the port (slot addresses, finish, flush, the loop), how to spin,
// whether there is work, how to end its own park early, how to leave when
// recycled). The loops themselves are the protocols': the steal protocol's
// Claimant (lib/protocol/steal.js) claims one call at a time from the shared
// submit region; the lane protocol's WorkerLane (lib/protocol/lane.js) serves
// the requests of this worker's own lane.

const { Claimant } = require("../protocol/steal.js");
const { WorkerLane } = require("../protocol/lane.js");
const { leaveWhenEmpty } = require("./recycle.js");

/**
 * `steal`: the pool's steal setup (host/topology/steal.js workerSetup); `w`: this
 * worker's index; `env`: how the loop acts (worker/serve.js); `bell`: the Rust
 * WorkerBell; `spinMicros`: the bounded spin.
 */
function openSteal(i32, steal, w, wakeWord, env, bell, spinMicros) {
  const port = new Claimant(
    i32,
    steal.sectionByte,
    steal.workers,
    steal.regionLanes,
    steal.width,
    w,
    wakeWord,
    env,
    steal.cores,
  );
  return {
    port,
    // Waits a bounded time for any PENDING bit (the spin yields the core between polls).
    spin: () => bell.spinWhileZero(port.pending, port.regionLanes, spinMicros),
    // As the steal park: pending work another idle worker should take is not this one's.
    // Retiring (worker/recycle.js): none is.
    hasWork: () => !port.retiring && port.anyPending() && !(port.asyncRunning !== 0 && port.othersIdle()),
    // Ends this worker's pending park: bump its WAKE word.
    interruptPark: () => port.wakeWorker(w),
    // Recycling: leave the claimants once this worker holds no call (worker/recycle.js).
    leave: (answersWaiting, how) => leaveWhenEmpty(port, answersWaiting, how.exit),
  };
}

/** `lane`: this worker's lane index; the rest as openSteal's. */
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

module.exports = { openSteal, openLane };
