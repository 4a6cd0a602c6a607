// The byte kernels every pool of bench/user/bytes.mjs runs: plain functions
// over a Uint8Array with no pool in sight, so that knitting-native's tasks,
// piscina's worker and the bare worker do the very same work.

/** Inverts every byte of `u8` in place, four at a time where the view allows it. */
export function invertBytes(u8) {
  const words = u8.byteOffset % 4 === 0 ? u8.byteLength >>> 2 : 0;
  if (words) {
    const w = new Uint32Array(u8.buffer, u8.byteOffset, words);
    for (let i = 0; i < w.length; i++) w[i] = ~w[i];
  }
  for (let i = words * 4; i < u8.length; i++) u8[i] = ~u8[i];
  return u8;
}
