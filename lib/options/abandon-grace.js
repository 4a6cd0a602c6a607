"use strict";
// worker.abandonGraceMs: how long a call its caller gave up on (a timeout,
// an AbortSignal, .reject()) may still hold its worker's thread before that
// worker is replaced (host/calls.js, onAbandonGrace). A number of ms, or
// false: the worker runs a given-up call to its end.

const { optionError, describe } = require("./checks.js");

// scripts/measure-abandon-grace.mjs (2026-12-06, Node 20.20, 2 vCPUs, idle
// and beside a busy core): a synchronous call 5% to 100% over its 50 ms
// timeout freed the thread within its own excess work plus 1-4 ms (max 6 ms)
// of timer and hop delay. 1 s is far beyond that noise, and beyond a
// just-finishing call slowed a few times by a loaded machine, while a stuck
// worker holds up the calls behind it for 1 s at most.
const DEFAULT_ABANDON_GRACE_MS = 1000;

function resolveAbandonGrace(ms) {
  if (ms !== false && (typeof ms !== "number" || !Number.isFinite(ms) || ms <= 0)) {
    throw optionError(
      typeof ms === "number" ? RangeError : TypeError,
      `knitting-native: worker.abandonGraceMs must be a positive number of milliseconds, or false (a given-up ` +
        `call's worker runs it to its end), got ${describe(ms)}`,
    );
  }
  return ms;
}

module.exports = { DEFAULT_ABANDON_GRACE_MS, resolveAbandonGrace };
