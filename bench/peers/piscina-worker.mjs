// Piscina worker for the benchmark (bodies: bench/lib/task-bodies.mjs):
//   pool.run([a, b])                       -> a + b
//   pool.run(v, { name: "echo" })          -> v
//   pool.run([i, ms], { name: "spin" })    -> i, after busy-spinning ms milliseconds (--report)
//   pool.run([i, iters], { name: "work" }) -> [i, µs] (random-load, cpu-bound)
import * as body from "../lib/task-bodies.mjs";

export default function add([a, b]) {
  return body.add(a, b);
}

export const echo = body.echo;

export function spin([i, ms]) {
  return body.spin(i, ms);
}

export function work([i, iters]) {
  return body.work(i, iters);
}
