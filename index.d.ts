// Type declarations for "knitting-native".
//
// One file serves both ESM (`import`) and CommonJS (`require`) consumers: the
// package's `exports` map points the "types" condition here for both, and this
// file is a plain module declaration file (top-level `export declare`).
//
// Needs TypeScript 5.4 or later (`NoInfer`) and lib `esnext.disposable` (or
// `@types/node`) for `Symbol.dispose` / `Symbol.asyncDispose`. It needs no DOM
// lib: `AbortSignal` is taken from the global scope when it is declared there
// (`@types/node`, lib "dom"), see {@link CallOptions}.

/** Phantom key that marks a value as a task made by {@link task} or {@link importTask}. Not exported. */
declare const kTask: unique symbol;

// ---------------------------------------------------------------------------
// Tasks
// ---------------------------------------------------------------------------

/**
 * A task made by {@link task} or {@link importTask}: a function that runs
 * inside the pool's workers, taking one argument of type `A` and producing a
 * result of type `R` (the awaited result; an async `f` that resolves to `R`
 * gives `Task<A, R>`).
 *
 * `Abortable` is `true` for an abort-aware task (`abortSignal: { hasAborted: true }`):
 * its calls return an {@link AbortablePromise} instead of a plain `Promise`.
 * Annotate such a task as `Task<A, R, true>`: it is not assignable to
 * `Task<A, R>` (whose calls have no `reject()`), nor the reverse;
 * `Task<A, R, boolean>` accepts both.
 *
 * The type is opaque: only {@link task} and {@link importTask} make values of
 * it. Write it as `Task<number, string>` to annotate a task that takes a
 * number and resolves to a string.
 */
export interface Task<A, R, Abortable extends boolean = false> {
  /** Type-level brand only; there is no such property at run time. */
  readonly [kTask]: (arg: A) => R;

  /**
   * Starts a pool that runs only this task, called as `pool.call(arg)`
   * instead of `pool.call.name(arg)`. Same options as {@link createPool}.
   *
   * @example
   * const pool = add.createPool({ threads: 2 });
   * const three = await pool.call([1, 2]);
   * await pool.shutdown();
   */
  createPool(options?: PoolOptions): SingleTaskPool<A, R, Abortable>;
}

/**
 * Anything that can be handed to the function returned by {@link createPool}:
 * a {@link Task} (plain or abort-aware), or a bare exported function of at
 * most one parameter.
 */
export type TaskLike = Task<any, any, boolean> | ((arg: any) => any);

/** The record of tasks given to a pool, keyed by the name they are called by. */
export type TaskMap = Record<string, TaskLike>;

/**
 * The constraint on the tasks `T` given to a pool: every property is a
 * {@link TaskLike}. Same as `T extends TaskMap`, except that it also accepts
 * interface types and module namespaces (`import * as tasks`), which have no
 * implicit index signature.
 */
export type TasksOf<T> = { [K in keyof T]: TaskLike };

/**
 * The argument type of a task: `A` for a `Task<A, R>`; for a bare function,
 * its first parameter (`void` when it has none).
 */
export type ArgOf<T> = T extends { readonly [kTask]: (arg: infer A) => any }
  ? A
  : T extends (...args: infer P) => any
    ? P extends readonly []
      ? void
      : P[0]
    : never;

/**
 * The result type of a task (what its call resolves to): the awaited `R` for
 * a `Task<A, R>`; for a bare function, its awaited return type.
 */
export type ResultOf<T> = T extends { readonly [kTask]: (arg: any) => infer R }
  ? Untransferred<Awaited<R>>
  : T extends (...args: any) => infer R
    ? Untransferred<Awaited<R>>
    : never;

declare const kTransferred: unique symbol;

/**
 * Bytes in the pool's shared memory, read and written in place (`u8`), that
 * cross to a worker (thread or process) and back without a copy. Made by
 * `pool.sharedBytes(n)` in the host, {@link sharedBytes} in a task, or
 * `pool.readBody(request, { maxBytes })`. Passed as the whole argument of a
 * call, or returned by a task, it is handed over: the sender's handle is
 * spent (`u8` throws, its earlier views read as empty). Exactly one side
 * holds it; that side releases it (`release()`, or `using`). Errors have the
 * code `"KNT_SHARED_BYTES"`.
 */
export interface SharedBytes {
  /** The bytes, in place (a view of shared memory). Throws once released or handed over. */
  readonly u8: Uint8Array;
  readonly byteLength: number;
  /** True once released, or handed to a call (or returned by a task). */
  readonly released: boolean;
  /** True while the bytes are in shared memory; false for a result copied out after `payload.borrowMs`. */
  readonly shared: boolean;
  /** Gives the bytes back; throws for a handle released or handed over already. */
  release(): void;
  /** `using`: releases the bytes if this side still holds them. */
  [Symbol.dispose](): void;
}

/** A buffer a caller or task gave up with {@link transfer}: the receiver gets a `T`. */
export interface Transferred<T extends ArrayBuffer | ArrayBufferView = ArrayBuffer | ArrayBufferView> {
  readonly [kTransferred]: T;
}

/** What a {@link Transferred} value arrives as: `T` for `Transferred<T>`, anything else as it is. */
export type Untransferred<R> = R extends Transferred<infer V> ? V : R;

/** The transfer() form a task's argument type `A` accepts (when `A` is a buffer or a view). */
export type TransferredArg<A> = A extends ArrayBuffer | ArrayBufferView ? Transferred<A> : never;

/**
 * What a streaming task yields (for `pool.stream`): `Y` when its `f` returns
 * an `AsyncIterable<Y>` or `Iterable<Y>` (an `async function*` or
 * `function*`, an array), `never` for any other task.
 */
export type YieldOf<T> = T extends { readonly [kTask]: (arg: any) => infer R }
  ? IterableYield<Awaited<R>>
  : T extends (...args: any) => infer R
    ? IterableYield<Awaited<R>>
    : never;

type IterableYield<R> = R extends AsyncIterable<infer Y> ? Y : R extends Iterable<infer Y> ? Y : never;

/** `true` for an abort-aware task (`Task<A, R, true>`), `false` for any other task or function. */
export type AbortableOf<T> = T extends Task<any, any, true> ? true : false;

/**
 * What `timeout` of {@link task} / {@link importTask} takes: a limit, in
 * milliseconds, on each call of the task, counted from when the call is
 * submitted (once a Promise argument has resolved; time spent queued for a
 * free slot included). When it passes:
 *
 * - `number`, or `{ time }` alone: the call rejects with an `Error` whose
 *   message starts with `"Task timeout"` and whose `code` is `"KNT_TASK_TIMEOUT"`.
 * - `{ time, default }`: the call resolves with `default` (so `default` must be
 *   of the task's result type `R`; `default: undefined` makes it `R | undefined`,
 *   as `maybe: true` does).
 * - `{ time, maybe: true }`: the call resolves with `undefined` (so the task's
 *   result type becomes `R | undefined`).
 * - `{ time, error }`: the call rejects with `error`, as given.
 *
 * Only one of `default`, `maybe` and `error` may be given. `time` must be a
 * positive, finite number. The worker is not interrupted: it runs `f` to its
 * end and the late result is dropped (an abort-aware task sees
 * `signal.hasAborted()` turn `true`, and can stop early).
 *
 * @default no timeout
 */
export type TaskTimeout<R> =
  | number
  | { time: number; default: R; maybe?: never; error?: never }
  | { time: number; maybe: true; default?: never; error?: never }
  | { time: number; error: unknown; default?: never; maybe?: never }
  | { time: number; default?: never; maybe?: never; error?: never };

/**
 * The forms of {@link TaskTimeout} whose timed-out call resolves with
 * `undefined`: `{ time, maybe: true }`, and `{ time, default: undefined }`
 * (which the overloads taking this type catch before the others, whose
 * `default?: never` would let `undefined` through as a rejecting timeout).
 */
type MaybeTimeout =
  | Extract<TaskTimeout<unknown>, { maybe: true }>
  | { time: number; default: undefined; maybe?: never; error?: never };

/** The forms of {@link TaskTimeout} that keep the result type `R`. */
type DefiniteTimeout<R> = Exclude<TaskTimeout<R>, { maybe: true }>;

/**
 * What `abortSignal` of {@link task} / {@link importTask} takes to make the
 * task abort-aware: `{ hasAborted: true }`, or `true` for short.
 */
type AbortSignalOption = { hasAborted: true } | true;

/**
 * The second parameter of an abort-aware task's `f` (declared with
 * `abortSignal: { hasAborted: true }`), inside the worker.
 */
export interface AbortSignalToolkit {
  /**
   * `true` once the host has aborted this call: through the task's `timeout`,
   * the caller's `AbortSignal` ({@link CallOptions.signal}), or the call
   * promise's own `reject()` ({@link AbortablePromise}). A cheap read of a
   * flag in shared memory: poll it in long loops and return early.
   */
  hasAborted(): boolean;
  /** A monotonic clock, in milliseconds (the worker's `performance.now()`). */
  now(): number;
  /**
   * Reports progress to the caller's {@link CallOptions.onProgress}, if it
   * gave one (else it does nothing). Reports are coalesced: while one is on
   * its way, a newer one replaces the one waiting, so the caller sees the
   * latest, never a backlog.
   */
  progress(value: unknown): void;
}

