// Exhaustive interleaving checks of the chunk protocol (lib/payload/chunks.js):
// small payloads carved out of one allocator block, released by the readers,
// the block freed by whoever drops the last reference. Each broken variant
// (one rule changed) must be caught.

import test from "node:test";
import { passes, caught } from "./helpers/model.mjs";
import { ChunkModel, chunkBroken } from "./model/chunk-model.mjs";

const MAX_STATES = 1_000_000;

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
    passes(new ChunkModel(config), atLeast, MAX_STATES);
  });
}

test("chunk protocol, broken: the writer holds no reference of its own", () => {
  const model = new ChunkModel({ sends: 3, readers: 2, pressures: 0, Chunks: chunkBroken.NoWriterReference });
  caught(model, /which was freed|freed while/, MAX_STATES);
});

test("chunk protocol, broken: a release decrements with a load and a store", () => {
  const model = new ChunkModel({ sends: 3, readers: 2, pressures: 1, Chunks: chunkBroken.PlainDecrement });
  caught(model, /never freed|freed twice|freed while/, MAX_STATES);
});
