// Prepares the per-platform packages for publishing, as napi-rs packages ship
// them: copies each built binary into npm/<triple>/, keeps every
// npm/<triple>/package.json at the root's version, and keeps the root's
// optionalDependencies on the platform packages (all of them, at that
// version) and their entries in package-lock.json in step.
//
// A binary is copied only if it is a release build of these sources: its
// manifest (`<binary>.json`, written by scripts/build-release.mjs, or by
// `node scripts/build.mjs --publish` on macOS and Windows) matches its bytes
// and the current Rust sources, a Linux binary is stripped, and a glibc one
// needs nothing newer than glibc 2.17 (scripts/check-glibc.mjs).
//
// The lock entries carry no `resolved` until the platform packages are on the
// registry: `npm ci` then skips them (optional, not found) instead of failing
// on a lock file that lacks them; `npm install` fills them in once published.
//
//   node scripts/prepublish.mjs [options]
//     --artifacts <dir>   take knitting-native.<triple>.node files (and their
//                         .json manifests) from <dir>, searched recursively
//                         (CI artifact downloads); default:
//                         target/release-binaries (npm run build:release)
//     --only <t1,t2,...>  only these triples' binaries (default: every triple
//                         in lib/native/platform.js, and each needs its binary)
//     --binary <file>     with --only <one triple>: that binary
//     --sync              copy no binary: only versions, optionalDependencies
//                         and the lock (after `npm version`)
//     --unchecked         copy binaries without the release checks (to try the
//                         layout with a development build; never to publish)
//     --root <dir>        the package root to work on (default: this repo)
//     --dry-run           say what would be done, write nothing
//
// Then: `npm publish ./npm/<triple>` for each platform, then `npm publish`.
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import platform from "../lib/native/platform.js";
import { checkBinary } from "./check-glibc.mjs";
import { fileHash, sourcesHash } from "./release-manifest.mjs";

const { TARGETS } = platform;

const { values: opts } = parseArgs({
  options: {
    artifacts: { type: "string" },
    only: { type: "string" },
    binary: { type: "string" },
    root: { type: "string" },
    sync: { type: "boolean", default: false },
    unchecked: { type: "boolean", default: false },
    "dry-run": { type: "boolean", default: false },
  },
});

const root = resolve(opts.root ?? join(dirname(fileURLToPath(import.meta.url)), ".."));
const dry = opts["dry-run"];
const log = (msg) => console.log(`${dry ? "[dry run] " : ""}${msg}`);

function fail(msg) {
  console.error(`prepublish: ${msg}`);
  process.exit(1);
}

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));
function writeJson(file, value) {
  if (!dry) writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

const rootPkgFile = join(root, "package.json");
const rootPkg = readJson(rootPkgFile);
const { version } = rootPkg;

const triples = opts.only
  ? opts.only
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean)
  : Object.keys(TARGETS);
for (const t of triples) {
  if (!TARGETS[t]) fail(`unknown triple ${t} (known: ${Object.keys(TARGETS).join(", ")})`);
}
if (opts.binary && triples.length !== 1) fail("--binary needs --only with exactly one triple");

function findIn(dir, name) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isFile() && entry.name === name) return path;
    if (entry.isDirectory()) {
      const found = findIn(path, name);
      if (found) return found;
    }
  }
  return null;
}

function binaryFor(triple) {
  const name = `knitting-native.${triple}.node`;
  if (opts.binary) return resolve(opts.binary);
  const dir = resolve(opts.artifacts ?? join(root, "target", "release-binaries"));
  return existsSync(dir) ? findIn(dir, name) : null;
}

/** Why `binary` is not a release build of these sources for `triple` ([] when it is). */
function releaseProblems(triple, binary) {
  const problems = [];
  const manifestFile = `${binary}.json`;
  if (!existsSync(manifestFile)) {
    problems.push(`no manifest ${manifestFile}: not a release build (npm run build:release writes one)`);
  } else {
    const manifest = readJson(manifestFile);
    if (manifest.triple !== triple) problems.push(`its manifest is for ${manifest.triple}`);
    if (manifest.sha256 !== fileHash(binary)) problems.push("its bytes differ from those its manifest records");
    if (manifest.sources !== sourcesHash(root)) {
      problems.push("it was built from other Rust sources than these (stale): build it again");
    }
    if (manifest.stripped !== true) problems.push("its manifest does not say it is stripped");
  }
  const want = TARGETS[triple];
  if (want.os === "linux") {
    try {
      problems.push(...checkBinary(binary, { stripped: true, glibc: want.libc === "glibc" }));
    } catch (err) {
      problems.push(err.message);
    }
  }
  return problems;
}

