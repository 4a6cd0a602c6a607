"use strict";
// The host's side of a work-stealing pool: every call goes into the one
// shared submit region that all workers claim from (the protocol:
// lib/protocol/steal.js, HostSubmit). The pool drives it through the interface of
// host/topology/interface.js, as it does lanes.js.

const { availableParallelism } = require("node:os");
const native = require("../../native/index.js");
const { HostSubmit } = require("../../protocol/steal.js");
const Slot = require("../../protocol/slot.js");
const { MSG } = require("../../protocol/messages.js");

class StealTopology {
  /** The control region's shape: no private lanes, one steal section. */
  static controlShape(options) {
    const { topology, threads, abortSignalCapacity } = options;
    return { lanes: 0, signals: abortSignalCapacity, steal: [threads, topology.regionLanes, topology.regionWidth] };
  }

  /**
   * `views(Module)`: the pool's view for a module (host/view.js), its control
   * region formatted; `wakeWorker(index)` wakes a worker parked on a word.
   */
  constructor(views, shape, wakeWorker) {
    const pool = views(StealTopology);
    const { topology, threads } = pool.options;
    this.pool = pool;
    this.steal = true;
    this.leavesBySelf = true;
    this.inline = null;
    this.placesAtOnce = true; // a call is placed as it is submitted
    const sectionByte = native.stealOffset(shape.lanes, shape.signals);
    this.submit = new HostSubmit(
      pool.i32,
      sectionByte,
      threads,
      topology.regionLanes,
      topology.regionWidth,
      wakeWorker,
    );
    // `cores`: a worker spins only while the busy workers, the spinner and
    // the host fit on them (protocol/steal.js, "Waiting and waking").
    this.setup = {
      sectionByte,
      workers: threads,
      regionLanes: topology.regionLanes,
      width: topology.regionWidth,
      cores: availableParallelism(),
    };
    this.settleBound = (index) => pool.settle(this.submit, index);
    this.answered = new Float64Array(threads); // calls each worker has answered (server/elastic.js)
  }

  /** What a worker needs to claim from the region (worker/serve.js). */
  workerSetup() {
    return this.setup;
  }

  describe() {
    return `work stealing over ${this.setup.regionLanes} region lanes of ${this.setup.width} slots`;
  }

  /** The host trace naming the topology, in knitting's words (its `debug: { host: true }` line). */
  dispatcherLine() {
    return `dispatcher=steal lanes=${this.setup.workers} g=${this.setup.regionLanes}`;
  }

  place(call) {
    const index = this.submit.freeSlot();
    if (index < 0) return false;
    return this.pool.write(this.submit, index, call);
  }

  drain() {
    const submit = this.submit;
    if (submit.inFlight === 0) return 0;
    let settled = 0;
    for (let w = 0; w < submit.workers; w++) {
      const n = submit.takeDone(w, this.settleBound);
      this.answered[w] += n;
      settled += n;
    }
    this.pool.slotsFreed(settled);
    return settled;
  }

  flush() {
    this.submit.flush();
  }

  /** See Pool.takeBack. */
  takeBack(worker) {
    const pool = this.pool;
    const { answered, held: indexes } = this.submit.takeBack(worker, this.settleBound);
    pool.slotsFreed(answered);
    const held = [];
    for (const index of indexes) {
      const ext = Slot.extOf(pool.i32, this.submit.slotWord(index));
      if (ext !== Slot.NO_EXT) pool.freePayload(ext);
      held.push(this.submit.release(index));
    }
    pool.slotsFreed(held.length);
    return held;
  }

  /** Every call placed in a slot and not yet answered. */
  placedCalls() {
    return this.submit.calls.filter((call) => call !== null);
  }

  /** The calls worker `worker` has claimed: `{ call, slots, slot }`. */
  heldBy(worker) {
    const held = [];
    const calls = this.submit.calls;
    for (let index = 0; index < calls.length; index++) {
      if (calls[index] !== null && this.submit.ownerOf(index) === worker)
        held.push({ call: calls[index], slots: this.submit, slot: index });
    }
    return held;
  }

  /** The worker holding a placed call; -1 while no worker has claimed it. */
  workerOf(call) {
    return this.submit.ownerOf(call.slot);
  }

  /** Workers being replaced claim no more (they are terminated): nothing to do. */
  workersChanged() {}

  holdsNone(worker) {
    return this.heldBy(worker).length === 0;
  }

  /** It leaves the claimants by itself once it holds no call (worker/recycle.js), then says "left". */
  askToLeave(worker) {
    this.pool.workers[worker].postMessage({ type: MSG.LEAVE });
  }
}

/** What this topology reads of the pool (host/view.js). */
StealTopology.POOL_USES = Object.freeze(["options", "i32", "workers", "write", "settle", "freePayload", "slotsFreed"]);

module.exports = { StealTopology };
