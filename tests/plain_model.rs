//! The property tests of `tests/properties.rs` with plain timer callbacks
//! (one word, no drop glue: `model::exec_plain`), so that every unkept
//! timeout fires through the timers pass's `fire_plain` and its unchecked
//! lookups (the model's default callbacks capture an `Rc`, so they never
//! do). Delays are drawn mostly from a few values, so that lists hold
//! many timers. Round 23's review wrote them.

#[path = "support/model.rs"]
mod model;

use model::{Action, DelaySpec, Op, SPECIAL_DELAYS};
use proptest::prelude::*;

mod common;
use common::cases;

fn delay() -> impl Strategy<Value = DelaySpec> {
    prop_oneof![
        6 => (0u8..4).prop_map(|b| DelaySpec::Ms(f64::from(b))),
        3 => (0u8..32).prop_map(|b| DelaySpec::Ms(f64::from(b))),
        1 => prop::sample::select(SPECIAL_DELAYS.to_vec()),
    ]
}

fn action(time_moves: bool) -> BoxedStrategy<Action> {
    let base = prop_oneof![
        6 => Just(Action::Nothing),
        2 => any::<u8>().prop_map(Action::Clear),
        2 => Just(Action::ClearSelf),
        2 => any::<u8>().prop_map(Action::Refresh),
        2 => Just(Action::RefreshSelf),
        1 => any::<u8>().prop_map(Action::Unref),
        1 => any::<u8>().prop_map(Action::Ref),
        2 => delay().prop_map(Action::Spawn),
        1 => any::<u8>().prop_map(Action::TickClear),
        1 => any::<u8>().prop_map(Action::MicrotaskClear),
        1 => Just(Action::Immediate),
        1 => Just(Action::Fail),
        1 => Just(Action::TickFail),
        1 => Just(Action::MicrotaskFail),
    ];
    if time_moves {
        prop_oneof![19 => base, 1 => (0u8..40).prop_map(Action::Block)].boxed()
    } else {
        base.boxed()
    }
}

fn op(time_moves: bool) -> BoxedStrategy<Op> {
    let base = prop_oneof![
        8 => (delay(), action(time_moves)).prop_map(|(d, a)| Op::Timeout(d, a)),
        2 => (delay(), action(time_moves)).prop_map(|(d, a)| Op::Interval(d, a)),
        2 => any::<u8>().prop_map(Op::Clear),
        2 => any::<u8>().prop_map(Op::Refresh),
        1 => any::<u8>().prop_map(Op::Retain),
        1 => any::<u8>().prop_map(Op::Unref),
        1 => any::<u8>().prop_map(Op::Ref),
        1 => Just(Op::Immediate),
        1 => Just(Op::Tick),
        1 => Just(Op::Microtask),
        4 => (1u8..8).prop_map(Op::RunOnce),
        1 => Just(Op::RunNowait),
    ];
    if time_moves {
        prop_oneof![
            30 => base,
            1 => (0u16..200).prop_map(Op::Advance),
            1 => (0u16..200).prop_map(Op::Block),
            1 => (-50i16..200).prop_map(Op::SetClock),
        ]
        .boxed()
    } else {
        base.boxed()
    }
}

proptest! {
    #![proptest_config(cases(400))]

    #[test]
    fn plain_model_holds_with_exact_timing(ops in prop::collection::vec(op(false), 1..120)) {
        prop_assert!(!ops.iter().any(Op::moves_clock));
        if let Err(e) = model::exec_plain(&ops) {
            return Err(TestCaseError::fail(e));
        }
    }

    #[test]
    fn plain_model_holds_when_time_jumps(ops in prop::collection::vec(op(true), 1..120)) {
        if let Err(e) = model::exec_plain(&ops) {
            return Err(TestCaseError::fail(e));
        }
    }

    #[test]
    fn plain_model_holds_for_decoded_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        if let Err(e) = model::exec_plain(&model::decode(&bytes)) {
            return Err(TestCaseError::fail(e));
        }
    }
}
