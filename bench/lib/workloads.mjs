// Workloads shared by the benchmark driver (bench/run.mjs) and the --report
// run (bench/report.mjs). Each one checks every result it gets back.
import { readFileSync, readdirSync } from "node:fs";
import { percentiles } from "./stats.mjs";
import { xorshift32 } from "../../__test__/helpers/prng.mjs";

const hrtime = process.hrtime.bigint;

// Calls completed in the current workload; the child reports it every second so
// the parent can tell a stalled pool (no call completes) from a slow one.
export const progress = { done: 0, total: 0 };

/**
 * `total` calls add(i, 1) with `window` calls outstanding at all times: each of
 * `window` lanes starts its next call as soon as its previous one settles.
 */
export async function tinyCalls(add, total, window) {
  let next = 0;
  let mismatches = 0;
  let errors = 0;
  let firstMismatch = null;
  let firstError = null;
  progress.done = 0;
  progress.total = total;
  const lane = async () => {
    while (next < total) {
      const i = next++;
      let r;
      try {
        r = await add(i, 1);
        progress.done++;
      } catch (err) {
        progress.done++;
        errors++;
        firstError ??= err;
        continue;
      }
      if (r !== i + 1) {
        mismatches++;
        firstMismatch ??= { i, expected: i + 1, got: r };
      }
    }
  };
  const lanes = new Array(Math.min(window, total));
  const t0 = hrtime();
  for (let k = 0; k < lanes.length; k++) lanes[k] = lane();
  await Promise.all(lanes);
  const ns = Number(hrtime() - t0);
  if (errors > 0) {
    const e = new Error(`${errors} of ${total} calls rejected; first: ${firstError?.stack ?? firstError}`);
    throw e;
  }
  return { total, ns, callsPerSec: total / (ns / 1e9), mismatches, firstMismatch };
}

/** `n` sequential `await add(i, 1)`, each timed with process.hrtime.bigint(). */
export async function sequential(add, n) {
  const us = new Float64Array(n);
  let mismatches = 0;
  let firstMismatch = null;
  progress.done = 0;
  progress.total = n;
  const t0 = hrtime();
  for (let i = 0; i < n; i++) {
    const a = hrtime();
    const r = await add(i, 1);
    const b = hrtime();
    progress.done = i + 1;
    us[i] = Number(b - a) / 1000;
    if (r !== i + 1) {
      mismatches++;
      firstMismatch ??= { i, expected: i + 1, got: r };
    }
  }
  const ns = Number(hrtime() - t0);
  const [p50, p90, p99, pmax] = percentiles(us, [50, 90, 99, 100]);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += us[i];
  return { n, ns, p50, p90, p99, max: pmax, mean: sum / n, mismatches, firstMismatch };
}

/**
 * The warm-up before the tiny-call and sequential runs: `gc` first (a forced
 * full collection makes V8 drop optimised code that depends on the objects it
 * frees, --trace-deopt "weak objects", so it must never come between a
 * warm-up and the run it prepares), then rounds of `calls` tiny calls until
 * `ms` have passed, then `seq` sequential calls. Time, not a call count,
 * because the pools differ 50x in speed: the fast ones were measured half
 * cold after 20,000 calls (knitting-native's tiny calls went from ~0.77 M/s
 * in the first 100,000 after such a warm-up to 1.2-1.4 M/s in the next ones,
 * 2026-12-03, Node 20.20, 2 threads). `check(result, what)` sees each round.
 */
export async function warmUp(add, { calls, window, seq, ms, gc }, check) {
  if (gc) gc();
  const t0 = performance.now();
  do check(await tinyCalls(add, calls, window), "warm-up (tiny calls)");
  while (performance.now() - t0 < ms);
  if (seq > 0) check(await sequential(add, seq), "warm-up (sequential)");
}

// ---- random load (node bench/run.mjs, --only-workload random-load) ---------------

