// Where the sequential latency goes: one call awaited at a time (the
// `sequential` workload of bench/run.mjs), each call split by the time the
// worker ran it, with a histogram, the slow calls by phase, GC overlap, and
// optionally the CPUs host and worker ran on and the bare floor of two
// threads ping-ponging. docs/measurements.md, "Sequential latency", is what
// it found.
//   node bench/latency-probe.mjs [--calls 20000] [--threads 2] [--slow-us 5] [--block 500] [--cpu] [--floor]
import { Worker } from "node:worker_threads";
import { PerformanceObserver } from "node:perf_hooks";
import { loadavg } from "node:os";
import { createPool } from "../index.mjs";
import * as tasks from "./tasks.mjs";
import { stamp, cpuNow } from "./lib/latency-tasks.mjs";
import { tinyCalls } from "./lib/workloads.mjs";
import { parseArgs, positiveInt, positiveNumber } from "./lib/args.mjs";
import { percentiles } from "./lib/stats.mjs";

const USAGE =
  "usage: node bench/latency-probe.mjs [--calls 20000] [--threads 2] [--slow-us 5] [--block 500] [--cpu] [--floor]\n" +
  "  --cpu    a second run that reads the CPU of host and worker per call (/proc, Linux; slower calls)\n" +
  "  --floor  the bare floor: two threads ping-ponging on an Int32Array (spin, sched_yield, Atomics.wait)";
const o = parseArgs(process.argv.slice(2), {
  options: {
    "--calls": ["calls", positiveInt],
    "--threads": ["threads", positiveInt],
    "--slow-us": ["slowUs", positiveNumber],
    "--block": ["block", positiveInt],
    "--cpu": ["cpu", true],
    "--floor": ["floor", true],
  },
  defaults: { calls: 20_000, threads: 2, slowUs: 5, block: 500, cpu: false, floor: false },
  usage: USAGE,
});

const fmt = (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(2));
const quantiles = (xs) => {
  const [p50, p90, p99, p999, max] = percentiles(xs, [50, 90, 99, 99.9, 100]);
  return `p50 ${fmt(p50)} p90 ${fmt(p90)} p99 ${fmt(p99)} p99.9 ${fmt(p999)} max ${fmt(max)} µs`;
};
const load = () => loadavg().map((l) => l.toFixed(2));

console.log(`node ${process.version}, ${o.threads} threads (default options), load average ${load().join(" ")}`);

const pool = createPool({ threads: o.threads })({ add: tasks.add, stamp });
await pool.ready;
// As bench/run.mjs: tiny calls with a window, then sequential ones.
await tinyCalls((a, b) => pool.call.add([a, b]), 20_000, 1000);
for (let i = 0; i < 20_000; i++) await pool.call.stamp(false);

const gcs = [];
const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push([e.startTime, e.startTime + e.duration]);
});
observer.observe({ entryTypes: ["gc"] });

/** `n` sequential calls: latency (µs), submit -> worker ran it, worker ran it -> resumed; CPUs with `withCpu`. */
async function run(n, withCpu) {
  const r = {
    us: new Float64Array(n),
    toWorker: new Float64Array(n),
    back: new Float64Array(n),
    start: new Float64Array(n),
    hostCpu: new Int32Array(n),
    workerCpu: new Int32Array(n),
  };
  const origin = performance.timeOrigin;
  for (let i = 0; i < n; i++) {
    if (withCpu) r.hostCpu[i] = cpuNow();
    const a = performance.now();
    const answer = await pool.call.stamp(withCpu);
    const b = performance.now();
    const ran = (withCpu ? answer[0] : answer) - origin;
    if (withCpu) r.workerCpu[i] = answer[1];
    r.us[i] = (b - a) * 1000;
    r.toWorker[i] = (ran - a) * 1000;
    r.back[i] = (b - ran) * 1000;
    r.start[i] = a;
  }
  return r;
}

