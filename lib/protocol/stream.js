"use strict";
// The stream protocol: how a streaming call's values travel from its worker
// to the host while the call runs, with backpressure. One channel per
// streaming call (and per call that reports progress), a block of the
// payload region the host allocates when it submits the call and frees when
// the worker is done with the call's slot (its answer drained, or the worker
// dead). The call itself travels as any other (protocol/lane.js,
// protocol/steal.js); its final answer ends the stream.
//
// # The channel's words (Int32, from the block's start)
//   CREDIT    host: how many values the worker may have sent in all (the
//             values the caller consumed, plus the window).
//   TAKEN     host: how many batches it has taken out of the ring.
//   STOP      host: 0 go on; RETURN the caller ended the stream (break,
//             return(), an abort, garbage collection, shutdown); THROW the
//             caller threw into it (the error's block in STOP_EXT/STOP_LEN).
//   HOST_SEQ  host: bumped after every change of CREDIT, TAKEN or STOP.
//   SENT      worker: how many batches it has published.
//   RING      RING_SIZE entries of (EXT, LEN): where batch k's bytes are
//             (entry k % RING_SIZE; a batch is an encoded array of values).
//
// # Sending (worker)
// The worker reads HOST_SEQ first, then STOP, CREDIT and TAKEN. It may send
// a batch of n values when sentValues + n <= CREDIT and SENT - TAKEN <
// RING_SIZE. It writes the batch's block, then its ring entry, then SENT
// (the store that publishes it), then announces on the doorbell
// (protocol/doorbell.js), which wakes a sleeping host. When it may not send,
// it waits until HOST_SEQ moves off the value it read first: every change
// the host makes is followed by a bump of HOST_SEQ and a wake, so a change
// made after the worker's first read moves HOST_SEQ and ends (or skips) the
// wait (an eventcount). Reading HOST_SEQ after the other words instead
// could miss a change made in between and sleep for ever (broken variant
// "late sequence").
//
// # Taking (host)
// On each drain pass the host reads SENT, and for each batch between TAKEN
// and SENT reads the ring entry, decodes the batch (which frees its block),
// then stores TAKEN and bumps HOST_SEQ. The caller's consumption moves
// CREDIT: once consumed + window - CREDIT reaches half the window, CREDIT =
// consumed + window (one update per half window, not per value). So the
// worker is never more than one window of values ahead of its caller.
//
// # Ending
// The worker writes every batch before its final answer, so a host that has
// drained the answer and then takes what SENT says has every value. STOP
// is read by the worker between values; it then ends the generator
// (return() or throw()), and answers. The host frees the channel only when
// the call's slot is released, never on the caller's say alone: a worker
// may still be writing into it until it answers.
//
// The caller's throw (STOP = THROW) hands the worker an error in a block of
// its own; the worker clears STOP_EXT before it frees it, and the host frees
// at release only a block still named there (the worker never took it).
//
// # Untrusted words
// Task code can write any word here. The host checks SENT - TAKEN against
// RING_SIZE and each entry's block against the region (payload/region.js):
// a bad word fails this stream with KNT_REGION_CORRUPT, nothing else.

// Word offsets in the channel.
const CREDIT = 0;
const TAKEN = 1;
const STOP = 2;
const HOST_SEQ = 3;
const STOP_EXT = 4;
const STOP_LEN = 5;
const SENT = 6;
const RING = 8;
const RING_SIZE = 8;
/** Bytes of a channel block. */
const CHANNEL_BYTES = (RING + 2 * RING_SIZE) * 4;

const STOPS = Object.freeze({ GO: 0, RETURN: 1, THROW: 2 });

/** What a task's call is (in its request's TASK word, above the task index: protocol/slot.js). */
const MODES = Object.freeze({ CALL: 0, STREAM: 1, PROGRESS: 2 });

/** The host's end of one channel, at word `base` of `i32` (the payload region). */
class HostChannel {
  /** `notify(index)`: wakes whoever waits on word `index` of the payload region (the runtime's way). */
  constructor(i32, base, window, notify, ringSize = RING_SIZE) {
    this.i32 = i32;
    this.ringSize = ringSize; // RING_SIZE; the model checker runs a smaller ring too
    this.base = base;
    this.window = window;
    this.notify = notify;
    this.taken = 0;
    this.credit = window;
    Atomics.store(i32, base + CREDIT, window);
    Atomics.store(i32, base + TAKEN, 0);
    Atomics.store(i32, base + STOP, STOPS.GO);
    Atomics.store(i32, base + HOST_SEQ, 0);
    Atomics.store(i32, base + SENT, 0);
  }

