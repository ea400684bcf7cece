//! The system clock: a loop on [`SystemClock`] keeps the time of the OS's
//! monotonic clock (`std::time::Instant`), in whole milliseconds rounded
//! down, and is never ahead of it, whatever the CPU's time-stamp counter
//! (which only says when to read the OS clock again) or its calibration
//! does. Real clock; every bound here is one the loop guarantees, with no
//! margin for the machine's speed: a slow machine only makes them looser.

use std::time::{Duration, Instant};

use timerloop::{Clock, EventLoop, SystemClock, time};

/// Reads the loop's time, in the loop and in task code (each has its own
/// cache of the clock's millisecond), for about `ms` milliseconds, and
/// checks each reading against an `Instant` taken after it: the loop's
/// time counts from its clock's origin, which is after `before`.
fn never_ahead(lp: &mut EventLoop, before: Instant, ms: u64) -> usize {
    let mut reads = 0;
    let end = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < end {
        lp.update_time();
        let in_loop = lp.now();
        let in_task = lp.scope(|| time::Instant::now().as_millis());
        let real = before.elapsed();
        for (what, m) in [("the loop", in_loop), ("task code", in_task)] {
            assert!(
                Duration::from_millis(m) <= real,
                "{what} read {m} ms when only {real:?} had passed"
            );
        }
        reads += 1;
    }
    reads
}

#[test]
fn the_loops_time_is_never_ahead_of_instant() {
    let before = Instant::now();
    let mut lp = EventLoop::new();
    // Right away, and again after a sleep (a clock whose rate is off
    // drifts: after 300 ms a 30 ppm fast clock is 9 µs ahead, enough to
    // cross a millisecond's end before the OS clock does).
    let early = never_ahead(&mut lp, before, 20);
    std::thread::sleep(Duration::from_millis(300));
    let late = never_ahead(&mut lp, before, 20);
    assert!(early > 0 && late > 0);
    // And not stuck behind: after 300 ms the loop has moved on.
    assert!(lp.now() >= 300, "the loop read {} ms", lp.now());
}

#[test]
fn system_clock_now_is_instants_elapsed_time() {
    let before = Instant::now();
    let c = SystemClock::new();
    for _ in 0..1000 {
        let t = c.now();
        let real = before.elapsed();
        assert!(t <= real, "{t:?} > {real:?}");
        assert!(c.now_ms() <= u64::try_from(before.elapsed().as_millis()).unwrap());
    }
}

/// A Node timeout counts from the loop's time when it is made, whole
/// milliseconds rounded down (as libuv's): made `f` ms into a millisecond,
/// it fires at least `d - f` ms later by `Instant`, never sooner. Timers
/// made at many points of a millisecond, each checked against the
/// millisecond's start it was made in.
#[test]
fn a_timeout_fires_no_sooner_than_its_delay_from_the_loops_millisecond() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let before = Instant::now();
    let mut lp = EventLoop::new();
    let seen = Rc::new(RefCell::new(Vec::new()));
    for i in 0..40_u64 {
        // Somewhere inside a millisecond.
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_micros(i * 173 % 1000) {
            std::hint::spin_loop();
        }
        lp.update_time();
        let start = lp.now();
        let d = 1 + i % 4;
        let s = seen.clone();
        lp.set_timeout(d, move |_| {
            s.borrow_mut().push((start, d, before.elapsed()))
        });
        lp.run().unwrap();
    }
    let seen = seen.borrow();
    assert_eq!(seen.len(), 40);
    for &(start, d, fired) in seen.iter() {
        // The timer's start is `start` or later (the loop read the clock
        // again when it was made), so its due time is at least this.
        let due = Duration::from_millis(start + d);
        assert!(
            fired >= due,
            "made at {start} ms with delay {d}: fired at {fired:?}"
        );
    }
}
