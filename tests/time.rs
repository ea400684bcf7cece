//! Timer futures polled by tokio-test's mock tasks: `Sleep`, `timeout`,
//! `Interval` (each timeline of tokio's `tests/time_interval.rs`, written
//! again for this crate and its default `Delay`), dropping cancels, and the
//! Node order of sleeps among timeouts. Virtual clock: the test moves time
//! with `VirtualClock::advance` and runs the loop's due timers with
//! `run_nowait`.

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use timerloop::time::{self, Instant, Interval, MissedTickBehavior};
use timerloop::{EventLoop, Stats, VirtualClock};
use tokio_test::task::{Spawn, spawn};
use tokio_test::{assert_pending, assert_ready, assert_ready_err, assert_ready_ok};

mod common;
use common::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A loop on a virtual clock the test keeps a handle to.
fn setup() -> (EventLoop, VirtualClock) {
    let clock = VirtualClock::new();
    (EventLoop::with_clock(clock.clone()), clock)
}

/// Moves time by `n` ms and runs what became due, as tokio's
/// `time::advance` does.
fn advance(lp: &mut EventLoop, clock: &VirtualClock, n: u64) {
    clock.advance(ms(n));
    lp.run_nowait().unwrap();
}

#[test]
fn sleep_is_pending_then_woken_then_ready() {
    let (mut lp, clock) = setup();
    let mut s = lp.scope(|| spawn(time::sleep(ms(10))));
    lp.scope(|| assert_pending!(s.poll()));
    advance(&mut lp, &clock, 9);
    assert!(!s.is_woken());
    lp.scope(|| assert_pending!(s.poll()));
    advance(&mut lp, &clock, 1);
    assert!(s.is_woken());
    lp.scope(|| assert_ready!(s.poll()));
    assert!(s.is_elapsed());
}

/// `sleep(0)` is a 1 ms timer, as Node coerces 0; a fraction of a
/// millisecond rounds up; a deadline already reached is ready at once.
#[test]
fn zero_and_fractions() {
    let (mut lp, clock) = setup();
    let mut zero = lp.scope(|| spawn(time::sleep(Duration::ZERO)));
    let mut frac = lp.scope(|| spawn(time::sleep(Duration::from_micros(1500))));
    let mut past = lp.scope(|| spawn(time::sleep_until(Instant::now())));
    lp.scope(|| {
        assert_pending!(zero.poll());
        assert_pending!(frac.poll());
        assert_ready!(past.poll());
    });
    advance(&mut lp, &clock, 1);
    lp.scope(|| {
        assert_ready!(zero.poll());
        assert_pending!(frac.poll());
    });
    advance(&mut lp, &clock, 1);
    lp.scope(|| assert_ready!(frac.poll()));
}

/// Dropping a pending `Sleep` clears its timer and its ref at once, and
/// drops the stored waker: the mock task's waker count falls back to one.
/// A fired sleep dropped lets go of its waker too (A9): its state goes
/// back to the loop's pool for the next sleep, but a foreign waker does
/// not go with it (before, the pool kept tokio-test's waker here).
#[test]
fn dropping_a_fired_sleep_lets_go_of_the_waker() {
    let (mut lp, clock) = setup();
    let mut s = lp.scope(|| spawn(time::sleep(ms(10))));
    lp.scope(|| assert_pending!(s.poll()));
    advance(&mut lp, &clock, 10);
    assert!(s.is_woken());
    lp.scope(|| assert_ready!(s.poll()));
    // The next sleep is made before the fired one goes: it cannot take
    // the fired one's state from the pool.
    lp.scope(|| drop(std::mem::replace(&mut *s, time::sleep(ms(1)))));
    assert_eq!(s.waker_ref_count(), 1, "dropped with the sleep");
}

#[test]
fn dropping_a_sleep_cancels_it() {
    let (mut lp, _clock) = setup();
    let mut s = lp.scope(|| spawn(time::sleep(ms(100))));
    lp.scope(|| assert_pending!(s.poll()));
    assert_eq!(s.waker_ref_count(), 2, "the sleep holds a clone");
    assert!(lp.is_alive());
    assert_eq!(lp.stats().timers, 1);
    let count = {
        let mut s = s;
        lp.scope(|| drop(std::mem::replace(&mut *s, time::sleep(ms(1)))));
        s
    };
    assert_eq!(count.waker_ref_count(), 1, "dropped with the sleep");
    drop(count);
    lp.scope(|| ());
    assert_eq!(lp.stats(), Stats::default());
    assert!(!lp.is_alive());
}

