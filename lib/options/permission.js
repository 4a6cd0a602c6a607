"use strict";
// The `permission` option: what task code in a worker may do, enforced by
// the worker runtime's own permission model.
//
// The policy has knitting's shape and meaning: "unsafe" (no restriction),
// "strict" (a hardened baseline), or an object of keys that override the
// baseline (read, write, net, env, run, workers, ffi, sys, wasi, console,
// ...). This module validates it into one runtime-neutral policy
// (`resolvePermission`); options/permission-runtimes.js says, per runtime,
// which keys it can enforce, refuses the others, and turns the policy into
// the runtime's start-up flags.

const { isAbsolute, join, resolve } = require("node:path");
const { fileURLToPath } = require("node:url");
const { optionError: codedOptionError, describe, checkKeys, boolean } = require("./checks.js");

const MODES = ["strict", "unsafe", "custom"];
const KEYS = [
  "mode",
  "console",
  "cwd",
  "read",
  "write",
  "denyRead",
  "denyWrite",
  "net",
  "denyNet",
  "allowImport",
  "env",
  "run",
  "denyRun",
  "workers",
  "ffi",
  "denyFfi",
  "sys",
  "denySys",
  "wasi",
  "node",
  "deno",
];
const NODE_KEYS = ["allowWorker", "allowChildProcess", "allowAddons", "allowFfi", "allowWasi"];
const DENO_KEYS = ["lock", "frozen", "allowRun"];
const SYS_NAMES = [
  "hostname",
  "osRelease",
  "osUptime",
  "loadavg",
  "networkInterfaces",
  "systemMemoryInfo",
  "uid",
  "gid",
];

/** A bad permission option: a TypeError with the options' code (options/checks.js). */
const optionError = (message) => codedOptionError(TypeError, `knitting-native: ${message}`);

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof URL);
}

/** A path (string, file: URL) made absolute against `cwd`; `~/` is the home directory. */
function toPath(value, name, cwd) {
  let path;
  if (value instanceof URL) {
    if (value.protocol !== "file:") throw optionError(`${name} must hold paths or file: URLs, got ${value.href}`);
    path = fileURLToPath(value);
  } else if (typeof value === "string" && value.trim() !== "") {
    path = value.trim();
    if (path.startsWith("file:")) path = fileURLToPath(path);
    const home = process.env.HOME;
    if (home && (path === "~" || path.startsWith("~/"))) path = join(home, path.slice(1));
  } else {
    throw optionError(`${name} must hold paths (non-empty strings) or file: URLs, got ${describe(value)}`);
  }
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
}

function unique(list) {
  return [...new Set(list)];
}

/** `true`, or a list of paths. */
function pathsOrAll(value, name, cwd) {
  if (value === true) return true;
  if (!Array.isArray(value)) throw optionError(`${name} must be true or an array of paths, got ${describe(value)}`);
  return unique(value.map((v, i) => toPath(v, `${name}[${i}]`, cwd)));
}

function paths(value, name, cwd) {
  if (!Array.isArray(value)) throw optionError(`${name} must be an array of paths, got ${describe(value)}`);
  return unique(value.map((v, i) => toPath(v, `${name}[${i}]`, cwd)));
}

function strings(value, name, allowed) {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && v.trim() !== "")) {
    throw optionError(`${name} must be an array of non-empty strings, got ${describe(value)}`);
  }
  const out = unique(value.map((v) => v.trim()));
  if (allowed !== undefined) {
    const bad = out.find((v) => !allowed.includes(v));
    if (bad !== undefined)
      throw optionError(`${name}: unknown name ${JSON.stringify(bad)}; allowed: ${allowed.join(", ")}`);
  }
  return out;
}

function stringsOrAll(value, name, allowed) {
  return value === true ? true : strings(value, name, allowed);
}

/**
 * The policy as the options give it, validated: null for "unsafe" (and the
 * default), else an object with every key filled in. List-valued keys are
 * `true` (everything) or an array; `given` holds the keys the user wrote, so
 * that a runtime refuses what was asked for, not the baseline's defaults.
 */
