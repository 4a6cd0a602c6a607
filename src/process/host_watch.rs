//! A worker process's watch on its host: the process ends the moment its
//! host is gone, whatever its JS thread is doing (a synchronous task holds
//! that thread for as long as it runs, so nothing in JS can notice in time).
//!
//! Two ways, both armed by [`watch`] at the worker's start:
//! - the kernel's parent-death signal (`PR_SET_PDEATHSIG`, SIGKILL) when the
//!   host is this process's parent and the worker has nothing to clean up:
//!   the kernel kills it as the host dies;
//! - a thread that sleeps in `poll` on a pidfd of the host, which becomes
//!   readable when the host exits: it marks the host gone ([`host_gone`]),
//!   removes the shm name the host may have left (the worker learns it from
//!   its environment at start, so a host killed at once still has its name
//!   removed) and ends the process with `_exit`. It covers a host that is not the parent
//!   (a command prefix that forks) and a worker that must unlink a name
//!   first (a SIGKILL would not let it).
//!
//! The JS serve loop checks [`host_gone`] before it starts each call, for
//! the few microseconds between the host's death and `_exit`.

use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Set once the host is known to be gone, never cleared.
static GONE: AtomicBool = AtomicBool::new(false);
/// Whether `watch` already ran (it arms once per process).
static ARMED: AtomicBool = AtomicBool::new(false);
/// The shm name to remove when the host dies before it unlinked it.
static CLEANUP: Mutex<Option<CString>> = Mutex::new(None);

/// How often the fallback watch (a kernel without `pidfd_open`, before
/// Linux 5.3) looks at the host. Only that fallback waits this long.
const FALLBACK_POLL: Duration = Duration::from_millis(20);

/// Whether the host is known to be gone.
pub fn host_gone() -> bool {
    // Acquire, paired with the Release in `end`: a caller that sees true
    // also sees the cleanup name as `end` left it (not needed for
    // correctness: only the flag itself is read).
    GONE.load(Ordering::Acquire)
}

/// The host is gone: mark it, remove the name it may have left, end the
/// process now. Never returns.
fn end() -> ! {
    // Release: see `host_gone`.
    GONE.store(true, Ordering::Release);
    let name = CLEANUP.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(name) = name {
        // SAFETY: a valid C string. A name already removed (by the host or
        // another worker) fails with ENOENT, which is fine.
        unsafe { libc::shm_unlink(name.as_ptr()) };
    }
    // SAFETY: `_exit` ends every thread of the process at once, without
    // running the runtime's exit handlers on this thread while its JS
    // thread is still running: nothing here relies on them.
    unsafe { libc::_exit(0) }
}

fn parent() -> u32 {
    // SAFETY: getppid has no preconditions and cannot fail.
    unsafe { libc::getppid() as u32 }
}

/// Whether process `pid` still exists (zombies count: the fallback only).
fn exists(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that `pid` exists.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Arms the watch on host process `host`. `cleanup`: the shm name to
/// remove if the host dies (it may die before it unlinked it). Without one
/// the kernel also SIGKILLs this process when its parent dies, if `host` is
/// the parent (with one it must not: the name would stay). Ends the process
/// at once if the host is already gone. Idempotent.
///
/// A host that died, and whose pid was reused, in the few milliseconds
/// between spawning this process and this call is not told from the new
/// process: the pidfd is opened on a pid, and a worker under a command
/// prefix that forks cannot tell the host by its parent pid.
pub fn watch(host: u32, cleanup: Option<&str>) -> io::Result<()> {
    let cleanup = match cleanup {
        Some(n) => Some(
            CString::new(n)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a name"))?,
        ),
        None => None,
    };
    if ARMED.swap(true, Ordering::AcqRel) {
        return Ok(());
    }
    let kill_with_parent = cleanup.is_none();
    *CLEANUP.lock().unwrap_or_else(|e| e.into_inner()) = cleanup;
    let direct = parent() == host;
    if kill_with_parent && direct {
        // SAFETY: PR_SET_PDEATHSIG takes a signal number; no pointers.
        if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // The kernel sends the signal only for a death after the prctl: a
        // host that died before has re-parented this process already.
        if parent() != host {
            end();
        }
    }
    // Opened after the check above: a host that dies from here on makes
    // the pidfd readable (a dead host not yet reaped is readable at once).
    // SAFETY: pidfd_open(pid, flags) takes two integers; a bad pid is an
    // error return, not undefined behaviour.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, host as libc::pid_t, 0) };
    let pidfd = if raw >= 0 {
        Some(raw as libc::c_int)
    } else {
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::ESRCH) => end(),
            // No pidfds on this kernel (or not allowed): the fallback.
            _ => None,
        }
    };
    let thread = std::thread::Builder::new().name("knitting-host-watch".into());
    match pidfd {
        Some(fd) => thread.spawn(move || {
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            loop {
                // SAFETY: one valid pollfd, for the length given.
                if unsafe { libc::poll(&mut pfd, 1, -1) } > 0 {
                    end();
                }
                // EINTR (a signal meant for the runtime): wait again.
            }
        })?,
        None => thread.spawn(move || loop {
            // Gone, or (when it was the parent) re-parented away from it:
            // a dead host its own parent has not reaped still "exists".
            if !exists(host) || (direct && parent() != host) {
                end();
            }
            std::thread::sleep(FALLBACK_POLL);
        })?,
    };
    Ok(())
}
