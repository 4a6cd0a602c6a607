// The host sleeps while its workers compute: lib/host/loop.js's polling rule,
// run as shipped under simulated time (__test__/model/host-budget.mjs), over
// bursts of long calls (1 to 4 workers, answers in step or spread out, the
// measured pass cost and four times it) and of tiny ones. Two broken
// variants of the rule must be caught. The real host's CPU in a burst is
// checked on the machine by __test__/cpu-bound.test.mjs.

import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { simulateBurst, NeverHalves, NeverSleeps, PollsAfterEveryAnswer, RegrowsAtOnce } from "./model/host-budget.mjs";

const require = createRequire(import.meta.url);
const { POLL_WINDOW_MS } = require("../lib/host/loop.js");

const WAKE_US = 8;
const SETTLE_US = 0.5;
/** Calls vary by up to ±10% (a fixed pattern, so runs repeat). */
const jitter = (k) => (((k * 7919) % 21) - 10) / 100;

/**
 * Every long-call burst shape the model runs (answers from every 250 µs to
 * every 5 ms): the worst over them of the host's CPU per answer against
 * the rule's bound (one wake, one scan, an idle poll of POLL_WINDOW_MS and
 * the pass that ends it), and of its CPU share where workers answer every
 * 500 µs or less often at the measured pass cost.
 */
function worstLongBurst(Loop) {
  let worst = { overBound: 0, share: 0 };
  for (const workers of [1, 2, 3, 4]) {
    for (const callUs of [1000, 5000]) {
      for (const spread of [0, 0.01, 0.2, 0.5]) {
        for (const passUs of [4, 16]) {
          // Worker w starts spread * w / workers of a call after the first.
          const phaseUs = Array.from({ length: workers }, (_, w) => (callUs * spread * w) / workers);
          const calls = 100 * workers;
          const r = simulateBurst({
            Loop,
            workers,
            callUs,
            calls,
            phaseUs,
            passUs,
            jitter,
            wakeUs: WAKE_US,
            settleUs: SETTLE_US,
          });
          assert.ok(r.settledAll, "every answer is seen");
          // An idle poll ends at the first pass after POLL_WINDOW_MS.
          const bound = WAKE_US + 2 * passUs + POLL_WINDOW_MS * 1000 + SETTLE_US;
          const overBound = r.hostCpuUs / r.answers / bound;
          const share = callUs / workers >= 500 && passUs === 4 ? r.hostCpuUs / r.wallUs : 0;
          const shape = { workers, callUs, spread, passUs, rings: r.rings };
          if (overBound > worst.overBound) worst = { ...worst, overBound, at: shape };
          if (share > worst.share) worst = { ...worst, share, shareAt: shape };
        }
      }
    }
  }
  return worst;
}

test("host model: while workers run calls of 1 ms or more, an answer costs one wake and a short poll", () => {
  const worst = worstLongBurst(undefined);
  assert.ok(worst.overBound <= 1, `worst burst: ${JSON.stringify(worst)}`);
  // 2 workers on 1 ms calls: well under 10% of a core.
  assert.ok(worst.share < 0.1, `worst burst: ${JSON.stringify(worst)}`);
});

test("host model: answers of tiny calls are mostly caught by polling, not by waking", () => {
  const calls = 20_000;
  const r = simulateBurst({ workers: 2, callUs: 5, calls, passUs: 2 });
  assert.ok(r.settledAll);
  // The budget grows while polling pays: few answers need a ring.
  assert.ok(r.rings < calls / 20, `${r.rings} rings for ${calls} answers`);
});

test("host model catches a budget that never halves", () => {
  const worst = worstLongBurst(NeverHalves);
  assert.ok(worst.share >= 0.1, `the broken rule was not caught: ${JSON.stringify(worst)}`);
});

test("host model catches a host that polls for the whole burst", () => {
  const r = simulateBurst({ Loop: NeverSleeps, workers: 2, callUs: 1000, calls: 100 });
  assert.ok(r.settledAll);
  assert.ok(r.hostCpuUs / r.wallUs > 0.9, `host share ${r.hostCpuUs / r.wallUs}`);
  assert.equal(r.rings, 0);
});

/**
 * A caller keeping 4 calls of 0.5 ms in flight on 2 workers, on 2 cores
 * the workers keep busy, where a yield of the host costs a time slice
 * (1 ms): the share of the ideal throughput (2 calls per 0.5 ms) and the
 * 90th percentile of the time from an answer's publication to its settling.
 */
function closedLoop(Loop) {
  const workers = 2;
  const callUs = 500;
  const calls = 2_000;
  const r = simulateBurst({ Loop, workers, callUs, calls, inflight: 4, yieldUs: 1000, jitter, wakeUs: WAKE_US });
  assert.ok(r.settledAll, "every answer is seen");
  const ideal = (calls * callUs) / workers;
  return { share: ideal / r.wallUs, p90: r.latencyUs[Math.floor(r.latencyUs.length * 0.9)], rings: r.rings };
}

test("host model: with a few long calls in flight, the host sleeps after each answer instead of yielding", () => {
  const r = closedLoop(undefined);
  assert.ok(r.share > 0.9, `throughput ${JSON.stringify(r)}`);
  // A ring and a pass or two, never a lost time slice.
  assert.ok(r.p90 < 100, `answer to settle p90 ${JSON.stringify(r)}`);
});

test("host model catches a budget whose floor polls (and yields) after every answer", () => {
  const r = closedLoop(PollsAfterEveryAnswer);
  assert.ok(r.share < 0.9 || r.p90 >= 100, `the broken rule was not caught: ${JSON.stringify(r)}`);
});

test("host model catches a budget that grows back at once after a yield lost the core", () => {
  const r = closedLoop(RegrowsAtOnce);
  assert.ok(r.share < 0.9 || r.p90 >= 100, `the broken rule was not caught: ${JSON.stringify(r)}`);
});
