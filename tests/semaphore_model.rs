//! Model-based property tests of [`Semaphore`]: random sequences of
//! acquires (random weights, zero and `u64::MAX` among them), polls on
//! this thread and another, `try_acquire`, permit drops (here and on
//! another thread), `forget`, `release` (in range and over), and cancels at
//! every point of an acquire's life (before its first poll, while queued,
//! after the grant but before a poll observed it, while too big), checked
//! after every operation against the reference model in
//! `tests/support/sem_model.rs` (shared with the `semaphore` fuzz target):
//! tokens conserved, FIFO all-or-nothing grants, no waiter stranded while
//! its tokens fit, granted acquires woken and queued ones not, every token
//! back at the end.
//!
//! Raise the case count with `PROPTEST_CASES=N`.

#[path = "support/sem_model.rs"]
mod sem_model;

use proptest::prelude::*;
use sem_model::{SemOp, Weight};

mod common;
use common::cases;

fn weight(size: u64) -> impl Strategy<Value = Weight> {
    let top = u8::try_from(size + 2).unwrap_or(u8::MAX);
    prop_oneof![
        20 => (0..top).prop_map(Weight::Small),
        1 => Just(Weight::Max),
    ]
}

fn op(size: u64) -> impl Strategy<Value = SemOp> {
    prop_oneof![
        6 => weight(size).prop_map(SemOp::Acquire),
        5 => any::<u8>().prop_map(SemOp::Poll),
        1 => any::<u8>().prop_map(SemOp::PollRemote),
        1 => Just(SemOp::PollAll),
        3 => any::<u8>().prop_map(SemOp::Cancel),
        2 => weight(size).prop_map(SemOp::TryAcquire),
        4 => any::<u8>().prop_map(SemOp::DropPermit),
        1 => any::<u8>().prop_map(SemOp::DropPermitRemote),
        1 => any::<u8>().prop_map(SemOp::Forget),
        1 => any::<u8>().prop_map(SemOp::Release),
        1 => any::<u8>().prop_map(SemOp::OverRelease),
    ]
}

fn sized_ops() -> impl Strategy<Value = (u64, Vec<SemOp>)> {
    (0u64..8).prop_flat_map(|size| (Just(size), prop::collection::vec(op(size), 1..120)))
}

proptest! {
    #![proptest_config(cases(500))]

    /// The semaphore agrees with the model after every operation.
    #[test]
    fn semaphore_matches_model((size, ops) in sized_ops()) {
        if let Err(e) = sem_model::exec(size, &ops) {
            return Err(TestCaseError::fail(e));
        }
    }

    /// The fuzz target's decoder on arbitrary bytes.
    #[test]
    fn semaphore_matches_model_for_decoded_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let (size, ops) = sem_model::decode(&bytes);
        if let Err(e) = sem_model::exec(size, &ops) {
            return Err(TestCaseError::fail(e));
        }
    }
}

/// Replays the `semaphore` fuzz target's saved inputs
/// (`fuzz/regressions/semaphore-*.bin`) through the same model.
#[test]
fn fuzz_regressions_replay() {
    let inputs = common::fuzz_regressions("semaphore-");
    assert!(
        !inputs.is_empty(),
        "no semaphore-* input in fuzz/regressions: the replay would check nothing"
    );
    for (name, data) in inputs {
        let (size, ops) = sem_model::decode(&data);
        if let Err(e) = sem_model::exec(size, &ops) {
            panic!("{name}: {e}");
        }
    }
}
