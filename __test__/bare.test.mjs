import test from "node:test";
import assert from "node:assert/strict";
import { makePool, makePoolWithUnexported } from "./fixtures/bare-pool.mjs";
import { skipOn } from "./fixtures/runtime.mjs";

const tailCall =
  "JavaScriptCore makes `return createPool(...)(tasks)` in the fixture a proper tail call, " +
  "so its frame (the module that owns the functions) is not on the stack";
test("bare functions exported from the module that creates the pool run in workers", {
  skip: skipOn({ bun: tailCall }),
}, async () => {
  const pool = makePool();
  try {
    assert.equal(await pool.call.square(7), 49);
    assert.equal(await pool.call.greet("ann"), "hello ann");
  } finally {
    await pool.shutdown();
  }
});

test("a non-exported function defined in that module is rejected, naming the key", () => {
  assert.throws(() => makePoolWithUnexported(), {
    name: "TypeError",
    message: /task "notExported".*not exported/,
  });
});
