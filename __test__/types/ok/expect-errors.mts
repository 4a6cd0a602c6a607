// Misuses that must be type errors. tsc fails this file if a line marked
// with @ts-expect-error is NOT an error, so each case is checked.
import { createPool, task, stableTaskID, isMain, type KnittingError, type Task } from "knitting-native";
import { add, hello, square, noArg } from "./tasks.mjs";

const pool = createPool({ threads: 2 })({ add, hello, square, noArg });

// Unknown task name.
// @ts-expect-error
pool.call.nope;
// @ts-expect-error
pool.call.Add([1, 2]);

// Wrong argument types.
// @ts-expect-error
pool.call.hello(42);
// @ts-expect-error
pool.call.hello(Promise.resolve(42));
// @ts-expect-error
pool.call.add(["1", 2]);
// @ts-expect-error
pool.call.add([1, 2, 3]);
// @ts-expect-error
pool.call.square("3");

// Missing or extra arguments.
// @ts-expect-error
pool.call.add();
// @ts-expect-error
pool.call.hello("a", "b");

// Wrong result types.
// @ts-expect-error
const notString: string = await pool.call.add([1, 2]);
// @ts-expect-error
const notNumber: number = await pool.call.hello("x");
// @ts-expect-error
const notSync: number = pool.call.square(2);

// Options: unknown keys and wrong types.
// @ts-expect-error
createPool({ thread: 2 });
// @ts-expect-error
createPool({ workers: 2 });
// @ts-expect-error
createPool({ threads: "2" });
// @ts-expect-error
createPool({ debug: 1 });
// @ts-expect-error
createPool({ payload: { maxPayload: 1 } });
// @ts-expect-error
createPool({ payload: { maxPayloadBytes: "8MiB" } });
// @ts-expect-error
createPool({ payload: 1024 });

// Things that are not tasks.
// @ts-expect-error
createPool()({ notATask: 42 });
// @ts-expect-error
createPool()({ twoParams: (a: number, b: number) => a + b });
// @ts-expect-error
createPool()({ obj: { f: (x: number) => x } });

// task() wants a definition with f.
// @ts-expect-error
task((x: number) => x);
// @ts-expect-error
task({});

// A Task is opaque: no plain object is one, and A/R are checked.
// @ts-expect-error
const fake: Task<number, number> = {};
// @ts-expect-error
const wrongArg: Task<string, number> = task({ f: (n: number) => n });
// @ts-expect-error
const wrongResult: Task<number, string> = task({ f: (n: number) => n });

// Pool methods.
// @ts-expect-error
const disposeIsSync: Promise<void> = pool[Symbol.dispose]();
// @ts-expect-error
pool.close();

// Other exports.
// @ts-expect-error
stableTaskID("file:///x.mjs");
// @ts-expect-error
stableTaskID(0, 0);
// @ts-expect-error
const mainIsBool: string = isMain;

// KnittingError: code is optional, an Error otherwise.
declare const err: KnittingError;
const msg: string = err.message;
// @ts-expect-error
const code: string = err.code;
const known: "KNT_ERROR_0" | "KNT_ERROR_1" | "KNT_ERROR_2" | "KNT_ERROR_3" | string | undefined = err.code;
const asError: Error = err;

void [notString, notNumber, notSync, fake, wrongArg, wrongResult, disposeIsSync, mainIsBool, msg, code, known, asError];
