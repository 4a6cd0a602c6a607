"use strict";
// The host's side of streaming calls (`pool.stream.name(arg)`) and of calls
// that report progress (`pool.call.name(arg, { onProgress })`): a channel
// for each (lib/protocol/stream.js, its block in the payload region), taken
// from on every drain pass, and what the caller holds: an async iterator
// over the values (or its onProgress callback).
//
// A channel lives from the call's submission until its worker is done with
// the call's slot (released(): the answer drained, or the worker dead);
// whatever settles the call earlier (an abort, a timeout, shutdown, the
// caller's break) only stops the worker's generator.

const { HostChannel, CHANNEL_BYTES, STOPS, MODES } = require("../protocol/stream.js");
const { NO_ROOM } = require("../payload/region.js");
const { CODE, codedError, regionCorruptError, shutdownError } = require("../errors.js");

/**
 * How many values a stream's worker may run ahead of its caller unless the
 * call says (`{ window }`). 1,000,000 small values from an async generator,
 * fresh processes, Node 20.20, 2 vCPUs, 2026-12-07 (bench/user/stream.mjs):
 * median 459 ms at 1,024, 348 ms at 4,096, no better at 16,384.
 */
const DEFAULT_WINDOW = 4096;
// About the most bytes of values a stream's worker may run ahead of its caller: the window in values
// shrinks to what this holds at the values' size so far, and no credit is given while the values
// taken and not yet consumed hold more.
const MAX_HELD_BYTES = 16 * 1024 * 1024;
// The credit a stream starts with, before any value's size is known.
const FIRST_CREDIT = 16;
const MAX_WINDOW = 1 << 20;

/** One streaming call's (or progress-reporting call's) host state. */
class HostStream {
  constructor(owner, mode, window, onProgress) {
    this.owner = owner;
    this.mode = mode;
    this.window = window;
    this.onProgress = onProgress; // progress mode only
    this.channel = null; // a HostChannel once submitted
    this.block = 0;
    this.thrown = 0; // the block of an error thrown in (throw(err)), until the worker takes it
    this.values = []; // taken, not yet consumed
    this.head = 0;
    this.consumed = 0;
    this.heldBytes = 0; // bytes of the batches whose values are not all consumed
    this.batches = []; // of those batches, [values not yet consumed, bytes] pairs, oldest first
    this.batchHead = 0;
    this.seenValues = 0; // values and bytes of every batch so far: their size, for the window in bytes
    this.seenBytes = 0;
    this.waiters = []; // next() calls waiting for a value: { resolve, reject }
    this.end = null; // { ok, value } once the call settled
    this.stopped = false; // the caller ended it (values are dropped from then on)
    this.failure = null; // an error to end with, over the call's own outcome (corrupt channel, shutdown)
    this.errorGiven = false; // next() gives the stream's error once; later calls are done
    this.settled = null; // the call's promise, for return()/throw() to wait on
  }

  /** The values taken from a batch of `bytes` bytes. */
  deliver(values, bytes) {
    if (this.mode === MODES.PROGRESS) {
      const onProgress = this.onProgress;
      for (const v of values) queueMicrotask(() => onProgress(v));
      this.consumed += values.length;
      this.channel.consumed(this.consumed);
      return;
    }
    // Stopped by its caller, or settled (aborted, timed out): what still comes is dropped.
    if (this.stopped || this.end !== null || values.length === 0) return;
    this.heldBytes += bytes;
    this.batches.push(values.length, bytes);
    this.seenValues += values.length;
    this.seenBytes += bytes;
    let i = 0;
    while (i < values.length && this.waiters.length !== 0) {
      this.waiters.shift().resolve({ value: values[i++], done: false });
      this.consumedOne();
    }
    for (; i < values.length; i++) this.values.push(values[i]);
    this.grant();
  }

  /** One value went to the caller: its batch's bytes are no longer held once its last value has. */
  consumedOne() {
    this.consumed++;
    if (--this.batches[this.batchHead] === 0) {
      this.heldBytes -= this.batches[this.batchHead + 1];
      this.batchHead += 2;
      if (this.batchHead === this.batches.length) {
        this.batches = [];
        this.batchHead = 0;
      }
    }
  }

