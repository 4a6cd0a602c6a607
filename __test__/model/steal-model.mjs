// The steal protocol's model: the host's end (HostSubmit) and W workers
// (Claimant, with their whole scheduling loop) from lib/protocol/steal.js, run by the
// checker (checker.mjs) over every interleaving of their shared accesses.
//
// # The parties
// - Host. Moves (each an op of the host's event loop): `submit` the next
//   call (freeSlot, write the request, publish), `flush`, `drain` (takeDone
//   for every worker whose DONE_SEQ moved, settling each answer), and
//   `takeBack` of a dead worker's calls. They run in any order, whenever
//   enabled: host/pool.js runs them from microtasks, the doorbell and polling,
//   and the doorbell has its own model (src/model.rs).
// - Worker w: an event loop running Claimant's callbacks: `start` (a new
//   Claimant, then serve), `serve` (after env.later), `woke` (after a sleep
//   ended), `asyncEnd` (an async call answered). Its env: `run` reads the
//   request, and answers at once, goes async (answered later by an
//   `asyncEnd` callback), or, for a call the configuration marks long, may
//   never return (the worker takes no step again: a call that lasts longer
//   than anything else); `spin` finds a PENDING bit (if one is set) or times
//   out; `sleep(word, value)` returns at once if the word moved, else parks
//   until a notify on that word; `later` queues `serve`.
// - Death: a worker named in `mayDie` may stop at any point; the host then
//   takes its calls back, and with `respawn` a new worker starts in its
//   place.
// - Leaving (worker recycling, lib/server/recycle.js): a worker named in `mayLeave`
//   may, at the end of any call it ran (where worker/serve.js looks at its recycle
//   limits), leave by the shipped rule (lib/worker/recycle.js,
//   leaveWhenEmpty; a broken variant passes another `leaveRule`). Its
//   `exit()` returns (a worker thread asks the host to end it): the worker
//   goes on running the callbacks it has queued until the host takes it
//   back (terminates it), and with `respawn` its replacement joins as a new
//   claimant while calls are in flight.
// - Joining: a worker named in `late` is not started at first; a host move
//   starts it whenever (a claimant joining while calls are in flight).
// - Idle leaving (an elastic pool shrinking, lib/server/elastic.js): the host may
//   tell a worker named in `mayIdleLeave` to leave (a host move that queues
//   a "leave" message), whatever the worker is doing; the worker reads it
//   at any turn of its event loop (parked, between callbacks, with calls
//   arriving meanwhile) and leaves by the same rule, or, holding an async
//   call, at the end of a call once it holds none. The host takes it back;
//   with `respawn` a new claimant joins in its place (the pool growing).
//
// # What is checked
// In steps: the host writes only a slot no worker holds; a worker runs only
// a published request, each call at most once, and only after its claim
// (OWNER = w + 1); the host settles only an answered call, from the slot it
// put it in, once; a call taken back from a dead worker was claimed by it
// and not answered through DONE; a worker spins only while it holds SPINNER.
// A worker at its recycle limit (or told to leave) claims no new call. A
// worker that left held no call: taking it back finds none (a leave
// rejects nothing); from its leave until the host ends it, it makes no
// shared access (it claims, parks and wakes no more).
// In every terminal state: every call is settled (answered or taken back)
// except the long calls that never return; so no call waits behind a long
// call while a worker sleeps or spins, and nothing is lost or run twice.
// Progress (checker): no party spins or re-serves for ever.

import { createRequire } from "node:module";
import { effect, localEffect, choose, snapshot, restore, baseOf, step, STUCK, ModelViolation } from "./checker.mjs";
import { callerBurst, pumpAndFlush } from "./host-calls.mjs";

const require = createRequire(import.meta.url);
const { L } = require("../../lib/protocol/layout.js");
const steal = require("../../lib/protocol/steal.js");
const { leaveWhenEmpty } = require("../../lib/worker/recycle.js");

// stuckOn of a worker that left (not a call index).
const LEFT = -2;

const SECTION_BYTE = 128;

/**
 * `config`: { workers, regionLanes, width, calls: [{ long?, async? }],
 * cores, mayDie: [w], respawn, futileLimit, classes: { HostSubmit, Claimant }
 * (broken variants subclass them) }.
 */
