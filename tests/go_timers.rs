//! `time::go`: Go 1.23's Timer, Ticker and AfterFunc rules (G1–G6 of the
//! seeds), on the virtual clock. Each test states the rule it checks; the
//! times are exact because virtual time only moves when the loop waits or
//! a test blocks it (`lp.block`, or `EventLoop::with_current` inside a task).

use std::cell::{Cell, OnceCell, RefCell};
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use timerloop::time::{self, Instant, InvalidPeriod, go};
use timerloop::{Clock, Error, EventLoop, VirtualClock};

mod common;
use common::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A virtual-clock loop and its start instant.
fn setup() -> (EventLoop, Instant) {
    let mut lp = EventLoop::with_virtual_clock();
    let start = lp.scope(Instant::now);
    (lp, start)
}

/// Milliseconds from `start` to `v`.
fn rel(start: Instant, v: Instant) -> u64 {
    (v - start).as_millis() as u64
}

/// Milliseconds since `start` on the current loop's clock.
fn since(start: Instant) -> u64 {
    rel(start, Instant::now())
}

/// Blocks the current loop (from inside a task) for `n` ms, as a busy
/// receiver would.
fn busy(n: u64) {
    EventLoop::with_current(|lp| lp.block(n));
}

// ----- Timer: values (G1) ----------------------------------------------------

/// G1: the value is the scheduled time, even when the receive comes late
/// (here 240 ms late, with the Node timeout long fired).
#[test]
fn timer_value_is_the_scheduled_time_when_received_late() {
    let (mut lp, start) = setup();
    let (value, at) = lp
        .block_on(async move {
            let mut t = go::Timer::new(ms(10));
            time::sleep(ms(250)).await;
            let v = t.recv().await;
            (rel(start, v), since(start))
        })
        .unwrap();
    assert_eq!((value, at), (10, 250));
}

/// A receive after the deadline gets the value at once, even before the
/// loop's timers phase has run the Node timeout (the loop was blocked past
/// it), as Go's receive runs a due channel timer itself.
#[test]
fn timer_value_is_available_before_the_timers_phase() {
    let (mut lp, start) = setup();
    let mut t = lp.scope(|| go::Timer::new(ms(100)));
    lp.block(99);
    assert_eq!(t.try_recv(), None, "not yet due");
    lp.block(201);
    assert_eq!(t.try_recv().map(|v| rel(start, v)), Some(100));
    assert_eq!(t.try_recv(), None, "one value only");
    lp.scope(|| ());
    assert_eq!(lp.stats().timers, 0, "the unfired Node timeout was cleared");
    assert!(!lp.is_alive());
}

/// `Duration::ZERO` is due now: the value is there at once, no Node
/// timeout is made. One nanosecond rounds up to a 1 ms timeout.
#[test]
fn zero_timer_is_due_at_once_without_a_node_timeout() {
    let (mut lp, start) = setup();
    let mut t = lp.scope(|| go::Timer::new(Duration::ZERO));
    assert_eq!(lp.stats().timers, 0);
    assert_eq!(t.try_recv().map(|v| rel(start, v)), Some(0));
    let mut n = lp.scope(|| go::Timer::new(Duration::from_nanos(1)));
    assert_eq!(lp.stats().timers, 1);
    assert_eq!(n.try_recv(), None);
    let v = lp.block_on(async move { n.recv().await }).unwrap();
    assert_eq!(rel(start, v), 1);
}

/// A task waiting in `recv` is woken by the Node timeout, at the deadline.
#[test]
fn a_waiting_receiver_is_woken_at_the_deadline() {
    let (mut lp, start) = setup();
    let mut t = lp.scope(|| go::Timer::new(ms(30)));
    let mut task = tokio_test::task::spawn(());
    assert!(task.enter(|cx, _| t.poll_recv(cx)).is_pending());
    lp.run().unwrap();
    assert!(task.is_woken());
    assert_eq!(lp.now(), 30);
    let got = task.enter(|cx, _| t.poll_recv(cx));
    assert_eq!(got.map(|v| rel(start, v)), std::task::Poll::Ready(30));
}

/// A clock whose whole-millisecond reading lags its `Duration` reading by
/// one millisecond: against [`Clock::now_ms`]'s contract, but what two
/// caches of one clock may show for an instant (the loop's own and the one
/// code without the loop reads). A deadline the timer found reached stays
/// reached, whatever a later read says.
#[derive(Debug, Clone)]
struct LaggingMs(VirtualClock);

impl Clock for LaggingMs {
    fn now(&self) -> Duration {
        self.0.now()
    }
    fn now_ms(&self) -> u64 {
        self.0.now_ms().saturating_sub(1)
    }
    /// One millisecond past the deadline, where the lagging millisecond
    /// reaches it (else the loop would wait for it without end).
    fn wait_until(&self, deadline: Option<Duration>, in_flight: bool) -> Option<Duration> {
        self.0.wait_until(deadline.map(|d| d + ms(1)), in_flight)
    }
    fn block(&self, d: Duration) {
        self.0.block(d)
    }
    fn is_virtual(&self) -> bool {
        true
    }
}

