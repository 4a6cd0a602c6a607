// Lifecycle features: timeouts, aborts, importTask, single-task pools,
// ready / shutdown(delayMs) / disposal, the new options and errors, with
// assertions that the inferred types are exact.
import {
  CODEC_ERRORS,
  WorkerExitError,
  createPool,
  importTask,
  task,
  type AbortablePromise,
  type AbortableOf,
  type AbortSignalToolkit,
  type BootstrapOptions,
  type CallOptions,
  type CallPromise,
  type KnittingError,
  type KnittingErrorCode,
  type Pool,
  type PoolLifecycle,
  type PoolOptions,
  type SingleTaskPool,
  type Task,
  type TaskCaller,
  type TaskTimeout,
  type WorkerOptions,
} from "knitting-native";
import * as t from "./lifecycle-tasks.mjs";
import { add, hello, noArg } from "./tasks.mjs";
import type { Assert, Equal } from "./equal.mjs";

// ---- task() with timeout: what the task and its calls resolve to.
type _slowDefault = Assert<Equal<typeof t.slowDefault, Task<number, string>>>;
type _slowMaybe = Assert<Equal<typeof t.slowMaybe, Task<number, number | undefined>>>;
type _slowError = Assert<Equal<typeof t.slowError, Task<number, number>>>;
type _slowNumber = Assert<Equal<typeof t.slowNumber, Task<number, boolean>>>;
type _slowTimeOnly = Assert<Equal<typeof t.slowTimeOnly, Task<string, number>>>;
type _nullableDefault = Assert<Equal<typeof t.nullableDefault, Task<number, { id: number } | null>>>;
type _maybeNoArg = Assert<Equal<typeof t.maybeNoArg, Task<void, string | undefined>>>;
type _undefinedDefault = Assert<Equal<typeof t.undefinedDefault, Task<string, number | undefined>>>;

// ---- abort-aware tasks: Task<A, R, true>. (Like any function with several
// returns of literals, watchAbort's f returns their union.)
type Watched = "saw abort" | "not aborted";
type _watchAbort = Assert<Equal<typeof t.watchAbort, Task<number, Watched, true>>>;
type _abortFlag = Assert<Equal<typeof t.abortFlag, Task<void, boolean, true>>>;
type _abortFlagAny = Assert<Equal<typeof t.abortFlagAny, Task<any, boolean, true>>>;
type _abortIgnores = Assert<Equal<typeof t.abortIgnoresSignal, Task<number, number, true>>>;
type _abortMaybe = Assert<Equal<typeof t.abortMaybe, Task<number, number | undefined, true>>>;
type _abortDefault = Assert<Equal<typeof t.abortDefault, Task<number, number, true>>>;
type _abortableOf = Assert<
  Equal<
    [AbortableOf<typeof t.watchAbort>, AbortableOf<typeof t.slowMaybe>, AbortableOf<(n: number) => number>],
    [true, false, false]
  >
>;

// f of an abort-aware task gets the toolkit as its second parameter, exactly.
task({
  abortSignal: { hasAborted: true },
  f: (n: number, signal) => {
    type _signal = Assert<Equal<typeof signal, AbortSignalToolkit>>;
    type _hasAborted = Assert<Equal<ReturnType<typeof signal.hasAborted>, boolean>>;
    type _now = Assert<Equal<ReturnType<typeof signal.now>, number>>;
    type _arg = Assert<Equal<typeof n, number>>;
    return n;
  },
});
type _toolkit = Assert<
  Equal<AbortSignalToolkit, { hasAborted(): boolean; now(): number; progress(value: unknown): void }>
>;

// ---- importTask: the caller's A and R.
type _triple = Assert<Equal<typeof t.triple, Task<number, number>>>;
type _describe = Assert<Equal<typeof t.describeNumber, Task<number, string>>>;
type _importedDefault = Assert<Equal<typeof t.importedDefault, Task<string, string[]>>>;
type _importedUnknown = Assert<Equal<typeof t.importedUnknown, Task<unknown, unknown>>>;
type _importedTimeout = Assert<Equal<typeof t.importedTimeout, Task<number, string>>>;
type _importedMaybe = Assert<Equal<typeof t.importedMaybe, Task<number, string | undefined>>>;
type _importedAbort = Assert<Equal<typeof t.importedAbort, Task<number, string, true>>>;
type _importedAbortMaybe = Assert<Equal<typeof t.importedAbortMaybe, Task<void, boolean | undefined, true>>>;

// ---- A pool over all of them.
const pool = createPool({ threads: 1 })({ ...t, add, hello, noArg });

