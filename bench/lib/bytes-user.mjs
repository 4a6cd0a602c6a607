// The bytes workload of `node bench/run.mjs`, in the user's shape: on each
// runtime, fresh processes of bench/user/bytes.mjs, one per pool per op per
// size per rep (the pools taking turns within a rep), each making calls that
// carry a buffer to a worker and back, 2 x threads in flight. Pools:
// knitting-native's SharedBytes (worker threads, and worker processes), its
// copying path (a plain Uint8Array), bare workers' postMessage with and
// without a transfer list, and piscina with a transfer list both ways.
//
// Reported per runtime, op and size: calls/s of each pool, median and worst
// (the slowest rep), MB/s (size x calls/s), and the SharedBytes pools'
// medians over the copying and transferring peers'.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { median, min, fmtInt, fmtRatio, renderTable } from "./stats.mjs";
import { findRuntimes, runScript } from "./runtimes.mjs";

const SCRIPT = fileURLToPath(new URL("../user/bytes.mjs", import.meta.url));
const KiB = 1024;
const MiB = 1024 * KiB;

/** [key, label] of each pool, in the order they take turns. */
const POOLS = [
  ["shared", "knitting-native SharedBytes (threads)"],
  ["shared-process", "knitting-native SharedBytes (processes)"],
  ["copy", "knitting-native Uint8Array (copied)"],
  ["postmessage-copy", "raw postMessage (structured clone)"],
  ["postmessage-transfer", "raw postMessage (transfer list)"],
  ["piscina-transfer", "piscina (transferList + move)"],
];

export function bytesConfig(o) {
  // Each cell is timed, not counted: a warm-up of warmupMs, then measureMs of
  // measured calls; `calls` only caps a cell that would otherwise run longer
  // than needed. Measured 2026-12-07 (Node 20.20, idle 2 vCPUs): a new pool's
  // first ~5,000 calls run at a quarter of its steady rate, so a warm-up of
  // 200 calls before 3,000 measured 1 MiB echoes gave SharedBytes 14,260
  // calls/s where 60,000 calls give 87,330.
  const quick = !!o.quick;
  return {
    threads: o.threads,
    reps: o.bytesReps ?? (quick ? 1 : 3),
    warmupMs: quick ? 500 : 1000,
    measureMs: quick ? 1000 : 2000,
    sizes: [
      { size: 64 * KiB, label: "64 KiB", calls: { echo: 400_000, invert: 100_000 } },
      { size: MiB, label: "1 MiB", calls: { echo: 200_000, invert: 10_000 } },
      { size: 16 * MiB, label: "16 MiB", calls: { echo: 10_000, invert: 300 } },
    ],
    ops: ["echo", "invert"],
    runtimes: o.cpuRuntimes ?? ["node", "node22", "node24", "bun", "deno"],
    timeoutSec: o.timeout ?? 180,
  };
}

