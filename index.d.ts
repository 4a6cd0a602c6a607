// Type declarations for "knitting-native".
//
// One file serves both ESM (`import`) and CommonJS (`require`) consumers: the
// package's `exports` map points the "types" condition here for both, and this
// file is a plain module declaration file (top-level `export declare`).

/** Phantom key that marks a value as a task made by {@link task}. Not exported. */
declare const kTask: unique symbol;

/**
 * A task made by {@link task}: a function `f` that runs inside the pool's
 * workers, taking one argument of type `A` and producing a result of type `R`
 * (the awaited result; an async `f` that resolves to `R` gives `Task<A, R>`).
 *
 * The type is opaque: only {@link task} makes values of it. Write it as
 * `Task<number, string>` to annotate a task that takes a number and resolves to
 * a string.
 */
export interface Task<A, R> {
  /** Type-level brand only; there is no such property at run time. */
  readonly [kTask]: (arg: A) => R;
}

/**
 * Anything that can be handed to the function returned by {@link createPool}:
 * a {@link Task}, or a bare exported function of at most one parameter.
 */
export type TaskLike = Task<any, any> | ((arg: any) => any);

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
export type ArgOf<T> = T extends Task<infer A, any>
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
export type ResultOf<T> = T extends Task<any, infer R>
  ? Awaited<R>
  : T extends (...args: any) => infer R
    ? Awaited<R>
    : never;

/**
 * The caller side of one task: takes the argument (or a Promise of it) and
 * resolves to the task's result. The argument may be left out when the task
 * takes none (its argument type accepts `undefined`, e.g. `void`).
 */
export type TaskCaller<A, R> = undefined extends A
  ? (arg?: A | Promise<A>) => Promise<R>
  : (arg: A | Promise<A>) => Promise<R>;

/** A running pool over the tasks in `T`. */
export interface Pool<T extends TasksOf<T>> {
  /**
   * One caller per task, by name: `pool.call.add([1, 2])` runs `add` on a
   * worker and resolves to its result. The argument may also be a Promise of
   * the argument type; it is awaited before it is sent.
   *
   * A call rejects with a {@link KnittingError} when its argument or result
   * cannot cross to or from the worker.
   */
  readonly call: { readonly [K in keyof T]: TaskCaller<ArgOf<T[K]>, ResultOf<T[K]>> };

  /** Shuts the pool down (stops its worker threads); resolves when that is done. */
  shutdown(): Promise<void>;

  /**
   * Starts {@link Pool.shutdown} without waiting for it, so that
   * `using pool = createPool()(tasks)` shuts the pool down at scope exit.
   */
  [Symbol.dispose](): void;
}

/** Sizes of the shared-memory payload region that arguments and results travel through. */
export interface PayloadOptions {
  /**
   * Bytes the growable shared payload region starts with.
   * @default 4194304 (4 MiB)
   */
  payloadInitialBytes?: number;
  /**
   * Cap on the growable shared payload region (its `maxByteLength`): it never
   * grows past this many bytes.
   * @default 67108864 (64 MiB)
   */
  payloadMaxByteLength?: number;
  /**
   * Limit on the encoded size, in bytes, of one call's argument or result. A
   * call over it rejects with a `RangeError` whose `code` is `"KNT_ERROR_3"`.
   * @default 8388608 (8 MiB)
   */
  maxPayloadBytes?: number;
}

/** How each worker thread is started. */
export interface WorkerOptions {
  /**
   * V8 heap limits for each worker (as `new Worker(file, { resourceLimits })`).
   * A worker that runs out rejects the calls it held with a `WorkerExitError`
   * and is replaced.
   */
  resourceLimits?: {
    maxOldGenerationSizeMb?: number;
    maxYoungGenerationSizeMb?: number;
    codeRangeSizeMb?: number;
    stackSizeMb?: number;
  };
}

/** Options for {@link createPool}. */
export interface PoolOptions {
  /**
   * Number of worker threads.
   * @default os.availableParallelism() - 1, and at least 1
   */
  threads?: number;
  /** Sizes of the shared payload region; see {@link PayloadOptions}. */
  payload?: PayloadOptions;
  /** How each worker thread is started; see {@link WorkerOptions}. */
  worker?: WorkerOptions;
  /**
   * Prints lifecycle traces (workers started, ready, exited; shutdown) on
   * stderr. `KNITTING_DEBUG=1` in the environment turns them on for every pool.
   * @default false
   */
  debug?: boolean;
}

/**
 * Error codes used by knitting-native:
 * - `"KNT_ERROR_0"`: a function cannot be sent to or from a worker.
 * - `"KNT_ERROR_1"`: a symbol cannot be sent to or from a worker.
 * - `"KNT_ERROR_2"`: serialization failed.
 * - `"KNT_ERROR_3"`: the value is unsupported, or its encoded size is over
 *   the payload limit (`payload.maxPayloadBytes`; then the error is a `RangeError`).
 */
export type KnittingErrorCode = "KNT_ERROR_0" | "KNT_ERROR_1" | "KNT_ERROR_2" | "KNT_ERROR_3";

/**
 * An error a call rejects with when a value cannot cross between threads.
 * `code` says why; see {@link KnittingErrorCode}. Errors thrown by a task's own
 * function keep their own `code`, if any (hence `| string`).
 */
export interface KnittingError extends Error {
  code?: KnittingErrorCode | (string & {});
}

/**
 * Defines a task: `f` runs inside the pool's workers on the one argument of
 * each call, and may be sync or async. Export the result from a module and
 * hand it to the function returned by {@link createPool}.
 *
 * `A` and `R` are inferred from `f` (`R` is the awaited result). A task whose
 * `f` takes no parameter gets `A = void` and is called as `pool.call.name()`.
 *
 * Values that can cross between threads: primitives (including bigint), plain
 * objects and arrays, `Date`, typed arrays, `ArrayBuffer`, `DataView`,
 * `Buffer`, and anything `structuredClone` accepts. Functions and symbols
 * cannot (the call rejects with {@link KnittingError}).
 *
 * @example
 * export const add = task({ f: ([a, b]: [number, number]) => a + b });
 */
export declare function task<A = void, R = unknown>(def: {
  f: (arg: A) => R | Promise<R>;
}): Task<A, R>;

/**
 * Makes a pool factory: call the returned function with the tasks, keyed by
 * name, to start the workers and get a {@link Pool}.
 *
 * @example
 * const pool = createPool({ threads: 2 })({ add, hello });
 * const three = await pool.call.add([1, 2]);
 * await pool.shutdown();
 */
export declare function createPool(
  options?: PoolOptions,
): <T extends TasksOf<T>>(tasks: T) => Pool<T>;

/** `true` on the main thread; `false` inside the pool's worker threads. */
export declare const isMain: boolean;

/**
 * The id knitting gives a task defined in the module at `href`: FNV-1a (32-bit)
 * over the UTF-16 code units of `href`, then over `at` (the task's position).
 */
export declare function stableTaskID(href: string, at: number): number;

export {};
