// One child process of `node bench/run.mjs --report`: runs one job for one pool
// and sends the result to the parent (bench/report.mjs) over IPC, with the same
// phase/progress/result messages as bench/run.mjs's children, so the parent's
// watchdog can tell a slow pool from a stalled or hung one.
//
//   node --expose-gc bench/lib/report-child.mjs '<job as JSON>'
//
// Jobs (job.kind):
//   main     start, warm up, idle RSS + idle CPU, tiny calls (+ peak RSS),
//            sequential latency, payload sweep, CPU-bound scheduling
//   scaling  start with job.threads, warm up, tiny calls
//   startup  import the library, then time construction -> first call's result
import { REPORT_POOLS, LoadError } from "./report-pools.mjs";
import { jobRecord, runChild, firstLines } from "./child-job.mjs";
import { tinyCalls, sequential, echoWindow, cpuBound, idleCpu, rssSampler, sleep, foreignLoad } from "./workloads.mjs";
import { makePayloads } from "./payloads.mjs";

const hrtime = process.hrtime.bigint;
const gc = typeof globalThis.gc === "function" ? globalThis.gc : () => {};

async function runJob(job, phase) {
  const def = REPORT_POOLS.find((p) => p.key === job.pool);
  const cfg = job.cfg;
  const log = (s) => process.stderr.write(`[${def.label}${job.kind === "scaling" ? ` x${job.threads}` : ""}] ${s}\n`);
  const { result, fail, note } = jobRecord(
    { kind: job.kind, key: def.key, label: def.label, threads: job.threads, rep: job.rep, checked: 0 },
    log,
  );

  phase("load");
  let make;
  const l0 = hrtime();
  try {
    make = await def.load();
    result.loadMs = Number(hrtime() - l0) / 1e6;
  } catch (err) {
    fail(err instanceof LoadError ? "unavailable" : "error", `failed to load: ${firstLines(err.message, 4)}`);
    return result;
  }

  // ---- start-up: construction to the first call's result ----
  phase("start");
  let pool;
  const t0 = hrtime();
  try {
    pool = make(job.threads);
    const r = await pool.add(1, 2);
    result.startupMs = Number(hrtime() - t0) / 1e6;
    note({ mismatches: r === 3 ? 0 : 1, firstMismatch: { i: 0, expected: 3, got: r } }, "first call (add([1, 2]))", 1);
  } catch (err) {
    fail("error", `failed to start: ${firstLines(err.stack ?? err, 6)}`);
    if (pool) await pool.close().catch(() => {});
    return result;
  }

  try {
    if (job.kind !== "startup") await measure(job, cfg, pool, phase, log, note, result);
    // Let every worker finish starting before shutdown: terminating a piscina
    // worker while it was still loading its module (require of an ES module)
    // aborted the whole process once on Node 20.20 (V8 FATAL ERROR in
    // ModuleWrap::InstantiateSync).
    else await sleep(cfg.startupSettleMs);
  } catch (err) {
    fail("error", `failed while running: ${firstLines(err.stack ?? err, 6)}`);
  }

  phase("shutdown");
  const s0 = hrtime();
  try {
    await pool.close();
    result.shutdownMs = Number(hrtime() - s0) / 1e6;
  } catch (err) {
    if (result.status === "ok") fail("error", `shutdown failed: ${firstLines(err.stack ?? err, 6)}`);
  }
  return result;
}

