"use strict";
// task(): a task is named by where it is declared (its module's URL and the
// index of its task() call in that module), so the host and every worker,
// which import modules in different orders, agree on its id.

const { pathToFileURL, fileURLToPath } = require("node:url");
const { dirname, join, sep } = require("node:path");
const native = require("./native.js");

const TASK = Symbol.for("knitting-native.task");

// One registry per isolate, shared by every copy of this package that the
// isolate may load (a symlinked or duplicated install still registers here),
// so a worker finds tasks whichever copy its task module imported.
const REGISTRY_KEY = Symbol.for("knitting-native.registry");
const registry =
  globalThis[REGISTRY_KEY] ||
  (globalThis[REGISTRY_KEY] = { byId: new Map(), nextAt: new Map() });

// Frames inside this package's own entry points and lib/ are skipped when
// looking for the module that declared a task.
const LIB_DIR = __dirname + sep;
const ENTRY_FILES = new Set([join(dirname(__dirname), "index.js"), join(dirname(__dirname), "index.mjs")]);

function toHref(file) {
  if (file.startsWith("file:") || file.startsWith("data:") || file.startsWith("http")) return file;
  return pathToFileURL(file).href;
}

function isPackageFrame(file) {
  const path = file.startsWith("file:") ? fileURLToPath(file) : file;
  return path.startsWith(LIB_DIR) || ENTRY_FILES.has(path);
}

/** The URL of the first module on the stack outside this package. */
function callerHref() {
  const original = Error.prepareStackTrace;
  const originalLimit = Error.stackTraceLimit;
  let sites;
  try {
    Error.stackTraceLimit = 50;
    Error.prepareStackTrace = (_err, stack) => stack;
    sites = new Error().stack;
  } finally {
    Error.prepareStackTrace = original;
    Error.stackTraceLimit = originalLimit;
  }
  if (Array.isArray(sites)) {
    for (const site of sites) {
      const file = site.getFileName && site.getFileName();
      if (!file || file.startsWith("node:") || file.startsWith("internal/")) continue;
      if (isPackageFrame(file)) continue;
      return toHref(file);
    }
  }
  throw new Error(
    "knitting-native: cannot tell which module called task(); call it at the top level of a module file",
  );
}

function stableTaskID(href, at) {
  if (typeof href !== "string") {
    throw new TypeError(`stableTaskID(href, at): href must be a string, got ${typeof href}`);
  }
  if (typeof at !== "number") {
    throw new TypeError(`stableTaskID(href, at): at must be a number, got ${typeof at}`);
  }
  return native.stableTaskID(href, at);
}

/**
 * Declares a task. Must be called at the top level of a module (the worker
 * re-imports that module and finds the task by its position in it).
 */
function task(definition) {
  if (definition === null || typeof definition !== "object") {
    throw new TypeError(
      `task(definition): definition must be an object like { f: (arg) => result }, got ${definition === null ? "null" : typeof definition}`,
    );
  }
  const { f } = definition;
  if (typeof f !== "function") {
    throw new TypeError(`task({ f }): f must be a function, got ${f === null ? "null" : typeof f}`);
  }
  const href = callerHref();
  const at = registry.nextAt.get(href) || 0;
  registry.nextAt.set(href, at + 1);
  const id = native.stableTaskID(href, at);
  const t = Object.freeze({ [TASK]: true, f, href, at, id });
  registry.byId.set(id, t);
  return t;
}

function isTask(value) {
  return value !== null && typeof value === "object" && value[TASK] === true;
}

module.exports = { task, isTask, stableTaskID, callerHref, registry, TASK };
