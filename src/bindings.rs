//! Everything JavaScript can call. Thin glue: each function converts its
//! arguments and calls into the modules that do the work.
//!
//! Memory: on Node 20 only JS can allocate a `SharedArrayBuffer`, and only a
//! SharedArrayBuffer gives every isolate working `Atomics.wait/notify` (an
//! external ArrayBuffer over Rust memory is not shared, so `Atomics.wait`
//! throws on it; `../shared/design/transport-measurements.md`). So JS
//! allocates a buffer of exactly `layout().regionBytes(lanes)` bytes, Rust
//! formats it (`formatControlRegion`) and every isolate that uses it from
//! Rust passes a `Uint8Array` view over it; Rust keeps a reference to that
//! view for as long as it uses the pointer, which keeps the memory alive.
//!
//! Hot path: nothing here is called per call. Measured on this machine
//! (Node 20, `node bench/napi-crossing.mjs`, medians of 5 x 2,000,000):
//! a napi call with one number in and out costs ~100 ns (~180 ns with a
//! string argument), while encoding `[i, 1]` into a shared slot and decoding
//! it in JS costs ~63 ns and publishing a slot (Atomics store + load) ~20 ns.
//! One crossing per call on each side would cost more than the whole
//! exchange, so the lane protocol and the codec run in JS; JS crosses into
//! Rust only to ring an armed doorbell, to spin once per idle period, and to
//! place a payload too large for a slot (whose copy dwarfs the crossing).

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi::{Env, JsString};
use napi_derive::napi;

use crate::dispatcher::Dispatcher;
use crate::doorbell::Doorbell;
use crate::memory::layout::{self, lane_word, slot_word, steal_word, word, StealGeometry};
use crate::memory::payload::{self, AllocError, Arena};
use crate::memory::region::{self, Attachment, SharedMemory};
use crate::memory::steal::Section;
use crate::task_id;

fn invalid(message: impl Into<String>) -> Error {
    Error::new(Status::InvalidArg, message.into())
}

/// `stableTaskID(href, at)`, knitting's formula (see `task_id.rs`).
#[napi(js_name = "stableTaskID")]
pub fn stable_task_id(href: JsString, at: f64) -> Result<u32> {
    let len = href.utf16_len()?;
    let units = href.into_utf16()?;
    // napi-rs's buffer carries the terminating NUL unit after `len` units.
    let units = &units.as_slice()[..len.min(units.len())];
    Ok(task_id::stable_task_id(units, task_id::to_int32(at)))
}

/// The control region's geometry, for JS to compute offsets from.
#[napi(object)]
pub struct Layout {
    pub magic: u32,
    pub version: u32,
    pub slot_count: u32,
    pub inline_bytes: u32,
    pub slot_header_bytes: u32,
    pub slot_stride: u32,
    pub lane_stride: u32,
    pub lanes_offset: u32,
    pub lane_slots_offset: u32,
    pub max_lanes: u32,
    pub no_ext: u32,
    /// Word indices from the region start.
    pub word_counter: u32,
    pub word_armed: u32,
    pub word_stop: u32,
    pub word_room_seq: u32,
    pub word_room_waiters: u32,
    /// Word indices from a lane's start.
    pub lane_word_req: u32,
    pub lane_word_res: u32,
    pub lane_word_sleeping: u32,
    /// Word indices from a slot's start.
    pub slot_word_task: u32,
    pub slot_word_call: u32,
    pub slot_word_len: u32,
    pub slot_word_ext: u32,
    pub slot_word_signal: u32,
    pub slot_word_started: u32,
    pub slot_word_owner: u32,
    pub max_abort_slots: u32,
    /// Steal sections (`memory/steal.rs`): word indices from the section
    /// start, byte offsets of the done lines, limits.
    pub steal_word_pending: u32,
    pub steal_word_sleepers: u32,
    pub steal_word_idle: u32,
    pub steal_word_spinner: u32,
    pub steal_done_offset: u32,
    pub done_stride: u32,
    pub done_seq_word: u32,
    pub wake_word: u32,
    pub max_region_lanes: u32,
    pub max_steal_claimants: u32,
    pub owner_host: u32,
    /// Bytes the payload arena keeps at the start of its region.
    pub payload_header_bytes: u32,
}

