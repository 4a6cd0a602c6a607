//! The steal protocol: one shared submit region that every worker claims
//! calls from, so an idle worker takes any call a busy one has not started.
//!
//! Pools of 2..=31 workers use it by default instead of private lanes
//! (`lane.rs`). Like the lane protocol, the hot path runs in JavaScript
//! (`lib/steal.js`, both ends); the Rust types below implement the same state
//! machine over the same words and are what the cargo tests drive. An
//! exhaustive interleaving model of it lives in `src/model_steal.rs`.
//!
//! # Words (offsets in `layout.rs`, `StealGeometry`)
//! The section has `G` region lanes of `width` slots each (`width <= 32`).
//! - `PENDING[g]`: bit `b` set = slot `(g, b)` holds a published request that
//!   may still be unclaimed. The host sets bits (`Atomics.or`); only the
//!   worker that won a slot clears its bit (`Atomics.and`). A hint that lets
//!   claimants find work without scanning slots; the claim itself is `OWNER`.
//! - `OWNER` (slot word 6): `OWNER_HOST` = never published; `0` = published
//!   and claimable; `w + 1` = claimed by worker `w`, which it stays after the
//!   answer until the host publishes the slot again.
//! - `DONE[w][g]`, on worker `w`'s own lines, written only by it: `w` toggles
//!   bit `b` to hand slot `(g, b)` back with its response. `DONE_SEQ[w]`
//!   counts `w`'s flushes so the host skips workers with nothing new.
//! - `SLEEPERS`: bit `w` = worker `w` is parking or parked (each worker sets
//!   and clears its own bit). `WAKE[w]`, on `w`'s lines: the counter `w`
//!   parks on; whoever wakes `w` bumps it, then notifies it.
//! - `IDLE`: bit `w` = worker `w` holds no started call. A hint for spreading
//!   async calls, never needed for correctness: a worker that is waiting on
//!   async calls of its own does not claim more while another worker is
//!   idle, so one event loop does not collect every pending async call.
//! - The doorbell (`doorbell.rs`) is unchanged: `COUNTER` after each flush.
//!
//! # One call
//! 1. Host: pick a slot it does not hold (a private `busy` mask per region
//!    lane), write the request words and payload. Host and claimants walk a region lane's slots in rotation (from the
//!    one after the last they used), so calls are claimed in about the
//!    order they were published: always taking the lowest bit would let new
//!    calls in freed low slots overtake an old one in a high slot for as
//!    long as the region stays full.
//! 2. Host, once per burst: `PENDING[g] |= new bits` (`Atomics.or`), then
//!    store `OWNER = 0` in each new slot, then load `SLEEPERS`; for as many
//!    sleepers as calls were published, `WAKE[w] += 1` and notify it. The
//!    bits go first: a claimant that sees one before its `OWNER = 0` loses
//!    the compare-exchange and tries again. In the other order (found by
//!    the model, `model_steal.rs`) a claimant holding an old PENDING
//!    snapshot can win a slot before its bit is set again; its clear then
//!    comes before the host's set, and the bit stays set on a claimed slot
//!    that nobody will clear, so idle workers never park.
//! 3. Worker `w`, about to run a call (claim = start, so work nobody has
//!    started stays claimable by everyone): load `PENDING[g]`; for a set bit,
//!    `compareExchange(OWNER, 0, w + 1)`; the one worker whose exchange
//!    returns 0 owns the call and clears the bit (`Atomics.and`). A loser
//!    moves on and never clears the bit: by then the slot may already have
//!    been answered and published again, and the bit belongs to that round.
//!    A worker whose calls keep finishing in a few µs claims several at
//!    once (same compare-exchange per slot, one clear for all; up to 8, see
//!    `lib/serve.js`): for such calls the claim costs as much as the call.
//!    It goes back to one at a time as soon as calls take longer.
//! 4. Worker: runs it, writes status, call id, length and payload into the
//!    slot, toggles bit `b` of its private `DONE[g]` copy; flushes (stores
//!    the changed DONE words, `DONE_SEQ += 1`, rings the doorbell).
//! 5. Host: for each worker whose `DONE_SEQ` moved, `DONE[w][g] ^ seen[w][g]`
//!    are the answered slots; it settles each call and frees the slot.
//!
//! # Why a call is never lost, duplicated or misdelivered
//! - Run once: `OWNER` goes `0 -> w + 1` by compare-exchange, and only the
//!   host writes 0, once per publication.
//! - Never stranded: while a slot's `OWNER` is 0 its `PENDING` bit is set (the
//!   host sets it before storing 0; only the winner clears it, after winning).
//! - No stale bit: a bit is set before its slot becomes claimable, so the
//!   winner's clear always comes after the set it clears.
//! - Answered once: each answer is one toggle of a bit in a word with one
//!   writer; the host consumes `DONE ^ seen` and then sets `seen = DONE`.
//! - Misdelivered: the host maps slot to call in its own table and checks
//!   the call id the worker echoes.
//! - A worker that dies: the host first drains its `DONE` (published answers
//!   are real), then every slot it holds busy with `OWNER == w + 1` was taken
//!   by the dead worker and not answered. The host rejects those calls (not
//!   re-run: a task may have side effects), clears their `PENDING` bits (the
//!   worker may have died between winning and clearing, and a stale bit
//!   would keep the others spinning on a slot nobody can claim), and zeroes
//!   the dead worker's `DONE` lines for its replacement.
//!
//! # Waiting
//! At most one idle worker spins: the one that took `SPINNER` (compare-
//! exchange 0 -> `w + 1`); it gives it back when it claims a call or parks.
//! Others park at once. On 2 vCPUs two spinning workers and the host are
//! three runnable threads: with every idle worker spinning, sequential
//! calls measured p50 30 µs / p99 2 ms; with one spinner, as with private
//! lanes (`npm run bench`). The host's flush wakes one sleeper fewer while
//! a spinner is there (it takes the first call). That cannot strand work:
//! a spinner that stops spinning parks through the same steps below, which
//! re-check PENDING after setting its SLEEPERS bit; and the host clears a
//! dead worker's SPINNER and wakes the sleepers if work is pending.
//!
//! Parking: `seq = WAKE[w]`;
//! `SLEEPERS |= bit`; re-check every `PENDING` word for a claimable bit (if
//! one is there, clear its own bit and serve); else `Atomics.waitAsync(WAKE[w],
//! seq)`. Host (`or PENDING`, `load SLEEPERS`) and worker (`or SLEEPERS`,
//! `load PENDING`) are sequentially consistent, so one sees the other; the
//! host bumps `WAKE[w]` before notifying, so a notify that lands before the
//! worker blocks makes its wait return at once. One word per worker makes
//! every wake targeted: a worker whose own async call ends while it is
//! parked wakes itself the same way, and leaves no stale waiter behind to
//! absorb a notify meant for another.

