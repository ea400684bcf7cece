//! Long timers (issue 10, item 4): a `Duration` beyond Node's 2^31-1 ms
//! limit is kept at its length, never cut to 1 ms, and fires at its
//! deadline, never early; a plain number keeps Node's coercion. On a real
//! clock the loop arms its native timer at most `NATIVE_MAX_MS` ahead and
//! re-arms when it wakes early, as .NET's `TimerQueue` does; a test clock
//! that is not virtual (it jumps to each deadline the loop asks for, and
//! records it) checks that without waiting days. Everything else runs on
//! the virtual clock, up to a year.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use timerloop::time::{self, Instant};
use timerloop::{Clock, Delay, EventLoop, NATIVE_MAX_MS, Stats, TIMEOUT_MAX, VirtualClock};

mod common;
use common::*;

const DAY: u64 = 86_400_000;
const YEAR: u64 = 365 * DAY;

fn days(n: u64) -> Duration {
    Duration::from_millis(n * DAY)
}

/// Loop time in whole days, for readable logs.
fn day_of(lp: &EventLoop) -> String {
    let t = lp.now();
    if t.is_multiple_of(DAY) {
        format!("d{}", t / DAY)
    } else {
        format!("{t}ms")
    }
}

fn log_at_day(log: &Log, name: &'static str) -> impl FnMut(&mut EventLoop) + 'static {
    let l = log.clone();
    move |lp| push(&l, format!("{name}@{}", day_of(lp)))
}

/// `set_timeout` of a 40-day `Duration` fires after exactly 40 days: in
/// the 40-day list, with no warning, never at 1 ms.
#[test]
fn a_forty_day_duration_timeout_fires_after_forty_days() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let warned = Rc::new(Cell::new(false));
    let w = warned.clone();
    lp.set_warning_handler(move |_| w.set(true));
    lp.set_timeout(days(40), log_at_day(&log, "forty"));
    lp.set_timeout(1, log_at_day(&log, "one-ms"));
    assert_eq!(lp.stats().lists, 2, "lists 1 and 40 days");
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["one-ms@1ms", "forty@d40"]);
    assert!(!warned.get(), "a Duration is never an overflow");
}

/// A plain number beyond 2^31-1 keeps Node's coercion: 1 ms and a
/// `TimeoutOverflowWarning`, exactly as Node.
#[test]
fn a_number_beyond_the_limit_keeps_nodes_coercion() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_warning_handler(move |w| push(&l, w.name));
    lp.set_timeout(40 * DAY, log_at_day(&log, "number"));
    lp.set_timeout(TIMEOUT_MAX + 1.0, log_at_day(&log, "max+1"));
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        [
            "TimeoutOverflowWarning",
            "TimeoutOverflowWarning",
            "number@1ms",
            "max+1@1ms"
        ]
    );
    // The boundary itself: 2^31-1 is Node's, kept either way.
    assert_eq!(Delay::from(TIMEOUT_MAX).coerced(), TIMEOUT_MAX);
    let just_over = Duration::from_millis(TIMEOUT_MAX as u64 + 1);
    assert_eq!(Delay::from(just_over).coerced(), TIMEOUT_MAX + 1.0);
}

/// A year on the virtual clock: a one-year timeout, a one-year sleep and a
/// 100-day interval all fire exactly on their deadlines.
#[test]
fn a_year_of_timers_on_the_virtual_clock() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(days(365), log_at_day(&log, "timeout"));
    let runs = Rc::new(Cell::new(0));
    let r = runs.clone();
    let l = log.clone();
    lp.set_interval(days(100), move |lp| {
        push(&l, format!("interval@{}", day_of(lp)));
        r.set(r.get() + 1);
        if r.get() == 4 {
            let me = lp.current_timeout().unwrap();
            lp.clear_interval(me).unwrap();
        }
    });
    let l = log.clone();
    lp.spawn(async move {
        let start = Instant::now();
        time::sleep(days(365)).await;
        let waited = Instant::now() - start;
        push(&l, format!("sleep after {} ms", waited.as_millis()));
    });
    lp.run().unwrap();
    let slept = format!("sleep after {YEAR} ms");
    assert_eq!(
        *log.borrow(),
        [
            "interval@d100",
            "interval@d200",
            "interval@d300",
            // The sleep's timer joined the one-year list after the timeout.
            "timeout@d365",
            slept.as_str(),
            "interval@d400",
        ]
    );
    assert_eq!(lp.now(), 400 * DAY);
    assert_eq!(lp.stats(), Stats::default());
}

/// Long timers of one length are FIFO in their list, like any other;
/// `refresh` restarts one from now, `clear` removes it and lets the loop
/// end, and an unrefed one does not keep the loop alive.
#[test]
fn long_timers_refresh_clear_and_unref_like_any_other() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let a = lp.set_timeout(days(30), log_at_day(&log, "a"));
    lp.set_timeout(days(30), log_at_day(&log, "b"));
    let c = lp.set_timeout(days(30), log_at_day(&log, "c"));
    let d = lp.set_timeout(days(50), log_at_day(&log, "d"));
    lp.set_timeout(days(10), move |lp| {
        lp.refresh(a).unwrap(); // now due at day 40, after b
        lp.clear_timeout(c).unwrap();
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["b@d30", "a@d40", "d@d50"]);
    let _ = d;

    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(days(60), |_| {});
    lp.unref_timeout(t).unwrap();
    lp.run().unwrap();
    assert_eq!(lp.now(), 0, "an unrefed long timer keeps nothing alive");
}

