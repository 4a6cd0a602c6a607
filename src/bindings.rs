//! Everything JavaScript can call. Thin glue: each function converts its
//! arguments and calls into the modules that do the work.
//!
//! Memory: on Node 20 only JS can allocate a `SharedArrayBuffer`, and only a
//! SharedArrayBuffer gives every isolate working `Atomics.wait/notify` (an
//! external ArrayBuffer over Rust memory is not shared, so `Atomics.wait`
//! throws on it: measured on Node 20 and 24, 2 vCPUs, 2026-11). So JS
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

/// Code of the error a corrupt shared region gives (task code wrote into
/// it): the call fails, the process does not.
pub(crate) const REGION_CORRUPT: &str = "KNT_REGION_CORRUPT";
/// Code of the TypeError for memory Rust cannot keep (see [`SharedView`]).
pub(crate) const NOT_SHARED: &str = "KNT_NOT_SHARED_MEMORY";
/// Code of the TypeError `detachBuffer` gives for a buffer it cannot detach.
pub(crate) const NOT_DETACHABLE: &str = "KNT_NOT_DETACHABLE";

/// Throws a JS error of `kind` with `code` and returns the error that tells
/// napi-rs an exception is already pending.
pub(crate) fn throw(env: &Env, kind: ErrorKind, code: &str, message: &str) -> Error {
    let thrown = match kind {
        ErrorKind::Type => env.throw_type_error(message, Some(code)),
        ErrorKind::Plain => env.throw_error(message, Some(code)),
    };
    match thrown {
        Ok(()) => Error::from_status(Status::PendingException),
        Err(e) => e,
    }
}

#[derive(Clone, Copy)]
pub(crate) enum ErrorKind {
    Type,
    Plain,
}

/// The error of a call that met a corrupt shared region.
fn corrupt(env: &Env, message: &str) -> Error {
    throw(
        env,
        ErrorKind::Plain,
        REGION_CORRUPT,
        &format!(
            "knitting-native: {message} (task code may have written into the pool's shared memory)"
        ),
    )
}

/// A number from JS that must be a whole number in `0..=max`: NaN,
/// infinities, negatives, fractions and values past `max` are refused with
/// an InvalidArg error naming `what` (napi's own u32 conversion would wrap
/// or truncate them silently).
pub(crate) fn whole(value: f64, what: &str, max: u64) -> Result<usize> {
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= max as f64 {
        // In range of u64 (<= max) and whole: exact.
        usize::try_from(value as u64).map_err(|_| invalid(format!("{what} is too large: {value}")))
    } else {
        Err(invalid(format!(
            "{what} must be a whole number from 0 to {max}, got {value}"
        )))
    }
}

/// `whole` for a 32-bit count or index.
pub(crate) fn whole_u32(value: f64, what: &str) -> Result<u32> {
    whole(value, what, u64::from(u32::MAX)).map(|v| v as u32)
}

/// A 32-bit word value from JS: any integer that an Int32Array or a
/// Uint32Array element can hold (the bits are what count).
pub(crate) fn word_value(value: f64, what: &str) -> Result<u32> {
    if value.is_finite()
        && value.fract() == 0.0
        && value >= f64::from(i32::MIN)
        && value <= f64::from(u32::MAX)
    {
        Ok(if value < 0.0 {
            value as i32 as u32
        } else {
            value as u32
        })
    } else {
        Err(invalid(format!(
            "{what} must be a 32-bit integer, got {value}"
        )))
    }
}

/// A spin budget in µs: a finite non-negative number (clamped to 1 s).
fn spin_budget(micros: f64) -> Result<std::time::Duration> {
    if !(micros.is_finite() && micros >= 0.0) {
        return Err(invalid(format!(
            "micros must be a non-negative finite number, got {micros}"
        )));
    }
    Ok(std::time::Duration::from_secs_f64(micros.min(1e6) / 1e6))
}

