// expect: TS2345
// Passing a Promise of the wrong type to a bare-function task.
import { createPool } from "knitting-native";

const square = (v: number) => v * v;
const pool = createPool()({ square });
await pool.call.square(Promise.resolve("3")); // error
