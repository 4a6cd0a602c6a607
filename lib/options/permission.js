"use strict";
// The `permission` option: what task code in a worker may do, enforced by
// the worker runtime's own permission model.
//
// The policy has knitting's shape and meaning: "unsafe" (no restriction),
// "strict" (a hardened baseline), or an object of keys that override the
// baseline (read, write, net, env, run, workers, ffi, sys, wasi, console,
// ...). `resolvePermission` validates it into one runtime-neutral policy;
// each runtime then has one entry in RUNTIMES below that says which keys it
// can enforce, refuses (a TypeError at createPool, naming the key and the
// runtime) those it can only express all-or-nothing or not at all, and turns
// the rest into its own start-up flags. A runtime without an entry accepts
// only "unsafe".

const { CODE } = require("../errors.js");
const { dirname, isAbsolute, join, resolve } = require("node:path");
const { fileURLToPath } = require("node:url");
const { host } = require("../runtimes/index.js");

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

function optionError(message) {
  const err = new TypeError(`knitting-native: ${message}`);
  err.code = CODE.INVALID_OPTION;
  return err;
}

function describe(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  if (typeof value === "number" || typeof value === "boolean") return `${typeof value} ${value}`;
  return typeof value;
}

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof URL);
}

function checkKeys(object, allowed, where) {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) {
      throw optionError(`unknown option ${where}${key}; allowed: ${allowed.map((k) => where + k).join(", ")}`);
    }
  }
}