/** The "main" and "scaling" jobs, after start-up. */
async function measure(job, cfg, pool, phase, log, note, result) {
  // CPU taken by other processes on the machine during each measured phase
  const noise = (result.noise = {});
  phase("warmup");
  note(await tinyCalls(pool.add, cfg.warmupCalls, cfg.window), "warm-up (tiny calls)", cfg.warmupCalls);
  note(await sequential(pool.add, cfg.warmupSeq), "warm-up (sequential)", cfg.warmupSeq);

  if (job.kind === "main") {
    // Idle: memory first (after a settle), then CPU over a longer quiet spell.
    phase("idle");
    gc();
    await sleep(cfg.idleSettleMs);
    result.idleRssBytes = process.memoryUsage().rss;
    const fl = foreignLoad();
    result.idleCpu = await idleCpu(cfg.idleMs);
    noise.idle = fl.stop();
    log(
      `idle: RSS ${(result.idleRssBytes / 2 ** 20).toFixed(1)} MiB, CPU ` +
        `${result.idleCpu.pctOfCore.toFixed(2)}% of a core`,
    );
  }

  gc();
  phase("tiny calls");
  const sampler = job.kind === "main" ? rssSampler(cfg.rssEveryMs) : null;
  let fl = foreignLoad();
  const t = note(await tinyCalls(pool.add, cfg.calls, cfg.window), "tiny calls", cfg.calls);
  noise.tiny = fl.stop();
  if (sampler) result.tinyRss = sampler.stop();
  result.tiny = { callsPerSec: t.callsPerSec, ns: t.ns };
  log(
    `tiny calls: ${Math.round(t.callsPerSec).toLocaleString("en-US")} calls/s (${(t.ns / 1e6).toFixed(0)} ms)` +
      (sampler
        ? `, peak RSS ${(result.tinyRss.peakBytes / 2 ** 20).toFixed(1)} MiB (${result.tinyRss.samples} samples)`
        : ""),
  );

  if (job.kind === "main") {
    gc();
    phase("sequential");
    fl = foreignLoad();
    const s = note(await sequential(pool.add, cfg.seq), "sequential", cfg.seq);
    noise.seq = fl.stop();
    result.seq = { p50: s.p50, p90: s.p90, p99: s.p99, max: s.max, mean: s.mean, n: s.n };
    log(`sequential: p50 ${s.p50.toFixed(2)} µs, p99 ${s.p99.toFixed(1)} µs`);

    result.payload = {};
    for (const p of makePayloads()) {
      phase(`payload ${p.label}`);
      note(
        await echoWindow(pool.echo, p.values, p.check, cfg.payloadWarmup, cfg.payloadWindow),
        `payload warm-up (${p.label})`,
        cfg.payloadWarmup,
      );
      gc();
      fl = foreignLoad();
      const e = note(
        await echoWindow(pool.echo, p.values, p.check, cfg.payloadCalls, cfg.payloadWindow),
        `payload ${p.label}`,
        cfg.payloadCalls,
      );
      noise[`payload ${p.key}`] = fl.stop();
      result.payload[p.key] = { callsPerSec: e.callsPerSec, mbPerSec: (e.callsPerSec * p.bytes) / 1e6, ns: e.ns };
      log(
        `payload ${p.label}: ${Math.round(e.callsPerSec).toLocaleString("en-US")} calls/s, ` +
          `${((e.callsPerSec * p.bytes) / 1e6).toFixed(1)} MB/s`,
      );
    }

    phase("cpu-bound warm-up");
    note(await cpuBound(pool.spin, cfg.cpuWarmup, cfg.cpuMs), "CPU-bound warm-up", cfg.cpuWarmup);
    gc();
    await sleep(50);
    phase("cpu-bound");
    fl = foreignLoad();
    const c = note(await cpuBound(pool.spin, cfg.cpuTasks, cfg.cpuMs), "CPU-bound", cfg.cpuTasks);
    noise.cpu = fl.stop();
    const idealMs = (cfg.cpuTasks * cfg.cpuMs) / job.threads;
    result.cpu = { makespanMs: c.makespanMs, idealMs, overheadPct: (c.makespanMs / idealMs - 1) * 100 };
    log(
      `CPU-bound: makespan ${c.makespanMs.toFixed(0)} ms vs ideal ${idealMs.toFixed(0)} ms ` +
        `(+${result.cpu.overheadPct.toFixed(1)}%)` +
        (noise.cpu ? `; other processes used ${noise.cpu.foreignCores.toFixed(2)} cores meanwhile` : ""),
    );
  }
}

runChild("report-child.mjs", runJob, (job) => ({ kind: job.kind, key: job.pool }));
