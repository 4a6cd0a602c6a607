// Misuses that must be type errors. tsc fails this file if a line marked
// with @ts-expect-error is NOT an error, so each case is checked.
import {
  createPool,
  importTask,
  task,
  stableTaskID,
  isMain,
  WorkerExitError,
  CODEC_ERRORS,
  type AbortSignalToolkit,
  type KnittingError,
  type ValueError,
  type Task,
} from "knitting-native";
import { add, hello, square, noArg } from "./tasks.mjs";
import { abortFlag, describeNumber, slowMaybe, watchAbort } from "./lifecycle-tasks.mjs";

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
const known:
  | "KNT_VALUE_FUNCTION"
  | "KNT_VALUE_SYMBOL"
  | "KNT_VALUE_UNSERIALIZABLE"
  | "KNT_VALUE_TOO_LARGE"
  | string
  | undefined = err.code;
const asError: Error = err;

// ValueError: the task, the side and the place of a value that could not be sent.
declare const verr: ValueError;
const vside: "argument" | "result" | "error" | undefined = verr.side;
const vpath: string | undefined = verr.path;
const vknitting: "KNT_ERROR_0" | "KNT_ERROR_1" | "KNT_ERROR_3" = verr.knittingCode;
// @ts-expect-error: a value error's code is one of CODEC_ERRORS
const vcode: "KNT_QUEUE_FULL" = verr.code;

// ---- timeout: the forms of TaskTimeout, and `default` of the result type.
// @ts-expect-error
task({ f: (n: number) => n * 2, timeout: { time: 10, default: "none" } });
// @ts-expect-error
task({ f: (n: number) => n, timeout: { time: 10, maybe: false } });
// @ts-expect-error
task({ f: (n: number) => n, timeout: { time: 10, default: 1, error: new Error("x") } });
// @ts-expect-error
task({ f: (n: number) => n, timeout: { time: 10, default: 1, maybe: true } });
// @ts-expect-error
task({ f: (n: number) => n, timeout: { tme: 10 } });
// @ts-expect-error
task({ f: (n: number) => n, timeout: { default: 1 } });
// @ts-expect-error
task({ f: (n: number) => n, timeout: "10ms" });
// @ts-expect-error
task({ f: (n: number) => n, abortSignal: true, timeout: { time: 10, default: "none" } });
// @ts-expect-error
importTask<number, string>({ href: "./imported-fn.mjs", timeout: { time: 10, default: 0 } });
// @ts-expect-error
importTask<number, string>({ href: "./imported-fn.mjs", timeout: { time: 10, maybe: false } });
// A `maybe` task's call may resolve with undefined.
// @ts-expect-error
const notMaybe: number = await createPool()({ slowMaybe }).call.slowMaybe(1);
// @ts-expect-error
const notMaybeTask: Task<number, number> = slowMaybe;

// ---- abortSignal: only { hasAborted: true } or true; the signal only for abort-aware f.
// @ts-expect-error
task({ f: (n: number) => n, abortSignal: { hasAborted: false } });
// @ts-expect-error
task({ f: (n: number) => n, abortSignal: false });
// @ts-expect-error
task({ f: (n: number) => n, abortSignal: { aborted: true } });
// @ts-expect-error
task({ f: (n: number) => n, abortSignal: "yes" });
// @ts-expect-error
task({ f: (n: number, signal: AbortSignalToolkit) => (signal.hasAborted() ? 0 : n) });
// @ts-expect-error
task({ abortSignal: true, f: (n: number, signal) => signal.abort() });
// @ts-expect-error
task({ abortSignal: true, f: (n: number, signal: { hasAborted(): string }) => n });
// @ts-expect-error
importTask<number, string>({ href: "./imported-fn.mjs", abortSignal: { hasAborted: false } });

// ---- .reject exists only on an abort-aware task's call.
const lifecyclePool = createPool()({ add, slowMaybe, describeNumber, watchAbort, abortFlag });
// @ts-expect-error
lifecyclePool.call.add([1, 2]).reject();
// @ts-expect-error
lifecyclePool.call.slowMaybe(1).reject();
// @ts-expect-error
lifecyclePool.call.describeNumber(1).reject(new Error("x"));
// @ts-expect-error
add.createPool().call([1, 2]).reject();
// An abort-aware task is not a plain Task, nor a plain one an abort-aware Task.
// @ts-expect-error
const plainFromAbort: Task<number, string> = task({ abortSignal: true, f: (n: number) => String(n) });
// @ts-expect-error
const abortFromPlain: Task<number, string, true> = task({ f: (n: number) => String(n) });

