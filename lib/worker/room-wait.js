"use strict";
// A worker's answers that found the payload region full (payload/region.js): they
// are kept here, in order, and written once blocks are freed; never
// dropped. The worker keeps serving meanwhile (it must: the arguments of
// the calls it has yet to start hold room only it can free), and when it
// would park it parks on the region's ROOM_SEQ word instead, woken by
// whoever frees a block or publishes calls.

const { NO_ROOM } = require("../payload/region.js");

class WaitingAnswers {
  /**
   * `payload`: the worker's PayloadRegion. `hooks`: `write(slot, status,
   * len, ext)` finishes a slot's answer; `flush()` publishes finished
   * answers; `sleep(index, value, wake)` parks on a control word;
   * `hasWork()` tells whether calls wait to be started; `resume()` runs the
   * serve loop again; `ring()` makes the host drain.
   */
  constructor(payload, hooks) {
    this.payload = payload;
    this.hooks = hooks;
    this.queue = []; // { slot, status, bytes }, oldest first
    this.parked = false;
  }

  get size() {
    return this.queue.length;
  }

  /** `bytes` (the worker's own copy) found no room: keep the answer. */
  defer(slot, status, bytes) {
    this.queue.push({ slot, status, bytes });
  }

  /**
   * Writes waiting answers, oldest first, while there is room (a younger
   * one never takes the room an older one waits for); true if any was
   * written (the caller flushes).
   */
  retry() {
    const queue = this.queue;
    let n = 0;
    while (n < queue.length) {
      const { slot, status, bytes } = queue[n];
      let ext;
      try {
        ext = this.payload.tryWrite(bytes);
      } catch (err) {
        // The region refused it outright (it checked the size when the
        // answer was first deferred, so the region is broken): say so.
        this.hooks.writeError(slot, err);
        n++;
        continue;
      }
      if (ext === NO_ROOM) break;
      this.hooks.write(slot, status, bytes.length, ext);
      n++;
    }
    if (n === 0) return false;
    queue.splice(0, n);
    return true;
  }

  /** The serve loop has nothing to start: sleep until room frees or calls arrive. */
  park() {
    if (this.parked) return;
    const seq = this.payload.enterWait();
    // After counting in: a block freed or a call published since is seen
    // here, or moves ROOM_SEQ off `seq` (payload/region.js, nudge).
    if (this.retry() || this.queue.length === 0 || this.hooks.hasWork()) {
      this.payload.leaveWait();
      this.hooks.flush();
      setImmediate(this.hooks.resume);
      return;
    }
    this.parked = true;
    // The host's drain gives back the room its chunk holds when it sees a
    // waiter (payload/region.js): make sure a drain comes.
    this.hooks.ring();
    this.hooks.sleep(this.payload.roomSeq, seq, () => this.woken());
  }

  woken() {
    this.parked = false;
    // Before anything is published: the host resets a count it sees with
    // no call in flight (a waiter always holds one).
    this.payload.leaveWait();
    if (this.retry()) this.hooks.flush();
    this.hooks.resume();
  }
}

module.exports = { WaitingAnswers };
