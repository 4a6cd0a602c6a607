// expect: TS2322
// A broadcast resolves to an array of results, not one result.
import { createPool, task } from "knitting-native";

const add = task({ f: ([a, b]: [number, number]) => a + b });
const pool = createPool()({ add });
const one: number = await pool.broadcast.add([1, 2]); // error
void one;
