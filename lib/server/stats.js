"use strict";
// pool.stats(): counts of calls, always kept (a few integer increments per
// call), and with the `stats: true` option the run time and wait time of
// every call a worker answered and each worker's busy fraction.
//
// Times: the worker measures how long the task ran (from its start to its
// answer, awaits included) and writes it into the slot's RUN_MICROS word
// (worker/serve.js); the host stamps each call when it is submitted and reads the
// clock once per drain pass, when it settles what the workers answered. A
// call's wait time is its total time minus its run time: time in the host's
// queue, in a slot before a worker took it, and the hops back and forth.
//
// Distributions are fixed-size log-linear histograms (below): recording a
// value allocates nothing and costs a few arithmetic operations.

/**
 * Buckets of a histogram of microseconds: values 0..7 exactly, then each
 * power of two [2^e, 2^(e+1)) split into 8 equal buckets, so a percentile
 * is off by at most 12.5% of its value; 2^31 µs (~36 min) and more land in
 * the last bucket.
 */
const SUB = 8;
const SUB_BITS = 3;
const BUCKETS = SUB + (31 - SUB_BITS) * SUB;
const MAX_MICROS = 2 ** 31 - 1;

function bucketOf(us) {
  if (us < SUB) return us;
  const e = 31 - Math.clz32(us);
  return SUB + (e - SUB_BITS) * SUB + ((us >>> (e - SUB_BITS)) - SUB);
}

/** The largest value of bucket `i`, in µs. */
function bucketTop(i) {
  if (i < SUB) return i;
  const e = SUB_BITS + Math.floor((i - SUB) / SUB);
  const sub = (i - SUB) % SUB;
  return (SUB + sub + 1) * 2 ** (e - SUB_BITS) - 1;
}

class Histogram {
  constructor() {
    this.counts = new Float64Array(BUCKETS);
    this.count = 0;
    this.sumMicros = 0;
    this.maxMicros = 0;
  }

  /** Records `us` microseconds (clamped to 0..2^31-1, rounded down). */
  record(us) {
    const v = us >= MAX_MICROS ? MAX_MICROS : us > 0 ? us | 0 : 0;
    this.counts[bucketOf(v)]++;
    this.count++;
    this.sumMicros += v;
    if (v > this.maxMicros) this.maxMicros = v;
  }

  /** The value at or below which a fraction `p` of the recordings lie (a bucket's top, at most the max), in µs. */
  percentile(p) {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil(p * this.count));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i];
      if (seen >= rank) return Math.min(bucketTop(i), this.maxMicros);
    }
    return this.maxMicros;
  }

  /** `{ count, mean, p50, p90, p99, max }`, times in milliseconds. */
  summary() {
    const ms = (us) => us / 1000;
    return {
      count: this.count,
      mean: this.count === 0 ? 0 : ms(this.sumMicros / this.count),
      p50: ms(this.percentile(0.5)),
      p90: ms(this.percentile(0.9)),
      p99: ms(this.percentile(0.99)),
      max: ms(this.maxMicros),
    };
  }
}

class PoolStats {
  /** `workers`: worker indexes 0..workers-1; `timing`: the `stats` option. */
  constructor(workers, timing) {
    this.timing = timing;
    this.submitted = 0;
    this.completed = 0;
    this.failed = 0;
    this.shed = 0;
    this.startedAt = performance.now();
    this.now = this.startedAt; // read once per drain pass (tick)
    if (!timing) return;
    this.runTime = new Histogram();
    this.waitTime = new Histogram();
    this.busyMicros = new Float64Array(workers);
    this.calls = new Float64Array(workers);
    this.lastBusy = new Float64Array(workers);
    this.lastAt = this.startedAt;
  }

  /** A call was taken (it will settle exactly once). */
  submitted1(call) {
    this.submitted++;
    if (this.timing) call.submittedAt = performance.now();
  }

  /** A drain pass begins: the time its settled calls are stamped with. */
  tick() {
    this.now = performance.now();
  }

  /**
   * Worker `worker` answered `call` (not yet settled); `runMicros` is what
   * it wrote into the slot (untrusted: task code can write that memory).
   */
  answered(call, worker, runMicros) {
    const total = (this.now - call.submittedAt) * 1000;
    const run = runMicros > 0 ? Math.min(runMicros, total) : 0;
    this.runTime.record(run);
    this.waitTime.record(total - run);
    if (worker >= 0 && worker < this.busyMicros.length) {
      this.busyMicros[worker] += run;
      this.calls[worker]++;
    }
  }

  /** A call settled: resolved (`ok`) or rejected. */
  settled(ok) {
    if (ok) this.completed++;
    else this.failed++;
  }

  /** A call was refused because the queue was full (it also counts as submitted and failed). */
  refused() {
    this.shed++;
  }

  /** The public snapshot; `live` is `{ pending, inFlight, queued, threads }` now. */
  snapshot(live) {
    const now = performance.now();
    const out = {
      submitted: this.submitted,
      completed: this.completed,
      failed: this.failed,
      shed: this.shed,
      pending: live.pending,
      inFlight: live.inFlight,
      queued: live.queued,
      threads: live.threads,
      elapsedMs: now - this.startedAt,
      runTime: null,
      waitTime: null,
      workers: null,
    };
    if (!this.timing) return out;
    out.runTime = this.runTime.summary();
    out.waitTime = this.waitTime.summary();
    const sinceStart = (now - this.startedAt) * 1000;
    const sinceLast = (now - this.lastAt) * 1000;
    const fraction = (busy, span) => (span > 0 ? Math.min(1, busy / span) : 0);
    out.workers = [];
    for (let w = 0; w < this.busyMicros.length; w++) {
      out.workers.push({
        index: w,
        calls: this.calls[w],
        utilization: fraction(this.busyMicros[w], sinceStart),
        recentUtilization: fraction(this.busyMicros[w] - this.lastBusy[w], sinceLast),
      });
      this.lastBusy[w] = this.busyMicros[w];
    }
    this.lastAt = now;
    return out;
  }
}

module.exports = { PoolStats, Histogram, bucketOf, bucketTop, BUCKETS };
