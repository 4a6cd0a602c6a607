// Assertions over the model checker (__test__/model/checker.mjs): a model
// that must hold over a real state graph, and a broken variant that must be
// caught with a counterexample.
import assert from "node:assert/strict";
import { explore, ModelViolation } from "../model/checker.mjs";

/** Explores `model` (at most `maxStates`); at least `atLeast` states and some terminal state. */
export function passes(model, atLeast, maxStates) {
  const stats = explore(model, { maxStates });
  // The checks ran over a real graph, with terminal states among it.
  assert.ok(stats.states >= atLeast, `only ${stats.states} states explored`);
  assert.ok(stats.terminals > 0, "no terminal state reached");
  return stats;
}

/** Explores a broken `model`: it must fail with a ModelViolation matching `pattern`, with its steps. */
export function caught(model, pattern, maxStates) {
  let error = null;
  try {
    explore(model, { maxStates });
  } catch (err) {
    error = err;
  }
  assert.ok(error instanceof ModelViolation, `the broken variant was not caught${error ? `: ${error.stack}` : ""}`);
  assert.match(error.message, pattern);
  assert.ok(error.trace.length > 0, "a counterexample comes with its steps");
}