/// A zero timer is due at once, and a timer whose Node timeout fired is
/// due, even where the loop's millisecond reads behind the clock that
/// timed them: a receiver is never left waiting for a value no timeout
/// will announce (before, `recv` on a zero timer here never finished).
#[test]
fn a_reached_deadline_stays_due_when_the_millisecond_lags() {
    let v = VirtualClock::new();
    v.advance(ms(5));
    let mut lp = EventLoop::with_clock(LaggingMs(v));
    let mut zero = lp.scope(|| go::Timer::new(Duration::ZERO));
    assert_eq!(lp.stats().timers, 0);
    let got = lp.block_on(async move { zero.recv().await }).unwrap();
    assert_eq!(got.as_millis(), 5, "the value counts from the clock's time");
    let mut later = lp.scope(|| go::Timer::new(ms(3)));
    let got = lp.block_on(async move { later.recv().await }).unwrap();
    assert_eq!(got.as_millis(), 8);
}

/// Durations round up to whole milliseconds.
#[test]
fn durations_round_up() {
    let (mut lp, start) = setup();
    let v = lp
        .block_on(async { go::after(Duration::from_micros(4200)).await })
        .unwrap();
    assert_eq!(rel(start, v), 5);
}

/// A timer longer than one Node timeout's reach (2^31-1 ms) re-arms and
/// is never early.
#[test]
fn long_timers_rearm_until_their_deadline() {
    let (mut lp, start) = setup();
    let days = 40 * 86_400_000;
    let v = lp
        .block_on(async move { go::Timer::new(ms(days)).recv().await })
        .unwrap();
    assert_eq!((rel(start, v), lp.now()), (days, days));
}

// ----- Timer: stop (G2, G5) ----------------------------------------------------

/// G2: stop before the deadline is true; a second stop is false; nothing
/// is received afterwards and nothing keeps the loop alive.
#[test]
fn stop_before_the_deadline() {
    let (mut lp, _start) = setup();
    let mut t = lp.scope(|| go::Timer::new(ms(100)));
    assert!(lp.is_alive(), "a pending timer holds the loop");
    assert!(t.stop());
    assert!(!t.stop());
    lp.run().unwrap();
    assert_eq!(lp.now(), 0, "nothing was left to wait for");
    assert_eq!(lp.stats().timers, 0);
    lp.block(500);
    assert_eq!(t.try_recv(), None);
}

/// G2: after the value is received, stop is false (the timer expired).
#[test]
fn stop_after_receive_is_false() {
    let (mut lp, _start) = setup();
    let mut t = lp
        .block_on(async {
            let mut t = go::Timer::new(ms(10));
            t.recv().await;
            t
        })
        .unwrap();
    assert!(!t.stop());
    assert_eq!(t.try_recv(), None);
}

/// G5 (Go 1.23): a deadline that passed but whose value nobody received
/// leaves the timer active: stop is true, and the value is discarded: no
/// stale value is ever received after it.
#[test]
fn stop_when_fired_but_not_received_is_true_and_discards_the_value() {
    let (mut lp, start) = setup();
    let mut t = lp.scope(|| go::Timer::new(ms(10)));
    lp.run().unwrap(); // the Node timeout fires at 10; nobody receives
    assert_eq!(lp.now(), 10);
    assert_eq!(lp.stats().timers, 0);
    assert!(!lp.is_alive(), "a fired timer no longer holds the loop");
    assert!(t.stop(), "not received: still active");
    assert_eq!(t.try_recv(), None, "no stale value");
    lp.block(100);
    assert_eq!(t.try_recv(), None, "still none later");
    // A reset arms it again, and the value is the new one.
    assert!(!t.reset(ms(5)), "stopped: not active");
    let v = lp.block_on(async move { t.recv().await }).unwrap();
    assert_eq!(rel(start, v), 115);
}

/// A receive that pends forever (stopped or already received) leaves
/// `block_on` with nothing to wait for: `Error::Stalled`, as Go blocks
/// forever.
#[test]
fn receiving_from_a_stopped_or_expired_timer_stalls() {
    let (mut lp, _start) = setup();
    let mut t = lp.scope(|| go::Timer::new(ms(10)));
    assert!(t.stop());
    let r = lp.block_on(async move { t.recv().await });
    assert!(matches!(r, Err(Error::Stalled)), "{r:?}");
    assert_eq!(lp.now(), 0);

    let r = lp.block_on(async {
        let mut t = go::Timer::new(ms(10));
        t.recv().await;
        t.recv().await // received already: blocks forever
    });
    assert!(matches!(r, Err(Error::Stalled)), "{r:?}");
    assert_eq!(lp.now(), 10);
}

// ----- Timer: reset (G3) ---------------------------------------------------------

/// G3: reset of an active timer is true, and the old deadline delivers
/// nothing: the value comes at the new one.
#[test]
fn reset_an_active_timer() {
    let (mut lp, start) = setup();
    let mut t = lp.scope(|| go::Timer::new(ms(10)));
    assert!(lp.scope(|| t.reset(ms(50))));
    assert_eq!(
        lp.stats().timers,
        1,
        "the old Node timeout is cleared at once"
    );
    lp.block(20);
    assert_eq!(t.try_recv(), None, "the old deadline gives nothing");
    let v = lp.block_on(async move { t.recv().await }).unwrap();
    assert_eq!((rel(start, v), lp.now()), (50, 50));
    assert_eq!(lp.stats().timers, 0, "the first Node timeout was cleared");
}

