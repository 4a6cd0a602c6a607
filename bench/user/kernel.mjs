// The CPU-bound function of the user-shaped benchmark (bench/user/): a tight
// integer loop, FNV-1a-style hashing of a counter, the kind of kernel whose
// speed the JIT's tiering decides (an xorshift loop was not affected by the
// Node 24 slowdown described in docs/cpu-tiering.md; this one was, 2-2.8x).
export function hash(n) {
  let h = 2166136261 | 0;
  for (let i = 0; i < n; i++) {
    h ^= i;
    h = Math.imul(h, 16777619);
  }
  return h;
}
