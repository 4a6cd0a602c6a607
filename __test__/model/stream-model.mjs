// The stream protocol's model (lib/protocol/stream.js): the host's end
// (HostChannel) and the worker's end (WorkerChannel) of one channel, run by
// the checker (checker.mjs) over every interleaving of their shared accesses.
//
// # The parties
// - Worker: an event loop with one callback, `produce` (as
//   worker/stream-task.js does between values): room(); stopped (-1): it
//   ends; no room (0): it waits until HOST_SEQ moves off what room() read
//   (a wait that returns at once if the word moved already, else parks until
//   a notify on it); else it sends a batch of up to `batch` values (its
//   block written, then publish()) and schedules `produce` again, until all
//   `values` are sent.
// - Host: `poll` (a drain pass, whenever SENT moved: take every waiting
//   batch, then tookAll), `consume` (the caller takes the next value it
//   holds; consumed() may grant credit) and, with `stopAt`, `stop` (the
//   caller ends the stream after consuming that many values).
//
// # What is checked
// In steps: the worker never has more than `window` values sent and not
// consumed (backpressure) and never overwrites a ring entry the host has
// not taken; the host takes each batch once, in order, from the entry its
// worker wrote for it. In every terminal state: no one sleeps for ever
// (no lost wake-up); the worker ended; every batch sent was taken; without
// a stop the caller consumed every value, in order.

import { createRequire } from "node:module";
import { effect, localEffect, snapshot, restore, baseOf, step, ModelViolation } from "./checker.mjs";

const require = createRequire(import.meta.url);
const stream = require("../../lib/protocol/stream.js");

const REAL_ATOMICS = globalThis.Atomics;
const REAL_LOAD = (mem, i) => REAL_ATOMICS.load(mem, i);
const BLOCK = 1000; // batch k's block is BLOCK + 16 * k (what the allocator would hand out)

/**
 * `config`: { values, window, batch, ring? (entries; the shipped RING_SIZE by default), stopAt?,
 * classes?: { HostChannel, WorkerChannel } (a broken variant) }.
 */
export class StreamModel {
  constructor(config) {
    this.c = {
      classes: { HostChannel: stream.HostChannel, WorkerChannel: stream.WorkerChannel },
      ring: stream.RING_SIZE,
      ...config,
    };
    this.mem = new Int32Array(new SharedArrayBuffer(stream.CHANNEL_BYTES));
    const probe = new stream.WorkerChannel(null, 0);
    this.names = new Map([
      [0, "CREDIT"],
      [1, "TAKEN"],
      [2, "STOP"],
      [probe.seqWord, "HOST_SEQ"],
      [6, "SENT"],
    ]);
    for (let e = 0; e < stream.RING_SIZE; e++) {
      this.names.set(8 + 2 * e, `RING${e}.EXT`);
      this.names.set(9 + 2 * e, `RING${e}.LEN`);
    }
    this.initial = new Int32Array(this.mem.length);
  }

  init() {
    const { HostChannel, WorkerChannel } = this.c.classes;
    this.mem.fill(0);
    const notify = (word) =>
      effect(`notify ${this.names.get(word)}`, () => {
        if (this.worker.waiter !== null && this.worker.waiter.word === word) {
          this.worker.waiter = null;
          this.worker.events.push("produce");
        }
      });
    // The host formats the channel before the call is published (set-up, not a step).
    this.hostObj = new HostChannel(this.mem, 0, this.c.window, notify, this.c.ring);
    this.initial.set(this.mem);
    this.hostBase = baseOf(this.hostObj);
    this.host = { priv: {}, op: null };
    this.workerObj = new WorkerChannel(this.mem, 0, this.c.ring);
    this.workerBase = baseOf(this.workerObj);
    this.worker = { priv: {}, op: null, events: ["produce"], waiter: null };
    this.ghost = {
      produced: 0, // values the worker has sent
      batches: [], // [first value, count] of each batch sent, in order
      taken: 0, // batches the host has taken
      held: [], // values the host took and the caller has not consumed
      consumed: 0,
      stopped: false, // the caller stopped it
      ended: null, // "all sent" | "stopped"
    };
  }

