// The `permission` option: Node's permission model for worker processes,
// refusals at createPool for what a runtime cannot enforce, and the
// process.exit / process.abort guard of worker threads.
import test from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, writeFileSync, existsSync, rmSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createPool } from "../index.mjs";
import * as T from "./fixtures/permission-tasks.mjs";
import { scaled } from "./fixtures/permission-importer.mjs";
import { throwLater, sleepThen, whoAmI } from "./fixtures/fault-tasks.mjs";
import { runtime } from "./fixtures/runtime.mjs";

const linux = process.platform === "linux";
// Explicit, so that KNITTING_WORKER_RUNTIME=process leaves these pools threads.
const THREAD = { runtime: "thread" };
// Node worker processes' permission model: a Bun or Deno host refuses a
// policy for its worker processes (the test after these says so).
const skip = !linux
  ? "process workers need Linux"
  : runtime !== "node"
    ? `${runtime}: these check Node's permission model in Node worker processes of a Node host; ` +
      `a ${runtime} host refuses a policy for worker processes (tested below)`
    : false;
// Resolved, so that the paths given match what the worker's runtime checks.
const base = realpathSync(mkdtempSync(join(tmpdir(), "knt-perm-")));
const dirA = join(base, "a");
const dirB = join(base, "b");
mkdirSync(dirA);
mkdirSync(dirB);
writeFileSync(join(dirA, "in.txt"), "inside");
writeFileSync(join(dirB, "out.txt"), "outside");
test.after(() => rmSync(base, { recursive: true, force: true }));

function processPool(permission, worker = {}) {
  return createPool({ threads: 1, permission, worker: { runtime: "process", ...worker } })(T);
}

function invalidOption(pattern) {
  return (err) => {
    assert.ok(err instanceof TypeError, `a TypeError, got ${err}`);
    assert.equal(err.code, "KNT_INVALID_OPTION");
    assert.match(err.message, pattern);
    return true;
  };
}

test("read: [dirA]: a file in dirA is read, one outside gets Node's permission error", { skip }, async () => {
  const pool = processPool({ read: [dirA] });
  try {
    assert.deepEqual(await pool.call.readText(join(dirA, "in.txt")), { ok: true, value: "inside" });
    const outside = await pool.call.readText(join(dirB, "out.txt"));
    assert.equal(outside.ok, false, JSON.stringify(outside));
    assert.equal(outside.code, "ERR_ACCESS_DENIED");
    assert.equal(outside.permission, "FileSystemRead");
    // The host itself is not restricted.
    assert.equal(await pool.call.identity("still serving"), "still serving");
  } finally {
    await pool.shutdown();
  }
});

test("write: [dirA]: a file in dirA is written, one outside gets Node's permission error", { skip }, async () => {
  const pool = processPool({ read: [dirA], write: [dirA] });
  try {
    const inside = await pool.call.writeText([join(dirA, "new.txt"), "x"]);
    assert.equal(inside.ok, true, JSON.stringify(inside));
    assert.ok(existsSync(join(dirA, "new.txt")));
    const outside = await pool.call.writeText([join(dirB, "new.txt"), "x"]);
    assert.equal(outside.ok, false, JSON.stringify(outside));
    assert.equal(outside.code, "ERR_ACCESS_DENIED");
    assert.equal(outside.permission, "FileSystemWrite");
    assert.ok(!existsSync(join(dirB, "new.txt")));
  } finally {
    await pool.shutdown();
  }
});

test("a task module's own import outside read: the call fails with an error naming the file and permission.read", {
  skip,
}, async () => {
  const pool = createPool({ threads: 1, permission: { read: [dirA] }, worker: { runtime: "process" } })({ scaled });
  try {
    const err = await pool.call.scaled(2).then(
      () => assert.fail("must reject"),
      (e) => e,
    );
    assert.match(err.message, /permission policy denies read of .*permission-helper\.mjs .*permission\.read/);
  } finally {
    await pool.shutdown();
  }
  // Inside read (the strict baseline reads the working directory), it loads.
  const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
  const ok = createPool({ threads: 1, permission: { read: [fixtures] }, worker: { runtime: "process" } })({ scaled });
  try {
    assert.equal(await ok.call.scaled(2), 20);
  } finally {
    await ok.shutdown();
  }
});

