// The codec reading and writing one value through three kinds of view, each
// in a fresh process (V8 specialises the codec's loops to the first kind of
// typed array they meet, so one process per kind): a plain SharedArrayBuffer,
// a length-tracking view of a growable one (new Uint8Array(sab)), and a
// fixed-length view of a growable one (new Uint8Array(sab, 0, n)), which is
// what lib/payload/region.js uses for the payload region.
//   node bench/codec-views.mjs [--kinds object,string,u8] [--sizes 1024,16384]
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { SWEEP_KINDS, makeSweepCell } from "./lib/payloads.mjs";
import { parseArgs, listOf, positiveInt, subsetOf, text } from "./lib/args.mjs";

const VIEWS = ["plain", "length-tracking", "fixed-length"];
const args = parseArgs(process.argv.slice(2), {
  options: {
    "--kinds": ["kinds", subsetOf(SWEEP_KINDS)],
    "--sizes": ["sizes", listOf(positiveInt)],
    "--view": ["view", text],
  },
  defaults: { kinds: SWEEP_KINDS, sizes: [1024, 16384], view: null },
  usage: "usage: node bench/codec-views.mjs [--kinds object,string,u8] [--sizes 1024,16384]",
});

if (args.view === null) {
  const self = fileURLToPath(import.meta.url);
  for (const view of VIEWS) {
    const out = execFileSync(
      process.execPath,
      [self, "--view", view, "--kinds", args.kinds.join(","), "--sizes", args.sizes.join(",")],
      { encoding: "utf8" },
    );
    process.stdout.write(out);
  }
} else {
  if (!VIEWS.includes(args.view)) throw new RangeError(`--view must be one of ${VIEWS.join(", ")}`);
  const require = createRequire(import.meta.url);
  const { Encoder } = require("../lib/codec/encode.js");
  const { decode } = require("../lib/codec/decode.js");
  const enc = new Encoder();
  const N = 1 << 20;
  const u8 =
    args.view === "plain"
      ? new Uint8Array(new SharedArrayBuffer(N))
      : args.view === "length-tracking"
        ? new Uint8Array(new SharedArrayBuffer(N, { maxByteLength: 64 * N }))
        : new Uint8Array(new SharedArrayBuffer(N, { maxByteLength: 64 * N }), 0, N);
  const us = (fn, ops) => {
    for (let i = 0; i < ops; i++) fn(i);
    const t = process.hrtime.bigint();
    for (let i = 0; i < ops; i++) fn(i);
    return Number(process.hrtime.bigint() - t) / ops / 1000;
  };
  for (const kind of args.kinds) {
    for (const size of args.sizes) {
      const vs = makeSweepCell(kind, size).values;
      const n = enc.encodeInto(vs[0], u8, 128, N - 128);
      const ops = Math.max(200, Math.round(5e7 / size / (kind === "object" ? 10 : 1)));
      const dec = us(() => decode(u8, 128, n), ops);
      const encUs = us((i) => enc.encodeInto(vs[i % vs.length], u8, 128, N - 128), ops);
      console.log(
        `${args.view.padEnd(15)} ${kind.padEnd(6)} ${String(size).padStart(6)} B: ` +
          `decode ${dec.toFixed(2)} µs, encodeInto ${encUs.toFixed(2)} µs`,
      );
    }
  }
}
