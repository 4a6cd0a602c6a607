"use strict";
// Small payloads without a native call each: a writer takes one block of
// the payload region (a "chunk", from the Rust allocator) and carves the
// small payloads it writes out of it in JS, one after the other. Each
// carved piece ("sub-block") is read and released by the other side; the
// chunk goes back to the allocator when its last sub-block is released and
// its writer has moved on. So the allocator is crossed into once per chunk,
// not twice per call (docs/payload-path.md).
//
// # The protocol (modelled in __test__/model/chunk-model.mjs)
// A chunk's REFS word counts who may still touch it: its writer (1, while
// it carves from it) plus every sub-block carved and not yet released.
// - The writer opens a chunk with REFS = 1 (its own reference) before it
//   carves anything.
// - carve: REFS += 1, then the sub-block's header and bytes, then the
//   offset is published (a slot's EXT word, whose store orders them).
// - release (reader, after it decoded the bytes): the sub-block's check
//   word is cleared (a second release is refused), then REFS -= 1.
// - retire (writer): REFS -= 1 for its own reference; it never carves from
//   that chunk again.
// - hand back (reader, instead of release): it writes its answer into the
//   sub-block and publishes it back; the writer's side releases it when it
//   has read the answer. The sub-block's one reference moves with it.
// Whoever takes REFS from 1 to 0 frees the chunk; nobody else can touch
// it then: the writer has retired, every sub-block was released. Because
// the writer's own reference holds REFS >= 1 while it carves, a reader
// can never free a chunk a later sub-block is being carved from.
//
// # Room
// A chunk holds room while its writer keeps it, even with every sub-block
// released. So its writer (the host: payload/region.js says why only the host
// carves) retires it whenever room is short: before it waits for room
// (PayloadRegion#tryAlloc), and when a worker waits for room (on its
// drain). Then, as before, everything the region holds is freed while
// anything waits.
//
// # Layout (every word read back is untrusted: task code can write any byte)
// chunk + 0: REFS (i32); chunk + 4: MARK = chunk ^ CHUNK_MAGIC; then the
// sub-blocks: [i32 chunk][i32 chunk ^ p ^ SUB_MAGIC] before the bytes at
// p (8-aligned, the codec keeps binary values 8-aligned from there).

/** A chunk's size: 64 sub-blocks of 1 KiB values (docs/payload-path.md). */
const CHUNK_BYTES = 64 * 1024;
/** The largest payload carved from a chunk (at least 8 per chunk); larger ones cost far more than a crossing. */
const MAX_CARVED = 8 * 1024 - 8;
const CHUNK_MAGIC = 0x4b4e4348; // "KNCH"
const SUB_MAGIC = 0x4b4e5342; // "KNSB"
const HEADER = 8;
// Word indexes: a chunk's MARK after its REFS (chunk >> 2); a sub-block's
// CHUNK and CHECK words before its bytes (p >> 2).
const C_MARK = 1;
const S_CHUNK = 2;
const S_CHECK = 1;
/** Returned by carve when no chunk could be had: the caller takes a block of its own. */
const NOT_CARVED = 0;

class Chunks {
  /**
   * `i32`: a length-tracking Int32Array over the payload region. `open()`
   * returns a block of CHUNK_BYTES (its offset, 16-aligned) or 0 when the
   * region has no room; `free(offset)` gives a chunk back. `corrupt(msg)`
   * makes the error thrown for a word that makes no sense. `bytes`: the
   * chunk size (a smaller one in the protocol model).
   */
  constructor(i32, open, free, corrupt, bytes = CHUNK_BYTES) {
    this.i32 = i32;
    this.openBlock = open;
    this.freeBlock = free;
    this.corrupt = corrupt;
    this.bytes = bytes;
    this.maxCarved = Math.min(MAX_CARVED, (bytes >> 1) - HEADER);
    this.chunk = 0; // the chunk carved from now (0: none)
    this.next = 0; // where the next sub-block's header goes
    this.end = 0;
  }

