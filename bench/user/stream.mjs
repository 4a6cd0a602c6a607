// One process of the user-shaped streaming benchmark (bench/lib/stream-user.mjs
// starts one per pool per shape per rep on each runtime): a stream of `n`
// values from an async generator (bench/user/stream-gens.mjs), consumed on
// the host, which only counts the values (and for the binary shape adds up
// their byteLength).
//
//   <runtime> bench/user/stream.mjs '{"pool":"knitting","shape":"ints","n":1000000,"window":16384}'
//
// pool: "knitting" (createPool({ threads })({ ints, chunks }) over the task
// module stream-tasks.mjs, `for await (const v of pool.stream[shape](n, { window }))`;
// no window: the default), "piscina" (a MessageChannel per call, port2
// transferred in the task's argument, one postMessage per value, the host
// iterating events.on(port1, "message")) or "raw" (a bare worker posting
// each value to its parent; the host counts in its "message" listener).
// shape: "ints" (the integers 0..n-1) or "chunks" (n fresh 64 KiB Uint8Arrays).
// First a warm-up stream of `warmup` values of the same shape, then the
// measured one: wall ms from starting the stream to consuming its last value.
// Prints one JSON line: { pool, shape, n, window, wallMs, count, bytes }.
import { on } from "node:events";

const cfg = {
  pool: "knitting",
  shape: "ints",
  n: 1_000_000,
  warmup: 10_000,
  threads: 2,
  ...JSON.parse(process.argv[2] ?? "{}"),
};
const { CHUNK_BYTES } = await import("./stream-gens.mjs");

/** Counts one value; `bytes` only for the binary shape. */
function counter(n) {
  const c = { count: 0, bytes: 0, endedAt: 0 };
  c.add =
    cfg.shape === "chunks"
      ? (v) => {
          c.bytes += v.byteLength;
          if (++c.count === n) c.endedAt = performance.now();
        }
      : () => {
          if (++c.count === n) c.endedAt = performance.now();
        };
  return c;
}

async function knitting() {
  const { createPool } = await import("knitting-native");
  const tasks = await import("./stream-tasks.mjs");
  const pool = createPool({ threads: cfg.threads })(tasks);
  const options = cfg.window ? { window: cfg.window } : undefined;
  const run = async (n) => {
    const c = counter(n);
    const t0 = performance.now();
    for await (const v of pool.stream[cfg.shape](n, options)) c.add(v);
    return { ...c, wallMs: c.endedAt - t0 };
  };
  await pool.ready;
  await run(cfg.warmup);
  const r = await run(cfg.n);
  await pool.shutdown();
  return r;
}

async function piscina() {
  const { Piscina } = await import("piscina");
  const pool = new Piscina({
    filename: new URL("./stream-piscina-worker.mjs", import.meta.url).href,
    minThreads: cfg.threads,
    maxThreads: cfg.threads,
  });
  const run = async (n) => {
    const c = counter(n);
    const t0 = performance.now();
    const { port1, port2 } = new MessageChannel();
    const done = pool.run({ port: port2, shape: cfg.shape, n }, { transferList: [port2] });
    for await (const [v] of on(port1, "message")) {
      if (v === null) break;
      c.add(v);
    }
    port1.close();
    await done;
    return { ...c, wallMs: c.endedAt - t0 };
  };
  await run(cfg.warmup);
  const r = await run(cfg.n);
  await pool.destroy();
  return r;
}

async function raw() {
  const { Worker } = await import("node:worker_threads");
  const worker = new Worker(new URL("./stream-raw-worker.mjs", import.meta.url));
  const run = (n) =>
    new Promise((resolve, reject) => {
      const c = counter(n);
      const onMessage = (v) => {
        if (v !== null) return c.add(v);
        worker.off("message", onMessage);
        worker.off("error", reject);
        resolve({ ...c, wallMs: c.endedAt - t0 });
      };
      worker.on("message", onMessage);
      worker.on("error", reject);
      const t0 = performance.now();
      worker.postMessage({ shape: cfg.shape, n });
    });
  await run(cfg.warmup);
  const r = await run(cfg.n);
  await worker.terminate();
  return r;
}

const r = await { knitting, piscina, raw }[cfg.pool]();
const bytes = cfg.shape === "chunks" ? cfg.n * CHUNK_BYTES : 0;
if (r.count !== cfg.n || r.bytes !== bytes)
  throw new Error(`${cfg.pool}: got ${r.count} values, ${r.bytes} bytes; expected ${cfg.n}, ${bytes}`);
const out = {
  pool: cfg.pool,
  shape: cfg.shape,
  n: cfg.n,
  window: cfg.window ?? null,
  wallMs: r.wallMs,
  count: r.count,
  bytes: r.bytes,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
