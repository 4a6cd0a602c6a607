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
 * Returns { wallUs, hostCpuUs, rings, answers, settledAll }.
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
    hostFreeAt = now;
  }
  const spend = (us) => {
    now += us;
    hostCpuUs += us;
  };

  let published = 0;
  let seen = 0;
  let rings = 0;
  const pool = {
    i32,
    u8: new Uint8Array(i32.buffer),
    inFlight: calls,
    isClosed: () => false,
    drainPass() {
      spend(passUs);
      const n = published - seen;
      seen = published;
      spend(n * settleUs);
      this.inFlight -= n;
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
    yieldNow: () => {},
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
  const startCall = (w, t) => {
    if (started === calls) return;
    const k = started++;
    at(t + callUs * (1 + jitter(k)), () => {
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
