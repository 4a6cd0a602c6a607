// knitting 0.1.62's public behaviour, checked against this package: one
// describe() per file of knitting's own test suite that exercises its public
// API (parameters, loop, inliner, runtime.node, import-task, task-abort-api,
// task-abort-context-api, worker-bootstrap, shared-array-buffer, api-cap,
// task-identity). Written here from what those tests check; where this
// package deliberately differs (docs/api.md, "Differences from knitting"),
// the test asserts this package's documented behaviour and says so.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createPool, importTask } from "knitting-native";
import * as t from "./fixtures/knitting-api/tasks.mjs";
import { partnerFirst, partnerSecond } from "./fixtures/knitting-api/partner.mjs";
import { bootSeen } from "./fixtures/knitting-api/boot-tasks.mjs";

const fixture = (name) => new URL(`./fixtures/knitting-api/${name}`, import.meta.url).href;

const VALUES = [
  ["a string", "knitting"],
  ["an empty string", ""],
  ["a non-Latin-1 string", "añ ☃ 😀"],
  ["a long string", "x".repeat(100_000)],
  ["the largest signed 64-bit bigint", 2n ** 63n - 1n],
  ["the smallest signed 64-bit bigint", -(2n ** 63n)],
  ["2^64", 2n ** 64n],
  ["-(2^64)", -(2n ** 64n)],
  ["true", true],
  ["false", false],
  ["undefined", undefined],
  ["null", null],
  ["Infinity", Number.POSITIVE_INFINITY],
  ["-Infinity", Number.NEGATIVE_INFINITY],
  ["NaN", Number.NaN],
  ["-0", -0],
  ["Number.MAX_SAFE_INTEGER", Number.MAX_SAFE_INTEGER],
  ["Number.MIN_SAFE_INTEGER", Number.MIN_SAFE_INTEGER],
  ["Number.MAX_VALUE", Number.MAX_VALUE],
  ["Number.MIN_VALUE", Number.MIN_VALUE],
  ["an int32 bound", 2 ** 31 - 1],
  ["a Set", new Set([1, "two", 3n])],
  ["a Map", new Map([["k", { v: [1, 2] }]])],
  ["a Date", new Date(0)],
  ["nested objects and arrays", { a: [1, { b: "c" }], d: { e: null } }],
  ["a Uint8Array", new Uint8Array([1, 2, 3])],
];

describe("parameters (knitting: parameters.test.ts, parameter.test.ts)", () => {
  for (const threads of [1, 2]) {
    test(`every value comes back as sent (${threads} thread${threads === 1 ? "" : "s"})`, async () => {
      const pool = createPool({ threads })({ echo: t.echo });
      try {
        const back = await Promise.all(VALUES.map(([, v]) => pool.call.echo(v)));
        VALUES.forEach(([what, v], i) => assert.deepStrictEqual(back[i], v, what));
        assert.ok(Object.is(back[VALUES.findIndex(([w]) => w === "-0")], -0), "-0 stays -0");
      } finally {
        await pool.shutdown();
      }
    });
  }
});

describe("loop (knitting: loop.test.ts)", () => {
  test("a batch, an idle pause, then another batch: every call answers, in its own order", async () => {
    const pool = createPool({ threads: 2 })({ echo: t.echo });
    try {
      const first = await Promise.all(Array.from({ length: 1000 }, (_, i) => pool.call.echo(i)));
      assert.deepEqual(
        first,
        Array.from({ length: 1000 }, (_, i) => i),
      );
      // Idle long enough for workers and host to go to sleep.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const second = await Promise.all(Array.from({ length: 1000 }, (_, i) => pool.call.echo(`b${i}`)));
      assert.deepEqual(
        second,
        Array.from({ length: 1000 }, (_, i) => `b${i}`),
      );
    } finally {
      await pool.shutdown();
    }
  });
});

