// Before/after of the payload path's own steps, one thread, both sides in one
// process taking turns (so machine load hits both alike): for each value, the
// host's whole write (inline attempt, then into the payload region) and the
// reader's whole read (decode + free), with this checkout's lib/ against the
// lib/ of another checkout DIR (an earlier commit).
//   node bench/payload-ab.mjs DIR [--reps 9]
// Times are CPU time (process.cpuUsage), not wall time. Prints ns per value for each side
// and after/before (< 1: faster now).
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { makeSweepCell, sizeLabel } from "./lib/payloads.mjs";
import { parseArgs, positiveInt } from "./lib/args.mjs";
import { median } from "./lib/stats.mjs";

const require = createRequire(import.meta.url);
const USAGE = "usage: node bench/payload-ab.mjs DIR [--reps N]   (DIR: another checkout; --reps default 9)";
const {
  _: [dir],
  reps: REPS,
} = parseArgs(process.argv.slice(2), {
  options: { "--reps": ["reps", positiveInt] },
  defaults: { reps: 9 },
  usage: USAGE,
  positionals: 1,
  required: ["DIR"],
});
const load = (root) => ({
  codec: require(path.resolve(root, "lib/codec/index.js")),
  payload: require(path.resolve(root, "lib/payload/region.js")),
  // The slot writer (inline, else the region), where the checkout has one.
  slotWrite: fs.existsSync(path.resolve(root, "lib/payload/slot-writer.js"))
    ? require(path.resolve(root, "lib/payload/slot-writer.js"))
    : null,
});
const sides = { before: load(dir), after: load(new URL("..", import.meta.url).pathname) };
const INLINE = 512;
const HELD = 64; // values written before they are read, as calls in flight

function makeSide(m) {
  const slot = new Uint8Array(new SharedArrayBuffer(HELD * INLINE + 64)); // one "slot" per value held
  const region = new m.payload.PayloadRegion(new SharedArrayBuffer(64 << 20, { maxByteLength: 64 << 20 }), true);
  const enc = new m.codec.Encoder({ maxPayloadBytes: 32 << 20 });
  // The host's write as host/pool.js does it: inline, else into the region.
  if (m.slotWrite !== null) {
    const writer = new m.slotWrite.SlotWriter(enc, region, slot);
    const write = (v, j) => {
      const n = writer.write(v, 64 + j * INLINE);
      return writer.ext === m.slotWrite.NO_EXT ? [-1 - j, n] : [writer.ext, n];
    };
    const read = ([at, n]) =>
      at < 0 ? m.codec.decode(slot, 64 + (-1 - at) * INLINE, n) : region.readSlot(null, 0, n, at);
    return { write, read };
  }
  const write = (v, j) => {
    const n = enc.encodeInto(v, slot, 64 + j * INLINE, INLINE);
    if (n >= 0) return [-1 - j, n];
    if (typeof region.tryPlace === "function") return [region.tryPlace(enc, v), region.placed];
    const bytes = enc.encode(v);
    return [region.tryWrite(bytes), bytes.length];
  };
  const read = ([at, n]) =>
    at < 0 ? m.codec.decode(slot, 64 + (-1 - at) * INLINE, n) : region.readSlot(null, 0, n, at);
  return { write, read };
}
// CPU time of this (single-threaded) process, in ns: unlike wall time it does not count the time
// other processes held the core, which on a loaded machine swamps what is measured.
const hr = () => {
  const u = process.cpuUsage();
  return BigInt(u.user + u.system) * 1000n;
};
console.log(`node ${process.version}; before: ${dir}; ${REPS} turns per side, median`);
for (const kind of ["string", "u8", "object"]) {
  for (const size of [64, 1024, 16384, 65536, 1 << 20]) {
    const cell = makeSweepCell(kind, size);
    const vs = cell.values;
    const ops = Math.max(64, Math.min(40_000, Math.round(6e7 / (size * (kind === "object" ? 10 : 1)))));
    const res = { before: { w: [], r: [] }, after: { w: [], r: [] } };
    const run = (s, out) => {
      const held = new Array(Math.max(1, Math.min(ops, HELD, Math.floor((24 << 20) / size))));
      let tw = 0n;
      let tr = 0n;
      for (let i = 0; i < ops; i += held.length) {
        const k = Math.min(held.length, ops - i);
        let t = hr();
        for (let j = 0; j < k; j++) held[j] = s.write(vs[(i + j) % vs.length], j);
        tw += hr() - t;
        t = hr();
        for (let j = 0; j < k; j++) s.read(held[j]);
        tr += hr() - t;
      }
      if (out) {
        out.w.push(Number(tw) / ops);
        out.r.push(Number(tr) / ops);
      }
    };
    const made = { before: makeSide(sides.before), after: makeSide(sides.after) };
    run(made.before, null);
    run(made.after, null);
    // Which side goes first alternates: the second of a pair ran measurably
    // faster in an A/A run (object writes 0.71-0.84 with the same code).
    for (let r = 0; r < REPS; r++) {
      if (r % 2 === 0) {
        run(made.before, res.before);
        run(made.after, res.after);
      } else {
        run(made.after, res.after);
        run(made.before, res.before);
      }
    }
    const f = (v) => (v >= 10_000 ? `${(v / 1000).toFixed(1)} µs` : `${v.toFixed(0)} ns`).padStart(9);
    const bw = median(res.before.w),
      aw = median(res.after.w),
      br = median(res.before.r),
      ar = median(res.after.r);
    console.log(
      `${kind.padEnd(6)} ${sizeLabel(size).padStart(6)}  write ${f(bw)} -> ${f(aw)} (${(aw / bw).toFixed(2)})` +
        `  read ${f(br)} -> ${f(ar)} (${(ar / br).toFixed(2)})  both ${((aw + ar) / (bw + br)).toFixed(2)}`,
    );
  }
}
