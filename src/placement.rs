//! Keeping a spinning worker off the host's CPU.
//!
//! A caller that awaits one call at a time is fast only while the host and
//! the worker that spins for its next call each have a CPU: the host
//! publishes, the spinner sees it within a fraction of a µs, and the answer
//! is back within ~2 µs. When the scheduler puts both on one CPU (on a
//! 2-vCPU machine it does, and keeps them there for tens of ms, while the
//! other CPU idles: both look busy and cache-hot to its load balancer),
//! every call needs the two to take turns on that CPU, and a call costs
//! ~10 µs instead (docs/measurements.md, "Sequential latency").
//!
//! So the host notes the CPU it polls on while it polls (word `HOST_CPU`,
//! CPU + 1; 0 while it does not poll: then it may not be runnable), and a
//! worker about to spin that finds itself on that CPU moves
//! off it: it narrows its own affinity to the other CPUs it is allowed,
//! which migrates it at once, then restores its affinity, so the scheduler
//! stays free to place it anywhere later. Only where the platform tells a
//! thread its CPU and lets it set its own affinity (Linux); elsewhere
//! nothing happens.
//!
//! It moves only when some CPU is free: when no more threads are runnable
//! machine-wide than it may run on (`/proc/loadavg`), two of them (the
//! polling host and this worker) sharing a CPU leave another one idle. On a loaded machine the other CPUs run
//! other work, and a spinner moved there waits behind it for whole time
//! slices: calls took ms instead of ~10 µs in an A/B while the test suite
//! ran beside it. The word is written by the host and read by workers;
//! task code can write it too, which can at worst move a spinner needlessly
//! once per `INTERVAL`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Shortest time between two moves of one worker. A move costs two
/// affinity syscalls and a migration (tens of µs); if the scheduler keeps
/// putting the spinner back beside the host, at most one move per
/// interval: a few % of one idle worker's time at worst.
pub const INTERVAL: Duration = Duration::from_millis(1);

/// After a look that found no idle CPU, the next look waits this long:
/// reading `/proc/loadavg` costs ~10 µs, and on a loaded machine, where
/// the spinner shares the host's CPU for good, a look every ms put that
/// cost on one call in ~90 (sequential p99 34 against 19 µs, one A/B
/// beside a busy loop, 2026-12-03).
pub const NO_ROOM_WAIT: Duration = Duration::from_millis(16);

/// The CPU this thread runs on, where the platform says.
pub fn current_cpu() -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu takes no arguments and only returns a number.
        let cpu = unsafe { libc::sched_getcpu() };
        u32::try_from(cpu).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Moves the calling thread off CPU `cpu` if it may run elsewhere, then
/// gives it back the affinity it had. True when it ran on another CPU
/// after the move.
pub fn move_off(cpu: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        linux::move_off(cpu)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        false
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::mem::{size_of, zeroed};

    fn get() -> Option<libc::cpu_set_t> {
        // SAFETY: cpu_set_t is a plain bit array, valid when zeroed.
        let mut set: libc::cpu_set_t = unsafe { zeroed() };
        // SAFETY: pid 0 is the calling thread; `set` is a valid, writable
        // cpu_set_t of the size passed.
        let rc = unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) };
        (rc == 0).then_some(set)
    }

    fn set(set: &libc::cpu_set_t) -> bool {
        // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of
        // the size passed, only read.
        unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), set) == 0 }
    }

    /// How many CPUs the calling thread may run on.
    pub fn allowed_count() -> Option<usize> {
        let set = get()?;
        // SAFETY: CPU_COUNT reads the set.
        usize::try_from(unsafe { libc::CPU_COUNT(&set) }).ok()
    }

    pub fn move_off(cpu: u32) -> bool {
        let cpu = cpu as usize;
        let Some(allowed) = get() else { return false };
        if cpu >= libc::CPU_SETSIZE as usize {
            return false;
        }
        // SAFETY: CPU_ISSET and CPU_COUNT read the set; `cpu` is in range.
        let (on, count) = unsafe { (libc::CPU_ISSET(cpu, &allowed), libc::CPU_COUNT(&allowed)) };
        if !on || count < 2 {
            return false;
        }
        let mut elsewhere = allowed;
        // SAFETY: CPU_CLR writes one bit of our own copy; `cpu` is in range.
        unsafe { libc::CPU_CLR(cpu, &mut elsewhere) };
        if !set(&elsewhere) {
            return false;
        }
        // The kernel migrates a thread whose affinity excludes its CPU
        // before sched_setaffinity returns.
        let moved = super::current_cpu().is_some_and(|now| now as usize != cpu);
        // Back to what it was: failing that would pin the thread for good,
        // so try again once (a restore only widens, it cannot be refused
        // for want of CPUs).
        if !set(&allowed) {
            set(&allowed);
        }
        moved
    }
}

/// A worker's side: before it spins, moves off the host's CPU (at most
/// once per `INTERVAL`).
#[derive(Debug)]
pub struct Nudge {
    /// When it last looked, and whether it then moved.
    last: Option<(Instant, bool)>,
    interval: Duration,
    no_room_wait: Duration,
    /// Whether moving can help (`room_elsewhere`; tests stand in for it).
    room: fn() -> bool,
}

