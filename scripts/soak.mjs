// Soak test (not a unit test): many randomized calls, each result checked,
// then many pools created and shut down; reports leaks and lost or wrong
// results, and exits non-zero on any.
//
//   node scripts/soak.mjs [--calls N] [--pools M] [--threads T] [--window W] [--seed S] [--runtime thread|process] [--quick]
//
// Defaults: 5,000,000 calls, 1,000 pools, 2 threads, 1,024 calls in flight.
// --quick (for CI, ~30 s): 200,000 calls and 50 pools.
// --max-growth PCT: the RSS growth that fails the run (default 10). CI's quick
// run uses a loose limit: over 200,000 calls RSS has not reached its plateau
// yet (1.6-13% seen from run to run), so 10% there would only measure noise.
//
// Calls: payloads of 0 B to 1 MiB (Buffers and Latin-1/UTF-16 strings, in
// the slot or in the payload region), results of 0 B to 1 MiB, sync and
// async tasks, some throwing or rejecting. Every call carries a unique
// number and a checksum of its argument; the worker answers with both and a
// result the host can rebuild, so a lost, duplicated or misrouted result is
// detected. Checked: calls never settled (lost), wrong results or
// unexpected errors (misrouted), RSS after warm-up vs at the end of each
// phase (growth %), open file descriptors (/proc/self/fd) and the addon's
// regionStats() at the start and at the end (must be back where they began).
//
// This module is also the soak's task module: pool workers import it, so
// the tasks are declared at the top level and the run itself only happens
// when isMain.
import { spawn } from "node:child_process";
import { readdirSync, readlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createPool, task, isMain } from "../index.mjs";

const KIND_SYNC = 0;
const KIND_ASYNC = 1;
const KIND_THROW = 2;
const KIND_REJECT = 3;
const KIND_STRING = 4; // sync, answers with a string

/** A deterministic fill of `n` bytes for call `id` (Buffer.fill with a short pattern: memcpy speed). */
function bytesFor(id, n) {
  const pattern = Buffer.from([id & 255, (id >>> 8) & 255, (id >>> 16) & 255, 0x5a, id % 251, 7, 0xa5]);
  return n === 0 ? Buffer.alloc(0) : Buffer.alloc(n, pattern);
}

/** A deterministic string of `n` code units for call `id`: Latin-1 or UTF-16 (lone surrogates too). */
function stringFor(id, n) {
  const unit = id % 3 === 0 ? "\u0100\ud800" : id % 3 === 1 ? "\u00e9z" : "ab";
  return unit.repeat(n >>> 1) + (n & 1 ? "!" : "");
}

function checksum(data) {
  let h = 0x811c9dc5;
  if (typeof data === "string") {
    for (let i = 0; i < data.length; i++) h = Math.imul(h ^ data.charCodeAt(i), 0x01000193);
  } else {
    for (let i = 0; i < data.length; i++) h = Math.imul(h ^ data[i], 0x01000193);
  }
  return h >>> 0;
}

/** The soak's one task: [id, kind, data, resultSize] -> [id, checksum(data), result]. */
export const soakCall = task({
  f: ([id, kind, data, size]) => {
    const sum = checksum(data);
    switch (kind) {
      case KIND_SYNC:
        return [id, sum, bytesFor(id, size)];
      case KIND_STRING:
        return [id, sum, stringFor(id, size)];
      case KIND_THROW: {
        const err = new RangeError(`soak ${id} threw`);
        err.code = "SOAK";
        err.sum = sum;
        throw err;
      }
      case KIND_ASYNC:
        return new Promise((resolve) => (id & 1 ? setImmediate : queueMicrotask)(() => resolve([id, sum, bytesFor(id, size)])));
      default:
        return Promise.resolve().then(() => {
          throw Object.assign(new TypeError(`soak ${id} rejected`), { code: "SOAK", sum });
        });
    }
  },
});
export const soakPing = task({ f: (n) => n + 1 });
/**
 * Runs a full GC in the worker that gets it (workers' heaps are not the
 * host's to collect) and reports that isolate's heap; busy for `ms` so that
 * concurrent calls land on different workers.
 */
export const soakGc = task({
  f: (ms) => {
    gcNow();
    const end = performance.now() + ms;
    while (performance.now() < end);
    const m = process.memoryUsage();
    return { heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external };
  },
});

