// One child process of the scheduling workloads of `node bench/run.mjs`:
// runs one job (one pool, one thread count, one rep) and sends the result to
// the parent (bench/lib/sched.mjs) over IPC, with the phase/progress/result
// messages its watchdog (bench/lib/supervise.mjs) reads.
//
//   node --expose-gc bench/lib/sched-child.mjs '<job as JSON>'
//
// Jobs (job.kind):
//   random   job.row of RANDOM_POOLS: warm up, then the random-load workload
//   scaling  job.row of SCALING_CONFIGS: warm up, then tiny calls
import { RANDOM_POOLS, SCALING_CONFIGS, LoadError, createKnitting, createPeer, checkTopology } from "./sched-pools.mjs";
import { tinyCalls, randomPlan, randomLoad, foreignLoad, warmUp } from "./workloads.mjs";
import { jobRecord, closePool, runChild, firstLines } from "./child-job.mjs";

const gc = typeof globalThis.gc === "function" ? globalThis.gc : () => {};

/** The random-load calls as rounds of work(): the plan's µs at the calibrated speed. */
function planIters(cfg, seed, calls) {
  const plan = randomPlan({ calls, seed, shortUs: cfg.shortUs, longUs: cfg.longUs, longFraction: cfg.longFraction });
  return Array.from(plan.us, (us) => Math.round(us * cfg.itersPerUs));
}

async function runJob(job, phase) {
  const rows = job.kind === "random" ? RANDOM_POOLS : SCALING_CONFIGS;
  const row = rows.find((r) => r.key === job.row);
  const cfg = job.cfg;
  const name = `${row.label} x${job.threads}`;
  const log = (s) => process.stderr.write(`[${name}] ${s}\n`);
  const { result, fail, note } = jobRecord({ kind: job.kind, row: row.key, threads: job.threads, topology: null }, log);

  phase("load");
  let pool;
  try {
    pool = row.peer ? await createPeer(row, job.threads) : await createKnitting(job.threads, row.options);
  } catch (err) {
    fail(err instanceof LoadError ? "unavailable" : "error", `failed to start: ${firstLines(err.message, 4)}`);
    return result;
  }
  if (!row.peer) {
    result.topology = pool.topology;
    const wrong = checkTopology(row, job.threads, pool.topology);
    if (wrong !== null) {
      fail("error", `wrong pool topology: ${wrong}`);
      await pool.close().catch(() => {});
      return result;
    }
  }

  try {
    if (job.kind === "random") {
      phase("warmup");
      // gc() before the warm-up, never between it and the run (workloads.mjs, warmUp).
      gc();
      // Another seed: the same mix of short and long calls, not the measured sequence.
      note(
        await randomLoad(pool.work, planIters(cfg, cfg.seed + 1, cfg.warmupCalls), cfg.window),
        "warm-up (random load)",
      );
      const iters = planIters(cfg, cfg.seed, cfg.calls);
      phase("random load");
      const fl = foreignLoad();
      const r = note(await randomLoad(pool.work, iters, cfg.window), "random load");
      result.noise = fl.stop();
      result.random = { makespanMs: r.makespanMs, p50: r.p50, p99: r.p99, max: r.max, workUs: r.workUs };
      log(
        `random load: makespan ${r.makespanMs.toFixed(1)} ms, latency p50 ${r.p50.toFixed(1)} µs, ` +
          `p99 ${r.p99.toFixed(1)} µs, ${(r.workUs / 1000).toFixed(1)} ms of work measured in the tasks` +
          (result.noise ? `; other processes used ${result.noise.foreignCores.toFixed(2)} cores meanwhile` : ""),
      );
    } else {
      phase("warmup");
      const warm = { calls: cfg.warmupCalls, window: cfg.window, seq: 0, ms: 1_000, gc };
      await warmUp(pool.add, warm, note);
      phase("tiny calls");
      const fl = foreignLoad();
      const t = note(await tinyCalls(pool.add, cfg.calls, cfg.window), "tiny calls");
      result.noise = fl.stop();
      result.tiny = { callsPerSec: t.callsPerSec, ns: t.ns };
      log(`tiny calls: ${Math.round(t.callsPerSec).toLocaleString("en-US")} calls/s (${(t.ns / 1e6).toFixed(0)} ms)`);
    }
  } catch (err) {
    fail("error", `failed while running: ${firstLines(err.stack ?? err, 6)}`);
  }

  phase("shutdown");
  await closePool(pool, result, fail);
  return result;
}

runChild("sched-child.mjs", runJob, (job) => ({ kind: job.kind, row: job.row, threads: job.threads }));
