// The chunk protocol's model (lib/payload/chunks.js): one writer carving
// small payloads out of chunks, two readers releasing them, run by the
// checker (checker.mjs) over every interleaving of their shared accesses.
// The allocator behind the chunks (Rust's arena, which has its own lock) is
// an effect here: `open` takes a free position, `free` gives it back.
//
// # The parties
// - Writer. Moves: `send` (carve a sub-block for the next payload, write
//   it, publish it to its reader), `pressure` (retire the chunk early, as
//   a writer does when room is short; at most `pressures` times), and once
//   everything is sent, `park` (retire, as a worker does before it parks).
// - Reader r: `read` (its next published sub-block, in order: decode, then
//   release; or, with `handBack`, every second one is handed back with the
//   answer written into it, and the writer's side releases it: `settle`).
//
// # What is checked
// In steps: a chunk is freed only while live (never twice), never while a
// sub-block of it is unreleased; the writer carves only from a live chunk; a
// reader only reads a sub-block whose chunk is the live one it was carved
// from (not freed, not reused since). In every terminal state: every
// sub-block released and every chunk freed (no reference lost).

import { createRequire } from "node:module";
import { effect, localEffect, snapshot, restore, baseOf, step, ModelViolation } from "./checker.mjs";

const require = createRequire(import.meta.url);
const { Chunks, NOT_CARVED } = require("../../lib/payload/chunks.js");

const POSITIONS = [64, 128, 192]; // where the allocator may put a chunk (16-aligned)
// A chunk holds two sub-blocks of 8 bytes (8-byte header each) after its own 8-byte header.
const CHUNK = 40;

/** `config`: { sends, readers, pressures, handBack?, Chunks? (a broken variant) }. */
export class ChunkModel {
  constructor(config) {
    this.c = { Chunks, readers: 2, pressures: 1, ...config };
    this.mem = new Int32Array(new SharedArrayBuffer(256));
    this.names = new Map(POSITIONS.map((p, i) => [p >> 2, `REFS${i}`]));
    this.initial = new Int32Array(this.mem.length);
  }

  init() {
    this.mem.set(this.initial);
    const C = this.c.Chunks;
    this.ghost = {
      sent: 0,
      pressures: 0,
      parked: false,
      subs: [], // { p, c (chunk), gen, s: "pub" | "read" | "rel" }
      chunks: POSITIONS.map(() => ({ live: false, gen: 0 })),
      next: new Array(this.c.readers).fill(0), // each reader's next sub-block (index into its share)
      back: [], // sub-blocks handed back with an answer, for the writer's side to release
    };
    const corrupt = (msg) => new ModelViolation(`refused as corrupt: ${msg}`);
    const open = () =>
      effect("alloc chunk", () => {
        const i = this.ghost.chunks.findIndex((ch) => !ch.live);
        if (i < 0) return 0;
        const ch = this.ghost.chunks[i];
        ch.live = true;
        ch.gen++;
        return POSITIONS[i];
      });
    const free = (at) =>
      effect(`free chunk ${at}`, () => {
        const g = this.ghost;
        const ch = g.chunks[POSITIONS.indexOf(at)];
        if (!ch || !ch.live) throw new ModelViolation(`chunk ${at} is freed twice`);
        const held = g.subs.find((s) => s.c === at && s.gen === ch.gen && s.s !== "rel");
        if (held) throw new ModelViolation(`chunk ${at} is freed while sub-block ${held.p} of it is ${held.s}`);
        ch.live = false;
      });
    this.writerObj = new C(this.mem, open, free, corrupt, CHUNK);
    this.writerBase = baseOf(this.writerObj);
    this.writer = { priv: {}, op: null };
    this.readerObjs = [];
    this.readers = [];
    for (let r = 0; r < this.c.readers; r++) {
      this.readerObjs.push(new C(this.mem, open, free, corrupt, CHUNK));
      this.readers.push({ op: null });
    }
  }

  save() {
    const diffs = [];
    for (let i = 0; i < this.mem.length; i++) if (this.mem[i] !== this.initial[i]) diffs.push(i, this.mem[i]);
    return { m: diffs, g: this.ghost, w: this.writer, r: this.readers };
  }

  load(state) {
    this.mem.set(this.initial);
    for (let i = 0; i < state.m.length; i += 2) this.mem[state.m[i]] = state.m[i + 1];
    const g = state.g;
    this.ghost = {
      ...g,
      subs: g.subs.map((s) => ({ ...s })),
      chunks: g.chunks.map((ch) => ({ ...ch })),
      next: g.next.slice(),
      back: g.back.slice(),
    };
    this.writer = state.w;
    restore(this.writerObj, state.w.priv, this.writerBase);
    this.readers = state.r;
  }

