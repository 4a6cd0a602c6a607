"use strict";
// Whether a pool keeps the process alive. Its workers (threads or
// processes) are unref'd from the start and the doorbell's ThreadsafeFunction
// is weak (src/bindings.rs), so none of them holds the event loop; this one
// handle does, only while the pool has work: calls pending, workers
// starting (so that `await pool.ready` cannot end the process early) or a
// shutdown in progress. A script that makes a pool, awaits its calls and
// never calls shutdown() therefore ends by itself once the pool is idle.
//
// One timer handle toggled by ref()/unref() rather than every worker: a
// sequential caller flips between busy and idle on every call, and a
// Timeout's ref/unref only moves a counter.

const FOREVER_MS = 2 ** 31 - 1; // never fires: it is only a handle

class Liveness {
  constructor() {
    this.handle = setInterval(() => {}, FOREVER_MS);
    this.handle.unref();
    this.held = false;
    this.calls = false;
    this.broadcasts = false;
    this.starting = false;
    this.closing = false;
  }

  /** Calls are pending (true) or none is (false). */
  setCalls(on) {
    this.calls = on;
    this.apply();
  }

  /** pool.broadcast runs are pending (host/broadcast.js). */
  setBroadcasts(on) {
    this.broadcasts = on;
    this.apply();
  }

  /** Some worker has not finished starting. */
  setStarting(on) {
    this.starting = on;
    this.apply();
  }

  /** shutdown() runs until done(). */
  setClosing(on) {
    this.closing = on;
    this.apply();
  }

  apply() {
    const want = this.calls || this.broadcasts || this.starting || this.closing;
    if (want === this.held) return;
    this.held = want;
    if (want) this.handle.ref();
    else this.handle.unref();
  }

  /** The pool is gone. */
  done() {
    clearInterval(this.handle);
    this.held = false;
  }
}

/** Lets a worker (a Worker or a process handle) not hold the event loop. */
function detach(worker) {
  if (typeof worker.unref === "function") worker.unref();
}

module.exports = { Liveness, detach };
