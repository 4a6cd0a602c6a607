// expect: TS2339
// Broadcasting a task name that was not given to the pool.
import { createPool, task } from "knitting-native";

const add = task({ f: ([a, b]: [number, number]) => a + b });
const pool = createPool()({ add });
await pool.broadcast.nope([1, 2]); // error
