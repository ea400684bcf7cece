//! timerloop: Node.js 20's event loop and timers for single-threaded Rust.
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
