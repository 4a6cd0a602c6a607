//! Shared memory: the control region's layout (the one owner of every
//! offset and limit the lane and steal protocols use; the protocols
//! themselves run in `lib/protocol/lane.js` and `lib/protocol/steal.js`), the formatting of a
//! steal section, the payload arena for large values, and the registry of
//! regions this process holds.

pub mod layout;
pub mod payload;
pub mod region;
pub mod steal;
