// lib/host/queue.js: the calls waiting for a slot, oldest first, through its
// compactions (the array is dropped when empty and sliced when its taken front is long).

import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const { CallQueue } = createRequire(import.meta.url)("../lib/host/queue.js");

test("CallQueue: oldest first, peek leaves it, size counts what waits", () => {
  const q = new CallQueue();
  assert.equal(q.size, 0);
  assert.equal(q.peek(), undefined);
  q.push("a");
  q.push("b");
  assert.equal(q.peek(), "a");
  assert.equal(q.size, 2);
  assert.equal(q.shift(), "a");
  assert.equal(q.shift(), "b");
  assert.equal(q.size, 0);
  q.push("c");
  assert.deepEqual([q.size, q.shift()], [1, "c"]);
});

test("CallQueue: putBack goes ahead of every waiting call, in its order; takeAll empties it", () => {
  const q = new CallQueue();
  for (const c of ["a", "b", "c"]) q.push(c);
  assert.equal(q.shift(), "a");
  q.putBack(["x", "y"]);
  q.putBack([]);
  assert.equal(q.size, 4);
  assert.deepEqual(q.takeAll(), ["x", "y", "b", "c"]);
  assert.equal(q.size, 0);
  q.push("d");
  assert.deepEqual(q.takeAll(), ["d"]);
});

test("CallQueue: order holds across the slicing of a long taken front", () => {
  const q = new CallQueue();
  const n = 20_000;
  let next = 0;
  let pushed = 0;
  // Takes two for each one added past the first n, so the front grows past the slicing point.
  for (; pushed < n; pushed++) q.push(pushed);
  let longest = 0;
  while (q.size > 0) {
    longest = Math.max(longest, q.items.length);
    assert.equal(q.shift(), next++);
    if (next % 2 === 0 && pushed < 2 * n) q.push(pushed++);
  }
  assert.equal(next, pushed);
  // Sliced on the way (it never held every call pushed), dropped once empty.
  assert.ok(longest < pushed * 0.75, `the longest array: ${longest} entries for ${pushed} calls`);
  assert.equal(q.items.length, 0);
});
