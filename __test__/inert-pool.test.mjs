// knitting's pattern: a task module creates its pool at the top level and
// keeps only the calls behind isMain. Each fixture runs as a child process;
// its workers import it again and get an inert pool there.
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fixture, ROOT } from "./helpers/children.mjs";
import { hasUsing, runtime as hostRuntime } from "./fixtures/runtime.mjs";

function run(name, runtime) {
  const args = hostRuntime === "deno" ? ["run", "-A", fixture(name)] : [fixture(name)];
  const env = { ...process.env, KNITTING_DEBUG: "", TRAP_RUNTIME: runtime };
  const r = spawnSync(process.execPath, args, { cwd: ROOT, env, encoding: "utf8", timeout: 60_000 });
  assert.equal(r.error, undefined, String(r.error));
  assert.equal(r.status, 0, `exit status; stderr: ${r.stderr.slice(0, 2000)}`);
  return Object.fromEntries(
    r.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)]),
  );
}

/** What the worker's use of its inert pool threw, as "<code> <message>". */
function assertRefused(got, what) {
  assert.match(got, /^KNT_POOL_IN_WORKER /, `the code of ${what}`);
  assert.ok(got.includes(`${what} was used inside a pool worker`), got);
  assert.match(got, /a pool cannot be started or used/);
  assert.match(got, /behind `if \(isMain\)/);
}

for (const runtime of ["thread", "process"]) {
  test(`a pool created at a task module's top level serves the host; in its workers it is inert (${runtime})`, () => {
    const out = run("top-level-pool.mjs", runtime);
    assert.equal(out.add, "3", "the host's pool answers");
    assertRefused(out["call.add"], "pool.call.add()");
    assertRefused(out["call.other"], "pool.call.notATask()");
    assertRefused(out.shutdown, "pool.shutdown()");
    assertRefused(out.single, "pool.call()");
    assert.equal(out["single.host"], "2", "task({ f }).createPool's pool answers in the host");
    assert.equal(out.harmless, "harmless", "ready resolves and disposing does nothing");
  });

  test(`\`using pool = createPool(...)(...)\` at a task module's top level (${runtime} workers)`, {
    skip: hasUsing ? false : "this runtime has no `using` syntax",
  }, () => {
    const out = run("top-level-using.mjs", runtime);
    assert.equal(out.add, "3");
    assertRefused(out["call.add"], "pool.call.add()");
  });
}