/// `reset` moves the deadline; the old timer never wakes the task.
#[test]
fn reset_moves_the_deadline() {
    let (mut lp, clock) = setup();
    let mut s = lp.scope(|| spawn(time::sleep(ms(10))));
    lp.scope(|| assert_pending!(s.poll()));
    lp.scope(|| {
        let at = Instant::now() + ms(30);
        s.enter(|_, sleep| sleep.reset(at));
    });
    advance(&mut lp, &clock, 10);
    assert!(!s.is_woken());
    lp.scope(|| assert_pending!(s.poll()));
    advance(&mut lp, &clock, 20);
    assert!(s.is_woken());
    lp.scope(|| assert_ready!(s.poll()));
    assert_eq!(lp.stats(), Stats::default());
}

/// A reset to a deadline already reached wakes the task waiting on the
/// sleep, as tokio's does: made by the task that polled it (a mock task
/// here), by another task, or by a callback. There is no timeout to fire
/// for it; before round 36 nothing woke the task, and `run` returned with
/// it still pending (found by checking against tokio 1.54's paused clock).
#[test]
fn a_reset_to_a_reached_deadline_wakes_the_waiting_task() {
    // A mock task: woken by the reset itself, ready at its next poll.
    for back in [0, 1] {
        let (mut lp, clock) = setup();
        let mut s = lp.scope(|| spawn(time::sleep(ms(100))));
        lp.scope(|| assert_pending!(s.poll()));
        advance(&mut lp, &clock, 10);
        lp.scope(|| {
            let at = Instant::now() - ms(back);
            s.enter(|_, sleep| sleep.reset(at));
        });
        assert!(s.is_woken(), "reset to now - {back} ms");
        lp.scope(|| assert_ready!(s.poll()));
    }
    // Another task, and a callback: the waiting task runs, at 10 ms.
    for from_callback in [false, true] {
        let mut lp = EventLoop::with_virtual_clock();
        let shared = std::rc::Rc::new(std::cell::RefCell::new(Box::pin(
            lp.scope(|| time::sleep(ms(100))),
        )));
        let woke = std::rc::Rc::new(std::cell::Cell::new(None));
        let (s, w) = (shared.clone(), woke.clone());
        lp.spawn(async move {
            std::future::poll_fn(|cx| s.borrow_mut().as_mut().poll(cx)).await;
            w.set(Some(EventLoop::with_current(|lp| lp.now())));
        });
        let s = shared.clone();
        let reset = move || {
            let now = Instant::now();
            s.borrow_mut().as_mut().reset(now);
        };
        if from_callback {
            lp.set_timeout(10, move |_| reset());
        } else {
            lp.spawn(async move {
                time::sleep(ms(10)).await;
                reset();
            });
        }
        lp.run().unwrap();
        assert_eq!(woke.get(), Some(10), "from_callback={from_callback}");
    }
}

/// The same for an `Interval` whose `tick` a task waits on: a reset to now
/// from another task gives it a tick at once.
#[test]
fn an_interval_reset_to_now_wakes_the_waiting_task() {
    for how in ["reset_immediately", "reset_at"] {
        let mut lp = EventLoop::with_virtual_clock();
        let i = std::rc::Rc::new(std::cell::RefCell::new(
            lp.scope(|| time::interval(ms(100))),
        ));
        let ticks = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let (i2, t) = (i.clone(), ticks.clone());
        lp.spawn(async move {
            let start = Instant::now();
            for _ in 0..2 {
                let at = std::future::poll_fn(|cx| i2.borrow_mut().poll_tick(cx)).await;
                t.borrow_mut().push((at - start).as_millis());
            }
        });
        let i3 = i.clone();
        lp.spawn(async move {
            time::sleep(ms(10)).await;
            let mut i = i3.borrow_mut();
            if how == "reset_at" {
                i.reset_at(Instant::now() - ms(5));
            } else {
                i.reset_immediately();
            }
        });
        lp.run_once().unwrap(); // the first tick, at 0
        let ran = within_loop(&mut lp, 50);
        assert!(ran);
        assert_eq!(ticks.borrow()[0], 0, "{how}");
        assert_eq!(ticks.borrow().len(), 2, "{how}: {:?}", ticks.borrow());
        let want = if how == "reset_at" { 5 } else { 10 };
        assert_eq!(ticks.borrow()[1], want, "{how}");
    }
}

