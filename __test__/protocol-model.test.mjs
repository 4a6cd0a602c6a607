// Exhaustive interleaving checks of the protocols that ship: the steal
// protocol (lib/protocol/steal.js) and the lane protocol (lib/protocol/lane.js), both ends and
// the workers' loops, run by __test__/model/checker.mjs. Each configuration
// explores every interleaving of every shared-memory access; each broken
// variant (one rule changed) must be caught.
//
// State-space sizes and times (Node 20, 2 vCPUs, 2026-12-03, machine shared
// with other work) are in the test names' comments; a run of this file takes
// about 1-2 minutes.

import test from "node:test";
import assert from "node:assert/strict";
import { passes, caught } from "./helpers/model.mjs";
import { StealModel } from "./model/steal-model.mjs";
import { broken } from "./model/steal-broken.mjs";
import { LaneModel, laneBroken } from "./model/lane-model.mjs";
import { skipOn } from "./fixtures/runtime.mjs";

const MAX_STATES = 1_500_000;

// ---- the steal protocol --------------------------------------------------------

const S = { workers: 2, regionLanes: 1 };
const steal = {
  // Workers start while the host publishes (~80 k states).
  startup: { ...S, width: 1, calls: [{}] },
  // From here on, workers start parked (a state the start-up run reaches).
  twoCalls: { ...S, width: 1, calls: [{}, {}], startParked: true },
  // The promise: a call is not left behind a long one (one that never
  // returns) while a worker could run it; published in two bursts (~120 k).
  longThenShort: { ...S, width: 2, calls: [{ long: true }, {}], startParked: true },
  // The same in one burst (~75 k).
  longAndShortTogether: { ...S, width: 2, calls: [{ long: true }, {}], startParked: true, bursts: [2] },
  // Slots published again after being answered (~175 k).
  slotReuse: { ...S, width: 1, calls: [{}, {}, {}], startParked: true, bursts: [3] },
  // An async call: its worker leaves new work to the idle one (~230 k).
  asyncCall: { ...S, width: 2, calls: [{ async: true }, {}], startParked: true },
  // Two region lanes (~170 k).
  twoRegionLanes: { workers: 2, regionLanes: 2, width: 1, calls: [{}, {}], startParked: true },
  // Worker 1 may die at any point; worker 0 serves what is left (~27 k).
  death: { ...S, width: 1, calls: [{}, {}], startParked: true, mayDie: [1] },
  // Worker 0 may die at any point and is replaced.
  deathAndReplacement: { ...S, width: 1, calls: [{}], startParked: true, mayDie: [0], respawn: true },
  // Recycling: worker 0 may leave at the end of any call (by the shipped
  // rule, worker/recycle.js) and its replacement joins while calls are in
  // flight; nothing is rejected, nothing lost (~24 k states).
  leaveAndJoin: { ...S, width: 1, calls: [{}, {}], startParked: true, mayLeave: [0], respawn: true },
  // A worker that ends one async call while awaiting another stays until
  // it holds none (one worker: it takes both calls).
  leaveWithAsync: {
    workers: 1,
    regionLanes: 1,
    width: 2,
    calls: [{ async: true }, { async: true }, {}],
    bursts: [2, 1],
    startParked: true,
    mayLeave: [0],
    respawn: true,
  },
  // An elastic pool shrinking: the host tells worker 0 to leave while calls
  // arrive; it reads that at any turn of its loop (parked, or woken for a
  // call it has not claimed) and leaves; worker 1 runs the rest (~18 k).
  idleLeave: { ...S, width: 1, calls: [{}, {}], startParked: true, mayIdleLeave: [0] },
  // The same, and a new claimant joins in its place: shrink, then grow
  // (~11 k; with two calls ~530 k, half a minute: left out).
  idleLeaveAndJoin: { ...S, width: 1, calls: [{}], startParked: true, mayIdleLeave: [0], respawn: true },
  // Told to leave while it awaits an async call: it leaves once that call
  // is answered (~35 k).
  idleLeaveWithAsync: {
    ...S,
    width: 1,
    calls: [{ async: true }, {}],
    bursts: [2],
    startParked: true,
    mayIdleLeave: [0],
  },
  // A claimant that was not there joins at any point of a call (~7 k states;
  // with two calls ~300 k, a minute: left out).
  lateJoin: { ...S, width: 1, calls: [{}], startParked: true, late: [1] },
};

for (const [name, config] of Object.entries(steal)) {
  test(`steal protocol, every interleaving: ${name}`, () => {
    passes(new StealModel(config), 1000, MAX_STATES);
  });
}

const stealBroken = [
  // The stale bit found by the first model: idle workers spin for ever.
  ["OwnerBeforePending", "slotReuse", /no progress/],
  ["HostNeverWakes", "twoCalls", /never settled/],
  ["ParkWithoutRecheck", "twoCalls", /never settled/],
  // The spinner rule without the baton: a short call waits for the long one.
  ["NoBaton", "longThenShort", /never settled.*in long call/],
  // A batch claim: the second call waits behind the first, however long.
  ["ClaimsTwo", "longThenShort", /never settled.*in long call/],
  ["LoserClears", "twoCalls", /never settled/],
  // A worker woken for a call leaves before claiming it: unless taking it
  // back wakes a sleeper, the call waits while worker 1 sleeps.
  ["TakeBackNoWake", "idleLeave", /never settled/],
];
for (const [variant, config, pattern] of stealBroken) {
  test(`steal protocol, broken variant ${variant} is caught (${config})`, () => {
    caught(new StealModel({ ...steal[config], classes: broken[variant] }), pattern, MAX_STATES);
  });
}

