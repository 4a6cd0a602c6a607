//! The lane protocol: how one call crosses from the host to a worker and back.
//!
//! This is the one place the protocol is written down. The hot path runs in
//! JavaScript (`lib/lane.js` on both sides) because a napi crossing per call
//! costs more than the whole exchange; the Rust types below implement the same
//! state machine over the same words and are what the cargo tests drive.
//!
//! # Words
//! Every lane belongs to one worker and has [`SLOT_COUNT`] slots and two
//! 32-bit words, one bit per slot (offsets in `layout.rs`):
//! - `REQ`, written only by the host: the host flips bit `i` to hand slot `i`
//!   to the worker.
//! - `RES`, written only by the worker: the worker flips bit `i` to hand slot
//!   `i` back with a response in it.
//!
//! Slot `i` is owned by the host when `REQ[i] == RES[i]` and by the worker
//! when they differ. Only the owner touches the slot's words and bytes.
//! Because each word has a single writer, a plain atomic store of the
//! writer's private copy publishes it; no compare-and-swap is needed and no
//! two parties can ever flip the same bit.
//!
//! # One call
//! 1. Host: pick a slot it owns and has not handed out (it keeps a private
//!    `busy` mask), write task index, call id, length, payload (inline or an
//!    offset in the payload region).
//! 2. Host: `REQ ^= bit`, then a release store of `REQ` (JS `Atomics.store`,
//!    sequentially consistent). Everything written in step 1 happens-before
//!    any load that observes the flipped bit.
//! 3. Worker: an acquire load of `REQ` (JS `Atomics.load`); the bits of
//!    `REQ ^ RES` that it has not started are new requests. It reads the slot,
//!    runs the task (several may run at once when tasks are async).
//! 4. Worker: writes status, call id, length and payload into the same slot,
//!    then `RES ^= bit`, release store of `RES`. Results finished together are
//!    published by one store.
//! 5. Worker: `COUNTER += 1` (the doorbell, see `doorbell.rs`).
//! 6. Host: an acquire load of `RES`; the bits of `RES ^ seen` are finished
//!    slots. It reads each response, settles the call's promise, clears the
//!    bit from `busy`, and records `seen = RES`. The slot is free again.
//!
//! # Why a call is never lost, duplicated or misdelivered
//! - Lost: a request becomes visible exactly when its bit flips (step 2), and
//!   the worker keeps scanning `REQ ^ RES` until it answers it; a response
//!   becomes visible when its bit flips (step 4) and the host's `seen` only
//!   advances to values it has scanned.
//! - Duplicated: after step 3 the worker records the bit as started and never
//!   starts it again until `RES` has flipped it back; the host only reads a
//!   slot whose `RES` bit differs from `seen`, and then sets `seen` to match,
//!   so each flip is consumed once.
//! - Misdelivered: the host maps slot to call in its private table, set in
//!   step 1 and cleared in step 6; the call id written in step 1 comes back in
//!   step 4 and is checked, so a stale or foreign response is detected rather
//!   than delivered.
//!
//! # Waiting
//! A worker with nothing to do spins briefly on `REQ`, then sets `SLEEPING`,
//! re-reads `REQ` and blocks on it (`Atomics.waitAsync`, which keeps the
//! worker's event loop running and lets `worker.terminate()` interrupt it).
//! The host, after storing `REQ`, loads `SLEEPING` and notifies only if it is
//! set. Both sides store then load with sequential consistency, so at least
//! one of them sees the other's store: either the worker's re-read sees the
//! request, or the host sees `SLEEPING` and wakes it.

use std::sync::atomic::{AtomicU32, Ordering};

pub use super::layout::SLOT_COUNT;

/// All slot bits of a lane.
pub const ALL_SLOTS: u32 = u32::MAX;

/// The host's side of one lane: its private view of which slots are handed
/// out, and the last `RES` it consumed.
#[derive(Debug, Default)]
pub struct HostLane {
    req: u32,
    seen_res: u32,
    busy: u32,
}

impl HostLane {
    /// A free slot index, if any. Free = owned by the host and not handed out.
    pub fn free_slot(&self) -> Option<usize> {
        let free = !self.busy;
        (free != 0).then(|| free.trailing_zeros() as usize)
    }

    /// Step 2: hand `slot` to the worker. The slot contents must already be
    /// written. Release (the JS side uses SeqCst): the slot's contents
    /// happen-before the worker's acquire load that sees the bit.
    pub fn publish(&mut self, req_word: &AtomicU32, slot: usize) {
        let bit = 1u32 << slot;
        debug_assert_eq!(self.busy & bit, 0, "slot {slot} handed out twice");
        self.busy |= bit;
        self.req ^= bit;
        req_word.store(self.req, Ordering::Release);
    }

    /// Step 6: the slots whose responses are ready. Acquire pairs with the
    /// worker's release store of `RES`, so the responses' contents are
    /// visible. The returned slots are free again once the caller has read
    /// them (they are cleared from `busy` here).
    pub fn take_finished(&mut self, res_word: &AtomicU32) -> u32 {
        let res = res_word.load(Ordering::Acquire);
        let finished = res ^ self.seen_res;
        debug_assert_eq!(
            finished & !self.busy,
            0,
            "response for a slot never handed out"
        );
        self.seen_res = res;
        self.busy &= !finished;
        finished
    }

