// The scheduling options of createPool (host, balancer, inliner, threads: 0,
// KNITTING_STEAL / KNITTING_DISPATCHER) and the topology decided from them:
// resolveOptions and resolveTopology in lib/options/index.js, without starting a
// pool. Every rejection is checked for its class and for naming its key.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { createPool } from "../index.mjs";
import { keyPattern } from "./helpers/errors.mjs";

const require = createRequire(import.meta.url);
const { resolveOptions, resolveTopology, MAX_STEAL_CLAIMANTS, LANE_SLOTS } = require("../lib/options/index.js");
const { L } = require("../lib/protocol/layout.js");

/** resolveOptions as createPool calls it, with `env` instead of process.env. */
const resolve = (options, env = {}) => resolveOptions(options, L.maxLanes, L.maxAbortSlots, env);
const topology = (options, env = {}) => resolve(options, env).topology;

/** Asserts that `fn` throws a `Ctor` whose message starts with the prefix and names every key. */
function throwsNaming(fn, Ctor, keys, what) {
  let thrown = null;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  assert.ok(thrown !== null, `${what} must throw`);
  assert.ok(thrown instanceof Ctor, `${what}: expected ${Ctor.name}, got ${thrown && thrown.stack}`);
  assert.match(thrown.message, /^knitting-native: /, what);
  for (const key of [keys].flat()) assert.match(thrown.message, keyPattern(key), `${what}: the message names ${key}`);
  return thrown;
}