export class StealModel {
  constructor(config) {
    this.c = {
      cores: 2,
      mayDie: [],
      mayLeave: [],
      mayIdleLeave: [],
      late: [],
      leaveRule: leaveWhenEmpty,
      respawn: false,
      futileLimit: 1,
      classes: { HostSubmit: steal.HostSubmit, Claimant: steal.Claimant },
      ...config,
    };
    // The caller makes its calls in bursts (one synchronous run of calls,
    // published by one flush); by default one call at a time.
    this.c.bursts ??= this.c.calls.map(() => 1);
    const { workers, regionLanes, width } = this.c;
    this.slots = regionLanes * width;
    const geometry = new steal.StealGeometry(null, SECTION_BYTE, workers, regionLanes, width, null);
    this.geometry = geometry;
    const bytes = geometry.slotsByte + this.slots * L.slotStride;
    this.mem = new Int32Array(new SharedArrayBuffer(bytes));
    this.names = new Map();
    for (let g = 0; g < regionLanes; g++) this.names.set(geometry.pending + g, `PENDING[${g}]`);
    this.names.set(geometry.sleepers, "SLEEPERS");
    this.names.set(geometry.idle, "IDLE");
    this.names.set(geometry.spinner, "SPINNER");
    this.names.set(L.wordCounter, "COUNTER");
    this.names.set(L.wordArmed, "ARMED");
    for (let w = 0; w < workers; w++) {
      for (let g = 0; g < regionLanes; g++) this.names.set(geometry.doneWord(w, g), `DONE[${w}][${g}]`);
      this.names.set(geometry.doneSeqWord(w), `DONE_SEQ[${w}]`);
      this.names.set(geometry.wakeWord(w), `WAKE[${w}]`);
    }
    for (let i = 0; i < this.slots; i++) this.names.set(geometry.slotWord(i) + L.slotWordOwner, `OWNER[${i}]`);
    // The doorbell words: workers only add to COUNTER and read ARMED here
    // (the host's side of the doorbell has its own model, src/model.rs), so
    // those accesses commute with everything.
    this.invisible = new Set([L.wordCounter, L.wordArmed]);
    this.initial = new Int32Array(this.mem.length);
    for (let i = 0; i < this.slots; i++) this.initial[geometry.slotWord(i) + L.slotWordOwner] = L.ownerHost | 0;
  }

  /** Worker w's fields as constructed over fresh memory (snapshots are against it). */
  workerBase(w) {
    // Built in init(), outside steps: the constructor's loads are not moves.
    if (this.bases[w] === undefined) {
      const env = { run() {}, spin() {}, sleep() {}, later() {}, ring() {} };
      const fresh = new this.c.classes.Claimant(
        new Int32Array(this.mem.length),
        SECTION_BYTE,
        this.c.workers,
        this.c.regionLanes,
        this.c.width,
        w,
        () => {},
        env,
        this.c.cores,
      );
      fresh.futileLimit = this.c.futileLimit;
      this.bases[w] = baseOf(fresh);
    }
    return this.bases[w];
  }

  notify(word) {
    effect(`notify ${this.names.get(word)}`, () => {
      for (const p of this.workers) {
        if (p.waiter !== null && p.waiter.word === word) {
          p.waiter = null;
          p.events.push("woke");
        }
      }
    });
  }

  makeHost() {
    return new this.c.classes.HostSubmit(
      this.mem,
      SECTION_BYTE,
      this.c.workers,
      this.c.regionLanes,
      this.c.width,
      (word) => this.notify(word),
    );
  }

  makeWorker(w) {
    const env = {
      run: (slot) => this.run(w, slot),
      spin: () => this.spin(w),
      sleep: (word, value) =>
        effect(`sleep on ${this.names.get(word)} while ${value}`, () => {
          const p = this.workers[w];
          if (REAL_LOAD(this.mem, word) !== value) p.events.push("woke");
          else p.waiter = { word, value };
        }),
      later: () => localEffect(() => void this.workers[w].events.push("serve")),
      ring: () => {},
    };
    const c = new this.c.classes.Claimant(
      this.mem,
      SECTION_BYTE,
      this.c.workers,
      this.c.regionLanes,
      this.c.width,
      w,
      (word) => this.notify(word),
      env,
      this.c.cores,
    );
    c.futileLimit = this.c.futileLimit;
    return c;
  }