    pub fn in_flight(&self) -> u32 {
        self.busy.count_ones()
    }
}

/// The worker's side of one lane.
#[derive(Debug, Default)]
pub struct WorkerLane {
    res: u32,
    started: u32,
}

impl WorkerLane {
    /// Step 3: requests not yet started. Acquire pairs with the host's
    /// release store of `REQ`. They are marked started.
    pub fn take_new(&mut self, req_word: &AtomicU32) -> u32 {
        let req = req_word.load(Ordering::Acquire);
        let new = (req ^ self.res) & !self.started;
        self.started |= new;
        new
    }

    /// Step 4 for a set of finished slots at once (one store publishes them
    /// all). Release: the responses' contents happen-before the host's
    /// acquire load that sees the bits.
    pub fn publish(&mut self, res_word: &AtomicU32, finished: u32) {
        debug_assert_eq!(
            finished & !self.started,
            0,
            "answering a slot never started"
        );
        self.started &= !finished;
        self.res ^= finished;
        res_word.store(self.res, Ordering::Release);
    }
}

/// Iterates the set bits of a mask, lowest first.
pub fn bits(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let slot = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            slot
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    /// One lane's shared state for the tests: the two words and, per slot,
    /// a "request" and a "response" cell standing in for the slot bytes.
    struct Shared {
        req: AtomicU32,
        res: AtomicU32,
        request: Vec<AtomicU64>,
        response: Vec<AtomicU64>,
    }

    fn shared() -> Arc<Shared> {
        Arc::new(Shared {
            req: AtomicU32::new(0),
            res: AtomicU32::new(0),
            request: (0..SLOT_COUNT).map(|_| AtomicU64::new(0)).collect(),
            response: (0..SLOT_COUNT).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    #[test]
    fn bits_lists_each_set_bit_once() {
        assert_eq!(bits(0).count(), 0);
        assert_eq!(bits(0b1011).collect::<Vec<_>>(), vec![0, 1, 3]);
        assert_eq!(bits(ALL_SLOTS).count(), 32);
    }

    #[test]
    fn single_threaded_round_trip_frees_the_slot() {
        let s = shared();
        let mut host = HostLane::default();
        let mut worker = WorkerLane::default();
        let slot = host.free_slot().unwrap();
        host.publish(&s.req, slot);
        assert_eq!(host.in_flight(), 1);
        assert_eq!(worker.take_new(&s.req), 1 << slot);
        assert_eq!(
            worker.take_new(&s.req),
            0,
            "a started request is not handed out again"
        );
        assert_eq!(host.take_finished(&s.res), 0, "nothing finished yet");
        worker.publish(&s.res, 1 << slot);
        assert_eq!(host.take_finished(&s.res), 1 << slot);
        assert_eq!(host.take_finished(&s.res), 0, "a response is consumed once");
        assert_eq!(host.in_flight(), 0);
        // The same slot can be reused and is seen as new by the worker.
        host.publish(&s.req, slot);
        assert_eq!(worker.take_new(&s.req), 1 << slot);
    }

    /// Host and worker on two threads; every call carries a unique number and
    /// the worker answers `n * 2 + 1`. Each call must come back exactly once
    /// with its own answer, with the worker finishing slots out of order.
    #[test]
    fn threads_exchange_calls_exactly_once() {
        const CALLS: u64 = 200_000;
        let s = shared();
        let worker_side = Arc::clone(&s);
        let worker = std::thread::spawn(move || {
            let mut lane = WorkerLane::default();
            let mut held: Vec<usize> = Vec::new();
            let mut answered = 0u64;
            while answered < CALLS {
                held.extend(bits(lane.take_new(&worker_side.req)));
                // Answer in reverse order of arrival, a few at a time.
                let mut finished = 0u32;
                for _ in 0..3 {
                    let Some(slot) = held.pop() else { break };
                    let n = worker_side.request[slot].load(Ordering::Relaxed);
                    worker_side.response[slot].store(n * 2 + 1, Ordering::Relaxed);
                    finished |= 1 << slot;
                    answered += 1;
                }
                if finished != 0 {
                    lane.publish(&worker_side.res, finished);
                } else {
                    std::hint::spin_loop();
                }
            }
        });

        let mut host = HostLane::default();
        let mut slot_call = [u64::MAX; SLOT_COUNT];
        let mut seen = vec![false; CALLS as usize];
        let (mut sent, mut settled) = (0u64, 0u64);
        while settled < CALLS {
            while sent < CALLS {
                let Some(slot) = host.free_slot() else { break };
                s.request[slot].store(sent, Ordering::Relaxed);
                slot_call[slot] = sent;
                host.publish(&s.req, slot);
                sent += 1;
            }
            for slot in bits(host.take_finished(&s.res)) {
                let call = slot_call[slot];
                assert_eq!(s.response[slot].load(Ordering::Relaxed), call * 2 + 1);
                assert!(!seen[call as usize], "call {call} settled twice");
                seen[call as usize] = true;
                slot_call[slot] = u64::MAX;
                settled += 1;
            }
        }
        worker.join().unwrap();
        assert!(seen.iter().all(|&s| s), "every call settled");
        assert_eq!(host.in_flight(), 0);
    }
}
