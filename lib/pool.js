"use strict";
// The host side of a pool: it places calls into lanes, drains responses on
// the event loop, and sleeps on the Rust doorbell when there is nothing to
// drain (lane protocol: src/memory/lane.rs; doorbell: src/doorbell.rs).

const { Worker } = require("node:worker_threads");
const { join } = require("node:path");
const native = require("./native.js");
const { L, HostLane, lowestBit, W_COUNTER, W_ARMED } = require("./lane.js");
const { Encoder, decode } = require("./codec.js");
const { PayloadRegion } = require("./payload.js");
const { resolveOptions } = require("./options.js");
const { buildTaskTable } = require("./task-table.js");
const { callerHref } = require("./task.js");
const { shutdownError, WorkerExitError } = require("./errors.js");
const { makeDebug } = require("./debug.js");

const WORKER_FILE = join(__dirname, "worker.js");
const WORKER_MARK = "__knittingNativeWorker";
const NO_EXT = L.noExt | 0; // as an Int32Array element reads it
const STATUS_THROWN = 1;

// Drain passes with nothing found before the host arms the doorbell and
// sleeps. Each pass is one turn of the event loop (setImmediate) plus a
// sched_yield (so a worker sharing this vCPU can answer), ~1-2 µs here: a
// short, bounded poll that catches responses arriving within tens of µs
// without the doorbell's ThreadsafeFunction hop (~8 µs,
// ../shared/design/transport-measurements.md). Measured with
// `node bench/run.mjs --only knitting --reps 3` (2 threads, calls/s per rep):
//   8 passes: 1.83 M, 1.77 M, 1.85 M    32: 1.90 M, 2.05 M, 2.02 M
//   128: 2.25 M, 1.99 M, 1.85 M         sequential p50 ~1.2 µs for all three
// and without the yield, 8 passes gave 1.1-1.5 M calls/s against 2.1-3.1 M
// with it (/tmp-style loop of 400,000 calls, 1,000 in flight).
const FREE_HOPS = 32;

let nextPoolId = 1;

const OPEN = 0;
const CLOSED = 1;

class Call {
  constructor(task, arg, id) {
    this.task = task;
    this.arg = arg;
    this.id = id;
    this.resolve = null;
    this.reject = null;
  }
}

class Pool {
  constructor(options, table) {
    this.options = options;
    this.table = table;
    this.id = nextPoolId++;
    this.debug = makeDebug(options.debug, this.id);
    this.state = OPEN;
    this.failure = null; // set when workers cannot start: every call rejects with it
    this.nextCallId = 1;
    this.queue = []; // calls waiting for a free slot
    this.queueHead = 0;
    this.inFlight = 0; // calls placed in slots
    this.drainScheduled = false;
    this.armed = false;
    this.idleHops = 0;
    this.encoder = new Encoder({ maxPayloadBytes: options.maxPayloadBytes });

    const lanes = options.threads;
    this.controlSab = new SharedArrayBuffer(native.regionBytes(lanes));
    this.i32 = new Int32Array(this.controlSab);
    this.u8 = new Uint8Array(this.controlSab);
    native.formatControlRegion(this.u8, lanes);
    this.payloadSab = new SharedArrayBuffer(options.payloadInitialBytes, {
      maxByteLength: options.payloadMaxByteLength,
    });
    this.payload = new PayloadRegion(this.payloadSab, true);
    this.lanes = [];
    for (let i = 0; i < lanes; i++) this.lanes.push(new HostLane(this.i32, i));
    this.workers = new Array(lanes).fill(null);
    this.ready = new Array(lanes).fill(false);

    this.drainBound = () => this.drain();
    this.flushQueued = false;
    this.flushBound = () => this.flushLanes();
    this.doorbell = new native.HostDoorbell(this.u8, () => {
      // The waiter cleared ARMED before calling.
      this.armed = false;
      this.drain();
    });
    if (this.debug) {
      this.debug("lifecycle", `created: ${lanes} workers, tasks ${table.map((e) => e.name).join(", ")}`);
    }
    for (let i = 0; i < lanes; i++) this.spawn(i);

    this.call = Object.create(null);
    table.forEach((entry, index) => {
      this.call[entry.name] = (arg) => this.submit(index, arg);
    });
    Object.freeze(this.call);
    this.shutdownPromise = null;
  }

