//! Exhaustive interleaving models of the two cross-thread protocols
//! (test-only): the lane bit-flip protocol (`memory/lane.rs`, JS side in
//! `lib/lane.js`, `lib/pool.js`, `lib/worker.js`) and the doorbell
//! (`doorbell.rs`, `dispatcher.rs`, the host's arming in `lib/pool.js`, the
//! worker's publication in `lib/lane.js`).
//!
//! # Method
//! Each party is a small state machine whose transitions are single atomic
//! steps (one load, one store, one read-modify-write, or one access to a
//! slot's bytes). [`explore`] runs a depth-first search over every
//! interleaving of those steps, memoising visited states (a state is the
//! complete tuple of shared words, slot contents, each party's private
//! state and the ghost bookkeeping the checks need), so each distinct state
//! is expanded once. Interleaving single steps is exactly sequential
//! consistency: every atomic here is SeqCst in JS (`Atomics.*`) and the
//! doorbell's Rust side uses SeqCst; the lane's Rust types use
//! Release/Acquire, which for these single-writer words gives the same
//! outcomes for the properties checked (see "Abstracted away").
//!
//! The invariants are checked in every reachable state and inside the steps
//! themselves (a step that observes something impossible returns an error);
//! the terminal checks run in every state with no successor. A violation
//! comes back with the path of steps from the initial state (the DFS stack),
//! so a failing test prints a counterexample trace.
//!
//! # Lane model (part a)
//! One host and one worker over one lane with `S` slots (2..=4) and the
//! `REQ`/`RES` words; the host places `K` calls (up to 6) and the worker
//! answers them in any order it likes.
//! - Host private state, as `HostLane` keeps it: `req` (its copy of REQ),
//!   `seen_res`, `busy`, plus the slot→call table of `lib/lane.js`.
//!   Steps: *pick* (lowest free slot, `HostLane::free_slot`), *write* (the
//!   request into the slot's bytes, then the private flip of `publish` /
//!   `lib/lane.js` `publish`), *flush* (the REQ store; JS batches several
//!   flips into one store, so the store is a separate step that may come
//!   after several placements), *load* (`take_finished`: RES load, clear
//!   `busy`, advance `seen_res`), *consume* (read one finished slot's
//!   response and settle its call; `lib/pool.js` `drain` settles every
//!   finished slot before it places anything new, so consuming is a phase
//!   the host finishes before its next pick).
//! - Worker private state, as `WorkerLane` keeps it: `res`, `started`, plus
//!   `finished` (answered, not yet published: `lib/lane.js` `finish`) and
//!   which call it read from each slot. Steps: *load* (`take_new`), *start*
//!   (read a taken slot's request bytes), *answer* (write the response
//!   bytes of any started call, in any order), *store* (`publish`: the RES
//!   store of every answered slot at once).
//! - Each slot's bytes are one cell holding either a request or a response
//!   for a call id, so a read of bytes the other side has not written (or
//!   has overwritten) is visible to the checks.
//! - Checks in every state: no slot is claimed by both sides (host: while
//!   writing it or between seeing its RES flip and consuming it; worker:
//!   from `take_new` to the RES store), and each claim agrees with the
//!   words (host claims only slots with REQ bit == RES bit, worker only
//!   slots where they differ). In steps: the worker reads a request, never
//!   a response; a call is answered at most once; a response is consumed
//!   only for a call that was answered, only if it carries the call id the
//!   host expects in that slot, and at most once; a RES flip is only seen
//!   for a slot the host handed out. In every terminal state: all `K` calls
//!   were placed, answered exactly once and consumed exactly once (so no
//!   deadlock and nothing lost), and both words agree.
//!
//! # Doorbell model (part b)
//! The host (`lib/pool.js` `drain`), one or two workers (`lib/lane.js`
//! `WorkerLane.flush`: RES store, COUNTER add, ARMED load, ring), and the
//! waiter thread (the loop in `Doorbell::wait` driven by `Dispatcher`).
//! - Host: read `c0 = COUNTER`; load each worker's RES (one step per lane);
//!   if everything is seen it is done; otherwise it either polls again
//!   (`FREE_HOPS` passes, modelled as an unbounded nondeterministic choice,
//!   which covers every value of the constant) or arms: store `ARMED = 1`,
//!   re-read COUNTER; if it moved, store `ARMED = 0` and drain again, else
//!   sleep. A sleeping host runs again only through a delivered ring (the
//!   ThreadsafeFunction queue, `pending`); a ring delivered while the host
//!   is between drains or done just runs one more drain.
//! - Waiter: load COUNTER; if it differs from `last`, set `last`, swap ARMED
//!   to 0 and, if it was 1, queue a ring for the host (a separate step);
//!   otherwise `futex_wait(COUNTER, now)`, which blocks only if COUNTER
//!   still equals `now` at that instant (one atomic step), and is released
//!   only by a worker's ring (wake_all).
//! - Checks: the ARMED value 1 a swap takes was stored by one arming (ghost
//!   epoch); no arming is rung twice; in every terminal state the host is
//!   done and has seen every response (a terminal state with the host
//!   asleep and a published response unseen is a lost wakeup).
//!
//! # Steal model
//! The shared submit region's protocol has its own model in
//! `model_steal.rs`, on the same [`Model`] trait; it uses
//! [`explore_progress`], a breadth-first variant of [`explore`] that keeps
//! the state graph and also checks that from every reachable state a
//! terminal state can still be reached (so parties that can only spin are
//! caught, not just parties that all block).
//!
//! # Abstracted away
//! - Payload bytes, call ids beyond identity, task indexes, the payload
//!   region and its allocator (a slot's bytes are one cell; `EXT` offsets
//!   are not modelled). Several lanes are independent instances of the lane
//!   model (they share nothing but the doorbell), so one lane is modelled.
//! - Weak memory. Everything is an interleaving of SeqCst steps. JS uses
//!   SeqCst for every `Atomics` access; the lane's slot bytes are plain
//!   accesses ordered by the REQ/RES release/acquire pairs, which the model
//!   represents as "the bytes are written before the flag step and read
//!   after it" in program order. The doorbell's Dekker pair (ARMED store /
//!   COUNTER load against COUNTER add / ARMED load) really needs SeqCst,
//!   which both sides use.
//! - The worker's own parking (`SLEEPING`, `Atomics.waitAsync`), pool
//!   shutdown (`STOP`), worker death and lane reset, `submit`'s scheduling
//!   (`drainScheduled`, `armed` gating new drains), futex spurious wakeups
//!   (they only re-run the waiter loop's re-check) and the `FREE_HOPS`
//!   count (see above). The lane model uses `S` < 32 slots: the free-slot
//!   pick is `HostLane::free_slot` restricted to the lane's `S` slots
//!   (`lib/pool.js` checks `inFlight < slotCount` first, which is the same
//!   thing at 32 slots).
//! - The host's lane arithmetic is not taken on trust: `mirror_matches_lane_rs`
//!   drives the real `HostLane`/`WorkerLane` and the model's formulas with
//!   the same random operations and compares every result.
//!
//! # Mutation check (done by hand once, then restored)
//! In `Bell::host_step` the correct path was edited by hand so that the host
//! re-reads COUNTER *before* storing ARMED = 1 (the order of the two lines
//! `Atomics.store(this.i32, W_ARMED, 1)` / `Atomics.load(this.i32,
//! W_COUNTER) !== counted` in `lib/pool.js` `drain` reversed):
//! `Decide -> Recheck`, `Recheck(unchanged) -> Arm`, `Arm -> Sleep`. Both
//! `doorbell_one_worker` and `doorbell_two_workers` then failed at once
//! with "terminal state: lost wakeup: host Sleep with seen 0 of 1 published
//! responses (COUNTER 1, ARMED 1, waiter Blocked, queued rings 0)" and the
//! 10-step trace: host c0 = 0, loads RES (0), goes idle, re-reads COUNTER
//! (0, unchanged); waiter loads COUNTER (0 = last) and blocks in
//! futex_wait(0); worker stores RES, adds COUNTER (1), loads ARMED (0, so no
//! ring); host stores ARMED = 1 and sleeps: nobody will ever wake it. The
//! edit was reverted; the same mistake stays covered as
//! `mutation_recheck_before_arm_loses_a_wakeup`, next to three more broken
//! variants (worker loads ARMED before adding, host reads c0 after the
//! scan, and three lane mistakes), each test asserting that the checker
//! reports a counterexample.
//!
//! Also tried by hand once (and dropped, ~4 s of search): the waiter
//! clearing ARMED with a plain load and a separate store instead of
//! `swap`. With one waiter thread no violation exists (3.4 M states, 2
//! workers x 2 responses): a ring taken from a stale arming still queues a
//! drain, and every ring clears ARMED. The swap matters only if a second
//! waiter thread ever shares the doorbell.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash};

