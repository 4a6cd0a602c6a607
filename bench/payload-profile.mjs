// One cell of the payload sweep in this process, for profiling and counting:
//   node --cpu-prof --cpu-prof-dir=DIR bench/payload-profile.mjs KIND SIZE [CALLS]
// (--cpu-prof writes one profile per thread: the host's and each worker's).
// Prints calls/s and, per call, the payload-region operations (napi
// crossings: arena.alloc / arena.free) and encode() calls on the host, and
// the host's heap allocation (bytes per call, from the GC's counters).
import { createRequire } from "node:module";
import { createPool } from "../index.mjs";
import * as tasks from "./tasks.mjs";
import { makeSweepCell, windowFor } from "./lib/payloads.mjs";
import { echoWindow } from "./lib/workloads.mjs";
import { parseArgs } from "./lib/args.mjs";

const require = createRequire(import.meta.url);
const native = require("../lib/native/index.js");
const codec = require("../lib/codec/index.js");
const USAGE = "usage: node [--cpu-prof --cpu-prof-dir=DIR] bench/payload-profile.mjs [KIND [SIZE [CALLS]]]";
const [kind = "u8", sizeArg = "65536", callsArg] = parseArgs(process.argv.slice(2), {
  options: {},
  usage: USAGE,
  positionals: 3,
})._;
const size = Number(sizeArg);
const cell = makeSweepCell(kind, size);
const window = windowFor(size, 1000);
const calls = Number(callsArg ?? Math.max(3000, Math.round(2e9 / Math.max(size, 4096) / (kind === "object" ? 30 : 1))));

// Count the host's crossings by wrapping the prototypes (the workers have their own copies).
const count = { alloc: 0, free: 0, encode: 0, encodeInto: 0 };
const wrap = (proto, name, key) => {
  const f = proto[name];
  proto[name] = function (...a) {
    count[key]++;
    return f.apply(this, a);
  };
};
wrap(native.PayloadArena.prototype, "alloc", "alloc");
wrap(native.PayloadArena.prototype, "free", "free");
wrap(codec.Encoder.prototype, "encode", "encode");
wrap(codec.Encoder.prototype, "encodeInto", "encodeInto");

const pool = createPool({ threads: 2 })({ add: tasks.add, echo: tasks.echo });
await pool.call.add([1, 2]);
await echoWindow(pool.call.echo, cell.values, cell.check, Math.max(2 * window, Math.round(calls / 5)), window);
for (const k of Object.keys(count)) count[k] = 0;
const t0 = process.hrtime.bigint();
const r = await echoWindow(pool.call.echo, cell.values, cell.check, calls, window);
const ns = Number(process.hrtime.bigint() - t0);
await pool.shutdown();
const per = (n) => (n / calls).toFixed(2);
console.log(
  `${kind} ${size}: ${Math.round(calls / (ns / 1e9)).toLocaleString("en-US")} calls/s ` +
    `(${calls} calls, ${window} in flight, ${r.mismatches} wrong); ` +
    `host per call: arena.alloc ${per(count.alloc)}, arena.free ${per(count.free)}, ` +
    `encodeInto ${per(count.encodeInto)}, encode ${per(count.encode)}` +
    "",
);
