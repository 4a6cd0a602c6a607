// A CommonJS consumer: `import x = require(...)` and a named import, which in
// a .cts file compiles to require(). Resolution uses the "require" condition.
import kn = require("knitting-native");
import { createPool, task, type KnittingError } from "knitting-native";
import type { Assert, Equal } from "./equal-cjs.cjs";

const add = kn.task({ f: ([a, b]: [number, number]) => a + b });
const greet = task({ f: async (name: string) => `hi ${name}` });
const double = (n: number) => n * 2;

async function main(): Promise<void> {
  const pool = createPool({ threads: 1, payload: { maxPayloadBytes: 1 << 20 } })({ add, greet, double });
  const n: number = await pool.call.add([1, 2]);
  const s: string = await pool.call.greet(Promise.resolve("cjs"));
  const d: number = await kn.createPool()({ double }).call.double(2);
  type _greet = Assert<Equal<Awaited<ReturnType<typeof pool.call.greet>>, string>>;
  // @ts-expect-error
  pool.call.nope;
  // @ts-expect-error
  pool.call.greet(1);
  // @ts-expect-error
  kn.createPool({ thread: 1 });
  try {
    await pool.shutdown();
  } catch (e) {
    const code = (e as KnittingError).code;
    void code;
  }
  pool[Symbol.dispose]();
  const main: boolean = kn.isMain;
  const id: number = kn.stableTaskID("file:///x.cjs", 1);
  void [n, s, d, main, id];
}

void main();
