const test = require("node:test");
const assert = require("node:assert/strict");
const api = require("../index.js");
const { mul, upper } = require("./fixtures/tasks.cjs");

test("CommonJS require exposes the API", () => {
  for (const name of ["createPool", "task", "stableTaskID"]) assert.equal(typeof api[name], "function", name);
  assert.equal(api.isMain, true);
});

test("tasks declared in a CommonJS module run in workers", async () => {
  const pool = api.createPool({ threads: 1 })({ mul, upper });
  try {
    assert.equal(await pool.call.mul([6, 7]), 42);
    assert.equal(await pool.call.upper("abc"), "ABC");
  } finally {
    await pool.shutdown();
  }
});

test("ESM and CommonJS entry points share one implementation", async () => {
  const esm = await import("../index.mjs");
  assert.equal(esm.createPool, api.createPool);
  assert.equal(esm.task, api.task);
});
