"use strict";
// What a pool tells its listeners (`pool.on(name, listener)`):
// - "drain": the queue was full (maxQueue) and is empty again (server/queue-limit.js);
// - "workerCreate" { index, threadId, pid }: a worker was started (at
//   creation, or to replace one);
// - "workerExit" { index, threadId, pid, code, signal, reason, error }: a
//   worker ended; `reason` is "shutdown", "recycle" (recycle: "calls" or
//   "memory"), "idle" (an elastic pool shrinking, server/elastic.js),
//   "hardTimeout", "abandoned" (worker.abandonGraceMs), "startFailed" or "crash".
// Listeners run after the pool has finished reacting (a microtask later):
// a listener that throws, or makes or shuts down calls, cannot leave the
// pool half-updated. So listeners added right after createPool() also hear
// of the first workers. A "drain" nobody listens to costs a counter check.

const { CODE } = require("../errors.js");
const { EventEmitter } = require("node:events");

const EVENTS = ["drain", "workerCreate", "workerExit"];
// Accepted, never emitted: events.once(pool, name) listens for "error" too.
const LISTENABLE = [...EVENTS, "error"];

class PoolEvents {
  constructor() {
    this.emitter = new EventEmitter();
  }

  emit(name, detail) {
    if (this.emitter.listenerCount(name) === 0) return;
    queueMicrotask(() => this.emitter.emit(name, detail));
  }

  /** As emit, but whoever listens by the time the microtask runs hears it (rare events: workers start and end). */
  emitLater(name, detail) {
    queueMicrotask(() => this.emitter.emit(name, detail));
  }

  workerCreated(index, worker) {
    this.emitLater("workerCreate", {
      index,
      threadId: worker.pid === undefined ? worker.threadId : undefined,
      pid: worker.pid,
    });
  }

  workerExited(index, worker, code, signal, reason, recycle, error) {
    this.emitLater("workerExit", {
      index,
      threadId: worker.pid === undefined ? worker.threadId : undefined,
      pid: worker.pid,
      code,
      signal: signal || null,
      reason,
      recycle: recycle === null || recycle === "idle" ? undefined : recycle,
      error: error === null ? undefined : error,
    });
  }

  /** `pool.on`/`once`/`off`: checks the name so a typo is an error, not silence. */
  listen(method, name, listener) {
    if (!LISTENABLE.includes(name)) {
      const err = new TypeError(
        `knitting-native: pool.${method}(name, listener): unknown event ${JSON.stringify(String(name))}; ` +
          `events: ${EVENTS.map((e) => JSON.stringify(e)).join(", ")}`,
      );
      err.code = CODE.INVALID_OPTION;
      throw err;
    }
    if (typeof listener !== "function") {
      const err = new TypeError(`knitting-native: pool.${method}("${name}", listener): listener must be a function`);
      err.code = CODE.INVALID_OPTION;
      throw err;
    }
    if (method === "off") this.emitter.off(name, listener);
    else this.emitter[method](name, listener);
  }
}

/**
 * Why a worker exited, from what the pool knows at its exit: `recycled` (its
 * recycle reason or null), `killed` (the error the host terminated it for, or
 * null), whether the pool is closing, whether the worker was ever ready.
 */
function exitReason(recycled, killed, closing, everReady) {
  if (recycled === "idle") return "idle";
  if (recycled !== null) return "recycle";
  // Terminated by the host, even if it ends after shutdown began.
  if (killed !== null) return killed.code === CODE.ABANDONED_CALL ? "abandoned" : "hardTimeout";
  if (closing) return "shutdown";
  if (!everReady) return "startFailed";
  return "crash";
}

module.exports = { PoolEvents, exitReason, EVENTS };
