// Exhaustive interleaving checks of the chunk protocol (lib/payload-chunks.js):
// small payloads carved out of one allocator block, released by the readers,
// the block freed by whoever drops the last reference. Each broken variant
// (one rule changed) must be caught.

import test from "node:test";
import assert from "node:assert/strict";
import { explore, ModelViolation } from "./model/checker.mjs";
import { ChunkModel, chunkBroken } from "./model/chunk-model.mjs";

const MAX_STATES = 1_000_000;

function caught(model, pattern) {
  let error = null;
  try {
    explore(model, { maxStates: MAX_STATES });
  } catch (err) {
    error = err;
  }
  assert.ok(error instanceof ModelViolation, `the broken variant was not caught${error ? `: ${error.stack}` : ""}`);
  assert.match(error.message, pattern);
  assert.ok(error.trace.length > 0, "a counterexample comes with its steps");
}

for (const [name, config, atLeast] of [
  // Three sub-blocks, two per chunk: the writer moves to a second chunk while
  // the readers release the first.
  ["two readers, a chunk change", { sends: 3, readers: 2, pressures: 0 }, 1500],
  // The writer may also retire early (room short), at any point.
  ["two readers, an early retire", { sends: 3, readers: 2, pressures: 1 }, 3000],
  ["two readers, four sends, an early retire", { sends: 4, readers: 2, pressures: 1 }, 5000],
  // Every second sub-block comes back with an answer in it, released by the writer's side.
  ["two readers, answers handed back", { sends: 3, readers: 2, pressures: 1, handBack: true }, 2000],
  ["one reader, four sends, two early retires", { sends: 4, readers: 1, pressures: 2 }, 2500],
]) {
  test(`chunk protocol: ${name}`, () => {
    const stats = explore(new ChunkModel(config), { maxStates: MAX_STATES });
    assert.ok(stats.states >= atLeast, `only ${stats.states} states explored`);
    assert.ok(stats.terminals > 0, "no terminal state reached");
  });
}

test("chunk protocol, broken: the writer holds no reference of its own", () => {
  const model = new ChunkModel({ sends: 3, readers: 2, pressures: 0, Chunks: chunkBroken.NoWriterReference });
  caught(model, /which was freed|freed while/);
});

test("chunk protocol, broken: a release decrements with a load and a store", () => {
  const model = new ChunkModel({ sends: 3, readers: 2, pressures: 1, Chunks: chunkBroken.PlainDecrement });
  caught(model, /never freed|freed twice|freed while/);
});
