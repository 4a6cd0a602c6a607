// The host's polling rule, run as shipped: lib/host/loop.js's HostLoop
// drives a simulated burst under simulated time. The host is one thread
// (its event loop: drain passes, doorbell rings), the workers take calls
// from one queue (as when they steal) and each answer publishes through the
// doorbell's words as lib/protocol/doorbell.js does; the Rust waiter (src/doorbell.rs)
// is its swap of ARMED and a ring delivered after a wake latency.
//
// What it measures: the host's CPU time (its passes, scans and wakes) as a
// share of the burst's wall time, how many answers came through a ring and
// how many by polling. The costs are measured ones (2026-12-05, Node 24.19,
// 2 vCPUs, 2,000 x 0.5 ms calls): a drain pass 2-8 µs, a doorbell wake
// through the ThreadsafeFunction ~8 µs (docs/measurements.md).

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { HostLoop } = require("../../lib/host/loop.js");
const native = require("../../lib/native/index.js");

const L = native.layout();

/**
 * One burst: `workers` workers each start at `phaseUs[w]` and run calls of
 * `callUs` (call k of a worker takes callUs * (1 + jitter(k))) until
 * `calls` are answered. `Loop`: the HostLoop class (or a broken variant).
 *
 * `inflight` (default: all of them): the caller keeps at most that many
 * calls submitted, and submits the next one when the host settles one (a
 * closed loop, as `b = await pool.call.f(b)` on a few lanes); a worker with
 * nothing submitted waits for the host's next submission and `wakeUs`.
 *
 * `yieldUs` (default 0) with `cores` (default `workers`): what the host's
 * sched_yield costs when every core runs a worker's call: the kernel gives
 * its core to a worker and the host runs again only after `yieldUs` (a time
 * slice). Measured 2026-12-08 (Node 20.20, 2 vCPUs, bench shape of
 * bench/user/bytes.mjs: 4 calls of ~0.5 ms in flight on 2 workers): with
 * idle passes after every answer, a worker's answer reached the host in
 * 0.24-0.32 ms (median), 0.64 ms (p90); sleeping on the doorbell at once,
 * 0.04 ms and 0.07 ms.
 *
 * Returns { wallUs, hostCpuUs, rings, answers, settledAll, latencyUs }
 * (latencyUs: from each answer's publication to the pass that settled it,
 * sorted).
 */
