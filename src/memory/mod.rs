//! Shared memory: the control region's layout, the lane protocol that runs in
//! it, the payload arena for large values, and the registry of regions this
//! process holds.

pub mod lane;
pub mod layout;
pub mod payload;
pub mod region;
pub mod steal;
