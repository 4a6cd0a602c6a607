//! Waiting on and waking a 32-bit word, in the scope the memory calls for.
//!
//! `atomic-wait` (used for thread pools) issues `FUTEX_WAIT_PRIVATE` /
//! `FUTEX_WAKE_PRIVATE`. The kernel keys a private futex by (address space,
//! virtual address), so a waker in another process, whose address space and
//! mapping address differ, never finds the waiter. A word in a mapping that
//! several processes share (memfd or `shm_open`, see `process/`) must use the
//! *shared* futex: plain `FUTEX_WAIT` / `FUTEX_WAKE`, which the kernel keys
//! by (file, page offset) and so matches across processes whatever address
//! each maps the region at. libc offers no wrapper for `futex(2)`, hence
//! the raw syscalls below.
//!
//! JS cannot help here: V8 sees such a mapping as an external, non-shared
//! ArrayBuffer, on which `Atomics.wait` throws and `Atomics.notify` wakes
//! nobody (measured on Node 20 and 24, 2 vCPUs, 2026-11). So every wait and
//! wake on a cross-process word goes through this file.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Which futex a word's waiters and wakers must use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Memory of this process only (a `SharedArrayBuffer`): the private
    /// futex, cheaper for the kernel to look up.
    Private,
    /// A mapping shared with other processes: the shared futex.
    Shared,
}

impl Scope {
    /// The scope of the memory at `addr`: shared when it lies in a
    /// cross-process mapping this process made (`process::mapping`).
    pub fn of(addr: *const u8) -> Scope {
        #[cfg(target_os = "linux")]
        if crate::process::mapping::is_cross_process(addr) {
            return Scope::Shared;
        }
        let _ = addr;
        Scope::Private
    }

    /// Blocks while `word` holds `expected`, for at most `timeout` (or
    /// until a spurious wake). Every wait on a word that task code can
    /// write needs an end: such a word may never move again.
    pub fn wait_timeout(self, word: &AtomicU32, expected: u32, timeout: Duration) -> WaitEnd {
        match self {
            Scope::Private => wait_private(word, expected, timeout),
            Scope::Shared => wait_shared(word, expected, Some(timeout)),
        }
    }

    pub fn wake_one(self, word: &AtomicU32) {
        match self {
            Scope::Private => atomic_wait::wake_one(word),
            Scope::Shared => {
                wake_shared(word, 1);
            }
        }
    }

    pub fn wake_all(self, word: &AtomicU32) {
        match self {
            Scope::Private => atomic_wait::wake_all(word),
            Scope::Shared => {
                wake_shared(word, i32::MAX as u32);
            }
        }
    }
}

/// How a shared wait ended.
#[derive(Debug, PartialEq, Eq)]
pub enum WaitEnd {
    /// Woken, interrupted, or the word did not hold `expected` to begin
    /// with: the caller re-reads the word either way.
    Returned,
    /// `timeout` passed with nobody waking it.
    TimedOut,
}

/// `futex(word, op, expected, timeout)` for a FUTEX_WAIT `op`.
#[cfg(target_os = "linux")]
fn futex_wait(
    word: &AtomicU32,
    expected: u32,
    op: libc::c_int,
    timeout: Option<Duration>,
) -> WaitEnd {
    let spec = timeout.map(|t| libc::timespec {
        // Saturates (past what time_t holds, about 68 years, is "forever");
        // time_t is not named: the libc crate deprecates it on musl.
        tv_sec: t.as_secs().try_into().unwrap_or(i32::MAX.into()),
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let spec_ptr = spec
        .as_ref()
        .map_or(std::ptr::null(), |s| s as *const libc::timespec);
    // SAFETY: `word` is a live, 4-byte aligned u32 for the whole call (the
    // borrow); FUTEX_WAIT only reads it, and reads `spec_ptr` (null or a
    // timespec on this stack frame, a *relative* timeout for FUTEX_WAIT).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            expected,
            spec_ptr,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ETIMEDOUT) {
        WaitEnd::TimedOut
    } else {
        // 0 (woken), EAGAIN (the word had already moved), EINTR (a signal):
        // all mean "look again".
        WaitEnd::Returned
    }
}

/// `FUTEX_WAIT_PRIVATE` on `word` while it holds `expected`, for at most
/// `timeout`: `atomic_wait::wait` without the unbounded sleep. The private
/// futex is what `atomic_wait::wake_*` wake, so the two mix.
#[cfg(target_os = "linux")]
fn wait_private(word: &AtomicU32, expected: u32, timeout: Duration) -> WaitEnd {
    futex_wait(
        word,
        expected,
        libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
        Some(timeout),
    )
}

/// `FUTEX_WAIT` (shared) on `word` while it holds `expected`, for at most
/// `timeout` (`None`: no limit).
#[cfg(target_os = "linux")]
pub fn wait_shared(word: &AtomicU32, expected: u32, timeout: Option<Duration>) -> WaitEnd {
    futex_wait(word, expected, libc::FUTEX_WAIT, timeout)
}

/// `FUTEX_WAKE` (shared): wakes up to `count` waiters on `word`, in any
/// process that maps the same memory; returns how many woke.
#[cfg(target_os = "linux")]
pub fn wake_shared(word: &AtomicU32, count: u32) -> usize {
    let count = count.min(i32::MAX as u32) as libc::c_int;
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE does not access it
    // at all beyond using its address as the key.
    let rc = unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, count) };
    usize::try_from(rc).unwrap_or(0)
}

