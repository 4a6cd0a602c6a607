// Measures what worker.abandonGraceMs (DEFAULT_ABANDON_GRACE_MS in
// lib/options/abandon-grace.js) must allow for: how long a synchronous call that is about
// to finish keeps holding its worker's thread after its task timeout gave it
// up. A one-worker pool (abandonGraceMs false, so nothing is replaced) runs a
// call of `k` times its timeout's worth of CPU; once the timeout rejects it,
// a quick call follows, and its wait (the overrun, plus one hop) is taken.
//
// Usage: node scripts/measure-abandon-grace.mjs [--reps 40] [--timeout 50]
// (run it beside `node scripts/with-busy-core.mjs ...` too: the load is what matters).

import { loadavg } from "node:os";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const reps = opt("reps", 40);
const timeoutMs = opt("timeout", 50);

const { createPool, task, isMain } = await import("../index.mjs");
/** Burns `ms` of wall time on the worker's thread (what a busy task does under load too). */
export const burn = task({
  timeout: timeoutMs,
  f: (ms) => {
    const end = performance.now() + ms;
    let x = 0;
    while (performance.now() < end) x++;
    return x;
  },
});
export const quick = task({ f: (v) => v });

if (isMain) {
  const pool = createPool({ threads: 1, worker: { abandonGraceMs: false } })({ burn, quick });
  await pool.ready;
  const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  console.log(`node ${process.version}, timeout ${timeoutMs} ms, ${reps} reps, load ${loadavg()[0].toFixed(2)}`);
  for (const k of [1.05, 1.2, 1.5, 2]) {
    const waits = [];
    for (let i = 0; i < reps; i++) {
      await pool.call.burn(k * timeoutMs).catch(() => {});
      const t0 = performance.now();
      await pool.call.quick(i);
      waits.push(performance.now() - t0);
    }
    waits.sort((a, b) => a - b);
    const f = (v) => v.toFixed(1);
    console.log(
      `k ${k}: held the thread after its timeout p50 ${f(pct(waits, 50))} ms, p90 ${f(pct(waits, 90))}, ` +
        `max ${f(waits[waits.length - 1])} (expected ${f((k - 1) * timeoutMs)})`,
    );
  }
  await pool.shutdown();
}
