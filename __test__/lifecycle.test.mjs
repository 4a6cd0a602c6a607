import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createPool } from "../index.mjs";
import { add, delayed } from "./fixtures/tasks.mjs";
import { sleep } from "./helpers/wait.mjs";

test("after shutdown() the process exits by itself", () => {
  const script = fileURLToPath(new URL("./fixtures/exit-after-shutdown.mjs", import.meta.url));
  // The timeout only turns a hang into a failure; it is not a speed target.
  const child = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 20_000 });
  assert.equal(child.error, undefined, `child did not exit on its own: ${child.error}`);
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout, "[3,7]");
});

// The README's quick start itself runs in examples.test.mjs (every snippet).
test("the quick start's pool, never shut down, lets the process exit", () => {
  const script = fileURLToPath(new URL("./fixtures/quick-start.mjs", import.meta.url));
  const child = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 20_000 });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), "3 49");
});

test("an idle pool does not spin: host and workers block in the kernel", async () => {
  const pool = createPool({ threads: 2 })({ add, delayed });
  try {
    await Promise.all([pool.call.add([1, 1]), pool.call.delayed([1, 5])]);
    await sleep(300); // let every spin run out (late, on a loaded machine)
    const before = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await sleep(1000);
    const wallUs = Number(process.hrtime.bigint() - t0) / 1000;
    const used = process.cpuUsage(before);
    const share = (used.user + used.system) / wallUs;
    // process.cpuUsage covers the host and every worker thread. A spinning
    // worker or host would show ~100% or more; `npm run bench` reports the
    // real idle figure.
    assert.ok(share < 0.25, `idle pool used ${(share * 100).toFixed(1)}% of a core`);
  } finally {
    await pool.shutdown();
  }
});

test("a pool that is not shut down keeps working across idle periods", async () => {
  const pool = createPool({ threads: 1 })({ add });
  try {
    for (let round = 0; round < 3; round++) {
      await sleep(30);
      assert.equal(await pool.call.add([round, 1]), round + 1);
    }
  } finally {
    await pool.shutdown();
  }
});

test("debug traces the lifecycle on stderr (KNITTING_DEBUG=1 or debug: true)", () => {
  const script = fileURLToPath(new URL("./fixtures/exit-after-shutdown.mjs", import.meta.url));
  const child = spawnSync(process.execPath, [script], {
    encoding: "utf8",
    timeout: 20_000,
    env: { ...process.env, KNITTING_DEBUG: "1" },
  });
  assert.equal(child.status, 0, child.stderr);
  assert.match(child.stderr, /knitting-native:lifecycle pool \d+ .* created: 2 workers, tasks add/);
  assert.match(child.stderr, /worker 0 \(threadId \d+\) ready/);
  assert.match(child.stderr, /shutdown:/);
  const quiet = spawnSync(process.execPath, [script], {
    encoding: "utf8",
    timeout: 20_000,
    env: { ...process.env, KNITTING_DEBUG: "" },
  });
  assert.equal(quiet.stderr, "", "no traces unless asked");
});
