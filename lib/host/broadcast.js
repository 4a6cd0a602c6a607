"use strict";
// pool.broadcast.<name>(arg, { keep }): task <name> once on every live
// worker. Broadcasts are rare and must reach workers whatever their lanes
// hold, so they skip the lanes: the argument goes over the host-worker
// control channel (protocol/messages.js BROADCAST), which a worker's event
// loop reads (worker/broadcast.js), and each answer comes back the same way
// (BROADCAST_DONE). A parked worker waits in Atomics.waitAsync (threads) or on
// a Rust waiter thread (processes), so its event loop is free and the message
// needs no wake. Values cross as the package's codec bytes, as a worker
// process's control messages do on Bun and Deno: the same values as a call
// carries, except that a SharedArrayBuffer is refused (a view over one is copied).
//
// `keep: true` remembers the broadcast (the last per task, in the order
// first kept): a worker started later runs the kept ones before it reports
// ready, from its start data (`kept`). A worker already starting gets it as
// a message, which a runtime may deliver only after the worker has begun to
// serve; so every kept broadcast also bumps KEPT_SEQ, a word of the control
// region's header (src/memory/layout.rs), before its messages go: a starting worker that reads a KEPT_SEQ
// beyond what its start data and messages gave it waits for the messages
// still on their way, and runs them, before it reports ready.

const { Encoder, decode } = require("../codec/index.js");
const { CODE, codedError, shutdownError, placeValueError } = require("../errors.js");
const { MSG } = require("../protocol/messages.js");
const { OPEN } = require("./calls.js");
const { L } = require("../protocol/layout.js");

/** One broadcast in flight: one entry per worker it went to, in lane order. */
class Round {
  constructor(id, task, name, bytes) {
    this.id = id;
    this.task = task;
    this.name = name;
    this.bytes = bytes;
    this.lanes = [];
    this.workers = []; // the worker each entry waits for; null once answered or gone
    this.who = []; // "threadId 5" / "pid 123", for the error
    this.results = [];
    this.errors = [];
    this.failed = []; // by entry: whether it threw (a task may throw undefined)
    this.exit = null; // the first WorkerExitError among its workers
    this.dropped = 0; // entries of elastic workers that left idle: not in the result
    this.left = 0;
    this.resolve = null;
    this.reject = null;
  }
}

class Broadcasts {
  constructor(pool) {
    this.pool = pool;
    this.keptSeq = 0; // kept broadcasts so far
    this.nextId = 1;
    this.rounds = new Map(); // id -> Round
    this.kept = new Map(); // task -> codec bytes; a Map keeps the order of first insertion
    this.encoder = null;
  }

  /** The `broadcast` object: one function per task, like `pool.call`. */
  api(table, trap) {
    const broadcast = Object.create(trap);
    table.forEach((entry, index) => {
      broadcast[entry.name] = (arg, options) => this.start(index, arg, options);
    });
    return Object.freeze(broadcast);
  }

  /** What every worker that starts from now on runs before it reports ready: `{ setups, seq }`. */
  keptSetups() {
    return { setups: [...this.kept].map(([task, arg]) => ({ task, arg })), seq: this.keptSeq };
  }

  start(task, arg, options) {
    const pool = this.pool;
    const name = pool.table[task].name;
    if (pool.state !== OPEN) {
      const err = shutdownError();
      return pool.shutdownGate.then(() => Promise.reject(err));
    }
    if (pool.failure !== null) return Promise.reject(pool.failure);
    let keep;
    let bytes;
    try {
      keep = readOptions(options, name);
      if (this.encoder === null) this.encoder = new Encoder({ maxPayloadBytes: pool.options.maxPayloadBytes });
      bytes = this.encoder.encode(arg).slice(); // encode()'s bytes live until the next encode
    } catch (err) {
      return Promise.reject(placeValueError(err, name, "argument"));
    }
    let keptSeq;
    if (keep) {
      this.kept.set(task, bytes); // a Map keeps a key where it was first set: first-kept order
      keptSeq = ++this.keptSeq;
      // Before the messages: a starting worker that sees it waits for its message.
      Atomics.store(this.pool.i32, L.wordKeptSeq, keptSeq);
    }
    const round = new Round(this.nextId++, task, name, bytes);
    const promise = new Promise((resolve, reject) => {
      round.resolve = resolve;
      round.reject = reject;
    });
    pool.workers.forEach((worker, lane) => {
      if (worker === null) return; // an elastic pool's absent lane
      round.lanes.push(lane);
      round.workers.push(worker);
      round.who.push(worker.pid !== undefined ? `pid ${worker.pid}` : `threadId ${worker.threadId}`);
      round.results.push(undefined);
      round.errors.push(undefined);
      round.failed.push(false);
      round.left++;
      worker.postMessage({ type: MSG.BROADCAST, id: round.id, task, arg: bytes, keptSeq });
    });
    if (round.left === 0) return Promise.resolve([]);
    // Held like a call (the process stays alive, shutdown() waits for it if told to), but not
    // counted as one: pool.stats() counts calls.
    if (this.rounds.size === 0) pool.liveness.setBroadcasts(true);
    this.rounds.set(round.id, round);
    return promise;
  }

