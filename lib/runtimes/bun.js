"use strict";
// What is particular to Bun (JavaScriptCore), as host and as the runtime of
// worker processes. Same questions as node.js.
//
// - Bun's node:v8 serialize writes its own format, not V8's: between two
//   Bun processes it works, between Bun and Node or Deno it does not (values
//   off the codec's fast path, a Map for instance, cannot cross; the call
//   fails with the decode error). Start-up messages therefore travel as
//   JSON with the codec's own bytes inside (ipc "json").
// - Worker threads take no resourceLimits: JavaScriptCore has no per-worker
//   heap limit, so the option is refused on this runtime rather than ignored.

const name = "bun";

function version() {
  return process.versions.bun;
}

/** process.execArgv on Bun holds no flags worth copying. */
function defaultExecArgv() {
  return [];
}

/** `bun <flags> file`. */
function workerCommand(executable, flags, file) {
  return [executable, ...flags, file];
}

const ipc = "json";

// Bun transpiles modules before it runs them: Function.prototype.toString
// gives the transpiled text ("new TypeError" may print as "TypeError"), not
// the source V8 prints, so the worker's check of a task's text against the
// host's is left out between Bun and the others (its position still is checked).
const sourceText = "transpiled";

function threadOptions() {
  return {};
}

/** Bun's IPC channel has no unref(): child.unref() covers it there. */
function unrefChannel() {}

/** A worker thread needs no adjustment here: "exit" comes after terminate() returns. */
function threadWorker(worker) {
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
  // Bun has N-API's external strings, but does not collect them in time: 20,000
  // strings of 64 KiB, none kept, left rss at 1,277 MiB (Node: 121 MiB), 2026-12-04.
  externalStrings: false,
  // Large binary results are copied through the payload region, not moved as copies: measured on Node only.
  moveResultCopies: false,
};
