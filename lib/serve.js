"use strict";
// A pool worker's serve loop, the same for worker threads (worker.js) and
// worker processes (process-worker.js): import the task modules, then serve
// calls until the host ends the worker, from the worker's private lane
// (src/memory/lane.rs) or by claiming them from the pool's shared submit
// region (src/memory/steal.rs). Threads and processes differ only in how
// they sleep, wake a sleeper and report start-up.

const native = require("./native.js");
const { L, WorkerLane, lowestBit, W_COUNTER, W_ARMED } = require("./lane.js");
const { Claimant } = require("./steal.js");
const { Encoder } = require("./codec.js");
const { regionCorruptError } = require("./errors.js");
const { PayloadRegion, NO_ROOM } = require("./payload.js");
const { WaitingAnswers } = require("./room-wait.js");
const { registry } = require("./task.js");
const { STARTED, startedWord } = require("./slot-state.js");

const NO_EXT = L.noExt | 0;
const STATUS_VALUE = 0;
const STATUS_THROWN = 1;

// How long an idle worker polls REQ before parking (`sleep`).
// A wake through the kernel and the worker's event loop costs tens of µs
// here (../shared/design/transport-measurements.md); a caller that awaits
// each result sends its next call within a few µs, which a short spin
// catches. The spin runs in Rust (src/spin.rs) because it must yield the
// CPU between polls: on 2 vCPUs a JS busy-wait that shares a core with the
// host starves the very thread it waits for. Measured with 2 threads
// (200,000 tiny calls with 1,000 in flight; 20,000 sequential calls):
//   spin 20 µs:  1.5-2.0 M calls/s, sequential p50 4.9 µs
//   spin 50 µs:  2.3-3.0 M calls/s, sequential p50 1.2 µs
//   spin 200 µs: 2.2-2.9 M calls/s, sequential p50 1.2 µs (longer CPU burn when idle)
// The same loop with a pure JS spin of 2,000 polls gave 0.8-1.5 M calls/s and
// a p50 of 13-75 µs.
// worker.timers.spinMicroseconds overrides it per pool.
const DEFAULT_SPIN_MICROS = 50;

// Claims that found nothing claimable in a row before a stealing worker
// stops spinning: a PENDING bit can stay set for a moment after another
// worker won its slot (it clears the bit right after), or until the host
// reclaims the slots of a worker that died holding one.
const FUTILE_CLAIMS = 64;

/**
 * Starts serving. `setup`: the worker's start-up data (memory, lane, tasks,
 * and `steal` when the pool steals). `sleep(index, value, wake)`: call
 * `wake()` once word `index` of the control region no longer holds `value`
 * (it may call it early). `wakeWord(index)`: wakes whoever sleeps on word
 * `index`. `report(message)`: tells the host `{ type: "ready" }` or
 * `{ type: "init-error", error }`.
 */
