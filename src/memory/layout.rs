//! Byte layout of a pool's control region: the header, the doorbell and one
//! lane per worker. Rust decides every offset here; JS reads them once from
//! `layout()` (see `bindings.rs`) and never hard-codes one.
//!
//! ```text
//! offset 0      header line     magic, version, lane count, slot geometry;
//!                               ROOM_SEQ, ROOM_WAITERS (payload room, below);
//!                               HOST_CPU (src/placement.rs); KEPT_SEQ (kept broadcasts)
//! offset 64     doorbell line   COUNTER (workers add), ARMED (host sets, waiter clears), STOP
//! offset 128    lane 0          see below, LANE_STRIDE bytes
//! ...           lane n-1
//! after lanes   abort words     one u32 per abort signal (host writes 1 to
//!                               abort; the worker's `signal.hasAborted()`
//!                               reads it), ABORT_SLOTS of them
//! after those   steal section   only in work-stealing pools, which have no
//!                               private lanes (see `lib/protocol/steal.js` and below)
//!
//! lane:
//!   +0    host line     REQ (request bits, written only by the host)
//!   +64   worker line   RES (response bits, written only by the worker), SLEEPING
//!   +128  slot 0 .. slot 31, SLOT_STRIDE bytes each:
//!           +0  word TASK/STATUS  request: task index (0..65535); response: the
//!                                 status, 0x4b4e5600 value or 0x4b4e5601 thrown
//!                                 (values no task index takes, so a slot read
//!                                 before its answer is told from one:
//!                                 `lib/protocol/slot.js`)
//!           +4  word CALL         call id, echoed back (a cross-check, not a lookup key)
//!           +8  word LEN          encoded byte length
//!           +12 word EXT          offset in the payload region, or NO_EXT when inline
//!           +16 word SIGNAL       request: abort word index + 1, or 0 for none
//!           +20 word STARTED      request: 0; the worker sets 1 when it starts
//!                                 the call, 2 once its task awaits a promise,
//!                                 3 once it ended (read by the host's hard
//!                                 timeout: `lib/protocol/slot.js`)
//!           +24 word OWNER        steal section only: who holds the slot
//!                                 (`lib/protocol/steal.js`); unused in private lanes
//!           +28 word RUN_MICROS  response: the task's run time in µs, written
//!                                 by the worker for `stats: true` (untrusted:
//!                                 the host clamps it)
//!           +32 INLINE_BYTES of inline payload
//!
//! steal section (`StealGeometry`):
//!   +0    pending lines  PENDING[g], one word per region lane (MAX_REGION_LANES
//!                        words, two cache lines): host sets bits, claimants clear
//!   +128  sleepers line  SLEEPERS (a bit per worker), IDLE (a bit per worker
//!                        with nothing started), SPINNER (the one idle worker
//!                        that spins, or 0)
//!   +192  done lines     per worker, DONE_STRIDE bytes: DONE[g] per region lane
//!                        and DONE_SEQ, written only by that worker; WAKE, the
//!                        counter it parks on (bumped by whoever wakes it)
//!   then  slots          region lane g, slot b at (g * width + b) * SLOT_STRIDE
//! ```
//! Each writer owns whole 64-byte lines so that the host's stores and a
//! worker's stores never share a cache line (no false sharing on the words
//! both sides poll).

/// First word of a formatted region ("KNT1").
pub const MAGIC: u32 = 0x4b4e_5431;
/// Bumped whenever anything in this file changes meaning.
pub const VERSION: u32 = 2;