export function simulateBurst({
  Loop = HostLoop,
  workers,
  callUs,
  calls,
  phaseUs = [],
  passUs = 4,
  settleUs = 0.5,
  wakeUs = 8,
  jitter = () => 0,
  inflight = calls,
  yieldUs = 0,
  cores = workers,
}) {
  const words = Math.max(L.wordCounter, L.wordArmed, L.wordHostCpu) + 1;
  const i32 = new Int32Array(new SharedArrayBuffer(words * 4));
  let now = 0; // simulated µs
  let hostFreeAt = 0; // the host thread is busy until then
  let hostCpuUs = 0;
  const events = []; // { t, seq, fn }: a small binary heap would do; bursts are short
  let seq = 0;
  const at = (t, fn) => {
    events.push({ t, seq: seq++, fn });
  };
  // Host work: runs on the host thread, after what it already does.
  const onHost = (fn) => at(Math.max(now, hostFreeAt), () => runHost(fn));
  function runHost(fn) {
    if (now < hostFreeAt) {
      at(hostFreeAt, () => runHost(fn));
      return;
    }
    fn();
    hostFreeAt = now + yieldedUs;
    yieldedUs = 0;
  }
  let yieldedUs = 0; // off the CPU after this host step (a yield that lost the core)
  const spend = (us) => {
    now += us;
    hostCpuUs += us;
  };

  let published = 0;
  let seen = 0;
  let rings = 0;
  const publishedAt = []; // when each answer was published, in order
  const latencyUs = [];
  let submitted = Math.min(inflight, calls);
  let running = 0; // workers in a call, or woken for one (see startCall)
  const waiting = []; // workers with nothing submitted to start
  const pool = {
    i32,
    u8: new Uint8Array(i32.buffer),
    inFlight: calls,
    isClosed: () => false,
    drainPass() {
      spend(passUs);
      const n = published - seen;
      for (let k = seen; k < published; k++) latencyUs.push(now - publishedAt[k]);
      seen = published;
      spend(n * settleUs);
      this.inFlight -= n;
      // The caller's closed loop: each settled call is followed by another.
      for (let k = 0; k < n && submitted < calls; k++) {
        submitted++;
        const w = waiting.shift();
        // The notify makes the worker runnable at once (it wants a core from
        // now), and it starts the call after the wake latency.
        if (w !== undefined) {
          running++;
          startCall(w, now + wakeUs, true);
        }
      }
      return n;
    },
  };
  const env = {
    now: () => now / 1000,
    immediate: (fn) => onHost(fn),
    timeout: (fn, ms) => {
      const timer = { live: true };
      at(now + ms * 1000, () => timer.live && runHost(fn));
      return timer;
    },
    clearTimeout: (timer) => {
      timer.live = false;
    },
    yieldNow: () => {
      if (running >= cores) yieldedUs += yieldUs;
    },
    currentCpu: () => 0,
    doorbell: (_u8, onRing) => {
      ring = () => {
        rings++;
        spend(wakeUs);
        onRing();
      };
      return { close() {} };
    },
  };
  let ring = null;
  const loop = new Loop(pool, { doorbell: true, steal: true }, workers, null, env);

  // Workers: a call ends, its answer is published and announced, the next starts.
  let started = 0;
  let answered = 0;
  // `running`: workers in a call or woken for one (they want a core).
  const startCall = (w, t, woken = false) => {
    if (started === calls || started === submitted) {
      // Nothing to start: a woken worker stops wanting a core; with calls still to come, it waits for one.
      if (woken) running--;
      if (started !== calls) waiting.push(w);
      return;
    }
    const k = started++;
    if (!woken) running++;
    at(t + callUs * (1 + jitter(k)), () => {
      running--;
      publishedAt.push(now);
      published++;
      answered++;
      Atomics.add(i32, L.wordCounter, 1);
      // The waiter: swaps ARMED to 0 and, if it was set, queues a ring.
      if (Atomics.load(i32, L.wordArmed) !== 0 && Atomics.exchange(i32, L.wordArmed, 0) === 1) {
        at(now + wakeUs, () => onHost(ring));
      }
      startCall(w, now);
    });
  };
  for (let w = 0; w < workers; w++) startCall(w, phaseUs[w] || 0);
  // The caller submitted the burst: the pool kicks its loop.
  onHost(() => loop.kick());

  let steps = 0;
  while (events.length > 0) {
    let best = 0;
    for (let i = 1; i < events.length; i++) {
      const e = events[i];
      const b = events[best];
      if (e.t < b.t || (e.t === b.t && e.seq < b.seq)) best = i;
    }
    const e = events[best];
    events[best] = events[events.length - 1];
    events.pop();
    now = Math.max(now, e.t);
    e.fn();
    if (++steps > 5_000_000) throw new Error("host model: the burst did not end (a host that never stops polling)");
  }
  loop.close();
  return {
    wallUs: hostFreeAt > now ? hostFreeAt : now,
    hostCpuUs,
    rings,
    answers: answered,
    settledAll: seen === calls,
    latencyUs: latencyUs.sort((a, b) => a - b),
  };
}

/**
 * Broken variant: the budget never halves (every ring doubles it, as if
 * each wait were short), so every answer is followed by FREE_HOPS passes.
 */
export class NeverHalves extends HostLoop {
  startDoorbell(u8) {
    return this.env.doorbell(u8, () => {
      this.armed = false;
      this.hopBudget = this.freeHops;
      this.drain();
    });
  }
}

/**
 * Broken variant: the budget's floor is 2 idle passes (the rule before
 * 2026-12-08), so after every answer the host yields at least once before it
 * sleeps; on cores all running workers, each yield can cost a time slice.
 */
export class PollsAfterEveryAnswer extends HostLoop {
  halveBudget() {
    this.hopBudget = Math.min(this.freeHops, Math.max(2, this.hopBudget >> 1));
  }
  // No yield is ever counted as lost.
  get recentYields() {
    return 0;
  }
  set recentYields(_bits) {}
}

/**
 * Broken variant: after a yield that lost the core, short doorbell waits
 * grow the budget back at once (no quiet period), so idle passes, and
 * yields that lose time slices, keep coming back.
 */
export class RegrowsAtOnce extends HostLoop {
  get lostYieldAt() {
    return Number.NEGATIVE_INFINITY;
  }
  set lostYieldAt(_t) {}
}

/**
 * Broken variant: the host never arms while calls are in flight (a budget
 * rule with no bound), polling for the whole burst.
 */
export class NeverSleeps extends HostLoop {
  constructor(...args) {
    super(...args);
    this.hopBudget = Number.POSITIVE_INFINITY;
    this.freeHops = Number.POSITIVE_INFINITY;
  }
  drain() {
    this.idleSince = this.env.now(); // defeats the wall-time cap too
    super.drain();
  }
}
