// The far end of bench/latency-probe.mjs --floor: answers each ping on word 0
// with a pong on word 1, waiting as the host does (workerData.mode).
import { workerData } from "node:worker_threads";
import { createRequire } from "node:module";

const native = createRequire(import.meta.url)("../../lib/native/index.js");
const i32 = new Int32Array(workerData.sab);
const { mode } = workerData;
const STOP = -1;

for (let r = 0; ; r++) {
  const ping = 2 * r + 1;
  for (let seen = Atomics.load(i32, 0); seen !== ping && seen !== STOP; seen = Atomics.load(i32, 0)) {
    if (mode === "wait") Atomics.wait(i32, 0, seen);
    else if (mode === "yield") native.yieldNow();
  }
  if (Atomics.load(i32, 0) === STOP) break;
  Atomics.store(i32, 1, ping + 1);
  if (mode === "wait") Atomics.notify(i32, 1);
}
