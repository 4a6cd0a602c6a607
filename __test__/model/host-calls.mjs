// What both models' hosts do with the caller's calls, as host/pool.js does it:
// the caller makes a burst of calls; pump() puts queued calls into free
// slots (the request written, the slot published into the burst), then the
// microtask's flush. Ghost reads go through effects: a replayed step must
// see what it saw the first time.

import { localEffect } from "./checker.mjs";

/** The caller's synchronous code makes the next burst of calls. */
export function callerBurst(ghost, bursts) {
  localEffect(() => {
    ghost.submitted += bursts[ghost.burst];
    ghost.burst++;
  });
}

/**
 * Queued calls into free slots, then one flush. `freeSlot()`: the host's
 * pick (-1: none); `writeRequest(slot, c)`: the model's checks and ghost
 * marks for writing call `c` into `slot` (a slot the host holds and has
 * not published: local).
 */
export function pumpAndFlush(ghost, host, freeSlot, writeRequest) {
  while (localEffect(() => ghost.next < ghost.submitted)) {
    const slot = freeSlot();
    if (slot < 0) break;
    const c = localEffect(() => {
      writeRequest(slot, ghost.next);
      ghost.cells[slot] = { k: "q", c: ghost.next };
      return ghost.next++;
    });
    host.publish(slot, c);
  }
  host.flush();
}
