// Whole pools, before/after: this checkout's pool against another
// checkout's (DIR, an earlier commit), and raw postMessage, taking turns in
// child processes (one pool at a time, so machine load hits all alike).
// Per turn: calls/s of echo with 1,000 calls in flight (fewer for large
// values, bench/lib/payloads.mjs windowFor) for a few size classes, then
// sequential latency (one call at a time) p50 and p99.
//   node bench/payload-pool-ab.mjs DIR [--reps 3] [--threads 2] [--cells LIST] [--no-seq]
// LIST: rows as KIND:BYTES separated by commas (KIND string, u8, object; or
// tiny), e.g. object:1024,object:16384 (default: the six rows below).
// Prints, per row, the median over turns with the worst beside it.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { makeSweepCell, sizeLabel, windowFor } from "./lib/payloads.mjs";
import { die, list, parseArgs, positiveInt } from "./lib/args.mjs";
import { median } from "./lib/stats.mjs";

const HERE = fileURLToPath(import.meta.url);
const DEFAULT_CELLS = [
  ["tiny", 0],
  ["string", 1024],
  ["u8", 1024],
  ["object", 1024],
  ["string", 16 * 1024],
  ["u8", 64 * 1024],
];
const SEQUENTIAL = 20_000;

const argv = process.argv.slice(2);

// Internal: `--child SIDE THREADS`, one turn of one pool in a child process.
if (argv[0] === "--child") {
  const [, side, threadsArg, cellsArg, seqArg] = argv;
  const threads = Number(threadsArg);
  const CELLS = JSON.parse(cellsArg);
  let pool;
  let echo;
  let close;
  if (side === "raw") {
    const { createRawPool } = await import("./peers/raw-postmessage.mjs");
    pool = createRawPool({ threads });
    await pool.ready;
    echo = (v) => pool.echo(v);
    close = () => pool.shutdown();
  } else {
    const { createPool } = await import(pathToFileURL(path.join(side, "index.mjs")).href);
    const tasks = await import(pathToFileURL(path.join(side, "bench/tasks.mjs")).href);
    pool = createPool({ threads })(tasks);
    await pool.ready;
    echo = (v) => pool.call.echo(v);
    close = () => pool.shutdown();
  }
  const out = {};
  for (const [kind, size] of CELLS) {
    const cell =
      kind === "tiny"
        ? { values: [1, 2, 3, 4], check: (r, k) => (r === k + 1 ? null : "bad") }
        : makeSweepCell(kind, size);
    const window = kind === "tiny" ? 1000 : windowFor(size, 1000);
    const total = Math.max(2000, Math.min(200_000, Math.round(4e8 / Math.max(size, 2000))));
    const run = async (n) => {
      let next = 0;
      const one = async () => {
        while (next < n) {
          const k = next++ % cell.values.length;
          const r = await echo(cell.values[k]);
          const bad = cell.check(r, k);
          if (bad) throw new Error(bad);
        }
      };
      await Promise.all(Array.from({ length: window }, one));
    };
    await run(Math.min(total, 5000)); // warm-up
    const t0 = process.hrtime.bigint();
    await run(total);
    out[`${kind} ${kind === "tiny" ? "" : sizeLabel(size)}`.trim()] =
      total / (Number(process.hrtime.bigint() - t0) / 1e9);
  }
  const lat = [];
  for (let i = 0; seqArg === "seq" && i < SEQUENTIAL + 2000; i++) {
    const t0 = process.hrtime.bigint();
    await echo(i);
    if (i >= 2000) lat.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  lat.sort((a, b) => a - b);
  if (lat.length !== 0) {
    out["seq p50 µs"] = lat[lat.length >> 1];
    out["seq p99 µs"] = lat[Math.floor(lat.length * 0.99)];
  }
  await close();
  console.log(JSON.stringify(out));
  process.exit(0);
}

const USAGE =
  "usage: node bench/payload-pool-ab.mjs DIR [--reps 3] [--threads 2] [--cells KIND:BYTES,...] [--no-seq]" +
  "   (DIR: another checkout)";
const parseCells = (text, name) =>
  list(text).map((item) => {
    const [kind, bytes = "0"] = item.split(":");
    const size = Number(bytes);
    if (!["tiny", "string", "u8", "object"].includes(kind) || !Number.isSafeInteger(size) || size < 0) {
      die(`${name}: ${JSON.stringify(item)} is not KIND:BYTES (KIND string, u8, object or tiny)`);
    }
    return [kind, size];
  });
const {
  _: [dir],
  reps,
  threads,
  cells,
  noSeq,
} = parseArgs(argv, {
  options: {
    "--reps": ["reps", positiveInt],
    "--threads": ["threads", positiveInt],
    "--cells": ["cells", parseCells],
    "--no-seq": ["noSeq", true],
  },
  defaults: { reps: 3, threads: 2, cells: DEFAULT_CELLS, noSeq: false },
  usage: USAGE,
  positionals: 1,
  required: ["DIR"],
});
const sides = { before: path.resolve(dir), after: path.resolve(path.dirname(HERE), ".."), raw: "raw" };
const results = { before: [], after: [], raw: [] };
for (let r = 0; r < reps; r++) {
  for (const [name, side] of Object.entries(sides)) {
    const args = [HERE, "--child", side, String(threads), JSON.stringify(cells), noSeq ? "no-seq" : "seq"];
    const child = spawnSync(process.execPath, args, { encoding: "utf8" });
    if (child.status !== 0) throw new Error(`${name} turn failed: ${child.stderr}`);
    results[name].push(JSON.parse(child.stdout.trim().split("\n").pop()));
  }
}
const fmt = (v, lat) =>
  lat ? `${v.toFixed(1)}` : v >= 1e6 ? `${(v / 1e6).toFixed(2)} M` : `${(v / 1e3).toFixed(1)} k`;
console.log(`node ${process.version}; ${threads} threads; ${reps} turns per side; median (worst); before: ${dir}`);
console.log(
  "row".padEnd(14),
  "before".padStart(18),
  "after".padStart(18),
  "raw postMessage".padStart(18),
  "after/before",
  "after/raw",
);
for (const key of Object.keys(results.after[0])) {
  const lat = key.includes("µs");
  const col = (name) => {
    const xs = results[name].map((x) => x[key]);
    const worst = lat ? Math.max(...xs) : Math.min(...xs);
    return [median(xs), `${fmt(median(xs), lat)} (${fmt(worst, lat)})`];
  };
  const [b, bs] = col("before");
  const [a, as] = col("after");
  const [w, ws] = col("raw");
  console.log(
    key.padEnd(14),
    bs.padStart(18),
    as.padStart(18),
    ws.padStart(18),
    (a / b).toFixed(2).padStart(12),
    (a / w).toFixed(2).padStart(9),
  );
}
