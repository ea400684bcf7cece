//! Property tests: random operation sequences on the public API, on the
//! virtual clock, checked against a reference model
//! (`tests/support/model.rs`, shared with the `ops` fuzz target).
//!
//! What every sequence must satisfy (see the model's docs for the details):
//! a timer fires at most once per arming and never before its deadline in
//! loop time; a cleared timer never fires; with nothing blocking, timers
//! fire exactly on their deadlines, so intervals fire once per period on
//! their grid; `has_ref`, `is_pending`, `is_alive()` and `stats()` agree
//! with a counting model; and once everything has ended `stats()` is all
//! zeros.
//!
//! Each runs twice: with the model's default callbacks, and with plain
//! ones, which take the timers pass's fast path (`Mix`).
//!
//! The case counts are moderate so that `cargo test --release` runs this
//! file in a few seconds; raise them with `PROPTEST_CASES=N`.

#[path = "support/model.rs"]
mod model;

use std::{cell::RefCell, rc::Rc};

use model::{Action, DelaySpec, Op, SPECIAL_DELAYS};
use proptest::prelude::*;
use proptest::strategy::Union;
use timerloop::{EventLoop, Stats};

mod common;
use common::cases;

/// Which model run a strategy feeds: the default one, or the one with
/// plain callbacks (`model::exec_plain`: one word, no drop glue, so that
/// every unkept timeout fires through the timers pass's `fire_once::<true>` and
/// its unchecked lookups, which the default callbacks, holding an `Rc`,
/// never reach). The plain mix draws short delays more, and more actions
/// on the running timer or its list, so that lists hold many timers and
/// the fast path's fallbacks run too; it has no immediate-handle ops.
#[derive(Clone, Copy, PartialEq)]
enum Mix {
    Default,
    Plain,
}

impl Mix {
    /// The weight `default` in the default mix, `plain` in the plain one.
    fn w(self, default: u32, plain: u32) -> u32 {
        if self == Mix::Plain { plain } else { default }
    }
}

/// A weighted choice among the arms whose weight is not zero.
fn weighted<T: std::fmt::Debug + 'static>(arms: Vec<(u32, BoxedStrategy<T>)>) -> BoxedStrategy<T> {
    Union::new_weighted(arms.into_iter().filter(|(w, _)| *w > 0).collect()).boxed()
}

fn ms(b: u8) -> DelaySpec {
    DelaySpec::Ms(f64::from(b))
}

/// Mostly small whole delays, sometimes the awkward ones (fractions,
/// negatives, NaN, infinities, overflow, `Duration`s).
fn delay(mix: Mix) -> BoxedStrategy<DelaySpec> {
    weighted(vec![
        (mix.w(0, 6), (0u8..4).prop_map(ms).boxed()),
        (mix.w(4, 3), (0u8..32).prop_map(ms).boxed()),
        (1, prop::sample::select(SPECIAL_DELAYS.to_vec()).boxed()),
    ])
}

fn action(time_moves: bool, mix: Mix) -> BoxedStrategy<Action> {
    let base = weighted(vec![
        (mix.w(8, 6), Just(Action::Nothing).boxed()),
        (mix.w(1, 2), any::<u8>().prop_map(Action::Clear).boxed()),
        (mix.w(1, 2), Just(Action::ClearSelf).boxed()),
        (mix.w(1, 2), any::<u8>().prop_map(Action::Refresh).boxed()),
        (mix.w(1, 2), Just(Action::RefreshSelf).boxed()),
        (1, any::<u8>().prop_map(Action::Unref).boxed()),
        (1, any::<u8>().prop_map(Action::Ref).boxed()),
        (mix.w(1, 2), delay(mix).prop_map(Action::Spawn).boxed()),
        (1, any::<u8>().prop_map(Action::TickClear).boxed()),
        (1, any::<u8>().prop_map(Action::MicrotaskClear).boxed()),
        (1, Just(Action::Immediate).boxed()),
        (1, Just(Action::Fail).boxed()),
        (1, Just(Action::TickFail).boxed()),
        (1, Just(Action::MicrotaskFail).boxed()),
    ]);
    if time_moves {
        prop_oneof![19 => base, 1 => (0u8..40).prop_map(Action::Block)].boxed()
    } else {
        base
    }
}

