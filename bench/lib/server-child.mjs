// One child process of the server workload of `node bench/run.mjs`
// (bench/lib/server.mjs): either tiny-call throughput of one pool with
// `stats` on or off, or an HTTP-style open-loop workload against one
// `maxQueue` setting. Sends its result over IPC like the other children.
//
//   node --expose-gc bench/lib/server-child.mjs '<job as JSON>'
import { tinyCalls, foreignLoad, progress } from "./workloads.mjs";
import { percentiles } from "./stats.mjs";
import { jobRecord, runChild, firstLines } from "./child-job.mjs";

const gc = typeof globalThis.gc === "function" ? globalThis.gc : () => {};

async function openPool(options) {
  const { createPool } = await import("../../index.mjs");
  const tasks = await import("../tasks.mjs");
  const pool = createPool(options)({ add: tasks.add, spin: tasks.spin });
  await pool.ready;
  return pool;
}

/** Tiny calls with metrics on or off. */
async function statsJob(job, phase, result, fail, note) {
  const { cfg } = job;
  phase("load");
  const pool = await openPool({ threads: cfg.threads, stats: job.stats });
  const add = (a, b) => pool.call.add([a, b]);
  try {
    phase("warmup");
    note(await tinyCalls(add, cfg.warmupCalls, cfg.window), "warm-up");
    gc();
    phase("tiny calls");
    const fl = foreignLoad();
    const t = note(await tinyCalls(add, cfg.calls, cfg.window), "tiny calls");
    result.noise = fl.stop();
    result.callsPerSec = t.callsPerSec;
    if (job.stats) result.poolStats = pool.stats();
  } catch (err) {
    fail("error", `failed while running: ${firstLines(err.stack ?? err, 6)}`);
  }
  await pool.shutdown();
}

/**
 * Requests arrive at a fixed rate (open loop: whether earlier ones were
 * answered or not), each a call that busy-spins `serviceMs`, for
 * `durationMs`. Records which were refused (KNT_QUEUE_FULL) and the latency
 * of the rest, from when each was due to its answer.
 */
async function shedJob(job, phase, result, fail) {
  const { cfg } = job;
  phase("load");
  const options = { threads: cfg.threads };
  if (job.maxQueue !== null) options.maxQueue = job.maxQueue;
  const pool = await openPool(options);
  try {
    phase("requests");
    const perMs = cfg.rate / 1000;
    const latencies = [];
    let offered = 0;
    let shed = 0;
    let otherErrors = 0;
    let peakQueue = 0;
    const pending = [];
    const fl = foreignLoad();
    const t0 = performance.now();
    progress.total = Math.round(perMs * cfg.durationMs);
    await new Promise((resolve) => {
      const tick = () => {
        const now = performance.now();
        const due = Math.min(progress.total, Math.floor((now - t0) * perMs));
        while (offered < due) {
          const i = offered++;
          // From when it was due: a late tick must not hide the wait.
          const at = t0 + i / perMs;
          pending.push(
            pool.call.spin([i, cfg.serviceMs]).then(
              () => {
                latencies.push(performance.now() - at);
                progress.done++;
              },
              (err) => {
                progress.done++;
                if (err.code === "KNT_QUEUE_FULL") shed++;
                else otherErrors++;
              },
            ),
          );
        }
        peakQueue = Math.max(peakQueue, pool.queueSize);
        if (offered < progress.total) setImmediate(tick);
        else resolve();
      };
      tick();
    });
    await Promise.all(pending);
    const wallMs = performance.now() - t0;
    result.noise = fl.stop();
    const [p50, p99] = latencies.length ? percentiles(latencies, [50, 99]) : [NaN, NaN];
    Object.assign(result, {
      offered,
      shed,
      otherErrors,
      answered: latencies.length,
      peakQueue,
      wallMs,
      p50,
      p99,
      max: latencies.length ? Math.max(...latencies) : NaN,
    });
    if (otherErrors > 0) fail("error", `${otherErrors} calls failed with another error than KNT_QUEUE_FULL`);
  } catch (err) {
    fail("error", `failed while running: ${firstLines(err.stack ?? err, 6)}`);
  }
  await pool.shutdown();
}

async function runJob(job, phase) {
  const label = job.kind === "stats" ? `stats ${job.stats ? "on" : "off"}` : `maxQueue ${job.maxQueue}`;
  const log = (s) => process.stderr.write(`[${label}] ${s}\n`);
  const { result, fail, note } = jobRecord({ kind: job.kind }, log);
  if (job.kind === "stats") await statsJob(job, phase, result, fail, note);
  else await shedJob(job, phase, result, fail);
  return result;
}

runChild("server-child.mjs", runJob, (job) => ({ kind: job.kind }));
