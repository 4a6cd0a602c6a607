//! What JS calls for process workers (the rest of the addon is in
//! `bindings.rs`, whose functions and classes work unchanged over this
//! memory: they take `Uint8Array` views, and the futex they use follows
//! from where the memory lives, `futex::Scope::of`).
//!
//! JS sees a mapping through external ArrayBuffers (`buffer()`), each of
//! which holds an `Arc` of the mapping until V8 collects it; the mapping is
//! unmapped when the last holder (JS buffer, waiter thread, this object)
//! lets go.

use std::collections::HashSet;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

use once_cell::sync::Lazy;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi::Env;
use napi_derive::napi;

use super::host_watch;
use super::mapping::{self, Mapping, NamedObject};
use super::waiter::{wake_word, WordWaiter};

fn io_error(what: &str, err: std::io::Error) -> Error {
    Error::from_reason(format!("{what}: {err}"))
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(Status::InvalidArg, message.into())
}

fn byte_len(len: f64, what: &str) -> Result<usize> {
    if !(len.is_finite() && len >= 1.0 && len.fract() == 0.0 && len <= isize::MAX as f64) {
        return Err(invalid(format!(
            "{what} must be a positive whole number of bytes, got {len}"
        )));
    }
    Ok(len as usize)
}

/// Descriptors this process's `ProcessMemory` objects own (the host's).
/// `openFd` refuses them: taking one would close it twice.
static HOST_FDS: Lazy<Mutex<HashSet<i32>>> = Lazy::new(|| Mutex::new(HashSet::new()));

/// A descriptor a `ProcessMemory` owns, registered in `HOST_FDS` while open.
struct HostFd(OwnedFd);

impl HostFd {
    fn new(fd: OwnedFd) -> Self {
        let mut set = HOST_FDS.lock().unwrap_or_else(|e| e.into_inner());
        set.insert(fd.as_raw_fd());
        Self(fd)
    }
}

impl Drop for HostFd {
    fn drop(&mut self) {
        // Unregistered while still open: the number cannot have been
        // reused by then.
        let mut set = HOST_FDS.lock().unwrap_or_else(|e| e.into_inner());
        set.remove(&self.0.as_raw_fd());
    }
}

/// Memory shared with worker processes. The host creates it (`create`); a
/// worker opens it (`openFd` for an inherited descriptor, `openNamed` for a
/// name).
#[napi]
pub struct ProcessMemory {
    mapping: Arc<Mapping>,
    /// The host keeps the descriptor: replacement workers inherit it, or
    /// reopen it through `/proc/<pid>/fd/<n>` (`procPath`).
    fd: Option<HostFd>,
    named: Option<NamedObject>,
}

#[napi]
impl ProcessMemory {
    /// `mode`: "inherit" (an anonymous memfd) or "named" (a POSIX shm
    /// object `/<namePrefix>-<128 random bits>`, O_EXCL, mode 0600; call
    /// `unlink()` once every worker has opened it).
    #[napi(factory, catch_unwind)]
    pub fn create(len: f64, mode: String, name_prefix: Option<String>) -> Result<Self> {
        let len = byte_len(len, "shared memory length")?;
        let (fd, named) = match mode.as_str() {
            "inherit" => (
                mapping::create_memfd(len).map_err(|e| io_error("memfd_create", e))?,
                None,
            ),
            "named" => {
                let prefix = name_prefix.as_deref().unwrap_or("knitting-native");
                mapping::check_prefix(prefix).map_err(invalid)?;
                let (named, fd) =
                    mapping::create_named(prefix, len).map_err(|e| io_error("shm_open", e))?;
                (fd, Some(named))
            }
            other => {
                return Err(invalid(format!(
                    "mode must be \"inherit\" or \"named\", got {other:?}"
                )))
            }
        };
        let mapping = Mapping::map(fd.as_fd(), len).map_err(|e| io_error("mmap", e))?;
        Ok(Self {
            mapping: mapping::share(mapping),
            fd: Some(HostFd::new(fd)),
            named,
        })
    }

