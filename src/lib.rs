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
//! The crate has two layers, in two modules: [`uv`], a libuv-like loop that
//! knows nothing of Node timers, and [`timers`], Node's timers on one native
//! timer handle of that loop (its docs draw the data structure).
//! [`collections`] holds the intrusive list and the indexed heap both use;
//! [`script`] runs `.tl` timer scripts, the format the conformance suite
//! checks against real Node.
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations)]

pub mod collections;
pub mod script;
pub mod timers;
pub mod uv;

pub use timers::{
    BoxError, CallbackError, CallbackKind, CallbackResult, Cause, Delay, Error, EventLoop,
    Immediate, Remote, Stats, TIMEOUT_MAX, Timeout, TimerError, Warning,
};
pub use uv::{Clock, Completion, Readiness, SystemClock, VirtualClock};