  save() {
    const diffs = [];
    for (let i = 0; i < this.mem.length; i++) if (this.mem[i] !== this.initial[i]) diffs.push(i, this.mem[i]);
    const wk = this.worker;
    return { m: diffs, g: this.ghost, h: this.host, w: { p: wk.priv, o: wk.op, e: wk.events, x: wk.waiter } };
  }

  load(state) {
    this.mem.set(this.initial);
    for (let i = 0; i < state.m.length; i += 2) this.mem[state.m[i]] = state.m[i + 1];
    const g = state.g;
    this.ghost = { ...g, batches: g.batches.map((b) => b.slice()), held: g.held.slice() };
    this.host = state.h;
    restore(this.hostObj, state.h.priv, this.hostBase);
    const w = state.w;
    this.worker = { priv: w.p, op: w.o, events: w.e.slice(), waiter: w.x };
    restore(this.workerObj, w.p, this.workerBase);
  }

  produce() {
    const ch = this.workerObj;
    const g = this.ghost;
    const room = ch.room();
    if (room === -1) {
      localEffect(() => {
        if (!g.stopped) throw new ModelViolation("the worker sees a stop the caller never made");
        g.ended = "stopped";
      });
      return;
    }
    if (room === 0) {
      const word = ch.seqWord;
      const value = ch.seq;
      effect(`wait on HOST_SEQ while ${value}`, () => {
        if (REAL_LOAD(this.mem, word) !== value) this.worker.events.push("produce");
        else this.worker.waiter = { word, value };
      });
      return;
    }
    // From the channel's own count (restored when the op is replayed), not the ghost's.
    const n = Math.min(room, this.c.batch, this.c.values - ch.sentValues);
    const k = localEffect(() => {
      // Its block is written here: the entry must be free, the window not exceeded.
      if (g.batches.length - g.taken >= this.c.ring)
        throw new ModelViolation(`the worker sends batch ${g.batches.length} over a ring entry not taken yet`);
      if (g.produced + n - g.consumed > this.c.window)
        throw new ModelViolation(
          `the worker runs ${g.produced + n - g.consumed} values ahead of its caller (window ${this.c.window})`,
        );
      g.batches.push([g.produced, n]);
      g.produced += n;
      return g.batches.length - 1;
    });
    ch.publish(BLOCK + 16 * k, n, n);
    localEffect(() => {
      if (g.produced === this.c.values) g.ended = "all sent";
      else this.worker.events.push("produce");
    });
  }

  hostOps() {
    const ch = this.hostObj;
    const g = this.ghost;
    return {
      poll: () => {
        const n = ch.waiting();
        if (n < 0) throw new ModelViolation("the host reads a SENT word that makes no sense");
        for (let i = 0; i < n; i++) {
          const { ext, len } = ch.entry();
          localEffect(() => {
            const batch = g.batches[g.taken];
            if (batch === undefined || ext !== BLOCK + 16 * g.taken || len !== batch[1])
              throw new ModelViolation(`the host reads batch ${g.taken} from a ring entry not written for it`);
            for (let v = 0; v < batch[1]; v++) g.held.push(batch[0] + v);
            g.taken++;
          });
          ch.tookOne();
        }
        if (n > 0) ch.tookAll();
      },
      consume: () => {
        const total = localEffect(() => {
          const v = g.held.shift();
          if (v !== g.consumed) throw new ModelViolation(`the caller gets value ${v}, expected ${g.consumed}`);
          return ++g.consumed;
        });
        ch.consumed(total);
      },
      stop: () => {
        localEffect(() => {
          g.stopped = true;
          g.held = [];
        });
        ch.stop(stream.STOPS.RETURN);
      },
    };
  }

