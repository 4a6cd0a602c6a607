// The task bodies every benchmarked pool runs, so that each pool does the
// same work: knitting-native's tasks (bench/tasks.mjs) and each peer's worker
// file (bench/peers/*-worker.mjs) only adapt these to their pool's calling
// convention (an array argument, a message's fields, a name to call by).
import { busy, work } from "./busy.mjs";

/** add(a, b) -> a + b: the tiny call of the main table. */
export const add = (a, b) => a + b;

/** echo(v) -> v: the payload workloads' round trip. */
export const echo = (v) => v;

/** spin(i, ms) -> i, after busy-spinning ms milliseconds of wall time (--report). */
export const spin = busy;

/** work(i, iters) -> [i, µs], after iters rounds of CPU work (random-load, cpu-bound). */
export { work };