    /// Maps `len` bytes of descriptor `fd` (inherited from the host) and
    /// closes the descriptor: the mapping keeps the memory. The descriptor
    /// is taken (and closed) only once it is verified to be what the host
    /// hands a worker: a sealed memfd of exactly `len` bytes. Any other
    /// descriptor (stdio, libuv's own, a file) is refused and left open.
    #[napi(factory, catch_unwind)]
    pub fn open_fd(fd: f64, len: f64) -> Result<Self> {
        let len = byte_len(len, "shared memory length")?;
        let fd = crate::bindings::whole(fd, "fd", i32::MAX as u64)? as i32;
        // 0-2 are stdio: never take (and later close) one of those.
        if fd < 3 {
            return Err(invalid(format!(
                "fd must be an inherited descriptor number (3 or more), got {fd}"
            )));
        }
        let owned_here = HOST_FDS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&fd);
        if owned_here {
            return Err(invalid(format!(
                "descriptor {fd} belongs to this process's own shared memory; it was left open"
            )));
        }
        mapping::check_inherited(fd, len).map_err(|e| {
            invalid(format!(
                "descriptor {fd} is not the pool's shared memory ({e}); it was left open"
            ))
        })?;
        // SAFETY: verified above to be an open sealed memfd of `len` bytes,
        // which only the host's spawn puts in our table, for us alone: no
        // other code in this process owns it.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        let mapping = Mapping::map(owned.as_fd(), len)
            .map_err(|e| io_error("mmap of the inherited descriptor", e))?;
        Ok(Self {
            mapping: mapping::share(mapping),
            fd: None,
            named: None,
        })
    }

    /// Opens and maps memory by name (a shm name, or a `/proc/<pid>/fd/<n>`
    /// path), then closes the descriptor.
    #[napi(factory, catch_unwind)]
    pub fn open_named(name: String, len: f64) -> Result<Self> {
        let len = byte_len(len, "shared memory length")?;
        let fd = mapping::open_named(&name).map_err(|e| io_error("opening shared memory", e))?;
        let mapping = Mapping::map(fd.as_fd(), len).map_err(|e| io_error("mmap", e))?;
        Ok(Self {
            mapping: mapping::share(mapping),
            fd: None,
            named: None,
        })
    }

    #[napi(getter, catch_unwind)]
    pub fn byte_length(&self) -> f64 {
        self.mapping.len() as f64
    }

    /// The host's descriptor (to place in a child's stdio array).
    #[napi(getter, catch_unwind)]
    pub fn fd(&self) -> Option<i32> {
        self.fd.as_ref().map(|fd| fd.0.as_raw_fd())
    }

    /// The shm name while it is linked.
    #[napi(getter, catch_unwind)]
    pub fn name(&self) -> Option<String> {
        self.named
            .as_ref()
            .and_then(|n| n.name().map(str::to_string))
    }

    /// A path a process of this user can open the memory by after the name
    /// is gone (replacement workers in named mode).
    #[napi(getter, catch_unwind)]
    pub fn proc_path(&self) -> Option<String> {
        self.fd
            .as_ref()
            .map(|fd| format!("/proc/{}/fd/{}", std::process::id(), fd.0.as_raw_fd()))
    }

    /// Removes the shm name; the memory lives on. Idempotent.
    #[napi(catch_unwind)]
    pub fn unlink(&mut self) -> Result<()> {
        if let Some(named) = self.named.as_mut() {
            named.unlink().map_err(|e| io_error("shm_unlink", e))?;
        }
        Ok(())
    }

    /// Unlinks the name and closes the descriptor (the host, at shutdown).
    /// Mappings stay until every buffer over them is collected.
    #[napi(catch_unwind)]
    pub fn close(&mut self) -> Result<()> {
        let unlinked = self.unlink();
        self.fd = None;
        unlinked
    }

    /// An external ArrayBuffer over `[offset, offset + len)` of the mapping.
    /// Create one per range and keep it: V8 refuses two buffers over the
    /// same bytes in one isolate.
    #[napi(catch_unwind)]
    pub fn buffer<'env>(&self, env: &'env Env, offset: f64, len: f64) -> Result<ArrayBuffer<'env>> {
        let len = byte_len(len, "buffer length")?;
        let total = self.mapping.len();
        let offset = crate::bindings::whole(offset, "buffer offset", isize::MAX as u64)?;
        if !offset.is_multiple_of(64) || offset.checked_add(len).is_none_or(|end| end > total) {
            return Err(invalid(format!(
                "buffer [{offset}, +{len}) must start on a 64-byte boundary inside the {total}-byte mapping"
            )));
        }
        // SAFETY: in bounds (checked above).
        let data = unsafe { self.mapping.base().add(offset) };
        let hold = Arc::clone(&self.mapping);
        // SAFETY: `data..data+len` stays mapped while the buffer lives: the
        // finalizer owns an Arc of the mapping and drops it only when V8
        // collects the buffer.
        unsafe { crate::bindings::external_buffer(env, data, len, hold, "process workers") }
    }

    /// Wakes up to `count` waiters (in any process) on word `index` of the
    /// mapping: the host's wake of a parked process worker.
    #[napi(catch_unwind)]
    pub fn wake(&self, index: f64, count: f64) -> Result<u32> {
        let index = crate::bindings::whole_u32(index, "index")?;
        let count = crate::bindings::whole_u32(count, "count")?;
        let woken = wake_word(&self.mapping, index as usize, count).map_err(invalid)?;
        Ok(woken as u32)
    }

    /// Removes shm name `name` if it has the form this module gives names
    /// (`/<prefix>-<pidns>-<pid>-<random>`); any other name is left alone.
    /// A worker process calls it when its host is gone before unlinking
    /// the name. True when it removed the name.
    #[napi(catch_unwind)]
    pub fn unlink_name(name: String) -> bool {
        mapping::parse_name(&name).is_some() && mapping::unlink_named(&name).is_ok()
    }

    /// Cross-process mappings this process holds (tests).
    #[napi(catch_unwind)]
    pub fn live_mappings() -> u32 {
        mapping::live_mappings() as u32
    }
}

