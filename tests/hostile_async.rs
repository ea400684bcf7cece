//! Hostile input to the async layers (issue 14, item 5): zero and huge
//! semaphore weights, `Duration::MAX` and deadlines in the past for every
//! timer future, a zero interval, nested `block_on` and `with_current`,
//! spawning where no loop is, a `JoinHandle` outliving its loop, a
//! keep-alive released on another thread. Each has one documented answer
//! (an error, a documented panic, or a defined result); each case runs
//! under a watchdog, so a hang fails the test instead of stalling CI.
//!
//! The timer core's hostile input is in `tests/hostile.rs`.

use std::cell::RefCell;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::mpsc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant as StdInstant};

use timerloop::sync::Semaphore;
use timerloop::time::{self, Instant, dotnet, go};
use timerloop::{Error, EventLoop, PostError, task};

mod common;
use common::within;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The panic message of `f`, which must panic.
fn panic_of<R>(f: impl FnOnce() -> R) -> String {
    let payload = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic"),
        Err(p) => p,
    };
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        String::from("<non-string panic>")
    }
}

/// Polls `f` once with a waker that does nothing.
fn poll_once<F: Future>(f: F) -> Poll<F::Output> {
    let f = pin!(f);
    f.poll(&mut Context::from_waker(Waker::noop()))
}

// ----- semaphore weights ----------------------------------------------------

#[test]
fn semaphore_zero_weight_is_free_unless_someone_waits() {
    within(10, || {
        let sem = Arc::new(Semaphore::new(1));
        assert!(sem.try_acquire(0).is_some());
        let mut lp = EventLoop::with_virtual_clock();
        let s = sem.clone();
        let out = lp.block_on(async move {
            let zero = s.acquire(0).await; // no wait, nothing taken
            assert_eq!(s.available(), 1);
            drop(zero);
            let one = s.acquire(1).await;
            let s2 = s.clone();
            // Someone waits (a 1 behind the held 1): a zero-weight request
            // queues behind it, FIFO, and try_acquire(0) fails.
            let waiter = task::spawn(async move { s2.acquire(1).await.forget() });
            task::yield_now().await;
            assert!(s.try_acquire(0).is_none());
            let late_zero = time::timeout(ms(5), s.acquire(0)).await;
            drop(one);
            waiter.await.unwrap();
            (late_zero.is_err(), s.available())
        });
        assert_eq!(out.unwrap(), (true, 0));
    });
}

#[test]
fn semaphore_of_size_zero() {
    within(10, || {
        let sem = Arc::new(Semaphore::new(0));
        assert!(sem.try_acquire(0).is_some());
        assert!(sem.try_acquire(1).is_none());
        assert_eq!(
            sem.release(1).unwrap_err().to_string(),
            "semaphore: released more than held (1 released, 0 held without a permit); nothing \
             was released: release only the tokens of forgotten permits (a live Permit gives \
             its own back when dropped)"
        );
        let mut lp = EventLoop::with_virtual_clock();
        let s = sem.clone();
        // An acquire of 1 can never be granted: it keeps nothing alive, so
        // block_on reports the stall instead of hanging.
        assert!(matches!(
            lp.block_on(async move { s.acquire(1).await.forget() }),
            Err(Error::Stalled)
        ));
        let s = sem.clone();
        let r = lp.block_on(async move { time::timeout(ms(10), s.acquire(1)).await.is_err() });
        assert_eq!((r.unwrap(), lp.now()), (true, 10));
        assert_eq!(sem.available(), 0);
    });
}

#[test]
fn semaphore_weight_larger_than_the_size_waits_alone() {
    within(10, || {
        let sem = Arc::new(Semaphore::new(2));
        let mut lp = EventLoop::with_virtual_clock();
        let s = sem.clone();
        let out = lp.block_on(async move {
            let too_big = time::timeout(ms(10), s.acquire(3));
            // It blocks nobody: a request of 2 behind it is granted at once.
            let s2 = s.clone();
            let fits = task::spawn(async move { s2.acquire(2).await.forget() });
            (too_big.await.is_err(), fits.await.is_ok(), s.available())
        });
        assert_eq!(out.unwrap(), (true, true, 0));
        // Alone, it is a stall, not a hang.
        let s = sem.clone();
        assert!(matches!(
            lp.block_on(async move { s.acquire(u64::MAX).await.forget() }),
            Err(Error::Stalled)
        ));
    });
}

