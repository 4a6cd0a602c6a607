//! Memory that several processes map: creating it (an anonymous memfd, or a
//! POSIX shared-memory object under an unguessable name), opening it in a
//! worker process, and the mapping itself (unmapped when the last `Arc` of it
//! drops, so Rust threads can hold it as long as they use it).
//!
//! Every live mapping is registered by address range: `futex::Scope::of`
//! asks here whether a word lives in memory other processes share, and so
//! whether waits and wakes on it must use the shared futex.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex, Weak};

use once_cell::sync::Lazy;

use crate::memory::region::SharedMemory;

/// Live cross-process mappings of this process: (start, end) addresses.
static MAPPINGS: Lazy<Mutex<Vec<(usize, usize)>>> = Lazy::new(|| Mutex::new(Vec::new()));

/// Whether `addr` lies in a live cross-process mapping.
pub fn is_cross_process(addr: *const u8) -> bool {
    let addr = addr as usize;
    let list = MAPPINGS.lock().unwrap_or_else(|e| e.into_inner());
    list.iter()
        .any(|&(start, end)| (start..end).contains(&addr))
}

/// Mappings handed out through [`share`], for [`holder_of`]. Weak: the
/// registry never keeps a mapping alive.
static SHARED: Lazy<Mutex<Vec<Weak<Mapping>>>> = Lazy::new(|| Mutex::new(Vec::new()));

/// Wraps a mapping in the `Arc` its holders share, and registers it so that
/// memory JS hands back (a view over one of its buffers) can be traced to
/// it ([`holder_of`]).
pub fn share(mapping: Mapping) -> Arc<Mapping> {
    let arc = Arc::new(mapping);
    let mut list = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    list.retain(|w| w.strong_count() > 0);
    list.push(Arc::downgrade(&arc));
    arc
}

/// The live shared mapping that contains all of `[addr, addr + len)`, if
/// any: whoever keeps the returned `Arc` keeps those bytes mapped, whatever
/// JS does with its buffers (a transfer or a collected buffer does not
/// unmap them).
pub fn holder_of(addr: *const u8, len: usize) -> Option<Arc<Mapping>> {
    let start = addr as usize;
    let end = start.checked_add(len)?;
    let list = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    list.iter().filter_map(Weak::upgrade).find(|m| {
        let base = m.base() as usize;
        start >= base && end <= base + m.len()
    })
}

/// Cross-process mappings this process holds right now (tests, stats).
pub fn live_mappings() -> usize {
    MAPPINGS.lock().unwrap_or_else(|e| e.into_inner()).len()
}

fn os_error(what: &str) -> io::Error {
    let err = io::Error::last_os_error();
    io::Error::new(err.kind(), format!("{what}: {err}"))
}

/// A `MAP_SHARED` mapping of a memory file. Unmapped on drop.
#[derive(Debug)]
pub struct Mapping {
    memory: SharedMemory,
}

impl Mapping {
    /// Maps `len` bytes of `fd` read-write and shared. The file must be at
    /// least `len` bytes long (checked: touching a page past its end would
    /// raise SIGBUS).
    pub fn map(fd: BorrowedFd<'_>, len: usize) -> io::Result<Mapping> {
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot map 0 bytes",
            ));
        }
        let size = file_len(fd)?;
        if size < len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("shared memory file has {size} bytes, {len} needed"),
            ));
        }
        // SAFETY: a fresh mapping chosen by the kernel (no fixed address), of
        // a file descriptor we borrow for the call; the result is checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(os_error("mmap"));
        }
        let base = base.cast::<u8>();
        // SAFETY: `len` mapped bytes at a page-aligned, non-null address,
        // unmapped only in `drop`, after every borrow of `memory` has ended.
        // (A page-aligned, non-null base cannot fail `new`'s checks.)
        let memory =
            unsafe { SharedMemory::new(base, len) }.expect("mmap returns page-aligned memory");
        let mut list = MAPPINGS.lock().unwrap_or_else(|e| e.into_inner());
        list.push((base as usize, base as usize + len));
        Ok(Mapping { memory })
    }

    /// Page-aligned start of the mapping.
    pub fn base(&self) -> *mut u8 {
        self.memory.base()
    }

    pub fn len(&self) -> usize {
        self.memory.len()
    }

    pub fn is_empty(&self) -> bool {
        self.memory.is_empty()
    }

    /// The mapping as `SharedMemory` (bounds-checked words).
    pub fn memory(&self) -> &SharedMemory {
        &self.memory
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Unregister first: once unmapped, the range may be reused by an
        // unrelated (private) allocation.
        {
            let mut list = MAPPINGS.lock().unwrap_or_else(|e| e.into_inner());
            let start = self.base() as usize;
            list.retain(|&(s, _)| s != start);
        }
        // SAFETY: exactly the range `map` obtained; nothing borrowed from it
        // outlives `self` (holders keep an `Arc<Mapping>`).
        unsafe { libc::munmap(self.base().cast(), self.len()) };
    }
}

