// Sequential latency, before/after: this checkout's pool against another
// checkout's (DIR), both in one process, taking turns in blocks of calls
// (so machine load and the scheduler's moods hit both alike), each block
// after a few unmeasured calls that wake the pool whose turn it is. Then,
// with --tiny N, N turns each of tiny-call throughput (1,000 in flight).
//   node bench/latency-ab.mjs DIR [--calls 20000] [--block 1000] [--threads 2] [--tiny 0]
import path from "node:path";
import { loadavg } from "node:os";
import { pathToFileURL } from "node:url";
import { tinyCalls } from "./lib/workloads.mjs";
import { parseArgs, positiveInt, nonNegativeInt } from "./lib/args.mjs";
import { percentiles, median } from "./lib/stats.mjs";

const USAGE = "usage: node bench/latency-ab.mjs DIR [--calls 20000] [--block 1000] [--threads 2] [--tiny 0]";
const o = parseArgs(process.argv.slice(2), {
  options: {
    "--calls": ["calls", positiveInt],
    "--block": ["block", positiveInt],
    "--threads": ["threads", positiveInt],
    "--tiny": ["tiny", nonNegativeInt],
  },
  defaults: { calls: 20_000, block: 1000, threads: 2, tiny: 0 },
  usage: USAGE,
  positionals: 1,
  required: ["DIR"],
});

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const sides = [
  ["this", path.resolve(new URL("..", import.meta.url).pathname)],
  ["DIR", path.resolve(o._[0])],
];
const pools = [];
for (const [name, root] of sides) {
  const mod = await import(pathToFileURL(path.join(root, "index.mjs")).href);
  const tasks = await import(pathToFileURL(path.join(root, "bench", "tasks.mjs")).href);
  const pool = mod.createPool({ threads: o.threads })({ add: tasks.add });
  await pool.ready;
  pools.push({ name: `${name} (${root})`, pool, add: (a, b) => pool.call.add([a, b]), us: [], tiny: [] });
}
console.log(`node ${process.version}, ${o.threads} threads, default options; load average ${load()}`);
for (const p of pools) {
  await tinyCalls(p.add, 20_000, 1000);
  for (let i = 0; i < 20_000; i++) await p.add(i, 1);
}
const hr = process.hrtime.bigint;
for (let done = 0; done < o.calls; done += o.block) {
  for (const p of pools) {
    for (let i = 0; i < 50; i++) await p.add(i, 1);
    for (let i = 0; i < Math.min(o.block, o.calls - done); i++) {
      const a = hr();
      const r = await p.add(i, 1);
      p.us.push(Number(hr() - a) / 1000);
      if (r !== i + 1) throw new Error(`${p.name}: add(${i}, 1) returned ${r}`);
    }
  }
}
const f = (v) => v.toFixed(2);
for (const p of pools) {
  const [p50, p90, p99, p999] = percentiles(p.us, [50, 90, 99, 99.9]);
  console.log(
    `${p.name}: ${p.us.length} sequential calls, p50 ${f(p50)} p90 ${f(p90)} p99 ${f(p99)} p99.9 ${f(p999)} µs`,
  );
}
for (let t = 0; t < o.tiny; t++)
  for (const p of pools) p.tiny.push((await tinyCalls(p.add, 200_000, 1000)).callsPerSec);
if (o.tiny > 0) {
  for (const p of pools) {
    const turns = p.tiny.map((v) => Math.round(v).toLocaleString("en-US")).join(", ");
    console.log(`${p.name}: tiny calls/s median ${Math.round(median(p.tiny)).toLocaleString("en-US")} (${turns})`);
  }
}
console.log(`load average at the end ${load()}`);
for (const p of pools) await p.pool.shutdown();