/**
 * The promise returned by a call of an abort-aware task: a `Promise<R>` with
 * a `reject(reason)` method that aborts the call. `reject` settles the call at
 * once, rejecting with `reason`, and raises the task's abort flag (its
 * `signal.hasAborted()` becomes `true`); on a settled call it does nothing.
 */
export type AbortablePromise<R> = Promise<R> & { reject(reason?: unknown): void };

/**
 * What a call returns: an {@link AbortablePromise} for an abort-aware task
 * (`Abortable` is `true`), else a plain `Promise<R>`.
 */
export type CallPromise<R, Abortable extends boolean = false> = [Abortable] extends [true]
  ? AbortablePromise<R>
  : Promise<R>;

/**
 * The members of an `AbortSignal` that a call uses: the type of
 * {@link CallOptions.signal} when no global `AbortSignal` type is declared.
 */
interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason: any;
  addEventListener(type: "abort", listener: (event: any) => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: (event: any) => void): void;
}

/**
 * The global `AbortSignal` type where one is declared (by `@types/node` or
 * lib "dom"), else {@link AbortSignalLike}. Taken from `typeof globalThis`, so
 * that this file compiles without either.
 */
type AbortSignalType = typeof globalThis extends { AbortSignal: { prototype: infer S } } ? S : AbortSignalLike;

/** The second, optional argument of a call: `pool.call.name(arg, { signal })`. */
export interface CallOptions {
  /**
   * An `AbortSignal` (as from `new AbortController().signal` or
   * `AbortSignal.timeout(ms)`). When it fires, the call rejects at once with
   * a `DOMException` named `"AbortError"` whose `cause` is the signal's
   * reason; a signal that has already fired rejects the call before it is
   * sent. An abort-aware task also sees `signal.hasAborted()` turn `true`.
   * Firing after the call has settled changes nothing.
   * @default no signal
   */
  signal?: AbortSignalType;
  /**
   * Called on the caller's thread with each progress report the task makes
   * through `signal.progress(value)` ({@link AbortSignalToolkit.progress}),
   * while the call is pending; reports are coalesced (the latest wins).
   * @default no progress
   */
  onProgress?: (value: any) => void;
}

/** The second, optional argument of `pool.stream.name(arg, options)`. */
export interface StreamOptions {
  /** As {@link CallOptions.signal}: when it fires, the stream ends with an `"AbortError"` and the generator stops. */
  signal?: AbortSignalType;
  /**
   * How many values the worker may run ahead of the caller: the generator is
   * not resumed while this many values are sent and not yet consumed. For
   * large values it shrinks to about 16 MiB of them.
   * @default 4096
   */
  window?: number;
}

/**
 * What `pool.stream.name(arg)` returns: an async iterator (and iterable) of
 * the values the task yields, as they come. `break`, `return()` or the
 * {@link StreamOptions.signal} end the generator in the worker (its `finally`
 * runs; `return()` resolves once it has); `throw(err)` throws `err` into it.
 * A throw in the generator ends the stream with that error, after the values
 * yielded before it.
 */
export interface PoolStream<Y> extends AsyncIterator<Y, undefined, undefined> {
  next(): Promise<IteratorResult<Y, undefined>>;
  return(): Promise<IteratorResult<Y, undefined>>;
  throw(err?: unknown): Promise<IteratorResult<Y, undefined>>;
  [Symbol.asyncIterator](): PoolStream<Y>;
}

/** The streaming side of one task (`never` for a task that yields nothing). */
export type TaskStreamer<A, Y> = [Y] extends [never]
  ? never
  : undefined extends A
    ? (arg?: A | Promise<A>, options?: StreamOptions) => PoolStream<Y>
    : (arg: A | Promise<A>, options?: StreamOptions) => PoolStream<Y>;

/**
 * The caller side of one task: takes the argument (or a Promise of it, awaited
 * before it is sent) and, optionally, {@link CallOptions}; resolves to the
 * task's result. The argument may be left out when the task takes none (its
 * argument type accepts `undefined`, e.g. `void`). An abort-aware task's
 * caller returns an {@link AbortablePromise}.
 */
export type TaskCaller<A, R, Abortable extends boolean = false> = undefined extends A
  ? (arg?: A | Promise<A> | TransferredArg<A>, options?: CallOptions) => CallPromise<R, Abortable>
  : (arg: A | Promise<A> | TransferredArg<A>, options?: CallOptions) => CallPromise<R, Abortable>;

/** The second, optional argument of a broadcast: `pool.broadcast.name(arg, { keep: true })`. */
export interface BroadcastOptions {
  /**
   * Also remember this broadcast (the last one per task): every worker that
   * starts later (a replacement, a recycled worker's, an elastic pool's new
   * one) runs the kept broadcasts, in the order their tasks were first
   * kept, before it reports ready, so before any call reaches it. One that
   * throws there fails the pool as a start-up error (`"KNT_BROADCAST_FAILED"`).
   * @default false
   */
  keep?: boolean;
}

/**
 * The broadcast side of one task: runs it once on every live worker and
 * resolves to the results in lane order, one per worker. The argument is
 * sent as it is (a Promise is not awaited).
 */
export type TaskBroadcaster<A, R> = undefined extends A
  ? (arg?: A, options?: BroadcastOptions) => Promise<R[]>
  : (arg: A, options?: BroadcastOptions) => Promise<R[]>;

// ---------------------------------------------------------------------------
// Pools
// ---------------------------------------------------------------------------

/** What every pool has besides its callers: start-up, shutdown and disposal. */
export interface PoolLifecycle {
  /**
   * Resolves once every worker has loaded its tasks (after
   * `worker.bootstrap`, if any). Rejects with the start-up error (a bootstrap
   * or task module that fails to load or throws); calls then reject with that
   * error too. Rejects with a `"KNT_POOL_SHUTDOWN"` error when the pool is
   * shut down before it was ready. Calls need not wait for it: a call made
   * before then runs once a worker is ready. Inside a pool worker, where
   * `createPool` returns an inert pool, it is already resolved.
   */
  readonly ready: Promise<void>;

  /**
   * Shuts the pool down; resolves once every worker thread has exited. Calls
   * made afterwards reject with a {@link KnittingError} whose `code` is
   * `"KNT_POOL_SHUTDOWN"`, as do calls still pending when the workers are
   * stopped. Those rejections come just after this promise resolves, never
   * before, so a handler attached after `await pool.shutdown()` still
   * catches them.
   *
   * Without `delayMs` (and without `worker.resolveAfterFinishingAll`), pending
   * calls are rejected at once. With `delayMs`, calls already submitted get up
   * to that many milliseconds to finish, then the pool is forced. With
   * `worker.resolveAfterFinishingAll: true` and no `delayMs`, it waits for
   * every submitted call, however long.
   *
   * A second call returns the same promise. A `delayMs` that is not a
   * non-negative number rejects with a `RangeError` and leaves the pool open.
   *
   * @param delayMs Milliseconds to let submitted calls finish before forcing.
   * @default delayMs: none (stop at once, unless `worker.resolveAfterFinishingAll`)
   */
  shutdown(delayMs?: number): Promise<void>;

  /**
   * Starts {@link PoolLifecycle.shutdown} without waiting for it, so that
   * `using pool = createPool()(tasks)` shuts the pool down at scope exit.
   */
  [Symbol.dispose](): void;

  /**
   * Same as `shutdown()` (the same promise), so that
   * `await using pool = createPool()(tasks)` waits for the shutdown at scope exit.
   */
  [Symbol.asyncDispose](): Promise<void>;

  /**
   * Calls waiting in the host's queue for a free worker slot (each worker
   * holds up to 32 calls in its slots; only calls beyond those wait).
   */
  readonly queueSize: number;

  /**
   * `true` once the queue reached {@link PoolOptions.maxQueue} (or a call was
   * refused), until the queue is empty again, when `"drain"` is emitted.
   * Always `false` without `maxQueue`.
   */
  readonly needsDrain: boolean;

  /**
   * Counts of calls, and with `stats: true` run and wait times and each
   * worker's busy fraction; see {@link PoolStats}. Each call starts a new
   * interval for {@link WorkerStats.recentUtilization}.
   */
  stats(): PoolStats;

  /** Listens to the pool's events; see {@link PoolEvents}. Returns the pool. */
  on<E extends keyof PoolEvents>(name: E, listener: PoolEvents[E]): this;
  /** As {@link PoolLifecycle.on}, once. */
  once<E extends keyof PoolEvents>(name: E, listener: PoolEvents[E]): this;
  /** Removes a listener added with `on` or `once`. */
  off<E extends keyof PoolEvents>(name: E, listener: PoolEvents[E]): this;
  /** Same as `off` (what `events.once(pool, name)` calls). */
  removeListener<E extends keyof PoolEvents>(name: E, listener: PoolEvents[E]): this;
}