/// Size in bytes of the file behind `fd`.
pub fn file_len(fd: BorrowedFd<'_>) -> io::Result<usize> {
    // SAFETY: `stat` is plain old data; fstat fills it or fails.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a borrowed, open descriptor and a valid out-pointer.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(os_error("fstat"));
    }
    usize::try_from(st.st_size).map_err(|_| io::Error::other("negative file size"))
}

/// `tmpfs` (`statfs(2)`): where memfds and `/dev/shm` objects live.
const TMPFS_MAGIC: libc::c_long = 0x0102_1994;

/// Checks, without taking it, that descriptor `fd` is what the host hands a
/// worker process: an open regular file on tmpfs (a memfd), sealed against
/// shrinking (so no process can cut the mapping short: a SIGBUS), of
/// exactly `len` bytes. Only then may the caller take ownership of it.
pub fn check_inherited(fd: libc::c_int, len: usize) -> Result<(), String> {
    // SAFETY: `stat` is plain old data; fstat fills it or fails (EBADF for
    // a closed number). No ownership is taken, nothing is closed.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: any descriptor number and a valid out-pointer.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(format!("fstat: {}", io::Error::last_os_error()));
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err("not a memory file".into());
    }
    // SAFETY: as for `stat`.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: an open descriptor (fstat succeeded) and a valid out-pointer.
    if unsafe { libc::fstatfs(fd, &mut fs) } != 0 {
        return Err(format!("fstatfs: {}", io::Error::last_os_error()));
    }
    if fs.f_type as libc::c_long != TMPFS_MAGIC {
        return Err("not a memfd or shm object".into());
    }
    // SAFETY: fcntl on an open descriptor; F_GET_SEALS only reads.
    let seals = unsafe { libc::fcntl(fd, libc::F_GET_SEALS) };
    if seals < 0 || seals & libc::F_SEAL_SHRINK == 0 {
        return Err("not a sealed memfd".into());
    }
    if usize::try_from(st.st_size).ok() != Some(len) {
        return Err(format!("{} bytes, {len} expected", st.st_size));
    }
    Ok(())
}

fn set_len(fd: &OwnedFd, len: usize) -> io::Result<()> {
    let len = libc::off_t::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "length too large"))?;
    // SAFETY: an open descriptor we own. Pages of a memfd or shm object are
    // allocated on first touch, so a large length costs nothing up front.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } != 0 {
        return Err(os_error("ftruncate"));
    }
    Ok(())
}

/// An anonymous shared-memory file of `len` bytes (`memfd_create`), sealed
/// against resizing so that no process can shrink it under another's
/// mapping (a SIGBUS there). Close-on-exec: a child gets it only through an
/// explicit inheritance (spawn's stdio array duplicates it without the flag).
pub fn create_memfd(len: usize) -> io::Result<OwnedFd> {
    let name = CString::new("knitting-native").expect("no NUL in a literal");
    // The system call, not glibc's wrapper: the wrapper exists from glibc
    // 2.27 only, and the Linux binaries are built against glibc 2.17 so that
    // they load on older systems (an unresolved wrapper fails the load).
    // SAFETY: a valid C string and flags; the result is checked.
    let raw = unsafe {
        libc::syscall(
            libc::SYS_memfd_create,
            name.as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if raw < 0 {
        return Err(os_error("memfd_create"));
    }
    let raw = libc::c_int::try_from(raw).map_err(|_| os_error("memfd_create"))?;
    // SAFETY: a descriptor the kernel just returned to us and nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    set_len(&fd, len)?;
    let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on a descriptor we own.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(os_error("fcntl(F_ADD_SEALS)"));
    }
    Ok(fd)
}

/// 128 random bits from the kernel as hex: a name suffix nobody can guess.
pub fn random_suffix() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        // The system call, not glibc's wrapper (glibc 2.25+), as in create_memfd.
        // SAFETY: writes at most the remaining bytes of `bytes`.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getrandom,
                bytes[filled..].as_mut_ptr(),
                bytes.len() - filled,
                0,
            )
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(os_error("getrandom"));
        }
        filled += n as usize;
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Longest name prefix accepted (a POSIX shm name is at most NAME_MAX = 255
/// bytes; the suffix takes 33).
pub const MAX_PREFIX: usize = 64;

/// Checks a caller's name prefix: 1..=64 of `[A-Za-z0-9._-]`, so that the
/// name is a single path component under /dev/shm.
pub fn check_prefix(prefix: &str) -> Result<(), String> {
    let ok = !prefix.is_empty()
        && prefix.len() <= MAX_PREFIX
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !prefix.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "name prefix must be 1 to {MAX_PREFIX} characters of A-Z a-z 0-9 . _ - \
             (not starting with .), got {prefix:?}"
        ))
    }
}

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a name"))
}

