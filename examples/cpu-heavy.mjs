// CPU-heavy work on the pool: SHA-256 of many buffers with node:crypto, in the
// workers; the host hashes a few itself and checks the workers' answers.
//
//   node examples/cpu-heavy.mjs [count] [KiB per buffer]
//
// This module is the task module (imported by every worker too), so the pool
// is created behind `isMain`.
import { createHash, randomBytes } from "node:crypto";
import { availableParallelism } from "node:os";
import { createPool, task, isMain } from "knitting-native";

export const sha256 = task({
  f: (bytes) => createHash("sha256").update(bytes).digest("hex"),
});

if (isMain) {
  const count = Number(process.argv[2] ?? 256);
  const kib = Number(process.argv[3] ?? 256);
  const threads = availableParallelism();
  const buffers = Array.from({ length: count }, () => randomBytes(kib * 1024));

  const pool = createPool({ threads })({ sha256 });
  try {
    const t0 = performance.now();
    const digests = await Promise.all(buffers.map((b) => pool.call.sha256(b)));
    const ms = performance.now() - t0;

    // Spot checks: the first, the last and a few in between, hashed here.
    const picks = [
      ...new Set([0, count - 1, ...Array.from({ length: 6 }, (_, i) => Math.floor(((i + 1) * count) / 7))]),
    ];
    const bad = picks.filter((i) => createHash("sha256").update(buffers[i]).digest("hex") !== digests[i]);

    const mib = (count * kib) / 1024;
    console.log(
      `hashed ${count} buffers (${mib.toFixed(1)} MiB) on ${threads} worker thread(s) in ${ms.toFixed(0)} ms`,
    );
    console.log(`first digest ${digests[0]}`);
    if (bad.length) {
      console.error(`MISMATCH at ${bad.join(", ")}`);
      process.exitCode = 1;
    } else {
      console.log(`spot checks: ${picks.length}/${picks.length} match the host's own SHA-256`);
    }
  } finally {
    await pool.shutdown();
  }
}
