"use strict";
// The host side of a pool: it places calls into the shared submit region
// that workers claim from (lib/steal.js) or into private lanes (lib/lane.js)
// chosen by a balancer, drains responses on the event
// loop, and sleeps on the Rust doorbell (src/doorbell.rs) or polls when
// there is nothing to drain.

const { availableParallelism } = require("node:os");
const native = require("./native.js");
const { ThreadRuntime } = require("./thread-runtime.js");
const { ProcessRuntime } = require("./process-runtime.js");
const { L, HostLane, lowestBit, W_COUNTER, W_ARMED } = require("./lane.js");
const { HostSubmit } = require("./steal.js");
const { makeBalancer } = require("./balancers.js");
const { InlineLane } = require("./inline-lane.js");
const { Encoder, CODEC_ERRORS } = require("./codec.js");
const { PayloadRegion, NO_ROOM } = require("./payload.js");
const { resolveOptions } = require("./options.js");
const { buildTaskTable, workerTable, unknownTaskTrap } = require("./task-table.js");
const { callerHref } = require("./task.js");
const { regionCorruptError, shutdownError, WorkerExitError, timeoutError, hardTimeoutError, abortError, signalsExhaustedError, unreadableError } = require("./errors.js");
const { makeDebug } = require("./debug.js");
const hard = require("./hard-timeout.js");
const { WORKER_MARK, refusePoolInWorker } = require("./worker-context.js");
const { Liveness, detach } = require("./liveness.js");
const { StartupWatch } = require("./startup.js");
const { HostSharedRefs, PROCESS_REFUSAL } = require("./shared-refs.js");
const { QueueLimit, queueFullError } = require("./queue-limit.js");
const { PoolStats } = require("./stats.js");
const { Recycler } = require("./recycle.js");
const { PoolEvents, exitReason } = require("./pool-events.js");
const { serverApi } = require("./server-api.js");
const NO_EXT = L.noExt | 0; // as an Int32Array element reads it
const STATUS_THROWN = 1;
// encodeRequest: the payload region has no room for the argument now.
const WAIT_FOR_ROOM = 2;

// Drain passes with nothing found before the host arms the doorbell and
// sleeps. Each pass is one turn of the event loop (setImmediate) plus a
// sched_yield (so a worker sharing this vCPU can answer), ~1-2 µs here: a
// short, bounded poll that catches responses arriving within tens of µs
// without the doorbell's ThreadsafeFunction hop (~8 µs,
// measured on Node 20, 2 vCPUs, 2026-11). Measured with
// `node bench/run.mjs --only knitting --reps 3` (2 threads, calls/s per rep):
//   8 passes: 1.83 M, 1.77 M, 1.85 M    32: 1.90 M, 2.05 M, 2.02 M
//   128: 2.25 M, 1.99 M, 1.85 M         sequential p50 ~1.2 µs for all three
// and without the yield, 8 passes gave 1.1-1.5 M calls/s against 2.1-3.1 M
// with it (a loop of 400,000 calls, 1,000 in flight).
const FREE_HOPS = 32;
// The budget adapts between MIN_HOPS and FREE_HOPS: a doorbell wait that
// lasted longer than LONG_WAIT_MS halves it (polling would not have caught
// that response, it only took CPU from the workers: with 2,000 x 1 ms tasks
// on 2 workers a fixed 32 passes cost ~10% of the makespan, `npm run bench
// -- --report`, workload 4), a short one doubles it back.
const MIN_HOPS = 2;
const LONG_WAIT_MS = 0.2;
// With `host.doorbell: false` the host polls: DEFAULT_STALL_FREE_LOOPS idle
// passes, then timers from 1 ms doubling up to `host.maxBackoffMs`.
const DEFAULT_STALL_FREE_LOOPS = 64;
const DEFAULT_MAX_BACKOFF_MS = 8;

// How long close() lets a starting worker thread finish loading before it
// terminates it anyway (see close()).
const START_GRACE_MS = 2000;

let nextPoolId = 1;

const OPEN = 0;
const DRAINING = 1; // shutdown() waits for submitted calls; new calls reject
const CLOSED = 2;

class Call {
  constructor(task, arg, id) {
    this.task = task;
    this.arg = arg;
    this.id = id;
    this.resolve = null;
    this.reject = null;
    this.done = false; // settled: a late response is dropped
    this.lane = null; // the lane holding it, once placed
    this.slot = -1;
    this.signal = -1; // abort word index, for abort-aware tasks
    this.extra = null; // timers and listeners, only for calls that use them
    this.shared = null; // seqs of the SharedArrayBuffers its argument names (shared-refs.js)
    this.submittedAt = 0; // performance.now() at submission, with `stats: true` (stats.js)
  }
}

/** What only some calls need; kept off Call so the common call stays small. */
class CallExtra {
  constructor() {
    this.timer = null; // task timeout
    this.hardTimer = null; // worker.hardTimeoutMs
    this.abortSignal = null; // a caller's AbortSignal
    this.onAbort = null;
    this.encoded = null; // its argument's bytes, while it waits for room in the payload region
  }
}

function extraOf(call) {
  if (call.extra === null) call.extra = new CallExtra();
  return call.extra;
}

/** A pool whose only lane is the host's inline lane cannot run importTask tasks. */
function checkInlineOnly(options, table) {
  if (options.threads !== 0) return;
  const imported = table.find((entry) => entry.fn === null);
  if (imported !== undefined) {
    throw new TypeError(
      `knitting-native: task "${imported.name}" is an importTask, which runs only in workers, but this pool's only lane is the inline one (threads: 0 with inliner); give it threads >= 1`,
    );
  }
}

