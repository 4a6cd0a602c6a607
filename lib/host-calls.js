"use strict";
// A call's life on the host, whatever the topology: submitted (checked,
// given an abort word, a timeout, an AbortSignal listener), queued or
// placed (host-slots.js), and settled exactly once (finish). Methods of Pool
// (pool.js), which holds the state they share.

const hard = require("./hard-timeout.js");
const { queueFullError } = require("./queue-limit.js");
const { isPowerOfTwo } = require("./host-loop.js");
const {
  timeoutError,
  hardTimeoutError,
  abortError,
  signalsExhaustedError,
  unreadableError,
  shutdownError,
} = require("./errors.js");

// A pool's states (pool.js moves it from one to the next; calls are taken only while OPEN).
const OPEN = 0;
const DRAINING = 1; // shutdown() waits for submitted calls; new calls reject
const CLOSED = 2;

class Call {
  constructor(task, arg, id) {
    this.task = task;
    this.arg = arg;
    this.id = id;
    this.resolve = null;
    this.reject = null;
    this.done = false; // settled: a late response is dropped
    this.lane = null; // the lane holding it, once placed
    this.slot = -1;
    this.signal = -1; // abort word index, for abort-aware tasks
    this.extra = null; // timers and listeners, only for calls that use them
    this.shared = null; // seqs of the SharedArrayBuffers its argument names (shared-refs.js)
    this.submittedAt = 0; // performance.now() at submission, with `stats: true` (stats.js)
  }
}

/** What only some calls need; kept off Call so the common call stays small. */
class CallExtra {
  constructor() {
    this.timer = null; // task timeout
    this.hardTimer = null; // worker.hardTimeoutMs
    this.abortSignal = null; // a caller's AbortSignal
    this.onAbort = null;
    this.encoded = null; // its argument's bytes, while it waits for room in the payload region
  }
}

function extraOf(call) {
  if (call.extra === null) call.extra = new CallExtra();
  return call.extra;
}

