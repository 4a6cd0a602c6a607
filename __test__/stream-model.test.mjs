// Exhaustive interleaving checks of the stream protocol (lib/protocol/stream.js):
// a worker sending batches of values through one channel's ring under its
// caller's credit, the host taking them and granting credit as the caller
// consumes, and the caller stopping early. Each broken variant (one rule
// changed) must be caught.

import test from "node:test";
import { passes, caught } from "./helpers/model.mjs";
import { StreamModel, streamBroken } from "./model/stream-model.mjs";

const MAX_STATES = 1_000_000;

for (const [name, config, atLeast] of [
  // A window of 2 and batches of 1: the worker waits for credit twice.
  ["window 2, five values one at a time", { values: 5, window: 2, batch: 1 }, 500],
  // Batches of 2 under a window of 4: credit comes every 2 values consumed.
  ["window 4, batches of 2", { values: 6, window: 4, batch: 2 }, 500],
  // More values in flight than ring entries: the ring bound holds the worker too.
  ["window 4, a ring of 2 entries", { values: 5, window: 4, batch: 1, ring: 2 }, 500],
  // The caller stops after two values: the waiting worker must see it.
  ["the caller stops after two values", { values: 6, window: 2, batch: 1, stopAt: 2 }, 300],
  ["the caller stops before consuming any", { values: 4, window: 2, batch: 2, stopAt: 0 }, 100],
]) {
  test(`stream protocol: ${name}`, () => {
    passes(new StreamModel(config), atLeast, MAX_STATES);
  });
}

const WorkerChannel = (cls) => ({ classes: { ...defaults(), WorkerChannel: cls } });
const HostChannel = (cls) => ({ classes: { ...defaults(), HostChannel: cls } });
function defaults() {
  const probe = new StreamModel({ values: 1, window: 1, batch: 1 });
  return probe.c.classes;
}

test("stream protocol, broken: the worker reads HOST_SEQ last", () => {
  const model = new StreamModel({ values: 4, window: 2, batch: 1, ...WorkerChannel(streamBroken.LateSequence) });
  caught(model, /waits for ever/, MAX_STATES);
});

test("stream protocol, broken: credit granted without a bump of HOST_SEQ", () => {
  const model = new StreamModel({ values: 4, window: 2, batch: 1, ...HostChannel(streamBroken.SilentCredit) });
  caught(model, /waits for ever/, MAX_STATES);
});

test("stream protocol, broken: SENT published before the ring entry", () => {
  const model = new StreamModel({ values: 3, window: 4, batch: 1, ...WorkerChannel(streamBroken.SentFirst) });
  caught(model, /ring entry not written for it/, MAX_STATES);
});

test("stream protocol, broken: credit follows what the host took, not what the caller consumed", () => {
  const model = new StreamModel({ values: 6, window: 2, batch: 1, ...HostChannel(streamBroken.CreditOnTake) });
  caught(model, /values ahead of its caller/, MAX_STATES);
});

test("stream protocol, broken: the worker ignores TAKEN (the ring bound)", () => {
  const model = new StreamModel({
    values: 4,
    window: 4,
    batch: 1,
    ring: 2,
    ...WorkerChannel(streamBroken.RingUnbounded),
  });
  caught(model, /over a ring entry not taken yet/, MAX_STATES);
});
