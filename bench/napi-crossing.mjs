// What one napi crossing costs next to the JS work of a tiny call: the
// measurement behind keeping the per-call path in JS (src/bindings.rs).
//   node bench/napi-crossing.mjs
import { createRequire } from "node:module";
import { median } from "./lib/stats.mjs";

const require = createRequire(import.meta.url);
const native = require("../lib/native/index.js");
const { Encoder, decode } = require("../lib/codec/index.js");

function nsPerOp(fn, ops) {
  for (let i = 0; i < ops / 10; i++) fn(i); // warm up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) fn(i);
  return Number(process.hrtime.bigint() - t0) / ops;
}

const OPS = 2_000_000;
const sab = new SharedArrayBuffer(4096);
const u8 = new Uint8Array(sab);
const i32 = new Int32Array(sab);
const enc = new Encoder();
let sink = 0;

const rows = {
  "napi call, one number in, number out (regionBytes)": () => {
    sink += native.regionBytes(1, 0);
  },
  "napi call, string in (stableTaskID of a 40-char href)": (i) => {
    sink += native.stableTaskID("file:///home/user/project/src/tasks.mjs", i);
  },
  "JS: encode [i, 1] into a shared slot + decode it": (i) => {
    const n = enc.encodeInto([i, 1], u8, 64, 512);
    sink += decode(u8, 64, n)[0];
  },
  "JS: Atomics.store + Atomics.load (publish one slot)": (i) => {
    Atomics.store(i32, 0, i);
    sink += Atomics.load(i32, 1);
  },
};

console.log(`node ${process.version}, ${OPS} ops per sample, median of 5 samples`);
for (const [name, fn] of Object.entries(rows)) {
  const samples = Array.from({ length: 5 }, () => nsPerOp(fn, OPS));
  console.log(`${median(samples).toFixed(1).padStart(8)} ns  ${name}`);
}
if (sink === 0.5) console.log("");
