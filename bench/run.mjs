#!/usr/bin/env node
// Benchmark driver: knitting-native vs a plain worker_threads + postMessage
// pool vs piscina, same thread count, same workloads.
//
//   node bench/run.mjs [--threads N] [--reps R] [--quick] [--json FILE]
//                      [--calls N] [--window N] [--seq N] [--piscina-seq N]
//                      [--only knitting,raw,piscina] [--timeout SEC] [--stall SEC]
//                      [--one-process] [--inproc]
//                      [--only-workload calls,random-load,random-load-loaded,
//                                       dispatcher-scaling,cpu-bound,process,server,
//                                       startup,stream,bytes] ...
//   node bench/run.mjs --report [--quick] ...   (bench/report.mjs: five pools, eight
//                      workloads -> bench/report.md + bench/report.svg)
//
// Each pool runs in child processes forked from this script (a fresh one per
// rep, see main()), one at a time, never concurrently. That keeps the pools
// from disturbing each other (fresh heap and JIT for each), and a pool that
// crashes its process or hangs is reported for its row while the others still
// run. Each child warms its pool up, measures, and shuts the pool down before
// the next child starts. Progress goes to stderr; the report goes to stdout.
// After the main table come the scheduling workloads (bench/lib/sched.mjs):
// random-load (skewed task durations: makespan and latency per balancer), the
// same beside a busy loop (random-load-loaded), dispatcher-scaling (tiny
// calls over 1, 2, 4 threads per host topology) and cpu-bound (bursts of
// ~1 ms calls in the user's shape on every runtime: bench/lib/cpu-user.mjs);
// then the process workload (bench/lib/proc.mjs): worker processes against
// worker threads, piscina and a child_process.fork + process.send pool; then
// the server workload (bench/lib/server.mjs): the cost of `stats: true` and
// an HTTP-style overload with and without `maxQueue`; then startup and stream
// (streaming calls against piscina's MessagePort per call and raw
// postMessage, in the user's shape on every runtime: bench/lib/stream-user.mjs),
// then bytes (SharedBytes handed to a worker and back against copying and
// transferring with postMessage and piscina: bench/lib/bytes-user.mjs).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isMainThread } from "node:worker_threads";
import { median, fmtInt, fmtUs, fmtRatio, renderTable } from "./lib/stats.mjs";
import { superviseChild, cpuInfo } from "./lib/supervise.mjs";
import { progress, tinyCalls, sequential, warmUp } from "./lib/workloads.mjs";
import { computeTargets, formatTargets } from "./lib/targets.mjs";
import { SCHED_WORKLOADS, schedConfig, runScheduling } from "./lib/sched.mjs";
import { procConfig, runProcess } from "./lib/proc.mjs";
import { serverConfig, runServer } from "./lib/server.mjs";
import { startupConfig, runStartup } from "./lib/startup-user.mjs";
import { streamConfig, runStream } from "./lib/stream-user.mjs";
import { bytesConfig, runBytes } from "./lib/bytes-user.mjs";
import { PAYLOAD_USAGE, payloadConfig, runPayloadSweep } from "./lib/payload-sweep.mjs";
import { SWEEP_KINDS, SWEEP_SIZES } from "./lib/payloads.mjs";
import { POOL_KEYS } from "./lib/report-pools.mjs";
import { LoadError, firstLines } from "./lib/child-job.mjs";
import { importKnitting, createOrFail } from "./lib/knitting.mjs";
import { parseArgs, die, list, listOf, subsetOf, positiveInt, text, json } from "./lib/args.mjs";

// ---- configuration ------------------------------------------------------------

