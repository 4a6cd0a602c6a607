"use strict";
// The table of a pool's tasks: sorted by name (the order a lane's task index
// refers to, the same in the host and in every worker), each entry saying how
// a worker finds the function: by stable id for task(), by export name for a
// bare function exported from the module that created the pool.

const { readFileSync } = require("node:fs");
const { fileURLToPath } = require("node:url");
const { isTask } = require("./task.js");
const { describe } = require("./options.js");

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Whether `source` (a module's text) exports a binding called `name`. */
function sourceExports(source, name) {
  const n = escapeRegExp(name);
  const patterns = [
    new RegExp(`\\bexport\\s+(?:async\\s+)?(?:function\\s*\\*?\\s*|const\\s+|let\\s+|var\\s+|class\\s+)${n}\\b`),
    new RegExp(`\\bexport\\s*\\{[^}]*\\b${n}\\b[^}]*\\}`),
    new RegExp(`\\bexports\\.${n}\\s*=`),
    new RegExp(`\\bmodule\\.exports\\s*=`),
  ];
  return patterns.some((p) => p.test(source));
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
  if (tasks === null || typeof tasks !== "object") {
    throw new TypeError(
      `knitting-native: createPool(options)(tasks): tasks must be an object of named tasks like { add, square } or an array of tasks, got ${describe(tasks)}`,
    );
  }
  // An array's tasks are named by their index ("0", "1", ...). Either way the
  // table is in name order (string order: "10" sorts before "2"), the order
  // every lane, the inline one included, addresses tasks by.
  const names = Array.isArray(tasks) ? tasks.map((_, i) => String(i)).sort() : Object.keys(tasks).sort();
  if (names.length === 0) {
    throw new TypeError("knitting-native: createPool(options)(tasks): tasks is empty; pass at least one task");
  }
  let source; // the pool module's text, read once if a bare function needs it
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
      if (source === undefined) {
        try {
          source = readFileSync(fileURLToPath(poolHref), "utf8");
        } catch {
          source = null;
        }
      }
      if (source !== null) {
        if (!source.includes(text)) throw notExported(name, poolHref, "is not defined in");
        if (!sourceExports(source, name)) throw notExported(name, poolHref, "is not exported under that name from");
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

module.exports = { buildTaskTable, workerTable, sourceExports };