/**
 * The task durations of the random-load workload, the same for every pool:
 * `calls` durations drawn with an xorshift32 generator seeded with `seed`,
 * each `longUs` with probability `longFraction`, else `shortUs`. Returns
 * { us: Float64Array of durations, long: how many are long }.
 */
export function randomPlan({ calls, seed, shortUs, longUs, longFraction }) {
  const next = xorshift32(seed);
  const us = new Float64Array(calls);
  let long = 0;
  for (let i = 0; i < calls; i++) {
    const isLong = next() / 2 ** 32 < longFraction;
    if (isLong) long++;
    us[i] = isLong ? longUs : shortUs;
  }
  return { us, long };
}

/**
 * Runs `iters.length` calls work(i, iters[i]) in order, with `window` calls
 * in flight (a sliding window, as tinyCalls). Each call's latency runs from
 * its submission to its settling (µs); the makespan from the first
 * submission to the last result. work() returns [i, µs spent working].
 */
export async function randomLoad(work, iters, window) {
  const n = iters.length;
  const latUs = new Float64Array(n);
  let workUs = 0;
  let next = 0;
  let mismatches = 0;
  let errors = 0;
  let firstMismatch = null;
  let firstError = null;
  progress.done = 0;
  progress.total = n;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const a = hrtime();
      let r;
      try {
        r = await work(i, iters[i]);
      } catch (err) {
        progress.done++;
        errors++;
        firstError ??= err;
        continue;
      }
      latUs[i] = Number(hrtime() - a) / 1000;
      progress.done++;
      if (!Array.isArray(r) || r[0] !== i || !(r[1] >= 0)) {
        mismatches++;
        firstMismatch ??= { i, expected: `[${i}, µs]`, got: r };
      } else {
        workUs += r[1];
      }
    }
  };
  const lanes = new Array(Math.min(window, n));
  const t0 = hrtime();
  for (let k = 0; k < lanes.length; k++) lanes[k] = lane();
  await Promise.all(lanes);
  const ns = Number(hrtime() - t0);
  if (errors > 0) throw new Error(`${errors} of ${n} calls rejected; first: ${firstError?.stack ?? firstError}`);
  const [p50, p99, max] = percentiles(latUs, [50, 99, 100]);
  return { calls: n, makespanMs: ns / 1e6, p50, p99, max, workUs, mismatches, firstMismatch };
}

// ---- workloads of the --report run ----------------------------------------------

/**
 * `total` echo round trips with `window` in flight (a sliding window, as
 * tinyCalls): call i sends values[i % values.length], and check(result, k)
 * (null when right, else a description) judges what came back.
 */
export async function echoWindow(echo, values, check, total, window) {
  let next = 0;
  let mismatches = 0;
  let errors = 0;
  let firstMismatch = null;
  let firstError = null;
  const nv = values.length;
  progress.done = 0;
  progress.total = total;
  const lane = async () => {
    while (next < total) {
      const i = next++;
      const k = i % nv;
      let r;
      try {
        r = await echo(values[k]);
        progress.done++;
      } catch (err) {
        progress.done++;
        errors++;
        firstError ??= err;
        continue;
      }
      const bad = check(r, k);
      if (bad !== null) {
        mismatches++;
        firstMismatch ??= { i, what: bad };
      }
    }
  };
  const lanes = new Array(Math.min(window, total));
  const t0 = hrtime();
  for (let j = 0; j < lanes.length; j++) lanes[j] = lane();
  await Promise.all(lanes);
  const ns = Number(hrtime() - t0);
  if (errors > 0) throw new Error(`${errors} of ${total} calls rejected; first: ${firstError?.stack ?? firstError}`);
  return { total, ns, callsPerSec: total / (ns / 1e9), mismatches, firstMismatch };
}

/**
 * `tasks` calls spin(i, ms), all submitted at once (one synchronous loop), then
 * waits for all of them; makespan = first submission to last result.
 */
