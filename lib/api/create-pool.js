"use strict";
// The front door: createPool(options)(tasks) and task({ f }).createPool(options)
// check the form they are called in, then build a Pool (host/pool.js) and hand
// out its public face. Inside a pool worker index.js hands out an inert pool
// (api/inert-pool.js) instead, without loading this module.

const { Pool } = require("../host/pool.js");
const { L } = require("../protocol/layout.js");
const { resolveOptions } = require("../options/index.js");
const { buildTaskTable } = require("../tasks/task-table.js");
const { callerHref, noModuleFile } = require("../tasks/caller.js");
const { CODE, codedError } = require("../errors.js");
const { WORKER_MARK } = require("../tasks/worker-context.js");
const { serverApi, POOL_USES: SERVER_USES } = require("../server/api.js");
const { poolView } = require("../host/view.js");

/** The public face of a pool. */
function publicPool(pool) {
  const api = {
    call: pool.call,
    stream: pool.stream,
    broadcast: pool.broadcast,
    sharedBytes: (n) => pool.sharedBytes(n),
    readBody: (request, options) => pool.readBody(request, options),
    ready: pool.readyPromise,
    shutdown: (delayMs) => pool.shutdown(delayMs),
    [Symbol.dispose]: () => {
      pool.shutdown();
    },
    [Symbol.asyncDispose]: () => pool.shutdown(),
  };
  serverApi(api, poolView(pool, SERVER_USES));
  Object.defineProperty(api, Symbol.for("knitting-native.pool"), { value: pool });
  return Object.freeze(api);
}

/**
 * createPool(options)(tasks): a pool of worker threads running `tasks`.
 * Returns `{ call, ready, shutdown, [Symbol.dispose], [Symbol.asyncDispose] }`.
 */
function createPool(options, ...rest) {
  if (rest.length > 0 && rest[0] !== undefined) {
    throw formError(
      "createPool takes the options alone and returns a function that takes the tasks: write " +
        "createPool(options)({ ...tasks }), not createPool(options, tasks)",
    );
  }
  const resolved = resolveOptions(options, L.maxLanes, L.maxAbortSlots);
  return notAPool(function withTasks(tasks) {
    const href = callerHref();
    const table = buildTaskTable(tasks, href);
    refuseWithoutModuleFile(table);
    checkInlineOnly(resolved, table);
    return publicPool(new Pool(resolved, table, href));
  });
}

/** A pool whose only lane is the host's inline lane cannot run importTask tasks. */
function checkInlineOnly(options, table) {
  if (options.threads !== 0) return;
  const imported = table.find((entry) => entry.fn === null);
  if (imported !== undefined) {
    throw codedError(
      TypeError,
      CODE.INVALID_OPTION,
      `knitting-native: task "${imported.name}" is an importTask, which runs only in workers, but this pool's only ` +
        `lane is the inline one (threads: 0 with inliner); give it threads >= 1`,
    );
  }
}

/**
 * Workers import the module that declares each task: code given to `node -e`,
 * a REPL or stdin has no file to import (the worker would fail with "Cannot
 * find module '[eval]'"). Tasks declared in a file serve such a pool.
 */
function refuseWithoutModuleFile(table) {
  for (const entry of table) {
    const name = noModuleFile(entry.href);
    if (name === null) continue;
    throw codedError(
      TypeError,
      CODE.NO_MODULE_FILE,
      `knitting-native: task "${entry.name}" is declared in ${name} (node -e, a REPL or stdin), which is no ` +
        "module file, and workers import the module that declares each task: put the tasks in a module file " +
        "(tasks.mjs, say) and import them from there, or run the script as node script.mjs",
    );
  }
}

/** A TypeError for createPool used in the wrong form. */
function formError(message) {
  const err = new TypeError(`knitting-native: ${message}`);
  err.code = CODE.CREATE_POOL_FORM;
  return err;
}

/**
 * createPool(options) returns a function, whose own `call` (Function.prototype.call)
 * would make `factory.call.add(...)` fail with "not a function": a pool's
 * members on the factory throw an error that shows the form instead.
 */
function notAPool(factory) {
  for (const name of ["call", "broadcast", "shutdown", "ready"]) {
    Object.defineProperty(factory, name, {
      get() {
        throw formError(
          `.${name} was read on the function createPool(options) returns, not on a pool: give it the ` +
            `tasks first, const pool = createPool(options)({ ...tasks }), then pool.${name}`,
        );
      },
    });
  }
  return factory;
}

/** task({ f }).createPool(options): `{ call(arg), shutdown, ... }` for one task. */
function createSingleTaskPool(options, task) {
  const resolved = resolveOptions(options, L.maxLanes, L.maxAbortSlots);
  const href = callerHref();
  const table = buildTaskTable({ task }, href);
  refuseWithoutModuleFile(table);
  checkInlineOnly(resolved, table);
  const pool = new Pool(resolved, table, href);
  const full = publicPool(pool);
  const api = {
    call: (arg, callOptions) => pool.submit(0, arg, callOptions),
    stream: (arg, callOptions) => pool.submitStream(0, arg, callOptions),
    broadcast: (arg, options) => pool.broadcasts.start(0, arg, options),
    sharedBytes: full.sharedBytes,
    readBody: full.readBody,
    ready: full.ready,
    shutdown: full.shutdown,
    [Symbol.dispose]: full[Symbol.dispose],
    [Symbol.asyncDispose]: full[Symbol.asyncDispose],
  };
  serverApi(api, poolView(pool, SERVER_USES));
  Object.defineProperty(api, Symbol.for("knitting-native.pool"), { value: pool });
  return Object.freeze(api);
}

module.exports = { createPool, createSingleTaskPool, WORKER_MARK };