class Pool {
  constructor(options, table, poolHref) {
    checkInlineOnly(options, table);
    this.options = options;
    this.table = table;
    this.id = nextPoolId++;
    this.debug = makeDebug(options.debug, this.id);
    this.state = OPEN;
    this.failure = null; // set when workers cannot start: every call rejects with it
    this.nextCallId = 1;
    this.queue = []; // calls waiting for a free slot
    this.queueHead = 0;
    this.inFlight = 0; // calls placed in slots (answered or not)
    this.pending = 0; // calls submitted and not yet settled
    this.awaitingArg = new Set(); // calls whose argument promise has not settled yet
    this.drainScheduled = false;
    this.armed = false;
    this.idleHops = 0;
    // SharedArrayBuffers in arguments and results: by reference to threads, refused to processes.
    this.sharedRefs = options.worker.runtime === "process" ? null : new HostSharedRefs(options.threads);
    this.encoder = new Encoder({ maxPayloadBytes: options.maxPayloadBytes, shared: this.sharedRefs || PROCESS_REFUSAL });
    this.hardTimeoutMs = options.worker.hardTimeoutMs; // read on every placement
    // What a server watches and limits: events, counts and times, the queue limit.
    this.events = new PoolEvents();
    this.stats = new PoolStats(options.threads, options.stats);
    this.timing = options.stats; // read on every settled call
    this.queueLimit = options.maxQueue === null ? null : new QueueLimit(options.maxQueue, (name) => this.events.emit(name));

    const topology = options.topology;
    const threads = options.threads;
    const signals = options.abortSignalCapacity;
    // A stealing pool has one shared submit region and no private lanes.
    const lanes = topology.steal ? 0 : Math.max(1, threads);
    const steal = topology.steal ? [threads, topology.regionLanes, topology.regionWidth] : [];
    // Threads or processes: where the memory comes from, how workers start
    // and how a parked one is woken (thread-runtime.js, process-runtime.js).
    this.runtime = options.worker.runtime === "process" ? new ProcessRuntime(options.worker) : new ThreadRuntime(options.worker);
    const memory = this.runtime.createMemory(native.controlBytes(lanes, signals, ...steal), options.payloadInitialBytes, options.payloadMaxByteLength);
    this.controlSab = memory.control;
    this.i32 = new Int32Array(this.controlSab);
    this.u8 = new Uint8Array(this.controlSab);
    native.formatControlRegion(this.u8, lanes, signals, ...steal);
    this.abortBase = native.abortOffset(lanes) / 4;
    // How the host wakes a worker parked on a word: the runtime's way.
    const wakeWorker = (index) => this.runtime.wakeWorker(this.i32, index);
    this.shared = null;
    this.stealData = null;
    if (topology.steal) {
      const sectionByte = native.stealOffset(lanes, signals);
      this.shared = new HostSubmit(this.i32, sectionByte, threads, topology.regionLanes, topology.regionWidth, wakeWorker);
      // `cores`: a worker spins only while the busy workers, the spinner and
      // the host fit on them (steal.js, "Waiting and waking").
      this.stealData = { sectionByte, workers: threads, regionLanes: topology.regionLanes, width: topology.regionWidth, cores: availableParallelism() };
    }
    this.freeSignals = [];
    for (let i = signals - 1; i >= 0; i--) this.freeSignals.push(i);
    this.payloadSab = memory.payload;
    this.payload = new PayloadRegion(this.payloadSab, true, this.i32, (index, count) => this.runtime.wakeWorker(this.i32, index, count));
    // Private lanes, one per worker, in index order; `choices` adds the
    // inline lane at its position and is what the balancer picks from.
    this.lanes = [];
    if (!topology.steal) for (let i = 0; i < threads; i++) this.lanes.push(new HostLane(this.i32, i, wakeWorker));
    this.inline = options.inliner ? new InlineLane(this, table, options.inliner) : null;
    this.choices = this.inline === null ? this.lanes : options.inliner.position === "first" ? [this.inline, ...this.lanes] : [...this.lanes, this.inline];
    this.allChoices = this.choices; // `choices` stands in for lanes whose workers are being replaced
    this.choose = makeBalancer(topology.balancer);
    this.serialChannel = !topology.steal && topology.dispatcher === "serial-channel";
    this.killedFor = new Array(threads).fill(null); // why the host terminated a worker, if it did
    this.workers = new Array(threads).fill(null);
    this.recycle = options.worker.recycle === null ? null : new Recycler(this, hard.liveChoices);
    this.ready = new Array(threads).fill(false);
    this.everReady = new Array(threads).fill(false);
    this.started = new Array(threads).fill(null);
    this.liveness = new Liveness();
    this.startup = new StartupWatch(this, threads);
    this.workerTasks = workerTable(table);
    this.bootstrap = options.worker.bootstrap
      ? { ...options.worker.bootstrap, href: new URL(options.worker.bootstrap.href, poolHref).href }
      : null;

    let readyResolve;
    let readyReject;
    this.readyPromise = new Promise((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    this.readyPromise.catch(() => {}); // observed through `pool.ready` or the calls
    this.readyResolve = readyResolve;
    this.readyReject = readyReject;

    this.drainBound = () => this.drain();
    this.settleBound = (slot) => this.settle(this.shared, slot);
    this.flushQueued = false;
    this.flushBound = () => this.flushLanes();
    this.makeRoomBound = () => {
      this.pump();
      return this.queue.length - this.queueHead;
    };
    const host = options.host;
    this.useDoorbell = host.doorbell && threads > 0;
    this.freeHops = host.stallFreeLoops !== undefined ? host.stallFreeLoops : this.useDoorbell ? FREE_HOPS : DEFAULT_STALL_FREE_LOOPS;
    this.maxBackoffMs = host.maxBackoffMs !== undefined ? host.maxBackoffMs : DEFAULT_MAX_BACKOFF_MS;
    this.backoffMs = 1;
    this.backoffTimer = null;
    this.hopBudget = this.freeHops;
    this.armedAt = 0;
    this.rings = 0; // doorbell rings, for the signals traces
    this.queuePeak = 0; // longest queue seen, for the host traces
    this.roomTraced = false; // the host traces said calls wait for payload room
    this.doorbell = this.useDoorbell ? this.startDoorbell() : null;
    if (this.debug) {
      const how = topology.steal
        ? `work stealing over ${topology.regionLanes} region lanes of ${topology.regionWidth} slots`
        : `private lanes, ${topology.balancer || "least-loaded"} balancer, ${topology.dispatcher} dispatcher${this.inline ? `, inline lane ${options.inliner.position}` : ""}`;
      this.debug("lifecycle", `created: ${threads} workers, tasks ${table.map((e) => e.name).join(", ")}; ${how}`);
    }
    try {
      for (let i = 0; i < threads; i++) this.spawn(i);
    } catch (err) {
      // Nothing may outlive a pool that failed to start: no waiter thread,
      // no worker, no held region.
      this.state = CLOSED;
      this.liveness.done();
      if (this.doorbell !== null) this.doorbell.close();
      for (const worker of this.workers) if (worker !== null) worker.terminate();
      this.runtime.close();
      throw err;
    }
    if (threads === 0) this.readyResolve(); // the inline lane needs no start-up

    // An unknown name finds the trap on the prototype chain: calling it
    // throws a TypeError listing the tasks. Task names are own properties, so
    // `pool.call.add` never reaches the trap.
    this.call = Object.create(unknownTaskTrap(table.map((entry) => entry.name)));
    table.forEach((entry, index) => {
      this.call[entry.name] = (arg, callOptions) => this.submit(index, arg, callOptions);
    });
    Object.freeze(this.call);
    this.shutdownPromise = null;
    this.drainedResolve = null;
  }

  /** The Rust waiter that wakes an idle host when a worker rings. */
  startDoorbell() {
    return new native.HostDoorbell(this.u8, () => {
      // The waiter cleared ARMED before calling.
      this.armed = false;
      const waited = performance.now() - this.armedAt;
      if (waited > LONG_WAIT_MS) this.hopBudget = Math.min(this.freeHops, Math.max(MIN_HOPS, this.hopBudget >> 1));
      else this.hopBudget = Math.min(this.freeHops, Math.max(1, this.hopBudget << 1));
      if (this.debug && isPowerOfTwo(++this.rings)) {
        this.debug("signals", `doorbell ring #${this.rings}: waited ${waited.toFixed(3)} ms; idle polling budget now ${this.hopBudget} passes`);
      }
      this.drain();
    });
  }

  spawn(lane) {
    const worker = this.runtime.spawn({
      [WORKER_MARK]: true,
      control: this.controlSab,
      payload: this.payloadSab,
      lane,
      abortBase: this.abortBase,
      tasks: this.workerTasks,
      bootstrap: this.bootstrap,
      maxPayloadBytes: this.options.maxPayloadBytes,
      steal: this.stealData,
      sharedPort: this.sharedRefs === null ? undefined : this.sharedRefs.attach(lane),
      totalNumberOfThread: this.workers.length,
      spinMicroseconds: this.options.worker.timers.spinMicroseconds,
      parkMs: this.options.worker.timers.parkMs,
      stats: this.options.stats,
      recycle: this.options.worker.recycle,
    });
    this.workers[lane] = worker;
    this.events.workerCreated(lane, worker);
    this.ready[lane] = false;
    // Settles once the worker has loaded its modules (or failed, or exited):
    // close() waits for it before terminating a worker thread (see there).
    let markStarted;
    this.started[lane] = new Promise((resolve) => (markStarted = resolve));
    const threadId = worker.threadId;
    const label = worker.pid !== undefined ? `pid ${worker.pid}` : `threadId ${threadId}`;
    let reported = null;
    worker.on("message", (msg) => {
      if (msg && msg.type === "ready") {
        markStarted();
        this.ready[lane] = true;
        this.everReady[lane] = true;
        this.startup.ready(lane);
        if (this.debug) this.debug("lifecycle", `worker ${lane} (${label}) ready`);
        if (this.ready.every(Boolean)) this.readyResolve();
        this.updateStarting();
      } else if (msg && msg.type === "init-error") {
        markStarted();
        if (this.debug) this.debug("imports", `worker ${lane} failed to start: ${msg.error && msg.error.message}`);
        // Cloning drops an error's `code`; the worker sends it beside.
        if (msg.code !== undefined && msg.error !== null && typeof msg.error === "object" && msg.error.code === undefined) msg.error.code = msg.code;
        this.fail(msg.error);
      } else if (msg && msg.type === "recycle" && this.recycle !== null) {
        this.recycle.request(lane, worker, msg.reason);
      }
    });
    worker.on("error", (err) => {
      reported = err;
      if (this.debug) this.debug("lifecycle", `worker ${lane} error: ${err && err.message}`);
    });
    worker.on("exit", (code, signal) => {
      markStarted();
      // A worker replaced for worker.maxCallsBeforeRecycle/maxMemoryBeforeRecycle (recycle.js).
      const recycled = this.recycle === null ? null : this.recycle.exited(lane, worker, code);
      this.events.workerExited(lane, worker, code, signal, exitReason(this, lane, recycled), recycled, reported);
      if (this.debug) this.debug("lifecycle", `worker ${lane} (${label}) exited with ${signal ? `signal ${signal}` : `code ${code}`}${recycled !== null ? ` (recycled: ${recycled} limit)` : ""}`);
      if (this.workers[lane] !== worker) return;
      this.workers[lane] = null;
      const wasReady = this.ready[lane];
      this.ready[lane] = false;
      if (this.state === CLOSED) return;
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (!this.everReady[lane] && this.failure === null) {
        // The lane's first worker died while importing the task modules: a
        // restart would too.
        this.fail(reported || new Error(`knitting-native: worker ${lane} (${label}) exited with ${how} while starting`));
        return;
      }
      const killed = this.killedFor[lane] !== null || recycled !== null;
      const cause = this.killedFor[lane] || reported || undefined;
      // Terminated by the host: what it held but never started runs on the
      // replacement (hard-timeout.js).
      const again = killed ? hard.recoverUnstarted(this, lane) : [];
      this.killedFor[lane] = null;
      if (this.shared === null) this.choices = hard.liveChoices(this);
      const own = reported || new Error(`knitting-native: worker ${lane} (${label}) exited with ${how}`);
      // Calls a replacement held before it was ready never ran: they reject
      // with the start-up error (the pool's first), not a WorkerExitError.
      const startError = !wasReady && !killed ? this.startup.firstError(own) : null;
      const held = this.takeBack(lane).filter((call) => !again.includes(call));
      if (again.length > 0) this.queue.splice(this.queueHead, 0, ...again);
      // A worker that died running a call was killed by that task, not by
      // its start-up (the call's STARTED word, still as it left it).
      const ranCall = held.some((call) => Atomics.load(this.i32, call.lane.slotWord(call.slot) + 5) !== 0);
      for (const call of held) {
        this.releaseSignal(call);
        const proc = worker.pid !== undefined ? { pid: worker.pid, signal } : undefined;
        this.finish(call, false, startError || new WorkerExitError(lane, threadId, code, cause, proc));
      }
      if (this.debug) this.debug("host", `worker ${lane} died holding ${held.length} calls; starting a replacement`);
      if (this.failure === null) {
        // Its own death, soon after starting, may be a crash loop: startup.js
        // starts the replacement, backing off when it is.
        if (killed || ranCall) this.spawn(lane);
        else this.startup.died(lane, wasReady, own);
      }
      this.pump();
      // The drain loop stops when nothing is in a slot, without arming the
      // doorbell: calls placed just now (every lane was being replaced, so
      // they had waited) need it running again.
      if (this.inFlight !== 0 && !this.drainScheduled && !this.armed) {
        this.drainScheduled = true;
        this.idleHops = 0;
        setImmediate(this.drainBound);
      }
      this.updateStarting();
    });
    // After the listeners (a "message" listener refs a worker's port again):
    // liveness.js holds the event loop while the pool has work.
    detach(worker);
    this.updateStarting();
  }

  /** Whether a worker is still starting: the process stays alive for it (liveness.js). */
  updateStarting() {
    this.liveness.setStarting(this.state === OPEN && this.failure === null && this.workers.some((w, i) => w !== null && !this.ready[i]));
  }

  /**
   * Worker `lane` is gone: delivers the answers it published (they are real
   * results) and returns the calls it held unanswered, whose slots are free
   * again. A slot it held may own a payload block: an unread request's, or
   * a response it wrote but never published (the worker clears EXT before
   * it frees a request's block, so a block is never freed twice).
   */
  takeBack(lane) {
    const held = [];
    if (this.shared !== null) {
      const { answered, held: indexes } = this.shared.takeBack(lane, this.settleBound);
      this.inFlight -= answered;
      for (const index of indexes) {
        const ext = this.i32[this.shared.slotWord(index) + 3];
        if (ext !== NO_EXT) this.freePayload(ext);
        held.push(this.shared.release(index));
      }
    } else {
      const hostLane = this.lanes[lane];
      this.drainLane(hostLane);
      for (let slot = 0; slot < L.slotCount; slot++) {
        if (hostLane.calls[slot] === null) continue;
        const ext = this.i32[hostLane.slotWord(slot) + 3];
        if (ext !== NO_EXT) this.freePayload(ext);
      }
      held.push(...hostLane.reset());
    }
    this.inFlight -= held.length;
    return held;
  }

  /** Every call placed in a slot or the inline lane and not yet answered. */
  placedCalls() {
    const calls = [];
    const tables = this.shared !== null ? [this.shared.calls] : this.lanes.map((lane) => lane.calls);
    for (const table of tables) for (const call of table) if (call !== null) calls.push(call);
    if (this.inline !== null) calls.push(...this.inline.calls());
    return calls;
  }

  /** Workers cannot run the tasks: reject everything with `err`, now and later. */
  fail(err) {
    if (this.failure !== null) return;
    this.failure = err instanceof Error ? err : new Error(String(err));
    this.readyReject(this.failure);
    this.rejectAll(this.failure);
    this.updateStarting();
  }

  rejectAll(err) {
    this.abandonAwaitingArg(err);
    for (let i = this.queueHead; i < this.queue.length; i++) this.finish(this.queue[i], false, err);
    this.queue = [];
    this.queueHead = 0;
    for (const call of this.placedCalls()) this.finish(call, false, err);
  }

  /** Settles a call once; later attempts (a late response, a late timer) do nothing. */
  finish(call, ok, value) {
    if (call.done) return;
    call.done = true;
    const extra = call.extra;
    if (extra !== null) {
      if (extra.timer !== null) clearTimeout(extra.timer);
      if (extra.hardTimer !== null) clearTimeout(extra.hardTimer);
      if (extra.onAbort !== null) extra.abortSignal.removeEventListener("abort", extra.onAbort);
    }
    if (call.lane === null) this.releaseSignal(call); // never placed: no worker reads it
    if (--this.pending === 0) this.liveness.setCalls(false);
    this.stats.settled(ok);
    if (call.shared !== null) this.sharedRefs.release(call.shared);
    if (ok) call.resolve(value);
    else call.reject(value);
    if (this.pending === 0 && this.drainedResolve !== null) this.drainedResolve();
  }

  releaseSignal(call) {
    if (call.signal >= 0) {
      this.freeSignals.push(call.signal);
      call.signal = -1;
    }
  }

  /** The `signal` an abort-aware task gets when it runs on the inline lane. */
  abortToolkit(call) {
    const word = this.abortBase + call.signal;
    return { hasAborted: () => Atomics.load(this.i32, word) !== 0, now: () => performance.now() };
  }

  /** Marks an abort-aware call's shared abort word (its `signal.hasAborted()`). */
  raiseAbort(call) {
    if (call.signal >= 0) Atomics.store(this.i32, this.abortBase + call.signal, 1);
  }

  /** A call that settles before it is placed (rejected at once, or waiting for its argument). */
  early(task, promise) {
    // An abort-aware call's promise always carries reject(); settled, it does nothing.
    if (this.table[task].abortAware && promise.reject === undefined) promise.reject = () => {};
    return promise;
  }

  submit(task, arg, callOptions) {
    if (this.state !== OPEN) return this.early(task, Promise.reject(shutdownError()));
    if (this.failure !== null) return this.early(task, Promise.reject(this.failure));
    let abortSignal = null;
    if (callOptions !== undefined) {
      try {
        abortSignal = checkCallOptions(callOptions, this.table[task].name);
      } catch (err) {
        return this.early(task, Promise.reject(err));
      }
      if (abortSignal !== null && abortSignal.aborted) return this.early(task, Promise.reject(abortError(abortSignal.reason)));
    }
    let isPromise;
    try {
      isPromise = arg instanceof Promise;
    } catch (err) {
      // A revoked Proxy, or a getPrototypeOf trap that throws.
      return this.early(task, Promise.reject(unreadableError(err)));
    }
    if (isPromise) return this.submitAfter(task, arg, callOptions, abortSignal);
    const entry = this.table[task];
    const call = new Call(task, arg, this.nextCallId++ | 0);
    const promise = new Promise((resolve, reject) => {
      call.resolve = resolve;
      call.reject = reject;
    });
    if (this.pending++ === 0) this.liveness.setCalls(true);
    this.stats.submitted1(call);
    if (entry.abortAware) {
      if (this.freeSignals.length === 0) {
        this.finish(call, false, signalsExhaustedError(this.options.abortSignalCapacity, entry.name));
        return this.early(task, promise);
      }
      call.signal = this.freeSignals.pop();
      Atomics.store(this.i32, this.abortBase + call.signal, 0);
      // knitting's way: the promise of an abort-aware call can abort it.
      promise.reject = (reason) => {
        this.raiseAbort(call);
        this.finish(call, false, reason);
      };
    }
    if (entry.timeout !== null) {
      extraOf(call).timer = setTimeout(() => this.onTimeout(call, entry), entry.timeout.time);
    }
    if (abortSignal !== null) {
      const extra = extraOf(call);
      extra.abortSignal = abortSignal;
      extra.onAbort = () => {
        if (this.debug) this.debug("signals", `call ${call.id} of "${entry.name}" aborted by its AbortSignal`);
        this.raiseAbort(call);
        this.finish(call, false, abortError(abortSignal.reason));
      };
      abortSignal.addEventListener("abort", extra.onAbort, { once: true });
    }
    if (this.queueHead === this.queue.length && !this.serialChannel) {
      if (!this.place(call)) this.enqueue(call);
    } else {
      // serial-channel: one dispatch pass per burst places the queue (flushLanes).
      this.enqueue(call);
      if (this.serialChannel) this.scheduleFlush();
    }
    if (this.debug) this.traceQueue();
    if (this.backoffTimer !== null) {
      // Polling without a doorbell, and backing off: new work polls at once.
      clearTimeout(this.backoffTimer);
      this.backoffTimer = null;
      this.drainScheduled = false;
    }
    if (!this.drainScheduled && !this.armed) {
      this.drainScheduled = true;
      this.idleHops = 0;
      setImmediate(this.drainBound);
    }
    return promise;
  }

  /** `call` waits for a slot, unless maxQueue calls already do: then it is refused (queue-limit.js). */
  enqueue(call) {
    if (this.queueLimit !== null && !this.queueLimit.admit(this.queue.length - this.queueHead, this.serialChannel ? this.makeRoomBound : null)) {
      this.stats.refused();
      this.finish(call, false, queueFullError(this.queueLimit.max, this.table[call.task].name));
      return;
    }
    this.queue.push(call);
  }

  /** A call whose argument is a promise: submitted once it resolves. */
  submitAfter(task, argPromise, callOptions, abortSignal) {
    let inner = null;
    let rejectOuter;
    let abortedWith = null;
    // Until the argument settles the call is in no queue and no slot, so
    // shutdown reaches it through `awaitingArg` (an argument that never
    // settles must not leave the call pending forever).
    const abandon = (reason) => {
      this.awaitingArg.delete(abandon);
      abortedWith = { reason };
      rejectOuter(reason);
    };
    const outer = new Promise((resolve, reject) => {
      rejectOuter = reject;
      argPromise.then(
        (value) => {
          if (abortedWith !== null) return;
          this.awaitingArg.delete(abandon);
          if (abortSignal !== null && abortSignal.aborted) {
            reject(abortError(abortSignal.reason));
            return;
          }
          inner = this.submit(task, value, callOptions);
          inner.then(resolve, reject);
        },
        (err) => {
          this.awaitingArg.delete(abandon);
          reject(err);
        },
      );
    });
    this.awaitingArg.add(abandon);
    if (this.table[task].abortAware) {
      outer.reject = (reason) => {
        if (inner !== null) inner.reject(reason);
        else abandon(reason);
        rejectOuter(reason);
      };
    }
    return outer;
  }

  /** Shutdown: calls still waiting for their argument reject with `err`. */
  abandonAwaitingArg(err) {
    for (const abandon of [...this.awaitingArg]) abandon(err);
  }

  /** host traces: each new power-of-two peak of calls waiting for a slot. */
  traceQueue() {
    const queued = this.queue.length - this.queueHead;
    if (queued >= 64 && queued > this.queuePeak && isPowerOfTwo(queued)) {
      this.queuePeak = queued;
      this.debug("host", `${queued} calls queued behind ${this.inFlight} in slots (every slot busy)`);
    }
  }

  onTimeout(call, entry) {
    call.extra.timer = null;
    if (call.done) return;
    if (this.debug) this.debug("signals", `task "${entry.name}" call ${call.id} timed out after ${entry.timeout.time} ms (${entry.timeout.kind})`);
    this.raiseAbort(call);
    const { kind, value } = entry.timeout;
    if (kind === "default") this.finish(call, true, value);
    else if (kind === "error") this.finish(call, false, value);
    else this.finish(call, false, timeoutError(entry.name, entry.timeout.time));
  }

  /**
   * worker.hardTimeoutMs passed since the call was handed to a worker:
   * replace that worker if this call, or a settled call, holds its thread
   * (hard-timeout.js says which); otherwise the call gets another period.
   */
  onHardTimeout(call) {
    call.extra.hardTimer = null;
    if (call.done || call.lane === null) return;
    const { verdict, lane, holder } = hard.judge(this, call);
    if (verdict === hard.WAIT || this.killedFor[lane] !== null) {
      // Being replaced already: the exit settles it, or places it again.
      if (this.killedFor[lane] === null || lane < 0) call.extra.hardTimer = setTimeout(() => this.onHardTimeout(call), this.hardTimeoutMs);
      return;
    }
    const worker = this.workers[lane];
    const err = hardTimeoutError(this.table[holder.task].name, this.hardTimeoutMs, lane);
    if (this.debug) this.debug("host", `worker ${lane} passed worker.hardTimeoutMs on call ${holder.id}: replacing it`);
    if (worker !== null) {
      // From here on no new call goes to this worker (liveChoices; and a
      // call it claims and never starts is placed again at its exit).
      this.killedFor[lane] = err;
      if (this.shared === null) this.choices = hard.liveChoices(this);
      worker.terminate();
    }
    if (verdict === hard.BLAME_CALL) this.finish(call, false, err);
  }

  /**
   * Puts a call into a free slot: of the shared submit region when the pool
   * steals, else of the lane the balancer picks (or the inline lane). False
   * when every slot is taken.
   */
  place(call) {
    if (call.done) return true; // timed out or aborted while queued
    let slots;
    let slot;
    if (this.shared !== null) {
      slots = this.shared;
      slot = slots.freeSlot();
      if (slot < 0) return false;
    } else {
      slots = this.choose(this.choices, call);
      if (slots === null) return false;
      if (slots === this.inline) {
        slots.place(call);
        return true;
      }
      slot = slots.freeSlot();
    }
    const encoded = this.encodeRequest(slots, slot, call);
    if (encoded === WAIT_FOR_ROOM) return false; // stays queued: retried at the next drain
    if (encoded) {
      slots.publish(slot, call);
      call.lane = slots;
      call.slot = slot;
      this.inFlight++;
      if (this.hardTimeoutMs !== undefined) {
        extraOf(call).hardTimer = setTimeout(() => this.onHardTimeout(call), this.hardTimeoutMs);
      }
      this.scheduleFlush();
    }
    return true;
  }

  /** Publishes this burst's placements at the end of the current job. */
  scheduleFlush() {
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flushBound);
    }
  }

