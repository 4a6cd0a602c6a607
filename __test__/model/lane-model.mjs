// The lane protocol's model: the host's end (HostLane) and the worker
// (WorkerLane, with its whole loop) from lib/protocol/lane.js, run by the checker
// (checker.mjs) over every interleaving of their shared accesses. Lanes
// share nothing but the doorbell, so one lane is modelled.
//
// # The parties
// - Host. Moves: `burst` (the caller makes its next calls: each goes into a
//   free slot of the lane, then one flush, as host/pool.js's place and its
//   microtask do) and `drain` (takeFinished; each finished call settled;
//   queued calls placed; flush), whenever RES moved.
// - Worker: an event loop running WorkerLane's callbacks: `serve` (start,
//   or after env.later), `woke` (after a sleep ended), `asyncEnd` (an
//   async call answered). Its env: `run` reads the request and answers it
//   at once or goes async; `spin` may return at any time; `sleep(word,
//   value)` returns at once if the word moved, else parks until a notify on
//   it. serve() is `while (this.turn());` and each turn is an op.
//
// - Leaving and joining (`elastic`: an elastic pool's lane, or recycling,
//   lib/server/recycle.js): the host may `retire` the lane at any time (it places
//   no more calls on it; those it has queue), `end` its worker once the
//   shipped rule (laneEmptied) says the lane is empty, taking back what the
//   lane holds, and later a new worker `join`s the lane (a fresh WorkerLane
//   over the reset words) while calls wait; the host places them again.
//
// # What is checked
// In steps: the host writes only a slot it owns (REQ bit == RES bit) and
// has not handed out; the worker runs only a slot handed to it, each call
// once; the host settles a call only once it was answered, from its slot.
// A worker that is ended held no call (taking the lane back finds none), and
// the host places no call on a lane that is leaving or has no worker.
// In every terminal state: every call settled (nothing lost, no lost
// wake-up). Progress (checker): no party loops for ever.

import { createRequire } from "node:module";
import { effect, localEffect, snapshot, restore, baseOf, step, ModelViolation } from "./checker.mjs";
import { callerBurst, pumpAndFlush } from "./host-calls.mjs";

const require = createRequire(import.meta.url);
const lane = require("../../lib/protocol/lane.js");
const { laneEmptied } = require("../../lib/server/recycle.js");
const { L, lowestBit } = require("../../lib/protocol/layout.js");

const REAL_ATOMICS = globalThis.Atomics;
const REAL_LOAD = (mem, i) => REAL_ATOMICS.load(mem, i);

/**
 * `config`: { calls: [{ async? }], bursts?: [n], slots (<= 32), elastic,
 * classes: { HostLane, WorkerLane }, emptied (the leave rule), placesOnLeaving }.
 */
export class LaneModel {
  constructor(config) {
    this.c = {
      classes: { HostLane: lane.HostLane, WorkerLane: lane.WorkerLane },
      elastic: false,
      emptied: laneEmptied,
      placesOnLeaving: false,
      ...config,
    };
    this.c.bursts ??= this.c.calls.map(() => 1);
    const probe = new lane.HostLane(null, 0, null);
    this.mem = new Int32Array(new SharedArrayBuffer(probe.slotWord(L.slotCount) * 4));
    this.names = new Map([
      [probe.req, "REQ"],
      [probe.res, "RES"],
      [probe.sleeping, "SLEEPING"],
      [L.wordCounter, "COUNTER"],
      [L.wordArmed, "ARMED"],
    ]);
    this.invisible = new Set([L.wordCounter, L.wordArmed]); // as in steal-model.mjs
    this.initial = new Int32Array(this.mem.length);
  }

  init() {
    this.mem.set(this.initial);
    this.ghost = {
      burst: 0,
      submitted: 0,
      next: 0,
      cells: new Array(L.slotCount).fill(null),
      calls: this.c.calls.map(() => "new"),
      lane: "active", // "retiring" (told to leave), "gone" (its worker ended); back to "active" when one joins
      left: 0, // times a worker left
    };
    const notify = (word) =>
      effect(`notify ${this.names.get(word)}`, () => {
        if (this.worker.waiter !== null && this.worker.waiter.word === word) {
          this.worker.waiter = null;
          this.worker.events.push("woke");
        }
      });
    this.host = new this.c.classes.HostLane(this.mem, 0, notify);
    // Only the first `slots` slots exist in this model: the rest are busy.
    if (this.c.slots !== undefined) this.host.busy = ~((1 << this.c.slots) - 1);
    this.hostBase = baseOf(this.host);
    this.hostState = { priv: {}, op: null };
    const env = {
      run: (slot) => this.run(slot),
      spin: () => {},
      sleep: (word, value) =>
        effect(`sleep on ${this.names.get(word)} while ${value}`, () => {
          if (REAL_LOAD(this.mem, word) !== value) this.worker.events.push("woke");
          else this.worker.waiter = { word, value };
        }),
      later: () => localEffect(() => void this.worker.events.push("serve")),
      ring: () => {},
    };
    this.workerObj = new this.c.classes.WorkerLane(this.mem, 0, env);
    this.workerBase = baseOf(this.workerObj);
    this.worker = { priv: {}, op: null, events: ["serve"], waiter: null };
  }

