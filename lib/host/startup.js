"use strict";
const { CODE, workerStartFailedError } = require("../errors.js");

// Workers that keep dying while they start. A task module whose top level
// fails after the worker reported ready (a server listening on a port the
// host holds: EADDRINUSE from a later tick) kills every replacement the same
// way; replaced at once, that is a silent crash loop of dozens of workers a
// second. So the deaths of a lane's workers that died on their own (not
// terminated by the host, not while running a call: that is the task's
// doing) before they were ready, or within STABLE_MS of it, are counted.
// One such death is replaced at once. From the second in a row:
// - the first such error (with its stack) is printed once per pool, as a
//   process warning (code KNT_WORKER_START_FAILED): `pool.ready` may have
//   resolved and calls may even have succeeded in between (a worker answers
//   what it finds before the error's tick ends it);
// - when no worker has lived STABLE_MS past ready, nothing shows the tasks
//   can run: the pool fails. `pool.ready` (when still pending) and every
//   pending and later call reject with one KNT_WORKER_START_FAILED error
//   (`cause`: the first error) and no replacement starts; shutdown() still
//   works. Else the pool serves on the workers that run, `pool.ready`
//   rejects with that error when still pending, and this lane's replacement
//   waits, FIRST_DELAY_MS doubling up to MAX_DELAY_MS.
// A worker that lived STABLE_MS past ready resets its lane's count.

// The values bound a crash loop to a handful of starts a second at first and
// one every 5 s at most (a worker thread costs ~30-150 ms of CPU to start
// here); a resource freed meanwhile is picked up within 5 s.
const STABLE_MS = 2000;
const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 5000;

class StartupWatch {
  /** `pool`: the Pool (its ready flags, readyReject, fail, spawn). */
  constructor(pool, lanes) {
    this.pool = pool;
    this.readyAt = new Float64Array(lanes);
    this.failures = new Uint32Array(lanes);
    this.timers = new Array(lanes).fill(null);
    this.first = null; // the first start-up error of this pool
    this.warned = false;
  }

  /** The pool's first start-up error, `err` if there was none yet. */
  firstError(err) {
    if (this.first === null) this.first = err;
    return this.first;
  }

  /** A worker of `lane` reported ready. */
  ready(lane) {
    this.readyAt[lane] = performance.now();
  }

  /**
   * A worker of `lane` died on its own (the host did not terminate it)
   * while running no call; `wasReady`: whether it had reported ready.
   * Starts its replacement, now or after the back-off.
   */
  died(lane, wasReady, error) {
    const quick = !wasReady || performance.now() - this.readyAt[lane] < STABLE_MS;
    if (!quick) this.failures[lane] = 0;
    const n = quick ? ++this.failures[lane] : 0;
    if (quick) this.firstError(error);
    if (n < 2) {
      this.pool.spawn(lane);
      return;
    }
    const pool = this.pool;
    const err = workerStartFailedError(lane, n, this.first);
    const serving = this.serving();
    this.warn(serving);
    if (!serving) {
      if (pool.debug) pool.debug("lifecycle", `worker ${lane} died ${n} times in a row while starting; the pool fails`);
      pool.fail(err);
      return;
    }
    pool.readyReject(err);
    const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (n - 2));
    if (pool.debug)
      pool.debug("lifecycle", `worker ${lane} died ${n} times in a row while starting; next one in ${delay} ms`);
    const timer = setTimeout(() => {
      this.timers[lane] = null;
      if (pool.state === 0 && pool.failure === null && pool.workers[lane] === null) pool.spawn(lane);
    }, delay);
    // An idle pool backing off does not keep the process alive (host/liveness.js
    // holds it while calls are pending).
    timer.unref();
    this.timers[lane] = timer;
  }

  /** Whether a worker has lived STABLE_MS past ready: the tasks can run. */
  serving() {
    const pool = this.pool;
    const now = performance.now();
    return pool.ready.some((r, lane) => r && now - this.readyAt[lane] >= STABLE_MS);
  }

  /** The crash loop is visible even when nothing rejects: a warning once per pool. */
  warn(serving) {
    if (this.warned) return;
    this.warned = true;
    const err = this.first;
    const next = serving
      ? `replacements now back off (up to ${MAX_DELAY_MS / 1000} s)`
      : "the pool fails: pool.ready and every call reject with this error as the cause";
    const warning = new Error(
      `knitting-native: pool workers keep dying while they start (or soon after, running no call); ${next}. ` +
        `The first error: ${err && err.stack ? err.stack : String(err)}`,
    );
    warning.name = "KnittingNativeWarning";
    warning.code = CODE.WORKER_START_FAILED;
    process.emitWarning(warning);
  }

  close() {
    for (const timer of this.timers) if (timer !== null) clearTimeout(timer);
    this.timers.fill(null);
  }
}

/** What the start-up watch reads of the pool (host/view.js). */
StartupWatch.POOL_USES = Object.freeze([
  "state",
  "failure",
  "ready",
  "workers",
  "debug",
  "readyReject",
  "fail",
  "spawn",
]);

module.exports = { StartupWatch, STABLE_MS, FIRST_DELAY_MS, MAX_DELAY_MS };
