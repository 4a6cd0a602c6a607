//! The steal section of a control region: the one shared submit region
//! every worker claims calls from (pools of 2..=31 workers by default).
//!
//! The protocol runs in JavaScript, both ends and the workers' loops:
//! `lib/protocol/steal.js`, whose header is its write-up (words, one call, why a call
//! is never lost, duplicated or misdelivered, waiting and waking). The model
//! checker in `__test__/model/` runs those classes. Offsets and limits are
//! `layout.rs`'s (`StealGeometry`); what Rust does here is format a new
//! section, so every slot starts as never published.

use std::sync::atomic::{AtomicU32, Ordering};

use super::layout::{self, slot_word, StealGeometry};
use super::region::SharedMemory;

/// The words of one steal section in a region.
pub struct Section<'a> {
    memory: &'a SharedMemory,
    base_word: usize,
    geometry: StealGeometry,
}

impl<'a> Section<'a> {
    /// `offset`: the section's byte offset in `memory` (`layout::steal_offset`).
    pub fn new(memory: &'a SharedMemory, offset: usize, geometry: StealGeometry) -> Option<Self> {
        if !offset.is_multiple_of(layout::CACHE_LINE) || offset + geometry.bytes() > memory.len() {
            return None;
        }
        Some(Self {
            memory,
            base_word: offset / 4,
            geometry,
        })
    }

    fn word(&self, index_from_section: usize) -> &AtomicU32 {
        self.memory
            .word(self.base_word + index_from_section)
            .expect("section bounds checked in Section::new")
    }

    /// Word `index` (a `slot_word`) of slot `(g, b)`.
    fn slot(&self, g: usize, b: usize, index: usize) -> &AtomicU32 {
        self.word(self.geometry.slot_offset(g, b) / 4 + index)
    }

    /// Formatting: every slot starts as never published.
    pub fn format(&self) {
        for g in 0..self.geometry.region_lanes {
            for b in 0..self.geometry.width {
                // Relaxed: the region is being formatted, before any worker
                // uses it; the caller's Release store of MAGIC publishes this.
                self.slot(g, b, slot_word::OWNER)
                    .store(layout::OWNER_HOST, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::layout::{control_bytes, steal_offset, CACHE_LINE};

    #[test]
    fn format_marks_every_slot_never_published_and_nothing_else() {
        let geometry = StealGeometry::new(3, 2, 8).unwrap();
        let len = control_bytes(0, 0, Some(&geometry)).unwrap();
        let mut buf = vec![0u64; len / 8];
        // SAFETY: `buf` is declared before `memory`, so it is dropped after
        // it; u64 storage is 8-aligned.
        let memory = unsafe { SharedMemory::new(buf.as_mut_ptr().cast(), len) }.unwrap();
        let offset = steal_offset(0, 0).unwrap();
        let s = Section::new(&memory, offset, geometry).unwrap();
        s.format();
        let mut owners = 0;
        for i in 0..len / 4 {
            let v = memory.word(i).unwrap().load(Ordering::Relaxed);
            if v == 0 {
                continue;
            }
            assert_eq!(v, layout::OWNER_HOST, "word {i}");
            owners += 1;
        }
        assert_eq!(owners, 2 * 8, "one OWNER word per slot");
        for g in 0..2 {
            for b in 0..8 {
                let owner = s.slot(g, b, slot_word::OWNER).load(Ordering::Relaxed);
                assert_eq!(owner, layout::OWNER_HOST, "slot ({g}, {b})");
            }
        }
    }

    #[test]
    fn a_section_outside_the_region_or_off_a_cache_line_is_refused() {
        let geometry = StealGeometry::new(2, 1, 3).unwrap();
        let len = control_bytes(0, 0, Some(&geometry)).unwrap();
        let mut buf = vec![0u64; len / 8];
        // SAFETY: as above.
        let memory = unsafe { SharedMemory::new(buf.as_mut_ptr().cast(), len) }.unwrap();
        let offset = steal_offset(0, 0).unwrap();
        assert!(Section::new(&memory, offset, geometry).is_some());
        assert!(Section::new(&memory, offset + 4, geometry).is_none());
        assert!(Section::new(&memory, offset + CACHE_LINE, geometry).is_none());
    }
}