function parseArgs(argv) {
  const args = { calls: 5_000_000, pools: 1_000, threads: 2, window: 1024, seed: 0x50a4, quick: false, runtime: "thread" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${a} needs a non-negative integer, got ${argv[i]}`);
      return v;
    };
    if (a === "--quick") args.quick = true;
    else if (a === "--calls") args.calls = num();
    else if (a === "--pools") args.pools = num();
    else if (a === "--threads") args.threads = Math.max(1, num());
    else if (a === "--window") args.window = Math.max(1, num());
    else if (a === "--seed") args.seed = num();
    else if (a === "--max-growth") args.maxGrowth = num();
    else if (a === "--runtime") {
      args.runtime = argv[++i];
      if (args.runtime !== "thread" && args.runtime !== "process") throw new Error(`--runtime is thread or process, got ${args.runtime}`);
    }
    else if (a === "--help" || a === "-h") {
      process.stdout.write("node scripts/soak.mjs [--calls N] [--pools M] [--threads T] [--window W] [--seed S] [--max-growth PCT] [--runtime thread|process] [--quick]\n");
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (try --help)`);
  }
  if (args.quick) {
    if (!argv.includes("--calls")) args.calls = 200_000;
    if (!argv.includes("--pools")) args.pools = 50;
  }
  return args;
}

function prng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

/** Payload sizes: mostly small (inline), some past the slot, a few up to 1 MiB. */
function sizeFrom(u, v) {
  if (u < 0.6) return Math.floor(v * 65);
  if (u < 0.9) return 65 + Math.floor(v * 448);
  if (u < 0.999) return 513 + Math.floor(v * 65_024);
  return 65_537 + Math.floor(v * (1024 * 1024 - 65_537));
}

/** Open file descriptors: fd -> what it points to (Linux; empty elsewhere). */
function openFds() {
  const fds = new Map();
  let names = [];
  try {
    names = readdirSync("/proc/self/fd");
  } catch {
    return null; // not Linux
  }
  for (const fd of names) {
    try {
      fds.set(fd, readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // the directory handle readdirSync used, closed by now
    }
  }
  return fds;
}
const fdCount = (fds) => (fds === null ? -1 : fds.size);
function fdDiff(a, b) {
  if (a === null || b === null) return [];
  const out = [];
  for (const [fd, what] of b) if (a.get(fd) !== what) out.push(`+${fd} ${what}`);
  for (const [fd, what] of a) if (b.get(fd) !== what) out.push(`-${fd} ${what}`);
  return out;
}

function gcNow() {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  gc();
  gc();
}

const rssMiB = () => process.memoryUsage().rss / (1024 * 1024);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * RSS after a full GC of the host and (given a pool) of each of its
 * `threads` workers; `heaps` gets the isolates' heap figures (MiB).
 */
async function settledRss(pool, threads, heaps) {
  gcNow();
  if (pool) {
    const workers = await Promise.all(Array.from({ length: threads }, () => pool.call.soakGc(30)));
    if (heaps) {
      const m = process.memoryUsage();
      const mib = (n) => +(n / (1024 * 1024)).toFixed(1);
      heaps.push({
        hostHeapUsed: mib(m.heapUsed),
        hostHeapTotal: mib(m.heapTotal),
        hostExternal: mib(m.external),
        workerHeapUsed: workers.map((w) => mib(w.heapUsed)),
        workerHeapTotal: workers.map((w) => mib(w.heapTotal)),
        workerExternal: workers.map((w) => mib(w.external)),
      });
    }
  }
  await sleep(200);
  gcNow();
  return rssMiB();
}

function log(msg) {
  process.stderr.write(`[soak +${((performance.now() - T0) / 1000).toFixed(1)}s] ${msg}\n`);
}
const T0 = performance.now();

async function main(argv) {
  let args;
  try {
    args = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`soak: ${err.message}\n`);
    return 2;
  }
  const native = createRequire(import.meta.url)("../lib/native.js");
  // Opening the stdio streams may open descriptors of its own (a pipe
  // opens /dev/null): do it before the first count.
  void process.stdout.writable;
  void process.stderr.writable;
  if (args.runtime === "process") {
    // Node keeps one /dev/null descriptor open after its first child with
    // an IPC channel (seen with a bare spawn("true", [], { stdio: [..., "ipc"] })):
    // open it before the first count too.
    await new Promise((resolve) => spawn("true", [], { stdio: ["ignore", "ignore", "ignore", "ipc"] }).on("exit", resolve));
  }
  const startFds = openFds();
  const start = { fds: fdCount(startFds), regions: native.regionStats(), rss: rssMiB() };
  log(`start: ${JSON.stringify(args)}; fds ${start.fds}, regions ${JSON.stringify(start.regions)}, rss ${start.rss.toFixed(1)} MiB`);

  const calls = await callPhase(args);
  const pools = await poolPhase(args);

  // Shut-down pools release their regions when their objects are collected
  // (napi finalizers run after a GC): collect first, then count.
  const rssEnd = await settledRss();
  await sleep(200);
  const endFds = openFds();
  const end = { fds: fdCount(endFds), regions: native.regionStats(), rss: rssEnd };
  const report = {
    args,
    calls: {
      checked: calls.checked,
      lost: calls.lost,
      misrouted: calls.misrouted,
      byKind: calls.byKind,
      callsPerSecond: Math.round(calls.checked / calls.seconds),
      rssWarmMiB: +calls.rssWarm.toFixed(1),
      rssEndMiB: +calls.rssEnd.toFixed(1),
      rssGrowthPct: +calls.growth.toFixed(2),
      rssSamplesMiB: calls.rssSamples,
      heapsMiB: calls.heaps, // after warm-up, at the end (after a GC of every isolate)
      payloadRegionMiB: calls.payloadRegion,
      examples: calls.examples,
    },
    pools: {
      created: pools.created,
      failed: pools.failed,
      rssWarmMiB: +pools.rssWarm.toFixed(1),
      rssEndMiB: +pools.rssEnd.toFixed(1),
      rssGrowthPct: +pools.growth.toFixed(2),
      seconds: +pools.seconds.toFixed(1),
      examples: pools.examples,
    },
    fds: { start: start.fds, end: end.fds, changed: fdDiff(startFds, endFds) },
    regions: { start: start.regions, end: end.regions },
    rssMiB: { start: +start.rss.toFixed(1), end: +end.rss.toFixed(1) },
  };
  const problems = [];
  if (calls.lost > 0) problems.push(`${calls.lost} calls lost`);
  if (calls.misrouted > 0) problems.push(`${calls.misrouted} calls with a wrong result`);
  const maxGrowth = args.maxGrowth ?? 10;
  if (calls.growth > maxGrowth) problems.push(`RSS grew ${calls.growth.toFixed(1)}% during the calls (limit ${maxGrowth}%)`);
  if (pools.failed > 0) problems.push(`${pools.failed} pools failed`);
  if (pools.growth > maxGrowth) problems.push(`RSS grew ${pools.growth.toFixed(1)}% while creating pools (limit ${maxGrowth}%)`);
  if (end.fds !== start.fds) problems.push(`open fds ${start.fds} -> ${end.fds}`);
  if (end.regions.regions !== start.regions.regions || end.regions.attachments !== start.regions.attachments) {
    problems.push(`regionStats ${JSON.stringify(start.regions)} -> ${JSON.stringify(end.regions)}`);
  }
  report.ok = problems.length === 0;
  report.problems = problems;
  process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  log(report.ok ? "PASS" : `FAIL: ${problems.join("; ")}`);
  return report.ok ? 0 : 1;
}

