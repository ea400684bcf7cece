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
//! - `console.log`/`console.error` write synchronously to fds 1 and 2, or
//!   to the embedder's sink ([`Options::console`]), as does the host's own
//!   report of an uncaught exception;
//! - an application embeds the host on its own context and loop with
//!   [`install`]; there `process.exit` stops the loop and [`Host::run`]
//!   returns the status, the host process goes on.
//!
//! ```
//! use timerloop::EventLoop;
//! let rt = rquickjs::Runtime::new().unwrap();
//! let ctx = rquickjs::Context::full(&rt).unwrap();
//! let host = timerloop_js::install(&ctx, timerloop_js::Options::default()).unwrap();
//! let mut lp = EventLoop::with_virtual_clock();
//! host.eval_main(&mut lp, "main.js", "setTimeout(() => process.exit(2), 10)").unwrap();
//! assert_eq!(host.run(&mut lp), 2);
//! assert_eq!(lp.now(), 10);
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod engine;
pub mod host;
pub mod quickjs;
mod signals;
mod watch;

pub use engine::{Engine, Kind, Stream};
pub use host::{Host, Thrown};
pub use quickjs::{Clocks, ConsoleSink, Options, QuickJs, QuickJsHost, install};

/// The rquickjs crate the host is built on, so that an application that
/// [`install`]s the globals on its own context names the same version.
///
/// ```
/// use timerloop_js::rquickjs::{Context, Runtime};
/// let rt = Runtime::new().unwrap();
/// let ctx = Context::full(&rt).unwrap();
/// let host = timerloop_js::install(&ctx, timerloop_js::Options::default()).unwrap();
/// let mut lp = timerloop::EventLoop::with_virtual_clock();
/// host.enter(&mut lp, |ctx| ctx.eval::<(), _>("setTimeout(() => {}, 5)")).unwrap();
/// assert_eq!(host.run(&mut lp), 0);
/// assert_eq!(lp.now(), 5);
/// ```
pub use rquickjs;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
