//! Node.js 20's event loop and timers for single-threaded Rust programs.
//!
//! [`EventLoop`] gives a program `set_timeout`, `set_interval`,
//! `set_immediate`, `next_tick` and `queue_microtask`, with `clear`,
//! `refresh` and `ref`/`unref`, in exactly the order Node v20.20.2 runs
//! them, on a libuv 1.46-like loop built on mio.
//!
//! ```
//! use std::{cell::RefCell, rc::Rc};
//! use timerloop::EventLoop;
//!
//! let log = Rc::new(RefCell::new(Vec::new()));
//! let mut lp = EventLoop::with_virtual_clock(); // deterministic, instant
//! for (name, ms) in [("x", 20), ("z", 30)] {
//!     let l = log.clone();
//!     lp.set_timeout(ms, move |_| l.borrow_mut().push(name));
//! }
//! lp.block(10); // 10 ms pass in the main body
//! let l = log.clone();
//! lp.set_timeout(20, move |_| l.borrow_mut().push("y"));
//! lp.run().unwrap();
//! // y and z are both due at 30 ms; the 20 ms list was rescheduled after x
//! // fired, with a new list id, so it loses the tie, as in Node.
//! assert_eq!(*log.borrow(), ["x", "z", "y"]);
//! ```
//!
//! # What is public
//!
//! - [`EventLoop`] and its handles: [`Timeout`], [`Immediate`],
//!   [`IoHandle`], [`Remote`], [`Completion`]; what its methods take and
//!   report ([`Delay`], [`Stats`], [`Warning`], [`IoEvent`],
//!   [`Readiness`], [`CallbackResult`], and the limits [`TIMEOUT_MAX`],
//!   [`NATIVE_MAX_MS`], [`LONG_MAX_MS`]);
//! - clocks: [`Clock`], [`SystemClock`], [`VirtualClock`];
//! - errors: [`Error`], [`CallbackError`] (with [`CallbackKind`] and
//!   [`Cause`]), [`TimerError`], [`IoError`], [`InsertError`],
//!   [`PostError`], [`ClockError`], and [`BoxError`];
//! - [`task`]: spawned tasks ([`EventLoop::spawn`], [`EventLoop::block_on`],
//!   [`task::JoinHandle`]), whose polls are microtasks;
//! - [`time`]: `sleep`, `timeout`, `interval` and [`time::Instant`], with
//!   `tokio::time`'s names, on Node timeouts; [`time::go`]: Go's `Timer`,
//!   `Ticker` and `AfterFunc`, with Go 1.23's rules; [`time::dotnet`]:
//!   .NET's `Timer` and `PeriodicTimer`;
//! - [`sync`]: [`sync::Semaphore`], Go's weighted semaphore (FIFO, all or
//!   nothing), `Send + Sync`, for tasks of any loop, thread or executor;
//! - [`net`]: `TcpListener`, `TcpStream`, `UdpSocket` and `AsyncSource` on
//!   the loop's poll phase, with `tokio::net`'s names;
//! - [`script`]: the `.tl` timer-script parser and interpreter;
//! - [`mio`], re-exported, for the sources [`EventLoop::insert_io`] takes.
//!
//! Nothing of the loop layer is: it cannot be run around [`EventLoop`].
//!
//! ```compile_fail
//! let mut lp = timerloop::EventLoop::new();
//! timerloop::uv::run(&mut lp, timerloop::uv::RunMode::Default); // private
//! ```
//!
//! # Design
//!
//! Two private layers. Underneath, a libuv-like loop that knows nothing of
//! Node timers: `uv_run`'s phases, handles with ref/unref, a native timer
//! heap, and the poll phase on mio. On top, Node's timers on **one** native
//! timer handle of that loop: a map from duration to an intrusive FIFO
//! list, the lists in a min-heap by `(expiry, list id)`, and
//! `processTimers`/`listOnTimeout` as Node runs them. The loop layer can
//! only be run through [`EventLoop`], whose guarantees (the main-body
//! drain, resuming after a failure) a direct run would skip.
//!
//! The rules the crate implements are in `docs/node-semantics.md`, which
//! ships with the crate's source, as does the guide (`docs/guide/`); rule
//! ids in these docs (R5.4, §10, ...) refer to it.
// One module lends the loop through a scoped pointer (timers/current.rs,
// with its safety argument); one stores a timer's or an immediate's
// closure of up to a word inline (timers/thin.rs, likewise), and larger
// ones of up to eight words in blocks of a thread-local pool
// (timers/pool.rs, likewise); one (timers/inline.rs) expands
// smallbox's `smallbox!` macro, whose `unsafe` call is smallbox's own;
// the timers pass (timers/process.rs) looks its running list and timer up
// unchecked, through `unsafe fn`s of collections/arena.rs and
// collections/durations.rs, each invariant written beside its use, and
// `clear_timeout`'s fast path (timers/timeout.rs, one function) looks up
// the list and links of the timer it clears so (both rely on the loop not
// having been replaced behind its `&mut` by user code: checked after user
// code returns, `EventLoop::assert_not_replaced`);
// everything else is safe code: denied here, and forbidden (no `allow` can
// reopen it) in every module that stays safe.
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod collections;
pub mod net;
mod prim;
pub mod script;
pub mod sync;
pub mod task;
pub mod time;
mod timers;
mod uv;

/// How many steps a unit test's randomized model loop takes: `n`, or a
/// fiftieth of it under Miri (`cargo +nightly miri test --lib`), which
/// interprets every instruction and checks every access.
#[cfg(test)]
pub(crate) const fn test_steps(n: usize) -> usize {
    if cfg!(miri) { n / 50 } else { n }
}

pub use timers::{
    BoxError, CallbackError, CallbackKind, CallbackResult, Cause, Delay, Error, EventLoop,
    Immediate, InsertError, IoError, IoEvent, IoHandle, LONG_MAX_MS, NATIVE_MAX_MS, Remote, Stats,
    TIMEOUT_MAX, Timeout, TimerError, Warning,
};
pub use uv::{Clock, ClockError, Completion, PostError, Readiness, SystemClock, VirtualClock};

/// The mio this crate registers I/O sources with, so that a program's
/// sources are always of the version the loop expects (no "multiple
/// different versions of crate `mio`").
pub use mio;

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The guide's Rust examples (docs/guide/, shipped in the package so that
/// the packaged crate runs them too), compiled and run as doctests. The
/// JavaScript chapter, whose examples need `timerloop-js`, is tested by
/// .ci/run with `rustdoc --test` against that crate.
#[cfg(doctest)]
mod guide {
    #[doc = include_str!("../docs/guide/README.md")]
    struct Index;
    #[doc = include_str!("../docs/guide/node.md")]
    struct Node;
    #[doc = include_str!("../docs/guide/tokio.md")]
    struct Tokio;
    #[doc = include_str!("../docs/guide/go-dotnet.md")]
    struct GoDotnet;
    #[doc = include_str!("../docs/guide/testing.md")]
    struct Testing;
    #[doc = include_str!("../docs/guide/threads.md")]
    struct Threads;
}
