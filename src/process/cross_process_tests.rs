//! Waits and wakes across a real process boundary. Each test maps a memfd,
//! then `fork()`s: the child keeps the `MAP_SHARED` mapping (at the same
//! address, but in another address space, which is what the private futex
//! keys on). After `fork` in this multi-threaded test binary the child may
//! only make async-signal-safe calls: it uses atomics and raw syscalls (no
//! allocation, no locks, no panics) and leaves with `_exit`.

use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use crate::dispatcher::Dispatcher;
use crate::doorbell::Doorbell;
use crate::futex::{wait_shared, wake_shared, Scope, WaitEnd};
use crate::memory::layout::region_bytes;
use crate::memory::region::SharedMemory;
use crate::process::mapping::{create_memfd, Mapping};
use crate::process::waiter::{wake_word, WordWaiter};

const WORD: usize = 0; // what the waiter sleeps on
const PARKING: usize = 1; // the child sets it just before it sleeps

fn shared_mapping(len: usize) -> Arc<Mapping> {
    let fd = create_memfd(len).unwrap();
    Arc::new(Mapping::map(fd.as_fd(), len).unwrap())
}

fn word(m: &Mapping, i: usize) -> &AtomicU32 {
    m.memory().word(i).unwrap()
}

/// Runs `child` in a forked process and returns its pid.
fn fork_child(child: impl FnOnce() -> i32) -> libc::pid_t {
    // SAFETY: the child runs only `child` (atomics and syscalls, see the
    // module comment) and then `_exit`s without unwinding or running
    // destructors; the parent continues normally.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = child();
        // SAFETY: ends the child at once, as required after fork.
        unsafe { libc::_exit(code) };
    }
    pid
}

/// The child's exit code (-1 if it did not exit normally).
fn exit_code(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    // SAFETY: waits for our own child; `status` is a valid out-pointer.
    let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(rc, pid);
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    }
}

fn wait_for(flag: &AtomicU32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while flag.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "child never got going");
        std::thread::yield_now();
    }
}

fn futex_private(
    word: &AtomicU32,
    op: libc::c_int,
    val: u32,
    timeout: *const libc::timespec,
) -> i64 {
    // SAFETY: `word` is live and aligned; `timeout` is null or points to a
    // live timespec.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op | libc::FUTEX_PRIVATE_FLAG,
            val,
            timeout,
        )
    }
}

