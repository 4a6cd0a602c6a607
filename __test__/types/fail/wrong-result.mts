// expect: TS2322
// add resolves to a number, not a string.
import { createPool, task } from "knitting-native";

const add = task({ f: ([a, b]: [number, number]) => a + b });
const pool = createPool()({ add });
const s: string = await pool.call.add([1, 2]); // error
void s;