  /**
   * Step 1: write the request. On an encoding error the call is rejected
   * (false). WAIT_FOR_ROOM: other calls' payloads fill the payload region;
   * the encoded argument stays with the call until a retry finds room.
   */
  encodeRequest(lane, slot, call) {
    const i32 = this.i32;
    const w = lane.slotWord(slot);
    try {
      let len;
      let ext = NO_EXT;
      const extra = call.extra;
      if (extra !== null && extra.encoded !== null) {
        len = extra.encoded.length;
        ext = this.payload.tryWrite(extra.encoded);
        if (ext === NO_ROOM) return this.waitForRoom(call, extra.encoded);
        extra.encoded = null;
      } else {
        len = this.encoder.encodeInto(call.arg, this.u8, lane.slotPayload(slot), L.inlineBytes);
        if (len < 0) {
          const bytes = this.encoder.encode(call.arg);
          ext = this.payload.tryWrite(bytes);
          len = bytes.length;
          // encode()'s bytes are only valid until the next encode: keep a copy.
          if (ext === NO_ROOM) return this.waitForRoom(call, bytes.slice());
        }
      }
      i32[w] = call.task;
      i32[w + 1] = call.id;
      i32[w + 2] = len;
      i32[w + 3] = ext;
      i32[w + 4] = call.signal + 1;
      i32[w + 5] = 0; // STARTED
    } catch (err) {
      if (this.sharedRefs !== null) this.sharedRefs.release(this.sharedRefs.take() || []);
      this.finish(call, false, err);
      return false;
    }
    if (this.sharedRefs !== null && this.sharedRefs.fresh.length !== 0) call.shared = this.sharedRefs.take();
    call.arg = undefined;
    return true;
  }