/// G3 with G5: reset of a timer that fired but was not received is true,
/// and the stale value is gone: the next value is the new deadline.
#[test]
fn reset_a_fired_unreceived_timer() {
    let (mut lp, start) = setup();
    let mut t = lp.scope(|| go::Timer::new(ms(10)));
    lp.run().unwrap();
    assert_eq!(lp.now(), 10);
    assert!(lp.scope(|| t.reset(ms(30))));
    assert_eq!(t.try_recv(), None, "no value of the old settings");
    let v = lp.block_on(async move { t.recv().await }).unwrap();
    assert_eq!(rel(start, v), 40);
}

/// G3: reset of an expired (received) or stopped timer is false, and
/// arms it again.
#[test]
fn reset_an_expired_or_stopped_timer() {
    let (mut lp, start) = setup();
    let vs = lp
        .block_on(async move {
            let mut t = go::Timer::new(ms(10));
            let a = t.recv().await;
            let expired = t.reset(ms(10));
            let b = t.recv().await;
            let expired_again = t.reset(ms(100)); // re-armed: active
            let stopped_now = t.stop();
            let stopped = t.reset(ms(5));
            let c = t.recv().await;
            (
                [rel(start, a), rel(start, b), rel(start, c)],
                [expired, expired_again, stopped_now, stopped],
            )
        })
        .unwrap();
    assert_eq!(vs, ([10, 20, 25], [false, false, true, false]));
}

/// Reset to zero makes the value due at once (and clears the old Node
/// timeout).
#[test]
fn reset_to_zero_is_due_now() {
    let (mut lp, start) = setup();
    let mut t = lp.scope(|| go::Timer::new(ms(100)));
    lp.block(7);
    assert!(lp.scope(|| t.reset(Duration::ZERO)));
    assert_eq!(lp.stats().timers, 0);
    assert_eq!(t.try_recv().map(|v| rel(start, v)), Some(7));
}

/// A reset to zero hands the value to a task already waiting in `recv`,
/// as Go's runtime hands it to a goroutine blocked on `t.C` (`Reset(0)`
/// from another goroutine: the receiver gets the value at once). There is
/// no Node timeout to wake it, so `reset` wakes it; it was never woken, and
/// `block_on` gave up with `Stalled` with the value due (found by checking
/// against Go 1.23.5 in round 36).
#[test]
fn a_reset_to_zero_wakes_a_waiting_receiver() {
    for stop_first in [false, true] {
        let (mut lp, start) = setup();
        let t = Rc::new(RefCell::new(lp.scope(|| go::Timer::new(ms(3_600_000)))));
        let got = Rc::new(Cell::new(None));
        let (t2, g) = (t.clone(), got.clone());
        lp.spawn(async move {
            let v = std::future::poll_fn(|cx| t2.borrow_mut().poll_recv(cx)).await;
            g.set(Some((rel(start, v), since(start))));
        });
        let t3 = t.clone();
        let reset = lp
            .block_on(async move {
                time::sleep(ms(50)).await;
                let mut t = t3.borrow_mut();
                if stop_first {
                    t.stop();
                }
                t.reset(Duration::ZERO)
            })
            .unwrap();
        assert_eq!(reset, !stop_first, "active unless stopped first");
        lp.run().unwrap();
        assert_eq!(got.get(), Some((50, 50)), "stop_first={stop_first}");
    }
}

/// Go's timers wait at least `d` (Go: "after at least duration d"). A
/// deadline counts from the loop's clock rounded **up** to the
/// millisecond, where a Node timeout counts from it rounded down: made
/// 0.7 ms into the loop's first millisecond, a 1 ms timer, ticker or
/// `AfterFunc` is due at 2 ms, not at 1 ms (0.3 ms later), while
/// `set_timeout(1)` fires at 1 ms, as Node's does. Values came up to 1 ms
/// early on the real clock (round 36's check against Go 1.23.5: about half
/// of 200 one-millisecond timers).
#[test]
fn a_go_timer_is_never_due_before_its_duration_has_passed() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let start = lp.scope(Instant::now);
    lp.virtual_clock()
        .unwrap()
        .advance(Duration::from_micros(700));
    let mut t = lp.scope(|| go::Timer::new(ms(1)));
    let mut tk = lp.scope(|| go::Ticker::new(ms(1)).unwrap());
    lp.scope(|| go::after_func(ms(1), at(&log, "func")));
    lp.scope(|| go::after_func(Duration::ZERO, at(&log, "func0")));
    lp.set_timeout(1, at(&log, "node"));
    // At 1.0 ms: 0.3 ms have passed, nothing of Go's is due.
    lp.virtual_clock()
        .unwrap()
        .advance(Duration::from_micros(300));
    lp.run_once().unwrap();
    assert_eq!(lp.now(), 1);
    assert_eq!(*log.borrow(), ["func0@1", "node@1"]);
    assert_eq!((t.try_recv(), tk.try_recv()), (None, None));
    // At 1.9 ms, 1.2 ms after: whole milliseconds of loop time, due at 2.
    lp.virtual_clock()
        .unwrap()
        .advance(Duration::from_micros(900));
    assert_eq!((t.try_recv(), tk.try_recv()), (None, None));
    lp.run_once().unwrap();
    assert_eq!(lp.now(), 2);
    assert_eq!(t.try_recv().map(|v| rel(start, v)), Some(2));
    assert_eq!(tk.try_recv().map(|v| rel(start, v)), Some(2));
    assert_eq!(*log.borrow(), ["func0@1", "node@1", "func@2"]);
    // The ticker's grid goes on from 2 ms; `reset` counts from the clock
    // rounded up as well (at 2.9 ms: due at 4 ms).
    lp.virtual_clock()
        .unwrap()
        .advance(Duration::from_micros(900));
    assert!(!lp.scope(|| t.reset(ms(1))), "received: expired");
    lp.virtual_clock()
        .unwrap()
        .advance(Duration::from_micros(100));
    assert_eq!(tk.try_recv().map(|v| rel(start, v)), Some(3));
    assert_eq!(t.try_recv(), None, "1.0 ms after the reset, at 3.0");
    lp.virtual_clock()
        .unwrap()
        .advance(Duration::from_millis(1));
    assert_eq!(t.try_recv().map(|v| rel(start, v)), Some(4));
}

