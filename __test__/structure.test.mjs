// The shape of lib/ that keeps it readable: no import cycle, no file past
// ~500 lines, one module (lib/protocol/slot.js) that knows a slot's header words, one
// (lib/protocol/layout.js) that reads Rust's layout(), and one (lib/host/queue.js) that knows
// how the waiting calls are stored.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { L, FIELDS, checkLayout, maskOf, lowestBit, nextBit, popcount } = require("../lib/protocol/layout.js");
const { AUTO_QUEUE_PER_WORKER } = require("../lib/options/server.js");

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
// A protocol is one file read top to bottom, both ends and the write-up: never split to meet the cap.
const WHOLE_PROTOCOLS = new Set(["protocol/steal.js", "protocol/lane.js"]);
const MAX_LINES = 520;

test(`no lib/ file is over ${MAX_LINES} lines`, () => {
  for (const f of files) {
    const lines = source(f).split("\n").length;
    if (LONG_FOR_NOW.has(f) || WHOLE_PROTOCOLS.has(f)) continue;
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
        // layout.js lists the fields it checks, by name.
        if (f === "protocol/layout.js" && /^\s*"\w+",$/.test(line)) return;
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

test("only lib/protocol/messages.js spells a control message's type or a worker's exit code", async () => {
  const { MSG, RECYCLE_EXIT_CODES } = await import("../lib/protocol/messages.js");
  assert.ok(Object.isFrozen(MSG) && Object.isFrozen(RECYCLE_EXIT_CODES), "both tables are frozen");
  const types = Object.values(MSG);
  assert.equal(new Set(types).size, types.length, `message types are distinct: ${types}`);
  const codes = Object.values(RECYCLE_EXIT_CODES);
  assert.equal(new Set(codes).size, codes.length, `exit codes are distinct: ${codes}`);
  // A string literal as a `type:` property, compared with a `.type` (either
  // side), or as a `case` of a message type.
  const str = "([\"'`])[^\"'`]*\\1";
  const typeLiteral = new RegExp(`\\btype\\s*:\\s*${str}`);
  const typeCompared = new RegExp(`\\.type\\s*[!=]==?\\s*${str}|${str}\\s*[!=]==?\\s*[\\w.$]*\\.type\\b`);
  const caseOfType = new RegExp(`\\bcase\\s*(["'\`])(${types.join("|")})\\1\\s*:`);
  // The table defined again, or one of its codes as a number on a line about exiting.
  const exitCode = new RegExp(`RECYCLE_EXIT_CODES\\s*=|exit.*\\b(${codes.join("|")})\\b`, "i");
  const senders = [];
  for (const f of files) {
    if (f === "protocol/messages.js") continue;
    const text = source(f);
    text.split("\n").forEach((line, i) => {
      const at = `lib/${f}:${i + 1}`;
      assert.doesNotMatch(line, typeLiteral, `${at} spells a message type: ${line.trim()}`);
      assert.doesNotMatch(line, typeCompared, `${at} compares .type with a literal: ${line.trim()}`);
      assert.doesNotMatch(line, caseOfType, `${at} has a message type as a case: ${line.trim()}`);
      assert.doesNotMatch(line, exitCode, `${at} spells a worker exit code: ${line.trim()}`);
    });
    if (/\bMSG\.[A-Z_]+|\bRECYCLE_EXIT_CODES\b/.test(text.replace(/\/\/.*$/gm, ""))) senders.push(f);
  }
  // Both ends take the table from the one module.
  for (const f of senders)
    assert.ok(requiresOf(f).includes("protocol/messages.js"), `lib/${f} uses MSG but does not require it`);
  for (const f of ["host/pool.js", "spawn/process.js", "server/recycle.js", "host/topology/steal.js"])
    assert.ok(senders.includes(f), `host end lib/${f} imports the table`);
  for (const f of ["worker/serve.js", "worker/thread-main.js", "worker/process-main.js"])
    assert.ok(senders.includes(f), `worker end lib/${f} imports the table`);
});

// A line's code without its string literals and comments (an error message or a
// comment may name layout() or NO_EXT).
const code = (line) =>
  /^\s*(\/\*|\*)/.test(line)
    ? ""
    : line.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""').replace(/\/\/.*$/, "");

/** `lib/<file>:<line>` of every line of lib/ whose code matches `pattern`. */
function linesMatching(pattern) {
  const out = [];
  for (const f of files) {
    source(f)
      .split("\n")
      .forEach((line, i) => {
        if (pattern.test(code(line))) out.push(`lib/${f}:${i + 1}`);
      });
  }
  return out;
}

test("only lib/protocol/layout.js calls native.layout(); every L.<field> lib/ reads is one it checks", () => {
  const calls = linesMatching(/\blayout\s*\(\s*\)/);
  assert.equal(calls.length, 1, `layout() calls (take L from lib/protocol/layout.js instead): ${calls.join(", ")}`);
  assert.match(calls[0], /^lib\/protocol\/layout\.js:/);
  const fieldsRead = new Set();
  for (const f of files) {
    for (const line of source(f).split("\n")) {
      for (const m of code(line).matchAll(/\bL\.([A-Za-z_$][\w$]*)/g)) fieldsRead.add(m[1]);
    }
  }
  assert.ok(fieldsRead.size > 20, `fields read: ${fieldsRead.size}`);
  const unchecked = [...fieldsRead].filter((name) => !FIELDS.includes(name));
  assert.deepEqual(unchecked, [], "fields lib/ reads that lib/protocol/layout.js's FIELDS does not check");
});

test("NO_EXT is defined in one place, lib/protocol/layout.js", () => {
  const definitions = linesMatching(/\bNO_EXT\s*=[^=]|\.noExt\b/);
  assert.equal(definitions.length, 1, `NO_EXT definitions: ${definitions.join(", ")}`);
  assert.match(definitions[0], /^lib\/protocol\/layout\.js:/);
});

test("the layout is checked once and frozen: a missing or non-numeric field is an error naming it", () => {
  assert.ok(Object.isFrozen(L));
  for (const name of FIELDS) assert.ok(Number.isFinite(L[name]), `L.${name} is ${L[name]}`);
  // A lane's state is one 32-bit word, and maxQueue "auto" is L.slotCount per worker.
  assert.equal(L.slotCount, 32);
  assert.equal(AUTO_QUEUE_PER_WORKER, L.slotCount);
  const { slotStride, ...withoutStride } = L;
  assert.ok(slotStride > 0);
  assert.throws(() => checkLayout(withoutStride), { name: "Error", message: /no field "slotStride"/ });
  assert.throws(() => checkLayout({ ...L, wordArmed: "17" }), {
    message: /field "wordArmed" is 17, not a finite number/,
  });
  assert.throws(() => checkLayout({ ...L, doneStride: Number.NaN }), { message: /field "doneStride" is NaN/ });
  assert.throws(() => checkLayout(undefined), { message: /returned undefined, not an object/ });
  assert.deepEqual(checkLayout({ ...L }), L);
});

test("maskOf and the bit helpers the lane and steal protocols share", () => {
  assert.equal(maskOf(32), -1);
  assert.equal(maskOf(31), 0x7fffffff);
  assert.equal(maskOf(5), 0b11111);
  assert.equal(maskOf(1), 1);
  assert.equal(maskOf(0), 0);
  assert.equal(lowestBit(0b101000), 3);
  assert.equal(lowestBit(-2147483648), 31);
  assert.equal(nextBit(0b1001, 1), 3);
  assert.equal(nextBit(0b1001, 4), 0);
  assert.equal(nextBit(0b1001, 32), 0);
  assert.equal(nextBit(0, 0), -1);
  assert.equal(popcount(-1), 32);
  assert.equal(popcount(0b1011), 3);
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

// The pool's collaborators see it through a view (lib/host/view.js) of the names they
// declare in POOL_USES: a module's POOL_USES is the whole of what it reads of the pool.
const VIEWED = {
  "host/topology/steal.js": (m) => m.StealTopology.POOL_USES,
  "host/topology/lanes.js": (m) => m.LanesTopology.POOL_USES,
  "host/topology/inline.js": (m) => m.InlineLane.POOL_USES,
  "host/loop.js": (m) => m.HostLoop.POOL_USES,
  "host/startup.js": (m) => m.StartupWatch.POOL_USES,
  "host/hard-timeout.js": (m) => m.POOL_USES,
  "server/recycle.js": (m) => m.Recycler.POOL_USES,
  "server/elastic.js": (m) => m.Elastic.POOL_USES,
  "server/api.js": (m) => m.POOL_USES,
  "host/broadcast.js": (m) => m.Broadcasts.POOL_USES,
  "host/streams.js": (m) => m.HostStreams.POOL_USES,
};

/** The names a module's code reads of its pool view: `pool.x`, `this.pool.x`, `{ x, y } = pool`. */
function poolReads(text) {
  const names = new Set();
  for (const line of text.split("\n").map(code)) {
    for (const m of line.matchAll(/\bpool\.(\w+)/g)) names.add(m[1]);
    for (const m of line.matchAll(/\{([\w\s,]+)\}\s*=\s*(?:this\.)?pool\b(?!\.)/g)) {
      for (const name of m[1].split(",")) if (name.trim() !== "") names.add(name.trim());
    }
  }
  return names;
}

test("each collaborator reads of the pool exactly the names in its POOL_USES", () => {
  for (const [f, usesOf] of Object.entries(VIEWED)) {
    const uses = usesOf(require(`../lib/${f}`));
    assert.ok(Array.isArray(uses) && Object.isFrozen(uses), `lib/${f} declares a frozen POOL_USES`);
    const reads = poolReads(source(f));
    assert.deepEqual(
      [...reads].filter((n) => !uses.includes(n)).sort(),
      [],
      `lib/${f} reads names it does not declare`,
    );
    assert.deepEqual(
      uses.filter((n) => !reads.has(n)),
      [],
      `lib/${f} declares names it never reads`,
    );
  }
  // The check sees a planted read of an undeclared name, in both forms.
  const planted = `${source("host/topology/lanes.js")}\nconst n = this.pool.queue.size;\nconst { stats } = pool;\n`;
  const extra = [...poolReads(planted)].filter(
    (n) => !require("../lib/host/topology/lanes.js").LanesTopology.POOL_USES.includes(n),
  );
  assert.deepEqual(extra.sort(), ["queue", "stats"]);
});

test("the pool hands its collaborators views, never itself; each name a view offers is the pool's", () => {
  const ownFiles = ["host/pool.js", "host/calls.js", "host/slots.js"];
  for (const f of ownFiles) {
    source(f)
      .split("\n")
      .forEach((line, i) => {
        const at = `lib/${f}:${i + 1}: ${line.trim()}`;
        if (/poolView\(this, Module\.POOL_USES\)/.test(line)) return; // the one place views are made
        assert.doesNotMatch(
          code(line),
          /\((?:[^()]*,\s*)?this\s*[,)]/,
          `${at} hands the pool itself to a collaborator`,
        );
      });
  }
  const { Pool } = require("../lib/host/pool.js");
  const fields = new Set([...source("host/pool.js").matchAll(/\bthis\.(\w+)\s*=(?!=)/g)].map((m) => m[1]));
  for (const [f, usesOf] of Object.entries(VIEWED)) {
    for (const name of usesOf(require(`../lib/${f}`))) {
      assert.ok(typeof Pool.prototype[name] === "function" || fields.has(name), `lib/${f}: ${name} is not the pool's`);
    }
  }
});

test("a view offers only its names, reads fields live and refuses writes", () => {
  const { poolView } = require("../lib/host/view.js");
  class Owner {
    constructor() {
      this.count = 1;
      this.secret = "kept";
    }
    bump() {
      return ++this.count;
    }
  }
  const owner = new Owner();
  const view = poolView(owner, ["count", "bump"]);
  assert.deepEqual(Object.keys(view).sort(), ["bump", "count"]);
  assert.equal(view.secret, undefined);
  assert.equal(view.bump(), 2); // called on the owner
  assert.equal(view.count, 2); // read through, not copied
  assert.throws(() => {
    view.count = 5;
  }, TypeError);
  assert.equal(owner.count, 2);
  assert.throws(() => poolView(owner), /POOL_USES/);
});