/// A `Uint8Array` over memory that nothing in JS can take away from under
/// Rust: a `SharedArrayBuffer` (never detached, never shrunk), or a buffer
/// over a mapping Rust made (`process::mapping`), which Rust then holds
/// itself. A view over any other `ArrayBuffer` (detachable, maybe
/// resizable) is refused with a TypeError: Rust would keep a pointer to
/// memory a transfer or a `resize()` can free.
pub struct SharedView {
    view: Uint8Array,
    #[cfg(target_os = "linux")]
    // Held, never read: keeps the mapping's bytes mapped.
    _mapping: Option<std::sync::Arc<crate::process::mapping::Mapping>>,
}

impl TypeName for SharedView {
    fn type_name() -> &'static str {
        "Uint8Array"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ValidateNapiValue for SharedView {}

impl FromNapiValue for SharedView {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        let js_env = Env::from_raw(env);
        let refuse = |message: &str| {
            throw(
                &js_env,
                ErrorKind::Type,
                NOT_SHARED,
                &format!("knitting-native: {message}"),
            )
        };
        let mut is_typed = false;
        // SAFETY: `env` and `value` come from napi for this call.
        let status = unsafe { sys::napi_is_typedarray(env, value, &mut is_typed) };
        if status != sys::Status::napi_ok || !is_typed {
            return Err(refuse("expected a Uint8Array over a SharedArrayBuffer"));
        }
        let mut kind = 0;
        let mut length = 0;
        let mut data = std::ptr::null_mut();
        let mut buffer = std::ptr::null_mut();
        let mut offset = 0;
        // SAFETY: as above; every out-pointer is a local.
        let status = unsafe {
            sys::napi_get_typedarray_info(
                env,
                value,
                &mut kind,
                &mut length,
                &mut data,
                &mut buffer,
                &mut offset,
            )
        };
        if status != sys::Status::napi_ok || kind != sys::TypedarrayType::uint8_array {
            return Err(refuse("expected a Uint8Array over a SharedArrayBuffer"));
        }
        let mut plain = false;
        // SAFETY: as above. `napi_is_arraybuffer` is true only for a
        // non-shared ArrayBuffer (V8's IsArrayBuffer excludes the shared kind).
        let status = unsafe { sys::napi_is_arraybuffer(env, buffer, &mut plain) };
        if status != sys::Status::napi_ok {
            return Err(refuse("cannot inspect the view's buffer"));
        }
        #[cfg(target_os = "linux")]
        let mapping = if plain {
            let held = crate::process::mapping::holder_of(data.cast_const().cast(), length);
            if held.is_none() {
                return Err(refuse(
                    "the view must be over a SharedArrayBuffer (a plain or resizable ArrayBuffer can be detached or \
                     shrunk while Rust uses it)",
                ));
            }
            held
        } else {
            None
        };
        #[cfg(not(target_os = "linux"))]
        if plain {
            return Err(refuse(
                "the view must be over a SharedArrayBuffer (a plain or resizable ArrayBuffer can be detached or \
                 shrunk while Rust uses it)",
            ));
        }
        // SAFETY: as above; a Uint8Array (checked).
        let view = unsafe { Uint8Array::from_napi_value(env, value) }?;
        Ok(Self {
            view,
            #[cfg(target_os = "linux")]
            _mapping: mapping,
        })
    }
}

/// `stableTaskID(href, at)`, knitting's formula (see `task_id.rs`).
#[napi(js_name = "stableTaskID", catch_unwind)]
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
    pub word_host_cpu: u32,
    pub word_kept_seq: u32,
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
    pub slot_word_run_micros: u32,
    pub max_abort_slots: u32,
    /// Steal sections (protocol in `lib/protocol/steal.js`): word indices from the section
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

