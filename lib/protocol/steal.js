"use strict";
// The steal protocol: one shared submit region that every worker claims calls
// from, so an idle worker takes any call that a busy one has not started. It
// is the default for pools of 2..31 workers (lib/options/index.js); private lanes
// (lib/protocol/lane.js) are the other topology.
//
// This file is the protocol, whole: where its words are (StealGeometry), both
// ends (the host's, HostSubmit; the worker's, Claimant), and the worker's
// whole scheduling loop (when it claims, spins, parks and wakes others). It is
// exempt from the line cap: one protocol, read top to bottom. The pool
// (host/topology/steal.js) and the worker (worker/serve.js) call into it; the exhaustive model checker
// (__test__/model/) runs these very classes, interleaving every shared-memory
// access they make, so what is proven is what ships. Every access to a
// shared word here is an `Atomics` call (the checker stands in for
// `Atomics`); slot contents (request, response) are plain bytes ordered by
// those atomics and are written by host/slots.js and worker/serve.js. Offsets come from
// Rust's layout() (protocol/layout.js; StealGeometry below).
//
// # Words
// The section has G region lanes of `width` slots each (width <= 32).
// - PENDING[g]: bit b set = slot (g, b) holds a published request that may
//   still be unclaimed. The host sets bits; only the worker that won a slot
//   clears its bit. A hint that lets claimants find work without scanning
//   slots; the claim itself is OWNER.
// - OWNER (a slot word): OWNER_HOST = never published; 0 = published and
//   claimable; w + 1 = claimed by worker w, which it stays after the answer
//   until the host publishes the slot again.
// - DONE[w][g], on worker w's own lines, written only by it: w toggles bit b
//   to hand slot (g, b) back with its response. DONE_SEQ[w] counts w's
//   flushes so the host skips workers with nothing new.
// - SLEEPERS: bit w = worker w is parking or parked (each worker sets and
//   clears its own bit). WAKE[w], on w's lines: the counter w parks on;
//   whoever wakes w bumps it, then notifies it.
// - IDLE: bit w = worker w holds no started call. SPINNER: w + 1 of the one
//   worker allowed to spin, or 0.
// - The doorbell words (COUNTER, ARMED; src/doorbell.rs) after each flush.
//
// # One call
// 1. Host (`freeSlot`, `publish`): pick a slot it does not hold, write the
//    request into it (host/slots.js, protocol/slot.js). Host and claimants walk a region lane's
//    slots in rotation, from the one after the last they used, so calls are
//    claimed in about the order they were published (always the lowest bit
//    would let new calls in freed low slots overtake an old one for as long
//    as the region stays full).
// 2. Host, once per burst (`flush`): PENDING[g] |= new bits, then OWNER = 0
//    in each new slot, then wake sleepers (see Waking). The bits go first: a
//    claimant that sees one before its OWNER = 0 loses the compare-exchange
//    and moves on. In the other order a claimant holding an old PENDING
//    snapshot can win a slot before its bit is set again; its clear then
//    comes before the host's set, and the bit stays set on a claimed slot
//    that nobody will clear, so idle workers never park (broken variant
//    "owner before pending" in the model).
// 3. Worker (`claim`), when it is about to run a call: for a set PENDING
//    bit, compareExchange(OWNER, 0, w + 1); the one worker whose exchange
//    returns 0 owns the call and clears the bit. A loser moves on and never
//    clears the bit: by then the slot may have been answered and published
//    again, and the bit belongs to that round. A worker claims ONE call, the
//    one it runs next: claim = start. A call claimed ahead of time would
//    wait behind the one running, however long, while another worker could
//    have run it (broken variant "claims two").
// 4. Worker (`finish`, `flush`): the response is in the slot (worker/serve.js);
//    toggle bit b of its private DONE[g] copy; before it starts another call
//    or waits, store the changed DONE words, DONE_SEQ += 1, then the
//    doorbell (COUNTER += 1; ring if ARMED).
// 5. Host (`takeDone`): for each worker whose DONE_SEQ moved, DONE[w][g] ^
//    seen[w][g] are the answered slots; it settles each call and frees the
//    slot.
//
// # Why a call is never lost, duplicated or misdelivered
// - Run once: OWNER goes 0 -> w + 1 by compare-exchange, and only the host
//   writes 0, once per publication.
// - Never stranded: while a slot's OWNER is 0 its PENDING bit is set (the
//   host sets it before storing 0; only the winner clears it, after
//   winning).
// - Answered once: each answer is one toggle of a bit in a word with one
//   writer; the host consumes DONE ^ seen and then sets seen = DONE.
// - Misdelivered: the host maps slot to call in its own table and checks
//   the call id the worker echoes (host/slots.js settle).
// - A worker that dies (`takeBack`): the host first settles its published
//   answers (they are real), then every slot it holds busy with OWNER ==
//   w + 1 was taken by the dead worker and not answered. Those calls are
//   rejected (not re-run: a task may have side effects), their PENDING bits
//   cleared (it may have died between winning and clearing), its DONE lines
//   zeroed for its replacement, its SLEEPERS, IDLE and SPINNER marks
//   cleared, and the sleepers woken if work is pending (the worker a flush
//   woke may be the one that died).
//
// # Waiting and waking (who spins, who sleeps, who wakes whom)
// A worker with nothing to claim (`serve`):
// - Spins only if it may take the single SPINNER turn and spinning leaves a
//   core for the host: the busy workers, the spinner and the host must fit
//   on the machine's cores. On 2 vCPUs with both workers busy, a spinning
//   worker takes the core the host needs to publish the next call, so the
//   worker that would feed on it starves it (CPU-bound calls ran up to 1.9x
//   their ideal time that way). The spin is bounded (SPIN_MICROS in
//   worker/serve.js) and ends when a PENDING bit appears.
// - Otherwise parks: seq = WAKE[w]; SLEEPERS |= bit; re-check PENDING (any
//   bit: clear its SLEEPERS bit and serve again after the event loop
//   turns); else wait until WAKE[w] != seq. Host (or PENDING, load
//   SLEEPERS) and worker (or SLEEPERS, load PENDING) are sequentially
//   consistent, so one sees the other; WAKE is bumped before the notify, so
//   a notify that lands before the wait makes the wait return at once.
// The host's flush wakes one sleeper per call it published, one fewer while
// a worker holds SPINNER (the spinner takes the first call itself). A
// worker that wins a call and still sees PENDING bits while someone sleeps
// wakes one sleeper before it runs its call ("passing the baton"): a
// spinner that the host counted on for one call may find two (two flushes
// saw it spinning), and without the baton the second waits for the first to
// finish while a worker sleeps (broken variant "no baton"). It gives
// SPINNER back before it looks, so either it sees the host's new bits or the
// host sees SPINNER free and wakes a sleeper itself.
// A worker waiting on async calls of its own does not claim while another
// worker is idle (so one event loop does not collect every async call); it
// parks, and the end of its last async call wakes it through its own WAKE.