#[test]
fn semaphore_weights_of_u64_max() {
    let sem = Semaphore::new(u64::MAX);
    let all = sem.try_acquire(u64::MAX).unwrap();
    assert_eq!(sem.available(), 0);
    assert!(sem.try_acquire(1).is_none());
    drop(all);
    assert_eq!(sem.available(), u64::MAX);
    sem.try_acquire(u64::MAX).unwrap().forget();
    assert!(sem.release(u64::MAX).is_ok());
    assert!(sem.release(1).is_err(), "nothing is held");
    // No wrap-around: releasing u64::MAX into a small semaphore is refused
    // and changes nothing.
    let small = Semaphore::new(5);
    let _p = small.try_acquire(2).unwrap();
    assert!(small.release(u64::MAX).is_err());
    assert_eq!(small.available(), 3);
    // One more than the size, at the top of the range, never fits.
    let almost = Semaphore::new(u64::MAX - 1);
    assert!(almost.try_acquire(u64::MAX).is_none());
    assert!(poll_once(almost.acquire(u64::MAX)).is_pending());
    assert_eq!(almost.available(), u64::MAX - 1);
}

// ----- Duration::MAX and deadlines in the past ------------------------------

#[test]
fn sleep_of_duration_max_is_a_timer_that_only_a_timeout_ends() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        let out = lp.block_on(async {
            let s = time::sleep(Duration::MAX);
            let deadline = s.deadline();
            let r = time::timeout(ms(10), s).await;
            (
                r.is_err(),
                deadline > Instant::now() + Duration::from_secs(1 << 40),
            )
        });
        assert_eq!(out.unwrap(), (true, true));
        assert_eq!(lp.now(), 10);
    });
}

/// At the end of loop time (the virtual clock at `u64::MAX` ms), a sleep's
/// deadline saturates at now. A task that sleeps in a loop, or ticks an
/// interval, must still give the loop back: each sleep and each tick waits
/// for the next timers pass (as `set_interval` there fires once a pass),
/// where being ready at once spun the task's poll for ever.
#[test]
fn sleeps_and_ticks_at_the_end_of_time_wait_a_pass_each() {
    let (sleeps, ticks, timeout) = within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        lp.block(u64::MAX);
        let sleeps = Rc::new(std::cell::Cell::new(0_u32));
        let ticks = Rc::new(std::cell::Cell::new(0_u32));
        let s = sleeps.clone();
        lp.spawn(async move {
            loop {
                time::sleep(ms(10)).await;
                s.set(s.get() + 1);
            }
        });
        let t = ticks.clone();
        lp.spawn(async move {
            let mut iv = time::interval(ms(5));
            loop {
                iv.tick().await;
                t.set(t.get() + 1);
            }
        });
        for _ in 0..3 {
            lp.run_once().unwrap();
        }
        // A timeout there ends its future at the next pass, not never.
        let timeout =
            lp.block_on(async { time::timeout(ms(1), std::future::pending::<()>()).await });
        (sleeps.get(), ticks.get(), timeout.unwrap().is_err())
    });
    // The interval's first tick is at once; then one sleep and one tick a
    // pass.
    assert!((2..=4).contains(&sleeps), "{sleeps} sleeps in 3 passes");
    assert!((3..=5).contains(&ticks), "{ticks} ticks in 3 passes");
    assert!(timeout);
}

#[test]
fn timeout_of_duration_max_and_timeout_at_the_past() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        lp.block(50);
        let out = lp.block_on(async {
            let long = time::timeout(Duration::MAX, async { 7 }).await;
            let past = Instant::now() - ms(40);
            // A deadline already reached: the future is polled first, so a
            // ready one still wins; a pending one fails at once.
            let ready = time::timeout_at(past, async { 8 }).await;
            let pending = time::timeout_at(past, std::future::pending::<()>()).await;
            // Zero is one millisecond, as Node coerces it.
            let t0 = Instant::now();
            let zero = time::timeout(Duration::ZERO, std::future::pending::<()>()).await;
            (
                long,
                ready,
                pending.is_err(),
                zero.is_err(),
                Instant::now() - t0,
            )
        });
        assert_eq!(out.unwrap(), (Ok(7), Ok(8), true, true, ms(1)));
    });
}

