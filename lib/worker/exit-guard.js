"use strict";
// In a worker thread, what task code may not do to the process it shares
// with the host: process.abort() and process.kill() (they can end the host
// and every other worker with it) and process.exit() (it ends this worker
// thread and every call it holds) are refused in every pool. Each then
// throws an error naming the task, and the worker keeps serving.
// Threads are no sandbox: this guards against a slip, not against code that
// means harm (which can reach the process in other ways).
//
// To name the task, each call runs through `runGuarded`: the name of the
// task running synchronously, and of those whose promise is pending.

const { CODE } = require("../errors.js");
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
  err.code = CODE.PROCESS_EXIT_REFUSED;
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
  const file = guardCallerFile(calledByNodeInternals);
  return typeof file === "string" && file.startsWith("node:internal/main/worker_thread");
}

/** Whether the caller of the guarded function is one of the runtime's own files (`node:` modules). */
function calledByRuntime() {
  const file = guardCallerFile(calledByRuntime);
  return typeof file === "string" && file.startsWith("node:");
}

/**
 * The file of whoever called the guarded function, seen from `check` (the
 * function the guard calls): frame [0] is the guard, [1] its caller.
 */
function guardCallerFile(check) {
  const prepare = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  let sites;
  try {
    Error.stackTraceLimit = 3;
    Error.prepareStackTrace = (_, callSites) => callSites;
    const holder = {};
    Error.captureStackTrace(holder, check);
    sites = holder.stack;
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
  }
  const caller = Array.isArray(sites) ? sites[1] : undefined;
  return caller ? caller.getFileName() : undefined;
}

const ENDS_WORKER =
  "it would end this worker thread and fail every call it holds (to let tasks end their worker on " +
  "purpose, create the pool with worker.allowExit: true)";
const ENDS_HOST = "a worker thread shares the host's process, which this would end with every worker";

/**
 * Replaces, in this worker thread, what ends a process or a thread:
 * process.exit, process.reallyExit (what exit() calls), process.kill,
 * process.abort, and Bun.exit / Deno.exit where they exist. On by default
 * (knitting guards them in every worker): a task that ends its worker fails
 * every call the worker holds, and kill() or abort() can end the host.
 * `exit: false` (worker.allowExit) leaves the exits alone, never kill/abort.
 */
function installExitGuard({ exit }) {
  process.kill = function kill() {
    throw refusal("process.kill()", "a worker thread shares the host's process; a signal can end the host");
  };
  process.abort = function abort() {
    throw refusal("process.abort()", ENDS_HOST);
  };
  if (!exit) return; // worker.allowExit: task code may end its worker thread
  const originalExit = process.exit;
  let leaving = false; // Node's own exit (after an uncaught exception) is under way
  process.exit = function exit() {
    if (calledByNodeInternals()) {
      leaving = true;
      // `arguments` as given: Node's exit() tells exit() from exit(undefined).
      return originalExit.apply(process, arguments);
    }
    throw refusal("process.exit()", ENDS_WORKER);
  };
  if (typeof process.reallyExit === "function") {
    const originalReallyExit = process.reallyExit;
    process.reallyExit = function reallyExit() {
      // Node's exit() calls it: let it through once that exit was let through.
      if (leaving && calledByRuntime()) return originalReallyExit.apply(process, arguments);
      throw refusal("process.reallyExit()", ENDS_WORKER);
    };
  }
  for (const name of ["Bun", "Deno"]) {
    const runtime = globalThis[name];
    if (runtime === undefined || runtime === null || typeof runtime.exit !== "function") continue;
    try {
      Object.defineProperty(runtime, "exit", {
        configurable: true,
        writable: true,
        value: function exit() {
          throw refusal(`${name}.exit()`, ENDS_WORKER);
        },
      });
    } catch {
      // A runtime whose `exit` cannot be replaced keeps it; process.exit is still guarded.
    }
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
 * task: a closure's constant `fn` is one V8 would inline here (worker/invoke.js).
 */
function runGuarded(fn, name, arg, toolkit) {
  const outer = running;
  running = name;
  let result;
  try {
    result = invoke(fn, arg, toolkit); // not inlined here (worker/invoke.js)
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
