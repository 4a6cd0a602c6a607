// expect: TS2322
// worker.runtime is "thread" or "process".
import { createPool } from "knitting-native";

createPool({ worker: { runtime: "fork" } }); // error
