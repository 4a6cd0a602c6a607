// Soak test (not a unit test): many randomized calls, each result checked,
// then many pools created and shut down; reports leaks and lost or wrong
// results, and exits non-zero on any.
//
//   node scripts/soak.mjs [--calls N] [--pools M] [--threads T] [--window W] [--seed S]
//                         [--runtime thread|process] [--quick]
//
// Defaults: 5,000,000 calls, 1,000 pools, 2 threads, 1,024 calls in flight.
// --quick (for CI, ~30 s): 200,000 calls and 50 pools.
// --max-growth PCT: the RSS growth that fails the run (default 10). CI's quick
// run uses a loose limit: its 120,000 calls of warm-up do not reach the
// plateau (see WARM_UP), so 10% there would only measure warm-up.
//
// Calls: payloads of 0 B to 1 MiB (Buffers and Latin-1/UTF-16 strings, in
// the slot or in the payload region), results of 0 B to 1 MiB, sync and
// async tasks, some throwing or rejecting. Every call carries a unique
// number and a checksum of its argument; the worker answers with both and a
// result the host can rebuild, so a lost, duplicated or misrouted result is
// detected. Checked: calls never settled (lost), wrong results or
// unexpected errors (misrouted), RSS growth after warm-up (calls: medians of
// checkpoints taken every twentieth of the calls, RSS less V8's committed
// heaps, see WARM_UP; pools: after the first tenth vs the end), growth of the
// isolates' live heaps, payload blocks still allocated when no call is in
// flight, open file descriptors (/proc/self/fd) and the addon's
// regionStats() at the start and at the end (must be back where they began).
// Each checkpoint also records V8's committed heaps, the payload region and
// the isolates' live heaps, so the report shows what any growth is made of.
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
import { random } from "../__test__/helpers/prng.mjs";
import { median } from "../bench/lib/stats.mjs";

const KIND_SYNC = 0;
const KIND_ASYNC = 1;
const KIND_THROW = 2;
const KIND_REJECT = 3;
const KIND_STRING = 4; // sync, answers with a string
const KIND_LATE = 5; // outlives its task timeout: resolves with the timeout's default
const LATE_MS = 300; // how long a late call runs, against its timeout of 5 ms

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
        return new Promise((resolve) =>
          (id & 1 ? setImmediate : queueMicrotask)(() => resolve([id, sum, bytesFor(id, size)])),
        );
      default:
        return Promise.resolve().then(() => {
          throw Object.assign(new TypeError(`soak ${id} rejected`), { code: "SOAK", sum });
        });
    }
  },
});
export const soakPing = task({ f: (n) => n + 1 });
/** A call that times out: the worker answers after its host timeout fired; the answer must be dropped. */
export const soakLate = task({
  timeout: { time: 5, default: "late" },
  f: ([id, ms]) => new Promise((resolve) => setTimeout(() => resolve(id), ms)),
});
/**
 * Runs a full GC in the worker that gets it (workers' heaps are not the
 * host's to collect) and reports that isolate's heap; busy for `ms` so that
 * concurrent calls land on different workers. The GC comes after the busy
 * loop: the loop allocates, and its garbage, up to a young generation's
 * worth, used to count as heapUsed (a worker read 5.5, 11.4, 7.3 MiB at
 * three checkpoints in a row; one test worker 6.2-11.1 MiB with the GC
 * first, 4.0-4.5 MiB with it last), which looked like a growing live heap.
 */
export const soakGc = task({
  f: (ms) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
    gcNow();
    const m = process.memoryUsage();
    return { heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external };
  },
});

