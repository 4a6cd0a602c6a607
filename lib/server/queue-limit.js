"use strict";
// createPool's `maxQueue`: the most calls that may wait in the host's queue
// for a free slot (every worker holds up to L.slotCount calls in its slots; only
// calls beyond those wait). A call that would wait beyond the limit is
// refused at once with a RangeError (KNT_QUEUE_FULL); calls already taken
// are never affected. So a server sheds load before memory grows.
//
// `needsDrain` latches when the queue reaches the limit (or a call is
// refused) and clears once the queue is empty again, with a "drain" event.
// Clearing at empty rather than just under the limit gives a server that
// pauses on `needsDrain` a whole queue's worth of room when it resumes,
// instead of flapping at the limit on every settled call (the way a
// writable stream's "drain" means "the buffer is empty", not "one byte
// left").

const { CODE } = require("../errors.js");
/** The call was refused: `max` calls already wait for a slot. */
function queueFullError(max, name) {
  const err = new RangeError(
    `knitting-native: cannot queue "${name}": ${max} calls already wait for a free worker slot (maxQueue ${max}); ` +
      'shed the request, or wait for the pool\'s "drain" event',
  );
  err.code = CODE.QUEUE_FULL;
  return err;
}

class QueueLimit {
  /** `emit(name)`: tells the pool's listeners (server/events.js). */
  constructor(max, emit) {
    this.max = max;
    this.emit = emit;
    this.needsDrain = false;
    this.makingRoom = false; // admit() is pumping: the queue empties only for a moment
  }

  /**
   * Whether one more call may wait, with `queued` calls waiting now; false
   * means refuse it. `make room` (the serial-channel dispatcher's pump,
   * whose queue also holds calls that are only waiting for the next
   * dispatch pass) is tried before refusing.
   */
  admit(queued, makeRoom) {
    if (queued >= this.max && makeRoom !== null) {
      this.makingRoom = true;
      try {
        queued = makeRoom();
      } finally {
        this.makingRoom = false;
      }
    }
    if (queued >= this.max) {
      this.needsDrain = true;
      return false;
    }
    if (queued + 1 >= this.max) this.needsDrain = true;
    return true;
  }

  /** After a pass that moved queued calls into slots: `queued` still wait. */
  pumped(queued) {
    if (!this.needsDrain || queued !== 0 || this.makingRoom) return;
    this.needsDrain = false;
    this.emit("drain");
  }
}

module.exports = { QueueLimit, queueFullError };