  /** encodeRequest found no room for `bytes`: the call waits, unless nothing could ever free any. */
  waitForRoom(call, bytes) {
    if (this.inFlight === 0) {
      // No call holds a block, yet the region is full: its blocks were lost
      // (a worker that died between writing and publishing, say). Waiting
      // would never end.
      const err = new RangeError(
        `knitting-native: the payload region has no room for ${bytes.length} bytes although no call holds any of it (lost blocks); this pool cannot send large payloads any more`,
      );
      err.code = CODEC_ERRORS.LIMIT;
      throw err;
    }
    extraOf(call).encoded = bytes;
    call.arg = undefined;
    // The SharedArrayBuffers the encoding named stay the call's until it settles.
    if (this.sharedRefs !== null && this.sharedRefs.fresh.length !== 0) call.shared = this.sharedRefs.take();
    if (this.debug && !this.roomTraced) {
      this.roomTraced = true;
      this.debug("host", `payload region full: calls with large arguments wait for room (${this.inFlight} calls in slots)`);
    }
    return WAIT_FOR_ROOM;
  }

  drain() {
    this.drainScheduled = false;
    // Read the count before scanning: every publication counted up to here
    // is visible to the scan below (src/doorbell.rs).
    const counted = Atomics.load(this.i32, W_COUNTER);
    if (this.timing) this.stats.tick();
    let settled = 0;
    if (this.shared !== null) {
      if (this.shared.inFlight !== 0) {
        for (let w = 0; w < this.workers.length; w++) settled += this.shared.takeDone(w, this.settleBound);
        this.inFlight -= settled;
      }
    } else {
      const lanes = this.lanes;
      for (let i = 0; i < lanes.length; i++) {
        if (lanes[i].inFlight !== 0) settled += this.drainLane(lanes[i]);
      }
    }
    if (this.recycle !== null && this.recycle.waiting !== 0) this.recycle.check();
    this.pump();
    if (this.serialChannel) this.flushLanes();
    if (this.inFlight === 0 && this.payload.hasWaiters()) {
      // A worker waiting for room holds an unanswered call, so with none in
      // slots the count is stale: a worker died while parked for room.
      this.payload.clearWaiters();
    }
    if (this.inFlight === 0 || this.state === CLOSED) return;
    if (settled > 0) {
      this.idleHops = 0;
      this.backoffMs = 1;
    } else this.idleHops++;
    if (this.idleHops <= this.hopBudget) {
      // Let a worker that shares this vCPU run before polling again.
      if (settled === 0) native.yieldNow();
      this.drainScheduled = true;
      setImmediate(this.drainBound);
      return;
    }
    if (this.doorbell === null) {
      // Polling without a doorbell: back off, up to maxBackoffMs.
      this.drainScheduled = true;
      this.backoffTimer = setTimeout(() => {
        this.backoffTimer = null;
        this.drain();
      }, this.backoffMs);
      this.backoffMs = Math.min(this.maxBackoffMs, this.backoffMs * 2);
      return;
    }
    // Nothing for a while: sleep on the doorbell. Arm, then re-check the
    // count: a publication since `counted` means drain now instead.
    this.armed = true;
    this.armedAt = performance.now();
    Atomics.store(this.i32, W_ARMED, 1);
    if (Atomics.load(this.i32, W_COUNTER) !== counted) {
      Atomics.store(this.i32, W_ARMED, 0);
      this.armed = false;
      this.drainScheduled = true;
      setImmediate(this.drainBound);
    }
  }