/// On the real clock, no value of a Go timer, ticker or `AfterFunc` comes
/// before its duration has passed, measured with `std::time::Instant`,
/// to the nanosecond: the loop's time is that clock's (before round 40 it
/// was the TSC scaled by a calibration, and a margin of 0.1 ms allowed
/// for it; before round 36 the shortest 1 ms wait took 0.44 ms).
#[test]
fn on_the_real_clock_no_go_value_is_early() {
    let mut lp = EventLoop::new();
    for i in 0..60 {
        let d = ms(1 + i % 3);
        let waited = lp
            .block_on(async move {
                // Somewhere inside a millisecond: the loop woke at the
                // start of one (the last timer's), where a timer made at
                // once loses almost nothing to the rounding down.
                let offset = std::time::Instant::now();
                while offset.elapsed() < Duration::from_micros(i * 337 % 1000) {
                    std::hint::spin_loop();
                }
                let begun = std::time::Instant::now();
                match i % 3 {
                    0 => {
                        go::Timer::new(d).recv().await;
                        begun.elapsed()
                    }
                    1 => {
                        go::Ticker::new(d).unwrap().recv().await;
                        begun.elapsed()
                    }
                    _ => {
                        let at = Rc::new(Cell::new(None));
                        let a = at.clone();
                        go::after_func(d, move |_| a.set(Some(begun.elapsed())));
                        while at.get().is_none() {
                            time::sleep(ms(1)).await;
                        }
                        at.get().unwrap()
                    }
                }
            })
            .unwrap();
        assert!(
            waited >= d,
            "waited {waited:?} for {d:?} ({})",
            ["Timer", "Ticker", "AfterFunc"][i as usize % 3]
        );
    }
}

/// golang/go#80760 cannot happen on one thread: a stop that returns true,
/// made while the deadline is being processed in the same timers pass, is
/// followed by a reset that returns false.
#[test]
fn stop_true_is_never_followed_by_reset_true() {
    let (mut lp, start) = setup();
    let t = Rc::new(RefCell::new(lp.scope(|| go::Timer::new(ms(10)))));
    let seen = Rc::new(Cell::new((false, false)));
    let (t2, s) = (t.clone(), seen.clone());
    // Made after the timer: runs right after its Node timeout, same pass.
    lp.set_timeout(10, move |_| {
        let mut t = t2.borrow_mut();
        s.set((t.stop(), t.reset(ms(5))));
    });
    lp.run().unwrap();
    assert_eq!(seen.get(), (true, false));
    let mut t = Rc::try_unwrap(t).unwrap().into_inner();
    let v = lp.block_on(async move { t.recv().await }).unwrap();
    assert_eq!(rel(start, v), 15);
}

// ----- Timer: the loop ---------------------------------------------------------

/// A timer is a Node timeout made when it is created: FIFO with the
/// `set_timeout`s of its rounded-up duration; so are `after` and
/// `after_func`.
#[test]
fn timers_are_fifo_with_set_timeouts_of_their_duration() {
    let log = new_log();
    let (mut lp, _start) = setup();
    lp.set_timeout(10, at(&log, "t1"));
    let mut t = lp.scope(|| go::Timer::new(Duration::from_micros(9200)));
    let l = log.clone();
    lp.spawn(async move {
        t.recv().await;
        push(
            &l,
            format!("timer@{}", EventLoop::with_current(|lp| lp.now())),
        );
    });
    lp.set_timeout(10, at(&log, "t2"));
    let a = lp.scope(|| go::after(ms(10)));
    let l = log.clone();
    lp.spawn(async move {
        a.await;
        push(&l, "after");
    });
    lp.scope(|| go::after_func(ms(10), at(&log, "func")));
    lp.set_timeout(10, at(&log, "t3"));
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        ["t1@10", "timer@10", "t2@10", "after", "func@10", "t3@10"]
    );
}

