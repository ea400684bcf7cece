//! `EventLoop::run_until`: run to a loop time with every timer firing at
//! its own deadline (Node's `mock.timers.tick`, .NET's
//! `FakeTimeProvider.Advance`). Virtual clock unless stated.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use timerloop::{CallbackKind, Error, EventLoop, time};

mod common;
use common::*;

/// A program with timers of several durations, intervals, ticks and
/// immediates, built the same way on each loop.
fn program(lp: &mut EventLoop, log: &Log) {
    lp.set_timeout(30, at(log, "a30"));
    lp.set_timeout(10, at(log, "b10"));
    lp.set_interval(20, at(log, "iv20"));
    let l = log.clone();
    lp.set_timeout(40, move |lp| {
        push(&l, format!("c40@{}", lp.now()));
        lp.next_tick(once(&l, "c40-tick"));
        lp.set_immediate(once(&l, "c40-immediate"));
        lp.set_timeout(5, at(&l, "c40+5"));
    });
    lp.set_timeout(60, at(log, "d60"));
}

/// Stepping with `run_until` gives the same transcript as one `run` up to
/// each step: the same order, each timer at its own time; the clock stops
/// at the step even where no timer is due.
#[test]
fn steps_match_one_run() {
    let full = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    program(&mut lp, &full);
    lp.run_until(200).unwrap();
    let full = full.borrow().clone();

    let stepped = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    program(&mut lp, &stepped);
    for step in [7, 10, 33, 40, 41, 45, 200] {
        lp.run_until(step).unwrap();
        assert_eq!(lp.now(), step, "the clock stops at the step");
    }
    // The step at 40 ended before c40's immediate (as a stop there would);
    // the step at 41 ran it first.
    assert_eq!(*stepped.borrow(), full);
    assert_eq!(
        full[..8],
        [
            "b10@10",
            "iv20@20",
            "a30@30",
            "c40@40", // its list is older than the interval's, rescheduled at 20
            "c40-tick@40",
            "iv20@40",
            "c40-immediate@40",
            "c40+5@45"
        ]
    );
}

/// Where a step ends: timers due at the step and their ticks and
/// microtasks have run; immediates they queued wait for the next run.
#[test]
fn a_step_ends_after_the_timers_due_at_it() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(10, move |lp| {
        push(&l, "t10");
        lp.next_tick(say(&l, "tick"));
        lp.queue_microtask(say(&l, "micro"));
        lp.set_immediate(say(&l, "immediate"));
    });
    lp.set_timeout(10, at(&log, "u10"));
    lp.run_until(10).unwrap();
    assert_eq!(*log.borrow(), ["t10", "tick", "micro", "u10@10"]);
    assert!(lp.is_alive(), "the immediate is still queued");
    lp.run().unwrap();
    assert_eq!(log.borrow().last().unwrap(), "immediate");
    assert_eq!(lp.now(), 10);
}

/// Unlike moving the clock by hand and running once, a timer set by a
/// callback counts from its callback's time.
#[test]
fn chained_timers_count_from_their_callbacks() {
    fn backoff(lp: &mut EventLoop, log: Log, delay: u64) {
        lp.set_timeout(delay, move |lp| {
            push(&log, format!("try@{}", lp.now()));
            backoff(lp, log.clone(), delay * 2);
        });
    }
    let by_step = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    backoff(&mut lp, by_step.clone(), 10);
    lp.run_until(100).unwrap();
    assert_eq!(*by_step.borrow(), ["try@10", "try@30", "try@70"]);

    let by_hand = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    backoff(&mut lp, by_hand.clone(), 10);
    lp.virtual_clock()
        .unwrap()
        .advance(Duration::from_millis(100));
    lp.run_nowait().unwrap();
    assert_eq!(*by_hand.borrow(), ["try@100"], "the jump fires late, once");
}

/// With nothing to run, the clock still moves to the step; and the step's
/// own timer keeps nothing alive once it returns.
#[test]
fn an_empty_loop_moves_to_the_step() {
    let mut lp = EventLoop::with_virtual_clock();
    lp.run_until(1_000).unwrap();
    assert_eq!(lp.now(), 1_000);
    assert!(!lp.is_alive());
    lp.run().unwrap();
    assert_eq!(lp.now(), 1_000, "run has nothing to wait for");
}

