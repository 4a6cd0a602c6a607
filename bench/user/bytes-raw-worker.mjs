// The bare worker of bench/user/bytes.mjs: each { id, op, u8, transfer } it
// is sent, it echoes or inverts `u8` and posts it back with the same id,
// with `u8.buffer` in the transfer list when `transfer` is set (else the
// structured clone copies it).
import { parentPort } from "node:worker_threads";
import { invertBytes } from "./bytes-kernel.mjs";

parentPort.on("message", ({ id, op, u8, transfer }) => {
  if (op === "invert") invertBytes(u8);
  const msg = { id, u8 };
  if (transfer) parentPort.postMessage(msg, [u8.buffer]);
  else parentPort.postMessage(msg);
});