  /** Settles every response a lane has published; returns how many. */
  drainLane(lane) {
    let finished = lane.takeFinished();
    let settled = 0;
    while (finished !== 0) {
      const slot = lowestBit(finished);
      finished &= finished - 1;
      this.settle(lane, slot);
      settled++;
    }
    this.inFlight -= settled;
    return settled;
  }

  freePayload(ext) {
    try {
      this.payload.free(ext >>> 0);
    } catch (err) {
      if (this.debug) this.debug("host", `payload block ${ext >>> 0} could not be freed: ${err.message}`);
    }
  }

  /** Publishes the slots placed since the last flush, lane by lane. */
  flushLanes() {
    this.flushQueued = false;
    if (this.shared !== null) {
      this.shared.flush();
    } else {
      // serial-channel: this pass is where queued calls are dispatched.
      if (this.serialChannel) this.pump();
      const lanes = this.lanes;
      for (let i = 0; i < lanes.length; i++) lanes[i].flush();
    }
    // A worker parked for room must start the calls just published: their
    // arguments hold room only it can free (payload.js).
    this.payload.nudge();
  }

  /** Moves queued calls into free slots. */
  pump() {
    while (this.queueHead < this.queue.length) {
      if (!this.place(this.queue[this.queueHead])) break;
      this.queue[this.queueHead++] = undefined;
    }
    if (this.queueLimit !== null) this.queueLimit.pumped(this.queue.length - this.queueHead);
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
      // The worker writes the id back; only a write into shared memory
      // (task code) makes it differ.
      const err = regionCorruptError(`slot ${slot} answered call ${id}, expected ${call ? call.id : "none"}`);
      if (call !== null) this.finish(call, false, err);
      else process.emitWarning(err);
      return;
    }
    // The worker is done with the slot, and so with the call's abort word.
    this.releaseSignal(call);
    if (this.timing && !call.done) this.stats.answered(call, lane === this.shared ? this.shared.ownerOf(slot) : lane.lane, i32[w + L.slotWordRunMicros]);
    if (call.done) {
      // Timed out or aborted before the worker answered: drop the late result.
      if (ext !== NO_EXT) this.freePayload(ext);
      return;
    }
    let value;
    try {
      value = this.payload.readSlot(this.u8, lane.slotPayload(slot), len, ext, this.sharedRefs);
    } catch (err) {
      this.finish(call, false, err);
      return;
    }
    this.finish(call, status !== STATUS_THROWN, value);
  }

  shutdown(delayMs) {
    if (this.shutdownPromise !== null) return this.shutdownPromise;
    if (delayMs !== undefined && (typeof delayMs !== "number" || !(delayMs >= 0) || !Number.isFinite(delayMs))) {
      // Not a shutdown: a bad argument must not stop the pool.
      return Promise.reject(new RangeError(`knitting-native: shutdown(delayMs): delayMs must be a non-negative number of milliseconds, got ${String(delayMs)}`));
    }
    // New calls reject from here on, so a call whose argument arrives later
    // would too: it rejects now, even while submitted calls may finish.
    this.abandonAwaitingArg(shutdownError());
    const wait = this.options.worker.resolveAfterFinishingAll || delayMs !== undefined;
    if (this.debug) {
      this.debug("lifecycle", `shutdown${wait ? " (letting calls finish)" : ""}: ${this.pending} calls pending`);
    }
    if (!wait || this.pending === 0) {
      this.shutdownPromise = this.close();
      return this.shutdownPromise;
    }
    this.state = DRAINING;
    this.shutdownPromise = new Promise((resolve) => {
      let timer = null;
      const done = () => {
        if (timer !== null) clearTimeout(timer);
        this.drainedResolve = null;
        resolve(this.close());
      };
      this.drainedResolve = done;
      if (delayMs !== undefined) timer = setTimeout(done, delayMs);
    });
    return this.shutdownPromise;
  }

  /** Rejects whatever is still pending and stops every thread. */
  close() {
    this.state = CLOSED;
    this.liveness.setClosing(true); // until every worker has exited
    this.startup.close();
    this.rejectAll(shutdownError());
    this.readyReject(shutdownError());
    if (this.doorbell !== null) this.doorbell.close();
    if (this.backoffTimer !== null) clearTimeout(this.backoffTimer);
    const exits = this.workers.map((worker, lane) => {
      if (worker === null) return undefined;
      // A worker thread terminated while Node is still reading its modules
      // can leave that read's file descriptor open for good (pools shut
      // down 20-60 ms after creation: 2-3 descriptors of the task modules
      // left open over 400 pools, none once terminate waits for start-up).
      // So a starting thread is ended once it has started, or after
      // START_GRACE_MS; a process is killed at once (its descriptors go
      // with it).
      if (this.ready[lane] || worker.pid !== undefined) return worker.terminate();
      let timer;
      const grace = new Promise((resolve) => (timer = setTimeout(resolve, START_GRACE_MS)));
      return Promise.race([this.started[lane], grace]).then(() => {
        clearTimeout(timer);
        return worker.terminate();
      });
    });
    return Promise.all(exits).then(() => {
      this.runtime.close();
      if (this.sharedRefs !== null) this.sharedRefs.close();
      this.liveness.done();
    });
  }
}

