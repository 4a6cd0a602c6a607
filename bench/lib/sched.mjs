// The scheduling workloads of `node bench/run.mjs`, parent side: runs each
// job in a fresh child process (bench/lib/sched-child.mjs) per repetition,
// the jobs taking turns rep by rep as the pools of the main table do, and
// renders the tables and targets from the medians.
//
//   random-load         skewed task durations (a few long calls among many
//                       short ones), a bounded window in flight: makespan
//                       against the ideal, and per-call latency
//   random-load-loaded  the same while a busy loop in another process keeps
//                       one core occupied (bench/lib/hog.mjs)
//   dispatcher-scaling  tiny-call throughput over thread counts, for each way
//                       of placing calls and of waiting for answers
//   cpu-bound           bursts of ~1 ms calls in the user's shape, on every
//                       runtime installed (bench/lib/cpu-user.mjs)
import { fileURLToPath } from "node:url";
import { median, percentiles, fmtInt, fmtUs, fmtRatio, renderTable } from "./stats.mjs";
import { superviseChild } from "./supervise.mjs";
import { addTarget, formatTargets } from "./targets.mjs";
import { randomPlan } from "./workloads.mjs";
import { calibrateWork } from "./busy.mjs";
import { startHog } from "./hog.mjs";
import { RANDOM_POOLS, SCALING_CONFIGS } from "./sched-pools.mjs";
import { cpuUserConfig, cpuUserLoad } from "./cpu-user.mjs";

export const SCHED_WORKLOADS = ["random-load", "random-load-loaded", "dispatcher-scaling", "cpu-bound"];

const CHILD = fileURLToPath(new URL("./sched-child.mjs", import.meta.url));

/**
 * Sizes of the workloads from the command line's options (`o`, see
 * bench/run.mjs's usage text); undefined values take the defaults.
 * The defaults keep `npm run bench` under ~6 minutes on the 2-vCPU VM, with
 * other processes using 1.2-1.5 of its 2 cores: the main table alone took
 * 3 min 33 s; adding these two workloads at 3 reps, 3,000 random-load calls
 * and 50,000 tiny calls (10,000 warm-up) per scaling cell, 5 min 34 s and
 * 5 min 55 s; with 30,000 (5,000 warm-up), 4 min 12 s. Most of a scaling
 * cell's time is starting its process and pool (~1.6 s of ~2.1 s).
 */
export function schedConfig(o) {
  const quick = o.quick;
  const randomCalls = o.randomCalls ?? (quick ? 600 : 3_000);
  const scalingCalls = o.scalingCalls ?? (quick ? 10_000 : 30_000);
  return {
    reps: o.schedReps ?? (quick ? 1 : 3),
    timeoutSec: o.timeout,
    stallSec: o.stall,
    random: {
      threads: o.threads,
      calls: randomCalls,
      window: o.randomWindow ?? 64,
      seed: o.randomSeed ?? 20261202,
      shortUs: 10,
      longUs: 5_000,
      longFraction: 0.02,
      warmupCalls: Math.min(randomCalls, quick ? 200 : 600),
      itersPerUs: undefined, // calibrated when the workload runs
    },
    scaling: {
      threads: o.scalingThreads ?? [1, 2, 4],
      calls: scalingCalls,
      window: o.window,
      warmupCalls: Math.min(scalingCalls, 5_000),
    },
    cpuUser: cpuUserConfig(o),
  };
}

/** Runs the jobs `reps` times, each job in a fresh child, jobs taking turns rep by rep. */
async function runJobs(jobs, reps, sc) {
  const results = new Map(jobs.map((j) => [j.id, []]));
  const broken = new Set();
  for (let rep = 1; rep <= reps; rep++) {
    for (const job of jobs) {
      if (broken.has(job.id)) continue; // failed once: don't retry
      process.stderr.write(`bench: ${job.workload} rep ${rep}/${reps}: ${job.label} x${job.threads}\n`);
      const r = await superviseChild(CHILD, [JSON.stringify(job.job)], `${job.label} x${job.threads}`, sc, (how) => ({
        status: "error",
        error: how,
        mismatches: 0,
      }));
      results.get(job.id).push(r);
      if (r.status !== "ok") broken.add(job.id);
    }
  }
  return results;
}

/** Status, errors and wrong results of one job's reps. */
function health(reps) {
  const bad = reps.find((r) => r.status !== "ok");
  const mismatches = reps.reduce((n, r) => n + (r.mismatches ?? 0), 0);
  const firstMismatch = reps.find((r) => r.firstMismatch)?.firstMismatch ?? null;
  return { status: bad ? bad.status : "ok", error: bad ? bad.error : null, mismatches, firstMismatch };
}

