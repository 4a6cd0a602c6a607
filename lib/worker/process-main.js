"use strict";
// A pool worker process (worker.runtime "process"): maps the host's region,
// then serves its lane (worker/serve.js). It parks on a Rust thread that sleeps on
// the shared futex (src/process/waiter.rs), so its event loop keeps running
// while it waits. It ends the moment the host is gone, whatever its JS is
// doing: the addon watches the host from a thread of its own (src/process/
// host_watch.rs), armed first thing here.
// The same file runs under Node, Bun and Deno (worker.processRuntime).

const native = require("../native/index.js");

// First: a host that dies from now on ends this process at once (the
// kernel's parent-death signal, and a thread on a pidfd of the host), and
// one that is gone already ends it here. Left out of what task code sees.
const HOST_ENV = "KNITTING_NATIVE_HOST";
const hostSpec = process.env[HOST_ENV];
if (hostSpec !== undefined) {
  delete process.env[HOST_ENV];
  const [hostPid, cleanupName] = hostSpec.split(" ");
  native.watchHost(Number(hostPid), cleanupName === undefined ? null : cleanupName);
}

// Before any task module loads: `isMain` is false in here.
globalThis[Symbol.for("knitting-native.processWorker")] = true;
require("../tasks/worker-context.js").markPoolWorker();

const { serveLane } = require("./serve.js");
const { ProcessRefs } = require("../payload/shared-refs.js");
const { MSG, RECYCLE_EXIT_CODES, pack, unpack } = require("../protocol/messages.js");
const { invoke } = require("./invoke.js");

// Taken before any task module loads: task code may replace process.exit.
const processExit = process.exit;

/** The host's serialization, learnt from its "start" message: answers go the same way. */
let serialization = "advanced";

/**
 * Sends to the host. A host that is gone (killed) is not an error here: the
 * message is dropped, and "disconnect" ends this process (a send into the
 * closed channel would otherwise raise an unhandled EPIPE).
 */
function send(message) {
  if (!process.connected) return;
  process.send(pack(message, serialization), undefined, undefined, () => {});
}

/**
 * A start-up error from the permission option (options/permission.js): Node's
 * message names neither the file nor the option, so this one does.
 */
function explainDenied(message) {
  const err = message.error;
  if (message.type !== MSG.INIT_ERROR || err === null || typeof err !== "object" || err.code !== "ERR_ACCESS_DENIED")
    return message;
  const what =
    err.permission === "FileSystemRead" ? "read" : err.permission === "FileSystemWrite" ? "write" : err.permission;
  const explained = new Error(
    `knitting-native: a worker process could not start: its permission policy denies ${what} of ` +
      `${err.resource || "a resource"} ` +
      `(Node's ${err.code}). A task module's own imports and the files it reads while loading must ` +
      `be inside permission.read.`,
    { cause: err },
  );
  return { ...message, error: explained, code: "ERR_ACCESS_DENIED" };
}

/** Sends a start-up message; an unclonable error still reaches the host. */
function report(message) {
  message = explainDenied(message);
  try {
    send(message);
  } catch {
    const error = message.error;
    send({
      type: message.type,
      code: message.code,
      error: new Error(String(error && error.message ? error.message : error)),
    });
  }
}

/** The shm name this worker opened (named mode), until the host unlinks it. */
let shmName = null;

function start(setup) {
  const { region, controlBytes, payloadOffset, payloadBytes } = setup;
  // permission.console false: before any task module loads.
  if (setup.console === false) require("./exit-guard.js").muteConsole();
  const length = payloadOffset + payloadBytes;
  if (region.name !== undefined && !region.name.startsWith("/proc/")) shmName = region.name;
  let memory;
  try {
    memory =
      region.fd !== undefined
        ? native.ProcessMemory.openFd(region.fd, length)
        : native.ProcessMemory.openNamed(region.name, length);
  } catch (err) {
    report({
      type: MSG.INIT_ERROR,
      error: new Error(`knitting-native: a worker process could not map the pool's shared memory: ${err.message}`),
    });
    return;
  }
  if (!process.connected) return hostGone();
  send({ type: MSG.MAPPED });
  const control = memory.buffer(0, controlBytes);
  const payload = memory.buffer(payloadOffset, payloadBytes);
  let pending = null;
  const waiter = new native.WordWaiterHandle(memory, () => {
    const wake = pending;
    pending = null;
    if (wake !== null) wake();
  });
  served = serveLane(
    { ...setup, control, payload },
    {
      sleep(index, value, wake) {
        pending = wake;
        waiter.park(index, value);
      },
      wakeWord: (index, count = 1) => memory.wake(index, count),
      // A streaming call's wait for its caller (protocol/stream.js): a park thread of its own,
      // so that one stream's wait never holds up another's or the serve loop's.
      waitPayloadWord(index, value) {
        return new Promise((resolve) => {
          const waiter = new native.WordWaiterHandle(memory, () => {
            waiter.close();
            resolve();
          });
          waiter.park(payloadOffset / 4 + index, value >>> 0);
        });
      },
      shared: new ProcessRefs(),
      report,
      // A call claimed after the host died is never started: checkHost()
      // does not return once the watch saw the host go (it is ending us).
      runTask(fn, _name, arg, toolkit) {
        native.checkHost();
        return invoke(fn, arg, toolkit);
      },
      // Left the claimants or its lane (recycling): this process ends
      // itself, with the code that tells the host why (protocol/messages.js).
      end: (reason) => processExit.call(process, RECYCLE_EXIT_CODES[reason]),
    },
  );
}

let started = false;
let served = null; // serveLane's handle: an elastic pool's "leave" (worker/serve.js leave())
// The listener also keeps the channel, and so this process, alive.
process.on("message", (raw) => {
  const got = unpack(raw);
  const message = got.message;
  if (!started) serialization = got.serialization;
  if (!started && message && message.type === MSG.START) {
    started = true;
    start(message.setup);
  } else if (served !== null && message && message.type === MSG.LEAVE) {
    served.leave();
  } else if (served !== null && message && message.type === MSG.END) {
    served.stop();
  } else if (served !== null && message && message.type === MSG.BROADCAST) {
    served.broadcast(message, send);
  }
});
/**
 * The host is gone. If it was killed before it unlinked the shm name (its
 * workers were still starting), nobody else will: this worker removes it.
 */
function hostGone() {
  if (shmName !== null) native.ProcessMemory.unlinkName(shmName);
  process.exit(0);
}
process.on("disconnect", hostGone);

// The channel's end of file is not always seen: a runtime that lets the
// host's end of the IPC socket leak into a worker process (Deno 2.9 does
// when it starts two at once) keeps that channel open after the host dies,
// and the worker would live on, orphaned. So the worker also watches its
// parent: once it is re-parented (the host, or the command prefix that runs
// it, is gone) it ends. Checked every second by a timer that holds nothing open.
const parent = process.ppid;
const PARENT_CHECK_MS = 1000;
setInterval(() => {
  if (process.ppid !== parent) hostGone();
}, PARENT_CHECK_MS).unref();
