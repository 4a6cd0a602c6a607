// Waiting in tests without asserting a duration: every bound here is a
// generous limit that turns a hang into a failure naming what hung, never an
// expectation of how long something takes.
import assert from "node:assert/strict";

/** Resolves after `ms` milliseconds (a pause, never a measurement). */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `promise`, or a failed assertion after `ms`: a hang fails the test with
 * `what` instead of stalling the run. The timer is cleared once `promise`
 * settles, so it keeps nothing alive.
 */
export function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new assert.AssertionError({ message: `timed out after ${ms} ms: ${what}` })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Promise.allSettled over `promises`, failing the test if any is still pending after `ms`. */
export async function settleAll(promises, ms, what) {
  let done = 0;
  const tracked = promises.map((p) =>
    Promise.resolve(p).finally(() => {
      done++;
    }),
  );
  try {
    return await within(Promise.allSettled(tracked), ms, what);
  } catch (err) {
    err.message += ` (${done} of ${promises.length} settled)`;
    throw err;
  }
}

/** Polls `ok()` every `every` ms until it holds; fails the test naming `what` after `ms`. */
export async function until(ok, ms, what, every = 10) {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(every);
  }
}
