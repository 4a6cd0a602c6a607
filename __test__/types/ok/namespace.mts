// A whole tasks module (namespace import or dynamic import) and an interface
// type are accepted as the task record, not only object literals.
import { createPool, type Task } from "knitting-native";
import * as tasks from "./tasks.mjs";
import type { Assert, Equal } from "./equal.mjs";

const pool = createPool()(tasks);
const n: number = await pool.call.add([1, 2]);
const s: string = await pool.call.hello("ns");
type _names = Assert<Equal<keyof typeof pool.call, keyof typeof tasks>>;

const lazy = createPool({ threads: 1 })(await import("./tasks.mjs"));
const sq: number = await lazy.call.square(2);

interface MyTasks {
  upper: Task<string, string>;
  half: (n: number) => number;
}
declare const mine: MyTasks;
const typed = createPool()(mine);
const up: string = await typed.call.upper("a");
const h: number = await typed.call.half(Promise.resolve(4));

await Promise.all([pool.shutdown(), lazy.shutdown(), typed.shutdown()]);
void [n, s, sq, up, h];
