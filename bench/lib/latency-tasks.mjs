// The task of bench/latency-probe.mjs (imported by the probe and inside each
// worker: it only declares tasks).
import { readFileSync } from "node:fs";
import { task } from "../../index.mjs";

const origin = performance.timeOrigin;

/**
 * The CPU this thread runs on, from /proc/thread-self/stat (field 39), or -1
 * where there is no such file. Costs a file read: only the --cpu run uses it.
 */
export function cpuNow() {
  try {
    const stat = readFileSync("/proc/thread-self/stat", "latin1");
    // Fields after the command name, which ends at the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[36]);
  } catch {
    return -1;
  }
}

/**
 * stamp(withCpu) -> the wall-clock time (ms since the epoch, sub-µs
 * resolution) at which the worker ran the call; with `withCpu`, [time, CPU].
 */
export const stamp = task({
  f: (withCpu) => (withCpu ? [origin + performance.now(), cpuNow()] : origin + performance.now()),
});