pub const CACHE_LINE: usize = 64;
/// Slots per lane: one bit each in the 32-bit REQ/RES words.
pub const SLOT_COUNT: usize = 32;
/// Inline payload bytes per slot (knitting: 512). Larger payloads go to the
/// payload region.
pub const INLINE_BYTES: usize = 512;
pub const SLOT_HEADER_BYTES: usize = 32;
pub const SLOT_STRIDE: usize = round_up(SLOT_HEADER_BYTES + INLINE_BYTES, CACHE_LINE);
pub const LANE_SLOTS_OFFSET: usize = 2 * CACHE_LINE;
pub const LANE_STRIDE: usize = LANE_SLOTS_OFFSET + SLOT_COUNT * SLOT_STRIDE;
pub const LANES_OFFSET: usize = 2 * CACHE_LINE;
/// Lanes one region can hold; far above any sensible thread count.
pub const MAX_LANES: usize = 1024;
/// Abort words one region can hold.
pub const MAX_ABORT_SLOTS: usize = 1 << 20;
/// Region lanes of a steal section: the PENDING words fill two cache lines.
pub const MAX_REGION_LANES: usize = 32;
/// Workers that can claim from one steal section: one SLEEPERS bit each, and
/// a region lane (at most 32 slots) must hold one claim per consumer plus one
/// (`StealGeometry::new`), so 31.
pub const MAX_STEAL_CLAIMANTS: usize = 31;
/// OWNER of a steal slot the host has never published.
pub const OWNER_HOST: u32 = u32::MAX;
/// EXT value of a slot whose payload is inline.
pub const NO_EXT: u32 = u32::MAX;

/// Word (u32) indices from the start of the region.
pub mod word {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 1;
    pub const LANES: usize = 2;
    pub const SLOT_COUNT: usize = 3;
    pub const SLOT_STRIDE: usize = 4;
    pub const INLINE_BYTES: usize = 5;
    pub const LANE_STRIDE: usize = 6;
    pub const ABORT_SLOTS: usize = 7;
    /// Payload room (`lib/payload/region.js`): workers whose answers wait for room
    /// in the payload region park on ROOM_SEQ, counted in ROOM_WAITERS;
    /// whoever frees a block (or the host, publishing calls) bumps ROOM_SEQ
    /// and wakes them while ROOM_WAITERS is not 0. Written only while the
    /// region is full, so the header line stays read-mostly.
    pub const ROOM_SEQ: usize = 8;
    pub const ROOM_WAITERS: usize = 9;
    /// The CPU the host polls for answers on, + 1, while it polls (0: it
    /// does not, or the CPU is unknown). The host writes it when it changes
    /// (lib/host/loop.js); a worker about to spin moves off that CPU
    /// (src/placement.rs). A hint, never trusted.
    pub const HOST_CPU: usize = 10;
    /// Kept broadcasts made so far (`lib/host/broadcast.js`): the host bumps it
    /// before it sends one to the workers; a worker still starting that reads
    /// more than it has received waits for the rest before it reports ready.
    /// Written by the host only, and rarely.
    pub const KEPT_SEQ: usize = 11;
    /// Doorbell line.
    pub const COUNTER: usize = 16;
    pub const ARMED: usize = 17;
    pub const STOP: usize = 18;
}

/// Word indices from the start of a lane.
pub mod lane_word {
    pub const REQ: usize = 0;
    pub const RES: usize = 16;
    pub const SLEEPING: usize = 17;
}

/// Word indices from the start of a slot.
pub mod slot_word {
    pub const TASK: usize = 0;
    pub const CALL: usize = 1;
    pub const LEN: usize = 2;
    pub const EXT: usize = 3;
    pub const SIGNAL: usize = 4;
    pub const STARTED: usize = 5;
    pub const OWNER: usize = 6;
    /// Response: how long the task ran in the worker, in microseconds (the
    /// pool's `stats` option; 0 without it). A hint for statistics only.
    pub const RUN_MICROS: usize = 7;
}

/// Word indices from the start of a steal section.
pub mod steal_word {
    /// PENDING[g] is `PENDING + g`.
    pub const PENDING: usize = 0;
    pub const SLEEPERS: usize = 32;
    /// A bit per worker holding no started call (a scheduling hint only).
    pub const IDLE: usize = 33;
    /// `w + 1` of the one idle worker allowed to spin, or 0.
    pub const SPINNER: usize = 34;
}

