// piscina's worker for bench/user/bytes.mjs: named exports picked with
// `pool.run(u8, { name })`; the result is moved back (Piscina.move puts its
// buffer in the transfer list) rather than cloned.
import { move } from "piscina";
import { invertBytes } from "./bytes-kernel.mjs";

export const echo = (u8) => move(u8);
export const invert = (u8) => move(invertBytes(u8));
