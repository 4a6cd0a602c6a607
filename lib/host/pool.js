"use strict";
// A pool's lifecycle: it creates the shared memory and the workers, starts
// a replacement when one dies, and shuts down. What happens to each call is
// elsewhere, one job per module:
// - host/calls.js: a call from submit to its one settlement (timeouts,
//   AbortSignal, hard timeouts);
// - host/slots.js: writing a request into a slot and settling from its
//   answer, placing queued calls, publishing a burst;
// - host/topology/steal.js / host/topology/lanes.js: the topology, which picks the slot and
//   speaks its protocol (lib/protocol/steal.js, lib/protocol/lane.js), behind one interface;
// - host/loop.js: when the host drains (polling, the Rust doorbell).
// docs/architecture.md follows one call through them.

const native = require("../native/index.js");
const { ThreadRuntime } = require("../spawn/thread.js");
const Slot = require("../protocol/slot.js");
const { checkTopology } = require("./topology/interface.js");
const { StealTopology } = require("./topology/steal.js");
const { LanesTopology } = require("./topology/lanes.js");
const { HostLoop } = require("./loop.js");
const { CallQueue } = require("./queue.js");
const { callMethods, OPEN, DRAINING, CLOSED } = require("./calls.js");
const { slotMethods } = require("./slots.js");
const { Encoder } = require("../codec/index.js");
const { SlotWriter } = require("../payload/slot-writer.js");
const { PayloadRegion } = require("../payload/region.js");
const { workerTable, unknownTaskTrap } = require("../tasks/task-table.js");
const { CODE, shutdownError, WorkerExitError, codedError } = require("../errors.js");
const { makeDebug } = require("./debug.js");
const hard = require("./hard-timeout.js");
const { poolView } = require("./view.js");
const { WORKER_MARK } = require("../tasks/worker-context.js");
const { Liveness, detach } = require("./liveness.js");
const { StartupWatch } = require("./startup.js");
const { HostSharedRefs, ProcessRefs } = require("../payload/shared-refs.js");
const { BytesStore } = require("../payload/shared-bytes.js");
const SB = require("../protocol/shared-bytes.js");
const { QueueLimit } = require("../server/queue-limit.js");
const { PoolStats } = require("../server/stats.js");
const { Recycler } = require("../server/recycle.js");
const { MSG } = require("../protocol/messages.js");
const { Elastic } = require("../server/elastic.js");
const { PoolEvents, exitReason } = require("../server/events.js");
const { Broadcasts } = require("./broadcast.js");
const { HostStreams } = require("./streams.js");

// How long close() lets a starting worker thread finish loading before it
// terminates it anyway (see close()).
const START_GRACE_MS = 2000;

let nextPoolId = 1;