#[napi(catch_unwind)]
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
        word_host_cpu: w(word::HOST_CPU),
        word_kept_seq: w(word::KEPT_SEQ),
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
        slot_word_run_micros: w(slot_word::RUN_MICROS),
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
#[napi(catch_unwind)]
pub fn region_bytes(lanes: f64, abort_slots: f64) -> Result<u32> {
    let lanes = whole_u32(lanes, "lanes")?;
    let abort_slots = whole_u32(abort_slots, "abortSlots")?;
    let bytes = layout::region_bytes(lanes as usize, abort_slots as usize).map_err(invalid)?;
    u32::try_from(bytes).map_err(|_| invalid("region too large"))
}

/// The steal section of a region, when the pool steals: `workers` claimants
/// over `regionLanes` region lanes of `width` slots. Errors state the rule.
fn steal_geometry(
    workers: Option<f64>,
    region_lanes: Option<f64>,
    width: Option<f64>,
) -> Result<Option<StealGeometry>> {
    match (workers, region_lanes, width) {
        (None, None, None) => Ok(None),
        (Some(w), Some(g), Some(n)) => StealGeometry::new(
            whole_u32(w, "workers")? as usize,
            whole_u32(g, "regionLanes")? as usize,
            whole_u32(n, "width")? as usize,
        )
        .map(Some)
        .map_err(invalid),
        _ => Err(invalid(
            "a steal section needs workers, regionLanes and width together",
        )),
    }
}

/// Why `workers` claimants over `regionLanes` region lanes of `width` slots
/// is not a valid steal section (the rule of `StealGeometry::new`), or null
/// when it is. lib/options/index.js checks `host.stealRegionLanes` with it, so the
/// rule has one owner.
#[napi(catch_unwind)]
pub fn steal_shape_error(workers: f64, region_lanes: f64, width: f64) -> Result<Option<String>> {
    match steal_geometry(Some(workers), Some(region_lanes), Some(width)) {
        Ok(_) => Ok(None),
        Err(err) => Ok(Some(err.reason.clone())),
    }
}

/// Bytes a control region needs: `lanes` private lanes (0 when stealing),
/// `abortSlots` abort words, and a steal section when `workers`,
/// `regionLanes` and `width` are given.
#[napi(catch_unwind)]
pub fn control_bytes(
    lanes: f64,
    abort_slots: f64,
    workers: Option<f64>,
    region_lanes: Option<f64>,
    width: Option<f64>,
) -> Result<u32> {
    let steal = steal_geometry(workers, region_lanes, width)?;
    let lanes = whole_u32(lanes, "lanes")?;
    let abort_slots = whole_u32(abort_slots, "abortSlots")?;
    let bytes = layout::control_bytes(lanes as usize, abort_slots as usize, steal.as_ref())
        .map_err(invalid)?;
    u32::try_from(bytes).map_err(|_| invalid("region too large"))
}

/// Byte offset of the steal section in a region with `lanes` private lanes
/// and `abortSlots` abort words.
#[napi(catch_unwind)]
pub fn steal_offset(lanes: f64, abort_slots: f64) -> Result<u32> {
    let lanes = whole_u32(lanes, "lanes")?;
    let abort_slots = whole_u32(abort_slots, "abortSlots")?;
    let offset = layout::steal_offset(lanes as usize, abort_slots as usize).map_err(invalid)?;
    u32::try_from(offset).map_err(|_| invalid("region too large"))
}

/// Byte offset of the abort words in a region with `lanes` lanes (at most
/// `layout.maxLanes`).
#[napi(catch_unwind)]
pub fn abort_offset(lanes: f64) -> Result<u32> {
    let lanes = whole(lanes, "lanes", layout::MAX_LANES as u64)?;
    u32::try_from(layout::abort_offset(lanes)).map_err(|_| invalid("region too large"))
}

/// A view over shared memory that Rust holds while it uses the pointer.
struct Held {
    // Field order matters: the memory description and the attachment go
    // before the view (and mapping) whose reference keeps the memory alive.
    memory: Arc<SharedMemory>,
    _attachment: Attachment,
    _view: SharedView,
}

