// The core and lifecycle test files again, with worker processes instead of
// worker threads: KNITTING_WORKER_RUNTIME=process makes "process" the
// default `worker.runtime` of every pool they create. Files whose checks are
// about threads themselves (thread ids, resourceLimits, Worker.terminate)
// stay thread-only; worker processes have their own file for those
// (process-workers.test.mjs).
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { skipOn } from "./fixtures/runtime.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const FILES = ["pool.test.mjs", "stress.test.mjs", "lifecycle-options.test.mjs", "codec.test.mjs", "bare.test.mjs"];

const nodeTest =
  "runs the files again through node --test; process-workers.test.mjs covers this runtime's worker processes";
test(`with worker processes: ${FILES.join(", ")}`, { skip: skipOn({ bun: nodeTest, deno: nodeTest }) }, () => {
  const env = { ...process.env, KNITTING_WORKER_RUNTIME: "process" };
  delete env.KNITTING_DEBUG;
  delete env.NODE_TEST_CONTEXT; // a fresh test run, not a subtest of this one
  const child = spawnSync(
    process.execPath,
    ["--test", "--test-concurrency=1", "--test-reporter=tap", ...FILES.map((f) => `__test__/${f}`)],
    { cwd: root, env, encoding: "utf8", timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
  );
  const out = `${child.stdout}${child.stderr}`;
  const failed = out.split("\n").filter((l) => /^\s*not ok /.test(l));
  assert.equal(child.error, undefined, String(child.error));
  assert.deepEqual(failed, [], out.slice(-4000));
  assert.equal(child.status, 0, out.slice(-4000));
  const passed = /^# pass (\d+)$/m.exec(out);
  assert.ok(passed && Number(passed[1]) >= 40, `the files ran their tests: ${passed && passed[1]}`);
});