test('"strict": no child processes; run: true allows them', { skip }, async () => {
  const strict = processPool("strict");
  try {
    const denied = await strict.call.runChild();
    assert.equal(denied.ok, false, JSON.stringify(denied));
    assert.equal(denied.code, "ERR_ACCESS_DENIED");
  } finally {
    await strict.shutdown();
  }
  const allowed = processPool({ run: true });
  try {
    assert.deepEqual(await allowed.call.runChild(), { ok: true, value: 0 });
  } finally {
    await allowed.shutdown();
  }
});

test("env: { allow: [...] } is refused for Node worker processes, which cannot scope the environment; worker.env can", {
  skip,
}, async () => {
  assert.throws(
    () => processPool({ env: { allow: ["A"] } }),
    invalidOption(/permission\.env\.allow cannot be enforced by Node\.js v\d+.* worker processes.*worker\.env/),
  );
  // What the refusal points to: only the variables given reach the worker.
  const pool = processPool({ read: [dirA] }, { env: { A: "a" } });
  try {
    assert.deepEqual(await pool.call.envOf(["A", "B"]), ["a", null]);
  } finally {
    await pool.shutdown();
  }
});

test("a scoped net list is refused for Node worker processes (all-or-nothing or no network permission)", {
  skip,
}, () => {
  assert.throws(
    () => processPool({ net: ["example.com:443"] }),
    invalidOption(/permission\.net cannot be enforced by Node\.js v\d+.* worker processes/),
  );
  assert.throws(() => processPool({ net: [] }), invalidOption(/permission\.net cannot be enforced by Node\.js/));
  assert.throws(
    () => processPool({ denyRead: [dirB] }),
    invalidOption(/permission\.denyRead cannot be enforced by Node\.js.*no deny lists/),
  );
  assert.throws(
    () => processPool({ run: ["ls"] }),
    invalidOption(/permission\.run cannot be enforced.*all-or-nothing/),
  );
  assert.throws(() => processPool({ ffi: false }), invalidOption(/permission\.ffi cannot be enforced.*--allow-addons/));
  assert.throws(
    () => processPool({ read: [dirA] }, { execArgv: ["--allow-fs-read=*"] }),
    invalidOption(/worker\.execArgv has --allow-fs-read=\*/),
  );
  // net: true is not a restriction: accepted.
  return processPool({ net: true }).shutdown();
});

const onlyOtherHosts = !linux
  ? "process workers need Linux"
  : runtime === "node"
    ? "node: the host maps Node's permission flags (tested above)"
    : false;
test("a Bun or Deno host refuses a policy for its worker processes, naming the runtime (flags not mapped)", {
  skip: onlyOtherHosts,
}, () => {
  assert.throws(
    () => processPool({ read: [dirA] }),
    invalidOption(new RegExp(`permission is not supported yet for worker\\.processRuntime "${runtime}"`)),
  );
  assert.throws(
    () => processPool("strict", { processRuntime: "node" }),
    invalidOption(/needs a Node\.js host.*this host runs/),
  );
  // Nothing restricted: accepted.
  return processPool({ mode: "unsafe", console: false }).shutdown();
});

