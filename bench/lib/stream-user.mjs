// The stream workload of `node bench/run.mjs`, in the user's shape: on each
// runtime, fresh processes of bench/user/stream.mjs, one per pool per shape
// per rep (the pools taking turns within a rep), each streaming from the
// same async generator (bench/user/stream-gens.mjs): `values` small integers,
// and `chunks` fresh 64 KiB Uint8Arrays. Pools: knitting-native's
// `pool.stream.name(n)` with the default window and with a wider or
// narrower one, piscina with a MessagePort per call (the usual way), and a
// bare worker's postMessage per value.
//
// Reported per runtime and shape: values/s of each pool, median and worst
// (the slowest rep), MB/s for the binary shape, and knitting-native's
// median over piscina's and over raw postMessage's.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { median, min, fmtInt, fmtRatio, renderTable } from "./stats.mjs";
import { streamTargets, formatTargets } from "./targets.mjs";
import { findRuntimes, runScript } from "./runtimes.mjs";

const SCRIPT = fileURLToPath(new URL("../user/stream.mjs", import.meta.url));
const CHUNK_BYTES = 64 * 1024;

export function streamConfig(o) {
  return {
    threads: o.threads,
    reps: o.streamReps ?? (o.quick ? 1 : 3),
    shapes: [
      // Warm-ups: 10,000 small values; 100 chunks (10,000 would be as long as the measured stream).
      {
        key: "ints",
        label: "small ints",
        n: o.streamValues ?? (o.quick ? 100_000 : 1_000_000),
        warmup: 10_000,
        window: 16_384,
      },
      {
        key: "chunks",
        label: "64 KiB Uint8Array",
        n: o.streamChunks ?? (o.quick ? 1_000 : 10_000),
        warmup: 100,
        window: 64,
      },
    ],
    runtimes: o.cpuRuntimes ?? ["node", "node22", "node24", "bun", "deno"],
    timeoutSec: o.timeout ?? 180,
  };
}

/** The pools of one shape: [key, label, the process's config]. */
function poolsOf(shape) {
  return [
    ["knitting", "knitting-native (default window)", { pool: "knitting" }],
    ["knittingW", `knitting-native ({ window: ${shape.window} })`, { pool: "knitting", window: shape.window }],
    ["piscina", "piscina (MessagePort per call)", { pool: "piscina" }],
    ["raw", "raw postMessage", { pool: "raw" }],
  ];
}

/** Runs the workload; returns { lines, json, failed } like the other workloads. */
export async function runStream(cfg) {
  const rows = [];
  const json = { config: cfg, runtimes: {} };
  const failed = [];
  const targets = [];
  const cell = (xs) => (xs.length ? `${fmtInt(median(xs))} (${fmtInt(min(xs))})` : "n/a");
  const mbps = (xs) =>
    xs.length
      ? `${((median(xs) * CHUNK_BYTES) / 1e6).toFixed(0)} (${((min(xs) * CHUNK_BYTES) / 1e6).toFixed(0)})`
      : "n/a";
  for (const rt of findRuntimes().filter((r) => cfg.runtimes.includes(r.key))) {
    if (!rt.bin) {
      rows.push([rt.label, "-", "NOT INSTALLED", "-", "-", "-", "-", ""]);
      json.runtimes[rt.key] = { missing: rt.install };
      continue;
    }
    const v = execFileSync(rt.bin, ["--version"], { encoding: "utf8" }).match(/\d+\.\d+\.\d+/)?.[0] ?? "?";
    const label = `${rt.key.startsWith("node") ? "Node" : rt.label} ${v}`;
    const perRt = {};
    for (const shape of cfg.shapes) {
      const pools = poolsOf(shape);
      const got = Object.fromEntries(pools.map(([key]) => [key, { valuesPerSec: [], errors: [] }]));
      for (let rep = 0; rep < cfg.reps; rep++) {
        process.stderr.write(`bench: stream: ${label}, ${shape.label}, rep ${rep + 1} of ${cfg.reps}\n`);
        for (const [key, , arg] of pools) {
          const r = await runScript(
            rt,
            SCRIPT,
            { ...arg, shape: shape.key, n: shape.n, warmup: shape.warmup, threads: cfg.threads },
            cfg.timeoutSec,
          );
          if (r.error) got[key].errors.push(r.error);
          else got[key].valuesPerSec.push(shape.n / (r.wallMs / 1000));
        }
      }
      perRt[shape.key] = got;
      const med = (key) => (got[key].valuesPerSec.length ? median(got[key].valuesPerSec) : NaN);
      for (const [key, poolLabel] of pools) {
        const g = got[key];
        // Only knitting-native's failures fail the run; another pool that does not run on a runtime is "n/a".
        if (g.errors.length && key.startsWith("knitting")) failed.push(`stream ${label} ${shape.key} ${poolLabel}`);
        const mine = key.startsWith("knitting");
        rows.push([
          label,
          `${fmtInt(shape.n)} x ${shape.label}`,
          poolLabel,
          cell(g.valuesPerSec),
          shape.key === "chunks" ? mbps(g.valuesPerSec) : "-",
          mine ? fmtRatio(med(key) / med("piscina")) : "",
          mine ? fmtRatio(med(key) / med("raw")) : "",
          g.errors.length ? `${g.errors.length} failed: ${g.errors[0]}`.slice(0, 100) : "",
        ]);
      }
      streamTargets(targets, label, shape, med("knitting"), med("piscina"), got.knitting.errors.length > 0);
    }
    json.runtimes[rt.key] = { label, ...perRt };
  }
  const lines = [
    "",
    `stream (user's shape: bench/user/stream.mjs): a fresh process per pool per shape per rep, ${cfg.reps} ` +
      `rep(s), the pools taking turns, threads ${cfg.threads}; each process streams a warm-up of the same ` +
      "shape first; wall time from starting the stream to consuming its last value on the host",
    "  cells: values/s median (worst rep); MB/s likewise (binary only); ratios: knitting-native's median over " +
      "piscina's (a MessagePort per call, one postMessage per value) and raw postMessage's (a bare worker)",
    "",
    renderTable([["runtime", "shape", "pool", "values/s", "MB/s", "vs piscina", "vs raw", "errors"]], rows, [
      "l",
      "l",
      "l",
      "r",
      "r",
      "r",
      "r",
      "l",
    ]),
    "",
    ...formatTargets(targets, { status: "ok", mismatches: 0 }),
  ];
  return { lines, json, failed: [...new Set(failed)] };
}
