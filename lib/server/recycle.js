"use strict";
// worker.maxCallsBeforeRecycle / worker.maxMemoryBeforeRecycle, the host's
// side: a worker past its limit is replaced without losing or rejecting a
// call. The worker decides, between calls (worker/recycle.js); how it then
// leaves depends on how calls reach it:
// - Private lanes: the host puts calls into the worker's own lane, so the
//   worker cannot refuse them. It tells the host ("recycle" message); the
//   host stops choosing that lane, lets the worker answer what the lane
//   holds, and once the lane is empty tells the worker to "end": it leaves
//   the lane for good (no shared access from then on) and says it "left"
//   (a worker process exits instead), and the host terminates it and starts
//   a replacement on the same lane. Not terminate() at once: a Deno worker
//   thread can still run for a moment after its "exit" reached the host,
//   and touch the lane its replacement already serves.
// - Work stealing: the worker takes calls itself, one at a time. When it
//   holds none (no async call of its own pending, every answer published)
//   it leaves the claimants and ends: a worker process exits with
//   RECYCLE_EXIT_CODES; a worker thread tells the host ("left" message) and
//   the host terminates it (`left` below; Deno's process.exit in a worker
//   thread can spin for ever instead of ending it). The calls still in the
//   region are claimed by the other workers or by the replacement.
// Either way the exit handler (host/pool.js) sees a recycled worker: its
// replacement starts at once, outside the crash-loop back-off (host/startup.js).

// A worker process's exit codes and every message named here: protocol/messages.js.
const { MSG, RECYCLE_EXIT_CODES } = require("../protocol/messages.js");

const REASON_BY_CODE = new Map(Object.entries(RECYCLE_EXIT_CODES).map(([reason, code]) => [code, reason]));

const WAITING = 1; // asked to recycle; the lane is left to empty
const TERMINATING = 2; // terminate() was called
const ENDING = 3; // empty: told to "end"; terminated once it says it "left" (or exits)

/**
 * Whether a leaving worker's lane is empty, so the worker may be ended: the
 * host holds no call in it (placed, running, or answered and not yet
 * drained). The lane protocol's model (__test__/model/lane-model.mjs) runs
 * this rule for its leave steps.
 */
function laneEmptied(hostLane) {
  return hostLane.inFlight === 0;
}

class Recycler {
  /** `pool`: its workers and topology (host/topology/lanes.js: the lanes, and the balancer's choices). */
  constructor(pool) {
    this.pool = pool;
    const lanes = pool.workers.length;
    this.state = new Uint8Array(lanes);
    this.worker = new Array(lanes).fill(null);
    this.reason = new Array(lanes).fill(null);
    this.waiting = 0; // lanes in WAITING
  }

  /** Whether lane `lane` is being emptied for a recycle (the balancer skips it). */
  retiring(lane) {
    return this.state[lane] !== 0;
  }

  /** A private-lane worker asked to be recycled (its "recycle" message). */
  request(lane, worker, reason) {
    const pool = this.pool;
    if (
      pool.topology.leavesBySelf ||
      this.state[lane] !== 0 ||
      pool.workers[lane] !== worker ||
      pool.killedFor[lane] !== null
    )
      return;
    this.state[lane] = WAITING;
    this.worker[lane] = worker;
    this.reason[lane] = reason === "memory" || reason === "idle" ? reason : "calls";
    this.waiting++;
    pool.topology.workersChanged();
    if (pool.debug) pool.debug("lifecycle", `worker ${lane} leaves (${this.reason[lane]}) once its lane is empty`);
    this.check();
  }

  /**
   * Worker thread `worker` says it "left": work stealing, it left the
   * claimants for `reason`: it holds no call and claims none again, so it is
   * ended at once, and its exit counts as a recycle (or an idle leave).
   * Private lanes: it left the lane it was told to end (`check`).
   */
  left(lane, worker, reason) {
    const pool = this.pool;
    if (pool.workers[lane] !== worker || pool.killedFor[lane] !== null) return;
    if (this.state[lane] === ENDING && this.worker[lane] === worker) {
      // Private lanes: it left the lane it was told to end.
      this.state[lane] = TERMINATING;
      worker.terminate();
      return;
    }
    if (!pool.topology.leavesBySelf || this.state[lane] !== 0) return;
    this.state[lane] = TERMINATING;
    this.worker[lane] = worker;
    this.reason[lane] = reason === "memory" || reason === "idle" ? reason : "calls";
    if (pool.debug) pool.debug("lifecycle", `worker ${lane} left the claimants (${this.reason[lane]}): ending it`);
    worker.terminate();
  }

  /** After a drain pass: terminates the recycling workers whose lane is empty. */
  check() {
    const pool = this.pool;
    for (let lane = 0; lane < this.state.length && this.waiting !== 0; lane++) {
      if (this.state[lane] !== WAITING || !pool.topology.holdsNone(lane)) continue;
      this.state[lane] = ENDING;
      this.waiting--;
      this.worker[lane].postMessage({ type: MSG.END });
    }
  }

  /**
   * Worker `worker` of `lane` exited with `code`: the reason it was
   * recycled ("calls" or "memory"), or null when it was not. Clears the
   * lane's recycling state.
   */
  exited(lane, worker, code) {
    if (this.worker[lane] === worker) {
      if (this.state[lane] === WAITING) this.waiting--;
      const reason = this.reason[lane];
      this.state[lane] = 0;
      this.worker[lane] = null;
      this.reason[lane] = null;
      return reason;
    }
    // Work stealing, a worker process: it left by itself (a task's own
    // process.exit() with the same code in a private-lane pool is a crash,
    // not a recycle).
    if (this.pool.topology.leavesBySelf && this.pool.workers[lane] === worker && REASON_BY_CODE.has(code))
      return REASON_BY_CODE.get(code);
    return null;
  }
}

/** What the recycler reads of the pool (host/view.js). */
Recycler.POOL_USES = Object.freeze(["workers", "killedFor", "topology", "debug"]);

module.exports = { Recycler, laneEmptied };