/// A pending timer keeps the loop alive; stopped, received or dropped, it
/// does not. `set_ref(false)` opts out.
#[test]
fn liveness_and_refs() {
    let (mut lp, _start) = setup();
    let mut t = lp.scope(|| go::Timer::new(ms(50)));
    assert!(lp.is_alive());
    t.set_ref(false);
    assert!(!t.has_ref());
    lp.scope(|| ());
    assert!(!lp.is_alive());
    t.set_ref(true);
    lp.scope(|| ());
    assert!(lp.is_alive());
    assert!(t.stop());
    lp.scope(|| ());
    assert!(!lp.is_alive());

    // Unrefed before its Node timeout is made: made unrefed.
    let u = lp.scope(|| {
        let u = go::Timer::new(ms(50));
        u.set_ref(false);
        u
    });
    assert!(!lp.is_alive());
    assert_eq!(lp.stats().timers, 1);
    drop(u);
}

/// Dropping a Timer, an `After` or a Ticker clears its Node timeout before
/// anything else runs, even right after a reset queued a new one.
#[test]
fn dropping_clears_the_node_timeouts() {
    let (mut lp, _start) = setup();
    let t = lp.scope(|| go::Timer::new(ms(100)));
    let mut r = lp.scope(|| go::Timer::new(ms(100)));
    let a = lp.scope(|| go::after(ms(100)));
    let tk = lp.scope(|| go::Ticker::new(ms(10)).unwrap());
    assert_eq!(lp.stats().timers, 4);
    lp.scope(|| {
        drop(t);
        r.reset(ms(5));
        drop(r);
        drop(a);
        drop(tk);
    });
    assert_eq!(lp.stats().timers, 0);
    assert!(!lp.is_alive());
    lp.run().unwrap();
    assert_eq!(lp.now(), 0);
}

/// A dropped timer made and dropped before its arming was applied makes
/// no Node timeout at all.
#[test]
fn a_timer_dropped_before_the_loop_saw_it_makes_nothing() {
    let (mut lp, _start) = setup();
    lp.scope(|| {
        let t = go::Timer::new(ms(10));
        drop(t);
        let mut s = go::Timer::new(ms(10));
        s.stop();
    });
    assert_eq!(lp.stats().timers, 0);
}

// ----- Ticker (G6) --------------------------------------------------------------

/// G6: the first tick is one period after `new`, then one every period.
#[test]
fn ticker_ticks_every_period() {
    let (mut lp, start) = setup();
    let ticks = lp
        .block_on(async move {
            let mut tk = go::Ticker::new(ms(100)).unwrap();
            let mut got = Vec::new();
            for _ in 0..3 {
                let v = tk.recv().await;
                got.push((rel(start, v), since(start)));
            }
            got
        })
        .unwrap();
    assert_eq!(ticks, [(100, 100), (200, 200), (300, 300)]);
}

/// G6: a receiver busy until 350 (the loop blocked: no Node timeout ran)
/// gets the tick of 100, then 400: the ticks of 200 and 300 were dropped,
/// the phase kept.
#[test]
fn ticker_drops_ticks_for_a_busy_receiver_and_keeps_its_phase() {
    let (mut lp, start) = setup();
    let ticks = lp
        .block_on(async move {
            let mut tk = go::Ticker::new(ms(100)).unwrap();
            busy(350);
            let mut got = Vec::new();
            for _ in 0..3 {
                let v = tk.recv().await;
                got.push((rel(start, v), since(start)));
            }
            got
        })
        .unwrap();
    assert_eq!(ticks, [(100, 350), (400, 400), (500, 500)]);
}

/// The same with the loop running (the ticker's Node timeouts fire at 100,
/// 200, 300 while the receiver sleeps): the values are the same.
#[test]
fn ticker_drops_ticks_for_a_sleeping_receiver() {
    let (mut lp, start) = setup();
    let ticks = lp
        .block_on(async move {
            let mut tk = go::Ticker::new(ms(100)).unwrap();
            time::sleep(ms(350)).await;
            let mut got = Vec::new();
            for _ in 0..2 {
                let v = tk.recv().await;
                got.push((rel(start, v), since(start)));
            }
            got
        })
        .unwrap();
    assert_eq!(ticks, [(100, 350), (400, 400)]);
}

/// G6: the pending tick is the first one after the last receive; the next
/// is on the grid after the late receive: received at 150 and 410, the
/// values are 100, 200, then 500.
#[test]
fn ticker_late_receives_skip_to_the_grid() {
    let (mut lp, start) = setup();
    let mut tk = lp.scope(|| go::Ticker::new(ms(100)).unwrap());
    lp.block(150);
    assert_eq!(tk.try_recv().map(|v| rel(start, v)), Some(100));
    assert_eq!(tk.try_recv(), None, "at most one tick pending");
    lp.block(260); // 410
    assert_eq!(tk.try_recv().map(|v| rel(start, v)), Some(200));
    assert_eq!(tk.try_recv(), None);
    lp.block(89); // 499
    assert_eq!(tk.try_recv(), None);
    lp.block(1);
    assert_eq!(tk.try_recv().map(|v| rel(start, v)), Some(500));
}

