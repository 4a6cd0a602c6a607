//! A process worker's way to sleep without blocking its event loop.
//!
//! A thread worker parks with `Atomics.waitAsync` on its lane's REQ word. A
//! process worker cannot: its memory is a cross-process mapping that JS sees
//! as a non-shared ArrayBuffer (`futex.rs`). So it hands the word and the
//! value it last saw to this Rust thread, which sleeps on the *shared* futex
//! until the word moves off that value (the host's `FUTEX_WAKE` after its
//! store, or the store itself seen on a re-check) and then calls `on_moved`
//! (in napi glue: a ThreadsafeFunction that runs the serve loop on the JS
//! thread). The event loop keeps running meanwhile: async tasks, timers and
//! the IPC channel all make progress while the worker is parked.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::Sender;

use crate::futex::{wait_shared, wake_shared};
use crate::process::mapping::Mapping;

/// Upper bound of one futex sleep. A `stop` that lands between the thread's
/// check of the stop flag and its `FUTEX_WAIT` is not woken by the wake that
/// precedes that wait (the word did not move); this bounds how late it is
/// seen. Only a stop pays it, and only on that race.
const STOP_CHECK: Duration = Duration::from_millis(250);

pub struct WordWaiter {
    mapping: Arc<Mapping>,
    requests: Option<Sender<(usize, u32)>>,
    stop: Arc<AtomicBool>,
    /// Word the thread sleeps on (`NOT_PARKED` when none), for `stop`'s wake.
    parked: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

const NOT_PARKED: usize = usize::MAX;

impl WordWaiter {
    /// Starts the thread. `on_moved` runs on it, once per `park`, after the
    /// word moved; it must not block.
    pub fn start<F>(mapping: Arc<Mapping>, mut on_moved: F) -> std::io::Result<Self>
    where
        F: FnMut() + Send + 'static,
    {
        let (tx, rx) = crossbeam_channel::unbounded::<(usize, u32)>();
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let parked = Arc::new(AtomicUsize::new(NOT_PARKED));
        let thread_parked = Arc::clone(&parked);
        let memory = Arc::clone(&mapping);
        let thread = std::thread::Builder::new()
            .name("knitting-park".into())
            .spawn(move || {
                for (index, value) in rx {
                    // Checked by `park`.
                    let word = memory.memory().word(index).expect("word checked by park");
                    // SeqCst, with `stop`'s store and load: either `stop`
                    // sees this index and wakes it, or the check below sees
                    // the stop flag.
                    thread_parked.store(index, Ordering::SeqCst);
                    loop {
                        if thread_stop.load(Ordering::SeqCst) {
                            return;
                        }
                        // SeqCst, as the JS side's Atomics: a store the host
                        // made before its wake is seen here or wakes us.
                        if word.load(Ordering::SeqCst) != value {
                            break;
                        }
                        wait_shared(word, value, Some(STOP_CHECK));
                    }
                    thread_parked.store(NOT_PARKED, Ordering::SeqCst);
                    on_moved();
                }
            })?;
        Ok(Self {
            mapping,
            requests: Some(tx),
            stop,
            parked,
            thread: Some(thread),
        })
    }

    /// Sleeps (on the waiter thread) until word `index` of the mapping no
    /// longer holds `value`, then calls `on_moved`. The caller snapshots
    /// `value` before calling, so a store made in between is not lost.
    pub fn park(&self, index: usize, value: u32) -> Result<(), String> {
        if self.mapping.memory().word(index).is_none() {
            return Err(format!("word {index} is outside the shared memory"));
        }
        let tx = self.requests.as_ref().ok_or("the waiter is stopped")?;
        tx.send((index, value))
            .map_err(|_| "the waiter thread has ended".to_string())
    }

    /// Stops and joins the thread. Idempotent.
    pub fn stop(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        self.stop.store(true, Ordering::SeqCst);
        self.requests = None; // ends the thread's `for` if it is not parked
        let index = self.parked.load(Ordering::SeqCst);
        if index != NOT_PARKED {
            let _ = wake_word(&self.mapping, index, u32::MAX);
        }
        // A panic in `on_moved` has nothing left to clean up.
        let _ = thread.join();
    }
}

impl Drop for WordWaiter {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Wakes every waiter on word `index` of `mapping`, in every process.
pub fn wake_word(mapping: &Mapping, index: usize, count: u32) -> Result<usize, String> {
    let word = mapping
        .memory()
        .word(index)
        .ok_or_else(|| format!("word {index} is outside the shared memory"))?;
    Ok(wake_shared(word, count))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::mapping::create_memfd;
    use std::os::fd::AsFd;
    use std::sync::mpsc;

    fn mapping() -> Arc<Mapping> {
        let fd = create_memfd(4096).unwrap();
        Arc::new(Mapping::map(fd.as_fd(), 4096).unwrap())
    }

    #[test]
    fn calls_back_once_the_word_moves() {
        let map = mapping();
        let (tx, rx) = mpsc::channel();
        let mut waiter = WordWaiter::start(Arc::clone(&map), move || tx.send(()).unwrap()).unwrap();
        waiter.park(5, 0).unwrap();
        assert!(
            rx.recv_timeout(Duration::from_millis(50)).is_err(),
            "word unchanged: still parked"
        );
        map.memory().word(5).unwrap().store(1, Ordering::SeqCst);
        wake_word(&map, 5, 1).unwrap();
        rx.recv_timeout(Duration::from_secs(5))
            .expect("moved word calls back");
        // A word that already moved calls back at once.
        waiter.park(5, 0).unwrap();
        rx.recv_timeout(Duration::from_secs(5))
            .expect("already moved");
        assert!(waiter.park(1 << 20, 0).is_err());
        waiter.stop();
        assert!(waiter.park(5, 1).is_err());
    }

    #[test]
    fn stop_ends_a_parked_waiter() {
        let map = mapping();
        let mut waiter = WordWaiter::start(Arc::clone(&map), || panic!("never moved")).unwrap();
        waiter.park(0, 0).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        waiter.stop();
        waiter.stop();
    }
}
