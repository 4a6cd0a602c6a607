//! Allocator for the *payload region* of a worker pool.
//!
//! # The region
//!
//! The payload region is one block of shared memory (on the JS side a
//! growable `SharedArrayBuffer`; Rust only ever sees its base pointer) into
//! which the host thread and the worker threads place encoded payloads that
//! are too large for a slot's inline bytes. A writer calls [`Arena::alloc`],
//! copies its bytes into `base + offset` *after* `alloc` has returned, and
//! publishes the offset through some other channel (a slot's `EXT` word).
//! The reader decodes the bytes and calls [`Arena::free`]. Allocation and
//! freeing therefore happen on different threads at the same time.
//!
//! Every thread (and, later, every process) builds its own [`Arena`] value
//! over the same bytes, so **all allocator state lives in the region**: an
//! `Arena` holds nothing but the base pointer and the maximum length. Every
//! in-region link is a byte offset from the base, never a pointer, because
//! the region may be mapped at different addresses.
//!
//! Only JS can grow the buffer. When `alloc` cannot be satisfied inside the
//! committed bytes it returns [`AllocError::NeedGrow`] with the smallest
//! committed length that would satisfy it; JS grows the buffer and calls
//! [`Arena::extend`] with the new length, then retries.
//!
//! # Header (offset 0, [`HEADER_BYTES`] = 64 bytes, native-endian words)
//!
//! ```text
//! offset  size  field
//!      0     4  MAGIC        "KNPA" (0x4150_4e4b); written last by `init`
//!      4     4  VERSION      layout version (1)
//!      8     4  LOCK         0 free, 1 locked, 2 locked and maybe waiters
//!     12     4  REGION_GEN   generation of the last region block
//!                            (`alloc_region`; 20 bits, 0 = none yet)
//!     16     8  COMMITTED    bytes of the buffer JS has committed
//!     24     8  TOP          end of the carved space; [TOP, COMMITTED) is
//!                            untouched "wilderness"
//!     32     8  FREE_HEAD    offset of the first free block, 0 = none
//!     40     8  LIVE         number of allocated blocks
//!     48     8  MAX_LEN      the region's maximum length (from `init`)
//!     56     8  (reserved, 0)
//! ```
//!
//! # Blocks
//!
//! The space `[HEADER_BYTES, TOP)` is tiled by blocks, each starting at a
//! multiple of [`ALIGN`] (16) and each a multiple of 16 bytes long:
//!
//! ```text
//! block + 0   u64  SIZE   whole block in bytes, header included (>= 32)
//! block + 8   u32  STATE  "USED" (0x5553_4544), "REGN" (0x5245_474e),
//!                         "FREE" (0x4652_4545), 0 dead
//! block + 12  u32  CHECK  hash of (block offset, SIZE, STATE)
//! block + 16       usable bytes; `alloc` returns `block + 16`
//!                  (a free block keeps its NEXT link, a u64 offset, here)
//! ```
//!
//! # Region blocks
//!
//! A *region* block ([`Arena::alloc_region`]) is a live block whose bytes
//! user code reads and writes in place, handed between isolates by its
//! offset. It is a USED block in every respect (split, freed, coalesced the
//! same way) except its STATE, "REGN", which lets [`Arena::regions`] find
//! it and [`Arena::region_data`] tell it from a payload block. Its usable
//! bytes start with a [`REGION_HEADER`]-byte region header that JS reads
//! with Atomics (its STATE word is the ownership protocol's):
//!
//! ```text
//! offset + 0   u32  STATE  (generation << 12) | (holder & 0xfff)
//! offset + 4   u32  LEN    the user-visible byte length
//! offset + 8   u64  (reserved, 0)
//! offset + 16       data (16-aligned), LEN bytes
//! ```
//!
//! The generation comes from REGION_GEN, so a stale descriptor of a freed
//! and reallocated region does not match the new one's STATE. `free`
//! zeroes STATE first (a freed region never shows its old generation).
//!
//! `free` accepts an offset only if the header in front of it says `USED`
//! (or `REGN`),
//! its `SIZE` fits inside the carved space and its `CHECK` matches, so a
//! double free (state is then `FREE` or dead) or a garbage offset (random
//! bytes essentially never carry the right magic *and* check word) is
//! rejected with `Err` instead of corrupting the free list. (The check word
//! guards against accidents, not against a caller that deliberately forges
//! a header inside its own payload; and, as with any allocator, a stale
//! offset that happens to be the start of a *new* live block frees that
//! block.)
//!
//! # Free-space management
//!
//! First fit over a singly linked, address-ordered free list, plus a
//! "wilderness" top (as in dlmalloc's top chunk):
//!
//! * `alloc` walks the free list and takes the first block that fits,
//!   splitting off the tail as a new free block when at least 32 bytes
//!   remain. If no free block fits it carves the block from the wilderness
//!   at `TOP`; if the wilderness is too small it reports `NeedGrow`.
//! * `free` finds the block's neighbours in the ordered list and merges it
//!   with a free predecessor and/or successor. A free span that reaches
//!   `TOP` is returned to the wilderness (`TOP` moves down), so no free-list
//!   block ever ends at `TOP`.
//! * `extend` only raises `COMMITTED`: the new bytes join the wilderness,
//!   which makes it O(1), trivially idempotent, and makes `NeedGrow`'s
//!   `min_committed` exact (`TOP` + block size).
//!
//! Address-ordered first fit with immediate coalescing is known to keep
//! fragmentation low for mixed sizes. Because neighbours are always merged,
//! two free blocks are always separated by a live block, so the list is
//! never longer than the number of live blocks (in-flight payloads, i.e.
//! small); the O(list) walks under the lock stay short. With every block
//! freed the region is a single free span `[HEADER_BYTES, COMMITTED)`.
//!
//! # Lock protocol
//!
//! All state changes happen under the `LOCK` word, a three-state futex lock:
//! `lock` tries `0 -> 1` with a compare-exchange; on failure it spins at
//! most `SPIN_LIMIT` (100) times (`std::hint::spin_loop`) while the word is 1,
//! then swaps in 2 ("contended") and sleeps on the futex (LOCK, 2) until
//! its swap returns 0, for [`LOCK_PATIENCE`] at most. `unlock` swaps in 0 and calls
//! `atomic_wait::wake_one` only if the old value was 2. Critical sections
//! only touch headers and links (no payload bytes are copied under the
//! lock).
//!
//! Memory ordering: acquiring the lock is an `Acquire` read-modify-write and
//! releasing it a `Release` swap, so everything one holder wrote is visible
//! to the next. That is why every header field and block header is accessed
//! with `Relaxed` atomics while the lock is held (atomics only so that a
//! stray concurrent access is never a Rust data race). The same
//! happens-before edge also orders a reader's last access to payload bytes
//! (before its `free`) before the next owner's writes (after its `alloc`).
//! Publishing an offset to a reader is the caller's job and needs its own
//! Release/Acquire pair.
//!
//! # What the arena trusts
//!
//! Nothing in the region: task code can write any byte of it. Every offset
//! read from it is checked against [`Bounds`], which live in this process
//! (not in the region): the bytes Rust was shown to be accessible (a view's
//! length, a mapping's size), so a forged `COMMITTED` or `TOP` can never
//! lead a read or write past them. A forged link, size or check word is
//! refused (`Err`), never followed. A lock word that never returns to 0
//! (a writer stored 1 into it, or an impossible value) ends the wait after
//! [`LOCK_PATIENCE`]: the region is then marked corrupt in this process and
//! every later call fails at once with [`AllocError::Corrupt`] / `Err`.
//!
//! The futex is the private one (`atomic_wait`) for a region in this
//! process's own memory (thread pools), and the shared one when the region
//! is a cross-process mapping (process workers): `futex::Scope::of` decides
//! from the base address when an `Arena` is made. The layout is the same.

use std::collections::HashMap;
use std::fmt;
use std::hint::spin_loop;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use once_cell::sync::Lazy;

use crate::futex::Scope;

/// Bytes at the start of the region reserved for the arena header.
pub const HEADER_BYTES: usize = 64;
/// Every offset returned by [`Arena::alloc`] is a multiple of this.
pub const ALIGN: usize = 16;

/// Bytes of a block header in front of the usable bytes.
const BLOCK_HEADER: usize = 16;
/// Smallest block: header plus room for the free-list link.
const MIN_BLOCK: usize = 32;
/// Bounded spin before sleeping on the lock word.
const SPIN_LIMIT: u32 = 100;
/// Longest wait for the lock. Critical sections touch a few headers (µs);
/// even a holder descheduled on a loaded 2-vCPU machine is back within
/// milliseconds. A lock held this long is held by nobody: task code wrote
/// the word (or a process died holding it), and the region is unusable.
pub const LOCK_PATIENCE: Duration = Duration::from_secs(2);

const MAGIC: u32 = 0x4150_4e4b; // "KNPA" in little-endian byte order
const VERSION: u32 = 1;

// Header field byte offsets.
const H_MAGIC: usize = 0;
const H_VERSION: usize = 4;
const H_LOCK: usize = 8;
const H_REGION_GEN: usize = 12;
const H_COMMITTED: usize = 16;
const H_TOP: usize = 24;
const H_FREE_HEAD: usize = 32;
const H_LIVE: usize = 40;
const H_MAX_LEN: usize = 48;
const H_RESERVED_B: usize = 56;

// Block field byte offsets (from the block start).
const B_SIZE: usize = 0;
const B_STATE: usize = 8;
const B_CHECK: usize = 12;
const B_NEXT: usize = 16;

const STATE_USED: u32 = 0x5553_4544;
const STATE_FREE: u32 = 0x4652_4545;
const STATE_DEAD: u32 = 0;
const STATE_REGN: u32 = 0x5245_474e;

/// Bytes of the region header at the start of a region block's usable
/// bytes (see "Region blocks" above); the data follows it.
pub const REGION_HEADER: usize = 16;
// Region header fields, as block field offsets (the usable bytes start at
// BLOCK_HEADER): all inside the first MIN_BLOCK bytes of the block.
const R_STATE: usize = BLOCK_HEADER;
const R_LEN: usize = BLOCK_HEADER + 4;
const R_RESERVED: usize = BLOCK_HEADER + 8;
/// Generations wrap within this mask (the STATE word keeps 12 bits for the
/// holder).
const GEN_MASK: u32 = 0xf_ffff;
const HOLDER_MASK: u32 = 0xfff;

