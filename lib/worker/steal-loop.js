"use strict";
// A worker of a work-stealing pool: its loop is the steal protocol's
// Claimant (lib/protocol/steal.js), which claims one call at a time from the shared
// submit region. This module is what worker/serve.js needs of it, the same shape
// as worker/lane-loop.js: the port (slot addresses, finish, flush, the loop),
// how to spin, whether there is work, how to end its own park early.

const { Claimant } = require("../protocol/steal.js");
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

module.exports = { openSteal };