const USAGE = `usage: node bench/run.mjs [options]
  --threads N        worker threads per pool (default 2)
  --reps R           repetitions per measurement, median reported (default 5; --quick: 1)
  --quick            smoke run: fewer calls, 1 rep
  --json FILE        also write the results as JSON to FILE
  --calls N          tiny-call workload size (default 200000; --quick: 20000)
  --window N         calls in flight for the tiny-call workload (default 1000)
  --seq N            sequential-latency calls (default 20000; --quick: 2000)
  --piscina-seq N    sequential-latency calls for piscina (default: same as --seq)
  --only LIST        comma-separated subset of: knitting,raw,piscina (the main table's pools)
  --only-workload LIST
                     comma-separated subset of: calls (the main table: tiny calls and
                     sequential latency), random-load, random-load-loaded (the same while
                     a busy loop in another process keeps one core occupied),
                     dispatcher-scaling, cpu-bound, process, payload, server, startup,
                     stream, bytes
                     (default: all)
  --timeout SEC      kill a pool whose single phase runs longer than this (default 180)
  --stall SEC        kill a pool when no call completes for this long (default 30)
  --one-process      run all reps of a pool in one child process (default: a fresh
                     child per rep, pools taking turns rep by rep)
  --inproc           run the pools in this process instead of child processes (debugging;
                     the main table only)
scheduling workloads (a fresh child process per pool per rep; cpu-bound: per pool):
  --sched-reps R     repetitions of random-load, random-load-loaded and dispatcher-scaling
                     (default 3; --quick: 1), fewer than the main table's to keep the
                     default run under ~8 minutes
  --random-calls N   random-load calls (default 3000; --quick: 600); durations: 2% are 5 ms,
                     the rest 10 µs, from a fixed seed (same sequence for every pool)
  --random-window N  random-load calls in flight (default 64)
  --random-seed N    random-load seed (default 20261202)
  --scaling-calls N  dispatcher-scaling tiny calls per cell (default 30000, a seventh of the main
                     table's, as there are 18 cells; --quick: 10000), --window of them in flight
  --scaling-threads LIST
                     dispatcher-scaling thread counts (default 1,2,4)
  --cpu-calls N      cpu-bound calls per burst, each ~1 ms of CPU, all submitted at once
                     (default 2000; --quick: 400)
  --cpu-reps R       cpu-bound bursts per pool per process (default 5; --quick: 2)
  --cpu-procs N      cpu-bound processes per runtime (default 3; --quick: 1); each runs
                     bench/user/cpu-burst.mjs: bare workers (the floor), createPool, piscina
  --cpu-runtimes LIST
                     cpu-bound runtimes, of node,node22,node24,bun,deno (default: all; one
                     not installed is reported as such: bench/lib/runtimes.mjs says where
                     each is looked for); ~1 min per runtime; the startup and stream workloads
                     run on them too
  --startup-runs N   fresh processes per pool per runtime for startup (default 15; --quick: 3)
stream workload (bench/user/stream.mjs: a fresh process per pool per shape per rep, on the
--cpu-runtimes; knitting-native's pool.stream with the default window and a tuned one,
piscina with a MessagePort per call, raw postMessage; ~2 min per runtime, Deno's piscina more):
  --stream-reps R    repetitions (default 3; --quick: 1)
  --stream-values N  small integers per stream (default 1000000; --quick: 100000)
  --stream-chunks N  64 KiB Uint8Arrays per stream (default 10000; --quick: 1000)
bytes workload (bench/user/bytes.mjs: a fresh process per pool per op (echo, invert) per size
(64 KiB, 1 MiB, 16 MiB) per rep, on the --cpu-runtimes; knitting-native's SharedBytes on worker
threads and processes and its copying path, raw postMessage copying and transferring, piscina
transferring; each cell 1 s of warm-up calls then 2 s of measured calls, ~4 s with the process
start, 108 cells (~7 min) per runtime with the default reps; --quick: 0.5 s and 1 s):
  --bytes-reps R     repetitions (default 3; --quick: 1)
process workload (knitting-native worker threads, worker processes with and without the
doorbell, piscina, a child_process.fork + process.send pool; --threads workers each;
a fresh child process per pool per rep; ~40 s with the defaults):
  --proc-reps R      repetitions (default 3; --quick: 1)
  --proc-calls N     tiny calls per pool, --window of them in flight (default 100000; --quick: 20000)
  --proc-seq N       sequential-latency calls per pool (default 10000; --quick: 2000)
  --fork-calls N     tiny calls for the fork + send pool, fewer as it is ~30x slower
                     (default 20000; --quick: 5000)
  --fork-seq N       sequential-latency calls for the fork + send pool (default 2000; --quick: 500)
server workload (stats on/off: tiny calls, the two sides taking turns, a fresh child
process each; then an open-loop overload at 1.5x capacity with maxQueue none, "auto", 8):
  --server-reps R    stats on/off repetitions (default 5; --quick: 1)
  --server-calls N   tiny calls per stats rep (default 200000; --quick: 20000)
${PAYLOAD_USAGE}
  --report           the full report instead (adds tinypool and workerpool and more
                     workloads; writes bench/report.md and bench/report.svg):
                     see node bench/run.mjs --report --help
  -h, --help         this text`;