  writerOps() {
    const w = this.writerObj;
    const g = this.ghost;
    return {
      send: () => {
        const p = w.carve(8);
        localEffect(() => {
          if (p === NOT_CARVED) throw new ModelViolation("no chunk could be opened (the model has room for three)");
          const c = w.chunk;
          const ch = g.chunks[POSITIONS.indexOf(c)];
          if (!ch.live) throw new ModelViolation(`the writer carves sub-block ${p} from chunk ${c}, which was freed`);
          g.subs.push({ p, c, gen: ch.gen, s: "pub" });
          g.sent++;
        });
      },
      pressure: () => {
        localEffect(() => void g.pressures++);
        w.retire();
      },
      park: () => {
        localEffect(() => void (g.parked = true));
        w.retire();
      },
      settle: () => {
        const k = localEffect(() => {
          const k = g.back.shift();
          const sub = g.subs[k];
          const ch = g.chunks[POSITIONS.indexOf(sub.c)];
          if (!ch.live || ch.gen !== sub.gen) {
            throw new ModelViolation(`the writer's side reads the answer in ${sub.p}, whose chunk was freed or reused`);
          }
          sub.s = "rel";
          return k;
        });
        w.release(g.subs[k].p);
      },
    };
  }

  /** Reader r's next sub-block (index into subs), or -1. */
  nextFor(r) {
    const g = this.ghost;
    const k = r + g.next[r] * this.c.readers;
    return k < g.subs.length ? k : -1;
  }

  moves() {
    const out = [];
    const g = this.ghost;
    const ws = this.writer;
    const writerMove = (name) => ({
      label: `writer ${name}`,
      run: (forced) => {
        const cur = this.writer;
        restore(this.writerObj, cur.priv, this.writerBase);
        const r = step(cur.op ? cur.op.log : [], forced, this.writerOps()[name]);
        this.writer = r.done
          ? { priv: snapshot(this.writerObj, this.writerBase), op: null }
          : { priv: cur.priv, op: { name, log: r.log } };
        return r;
      },
    });
    if (ws.op !== null) out.push(writerMove(ws.op.name));
    else if (g.back.length > 0) out.push(writerMove("settle"));
    if (ws.op !== null) {
      // (the op in progress is the writer's only move)
    } else if (g.sent < this.c.sends) {
      out.push(writerMove("send"));
      if (g.pressures < this.c.pressures && this.writerObj.carving()) out.push(writerMove("pressure"));
    } else if (!g.parked) out.push(writerMove("park"));
    for (let r = 0; r < this.c.readers; r++) {
      const rs = this.readers[r];
      if (rs.op === null && this.nextFor(r) < 0) continue;
      out.push({
        label: `reader ${r} read`,
        run: (forced) => {
          const cur = this.readers[r];
          const k = cur.op ? cur.op.k : this.nextFor(r);
          const res = step(cur.op ? cur.op.log : [], forced, () => {
            const sub = this.ghost.subs[k];
            localEffect(() => {
              const ch = this.ghost.chunks[POSITIONS.indexOf(sub.c)];
              if (!ch.live || ch.gen !== sub.gen)
                throw new ModelViolation(`reader ${r} reads sub-block ${sub.p}, whose chunk was freed or reused`);
              sub.s = "read";
            });
            if (this.c.handBack && k % 2 === 0) {
              // The answer goes into the sub-block, which goes back: not released here.
              if (!this.readerObjs[r].holds(sub.p, 8)) {
                throw new ModelViolation(`sub-block ${sub.p} cannot hold the answer`);
              }
              localEffect(() => {
                sub.s = "back";
                this.ghost.back.push(k);
              });
              return;
            }
            localEffect(() => void (sub.s = "rel"));
            this.readerObjs[r].release(sub.p);
          });
          const readers = this.readers.slice();
          readers[r] = res.done ? { op: null } : { op: { k, log: res.log } };
          if (res.done) this.ghost.next[r]++;
          this.readers = readers;
          return res;
        },
      });
    }
    return out;
  }

  terminal() {
    const g = this.ghost;
    const open = g.subs.find((s) => s.s !== "rel");
    if (open) throw new ModelViolation(`sub-block ${open.p} is never released`);
    const live = g.chunks.findIndex((ch) => ch.live);
    if (live >= 0) throw new ModelViolation(`chunk ${POSITIONS[live]} is never freed (a reference was lost)`);
  }
}

/** Deliberately broken variants: each changes one rule of the protocol. */
export const chunkBroken = {
  /** The writer holds no reference of its own: REFS counts sub-blocks only. */
  NoWriterReference: class extends Chunks {
    carve(size) {
      const fresh = this.chunk === 0 || this.next + 8 + ((size + 7) & ~7) > this.end;
      const p = super.carve(size);
      // What opening stored for the writer is taken back at once.
      if (fresh && p !== NOT_CARVED) Atomics.sub(this.i32, this.chunk >> 2, 1);
      return p;
    }
    retire() {
      this.chunk = 0;
      this.next = 0;
      this.end = 0;
      return false;
    }
  },
  /** REFS -= 1 as a load and a store: two releases at once lose one. */
  PlainDecrement: class extends Chunks {
    drop(chunk) {
      const refs = Atomics.load(this.i32, chunk >> 2);
      Atomics.store(this.i32, chunk >> 2, refs - 1);
      if (refs !== 1) return false;
      this.freeBlock(chunk);
      return true;
    }
  },
};