/// Why [`Arena::alloc`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocError {
    /// The committed bytes are too few; growing the buffer to at least
    /// `min_committed` bytes (then calling [`Arena::extend`]) satisfies the
    /// request.
    NeedGrow { min_committed: usize },
    /// Even a buffer grown to the maximum length cannot hold the request
    /// now. `max` is the largest request an *empty* region of the maximum
    /// length could hold: `requested > max` will never succeed, while
    /// `requested <= max` means the region is full of live blocks and the
    /// request may succeed after some are freed. (`max` is 0 for an arena
    /// that is not initialised or whose header is corrupt.)
    TooLarge { requested: usize, max: usize },
    /// The region's shared state is inconsistent (task code wrote into it,
    /// or a process died holding its lock): nothing was allocated. The text
    /// says what was found.
    Corrupt(&'static str),
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AllocError::NeedGrow { min_committed } => {
                write!(
                    f,
                    "payload region needs at least {min_committed} committed bytes"
                )
            }
            AllocError::TooLarge { requested, max } if requested > max => {
                write!(
                    f,
                    "payload of {requested} bytes exceeds the payload region limit of {max} bytes"
                )
            }
            AllocError::TooLarge { requested, .. } => {
                write!(
                    f,
                    "payload region is full (could not place {requested} bytes)"
                )
            }
            AllocError::Corrupt(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for AllocError {}

/// A snapshot from [`Arena::stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArenaStats {
    /// Committed length as last reported by `init`/`extend`.
    pub committed: usize,
    /// Bytes not in live blocks (free blocks and wilderness, block headers
    /// included). With no live blocks this is `committed` rounded down to 16
    /// minus [`HEADER_BYTES`].
    pub free_bytes: usize,
    /// Number of allocated blocks.
    pub live_blocks: usize,
    /// Largest contiguous free span in bytes (block header included): a
    /// request of `len` bytes fits in it when `round_up(len, 16) + 16 <=
    /// largest_free`.
    pub largest_free: usize,
}

/// What this process knows about a region, kept outside it (task code
/// cannot change it): shared by every `Arena` over the same region in this
/// process (all isolates see the same backing store there), from the
/// `init` that formatted it.
#[derive(Debug, Default)]
pub struct Bounds {
    /// Bytes from the base known to be accessible: the largest length Rust
    /// itself was shown (`init`'s committed length, [`Arena::mapped`]).
    /// Only ever raised: committed memory of a growable buffer never
    /// shrinks, and a mapping stays whole while an `Arena` exists.
    known: AtomicUsize,
    /// Set once the region's lock proved unusable: every call then fails.
    corrupt: AtomicBool,
}

/// Bounds of the regions arenas in this process use, by base address. Weak:
/// an entry dies with the last `Arena` over it, or is replaced when a new
/// region is formatted at its address (see `bounds_of`).
static BOUNDS: Lazy<Mutex<HashMap<usize, Weak<Bounds>>>> = Lazy::new(|| Mutex::new(HashMap::new()));

/// The bounds of the region at `base`: with `fresh`, new ones that replace
/// any this process had for that address (`init` formats a new region);
/// otherwise the current ones, made if there are none.
///
/// Why `init` never reuses them: an `Arena` over an earlier region at the
/// same address may outlive that region's memory when its owner is torn
/// down without finalizers (a Deno worker isolate). Its `Bounds` then stay
/// alive, and reusing them would carry the old region's known length over
/// to a new, smaller one: a forged `TOP` would then lead past the bytes
/// that exist (region-fuzz.test.mjs on Deno: SIGSEGV in `alloc`).
fn bounds_of(base: *mut u8, fresh: bool) -> Arc<Bounds> {
    let mut map = BOUNDS.lock().unwrap_or_else(|e| e.into_inner());
    map.retain(|_, w| w.strong_count() > 0);
    if !fresh {
        if let Some(b) = map.get(&(base as usize)).and_then(Weak::upgrade) {
            return b;
        }
    }
    let b = Arc::new(Bounds::default());
    map.insert(base as usize, Arc::downgrade(&b));
    b
}

/// A view of a payload region. Cheap to create; all allocator state is in
/// the region, the bounds it is checked against in this process.
#[derive(Debug)]
pub struct Arena {
    base: *mut u8,
    /// 0 marks an inert arena (bad `init` arguments): nothing is touched.
    max_len: usize,
    /// The futex the lock sleeps and wakes on.
    scope: Scope,
    bounds: Arc<Bounds>,
}

// SAFETY: an `Arena` is a pointer and a length. Every access it makes to the
// region is atomic, and every state change happens under the in-region lock,
// so using it from several threads at once (or moving it to another thread)
// is exactly the concurrent use the design is for. The memory's lifetime is
// the caller's contract from `init`/`attach` and does not depend on threads.
unsafe impl Send for Arena {}
// SAFETY: see `Send` above; all methods take `&self` and synchronise through
// the region's lock word.
unsafe impl Sync for Arena {}

/// A block offset that has been checked: a multiple of 16, at least
/// `HEADER_BYTES`, and with `MIN_BLOCK` bytes before a bound that was at
/// most the known accessible length ([`Bounds`]). That length never
/// shrinks, so its 32 header/link bytes stay accessible for the life of
/// the arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Blk(usize);

/// `bound` must be at most the committed length.
fn blk(off: usize, bound: usize) -> Option<Blk> {
    let fits = off.checked_add(MIN_BLOCK).is_some_and(|end| end <= bound);
    (off.is_multiple_of(ALIGN) && off >= HEADER_BYTES && fits).then_some(Blk(off))
}

/// Header values read (and checked) under the lock.
#[derive(Debug, Clone, Copy)]
struct Snapshot {
    /// `COMMITTED` rounded down to `ALIGN`.
    limit: usize,
    top: usize,
}

struct LockGuard<'a> {
    word: &'a AtomicU32,
    scope: Scope,
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        // Release: every header/block write made while holding the lock
        // happens-before the next holder's Acquire in `lock`.
        if self.word.swap(0, Ordering::Release) == 2 {
            self.scope.wake_one(self.word);
        }
    }
}

fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

const fn align_down(n: usize) -> usize {
    n & !(ALIGN - 1)
}

/// Whole block size for a request of `len` usable bytes.
fn block_size_for(len: usize) -> Option<usize> {
    let body = len.max(1).checked_add(ALIGN - 1)? & !(ALIGN - 1);
    body.checked_add(BLOCK_HEADER)
}