const RUN_OPTIONS = {
  "--threads": ["threads", positiveInt],
  "--reps": ["reps", positiveInt],
  "--quick": ["quick", true],
  "--json": ["json", text],
  "--calls": ["calls", positiveInt],
  "--window": ["window", positiveInt],
  "--seq": ["seq", positiveInt],
  "--piscina-seq": ["piscinaSeq", positiveInt],
  "--only": ["only", list],
  "--only-workload": ["workloads", (v, name) => subsetOf(WORKLOADS)(v, name)],
  "--timeout": ["timeout", positiveInt],
  "--stall": ["stall", positiveInt],
  "--one-process": ["oneProcess", true],
  "--inproc": ["inproc", true],
  "--sched-reps": ["schedReps", positiveInt],
  "--random-calls": ["randomCalls", positiveInt],
  "--random-window": ["randomWindow", positiveInt],
  "--random-seed": ["randomSeed", positiveInt],
  "--scaling-calls": ["scalingCalls", positiveInt],
  "--scaling-threads": ["scalingThreads", listOf(positiveInt)],
  "--cpu-calls": ["cpuCalls", positiveInt],
  "--cpu-reps": ["cpuReps", positiveInt],
  "--cpu-procs": ["cpuProcs", positiveInt],
  "--startup-runs": ["startupRuns", positiveInt],
  "--stream-reps": ["streamReps", positiveInt],
  "--stream-values": ["streamValues", positiveInt],
  "--stream-chunks": ["streamChunks", positiveInt],
  "--bytes-reps": ["bytesReps", positiveInt],
  "--cpu-runtimes": ["cpuRuntimes", (v, name) => subsetOf(["node", "node22", "node24", "bun", "deno"])(v, name)],
  "--proc-reps": ["procReps", positiveInt],
  "--proc-calls": ["procCalls", positiveInt],
  "--proc-seq": ["procSeq", positiveInt],
  "--fork-calls": ["forkCalls", positiveInt],
  "--fork-seq": ["forkSeq", positiveInt],
  "--server-reps": ["serverReps", positiveInt],
  "--server-calls": ["serverCalls", positiveInt],
  "--payload-reps": ["payloadReps", positiveInt],
  "--payload-ms": ["payloadMs", positiveInt],
  "--payload-kinds": ["payloadKinds", (v, name) => subsetOf(SWEEP_KINDS)(v, name)],
  "--payload-sizes": ["payloadSizes", (v, name) => subsetOf(SWEEP_SIZES.map(String))(v, name).map(Number)],
  "--payload-pools": ["payloadPools", (v, name) => subsetOf(POOL_KEYS)(v, name)],
  "--payload-baseline": ["payloadBaseline", text],
  "--svg": ["svg", text],
  // Internal: how this script starts its own child processes.
  "--child": ["child", text],
  "--config": ["config", json],
};

const parseRunArgs = (argv) =>
  parseArgs(argv, {
    options: RUN_OPTIONS,
    internal: ["--child", "--config"],
    usage: USAGE,
    defaults: {
      threads: 2,
      quick: false,
      json: null,
      window: 1000,
      only: null,
      timeout: 180,
      stall: 30,
      inproc: false,
      oneProcess: false,
      child: null,
      config: null,
      workloads: WORKLOADS,
    },
  });

/** Every workload of the default run, in the order they run. */
const WORKLOADS = ["calls", ...SCHED_WORKLOADS, "process", "payload", "server", "startup", "stream", "bytes"];