/// `Duration::MAX` is kept as the longest timer (2^53-1 ms, beyond any
/// clock's end), with no warning: a timer that never fires before the
/// clock ends, which a `select!` over "forever" needs.
#[test]
fn duration_max_is_the_longest_timer_not_one_ms() {
    let mut lp = EventLoop::with_virtual_clock();
    let fired = Rc::new(Cell::new(false));
    let f = fired.clone();
    let t = lp.set_timeout(Duration::MAX, move |_| f.set(true));
    let f = fired.clone();
    lp.set_timeout(days(365), move |lp| {
        assert!(!f.get(), "not at 1 ms, not before a year");
        assert!(lp.timeout_is_pending(t));
        lp.clear_timeout(t).unwrap();
    });
    lp.run().unwrap();
    assert_eq!(lp.now(), YEAR);
    assert!(!fired.get());
    assert_eq!(lp.stats(), Stats::default());
}

/// A clock that is not virtual (so the loop treats its timer as an OS
/// timer and caps it), but jumps to each deadline the loop waits for, and
/// records how far ahead each wait reached.
#[derive(Debug, Clone, Default)]
struct SteppingClock {
    inner: VirtualClock,
    waits: Arc<Mutex<Vec<u64>>>,
}

impl Clock for SteppingClock {
    fn now(&self) -> Duration {
        self.inner.now()
    }

    fn wait_until(&self, deadline: Option<Duration>, _work_in_flight: bool) -> Option<Duration> {
        let deadline = deadline.expect("a loop with timers always has a deadline");
        let ahead = deadline.saturating_sub(self.inner.now());
        self.waits.lock().unwrap().push(ahead.as_millis() as u64);
        self.inner.set(deadline).unwrap();
        Some(Duration::ZERO)
    }

    fn block(&self, d: Duration) {
        self.inner.advance(d);
    }
}

/// On a real clock, the native timer is never armed more than
/// `NATIVE_MAX_MS` (about 3.1 days) ahead: a 40-day timer wakes the loop
/// every 3.1 days, each wake finds nothing due and re-arms, and the timer
/// fires on day 40 exactly, never early.
#[test]
fn the_native_timer_is_capped_and_rearmed_on_a_real_clock() {
    let clock = SteppingClock::default();
    let mut lp = EventLoop::with_clock(clock.clone());
    let fired_at = Rc::new(Cell::new(None));
    let f = fired_at.clone();
    lp.set_timeout(days(40), move |lp| f.set(Some(lp.now())));
    lp.run().unwrap();
    assert_eq!(fired_at.get(), Some(40 * DAY));
    let waits = clock.waits.lock().unwrap().clone();
    assert!(waits.iter().all(|&w| w <= NATIVE_MAX_MS), "{waits:?}");
    let expected = (40 * DAY).div_ceil(NATIVE_MAX_MS) as usize;
    assert_eq!(waits.len(), expected, "{waits:?}");
    assert_eq!(waits.iter().sum::<u64>(), 40 * DAY);
}

/// The same for a sleep and a long interval over a year, with a short timer
/// in between: every early wake re-arms, nothing fires early, and a short
/// timer made later is not held up by the cap.
#[test]
fn a_year_of_capped_wakes_fires_nothing_early() {
    let clock = SteppingClock::default();
    let mut lp = EventLoop::with_clock(clock.clone());
    let log = new_log();
    let l = log.clone();
    lp.spawn(async move {
        let start = Instant::now();
        time::sleep(days(365)).await;
        push(
            &l,
            format!(
                "sleep after {} days",
                (Instant::now() - start).as_millis() as u64 / DAY
            ),
        );
    });
    let l = log.clone();
    lp.set_timeout(days(100), move |lp| {
        push(&l, format!("day100@{}", day_of(lp)));
        let l = l.clone();
        lp.set_timeout(5, move |lp| {
            push(&l, format!("short@{}", lp.now() - 100 * DAY))
        });
    });
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        ["day100@d100", "short@5", "sleep after 365 days"]
    );
    assert_eq!(lp.now(), YEAR);
    let waits = clock.waits.lock().unwrap().clone();
    assert!(waits.iter().all(|&w| w <= NATIVE_MAX_MS));
    assert!(waits.contains(&5), "the short timer armed its own wait");
}

/// The same clock with no cap involved: waits below the cap are exact
/// (one wait per timer, no spurious wakes).
#[test]
fn short_timers_wait_exactly_once() {
    let clock = SteppingClock::default();
    let mut lp = EventLoop::with_clock(clock.clone());
    let log = new_log();
    lp.set_timeout(days(2), log_at_day(&log, "two"));
    lp.set_timeout(days(3), log_at_day(&log, "three"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["two@d2", "three@d3"]);
    assert_eq!(*clock.waits.lock().unwrap(), [2 * DAY, DAY]);
}
