import test from "node:test";
import assert from "node:assert/strict";
import { createPool } from "../index.mjs";
import { add, delayed, echo, failSync } from "./fixtures/tasks.mjs";

test("100,000 mixed sync/async calls each settle with their own result", async () => {
  const pool = createPool({ threads: 2 })({ add, delayed, echo, failSync });
  const TOTAL = 100_000;
  const WINDOW = 2_000;
  let next = 0;
  let checked = 0;
  let wrong = 0;
  const expectOne = (i) => {
    switch (i % 10) {
      case 0: // async, settles out of order
        return pool.call.delayed([i, i % 3]).then((v) => v === i);
      case 1:
        return pool.call.failSync(`e${i}`).then(
          () => false,
          (e) => e instanceof TypeError && e.message === `e${i}`,
        );
      case 2:
        return pool.call.echo({ i, s: `s${i}` }).then((v) => v.i === i && v.s === `s${i}`);
      default:
        return pool.call.add([i, 1]).then((v) => v === i + 1);
    }
  };
  try {
    await new Promise((resolve, reject) => {
      const launch = () => {
        const i = next++;
        expectOne(i).then((ok) => {
          if (!ok) wrong++;
          checked++;
          if (next < TOTAL) launch();
          else if (checked === TOTAL) resolve();
        }, reject);
      };
      for (let k = 0; k < WINDOW; k++) launch();
    });
  } finally {
    await pool.shutdown();
  }
  assert.equal(checked, TOTAL);
  assert.equal(wrong, 0);
});
