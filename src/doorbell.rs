//! The doorbell: how a worker wakes an idle host without a syscall per call.
//!
//! Three words on their own cache line of the control region (`layout.rs`):
//! - `COUNTER`: every worker adds 1 after publishing responses (`announce`
//!   in `lib/protocol/doorbell.js`, from `flush` in `lib/protocol/lane.js` and `lib/protocol/steal.js`).
//! - `ARMED`: the host stores 1 when it has calls in flight and nothing left
//!   to drain; the waiter thread clears it when it rings the host.
//! - `STOP`: set once, when the pool shuts down.
//!
//! Worker, after publishing (a lane's `Atomics.store(RES)`; a steal worker's
//! DONE stores and `Atomics.add(DONE_SEQ, 1)`): `Atomics.add(COUNTER, 1)`,
//! then `if (Atomics.load(ARMED)) bell.ring()`. Only a worker that finds the
//! host armed crosses into Rust and makes the `FUTEX_WAKE` syscall; while the
//! host is busy draining, publishing costs two atomics and nothing else.
//!
//! Host, going idle (`drain` in `lib/host/loop.js`, `arm` in `lib/protocol/doorbell.js`): it read `c0 = COUNTER`
//! *before* scanning the workers' answers, so every publication counted up
//! to `c0` has been seen. It stores `ARMED = 1`, then loads `COUNTER` again:
//! if it moved past `c0`, something was published in between, so it disarms
//! and drains at once instead of waiting. Host
//! (store ARMED, load COUNTER) and worker (add COUNTER, load ARMED) are both
//! sequentially consistent, so at least one sees the other: either the host's
//! re-check sees the new count, or the worker sees `ARMED` and rings. A
//! publication can therefore not fall between arming and waiting.
//!
//! The waiter thread (`dispatcher.rs`) blocks in `futex_wait(COUNTER, last)`
//! where `last` is the count it last observed, so a count that moved before
//! it blocked returns at once; it was snapshotted before the thread started,
//! so a ring that lands before the thread runs is not lost either. On a wake
//! with a new count it clears `ARMED` (so further publications do not ring)
//! and tells the host to drain.
//!
//! Task code can write these words (they are in memory it can reach), so
//! the waiter trusts none of them for its own life: whether it stops is a
//! flag in this process (`stopping`), and it never sleeps longer than
//! [`STOP_CHECK`] without looking at that flag. A forged `STOP` or a
//! `COUNTER` moved back under it cannot keep `stop()` from joining it; a
//! forged `ARMED` costs the host a spurious drain at most.
//!
//! Thread workers share this address space: the doorbell uses the private
//! futex (`atomic-wait`). When the region is a cross-process mapping
//! (process workers), it uses the shared one; `futex::Scope` decides, from
//! where the memory lives, once per `Doorbell`.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::futex::Scope;
use crate::memory::layout::word;
use crate::memory::region::SharedMemory;

/// What a ring-wait ended with.
#[derive(Debug, PartialEq, Eq)]
pub enum Wake {
    /// The host was armed and the count moved: drain now.
    Ring,
    /// `STOP` was set.
    Stop,
}

/// Longest single sleep of the waiter: a stop whose wake was lost (task
/// code moved `COUNTER` back to the value the waiter sleeps on) is seen
/// this late at worst. Only such a stop pays it.
pub const STOP_CHECK: Duration = Duration::from_millis(250);

/// The doorbell words of one control region.
#[derive(Debug, Clone)]
pub struct Doorbell {
    memory: Arc<SharedMemory>,
    scope: Scope,
    /// Set by `stop()`, in this process: the waiter's real stop signal.
    stopping: Arc<AtomicBool>,
}