test(
  "thread workers: a restriction they cannot enforce, and any policy with the inliner, are " + "refused at createPool",
  () => {
    assert.throws(
      () => createPool({ threads: 1, worker: THREAD, permission: { read: [dirA] } })(T),
      invalidOption(/permission\.read cannot be enforced by worker threads .*share the host's process/),
    );
    assert.throws(
      () => createPool({ threads: 1, worker: THREAD, permission: { env: { allow: ["A"] } } })(T),
      invalidOption(/permission\.env\.allow cannot be enforced by worker threads/),
    );
    assert.throws(
      () => createPool({ threads: 1, worker: THREAD, inliner: {}, permission: "strict" })(T),
      invalidOption(/permission cannot be enforced with inliner/),
    );
    // "strict", and any policy that restricts something, would restrict nothing on threads: refused.
    for (const permission of ["strict", { mode: "strict" }, { console: false }, { read: true, write: true }]) {
      assert.throws(
        () => createPool({ threads: 1, worker: THREAD, permission })(T),
        invalidOption(/cannot be enforced by worker threads.*share the host's process.*worker\.runtime "process"/),
        JSON.stringify(permission),
      );
    }
    assert.throws(
      () => createPool({ threads: 1, worker: THREAD, permission: "strict" })(T),
      invalidOption(/^knitting-native: permission \(mode "strict"\) cannot be enforced by worker threads/),
    );
    // A policy that restricts nothing but the console: accepted.
    createPool({ threads: 1, worker: THREAD, permission: { mode: "unsafe", console: false } })(T).shutdown();
    assert.throws(
      () => createPool({ permission: "open" })(T),
      invalidOption(/permission must be "unsafe", "strict" or a policy object/),
    );
    assert.throws(() => createPool({ permission: { reed: [] } })(T), invalidOption(/unknown option permission\.reed/));
    assert.throws(
      () => createPool({ permission: { mode: "unsafe", read: [dirA] } })(T),
      invalidOption(/permission\.read has no effect with permission\.mode "unsafe"/),
    );
    assert.throws(
      () => createPool({ permission: { read: [5] } })(T),
      invalidOption(/permission\.read\[0\] must hold paths/),
    );
    assert.throws(
      () => createPool({ permission: { env: { files: ".env" } } })(T),
      invalidOption(/permission\.env\.files is not supported/),
    );
  },
);

test(
  "a thread-worker task calling process.exit(1) gets a clear error in every pool (no policy needed), and the " +
    "next call on that worker succeeds",
  async () => {
    const pool = createPool({ threads: 1, worker: THREAD })(T);
    try {
      const before = await pool.call.whoami();
      const err = await pool.call.exitWith(1).then(
        () => assert.fail("must reject"),
        (e) => e,
      );
      assert.equal(err.code, "KNT_PROCESS_EXIT_REFUSED", String(err));
      assert.equal(err.task, "exitWith");
      assert.match(err.message, /process\.exit\(\) was called by task "exitWith" in a worker thread and refused/);
      assert.match(err.message, /worker\.allowExit: true/);
      // After an await, the task is still named.
      const late = await pool.call.exitAfterAwait(2).then(
        () => assert.fail("must reject"),
        (e) => e,
      );
      assert.equal(late.code, "KNT_PROCESS_EXIT_REFUSED");
      assert.equal(late.task, "exitAfterAwait");
      // The same worker thread answers the next call.
      assert.deepEqual(await pool.call.whoami(), before);
      assert.equal(await pool.call.identity(42), 42);
    } finally {
      await pool.shutdown();
    }
  },
);

test("process.kill, process.reallyExit (and Deno.exit on Deno) are refused in thread-worker tasks too", async () => {
  const pool = createPool({ threads: 1, worker: THREAD })(T);
  try {
    const before = await pool.call.whoami();
    const names = [
      ["killSelf", "process.kill()"],
      ["reallyExitWith", "process.reallyExit()"],
    ];
    if (runtime === "deno") names.push(["runtimeExit", "Deno.exit()"]);
    for (const [name, what] of names) {
      const err = await pool.call[name](5).then(
        () => assert.fail(`${name} must reject`),
        (e) => e,
      );
      assert.equal(err.code, "KNT_PROCESS_EXIT_REFUSED", `${name}: ${err}`);
      assert.equal(err.task, name);
      assert.ok(err.message.includes(`${what} was called by task "${name}"`), err.message);
    }
    assert.deepEqual(await pool.call.whoami(), before);
  } finally {
    await pool.shutdown();
  }
});

test("worker.allowExit: true lets a task end its worker thread (replaced); kill and abort stay refused", async () => {
  const pool = createPool({ threads: 1, worker: { ...THREAD, allowExit: true } })(T);
  try {
    const err = await pool.call.exitWith(4).then(
      () => assert.fail("must reject"),
      (e) => e,
    );
    assert.equal(err.code, "KNT_WORKER_EXIT", String(err));
    assert.equal(err.exitCode, 4);
    const killed = await pool.call.killSelf().then(
      () => assert.fail("must reject"),
      (e) => e,
    );
    assert.equal(killed.code, "KNT_PROCESS_EXIT_REFUSED");
    assert.equal(await pool.call.identity(7), 7);
  } finally {
    await pool.shutdown();
  }
  assert.throws(
    () => createPool({ threads: 1, worker: { allowExit: "yes" } })(T),
    invalidOption(/worker\.allowExit must be a boolean/),
  );
});

test("with the exit guard, an uncaught exception still ends a thread worker (Node's exit let through)", async () => {
  // Node's handler of an uncaught exception in a worker ends it with
  // process.exit(): exit code 1, the exception as the cause.
  for (const permission of [undefined, { mode: "unsafe", console: false }]) {
    const pool = createPool({ threads: 1, worker: THREAD, permission })({ throwLater, sleepThen, whoAmI });
    try {
      const { threadId } = await pool.call.throwLater(50);
      const err = await pool.call.sleepThen(["held", 2000]).then(
        () => assert.fail("must reject"),
        (e) => e,
      );
      assert.equal(err.code, "KNT_WORKER_EXIT", `${JSON.stringify(permission)}: ${err}`);
      // Bun ends such a worker with exit code 0 (docs/api.md, Supported Node.js versions and runtimes).
      assert.equal(err.exitCode, runtime === "bun" ? 0 : 1, JSON.stringify(permission));
      assert.equal(err.threadId, threadId);
      assert.match(String(err.cause && err.cause.message), /late uncaught exception/);
      // A replacement serves.
      assert.notEqual((await pool.call.whoAmI(1)).threadId, threadId);
    } finally {
      await pool.shutdown();
    }
  }
});

test("process.abort() in a thread-worker task is refused under every policy (it would end the host)", async () => {
  for (const permission of [undefined, { mode: "unsafe", console: false }]) {
    const pool = createPool({ threads: 1, worker: THREAD, permission })(T);
    try {
      const before = await pool.call.whoami();
      const err = await pool.call.abortNow().then(
        () => assert.fail("must reject"),
        (e) => e,
      );
      assert.equal(err.code, "KNT_PROCESS_EXIT_REFUSED", String(err));
      assert.equal(err.task, "abortNow");
      assert.deepEqual(await pool.call.whoami(), before);
    } finally {
      await pool.shutdown();
    }
  }
});

test(
  "console: false mutes task code's console (threads and processes); the strict baseline mutes " +
    "it, unsafe does not",
  async () => {
    const cases = [
      [{ threads: 1, worker: THREAD, permission: { mode: "unsafe", console: false } }, true],
      [{ threads: 1, worker: THREAD, permission: "unsafe" }, false],
      [{ threads: 1, worker: THREAD }, false],
    ];
    if (linux)
      cases.push([
        { threads: 1, permission: { mode: "unsafe", console: false }, worker: { runtime: "process" } },
        true,
      ]);
    // The strict baseline (worker processes of a Node host only: refused on threads).
    if (!skip) cases.push([{ threads: 1, permission: "strict", worker: { runtime: "process" } }, true]);
    for (const [options, muted] of cases) {
      const pool = createPool(options)(T);
      try {
        assert.equal(await pool.call.consoleMuted(), muted, JSON.stringify(options));
      } finally {
        await pool.shutdown();
      }
    }
  },
);
