// Piscina worker for the benchmark: pool.run([a, b]) -> a + b.
// --report also uses the named exports: pool.run(v, { name: "echo" }) -> v and
// pool.run([i, ms], { name: "spin" }) -> i after busy-spinning ms milliseconds.
// The random-load workload uses pool.run([i, iters], { name: "work" }) -> [i, µs].
import { busy, work as workBody } from "../lib/busy.mjs";

export default function add([a, b]) {
  return a + b;
}

export function echo(v) {
  return v;
}

export function spin([i, ms]) {
  return busy(i, ms);
}

export function work([i, iters]) {
  return workBody(i, iters);
}
