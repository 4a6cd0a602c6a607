// Worker side of the plain worker_threads + postMessage baseline.
// add:  {id, a, b}  -> {id, r: a + b}
// echo: {id, v}     -> {id, r: v}
// spin: {id, i, ms} -> {id, r: i} after busy-spinning ms milliseconds (--report)
import { parentPort } from "node:worker_threads";
import { busy } from "../lib/busy.mjs";

parentPort.on("message", (m) => {
  parentPort.postMessage({ id: m.id, r: m.a !== undefined ? m.a + m.b : m.ms !== undefined ? busy(m.i, m.ms) : m.v });
});
