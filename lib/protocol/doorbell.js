"use strict";
// The doorbell's words as JS uses them, both ends (the protocol is written
// up in src/doorbell.rs): a worker announces each publication, the host
// arms before it sleeps. COUNTER and ARMED come from Rust's layout().

const { L } = require("./layout.js");

const W_COUNTER = L.wordCounter;
const W_ARMED = L.wordArmed;

/**
 * Worker, after publishing answers: count the publication, then ring the
 * host if it is armed (`env.ring()`: the Rust WorkerBell, through the
 * protocol's env). Add then load, both
 * sequentially consistent: either the host's re-check sees the count, or
 * this load sees ARMED.
 */
function announce(i32, env) {
  Atomics.add(i32, W_COUNTER, 1);
  if (Atomics.load(i32, W_ARMED) !== 0) env.ring();
}

/** Host, before it scans for answers: the count its scan will have covered. */
const countNow = (i32) => Atomics.load(i32, W_COUNTER);

/**
 * Host, going to sleep after a scan that began at count `counted`: arms,
 * then re-checks the count. False (and disarmed) when a worker published
 * since: drain again instead of sleeping.
 */
function arm(i32, counted) {
  Atomics.store(i32, W_ARMED, 1);
  if (Atomics.load(i32, W_COUNTER) === counted) return true;
  Atomics.store(i32, W_ARMED, 0);
  return false;
}

module.exports = { announce, countNow, arm };
