"use strict";
// In a worker thread, what task code may not do to the process it shares
// with the host: process.abort() (it would end the host and every other
// worker with it) is always refused; process.exit() (it ends this worker
// thread and every call it holds) is refused under a permission policy.
// Both then throw an error naming the task, and the worker keeps serving.
// Threads are no sandbox: this guards against a slip, not against code that
// means harm (which can reach the process in other ways).
//
// To name the task, each call runs through `runGuarded`: the name of the
// task running synchronously, and of those whose promise is pending.

const { invoke } = require("./invoke.js");

let running = null; // the task whose synchronous part runs now
const pending = new Map(); // task name -> its calls whose promise is pending

function culprit() {
  if (running !== null) return `task "${running}"`;
  const names = [...pending.keys()];
  if (names.length === 1) return `task "${names[0]}" (after an await or from a callback)`;
  if (names.length > 1)
    return `one of the tasks ${names.map((n) => `"${n}"`).join(", ")} (after an await or from a callback)`;
  return "code outside any task (a task module's timer or callback)";
}

function refusal(what, why) {
  const who = culprit();
  const err = new Error(
    `knitting-native: ${what} was called by ${who} in a worker thread and refused: ${why}. Throw an ` +
      `error or return instead; the worker keeps running.`,
  );
  err.code = "KNT_PROCESS_EXIT_REFUSED";
  err.task = running !== null ? running : pending.size === 1 ? [...pending.keys()][0] : undefined;
  return err;
}

/**
 * Whether the caller of the guarded function is Node's own handler of an
 * uncaught exception (or unhandled rejection) in a worker thread, which
 * reports the error to the host and then ends the worker with
 * process.exit(): that exit is the worker dying as it should, not task code.
 * Task code cannot put a frame of Node's internal files on the stack.
 */
function calledByNodeInternals() {
  const prepare = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  let sites;
  try {
    Error.stackTraceLimit = 3;
    Error.prepareStackTrace = (_, callSites) => callSites;
    const holder = {};
    Error.captureStackTrace(holder, calledByNodeInternals);
    sites = holder.stack;
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
  }
  // [0]: the guard itself, [1]: whoever called it.
  const caller = Array.isArray(sites) ? sites[1] : undefined;
  const file = caller && caller.getFileName();
  return typeof file === "string" && file.startsWith("node:internal/main/worker_thread");
}

/** Replaces process.abort (always) and process.exit (when `exit`) in this worker thread. */
function installExitGuard({ exit }) {
  process.abort = function abort() {
    throw refusal(
      "process.abort()",
      "a worker thread shares the host's process, which abort() would end with every worker",
    );
  };
  if (exit) {
    const original = process.exit;
    process.exit = function exit() {
      // `arguments` as given: Node's exit() tells exit() from exit(undefined).
      if (calledByNodeInternals()) return original.apply(process, arguments);
      throw refusal(
        "process.exit()",
        "the pool's permission policy does not let task code end its worker (the calls it holds would fail)",
      );
    };
  }
}

function settled(name) {
  const n = pending.get(name) - 1;
  if (n === 0) pending.delete(name);
  else pending.set(name, n);
}

/**
 * Runs task `name`'s function `fn` recording that it runs, for the
 * refusal's message. `fn` comes in as an argument, not from a closure per
 * task: a closure's constant `fn` is one V8 would inline here (invoke.js).
 */
function runGuarded(fn, name, arg, toolkit) {
  const outer = running;
  running = name;
  let result;
  try {
    result = invoke(fn, arg, toolkit); // not inlined here (invoke.js)
  } finally {
    running = outer;
  }
  if (result !== null && typeof result === "object" && typeof result.then === "function") {
    pending.set(name, (pending.get(name) || 0) + 1);
    const done = () => settled(name);
    Promise.resolve(result).then(done, done);
  }
  return result;
}

/** `console: false` in the policy: task code's console output goes nowhere. */
function muteConsole() {
  const quiet = () => {};
  for (const method of [
    "log",
    "info",
    "warn",
    "error",
    "debug",
    "trace",
    "dir",
    "dirxml",
    "table",
    "group",
    "groupCollapsed",
    "groupEnd",
    "count",
    "countReset",
    "time",
    "timeLog",
    "timeEnd",
    "assert",
  ]) {
    if (typeof console[method] === "function") console[method] = quiet;
  }
}

module.exports = { installExitGuard, runGuarded, muteConsole };
