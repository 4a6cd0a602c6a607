"use strict";
// task(): a task is named by where it is declared (its module's URL and the
// index of its task() call in that module), so the host and every worker,
// which import modules in different orders, agree on its id.

const native = require("../native/index.js");
const { callerHref } = require("./caller.js");
const { CODE, codedError } = require("../errors.js");

const TASK = Symbol.for("knitting-native.task");

// One registry per isolate, shared by every copy of this package that the
// isolate may load (a symlinked or duplicated install still registers here),
// so a worker finds tasks whichever copy its task module imported.
const REGISTRY_KEY = Symbol.for("knitting-native.registry");
const registry = globalThis[REGISTRY_KEY] || (globalThis[REGISTRY_KEY] = { byId: new Map(), nextAt: new Map() });

function stableTaskID(href, at) {
  if (typeof href !== "string") {
    throw codedError(
      TypeError,
      CODE.INVALID_ARGUMENT,
      `stableTaskID(href, at): href must be a string, got ${typeof href}`,
    );
  }
  if (typeof at !== "number") {
    throw codedError(TypeError, CODE.INVALID_ARGUMENT, `stableTaskID(href, at): at must be a number, got ${typeof at}`);
  }
  return native.stableTaskID(href, at);
}

/** `timeout` of a task definition, normalised: { time, kind, value }. */
function resolveTimeout(timeout, where) {
  if (timeout === undefined) return null;
  if (typeof timeout === "number") {
    checkTime(timeout, `${where}.timeout`);
    return { time: timeout, kind: "throw", value: undefined };
  }
  if (timeout === null || typeof timeout !== "object") {
    throw new TypeError(
      `${where}.timeout must be a number of ms or { time, default | maybe | error }, got ` +
        `${timeout === null ? "null" : typeof timeout}`,
    );
  }
  const allowed = ["time", "default", "maybe", "error"];
  for (const key of Object.keys(timeout)) {
    if (!allowed.includes(key))
      throw new TypeError(`${where}.timeout: unknown key ${key}; allowed: ${allowed.join(", ")}`);
  }
  checkTime(timeout.time, `${where}.timeout.time`);
  const given = ["default", "maybe", "error"].filter((k) => k in timeout);
  if (given.length > 1) {
    throw new TypeError(`${where}.timeout takes one of default, maybe, error; got ${given.join(" and ")}`);
  }
  if ("maybe" in timeout && timeout.maybe !== true) {
    throw new TypeError(`${where}.timeout.maybe must be true when given`);
  }
  if ("error" in timeout) return { time: timeout.time, kind: "error", value: timeout.error };
  if ("default" in timeout) return { time: timeout.time, kind: "default", value: timeout.default };
  if ("maybe" in timeout) return { time: timeout.time, kind: "default", value: undefined };
  return { time: timeout.time, kind: "throw", value: undefined };
}

function checkTime(time, name) {
  if (typeof time !== "number" || !Number.isFinite(time) || time <= 0) {
    const got = typeof time === "number" ? String(time) : typeof time;
    throw new RangeError(`${name} must be a positive, finite number of milliseconds, got ${got}`);
  }
}

/** `abortSignal` of a task definition: true for an abort-aware task. */
function resolveAbortSignal(abortSignal, where) {
  if (abortSignal === undefined || abortSignal === false) return false;
  if (abortSignal === true) return true;
  if (
    abortSignal !== null &&
    typeof abortSignal === "object" &&
    Object.keys(abortSignal).every((k) => k === "hasAborted")
  ) {
    if (abortSignal.hasAborted === true) return true;
  }
  throw new TypeError(
    `${where}.abortSignal must be { hasAborted: true } (or true), got ${JSON.stringify(abortSignal)}`,
  );
}

function checkDefinition(definition, where, keys) {
  if (definition === null || typeof definition !== "object") {
    throw new TypeError(
      `${where}: definition must be an object, got ${definition === null ? "null" : typeof definition}`,
    );
  }
  for (const key of Object.keys(definition)) {
    if (!keys.includes(key)) throw new TypeError(`${where}: unknown key ${key}; allowed: ${keys.join(", ")}`);
  }
}

