"use strict";
// The host's side of a pool with private lanes: one lane per worker (the
// protocol: lib/protocol/lane.js, HostLane), a balancer that picks the lane for each
// call (lib/host/topology/balancers.js), and optionally the host's own inline lane
// (lib/host/topology/inline.js). The pool drives it through the interface of
// host/topology/interface.js, as it does steal.js.

const { L, lowestBit } = require("../../protocol/layout.js");
const { HostLane } = require("../../protocol/lane.js");
const { makeBalancer } = require("./balancers.js");
const { InlineLane } = require("./inline.js");
const Slot = require("../../protocol/slot.js");
const { laneEmptied } = require("../../server/recycle.js");

// Stands in for a lane whose worker is being replaced: balancers skip it
// (the array keeps its length, which round-robin's cursor relies on).
const RETIRED = Object.freeze({ inline: false, lane: -1, inFlight: Infinity, accepts: () => false });

class LanesTopology {
  /** The control region's shape: a lane per worker (one at least), no steal section. */
  static controlShape(options) {
    return { lanes: Math.max(1, options.threads), signals: options.abortSignalCapacity, steal: [] };
  }

  /**
   * `views(Module)`: the pool's view for a module (host/view.js); this one
   * reads through its own (POOL_USES) and gives the inline lane its own.
   */
  constructor(views, shape, wakeWorker) {
    const pool = views(LanesTopology);
    const { options, table } = pool;
    const topology = options.topology;
    this.pool = pool;
    this.steal = false;
    this.leavesBySelf = false;
    // Private lanes, one per worker, in index order; `choices` adds the
    // inline lane at its position and is what the balancer picks from.
    this.lanes = [];
    for (let i = 0; i < options.threads; i++) this.lanes.push(new HostLane(pool.i32, i, wakeWorker));
    this.inline = options.inliner ? new InlineLane(views(InlineLane), table, options.inliner) : null;
    if (this.inline === null) this.choices = this.lanes;
    else if (options.inliner.position === "first") this.choices = [this.inline, ...this.lanes];
    else this.choices = [...this.lanes, this.inline];
    this.allChoices = this.choices; // `choices` stands in for lanes whose workers are being replaced
    this.answered = new Float64Array(this.lanes.length); // calls each lane has answered (server/elastic.js)
    this.choose = makeBalancer(topology.balancer);
    // serial-channel: calls queue, and a flush (once per burst, and after
    // each drain) places them.
    this.serialChannel = topology.dispatcher === "serial-channel";
    this.placesAtOnce = !this.serialChannel;
    this.name = `private lanes, ${topology.balancer || "least-loaded"} balancer, ${topology.dispatcher} dispatcher`;
    if (this.inline !== null) this.name += `, inline lane ${options.inliner.position}`;
  }

  workerSetup() {
    return null;
  }

  describe() {
    return this.name;
  }

  /** The host trace naming the topology: knitting's words, then the choices it lacks. */
  dispatcherLine() {
    const { balancer, dispatcher } = this.pool.options.topology;
    let line = `dispatcher=${dispatcher} lanes=${this.lanes.length}`;
    if (balancer !== null) line += ` balancer=${balancer}`;
    if (this.inline !== null) line += ` inliner=${this.pool.options.inliner.position}`;
    return line;
  }

  place(call) {
    const lane = this.choose(this.choices, call);
    if (lane === null) return false;
    if (lane === this.inline) {
      lane.place(call);
      return true;
    }
    return this.pool.write(lane, lane.freeSlot(), call);
  }

  drain() {
    const lanes = this.lanes;
    let settled = 0;
    for (let i = 0; i < lanes.length; i++) {
      if (lanes[i].inFlight !== 0) settled += this.drainLane(lanes[i]);
    }
    return settled;
  }

  /** Settles every response a lane has published; returns how many. */
  drainLane(lane) {
    let finished = lane.takeFinished();
    let settled = 0;
    while (finished !== 0) {
      const index = lowestBit(finished);
      finished &= finished - 1;
      this.pool.settle(lane, index);
      settled++;
    }
    this.pool.slotsFreed(settled);
    this.answered[lane.lane] += settled;
    return settled;
  }

  flush() {
    // serial-channel: this pass is where queued calls are dispatched.
    if (this.serialChannel) this.pool.pump();
    const lanes = this.lanes;
    for (let i = 0; i < lanes.length; i++) lanes[i].flush();
  }

  /** See Pool.takeBack. */
  takeBack(worker) {
    const pool = this.pool;
    const lane = this.lanes[worker];
    this.drainLane(lane);
    for (let index = 0; index < L.slotCount; index++) {
      if (lane.calls[index] === null) continue;
      const ext = Slot.extOf(pool.i32, lane.slotWord(index));
      if (ext !== Slot.NO_EXT) pool.freePayload(ext);
    }
    const held = lane.reset();
    pool.slotsFreed(held.length);
    return held;
  }

  /** Every call placed in a slot or the inline lane and not yet answered. */
  placedCalls() {
    const calls = [];
    for (const lane of this.lanes) for (const call of lane.calls) if (call !== null) calls.push(call);
    if (this.inline !== null) calls.push(...this.inline.calls());
    return calls;
  }

  /** The calls in worker `worker`'s lane: `{ call, slots, slot }`. */
  heldBy(worker) {
    const held = [];
    const lane = this.lanes[worker];
    lane.calls.forEach((call, index) => {
      if (call !== null) held.push({ call, slots: lane, slot: index });
    });
    return held;
  }

  /** The worker whose lane holds a placed call. */
  workerOf(call) {
    return call.lane.lane;
  }

  /**
   * The balancer's choices without the lanes whose workers are being replaced
   * (or emptied to be recycled, server/recycle.js), or that have none (server/elastic.js).
   */
  holdsNone(worker) {
    return laneEmptied(this.lanes[worker]);
  }

  /** Its lane is emptied first: the recycler ends it then (server/recycle.js). */
  askToLeave(worker, reason) {
    this.pool.recycle.request(worker, this.pool.workers[worker], reason);
  }

  workersChanged() {
    const { killedFor, recycle, elastic } = this.pool;
    this.choices = this.allChoices.map((lane) =>
      lane.inline ||
      (killedFor[lane.lane] === null &&
        (recycle === null || !recycle.retiring(lane.lane)) &&
        (elastic === null || elastic.placeable(lane.lane)))
        ? lane
        : RETIRED,
    );
  }
}

/** What this topology reads of the pool (host/view.js). */
LanesTopology.POOL_USES = Object.freeze([
  "options",
  "table",
  "i32",
  "workers",
  "killedFor",
  "recycle",
  "elastic",
  "write",
  "settle",
  "freePayload",
  "slotsFreed",
  "pump",
]);

module.exports = { LanesTopology };