async function callPhase({ calls: total, threads, window, seed, runtime }) {
  const pool = createPool({ threads, worker: { runtime } })({ soakCall, soakGc });
  const rand = prng(seed);
  const out = { checked: 0, lost: 0, misrouted: 0, byKind: [0, 0, 0, 0, 0], examples: [], rssWarm: 0, rssEnd: 0, growth: 0, seconds: 0, heaps: [] };
  // Warm-up: a quarter of the calls (the payload region and the workers'
  // heaps reach their high-water marks); then RSS is sampled at every further
  // quarter so that a trend shows.
  const warmAt = Math.min(total, Math.max(20_000, Math.floor(total / 4)));
  const sampleEvery = Math.max(1, Math.floor(total / 4));
  out.rssSamples = [];
  let next = 0;
  let settled = 0;
  let inFlight = 0;
  let lastSettle = performance.now();
  let warming = false;
  const t0 = performance.now();

  const wrong = (id, why) => {
    out.misrouted++;
    if (out.examples.length < 10) out.examples.push(`call ${id}: ${why}`);
  };

  await new Promise((resolve) => {
    let finished = false;
    const done = () => {
      if (!finished) {
        finished = true;
        clearInterval(watchdog);
        resolve();
      }
    };
    // Lost calls: nothing settles for 30 s while calls are in flight.
    const watchdog = setInterval(() => {
      if (inFlight > 0 && performance.now() - lastSettle > 30_000) {
        out.lost = inFlight;
        if (out.examples.length < 10) out.examples.push(`${inFlight} calls never settled (no progress for 30 s)`);
        done();
      }
    }, 1000);
    const launch = () => {
      while (inFlight < window && next < total) {
        if (next === warmAt && !warming) {
          // Measure once, between calls, with the window drained.
          if (inFlight > 0) return;
          warming = true;
          settledRss(pool, threads, out.heaps).then((rss) => {
            out.rssWarm = rss;
            log(`warm-up done after ${next} calls: rss ${rss.toFixed(1)} MiB`);
            launch();
          });
          return;
        }
        const id = next++;
        const u = rand();
        const kind = u < 0.62 ? KIND_SYNC : u < 0.82 ? KIND_ASYNC : u < 0.9 ? KIND_STRING : u < 0.95 ? KIND_THROW : KIND_REJECT;
        const size = sizeFrom(rand(), rand());
        const resultSize = sizeFrom(rand(), rand());
        const data = rand() < 0.7 ? bytesFor(id ^ 0x3c3c, size) : stringFor(id, size);
        const sum = checksum(data);
        out.byKind[kind]++;
        inFlight++;
        pool.call.soakCall([id, kind, data, resultSize]).then(
          (r) => {
            if (kind === KIND_THROW || kind === KIND_REJECT) wrong(id, "resolved but its task throws");
            else if (!Array.isArray(r) || r[0] !== id) wrong(id, `answered for call ${Array.isArray(r) ? r[0] : typeof r}`);
            else if (r[1] !== sum) wrong(id, `argument checksum ${r[1]} != ${sum} (size ${size})`);
            else if (kind === KIND_STRING) {
              if (r[2] !== stringFor(id, resultSize)) wrong(id, `string result of ${resultSize} units differs`);
            } else if (!Buffer.isBuffer(r[2]) || !r[2].equals(bytesFor(id, resultSize))) {
              wrong(id, `result of ${resultSize} bytes differs`);
            }
            after();
          },
          (err) => {
            const expected = kind === KIND_THROW ? ["RangeError", `soak ${id} threw`] : ["TypeError", `soak ${id} rejected`];
            if (kind !== KIND_THROW && kind !== KIND_REJECT) {
              wrong(id, `unexpected rejection (payload ${size} B, result ${resultSize} B): ${err && err.name} ${err && err.code} ${err && err.message}`);
            } else if (!(err instanceof Error) || err.name !== expected[0] || err.message !== expected[1] || err.code !== "SOAK" || err.sum !== sum) {
              wrong(id, `rejected with ${err && err.name}: ${err && err.message} (code ${err && err.code}, sum ${err && err.sum})`);
            }
            after();
          },
        );
      }
    };
    const after = () => {
      inFlight--;
      settled++;
      out.checked++;
      lastSettle = performance.now();
      if (settled % Math.max(1, Math.floor(total / 10)) === 0) log(`${settled} calls checked, ${out.misrouted} wrong`);
      if (settled % sampleEvery === 0) out.rssSamples.push([settled, +rssMiB().toFixed(1)]);
      if (settled === total) done();
      else launch();
    };
    launch();
  });
  out.seconds = (performance.now() - t0) / 1000;
  out.rssEnd = await settledRss(pool, threads, out.heaps);
  if (out.rssWarm === 0) out.rssWarm = out.rssEnd;
  out.growth = ((out.rssEnd - out.rssWarm) / out.rssWarm) * 100;
  log(`calls: ${out.checked} checked in ${out.seconds.toFixed(1)} s, ${out.lost} lost, ${out.misrouted} wrong; rss ${out.rssWarm.toFixed(1)} -> ${out.rssEnd.toFixed(1)} MiB`);
  const internal = pool[Symbol.for("knitting-native.pool")];
  if (internal && internal.payloadSab) out.payloadRegion = +(internal.payloadSab.byteLength / (1024 * 1024)).toFixed(1);
  await pool.shutdown();
  return out;
}

