//! Delay coercion (R3.2): what `after *= 1; if !(1 <= after <= 2^31-1)
//! after = 1` makes of odd delays, the list each lands in, and the
//! `TimeoutOverflowWarning`. Virtual clock only.

use std::time::Duration;

use timerloop::{Delay, EventLoop, Stats, TIMEOUT_MAX, Warning};

mod common;
use common::*;

/// A loop whose warning handler logs `warn:<name>:<message>` into `log`.
fn warned_loop(log: &Log) -> EventLoop {
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_warning_handler(move |w: &Warning| push(&l, format!("warn:{}:{}", w.name, w.message)));
    lp
}

fn overflow_text(shown: &str) -> String {
    format!(
        "warn:TimeoutOverflowWarning:{shown} does not fit into a 32-bit signed integer.\n\
         Timeout duration was set to 1."
    )
}

/// R3.2 table: 0, 0.5, -0.5, -1, NaN and -Infinity become 1 ms silently
/// (v20 has no warning for them) and join list 1 in insertion order,
/// before a 2 ms timer created first.
#[test]
fn below_one_negative_and_nan_become_one_ms_silently() {
    let log = new_log();
    let mut lp = warned_loop(&log);
    let l = log.clone();
    lp.set_timeout(2, move |lp| push(&l, format!("two@{}", lp.now())));
    let delays: [(&str, Delay); 7] = [
        ("0", 0.into()),
        ("0.5", 0.5.into()),
        ("-0.5", (-0.5).into()),
        ("-1", (-1).into()),
        ("i64::MIN", i64::MIN.into()),
        ("NaN", f64::NAN.into()),
        ("-Infinity", f64::NEG_INFINITY.into()),
    ];
    for (name, d) in delays {
        assert_eq!(d.coerced(), 1.0, "{name}");
        let l = log.clone();
        lp.set_timeout(d, move |lp| push(&l, format!("{name}@{}", lp.now())));
    }
    assert_eq!(lp.stats().lists, 2);
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        [
            "0@1",
            "0.5@1",
            "-0.5@1",
            "-1@1",
            "i64::MIN@1",
            "NaN@1",
            "-Infinity@1",
            "two@2"
        ]
    );
}

/// R3.2 (verified texts): delays above 2^31-1 become 1 ms with a
/// `TimeoutOverflowWarning` naming the value as JavaScript prints it.
/// Node: `18446744073709552000 does not fit ...`, `1.8446744073709552e+22
/// does not fit ...`.
#[test]
fn overflowing_delays_become_one_ms_with_node_text() {
    let log = new_log();
    let mut lp = warned_loop(&log);
    // (A `Duration` this long is a long timer instead: tests/long_timers.rs.)
    let cases: [(&str, Delay, &str); 4] = [
        ("2^31", 2_147_483_648u64.into(), "2147483648"),
        ("2^31-0.5", 2_147_483_647.5.into(), "2147483647.5"),
        ("Infinity", f64::INFINITY.into(), "Infinity"),
        ("u64::MAX", u64::MAX.into(), "18446744073709552000"),
    ];
    let mut want = Vec::new();
    for (name, d, shown) in cases {
        assert_eq!(d.coerced(), 1.0, "{name}");
        let l = log.clone();
        lp.set_timeout(d, move |lp| push(&l, format!("{name}@{}", lp.now())));
        want.push(overflow_text(shown));
    }
    for (name, _, _) in cases {
        want.push(format!("{name}@1"));
    }
    lp.run().unwrap();
    assert_eq!(*log.borrow(), want);
}

/// R3.2: 2^31-1 ([`TIMEOUT_MAX`]) is kept, without a warning; the virtual
/// clock jumps straight to it.
#[test]
fn timeout_max_is_kept() {
    let log = new_log();
    let mut lp = warned_loop(&log);
    let l = log.clone();
    lp.set_timeout(TIMEOUT_MAX, move |lp| push(&l, format!("max@{}", lp.now())));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["max@2147483647"]);
}

/// R3.2 (test-timers-max-duration-warning.js): the warning is emitted on
/// every call, not deduplicated, for timeouts and intervals alike.
#[test]
fn warning_once_per_call() {
    let log = new_log();
    let mut lp = warned_loop(&log);
    lp.set_timeout(2_147_483_648u64, |_| {});
    lp.set_timeout(2_147_483_648u64, |_| {});
    let iv = lp.set_interval(2_147_483_648u64, |_| {});
    lp.clear_interval(iv).unwrap();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), vec![overflow_text("2147483648"); 3]);
}

/// R3.2: no warning for an in-range, a below-1 or a negative delay.
#[test]
fn no_warning_for_in_range_or_small_delays() {
    let log = new_log();
    let mut lp = warned_loop(&log);
    for d in [1.0, 0.0, -5.0, f64::NAN, f64::NEG_INFINITY, TIMEOUT_MAX] {
        let t = lp.set_timeout(d, |_| {});
        lp.clear_timeout(t).unwrap();
    }
    // A warning comes from a tick: the run delivers any that was queued.
    // One over the limit, last, shows the run would have delivered them.
    let t = lp.set_timeout(TIMEOUT_MAX + 1.0, |_| {});
    lp.clear_timeout(t).unwrap();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), vec![overflow_text("2147483648")]);
}