const isPowerOfTwo = (n) => n > 0 && (n & (n - 1)) === 0;

/** The second argument of `pool.call.x(arg, options)`; returns its signal or null. */
function checkCallOptions(callOptions, name) {
  try {
    return readCallOptions(callOptions, name);
  } catch (err) {
    err.code = "KNT_INVALID_OPTION";
    throw err;
  }
}

function readCallOptions(callOptions, name) {
  if (callOptions === null || typeof callOptions !== "object") {
    throw new TypeError(`knitting-native: pool.call.${name}(arg, options): options must be an object like { signal }`);
  }
  for (const key of Object.keys(callOptions)) {
    if (key !== "signal") throw new TypeError(`knitting-native: pool.call.${name}(arg, options): unknown option ${key}; allowed: signal`);
  }
  const { signal } = callOptions;
  if (signal === undefined) return null;
  if (signal === null || typeof signal !== "object" || typeof signal.aborted !== "boolean" || typeof signal.addEventListener !== "function") {
    throw new TypeError(`knitting-native: pool.call.${name}(arg, { signal }): signal must be an AbortSignal`);
  }
  return signal;
}

/** The public face of a pool. */
function publicPool(pool) {
  const api = {
    call: pool.call,
    ready: pool.readyPromise,
    shutdown: (delayMs) => pool.shutdown(delayMs),
    [Symbol.dispose]: () => {
      pool.shutdown();
    },
    [Symbol.asyncDispose]: () => pool.shutdown(),
  };
  serverApi(api, pool);
  Object.defineProperty(api, Symbol.for("knitting-native.pool"), { value: pool });
  return Object.freeze(api);
}

