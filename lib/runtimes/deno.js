"use strict";
// What is particular to Deno, as host and as the runtime of worker
// processes. Same questions as node.js.
//
// - A Deno worker process runs `deno run <flags> file`. Its permissions are
//   its flags: the default is --allow-all, like a Node worker process, which
//   has them all; `worker.execArgv` replaces them (the addon needs at least
//   --allow-ffi, the task modules --allow-read and --allow-env).
// - Deno's node:child_process speaks JSON only on the IPC channel (ipc
//   "json"): start-up messages carry the codec's bytes.
// - Worker threads: Deno's node:worker_threads takes no resourceLimits, so
//   the option is refused on this runtime rather than ignored.
// - Worker threads: Deno's terminate() emits "exit" inside the call
//   (threadWorker below).

const name = "deno";

function version() {
  return process.versions.deno;
}

function defaultExecArgv() {
  return ["--allow-all"];
}

/** `deno run <flags> file`. */
function workerCommand(executable, flags, file) {
  return [executable, "run", ...flags, file];
}

/** Function.prototype.toString prints a function's source as written (V8). */
const sourceText = "exact";

const ipc = "json";

function threadOptions() {
  return {};
}

/** The IPC channel of a child process stops holding the event loop. */
function unrefChannel(child) {
  if (child.channel) child.channel.unref();
}

/**
 * Deno's Worker emits "exit" synchronously inside terminate(); the pool,
 * like Node, decides what a terminated worker's calls get before it hears
 * of the exit (a hard timeout blames the runaway, then the exit fails the
 * rest). So "exit" is delivered a tick later, and terminate()'s promise
 * after it, as on Node.
 */
function threadWorker(worker) {
  const emit = worker.emit;
  let exited;
  const exit = new Promise((resolve) => (exited = resolve));
  worker.emit = function (event, ...args) {
    if (event !== "exit") return emit.call(this, event, ...args);
    process.nextTick(() => {
      emit.call(this, event, ...args);
      exited();
    });
    return this.listenerCount(event) > 0;
  };
  const terminate = worker.terminate;
  worker.terminate = function () {
    const result = terminate.call(this);
    return exit.then(() => result);
  };
  return worker;
}

module.exports = {
  threadWorker,
  unrefChannel,
  name,
  version,
  defaultExecArgv,
  workerCommand,
  ipc,
  sourceText,
  threadOptions,
  threadResourceLimits: false,
  // Deno has N-API's external strings, but does not collect them in time: 20,000
  // strings of 64 KiB, none kept, left rss at 1,304 MiB (Node: 121 MiB), 2026-12-04.
  externalStrings: false,
  // Large binary results are copied through the payload region, not moved as copies: measured on Node only.
  moveResultCopies: false,
};
