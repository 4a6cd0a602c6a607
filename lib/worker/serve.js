"use strict";
// A pool worker's serve loop, the same for worker threads (worker/thread-main.js) and
// worker processes (worker/process-main.js): import the task modules, then serve
// calls until the host ends the worker, from the worker's private lane
// (lib/protocol/lane.js) or by claiming them from the pool's shared submit region
// (lib/protocol/steal.js). The loop itself is the topology's (worker/ports.js);
// this module runs the calls it hands over. Threads and
// processes differ only in how they sleep, wake a sleeper and report
// start-up.

const native = require("../native/index.js");
// The runtime this worker runs on ("node", "bun", "deno"), for the bootstrap context.
const runtimeName = require("../runtimes/index.js").host.name;
const { L } = require("../protocol/layout.js");
const Slot = require("../protocol/slot.js");
const { openLane, openSteal } = require("./ports.js");
const { Encoder } = require("../codec/index.js");
const { CODE, regionCorruptError, codedError, placeValueError } = require("../errors.js");
const { PayloadRegion } = require("../payload/region.js");
const { SlotWriter } = require("../payload/slot-writer.js");
const { WaitingAnswers } = require("./room-wait.js");
const { announce } = require("../protocol/doorbell.js");
const { registry } = require("../tasks/task.js");
const { WorkerRecycle } = require("./recycle.js");
const { invoke } = require("./invoke.js");
const { MSG } = require("../protocol/messages.js");
const { makeBroadcaster } = require("./broadcast.js");
const { MODES } = require("../protocol/stream.js");
const { streamRunner } = require("./stream-task.js");
const { BytesStore, BytesDescriptor, SharedBytes, setTaskStore } = require("../payload/shared-bytes.js");
const SB = require("../protocol/shared-bytes.js");

const { NO_EXT, STATUS_VALUE, STATUS_THROWN, STARTED } = Slot;

// How long an idle worker polls for work before parking (`sleep`). A wake
// through the kernel and the worker's event loop costs tens of µs; a caller
// that awaits each result sends its next call within a few µs, which a
// short spin catches. The spin runs in Rust (src/spin.rs) because it must
// yield the CPU between polls: on 2 vCPUs a JS busy-wait that shares a core
// with the host starves the very thread it waits for. 20 µs missed many
// follow-up calls, 200 µs caught no more than 50 and burns longer when idle:
// docs/measurements.md, "Worker idle spin".
// worker.timers.spinMicroseconds overrides it per pool.
const DEFAULT_SPIN_MICROS = 50;

// The longest a starting worker waits for a kept broadcast's message it knows
// is on its way (KEPT_SEQ): messages take microseconds to milliseconds.
const KEPT_WAIT_MS = 10_000;

/** `signal.progress` of a call whose caller did not ask for progress. */
const noProgress = () => {};

/** How a task runs where the runtime has no guard of its own (worker processes). */
function runPlain(fn, _name, arg, toolkit) {
  return invoke(fn, arg, toolkit);
}

/**
 * Starts serving. `setup`: the worker's start-up data (memory, lane, tasks,
 * and `steal` when the pool steals). `sleep(index, value, wake)`: call
 * `wake()` once word `index` of the control region no longer holds `value`
 * (it may call it early). `wakeWord(index)`: wakes whoever sleeps on word
 * `index`. `report(message)`: tells the host `{ type: MSG.READY }` or
 * `{ type: MSG.INIT_ERROR, error, code }` (protocol/messages.js). `end(reason)`: this worker left the
 * claimants (work stealing) or its lane (the host's "end" message) for
 * `reason` ("calls", "memory", "idle") and is to end: it exits, or asks the
 * host to end it (then it returns, and the loop takes no step again).
 * `waitPayloadWord(index, value)`: a promise that resolves once word
 * `index` of the payload region no longer holds `value` (streaming calls).
 */
