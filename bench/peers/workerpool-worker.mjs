// workerpool worker for `node bench/run.mjs --report` (bodies: bench/lib/task-bodies.mjs):
//   pool.exec("add", [[a, b]])   -> a + b
//   pool.exec("echo", [v])       -> v
//   pool.exec("spin", [[i, ms]]) -> i, after busy-spinning ms milliseconds
import workerpool from "workerpool";
import * as body from "../lib/task-bodies.mjs";

workerpool.worker({
  add: ([a, b]) => body.add(a, b),
  echo: body.echo,
  spin: ([i, ms]) => body.spin(i, ms),
});
