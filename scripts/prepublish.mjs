// Prepares the per-platform packages for publishing, as napi-rs packages ship
// them: copies each built binary into npm/<triple>/, keeps every
// npm/<triple>/package.json at the root's version, and writes the root's
// optionalDependencies on the platform packages at that version.
//
// Run it in the publish job only: it edits package.json, and the committed
// package.json must not name packages that are not on the registry yet
// (`npm ci` would fail).
//
//   node scripts/prepublish.mjs [options]
//     --artifacts <dir>   take knitting-native.<triple>.node files from <dir>
//                         (searched recursively; CI artifact downloads);
//                         without it, from the package root (npm run build)
//     --only <t1,t2,...>  only these triples (default: every triple in
//                         lib/platform.js, and each needs its binary)
//     --binary <file>     with --only <one triple>: that binary
//     --root <dir>        the package root to work on (default: this repo)
//     --dry-run           say what would be done, write nothing
//
// Then: `npm publish ./npm/<triple>` for each platform, then `npm publish`.
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import platform from "../lib/platform.js";

const { TARGETS } = platform;

const { values: opts } = parseArgs({
  options: {
    artifacts: { type: "string" },
    only: { type: "string" },
    binary: { type: "string" },
    root: { type: "string" },
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
  if (opts.artifacts) return findIn(resolve(opts.artifacts), name);
  const local = join(root, name);
  return existsSync(local) ? local : null;
}

// 1. Every platform package is consistent with lib/platform.js and at the root's version.
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
  if (problems.length) fail(`${relative(root, pkgFile)}: ${problems.join("; ")}`);

  const binary = binaryFor(triple);
  if (!binary || !existsSync(binary)) {
    fail(
      `no binary for ${triple} (${file}): build it on that platform with \`npm run build\` ` +
        `(Rust target ${want.rust}) and pass --artifacts <dir>, or limit the run with --only`,
    );
  }
  plan.push({ triple, dir, pkg, pkgFile, file, binary });
}

// 2. Copy binaries (and the license) and sync versions.
const license = join(root, "LICENSE");
for (const { triple, dir, pkg, pkgFile, file, binary } of plan) {
  log(`${relative(root, binary) || binary} -> ${relative(root, join(dir, file))}`);
  if (!dry) copyFileSync(binary, join(dir, file));
  if (existsSync(license) && !dry) copyFileSync(license, join(dir, "LICENSE"));
  if (pkg.version !== version) {
    log(`npm/${triple}/package.json: version ${pkg.version} -> ${version}`);
    writeJson(pkgFile, { ...pkg, version });
  }
}

// 3. The root's optionalDependencies on the platform packages, same version.
const optionalDependencies = {};
for (const { triple } of plan) optionalDependencies[`knitting-native-${triple}`] = version;
log(`package.json: optionalDependencies ${JSON.stringify(optionalDependencies)}`);
writeJson(rootPkgFile, { ...rootPkg, optionalDependencies });

log("next: " + plan.map(({ triple }) => `npm publish ./npm/${triple}`).join(" && ") + " && npm publish");
