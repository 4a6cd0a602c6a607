"use strict";
// Loads the Rust addon: a local build in the package root first, then the
// per-platform package (`knitting-native-<triple>`), as napi-rs packages do.
// When neither fits, the error says how to build from source.
const { join } = require("node:path");
const { existsSync } = require("node:fs");
const { platformTriple } = require("./platform.js");

// N-API 8 is what the addon is built against (Cargo.toml, feature "napi8").
const MIN_NAPI = 8;

function load() {
  const napi = Number(process.versions.napi || 0);
  if (napi < MIN_NAPI) {
    throw new Error(
      `knitting-native needs N-API ${MIN_NAPI} or newer (Node.js >= 20); ` +
        `this Node.js ${process.version} offers N-API ${napi}. Upgrade Node.js.`,
    );
  }
  const triple = platformTriple();
  const local = join(__dirname, "..", `knitting-native.${triple}.node`);
  const errors = [];
  if (existsSync(local)) {
    try {
      return require(local);
    } catch (err) {
      errors.push(`${local}: ${err.message}`);
    }
  }
  const pkg = `knitting-native-${triple}`;
  try {
    return require(pkg);
  } catch (err) {
    errors.push(`${pkg}: ${err.message}`);
  }
  throw new Error(
    `knitting-native: no native binary for ${triple}.\n` +
      `Tried:\n  ${errors.join("\n  ")}\n` +
      "Build it from source (needs a Rust toolchain, https://rustup.rs): " +
      "run `npm run build` in the knitting-native package folder.",
  );
}

module.exports = load();
