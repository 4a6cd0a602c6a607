// A CommonJS consumer: `import x = require(...)` and a named import, which in
// a .cts file compiles to require(). Resolution uses the "require" condition.
import kn = require("knitting-native");
import {
  createPool,
  task,
  importTask,
  WorkerExitError,
  CODEC_ERRORS,
  type AbortablePromise,
  type KnittingError,
} from "knitting-native";
import type { Assert, Equal } from "./equal-cjs.cjs";

const add = kn.task({ f: ([a, b]: [number, number]) => a + b });
const greet = task({ f: async (name: string) => `hi ${name}` });
const double = (n: number) => n * 2;
const triple = importTask<number, number>({ href: "./imported-fn.cjs", name: "triple" });
const watch = kn.task({
  abortSignal: true,
  timeout: { time: 100, maybe: true },
  f: (n: number, signal) => (signal.hasAborted() ? -1 : n),
});

async function main(): Promise<void> {
  const pool = createPool({ threads: 1, payload: { maxPayloadBytes: 1 << 20 } })({ add, greet, double });
  const n: number = await pool.call.add([1, 2]);
  const s: string = await pool.call.greet(Promise.resolve("cjs"));
  const d: number = await kn.createPool()({ double }).call.double(2);
  type _greet = Assert<Equal<Awaited<ReturnType<typeof pool.call.greet>>, string>>;

  // The lifecycle surface through require().
  const lifecycle = kn.createPool({
    abortSignalCapacity: 8,
    worker: { hardTimeoutMs: 1000, resolveAfterFinishingAll: true },
  })({ triple, watch });
  await lifecycle.ready;
  const tripled: number = await lifecycle.call.triple(14);
  const watched = lifecycle.call.watch(1);
  type _watched = Assert<Equal<typeof watched, AbortablePromise<number | undefined>>>;
  watched.reject();
  type _tripleCall = Assert<Equal<ReturnType<typeof lifecycle.call.triple>, Promise<number>>>;
  type _importTask = Assert<Equal<typeof kn.importTask, typeof importTask>>;
  const single = kn.importTask<string, number>({ href: "./imported-fn.cjs" }).createPool();
  const len: number = await single.call("four");
  await single[Symbol.asyncDispose]();
  await lifecycle.shutdown(100);
  type _exitCode = Assert<Equal<InstanceType<typeof kn.WorkerExitError>["code"], "KNT_WORKER_EXIT">>;
  const exitClass: typeof WorkerExitError = kn.WorkerExitError;
  const limit: "KNT_VALUE_TOO_LARGE" = CODEC_ERRORS.LIMIT;
  const fn: "KNT_VALUE_FUNCTION" = kn.CODEC_ERRORS.FUNCTION;
  // @ts-expect-error
  lifecycle.call.triple(1).reject();
  // @ts-expect-error
  kn.createPool({ worker: { hardTimeoutMs: "1s" } });
  void [tripled, len, exitClass, limit, fn];
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
