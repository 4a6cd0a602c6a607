"use strict";
// A worker's side of pool.broadcast (host/broadcast.js): runs a task once,
// outside its lane, for a BROADCAST control message or a kept broadcast in
// its start data, and encodes what came of it as codec bytes for the
// BROADCAST_DONE answer.

const { Encoder, decode } = require("../codec/index.js");
const { CODE, codedError, placeValueError } = require("../errors.js");

/**
 * `names`: the tasks' names; `abortAware`: by task; `runTask(fn, name, arg,
 * toolkit)`: the runtime's way to run a task (worker/serve.js).
 */
function makeBroadcaster(maxPayloadBytes, names, abortAware, runTask) {
  const encoder = new Encoder({ maxPayloadBytes });
  // A broadcast is no call: nothing aborts it.
  const notAborted = { hasAborted: () => false, now: () => performance.now() };

  /** Runs task `task` of `table` on the argument `bytes` encode: its result, or a rejection with what it threw. */
  async function run(table, task, bytes) {
    const arg = decode(bytes, 0, bytes.length);
    return await runTask(table[task], names[task], arg, abortAware[task] ? notAborted : undefined);
  }

  /** `{ ok, value }` for a BROADCAST_DONE, `value` as codec bytes; a value that cannot be sent becomes its error. */
  function answer(task, ok, value) {
    try {
      return { ok, value: encoder.encode(value).slice() };
    } catch (err) {
      placeValueError(err, names[task] ?? `#${task}`, ok ? "result" : "error");
      try {
        return { ok: false, value: encoder.encode(err).slice() };
      } catch {
        const sent = new Error(`knitting-native: the broadcast's result could not be sent: ${String(err.message)}`);
        sent.code = err.code;
        return { ok: false, value: encoder.encode(sent).slice() };
      }
    }
  }

  /** A BROADCAST message: runs it and hands its BROADCAST_DONE to `reply`; resolves once it has. */
  function serve(table, msg, reply, doneType) {
    return run(table, msg.task, msg.arg).then(
      (value) => reply({ type: doneType, id: msg.id, ...answer(msg.task, true, value) }),
      (err) => reply({ type: doneType, id: msg.id, ...answer(msg.task, false, err) }),
    );
  }

  /** The kept broadcasts of the start data, in order; rejects with the first error, naming its task. */
  async function runKept(table, kept, lane) {
    for (const { task, arg } of kept) {
      try {
        await run(table, task, arg);
      } catch (err) {
        const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        throw codedError(
          Error,
          CODE.BROADCAST_FAILED,
          `knitting-native: worker ${lane} could not start: the kept broadcast "${names[task]}" threw: ${what}`,
          { cause: err },
        );
      }
    }
  }

  return { serve, runKept };
}

module.exports = { makeBroadcaster };