describe("inliner (knitting: inliner.test.ts)", () => {
  test("a promise argument is awaited before the task runs (inliner last, robinRound)", async () => {
    const pool = createPool({ threads: 1, inliner: { position: "last" }, balancer: "robinRound" })({
      hello: t.hello,
      world: t.world,
    });
    try {
      const warmup = pool.call.world("warmup");
      assert.equal(await pool.call.world(pool.call.hello()), "hello  world!");
      assert.equal(await warmup, "warmup world!");
    } finally {
      await pool.shutdown();
    }
  });

  test("dispatchThreshold: below it the host runs nothing inline; at it, it takes calls too", async () => {
    const high = createPool({ threads: 1, inliner: { dispatchThreshold: 64 } })({ ranOnHost: t.ranOnHost });
    const low = createPool({ threads: 1, inliner: { dispatchThreshold: 2 } })({ ranOnHost: t.ranOnHost });
    try {
      // One call at a time: never more than one pending.
      for (let i = 0; i < 8; i++) assert.equal(await high.call.ranOnHost(), false, `call ${i} ran in the worker`);
      const burst = await Promise.all(Array.from({ length: 32 }, () => low.call.ranOnHost()));
      assert.ok(burst.includes(true), "with 32 pending and a threshold of 2 the host ran some");
      assert.ok(burst.includes(false), "and the worker ran some");
    } finally {
      await Promise.all([high.shutdown(), low.shutdown()]);
    }
  });

  test("calls pending when shutdown() starts reject after it resolves, with a code", async () => {
    const pool = createPool({ threads: 1, inliner: {} })({ echo: t.echo });
    await pool.ready;
    const never = new Promise(() => {});
    const pending = pool.call.echo(never);
    let shutDown = false;
    let rejectedBeforeShutdown = false;
    pending.catch(() => {
      rejectedBeforeShutdown = !shutDown;
    });
    await pool.shutdown();
    shutDown = true;
    const err = await pending.catch((e) => e);
    assert.equal(err.code, "KNT_POOL_SHUTDOWN"); // knitting rejects with "Thread closed"
    assert.equal(rejectedBeforeShutdown, false);
  });
});

describe("runtime.node (knitting: runtime.node.test.ts)", () => {
  let pool;
  before(() => {
    pool = createPool({ threads: 2 })({
      echo: t.echo,
      world: t.world,
      returnSymbol: t.returnSymbol,
      returnFunction: t.returnFunction,
      returnWeakMap: t.returnWeakMap,
      triple: importTask({ href: "./fixtures/knitting-api/imported.mjs" }),
      shout: importTask({ href: fileURLToPath(fixture("imported.mjs")), name: "shout" }),
    });
  });
  after(() => pool.shutdown());

  test("core payloads round-trip", async () => {
    const payload = { id: 7, tags: ["a", "b"], when: new Date(1), big: 10n ** 30n, bytes: new Uint8Array([9]) };
    assert.deepStrictEqual(await pool.call.echo(payload), payload);
  });

  test("promise inputs are resolved first; a rejected one rejects the call", async () => {
    assert.equal(await pool.call.world(Promise.resolve("resolved")), "resolved world!");
    await assert.rejects(pool.call.world(Promise.reject(new Error("no input"))), /no input/);
  });

  test("importTask, by a relative href and by a filesystem path", async () => {
    assert.equal(await pool.call.triple(14), 42);
    assert.equal(await pool.call.shout("hi"), "HI!");
  });

  test("results that cannot be sent reject: symbol, function, WeakMap", async () => {
    // knitting: KNT_ERROR_1, KNT_ERROR_0, KNT_ERROR_3; here named codes with
    // knitting's number as knittingCode.
    const sym = await pool.call.returnSymbol().catch((e) => e);
    assert.equal(sym.code, "KNT_VALUE_SYMBOL");
    assert.equal(sym.knittingCode, "KNT_ERROR_1");
    const fn = await pool.call.returnFunction().catch((e) => e);
    assert.equal(fn.code, "KNT_VALUE_FUNCTION");
    assert.equal(fn.knittingCode, "KNT_ERROR_0");
    const weak = await pool.call.returnWeakMap().catch((e) => e);
    assert.equal(weak.code, "KNT_VALUE_UNSERIALIZABLE");
    assert.equal(weak.knittingCode, "KNT_ERROR_3");
    assert.equal(await pool.call.echo("still serving"), "still serving");
  });
});

describe("import-task (knitting: import-task.test.ts)", () => {
  test("an importTask value is not a function the host can call", () => {
    const imported = importTask({ href: "./fixtures/knitting-api/imported.mjs" });
    assert.equal(typeof imported, "object"); // a declaration, as knitting's: only pool.call.<name> runs it
    assert.throws(() => imported(1), TypeError);
  });
});

describe("task-abort-api (knitting: task-abort-api.test.ts)", () => {
  test("abort-aware calls pending at shutdown() reject; an aborted one sees it", async () => {
    const pool = createPool({ threads: 1 })({ waitOrAbort: t.waitOrAbort });
    const controller = new AbortController();
    const aborted = pool.call.waitOrAbort(60_000, { signal: controller.signal });
    const pending = pool.call.waitOrAbort(60_000);
    controller.abort();
    assert.equal((await aborted.catch((e) => e)).name, "AbortError");
    const [done] = await Promise.allSettled([pending, pool.shutdown(50)]);
    assert.equal(done.status, "rejected");
    assert.equal(done.reason.code, "KNT_POOL_SHUTDOWN");
  });
});

