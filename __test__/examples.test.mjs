// Every example in examples/ runs as a child process and prints what it should;
// so does every code snippet in README.md and docs/*.md (below).
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const examples = fileURLToPath(new URL("../examples/", import.meta.url));

function runExample(file, args = []) {
  const env = { ...process.env };
  delete env.KNITTING_DEBUG;
  delete env.KNITTING_NATIVE_BINARY;
  const child = spawnSync(process.execPath, [`examples/${file}`, ...args], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000, // turns a hang into a failure; not a speed target
    env,
  });
  assert.equal(child.error, undefined, `${file}: ${child.error}`);
  assert.equal(child.signal, null, `${file} died by ${child.signal}: ${child.stderr}`);
  assert.equal(child.status, 0, `${file} exited with ${child.status}: ${child.stderr}`);
  assert.equal(child.stderr, "", `${file} wrote to stderr`);
  return child.stdout;
}

test("every example is tested here and listed in examples/README.md", () => {
  const files = readdirSync(examples).filter((f) => f.endsWith(".mjs") || f.endsWith(".js") || f.endsWith(".cjs"));
  assert.deepEqual(files.sort(), [
    "cpu-heavy.mjs",
    "http-server.mjs",
    "process-workers.mjs",
    "quick-start.cjs",
    "quick-start.mjs",
  ]);
  const readme = readFileSync(new URL("../examples/README.md", import.meta.url), "utf8");
  for (const f of files) assert.ok(readme.includes(`(${f})`), `examples/README.md does not link ${f}`);
  for (const f of files) {
    const src = readFileSync(new URL(`../examples/${f}`, import.meta.url), "utf8");
    assert.match(src, /from "knitting-native"|require\("knitting-native"\)/, `${f} imports the package by name`);
    assert.match(src, /if \(isMain\)/, `${f} keeps the pool behind isMain`);
  }
});

test("examples/quick-start.mjs", () => {
  assert.equal(runExample("quick-start.mjs"), "add([1, 2]) = 3\nsquare(7)   = 49\n10,000 calls, last = 19998\n");
});

test("examples/quick-start.cjs: the same as CommonJS", () => {
  assert.equal(runExample("quick-start.cjs"), "add([1, 2]) = 3\nsquare(7)   = 49\n10,000 calls, last = 19998\n");
});

