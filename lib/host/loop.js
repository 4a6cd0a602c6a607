"use strict";
// When the host drains answers: on the event loop while calls are in slots,
// polling for a bounded number of passes, then asleep on the Rust doorbell
// (src/doorbell.rs) until a worker rings it, or, with `host.doorbell:
// false`, polling on timers that back off.
//
// The rule that keeps the host off the CPU while workers compute: an idle
// poll (passes that find nothing) lasts at most `hopBudget` passes and at
// most POLL_WINDOW_MS of wall time. The budget halves (down to MIN_HOPS,
// none) after a doorbell wait longer than POLL_WINDOW_MS: polling would not
// have caught that answer. It goes to none at once, for LOST_YIELD_QUIET_MS,
// when LOST_YIELDS of the last RECENT_YIELDS yields lost the core (the host
// ran again only POLL_WINDOW_MS later: the kernel gave its core to a worker
// for a time slice while answers waited), unless SHORT_RINGS doorbell waits
// in a row show answers coming faster than an idle poll lasts. So while
// every worker runs calls longer than POLL_WINDOW_MS, each answer costs the
// host one wake and one scan, and it does not wait behind a worker's time
// slice to see the next answer. __test__/host-budget.test.mjs runs this
// class under simulated time (__test__/model/host-budget.mjs) over bursts of
// long and tiny calls and a closed loop of a few long calls in flight, with
// broken variants it must catch.

const native = require("../native/index.js");
const { L, popcount } = require("../protocol/layout.js");
const doorbell = require("../protocol/doorbell.js");

// Drain passes with nothing found before the host arms the doorbell and
// sleeps. Each pass is one turn of the event loop (setImmediate) plus a
// sched_yield (so a worker sharing this vCPU can answer), ~1-2 µs: a short,
// bounded poll that catches responses arriving within tens of µs without
// the doorbell's ThreadsafeFunction hop (~8 µs). 8, 32 and 128 passes gave
// about the same throughput, the yield doubled it: docs/measurements.md,
// "Host polling budget".
const FREE_HOPS = 32;
// The budget adapts between MIN_HOPS and FREE_HOPS: a doorbell wait that
// lasted longer than POLL_WINDOW_MS halves it (polling would not have
// caught that answer, it only took CPU from the workers: with 2,000 x 1 ms
// tasks on 2 workers a fixed 32 passes cost ~10% of the makespan, same
// section), a shorter one doubles it back. An idle poll also ends once it
// has lasted POLL_WINDOW_MS, whatever the budget: then each answer costs
// the host at most one wake, one scan and that window, however close
// together the workers answer. 50 µs: a few doorbell wakes (~8 µs each);
// the answers polling exists for (a caller awaiting each tiny call) come
// within a few µs. 0.2 ms before (2026-12-02), which let four workers that
// answer every 125 µs keep the host polling for a whole burst
// (__test__/host-budget.test.mjs).
const POLL_WINDOW_MS = 0.05;
// MIN_HOPS 0: with a floor of 2, a caller keeping 4 calls of ~0.5 ms in
// flight on 2 workers (2 vCPUs) got 3,150 calls/s against raw postMessage's
// 3,800: each answer was followed by idle passes whose yields handed the
// host's core to a worker, and the next answer waited 0.24-0.32 ms (median)
// to be seen; with no idle pass there (stallFreeLoops 0) 3,720 calls/s and
// 0.04 ms (2026-12-08, Node 20.20; docs/measurements.md, "A few long calls
// in flight").
const MIN_HOPS = 0;
// After yields lost the core, how long short doorbell waits do not grow
// the budget back: two workers answering close together make short waits
// now and then, and each budget above none is another yield that can lose
// a time slice (in the model's closed loop of 4 x 0.5 ms calls, growing it
// back at once left the 90th percentile of answer-to-settle at 514 µs
// against 25 µs). Tiny calls, where polling pays, lose no yields and grow it
// as before; after long calls they poll again within this much.
const LOST_YIELD_QUIET_MS = 100;
// LOST_YIELDS of the last RECENT_YIELDS yields lost the core: the budget
// goes to none. With every core running a worker's call of ~0.5 ms, each
// yield loses it (26 of 26 in the closed loop above). Where polling pays,
// few do (4 inversions of 64 KiB, ~40 µs each, in flight on Node 24: 73 of
// 124,425 yields), but in bunches. One caller awaiting tiny calls one at a
// time loses one now and then to an unrelated thread; going to none on each
// raised its p99 from ~10 to ~35 µs (bench/run.mjs --only-workload calls).
// 2026-12-08, 2 vCPUs, Node 20.20 and 24.19: docs/measurements.md.
const RECENT_YIELDS = 8;
const RECENT_YIELDS_MASK = (1 << RECENT_YIELDS) - 1;
const LOST_YIELDS = 3;
// Doorbell waits in a row within POLL_WINDOW_MS that end the quiet period
// early: answers ~20 µs apart (those 64 KiB inversions) are where polling
// pays even though yields lose the core in bunches; without the early end
// the quiet periods sent every answer there through the doorbell.
const SHORT_RINGS = 8;
// With `host.doorbell: false` the host polls: DEFAULT_STALL_FREE_LOOPS idle
// passes, then timers from 1 ms doubling up to `host.maxBackoffMs`.
const DEFAULT_STALL_FREE_LOOPS = 64;
const DEFAULT_MAX_BACKOFF_MS = 8;

