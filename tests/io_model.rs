//! Model-based property tests of the I/O API on real Unix socket pairs:
//! random sequences of `insert_io` (with callbacks that close themselves
//! or another source, change their interest, unref themselves, write to
//! another peer, or try `io_source`/`remove_io` on themselves),
//! peer writes and closes, `close_io`, `remove_io` (right and wrong
//! type), `io_source`, `set_io_interest`, `unref_io`/`ref_io`, another
//! loop's handle, timers that close, write or unref, and run steps,
//! checked against the reference model in `tests/support/io_model.rs`
//! (shared with the `io` fuzz target): no callback for a closed or removed
//! source, typed errors for stale handles, no byte left unread, and the
//! loop exits once everything is closed or unrefed.
//!
//! Raise the case count with `PROPTEST_CASES=N`.

#[path = "support/io_model.rs"]
mod io_model;

use io_model::{CbAction, IoOp, TimerAction};
use proptest::prelude::*;

mod common;
use common::cases;

fn cb_action() -> impl Strategy<Value = CbAction> {
    prop_oneof![
        4 => Just(CbAction::Nothing),
        1 => Just(CbAction::CloseSelf),
        1 => any::<u8>().prop_map(CbAction::CloseOther),
        1 => any::<u8>().prop_map(CbAction::Interest),
        1 => Just(CbAction::UnrefSelf),
        1 => Just(CbAction::TouchSelf),
        1 => any::<u8>().prop_map(CbAction::WriteOther),
    ]
}

fn timer_action() -> impl Strategy<Value = TimerAction> {
    prop_oneof![
        any::<u8>().prop_map(TimerAction::Close),
        any::<u8>().prop_map(TimerAction::Write),
        any::<u8>().prop_map(TimerAction::Unref),
    ]
}

fn op() -> impl Strategy<Value = IoOp> {
    prop_oneof![
        4 => (any::<u8>(), cb_action()).prop_map(|(i, a)| IoOp::Insert(i, a)),
        5 => (any::<u8>(), 1u8..64).prop_map(|(i, n)| IoOp::Write(i, n)),
        1 => any::<u8>().prop_map(IoOp::PeerClose),
        2 => any::<u8>().prop_map(IoOp::Close),
        1 => any::<u8>().prop_map(IoOp::Remove),
        1 => any::<u8>().prop_map(IoOp::RemoveWrongType),
        1 => any::<u8>().prop_map(IoOp::Source),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(i, b)| IoOp::SetInterest(i, b)),
        1 => any::<u8>().prop_map(IoOp::Unref),
        1 => any::<u8>().prop_map(IoOp::Ref),
        1 => Just(IoOp::Foreign),
        2 => (0u8..30, timer_action()).prop_map(|(ms, a)| IoOp::Timer(ms, a)),
        4 => Just(IoOp::RunNowait),
        2 => Just(IoOp::RunOnce),
    ]
}

proptest! {
    #![proptest_config(cases(200))]

    /// The I/O API agrees with the model after every operation.
    #[test]
    fn io_matches_model(ops in prop::collection::vec(op(), 1..80), end in any::<u64>()) {
        if let Err(e) = io_model::exec(&ops, end) {
            return Err(TestCaseError::fail(e));
        }
    }

    /// The fuzz target's decoder on arbitrary bytes.
    #[test]
    fn io_matches_model_for_decoded_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let (ops, end) = io_model::decode(&bytes);
        if let Err(e) = io_model::exec(&ops, end) {
            return Err(TestCaseError::fail(e));
        }
    }
}

/// Replays the `io` fuzz target's saved inputs
/// (`fuzz/regressions/io-*.bin`) through the same model.
#[test]
fn fuzz_regressions_replay() {
    let inputs = common::fuzz_regressions("io-");
    assert!(
        !inputs.is_empty(),
        "no io-* input in fuzz/regressions: the replay would check nothing"
    );
    for (name, data) in inputs {
        let (ops, end) = io_model::decode(&data);
        if let Err(e) = io_model::exec(&ops, end) {
            panic!("{name}: {e}");
        }
    }
}