// Other platforms have no cross-process mappings (`Scope::of` never returns
// `Shared` there); these keep `Scope` total.
#[cfg(not(target_os = "linux"))]
pub fn wait_shared(word: &AtomicU32, expected: u32, _timeout: Option<Duration>) -> WaitEnd {
    atomic_wait::wait(word, expected);
    WaitEnd::Returned
}

#[cfg(not(target_os = "linux"))]
fn wait_private(word: &AtomicU32, expected: u32, timeout: Duration) -> WaitEnd {
    // No timed wait in `atomic_wait`: poll, briefly.
    let end = std::time::Instant::now() + timeout;
    while word.load(std::sync::atomic::Ordering::Relaxed) == expected {
        if std::time::Instant::now() >= end {
            return WaitEnd::TimedOut;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    WaitEnd::Returned
}

#[cfg(not(target_os = "linux"))]
pub fn wake_shared(word: &AtomicU32, _count: u32) -> usize {
    atomic_wait::wake_all(word);
    0
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn wait_returns_at_once_when_the_word_moved() {
        let word = AtomicU32::new(1);
        assert_eq!(
            wait_shared(&word, 0, Some(Duration::from_secs(5))),
            WaitEnd::Returned
        );
    }

    #[test]
    fn wait_times_out() {
        let word = AtomicU32::new(0);
        let t0 = Instant::now();
        assert_eq!(
            wait_shared(&word, 0, Some(Duration::from_millis(20))),
            WaitEnd::TimedOut
        );
        assert!(t0.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn private_wait_times_out_and_is_woken_by_atomic_wait() {
        let word = Arc::new(AtomicU32::new(0));
        assert_eq!(
            Scope::Private.wait_timeout(&word, 0, Duration::from_millis(20)),
            WaitEnd::TimedOut
        );
        let w = Arc::clone(&word);
        let waiter = std::thread::spawn(move || {
            while w.load(Ordering::SeqCst) == 0 {
                Scope::Private.wait_timeout(&w, 0, Duration::from_secs(10));
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        word.store(1, Ordering::SeqCst);
        atomic_wait::wake_all(&*word);
        waiter.join().unwrap();
    }

    #[test]
    fn wake_reaches_a_waiter_in_this_process() {
        let word = Arc::new(AtomicU32::new(0));
        let w = Arc::clone(&word);
        let waiter = std::thread::spawn(move || {
            while w.load(Ordering::SeqCst) == 0 {
                wait_shared(&w, 0, Some(Duration::from_secs(10)));
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        word.store(1, Ordering::SeqCst);
        wake_shared(&word, 1);
        waiter.join().unwrap();
    }

    #[test]
    fn private_and_shared_futexes_do_not_meet() {
        // A thread parked on the private futex is not woken by a shared
        // wake on the same word (the kernel keys them differently), which
        // is why a cross-process word may never use the private one.
        let word = Arc::new(AtomicU32::new(0));
        let w = Arc::clone(&word);
        let waiter = std::thread::spawn(move || atomic_wait::wait(&w, 0));
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(wake_shared(&word, 1), 0, "no shared waiter on this word");
        // Moved first, so a waiter that had not parked yet returns at once.
        word.store(1, Ordering::SeqCst);
        atomic_wait::wake_one(&*word);
        waiter.join().unwrap();
    }
}
