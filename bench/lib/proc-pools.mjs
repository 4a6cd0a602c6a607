// The pools of the process workload of `node bench/run.mjs`: knitting-native
// worker threads and worker processes, piscina, and a child_process.fork +
// process.send pool. Shared by the parent (bench/lib/proc.mjs) and its
// children (bench/lib/proc-child.mjs).
import { createKnitting, createPiscina } from "./sched-pools.mjs";

/**
 * Rows, in table order. `fork: true` marks the IPC baseline, which gets fewer
 * calls (see procConfig in bench/lib/proc.mjs).
 */
export const PROC_POOLS = [
  { key: "threads", label: "knitting-native, worker threads", options: {} },
  { key: "processes", label: "knitting-native, worker processes", options: { worker: { runtime: "process" } } },
  {
    key: "processesPolling",
    label: "knitting-native, worker processes, doorbell: false (polling)",
    options: { worker: { runtime: "process" }, host: { doorbell: false } },
  },
  { key: "piscina", label: "piscina", piscina: true },
  { key: "fork", label: "child_process.fork + process.send", fork: true },
];

/** A pool of `row` with `workers` workers: { add(a, b), close() }. */
export async function createProcRow(row, workers) {
  if (row.piscina) return createPiscina(workers);
  if (row.fork) {
    const { createForkSendPool } = await import("../peers/fork-send.mjs");
    const pool = createForkSendPool({ processes: workers });
    await pool.ready;
    return { add: (a, b) => pool.add(a, b), close: () => pool.shutdown() };
  }
  const pool = await createKnitting(workers, row.options);
  // KNITTING_* variables or a changed default must not pass for this row.
  const want = { runtime: row.options.worker?.runtime ?? "thread", doorbell: row.options.host?.doorbell ?? true };
  const got = pool.topology;
  if (got === null || got.runtime !== want.runtime || got.doorbell !== want.doorbell) {
    await pool.close().catch(() => {});
    throw new Error(
      `wrong pool topology: expected ${JSON.stringify(want)}, got ` +
        `${got === null ? "an unreadable topology" : JSON.stringify({ runtime: got.runtime, doorbell: got.doorbell })}`,
    );
  }
  return pool;
}