/// Runs `lp` until `ms` of virtual time have passed (an interval keeps it
/// alive for good): whether it got there.
fn within_loop(lp: &mut EventLoop, ms: u64) -> bool {
    while lp.now() < ms {
        if !lp.run_once().unwrap() {
            return false;
        }
    }
    true
}

/// `timeout` polls the inner future first: ready at once wins, even at
/// zero; a slow one loses at the deadline.
#[test]
fn timeout_polls_the_inner_future_first() {
    let (mut lp, clock) = setup();
    let mut fast = lp.scope(|| spawn(time::timeout(Duration::ZERO, async { 3 })));
    lp.scope(|| assert_eq!(assert_ready_ok!(fast.poll()), 3));
    let mut slow = lp.scope(|| spawn(time::timeout(ms(5), time::sleep(ms(10)))));
    lp.scope(|| assert_pending!(slow.poll()));
    advance(&mut lp, &clock, 5);
    assert!(slow.is_woken());
    lp.scope(|| assert_ready_err!(slow.poll()));
    drop(slow);
    lp.scope(|| ());
    assert_eq!(lp.stats().timers, 0, "the inner sleep was dropped too");
}

/// A request that becomes a future only when awaited: `IntoFuture` and
/// not `Future`, as a builder of a client's request is.
struct Request {
    wait: Duration,
    answer: u32,
}

impl std::future::IntoFuture for Request {
    type Output = u32;
    type IntoFuture = std::pin::Pin<Box<dyn Future<Output = u32>>>;

    /// Makes its sleep here, as a builder that starts its work when
    /// turned into a future does.
    fn into_future(self) -> Self::IntoFuture {
        let sleep = time::sleep(self.wait);
        Box::pin(async move {
            sleep.await;
            self.answer
        })
    }
}

/// `timeout` and `timeout_at` take anything `IntoFuture`, as tokio's,
/// and turn it into its future before making the deadline's timer: a
/// timer the conversion makes is the older, and wins a tie (`timeout(d,
/// x)` is `timeout(d, x.into_future())`). Run by the loop, whose task is
/// polled after each timer: the older timer's wake decides.
#[test]
fn timeout_takes_into_future_and_converts_it_first() {
    let (mut lp, _clock) = setup();
    let tie = Request {
        wait: ms(5),
        answer: 1,
    };
    let got = lp.block_on(async { time::timeout(ms(5), tie).await });
    assert_eq!(got.unwrap(), Ok(1), "the request's timer is the older");
    assert_eq!(lp.now(), 5);

    let late = Request {
        wait: ms(9),
        answer: 2,
    };
    let got = lp.block_on(async {
        let at = Instant::now() + ms(4);
        time::timeout_at(at, late).await
    });
    assert!(got.unwrap().is_err());
    assert_eq!(lp.now(), 9);

    // Polled by hand, too.
    let (mut lp, clock) = setup();
    let quick = Request {
        wait: ms(2),
        answer: 3,
    };
    let mut t = lp.scope(|| spawn(time::timeout(ms(5), quick)));
    lp.scope(|| assert_pending!(t.poll()));
    advance(&mut lp, &clock, 2);
    lp.scope(|| assert_eq!(assert_ready_ok!(t.poll()), 3));
}

