// Nothing a task or a caller does may crash or hang the host: task code
// writing into the shared regions, native objects handed memory JS can take
// away, numbers napi would wrap or panic on, descriptors openFd must not
// take, and a host killed while its worker processes start. The crash cases
// run in a child process and assert on its exit signal and code.
import test from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { readdirSync } from "node:fs";
import { skipOn } from "./fixtures/runtime.mjs";
import { sleep } from "./helpers/wait.mjs";
import { fixture } from "./helpers/children.mjs";

const require = createRequire(import.meta.url);
const linux = process.platform === "linux";

/** Runs a fixture in a child process; it must exit 0 by itself. Returns its JSON output. */
function child(file, scenario) {
  const run = spawnSync(process.execPath, [fixture(file), scenario], { encoding: "utf8", timeout: 90_000 });
  assert.equal(run.error, undefined, `${scenario}: ${run.error}`);
  assert.equal(run.signal, null, `${scenario}: the child died by ${run.signal}: ${run.stderr}`);
  assert.equal(run.status, 0, `${scenario}: the child exited with ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").pop());
}

// --- task code writing into the shared regions -----------------------------

test("a task that forges the payload arena's committed length cannot crash the host", () => {
  // Before: "offset is out of bounds", then SIGSEGV (Rust wrote block
  // headers into pages the growable buffer had not committed).
  const out = child("region-scenarios.mjs", "committed");
  assert.equal(out.poke, true);
  assert.deepEqual(out.calls, [
    { ok: true, length: 7 << 20 },
    { ok: true, length: 3 << 20 },
  ]);
});

test("a task that overwrites the arena header fails the payload calls with KNT_REGION_CORRUPT, no hang", () => {
  // Before: the host hung (60 s and more) on the lock word.
  const out = child("region-scenarios.mjs", "header");
  assert.equal(out.calls[0].ok, false);
  assert.equal(out.calls[0].code, "KNT_REGION_CORRUPT", out.calls[0].message);
  assert.deepEqual(out.calls[1], { ok: true, value: 41 }, "a call that needs no payload block still works");
  assert.deepEqual(out.after, [{ ok: true, value: 42 }]);
});

test("an arena lock nobody releases ends in KNT_REGION_CORRUPT, then later calls fail at once", () => {
  const out = child("region-scenarios.mjs", "lock");
  assert.equal(out.calls[0].code, "KNT_REGION_CORRUPT", out.calls[0].message);
  assert.equal(out.again[0].code, "KNT_REGION_CORRUPT", out.again[0].message);
  assert.deepEqual(out.again[1], { ok: true, value: 7 });
  // The second wait is not another full one (wide margin: order, not ms).
  assert.ok(out.againMs < out.waitedMs, `first wait ${out.waitedMs} ms, then ${out.againMs} ms`);
});

test("the host reads slot words as untrusted: a forged length, offset or RES/DONE bit fails that value only", () => {
  const native = require("../lib/native/index.js");
  const { PayloadRegion } = require("../lib/payload/region.js");
  const { HostLane } = require("../lib/protocol/lane.js");
  const { HostSubmit } = require("../lib/protocol/steal.js");
  const L = native.layout();
  const NO_EXT = L.noExt | 0;
  const region = new PayloadRegion(new SharedArrayBuffer(64 * 1024, { maxByteLength: 1 << 20 }), true);
  const control = new Uint8Array(new SharedArrayBuffer(native.controlBytes(1, 4)));
  const corrupt = (f, what) =>
    assert.throws(
      f,
      (err) => err.code === "KNT_REGION_CORRUPT" || assert.fail(`${what}: ${err && err.code} ${err && err.message}`),
    );
  corrupt(() => region.readSlot(control, 4096, L.inlineBytes + 1, NO_EXT), "inline length past the slot");
  corrupt(() => region.readSlot(control, 4096, -5, NO_EXT), "negative length");
  corrupt(() => region.readSlot(control, 4096, 3, NO_EXT), "inline garbage (zeros)");
  corrupt(() => region.readSlot(control, 0, 100, 1 << 30), "an offset past the region");
  corrupt(() => region.readSlot(control, 0, 100, 4096), "an offset that is not a block");
  corrupt(() => region.readSlot(control, 0, 2 ** 31 - 1, 64), "a huge length");
  // The arena is intact: a real value still round-trips.
  const { Encoder } = require("../lib/codec/index.js");
  const bytes = new Encoder().encode("z".repeat(5000));
  assert.equal(region.readSlot(control, 0, bytes.length, region.write(bytes)), "z".repeat(5000));
  assert.equal(region.arena.stats().liveBlocks, 0);

  // RES bits flipped for slots the host never handed out settle nothing.
  const i32 = new Int32Array(control.buffer);
  native.formatControlRegion(control, 1, 4);
  const lane = new HostLane(i32, 0, () => {});
  lane.publish(3, { id: 1 });
  Atomics.store(i32, lane.res, ~0);
  assert.equal(lane.takeFinished(), 1 << 3, "only the busy slot");
  assert.equal(lane.inFlight, 1);
  const stealBytes = native.controlBytes(0, 4, 2, 1, 32);
  const s32 = new Int32Array(new SharedArrayBuffer(stealBytes));
  native.formatControlRegion(new Uint8Array(s32.buffer), 0, 4, 2, 1, 32);
  const submit = new HostSubmit(s32, native.stealOffset(0, 4), 2, 1, 32, () => {});
  submit.publish(5, { id: 9 });
  Atomics.store(s32, submit.doneWord(0, 0), ~0);
  Atomics.add(s32, submit.doneSeqWord(0), 1);
  const settled = [];
  assert.equal(
    submit.takeDone(0, (index) => settled.push(index)),
    1,
  );
  assert.deepEqual(settled, [5], "only the slot the host published");
  assert.equal(submit.inFlight, 0);
});

// --- native objects and numbers ---------------------------------------------

const noDetach =
  "Bun refuses to detach a buffer the addon has seen (DataCloneError: untransferable), " +
  "so the fixture cannot make its detached case";
test("native objects refuse views over memory JS can detach or shrink (TypeError KNT_NOT_SHARED_MEMORY)", {
  skip: skipOn({ bun: noDetach }),
}, () => {
  const out = child("napi-abuse.mjs", "views");
  for (const kind of ["plain", "resizable", "detached"]) {
    for (const what of ["PayloadArena", "HostDoorbell", "WorkerBell", "formatControlRegion"]) {
      const r = out[`${what}/${kind}`];
      assert.equal(r.ok, false, `${what}/${kind} was accepted`);
      assert.equal(r.name, "TypeError", `${what}/${kind}: ${r.message}`);
      assert.equal(r.code, "KNT_NOT_SHARED_MEMORY");
      assert.match(r.message, /SharedArrayBuffer/);
    }
  }
  assert.equal(out["Int32Array over a SharedArrayBuffer"].code, "KNT_NOT_SHARED_MEMORY");
  assert.equal(out["extend/plain"].code, "KNT_NOT_SHARED_MEMORY");
  assert.deepEqual(out["PayloadArena/shared"], { ok: true, value: "4096" });
  assert.deepEqual(out["shrunk then used"], { ok: true, value: "refused" });
  if (linux) assert.equal(out["mapping view, buffer transferred"].ok, true, "memory Rust mapped is accepted and kept");
});

test("every native export and method survives arguments of every wrong kind", () => {
  const out = child("napi-abuse.mjs", "everything");
  assert.ok(out.calls > 5000, `only ${out.calls} calls`);
  assert.ok(out.threw > out.calls / 2, "most of them are refused");
});

test(
  "numbers crossing napi are validated: NaN, negative, fractional, out of range give InvalidArg, " + "never a panic",
  () => {
    // Before: spinWhile(..., NaN) aborted the process; buffer(-64, 64) and
    // buffer(NaN, 64) were taken as offset 0; abortOffset(2**32-1) wrapped.
    const out = child("napi-abuse.mjs", "numbers");
    const refused = Object.entries(out).filter(([, r]) => !r.ok);
    for (const [name, r] of refused)
      assert.ok(r.code === "InvalidArg" || r.code === "KNT_REGION_CORRUPT", `${name}: ${r.code} ${r.message}`);
    for (const name of [
      "spinWhile NaN",
      "spinWhile -1",
      "spinWhile Infinity",
      "spinWhile index NaN",
      "spinWhile value 1.5",
      "spinWhileZero NaN",
      "spinWhileZero huge count",
      "abortOffset 2**32-1",
      "abortOffset -1",
      "abortOffset 1.5",
      "controlBytes NaN",
      "controlBytes -1",
      "regionBytes 2**32",
      "stealOffset 0.5",
      "alloc NaN",
      "alloc -64",
      "alloc 1.5",
      "free NaN",
      "free -64",
      "arena maxByteLength NaN",
      "externalString start NaN",
      "externalString start -1",
      "externalString length 1.5",
      "externalString past the end",
      "externalString 2**53",
    ]) {
      assert.equal(out[name].ok, false, `${name} was accepted: ${JSON.stringify(out[name])}`);
      assert.equal(out[name].code, "InvalidArg", name);
    }
    assert.equal(out["abortOffset 1"].ok, true);
    if (linux) {
      for (const name of [
        "buffer -64",
        "buffer NaN",
        "buffer 0.5",
        "wake NaN",
        "wake -1",
        "create NaN",
        "park NaN",
        "park value 2**32",
      ]) {
        assert.equal(out[name].ok, false, `${name} was accepted`);
        assert.equal(out[name].code, "InvalidArg", name);
      }
      assert.deepEqual(out["buffer 64"], { ok: true, value: "64" });
    }
  },
);

test("ProcessMemory.openFd takes only a sealed memfd of the right size, and closes nothing else", {
  skip: linux ? false : "Linux only",
}, () => {
  // Before: openFd closed whatever it was given, even on failure; on
  // libuv's epoll descriptor the process aborted.
  const out = child("napi-abuse.mjs", "openfd");
  assert.ok(Number.isInteger(out.epoll), "found libuv's epoll descriptor");
  assert.equal(out["openFd(epoll)"].ok, false);
  assert.equal(out.epollStillOpen, true, "libuv's descriptor was left open");
  assert.equal(out["openFd(-1)"].code, "InvalidArg");
  assert.equal(out["openFd(NaN)"].code, "InvalidArg");
  assert.equal(out["openFd(wrong size)"].ok, false);
  assert.equal(out.memfdStillOpen, true, "a refused memfd is left open");
  assert.deepEqual(out["openFd(right size)"], { ok: true, value: "8192" });
  assert.equal(out.takenAndClosed, true, "the verified descriptor is taken (and closed once mapped)");
  assert.equal(out["openFd(own memfd)"].ok, false, "the host's own descriptor is never taken twice");
  assert.equal(out.ownStillOpen, true);
});

// --- named shared memory and a killed host ----------------------------------

const sendLater =
  "a Deno host's child.send() is not written before createPool returns, so workers of a host killed at once " +
  "never learn the name (the next named pool with the prefix sweeps it)";
test("named shared memory: a host SIGKILLed while its workers start leaves no name, and no EPIPE is printed", {
  skip: linux ? skipOn({ deno: sendLater }) : "Linux only",
}, async () => {
  // Before: a name left in /dev/shm after nearly every such kill, and each
  // orphaned worker died printing an unhandled EPIPE.
  const prefix = `knt-test-starting-${process.pid}`;
  const shm = () => readdirSync("/dev/shm").filter((n) => n.startsWith(`${prefix}-`));
  for (let run = 0; run < 6; run++) {
    const host = spawn(process.execPath, [fixture("process-host-starting.mjs"), prefix], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    host.stdout.on("data", (chunk) => (out += chunk));
    host.stderr.on("data", (chunk) => (err += chunk));
    // The workers inherit stderr: it closes once the host and all of them are gone.
    const closed = new Promise((resolve) => host.stderr.on("close", resolve));
    const deadline = Date.now() + 30_000;
    while (!out.includes("created") && Date.now() < deadline) await sleep(1);
    assert.ok(out.includes("created"), `the host did not start: ${err}`);
    // From right after createPool to well into the workers' start-up.
    await sleep(run * 20);
    host.kill("SIGKILL");
    let timer;
    await Promise.race([
      closed,
      new Promise(
        (_, reject) =>
          (timer = setTimeout(() => reject(new Error(`run ${run}: the orphaned workers did not exit`)), 30_000)),
      ),
    ]);
    clearTimeout(timer);
    assert.deepEqual(
      shm(),
      [],
      `run ${run} (killed ${run * 20} ms after ` +
        `createPool${out.includes("ready") ? ", workers ready" : ""}) left a name`,
    );
    assert.doesNotMatch(err, /EPIPE|Unhandled/, `run ${run}: ${err}`);
  }
});
