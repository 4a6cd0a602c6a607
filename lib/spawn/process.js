"use strict";
// How a pool runs its workers as separate processes (worker.runtime
// "process", Linux). Calls still travel through shared memory, not pipes:
// the host maps one region (control region, then the payload region) from a
// memfd it hands each child as an inherited descriptor, or from a POSIX shm
// name the child reopens (worker.processSharedMemory). The IPC channel only
// carries the control messages of protocol/messages.js: start-up (the
// host's "start", the child's "mapped", "ready" or "init-error"),
// recycling and leaving, and pool.broadcast's runs (host/broadcast.js). The children run on Node, Bun or Deno
// (worker.processRuntime; runtimes/ says how each starts). Waits and wakes
// on the region go through the Rust shared
// futex (src/futex.rs): V8 sees the mapping as a non-shared ArrayBuffer, on
// which Atomics.wait throws and Atomics.notify wakes nobody.

const { CODE } = require("../errors.js");
const { spawn } = require("node:child_process");
const { EventEmitter } = require("node:events");
const { accessSync, constants } = require("node:fs");
const { join, delimiter } = require("node:path");
const native = require("../native/index.js");
const runtimes = require("../runtimes/index.js");
const { MSG, pack, unpack } = require("../protocol/messages.js");
const { permissionFlags, transportReads, PERMISSION_FLAG } = require("../options/permission-runtimes.js");

const PROCESS_WORKER_FILE = join(__dirname, "..", "worker", "process-main.js");
/** Set by worker/process-main.js: `isMain` is false in a worker process. */
const PROCESS_WORKER_MARK = Symbol.for("knitting-native.processWorker");
/** The child's descriptor for the inherited region: stdio [0, 1, 2, ipc, region]. */
const CHILD_MEMORY_FD = 4;
/** The payload region starts on a page of its own. */
const PAGE = 4096;
/**
 * Tells a worker process its host's pid (and, in named mode, the shm name
 * to remove should the host die first): "<pid>" or "<pid> <name>". In the
 * environment, so the worker arms its watch on the host (src/process/
 * host_watch.rs) before it reads any message; it removes the variable then.
 */
const HOST_ENV = "KNITTING_NATIVE_HOST";