function noteOf(label, h) {
  const notes = [];
  if (h.status !== "ok") notes.push(`${label}: ${h.status === "unavailable" ? "NOT AVAILABLE" : "FAILED"}: ${h.error}`);
  if (h.mismatches > 0) {
    notes.push(
      `${label}: ${h.mismatches} WRONG RESULTS; first in ${h.firstMismatch?.workload}: call ` +
        `${h.firstMismatch?.call}: ${h.firstMismatch?.what}`,
    );
  }
  return notes;
}

// ---- random-load -----------------------------------------------------------------

/**
 * The schedule a perfect pool would reach on the random-load workload: one
 * queue in submission order, `threads` workers taking the oldest call the
 * moment they are free, no cost per call, calls submitted as earlier ones
 * settle (`window` in flight). Returns { makespanMs, p50, p99 } (µs) for
 * the durations `us`: the reference for the measured rows, since with a
 * window much larger than `threads` most of a call's latency is its wait
 * in the queue, whatever the pool.
 */
export function idealQueue(us, threads, window) {
  const n = us.length;
  const freeAt = new Float64Array(threads);
  const inFlight = []; // finish times of the calls in flight, ascending
  const lat = new Float64Array(n);
  let last = 0;
  for (let i = 0; i < n; i++) {
    const submit = i < window ? 0 : inFlight.shift(); // the earliest finish frees the window
    let w = 0;
    for (let k = 1; k < threads; k++) if (freeAt[k] < freeAt[w]) w = k;
    const finish = Math.max(submit, freeAt[w]) + us[i];
    freeAt[w] = finish;
    lat[i] = finish - submit;
    if (finish > last) last = finish;
    let at = inFlight.length;
    while (at > 0 && inFlight[at - 1] > finish) at--;
    inFlight.splice(at, 0, finish);
  }
  const [p50, p99] = percentiles(lat, [50, 99]);
  return { makespanMs: last / 1000, p50, p99 };
}

