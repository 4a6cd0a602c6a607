"use strict";
// The inline lane (createPool's `inliner`): the host's own event loop acts as
// one more lane and runs some calls itself, `batchSize` per turn, once at
// least `dispatchThreshold` calls are pending. Useful when a worker hop costs
// more than the task. Arguments and results still go through the codec, so
// a task sees the same copy, and fails on the same unsendable values, as it
// would in a worker.

const { Encoder, decode } = require("../../codec/index.js");
const { L } = require("../../protocol/layout.js");
const { SameThreadRefs } = require("../../payload/shared-refs.js");
const { placeValueError } = require("../../errors.js");
const { CallQueue } = require("../queue.js");

class InlineLane {
  /**
   * `pool` settles calls (`pool.finish`) and places queued ones
   * (`pool.pump`); `table` is the pool's task table (name order).
   */
  constructor(pool, table, inliner) {
    this.pool = pool;
    this.inline = true;
    this.lane = -1;
    this.fns = table.map((entry) => entry.fn);
    this.batchSize = inliner.batchSize;
    this.dispatchThreshold = inliner.dispatchThreshold;
    // The host runs these calls: a SharedArrayBuffer stays the same object.
    this.refs = new SameThreadRefs();
    this.encoder = new Encoder({ maxPayloadBytes: pool.options.maxPayloadBytes, shared: this.refs });
    this.queue = new CallQueue(); // placed here, not yet run
    this.inFlight = 0; // queued here or running
    this.live = new Set(); // the same calls, for rejecting them at shutdown
    this.scheduled = false;
    this.runBound = () => this.runBatch();
  }

  /**
   * Takes a call when the pool is loaded enough, the task's function is in
   * the host (never an importTask's) and fewer than a lane's worth of calls
   * wait here.
   */
  accepts(call) {
    // Streaming calls and calls that report progress go to workers: their values cross a channel.
    // So do calls whose argument is a SharedBytes: a worker takes its block.
    return (
      call.stream === null &&
      call.bytes === null &&
      this.fns[call.task] !== null &&
      this.inFlight < L.slotCount &&
      this.pool.pending >= this.dispatchThreshold
    );
  }

  place(call) {
    call.lane = this;
    this.queue.push(call);
    this.live.add(call);
    this.inFlight++;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.runBound);
    }
  }

  /** One turn of the host's loop: up to `batchSize` calls. */
  runBatch() {
    this.scheduled = false;
    const queue = this.queue;
    for (let n = 0; n < this.batchSize && queue.size !== 0; n++) {
      const call = queue.shift();
      if (call.done)
        this.complete(call); // timed out or aborted while queued
      else this.run(call);
    }
    if (queue.size !== 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.runBound);
    }
  }

  run(call) {
    const pool = this.pool;
    let arg;
    try {
      arg = this.copy(call.arg);
    } catch (err) {
      this.answer(call, false, placeValueError(err, pool.table[call.task].name, "argument"));
      return;
    }
    call.arg = undefined;
    let result;
    try {
      const fn = this.fns[call.task];
      result = pool.table[call.task].abortAware ? fn(arg, pool.abortToolkit(call)) : fn(arg);
    } catch (err) {
      this.answer(call, false, err);
      return;
    }
    if (result !== null && typeof result === "object" && typeof result.then === "function") {
      Promise.resolve(result).then(
        (value) => this.answer(call, true, value),
        (err) => this.answer(call, false, err),
      );
    } else {
      this.answer(call, true, result);
    }
  }

  /** Settles through the codec, as a worker's answer would be. */
  answer(call, ok, value) {
    let settled;
    try {
      settled = this.copy(value);
    } catch (err) {
      settled = placeValueError(err, this.pool.table[call.task].name, ok ? "result" : "error");
      ok = false;
    }
    this.complete(call);
    this.pool.finish(call, ok, settled);
    this.pool.pump();
  }

  complete(call) {
    if (this.live.delete(call)) this.inFlight--;
    this.pool.releaseSignal(call);
  }

  copy(value) {
    this.refs.reset();
    const bytes = this.encoder.encode(value);
    return decode(bytes, 0, bytes.length, this.refs);
  }

  /** Calls queued or running here (for shutdown). */
  calls() {
    return [...this.live];
  }
}

/** What the inline lane reads of the pool (host/view.js). */
InlineLane.POOL_USES = Object.freeze([
  "options",
  "table",
  "pending",
  "finish",
  "pump",
  "abortToolkit",
  "releaseSignal",
]);

module.exports = { InlineLane };
