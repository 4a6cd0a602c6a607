// Installs the package as a user gets it and runs it there: `npm pack` of
// this package and of its platform package (npm/<triple>/ with a binary), both
// installed into a fresh project in a temporary directory, offline (the two
// tarballs are all it needs), with no Rust toolchain on PATH. Then the quick
// start as ESM (examples/quick-start.mjs) and as CommonJS
// (examples/quick-start.cjs), and `tsc --noEmit --strict` on a TypeScript
// consumer (ESM and CommonJS flavours, without @types/node: only the lib
// index.d.ts documents, esnext.disposable).
//
//   node scripts/consumer-check.mjs [--binary <file.node>] [--keep]
//     --binary  the binary for this platform's package (default: the one in
//               npm/<triple>/ if prepared, else target/release-binaries/, else
//               the development build in the package root)
//     --keep    leave the temporary directory (its path is printed)
//
// Exits 1 at the first step that fails, saying which.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import platform from "../lib/native/platform.js";

const { platformTriple } = platform;
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: opts } = parseArgs({ options: { binary: { type: "string" }, keep: { type: "boolean" } } });

const triple = platformTriple();
const file = `knitting-native.${triple}.node`;
const win = process.platform === "win32";

function fail(msg) {
  console.error(`consumer-check: FAILED: ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}

function pickBinary() {
  if (opts.binary) return resolve(opts.binary);
  for (const candidate of [
    join(root, "npm", triple, file),
    join(root, "target", "release-binaries", file),
    join(root, file),
  ]) {
    if (existsSync(candidate)) return candidate;
  }
  return fail(`no ${file}: run \`npm run build\` (or build:release), or pass --binary`);
}

/** PATH without any directory that holds cargo, rustc or rustup: the user has no Rust. */
function pathWithoutRust(path) {
  const exe = (name) => (win ? [`${name}.exe`, `${name}.cmd`] : [name]);
  const rust = ["cargo", "rustc", "rustup"].flatMap(exe);
  const keep = [];
  const dropped = [];
  for (const dir of (path ?? "").split(delimiter).filter(Boolean)) {
    (rust.some((f) => existsSync(join(dir, f))) ? dropped : keep).push(dir);
  }
  return { path: keep.join(delimiter), dropped };
}

function run(label, cmd, args, { cwd, env, expect } = {}) {
  const child = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout: 300_000, shell: win && cmd === "npm" });
  if (child.error) fail(`${label}: ${child.error.message}`);
  if (child.status !== 0) {
    fail(`${label} exited with ${child.status ?? child.signal}:\n${child.stdout}\n${child.stderr}`);
  }
  if (expect !== undefined && child.stdout !== expect) {
    fail(`${label} printed ${JSON.stringify(child.stdout)}, not ${JSON.stringify(expect)}`);
  }
  console.log(`consumer-check: ${label}: ok`);
  return child.stdout;
}

