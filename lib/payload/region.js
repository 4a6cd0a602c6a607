"use strict";
// The payload region: values too large for a slot's inline bytes live here,
// in a growable SharedArrayBuffer whose allocator (src/memory/payload.rs)
// runs in Rust. The writer allocates and copies; the reader decodes and frees.
//
// Room. A payload that an empty region can hold is never refused because
// other payloads hold the space: `tryWrite` then answers NO_ROOM and the
// writer waits (the host keeps the call queued; a worker keeps the answer,
// see worker/serve.js) until a block is freed. Waiters that park (workers) are
// counted in ROOM_WAITERS and sleep on ROOM_SEQ, two words of the control
// region; whoever frees a block bumps ROOM_SEQ and wakes them, and so does
// the host when it publishes calls (a parked worker must start those: their
// arguments hold room too). Only a payload larger than an empty region can
// hold is an error.
//
// Why waiting cannot deadlock. Room is held only by (a) the argument
// blocks of calls placed in slots and not yet started, and (b) answer
// blocks written by a worker and, at its next flush, published, not yet
// settled. Waiting arguments (host) and waiting answers (workers) are not in
// the region. (b) is freed by the host's drain, which never waits for room
// and runs while any call is in flight. (a) is freed when a worker starts
// the call, and a worker whose answers wait for room keeps starting every
// call it is given (it never blocks its thread, and it publishes what it
// wrote before it parks), so (a) drains as long as tasks end: the same
// condition any call needs. So while anything waits the region empties,
// and an empty region holds any payload up to its capacity. New arguments
// cannot starve the answers forever either: a waiting answer keeps its
// slot, so once every slot holds one no argument can enter, and the region
// empties for them.
//
// Small payloads of the host (the calls' arguments) are carved out of a
// chunk (payload/chunks.js): no native call per argument. The host's chunk
// holds room only it gives back, so it retires it before it waits for room
// and when a worker waits for room (the worker rings, the host's drain
// retires: host/slots.js). A worker keeps a carved argument while its task
// runs and writes the answer into it when it fits (readHeld); it releases
// it otherwise, and other answers take blocks of their own (a worker's own
// chunk would lose its room when the worker dies, and the host could not
// tell that from a chunk about to be retired). A chunk is freed with its
// last sub-block: one argument that waits long in a slot keeps its whole
// chunk (64 KiB) until it is started.

const native = require("../native/index.js");
const { decode, CODEC_ERRORS, codecError, copyBytes } = require("../codec/index.js");
const { CODE, regionCorruptError } = require("../errors.js");
const { Chunks, MAX_CARVED, NOT_CARVED } = require("./chunks.js");
const { L, NO_EXT } = require("../protocol/layout.js");

/** tryWrite's answer when the region is full of live blocks right now. */
const NO_ROOM = 0; // never an offset: the arena's header lives there
const W_ROOM_SEQ = L.wordRoomSeq;
const W_ROOM_WAITERS = L.wordRoomWaiters;
// Every waiter (a futex wake count; u32 on the process runtime's side).
const WAKE_ALL = 0x7fffffff;
// A slot's EXT word names a carved sub-block with its low bit set (blocks
// of the arena are 16-aligned, sub-blocks 8-aligned: the bit is free).
const CARVED = 1;
/** Carving needs a region of at least this many chunks' room (a smaller one would fill with them). */
const MIN_CHUNKS = 16;

