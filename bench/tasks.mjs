// Tasks for the knitting-native rows of the benchmark.
// This module is imported by the bench driver AND inside every pool worker, so it
// must only define and export tasks: no pool creation, no side effects.
import { task, transfer } from "../index.mjs";
import { busy, work as workBody } from "./lib/busy.mjs";

/** add([a, b]) -> a + b */
export const add = task({ f: ([a, b]) => a + b });

/** echo(v) -> v */
export const echo = task({ f: (v) => v });

/** spin([i, ms]) -> i, after busy-spinning ms milliseconds (node bench/run.mjs --report) */
export const spin = task({ f: ([i, ms]) => busy(i, ms) });

/** work([i, iters]) -> [i, µs], after iters rounds of CPU work (node bench/run.mjs, random-load) */
export const work = task({ f: ([i, iters]) => workBody(i, iters) });

/** echoMoved(v) -> v, its buffer moved back rather than copied (transfer()). */
export const echoMoved = task({ f: (v) => transfer(v) });