function parseArgs(argv) {
  const args = {
    calls: 5_000_000,
    pools: 1_000,
    threads: 2,
    window: 1024,
    seed: 0x50a4,
    quick: false,
    runtime: "thread",
  };
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
      if (args.runtime !== "thread" && args.runtime !== "process")
        throw new Error(`--runtime is thread or process, got ${args.runtime}`);
    } else if (a === "--help" || a === "-h") {
      process.stdout.write(
        "node scripts/soak.mjs [--calls N] [--pools M] [--threads T] [--window W] [--seed S] " +
          "[--max-growth PCT] [--runtime thread|process] [--quick]\n",
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (try --help)`);
  }
  if (args.quick) {
    if (!argv.includes("--calls")) args.calls = 200_000;
    if (!argv.includes("--pools")) args.pools = 50;
  }
  return args;
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
  const native = createRequire(import.meta.url)("../lib/native/index.js");
  // Opening the stdio streams may open descriptors of its own (a pipe
  // opens /dev/null): do it before the first count.
  void process.stdout.writable;
  void process.stderr.writable;
  if (args.runtime === "process") {
    // Node keeps one /dev/null descriptor open after its first child with
    // an IPC channel (seen with a bare spawn("true", [], { stdio: [..., "ipc"] })):
    // open it before the first count too.
    await new Promise((resolve) =>
      spawn("true", [], { stdio: ["ignore", "ignore", "ignore", "ipc"] }).on("exit", resolve),
    );
  }
  const startFds = openFds();
  const start = { fds: fdCount(startFds), regions: native.regionStats(), rss: rssMiB() };
  log(
    `start: ${JSON.stringify(args)}; fds ${start.fds}, regions ${JSON.stringify(start.regions)}, ` +
      `rss ${start.rss.toFixed(1)} MiB`,
  );

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
      // Medians of the first checkpoints after the warm-up and of the last ones.
      rssWarmMiB: +calls.rssWarm.toFixed(1),
      rssEndMiB: +calls.rssEnd.toFixed(1),
      rssGrowthPct: +calls.growth.toFixed(2),
      // What fails the run: the growth of RSS less V8's committed heaps, as a
      // part of RSS (see V8_SWINGS); V8's live heap is checked just below.
      rssGrowthOutsideV8Pct: +calls.netGrowth.toFixed(2),
      // Live heaps (heapUsed after a GC, every isolate), measured the same way.
      heapUsedGrowthPct: +calls.heapGrowth.toFixed(2),
      // The RSS change in MiB, how much of it is V8 growing its heaps and the
      // payload region growing, and the change in the isolates' heapUsed and
      // external memory (summed, after a GC).
      growthMiB: calls.growthParts,
      payloadBlocksLeaked: calls.leakedBlocks,
      // MiB, each after draining the window and collecting every isolate.
      checkpoints: calls.checkpoints,
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
  if (calls.netGrowth > maxGrowth) {
    problems.push(
      `RSS outside V8's heaps grew by ${calls.netGrowth.toFixed(1)}% of RSS during the calls (limit ${maxGrowth}%)`,
    );
  }
  if (calls.heapGrowth > maxGrowth)
    problems.push(`live heaps grew ${calls.heapGrowth.toFixed(1)}% during the calls (limit ${maxGrowth}%)`);
  if (calls.leakedBlocks > 0)
    problems.push(`${calls.leakedBlocks} payload blocks still allocated with no call in flight`);
  if (pools.failed > 0) problems.push(`${pools.failed} pools failed`);
  if (pools.growth > maxGrowth)
    problems.push(`RSS grew ${pools.growth.toFixed(1)}% while creating pools (limit ${maxGrowth}%)`);
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

// The part of the calls that is warm-up: 3,000,000 of the default 5,000,000.
// RSS climbs until V8 has grown the workers' young generations to
// their cap (host 37.5 + 2 x 39 MiB committed) and then stays flat, and
// nothing live grows with it. When the cap is reached varies from run to
// run; settled checkpoints with this mix and 2 threads:
//   the default run: RSS 223 224 243 244 275 305 307 308 313 305 MiB at
//   0.5 ... 5 M calls, V8's committed heaps 74 71 83 83 100 115 115 115 115
//   115 MiB, the payload region 4 -> 8 MiB at 4.5 M (it only grows, once a
//   moment with more large payloads in flight than it holds comes), heapUsed
//   4.3-4.6 / 4.6-5.4 / 4.7-5.3 MiB throughout;
//   --calls 2000000: RSS 188 186 211 217 228 243 246 251 246 244 MiB, V8's
//   heaps 60 -> 83 MiB by 1.2 M, flat after; a 3 M run (RSS sampled without
//   a GC): 249 / 266 / 319 / 318 MiB at 0.75 / 1.5 / 2.25 / 3 M calls.
// The rest of the climb is freed memory that glibc keeps (1 MiB values move
// its mmap threshold up, so they come from per-thread arenas, freed only
// when V8 collects their buffers): at 0.75-1.5 M calls its arenas held
// 117-118 MiB of which 7-8 MiB in use (gdb: call malloc_stats()), and
// malloc_trim(0) took RSS from 213 / 205 / 247 to 100 / 135 / 133 MiB at
// 0.25 / 0.5 / 0.75 M. Worker heap snapshots at 0.25 and 0.75 M: 6.61 ->
// 6.54 and 5.78 -> 5.74 MiB, no constructor up by more than 65 KiB.
// V8_SWINGS: V8 also shrinks the young generations again and regrows them
// (another default run: RSS 298 308 276 269 MiB at 2 / 2.5 / 3 / 3.5 M
// calls with V8's committed heaps at 117 117 88 92 MiB, heapUsed unchanged),
// so RSS moves by up to 30 MiB, about 10%, with V8's sizing alone, for
// several checkpoints in a row. What fails the run is therefore RSS less
// V8's committed heaps (V8's live heap has its own check, heapUsed), with
// raw RSS growth reported beside it; and growth compares medians of three
// checkpoints, hence twenty checkpoints rather than ten.
const WARM_UP = 0.6;
const CHECKPOINTS = 20;

