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
}

/// A JavaScript engine the host can drive.
pub trait Engine: 'static {
    /// Runs the main script (`name` is its path, for stacks).
    ///
    /// # Errors
    ///
    /// The script's uncaught exception.
    fn eval_main(&self, name: &str, source: &str) -> Result<(), Thrown>;
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
    /// The oldest rejected promise that still has no handler, formatted as
    /// Node 20 reports it (`--unhandled-rejections=throw`), and forgotten.
    fn take_unhandled_rejection(&self) -> Option<Thrown>;
    /// `process.exitCode` as an integer (0 when unset).
    fn exit_code(&self) -> i32;
}
