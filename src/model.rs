//! Exhaustive interleaving model of the doorbell (test-only): how a worker
//! that has published responses wakes an idle host, and why a publication
//! cannot fall between the host's arming and its sleep.
//!
//! The lane and steal protocols themselves (both ends and the workers'
//! loops) are checked in JavaScript, by a model checker that runs the
//! shipped classes of `lib/protocol/lane.js` and `lib/protocol/steal.js`: `__test__/model/`,
//! driven by `__test__/protocol-model.test.mjs`. This model covers what
//! those leave out: the host's arming and the waiter thread.
//!
//! # What each party transcribes
//! - The waiter: the loop in `Doorbell::wait` (`src/doorbell.rs`), run by
//!   the thread `Dispatcher` starts (`src/dispatcher.rs`). This is Rust and
//!   ships.
//! - The host: `drain` in `lib/host/loop.js`: `counted = COUNTER`, the scan of
//!   every worker's answers, then poll again or arm (store `ARMED = 1`,
//!   re-read COUNTER, and if it moved store `ARMED = 0` and drain again).
//! - The workers: the doorbell half of `flush`, in `lib/protocol/lane.js`
//!   (`WorkerLane.flush`: RES store, COUNTER add, ARMED load, ring if it was
//!   set) and in `lib/protocol/steal.js` (`Claimant.flush`: a DONE store per changed
//!   region lane, DONE_SEQ add, COUNTER add, ARMED load, ring if it was
//!   set).
//!
//! These are transcribed by hand, step for step: a change to the order of
//! any of those accesses must be made here too.
//!
//! # Method
//! Each party is a small state machine whose transitions are single atomic
//! steps (one load, one store or one read-modify-write). [`explore`] runs a
//! depth-first search over every interleaving of those steps, memoising
//! visited states (a state is the complete tuple of shared words, each
//! party's private state and the ghost bookkeeping the checks need), so
//! each distinct state is expanded once. Interleaving single steps is
//! exactly sequential consistency, which is what every access modelled here
//! uses: `Atomics.*` in JS, `SeqCst` in the waiter.
//!
//! The invariants are checked in every reachable state and inside the steps
//! themselves (a step that observes something impossible returns an error);
//! the terminal checks run in every state with no successor. A violation
//! comes back with the path of steps from the initial state (the DFS stack),
//! so a failing test prints a counterexample trace.
//!
//! # The model
//! The host, one or two workers publishing `per_worker` times each, and the
//! waiter thread.
//! - Host: read `c0 = COUNTER`; load each worker's published word (one step
//!   per worker: RES in `HostLane.takeFinished`, DONE_SEQ in
//!   `HostSubmit.takeDone`); if everything is seen it is done; otherwise it
//!   either polls again (up to `hopBudget` passes, which adapts up to
//!   `FREE_HOPS`; modelled as an unbounded nondeterministic choice, which
//!   covers every value) or arms: store `ARMED = 1`, re-read COUNTER; if it
//!   moved, store `ARMED = 0` and drain again, else sleep. A sleeping host
//!   runs again only through a delivered ring (the ThreadsafeFunction
//!   queue, `pending`); a ring delivered while the host is between drains
//!   or done just runs one more drain.
//! - Worker: *publish* (one step), add COUNTER, load ARMED, and ring (futex
//!   wake_all) if it was set. For a lane worker *publish* is the RES store.
//!   For a steal worker it is the DONE stores followed by the DONE_SEQ add,
//!   as one step at the add: `takeDone` reads DONE only once it has seen
//!   DONE_SEQ move, so a publication exists for the host from that add on,
//!   and DONE words it happens to read early only show it more answers.
//! - Waiter: load COUNTER; if it differs from `last`, set `last`, swap ARMED
//!   to 0 and, if it was 1, queue a ring for the host (a separate step);
//!   otherwise `futex_wait(COUNTER, now)`, which blocks only if COUNTER
//!   still equals `now` at that instant (one atomic step), and is released
//!   only by a worker's ring (wake_all).
//! - Checks: the ARMED value 1 a swap takes was stored by one arming (ghost
//!   epoch); no arming is rung twice; in every terminal state the host is
//!   done and has seen every publication (a terminal state with the host
//!   asleep and a publication unseen is a lost wakeup).
//!
//! # Abstracted away
//! - What is published: slots, call ids, payloads, how many lanes or region
//!   lanes. A worker's publications are a count in one word that the host's
//!   scan sees or not; that each call is delivered once, to the right
//!   caller, is what the JS models check.
//! - Weak memory: nothing is lost by interleaving here. The doorbell's
//!   Dekker pair (ARMED store / COUNTER load against COUNTER add / ARMED
//!   load) needs sequential consistency, and both sides use it.
//! - The workers' own parking and waking, pool shutdown (`STOP` and the
//!   waiter's `stopping` flag), worker death, `submit`'s scheduling
//!   (`drainScheduled`, `armed` gating new drains), the waiter's bounded
//!   futex wait (its `STOP_CHECK` timeouts, like spurious wakeups, only
//!   re-run the loop's re-check) and the value of the polling budget (see
//!   above).
//!
//! # Mutation check (done by hand once, then restored)
//! In `Bell::host_step` the correct path was edited by hand so that the host
//! re-reads COUNTER *before* storing ARMED = 1 (the order of the two lines
//! `Atomics.store(this.i32, W_ARMED, 1)` / `Atomics.load(this.i32,
//! W_COUNTER) !== counted` in `lib/host/loop.js` `drain` reversed):
//! `Decide -> Recheck`, `Recheck(unchanged) -> Arm`, `Arm -> Sleep`. Both
//! `doorbell_one_worker` and `doorbell_two_workers` then failed at once
//! with "terminal state: lost wakeup: host Sleep with seen 0 of 1 published
//! responses (COUNTER 1, ARMED 1, waiter Blocked, queued rings 0)" and the
//! 10-step trace: host c0 = 0, loads the worker's word (0), goes idle,
//! re-reads COUNTER (0, unchanged); waiter loads COUNTER (0 = last) and
//! blocks in futex_wait(0); worker publishes, adds COUNTER (1), loads ARMED
//! (0, so no ring); host stores ARMED = 1 and sleeps: nobody will ever wake
//! it. The edit was reverted; the same mistake stays covered as
//! `mutation_recheck_before_arm_loses_a_wakeup`, next to two more broken
//! variants (the worker loads ARMED before adding to COUNTER, the host
//! reads c0 after the scan), each test asserting that the checker reports a
//! counterexample.
//!
//! Also tried by hand once (and dropped, ~4 s of search): the waiter
//! clearing ARMED with a plain load and a separate store instead of
//! `swap`. With one waiter thread no violation exists (3.4 M states, 2
//! workers x 2 responses): a ring taken from a stale arming still queues a
//! drain, and every ring clears ARMED. The swap matters only if a second
//! waiter thread ever shares the doorbell.

