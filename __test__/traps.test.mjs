// Traps a new user falls into, and knitting's behaviours this package
// follows: each trap runs as a child `node` process and is judged by its
// exit and output within a generous time bound (never a timing assertion).
import test from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { receiveMessageOnPort } from "node:worker_threads";
import { createPool } from "../index.mjs";
import * as T from "./fixtures/fault-tasks.mjs";
import * as W from "./fixtures/trap-worker-creates.mjs";
import { bootContext, bump, makeShared, makeSharedLater, sharedInfo } from "./fixtures/trap-tasks.mjs";
import { within, sleep, until } from "./helpers/wait.mjs";
import { runtime as hostRuntime, skipOn } from "./fixtures/runtime.mjs";
import { fixture, ROOT } from "./helpers/children.mjs";

const { resolveOptions } = createRequire(import.meta.url)("../lib/options/index.js");

/** Node's `file` and `--input-type=module -e script` in the host runtime's words. */
function runtimeArgs(args) {
  if (hostRuntime !== "deno") return args;
  if (args[0] === "--input-type=module" && args[1] === "-e") return ["eval", ...args.slice(2)];
  return ["run", "-A", ...args];
}

/**
 * Runs `node args` in the package root; resolves { code, signal, stdout,
 * stderr, timedOut }. A child still running after `limitMs` is killed and
 * reported as timed out (the trap: a process that never ends).
 */
