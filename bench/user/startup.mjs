// Start-up in the user's shape: from before the pool's package is imported
// to the first answer, in a fresh process.
//
//   <runtime> bench/user/startup.mjs knitting|piscina [threads]
//
// Prints one JSON line: { pool, importMs, firstAnswerMs } (firstAnswerMs
// counts from before the import).
const which = process.argv[2] ?? "knitting";
const threads = Number(process.argv[3] ?? 2);
const t0 = performance.now();
let importMs;
let answer;
if (which === "knitting") {
  const { createPool } = await import("knitting-native");
  const { add } = await import("./startup-tasks.mjs");
  importMs = performance.now() - t0;
  const pool = createPool({ threads })({ add });
  answer = await pool.call.add([1, 2]);
  const firstAnswerMs = performance.now() - t0;
  await pool.shutdown();
  print(firstAnswerMs);
} else {
  const { Piscina } = await import("piscina");
  importMs = performance.now() - t0;
  const pool = new Piscina({
    filename: new URL("./startup-piscina-worker.mjs", import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
  });
  answer = await pool.run([1, 2]);
  const firstAnswerMs = performance.now() - t0;
  await pool.destroy();
  print(firstAnswerMs);
}

function print(firstAnswerMs) {
  if (answer !== 3) throw new Error(`wrong answer ${answer}`);
  process.stdout.write(`${JSON.stringify({ pool: which, threads, importMs, firstAnswerMs })}\n`);
}
