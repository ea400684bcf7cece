//! Model-based property tests of the executor (`src/task`) and the timer
//! futures (`src/time`) on a virtual clock: random sequences of spawns
//! (tasks pending on a gate, sleeping, ticking an interval, waiting under
//! a timeout), wakes on the loop's thread and from another thread,
//! finishes, sleep resets, timer drops, aborts, `JoinHandle` drops and run
//! steps (`run_nowait`, `run_once`, `run`, a hand-advanced clock), checked
//! against the reference model in `tests/support/exec_model.rs` (shared
//! with the `tasks` fuzz target): no task polled after its completion or
//! abort, every wake polls by the next run step, timers never early (and
//! exact while the clock moves only when the loop waits), a refed timer
//! keeps the loop alive, `JoinHandle`s finish with the right output, and
//! every future is dropped with its loop.
//!
//! Raise the case count with `PROPTEST_CASES=N`.

#[path = "support/exec_model.rs"]
mod exec_model;

use exec_model::{ExecOp, Kind};
use proptest::prelude::*;

mod common;
use common::cases;

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Gate),
        (1u8..40).prop_map(Kind::Sleep),
        (1u8..20, 1u8..5).prop_map(|(p, n)| Kind::Interval(p, n)),
        (1u8..40).prop_map(Kind::Timeout),
    ]
}

fn op(clock_moves: bool) -> BoxedStrategy<ExecOp> {
    let base = prop_oneof![
        5 => kind().prop_map(ExecOp::Spawn),
        4 => any::<u8>().prop_map(ExecOp::Wake),
        2 => any::<u8>().prop_map(ExecOp::WakeRemote),
        3 => any::<u8>().prop_map(ExecOp::Finish),
        2 => (any::<u8>(), 0u8..40).prop_map(|(t, ms)| ExecOp::Reset(t, ms)),
        1 => any::<u8>().prop_map(ExecOp::DropTimer),
        2 => any::<u8>().prop_map(ExecOp::Abort),
        1 => any::<u8>().prop_map(ExecOp::DropHandle),
        3 => Just(ExecOp::RunNowait),
        3 => Just(ExecOp::RunOnce),
        1 => Just(ExecOp::Run),
    ];
    if clock_moves {
        prop_oneof![15 => base, 1 => (0u8..50).prop_map(ExecOp::Advance)].boxed()
    } else {
        base.boxed()
    }
}

proptest! {
    #![proptest_config(cases(300))]

    /// The clock moves only when the loop waits: timers exact.
    #[test]
    fn executor_matches_model(ops in prop::collection::vec(op(false), 1..80)) {
        if let Err(e) = exec_model::exec(&ops) {
            return Err(TestCaseError::fail(e));
        }
    }

    /// The clock also jumps by hand: timers late, never early.
    #[test]
    fn executor_matches_model_when_time_jumps(ops in prop::collection::vec(op(true), 1..80)) {
        if let Err(e) = exec_model::exec(&ops) {
            return Err(TestCaseError::fail(e));
        }
    }

    /// The fuzz target's decoder on arbitrary bytes.
    #[test]
    fn executor_matches_model_for_decoded_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Err(e) = exec_model::exec(&exec_model::decode(&bytes)) {
            return Err(TestCaseError::fail(e));
        }
    }
}

/// Replays the `tasks` fuzz target's saved inputs
/// (`fuzz/regressions/tasks-*.bin`) through the same model.
#[test]
fn fuzz_regressions_replay() {
    let inputs = common::fuzz_regressions("tasks-");
    assert!(
        !inputs.is_empty(),
        "no tasks-* input in fuzz/regressions: the replay would check nothing"
    );
    for (name, data) in inputs {
        if let Err(e) = exec_model::exec(&exec_model::decode(&data)) {
            panic!("{name}: {e}");
        }
    }
}