fn check_word(off: usize, size: usize, state: u32) -> u32 {
    let x = (off as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ (size as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
        ^ u64::from(state)
        ^ 0x6b6e_6974_7469_6e67;
    (x ^ (x >> 32)) as u32
}

impl Arena {
    /// Formats a fresh region and returns an arena over it. Call this once,
    /// before any other thread attaches.
    ///
    /// # Safety
    ///
    /// `base` points to `max_len` bytes of memory that stay mapped while any
    /// `Arena` over it exists, and the first `committed` bytes (tracked in
    /// the header from then on, and only ever raised by [`Arena::extend`])
    /// are readable and writable. Only committed bytes are touched. No other
    /// code may concurrently use the region as an arena while `init` runs.
    ///
    /// If `base` is null or not 8-byte aligned, `committed` is smaller than
    /// [`HEADER_BYTES`], or `max_len` exceeds `isize::MAX`, nothing is
    /// written and an inert arena is returned: `alloc` fails with
    /// `TooLarge { max: 0 }`, `free`/`extend` return `Err`, `committed()`
    /// is 0. (`committed` larger than `max_len` is clamped to `max_len`.)
    pub unsafe fn init(base: *mut u8, committed: usize, max_len: usize) -> Arena {
        let committed = committed.min(max_len);
        if base.is_null()
            || !base.cast::<u64>().is_aligned()
            || committed < HEADER_BYTES
            || max_len > isize::MAX as usize
        {
            return Arena {
                base: ptr::null_mut(),
                max_len: 0,
                scope: Scope::Private,
                bounds: Arc::default(),
            };
        }
        let arena = Arena {
            base,
            max_len,
            scope: Scope::of(base),
            // A fresh format: nothing this process concluded about an
            // earlier region at this address (its length, corruption) holds.
            bounds: bounds_of(base, true),
        };
        arena.bounds.known.fetch_max(committed, Ordering::AcqRel);
        let r = Ordering::Relaxed;
        arena.h32(H_LOCK).store(0, r);
        arena.h32(H_VERSION).store(VERSION, r);
        arena.h32(H_REGION_GEN).store(0, r);
        arena.h64(H_COMMITTED).store(committed as u64, r);
        arena.h64(H_TOP).store(HEADER_BYTES as u64, r);
        arena.h64(H_FREE_HEAD).store(0, r);
        arena.h64(H_LIVE).store(0, r);
        arena.h64(H_MAX_LEN).store(max_len as u64, r);
        arena.h64(H_RESERVED_B).store(0, r);
        // Release: an `attach` that reads MAGIC with Acquire also sees every
        // header field stored above.
        arena.h32(H_MAGIC).store(MAGIC, Ordering::Release);
        arena
    }

    /// Joins a region formatted by [`Arena::init`] (possibly from another
    /// thread). Fails if the magic word or version does not match, or if
    /// `max_len` is smaller than the maximum length the region was
    /// formatted with. The returned arena uses the region's maximum length.
    ///
    /// # Safety
    ///
    /// `base` points to `max_len` bytes of memory that stay mapped while any
    /// `Arena` over it exists, and at least the first `mapped` bytes are
    /// readable and writable. Only bytes known to be accessible (`mapped`,
    /// and what [`Arena::mapped`] adds later) are touched, whatever the
    /// header says.
    pub unsafe fn attach(base: *mut u8, mapped: usize, max_len: usize) -> Result<Arena, String> {
        if base.is_null() || !base.cast::<u64>().is_aligned() {
            return Err("payload region base must be non-null and 8-byte aligned".into());
        }
        if !(HEADER_BYTES..=isize::MAX as usize).contains(&max_len) {
            return Err(format!("payload region max_len {max_len} is out of range"));
        }
        if mapped < HEADER_BYTES {
            return Err(format!(
                "payload region of {mapped} bytes has no room for its header"
            ));
        }
        let bounds = bounds_of(base, false);
        bounds
            .known
            .fetch_max(mapped.min(max_len), Ordering::AcqRel);
        let arena = Arena {
            base,
            max_len,
            scope: Scope::of(base),
            bounds,
        };
        // Acquire: pairs with the Release store of MAGIC in `init`.
        let magic = arena.h32(H_MAGIC).load(Ordering::Acquire);
        if magic != MAGIC {
            return Err(format!(
                "payload region is not initialised (magic {magic:#010x}, expected {MAGIC:#010x})"
            ));
        }
        let version = arena.h32(H_VERSION).load(Ordering::Relaxed);
        if version != VERSION {
            return Err(format!(
                "payload region has layout version {version}, expected {VERSION}"
            ));
        }
        let region_max = to_usize(arena.h64(H_MAX_LEN).load(Ordering::Relaxed));
        if region_max < HEADER_BYTES {
            return Err(format!(
                "payload region header is corrupt (max_len {region_max})"
            ));
        }
        if region_max > max_len {
            return Err(format!(
                "payload region was formatted for {region_max} bytes but only {max_len} are mapped"
            ));
        }
        Ok(Arena {
            base,
            max_len: region_max,
            scope: arena.scope,
            bounds: arena.bounds,
        })
    }

    /// The first `bytes` bytes of the region are now readable and writable
    /// (the buffer grew): the arena may use them. Values past `max_len` are
    /// clamped; smaller values than already known change nothing.
    ///
    /// # Safety
    ///
    /// The first `bytes` bytes from the base are committed memory that
    /// stays mapped while any `Arena` over it exists (a view of that length
    /// over the buffer, or a mapping of that size, proves it).
    pub unsafe fn mapped(&self, bytes: usize) {
        if self.max_len != 0 {
            self.bounds
                .known
                .fetch_max(bytes.min(self.max_len), Ordering::AcqRel);
        }
    }

    /// Whether this process found the region unusable (see [`LOCK_PATIENCE`]).
    pub fn is_corrupt(&self) -> bool {
        self.bounds.corrupt.load(Ordering::Relaxed)
    }

    /// Bytes known to be accessible (Rust's own record, not the header's).
    fn known(&self) -> usize {
        // Acquire: pairs with the AcqRel raises; the bytes below it were
        // committed before the raise.
        self.bounds.known.load(Ordering::Acquire).min(self.max_len)
    }

    /// Allocates a block with at least `len` usable bytes and returns the
    /// offset (from the base, a multiple of [`ALIGN`]) of those bytes. The
    /// caller owns `[offset, offset + len)` until it passes the offset to
    /// [`Arena::free`].
    pub fn alloc(&self, len: usize) -> Result<usize, AllocError> {
        self.alloc_as(len, STATE_USED)
            .map(|(offset, _guard)| offset)
    }

    /// Allocates a region block with `len` data bytes for `holder` (its low
    /// 12 bits) and writes its region header (see "Region blocks"); returns
    /// the header's offset. The data starts at `offset + REGION_HEADER`.
    /// `TooLarge` counts `len` against [`Arena::max_region_request`].
    pub fn alloc_region(&self, len: usize, holder: u32) -> Result<usize, AllocError> {
        let max = self.max_region_request();
        if len > max {
            return Err(AllocError::TooLarge {
                requested: len,
                max,
            });
        }
        let (offset, _guard) = match self.alloc_as(len + REGION_HEADER, STATE_REGN) {
            Err(AllocError::TooLarge { .. }) => {
                return Err(AllocError::TooLarge {
                    requested: len,
                    max,
                })
            }
            other => other?,
        };
        // Still under the lock: the generation counter is only ever moved
        // there, so two regions never get the same one in a row.
        let counter = self.h32(H_REGION_GEN);
        let mut generation = counter.load(Ordering::Relaxed).wrapping_add(1) & GEN_MASK;
        if generation == 0 {
            generation = 1;
        }
        counter.store(generation, Ordering::Relaxed);
        // Valid `Blk`: `alloc_as` returned a block's usable bytes.
        let b = Blk(offset - BLOCK_HEADER);
        // `len <= max_region_request() <= u32::MAX`: the cast is exact.
        self.b32(b, R_LEN).store(len as u32, Ordering::Relaxed);
        self.b64(b, R_RESERVED).store(0, Ordering::Relaxed);
        // Release: JS loads STATE with Atomics; seeing this generation means
        // seeing LEN too.
        self.b32(b, R_STATE).store(
            (generation << 12) | (holder & HOLDER_MASK),
            Ordering::Release,
        );
        Ok(offset)
    }

    /// Largest `len` [`Arena::alloc_region`] can ever place (an empty
    /// region of the maximum length; LEN is a u32).
    pub fn max_region_request(&self) -> usize {
        self.max_request()
            .saturating_sub(REGION_HEADER)
            .min(u32::MAX as usize)
    }

    /// `alloc` for a block of `state` (USED or REGN); the lock stays held
    /// until the guard drops, so the caller can finish the block under it.
    fn alloc_as(&self, len: usize, state: u32) -> Result<(usize, LockGuard<'_>), AllocError> {
        let max = self.max_request();
        let need = match block_size_for(len) {
            Some(need) if len <= max => need,
            _ => {
                return Err(AllocError::TooLarge {
                    requested: len,
                    max,
                })
            }
        };
        if self.max_len == 0 {
            return Err(AllocError::TooLarge {
                requested: len,
                max: 0,
            });
        }
        let guard = self.lock().map_err(AllocError::Corrupt)?;
        let st = self.snapshot().map_err(|_| {
            AllocError::Corrupt("payload region is corrupt: its header is inconsistent")
        })?;
        let corrupt = AllocError::Corrupt("payload region is corrupt: its top is misplaced");

        // First fit over the address-ordered free list.
        let mut prev: Option<Blk> = None;
        let mut prev_end = HEADER_BYTES;
        let mut link = self.free_head();
        // A corrupt link ends the walk: the blocks behind it are not used.
        while let Ok(Some((b, size))) = self.free_list_entry(st.top, prev_end, link) {
            let next = self.next(b);
            if size >= need {
                let (taken, replacement) = if size - need >= MIN_BLOCK {
                    // The tail [b + need, b + size) stays free, in b's place
                    // in the list (address order is kept).
                    // Valid `Blk`: 16-aligned, above the header, and
                    // rest + MIN_BLOCK <= b + size <= top.
                    let rest = Blk(b.0 + need);
                    self.write_block(rest, size - need, STATE_FREE);
                    self.set_next(rest, next);
                    (need, rest.0)
                } else {
                    (size, next)
                };
                self.set_link(prev, replacement);
                self.write_block(b, taken, state);
                self.add_live(1);
                return Ok((b.0 + BLOCK_HEADER, guard));
            }
            prev = Some(b);
            prev_end = b.0 + size;
            link = next;
        }

        // Carve from the wilderness [top, limit).
        if st.limit - st.top >= need {
            let Some(b) = blk(st.top, st.limit) else {
                return Err(corrupt);
            };
            self.write_block(b, need, state);
            self.h64(H_TOP)
                .store((st.top + need) as u64, Ordering::Relaxed);
            self.add_live(1);
            return Ok((b.0 + BLOCK_HEADER, guard));
        }
        // No free-list block ends at `top`, so the block must start at `top`.
        let min_committed = st.top + need;
        if min_committed > self.max_len {
            Err(AllocError::TooLarge {
                requested: len,
                max,
            })
        } else {
            Err(AllocError::NeedGrow { min_committed })
        }
    }

    /// Frees the block whose usable bytes start at `offset` (a value
    /// returned by [`Arena::alloc`]). Rejects offsets that are not a live
    /// block (double free, garbage) without changing anything.
    pub fn free(&self, offset: usize) -> Result<(), String> {
        let not_live = || format!("free({offset}): not a live payload block");
        let _guard = self.lock()?;
        let st = self.snapshot()?;
        let (b, size, state) = self.block_at(offset, st.top).ok_or_else(not_live)?;
        match state {
            STATE_USED | STATE_REGN => {}
            STATE_FREE => return Err(format!("free({offset}): double free")),
            _ => return Err(not_live()),
        }
        let end = b.0 + size;

        // Find the free neighbours: `prev` is the last free block below `b`,
        // `before_prev` its predecessor in the list, `next` the first above.
        let corrupt = || format!("free({offset}): payload free list is corrupt");
        let mut before_prev: Option<Blk> = None;
        let mut prev: Option<(Blk, usize)> = None;
        let mut prev_end = HEADER_BYTES;
        let mut link = self.free_head();
        let next = loop {
            match self.free_list_entry(st.top, prev_end, link) {
                Err(()) => return Err(corrupt()),
                Ok(None) => break None,
                Ok(Some((c, c_size))) if c.0 >= b.0 => break Some((c, c_size)),
                Ok(Some((c, c_size))) => {
                    before_prev = prev.map(|(p, _)| p);
                    prev = Some((c, c_size));
                    prev_end = c.0 + c_size;
                    link = self.next(c);
                }
            }
        };
        if prev_end > b.0 || next.is_some_and(|(c, _)| c.0 < end) {
            // A "used" block overlapping a free one: the header is forged.
            return Err(corrupt());
        }

        if state == STATE_REGN {
            // Release: a holder that still loads STATE with Atomics sees the
            // region gone (0), never its old generation over reused bytes.
            self.b32(b, R_STATE).store(0, Ordering::Release);
        }
        self.add_live(-1);
        let prev_adjacent = prev.filter(|&(p, p_size)| p.0 + p_size == b.0);
        if end == st.top {
            // Back to the wilderness, with the free block just below if it
            // touches `b` (it is then the list's tail: nothing free lies
            // above `b`).
            let new_top = match prev_adjacent {
                Some((p, p_size)) => {
                    self.set_link(before_prev, 0);
                    self.write_block(p, p_size, STATE_DEAD);
                    p.0
                }
                None => b.0,
            };
            self.write_block(b, size, STATE_DEAD);
            self.h64(H_TOP).store(new_top as u64, Ordering::Relaxed);
            return Ok(());
        }

        let mut merged = size;
        let after = match next {
            Some((c, c_size)) if c.0 == end => {
                merged += c_size;
                let after = self.next(c);
                self.write_block(c, c_size, STATE_DEAD);
                after
            }
            Some((c, _)) => c.0,
            None => 0,
        };
        match prev_adjacent {
            Some((p, p_size)) => {
                self.write_block(p, p_size + merged, STATE_FREE);
                self.set_next(p, after);
                self.write_block(b, size, STATE_DEAD);
            }
            None => {
                self.write_block(b, merged, STATE_FREE);
                self.set_next(b, after);
                self.set_link(prev.map(|(p, _)| p), b.0);
            }
        }
        Ok(())
    }

    /// JS grew the buffer to `new_committed` bytes: the bytes past the old
    /// committed length become free space. A value not larger than the
    /// current committed length is ignored (so repeated or racing calls are
    /// harmless); a value past the maximum length is an error.
    pub fn extend(&self, new_committed: usize) -> Result<(), String> {
        let _guard = self.lock()?;
        if new_committed > self.max_len {
            return Err(format!(
                "payload region cannot grow to {new_committed} bytes (max {})",
                self.max_len
            ));
        }
        let committed = self.h64(H_COMMITTED);
        if new_committed > to_usize(committed.load(Ordering::Relaxed)) {
            // Release: pairs with the Acquire in `committed()`, which reads
            // outside the lock.
            committed.store(new_committed as u64, Ordering::Release);
        }
        Ok(())
    }

    /// Committed length as last reported by `init`/`extend` (never more
    /// than this process knows to be accessible).
    pub fn committed(&self) -> usize {
        if self.max_len == 0 {
            return 0;
        }
        // Acquire: pairs with the Release store in `extend`; the value is a
        // snapshot that may be raised concurrently.
        to_usize(self.h64(H_COMMITTED).load(Ordering::Acquire)).min(self.known())
    }

    /// Usage counters (walks the free list under the lock).
    pub fn stats(&self) -> ArenaStats {
        let Ok(_guard) = self.lock() else {
            return ArenaStats::default();
        };
        let committed = to_usize(self.h64(H_COMMITTED).load(Ordering::Relaxed));
        let live_blocks = to_usize(self.h64(H_LIVE).load(Ordering::Relaxed));
        let mut stats = ArenaStats {
            committed,
            free_bytes: 0,
            live_blocks,
            largest_free: 0,
        };
        let Ok(st) = self.snapshot() else {
            return stats;
        };
        let wilderness = st.limit - st.top;
        stats.free_bytes = wilderness;
        stats.largest_free = wilderness;
        let mut prev_end = HEADER_BYTES;
        let mut link = self.free_head();
        while let Ok(Some((b, size))) = self.free_list_entry(st.top, prev_end, link) {
            stats.free_bytes += size;
            stats.largest_free = stats.largest_free.max(size);
            prev_end = b.0 + size;
            link = self.next(b);
        }
        stats
    }

    /// Header offsets of every live region block, in address order (walks
    /// all blocks under the lock). A block with a bad header ends the walk
    /// with `Err`: the blocks behind it cannot be found.
    pub fn regions(&self) -> Result<Vec<usize>, String> {
        let _guard = self.lock()?;
        let st = self.snapshot()?;
        let mut found = Vec::new();
        let mut off = HEADER_BYTES;
        // Every block is at least MIN_BLOCK bytes, so a walk that is not
        // done after this many steps is following forged sizes.
        let mut steps = (st.top - HEADER_BYTES) / MIN_BLOCK + 1;
        while off < st.top {
            steps = steps
                .checked_sub(1)
                .ok_or("payload region is corrupt: its blocks do not tile it")?;
            let bad = || format!("payload region is corrupt: bad block header at {off}");
            let b = blk(off, st.top).ok_or_else(bad)?;
            let (size, state) = self.read_block(b, st.top).ok_or_else(bad)?;
            match state {
                STATE_REGN => found.push(b.0 + BLOCK_HEADER),
                STATE_USED | STATE_FREE => {}
                _ => return Err(bad()),
            }
            // `read_block` checked off + size <= top and size >= MIN_BLOCK.
            off += size;
        }
        Ok(found)
    }

    /// The data offset (`offset + REGION_HEADER`) of the region whose
    /// header is at `offset`, after checking that `offset` is a live region
    /// block and that `len` data bytes fit in it. Bounds come from the block
    /// header (checked against this process's [`Bounds`]), never from the
    /// region header's LEN, which task code can write.
    pub fn region_data(&self, offset: usize, len: usize) -> Result<usize, String> {
        let not_region = || format!("{offset} is not the offset of a live region");
        let _guard = self.lock()?;
        let st = self.snapshot()?;
        match self.block_at(offset, st.top) {
            Some((_, size, STATE_REGN)) => {
                let room = size - BLOCK_HEADER - REGION_HEADER;
                if len > room {
                    return Err(format!(
                        "{len} bytes do not fit the region at {offset} (it holds {room})"
                    ));
                }
                Ok(offset + REGION_HEADER)
            }
            _ => Err(not_region()),
        }
    }

    /// The block whose usable bytes start at `offset` (what `alloc` and
    /// `alloc_region` return), with its size and state, when a valid block
    /// header is there; called under the lock, `top` from its snapshot.
    fn block_at(&self, offset: usize, top: usize) -> Option<(Blk, usize, u32)> {
        if !offset.is_multiple_of(ALIGN) || offset < HEADER_BYTES + BLOCK_HEADER {
            return None;
        }
        let b = blk(offset - BLOCK_HEADER, top)?;
        let (size, state) = self.read_block(b, top)?;
        Some((b, size, state))
    }

    /// Checks the whole region (O(blocks), under the lock): blocks tile
    /// `[HEADER_BYTES, TOP)` with valid headers, the free list holds exactly
    /// the free blocks in address order, no two free blocks touch, none ends
    /// at `TOP`, and the live count matches. A debugging aid for tests.
    pub fn verify(&self) -> Result<(), String> {
        let _guard = self.lock()?;
        let st = self.snapshot()?;
        let mut off = HEADER_BYTES;
        let mut expect_free = self.free_head();
        let mut live = 0usize;
        let mut prev_free = false;
        while off < st.top {
            let b = blk(off, st.top).ok_or_else(|| format!("block at {off} runs past top"))?;
            let (size, state) = self
                .read_block(b, st.top)
                .ok_or_else(|| format!("block at {off} has a bad header"))?;
            match state {
                STATE_USED | STATE_REGN => {
                    live += 1;
                    prev_free = false;
                }
                STATE_FREE => {
                    if prev_free {
                        return Err(format!("free block at {off} touches another free block"));
                    }
                    if expect_free != off {
                        return Err(format!(
                            "free block at {off} but free list points at {expect_free}"
                        ));
                    }
                    expect_free = self.next(b);
                    prev_free = true;
                }
                _ => return Err(format!("block at {off} has state {state:#x}")),
            }
            off += size;
        }
        if prev_free {
            return Err("a free block ends at top".into());
        }
        if expect_free != 0 {
            return Err(format!(
                "free list continues at {expect_free} past the blocks"
            ));
        }
        let counted = to_usize(self.h64(H_LIVE).load(Ordering::Relaxed));
        if counted != live {
            return Err(format!("header counts {counted} live blocks, found {live}"));
        }
        Ok(())
    }

    // ----- internals -------------------------------------------------------
    //
    // Every header and block access below uses Relaxed atomics: apart from
    // MAGIC/COMMITTED (ordered where they are used) they only happen with the
    // lock held, and the lock's Acquire/Release already orders them across
    // threads; Relaxed merely keeps a stray access from being a data race.

    /// Largest request an empty region of `max_len` bytes could hold.
    pub fn max_request(&self) -> usize {
        align_down(self.max_len).saturating_sub(HEADER_BYTES + BLOCK_HEADER)
    }

    /// Takes the region's lock, or says why it cannot: an inert arena, or
    /// a lock word task code broke (see [`LOCK_PATIENCE`]).
    fn lock(&self) -> Result<LockGuard<'_>, &'static str> {
        if self.max_len == 0 {
            return Err("payload arena is not initialised");
        }
        if self.is_corrupt() {
            return Err("payload region is corrupt: its lock word was broken");
        }
        let word = self.h32(H_LOCK);
        // Acquire on every successful transition out of 0: pairs with the
        // Release swap in `LockGuard::drop`, so the previous holder's header
        // and block writes are visible before we read them.
        if word
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            if let Err(why) = Self::lock_contended(word, self.scope) {
                // Relaxed: a hint for later calls; each still checks its own
                // lock attempt.
                self.bounds.corrupt.store(true, Ordering::Relaxed);
                return Err(why);
            }
        }
        Ok(LockGuard {
            word,
            scope: self.scope,
        })
    }

    #[cold]
    fn lock_contended(word: &AtomicU32, scope: Scope) -> Result<(), &'static str> {
        // Relaxed loads while spinning: they only decide when to retry; the
        // Acquire RMWs below do the synchronising.
        let mut state = word.load(Ordering::Relaxed);
        let mut spins = 0;
        while state == 1 && spins < SPIN_LIMIT {
            spin_loop();
            spins += 1;
            state = word.load(Ordering::Relaxed);
        }
        if state == 0
            && word
                .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return Ok(());
        }
        // Mark the lock contended; whoever unlocks then wakes one sleeper.
        // We own the lock once the swap returns 0 (Acquire, as above). Taking
        // it in state 2 may cost the next unlock one spurious wake: harmless.
        // A value other than 0, 1 or 2 is never stored by an arena: the
        // word was overwritten, and the holder (if any) is unknown.
        let deadline = Instant::now() + LOCK_PATIENCE;
        loop {
            match word.swap(2, Ordering::Acquire) {
                0 => return Ok(()),
                1 | 2 => {}
                _ => {
                    return Err(
                        "payload region is corrupt: its lock word holds an impossible value",
                    )
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(
                    "payload region is corrupt: its lock was held for longer than any holder could (2 s)",
                );
            }
            scope.wait_timeout(word, 2, left);
        }
    }

    /// Reads and checks `TOP` and `COMMITTED` (lock held).
    fn snapshot(&self) -> Result<Snapshot, String> {
        let committed = to_usize(self.h64(H_COMMITTED).load(Ordering::Relaxed));
        let top = to_usize(self.h64(H_TOP).load(Ordering::Relaxed));
        if !(HEADER_BYTES..=self.max_len).contains(&committed) {
            return Err(format!(
                "payload region header is corrupt (committed {committed})"
            ));
        }
        // Never past what this process knows to be accessible, whatever the
        // header claims.
        let limit = align_down(committed.min(self.known()));
        if !top.is_multiple_of(ALIGN) || !(HEADER_BYTES..=limit).contains(&top) {
            return Err(format!("payload region header is corrupt (top {top})"));
        }
        Ok(Snapshot { limit, top })
    }

    fn free_head(&self) -> usize {
        to_usize(self.h64(H_FREE_HEAD).load(Ordering::Relaxed))
    }

    /// Sets the link that points at a list position: `prev`'s NEXT, or the
    /// list head when `prev` is `None`.
    fn set_link(&self, prev: Option<Blk>, to: usize) {
        match prev {
            Some(p) => self.set_next(p, to),
            None => self.h64(H_FREE_HEAD).store(to as u64, Ordering::Relaxed),
        }
    }

    fn add_live(&self, delta: i64) {
        let live = self.h64(H_LIVE);
        let v = live.load(Ordering::Relaxed).saturating_add_signed(delta);
        live.store(v, Ordering::Relaxed);
    }

    /// Follows one free-list link: `Ok(None)` at the end, `Err` if the link
    /// is not a valid free block at or above `min` (address order makes
    /// every walk strictly increasing, hence finite).
    fn free_list_entry(
        &self,
        top: usize,
        min: usize,
        link: usize,
    ) -> Result<Option<(Blk, usize)>, ()> {
        if link == 0 {
            return Ok(None);
        }
        if link < min {
            return Err(());
        }
        let b = blk(link, top).ok_or(())?;
        match self.read_block(b, top) {
            Some((size, STATE_FREE)) => Ok(Some((b, size))),
            _ => Err(()),
        }
    }

    /// A block's `(size, state)` if its header is self-consistent and the
    /// block lies below `top`.
    fn read_block(&self, b: Blk, top: usize) -> Option<(usize, u32)> {
        let size = to_usize(self.b64(b, B_SIZE).load(Ordering::Relaxed));
        let state = self.b32(b, B_STATE).load(Ordering::Relaxed);
        let check = self.b32(b, B_CHECK).load(Ordering::Relaxed);
        let fits = b.0.checked_add(size).is_some_and(|end| end <= top);
        (size.is_multiple_of(ALIGN)
            && size >= MIN_BLOCK
            && fits
            && check == check_word(b.0, size, state))
        .then_some((size, state))
    }

    fn write_block(&self, b: Blk, size: usize, state: u32) {
        self.b64(b, B_SIZE).store(size as u64, Ordering::Relaxed);
        self.b32(b, B_STATE).store(state, Ordering::Relaxed);
        self.b32(b, B_CHECK)
            .store(check_word(b.0, size, state), Ordering::Relaxed);
    }

    fn next(&self, b: Blk) -> usize {
        to_usize(self.b64(b, B_NEXT).load(Ordering::Relaxed))
    }

    fn set_next(&self, b: Blk, to: usize) {
        self.b64(b, B_NEXT).store(to as u64, Ordering::Relaxed);
    }

    /// Header word at byte `field` (a constant below `HEADER_BYTES`).
    fn h32(&self, field: usize) -> &AtomicU32 {
        debug_assert!(self.max_len != 0 && field.is_multiple_of(4) && field + 4 <= HEADER_BYTES);
        // SAFETY: only called on a live arena (max_len != 0), whose base is
        // non-null, 8-aligned, and has at least HEADER_BYTES committed
        // (checked by `init`/required by `attach`); `field` is a 4-aligned
        // constant inside the header, so the pointer is aligned and in
        // bounds for the arena's lifetime. All accesses to it are atomic.
        unsafe { AtomicU32::from_ptr(self.base.add(field).cast()) }
    }

    /// Header u64 at byte `field` (a constant below `HEADER_BYTES`).
    fn h64(&self, field: usize) -> &AtomicU64 {
        debug_assert!(self.max_len != 0 && field.is_multiple_of(8) && field + 8 <= HEADER_BYTES);
        // SAFETY: as in `h32`, with `field` an 8-aligned constant inside the
        // header and the base 8-aligned.
        unsafe { AtomicU64::from_ptr(self.base.add(field).cast()) }
    }

    /// u32 at byte `field` of block `b` (`field + 4 <= MIN_BLOCK`).
    fn b32(&self, b: Blk, field: usize) -> &AtomicU32 {
        debug_assert!(field.is_multiple_of(4) && field + 4 <= MIN_BLOCK);
        // SAFETY: a `Blk` is 16-aligned with MIN_BLOCK bytes below a bound
        // that was at most the committed length, and committed memory stays
        // mapped and never shrinks, so `b + field .. b + field + 4` is in
        // bounds; base (8-aligned) + 16k + 4-aligned field is 4-aligned.
        unsafe { AtomicU32::from_ptr(self.base.add(b.0 + field).cast()) }
    }

    /// u64 at byte `field` of block `b` (`field + 8 <= MIN_BLOCK`).
    fn b64(&self, b: Blk, field: usize) -> &AtomicU64 {
        debug_assert!(field.is_multiple_of(8) && field + 8 <= MIN_BLOCK);
        // SAFETY: as in `b32`, with an 8-aligned field inside the first
        // MIN_BLOCK bytes of the block.
        unsafe { AtomicU64::from_ptr(self.base.add(b.0 + field).cast()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use std::thread;

    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;

    /// A heap region (u64 words, so the base is 8-aligned).
    struct Region {
        words: Vec<u64>,
    }

    impl Region {
        fn new(bytes: usize) -> Region {
            Region {
                words: vec![0; bytes.div_ceil(8)],
            }
        }
        fn base(&mut self) -> *mut u8 {
            self.words.as_mut_ptr().cast()
        }
        fn len(&self) -> usize {
            self.words.len() * 8
        }
        fn init(&mut self, committed: usize) -> Arena {
            let len = self.len();
            // SAFETY: the Vec outlives every arena in the test and is `len`
            // bytes long, all of it accessible.
            unsafe {
                let a = Arena::init(self.base(), committed, len);
                a.mapped(len);
                a
            }
        }
        fn attach(&mut self) -> Arena {
            let len = self.len();
            // SAFETY: as in `init`.
            unsafe { Arena::attach(self.base(), len, len) }.unwrap()
        }
    }

    /// Xorshift64*: deterministic pseudo-random numbers for the tests.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    fn all_free(a: &Arena) -> ArenaStats {
        let committed = a.committed();
        let whole = align_down(committed) - HEADER_BYTES;
        ArenaStats {
            committed,
            free_bytes: whole,
            live_blocks: 0,
            largest_free: whole,
        }
    }

    fn write(base: *mut u8, off: usize, len: usize, byte: u8) {
        // SAFETY: the test owns the live block [off, off + len) inside the
        // region buffer.
        unsafe { ptr::write_bytes(base.add(off), byte, len) }
    }

    fn intact(base: *mut u8, off: usize, reference: &[u8]) -> bool {
        // SAFETY: as in `write`; nobody else writes this block meanwhile.
        let got = unsafe { std::slice::from_raw_parts(base.add(off), reference.len()) };
        got == reference
    }

    #[test]
    fn round_trip() {
        let mut r = Region::new(MIB);
        let base = r.base();
        let a = r.init(MIB);
        assert_eq!(a.stats(), all_free(&a));
        let x = a.alloc(1000).unwrap();
        let y = a.alloc(5000).unwrap();
        assert_eq!(x, HEADER_BYTES + BLOCK_HEADER);
        assert!(y >= x + 1000);
        write(base, x, 1000, 0xaa);
        write(base, y, 5000, 0xbb);
        assert!(intact(base, x, &[0xaa; 1000]));
        assert!(intact(base, y, &[0xbb; 5000]));
        let s = a.stats();
        assert_eq!(s.live_blocks, 2);
        assert_eq!(
            s.free_bytes,
            all_free(&a).free_bytes - (1008 + 16) - (5008 + 16)
        );
        a.verify().unwrap();
        a.free(x).unwrap();
        a.verify().unwrap();
        a.free(y).unwrap();
        a.verify().unwrap();
        assert_eq!(a.stats(), all_free(&a));
        // The space is reused.
        assert_eq!(a.alloc(3000).unwrap(), x);
    }

    #[test]
    fn alignment_and_bounds() {
        let mut r = Region::new(4 * MIB);
        let a = r.init(4 * MIB);
        let mut rng = Rng(7);
        let mut live = Vec::new();
        for len in (0..200).chain((0..300).map(|_| 1 + rng.below(20 * KIB))) {
            let off = a.alloc(len).unwrap();
            assert_eq!(off % ALIGN, 0);
            assert!(off >= HEADER_BYTES + BLOCK_HEADER);
            assert!(off + len <= a.committed());
            live.push((off, len));
        }
        live.sort_unstable();
        for w in live.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "blocks overlap: {w:?}");
        }
        a.verify().unwrap();
        for (off, _) in live {
            a.free(off).unwrap();
        }
        assert_eq!(a.stats(), all_free(&a));
    }

    #[test]
    fn split_and_coalesce() {
        let mut r = Region::new(MIB);
        // Six 4016-byte blocks and 1 KiB of wilderness.
        let a = r.init(HEADER_BYTES + 6 * 4016 + 1024);
        let blocks: Vec<usize> = (0..6).map(|_| a.alloc(4000).unwrap()).collect();
        let step = blocks[1] - blocks[0];
        assert_eq!(step, 4016);

        // Split: a small request reuses the front of a freed block.
        a.free(blocks[1]).unwrap();
        let small = a.alloc(1000).unwrap();
        assert_eq!(small, blocks[1]);
        let s = a.stats();
        assert_eq!(s.live_blocks, 6);
        a.verify().unwrap();
        // The remainder of the split is found by the next fitting request.
        let rest = a.alloc(2000).unwrap();
        assert_eq!(rest, blocks[1] + 1024);
        a.free(rest).unwrap();
        a.free(small).unwrap();

        // Coalesce: free 2 and 4, then 3 joins them into one span (and 1).
        a.free(blocks[2]).unwrap();
        a.free(blocks[4]).unwrap();
        a.verify().unwrap();
        a.free(blocks[3]).unwrap();
        a.verify().unwrap();
        let s = a.stats();
        assert_eq!(s.largest_free, 4 * step);
        assert_eq!(s.free_bytes, 4 * step + 1024);
        assert_eq!(s.live_blocks, 2);
        // The merged span holds a request bigger than any one original block.
        let big = a.alloc(4 * step - BLOCK_HEADER).unwrap();
        assert_eq!(big, blocks[1]);
        a.free(big).unwrap();

        // Freeing the last block merges everything back into the wilderness.
        a.free(blocks[5]).unwrap();
        a.free(blocks[0]).unwrap();
        a.verify().unwrap();
        assert_eq!(a.stats(), all_free(&a));
    }

    #[test]
    fn tiny_remainder_is_not_split() {
        let mut r = Region::new(MIB);
        let a = r.init(MIB);
        let x = a.alloc(1000).unwrap(); // 1024-byte block
        let guard = a.alloc(100).unwrap();
        a.free(x).unwrap();
        // A 992-byte request needs 1008 bytes; the 16 left over are less
        // than MIN_BLOCK, so the whole 1024-byte block is taken.
        let y = a.alloc(992).unwrap();
        assert_eq!(y, x);
        a.verify().unwrap();
        assert_eq!(a.stats().live_blocks, 2);
        a.free(y).unwrap();
        a.free(guard).unwrap();
        assert_eq!(a.stats(), all_free(&a));
    }

    #[test]
    fn need_grow_then_extend() {
        let mut r = Region::new(MIB);
        let a = r.init(4 * KIB);
        let x = a.alloc(3000).unwrap();
        let err = a.alloc(3000).unwrap_err();
        let min = x - BLOCK_HEADER + 3024 + 3024;
        assert_eq!(err, AllocError::NeedGrow { min_committed: min });
        // One byte short is still too small: the value is exact.
        a.extend(min - 1).unwrap();
        assert_eq!(
            a.alloc(3000),
            Err(AllocError::NeedGrow { min_committed: min })
        );
        a.extend(min).unwrap();
        let y = a.alloc(3000).unwrap();
        assert_eq!(y, x + 3024);
        assert_eq!(a.committed(), min);
        // A freed block at the end of the list merges with the wilderness.
        a.free(y).unwrap();
        a.free(x).unwrap();
        assert_eq!(a.stats(), all_free(&a));

        // The caller's loop: grow to max(2 * committed, min), capped.
        let mut grows = 0;
        let off = loop {
            match a.alloc(200 * KIB) {
                Ok(off) => break off,
                Err(AllocError::NeedGrow { min_committed }) => {
                    let target = (2 * a.committed()).max(min_committed).min(r.len());
                    a.extend(target).unwrap();
                    grows += 1;
                }
                Err(e) => panic!("{e}"),
            }
        };
        assert_eq!(grows, 1);
        assert!(off + 200 * KIB <= a.committed());
        a.free(off).unwrap();
        a.verify().unwrap();
    }

    #[test]
    fn too_large() {
        let mut r = Region::new(MIB);
        let a = r.init(64 * KIB);
        let max = MIB - HEADER_BYTES - BLOCK_HEADER;
        assert_eq!(
            a.alloc(max + 1),
            Err(AllocError::TooLarge {
                requested: max + 1,
                max
            })
        );
        assert_eq!(
            a.alloc(usize::MAX),
            Err(AllocError::TooLarge {
                requested: usize::MAX,
                max
            })
        );
        // The largest request fits an empty region grown to max_len.
        assert_eq!(
            a.alloc(max),
            Err(AllocError::NeedGrow { min_committed: MIB })
        );
        a.extend(MIB).unwrap();
        let off = a.alloc(max).unwrap();
        assert_eq!(off + max, MIB);
        // Full: too large *now*, with requested <= max.
        assert_eq!(
            a.alloc(16),
            Err(AllocError::TooLarge { requested: 16, max })
        );
        a.free(off).unwrap();
        assert_eq!(a.stats(), all_free(&a));
        assert!(AllocError::TooLarge { requested: 16, max }
            .to_string()
            .contains("full"));
    }

    #[test]
    fn double_free_and_garbage_rejected() {
        let mut r = Region::new(MIB);
        let base = r.base();
        let a = r.init(MIB);
        let x = a.alloc(2000).unwrap();
        let y = a.alloc(2000).unwrap();
        let z = a.alloc(2000).unwrap();
        for bad in [
            0,
            1,
            HEADER_BYTES,
            x + 1,
            x + 16,
            x + 1024,
            z + 4096,
            MIB - 16,
            MIB,
            2 * MIB,
            usize::MAX,
            usize::MAX & !15,
        ] {
            assert!(a.free(bad).is_err(), "free({bad}) accepted");
        }
        // A forged header inside a payload: right magic, wrong check word.
        // SAFETY: [y, y + 2000) is our live block.
        unsafe {
            ptr::write(base.add(y + 512).cast::<u64>(), 512);
            ptr::write(base.add(y + 520).cast::<u32>(), STATE_USED);
            ptr::write(base.add(y + 524).cast::<u32>(), 0);
        }
        assert!(a.free(y + 528).is_err());
        a.verify().unwrap();

        a.free(y).unwrap();
        let e = a.free(y).unwrap_err();
        assert!(e.contains("double free"), "{e}");
        // Merged into a neighbour: the header is dead, still rejected.
        a.free(x).unwrap();
        assert!(a.free(y).is_err());
        assert!(a.free(x).is_err());
        // Returned to the wilderness: now past top.
        a.free(z).unwrap();
        assert!(a.free(z).is_err());
        a.verify().unwrap();
        assert_eq!(a.stats(), all_free(&a));
        // Nothing was corrupted: the arena still works.
        let w = a.alloc(5000).unwrap();
        a.free(w).unwrap();
        assert_eq!(a.stats(), all_free(&a));
    }

    #[test]
    fn extend_idempotent_and_bounded() {
        let mut r = Region::new(MIB);
        let a = r.init(64 * KIB);
        a.extend(128 * KIB).unwrap();
        a.extend(128 * KIB).unwrap();
        assert_eq!(a.committed(), 128 * KIB);
        a.extend(64 * KIB).unwrap();
        a.extend(0).unwrap();
        assert_eq!(a.committed(), 128 * KIB);
        assert!(a.extend(MIB + 1).is_err());
        assert_eq!(a.committed(), 128 * KIB);
        a.extend(MIB).unwrap();
        assert_eq!(a.committed(), MIB);
        assert_eq!(a.stats(), all_free(&a));
        // A committed length that is not a multiple of 16.
        let mut r2 = Region::new(MIB);
        let b = r2.init(1000);
        assert_eq!(b.committed(), 1000);
        assert_eq!(b.stats().free_bytes, 992 - HEADER_BYTES);
        b.extend(5001).unwrap();
        let off = b.alloc(4000).unwrap();
        assert!(off + 4000 <= 5001);
        b.free(off).unwrap();
        assert_eq!(b.stats(), all_free(&b));
    }

    #[test]
    fn two_arenas_share_one_region() {
        let mut r = Region::new(MIB);
        let a = r.init(16 * KIB);
        let b = r.attach();
        let x = a.alloc(6000).unwrap();
        let y = b.alloc(6000).unwrap();
        assert_ne!(x, y);
        assert_eq!(a.stats(), b.stats());
        assert_eq!(a.stats().live_blocks, 2);
        // Growth through one is seen by the other.
        let Err(AllocError::NeedGrow { min_committed }) = b.alloc(6000) else {
            panic!("expected NeedGrow");
        };
        a.extend(min_committed).unwrap();
        assert_eq!(b.committed(), min_committed);
        let z = b.alloc(6000).unwrap();
        // Frees cross over.
        b.free(x).unwrap();
        a.free(y).unwrap();
        assert!(b.free(y).is_err());
        a.free(z).unwrap();
        a.verify().unwrap();
        assert_eq!(b.stats(), all_free(&b));
        assert_eq!(a.stats(), b.stats());
    }

    #[test]
    fn attach_checks() {
        let mut r = Region::new(MIB);
        let len = r.len();
        let base = r.base();
        // SAFETY: the buffer is `len` bytes and outlives the call.
        let unformatted = unsafe { Arena::attach(base, len, len) };
        assert!(unformatted.is_err(), "no magic yet");
        // SAFETY: as above.
        assert!(unsafe { Arena::attach(ptr::null_mut(), len, len) }.is_err());
        // SAFETY: as above; misaligned base is rejected before any access.
        assert!(unsafe { Arena::attach(base.add(4), len - 8, len - 8) }.is_err());
        let _a = r.init(64 * KIB);
        // SAFETY: as above.
        let smaller = unsafe { Arena::attach(base, len / 2, len / 2) };
        assert!(smaller.is_err(), "smaller max_len");
        // SAFETY: as above.
        assert!(unsafe { Arena::attach(base, 10, 10) }.is_err());
        // SAFETY: as above.
        let b = unsafe { Arena::attach(base, len, len) }.unwrap();
        assert_eq!(b.committed(), 64 * KIB);
    }

    #[test]
    fn bad_init_gives_inert_arena() {
        let mut r = Region::new(4 * KIB);
        let len = r.len();
        let base = r.base();
        // SAFETY: inert arenas never touch memory; the others are in bounds.
        let inert = unsafe {
            [
                Arena::init(ptr::null_mut(), 1024, 4096),
                Arena::init(base, 32, len),
                Arena::init(base.add(4), 1024, len - 8),
                Arena::init(base, 1024, usize::MAX),
            ]
        };
        for a in &inert {
            assert_eq!(a.committed(), 0);
            assert_eq!(
                a.alloc(100),
                Err(AllocError::TooLarge {
                    requested: 100,
                    max: 0
                })
            );
            assert!(a.free(HEADER_BYTES + BLOCK_HEADER).is_err());
            assert!(a.extend(2048).is_err());
            assert_eq!(a.stats(), ArenaStats::default());
            assert!(a.verify().is_err());
        }
        // committed > max_len is clamped.
        // SAFETY: the buffer is `len` bytes.
        let a = unsafe { Arena::init(base, 10 * len, len) };
        assert_eq!(a.committed(), len);
    }

    #[test]
    fn corrupt_header_is_reported_not_followed() {
        let mut r = Region::new(MIB);
        let base = r.base();
        let a = r.init(MIB);
        let x = a.alloc(1000).unwrap();
        let y = a.alloc(1000).unwrap();
        let _z = a.alloc(1000).unwrap();
        a.free(x).unwrap();
        // Scribble a bogus free-list head (what a stray JS write could do).
        // SAFETY: the header is committed and not in use by another thread.
        unsafe { ptr::write(base.add(H_FREE_HEAD).cast::<u64>(), 7 * MIB as u64) };
        assert!(a.free(y).is_err());
        assert!(a.verify().is_err());
        // alloc skips the broken list and still carves from the wilderness.
        let w = a.alloc(1000).unwrap();
        assert!(w > y);
        // SAFETY: as above.
        unsafe { ptr::write(base.add(H_TOP).cast::<u64>(), u64::MAX) };
        assert!(matches!(a.alloc(10), Err(AllocError::Corrupt(_))));
        assert!(a.free(w).is_err());
    }

    #[test]
    fn forged_committed_never_leads_past_the_known_length() {
        // The region is 1 MiB, but only 64 KiB are accessible (a growable
        // buffer's committed part): a header claiming 1 MiB must not make
        // the arena carve (and write block headers) past 64 KiB.
        let mut r = Region::new(MIB);
        let base = r.base();
        // SAFETY: the whole Vec is accessible; the arena is told 64 KiB are.
        let a = unsafe { Arena::init(base, 64 * KIB, MIB) };
        // SAFETY: as above; the header is not in use by another thread.
        unsafe { ptr::write(base.add(H_COMMITTED).cast::<u64>(), MIB as u64) };
        // Mark the bytes past 64 KiB: nothing may write there.
        // SAFETY: in bounds of the Vec.
        unsafe { ptr::write_bytes(base.add(64 * KIB), 0xA5, MIB - 64 * KIB) };
        let x = a.alloc(40 * KIB).unwrap();
        assert!(x + 40 * KIB <= 64 * KIB);
        assert!(matches!(
            a.alloc(40 * KIB),
            Err(AllocError::NeedGrow { .. })
        ));
        assert!(a.committed() <= 64 * KIB);
        // SAFETY: in bounds of the Vec.
        let tail = unsafe { std::slice::from_raw_parts(base.add(64 * KIB), MIB - 64 * KIB) };
        assert!(
            tail.iter().all(|&b| b == 0xA5),
            "wrote past the known length"
        );
        // A freed offset past the known length is refused, not followed.
        assert!(a.free(512 * KIB).is_err());
        // Once more memory is known accessible, it is used.
        // SAFETY: the Vec is MIB bytes.
        unsafe { a.mapped(MIB) };
        assert!(a.alloc(40 * KIB).is_ok());
    }

    #[test]
    fn a_fresh_format_forgets_what_an_earlier_region_at_its_address_had() {
        // A region at this address grew to 1 MiB, and an arena over it was
        // never dropped (a worker isolate torn down without finalizers, as
        // Deno does). Its memory went, and a new region of 64 KiB now sits
        // at the same address: a header forged to claim 1 MiB must not make
        // the new arena carve past 64 KiB on the old region's word. (Found
        // by region-fuzz.test.mjs on Deno: SIGSEGV in `alloc`, 1 run in ~20.)
        let mut r = Region::new(MIB);
        let base = r.base();
        let old = r.init(MIB);
        // SAFETY: the Vec is MIB bytes.
        unsafe { old.mapped(MIB) };
        // SAFETY: the whole Vec is accessible; the new arena is told 64 KiB are.
        let a = unsafe { Arena::init(base, 64 * KIB, MIB) };
        // SAFETY: as above; a worker's view of the new region is 64 KiB.
        let joined = unsafe { Arena::attach(base, 64 * KIB, MIB) }.unwrap();
        for forged in [H_COMMITTED, H_MAX_LEN] {
            // SAFETY: the header is committed and not in use by another thread.
            unsafe { ptr::write(base.add(forged).cast::<u64>(), MIB as u64) };
        }
        // SAFETY: as above; a top past the 64 KiB, inside the old region's.
        unsafe { ptr::write(base.add(H_TOP).cast::<u64>(), (96 * KIB) as u64) };
        for arena in [&a, &joined] {
            assert!(matches!(arena.alloc(10), Err(AllocError::Corrupt(_))));
        }
        // SAFETY: as above.
        unsafe { ptr::write(base.add(H_TOP).cast::<u64>(), (64 * KIB - 48) as u64) };
        assert!(a.alloc(10).is_ok(), "the new region's own bytes are used");
        drop(old);
    }

    #[test]
    fn broken_lock_word_is_an_error_not_a_hang() {
        let mut r = Region::new(MIB);
        let base = r.base();
        let a = r.init(MIB);
        let lock = a.h32(H_LOCK);
        // An impossible value: refused at once, and from then on.
        lock.store(0xffff_fff0, Ordering::Relaxed);
        assert!(matches!(a.alloc(10), Err(AllocError::Corrupt(_))));
        assert!(a.is_corrupt());
        let t0 = Instant::now();
        assert!(a.free(HEADER_BYTES + BLOCK_HEADER).is_err());
        assert!(a.extend(MIB).is_err());
        assert_eq!(a.stats(), ArenaStats::default());
        assert!(
            t0.elapsed() < LOCK_PATIENCE,
            "a known-corrupt region fails at once"
        );
        // A fresh format clears the mark.
        drop(a);
        let b = r.init(MIB);
        assert!(!b.is_corrupt());
        // A lock "held" forever (1 stored by someone who never unlocks):
        // the wait ends after LOCK_PATIENCE with an error.
        b.h32(H_LOCK).store(1, Ordering::Relaxed);
        let t0 = Instant::now();
        assert!(matches!(b.alloc(10), Err(AllocError::Corrupt(_))));
        assert!(t0.elapsed() >= LOCK_PATIENCE);
        let _ = base;
    }

    #[test]
    fn random_single_thread_fragmentation() {
        let mut r = Region::new(4 * MIB);
        let a = r.init(4 * MIB);
        let mut rng = Rng(0x1234_5678);
        let mut live: Vec<usize> = Vec::new();
        let mut failures = 0;
        for i in 0..20_000 {
            if live.len() < 64 && (live.is_empty() || rng.below(2) == 0) {
                let cap = if rng.below(4) == 0 {
                    256 * KIB
                } else {
                    8 * KIB
                };
                let len = 1 + rng.below(cap);
                match a.alloc(len) {
                    Ok(off) => live.push(off),
                    Err(_) => failures += 1,
                }
            } else {
                let k = rng.below(live.len());
                a.free(live.swap_remove(k)).unwrap();
            }
            if i % 1000 == 0 {
                a.verify().unwrap();
            }
        }
        // At most 64 live blocks of < 256 KiB in 4 MiB: the region must not
        // fragment into uselessness.
        eprintln!("fragmentation: {failures} failures, {:?}", a.stats());
        assert!(failures < 100, "{failures} allocation failures");
        for off in live {
            a.free(off).unwrap();
        }
        a.verify().unwrap();
        assert_eq!(a.stats(), all_free(&a));
    }

    #[test]
    fn lock_excludes() {
        let mut r = Region::new(64 * KIB);
        let a = Arc::new(r.init(64 * KIB));
        let counter = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let a = Arc::clone(&a);
                let counter = Arc::clone(&counter);
                thread::spawn(move || {
                    for _ in 0..20_000 {
                        let _g = a.lock().unwrap();
                        // A non-atomic read-modify-write made atomic by the lock.
                        let v = counter.load(Ordering::Relaxed);
                        counter.store(v + 1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(counter.load(Ordering::Relaxed), 80_000);
        assert_eq!(a.h32(H_LOCK).load(Ordering::Relaxed), 0);
        drop(r);
    }

    #[test]
    fn lock_sleepers_are_woken() {
        let mut r = Region::new(MIB);
        let a = Arc::new(r.init(MIB));
        let guard = a.lock().unwrap();
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let a = Arc::clone(&a);
                thread::spawn(move || {
                    for _ in 0..100 {
                        let off = a.alloc(1000).unwrap();
                        a.free(off).unwrap();
                    }
                })
            })
            .collect();
        // The others exhaust their spin and go to sleep, marking the word.
        let word = a.h32(H_LOCK);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while word.load(Ordering::Relaxed) != 2 && std::time::Instant::now() < deadline {
            thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(word.load(Ordering::Relaxed), 2);
        thread::sleep(std::time::Duration::from_millis(20));
        drop(guard);
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(word.load(Ordering::Relaxed), 0);
        assert_eq!(a.stats(), all_free(&a));
        drop(r);
    }

    #[test]
    fn multithreaded_stress() {
        const THREADS: usize = 4;
        const CYCLES: usize = 20_000;
        const SLOTS: usize = 8;
        const MAX_SIZE: usize = 64 * KIB;
        const REGION: usize = 4 * MIB;

        let mut r = Region::new(REGION);
        let base = r.base() as usize;
        let main = r.init(64 * KIB);
        let grow = Arc::new(Mutex::new(()));

        let workers: Vec<_> = (0..THREADS)
            .map(|tid| {
                let grow = Arc::clone(&grow);
                thread::spawn(move || {
                    let base = base as *mut u8;
                    // SAFETY: the region Vec outlives the threads (joined
                    // below) and is REGION bytes long.
                    let a = unsafe { Arena::attach(base, REGION, REGION) }.unwrap();
                    let mut rng = Rng(0x9e37_79b9 + tid as u64);
                    // A byte unique to (thread, slot): overlapping live blocks
                    // of any two owners corrupt each other's pattern.
                    let refs: Vec<Vec<u8>> = (0..SLOTS)
                        .map(|s| vec![(1 + tid * SLOTS + s) as u8; MAX_SIZE])
                        .collect();
                    let mut slots: [Option<(usize, usize)>; SLOTS] = [None; SLOTS];
                    let (mut allocs, mut grows, mut full) = (0, 0, 0);
                    let check_and_free = |slot: &mut Option<(usize, usize)>, s: usize| {
                        let (off, len) = slot.take().unwrap();
                        assert!(intact(base, off, &refs[s][..len]), "block overwritten");
                        a.free(off).unwrap();
                    };
                    while allocs < CYCLES {
                        let s = rng.below(SLOTS);
                        if slots[s].is_some() {
                            check_and_free(&mut slots[s], s);
                            continue;
                        }
                        let len = 1 + rng.below(MAX_SIZE);
                        match a.alloc(len) {
                            Ok(off) => {
                                assert_eq!(off % ALIGN, 0);
                                write(base, off, len, refs[s][0]);
                                slots[s] = Some((off, len));
                                allocs += 1;
                            }
                            Err(AllocError::NeedGrow { min_committed }) => {
                                let _g = grow.lock().unwrap();
                                let target = (2 * a.committed()).max(min_committed).min(REGION);
                                a.extend(target).unwrap();
                                grows += 1;
                            }
                            Err(AllocError::TooLarge { requested, max }) => {
                                assert!(requested <= max);
                                // Full right now: free one of ours, or wait.
                                full += 1;
                                match slots.iter().position(Option::is_some) {
                                    Some(k) => check_and_free(&mut slots[k], k),
                                    None => thread::yield_now(),
                                }
                            }
                            Err(AllocError::Corrupt(why)) => panic!("{why}"),
                        }
                    }
                    for (s, slot) in slots.iter_mut().enumerate() {
                        if slot.is_some() {
                            check_and_free(slot, s);
                        }
                    }
                    (grows, full)
                })
            })
            .collect();
        let results: Vec<(usize, usize)> = workers.into_iter().map(|t| t.join().unwrap()).collect();
        let grows: usize = results.iter().map(|r| r.0).sum();
        let full: usize = results.iter().map(|r| r.1).sum();
        eprintln!(
            "stress: {grows} grows, {full} full-region retries, {:?}",
            main.stats()
        );
        assert!(grows > 0, "the test should exercise NeedGrow");
        main.verify().unwrap();
        let s = main.stats();
        assert_eq!(s, all_free(&main));
        assert_eq!(s.live_blocks, 0);
        assert!(s.committed > 64 * KIB && s.committed <= REGION);
        drop(r);
    }

    fn word32(base: *mut u8, off: usize) -> u32 {
        // SAFETY: `off` is a 4-aligned offset inside the test's region
        // buffer; only this thread uses the region.
        unsafe { AtomicU32::from_ptr(base.add(off).cast()) }.load(Ordering::Acquire)
    }

    #[test]
    fn region_round_trip_and_header_words() {
        let mut r = Region::new(MIB);
        let base = r.base();
        let a = r.init(MIB);
        let x = a.alloc_region(1000, 7).unwrap();
        assert_eq!(x, HEADER_BYTES + BLOCK_HEADER);
        assert_eq!(word32(base, x), (1 << 12) | 7, "generation 1, holder 7");
        assert_eq!(word32(base, x + 4), 1000);
        assert_eq!(word32(base, x + 8), 0);
        assert_eq!(word32(base, x + 12), 0);
        let data = a.region_data(x, 1000).unwrap();
        assert_eq!(data, x + REGION_HEADER);
        assert!(data.is_multiple_of(ALIGN));
        write(base, data, 1000, 0x5a);
        let y = a.alloc_region(10, 0x1234).unwrap();
        assert_eq!(
            word32(base, y),
            (2 << 12) | 0x234,
            "holder masked to 12 bits"
        );
        assert!(
            intact(base, data, &[0x5a; 1000]),
            "the second region left the first alone"
        );
        assert_eq!(a.stats().live_blocks, 2);
        a.verify().unwrap();
        a.free(x).unwrap();
        assert_eq!(
            word32(base, x),
            0,
            "a freed region's STATE no longer names it"
        );
        a.free(y).unwrap();
        a.verify().unwrap();
        assert_eq!(a.stats(), all_free(&a));
        assert!(a.free(y).is_err(), "double free of a region refused");
    }

    #[test]
    fn region_blocks_split_and_coalesce_like_payload_blocks() {
        let mut r = Region::new(MIB);
        let a = r.init(MIB);
        let p = a.alloc(100).unwrap();
        let g = a.alloc_region(200, 1).unwrap();
        let q = a.alloc(100).unwrap();
        let h = a.alloc_region(300, 1).unwrap();
        let _tail = a.alloc(16).unwrap();
        a.free(g).unwrap();
        a.free(p).unwrap(); // merges with the freed region block
        a.verify().unwrap();
        // The merged span takes a block as large as both.
        let big = a.alloc(100 + 16 + 200 + REGION_HEADER).unwrap();
        assert_eq!(big, p);
        a.free(big).unwrap();
        a.free(q).unwrap();
        a.free(h).unwrap();
        a.verify().unwrap();
        assert_eq!(a.stats().live_blocks, 1);
        // A region block reuses a freed payload block's space.
        assert_eq!(a.alloc_region(100, 2).unwrap(), p);
        a.verify().unwrap();
    }

    #[test]
    fn regions_lists_exactly_the_live_region_blocks() {
        let mut r = Region::new(MIB);
        let a = r.init(MIB);
        assert_eq!(a.regions().unwrap(), Vec::<usize>::new());
        let p = a.alloc(64).unwrap();
        let g = a.alloc_region(64, 1).unwrap();
        let q = a.alloc(64).unwrap();
        let h = a.alloc_region(0, 2).unwrap();
        let k = a.alloc_region(5000, 3).unwrap();
        assert_eq!(a.regions().unwrap(), vec![g, h, k]);
        a.free(h).unwrap();
        a.free(p).unwrap();
        assert_eq!(a.regions().unwrap(), vec![g, k]);
        a.free(g).unwrap();
        a.free(k).unwrap();
        assert_eq!(a.regions().unwrap(), Vec::<usize>::new());
        a.free(q).unwrap();
        assert_eq!(a.regions().unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn regions_refuses_a_forged_block_header() {
        let mut r = Region::new(MIB);
        let base = r.base();
        let a = r.init(MIB);
        let g = a.alloc_region(64, 1).unwrap();
        let _h = a.alloc_region(64, 1).unwrap();
        // Task code overwrites the first block's SIZE (a zero size would
        // otherwise loop forever).
        // SAFETY: inside the test's region buffer; only this thread uses it.
        unsafe { ptr::write_bytes(base.add(g - BLOCK_HEADER), 0, 8) };
        assert!(a.regions().unwrap_err().contains("corrupt"));
        assert!(a.region_data(g, 1).is_err());
    }

    #[test]
    fn region_data_refusals() {
        let mut r = Region::new(MIB);
        let a = r.init(MIB);
        let p = a.alloc(256).unwrap();
        let g = a.alloc_region(100, 1).unwrap();
        let freed = a.alloc_region(100, 1).unwrap();
        let _keep = a.alloc(16).unwrap();
        a.free(freed).unwrap();
        assert!(
            a.region_data(p, 1).is_err(),
            "a payload block is not a region"
        );
        assert!(a.region_data(freed, 1).is_err(), "a freed region");
        // Block of 100 + 16 rounded to 128 usable bytes: 112 data bytes.
        assert_eq!(a.region_data(g, 112).unwrap(), g + REGION_HEADER);
        assert!(a.region_data(g, 113).unwrap_err().contains("do not fit"));
        assert!(a.region_data(g, usize::MAX).is_err());
        for garbage in [0, 8, 16, 64, g + 16, g + 1, MIB, usize::MAX - 15] {
            assert!(a.region_data(garbage, 0).is_err(), "offset {garbage}");
        }
        assert_eq!(a.region_data(g, 0).unwrap(), g + REGION_HEADER);
    }

    #[test]
    fn region_generation_increments_and_skips_zero() {
        let mut r = Region::new(64 * KIB);
        let base = r.base();
        let a = r.init(64 * KIB);
        // SAFETY: the header's REGION_GEN word, inside the test's buffer.
        let counter = unsafe { AtomicU32::from_ptr(base.add(H_REGION_GEN).cast()) };
        counter.store(GEN_MASK - 1, Ordering::Relaxed);
        let mut gens = Vec::new();
        for _ in 0..3 {
            let g = a.alloc_region(8, 5).unwrap();
            gens.push(word32(base, g) >> 12);
            assert_eq!(word32(base, g) & 0xfff, 5);
            a.free(g).unwrap();
        }
        assert_eq!(gens, vec![GEN_MASK, 1, 2], "wraps within 20 bits, never 0");
    }

    #[test]
    fn region_too_large_and_full() {
        let mut r = Region::new(64 * KIB);
        let a = r.init(64 * KIB);
        let max = a.max_region_request();
        assert_eq!(max, a.max_request() - REGION_HEADER);
        assert_eq!(
            a.alloc_region(max + 1, 0),
            Err(AllocError::TooLarge {
                requested: max + 1,
                max
            })
        );
        let g = a.alloc_region(max, 0).unwrap();
        assert_eq!(a.region_data(g, max).unwrap(), g + REGION_HEADER);
        assert!(matches!(
            a.alloc_region(1, 0),
            Err(AllocError::TooLarge { requested: 1, .. })
        ));
        a.free(g).unwrap();
        assert_eq!(a.stats(), all_free(&a));
    }
}