#[test]
fn a_shared_wake_reaches_a_waiter_in_another_process() {
    let map = shared_mapping(4096);
    let child_map = Arc::clone(&map);
    let pid = fork_child(move || {
        word(&child_map, PARKING).store(1, Ordering::SeqCst);
        match wait_shared(word(&child_map, WORD), 0, Some(Duration::from_secs(20))) {
            WaitEnd::Returned => 0,
            WaitEnd::TimedOut => 3,
        }
    });
    wait_for(word(&map, PARKING));
    // The word never changes: only a wake that found the child's waiter can
    // end its wait early, and FUTEX_WAKE says how many it found.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut woken = 0;
    while woken == 0 && Instant::now() < deadline {
        woken = wake_shared(word(&map, WORD), 1);
        if woken == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    assert_eq!(woken, 1, "the kernel found the other process's waiter");
    assert_eq!(exit_code(pid), 0, "the child was woken, not timed out");
}

#[test]
fn a_private_wake_does_not_reach_another_process() {
    let map = shared_mapping(4096);
    let child_map = Arc::clone(&map);
    let pid = fork_child(move || {
        word(&child_map, PARKING).store(1, Ordering::SeqCst);
        let timeout = libc::timespec {
            tv_sec: 0,
            tv_nsec: 300_000_000,
        };
        let rc = futex_private(word(&child_map, WORD), libc::FUTEX_WAIT, 0, &timeout);
        // SAFETY: reads this thread's errno.
        let timed_out = rc == -1 && unsafe { *libc::__errno_location() } == libc::ETIMEDOUT;
        if timed_out {
            0
        } else {
            4
        }
    });
    wait_for(word(&map, PARKING));
    let deadline = Instant::now() + Duration::from_millis(200);
    while Instant::now() < deadline {
        let woken = futex_private(word(&map, WORD), libc::FUTEX_WAKE, 1, std::ptr::null());
        assert_eq!(woken, 0, "a private wake found a waiter in another process");
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(exit_code(pid), 0, "the child slept until its timeout");
}

#[test]
fn the_doorbell_rings_a_host_from_another_process() {
    let len = region_bytes(1, 0).unwrap();
    let map = shared_mapping(len);
    let memory = Arc::new(
        // SAFETY: the mapping outlives this test's every use of `memory`
        // (the dispatcher is stopped before `map` drops).
        unsafe { SharedMemory::new(map.base(), map.len()) }.unwrap(),
    );
    let bell = Doorbell::new(memory).unwrap();
    assert_eq!(bell.scope(), Scope::Shared);
    let (tx, rx) = mpsc::channel();
    let mut dispatcher = Dispatcher::start(bell.clone(), move || tx.send(()).unwrap()).unwrap();
    assert!(bell.arm(bell.counter()));
    let child_bell = bell.clone();
    let pid = fork_child(move || {
        child_bell.publish();
        0
    });
    assert_eq!(exit_code(pid), 0);
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the host's waiter was rung by the other process");
    dispatcher.stop();
}

#[test]
fn a_word_waiter_is_woken_by_another_process() {
    let map = shared_mapping(4096);
    let (tx, rx) = mpsc::channel();
    let mut waiter = WordWaiter::start(Arc::clone(&map), move || tx.send(()).unwrap()).unwrap();
    waiter.park(WORD, 0).unwrap();
    let child_map = Arc::clone(&map);
    let pid = fork_child(move || {
        word(&child_map, WORD).store(1, Ordering::SeqCst);
        match wake_word(&child_map, WORD, 1) {
            Ok(_) => 0,
            Err(_) => 5,
        }
    });
    assert_eq!(exit_code(pid), 0);
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the waiter saw the other process's store");
    waiter.stop();
}

#[test]
fn the_payload_lock_sleeps_and_wakes_across_processes() {
    use crate::memory::payload::Arena;
    const LEN: usize = 1 << 20;
    // Enough rounds that, with both processes running at once, one of them
    // finds the lock held by the other, spins out and sleeps (with the
    // private futex here, that sleeper is never woken and the test hangs).
    const ROUNDS: usize = 1_000_000;
    let map = shared_mapping(LEN);
    let go = shared_mapping(4096);
    // SAFETY: the mapping (LEN bytes, page-aligned) outlives both arenas;
    // the child's copy of it lives until its `_exit`.
    let arena = unsafe { Arena::init(map.base(), LEN, LEN) };
    let child_map = Arc::clone(&map);
    let child_go = Arc::clone(&go);
    let work = |arena: &Arena| -> bool {
        for i in 0..ROUNDS {
            match arena.alloc(16 + (i % 7) * 48) {
                Ok(offset) => {
                    if arena.free(offset).is_err() {
                        return false;
                    }
                }
                Err(_) => return false,
            }
        }
        true
    };
    let pid = fork_child(move || {
        word(&child_go, PARKING).store(1, Ordering::SeqCst);
        while word(&child_go, WORD).load(Ordering::SeqCst) == 0 {
            std::hint::spin_loop();
        }
        // SAFETY: as above; formatted by the parent before the fork.
        match unsafe { Arena::attach(child_map.base(), LEN, LEN) } {
            Ok(arena) if work(&arena) => 0,
            _ => 6,
        }
    });
    wait_for(word(&go, PARKING));
    word(&go, WORD).store(1, Ordering::SeqCst);
    assert!(work(&arena), "the parent's allocations failed");
    assert_eq!(exit_code(pid), 0, "the child's allocations failed or hung");
    arena.verify().unwrap();
    assert_eq!(arena.stats().live_blocks, 0);
}
