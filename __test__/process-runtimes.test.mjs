// process-workers.test.mjs again under this Node host, with worker processes
// of Bun and of Deno (worker.processRuntime "bun" / "deno"): the same shared
// memory, inherit and named modes, crashes, timeouts and aborts.
//
// The executables: KNITTING_TEST_BUN / KNITTING_TEST_DENO, else bun / deno on
// PATH. Without one the runtime's test is skipped, saying so, unless
// KNITTING_TEST_REQUIRE_RUNTIMES=1 (CI sets it), which makes that a failure.
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { join, delimiter } from "node:path";
import { fileURLToPath } from "node:url";
import { runtime } from "./fixtures/runtime.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const required = process.env.KNITTING_TEST_REQUIRE_RUNTIMES === "1";

function executable(name) {
  const given = process.env[`KNITTING_TEST_${name.toUpperCase()}`];
  const candidates = given
    ? [given]
    : (process.env.PATH || "")
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, name));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // next
    }
  }
  return null;
}

for (const name of ["bun", "deno"]) {
  const exe = executable(name);
  const skip =
    process.platform !== "linux"
      ? "process workers need Linux"
      : runtime !== "node"
        ? `${runtime}: this file runs node --test (a Node host)`
        : exe === null && !required
          ? `no ${name} executable (set KNITTING_TEST_${name.toUpperCase()} or put ${name} on PATH)`
          : false;
  test(`a Node host with worker.processRuntime "${name}" passes process-workers.test.mjs`, { skip }, () => {
    assert.notEqual(exe, null, `KNITTING_TEST_REQUIRE_RUNTIMES=1 but no ${name} executable was found`);
    const env = { ...process.env, KNITTING_TEST_PROCESS_RUNTIME: name, KNITTING_TEST_PROCESS_EXECUTABLE: exe };
    delete env.KNITTING_DEBUG;
    delete env.NODE_TEST_CONTEXT; // a fresh test run, not a subtest of this one
    const child = spawnSync(
      process.execPath,
      ["--test", "--test-concurrency=1", "--test-reporter=tap", "__test__/process-workers.test.mjs"],
      {
        cwd: root,
        env,
        encoding: "utf8",
        timeout: 600_000,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const out = `${child.stdout}${child.stderr}`;
    const failed = out.split("\n").filter((l) => /^\s*not ok /.test(l));
    assert.equal(child.error, undefined, String(child.error));
    assert.deepEqual(failed, [], out.slice(-4000));
    assert.equal(child.status, 0, out.slice(-4000));
    const passed = /^# pass (\d+)$/m.exec(out);
    assert.ok(passed && Number(passed[1]) >= 14, `the file ran its tests: ${passed && passed[1]}`);
  });
}