class PayloadRegion {
  /**
   * `format`: true on the host, which creates the region. `i32`: the
   * control region (ROOM words); `wake(index, count)`: wakes sleepers on a
   * control word, the runtime's way. Without them (a region on its own, in
   * tests) nobody can wait for room.
   */
  constructor(sab, format, i32 = new Int32Array(W_ROOM_WAITERS + 1), wake = () => {}) {
    this.sab = sab;
    this.max = sab.growable ? sab.maxByteLength : sab.byteLength;
    this.arena = new native.PayloadArena(new Uint8Array(sab), this.max, format);
    // The largest payload an empty region holds (the arena's own header
    // and a block header take the rest).
    this.capacity = this.arena.maxRequest;
    // A fixed-length view, made again when the region has grown (bytesTo).
    // Not a length-tracking one (new Uint8Array(sab)): V8 gives typed arrays
    // that track a growable buffer's length element kinds of their own, with
    // slower loads and stores in every codec loop, and code that meets both
    // kinds gets slower for both. A 1 KiB sweep object decoded in 21 us from
    // a length-tracking view, 5-6 us from a fixed-length one over the same
    // growable buffer or a plain one (encode 11 us against 3.4-3.5 us;
    // strings and Uint8Arrays 1.3-2x; Node 20.20, 2026-12-03,
    // bench/codec-views.mjs).
    this.u8 = new Uint8Array(sab, 0, sab.byteLength);
    this.i32 = i32;
    this.wake = wake;
    this.roomSeq = W_ROOM_SEQ;
    this.placed = 0; // tryPlace's byte count
    this.unplaced = null; // tryPlace's encoding when it found no room
    // Every side releases carved sub-blocks; only the host carves (see above).
    this.chunks = new Chunks(
      new Int32Array(sab),
      (size) => this.allocBlock(size),
      (at) => this.free(at),
      (msg) => regionCorruptError(msg),
    );
    this.carving = format && this.capacity >= MIN_CHUNKS * this.chunks.bytes;
    // A worker's carved argument kept for its answer (readHeld), 0 when none.
    this.held = 0;
    this.heldRoom = 0;
    this.unhold = null;
  }

  /**
   * The region's bytes, viewed up to at least `end` when the buffer is that
   * long: any thread may have grown it since this view was made.
   */
  bytesTo(end) {
    if (end > this.u8.length) this.u8 = new Uint8Array(this.sab, 0, this.sab.byteLength);
    return this.u8;
  }

  /**
   * A worker reads a carved argument (EXT `ext`) and keeps its sub-block:
   * the answer goes into it when it fits (tryAlloc), so the echo of a
   * small value takes no room and no native call; else dropHeld() releases
   * it. `clear()` clears the slot's EXT word: called before the sub-block
   * is released or rewritten (a worker that dies while the task runs
   * leaves EXT set, and the host releases it; one that dies in between
   * loses it, never releases it twice). Anything that is not a live
   * sub-block goes through readSlot, which says what is wrong.
   */
  readHeld(length, ext, shared, clear) {
    const offset = ext >>> 0;
    const start = offset - CARVED;
    if (this.held !== 0 || length < 0 || !this.chunks.holds(start, length)) {
      clear();
      return this.readSlot(null, 0, length, ext, shared);
    }
    let value;
    try {
      value = decodeOrCorrupt(this.bytesTo(start + length), start, length, shared);
    } catch (err) {
      clear();
      this.free(offset);
      throw err;
    }
    this.held = offset;
    this.heldRoom = (length + 7) & ~7;
    this.unhold = clear;
    return value;
  }

  /** The kept argument's sub-block is not needed for the answer: released (its slot's EXT cleared first). */
  dropHeld() {
    const held = this.held;
    if (held === 0) return;
    this.held = 0;
    this.unhold();
    this.unhold = null;
    this.free(held);
  }

  /**
   * Encodes `value` (which does not fit a slot's inline bytes) into a new
   * block: returns its offset, with the byte count in `placed`; or
   * NO_ROOM, with the encoding in `unplaced` (the encoder's scratch: valid
   * until its next encode, so a caller that keeps it copies it). A string
   * or binary value whose size the encoder knows up front
   * (Encoder#exactSize) is encoded straight into the block: one copy of its
   * bytes instead of two (into the scratch buffer, then here). Throws as
   * encode() and tryWrite() do.
   */
  tryPlace(encoder, value) {
    const size = encoder.exactSize(value);
    if (size >= 0 && size <= encoder.maxPayloadBytes && size <= this.capacity) {
      const at = this.tryAlloc(size);
      if (at !== NO_ROOM) {
        let n = -1;
        try {
          const start = PayloadRegion.startOf(at);
          n = encoder.encodeInto(value, this.bytesTo(start + size), start, size);
        } finally {
          if (n !== size) this.free(at);
        }
        if (n === size) {
          this.placed = size;
          return at;
        }
        // Only a value whose size changed between two looks (a typed
        // array subclass's byteLength getter, say) gets here: as below.
      }
    }
    const bytes = encoder.encode(value);
    const at = this.tryWrite(bytes);
    if (at === NO_ROOM) {
      this.unplaced = bytes;
      return NO_ROOM;
    }
    this.placed = bytes.length;
    return at;
  }

