"use strict";
// A pool worker process (worker.runtime "process"): maps the host's region,
// then serves its lane (serve.js). It parks on a Rust thread that sleeps on
// the shared futex (src/process/waiter.rs), so its event loop keeps running
// while it waits. It exits when the host goes away (the IPC channel closes).

// Before any task module loads: `isMain` is false in here.
globalThis[Symbol.for("knitting-native.processWorker")] = true;

const native = require("./native.js");
const { serveLane } = require("./serve.js");

/** Sends a start-up message; an unclonable error still reaches the host. */
function report(message) {
  try {
    process.send(message);
  } catch {
    const error = message.error;
    process.send({ type: message.type, error: new Error(String(error && error.message ? error.message : error)) });
  }
}

function start(setup) {
  const { region, controlBytes, payloadOffset, payloadBytes } = setup;
  const length = payloadOffset + payloadBytes;
  let memory;
  try {
    memory = region.fd !== undefined ? native.ProcessMemory.openFd(region.fd, length) : native.ProcessMemory.openNamed(region.name, length);
  } catch (err) {
    report({ type: "init-error", error: new Error(`knitting-native: a worker process could not map the pool's shared memory: ${err.message}`) });
    return;
  }
  process.send({ type: "mapped" });
  const control = memory.buffer(0, controlBytes);
  const payload = memory.buffer(payloadOffset, payloadBytes);
  let pending = null;
  const waiter = new native.WordWaiterHandle(memory, () => {
    const wake = pending;
    pending = null;
    if (wake !== null) wake();
  });
  serveLane(
    { ...setup, control, payload },
    {
      sleep(index, value, wake) {
        pending = wake;
        waiter.park(index, value);
      },
      wakeWord: (index, count = 1) => memory.wake(index, count),
      report,
    },
  );
}

let started = false;
// The listener also keeps the channel, and so this process, alive.
process.on("message", (message) => {
  if (!started && message && message.type === "start") {
    started = true;
    start(message.setup);
  }
});
process.on("disconnect", () => process.exit(0));
