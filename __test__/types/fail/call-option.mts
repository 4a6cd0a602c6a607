// expect: TS2353
// The second argument of a call is CallOptions, which has only `signal`.
import { importTask } from "knitting-native";

const triple = importTask<number, number>({ href: "./imported-fn.mjs", name: "triple" });
const pool = triple.createPool();
await pool.call(14, {});
await pool.call(14, { timeout: 100 }); // error