const callMethods = {
  /**
   * Settles a call once; later attempts (a late response, a late timer) do
   * nothing. `late`: a rejection by shutdown, whose promise rejects only once
   * shutdown() has resolved (the bookkeeping is done now).
   */
  finish(call, ok, value, late = false) {
    if (call.done) return;
    call.done = true;
    const extra = call.extra;
    if (extra !== null) {
      if (extra.timer !== null) clearTimeout(extra.timer);
      if (extra.hardTimer !== null) clearTimeout(extra.hardTimer);
      if (extra.onAbort !== null) extra.abortSignal.removeEventListener("abort", extra.onAbort);
    }
    if (call.lane === null) this.releaseSignal(call); // never placed: no worker reads it
    if (--this.pending === 0) this.liveness.setCalls(false);
    this.stats.settled(ok);
    if (call.shared !== null) this.sharedRefs.release(call.shared);
    if (ok) call.resolve(value);
    else if (late) this.shutdownGate.then(() => call.reject(value));
    else call.reject(value);
    if (this.pending === 0 && this.drainedResolve !== null) this.drainedResolve();
  },

  releaseSignal(call) {
    if (call.signal >= 0) {
      this.freeSignals.push(call.signal);
      call.signal = -1;
    }
  },

  /** The `signal` an abort-aware task gets when it runs on the inline lane. */
  abortToolkit(call) {
    const word = this.abortBase + call.signal;
    return { hasAborted: () => Atomics.load(this.i32, word) !== 0, now: () => performance.now() };
  },

  /** Marks an abort-aware call's shared abort word (its `signal.hasAborted()`). */
  raiseAbort(call) {
    if (call.signal >= 0) Atomics.store(this.i32, this.abortBase + call.signal, 1);
  },

  /** A call that settles before it is placed (rejected at once, or waiting for its argument). */
  early(task, promise) {
    // An abort-aware call's promise always carries reject(); settled, it does nothing.
    if (this.table[task].abortAware && promise.reject === undefined) promise.reject = () => {};
    return promise;
  },

  submit(task, arg, callOptions) {
    if (this.state !== OPEN) {
      // Made after shutdown(): rejects once shutdown has resolved, like the calls it rejects.
      const err = shutdownError();
      return this.early(
        task,
        this.shutdownGate.then(() => Promise.reject(err)),
      );
    }
    if (this.failure !== null) return this.early(task, Promise.reject(this.failure));
    let abortSignal = null;
    if (callOptions !== undefined) {
      try {
        abortSignal = checkCallOptions(callOptions, this.table[task].name);
      } catch (err) {
        return this.early(task, Promise.reject(err));
      }
      if (abortSignal !== null && abortSignal.aborted)
        return this.early(task, Promise.reject(abortError(abortSignal.reason)));
    }
    let isPromise;
    try {
      isPromise = arg instanceof Promise;
    } catch (err) {
      // A revoked Proxy, or a getPrototypeOf trap that throws.
      return this.early(task, Promise.reject(unreadableError(err)));
    }
    if (isPromise) return this.submitAfter(task, arg, callOptions, abortSignal);
    const entry = this.table[task];
    const call = new Call(task, arg, this.nextCallId++ | 0);
    const promise = new Promise((resolve, reject) => {
      call.resolve = resolve;
      call.reject = reject;
    });
    if (this.pending++ === 0) this.liveness.setCalls(true);
    this.stats.submitted1(call);
    if (entry.abortAware) {
      if (this.freeSignals.length === 0) {
        this.finish(call, false, signalsExhaustedError(this.options.abortSignalCapacity, entry.name));
        return this.early(task, promise);
      }
      call.signal = this.freeSignals.pop();
      Atomics.store(this.i32, this.abortBase + call.signal, 0);
      // knitting's way: the promise of an abort-aware call can abort it.
      promise.reject = (reason) => {
        this.raiseAbort(call);
        this.finish(call, false, reason);
      };
    }
    if (entry.timeout !== null) {
      extraOf(call).timer = setTimeout(() => this.onTimeout(call, entry), entry.timeout.time);
    }
    if (abortSignal !== null) {
      const extra = extraOf(call);
      extra.abortSignal = abortSignal;
      extra.onAbort = () => {
        if (this.debug) this.debug("signals", `call ${call.id} of "${entry.name}" aborted by its AbortSignal`);
        this.raiseAbort(call);
        this.finish(call, false, abortError(abortSignal.reason));
      };
      abortSignal.addEventListener("abort", extra.onAbort, { once: true });
    }
    const placesAtOnce = this.topology.placesAtOnce;
    if (this.queueHead === this.queue.length && placesAtOnce) {
      if (!this.place(call)) this.enqueue(call);
    } else {
      // serial-channel: one dispatch pass per burst places the queue (flush).
      this.enqueue(call);
      if (!placesAtOnce) this.scheduleFlush();
    }
    if (this.debug) this.traceQueue();
    this.loop.kick();
    return promise;
  },

  /** `call` waits for a slot, unless maxQueue calls already do: then it is refused (queue-limit.js). */
  enqueue(call) {
    const limit = this.queueLimit;
    if (
      limit !== null &&
      !limit.admit(this.queue.length - this.queueHead, this.topology.placesAtOnce ? null : this.makeRoomBound)
    ) {
      this.stats.refused();
      this.finish(call, false, queueFullError(limit.max, this.table[call.task].name));
      return;
    }
    this.queue.push(call);
    if (this.elastic !== null) this.scheduleFlush(); // the flush starts workers for waiting calls (elastic.js)
  },

  /** A call whose argument is a promise: submitted once it resolves. */
  submitAfter(task, argPromise, callOptions, abortSignal) {
    let inner = null;
    let rejectOuter;
    let abortedWith = null;
    // Until the argument settles the call is in no queue and no slot, so
    // shutdown reaches it through `awaitingArg` (an argument that never
    // settles must not leave the call pending forever).
    const abandon = (reason, late = false) => {
      if (abortedWith !== null) return; // settled already
      this.awaitingArg.delete(abandon);
      abortedWith = { reason };
      if (late) this.shutdownGate.then(() => rejectOuter(reason));
      else rejectOuter(reason);
    };
    const outer = new Promise((resolve, reject) => {
      rejectOuter = reject;
      argPromise.then(
        (value) => {
          if (abortedWith !== null) return;
          this.awaitingArg.delete(abandon);
          if (abortSignal !== null && abortSignal.aborted) {
            reject(abortError(abortSignal.reason));
            return;
          }
          inner = this.submit(task, value, callOptions);
          inner.then(resolve, reject);
        },
        (err) => {
          this.awaitingArg.delete(abandon);
          reject(err);
        },
      );
    });
    this.awaitingArg.add(abandon);
    if (this.table[task].abortAware) {
      outer.reject = (reason) => {
        if (inner !== null) {
          inner.reject(reason);
          rejectOuter(reason);
        } else abandon(reason);
      };
    }
    return outer;
  },

  /** Calls still waiting for their argument reject with `err` (`late`: see finish). */
  abandonAwaitingArg(err, late = false) {
    for (const abandon of [...this.awaitingArg]) abandon(err, late);
  },

  /** host traces: each new power-of-two peak of calls waiting for a slot. */
  traceQueue() {
    const queued = this.queue.length - this.queueHead;
    if (queued >= 64 && queued > this.queuePeak && isPowerOfTwo(queued)) {
      this.queuePeak = queued;
      this.debug("host", `${queued} calls queued behind ${this.inFlight} in slots (every slot busy)`);
    }
  },

  onTimeout(call, entry) {
    call.extra.timer = null;
    if (call.done) return;
    if (this.debug)
      this.debug(
        "signals",
        `task "${entry.name}" call ${call.id} timed out after ${entry.timeout.time} ms (${entry.timeout.kind})`,
      );
    this.raiseAbort(call);
    const { kind, value } = entry.timeout;
    if (kind === "default") this.finish(call, true, value);
    else if (kind === "error") this.finish(call, false, value);
    else this.finish(call, false, timeoutError(entry.name, entry.timeout.time));
  },

  /**
   * worker.hardTimeoutMs passed since the call was handed to a worker:
   * replace that worker if this call, or a settled call, holds its thread
   * (hard-timeout.js says which); otherwise the call gets another period.
   */
  onHardTimeout(call) {
    call.extra.hardTimer = null;
    if (call.done || call.lane === null) return;
    const { verdict, lane, holder } = hard.judge(this, call);
    if (verdict === hard.WAIT || this.killedFor[lane] !== null) {
      // Being replaced already: the exit settles it, or places it again.
      if (this.killedFor[lane] === null || lane < 0)
        call.extra.hardTimer = setTimeout(() => this.onHardTimeout(call), this.hardTimeoutMs);
      return;
    }
    const worker = this.workers[lane];
    const err = hardTimeoutError(this.table[holder.task].name, this.hardTimeoutMs, lane);
    if (this.debug) this.debug("host", `worker ${lane} passed worker.hardTimeoutMs on call ${holder.id}: replacing it`);
    if (worker !== null) {
      // From here on no new call goes to this worker (liveChoices; and a
      // call it claims and never starts is placed again at its exit).
      this.killedFor[lane] = err;
      this.topology.workersChanged();
      worker.terminate();
    }
    if (verdict === hard.BLAME_CALL) this.finish(call, false, err);
  },
};

/** The second argument of `pool.call.x(arg, options)`; returns its signal or null. */
function checkCallOptions(callOptions, name) {
  try {
    return readCallOptions(callOptions, name);
  } catch (err) {
    err.code = "KNT_INVALID_OPTION";
    throw err;
  }
}

function readCallOptions(callOptions, name) {
  if (callOptions === null || typeof callOptions !== "object") {
    throw new TypeError(`knitting-native: pool.call.${name}(arg, options): options must be an object like { signal }`);
  }
  for (const key of Object.keys(callOptions)) {
    if (key !== "signal")
      throw new TypeError(`knitting-native: pool.call.${name}(arg, options): unknown option ${key}; allowed: signal`);
  }
  const { signal } = callOptions;
  if (signal === undefined) return null;
  if (
    signal === null ||
    typeof signal !== "object" ||
    typeof signal.aborted !== "boolean" ||
    typeof signal.addEventListener !== "function"
  ) {
    throw new TypeError(`knitting-native: pool.call.${name}(arg, { signal }): signal must be an AbortSignal`);
  }
  return signal;
}

module.exports = { Call, extraOf, callMethods, OPEN, DRAINING, CLOSED };