  /** Where the bytes of the block that EXT word `ext` names start in the region. */
  static startOf(ext) {
    return ext - (ext & CARVED);
  }

  /**
   * Copies `bytes` into the region; returns its offset, or NO_ROOM when
   * live blocks hold the space now (retry after a free). Throws only for a
   * payload no empty region of this size could hold.
   */
  tryWrite(bytes) {
    const at = this.tryAlloc(bytes.length);
    if (at !== NO_ROOM) {
      const start = PayloadRegion.startOf(at);
      copyBytes(this.bytesTo(start + bytes.length), start, bytes);
    }
    return at;
  }

  /**
   * Room for `size` bytes, or NO_ROOM: what a slot's EXT word names (a
   * carved sub-block's offset has its CARVED bit set; its bytes start at
   * `at - (at & CARVED)`). Before it answers NO_ROOM the host gives back
   * its chunk.
   */
  tryAlloc(size) {
    if (this.held !== 0) {
      if (size <= this.heldRoom) {
        // The kept argument's sub-block takes the answer: its reference moves
        // with it. EXT is cleared until the answer names it again, so that
        // the host never releases it twice (a failed encode releases it here).
        const held = this.held;
        this.held = 0;
        this.unhold();
        this.unhold = null;
        return held;
      }
      this.dropHeld();
    }
    if (size > this.capacity) throw tooLargeError(size, this.max, this.capacity);
    if (this.carving && size <= MAX_CARVED) {
      const p = this.chunks.carve(size);
      if (p !== NOT_CARVED) return p + CARVED;
    }
    const at = this.allocBlock(size);
    if (at !== NO_ROOM || !this.chunks.retire()) return at;
    return this.allocBlock(size);
  }

  /** The host's chunk back to the region (room is short): true if that freed it. */
  retire() {
    return this.chunks.retire();
  }

  /** A block of the arena (its offset), or NO_ROOM; grows the region when that makes room. */
  allocBlock(size) {
    let emptyAndFull = 0;
    for (;;) {
      let result;
      try {
        result = this.arena.alloc(size);
      } catch (err) {
        if (err && err.code === CODE.REGION_CORRUPT) throw err;
        throw limitError(`payload of ${size} bytes could not be placed in the payload region: ${err.message}`, err);
      }
      if (result > 0) return result;
      if (result === NO_ROOM) {
        // Full of live blocks, says the arena. Workers free blocks meanwhile,
        // so none live now may only mean they all went since: try again.
        // Still none live after a few tries is impossible (task code wrote
        // the header), and waiting would never end. (A single check failed a
        // call of 60 concurrent 900 KB arguments once in a clean-clone CI.)
        if (this.arena.stats().liveBlocks !== 0) return NO_ROOM;
        if (++emptyAndFull > 3) {
          throw regionCorruptError("the payload region reports no room although no block in it is live");
        }
        continue;
      }
      const need = -result;
      if (need > this.max) return NO_ROOM; // the arena reports this as full; kept as a guard
      this.grow(need);
    }
  }

  /** tryWrite for a writer that cannot wait: a full region is an error. */
  write(bytes) {
    const at = this.tryWrite(bytes);
    if (at === NO_ROOM)
      throw limitError(`the payload region is full: ${bytes.length} bytes must wait for other payloads to be freed`);
    return at;
  }