function makeConfig(o) {
  const quick = o.quick;
  const calls = o.calls ?? (quick ? 20_000 : 200_000);
  const seq = o.seq ?? (quick ? 2_000 : 20_000);
  return {
    threads: o.threads,
    reps: o.reps ?? (quick ? 1 : 5),
    quick,
    calls,
    window: o.window,
    seq,
    piscinaSeq: o.piscinaSeq ?? seq,
    warmupCalls: Math.min(calls, quick ? 5_000 : 20_000),
    warmupSeq: Math.min(seq, quick ? 500 : 2_000),
    warmupMs: quick ? 200 : 1_000,
    timeoutSec: o.timeout,
    stallSec: o.stall,
  };
}

// ---- the pools ----------------------------------------------------------------
// Each adapter: create(threads) -> { add(a, b): Promise<number>, close(): Promise }

const POOLS = [
  {
    key: "knitting",
    label: "knitting-native",
    async create(threads) {
      const { mod, tasks } = await importKnitting();
      const pool = createOrFail(mod, { threads }, { add: tasks.add, echo: tasks.echo });
      const call = pool.call;
      if (!call || typeof call.add !== "function") {
        throw new LoadError("the pool has no pool.call.add function");
      }
      return {
        add: (a, b) => call.add([a, b]),
        close: () => pool.shutdown(),
      };
    },
  },
  {
    key: "raw",
    label: "raw postMessage",
    async create(threads) {
      const { createRawPool } = await import("./peers/raw-postmessage.mjs");
      const pool = createRawPool({ threads });
      await pool.ready;
      return {
        add: (a, b) => pool.add(a, b),
        close: () => pool.shutdown(),
      };
    },
  },
  {
    key: "piscina",
    label: "piscina",
    async create(threads) {
      const mod = await import("piscina");
      const Piscina = mod.Piscina ?? mod.default;
      const pool = new Piscina({
        filename: new URL("./peers/piscina-worker.mjs", import.meta.url).href,
        minThreads: threads,
        maxThreads: threads,
      });
      return {
        add: (a, b) => pool.run([a, b]),
        close: () => pool.destroy(),
      };
    },
  },
];

// ---- workloads ----------------------------------------------------------------
// tinyCalls and sequential live in lib/workloads.mjs, shared with --report.

// ---- running one pool (in the child process) -------------------------------------

const gc = typeof globalThis.gc === "function" ? globalThis.gc : () => {};

