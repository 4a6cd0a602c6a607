// The shared-bytes protocol's model (lib/protocol/shared-bytes.js): one block
// of shared bytes, its STATE word moved by the shipped functions only, run by
// the checker (checker.mjs) over every interleaving of the parties' accesses.
//
// # The parties (each an event loop, one op at a time)
// - Host. `place`: the call's argument goes out (send to TO_WORKER, then the
//   request is published), as host/slots.js encodeRequest does. `abort`
//   (with `abort`): the call settles early, before or after placement, and
//   finish() runs settleArgument. `answer`: the worker's answer; a result
//   block is taken (takeResult) and the call settles (settleArgument after
//   the take); a late answer (call settled) is taken and released at once
//   (discardAnswer). `exit`: the worker died: reclaim, then a call not
//   answered settles; it may come before an answer the worker published
//   earlier (a separate channel). `release`: the caller gives back a result
//   it took.
// - Worker (lane 0). `run`: takes the argument (a failed take answers an
//   error); `respond` (a later op: the task may be async): returns the block
//   (send to FROM(0), then the answer is published) or ends the call with it
//   (release). With `deaths`, it may die at the start of each op (then it
//   never moves again and the host gets `exit`), including after its last.
// - Scenario "made": the block is the worker's from the start (sharedBytes(n)
//   in a task); `make` returns it or releases it; the call has no argument.
//
// # What is checked
// Ghost bookkeeping: who holds the block (took, allocated or was given it
// and has not sent or released it) and how often it was freed. In steps: a
// free happens only when nobody but the freeing party holds it, never
// twice; two parties never hold it at once; a send is made by its holder.
// In every terminal state: freed exactly once, held by nobody.

import { createRequire } from "node:module";
import { effect, localEffect, choose, step, ModelViolation } from "./checker.mjs";

const require = createRequire(import.meta.url);
const P = require("../../lib/protocol/shared-bytes.js");

const AT = 1; // the block's STATE word (word 0 stands for the rest of the region)
const GEN0 = 5; // the generation Rust started the block at

const clone = (v) => JSON.parse(JSON.stringify(v));

/**
 * `config`: { scenario: "argument" | "made", abort?: the call may settle
 * early, deaths?: the worker may die, protocol?: functions replacing
 * shipped ones (a broken variant) }.
 */
export class SharedBytesModel {
  constructor(config) {
    this.c = { scenario: "argument", abort: false, deaths: false, ...config };
    this.p = { ...P, ...(config.protocol || {}) };
    this.mem = new Int32Array(new SharedArrayBuffer(8));
    this.names = new Map([[AT, "STATE"]]);
  }

  init() {
    const made = this.c.scenario === "made";
    this.mem.fill(0);
    // Set-up: the allocation, before the parties start.
    this.mem[AT] = P.state(GEN0, made ? P.worker(0) : P.HOST);
    this.host = {
      priv: { placed: false, settled: false, result: 0 },
      op: null,
      events: made ? [] : [{ k: "place" }],
    };
    this.worker = { priv: { held: 0 }, op: null, events: made ? [{ k: "make" }] : [], dead: false };
    this.ghost = { holder: made ? "worker" : "host", frees: 0 };
  }

  save() {
    return { m: Array.from(this.mem), h: this.host, w: this.worker, g: this.ghost };
  }

  load(state) {
    const s = clone(state);
    this.mem.set(s.m);
    this.host = s.h;
    this.worker = s.w;
    this.ghost = s.g;
  }

  // ---- ghost moves (each in the step of the swap it follows) ----

  took(who) {
    localEffect(() => {
      const g = this.ghost;
      if (g.frees > 0) throw new ModelViolation(`the ${who} takes the block after it was freed`);
      if (g.holder !== null) throw new ModelViolation(`two parties hold the block: the ${g.holder} and the ${who}`);
      g.holder = who;
    });
  }

  sent(who) {
    localEffect(() => {
      const g = this.ghost;
      if (g.holder !== who) throw new ModelViolation(`the ${who} sends the block while the ${g.holder} holds it`);
      g.holder = null;
    });
  }

  /** A free by `by`, which may hold the block as `as` (null: it frees what nobody holds). */
  freed(by, as = null) {
    localEffect(() => {
      const g = this.ghost;
      if (g.frees > 0) throw new ModelViolation(`the block is freed twice (the second time by ${by})`);
      if (g.holder !== null && g.holder !== as)
        throw new ModelViolation(`the block is freed by ${by} while the ${g.holder} holds it`);
      g.frees++;
      g.holder = null;
    });
  }

  // ---- the host ----