export async function cpuBound(spin, tasks, ms) {
  let mismatches = 0;
  let errors = 0;
  let firstMismatch = null;
  let firstError = null;
  progress.done = 0;
  progress.total = tasks;
  const all = new Array(tasks);
  const t0 = hrtime();
  for (let i = 0; i < tasks; i++) {
    all[i] = spin(i, ms).then(
      (r) => {
        progress.done++;
        if (r !== i) {
          mismatches++;
          firstMismatch ??= { i, expected: i, got: r };
        }
      },
      (err) => {
        progress.done++;
        errors++;
        firstError ??= err;
      },
    );
  }
  await Promise.all(all);
  const ns = Number(hrtime() - t0);
  if (errors > 0) throw new Error(`${errors} of ${tasks} calls rejected; first: ${firstError?.stack ?? firstError}`);
  return { tasks, ms, ns, makespanMs: ns / 1e6, mismatches, firstMismatch };
}

export const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

/**
 * The pool sits idle for `ms`: CPU time of the whole process (host and every
 * worker thread: process.cpuUsage() is getrusage(RUSAGE_SELF)) over wall time.
 */
export async function idleCpu(ms) {
  const c0 = process.cpuUsage();
  const t0 = hrtime();
  await sleep(ms);
  const c = process.cpuUsage(c0);
  const wallUs = Number(hrtime() - t0) / 1000;
  return { wallMs: wallUs / 1000, userUs: c.user, systemUs: c.system, pctOfCore: ((c.user + c.system) / wallUs) * 100 };
}

/** Samples process RSS every `everyMs` until stop(); also reads maxRSS at the end. */
export function rssSampler(everyMs = 10) {
  let peak = process.memoryUsage.rss();
  let samples = 1;
  const t0 = hrtime();
  const timer = setInterval(() => {
    const r = process.memoryUsage.rss();
    if (r > peak) peak = r;
    samples++;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const r = process.memoryUsage.rss();
      if (r > peak) peak = r;
      samples++;
      return {
        peakBytes: peak,
        samples,
        wallMs: Number(hrtime() - t0) / 1e6,
        maxRssBytes: process.resourceUsage().maxRSS * 1024,
      };
    },
  };
}

/**
 * How busy the rest of the machine was while a workload ran (Linux only): CPU
 * time of all processes (/proc/stat) minus this process's own, over wall time,
 * in cores. On a shared VM other processes (builds, test runs) take cores the
 * pools need; this says when a measurement was disturbed.
 */
export function foreignLoad() {
  const read = () => {
    try {
      const [, ...f] = readFileSync("/proc/stat", "utf8").split("\n", 1)[0].trim().split(/\s+/).map(Number);
      // user nice system idle iowait irq softirq steal (guest time is already in user)
      return { busy: f[0] + f[1] + f[2] + f[5] + f[6] + f[7], steal: f[7] };
    } catch {
      return null;
    }
  };
  const s0 = read();
  const c0 = process.cpuUsage();
  const t0 = hrtime();
  return {
    stop() {
      const s1 = read();
      if (!s0 || !s1) return null;
      const c = process.cpuUsage(c0);
      const wallS = Number(hrtime() - t0) / 1e9;
      const tick = 100; // USER_HZ
      const machine = (s1.busy - s0.busy) / tick / wallS;
      const own = (c.user + c.system) / 1e6 / wallS;
      return {
        foreignCores: Math.max(0, machine - own),
        machineCores: machine,
        ownCores: own,
        stealCores: (s1.steal - s0.steal) / tick / wallS,
      };
    },
  };
}

/**
 * CPU time each thread of this process has used so far (Linux only; null
 * elsewhere): Map tid -> ms, from utime + stime of /proc/self/task/<tid>/stat
 * (10 ms ticks). Node 20 names every thread "node", so a caller tells the
 * main thread (tid = process.pid) from the rest, not workers from V8's own.
 */
export function threadCpu() {
  let tids;
  try {
    tids = readdirSync("/proc/self/task");
  } catch {
    return null;
  }
  const out = new Map();
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      // Fields after "(name) ": state is [0], utime [11], stime [12].
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) * 10);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}