/** The module calling createPool, for messages; null when it cannot be told. */
function safeCallerHref() {
  try {
    return callerHref();
  } catch {
    return null;
  }
}

/**
 * createPool(options)(tasks): a pool of worker threads running `tasks`.
 * Returns `{ call, ready, shutdown, [Symbol.dispose], [Symbol.asyncDispose] }`.
 */
function createPool(options) {
  refusePoolInWorker(safeCallerHref());
  const resolved = resolveOptions(options, L.maxLanes, L.maxAbortSlots);
  return function withTasks(tasks) {
    const href = callerHref();
    const table = buildTaskTable(tasks, href);
    return publicPool(new Pool(resolved, table, href));
  };
}

/** task({ f }).createPool(options): `{ call(arg), shutdown, ... }` for one task. */
function createSingleTaskPool(options, task) {
  refusePoolInWorker(safeCallerHref());
  const resolved = resolveOptions(options, L.maxLanes, L.maxAbortSlots);
  const href = callerHref();
  const pool = new Pool(resolved, buildTaskTable({ task }, href), href);
  const full = publicPool(pool);
  const api = {
    call: (arg, callOptions) => pool.submit(0, arg, callOptions),
    ready: full.ready,
    shutdown: full.shutdown,
    [Symbol.dispose]: full[Symbol.dispose],
    [Symbol.asyncDispose]: full[Symbol.asyncDispose],
  };
  serverApi(api, pool);
  Object.defineProperty(api, Symbol.for("knitting-native.pool"), { value: pool });
  return Object.freeze(api);
}

module.exports = { createPool, createSingleTaskPool, WORKER_MARK };