async function callPhase({ calls: total, threads, window, seed, runtime }) {
  const pool = createPool({ threads, worker: { runtime } })({ soakCall, soakGc, soakLate });
  const internal = pool[Symbol.for("knitting-native.pool")];
  const rand = random(seed);
  const out = {
    checked: 0,
    lost: 0,
    misrouted: 0,
    byKind: [0, 0, 0, 0, 0, 0],
    examples: [],
    seconds: 0,
    checkpoints: [],
  };
  // Checkpoints: every twentieth of the calls, with the window drained and
  // every isolate collected, RSS is read along with what it is made of (see
  // checkpoint()). The first WARM_UP of them are warm-up; growth compares
  // the median of the first checkpoints after it with the median of the last
  // ones (see growthOf), so one checkpoint that lands on a high or low moment
  // of the allocators does not decide the result.
  const every = Math.max(1, Math.floor(total / CHECKPOINTS));
  const checkAt = new Set();
  for (let i = 1; i < CHECKPOINTS; i++) checkAt.add(i * every); // the last one after the calls
  let next = 0;
  let settled = 0;
  let inFlight = 0;
  let lastSettle = performance.now();
  let measuring = -1; // the call count of the checkpoint being taken
  const t0 = performance.now();
  let paused = 0; // ms spent in checkpoints, not counted as call time

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
        if (checkAt.has(next) && measuring !== next) {
          // Measure between calls, with the window drained.
          if (inFlight > 0) return;
          measuring = next;
          const t = performance.now();
          checkpoint(pool, internal, threads, next).then((c) => {
            paused += performance.now() - t;
            out.checkpoints.push(c);
            log(
              `${next} calls checked, ${out.misrouted} wrong; rss ${c.rss} MiB (V8 heaps ` +
                `${c.v8Committed}, payload region ${c.payloadRegion})`,
            );
            launch();
          });
          return;
        }
        const id = next++;
        const u = rand();
        if (u < 0.005) {
          out.byKind[KIND_LATE]++;
          inFlight++;
          pool.call.soakLate([id, LATE_MS]).then(
            (r) => {
              if (r !== "late")
                wrong(id, `a timed-out call resolved with ${JSON.stringify(r)}, not its timeout default`);
              after();
            },
            (err) => {
              wrong(id, `a timed-out call rejected: ${err && err.message}`);
              after();
            },
          );
          continue;
        }
        const kind =
          u < 0.62 ? KIND_SYNC : u < 0.82 ? KIND_ASYNC : u < 0.9 ? KIND_STRING : u < 0.95 ? KIND_THROW : KIND_REJECT;
        const size = sizeFrom(rand(), rand());
        const resultSize = sizeFrom(rand(), rand());
        const data = rand() < 0.7 ? bytesFor(id ^ 0x3c3c, size) : stringFor(id, size);
        const sum = checksum(data);
        out.byKind[kind]++;
        inFlight++;
        pool.call.soakCall([id, kind, data, resultSize]).then(
          (r) => {
            if (kind === KIND_THROW || kind === KIND_REJECT) wrong(id, "resolved but its task throws");
            else if (!Array.isArray(r) || r[0] !== id)
              wrong(id, `answered for call ${Array.isArray(r) ? r[0] : typeof r}`);
            else if (r[1] !== sum) wrong(id, `argument checksum ${r[1]} != ${sum} (size ${size})`);
            else if (kind === KIND_STRING) {
              if (r[2] !== stringFor(id, resultSize)) wrong(id, `string result of ${resultSize} units differs`);
            } else if (!Buffer.isBuffer(r[2]) || !r[2].equals(bytesFor(id, resultSize))) {
              wrong(id, `result of ${resultSize} bytes differs`);
            }
            after();
          },
          (err) => {
            const expected =
              kind === KIND_THROW ? ["RangeError", `soak ${id} threw`] : ["TypeError", `soak ${id} rejected`];
            if (kind !== KIND_THROW && kind !== KIND_REJECT) {
              wrong(
                id,
                `unexpected rejection (payload ${size} B, result ${resultSize} B): ` +
                  `${err && err.name} ${err && err.code} ${err && err.message}`,
              );
            } else if (
              !(err instanceof Error) ||
              err.name !== expected[0] ||
              err.message !== expected[1] ||
              err.code !== "SOAK" ||
              err.sum !== sum
            ) {
              wrong(
                id,
                `rejected with ${err && err.name}: ${err && err.message} (code ${err && err.code}, ` +
                  `sum ${err && err.sum})`,
              );
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
      if (settled === total) done();
      else launch();
    };
    launch();
    if (total === 0) done();
  });
  out.seconds = (performance.now() - t0 - paused) / 1000;
  if (out.lost === 0) out.checkpoints.push(await checkpoint(pool, internal, threads, total));
  Object.assign(out, growthOf(out.checkpoints, Math.round(CHECKPOINTS * WARM_UP) * every));
  log(
    `calls: ${out.checked} checked in ${out.seconds.toFixed(1)} s, ${out.lost} lost, ${out.misrouted} wrong; ` +
      `rss ${out.rssWarm.toFixed(1)} -> ${out.rssEnd.toFixed(1)} MiB (medians after warm-up and at the end)`,
  );
  await pool.shutdown();
  return out;
}

