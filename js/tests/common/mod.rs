//! Helpers shared by the host's integration tests.

use std::process::Output;

/// How many runs a real-clock program gets before a difference counts.
pub const REAL_CLOCK_TRIES: usize = 3;

/// Runs `run` until `same` accepts its output, at most
/// [`REAL_CLOCK_TRIES`] runs in all, and returns the last output.
///
/// The programs run on the real clock, where a machine stalled for longer
/// than the gap between two timers can reorder them (node too). Such a run
/// is tried again, as tests/conformance.rs does for its real-clock runs; a
/// real difference fails every run.
pub fn run_on_real_clock(
    mut run: impl FnMut() -> Output,
    same: impl Fn(&Output) -> bool,
) -> Output {
    let mut out = run();
    for _ in 1..REAL_CLOCK_TRIES {
        if same(&out) {
            break;
        }
        out = run();
    }
    out
}
