"use strict";
// worker.hardTimeoutMs: which call a worker's overrun is blamed on, and
// keeping new calls off a worker the host has decided to terminate.
//
// A worker runs one call at a time on its thread (STARTED RUNNING, see
// protocol/slot.js); async calls that await (AWAITING) leave it free. So when
// a call's period ends:
//  - RUNNING: the call holds the thread past the limit: it is the runaway.
//  - NOT_STARTED or AWAITING while another call of the same worker is
//    RUNNING: the holder is to blame, and its own timer decides (this call
//    gets another period). If the holder was already settled (its task
//    timeout, say), it has no timer left: the worker is replaced now, and
//    the holder's overrun is the cause.
//  - AWAITING with the thread free: the call itself never finishes: it is
//    the runaway.
//  - NOT_STARTED with the thread free, or ANSWERED: another period.

const Slot = require("../protocol/slot.js");

const { STARTED } = Slot;

const WAIT = 0; // another period
const BLAME_CALL = 1; // this call is the runaway
const BLAME_HOLDER = 2; // a settled call holding the thread is

const stateOf = (pool, slots, slot) => Slot.startedOf(pool.i32, slots.slotWord(slot));

/**
 * What to do about `call` (placed, not settled) whose period ended:
 * `{ verdict, lane, holder }`; `lane` is the worker concerned (-1: none yet).
 */
function judge(pool, call) {
  const slots = call.lane;
  const state = stateOf(pool, slots, call.slot);
  const lane = pool.topology.workerOf(call);
  if (state === STARTED.RUNNING) return { verdict: BLAME_CALL, lane, holder: call };
  if (state === STARTED.ANSWERED || lane < 0) return { verdict: WAIT, lane, holder: null };
  let holder = null;
  for (const held of pool.topology.heldBy(lane)) {
    if (held.call !== call && stateOf(pool, held.slots, held.slot) === STARTED.RUNNING) holder = held.call;
  }
  if (holder !== null) return { verdict: holder.done ? BLAME_HOLDER : WAIT, lane, holder };
  return { verdict: state === STARTED.AWAITING ? BLAME_CALL : WAIT, lane, holder: call };
}

/**
 * Worker `lane` was terminated by the host (call before taking its lane
 * back): the calls it held but never started (queued behind the runaway in
 * its lane, or claimed with it) get their argument decoded back from their
 * slots and are returned unplaced, to be queued again; nothing of theirs
 * ran, so nothing runs twice. Their slots' EXT is cleared so that taking
 * the lane back does not free a block twice.
 */
function recoverUnstarted(pool, lane) {
  const recovered = [];
  for (const { call, slots, slot } of pool.topology.heldBy(lane)) {
    if (call.done || stateOf(pool, slots, slot) !== STARTED.NOT_STARTED) continue;
    // Its SharedArrayBuffers went to the workers by reference, its SharedBytes was sent: not taken back.
    if (call.shared !== null || call.bytes !== null) continue;
    try {
      call.arg = takeRequest(pool, slots, slot);
    } catch {
      continue; // unreadable: it fails with the worker's other calls
    }
    call.lane = null;
    call.slot = -1;
    const extra = call.extra;
    if (extra !== null && extra.hardTimer !== null) {
      clearTimeout(extra.hardTimer); // placing it again starts a new period
      extra.hardTimer = null;
    }
    recovered.push(call);
  }
  return recovered;
}

/** Decodes the request still in a slot (its payload block, if any, is freed). */
function takeRequest(pool, slots, slot) {
  const w = slots.slotWord(slot);
  const len = Slot.lenOf(pool.i32, w);
  const ext = Slot.extOf(pool.i32, w);
  Slot.clearExt(pool.i32, w); // whatever happens below, the block is not freed again
  return pool.payload.readSlot(pool.u8, slots.slotPayload(slot), len, ext, pool.sharedRefs);
}

/** What the hard-timeout judge reads of the pool (host/view.js). */
const POOL_USES = Object.freeze(["i32", "u8", "payload", "sharedRefs", "topology"]);

module.exports = { POOL_USES, judge, recoverUnstarted, WAIT, BLAME_CALL, BLAME_HOLDER };