fn op(time_moves: bool, mix: Mix) -> BoxedStrategy<Op> {
    let timer = move || (delay(mix), action(time_moves, mix));
    let base = weighted(vec![
        (
            mix.w(6, 8),
            timer().prop_map(|(d, a)| Op::Timeout(d, a)).boxed(),
        ),
        (
            mix.w(3, 2),
            timer().prop_map(|(d, a)| Op::Interval(d, a)).boxed(),
        ),
        (2, any::<u8>().prop_map(Op::Clear).boxed()),
        (2, any::<u8>().prop_map(Op::Refresh).boxed()),
        (1, any::<u8>().prop_map(Op::Retain).boxed()),
        (1, any::<u8>().prop_map(Op::Unref).boxed()),
        (1, any::<u8>().prop_map(Op::Ref).boxed()),
        (mix.w(2, 1), Just(Op::Immediate).boxed()),
        (
            mix.w(1, 0),
            any::<u8>().prop_map(Op::ClearImmediate).boxed(),
        ),
        (
            mix.w(1, 0),
            any::<u8>().prop_map(Op::UnrefImmediate).boxed(),
        ),
        (mix.w(1, 0), any::<u8>().prop_map(Op::RefImmediate).boxed()),
        (1, Just(Op::Tick).boxed()),
        (1, Just(Op::Microtask).boxed()),
        (4, (1u8..8).prop_map(Op::RunOnce).boxed()),
        (1, Just(Op::RunNowait).boxed()),
    ]);
    if time_moves {
        prop_oneof![
            30 => base,
            1 => (0u16..200).prop_map(Op::Advance),
            1 => (0u16..200).prop_map(Op::Block),
            1 => (-50i16..200).prop_map(Op::SetClock),
        ]
        .boxed()
    } else {
        base
    }
}

proptest! {
    #![proptest_config(cases(400))]

    /// Nothing blocks and the clock moves only when the loop waits: every
    /// invariant, including exact firing times (intervals on their grid)
    /// and no timer left overdue after a run step.
    #[test]
    fn model_holds_with_exact_timing(ops in prop::collection::vec(op(false, Mix::Default), 1..100)) {
        prop_assert!(!ops.iter().any(Op::moves_clock));
        if let Err(e) = model::exec(&ops) {
            return Err(TestCaseError::fail(e));
        }
    }

    /// Blocking callbacks, `block`, `VirtualClock::advance` and `set`
    /// (forwards and refused backwards): timers may be late, never early.
    #[test]
    fn model_holds_when_time_jumps(ops in prop::collection::vec(op(true, Mix::Default), 1..120)) {
        if let Err(e) = model::exec(&ops) {
            return Err(TestCaseError::fail(e));
        }
    }

    /// The fuzz target's decoder on arbitrary bytes, so that the byte
    /// format the `ops` target uses is exercised by `cargo test` too.
    #[test]
    fn model_holds_for_decoded_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        if let Err(e) = model::exec(&model::decode(&bytes)) {
            return Err(TestCaseError::fail(e));
        }
    }

    /// The three above with plain callbacks (see [`Mix`]).
    #[test]
    fn plain_model_holds_with_exact_timing(ops in prop::collection::vec(op(false, Mix::Plain), 1..120)) {
        prop_assert!(!ops.iter().any(Op::moves_clock));
        if let Err(e) = model::exec_plain(&ops) {
            return Err(TestCaseError::fail(e));
        }
    }

    #[test]
    fn plain_model_holds_when_time_jumps(ops in prop::collection::vec(op(true, Mix::Plain), 1..120)) {
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

proptest! {
    #![proptest_config(cases(200))]

    /// Intervals, stated directly: intervals of periods P created at
    /// staggered times t fire at exactly t+P, t+2P, ... and nothing else,
    /// up to the moment they are cleared; a cleared interval never fires
    /// again, and the loop then holds nothing.
    #[test]
    fn intervals_fire_once_per_period(
        specs in prop::collection::vec((1u64..25, 0u64..40), 1..6),
        stop_at in 50u64..400,
    ) {
        let fired: Rc<RefCell<Vec<Vec<u64>>>> = Rc::new(RefCell::new(vec![Vec::new(); specs.len()]));
        let created: Rc<RefCell<Vec<Option<u64>>>> = Rc::new(RefCell::new(vec![None; specs.len()]));
        let mut lp = EventLoop::with_virtual_clock();
        for (i, &(period, at)) in specs.iter().enumerate() {
            // Each interval is created from a timeout at `at` ms (or from
            // the main body when `at` is 0), so creation times are staggered.
            let (f, c) = (fired.clone(), created.clone());
            let make = move |lp: &mut EventLoop| {
                let f = f.clone();
                c.borrow_mut()[i] = Some(lp.now());
                let iv = lp.set_interval(period, move |lp| f.borrow_mut()[i].push(lp.now()));
                lp.set_timeout(stop_at, move |lp| {
                    lp.clear_interval(iv).unwrap();
                });
            };
            if at == 0 {
                make(&mut lp);
            } else {
                lp.set_timeout(at, make);
            }
        }
        lp.run().unwrap();
        let fired = fired.borrow();
        for (i, &(period, _)) in specs.iter().enumerate() {
            let t = created.borrow()[i].unwrap();
            // Cleared at t + stop_at; a run due at that same ms may or may
            // not come first (the stop timer's list can be older), so allow
            // either.
            let n = fired[i].len() as u64;
            let full = stop_at / period;
            let expect: Vec<u64> = (1..=n).map(|k| t + k * period).collect();
            prop_assert_eq!(&fired[i], &expect, "interval {} of {} ms made at {}", i, period, t);
            prop_assert!(
                n == full || (stop_at % period == 0 && n + 1 == full),
                "interval {} of {} ms: {} runs in {} ms", i, period, n, stop_at
            );
        }
        prop_assert_eq!(lp.stats(), Stats::default());
        prop_assert!(!lp.is_alive());
    }
}
