"use strict";
// Errors the pool itself raises (the codec's own errors live in codec/index.js).

const { CODEC_ERRORS, TRANSFER_ERROR, SHARED_BYTES_ERROR, codecError, placeOf } = require("./codec/index.js");

// Every code an error of this package carries, by name: the one table (index.d.ts's
// KnittingErrorCode, docs/api.md and the README's table list the same; __test__/error-codes.test.mjs
// holds them together). The value errors' four codes are the codec's (codec/format.js), and
// transfer()'s KNT_TRANSFER is codec/transfer.js's: the codec cannot require this module.
const CODE = Object.freeze({
  /** a given-up call still held its worker's thread worker.abandonGraceMs later */
  ABANDONED_CALL: "KNT_ABANDONED_CALL",
  /** more abort-aware calls in flight than abortSignalCapacity */
  ABORT_SIGNALS_EXHAUSTED: "KNT_ABORT_SIGNALS_EXHAUSTED",
  /** a broadcast's task threw (or its result could not be sent) on one or more workers */
  BROADCAST_FAILED: "KNT_BROADCAST_FAILED",
  /** a request body was larger than readBody's maxBytes (its Content-Length, or the bytes that came) */
  BODY_TOO_LARGE: "KNT_BODY_TOO_LARGE",
  /** createPool(options, tasks), or call/shutdown/ready read on createPool(options) */
  CREATE_POOL_FORM: "KNT_CREATE_POOL_FORM",
  /** the call ran longer than worker.hardTimeoutMs */
  HARD_TIMEOUT: "KNT_HARD_TIMEOUT",
  /** a bad argument to shutdown(delayMs) or stableTaskID(href, at) */
  INVALID_ARGUMENT: "KNT_INVALID_ARGUMENT",
  /** a createPool option, a task definition or a call's options is wrong */
  INVALID_OPTION: "KNT_INVALID_OPTION",
  /** the tasks object of createPool(options)(tasks) is wrong */
  INVALID_TASK: "KNT_INVALID_TASK",
  /** a task declared in node -e, a REPL or stdin, which workers cannot import */
  NO_MODULE_FILE: "KNT_NO_MODULE_FILE",
  /** pool.stream.<name>() of a task that returns no iterable (a generator, an async generator or an iterable) */
  NOT_A_STREAM: "KNT_NOT_A_STREAM",
  /** the inert pool of a worker was called or shut down */
  POOL_IN_WORKER: "KNT_POOL_IN_WORKER",
  /** the pool was shut down before the call settled */
  POOL_SHUTDOWN: "KNT_POOL_SHUTDOWN",
  /** task code in a worker thread tried to end or signal the process */
  PROCESS_EXIT_REFUSED: "KNT_PROCESS_EXIT_REFUSED",
  /** maxQueue calls already waited for a slot */
  QUEUE_FULL: "KNT_QUEUE_FULL",
  /** a word read from the pool's shared memory made no sense */
  REGION_CORRUPT: "KNT_REGION_CORRUPT",
  /** a worker process runtime's executable is missing */
  RUNTIME_UNAVAILABLE: "KNT_RUNTIME_UNAVAILABLE",
  /** a worker found another function at a task's place */
  TASK_MISMATCH: "KNT_TASK_MISMATCH",
  /** a worker did not find a task when it imported its module */
  TASK_NOT_FOUND: "KNT_TASK_NOT_FOUND",
  /** a task's timeout passed */
  TASK_TIMEOUT: "KNT_TASK_TIMEOUT",
  /** more than 65,536 tasks */
  TOO_MANY_TASKS: "KNT_TOO_MANY_TASKS",
  /** pool.call.<name>() for a name that is not a task of the pool */
  UNKNOWN_TASK: "KNT_UNKNOWN_TASK",
  /** the worker holding the call exited */
  WORKER_EXIT: "KNT_WORKER_EXIT",
  /** the pool's workers keep dying while they start */
  WORKER_START_FAILED: "KNT_WORKER_START_FAILED",
  VALUE_FUNCTION: CODEC_ERRORS.FUNCTION,
  VALUE_SYMBOL: CODEC_ERRORS.SYMBOL,
  VALUE_UNSERIALIZABLE: CODEC_ERRORS.SERIALIZE,
  VALUE_TOO_LARGE: CODEC_ERRORS.LIMIT,
  /** transfer() got a value it cannot take, or a marker was sent twice or nested */
  TRANSFER: TRANSFER_ERROR,
  /** a SharedBytes was used after it was released or sent, nested, sent to another pool, or could not be taken */
  SHARED_BYTES: SHARED_BYTES_ERROR,
});

/** A call that cannot settle because the pool is shut down. */
function shutdownError() {
  const err = new Error("knitting-native: the pool was shut down; the call did not run to completion");
  err.code = CODE.POOL_SHUTDOWN;
  return err;
}

/**
 * The worker that held a call exited before answering it. A worker process
 * also gives its `pid` and, when a signal ended it, the `signal`
 * (`exitCode` is then null).
 */
class WorkerExitError extends Error {
  constructor(lane, threadId, exitCode, cause, proc) {
    const who = proc === undefined ? `threadId ${threadId}` : `pid ${proc.pid}`;
    const how = proc !== undefined && proc.signal ? `signal ${proc.signal}` : `code ${exitCode}`;
    super(
      `knitting-native: worker ${lane} (${who}) exited with ${how} before answering this call`,
      cause === undefined ? undefined : { cause },
    );
    this.name = "WorkerExitError";
    this.code = CODE.WORKER_EXIT;
    this.lane = lane;
    this.threadId = threadId;
    this.exitCode = exitCode;
    if (proc !== undefined) {
      this.pid = proc.pid;
      this.signal = proc.signal || null;
    }
  }
}

