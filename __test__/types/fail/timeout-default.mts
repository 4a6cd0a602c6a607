// expect: TS2769
// A timeout's `default` must be of the task's result type (here number):
// no overload of task() takes a string default for it.
import { task } from "knitting-native";

export const double = task({ f: (n: number) => n * 2, timeout: { time: 10, default: "none" } }); // error
