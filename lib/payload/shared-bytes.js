"use strict";
// Shared bytes: blocks of the payload region that user code writes in place
// and that cross to a worker, thread or process, and back without a copy
// (`pool.sharedBytes(n)` in the host, `sharedBytes(n)` in a task). A
// SharedBytes is one side's handle on one block; who holds the block is the
// protocol of protocol/shared-bytes.js, and one BytesStore per side (the
// host's, each worker's) makes its moves.
//
// A handle's bytes are an external ArrayBuffer over the block (Rust's
// regionBuffer, which checks that the offset and length name a live block;
// a receiver checks the descriptor with checkRegion before it takes the
// block, and makes the buffer when `u8` is first read).
// When the handle is released or sent its buffer is detached (length 0):
// nothing can read the block through it once another side may own it.
//
// The rules (docs/api.md, "Shared bytes"):
// - A SharedBytes goes as the whole argument of one call, or as the whole
//   value a task returns; passing it hands it over (the sender's handle is
//   spent at once, even while the call waits for a slot).
// - A task's argument is the task's until its call ends: returned, it goes
//   back to the caller; else it is released when the call ends.
// - What a task makes with sharedBytes(n) is its worker's until returned or
//   released (or until that worker ends).
// - A result the host takes is the caller's to release; one still held
//   after `payload.borrowMs` is copied out of shared memory (its `u8` is
//   then an ordinary Uint8Array) so that it holds no room for ever.
// - A handle that is garbage collected releases its block.
// - The host reclaims what no live side can release: a call's argument that
//   no worker took when the call settles, and what a dead worker held.

const native = require("../native/index.js");
const P = require("../protocol/shared-bytes.js");
const { SEND_BYTES, BytesDescriptor, codecError, SHARED_BYTES_ERROR } = require("../codec/index.js");
const { regionCorruptError } = require("../errors.js");

// A handle's phases (in this side's memory only; the block's owner is STATE).
const OWNED = 0; // this side holds the block; `u8` reads and writes it
const QUEUED = 1; // handed to a call that waits for a slot (host): spent for the caller, still the host's
const SENT = 2; // handed over
const RELEASED = 3;
const COPIED = 4; // a borrowed result copied out of shared memory: `u8` is a private copy
const EMPTY = new Uint8Array(0);

function bytesError(message, Ctor = TypeError) {
  return codecError(Ctor, SHARED_BYTES_ERROR, `knitting-native: ${message}`);
}

class SharedBytes {
  #store;
  #at;
  #gen;
  #length;
  #ab;
  #view;
  #phase = OWNED;

  /** Made by a BytesStore only. */
  constructor(store, at, gen, length) {
    this.#store = store;
    this.#at = at;
    this.#gen = gen;
    this.#length = length;
    // The view is made when first asked for: a handle passed on untouched (an
    // echo, a relay) costs no buffer to make and none to detach (each ~1-3 us,
    // two of each per round trip: measured with bench/user/bytes.mjs, echo).
    this.#ab = null;
    this.#view = null;
  }

