//! The synchronization primitives of the cross-thread paths: std's in
//! every normal build, loom's under `cfg(loom)` (issue 14), so that
//! `RUSTFLAGS="--cfg loom" cargo test --release --lib loom_tests` can run
//! every interleaving of those paths (`src/uv/loom_tests.rs`).
//!
//! # Invariants
//!
//! - Only the shared state that other threads touch goes through here:
//!   the semaphore's lock, a task's `scheduled` flag, the posting queue's
//!   lock, its `has_msgs` flag and its keep-alive count, and the thread
//!   identity the keep-alive release compares against.
//! - `Arc`s stay std's: std's `Arc` is trusted, loom's cannot hold
//!   `dyn Trait` or make a `Waker`. Under loom they are not modelled, so
//!   the tests must not rely on an `Arc` for ordering (they do not: every
//!   hand-off they check goes through a lock or an atomic from here).
//! - Under `cfg(loom)` these types only work inside `loom::model`; nothing
//!   but the loom tests is built that way.
#![forbid(unsafe_code)]

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread::ThreadId;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread::ThreadId;

/// The calling thread's id (a loom thread's under `cfg(loom)`, where every
/// modelled thread runs on one OS thread).
pub(crate) fn current_thread_id() -> ThreadId {
    #[cfg(not(loom))]
    return std::thread::current().id();
    #[cfg(loom)]
    return loom::thread::current().id();
}