function run(args, { env = {}, limitMs = 30_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, runtimeArgs(args), {
      cwd: ROOT,
      env: { ...process.env, KNITTING_DEBUG: "", ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, limitMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

for (const runtime of ["thread", "process"]) {
  test(
    `trap: a pool called at a task module's top level (no isMain guard) exits at once with ` +
      `KNT_POOL_IN_WORKER (${runtime} workers)`,
    async () => {
      const r = await run([fixture("trap-no-guard.mjs")], { env: { TRAP_RUNTIME: runtime } });
      assert.equal(r.timedOut, false, `the script must end by itself; stderr: ${r.stderr.slice(0, 2000)}`);
      assert.equal(r.code, 1, `exit code; stderr: ${r.stderr.slice(0, 2000)}`);
      assert.match(r.stderr, /pool\.call\.add\(\) was used inside a pool worker/);
      assert.match(r.stderr, /a pool cannot be started or used/);
      assert.match(r.stderr, /Put the calls behind `if \(isMain\)/);
      // Bun prints code: "..." (Node '...'); Deno prints no properties of an uncaught error.
      if (hostRuntime !== "deno") assert.match(r.stderr, /code: ['"]KNT_POOL_IN_WORKER['"]/);
      assert.doesNotMatch(r.stdout, /result/, "the call rejects with that error");
    },
  );
}

test("trap: a pool in a worker thread started from inside a pool worker is inert too", async () => {
  const r = await run([fixture("trap-nested-worker.mjs")]);
  assert.equal(r.timedOut, false);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /nested: KNT_POOL_IN_WORKER .*started from inside a pool worker/);
});

test(
  "a pool used while a worker imports its task module: pool.ready and the pending calls reject with " +
    "KNT_POOL_IN_WORKER, and no replacement starts",
  async () => {
    const pool = createPool({ threads: 2 })({ add: W.add });
    // Replacements, counted by the pool's own event (the first two workers' events come too).
    let spawns = -2;
    pool.on("workerCreate", () => spawns++);
    try {
      const call = pool.call.add([1, 2]);
      await assert.rejects(
        within(pool.ready, 30_000, "pool.ready"),
        (err) => err.code === "KNT_POOL_IN_WORKER" && /isMain/.test(err.message) && /\n\s+at /.test(err.stack),
      );
      await assert.rejects(within(call, 30_000, "pending call"), { code: "KNT_POOL_IN_WORKER" });
      await assert.rejects(pool.call.add([1, 2]), { code: "KNT_POOL_IN_WORKER" }, "later calls too");
      await sleep(300);
      assert.equal(spawns, 0, "no worker started after the refusal");
    } finally {
      await pool.shutdown();
    }
  },
);

for (const [runtime, doorbell] of [
  ["thread", true],
  ["thread", false],
  ["process", true],
]) {
  test(
    `trap: a script that never calls shutdown() ends once its pool is idle (${runtime} ` +
      `workers${doorbell ? "" : ", no doorbell"})`,
    async () => {
      const r = await run([fixture("trap-idle.mjs")], {
        env: { TRAP_RUNTIME: runtime, TRAP_DOORBELL: doorbell ? "1" : "0" },
      });
      assert.equal(r.timedOut, false, `the process must end by itself; stdout: ${r.stdout}`);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /first 3\nidle-cpu [\d.]+\nbatch 5050\nslow 150\n/,
        "every call, the late ones included, settled before the exit",
      );
      // Two spinning workers would burn ~2 cores (a ratio near 2); parked ones almost nothing.
      const idleCpu = Number(/idle-cpu ([\d.]+)/.exec(r.stdout)[1]);
      assert.ok(idleCpu < 0.5, `idle pool used ${idleCpu} of a core`);
    },
  );
}

const denoListen =
  "the task module's listen() fails before the worker reports ready on Deno, so the pool rejects pool.ready " +
  "(a lane whose first worker dies while starting fails the pool) and no back-off follows; " +
  "Deno also prints each worker's uncaught error itself";
test("trap: workers dying right after start (EADDRINUSE outside the guard) fail the pool at the " +
  "second death in a row, and the error is printed once without any debug flag", {
  skip: skipOn({ deno: denoListen }),
}, async () => {
  const r = await run([fixture("trap-listen.mjs")], { env: { TRAP_WINDOW_MS: "4000" } });
  assert.equal(r.timedOut, false, r.stderr);
  assert.equal(r.code, 0, r.stderr);
  const warnings = r.stderr.match(/KNT_WORKER_START_FAILED/g) || [];
  assert.equal(warnings.length, 1, `one warning per pool; stderr: ${r.stderr}`);
  assert.match(r.stderr, /The first error: Error: listen EADDRINUSE[^\n]*\n\s+at /, "with its stack");
  const starts = Number(/starts (\d+)/.exec(r.stdout)[1]);
  // Replaced at once, 2 lanes start a worker every ~0.1-0.2 s each: 40 or
  // more in 4 s. A lane's first death is replaced, its second fails the
  // pool (no worker ever lived 2 s past ready), and nothing starts after.
  assert.ok(starts >= 1 && starts <= 2, `${starts} replacements in 4 s`);
  // Both lanes may report ready before either dies: then pool.ready resolved.
  assert.match(r.stdout, /^ready (resolved|rejected KNT_WORKER_START_FAILED)$/m);
});

test("trap: a server's listen() outside the guard: pool.ready and the calls reject with one " +
  "KNT_WORKER_START_FAILED error (cause EADDRINUSE) naming the fix, and shutdown() resolves", {
  skip: skipOn({ deno: denoListen }),
}, async () => {
  const r = await run([fixture("trap-listen-fails.mjs")], { limitMs: 60_000 });
  assert.equal(r.timedOut, false, r.stderr);
  assert.equal(r.code, 0, r.stderr);
  const rejected =
    /rejected KNT_WORKER_START_FAILED \(cause EADDRINUSE\): knitting-native: the pool's workers cannot start: /.source +
    /worker 0 died 2 times in a row while starting.*listen EADDRINUSE.*listen\(\) belong behind `if \(isMain\)`/.source;
  for (const what of ["ready", "call", "later"]) {
    assert.match(r.stdout, new RegExp(`^${what} ${rejected}$`, "m"), `${what}; stdout: ${r.stdout}`);
  }
  assert.match(r.stdout, /^one error true$/m, "pool.ready and the calls reject with the same error");
  assert.match(r.stdout, /^shutdown resolved$/m);
  assert.equal((r.stderr.match(/KNT_WORKER_START_FAILED/g) || []).length, 1, r.stderr);
});

test(
  "a pool whose only lane's replacements keep dying before they are ready fails: the waiting calls " +
    "and later ones reject with KNT_WORKER_START_FAILED, the first error as its cause",
  async () => {
    const r = await run(
      [
        "--input-type=module",
        "-e",
        `
    import { createPool } from ${JSON.stringify(new URL("../index.mjs", import.meta.url).href)};
    import * as T from ${JSON.stringify(new URL("./fixtures/fault-tasks.mjs", import.meta.url).href)};
    const pool = createPool({ threads: 1, host: { steal: false } })({ add: T.add });
    const internal = pool[Symbol.for("knitting-native.pool")];
    await pool.ready;
    // From now on every worker dies while starting: its bootstrap ends it.
    internal.bootstrap = {
      href: ${JSON.stringify(new URL("./fixtures/trap-boot-dies.mjs", import.meta.url).href)},
      name: "boot",
      data: null,
    };
    internal.killedFor[0] = new Error("replaced by the test"); // as a hard timeout does: not a start-up failure
    internal.workers[0].terminate();
    // Call once the first replacement has died (its calls would get its
    // WorkerExitError): the second start is then the lane's second death.
    while (internal.startup.failures[0] < 1 && internal.failure === null)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const call = pool.call.add([1, 2]).then(
      (v) => "value " + v,
      (err) => "rejected " + err.code + " " + err.cause.message,
    );
    console.log(await call);
    // Later calls reject with it too: no replacement starts.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    console.log(
      "later",
      await pool.call.add([1, 2]).then((v) => "value " + v, (err) => "rejected " + err.code + " " + err.cause.message),
    );
    await pool.shutdown();
  `,
      ],
      { limitMs: 60_000 },
    );
    assert.equal(r.timedOut, false, r.stderr);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        /^rejected KNT_WORKER_START_FAILED boot: this worker dies while starting\n/.source +
          /later rejected KNT_WORKER_START_FAILED boot: this worker dies while starting\n/.source,
      ),
    );
    assert.equal((r.stderr.match(/KNT_WORKER_START_FAILED/g) || []).length, 1, r.stderr);
  },
);

test(
  "a lane whose replacements keep dying while another worker serves backs off; the pool keeps " +
    "serving on that worker",
  async () => {
    const warnings = [];
    const onWarning = (w) => warnings.push(w);
    process.on("warning", onWarning);
    // Stealing: a worker takes calls only once it is ready, so lane 0's never hold any.
    const pool = createPool({ threads: 2 })({ add: T.add });
    const internal = pool[Symbol.for("knitting-native.pool")];
    try {
      await pool.ready;
      // Lane 1's worker lives past 2 s after ready: it shows the tasks run.
      await sleep(2200);
      // From now on every new worker dies while starting: its bootstrap ends it.
      internal.bootstrap = {
        href: new URL("./fixtures/trap-boot-dies.mjs", import.meta.url).href,
        name: "boot",
        data: null,
      };
      internal.killedFor[0] = new Error("replaced by the test"); // as a hard timeout does: not a start-up failure
      internal.workers[0].terminate();
      await until(() => warnings.some((w) => w.code === "KNT_WORKER_START_FAILED"), 30_000, "the warning");
      assert.equal(internal.failure, null, "the pool did not fail");
      assert.match(warnings[0].message, /replacements now back off/);
      for (let i = 0; i < 20; i++) assert.equal(await within(pool.call.add([i, 1]), 30_000, "call"), i + 1);
      assert.equal(internal.failure, null);
      assert.equal(warnings.filter((w) => w.code === "KNT_WORKER_START_FAILED").length, 1, "one warning per pool");
    } finally {
      process.off("warning", onWarning);
      await pool.shutdown();
    }
  },
);

test(
  "a task that kills its worker again and again is not a start-up crash loop: no warning, no " +
    "back-off, queued calls are served",
  async () => {
    const warnings = [];
    const onWarning = (w) => warnings.push(w);
    process.on("warning", onWarning);
    const pool = createPool({ threads: 1, host: { steal: false }, worker: { allowExit: true } })({
      exitNow: T.exitNow,
      add: T.add,
    });
    try {
      await pool.ready;
      for (let i = 0; i < 4; i++) {
        const crash = pool.call.exitNow(3);
        const queued = pool.call.add([i, 1]);
        await assert.rejects(within(crash, 30_000, "crash"), { code: "KNT_WORKER_EXIT" });
        // Placed on the same lane behind the crash: rejected with it, or served by the replacement.
        const r = await within(
          queued.then(
            (v) => v,
            (e) => e.code,
          ),
          30_000,
          "queued call",
        );
        assert.ok(r === i + 1 || r === "KNT_WORKER_EXIT", String(r));
        assert.equal(await within(pool.call.add([i, 2]), 30_000, "call after the crash"), i + 2);
      }
      assert.deepEqual(
        warnings.filter((w) => w.code === "KNT_WORKER_START_FAILED"),
        [],
      );
    } finally {
      process.off("warning", onWarning);
      await pool.shutdown();
    }
  },
);

test(
  "unknown task names: pool.call.nope() throws a TypeError with a code, naming it and listing " + "the tasks",
  async () => {
    const pool = createPool({ threads: 1 })({ add: T.add, echo: T.echo });
    try {
      assert.throws(
        () => pool.call.nope(1),
        (err) =>
          err instanceof TypeError &&
          err.code === "KNT_UNKNOWN_TASK" &&
          /pool\.call\.nope is not a task of this pool; its tasks: add, echo/.test(err.message),
      );
      assert.equal(await pool.call.add([1, 2]), 3);
    } finally {
      await pool.shutdown();
    }
  },
);

test("option errors carry KNT_INVALID_OPTION, and every limit message names the full option path", async () => {
  for (const [options, path] of [
    [{ payload: { maxPayloadBytes: 0 } }, "payload.maxPayloadBytes"],
    [{ payload: { payloadMaxByteLength: 1 << 20, maxPayloadBytes: 2 << 20 } }, "payload.maxPayloadBytes"],
    [{ worker: { timers: { parkMs: -1 } } }, "worker.timers.parkMs"],
    [{ debug: { lifecycle: 1 } }, "debug.lifecycle"],
  ]) {
    assert.throws(
      () => createPool(options),
      (err) => err.code === "KNT_INVALID_OPTION" && err.message.includes(path),
      JSON.stringify(options),
    );
  }
  const pool = createPool({ threads: 1, payload: { maxPayloadBytes: 1000 } })({ echo: T.echo });
  try {
    await assert.rejects(
      pool.call.echo(1, { sigal: null }),
      (err) => err.code === "KNT_INVALID_OPTION" && /unknown option sigal/.test(err.message),
    );
    await assert.rejects(
      pool.call.echo("x".repeat(5000)),
      (err) => err.code === "KNT_VALUE_TOO_LARGE" && /payload\.maxPayloadBytes \(1000\)/.test(err.message),
    );
  } finally {
    await pool.shutdown();
  }
});

test("knitting's balancer object form { strategy } is accepted", () => {
  assert.equal(resolveOptions({ threads: 2, balancer: { strategy: "firstIdle" } }, 64, 1024).balancer, "firstIdle");
  assert.equal(resolveOptions({ threads: 2, balancer: { strategy: "robinRound" } }, 64, 1024).balancer, "roundRobin");
});

test(
  "payload defaults follow the maximum: payloadMaxByteLength alone works, initial clamped, " +
    "maxPayloadBytes = max / 8",
  async () => {
    const o = resolveOptions({ payload: { payloadMaxByteLength: 1 << 20 } }, 64, 1024);
    assert.equal(o.payloadInitialBytes, 1 << 20);
    assert.equal(o.payloadMaxByteLength, 1 << 20);
    assert.equal(o.maxPayloadBytes, (1 << 20) / 8);
    const big = resolveOptions({ payload: { payloadMaxByteLength: 256 << 20 } }, 64, 1024);
    assert.equal(big.payloadInitialBytes, 4 << 20, "the default initial size when it fits");
    assert.equal(big.maxPayloadBytes, 32 << 20);
    const pool = createPool({ threads: 1, payload: { payloadMaxByteLength: 1 << 20 } })({ echo: T.echo });
    try {
      const s = "y".repeat(100_000);
      assert.equal(await pool.call.echo(s), s);
      await assert.rejects(pool.call.echo("z".repeat(200_000)), { code: "KNT_VALUE_TOO_LARGE" });
    } finally {
      await pool.shutdown();
    }
  },
);

test('payload.mode "fixed": the region never grows past its initial size', async () => {
  const pool = createPool({
    threads: 1,
    payload: { mode: "fixed", payloadInitialBytes: 64 * 1024, maxPayloadBytes: 60 * 1024 },
  })({ echo: T.echo });
  try {
    const internal = pool[Symbol.for("knitting-native.pool")];
    assert.equal(internal.payloadSab.growable, false);
    assert.equal(internal.payloadSab.byteLength, 64 * 1024);
    const s = "f".repeat(50_000);
    assert.equal(await pool.call.echo(s), s);
    // Two such payloads at once do not fit: the second waits for room (it is not refused).
    const results = await Promise.allSettled([pool.call.echo(s), pool.call.echo(s)]);
    const why = results.map((r) =>
      r.status === "fulfilled" ? "fulfilled" : `${r.reason && r.reason.code}: ${r.reason && r.reason.message}`,
    );
    assert.ok(
      results.every((r) => r.value === s),
      `both calls return the value: ${why.join("; ")}`,
    );
    assert.equal(internal.payloadSab.byteLength, 64 * 1024, "never grown");
  } finally {
    await pool.shutdown();
  }
});

for (const [label, options] of [
  ["stealing", { threads: 2 }],
  ["private lanes", { threads: 2, host: { steal: false } }],
  ["inline lane", { threads: 1, inliner: {} }],
]) {
  test(
    `SharedArrayBuffers pass by reference to thread workers and back; typed arrays over one keep ` +
      `pointing at the same memory (${label})`,
    async () => {
      const pool = createPool(options)({ bump, makeShared, sharedInfo });
      const internal = pool[Symbol.for("knitting-native.pool")];
      try {
        const sab = new SharedArrayBuffer(16);
        const view = new Int32Array(sab, 4, 2);
        const back = await pool.call.bump(view);
        assert.deepEqual([...new Int32Array(sab)], [0, 1, 1, 0], "the worker wrote into the host's memory");
        assert.ok(back instanceof Int32Array && back.buffer instanceof SharedArrayBuffer);
        assert.equal(back.byteOffset, 4);
        assert.equal(back.length, 2);
        back[0] = 40;
        assert.equal(new Int32Array(sab)[1], 40, "the returned view is over the same memory");
        await Promise.all(Array.from({ length: 300 }, () => pool.call.bump(view)));
        assert.deepEqual([...new Int32Array(sab)], [0, 340, 301, 0], "300 calls, every one on the same memory");
        const made = await pool.call.makeShared(3);
        assert.ok(
          made.buffer instanceof SharedArrayBuffer && made.length === 3,
          "a worker's SharedArrayBuffer reaches the host",
        );
        // A SharedArrayBuffer in a call that goes through the payload region.
        assert.deepEqual(await pool.call.sharedInfo({ sab, big: "x".repeat(5000) }), {
          shared: true,
          bytes: 16,
          big: 5000,
        });
        if (internal.sharedRefs !== null && internal.topology.inline === null) {
          assert.equal(internal.sharedRefs.live.size, 0, "settled calls release their buffers");
          assert.equal(internal.sharedRefs.received.size, 0, "every buffer a worker sent was taken");
        }
      } finally {
        await pool.shutdown();
      }
    },
  );
}

for (const [label, options] of [
  ["stealing", { threads: 2 }],
  ["private lanes", { threads: 2, host: { steal: false } }],
]) {
  test(`an answer discarded after an abort leaves none of its SharedArrayBuffers behind (${label})`, async () => {
    const pool = createPool(options)({ makeShared, makeSharedLater });
    const internal = pool[Symbol.for("knitting-native.pool")];
    const refs = internal.sharedRefs;
    try {
      // Rounds of two calls, each aborted once its worker has started it; the
      // tasks answer only after that (gate[1]), so their answers come late.
      const gate = new Int32Array(new SharedArrayBuffer(8));
      for (let round = 0; round < 6; round++) {
        Atomics.store(gate, 1, 0);
        const acs = [new AbortController(), new AbortController()];
        const late = acs.map((ac, i) =>
          // One of the two big enough for the payload region (its block must be freed too).
          pool.call.makeSharedLater([2, i ? "x".repeat(2000) : "", gate], { signal: ac.signal }),
        );
        await until(() => Atomics.load(gate, 0) === 2 * (round + 1), 30_000, `round ${round} started`);
        for (const ac of acs) ac.abort();
        await Promise.all(late.map((p) => assert.rejects(p, (err) => err.name === "AbortError")));
        Atomics.store(gate, 1, 1);
        // An aborted call keeps its slot until its worker answers: wait for the late answers.
        await until(() => internal.inFlight === 0, 30_000, `round ${round}: the late answers`);
      }
      // Answers decoded after them read every worker's port past the discarded answers' buffers.
      for (let i = 0; i < 8; i++) {
        const made = await pool.call.makeShared(1);
        assert.ok(made.buffer instanceof SharedArrayBuffer);
      }
      assert.equal(refs.received.size, 0, "no buffer of a discarded answer is kept");
      for (let lane = 0; lane < refs.ports.length; lane++) {
        assert.equal(receiveMessageOnPort(refs.ports[lane]), undefined, `lane ${lane}: nothing left on the port`);
      }
      assert.equal(internal.inFlight, 0);
    } finally {
      await pool.shutdown();
    }
  });
}

test(
  "a SharedArrayBuffer to a worker process is refused with a clear error naming the alternative; " +
    "the pool keeps serving",
  async () => {
    const pool = createPool({ threads: 1, worker: { runtime: "process" } })({ bump, sharedInfo });
    try {
      for (const arg of [new Int32Array(new SharedArrayBuffer(8)), { sab: new SharedArrayBuffer(8), big: "" }]) {
        await assert.rejects(
          pool.call.sharedInfo(arg),
          (err) =>
            err instanceof TypeError &&
            err.code === "KNT_VALUE_UNSERIALIZABLE" &&
            /cannot be sent to or from a worker process/.test(err.message) &&
            /typed array to send it by value/.test(err.message) &&
            /worker\.runtime "thread"/.test(err.message),
        );
      }
      const plain = await pool.call.bump(new Int32Array([1, 2]));
      assert.deepEqual([...plain], [2, 3], "a copied typed array still works");
    } finally {
      await pool.shutdown();
    }
  },
);

test("worker.bootstrap gets (data, { thread, totalNumberOfThread, runtime })", async () => {
  const pool = createPool({
    threads: 2,
    host: { steal: false, dispatcher: "per-thread" },
    worker: { bootstrap: { href: "./fixtures/trap-boot-context.mjs", name: "boot", data: { tag: "t1" } } },
  })({ bootContext });
  try {
    await pool.ready;
    const seen = new Set();
    for (let i = 0; i < 200 && seen.size < 2; i++) seen.add(JSON.stringify(await pool.call.bootContext()));
    const contexts = [...seen].map((s) => JSON.parse(s)).sort((a, b) => a.context.thread - b.context.thread);
    assert.deepEqual(contexts[0], {
      data: { tag: "t1" },
      context: { thread: 0, totalNumberOfThread: 2, runtime: hostRuntime },
      frozen: true,
    });
    if (contexts.length === 2) assert.equal(contexts[1].context.thread, 1);
  } finally {
    await pool.shutdown();
  }
});

test("worker.timers and debug channels are accepted and applied", async () => {
  const o = resolveOptions(
    { worker: { timers: { spinMicroseconds: 5, parkMs: 20 } }, debug: { host: true, imports: false } },
    64,
    1024,
  );
  assert.deepEqual(o.worker.timers, { spinMicroseconds: 5, parkMs: 20 });
  assert.deepEqual(o.debug, ["host"]);
  const r = await run([
    "--input-type=module",
    "-e",
    `
    import { createPool } from ${JSON.stringify(new URL("../index.mjs", import.meta.url).href)};
    import * as T from ${JSON.stringify(new URL("./fixtures/fault-tasks.mjs", import.meta.url).href)};
    const pool = createPool({
      threads: 1,
      debug: { lifecycle: true },
      worker: { timers: { spinMicroseconds: 0, parkMs: 5 } },
    })({ add: T.add });
    let sum = 0;
    for (let i = 0; i < 50; i++) { sum += await pool.call.add([i, 0]); await new Promise((r) => setTimeout(r, 2)); }
    console.log("sum", sum);
    await pool.shutdown();
  `,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /sum 1225/);
  assert.match(r.stderr, /knitting-native:lifecycle pool 1 .* ready/, "the lifecycle channel is on");
  assert.doesNotMatch(r.stderr, /knitting-native:(host|imports|signals)/, "only that channel");
});

test(
  "many tasks: 65,536 exported bare functions start a pool well within the bound; 65,537 are a " + "RangeError",
  async () => {
    const ok = await run([fixture("trap-many.mjs"), "65536"], { limitMs: 90_000 });
    assert.equal(ok.timedOut, false, "task discovery must be linear (it took minutes)");
    assert.equal(ok.stdout.trim(), "ok 65536", ok.stderr);
    const over = await run([fixture("trap-many.mjs"), "65537"], { limitMs: 90_000 });
    assert.equal(over.timedOut, false);
    assert.match(over.stdout, /^RangeError KNT_TOO_MANY_TASKS .*65537 tasks; a pool takes at most 65536/);
  },
);

test("trap: createPool from node -e (script or ESM) is refused naming the task and the fix", async () => {
  const esm =
    'import { createPool, task } from "./index.mjs"; const double = task({ f: (x) => 2 * x }); ' +
    "try { createPool({ threads: 1 })({ double }); console.log('created'); } " +
    "catch (e) { console.log(e.code, e.message); }";
  const r = await run(["--input-type=module", "-e", esm]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^KNT_NO_MODULE_FILE .*task "double" is declared in (\[eval\d*\]|\$deno\$eval\.\w+)/m);
  assert.match(r.stdout, /put the tasks in a module file/);
  assert.doesNotMatch(r.stdout, /created/);
  if (hostRuntime !== "deno") {
    // A CommonJS script and a bare function, and its single-task pool.
    const cjs =
      'const { createPool, task } = require("./index.js"); ' +
      "for (const make of [() => createPool({ threads: 1 })({ inc: (x) => x + 1 }), " +
      "() => task({ f: (x) => x }).createPool({ threads: 1 })]) { " +
      "try { make(); console.log('created'); } catch (e) { console.log(e.code, e instanceof TypeError); } }";
    const c = await run(["-e", cjs]);
    assert.equal(c.code, 0, c.stderr);
    assert.deepEqual(c.stdout.trim().split("\n"), ["KNT_NO_MODULE_FILE true", "KNT_NO_MODULE_FILE true"]);
  }
  // Tasks declared in a module file serve a pool created from an eval script.
  const fromFile =
    'import { createPool } from "./index.mjs"; import { add } from "./__test__/fixtures/tasks.mjs"; ' +
    "const pool = createPool({ threads: 1 })({ add }); console.log(await pool.call.add([2, 3])); " +
    "await pool.shutdown();";
  const f = await run(["--input-type=module", "-e", fromFile]);
  assert.equal(f.stdout.trim(), "5", f.stderr);
});