  // ---- the environment's effects (ghost checks live here) -----------------

  run(w, slot) {
    const g = this.ghost;
    // The slot is this worker's from its claim to its DONE store: reading
    // the request and writing the answer touch nothing another party reads.
    const r = localEffect(() => {
      const cell = g.cells[slot];
      if (cell === null || cell.k !== "q")
        throw new ModelViolation(`worker ${w} runs slot ${slot}, which holds no request`);
      const call = g.calls[cell.c];
      if (call.st !== "pub") throw new ModelViolation(`worker ${w} runs call ${cell.c} again (it is ${call.st})`);
      if (g.limit[w]) throw new ModelViolation(`worker ${w} claims call ${cell.c} past its recycle limit`);
      const owner = REAL_LOAD(this.mem, this.geometry.slotWord(slot) + L.slotWordOwner);
      if (owner !== w + 1) throw new ModelViolation(`worker ${w} runs slot ${slot} whose OWNER is ${owner}`);
      call.st = "run";
      call.by = w;
      return { c: cell.c };
    });
    const spec = this.c.calls[r.c];
    if (spec.long) {
      const k = choose(`call ${r.c} (long)`, () => 2);
      if (k === 1) {
        effect(`call ${r.c} never returns`, () => {
          this.workers[w].stuckOn = r.c;
          throw STUCK;
        });
      }
    }
    if (spec.async) {
      localEffect(() => void this.workers[w].events.push(`async:${slot}`));
      return true;
    }
    this.answer(w, slot);
    this.workers[w].obj.finish(slot);
    this.mayLeave(w);
    return false;
  }

  /**
   * The end of a call: a worker told to leave leaves once it holds no call;
   * one in `mayLeave` may try to (worker/serve.js's callEnded).
   */
  mayLeave(w) {
    // Logged: a step after the leave replays this op with `died` already set.
    if (localEffect(() => this.ghost.died[w]) !== 0) return;
    if (!localEffect(() => this.ghost.due[w])) {
      if (!this.c.mayLeave.includes(w)) return;
      if (!localEffect(() => this.ghost.limit[w]) && choose(`worker ${w} at a recycle limit?`, () => 2) === 0) return;
    }
    localEffect(() => void (this.ghost.limit[w] = true));
    this.leave(w);
  }

  /**
   * The shipped leave rule; true if the worker left. Its exit() returns: the
   * worker's callbacks go on until the host takes it back (workerMove checks
   * that they touch no shared word meanwhile).
   */
  leave(w) {
    const p = this.workers[w];
    if (localEffect(() => this.ghost.left[w])) return true;
    return this.c.leaveRule(p.obj, 0, () =>
      effect(`worker ${w} leaves`, () => {
        this.ghost.died[w] = 1;
        this.ghost.left[w] = true;
        p.stuckOn = LEFT;
      }),
    );
  }

  /** The host's "leave" message read by the worker between callbacks (worker/serve.js's leave()). */
  idleLeave(w) {
    localEffect(() => {
      this.ghost.due[w] = true;
      this.ghost.limit[w] = true;
    });
    this.leave(w);
  }

  answer(w, slot) {
    localEffect(() => {
      const g = this.ghost;
      const cell = g.cells[slot];
      const call = g.calls[cell.c];
      if (call.st !== "run" || call.by !== w)
        throw new ModelViolation(`worker ${w} answers call ${cell.c}, which it is not running`);
      call.st = "ans";
      g.cells[slot] = { k: "r", c: cell.c };
    });
  }

  spin(w) {
    const found = choose("spin", () => {
      const spinner = REAL_LOAD(this.mem, this.geometry.spinner);
      if (spinner !== w + 1)
        throw new ModelViolation(`worker ${w} spins while SPINNER is ${spinner}: one spinner at a time`);
      const g = this.geometry;
      for (let i = 0; i < this.c.regionLanes; i++) if (REAL_LOAD(this.mem, g.pending + i) !== 0) return 2;
      return 1;
    });
    return found === 1;
  }

