// Packaging: what `npm pack` puts in the tarball, the package.json fields
// consumers rely on, the per-platform packages in npm/<triple>/ and
// scripts/prepublish.mjs, and the loader's message when no binary loads.
// Runs after `npm run build` (the binary for this platform must exist).
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const { platformTriple, TARGETS } = require("../lib/platform.js");

const root = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const triple = platformTriple();
const binaryName = `knitting-native.${triple}.node`;

function npm(args, cwd) {
  const win = process.platform === "win32";
  const child = spawnSync(win ? "npm.cmd" : "npm", args, { cwd, encoding: "utf8", timeout: 120_000, shell: win });
  assert.equal(child.error, undefined, String(child.error));
  assert.equal(child.status, 0, `npm ${args.join(" ")}: ${child.stderr}`);
  return child.stdout;
}

// --ignore-scripts: `prepare` would rebuild the addon; the suite runs after the build.
function packedFiles(cwd) {
  const [info] = JSON.parse(npm(["pack", "--dry-run", "--json", "--ignore-scripts"], cwd));
  return info.files.map((f) => f.path.replaceAll("\\", "/")).sort();
}

function tempDir(t, label) {
  const dir = mkdtempSync(join(tmpdir(), `knitting-native-${label}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function childEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  if (!("KNITTING_NATIVE_BINARY" in extra)) delete env.KNITTING_NATIVE_BINARY;
  delete env.KNITTING_DEBUG;
  return env;
}

function loadIn(cwd, env) {
  return spawnSync(process.execPath, ["-e", 'const k = require("./index.js"); console.log(typeof k.createPool)'], {
    cwd,
    encoding: "utf8",
    timeout: 30_000,
    env,
  });
}

test(`the binary for this platform (${binaryName}) is built`, () => {
  assert.ok(existsSync(join(root, binaryName)), `run \`npm run build\` first: ${binaryName} is missing`);
});

test("npm pack: exactly the runtime files, the license and this platform's binary", () => {
  const files = packedFiles(root);
  const libFiles = readdirSync(join(root, "lib"), { recursive: true }) // lib/codec/ too
    .filter((f) => f.endsWith(".js"))
    .map((f) => `lib/${f}`);
  // The Rust sources and their build script ship too: where no binary fits,
  // `npm run build` in the installed copy builds one (the loader says so).
  const srcFiles = readdirSync(join(root, "src"), { recursive: true })
    .filter((f) => f.endsWith(".rs"))
    .map((f) => `src/${f.replaceAll("\\", "/")}`);
  const sources = ["Cargo.toml", "Cargo.lock", "build.rs", "scripts/build.mjs", ...srcFiles];
  const entry = ["index.js", "index.mjs", "index.d.ts"];
  const runtime = ["package.json", "README.md", "LICENSE", ...entry, binaryName, ...libFiles];
  assert.deepEqual(files, [...runtime, ...sources].sort());
  const notShipped = [/^__test__\//, /^target\//, /^bench\//, /^npm\//, /^examples\//, /^docs\//, /^\.ci\//];
  for (const banned of [...notShipped, /^node_modules\//]) {
    assert.equal(files.filter((f) => banned.test(f)).length, 0, `${banned} in the tarball`);
  }
  assert.deepEqual(
    files.filter((f) => f.endsWith(".node")),
    [binaryName],
    "one binary, this platform's",
  );
});

test("package.json: exports, types, engines, files; no os/cpu or optionalDependencies in the root", () => {
  const dot = pkg.exports["."];
  assert.equal(dot.types, "./index.d.ts");
  assert.equal(dot.import, "./index.mjs");
  assert.equal(dot.require, "./index.js");
  assert.equal(Object.keys(dot)[0], "types", "types comes first in the exports conditions");
  assert.equal(pkg.types, "index.d.ts");
  assert.equal(pkg.main, "index.js");
  assert.match(pkg.engines.node, /^>=\s*20(\.0(\.0)?)?$/);
  assert.ok(Array.isArray(pkg.files) && pkg.files.length > 0);
  assert.ok(pkg.files.includes("lib/") || pkg.files.includes("lib"));
  assert.ok(pkg.files.some((f) => f === binaryName || f === "*.node" || f === "knitting-native.*.node"));
  assert.equal(pkg.license, "MIT");
  assert.ok(readFileSync(join(root, "LICENSE"), "utf8").startsWith("MIT License"));
  assert.equal(pkg.os, undefined);
  assert.equal(pkg.cpu, undefined);
  assert.equal(pkg.optionalDependencies, undefined, "written by scripts/prepublish.mjs at publish time only");
  for (const name of ["build", "test", "test:js", "demo", "lint"]) assert.ok(pkg.scripts[name], `scripts.${name}`);
  // An install runs these in the consumer's project, where scripts/ (not in
  // the tarball) is missing: none may exist.
  for (const hook of ["preinstall", "install", "postinstall", "prepare"]) {
    assert.equal(pkg.scripts[hook], undefined, `scripts.${hook} would run on install`);
  }
});

test("npm pack, then install the tarball into an empty project (offline) and call a task", (t) => {
  const dir = tempDir(t, "install");
  const packed = JSON.parse(npm(["pack", "--json", "--pack-destination", dir], root));
  const tarball = join(dir, packed[0].filename);
  assert.ok(existsSync(tarball), `npm pack wrote ${tarball}`);
  const app = join(dir, "app");
  mkdirSync(app);
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "app", version: "1.0.0", private: true, type: "module" }),
  );
  // The package has no dependencies: nothing to fetch, so --offline.
  const install = spawnSync(
    process.platform === "win32" ? "npm.cmd" : "npm",
    ["install", "--offline", "--no-audit", "--no-fund", "--foreground-scripts", tarball],
    { cwd: app, encoding: "utf8", timeout: 120_000, shell: process.platform === "win32" },
  );
  assert.equal(install.status, 0, `npm install: ${install.stderr}`);
  assert.doesNotMatch(install.stderr, /npm (WARN|ERR)/, "installs without warnings");
  writeFileSync(
    join(app, "main.mjs"),
    [
      'import { createPool, task, isMain } from "knitting-native";',
      "export const double = task({ f: (x) => x * 2 });",
      "if (isMain) {",
      "  const pool = createPool({ threads: 1 })({ double });",
      "  console.log(await pool.call.double(21));",
      "  await pool.shutdown();",
      "}",
    ].join("\n"),
  );
  const run = spawnSync(process.execPath, ["main.mjs"], {
    cwd: app,
    encoding: "utf8",
    timeout: 60_000,
    env: childEnv(),
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, "42\n");
  // It ran the installed copy, not this checkout.
  const installed = join(app, "node_modules", "knitting-native");
  assert.ok(existsSync(join(installed, binaryName)));

  // What the loader tells a user whose platform has no binary: `npm run
  // build` in the installed copy. It builds from the shipped sources (this
  // checkout's target/ as the cache, so only this crate compiles).
  rmSync(join(installed, binaryName));
  const build = spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "build"], {
    cwd: installed,
    encoding: "utf8",
    timeout: 600_000,
    shell: process.platform === "win32",
    env: { ...process.env, CARGO_TARGET_DIR: join(root, "target"), CARGO_NET_OFFLINE: "true" },
  });
  assert.equal(build.status, 0, `npm run build in the installed copy: ${build.stderr}`);
  assert.ok(existsSync(join(installed, binaryName)), "the build wrote the binary where the loader looks");
  const rerun = spawnSync(process.execPath, ["main.mjs"], {
    cwd: app,
    encoding: "utf8",
    timeout: 60_000,
    env: childEnv(),
  });
  assert.equal(rerun.status, 0, rerun.stderr);
  assert.equal(rerun.stdout, "42\n");
});

