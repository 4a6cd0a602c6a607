// The machine's floor for the cpu-bound workload: `threads` worker threads,
// each told once to run its share of a burst's work() calls back to back, and
// to answer once at the end. No per-call message, no queue, no scheduler:
// what is left over the ideal is the machine itself (two busy cores running
// slower than the one undisturbed core work() was calibrated on, the OS, V8).
// A pool's overhead over this row is what the pool costs.
import { Worker } from "node:worker_threads";

const SOURCE = `
import { parentPort } from "node:worker_threads";
const { work } = await import(${JSON.stringify(new URL("../lib/task-bodies.mjs", import.meta.url).href)});
parentPort.on("message", ({ from, to, step, iters }) => {
  let us = 0;
  for (let i = from; i < to; i += step) us += work(i, iters)[1];
  parentPort.postMessage(us);
});
parentPort.postMessage("ready");
`;

export async function createBareWorkers(threads) {
  const url = new URL(`data:text/javascript,${encodeURIComponent(SOURCE)}`);
  const workers = Array.from({ length: threads }, () => new Worker(url));
  const once = (w) =>
    new Promise((resolve, reject) => {
      w.once("message", resolve);
      w.once("error", reject);
    });
  await Promise.all(workers.map(once));
  return {
    /** `calls` work(i, iters) calls split evenly; resolves with the µs measured inside the calls. */
    async burst(calls, iters) {
      const parts = await Promise.all(
        workers.map((w, k) => {
          const answer = once(w);
          w.postMessage({ from: k, to: calls, step: threads, iters });
          return answer;
        }),
      );
      return parts.reduce((a, b) => a + b, 0);
    },
    close: () => Promise.all(workers.map((w) => w.terminate())),
  };
}
