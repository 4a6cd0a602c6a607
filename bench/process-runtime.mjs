// Process workers against thread workers: tiny-call throughput (1,000 in
// flight) and sequential latency, each measurement in a fresh host process.
//   node bench/process-runtime.mjs [--reps 3] [--threads 2]
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createPool } from "../index.mjs";
import { add } from "./tasks.mjs";
import { median, percentiles } from "./lib/stats.mjs";

const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};

async function measure(runtime, threads) {
  const pool = createPool({ threads, worker: { runtime } })({ add });
  await pool.ready;
  // Throughput: 300,000 calls, 1,000 in flight (first 50,000 warm up).
  const TOTAL = 300_000;
  const WINDOW = 1_000;
  let done = 0;
  let t0 = 0;
  await new Promise((resolve, reject) => {
    let sent = 0;
    const next = () => {
      if (sent === TOTAL) return;
      sent++;
      pool.call.add([sent, 1]).then(() => {
        done++;
        if (done === 50_000) t0 = performance.now();
        if (done === TOTAL) resolve();
        else next();
      }, reject);
    };
    for (let i = 0; i < WINDOW; i++) next();
  });
  const callsPerSec = (TOTAL - 50_000) / ((performance.now() - t0) / 1000);
  // Latency: 20,000 sequential calls after 2,000 warm-up calls.
  const lat = [];
  for (let i = 0; i < 22_000; i++) {
    const s = performance.now();
    await pool.call.add([i, 1]);
    if (i >= 2_000) lat.push((performance.now() - s) * 1000);
  }
  const [p50, p99] = percentiles(lat, [50, 99]);
  await pool.shutdown();
  return { callsPerSec, p50, p99 };
}

if (process.argv[2] === "--child") {
  const result = await measure(process.argv[3], Number(process.argv[4]));
  process.stdout.write(JSON.stringify(result));
} else {
  const reps = arg("reps", 3);
  const threads = arg("threads", 2);
  const self = fileURLToPath(import.meta.url);
  console.log(`${threads} workers, ${reps} runs each, medians (each run in a fresh process)`);
  const byRuntime = { thread: [], process: [] };
  // Alternate the two, so that load from elsewhere on the machine hits both alike.
  for (let r = 0; r < reps; r++) {
    for (const runtime of Object.keys(byRuntime)) {
      const child = spawnSync(process.execPath, [self, "--child", runtime, String(threads)], { encoding: "utf8", timeout: 300_000 });
      if (child.status !== 0) throw new Error(`${runtime} run failed: ${child.stderr}`);
      byRuntime[runtime].push(JSON.parse(child.stdout));
    }
  }
  for (const [runtime, runs] of Object.entries(byRuntime)) {
    const m = (key) => median(runs.map((x) => x[key]));
    const all = runs.map((x) => Math.round(x.callsPerSec / 1000)).join(", ");
    console.log(
      `${runtime.padEnd(8)} tiny calls/s ${Math.round(m("callsPerSec")).toLocaleString("en-US").padStart(10)} (runs: ${all} k)` +
        `   sequential p50 ${m("p50").toFixed(1)} µs  p99 ${m("p99").toFixed(1)} µs`,
    );
  }
}
