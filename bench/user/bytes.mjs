// One process of the shared-bytes benchmark (bench/lib/bytes-user.mjs starts
// one per pool per op per size per rep on each runtime): `calls` calls
// carrying a buffer of `size` bytes to a worker and back, `inflight` of
// them in flight, each in-flight lane reusing the buffer its last call
// gave back.
//
//   <runtime> bench/user/bytes.mjs '{"pool":"shared","op":"invert","size":65536,"calls":200}'
//
// pool:
// - "shared": knitting-native, createPool({ threads })(tasks) over the task
//   module bytes-tasks.mjs; a SharedBytes per lane from pool.sharedBytes(size),
//   filled once; `b = await pool.call[op](b)` (handed over, never copied).
// - "shared-process": the same with worker: { runtime: "process" }.
// - "copy": knitting-native with a plain Uint8Array, `u = await pool.call[op](u)`
//   (the codec copies it into shared memory and back).
// - "postmessage-copy": `threads` bare worker_threads, round robin,
//   postMessage(u8) both ways (the structured clone copies).
// - "postmessage-transfer": the same with [u8.buffer] in the transfer list both ways.
// - "piscina-transfer": piscina, pool.run(u8, { name: op, transferList: [u8.buffer] }),
//   the worker returning Piscina.move(u8).
// op: "echo" (returns its argument) or "invert" (inverts every byte in place first).
// Two phases, the same for every pool:
// - warm-up: calls until warmupMs (default 1000) has passed or `calls` calls
//   are made. A new knitting-native pool's first few thousand calls run at
//   about a quarter of its later speed (its workers' code is still being
//   compiled; a second pool in the same process starts as slowly), so a
//   warm-up counted in calls measured mostly that. Its rate is reported as
//   coldCallsPerSec, beside the steady figure, not hidden.
// - measured: calls until measureMs (default 2000) has passed or `calls`
//   calls are made; callsPerSec is over these.
// At the end each lane's bytes are checked at a few positions against what
// its number of round trips makes them (invert twice: the original).
// Prints one JSON line: { pool, op, size, calls, wallMs, callsPerSec, mbPerSec,
// warmupCalls, coldCallsPerSec } (mbPerSec: size x calls/s in 10^6 bytes; each
// call carries it there and back).
const MiB = 1024 * 1024;
const given = JSON.parse(process.argv[2] ?? "{}");
const cfg = { pool: "shared", op: "echo", size: 65_536, calls: 1000, threads: 2, ...given };
cfg.inflight = given.inflight ?? 2 * cfg.threads;
const POOLS = ["shared", "shared-process", "copy", "postmessage-copy", "postmessage-transfer", "piscina-transfer"];
if (!POOLS.includes(cfg.pool)) throw new TypeError(`pool must be one of ${POOLS.join(", ")}; got ${cfg.pool}`);
if (cfg.op !== "echo" && cfg.op !== "invert") throw new TypeError(`op must be "echo" or "invert"; got ${cfg.op}`);
const warmupMs = cfg.warmupMs ?? 1000;
const measureMs = cfg.measureMs ?? 2000;

/** The byte lane `lane` starts with at position i. */
const fillByte = (lane, i) => (i * 31 + lane * 7 + 1) & 255;
const fill = (u8, lane) => {
  for (let i = 0; i < u8.length; i++) u8[i] = fillByte(lane, i);
};

// knitting-native's region has to hold every lane's buffer (and, copying,
// an encoded argument and result per call in flight): the defaults (64 MiB,
// 8 MiB per call) are too small for 16 MiB buffers. Every knitting-native
// pool here gets the same payload options.
const payload = {
  payloadMaxByteLength: Math.max(64 * MiB, Math.ceil((2 * cfg.inflight * (cfg.size + MiB)) / MiB) * MiB),
  maxPayloadBytes: Math.max(8 * MiB, cfg.size + MiB),
};

/** Each pool: { start(lane) -> buffer, call(buffer) -> Promise<buffer>, bytes(buffer) -> Uint8Array, close() }. */
async function knitting(runtime, shared) {
  const { createPool } = await import("knitting-native");
  const tasks = await import("./bytes-tasks.mjs");
  const options = { threads: cfg.threads, payload };
  if (runtime) options.worker = { runtime };
  const pool = createPool(options)(tasks);
  await pool.ready;
  const call = pool.call[cfg.op];
  const held = [];
  return {
    start(lane) {
      const b = shared ? pool.sharedBytes(cfg.size) : new Uint8Array(cfg.size);
      fill(shared ? b.u8 : b, lane);
      return b;
    },
    call,
    bytes(b) {
      if (!shared) return b;
      if (!b.shared) throw new Error(`${cfg.pool}: a result came back copied out of shared memory`);
      held.push(b);
      return b.u8;
    },
    async close() {
      for (const b of held) b.release();
      await pool.shutdown();
    },
  };
}

