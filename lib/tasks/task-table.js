"use strict";
// The table of a pool's tasks: sorted by name (the order a lane's task index
// refers to, the same in the host and in every worker), each entry saying how
// a worker finds the function: by stable id for task(), by export name for a
// bare function exported from the module that created the pool.

const { CODE } = require("../errors.js");
const { readFileSync } = require("node:fs");
const { fileURLToPath } = require("node:url");
const { isTask } = require("./task.js");
const { describe } = require("../options/index.js");

/** Most tasks a pool takes (as knitting). */
const MAX_TASKS = 65536;

const IDENT = "[A-Za-z_$][\\w$]*";
const DECLARED = new RegExp(
  `\\bexport\\s+(?:async\\s+)?(?:function\\s*\\*?\\s*|const\\s+|let\\s+|var\\s+|class\\s+)(${IDENT})`,
  "g",
);
const LISTED = /\bexport\s*\{([^}]*)\}/g;
const ASSIGNED = new RegExp(`\\bexports\\.(${IDENT})\\s*=`, "g");
const WORD = new RegExp(IDENT, "g");

/**
 * The names `source` (a module's text) exports, found in one pass over it
 * (a pass per task made 65,537 bare functions take minutes), or "any" when
 * it assigns module.exports. A superset: every name inside `export { }`.
 */
function exportedNames(source) {
  if (/\bmodule\.exports\s*=/.test(source)) return "any";
  const names = new Set();
  for (const m of source.matchAll(DECLARED)) names.add(m[1]);
  for (const m of source.matchAll(LISTED)) for (const w of m[1].match(WORD) || []) names.add(w);
  for (const m of source.matchAll(ASSIGNED)) names.add(m[1]);
  return names;
}

/** Whether `source` exports a binding called `name`. */
function sourceExports(source, name) {
  const names = exportedNames(source);
  return names === "any" || names.has(name);
}

function notExported(name, href, why) {
  return new TypeError(
    `knitting-native: task "${name}" is a plain function that ${why} ${href}. ` +
      "Workers import task modules, so a plain function must be exported from the module that calls createPool " +
      `(export const ${name} = ...), or be declared with task({ f }) at the top level of a module.`,
  );
}

/**
 * Validates `tasks` and returns the sorted table. `poolHref` is the module
 * that called createPool (where bare functions must be exported).
 */
function buildTaskTable(tasks, poolHref) {
  try {
    return readTaskTable(tasks, poolHref);
  } catch (err) {
    // A wrong tasks object: KNT_INVALID_TASK unless the error has its own code.
    if ((err instanceof TypeError || err instanceof RangeError) && err.code === undefined) err.code = CODE.INVALID_TASK;
    throw err;
  }
}

function readTaskTable(tasks, poolHref) {
  if (tasks === null || typeof tasks !== "object") {
    throw new TypeError(
      `knitting-native: createPool(options)(tasks): tasks must be an object of named tasks like { ` +
        `add, square } or an array of tasks, got ${describe(tasks)}`,
    );
  }
  // An array's tasks are named by their index ("0", "1", ...). Either way the
  // table is in name order (string order: "10" sorts before "2"), the order
  // every lane, the inline one included, addresses tasks by.
  const names = Array.isArray(tasks) ? tasks.map((_, i) => String(i)).sort() : Object.keys(tasks).sort();
  if (names.length === 0) {
    throw new TypeError("knitting-native: createPool(options)(tasks): tasks is empty; pass at least one task");
  }
  if (names.length > MAX_TASKS) {
    const err = new RangeError(
      `knitting-native: createPool(options)(tasks): ${names.length} tasks; a pool takes at most ${MAX_TASKS}`,
    );
    err.code = CODE.TOO_MANY_TASKS;
    throw err;
  }
  let exported; // the pool module's exported names, read once if a bare function needs them
  return names.map((name) => {
    const value = tasks[name];
    if (isTask(value)) {
      const entry = { name, kind: value.kind, href: value.href, id: value.id, at: value.at };
      // The worker checks that the function at this position is this one.
      if (value.kind === "task") entry.source = Function.prototype.toString.call(value.f);
      if (value.kind === "import") entry.exportName = value.name;
      entry.abortAware = value.abortAware;
      entry.timeout = value.timeout;
      // What the host's inline lane runs; an importTask's function exists
      // only in workers.
      entry.fn = value.kind === "task" ? value.f : null;
      return entry;
    }
    if (typeof value !== "function") {
      throw new TypeError(
        `knitting-native: task "${name}" must be a task({ f }) or an exported function, got ${describe(value)}`,
      );
    }
    const text = Function.prototype.toString.call(value);
    if (poolHref.startsWith("file:")) {
      if (exported === undefined) {
        try {
          exported = exportedNames(readFileSync(fileURLToPath(poolHref), "utf8"));
        } catch {
          exported = null;
        }
      }
      // Whether the export is this very function, the worker checks when it
      // imports the module (worker/serve.js compares the function's text).
      if (exported !== null && exported !== "any" && !exported.has(name)) {
        throw notExported(name, poolHref, "is not exported under that name from");
      }
    }
    return { name, kind: "export", href: poolHref, source: text, abortAware: false, timeout: null, fn: value };
  });
}

/** What a worker needs of the table (no host-only values such as timeouts). */
function workerTable(table) {
  return table.map(({ name, kind, href, id, at, source, exportName, abortAware }) => ({
    name,
    kind,
    href,
    id,
    at,
    source,
    exportName,
    abortAware,
  }));
}

/**
 * The prototype of `pool.call`: any name that is not a task (an own
 * property) finds a function here that throws a TypeError naming it and
 * listing the tasks. `then` and symbols stay undefined, so that
 * `await pool.call` and inspection behave.
 */
function unknownTaskTrap(names, what = "call") {
  const list = names.length > 20 ? `${names.slice(0, 20).join(", ")} and ${names.length - 20} more` : names.join(", ");
  return new Proxy(Object.create(null), {
    get(_target, key) {
      if (typeof key !== "string" || key === "then") return undefined;
      return function unknownTask() {
        const err = new TypeError(
          `knitting-native: pool.${what}.${key} is not a task of this pool; its tasks: ${list}`,
        );
        err.code = CODE.UNKNOWN_TASK;
        throw err;
      };
    },
  });
}

module.exports = { buildTaskTable, workerTable, sourceExports, exportedNames, unknownTaskTrap, MAX_TASKS };