/** random-load, or with `loaded` random-load-loaded: the same beside a busy loop. */
async function randomLoad(cfg, sc, loaded = false) {
  const name = loaded ? "random-load-loaded" : "random-load";
  // Calibrated before the busy loop starts: the durations are the same in both.
  const rc = { ...cfg.random, itersPerUs: calibrateWork() };
  const plan = randomPlan({
    calls: rc.calls,
    seed: rc.seed,
    shortUs: rc.shortUs,
    longUs: rc.longUs,
    longFraction: rc.longFraction,
  });
  let totalUs = 0;
  for (const us of plan.us) totalUs += us;
  const idealMs = totalUs / 1000 / rc.threads;
  const perfect = idealQueue(plan.us, rc.threads, rc.window);
  process.stderr.write(
    `bench: ${name}: ${fmtInt(rc.calls)} calls (${plan.long} of ${fmtUs(rc.longUs / 1000)} ms, the ` +
      `rest ${rc.shortUs} µs), ` +
      `${rc.window} in flight, ${rc.threads} threads; work() runs ${rc.itersPerUs.toFixed(1)} rounds/µs here\n`,
  );
  const jobs = RANDOM_POOLS.map((row) => ({
    id: row.key,
    workload: name,
    label: row.label,
    threads: rc.threads,
    job: { kind: "random", row: row.key, threads: rc.threads, cfg: rc },
  }));
  const hog = loaded ? startHog() : null;
  let runs;
  try {
    runs = await runJobs(jobs, cfg.reps, sc);
  } finally {
    await hog?.stop();
  }

  const summary = {};
  for (const row of RANDOM_POOLS) {
    const reps = runs.get(row.key);
    const ok = reps.filter((r) => r.random);
    const pick = (f) => median(ok.map((r) => f(r.random)));
    summary[row.key] = {
      key: row.key,
      label: row.label,
      ...health(reps),
      reps: ok.map((r) => r.random),
      topology: reps.find((r) => r.topology)?.topology ?? null,
      makespanMs: pick((x) => x.makespanMs),
      p50: pick((x) => x.p50),
      p99: pick((x) => x.p99),
      workMs: pick((x) => x.workUs / 1000),
      ownCores: median(ok.map((r) => r.noise?.ownCores)),
      foreignCores: median(ok.map((r) => r.noise?.foreignCores)),
    };
  }

  const steal = summary.steal;
  const rr = summary.roundRobin;
  const header = [
    [
      "pool",
      "makespan ms",
      "x ideal",
      "p50 µs",
      "p99 µs",
      "p99 / stealing's",
      "work in tasks ms",
      "pool CPU (cores)",
      "other load (cores)",
    ],
  ];
  const cores = (v) => (Number.isFinite(v) ? v.toFixed(2) : "-");
  const rows = [
    [
      "(one queue, no overhead)",
      perfect.makespanMs.toFixed(1),
      fmtRatio(perfect.makespanMs / idealMs),
      fmtUs(perfect.p50),
      fmtUs(perfect.p99),
      fmtRatio(perfect.p99 / steal.p99),
      "-",
      "-",
      "-",
    ],
  ];
  const notes = [];
  for (const row of RANDOM_POOLS) {
    const s = summary[row.key];
    notes.push(...noteOf(row.label, s));
    if (!s.reps.length) {
      rows.push([
        row.label,
        s.status === "unavailable" ? "NOT AVAILABLE" : "FAILED",
        "-",
        "-",
        "-",
        "-",
        "-",
        "-",
        "-",
      ]);
      continue;
    }
    const label = row.label + (s.mismatches > 0 ? " (WRONG RESULTS)" : s.status !== "ok" ? " (FAILED)" : "");
    rows.push([
      label,
      s.makespanMs.toFixed(1),
      fmtRatio(s.makespanMs / idealMs),
      fmtUs(s.p50),
      fmtUs(s.p99),
      fmtRatio(s.p99 / steal.p99),
      s.workMs.toFixed(1),
      cores(s.ownCores),
      cores(s.foreignCores),
    ]);
  }

  const targets = [];
  addTarget(
    targets,
    `${name} p99: stealing >= 2x better than roundRobin`,
    rr.p99 / steal.p99,
    2,
    ">=",
    `${fmtUs(steal.p99)} vs ${fmtUs(rr.p99)} µs`,
  );
  addTarget(
    targets,
    `${name} makespan: stealing <= 1.10 x ideal`,
    steal.makespanMs / idealMs,
    1.1,
    "<=",
    `${Number.isFinite(steal.makespanMs) ? steal.makespanMs.toFixed(1) : "-"} vs ${idealMs.toFixed(1)} ms`,
  );

  const out = [];
  out.push(
    `${name}: ${fmtInt(rc.calls)} calls, ${rc.window} in flight (sliding window), ${rc.threads} threads; ` +
      `durations from seed ${rc.seed}: ${plan.long} calls of ${rc.longUs / 1000} ms, ` +
      `${rc.calls - plan.long} of ${rc.shortUs} µs, ` +
      "the same sequence for every pool",
  );
  if (loaded)
    out.push(
      "  LOADED: a busy loop in another process (node -e) kept one core occupied for all of this workload's reps",
    );
  out.push(
    `  the task runs work(i, rounds): a fixed loop calibrated here at ${rc.itersPerUs.toFixed(1)} rounds/µs ` +
      "(fastest of 30 runs, i.e. on an undisturbed core); the same body in every pool",
  );
  out.push(
    `  ideal makespan = total work / threads = ${(totalUs / 1000).toFixed(1)} ms / ${rc.threads} = ` +
      `${idealMs.toFixed(1)} ms; ` +
      "latency = submission to settling of each call; medians of " +
      `${cfg.reps} rep(s), each pool in a fresh child process per rep (warm-up: ` +
      `${fmtInt(rc.warmupCalls)} calls, another seed)`,
  );
  out.push(
    "  (one queue, no overhead) = the schedule of a perfect pool: the workers take the oldest call " +
      "the moment they are free," +
      " at no cost per call; with many more calls in flight than threads, most of any pool's " +
      "latency is this wait in the queue",
  );
  out.push(
    "  work in tasks = the loop's time measured inside the tasks (more than total work when other " +
      "threads took the cores);" +
      " pool CPU = CPU time of the pool's process (host and workers) over the makespan; other load " +
      "= CPU used by other processes meanwhile",
  );
  out.push("");
  out.push(renderTable(header, rows));
  for (const n of notes) out.push(`note: ${n.replace(/\n/g, "\n      ")}`);
  out.push("per-rep makespan ms / p99 µs:");
  for (const row of RANDOM_POOLS) {
    const s = summary[row.key];
    if (s.reps.length) {
      out.push(
        `  ${row.label}: [${s.reps.map((x) => x.makespanMs.toFixed(1)).join(", ")}] / ` +
          `[${s.reps.map((x) => fmtUs(x.p99)).join(", ")}]`,
      );
    }
  }
  out.push("");
  out.push(
    ...formatTargets(targets, steal).map((l, i) => (i === 0 ? `targets (${name}, knitting-native stealing):` : l)),
  );
  return {
    lines: out,
    json: {
      config: rc,
      idealMs,
      totalWorkMs: totalUs / 1000,
      longCalls: plan.long,
      oneQueue: perfect,
      results: summary,
      targets,
    },
    failed: Object.values(summary)
      .filter((s) => s.status === "error")
      .map((s) => s.label),
    wrong: Object.values(summary)
      .filter((s) => s.mismatches > 0)
      .map((s) => `${s.label} (${s.mismatches} mismatches)`),
  };
}

// ---- dispatcher-scaling ----------------------------------------------------------

