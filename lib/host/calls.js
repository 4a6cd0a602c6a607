"use strict";
// A call's life on the host, whatever the topology: submitted (checked,
// given an abort word, a timeout, an AbortSignal listener), queued or
// placed (host/slots.js), and settled exactly once (finish). Methods of Pool
// (host/pool.js), which holds the state they share.

const hard = require("./hard-timeout.js");
const { queueFullError } = require("../server/queue-limit.js");
const { isPowerOfTwo } = require("./loop.js");
const { MODES } = require("../protocol/stream.js");
const { publicStream, streamWindow, DEFAULT_WINDOW } = require("./streams.js");
const Slot = require("../protocol/slot.js");
const { SharedBytes } = require("../payload/shared-bytes.js");
const { SHARED_BYTES_ERROR, codecError } = require("../codec/index.js");
const {
  CODE,
  timeoutError,
  hardTimeoutError,
  abandonedCallError,
  abortError,
  signalsExhaustedError,
  unreadableError,
  placeValueError,
  shutdownError,
} = require("../errors.js");

/** A SharedBytes argument no worker can take: of a streaming call, one with onProgress, a pool without workers. */
function streamBytesError(name) {
  return codecError(
    TypeError,
    SHARED_BYTES_ERROR,
    `knitting-native: a SharedBytes cannot be the argument of a streaming call, of one with onProgress, ` +
      `or of a pool with threads: 0 ("${name}"): pass it to pool.call.${name}() of a pool with workers, ` +
      "or copy its bytes (bytes.u8.slice())",
  );
}

/** `signal.progress` on the inline lane, which takes no call that reports progress. */
const noProgress = () => {};

// A pool's states (host/pool.js moves it from one to the next; calls are taken only while OPEN).
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
    this.shared = null; // seqs of the SharedArrayBuffers its argument names (payload/shared-refs.js)
    this.submittedAt = 0; // performance.now() at submission, with `stats: true` (server/stats.js)
    this.stream = null; // a streaming call's (or progress-reporting call's) HostStream (host/streams.js)
    this.bytes = null; // a SharedBytes argument's ticket (payload/shared-bytes.js)
  }
}

/** What only some calls need; kept off Call so the common call stays small. */
class CallExtra {
  constructor() {
    this.timer = null; // task timeout
    this.hardTimer = null; // worker.hardTimeoutMs
    this.abandonTimer = null; // worker.abandonGraceMs, once its caller gave it up
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
    // A SharedBytes argument no worker took goes back to the region.
    if (call.bytes !== null) this.bytes.settled(call.bytes);
    if (ok) call.resolve(value);
    else if (late) this.shutdownGate.then(() => call.reject(value));
    else call.reject(value);
    if (this.pending === 0 && this.drainedResolve !== null && this.broadcasts.idle()) this.drainedResolve();
  },

  /** The worker is done with the call's shared words: its abort word, and a stream's channel. */
  releaseSignal(call) {
    if (call.signal >= 0) {
      this.freeSignals.push(call.signal);
      call.signal = -1;
    }
    if (call.stream !== null) this.streams.released(call);
  },

