// Fuzzing the host against task code that writes into shared memory: 10,000
// cases of random stores into every shared region (doorbell words, lane and
// slot headers, the steal section, the payload arena's header and block
// headers), made by a task while the host reads what tasks answer. The host
// runs in a child process (fixtures/region-fuzz-host.mjs), so that a crash
// is its exit signal. Every call must settle with a value or an error that
// has a KNT_ code, within a bound; the process must exit 0. The fuzzed tasks
// carry a 500 ms timeout (fixtures/region-tasks.mjs): a call lost through a
// corrupted scheduling word settles through it.
import test from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const HOST = fileURLToPath(new URL("./fixtures/region-fuzz-host.mjs", import.meta.url));
const CASES = Number(process.env.KNT_REGION_FUZZ_CASES || 10_000);
const SEED = Number(process.env.KNT_FUZZ_SEED || 0x5afe);
const STALL_MS = 60_000; // no progress line for this long = a hang

test(`${CASES} cases of random writes into the shared regions: the host never crashes or hangs`, {
  timeout: 20 * 60_000,
}, async () => {
  const child = spawn(process.execPath, [HOST, String(CASES), String(SEED), "10"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let stalled = false;
  let timer = null;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      stalled = true;
      child.kill("SIGKILL");
    }, STALL_MS);
  };
  arm();
  child.stdout.on("data", (chunk) => {
    out += chunk;
    arm();
  });
  child.stderr.on("data", (chunk) => (err += chunk));
  const [code, signal] = await new Promise((resolve) => child.on("exit", (c, s) => resolve([c, s])));
  clearTimeout(timer);
  const where =
    `seed ${SEED} (rerun with KNT_FUZZ_SEED); last output: ` +
    `${out.trim().split("\n").slice(-2).join(" | ")}; stderr: ${err.slice(-2000)}`;
  assert.equal(stalled, false, `the fuzzed host made no progress for ${STALL_MS} ms: ${where}`);
  assert.equal(signal, null, `the fuzzed host died by ${signal}: ${where}`);
  assert.equal(code, 0, `the fuzzed host exited with ${code}: ${where}`);
  const summary = JSON.parse(out.trim().split("\n").pop());
  assert.equal(summary.cases, CASES);
  assert.equal(summary.calls, 3 * CASES, "every call settled");
  assert.deepEqual(summary.uncoded, [], "every failed call has a KNT_ error code");
  for (const c of Object.keys(summary.codes)) assert.match(c, /^KNT_/, `error code ${c}`);
  assert.ok(summary.slowest < summary.settleBoundMs, `a call took ${summary.slowest} ms to settle`);
  assert.ok(summary.shutdownSlowest < summary.settleBoundMs, `a shutdown took ${summary.shutdownSlowest} ms`);
  // The fuzz reached what it is for: corruption was met and reported, and
  // most calls still succeeded.
  assert.ok(summary.codes.KNT_REGION_CORRUPT > 0, JSON.stringify(summary));
  assert.ok(summary.fulfilled > CASES / 2, JSON.stringify(summary));
  console.log(`# region fuzz: ${JSON.stringify(summary)}`);
});
