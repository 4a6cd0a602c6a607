// expect: TS2493
// Tasks given as an array literal form a tuple: an index past its end is an error.
import { createPool, task } from "knitting-native";

const add = task({ f: ([a, b]: [number, number]) => a + b });
const hello = task({ f: (name: string) => `hi ${name}` });
const pool = createPool()([add, hello]);
const second = pool.call[1];
const third = pool.call[2]; // error
void [second, third];