  /** The `signal` an abort-aware task gets when it runs on the inline lane. */
  abortToolkit(call) {
    const word = this.abortBase + call.signal;
    // progress(): the inline lane takes no call that reports progress (host/topology/inline.js).
    return { hasAborted: () => Atomics.load(this.i32, word) !== 0, now: () => performance.now(), progress: noProgress };
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

  /**
   * `timeLeft`: what remains of the task timeout (a call whose argument was a
   * promise). `stream`: the HostStream of a streaming call (pool.stream), or null.
   */
  submit(task, arg, callOptions, timeLeft, stream = null) {
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
      let options;
      try {
        options = checkCallOptions(callOptions, this.table[task].name, stream !== null);
      } catch (err) {
        return this.early(task, Promise.reject(err));
      }
      abortSignal = options.signal;
      if (abortSignal !== null && abortSignal.aborted)
        return this.early(task, Promise.reject(abortError(abortSignal.reason)));
      // onProgress: the call reports through a channel of its own (host/streams.js).
      if (options.onProgress !== null) stream = this.streams.create(MODES.PROGRESS, 1, options.onProgress);
    }
    let isPromise;
    try {
      isPromise = arg instanceof Promise;
    } catch (err) {
      // A revoked Proxy, or a getPrototypeOf trap that throws.
      return this.early(task, Promise.reject(placeValueError(unreadableError(err), this.table[task].name, "argument")));
    }
    if (isPromise) return this.submitAfter(task, arg, callOptions, abortSignal, stream);
    let bytes = null;
    if (arg instanceof SharedBytes) {
      // Handed over now: the caller's handle is spent while the call waits for a slot.
      try {
        if (stream !== null || this.options.threads === 0) throw streamBytesError(this.table[task].name);
        bytes = this.bytes.enqueue(arg);
      } catch (err) {
        return this.early(task, Promise.reject(err));
      }
    }
    const entry = this.table[task];
    const call = new Call(task, arg, this.nextCallId++ | 0);
    call.bytes = bytes;
    const promise = new Promise((resolve, reject) => {
      call.resolve = resolve;
      call.reject = reject;
    });
    if (this.pending++ === 0) this.liveness.setCalls(true);
    this.stats.submitted1(call);
    if (stream !== null) {
      const refused = this.streams.attach(stream, call);
      if (refused !== null) {
        this.finish(call, false, refused);
        return this.early(task, promise);
      }
    }
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
        const wasDone = call.done;
        this.finish(call, false, reason);
        if (!wasDone) this.gaveUp(call);
      };
    }
    if (entry.timeout !== null) {
      const time = timeLeft === undefined ? entry.timeout.time : timeLeft;
      extraOf(call).timer = setTimeout(() => this.onTimeout(call, entry), time);
    }
    if (abortSignal !== null) {
      const extra = extraOf(call);
      extra.abortSignal = abortSignal;
      extra.onAbort = () => {
        if (this.debug) this.debug("signals", `call ${call.id} of "${entry.name}" aborted by its AbortSignal`);
        this.raiseAbort(call);
        this.finish(call, false, abortError(abortSignal.reason));
        this.gaveUp(call);
      };
      abortSignal.addEventListener("abort", extra.onAbort, { once: true });
    }
    const placesAtOnce = this.topology.placesAtOnce;
    if (this.queue.size === 0 && placesAtOnce) {
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

  /**
   * pool.stream.<name>(arg, options): the call, submitted with a channel for
   * what it yields; returns the caller's async iterator (host/streams.js).
   */
  submitStream(task, arg, callOptions) {
    let window = DEFAULT_WINDOW;
    let settled;
    try {
      const given = callOptions !== null && typeof callOptions === "object" ? callOptions.window : undefined;
      window = streamWindow(given, this.table[task].name);
    } catch (err) {
      settled = Promise.reject(err);
    }
    const stream = this.streams.create(MODES.STREAM, window, null);
    if (settled === undefined) settled = this.submit(task, arg, callOptions, undefined, stream);
    stream.settled = settled.then(
      (value) => stream.ended(true, value),
      (err) => {
        stream.ended(false, err);
        throw err;
      },
    );
    stream.settled.catch(() => {}); // seen through the iterator
    return publicStream(stream);
  },

  /** `call` waits for a slot, unless maxQueue calls already do: then it is refused (server/queue-limit.js). */
  enqueue(call) {
    const limit = this.queueLimit;
    if (limit !== null && !limit.admit(this.queue.size, this.topology.placesAtOnce ? null : this.makeRoomBound)) {
      this.stats.refused();
      this.finish(call, false, queueFullError(limit.max, this.table[call.task].name));
      return;
    }
    this.queue.push(call);
    if (this.elastic !== null) this.scheduleFlush(); // the flush starts workers for waiting calls (server/elastic.js)
  },

  /**
   * A call whose argument is a promise: submitted once it resolves. Until
   * then its AbortSignal and its task timeout (counted from this call) still
   * settle it, as soon as they fire; the argument's value is then dropped.
   */
  submitAfter(task, argPromise, callOptions, abortSignal, stream) {
    const entry = this.table[task];
    const madeAt = performance.now();
    let inner = null;
    let settleOuter;
    let gaveUp = false; // settled before its argument did (aborted, timed out, shut down)
    let timer = null;
    let onAbort = null;
    const stopWatching = () => {
      if (timer !== null) clearTimeout(timer);
      if (onAbort !== null) abortSignal.removeEventListener("abort", onAbort);
      timer = null;
      onAbort = null;
    };
    // `late`: a rejection by shutdown, settled once shutdown has resolved (see finish).
    const giveUp = (ok, value, late = false) => {
      if (gaveUp || inner !== null) return;
      gaveUp = true;
      this.awaitingArg.delete(abandon);
      stopWatching();
      if (late) this.shutdownGate.then(() => settleOuter(ok, value));
      else settleOuter(ok, value);
    };
    // Until the argument settles the call is in no queue and no slot, so
    // shutdown reaches it through `awaitingArg` (an argument that never
    // settles must not leave the call pending forever).
    const abandon = (reason, late = false) => giveUp(false, reason, late);
    const outer = new Promise((resolve, reject) => {
      settleOuter = (ok, value) => (ok ? resolve(value) : reject(value));
      argPromise.then(
        (value) => {
          if (gaveUp) return;
          this.awaitingArg.delete(abandon);
          stopWatching();
          if (abortSignal !== null && abortSignal.aborted) {
            reject(abortError(abortSignal.reason));
            return;
          }
          // The timeout counts from the call, not from its argument's arrival.
          const left =
            entry.timeout === null ? undefined : Math.max(1, entry.timeout.time - (performance.now() - madeAt));
          inner = this.submit(task, value, callOptions, left, stream);
          inner.then(resolve, reject);
        },
        (err) => {
          if (gaveUp) return;
          this.awaitingArg.delete(abandon);
          stopWatching();
          reject(err);
        },
      );
    });
    this.awaitingArg.add(abandon);
    if (abortSignal !== null) {
      onAbort = () => {
        if (this.debug) this.debug("signals", `a call of "${entry.name}" aborted while its argument was pending`);
        giveUp(false, abortError(abortSignal.reason));
      };
      abortSignal.addEventListener("abort", onAbort, { once: true });
    }
    if (entry.timeout !== null) {
      timer = setTimeout(() => {
        timer = null;
        if (this.debug) this.debug("signals", `a call of "${entry.name}" timed out while its argument was pending`);
        const { kind, value } = entry.timeout;
        if (kind === "default") giveUp(true, value);
        else if (kind === "error") giveUp(false, value);
        else giveUp(false, timeoutError(entry.name, entry.timeout.time));
      }, entry.timeout.time);
    }
    if (entry.abortAware) {
      outer.reject = (reason) => {
        if (inner !== null) inner.reject(reason);
        else abandon(reason);
        settleOuter(false, reason);
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
    const queued = this.queue.size;
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
    this.gaveUp(call);
  },

  /**
   * Its caller gave `call` up (timeout, AbortSignal, `.reject()`) while a
   * worker holds it: if after worker.abandonGraceMs the call still holds
   * that worker's thread, the worker is replaced (onAbandonGrace). Unref'd:
   * a given-up call keeps no process alive.
   */
  gaveUp(call) {
    if (this.abandonGraceMs === false || call.lane === null || call.lane.inline) return;
    const extra = extraOf(call);
    if (extra.abandonTimer !== null) return;
    extra.abandonTimer = setTimeout(() => this.onAbandonGrace(call), this.abandonGraceMs);
    extra.abandonTimer.unref();
  },

  /**
   * worker.abandonGraceMs after a call was given up. Still RUNNING (a
   * synchronous task holding the thread): its worker is terminated and
   * replaced, as for worker.hardTimeoutMs, so calls behind it do not wait
   * forever. Not started yet: another period, since it holds the thread
   * once it starts. AWAITING (an async task, the thread free; the word stays
   * so however its continuations run), answered, gone from its slot, or its
   * worker already being replaced: nothing to do.
   */
  onAbandonGrace(call) {
    call.extra.abandonTimer = null;
    const slots = call.lane;
    if (this.state === CLOSED || slots === null || slots.calls[call.slot] !== call) return;
    const lane = this.topology.workerOf(call);
    const state = Slot.startedOf(this.i32, slots.slotWord(call.slot));
    if (state === Slot.STARTED.AWAITING || state === Slot.STARTED.ANSWERED) return;
    if (lane >= 0 && this.killedFor[lane] !== null) return;
    if (state !== Slot.STARTED.RUNNING || lane < 0 || this.workers[lane] === null) {
      this.gaveUp(call);
      return;
    }
    const err = abandonedCallError(this.table[call.task].name, this.abandonGraceMs, lane);
    if (this.debug)
      this.debug(
        "host",
        `worker ${lane} still runs given-up call ${call.id} after worker.abandonGraceMs: replacing it`,
      );
    this.replaceWorker(lane, err);
  },

  /**
   * worker.hardTimeoutMs passed since the call was handed to a worker:
   * replace that worker if this call, or a settled call, holds its thread
   * (host/hard-timeout.js says which); otherwise the call gets another period.
   */
  onHardTimeout(call) {
    call.extra.hardTimer = null;
    if (call.done || call.lane === null) return;
    const { verdict, lane, holder } = hard.judge(this.hardTimeoutView, call);
    if (verdict === hard.WAIT || this.killedFor[lane] !== null) {
      // Being replaced already: the exit settles it, or places it again.
      if (this.killedFor[lane] === null || lane < 0)
        call.extra.hardTimer = setTimeout(() => this.onHardTimeout(call), this.hardTimeoutMs);
      return;
    }
    const err = hardTimeoutError(this.table[holder.task].name, this.hardTimeoutMs, lane);
    if (this.debug) this.debug("host", `worker ${lane} passed worker.hardTimeoutMs on call ${holder.id}: replacing it`);
    if (this.workers[lane] !== null) this.replaceWorker(lane, err);
    if (verdict === hard.BLAME_CALL) this.finish(call, false, err);
  },

  /**
   * Ends worker `lane` for `err` (a hard timeout, a given-up call holding its
   * thread); the exit handler (host/pool.js) starts its replacement. From here on
   * no new call goes to it (liveChoices), and a call it claimed and never
   * started is placed again at its exit.
   */
  replaceWorker(lane, err) {
    this.killedFor[lane] = err;
    this.topology.workersChanged();
    this.workers[lane].terminate();
  },
};

/** The second argument of `pool.call.x(arg, options)`; returns its signal or null. */
/**
 * A call's options: { signal, onProgress } for pool.call, { signal, window }
 * for pool.stream (`streaming`; host/streams.js checks the window).
 */
function checkCallOptions(callOptions, name, streaming) {
  try {
    return readCallOptions(callOptions, name, streaming);
  } catch (err) {
    err.code = CODE.INVALID_OPTION;
    throw err;
  }
}

function readCallOptions(callOptions, name, streaming) {
  const where = `pool.${streaming ? "stream" : "call"}.${name}(arg, options)`;
  const allowed = streaming ? ["signal", "window"] : ["signal", "onProgress"];
  if (callOptions === null || typeof callOptions !== "object") {
    throw new TypeError(`knitting-native: ${where}: options must be an object like { ${allowed.join(", ")} }`);
  }
  for (const key of Object.keys(callOptions)) {
    if (!allowed.includes(key))
      throw new TypeError(`knitting-native: ${where}: unknown option ${key}; allowed: ${allowed.join(", ")}`);
  }
  const { signal, onProgress } = callOptions;
  if (
    signal !== undefined &&
    (signal === null ||
      typeof signal !== "object" ||
      typeof signal.aborted !== "boolean" ||
      typeof signal.addEventListener !== "function")
  ) {
    throw new TypeError(`knitting-native: ${where}: signal must be an AbortSignal`);
  }
  if (!streaming && onProgress !== undefined && typeof onProgress !== "function") {
    throw new TypeError(`knitting-native: ${where}: onProgress must be a function (value) => void`);
  }
  return { signal: signal === undefined ? null : signal, onProgress: onProgress === undefined ? null : onProgress };
}

module.exports = { Call, extraOf, callMethods, OPEN, DRAINING, CLOSED };
