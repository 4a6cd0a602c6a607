// Re-measures the tuned constants docs/measurements.md records: the
// worker's idle spin (worker.timers.spinMicroseconds, DEFAULT_SPIN_MICROS in
// lib/worker/serve.js) and the host's idle polling budget (host.stallFreeLoops,
// FREE_HOPS in lib/host/loop.js). For each value: tiny-call throughput
// (--calls calls, --window in flight) and sequential p50 (--seq calls, each
// awaited), in a fresh child process per rep, reps interleaved.
//
// Usage: node scripts/measure-knobs.mjs [--reps 3] [--threads 2] [--calls 200000] [--window 1000] [--seq 20000]

import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const reps = opt("reps", 3);
const threads = opt("threads", 2);
const calls = opt("calls", 200_000);
const windowSize = opt("window", 1000);
const seq = opt("seq", 20_000);

const CONFIGS = [
  { label: "spin 20 µs", options: { worker: { timers: { spinMicroseconds: 20 } } } },
  { label: "spin 50 µs (default)", options: {} },
  { label: "spin 200 µs", options: { worker: { timers: { spinMicroseconds: 200 } } } },
  { label: "host polling 8 passes", options: { host: { stallFreeLoops: 8 } } },
  { label: "host polling 128 passes", options: { host: { stallFreeLoops: 128 } } },
];

const self = fileURLToPath(import.meta.url);
// The task: declared at the top level, as workers import this module too.
const { createPool, task, isMain } = await import("../index.mjs");
export const noop = task({ f: (x) => x });

if (!isMain) {
  // A worker: it only needed the task.
} else if (args[0] === "--child") {
  const pool = createPool({ threads, ...JSON.parse(args[1]) })({ noop });
  await pool.ready;
  for (let i = 0; i < 2000; i++) await pool.call.noop(i); // warm-up
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < calls) await pool.call.noop(next++);
  };
  await Promise.all(Array.from({ length: windowSize }, lane));
  const rate = calls / ((performance.now() - t0) / 1000);
  const times = new Float64Array(seq);
  for (let i = 0; i < seq; i++) {
    const s = performance.now();
    await pool.call.noop(i);
    times[i] = performance.now() - s;
  }
  times.sort();
  await pool.shutdown();
  console.log(JSON.stringify({ rate, p50: times[seq >> 1] * 1000 }));
} else {
  const results = CONFIGS.map(() => []);
  const loads = [];
  for (let r = 0; r < reps; r++) {
    CONFIGS.forEach((config, c) => {
      loads.push(loadavg()[0]);
      const child = spawnSync(process.execPath, [self, "--child", JSON.stringify(config.options), ...args], {
        encoding: "utf8",
        timeout: 300_000,
      });
      if (child.status !== 0) throw new Error(`${config.label}: ${child.stderr}`);
      results[c].push(JSON.parse(child.stdout.trim().split("\n").pop()));
    });
  }
  const k = (n) => `${(n / 1e6).toFixed(2)} M`;
  console.log(
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${threads} threads (default topology), ` +
      `${calls} calls with ${windowSize} in flight, ${seq} sequential; load average ` +
      `${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)} during the run`,
  );
  CONFIGS.forEach((config, c) => {
    const rates = results[c].map((x) => k(x.rate)).join(", ");
    const p50 = results[c].map((x) => x.p50.toFixed(1)).join(", ");
    console.log(`  ${config.label.padEnd(26)} calls/s per rep: ${rates}; sequential p50 µs: ${p50}`);
  });
}