// Where the host notes the CPU it polls on, + 1, while it polls (0 when it
// stops: no call in flight, or asleep): a worker about to spin moves off
// that CPU if another is idle (src/placement.rs; docs/measurements.md,
// "Sequential latency").
const W_HOST_CPU = L.wordHostCpu;

const isPowerOfTwo = (n) => n > 0 && (n & (n - 1)) === 0;

/**
 * What the loop runs on: the clock, the event loop, the CPU and the Rust
 * doorbell. The host model (__test__/model/host-budget.mjs) passes its own,
 * simulated ones.
 */
const REAL_ENV = {
  now: () => performance.now(),
  immediate: (fn) => setImmediate(fn),
  timeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer),
  yieldNow: () => native.yieldNow(),
  currentCpu: () => native.currentCpu(),
  doorbell: (u8, onRing) => new native.HostDoorbell(u8, onRing),
};

class HostLoop {
  /**
   * `pool`: what a drain pass acts on (`drainPass()` settles and places,
   * returns how many calls it settled; `inFlight`; `isClosed()`).
   * `host`: the resolved `host` options. `env`: REAL_ENV but in the model.
   */
  constructor(pool, host, threads, debug, env = REAL_ENV) {
    this.env = env;
    this.pool = pool;
    this.debug = debug;
    this.i32 = pool.i32;
    this.scheduled = false;
    this.armed = false;
    this.idleHops = 0;
    this.idleSince = 0; // when the current idle poll began (its first empty pass)
    this.yieldedAt = -1; // when the last idle pass yielded, until the pass after it runs
    this.lostYieldAt = Number.NEGATIVE_INFINITY; // when the budget last went to none for lost yields
    this.recentYields = 0; // bit k: the yield k yields ago lost the core
    this.shortRings = 0; // doorbell waits in a row no longer than POLL_WINDOW_MS
    this.useDoorbell = host.doorbell && threads > 0;
    this.freeHops =
      host.stallFreeLoops !== undefined ? host.stallFreeLoops : this.useDoorbell ? FREE_HOPS : DEFAULT_STALL_FREE_LOOPS;
    this.maxBackoffMs = host.maxBackoffMs !== undefined ? host.maxBackoffMs : DEFAULT_MAX_BACKOFF_MS;
    this.backoffMs = 1;
    this.backoffTimer = null;
    this.hopBudget = this.freeHops;
    this.armedAt = 0;
    this.rings = 0; // doorbell rings, for the signals traces
    this.cpu = -1; // the CPU last noted in HOST_CPU (-1: none)
    this.drainBound = () => this.drain();
    this.doorbell = this.useDoorbell ? this.startDoorbell(pool.u8) : null;
  }

  /** The Rust waiter that wakes an idle host when a worker rings. */
  startDoorbell(u8) {
    return this.env.doorbell(u8, () => {
      // The waiter cleared ARMED before calling.
      this.armed = false;
      const now = this.env.now();
      const waited = now - this.armedAt;
      if (waited > POLL_WINDOW_MS) {
        this.shortRings = 0;
        this.halveBudget();
      } else {
        // Answers keep coming within an idle poll's window: polling pays
        // again, whatever the yields lost.
        if (++this.shortRings >= SHORT_RINGS) this.lostYieldAt = Number.NEGATIVE_INFINITY;
        if (now - this.lostYieldAt > LOST_YIELD_QUIET_MS)
          this.hopBudget = Math.min(this.freeHops, Math.max(1, this.hopBudget << 1));
      }
      if (this.debug && isPowerOfTwo(++this.rings)) {
        this.debug(
          "signals",
          `doorbell ring #${this.rings}: waited ${waited.toFixed(3)} ms; idle polling budget now ${this.hopBudget} ` +
            `passes`,
        );
      }
      this.drain();
    });
  }

