"use strict";
// A pool worker thread: serves its lane (serve.js) over the pool's
// SharedArrayBuffers, parking in Atomics.waitAsync.

const { workerData, parentPort } = require("node:worker_threads");
const { serveLane } = require("./serve.js");

const i32 = new Int32Array(workerData.control);

// A pending Atomics.waitAsync does not keep a worker's event loop alive; the
// port does. The host ends workers with terminate().
parentPort.on("message", () => {});

serveLane(workerData, {
  sleep(index, value, wake) {
    const wait = Atomics.waitAsync(i32, index, value);
    if (wait.async) wait.value.then(wake);
    else setImmediate(wake);
  },
  wakeWord: (index, count = 1) => Atomics.notify(i32, index, count),
  report: (message) => parentPort.postMessage(message),
});