const def: string = await pool.call.slowDefault(500);
const maybe: number | undefined = await pool.call.slowMaybe(500);
const described: string = await pool.call.describeNumber(42);
const tripled: number = await pool.call.triple(Promise.resolve(14));
const unknownResult: unknown = await pool.call.importedUnknown({ any: "thing" });
await pool.call.importedUnknown(); // unknown accepts undefined: the argument may be left out

// Plain tasks: exactly Promise<R>, no reject().
type _plainCall = Assert<Equal<ReturnType<typeof pool.call.slowDefault>, Promise<string>>>;
type _maybeCall = Assert<Equal<ReturnType<typeof pool.call.slowMaybe>, Promise<number | undefined>>>;
type _maybeAwaited = Assert<Equal<Awaited<ReturnType<typeof pool.call.slowMaybe>>, number | undefined>>;
type _importCall = Assert<Equal<ReturnType<typeof pool.call.describeNumber>, Promise<string>>>;
type _importArg = Assert<
  Equal<Parameters<typeof pool.call.describeNumber>, [arg: number | Promise<number>, options?: CallOptions]>
>;
type _addCall = Assert<Equal<ReturnType<typeof pool.call.add>, Promise<number>>>;
type _noReject = Assert<Equal<"reject" extends keyof ReturnType<typeof pool.call.slowNumber> ? true : false, false>>;

// Abort-aware tasks: AbortablePromise<R>, with reject().
const watched = pool.call.watchAbort(2000);
type _watched = Assert<Equal<typeof watched, AbortablePromise<Watched>>>;
type _watchedIs = Assert<Equal<typeof watched, Promise<Watched> & { reject(reason?: unknown): void }>>;
type _reject = Assert<Equal<typeof watched.reject, (reason?: unknown) => void>>;
watched.reject(new Error("caller gave up"));
watched.reject();
const watchResult: string = await watched;
const flag = pool.call.abortFlag();
flag.reject("no reason needed");
const flagValue: boolean = await flag;
type _abortMaybeCall = Assert<Equal<ReturnType<typeof pool.call.abortMaybe>, AbortablePromise<number | undefined>>>;
type _importedAbortCall = Assert<Equal<ReturnType<typeof pool.call.importedAbort>, AbortablePromise<string>>>;
type _importedAbortMaybeCall = Assert<
  Equal<ReturnType<typeof pool.call.importedAbortMaybe>, AbortablePromise<boolean | undefined>>
>;

// ---- CallOptions: { signal?: AbortSignal, onProgress? } on every caller, plain or abort-aware.
type _callOptions = Assert<Equal<CallOptions, { signal?: AbortSignal; onProgress?: (value: any) => void }>>;
const controller = new AbortController();
await pool.call.add([1, 2], { signal: controller.signal });
await pool.call.hello("x", {});
await pool.call.noArg(undefined, { signal: AbortSignal.timeout(10) });
pool.call.watchAbort(10, { signal: controller.signal }).reject();
const options: CallOptions = { signal: AbortSignal.abort("early") };
await pool.call.slowMaybe(Promise.resolve(1), options);
await pool.call.slowMaybe(1, { signal: undefined });
type _callerType = Assert<Equal<typeof pool.call.add, TaskCaller<[number, number], number>>>;
type _abortCallerType = Assert<Equal<typeof pool.call.watchAbort, TaskCaller<number, Watched, true>>>;
type _callPromise = Assert<
  Equal<
    [CallPromise<number>, CallPromise<number, false>, CallPromise<number, true>],
    [Promise<number>, Promise<number>, AbortablePromise<number>]
  >
>;

// ---- Lifecycle members.
type _ready = Assert<Equal<typeof pool.ready, Promise<void>>>;
type _shutdown = Assert<Equal<Parameters<typeof pool.shutdown>, [delayMs?: number]>>;
type _shutdownResult = Assert<Equal<ReturnType<typeof pool.shutdown>, Promise<void>>>;
type _dispose = Assert<Equal<ReturnType<(typeof pool)[typeof Symbol.dispose]>, void>>;
type _asyncDispose = Assert<Equal<ReturnType<(typeof pool)[typeof Symbol.asyncDispose]>, Promise<void>>>;
const lifecycle: PoolLifecycle = pool;
await pool.ready;
await pool.shutdown(1_000);
await pool.shutdown();
await pool[Symbol.asyncDispose]();
pool[Symbol.dispose]();
await lifecycle.ready.catch((err: unknown) => err);

{
  await using scoped = createPool({ threads: 1 })({ hello });
  const hi: string = await scoped.call.hello("scoped");
  void hi;
}

// ---- Single-task pools: task.createPool(options).
const single = t.slowMaybe.createPool({ threads: 1, worker: { hardTimeoutMs: 1_000 } });
type _single = Assert<Equal<typeof single, SingleTaskPool<number, number | undefined>>>;
type _singleCall = Assert<Equal<ReturnType<typeof single.call>, Promise<number | undefined>>>;
type _singleArg = Assert<Equal<Parameters<typeof single.call>, [arg: number | Promise<number>, options?: CallOptions]>>;
const singleResult: number | undefined = await single.call(3, { signal: controller.signal });
await single.call(Promise.resolve(3));

