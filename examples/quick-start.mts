// tasks.mts: the README's quick start for a TypeScript project (`strict`).
// Annotating f's parameter types the calls; __test__/types.test.mjs checks it.
import { createPool, task, isMain } from "knitting-native";

export const add = task({ f: ([a, b]: [number, number]) => a + b }); // sync or async f
export const square = (v: number) => v * v; // a bare exported function works too

if (isMain) {
  const pool = createPool({ threads: 2 })({ add, square });
  console.log(await pool.call.add([1, 2]), await pool.call.square(7)); // 3 49
  // No shutdown() needed to exit: an idle pool lets the process end.
}
