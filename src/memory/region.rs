//! Shared memory as Rust sees it: a base pointer and a length, borrowed from
//! a JS `SharedArrayBuffer` (the only kind of memory that every isolate can
//! use with working `Atomics` on Node 20; see `bindings.rs`), plus a registry
//! that counts, per region, how many isolates currently hold it.

use std::collections::HashMap;
use std::sync::atomic::AtomicU32;
use std::sync::Mutex;

use once_cell::sync::Lazy;

/// A span of shared memory that outlives every `SharedMemory` over it.
#[derive(Debug)]
pub struct SharedMemory {
    base: *mut u8,
    len: usize,
}

// SAFETY: the memory is shared by design; every access goes through atomics
// (`word`) or through the payload arena's own lock. The pointer itself is
// plain data.
unsafe impl Send for SharedMemory {}
// SAFETY: as above; `&SharedMemory` hands out only `&AtomicU32`.
unsafe impl Sync for SharedMemory {}

impl SharedMemory {
    /// # Safety
    /// `base` must point to `len` bytes that stay mapped and are not freed
    /// while this value (or anything borrowed from it) lives, and must be
    /// 4-byte aligned. The caller keeps the owning JS object alive.
    pub unsafe fn new(base: *mut u8, len: usize) -> Result<Self, String> {
        if base.is_null() {
            return Err("shared memory pointer is null".into());
        }
        if !(base as usize).is_multiple_of(4) {
            return Err(format!("shared memory at {base:p} is not 4-byte aligned"));
        }
        Ok(Self { base, len })
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `index`-th 32-bit word, or `None` past the end.
    pub fn word(&self, index: usize) -> Option<&AtomicU32> {
        let end = index.checked_add(1)?.checked_mul(4)?;
        if end > self.len {
            return None;
        }
        // SAFETY: in bounds (checked above), 4-byte aligned (base is, and the
        // offset is a multiple of 4), valid for the lifetime of `self` (the
        // contract of `new`). AtomicU32 has the size and alignment of u32,
        // and all access to these words is atomic on every side (Rust and
        // JS `Atomics`).
        Some(unsafe { &*(self.base.add(index * 4) as *const AtomicU32) })
    }
}

/// How many holders each region (by base address) has right now, in this
/// process. Lets tests and `regionStats()` show that shut-down pools leave
/// nothing attached.
static ATTACHED: Lazy<Mutex<HashMap<usize, usize>>> = Lazy::new(|| Mutex::new(HashMap::new()));

/// Proof of one attachment; dropping it detaches.
#[derive(Debug)]
pub struct Attachment {
    addr: usize,
}

pub fn attach(base: *mut u8) -> Attachment {
    let addr = base as usize;
    let mut map = ATTACHED.lock().unwrap_or_else(|e| e.into_inner());
    *map.entry(addr).or_insert(0) += 1;
    Attachment { addr }
}

impl Drop for Attachment {
    fn drop(&mut self) {
        let mut map = ATTACHED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = map.get_mut(&self.addr) {
            *count -= 1;
            if *count == 0 {
                map.remove(&self.addr);
            }
        }
    }
}

/// (regions, attachments) currently held in this process.
pub fn attached_counts() -> (usize, usize) {
    let map = ATTACHED.lock().unwrap_or_else(|e| e.into_inner());
    (map.len(), map.values().sum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn words_are_bounds_checked() {
        let mut buf = vec![0u32; 4];
        {
            // SAFETY: `buf` outlives `mem` (this block) and is u32-aligned.
            let mem = unsafe { SharedMemory::new(buf.as_mut_ptr().cast(), 16) }.unwrap();
            mem.word(3).unwrap().store(7, Ordering::Relaxed);
            assert!(mem.word(4).is_none());
            assert!(mem.word(usize::MAX).is_none());
        }
        assert_eq!(buf[3], 7);
    }

    #[test]
    fn misaligned_or_null_memory_is_refused() {
        let mut buf = vec![0u32; 4];
        // SAFETY: never dereferenced; construction must fail.
        let odd = unsafe { SharedMemory::new(buf.as_mut_ptr().cast::<u8>().add(1), 8) };
        assert!(odd.is_err());
        // SAFETY: as above.
        assert!(unsafe { SharedMemory::new(std::ptr::null_mut(), 8) }.is_err());
    }

    #[test]
    fn attachments_are_counted_and_released() {
        let mut buf = vec![0u8; 8];
        let base = buf.as_mut_ptr();
        let a = attach(base);
        let b = attach(base);
        let has = |n| ATTACHED.lock().unwrap().get(&(base as usize)).copied() == n;
        assert!(has(Some(2)));
        drop(a);
        assert!(has(Some(1)));
        drop(b);
        assert!(has(None));
    }
}