/** Takes the next `at` of the calling module (task() and importTask() share it). */
function nextPosition() {
  const href = callerHref();
  const at = registry.nextAt.get(href) || 0;
  registry.nextAt.set(href, at + 1);
  return { href, at, id: native.stableTaskID(href, at) };
}

/**
 * Freezes a task, with its `createPool(options)` shorthand when the package's
 * entry point passes the maker (a pool of this one task, called as
 * pool.call(arg)): tasks/task.js does not require host/pool.js, which requires it.
 */
function withShorthand(t, createSingleTaskPool) {
  if (createSingleTaskPool !== undefined) {
    Object.defineProperty(t, "createPool", { value: (options) => createSingleTaskPool(options, t) });
  }
  return Object.freeze(t);
}

/**
 * Declares a task. Must be called at the top level of a module (the worker
 * re-imports that module and finds the task by its position in it).
 * { f, timeout?, abortSignal? }
 */
function task(definition, createSingleTaskPool) {
  return withOptionCode(defineTask, definition, createSingleTaskPool);
}

/** A wrong definition is a TypeError/RangeError with code KNT_INVALID_OPTION. */
function withOptionCode(define, definition, createSingleTaskPool) {
  try {
    return define(definition, createSingleTaskPool);
  } catch (err) {
    if ((err instanceof TypeError || err instanceof RangeError) && err.code === undefined)
      err.code = CODE.INVALID_OPTION;
    throw err;
  }
}

function defineTask(definition, createSingleTaskPool) {
  checkDefinition(definition, "task(definition)", ["f", "timeout", "abortSignal"]);
  const { f } = definition;
  if (typeof f !== "function") {
    throw new TypeError(`task({ f }): f must be a function, got ${f === null ? "null" : typeof f}`);
  }
  const timeout = resolveTimeout(definition.timeout, "task");
  const abortAware = resolveAbortSignal(definition.abortSignal, "task");
  const { href, at, id } = nextPosition();
  const t = withShorthand({ [TASK]: true, kind: "task", f, href, at, id, timeout, abortAware }, createSingleTaskPool);
  registry.byId.set(id, t);
  return t;
}

/**
 * A task whose function the worker imports from another module, which the
 * host never evaluates. { href, name, timeout?, abortSignal? }; a relative
 * href resolves from the calling module.
 */
function importTask(definition, createSingleTaskPool) {
  return withOptionCode(defineImportTask, definition, createSingleTaskPool);
}

function defineImportTask(definition, createSingleTaskPool) {
  checkDefinition(definition, "importTask(definition)", ["href", "name", "timeout", "abortSignal"]);
  if (typeof definition.href !== "string" || definition.href === "") {
    throw new TypeError(
      "importTask({ href, name }): href must be a non-empty string (a URL or a path relative to this module)",
    );
  }
  const name = definition.name === undefined ? "default" : definition.name;
  if (typeof name !== "string" || name === "") {
    throw new TypeError("importTask({ href, name }): name must be the export's name, a non-empty string");
  }
  const timeout = resolveTimeout(definition.timeout, "importTask");
  const abortAware = resolveAbortSignal(definition.abortSignal, "importTask");
  const position = nextPosition();
  let resolved;
  try {
    resolved = new URL(definition.href, position.href).href;
  } catch {
    throw new TypeError(
      `importTask({ href }): cannot resolve ${JSON.stringify(definition.href)} from ${position.href}`,
    );
  }
  return withShorthand(
    {
      [TASK]: true,
      kind: "import",
      href: resolved,
      name,
      at: position.at,
      id: position.id,
      timeout,
      abortAware,
    },
    createSingleTaskPool,
  );
}

function isTask(value) {
  return value !== null && typeof value === "object" && value[TASK] === true;
}

module.exports = { task, importTask, isTask, stableTaskID, registry, TASK };
