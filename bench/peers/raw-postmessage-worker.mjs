// Worker side of the plain worker_threads + postMessage baseline.
// add:  {id, a, b} -> {id, r: a + b}
// echo: {id, v}    -> {id, r: v}
import { parentPort } from "node:worker_threads";

parentPort.on("message", (m) => {
  parentPort.postMessage({ id: m.id, r: m.a !== undefined ? m.a + m.b : m.v });
});