/// A step's label, formatted only when `on` (when a trace is printed).
macro_rules! label {
    ($on:expr, $($fmt:tt)*) => {
        if $on { format!($($fmt)*) } else { String::new() }
    };
}
pub(crate) use label;

/// A model: states, the steps out of a state, and the checks.
pub(crate) trait Model {
    type State: Clone + Eq + Hash;
    fn initial(&self) -> Self::State;
    /// Every step enabled in `s`, as (label, next state or violation), in a
    /// fixed order. A step that would not change the state is not listed.
    /// Labels are empty unless `labels` (they cost more than the search).
    fn successors(
        &self,
        s: &Self::State,
        out: &mut Vec<(String, Result<Self::State, String>)>,
        labels: bool,
    );
    /// Checked in every reachable state.
    fn invariant(&self, s: &Self::State) -> Result<(), String>;
    /// Checked in every state without successors.
    fn terminal(&self, s: &Self::State) -> Result<(), String>;
    /// A short account of a state for a counterexample that ends in it.
    fn describe(&self, _s: &Self::State) -> String {
        String::new()
    }
}

#[derive(Debug)]
pub(crate) struct Stats {
    pub(crate) states: usize,
    pub(crate) terminals: usize,
    pub(crate) max_depth: usize,
}

#[derive(Debug)]
pub(crate) struct Violation {
    pub(crate) message: String,
    pub(crate) trace: Vec<String>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.message)?;
        for (i, step) in self.trace.iter().enumerate() {
            writeln!(f, "  {i:3}. {step}")?;
        }
        Ok(())
    }
}

/// Depth-first search over all interleavings, each state expanded once.
fn explore<M: Model>(model: &M) -> Result<Stats, Violation> {
    struct Frame<S> {
        state: S,
        succ: Vec<(String, Result<S, String>)>,
        /// Index of the successor being explored below this frame.
        next: usize,
    }
    // The labels of the DFS path: the step taken out of every frame but
    // the top one (`next - 1`), then step `last` out of the top frame.
    // Labels are recomputed for just these states.
    let trace = |stack: &[Frame<M::State>], last: usize| -> Vec<String> {
        let mut out = Vec::new();
        for (depth, frame) in stack.iter().enumerate() {
            let i = if depth + 1 < stack.len() {
                frame.next - 1
            } else {
                last
            };
            let mut succ = Vec::new();
            model.successors(&frame.state, &mut succ, true);
            out.push(succ.swap_remove(i).0);
        }
        out
    };
    let mut visited: HashSet<M::State> = HashSet::new();
    let mut stats = Stats {
        states: 0,
        terminals: 0,
        max_depth: 0,
    };
    let mut stack: Vec<Frame<M::State>> = Vec::new();
    let s0 = model.initial();
    visited.insert(s0.clone());
    let mut fresh = Some(s0);
    loop {
        if let Some(s) = fresh.take() {
            // Expand a state seen for the first time.
            stats.states += 1;
            let checked = model.invariant(&s).and_then(|()| {
                let mut succ = Vec::new();
                model.successors(&s, &mut succ, false);
                if succ.is_empty() {
                    stats.terminals += 1;
                    model
                        .terminal(&s)
                        .map_err(|m| format!("terminal state: {m}"))?;
                }
                Ok(succ)
            });
            match checked {
                Err(message) => {
                    // `s` came out of step `next - 1` of the top frame.
                    let last = stack.last().map_or(0, |f| f.next - 1);
                    return Err(Violation {
                        message,
                        trace: trace(&stack, last),
                    });
                }
                Ok(succ) if !succ.is_empty() => {
                    stack.push(Frame {
                        state: s,
                        succ,
                        next: 0,
                    });
                    stats.max_depth = stats.max_depth.max(stack.len());
                }
                Ok(_) => {}
            }
        }
        let Some(top) = stack.last_mut() else {
            return Ok(stats);
        };
        if top.next == top.succ.len() {
            stack.pop();
            continue;
        }
        let i = top.next;
        top.next += 1;
        match &top.succ[i].1 {
            Err(message) => {
                let message = message.clone();
                return Err(Violation {
                    message,
                    trace: trace(&stack, i),
                });
            }
            Ok(next) => {
                if visited.insert(next.clone()) {
                    fresh = Some(next.clone());
                }
            }
        }
    }
}