const singleAbort = t.watchAbort.createPool();
type _singleAbort = Assert<Equal<typeof singleAbort, SingleTaskPool<number, Watched, true>>>;
type _singleAbortCall = Assert<Equal<ReturnType<typeof singleAbort.call>, AbortablePromise<Watched>>>;
singleAbort.call(10).reject(new Error("stop"));

const singleNoArg = noArg.createPool();
const one: number = await singleNoArg.call();
const singleImported = importTask<number, string>({ href: "./imported-fn.mjs", name: "describe" }).createPool({});
type _singleImported = Assert<Equal<ReturnType<typeof singleImported.call>, Promise<string>>>;
const shorthand = task({ f: ([a, b]: [number, number]) => a + b }).createPool();
type _shorthandCall = Assert<Equal<typeof shorthand.call, TaskCaller<[number, number], number>>>;

type _singleReady = Assert<Equal<typeof single.ready, Promise<void>>>;
type _singleShutdown = Assert<Equal<typeof single.shutdown, (delayMs?: number) => Promise<void>>>;
type _singleDispose = Assert<Equal<ReturnType<(typeof single)[typeof Symbol.dispose]>, void>>;
type _singleAsyncDispose = Assert<Equal<ReturnType<(typeof single)[typeof Symbol.asyncDispose]>, Promise<void>>>;
await single.ready;
await single.shutdown(10);
single[Symbol.dispose]();
await singleAbort[Symbol.asyncDispose]();
{
  using scopedSingle = add.createPool({ threads: 1 });
  const three: number = await scopedSingle.call([1, 2]);
  void three;
}

// ---- Task<A, R, Abortable> as annotations and in named pool types.
type _annotatedAbort = Assert<Equal<typeof t.annotatedAbort, Task<number, string, true>>>;
const anyAbortability: Task<number, string, boolean>[] = [t.annotatedAbort, task({ f: (n: number) => String(n) })];
const named: Pool<{ watch: Task<number, Watched, true>; plain: Task<number, string> }> = createPool()({
  watch: t.watchAbort,
  plain: t.describeNumber,
});
type _namedWatch = Assert<Equal<ReturnType<typeof named.call.watch>, AbortablePromise<Watched>>>;
type _namedPlain = Assert<Equal<ReturnType<typeof named.call.plain>, Promise<string>>>;

// ---- Every new option is accepted.
const bootstrap: BootstrapOptions = { href: "./bootstrap.mjs", name: "setup", data: { region: "eu", retries: [1, 2] } };
const worker: WorkerOptions = {
  resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, codeRangeSizeMb: 16, stackSizeMb: 4 },
  hardTimeoutMs: 5_000,
  resolveAfterFinishingAll: true,
  bootstrap,
};
const all: PoolOptions = {
  threads: 2,
  payload: { payloadInitialBytes: 4194304, payloadMaxByteLength: 67108864, maxPayloadBytes: 8388608 },
  worker,
  abortSignalCapacity: 1024,
  debug: false,
};
createPool(all)({ add });
createPool({ abortSignalCapacity: 0 })({ add });
createPool({ worker: {} })({ add });
createPool({ worker: { hardTimeoutMs: 100 } })({ add });
createPool({ worker: { abandonGraceMs: 250 } })({ add });
createPool({ worker: { abandonGraceMs: false } })({ add });
createPool({ worker: { resolveAfterFinishingAll: false } })({ add });
createPool({ worker: { bootstrap: { href: "./bootstrap.mjs" } } })({ add });
createPool({ worker: { bootstrap: { href: "file:///srv/boot.mjs", name: "setup" } } })({ add });
createPool({ worker: { bootstrap: { href: "./bootstrap.mjs", data: 42 } } })({ add });
createPool({
  threads: 1,
  worker: {
    bootstrap: { href: "./b.mjs", name: "setup", data: null },
    hardTimeoutMs: 1,
    resolveAfterFinishingAll: true,
  },
})({ add });
add.createPool(all);
createPool({ worker: { runtime: "process" } })({ add });
createPool({
  worker: {
    runtime: "process",
    processRuntime: "node",
    processExecutable: "/usr/bin/node",
    processSharedMemory: { mode: "named", namePrefix: "my-app" },
    processCommandPrefix: ["/usr/bin/env"],
    processArgs: ["--flag"],
    execArgv: ["--max-old-space-size=256"],
    env: { HOME: "/tmp" },
  },
})({ add });
createPool({ worker: { runtime: "thread", processSharedMemory: "inherit" } })({ add });
createPool({
  payload: { mode: "fixed", payloadMaxByteLength: 1 << 20 },
  worker: { timers: { spinMicroseconds: 20, parkMs: 5 } },
  debug: { lifecycle: true, imports: true },
})({ add });
type _workerKeys = Assert<
  Equal<
    keyof WorkerOptions,
    | "runtime"
    | "processRuntime"
    | "processExecutable"
    | "processSharedMemory"
    | "processCommandPrefix"
    | "processArgs"
    | "execArgv"
    | "env"
    | "resourceLimits"
    | "hardTimeoutMs"
    | "abandonGraceMs"
    | "resolveAfterFinishingAll"
    | "allowExit"
    | "bootstrap"
    | "timers"
    | "maxCallsBeforeRecycle"
    | "maxMemoryBeforeRecycle"
  >
