// Copy against transfer() for large binary values, in one process, taking
// turns (so machine load hits both sides alike). Per size: calls/s of an echo
// of a fresh Uint8Array (allocated per call on both sides), a window of calls
// in flight (bench/lib/payloads.mjs windowFor):
//   copy      echo(u8)                      one copy each way
//   transfer  echoMoved(transfer(u8))       host.steal false: moved both ways;
//   steal     echoMoved(transfer(u8))       work stealing: argument copied, result moved
//   node bench/transfer-ab.mjs [--reps 5] [--threads 2] [--sizes 65536,1048576,4194304]
// Prints, per size, the median calls/s of each side over the turns, and transfer/copy.
import { createPool, transfer } from "../index.mjs";
import { windowFor } from "./lib/payloads.mjs";
import * as tasks from "./tasks.mjs";
import { parseArgs, listOf, positiveInt } from "./lib/args.mjs";
import { median } from "./lib/stats.mjs";

const {
  reps: REPS,
  threads: THREADS,
  sizes: SIZES,
} = parseArgs(process.argv.slice(2), {
  options: {
    "--reps": ["reps", positiveInt],
    "--threads": ["threads", positiveInt],
    "--sizes": ["sizes", listOf(positiveInt)],
  },
  defaults: { reps: 5, threads: 2, sizes: [65536, 1048576, 4194304] },
  usage: "usage: node bench/transfer-ab.mjs [--reps 5] [--threads 2] [--sizes 65536,1048576,4194304]",
});

const lanes = createPool({ threads: THREADS, host: { steal: false } })(tasks);
const steal = createPool({ threads: THREADS, host: { steal: true } })(tasks);
await Promise.all([lanes.ready, steal.ready]);

const SIDES = {
  copy: (n) => lanes.call.echo(new Uint8Array(n).fill(1)),
  transfer: (n) => lanes.call.echoMoved(transfer(new Uint8Array(n).fill(1))),
  steal: (n) => steal.call.echoMoved(transfer(new Uint8Array(n).fill(1))),
};

async function turn(side, size) {
  const call = SIDES[side];
  const window = windowFor(size, 256);
  const total = Math.max(200, Math.min(20_000, Math.round(2e9 / size / 8)));
  let next = 0;
  const lane = async () => {
    while (next < total) {
      next++;
      const r = await call(size);
      if (r.byteLength !== size || r[size - 1] !== 1) throw new Error(`${side}: bad echo`);
    }
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: window }, lane));
  return total / (Number(process.hrtime.bigint() - t0) / 1e9);
}

console.log(`node ${process.version}, ${THREADS} threads, ${REPS} turns per side; calls/s (median)`);
console.log("| Uint8Array | copy | transfer (lanes) | transfer (steal) | lanes/copy | steal/copy |");
console.log("|---|---|---|---|---|---|");
for (const size of SIZES) {
  const got = { copy: [], transfer: [], steal: [] };
  for (const side of Object.keys(SIDES)) await turn(side, size); // warm-up
  for (let r = 0; r < REPS; r++) for (const side of Object.keys(SIDES)) got[side].push(await turn(side, size));
  const m = Object.fromEntries(Object.entries(got).map(([k, v]) => [k, median(v)]));
  const label = size >= 1 << 20 ? `${size >> 20} MiB` : `${size >> 10} KiB`;
  const f = (x) => (x >= 1000 ? `${(x / 1000).toFixed(1)} k` : x.toFixed(0));
  console.log(
    `| ${label} | ${f(m.copy)} | ${f(m.transfer)} | ${f(m.steal)} | ${(m.transfer / m.copy).toFixed(2)} | ` +
      `${(m.steal / m.copy).toFixed(2)} |`,
  );
}
await Promise.all([lanes.shutdown(), steal.shutdown()]);