  /** A sub-block for `size` bytes (its offset, 8-aligned), or NOT_CARVED. */
  carve(size) {
    const need = HEADER + ((size + 7) & ~7);
    if (need - HEADER > this.maxCarved) return NOT_CARVED;
    if (this.chunk === 0 || this.next + need > this.end) {
      this.retire();
      const at = this.openBlock(this.bytes);
      if (at === 0) return NOT_CARVED;
      Atomics.store(this.i32, at >> 2, 1); // the writer's own reference
      this.i32[(at >> 2) + C_MARK] = at ^ CHUNK_MAGIC;
      this.chunk = at;
      this.next = at + HEADER;
      this.end = at + this.bytes;
    }
    const chunk = this.chunk;
    const p = this.next + HEADER;
    this.next += need;
    Atomics.add(this.i32, chunk >> 2, 1);
    this.i32[(p >> 2) - S_CHUNK] = chunk;
    this.i32[(p >> 2) - S_CHECK] = chunk ^ p ^ SUB_MAGIC;
    return p;
  }

  /** Drops the writer's reference to its chunk: it carves from a new one next. */
  retire() {
    const chunk = this.chunk;
    if (chunk === 0) return false;
    this.chunk = 0;
    this.next = 0;
    this.end = 0;
    return this.drop(chunk);
  }

  /** Whether the writer holds a chunk (room it could give back). */
  carving() {
    return this.chunk !== 0;
  }

  /**
   * Whether sub-block `p` is live and has room for `size` bytes: a reader
   * may then write its answer into it and hand it back (the writer's side
   * releases it). False for anything else (release() says what is wrong).
   */
  holds(p, size) {
    const i32 = this.i32;
    if ((p & 7) !== 0 || p < 2 * HEADER || p > i32.length * 4) return false;
    const w = p >> 2;
    const chunk = i32[w - S_CHUNK];
    if (Atomics.load(i32, w - S_CHECK) !== (chunk ^ p ^ SUB_MAGIC) || (chunk & 15) !== 0 || chunk <= 0 || chunk >= p) {
      return false;
    }
    return p + ((size + 7) & ~7) <= chunk + this.bytes && i32[(chunk >> 2) + C_MARK] === (chunk ^ CHUNK_MAGIC);
  }

  /** The reader is done with sub-block `p`; throws KNT_REGION_CORRUPT for an offset that is not one. */
  release(p) {
    const i32 = this.i32;
    if ((p & 7) !== 0 || p < 2 * HEADER || p > i32.length * 4)
      throw this.corrupt(`payload offset ${p} is not a sub-block of the payload region`);
    const w = p >> 2;
    const chunk = i32[w - S_CHUNK];
    // The check word through Atomics, as its clearing below: the protocol
    // model replays a step's reads, and this word changes under them.
    if (Atomics.load(i32, w - S_CHECK) !== (chunk ^ p ^ SUB_MAGIC) || (chunk & 15) !== 0 || chunk <= 0 || chunk >= p) {
      throw this.corrupt(`payload offset ${p} is not a live sub-block (released twice, or overwritten)`);
    }
    if (p - chunk > this.bytes || i32[(chunk >> 2) + C_MARK] !== (chunk ^ CHUNK_MAGIC))
      throw this.corrupt(`sub-block ${p} names chunk ${chunk}, which is not one`);
    Atomics.store(i32, w - S_CHECK, 0);
    return this.drop(chunk);
  }

  /** REFS -= 1; frees the chunk when that was the last reference. True when it did. */
  drop(chunk) {
    const i32 = this.i32;
    const w = chunk >> 2;
    for (;;) {
      const refs = Atomics.load(i32, w);
      if (refs <= 0) throw this.corrupt(`chunk ${chunk} of the payload region counts ${refs} references`);
      // SeqCst read-modify-write: the decrements form one order, so exactly
      // one party sees 1 here, after every other party's last access.
      if (Atomics.compareExchange(i32, w, refs, refs - 1) !== refs) continue;
      if (refs !== 1) return false;
      this.freeBlock(chunk);
      return true;
    }
  }
}

module.exports = { Chunks, CHUNK_BYTES, MAX_CARVED, NOT_CARVED };