#[napi]
pub fn layout() -> Layout {
    let w = |v: usize| v as u32;
    Layout {
        magic: layout::MAGIC,
        version: layout::VERSION,
        slot_count: w(layout::SLOT_COUNT),
        inline_bytes: w(layout::INLINE_BYTES),
        slot_header_bytes: w(layout::SLOT_HEADER_BYTES),
        slot_stride: w(layout::SLOT_STRIDE),
        lane_stride: w(layout::LANE_STRIDE),
        lanes_offset: w(layout::LANES_OFFSET),
        lane_slots_offset: w(layout::LANE_SLOTS_OFFSET),
        max_lanes: w(layout::MAX_LANES),
        no_ext: layout::NO_EXT,
        word_counter: w(word::COUNTER),
        word_armed: w(word::ARMED),
        word_stop: w(word::STOP),
        word_room_seq: w(word::ROOM_SEQ),
        word_room_waiters: w(word::ROOM_WAITERS),
        lane_word_req: w(lane_word::REQ),
        lane_word_res: w(lane_word::RES),
        lane_word_sleeping: w(lane_word::SLEEPING),
        slot_word_task: w(slot_word::TASK),
        slot_word_call: w(slot_word::CALL),
        slot_word_len: w(slot_word::LEN),
        slot_word_ext: w(slot_word::EXT),
        slot_word_signal: w(slot_word::SIGNAL),
        slot_word_started: w(slot_word::STARTED),
        slot_word_owner: w(slot_word::OWNER),
        max_abort_slots: w(layout::MAX_ABORT_SLOTS),
        steal_word_pending: w(steal_word::PENDING),
        steal_word_sleepers: w(steal_word::SLEEPERS),
        steal_word_idle: w(steal_word::IDLE),
        steal_word_spinner: w(steal_word::SPINNER),
        steal_done_offset: w(layout::STEAL_DONE_OFFSET),
        done_stride: w(layout::DONE_STRIDE),
        done_seq_word: w(layout::DONE_SEQ_WORD),
        wake_word: w(layout::WAKE_WORD),
        max_region_lanes: w(layout::MAX_REGION_LANES),
        max_steal_claimants: w(layout::MAX_STEAL_CLAIMANTS),
        owner_host: layout::OWNER_HOST,
        payload_header_bytes: w(payload::HEADER_BYTES),
    }
}

/// Bytes a control region with `lanes` lanes and `abortSlots` abort words
/// needs.
#[napi]
pub fn region_bytes(lanes: u32, abort_slots: u32) -> Result<u32> {
    let bytes = layout::region_bytes(lanes as usize, abort_slots as usize).map_err(invalid)?;
    u32::try_from(bytes).map_err(|_| invalid("region too large"))
}

/// The steal section of a region, when the pool steals: `workers` claimants
/// over `regionLanes` region lanes of `width` slots. Errors state the rule.
fn steal_geometry(
    workers: Option<u32>,
    region_lanes: Option<u32>,
    width: Option<u32>,
) -> Result<Option<StealGeometry>> {
    match (workers, region_lanes, width) {
        (None, None, None) => Ok(None),
        (Some(w), Some(g), Some(n)) => StealGeometry::new(w as usize, g as usize, n as usize)
            .map(Some)
            .map_err(invalid),
        _ => Err(invalid(
            "a steal section needs workers, regionLanes and width together",
        )),
    }
}

/// Bytes a control region needs: `lanes` private lanes (0 when stealing),
/// `abortSlots` abort words, and a steal section when `workers`,
/// `regionLanes` and `width` are given.
#[napi]
pub fn control_bytes(
    lanes: u32,
    abort_slots: u32,
    workers: Option<u32>,
    region_lanes: Option<u32>,
    width: Option<u32>,
) -> Result<u32> {
    let steal = steal_geometry(workers, region_lanes, width)?;
    let bytes = layout::control_bytes(lanes as usize, abort_slots as usize, steal.as_ref())
        .map_err(invalid)?;
    u32::try_from(bytes).map_err(|_| invalid("region too large"))
}

/// Byte offset of the steal section in a region with `lanes` private lanes
/// and `abortSlots` abort words.
#[napi]
pub fn steal_offset(lanes: u32, abort_slots: u32) -> Result<u32> {
    let offset = layout::steal_offset(lanes as usize, abort_slots as usize).map_err(invalid)?;
    Ok(offset as u32)
}