test("examples/cpu-heavy.mjs: SHA-256 in the workers matches the host's", () => {
  const out = runExample("cpu-heavy.mjs", ["64", "64"]);
  assert.match(out, /^hashed 64 buffers \(4\.0 MiB\) on \d+ worker thread\(s\) in \d+ ms$/m);
  assert.match(out, /^first digest [0-9a-f]{64}$/m);
  assert.match(out, /^spot checks: 8\/8 match the host's own SHA-256$/m);
});

test("examples/cpu-heavy.mjs with its default sizes", () => {
  const out = runExample("cpu-heavy.mjs");
  assert.match(out, /^hashed 256 buffers \(64\.0 MiB\)/m);
  assert.match(out, /^spot checks: 8\/8 match/m);
});

test("examples/http-server.mjs --self-test: requests over loopback, answers checked", () => {
  const out = runExample("http-server.mjs", ["--self-test"]);
  assert.match(out, /^listening on http:\/\/127\.0\.0\.1:\d+ /m);
  assert.match(out, /^self-test: 24\/24 answers correct in \d+ ms$/m);
  assert.match(out, /^self-test: bad input -> HTTP 400$/m);
  assert.match(out, /^self-test: ok$/m);
});

test("examples/process-workers.mjs: calls answered by worker processes; a crashed one is replaced", () => {
  const out = runExample("process-workers.mjs");
  // One or both: with work stealing a worker that keeps up with tiny calls
  // may take all of them while the other stays parked (nothing waits).
  assert.match(out, /^10,000 calls answered by [12] worker processes \(host pid is not among them: true\)$/m);
  assert.match(out, /^longest Collatz chain below 10,001: n = 6171, 261 steps$/m);
  assert.match(out, /^a worker process exited: KNT_WORKER_EXIT, exit code 7$/m);
  assert.match(out, /^the pool keeps serving: collatz\(27\) = 111 steps$/m);
});

// Every code block marked js, mjs, cjs or ts in README.md and docs/*.md runs
// as written: js/mjs/cjs blocks run with this Node from a project whose
// node_modules/knitting-native is this package (so they import it by name),
// ts blocks pass `tsc --noEmit --strict`. A block that cannot run alone
// (`{ ... }`, a piece of a larger program) must say so in its info string
// (```js fragment); an unmarked fragment fails here. A block followed by
// <!-- stdout: ... --> must print exactly those lines.
const FENCE = /^```([^\n`]*)\n([\s\S]*?)^```[ \t]*\n(?:[ \t]*\n)*(?:<!-- stdout:\n([\s\S]*?)-->\n)?/gm;
const CHECKED = new Set(["js", "mjs", "cjs", "ts", "javascript", "typescript"]);

function docFiles() {
  const docs = readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs.sort()];
}

function snippetsOf(text) {
  const out = [];
  for (const m of text.matchAll(FENCE)) {
    const [lang = "", ...flags] = m[1].trim().split(/\s+/);
    const line = text.slice(0, m.index).split("\n").length;
    out.push({ lang, flags, code: m[2], stdout: m[3], line });
  }
  return out;
}

test("the snippet reader: languages, fragment marks, expected output", () => {
  const md = [
    "# t",
    "```js",
    "console.log(1);",
    "```",
    "",
    "<!-- stdout:",
    "1",
    "-->",
    "```js fragment",
    "f({ ... });",
    "```",
    "```sh",
    "npm test",
    "```",
    "",
  ].join("\n");
  const got = snippetsOf(md);
  assert.deepEqual(
    got.map((s) => [s.lang, s.flags, s.code, s.stdout, s.line]),
    [
      ["js", [], "console.log(1);\n", "1\n", 2],
      ["js", ["fragment"], "f({ ... });\n", undefined, 9],
      ["sh", [], "npm test\n", undefined, 12],
    ],
  );
});

test("every js/mjs/cjs/ts snippet in README.md and docs/*.md runs as written", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "knitting-native-snippets-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(root, join(dir, "node_modules", "knitting-native"), "dir");
  // Deno resolves a bare name from node_modules only when package.json names it.
  const manifest = { name: "snippets", private: true, dependencies: { "knitting-native": "*" } };
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest));
  const runArgs = (file) => (typeof Deno === "undefined" ? [file] : ["run", "-A", file]);
  const env = { ...process.env };
  delete env.KNITTING_DEBUG;
  delete env.KNITTING_NATIVE_BINARY;
  let ran = 0;
  const ts = [];
  const failures = [];
  for (const doc of docFiles()) {
    for (const s of snippetsOf(readFileSync(join(root, doc), "utf8"))) {
      if (!CHECKED.has(s.lang)) continue;
      const where = `${doc}:${s.line}`;
      if (s.flags.includes("fragment")) {
        if (s.stdout !== undefined) failures.push(`${where}: a fragment has no output to check`);
        continue;
      }
      const unknown = s.flags.filter((f) => f !== "fragment");
      if (unknown.length) failures.push(`${where}: unknown mark ${unknown.join(" ")} (only "fragment")`);
      const base = `snippet-${doc.replace(/[^a-z0-9]+/gi, "-")}-${s.line}`;
      if (s.lang === "ts" || s.lang === "typescript") {
        writeFileSync(join(dir, `${base}.mts`), s.code);
        ts.push(`${base}.mts`);
        continue;
      }
      const file = join(dir, `${base}.${s.lang === "cjs" ? "cjs" : "mjs"}`);
      writeFileSync(file, s.code);
      const child = spawnSync(process.execPath, runArgs(file), { cwd: dir, encoding: "utf8", timeout: 60_000, env });
      ran++;
      if (child.status !== 0 || child.signal) {
        failures.push(`${where}: exited with ${child.status ?? child.signal}: ${child.stderr.slice(0, 600)}`);
      } else if (s.stdout !== undefined && child.stdout !== s.stdout) {
        failures.push(`${where}: printed ${JSON.stringify(child.stdout)}, the page says ${JSON.stringify(s.stdout)}`);
      }
    }
  }
  if (ts.length) {
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "es2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          lib: ["es2022", "esnext.disposable"],
          types: ["node"],
          typeRoots: [join(root, "node_modules", "@types")],
          strict: true,
          noEmit: true,
        },
        files: ts,
      }),
    );
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    const child = spawnSync(process.execPath, [tsc, "-p", dir, "--noEmit", "--strict", "--pretty", "false"], {
      cwd: dir,
      encoding: "utf8",
      timeout: 120_000,
    });
    if (child.status !== 0) failures.push(`tsc on the ts snippets: ${child.stdout}${child.stderr}`);
  }
  assert.deepEqual(failures, []);
  assert.ok(ran >= 5, `ran ${ran} snippets: the README's quick start and recipes at least`);
});

