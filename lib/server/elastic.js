"use strict";
// Elastic size (minThreads / maxThreads / idleTimeout): the pool's shared
// memory has room for maxThreads workers from the start (a lane, or a
// claimant of the stealing region, each); minThreads of them start with the
// pool. The host starts another, up to maxThreads, when more calls wait than
// the running workers run (checked once per burst, at the flush); a worker
// beyond minThreads that has answered no call and held none for idleTimeout
// ms leaves, by the recycling path (server/recycle.js), so no call is lost or run
// twice:
// - Private lanes: the balancer stops choosing its lane (host/topology/lanes.js),
//   the worker answers what the lane holds, and once it is empty the host
//   ends the worker (Recycler.request with reason "idle").
// - Work stealing: the host tells the worker ("leave" message); it leaves
//   the claimants once it holds no call (worker/serve.js leave(), the rule of
//   worker/recycle.js), exiting with RECYCLE_EXIT_CODES.idle (protocol/messages.js).
// Either way the exit handler (host/pool.js) takes its slots back (finding no
// call) and does not replace it: the lane is absent until the pool grows
// again. Both protocols' models check these leave and join steps
// (__test__/model/: idleLeave*, leaveAndJoin, leaveWithAsync).

// How often the idle check runs, as a fraction of idleTimeout: a worker
// leaves between idleTimeout and 1.25 x idleTimeout after its last call.
const CHECKS_PER_TIMEOUT = 4;
// At most this long between idle checks (a long idleTimeout needs no finer clock).
const MAX_CHECK_MS = 1000;

class Elastic {
  /** `pool`: its workers, topology and queue; `elastic`: the resolved { minThreads, maxThreads, idleTimeout }. */
  constructor(pool, elastic) {
    this.pool = pool;
    this.min = elastic.minThreads;
    this.max = elastic.maxThreads;
    this.idleTimeout = elastic.idleTimeout;
    this.live = 0; // workers started and not told to leave
    this.absent = new Uint8Array(this.max).fill(1); // lanes with no worker (not started, or left)
    this.leaving = new Uint8Array(this.max); // told to leave, not yet exited
    this.seen = new Float64Array(this.max); // answered(lane) at the last idle check
    this.idleSince = new Float64Array(this.max);
    this.timer = null;
    this.period = Math.max(1, Math.min(MAX_CHECK_MS, Math.ceil(this.idleTimeout / CHECKS_PER_TIMEOUT)));
  }

  /** Whether the balancer may choose lane `lane` (a worker is there and not leaving). */
  placeable(lane) {
    return this.absent[lane] === 0 && this.leaving[lane] === 0;
  }

  /** Whether lane `lane` has no worker, by design (ready() does not wait for it). */
  isAbsent(lane) {
    return this.absent[lane] === 1;
  }

  /** Starts the first minThreads workers. */
  start() {
    for (let lane = 0; lane < this.min; lane++) this.add(lane);
  }

  add(lane) {
    this.absent[lane] = 0;
    this.live++;
    this.idleSince[lane] = performance.now();
    this.seen[lane] = this.pool.topology.answered[lane];
    this.pool.spawn(lane);
    this.pool.topology.workersChanged();
  }

  /** After a burst: starts workers while more calls wait than the running workers run. */
  grow() {
    const pool = this.pool;
    if (this.live >= this.max || pool.failure !== null || pool.isClosed()) return;
    let waiting = pool.inFlight + pool.queue.size - this.live;
    for (let lane = 0; lane < this.max && waiting > 0 && this.live < this.max; lane++) {
      if (this.absent[lane] === 0) continue;
      if (pool.debug)
        pool.debug("lifecycle", `elastic: ${waiting} calls wait beyond ${this.live} workers: adds ${lane}`);
      this.add(lane);
      waiting--;
    }
    if (this.live > this.min) this.arm();
    // Calls queued while every lane was full may go to the new lanes.
    pool.pump();
  }

  arm() {
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.check(), this.period);
    this.timer.unref(); // an idle pool does not hold the process
  }

  /** The idle check: tells workers beyond minThreads that have been idle for idleTimeout to leave. */
  check() {
    const pool = this.pool;
    if (pool.isClosed()) return this.close();
    const now = performance.now();
    const answered = pool.topology.answered;
    // The highest lanes leave first: the pool shrinks back to its first lanes.
    for (let lane = this.max - 1; lane >= 0 && this.live > this.min; lane--) {
      if (this.absent[lane] === 1 || this.leaving[lane] === 1) continue;
      if (!pool.ready[lane]) {
        this.idleSince[lane] = now; // idle time counts from its start-up
        continue;
      }
      if (answered[lane] !== this.seen[lane] || pool.topology.heldBy(lane).length !== 0) {
        this.seen[lane] = answered[lane];
        this.idleSince[lane] = now;
      } else if (now - this.idleSince[lane] >= this.idleTimeout) {
        this.retire(lane);
      }
    }
    if (this.live <= this.min) this.close();
  }

  retire(lane) {
    const pool = this.pool;
    this.leaving[lane] = 1;
    this.live--;
    if (pool.debug) pool.debug("lifecycle", `elastic: worker ${lane} idle for ${this.idleTimeout} ms: it leaves`);
    pool.topology.askToLeave(lane, "idle");
  }

  /**
   * Worker `lane` exited: true when it was told to leave (whatever ended
   * it): the lane is absent now, and not replaced.
   */
  exited(lane) {
    if (this.leaving[lane] === 0) return false;
    this.leaving[lane] = 0;
    this.absent[lane] = 1;
    return true;
  }

  close() {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}

/** What elastic sizing reads of the pool (host/view.js). */
Elastic.POOL_USES = Object.freeze([
  "failure",
  "ready",
  "inFlight",
  "queue",
  "topology",
  "debug",
  "isClosed",
  "pump",
  "spawn",
]);

module.exports = { Elastic };