use std::sync::atomic::{AtomicU32, Ordering};

use super::layout::{self, slot_word, steal_word, StealGeometry, DONE_SEQ_WORD, WAKE_WORD};
use super::region::SharedMemory;

/// The words of one steal section in a region.
pub struct Section<'a> {
    memory: &'a SharedMemory,
    base_word: usize,
    pub geometry: StealGeometry,
}

impl<'a> Section<'a> {
    /// `offset`: the section's byte offset in `memory` (`layout::steal_offset`).
    pub fn new(memory: &'a SharedMemory, offset: usize, geometry: StealGeometry) -> Option<Self> {
        if !offset.is_multiple_of(layout::CACHE_LINE) || offset + geometry.bytes() > memory.len() {
            return None;
        }
        Some(Self {
            memory,
            base_word: offset / 4,
            geometry,
        })
    }

    fn word(&self, index_from_section: usize) -> &AtomicU32 {
        self.memory
            .word(self.base_word + index_from_section)
            .expect("section bounds checked in Section::new")
    }

    pub fn pending(&self, g: usize) -> &AtomicU32 {
        self.word(steal_word::PENDING + g)
    }

    pub fn sleepers(&self) -> &AtomicU32 {
        self.word(steal_word::SLEEPERS)
    }

    pub fn wake(&self, w: usize) -> &AtomicU32 {
        self.word(self.geometry.done_offset(w) / 4 + WAKE_WORD)
    }

    pub fn done(&self, w: usize, g: usize) -> &AtomicU32 {
        self.word(self.geometry.done_offset(w) / 4 + g)
    }

    pub fn done_seq(&self, w: usize) -> &AtomicU32 {
        self.word(self.geometry.done_offset(w) / 4 + DONE_SEQ_WORD)
    }

    /// Word `index` (a `slot_word`) of slot `(g, b)`.
    pub fn slot(&self, g: usize, b: usize, index: usize) -> &AtomicU32 {
        self.word(self.geometry.slot_offset(g, b) / 4 + index)
    }

