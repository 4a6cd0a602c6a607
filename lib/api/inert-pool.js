"use strict";
// The pool createPool returns inside a pool worker. Workers import the task
// modules, so a module that creates its pool at the top level and keeps only
// its calls behind `if (isMain)` creates that pool again in every worker:
// there it gets this inert stand-in, which starts no worker (a pool in each
// worker would start pools of its own). Using it is the mistake, and throws;
// holding it, awaiting `ready` and disposing it (`using pool = ...`) are not.

const { CODE } = require("../errors.js");
const { isPoolWorker, POOL_WORKER_ENV } = require("../tasks/worker-context.js");

/** The Error that using an inert pool throws, `what` being what was used. */
function poolInWorkerError(what) {
  const where = isPoolWorker()
    ? "inside a pool worker"
    : `in a thread or process started from inside a pool worker (${POOL_WORKER_ENV} is set)`;
  const err = new Error(
    `knitting-native: ${what} was used ${where}, where a pool cannot be started or used: workers import the ` +
      "task modules, so a pool created at a task module's top level is created again in each worker, and there " +
      "it is inert (it starts no worker). Put the calls behind `if (isMain) { ... }` (isMain is false inside " +
      "workers).",
  );
  err.code = CODE.POOL_IN_WORKER;
  return err;
}

const thrower = (what) =>
  function inertPoolUsed() {
    throw poolInWorkerError(what);
  };

// Resolved: `await pool.ready` at a module's top level must not fail the worker's import.
const READY = Promise.resolve();

/** The members every inert pool has: `ready`, `shutdown` and the disposers. */
function inertBase() {
  return {
    ready: READY,
    shutdown: thrower("pool.shutdown()"),
    sharedBytes: thrower("pool.sharedBytes()"),
    readBody: thrower("pool.readBody()"),
    [Symbol.dispose]: () => {},
    [Symbol.asyncDispose]: () => READY,
  };
}

/** An inert `createPool(options)(tasks)`: `pool.call.<any name>` throws. */
function inertPool() {
  // Any name, not only the tasks': the worker's copy of the module has no pool to ask.
  const callers = (what) =>
    new Proxy(Object.freeze(Object.create(null)), {
      get: (_, name) => (typeof name === "string" ? thrower(`pool.${what}.${name}()`) : undefined),
    });
  return Object.freeze({
    call: callers("call"),
    stream: callers("stream"),
    broadcast: callers("broadcast"),
    ...inertBase(),
  });
}

/** An inert `task({ f }).createPool(options)`: `pool.call(arg)` throws. */
function inertSingleTaskPool() {
  return Object.freeze({
    call: thrower("pool.call()"),
    stream: thrower("pool.stream()"),
    broadcast: thrower("pool.broadcast()"),
    ...inertBase(),
  });
}

/** createPool(options) inside a pool worker: a function of the tasks that returns an inert pool. */
function createInertPool() {
  return function withTasks() {
    return inertPool();
  };
}

module.exports = { createInertPool, inertSingleTaskPool };