/** report(msg) gets {type: "phase", phase}; returns the pool's result record. */
async function benchPool(def, cfg, report) {
  const log = (s) => process.stderr.write(`[${def.label}] ${s}\n`);
  const phase = (p) => {
    log(p);
    report({ type: "phase", phase: p });
  };
  const seqN = def.key === "piscina" ? cfg.piscinaSeq : cfg.seq;
  const result = {
    key: def.key,
    label: def.label,
    status: "ok",
    error: null,
    calls: cfg.calls,
    window: cfg.window,
    seqCalls: seqN,
    tiny: [],
    seq: [],
    mismatches: 0,
    firstMismatch: null,
  };

  phase("load");
  let pool;
  try {
    pool = await def.create(cfg.threads);
  } catch (err) {
    result.status = err instanceof LoadError ? "unavailable" : "error";
    result.error = `${err instanceof LoadError ? "failed to load" : "failed to start"}: ${err.message}`;
    log(result.error);
    return result;
  }

  const noteMismatch = (r, what) => {
    if (r.mismatches > 0) {
      result.mismatches += r.mismatches;
      result.firstMismatch ??= { ...r.firstMismatch, workload: what };
      log(
        `ERROR: ${r.mismatches} wrong results in ${what}; first: add([${r.firstMismatch.i}, 1]) ` +
          `returned ${JSON.stringify(r.firstMismatch.got)}, expected ${r.firstMismatch.expected}`,
      );
    }
  };

  try {
    phase("warmup");
    const warm = { calls: cfg.warmupCalls, window: cfg.window, seq: cfg.warmupSeq, ms: cfg.warmupMs, gc };
    await warmUp(pool.add, warm, noteMismatch);

    const repName = (r) => cfg.repLabel ?? `${r}/${cfg.reps}`;
    // The reps run back to back, without a gc() between them (see warmUp):
    // V8 collects as it would in any program.
    for (let r = 1; r <= cfg.reps; r++) {
      phase(`tiny calls rep ${repName(r)}`);
      const t = await tinyCalls(pool.add, cfg.calls, cfg.window);
      noteMismatch(t, `tiny calls rep ${repName(r)}`);
      result.tiny.push({ callsPerSec: t.callsPerSec, ns: t.ns, mismatches: t.mismatches });
      log(`tiny calls rep ${repName(r)}: ${fmtInt(t.callsPerSec)} calls/s (${(t.ns / 1e6).toFixed(0)} ms)`);
    }
    for (let r = 1; r <= cfg.reps; r++) {
      phase(`sequential rep ${repName(r)}`);
      const s = await sequential(pool.add, seqN);
      noteMismatch(s, `sequential rep ${repName(r)}`);
      const { firstMismatch, ...rest } = s;
      result.seq.push(rest);
      log(`sequential rep ${repName(r)}: p50 ${fmtUs(s.p50)} µs, p99 ${fmtUs(s.p99)} µs (${seqN} calls)`);
    }
  } catch (err) {
    result.status = "error";
    result.error = `failed while running: ${firstLines(err.stack ?? err, 6)}`;
    log(result.error);
  }

  phase("shutdown");
  try {
    await pool.close();
  } catch (err) {
    if (result.status === "ok") {
      result.status = "error";
      result.error = `shutdown failed: ${firstLines(err.stack ?? err, 6)}`;
    }
    log(`shutdown failed: ${err.message}`);
  }
  return result;
}

async function childMain(key, cfg) {
  const def = POOLS.find((p) => p.key === key);
  const send = (msg) => new Promise((res) => process.send(msg, () => res()));
  let result;
  const heartbeat = setInterval(() => {
    process.send({ type: "progress", done: progress.done, total: progress.total });
  }, 1000);
  try {
    result = await benchPool(def, cfg, (m) => {
      progress.done = progress.total = 0;
      process.send(m);
    });
  } catch (err) {
    result = { key, label: def.label, status: "error", error: String(err.stack ?? err) };
  }
  clearInterval(heartbeat);
  await send({ type: "result", result });
  // The pool is shut down (or broken); don't let a stray handle keep us alive.
  process.exit(0);
}

// ---- running all pools (parent) ---------------------------------------------------

function runInChild(def, cfg) {
  const args = ["--child", def.key, "--config", JSON.stringify(cfg)];
  return superviseChild(fileURLToPath(import.meta.url), args, def.label, cfg, (how) => ({
    key: def.key,
    label: def.label,
    status: "error",
    error: how,
    tiny: [],
    seq: [],
    mismatches: 0,
  }));
}

async function runInProcess(def, cfg) {
  return benchPool(def, cfg, () => {});
}

function summarize(r) {
  const s = { ...r };
  s.callsPerSec = r.tiny?.length ? median(r.tiny.map((t) => t.callsPerSec)) : NaN;
  s.p50 = r.seq?.length ? median(r.seq.map((t) => t.p50)) : NaN;
  s.p99 = r.seq?.length ? median(r.seq.map((t) => t.p99)) : NaN;
  return s;
}

