// A user's task module for bytes: imports the package by its name and
// exports its tasks (bench/user/bytes.mjs calls them with `pool.call.<op>(b)`).
// Each takes a SharedBytes (handed over without a copy) or a plain
// Uint8Array (copied both ways) and returns it, so a SharedBytes goes back
// to the caller the same way it came.
import { task } from "knitting-native";
import { invertBytes } from "./bytes-kernel.mjs";

export const echo = task({ f: (b) => b });
export const invert = task({
  f: (b) => {
    invertBytes(b instanceof Uint8Array ? b : b.u8);
    return b;
  },
});