/** Runs the workload; returns { lines, json, failed } like the other workloads. */
export async function runBytes(cfg) {
  const rows = [];
  const json = { config: cfg, runtimes: {} };
  const failed = [];
  // Deno's postMessage moves a 16 MiB buffer in seconds: under 10 calls/s keeps a decimal.
  const num = (v) => (v < 10 ? v.toFixed(1) : fmtInt(v));
  const cell = (xs) => (xs.length ? `${num(median(xs))} (${num(min(xs))})` : "n/a");
  for (const rt of findRuntimes().filter((r) => cfg.runtimes.includes(r.key))) {
    if (!rt.bin) {
      rows.push([rt.label, "-", "NOT INSTALLED", "-", "-", "-", "-", "-", "-", "-", ""]);
      json.runtimes[rt.key] = { missing: rt.install };
      continue;
    }
    const v = execFileSync(rt.bin, ["--version"], { encoding: "utf8" }).match(/\d+\.\d+\.\d+/)?.[0] ?? "?";
    const label = `${rt.key.startsWith("node") ? "Node" : rt.label} ${v}`;
    const perRt = {};
    for (const op of cfg.ops) {
      for (const s of cfg.sizes) {
        const calls = s.calls[op];
        const got = Object.fromEntries(
          POOLS.map(([key]) => [key, { callsPerSec: [], calls: [], coldCallsPerSec: [], errors: [] }]),
        );
        for (let rep = 0; rep < cfg.reps; rep++) {
          process.stderr.write(`bench: bytes: ${label}, ${op} ${s.label}, rep ${rep + 1} of ${cfg.reps}\n`);
          for (const [key] of POOLS) {
            const arg = {
              pool: key,
              op,
              size: s.size,
              calls,
              threads: cfg.threads,
              warmupMs: cfg.warmupMs,
              measureMs: cfg.measureMs,
            };
            const r = await runScript(rt, SCRIPT, arg, cfg.timeoutSec);
            if (r.error) got[key].errors.push(r.error);
            else {
              got[key].callsPerSec.push(r.callsPerSec);
              got[key].calls.push(r.calls);
              got[key].coldCallsPerSec.push(r.coldCallsPerSec);
            }
          }
        }
        perRt[`${op}/${s.size}`] = { op, size: s.size, calls, pools: got };
        const med = (key) => (got[key].callsPerSec.length ? median(got[key].callsPerSec) : NaN);
        const vs = (mine, peer) => fmtRatio(med(mine) / med(peer));
        for (const [key, poolLabel] of POOLS) {
          const g = got[key];
          // Only knitting-native's failures fail the run; a peer that does not run on a runtime is "n/a".
          if (g.errors.length && (key.startsWith("shared") || key === "copy"))
            failed.push(`bytes ${label} ${op} ${s.label} ${poolLabel}`);
          const mb = (xs) => ((xs * s.size) / 1e6).toFixed(0);
          const note = g.errors.length ? `${g.errors.length} failed: ${g.errors[0]}`.slice(0, 100) : "";
          rows.push([
            label,
            `${op} ${s.label}`,
            poolLabel,
            g.calls.length ? fmtInt(median(g.calls)) : "n/a",
            cell(g.coldCallsPerSec),
            cell(g.callsPerSec),
            g.callsPerSec.length ? `${mb(median(g.callsPerSec))} (${mb(min(g.callsPerSec))})` : "n/a",
            key.startsWith("shared") ? vs(key, "postmessage-copy") : "",
            key === "shared" ? vs(key, "postmessage-transfer") : "",
            key === "shared" ? vs(key, "piscina-transfer") : "",
            note,
          ]);
        }
      }
    }
    json.runtimes[rt.key] = { label, cells: perRt };
  }
  const lines = [
    "",
    `bytes (user's shape: bench/user/bytes.mjs): a fresh process per pool per op per size per rep, ${cfg.reps} ` +
      `rep(s), the pools taking turns, threads ${cfg.threads}, ${2 * cfg.threads} calls in flight, each ` +
      "in-flight lane passing on the buffer its last call gave back",
    `  each process: ${cfg.warmupMs} ms of warm-up calls (their rate: "first ${cfg.warmupMs} ms"), then ` +
      `${cfg.measureMs} ms of measured calls ("calls": the median count; "calls/s": steady)`,
    "  cells: calls/s median (worst rep); MB/s: size x calls/s (10^6 bytes; each call carries them there and " +
      "back); ratios: the SharedBytes pool's steady median over raw postMessage's (copying; transferring) and " +
      "piscina's",
    "",
    renderTable(
      [
        [
          "runtime",
          "op, size",
          "pool",
          "calls",
          `first ${cfg.warmupMs} ms calls/s`,
          "calls/s",
          "MB/s",
          "vs pm copy",
          "vs pm transfer",
          "vs piscina",
          "notes",
        ],
      ],
      rows,
      ["l", "l", "l", "r", "r", "r", "r", "r", "r", "r", "l"],
    ),
  ];
  return { lines, json, failed: [...new Set(failed)] };
}