/// A ticker whose Node timeout fires late (the loop was blocked by another
/// callback) delivers the scheduled value, and the next tick is on the
/// grid.
#[test]
fn ticker_fired_late_by_the_loop_keeps_the_grid() {
    let (mut lp, start) = setup();
    lp.set_timeout(1, |lp| lp.block(250)); // the loop is busy from 1 to 251
    let log = new_log();
    let l = log.clone();
    let mut tk = lp.scope(|| go::Ticker::new(ms(100)).unwrap());
    lp.block_on(async move {
        for _ in 0..2 {
            let v = tk.recv().await;
            push(&l, format!("{}@{}", rel(start, v), since(start)));
        }
    })
    .unwrap();
    assert_eq!(*log.borrow(), ["100@251", "300@300"]);
}

/// G6 (Go 1.23): reset discards a pending tick; the next tick comes one
/// new period after the call, and the period is the new one.
#[test]
fn ticker_reset_restarts_from_now_and_discards_the_pending_tick() {
    let (mut lp, start) = setup();
    let mut tk = lp.scope(|| go::Ticker::new(ms(100)).unwrap());
    lp.run_once().unwrap(); // the Node timeout of 100 fires: a tick is pending
    assert_eq!(lp.now(), 100);
    lp.block(150); // 250
    tk.reset(ms(30)).unwrap();
    assert_eq!(tk.period(), ms(30));
    assert_eq!(tk.try_recv(), None, "the pending tick was discarded");
    let ticks = lp
        .block_on(async move {
            let a = tk.recv().await;
            let b = tk.recv().await;
            [rel(start, a), rel(start, b)]
        })
        .unwrap();
    assert_eq!(ticks, [280, 310]);
}

/// G6: stop discards a pending tick and never "closes": a receive pends
/// forever (block_on stalls, as nothing holds the loop); reset after stop
/// starts it again.
#[test]
fn ticker_stop_then_reset() {
    let (mut lp, start) = setup();
    let mut tk = lp.scope(|| go::Ticker::new(ms(10)).unwrap());
    lp.block(15); // a tick is pending
    tk.stop();
    assert_eq!(tk.try_recv(), None);
    lp.scope(|| ());
    assert!(!lp.is_alive(), "a stopped ticker does not hold the loop");
    lp.scope(|| tk.reset(ms(20)).unwrap());
    let v = lp.block_on(async move { tk.recv().await }).unwrap();
    assert_eq!(rel(start, v), 35, "restarted at 15");

    let r = lp.block_on(async {
        let mut tk = go::Ticker::new(ms(10)).unwrap();
        tk.stop();
        tk.recv().await // never "closed": blocks forever
    });
    assert!(matches!(r, Err(Error::Stalled)), "{r:?}");
}

/// The virtual clock's last whole millisecond: it saturates at `u64::MAX`
/// ns, the end of loop time (`u64::MAX` ms).
const END: u64 = u64::MAX / 1_000_000;

/// At the end of loop time (a saturated virtual clock, about 584 years)
/// a ticker's grid ends: its last tick is the one at the end, and it then
/// stops, as `stop` would, instead of giving that instant without end
/// (a `recv` loop never waited) or re-arming at it in one timers pass
/// without end (`run_once` never returned; round 36's Go check).
#[test]
fn a_ticker_stops_at_the_end_of_loop_time() {
    let got = within(10, || {
        // A period past the end: one tick, at the end, then none.
        let (mut lp, start) = setup();
        let mut tk = lp.scope(|| go::Ticker::new(Duration::MAX).unwrap());
        lp.run_once().unwrap();
        let first = (lp.now(), tk.try_recv().map(|v| rel(start, v)));
        let then = tk.try_recv();
        let idle = lp.run().is_ok() && lp.stats().timers == 0;
        // A short period near the end: the grid up to the end, then none.
        // The clock's last whole millisecond is `END` (u64::MAX ns); the
        // tick after 3 ms past `END - 4` is beyond it, at the end itself.
        let (mut lp, start) = setup();
        lp.block(END - 10);
        let mut tk = lp.scope(|| go::Ticker::new(ms(3)).unwrap());
        let mut ticks = Vec::new();
        for _ in 0..6 {
            lp.block(3);
            ticks.push(tk.try_recv().map(|v| rel(start, v) as i64 - END as i64));
        }
        // A task receiving in a loop gets the same ticks, then waits for
        // good: the loop has nothing left, and `run` returns.
        let (mut lp2, start) = setup();
        lp2.block(END - 10);
        let seen = Rc::new(RefCell::new(Vec::new()));
        let s = seen.clone();
        lp2.spawn(async move {
            let mut tk = go::Ticker::new(ms(3)).unwrap();
            loop {
                let v = tk.recv().await;
                s.borrow_mut().push(rel(start, v) as i64 - END as i64);
            }
        });
        let ran = lp2.run().is_ok();
        let seen = seen.borrow().clone();
        (first, then, idle, ticks, ran, seen)
    });
    assert_eq!(got.0, (u64::MAX, Some(u64::MAX)));
    assert_eq!(got.1, None);
    assert!(got.2, "stopped: nothing keeps the loop alive");
    assert_eq!(got.3, [Some(-7), Some(-4), Some(-1), Some(2), None, None]);
    assert!(got.4);
    assert_eq!(got.5, [-7, -4, -1, 2]);
}

