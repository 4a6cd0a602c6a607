"use strict";
// The platform suffix napi-rs uses for binaries and per-platform packages
// (`linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, ...).

function isMusl() {
  if (process.platform !== "linux") return false;
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

module.exports = { platformTriple };
