// Per-step cost of the payload path, one thread, no pool: what each step of
// a call costs for each kind and size of the payload sweep, measured on the
// same code the pool runs (lib/codec/index.js, lib/payload/region.js):
//   encode   Encoder#encodeInto into a slot's inline bytes (fails above them),
//            then, when it did not fit, Encoder#encode into the scratch buffer
//   place    PayloadRegion#tryWrite: arena.alloc (a napi call) + copy into the region
//   decode   decode() of the bytes in the region (strings and binary copied out)
//   free     PayloadRegion#free: arena.free (a napi call) + the room nudge
// Each step runs `ops` times in a loop and reports ns per op (median of 3).
//   node bench/payload-steps.mjs [--kinds string,u8,object] [--sizes 64,1024,...] [--json FILE]
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { SWEEP_KINDS, SWEEP_SIZES, makeSweepCell, sizeLabel } from "./lib/payloads.mjs";
import { parseArgs, listOf, positiveInt, subsetOf, text } from "./lib/args.mjs";
import { median } from "./lib/stats.mjs";

const require = createRequire(import.meta.url);
const codec = require("../lib/codec/index.js");
const { PayloadRegion } = require("../lib/payload/region.js");
const native = require("../lib/native/index.js");
const L = native.layout();

const args = parseArgs(process.argv.slice(2), {
  options: {
    "--kinds": ["kinds", subsetOf(SWEEP_KINDS)],
    "--sizes": ["sizes", listOf(positiveInt)],
    "--json": ["json", text],
  },
  defaults: { kinds: SWEEP_KINDS, sizes: SWEEP_SIZES, json: null },
  usage: "usage: node bench/payload-steps.mjs [--kinds string,u8,object] [--sizes 64,1024,...] [--json FILE]",
});
const { kinds, sizes } = args;

const hr = process.hrtime.bigint;
function nsPerOp(fn, ops) {
  for (let i = 0; i < Math.max(3, ops / 5); i++) fn(i);
  const runs = [];
  for (let r = 0; r < 3; r++) {
    const t0 = hr();
    for (let i = 0; i < ops; i++) fn(i);
    runs.push(Number(hr() - t0) / ops);
  }
  return median(runs);
}

const slot = new Uint8Array(new SharedArrayBuffer(4096));
const region = new PayloadRegion(new SharedArrayBuffer(64 << 20, { maxByteLength: 64 << 20 }), true);
const enc = new codec.Encoder({ maxPayloadBytes: 32 << 20 });
const rows = [];
for (const kind of kinds) {
  for (const size of sizes) {
    const cell = makeSweepCell(kind, size);
    const vs = cell.values;
    const nv = vs.length;
    const ops = Math.max(20, Math.min(200_000, Math.round(200e6 / (size * (kind === "object" ? 20 : 1)))));
    let sink = 0;
    const encode = nsPerOp((i) => {
      const v = vs[i % nv];
      const n = enc.encodeInto(v, slot, 64, L.inlineBytes);
      sink += n < 0 ? enc.encode(v).length : n;
    }, ops);
    const bytes = (() => {
      const n = enc.encodeInto(vs[0], slot, 64, L.inlineBytes);
      return n < 0 ? enc.encode(vs[0]).slice() : slot.slice(64, 64 + n);
    })();
    const inline = bytes.length <= L.inlineBytes;
    let place = NaN;
    let free = NaN;
    let decodeNs;
    if (inline) {
      slot.set(bytes, 64);
      decodeNs = nsPerOp(() => {
        sink += codec.decode(slot, 64, bytes.length) === undefined ? 0 : 1;
      }, ops);
    } else {
      const at = region.tryWrite(bytes);
      // Up to 8 KiB the block is a sub-block of a chunk: its EXT word is not its byte offset.
      const start = PayloadRegion.startOf(at);
      decodeNs = nsPerOp(() => {
        sink += codec.decode(region.u8, start, bytes.length) === undefined ? 0 : 1;
      }, ops);
      region.free(at);
      // place and free measured as pairs, then apart by timing the free alone on blocks placed first
      // as many blocks live as calls in flight at this size (bench/lib/payloads.mjs windowFor)
      const batch = Math.min(1000, Math.max(4, Math.floor((16 << 20) / bytes.length)));
      const ats = new Array(batch);
      const placeRuns = [];
      const freeRuns = [];
      for (let r = 0; r < 5; r++) {
        let t0 = hr();
        for (let i = 0; i < batch; i++) ats[i] = region.tryWrite(bytes);
        placeRuns.push(Number(hr() - t0) / batch);
        t0 = hr();
        for (let i = 0; i < batch; i++) region.free(ats[i]);
        freeRuns.push(Number(hr() - t0) / batch);
      }
      place = median(placeRuns.slice(1));
      free = median(freeRuns.slice(1));
    }
    if (sink === -1) console.log("");
    rows.push({ kind, size, encoded: bytes.length, inline, encode, place, decode: decodeNs, free });
    const f = (v) => (Number.isFinite(v) ? (v >= 10_000 ? `${(v / 1000).toFixed(1)} µs` : `${v.toFixed(0)} ns`) : "-");
    console.log(
      `${kind.padEnd(6)} ${sizeLabel(size).padStart(7)}  ` +
        `encoded ${String(bytes.length).padStart(8)} B ${inline ? "inline" : "region"}` +
        `  encode ${f(encode).padStart(9)}  place ${f(place).padStart(9)}  ` +
        `decode ${f(decodeNs).padStart(9)}  free ${f(free).padStart(8)}` +
        `  one direction ${f(encode + (inline ? 0 : place + free) + decodeNs).padStart(9)}`,
    );
  }
}
const j = args.json;
if (j)
  writeFileSync(j, JSON.stringify({ node: process.version, date: new Date().toISOString(), rows }, null, 2) + "\n");