impl Doorbell {
    pub fn new(memory: Arc<SharedMemory>) -> Result<Self, String> {
        if memory.word(word::STOP).is_none() {
            return Err(format!(
                "region of {} bytes has no doorbell line",
                memory.len()
            ));
        }
        let scope = Scope::of(memory.base());
        Ok(Self {
            memory,
            scope,
            stopping: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Which futex this doorbell waits and wakes on.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    fn word(&self, index: usize) -> &AtomicU32 {
        // Checked in `new`: STOP is the highest doorbell word.
        self.memory
            .word(index)
            .expect("doorbell words checked in Doorbell::new")
    }

    pub fn counter(&self) -> u32 {
        self.word(word::COUNTER).load(Ordering::SeqCst)
    }

    /// Worker side: wake the waiter. Called only after the worker has added
    /// to `COUNTER` and seen `ARMED`.
    pub fn ring(&self) {
        self.scope.wake_all(self.word(word::COUNTER));
    }

    /// Worker side, the whole step in one call (used by Rust tests and by
    /// callers that are already in Rust).
    pub fn publish(&self) {
        // SeqCst: the add must precede the load of ARMED in the single total
        // order that the host's (store ARMED, load COUNTER) also lives in.
        self.word(word::COUNTER).fetch_add(1, Ordering::SeqCst);
        if self.word(word::ARMED).load(Ordering::SeqCst) != 0 {
            self.ring();
        }
    }

    /// Host side, going idle (the JS host does the same with `Atomics`).
    /// Returns `false` when the count already moved past `seen`: drain now.
    pub fn arm(&self, seen: u32) -> bool {
        self.word(word::ARMED).store(1, Ordering::SeqCst);
        if self.counter() != seen {
            self.word(word::ARMED).store(0, Ordering::SeqCst);
            return false;
        }
        true
    }

    pub fn stop(&self) {
        // SeqCst store, then move COUNTER, then a wake. The waiter re-reads
        // STOP after every return from futex_wait; moving the word it waits
        // on also covers a stop that lands after its STOP check and before
        // it blocks: futex_wait then finds the value changed and returns at
        // once, where a wake alone would have found no waiter yet and the
        // waiter would sleep until the next publication (a join that hangs).
        // SeqCst, as the STOP store: the waiter's SeqCst load of `stopping`
        // after its wake sees it.
        self.stopping.store(true, Ordering::SeqCst);
        self.word(word::STOP).store(1, Ordering::SeqCst);
        self.word(word::COUNTER).fetch_add(1, Ordering::SeqCst);
        self.scope.wake_all(self.word(word::COUNTER));
    }

    /// Whether `stop()` was called on this doorbell (or a clone of it). The
    /// shared `STOP` word is written for observers but not trusted here.
    pub fn stopped(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Waiter side: block until the host is armed and a publication has
    /// been counted since `last`, or until stop. Updates `last`.
    pub fn wait(&self, last: &mut u32) -> Wake {
        let counter = self.word(word::COUNTER);
        let armed = self.word(word::ARMED);
        loop {
            if self.stopped() {
                return Wake::Stop;
            }
            let now = counter.load(Ordering::SeqCst);
            if now != *last {
                *last = now;
                // Only the waiter clears ARMED from 1, and only the host sets
                // it; the swap makes one ring per arming.
                if armed.swap(0, Ordering::SeqCst) == 1 {
                    return Wake::Ring;
                }
                // Counted while the host was busy: it drains those itself.
                continue;
            }
            // Bounded: see STOP_CHECK.
            self.scope.wait_timeout(counter, now, STOP_CHECK);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::layout::region_bytes;
    use std::time::Duration;

    fn region() -> (Vec<u64>, Arc<SharedMemory>) {
        let len = region_bytes(1, 0).unwrap();
        let mut buf = vec![0u64; len / 8];
        // SAFETY: the Vec is returned with the memory and outlives its use in
        // each test (dropped last); u64 storage is 8-aligned.
        let mem = unsafe { SharedMemory::new(buf.as_mut_ptr().cast(), len) }.unwrap();
        (buf, Arc::new(mem))
    }

    #[test]
    fn arm_refuses_when_count_moved() {
        let (_buf, mem) = region();
        let bell = Doorbell::new(mem).unwrap();
        assert_eq!(
            bell.scope(),
            Scope::Private,
            "heap memory: thread pools' futex"
        );
        let seen = bell.counter();
        bell.publish();
        assert!(
            !bell.arm(seen),
            "a publication since `seen` means drain now"
        );
        assert!(bell.arm(bell.counter()));
    }

    #[test]
    fn publication_while_unarmed_does_not_wake_but_is_not_lost() {
        let (_buf, mem) = region();
        let bell = Doorbell::new(mem).unwrap();
        let mut last = bell.counter();
        bell.publish(); // host busy: no ring
        let waiter_bell = bell.clone();
        let waiter = std::thread::spawn(move || waiter_bell.wait(&mut last));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "unarmed publication must not ring");
        // Host goes idle having seen everything, arms, then a worker publishes.
        assert!(bell.arm(bell.counter()));
        bell.publish();
        assert_eq!(waiter.join().unwrap(), Wake::Ring);
    }

    /// A waiter that checked STOP just before `stop()` then blocks on
    /// COUNTER with the value it read: `stop()` must move COUNTER so that
    /// this futex wait returns at once (a wake alone finds no waiter yet).
    #[test]
    fn stop_moves_the_word_a_late_waiter_blocks_on() {
        let (_buf, mem) = region();
        let bell = Doorbell::new(mem).unwrap();
        let read_before_stop = bell.counter();
        bell.stop();
        assert_ne!(bell.counter(), read_before_stop);
        let mut last = read_before_stop;
        assert_eq!(bell.wait(&mut last), Wake::Stop);
    }

    #[test]
    fn forged_words_cannot_stop_or_keep_the_waiter() {
        let (_buf, mem) = region();
        let bell = Doorbell::new(Arc::clone(&mem)).unwrap();
        // A forged STOP does not end the waiter: only stop() does.
        mem.word(word::STOP).unwrap().store(1, Ordering::SeqCst);
        let mut last = bell.counter();
        let waiter_bell = bell.clone();
        let waiter = std::thread::spawn(move || waiter_bell.wait(&mut last));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "a forged STOP stopped the waiter");
        // stop() while COUNTER is moved back to the value the waiter sleeps
        // on (its wake is lost): the waiter still ends, within STOP_CHECK.
        let counter = mem.word(word::COUNTER).unwrap();
        let before = counter.load(Ordering::SeqCst);
        bell.stop();
        counter.store(before, Ordering::SeqCst);
        assert_eq!(waiter.join().unwrap(), Wake::Stop);
    }

    #[test]
    fn stop_wakes_the_waiter() {
        let (_buf, mem) = region();
        let bell = Doorbell::new(mem).unwrap();
        let mut last = bell.counter();
        let waiter_bell = bell.clone();
        let waiter = std::thread::spawn(move || waiter_bell.wait(&mut last));
        std::thread::sleep(Duration::from_millis(20));
        bell.stop();
        assert_eq!(waiter.join().unwrap(), Wake::Stop);
    }

    /// Many publishers, a host that arms whenever it has drained: every
    /// publication is eventually observed and no wake-up is lost (the test
    /// would hang otherwise).
    #[test]
    fn no_lost_wakeups_under_contention() {
        const PER_WORKER: u32 = 20_000;
        let (_buf, mem) = region();
        let bell = Doorbell::new(mem).unwrap();
        let mut last = bell.counter();
        let workers: Vec<_> = (0..3)
            .map(|_| {
                let b = bell.clone();
                std::thread::spawn(move || {
                    for i in 0..PER_WORKER {
                        b.publish();
                        if i % 64 == 0 {
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        let total = 3 * PER_WORKER;
        let mut seen = 0;
        while seen != total {
            // Drain: the host reads the count, then arms against it.
            let c0 = bell.counter();
            seen = c0;
            if seen == total {
                break;
            }
            if bell.arm(c0) {
                assert_eq!(bell.wait(&mut last), Wake::Ring);
            }
        }
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(bell.counter(), total);
    }
}