/// G6: a zero period is an error (Go panics), for `new` and for `reset`;
/// a failed reset leaves the ticker as it was.
#[test]
fn ticker_zero_period_is_an_error() {
    let (mut lp, start) = setup();
    let e = lp.scope(|| go::Ticker::new(Duration::ZERO)).unwrap_err();
    assert_eq!(e, InvalidPeriod::zero());
    assert_eq!(lp.stats().timers, 0);
    let mut tk = lp.scope(|| go::Ticker::new(ms(10)).unwrap());
    lp.block(5);
    assert_eq!(tk.reset(Duration::ZERO), Err(InvalidPeriod::zero()));
    assert_eq!(tk.period(), ms(10));
    let v = lp.block_on(async move { tk.recv().await }).unwrap();
    assert_eq!(rel(start, v), 10, "still on the old schedule");
    // Sub-millisecond periods round up, so they are valid.
    let tk = lp.scope(|| go::Ticker::new(Duration::from_nanos(1)).unwrap());
    assert_eq!(tk.period(), ms(1));
}

/// A running ticker keeps the loop alive, like `setInterval`: `run`
/// returns only once a callback stops it. Unrefed, it does not.
#[test]
fn a_running_ticker_keeps_the_loop_alive() {
    let (mut lp, _start) = setup();
    let tk = Rc::new(RefCell::new(lp.scope(|| go::Ticker::new(ms(10)).unwrap())));
    let t2 = tk.clone();
    lp.set_timeout(95, move |_| t2.borrow_mut().stop());
    // If the stop failed, this unrefed guard ends the run instead of a hang.
    let guard = lp.set_timeout(1000, |lp| lp.stop());
    lp.unref_timeout(guard).unwrap();
    lp.run().unwrap();
    assert_eq!(lp.now(), 95, "it ticked until stopped");
    lp.clear_timeout(guard).unwrap();
    assert_eq!(lp.stats().timers, 0);
    assert_eq!(tk.borrow_mut().try_recv(), None);
    tk.borrow_mut().reset(ms(10)).unwrap();
    tk.borrow().set_ref(false);
    lp.run().unwrap();
    assert_eq!(lp.now(), 95, "unrefed: the loop exits at once");
}

/// A receive dropped before it completes takes nothing (cancel-safe).
#[test]
fn recv_is_cancel_safe() {
    let (mut lp, start) = setup();
    let mut tk = lp.scope(|| go::Ticker::new(ms(10)).unwrap());
    let mut t = lp.scope(|| go::Timer::new(ms(10)));
    {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let mut r = std::pin::pin!(tk.recv());
        assert!(r.as_mut().poll(&mut cx).is_pending());
        let mut r = std::pin::pin!(t.recv());
        assert!(r.as_mut().poll(&mut cx).is_pending());
    }
    lp.block(10);
    assert_eq!(tk.try_recv().map(|v| rel(start, v)), Some(10));
    assert_eq!(t.try_recv().map(|v| rel(start, v)), Some(10));
}

// ----- AfterFunc (G4) -----------------------------------------------------------

fn counter() -> (Rc<Cell<u32>>, impl FnMut(&mut EventLoop) + 'static) {
    let n = Rc::new(Cell::new(0));
    let m = n.clone();
    (n, move |_| m.set(m.get() + 1))
}

/// G4: `f` runs once, as a loop callback, at its time; stop before is
/// true, stop after is false.
#[test]
fn after_func_runs_once_and_stop_reports_whether_it_stopped_it() {
    let (mut lp, _start) = setup();
    let log = new_log();
    let f = lp.scope(|| go::after_func(ms(10), at(&log, "f")));
    assert!(lp.is_alive());
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["f@10"]);
    assert!(!f.stop(), "f already ran");

    let (n, g) = counter();
    let g = lp.scope(|| go::after_func(ms(10), g));
    assert!(g.stop());
    assert!(!g.stop(), "already stopped");
    lp.run().unwrap();
    assert_eq!((n.get(), lp.now()), (0, 10), "nothing waited for it");
}

/// G4: a stop made by another callback of the same timers pass keeps `f`
/// from running, even though `f` is due in that pass.
#[test]
fn after_func_stopped_in_the_same_timers_pass_does_not_run() {
    let (mut lp, _start) = setup();
    let (n, f) = counter();
    let stopped = Rc::new(Cell::new(None));
    // Busy from 1 to 21: at 21 the 9 ms list and the 10 ms list are both
    // due, in one pass, the 9 ms list first.
    lp.set_timeout(1, |lp| lp.block(20));
    let handle: Rc<OnceCell<go::AfterFunc>> = Rc::default();
    let (h, s) = (handle.clone(), stopped.clone());
    lp.set_timeout(9, move |_| s.set(Some(h.get().unwrap().stop())));
    handle.set(lp.scope(|| go::after_func(ms(10), f))).unwrap();
    // The same list, made first: the stop runs right before f is due.
    let (n2, f2) = counter();
    let other: Rc<OnceCell<go::AfterFunc>> = Rc::default();
    let s2 = Rc::new(Cell::new(None));
    let (o, s) = (other.clone(), s2.clone());
    lp.set_timeout(30, move |_| s.set(Some(o.get().unwrap().stop())));
    other.set(lp.scope(|| go::after_func(ms(30), f2))).unwrap();
    lp.run().unwrap();
    assert_eq!(stopped.get(), Some(true));
    assert_eq!(s2.get(), Some(true));
    assert_eq!((n.get(), n2.get()), (0, 0));
}