class Pool {
  constructor(options, table, poolHref) {
    this.options = options;
    this.table = table;
    this.id = nextPoolId++;
    this.debug = makeDebug(options.debug, this.id);
    this.state = OPEN;
    this.failure = null; // set when workers cannot start: every call rejects with it
    this.nextCallId = 1;
    this.queue = new CallQueue(); // calls waiting for a free slot
    this.inFlight = 0; // calls placed in slots (answered or not); written in host/slots.js only
    this.pending = 0; // calls submitted and not yet settled
    this.awaitingArg = new Set(); // calls whose argument promise has not settled yet
    // Resolves just after shutdown() does: the calls shutdown rejects reject
    // then, so `await pool.shutdown(); p.catch(...)` leaves no unhandled rejection.
    this.shutdownGate = null;
    // SharedArrayBuffers in arguments and results: by reference to threads, refused to processes.
    this.sharedRefs = options.worker.runtime === "process" ? null : new HostSharedRefs(options.threads);
    this.encoder = new Encoder({
      maxPayloadBytes: options.maxPayloadBytes,
      shared: this.sharedRefs || new ProcessRefs(),
    });
    this.hardTimeoutMs = options.worker.hardTimeoutMs; // read on every placement
    this.abandonGraceMs = options.worker.abandonGraceMs; // a number, or false
    // What a server watches and limits: events, counts and times, the queue limit.
    this.events = new PoolEvents();
    this.stats = new PoolStats(options.threads, options.stats);
    this.timing = options.stats; // read on every settled call
    this.queueLimit =
      options.maxQueue === null ? null : new QueueLimit(options.maxQueue, (name) => this.events.emit(name));
    this.makeRoomBound = () => {
      this.pump();
      return this.queue.size;
    };

    const threads = options.threads;
    // Each collaborator gets a view of the pool with only what it declares it reads (host/view.js).
    const views = (Module) => poolView(this, Module.POOL_USES);
    this.hardTimeoutView = views(hard); // what host/calls.js hands hard-timeout.js's judge
    // The topology: how calls reach the workers (host/topology/steal.js: one shared
    // submit region; host/topology/lanes.js: a private lane per worker).
    const Topology = options.topology.steal ? StealTopology : LanesTopology;
    // transfer(): an argument's buffer moves only to a worker known when it is
    // encoded, a private lane's (payload/shared-refs.js); with stealing it is copied.
    if (this.sharedRefs !== null) this.sharedRefs.moveArguments = !options.topology.steal;
    const shape = Topology.controlShape(options);
    // Threads or processes: where the memory comes from, how workers start
    // and how a parked one is woken (spawn/thread.js, spawn/process.js).
    this.runtime =
      options.worker.runtime === "process"
        ? // Loaded when used: child_process and the IPC codec cost a thread pool's start-up ~10 ms.
          new (require("../spawn/process.js").ProcessRuntime)(options.worker)
        : new ThreadRuntime(options.worker);
    const memory = this.runtime.createMemory(
      native.controlBytes(shape.lanes, shape.signals, ...shape.steal),
      options.payloadInitialBytes,
      options.payloadMaxByteLength,
    );
    this.controlSab = memory.control;
    this.i32 = new Int32Array(this.controlSab);
    this.u8 = new Uint8Array(this.controlSab);
    native.formatControlRegion(this.u8, shape.lanes, shape.signals, ...shape.steal);
    this.abortBase = native.abortOffset(shape.lanes) / 4;
    this.freeSignals = [];
    for (let i = shape.signals - 1; i >= 0; i--) this.freeSignals.push(i);
    this.payloadSab = memory.payload;
    this.payload = new PayloadRegion(this.payloadSab, true, this.i32, (index, count) =>
      this.runtime.wakeWorker(this.i32, index, count),
    );
    this.slotWriter = new SlotWriter(this.encoder, this.payload, this.u8); // requests into slots
    // pool.sharedBytes(n), and the shared bytes calls hand over (payload/shared-bytes.js).
    this.bytes = new BytesStore(this.payload, SB.HOST, options.borrowMs);
    // Streaming calls' channels, in the payload region (host/streams.js, protocol/stream.js).
    this.streams = new HostStreams(views(HostStreams), (index) => this.runtime.wakePayloadWord(index));
    this.killedFor = new Array(threads).fill(null); // why the host terminated a worker, if it did
    // How the host wakes a worker parked on a word: the runtime's way.
    this.topology = checkTopology(new Topology(views, shape, (index) => this.runtime.wakeWorker(this.i32, index)));
    this.workers = new Array(threads).fill(null);
    // worker.maxCallsBeforeRecycle / maxMemoryBeforeRecycle (server/recycle.js); an
    // elastic pool's idle workers leave the same way (server/elastic.js).
    this.recycle = options.worker.recycle === null && options.elastic === null ? null : new Recycler(views(Recycler));
    this.elastic = options.elastic === null ? null : new Elastic(views(Elastic), options.elastic);
    this.ready = new Array(threads).fill(false);
    this.everReady = new Array(threads).fill(false);
    this.started = new Array(threads).fill(null);
    this.liveness = new Liveness();
    this.startup = new StartupWatch(views(StartupWatch), threads);
    this.workerTasks = workerTable(table);
    this.broadcasts = new Broadcasts(views(Broadcasts)); // pool.broadcast, and the setups kept for joining workers
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

    this.flushQueued = false;
    this.flushBound = () => this.flush();
    this.queuePeak = 0; // longest queue seen, for the host traces
    this.roomTraced = false; // the host traces said calls wait for payload room
    // When answers are drained: polling, then the doorbell (host/loop.js).
    this.loop = new HostLoop(views(HostLoop), options.host, threads, this.debug);
    if (this.debug) {
      const tasks = table.map((e) => e.name).join(", ");
      this.debug("lifecycle", `created: ${threads} workers, tasks ${tasks}; ${this.topology.describe()}`);
      this.debug("host", this.topology.dispatcherLine());
    }
    try {
      if (this.elastic !== null) this.elastic.start();
      else for (let i = 0; i < threads; i++) this.spawn(i);
    } catch (err) {
      // Nothing may outlive a pool that failed to start: no waiter thread,
      // no worker, no held region.
      this.state = CLOSED;
      this.liveness.done();
      this.loop.close();
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
    // pool.stream.<name>(arg, options): a streaming call's async iterator (host/streams.js).
    this.stream = Object.create(
      unknownTaskTrap(
        table.map((entry) => entry.name),
        "stream",
      ),
    );
    table.forEach((entry, index) => {
      this.stream[entry.name] = (arg, callOptions) => this.submitStream(index, arg, callOptions);
    });
    Object.freeze(this.stream);
    this.broadcast = this.broadcasts.api(
      table,
      unknownTaskTrap(
        table.map((entry) => entry.name),
        "broadcast",
      ),
    );
    this.shutdownPromise = null;
    this.drainedResolve = null;
  }

  /** Whether the pool has closed (host/loop.js stops draining). */
  isClosed() {
    return this.state === CLOSED;
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
      steal: this.topology.workerSetup(),
      sharedPort: this.sharedRefs === null ? undefined : this.sharedRefs.attach(lane),
      totalNumberOfThread: this.workers.length,
      spinMicroseconds: this.options.worker.timers.spinMicroseconds,
      parkMs: this.options.worker.timers.parkMs,
      stats: this.options.stats,
      recycle: this.options.worker.recycle,
      kept: this.broadcasts.keptSetups(), // run before "ready" (host/broadcast.js)
    });
    this.workers[lane] = worker;
    this.broadcasts.spawned(lane, worker);
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
      if (msg && msg.type === MSG.READY) {
        markStarted();
        this.ready[lane] = true;
        this.everReady[lane] = true;
        this.startup.ready(lane);
        if (this.debug) this.debug("lifecycle", `worker ${lane} (${label}) ready`);
        if (this.ready.every((r, i) => r || (this.elastic !== null && this.elastic.isAbsent(i)))) this.readyResolve();
        this.updateStarting();
      } else if (msg && msg.type === MSG.INIT_ERROR) {
        markStarted();
        if (this.debug) this.debug("imports", `worker ${lane} failed to start: ${msg.error && msg.error.message}`);
        // Cloning drops an error's `code`; the worker sends it beside.
        if (
          msg.code !== undefined &&
          msg.error !== null &&
          typeof msg.error === "object" &&
          msg.error.code === undefined
        )
          msg.error.code = msg.code;
        this.fail(msg.error);
      } else if (msg && msg.type === MSG.RECYCLE && this.recycle !== null) {
        this.recycle.request(lane, worker, msg.reason);
      } else if (msg && msg.type === MSG.LEFT && this.recycle !== null) {
        this.recycle.left(lane, worker, msg.reason);
      } else if (msg && msg.type === MSG.BROADCAST_DONE) {
        this.broadcasts.answered(worker, msg);
      }
    });
    worker.on("error", (err) => {
      reported = err;
      if (this.debug) this.debug("lifecycle", `worker ${lane} error: ${err && err.message}`);
    });
    worker.on("exit", (code, signal) => {
      markStarted();
      // A worker replaced for worker.maxCallsBeforeRecycle/maxMemoryBeforeRecycle (server/recycle.js).
      const recycled = this.recycle === null ? null : this.recycle.exited(lane, worker, code);
      // An elastic pool's worker told to leave: not replaced, whatever ended it (server/elastic.js).
      const left = this.elastic !== null && this.workers[lane] === worker && this.elastic.exited(lane);
      const reason = exitReason(recycled, this.killedFor[lane], this.isClosed(), this.everReady[lane]);
      this.events.workerExited(lane, worker, code, signal, reason, recycled, reported);
      if (this.debug) {
        const how = signal ? `signal ${signal}` : `code ${code}`;
        const why = recycled !== null ? ` (${recycled === "idle" ? "idle" : `recycled: ${recycled} limit`})` : "";
        this.debug("lifecycle", `worker ${lane} (${label}) exited with ${how}${why}`);
      }
      // Its broadcasts: a recycled worker's go to its replacement, an idle leaver's are dropped.
      const proc = worker.pid !== undefined ? { pid: worker.pid, signal } : undefined;
      this.broadcasts.exited(
        lane,
        worker,
        recycled === null ? "died" : left || recycled === "idle" ? "left" : "recycled",
        new WorkerExitError(lane, threadId, code, this.killedFor[lane] || reported || undefined, proc),
      );
      if (this.workers[lane] !== worker) return;
      this.workers[lane] = null;
      // What it held of shared bytes (made there, taken, or on their way back) goes back to the region.
      this.bytes.reclaimLane(lane, this.debug);
      const wasReady = this.ready[lane];
      this.ready[lane] = false;
      if (this.state === CLOSED) return;
      const how = signal ? `signal ${signal}` : `code ${code}`;
      // Not when the host ended it (a hard timeout) or it left to be
      // recycled: a worker can run calls before its "ready" reaches the host
      // (Deno delivers a worker's messages when its event loop turns, which
      // a runaway task never lets; a Deno host met a recycled worker
      // process's exit before its "ready").
      if (!this.everReady[lane] && this.killedFor[lane] === null && recycled === null && this.failure === null) {
        // The lane's first worker died while importing the task modules: a
        // restart would too.
        this.fail(
          reported ||
            codedError(
              Error,
              CODE.WORKER_EXIT,
              `knitting-native: worker ${lane} (${label}) exited with ${how} while starting`,
            ),
        );
        return;
      }
      const killed = this.killedFor[lane] !== null || recycled !== null;
      const cause = this.killedFor[lane] || reported || undefined;
      // Terminated by the host: what it held but never started runs on the
      // replacement (host/hard-timeout.js).
      const again = killed ? hard.recoverUnstarted(this.hardTimeoutView, lane) : [];
      this.killedFor[lane] = null;
      this.topology.workersChanged();
      const own =
        reported ||
        codedError(Error, CODE.WORKER_EXIT, `knitting-native: worker ${lane} (${label}) exited with ${how}`);
      const held = this.takeBack(lane).filter((call) => !again.includes(call));
      this.queue.putBack(again);
      // A worker that died running a call was killed by that task, not by
      // its start-up (the call's STARTED word, still as it left it).
      const ranCall = held.some(
        (call) => Slot.startedOf(this.i32, call.lane.slotWord(call.slot)) !== Slot.STARTED.NOT_STARTED,
      );
      // Its own death, soon after starting, may be a crash loop: host/startup.js
      // starts the replacement, backing off, or fails the pool. Decided
      // before the calls it held settle: when the pool fails, they reject
      // with that error too.
      let failedNow = false;
      if (!left && this.failure === null && !killed && !ranCall) {
        this.startup.died(lane, wasReady, own);
        failedNow = this.failure !== null;
      }
      // Calls a replacement held before it was ready never ran: when it
      // reported why it could not start, they reject with the start-up error
      // (the pool's first), not a WorkerExitError. One ended from outside
      // while starting reported nothing: its calls get its WorkerExitError.
      const startError = failedNow
        ? this.failure
        : !wasReady && !killed && reported !== null
          ? this.startup.firstError(own)
          : null;
      for (const call of held) {
        this.releaseSignal(call);
        this.finish(call, false, startError || new WorkerExitError(lane, threadId, code, cause, proc));
      }
      if (this.debug) this.debug("host", `worker ${lane} died holding ${held.length} calls`);
      if (left) {
        // The lane stays empty; calls it gave back may start a worker again.
        if (again.length > 0) this.elastic.grow();
      } else if (this.failure === null && (killed || ranCall)) {
        this.spawn(lane);
      }
      this.pump();
      // The drain loop stops when nothing is in a slot: calls placed just
      // now (they waited while every lane was being replaced) need it again.
      if (this.inFlight !== 0) this.loop.kick();
      this.updateStarting();
    });
    // After the listeners (a "message" listener refs a worker's port again):
    // host/liveness.js holds the event loop while the pool has work.
    detach(worker);
    this.updateStarting();
  }

  /** pool.sharedBytes(n) (payload/shared-bytes.js); pool.readBody(request, { maxBytes }) (host/body.js). */
  sharedBytes(n) {
    if (this.state === CLOSED) throw shutdownError();
    return this.bytes.alloc(n);
  }
  readBody(request, options) {
    return require("./body.js").readBody((n) => this.sharedBytes(n), request, options);
  }

  /** Whether a worker is still starting: the process stays alive for it (host/liveness.js). */
  updateStarting() {
    this.liveness.setStarting(
      this.state === OPEN && this.failure === null && this.workers.some((w, i) => w !== null && !this.ready[i]),
    );
  }

  /**
   * Worker `lane` is gone: delivers the answers it published (they are real
   * results) and returns the calls it held unanswered, whose slots are free
   * again. A slot it held may own a payload block: an unread request's, or
   * a response it wrote but never published (the worker clears EXT before
   * it frees a request's block, so a block is never freed twice).
   */
  takeBack(lane) {
    return this.topology.takeBack(lane);
  }

  /** Workers cannot run the tasks: reject everything with `err`, now and later. */
  fail(err) {
    if (this.failure !== null) return;
    this.failure = err instanceof Error ? err : new Error(String(err));
    this.readyReject(this.failure);
    this.rejectAll(this.failure);
    this.updateStarting();
  }

  /** `late`: shutdown's rejections, which wait for `shutdownGate`. */
  rejectAll(err, late = false) {
    this.abandonAwaitingArg(err, late);
    this.broadcasts.rejectAll(err, late);
    for (const call of this.queue.takeAll()) this.finish(call, false, err, late);
    for (const call of this.topology.placedCalls()) this.finish(call, false, err, late);
  }

  shutdown(delayMs) {
    if (this.shutdownPromise !== null) return this.shutdownPromise;
    if (delayMs !== undefined && (typeof delayMs !== "number" || !(delayMs >= 0) || !Number.isFinite(delayMs))) {
      // Not a shutdown: a bad argument must not stop the pool.
      return Promise.reject(
        codedError(
          RangeError,
          CODE.INVALID_ARGUMENT,
          `knitting-native: shutdown(delayMs): delayMs must be a non-negative number of milliseconds, got ` +
            `${String(delayMs)}`,
        ),
      );
    }
    let openGate;
    this.shutdownGate = new Promise((resolve) => (openGate = resolve));
    // New calls reject from here on, so a call whose argument arrives later
    // would too: it is settled now (its promise rejects once shutdown has
    // resolved), even while submitted calls may finish.
    this.abandonAwaitingArg(shutdownError(), true);
    const wait = this.options.worker.resolveAfterFinishingAll || delayMs !== undefined;
    if (this.debug) {
      this.debug("lifecycle", `shutdown${wait ? " (letting calls finish)" : ""}: ${this.pending} calls pending`);
    }
    if (!wait || (this.pending === 0 && this.broadcasts.idle())) {
      this.shutdownPromise = this.close();
      // Registered before the caller's own reaction, so the gate opens first
      // and the rejections follow the caller's `await` in the same turn.
      this.shutdownPromise.then(openGate, openGate);
      return this.shutdownPromise;
    }
    this.state = DRAINING;
    // Streams would wait for callers that may never read them: they end now, with the shutdown error.
    this.streams.stopAll();
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
    this.shutdownPromise.then(openGate, openGate);
    return this.shutdownPromise;
  }

  /** Rejects whatever is still pending and stops every thread. */
  close() {
    this.state = CLOSED;
    this.liveness.setClosing(true); // until every worker has exited
    this.startup.close();
    this.rejectAll(shutdownError(), true);
    this.readyReject(shutdownError());
    this.loop.close();
    if (this.elastic !== null) this.elastic.close();
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
      this.bytes.close();
      this.liveness.done();
    });
  }
}

// What happens to each call: see the header.
Object.assign(Pool.prototype, callMethods, slotMethods);

module.exports = { Pool };
