import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { stableTaskID } from "../index.mjs";
import * as t from "./fixtures/tasks.mjs";

// The project's copy of the vectors (computed with knitting's own formula).
const vectorsPath = fileURLToPath(new URL("./fixtures/stable-task-id.json", import.meta.url));
const { cases } = JSON.parse(readFileSync(vectorsPath, "utf8"));
// Where the copy came from, when a checkout has it beside the project.
const upstream = fileURLToPath(new URL("../../shared/vectors/stable-task-id.json", import.meta.url));

test("the project's vectors equal the shared ones, where those are beside the project", {
  skip: !existsSync(upstream) && "no shared vectors beside this checkout",
}, () => {
  assert.deepEqual(cases, JSON.parse(readFileSync(upstream, "utf8")).cases);
});

// knitting's formula, written out in JS, to compare beyond the vectors.
function referenceID(href, at) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < href.length; i++) hash = Math.imul(hash ^ href.charCodeAt(i), 0x01000193);
  return Math.imul(hash ^ at, 0x01000193) >>> 0;
}

test("stableTaskID reproduces every vector", () => {
  assert.ok(cases.length >= 8);
  for (const { href, at, id } of cases) assert.equal(stableTaskID(href, at), id, `${href} @ ${at}`);
});

test("stableTaskID hashes UTF-16 code units and folds `at` as int32", () => {
  const hrefs = ["file:///x/é.mjs", "file:///\ud800lone", "file:///🎉.js", "x".repeat(5000)];
  const ats = [0, 1, 31, -1, 2 ** 31, 2 ** 32 + 3, 1.9, -7.5];
  for (const href of hrefs) {
    for (const at of ats)
      assert.equal(stableTaskID(href, at), referenceID(href, at), `${JSON.stringify(href.slice(0, 20))} @ ${at}`);
  }
});

test("stableTaskID rejects non-string href and non-number at", () => {
  assert.throws(() => stableTaskID(1, 0), TypeError);
  assert.throws(() => stableTaskID("x", "0"), TypeError);
});

test("task() ids come from the module URL and the task's position in it", () => {
  const href = new URL("./fixtures/tasks.mjs", import.meta.url).href;
  const inOrder = [t.add, t.echo, t.delayed, t.failSync];
  inOrder.forEach((task, at) => {
    assert.equal(task.href, href);
    assert.equal(task.at, at);
    assert.equal(task.id, referenceID(href, at));
  });
});
