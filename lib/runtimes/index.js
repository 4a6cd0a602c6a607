"use strict";
// The runtime this code runs on (Node.js, Bun or Deno) and the one a worker
// process runs on (worker.processRuntime). Every difference between them
// lives in one module per runtime beside this file; the rest of the package
// asks here.

const RUNTIMES = {
  node: require("./node.js"),
  bun: require("./bun.js"),
  deno: require("./deno.js"),
};

/** Bun and Deno both set process.versions.node; their own global tells them apart. */
function detect() {
  if (typeof globalThis.Bun !== "undefined" && process.versions.bun !== undefined) return RUNTIMES.bun;
  if (typeof globalThis.Deno !== "undefined" && process.versions.deno !== undefined) return RUNTIMES.deno;
  return RUNTIMES.node;
}

const host = detect();

/** The runtime called `name` ("node" | "bun" | "deno"). */
function runtime(name) {
  return RUNTIMES[name];
}

/** The IPC serialization between this host and a worker process of `child`. */
function ipcBetween(child) {
  return host.ipc === "advanced" && child.ipc === "advanced" ? "advanced" : "json";
}

module.exports = { host, runtime, ipcBetween };