  /** Batches published and not yet taken (-1: the worker's SENT word makes no sense). */
  waiting() {
    const n = (Atomics.load(this.i32, this.base + SENT) - this.taken) | 0;
    return n >= 0 && n <= this.ringSize ? n : -1;
  }

  /** The next batch's block: { ext, len } (read after waiting() said there is one). */
  entry() {
    const at = this.base + RING + 2 * (this.taken % this.ringSize);
    return { ext: Atomics.load(this.i32, at), len: Atomics.load(this.i32, at + 1) };
  }

  /** The batch entry() named is taken (its block decoded and freed). */
  tookOne() {
    this.taken++;
    Atomics.store(this.i32, this.base + TAKEN, this.taken);
  }

  /** After taking: the worker may send again. */
  tookAll() {
    this.bump();
  }

  /** The caller has consumed `consumed` values in all: more credit, once per half window. */
  consumed(consumed) {
    const credit = consumed + this.window;
    if (credit - this.credit < Math.max(1, this.window >> 1)) return;
    this.credit = credit;
    Atomics.store(this.i32, this.base + CREDIT, credit);
    this.bump();
  }

  /** The caller ended the stream: RETURN, or THROW with the error's block (ext, len). */
  stop(how, ext = 0, len = 0) {
    if (Atomics.load(this.i32, this.base + STOP) !== STOPS.GO) return false;
    if (how === STOPS.THROW) {
      Atomics.store(this.i32, this.base + STOP_EXT, ext);
      Atomics.store(this.i32, this.base + STOP_LEN, len);
    }
    Atomics.store(this.i32, this.base + STOP, how);
    this.bump();
    return true;
  }

  /**
   * After the worker is done with the call: the block of an error thrown in
   * that the worker never took (it clears STOP_EXT when it takes it), or 0.
   */
  thrownBlock() {
    if (Atomics.load(this.i32, this.base + STOP) !== STOPS.THROW) return 0;
    return Atomics.load(this.i32, this.base + STOP_EXT);
  }

  bump() {
    Atomics.add(this.i32, this.base + HOST_SEQ, 1);
    this.notify(this.base + HOST_SEQ);
  }
}

/** The worker's end of one channel. */
class WorkerChannel {
  constructor(i32, base, ringSize = RING_SIZE) {
    this.i32 = i32;
    this.ringSize = ringSize;
    this.base = base;
    this.sentBatches = 0;
    this.sentValues = 0;
    this.seq = 0; // HOST_SEQ as room() last read it: what a wait waits to move off
  }

  /** The word a wait sleeps on (its value: `seq`, as room() read it). */
  get seqWord() {
    return this.base + HOST_SEQ;
  }

  /**
   * How many values may be sent now (0: wait on seqWord while it holds
   * `seq`), or -1 when the host stopped the stream (see stopped()).
   */
  room() {
    const i32 = this.i32;
    this.seq = Atomics.load(i32, this.base + HOST_SEQ); // first: see "Sending"
    if (Atomics.load(i32, this.base + STOP) !== STOPS.GO) return -1;
    if (this.sentBatches - Atomics.load(i32, this.base + TAKEN) >= this.ringSize) return 0;
    const n = Atomics.load(i32, this.base + CREDIT) - this.sentValues;
    return n > 0 ? n : 0;
  }

  /**
   * How the host stopped it: STOPS.RETURN, or STOPS.THROW with the error's
   * { ext, len }, whose block the worker then owns (and frees): STOP_EXT is
   * cleared first, so that the host never frees it too.
   */
  stopped() {
    const how = Atomics.load(this.i32, this.base + STOP);
    if (how !== STOPS.THROW) return { how: STOPS.RETURN };
    const ext = Atomics.load(this.i32, this.base + STOP_EXT);
    const len = Atomics.load(this.i32, this.base + STOP_LEN);
    Atomics.store(this.i32, this.base + STOP_EXT, 0);
    return { how, ext, len };
  }

  /** Publishes a batch of `count` values written at block `ext` (`len` bytes); room() allowed it. */
  publish(ext, len, count) {
    const at = this.base + RING + 2 * (this.sentBatches % this.ringSize);
    Atomics.store(this.i32, at, ext);
    Atomics.store(this.i32, at + 1, len);
    this.sentBatches++;
    this.sentValues += count;
    Atomics.store(this.i32, this.base + SENT, this.sentBatches);
  }
}

module.exports = { HostChannel, WorkerChannel, CHANNEL_BYTES, RING_SIZE, STOPS, MODES };