/// Byte offsets within a steal section.
pub const STEAL_PENDING_BYTES: usize = 2 * CACHE_LINE;
pub const STEAL_DONE_OFFSET: usize = STEAL_PENDING_BYTES + CACHE_LINE;
/// One worker's done lines: DONE[g] for every region lane, DONE_SEQ, WAKE.
pub const DONE_STRIDE: usize = round_up((MAX_REGION_LANES + 2) * 4, CACHE_LINE);
/// Word index of DONE_SEQ within a worker's done lines.
pub const DONE_SEQ_WORD: usize = MAX_REGION_LANES;
/// Word index of the worker's WAKE counter within its done lines.
pub const WAKE_WORD: usize = MAX_REGION_LANES + 1;

/// The shape of a steal section: `workers` claimants, `region_lanes` region
/// lanes of `width` slots each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StealGeometry {
    pub workers: usize,
    pub region_lanes: usize,
    pub width: usize,
}

impl StealGeometry {
    /// Checks the rule that keeps every claimant able to claim: a region lane
    /// holds at most 32 slots (one bit each in PENDING and DONE) and at least
    /// one slot per consumer plus one, i.e. `slots / region_lanes >= workers + 1`.
    pub fn new(workers: usize, region_lanes: usize, width: usize) -> Result<Self, String> {
        if !(2..=MAX_STEAL_CLAIMANTS).contains(&workers) {
            return Err(format!(
                "a steal section serves 2..={MAX_STEAL_CLAIMANTS} workers, got {workers}"
            ));
        }
        if region_lanes == 0 || region_lanes > MAX_REGION_LANES {
            return Err(format!(
                "region lanes must be 1..={MAX_REGION_LANES}, got {region_lanes}"
            ));
        }
        if width > SLOT_COUNT || width < workers + 1 {
            return Err(format!(
                "a region lane holds {}..={SLOT_COUNT} slots for {workers} workers, got {width}",
                workers + 1
            ));
        }
        Ok(Self {
            workers,
            region_lanes,
            width,
        })
    }

    pub fn slots(&self) -> usize {
        self.region_lanes * self.width
    }

    /// Byte offset, from the section start, of worker `w`'s done lines.
    pub const fn done_offset(&self, w: usize) -> usize {
        STEAL_DONE_OFFSET + w * DONE_STRIDE
    }

    /// Byte offset, from the section start, of the first slot.
    pub const fn slots_offset(&self) -> usize {
        STEAL_DONE_OFFSET + self.workers * DONE_STRIDE
    }

    /// Byte offset, from the section start, of slot `b` of region lane `g`.
    pub const fn slot_offset(&self, g: usize, b: usize) -> usize {
        self.slots_offset() + (g * self.width + b) * SLOT_STRIDE
    }

    pub const fn bytes(&self) -> usize {
        self.slots_offset() + self.region_lanes * self.width * SLOT_STRIDE
    }
}

const fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// Bytes a region with `lanes` lanes and `abort_slots` abort words needs.
pub fn region_bytes(lanes: usize, abort_slots: usize) -> Result<usize, String> {
    if lanes == 0 {
        return Err(format!("lane count must be 1..={MAX_LANES}, got 0"));
    }
    control_bytes(lanes, abort_slots, None)
}

/// Bytes a control region needs: `lanes` private lanes (0 for a stealing
/// pool, which has a steal section instead), `abort_slots` abort words and
/// an optional steal section.
pub fn control_bytes(
    lanes: usize,
    abort_slots: usize,
    steal: Option<&StealGeometry>,
) -> Result<usize, String> {
    if lanes == 0 && steal.is_none() {
        return Err("a control region needs private lanes or a steal section".into());
    }
    Ok(steal_offset(lanes, abort_slots)? + steal.map_or(0, StealGeometry::bytes))
}

/// Byte offset of the steal section: after the abort words.
pub fn steal_offset(lanes: usize, abort_slots: usize) -> Result<usize, String> {
    if lanes > MAX_LANES {
        return Err(format!("lane count must be 0..={MAX_LANES}, got {lanes}"));
    }
    if abort_slots > MAX_ABORT_SLOTS {
        return Err(format!(
            "abort slots must be 0..={MAX_ABORT_SLOTS}, got {abort_slots}"
        ));
    }
    Ok(abort_offset(lanes) + round_up(abort_slots * 4, CACHE_LINE))
}

/// Byte offset of the abort words, right after the last lane.
pub const fn abort_offset(lanes: usize) -> usize {
    lane_offset(lanes)
}