#[test]
fn sleep_until_the_past_is_ready_at_once() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        lp.block(20);
        let out = lp.block_on(async {
            let now = Instant::now();
            time::sleep_until(now - ms(20)).await;
            time::sleep_until(now - Duration::MAX).await; // saturates at 0
            time::sleep_until(now).await;
            Instant::now() - now
        });
        assert_eq!(out.unwrap(), Duration::ZERO);
        assert_eq!(lp.stats().timers, 0, "no timer was made");
    });
}

#[test]
fn interval_of_zero_panics_and_huge_or_past_ones_do_not() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        // Zero is a documented panic, as in tokio.
        let msg = lp.scope(|| panic_of(|| time::interval(Duration::ZERO)));
        assert_eq!(msg, "`period` must be non-zero.");
        let msg = lp.scope(|| panic_of(|| time::interval_at(Instant::now(), Duration::ZERO)));
        assert_eq!(msg, "`period` must be non-zero.");
        // Under a millisecond rounds up to one.
        assert_eq!(
            lp.scope(|| time::interval(Duration::from_nanos(1)).period()),
            ms(1)
        );
        lp.block(30);
        let out = lp.block_on(async {
            // Duration::MAX: the first tick at once, then none.
            let mut huge = time::interval(Duration::MAX);
            let first = huge.tick().await;
            let second = time::timeout(ms(10), huge.tick()).await;
            // A start in the past: the first tick at once, at that start.
            let start = Instant::now() - ms(25);
            let mut past = time::interval_at(start, ms(10));
            let t = past.tick().await;
            (first <= Instant::now(), second.is_err(), t == start)
        });
        assert_eq!(out.unwrap(), (true, true, true));
    });
}

#[test]
fn go_timers_of_duration_max_and_zero() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        let out = lp.block_on(async {
            let mut t = go::Timer::new(Duration::MAX);
            let waited = time::timeout(ms(5), t.recv()).await.is_err();
            let stopped = t.stop(); // it was still pending
            let after = time::timeout(ms(5), go::after(Duration::MAX))
                .await
                .is_err();
            let f = go::after_func(Duration::MAX, |_| panic!("never runs"));
            let f_stopped = f.stop();
            let zero_ticker = go::Ticker::new(Duration::ZERO).is_err();
            let mut ticker = go::Ticker::new(Duration::MAX).unwrap();
            let no_tick = time::timeout(ms(5), ticker.recv()).await.is_err();
            let mut now = go::Timer::new(Duration::ZERO);
            let due = now.try_recv().is_some(); // due at once
            (waited, stopped, after, f_stopped, zero_ticker, no_tick, due)
        });
        assert_eq!(out.unwrap(), (true, true, true, true, true, true, true));
        assert_eq!(lp.now(), 15);
    });
}

#[test]
fn dotnet_timers_of_duration_max_and_zero() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        let out = lp.block_on(async {
            let t = dotnet::Timer::new(
                |_, _| panic!("never runs"),
                Some(Duration::MAX),
                Some(Duration::MAX),
            );
            time::sleep(ms(5)).await;
            let disposed = t.dispose();
            let zero = dotnet::PeriodicTimer::new(Duration::ZERO).is_err();
            let mut p = dotnet::PeriodicTimer::new(Duration::MAX).unwrap();
            let no_tick = time::timeout(ms(5), p.wait_for_next_tick()).await.is_err();
            let q = dotnet::PeriodicTimer::new(ms(1)).unwrap();
            let bad_change = q.set_period(Duration::ZERO).is_err();
            (disposed, zero, no_tick, bad_change, q.period())
        });
        assert_eq!(out.unwrap(), (true, true, true, true, ms(1)));
        assert_eq!(lp.now(), 10);
    });
}

// ----- the loop: nesting, no loop, a loop gone ------------------------------

#[test]
fn nested_block_on_is_reentrant_not_a_hang() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        let inner = lp.block_on(async {
            EventLoop::with_current(|lp| matches!(lp.block_on(async { 1 }), Err(Error::Reentrant)))
        });
        assert!(inner.unwrap());
        let got = std::rc::Rc::new(std::cell::Cell::new(false));
        let g = got.clone();
        lp.set_timeout(1, move |lp| {
            g.set(matches!(lp.block_on(async { 2 }), Err(Error::Reentrant)));
        });
        lp.run().unwrap();
        assert!(got.get());
        // The loop is still usable.
        assert_eq!(lp.block_on(async { 3 }).unwrap(), 3);
    });
}

