// Tests that run something in a child process: where the fixtures are, and
// whole test files run again in a fresh `node --test` with another setting.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The package root (the children's working directory). */
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The path of __test__/fixtures/`name`. */
export const fixture = (name) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

/**
 * Runs `files` (under __test__/) in a fresh `node --test` with `env` added to
 * this process's environment; asserts that none of their tests failed and
 * that at least `atLeast` passed (so a file that ran nothing fails too).
 */
export function runTestFiles(files, env, atLeast) {
  const childEnv = { ...process.env, ...env };
  delete childEnv.KNITTING_DEBUG;
  delete childEnv.NODE_TEST_CONTEXT; // a fresh test run, not a subtest of this one
  const child = spawnSync(
    process.execPath,
    ["--test", "--test-concurrency=1", "--test-reporter=tap", ...files.map((f) => `__test__/${f}`)],
    { cwd: ROOT, env: childEnv, encoding: "utf8", timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
  );
  const out = `${child.stdout}${child.stderr}`;
  const lines = out.split("\n");
  const failed = lines.filter((l) => /^\s*not ok /.test(l));
  assert.equal(child.error, undefined, String(child.error));
  // What each failing test said (its TAP block), not only the end of the run.
  const said = lines
    .flatMap((l, i) => (/^\s*not ok /.test(l) ? [lines.slice(i, i + 40).join("\n")] : []))
    .join("\n")
    .slice(0, 8000);
  assert.deepEqual(failed, [], said || out.slice(-4000));
  assert.equal(child.status, 0, out.slice(-4000));
  const passed = /^# pass (\d+)$/m.exec(out);
  assert.ok(passed && Number(passed[1]) >= atLeast, `${files.join(", ")} ran their tests: ${passed && passed[1]}`);
}