// Broken leave rules (worker/recycle.js's leaveWhenEmpty with one rule dropped).
const leaveBroken = [
  // Leaving while its own async call is pending: the call is taken back,
  // rejected, or answered after the worker left.
  [
    "LeavesWhileAwaiting",
    (port, _waiting, exit) => (port.leave(), exit(), true),
    "leaveWithAsync",
    /left holding call|worker 0 left, then: store DONE/,
  ],
  // Exiting before publishing the answer it just wrote: the host may end it
  // first and never see the answer.
  [
    "LeavesUnpublished",
    (port, waiting, exit) => (port.asyncRunning !== 0 || waiting !== 0 ? false : (exit(), port.leave(), true)),
    "leaveAndJoin",
    /left holding call|worker 0 left, then: store DONE/,
  ],
  // Exiting without leaving the claimants: exit() returns (a worker thread
  // waits for the host to end it), and its loop goes on claiming calls a
  // terminate() then rejects, or, parked, wakes and serves again.
  [
    "ExitsWithoutLeaving",
    (port, waiting, exit) => (port.asyncRunning !== 0 || waiting !== 0 ? false : (port.flush(), exit(), true)),
    "leaveAndJoin",
    /worker 0 left, then: .*it must take no step/,
  ],
  // Claiming on at its limit: a worker that always holds an async call
  // would never leave (the rule without retire()).
  [
    "ClaimsPastLimit",
    (port, waiting, exit) => (port.asyncRunning !== 0 || waiting !== 0 ? false : (port.leave(), exit(), true)),
    "leaveWithAsync",
    /past its recycle limit/,
  ],
];
// An idle leave with one rule dropped.
leaveBroken.push([
  "IdleLeavesWhileAwaiting",
  (port, _waiting, exit) => (port.leave(), exit(), true),
  "idleLeaveWithAsync",
  /left holding call|worker 0 left, then: store DONE/,
]);
for (const [variant, leaveRule, config, pattern] of leaveBroken) {
  test(`steal protocol, broken leave rule ${variant} is caught (${config})`, () => {
    caught(new StealModel({ ...steal[config], leaveRule }), pattern, MAX_STATES);
  });
}

// ---- the lane protocol ---------------------------------------------------------

const lane = {
  twoCalls: { calls: [{}, {}], slots: 2 },
  oneSlotThreeCalls: { calls: [{}, {}, {}], slots: 1, bursts: [3] },
  asyncFirst: { calls: [{ async: true }, {}, {}], slots: 2 },
  fourCallsTwoBursts: { calls: [{}, { async: true }, {}, {}], slots: 3, bursts: [2, 2] },
  // Elastic size (and recycling): the lane leaves at any point while calls
  // are in flight, its worker is ended once the lane is empty, and a new
  // worker joins it while calls wait.
  leaveAndJoin: { calls: [{}, {}, {}], slots: 2, bursts: [2, 1], elastic: true },
  leaveWithAsync: { calls: [{ async: true }, {}, {}], slots: 2, elastic: true },
};

for (const [name, config] of Object.entries(lane)) {
  test(`lane protocol, every interleaving: ${name}`, () => {
    passes(new LaneModel(config), 100, MAX_STATES);
  });
}

const laneBrokenCases = [
  ["HostNeverWakes", "twoCalls", /never settled/],
  ["HostRereadsRes", "twoCalls", /settles call/],
  ["RetakesStarted", "asyncFirst", /runs call \d+ again/],
  // The shipped lane protocol before the model: parked on REQ instead of SLEEPING.
  ["SleepsOnReq", "twoCalls", /never settled/],
];
// Broken leave rules: ending the worker before its lane is empty, placing
// on a lane that is leaving.
const laneLeaveBroken = [
  ["EndsBeforeEmpty", { emptied: () => true }, "leaveWithAsync", /ended holding call/],
  ["PlacesOnLeaving", { placesOnLeaving: true }, "leaveAndJoin", /places call \d+ on the lane while it is/],
];
for (const [variant, change, config, pattern] of laneLeaveBroken) {
  test(`lane protocol, broken leave rule ${variant} is caught (${config})`, () => {
    caught(new LaneModel({ ...lane[config], ...change }), pattern, MAX_STATES);
  });
}
for (const [variant, config, pattern] of laneBrokenCases) {
  test(`lane protocol, broken variant ${variant} is caught (${config})`, () => {
    caught(new LaneModel({ ...lane[config], classes: laneBroken[variant] }), pattern, MAX_STATES);
  });
}

const transpiled = "Bun prints transpiled function text (`while (this.turn()) ;`), which this test compares";
test("the checker drives the shipped loops: serve() is exactly `while (this.turn());`", {
  skip: skipOn({ bun: transpiled }),
}, async () => {
  // The models run each turn of serve()'s loop as its own op; that is only
  // the shipped loop if serve() is that loop and nothing else.
  const { createRequire } = await import("node:module");
  const require = createRequire(import.meta.url);
  const { Claimant } = require("../lib/protocol/steal.js");
  const { WorkerLane } = require("../lib/protocol/lane.js");
  for (const cls of [Claimant, WorkerLane]) {
    const body = cls.prototype.serve.toString().replace(/\s+/g, " ");
    assert.equal(body, "serve() { while (this.turn()); }", `${cls.name}.serve`);
  }
});
