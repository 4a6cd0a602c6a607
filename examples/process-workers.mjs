// Process workers: each worker is its own Node.js process (isolation: a task
// that crashes or leaks takes only its process down), while calls still
// travel through shared memory mapped into every process, not pipes.
//
//   node examples/process-workers.mjs
//
// This module is the task module (imported by every worker process too), so
// the pool is created behind `isMain`.
import { createPool, task, isMain } from "knitting-native";

/** Which process ran the call, and a little CPU work on the argument. */
export const collatz = task({
  f: (n) => {
    let steps = 0;
    for (let x = n; x !== 1; x = x % 2 === 0 ? x / 2 : 3 * x + 1) steps++;
    return { n, steps, pid: process.pid };
  },
});

/** Takes its worker process down (to show that the pool survives it). */
export const crash = task({
  f: () => process.exit(7),
});

if (isMain) {
  const pool = createPool({ threads: 2, worker: { runtime: "process" } })({ collatz, crash });
  try {
    const results = await Promise.all(Array.from({ length: 10_000 }, (_, i) => pool.call.collatz(i + 1)));
    const pids = new Set(results.map((r) => r.pid));
    const longest = results.reduce((a, b) => (b.steps > a.steps ? b : a));
    console.log(
      `10,000 calls answered by ${pids.size} worker processes (host pid is not among them: ${!pids.has(process.pid)})`,
    );
    console.log(`longest Collatz chain below 10,001: n = ${longest.n}, ${longest.steps} steps`);

    const err = await pool.call.crash().catch((e) => e);
    console.log(`a worker process exited: ${err.code}, exit code ${err.exitCode}`);
    const again = await pool.call.collatz(27);
    console.log(`the pool keeps serving: collatz(27) = ${again.steps} steps`);
  } finally {
    await pool.shutdown();
  }
}
