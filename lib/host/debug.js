"use strict";
// Traces on stderr, never on the per-call path. Enabled per pool with
// `debug: true` (every namespace) or `debug: { host: true, ... }` (those
// namespaces), or for every pool with KNITTING_DEBUG:
//
//   KNITTING_DEBUG=1 | true | * | all     every namespace
//   KNITTING_DEBUG=lifecycle,imports      only these (comma- or space-separated)
//   KNITTING_DEBUG= | 0 | false           none (the default)
//
// Namespaces: host (the host's dispatch loop), signals (doorbell, waking),
// imports (workers loading task modules), lifecycle (pool and workers
// created, ready, exited; shutdown). Unknown names are ignored.
//
// Each line: `knitting-native:<topic> pool <id> +<ms> ms <message>`.

const NAMESPACES = Object.freeze(["host", "signals", "imports", "lifecycle"]);
const ALL = /^(1|true|yes|on|\*|all)$/i;
const NONE = /^(0|false|no|off|none)?$/i;

/** The namespaces KNITTING_DEBUG turns on: a Set, or "all". */
function parseDebugEnv(value) {
  const spec = String(value == null ? "" : value).trim();
  if (NONE.test(spec)) return new Set();
  const names = spec.split(/[\s,]+/).filter(Boolean);
  if (names.some((n) => ALL.test(n))) return "all";
  return new Set(names.map((n) => n.toLowerCase()).filter((n) => NAMESPACES.includes(n)));
}

/**
 * `(topic, message) => void` writing trace lines for the enabled namespaces,
 * or null when none is enabled (callers test `if (debug)`). `enabled`: the
 * pool's `debug` option as options/index.js resolves it (true, false or an array
 * of namespaces). The environment is read when the pool is made.
 */
function makeDebug(enabled, poolId) {
  const env = parseDebugEnv(process.env.KNITTING_DEBUG);
  const all = enabled === true || env === "all";
  const chosen = new Set(Array.isArray(enabled) ? enabled : []);
  if (env !== "all") for (const name of env) chosen.add(name);
  if (!all && chosen.size === 0) return null;
  const on = (topic) => all || chosen.has(topic);
  const t0 = performance.now();
  const debug = (topic, message) => {
    if (!on(topic)) return;
    const ms = (performance.now() - t0).toFixed(1).padStart(8);
    process.stderr.write(`knitting-native:${topic} pool ${poolId} +${ms} ms ${message}\n`);
  };
  /** Whether `topic` is traced, to skip building a costly message. */
  debug.enabled = on;
  return debug;
}

module.exports = { makeDebug, parseDebugEnv, NAMESPACES };