test("npm/<triple>/: one package per platform, consistent with lib/platform.js and the root", () => {
  const dirs = readdirSync(join(root, "npm")).sort();
  assert.deepEqual(dirs, Object.keys(TARGETS).sort());
  assert.deepEqual(dirs, [
    "darwin-arm64",
    "darwin-x64",
    "linux-arm64-gnu",
    "linux-x64-gnu",
    "linux-x64-musl",
    "win32-x64-msvc",
  ]);
  for (const [t, want] of Object.entries(TARGETS)) {
    const p = JSON.parse(readFileSync(join(root, "npm", t, "package.json"), "utf8"));
    const file = `knitting-native.${t}.node`;
    assert.equal(p.name, `knitting-native-${t}`);
    assert.equal(p.version, pkg.version, `${t}: same version as the root`);
    assert.deepEqual(p.os, [want.os]);
    assert.deepEqual(p.cpu, [want.cpu]);
    assert.deepEqual(p.libc, want.libc ? [want.libc] : undefined, `${t}: libc`);
    assert.equal(p.main, file);
    assert.deepEqual(p.files, [file]);
    assert.deepEqual(p.engines, pkg.engines);
    assert.equal(p.license, pkg.license);
    assert.ok(readFileSync(join(root, "npm", t, "README.md"), "utf8").includes(`knitting-native-${t}`));
  }
  assert.ok(TARGETS[triple], `this platform (${triple}) has a package`);
  // lib/platform.js is the one list of platforms: package.json restates none.
  assert.equal(pkg.napi, undefined, "package.json has no napi.targets of its own");
});

