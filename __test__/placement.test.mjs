// Placement: the host notes the CPU it polls on (HOST_CPU, src/placement.rs),
// so that a worker about to spin can move off it. The move itself is tested
// in Rust (src/placement.rs); this checks the host's half, which the workers
// read.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { createPool } from "../index.mjs";
import * as T from "./fixtures/scheduling-tasks.mjs";
import { internals } from "./helpers/internals.mjs";

const native = createRequire(import.meta.url)("../lib/native.js");
const W_HOST_CPU = native.layout().wordHostCpu;
const knowsCpu = native.currentCpu() >= 0;

test("currentCpu() is a CPU number where the platform says, else -1", () => {
  const cpu = native.currentCpu();
  assert.ok(Number.isInteger(cpu) && cpu >= -1 && cpu < 65536, `got ${cpu}`);
  if (process.platform === "linux") assert.ok(cpu >= 0, "Linux tells a thread its CPU");
});

for (const [name, options] of [
  ["work stealing", { threads: 2 }],
  ["private lanes", { threads: 2, host: { steal: false } }],
]) {
  test(`${name}: the host writes the CPU it polls on into HOST_CPU`, {
    skip: !knowsCpu && "no CPU number here",
  }, async () => {
    const pool = createPool(options)({ later: T.later });
    try {
      await pool.ready;
      const p = internals(pool);
      assert.equal(Atomics.load(p.i32, W_HOST_CPU), 0, "unknown before the host has polled");
      // A call that takes a while: the host polls for it, finding nothing.
      assert.equal(await pool.call.later([7, 30]), 7);
      const noted = Atomics.load(p.i32, W_HOST_CPU);
      assert.ok(noted >= 1 && noted <= 65536, `HOST_CPU holds a CPU + 1, got ${noted}`);
      assert.equal(noted, p.loop.cpu + 1, "the word is the host loop's last noted CPU");
    } finally {
      await pool.shutdown();
    }
  });
}
