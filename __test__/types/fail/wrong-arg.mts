// expect: TS2345
// Passing a number to a task that takes a string.
import { createPool, task } from "knitting-native";

const hello = task({ f: async (name: string) => `hi ${name}` });
const pool = createPool()({ hello });
await pool.call.hello(42); // error