/// Byte offset of the abort words in a region with `lanes` lanes.
#[napi]
pub fn abort_offset(lanes: u32) -> u32 {
    layout::abort_offset(lanes as usize) as u32
}

/// A view over shared memory that Rust holds while it uses the pointer.
struct Held {
    // Field order matters: the memory description and the attachment go
    // before the view whose reference keeps the memory alive.
    memory: Arc<SharedMemory>,
    _attachment: Attachment,
    _view: Uint8Array,
}

impl Held {
    fn new(view: Uint8Array, min_len: usize) -> Result<Self> {
        let len = view.len();
        if len < min_len {
            return Err(invalid(format!(
                "shared view of {len} bytes is smaller than the {min_len} bytes required"
            )));
        }
        let base = view.as_ptr() as *mut u8;
        // SAFETY: `base..base+len` is the view's memory, kept alive by the
        // reference `_view` holds for as long as `Held` (and so every Arc of
        // `memory` handed to threads, which are joined before `Held` drops)
        // lives. A SharedArrayBuffer's backing store never moves.
        let memory = unsafe { SharedMemory::new(base, len) }.map_err(invalid)?;
        Ok(Self {
            memory: Arc::new(memory),
            _attachment: region::attach(base),
            _view: view,
        })
    }
}

/// Writes the header of a fresh control region (host side, once).
#[napi]
pub fn format_control_region(
    view: Uint8Array,
    lanes: u32,
    abort_slots: u32,
    workers: Option<u32>,
    region_lanes: Option<u32>,
    width: Option<u32>,
) -> Result<()> {
    let steal = steal_geometry(workers, region_lanes, width)?;
    let need = layout::control_bytes(lanes as usize, abort_slots as usize, steal.as_ref())
        .map_err(invalid)?;
    let held = Held::new(view, need)?;
    if let Some(geometry) = steal {
        let offset = layout::steal_offset(lanes as usize, abort_slots as usize).map_err(invalid)?;
        Section::new(&held.memory, offset, geometry)
            .ok_or_else(|| invalid("steal section outside the region"))?
            .format();
    }
    let header = [
        (word::VERSION, layout::VERSION),
        (word::LANES, lanes),
        (word::SLOT_COUNT, layout::SLOT_COUNT as u32),
        (word::SLOT_STRIDE, layout::SLOT_STRIDE as u32),
        (word::INLINE_BYTES, layout::INLINE_BYTES as u32),
        (word::LANE_STRIDE, layout::LANE_STRIDE as u32),
        (word::ABORT_SLOTS, abort_slots),
    ];
    for (index, value) in header {
        held.memory
            .word(index)
            .expect("header inside region")
            .store(value, std::sync::atomic::Ordering::Relaxed);
    }
    // Release: a reader that sees MAGIC sees the header above.
    held.memory
        .word(word::MAGIC)
        .expect("header inside region")
        .store(layout::MAGIC, std::sync::atomic::Ordering::Release);
    Ok(())
}

fn check_control(view: Uint8Array) -> Result<Held> {
    let held = Held::new(view, layout::LANES_OFFSET)?;
    let magic = held
        .memory
        .word(word::MAGIC)
        .expect("checked length")
        .load(std::sync::atomic::Ordering::Acquire);
    if magic != layout::MAGIC {
        return Err(invalid("not a knitting-native control region (bad magic)"));
    }
    Ok(held)
}

/// The host's end of the doorbell: a waiter thread that calls `onRing` on
/// the JS thread (through a ThreadsafeFunction) when an armed host is rung.
/// The ThreadsafeFunction is referenced, so it keeps the event loop alive
/// until `close()`, which a pool calls on shutdown.
#[napi]
pub struct HostDoorbell {
    // Shared with the env cleanup hook; whichever runs first (close(), this
    // object's finalizer, or env teardown) takes and stops the dispatcher,
    // and the others find it gone. The hook must never touch the region
    // itself: once this object is collected, the memory may be freed.
    dispatcher: Arc<Mutex<Option<Dispatcher>>>,
    // Dropped after the dispatcher's thread is joined (see `Drop`).
    _held: Held,
}

