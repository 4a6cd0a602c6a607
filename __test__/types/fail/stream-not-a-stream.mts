// expect: TS2349
// A task that yields nothing cannot be streamed.
import { createPool, task } from "knitting-native";

const plain = task({ f: (n: number) => n * 2 });
const pool = createPool()({ plain });
pool.stream.plain(1); // error