/**
 * A pool's events. Listeners run a microtask after the pool has reacted, so
 * listeners added right after `createPool()` hear of the first workers.
 * An unknown name is a `TypeError` (`KNT_INVALID_OPTION`).
 */
export interface PoolEvents {
  /** The queue was full ({@link PoolLifecycle.needsDrain}) and is empty again. */
  drain: () => void;
  /** A worker was started: at creation, or to replace one. */
  workerCreate: (event: WorkerCreateEvent) => void;
  /** A worker ended, and why. */
  workerExit: (event: WorkerExitEvent) => void;
  /** Never emitted; accepted so that `events.once(pool, name)` works. */
  error: (error: unknown) => void;
}

export interface WorkerCreateEvent {
  /** The worker's lane: 0 to threads - 1 (a replacement takes its predecessor's). */
  index: number;
  /** A worker thread's `threadId` (undefined for worker processes). */
  threadId?: number;
  /** A worker process's pid (undefined for worker threads). */
  pid?: number;
}

export interface WorkerExitEvent extends WorkerCreateEvent {
  /** Its exit code (null when a signal ended a worker process). */
  code: number | null;
  /** The signal that ended a worker process, or null. */
  signal: string | null;
  /**
   * `"shutdown"`: the pool was shut down. `"recycle"`: it reached
   * `worker.maxCallsBeforeRecycle` or `worker.maxMemoryBeforeRecycle`
   * (`recycle` says which) and was replaced. `"hardTimeout"`: terminated
   * for `worker.hardTimeoutMs`. `"abandoned"`: terminated because a call
   * its caller gave up on still held its thread `worker.abandonGraceMs`
   * later; it is replaced. `"startFailed"`: it died while loading its
   * modules. `"crash"`: it ended on its own (an uncaught error,
   * `process.exit()`, out of memory); it is replaced. `"idle"`: an elastic
   * pool's worker beyond `minThreads` left after `idleTimeout` ms without a
   * call; it is not replaced (the pool starts one again when calls wait).
   */
  reason: "shutdown" | "recycle" | "idle" | "hardTimeout" | "abandoned" | "startFailed" | "crash";
  /** With reason `"recycle"`: which limit. */
  recycle?: "calls" | "memory";
  /** The error the worker reported, if any. */
  error?: unknown;
}

/**
 * A distribution of times, in milliseconds (from a fixed log-linear
 * histogram: a percentile is at most 12.5% above the true value).
 */
export interface TimeDistribution {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface WorkerStats {
  /** The worker's lane (replacements keep it). */
  index: number;
  /** Calls it answered. */
  calls: number;
  /**
   * Its calls' run time over the time since the pool started, at most 1.
   * An async call counts from its start to its answer, awaits included.
   */
  utilization: number;
  /** The same since the previous `stats()` call (or the start). */
  recentUtilization: number;
}

/** What {@link PoolLifecycle.stats} returns. */
export interface PoolStats {
  /**
   * Calls taken: made while the pool was open and past the checks of the
   * call itself (its options, an already aborted signal), refused ones
   * included; `submitted = completed + failed + pending`.
   */
  submitted: number;
  /** Calls resolved. */
  completed: number;
  /** Calls rejected, for any reason (refused ones included). */
  failed: number;
  /** Calls refused because the queue was full (`KNT_QUEUE_FULL`). */
  shed: number;
  /** Calls not yet settled. */
  pending: number;
  /** Calls in worker slots (or on the inline lane), not yet answered. */
  inFlight: number;
  /** Calls waiting for a slot ({@link PoolLifecycle.queueSize}). */
  queued: number;
  /**
   * Workers running now (started and not yet exited), with or without
   * `stats: true`: an elastic pool's running workers, not its `maxThreads`
   * lanes; 0 once shut down. piscina's and tinypool's `pool.threads.length`.
   */
  threads: number;
  /** Milliseconds since the pool was created. */
  elapsedMs: number;
  /** With `stats: true`: how long tasks ran in the workers; else null. */
  runTime: TimeDistribution | null;
  /**
   * With `stats: true`: each answered call's time from submission to answer
   * minus its run time (queue, slot, crossing); else null.
   */
  waitTime: TimeDistribution | null;
  /** With `stats: true`: one entry per worker lane; else null. */
  workers: WorkerStats[] | null;
}

/**
 * A running pool over the tasks in `T`: an object of tasks keyed by name, or
 * an array (a tuple) of tasks.
 */
export interface Pool<T extends TasksOf<T>> extends PoolLifecycle {
  /**
   * One caller per task, by name: `pool.call.add([1, 2])` runs `add` on a
   * worker and resolves to its result. For tasks given as an array, by
   * index: `pool.call[0](arg)` (a tuple keeps each index's own types). The argument may also be a Promise of
   * the argument type; it is awaited before it is sent. The optional second
   * argument is {@link CallOptions} (`{ signal }`).
   *
   * A call rejects with a {@link KnittingError} when its argument or result
   * cannot cross to or from the worker, when the task times out (see
   * {@link TaskTimeout}), when its worker exits ({@link WorkerExitError}), or
   * when the pool shuts down; with a `DOMException` named `"AbortError"` when
   * its {@link CallOptions.signal} fires; and with what the task threw when it
   * throws.
   *
   * Calls of an abort-aware task return an {@link AbortablePromise} (with
   * `reject()`); calls of any other task return a plain `Promise`.
   */
  readonly call: { readonly [K in keyof T]: TaskCaller<ArgOf<T[K]>, ResultOf<T[K]>, AbortableOf<T[K]>> };

  /**
   * One streamer per task that yields (an `async function*` or `function*`,
   * or an `f` that returns an iterable): `for await (const row of
   * pool.stream.parse(file))` gets its values as the worker produces them,
   * at most {@link StreamOptions.window} ahead of the loop. See {@link PoolStream}.
   */
  readonly stream: { readonly [K in keyof T]: TaskStreamer<ArgOf<T[K]>, YieldOf<T[K]>> };

  /**
   * One broadcaster per task, by name (or index), as for `call`:
   * `pool.broadcast.setConfig(cfg)` runs `setConfig` once on every live
   * worker, thread or process, and resolves to the results in lane order.
   * It travels on the host-worker control channel, not the lanes: a worker
   * runs it when its event loop next turns (at once when idle). It rejects
   * with a {@link BroadcastError} when the task throws on any worker, with
   * that worker's {@link WorkerExitError} (carrying the same `results`)
   * when one exits meanwhile, and as a call does after shutdown.
   * `{ keep: true }` ({@link BroadcastOptions}) also runs it on workers that
   * start later, before they serve a call.
   */
  readonly broadcast: { readonly [K in keyof T]: TaskBroadcaster<ArgOf<T[K]>, ResultOf<T[K]>> };

  /** `n` bytes of the pool's shared memory, yours to fill and pass to a call; see {@link SharedBytes}. */
  sharedBytes(n: number): SharedBytes;

  /**
   * A request body read into shared bytes, refused (a `RangeError` with `code`
   * `"KNT_BODY_TOO_LARGE"` and `status` 413) once it would pass `maxBytes`: a
   * `Content-Length` over it before anything is read, a chunked body as soon
   * as it passes it. `request`: a `node:http` `IncomingMessage` or a web `Request`.
   */
  readBody(request: ReadBodySource, options: { maxBytes: number }): Promise<SharedBytes>;
}

/**
 * What {@link Pool.readBody} reads: a `node:http` `IncomingMessage` (its
 * headers and 'data'/'end'/'error' events) or a web `Request` (`headers.get`,
 * a `ReadableStream` body); written structurally, so that the types need
 * neither `@types/node` nor the DOM library.
 */
export type ReadBodySource =
  | {
      readonly headers: { readonly [name: string]: string | string[] | undefined };
      on(event: string, listener: (...args: any[]) => void): unknown;
    }
  | { readonly headers: { get(name: string): string | null }; readonly body: unknown };

/**
 * A pool of one task, made by `task({ f }).createPool(options)`: called as
 * `pool.call(arg)`. An abort-aware task's calls (`Abortable` is `true`) return
 * an {@link AbortablePromise}.
 */
export interface SingleTaskPool<A, R, Abortable extends boolean = false> extends PoolLifecycle {
  /**
   * Runs the task on a worker with `arg` (or the value of a Promise of it)
   * and resolves to its result; `options` as for {@link Pool.call}.
   */
  readonly call: TaskCaller<A, R, Abortable>;

  /** The values the task yields, as they come; see {@link Pool.stream}. */
  readonly stream: TaskStreamer<A, IterableYield<R>>;

  /** Runs the task once on every live worker; see {@link Pool.broadcast}. */
  readonly broadcast: TaskBroadcaster<A, R>;

  /** See {@link Pool.sharedBytes}. */
  sharedBytes(n: number): SharedBytes;

