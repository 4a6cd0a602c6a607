// Checks a Linux release binary before it is published: no dynamic symbol
// needs a glibc newer than the floor, none is imported without a version
// (see unversionedImports) (2.17, the napi-rs floor: RHEL 7, Debian
// 8, Ubuntu 14.04 and everything since), and, with --stripped, no symbol
// table left in the file. Reads `objdump -T` (binutils), which reads ELF files
// of every architecture (an aarch64 binary on an x86-64 host), and the ELF
// section headers.
//
//   node scripts/check-glibc.mjs [--max 2.17] [--stripped] <file.node>...
//
// Exits 1 naming each symbol over the floor; 0 with one line per file.
import { execFileSync } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

export const GLIBC_FLOOR = "2.17";

function compareVersions(a, b) {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Each `GLIBC_x.y[.z]` version named in `objdump -T` output, with the symbols that need it. */
export function glibcNeeds(objdumpT) {
  const needs = new Map();
  for (const line of objdumpT.split("\n")) {
    const m = /\(?GLIBC_(\d+(?:\.\d+)+)\)?\s+(\S+)\s*$/.exec(line);
    if (!m) continue;
    const [, version, symbol] = m;
    if (!needs.has(version)) needs.set(version, []);
    needs.get(version).push(symbol);
  }
  return needs;
}

/** The symbols that need a glibc newer than `max`, as "symbol (GLIBC_x.y)", sorted by version. */
export function overFloor(objdumpT, max = GLIBC_FLOOR) {
  const out = [];
  const needs = [...glibcNeeds(objdumpT)].sort(([a], [b]) => compareVersions(a, b));
  for (const [version, symbols] of needs) {
    if (compareVersions(version, max) > 0) for (const s of symbols) out.push(`${s} (GLIBC_${version})`);
  }
  return out;
}

/** The newest glibc version any symbol needs, or null. */
export function newestGlibc(objdumpT) {
  const versions = [...glibcNeeds(objdumpT).keys()].sort(compareVersions);
  return versions.at(-1) ?? null;
}

/**
 * Strong undefined symbols with no version that the runtime does not provide
 * (Node-API's `napi_*` and libuv's `uv_*` come from the executable that loads
 * the addon). Against a glibc 2.17 sysroot, a libc function that glibc
 * 2.17 lacks links as such a symbol (`memfd_create`, `getrandom`), and a
 * BIND_NOW library then fails to load on an older glibc: the version check
 * alone would pass it. Weak ones (std looks up `gettid`, `statx` at run time)
 * are fine.
 */
export function unversionedImports(objdumpT) {
  const out = [];
  for (const line of objdumpT.split("\n")) {
    const at = line.indexOf("*UND*");
    if (at < 0) continue;
    const weak = /\sw\s/.test(line.slice(0, at));
    const rest = line
      .slice(at + 5)
      .trim()
      .split(/\s+/);
    if (rest.length !== 2 || weak) continue; // [size, version, name] has a version
    const name = rest[1];
    if (!/^(napi_|node_api_|uv_)/.test(name)) out.push(name);
  }
  return out.sort();
}

/**
 * Whether an ELF file has a symbol table section (SHT_SYMTAB): an unstripped
 * file. Read from the section headers (objdump -h leaves non-loaded sections
 * out). ELF64 little-endian only: every Linux target built here.
 */
export function hasSymbolTable(bytes) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 64 || b.readUInt32BE(0) !== 0x7f454c46) throw new Error("not an ELF file");
  if (b[4] !== 2 || b[5] !== 1) throw new Error("not a 64-bit little-endian ELF file");
  const shoff = Number(b.readBigUInt64LE(0x28));
  const shentsize = b.readUInt16LE(0x3a);
  const shnum = b.readUInt16LE(0x3c);
  for (let i = 0; i < shnum; i++) {
    const at = shoff + i * shentsize;
    if (at + 8 > b.length) throw new Error("section headers past the end of the file");
    if (b.readUInt32LE(at + 4) === 2) return true; // SHT_SYMTAB
  }
  return false;
}

function objdump(flag, file) {
  try {
    return execFileSync("objdump", [flag, file], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    if (err.code === "ENOENT") throw new Error("objdump is not installed (Debian: apt-get install binutils)");
    throw new Error(`objdump ${flag} ${file} failed: ${String(err.stderr || err.message).trim()}`);
  }
}

/** Problems with one file: [] when it passes. */
export function checkBinary(file, { max = GLIBC_FLOOR, stripped = false, glibc = true } = {}) {
  const problems = [];
  if (glibc) {
    const dynamic = objdump("-T", file);
    problems.push(...overFloor(dynamic, max).map((s) => `needs a glibc newer than ${max}: ${s}`));
    for (const name of unversionedImports(dynamic)) {
      problems.push(`imports ${name} with no version: a libc function glibc ${max} lacks (use the system call)`);
    }
  }
  if (stripped && hasSymbolTable(readFileSync(file))) problems.push("not stripped (it has a .symtab section)");
  return problems;
}

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { max: { type: "string", default: GLIBC_FLOOR }, stripped: { type: "boolean", default: false } },
  });
  if (!positionals.length) {
    console.error("usage: node scripts/check-glibc.mjs [--max 2.17] [--stripped] <file.node>...");
    process.exit(2);
  }
  if (!/^\d+(\.\d+)+$/.test(values.max)) {
    console.error(`check-glibc: --max must be a version such as 2.17, not ${values.max}`);
    process.exit(2);
  }
  let failed = false;
  for (const file of positionals) {
    let problems;
    try {
      problems = checkBinary(file, { max: values.max, stripped: values.stripped });
    } catch (err) {
      problems = [err.message];
    }
    if (problems.length) {
      failed = true;
      console.error(`check-glibc: ${file}:\n${problems.map((p) => `  ${p}`).join("\n")}`);
    } else {
      const newest = newestGlibc(objdump("-T", file));
      const strip = values.stripped ? ", stripped" : "";
      console.log(`check-glibc: ${file}: ok (newest glibc needed: ${newest ?? "none"}; floor ${values.max}${strip})`);
    }
  }
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) main();
