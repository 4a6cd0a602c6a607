// Tasks as a user would export them from a tasks module.
import { task, type Task } from "knitting-native";
import type { Assert, Equal } from "./equal.mjs";

export const add = task({ f: ([a, b]: [number, number]) => a + b });
export const hello = task({ f: async (name: string) => `hi ${name}` });
export const square = (v: number) => v * v;
export const noArg = task({ f: () => 1 });
export const asyncNoArg = task({ f: async () => "ready" });
export const optionalArg = task({ f: (n?: number) => (n ?? 0) + 1 });
export const toDate = task({ f: (ms: number) => new Date(ms) });
export const sum = task({ f: (xs: Float64Array) => xs.reduce((s, x) => s + x, 0) });
export const big = task({ f: (n: bigint) => n * 2n });
export const bytes = async (buf: Buffer): Promise<Uint8Array> => new Uint8Array(buf);
export const now = () => Date.now();
export const user = task({
  f: async (id: number) => ({ id, name: "ada", tags: ["x"] as string[], joined: new Date(0) }),
});

// An explicit annotation with the exported Task type.
export const len: Task<string, number> = task({ f: (s: string) => s.length });

// Parameters left unannotated (JavaScript pasted as is) are `any`, not
// `void`: `f` type-checks, and so do its calls, untyped. A parameterless f
// still gives calls that take no argument.
export const untypedPair = task({ f: ([a, b]) => a + b });
export const untypedSquare = task({ f: (v) => v * v });
type _untypedPair = Assert<Equal<typeof untypedPair, Task<any, any>>>;
type _untypedSquare = Assert<Equal<typeof untypedSquare, Task<any, number>>>;
type _noArg = Assert<Equal<typeof noArg, Task<void, number>>>;