impl Default for Nudge {
    fn default() -> Self {
        Self {
            last: None,
            interval: INTERVAL,
            no_room_wait: NO_ROOM_WAIT,
            room: room_elsewhere,
        }
    }
}

impl Nudge {
    /// `host_cpu`: the `HOST_CPU` word (CPU + 1, 0 unknown; untrusted).
    /// True when it moved this thread.
    pub fn before_spin(&mut self, host_cpu: &AtomicU32) -> bool {
        // Relaxed: a hint; a stale value costs one spin beside the host.
        let host = host_cpu.load(Ordering::Relaxed);
        if host == 0 || current_cpu().map(|c| c.wrapping_add(1)) != Some(host) {
            return false;
        }
        if let Some((at, moved)) = self.last {
            let wait = if moved {
                self.interval
            } else {
                self.no_room_wait
            };
            if at.elapsed() < wait {
                return false;
            }
        }
        let moved = (self.room)() && move_off(host - 1);
        self.last = Some((Instant::now(), moved));
        moved
    }
}

/// Whether some CPU is likely idle: no more runnable threads machine-wide
/// than this thread may run on. False where that cannot be read.
pub fn room_elsewhere() -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(text) = std::fs::read_to_string("/proc/loadavg") else {
            return false;
        };
        match (runnable_in(&text), linux::allowed_count()) {
            (Some(runnable), Some(cpus)) => runnable <= cpus,
            _ => false,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// The runnable count of a `/proc/loadavg` line ("0.50 0.40 0.30 2/103 6042").
pub fn runnable_in(loadavg: &str) -> Option<usize> {
    let field = loadavg.split_whitespace().nth(3)?;
    field.split('/').next()?.parse().ok()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn allowed_count() -> i32 {
        let set = linux_get();
        // SAFETY: CPU_COUNT reads the set.
        unsafe { libc::CPU_COUNT(&set) }
    }

    fn linux_get() -> libc::cpu_set_t {
        // SAFETY: cpu_set_t is valid when zeroed; pid 0 is this thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            set
        }
    }

    fn same(a: &libc::cpu_set_t, b: &libc::cpu_set_t) -> bool {
        // SAFETY: CPU_EQUAL reads both sets.
        unsafe { libc::CPU_EQUAL(a, b) }
    }

    #[test]
    fn moves_off_the_cpu_and_restores_the_affinity() {
        std::thread::spawn(|| {
            let before = linux_get();
            let cpu = current_cpu().expect("Linux tells a thread its CPU");
            let moved = move_off(cpu);
            assert!(same(&before, &linux_get()), "the affinity is restored");
            assert_eq!(
                moved,
                allowed_count() >= 2,
                "moved exactly when another CPU is allowed"
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn no_move_without_room_elsewhere() {
        std::thread::spawn(|| {
            let word = AtomicU32::new(current_cpu().unwrap() + 1);
            let mut nudge = Nudge {
                room: || false,
                no_room_wait: Duration::from_secs(3600),
                ..Nudge::default()
            };
            assert!(!nudge.before_spin(&word));
            assert!(
                nudge.last.is_some_and(|(_, moved)| !moved),
                "looked, did not move"
            );
            // Room now, but within the no-room wait: no second look.
            nudge.room = || true;
            assert!(!nudge.before_spin(&word));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn reads_the_runnable_count_of_proc_loadavg() {
        assert_eq!(runnable_in("0.50 0.40 0.30 2/103 6042\n"), Some(2));
        assert_eq!(runnable_in("4.13 4.31 4.24 11/88 6074"), Some(11));
        assert_eq!(runnable_in("0.50 0.40"), None);
        assert_eq!(runnable_in("0.50 0.40 0.30 x/103 1"), None);
        let real = std::fs::read_to_string("/proc/loadavg").unwrap();
        assert!(
            runnable_in(&real).is_some_and(|n| n >= 1),
            "this thread runs: {real}"
        );
    }

    #[test]
    fn a_cpu_outside_the_set_or_out_of_range_moves_nothing() {
        std::thread::spawn(|| {
            let before = linux_get();
            assert!(!move_off(u32::MAX));
            assert!(!move_off(libc::CPU_SETSIZE as u32));
            assert!(same(&before, &linux_get()));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn nudge_moves_only_off_the_host_cpu_and_at_most_once_per_interval() {
        std::thread::spawn(|| {
            let word = AtomicU32::new(0);
            // An interval no test run outlasts: the second move is refused
            // however long the machine stalls this thread in between.
            let mut nudge = Nudge {
                last: None,
                interval: Duration::from_secs(3600),
                no_room_wait: Duration::from_secs(3600),
                room: || true,
            };
            assert!(!nudge.before_spin(&word), "host CPU unknown");
            let cpu = current_cpu().unwrap();
            // Another CPU than this one: nothing to do.
            word.store(cpu + 2, Ordering::Relaxed);
            assert!(!nudge.before_spin(&word));
            assert!(nudge.last.is_none());
            if allowed_count() < 2 {
                return;
            }
            word.store(current_cpu().unwrap() + 1, Ordering::Relaxed);
            assert!(nudge.before_spin(&word), "on the host's CPU: moved");
            // At once again, on the host's (new) CPU: within the interval, no move.
            word.store(current_cpu().unwrap() + 1, Ordering::Relaxed);
            assert!(!nudge.before_spin(&word));
        })
        .join()
        .unwrap();
    }
}