    /// Formatting: every slot starts as never published.
    pub fn format(&self) {
        for g in 0..self.geometry.region_lanes {
            for b in 0..self.geometry.width {
                self.slot(g, b, slot_word::OWNER)
                    .store(layout::OWNER_HOST, Ordering::Relaxed);
            }
        }
    }
}

/// The host's private view of a section.
pub struct HostSubmit {
    busy: Vec<u32>,
    fresh: Vec<u32>,
    seen: Vec<Vec<u32>>,
    full: u32,
}

impl HostSubmit {
    pub fn new(geometry: &StealGeometry) -> Self {
        Self {
            busy: vec![0; geometry.region_lanes],
            fresh: vec![0; geometry.region_lanes],
            seen: vec![vec![0; geometry.region_lanes]; geometry.workers],
            full: if geometry.width == 32 {
                u32::MAX
            } else {
                (1 << geometry.width) - 1
            },
        }
    }

    /// A slot the host does not hold, if any.
    pub fn free_slot(&self) -> Option<(usize, usize)> {
        self.busy.iter().enumerate().find_map(|(g, &busy)| {
            let free = !busy & self.full;
            (free != 0).then(|| (g, free.trailing_zeros() as usize))
        })
    }

    /// Step 1 after the request is written: the slot joins this burst.
    pub fn publish(&mut self, _s: &Section, g: usize, b: usize) {
        let bit = 1u32 << b;
        debug_assert_eq!(self.busy[g] & bit, 0, "slot ({g}, {b}) published twice");
        self.busy[g] |= bit;
        self.fresh[g] |= bit;
    }

    /// Step 2: hand the burst to the claimants. Returns the sleepers whose
    /// WAKE it bumped (the JS host notifies them; Rust tests poll instead).
    pub fn flush(&mut self, s: &Section) -> u32 {
        let mut published = 0;
        for g in 0..self.fresh.len() {
            let bits = std::mem::take(&mut self.fresh[g]);
            if bits != 0 {
                published += bits.count_ones();
                // SeqCst: ordered before the SLEEPERS load below in the one
                // total order a parking worker's (or SLEEPERS, load PENDING)
                // also lives in.
                s.pending(g).fetch_or(bits, Ordering::SeqCst);
                for b in super::lane::bits(bits) {
                    // SeqCst store after the request's words: a claimant
                    // whose compare-exchange reads 0 reads the request.
                    s.slot(g, b, slot_word::OWNER).store(0, Ordering::SeqCst);
                }
            }
        }
        let sleepers = s.sleepers().load(Ordering::SeqCst);
        let mut woken = 0;
        for w in super::lane::bits(sleepers).take(published as usize) {
            s.wake(w).fetch_add(1, Ordering::SeqCst);
            woken |= 1 << w;
        }
        woken
    }

    /// Step 5 for worker `w`: answered slots per region lane (freed here).
    pub fn take_done(&mut self, s: &Section, w: usize) -> Vec<(usize, u32)> {
        let mut out = Vec::new();
        for g in 0..self.busy.len() {
            // Acquire pairs with the worker's release store of DONE: the
            // responses' contents are visible.
            let done = s.done(w, g).load(Ordering::Acquire);
            let answered = done ^ self.seen[w][g];
            if answered != 0 {
                debug_assert_eq!(answered & !self.busy[g], 0, "answer for a free slot");
                self.seen[w][g] = done;
                self.busy[g] &= !answered;
                out.push((g, answered));
            }
        }
        out
    }

    /// Worker `w` is gone: after `take_done` for it, the slots it still held.
    /// They are freed, their stale PENDING bits cleared, its DONE zeroed.
    pub fn reclaim(&mut self, s: &Section, w: usize) -> Vec<(usize, usize)> {
        let mut held = Vec::new();
        let owner = w as u32 + 1;
        for g in 0..self.busy.len() {
            for b in super::lane::bits(self.busy[g]) {
                if s.slot(g, b, slot_word::OWNER).load(Ordering::SeqCst) == owner {
                    held.push((g, b));
                }
            }
        }
        for &(g, b) in &held {
            let bit = 1u32 << b;
            self.busy[g] &= !bit;
            s.pending(g).fetch_and(!bit, Ordering::SeqCst);
        }
        for g in 0..self.busy.len() {
            s.done(w, g).store(0, Ordering::SeqCst);
            self.seen[w][g] = 0;
        }
        s.sleepers().fetch_and(!(1 << w), Ordering::SeqCst);
        held
    }

