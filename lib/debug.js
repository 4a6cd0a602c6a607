"use strict";
// Lifecycle traces on stderr, enabled per pool with `debug: true` or for every
// pool with KNITTING_DEBUG=1. Never on the per-call path.

const ENV_ON = /^(1|true|yes|on|\*)$/i.test(process.env.KNITTING_DEBUG || "");

function makeDebug(enabled, poolId) {
  if (!(enabled || ENV_ON)) return null;
  const t0 = performance.now();
  return (topic, message) => {
    const ms = (performance.now() - t0).toFixed(1).padStart(8);
    process.stderr.write(`knitting-native:${topic} pool ${poolId} +${ms} ms ${message}\n`);
  };
}

module.exports = { makeDebug };