function serveLane(setup, { sleep, wakeWord, report, shared }) {
  const { control, payload: payloadBuffer, lane: laneIndex, abortBase, tasks, bootstrap, maxPayloadBytes, steal } = setup;
  const SPIN_MICROS = setup.spinMicroseconds !== undefined ? setup.spinMicroseconds : DEFAULT_SPIN_MICROS;
  const i32 = new Int32Array(control);
  const u8 = new Uint8Array(control);
  const bell = new native.WorkerBell(u8);
  // Where this worker's calls come from: its private lane, or the pool's
  // shared submit region. Both answer through `port`: slotWord/slotPayload
  // address a slot, finish(slot) records its answer.
  const lane = steal ? null : new WorkerLane(i32, laneIndex, bell);
  const claimant = steal
    ? new Claimant(i32, steal.sectionByte, steal.workers, steal.regionLanes, steal.width, laneIndex, wakeWord)
    : null;
  const port = steal ? claimant : lane;
  const payload = new PayloadRegion(payloadBuffer, false, i32, wakeWord);
  // `shared`: how SharedArrayBuffers cross (shared-refs.js).
  const encoder = new Encoder({ maxPayloadBytes, shared });
  let table = null;
  let flushQueued = false;

  /** worker.bootstrap: imported, and its `name` export awaited, before any task module. */
  async function runBootstrap() {
    if (!bootstrap) return;
    const mod = await import(bootstrap.href);
    if (bootstrap.name === undefined) return;
    const fn = mod[bootstrap.name];
    if (typeof fn !== "function") {
      throw new TypeError(`knitting-native: worker.bootstrap: ${bootstrap.href} has no exported function "${bootstrap.name}"`);
    }
    // The context knitting gives its bootstrap; workers here always run on Node.
    await fn(bootstrap.data, Object.freeze({ thread: laneIndex, totalNumberOfThread: setup.totalNumberOfThread, runtime: "node" }));
  }

  async function loadTasks() {
    const modules = new Map();
    for (const entry of tasks) {
      if (!modules.has(entry.href)) modules.set(entry.href, await import(entry.href));
    }
    return tasks.map((entry) => {
      if (entry.kind === "task") {
        const found = registry.byId.get(entry.id);
        if (!found) {
          throw new Error(
            `knitting-native: task "${entry.name}" (declared as task() #${entry.at} of ${entry.href}) was not found ` +
              "when the worker imported that module; declare tasks at the module's top level, unconditionally",
          );
        }
        if (Function.prototype.toString.call(found.f) !== entry.source) {
          // Same position, other function: task() calls differ between host
          // and worker (one of them runs only on one side).
          throw new Error(
            `knitting-native: task "${entry.name}" is task() #${entry.at} of ${entry.href} in the host, but that ` +
              "position holds a different function in the worker; declare every task() at the module's top level, " +
              "unconditionally, so host and workers count them alike",
          );
        }
        return found.f;
      }
      if (entry.kind === "import") {
        const fn = modules.get(entry.href)[entry.exportName];
        if (typeof fn !== "function") {
          throw new TypeError(
            `knitting-native: importTask "${entry.name}": ${entry.href} has no exported function "${entry.exportName}"`,
          );
        }
        return fn;
      }
      const fn = modules.get(entry.href)[entry.name];
      if (typeof fn !== "function" || Function.prototype.toString.call(fn) !== entry.source) {
        throw new TypeError(
          `knitting-native: task "${entry.name}" is not the function that ${entry.href} exports as "${entry.name}"; ` +
            "export the function itself or declare it with task({ f })",
        );
      }
      return fn;
    });
  }

  const abortAware = tasks.map((entry) => entry.abortAware === true);
  const clock = () => performance.now();

  /** The `signal` an abort-aware task receives: reads its shared abort word. */
  function abortToolkit(index) {
    return {
      hasAborted: () => Atomics.load(i32, abortBase + index) !== 0,
      now: clock,
    };
  }

  /**
   * Encodes `value` into a slot (inline, or in the payload region): true;
   * or, when the region has no room now, a copy of the encoded bytes.
   */
  function encodeInto(slot, value) {
    const w = port.slotWord(slot);
    const at = port.slotPayload(slot);
    let len = encoder.encodeInto(value, u8, at, L.inlineBytes);
    let ext = NO_EXT;
    if (len < 0) {
      const bytes = encoder.encode(value);
      ext = payload.tryWrite(bytes);
      if (ext === NO_ROOM) return bytes.slice(); // encode()'s bytes live until the next encode
      len = bytes.length;
    }
    i32[w + 2] = len;
    i32[w + 3] = ext;
    return true;
  }

  /** Step 4: write a response into its slot (a value, or what was thrown). */
  function respond(slot, status, value) {
    i32[startedWord(port.slotWord(slot))] = STARTED.ANSWERED;
    let written;
    try {
      written = encodeInto(slot, value);
    } catch (err) {
      // The result cannot cross: the call rejects with why.
      status = STATUS_THROWN;
      try {
        written = encodeInto(slot, err);
      } catch {
        written = encodeInto(slot, unsentError(err));
      }
    }
    if (written !== true) {
      // No room now: the answer waits for some (room-wait.js), in order.
      waiting.defer(slot, status, written);
      return;
    }
    i32[port.slotWord(slot)] = status;
    port.finish(slot);
  }

  /** What a call rejects with when its result cannot be sent (small: it fits inline). */
  function unsentError(err) {
    const sent = new Error(`knitting-native: the task's result could not be sent: ${String(err && err.message).slice(0, 200)}`);
    sent.stack = "";
    return sent;
  }

  // Answers waiting for room in the payload region.
  const waiting = new WaitingAnswers(payload, {
    write(slot, status, len, ext) {
      const w = port.slotWord(slot);
      i32[w + 2] = len;
      i32[w + 3] = ext;
      i32[w] = status;
      port.finish(slot);
    },
    writeError(slot, err) {
      const written = encodeInto(slot, unsentError(err));
      if (written !== true) throw err; // inline always fits; a broken region is fatal here
      i32[port.slotWord(slot)] = STATUS_THROWN;
      port.finish(slot);
    },
    flush: () => flushPort(),
    sleep: (index, value, wake) => sleep(index, value, wake),
    // As parkClaims: pending work another idle worker should take is not this one's.
    hasWork: () => (steal ? claimant.anyPending() && !(asyncRunning !== 0 && claimant.othersIdle()) : lane.hasNew(Atomics.load(i32, lane.req))),
    resume: () => (steal ? serveClaims() : serve()),
  });

  /** An async answer was deferred: the worker must get back to its loop to wait for room. */
  function answerDeferred() {
    if (steal) {
      if (parked) claimant.wakeWorker(laneIndex); // its WAKE word: the park ends
    } else if (laneParked) {
      // A thread's Atomics.waitAsync ends on a notify; a process worker's
      // park only when REQ moves, so retry on a timer meanwhile.
      wakeWord(lane.req);
      waiting.retryWhile(() => laneParked);
    }
  }

  function flushSoon() {
    if (flushQueued) return;
    flushQueued = true;
    queueMicrotask(flushPort);
  }

  function flushPort() {
    flushQueued = false;
    if (steal) flushClaims();
    else lane.flush();
  }

  // Async calls this worker has started and not answered: while there are
  // any, an idle worker lets its event loop turn instead of spinning.
  let asyncRunning = 0;

  /** Step 3 for one slot: decode and run; async results answer later. */
  function run(slot) {
    const w = port.slotWord(slot);
    const task = i32[w];
    const len = i32[w + 2];
    const ext = i32[w + 3];
    let result;
    i32[startedWord(w)] = STARTED.RUNNING; // the host's hard timeout now counts this call as running
    try {
      let arg;
      if (ext === NO_EXT) {
        arg = payload.readSlot(u8, port.slotPayload(slot), len, NO_EXT, shared);
      } else {
        // Clear EXT before the block is freed: if this worker dies in between,
        // the host then leaks the block instead of freeing it twice.
        i32[w + 3] = NO_EXT;
        arg = payload.readSlot(u8, 0, len, ext, shared);
      }
      if (typeof table[task] !== "function") throw regionCorruptError(`a slot names task ${task}, which this pool does not have`);
      result = abortAware[task] ? table[task](arg, abortToolkit(i32[w + 4] - 1)) : table[task](arg);
    } catch (err) {
      respond(slot, STATUS_THROWN, err);
      return;
    }
    if (result !== null && typeof result === "object" && typeof result.then === "function") {
      // The thread is free again: a later call may hold it, not this one.
      i32[startedWord(w)] = STARTED.AWAITING;
      asyncRunning++;
      Promise.resolve(result).then(
        (value) => {
          asyncRunning--;
          respond(slot, STATUS_VALUE, value);
          flushSoon();
          if (waiting.size !== 0) answerDeferred();
          asyncDone();
        },
        (err) => {
          asyncRunning--;
          respond(slot, STATUS_THROWN, err);
          flushSoon();
          if (waiting.size !== 0) answerDeferred();
          asyncDone();
        },
      );
    } else {
      respond(slot, STATUS_VALUE, result);
    }
  }

  function serve() {
    if (steal) {
      serveClaims();
      return;
    }
    for (;;) {
      let fresh = lane.takeNew();
      if (fresh === 0) {
        // Spin briefly unless async tasks wait for this event loop to turn.
        if (lane.started !== 0) break;
        const req = Atomics.load(i32, lane.req);
        if (!lane.hasNew(req)) bell.spinWhile(lane.req, req, SPIN_MICROS);
        fresh = lane.takeNew();
        if (fresh === 0) break;
      }
      while (fresh !== 0) {
        const slot = lowestBit(fresh);
        fresh &= fresh - 1;
        run(slot);
      }
      // The calls just started freed their arguments' room.
      if (waiting.size !== 0) waiting.retry();
      lane.flush();
    }
    park();
  }

  // Whether this lane worker is parked on REQ.
  let laneParked = false;

  /** Sleep until the host publishes a request (it wakes us when SLEEPING). */
  function park() {
    if (waiting.size !== 0) {
      waiting.park(); // answers wait for room: park on ROOM_SEQ instead
      return;
    }
    Atomics.store(i32, lane.sleeping, 1);
    const req = Atomics.load(i32, lane.req);
    if (lane.hasNew(req)) {
      Atomics.store(i32, lane.sleeping, 0);
      setImmediate(serve);
      return;
    }
    laneParked = true;
    sleep(lane.req, req, wake);
  }

  function wake() {
    laneParked = false;
    // The host cleared SLEEPING when it notified; clear it for a timeout or a
    // spurious wake too.
    Atomics.store(i32, lane.sleeping, 0);
    serve();
  }

  // ---- Stealing (src/memory/steal.rs) ------------------------------------

  /** Publishes answers, then the doorbell (src/doorbell.rs). */
  function flushClaims() {
    if (!claimant.flush()) return;
    Atomics.add(i32, W_COUNTER, 1);
    if (Atomics.load(i32, W_ARMED) !== 0) bell.ring();
  }

  /** Claims and runs calls one at a time, so work nobody started stays shared. */
  // How many calls a stealing worker claims at once. Claiming only the call
  // it is about to run keeps everything else stealable; for short calls the
  // claim and the answer's publication cost as much as the call, so a worker
  // whose calls stay short claims more at a time (doubling up to
  // MAX_CLAIM_BATCH) and goes back to one as soon as a batch averages more
  // than SHORT_CALL_MS a call. Measured with 2 threads (tiny calls, 1,000 in
  // flight, bench/run.mjs --only knitting): one at a time 0.48-0.64 M
  // calls/s against 1.15 M for private lanes; adaptive batches: see the
  // README's performance table. A long call can then delay at most
  // MAX_CLAIM_BATCH - 1 short calls claimed with it.
  const MAX_CLAIM_BATCH = 8;
  const SHORT_CALL_MS = 0.005;
  const claimed = new Int32Array(MAX_CLAIM_BATCH);
  let claimBatch = 1;

  /** Claims and runs calls, so work nobody started stays shared. */
  function serveClaims() {
    parked = false;
    let futile = 0;
    for (;;) {
      // Waiting on async calls of its own, this worker leaves new work to an
      // idle one (steal.rs, IDLE); it claims again when it is idle itself or
      // every worker is busy.
      if (asyncRunning !== 0 && claimant.othersIdle()) break;
      const n = claimant.claim(claimBatch, claimed);
      if (n === 0) {
        // Answers go out before this worker waits for more work.
        flushClaims();
        if (asyncRunning !== 0) break;
        claimant.setIdle(true);
        if (++futile > FUTILE_CLAIMS) break;
        if (!claimant.anyPending()) {
          // One idle worker spins; the others park at once (steal.rs, Waiting).
          if (!claimant.trySpin()) break;
          if (!bell.spinWhileZero(claimant.pending, claimant.regionLanes, SPIN_MICROS)) break;
        }
        continue;
      }
      futile = 0;
      claimant.stopSpinning();
      claimant.setIdle(false);
      const running = asyncRunning;
      const started = performance.now();
      for (let i = 0; i < n; i++) run(claimed[i]);
      // The calls just started freed their arguments' room.
      if (waiting.size !== 0) waiting.retry();
      // The answers are published before the next calls start: those may be
      // long, and the host should not wait for these meanwhile.
      flushClaims();
      const perCall = (performance.now() - started) / n;
      claimBatch = perCall < SHORT_CALL_MS ? Math.min(MAX_CLAIM_BATCH, n === claimBatch ? claimBatch * 2 : claimBatch) : 1;
      if (asyncRunning > running) {
        // It went async: let this event loop turn before claiming more.
        claimBatch = 1;
        setImmediate(serveClaims);
        return;
      }
    }
    if (asyncRunning === 0) claimant.setIdle(true);
    parkClaims();
  }

  // Whether an Atomics.waitAsync of this worker is pending (one at a time).
  let parked = false;

  /** Sleep until the host publishes work (it bumps and notifies this worker's WAKE when SLEEPERS is set). */
  function parkClaims() {
    if (parked) return;
    claimant.stopSpinning();
    if (waiting.size !== 0) {
      waiting.park(); // answers wait for room: park on ROOM_SEQ instead
      return;
    }
    const wake = claimant.wakeWord(laneIndex);
    const seq = Atomics.load(i32, wake);
    Atomics.or(i32, claimant.sleepers, claimant.bit);
    // With async calls of its own and another worker idle, pending work is
    // that worker's: do not spin on it. The end of an async call (asyncDone)
    // serves again.
    if (claimant.anyPending() && !(asyncRunning !== 0 && claimant.othersIdle())) {
      Atomics.and(i32, claimant.sleepers, ~claimant.bit);
      setImmediate(serveClaims);
      return;
    }
    parked = true;
    sleep(wake, seq, wakeClaims);
  }

  function wakeClaims() {
    Atomics.and(i32, claimant.sleepers, ~claimant.bit);
    serveClaims();
  }

  /** An async call of this worker ended: with stealing, maybe claim again. */
  function asyncDone() {
    // Parked while it waited on its own async calls: wake itself, through its
    // own WAKE word, so the pending wait ends (steal.rs, Waiting).
    if (steal && asyncRunning === 0 && parked) claimant.wakeWorker(laneIndex);
  }

  runBootstrap().then(loadTasks).then(
    (loaded) => {
      table = loaded;
      report({ type: "ready" });
      serve();
    },
    (err) => {
      // Cloning drops `code` (KNT_POOL_IN_WORKER, say): sent beside it.
      report({ type: "init-error", error: err, code: err !== null && typeof err === "object" ? err.code : undefined });
    },
  );
}

module.exports = { serveLane };