/// Byte offset of lane `lane`.
pub const fn lane_offset(lane: usize) -> usize {
    LANES_OFFSET + lane * LANE_STRIDE
}

/// Byte offset of slot `slot` in lane `lane`.
pub const fn slot_offset(lane: usize, slot: usize) -> usize {
    lane_offset(lane) + LANE_SLOTS_OFFSET + slot * SLOT_STRIDE
}

// The layout's invariants, checked at compile time: each writer owns whole
// cache lines (host: REQ's line; worker: RES and SLEEPING's line), and slots
// fit their lane.
const _: () = {
    assert!(LANES_OFFSET.is_multiple_of(CACHE_LINE));
    assert!(LANE_STRIDE.is_multiple_of(CACHE_LINE));
    assert!(SLOT_STRIDE.is_multiple_of(CACHE_LINE));
    assert!(SLOT_STRIDE >= SLOT_HEADER_BYTES + INLINE_BYTES);
    assert!(lane_word::REQ * 4 / CACHE_LINE != lane_word::RES * 4 / CACHE_LINE);
    assert!(lane_word::RES * 4 / CACHE_LINE == lane_word::SLEEPING * 4 / CACHE_LINE);
    assert!(word::COUNTER * 4 == CACHE_LINE);
    assert!(word::HOST_CPU * 4 < CACHE_LINE);
    assert!(word::KEPT_SEQ * 4 < CACHE_LINE);
    assert!(word::STOP * 4 < 2 * CACHE_LINE);
    assert!(SLOT_COUNT == 32);
    assert!(slot_word::OWNER * 4 < SLOT_HEADER_BYTES);
    assert!(slot_word::RUN_MICROS * 4 < SLOT_HEADER_BYTES);
    // PENDING fills its own two lines; SLEEPERS, IDLE, SPINNER the next one.
    assert!(MAX_REGION_LANES * 4 == STEAL_PENDING_BYTES);
    assert!(steal_word::SLEEPERS * 4 == STEAL_PENDING_BYTES);
    assert!(steal_word::SPINNER * 4 < STEAL_DONE_OFFSET);
    assert!(DONE_STRIDE.is_multiple_of(CACHE_LINE));
    assert!(MAX_STEAL_CLAIMANTS < 32);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_consistent() {
        assert_eq!(slot_offset(0, SLOT_COUNT), lane_offset(1));
        assert_eq!(region_bytes(3, 0).unwrap(), lane_offset(3));
        assert_eq!(region_bytes(3, 1).unwrap(), lane_offset(3) + CACHE_LINE);
        assert_eq!(
            region_bytes(3, 17).unwrap(),
            lane_offset(3) + 2 * CACHE_LINE
        );
        assert!(region_bytes(0, 0).is_err());
        assert!(region_bytes(MAX_LANES + 1, 0).is_err());
        assert!(region_bytes(1, MAX_ABORT_SLOTS + 1).is_err());
    }

    #[test]
    fn steal_geometry_follows_its_rule() {
        let g = StealGeometry::new(2, 2, 32).unwrap();
        assert_eq!(g.slots(), 64);
        assert_eq!(g.slot_offset(1, 0), g.slot_offset(0, 31) + SLOT_STRIDE);
        assert_eq!(g.bytes(), g.slot_offset(1, 31) + SLOT_STRIDE);
        assert!(g.slots_offset().is_multiple_of(CACHE_LINE));
        // width must hold one slot per worker plus one, and at most 32
        assert!(StealGeometry::new(3, 8, 3).is_err());
        assert!(StealGeometry::new(3, 8, 4).is_ok());
        assert!(StealGeometry::new(2, 1, 33).is_err());
        assert!(StealGeometry::new(1, 1, 32).is_err());
        assert!(StealGeometry::new(32, 1, 32).is_err());
        assert!(StealGeometry::new(31, 31, 32).is_ok());
        let bytes = control_bytes(0, 4, Some(&g)).unwrap();
        assert_eq!(bytes, steal_offset(0, 4).unwrap() + g.bytes());
        assert!(control_bytes(0, 0, None).is_err());
    }
}
