// The CPU-bound task body every pool runs in its workers for the scheduling
// workload of `node bench/run.mjs --report`: busy-spin `ms` milliseconds, then
// return `i` (so the host can check which call it got back).
export function busy(i, ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
  return i;
}
