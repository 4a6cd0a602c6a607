//! Bounded, polite spinning before a blocking wait.
//!
//! These machines have 2 vCPUs and a pool of 2 workers plus the host: three
//! runnable threads on two cores. A pure busy-wait in JS is a disaster there
//! when the spinner shares its vCPU with the thread it waits for: the waited-
//! for thread cannot run until the spinner's time slice ends, so the spin
//! delays exactly the event it waits for (`npm run bench` showed sequential
//! p50 jumping between ~1 µs and ~40-60 µs from process to process with a JS
//! spin). Spinning here instead interleaves short bursts of polling with
//! `sched_yield`, which hands the CPU to any runnable thread on it at once
//! and costs ~1 µs when there is none.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Polls between yields: ~0.5 µs of `spin_loop` hints here.
const POLLS_PER_YIELD: u32 = 64;

/// Polls `done` until it returns true, for at most `budget`, yielding the
/// CPU between bursts of polls. Returns whether `done` became true.
fn spin_until(budget: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..POLLS_PER_YIELD {
            if done() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= budget {
            return false;
        }
        std::thread::yield_now();
    }
}

/// Polls `word` while it equals `current`, for at most `budget`. Returns
/// true when it changed (the caller then re-reads it with its own ordering).
pub fn spin_while_equal(word: &AtomicU32, current: u32, budget: Duration) -> bool {
    // Relaxed is enough to notice the change; the caller's own acquire load
    // (JS `Atomics.load`) orders what it reads after.
    spin_until(budget, || word.load(Ordering::Relaxed) != current)
}

/// Polls `words` while all of them are zero, for at most `budget` (a
/// stealing worker waiting for any PENDING bit). True when one was set.
pub fn spin_while_all_zero(words: &[&AtomicU32], budget: Duration) -> bool {
    // Relaxed, as above: the caller claims with its own atomics.
    spin_until(budget, || {
        words.iter().any(|w| w.load(Ordering::Relaxed) != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn returns_false_after_the_budget_when_nothing_changes() {
        let word = AtomicU32::new(5);
        let t0 = Instant::now();
        assert!(!spin_while_equal(&word, 5, Duration::from_millis(2)));
        assert!(t0.elapsed() >= Duration::from_millis(2));
    }

    #[test]
    fn returns_true_at_once_when_already_different() {
        let word = AtomicU32::new(6);
        assert!(spin_while_equal(&word, 5, Duration::from_secs(10)));
    }

    #[test]
    fn all_zero_spin_sees_any_word_set() {
        let words = [AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)];
        let refs: Vec<&AtomicU32> = words.iter().collect();
        assert!(!spin_while_all_zero(&refs, Duration::from_millis(1)));
        words[2].store(4, Ordering::Relaxed);
        assert!(spin_while_all_zero(&refs, Duration::from_secs(10)));
    }

    #[test]
    fn sees_a_change_made_by_another_thread() {
        let word = Arc::new(AtomicU32::new(0));
        let writer = Arc::clone(&word);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            writer.store(1, Ordering::Release);
        });
        assert!(spin_while_equal(&word, 0, Duration::from_secs(10)));
        t.join().unwrap();
    }
}
