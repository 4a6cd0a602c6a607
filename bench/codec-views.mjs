// The codec through three kinds of view, one process, taking turns: a
// Uint8Array over a fixed SharedArrayBuffer, a length-tracking one over a
// growable SharedArrayBuffer (what the payload region used to hand the
// codec), and a fixed-length one over the same growable buffer (what it
// hands it now, PayloadRegion#renew). Sweep objects of 1 KiB and 16 KiB:
// decode from the view, and encodeInto it. CPU time per value, median of
// the turns. Each side loads its own copy of the codec, so that one side's
// type feedback cannot slow another.
//   node bench/codec-views.mjs [--reps 5]
import { createRequire } from "node:module";
import { makeSweepCell } from "./lib/payloads.mjs";
import { parseArgs, positiveInt } from "./lib/args.mjs";
import { median } from "./lib/stats.mjs";

const require = createRequire(import.meta.url);
const { reps: REPS } = parseArgs(process.argv.slice(2), {
  options: { "--reps": ["reps", positiveInt] },
  defaults: { reps: 5 },
  usage: "usage: node bench/codec-views.mjs [--reps 5]",
});
const BYTES = 8 << 20;
/** A fresh copy of the codec (its module state and type feedback its own). */
function freshCodec() {
  for (const key of Object.keys(require.cache)) if (/[\\/]lib[\\/]codec/.test(key)) delete require.cache[key];
  return require("../lib/codec.js");
}
const VIEWS = {
  "fixed buffer": () => new Uint8Array(new SharedArrayBuffer(BYTES)),
  "growable, length-tracking view": () => new Uint8Array(new SharedArrayBuffer(BYTES, { maxByteLength: 4 * BYTES })),
  "growable, fixed-length view": () =>
    new Uint8Array(new SharedArrayBuffer(BYTES, { maxByteLength: 4 * BYTES }), 0, BYTES),
};
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
console.log(`node ${process.version}; ${REPS} turns; CPU µs per value, median`);
for (const size of [1024, 16384]) {
  const values = makeSweepCell("object", size).values;
  const N = size > 2000 ? 400 : 8000;
  const sides = Object.entries(VIEWS).map(([name, make]) => {
    const codec = freshCodec();
    const u8 = make();
    const enc = new codec.Encoder();
    let off = 0;
    const at = values.map((v) => {
      const bytes = enc.encode(v);
      u8.set(bytes, off);
      const r = [off, bytes.length];
      off += bytes.length + 8;
      return r;
    });
    const out = BYTES - (1 << 20);
    const dec = () => {
      for (let i = 0; i < N; i++) codec.decode(u8, at[i % at.length][0], at[i % at.length][1]);
    };
    const encode = () => {
      for (let i = 0; i < N; i++) enc.encodeInto(values[i % values.length], u8, out, 1 << 20);
    };
    return { name, dec, encode, t: { dec: [], encode: [] } };
  });
  for (let r = -1; r < REPS; r++) {
    for (const s of sides) {
      for (const step of ["dec", "encode"]) {
        const t = cpu();
        s[step]();
        if (r >= 0) s.t[step].push((cpu() - t) / N);
      }
    }
  }
  for (const s of sides) {
    console.log(
      `object ${size / 1024} KiB, ${s.name.padEnd(31)} decode ${median(s.t.dec).toFixed(2).padStart(7)} µs` +
        `  encodeInto ${median(s.t.encode).toFixed(2).padStart(7)} µs`,
    );
  }
}
