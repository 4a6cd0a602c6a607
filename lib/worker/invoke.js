"use strict";
// The one place a worker calls a task's function (worker/serve.js's run, and the
// exit guard's wrapper in worker/exit-guard.js), from call sites that V8 never
// inlines a task into.
//
// Why: on Node 24 (V8 13.6) Maglev, V8's mid tier, inlines a small callee
// into its caller when the call site has seen one target. A worker serving
// one task has such a site, so Maglev compiled the task's hot loop inside
// the pool's own frames, where it ran at mid-tier speed and never got the
// optimizing tier's code that a loop called on its own gets (on-stack
// replacement does not reach a loop inlined into a caller): a 0.55 ms
// integer loop took 1.4-2.0 ms per call (2026-12-05, Node 24.19, 2 vCPUs;
// `--no-maglev-inlining` alone restored 0.57 ms). docs/cpu-tiering.md has
// the traces and the measurements; __test__/cpu-bound.test.mjs checks it.
//
// A call site that has seen more targets than V8 tracks (four) turns
// megamorphic for good, and V8 (Maglev and Turbofan alike) inlines no
// target at a megamorphic site; JavaScriptCore (Bun) does likewise for a
// site with many callees. So both sites below are shown distinct functions
// once, at load; a task then runs as its own compiled function, as it does
// when a bare worker calls it, at the cost of one real call (a few ns).

/** `fn(arg)`, or `fn(arg, toolkit)` for an abort-aware task. */
function invoke(fn, arg, toolkit) {
  return toolkit === undefined ? fn(arg) : fn(arg, toolkit);
}

// Distinct function literals (closures of one literal count as one target).
const targets = [(a) => a, (a) => a === 0, (a) => a !== 0, (a) => typeof a, (a) => [a], (a) => ({ a }), (a) => !a];
for (let round = 0; round < 20; round++) {
  for (const f of targets) {
    invoke(f, round);
    invoke(f, round, round);
  }
}

module.exports = { invoke };
