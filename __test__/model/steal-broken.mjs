// Deliberately broken variants of the steal protocol (lib/protocol/steal.js): each
// subclass changes one rule, and the model checker must catch it. Each
// names the rule it breaks and what the checker reports.

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { HostSubmit, Claimant } = require("../../lib/protocol/steal.js");
const { L, lowestBit } = require("../../lib/protocol/layout.js");

/** Step 2 in the wrong order: OWNER = 0 before the PENDING bits (a stale bit). */
class OwnerBeforePending extends HostSubmit {
  flush() {
    let published = 0;
    for (let g = 0; g < this.regionLanes; g++) {
      const bits = this.fresh[g];
      if (bits === 0) continue;
      this.fresh[g] = 0;
      for (let rest = bits; rest !== 0; rest &= rest - 1) {
        published++;
        Atomics.store(this.i32, this.slotWord(g * this.width + lowestBit(rest)) + L.slotWordOwner, 0);
      }
      Atomics.or(this.i32, this.pending + g, bits);
    }
    if (published === 0) return;
    const sleepers = Atomics.load(this.i32, this.sleepers);
    if (sleepers === 0) return;
    const wanted = Atomics.load(this.i32, this.spinner) !== 0 ? published - 1 : published;
    if (wanted > 0) this.wakeSleepers(sleepers, wanted);
  }
}

/** The host publishes without waking anyone. */
class HostNeverWakes extends HostSubmit {
  wakeSleepers() {}
}

/** Parking without re-checking PENDING after setting the SLEEPERS bit. */
class ParkWithoutRecheck extends Claimant {
  anyPending() {
    // Only park() asks with nothing claimed in hand; the loop's own claim
    // has already looked. Answering "nothing" is the missing re-check.
    return this.inPark ? false : super.anyPending();
  }
  park() {
    this.inPark = true;
    try {
      super.park();
    } finally {
      this.inPark = false;
    }
  }
}

/** A winner does not wake a sleeper for the work it leaves (the spinner rule without its baton). */
class NoBaton extends Claimant {
  passBaton() {}
}

/** A winner looks for more work while it still holds SPINNER (the baton comes too early). */
class BatonBeforeSpinner extends Claimant {
  stopSpinning() {}
  passBaton() {
    super.passBaton();
    Claimant.prototype.stopSpinning.call(this);
  }
  park() {
    Claimant.prototype.stopSpinning.call(this);
    super.park();
  }
}

/** Claims two calls at a time: the second waits behind the first, however long. */
class ClaimsTwo extends Claimant {
  claim() {
    if (this.reserved !== undefined && this.reserved >= 0) {
      const slot = this.reserved;
      this.reserved = -1;
      return slot;
    }
    const first = super.claim();
    if (first >= 0) {
      const second = super.claim();
      this.reserved = second >= 0 ? second : -1;
    }
    return first;
  }
}

/** A loser clears the bit it lost (it may belong to the slot's next publication). */
class LoserClears extends Claimant {
  claim() {
    const before = [];
    for (let g = 0; g < this.regionLanes; g++) before.push(Atomics.load(this.i32, this.pending + g));
    const won = super.claim();
    for (let g = 0; g < this.regionLanes; g++) {
      const lost = won >= 0 && ((won / this.width) | 0) === g ? before[g] & ~(1 << (won % this.width)) : before[g];
      if (lost !== 0) Atomics.and(this.i32, this.pending + g, ~lost);
    }
    return won;
  }
}

// Whether TakeBackNoWake is inside takeBack (module state: no field in the snapshots).
let takingBack = false;

/** Taking a gone worker back without waking sleepers for the work it was woken for. */
class TakeBackNoWake extends HostSubmit {
  takeBack(w, settle) {
    takingBack = true;
    try {
      return super.takeBack(w, settle);
    } finally {
      takingBack = false;
    }
  }
  wakeSleepers(sleepers, count) {
    if (!takingBack) super.wakeSleepers(sleepers, count);
  }
}

export const broken = {
  TakeBackNoWake: { HostSubmit: TakeBackNoWake, Claimant },
  OwnerBeforePending: { HostSubmit: OwnerBeforePending, Claimant },
  HostNeverWakes: { HostSubmit: HostNeverWakes, Claimant },
  ParkWithoutRecheck: { HostSubmit, Claimant: ParkWithoutRecheck },
  NoBaton: { HostSubmit, Claimant: NoBaton },
  BatonBeforeSpinner: { HostSubmit, Claimant: BatonBeforeSpinner },
  ClaimsTwo: { HostSubmit, Claimant: ClaimsTwo },
  LoserClears: { HostSubmit, Claimant: LoserClears },
};
