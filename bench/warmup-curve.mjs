// How long knitting-native's tiny-call path takes to warm up: after the
// warm-up the benchmarks used before 2026-12-03 (20,000 tiny calls, 2,000
// sequential, then gc()), rows of 100,000 tiny calls with 1,000 in flight,
// back to back, one line per row. The first rows are the cold ones; where
// the rate levels off is what a warm-up must reach (docs/measurements.md,
// "Warming the benchmarks up").
//   node --expose-gc bench/warmup-curve.mjs [--rows 8] [--threads 2]
import { createPool } from "../index.mjs";
import * as tasks from "./tasks.mjs";
import { tinyCalls, sequential } from "./lib/workloads.mjs";
import { parseArgs, positiveInt } from "./lib/args.mjs";

const { rows: ROWS, threads: THREADS } = parseArgs(process.argv.slice(2), {
  options: { "--rows": ["rows", positiveInt], "--threads": ["threads", positiveInt] },
  defaults: { rows: 8, threads: 2 },
  usage: "usage: node --expose-gc bench/warmup-curve.mjs [--rows 8] [--threads 2]",
});

const pool = createPool({ threads: THREADS })({ add: tasks.add });
await pool.ready;
const add = (a, b) => pool.call.add([a, b]);
await tinyCalls(add, 20_000, 1_000);
await sequential(add, 2_000);
if (typeof globalThis.gc === "function") globalThis.gc();
else console.log("(no --expose-gc: the old warm-up's gc() is skipped)");
const t0 = performance.now();
for (let r = 1; r <= ROWS; r++) {
  const t = await tinyCalls(add, 100_000, 1_000);
  if (t.mismatches > 0) throw new Error(`${t.mismatches} wrong results`);
  const at = ((performance.now() - t0) / 1000).toFixed(2);
  console.log(
    `row ${r} (ends ${at} s after the old warm-up): ${Math.round(t.callsPerSec).toLocaleString("en-US")} calls/s`,
  );
}
await pool.shutdown();