async function dispatcherScaling(cfg, sc) {
  const dc = cfg.scaling;
  const jobs = [];
  for (const threads of dc.threads) {
    for (const row of SCALING_CONFIGS) {
      jobs.push({
        id: `${row.key}/${threads}`,
        workload: "dispatcher-scaling",
        label: row.label,
        threads,
        job: { kind: "scaling", row: row.key, threads, cfg: dc },
      });
    }
  }
  const runs = await runJobs(jobs, cfg.reps, sc);

  const cell = {};
  const notes = [];
  for (const job of jobs) {
    const reps = runs.get(job.id);
    const h = health(reps);
    notes.push(...noteOf(`${job.label} x${job.threads}`, h));
    const ok = reps.filter((r) => r.tiny);
    cell[job.id] = {
      ...h,
      callsPerSec: median(ok.map((r) => r.tiny.callsPerSec)),
      perRep: ok.map((r) => r.tiny.callsPerSec),
      foreignCores: median(ok.map((r) => r.noise?.foreignCores)),
    };
  }
  const base = SCALING_CONFIGS[0].key;
  const th = (t) => `${t} thread${t === 1 ? "" : "s"}`;
  const header = [
    ["", ["tiny calls/s", dc.threads.length], [`x ${base}`, dc.threads.length]],
    ["config", ...dc.threads.map(th), ...dc.threads.map(th)],
  ];
  const rows = SCALING_CONFIGS.map((row) => {
    const vals = dc.threads.map((t) => cell[`${row.key}/${t}`]);
    const mark = vals.some((c) => c.mismatches > 0)
      ? " (WRONG RESULTS)"
      : vals.some((c) => c.status !== "ok")
        ? " (FAILED)"
        : "";
    return [
      row.label + mark,
      ...vals.map((c) => fmtInt(c.callsPerSec)),
      ...dc.threads.map((t) => fmtRatio(cell[`${row.key}/${t}`].callsPerSec / cell[`${base}/${t}`].callsPerSec)),
    ];
  });

  const out = [];
  out.push(
    `dispatcher-scaling: ${fmtInt(dc.calls)} x add([i, 1]), ${fmtInt(dc.window)} in flight, for ` +
      `${dc.threads.join(", ")} threads; medians of ${cfg.reps} rep(s), each cell in a fresh child process per rep ` +
      `(warm-up: ${fmtInt(dc.warmupCalls)} calls)`,
  );
  out.push("  stallFreeLoops: idle drain passes before the host sleeps on the doorbell (default: adaptive, 2 to 32)");
  if (dc.threads.includes(1)) {
    out.push(
      "  with 1 thread the default is private lanes with the per-thread dispatcher: the first two rows then run" +
        " the same pool, and their difference is noise",
    );
  }
  out.push("");
  out.push(renderTable(header, rows));
  for (const n of notes) out.push(`note: ${n.replace(/\n/g, "\n      ")}`);
  out.push("per-rep calls/s:");
  for (const row of SCALING_CONFIGS) {
    const per = dc.threads.map((t) => `${th(t)} [${cell[`${row.key}/${t}`].perRep.map(fmtInt).join(", ")}]`);
    out.push(`  ${row.label}: ${per.join("; ")}`);
  }
  const load = median(Object.values(cell).map((c) => c.foreignCores));
  if (Number.isFinite(load))
    out.push(`  (other processes used ${load.toFixed(2)} cores meanwhile, median over the cells)`);
  return {
    lines: out,
    json: { config: dc, results: cell },
    failed: jobs.filter((j) => cell[j.id].status === "error").map((j) => `${j.label} x${j.threads}`),
    wrong: jobs
      .filter((j) => cell[j.id].mismatches > 0)
      .map((j) => `${j.label} x${j.threads} (${cell[j.id].mismatches} mismatches)`),
  };
}

/**
 * Runs the scheduling workloads named in `which` (of SCHED_WORKLOADS) with
 * `cfg` from schedConfig(); returns { lines, json, failed, wrong }.
 */
export async function runScheduling(which, cfg) {
  const sc = { timeoutSec: cfg.timeoutSec, stallSec: cfg.stallSec };
  const lines = [];
  const json = {};
  const failed = [];
  const wrong = [];
  const all = [
    ["random-load", randomLoad],
    ["random-load-loaded", (c, s) => randomLoad(c, s, true)],
    ["dispatcher-scaling", dispatcherScaling],
    ["cpu-bound", cpuUserLoad],
  ];
  for (const [name, run] of all) {
    if (!which.includes(name)) continue;
    const r = await run(cfg, sc);
    lines.push("", ...r.lines);
    json[name] = r.json;
    failed.push(...r.failed);
    wrong.push(...r.wrong);
  }
  return { lines, json, failed, wrong };
}
