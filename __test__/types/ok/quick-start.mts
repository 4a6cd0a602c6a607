// The typed quick start (examples/quick-start.mts): its calls know their
// argument and result types, and refuse a wrong argument.
import { createPool, type Task, type TaskCaller } from "knitting-native";
import { add, square } from "../../../examples/quick-start.mjs";
import { type Assert, type Equal, expectType } from "./equal.mjs";

type _add = Assert<Equal<typeof add, Task<[number, number], number>>>;

const pool = createPool({ threads: 2 })({ add, square });
type _callAdd = Assert<Equal<typeof pool.call.add, TaskCaller<[number, number], number>>>;
type _callSquare = Assert<Equal<typeof pool.call.square, TaskCaller<number, number>>>;
expectType<Promise<number>>(pool.call.add([1, 2]));
expectType<Promise<number>>(pool.call.square(7));

// @ts-expect-error add takes a pair of numbers
pool.call.add(["1", 2]);
// @ts-expect-error add takes a pair, not two arguments
pool.call.add(1, 2);
// @ts-expect-error square takes a number
pool.call.square("7");
