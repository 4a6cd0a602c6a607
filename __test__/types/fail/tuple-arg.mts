// expect: TS2345
// Each index of an array of tasks keeps its own argument type.
import { createPool, task } from "knitting-native";

const add = task({ f: ([a, b]: [number, number]) => a + b });
const hello = task({ f: (name: string) => `hi ${name}` });
const pool = createPool()([add, hello]);
await pool.call[0]([1, 2]);
await pool.call[0]("x"); // error
await pool.call[1](5); // error
