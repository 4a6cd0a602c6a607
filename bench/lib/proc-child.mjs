// One child process of the process workload of `node bench/run.mjs`: runs
// one pool for one rep (warm-up, tiny calls, sequential latency) and sends
// the result to the parent (bench/lib/proc.mjs) over IPC, with the
// phase/progress/result messages its watchdog (bench/lib/supervise.mjs) reads.
//
//   node --expose-gc bench/lib/proc-child.mjs '<job as JSON>'
import { isMainThread } from "node:worker_threads";
import { LoadError } from "./sched-pools.mjs";
import { PROC_POOLS, createProcRow } from "./proc-pools.mjs";
import { progress, tinyCalls, sequential, foreignLoad } from "./workloads.mjs";

const gc = typeof globalThis.gc === "function" ? globalThis.gc : () => {};
const firstLines = (s, n) => String(s).split("\n").slice(0, n).join("\n");

async function runJob(job, phase) {
  const row = PROC_POOLS.find((r) => r.key === job.row);
  const { cfg } = job;
  const log = (s) => process.stderr.write(`[${row.label}] ${s}\n`);
  const result = { row: row.key, status: "ok", error: null, mismatches: 0, firstMismatch: null };
  const fail = (status, msg) => {
    result.status = status;
    result.error = msg;
    log(msg);
  };
  const note = (r, workload) => {
    if (r.mismatches > 0) {
      result.mismatches += r.mismatches;
      const f = r.firstMismatch;
      result.firstMismatch ??= { workload, call: f.i, what: `returned ${JSON.stringify(f.got)}, expected ${f.expected}` };
      log(`ERROR: ${r.mismatches} wrong results in ${workload}; first: call ${f.i}: ${result.firstMismatch.what}`);
    }
    return r;
  };

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
    note(await tinyCalls(pool.add, cfg.warmupCalls, cfg.window), "warm-up (tiny calls)");
    note(await sequential(pool.add, cfg.warmupSeq), "warm-up (sequential)");
    gc();
    phase("tiny calls");
    const fl = foreignLoad();
    const t = note(await tinyCalls(pool.add, cfg.calls, cfg.window), "tiny calls");
    gc();
    phase("sequential");
    const s = note(await sequential(pool.add, cfg.seq), "sequential");
    result.noise = fl.stop();
    result.tiny = { callsPerSec: t.callsPerSec, ns: t.ns };
    result.seq = { p50: s.p50, p99: s.p99 };
    log(`tiny calls: ${Math.round(t.callsPerSec).toLocaleString("en-US")} calls/s (${(t.ns / 1e6).toFixed(0)} ms); ` +
      `sequential p50 ${s.p50.toFixed(1)} µs, p99 ${s.p99.toFixed(1)} µs (${cfg.seq} calls)`);
  } catch (err) {
    fail("error", `failed while running: ${firstLines(err.stack ?? err, 6)}`);
  }

  phase("shutdown");
  try {
    await pool.close();
  } catch (err) {
    if (result.status === "ok") fail("error", `shutdown failed: ${firstLines(err.stack ?? err, 6)}`);
  }
  return result;
}

async function childMain(job) {
  const send = (msg) => new Promise((res) => process.send(msg, () => res()));
  const heartbeat = setInterval(() => {
    process.send({ type: "progress", done: progress.done, total: progress.total });
  }, 1000);
  let result;
  try {
    result = await runJob(job, (p) => {
      progress.done = progress.total = 0;
      process.send({ type: "phase", phase: p });
    });
  } catch (err) {
    result = { row: job.row, status: "error", error: String(err.stack ?? err), mismatches: 0 };
  }
  clearInterval(heartbeat);
  await send({ type: "result", result });
  process.exit(0); // a broken pool's stray handle must not keep us alive
}

if (isMainThread) {
  if (typeof process.send !== "function") {
    console.error("proc-child.mjs is started by `node bench/run.mjs`");
    process.exit(2);
  }
  childMain(JSON.parse(process.argv[2])).catch((err) => {
    console.error(err?.stack ?? err);
    process.exit(1);
  });
}
