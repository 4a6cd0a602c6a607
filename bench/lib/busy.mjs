// CPU-bound task bodies that every pool runs in its workers, so that each
// pool does the same work.

/**
 * The scheduling workload of `node bench/run.mjs --report`: busy-spin `ms`
 * milliseconds of wall time, then return `i` (so the host can check which
 * call it got back).
 */
export function busy(i, ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
  return i;
}

// Where work() leaves its result: a store the JIT must keep, so it cannot
// drop the loop as dead code.
// biome-ignore lint/correctness/noUnusedVariables: written, never read, on purpose (see above)
let sink = 0;

/**
 * The random-load workload of `node bench/run.mjs`: `iters` rounds of an
 * xorshift step, a fixed amount of CPU work (unlike busy(), a worker that
 * loses its core to another thread takes longer, as real work would).
 * Returns [i, µs spent in the loop].
 */
export function work(i, iters) {
  const t0 = performance.now();
  let x = (i | 0) ^ 0x2545f491;
  for (let k = 0; k < iters; k++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
  }
  sink ^= x;
  return [i, (performance.now() - t0) * 1000];
}

// Compile work() whole before any long call, in every isolate that imports
// it. Otherwise V8 (Node 20.20) first compiles only its loop, on stack
// replacement in the first long call, before the lines after the loop have
// ever run; that code then deoptimised at the loop's exit on about every
// other later call ("insufficient type feedback", --trace-deopt): 4 to 1,426
// deopts in 3,000 calls of 200,000 rounds from run to run in one isolate, and
// 422-845 in the first measured cpu-bound burst of the stealing, private-lane
// and bare-worker rows (2026-12-03). 2,000 short calls make V8 compile the
// whole function first: 0 deopts in 6 runs. Costs ~0.5 ms per import.
for (let k = 0; k < 2_000; k++) work(k, 100);

/**
 * Rounds of work() per microsecond on this machine: the fastest of `trials`
 * timed runs of `iters` rounds, after a warm-up that lets the JIT compile
 * the loop. The fastest run is the one least disturbed by other processes,
 * so durations derived from it are what the work takes on an idle core.
 * Short runs (0.4 ms here) are more often undisturbed on a loaded machine:
 * 7 runs of 2,000,000 rounds gave 83-493 rounds/µs from run to run, 30 runs
 * of 200,000 gave 499-504.
 */
export function calibrateWork(iters = 200_000, trials = 30) {
  for (let k = 0; k < 20; k++) work(k, iters);
  let best = Infinity;
  for (let k = 0; k < trials; k++) {
    const t0 = process.hrtime.bigint();
    work(k, iters);
    const ns = Number(process.hrtime.bigint() - t0);
    if (ns < best) best = ns;
  }
  return (iters * 1000) / best;
}
