// expect: TS2554
// A task that takes an argument cannot be called without one.
import { createPool, task } from "knitting-native";

const hello = task({ f: (name: string) => `hi ${name}` });
const pool = createPool()({ hello });
await pool.call.hello(); // error
