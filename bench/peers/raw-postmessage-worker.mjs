// Worker side of the plain worker_threads + postMessage baseline (bodies:
// bench/lib/task-bodies.mjs); the message's fields say which task:
// add:  {id, a, b}  -> {id, r: a + b}
// echo: {id, v}     -> {id, r: v}
// spin: {id, i, ms} -> {id, r: i} after busy-spinning ms milliseconds (--report)
// work: {id, i, iters} -> {id, r: [i, µs]} after iters rounds of CPU work (cpu-bound)
import { parentPort } from "node:worker_threads";
import { add, echo, spin, work } from "../lib/task-bodies.mjs";

parentPort.on("message", (m) => {
  const r =
    m.a !== undefined
      ? add(m.a, m.b)
      : m.ms !== undefined
        ? spin(m.i, m.ms)
        : m.iters !== undefined
          ? work(m.i, m.iters)
          : echo(m.v);
  parentPort.postMessage({ id: m.id, r });
});
