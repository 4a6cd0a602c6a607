// One process of the user-shaped CPU-bound benchmark (bench/lib/cpu-user.mjs
// starts it on each runtime): what a user's script does, measured.
//
//   <runtime> bench/user/cpu-burst.mjs '{"threads":2,"calls":2000,"bursts":5,"callUs":1000}'
//
// In one process, one after another: the floor (bare worker threads running
// their share of each burst back to back), then knitting-native
// (`createPool({ threads })({ cpu })` over the task module cpu-tasks.mjs,
// each burst `Promise.all` of `calls` calls submitted at once), then piscina
// the same way. Prints one JSON line: per pool, per burst, wall ms and the
// main thread's CPU ms and the cores other processes used (/proc, Linux;
// null elsewhere).
import { existsSync, readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { createPool } from "knitting-native";
import { cpu } from "./cpu-tasks.mjs";
import { hash } from "./kernel.mjs";

const cfg = {
  threads: 2,
  calls: 2000,
  bursts: 5,
  floorBursts: 3,
  callUs: 1000,
  ...JSON.parse(process.argv[2] ?? "{}"),
};
const statPath = `/proc/self/task/${process.pid}/stat`;
const hasProc = existsSync(statPath);

/** CPU ms of the main thread (utime + stime, 10 ms ticks), or null without /proc. */
function mainThreadCpuMs() {
  if (!hasProc) return null;
  const stat = readFileSync(statPath, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** Rounds of hash() for `callUs` µs: the fastest of 30 timed runs, after a warm-up. */
function calibrate() {
  const call = (f, a) => f(a);
  for (const g of [(a) => a, (a) => !a, (a) => [a], (a) => typeof a, (a) => a === 0]) call(g, 1);
  const n = 200_000;
  for (let k = 0; k < 20; k++) call(hash, n);
  let best = Infinity;
  for (let k = 0; k < 30; k++) {
    const t0 = performance.now();
    call(hash, n);
    best = Math.min(best, performance.now() - t0);
  }
  return Math.round((n * cfg.callUs) / (best * 1000));
}

/** CPU ms of every process on the machine, and of this one (/proc; null elsewhere). */
function machineCpuMs() {
  if (!hasProc) return null;
  const all = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy = all but idle and iowait
  const busy = all.slice(0, 8).reduce((a, b) => a + b, 0) - all[3] - all[4];
  const own = readFileSync("/proc/self/stat", "utf8");
  const f = own.slice(own.lastIndexOf(")") + 2).split(" ");
  return { busy: busy * 10, own: (Number(f[11]) + Number(f[12])) * 10 };
}

async function bursts(count, burst) {
  const out = [];
  for (let b = 0; b < count; b++) {
    const cpu0 = mainThreadCpuMs();
    const m0 = machineCpuMs();
    const t0 = performance.now();
    await burst();
    const wallMs = performance.now() - t0;
    const cpu1 = mainThreadCpuMs();
    const m1 = machineCpuMs();
    out.push({
      wallMs,
      hostCpuMs: cpu0 === null ? null : cpu1 - cpu0,
      // Cores other processes kept busy meanwhile: what makes a burst slow on a shared machine.
      otherCores: m0 === null ? null : (m1.busy - m0.busy - (m1.own - m0.own)) / wallMs,
    });
  }
  return out;
}

async function bare(n) {
  const workers = Array.from({ length: cfg.threads }, () => new Worker(new URL("./bare-worker.mjs", import.meta.url)));
  const share = (calls, nn) =>
    Promise.all(
      workers.map(
        (w) =>
          new Promise((resolve, reject) => {
            w.once("message", resolve);
            w.once("error", reject);
            w.postMessage({ calls, n: nn });
          }),
      ),
    );
  await share(1, 1);
  const out = await bursts(cfg.floorBursts, () => share(Math.ceil(cfg.calls / cfg.threads), n));
  await Promise.all(workers.map((w) => w.terminate()));
  return out;
}

async function knitting(n) {
  const pool = createPool({ threads: cfg.threads })({ cpu });
  await pool.call.cpu(1);
  const out = await bursts(cfg.bursts, () => Promise.all(Array.from({ length: cfg.calls }, () => pool.call.cpu(n))));
  await pool.shutdown();
  return out;
}

async function piscina(n) {
  const { Piscina } = await import("piscina");
  const url = new URL("./piscina-worker.mjs", import.meta.url).href;
  const pool = new Piscina({ filename: url, minThreads: cfg.threads, maxThreads: cfg.threads });
  await pool.run(1);
  const out = await bursts(cfg.bursts, () => Promise.all(Array.from({ length: cfg.calls }, () => pool.run(n))));
  await pool.destroy();
  return out;
}

const n = cfg.n ?? calibrate();
const result = { n, pools: {} };
for (const [name, run] of [
  ["bare", bare],
  ["knitting", knitting],
  ["piscina", piscina],
]) {
  // The harness shows stderr's last line when a process dies without its
  // result: this names the pool it died in.
  process.stderr.write(`cpu-burst: ${name} started\n`);
  try {
    result.pools[name] = { bursts: await run(n) };
  } catch (e) {
    result.pools[name] = { error: String(e?.message ?? e).split("\n")[0] };
  }
}
process.stdout.write(`${JSON.stringify(result)}\n`);
process.stderr.write("cpu-burst: done\n");
process.exit(0);
