// Tasks for the knitting-native rows of the benchmark (bodies: lib/task-bodies.mjs,
// the same every peer's worker runs).
// This module is imported by the bench driver AND inside every pool worker, so it
// must only define and export tasks: no pool creation, no side effects.
import { task, transfer } from "../index.mjs";
import * as body from "./lib/task-bodies.mjs";

/** add([a, b]) -> a + b */
export const add = task({ f: ([a, b]) => body.add(a, b) });

/** echo(v) -> v */
export const echo = task({ f: body.echo });

/** spin([i, ms]) -> i, after busy-spinning ms milliseconds (node bench/run.mjs --report) */
export const spin = task({ f: ([i, ms]) => body.spin(i, ms) });

/** work([i, iters]) -> [i, µs], after iters rounds of CPU work (node bench/run.mjs, random-load) */
export const work = task({ f: ([i, iters]) => body.work(i, iters) });

/** echoMoved(v) -> v, its buffer moved back rather than copied (transfer()). */
export const echoMoved = task({ f: (v) => transfer(v) });
