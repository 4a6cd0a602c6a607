// expect: TS2345
// A broadcast takes its task's argument type, as a call does.
import { createPool, task } from "knitting-native";

const hello = task({ f: async (name: string) => `hi ${name}` });
const pool = createPool()({ hello });
await pool.broadcast.hello(42); // error