#[test]
fn with_current_outside_a_loop_nested_or_in_a_callback_panics() {
    within(10, || {
        let msg = panic_of(|| EventLoop::with_current(|_| ()));
        assert!(
            msg.contains("there is no current timerloop EventLoop"),
            "{msg}"
        );
        let mut lp = EventLoop::with_virtual_clock();
        let h = lp.spawn(async {
            EventLoop::with_current(|_| EventLoop::with_current(|_| ()));
        });
        let err = lp.block_on(h).unwrap().unwrap_err();
        assert!(
            err.panic_message().unwrap().contains("does not nest"),
            "{err}"
        );
        let msg = std::rc::Rc::new(std::cell::RefCell::new(String::new()));
        let m = msg.clone();
        lp.set_timeout(1, move |_| {
            *m.borrow_mut() = panic_of(|| EventLoop::with_current(|_| ()));
        });
        lp.run().unwrap();
        assert!(msg.borrow().contains("already lent"), "{}", msg.borrow());
        // After all that, the loop works.
        assert_eq!(lp.block_on(async { 4 }).unwrap(), 4);
    });
}

#[test]
fn spawn_or_sleep_on_a_thread_without_a_loop_panics() {
    within(10, || {
        let msg = panic_of(|| task::spawn(async {}));
        assert!(msg.contains("no current timerloop EventLoop"), "{msg}");
        let msg = panic_of(|| time::sleep(ms(1)));
        assert!(msg.contains("no current"), "{msg}");
        // Spawning from another thread goes through a Remote.
        let mut lp = EventLoop::with_virtual_clock();
        let remote = lp.remote();
        let t = std::thread::spawn(move || {
            remote
                .post(|lp: &mut EventLoop| {
                    lp.spawn(async {});
                })
                .unwrap();
        });
        t.join().unwrap();
        lp.run().unwrap();
        assert_eq!(lp.stats().tasks, 0, "the posted spawn ran to completion");
    });
}

thread_local! {
    /// Where this thread's last panic was raised, as the panic hook saw it.
    static PANICKED_AT: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
}

/// Where `f`, which must panic, panicked: its file and line, recorded by
/// a panic hook installed once for the binary, which then calls the hook
/// it replaced (so other tests' panics print as before).
fn panic_location<R>(f: impl FnOnce() -> R) -> (String, u32) {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let at = info.location().map(|l| (l.file().to_owned(), l.line()));
            PANICKED_AT.with(|p| *p.borrow_mut() = at);
            before(info);
        }));
    });
    PANICKED_AT.with(|p| p.borrow_mut().take());
    let _ = panic_of(f);
    PANICKED_AT
        .with(|p| p.borrow_mut().take())
        .expect("the hook saw the panic")
}

/// `f` panics at this very line of this file: the panicking function is
/// `#[track_caller]` all the way down, as tokio's are.
macro_rules! panics_here {
    ($f:expr) => {
        assert_eq!(
            panic_location($f),
            (file!().to_owned(), line!()),
            "{}",
            stringify!($f)
        )
    };
}