/** The main table (workload "calls"): tiny calls and sequential latency per pool. */
async function callsTable(opts, cfg, selected) {
  // Default: every rep of every pool runs in a fresh child process, and the pools
  // take turns rep by rep (rep 1: A, B, C; rep 2: A, B, C; ...). On this kind of
  // VM one process's thread placement decides its wake-up latency for its whole
  // life (host and worker on the same vCPU, or not), so reps inside one process
  // would all draw the same luck; and taking turns spreads slow phases of a noisy
  // host over all pools. --one-process runs all reps of a pool in one child.
  const merged = {};
  const runOne = (def, c) => (opts.inproc ? runInProcess(def, c) : runInChild(def, c));
  if (opts.inproc || opts.oneProcess) {
    for (const def of selected) merged[def.key] = await runOne(def, cfg);
  } else {
    for (let rep = 1; rep <= cfg.reps; rep++) {
      for (const def of selected) {
        const prev = merged[def.key];
        if (prev && prev.status !== "ok") continue; // failed or unavailable: don't retry
        process.stderr.write(`bench: rep ${rep}/${cfg.reps}: ${def.label}\n`);
        const r = await runOne(def, { ...cfg, reps: 1, repLabel: `${rep}/${cfg.reps}` });
        if (!prev) {
          merged[def.key] = r;
        } else {
          prev.tiny.push(...(r.tiny ?? []));
          prev.seq.push(...(r.seq ?? []));
          prev.mismatches += r.mismatches ?? 0;
          prev.firstMismatch ??= r.firstMismatch ?? null;
          if (r.status !== "ok") {
            prev.status = r.status === "unavailable" ? "error" : r.status;
            prev.error = `rep ${rep}: ${r.error}`;
          }
        }
      }
    }
  }
  const results = {};
  for (const def of selected) results[def.key] = summarize(merged[def.key]);

  // ---- report ----
  const ours = results.knitting;
  const raw = results.raw;
  const pisc = results.piscina;
  const peers = [
    { key: "raw", label: "raw postMessage", r: raw },
    { key: "piscina", label: "piscina", r: pisc },
  ].filter((p) => p.r);

  const ratiosOf = (row) => {
    const out = {};
    for (const p of peers) {
      out[p.key] = {
        throughput: row.callsPerSec / p.r.callsPerSec, // ours/peer
        p50: p.r.p50 / row.p50, // peer/ours
        p99: p.r.p99 / row.p99,
      };
    }
    return out;
  };

  const header1 = ["", "tiny calls", ["sequential", 2]];
  const header2 = ["pool", "calls/s", "p50 µs", "p99 µs"];
  for (const p of peers) {
    header1.push([`x ${p.label}`, 3]);
    header2.push("calls/s", "p50", "p99");
  }
  const rows = [];
  const notes = [];
  for (const def of selected) {
    const r = results[def.key];
    if (r.status !== "ok" && !(r.tiny?.length || r.seq?.length)) {
      const what = r.status === "unavailable" ? "NOT AVAILABLE" : "FAILED";
      rows.push([def.label, what, "-", "-", ...peers.flatMap(() => ["-", "-", "-"])]);
      notes.push(`${def.label}: ${what}: ${r.error}`);
      continue;
    }
    const rat = ratiosOf(r);
    let label = def.label;
    if (r.mismatches > 0) label += " (WRONG RESULTS)";
    else if (r.status !== "ok") label += " (FAILED)";
    if (r.status !== "ok") notes.push(`${def.label}: ${r.error}`);
    if (r.mismatches > 0) {
      const f = r.firstMismatch;
      notes.push(
        `${def.label}: ${r.mismatches} WRONG RESULTS; first in ${f?.workload}: add([${f?.i}, 1]) ` +
          `returned ${JSON.stringify(f?.got)}, expected ${f?.expected}`,
      );
    }
    rows.push([
      label,
      fmtInt(r.callsPerSec),
      fmtUs(r.p50),
      fmtUs(r.p99),
      ...peers.flatMap((p) => [fmtRatio(rat[p.key].throughput), fmtRatio(rat[p.key].p50), fmtRatio(rat[p.key].p99)]),
    ]);
    r.ratios = rat;
  }

  const out = [];
  out.push(
    `threads per pool: ${cfg.threads}; reps: ${cfg.reps} (median reported)${cfg.quick ? "; QUICK smoke run" : ""}`,
  );
  out.push(
    `tiny calls: ${fmtInt(cfg.calls)} x add([i, 1]), ${fmtInt(cfg.window)} in flight (sliding ` +
      `window), every result checked`,
  );
  out.push(
    `sequential: ${fmtInt(cfg.seq)} x await add([i, 1]), one at a time` +
      (cfg.piscinaSeq !== cfg.seq ? ` (piscina: ${fmtInt(cfg.piscinaSeq)})` : ""),
  );
  out.push(
    `warm-up: rounds of ${fmtInt(cfg.warmupCalls)} tiny calls for ${fmtInt(cfg.warmupMs)} ms, then ` +
      `${fmtInt(cfg.warmupSeq)} sequential calls per pool (no gc() after it), ` +
      (opts.inproc
        ? "all pools in this process"
        : opts.oneProcess
          ? "one child process per pool"
          : "in a fresh child process per pool per rep (pools take turns rep by rep)"),
  );
  out.push("ratios: ours/peer for calls/s, peer/ours for latency; > 1 means the row beats that peer");
  out.push("");
  out.push(renderTable([header1, header2], rows));
  if (notes.length) {
    out.push("");
    for (const n of notes) out.push(`note: ${n.replace(/\n/g, "\n      ")}`);
  }

  // per-rep detail (the VM is noisy: show the spread behind the medians)
  out.push("");
  out.push("per-rep values:");
  for (const def of selected) {
    const r = results[def.key];
    if (!r.tiny?.length && !r.seq?.length) continue;
    out.push(
      `  ${def.label}: calls/s [${r.tiny.map((t) => fmtInt(t.callsPerSec)).join(", ")}]; ` +
        `p50 µs [${r.seq.map((s) => fmtUs(s.p50)).join(", ")}]; p99 µs [${r.seq.map((s) => fmtUs(s.p99)).join(", ")}]`,
    );
  }
  const spread = (xs) => (xs.length > 1 ? Math.max(...xs) / Math.min(...xs) : 1);
  const wide = selected
    .map((d) => results[d.key])
    .filter(
      (r) => spread((r.tiny ?? []).map((t) => t.callsPerSec)) > 1.5 || spread((r.seq ?? []).map((t) => t.p50)) > 1.5,
    )
    .map((r) => r.label);
  if (wide.length) {
    out.push(
      `  (spread > 1.5x between reps for: ${wide.join(", ")}. Results on a shared VM vary from process` +
        " to process, e.g. a worker's wake-up latency depends on whether it shares a vCPU with the caller;" +
        " the median is reported)",
    );
  }

  // targets
  const targets = computeTargets(ours, raw, pisc);
  out.push("");
  out.push(...formatTargets(targets, ours));

  const wrong = Object.values(results)
    .filter((r) => r.mismatches > 0)
    .map((r) => `${r.label} (${r.mismatches} mismatches)`);
  const failed = Object.values(results)
    .filter((r) => r.status === "error")
    .map((r) => r.label);
  return { lines: out, results, targets, wrong, failed };
}