// 1. Every platform package is consistent with lib/native/platform.js and at the root's version.
const plan = [];
for (const triple of triples) {
  const dir = join(root, "npm", triple);
  const pkgFile = join(dir, "package.json");
  if (!existsSync(pkgFile)) fail(`${relative(root, pkgFile)} is missing`);
  const pkg = readJson(pkgFile);
  const want = TARGETS[triple];
  const file = `knitting-native.${triple}.node`;
  const problems = [];
  if (pkg.name !== `knitting-native-${triple}`) problems.push(`name is ${pkg.name}`);
  if (JSON.stringify(pkg.os) !== JSON.stringify([want.os])) problems.push(`os is ${JSON.stringify(pkg.os)}`);
  if (JSON.stringify(pkg.cpu) !== JSON.stringify([want.cpu])) problems.push(`cpu is ${JSON.stringify(pkg.cpu)}`);
  if (JSON.stringify(pkg.libc) !== JSON.stringify(want.libc ? [want.libc] : undefined)) {
    problems.push(`libc is ${JSON.stringify(pkg.libc)}`);
  }
  if (pkg.main !== file) problems.push(`main is ${pkg.main}`);
  if (JSON.stringify(pkg.files) !== JSON.stringify([file])) problems.push(`files is ${JSON.stringify(pkg.files)}`);
  for (const key of ["homepage", "bugs", "license", "engines"]) {
    if (JSON.stringify(pkg[key]) !== JSON.stringify(rootPkg[key])) problems.push(`${key} differs from the root's`);
  }
  const repo = { ...rootPkg.repository, directory: `npm/${triple}` };
  if (JSON.stringify(pkg.repository) !== JSON.stringify(repo))
    problems.push(`repository is not ${JSON.stringify(repo)}`);
  if (problems.length) fail(`${relative(root, pkgFile)}: ${problems.join("; ")}`);
  if (opts.sync) {
    plan.push({ triple, dir, pkg, pkgFile, file, binary: null });
    continue;
  }

  const binary = binaryFor(triple);
  if (!binary || !existsSync(binary)) {
    fail(
      `no binary for ${triple} (${file}): build it with \`npm run build:release\` (Linux) or ` +
        `\`node scripts/build.mjs --publish\` on that platform (Rust target ${want.rust}) and pass ` +
        `--artifacts <dir>, or limit the run with --only`,
    );
  }
  const why = opts.unchecked ? [] : releaseProblems(triple, binary);
  if (why.length) fail(`${binary} is not fit to publish as ${triple}:\n  ${why.join("\n  ")}`);
  plan.push({ triple, dir, pkg, pkgFile, file, binary });
}

// 2. Copy binaries (and the license) and sync versions.
const license = join(root, "LICENSE");
for (const { triple, dir, pkg, pkgFile, file, binary } of plan) {
  if (binary) {
    log(`${relative(root, binary) || binary} -> ${relative(root, join(dir, file))}`);
    if (!dry) copyFileSync(binary, join(dir, file));
    if (existsSync(license) && !dry) copyFileSync(license, join(dir, "LICENSE"));
  }
  if (pkg.version !== version) {
    log(`npm/${triple}/package.json: version ${pkg.version} -> ${version}`);
    writeJson(pkgFile, { ...pkg, version });
  }
}

// 3. The root's optionalDependencies: every platform package, at the root's
// version (also when --only copied some binaries only), and their lock entries.
// Sorted by name, as npm writes dependency maps (else each `npm install` would reorder them).
const optionalDependencies = {};
for (const triple of Object.keys(TARGETS).sort()) optionalDependencies[`knitting-native-${triple}`] = version;
if (JSON.stringify(rootPkg.optionalDependencies) !== JSON.stringify(optionalDependencies)) {
  log(`package.json: optionalDependencies ${JSON.stringify(optionalDependencies)}`);
  writeJson(rootPkgFile, { ...rootPkg, optionalDependencies });
}

const lockFile = join(root, "package-lock.json");
if (existsSync(lockFile)) {
  const lock = readJson(lockFile);
  let changed = false;
  if (lock.packages?.[""]) {
    if (JSON.stringify(lock.packages[""].optionalDependencies) !== JSON.stringify(optionalDependencies)) {
      lock.packages[""].optionalDependencies = optionalDependencies;
      changed = true;
    }
    for (const [triple, want] of Object.entries(TARGETS)) {
      const key = `node_modules/knitting-native-${triple}`;
      if (lock.packages[key]?.version === version) continue;
      lock.packages[key] = {
        version,
        optional: true,
        os: [want.os],
        cpu: [want.cpu],
        ...(want.libc ? { libc: [want.libc] } : {}),
      };
      changed = true;
    }
  }
  if (changed) {
    log(`package-lock.json: entries for the platform packages at ${version}`);
    writeJson(lockFile, lock);
  }
}

const publish = plan.filter((p) => p.binary).map(({ triple }) => `npm publish ./npm/${triple}`);
if (publish.length) log(`next: ${[...publish, "npm publish"].join(" && ")}`);