  settle(index) {
    const c = this.host.release(index);
    // The answered slot is the host's: reading it is local.
    localEffect(() => {
      const g = this.ghost;
      const cell = g.cells[index];
      if (cell === null || cell.k !== "r" || cell.c !== c)
        throw new ModelViolation(`host settles call ${c} from slot ${index}, which holds ${JSON.stringify(cell)}`);
      if (g.calls[c].st !== "ans") throw new ModelViolation(`host settles call ${c}, which is ${g.calls[c].st}`);
      // Settled: who ran it no longer matters, and the slot is the host's.
      g.calls[c] = { st: "done", by: -1 };
      g.cells[index] = null;
    });
  }

  // ---- state ----------------------------------------------------------------

  init() {
    this.mem.set(this.initial);
    this.ghost = {
      burst: 0, // bursts the caller has made
      submitted: 0, // calls the caller has made
      next: 0, // calls placed in a slot
      cells: new Array(this.slots).fill(null),
      calls: this.c.calls.map(() => ({ st: "new", by: -1 })),
      died: new Array(this.c.workers).fill(0), // 0 alive, 1 dead, 2 taken back, 3 replaced
      left: new Array(this.c.workers).fill(false), // died by leaving (mayLeave)
      told: new Array(this.c.workers).fill(false), // the host told it to leave (mayIdleLeave)
      due: new Array(this.c.workers).fill(false), // it read that message: it leaves once it holds no call
      limit: new Array(this.c.workers).fill(false), // at a recycle limit (or told to leave): it claims no new call
    };
    this.host = this.makeHost();
    this.hostBase = baseOf(this.host);
    this.bases = [];
    this.objects = [];
    for (let w = 0; w < this.c.workers; w++) {
      this.workerBase(w);
      this.objects.push(this.makeWorker(w));
    }
    this.hostState = { priv: {}, op: null };
    this.workers = [];
    for (let w = 0; w < this.c.workers; w++) {
      const late = this.c.late.includes(w);
      this.workers.push({
        status: late ? "absent" : "alive",
        obj: null,
        priv: null,
        op: null,
        events: late ? [] : ["start"],
        waiter: null,
        stuckOn: -1,
      });
    }
    if (this.c.startParked) {
      // Every worker has started, found nothing and parked (a state the
      // start-up configurations reach): IDLE and SLEEPERS hold every worker,
      // each waits on its WAKE word.
      let all = 0;
      for (let w = 0; w < this.c.workers; w++) if (!this.c.late.includes(w)) all |= 1 << w;
      this.mem[this.geometry.idle] = all;
      this.mem[this.geometry.sleepers] = all;
      for (let w = 0; w < this.c.workers; w++) {
        if (this.c.late.includes(w)) continue;
        const p = this.workers[w];
        p.events = [];
        p.priv = { idleSet: true, parked: true };
        p.waiter = { word: this.geometry.wakeWord(w), value: 0 };
      }
    }
  }

  save() {
    const diffs = [];
    for (let i = 0; i < this.mem.length; i++) if (this.mem[i] !== this.initial[i]) diffs.push(i, this.mem[i]);
    return {
      m: diffs,
      g: this.ghost,
      h: this.hostState,
      w: this.workers.map((p) => ({ s: p.status, p: p.priv, o: p.op, e: p.events, x: p.waiter, k: p.stuckOn })),
    };
  }

  load(state) {
    this.mem.set(this.initial);
    for (let i = 0; i < state.m.length; i += 2) this.mem[state.m[i]] = state.m[i + 1];
    // Moves change the ghost in place and replace the rest: copy the ghost.
    const g = state.g;
    this.ghost = {
      burst: g.burst,
      submitted: g.submitted,
      next: g.next,
      cells: g.cells.slice(),
      calls: g.calls.map((c) => ({ st: c.st, by: c.by })),
      died: g.died.slice(),
      left: g.left.slice(),
      told: g.told.slice(),
      due: g.due.slice(),
      limit: g.limit.slice(),
    };
    this.hostState = state.h;
    restore(this.host, state.h.priv, this.hostBase);
    this.workers = state.w.map((p) => ({
      status: p.s,
      obj: null,
      priv: p.p,
      op: p.o,
      events: p.e.slice(),
      waiter: p.x,
      stuckOn: p.k,
    }));
  }

