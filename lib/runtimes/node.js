"use strict";
// What is particular to Node.js, as host and as the runtime of worker
// processes. The other runtimes (bun.js, deno.js) answer the same questions;
// index.js picks the one the host runs on.

const name = "node";

/** The host's own version, for messages. */
function version() {
  return process.versions.node;
}

// Host flags a worker process should not copy: a second inspector on the
// same port fails to start (and a debugger attaches to the host, not it);
// the host's own entry (an --eval script, --test, --watch) is not the
// worker's.
const DROPPED_FLAG = new RegExp(
  "^--(inspect|inspect-brk|inspect-wait|inspect-port|debug|debug-brk|debug-port|" +
    "test|test-[a-z-]+|watch|watch-path|watch-preserve-output)(=|$)",
);
const FLAG_WITH_VALUE = new Set([
  "-e",
  "--eval",
  "-p",
  "--print",
  "--inspect-port",
  "--debug-port",
  "--watch-path",
  "--test-name-pattern",
  "--test-reporter",
  "--test-reporter-destination",
]);

/** The host's process.execArgv without what a worker process must not inherit. */
function inheritedExecArgv() {
  const out = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (FLAG_WITH_VALUE.has(flag)) {
      i++; // its value is the next element
      continue;
    }
    if (DROPPED_FLAG.test(flag) || /^--(eval|print)=/.test(flag)) continue;
    out.push(flag);
  }
  return out;
}

/** A worker process's flags when worker.execArgv is not given: a Node host's own, filtered; none from another host. */
function defaultExecArgv(hostIsSame) {
  return hostIsSame ? inheritedExecArgv() : [];
}

/** How a worker process of this runtime starts. */
function workerCommand(executable, flags, file) {
  return [executable, ...flags, file];
}

/** Function.prototype.toString prints a function's source as written (V8). */
const sourceText = "exact";

/** Start-up messages use V8's serializer only between two Node processes. */
const ipc = "advanced";

/** Worker threads honour `resourceLimits` (V8 heap limits per isolate). */
function threadOptions(resourceLimits) {
  return { resourceLimits };
}

/** The IPC channel of a child process stops holding the event loop. */
function unrefChannel(child) {
  if (child.channel) child.channel.unref();
}

/** A worker thread needs no adjustment here: "exit" comes after terminate() returns. */
function threadWorker(worker) {
  return worker;
}

module.exports = {
  threadWorker,
  unrefChannel,
  name,
  version,
  defaultExecArgv,
  workerCommand,
  ipc,
  sourceText,
  threadOptions,
  threadResourceLimits: true,
  // Long decoded strings as external strings (lib/codec/long-string.js): Node
  // collects them in time (20,000 strings of 64 KiB, none kept: rss 121 MiB at the end on
  // Node 24.19, 68 MiB more than before on Node 20.20).
  externalStrings: true,
  // Large binary results leave a worker thread as moved copies (codec/transfer.js MOVE_COPY_MIN):
  // the host neither copies nor allocates them (1 MiB echo 2.2k -> 3.2k calls/s in a fresh process).
  moveResultCopies: true,
};
