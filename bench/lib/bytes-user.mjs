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
  // Calls per cell for ~0.5-1 s on an idle 2-vCPU VM; invert touches every byte, so fewer.
  const scale = o.quick ? 0.1 : 1;
  const calls = (n) => Math.max(20, Math.round(n * scale));
  return {
    threads: o.threads,
    reps: o.bytesReps ?? (o.quick ? 1 : 3),
    sizes: [
      { size: 64 * KiB, label: "64 KiB", calls: { echo: calls(20_000), invert: calls(8_000) } },
      { size: MiB, label: "1 MiB", calls: { echo: calls(3_000), invert: calls(1_000) } },
      { size: 16 * MiB, label: "16 MiB", calls: { echo: calls(150), invert: calls(60) } },
    ],
    ops: ["echo", "invert"],
    // A pool slower than this per cell (Deno's postMessage) is measured on the calls made by then.
    budgetMs: o.quick ? 3_000 : 10_000,
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
      rows.push([rt.label, "-", "NOT INSTALLED", "-", "-", "-", "-", "-", ""]);
      json.runtimes[rt.key] = { missing: rt.install };
      continue;
    }
    const v = execFileSync(rt.bin, ["--version"], { encoding: "utf8" }).match(/\d+\.\d+\.\d+/)?.[0] ?? "?";
    const label = `${rt.key.startsWith("node") ? "Node" : rt.label} ${v}`;
    const perRt = {};
    for (const op of cfg.ops) {
      for (const s of cfg.sizes) {
        const calls = s.calls[op];
        const got = Object.fromEntries(POOLS.map(([key]) => [key, { callsPerSec: [], cut: 0, errors: [] }]));
        for (let rep = 0; rep < cfg.reps; rep++) {
          process.stderr.write(`bench: bytes: ${label}, ${op} ${s.label}, rep ${rep + 1} of ${cfg.reps}\n`);
          for (const [key] of POOLS) {
            const arg = { pool: key, op, size: s.size, calls, threads: cfg.threads, budgetMs: cfg.budgetMs };
            const r = await runScript(rt, SCRIPT, arg, cfg.timeoutSec);
            if (r.error) got[key].errors.push(r.error);
            else {
              got[key].callsPerSec.push(r.callsPerSec);
              if (r.cut) got[key].cut++;
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
          const notes = [
            g.cut ? `${g.cut} rep(s) cut at ${cfg.budgetMs / 1000} s` : "",
            g.errors.length ? `${g.errors.length} failed: ${g.errors[0]}`.slice(0, 100) : "",
          ].filter(Boolean);
          rows.push([
            label,
            `${op} ${s.label} x ${fmtInt(calls)}`,
            poolLabel,
            cell(g.callsPerSec),
            g.callsPerSec.length ? `${mb(median(g.callsPerSec))} (${mb(min(g.callsPerSec))})` : "n/a",
            key.startsWith("shared") ? vs(key, "postmessage-copy") : "",
            key === "shared" ? vs(key, "postmessage-transfer") : "",
            key === "shared" ? vs(key, "piscina-transfer") : "",
            notes.join("; "),
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
      "in-flight lane passing on the buffer its last call gave back; a warm-up of min(calls/10, 200) calls first",
    "  cells: calls/s median (worst rep); MB/s: size x calls/s (10^6 bytes; each call carries them there and " +
      "back); ratios: the SharedBytes pool's median over raw postMessage's (copying; transferring) and piscina's",
    "",
    renderTable(
      [
        [
          "runtime",
          "op, size x calls",
          "pool",
          "calls/s",
          "MB/s",
          "vs pm copy",
          "vs pm transfer",
          "vs piscina",
          "notes",
        ],
      ],
      rows,
      ["l", "l", "l", "r", "r", "r", "r", "r", "l"],
    ),
  ];
  return { lines, json, failed: [...new Set(failed)] };
}
