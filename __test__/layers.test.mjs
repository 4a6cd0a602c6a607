// lib/'s layering, as docs/architecture.md ("lib/, folder by folder") states
// it: this test reads that table, so the map and the tree cannot drift. Every
// require from one folder into another must be one the table allows; every
// lib/ file is named in that section, and every lib/ path it names exists.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, dirname, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { internals } from "./helpers/internals.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const LIB = join(ROOT, "lib");
const files = readdirSync(LIB, { recursive: true })
  .filter((f) => f.endsWith(".js"))
  .map((f) => f.split("\\").join("/"));
const TOP_LEAVES = new Set(["errors.js", "lazy-v8.js"]); // any folder may require these

const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
const start = doc.indexOf("\n## lib/, folder by folder\n");
const section = doc.slice(start, doc.indexOf("\n## ", start + 1));

/** The table: folder -> the folders its files may require. */
function allowedTable(text) {
  const table = new Map();
  for (const line of text.split("\n")) {
    const m = /^\| `([a-z0-9-]+\/)` \| [^|]+ \| ([^|]+) \|$/.exec(line);
    if (m === null) continue;
    const allowed = m[2].trim() === "nothing" ? [] : [...m[2].matchAll(/`([a-z-]+\/)`/g)].map((x) => x[1]);
    table.set(m[1], new Set(allowed));
  }
  return table;
}

const folderOf = (f) => (f.includes("/") ? `${f.split("/")[0]}/` : f);

/** [from, to] for every require between lib/ files. */
function requires() {
  const out = [];
  for (const f of files) {
    const source = readFileSync(join(LIB, f), "utf8");
    for (const m of source.matchAll(/require\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g)) {
      const target = posix.normalize(posix.join(posix.dirname(f), m[1]));
      if (files.includes(target)) out.push([f, target]);
    }
  }
  return out;
}

function violations(table, edges) {
  const bad = [];
  for (const [from, to] of edges) {
    const a = folderOf(from);
    const b = folderOf(to);
    if (to === "index.js") {
      bad.push(`${from} requires index.js`);
      continue;
    }
    // The top files: index.js is the surface (it may require anything), errors.js needs the codec's codes.
    if (from === "errors.js" && b !== "codec/") bad.push(`errors.js requires ${to}: it may require only codec/`);
    if (a === b || TOP_LEAVES.has(to) || !from.includes("/")) continue;
    const allowed = table.get(a);
    if (allowed === undefined) bad.push(`${from}: its folder ${a} is not in the table`);
    else if (!allowed.has(b))
      bad.push(`${from} requires ${to}: ${a} may require ${[...allowed].join(", ") || "nothing"}`);
  }
  return bad;
}

test("every require between lib/ folders is one docs/architecture.md allows", () => {
  const table = allowedTable(section);
  assert.ok(table.size >= 10, `read ${table.size} rows of the table: the section or its format moved`);
  const edges = requires();
  assert.ok(edges.length > 100, `found ${edges.length} requires: the scan is broken`);
  assert.deepEqual(violations(table, edges), []);
  for (const f of files) {
    if (f.includes("/")) assert.ok(table.has(folderOf(f)), `lib/${folderOf(f)} has no row in the table`);
  }
});

test("the check catches a require the table does not allow", () => {
  const table = allowedTable(section);
  // The two ends of a call never require each other; nor does protocol/ require the pool.
  const planted = [
    ["worker/serve.js", "host/pool.js"],
    ["host/pool.js", "worker/serve.js"],
    ["protocol/lane.js", "host/calls.js"],
    ["options/index.js", "index.js"],
  ];
  assert.equal(violations(table, planted).length, planted.length, violations(table, planted).join("\n"));
});

test("docs/architecture.md names every lib/ file, and only files that exist", () => {
  const named = new Set([...section.matchAll(/`([a-z0-9-]+\/[a-z0-9/-]+\.js|[a-z0-9-]+\.js)`/g)].map((m) => m[1]));
  assert.deepEqual(
    files.filter((f) => !named.has(f)),
    [],
    "lib/ files the section does not name",
  );
  assert.deepEqual(
    [...named].filter((f) => !files.includes(f)),
    [],
    "paths the section names that are not lib/ files",
  );
});

test("both topologies offer the one interface of host/topology/interface.js", async () => {
  const require = createRequire(import.meta.url);
  const { METHODS, FIELDS, checkTopology } = require("../lib/host/topology/interface.js");
  const { StealTopology } = require("../lib/host/topology/steal.js");
  const { LanesTopology } = require("../lib/host/topology/lanes.js");
  for (const Topology of [StealTopology, LanesTopology]) {
    for (const name of Object.keys(METHODS)) {
      assert.equal(typeof Topology.prototype[name], "function", `${Topology.name}.prototype.${name}`);
    }
  }
  // A topology missing a member is refused when the pool is made.
  assert.throws(
    () => checkTopology({ ...Object.fromEntries(Object.keys(FIELDS).map((k) => [k, null])) }),
    /lacks place\(\)/,
  );
  // The pools of both kinds pass the check with their fields set.
  const { createPool } = await import("knitting-native");
  const { echo } = await import("./fixtures/value-error-tasks.mjs");
  for (const options of [{ threads: 2 }, { threads: 2, host: { steal: false } }]) {
    const pool = createPool(options)({ echo });
    try {
      const topology = internals(pool).topology;
      assert.equal(topology.steal, options.host === undefined, JSON.stringify(options));
      for (const name of Object.keys(FIELDS)) assert.ok(name in topology, `${name} on ${JSON.stringify(options)}`);
      assert.equal(await pool.call.echo(1), 1);
    } finally {
      await pool.shutdown();
    }
  }
});

/** Pairs of lib/ paths whose words (folders and name, split at "-") are the same in another order. */
function reorderedPairs(paths) {
  const byWords = new Map();
  const pairs = [];
  for (const path of paths) {
    const key = path.replace(/\.js$/, "").split(/[/-]/).sort().join(" ");
    if (byWords.has(key)) pairs.push([byWords.get(key), path]);
    else byWords.set(key, path);
  }
  return pairs;
}

test("no two lib/ files' names differ only by the order of their words", () => {
  assert.deepEqual(reorderedPairs(files), []);
  // The check sees the kind of pair it forbids.
  assert.deepEqual(reorderedPairs(["host/steal-host.js", "host/host-steal.js", "protocol/steal.js"]), [
    ["host/steal-host.js", "host/host-steal.js"],
  ]);
  assert.deepEqual(reorderedPairs(["host-steal.js", "steal-host.js", "protocol/steal.js"]), [
    ["host-steal.js", "steal-host.js"],
  ]);
});