/// G4: `stop` called by `f` itself is false: `f` was already dispatched.
#[test]
fn after_func_stop_from_inside_f_is_false() {
    let (mut lp, _start) = setup();
    let seen = Rc::new(Cell::new(None));
    let me: Rc<OnceCell<go::WeakAfterFunc>> = Rc::default();
    let (s, m) = (seen.clone(), me.clone());
    let f = lp.scope(|| {
        go::after_func(ms(5), move |_| {
            let h = m.get().unwrap().upgrade().unwrap();
            s.set(Some(h.stop()));
        })
    });
    me.set(f.downgrade()).unwrap();
    lp.run().unwrap();
    assert_eq!(seen.get(), Some(false));
}

/// G4: reset of a pending call is true and moves it (it runs once, at the
/// new time); after it ran, or after a stop, reset is false and schedules
/// it again.
#[test]
fn after_func_reset() {
    let (mut lp, _start) = setup();
    let log = new_log();
    let f = lp.scope(|| go::after_func(ms(10), at(&log, "f")));
    lp.block(4);
    assert!(lp.scope(|| f.reset(ms(20))), "moved");
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["f@24"]);
    assert!(!lp.scope(|| f.reset(ms(6))), "ran: scheduled again");
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["f@24", "f@30"]);
    let g = lp.scope(|| go::after_func(ms(10), at(&log, "g")));
    assert!(g.stop());
    assert!(!lp.scope(|| g.reset(ms(1))), "stopped: scheduled again");
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["f@24", "f@30", "g@31"]);
}

/// `after_func` of zero is a 1 ms timeout, as Node coerces 0.
#[test]
fn after_func_of_zero_is_one_millisecond() {
    let (mut lp, _start) = setup();
    let log = new_log();
    lp.scope(|| go::after_func(Duration::ZERO, at(&log, "f")));
    lp.set_timeout(1, at(&log, "t"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["f@1", "t@1"]);
}

/// Dropping every handle does not cancel the call (Go's runtime keeps an
/// AfterFunc timer); `f` may reschedule itself through a weak handle, and
/// the state is freed once it is done.
#[test]
fn after_func_outlives_its_handles_and_reschedules_itself() {
    let (mut lp, _start) = setup();
    let log = new_log();
    let me: Rc<OnceCell<go::WeakAfterFunc>> = Rc::default();
    let (l, m) = (log.clone(), me.clone());
    let f = lp.scope(|| {
        go::after_func(ms(10), move |lp| {
            push(&l, format!("f@{}", lp.now()));
            if l.borrow().len() < 3 {
                assert!(!m.get().unwrap().upgrade().unwrap().reset(ms(10)));
            }
        })
    });
    me.set(f.downgrade()).unwrap();
    drop(f);
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["f@10", "f@20", "f@30"]);
    assert!(me.get().unwrap().upgrade().is_none(), "freed");
    assert_eq!(lp.stats().timers, 0);
}

// ----- everywhere ------------------------------------------------------------------

/// The constructors panic outside a loop, with the message `time::sleep`
/// gives.
#[test]
fn outside_a_loop_the_constructors_panic() {
    fn message(r: std::thread::Result<()>) -> String {
        let p = r.unwrap_err();
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap()
    }
    let calls: [fn(); 4] = [
        || drop(go::Timer::new(ms(1))),
        || drop(go::after(ms(1))),
        || drop(go::Ticker::new(ms(1))),
        || drop(go::after_func(ms(1), |_| {})),
    ];
    for call in calls {
        let msg = message(std::panic::catch_unwind(call));
        assert!(msg.contains("no current timerloop EventLoop"), "{msg}");
    }
}

/// `Debug` shows the state.
#[test]
fn debug_output() {
    let (mut lp, _start) = setup();
    let mut t = lp.scope(|| go::Timer::new(ms(1)));
    assert!(format!("{t:?}").contains("active: true"));
    t.stop();
    assert!(format!("{t:?}").contains("active: false"));
    let tk = lp.scope(|| go::Ticker::new(ms(3)).unwrap());
    assert!(format!("{tk:?}").contains("period: 3ms"), "{tk:?}");
    let f = lp.scope(|| go::after_func(ms(1), |_| {}));
    assert!(format!("{f:?}").contains("pending: true"), "{f:?}");
}

/// A Go timer longer than Node's 2^31-1 ms limit is a long timer, as a
/// `sleep` is: 40 days take exactly 40 days, one timeout of that length.
#[test]
fn long_timers_take_their_whole_length() {
    let mut lp = EventLoop::with_virtual_clock();
    let days = 40 * 86_400_000;
    let got = lp
        .block_on(async move {
            let start = time::Instant::now();
            let mut t = go::Timer::new(Duration::from_millis(days));
            let at = t.recv().await;
            (at - start, time::Instant::now() - start)
        })
        .unwrap();
    assert_eq!(
        got,
        (Duration::from_millis(days), Duration::from_millis(days))
    );
}
