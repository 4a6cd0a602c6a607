// CPU-bound work in the user's shape: a task module with a tight integer
// loop (fixtures/cpu-kernel.mjs), createPool({ threads: 2 }), bursts of
// calls submitted at once. Two rules, checked by CPU time (not by wall
// time, which a loaded machine stretches):
//  - the pool's workers spend no more CPU per call than bare worker
//    threads running the same function in the same process: a task's code
//    runs as fast in the pool (on Node 24 it ran 1.5-2.7x slower when V8
//    inlined it into the pool's own frames: lib/worker/invoke.js);
//  - the host's own thread (the main thread) uses under 30% of the burst's
//    wall time: it sleeps while the workers compute (lib/host/loop.js). The
//    defect this guards against kept it near 100%; idle it measures 2-5%,
//    and beside other tests on 2 cores it reached 10.6% (three 10 ms ticks
//    of a 280 ms burst, 2026-12-07), so 10% is the benchmark's target
//    (bench/run.mjs), not this test's bound.
// Thread CPU times come from /proc/self/task (Linux); elsewhere the file
// skips. The speed itself is a benchmark: bench/run.mjs --only-workload cpu-bound.

import test from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { createPool } from "../index.mjs";
import { cpu, hashLoop } from "./fixtures/cpu-kernel.mjs";

const hasProc = existsSync("/proc/self/task");
// CPU time is counted in ticks of 10 ms: a burst must last some hundreds of them.
const N = 400_000; // ~0.5 ms per call on the machine this was written on
const CALLS = 800; // per burst, over 2 threads
const BURSTS = 3;

/** CPU time of each thread of this process, ms, by thread id. */
function threadCpu() {
  const out = new Map();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) * 10);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** CPU ms of the main thread, and of all other threads, between two threadCpu() readings. */
function split(before, after) {
  let others = 0;
  for (const [tid, ms] of after) if (tid !== process.pid) others += ms - (before.get(tid) ?? 0);
  return { host: after.get(process.pid) - before.get(process.pid), others };
}

/** Runs `burst()` BURSTS times: per burst, the workers' CPU ms per call, host CPU ms and wall ms. */
async function measure(burst) {
  const runs = [];
  for (let b = 0; b < BURSTS; b++) {
    const before = threadCpu();
    const t0 = performance.now();
    await burst();
    const wall = performance.now() - t0;
    const { host, others } = split(before, threadCpu());
    runs.push({ perCall: others / CALLS, host, wall });
  }
  return runs;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

test("a CPU-bound burst: the pool's workers use the CPU per call of bare workers, and the host sleeps", {
  skip: hasProc ? false : "needs /proc/self/task (Linux) for thread CPU times",
  timeout: 300_000,
}, async () => {
  assert.equal(typeof hashLoop(10), "number");
  // The floor: two bare worker threads, CALLS / 2 calls each per burst.
  const bare = [0, 1].map(() => new Worker(new URL("./fixtures/cpu-bare-worker.mjs", import.meta.url)));
  const bareBurst = () =>
    Promise.all(
      bare.map(
        (w) =>
          new Promise((resolve, reject) => {
            w.once("message", resolve);
            w.once("error", reject);
            w.postMessage({ calls: CALLS / 2, n: N });
          }),
      ),
    );
  let floor;
  try {
    await bareBurst(); // warm-up: the kernel gets compiled
    floor = await measure(bareBurst);
  } finally {
    await Promise.all(bare.map((w) => w.terminate()));
  }

  const pool = createPool({ threads: 2 })({ cpu });
  let runs;
  try {
    await pool.ready;
    const poolBurst = () => Promise.all(Array.from({ length: CALLS }, () => pool.call.cpu(N)));
    await poolBurst(); // warm-up, as for the floor
    runs = await measure(poolBurst);
  } finally {
    await pool.shutdown();
  }

  const bestFloor = Math.min(...floor.map((r) => r.perCall));
  const bestPool = Math.min(...runs.map((r) => r.perCall));
  const detail = JSON.stringify({ floor, pool: runs });
  assert.ok(bestFloor > 0, `the floor measured no CPU: ${detail}`);
  // Wide: same-process noise is a few %; the defect this guards against was 1.5-2.7x.
  assert.ok(bestPool <= bestFloor * 1.4, `pool ${bestPool} ms of CPU per call, bare workers ${bestFloor}: ${detail}`);
  // The host: under 30% of the burst's wall time in the median burst (see the top of the file).
  const share = median(runs.map((r) => r.host / r.wall));
  assert.ok(share < 0.3, `host thread CPU ${(share * 100).toFixed(1)}% of the burst: ${detail}`);
});
