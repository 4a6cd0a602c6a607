// expect: TS2353
// A broadcast's options hold only `keep`.
import { createPool, task } from "knitting-native";

const add = task({ f: ([a, b]: [number, number]) => a + b });
const pool = createPool()({ add });
await pool.broadcast.add([1, 2], { keep: true, once: true }); // error
