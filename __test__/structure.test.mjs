// The shape of lib/ that keeps it readable: no import cycle, no file past
// ~500 lines, one module (lib/protocol/slot.js) that knows a slot's header words and one
// (lib/host/queue.js) that knows how the waiting calls are stored.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const LIB = join(dirname(fileURLToPath(import.meta.url)), "..", "lib");
const files = readdirSync(LIB, { recursive: true })
  .filter((f) => f.endsWith(".js"))
  .map((f) => f.split("\\").join("/"));
const source = (f) => readFileSync(join(LIB, f), "utf8");

/** The lib/ modules `file` requires, as paths relative to lib/. */
function requiresOf(file) {
  const out = [];
  for (const m of source(file).matchAll(/require\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g)) {
    const target = join(dirname(file), m[1]).split("\\").join("/");
    if (files.includes(target)) out.push(target);
  }
  return out;
}

test("lib/ has no import cycle (a lazy require counts too)", () => {
  assert.ok(files.length > 20, `found lib/ modules: ${files.length}`);
  const graph = new Map(files.map((f) => [f, requiresOf(f)]));
  assert.ok(graph.get("index.js").includes("api/create-pool.js"), "the scan sees index.js's requires");
  const state = new Map(); // 1: on the current path, 2: done
  const path = [];
  const visit = (f) => {
    if (state.get(f) === 2) return;
    if (state.get(f) === 1) assert.fail(`import cycle: ${[...path.slice(path.indexOf(f)), f].join(" -> ")}`);
    state.set(f, 1);
    path.push(f);
    for (const next of graph.get(f)) visit(next);
    path.pop();
    state.set(f, 2);
  };
  for (const f of files) visit(f);
});

// The encoder and the decoder are each one hot-path unit (the encoder one class whose
// methods call each other per value): they are the exceptions, and only while they are
// still that long.
const LONG_FOR_NOW = new Set(["codec/encode.js", "codec/decode.js"]);
const MAX_LINES = 520;

test(`no lib/ file is over ${MAX_LINES} lines`, () => {
  for (const f of files) {
    const lines = source(f).split("\n").length;
    if (LONG_FOR_NOW.has(f)) continue;
    assert.ok(lines <= MAX_LINES, `lib/${f} has ${lines} lines`);
  }
  for (const f of LONG_FOR_NOW) {
    if (existsSync(join(LIB, f))) {
      assert.ok(source(f).split("\n").length > MAX_LINES, `lib/${f} is short now: drop it from LONG_FOR_NOW`);
    }
  }
});

test("only lib/protocol/slot.js names a slot's header words", () => {
  const headerWords = /slotWord(Task|Call|Len|Ext|Signal|Started|Owner)\b/;
  // A slot's word addressed by a literal offset: `i32[w + 3]`, `slotWord(i) + 5`.
  const literalOffset = /i32\[[^\]]*\+\s*\d+\s*\]|slotWord\([^)]*\)\s*\+\s*\d/;
  let checked = 0;
  for (const f of files) {
    if (f === "protocol/slot.js") continue;
    source(f)
      .split("\n")
      .forEach((line, i) => {
        checked++;
        assert.doesNotMatch(line, headerWords, `lib/${f}:${i + 1} names a header word: ${line.trim()}`);
        assert.doesNotMatch(line, literalOffset, `lib/${f}:${i + 1} adds a literal to a slot's word: ${line.trim()}`);
      });
  }
  assert.ok(checked > 1000, `lines checked: ${checked}`);
  assert.match(
    source("protocol/slot.js"),
    /L\.slotWordStarted/,
    "protocol/slot.js takes the words from Rust's layout()",
  );
});

// The calls waiting for a slot are a CallQueue's: its array and head index are read
// nowhere else, so its representation can change in one file. The worker's queue of
// slots waiting for payload room (worker/room-wait.js) holds no calls: it is its own.
const OTHER_QUEUES = new Set(["worker/room-wait.js"]);

test("only lib/host/queue.js reads a call queue's array", () => {
  const { CallQueue } = createRequire(import.meta.url)("../lib/host/queue.js");
  const members = new Set(Object.getOwnPropertyNames(CallQueue.prototype).filter((m) => m !== "constructor"));
  assert.ok(members.has("size") && members.has("shift"), `CallQueue's members: ${[...members]}`);
  let uses = 0;
  for (const f of files) {
    if (f === "host/queue.js" || OTHER_QUEUES.has(f)) continue;
    source(f)
      .split("\n")
      .forEach((line, i) => {
        const at = `lib/${f}:${i + 1}: ${line.trim()}`;
        assert.doesNotMatch(line, /queueHead/, `${at} names the queue's head index`);
        assert.doesNotMatch(line, /\bqueue\s*\[/, `${at} indexes a queue's array`);
        assert.doesNotMatch(line, /\.queue\s*=(?!=)(?!\s*new CallQueue\(\))/, `${at} replaces a queue`);
        for (const m of line.matchAll(/\bqueue\.(?!js\b)(\w+)/g)) {
          uses++;
          assert.ok(members.has(m[1]), `${at} uses queue.${m[1]}, not one of CallQueue's ${[...members]}`);
        }
      });
  }
  assert.ok(uses >= 10, `CallQueue uses seen: ${uses}`);
});

// The pool's count of calls in slots has one writer, host/slots.js (write adds, slotsFreed
// takes away); the topologies report what they free. Lanes keep counts of their own.
test("only lib/host/slots.js writes the pool's inFlight", () => {
  const write = /\bpool\.inFlight\s*(?:\+\+|--|[-+]?=(?!=))/;
  const poolFiles = new Set(["host/pool.js", "host/calls.js"]); // the pool's other methods
  const ownWrite = /\bthis\.inFlight\s*(?:\+\+|--|[-+]?=(?!=))/;
  for (const f of files) {
    if (f === "host/slots.js") continue;
    source(f)
      .split("\n")
      .forEach((line, i) => {
        const at = `lib/${f}:${i + 1}: ${line.trim()}`;
        assert.doesNotMatch(line, write, `${at} writes the pool's inFlight`);
        if (poolFiles.has(f) && !/this\.inFlight = 0; \/\//.test(line)) {
          assert.doesNotMatch(line, ownWrite, `${at} writes the pool's inFlight`);
        }
      });
  }
  assert.match(source("host/slots.js"), /slotsFreed\(n\) \{\n\s*this\.inFlight -= n;/);
});