/**
 * One checkpoint (window drained): RSS after a GC of every isolate, and the
 * parts of it that are not the allocator's: V8's committed heaps (host and
 * workers), the payload region, and what is live (heapUsed after the GC,
 * payload blocks still allocated, which must be 0 with nothing in flight).
 */
async function checkpoint(pool, internal, threads, calls) {
  const heaps = [];
  const rss = await settledRss(pool, threads, heaps);
  const h = heaps[0];
  // The host keeps a chunk of the payload region to cut small arguments
  // from (payload/chunks.js): give it back first, so what is counted is
  // what calls left behind.
  internal.payload.retire();
  const arena = internal.payload.arena.stats();
  const mib = (n) => +(n / (1024 * 1024)).toFixed(1);
  return {
    calls,
    rss: +rss.toFixed(1),
    v8Committed: +(h.hostHeapTotal + sum(h.workerHeapTotal)).toFixed(1),
    payloadRegion: mib(internal.payloadSab.byteLength),
    payloadLiveBlocks: arena.liveBlocks,
    heapUsed: [h.hostHeapUsed, ...h.workerHeapUsed],
    external: [h.hostExternal, ...h.workerExternal],
  };
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

/**
 * Growth over the measured phase: the median of the first checkpoints from
 * the end of the warm-up on against the median of the last ones (three and
 * three of the nine checkpoints after warm-up), for RSS and for the live
 * heaps (heapUsed after a GC, all isolates summed: what a leak of JS objects
 * raises; 4.4-4.6 and 5.2-5.4 MiB per isolate over a quick run). Also how
 * much of the RSS change is V8 growing its heaps and the payload region
 * growing, and how much external memory changed.
 */
function growthOf(checkpoints, warmCalls) {
  const measured = checkpoints.filter((c) => c.calls >= warmCalls);
  if (measured.length === 0)
    // calls lost
    return { rssWarm: 0, rssEnd: 0, growth: 0, netGrowth: 0, heapGrowth: 0, growthParts: null, leakedBlocks: 0 };
  const n = Math.max(1, Math.min(3, Math.floor(measured.length / 2)));
  const first = measured.slice(0, n);
  const last = measured.slice(-n);
  const pick = (cs, f) => median(cs.map(f));
  const rssWarm = pick(first, (c) => c.rss);
  const rssEnd = pick(last, (c) => c.rss);
  const delta = (f) => +(pick(last, f) - pick(first, f)).toFixed(1);
  const heapUsed = (c) => sum(c.heapUsed);
  const outsideV8 = (c) => c.rss - c.v8Committed;
  return {
    rssWarm,
    rssEnd,
    growth: ((rssEnd - rssWarm) / rssWarm) * 100,
    netGrowth: ((pick(last, outsideV8) - pick(first, outsideV8)) / rssWarm) * 100,
    heapGrowth: ((pick(last, heapUsed) - pick(first, heapUsed)) / pick(first, heapUsed)) * 100,
    growthParts: {
      rss: +(rssEnd - rssWarm).toFixed(1),
      v8Committed: delta((c) => c.v8Committed),
      payloadRegion: delta((c) => c.payloadRegion),
      heapUsed: delta(heapUsed),
      external: delta((c) => sum(c.external)),
    },
    leakedBlocks: Math.max(...checkpoints.map((c) => c.payloadLiveBlocks)),
  };
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
  log(
    `pools: ${out.created} created in ${out.seconds.toFixed(1)} s, ${out.failed} failed; rss ` +
      `${out.rssWarm.toFixed(1)} -> ${out.rssEnd.toFixed(1)} MiB`,
  );
  return out;
}

// Last, so that every declaration above is initialised before the run.
if (isMain) process.exitCode = await main(process.argv.slice(2));
