// expect: TS2339
// The function createPool(options) returns is not a pool: `call` on it is
// `never` (at run time a TypeError, KNT_CREATE_POOL_FORM).
import { createPool, task } from "knitting-native";

export const add = task({ f: ([a, b]: [number, number]) => a + b });

createPool({ threads: 1 }).call.add([1, 2]); // error
