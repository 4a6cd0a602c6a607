"use strict";
// Loads the Rust addon: a local build in the package root first, then the
// per-platform package (`knitting-native-<triple>`), as napi-rs packages do.
// When neither fits, the error says what was tried and how to build from source.
//
// KNITTING_NATIVE_BINARY=/path/to/file.node loads that file and nothing else
// (a relative path is taken from the current directory). If it cannot be
// loaded that is an error: the loader does not fall back to another binary.
const { join, resolve } = require("node:path");
const { existsSync } = require("node:fs");
const { platformTriple, TARGETS } = require("./platform.js");

// N-API 8 is what the addon is built against (Cargo.toml, feature "napi8").
// Node.js 20 is the oldest release the JS side supports (package.json
// engines; growable SharedArrayBuffer for the payload region).
const MIN_NAPI = 8;
const MIN_NODE_MAJOR = 20;

const root = join(__dirname, "..", ".."); // the package root

function checkRuntime() {
  const versions = process.versions || {};
  const napi = Number(versions.napi) || 0;
  const node = String(versions.node || process.version || "").replace(/^v/, "");
  const major = Number(/^(\d+)/.exec(node)?.[1]) || 0;
  if (napi < MIN_NAPI || major < MIN_NODE_MAJOR) {
    throw new Error(
      `knitting-native needs Node.js >= ${MIN_NODE_MAJOR} and N-API >= ${MIN_NAPI}; ` +
        `this is Node.js ${node ? `v${node}` : "(unknown version)"} with N-API ${napi || "(none)"}. ` +
        `Upgrade Node.js to ${MIN_NODE_MAJOR} or newer (https://nodejs.org).`,
    );
  }
}

function firstLine(message) {
  return String(message).split("\n")[0];
}

function repositoryUrl() {
  try {
    const repo = require("../../package.json").repository;
    return typeof repo === "string" ? repo : (repo && repo.url) || null;
  } catch {
    return null;
  }
}

function noBinary(triple, tried, override) {
  const file = `knitting-native.${triple}.node`;
  const pkg = `knitting-native-${triple}`;
  const fixes = [];
  if (override) {
    fixes.push(
      "Point KNITTING_NATIVE_BINARY at an existing knitting-native .node file, or unset it to use " +
        "the local build or the prebuilt package.",
    );
  } else if (TARGETS[triple]) {
    fixes.push(
      `Install the prebuilt package: reinstall without skipping optional dependencies ` +
        `(not --omit=optional / --no-optional), or run \`npm install ${pkg}\`.`,
    );
  } else {
    fixes.push(`There is no prebuilt package for ${triple} (prebuilt: ${Object.keys(TARGETS).join(", ")}).`);
  }
  if (existsSync(join(root, "Cargo.toml"))) {
    fixes.push(
      `Build from source: install Rust from https://rustup.rs, then run \`npm run build\` in ${root} ` +
        `(it writes ${file} there).`,
    );
  } else {
    const repo = repositoryUrl();
    fixes.push(
      `Build from source: install Rust from https://rustup.rs, then run \`npm run build\` in a checkout of ` +
        `the knitting-native source${repo ? ` (${repo})` : ""} (this installed copy has no Rust sources); ` +
        `copy the ${file} it writes into ${root}, or set KNITTING_NATIVE_BINARY to its path.`,
    );
  }
  return new Error(
    `knitting-native: could not load the native addon for ${triple} ` +
      `(Node.js ${process.version}, N-API ${process.versions.napi}).\n` +
      `Tried:\n${tried.map((t, i) => `  ${i + 1}. ${t}`).join("\n")}\n` +
      `To fix it:\n${fixes.map((f) => `  - ${f}`).join("\n")}`,
  );
}

function tryRequire(file, label, tried) {
  if (!existsSync(file)) {
    tried.push(`${file} (${label}): file not found`);
    return null;
  }
  try {
    return { addon: require(file), file };
  } catch (err) {
    tried.push(`${file} (${label}): ${firstLine(err.message)}`);
    return null;
  }
}

/**
 * The file the addon came from, kept on it: a permission-restricted worker
 * process is allowed to read that one file (options/permission.js).
 */
const ADDON_FILE = Symbol.for("knitting-native.addonFile");
function loadedFrom(addon, file) {
  Object.defineProperty(addon, ADDON_FILE, { value: file });
  return addon;
}

function load() {
  checkRuntime();
  const triple = platformTriple();
  const tried = [];

  const override = process.env.KNITTING_NATIVE_BINARY;
  if (override) {
    const got = tryRequire(resolve(override), "KNITTING_NATIVE_BINARY", tried);
    if (got) return loadedFrom(got.addon, got.file);
    throw noBinary(triple, tried, true);
  }

  const local = tryRequire(join(root, `knitting-native.${triple}.node`), "local build", tried);
  if (local) return loadedFrom(local.addon, local.file);

  const pkg = `knitting-native-${triple}`;
  try {
    return loadedFrom(require(pkg), require.resolve(pkg));
  } catch (err) {
    const missing = err && err.code === "MODULE_NOT_FOUND" && firstLine(err.message).includes(`'${pkg}'`);
    tried.push(`${pkg} (prebuilt package): ${missing ? "not installed" : firstLine(err.message)}`);
  }
  throw noBinary(triple, tried, false);
}

module.exports = load();