async function poolPhase({ pools: total, threads, runtime }) {
  const out = { created: 0, failed: 0, examples: [], rssWarm: 0, rssEnd: 0, growth: 0, seconds: 0 };
  const warmAt = Math.min(total, Math.max(5, Math.floor(total / 10)));
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    if (i === warmAt) {
      out.rssWarm = await settledRss();
      log(`pools: warm-up done after ${i} pools: rss ${out.rssWarm.toFixed(1)} MiB`);
    }
    try {
      const pool = createPool({ threads: 1 + (i % threads), worker: { runtime } })({ soakPing });
      out.created++;
      if (i % 4 !== 3) {
        const r = await Promise.all([pool.call.soakPing(i), pool.call.soakPing(i + 1)]);
        if (r[0] !== i + 1 || r[1] !== i + 2) throw new Error(`pool ${i} answered ${r}`);
      } // every 4th pool is shut down without ever being called
      await pool.shutdown();
    } catch (err) {
      out.failed++;
      if (out.examples.length < 10) out.examples.push(`pool ${i}: ${err && err.message}`);
    }
    if ((i + 1) % Math.max(1, Math.floor(total / 10)) === 0) log(`${i + 1} pools created and shut down`);
  }
  out.seconds = (performance.now() - t0) / 1000;
  out.rssEnd = await settledRss();
  if (out.rssWarm === 0) out.rssWarm = out.rssEnd;
  out.growth = ((out.rssEnd - out.rssWarm) / out.rssWarm) * 100;
  log(`pools: ${out.created} created in ${out.seconds.toFixed(1)} s, ${out.failed} failed; rss ${out.rssWarm.toFixed(1)} -> ${out.rssEnd.toFixed(1)} MiB`);
  return out;
}

// Last, so that every declaration above is initialised before the run.
if (isMain) process.exitCode = await main(process.argv.slice(2));