/// A function that panics for want of a current loop reports the
/// caller's line, not a line inside the crate (tokio's functions are
/// `#[track_caller]`): the message says what is missing, the location
/// where. Each public function on the path to the check, and the
/// private ones between, pass the location on; a closure would not.
#[test]
fn a_missing_loop_panics_at_the_callers_line() {
    use timerloop::mio::Interest;
    use timerloop::net::{AsyncSource, TcpListener, TcpStream, UdpSocket};
    within(10, || {
        panics_here!(|| task::spawn(async {}));
        panics_here!(|| task::spawn_local(async {}));
        panics_here!(|| task::id());
        panics_here!(|| task::JoinSet::new().spawn(async {}));
        panics_here!(|| task::JoinSet::new().spawn_local(async {}));
        panics_here!(|| task::JoinSet::new().extend([async {}]));
        panics_here!(|| task::JoinSet::from_iter([async {}]));
        panics_here!(|| time::sleep(ms(1)));
        panics_here!(|| time::sleep_until(Instant::from_millis(1)));
        panics_here!(|| time::immediate());
        panics_here!(|| time::interval(ms(1)));
        panics_here!(|| time::interval_at(Instant::from_millis(1), ms(1)));
        panics_here!(|| time::timeout(ms(1), async {}));
        panics_here!(|| time::timeout_at(Instant::from_millis(1), async {}));
        panics_here!(|| Instant::now());
        panics_here!(|| Instant::from_millis(1).elapsed());
        panics_here!(|| go::Timer::new(ms(1)));
        panics_here!(|| go::after(ms(1)));
        panics_here!(|| go::Ticker::new(ms(1)));
        panics_here!(|| go::after_func(ms(1), |_| {}));
        panics_here!(|| dotnet::Timer::new(|_, _| {}, None, None));
        panics_here!(|| dotnet::PeriodicTimer::new(ms(1)));
        panics_here!(|| EventLoop::with_current(|_| ()));
        let (a, b) = timerloop::mio::net::UnixStream::pair().unwrap();
        panics_here!(|| AsyncSource::new(a));
        panics_here!(|| AsyncSource::with_interest(b, Interest::READABLE));
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        panics_here!(|| TcpStream::from_std(s));
        panics_here!(|| TcpListener::from_std(l));
        let u = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        panics_here!(|| UdpSocket::from_std(u));

        // The documented panics inside a loop: a zero period, a nested
        // `with_current`.
        let mut lp = EventLoop::with_virtual_clock();
        lp.scope(|| panics_here!(|| time::interval(Duration::ZERO)));
        lp.scope(|| panics_here!(|| time::interval_at(Instant::now(), Duration::ZERO)));
        let h = lp.spawn(async {
            panics_here!(|| EventLoop::with_current(|_| EventLoop::with_current(|_| ())));
        });
        lp.block_on(h).unwrap().unwrap();
    });
}

#[test]
fn a_join_handle_outliving_its_loop_is_cancelled() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        let pending = lp.spawn(async { time::sleep(ms(100)).await });
        let never_polled = lp.spawn(async { 5 });
        drop(lp);
        // The loop dropped the tasks: their handles complete, cancelled.
        for r in [
            poll_once(pending),
            poll_once(async move { never_polled.await.map(|_| ()) }),
        ] {
            let Poll::Ready(Err(e)) = r else {
                panic!("{r:?}");
            };
            assert!(e.is_cancelled());
        }
        // Awaited in another loop, the same.
        let mut first = EventLoop::with_virtual_clock();
        let h = first.spawn(std::future::pending::<()>());
        drop(first);
        let mut second = EventLoop::with_virtual_clock();
        assert!(second.block_on(h).unwrap().unwrap_err().is_cancelled());
    });
}

#[test]
fn posting_to_a_dropped_loop_is_closed() {
    let mut lp = EventLoop::with_virtual_clock();
    let remote = lp.remote();
    drop(lp);
    let r = std::thread::spawn(move || remote.post(|_: &mut EventLoop| ()))
        .join()
        .unwrap();
    assert!(matches!(r, Err(PostError::Closed)), "{r:?}");
}

#[test]
fn keepalive_released_from_another_thread_lets_run_return() {
    within(10, || {
        let sem = Arc::new(Semaphore::new(1));
        sem.try_acquire(1).unwrap().forget();
        let mut lp = EventLoop::new();
        let mut acq = Box::pin(sem.clone().acquire_owned(1));
        let (tx, rx) = mpsc::channel();
        // Queued while a loop is current: it keeps the loop alive. Then it
        // moves to another thread and is dropped there (cancelled).
        lp.spawn(async move {
            std::future::poll_fn(|_| {
                let mut cx = Context::from_waker(Waker::noop());
                assert!(acq.as_mut().poll(&mut cx).is_pending());
                Poll::Ready(())
            })
            .await;
            tx.send(acq).unwrap();
        });
        let t = std::thread::spawn(move || {
            let acq = rx.recv().unwrap();
            std::thread::sleep(ms(50));
            drop(acq);
        });
        let t0 = StdInstant::now();
        lp.run().unwrap(); // hung here before the release became a message
        assert!(t0.elapsed() >= ms(40), "{:?}", t0.elapsed());
        t.join().unwrap();
        assert_eq!(sem.available(), 0);
    });
}

/// Alone on a virtual clock, a sleep of `Duration::MAX` is the last timer
/// of loop time: the clock jumps to `u64::MAX` ms and it completes (on a
/// real clock it waits, as asked). No panic, no overflow, no hang.
#[test]
fn sleep_of_duration_max_alone_ends_loop_time() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        lp.block_on(async { time::sleep(Duration::MAX).await })
            .unwrap();
        assert_eq!(lp.now(), u64::MAX);
    });
}