  /** See {@link Pool.readBody}. */
  readBody(request: ReadBodySource, options: { maxBytes: number }): Promise<SharedBytes>;
}

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

/** Sizes of the shared-memory payload region that arguments and results travel through. */
export interface PayloadOptions {
  /**
   * `"growable"`: the region starts at `payloadInitialBytes` and grows up to
   * `payloadMaxByteLength`. `"fixed"`: it is allocated once, at
   * `payloadInitialBytes` if given, else at `payloadMaxByteLength`, and never grows.
   * @default "growable"
   */
  mode?: "growable" | "fixed";
  /**
   * Bytes the growable shared payload region starts with.
   * @default 4194304 (4 MiB), or `payloadMaxByteLength` when that is smaller
   */
  payloadInitialBytes?: number;
  /**
   * Cap on the growable shared payload region (its `maxByteLength`): it never
   * grows past this many bytes. When the payloads in flight fill it, calls
   * wait for room (bounded by their own timeout or `AbortSignal`); only a
   * payload larger than an empty region holds (this, less under 100 bytes
   * of bookkeeping) rejects, with a `RangeError` whose `code` is `"KNT_VALUE_TOO_LARGE"`.
   * @default 67108864 (64 MiB)
   */
  payloadMaxByteLength?: number;
  /**
   * Limit on the encoded size, in bytes, of one call's argument or result. A
   * call over it rejects with a `RangeError` whose `code` is `"KNT_VALUE_TOO_LARGE"`.
   * @default payloadMaxByteLength / 8 (8 MiB)
   */
  maxPayloadBytes?: number;
  /**
   * How long a {@link SharedBytes} a task returned stays in shared memory, the
   * caller's to use in place, before its bytes are copied out into an ordinary
   * `Uint8Array` (`shared` then reads false) and its room goes back.
   * @default 10000 (10 s)
   */
  borrowMs?: number;
}

/**
 * `worker.bootstrap`: a module that each worker imports before it loads any
 * task module (to install globals, open connections, read configuration...).
 */
export interface BootstrapOptions {
  /**
   * The module's URL, or a path relative to the module that calls
   * `createPool` (resolved from there, as `new URL(href, callerURL)`).
   */
  href: string;
  /**
   * The name of a function the module exports. The worker calls it with
   * {@link BootstrapOptions.data} and a frozen {@link BootstrapContext}, and
   * awaits it before loading the tasks. If
   * the module fails to load, has no such function, or the function throws or
   * rejects, the pool fails to start (`pool.ready` and every call reject with
   * that error).
   * @default none: the module is only imported
   */
  name?: string;
  /**
   * The argument passed to the `name` export. It is copied to each worker
   * (structured clone), so it must be cloneable.
   * @default undefined
   */
  data?: unknown;
}

/** `worker.processSharedMemory`: how worker processes reach the pool's memory. */
export type ProcessSharedMemory =
  | "inherit"
  | { mode: "inherit" }
  | {
      mode: "named";
      /**
       * Start of the POSIX shm name
       * (`/<namePrefix>-<pid namespace>-<host pid>-<32 random hex digits>`):
       * 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with `.`.
       * @default "knitting-native"
       */
      namePrefix?: string;
    };

/** How each worker is started, watched and stopped. */
export interface WorkerOptions {
  /**
   * `"thread"`: workers are `worker_threads`. `"process"` (Linux): each
   * worker is a separate Node process; calls still travel through shared
   * memory. A worker process that dies rejects the calls it held with a
   * {@link WorkerExitError} naming its pid and exit code or signal, and is
   * replaced.
   * @default "thread"
   */
  runtime?: "thread" | "process";
  /**
   * Runtime "process": the runtime of each worker process. Its executable is
   * `processExecutable`, else the host's own for the host's runtime, else
   * `node`/`bun`/`deno` on PATH; none is an error (`code`
   * `"KNT_RUNTIME_UNAVAILABLE"`) naming the runtime and `worker.processExecutable`.
   * @default the host's runtime ("node" on Node.js)
   */
  processRuntime?: "node" | "deno" | "bun";
  /**
   * Runtime "process": path of the `processRuntime` executable (must be executable, else
   * `KNT_RUNTIME_UNAVAILABLE`).
   */
  processExecutable?: string;
  /**
   * Runtime "process": `"inherit"` maps an anonymous memfd that each child
   * inherits as a file descriptor; `{ mode: "named" }` creates a POSIX shm
   * object (exclusive, mode 0600, unguessable name) that children reopen by
   * name, unlinked as soon as every starting worker has mapped it (by the
   * workers if the host dies first, or by the next named pool with the same
   * prefix if it dies before any worker got the name).
   * @default "inherit"
   */
  processSharedMemory?: ProcessSharedMemory;
  /** Runtime "process": prepended to the worker command (a sandbox wrapper, say). @default [] */
  processCommandPrefix?: string[];
  /** Runtime "process": arguments after the worker script (its `process.argv.slice(2)`). @default [] */
  processArgs?: string[];
  /**
   * Runtime "process": flags of each worker process's runtime (for Deno,
   * after `deno run`: its permissions).
   * @default Node workers of a Node host: the host's `process.execArgv` without `--inspect*`,
   * `--eval`/`--print`, `--test*` and `--watch*`; Deno workers: `["--allow-all"]`; otherwise `[]`
   */
  execArgv?: string[];
  /** Runtime "process": the whole environment of each worker process. @default process.env */
  env?: Record<string, string>;
  /**
   * V8 heap limits for each worker (as `new Worker(file, { resourceLimits })`).
   * A worker that runs out rejects the calls it held with a `WorkerExitError`
   * and is replaced.
   * @default none (Node's defaults)
   */
  resourceLimits?: {
    maxOldGenerationSizeMb?: number;
    maxYoungGenerationSizeMb?: number;
    codeRangeSizeMb?: number;
    stackSizeMb?: number;
  };
  /**
   * Milliseconds (a positive number) a call may run on a worker. A call that a worker has started
   * and that runs longer (a synchronous endless loop, say) gets that worker
   * terminated and replaced: the call holding the worker's thread rejects
   * with a {@link KnittingError} whose `code` is `"KNT_HARD_TIMEOUT"`, and
   * the other calls that worker started reject with a {@link WorkerExitError}
   * (they are not re-run); calls it had not started run on the replacement.
   * Unlike a task's `timeout`, this stops the running code.
   * @default none (no limit)
   */
  hardTimeoutMs?: number;
  /**
   * Milliseconds (a positive number) that a call its caller gave up on (its
   * task `timeout`, an `AbortSignal`, the promise's `.reject()`) may still
   * hold its worker's thread: then that worker is terminated and replaced,
   * so later calls never wait behind it forever. The calls it had not
   * started run on the replacement; the others it had started reject with a
   * {@link WorkerExitError} whose `cause` has `code` `"KNT_ABANDONED_CALL"`.
   * An async call that has not settled, with the thread free, is not
   * affected. `false`: the worker runs a given-up call to its end (knitting's
   * behaviour; a call that never ends then blocks its worker for good).
   * @default 1000
   */
  abandonGraceMs?: number | false;
  /**
   * Calls a worker runs before it is replaced (an integer, 1 or more). The
   * worker finishes the calls it holds, exits and is replaced; no call is
   * lost or rejected for it. Emits `"workerExit"` with reason `"recycle"`.
   * @default none
   */
  maxCallsBeforeRecycle?: number;
  /**
   * Bytes of a worker's V8 heap (`used_heap_size`) past which it is
   * replaced, checked between calls; as {@link WorkerOptions.maxCallsBeforeRecycle}.
   * @default none
   */
  maxMemoryBeforeRecycle?: number;
  /**
   * When `true`, `shutdown()` (without `delayMs`) lets every call already
   * submitted finish before it stops the workers; calls made meanwhile
   * reject with `"KNT_POOL_SHUTDOWN"`. When `false`, `shutdown()` without
   * `delayMs` rejects pending calls at once.
   * @default false
   */
  resolveAfterFinishingAll?: boolean;
  /**
   * When `true`, a task in a worker thread may end its worker with
   * `process.exit()` (or `Deno.exit()`): its calls reject with
   * `"KNT_WORKER_EXIT"` and a replacement starts. When `false`, those throw
   * `"KNT_PROCESS_EXIT_REFUSED"` in the task. `process.kill()` and
   * `process.abort()` are refused either way; worker processes always let a
   * task exit.
   * @default false
   */
  allowExit?: boolean;
  /**
   * A module each worker imports, awaiting its export `name` called with
   * `data`, before it loads the task modules; see {@link BootstrapOptions}.
   * @default none
   */
  bootstrap?: BootstrapOptions;
  /** How long an idle worker spins before it parks, and how long it then sleeps at most. */
  timers?: WorkerTimers;
}

/** `worker.timers`. */
export interface WorkerTimers {
  /** Microseconds an idle worker polls for new calls before it parks (0 to 1,000,000). @default 50 */
  spinMicroseconds?: number;
  /**
   * Longest a parked worker thread sleeps before it looks again (0 to
   * 3,600,000 ms); worker processes are always woken and ignore it.
   * @default none: until woken
   */
  parkMs?: number;
}

/** The second argument of a `worker.bootstrap` function. */
export interface BootstrapContext {
  /** The worker's index (its lane), 0 to `totalNumberOfThread - 1`. */
  readonly thread: number;
  /** The pool's worker count. */
  readonly totalNumberOfThread: number;
  /** The runtime the worker runs on. */
  readonly runtime: "node" | "bun" | "deno";
}

/**
 * The host's side of the pool (`host` of {@link PoolOptions}): how calls
 * reach the workers and how the host waits for answers.
 */
export interface HostOptions {
  /**
   * Work stealing: calls go to one shared submit region, from which idle
   * workers claim them, instead of to a worker chosen by the host. `true`
   * needs 2 to 31 `threads` and no `inliner` (a `RangeError` otherwise);
   * with it, `balancer` and `dispatcher` are not used.
   *
   * `KNITTING_STEAL=1|true|0|false` (any case) in the environment sets the
   * default for every pool (where stealing cannot work, `1` is ignored); any
   * other value is a `TypeError` at `createPool`.
   * @default on with 2 to 31 threads unless `balancer`, `dispatcher` (or
   * `KNITTING_DISPATCHER`) or `inliner` is given; else off
   */
  steal?: boolean;
  /**
   * How many region lanes the stealing region is split into. The region has
   * 32 slots per worker (`32 * threads`); each region lane gets
   * `32 * threads / stealRegionLanes` of them, which must be a whole number,
   * at most 32, and at least `threads + 1`. Checked (a `RangeError` stating
   * the rule) only while stealing is on, else ignored.
   * @default threads (region lanes of 32 slots)
   */
  stealRegionLanes?: number;
  /**
   * How a worker's doorbell ring reaches the host's event loop when stealing
   * is off: `"per-thread"` or `"serial-channel"`. `KNITTING_DISPATCHER` in
   * the environment sets the default (this option wins). Giving either turns
   * default stealing off.
   * @default "per-thread"
   */
  dispatcher?: "per-thread" | "serial-channel";
  /**
   * `true`: a host with calls in flight and nothing to drain sleeps until a
   * worker rings its doorbell. `false`: it polls instead, backing off up to
   * `maxBackoffMs` between passes.
   * @default true
   */
  doorbell?: boolean;
  /**
   * Drain passes that find nothing before the host sleeps on the doorbell
   * (or, with `doorbell: false`, before its polling starts to back off). An
   * integer from 0 to 1000000.
   * @default the pool's own adaptive budget
   */
  stallFreeLoops?: number;
  /**
   * The longest pause, in milliseconds, between polling passes when
   * `doorbell` is `false` (accepted, and unused, otherwise). More than 0 and
   * at most 60000.
   * @default the pool's own limit
   */
  maxBackoffMs?: number;
}

/**
 * How the host picks the worker for a call when stealing is off
 * (`balancer` of {@link PoolOptions}):
 * - `"roundRobin"`: each worker in turn.
 * - `"firstIdle"`: the first worker, in lane order, with nothing in flight.
 * - `"randomLane"`: a worker at random.
 * - `"firstIdleOrRandom"`: the first idle worker, else one at random.
 * - `"robinRound"`: older spelling of `"roundRobin"`.
 */
export type Balancer = "roundRobin" | "firstIdle" | "randomLane" | "firstIdleOrRandom" | "robinRound";

/**
 * The inline lane (`inliner` of {@link PoolOptions}): the host runs calls
 * itself, as one more lane beside the workers. `{}` takes every default.
 * Task modules then run in the host too, where `worker.bootstrap` never runs
 * (so the two cannot be combined).
 */
export interface InlinerOptions {
  /**
   * Where the inline lane stands among the lanes: before the workers
   * (`"first"`) or after them (`"last"`).
   * @default "last"
   */
  position?: "first" | "last";
  /**
   * Calls the host runs inline in one turn before it yields to its event
   * loop. An integer from 1 to 1000000.
   * @default 1
   */
  batchSize?: number;
  /**
   * Calls in flight from which the inline lane takes calls too. An integer
   * from 1 to 1000000.
   * @default 1
   */
  dispatchThreshold?: number;
}

/** Options for {@link createPool} (and a task's `createPool`). */
export interface PoolOptions {
  /**
   * Number of worker threads: an integer from 1 to 1024, or 0 with
   * `inliner` (the host's inline lane is then the only lane). A fixed size:
   * the shorthand for `minThreads` = `maxThreads` = `threads`; given with
   * either, they must agree (else a `RangeError`, `KNT_INVALID_OPTION`).
   * @default os.availableParallelism()
   */
  threads?: number;
  /**
   * An elastic pool's smallest size (an integer from 1 to 1024): the
   * workers it starts with and never shrinks below. Giving `minThreads` or
   * `maxThreads` makes the pool elastic.
   * @default 1
   */
  minThreads?: number;
  /**
   * An elastic pool's largest size (an integer from `minThreads` to 1024;
   * with `host: { steal: true }` at most the stealing region's claimant
   * limit). Shared memory is sized for it up front. While more calls wait
   * than the running workers run, the pool starts workers up to it.
   * @default max(minThreads, os.availableParallelism())
   */
  maxThreads?: number;
  /**
   * Milliseconds (an integer from 0 to 2^31 - 1) an elastic pool's worker
   * beyond `minThreads` may go without a call before it leaves (it first
   * finishes what it holds; `"workerExit"` with reason `"idle"`). Only with
   * `minThreads` or `maxThreads`.
   * @default 10000
   */
  idleTimeout?: number;
  /** Sizes of the shared payload region; see {@link PayloadOptions}. */
  payload?: PayloadOptions;
  /** How each worker is started, watched and stopped; see {@link WorkerOptions}. */
  worker?: WorkerOptions;
  /**
   * How many calls of abort-aware tasks may be in flight at once (each holds
   * an abort flag in shared memory until it settles). One more rejects at
   * once with a `RangeError` whose `code` is `"KNT_ABORT_SIGNALS_EXHAUSTED"`.
   * An integer from 0 to 1048576.
   * @default 1024
   */
  abortSignalCapacity?: number;
  /**
   * Prints traces on stderr: `true` every channel, or an object of channels
   * (`{ lifecycle: true, imports: true }`; also `host`, `signals`). `host`
   * names the topology at start-up, as knitting does: `dispatcher=steal`,
   * `dispatcher=per-thread` or `dispatcher=serial-channel`.
   * `KNITTING_DEBUG=1` in the environment turns them on for every pool.
   * @default false
   */
  debug?: boolean | { host?: boolean; lifecycle?: boolean; imports?: boolean; signals?: boolean };
  /** The host's side: work stealing, dispatcher, doorbell and polling; see {@link HostOptions}. */
  host?: HostOptions;
  /**
   * How the host picks a worker for each call when stealing is off; see
   * {@link Balancer}. Giving it turns default stealing off. A name not in the
   * list is a `TypeError` listing them.
   * @default the least loaded worker
   */
  balancer?: Balancer | { strategy: Balancer };
  /**
   * Lets the host run calls itself, as an extra lane; see
   * {@link InlinerOptions}. An object (`{}` for the defaults). Not with
   * `host.steal: true` nor with `worker.bootstrap` (a `RangeError`).
   * @default none (only workers run calls)
   */
  inliner?: InlinerOptions;
  /**
   * What task code in a worker may do, enforced by the worker runtime's own
   * permission model; see {@link PermissionPolicy}. `"unsafe"`: nothing is
   * restricted. `"strict"`: the hardened baseline (`{ mode: "strict" }`).
   * A restriction the pool's runtime cannot enforce (a scoped `net` list or
   * `env.allow` on Node.js, `"strict"` or any other restricting policy for
   * worker threads, which share the process, any policy with `inliner`) is a
   * `TypeError` (`KNT_INVALID_OPTION`) naming the key and the runtime.
   * @default "unsafe"
   */
  permission?: "unsafe" | "strict" | PermissionPolicy;
  /**
   * The most calls that may wait for a free worker slot (an integer from 0
   * to 2^30), or `"auto"`: 32 per worker (as many as the workers' slots
   * hold). A call beyond it rejects at once with a `RangeError` whose `code`
   * is `"KNT_QUEUE_FULL"`; nothing else is affected. See
   * {@link PoolLifecycle.needsDrain} and the `"drain"` event.
   * @default none (unbounded)
   */
  maxQueue?: number | "auto";
  /**
   * Workers time each call, for the run and wait times and busy fractions
   * of {@link PoolLifecycle.stats} (the counts are always kept). Off by
   * default: it cost 5-21% of tiny-call throughput when measured.
   * @default false
   */
  stats?: boolean;
}

/**
 * The global `URL` type where one is declared (`@types/node`, lib "dom"), else
 * `never` (paths are then strings only): taken from `typeof globalThis`, as
 * {@link AbortSignalType} is, so that this file compiles without either.
 */
type URLType = typeof globalThis extends { URL: { prototype: infer U } } ? U : never;

/** A path for {@link PermissionPolicy}: absolute, relative to `cwd`, `~/...`, or a `file:` URL. */
export type PermissionPath = string | URLType;

/** System information names of {@link PermissionPolicy.sys} (Deno's). */
export type PermissionSysName =
  | "hostname"
  | "osRelease"
  | "osUptime"
  | "loadavg"
  | "networkInterfaces"
  | "systemMemoryInfo"
  | "uid"
  | "gid";

/**
 * A permission policy, with knitting's keys and meanings. Keys left out
 * take the strict baseline: read the working directory (and the task
 * modules), write the working directory, no network, no environment
 * scoping, no child processes, no worker threads, no FFI, no WASI, console
 * muted. Which keys each runtime enforces or refuses is in the README
 * ("Permissions"). Worker threads share the host's process: they are no
 * sandbox.
 */
export interface PermissionPolicy {
  /**
   * `"strict"` (the baseline), `"custom"` (the same here: baseline plus overrides), `"unsafe"`
   * (nothing restricted; only `console` may be given).
   * @default "strict"
   */
  mode?: "strict" | "custom" | "unsafe";
  /** Whether task code's `console` methods print. @default false (true with mode "unsafe") */
  console?: boolean;
  /** Base directory of relative paths. @default process.cwd() */
  cwd?: string;
  /**
   * Paths task code may read (a directory covers its contents), or `true` for all. Replaces the
   * baseline when given.
   */
  read?: PermissionPath[] | true;
  /** Paths task code may write, or `true` for all. Replaces the baseline when given. */
  write?: PermissionPath[] | true;
  /** Paths task code may not read (refused on Node.js: no deny lists). */
  denyRead?: PermissionPath[];
  /** Paths task code may not write (refused on Node.js). */
  denyWrite?: PermissionPath[];
  /** Hosts task code may reach, or `true` for all (a list is refused on Node.js). @default [] (none) */
  net?: string[] | true;
  /** Hosts task code may not reach (refused on Node.js). */
  denyNet?: string[];
  /**
   * Hosts remote modules may be imported from (Deno); not applicable on Node.js.
   * @default ["deno.land", "esm.sh", "jsr.io"]
   */
  allowImport?: string[] | true;
  /** Environment variables task code may read (`allow`) or not (`deny`); refused on Node.js: use `worker.env`. */
  env?: { allow?: string[] | true; deny?: string[] };
  /** Commands task code may run, or `true` for all (a list is refused on Node.js). @default [] (none) */
  run?: string[] | true;
  /** Commands task code may not run (refused on Node.js). */
  denyRun?: string[];
  /** Whether task code may start worker threads. @default false */
  workers?: boolean;
  /**
   * Native code task code may load: `true`, or libraries. Node.js worker processes always allow addons
   * (the transport is one), so `false` or a list is refused there.
   */
  ffi?: PermissionPath[] | boolean;
  /** Libraries task code may not load (refused on Node.js). */
  denyFfi?: PermissionPath[];
  /** System information task code may read, or `true` (a list is refused on Node.js). */
  sys?: PermissionSysName[] | true;
  /** System information task code may not read (refused on Node.js). */
  denySys?: PermissionSysName[];
  /** Whether task code may use WASI. @default false */
  wasi?: boolean;
  /**
   * knitting's older spellings: `allowWorker` = `workers`, `allowChildProcess` = `run: true`,
   * `allowAddons`/`allowFfi` = `ffi: true`, `allowWasi` = `wasi`.
   */
  node?: {
    allowWorker?: boolean;
    allowChildProcess?: boolean;
    allowAddons?: boolean;
    allowFfi?: boolean;
    allowWasi?: boolean;
  };
  /** Deno's own settings (validated; applied once Deno worker processes exist). */
  deno?: { lock?: boolean | PermissionPath; frozen?: boolean; allowRun?: boolean };
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/**
 * Error codes used by knitting-native:
 * - `"KNT_VALUE_FUNCTION"`: a function cannot be sent to or from a worker.
 * - `"KNT_VALUE_SYMBOL"`: a symbol cannot be sent to or from a worker.
 * - `"KNT_VALUE_UNSERIALIZABLE"`: the value cannot be serialized (a WeakMap,
 *   a Promise, a detached buffer, a class instance holding a function, ...).
 * - `"KNT_VALUE_TOO_LARGE"`: the value's encoded size is over the payload
 *   limit (`payload.maxPayloadBytes`, or what an empty payload region holds;
 *   a `RangeError`).
 *
 *   These four are {@link ValueError}s: they name the task and the place in
 *   the value.
 * - `"KNT_INVALID_OPTION"`: a `createPool` option (or a call's options) is wrong
 *   (a `TypeError` or `RangeError` naming the option's full path).
 * - `"KNT_INVALID_TASK"`: the `tasks` object of `createPool(options)(tasks)` is wrong.
 * - `"KNT_POOL_IN_WORKER"`: a pool was called or shut down inside a pool
 *   worker (a task module whose calls are not behind `if (isMain)`): there
 *   `createPool` returns an inert pool, which starts no worker.
 * - `"KNT_CREATE_POOL_FORM"`: `createPool(options, tasks)` (the form is
 *   `createPool(options)(tasks)`), or `call`/`shutdown`/`ready` read on the
 *   function `createPool(options)` returns (a `TypeError`).
 * - `"KNT_TASK_NOT_FOUND"`: a worker did not find a task when it imported its
 *   module (a `task()` declared conditionally, a missing `importTask` export).
 * - `"KNT_TASK_MISMATCH"`: the worker found another function at a task's place.
 * - `"KNT_INVALID_ARGUMENT"`: a bad argument to `shutdown(delayMs)` or
 *   `stableTaskID(href, at)`.
 * - `"KNT_NO_MODULE_FILE"`: a task of `createPool` is declared in `node -e`, a
 *   REPL or stdin, which workers cannot import (a `TypeError`).
 * - `"KNT_RUNTIME_UNAVAILABLE"`: a worker process runtime's executable is missing.
 * - `"KNT_NOT_A_STREAM"`: `pool.stream.<name>()` of a task whose `f` returned
 *   no iterable (a `TypeError`).
 * - `"KNT_UNKNOWN_TASK"`: `pool.call.<name>()` for a name that is not a task
 *   of the pool (a `TypeError` listing the tasks).
 * - `"KNT_TOO_MANY_TASKS"`: more than 65,536 tasks (a `RangeError`).
 * - `"KNT_WORKER_START_FAILED"`: a pool's workers keep dying while they start
 *   (a top-level `listen()` outside `isMain`, say): `pool.ready` and every call
 *   reject with it when no worker runs (`cause`: the first error); also the
 *   code of the warning printed once.
 * - `"KNT_POOL_SHUTDOWN"`: the pool was shut down before the call settled, or
 *   the call was made after `shutdown()`.
 * - `"KNT_WORKER_EXIT"`: the worker holding the call exited (a {@link WorkerExitError}).
 * - `"KNT_TASK_TIMEOUT"`: the task's `timeout` (a number, or `{ time }` alone) passed.
 * - `"KNT_HARD_TIMEOUT"`: the call ran longer than `worker.hardTimeoutMs`; its
 *   worker was terminated and replaced.
 * - `"KNT_ABANDONED_CALL"`: the `cause` of a {@link WorkerExitError} when the
 *   worker was replaced because a call its caller had given up on still held
 *   its thread `worker.abandonGraceMs` later.
 * - `"KNT_QUEUE_FULL"`: `maxQueue` calls already waited for a slot (a `RangeError`).
 * - `"KNT_ABORT_SIGNALS_EXHAUSTED"`: more abort-aware calls in flight than
 *   `abortSignalCapacity` (the error is a `RangeError`).
 * - `"KNT_REGION_CORRUPT"`: a word the call needed, read from the pool's
 *   shared memory, made no sense (task code wrote into that memory).
 * - `"KNT_TRANSFER"`: {@link transfer} got a value it cannot take (not an
 *   `ArrayBuffer` or a view over all of one, a `SharedArrayBuffer`, a detached
 *   buffer), or a marker was sent twice or nested inside another value (a `TypeError`).
 * - `"KNT_SHARED_BYTES"`: a {@link SharedBytes} was used or released after it
 *   was released or handed over, nested inside a value, sent through another
 *   pool, made outside a task with `sharedBytes(n)`, or could not be taken by
 *   its receiver (its call ended first).
 * - `"KNT_BODY_TOO_LARGE"`: `pool.readBody` met a body over its `maxBytes`
 *   (a `RangeError` with `status` 413).
 * - `"KNT_PROCESS_EXIT_REFUSED"`: task code in a worker thread called
 *   `process.abort()` or `process.kill()` (always refused), or
 *   `process.exit()`, `process.reallyExit()` or `Deno.exit()` (refused
 *   unless `worker.allowExit`); the error's `task` names the task when
 *   known, and the worker keeps running.
 */
export type KnittingErrorCode =
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
  | "KNT_BODY_TOO_LARGE";

/**
 * An error a call rejects with when a value cannot cross between threads, or
 * the pool cannot complete it. `code` says why; see {@link KnittingErrorCode}.
 * Errors thrown by a task's own function keep their own `code`, if any (hence
 * `| string`).
 */
export interface KnittingError extends Error {
  code?: KnittingErrorCode | (string & {});
}

/**
 * What a broadcast rejects with when its task threw on one or more workers
 * (`code` `"KNT_BROADCAST_FAILED"`); its message names the first such worker
 * (lane and `threadId` or `pid`). The arrays hold one entry per worker the
 * broadcast went to, in lane order.
 */
export interface BroadcastError<R = unknown> extends Error {
  code: "KNT_BROADCAST_FAILED";
  /** The task broadcast. */
  task: string;
  /** Each entry's worker lane. */
  lanes: number[];
  /** Each worker's result; `undefined` where it threw. */
  results: (R | undefined)[];
  /** What each worker threw; `undefined` where it did not. */
  errors: unknown[];
  /** What the first failing worker threw. */
  cause: unknown;
}

/**
 * A call's argument, result or thrown error could not be sent: its message
 * reads `task "add", arg[0].x: cannot send a function "x"; ...`. A `TypeError`,
 * or a `RangeError` for `KNT_VALUE_TOO_LARGE`.
 */
export interface ValueError extends Error {
  code: (typeof CODEC_ERRORS)[keyof typeof CODEC_ERRORS];
  /** knitting 0.1.62's numbered code for the same kind of failure. */
  knittingCode: "KNT_ERROR_0" | "KNT_ERROR_1" | "KNT_ERROR_3";
  /** The task whose value it was (absent when the codec is used outside a call). */
  task?: string;
  /** Which value: the call's argument, its result, or the error the task threw. */
  side?: "argument" | "result" | "error";
  /** Where in that value, from `arg`, `result` or `error`: `arg[0].x`; absent when unknown. */
  path?: string;
}

/**
 * The error a call rejects with when the worker holding it exits before
 * answering (it crashed, ran out of memory, called `process.exit`, or was
 * terminated for another call's `worker.hardTimeoutMs` or
 * `worker.abandonGraceMs`; then `cause` is that call's `"KNT_HARD_TIMEOUT"`
 * or `"KNT_ABANDONED_CALL"` error). The pool replaces the worker; the call
 * is not re-run. Made by the pool; test for it with `instanceof`.
 */
export declare class WorkerExitError extends Error {
  constructor(
    lane: number,
    threadId: number | undefined,
    exitCode: number | null,
    cause?: unknown,
    proc?: { pid: number; signal: string | null },
  );
  readonly name: "WorkerExitError";
  readonly code: "KNT_WORKER_EXIT";
  /** Index of the pool's worker (its lane) that exited, from 0. */
  readonly lane: number;
  /** The exited worker thread's `threadId` (undefined for a worker process). */
  readonly threadId: number | undefined;
  /** The exited worker's exit code (null for a worker process ended by a signal). */
  readonly exitCode: number | null;
  /** Runtime "process": the worker process's pid. */
  readonly pid?: number;
  /** Runtime "process": the signal that ended it, or null. */
  readonly signal?: string | null;
}

/** The codes of the codec's errors, by what went wrong (see {@link KnittingErrorCode}). */
export declare const CODEC_ERRORS: {
  /** A function cannot be sent (`TypeError`). */
  readonly FUNCTION: "KNT_VALUE_FUNCTION";
  /** A symbol cannot be sent (`TypeError`). */
  readonly SYMBOL: "KNT_VALUE_SYMBOL";
  /** Serialization failed (`TypeError`). */
  readonly SERIALIZE: "KNT_VALUE_UNSERIALIZABLE";
  /** Over `payload.maxPayloadBytes`, or larger than an empty payload region holds (`RangeError`). */
  readonly LIMIT: "KNT_VALUE_TOO_LARGE";
};

// ---------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------

// task() and importTask() each have four overloads: abort-aware or not, and
// with a timeout that resolves with `undefined` (`{ time, maybe: true }`, or
// `{ time, default: undefined }`) or not. Each `maybe` overload comes before
// its other one, which would take `default: undefined` too; the plain one
// comes last because, when no overload matches, TypeScript reports the last
// overload's error.
//
// `A` is inferred from the parameter `f` declares. `F`, the type of `f`
// itself, only tells a parameterless `f` (calls take no argument: `void`)
// from an unannotated parameter: both leave `A` to its default, which is
// `any` rather than `void` so that `([a, b]) => a + b` type-checks as in
// JavaScript (with untyped calls) instead of destructuring `void`.

/**
 * The argument type of a task made by {@link task}: `void` when its `f` takes
 * no parameter, else `A` (explicit, inferred from `f`'s annotation, or `any`).
 */
type TaskArg<A, F> = F extends (...args: infer P) => any ? (P extends readonly [] ? void : A) : A;

/**
 * Defines an abort-aware task (`abortSignal: { hasAborted: true }` or `true`)
 * whose calls resolve with `undefined` when they time out
 * (`timeout: { time, maybe: true }`): its result type is `R | undefined`.
 *
 * `f` runs inside the pool's workers with the call's argument and an
 * {@link AbortSignalToolkit} (`signal.hasAborted()` turns `true` once the host
 * aborts the call: its timeout, the caller's `AbortSignal`, or the call
 * promise's `reject()`). Calls return an {@link AbortablePromise}.
 * Otherwise as the plain overload (the last one).
 */
export declare function task<A = any, R = unknown, F = unknown>(def: {
  /** The task's function, run in a worker with the call's argument and an abort toolkit. */
  f: F & ((arg: A, signal: AbortSignalToolkit) => R | Promise<R>);
  /**
   * `{ time, maybe: true }` (or `{ time, default: undefined }`): a call not finished within `time` ms
   * resolves with `undefined`; see {@link TaskTimeout}.
   */
  timeout: MaybeTimeout;
  /** Makes the task abort-aware: `f` gets `signal`, calls get `reject()`. @default not abort-aware */
  abortSignal: AbortSignalOption;
}): Task<TaskArg<A, F>, R | undefined, true>;
/**
 * Defines an abort-aware task (`abortSignal: { hasAborted: true }`, or
 * `true`): `f` gets a second parameter, an {@link AbortSignalToolkit}, whose
 * `hasAborted()` turns `true` once the host aborts the call (its timeout, the
 * caller's `AbortSignal`, or the call promise's `reject()`), so that it can
 * stop early. Calls return an {@link AbortablePromise}. Each call in flight
 * holds one of the pool's `abortSignalCapacity` abort flags.
 * Otherwise as the plain overload (the last one).
 *
 * @example
 * export const crunch = task({
 *   abortSignal: { hasAborted: true },
 *   f: (n: number, signal) => { let i = 0; while (i < n && !signal.hasAborted()) i++; return i; },
 * });
 * const p = pool.call.crunch(1e9);
 * setTimeout(() => p.reject(new Error("enough")), 100);
 */
export declare function task<A = any, R = unknown, F = unknown>(def: {
  /** The task's function, run in a worker with the call's argument and an abort toolkit. */
  f: F & ((arg: A, signal: AbortSignalToolkit) => R | Promise<R>);
  /** A time limit on each call; see {@link TaskTimeout}. `default` must be of the result type. @default no timeout */
  timeout?: DefiniteTimeout<NoInfer<R>>;
  /** Makes the task abort-aware: `f` gets `signal`, calls get `reject()`. @default not abort-aware */
  abortSignal: AbortSignalOption;
}): Task<TaskArg<A, F>, R, true>;
/**
 * Defines a task whose calls resolve with `undefined` when they time out
 * (`timeout: { time, maybe: true }`): its result type is `R | undefined`.
 * Otherwise as the plain overload (the last one).
 *
 * @example
 * export const lookup = task({ timeout: { time: 100, maybe: true }, f: (key: string) => slowLookup(key) });
 * const hit: number | undefined = await pool.call.lookup("a");
 */
export declare function task<A = any, R = unknown, F = unknown>(def: {
  /** The task's function, run in a worker with the call's argument. */
  f: F & ((arg: A) => R | Promise<R>);
  /**
   * `{ time, maybe: true }` (or `{ time, default: undefined }`): a call not finished within `time` ms
   * resolves with `undefined`; see {@link TaskTimeout}.
   */
  timeout: MaybeTimeout;
  /** Leave out (or `undefined`) for a task that is not abort-aware. @default not abort-aware */
  abortSignal?: undefined;
}): Task<TaskArg<A, F>, R | undefined>;
/**
 * Defines a task: `f` runs inside the pool's workers on the one argument of
 * each call, and may be sync or async. Export the result from a module and
 * hand it to the function returned by {@link createPool} (or call its own
 * `createPool`). Call `task()` at the top level of a module: the worker
 * re-imports that module and finds the task by its position in it.
 *
 * `A` and `R` are inferred from `f` (`R` is the awaited result), so annotate
 * `f`'s parameter: an unannotated one is `any`, and so are the call's
 * argument and, often, its result. A task whose `f` takes no parameter gets
 * `A = void` and is called as `pool.call.name()`. `F` is only for inference:
 * leave it out (`task<A, R>({ f })` gives `A` and `R` explicitly).
 *
 * - `timeout`: a time limit on each call; see {@link TaskTimeout}. Default:
 *   none. With `{ time, maybe: true }` the result type is `R | undefined`
 *   (another overload).
 * - `abortSignal: { hasAborted: true }` (or `true`): the task is abort-aware
 *   (other overloads). Default: not abort-aware.
 *
 * Values that can cross between threads: primitives (including bigint), plain
 * objects and arrays, `Date`, typed arrays, `ArrayBuffer`, `DataView`,
 * `Buffer`, and anything `structuredClone` accepts. Functions and symbols
 * cannot (the call rejects with {@link KnittingError}).
 *
 * @example
 * export const add = task({ f: ([a, b]: [number, number]) => a + b });
 * export const rate = task({ timeout: { time: 500, default: 1 }, f: async (pair: string) => fetchRate(pair) });
 */
export declare function task<A = any, R = unknown, F = unknown>(def: {
  /** The task's function, run in a worker with the call's argument. */
  f: F & ((arg: A) => R | Promise<R>);
  /** A time limit on each call; see {@link TaskTimeout}. `default` must be of the result type. @default no timeout */
  timeout?: DefiniteTimeout<NoInfer<R>>;
  /** Leave out (or `undefined`) for a task that is not abort-aware. @default not abort-aware */
  abortSignal?: undefined;
}): Task<TaskArg<A, F>, R>;

/**
 * Declares an abort-aware task whose function the worker imports, with
 * `timeout: { time, maybe: true }` (result type `R | undefined`). The export
 * gets an {@link AbortSignalToolkit} as its second parameter; calls return an
 * {@link AbortablePromise}. Otherwise as the plain overload (the last one).
 */
export declare function importTask<A = unknown, R = unknown>(def: {
  /** The module's URL, or a path relative to the calling module. */
  href: string;
  /** The export's name. @default "default" */
  name?: string;
  /**
   * `{ time, maybe: true }` (or `{ time, default: undefined }`): a call not finished within `time` ms
   * resolves with `undefined`; see {@link TaskTimeout}.
   */
  timeout: MaybeTimeout;
  /** Makes the task abort-aware: the export gets `signal`, calls get `reject()`. @default not abort-aware */
  abortSignal: AbortSignalOption;
}): Task<A, R | undefined, true>;
/**
 * Declares an abort-aware task whose function the worker imports
 * (`abortSignal: { hasAborted: true }` or `true`): the export gets an
 * {@link AbortSignalToolkit} as its second parameter, and calls return an
 * {@link AbortablePromise}. Otherwise as the plain overload (the last one).
 */
export declare function importTask<A = unknown, R = unknown>(def: {
  /** The module's URL, or a path relative to the calling module. */
  href: string;
  /** The export's name. @default "default" */
  name?: string;
  /** A time limit on each call; see {@link TaskTimeout}. `default` must be of type `R`. @default no timeout */
  timeout?: DefiniteTimeout<NoInfer<R>>;
  /** Makes the task abort-aware: the export gets `signal`, calls get `reject()`. @default not abort-aware */
  abortSignal: AbortSignalOption;
}): Task<A, R, true>;
/**
 * Declares a task whose function the worker imports, with
 * `timeout: { time, maybe: true }`: the result type is `R | undefined`.
 * Otherwise as the plain overload (the last one).
 */
export declare function importTask<A = unknown, R = unknown>(def: {
  /** The module's URL, or a path relative to the calling module. */
  href: string;
  /** The export's name. @default "default" */
  name?: string;
  /**
   * `{ time, maybe: true }` (or `{ time, default: undefined }`): a call not finished within `time` ms
   * resolves with `undefined`; see {@link TaskTimeout}.
   */
  timeout: MaybeTimeout;
  /** Leave out (or `undefined`) for a task that is not abort-aware. @default not abort-aware */
  abortSignal?: undefined;
}): Task<A, R | undefined>;
/**
 * Declares a task whose function the *worker* imports from another module:
 * the export `name` of the module at `href`. The host never evaluates that
 * module, so its types cannot be inferred: give the argument and result types
 * as `importTask<A, R>(...)` (both default to `unknown`). Call it at the top
 * level of a module, like {@link task}.
 *
 * - `href`: the module's URL, or a path relative to the module that calls
 *   `importTask` (resolved as `new URL(href, callerURL)`).
 * - `name`: the export's name. Default: `"default"`.
 * - `timeout`, `abortSignal`: as for {@link task} (other overloads take
 *   `maybe: true` and `abortSignal`). Defaults: no timeout, not abort-aware.
 *
 * A missing export, or one that is not a function, rejects the task's calls.
 *
 * @example
 * export const resize = importTask<{ width: number }, Uint8Array>({ href: "./resize.mjs", name: "resize" });
 */
export declare function importTask<A = unknown, R = unknown>(def: {
  /** The module's URL, or a path relative to the calling module. */
  href: string;
  /** The export's name. @default "default" */
  name?: string;
  /** A time limit on each call; see {@link TaskTimeout}. `default` must be of type `R`. @default no timeout */
  timeout?: DefiniteTimeout<NoInfer<R>>;
  /** Leave out (or `undefined`) for a task that is not abort-aware. @default not abort-aware */
  abortSignal?: undefined;
}): Task<A, R>;

/**
 * Makes a pool factory: call the returned function with the tasks, keyed by
 * name, to start the workers and get a {@link Pool}. Bare functions among the
 * tasks must be exported from the module that calls it.
 *
 * @example
 * const pool = createPool({ threads: 2 })({ add, hello });
 * const three = await pool.call.add([1, 2]);
 * await pool.shutdown();
 */
export declare function createPool(options?: PoolOptions): PoolFactory;

/**
 * What {@link createPool} returns: call it with the tasks to start the
 * workers and get a {@link Pool}.
 */
export interface PoolFactory {
  /**
   * Not a pool: give the factory its tasks first, `createPool(options)(tasks).call`.
   * Reading it throws a `TypeError` (`KNT_CREATE_POOL_FORM`).
   */
  readonly call: never;
  /** Not a pool: reading it throws a `TypeError` (`KNT_CREATE_POOL_FORM`). */
  readonly shutdown: never;
  /** Not a pool: reading it throws a `TypeError` (`KNT_CREATE_POOL_FORM`). */
  readonly ready: never;
  /**
   * Tasks as an array: the pool calls them by index, `pool.call[0](arg)`.
   * An array literal is typed as a tuple, so each index keeps its task's
   * argument and result types, and an index past its end is a type error.
   *
   * @example
   * const pool = createPool({ threads: 2 })([add, hello]);
   * const three: number = await pool.call[0]([1, 2]);
   */
  <const T extends TasksOf<T> & readonly TaskLike[]>(tasks: T): Pool<T>;
  /**
   * Tasks as an object, keyed by the name they are called by:
   * `pool.call.name(arg)`.
   */
  <T extends TasksOf<T>>(tasks: T): Pool<T>;
}

/** `true` on the main thread; `false` inside the pool's worker threads. */
export declare const isMain: boolean;

/**
 * The id knitting gives a task defined in the module at `href`: FNV-1a (32-bit)
 * over the UTF-16 code units of `href`, then over `at` (the task's position:
 * the count of `task()` and `importTask()` calls made before it in that module).
 */
export declare function stableTaskID(href: string, at: number): number;

/**
 * `n` bytes of the pool's shared memory, inside a task: write them and return
 * them, and the caller gets them without a copy. Outside a task it throws
 * (`"KNT_SHARED_BYTES"`; the host uses `pool.sharedBytes(n)`).
 */
export declare function sharedBytes(n: number): SharedBytes;

/** Whether `value` is a {@link SharedBytes}. */
export declare function isSharedBytes(value: unknown): value is SharedBytes;

/**
 * Gives up `value` (an `ArrayBuffer`, or a typed array, `Buffer` or `DataView`
 * over all of one) so that its memory can move to the other side instead of
 * being copied: pass the result as the whole argument of a call
 * (`pool.call.f(transfer(u8))`), or return it from a task. `value`'s buffer is
 * detached at once (`byteLength` 0: index writes are ignored, methods throw);
 * the receiver gets a new buffer of the same kind that only it holds.
 * Worker threads move results, and arguments in private lanes
 * (`host.steal: false`); arguments under work stealing, worker processes and
 * values under 32 KiB are copied once instead. A marker goes out once.
 * Throws a `TypeError` (`code` `"KNT_TRANSFER"`) for a `SharedArrayBuffer`, a
 * view over part of its buffer (a pooled `Buffer`), a detached buffer or
 * anything else; a marker nested inside another value, or sent twice, rejects
 * its call the same way.
 */
export declare function transfer<T extends ArrayBuffer | ArrayBufferView>(value: T): Transferred<T>;

export {};