  save() {
    const diffs = [];
    for (let i = 0; i < this.mem.length; i++) if (this.mem[i] !== this.initial[i]) diffs.push(i, this.mem[i]);
    const wk = this.worker;
    return { m: diffs, g: this.ghost, h: this.hostState, w: { p: wk.priv, o: wk.op, e: wk.events, x: wk.waiter } };
  }

  load(state) {
    this.mem.set(this.initial);
    for (let i = 0; i < state.m.length; i += 2) this.mem[state.m[i]] = state.m[i + 1];
    const g = state.g;
    this.ghost = { ...g, cells: g.cells.slice(), calls: g.calls.slice() };
    this.hostState = state.h;
    restore(this.host, state.h.priv, this.hostBase);
    this.worker = { priv: state.w.p, op: state.w.o, events: state.w.e.slice(), waiter: state.w.x };
  }

  run(slot) {
    const g = this.ghost;
    const c = localEffect(() => {
      const cell = g.cells[slot];
      if (cell === null || cell.k !== "q")
        throw new ModelViolation(`the worker runs slot ${slot}, which holds no request`);
      if (g.calls[cell.c] !== "pub")
        throw new ModelViolation(`the worker runs call ${cell.c} again (it is ${g.calls[cell.c]})`);
      g.calls[cell.c] = "run";
      return cell.c;
    });
    if (this.c.calls[c].async) {
      localEffect(() => void this.worker.events.push(`async:${slot}`));
      return true;
    }
    this.answer(slot);
    this.workerObj.finish(slot);
    return false;
  }

  answer(slot) {
    localEffect(() => {
      const g = this.ghost;
      const c = g.cells[slot].c;
      if (g.calls[c] !== "run") throw new ModelViolation(`the worker answers call ${c}, which it is not running`);
      g.calls[c] = "ans";
      g.cells[slot] = { k: "r", c };
    });
  }

  /** The balancer's rule (host/topology/lanes.js workersChanged): no call for a lane that is leaving or gone. */
  placeable(g) {
    return g.lane === "active" || this.c.placesOnLeaving;
  }

  hostOps() {
    const h = this.host;
    const g = this.ghost;
    const pump = () =>
      pumpAndFlush(
        g,
        h,
        () => (h.accepts() && this.placeable(g) ? h.freeSlot() : -1),
        (slot, c) => {
          if (g.lane !== "active") throw new ModelViolation(`host places call ${c} on the lane while it is ${g.lane}`);
          if (((REAL_LOAD(this.mem, h.req) ^ REAL_LOAD(this.mem, h.res)) & (1 << slot)) !== 0)
            throw new ModelViolation(`host writes slot ${slot}, which the worker holds`);
          if (g.cells[slot] !== null)
            throw new ModelViolation(`host writes slot ${slot}, which holds call ${g.cells[slot].c}`);
          g.calls[c] = "pub";
        },
      );
    return {
      burst: () => {
        callerBurst(g, this.c.bursts);
        pump();
      },
      drain: () => settleFinished(),
      // Elastic: the lane leaves (the balancer skips it from now on).
      retire: () => localEffect(() => void (g.lane = "retiring")),
      // Its worker is ended once the lane is empty; the host takes the lane back.
      end: () => {
        if (!this.c.emptied(h)) return;
        localEffect(() => {
          g.calls.forEach((st, c) => {
            if (st === "pub" || st === "run" || st === "ans") {
              throw new ModelViolation(`the worker is ended holding call ${c} (${st})`);
            }
          });
        });
        effect("the worker is ended", () => {
          g.lane = "gone";
          g.left++;
          this.worker = { priv: {}, op: null, events: [], waiter: null };
        });
        settleFinished();
        const held = h.reset();
        if (held.length !== 0) throw new ModelViolation(`taking the lane back finds ${held.length} calls`);
      },
      // A new worker joins the lane; the calls that waited are placed on it.
      join: () => {
        effect("a worker joins", () => {
          g.lane = "active";
          this.worker = { priv: {}, op: null, events: ["serve"], waiter: null };
        });
        pump();
      },
    };
    function settleFinished() {
      let finished = h.takeFinished();
      while (finished !== 0) {
        const slot = lowestBit(finished);
        finished &= finished - 1;
        const c = h.release(slot);
        localEffect(() => {
          const cell = g.cells[slot];
          if (cell === null || cell.k !== "r" || cell.c !== c)
            throw new ModelViolation(`host settles call ${c} from slot ${slot}, which holds ${JSON.stringify(cell)}`);
          g.calls[c] = "done";
          g.cells[slot] = null;
        });
      }
      pump();
    }
  }