  /** A BROADCAST_DONE message from `worker`. */
  answered(worker, msg) {
    const round = this.rounds.get(msg.id);
    if (round === undefined) return;
    const at = round.workers.indexOf(worker);
    if (at < 0) return;
    let value;
    try {
      value = decode(msg.value, 0, msg.value.length);
    } catch (err) {
      value = err;
      msg = { ok: false };
    }
    if (msg.ok) round.results[at] = value;
    else this.failEntry(round, at, value);
    this.settleEntry(round, at);
  }

  /**
   * Worker `lane` exited. `how`: "died" (its WorkerExitError `err`),
   * "recycled" (a replacement takes its entries: they are sent to it at
   * spawn) or "left" (an elastic pool's idle worker: its entries are dropped).
   */
  exited(lane, worker, how, err) {
    for (const round of [...this.rounds.values()]) {
      const at = round.workers.indexOf(worker);
      if (at < 0) continue;
      if (how === "recycled") {
        round.workers[at] = lane; // waits for the lane's next worker
      } else if (how === "left") {
        round.workers[at] = null;
        round.dropped++;
        round.lanes[at] = -1;
        this.settleEntry(round, at);
      } else {
        this.failEntry(round, at, err);
        if (round.exit === null) round.exit = err;
        this.settleEntry(round, at);
      }
    }
  }

  /** A new worker on `lane`: the entries a recycled worker left there go to it. */
  spawned(lane, worker) {
    for (const round of this.rounds.values()) {
      const at = round.workers.indexOf(lane);
      if (at < 0) continue;
      round.workers[at] = worker;
      round.who[at] = worker.pid !== undefined ? `pid ${worker.pid}` : `threadId ${worker.threadId}`;
      worker.postMessage({ type: MSG.BROADCAST, id: round.id, task: round.task, arg: round.bytes });
    }
  }

  failEntry(round, at, err) {
    round.errors[at] = err;
    round.failed[at] = true;
  }

  settleEntry(round, at) {
    round.workers[at] = null;
    if (--round.left !== 0) return;
    this.forget(round);
    if (round.dropped !== 0) {
      const keepAt = round.lanes.map((lane) => lane >= 0);
      for (const key of ["results", "errors", "failed", "who", "lanes"])
        round[key] = round[key].filter((_, i) => keepAt[i]);
    }
    if (round.failed.includes(true)) round.reject(this.failure(round));
    else round.resolve(round.results);
    const pool = this.pool;
    if (pool.pending === 0 && this.idle() && pool.drainedResolve !== null) pool.drainedResolve();
  }

  /** No broadcast is in flight. */
  idle() {
    return this.rounds.size === 0;
  }

  forget(round) {
    this.rounds.delete(round.id);
    if (this.rounds.size === 0) this.pool.liveness.setBroadcasts(false);
  }

  /** The error a failed round rejects with: a worker's exit error, else one naming the workers that threw. */
  failure(round) {
    const failedAt = [];
    round.failed.forEach((f, i) => {
      if (f) failedAt.push(i);
    });
    let err = round.exit;
    if (err === null) {
      const first = failedAt[0];
      const cause = round.errors[first];
      const what = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
      const others = failedAt.length > 1 ? ` (and on ${failedAt.length - 1} other workers)` : "";
      err = codedError(
        Error,
        CODE.BROADCAST_FAILED,
        `knitting-native: broadcast "${round.name}" failed on worker ${round.lanes[first]} (${round.who[first]})` +
          `${others}: ${what}`,
        { cause },
      );
    }
    err.task = round.name;
    err.lanes = round.lanes;
    err.results = round.results;
    err.errors = round.errors;
    return err;
  }

  /** The pool failed or closed: every broadcast in flight rejects with `err` (`late`: after shutdown resolves). */
  rejectAll(err, late) {
    for (const round of [...this.rounds.values()]) {
      this.forget(round);
      if (late) this.pool.shutdownGate.then(() => round.reject(err));
      else round.reject(err);
    }
  }
}

/** The second argument of `pool.broadcast.x(arg, options)`: whether to keep it. */
function readOptions(options, name) {
  if (options === undefined) return false;
  const where = `knitting-native: pool.broadcast.${name}(arg, options)`;
  if (options === null || typeof options !== "object")
    throw codedError(TypeError, CODE.INVALID_OPTION, `${where}: options must be an object like { keep: true }`);
  for (const key of Object.keys(options)) {
    if (key !== "keep")
      throw codedError(TypeError, CODE.INVALID_OPTION, `${where}: unknown option ${key}; allowed: keep`);
  }
  if (options.keep !== undefined && typeof options.keep !== "boolean")
    throw codedError(TypeError, CODE.INVALID_OPTION, `${where}: keep must be true or false`);
  return options.keep === true;
}

/** What broadcasts read of the pool (host/view.js). */
Broadcasts.POOL_USES = Object.freeze([
  "i32",
  "state",
  "failure",
  "table",
  "options",
  "workers",
  "pending",
  "liveness",
  "shutdownGate",
  "drainedResolve",
]);

module.exports = { Broadcasts };