async function postMessagePool(transfer) {
  const { Worker } = await import("node:worker_threads");
  const url = new URL("./bytes-raw-worker.mjs", import.meta.url);
  const workers = Array.from({ length: cfg.threads }, () => new Worker(url));
  const pending = new Map();
  let nextId = 0;
  for (const w of workers) {
    w.on("message", ({ id, u8 }) => {
      const resolve = pending.get(id);
      pending.delete(id);
      resolve(u8);
    });
    w.on("error", (err) => {
      console.error(err);
      process.exit(1);
    });
  }
  return {
    start(lane) {
      const u8 = new Uint8Array(cfg.size);
      fill(u8, lane);
      return u8;
    },
    call(u8) {
      const id = nextId++;
      const w = workers[id % workers.length];
      return new Promise((resolve) => {
        pending.set(id, resolve);
        const msg = { id, op: cfg.op, u8, transfer };
        if (transfer) w.postMessage(msg, [u8.buffer]);
        else w.postMessage(msg);
      });
    },
    bytes: (u8) => u8,
    close: () => Promise.all(workers.map((w) => w.terminate())),
  };
}

async function piscinaPool() {
  const { Piscina } = await import("piscina");
  const pool = new Piscina({
    filename: new URL("./bytes-piscina-worker.mjs", import.meta.url).href,
    minThreads: cfg.threads,
    maxThreads: cfg.threads,
  });
  return {
    start(lane) {
      const u8 = new Uint8Array(cfg.size);
      fill(u8, lane);
      return u8;
    },
    call: (u8) => pool.run(u8, { name: cfg.op, transferList: [u8.buffer] }),
    bytes: (u8) => u8,
    close: () => pool.destroy(),
  };
}

const make = {
  shared: () => knitting(null, true),
  "shared-process": () => knitting("process", true),
  copy: () => knitting(null, false),
  "postmessage-copy": () => postMessagePool(false),
  "postmessage-transfer": () => postMessagePool(true),
  "piscina-transfer": () => piscinaPool(),
};
const pool = await make[cfg.pool]();
const lanes = Array.from({ length: cfg.inflight }, (_, lane) => ({ buf: pool.start(lane), trips: 0 }));

/** Up to `n` calls within `budgetMs`, `inflight` at a time, each lane passing on what its last call gave back. */
async function run(n, budgetMs) {
  let issued = 0;
  const t0 = performance.now();
  await Promise.all(
    lanes.map(async (l) => {
      while (issued < n && performance.now() - t0 < budgetMs) {
        issued++;
        l.buf = await pool.call(l.buf);
        l.trips++;
      }
    }),
  );
  return { wallMs: performance.now() - t0, calls: issued };
}

const cold = await run(cfg.calls, warmupMs);
const { wallMs, calls } = await run(cfg.calls, measureMs);

// An odd number of inversions leaves the bytes inverted; an even one, the original.
const probes = [0, 1, 2, 3, cfg.size >>> 1, cfg.size - 1].filter((i) => i >= 0 && i < cfg.size);
for (const [lane, l] of lanes.entries()) {
  const u8 = pool.bytes(l.buf);
  if (u8.byteLength !== cfg.size) throw new Error(`${cfg.pool}: lane ${lane} got ${u8.byteLength} bytes`);
  const flipped = cfg.op === "invert" && l.trips % 2 === 1;
  for (const i of probes) {
    const want = flipped ? ~fillByte(lane, i) & 255 : fillByte(lane, i);
    if (u8[i] !== want)
      throw new Error(`${cfg.pool}: lane ${lane} byte ${i} is ${u8[i]}, expected ${want} after ${l.trips} trips`);
  }
}
await pool.close();
const callsPerSec = calls / (wallMs / 1000);
const out = {
  pool: cfg.pool,
  op: cfg.op,
  size: cfg.size,
  calls,
  wallMs,
  callsPerSec,
  mbPerSec: (callsPerSec * cfg.size) / 1e6,
  warmupCalls: cold.calls,
  coldCallsPerSec: cold.calls / (cold.wallMs / 1000),
};
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
