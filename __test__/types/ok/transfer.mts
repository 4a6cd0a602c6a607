// transfer(): a marker is accepted where the task takes that buffer type, and
// a task returning one resolves to the buffer itself.
import { createPool, task, transfer, type Transferred } from "knitting-native";
import { expectType } from "./equal.mjs";

export const size = task<Uint8Array, number>({ f: (u8) => u8.length });
export const make = task({ f: (n: number) => transfer(new Uint8Array(n)) });

const pool = createPool({ threads: 1, host: { steal: false } })({ size, make });
const marker: Transferred<Uint8Array> = transfer(new Uint8Array(8));
expectType<Promise<number>>(pool.call.size(marker));
expectType<Promise<number>>(pool.call.size(new Uint8Array(8)));
expectType<Promise<Uint8Array>>(pool.call.make(8));
// @ts-expect-error a marker of another buffer type is not this task's argument
pool.call.size(transfer(new Float64Array(2)));
// @ts-expect-error transfer() takes buffers only
transfer("text");
