// Shared bytes: pool.sharedBytes(n) and sharedBytes(n) give a SharedBytes,
// a task taking one resolves to what it returns, readBody takes an
// IncomingMessage or a Request.
import type { IncomingMessage } from "node:http";
import { createPool, isSharedBytes, sharedBytes, task, type SharedBytes } from "knitting-native";
import { expectType } from "./equal.mjs";

export const invert = task({
  f: (bytes: SharedBytes) => {
    for (let i = 0; i < bytes.byteLength; i++) bytes.u8[i] = ~bytes.u8[i];
    return bytes;
  },
});
export const make = task({ f: (n: number) => sharedBytes(n) });

const pool = createPool({ threads: 1, payload: { borrowMs: 5000 } })({ invert, make });
const bytes = pool.sharedBytes(16);
expectType<Uint8Array>(bytes.u8);
expectType<boolean>(bytes.released);
expectType<boolean>(bytes.shared);
expectType<Promise<SharedBytes>>(pool.call.invert(bytes));
expectType<Promise<SharedBytes>>(pool.call.make(8));
expectType<boolean>(isSharedBytes(bytes));
bytes[Symbol.dispose]();
declare const req: IncomingMessage;
expectType<Promise<SharedBytes>>(pool.readBody(req, { maxBytes: 1024 }));
expectType<Promise<SharedBytes>>(pool.readBody(new Request("http://x/", { method: "POST" }), { maxBytes: 1 }));
// @ts-expect-error readBody needs its maxBytes
pool.readBody(req, {});
// @ts-expect-error a Uint8Array is not this task's argument
pool.call.invert(new Uint8Array(4));