impl Held {
    fn new(shared: SharedView, min_len: usize) -> Result<Self> {
        let view = &shared.view;
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
        // lives: a SharedArrayBuffer's backing store never moves, shrinks or
        // detaches, and a mapping's bytes stay mapped while `_view` holds its
        // Arc (`SharedView` accepts nothing else).
        let memory = unsafe { SharedMemory::new(base, len) }.map_err(invalid)?;
        Ok(Self {
            memory: Arc::new(memory),
            _attachment: region::attach(base),
            _view: shared,
        })
    }
}

/// Writes the header of a fresh control region (host side, once).
#[napi(catch_unwind)]
pub fn format_control_region(
    view: SharedView,
    lanes: f64,
    abort_slots: f64,
    workers: Option<f64>,
    region_lanes: Option<f64>,
    width: Option<f64>,
) -> Result<()> {
    let steal = steal_geometry(workers, region_lanes, width)?;
    let lanes = whole_u32(lanes, "lanes")?;
    let abort_slots = whole_u32(abort_slots, "abortSlots")?;
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

fn check_control(view: SharedView) -> Result<Held> {
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
/// The ThreadsafeFunction is weak: it never keeps the event loop alive by
/// itself. The pool holds the loop while calls are pending (lib/host/liveness.js),
/// so that an idle pool lets the process end without `close()`.
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
    #[napi(constructor, catch_unwind)]
    pub fn new(
        env: Env,
        view: SharedView,
        on_ring: Function<'_, (), Unknown<'static>>,
    ) -> Result<Self> {
        let held = check_control(view)?;
        let bell = Doorbell::new(Arc::clone(&held.memory)).map_err(invalid)?;
        // One ring in the queue at a time: task code that stores ARMED and
        // moves COUNTER in a loop would otherwise grow the (unbounded) queue
        // faster than the host drains it. A ring skipped while one is queued
        // loses nothing: the queued one drains everything published so far.
        let queued = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let dequeued = Arc::clone(&queued);
        let tsfn = on_ring
            .build_threadsafe_function::<()>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(move |_ctx| {
                // SeqCst: cleared before the host's drain runs, so a ring
                // after this point queues another call.
                dequeued.store(false, std::sync::atomic::Ordering::SeqCst);
                Ok(())
            })?;
        let dispatcher = Dispatcher::start(bell, move || {
            // NonBlocking: the waiter must never stall on a busy loop.
            if !queued.swap(true, std::sync::atomic::Ordering::SeqCst)
                && tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking) != Status::Ok
            {
                // Not queued (closing): the next ring may try again.
                queued.store(false, std::sync::atomic::Ordering::SeqCst);
            }
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
    #[napi(catch_unwind)]
    pub fn close(&mut self) {
        stop_dispatcher(&self.dispatcher);
    }

    #[napi(getter, catch_unwind)]
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
#[napi(catch_unwind)]
pub fn yield_now() {
    std::thread::yield_now();
}

/// The CPU the calling thread runs on, or -1 where the platform does not
/// say (`placement.rs`). The host notes it in `HOST_CPU` when it polls.
#[napi(catch_unwind)]
pub fn current_cpu() -> i32 {
    crate::placement::current_cpu()
        .and_then(|c| i32::try_from(c).ok())
        .unwrap_or(-1)
}

/// A worker's end of the doorbell.
#[napi]
pub struct WorkerBell {
    bell: Doorbell,
    /// Moves this worker off the host's CPU before it spins (`placement.rs`).
    nudge: std::cell::RefCell<crate::placement::Nudge>,
    _held: Held,
}

#[napi]
impl WorkerBell {
    #[napi(constructor, catch_unwind)]
    pub fn new(view: SharedView) -> Result<Self> {
        let held = check_control(view)?;
        let bell = Doorbell::new(Arc::clone(&held.memory)).map_err(invalid)?;
        Ok(Self {
            bell,
            nudge: Default::default(),
            _held: held,
        })
    }

    /// Wakes the host's waiter (the caller saw ARMED after adding to COUNTER).
    #[napi(catch_unwind)]
    pub fn ring(&self) {
        self.bell.ring();
    }

    /// Spins (politely, see `spin.rs`) while word `index` of the control
    /// region equals `value`, for at most `micros` µs. True when it changed.
    /// One call per idle period of a worker, not per call.
    #[napi(catch_unwind)]
    pub fn spin_while(&self, index: f64, value: f64, micros: f64) -> Result<bool> {
        let index = whole_u32(index, "index")?;
        let value = word_value(value, "value")?;
        let budget = spin_budget(micros)?;
        let word = self
            ._held
            .memory
            .word(index as usize)
            .ok_or_else(|| invalid(format!("word {index} is outside the control region")))?;
        self.off_host_cpu();
        Ok(crate::spin::spin_while_equal(word, value, budget))
    }

    /// Spins while words `first..first + count` of the control region are
    /// all zero, for at most `micros` µs (a stealing worker waiting for any
    /// PENDING bit). True when one became non-zero.
    #[napi(catch_unwind)]
    pub fn spin_while_zero(&self, first: f64, count: f64, micros: f64) -> Result<bool> {
        let first = whole_u32(first, "first")?;
        let count = whole_u32(count, "count")?;
        let budget = spin_budget(micros)?;
        // Bounded before any allocation: the words must lie in the region.
        if (first as usize).saturating_add(count as usize) > self._held.memory.len() / 4 {
            return Err(invalid(format!(
                "words {first}..+{count} leave the control region"
            )));
        }
        let words = (first..first.saturating_add(count))
            .map(|i| self._held.memory.word(i as usize))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| invalid(format!("words {first}..+{count} leave the control region")))?;
        self.off_host_cpu();
        Ok(crate::spin::spin_while_all_zero(&words, budget))
    }
}

impl WorkerBell {
    /// Before a spin: off the host's CPU, if it is on it (`placement.rs`).
    fn off_host_cpu(&self) {
        if let Some(word) = self._held.memory.word(word::HOST_CPU) {
            self.nudge.borrow_mut().before_spin(word);
        }
    }
}

/// An external ArrayBuffer over `data..data+len` whose finalizer drops
/// `keep`; an error naming `needs` when the runtime copied instead of
/// wrapping (writes would not reach the shared memory).
///
/// # Safety
/// `data..data+len` must stay valid while `keep` lives.
pub(crate) unsafe fn external_buffer<'env, T: 'static>(
    env: &'env Env,
    data: *mut u8,
    len: usize,
    keep: T,
    needs: &str,
) -> Result<ArrayBuffer<'env>> {
    // SAFETY: the caller's contract; the finalizer owns `keep` and drops it
    // only when the runtime collects the buffer.
    let buffer =
        unsafe { ArrayBuffer::from_external(env, data, len, keep, |_env, keep| drop(keep)) }?;
    if !std::ptr::eq(buffer.as_ptr(), data) {
        return Err(Error::from_reason(format!(
            "this runtime does not allow external ArrayBuffers, which {needs} need"
        )));
    }
    Ok(buffer)
}

/// What `alloc` and `allocRegion` answer JS for the arena's result (see
/// `alloc`): the offset, `-n` to grow to `n` bytes, 0 when full now.
fn alloc_answer(
    env: &Env,
    result: std::result::Result<usize, AllocError>,
    what: &str,
) -> Result<f64> {
    match result {
        Ok(offset) => Ok(offset as f64),
        Err(AllocError::NeedGrow { min_committed }) => Ok(-(min_committed as f64)),
        // Offset 0 is the arena's header: never a block.
        Err(AllocError::TooLarge { requested, max }) if requested <= max => Ok(0.0),
        Err(AllocError::TooLarge { requested, max }) => Err(Error::new(
            Status::InvalidArg,
            format!(
                "RangeError: a {what} of {requested} bytes does not fit the payload region \
                 (at most {max}; payloadMaxByteLength sets it)"
            ),
        )),
        Err(e @ AllocError::Corrupt(_)) => Err(corrupt(env, &e.to_string())),
    }
}

/// The payload region: a growable SharedArrayBuffer holding values too
/// large for a slot. Every isolate of a pool attaches its own `PayloadArena`
/// over the same buffer; the allocator's state lives in the buffer.
#[napi]
pub struct PayloadArena {
    arena: Arena,
    /// Shared with the region buffers made from this arena (`regionBuffer`),
    /// which may outlive it.
    held: Arc<Held>,
}

#[napi]
impl PayloadArena {
    /// `view` spans the buffer's current length; `maxByteLength` is the
    /// buffer's `maxByteLength` (the address range V8 reserved for it).
    /// `format` is true for the one isolate that creates the region.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: &Env, view: SharedView, max_byte_length: f64, format: bool) -> Result<Self> {
        let held = Held::new(view, payload::HEADER_BYTES)?;
        let max_len = whole(max_byte_length, "maxByteLength", isize::MAX as u64)?;
        if max_len < held.memory.len() {
            return Err(invalid(
                "maxByteLength must be at least the buffer's length",
            ));
        }
        let base = held.memory.base();
        let committed = held.memory.len();
        let arena = if format {
            // SAFETY: `base` spans `committed` accessible bytes (the view's
            // length) and V8 reserved `max_len` for the growable buffer (or
            // it is a mapping of that size); `held` keeps it alive as long
            // as the arena (both live in this object).
            unsafe { Arena::init(base, committed, max_len) }
        } else {
            // SAFETY: as above; the region was formatted by the host (a
            // header that says otherwise was overwritten: corrupt).
            unsafe { Arena::attach(base, committed, max_len) }.map_err(|e| corrupt(env, &e))?
        };
        Ok(Self {
            arena,
            held: Arc::new(held),
        })
    }

    /// Offset of a block of `len` bytes (always > 0); or a negative number
    /// `-n`: grow the buffer to at least `n` bytes, call `extend`, and
    /// retry; or 0: the region is full of live blocks now, retry after a
    /// block is freed. Throws a RangeError when even an empty region of the
    /// maximum length cannot hold it (`len > maxRequest`).
    #[napi(catch_unwind)]
    pub fn alloc(&self, env: &Env, len: f64) -> Result<f64> {
        let len = whole(len, "payload length", isize::MAX as u64)?;
        alloc_answer(env, self.arena.alloc(len), "payload")
    }

    /// Frees the block at `offset`. An offset that is not a live block
    /// (read from a slot task code may have written) fails with
    /// `KNT_REGION_CORRUPT` and changes nothing.
    #[napi(catch_unwind)]
    pub fn free(&self, env: &Env, offset: f64) -> Result<()> {
        let offset = whole(offset, "payload offset", isize::MAX as u64)?;
        self.arena.free(offset).map_err(|e| corrupt(env, &e))
    }

    /// The buffer has grown: `view` is a fresh view over its whole length.
    #[napi(catch_unwind)]
    pub fn extend(&self, env: &Env, view: SharedView) -> Result<()> {
        if !std::ptr::eq(view.view.as_ptr(), self.held.memory.base()) {
            return Err(invalid(
                "extend() needs a view over the same payload buffer",
            ));
        }
        let len = view.view.len();
        // SAFETY: `view` spans `len` accessible bytes from the arena's base
        // (the same buffer, checked above), and the buffer, kept alive by
        // `self.held`, never shrinks (a SharedArrayBuffer, or a mapping).
        unsafe { self.arena.mapped(len) };
        self.arena.extend(len).map_err(|e| corrupt(env, &e))
    }

    /// Header offset of a fresh shared byte region of `len` data bytes for
    /// `holder` (0..=4095, the low bits of its STATE word), with the same
    /// answers as `alloc`: > 0 placed, `-n` grow and retry, 0 full now, a
    /// RangeError past `maxRegionRequest`.
    #[napi(catch_unwind)]
    pub fn alloc_region(&self, env: &Env, len: f64, holder: f64) -> Result<f64> {
        let len = whole(len, "region length", isize::MAX as u64)?;
        let holder = whole(holder, "region holder", 0xfff)? as u32;
        alloc_answer(env, self.arena.alloc_region(len, holder), "region")
    }

    /// The largest region `allocRegion` can place.
    #[napi(getter, catch_unwind)]
    pub fn max_region_request(&self) -> f64 {
        self.arena.max_region_request() as f64
    }

    /// Header offsets of every live region (`KNT_REGION_CORRUPT` when a
    /// block header was overwritten).
    #[napi(catch_unwind)]
    pub fn regions(&self, env: &Env) -> Result<Vec<f64>> {
        let found = self.arena.regions().map_err(|e| corrupt(env, &e))?;
        Ok(found.into_iter().map(|o| o as f64).collect())
    }

    /// Checks, as `regionBuffer` does, that `offset` is the header of a live
    /// region holding at least `len` bytes, without making a buffer: a
    /// receiver takes a region at once and makes its view only when asked.
    #[napi(catch_unwind)]
    pub fn check_region(&self, env: &Env, offset: f64, len: f64) -> Result<()> {
        let offset = whole(offset, "region offset", isize::MAX as u64)?;
        let len = whole(len, "region length", isize::MAX as u64)?;
        self.arena
            .region_data(offset, len)
            .map(|_| ())
            .map_err(|e| corrupt(env, &e))
    }

    /// An ArrayBuffer over the first `len` data bytes of the live region
    /// whose header is at `offset`: writes through it land in the payload
    /// region itself. An offset that is not a live region, or a `len`
    /// larger than it holds, fails with `KNT_REGION_CORRUPT`.
    #[napi(catch_unwind)]
    pub fn region_buffer<'env>(
        &self,
        env: &'env Env,
        offset: f64,
        len: f64,
    ) -> Result<ArrayBuffer<'env>> {
        let offset = whole(offset, "region offset", isize::MAX as u64)?;
        let len = whole(len, "region length", isize::MAX as u64)?;
        let data_offset = self
            .arena
            .region_data(offset, len)
            .map_err(|e| corrupt(env, &e))?;
        if len == 0 {
            // Nothing to share, nothing to keep alive; some runtimes refuse
            // zero-length external buffers.
            return ArrayBuffer::from_data(env, Vec::new());
        }
        // SAFETY: `region_data` checked `data_offset + len` against the
        // block's size, and the block lies below a TOP bounded by the bytes
        // this process knows to be accessible from the base.
        let data = unsafe { self.held.memory.base().add(data_offset) };
        // The `Held`, not this arena object: the arena may be collected
        // while region buffers made from it live, and an Arc needs no napi
        // reference managed by hand.
        let keep = Arc::clone(&self.held);
        // SAFETY: `data..data+len` stays valid while the buffer lives: the
        // finalizer owns an Arc of the `Held`, whose view reference keeps the
        // SharedArrayBuffer alive (or whose Arc keeps the mapping mapped), and
        // drops it, on the JS thread, only when the runtime collects the
        // buffer. Bytes are never freed while held, so a region freed
        // meanwhile is still readable memory (its contents are the ownership
        // protocol's business).
        unsafe { external_buffer(env, data, len, keep, "region buffers") }
    }

    #[napi(getter, catch_unwind)]
    pub fn committed(&self) -> f64 {
        self.arena.committed() as f64
    }

    /// The largest payload an empty region of the maximum length holds.
    #[napi(getter, catch_unwind)]
    pub fn max_request(&self) -> f64 {
        self.arena.max_request() as f64
    }

    #[napi(catch_unwind)]
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

