import { createPool, task, isMain } from "/work/main/index.mjs";
export const add = task({ f: ([a, b]) => a + b });
if (isMain) {
  const opts = JSON.parse(process.argv[2]);
  const pool = createPool({ ...opts, debug: true })({ add });
  console.log("created");
  await pool.ready; console.log("ready");
  console.log(await pool.call.add([1, 2]));
  const r = await Promise.all(Array.from({ length: 1000 }, (_, i) => pool.call.add([i, 1])));
  console.log(r.every((v, i) => v === i + 1));
  await pool.shutdown();
}