const { L, lowestBit, nextBit, popcount, maskOf } = require("./layout.js");
const { ownerWord } = require("./slot.js");
const { announce } = require("./doorbell.js");

// ---- Where the words are, and what both ends do with them ----

/** Word and byte offsets of one steal section, shared by both ends (addresses only). */
class StealGeometry {
  /**
   * `sectionByte`: the section's offset in the control region (Rust's
   * stealOffset); `workers` claimants; `regionLanes` lanes of `width` slots.
   * `notify(index)`: wakes whoever sleeps on word `index` (the runtime's
   * way: Atomics.notify for threads, a shared futex for processes).
   */
  constructor(i32, sectionByte, workers, regionLanes, width, notify) {
    this.i32 = i32;
    this.notify = notify;
    this.workers = workers;
    this.regionLanes = regionLanes;
    this.width = width;
    this.slots = regionLanes * width;
    this.full = maskOf(width);
    const base = sectionByte / 4;
    this.pending = base + L.stealWordPending; // PENDING[g] = pending + g
    this.sleepers = base + L.stealWordSleepers;
    this.idle = base + L.stealWordIdle;
    this.spinner = base + L.stealWordSpinner;
    this.doneByte = sectionByte + L.stealDoneOffset;
    this.slotsByte = this.doneByte + workers * L.doneStride;
  }
  /** Word index of DONE[w][g]. */
  doneWord(w, g) {
    return (this.doneByte + w * L.doneStride) / 4 + g;
  }
  doneSeqWord(w) {
    return (this.doneByte + w * L.doneStride) / 4 + L.doneSeqWord;
  }
  /** Word index of WAKE[w], the counter worker `w` parks on. */
  wakeWord(w) {
    return (this.doneByte + w * L.doneStride) / 4 + L.wakeWord;
  }
  /** Word index of the first header word of slot `index` (= g * width + b). */
  slotWord(index) {
    return (this.slotsByte + index * L.slotStride) / 4;
  }
  /** Byte offset of slot `index`'s inline payload. */
  slotPayload(index) {
    return this.slotsByte + index * L.slotStride + L.slotHeaderBytes;
  }
}

