// The process workload of `node bench/run.mjs`, parent side: knitting-native
// worker processes against its worker threads, piscina, and a plain
// child_process.fork + process.send pool. Each pool runs in a fresh child
// process (bench/lib/proc-child.mjs) per rep, the pools taking turns rep by
// rep as in the main table; the table shows medians and ratios, then the two
// process-worker targets.
import { fileURLToPath } from "node:url";
import { median, fmtInt, fmtUs, fmtRatio, renderTable } from "./stats.mjs";
import { superviseChild } from "./supervise.mjs";
import { addTarget, formatTargets } from "./targets.mjs";
import { PROC_POOLS } from "./proc-pools.mjs";

const CHILD = fileURLToPath(new URL("./proc-child.mjs", import.meta.url));

/**
 * Sizes from the command line's options (`o`, see bench/run.mjs's usage
 * text); undefined values take the defaults. The fork + send pool gets fewer
 * calls: it answers a few tens of thousands of calls per second where the
 * others answer close to a million, and sequential calls take it tens of µs
 * each (20,000 calls at 26,000-52,000 calls/s: under a second). With these
 * defaults the workload took 37.6 s and 38.3 s on the 2-vCPU VM with other
 * processes using 1.4-1.5 of its cores: 15 children, most of each one's
 * ~2.5 s spent starting its process and pool.
 */
export function procConfig(o) {
  const quick = o.quick;
  const calls = o.procCalls ?? (quick ? 20_000 : 100_000);
  const seq = o.procSeq ?? (quick ? 2_000 : 10_000);
  const forkCalls = o.forkCalls ?? (quick ? 5_000 : 20_000);
  const forkSeq = o.forkSeq ?? (quick ? 500 : 2_000);
  return {
    reps: o.procReps ?? (quick ? 1 : 3),
    timeoutSec: o.timeout,
    stallSec: o.stall,
    workers: o.threads,
    window: o.window,
    calls,
    seq,
    forkCalls,
    forkSeq,
    warmupCalls: Math.min(calls, 10_000),
    warmupSeq: Math.min(seq, 1_000),
    warmupMs: 1_000, // tiny-call rounds for at least this long (workloads.mjs, warmUp)
    forkWarmupCalls: Math.min(forkCalls, 5_000),
    forkWarmupSeq: Math.min(forkSeq, 500),
  };
}

/** The job of `row` for one rep: the sizes that row runs with. */
function jobOf(row, pc) {
  const cfg = row.fork
    ? { calls: pc.forkCalls, seq: pc.forkSeq, warmupCalls: pc.forkWarmupCalls, warmupSeq: pc.forkWarmupSeq }
    : { calls: pc.calls, seq: pc.seq, warmupCalls: pc.warmupCalls, warmupSeq: pc.warmupSeq };
  return { row: row.key, cfg: { ...cfg, warmupMs: pc.warmupMs, workers: pc.workers, window: pc.window } };
}