function serveLane(setup, { sleep, wakeWord, waitPayloadWord, report, shared, runTask = runPlain, end }) {
  const {
    control,
    payload: payloadBuffer,
    lane: laneIndex,
    abortBase,
    tasks,
    bootstrap,
    maxPayloadBytes,
    steal,
  } = setup;
  const SPIN_MICROS = setup.spinMicroseconds !== undefined ? setup.spinMicroseconds : DEFAULT_SPIN_MICROS;
  const i32 = new Int32Array(control);
  const u8 = new Uint8Array(control);
  const bell = new native.WorkerBell(u8);
  // Where this worker's calls come from: its private lane (openLane),
  // or the pool's shared submit region (openSteal), both in worker/ports.js. Both answer
  // through `port`: slotWord/slotPayload address a slot, finish(slot)
  // records its answer, and its loop decides when to run, spin, park and
  // wake; `env` is how that loop acts here.
  const env = {
    run,
    spin: (word, value) => mode.spin(word, value),
    // With answers waiting for room, the park is on ROOM_SEQ instead (worker/room-wait.js).
    sleep: (word, value) => (waiting.size !== 0 ? waiting.park() : sleepFor(word, value)),
    later: () => setImmediate(() => port.serve()),
    ring: () => bell.ring(),
  };
  const mode = steal
    ? openSteal(i32, steal, laneIndex, wakeWord, env, bell, SPIN_MICROS)
    : openLane(i32, laneIndex, wakeWord, env, bell, SPIN_MICROS);
  const port = mode.port;
  const payload = new PayloadRegion(payloadBuffer, false, i32, wakeWord);
  // `shared`: how SharedArrayBuffers cross (payload/shared-refs.js).
  const encoder = new Encoder({ maxPayloadBytes, shared });
  // Worker threads that move large results as copies (payload/shared-refs.js); null or absent elsewhere.
  const largeResult = shared.largeResult;
  const writer = new SlotWriter(encoder, payload, u8); // answers into slots
  // Shared bytes: what sharedBytes(n) makes in a task, and the arguments calls hand over (payload/shared-bytes.js).
  const bytes = new BytesStore(payload, SB.worker(laneIndex));
  setTaskStore(bytes);
  const heldArgs = new Map(); // slot -> the SharedBytes argument of its call, until the call ends
  // Streaming calls and calls that report progress (worker/stream-task.js).
  const streams = streamRunner({
    payload,
    buffer: payloadBuffer,
    encoder,
    shared,
    announce: () => announce(i32, env),
    waitWord: waitPayloadWord,
  });
  let table = null;
  // `stats: true`: each call's run time goes back in its slot (server/stats.js).
  const timing = setup.stats === true;
  const startedAt = timing ? new Float64Array(steal ? steal.regionLanes * steal.width : L.slotCount) : null;
  // worker.maxCallsBeforeRecycle / maxMemoryBeforeRecycle (server/recycle.js).
  const recycle = setup.recycle ? new WorkerRecycle(setup.recycle) : null;
  let recycleAsked = false;
  // An elastic pool's host told this idle worker to leave (server/elastic.js): it
  // goes once it holds no call, by the same rule as a recycle.
  let leaveDue = false;

  /** worker.bootstrap: imported, and its `name` export awaited, before any task module. */
  async function runBootstrap() {
    if (!bootstrap) return;
    const mod = await import(bootstrap.href);
    if (bootstrap.name === undefined) return;
    const fn = mod[bootstrap.name];
    if (typeof fn !== "function") {
      throw codedError(
        TypeError,
        CODE.INVALID_OPTION,
        `knitting-native: worker.bootstrap: ${bootstrap.href} has no exported function "${bootstrap.name}"`,
      );
    }
    // The context knitting gives its bootstrap.
    await fn(
      bootstrap.data,
      Object.freeze({ thread: laneIndex, totalNumberOfThread: setup.totalNumberOfThread, runtime: runtimeName }),
    );
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
          throw codedError(
            Error,
            CODE.TASK_NOT_FOUND,
            `knitting-native: task "${entry.name}" (declared as task() #${entry.at} of ${entry.href}) was not found ` +
              "when the worker imported that module; declare tasks at the module's top level, unconditionally",
          );
        }
        // source null: host and worker runtimes print functions differently (runtimes/).
        if (entry.source !== null && Function.prototype.toString.call(found.f) !== entry.source) {
          // Same position, other function: task() calls differ between host
          // and worker (one of them runs only on one side).
          throw codedError(
            Error,
            CODE.TASK_MISMATCH,
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
          throw codedError(
            TypeError,
            CODE.TASK_NOT_FOUND,
            `knitting-native: importTask "${entry.name}": ${entry.href} has no exported function "${entry.exportName}"`,
          );
        }
        return fn;
      }
      const fn = modules.get(entry.href)[entry.name];
      if (
        typeof fn !== "function" ||
        (entry.source !== null && Function.prototype.toString.call(fn) !== entry.source)
      ) {
        throw codedError(
          TypeError,
          CODE.TASK_MISMATCH,
          `knitting-native: task "${entry.name}" is not the function that ${entry.href} exports as "${entry.name}"; ` +
            "export the function itself or declare it with task({ f })",
        );
      }
      return fn;
    });
  }

  const abortAware = tasks.map((entry) => entry.abortAware === true);
  const names = tasks.map((entry) => entry.name);
  const clock = () => performance.now();

  /**
   * The `signal` an abort-aware task receives: reads its shared abort word.
   * `progress(value)` goes nowhere unless the caller asked for it
   * (`{ onProgress }`: worker/stream-task.js gives a working one).
   */
  function abortToolkit(index) {
    return {
      hasAborted: () => Atomics.load(i32, abortBase + index) !== 0,
      now: clock,
      progress: noProgress,
    };
  }

  /**
   * Encodes `value` into a slot (inline, or in the payload region): true;
   * or, when the region has no room now, a copy of the encoded bytes.
   */
  function encodeInto(slot, value) {
    const len = writer.write(value, port.slotPayload(slot));
    if (len < 0) return payload.unplaced.slice(); // encode()'s bytes live until the next encode
    const ext = writer.ext;
    if (ext === NO_EXT) payload.dropHeld();
    Slot.writeBody(i32, port.slotWord(slot), len, ext);
    return true;
  }

  /** Step 4: write a response into its slot (a value, or what was thrown by task number `task`). */
  function respond(slot, status, value, task) {
    Slot.setStarted(i32, port.slotWord(slot), STARTED.ANSWERED);
    if (timing) Slot.writeRunMicros(i32, port.slotWord(slot), (performance.now() - startedAt[slot]) * 1000);
    // A worker thread's large binary result moves to the host as a copy (payload/shared-refs.js largeResult).
    if (largeResult && status === STATUS_VALUE) value = largeResult(value, maxPayloadBytes);
    let written;
    try {
      const handsBytes = value instanceof SharedBytes;
      if (handsBytes) bytes.check(value);
      written = encodeInto(slot, value);
      // Before the answer is published: the host takes what it names.
      if (handsBytes && written === true) bytes.send(value, SB.from(laneIndex));
    } catch (err) {
      // The result cannot cross: the call rejects with why, naming the task and where in the value.
      placeValueError(err, names[task] ?? `#${task}`, status === STATUS_VALUE ? "result" : "error");
      status = STATUS_THROWN;
      try {
        written = encodeInto(slot, err);
      } catch {
        written = encodeInto(slot, unsentError(err));
      }
    }
    // The call's SharedBytes argument ends with it, unless the task returned it.
    const held = heldArgs.size === 0 ? undefined : heldArgs.get(slot);
    if (held !== undefined) {
      heldArgs.delete(slot);
      bytes.endArgument(held);
    }
    if (written !== true) {
      // No room now: the answer waits for some (worker/room-wait.js), in order.
      waiting.defer(slot, status, written);
      return;
    }
    Slot.writeStatus(i32, port.slotWord(slot), status);
    port.finish(slot);
  }

  /** What a call rejects with when its result cannot be sent (small: it fits inline). */
  function unsentError(err) {
    const sent = new Error(
      `knitting-native: the task's result could not be sent: ${String(err && err.message).slice(0, 200)}`,
    );
    sent.stack = "";
    // Its code, if it has one (KNT_REGION_CORRUPT, say).
    if (err !== null && typeof err === "object" && typeof err.code === "string") sent.code = err.code;
    return sent;
  }

  // Whether this worker sleeps in its protocol's park (not for room).
  let parkedForWork = false;
  function sleepFor(word, value) {
    parkedForWork = true;
    sleep(word, value, () => {
      parkedForWork = false;
      port.woke();
    });
  }

  // Answers waiting for room in the payload region.
  const waiting = new WaitingAnswers(payload, {
    write(slot, status, len, ext) {
      const w = port.slotWord(slot);
      Slot.writeBody(i32, w, len, ext);
      Slot.writeStatus(i32, w, status);
      port.finish(slot);
    },
    writeError(slot, err) {
      const written = encodeInto(slot, unsentError(err));
      if (written !== true) throw err; // inline always fits; a broken region is fatal here
      Slot.writeStatus(i32, port.slotWord(slot), STATUS_THROWN);
      port.finish(slot);
    },
    flush: () => port.flush(),
    ring: () => announce(i32, env),
    sleep: (index, value, wake) => sleep(index, value, wake),
    hasWork: () => mode.hasWork(),
    // The protocol's park is what ends here: its wake-up clears what it set.
    resume: () => {
      port.woke();
      // Told to leave, or at a recycle limit, while answers waited for room: they are out now.
      if ((leaveDue || (recycle !== null && recycle.due !== null)) && waiting.size === 0) callEnded();
    },
  });

  /** An async answer was deferred while parked for work: get back to the loop to wait for room. */
  function answerDeferred() {
    if (parkedForWork) mode.interruptPark();
  }

  /**
   * Step 3 for one slot: decode and run. A sync result is answered at once;
   * returns true when the task went async (its answer comes later).
   */
  function run(slot) {
    const w = port.slotWord(slot);
    const task = Slot.taskOf(i32, w);
    const mode = Slot.modeOf(i32, w);
    const len = Slot.lenOf(i32, w);
    const ext = Slot.extOf(i32, w);
    let result;
    Slot.setStarted(i32, w, STARTED.RUNNING); // the host's hard timeout now counts this call as running
    if (timing) startedAt[slot] = performance.now();
    try {
      let arg;
      if (ext === NO_EXT) {
        arg = payload.readSlot(u8, port.slotPayload(slot), len, NO_EXT, shared);
      } else if ((ext & 1) !== 0) {
        // A carved argument: kept for the answer (payload/region.js, readHeld).
        arg = payload.readHeld(len, ext, shared, () => Slot.clearExt(i32, w));
      } else {
        // Clear EXT before the block is freed: if this worker dies in between,
        // the host then leaks the block instead of freeing it twice.
        Slot.clearExt(i32, w);
        arg = payload.readSlot(u8, 0, len, ext, shared);
      }
      if (arg instanceof BytesDescriptor) {
        // A SharedBytes: this worker's until the call ends (or it is returned).
        arg = bytes.take(arg, SB.TO_WORKER);
        heldArgs.set(slot, arg);
      }
      if (typeof table[task] !== "function")
        throw regionCorruptError(`a slot names task ${task}, which this pool does not have`);
      const toolkit = abortAware[task] ? abortToolkit(Slot.signalOf(i32, w)) : undefined;
      // `runTask`: the runtime's way to run a task (worker/exit-guard.js in worker
      // threads), which calls it through worker/invoke.js, where V8 never inlines it.
      if (mode === MODES.CALL) result = runTask(table[task], names[task], arg, toolkit);
      else if (mode === MODES.STREAM || mode === MODES.PROGRESS) {
        // A streaming call, or one that reports progress: async, its values through its channel.
        result = runTask((a) => streams.run(mode, table[task], names[task], a, toolkit), names[task], arg, undefined);
      } else throw regionCorruptError(`a slot names call mode ${mode}, which this pool does not have`);
    } catch (err) {
      respond(slot, STATUS_THROWN, err, task);
      return answered();
    }
    if (result !== null && typeof result === "object" && typeof result.then === "function") {
      // The thread is free again: a later call may hold it, not this one.
      Slot.setStarted(i32, w, STARTED.AWAITING);
      payload.dropHeld(); // the answer comes later: the argument's room goes back now
      Promise.resolve(result).then(
        (value) => {
          respond(slot, STATUS_VALUE, value, task);
          port.asyncEnded();
          if (waiting.size !== 0) answerDeferred();
          if (recycle !== null || leaveDue) callEnded();
        },
        (err) => {
          respond(slot, STATUS_THROWN, err, task);
          port.asyncEnded();
          if (waiting.size !== 0) answerDeferred();
          if (recycle !== null || leaveDue) callEnded();
        },
      );
      if (waiting.size !== 0) waiting.retry(); // starting it freed its argument's room
      return true;
    }
    respond(slot, STATUS_VALUE, result, task);
    return answered();
  }

  /** After a sync call: starting it freed its argument's room; the port publishes next. */
  function answered() {
    if (waiting.size !== 0) waiting.retry();
    if (recycle !== null || leaveDue) callEnded();
    return false;
  }

  /**
   * Between calls, with a recycle limit set (server/recycle.js): once a limit is
   * reached, the topology's way of leaving (worker/ports.js: with a private
   * lane, ask the host once; stealing, exit as soon as this worker holds no call).
   */
  function callEnded() {
    const limit = recycle === null ? null : recycle.callEnded();
    if (limit === null && !leaveDue) return;
    // Told to leave: the host replaces no worker that leaves for "idle".
    const reason = leaveDue ? "idle" : limit;
    mode.leave(waiting.size, {
      ask() {
        if (recycleAsked) return;
        recycleAsked = true;
        report({ type: MSG.RECYCLE, reason });
      },
      exit: () => end(reason),
    });
  }

  /**
   * The host's "end" message (private lanes, server/recycle.js): it emptied this
   * worker's lane and stopped using it; the worker leaves the lane for good
   * and ends (`end`: exits, or asks the host to terminate it).
   */
  function stop() {
    if (steal || port.left) return;
    port.leave();
    end(leaveDue ? "idle" : recycle !== null && recycle.due !== null ? recycle.due : "calls");
  }

  /**
   * The host's "leave" message (work stealing, server/elastic.js): leave now if
   * this worker holds no call, else at the end of the call that empties it.
   */
  function leave() {
    if (leaveDue) return;
    leaveDue = true;
    if (table !== null) callEnded();
  }

  // pool.broadcast (worker/broadcast.js): kept ones run before "ready"; those
  // that arrive while the tasks load wait for them.
  const broadcaster = makeBroadcaster(maxPayloadBytes, names, abortAware, runTask);
  let early = [];
  let arrived = null; // resolves the wait for a kept broadcast's message (keptArrived)
  function broadcast(msg, reply) {
    if (early === null) {
      broadcaster.serve(table, msg, reply, MSG.BROADCAST_DONE);
      return;
    }
    early.push([msg, reply]);
    if (arrived !== null) arrived();
  }

  /**
   * Waits until the messages of every kept broadcast made before this worker
   * reports ready have come (host/broadcast.js, KEPT_SEQ): its start data
   * holds those made before it started; KEPT_SEQ counts them all. Bounded:
   * a message that never comes (its sender gone) delays the start, no more.
   */
  async function keptArrived(kept) {
    const until = performance.now() + KEPT_WAIT_MS;
    for (;;) {
      let seen = kept.seq;
      for (const [msg] of early) if (msg.keptSeq > seen) seen = msg.keptSeq;
      if (Atomics.load(i32, L.wordKeptSeq) <= seen || performance.now() > until) return;
      await new Promise((resolve) => {
        arrived = resolve;
        setTimeout(resolve, 50); // and looks again
      });
      arrived = null;
    }
  }

  runBootstrap()
    .then(loadTasks)
    .then(async (loaded) => {
      await broadcaster.runKept(loaded, setup.kept.setups, laneIndex);
      return loaded;
    })
    .then(async (loaded) => {
      // Broadcasts that came while this worker started run before its first call too, and the
      // kept ones still on their way are waited for.
      await keptArrived(setup.kept);
      const came = early;
      early = null;
      table = loaded;
      await Promise.all(came.map(([msg, reply]) => broadcaster.serve(loaded, msg, reply, MSG.BROADCAST_DONE)));
      return loaded;
    })
    .then(
      () => {
        report({ type: MSG.READY });
        port.serve();
      },
      (err) => {
        // Cloning drops `code` (KNT_POOL_IN_WORKER, say): sent beside it.
        report({
          type: MSG.INIT_ERROR,
          error: err,
          code: err !== null && typeof err === "object" ? err.code : undefined,
        });
      },
    );
  return { leave, stop, broadcast };
}

module.exports = { serveLane };
