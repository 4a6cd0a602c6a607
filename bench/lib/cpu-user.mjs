// The cpu-bound workload of `node bench/run.mjs`, in the user's shape: on
// each runtime, `procs` fresh processes of bench/user/cpu-burst.mjs (a main
// script importing the package by name and a task module of its own), each
// measuring, in one process, bare worker threads (the floor), then
// knitting-native's `createPool({ threads })`, then piscina: bursts of
// `calls` ~1 ms calls submitted at once with `Promise.all`.
//
// Reported per runtime: each pool's burst wall time over the floor (the
// median bare burst of the same process), median over all bursts of all
// processes and the worst burst; and the main thread's CPU over the burst's
// wall time (the host must sleep while the workers compute).
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { median, max, renderTable } from "./stats.mjs";
import { addTarget, formatTargets } from "./targets.mjs";
import { findRuntimes, runScript } from "./runtimes.mjs";

const SCRIPT = fileURLToPath(new URL("../user/cpu-burst.mjs", import.meta.url));
const POOLS = [
  ["knitting", "knitting-native"],
  ["piscina", "piscina"],
];

export function cpuUserConfig(o) {
  return {
    threads: o.threads,
    calls: o.cpuCalls ?? (o.quick ? 400 : 2_000),
    bursts: o.cpuReps ?? (o.quick ? 2 : 5),
    procs: o.cpuProcs ?? (o.quick ? 1 : 3),
    runtimes: o.cpuRuntimes ?? ["node", "node22", "node24", "bun", "deno"],
    callUs: 1_000,
  };
}

const ratio = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}x` : "-");
const pct = (v) => (Number.isFinite(v) ? `${(v * 100).toFixed(1)}%` : "-");

/** Runs the workload; returns { lines, json, failed, wrong } like the other workloads. */
export async function cpuUserLoad(cfg, sc) {
  const cc = cfg.cpuUser;
  const rows = [];
  const json = { config: cc, runtimes: {} };
  const failed = [];
  const targets = [];
  let anyError = false;
  for (const rt of findRuntimes().filter((r) => cc.runtimes.includes(r.key))) {
    if (!rt.bin) {
      rows.push([rt.label, "NOT INSTALLED", "-", "-", "-", "-", "-"]);
      json.runtimes[rt.key] = { missing: rt.install };
      continue;
    }
    const out = execFileSync(rt.bin, ["--version"], { encoding: "utf8" });
    const label = `${rt.key.startsWith("node") ? "Node" : rt.label} ${out.match(/\d+\.\d+\.\d+/)?.[0] ?? "?"}`;
    const per = { knitting: [], piscina: [], host: [], other: [], floorMs: [], errors: [] };
    for (let p = 0; p < cc.procs; p++) {
      process.stderr.write(`bench: cpu-bound: ${label}, process ${p + 1} of ${cc.procs}\n`);
      const arg = { threads: cc.threads, calls: cc.calls, bursts: cc.bursts, callUs: cc.callUs };
      const r = await runScript(rt, SCRIPT, arg, sc.timeoutSec);
      if (r.error || r.pools?.bare?.error) {
        per.errors.push(r.error ?? `bare workers: ${r.pools.bare.error}`);
        continue;
      }
      const floor = median(r.pools.bare.bursts.map((b) => b.wallMs));
      per.floorMs.push(floor);
      for (const [key] of POOLS) {
        const pool = r.pools[key];
        if (pool.error) per.errors.push(`${key}: ${pool.error}`);
        else per[key].push(...pool.bursts.map((b) => b.wallMs / floor));
      }
      for (const b of r.pools.knitting.bursts ?? []) if (b.hostCpuMs !== null) per.host.push(b.hostCpuMs / b.wallMs);
      for (const pool of Object.values(r.pools))
        for (const b of pool.bursts ?? []) if (b.otherCores !== null) per.other.push(b.otherCores);
    }
    json.runtimes[rt.key] = { label, ...per };
    if (per.errors.length) {
      anyError = true;
      failed.push(...per.errors.map((e) => `${label}: ${e}`));
    }
    const cell = (xs) => (xs.length ? `${ratio(median(xs))} (${ratio(max(xs))})` : "FAILED");
    rows.push([
      label,
      per.floorMs.length ? `${median(per.floorMs).toFixed(0)}` : "FAILED",
      cell(per.knitting),
      cell(per.piscina),
      per.host.length ? `${pct(median(per.host))} (${pct(max(per.host))})` : "-",
      per.other.length ? `${median(per.other).toFixed(2)} (${max(per.other).toFixed(2)})` : "-",
      per.errors.length ? per.errors.join("; ").slice(0, 120) : "",
    ]);
    if (per.knitting.length) {
      addTarget(targets, `${label}: median burst <= 1.10x the floor`, median(per.knitting), 1.1, "<=", "", ratio);
      addTarget(targets, `${label}: worst burst <= 1.20x the floor`, max(per.knitting), 1.2, "<=", "", ratio);
      addTarget(targets, `${label}: host CPU < 10% of the burst`, median(per.host), 0.1, "<", "", pct);
      for (const t of targets.slice(-3)) t.failed = per.errors.length > 0;
    }
  }
  const header = [
    ["runtime", "floor ms", "knitting-native / floor", "piscina / floor", "host CPU / wall", "other load", "errors"],
  ];
  const lines = [
    `cpu-bound (user's shape: bench/user/): ${cc.procs} process(es) per runtime, each: bare workers ` +
      `(floor), then createPool({ threads: ${cc.threads} }), then piscina; ${cc.bursts} bursts of ` +
      `${cc.calls} x ~${cc.callUs / 1000} ms calls submitted at once`,
    "  cells: median burst over the floor (worst burst); host CPU: the main thread's CPU time over the " +
      "burst's wall time, median (worst); other load: cores other processes kept busy during the " +
      "bursts, median (most): a worst burst beside a busy core is the machine's, not the pool's",
    "",
    renderTable(header, rows),
    "",
    ...formatTargets(targets, { status: anyError ? "error" : "ok", mismatches: 0 }),
  ];
  return { lines, json, failed, wrong: [] };
}
