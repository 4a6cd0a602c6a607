// Large binary results of worker threads leave as moved copies (codec/transfer.js
// movedCopy, payload/shared-refs.js largeResult): what is checked is that this is invisible
// to both sides. The caller gets every kind whole, as a view of the same kind over a
// buffer of exactly its bytes, in both topologies and with workers recycled after
// every call; the task's own buffer is neither detached nor changed; values under
// MOVE_COPY_MIN and worker processes go through the payload region as before; the
// payload limit refuses what it refused before; a view that lies about its length
// gets the codec's answer. Each test counts the moves on the host (claims of moved
// buffers), so a path that stopped moving, or moved what it should not, fails.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { createPool } from "../index.mjs";
import { make, keptIntact, lying, byteAt } from "./fixtures/large-result-tasks.mjs";
import { internals } from "./helpers/internals.mjs";

const require = createRequire(import.meta.url);
const { MOVE_COPY_MIN } = require("../lib/codec/transfer.js");
const { host } = require("../lib/runtimes/index.js");

const tasks = { make, keptIntact, lying };
const BIG = 256 * 1024;
const SMALL = 64 * 1024;
const KINDS = ["Uint8Array", "Buffer", "ArrayBuffer", "Float64Array", "DataView"];
// Where the runtime moves large results (Node); elsewhere every result is copied.
const MOVES = host.moveResultCopies === true;

/** Counts the moved buffers the host claims, from now on. */
function countClaims(pool) {
  const refs = internals(pool).sharedRefs;
  const counter = { n: 0 };
  if (refs === null) return counter;
  const claim = refs.claim.bind(refs);
  refs.claim = (...a) => {
    const buf = claim(...a);
    if (buf !== undefined) counter.n++;
    return buf;
  };
  return counter;
}

/** Throws unless `got` is a `kind` over a buffer of exactly the n bytes of `seed`. */
function checkResult(got, kind, n, seed, what) {
  const tag = kind === "Buffer" ? "Uint8Array" : kind;
  assert.equal(Object.prototype.toString.call(got), `[object ${tag}]`, `${what}: its kind`);
  assert.equal(Buffer.isBuffer(got), kind === "Buffer", `${what}: a Buffer exactly when one was returned`);
  const buffer = got instanceof ArrayBuffer ? got : got.buffer;
  assert.equal(Object.prototype.toString.call(buffer), "[object ArrayBuffer]", `${what}: over an ArrayBuffer`);
  assert.equal(buffer.byteLength, n, `${what}: its buffer holds exactly its bytes`);
  if (!(got instanceof ArrayBuffer)) assert.equal(got.byteOffset, 0, `${what}: from the buffer's start`);
  const u8 = new Uint8Array(buffer);
  for (let i = 0; i < n; i++) {
    if (u8[i] !== byteAt(seed, i)) assert.fail(`${what}: byte ${i} is ${u8[i]}, not ${byteAt(seed, i)}`);
  }
}

test("the threshold sits between the sizes below", () => {
  assert.ok(SMALL < MOVE_COPY_MIN && MOVE_COPY_MIN <= BIG);
});

for (const [mode, options] of [
  ["work stealing", { threads: 2, host: { steal: true } }],
  ["private lanes", { threads: 2, host: { steal: false } }],
]) {
  test(`${mode}: large results of every kind arrive whole; the task's own stay intact`, async () => {
    const pool = createPool(options)(tasks);
    const claims = countClaims(pool);
    try {
      let seed = 1;
      let large = 0;
      const calls = [];
      for (const n of [SMALL, BIG, 1024 * 1024]) {
        for (const kind of KINDS) {
          for (const offset of [0, 16]) {
            const s = seed++;
            calls.push(pool.call.make([kind, n, s, offset, true]).then((got) => [got, kind, n, s, offset]));
            if (n >= MOVE_COPY_MIN) large++;
          }
        }
      }
      for (const [got, kind, n, s, offset] of await Promise.all(calls)) {
        checkResult(got, kind, n, s, `${mode}: ${kind} of ${n} bytes at offset ${offset}`);
      }
      assert.equal(claims.n, MOVES ? large : 0, "large results moved, the others copied");
      // Each worker's kept results: all there, none detached or changed by leaving.
      let kept = 0;
      for (let i = 0; i < 2; i++) {
        // Ask often enough that both workers answer (any worker may take a call).
        const answers = await Promise.all(Array.from({ length: 8 }, () => pool.call.keptIntact()));
        for (const a of answers) assert.equal(a.ok, true, a.why);
        kept = Math.max(kept, ...answers.map((a) => a.count));
      }
      assert.ok(kept >= 1, "the workers kept results to look at");
    } finally {
      await pool.shutdown();
    }
  });
}

test("workers recycled after every call: each large result arrives once and whole", async () => {
  const pool = createPool({ threads: 2, worker: { maxCallsBeforeRecycle: 1 } })(tasks);
  const claims = countClaims(pool);
  try {
    const seeds = Array.from({ length: 24 }, (_, i) => 100 + i);
    const got = await Promise.all(seeds.map((s) => pool.call.make(["Uint8Array", BIG, s, 0, false])));
    got.forEach((r, i) => checkResult(r, "Uint8Array", BIG, seeds[i], `recycled, call ${i}`));
    assert.equal(claims.n, MOVES ? seeds.length : 0);
  } finally {
    await pool.shutdown();
  }
});

test("the payload limit refuses what a copy could not carry; under it, large results arrive", async () => {
  const pool = createPool({ threads: 1, payload: { maxPayloadBytes: 512 * 1024 } })(tasks);
  const claims = countClaims(pool);
  try {
    await assert.rejects(pool.call.make(["Uint8Array", 1024 * 1024, 7, 0, false]), (err) => {
      assert.match(String(err.message), /exceeds payload\.maxPayloadBytes \(524288\)/);
      return true;
    });
    // At the limit itself a copy cannot carry it either (the record's head): refused alike.
    await assert.rejects(pool.call.make(["Uint8Array", 512 * 1024, 8, 0, false]), /maxPayloadBytes/);
    checkResult(await pool.call.make(["Uint8Array", BIG, 9, 0, false]), "Uint8Array", BIG, 9, "under the limit");
    assert.equal(claims.n, MOVES ? 1 : 0, "only the one under the limit moved");
  } finally {
    await pool.shutdown();
  }
});

test("a result whose byteLength lies is answered by the codec; the pool goes on", async () => {
  const pool = createPool({ threads: 1 })(tasks);
  try {
    const got = await pool.call.lying(BIG).then(
      (v) => ({ v }),
      (err) => ({ err }),
    );
    if (got.err === undefined) {
      assert.ok(got.v instanceof Uint8Array, "sent as a Uint8Array");
      assert.ok(
        got.v.every((b) => b === 3),
        "of the bytes it really has",
      );
    } else {
      assert.ok(got.err instanceof Error, `rejected with an Error, got ${got.err}`);
    }
    checkResult(await pool.call.make(["Buffer", BIG, 5, 0, false]), "Buffer", BIG, 5, "the next call");
  } finally {
    await pool.shutdown();
  }
});

test("worker processes copy large results through the payload region", async () => {
  const pool = createPool({ threads: 1, worker: { runtime: "process" } })(tasks);
  try {
    for (const kind of KINDS) {
      checkResult(await pool.call.make([kind, BIG, 3, 16, false]), kind, BIG, 3, `process: ${kind}`);
    }
  } finally {
    await pool.shutdown();
  }
});