  spawn(lane) {
    const worker = new Worker(WORKER_FILE, {
      resourceLimits: this.options.worker.resourceLimits,
      workerData: {
        [WORKER_MARK]: true,
        control: this.controlSab,
        payload: this.payloadSab,
        lane,
        tasks: this.table,
        maxPayloadBytes: this.options.maxPayloadBytes,
      },
    });
    this.workers[lane] = worker;
    this.ready[lane] = false;
    const threadId = worker.threadId;
    let reported = null;
    worker.on("message", (msg) => {
      if (msg && msg.type === "ready") {
        this.ready[lane] = true;
        if (this.debug) this.debug("lifecycle", `worker ${lane} (threadId ${threadId}) ready`);
      } else if (msg && msg.type === "init-error") {
        if (this.debug) this.debug("imports", `worker ${lane} failed to load tasks: ${msg.error && msg.error.message}`);
        this.fail(msg.error);
      }
    });
    worker.on("error", (err) => {
      reported = err;
      if (this.debug) this.debug("lifecycle", `worker ${lane} error: ${err && err.message}`);
    });
    worker.on("exit", (code) => {
      if (this.debug) this.debug("lifecycle", `worker ${lane} (threadId ${threadId}) exited with code ${code}`);
      if (this.workers[lane] !== worker) return;
      this.workers[lane] = null;
      if (this.state !== OPEN) return;
      if (!this.ready[lane] && this.failure === null) {
        // It died while importing the task modules: a restart would too.
        this.fail(reported || new Error(`knitting-native: worker ${lane} exited with code ${code} while starting`));
        return;
      }
      const held = this.lanes[lane].reset();
      this.inFlight -= held.length;
      for (const call of held) call.reject(new WorkerExitError(lane, threadId, code, reported || undefined));
      if (this.failure === null) this.spawn(lane);
      this.pump();
    });
  }

  /** Workers cannot run the tasks: reject everything with `err`, now and later. */
  fail(err) {
    if (this.failure !== null) return;
    this.failure = err instanceof Error ? err : new Error(String(err));
    this.rejectAll(this.failure);
  }

  rejectAll(err) {
    for (let i = this.queueHead; i < this.queue.length; i++) this.queue[i].reject(err);
    this.queue = [];
    this.queueHead = 0;
    for (const lane of this.lanes) {
      for (let slot = 0; slot < L.slotCount; slot++) {
        const call = lane.calls[slot];
        if (call !== null) call.reject(err);
      }
    }
  }

  submit(task, arg) {
    if (this.state !== OPEN) return Promise.reject(shutdownError());
    if (this.failure !== null) return Promise.reject(this.failure);
    if (arg instanceof Promise) return arg.then((value) => this.submit(task, value));
    const call = new Call(task, arg, this.nextCallId++ | 0);
    const promise = new Promise((resolve, reject) => {
      call.resolve = resolve;
      call.reject = reject;
    });
    if (this.queueHead === this.queue.length) {
      if (!this.place(call)) this.queue.push(call);
    } else {
      this.queue.push(call);
    }
    if (!this.drainScheduled && !this.armed) {
      this.drainScheduled = true;
      this.idleHops = 0;
      setImmediate(this.drainBound);
    }
    return promise;
  }

  /**
   * Puts a call into a free slot of the least-loaded lane (ties: the lowest
   * index, so one-at-a-time callers keep hitting the same, still-spinning
   * worker while the others park). False when every slot is taken.
   */
  place(call) {
    const lanes = this.lanes;
    let best = null;
    for (let i = 0; i < lanes.length; i++) {
      const lane = lanes[i];
      if (lane.inFlight < L.slotCount && (best === null || lane.inFlight < best.inFlight)) {
        best = lane;
        if (lane.inFlight === 0) break;
      }
    }
    if (best === null) return false;
    const slot = best.freeSlot();
    if (this.encodeRequest(best, slot, call)) {
      best.publish(slot, call);
      this.inFlight++;
      if (!this.flushQueued) {
        this.flushQueued = true;
        queueMicrotask(this.flushBound);
      }
    }
    return true;
  }

  /** Step 1: write the request. On an encoding error the call is rejected. */
  encodeRequest(lane, slot, call) {
    const i32 = this.i32;
    const w = lane.slotWord(slot);
    try {
      const at = lane.slotPayload(slot);
      let len = this.encoder.encodeInto(call.arg, this.u8, at, L.inlineBytes);
      let ext = NO_EXT;
      if (len < 0) {
        const bytes = this.encoder.encode(call.arg);
        ext = this.payload.write(bytes);
        len = bytes.length;
      }
      i32[w] = call.task;
      i32[w + 1] = call.id;
      i32[w + 2] = len;
      i32[w + 3] = ext;
    } catch (err) {
      call.reject(err);
      return false;
    }
    call.arg = undefined;
    return true;
  }

