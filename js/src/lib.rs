//! Node.js 20 timer programs on timerloop: a QuickJS host whose
//! `setTimeout`, `setInterval`, `setImmediate`, `process.nextTick` and
//! microtasks are the crate's own, in Node's order.
//!
//! Invariants:
//! - no JavaScript port of Node's timers: every schedule, clear, refresh
//!   and ref goes to the [`EventLoop`](timerloop::EventLoop); the JavaScript prelude only keeps
//!   callbacks and gives handles Node's shape;
//! - the engine's job queue is drained only from the loop's microtask
//!   queue, one job per loop microtask, so promise jobs run where Node runs
//!   V8's microtasks (see [`host`]);
//! - `console.log`/`console.error` write synchronously to fds 1 and 2.
//!
//! ```no_run
//! use timerloop::EventLoop;
//! use timerloop_js::QuickJsHost;
//! let mut lp = EventLoop::new();
//! let host = QuickJsHost::create(vec!["tljs".into(), "main.js".into()]).unwrap();
//! host.eval_main(&mut lp, "main.js", "setTimeout(() => console.log('hi'), 10)").unwrap();
//! lp.run().unwrap();
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations)]

pub mod engine;
pub mod host;
pub mod quickjs;

pub use engine::{Engine, Kind};
pub use host::{Host, Thrown};
pub use quickjs::{QuickJs, QuickJsHost};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