/** What both ends of the steal protocol do with the section's words: wake a worker, look for work. */
class StealEnd extends StealGeometry {
  /** Wakes worker `w` if it is parked (bump its WAKE, then notify it). */
  wakeWorker(w) {
    const word = this.wakeWord(w);
    Atomics.add(this.i32, word, 1);
    this.notify(word);
  }
  /** Wakes up to `count` of the workers in `sleepers` (lowest first). */
  wakeSleepers(sleepers, count) {
    for (let n = 0; sleepers !== 0 && n < count; n++) {
      const w = lowestBit(sleepers);
      sleepers &= sleepers - 1;
      this.wakeWorker(w);
    }
  }
  /** Whether any PENDING bit is set. */
  anyPending() {
    for (let g = 0; g < this.regionLanes; g++) {
      if (Atomics.load(this.i32, this.pending + g) !== 0) return true;
    }
    return false;
  }
}

// ---- The host's end ----

/** The host's end (steps 1, 2 and 5, and taking back a dead worker's calls). */
class HostSubmit extends StealEnd {
  constructor(i32, sectionByte, workers, regionLanes, width, notify) {
    super(i32, sectionByte, workers, regionLanes, width, notify);
    this.busy = new Int32Array(regionLanes); // published, not yet consumed
    this.fresh = new Int32Array(regionLanes); // published since the last flush
    this.calls = new Array(this.slots).fill(null); // the pool's registry of pending calls
    this.seen = [];
    this.seenSeq = new Int32Array(workers);
    for (let w = 0; w < workers; w++) this.seen.push(new Int32Array(regionLanes));
    this.inFlight = 0;
    this.nextLane = 0;
    this.cursor = new Int32Array(regionLanes); // next slot to try, per region lane
  }
  /** A slot the host does not hold (g * width + b), or -1. */
  freeSlot() {
    if (this.inFlight === this.slots) return -1;
    // Start where the last search ended: published calls spread over the
    // region lanes, and a full lane is not rescanned on every call.
    for (let i = 0; i < this.regionLanes; i++) {
      const g = this.nextLane;
      const b = nextBit(~this.busy[g] & this.full, this.cursor[g]);
      if (b >= 0) {
        this.cursor[g] = b + 1;
        return g * this.width + b;
      }
      this.nextLane = g + 1 === this.regionLanes ? 0 : g + 1;
    }
    return -1;
  }
  /** Step 1, after the request is written: the slot joins this burst. */
  publish(index, call) {
    const g = (index / this.width) | 0;
    const bit = 1 << (index - g * this.width);
    this.busy[g] |= bit;
    this.fresh[g] |= bit;
    this.calls[index] = call;
    this.inFlight++;
  }
  /** Step 2: hand the burst to the claimants and wake sleepers. */
  flush() {
    const i32 = this.i32;
    let published = 0;
    for (let g = 0; g < this.regionLanes; g++) {
      let bits = this.fresh[g];
      if (bits === 0) continue;
      this.fresh[g] = 0;
      published += popcount(bits);
      // The bits first, then OWNER = 0 (see step 2).
      Atomics.or(i32, this.pending + g, bits);
      while (bits !== 0) {
        const b = lowestBit(bits);
        bits &= bits - 1;
        // After the request's words: a claimant whose compare-exchange
        // reads 0 reads the request written before it.
        Atomics.store(i32, ownerWord(this.slotWord(g * this.width + b)), 0);
      }
    }
    if (published === 0) return;
    // After the or: a parking worker sets its SLEEPERS bit, then re-reads
    // PENDING; one of the two sequentially consistent loads sees the other.
    const sleepers = Atomics.load(i32, this.sleepers);
    if (sleepers === 0) return;
    // A spinner takes the first call itself; if it finds more, it passes
    // the baton (Claimant.serve).
    const wanted = Atomics.load(i32, this.spinner) !== 0 ? published - 1 : published;
    if (wanted > 0) this.wakeSleepers(sleepers, wanted);
  }
  /**
   * Step 5 for worker `w`: calls `settle(index)` for each answered slot
   * (freed first); returns how many.
   */
  takeDone(w, settle) {
    const i32 = this.i32;
    const seq = Atomics.load(i32, this.doneSeqWord(w));
    if (seq === this.seenSeq[w]) return 0;
    this.seenSeq[w] = seq;
    const seen = this.seen[w];
    let settled = 0;
    for (let g = 0; g < this.regionLanes; g++) {
      if (this.busy[g] === 0) continue;
      const done = Atomics.load(i32, this.doneWord(w, g));
      // Only slots the host handed out (DONE is writable by task code).
      let answered = (done ^ seen[g]) & this.busy[g];
      if (answered === 0) continue;
      seen[g] ^= answered;
      this.busy[g] &= ~answered;
      while (answered !== 0) {
        const b = lowestBit(answered);
        answered &= answered - 1;
        this.inFlight--;
        settle(g * this.width + b);
        settled++;
      }
    }
    return settled;
  }
  /** Takes the call out of a consumed (or taken back) slot. */
  release(index) {
    const call = this.calls[index];
    this.calls[index] = null;
    return call;
  }
  /** Worker id in slot `index`'s OWNER word (-1: published, unclaimed). */
  ownerOf(index) {
    return Atomics.load(this.i32, ownerWord(this.slotWord(index))) - 1;
  }
  /**
   * Worker `w` is gone: settles the answers it published (`settle(index)`),
   * then returns the slots it claimed and did not answer (see "A worker
   * that dies"). The caller releases their calls and rejects them.
   */
  takeBack(w, settle) {
    const i32 = this.i32;
    const answered = this.takeDone(w, settle);
    const held = [];
    for (let g = 0; g < this.regionLanes; g++) {
      let busy = this.busy[g] & ~this.fresh[g];
      while (busy !== 0) {
        const b = lowestBit(busy);
        busy &= busy - 1;
        const index = g * this.width + b;
        if (this.ownerOf(index) !== w) continue;
        this.busy[g] &= ~(1 << b);
        Atomics.and(i32, this.pending + g, ~(1 << b));
        this.inFlight--;
        held.push(index);
      }
      Atomics.store(i32, this.doneWord(w, g), 0);
      this.seen[w][g] = 0;
    }
    Atomics.store(i32, this.doneSeqWord(w), 0);
    this.seenSeq[w] = 0;
    Atomics.and(i32, this.sleepers, ~(1 << w));
    Atomics.and(i32, this.idle, ~(1 << w));
    // A dead spinner spins no more: free its turn, and wake the sleepers
    // for any work the host left to it.
    Atomics.compareExchange(i32, this.spinner, w + 1, 0);
    if (this.anyPending()) this.wakeSleepers(Atomics.load(i32, this.sleepers), this.workers);
    return { answered, held };
  }
}