  /**
   * More credit for the worker (HostChannel.consumed: once per half window),
   * unless the values taken and not yet consumed hold MAX_HELD_BYTES already:
   * the window counts values, this bounds the bytes.
   */
  grant() {
    const channel = this.channel;
    if (channel === null || this.heldBytes > MAX_HELD_BYTES) return;
    // The window in values, and no more values than MAX_HELD_BYTES holds at their size so far.
    const perValue = Math.max(1, this.seenBytes / this.seenValues);
    channel.window = Math.max(1, Math.min(this.window, Math.floor(MAX_HELD_BYTES / perValue)));
    channel.consumed(this.consumed);
  }

  /** The call settled (`ok`, its value or error). */
  ended(ok, value) {
    if (this.end !== null) return;
    this.end = { ok, value };
    // Settled while its worker may still run it (aborted, timed out): the generator stops.
    if (this.channel !== null) this.channel.stop(STOPS.RETURN);
    this.wakeAll();
  }

  /** Fails the stream with `err` (its values so far are still consumed first). */
  fail(err) {
    if (this.failure === null) this.failure = err;
    if (this.channel !== null) this.channel.stop(STOPS.RETURN);
    this.wakeAll();
  }

  wakeAll() {
    if (this.head < this.values.length) return;
    while (this.waiters.length !== 0) {
      const w = this.waiters.shift();
      const r = this.outcome();
      if (r.error !== undefined) w.reject(r.error);
      else w.resolve({ value: undefined, done: true });
    }
  }

  /** What next() gives once every value is consumed: done, or the error (once). */
  outcome() {
    const err = this.failure !== null ? this.failure : this.end !== null && !this.end.ok ? this.end.value : undefined;
    if (err !== undefined && !this.stopped && !this.errorGiven) {
      this.errorGiven = true;
      return { error: err };
    }
    return {};
  }