  /** One step of the host's current op, or the start of a new one. */
  hostMove(name) {
    return {
      label: `host ${name}`,
      run: (forced) => {
        const ops = this.hostOps();
        const body = name.startsWith("takeBack")
          ? () => ops.takeBack(Number(name.slice(8)))
          : name.startsWith("join")
            ? () => ops.join(Number(name.slice(4)))
            : name.startsWith("tell")
              ? () => ops.tell(Number(name.slice(4)))
              : ops[name];
        const hs = this.hostState;
        const op = hs.op || { name, log: [] };
        restore(this.host, hs.priv, this.hostBase);
        const r = step(op.log, forced, body);
        if (r.done) this.hostState = { priv: snapshot(this.host, this.hostBase), op: null };
        else this.hostState = { priv: hs.priv, op: { name, log: r.log } };
        return r;
      },
    };
  }

  hostOps() {
    const h = this.host;
    const g = this.ghost;
    const pump = () =>
      pumpAndFlush(
        g,
        h,
        () => h.freeSlot(),
        (slot, c) => {
          const cell = g.cells[slot];
          if (cell !== null)
            throw new ModelViolation(`host writes slot ${slot}, which holds call ${cell.c} (${g.calls[cell.c].st})`);
          const owner = REAL_LOAD(this.mem, this.geometry.slotWord(slot) + L.slotWordOwner);
          if (owner === 0) throw new ModelViolation(`host writes slot ${slot} while it is claimable`);
          g.calls[c].st = "pub";
        },
      );
    return {
      // The caller's synchronous code makes the next burst of calls.
      burst: () => {
        callerBurst(g, this.c.bursts);
        pump();
      },
      // A doorbell ring or a poll: settle the answers, refill, publish.
      drain: () => {
        for (let w = 0; w < this.c.workers; w++) h.takeDone(w, (index) => this.settle(index));
        pump();
      },
      takeBack: (w) => {
        const { held } = h.takeBack(w, (index) => this.settle(index));
        for (const index of held) {
          const c = h.release(index);
          localEffect(() => {
            const call = g.calls[c];
            if (g.left[w]) {
              throw new ModelViolation(`worker ${w} left holding call ${c} (${call.st}): taking it back rejects it`);
            }
            if (call.st === "done" || call.st === "rej")
              throw new ModelViolation(`call ${c} taken back from worker ${w} but it is ${call.st}`);
            if (call.st !== "pub" && call.by !== w)
              throw new ModelViolation(`call ${c} taken back from worker ${w} but worker ${call.by} ran it`);
            g.calls[c] = { st: "rej", by: -1 };
            g.cells[index] = null;
          });
        }
        pump();
        effect(`worker ${w} taken back`, () => {
          g.left[w] = false;
          g.due[w] = false;
          g.limit[w] = false;
          // 2: gone for good; 3: replaced (the replacement does not die).
          g.died[w] = this.c.respawn ? 3 : 2;
          // A worker that left ran until now: the host ends it.
          if (!this.c.respawn) Object.assign(this.workers[w], { status: "dead", op: null, events: [], waiter: null });
          if (this.c.respawn) {
            const p = this.workers[w];
            p.status = "alive";
            p.obj = null;
            p.priv = null;
            p.op = null;
            p.events = ["start"];
            p.waiter = null;
            p.stuckOn = -1;
          }
        });
      },
      // An idle worker is told to leave (server/elastic.js): a message it reads between callbacks.
      tell: (w) => {
        effect(`host tells worker ${w} to leave`, () => {
          g.told[w] = true;
          this.workers[w].events.push("leave");
        });
      },
      // A claimant joins (an elastic pool's new worker): it starts now.
      join: (w) => {
        effect(`worker ${w} joins`, () => {
          const p = this.workers[w];
          p.status = "alive";
          p.events = ["start"];
        });
      },
    };
  }