const dir = mkdtempSync(join(tmpdir(), "knitting-native-consumer-"));
try {
  const binary = pickBinary();
  console.log(`consumer-check: ${triple}, binary ${binary}`);
  const { path, dropped } = pathWithoutRust(process.env.PATH);
  const env = { ...process.env, PATH: path, npm_config_update_notifier: "false" };
  for (const key of ["KNITTING_NATIVE_BINARY", "KNITTING_DEBUG", "CARGO_HOME", "RUSTUP_HOME", "CARGO_TARGET_DIR"]) {
    delete env[key];
  }
  // Every npm_* variable an `npm run` parent set would point the child npm at this checkout.
  for (const key of Object.keys(env))
    if (key.startsWith("npm_") && key !== "npm_config_update_notifier") delete env[key];
  if (dropped.length) console.log(`consumer-check: PATH without ${dropped.join(", ")} (they hold Rust)`);
  const cargo = spawnSync("cargo", ["--version"], { env, encoding: "utf8", shell: win });
  if (!cargo.error && cargo.status === 0) fail("cargo is still reachable on the stripped PATH");
  const node = spawnSync("node", ["--version"], { env, encoding: "utf8", shell: win });
  if (node.error || node.status !== 0) fail("node is not on PATH once the Rust directories are left out");

  // The two tarballs a registry install would fetch.
  const [rootPack] = JSON.parse(
    run("npm pack (knitting-native)", "npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], {
      cwd: root,
      env,
    }),
  );
  const shipped = rootPack.files.map((f) => f.path);
  const wrong = shipped.filter((f) => f.endsWith(".node") || f === "src/model.rs" || /^(__test__|bench)\//.test(f));
  if (wrong.length) fail(`the tarball holds ${wrong.join(", ")}`);
  const platformDir = join(dir, `platform-${triple}`);
  mkdirSync(platformDir);
  for (const f of ["package.json", "README.md"]) cpSync(join(root, "npm", triple, f), join(platformDir, f));
  cpSync(join(root, "LICENSE"), join(platformDir, "LICENSE"));
  cpSync(binary, join(platformDir, file));
  const [platformPack] = JSON.parse(
    run(`npm pack (knitting-native-${triple})`, "npm", ["pack", "--json", "--pack-destination", dir], {
      cwd: platformDir,
      env,
    }),
  );

  const app = join(dir, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), `${JSON.stringify({ name: "app", version: "1.0.0", private: true })}\n`);
  // Both tarballs: the platform one stands for the optional dependency the registry would give.
  run(
    "npm install (offline, both tarballs)",
    "npm",
    ["install", "--offline", "--no-audit", "--no-fund", join(dir, rootPack.filename), join(dir, platformPack.filename)],
    { cwd: app, env },
  );
  const installed = join(app, "node_modules", "knitting-native");
  const nodes = readdirSync(installed).filter((f) => f.endsWith(".node"));
  if (nodes.length)
    fail(`the installed package holds ${nodes.join(", ")}: the binary must come from the platform package`);

  const expect = "add([1, 2]) = 3\nsquare(7)   = 49\n10,000 calls, last = 19998\n";
  cpSync(join(root, "examples", "quick-start.mjs"), join(app, "quick-start.mjs"));
  cpSync(join(root, "examples", "quick-start.cjs"), join(app, "quick-start.cjs"));
  run("quick start, ESM", "node", ["quick-start.mjs"], { cwd: app, env, expect });
  run("quick start, CommonJS", "node", ["quick-start.cjs"], { cwd: app, env, expect });

  writeFileSync(
    join(app, "main.mts"),
    [
      'import { createPool, task, isMain, transfer } from "knitting-native";',
      "",
      "export const add = task({ f: ([a, b]: [number, number]) => a + b });",
      "export const bytes = task({ f: (n: number) => transfer(new Uint8Array(n)) });",
      "",
      "if (isMain) {",
      "  const pool = createPool({ threads: 2, maxQueue: 'auto' })({ add, bytes });",
      "  const sum: number = await pool.call.add([1, 2]);",
      "  const buf: Uint8Array = await pool.call.bytes(16);",
      "  const total: number = sum + buf.byteLength;",
      "  if (total !== 19) throw new Error(String(total));",
      "  await pool.shutdown();",
      "}",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(app, "main.cts"),
    [
      'import knitting = require("knitting-native");',
      "",
      "export const upper = knitting.task({ f: (s: string) => s.toUpperCase() });",
      "",
      "if (knitting.isMain) {",
      "  const pool = knitting.createPool({ threads: 1 })({ upper });",
      '  pool.call.upper("abc").then((s: string) => s.length, (err: unknown) => err);',
      "}",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(app, "tsconfig.json"),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: "es2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          // What index.d.ts asks for without @types/node: Symbol.dispose's lib.
          lib: ["es2022", "esnext.disposable"],
          types: [],
          skipLibCheck: false,
        },
        files: ["main.mts", "main.cts"],
      },
      null,
      2,
    )}\n`,
  );
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  if (!existsSync(tsc)) fail("typescript is missing: run `npm install` in the package root");
  const version = JSON.parse(readFileSync(join(root, "node_modules", "typescript", "package.json"), "utf8")).version;
  run(`tsc ${version} --noEmit --strict`, process.execPath, [tsc, "-p", "tsconfig.json", "--noEmit", "--strict"], {
    cwd: app,
    env,
  });
  console.log("consumer-check: ok");
} catch (err) {
  if (!process.exitCode) {
    console.error(`consumer-check: FAILED: ${err.stack}`);
    process.exitCode = 1;
  }
} finally {
  if (opts.keep) console.log(`consumer-check: left ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