/** Runs the workload with `pc` from procConfig(); returns { lines, json, failed, wrong }. */
export async function runProcess(pc) {
  const sc = { timeoutSec: pc.timeoutSec, stallSec: pc.stallSec };
  const reps = new Map(PROC_POOLS.map((r) => [r.key, []]));
  const broken = new Set();
  for (let rep = 1; rep <= pc.reps; rep++) {
    for (const row of PROC_POOLS) {
      if (broken.has(row.key)) continue; // failed once: don't retry
      process.stderr.write(`bench: process rep ${rep}/${pc.reps}: ${row.label}\n`);
      const r = await superviseChild(CHILD, [JSON.stringify(jobOf(row, pc))], row.label, sc, (how) => ({
        status: "error",
        error: how,
        mismatches: 0,
      }));
      reps.get(row.key).push(r);
      if (r.status !== "ok") broken.add(row.key);
    }
  }

  const cell = {};
  const notes = [];
  for (const row of PROC_POOLS) {
    const all = reps.get(row.key);
    const ok = all.filter((r) => r.tiny && r.seq);
    const bad = all.find((r) => r.status !== "ok");
    const mismatches = all.reduce((n, r) => n + (r.mismatches ?? 0), 0);
    const first = all.find((r) => r.firstMismatch)?.firstMismatch;
    if (bad) notes.push(`${row.label}: ${bad.status === "unavailable" ? "NOT AVAILABLE" : "FAILED"}: ${bad.error}`);
    if (mismatches > 0)
      notes.push(
        `${row.label}: ${mismatches} WRONG RESULTS; first in ${first?.workload}: call ${first?.call}: ${first?.what}`,
      );
    cell[row.key] = {
      status: bad ? bad.status : "ok",
      mismatches,
      callsPerSec: median(ok.map((r) => r.tiny.callsPerSec)),
      p50: median(ok.map((r) => r.seq.p50)),
      p99: median(ok.map((r) => r.seq.p99)),
      perRep: ok.map((r) => ({ callsPerSec: r.tiny.callsPerSec, p50: r.seq.p50, p99: r.seq.p99 })),
      foreignCores: median(ok.map((r) => r.noise?.foreignCores)),
    };
  }

  const threads = cell.threads;
  const header = [
    ["", "tiny calls", ["sequential", 2], ["x worker threads", 3]],
    ["pool", "calls/s", "p50 µs", "p99 µs", "calls/s", "p50", "p99"],
  ];
  const rows = PROC_POOLS.map((row) => {
    const c = cell[row.key];
    const mark = c.mismatches > 0 ? " (WRONG RESULTS)" : c.status !== "ok" ? " (FAILED)" : "";
    return [
      row.label + mark,
      fmtInt(c.callsPerSec),
      fmtUs(c.p50),
      fmtUs(c.p99),
      fmtRatio(c.callsPerSec / threads.callsPerSec),
      fmtRatio(threads.p50 / c.p50),
      fmtRatio(threads.p99 / c.p99),
    ];
  });

  const out = [];
  out.push(
    `process: ${pc.workers} workers per pool; ${fmtInt(pc.calls)} x add([i, 1]) with ${fmtInt(pc.window)} in flight, ` +
      `then ${fmtInt(pc.seq)} sequential calls (fork + send: ${fmtInt(pc.forkCalls)} and ${fmtInt(pc.forkSeq)}); ` +
      `medians of ${pc.reps} rep(s), each pool in a fresh child process per rep`,
  );
  out.push("  ratios: row/threads for calls/s, threads/row for latency; > 1 means the row beats worker threads");
  out.push("");
  out.push(renderTable(header, rows));
  for (const n of notes) out.push(`note: ${n.replace(/\n/g, "\n      ")}`);
  out.push("per-rep values:");
  for (const row of PROC_POOLS) {
    const p = cell[row.key].perRep;
    out.push(
      `  ${row.label}: calls/s [${p.map((x) => fmtInt(x.callsPerSec)).join(", ")}]; ` +
        `p50 µs [${p.map((x) => fmtUs(x.p50)).join(", ")}]; p99 µs [${p.map((x) => fmtUs(x.p99)).join(", ")}]`,
    );
  }
  const load = median(Object.values(cell).map((c) => c.foreignCores));
  if (Number.isFinite(load))
    out.push(`  (other processes used ${load.toFixed(2)} cores meanwhile, median over the pools)`);

  const procs = cell.processes;
  const fork = cell.fork;
  const targets = [];
  addTarget(
    targets,
    "process-worker throughput within 2x of worker threads",
    procs.callsPerSec / threads.callsPerSec,
    0.5,
    ">=",
    `${fmtInt(procs.callsPerSec)} vs ${fmtInt(threads.callsPerSec)} calls/s`,
  );
  addTarget(
    targets,
    "process workers far ahead of fork + send (>= 10x)",
    procs.callsPerSec / fork.callsPerSec,
    10,
    ">=",
    `${fmtInt(procs.callsPerSec)} vs ${fmtInt(fork.callsPerSec)} calls/s`,
  );
  // Verdicts hinge on both knitting-native rows in the ratios.
  const judged = {
    status: procs.status === "ok" && threads.status === "ok" ? "ok" : "error",
    mismatches: procs.mismatches + threads.mismatches,
  };
  out.push("");
  out.push(
    ...formatTargets(targets, judged).map((l, i) => (i === 0 ? "targets (knitting-native worker processes):" : l)),
  );

  return {
    lines: out,
    json: {
      config: pc,
      results: cell,
      targets: targets.map((t) => ({ ...t, value: Number.isFinite(t.value) ? t.value : null })),
    },
    failed: PROC_POOLS.filter((r) => cell[r.key].status === "error").map((r) => `${r.label} (process)`),
    wrong: PROC_POOLS.filter((r) => cell[r.key].mismatches > 0).map(
      (r) => `${r.label} (process, ${cell[r.key].mismatches} mismatches)`,
    ),
  };
}