/** A task's `timeout: number` (or `{ time }` alone) passed. */
function timeoutError(name, time) {
  const err = new Error(`Task timeout: "${name}" did not finish within ${time} ms`);
  err.code = CODE.TASK_TIMEOUT;
  return err;
}

/** worker.hardTimeoutMs passed: the worker running the call was replaced. */
function hardTimeoutError(name, ms, lane) {
  const err = new Error(
    `knitting-native: task "${name}" ran longer than worker.hardTimeoutMs (${ms} ms); worker ` +
      `${lane} was terminated and replaced`,
  );
  err.code = CODE.HARD_TIMEOUT;
  return err;
}

/**
 * A call its caller gave up on (timeout, AbortSignal, `.reject()`) still
 * held its worker's thread worker.abandonGraceMs later: the worker was
 * replaced. The cause of the WorkerExitError of the calls that worker had started.
 */
function abandonedCallError(name, ms, lane) {
  const err = new Error(
    `knitting-native: task "${name}" was given up by its caller but still held worker ${lane}'s thread ` +
      `${ms} ms later (worker.abandonGraceMs); the worker was terminated and replaced`,
  );
  err.code = CODE.ABANDONED_CALL;
  return err;
}

/** The caller's AbortSignal fired. */
function abortError(reason) {
  return new DOMException("knitting-native: the call was aborted", { name: "AbortError", cause: reason });
}

/** More abort-aware calls in flight than abortSignalCapacity. */
function signalsExhaustedError(capacity, name) {
  const err = new RangeError(
    `knitting-native: cannot start "${name}": all ${capacity} abort signals (abortSignalCapacity) ` +
      `are held by abort-aware calls in flight; raise abortSignalCapacity or wait for calls to settle`,
  );
  err.code = CODE.ABORT_SIGNALS_EXHAUSTED;
  return err;
}

/** An argument that cannot even be inspected (a revoked Proxy, say). */
function unreadableError(cause) {
  const detail = `it cannot be read, so it cannot be sent: ${cause && cause.message}`;
  return codecError(TypeError, CODEC_ERRORS.SERIALIZE, `knitting-native: the argument ${detail}`, cause, detail, "");
}

const VALUE_CODES = new Set(Object.values(CODEC_ERRORS));
// Where in a call's value a path starts, by the side that could not be sent.
const ROOTS = { argument: "arg", result: "result", error: "error", yield: "yield" };

/**
 * A value of task `name`'s call could not be sent (`side`: "argument",
 * "result", "error" for what it threw, "yield" for what a streaming task
 * yielded): the error names the task and the
 * place in the value (`arg[0].x`), as `task`, `side`, `path` and in its
 * message. Other errors, and errors already placed, pass unchanged.
 */
function placeValueError(err, name, side, wrapped = false) {
  if (err === null || typeof err !== "object" || !VALUE_CODES.has(err.code) || err.task !== undefined) return err;
  const place = placeOf(err);
  const old = String(err.message);
  const detail = place !== null ? place.detail : old.replace(/^knitting-native: /, "");
  const root = ROOTS[side];
  // `wrapped`: the value went inside an array of the pool's own (a streaming call's argument, a
  // batch of yielded values), whose index is not the user's: the path starts after it.
  const at = place === null || place.path === null ? null : wrapped ? place.path.replace(/^\[\d+\]/, "") : place.path;
  const path = at === null ? null : root + at;
  err.task = name;
  err.side = side;
  if (path !== null) err.path = path;
  err.message = `knitting-native: task "${name}", ${path === null ? root : path}: ${detail}`;
  // The stack was taken with the old message: its first line says what the error says now.
  const head = `${err.name}: ${old}`;
  if (typeof err.stack === "string" && err.stack.startsWith(head))
    err.stack = `${err.name}: ${err.message}${err.stack.slice(head.length)}`;
  return err;
}

/**
 * A word read from the pool's shared memory made no sense (task code can
 * write that memory): this call fails, the host does not.
 */
function regionCorruptError(what, cause) {
  const err = new Error(
    `knitting-native: ${what}; the pool's shared memory is corrupt (task code may have written into it)`,
    cause === undefined ? undefined : { cause },
  );
  err.code = CODE.REGION_CORRUPT;
  return err;
}

/**
 * A pool whose workers keep dying while they start (host/startup.js): what
 * `pool.ready` and every call reject with. `cause`: the first such death's error.
 */
function workerStartFailedError(lane, deaths, cause) {
  const what = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  const err = new Error(
    `knitting-native: the pool's workers cannot start: worker ${lane} died ${deaths} times in a row while ` +
      `starting (or soon after, running no call); the first such error: ${what}. Workers import the task ` +
      "module, so its top level runs in every worker: side effects such as a server's listen() belong behind " +
      "`if (isMain)`",
    { cause },
  );
  err.code = CODE.WORKER_START_FAILED;
  return err;
}

/** An error of class `Ctor` (Error, TypeError, RangeError) with `code`: every error the package raises has one. */
function codedError(Ctor, code, message, options) {
  const err = new Ctor(message, options);
  err.code = code;
  return err;
}

module.exports = {
  CODE,
  codedError,
  regionCorruptError,
  shutdownError,
  workerStartFailedError,
  WorkerExitError,
  timeoutError,
  hardTimeoutError,
  abandonedCallError,
  abortError,
  signalsExhaustedError,
  unreadableError,
  placeValueError,
};
