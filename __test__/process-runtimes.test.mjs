// process-workers.test.mjs and host-death.test.mjs again under this Node host, with worker processes
// of Bun and of Deno (worker.processRuntime "bun" / "deno"): the same shared
// memory, inherit and named modes, crashes, timeouts and aborts.
//
// The executables: KNITTING_TEST_BUN / KNITTING_TEST_DENO, else bun / deno on
// PATH. Without one the runtime's test is skipped, saying so, unless
// KNITTING_TEST_REQUIRE_RUNTIMES=1 (CI sets it), which makes that a failure.
import test from "node:test";
import assert from "node:assert/strict";
import { accessSync, constants } from "node:fs";
import { join, delimiter } from "node:path";
import { runtime } from "./fixtures/runtime.mjs";
import { runTestFiles } from "./helpers/children.mjs";

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
  test(`a Node host with worker.processRuntime "${name}" passes process-workers.test.mjs and host-death.test.mjs`, {
    skip,
  }, () => {
    assert.notEqual(exe, null, `KNITTING_TEST_REQUIRE_RUNTIMES=1 but no ${name} executable was found`);
    const env = { KNITTING_TEST_PROCESS_RUNTIME: name, KNITTING_TEST_PROCESS_EXECUTABLE: exe };
    runTestFiles(["process-workers.test.mjs", "host-death.test.mjs"], env, 18);
  });
}