/// A sleep is a Node timeout created when `sleep` is called: FIFO with
/// `set_timeout` callbacks of its (rounded-up) duration.
#[test]
fn sleeps_are_fifo_with_timeouts_of_their_duration() {
    let log = new_log();
    let (mut lp, _clock) = setup();
    lp.set_timeout(5, say_at(&log, "t1"));
    let l = log.clone();
    let sleep = lp.scope(|| time::sleep(Duration::from_micros(4200)));
    lp.spawn(async move {
        sleep.await;
        push(
            &l,
            format!("sleep@{}", EventLoop::with_current(|lp| lp.now())),
        );
    });
    lp.set_timeout(5, say_at(&log, "t2"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["t1@5", "sleep@5", "t2@5"]);
}

/// A sleep made inside a callback (which holds the loop) lands where a
/// `set_timeout` made at that moment would.
#[test]
fn a_sleep_made_in_a_callback_keeps_its_place() {
    let log = new_log();
    let (mut lp, _clock) = setup();
    let l = log.clone();
    lp.set_timeout(1, move |lp| {
        lp.set_timeout(10, say_at(&l, "before"));
        let s = time::sleep(ms(10));
        let l2 = l.clone();
        lp.spawn(async move {
            s.await;
            push(&l2, "sleep");
        });
        lp.block(3); // the sleep's start was read before the block
        lp.set_timeout(10, say_at(&l, "after"));
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["before@11", "sleep", "after@14"]);
}

/// Unrefed, a sleep does not keep the loop alive.
#[test]
fn an_unrefed_sleep_does_not_hold_the_loop() {
    let (mut lp, _clock) = setup();
    let s = lp.scope(|| time::sleep(ms(50)));
    assert!(lp.is_alive());
    s.set_ref(false);
    lp.scope(|| ());
    assert!(!lp.is_alive());
    s.set_ref(true);
    lp.scope(|| ());
    assert!(lp.is_alive());
}

/// A sleep longer than Node's 2^31-1 ms limit never fires early (nor at
/// 1 ms): 40 days take 40 days (a year: tests/long_timers.rs).
#[test]
fn long_sleeps_take_their_whole_length() {
    let (mut lp, _clock) = setup();
    let days = 40 * 86_400_000;
    lp.block_on(async move { time::sleep(ms(days)).await })
        .unwrap();
    assert_eq!(lp.now(), days);
}

/// A finished sleep's state is reused by the next sleep (the loop keeps a
/// pool): the new sleep starts refed, pending, with its own deadline,
/// whatever the old one was set to. Here the unrefed `a` is dropped last,
/// so `b` takes its state.
#[test]
fn a_reused_sleep_state_starts_fresh() {
    let mut lp = EventLoop::with_virtual_clock();
    let out = lp.block_on(async {
        let a = time::sleep(ms(5));
        a.set_ref(false);
        time::sleep(ms(10)).await; // `a` fires meanwhile, unrefed
        assert!(a.is_elapsed());
        drop(a);
        let b = time::sleep(ms(5));
        let fresh = (b.has_ref(), b.is_elapsed(), b.deadline() - Instant::now());
        b.await; // an unrefed `b` would stall the loop: Err(Stalled)
        fresh
    });
    assert_eq!(out.unwrap(), (true, false, ms(5)));
    assert_eq!(lp.now(), 15);
}

/// Counts its wakes.
#[derive(Default)]
struct CountWakes(std::sync::atomic::AtomicUsize);

impl std::task::Wake for CountWakes {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A finished sleep's state goes back to the loop's pool, with the waker
/// its last poll stored only if that is a loop task's own (the next sleep
/// of that task, polled with it, clones none). A foreign waker goes with
/// its sleep, and a kept one is never woken for a sleep that did not
/// store it.
#[test]
fn a_pooled_sleep_state_keeps_only_a_tasks_waker_and_never_wakes_it_stale() {
    use std::sync::Arc;
    use std::sync::atomic::Ordering::SeqCst;
    use std::task::{Context, Waker};
    let (mut lp, clock) = setup();
    let (a, b) = (
        Arc::new(CountWakes::default()),
        Arc::new(CountWakes::default()),
    );
    let (wa, wb) = (Waker::from(a.clone()), Waker::from(b.clone()));
    let poll = |lp: &mut EventLoop, s: &mut time::Sleep, w: &Waker| {
        lp.scope(|| std::pin::Pin::new(s).poll(&mut Context::from_waker(w)))
    };
    let wakes = |c: &Arc<CountWakes>| c.0.load(SeqCst);

    // A foreign waker: kept while the sleep lives, dropped with it.
    let mut s = lp.scope(|| time::sleep(ms(5)));
    assert!(poll(&mut lp, &mut s, &wa).is_pending());
    assert_eq!(Arc::strong_count(&a), 3, "ours, `wa`, the sleep's clone");
    advance(&mut lp, &clock, 5);
    assert_eq!((wakes(&a), Arc::strong_count(&a)), (1, 3), "woken, kept");
    assert!(poll(&mut lp, &mut s, &wa).is_ready());
    drop(s);
    assert_eq!(Arc::strong_count(&a), 2, "not pooled with its state");

    // A task's own waker stays with the state; the next sleep takes that
    // state and fires before any poll: the task is not woken by it.
    let polls = Rc::new(Cell::new(0));
    let release = Rc::new(Cell::new(false));
    let (p, r) = (polls.clone(), release.clone());
    lp.spawn(async move {
        time::sleep(ms(5)).await;
        std::future::poll_fn(|_| {
            p.set(p.get() + 1);
            if r.get() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    });
    lp.run_nowait().unwrap(); // its first poll: the sleep
    advance(&mut lp, &clock, 5);
    assert_eq!(polls.get(), 1, "after its sleep, it waits for `release`");
    let s = lp.scope(|| time::sleep(ms(5)));
    advance(&mut lp, &clock, 5);
    assert!(s.is_elapsed());
    assert_eq!(polls.get(), 1, "a stale waker is never woken");
    drop(s);

    // Polled with another waker: that one is stored and is the one woken.
    let mut s = lp.scope(|| time::sleep(ms(5)));
    assert!(poll(&mut lp, &mut s, &wb).is_pending());
    assert_eq!(Arc::strong_count(&b), 3);
    advance(&mut lp, &clock, 5);
    assert_eq!((wakes(&a), wakes(&b), polls.get()), (1, 1, 1));
    drop(s);
    assert_eq!(Arc::strong_count(&b), 2, "not pooled");
    release.set(true);
    drop(lp);
}

// ----- Interval: tokio's tests/time_interval.rs timelines ---------------

fn poll_ticks(lp: &mut EventLoop, i: &mut Spawn<Interval>, start: Instant) -> Vec<u64> {
    lp.scope(|| {
        let mut got = Vec::new();
        loop {
            match i.enter(|cx, mut iv| iv.poll_tick(cx)) {
                Poll::Ready(t) => got.push((t - start).as_millis() as u64),
                Poll::Pending => return got,
            }
        }
    })
}

fn interval_with(
    behavior: MissedTickBehavior,
) -> (EventLoop, VirtualClock, Spawn<Interval>, Instant) {
    let (mut lp, clock) = setup();
    let start = lp.scope(Instant::now);
    let mut iv = lp.scope(|| time::interval_at(start, ms(300)));
    iv.set_missed_tick_behavior(behavior);
    (lp, clock, spawn(iv), start)
}

/// tokio's `burst`: the missed 600 and 900 come back to back at 950, then
/// the original grid.
#[test]
fn interval_burst() {
    let (mut lp, c, mut i, start) = interval_with(MissedTickBehavior::Burst);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [0]);
    advance(&mut lp, &c, 100);
    assert!(poll_ticks(&mut lp, &mut i, start).is_empty());
    advance(&mut lp, &c, 200);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [300]);
    advance(&mut lp, &c, 650);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [600, 900]);
    advance(&mut lp, &c, 200);
    assert!(poll_ticks(&mut lp, &mut i, start).is_empty());
    advance(&mut lp, &c, 100);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [1200]);
    advance(&mut lp, &c, 250);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [1500]);
    advance(&mut lp, &c, 300);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [1800]);
}