  next() {
    if (this.head < this.values.length) {
      const value = this.values[this.head];
      this.values[this.head++] = undefined;
      if (this.head === this.values.length) {
        this.values = [];
        this.head = 0;
      }
      this.consumedOne();
      this.grant();
      return Promise.resolve({ value, done: false });
    }
    if (this.stopped || this.end !== null || this.failure !== null) {
      const r = this.outcome();
      return r.error !== undefined ? Promise.reject(r.error) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /**
   * The caller ends the stream (return(), or throw(err) into it): the
   * worker's generator returns, or gets `err` thrown in, and its finally
   * runs; resolves once the call has settled. What the call then rejects
   * with (the generator's finally threw, or it rethrew `err`) rejects this.
   */
  stop(how, err) {
    const first = !this.stopped && this.end === null && this.failure === null;
    this.stopped = true;
    this.values = [];
    this.head = 0;
    for (const w of this.waiters.splice(0)) w.resolve({ value: undefined, done: true });
    if (!first) return Promise.resolve({ value: undefined, done: true });
    if (this.channel !== null && !(how === STOPS.THROW && this.owner.stopWithError(this, err))) {
      this.channel.stop(STOPS.RETURN);
    }
    return this.settled.then(() => ({ value: undefined, done: true }));
  }
}

/**
 * The caller's side of a stream: an async iterator (and iterable). It holds
 * the HostStream; the pool does not hold this object, so a stream the
 * caller drops is stopped when it is collected (FinalizationRegistry).
 */
class PoolStream {
  #stream;
  constructor(stream) {
    this.#stream = stream;
  }
  next() {
    return this.#stream.next();
  }
  return() {
    return this.#stream.stop(STOPS.RETURN);
  }
  throw(err) {
    return this.#stream.stop(STOPS.THROW, err);
  }
  [Symbol.asyncIterator]() {
    return this;
  }
}

// A stream dropped without being ended: its generator is stopped (its worker's slot and the channel then free).
const dropped = new FinalizationRegistry((stream) => {
  if (!stream.stopped && stream.end === null) stream.stop(STOPS.RETURN).catch(() => {});
});

/** The pool's streams: made at submission, taken from on every drain, released with their slot. */
class HostStreams {
  /** `pool`: the pool's view (host/view.js); `wake(index)`: wakes a waiter on a payload word (the runtime's). */
  constructor(pool, wake) {
    this.pool = pool;
    this.wake = wake;
    this.open = new Set(); // streams whose channel is live
  }

  /** A HostStream for a call of `mode` (STREAM: `options.window`; PROGRESS: `options.onProgress`). */
  create(mode, window, onProgress) {
    return new HostStream(this, mode, window, onProgress);
  }

  /**
   * Gives `stream` its channel (a payload block) for `call`, whose argument
   * becomes [channel offset, window, argument]. Returns null, or the error
   * the call fails with when the region has no room for a channel.
   */
  attach(stream, call) {
    const payload = this.pool.payload;
    let block;
    try {
      block = payload.allocBlock(CHANNEL_BYTES);
    } catch (err) {
      return err;
    }
    if (block === NO_ROOM) {
      return codedError(
        RangeError,
        CODE.VALUE_TOO_LARGE,
        "knitting-native: the payload region has no room for a stream's channel now; retry once calls settle",
      );
    }
    stream.block = block;
    // Its own fixed-length view (fast Atomics, as the worker's: worker/stream-task.js); wakes name
    // the word in the whole region.
    const base = block >> 2;
    const words = new Int32Array(payload.sab, block, CHANNEL_BYTES / 4);
    // The first credit is small: the values' size is not known yet (HostStream.grant).
    const first = Math.min(stream.window, FIRST_CREDIT);
    stream.channel = new HostChannel(words, 0, first, (index) => this.wake(base + index));
    call.stream = stream;
    call.arg = [block, stream.window, call.arg];
    this.open.add(stream);
    return null;
  }

  /** Takes what every open channel holds (a drain pass); returns how many batches it took. */
  poll() {
    let taken = 0;
    for (const stream of this.open) taken += this.take(stream);
    return taken;
  }

  take(stream) {
    const ch = stream.channel;
    const n = ch.waiting();
    if (n < 0) {
      stream.fail(regionCorruptError("a stream's SENT word is out of its ring's range"));
      this.open.delete(stream); // its words are not to be trusted: nothing more is read
      return 0;
    }
    const { payload, sharedRefs } = this.pool;
    for (let i = 0; i < n; i++) {
      const { ext, len } = ch.entry();
      let values;
      try {
        values = payload.readSlot(null, 0, len, ext, sharedRefs);
        if (!Array.isArray(values)) throw regionCorruptError("a stream's batch is not an array of values");
      } catch (err) {
        stream.fail(err);
        ch.tookOne();
        continue;
      }
      ch.tookOne();
      stream.deliver(values, len);
    }
    if (n > 0) ch.tookAll();
    return n;
  }

  /** `call`'s worker is done with its slot: what its channel still holds is taken, and the channel freed. */
  released(call) {
    const stream = call.stream;
    if (stream === null || stream.channel === null) return;
    // A channel whose words went bad (take) is not read again; its block is still the host's to free.
    if (this.open.has(stream)) {
      this.take(stream);
      this.open.delete(stream);
    }
    // A thrown-in error the worker never took: freed only if the word still names the block the
    // host placed (task code may have written another block's offset there).
    if (stream.thrown !== 0 && stream.channel.thrownBlock() === stream.thrown) this.pool.freePayload(stream.thrown);
    this.pool.freePayload(stream.block);
    stream.channel = null; // its block may hold someone else's bytes from now on
  }

  /** THROW into `stream`'s generator: false when the error cannot be placed (it is then stopped). */
  stopWithError(stream, err) {
    const payload = this.pool.payload;
    let at;
    try {
      at = payload.tryPlace(this.pool.encoder, err);
    } catch {
      return false;
    }
    if (at === NO_ROOM) return false;
    if (stream.channel.stop(STOPS.THROW, at, payload.placed)) stream.thrown = at;
    else this.pool.freePayload(at);
    return true;
  }

  /** Shutdown: every stream still open is stopped and fails with the shutdown error. */
  stopAll() {
    for (const stream of this.open) stream.fail(shutdownError());
  }
}

/** The public object of a stream that has `stream`'s state. */
function publicStream(stream) {
  const it = new PoolStream(stream);
  dropped.register(it, stream);
  return it;
}

/** `{ window }` of pool.stream.name(arg, options), checked. */
function streamWindow(window, name) {
  if (window === undefined) return DEFAULT_WINDOW;
  if (typeof window !== "number" || !Number.isInteger(window) || window < 1 || window > MAX_WINDOW) {
    throw codedError(
      RangeError,
      CODE.INVALID_OPTION,
      `knitting-native: pool.stream.${name}(arg, { window }): window must be an integer from 1 to ${MAX_WINDOW} ` +
        `(values the worker may run ahead of you), got ${String(window)}`,
    );
  }
  return window;
}

/** What HostStreams reads of the pool (host/view.js). */
HostStreams.POOL_USES = Object.freeze(["payload", "sharedRefs", "encoder", "freePayload"]);

module.exports = { HostStreams, publicStream, streamWindow, DEFAULT_WINDOW };
