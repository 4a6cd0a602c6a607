"use strict";
// The elastic size options (minThreads, maxThreads, idleTimeout; server/elastic.js
// runs them), validated with the same errors as every other option
// (options/checks.js: KNT_INVALID_OPTION). `threads` is a fixed size: the
// shorthand for minThreads = maxThreads = threads. Given together, they
// must agree.

const { optionError, integerIn } = require("./checks.js");

const ELASTIC_KEYS = ["minThreads", "maxThreads", "idleTimeout"];
/** idleTimeout's default: an idle worker beyond minThreads leaves after 10 s without a call. */
const DEFAULT_IDLE_TIMEOUT_MS = 10_000;
/** The longest timer Node keeps (setInterval's limit). */
const MAX_IDLE_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * `options`: createPool's options; `threads`: options.threads, validated
 * (undefined when not given); `maxLanes`: the most workers a pool has;
 * `defaultThreads`: the size when nothing says. Returns null when the pool
 * has a fixed size, else `{ minThreads, maxThreads, idleTimeout }` (equal
 * bounds included: the caller treats them as fixed).
 */
function resolveElastic(options, threads, maxLanes, defaultThreads) {
  const { minThreads, maxThreads, idleTimeout } = options;
  if (minThreads === undefined && maxThreads === undefined) {
    if (idleTimeout !== undefined) {
      throw optionError(
        RangeError,
        "knitting-native: idleTimeout applies to an elastic pool: give minThreads and/or maxThreads with it " +
          "(threads is a fixed size)",
      );
    }
    return null;
  }
  const min = minThreads === undefined ? undefined : integerIn(minThreads, "minThreads", 1, maxLanes);
  const max = maxThreads === undefined ? undefined : integerIn(maxThreads, "maxThreads", 1, maxLanes);
  if (threads !== undefined && ((min !== undefined && min !== threads) || (max !== undefined && max !== threads))) {
    const given = [min === undefined ? null : `minThreads ${min}`, max === undefined ? null : `maxThreads ${max}`];
    throw optionError(
      RangeError,
      `knitting-native: threads ${threads} is a fixed size (minThreads = maxThreads = threads) and disagrees ` +
        `with ${given.filter(Boolean).join(" and ")}: give threads alone, or minThreads/maxThreads alone`,
    );
  }
  const lo = min !== undefined ? min : threads !== undefined ? threads : 1;
  const hi = max !== undefined ? max : threads !== undefined ? threads : Math.max(lo, defaultThreads);
  if (lo > hi) {
    throw optionError(
      RangeError,
      `knitting-native: minThreads (${lo}) must be at most maxThreads (${hi}); maxThreads must be between 1 and ` +
        `${maxLanes}`,
    );
  }
  const idle =
    idleTimeout === undefined
      ? DEFAULT_IDLE_TIMEOUT_MS
      : integerIn(idleTimeout, "idleTimeout (milliseconds)", 0, MAX_IDLE_TIMEOUT_MS);
  return { minThreads: lo, maxThreads: hi, idleTimeout: idle };
}

module.exports = { resolveElastic, ELASTIC_KEYS, DEFAULT_IDLE_TIMEOUT_MS };