/// Detaches `buffer` (`napi_detach_arraybuffer`): its views then read as
/// empty and writes through them go nowhere (an already detached buffer is
/// left as it is). Only a plain ArrayBuffer the runtime lets go of can be
/// detached (region buffers can, on Node 20 and 24, Bun and Deno); anything
/// else, a WebAssembly memory's buffer included, is a TypeError
/// `KNT_NOT_DETACHABLE`.
#[napi(catch_unwind)]
pub fn detach_buffer(env: &Env, buffer: Unknown<'_>) -> Result<()> {
    let refuse = |what: &str| {
        throw(
            env,
            ErrorKind::Type,
            NOT_DETACHABLE,
            &format!(
                "knitting-native: detachBuffer() needs a detachable ArrayBuffer (such as one from \
                 regionBuffer()); {what}"
            ),
        )
    };
    let mut plain = false;
    // SAFETY: `env` and `buffer` come from napi for this call.
    let status = unsafe { sys::napi_is_arraybuffer(env.raw(), buffer.raw(), &mut plain) };
    if status != sys::Status::napi_ok || !plain {
        return Err(refuse(
            "got a value that is not one (a SharedArrayBuffer never detaches)",
        ));
    }
    // SAFETY: as above; `buffer` is an ArrayBuffer (checked).
    let status = unsafe { sys::napi_detach_arraybuffer(env.raw(), buffer.raw()) };
    if status != sys::Status::napi_ok {
        let mut pending = false;
        // SAFETY: `env` is this call's; the out-pointer is a local.
        unsafe { sys::napi_is_exception_pending(env.raw(), &mut pending) };
        if pending {
            let mut thrown = std::ptr::null_mut();
            // SAFETY: as above. The runtime's own exception is replaced by
            // ours, which says what is allowed.
            unsafe { sys::napi_get_and_clear_last_exception(env.raw(), &mut thrown) };
        }
        return Err(refuse("the runtime refused to detach this one"));
    }
    Ok(())
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
#[napi(catch_unwind)]
pub fn region_stats() -> RegionStats {
    let (regions, attachments) = region::attached_counts();
    RegionStats {
        regions: regions as u32,
        attachments: attachments as u32,
    }
}

/// Whether `externalString` can make strings here (the runtime exports
/// N-API's external string functions; `external_string.rs`).
#[napi(catch_unwind)]
pub fn external_strings() -> bool {
    crate::external_string::available()
}

/// Bytes `start..start + length` of `view` as an external string: Latin-1,
/// or UTF-16 code units when `twoByte`. `undefined` when the runtime cannot
/// make one (the caller decodes the bytes itself).
#[napi(catch_unwind, ts_return_type = "string | undefined")]
pub fn external_string<'env>(
    env: &'env Env,
    view: Uint8ArraySlice<'env>,
    start: f64,
    length: f64,
    two_byte: bool,
) -> Result<Unknown<'env>> {
    let bytes: &[u8] = view.as_ref();
    let start = whole(start, "string start", isize::MAX as u64)?;
    let length = whole(length, "string length", isize::MAX as u64)?;
    let Some(range) = bytes.get(start..start.saturating_add(length)) else {
        return Err(invalid(format!(
            "bytes {start}..{} are outside a view of {} bytes",
            start.saturating_add(length),
            bytes.len()
        )));
    };
    // SAFETY: `env` is this call's. The bytes may be in a SharedArrayBuffer
    // that task code writes at any time: they are copied once and become
    // characters, nothing else depends on them (a racing write can only
    // change which characters).
    match unsafe { crate::external_string::create(env.raw(), range, two_byte) } {
        // SAFETY: a string value the runtime just made in this environment.
        Some(value) => Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), value) }),
        None => {
            let mut undefined = std::ptr::null_mut();
            // SAFETY: `env` is this call's; the out-pointer is a local.
            let status = unsafe { sys::napi_get_undefined(env.raw(), &mut undefined) };
            if status != sys::Status::napi_ok {
                return Err(invalid("cannot make undefined"));
            }
            // SAFETY: the value napi just returned in this environment.
            Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), undefined) })
        }
    }
}