// ---- The worker's end: claiming, spinning, parking, waking ----

// Claims that found PENDING bits but won nothing, in a row, before a worker
// parks: a bit stays set for a moment after another worker won its slot (it
// clears the bit right after), or until the host takes back the slots of a
// worker that died holding one. Any bound is safe (the park re-checks); the
// model checker uses a small one.
const FUTILE_CLAIMS = 64;

// What claim() returns when it claimed nothing.
const NOTHING = -1; // every PENDING word was 0
const LOST = -2; // bits were set, but other claimants won them

/**
 * A worker's end (steps 3 and 4) and its scheduling loop. `env` is how the
 * loop acts on the world, supplied by worker/serve.js (or by the model checker):
 * - `run(slot)`: runs the claimed call; returns true if it went async (its
 *   answer comes later, through `asyncEnded`), after writing a sync answer
 *   into the slot and calling `finish(slot)`.
 * - `spin()`: waits a bounded time for a PENDING bit; true if one appeared.
 * - `sleep(word, value)`: calls `woke()` once word `word` no longer holds
 *   `value` (at once if it already does not).
 * - `later()`: calls `serve()` again after the event loop has turned.
 * - `ring()`: rings the host's doorbell (src/doorbell.rs).
 * `cores`: how many threads the machine runs at once (the spin rule).
 */
