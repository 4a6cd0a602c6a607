// expect: TS2339
// Calling a task name that was not given to the pool.
import { createPool, task } from "knitting-native";

const add = task({ f: ([a, b]: [number, number]) => a + b });
const pool = createPool()({ add });
await pool.call.nope([1, 2]); // error