function resolvePermission(input) {
  if (input === undefined || input === "unsafe") return null;
  if (input === "strict") input = { mode: "strict" };
  if (!isPlainObject(input)) {
    throw optionError(
      `permission must be "unsafe", "strict" or a policy object { mode, read, write, net, env, ... ` +
        `}, got ${describe(input)}`,
    );
  }
  checkKeys(input, KEYS, "permission.");
  const mode = input.mode === undefined ? "strict" : input.mode;
  if (!MODES.includes(mode))
    throw optionError(
      `permission.mode must be one of ${MODES.map((m) => JSON.stringify(m)).join(", ")}, got ${describe(input.mode)}`,
    );
  const given = new Set(Object.keys(input).filter((k) => input[k] !== undefined && k !== "mode" && k !== "cwd"));
  if (mode === "unsafe") {
    // An unsafe policy restricts nothing; only `console` still means something.
    const extra = [...given].find((k) => k !== "console");
    if (extra !== undefined)
      throw optionError(
        `permission.${extra} has no effect with permission.mode "unsafe" (which allows everything); ` +
          `drop one of the two`,
      );
    if (input.console === undefined || input.console === true) return null;
    return { mode, given, unrestricted: true, console: false };
  }
  let cwd = process.cwd();
  if (input.cwd !== undefined) {
    if (typeof input.cwd !== "string" || input.cwd === "")
      throw optionError(`permission.cwd must be a directory path, got ${describe(input.cwd)}`);
    cwd = resolve(input.cwd);
  }
  const node = input.node === undefined ? {} : input.node;
  if (!isPlainObject(node))
    throw optionError(`permission.node must be an object { ${NODE_KEYS.join(", ")} }, got ${describe(node)}`);
  checkKeys(node, NODE_KEYS, "permission.node.");
  for (const key of NODE_KEYS) if (node[key] !== undefined) boolean(node[key], `permission.node.${key}`);
  const deno = input.deno === undefined ? {} : input.deno;
  if (!isPlainObject(deno))
    throw optionError(`permission.deno must be an object { ${DENO_KEYS.join(", ")} }, got ${describe(deno)}`);
  checkKeys(deno, DENO_KEYS, "permission.deno.");
  if (deno.frozen !== undefined) boolean(deno.frozen, "permission.deno.frozen");
  if (deno.allowRun !== undefined) boolean(deno.allowRun, "permission.deno.allowRun");
  if (deno.lock !== undefined && typeof deno.lock !== "boolean") toPath(deno.lock, "permission.deno.lock", cwd);

  const env = input.env === undefined ? {} : input.env;
  if (!isPlainObject(env)) throw optionError(`permission.env must be an object { allow, deny }, got ${describe(env)}`);
  checkKeys(env, ["allow", "deny", "files"], "permission.env.");
  if (env.files !== undefined) {
    throw optionError(
      "permission.env.files is not supported: workers get the host's environment (or worker.env); " +
        "load an env file into worker.env yourself",
    );
  }

  const policy = {
    mode,
    given,
    unrestricted: false,
    cwd,
    console: input.console === undefined ? mode === "unsafe" : boolean(input.console, "permission.console"),
    // knitting's baseline: read the working directory (its node_modules
    // included) and the task modules, write the working directory.
    read: input.read === undefined ? [cwd] : pathsOrAll(input.read, "permission.read", cwd),
    write: input.write === undefined ? [cwd] : pathsOrAll(input.write, "permission.write", cwd),
    denyRead: input.denyRead === undefined ? [] : paths(input.denyRead, "permission.denyRead", cwd),
    denyWrite: input.denyWrite === undefined ? [] : paths(input.denyWrite, "permission.denyWrite", cwd),
    net: input.net === undefined ? [] : stringsOrAll(input.net, "permission.net"),
    denyNet: input.denyNet === undefined ? [] : strings(input.denyNet, "permission.denyNet"),
    allowImport:
      input.allowImport === undefined
        ? ["deno.land", "esm.sh", "jsr.io"]
        : stringsOrAll(input.allowImport, "permission.allowImport"),
    envAllow: env.allow === undefined ? [] : stringsOrAll(env.allow, "permission.env.allow"),
    envDeny: env.deny === undefined ? [] : strings(env.deny, "permission.env.deny"),
    run:
      input.run !== undefined
        ? stringsOrAll(input.run, "permission.run")
        : node.allowChildProcess === true || deno.allowRun === true
          ? true
          : [],
    denyRun: input.denyRun === undefined ? [] : strings(input.denyRun, "permission.denyRun"),
    workers: input.workers !== undefined ? boolean(input.workers, "permission.workers") : node.allowWorker === true,
    ffi:
      input.ffi === undefined
        ? false
        : typeof input.ffi === "boolean"
          ? input.ffi
          : paths(input.ffi, "permission.ffi", cwd),
    denyFfi: input.denyFfi === undefined ? [] : paths(input.denyFfi, "permission.denyFfi", cwd),
    sys: input.sys === undefined ? [] : stringsOrAll(input.sys, "permission.sys", SYS_NAMES),
    denySys: input.denySys === undefined ? [] : strings(input.denySys, "permission.denySys", SYS_NAMES),
    wasi: input.wasi !== undefined ? boolean(input.wasi, "permission.wasi") : node.allowWasi === true,
    node,
    deno,
  };
  if (policy.ffi === false && (node.allowAddons === true || node.allowFfi === true)) policy.ffi = true;
  if (node.allowChildProcess !== undefined) given.add("run");
  if (node.allowWorker !== undefined) given.add("workers");
  if (node.allowWasi !== undefined) given.add("wasi");
  if (node.allowAddons !== undefined || node.allowFfi !== undefined) given.add("ffi");
  if (env.allow !== undefined) given.add("env.allow");
  if (env.deny !== undefined) given.add("env.deny");
  return policy;
}

module.exports = { resolvePermission, optionError, unique };