class Claimant extends StealEnd {
  constructor(i32, sectionByte, workers, regionLanes, width, w, notify, env, cores) {
    super(i32, sectionByte, workers, regionLanes, width, notify);
    this.env = env;
    this.w = w;
    this.me = w + 1;
    this.bit = 1 << w;
    // Spinning is worth it only if the busy workers, the spinner and the
    // host all have a core: at most `cores - 2` other busy workers.
    this.spinBusyLimit = cores - 2;
    this.futileLimit = FUTILE_CLAIMS;
    this.done = new Int32Array(regionLanes);
    for (let g = 0; g < regionLanes; g++) this.done[g] = Atomics.load(i32, this.doneWord(w, g));
    this.changedLanes = 0; // region lanes whose DONE word changed since the last flush
    this.home = w % regionLanes;
    this.cursor = new Int32Array(regionLanes); // where the next claim starts, per region lane
    this.idleSet = false; // this worker's IDLE bit, as last stored
    this.spinning = false; // whether this worker holds SPINNER
    this.parked = false; // whether a sleep() of this worker is pending
    this.asyncRunning = 0; // async calls started and not yet answered
    this.futile = 0; // claims in a row that found PENDING bits but won nothing
    this.retiring = false; // at a recycle limit: claims no new call, leaves once it holds none
    this.left = false; // left the claimants (recycling): no shared access from then on
  }

  /** Serves calls until there is nothing to claim; then spins or parks. */
  serve() {
    while (this.turn());
  }

  /**
   * One turn of the loop: claims and runs one call, or spins once, or stops
   * to wait (parks, or lets the event loop turn). True to go on.
   */
  turn() {
    if (this.left) return false;
    if (this.retiring) return this.retiringTurn();
    // Waiting on async calls of its own, this worker leaves new work to an
    // idle one; it claims again when it is idle itself or every worker is
    // busy.
    if (this.asyncRunning !== 0 && this.othersIdle()) return this.stop();
    const slot = this.claim();
    if (slot < 0) {
      this.flush(); // answers go out before this worker waits
      if (this.asyncRunning !== 0) return this.stop();
      this.setIdle(true);
      if (++this.futile > this.futileLimit) return this.stop();
      // Nothing pending: spin for new work, or stop. Pending but lost to
      // another claimant: its winner clears the bit, try again.
      if (slot === NOTHING && (!this.maySpin() || !this.env.spin())) return this.stop();
      return true;
    }
    this.futile = 0;
    // Give SPINNER back before looking for more work (see "Waiting and
    // waking"): either this look sees the host's new bits, or the host's
    // flush sees no spinner and wakes a sleeper itself.
    this.stopSpinning();
    this.setIdle(false);
    this.passBaton();
    const wentAsync = this.env.run(slot);
    // Published before the next call starts: that one may be long.
    this.flush();
    if (!wentAsync) return true;
    this.asyncRunning++;
    // Let this event loop turn before claiming more.
    this.env.later();
    return false;
  }

  /** More work pending while someone sleeps: wake one sleeper. */
  passBaton() {
    if (Atomics.load(this.i32, this.sleepers) !== 0 && this.anyPending()) {
      this.wakeSleepers(Atomics.load(this.i32, this.sleepers) & ~this.bit, 1);
    }
  }

  /** The loop ends: park (or serve again once the event loop has turned). */
  stop() {
    this.futile = 0;
    if (this.asyncRunning === 0) this.setIdle(true);
    this.park();
    return false;
  }

  /** Parks until the host (or another worker) publishes work and wakes it. */
  park() {
    if (this.parked) return; // one sleep at a time
    this.stopSpinning();
    const wake = this.wakeWord(this.w);
    const seq = Atomics.load(this.i32, wake);
    Atomics.or(this.i32, this.sleepers, this.bit);
    // With async calls of its own and another worker idle, pending work is
    // that worker's: do not spin on it (asyncEnded serves again).
    if (this.anyPending() && !(this.asyncRunning !== 0 && this.othersIdle())) {
      Atomics.and(this.i32, this.sleepers, ~this.bit);
      this.env.later();
      return;
    }
    this.parked = true;
    this.env.sleep(wake, seq);
  }

