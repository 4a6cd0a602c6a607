"use strict";
// The host's half of moving calls through slots, the same for every
// topology: writing a request into the slot a topology chose (host/topology/steal.js,
// host/topology/lanes.js), placing queued calls as slots free, publishing a burst,
// and settling a call from its answer. Methods of Pool (host/pool.js), which
// holds the state they share.

const Slot = require("../protocol/slot.js");
const { CODEC_ERRORS, codecError, BytesDescriptor } = require("../codec/index.js");
const SB = require("../protocol/shared-bytes.js");
const { NO_ROOM } = require("../payload/region.js");
const { placeValueError, regionCorruptError } = require("../errors.js");
const { extraOf } = require("./calls.js");

// encodeRequest: the payload region has no room for the argument now.
const WAIT_FOR_ROOM = 2;

const slotMethods = {
  /**
   * Puts a call into a free slot of the pool's topology (host/topology/steal.js,
   * host/topology/lanes.js). False when every slot is taken, or when it waits for
   * room in the payload region.
   */
  place(call) {
    if (call.done) return true; // timed out or aborted while queued
    return this.topology.place(call);
  },

  /**
   * The topology chose slot `slot` of `slots` (a HostLane or the
   * HostSubmit) for `call`: write the request and hand it to the slots'
   * protocol. False: it waits for payload room (the caller keeps it queued).
   */
  write(slots, slot, call) {
    const encoded = this.encodeRequest(slots, slot, call);
    if (encoded === WAIT_FOR_ROOM) return false; // stays queued: retried at the next drain
    if (encoded) {
      slots.publish(slot, call);
      call.lane = slots;
      call.slot = slot;
      this.inFlight++;
      if (this.hardTimeoutMs !== undefined) {
        extraOf(call).hardTimer = setTimeout(() => this.onHardTimeout(call), this.hardTimeoutMs);
      }
      this.scheduleFlush();
    }
    return true;
  },

  /**
   * `n` calls left their slots (answered, or taken back from a dead worker):
   * the topologies report it here, so `inFlight` is written in this file only.
   */
  slotsFreed(n) {
    this.inFlight -= n;
  },

  /** Publishes this burst's placements at the end of the current job. */
  scheduleFlush() {
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flushBound);
    }
  },

  /**
   * Step 1: write the request. On an encoding error the call is rejected
   * (false). WAIT_FOR_ROOM: other calls' payloads fill the payload region;
   * the encoded argument stays with the call until a retry finds room.
   */
  encodeRequest(lane, index, call) {
    try {
      let len;
      let ext = Slot.NO_EXT;
      const extra = call.extra;
      if (extra !== null && extra.encoded !== null) {
        len = extra.encoded.length;
        ext = this.payload.tryWrite(extra.encoded);
        if (ext === NO_ROOM) return this.waitForRoom(call, extra.encoded);
        extra.encoded = null;
      } else {
        const writer = this.slotWriter;
        len = writer.write(call.arg, lane.slotPayload(index));
        // encode()'s bytes are only valid until the next encode: keep a copy.
        if (len < 0) return this.waitForRoom(call, this.payload.unplaced.slice());
        ext = writer.ext;
        // Before the call is published: the worker that takes it finds the block sent to it.
        if (call.bytes !== null) this.bytes.send(call.bytes.sb, SB.TO_WORKER);
      }
      const task = call.stream === null ? call.task : Slot.taskWord(call.task, call.stream.mode);
      Slot.writeRequest(this.i32, lane.slotWord(index), task, call.id, len, ext, call.signal);
    } catch (err) {
      if (this.sharedRefs !== null) this.sharedRefs.release(this.sharedRefs.take() || []);
      // A streaming call's argument is inside [channel, window, argument] (host/streams.js).
      this.finish(call, false, placeValueError(err, this.table[call.task].name, "argument", call.stream !== null));
      return false;
    }
    if (this.sharedRefs !== null && this.sharedRefs.fresh.length !== 0) call.shared = this.sharedRefs.take(lane);
    call.arg = undefined;
    return true;
  },

  /** encodeRequest found no room for `bytes`: the call waits, unless nothing could ever free any. */
  waitForRoom(call, bytes) {
    if (this.inFlight === 0) {
      // No call holds a block, yet the region is full: its blocks were lost
      // (a worker that died between writing and publishing, say). Waiting
      // would never end.
      const detail =
        `the payload region has no room for ${bytes.length} bytes although no call holds any of it ` +
        "(lost blocks); this pool cannot send large payloads any more";
      throw codecError(RangeError, CODEC_ERRORS.LIMIT, `knitting-native: ${detail}`, undefined, detail);
    }
    extraOf(call).encoded = bytes;
    call.arg = undefined;
    // The SharedArrayBuffers the encoding named stay the call's until it settles.
    if (this.sharedRefs !== null && this.sharedRefs.fresh.length !== 0) call.shared = this.sharedRefs.take();
    if (this.debug && !this.roomTraced) {
      this.roomTraced = true;
      this.debug(
        "host",
        `payload region full: calls with large arguments wait for room (${this.inFlight} calls in slots)`,
      );
    }
    return WAIT_FOR_ROOM;
  },

  /**
   * A late answer (its call timed out or was aborted first) is dropped. With
   * thread workers it is decoded and the value thrown away: the
   * SharedArrayBuffers and moved buffers it names wait on its worker's port
   * and would stay in the host's maps until that worker is replaced (12 of
   * 12 aborted calls left one each before this). Late answers are rare, so
   * the decode's cost is taken there. Worker processes send no buffer beside
   * an answer: only its block is freed.
   */
  discardAnswer(lane, index, len, ext) {
    // A worker process's inline answer may hand back shared bytes: decoded too.
    if (this.sharedRefs === null && ext !== Slot.NO_EXT) {
      this.freePayload(ext);
      return;
    }
    try {
      const value = this.payload.readSlot(this.u8, lane.slotPayload(index), len, ext, this.sharedRefs);
      // Shared bytes it hands back go back to the region.
      if (value instanceof BytesDescriptor) this.bytes.takeResult(value).release();
    } catch (err) {
      // A corrupt late answer has no call to fail; readSlot freed its block if it was one.
      if (this.debug) this.debug("host", `a discarded answer could not be decoded: ${err.message}`);
    }
  },

  freePayload(ext) {
    try {
      this.payload.free(ext >>> 0);
    } catch (err) {
      if (this.debug) this.debug("host", `payload block ${ext >>> 0} could not be freed: ${err.message}`);
    }
  },

  /**
   * Gives back the host's payload chunk. Its reference count lives in the
   * shared region, which task code can overwrite: a count found corrupt
   * leaves the chunk abandoned (its room lost), as freePayload does with a
   * block, and never throws out of a drain (that would end the host).
   */
  retireChunk() {
    try {
      this.payload.retire();
    } catch (err) {
      if (this.debug) this.debug("host", `the host's payload chunk could not be given back: ${err.message}`);
    }
  },

  /** Publishes the slots placed since the last flush. */
  flush() {
    this.flushQueued = false;
    this.topology.flush();
    if (this.elastic !== null) this.elastic.grow(); // once per burst: more workers while calls wait
    // A worker parked for room must start the calls just published: their
    // arguments hold room only it can free (payload/region.js).
    this.payload.nudge();
  },

  /**
   * One drain pass (host/loop.js): settle every published answer, place
   * queued calls in the slots that freed; returns how many calls settled.
   */
  drainPass() {
    if (this.timing) this.stats.tick(); // the time the answers of this pass are stamped with
    let settled = this.topology.drain();
    // What streaming calls' workers sent meanwhile (host/streams.js).
    if (this.streams.open.size !== 0) settled += this.streams.poll();
    // Workers being recycled whose lanes are now empty are replaced (server/recycle.js).
    if (this.recycle !== null && this.recycle.waiting !== 0) this.recycle.check();
    this.pump();
    // serial-channel: the drain is also a dispatch pass.
    if (!this.topology.placesAtOnce) this.flush();
    if (this.payload.hasWaiters()) {
      // A worker waiting for room holds an unanswered call, so with none in
      // slots the count is stale: a worker died while parked for room.
      if (this.inFlight === 0) this.payload.clearWaiters();
      // Else give back the room the host's chunk holds (payload/region.js).
      else this.retireChunk();
    }
    return settled;
  },

  /** Moves queued calls into free slots. */
  pump() {
    const queue = this.queue;
    while (queue.size !== 0 && this.place(queue.peek())) queue.shift();
    if (this.queueLimit !== null) this.queueLimit.pumped(queue.size);
  },

  /** Step 6 for one slot: decode the response and settle its call. */
  settle(lane, index) {
    const call = lane.release(index);
    const i32 = this.i32;
    const w = lane.slotWord(index);
    const status = Slot.statusOf(i32, w);
    const id = Slot.callIdOf(i32, w);
    const len = Slot.lenOf(i32, w);
    const ext = Slot.extOf(i32, w);
    if (call === null || id !== call.id) {
      // The worker writes the id back; only a write into shared memory
      // (task code) makes it differ.
      const err = regionCorruptError(`slot ${index} answered call ${id}, expected ${call ? call.id : "none"}`);
      if (call !== null) this.finish(call, false, err);
      else process.emitWarning(err);
      return;
    }
    if (!Slot.isStatus(status)) {
      // Not an answer: a forged RES/DONE bit (the worker may still be
      // running the call: its block, if any, is left to it) or a stray write.
      this.finish(call, false, regionCorruptError(`slot ${index} holds no answer (status word ${status})`));
      return;
    }
    // The worker is done with the slot, and so with the call's abort word.
    this.releaseSignal(call);
    if (this.timing && !call.done) this.stats.answered(call, this.topology.workerOf(call), Slot.runMicrosOf(i32, w));
    if (call.done) {
      this.discardAnswer(lane, index, len, ext);
      return;
    }
    let value;
    try {
      value = this.payload.readSlot(this.u8, lane.slotPayload(index), len, ext, this.sharedRefs);
      // Shared bytes the task returned (or threw): the caller's now.
      if (value instanceof BytesDescriptor) value = this.bytes.takeResult(value);
    } catch (err) {
      this.finish(call, false, err);
      return;
    }
    this.finish(call, status !== Slot.STATUS_THROWN, value);
  },
};

module.exports = { slotMethods };