/// tokio's `delay`: the late 600 at 950, then one period after it: 1250,
/// 1550, ... (the default here; Node's setInterval).
#[test]
fn interval_delay() {
    let (mut lp, c, mut i, start) = interval_with(MissedTickBehavior::Delay);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [0]);
    advance(&mut lp, &c, 100);
    assert!(poll_ticks(&mut lp, &mut i, start).is_empty());
    advance(&mut lp, &c, 200);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [300]);
    advance(&mut lp, &c, 650);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [600]);
    advance(&mut lp, &c, 250);
    assert!(poll_ticks(&mut lp, &mut i, start).is_empty());
    advance(&mut lp, &c, 50);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [1250]);
    advance(&mut lp, &c, 300);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [1550]);
    advance(&mut lp, &c, 300);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [1850]);
}

/// tokio's `skip`: the late 600 at 950, then back on the grid: 1200, 1500.
#[test]
fn interval_skip() {
    let (mut lp, c, mut i, start) = interval_with(MissedTickBehavior::Skip);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [0]);
    advance(&mut lp, &c, 300);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [300]);
    advance(&mut lp, &c, 650);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [600]);
    advance(&mut lp, &c, 250);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [1200]);
    advance(&mut lp, &c, 300);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [1500]);
}

/// A tick at most 5 ms late is not missed: the grid holds.
#[test]
fn interval_late_by_five_is_on_time() {
    let (mut lp, c, mut i, start) = interval_with(MissedTickBehavior::Delay);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [0]);
    advance(&mut lp, &c, 305);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [300]);
    advance(&mut lp, &c, 295);
    assert_eq!(
        poll_ticks(&mut lp, &mut i, start),
        [600],
        "still on the grid"
    );
}

