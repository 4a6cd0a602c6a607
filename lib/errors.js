"use strict";
// Errors the pool itself raises (the codec's own errors live in codec.js).

/** A call that cannot settle because the pool is shut down. */
function shutdownError() {
  const err = new Error("knitting-native: the pool was shut down; the call did not run to completion");
  err.code = "KNT_POOL_SHUTDOWN";
  return err;
}

/** The worker that held a call exited before answering it. */
class WorkerExitError extends Error {
  constructor(lane, threadId, exitCode, cause) {
    super(
      `knitting-native: worker ${lane} (threadId ${threadId}) exited with code ${exitCode} before answering this call`,
      cause === undefined ? undefined : { cause },
    );
    this.name = "WorkerExitError";
    this.code = "KNT_WORKER_EXIT";
    this.lane = lane;
    this.threadId = threadId;
    this.exitCode = exitCode;
  }
}

module.exports = { shutdownError, WorkerExitError };