  hostOp(ev, w) {
    const p = this.p;
    const i32 = this.mem;
    switch (ev.k) {
      case "place": {
        if (w.settled) return; // settled before placement: never placed
        const gen = p.send(i32, AT, GEN0, P.HOST, P.TO_WORKER);
        if (gen === 0) throw new ModelViolation("the host could not send its own block");
        this.sent("host");
        w.placed = true;
        effect("publish the request", () => this.worker.events.push({ k: "run", gen }));
        return;
      }
      case "abort":
        w.settled = true;
        if (this.c.scenario === "argument" && p.settleArgument(i32, AT, GEN0, w.placed))
          this.freed("the host settling the argument", "host");
        return;
      case "answer": {
        if (w.settled) {
          // discardAnswer: a late answer's block goes back at once.
          if (ev.gen !== 0 && p.takeResult(i32, AT, ev.gen, P.HOST)) {
            this.took("host");
            if (p.release(i32, AT, ev.gen, P.HOST)) this.freed("the host discarding a late answer", "host");
          }
          return;
        }
        if (ev.gen !== 0 && p.takeResult(i32, AT, ev.gen, P.HOST)) {
          this.took("caller");
          w.result = ev.gen;
        }
        // finish(): after the answer was taken.
        w.settled = true;
        if (this.c.scenario === "argument" && p.settleArgument(i32, AT, GEN0, true))
          this.freed("the host settling the argument", "host");
        return;
      }
      case "exit":
        if (p.reclaim(i32, AT, 0)) this.freed("the host reclaiming the dead worker's block");
        if (!w.settled) {
          w.settled = true;
          if (this.c.scenario === "argument" && p.settleArgument(i32, AT, GEN0, w.placed))
            this.freed("the host settling the argument", "host");
        }
        return;
      case "release": {
        const gen = w.result;
        w.result = 0;
        if (p.release(i32, AT, gen, P.HOST)) this.freed("the caller", "caller");
        return;
      }
    }
    throw new Error(`unknown host event ${ev.k}`);
  }

  // ---- the worker ----

  /** At an op's start: true when the worker dies here. */
  dies() {
    if (!this.c.deaths || choose("dies", () => 2) === 0) return false;
    effect("the worker dies", () => {
      this.worker.dead = true;
      // What it held is nobody's now: the host reclaims it.
      if (this.ghost.holder === "worker") this.ghost.holder = null;
      this.host.events.push({ k: "exit" });
    });
    return true;
  }

  answer(gen) {
    effect(`publish the answer (gen ${gen})`, () => this.host.events.push({ k: "answer", gen }));
    localEffect(() => this.worker.events.push({ k: "idle" }));
  }

  /** The task ends holding the block as gen: it returns it, or the call ends with it. */
  finishWith(gen) {
    const p = this.p;
    const i32 = this.mem;
    if (choose("return it", () => 2) === 0) {
      const next = p.send(i32, AT, gen, P.worker(0), P.from(0));
      if (next !== 0) this.sent("worker");
      this.answer(next); // a failed send answers an error
    } else {
      if (p.release(i32, AT, gen, P.worker(0))) this.freed("the worker", "worker");
      this.answer(0);
    }
  }

  workerOp(ev, w) {
    if (this.dies()) return;
    switch (ev.k) {
      case "run":
        if (!this.p.take(this.mem, AT, ev.gen, P.TO_WORKER, P.worker(0))) {
          this.answer(0); // the argument could not be taken: an error
          return;
        }
        this.took("worker");
        w.held = ev.gen;
        localEffect(() => this.worker.events.push({ k: "respond" }));
        return;
      case "respond":
        this.finishWith(w.held);
        w.held = 0;
        return;
      case "make":
        this.finishWith(GEN0);
        return;
      case "idle":
        return;
    }
    throw new Error(`unknown worker event ${ev.k}`);
  }

  // ---- moves ----

  /**
   * A step of party `name`'s op `ev`: `fresh` is the index of the event it
   * starts from in the party's queue, "choice" for an op the party may start
   * at any time, false for the op under way.
   */
  partyMove(name, ev, fresh, run) {
    return {
      label: `${name} ${ev.k}`,
      run: (forced) => {
        const cur = this[name];
        const events = typeof fresh === "number" ? cur.events.filter((_, i) => i !== fresh) : cur.events;
        const op = fresh === false ? cur.op : { ev, log: [] };
        this[name] = { ...cur, events };
        // The op re-runs from its start on the private state it began with.
        const work = clone(cur.priv);
        const r = step(op.log, forced, () => run(op.ev, work));
        this[name] =
          r.done || r.stuck
            ? { ...this[name], priv: work, op: null }
            : { ...this[name], op: { ev: op.ev, log: r.log } };
        return r;
      },
    };
  }

  moves() {
    const out = [];
    const h = this.host;
    const hostRun = (ev, w) => this.hostOp(ev, w);
    if (h.op !== null) out.push(this.partyMove("host", h.op.ev, false, hostRun));
    else {
      if (h.events.length > 0) out.push(this.partyMove("host", h.events[0], 0, hostRun));
      // The worker's exit comes on its own channel: the host may see it before answers published earlier.
      const exit = h.events.findIndex((ev) => ev.k === "exit");
      if (exit > 0) out.push(this.partyMove("host", h.events[exit], exit, hostRun));
      if (this.c.abort && !h.priv.settled) out.push(this.partyMove("host", { k: "abort" }, "choice", hostRun));
      if (h.priv.result !== 0) out.push(this.partyMove("host", { k: "release" }, "choice", hostRun));
    }
    const wk = this.worker;
    const workerRun = (ev, w) => this.workerOp(ev, w);
    if (!wk.dead) {
      if (wk.op !== null) out.push(this.partyMove("worker", wk.op.ev, false, workerRun));
      else if (wk.events.length > 0) out.push(this.partyMove("worker", wk.events[0], 0, workerRun));
    }
    return out;
  }

  terminal() {
    const g = this.ghost;
    if (g.frees !== 1)
      throw new ModelViolation(
        g.frees === 0 ? "the block is never freed (a leak)" : `the block is freed ${g.frees} times`,
      );
    if (g.holder !== null) throw new ModelViolation(`the ${g.holder} still holds the freed block`);
    if (!this.host.priv.settled) throw new ModelViolation("the call never settled");
  }
}