    pub fn in_flight(&self) -> u32 {
        self.busy.iter().map(|b| b.count_ones()).sum()
    }
}

/// One worker's private view of a section.
pub struct Claimant {
    w: usize,
    done: Vec<u32>,
    changed: bool,
}

impl Claimant {
    pub fn new(s: &Section, w: usize) -> Self {
        Self {
            w,
            done: (0..s.geometry.region_lanes)
                .map(|g| s.done(w, g).load(Ordering::SeqCst))
                .collect(),
            changed: false,
        }
    }

    /// Step 3: claims one call, starting at this worker's home region lane.
    pub fn claim(&mut self, s: &Section) -> Option<(usize, usize)> {
        let lanes = s.geometry.region_lanes;
        let me = self.w as u32 + 1;
        for i in 0..lanes {
            let g = (self.w + i) % lanes;
            let pending = s.pending(g).load(Ordering::SeqCst);
            for b in super::lane::bits(pending) {
                // SeqCst compare-exchange: exactly one claimant turns the
                // host's 0 into its own id; acquire side of step 1's store.
                if s.slot(g, b, slot_word::OWNER)
                    .compare_exchange(0, me, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    s.pending(g).fetch_and(!(1 << b), Ordering::SeqCst);
                    return Some((g, b));
                }
            }
        }
        None
    }

    /// Step 4, deferred: the response of `(g, b)` is written.
    pub fn answer(&mut self, g: usize, b: usize) {
        self.done[g] ^= 1 << b;
        self.changed = true;
    }

    /// Step 4: publish every answer since the last flush.
    pub fn flush(&mut self, s: &Section) {
        if !std::mem::take(&mut self.changed) {
            return;
        }
        for (g, &done) in self.done.iter().enumerate() {
            // Release: the responses happen-before the host's acquire load.
            s.done(self.w, g).store(done, Ordering::Release);
        }
        s.done_seq(self.w).fetch_add(1, Ordering::SeqCst);
    }

