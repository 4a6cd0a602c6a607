// The startup workload of `node bench/run.mjs`: from before the package is
// imported to the first answer, in fresh processes of bench/user/startup.mjs
// (knitting-native and piscina taking turns, `runs` each, on each runtime
// installed). Reported: the fastest run (the least disturbed by other
// processes on a shared machine) and the median.
import { spawnSync, execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { median, min, renderTable } from "./stats.mjs";
import { addTarget, formatTargets } from "./targets.mjs";
import { findRuntimes } from "./runtimes.mjs";

const SCRIPT = fileURLToPath(new URL("../user/startup.mjs", import.meta.url));

export function startupConfig(o) {
  return {
    threads: o.threads,
    runs: o.startupRuns ?? (o.quick ? 3 : 15),
    runtimes: o.cpuRuntimes ?? ["node", "node22", "node24", "bun", "deno"],
  };
}

function once(rt, pool, threads) {
  const r = spawnSync(rt.bin, [...rt.args(SCRIPT), pool, String(threads)], { encoding: "utf8", timeout: 60_000 });
  try {
    return JSON.parse(r.stdout.trim().split("\n").pop()).firstAnswerMs;
  } catch {
    return null;
  }
}

export async function runStartup(cfg) {
  const rows = [];
  const targets = [];
  const json = {};
  const failed = [];
  const ms = (v) => (Number.isFinite(v) ? v.toFixed(1) : "-");
  for (const rt of findRuntimes().filter((r) => cfg.runtimes.includes(r.key))) {
    if (!rt.bin) {
      rows.push([rt.label, "NOT INSTALLED", "-", "-"]);
      continue;
    }
    const v = execFileSync(rt.bin, ["--version"], { encoding: "utf8" }).match(/\d+\.\d+\.\d+/)?.[0] ?? "?";
    const label = `${rt.key.startsWith("node") ? "Node" : rt.label} ${v}`;
    process.stderr.write(`bench: startup: ${label}, ${cfg.runs} runs per pool\n`);
    const got = { knitting: [], piscina: [] };
    for (let i = 0; i < cfg.runs; i++) {
      for (const pool of ["knitting", "piscina"]) {
        const t = once(rt, pool, cfg.threads);
        if (t === null) failed.push(`startup ${label} ${pool}`);
        else got[pool].push(t);
      }
    }
    json[rt.key] = { label, ...got };
    const cell = (xs) => (xs.length ? `${ms(min(xs))} / ${ms(median(xs))}` : "FAILED");
    rows.push([label, cell(got.knitting), cell(got.piscina), ms(min(got.knitting) / min(got.piscina))]);
    addTarget(targets, `${label}: fastest start-up <= piscina's`, min(got.knitting), min(got.piscina), "<=", "", ms);
  }
  const lines = [
    "",
    `startup (bench/user/startup.mjs): import to first answer, threads ${cfg.threads}, ${cfg.runs} fresh ` +
      "processes per pool per runtime, the pools taking turns; fastest / median ms",
    "",
    renderTable([["runtime", "knitting-native", "piscina", "fastest ratio"]], rows),
    "",
    ...formatTargets(targets, { status: failed.length ? "error" : "ok", mismatches: 0 }),
  ];
  return { lines, json, failed: [...new Set(failed)] };
}
