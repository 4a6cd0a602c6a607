// The bare worker of bench/user/stream.mjs: each { shape, n } it is sent,
// it posts the generator's values to its parent one postMessage each, then
// a done marker (null).
import { parentPort } from "node:worker_threads";
import { GENS } from "./stream-gens.mjs";

parentPort.on("message", async ({ shape, n }) => {
  for await (const v of GENS[shape](n)) parentPort.postMessage(v);
  parentPort.postMessage(null);
});