test("scripts/prepublish.mjs: copies the binary, writes optionalDependencies; the platform package packs", (t) => {
  const dir = tempDir(t, "publish");
  cpSync(join(root, "package.json"), join(dir, "package.json"));
  cpSync(join(root, "LICENSE"), join(dir, "LICENSE"));
  cpSync(join(root, "npm"), join(dir, "npm"), { recursive: true });
  cpSync(join(root, binaryName), join(dir, binaryName));
  const script = join(root, "scripts", "prepublish.mjs");
  const run = (...args) =>
    spawnSync(process.execPath, [script, "--root", dir, ...args], { encoding: "utf8", timeout: 30_000 });

  // Every platform by default: the others have no binary here, so it stops before writing anything.
  const all = run();
  assert.equal(all.status, 1);
  assert.match(all.stderr, /prepublish: no binary for [a-z0-9-]+ \(knitting-native\.[a-z0-9-]+\.node\)/);
  assert.equal(readFileSync(join(dir, "package.json"), "utf8"), readFileSync(join(root, "package.json"), "utf8"));

  const dry = run("--only", triple, "--dry-run");
  assert.equal(dry.status, 0, dry.stderr);
  assert.match(dry.stdout, /\[dry run\] package\.json: optionalDependencies/);
  assert.equal(existsSync(join(dir, "npm", triple, binaryName)), false, "--dry-run writes nothing");

  const real = run("--only", triple);
  assert.equal(real.status, 0, real.stderr);
  const written = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  assert.deepEqual(written.optionalDependencies, { [`knitting-native-${triple}`]: pkg.version });
  assert.deepEqual(readFileSync(join(dir, "npm", triple, binaryName)), readFileSync(join(root, binaryName)));
  assert.deepEqual(packedFiles(join(dir, "npm", triple)), ["LICENSE", "README.md", binaryName, "package.json"].sort());
});

test("KNITTING_NATIVE_BINARY loads the file it names", () => {
  const child = loadIn(root, childEnv({ KNITTING_NATIVE_BINARY: join(root, binaryName) }));
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout, "function\n");
});

test("KNITTING_NATIVE_BINARY naming a missing file: an exact, actionable error, no fallback", () => {
  const missing = join(tmpdir(), "knitting-native-no-such-dir", "nope.node");
  const child = loadIn(root, childEnv({ KNITTING_NATIVE_BINARY: missing }));
  assert.notEqual(child.status, 0);
  const err = child.stderr;
  assert.ok(
    err.includes(
      `knitting-native: could not load the native addon for ${triple} (Node.js ${process.version}, ` +
        `N-API ${process.versions.napi}).`,
    ),
    err,
  );
  assert.ok(err.includes(`Tried:\n  1. ${missing} (KNITTING_NATIVE_BINARY): file not found\nTo fix it:`), err);
  assert.ok(!err.includes("(local build)"), "an explicit binary does not fall back to the local build");
  assert.match(err, /Point KNITTING_NATIVE_BINARY at an existing knitting-native \.node file, or unset it/);
  assert.ok(
    err.includes(
      `install Rust from https://rustup.rs, then run \`npm run build\` in ${resolve(root)} (it ` +
        `writes ${binaryName} there).`,
    ),
    err,
  );
});

test("no local build and no platform package: lists both and how to build from source", (t) => {
  const dir = tempDir(t, "nobinary");
  for (const f of ["package.json", "index.js", "index.mjs"]) cpSync(join(root, f), join(dir, f));
  cpSync(join(root, "lib"), join(dir, "lib"), { recursive: true });

  // A copy without the Rust sources (copied or bundled out of the package).
  let child = loadIn(dir, childEnv());
  assert.notEqual(child.status, 0);
  let err = child.stderr;
  assert.ok(
    err.includes(
      `Tried:\n  1. ${join(dir, binaryName)} (local build): file not found\n` +
        `  2. knitting-native-${triple} (prebuilt package): not installed\nTo fix it:\n`,
    ),
    err,
  );
  assert.ok(err.includes(`or run \`npm install knitting-native-${triple}\``), err);
  assert.ok(err.includes("not --omit=optional / --no-optional"), err);
  assert.ok(
    err.includes(
      "install Rust from https://rustup.rs, then run `npm run build` in a checkout of the knitting-native source",
    ),
    err,
  );
  assert.ok(
    err.includes(`copy the ${binaryName} it writes into ${dir}, or set KNITTING_NATIVE_BINARY to its path.`),
    err,
  );

  // A source checkout (Cargo.toml present) and a local binary that does not load.
  writeFileSync(join(dir, "Cargo.toml"), "");
  writeFileSync(join(dir, binaryName), "not a shared library");
  child = loadIn(dir, childEnv());
  assert.notEqual(child.status, 0);
  err = child.stderr;
  assert.match(err, new RegExp(`1\\. .*${binaryName.replaceAll(".", "\\.")} \\(local build\\): (?!file not found)\\S`));
  assert.ok(err.includes(`2. knitting-native-${triple} (prebuilt package): not installed`), err);
  assert.ok(
    err.includes(
      `install Rust from https://rustup.rs, then run \`npm run build\` in ${dir} (it writes ${binaryName} there).`,
    ),
    err,
  );
});