/// A time already reached runs the timers due now and returns; an unrefed
/// timer before the step fires (the step keeps the loop alive to it).
#[test]
fn a_past_step_and_unrefed_timers() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(5, at(&log, "unrefed"));
    lp.unref_timeout(t).unwrap();
    lp.run_until(20).unwrap();
    assert_eq!(*log.borrow(), ["unrefed@5"]);
    lp.set_timeout(1, at(&log, "soon"));
    lp.block(3); // busy: the 1 ms timer is due
    lp.run_until(0).unwrap();
    assert_eq!(*log.borrow(), ["unrefed@5", "soon@23"]);
    assert_eq!(lp.now(), 23);
}

/// `stop` and a failure end the step early, as they end `run`; the next
/// step goes on from there. From inside a callback: `Reentrant`.
#[test]
fn stop_failure_and_reentrancy() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(10, |lp| lp.stop());
    lp.set_timeout(20, |_| Err::<(), _>("boom"));
    let l = log.clone();
    lp.set_timeout(30, move |lp| {
        push(
            &l,
            format!("{:?}", lp.run_until(100).map_err(|e| e.to_string())),
        );
    });
    lp.run_until(100).unwrap();
    assert_eq!(lp.now(), 10, "stopped");
    let err = lp.run_until(100).unwrap_err();
    assert!(matches!(err, Error::Uncaught(ref e) if e.kind() == CallbackKind::Timeout));
    assert_eq!(lp.now(), 20);
    lp.run_until(100).unwrap();
    assert_eq!(lp.now(), 100);
    assert!(log.borrow()[0].starts_with("Err(\"the loop is already running"));
}

/// Tasks step the same way: each sleep wakes at its own deadline.
#[test]
fn tasks_wake_at_their_own_deadlines() {
    let woke = Rc::new(RefCell::new(Vec::new()));
    let mut lp = EventLoop::with_virtual_clock();
    let w = woke.clone();
    lp.spawn(async move {
        for d in [15, 15, 15] {
            time::sleep(Duration::from_millis(d)).await;
            w.borrow_mut().push(time::Instant::now().as_millis());
        }
    });
    lp.run_until(40).unwrap();
    assert_eq!(*woke.borrow(), [15, 30]);
    lp.run_until(45).unwrap();
    assert_eq!(*woke.borrow(), [15, 30, 45]);
}

/// On the system clock the step waits for real time to reach it.
#[test]
fn the_system_clock_waits_for_the_step() {
    let mut lp = EventLoop::new();
    let log = new_log();
    lp.set_timeout(10, at(&log, "t"));
    let start = std::time::Instant::now();
    let until = lp.now() + 40;
    lp.run_until(until).unwrap();
    assert!(lp.now() >= until);
    assert!(
        start.elapsed() >= Duration::from_millis(30),
        "generous: ms rounding"
    );
    assert_eq!(log.borrow().len(), 1);
}

/// A loop made on a clock that has already run (a `VirtualClock` moved
/// first, or shared with another loop) goes on from the clock's time: its
/// `now()`, `run_until`'s step, its timers and `time::Instant` all count
/// in that one time (before, `now()` counted from the loop's making and
/// the rest from the clock's, so `run_until(now() + 20)` returned at once
/// and `sleep_until(Instant::from_millis(now() + 5))` was ready at once).
#[test]
fn a_loop_on_a_clock_that_already_ran_keeps_the_clocks_time() {
    let clock = timerloop::VirtualClock::new();
    clock.advance(Duration::from_millis(1000));
    let mut lp = EventLoop::with_clock(clock.clone());
    assert_eq!(lp.now(), 1000);
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    lp.set_timeout(10, move |lp| l.borrow_mut().push(lp.now()));
    lp.run_until(lp.now() + 20).unwrap();
    assert_eq!(*log.borrow(), [1010]);
    assert_eq!(lp.now(), 1020);
    assert_eq!(lp.scope(time::Instant::now).as_millis(), lp.now());
    let due = time::Instant::from_millis(lp.now() + 5);
    let woke = lp.block_on(async move {
        time::sleep_until(due).await;
        time::Instant::now().as_millis()
    });
    assert_eq!(woke.unwrap(), 1025);
    // A second loop on the same clock tells the same time.
    let other = EventLoop::with_clock(clock);
    assert_eq!(other.now(), lp.now());
}
