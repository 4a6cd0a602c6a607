import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createPool, WorkerExitError } from "../index.mjs";
import { add, delayed, exitWorker } from "./fixtures/tasks.mjs";

test("a worker that exits rejects the calls it held with WorkerExitError and is replaced", async () => {
  // Private lanes: the two slow calls are on different workers' lanes.
  const pool = createPool({ threads: 2, host: { steal: false }, worker: { allowExit: true } })({
    add,
    delayed,
    exitWorker,
  });
  try {
    // Keep both lanes busy, then kill one worker from inside a task.
    const slow = [pool.call.delayed(["a", 200]), pool.call.delayed(["b", 200])];
    const exit = pool.call.exitWorker(7).then(
      () => assert.fail("exitWorker must not resolve"),
      (err) => err,
    );
    const err = await exit;
    assert.ok(err instanceof WorkerExitError, `got ${err}`);
    assert.equal(err.code, "KNT_WORKER_EXIT");
    assert.equal(err.exitCode, 7);
    assert.match(err.message, /worker \d+ .*exited with code 7/);
    const settled = await Promise.allSettled(slow);
    for (const s of settled) {
      // A call on the dead worker's lane rejects the same way; the other completes.
      if (s.status === "rejected") assert.ok(s.reason instanceof WorkerExitError);
      else assert.ok(["a", "b"].includes(s.value));
    }
    assert.ok(
      settled.some((s) => s.status === "fulfilled"),
      "the other worker's call completed",
    );
    // The pool keeps serving on both lanes.
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => pool.call.add([i, 1])));
    results.forEach((r, i) => assert.equal(r, i + 1));
  } finally {
    await pool.shutdown();
  }
});

test("a task module that fails to import rejects calls with that error, no hang", async () => {
  const { broken } = await import("./fixtures/broken-task.mjs");
  const pool = createPool({ threads: 1 })({ broken });
  try {
    const err = await pool.call.broken(1).then(
      () => assert.fail("must reject"),
      (e) => e,
    );
    assert.match(String(err && err.message), /fails in workers on purpose/);
    await assert.rejects(pool.call.broken(2), /fails in workers on purpose/);
  } finally {
    await pool.shutdown();
  }
});

test("process.exit() with a busy pool exits cleanly", () => {
  const script = fileURLToPath(new URL("./fixtures/exit-while-busy.mjs", import.meta.url));
  const child = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 20_000 });
  assert.equal(child.error, undefined, String(child.error));
  assert.equal(child.signal, null, `died by ${child.signal}: ${child.stderr}`);
  assert.equal(child.status, 3, child.stderr);
});