/** Runs `fn` with process.env[name] = value, restoring it afterwards. */
function withEnv(vars, fn) {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  try {
    for (const [k, v] of Object.entries(vars)) process.env[k] = v;
    return fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const OFF = { steal: false, regionLanes: 0, regionWidth: 0, dispatcher: "per-thread", balancer: null, inline: false };

test("the region lane limit matches the addon's lane size", () => {
  assert.equal(LANE_SLOTS, L.slotCount);
  assert.equal(MAX_STEAL_CLAIMANTS, L.slotCount - 1);
});

test("defaults: stealing on for 2..31 workers, off for 1 and for 32 or more", () => {
  assert.deepEqual(topology({ threads: 1 }), OFF);
  assert.deepEqual(topology({ threads: 2 }), { ...OFF, steal: true, regionLanes: 2, regionWidth: 32 });
  assert.deepEqual(topology({ threads: 3 }), { ...OFF, steal: true, regionLanes: 3, regionWidth: 32 });
  assert.deepEqual(topology({ threads: 31 }), { ...OFF, steal: true, regionLanes: 31, regionWidth: 32 });
  assert.deepEqual(topology({ threads: 32 }), OFF);
  assert.deepEqual(topology({ threads: 100 }), OFF);
});

test("defaults of the new groups, and every existing field unchanged", () => {
  const r = resolve({ threads: 2 });
  assert.deepEqual(r.host, {
    steal: undefined,
    stealRegionLanes: undefined,
    dispatcher: undefined,
    doorbell: true,
    stallFreeLoops: undefined,
    maxBackoffMs: undefined,
  });
  assert.equal(r.balancer, undefined);
  assert.equal(r.inliner, null);
  assert.equal(r.threads, 2);
  assert.equal(r.debug, false);
  assert.equal(r.abortSignalCapacity, 1024);
  assert.equal(r.payloadInitialBytes, 4 * 1024 * 1024);
  assert.equal(r.payloadMaxByteLength, 64 * 1024 * 1024);
  assert.equal(r.maxPayloadBytes, 8 * 1024 * 1024);
  assert.equal(r.borrowMs, 10_000);
  assert.equal(r.worker.resolveAfterFinishingAll, false);
  assert.deepEqual(Object.keys(r).sort(), [
    "abortSignalCapacity",
    "balancer",
    "borrowMs",
    "debug",
    "elastic",
    "host",
    "inliner",
    "maxPayloadBytes",
    "maxQueue",
    "payloadInitialBytes",
    "payloadMaxByteLength",
    "payloadMode",
    "stats",
    "threads",
    "topology",
    "worker",
  ]);
  assert.equal(r.maxQueue, null); // unbounded
  assert.equal(r.stats, false);
  assert.equal(r.worker.recycle, null);
  assert.equal(r.elastic, null); // a fixed size
});

test("given values come through resolved", () => {
  const r = resolve({
    threads: 4,
    host: {
      steal: true,
      stealRegionLanes: 8,
      dispatcher: "serial-channel",
      doorbell: false,
      stallFreeLoops: 0,
      maxBackoffMs: 0.5,
    },
    balancer: "firstIdle",
  });
  assert.deepEqual(r.host, {
    steal: true,
    stealRegionLanes: 8,
    dispatcher: "serial-channel",
    doorbell: false,
    stallFreeLoops: 0,
    maxBackoffMs: 0.5,
  });
  assert.equal(r.balancer, "firstIdle");
  assert.deepEqual(r.topology, {
    steal: true,
    regionLanes: 8,
    regionWidth: 16,
    dispatcher: "serial-channel",
    balancer: "firstIdle",
    inline: false,
  });
  assert.equal(resolve({ host: { stallFreeLoops: 1_000_000, maxBackoffMs: 60_000 } }).host.maxBackoffMs, 60_000);
  assert.equal(resolve({ host: { stallFreeLoops: 1_000_000 } }).host.stallFreeLoops, 1_000_000);
});

test("an explicit balancer or dispatcher (option or environment) turns default stealing off", () => {
  for (const name of ["roundRobin", "firstIdle", "randomLane", "firstIdleOrRandom"]) {
    assert.deepEqual(topology({ threads: 4, balancer: name }), { ...OFF, balancer: name }, name);
    assert.equal(resolve({ balancer: name }).balancer, name);
  }
  // The older spelling stands for roundRobin.
  assert.equal(resolve({ threads: 4, balancer: "robinRound" }).balancer, "roundRobin");
  assert.deepEqual(topology({ threads: 4, balancer: "robinRound" }), { ...OFF, balancer: "roundRobin" });

  for (const d of ["per-thread", "serial-channel"]) {
    assert.deepEqual(topology({ threads: 4, host: { dispatcher: d } }), { ...OFF, dispatcher: d }, d);
    assert.deepEqual(topology({ threads: 4 }, { KNITTING_DISPATCHER: d }), { ...OFF, dispatcher: d }, `env ${d}`);
    assert.equal(resolve({ threads: 4 }, { KNITTING_DISPATCHER: d }).host.dispatcher, d);
  }
  // The option wins over the environment.
  const r = resolve({ threads: 4, host: { dispatcher: "per-thread" } }, { KNITTING_DISPATCHER: "serial-channel" });
  assert.equal(r.host.dispatcher, "per-thread");
  assert.equal(r.topology.dispatcher, "per-thread");
  // KNITTING_DISPATCHER is case-insensitive.
  assert.equal(topology({ threads: 4 }, { KNITTING_DISPATCHER: "Serial-Channel" }).dispatcher, "serial-channel");
});

test("KNITTING_STEAL turns stealing on or off; the option wins over it", () => {
  for (const on of ["1", "true", "TRUE", "True", " true "]) {
    // On even with a balancer: asked for, not a default.
    assert.equal(topology({ threads: 4, balancer: "firstIdle" }, { KNITTING_STEAL: on }).steal, true, on);
    assert.equal(resolve({ threads: 4 }, { KNITTING_STEAL: on }).host.steal, true, on);
  }
  for (const off of ["0", "false", "FALSE", "False"]) {
    assert.deepEqual(topology({ threads: 4 }, { KNITTING_STEAL: off }), OFF, off);
    assert.equal(resolve({ threads: 4 }, { KNITTING_STEAL: off }).host.steal, false, off);
  }
  // Unset or empty: the default decision.
  assert.equal(topology({ threads: 4 }, { KNITTING_STEAL: "" }).steal, true);
  assert.equal(resolve({ threads: 4 }, { KNITTING_STEAL: "" }).host.steal, undefined);
  // Explicit beats env, both ways.
  let r = resolve({ threads: 4, host: { steal: false } }, { KNITTING_STEAL: "1" });
  assert.equal(r.host.steal, false);
  assert.equal(r.topology.steal, false);
  r = resolve({ threads: 4, host: { steal: true } }, { KNITTING_STEAL: "0" });
  assert.equal(r.host.steal, true);
  assert.equal(r.topology.steal, true);
  // Where stealing cannot work, KNITTING_STEAL=1 is a default that does not apply.
  assert.deepEqual(topology({ threads: 1 }, { KNITTING_STEAL: "1" }), OFF);
  assert.deepEqual(topology({ threads: 32 }, { KNITTING_STEAL: "1" }), OFF);
  assert.deepEqual(topology({ threads: 2, inliner: {} }, { KNITTING_STEAL: "1" }), { ...OFF, inline: true });
  assert.deepEqual(topology({ threads: 0, inliner: {} }, { KNITTING_STEAL: "true" }), { ...OFF, inline: true });
});

test("host.steal: true with a balancer or dispatcher keeps stealing on", () => {
  const t = topology({ threads: 3, host: { steal: true, dispatcher: "serial-channel" }, balancer: "randomLane" });
  assert.deepEqual(t, {
    steal: true,
    regionLanes: 3,
    regionWidth: 32,
    dispatcher: "serial-channel",
    balancer: "randomLane",
    inline: false,
  });
  assert.equal(topology({ threads: 2, host: { steal: false } }).steal, false);
});

test("host.steal: true where stealing cannot work is a RangeError naming both sides", () => {
  throwsNaming(
    () => resolve({ threads: 2, host: { steal: true }, inliner: {} }),
    RangeError,
    ["host.steal", "inliner"],
    "steal + inliner",
  );
  throwsNaming(
    () => resolve({ threads: 0, host: { steal: true }, inliner: {} }),
    RangeError,
    ["host.steal", "inliner"],
    "steal + inliner, 0 threads",
  );
  for (const threads of [1, 32, 64]) {
    const err = throwsNaming(
      () => resolve({ threads, host: { steal: true } }),
      RangeError,
      ["host.steal", "threads"],
      `steal, ${threads} threads`,
    );
    assert.match(err.message, new RegExp(`2 to ${MAX_STEAL_CLAIMANTS}`));
    assert.match(err.message, new RegExp(`got threads ${threads}\\b`));
  }
  // ...even when KNITTING_STEAL says the same.
  throwsNaming(
    () => resolve({ threads: 1, host: { steal: true } }, { KNITTING_STEAL: "1" }),
    RangeError,
    "host.steal",
    "steal + env",
  );
});

test("host.stealRegionLanes: accepted where it splits the region by the rule, else a RangeError stating it", () => {
  // threads 2: 64 slots, consumers + 1 = 3.
  for (const [lanes, width] of [
    [2, 32],
    [4, 16],
    [8, 8],
    [16, 4],
  ]) {
    assert.deepEqual(
      topology({ threads: 2, host: { stealRegionLanes: lanes } }),
      { ...OFF, steal: true, regionLanes: lanes, regionWidth: width },
      `lanes ${lanes}`,
    );
  }
  for (const lanes of [1, 3, 5, 32, 64, 128]) {
    const err = throwsNaming(
      () => resolve({ threads: 2, host: { stealRegionLanes: lanes } }),
      RangeError,
      "host.stealRegionLanes",
      `lanes ${lanes}`,
    );
    assert.match(err.message, /split the 64 submit slots into region lanes of at most 32 slots/);
    assert.match(err.message, /slots \/ stealRegionLanes >= consumers \+ 1 \(here 3\)/);
    assert.match(err.message, new RegExp(`got ${lanes}\\b`));
    assert.match(err.message, /valid here: 2, 4, 8, 16\)/);
  }
  // threads 4: 128 slots, consumers + 1 = 5; 32 lanes would be 4 slots wide.
  assert.equal(topology({ threads: 4, host: { stealRegionLanes: 16 } }).regionWidth, 8);
  const four = throwsNaming(
    () => resolve({ threads: 4, host: { stealRegionLanes: 32 } }),
    RangeError,
    "host.stealRegionLanes",
    "4 threads, 32 lanes",
  );
  assert.match(four.message, /the 128 submit slots .*\(here 5\): got 32/);
  // threads 31: the one split is 31 lanes of 32 slots.
  assert.equal(topology({ threads: 31, host: { stealRegionLanes: 31 } }).regionWidth, 32);
  const full = throwsNaming(
    () => resolve({ threads: 31, host: { stealRegionLanes: 62 } }),
    RangeError,
    "host.stealRegionLanes",
    "31 threads",
  );
  assert.match(full.message, /the 992 submit slots .*\(here 32\): got 62 \(valid here: 31\)/);
  // The same value with explicit or env stealing.
  throwsNaming(
    () => resolve({ threads: 2, host: { steal: true, stealRegionLanes: 32 } }),
    RangeError,
    "host.stealRegionLanes",
    "explicit steal",
  );
  throwsNaming(
    () => resolve({ threads: 2, host: { stealRegionLanes: 32 }, balancer: "firstIdle" }, { KNITTING_STEAL: "1" }),
    RangeError,
    "host.stealRegionLanes",
    "env steal",
  );
});

test("host.stealRegionLanes is ignored while stealing is off, but its type is still checked", () => {
  for (const options of [
    { threads: 1, host: { stealRegionLanes: 7 } },
    { threads: 40, host: { stealRegionLanes: 7 } },
    { threads: 2, host: { steal: false, stealRegionLanes: 7 } },
    { threads: 2, host: { stealRegionLanes: 7 }, balancer: "firstIdle" },
    { threads: 2, host: { stealRegionLanes: 7 }, inliner: {} },
  ]) {
    const r = resolve(options);
    assert.equal(r.topology.steal, false, JSON.stringify(options));
    assert.equal(r.topology.regionLanes, 0);
    assert.equal(r.host.stealRegionLanes, 7);
  }
  assert.equal(topology({ threads: 2, host: { stealRegionLanes: 32 } }, { KNITTING_STEAL: "0" }).steal, false);
  throwsNaming(
    () => resolve({ threads: 1, host: { stealRegionLanes: "2" } }),
    TypeError,
    "host.stealRegionLanes",
    "type while off",
  );
  throwsNaming(
    () => resolve({ threads: 1, host: { stealRegionLanes: 0 } }),
    RangeError,
    "host.stealRegionLanes",
    "0 while off",
  );
});

test("threads: 0 needs the inliner", () => {
  const err = throwsNaming(() => resolve({ threads: 0 }), RangeError, ["threads", "inliner"], "threads 0");
  assert.match(err.message, /got 0/);
  const below = throwsNaming(() => resolve({ threads: -1 }), RangeError, "threads", "threads -1");
  assert.match(below.message, /between 1 and/);
  const belowInline = throwsNaming(
    () => resolve({ threads: -1, inliner: {} }),
    RangeError,
    "threads",
    "threads -1 with inliner",
  );
  assert.match(belowInline.message, /between 0 and/);
  const r = resolve({ threads: 0, inliner: {} });
  assert.equal(r.threads, 0);
  assert.deepEqual(r.inliner, { position: "last", batchSize: 1, dispatchThreshold: 1 });
  assert.deepEqual(r.topology, { ...OFF, inline: true });
});

test("the inliner: defaults, given values, and no stealing by default", () => {
  assert.deepEqual(resolve({ inliner: {} }).inliner, { position: "last", batchSize: 1, dispatchThreshold: 1 });
  const r = resolve({ threads: 4, inliner: { position: "first", batchSize: 64, dispatchThreshold: 1_000_000 } });
  assert.deepEqual(r.inliner, { position: "first", batchSize: 64, dispatchThreshold: 1_000_000 });
  assert.deepEqual(r.topology, { ...OFF, inline: true });
  // A balancer may still place calls among the workers and the inline lane.
  assert.deepEqual(topology({ threads: 4, inliner: {}, balancer: "roundRobin" }), {
    ...OFF,
    inline: true,
    balancer: "roundRobin",
  });
});

test("worker.bootstrap with the inliner is refused, naming both", () => {
  const bootstrap = { href: "./boot.mjs" };
  throwsNaming(
    () => resolve({ threads: 2, worker: { bootstrap }, inliner: {} }),
    RangeError,
    ["worker.bootstrap", "inliner"],
    "bootstrap + inliner",
  );
  throwsNaming(
    () => resolve({ threads: 0, worker: { bootstrap }, inliner: { position: "first" } }),
    RangeError,
    ["worker.bootstrap", "inliner"],
    "bootstrap + inliner, 0 threads",
  );
  assert.equal(resolve({ threads: 2, worker: { bootstrap } }).worker.bootstrap.href, "./boot.mjs");
});

// [options, class, key] for wrong types and values of each new key.
const BAD = [
  ...[null, 5, "x", [], true].map((v) => [{ host: v }, TypeError, "host"]),
  [{ host: { nope: 1 } }, TypeError, "host.nope"],
  [{ host: { Steal: true } }, TypeError, "host.Steal"],
  [{ host: { stealRegionLane: 2 } }, TypeError, "host.stealRegionLane"],
  ...["true", 1, 0, null, {}].map((v) => [{ host: { steal: v } }, TypeError, "host.steal"]),
  ...["2", 1.5, NaN, Infinity, null, true, 2n].map((v) => [
    { threads: 2, host: { stealRegionLanes: v } },
    TypeError,
    "host.stealRegionLanes",
  ]),
  ...[0, -1, -2].map((v) => [{ threads: 2, host: { stealRegionLanes: v } }, RangeError, "host.stealRegionLanes"]),
  ...["perThread", "per_thread", "", 1, null, true].map((v) => [
    { host: { dispatcher: v } },
    TypeError,
    "host.dispatcher",
  ]),
  ...["yes", 1, 0, null].map((v) => [{ host: { doorbell: v } }, TypeError, "host.doorbell"]),
  ...["1", 1.5, NaN, null, true].map((v) => [{ host: { stallFreeLoops: v } }, TypeError, "host.stallFreeLoops"]),
  ...[-1, 1_000_001].map((v) => [{ host: { stallFreeLoops: v } }, RangeError, "host.stallFreeLoops"]),
  ...["5", null, true, {}, 5n].map((v) => [{ host: { maxBackoffMs: v } }, TypeError, "host.maxBackoffMs"]),
  ...[0, -1, NaN, Infinity, -Infinity, 60_000.5, 1e9].map((v) => [
    { host: { maxBackoffMs: v } },
    RangeError,
    "host.maxBackoffMs",
  ]),
  ...["nope", "RoundRobin", "round-robin", "", 1, null, true, {}].map((v) => [{ balancer: v }, TypeError, "balancer"]),
  ...[true, false, null, 1, "first", []].map((v) => [{ inliner: v }, TypeError, "inliner"]),
  [{ inliner: { nope: 1 } }, TypeError, "inliner.nope"],
  [{ inliner: { batchsize: 2 } }, TypeError, "inliner.batchsize"],
  ...["middle", "First", 1, null].map((v) => [{ inliner: { position: v } }, TypeError, "inliner.position"]),
  ...["batchSize", "dispatchThreshold"].flatMap((k) => [
    ...["1", 1.5, NaN, null, true].map((v) => [{ inliner: { [k]: v } }, TypeError, `inliner.${k}`]),
    ...[0, -1, 1_000_001].map((v) => [{ inliner: { [k]: v } }, RangeError, `inliner.${k}`]),
  ]),
];

test(`${BAD.length} wrong scheduling options: a TypeError/RangeError naming the key`, () => {
  for (const [options, Ctor, key] of BAD) {
    const shown = (_k, v) => (typeof v === "bigint" ? `${v}n` : Number.isNaN(v) ? "NaN" : v);
    const what = `resolveOptions(${String(JSON.stringify(options, shown))})`;
    throwsNaming(() => resolve(options), Ctor, key, what);
  }
});

test("an unknown balancer lists the valid names", () => {
  const err = throwsNaming(() => resolve({ balancer: "leastBusy" }), TypeError, "balancer", "leastBusy");
  for (const name of ["roundRobin", "firstIdle", "randomLane", "firstIdleOrRandom"])
    assert.match(err.message, new RegExp(`"${name}"`));
  assert.match(err.message, /got string "leastBusy"/);
});

test(
  "bad KNITTING_STEAL / KNITTING_DISPATCHER values are a TypeError naming the variable, even " +
    "when an option overrides them",
  () => {
    for (const value of ["yes", "on", "2", "no", "tru"]) {
      const err = throwsNaming(
        () => resolve({ threads: 2 }, { KNITTING_STEAL: value }),
        TypeError,
        "KNITTING_STEAL",
        value,
      );
      assert.match(err.message, /1, true, 0, false/);
      throwsNaming(
        () => resolve({ threads: 2, host: { steal: false } }, { KNITTING_STEAL: value }),
        TypeError,
        "KNITTING_STEAL",
        `${value} + option`,
      );
    }
    for (const value of ["perthread", "serial", "1"]) {
      const err = throwsNaming(
        () => resolve({ threads: 2 }, { KNITTING_DISPATCHER: value }),
        TypeError,
        "KNITTING_DISPATCHER",
        value,
      );
      assert.match(err.message, /per-thread, serial-channel/);
      throwsNaming(
        () => resolve({ threads: 2, host: { dispatcher: "per-thread" } }, { KNITTING_DISPATCHER: value }),
        TypeError,
        "KNITTING_DISPATCHER",
        `${value} + option`,
      );
    }
  },
);

test("createPool reads the environment when it is called", () => {
  withEnv({ KNITTING_STEAL: "maybe" }, () => {
    throwsNaming(() => createPool({ threads: 2 }), TypeError, "KNITTING_STEAL", "createPool with KNITTING_STEAL=maybe");
  });
  withEnv({ KNITTING_DISPATCHER: "bogus" }, () => {
    throwsNaming(
      () => createPool({ threads: 2 }),
      TypeError,
      "KNITTING_DISPATCHER",
      "createPool with KNITTING_DISPATCHER=bogus",
    );
  });
  // resolveOptions defaults to process.env, read on each call.
  withEnv({ KNITTING_STEAL: "0" }, () => {
    assert.equal(resolveOptions({ threads: 2 }, L.maxLanes, L.maxAbortSlots).topology.steal, false);
  });
  withEnv({ KNITTING_STEAL: "1" }, () => {
    assert.equal(
      resolveOptions({ threads: 2, balancer: "firstIdle" }, L.maxLanes, L.maxAbortSlots).topology.steal,
      true,
    );
  });
});

test("resolveTopology is a pure function of the validated options and the env it is given", () => {
  const validated = {
    threads: 3,
    host: resolve({}).host,
    balancer: undefined,
    inliner: null,
    worker: resolve({}).worker,
  };
  const frozen = structuredClone(validated);
  withEnv({ KNITTING_STEAL: "garbage", KNITTING_DISPATCHER: "garbage" }, () => {
    // The env argument is what it reads, not process.env.
    const a = resolveTopology(validated, {});
    const b = resolveTopology(validated, {});
    assert.deepEqual(a, { ...OFF, steal: true, regionLanes: 3, regionWidth: 32 });
    assert.deepEqual(b, a);
    assert.notEqual(b, a, "a new object each time");
    assert.deepEqual(resolveTopology(validated, { KNITTING_STEAL: "0" }), OFF);
  });
  assert.deepEqual(validated, frozen, "its input is left as it was");
});

test(
  "KNITTING_WORKER_RUNTIME sets the default worker.runtime; an explicit one wins; a bad value " + "names the variable",
  () => {
    const resolve = (options, env) => resolveOptions(options, L.maxLanes, L.maxAbortSlots, env);
    assert.equal(resolve({ threads: 2 }, {}).worker.runtime, "thread");
    assert.equal(resolve({ threads: 2 }, { KNITTING_WORKER_RUNTIME: "process" }).worker.runtime, "process");
    assert.equal(resolve({ threads: 2 }, { KNITTING_WORKER_RUNTIME: " Process " }).worker.runtime, "process");
    assert.equal(resolve({ threads: 2 }, { KNITTING_WORKER_RUNTIME: "" }).worker.runtime, "thread");
    assert.equal(
      resolve({ threads: 2, worker: { runtime: "thread" } }, { KNITTING_WORKER_RUNTIME: "process" }).worker.runtime,
      "thread",
    );
    assert.equal(
      resolve({ threads: 2, worker: { hardTimeoutMs: 5 } }, { KNITTING_WORKER_RUNTIME: "process" }).worker.runtime,
      "process",
    );
    assert.throws(
      () => resolve({ threads: 2 }, { KNITTING_WORKER_RUNTIME: "fiber" }),
      (err) =>
        err instanceof TypeError &&
        /KNITTING_WORKER_RUNTIME/.test(err.message) &&
        /"thread" or "process"/.test(err.message),
    );
    // A wrong `worker` stays the error it is, whatever the environment says.
    assert.throws(
      () => resolve({ threads: 2, worker: 5 }, { KNITTING_WORKER_RUNTIME: "process" }),
      (err) => err instanceof TypeError && /worker must be an object/.test(err.message),
    );
  },
);

test("threads defaults to one worker per core (the host sleeps while workers compute)", async () => {
  const { availableParallelism } = await import("node:os");
  assert.equal(resolve({}).threads, availableParallelism());
  // An elastic pool with only minThreads grows to the same size.
  assert.equal(resolve({ minThreads: 1 }).maxThreads ?? resolve({ minThreads: 1 }).threads, availableParallelism());
});