/// A shm name this process created; unlinked by `unlink` or on drop, so no
/// path out of a pool (shutdown, an error, a panic) leaves it in /dev/shm.
#[derive(Debug)]
pub struct NamedObject {
    name: Option<String>,
}

impl NamedObject {
    /// The name while it is still linked.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Removes the name now (the memory lives on while mapped). Idempotent.
    pub fn unlink(&mut self) -> io::Result<()> {
        match self.name.take() {
            Some(name) => unlink_named(&name),
            None => Ok(()),
        }
    }
}

impl Drop for NamedObject {
    fn drop(&mut self) {
        // Nothing to report to from a destructor; a name already removed by
        // someone else is the outcome wanted anyway.
        let _ = self.unlink();
    }
}

/// This process's pid namespace (the inode of `/proc/self/ns/pid`), so that
/// a pid in a name is only ever compared with pids of the same namespace.
fn pid_namespace() -> u64 {
    std::fs::metadata("/proc/self/ns/pid")
        .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
        .unwrap_or(0)
}

/// The parts of a name this module made: `/<prefix>-<pidns>-<pid>-<32 hex>`
/// for a valid `prefix`; `None` for any other name.
pub fn parse_name(name: &str) -> Option<(&str, u64, u32)> {
    let rest = name.strip_prefix('/')?;
    let mut parts = rest.rsplitn(4, '-');
    let random = parts.next()?;
    let pid = parts.next()?.parse::<u32>().ok()?;
    let ns = parts.next()?.parse::<u64>().ok()?;
    let prefix = parts.next()?;
    let hex = random.len() == 32 && random.bytes().all(|b| b.is_ascii_hexdigit());
    (hex && check_prefix(prefix).is_ok()).then_some((prefix, ns, pid))
}

/// Whether process `pid` (of this pid namespace) is gone.
fn process_gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Removes names with `prefix` left in `/dev/shm` by a creator that is gone
/// (killed before its workers mapped the memory, so nobody unlinked it):
/// only names of this module's form, of this pid namespace, owned by this
/// user, whose creator pid no longer exists. Returns how many it removed.
/// Best effort: an unreadable directory removes nothing.
pub fn sweep_stale(prefix: &str) -> usize {
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return 0;
    };
    let ns = pid_namespace();
    let me = std::process::id();
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let mut removed = 0;
    for entry in dir.flatten() {
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        let name = format!("/{file}");
        let Some((p, n, pid)) = parse_name(&name) else {
            continue;
        };
        if p != prefix || n != ns || pid == me || !process_gone(pid) {
            continue;
        }
        let owned = entry
            .metadata()
            .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == uid)
            .unwrap_or(false);
        if owned && unlink_named(&name).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// A new POSIX shared-memory object `/<prefix>-<pidns>-<pid>-<random>` of
/// `len` bytes, created exclusively (`O_EXCL`: never an existing object
/// someone planted) with mode 0600. Returns its name (unlinked on drop) and
/// descriptor. The creator's pid in the name lets a later start remove the
/// name if this process is killed before anyone unlinks it
/// ([`sweep_stale`], which runs first).
pub fn create_named(prefix: &str, len: usize) -> io::Result<(NamedObject, OwnedFd)> {
    check_prefix(prefix).map_err(|m| io::Error::new(io::ErrorKind::InvalidInput, m))?;
    sweep_stale(prefix);
    let name = format!(
        "/{prefix}-{}-{}-{}",
        pid_namespace(),
        std::process::id(),
        random_suffix()?
    );
    let c = c_name(&name)?;
    // SAFETY: a valid C string; the result is checked.
    let raw = unsafe {
        libc::shm_open(
            c.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
            0o600 as libc::mode_t,
        )
    };
    if raw < 0 {
        return Err(os_error(&format!("shm_open({name})")));
    }
    // SAFETY: a descriptor the kernel just returned to us.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let named = NamedObject { name: Some(name) };
    // On error `named` drops here and takes the name with it.
    set_len(&fd, len)?;
    Ok((named, fd))
}

