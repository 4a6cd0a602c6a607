"use strict";
// Which module called into this package: the first stack frame outside the
// package's entry points and lib/. Tasks are named by the module that
// declares them (tasks/task.js), and a pool resolves relative hrefs from the
// module that created it (host/pool.js).

const { pathToFileURL, fileURLToPath } = require("node:url");
const { dirname, join, sep } = require("node:path");

// Frames inside this package's own entry points and lib/ are skipped when
// looking for the module that declared a task.
const LIB_DIR = dirname(__dirname) + sep;
const PACKAGE_DIR = dirname(dirname(__dirname));
const ENTRY_FILES = new Set([join(PACKAGE_DIR, "index.js"), join(PACKAGE_DIR, "index.mjs")]);

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
      // Bun names a built-in's frame (Array.from's callback caller) "[unknown]".
      if (file === "[unknown]" || (typeof site.isNative === "function" && site.isNative())) continue;
      if (isPackageFrame(file)) continue;
      return toHref(file);
    }
  }
  throw new Error("knitting-native: cannot tell which module called task(); call it at the top level of a module file");
}

// The names runtimes give code that is not in a module file: `node -e`
// ("[eval]", "[eval1]" for --input-type=module), Node's REPL ("REPL1"),
// a script read from stdin ("[stdin]", Node and Bun), `deno eval`
// ("$deno$eval.mts").
const NO_FILE = /^(\[eval\d*\]|\[stdin\]|REPL\d+|\$deno\$(eval|stdin)\.[cm]?[jt]sx?)$/;

/** When `href` (from callerHref) names no module file a worker could import: that name ("[eval]"), else null. */
function noModuleFile(href) {
  if (typeof href !== "string") return null;
  let name = href.slice(href.lastIndexOf("/") + 1);
  try {
    name = decodeURIComponent(name);
  } catch {}
  return NO_FILE.test(name) ? name : null;
}

module.exports = { callerHref, noModuleFile };