  grow(minBytes) {
    const target = Math.min(this.max, Math.max(minBytes, this.sab.byteLength * 2));
    if (target > this.sab.byteLength) {
      try {
        this.sab.grow(target);
      } catch {
        // Another thread grew it past `target` meanwhile: fine.
      }
    }
    this.arena.extend(new Uint8Array(this.sab));
  }

  /**
   * Decodes a value a slot describes: `length` bytes inline at `at` of the
   * control region `control` when `ext` is NO_EXT, else at offset `ext` of
   * this region (whose block is then freed). The words come from shared
   * memory that task code can write: a length or offset that makes no sense
   * throws a KNT_REGION_CORRUPT error for this value, nothing else.
   */
  readSlot(control, at, length, ext, shared) {
    if (ext === NO_EXT) {
      if (length < 0 || length > L.inlineBytes)
        throw regionCorruptError(
          `a slot's length word reads ${length} (inline values hold at most ${L.inlineBytes} bytes)`,
        );
      return decodeOrCorrupt(control, at, length, shared);
    }
    const offset = ext >>> 0;
    const start = offset - (offset & CARVED);
    if (length < 0 || start + length > this.bytesTo(start + length).length) {
      // Not a block of this region: nothing to decode, nothing to free.
      throw regionCorruptError(
        `a slot points at ${length} payload bytes at offset ${offset}, outside the ` +
          `${this.u8.length}-byte payload region`,
      );
    }
    try {
      return decodeOrCorrupt(this.u8, start, length, shared);
    } finally {
      // Throws KNT_REGION_CORRUPT when `offset` is not a live block.
      this.free(offset);
    }
  }

  /** Frees a block (or releases a carved sub-block: `offset` as EXT names it) and wakes whoever waits for room. */
  free(offset) {
    try {
      if ((offset & CARVED) !== 0) this.chunks.release(offset - CARVED);
      else this.arena.free(offset);
    } finally {
      this.nudge();
    }
  }

  /**
   * Wakes the workers parked for room, if any: a block was freed, or the
   * host published calls (whose arguments only a worker can free).
   */
  nudge() {
    // SeqCst, with enterWait's add: either this load sees the waiter, or
    // the waiter's retry (under the arena's lock, after its add) sees the
    // freed block or the published call.
    if (Atomics.load(this.i32, W_ROOM_WAITERS) === 0) return;
    Atomics.add(this.i32, W_ROOM_SEQ, 1);
    this.wake(W_ROOM_SEQ, WAKE_ALL);
  }

  /** A worker about to park for room: counts itself in; returns the ROOM_SEQ value to park on. */
  enterWait() {
    Atomics.add(this.i32, W_ROOM_WAITERS, 1);
    return Atomics.load(this.i32, W_ROOM_SEQ);
  }

  leaveWait() {
    Atomics.sub(this.i32, W_ROOM_WAITERS, 1);
  }

  /** Only when no worker can be waiting (see the host's drain). */
  clearWaiters() {
    Atomics.store(this.i32, W_ROOM_WAITERS, 0);
  }

  /** Whether any worker is counted as waiting for room. */
  hasWaiters() {
    return Atomics.load(this.i32, W_ROOM_WAITERS) !== 0;
  }
}

/** `decode`, whose "corrupt payload" errors name the cause. */
function decodeOrCorrupt(source, offset, length, shared) {
  try {
    return decode(source, offset, length, shared);
  } catch (err) {
    if (err instanceof RangeError && /corrupt payload|needs a Uint8Array source/.test(err.message)) {
      throw regionCorruptError(`a value read from shared memory does not decode (${err.message})`, err);
    }
    throw err;
  }
}

function limitError(message, cause) {
  return codecError(RangeError, CODEC_ERRORS.LIMIT, `knitting-native: ${message}`, cause, message);
}

function tooLargeError(size, max, capacity) {
  return limitError(
    `payload of ${size} bytes does not fit the payload region even when it is empty: ` +
      `payload.payloadMaxByteLength (${max} bytes) ` +
      `holds at most ${capacity} bytes per payload; raise payload.payloadMaxByteLength (createPool option)`,
  );
}

module.exports = { PayloadRegion, NO_ROOM };
