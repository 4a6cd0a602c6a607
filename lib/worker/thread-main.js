"use strict";
// A pool worker thread: serves its lane (worker/serve.js) over the pool's
// SharedArrayBuffers, parking in Atomics.waitAsync.

const { workerData, parentPort } = require("node:worker_threads");
const { serveLane } = require("./serve.js");
const { markPoolWorker } = require("../tasks/worker-context.js");
const { WorkerSharedRefs } = require("../payload/shared-refs.js");
// The runtime this thread runs on, which is the host's (runtimes/).
const { host } = require("../runtimes/index.js");
const { installExitGuard, runGuarded, muteConsole } = require("./exit-guard.js");
const { MSG } = require("../protocol/messages.js");

// Before any task module loads: what this worker starts is below a pool worker.
markPoolWorker();
// Before any task module loads too: task code may not end the shared process.
installExitGuard(workerData.guard);
if (!workerData.guard.console) muteConsole();

const i32 = new Int32Array(workerData.control);
// The payload region's words, for streaming calls' channels (protocol/stream.js).
const payloadWords = new Int32Array(workerData.payload);

/** Resolves once word `index` of `words` no longer holds `value`. */
function waitMoved(words, index, value) {
  const wait = Atomics.waitAsync(words, index, value);
  return wait.async ? wait.value.then(() => {}) : Promise.resolve();
}

// A pending Atomics.waitAsync does not keep a worker's event loop alive; the
// port does. The host ends workers with terminate().
// Its messages: an elastic pool's "leave" (worker/serve.js leave()), a recycled
// lane's "end" (worker/serve.js stop()), pool.broadcast's "broadcast" (worker/broadcast.js).
let served = null;
parentPort.on("message", (message) => {
  if (served === null || message === null || typeof message !== "object") return;
  if (message.type === MSG.LEAVE) served.leave();
  else if (message.type === MSG.END) served.stop();
  else if (message.type === MSG.BROADCAST) served.broadcast(message, (reply) => parentPort.postMessage(reply));
});

// worker.timers.parkMs: the longest a parked worker sleeps before it looks
// again (the serve loop treats an early wake like any other).
const parkMs = workerData.parkMs;

/**
 * Sends a start-up message. An error the runtime cannot clone (Bun refuses
 * some module-loader errors with a DataCloneError) goes as a plain Error
 * with its name, message, stack and code.
 */
function report(message) {
  try {
    parentPort.postMessage(message);
  } catch {
    const error = message.error;
    const copy = new Error(String(error && error.message !== undefined ? error.message : error));
    if (error && typeof error.name === "string") copy.name = error.name;
    if (error && typeof error.stack === "string") copy.stack = error.stack;
    parentPort.postMessage({ type: message.type, code: message.code, error: copy });
  }
}

const shared = new WorkerSharedRefs(workerData.sharedPort, workerData.lane, host.moveResultCopies);

served = serveLane(workerData, {
  sleep(index, value, wake) {
    // Releases of settled calls' buffers, before a possibly long park.
    shared.drain();
    const wait =
      parkMs === undefined ? Atomics.waitAsync(i32, index, value) : Atomics.waitAsync(i32, index, value, parkMs);
    if (wait.async) wait.value.then(wake);
    else setImmediate(wake);
  },
  wakeWord: (index, count = 1) => Atomics.notify(i32, index, count),
  waitPayloadWord: (index, value) => waitMoved(payloadWords, index, value),
  shared,
  report,
  runTask: runGuarded,
  // Left the claimants or its lane (recycling): the host ends this thread
  // with terminate() (server/recycle.js). Not process.exit: Deno's, in a worker,
  // spins in a loop its isolate's termination is to break, which a second
  // call (an earlier termination cancelled) never breaks; the thread then
  // holds a core for ever and the host waits on it.
  end: (reason) => parentPort.postMessage({ type: MSG.LEFT, reason }),
});