/** The first executable called `name` on PATH, or null. */
function findOnPath(name) {
  for (const dir of (process.env.PATH || "").split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * The executable of the worker processes' runtime: worker.processExecutable,
 * else the host's own when the runtimes agree, else `<runtime>` on PATH.
 */
function resolveExecutable(proc) {
  const runtime = proc.runtime;
  if (proc.executable !== undefined) {
    try {
      accessSync(proc.executable, constants.X_OK);
    } catch (err) {
      throw unavailable(
        `worker.processRuntime "${runtime}": worker.processExecutable ${JSON.stringify(proc.executable)} ` +
          `is not an executable file (${err.code || err.message}); point it at the ${runtime} executable`,
      );
    }
    return proc.executable;
  }
  if (runtime === runtimes.host.name) return process.execPath;
  const found = findOnPath(runtime);
  if (found === null) {
    throw unavailable(
      `worker.processRuntime "${runtime}" is not available on this machine: no ${runtime} executable on PATH; ` +
        `install ${runtime} or set worker.processExecutable to its path`,
    );
  }
  return found;
}

function unavailable(message) {
  const err = new Error(`knitting-native: ${message}`);
  err.code = CODE.RUNTIME_UNAVAILABLE;
  return err;
}

/** Host processes with live regions: their names go when the host exits. */
const live = new Set();
let exitHookInstalled = false;
function closeAllOnExit() {
  for (const runtime of live) runtime.close();
}

/** One worker process, shaped like a `Worker` for the pool. */
class ProcessHandle extends EventEmitter {
  /** `serialization`: how the IPC channel carries messages (runtimes/index.js ipcBetween). */
  constructor(child, onMapped, serialization) {
    super();
    this.child = child;
    this.serialization = serialization;
    this.pid = child.pid;
    this.threadId = undefined;
    this.exited = false;
    this.exitPromise = new Promise((resolve) => {
      this.resolveExit = resolve;
    });
    child.on("message", (raw) => {
      const msg = unpack(raw).message;
      if (msg && msg.type === MSG.MAPPED) onMapped(this);
      else this.emit("message", msg);
    });
    child.on("error", (err) => {
      if (child.pid === undefined) {
        // A failed spawn (a missing command prefix, say) may never emit exit.
        // Bun reports it inside spawn(), before the pool listens: a tick later.
        process.nextTick(() => {
          const message = `knitting-native: cannot start a worker process (${child.spawnfile}): ${err.message}`;
          this.emit("error", new Error(message, { cause: err }));
          this.exit(null, null);
        });
      } else {
        this.emit("error", err);
      }
    });
    child.on("exit", (code, signal) => this.exit(code, signal));
  }

  exit(code, signal) {
    if (this.exited) return;
    this.exited = true;
    this.emit("exit", code, signal);
    this.resolveExit(code);
  }

  /** The process and its IPC channel stop holding the host's event loop (host/liveness.js). */
  unref() {
    // A child that never started holds nothing (and Deno's unref() throws on it).
    if (this.child.pid === undefined) return;
    this.child.unref();
    runtimes.host.unrefChannel(this.child);
  }

  /** A message to the worker process (as Worker.postMessage); dropped once it is gone. */
  postMessage(message) {
    if (!this.exited && this.child.connected) {
      this.child.send(pack(message, this.serialization), undefined, undefined, () => {});
    }
  }

  /** Ends the process at once (it may be stuck in a synchronous loop). */
  terminate() {
    if (!this.exited) this.child.kill("SIGKILL");
    return this.exitPromise;
  }
}

class ProcessRuntime {
  constructor(worker) {
    const proc = worker.process;
    if (process.platform !== "linux" || typeof native.ProcessMemory !== "function") {
      throw unavailable(
        `worker.runtime "process" needs Linux (shared mappings and the shared futex); this is ${process.platform}`,
      );
    }
    this.child = runtimes.runtime(proc.runtime);
    this.executable = resolveExecutable(proc);
    // V8's serializer between two Node processes; JSON with codec bytes otherwise (protocol/messages.js).
    this.serialization = runtimes.ipcBetween(this.child);
    // The worker checks each task's function text against the host's, which
    // only means something when both runtimes print functions alike.
    this.sameSourceText = this.child.sourceText === runtimes.host.sourceText;
    // The permission option (options/permission.js) gives each worker process its
    // runtime's flags; the host's own permission flags are then not copied.
    this.permission = worker.permission === undefined ? null : worker.permission;
    this.restricted = this.permission !== null && !this.permission.unrestricted;
    let execArgv =
      proc.execArgv !== undefined ? proc.execArgv : this.child.defaultExecArgv(this.child === runtimes.host);
    if (this.restricted && proc.execArgv === undefined)
      execArgv = execArgv.filter((flag) => !PERMISSION_FLAG.test(flag));
    this.prefix = proc.commandPrefix;
    this.execArgv = execArgv;
    this.args = proc.args;
    this.command = null; // built at the first spawn, once the task modules are known
    this.env = proc.env !== undefined ? proc.env : process.env;
    this.sharedMemory = proc.sharedMemory;
    this.memory = null;
    this.unmapped = new Set(); // children started under the shm name that have not mapped it yet
  }

  /** One mapping: the control region, then the payload region (fixed size). */
  createMemory(controlBytes, payloadInitialBytes, payloadMaxByteLength) {
    // The payload region cannot grow across processes, so it is mapped at
    // its maximum; its pages cost nothing until a payload touches them.
    const payloadOffset = Math.ceil(controlBytes / PAGE) * PAGE;
    const { mode, namePrefix } = this.sharedMemory;
    this.memory = native.ProcessMemory.create(payloadOffset + payloadMaxByteLength, mode, namePrefix);
    this.layout = { controlBytes, payloadOffset, payloadBytes: payloadMaxByteLength };
    live.add(this);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on("exit", closeAllOnExit);
    }
    return {
      control: this.memory.buffer(0, controlBytes),
      payload: this.memory.buffer(payloadOffset, payloadMaxByteLength),
    };
  }

  /** Wakes a worker process (or `count` of them) parked (in Rust) on word `index`. */
  wakeWorker(i32, index, count = 1) {
    this.memory.wake(index, count);
  }

  /** Wakes whoever waits on word `index` of the payload region (a stream's channel): words of the one mapping. */
  wakePayloadWord(index) {
    this.memory.wake(this.layout.payloadOffset / 4 + index, 1);
  }

  spawn(workerData) {
    const name = this.memory.name;
    let region;
    const stdio = ["ignore", "inherit", "inherit", "ipc"];
    if (this.sharedMemory.mode === "inherit") {
      region = { fd: CHILD_MEMORY_FD };
      stdio.push(this.memory.fd);
    } else {
      // Once the name is gone (every first worker mapped it), a replacement
      // reopens the host's descriptor by its /proc path.
      region = { name: name !== null ? name : this.memory.procPath };
    }
    if (this.command === null) {
      const hrefs = [
        ...workerData.tasks.map((t) => t.href),
        workerData.bootstrap ? workerData.bootstrap.href : undefined,
      ];
      const transport = { read: transportReads(native[Symbol.for("knitting-native.addonFile")], hrefs) };
      const flags = permissionFlags(this.permission, this.child.name, transport);
      const runtimeCommand = this.child.workerCommand(
        this.executable,
        [...flags, ...this.execArgv],
        PROCESS_WORKER_FILE,
      );
      this.command = [...this.prefix, ...runtimeCommand, ...this.args];
    }
    const [file, ...args] = this.command;
    const cleanup = region.name !== undefined && !region.name.startsWith("/proc/") ? ` ${region.name}` : "";
    const env = { ...this.env, [HOST_ENV]: `${process.pid}${cleanup}` };
    const child = spawn(file, args, { stdio, env, serialization: this.serialization });
    const handle = new ProcessHandle(child, (h) => this.mapped(h), this.serialization);
    if (name !== null) this.unmapped.add(handle);
    handle.on("exit", () => this.mapped(handle));
    const tasks = this.sameSourceText
      ? workerData.tasks
      : workerData.tasks.map((entry) => ({ ...entry, source: null }));
    const consoleOn = this.permission === null || this.permission.console;
    const setup = {
      ...workerData,
      tasks,
      control: undefined,
      payload: undefined,
      region,
      ...this.layout,
      console: consoleOn,
    };
    // A child that could not start has nothing to send to (Deno gives it no
    // send()): its "error" reports why.
    if (child.pid === undefined) return handle;
    child.send(pack({ type: MSG.START, setup }, this.serialization), (err) => {
      // The child died before it could read: its exit reports that.
      if (err) handle.emit("error", err);
    });
    return handle;
  }

  /** A child mapped the region (or exited): unlink the name once nobody needs it. */
  mapped(handle) {
    if (!this.unmapped.delete(handle)) return;
    if (this.unmapped.size === 0) this.memory.unlink();
  }

  /** The pool is done: the name and the host's descriptor go (mappings stay until collected). */
  close() {
    if (this.memory === null || !live.has(this)) return;
    live.delete(this);
    this.memory.close();
  }
}

module.exports = { ProcessRuntime, PROCESS_WORKER_MARK, HOST_ENV };
