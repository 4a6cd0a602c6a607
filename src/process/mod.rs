//! Process workers: memory shared with other processes and the waiting
//! that works across them (Linux).
//!
//! - `mapping.rs`: memfd / POSIX shm creation, opening, unlinking; the
//!   mapping itself, shared by Rust threads through an `Arc`.
//! - `waiter.rs`: the worker-side thread that sleeps on a word of the
//!   mapping and calls back when it moves.
//! - `host_watch.rs`: a worker process ends the moment its host is gone.
//! - `napi.rs`: what JS calls.

pub mod host_watch;
pub mod mapping;
pub mod waiter;

#[cfg(not(test))]
mod napi;

#[cfg(test)]
mod cross_process_tests;
