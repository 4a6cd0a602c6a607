// One child process of the process workload of `node bench/run.mjs`: runs
// one pool for one rep (warm-up, tiny calls, sequential latency) and sends
// the result to the parent (bench/lib/proc.mjs) over IPC, with the
// phase/progress/result messages its watchdog (bench/lib/supervise.mjs) reads.
//
//   node --expose-gc bench/lib/proc-child.mjs '<job as JSON>'
import { LoadError } from "./sched-pools.mjs";
import { PROC_POOLS, createProcRow } from "./proc-pools.mjs";
import { tinyCalls, sequential, foreignLoad, warmUp } from "./workloads.mjs";
import { jobRecord, closePool, runChild, firstLines } from "./child-job.mjs";

const gc = typeof globalThis.gc === "function" ? globalThis.gc : () => {};

async function runJob(job, phase) {
  const row = PROC_POOLS.find((r) => r.key === job.row);
  const { cfg } = job;
  const log = (s) => process.stderr.write(`[${row.label}] ${s}\n`);
  const { result, fail, note } = jobRecord({ row: row.key }, log);

  phase("load");
  let pool;
  try {
    pool = await createProcRow(row, cfg.workers);
  } catch (err) {
    fail(err instanceof LoadError ? "unavailable" : "error", `failed to start: ${firstLines(err.message, 4)}`);
    return result;
  }

  try {
    phase("warmup");
    const warm = { calls: cfg.warmupCalls, window: cfg.window, seq: cfg.warmupSeq, ms: cfg.warmupMs, gc };
    await warmUp(pool.add, warm, note);
    phase("tiny calls");
    const fl = foreignLoad();
    const t = note(await tinyCalls(pool.add, cfg.calls, cfg.window), "tiny calls");
    phase("sequential");
    const s = note(await sequential(pool.add, cfg.seq), "sequential");
    result.noise = fl.stop();
    result.tiny = { callsPerSec: t.callsPerSec, ns: t.ns };
    result.seq = { p50: s.p50, p99: s.p99 };
    log(
      `tiny calls: ${Math.round(t.callsPerSec).toLocaleString("en-US")} calls/s (${(t.ns / 1e6).toFixed(0)} ms); ` +
        `sequential p50 ${s.p50.toFixed(1)} µs, p99 ${s.p99.toFixed(1)} µs (${cfg.seq} calls)`,
    );
  } catch (err) {
    fail("error", `failed while running: ${firstLines(err.stack ?? err, 6)}`);
  }

  phase("shutdown");
  await closePool(pool, result, fail);
  return result;
}

runChild("proc-child.mjs", runJob, (job) => ({ row: job.row }));