>;
type _poolKeys = Assert<
  Equal<
    keyof PoolOptions,
    | "threads"
    | "payload"
    | "worker"
    | "abortSignalCapacity"
    | "debug"
    | "host"
    | "balancer"
    | "inliner"
    | "permission"
    | "maxQueue"
    | "stats"
    | "minThreads"
    | "maxThreads"
    | "idleTimeout"
  >
>;
type _bootstrap = Assert<Equal<BootstrapOptions, { href: string; name?: string; data?: unknown }>>;

// Timeouts as values.
const timeouts: TaskTimeout<number>[] = [
  50,
  { time: 50 },
  { time: 50, default: 0 },
  { time: 50, maybe: true },
  { time: 50, error: new Error("late") },
];

// ---- Errors.
type _codes = Assert<
  Equal<
    KnittingErrorCode,
    | "KNT_VALUE_FUNCTION"
    | "KNT_VALUE_SYMBOL"
    | "KNT_VALUE_UNSERIALIZABLE"
    | "KNT_VALUE_TOO_LARGE"
    | "KNT_POOL_SHUTDOWN"
    | "KNT_WORKER_EXIT"
    | "KNT_TASK_TIMEOUT"
    | "KNT_HARD_TIMEOUT"
    | "KNT_ABANDONED_CALL"
    | "KNT_QUEUE_FULL"
    | "KNT_ABORT_SIGNALS_EXHAUSTED"
    | "KNT_REGION_CORRUPT"
    | "KNT_PROCESS_EXIT_REFUSED"
    | "KNT_TRANSFER"
    | "KNT_INVALID_OPTION"
    | "KNT_INVALID_TASK"
    | "KNT_POOL_IN_WORKER"
    | "KNT_UNKNOWN_TASK"
    | "KNT_CREATE_POOL_FORM"
    | "KNT_TASK_NOT_FOUND"
    | "KNT_TASK_MISMATCH"
    | "KNT_INVALID_ARGUMENT"
    | "KNT_RUNTIME_UNAVAILABLE"
    | "KNT_NO_MODULE_FILE"
    | "KNT_TOO_MANY_TASKS"
    | "KNT_WORKER_START_FAILED"
    | "KNT_BROADCAST_FAILED"
    | "KNT_NOT_A_STREAM"
    | "KNT_SHARED_BYTES"
    | "KNT_BODY_TOO_LARGE"
  >
>;
try {
  await pool.call.add([1, 2]);
} catch (err) {
  if (err instanceof WorkerExitError) {
    type _name = Assert<Equal<typeof err.name, "WorkerExitError">>;
    type _code = Assert<Equal<typeof err.code, "KNT_WORKER_EXIT">>;
    const where: [number, number | undefined, number | null] = [err.lane, err.threadId, err.exitCode];
    const proc: [number | undefined, string | null | undefined] = [err.pid, err.signal];
    const message: string = err.message;
    const asError: Error = err;
    const asKnitting: KnittingError = err;
    void [where, proc, message, asError, asKnitting];
  } else {
    const code = (err as KnittingError).code;
    if (code === "KNT_HARD_TIMEOUT" || code === "KNT_TASK_TIMEOUT" || code === "KNT_ABORT_SIGNALS_EXHAUSTED") void code;
  }
}

type _codec = Assert<
  Equal<
    typeof CODEC_ERRORS,
    {
      readonly FUNCTION: "KNT_VALUE_FUNCTION";
      readonly SYMBOL: "KNT_VALUE_SYMBOL";
      readonly SERIALIZE: "KNT_VALUE_UNSERIALIZABLE";
      readonly LIMIT: "KNT_VALUE_TOO_LARGE";
    }
  >
>;
const limit: KnittingErrorCode = CODEC_ERRORS.LIMIT;

void [
  def,
  maybe,
  described,
  tripled,
  unknownResult,
  watchResult,
  flagValue,
  singleResult,
  one,
  anyAbortability,
  timeouts,
  limit,
];
