//! timerloop: Node.js 20's event loop and timers for single-threaded Rust.
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations)]

pub mod collections;
pub mod script;
pub mod uv;