/// A task's waker that outlives its loop wakes nothing, from the loop's
/// thread or another; aborting the task's handle then does nothing.
#[test]
fn wakers_and_handles_of_a_dropped_loop_are_inert() {
    within(10, || {
        let slot: Arc<std::sync::Mutex<Option<Waker>>> = Arc::default();
        let mut lp = EventLoop::with_virtual_clock();
        let s = slot.clone();
        let h = lp.spawn(std::future::poll_fn(move |cx| {
            *s.lock().unwrap() = Some(cx.waker().clone());
            Poll::<()>::Pending
        }));
        lp.run().unwrap();
        let waker = slot.lock().unwrap().take().expect("the task was polled");
        drop(lp);
        waker.wake_by_ref(); // the loop's thread: no loop to queue on
        let w = waker.clone();
        std::thread::spawn(move || w.wake()).join().unwrap(); // Closed, ignored
        h.abort();
        assert!(h.is_finished());
        assert!(poll_once(h).is_ready());
    });
}

/// A future whose drop panics: aborting its task makes the deferred
/// operation that drops it panic, and the panic leaves `run`.
struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("a future's drop failed");
    }
}

/// Spawns a task holding a [`PanicOnDrop`], pending forever.
fn doomed_task(lp: &mut EventLoop) -> task::JoinHandle<()> {
    lp.spawn(async {
        let _guard = PanicOnDrop;
        std::future::pending::<()>().await;
    })
}

/// Runs `lp`, which must end in a panic that escapes `run` (a
/// [`doomed_task`]'s drop).
fn assert_run_panics(lp: &mut EventLoop) {
    let escaped = catch_unwind(AssertUnwindSafe(|| lp.run()));
    assert!(escaped.is_err(), "the drop's panic escapes run");
}

/// A panic that escapes a deferred operation flushed after a timer's
/// callback leaves `run` only once that timer is finished, and leaves the
/// pass for the next run: the timer after it in the same list runs then,
/// no timer is current outside a callback, and a later timer of the same
/// duration still fires (the native timer was stopped for the pass and
/// is armed again).
#[test]
fn a_panic_escaping_a_timers_flush_leaves_the_pass_for_the_next_run() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        let log: Rc<RefCell<Vec<&'static str>>> = Rc::default();
        let h = doomed_task(&mut lp);
        let first = lp.set_timeout(1, move |_| h.abort());
        let l = log.clone();
        let second = lp.set_timeout(1, move |_| l.borrow_mut().push("second"));
        assert_run_panics(&mut lp);
        assert_eq!(
            lp.current_timeout(),
            None,
            "no timer is current after the escape"
        );
        assert!(
            !lp.timeout_is_pending(first),
            "the fired timer was finished"
        );
        assert!(log.borrow().is_empty());
        assert!(lp.timeout_is_pending(second));
        lp.run().unwrap();
        assert_eq!(*log.borrow(), ["second"]);
        let l = log.clone();
        lp.set_timeout(1, move |_| l.borrow_mut().push("later, same duration"));
        lp.run().unwrap();
        assert_eq!(*log.borrow(), ["second", "later, same duration"]);
        assert_eq!(lp.now(), 2);
        assert!(!lp.is_alive());
    });
}

/// The same escape after an interval's callback: the interval is re-armed
/// before the panic leaves `run`, and keeps its period.
#[test]
fn a_panic_escaping_after_an_interval_leaves_it_armed() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        let h = doomed_task(&mut lp);
        let mut h = Some(h);
        let runs: Rc<RefCell<Vec<u64>>> = Rc::default();
        let r = runs.clone();
        lp.set_interval(3, move |lp| {
            r.borrow_mut().push(lp.now());
            if let Some(h) = h.take() {
                h.abort();
            }
            if r.borrow().len() == 3 {
                let me = lp.current_timeout().expect("an interval's callback");
                lp.clear_interval(me).unwrap();
            }
        });
        assert_run_panics(&mut lp);
        assert_eq!(*runs.borrow(), [3]);
        lp.run().unwrap();
        assert_eq!(*runs.borrow(), [3, 6, 9]);
        assert!(!lp.is_alive());
    });
}