/// R3.2 (verified): Node emits the warning asynchronously, through
/// `process.emitWarning`, i.e. from a tick queued after the code that set
/// the timer. Node prints `sync tick0 warn`:
///
/// ```js
/// process.on('warning', () => log('warn'));
/// process.nextTick(() => log('tick0'));
/// setTimeout(() => {}, 2 ** 31);
/// log('sync');
/// ```
#[test]
fn warning_is_emitted_asynchronously() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_warning_handler(move |_| push(&l, "warn"));
    let l = log.clone();
    lp.enter(move |lp| {
        let l2 = l.clone();
        lp.next_tick(move |_| push(&l2, "tick0"));
        lp.set_timeout(2_147_483_648u64, |_| {});
        push(&l, "sync");
    })
    .unwrap();
    assert_eq!(*log.borrow(), ["sync", "tick0", "warn"]);
}

/// R3.2: fractions are kept, but the list key is truncated: 1.9 joins an
/// existing list 1 and fires with it, at 1 ms.
#[test]
fn one_point_nine_joins_list_one() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    for (name, d) in [("a", 1.0), ("b", 1.9), ("c", 1.0), ("d", 1.999)] {
        let l = log.clone();
        lp.set_timeout(d, move |lp| push(&l, format!("{name}@{}", lp.now())));
    }
    assert_eq!(lp.stats().lists, 1);
    assert_eq!(Delay::from(1.9).coerced(), 1.9, "the fraction is kept");
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["a@1", "b@1", "c@1", "d@1"]);
}

/// A `Duration` is rounded **up** to whole milliseconds before Node's
/// coercion (a plain number keeps Node's exact coercion, R3.2): 2.5 ms
/// lands in list 3 and 1500 µs in list 2, so a `Duration` timer never
/// fires before its duration has passed; zero is coerced to 1 ms.
#[test]
fn durations_round_up_to_milliseconds() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let delays = [
        ("2500us", Duration::from_micros(2500)),
        ("1500us", Duration::from_micros(1500)),
        ("1ns", Duration::from_nanos(1)),
        ("5ms", Duration::from_millis(5)),
        ("1s", Duration::from_secs(1)),
        ("zero", Duration::ZERO),
    ];
    for (name, d) in delays {
        let l = log.clone();
        lp.set_timeout(d, move |lp| push(&l, format!("{name}@{}", lp.now())));
    }
    assert_eq!(Delay::from(Duration::from_micros(2500)).as_ms(), 3.0);
    assert_eq!(lp.stats().lists, 5, "lists 1, 2, 3, 5 and 1000");
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        [
            "1ns@1", "zero@1", "1500us@2", "2500us@3", "5ms@5", "1s@1000"
        ]
    );
    assert_eq!(lp.stats(), Stats::default());
}

/// On the virtual clock, a 1.5 ms `Duration` timer fires at 2 ms, never at
/// 1 ms, wherever in the loop's millisecond it was created; the number 1.5
/// is a Node delay and joins the 1 ms list. (Times are loop time, whole
/// milliseconds rounded down as libuv's, R1.1: a timer created 0.9 ms into
/// a millisecond may fire 1.1 ms of clock time later, as in Node.)
#[test]
fn a_duration_timer_never_fires_early() {
    for offset_us in [0, 1, 400, 999] {
        let log = new_log();
        let clock = timerloop::VirtualClock::new();
        clock.advance(Duration::from_micros(offset_us));
        let mut lp = EventLoop::with_clock(clock);
        let l = log.clone();
        lp.set_timeout(Duration::from_micros(1500), move |lp| {
            push(&l, format!("duration@{}", lp.now()))
        });
        let l = log.clone();
        lp.set_timeout(1.5, move |lp| push(&l, format!("number@{}", lp.now())));
        lp.run().unwrap();
        assert_eq!(
            *log.borrow(),
            ["number@1", "duration@2"],
            "offset {offset_us}us"
        );
    }
}

/// R3.2: intervals are coerced identically; the period of an interval
/// given 0 or 2^31 is 1 ms.
#[test]
fn intervals_are_coerced_like_timeouts() {
    let log = new_log();
    let mut lp = warned_loop(&log);
    for (name, d) in [
        ("zero", Delay::from(0)),
        ("huge", Delay::from(2_147_483_648u64)),
    ] {
        let l = log.clone();
        lp.set_interval(d, move |lp| {
            push(&l, format!("{name}@{}", lp.now()));
            if lp.now() == 3 {
                let me = lp.current_timeout().unwrap();
                lp.clear_interval(me).unwrap();
            }
        });
    }
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        [
            overflow_text("2147483648").as_str(),
            "zero@1",
            "huge@1",
            "zero@2",
            "huge@2",
            "zero@3",
            "huge@3"
        ]
    );
}