/// Opens memory another process created: a POSIX shm name (`/name`), or a
/// path under `/proc` naming a descriptor of that process.
pub fn open_named(name: &str) -> io::Result<OwnedFd> {
    let c = c_name(name)?;
    let flags = libc::O_RDWR | libc::O_CLOEXEC;
    let raw = if name.starts_with("/proc/") {
        // SAFETY: a valid C string; the result is checked.
        unsafe { libc::open(c.as_ptr(), flags) }
    } else {
        // SAFETY: as above.
        unsafe { libc::shm_open(c.as_ptr(), flags, 0) }
    };
    if raw < 0 {
        return Err(os_error(&format!("open {name}")));
    }
    // SAFETY: a descriptor the kernel just returned to us.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Removes a shm name (the memory lives on while mapped or open).
pub fn unlink_named(name: &str) -> io::Result<()> {
    let c = c_name(name)?;
    // SAFETY: a valid C string.
    if unsafe { libc::shm_unlink(c.as_ptr()) } != 0 {
        return Err(os_error(&format!("shm_unlink({name})")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::path::Path;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn word(m: &Mapping, i: usize) -> &AtomicU32 {
        assert!((i + 1) * 4 <= m.len());
        // SAFETY: in bounds (checked), page-aligned base, lives as long as `m`.
        unsafe { &*(m.base().add(i * 4) as *const AtomicU32) }
    }

    #[test]
    fn memfd_mappings_share_bytes_and_register() {
        let fd = create_memfd(8192).unwrap();
        let a = Mapping::map(fd.as_fd(), 8192).unwrap();
        let b = Mapping::map(fd.as_fd(), 8192).unwrap();
        assert_ne!(a.base(), b.base());
        word(&a, 100).store(42, Ordering::SeqCst);
        assert_eq!(word(&b, 100).load(Ordering::SeqCst), 42);
        assert!(is_cross_process(a.base()));
        assert!(is_cross_process(b.base().wrapping_add(8191)));
        let heap = Box::new(0u32);
        assert!(!is_cross_process((&*heap as *const u32).cast()));
        let base = a.base();
        drop(a);
        // The range may be reused by `b` only if the kernel placed it there.
        if !(b.base() as usize..b.base() as usize + 8192).contains(&(base as usize)) {
            assert!(!is_cross_process(base));
        }
    }

    #[test]
    fn only_a_sealed_memfd_of_the_right_size_passes_as_inherited() {
        let fd = create_memfd(8192).unwrap();
        assert_eq!(check_inherited(fd.as_raw_fd(), 8192), Ok(()));
        assert!(check_inherited(fd.as_raw_fd(), 4096).is_err(), "wrong size");
        // An epoll descriptor (what libuv holds), a pipe, a closed number and
        // an unsealed shm object are refused, and stay open.
        // SAFETY: plain syscalls; results checked, descriptors closed below.
        let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        assert!(ep >= 0);
        assert!(check_inherited(ep, 8192).is_err());
        // SAFETY: F_GETFD only reads the descriptor flags.
        assert!(unsafe { libc::fcntl(ep, libc::F_GETFD) } >= 0, "left open");
        // SAFETY: ours, closed once.
        unsafe { libc::close(ep) };
        assert!(check_inherited(ep, 8192).is_err(), "closed number");
        let (_named, shm) = create_named("knt-test", 8192).unwrap();
        assert!(
            check_inherited(shm.as_raw_fd(), 8192).is_err(),
            "not sealed"
        );
    }

    #[test]
    fn memfd_is_sealed_and_longer_maps_are_refused() {
        let fd = create_memfd(4096).unwrap();
        // SAFETY: an open descriptor we own.
        let shrunk = unsafe { libc::ftruncate(fd.as_raw_fd(), 0) };
        assert_ne!(shrunk, 0, "shrink is sealed");
        assert!(Mapping::map(fd.as_fd(), 8192).is_err());
        assert!(Mapping::map(fd.as_fd(), 0).is_err());
    }

    #[test]
    fn named_create_open_unlink() {
        let (mut named, fd) = create_named("knt-test", 4096).unwrap();
        let name = named.name().unwrap().to_string();
        let file = format!("/dev/shm{name}");
        assert!(Path::new(&file).exists());
        // SAFETY: `stat` is plain data filled by the call.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let c = CString::new(file.clone()).unwrap();
        // SAFETY: valid C string and out-pointer.
        assert_eq!(unsafe { libc::stat(c.as_ptr(), &mut st) }, 0);
        assert_eq!(st.st_mode & 0o777, 0o600);
        let (prefix, ns, pid) = parse_name(&name).unwrap();
        assert_eq!(
            (prefix, ns, pid),
            ("knt-test", pid_namespace(), std::process::id())
        );

        let a = Mapping::map(fd.as_fd(), 4096).unwrap();
        let other = open_named(&name).unwrap();
        let b = Mapping::map(other.as_fd(), 4096).unwrap();
        word(&a, 3).store(7, Ordering::SeqCst);
        assert_eq!(word(&b, 3).load(Ordering::SeqCst), 7);

        named.unlink().unwrap();
        assert!(named.name().is_none());
        named.unlink().unwrap();
        assert!(
            !Path::new(&file).exists(),
            "unlinked name is gone from /dev/shm"
        );
        assert!(open_named(&name).is_err());
        // The memory outlives its name while mapped.
        word(&b, 3).store(8, Ordering::SeqCst);
        assert_eq!(word(&a, 3).load(Ordering::SeqCst), 8);
    }

    #[test]
    fn stale_names_of_dead_creators_are_swept() {
        // A name "created" by a process that is gone (a child that exited),
        // one by this live process, and one of another form.
        let child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        let mut child = child;
        child.wait().unwrap();
        let ns = pid_namespace();
        let prefix = format!("knt-sweep-{}", std::process::id());
        let stale = format!("/{prefix}-{ns}-{dead}-{}", random_suffix().unwrap());
        let other = format!("/{prefix}-x-{dead}-{}", random_suffix().unwrap());
        for name in [&stale, &other] {
            let c = c_name(name).unwrap();
            // SAFETY: a valid C string; the descriptor is closed at once.
            let fd = unsafe {
                libc::shm_open(
                    c.as_ptr(),
                    libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
                    0o600,
                )
            };
            assert!(fd >= 0);
            // SAFETY: ours.
            unsafe { libc::close(fd) };
        }
        let (live, _fd) = create_named(&prefix, 4096).unwrap();
        let exists = |n: &str| Path::new(&format!("/dev/shm{n}")).exists();
        assert!(!exists(&stale), "the dead creator's name was swept");
        assert!(exists(live.name().unwrap()), "a live creator's name stays");
        assert!(
            exists(&other),
            "a name of another form is not ours to remove"
        );
        assert_eq!(sweep_stale(&prefix), 0);
        unlink_named(&other).unwrap();
    }

    #[test]
    fn names_are_exclusive_and_unguessable() {
        let (n1, _f1) = create_named("knt-test", 4096).unwrap();
        let (n2, _f2) = create_named("knt-test", 4096).unwrap();
        let (a, b) = (
            n1.name().unwrap().to_string(),
            n2.name().unwrap().to_string(),
        );
        assert_ne!(a, b);
        // O_EXCL: an existing name is never reused.
        let c = CString::new(a.clone()).unwrap();
        // SAFETY: a valid C string; the descriptor (if any) is closed below.
        let raw = unsafe {
            libc::shm_open(
                c.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
                0o600,
            )
        };
        assert!(raw < 0);
        drop(n1);
        drop(n2);
        assert!(
            !Path::new(&format!("/dev/shm{a}")).exists(),
            "dropped names leave /dev/shm"
        );
        assert!(!Path::new(&format!("/dev/shm{b}")).exists());
        assert!(check_prefix("a/b").is_err());
        assert!(check_prefix("").is_err());
        assert!(check_prefix(".hidden").is_err());
        assert!(check_prefix(&"x".repeat(MAX_PREFIX + 1)).is_err());
        assert!(check_prefix("my-app_1.0").is_ok());
    }

    #[test]
    fn proc_fd_path_reopens_memory_of_this_process() {
        let fd = create_memfd(4096).unwrap();
        let path = format!("/proc/{}/fd/{}", std::process::id(), fd.as_raw_fd());
        let other = open_named(&path).unwrap();
        let a = Mapping::map(fd.as_fd(), 4096).unwrap();
        let b = Mapping::map(other.as_fd(), 4096).unwrap();
        word(&a, 0).store(9, Ordering::SeqCst);
        assert_eq!(word(&b, 0).load(Ordering::SeqCst), 9);
    }
}