// ---- CallOptions: only { signal }, and signal is an AbortSignal.
// @ts-expect-error
lifecyclePool.call.add([1, 2], { sig: new AbortController().signal });
// @ts-expect-error
lifecyclePool.call.add([1, 2], { signal: new AbortController() });
// @ts-expect-error
lifecyclePool.call.add([1, 2], { signal: true });
// @ts-expect-error
lifecyclePool.call.watchAbort(1, { timeout: 5 });
// @ts-expect-error
lifecyclePool.call.add([1, 2], {}, {});
// @ts-expect-error
add.createPool().call([1, 2], { abort: true });

// ---- importTask: the caller's types are enforced; href is required.
// @ts-expect-error
lifecyclePool.call.describeNumber("42");
// @ts-expect-error
const describedAsNumber: number = await lifecyclePool.call.describeNumber(42);
// @ts-expect-error
importTask({ name: "triple" });
// @ts-expect-error
importTask({ href: 42 });
// @ts-expect-error
importTask({ href: "./imported-fn.mjs", nmae: "triple" });
// @ts-expect-error
importTask({ href: "./imported-fn.mjs", f: (n: number) => n });

// ---- Single-task pools.
// @ts-expect-error
add.createPool().call(["1", 2]);
// @ts-expect-error
const singleNotString: string = await add.createPool().call([1, 2]);
// @ts-expect-error
add.createPool({ thread: 1 });
// @ts-expect-error
add.createPool().call.add([1, 2]);

// ---- Pool lifecycle.
// @ts-expect-error
pool.shutdown("1s");
// @ts-expect-error
pool.ready();
// @ts-expect-error
const asyncDisposeIsAsync: void = pool[Symbol.asyncDispose]();

// ---- New options: types and keys.
// @ts-expect-error
createPool({ abortSignalCapacity: "1024" });
// @ts-expect-error
createPool({ abortSignals: 1024 });
// @ts-expect-error
createPool({ worker: { hardTimeoutMs: "1s" } });
// @ts-expect-error abandonGraceMs is a number of ms or false
createPool({ worker: { abandonGraceMs: true } });
// @ts-expect-error
createPool({ worker: { hardTimeout: 1000 } });
// @ts-expect-error
createPool({ worker: { terminateAfterMs: 1000 } });
// @ts-expect-error
createPool({ worker: { resolveAfterFinishingAll: "yes" } });
// @ts-expect-error
createPool({ worker: { bootstrap: { name: "setup" } } });
// @ts-expect-error
createPool({ worker: { bootstrap: "./bootstrap.mjs" } });
// @ts-expect-error
createPool({ worker: { bootstrap: { href: new URL("file:///b.mjs") } } });
// @ts-expect-error
createPool({ worker: { bootstrap: { href: "./bootstrap.mjs", name: 1 } } });
// @ts-expect-error
createPool({ worker: { bootstrap: { href: "./bootstrap.mjs", args: [] } } });
// @ts-expect-error
createPool({ worker: { resourceLimits: { maxOldGenerationSizeMb: "64" } } });
// @ts-expect-error
createPool({ hardTimeoutMs: 1000 });

// ---- Errors.
declare const exit: WorkerExitError;
// @ts-expect-error
const exitCodeIsNumber: string = exit.exitCode;
// @ts-expect-error
const exitNameIsFixed: "Error" = exit.name;
// @ts-expect-error
const notAShutdownCode: "KNT_POOL_SHUTDOWN" = exit.code;
// @ts-expect-error
CODEC_ERRORS.LIMIT = "KNT_VALUE_FUNCTION";
// @ts-expect-error
CODEC_ERRORS.OTHER;

void [
  notString,
  notNumber,
  notSync,
  fake,
  wrongArg,
  wrongResult,
  disposeIsSync,
  mainIsBool,
  msg,
  code,
  known,
  asError,
  vside,
  vpath,
  vknitting,
  vcode,
];
void [notMaybe, notMaybeTask, plainFromAbort, abortFromPlain, describedAsNumber, singleNotString, asyncDisposeIsAsync];
void [exitCodeIsNumber, exitNameIsFixed, notAShutdownCode];
