"use strict";
// The platform suffix napi-rs uses for binaries and per-platform packages
// (`linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, ...), and the platforms
// that have a prebuilt package (`npm/<triple>/`, published as
// `knitting-native-<triple>`).

const { readFileSync } = require("node:fs");

/** Triples with a per-platform package: npm's `os`/`cpu`/`libc` and the Rust target. */
const TARGETS = {
  "linux-x64-gnu": { os: "linux", cpu: "x64", libc: "glibc", rust: "x86_64-unknown-linux-gnu" },
  "linux-arm64-gnu": { os: "linux", cpu: "arm64", libc: "glibc", rust: "aarch64-unknown-linux-gnu" },
  "linux-x64-musl": { os: "linux", cpu: "x64", libc: "musl", rust: "x86_64-unknown-linux-musl" },
  "darwin-x64": { os: "darwin", cpu: "x64", libc: null, rust: "x86_64-apple-darwin" },
  "darwin-arm64": { os: "darwin", cpu: "arm64", libc: null, rust: "aarch64-apple-darwin" },
  "win32-x64-msvc": { os: "win32", cpu: "x64", libc: null, rust: "x86_64-pc-windows-msvc" },
};

// Which C library this Linux runs on. /usr/bin/ldd names it (a script of the
// GNU C Library, or a link to musl's loader), read in ~0.1 ms; the
// process report knows too but takes 4-7 ms to gather in each worker that
// loads the addon (measured 2026-12-06, Node 20.20.2, 2-vCPU VM,
// node --cpu-prof bench/user/startup.mjs), so it is asked only when ldd
// says nothing.
function isMusl() {
  if (process.platform !== "linux") return false;
  try {
    const ldd = readFileSync("/usr/bin/ldd", "latin1");
    if (ldd.includes("musl")) return true;
    if (ldd.includes("GNU C Library")) return false;
  } catch {
    // No ldd (a minimal container): the report below decides.
  }
  try {
    const report = process.report && process.report.getReport();
    const header = report && (typeof report === "string" ? JSON.parse(report) : report).header;
    return !(header && header.glibcVersionRuntime);
  } catch {
    return false;
  }
}

function platformTriple() {
  const { platform, arch } = process;
  if (platform === "linux") return `linux-${arch}-${isMusl() ? "musl" : "gnu"}`;
  if (platform === "win32") return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

module.exports = { platformTriple, TARGETS };
