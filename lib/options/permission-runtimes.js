"use strict";
// The `permission` policy (options/permission.js) on each worker runtime: one
// entry in RUNTIMES per runtime says which keys it can enforce, refuses at
// createPool (a TypeError naming the key and the runtime) those it can only
// express all-or-nothing or not at all, and turns the rest into its start-up
// flags. A runtime without an entry accepts only "unsafe".

const { dirname, join } = require("node:path");
const { fileURLToPath } = require("node:url");
const { host } = require("../runtimes/index.js");
const { optionError, unique } = require("./permission.js");

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

module.exports = { checkPermission, permissionFlags, transportReads, PERMISSION_FLAG, RUNTIMES };