test("README.md: for users, under 350 lines; two contributor commands; every doc it names exists", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const lines = readme.split("\n").length;
  assert.ok(lines <= 350, `README.md has ${lines} lines: the reference belongs in docs/`);
  assert.match(readme, /^npm install knitting-native$/m, "the install command");
  const blocks = snippetsOf(readme).filter((s) => s.lang === "sh");
  const contributor = blocks.find((s) => s.code.includes("npm run demo"));
  assert.ok(contributor, "a sh block with the contributor commands");
  const commands = contributor.code
    .split("\n")
    .map((l) => l.replace(/#.*/, "").trim())
    .filter(Boolean);
  assert.deepEqual(commands, ["npm install && npm run demo", "npm test"]);
  // `npm run demo` builds the addon when it is missing, as `npm test` builds it first.
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  assert.match(pkg.scripts.demo, /^node scripts\/build\.mjs --if-missing && /);
  assert.match(pkg.scripts.test, /^npm run build && /);
  for (const heading of [
    "Install",
    "Quick start",
    "CPU work from an HTTP server",
    "Timeouts and aborts",
    "Shared bytes",
    "Worker processes",
    "Every worker",
    "Streaming results",
    "CPU-bound work",
    "Supported runtimes and platforms",
    "Coming from piscina",
    "Coming from knitting",
    "Links",
  ]) {
    assert.match(readme, new RegExp(`^#{2,3} ${heading}$`, "m"), heading);
  }
  assert.match(readme, /^\| runtime \| pool\/floor median \(worst\) \| piscina\/floor median \(worst\) \|/m);
  // Each runtime the package supports has a measured row.
  for (const rt of ["Node 20", "Node 24", "Bun", "Deno"])
    assert.match(readme, new RegExp(`^\\| ${rt}[^|]* \\| \\d\\.\\d\\dx`, "m"), rt);
  for (const doc of ["api.md", "benchmarks.md", "architecture.md"]) {
    assert.ok(readme.includes(`(docs/${doc}`), `README links docs/${doc}`);
  }
  // Every relative link in README and docs/ points at a file that exists.
  for (const page of docFiles()) {
    // Without code blocks and code spans (`pool.call[0](arg)` is no link).
    const text = readFileSync(join(root, page), "utf8")
      .replace(/^```[\s\S]*?^```/gm, "")
      .replace(/`[^`\n]*`/g, "");
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const path = join(root, page.includes("/") ? "docs" : "", target);
      assert.ok(existsSync(path), `${page} links ${target}, which does not exist`);
    }
  }
  const benchmarks = readFileSync(join(root, "docs", "benchmarks.md"), "utf8");
  assert.ok(benchmarks.includes("(measurements.md)") && benchmarks.includes("(cpu-tiering.md)"));
});
