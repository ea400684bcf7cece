//! The engine behind the host, as a trait so that another engine (boa)
//! can replace QuickJS.
//!
//! Invariants an engine keeps:
//! - it never runs JavaScript except from these methods;
//! - its job queue holds promise reactions and `queueMicrotask` callbacks
//!   in one FIFO, and [`Engine::run_pending_job`] runs exactly one;
//! - an exception is returned, formatted, never swallowed.

use crate::host::Thrown;

/// What the loop calls back into JavaScript for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A timeout or interval fired.
    Timeout = 0,
    /// An immediate's turn came.
    Immediate = 1,
    /// The next `process.nextTick` callback.
    Tick = 2,
    /// An I/O request completed (`fs.stat`).
    Io = 3,
}

/// A JavaScript engine the host can drive.
pub trait Engine: 'static {
    /// Runs the main script (`name` is its path, for stacks).
    ///
    /// # Errors
    ///
    /// The script's uncaught exception.
    fn eval_main(&self, name: &str, source: &str) -> Result<(), Thrown>;
    /// Emits `exit` or `beforeExit` on `process` with `process.exitCode`,
    /// after setting it to `code` if given. `exit` is emitted once.
    ///
    /// # Errors
    ///
    /// A listener's exception.
    fn emit_process(&self, event: &str, code: Option<i32>) -> Result<(), Thrown>;
    /// Emits `uncaughtException` with the last exception reported (or
    /// `message` if there is none); `false` if nobody listens.
    ///
    /// # Errors
    ///
    /// A listener's exception.
    fn emit_uncaught(&self, message: &str) -> Result<bool, Thrown>;
    /// Calls the JavaScript side's dispatcher for `kind` and `id`.
    ///
    /// # Errors
    ///
    /// The callback's uncaught exception.
    fn dispatch(&self, kind: Kind, id: u32) -> Result<(), Thrown>;
    /// Whether a job (microtask) is pending.
    fn has_pending_job(&self) -> bool;
    /// Runs one pending job; `false` if there was none.
    ///
    /// # Errors
    ///
    /// The job's uncaught exception.
    fn run_pending_job(&self) -> Result<bool, Thrown>;
    /// Emits `rejectionHandled` for each promise that got a handler after
    /// `unhandledRejection` listeners heard of it (or prints Node's
    /// `PromiseRejectionHandledWarning` if nobody listens), oldest first.
    ///
    /// # Errors
    ///
    /// A listener's exception.
    fn emit_rejections_handled(&self) -> Result<(), Thrown>;
    /// The oldest rejected promise that still has no handler, formatted as
    /// Node 20 reports it (`--unhandled-rejections=throw`), and forgotten.
    fn take_unhandled_rejection(&self) -> Option<Thrown>;
    /// `process.exitCode` as an integer, `None` when unset.
    fn exit_code(&self) -> Option<i32>;
}
