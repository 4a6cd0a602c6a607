"use strict";
// node:v8, loaded on first use. Requiring it in a worker also loads four
// internal modules (heap_utils, promise_hooks, stream_base_commons, report)
// that a worker compiles from source: measured 2026-12-06, Node 20.20.2,
// 2-vCPU VM, a worker's require of lib/worker/serve.js took 3.9 ms more with it
// (node --cpu-prof bench/user/startup.mjs). Most calls never need it: only
// values the wire format has no tag for, cycles, and the heap-size recycle
// limit do.

let v8 = null;
const load = () => {
  if (v8 === null) v8 = require("node:v8");
  return v8;
};

module.exports = {
  serialize: (value) => load().serialize(value),
  deserialize: (bytes) => load().deserialize(bytes),
  usedHeapSize: () => load().getHeapStatistics().used_heap_size,
};
