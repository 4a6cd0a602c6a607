// What an object payload's keys cost the codec: the sweep's `{ id, rows }`
// objects (rows of 20-field records), encoded into a SharedArrayBuffer and
// decoded again, against the same values with every object turned into the
// array of its values (no keys at all: the floor a key format can reach).
// With DIR, the same objects through another checkout's codec as well (an
// earlier commit: a before/after). The sides take turns in one process; CPU
// time per value, median of the turns.
//   node bench/codec-shapes.mjs [DIR] [--sizes 1024,16384,65536] [--reps 7]
import { createRequire } from "node:module";
import path from "node:path";
import { makeSweepCell, sizeLabel } from "./lib/payloads.mjs";
import { parseArgs, listOf, positiveInt } from "./lib/args.mjs";
import { median } from "./lib/stats.mjs";

const require = createRequire(import.meta.url);
const o = parseArgs(process.argv.slice(2), {
  options: { "--sizes": ["sizes", listOf(positiveInt)], "--reps": ["reps", positiveInt] },
  defaults: { sizes: [1024, 16384, 65536], reps: 7 },
  usage: "usage: node bench/codec-shapes.mjs [DIR] [--sizes 1024,16384,65536] [--reps 7]",
  positionals: 1,
});
const [dir] = o._;
const here = require("../lib/codec/index.js");
const before = dir === undefined ? null : require(path.resolve(dir, "lib/codec/index.js"));

const valuesOnly = (v) => {
  if (Array.isArray(v)) return v.map(valuesOnly);
  if (v !== null && typeof v === "object") return Object.values(v).map(valuesOnly);
  return v;
};
const target = new Uint8Array(new SharedArrayBuffer(16 << 20));

/** CPU ns per value to encode, then to decode, `values` in turn through `codec`. */
function turn(codec, values, calls) {
  const enc = new codec.Encoder();
  const lengths = values.map((v) => enc.encodeInto(v, target, 0, target.length));
  let t = process.cpuUsage();
  for (let i = 0; i < calls; i++) enc.encodeInto(values[i % values.length], target, 0, target.length);
  const e = process.cpuUsage(t);
  const n = lengths[(calls - 1) % values.length];
  t = process.cpuUsage();
  for (let i = 0; i < calls; i++) codec.decode(target, 0, n);
  const d = process.cpuUsage(t);
  return [((e.user + e.system) * 1000) / calls, ((d.user + d.system) * 1000) / calls];
}

const fmt = (ns) => (ns >= 10_000 ? `${(ns / 1000).toFixed(1)} µs` : `${ns.toFixed(0)} ns`);
console.log(`node ${process.version}; CPU time per value, median of ${o.reps} turns${dir ? `; before: ${dir}` : ""}`);
for (const size of o.sizes) {
  const objects = makeSweepCell("object", size).values;
  const sides = [
    ["objects", here, objects],
    ["values only", here, objects.map(valuesOnly)],
  ];
  if (before !== null) sides.push(["objects, before", before, objects]);
  const calls = Math.max(200, Math.round(2e7 / size));
  const runs = sides.map(() => []);
  for (let r = 0; r < o.reps; r++) sides.forEach(([, codec, values], s) => runs[s].push(turn(codec, values, calls)));
  const cells = sides.map(([label], s) => {
    const enc = median(runs[s].map((x) => x[0]));
    const dec = median(runs[s].map((x) => x[1]));
    return `${label}: encode ${fmt(enc)}, decode ${fmt(dec)}`;
  });
  console.log(`object ${sizeLabel(size).padStart(6)}  ${cells.join("; ")}`);
}
