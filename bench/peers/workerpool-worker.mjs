// workerpool worker for `node bench/run.mjs --report`:
//   pool.exec("add", [[a, b]])   -> a + b
//   pool.exec("echo", [v])       -> v
//   pool.exec("spin", [[i, ms]]) -> i, after busy-spinning ms milliseconds
import workerpool from "workerpool";
import { busy } from "../lib/busy.mjs";

workerpool.worker({
  add: ([a, b]) => a + b,
  echo: (v) => v,
  spin: ([i, ms]) => busy(i, ms),
});