  moves() {
    const out = [];
    const hs = this.hostState;
    const hostMove = (name) => ({
      label: `host ${name}`,
      run: (forced) => {
        const body = this.hostOps()[name];
        const cur = this.hostState;
        restore(this.host, cur.priv, this.hostBase);
        const r = step(cur.op ? cur.op.log : [], forced, body);
        this.hostState = r.done
          ? { priv: snapshot(this.host, this.hostBase), op: null }
          : { priv: cur.priv, op: { name, log: r.log } };
        return r;
      },
    });
    if (hs.op !== null) out.push(hostMove(hs.op.name));
    else {
      if (this.ghost.burst < this.c.bursts.length) out.push(hostMove("burst"));
      if (REAL_LOAD(this.mem, this.host.res) !== this.host.seenRes) out.push(hostMove("drain"));
      // One leave and one join per run (each at any point).
      if (this.c.elastic && this.ghost.lane === "active" && this.ghost.left === 0) out.push(hostMove("retire"));
      if (this.ghost.lane === "retiring" && this.c.emptied(this.host)) out.push(hostMove("end"));
      if (this.ghost.lane === "gone") out.push(hostMove("join"));
    }
    const wk = this.worker;
    const workerMove = (ev) => ({
      label: `worker ${ev}`,
      run: (forced) => {
        const wk = this.worker; // the state this move starts from (moves() saw an earlier load)
        let op = wk.op;
        if (op === null) {
          wk.events.splice(wk.events.indexOf(ev), 1);
          op = { ev, log: [] };
        }
        const obj = this.workerObj;
        restore(obj, wk.priv, this.workerBase);
        let serveAsked = false;
        obj.serve = () => {
          serveAsked = true;
        };
        const r = step(op.log, forced, () => {
          if (op.ev === "turn") serveAsked = obj.turn();
          else if (op.ev === "serve") serveAsked = true;
          else if (op.ev === "woke") obj.woke();
          else {
            const slot = Number(op.ev.slice("async:".length));
            this.answer(slot);
            obj.finish(slot);
            obj.asyncEnded();
          }
        });
        if (r.done) {
          wk.priv = snapshot(obj, this.workerBase);
          // serve() is `while (this.turn());`: each turn is an op of its own.
          wk.op = serveAsked ? { ev: "turn", log: [] } : null;
        } else wk.op = { ev: op.ev, log: r.log };
        return r;
      },
    });
    if (this.ghost.lane === "gone") return out;
    if (wk.op !== null) out.push(workerMove(wk.op.ev));
    else for (const ev of new Set(wk.events)) out.push(workerMove(ev));
    return out;
  }

  terminal() {
    this.ghost.calls.forEach((st, c) => {
      if (st !== "done")
        throw new ModelViolation(
          `call ${c} is never settled (it is ${st}); the worker is ${this.worker.waiter ? "parked" : "idle"}`,
        );
    });
  }
}

export const laneBroken = {
  /** The host stores REQ but never wakes a parked worker. */
  HostNeverWakes: {
    HostLane: class extends lane.HostLane {
      constructor(i32, index, wakeWorker) {
        super(i32, index, () => {});
        void wakeWorker;
      }
    },
    WorkerLane: lane.WorkerLane,
  },
  /** The host does not advance what it has seen of RES: an answer is settled twice. */
  HostRereadsRes: {
    HostLane: class extends lane.HostLane {
      takeFinished() {
        const res = Atomics.load(this.i32, this.res);
        const finished = (res ^ this.seenRes) & this.busy;
        this.busy &= ~finished;
        return res ^ this.seenRes;
      }
    },
    WorkerLane: lane.WorkerLane,
  },
  /** The protocol as it shipped before this model: the worker parks on REQ, the host notifies REQ. */
  SleepsOnReq: {
    HostLane: class extends lane.HostLane {
      constructor(i32, index, wakeWorker) {
        super(i32, index, () => wakeWorker(this.req));
      }
    },
    WorkerLane: class extends lane.WorkerLane {
      park() {
        Atomics.store(this.i32, this.sleeping, 1);
        const req = Atomics.load(this.i32, this.req);
        if (this.hasNew(req)) {
          Atomics.store(this.i32, this.sleeping, 0);
          this.env.later();
          return;
        }
        this.env.sleep(this.req, req);
      }
    },
  },
  /** The worker takes a request it already started again. */
  RetakesStarted: {
    HostLane: lane.HostLane,
    WorkerLane: class extends lane.WorkerLane {
      takeNew() {
        const fresh = Atomics.load(this.i32, this.req) ^ this.resBits;
        this.started |= fresh;
        return fresh;
      }
    },
  },
};
