// npm run demo: the quick start from the README.
import { createPool, task, isMain } from "knitting-native";

export const add = task({ f: ([a, b]) => a + b });
export const square = (v) => v * v;

if (isMain) {
  const pool = createPool({ threads: 2 })({ add, square });
  console.log("add([1, 2]) =", await pool.call.add([1, 2]));
  console.log("square(7)   =", await pool.call.square(7));
  const many = await Promise.all(Array.from({ length: 10_000 }, (_, i) => pool.call.add([i, i])));
  console.log("10,000 calls, last =", many.at(-1));
  await pool.shutdown();
}
