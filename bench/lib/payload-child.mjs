// One child process of the payload sweep (`node bench/run.mjs --only-workload
// payload`): one pool, one repetition. Warms the pool up, measures tiny-call
// throughput and sequential latency, then echoes every cell of the sweep
// (kind x size) with a window of calls in flight, and sends the result to
// the parent (bench/lib/payload-sweep.mjs) with the phase/progress messages
// its watchdog reads.
//
//   node --expose-gc bench/lib/payload-child.mjs '<job as JSON>'
import { pathToFileURL } from "node:url";
import { REPORT_POOLS, LoadError, loadKnitting } from "./report-pools.mjs";
import { jobRecord, closePool, runChild, firstLines } from "./child-job.mjs";
import { tinyCalls, sequential, echoWindow, foreignLoad, warmUp } from "./workloads.mjs";
import { makeSweepCell, sizeLabel, windowFor } from "./payloads.mjs";

const gc = typeof globalThis.gc === "function" ? globalThis.gc : () => {};

async function runJob(job, phase) {
  const def =
    job.pool === "baseline"
      ? {
          key: "baseline",
          label: "knitting-native (baseline)",
          load: () => loadKnitting(pathToFileURL(job.baseline + "/")),
        }
      : REPORT_POOLS.find((p) => p.key === job.pool);
  const cfg = job.cfg;
  const log = (s) => process.stderr.write(`[${def.label}] ${s}\n`);
  const { result, fail, note } = jobRecord(
    { kind: "payload", key: def.key, label: def.label, rep: job.rep, checked: 0 },
    log,
  );
  phase("load");
  let pool;
  try {
    const make = await def.load();
    pool = make(cfg.threads);
    const r = await pool.add(1, 2);
    note({ mismatches: r === 3 ? 0 : 1, firstMismatch: { i: 0, expected: 3, got: r } }, "first call", 1);
  } catch (err) {
    fail(err instanceof LoadError ? "unavailable" : "error", `failed to start: ${firstLines(err.stack ?? err, 4)}`);
    if (pool) await pool.close().catch(() => {});
    return result;
  }
  const noise = (result.noise = {});
  result.cells = {};
  try {
    // gc() comes before a warm-up, never between it and the measured run
    // (workloads.mjs, warmUp).
    phase("warmup");
    const warm = { calls: cfg.warmupCalls, window: cfg.window, seq: cfg.warmupSeq, ms: cfg.warmupMs, gc };
    await warmUp(pool.add, warm, (r, what) => note(r, what, r.total ?? r.n));
    phase("tiny calls");
    let fl = foreignLoad();
    const t = note(await tinyCalls(pool.add, cfg.calls, cfg.window), "tiny calls", cfg.calls);
    noise.tiny = fl.stop();
    result.tiny = { callsPerSec: t.callsPerSec };
    phase("sequential");
    fl = foreignLoad();
    const s = note(await sequential(pool.add, cfg.seq), "sequential", cfg.seq);
    noise.seq = fl.stop();
    result.seq = { p50: s.p50, p90: s.p90, p99: s.p99, max: s.max };
    log(
      `tiny ${Math.round(t.callsPerSec).toLocaleString("en-US")} calls/s; ` +
        `sequential p50 ${s.p50.toFixed(2)} µs, p99 ${s.p99.toFixed(2)} µs`,
    );

    for (const kind of cfg.kinds) {
      for (const size of cfg.sizes) {
        const name = `${kind} ${sizeLabel(size)}`;
        const cell = makeSweepCell(kind, size);
        const window = windowFor(size, cfg.window);
        gc();
        phase(`${name} warm-up`);
        // The warm-up runs rounds of 2 x window calls for at least
        // cfg.warmMs: a pool whose path for this kind of value is JS (an
        // encoder, a decoder) is compiled by V8 only after some thousands of
        // calls, and one round of 2,000 calls measured the pool's cold code
        // for the first ~100 ms of a 250 ms cell (2026-12-03, Node 20.20).
        // Its last round sizes the measured run: about cfg.cellMs of calls
        // at that rate, so that slow pools and large values do not take
        // minutes and fast ones still run long enough to measure.
        const w = Math.max(2 * window, 8);
        const warmStart = performance.now();
        let wr;
        do {
          wr = note(await echoWindow(pool.echo, cell.values, cell.check, w, window), `${name} warm-up`, w);
        } while (performance.now() - warmStart < cfg.warmMs);
        const calls = Math.max(3 * window, 16, Math.min(2_000_000, Math.round((wr.callsPerSec * cfg.cellMs) / 1000)));
        phase(name);
        fl = foreignLoad();
        const e = note(await echoWindow(pool.echo, cell.values, cell.check, calls, window), name, calls);
        const nz = fl.stop();
        result.cells[`${kind}:${size}`] = {
          callsPerSec: e.callsPerSec,
          mbPerSec: (e.callsPerSec * cell.bytes) / 1e6,
          bytes: cell.bytes,
          calls,
          window,
          foreignCores: nz?.foreignCores ?? null,
        };
        log(
          `${name}: ${Math.round(e.callsPerSec).toLocaleString("en-US")} calls/s, ` +
            `${((e.callsPerSec * cell.bytes) / 1e6).toFixed(1)} MB/s (${calls} calls, ${window} in flight)`,
        );
      }
    }
  } catch (err) {
    fail("error", `failed while running: ${firstLines(err.stack ?? err, 6)}`);
  }
  phase("shutdown");
  await closePool(pool, result, fail);
  return result;
}

runChild("payload-child.mjs", runJob, (job) => ({ kind: "payload", key: job.pool }));