/// A deferred operation that panics (here: an abort applied from a
/// callback drops a future whose drop panics) escapes `run`, and leaves the
/// loop able to apply later deferred operations: a sleep made in a
/// callback afterwards still arms and completes.
#[test]
fn a_panicking_deferred_operation_does_not_stop_later_flushes() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        let h = doomed_task(&mut lp);
        lp.set_immediate(move |_| h.abort());
        assert_run_panics(&mut lp);
        let done = std::rc::Rc::new(std::cell::Cell::new(false));
        let d = done.clone();
        lp.set_immediate(move |lp| {
            lp.spawn(async move {
                time::sleep(ms(5)).await;
                d.set(true);
            });
        });
        lp.run().unwrap();
        assert!(done.get());
        assert_eq!(lp.now(), 5);
    });
}

/// The same escape after an immediate's callback or a tick's: the rest of
/// the batch, and the ticks queued after it, run in the next run.
#[test]
fn a_panic_escaping_after_an_immediate_or_a_tick_loses_nothing() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        let log: Rc<RefCell<Vec<&'static str>>> = Rc::default();
        let h = doomed_task(&mut lp);
        lp.set_immediate(move |_| h.abort());
        let l = log.clone();
        lp.set_immediate(move |_| l.borrow_mut().push("immediate"));
        assert_run_panics(&mut lp);
        lp.run().unwrap();
        assert_eq!(*log.borrow(), ["immediate"]);

        let mut h = Some(doomed_task(&mut lp));
        let l = log.clone();
        lp.set_timeout(1, move |lp| {
            let h = h.take().expect("fires once");
            lp.next_tick(move |_| h.abort());
            let l = l.clone();
            lp.next_tick(move |_| l.borrow_mut().push("tick"));
        });
        assert_run_panics(&mut lp);
        lp.run().unwrap();
        assert_eq!(*log.borrow(), ["immediate", "tick"]);
        assert!(!lp.is_alive());
    });
}

/// A panic that escapes a completion's callback (through the flush of a
/// deferred operation) leaves the rest of the poll phase's messages for
/// the next run: a completion after it in the same batch still runs, so
/// its request does not stay in flight and keep the loop waiting for
/// ever, and a post queued after it runs too.
#[test]
fn a_panic_escaping_a_completion_keeps_the_messages_after_it() {
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        let log: Rc<RefCell<Vec<&'static str>>> = Rc::default();
        let h = doomed_task(&mut lp);
        let first = lp.completion(move |_| h.abort());
        let l = log.clone();
        let second = lp.completion(move |_| l.borrow_mut().push("second"));
        let remote = lp.remote();
        first.complete();
        second.complete();
        let posted = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let p = posted.clone();
        remote
            .post(move |_| p.store(true, std::sync::atomic::Ordering::Relaxed))
            .expect("the loop is there");
        drop(remote);
        assert_run_panics(&mut lp);
        lp.run().expect("the rest runs");
        assert_eq!(*log.borrow(), ["second"]);
        assert!(posted.load(std::sync::atomic::Ordering::Relaxed));
        assert!(!lp.is_alive(), "no request left in flight");
    });
}

/// A panic that escapes an I/O callback leaves the source registered with
/// its callback: a later event still reaches it, and the source can be
/// taken back (it was dropped, and the handle left busy for ever).
#[test]
fn a_panic_escaping_an_io_callback_keeps_the_source_and_its_callback() {
    use std::io::{Read, Write};
    use timerloop::mio;
    within(10, || {
        let mut lp = EventLoop::with_virtual_clock();
        let (mut tx, rx) = mio::net::UnixStream::pair().unwrap();
        let mut doomed = Some(doomed_task(&mut lp));
        let log: Rc<RefCell<Vec<Vec<u8>>>> = Rc::default();
        let l = log.clone();
        let io = lp
            .insert_io(rx, mio::Interest::READABLE, move |lp, rx, ev| {
                let mut buf = [0; 8];
                if let Ok(n) = rx.read(&mut buf) {
                    l.borrow_mut().push(buf[..n].to_vec());
                }
                if let Some(h) = doomed.take() {
                    h.abort(); // its drop panics after this callback
                } else {
                    lp.close_io(ev.handle).unwrap();
                }
            })
            .unwrap();
        tx.write_all(b"a").unwrap();
        assert_run_panics(&mut lp);
        assert!(
            lp.io_source::<mio::net::UnixStream>(io).is_ok(),
            "the source is back"
        );
        tx.write_all(b"b").unwrap();
        lp.run().expect("the second event is delivered");
        assert_eq!(*log.borrow(), [b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(lp.stats().io_sources, 0);
    });
}