fn stop_dispatcher(slot: &Mutex<Option<Dispatcher>>) {
    let taken = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(mut dispatcher) = taken {
        dispatcher.stop();
    }
}

#[napi]
impl HostDoorbell {
    #[napi(constructor)]
    pub fn new(
        env: Env,
        view: Uint8Array,
        on_ring: Function<'_, (), Unknown<'static>>,
    ) -> Result<Self> {
        let held = check_control(view)?;
        let bell = Doorbell::new(Arc::clone(&held.memory)).map_err(invalid)?;
        let tsfn = on_ring
            .build_threadsafe_function::<()>()
            .callee_handled::<false>()
            .build_callback(|_ctx| Ok(()))?;
        let dispatcher = Dispatcher::start(bell, move || {
            // NonBlocking: the waiter must never stall on a busy loop; the
            // queue is unbounded and holds at most one entry per arming.
            tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
        })
        .map_err(|e| Error::from_reason(format!("cannot start the doorbell thread: {e}")))?;
        let dispatcher = Arc::new(Mutex::new(Some(dispatcher)));
        // Worker termination and process exit tear the env down without
        // calling close(): stop the thread there too, if it still runs (then
        // this object is alive, and so is the memory the thread uses).
        let hook_slot = Arc::clone(&dispatcher);
        env.add_env_cleanup_hook((), move |_| stop_dispatcher(&hook_slot))?;
        Ok(Self {
            dispatcher,
            _held: held,
        })
    }

    /// Stops the waiter thread and releases the ThreadsafeFunction (the
    /// thread owned it), so the process can exit. Idempotent.
    #[napi]
    pub fn close(&mut self) {
        stop_dispatcher(&self.dispatcher);
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.dispatcher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }
}

impl Drop for HostDoorbell {
    fn drop(&mut self) {
        // Before `_held` releases the memory the thread still reads.
        stop_dispatcher(&self.dispatcher);
    }
}

/// Gives up the CPU to any other runnable thread on it (`sched_yield`).
/// The host calls it between idle drain passes, so that a worker sharing its
/// vCPU gets to run the call the host is waiting for (`spin.rs`).
#[napi]
pub fn yield_now() {
    std::thread::yield_now();
}

/// A worker's end of the doorbell.
#[napi]
pub struct WorkerBell {
    bell: Doorbell,
    _held: Held,
}

#[napi]
impl WorkerBell {
    #[napi(constructor)]
    pub fn new(view: Uint8Array) -> Result<Self> {
        let held = check_control(view)?;
        let bell = Doorbell::new(Arc::clone(&held.memory)).map_err(invalid)?;
        Ok(Self { bell, _held: held })
    }

    /// Wakes the host's waiter (the caller saw ARMED after adding to COUNTER).
    #[napi]
    pub fn ring(&self) {
        self.bell.ring();
    }

    /// Spins (politely, see `spin.rs`) while word `index` of the control
    /// region equals `value`, for at most `micros` µs. True when it changed.
    /// One call per idle period of a worker, not per call.
    #[napi]
    pub fn spin_while(&self, index: u32, value: i32, micros: f64) -> Result<bool> {
        let word = self
            ._held
            .memory
            .word(index as usize)
            .ok_or_else(|| invalid(format!("word {index} is outside the control region")))?;
        let budget = std::time::Duration::from_secs_f64(micros.clamp(0.0, 1e6) / 1e6);
        Ok(crate::spin::spin_while_equal(word, value as u32, budget))
    }

    /// Spins while words `first..first + count` of the control region are
    /// all zero, for at most `micros` µs (a stealing worker waiting for any
    /// PENDING bit). True when one became non-zero.
    #[napi]
    pub fn spin_while_zero(&self, first: u32, count: u32, micros: f64) -> Result<bool> {
        let words = (first..first.saturating_add(count))
            .map(|i| self._held.memory.word(i as usize))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| invalid(format!("words {first}..+{count} leave the control region")))?;
        let budget = std::time::Duration::from_secs_f64(micros.clamp(0.0, 1e6) / 1e6);
        Ok(crate::spin::spin_while_all_zero(&words, budget))
    }
}

