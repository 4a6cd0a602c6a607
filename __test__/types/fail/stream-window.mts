// expect: TS2322
// A stream's window is a number of values.
import { createPool, task } from "knitting-native";

const numbers = task({
  f: function* (n: number) {
    yield n;
  },
});
const pool = createPool()({ numbers });
pool.stream.numbers(1, { window: "16" }); // error
