// A value that cannot be sent names its error by kind (KNT_VALUE_*), the
// task, which value it was (argument, result, thrown error) and where in it
// (`arg[0].x`); knitting's numbered code rides along as `knittingCode`. The
// same on worker threads, worker processes and the inliner, and nothing else
// is lost: other calls settle and the pool keeps serving.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createPool, CODEC_ERRORS } from "knitting-native";
import { echo, badResult, badThrow, bigResult } from "./fixtures/value-error-tasks.mjs";

const SHAPES = [
  ["worker threads", { threads: 1 }],
  ["worker processes", { threads: 1, worker: { runtime: "process" } }],
  ["the inliner (a host-only pool: every call runs inline)", { threads: 0, inliner: {} }],
];

const CASES = [
  {
    what: "a function inside the argument",
    call: (pool) => pool.call.echo([{ x: function x() {} }]),
    want: { name: "TypeError", code: "KNT_VALUE_FUNCTION", knittingCode: "KNT_ERROR_0", task: "echo" },
    side: "argument",
    path: "arg[0].x",
    message: /^knitting-native: task "echo", arg\[0\]\.x: cannot send a function "x"; send data, not code$/,
  },
  {
    what: "a symbol as the argument",
    call: (pool) => pool.call.echo(Symbol("s")),
    want: { name: "TypeError", code: "KNT_VALUE_SYMBOL", knittingCode: "KNT_ERROR_1", task: "echo" },
    side: "argument",
    path: "arg",
    message: /^knitting-native: task "echo", arg: cannot send a symbol \(Symbol\(s\)\)/,
  },
  {
    what: "a WeakMap inside the argument",
    call: (pool) => pool.call.echo({ cache: new WeakMap() }),
    want: { name: "TypeError", code: "KNT_VALUE_UNSERIALIZABLE", knittingCode: "KNT_ERROR_3", task: "echo" },
    side: "argument",
    message: /^knitting-native: task "echo", arg(\.cache)?: serialization failed/,
  },
  {
    what: "an argument over payload.maxPayloadBytes",
    call: (pool) => pool.call.echo("x".repeat(70_000)),
    want: { name: "RangeError", code: "KNT_VALUE_TOO_LARGE", knittingCode: "KNT_ERROR_3", task: "echo" },
    side: "argument",
    message: /^knitting-native: task "echo", arg: payload of \d+ bytes exceeds payload\.maxPayloadBytes \(65536\)/,
  },
  {
    what: "a function inside the result",
    call: (pool) => pool.call.badResult(),
    want: { name: "TypeError", code: "KNT_VALUE_FUNCTION", knittingCode: "KNT_ERROR_0", task: "badResult" },
    side: "result",
    path: "result.rows[1].format",
    message: /^knitting-native: task "badResult", result\.rows\[1\]\.format: cannot send a function/,
  },
  {
    what: "a result over payload.maxPayloadBytes",
    call: (pool) => pool.call.bigResult(70_000),
    want: { name: "RangeError", code: "KNT_VALUE_TOO_LARGE", knittingCode: "KNT_ERROR_3", task: "bigResult" },
    side: "result",
    message: /^knitting-native: task "bigResult", result: payload of \d+ bytes exceeds/,
  },
  {
    what: "a symbol inside a thrown error",
    call: (pool) => pool.call.badThrow(),
    want: { name: "TypeError", code: "KNT_VALUE_SYMBOL", knittingCode: "KNT_ERROR_1", task: "badThrow" },
    side: "error",
    path: "error.tag",
    message: /^knitting-native: task "badThrow", error\.tag: cannot send a symbol/,
  },
];

for (const [shape, options] of SHAPES) {
  test(`a value that cannot be sent names its kind, the task and the place (${shape})`, async () => {
    const pool = createPool({ ...options, payload: { maxPayloadBytes: 65536 } })({
      echo,
      badResult,
      badThrow,
      bigResult,
    });
    try {
      for (const c of CASES) {
        // Each bad call goes out beside good ones: they settle as if it were not there.
        const before = pool.call.echo({ n: 1 });
        const bad = c.call(pool);
        const after = pool.call.echo([2]);
        const err = await bad.then(
          () => assert.fail(`${c.what}: resolved`),
          (e) => e,
        );
        for (const [key, value] of Object.entries(c.want)) assert.equal(err[key], value, `${c.what}: ${key}`);
        assert.equal(err.side, c.side, `${c.what}: side`);
        if (c.path !== undefined) assert.equal(err.path, c.path, `${c.what}: path`);
        assert.match(err.message, c.message, c.what);
        assert.ok(Object.values(CODEC_ERRORS).includes(err.code), c.what);
        assert.deepEqual(await before, { n: 1 }, c.what);
        assert.deepEqual(await after, [2], c.what);
      }
      assert.equal(await pool.call.echo("still serving"), "still serving");
    } finally {
      await pool.shutdown();
    }
  });
}

test("the stack's first line says what the placed message says", async () => {
  const pool = createPool({ threads: 1 })({ echo });
  try {
    const err = await pool.call.echo({ f: () => 1 }).catch((e) => e);
    assert.equal(err.stack.split("\n")[0], `TypeError: ${err.message}`);
    assert.match(err.message, /task "echo", arg\.f:/);
  } finally {
    await pool.shutdown();
  }
});