  /** The sleep of `park` ended. */
  woke() {
    if (this.left) return; // its SLEEPERS bit stays until the host takes it back
    this.parked = false;
    Atomics.and(this.i32, this.sleepers, ~this.bit);
    this.serve();
  }

  /** An async call's answer is written (and `finish`ed): publish it. */
  asyncEnded() {
    this.asyncRunning--;
    this.flush();
    // Parked while it waited on its own async calls: wake itself, through
    // its own WAKE word, so the pending sleep ends.
    if (this.asyncRunning === 0 && this.parked) this.wakeWorker(this.w);
  }

  /** IDLE hint: this worker holds no started call (true) or does (false). */
  setIdle(idle) {
    if (idle === this.idleSet) return;
    this.idleSet = idle;
    if (idle) Atomics.or(this.i32, this.idle, this.bit);
    else Atomics.and(this.i32, this.idle, ~this.bit);
  }
  /** Whether another worker holds no started call. */
  othersIdle() {
    return (Atomics.load(this.i32, this.idle) & ~this.bit) !== 0;
  }
  /** Takes the one spinning turn if spinning leaves the host a core. */
  maySpin() {
    if (this.spinning) return true;
    const busy = popcount(~Atomics.load(this.i32, this.idle) & ~this.bit & maskOf(this.workers));
    if (busy > this.spinBusyLimit) return false;
    this.spinning = Atomics.compareExchange(this.i32, this.spinner, 0, this.me) === 0;
    return this.spinning;
  }
  /** Gives the spinning turn back, if this worker holds it. */
  stopSpinning() {
    if (!this.spinning) return;
    this.spinning = false;
    Atomics.compareExchange(this.i32, this.spinner, this.me, 0);
  }

  /**
   * Step 3: claims one call; returns its slot index, NOTHING when every
   * PENDING word was 0, LOST when it saw bits but won none.
   */
  claim() {
    const i32 = this.i32;
    const lanes = this.regionLanes;
    let seen = NOTHING;
    for (let i = 0, g = this.home; i < lanes; i++, g = g + 1 === lanes ? 0 : g + 1) {
      let pending = Atomics.load(i32, this.pending + g);
      if (pending !== 0) seen = LOST;
      let from = this.cursor[g];
      while (pending !== 0) {
        const b = nextBit(pending, from);
        pending &= ~(1 << b);
        from = b + 1;
        const index = g * this.width + b;
        if (Atomics.compareExchange(i32, ownerWord(this.slotWord(index)), 0, this.me) === 0) {
          // Only the winner clears the bit it won (step 3).
          Atomics.and(i32, this.pending + g, ~(1 << b));
          this.cursor[g] = b + 1;
          return index;
        }
      }
    }
    return seen;
  }
  /** Step 4, deferred: the response of slot `index` is written. */
  finish(index) {
    const g = (index / this.width) | 0;
    this.done[g] ^= 1 << (index - g * this.width);
    this.changedLanes |= 1 << g;
  }
  /** At a recycle limit: no new call from now on, so its async calls end and it can leave (worker/recycle.js). */
  retire() {
    this.retiring = true;
  }

  /**
   * Retiring: publish, pass pending work to a sleeper (a flush may have woken
   * this worker for it), wait for its own async calls without a SLEEPERS bit.
   */
  retiringTurn() {
    this.flush();
    this.stopSpinning();
    this.passBaton();
    if (!this.parked) {
      const wake = this.wakeWord(this.w);
      this.parked = true;
      this.env.sleep(wake, Atomics.load(this.i32, wake));
    }
    return false;
  }

  /**
   * Leaves the claimants, holding no call: publishes, then takes no shared
   * step until the host ends it and takes it back, as a worker that died.
   */
  leave() {
    this.flush();
    this.left = true;
  }
  /** Step 4: publish every answer since the last flush, then the doorbell. */
  flush() {
    if (this.changedLanes === 0) return;
    const i32 = this.i32;
    for (let changed = this.changedLanes; changed !== 0; changed &= changed - 1) {
      const g = lowestBit(changed);
      Atomics.store(i32, this.doneWord(this.w, g), this.done[g]);
    }
    this.changedLanes = 0;
    Atomics.add(i32, this.doneSeqWord(this.w), 1);
    announce(i32, this.env);
  }
}

module.exports = { StealGeometry, HostSubmit, Claimant };