/// A process worker's park: `park(index, value)` returns at once; when word
/// `index` no longer holds `value`, `onMoved` runs on the JS thread. The
/// ThreadsafeFunction is weak: a parked worker's event loop is kept alive by
/// its IPC channel to the host, not by this.
#[napi]
pub struct WordWaiterHandle {
    waiter: WordWaiter,
}

#[napi]
impl WordWaiterHandle {
    #[napi(constructor, catch_unwind)]
    pub fn new(
        memory: &ProcessMemory,
        on_moved: Function<'_, (), Unknown<'static>>,
    ) -> Result<Self> {
        let tsfn = on_moved
            .build_threadsafe_function::<()>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(|_ctx| Ok(()))?;
        let waiter = WordWaiter::start(Arc::clone(&memory.mapping), move || {
            // NonBlocking: the waiter never stalls on a busy loop; one entry
            // per park at most.
            tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
        })
        .map_err(|e| Error::from_reason(format!("cannot start the park thread: {e}")))?;
        Ok(Self { waiter })
    }

    #[napi(catch_unwind)]
    pub fn park(&self, index: f64, value: f64) -> Result<()> {
        let index = crate::bindings::whole_u32(index, "index")?;
        let value = crate::bindings::word_value(value, "value")?;
        self.waiter.park(index as usize, value).map_err(invalid)
    }

    /// Stops the thread. Idempotent.
    #[napi(catch_unwind)]
    pub fn close(&mut self) {
        self.waiter.stop();
    }
}

/// A worker process arms the watch on its host `host` (a pid) at start-up
/// (`host_watch.rs`): it ends the moment the host is gone. `cleanupName`:
/// the shm name it removes then, if the host may not have unlinked it
/// (named mode); without one the kernel also kills it with its parent.
#[napi(catch_unwind)]
pub fn watch_host(host: f64, cleanup_name: Option<String>) -> Result<()> {
    let host = crate::bindings::whole(host, "host", i32::MAX as u64)? as u32;
    if host < 2 {
        return Err(invalid(format!(
            "host must be a process id (2 or more), got {host}"
        )));
    }
    if let Some(name) = cleanup_name.as_deref() {
        if mapping::parse_name(name).is_none() {
            return Err(invalid(format!(
                "cleanupName {name:?} is not a shm name this module makes"
            )));
        }
    }
    host_watch::watch(host, cleanup_name.as_deref())
        .map_err(|e| io_error("cannot watch the host process", e))
}

/// Returns while the host lives. Once it is gone the watch is ending this
/// process: this never returns then, so no further call starts.
#[napi(catch_unwind)]
pub fn check_host() {
    if host_watch::host_gone() {
        loop {
            std::thread::park();
        }
    }
}