  /** The bytes, in place: writes land in shared memory. Throws once released or sent. */
  get u8() {
    if (this.#phase === OWNED) {
      if (this.#view === null) {
        this.#ab = this.#store.arena.regionBuffer(this.#at, this.#length);
        this.#view = new Uint8Array(this.#ab);
      }
      return this.#view;
    }
    if (this.#phase === COPIED) return this.#view;
    throw this.#spent("read");
  }

  get byteLength() {
    return this.#length;
  }

  /** True once released or handed to a call (or returned by a task). */
  get released() {
    return this.#phase === QUEUED || this.#phase === SENT || this.#phase === RELEASED;
  }

  /** True while the bytes are in shared memory (false for a borrowed result copied out). */
  get shared() {
    return this.#phase === OWNED;
  }

  /** Gives the block back (a second release, or one of a handle sent away, throws). */
  release() {
    if (this.#phase === OWNED) this.#store.release(this);
    else if (this.#phase === COPIED) SharedBytes.end(this, RELEASED);
    else throw this.#spent("release");
  }

  /** `using`: releases what this side still holds; nothing for a handle already released or sent. */
  [Symbol.dispose]() {
    if (this.#phase === OWNED || this.#phase === COPIED) this.release();
  }

  /** The encoder's descriptor: [at, gen it is sent under, byteLength]. */
  [SEND_BYTES]() {
    if (this.#phase !== OWNED && this.#phase !== QUEUED) throw this.#spent("send");
    return [this.#at, P.nextGen(this.#gen), this.#length];
  }

  #spent(what) {
    const why =
      this.#phase === RELEASED
        ? "it was released"
        : "it was handed to a call or returned by a task (the side that received it holds it now)";
    return bytesError(`cannot ${what} this SharedBytes (${this.#length} bytes): ${why}`);
  }

  get [Symbol.toStringTag]() {
    return "SharedBytes";
  }

  // The store's access to a handle's fields (no one else's).
  static storeOf(sb) {
    return sb.#store;
  }
  static atOf(sb) {
    return sb.#at;
  }
  static genOf(sb) {
    return sb.#gen;
  }
  static phaseOf(sb) {
    return sb.#phase;
  }
  /** Spent for good (or, QUEUED, for the caller while its call waits): its shared view is detached. */
  static end(sb, phase) {
    if (sb.#phase === OWNED || sb.#phase === QUEUED) detach(sb.#ab);
    sb.#phase = phase;
    sb.#view = EMPTY;
    sb.#ab = null;
  }
  /** A borrowed result, copied out of shared memory (the block is released by the caller of this). */
  static copyOut(sb) {
    const copy = sb.u8.slice();
    detach(sb.#ab);
    sb.#ab = null;
    sb.#view = copy;
    sb.#phase = COPIED;
  }
}

function detach(ab) {
  if (ab !== null && ab !== undefined && ab.byteLength !== 0) native.detachBuffer(ab);
}

function isSharedBytes(v) {
  return v instanceof SharedBytes;
}

/**
 * One side's shared bytes. `payload`: its PayloadRegion; `me`: its holder
 * (protocol/shared-bytes.js: HOST, or worker(lane)); `borrowMs`: on the host,
 * how long a result stays in shared memory before it is copied out.
 */
class BytesStore {
  constructor(payload, me, borrowMs = 0) {
    this.payload = payload;
    this.arena = payload.arena;
    this.me = me;
    this.i32 = null;
    // A handle collected while its side held it releases its block.
    this.registry = new FinalizationRegistry((held) => this.collected(held));
    this.borrowMs = borrowMs;
    this.borrowed = []; // [deadline, handle] of results taken, oldest first (host)
    this.borrowTimer = null;
  }

  /** The payload region's words, viewed again once it has grown. */
  words() {
    const buf = this.payload.sab;
    if (this.i32 === null || this.i32.length < buf.byteLength >> 2)
      this.i32 = new Int32Array(buf, 0, buf.byteLength >> 2);
    return this.i32;
  }

  /** A new block of `n` bytes held by this side. */
  alloc(n) {
    const max = this.payload.capacity - P.HEADER_BYTES;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > max) {
      throw codecError(
        typeof n === "number" ? RangeError : TypeError,
        SHARED_BYTES_ERROR,
        `knitting-native: sharedBytes(n) needs a whole number of bytes from 0 to ${max} ` +
          `(what payload.payloadMaxByteLength holds), got ${typeof n === "number" ? n : typeof n}`,
      );
    }
    let at;
    for (;;) {
      at = this.arena.allocRegion(n, this.me);
      if (at > 0) break;
      if (at === 0) {
        throw codecError(
          RangeError,
          SHARED_BYTES_ERROR,
          `knitting-native: no room for ${n} shared bytes now: the payload region is full of live payloads and ` +
            "shared bytes; release some, or raise payload.payloadMaxByteLength",
        );
      }
      this.payload.grow(-at);
    }
    const gen = P.genOf(Atomics.load(this.words(), at >> 2));
    return this.wrap(at, gen, n);
  }

  wrap(at, gen, n) {
    const sb = new SharedBytes(this, at, gen, n);
    this.registry.register(sb, { at, gen, holder: this.me }, sb);
    return sb;
  }

  /** Throws unless `sb` is this side's to send now. */
  check(sb) {
    if (SharedBytes.storeOf(sb) !== this) {
      throw bytesError(
        "this SharedBytes belongs to another pool (or another worker): send it only through the pool that made it",
      );
    }
    // Throws when spent.
    sb[SEND_BYTES]();
  }

  /** The host: `sb` is a call's argument from now on (the caller's handle is spent); its ticket. */
  enqueue(sb) {
    this.check(sb);
    const at = SharedBytes.atOf(sb);
    const gen = SharedBytes.genOf(sb);
    SharedBytes.end(sb, QUEUED);
    this.registry.unregister(sb);
    return { sb, at, gen };
  }

  /** Hands `sb` (encoded just now) to `to`: a worker (TO_WORKER) or the host (from(lane)). */
  send(sb, to) {
    const at = SharedBytes.atOf(sb);
    const gen = SharedBytes.genOf(sb);
    if (P.send(this.words(), at >> 2, gen, this.me, to) === 0) {
      SharedBytes.end(sb, RELEASED);
      throw regionCorruptError(
        "a SharedBytes could not be sent: its block's state names " +
          P.describeHolder(Atomics.load(this.words(), at >> 2)),
      );
    }
    SharedBytes.end(sb, SENT);
    this.registry.unregister(sb);
  }

  /**
   * The receiver takes what `desc` names, sent to `sentTo`: a SharedBytes it
   * holds, or a KNT_SHARED_BYTES error when the block is not there for it.
   */
  take(desc, sentTo) {
    return this.takeFrom(desc, (w, at, gen) => P.take(w, at, gen, sentTo, this.me));
  }

  /** The host takes a result, from whichever worker sent it. */
  takeResult(desc) {
    return this.takeFrom(desc, (w, at, gen) => P.takeResult(w, at, gen, this.me));
  }

  takeFrom(desc, swap) {
    const { at, gen, byteLength } = desc;
    try {
      this.arena.checkRegion(at, byteLength); // Rust: a live block of shared bytes, long enough
    } catch (err) {
      throw regionCorruptError(
        `a value names ${byteLength} shared bytes at ${at}, which is no live block of them`,
        err,
      );
    }
    const w = this.words();
    if (!swap(w, at >> 2, gen)) {
      throw bytesError(
        `the SharedBytes sent here (${byteLength} bytes) could not be taken: its block now names ` +
          `${P.describeHolder(Atomics.load(w, at >> 2))} (its call was aborted, timed out or ended first)`,
        Error,
      );
    }
    const sb = new SharedBytes(this, at, gen, byteLength);
    this.registry.register(sb, { at, gen, holder: this.me }, sb);
    if (this.borrowMs > 0) this.borrow(sb);
    return sb;
  }

  release(sb) {
    const at = SharedBytes.atOf(sb);
    const won = P.release(this.words(), at >> 2, SharedBytes.genOf(sb), this.me);
    SharedBytes.end(sb, RELEASED);
    this.registry.unregister(sb);
    // Lost: the host reclaimed it (this worker was taken for dead); nothing to free.
    if (won) this.payload.free(at);
  }

  /** A worker, when the call whose argument `sb` was ends: released unless the task returned it. */
  endArgument(sb) {
    if (SharedBytes.phaseOf(sb) === OWNED) this.release(sb);
  }

  /** The host, once the call `ticket` is the argument of settled: frees the block if no worker took it. */
  settled(ticket) {
    const { sb, at, gen } = ticket;
    const queued = SharedBytes.phaseOf(sb) === QUEUED;
    if (queued) SharedBytes.end(sb, RELEASED);
    if (P.settleArgument(this.words(), at >> 2, gen, !queued)) this.payload.free(at);
  }

  /** The host, once the worker on `lane` is gone: frees every block it held or was sending. */
  reclaimLane(lane, debug = null) {
    let freed = 0;
    try {
      const w = this.words();
      for (const at of this.arena.regions()) {
        if (P.reclaim(w, at >> 2, lane)) {
          this.payload.free(at);
          freed++;
        }
      }
    } catch (err) {
      // A corrupt region: the calls that use it fail on their own.
      if (debug) debug("host", `shared bytes of worker ${lane} not reclaimed: ${err.message}`);
    }
    if (freed !== 0 && debug) debug("host", `worker ${lane} left ${freed} blocks of shared bytes: freed`);
    return freed;
  }

  collected({ at, gen, holder }) {
    try {
      if (P.release(this.words(), at >> 2, gen, holder)) this.payload.free(at);
    } catch {
      // The pool's region is gone or corrupt: nothing to give back.
    }
  }

  /** A result taken: copied out of shared memory if still held after borrowMs. */
  borrow(sb) {
    this.borrowed.push([performance.now() + this.borrowMs, new WeakRef(sb)]);
    if (this.borrowTimer === null) this.armBorrow(this.borrowMs);
  }

  armBorrow(ms) {
    this.borrowTimer = setTimeout(() => this.sweepBorrowed(), Math.max(1, Math.ceil(ms)));
    // Borrowed results never keep the process alive.
    if (typeof this.borrowTimer.unref === "function") this.borrowTimer.unref();
  }

  sweepBorrowed() {
    this.borrowTimer = null;
    const now = performance.now();
    let i = 0;
    for (; i < this.borrowed.length && this.borrowed[i][0] <= now; i++) {
      const sb = this.borrowed[i][1].deref();
      if (sb === undefined || SharedBytes.phaseOf(sb) !== OWNED) continue;
      const at = SharedBytes.atOf(sb);
      SharedBytes.copyOut(sb);
      this.registry.unregister(sb);
      if (P.release(this.words(), at >> 2, SharedBytes.genOf(sb), this.me)) this.payload.free(at);
    }
    this.borrowed.splice(0, i);
    if (this.borrowed.length !== 0) this.armBorrow(this.borrowed[0][0] - now);
  }

  close() {
    if (this.borrowTimer !== null) clearTimeout(this.borrowTimer);
    this.borrowTimer = null;
  }
}

// The worker's store, for sharedBytes(n) in a task (set by worker/serve.js).
let taskStore = null;

function setTaskStore(store) {
  taskStore = store;
}

/** `sharedBytes(n)`, the package's export: a block of the pool's shared memory, in a task. */
function sharedBytes(n) {
  if (taskStore === null) {
    throw bytesError(
      "sharedBytes(n) works inside a task running in a pool's worker; in the host, use pool.sharedBytes(n)",
    );
  }
  return taskStore.alloc(n);
}

module.exports = { SharedBytes, BytesStore, BytesDescriptor, isSharedBytes, setTaskStore, sharedBytes };
