//! knitting-native: the native core of a shared-memory worker pool for
//! Node.js. Rust owns the layout and lifetime of the shared memory, the
//! waiting and the waking; user code runs in JS workers.
//!
//! - `memory/`: the control region's layout, the formatting of its steal
//!   section, the payload arena, the registry of held regions. The lane and
//!   steal protocols that run in that region are JavaScript (`lib/protocol/lane.js`,
//!   `lib/protocol/steal.js`), checked by the model checker in `__test__/model/`.
//! - `doorbell.rs`: how workers wake an idle host.
//! - `dispatcher.rs`: the waiter thread that schedules the host's drain.
//! - `futex.rs`: waiting and waking in the scope the memory needs (private
//!   for thread pools, shared across processes).
//! - `process/`: memory shared with worker processes, and their waiting.
//! - `spin.rs`: bounded spinning that yields the CPU.
//! - `placement.rs`: keeping a spinning worker off the host's CPU.
//! - `task_id.rs`: `stableTaskID`.
//! - `external_string.rs`: long decoded strings outside V8's young
//!   generation, where the runtime can make them.
//! - `bindings.rs`: what JS calls.
//! - `model.rs` (test-only): an exhaustive interleaving model of the
//!   doorbell.

#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

pub mod dispatcher;
pub mod doorbell;
pub mod futex;
pub mod memory;
#[cfg(test)]
mod model;
pub mod placement;
#[cfg(target_os = "linux")]
pub mod process;
pub mod spin;
pub mod task_id;

#[cfg(not(test))]
mod bindings;
#[cfg(not(test))]
mod external_string;