    /// Whether any PENDING bit is set (what a parking worker re-checks).
    pub fn anything_pending(s: &Section) -> bool {
        (0..s.geometry.region_lanes).any(|g| s.pending(g).load(Ordering::SeqCst) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::layout::{control_bytes, steal_offset};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    struct Region {
        _buf: Vec<u64>,
        memory: SharedMemory,
        offset: usize,
        geometry: StealGeometry,
    }

    fn region(workers: usize, region_lanes: usize, width: usize) -> Arc<Region> {
        let geometry = StealGeometry::new(workers, region_lanes, width).unwrap();
        let len = control_bytes(0, 0, Some(&geometry)).unwrap();
        let mut buf = vec![0u64; len / 8];
        // SAFETY: `buf` moves into the same Region as `memory` and so lives as
        // long as it; a Vec's heap buffer does not move when the Vec does.
        let memory = unsafe { SharedMemory::new(buf.as_mut_ptr().cast(), len) }.unwrap();
        let offset = steal_offset(0, 0).unwrap();
        let r = Region {
            _buf: buf,
            memory,
            offset,
            geometry,
        };
        Section::new(&r.memory, offset, geometry).unwrap().format();
        Arc::new(r)
    }

    impl Region {
        fn section(&self) -> Section<'_> {
            Section::new(&self.memory, self.offset, self.geometry).unwrap()
        }
    }

    #[test]
    fn a_published_slot_is_claimed_once() {
        let r = region(2, 1, 3);
        let s = r.section();
        let mut host = HostSubmit::new(&s.geometry);
        let mut a = Claimant::new(&s, 0);
        let mut b = Claimant::new(&s, 1);
        assert_eq!(a.claim(&s), None, "nothing published");
        let (g, slot) = host.free_slot().unwrap();
        host.publish(&s, g, slot);
        assert_eq!(a.claim(&s), None, "published but not yet flushed");
        host.flush(&s);
        assert_eq!(a.claim(&s), Some((g, slot)));
        assert_eq!(b.claim(&s), None, "already claimed");
        assert!(!Claimant::anything_pending(&s));
        a.answer(g, slot);
        assert!(host.take_done(&s, 0).is_empty(), "not flushed yet");
        a.flush(&s);
        assert_eq!(host.take_done(&s, 0), vec![(g, 1 << slot)]);
        assert_eq!(host.in_flight(), 0);
    }

    #[test]
    fn a_dead_claimants_calls_are_reclaimed_and_its_stale_bits_cleared() {
        let r = region(2, 1, 3);
        let s = r.section();
        let mut host = HostSubmit::new(&s.geometry);
        for _ in 0..3 {
            let (g, b) = host.free_slot().unwrap();
            host.publish(&s, g, b);
        }
        host.flush(&s);
        let mut dead = Claimant::new(&s, 1);
        let first = dead.claim(&s).unwrap();
        dead.answer(first.0, first.1);
        dead.flush(&s);
        // It wins a second slot and dies before clearing its PENDING bit.
        let second = (0, 1);
        s.slot(0, 1, slot_word::OWNER)
            .compare_exchange(0, 2, Ordering::SeqCst, Ordering::SeqCst)
            .unwrap();
        assert_eq!(host.take_done(&s, 1), vec![(0, 1 << first.1)]);
        assert_eq!(host.reclaim(&s, 1), vec![second]);
        assert_eq!(
            s.pending(0).load(Ordering::SeqCst),
            1 << 2,
            "only the unclaimed slot is still pending"
        );
        let mut live = Claimant::new(&s, 0);
        assert_eq!(live.claim(&s), Some((0, 2)));
        assert_eq!(host.in_flight(), 1);
    }

    /// A host and three claimants on four threads; every call carries a
    /// unique number and is answered `n * 2 + 1`. Each call must be run once
    /// and come back once with its own answer.
    #[test]
    fn threads_exchange_calls_exactly_once() {
        const CALLS: u64 = 150_000;
        const WORKERS: usize = 3;
        let r = region(WORKERS, 2, 8);
        let stop = Arc::new(AtomicBool::new(false));
        let ran: Arc<Vec<AtomicU32>> = Arc::new((0..CALLS).map(|_| AtomicU32::new(0)).collect());
        let workers: Vec<_> = (0..WORKERS)
            .map(|w| {
                let (r, stop, ran) = (Arc::clone(&r), Arc::clone(&stop), Arc::clone(&ran));
                std::thread::spawn(move || {
                    let s = r.section();
                    let mut me = Claimant::new(&s, w);
                    let mut answered = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        match me.claim(&s) {
                            Some((g, b)) => {
                                let n =
                                    s.slot(g, b, slot_word::CALL).load(Ordering::Relaxed) as u64;
                                ran[n as usize].fetch_add(1, Ordering::Relaxed);
                                s.slot(g, b, slot_word::LEN)
                                    .store((n * 2 + 1) as u32, Ordering::Relaxed);
                                me.answer(g, b);
                                answered += 1;
                                if answered.is_multiple_of(3) {
                                    me.flush(&s);
                                }
                            }
                            None => {
                                me.flush(&s);
                                std::thread::yield_now();
                            }
                        }
                    }
                    me.flush(&s);
                    answered
                })
            })
            .collect();

        let s = r.section();
        let mut host = HostSubmit::new(&s.geometry);
        let mut slot_call = vec![vec![u64::MAX; 8]; 2];
        let mut settled = vec![false; CALLS as usize];
        let (mut sent, mut done) = (0u64, 0u64);
        while done < CALLS {
            while sent < CALLS {
                let Some((g, b)) = host.free_slot() else {
                    break;
                };
                s.slot(g, b, slot_word::CALL)
                    .store(sent as u32, Ordering::Relaxed);
                slot_call[g][b] = sent;
                host.publish(&s, g, b);
                sent += 1;
            }
            host.flush(&s);
            for w in 0..WORKERS {
                for (g, answered) in host.take_done(&s, w) {
                    for b in crate::memory::lane::bits(answered) {
                        let call = slot_call[g][b];
                        let got = s.slot(g, b, slot_word::LEN).load(Ordering::Relaxed);
                        assert_eq!(
                            got as u64,
                            call * 2 + 1,
                            "slot ({g}, {b}) answered another call"
                        );
                        assert!(!settled[call as usize], "call {call} settled twice");
                        settled[call as usize] = true;
                        slot_call[g][b] = u64::MAX;
                        done += 1;
                    }
                }
            }
            std::hint::spin_loop();
        }
        stop.store(true, Ordering::Relaxed);
        let per_worker: Vec<u64> = workers.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(per_worker.iter().sum::<u64>(), CALLS);
        assert!(
            ran.iter().all(|n| n.load(Ordering::Relaxed) == 1),
            "every call ran exactly once"
        );
        assert_eq!(host.in_flight(), 0);
    }
}
