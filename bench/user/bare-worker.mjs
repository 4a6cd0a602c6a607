// The floor: a bare worker thread told once to run its share of a burst back
// to back, answering once at the end: no pool, no per-call message.
//
// Its loop calls the kernel through a call site that has seen several
// functions, so V8 does not inline the kernel into the loop (inlined, on
// Node 24 the loop stays in Maglev's code: 1.5-2.7x slower,
// docs/cpu-tiering.md). The floor is the kernel at its best.
import { parentPort } from "node:worker_threads";
import { hash } from "./kernel.mjs";

const call = (f, a) => f(a);
for (const g of [(a) => a, (a) => !a, (a) => [a], (a) => typeof a, (a) => a === 0, (a) => ({ a })]) {
  for (let i = 0; i < 30; i++) call(g, i);
}

parentPort.on("message", ({ calls, n }) => {
  let x = 0;
  for (let i = 0; i < calls; i++) x ^= call(hash, n);
  parentPort.postMessage(x);
});