/// The payload region: a growable SharedArrayBuffer holding values too
/// large for a slot. Every isolate of a pool attaches its own `PayloadArena`
/// over the same buffer; the allocator's state lives in the buffer.
#[napi]
pub struct PayloadArena {
    arena: Arena,
    held: Held,
}

#[napi]
impl PayloadArena {
    /// `view` spans the buffer's current length; `maxByteLength` is the
    /// buffer's `maxByteLength` (the address range V8 reserved for it).
    /// `format` is true for the one isolate that creates the region.
    #[napi(constructor)]
    pub fn new(view: Uint8Array, max_byte_length: f64, format: bool) -> Result<Self> {
        let held = Held::new(view, payload::HEADER_BYTES)?;
        let max_len = max_byte_length as usize;
        if !(max_byte_length.is_finite() && max_len >= held.memory.len()) {
            return Err(invalid(
                "maxByteLength must be at least the buffer's length",
            ));
        }
        let base = held.memory.base();
        let arena = if format {
            // SAFETY: `base` spans `held.memory.len()` committed bytes and
            // V8 reserved `max_len` for the growable buffer; `held` keeps it
            // alive as long as the arena (both live in this object).
            unsafe { Arena::init(base, held.memory.len(), max_len) }
        } else {
            // SAFETY: as above; the region was formatted by the host.
            unsafe { Arena::attach(base, max_len) }.map_err(invalid)?
        };
        Ok(Self { arena, held })
    }

    /// Offset of a block of `len` bytes (always > 0); or a negative number
    /// `-n`: grow the buffer to at least `n` bytes, call `extend`, and
    /// retry; or 0: the region is full of live blocks now, retry after a
    /// block is freed. Throws a RangeError when even an empty region of the
    /// maximum length cannot hold it (`len > maxRequest`).
    #[napi]
    pub fn alloc(&self, len: f64) -> Result<f64> {
        if !(len.is_finite() && len >= 0.0) {
            return Err(invalid(format!(
                "payload length must be a non-negative number, got {len}"
            )));
        }
        match self.arena.alloc(len as usize) {
            Ok(offset) => Ok(offset as f64),
            Err(AllocError::NeedGrow { min_committed }) => Ok(-(min_committed as f64)),
            // Offset 0 is the arena's header: never a block.
            Err(AllocError::TooLarge { requested, max }) if requested <= max => Ok(0.0),
            Err(AllocError::TooLarge { requested, max }) => Err(Error::new(
                Status::InvalidArg,
                format!("RangeError: payload of {requested} bytes does not fit the payload region (payloadMaxByteLength {max})"),
            )),
        }
    }

    #[napi]
    pub fn free(&self, offset: f64) -> Result<()> {
        self.arena.free(offset as usize).map_err(invalid)
    }

    /// The buffer has grown: `view` is a fresh view over its whole length.
    #[napi]
    pub fn extend(&self, view: Uint8Array) -> Result<()> {
        if !std::ptr::eq(view.as_ptr(), self.held.memory.base()) {
            return Err(invalid(
                "extend() needs a view over the same payload buffer",
            ));
        }
        self.arena.extend(view.len()).map_err(invalid)
    }

    #[napi(getter)]
    pub fn committed(&self) -> f64 {
        self.arena.committed() as f64
    }

    /// The largest payload an empty region of the maximum length holds.
    #[napi(getter)]
    pub fn max_request(&self) -> f64 {
        self.arena.max_request() as f64
    }

    #[napi]
    pub fn stats(&self) -> ArenaStats {
        let s = self.arena.stats();
        ArenaStats {
            committed: s.committed as f64,
            free_bytes: s.free_bytes as f64,
            live_blocks: s.live_blocks as f64,
            largest_free: s.largest_free as f64,
        }
    }
}

#[napi(object)]
pub struct ArenaStats {
    pub committed: f64,
    pub free_bytes: f64,
    pub live_blocks: f64,
    pub largest_free: f64,
}

#[napi(object)]
pub struct RegionStats {
    pub regions: u32,
    pub attachments: u32,
}

/// Shared regions this process's isolates hold from Rust right now.
#[napi]
pub fn region_stats() -> RegionStats {
    let (regions, attachments) = region::attached_counts();
    RegionStats {
        regions: regions as u32,
        attachments: attachments as u32,
    }
}
