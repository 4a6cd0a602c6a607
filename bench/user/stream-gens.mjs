// The generators every pool of bench/user/stream.mjs streams from: plain
// async generators with no pool in sight, so that knitting-native's task,
// piscina's worker and the bare worker run the very same code.

/** Bytes of each value of the binary shape. */
export const CHUNK_BYTES = 64 * 1024;

/** 0, 1, ..., n - 1: the small values. */
export async function* ints(n) {
  for (let i = 0; i < n; i++) yield i;
}

/** n freshly allocated 64 KiB Uint8Arrays, each filled with a byte. */
export async function* chunks(n) {
  for (let i = 0; i < n; i++) {
    const b = new Uint8Array(CHUNK_BYTES);
    b.fill(i & 255);
    yield b;
  }
}

export const GENS = { ints, chunks };
