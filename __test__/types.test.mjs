// Type-checks index.d.ts with the TypeScript compiler (no addon, no pool).
//
// 1. __test__/types/ok/* must compile with zero errors. These files hold the
//    typed examples, exact-type assertions, and `// @ts-expect-error` lines
//    (tsc fails if such a line is NOT an error).
// 2. Each __test__/types/fail/* file is compiled on its own and must fail with
//    the code named on its first line (`// expect: TS2339`), on exactly the
//    lines marked `// error`.
//
// "knitting-native" resolves to the project root by self-reference (these
// files live inside the package), through the "types" condition of the
// package.json "exports" map, for both import and require.
import test from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..");
const typesDir = join(here, "types");
const failDir = join(typesDir, "fail");
const tscPath = join(root, "node_modules", "typescript", "bin", "tsc");
const dts = join(root, "index.d.ts");

/** Runs tsc; resolves to { code, out } whatever the exit status. */
function tsc(args) {
  return new Promise((resolvePromise, reject) => {
    execFile(
      process.execPath,
      [tscPath, ...args, "--pretty", "false"],
      { cwd: root, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== "number") return reject(err); // spawn failure / timeout
        resolvePromise({ code: err ? err.code : 0, out: `${stdout}${stderr}` });
      },
    );
  });
}

/** Parses `file(line,col): error TSxxxx: message` lines. */
function diagnostics(out) {
  const found = [];
  for (const line of out.split(/\r?\n/)) {
    const m = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line);
    if (m) found.push({ file: resolve(root, m[1]), line: Number(m[2]), code: m[4], message: m[5] });
  }
  return found;
}

const failFiles = readdirSync(failDir)
  .filter((f) => /\.[mc]?ts$/.test(f) && !f.endsWith(".d.ts"))
  .sort();

test("ok examples compile with zero errors (strict, nodenext, ESM and CJS)", async () => {
  const { code, out } = await tsc(["-p", join(typesDir, "tsconfig.json"), "--noEmit", "--listFiles"]);
  const errors = out.split(/\r?\n/).filter((l) => /error TS\d+/.test(l));
  assert.deepEqual(errors, [], `tsc reported errors:\n${out}`);
  assert.equal(code, 0, out);
  const listed = out.split(/\r?\n/).map((l) => resolve(root, l.trim()));
  assert.ok(listed.includes(dts), `"knitting-native" did not resolve to ${dts}:\n${out}`);
  for (const f of [
    "pool.mts",
    "expect-errors.mts",
    "require.cts",
    "lifecycle.mts",
    "lifecycle-tasks.mts",
    "scheduling.mts",
    "quick-start.mts",
  ]) {
    assert.ok(listed.includes(join(typesDir, "ok", f)), `ok/${f} was not compiled`);
  }
  assert.ok(listed.includes(join(root, "examples", "quick-start.mts")), "examples/quick-start.mts was not compiled");
});

/** The README's quick start: the first code block after "## Quick start". */
function readmeQuickStart() {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const m = /^## Quick start\n[\s\S]*?^```js\n([\s\S]*?)^```/m.exec(readme);
  assert.ok(m, "README.md has no ```js block under ## Quick start");
  return m[1];
}

test("the README's quick start type-checks as written in a strict .mts", async (t) => {
  // As a user's project has it: knitting-native in node_modules, @types/node.
  const tmp = mkdtempSync(join(tmpdir(), "knitting-native-paste-"));
  t.after(() => rmSync(tmp, { recursive: true, force: true }));
  mkdirSync(join(tmp, "node_modules"));
  symlinkSync(root, join(tmp, "node_modules", "knitting-native"), "dir");
  writeFileSync(join(tmp, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  const code = readmeQuickStart();
  const file = join(tmp, "tasks.mts");
  writeFileSync(file, code);
  writeFileSync(
    join(tmp, "tsconfig.json"),
    JSON.stringify({
      extends: join(typesDir, "tsconfig.base.json"),
      compilerOptions: { typeRoots: [join(root, "node_modules", "@types")] },
      files: [file],
    }),
  );
  const { out } = await tsc(["-p", join(tmp, "tsconfig.json"), "--noEmit", "--strict"]);
  // The task's unannotated `([a, b]) => a + b` type-checks (its argument is
  // `any`, not `void`); the bare function's `v = 0` types its parameter.
  assert.deepEqual(
    diagnostics(out).map((d) => [d.file, d.line, d.code]),
    [],
    out,
  );
});

test("examples/quick-start.mts is the README's quick start with its parameters annotated", () => {
  const typed = readFileSync(join(root, "examples", "quick-start.mts"), "utf8")
    .replace(/^(\/\/.*\n)+/, "")
    .replace(": [number, number]", "")
    .replace("(v: number)", "(v = 0)");
  assert.equal(typed, readmeQuickStart().replace(/^\/\/ tasks\.mjs\n/, ""));
});

test("there are fail cases, each naming its expected error code", () => {
  assert.ok(failFiles.length >= 2, "expected at least two files in __test__/types/fail");
  for (const f of failFiles) {
    const first = readFileSync(join(failDir, f), "utf8").split(/\r?\n/, 1)[0];
    assert.match(first, /^\/\/ expect: TS\d+\s*$/, `${f}: first line must be "// expect: TSxxxx"`);
  }
});

test("each fail file fails to compile with its expected code", {
  concurrency: Math.max(2, availableParallelism()),
}, async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), "knitting-native-types-"));
  t.after(() => rmSync(tmp, { recursive: true, force: true }));

  await Promise.all(
    failFiles.map((f) =>
      t.test(f, async () => {
        const file = join(failDir, f);
        const lines = readFileSync(file, "utf8").split(/\r?\n/);
        const expected = /TS\d+/.exec(lines[0])[0];
        const marked = lines.flatMap((l, i) => (/\/\/ error\s*$/.test(l) ? [i + 1] : []));
        assert.ok(marked.length > 0, `${f}: mark the bad line(s) with a trailing "// error"`);

        // One program per file, so that one failure cannot hide another. For
        // speed, without @types/node (the fail files do not need it; this also
        // shows index.d.ts needs only lib esnext.disposable) and without lib
        // checks (the ok run already checks index.d.ts itself).
        const config = join(tmp, `${f}.tsconfig.json`);
        writeFileSync(
          config,
          JSON.stringify({
            extends: join(typesDir, "tsconfig.base.json"),
            compilerOptions: { skipLibCheck: true, types: [] },
            files: [file],
          }),
        );
        const { code, out } = await tsc(["-p", config, "--noEmit"]);
        assert.notEqual(code, 0, `${f}: expected tsc to fail, but it passed:\n${out}`);
        const found = diagnostics(out);
        assert.ok(found.length > 0, `${f}: tsc failed without a diagnostic:\n${out}`);
        for (const d of found) {
          assert.equal(d.file, file, `${f}: error outside the fail file:\n${out}`);
          assert.equal(d.code, expected, `${f}: expected ${expected}, got ${d.code} at line ${d.line}: ${d.message}`);
        }
        assert.deepEqual(
          [...new Set(found.map((d) => d.line))].sort((a, b) => a - b),
          marked,
          `${f}: errors on other lines than those marked "// error":\n${out}`,
        );
      }),
    ),
  );
});
