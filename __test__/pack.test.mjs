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
const { platformTriple, TARGETS } = require("../lib/native/platform.js");

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

test("npm pack: exactly the runtime files, the license and the Rust sources; no binary, no test-only Rust", () => {
  const files = packedFiles(root);
  const libFiles = readdirSync(join(root, "lib"), { recursive: true }) // lib/codec/ too
    .filter((f) => f.endsWith(".js"))
    .map((f) => `lib/${f}`);
  // The Rust sources and their build script ship too: where no binary fits,
  // `npm run build` in the installed copy builds one (the loader says so).
  // The modules compiled only under cfg(test) stay out.
  const testOnly = ["src/model.rs", "src/process/cross_process_tests.rs"];
  for (const f of testOnly) assert.ok(existsSync(join(root, f)), `${f} exists (else this list is stale)`);
  const srcFiles = readdirSync(join(root, "src"), { recursive: true })
    .filter((f) => f.endsWith(".rs"))
    .map((f) => `src/${f.replaceAll("\\", "/")}`)
    .filter((f) => !testOnly.includes(f));
  const sources = ["Cargo.toml", "Cargo.lock", "build.rs", "scripts/build.mjs", ...srcFiles];
  const entry = ["index.js", "index.mjs", "index.d.ts"];
  const runtime = ["package.json", "README.md", "LICENSE", ...entry, ...libFiles];
  assert.deepEqual(files, [...runtime, ...sources].sort());
  const notShipped = [/^__test__\//, /^target\//, /^bench\//, /^npm\//, /^examples\//, /^docs\//, /^\.ci\//];
  for (const banned of [...notShipped, /^node_modules\//, /\.node$/, /\.node\.json$/]) {
    assert.equal(files.filter((f) => banned.test(f)).length, 0, `${banned} in the tarball`);
  }
  // Each cfg(test) module is declared as one (so the shipped crate builds without it).
  assert.match(readFileSync(join(root, "src", "lib.rs"), "utf8"), /#\[cfg\(test\)\]\s*mod model;/);
  assert.match(
    readFileSync(join(root, "src", "process", "mod.rs"), "utf8"),
    /#\[cfg\(test\)\]\s*mod cross_process_tests;/,
  );
});

test("package.json: exports, types, engines, files, repository; the platform packages as optionalDependencies", () => {
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
  assert.ok(!pkg.files.some((f) => f.endsWith(".node")), "binaries come from the platform packages");
  assert.equal(pkg.license, "MIT");
  assert.ok(readFileSync(join(root, "LICENSE"), "utf8").startsWith("MIT License"));
  assert.equal(pkg.os, undefined);
  assert.equal(pkg.cpu, undefined);
  // Every platform package, at this version: what a registry install fetches.
  const want = Object.fromEntries(Object.keys(TARGETS).map((t) => [`knitting-native-${t}`, pkg.version]));
  assert.deepEqual(pkg.optionalDependencies, want);
  assert.equal(pkg.dependencies, undefined);
  // `npm ci` needs the lock to list them too (scripts/prepublish.mjs --sync writes them).
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
  assert.deepEqual(lock.packages[""].optionalDependencies, want, "package-lock.json: run prepublish.mjs --sync");
  for (const [t, target] of Object.entries(TARGETS)) {
    const entry = lock.packages[`node_modules/knitting-native-${t}`];
    assert.ok(entry, `package-lock.json lacks knitting-native-${t}: run node scripts/prepublish.mjs --sync`);
    assert.equal(entry.version, pkg.version);
    assert.equal(entry.optional, true);
    assert.deepEqual(entry.os, [target.os]);
  }
  const repo = "https://github.com/knitting-native/knitting-native";
  assert.deepEqual(pkg.repository, { type: "git", url: `git+${repo}.git` });
  assert.equal(pkg.homepage, `${repo}#readme`);
  assert.deepEqual(pkg.bugs, { url: `${repo}/issues` });
  assert.equal(pkg.publishConfig?.registry, undefined, "no registry URL: the default registry needs none");
  for (const name of ["build", "test", "test:js", "demo", "lint"]) assert.ok(pkg.scripts[name], `scripts.${name}`);
  // An install runs these in the consumer's project, where scripts/ (not in
  // the tarball) is missing: none may exist.
  for (const hook of ["preinstall", "install", "postinstall", "prepare"]) {
    assert.equal(pkg.scripts[hook], undefined, `scripts.${hook} would run on install`);
  }
});

test("the packed tarball in a fresh project with no Rust on PATH: ESM, CommonJS, tsc (consumer-check)", () => {
  const child = spawnSync(
    process.execPath,
    [join(root, "scripts", "consumer-check.mjs"), "--binary", join(root, binaryName)],
    {
      encoding: "utf8",
      timeout: 600_000,
      env: childEnv(),
    },
  );
  assert.equal(child.status, 0, `${child.stdout}\n${child.stderr}`);
  for (const step of [
    "npm install (offline, both tarballs)",
    "quick start, ESM",
    "quick start, CommonJS",
    "--noEmit --strict",
  ]) {
    assert.match(child.stdout, new RegExp(`^consumer-check: .*${step.replace(/[()]/g, "\\$&")}.*: ok$`, "m"), step);
  }
  assert.match(child.stdout, /^consumer-check: ok$/m);
});

test("the tarball without its platform package: the loader says so; `npm run build` there mends it", (t) => {
  const dir = tempDir(t, "install");
  const packed = JSON.parse(npm(["pack", "--json", "--ignore-scripts", "--pack-destination", dir], root));
  const tarball = join(dir, packed[0].filename);
  assert.ok(existsSync(tarball), `npm pack wrote ${tarball}`);
  const app = join(dir, "app");
  mkdirSync(app);
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "app", version: "1.0.0", private: true, type: "module" }),
  );
  // Offline: the optional platform packages are not in the cache (nor on the
  // registry yet), so npm skips them, as it does with --omit=optional.
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
  const installed = join(app, "node_modules", "knitting-native");
  assert.ok(!existsSync(join(installed, binaryName)), "the tarball carries no binary");
  const first = spawnSync(process.execPath, ["main.mjs"], {
    cwd: app,
    encoding: "utf8",
    timeout: 60_000,
    env: childEnv(),
  });
  assert.notEqual(first.status, 0);
  assert.ok(first.stderr.includes(`knitting-native-${triple} (prebuilt package): not installed`), first.stderr);
  assert.ok(first.stderr.includes(`then run \`npm run build\` in ${installed} (it writes`), first.stderr);

  // It builds from the shipped sources (this checkout's target/ as the
  // cache, so only this crate compiles).
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

test("npm/<triple>/: one package per platform, consistent with lib/native/platform.js and the root", () => {
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
    assert.deepEqual(p.repository, { ...pkg.repository, directory: `npm/${t}` });
    assert.equal(p.homepage, pkg.homepage);
    assert.deepEqual(p.bugs, pkg.bugs);
    assert.ok(readFileSync(join(root, "npm", t, "README.md"), "utf8").includes(`knitting-native-${t}`));
  }
  assert.ok(TARGETS[triple], `this platform (${triple}) has a package`);
  // lib/native/platform.js is the one list of platforms: package.json restates none.
  assert.equal(pkg.napi, undefined, "package.json has no napi.targets of its own");
});

function publishRoot(t) {
  const dir = tempDir(t, "publish");
  for (const f of ["package.json", "package-lock.json", "LICENSE", "Cargo.toml", "Cargo.lock", "build.rs"]) {
    cpSync(join(root, f), join(dir, f));
  }
  cpSync(join(root, "npm"), join(dir, "npm"), { recursive: true });
  cpSync(join(root, "src"), join(dir, "src"), { recursive: true });
  cpSync(join(root, binaryName), join(dir, binaryName));
  const script = join(root, "scripts", "prepublish.mjs");
  const run = (...args) =>
    spawnSync(process.execPath, [script, "--root", dir, ...args], { encoding: "utf8", timeout: 60_000 });
  return { dir, run };
}

test("scripts/prepublish.mjs: refuses a binary that is not a release build of these sources", (t) => {
  const { dir, run } = publishRoot(t);
  // Every platform by default: the others have no binary here, so it stops before writing anything.
  const all = run();
  assert.equal(all.status, 1);
  assert.match(all.stderr, /prepublish: no binary for [a-z0-9-]+ \(knitting-native\.[a-z0-9-]+\.node\)/);
  assert.equal(readFileSync(join(dir, "package.json"), "utf8"), readFileSync(join(root, "package.json"), "utf8"));

  // The development build: no manifest, not stripped (and, on Linux, built against this machine's glibc).
  const dev = run("--only", triple, "--binary", join(dir, binaryName));
  assert.equal(dev.status, 1);
  assert.ok(dev.stderr.includes(`is not fit to publish as ${triple}:`), dev.stderr);
  assert.match(dev.stderr, /no manifest .*\.node\.json: not a release build/);
  if (process.platform === "linux") assert.match(dev.stderr, /not stripped \(it has a \.symtab section\)/);
  assert.equal(existsSync(join(dir, "npm", triple, binaryName)), false, "nothing copied");

  // A manifest that no longer matches: other bytes, then other sources.
  writeFileSync(
    join(dir, `${binaryName}.json`),
    JSON.stringify({ triple, sha256: "0".repeat(64), sources: "0".repeat(64), stripped: true }),
  );
  const stale = run("--only", triple, "--binary", join(dir, binaryName));
  assert.equal(stale.status, 1);
  assert.match(stale.stderr, /its bytes differ from those its manifest records/);
  assert.match(stale.stderr, /it was built from other Rust sources than these \(stale\)/);
});

test("prepublish.mjs --unchecked: copies the binary, keeps optionalDependencies; the platform package packs", (t) => {
  const { dir, run } = publishRoot(t);
  const dry = run("--only", triple, "--binary", join(dir, binaryName), "--unchecked", "--dry-run");
  assert.equal(dry.status, 0, dry.stderr);
  assert.match(dry.stdout, /\[dry run\] .* -> npm\/[a-z0-9-]+\/knitting-native\./);
  assert.equal(existsSync(join(dir, "npm", triple, binaryName)), false, "--dry-run writes nothing");

  const real = run("--only", triple, "--binary", join(dir, binaryName), "--unchecked");
  assert.equal(real.status, 0, real.stderr);
  const written = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  // All platforms stay listed, though only one binary was copied.
  assert.deepEqual(written.optionalDependencies, pkg.optionalDependencies);
  assert.deepEqual(readFileSync(join(dir, "npm", triple, binaryName)), readFileSync(join(root, binaryName)));
  assert.deepEqual(packedFiles(join(dir, "npm", triple)), ["LICENSE", "README.md", binaryName, "package.json"].sort());
});

test("prepublish.mjs --sync: a new version reaches the platform packages, optionalDependencies, the lock", (t) => {
  const { dir, run } = publishRoot(t);
  const bumped = { ...JSON.parse(readFileSync(join(dir, "package.json"), "utf8")), version: "9.8.7" };
  writeFileSync(join(dir, "package.json"), JSON.stringify(bumped, null, 2));
  const sync = run("--sync");
  assert.equal(sync.status, 0, sync.stderr);
  const after = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8"));
  for (const [tr, want] of Object.entries(TARGETS)) {
    const name = `knitting-native-${tr}`;
    assert.equal(after.optionalDependencies[name], "9.8.7");
    assert.equal(lock.packages[""].optionalDependencies[name], "9.8.7");
    const entry = lock.packages[`node_modules/${name}`];
    assert.deepEqual(entry, {
      version: "9.8.7",
      optional: true,
      os: [want.os],
      cpu: [want.cpu],
      ...(want.libc ? { libc: [want.libc] } : {}),
    });
    assert.equal(JSON.parse(readFileSync(join(dir, "npm", tr, "package.json"), "utf8")).version, "9.8.7");
  }
  assert.equal(existsSync(join(dir, "npm", triple, binaryName)), false, "--sync copies no binary");
});

const releaseBinary = join(root, "target", "release-binaries", binaryName);
test("scripts/prepublish.mjs accepts the release build (npm run build:release)", {
  skip: existsSync(`${releaseBinary}.json`) ? false : "no release build here: npm run build:release makes one",
}, (t) => {
  const { dir, run } = publishRoot(t);
  const ok = run("--only", triple, "--artifacts", join(root, "target", "release-binaries"), "--dry-run");
  // A manifest older than the sources is refused, as it should be: say so rather than fail the suite.
  if (ok.status !== 0 && /\(stale\)/.test(ok.stderr)) return t.skip("the release build is older than the sources");
  assert.equal(ok.status, 0, ok.stderr);
  assert.ok(ok.stdout.includes(`-> npm/${triple}/${binaryName}`), ok.stdout);
  assert.equal(existsSync(join(dir, "npm", triple, binaryName)), false, "--dry-run copies nothing");
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

// objdump -T lines as binutils prints them (x86-64 and aarch64 alike).
const OBJDUMP_T = [
  "libknitting_native.so:     file format elf64-x86-64",
  "",
  "DYNAMIC SYMBOL TABLE:",
  "0000000000000000      DF *UND*\t0000000000000000 (GLIBC_2.2.5) memcpy",
  "0000000000000000      DF *UND*\t0000000000000000 (GLIBC_2.17) clock_gettime",
  "0000000000000000      DF *UND*\t0000000000000000 (GLIBC_2.34) pthread_create",
  "0000000000000000      DF *UND*\t0000000000000000 (GLIBC_2.18) __cxa_thread_atexit_impl",
  "0000000000000000  w   D  *UND*\t0000000000000000              statx",
  "0000000000000000      D  *UND*\t0000000000000000              memfd_create",
  "0000000000000000      D  *UND*\t0000000000000000              napi_create_object",
  "0000000000012340 g    DF .text\t0000000000000010  Base        napi_register_module_v1",
].join("\n");

test("check-glibc: names each symbol over the floor, and libc functions imported without a version", async () => {
  const { overFloor, newestGlibc, unversionedImports, hasSymbolTable } = await import("../scripts/check-glibc.mjs");
  assert.deepEqual(overFloor(OBJDUMP_T, "2.17"), [
    "__cxa_thread_atexit_impl (GLIBC_2.18)",
    "pthread_create (GLIBC_2.34)",
  ]);
  assert.deepEqual(overFloor(OBJDUMP_T, "2.34"), []);
  assert.equal(newestGlibc(OBJDUMP_T), "2.34");
  // statx is weak (looked up at run time); napi_* comes from the executable.
  assert.deepEqual(unversionedImports(OBJDUMP_T), ["memfd_create"]);
  // An ELF64 header with two section headers: SHT_STRTAB (3), then SHT_SYMTAB (2) or SHT_PROGBITS (1).
  const elf = (second) => {
    const b = Buffer.alloc(64 + 2 * 64);
    b.writeUInt32BE(0x7f454c46, 0);
    b[4] = 2; // ELFCLASS64
    b[5] = 1; // little-endian
    b.writeBigUInt64LE(64n, 0x28);
    b.writeUInt16LE(64, 0x3a);
    b.writeUInt16LE(2, 0x3c);
    b.writeUInt32LE(3, 64 + 4);
    b.writeUInt32LE(second, 128 + 4);
    return b;
  };
  assert.equal(hasSymbolTable(elf(2)), true);
  assert.equal(hasSymbolTable(elf(1)), false);
  assert.throws(
    () => hasSymbolTable(Buffer.from("not an ELF file, just text.................................................")),
    /not an ELF/,
  );
});

test("check-glibc on the development build: it needs this machine's newer glibc, and says which symbols", {
  skip: process.platform !== "linux" || triple !== "linux-x64-gnu" ? "a glibc Linux build only" : false,
}, () => {
  const script = join(root, "scripts", "check-glibc.mjs");
  const dev = spawnSync(process.execPath, [script, "--stripped", join(root, binaryName)], { encoding: "utf8" });
  assert.equal(dev.status, 1, "a plain cargo build on a glibc > 2.17 machine is over the floor");
  assert.match(dev.stderr, /needs a glibc newer than 2\.17: \S+ \(GLIBC_2\.\d+\)/);
  assert.match(dev.stderr, /not stripped/);
  const loose = spawnSync(process.execPath, [script, "--max", "99.0", join(root, binaryName)], { encoding: "utf8" });
  assert.equal(loose.status, 0, loose.stderr);
  assert.match(loose.stdout, /: ok \(newest glibc needed: 2\.\d+; floor 99\.0\)$/m);
});