  workerMove(w, event, label) {
    return {
      label: `worker ${w} ${label}`,
      run: (forced) => {
        const p = this.workers[w];
        let op = p.op;
        if (op === null) {
          p.events = p.events.slice();
          p.events.splice(p.events.indexOf(event), 1);
          op = { ev: event, log: [] };
        }
        let serveAsked = false;
        const leftBefore = p.stuckOn === LEFT;
        const r = step(op.log, forced, () => {
          serveAsked = this.workerOp(w, op.ev);
        });
        if (leftBefore && r.live) {
          throw new ModelViolation(
            `worker ${w} left, then: ${r.label} (in ${op.ev}); it must take no step until ended`,
          );
        }
        if (r.stuck) {
          p.op = null;
          p.status = "stuck";
        } else if (r.done) {
          p.priv = snapshot(p.obj, this.workerBase(w));
          // The callback goes on with serve(), whose loop is `while
          // (this.turn());`: each turn is an op of its own, so a state
          // records where the loop is rather than how it got there.
          p.op = serveAsked ? { ev: "turn", log: [] } : null;
        } else p.op = { ev: op.ev, log: r.log };
        return r;
      },
    };
  }

  /** Runs a worker's callback (or one turn of its loop); true if it went on to serve(). */
  workerOp(w, ev) {
    const p = this.workers[w];
    // One object per worker, put back in the party's state for each step (a
    // new worker starts from its constructed fields; its constructor read
    // DONE words that are 0 for a first worker and were zeroed by takeBack
    // for a replacement).
    p.obj = this.objects[w];
    restore(p.obj, ev === "start" ? {} : p.priv, this.workerBase(w));
    let serveAsked = false;
    p.obj.serve = () => {
      serveAsked = true;
    };
    if (ev === "turn") return p.obj.turn();
    if (ev === "start" || ev === "serve") return true;
    if (ev === "woke") p.obj.woke();
    else if (ev === "leave") this.idleLeave(w);
    else {
      const slot = Number(ev.slice("async:".length));
      this.answer(w, slot);
      p.obj.finish(slot);
      p.obj.asyncEnded();
      this.mayLeave(w);
    }
    return serveAsked;
  }

  moves() {
    const out = [];
    const g = this.ghost;
    const h = this.host;
    const hs = this.hostState;
    if (hs.op !== null) {
      out.push(this.hostMove(hs.op.name));
    } else {
      if (g.burst < this.c.bursts.length) out.push(this.hostMove("burst"));
      let answers = false;
      for (let w = 0; w < this.c.workers; w++) {
        if (g.died[w] !== 2 && this.mem[h.doneSeqWord(w)] !== h.seenSeq[w]) answers = true;
      }
      if (answers) out.push(this.hostMove("drain"));
      for (let w = 0; w < this.c.workers; w++) {
        if (g.died[w] === 1) out.push(this.hostMove(`takeBack${w}`));
        if (this.workers[w].status === "absent") out.push(this.hostMove(`join${w}`));
        if (this.c.mayIdleLeave.includes(w) && g.died[w] === 0 && !g.told[w] && this.workers[w].status === "alive") {
          out.push(this.hostMove(`tell${w}`));
        }
      }
    }
    for (let w = 0; w < this.c.workers; w++) {
      const p = this.workers[w];
      if (p.status !== "alive") continue;
      if (p.op !== null) out.push(this.workerMove(w, p.op.ev, p.op.ev));
      else for (const ev of new Set(p.events)) out.push(this.workerMove(w, ev, ev));
      if (this.c.mayDie.includes(w) && g.died[w] === 0) {
        out.push({
          label: `worker ${w} dies`,
          run: () => {
            this.ghost.died[w] = 1;
            Object.assign(this.workers[w], { status: "dead", op: null, events: [], waiter: null });
            return { label: "dies", branches: 1 };
          },
        });
      }
    }
    return out;
  }

  terminal() {
    const g = this.ghost;
    g.calls.forEach((call, c) => {
      if (call.st === "done" || call.st === "rej") return;
      if (call.st === "run" && this.workers[call.by].status === "stuck" && this.workers[call.by].stuckOn === c) return;
      const who = this.workers.map(
        (p, w) =>
          `worker ${w}: ${p.status}${p.waiter ? " (parked)" : ""}${p.stuckOn >= 0 ? ` in long call ${p.stuckOn}` : ""}`,
      );
      throw new ModelViolation(`call ${c} is never settled (it is ${call.st}); ${who.join("; ")}`);
    });
  }
}

// Memory reads of the model itself (ghost checks, enabledness): not steps.
const REAL_ATOMICS = globalThis.Atomics;
function REAL_LOAD(mem, i) {
  return REAL_ATOMICS.load(mem, i);
}
