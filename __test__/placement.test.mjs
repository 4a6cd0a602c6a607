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
import { sleep } from "./helpers/wait.mjs";

const native = createRequire(import.meta.url)("../lib/native/index.js");
const W_HOST_CPU = native.layout().wordHostCpu;
const knowsCpu = native.currentCpu() >= 0;

test("currentCpu() is a CPU number where the platform says, else -1", () => {
  const cpu = native.currentCpu();
  assert.ok(Number.isInteger(cpu) && cpu >= -1 && cpu < 65536, `got ${cpu}`);
  if (process.platform === "linux") assert.ok(cpu >= 0, "Linux tells a thread its CPU");
});

// Polling without the doorbell, with a budget of idle passes no call here
// exhausts: the host polls for as long as the call runs, so the word is
// read while it polls, deterministically.
const POLLING = { doorbell: false, stallFreeLoops: 1_000_000 };

for (const [name, options] of [
  ["work stealing", { threads: 2, host: POLLING }],
  ["private lanes", { threads: 2, host: { ...POLLING, steal: false } }],
]) {
  test(`${name}: HOST_CPU holds the host's CPU + 1 while it polls, 0 once nothing is in flight`, {
    skip: !knowsCpu && "no CPU number here",
  }, async () => {
    const pool = createPool(options)({ later: T.later });
    try {
      await pool.ready;
      const p = internals(pool);
      assert.equal(Atomics.load(p.i32, W_HOST_CPU), 0, "0 before the host has polled");
      // A call that takes a while: the host polls for it, finding nothing.
      const call = pool.call.later([7, 300]);
      await sleep(60);
      const noted = Atomics.load(p.i32, W_HOST_CPU);
      assert.ok(noted >= 1 && noted <= 65536, `HOST_CPU holds a CPU + 1 while the host polls, got ${noted}`);
      assert.equal(noted, p.loop.cpu + 1, "the word is the host loop's last noted CPU");
      assert.equal(await call, 7);
      assert.equal(Atomics.load(p.i32, W_HOST_CPU), 0, "0 once no call is in flight");
    } finally {
      await pool.shutdown();
    }
  });
}