/// tokio's `reset`, `reset_immediately`, `reset_after`, `reset_at`.
#[test]
fn interval_resets() {
    let (mut lp, c, mut i, start) = interval_with(MissedTickBehavior::Burst);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [0]);
    advance(&mut lp, &c, 100);
    lp.scope(|| i.reset());
    advance(&mut lp, &c, 299);
    assert!(poll_ticks(&mut lp, &mut i, start).is_empty());
    advance(&mut lp, &c, 1);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [400]);
    lp.scope(|| i.reset_immediately());
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [400]);
    lp.scope(|| i.reset_after(ms(20)));
    advance(&mut lp, &c, 20);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [420]);
    lp.scope(|| i.reset_at(start + ms(1000)));
    advance(&mut lp, &c, 579);
    assert!(poll_ticks(&mut lp, &mut i, start).is_empty());
    advance(&mut lp, &c, 1);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [1000]);
}

/// `tick()` is cancel-safe: a dropped tick future loses no tick.
#[test]
fn tick_is_cancel_safe() {
    let (mut lp, c, mut i, start) = interval_with(MissedTickBehavior::Delay);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [0]);
    lp.scope(|| {
        let mut t = Box::pin(i.tick());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(t.as_mut().poll(&mut cx).is_pending());
        // Dropped here, pending.
    });
    advance(&mut lp, &c, 300);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [300]);
}

/// An interval polled or reset away from its loop (with no loop current,
/// or inside another loop's scope) reads its own loop's time, as its
/// sleep does. Found by round 35's audit: it read the current loop's, so
/// it panicked with none, and another loop's time would have set its grid.
#[test]
fn an_interval_away_from_its_loop_reads_its_own_loop() {
    let (mut lp, c, mut i, start) = interval_with(MissedTickBehavior::Delay);
    let ready = |i: &mut Spawn<Interval>| i.enter(|cx, mut iv| iv.poll_tick(cx));
    assert_eq!(ready(&mut i), Poll::Ready(start), "no loop current");
    let (mut other, oc) = setup();
    advance(&mut other, &oc, 5000);
    advance(&mut lp, &c, 100);
    other.scope(|| i.reset_after(ms(50)));
    advance(&mut lp, &c, 49);
    assert!(poll_ticks(&mut lp, &mut i, start).is_empty());
    advance(&mut lp, &c, 1);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [150]);
    other.scope(|| i.reset_immediately());
    assert_eq!(ready(&mut i), Poll::Ready(start + ms(150)));
    i.reset();
    advance(&mut lp, &c, 299);
    assert!(poll_ticks(&mut lp, &mut i, start).is_empty());
    advance(&mut lp, &c, 1);
    assert_eq!(poll_ticks(&mut lp, &mut i, start), [450]);
    assert_eq!(other.now(), 5000);
}

#[test]
#[should_panic(expected = "`period` must be non-zero.")]
fn interval_of_zero_panics() {
    let (mut lp, _c) = setup();
    lp.scope(|| time::interval(Duration::ZERO));
}

/// The time functions panic outside a loop, as tokio's do.
#[test]
fn outside_a_loop_they_panic_with_a_message() {
    let r = std::panic::catch_unwind(|| time::sleep(ms(1)));
    let payload = r.unwrap_err();
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap();
    assert!(msg.contains("no current timerloop EventLoop"), "{msg}");
}

/// An `Immediate` future completes in the next check phase, FIFO with
/// `set_immediate`.
#[test]
fn immediate_future_is_fifo_with_set_immediate() {
    let log = new_log();
    let (mut lp, _clock) = setup();
    lp.set_immediate(say(&log, "i1"));
    let l = log.clone();
    let imm = lp.scope(time::immediate);
    lp.spawn(async move {
        imm.await;
        push(&l, "future");
    });
    lp.set_immediate(say(&log, "i2"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["i1", "future", "i2"]);
}

fn say_at(log: &Log, name: &'static str) -> impl FnMut(&mut EventLoop) + 'static {
    at(log, name)
}
