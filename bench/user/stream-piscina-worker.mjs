// piscina's worker for bench/user/stream.mjs, streaming the usual way: the
// caller's MessagePort comes in the task's argument, each value goes out
// with its own postMessage, then a done marker (null), then the task returns.
import { GENS } from "./stream-gens.mjs";

export default async function ({ port, shape, n }) {
  for await (const v of GENS[shape](n)) port.postMessage(v);
  port.postMessage(null);
  return n;
}