describe("task-abort-context-api (knitting: task-abort-context-api.test.ts)", () => {
  test("hasAborted() is false in a call nobody aborted", async () => {
    const pool = createPool({ threads: 1 })({ seesAbort: t.seesAbort });
    try {
      assert.equal(await pool.call.seesAbort(), false);
      assert.equal(await pool.call.seesAbort(undefined, { signal: new AbortController().signal }), false);
    } finally {
      await pool.shutdown();
    }
  });
});

describe("worker-bootstrap (knitting: worker-bootstrap.test.ts)", () => {
  test("the bootstrap runs before the task modules load", async () => {
    const pool = createPool({
      threads: 2,
      worker: { bootstrap: { href: fixture("boot.mjs"), name: "boot", data: "booted" } },
    })({
      bootSeen,
    });
    try {
      assert.deepEqual(await Promise.all([pool.call.bootSeen(), pool.call.bootSeen()]), ["booted", "booted"]);
    } finally {
      await pool.shutdown();
    }
  });

  test("a failing bootstrap rejects ready and the calls", async () => {
    const pool = createPool({ threads: 1, worker: { bootstrap: { href: fixture("boot.mjs"), name: "failingBoot" } } })({
      bootSeen,
    });
    try {
      await assert.rejects(pool.call.bootSeen(), /bootstrap failed on purpose/);
      await assert.rejects(pool.ready, /bootstrap failed on purpose/);
    } finally {
      await pool.shutdown();
    }
  });

  test("a bootstrap with the inliner is refused", () => {
    assert.throws(
      () => createPool({ threads: 1, inliner: {}, worker: { bootstrap: { href: fixture("boot.mjs"), name: "boot" } } }),
      (err) => err.code === "KNT_INVALID_OPTION" && /worker\.bootstrap/.test(err.message),
    );
  });
});

describe("shared-array-buffer (knitting: shared-array-buffer.test.ts)", () => {
  let pool;
  before(() => {
    pool = createPool({ threads: 2 })({
      writeShared: t.writeShared,
      readShared: t.readShared,
      sharedBack: t.sharedBack,
    });
  });
  after(() => pool.shutdown());

  test("a worker's write to a SharedArrayBuffer argument is seen by the host", async () => {
    const buffer = new SharedArrayBuffer(16);
    assert.equal(await pool.call.writeShared({ buffer, index: 2, value: 42 }), true);
    assert.equal(Atomics.load(new Int32Array(buffer), 2), 42);
  });

  test("a host's write is seen by a worker", async () => {
    const buffer = new SharedArrayBuffer(16);
    Atomics.store(new Int32Array(buffer), 1, 7);
    assert.equal(await pool.call.readShared({ buffer, index: 1 }), 7);
  });

  test("one returned from a worker is the same memory", async () => {
    const buffer = new SharedArrayBuffer(8);
    const back = await pool.call.sharedBack(buffer);
    // knitting hands back an alias; here a new SharedArrayBuffer object over the same memory.
    assert.ok(back instanceof SharedArrayBuffer);
    new Int32Array(back)[0] = 99;
    assert.equal(new Int32Array(buffer)[0], 99);
  });

  test("many calls writing their own cells of one buffer", async () => {
    const buffer = new SharedArrayBuffer(4 * 64);
    await Promise.all(Array.from({ length: 64 }, (_, i) => pool.call.writeShared({ buffer, index: i, value: i * 2 })));
    assert.deepEqual(
      [...new Int32Array(buffer)],
      Array.from({ length: 64 }, (_, i) => i * 2),
    );
  });
});

describe("api-cap (knitting: api-cap.test.ts)", () => {
  test("more than 65,536 tasks is a RangeError with a code", () => {
    const tasks = {};
    for (let i = 0; i <= 65_536; i++) tasks[`t${i}`] = importTask({ href: "./fixtures/knitting-api/imported.mjs" });
    assert.throws(
      () => createPool({ threads: 1 })(tasks),
      (err) => err instanceof RangeError && err.code === "KNT_TOO_MANY_TASKS",
    );
  });
});

describe("task-identity (knitting: task-identity.test.ts)", () => {
  test("tasks at the same position of two modules each run their own function", async () => {
    const pool = createPool({ threads: 2 })({ echo: t.echo, partnerFirst, partnerSecond, world: t.world });
    try {
      assert.deepEqual(
        await Promise.all([
          pool.call.echo(1),
          pool.call.partnerFirst(1),
          pool.call.partnerSecond(2),
          pool.call.world("w"),
        ]),
        [1, "partner 1", 6, "w world!"],
      );
    } finally {
      await pool.shutdown();
    }
  });
});
