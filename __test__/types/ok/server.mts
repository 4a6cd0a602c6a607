// The server options and API: maxQueue, stats, recycling, events.
import { createPool, type PoolStats, type WorkerExitEvent, type PoolOptions } from "knitting-native";
import { add } from "./tasks.mjs";
import type { Assert, Equal } from "./equal.mjs";

const options: PoolOptions = {
  threads: 2,
  maxQueue: "auto",
  stats: true,
  worker: { maxCallsBeforeRecycle: 1000, maxMemoryBeforeRecycle: 256 * 1024 * 1024 },
};
const pool = createPool({ ...options, maxQueue: 100 })({ add });
const size: number = pool.queueSize;
const full: boolean = pool.needsDrain;
void size;
void full;
const s = pool.stats();
type _stats = Assert<Equal<typeof s, PoolStats>>;
const p99: number | undefined = s.runTime?.p99;
const busy: number | undefined = s.workers?.[0]?.recentUtilization;
const running: number = s.threads;
void running;
void p99;
void busy;
pool
  .on("drain", () => {})
  .on("workerExit", (e) => {
    type _event = Assert<Equal<typeof e, WorkerExitEvent>>;
    if (e.reason === "recycle") console.log(e.index, e.recycle);
  });
pool.once("workerCreate", (e) => console.log(e.index, e.threadId ?? e.pid));
// An elastic pool: between 1 and 4 workers, idle ones leave after 5 s.
const elastic = createPool({ minThreads: 1, maxThreads: 4, idleTimeout: 5000 })({ add });
elastic.on("workerExit", (e) => {
  if (e.reason === "idle") console.log(`worker ${e.index} left`);
});
// @ts-expect-error: idleTimeout is a number of milliseconds
createPool({ maxThreads: 4, idleTimeout: "5s" });
// @ts-expect-error: no such event
pool.on("drained", () => {});
// @ts-expect-error: maxQueue is a number or "auto"
createPool({ maxQueue: "lots" });
await pool.shutdown();