use std::collections::HashSet;
use std::hash::Hash;

/// A step's label, formatted only when `on` (when a trace is printed).
macro_rules! label {
    ($on:expr, $($fmt:tt)*) => {
        if $on { format!($($fmt)*) } else { String::new() }
    };
}

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

// ---------------------------------------------------------------------------
// (b) The doorbell.
// ---------------------------------------------------------------------------

const MAX_WORKERS: usize = 2;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum HostPc {
    /// Start of a drain: `counted = Atomics.load(COUNTER)`.
    ReadC0,
    /// Loading worker `i`'s published word.
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
    /// The lane's `Atomics.store(RES)`, or the steal worker's DONE stores
    /// and `Atomics.add(DONE_SEQ, 1)` (see the module doc).
    Publish,
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
    /// Each worker's published word: RES (lanes), DONE_SEQ (steal).
    word: [u8; MAX_WORKERS],
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
    /// Publications per worker (`flush` calls, one COUNTER add each).
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
                n.h_seen[i] = s.word[i];
                n.h_pc = if i + 1 < self.workers {
                    HostPc::Scan(i as u8 + 1)
                } else if self.bug == BellBug::HostReadsC0AfterScan {
                    HostPc::LateC0
                } else {
                    HostPc::Decide
                };
                out.push((label!(on, "host: load word[{i}] = {}", s.word[i]), Ok(n)));
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
            WorkerPc::Publish
        };
    }

    fn worker_step(&self, w: usize, s: &BellState, out: &mut BellSteps, on: bool) {
        let mut n = s.clone();
        let armed_first = self.bug == BellBug::WorkerLoadsArmedFirst;
        match s.p_pc[w] {
            WorkerPc::Publish => {
                n.word[w] = s.word[w] + 1;
                n.p_pc[w] = if armed_first {
                    WorkerPc::LoadArmed
                } else {
                    WorkerPc::AddCounter
                };
                out.push((
                    label!(on, "worker {w}: publish, word = {}", n.word[w]),
                    Ok(n),
                ));
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
            *pc = WorkerPc::Publish;
        }
        BellState {
            counter: 0,
            armed: 0,
            word: [0; MAX_WORKERS],
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
        let published: u8 = s.word[..self.workers].iter().sum();
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
        let published: u8 = s.word[..self.workers].iter().sum();
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
}