  drain() {
    this.drainScheduled = false;
    // Read the count before scanning: every publication counted up to here
    // is visible to the scan below (src/doorbell.rs).
    const counted = Atomics.load(this.i32, W_COUNTER);
    let settled = 0;
    const lanes = this.lanes;
    for (let i = 0; i < lanes.length; i++) {
      const lane = lanes[i];
      if (lane.inFlight === 0) continue;
      let finished = lane.takeFinished();
      while (finished !== 0) {
        const slot = lowestBit(finished);
        finished &= finished - 1;
        this.settle(lane, slot);
        settled++;
      }
    }
    this.inFlight -= settled;
    this.pump();
    if (this.inFlight === 0 || this.state !== OPEN) return;
    if (settled > 0) this.idleHops = 0;
    else this.idleHops++;
    if (this.idleHops <= FREE_HOPS) {
      // Let a worker that shares this vCPU run before polling again.
      if (settled === 0) native.yieldNow();
      this.drainScheduled = true;
      setImmediate(this.drainBound);
      return;
    }
    // Nothing for a while: sleep on the doorbell. Arm, then re-check the
    // count: a publication since `counted` means drain now instead.
    this.armed = true;
    Atomics.store(this.i32, W_ARMED, 1);
    if (Atomics.load(this.i32, W_COUNTER) !== counted) {
      Atomics.store(this.i32, W_ARMED, 0);
      this.armed = false;
      this.drainScheduled = true;
      setImmediate(this.drainBound);
    }
  }

  /** Publishes the slots placed since the last flush, lane by lane. */
  flushLanes() {
    this.flushQueued = false;
    const lanes = this.lanes;
    for (let i = 0; i < lanes.length; i++) lanes[i].flush();
  }

  /** Moves queued calls into free slots. */
  pump() {
    while (this.queueHead < this.queue.length) {
      if (!this.place(this.queue[this.queueHead])) break;
      this.queue[this.queueHead++] = undefined;
    }
    if (this.queueHead === this.queue.length && this.queueHead > 0) {
      this.queue = [];
      this.queueHead = 0;
    } else if (this.queueHead > 4096 && this.queueHead * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.queueHead);
      this.queueHead = 0;
    }
  }

  /** Step 6 for one slot: decode the response and settle its call. */
  settle(lane, slot) {
    const call = lane.release(slot);
    const i32 = this.i32;
    const w = lane.slotWord(slot);
    const status = i32[w];
    const id = i32[w + 1];
    const len = i32[w + 2];
    const ext = i32[w + 3];
    if (call === null || id !== call.id) {
      const err = new Error(
        `knitting-native: internal error: lane ${lane.lane} slot ${slot} answered call ${id}, expected ${call ? call.id : "none"}`,
      );
      if (call !== null) call.reject(err);
      else process.emitWarning(err);
      return;
    }
    let value;
    try {
      value = ext === NO_EXT ? decode(this.u8, lane.slotPayload(slot), len) : this.payload.read(ext >>> 0, len);
    } catch (err) {
      call.reject(err);
      return;
    }
    if (status === STATUS_THROWN) call.reject(value);
    else call.resolve(value);
  }

  shutdown() {
    if (this.shutdownPromise !== null) return this.shutdownPromise;
    this.state = CLOSED;
    if (this.debug) this.debug("lifecycle", `shutdown: ${this.inFlight} calls in slots, ${this.queue.length - this.queueHead} queued`);
    this.rejectAll(shutdownError());
    this.doorbell.close();
    const exits = this.workers.filter((w) => w !== null).map((w) => w.terminate());
    this.shutdownPromise = Promise.all(exits).then(() => undefined);
    return this.shutdownPromise;
  }
}

const KEYS = ["call", "shutdown"];

/**
 * createPool(options)(tasks): a pool of worker threads running `tasks`.
 * Returns `{ call, shutdown, [Symbol.dispose] }`.
 */
function createPool(options) {
  const resolved = resolveOptions(options, L.maxLanes);
  return function withTasks(tasks) {
    const table = buildTaskTable(tasks, callerHref());
    const pool = new Pool(resolved, table);
    const api = {
      call: pool.call,
      shutdown: () => pool.shutdown(),
      [Symbol.dispose]: () => {
        pool.shutdown();
      },
    };
    Object.defineProperty(api, Symbol.for("knitting-native.pool"), { value: pool });
    return Object.freeze(api);
  };
}

module.exports = { createPool, WORKER_MARK, KEYS };
