// Every error code the package raises is named in index.d.ts's
// KnittingErrorCode, in docs/api.md and in the README's table of errors, and
// nothing is named there that the package does not raise.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";

const root = new URL("..", import.meta.url).pathname;
const read = (file) => readFileSync(join(root, file), "utf8");

function libFiles(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? libFiles(join(dir, e.name)) : e.name.endsWith(".js") ? [join(dir, e.name)] : [],
  );
}

// knitting's numbered codes ride along as `knittingCode`; they are not codes of this package.
const KNITTING_NUMBERED = /^KNT_ERROR_\d$/;
const codesIn = (text) => new Set([...text.matchAll(/"(KNT_[A-Z0-9_]+)"/g)].map((m) => m[1]));

const raised = new Set(
  [...libFiles("lib"), "index.js"].flatMap((f) => [...codesIn(read(f))]).filter((c) => !KNITTING_NUMBERED.test(c)),
);

test("the package raises the codes it declares", () => {
  assert.ok(raised.size >= 20, `found only ${raised.size} codes in lib/: the scan is broken`);
  const dts = read("index.d.ts");
  const union = dts.slice(
    dts.indexOf("export type KnittingErrorCode ="),
    dts.indexOf(";", dts.indexOf("export type KnittingErrorCode =")),
  );
  const declared = codesIn(union);
  assert.deepEqual(
    [...raised].filter((c) => !declared.has(c)).sort(),
    [],
    "raised in lib/, missing from KnittingErrorCode",
  );
  assert.deepEqual(
    [...declared].filter((c) => !raised.has(c)).sort(),
    [],
    "in KnittingErrorCode, raised nowhere in lib/",
  );
});

test("docs/api.md and the README's table of errors name every code", () => {
  const api = read("docs/api.md");
  assert.deepEqual([...raised].filter((c) => !api.includes(c)).sort(), [], "missing from docs/api.md");
  const readme = read("README.md");
  const start = readme.indexOf("\n## Errors\n");
  assert.ok(start > 0, "README has an Errors section");
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  assert.deepEqual(
    [...raised].filter((c) => !section.includes(`\`${c}\``)).sort(),
    [],
    "missing from the README's Errors table",
  );
});

test("one table: no error code is spelt out outside lib/errors.js and the codec", () => {
  const elsewhere = libFiles("lib")
    .filter((f) => f !== join("lib", "errors.js") && !f.startsWith(join("lib", "codec")))
    .filter((f) => [...codesIn(read(f))].some((c) => !KNITTING_NUMBERED.test(c)));
  assert.deepEqual(elsewhere, [], "these files spell out a KNT_ code: use CODE.<name> from lib/errors.js");
  const { CODE } = createRequire(import.meta.url)("../lib/errors.js");
  assert.deepEqual(new Set(Object.values(CODE)), raised, "CODE names every code lib/ raises, and no other");
});
