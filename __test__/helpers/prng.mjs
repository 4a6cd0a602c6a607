// The one seeded generator of the tests, the soak run (scripts/soak.mjs) and
// the benchmarks (bench/lib): xorshift32 (Marsaglia, shifts 13, 17, 5). It
// is small, fast, and the same seed gives the same sequence on every
// runtime, so a seed printed by a failing run reproduces it. Nothing here is
// for cryptography.

/**
 * The xorshift32 sequence from `seed`: each call of the returned function
 * gives the next 32-bit state as an unsigned integer. The state must not be
 * 0 (xorshift never leaves 0), so a seed that is 0 as a 32-bit word starts
 * from `ifZero` instead.
 */
export function xorshift32(seed, ifZero = 1) {
  let s = seed >>> 0 || ifZero >>> 0;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

/** Numbers in [0, 1) from xorshift32(seed, ifZero). */
export function random(seed, ifZero = 1) {
  const next = xorshift32(seed, ifZero);
  return () => next() / 4294967296;
}

/** random(seed) with helpers: `next()` in [0, 1), `int(n)` in [0, n), `pick(list)`. */
export function prng(seed, ifZero = 1) {
  const next = random(seed, ifZero);
  const int = (n) => Math.floor(next() * n);
  const pick = (list) => list[int(list.length)];
  return { next, int, pick };
}

/** Fills `u8` with the low bytes of xorshift32(seed)'s sequence; returns `u8`. */
export function fillBytes(u8, seed) {
  const next = xorshift32(seed);
  for (let i = 0; i < u8.length; i++) u8[i] = next() & 0xff;
  return u8;
}