  moves() {
    const out = [];
    const g = this.ghost;
    const hs = this.host;
    const hostMove = (name) => ({
      label: `host ${name}`,
      run: (forced) => {
        const cur = this.host;
        restore(this.hostObj, cur.priv, this.hostBase);
        const r = step(cur.op ? cur.op.log : [], forced, this.hostOps()[name]);
        this.host = r.done
          ? { priv: snapshot(this.hostObj, this.hostBase), op: null }
          : { priv: cur.priv, op: { name, log: r.log } };
        return r;
      },
    });
    if (hs.op !== null) out.push(hostMove(hs.op.name));
    else {
      if (REAL_LOAD(this.mem, 6) !== this.hostObj.taken) out.push(hostMove("poll"));
      if (!g.stopped && g.held.length > 0) out.push(hostMove("consume"));
      if (this.c.stopAt !== undefined && !g.stopped && g.consumed === this.c.stopAt) out.push(hostMove("stop"));
    }
    const ws = this.worker;
    if (ws.op !== null || ws.events.length > 0) {
      out.push({
        label: "worker produce",
        run: (forced) => {
          const cur = this.worker;
          const events = cur.op ? cur.events : cur.events.slice(1);
          this.worker = { ...cur, events };
          restore(this.workerObj, cur.priv, this.workerBase);
          const r = step(cur.op ? cur.op.log : [], forced, () => this.produce());
          this.worker = r.done
            ? { ...this.worker, priv: snapshot(this.workerObj, this.workerBase), op: null }
            : { ...this.worker, priv: cur.priv, op: { log: r.log } };
          return r;
        },
      });
    }
    return out;
  }

  terminal() {
    const g = this.ghost;
    if (this.worker.waiter !== null) throw new ModelViolation("the worker waits for ever (a lost wake-up)");
    if (g.ended === null) throw new ModelViolation("the worker never ended");
    if (g.taken !== g.batches.length) throw new ModelViolation(`batch ${g.taken} is never taken`);
    if (!g.stopped && g.consumed !== this.c.values)
      throw new ModelViolation(`the caller consumed ${g.consumed} of ${this.c.values} values`);
  }
}

/** Deliberately broken variants: each changes one rule of the protocol. */
export const streamBroken = {
  /** The worker reads HOST_SEQ after CREDIT and TAKEN: a grant in between is missed. */
  LateSequence: class extends stream.WorkerChannel {
    room() {
      const i32 = this.i32;
      if (Atomics.load(i32, this.base + 2) !== stream.STOPS.GO) return -1;
      const taken = Atomics.load(i32, this.base + 1);
      const credit = Atomics.load(i32, this.base + 0);
      this.seq = Atomics.load(i32, this.seqWord);
      if (this.sentBatches - taken >= this.ringSize) return 0;
      const n = credit - this.sentValues;
      return n > 0 ? n : 0;
    }
  },
  /** The host grants credit without bumping HOST_SEQ (nor waking). */
  SilentCredit: class extends stream.HostChannel {
    consumed(consumed) {
      const credit = consumed + this.window;
      if (credit - this.credit < Math.max(1, this.window >> 1)) return;
      this.credit = credit;
      Atomics.store(this.i32, this.base + 0, credit);
    }
  },
  /** The worker stores SENT before the ring entry. */
  SentFirst: class extends stream.WorkerChannel {
    publish(ext, len, count) {
      const at = this.base + 8 + 2 * (this.sentBatches % this.ringSize);
      this.sentBatches++;
      this.sentValues += count;
      Atomics.store(this.i32, this.base + 6, this.sentBatches);
      Atomics.store(this.i32, at, ext);
      Atomics.store(this.i32, at + 1, len);
    }
  },
  /** The worker ignores TAKEN: a full ring is overwritten. */
  RingUnbounded: class extends stream.WorkerChannel {
    room() {
      const i32 = this.i32;
      this.seq = Atomics.load(i32, this.seqWord);
      if (Atomics.load(i32, this.base + 2) !== stream.STOPS.GO) return -1;
      const n = Atomics.load(i32, this.base + 0) - this.sentValues;
      return n > 0 ? n : 0;
    }
  },
  /** Credit counts from the values taken, not consumed: the worker runs ahead of a slow caller. */
  CreditOnTake: class extends stream.HostChannel {
    tookOne() {
      super.tookOne();
      this.credit += 1;
      Atomics.store(this.i32, this.base + 0, this.credit);
    }
  },
};