function boolean(value, name) {
  if (typeof value !== "boolean") throw optionError(`${name} must be a boolean, got ${describe(value)}`);
  return value;
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

function refused(key, runtime, why) {
  return optionError(`permission.${key} cannot be enforced by ${runtime}: ${why}`);
}

const nonEmpty = (list) => list === true || list.length > 0;

/** The process-wide Node permission model, as this Node spells it. */
function nodePermissionFlag() {
  const flags = process.allowedNodeEnvironmentFlags;
  if (flags.has("--permission")) return "--permission";
  if (flags.has("--experimental-permission")) return "--experimental-permission";
  return null;
}

/**
 * Node.js worker processes: the permission model (--permission, or
 * --experimental-permission on Node 20 and 22.0-22.12). It scopes file reads
 * and writes to paths; child processes, worker threads, addons and WASI are
 * all-or-nothing; the network is all-or-nothing where --allow-net exists
 * (Node 25) and not restricted at all before; the environment, system
 * information and import hosts are not in it.
 */
const nodeProcess = {
  name: () => `Node.js ${process.version} worker processes`,
  check(policy) {
    const runtime = this.name();
    const given = policy.given;
    // The flags below are what the host's own Node.js offers; a Bun or Deno
    // host cannot tell what the worker processes' Node.js has.
    if (host.name !== "node") {
      throw optionError(
        "permission for Node.js worker processes needs a Node.js host (it uses the permission flags of the " +
          `host's own Node.js); this host runs ${host.name} ${host.version()}`,
      );
    }
    if (nodePermissionFlag() === null)
      throw refused([...given][0] || "mode", runtime, "this Node.js has no permission model");
    if (nonEmpty(policy.denyRead))
      throw refused(
        "denyRead",
        runtime,
        "Node's permission model has no deny lists; allow only what may be read (permission.read)",
      );
    if (nonEmpty(policy.denyWrite))
      throw refused(
        "denyWrite",
        runtime,
        "Node's permission model has no deny lists; allow only what may be written (permission.write)",
      );
    const hasNet = process.allowedNodeEnvironmentFlags.has("--allow-net");
    if (given.has("net") && policy.net !== true) {
      throw refused(
        "net",
        runtime,
        hasNet
          ? "--allow-net is all-or-nothing (no host list); use net: true or leave net out (no network)"
          : "this Node.js cannot restrict the network at all (--allow-net arrives in Node.js 25); " +
              "use net: true, or an OS sandbox through worker.processCommandPrefix",
      );
    }
    if (nonEmpty(policy.denyNet)) throw refused("denyNet", runtime, "Node's permission model has no network deny list");
    if (given.has("env.allow") && policy.envAllow !== true)
      throw refused(
        "env.allow",
        runtime,
        "Node's permission model does not cover environment variables; pass only the variables a " +
          "worker may see through worker.env",
      );
    if (nonEmpty(policy.envDeny))
      throw refused(
        "env.deny",
        runtime,
        "Node's permission model does not cover environment variables; pass only the variables a " +
          "worker may see through worker.env",
      );
    if (Array.isArray(policy.run) && policy.run.length > 0)
      throw refused(
        "run",
        runtime,
        "--allow-child-process is all-or-nothing (no list of commands); use run: true or leave run out",
      );
    if (nonEmpty(policy.denyRun))
      throw refused("denyRun", runtime, "--allow-child-process is all-or-nothing (no deny list)");
    if (given.has("ffi") && policy.ffi !== true) {
      throw refused(
        "ffi",
        runtime,
        "the pool's shared-memory transport is a native addon, so worker processes start with " +
          "--allow-addons, which Node applies to every addon (no list, no way to drop it after " +
          "start-up); use ffi: true or leave ffi out",
      );
    }
    if (nonEmpty(policy.denyFfi)) throw refused("denyFfi", runtime, "--allow-addons is all-or-nothing (no deny list)");
    if (given.has("sys") && policy.sys !== true)
      throw refused("sys", runtime, "Node's permission model does not cover system information");
    if (nonEmpty(policy.denySys))
      throw refused("denySys", runtime, "Node's permission model does not cover system information");
  },
  /**
   * The flags for a worker process. `transport`: what the pool itself must
   * read in the worker (its own files, the addon, the task modules).
   */
  flags(policy, transport) {
    const out = [nodePermissionFlag()];
    if (policy.read === true) out.push("--allow-fs-read=*");
    else for (const path of unique([...policy.read, ...transport.read])) out.push(`--allow-fs-read=${path}`);
    if (policy.write === true) out.push("--allow-fs-write=*");
    else for (const path of policy.write) out.push(`--allow-fs-write=${path}`);
    if (policy.run === true) out.push("--allow-child-process");
    if (policy.workers) out.push("--allow-worker");
    if (policy.wasi) out.push("--allow-wasi");
    if (policy.net === true && process.allowedNodeEnvironmentFlags.has("--allow-net")) out.push("--allow-net");
    // The exception: the transport is an addon (and a user's ffi: true asks for the same).
    out.push("--allow-addons");
    return out;
  },
};

/**
 * Worker threads share the host's process, and Node's permission model is
 * process-wide: no restriction on files, network, environment, processes or
 * addons can be given to one thread. So every policy that restricts
 * something ("strict", its baseline, any list) is refused here, by the key
 * the user wrote when there is one; what is left for threads is a policy
 * that restricts nothing but the console (`{ mode: "unsafe", console: false }`,
 * accepted before this check). The exit guard (worker/exit-guard.js) is on in
 * every thread worker, policy or not.
 */
const nodeThread = {
  name: () => 'worker threads (worker.runtime "thread": one process, no sandbox)',
  check(policy) {
    const scoped = [
      "read",
      "write",
      "denyRead",
      "denyWrite",
      "net",
      "denyNet",
      "env.allow",
      "env.deny",
      "run",
      "denyRun",
      "workers",
      "ffi",
      "denyFfi",
      "sys",
      "denySys",
      "wasi",
    ];
    const key = scoped.find((k) => policy.given.has(k));
    const what = key !== undefined ? `permission.${key}` : `permission (mode "${policy.mode}")`;
    throw optionError(
      `${what} cannot be enforced by ${this.name()}: threads share the host's process and Node's ` +
        `permission model is per process, so a thread worker would run unrestricted. Use worker.runtime ` +
        `"process" for a policy on files, network, processes or addons; on threads only ` +
        `{ mode: "unsafe", console: false } (muting the console) is accepted`,
    );
  },
};

/**
 * One entry per runtime. A process runtime's entry has `check(policy)`
 * (throws the refusal) and `flags(policy, transport)` (its command-line
 * flags); `deno` and `bun` have none yet, so they accept only "unsafe".
 */
const RUNTIMES = {
  thread: nodeThread,
  node: nodeProcess,
};

/**
 * Refuses at createPool what `runtime` ("thread", or a process runtime:
 * "node", "deno", "bun") cannot enforce of `policy`; `inline`: the pool
 * runs calls in the host too (the inliner), where no policy applies.
 */
function checkPermission(policy, runtime, inline) {
  if (policy === null || policy.unrestricted) return;
  if (inline) {
    throw optionError(
      "permission cannot be enforced with inliner: the inline lane runs calls in the host, under " +
        "the host's own permissions; drop one of the two",
    );
  }
  const entry = RUNTIMES[runtime];
  if (entry === undefined) {
    throw optionError(
      `permission is not supported yet for worker.processRuntime "${runtime}" (only "unsafe"); its ` +
        `permission flags are not mapped`,
    );
  }
  entry.check(policy);
}

/** What a worker process must read to run at all: the pool's own files, the addon, the modules it imports. */
function transportReads(addonFile, hrefs) {
  const lib = dirname(__dirname);
  const root = dirname(lib);
  const read = [
    lib, // lib/: the worker's entry and what it requires
    join(root, "package.json"), // the package's "type" and "exports", read when task modules import it
    join(root, "index.js"),
    join(root, "index.mjs"),
  ];
  if (addonFile !== undefined) read.push(addonFile.endsWith(".node") ? addonFile : dirname(addonFile));
  for (const href of hrefs) {
    if (typeof href === "string" && href.startsWith("file:")) read.push(fileURLToPath(href));
  }
  return unique(read);
}

/** The command-line flags of a worker process of `runtime` under `policy` (none for null). */
function permissionFlags(policy, runtime, transport) {
  if (policy === null || policy.unrestricted) return [];
  return RUNTIMES[runtime].flags(policy, transport);
}

/** Flags of a permission model: a worker's own flags may not fight the policy. */
const PERMISSION_FLAG = new RegExp(
  "^--(permission|experimental-permission|allow-fs-read|allow-fs-write|allow-child-process|allow-worker|" +
    "allow-addons|allow-wasi|allow-net|allow-inspector)(=|$)",
);

module.exports = { resolvePermission, checkPermission, permissionFlags, transportReads, PERMISSION_FLAG, RUNTIMES };