const r = await run(o.calls, false);
const slow = (i) => r.us[i] > o.slowUs;
console.log(`\n${o.calls} sequential calls: ${quantiles(r.us)}`);
const bins = [2, 3, 4, 5, 6, 8, 10, 15, 20, 50, 100, 1000, Infinity];
const counts = new Array(bins.length).fill(0);
for (const v of r.us) counts[bins.findIndex((b) => v < b)]++;
console.log(`histogram (µs): ${bins.map((b, i) => `<${b}: ${counts[i]}`).join(", ")}`);
const split = (pick, label) => {
  let n = 0;
  let toWorker = 0;
  let back = 0;
  for (let i = 0; i < o.calls; i++) {
    if (!pick(i)) continue;
    n++;
    toWorker += r.toWorker[i];
    back += r.back[i];
  }
  if (n === 0) return;
  const means = `submit -> task runs ${fmt(toWorker / n)} µs, task runs -> caller resumes ${fmt(back / n)} µs`;
  console.log(`${label}: ${n} calls; mean ${means}`);
};
split((i) => !slow(i), `fast (<= ${o.slowUs} µs)`);
split(slow, `slow (> ${o.slowUs} µs)`);
const perBlock = [];
for (let b = 0; b < o.calls; b += o.block) {
  let c = 0;
  for (let i = b; i < Math.min(o.calls, b + o.block); i++) if (slow(i)) c++;
  perBlock.push(c);
}
console.log(`slow calls per block of ${o.block}, in order: ${perBlock.join(" ")}`);
// The blocks where most calls were fast: what the path costs when host and
// worker are not taking turns on one CPU (see --cpu).
const calm = [];
for (let k = 0; k < perBlock.length; k++) {
  if (perBlock[k] * 2 >= o.block) continue;
  for (let i = k * o.block; i < Math.min(o.calls, (k + 1) * o.block); i++) calm.push(r.us[i]);
}
if (calm.length > 0) console.log(`the ${calm.length} calls of blocks with fewer than half slow: ${quantiles(calm)}`);
let afterSlow = 0;
let slowCount = 0;
let inGc = 0;
for (let i = 0; i < o.calls; i++) {
  if (!slow(i)) continue;
  slowCount++;
  if (i > 0 && slow(i - 1)) afterSlow++;
  const s = r.start[i];
  const e = s + r.us[i] / 1000;
  if (gcs.some(([gs, ge]) => gs < e && ge > s)) inGc++;
}
console.log(
  `slow calls right after a slow one: ${afterSlow} of ${slowCount}; overlapping a GC: ${inGc} (${gcs.length} GCs)`,
);

if (o.cpu) {
  const c = await run(o.calls, true);
  const groups = new Map();
  for (let i = 0; i < o.calls; i++) {
    if (c.hostCpu[i] < 0 || c.workerCpu[i] < 0) continue;
    const key = c.hostCpu[i] === c.workerCpu[i] ? "same CPU" : "different CPUs";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(c.us[i]);
  }
  console.log(`\n--cpu: ${o.calls} more calls, host's and worker's CPU read per call (each call slower by the reads)`);
  if (groups.size === 0) console.log("no CPU numbers on this platform (/proc/thread-self/stat)");
  for (const [key, xs] of groups) console.log(`  ${key}: ${xs.length} calls, ${quantiles(xs)}`);
}
observer.disconnect();
await pool.shutdown();

if (o.floor) {
  console.log(`\n--floor: two threads ping-ponging on an Int32Array, ${o.calls} round trips each`);
  for (const mode of ["spin", "yield", "wait"]) {
    const sab = new SharedArrayBuffer(8);
    const i32 = new Int32Array(sab);
    const worker = new Worker(new URL("./lib/pingpong-worker.mjs", import.meta.url), { workerData: { sab, mode } });
    await new Promise((resolve) => worker.once("online", resolve));
    const { createRequire } = await import("node:module");
    const native = createRequire(import.meta.url)("../lib/native/index.js");
    const warm = 2000;
    const us = new Float64Array(o.calls);
    for (let r = 0; r < o.calls + warm; r++) {
      const pong = 2 * r + 2;
      const a = performance.now();
      Atomics.store(i32, 0, pong - 1);
      if (mode === "wait") Atomics.notify(i32, 0);
      for (let seen = Atomics.load(i32, 1); seen !== pong; seen = Atomics.load(i32, 1)) {
        if (mode === "wait") Atomics.wait(i32, 1, seen);
        else if (mode === "yield") native.yieldNow();
      }
      if (r >= warm) us[r - warm] = (performance.now() - a) * 1000;
    }
    Atomics.store(i32, 0, -1);
    Atomics.notify(i32, 0);
    await worker.terminate();
    const how = { spin: "pure spin", yield: "spin with sched_yield", wait: "Atomics.wait/notify" }[mode];
    console.log(`  ${how}: round trip ${quantiles(us)}`);
  }
}
console.log(`\nload average at the end ${load().join(" ")}`);
