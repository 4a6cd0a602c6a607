// expect: TS2322
// With `timeout: { time, maybe: true }` a call resolves with undefined when it
// times out, so its result is number | undefined, not number.
import { createPool, task } from "knitting-native";

const lookup = task({ timeout: { time: 10, maybe: true }, f: (key: string) => key.length });
const pool = createPool()({ lookup });
const n: number = await pool.call.lookup("a"); // error
const m: number | undefined = await pool.call.lookup("b");
void [n, m];