/// A multiply-rotate hasher for the state index: the states are small
/// tuples of bytes and SipHash, the default, made the index the larger part
/// of the search time of the steal model.
#[derive(Default)]
pub(crate) struct StateHasher(u64);

impl StateHasher {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl std::hash::Hasher for StateHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, x: u8) {
        self.add(x as u64);
    }
    fn write_u32(&mut self, x: u32) {
        self.add(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    fn finish(&self) -> u64 {
        // fold the high bits, which the multiplication mixes best, down
        self.0 ^ (self.0 >> 29)
    }
}

/// Breadth-first search over all interleavings that also checks progress:
/// from every reachable state some terminal state can still be reached. The
/// terminal checks then say that every such end is a good one, so a cycle
/// nobody can leave (parties spinning forever while calls wait) is caught
/// too, which [`explore`] cannot see. It keeps the whole state graph (each
/// state twice: by id and in the index, plus its edges), so it is for
/// models of a few million states; counterexamples are shortest paths.
pub(crate) fn explore_progress<M: Model>(model: &M) -> Result<Stats, Violation> {
    let mut index: HashMap<M::State, u32, BuildHasherDefault<StateHasher>> = HashMap::default();
    let mut states: Vec<M::State> = Vec::new();
    let mut parent: Vec<u32> = Vec::new();
    let mut depth: Vec<u32> = Vec::new();
    // Edges of state i: edges[edge_start[i]..edge_start[i + 1]].
    let mut edges: Vec<u32> = Vec::new();
    let mut edge_start: Vec<usize> = vec![0];
    let mut terminal: Vec<bool> = Vec::new();
    // The labels of the path root -> `to`, then of step `last` out of `to`.
    let trace = |states: &[M::State], parent: &[u32], to: u32, last: Option<usize>| {
        let mut path = vec![to];
        while path[path.len() - 1] != 0 {
            path.push(parent[path[path.len() - 1] as usize]);
        }
        path.reverse();
        let mut out = Vec::new();
        for pair in path.windows(2) {
            let mut succ = Vec::new();
            model.successors(&states[pair[0] as usize], &mut succ, true);
            let target = &states[pair[1] as usize];
            let step = succ
                .into_iter()
                .find(|(_, r)| r.as_ref().is_ok_and(|n| n == target));
            out.push(step.map_or_else(|| "?".to_string(), |(label, _)| label));
        }
        if let Some(i) = last {
            let mut succ = Vec::new();
            model.successors(&states[to as usize], &mut succ, true);
            out.push(succ.swap_remove(i).0);
        }
        out
    };
    let s0 = model.initial();
    index.insert(s0.clone(), 0);
    states.push(s0);
    parent.push(0);
    depth.push(0);
    let mut succ = Vec::new();
    let mut i = 0usize;
    while i < states.len() {
        let s = &states[i];
        succ.clear();
        let checked = model.invariant(s).and_then(|()| {
            model.successors(s, &mut succ, false);
            if succ.is_empty() {
                model
                    .terminal(s)
                    .map_err(|m| format!("terminal state: {m}"))?;
            }
            Ok(())
        });
        if let Err(message) = checked {
            return Err(Violation {
                message,
                trace: trace(&states, &parent, i as u32, None),
            });
        }
        terminal.push(succ.is_empty());
        for (k, (_, r)) in succ.drain(..).enumerate() {
            match r {
                Err(message) => {
                    return Err(Violation {
                        message,
                        trace: trace(&states, &parent, i as u32, Some(k)),
                    });
                }
                Ok(n) => {
                    let next = states.len() as u32;
                    let id = *index.entry(n.clone()).or_insert(next);
                    if id == next {
                        states.push(n);
                        parent.push(i as u32);
                        depth.push(depth[i] + 1);
                    }
                    edges.push(id);
                }
            }
        }
        edge_start.push(edges.len());
        i += 1;
    }
    drop(index);
    // Progress: walk the edges backwards from every terminal state.
    let n = states.len();
    let mut rev_start = vec![0usize; n + 1];
    for &to in &edges {
        rev_start[to as usize + 1] += 1;
    }
    for k in 0..n {
        rev_start[k + 1] += rev_start[k];
    }
    let mut fill = rev_start.clone();
    let mut rev = vec![0u32; edges.len()];
    for from in 0..n {
        for &to in &edges[edge_start[from]..edge_start[from + 1]] {
            rev[fill[to as usize]] = from as u32;
            fill[to as usize] += 1;
        }
    }
    let mut can_end = terminal.clone();
    let mut queue: Vec<u32> = (0..n as u32).filter(|&k| terminal[k as usize]).collect();
    while let Some(k) = queue.pop() {
        for &from in &rev[rev_start[k as usize]..rev_start[k as usize + 1]] {
            if !can_end[from as usize] {
                can_end[from as usize] = true;
                queue.push(from);
            }
        }
    }
    if let Some(stuck) = can_end.iter().position(|&ok| !ok) {
        return Err(Violation {
            message: format!(
                "no progress: no terminal state is reachable from here (the parties can \
                 only loop): {}",
                model.describe(&states[stuck])
            ),
            trace: trace(&states, &parent, stuck as u32, None),
        });
    }
    Ok(Stats {
        states: n,
        terminals: terminal.iter().filter(|&&t| t).count(),
        max_depth: depth.iter().max().map_or(0, |&d| d as usize + 1),
    })
}

// ---------------------------------------------------------------------------
// The lane arithmetic of `memory/lane.rs` (and `lib/lane.js`), as pure
// functions over the private words, so the model can hash and copy state.
// `mirror_matches_lane_rs` checks them against the real types.
// ---------------------------------------------------------------------------

/// `HostLane::free_slot` over a lane of `slots` slots.
fn host_free_slot(busy: u32, slots: usize) -> Option<usize> {
    let mask = slot_mask(slots);
    let free = !busy & mask;
    (free != 0).then(|| free.trailing_zeros() as usize)
}

/// `HostLane::take_finished` given the loaded RES: (finished, new seen_res,
/// new busy).
fn host_take_finished(res: u32, seen_res: u32, busy: u32) -> (u32, u32, u32) {
    let finished = res ^ seen_res;
    (finished, res, busy & !finished)
}

/// `WorkerLane::take_new` given the loaded REQ: (new, new started).
fn worker_take_new(req: u32, res: u32, started: u32) -> (u32, u32) {
    let new = (req ^ res) & !started;
    (new, started | new)
}

/// `WorkerLane::publish`: (new res, new started).
fn worker_publish(res: u32, started: u32, finished: u32) -> (u32, u32) {
    (res ^ finished, started & !finished)
}

fn slot_mask(slots: usize) -> u32 {
    if slots >= 32 {
        u32::MAX
    } else {
        (1u32 << slots) - 1
    }
}

// ---------------------------------------------------------------------------
// (a) The lane.
// ---------------------------------------------------------------------------

const MAX_SLOTS: usize = 4;
const MAX_CALLS: usize = 6;

/// A slot's bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Cell {
    Empty,
    Request(u8),
    Response(u8),
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum HostPhase {
    Idle,
    /// Picked this slot; about to write the request.
    Writing(u8),
    /// Saw these slots finished; consuming them lowest first.
    Draining(u32),
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct LaneState {
    // shared
    req_word: u32,
    res_word: u32,
    cells: [Cell; MAX_SLOTS],
    // host private (HostLane + lib/lane.js calls[])
    h_req: u32,
    h_seen: u32,
    h_busy: u32,
    h_calls: [Option<u8>; MAX_SLOTS],
    h_next: u8,
    h_phase: HostPhase,
    // worker private (WorkerLane + what lib/worker.js keeps)
    w_res: u32,
    w_started: u32,
    w_unread: u32,
    w_holding: [Option<u8>; MAX_SLOTS],
    w_finished: u32,
    // ghost
    answered: [u8; MAX_CALLS],
    consumed: [u8; MAX_CALLS],
}

/// Deliberately broken variants, to show the checker finds each mistake.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum LaneBug {
    None,
    /// The worker forgets `& !started` in `take_new`: a running call is taken again.
    WorkerRetakesStarted,
    /// The host stores REQ (flushes) before writing the slot's bytes.
    HostFlushesBeforeWrite,
    /// The host does not advance `seen_res` in `take_finished`.
    HostKeepsSeen,
}

type LaneSteps = Vec<(String, Result<LaneState, String>)>;

struct Lane {
    slots: usize,
    calls: usize,
    bug: LaneBug,
}

impl Lane {
    fn host_claims(&self, s: &LaneState) -> u32 {
        match s.h_phase {
            HostPhase::Idle => 0,
            HostPhase::Writing(slot) => 1 << slot,
            HostPhase::Draining(mask) => mask,
        }
    }

    fn host_steps(&self, s: &LaneState, out: &mut LaneSteps, on: bool) {
        match s.h_phase {
            HostPhase::Idle => {
                // pick: lib/pool.js place() -> lane.freeSlot()
                if (s.h_next as usize) < self.calls {
                    if let Some(slot) = host_free_slot(s.h_busy, self.slots) {
                        let mut n = s.clone();
                        n.h_phase = HostPhase::Writing(slot as u8);
                        if self.bug == LaneBug::HostFlushesBeforeWrite {
                            // broken: flip and store before the bytes are written
                            n.h_req ^= 1 << slot;
                            n.req_word = n.h_req;
                        }
                        out.push((
                            label!(on, "host: pick slot {slot} for call {}", s.h_next),
                            Ok(n),
                        ));
                    }
                }
                // flush: the REQ store (lib/lane.js flush skips it when equal)
                if s.req_word != s.h_req {
                    let mut n = s.clone();
                    n.req_word = n.h_req;
                    out.push((label!(on, "host: store REQ = {:#b}", s.h_req), Ok(n)));
                }
                // load: take_finished
                let res = s.res_word;
                let (finished, seen, busy) = host_take_finished(res, s.h_seen, s.h_busy);
                if finished != 0 {
                    let mut n = s.clone();
                    let label = label!(on, "host: load RES = {res:#b}, finished {finished:#b}");
                    if finished & !s.h_busy != 0 {
                        out.push((
                            label,
                            Err(format!(
                                "RES flipped slots {:#b} the host never handed out",
                                finished & !s.h_busy
                            )),
                        ));
                        return;
                    }
                    if self.bug != LaneBug::HostKeepsSeen {
                        n.h_seen = seen;
                    }
                    n.h_busy = busy;
                    n.h_phase = HostPhase::Draining(finished);
                    out.push((label, Ok(n)));
                }
            }
            HostPhase::Writing(slot) => {
                let slot = slot as usize;
                let call = s.h_next;
                let mut n = s.clone();
                let label = label!(on, "host: write request of call {call} into slot {slot}");
                if s.w_started & (1 << slot) != 0 {
                    out.push((
                        label,
                        Err(format!("host writes slot {slot} while the worker holds it")),
                    ));
                    return;
                }
                n.cells[slot] = Cell::Request(call);
                // HostLane::publish / lib/lane.js publish: busy, table, private flip
                n.h_busy |= 1 << slot;
                if self.bug != LaneBug::HostFlushesBeforeWrite {
                    n.h_req ^= 1 << slot;
                }
                n.h_calls[slot] = Some(call);
                n.h_next += 1;
                n.h_phase = HostPhase::Idle;
                out.push((label, Ok(n)));
            }
            HostPhase::Draining(mask) => {
                // lib/pool.js drain(): settle lowest first
                let slot = mask.trailing_zeros() as usize;
                let label = label!(on, "host: consume slot {slot}");
                let mut n = s.clone();
                let result = (|| {
                    let call = s.h_calls[slot].ok_or_else(|| {
                        format!("slot {slot} finished with no call in the host's table")
                    })?;
                    match s.cells[slot] {
                        Cell::Response(c) if c == call => {}
                        other => {
                            return Err(format!(
                                "host reads slot {slot} for call {call} and finds {other:?}"
                            ))
                        }
                    }
                    if s.answered[call as usize] == 0 {
                        return Err(format!("call {call} consumed but never answered"));
                    }
                    if s.consumed[call as usize] != 0 {
                        return Err(format!("call {call} consumed twice"));
                    }
                    n.consumed[call as usize] = 1;
                    n.h_calls[slot] = None;
                    let rest = mask & !(1 << slot);
                    n.h_phase = if rest == 0 {
                        HostPhase::Idle
                    } else {
                        HostPhase::Draining(rest)
                    };
                    Ok(n)
                })();
                out.push((label, result));
            }
        }
    }

    fn worker_steps(&self, s: &LaneState, out: &mut LaneSteps, on: bool) {
        // load: take_new
        let req = s.req_word;
        let (new, started) = if self.bug == LaneBug::WorkerRetakesStarted {
            // broken: `(req ^ res)` without `& !started`
            let new = req ^ s.w_res;
            (new, s.w_started | new)
        } else {
            worker_take_new(req, s.w_res, s.w_started)
        };
        let new = new & slot_mask(self.slots);
        // (correct code: `new` never overlaps `w_unread`, a subset of `started`)
        if new & !s.w_unread != 0 {
            let mut n = s.clone();
            n.w_started = started;
            n.w_unread |= new;
            out.push((
                label!(on, "worker: load REQ = {req:#b}, new {new:#b}"),
                Ok(n),
            ));
        }
        // start: read a taken slot's request (any order)
        for slot in 0..self.slots {
            if s.w_unread & (1 << slot) == 0 {
                continue;
            }
            let label = label!(on, "worker: read request in slot {slot}");
            let mut n = s.clone();
            let result = (|| {
                if self.host_claims(s) & (1 << slot) != 0 {
                    return Err(format!("worker reads slot {slot} while the host holds it"));
                }
                let Cell::Request(call) = s.cells[slot] else {
                    return Err(format!(
                        "worker reads slot {slot} and finds {:?}, not a request",
                        s.cells[slot]
                    ));
                };
                n.w_unread &= !(1 << slot);
                n.w_holding[slot] = Some(call);
                Ok(n)
            })();
            out.push((label, result));
        }
        // answer: any started call, in any order
        for slot in 0..self.slots {
            let Some(call) = s.w_holding[slot] else {
                continue;
            };
            let label = label!(on, "worker: answer call {call} in slot {slot}");
            let mut n = s.clone();
            let result = (|| {
                if self.host_claims(s) & (1 << slot) != 0 {
                    return Err(format!("worker writes slot {slot} while the host holds it"));
                }
                if s.answered[call as usize] != 0 {
                    return Err(format!("call {call} answered twice"));
                }
                n.cells[slot] = Cell::Response(call);
                n.answered[call as usize] += 1;
                n.w_holding[slot] = None;
                n.w_finished |= 1 << slot;
                Ok(n)
            })();
            out.push((label, result));
        }
        // store: publish every answered slot with one RES store
        if s.w_finished != 0 {
            let mut n = s.clone();
            let (res, started) = worker_publish(s.w_res, s.w_started, s.w_finished);
            n.w_res = res;
            n.w_started = started;
            n.res_word = res;
            n.w_finished = 0;
            out.push((label!(on, "worker: store RES = {res:#b}"), Ok(n)));
        }
    }
}

impl Model for Lane {
    type State = LaneState;

    fn initial(&self) -> LaneState {
        assert!(self.slots <= MAX_SLOTS && self.calls <= MAX_CALLS);
        LaneState {
            req_word: 0,
            res_word: 0,
            cells: [Cell::Empty; MAX_SLOTS],
            h_req: 0,
            h_seen: 0,
            h_busy: 0,
            h_calls: [None; MAX_SLOTS],
            h_next: 0,
            h_phase: HostPhase::Idle,
            w_res: 0,
            w_started: 0,
            w_unread: 0,
            w_holding: [None; MAX_SLOTS],
            w_finished: 0,
            answered: [0; MAX_CALLS],
            consumed: [0; MAX_CALLS],
        }
    }

    fn successors(&self, s: &LaneState, out: &mut LaneSteps, on: bool) {
        self.host_steps(s, out, on);
        self.worker_steps(s, out, on);
    }

    fn invariant(&self, s: &LaneState) -> Result<(), String> {
        let host = self.host_claims(s);
        let worker = s.w_started;
        if host & worker != 0 {
            return Err(format!("slots {:#b} owned by both sides", host & worker));
        }
        let differ = s.req_word ^ s.res_word;
        if host & differ != 0 {
            return Err(format!(
                "host holds slots {:#b} whose REQ/RES bits say the worker owns them",
                host & differ
            ));
        }
        if worker & !differ != 0 {
            return Err(format!(
                "worker holds slots {:#b} whose REQ/RES bits say the host owns them",
                worker & !differ
            ));
        }
        Ok(())
    }

    fn terminal(&self, s: &LaneState) -> Result<(), String> {
        if (s.h_next as usize) != self.calls {
            return Err(format!(
                "deadlock: only {} of {} calls placed",
                s.h_next, self.calls
            ));
        }
        for c in 0..self.calls {
            if s.answered[c] != 1 || s.consumed[c] != 1 {
                return Err(format!(
                    "call {c} answered {} times and consumed {} times",
                    s.answered[c], s.consumed[c]
                ));
            }
        }
        if s.req_word != s.res_word || s.h_busy != 0 || s.w_started != 0 {
            return Err(format!(
                "lane not quiescent: REQ {:#b} RES {:#b} busy {:#b} started {:#b}",
                s.req_word, s.res_word, s.h_busy, s.w_started
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// (b) The doorbell.
// ---------------------------------------------------------------------------

const MAX_WORKERS: usize = 2;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum HostPc {
    /// Start of a drain: `counted = Atomics.load(COUNTER)`.
    ReadC0,
    /// Loading RES of lane `i`.
    Scan(u8),
    /// Only in the broken variant: `counted` read after the scan.
    LateC0,
    /// After the scan: done, poll again, or go idle.
    Decide,
    /// `Atomics.store(ARMED, 1)`.
    Arm,
    /// `Atomics.load(COUNTER) !== counted`.
    Recheck,
    /// `Atomics.store(ARMED, 0)`, then drain again.
    Disarm,
    /// Armed, the event loop idle: only a delivered ring runs it.
    Sleep,
    /// Everything seen (inFlight 0).
    Done,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum WaiterPc {
    /// `now = COUNTER.load()`, compare with `last`.
    Load,
    /// `ARMED.swap(0)`.
    Swap,
    /// `on_ring()`: queue the host's drain (ThreadsafeFunction call).
    Enqueue,
    /// `futex_wait(COUNTER, now)`: blocks iff COUNTER == now.
    FutexWait,
    Blocked,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum WorkerPc {
    /// `Atomics.store(RES)` of one response.
    StoreRes,
    /// `Atomics.add(COUNTER, 1)`.
    AddCounter,
    /// `Atomics.load(ARMED)`.
    LoadArmed,
    /// `bell.ring()`: futex wake_all on COUNTER.
    Ring,
    Done,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct BellState {
    // shared
    counter: u8,
    armed: u8,
    res: [u8; MAX_WORKERS],
    /// Rings queued for the host (the ThreadsafeFunction's queue).
    pending: u8,
    // host
    h_pc: HostPc,
    h_c0: u8,
    h_seen: [u8; MAX_WORKERS],
    // waiter
    w_pc: WaiterPc,
    w_last: u8,
    w_now: u8,
    // workers
    p_pc: [WorkerPc; MAX_WORKERS],
    p_sent: [u8; MAX_WORKERS],
    /// What the broken "load ARMED first" variant loaded.
    p_saw_armed: [bool; MAX_WORKERS],
    // ghost: armings so far, which arming stored the current ARMED = 1,
    // which armings were rung (bit per arming)
    epochs: u8,
    armed_by: u8,
    rung: u32,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum BellBug {
    None,
    /// Host re-reads COUNTER before storing ARMED = 1.
    HostRecheckBeforeArm,
    /// Worker loads ARMED before adding to COUNTER.
    WorkerLoadsArmedFirst,
    /// Host reads `c0` after scanning instead of before.
    HostReadsC0AfterScan,
}

struct Bell {
    workers: usize,
    /// Responses each worker publishes (one RES store + COUNTER add each).
    per_worker: u8,
    bug: BellBug,
}

type BellSteps = Vec<(String, Result<BellState, String>)>;

impl Bell {
    fn total(&self) -> u8 {
        self.workers as u8 * self.per_worker
    }

    fn host_step(&self, s: &BellState, out: &mut BellSteps, on: bool) {
        let mut n = s.clone();
        match s.h_pc {
            HostPc::ReadC0 => {
                if self.bug == BellBug::HostReadsC0AfterScan {
                    n.h_pc = HostPc::Scan(0);
                    out.push((label!(on, "host: start drain"), Ok(n)));
                } else {
                    n.h_c0 = s.counter;
                    n.h_pc = HostPc::Scan(0);
                    out.push((label!(on, "host: c0 = COUNTER = {}", s.counter), Ok(n)));
                }
            }
            HostPc::Scan(i) => {
                let i = i as usize;
                n.h_seen[i] = s.res[i];
                n.h_pc = if i + 1 < self.workers {
                    HostPc::Scan(i as u8 + 1)
                } else if self.bug == BellBug::HostReadsC0AfterScan {
                    HostPc::LateC0
                } else {
                    HostPc::Decide
                };
                out.push((label!(on, "host: load RES[{i}] = {}", s.res[i]), Ok(n)));
            }
            HostPc::LateC0 => {
                n.h_c0 = s.counter;
                n.h_pc = HostPc::Decide;
                out.push((
                    label!(on, "host: c0 = COUNTER = {} (after the scan)", s.counter),
                    Ok(n),
                ));
            }
            HostPc::Decide => {
                let seen: u8 = s.h_seen[..self.workers].iter().sum();
                if seen == self.total() {
                    n.h_pc = HostPc::Done;
                    out.push((label!(on, "host: all seen, done"), Ok(n)));
                    return;
                }
                let mut poll = s.clone();
                poll.h_pc = HostPc::ReadC0;
                out.push((label!(on, "host: poll again (setImmediate)"), Ok(poll)));
                n.h_pc = if self.bug == BellBug::HostRecheckBeforeArm {
                    HostPc::Recheck
                } else {
                    HostPc::Arm
                };
                out.push((label!(on, "host: go idle"), Ok(n)));
            }
            HostPc::Arm => {
                n.armed = 1;
                n.epochs = s.epochs + 1;
                n.armed_by = n.epochs;
                n.h_pc = if self.bug == BellBug::HostRecheckBeforeArm {
                    HostPc::Sleep
                } else {
                    HostPc::Recheck
                };
                let label = label!(on, "host: store ARMED = 1 (arming #{})", n.epochs);
                if n.epochs >= 32 {
                    out.push((
                        label,
                        Err("more than 31 armings: the model is unbounded".into()),
                    ));
                } else {
                    out.push((label, Ok(n)));
                }
            }
            HostPc::Recheck => {
                let moved = s.counter != s.h_c0;
                n.h_pc = match (self.bug == BellBug::HostRecheckBeforeArm, moved) {
                    (false, true) => HostPc::Disarm,
                    (false, false) => HostPc::Sleep,
                    // broken order: nothing armed yet; drain again, or arm and sleep
                    (true, true) => HostPc::ReadC0,
                    (true, false) => HostPc::Arm,
                };
                out.push((
                    format!("host: re-read COUNTER = {} (c0 {})", s.counter, s.h_c0),
                    Ok(n),
                ));
            }
            HostPc::Disarm => {
                n.armed = 0;
                n.h_pc = HostPc::ReadC0;
                out.push((label!(on, "host: store ARMED = 0, drain again"), Ok(n)));
            }
            HostPc::Sleep | HostPc::Done => {}
        }
        // A queued ring runs one drain whenever the host's loop is free:
        // asleep, between drains (ReadC0), or done (it then finds nothing).
        if s.pending > 0 && matches!(s.h_pc, HostPc::Sleep | HostPc::ReadC0 | HostPc::Done) {
            let mut n = s.clone();
            n.pending -= 1;
            if s.h_pc == HostPc::Sleep {
                n.h_pc = HostPc::ReadC0;
            }
            out.push((label!(on, "host: ring delivered, drain"), Ok(n)));
        }
    }

    /// Ghost bookkeeping of a ring taken from arming `s.armed_by`.
    fn take_ring(s: &BellState, n: &mut BellState) -> Result<(), String> {
        let bit = 1u32 << s.armed_by;
        if s.rung & bit != 0 {
            return Err(format!("arming #{} rung twice", s.armed_by));
        }
        n.rung |= bit;
        Ok(())
    }

    fn waiter_step(&self, s: &BellState, out: &mut BellSteps, on: bool) {
        let mut n = s.clone();
        match s.w_pc {
            WaiterPc::Load => {
                let now = s.counter;
                if now != s.w_last {
                    n.w_last = now;
                    n.w_pc = WaiterPc::Swap;
                } else {
                    n.w_now = now;
                    n.w_pc = WaiterPc::FutexWait;
                }
                out.push((
                    label!(on, "waiter: load COUNTER = {now} (last {})", s.w_last),
                    Ok(n),
                ));
            }
            WaiterPc::Swap => {
                let was = s.armed;
                n.armed = 0;
                n.w_pc = if was == 1 {
                    WaiterPc::Enqueue
                } else {
                    WaiterPc::Load
                };
                let label = label!(on, "waiter: swap ARMED -> 0 (was {was})");
                let r = if was == 1 {
                    Self::take_ring(s, &mut n).map(|()| n)
                } else {
                    Ok(n)
                };
                out.push((label, r));
            }
            WaiterPc::Enqueue => {
                n.pending = s.pending + 1;
                n.w_pc = WaiterPc::Load;
                out.push((
                    label!(on, "waiter: on_ring (queue the host's drain)"),
                    Ok(n),
                ));
            }
            WaiterPc::FutexWait => {
                n.w_pc = if s.counter == s.w_now {
                    WaiterPc::Blocked
                } else {
                    WaiterPc::Load
                };
                out.push((
                    format!(
                        "waiter: futex_wait(COUNTER = {}, expected {})",
                        s.counter, s.w_now
                    ),
                    Ok(n),
                ));
            }
            WaiterPc::Blocked => {}
        }
    }

    /// One publication finished: the next one, or done.
    fn next_publication(&self, w: usize, n: &mut BellState) {
        n.p_sent[w] += 1;
        n.p_pc[w] = if n.p_sent[w] == self.per_worker {
            WorkerPc::Done
        } else {
            WorkerPc::StoreRes
        };
    }

    fn worker_step(&self, w: usize, s: &BellState, out: &mut BellSteps, on: bool) {
        let mut n = s.clone();
        let armed_first = self.bug == BellBug::WorkerLoadsArmedFirst;
        match s.p_pc[w] {
            WorkerPc::StoreRes => {
                n.res[w] = s.res[w] + 1;
                n.p_pc[w] = if armed_first {
                    WorkerPc::LoadArmed
                } else {
                    WorkerPc::AddCounter
                };
                out.push((label!(on, "worker {w}: store RES = {}", n.res[w]), Ok(n)));
            }
            WorkerPc::AddCounter => {
                n.counter = s.counter + 1;
                if !armed_first {
                    n.p_pc[w] = WorkerPc::LoadArmed;
                } else if s.p_saw_armed[w] {
                    n.p_pc[w] = WorkerPc::Ring;
                } else {
                    self.next_publication(w, &mut n);
                }
                out.push((
                    label!(on, "worker {w}: add COUNTER -> {}", n.counter),
                    Ok(n),
                ));
            }
            WorkerPc::LoadArmed => {
                if armed_first {
                    n.p_saw_armed[w] = s.armed != 0;
                    n.p_pc[w] = WorkerPc::AddCounter;
                } else if s.armed != 0 {
                    n.p_pc[w] = WorkerPc::Ring;
                } else {
                    self.next_publication(w, &mut n);
                }
                out.push((label!(on, "worker {w}: load ARMED = {}", s.armed), Ok(n)));
            }
            WorkerPc::Ring => {
                if s.w_pc == WaiterPc::Blocked {
                    n.w_pc = WaiterPc::Load;
                }
                n.p_saw_armed[w] = false;
                self.next_publication(w, &mut n);
                out.push((label!(on, "worker {w}: ring (futex wake_all)"), Ok(n)));
            }
            WorkerPc::Done => {}
        }
    }
}

impl Model for Bell {
    type State = BellState;

    fn initial(&self) -> BellState {
        assert!((1..=MAX_WORKERS).contains(&self.workers));
        let mut p_pc = [WorkerPc::Done; MAX_WORKERS];
        for pc in p_pc.iter_mut().take(self.workers) {
            *pc = WorkerPc::StoreRes;
        }
        BellState {
            counter: 0,
            armed: 0,
            res: [0; MAX_WORKERS],
            pending: 0,
            h_pc: HostPc::ReadC0,
            h_c0: 0,
            h_seen: [0; MAX_WORKERS],
            w_pc: WaiterPc::Load,
            // Dispatcher::start snapshots COUNTER before the thread runs.
            w_last: 0,
            w_now: 0,
            p_pc,
            p_sent: [0; MAX_WORKERS],
            p_saw_armed: [false; MAX_WORKERS],
            epochs: 0,
            armed_by: 0,
            rung: 0,
        }
    }

    fn successors(&self, s: &BellState, out: &mut BellSteps, on: bool) {
        self.host_step(s, out, on);
        self.waiter_step(s, out, on);
        for w in 0..self.workers {
            self.worker_step(w, s, out, on);
        }
    }

    fn invariant(&self, s: &BellState) -> Result<(), String> {
        let published: u8 = s.res[..self.workers].iter().sum();
        if s.counter > published {
            return Err(format!(
                "COUNTER {} ahead of {published} published responses",
                s.counter
            ));
        }
        if s.armed == 1 && s.armed_by == 0 {
            return Err("ARMED set by nobody".into());
        }
        let seen: u8 = s.h_seen[..self.workers].iter().sum();
        if seen > published {
            return Err(format!("host saw {seen} of {published} responses"));
        }
        Ok(())
    }

    fn terminal(&self, s: &BellState) -> Result<(), String> {
        let seen: u8 = s.h_seen[..self.workers].iter().sum();
        let published: u8 = s.res[..self.workers].iter().sum();
        if s.h_pc != HostPc::Done {
            return Err(format!(
                "lost wakeup: host {:?} with seen {seen} of {published} published responses \
                 (COUNTER {}, ARMED {}, waiter {:?}, queued rings {})",
                s.h_pc, s.counter, s.armed, s.w_pc, s.pending
            ));
        }
        if seen != self.total() || published != self.total() {
            return Err(format!("host done with {seen} of {} seen", self.total()));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::lane::{HostLane, WorkerLane, SLOT_COUNT};
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Instant;

    fn run<M: Model>(name: &str, model: &M) -> Stats {
        let t0 = Instant::now();
        match explore(model) {
            Ok(stats) => {
                eprintln!("{name}: {stats:?} in {:?}", t0.elapsed());
                assert!(stats.terminals > 0, "{name}: no terminal state reached");
                stats
            }
            Err(v) => panic!("{name}: violation after exploring: {v}"),
        }
    }

    fn must_fail<M: Model>(name: &str, model: &M, expect: &str) {
        match explore(model) {
            Ok(stats) => panic!("{name}: the broken variant passed ({stats:?})"),
            Err(v) => {
                eprintln!("{name}: caught as expected: {v}");
                assert!(
                    v.message.contains(expect),
                    "{name}: expected a violation mentioning {expect:?}, got: {v}"
                );
                assert!(!v.trace.is_empty(), "a counterexample comes with its trace");
            }
        }
    }

    #[test]
    fn lane_all_interleavings() {
        let mut total = 0;
        for slots in 2..=4 {
            for calls in 1..=6 {
                if slots == 4 && calls > 5 {
                    continue; // covered below with its own timing line
                }
                let s = run(
                    &format!("lane S={slots} K={calls}"),
                    &Lane {
                        slots,
                        calls,
                        bug: LaneBug::None,
                    },
                );
                total += s.states;
            }
        }
        assert!(total > 10_000, "explored {total} states");
    }

    #[test]
    fn lane_four_slots_six_calls() {
        let s = run(
            "lane S=4 K=6",
            &Lane {
                slots: 4,
                calls: 6,
                bug: LaneBug::None,
            },
        );
        assert!(s.states > 100_000, "explored {} states", s.states);
    }

    #[test]
    fn mutation_worker_retaking_a_started_slot_is_caught() {
        must_fail(
            "lane: worker retakes started",
            &Lane {
                slots: 2,
                calls: 3,
                bug: LaneBug::WorkerRetakesStarted,
            },
            "",
        );
    }

    #[test]
    fn mutation_flush_before_write_is_caught() {
        must_fail(
            "lane: flush before write",
            &Lane {
                slots: 2,
                calls: 2,
                bug: LaneBug::HostFlushesBeforeWrite,
            },
            "slot",
        );
    }

    #[test]
    fn mutation_host_not_advancing_seen_is_caught() {
        must_fail(
            "lane: seen not advanced",
            &Lane {
                slots: 2,
                calls: 2,
                bug: LaneBug::HostKeepsSeen,
            },
            "",
        );
    }

    #[test]
    fn doorbell_one_worker() {
        for per_worker in 1..=3 {
            run(
                &format!("doorbell 1 worker x {per_worker}"),
                &Bell {
                    workers: 1,
                    per_worker,
                    bug: BellBug::None,
                },
            );
        }
    }

    #[test]
    fn doorbell_two_workers() {
        for per_worker in 1..=2 {
            let s = run(
                &format!("doorbell 2 workers x {per_worker}"),
                &Bell {
                    workers: 2,
                    per_worker,
                    bug: BellBug::None,
                },
            );
            assert!(s.states > 100, "explored {} states", s.states);
        }
    }

    #[test]
    fn mutation_recheck_before_arm_loses_a_wakeup() {
        must_fail(
            "doorbell: recheck before arm",
            &Bell {
                workers: 1,
                per_worker: 1,
                bug: BellBug::HostRecheckBeforeArm,
            },
            "lost wakeup",
        );
    }

    #[test]
    fn mutation_worker_loading_armed_first_loses_a_wakeup() {
        must_fail(
            "doorbell: worker loads ARMED first",
            &Bell {
                workers: 1,
                per_worker: 1,
                bug: BellBug::WorkerLoadsArmedFirst,
            },
            "lost wakeup",
        );
    }

    #[test]
    fn mutation_c0_after_scan_loses_a_wakeup() {
        must_fail(
            "doorbell: c0 after scan",
            &Bell {
                workers: 1,
                per_worker: 1,
                bug: BellBug::HostReadsC0AfterScan,
            },
            "lost wakeup",
        );
    }

    /// The model's lane formulas are those of the real `HostLane` and
    /// `WorkerLane`: both are driven with the same random legal operations
    /// (32 slots, as in the real layout) and every result is compared.
    #[test]
    fn mirror_matches_lane_rs() {
        let req_word = AtomicU32::new(0);
        let res_word = AtomicU32::new(0);
        let mut host = HostLane::default();
        let mut worker = WorkerLane::default();
        // mirror
        let (mut h_req, mut h_seen, mut h_busy) = (0u32, 0u32, 0u32);
        let (mut w_res, mut w_started) = (0u32, 0u32);
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut checked = 0u32;
        for _ in 0..200_000 {
            match next() % 4 {
                0 => {
                    let real = host.free_slot();
                    assert_eq!(real, host_free_slot(h_busy, SLOT_COUNT));
                    if let Some(slot) = real {
                        host.publish(&req_word, slot);
                        h_busy |= 1 << slot;
                        h_req ^= 1 << slot;
                        assert_eq!(req_word.load(Ordering::Relaxed), h_req);
                        assert_eq!(host.in_flight(), h_busy.count_ones());
                    }
                }
                1 => {
                    let real = worker.take_new(&req_word);
                    let (new, started) = worker_take_new(h_req, w_res, w_started);
                    assert_eq!(real, new);
                    w_started = started;
                }
                2 => {
                    // answer a random subset of the started slots
                    let finished = w_started & next() as u32;
                    if finished != 0 {
                        worker.publish(&res_word, finished);
                        let (res, started) = worker_publish(w_res, w_started, finished);
                        w_res = res;
                        w_started = started;
                        assert_eq!(res_word.load(Ordering::Relaxed), w_res);
                    }
                }
                _ => {
                    let real = host.take_finished(&res_word);
                    let (finished, seen, busy) = host_take_finished(w_res, h_seen, h_busy);
                    assert_eq!(real, finished);
                    h_seen = seen;
                    h_busy = busy;
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000);
    }
}