  /** Polling did not pay: fewer idle passes next time (MIN_HOPS at least). */
  halveBudget() {
    this.hopBudget = Math.min(this.freeHops, Math.max(MIN_HOPS, this.hopBudget >> 1));
  }

  /** A call was submitted: make sure a drain comes (at once if polling had backed off). */
  kick() {
    if (this.backoffTimer !== null) {
      // Polling without a doorbell, and backing off: new work polls at once.
      this.env.clearTimeout(this.backoffTimer);
      this.backoffTimer = null;
      this.scheduled = false;
    }
    if (!this.scheduled && !this.armed) {
      this.scheduled = true;
      this.idleHops = 0;
      this.env.immediate(this.drainBound);
    }
  }

  drain() {
    this.scheduled = false;
    if (this.yieldedAt >= 0) {
      // The yield lost this core for longer than an idle poll may last:
      // polling is not paying here, and costs answers a time slice.
      const now = this.env.now();
      const lost = now - this.yieldedAt > POLL_WINDOW_MS ? 1 : 0;
      this.recentYields = ((this.recentYields << 1) | lost) & RECENT_YIELDS_MASK;
      if (lost && popcount(this.recentYields) >= LOST_YIELDS) {
        this.recentYields = 0;
        this.lostYieldAt = now;
        this.hopBudget = MIN_HOPS;
      }
      this.yieldedAt = -1;
    }
    // Read the count before scanning: every publication counted up to here
    // is visible to the scan below (src/doorbell.rs).
    const counted = doorbell.countNow(this.i32);
    const pool = this.pool;
    const settled = pool.drainPass();
    if (pool.inFlight === 0 || pool.isClosed()) {
      this.notePolling(false);
      return;
    }
    if (settled > 0) {
      this.idleHops = 0;
      this.backoffMs = 1;
    } else if (this.idleHops++ === 0) this.idleSince = this.env.now();
    // Within the budget and, with a doorbell to sleep on, not yet
    // POLL_WINDOW_MS idle: a yield can hand this vCPU to a worker for a whole
    // time slice, so passes alone do not bound how long the host stays awake.
    if (
      this.idleHops <= this.hopBudget &&
      (settled > 0 || this.doorbell === null || this.env.now() - this.idleSince < POLL_WINDOW_MS)
    ) {
      if (settled === 0) {
        this.notePolling(true);
        // Let a worker that shares this vCPU run before polling again. The
        // time is taken before the yield: the core is lost inside it.
        // Only with a doorbell: without one the budget never grows back.
        if (this.doorbell !== null) this.yieldedAt = this.env.now();
        this.env.yieldNow();
      }
      this.scheduled = true;
      this.env.immediate(this.drainBound);
      return;
    }
    this.notePolling(false);
    if (this.doorbell === null) {
      // Polling without a doorbell: back off, up to maxBackoffMs.
      this.scheduled = true;
      this.backoffTimer = this.env.timeout(() => {
        this.backoffTimer = null;
        this.drain();
      }, this.backoffMs);
      this.backoffMs = Math.min(this.maxBackoffMs, this.backoffMs * 2);
      return;
    }
    // Nothing for a while: sleep on the doorbell. Arm, then re-check the
    // count: a publication since `counted` means drain now instead.
    this.armed = true;
    this.armedAt = this.env.now();
    if (!doorbell.arm(this.i32, counted)) {
      this.armed = false;
      this.scheduled = true;
      this.env.immediate(this.drainBound);
    }
  }

  /** HOST_CPU = the CPU this thread polls on, + 1; 0 when not polling (or unknown). Written when it changes. */
  notePolling(polling) {
    const cpu = polling ? this.env.currentCpu() : -1;
    if (cpu === this.cpu) return;
    this.cpu = cpu;
    Atomics.store(this.i32, W_HOST_CPU, cpu + 1);
  }

  /** No more drains: the doorbell's waiter thread ends, a pending poll timer is cleared. */
  close() {
    if (this.doorbell !== null) this.doorbell.close();
    if (this.backoffTimer !== null) this.env.clearTimeout(this.backoffTimer);
  }
}

/** What the host loop reads of the pool (host/view.js). */
HostLoop.POOL_USES = Object.freeze(["i32", "u8", "inFlight", "isClosed", "drainPass"]);

module.exports = { HostLoop, isPowerOfTwo, POLL_WINDOW_MS, MIN_HOPS, FREE_HOPS };