async function main() {
  // --report: the five-pool, eight-workload report (bench/report.mjs), which
  // writes bench/report.md and bench/report.svg.
  if (process.argv.includes("--report")) {
    const { reportMain } = await import("./report.mjs");
    return reportMain(process.argv.slice(2));
  }
  const opts = parseRunArgs(process.argv.slice(2));
  if (opts.child) return childMain(opts.child, opts.config);

  const cfg = makeConfig(opts);
  const selected = opts.only ? POOLS.filter((p) => opts.only.includes(p.key)) : POOLS;
  if (opts.only) {
    const unknown = opts.only.filter((k) => !POOLS.some((p) => p.key === k));
    if (unknown.length)
      die(`--only: unknown pool(s) ${unknown.join(", ")} (known: ${POOLS.map((p) => p.key).join(", ")})`);
  }
  const sched = schedConfig(opts);
  const date = new Date();
  const cpu = cpuInfo();
  const runsCalls = opts.workloads.includes("calls");
  const schedWorkloads = SCHED_WORKLOADS.filter((w) => opts.workloads.includes(w));
  if (runsCalls) {
    process.stderr.write(
      `bench: ${selected.map((p) => p.label).join(", ")}; threads ${cfg.threads}, reps ${cfg.reps}` +
        `${cfg.quick ? " (quick)" : ""}; tiny ${fmtInt(cfg.calls)} calls / ${fmtInt(cfg.window)} in flight; ` +
        `sequential ${fmtInt(cfg.seq)} calls\n`,
    );
  }
  if (schedWorkloads.length) process.stderr.write(`bench: then ${schedWorkloads.join(", ")}, reps ${sched.reps}\n`);
  const runsProc = opts.workloads.includes("process");
  const proc = procConfig(opts);
  if (runsProc) process.stderr.write(`bench: then process, reps ${proc.reps}\n`);
  const runsPayload = opts.workloads.includes("payload");
  const payload = payloadConfig(opts);
  if (runsPayload) process.stderr.write(`bench: then the payload sweep, reps ${payload.reps}\n`);

  const out = [];
  out.push("");
  out.push(`knitting-native benchmark — ${date.toISOString()}`);
  // Under Bun and Deno (bench:bun, bench:deno) the pools run on that runtime.
  const runtime = process.versions.bun
    ? `Bun ${process.versions.bun}`
    : process.versions.deno
      ? `Deno ${process.versions.deno}`
      : `Node ${process.version}`;
  out.push(
    `${runtime} (${process.platform}-${process.arch}), ${cpu.count} CPUs ` +
      `(available parallelism ${cpu.availableParallelism}), ${cpu.model}`,
  );
  const calls = runsCalls ? await callsTable(opts, cfg, selected) : null;
  if (calls) out.push(...calls.lines);
  // Printed as soon as they exist: the scheduling workloads take minutes more.
  console.log(out.join("\n"));
  const s = await runScheduling(schedWorkloads, sched);
  if (s.lines.length) console.log(s.lines.join("\n"));
  const p = runsProc ? await runProcess(proc) : null;
  if (p) console.log(["", ...p.lines].join("\n"));
  const pay = runsPayload ? await runPayloadSweep(payload) : null;
  if (pay) console.log(pay.lines.join("\n"));
  const srv = opts.workloads.includes("server") ? await runServer(serverConfig(opts)) : null;
  if (srv) console.log(srv.lines.join("\n"));
  const up = opts.workloads.includes("startup") ? await runStartup(startupConfig(opts)) : null;
  if (up) console.log(up.lines.join("\n"));
  const st = opts.workloads.includes("stream") ? await runStream(streamConfig(opts)) : null;
  if (st) console.log(st.lines.join("\n"));
  const by = opts.workloads.includes("bytes") ? await runBytes(bytesConfig(opts)) : null;
  if (by) console.log(by.lines.join("\n"));
  const wrong = [...(calls?.wrong ?? []), ...s.wrong, ...(p?.wrong ?? []), ...(pay?.wrong ?? [])];
  const failed = [
    ...(calls?.failed ?? []),
    ...s.failed,
    ...(p?.failed ?? []),
    ...(pay?.failed ?? []),
    ...(srv?.failed ?? []),
    ...(up?.failed ?? []),
    ...(st?.failed ?? []),
    ...(by?.failed ?? []),
  ];

  if (opts.json) {
    const json = {
      date: date.toISOString(),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      cpus: cpu,
      config: calls ? cfg : null,
      results: calls?.results ?? null,
      targets: calls?.targets.map((t) => ({ ...t, value: Number.isFinite(t.value) ? t.value : null })) ?? null,
      scheduling: { reps: sched.reps, ...s.json },
      process: p?.json ?? null,
      payload: pay?.json ?? null,
      server: srv?.json ?? null,
      startup: up?.json ?? null,
      stream: st?.json ?? null,
      bytes: by?.json ?? null,
    };
    writeFileSync(opts.json, JSON.stringify(json, null, 2) + "\n");
    process.stderr.write(`bench: wrote ${opts.json}\n`);
  }

  if (wrong.length) console.error(`\nbench: ERROR: wrong results from ${wrong.join(", ")}`);
  if (failed.length) console.error(`bench: ERROR: ${failed.join(", ")} failed while running (see notes above)`);
  process.exitCode = wrong.length || failed.length ? 1 : 0;
}

// Task modules are imported inside pool workers; if anything ever imports this
// file from a worker thread, do nothing there.
if (isMainThread) {
  main().catch((err) => {
    console.error(err?.stack ?? err);
    process.exit(1);
  });
}
