//! Tasks: spawn, JoinHandle, abort, block_on, wakers on this thread and
//! others, unhandled rejections, and the Node order of every wake-up (a
//! task's poll is a microtask). Virtual clock unless stated.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use timerloop::task::{self, JoinError};
use timerloop::{CallbackKind, Error, EventLoop, Stats, time};

mod common;
use common::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A task's first poll is a microtask: after the main body's ticks, FIFO
/// with the microtasks queued around it (R10.2: ticks, then microtasks).
#[test]
fn first_poll_is_a_microtask() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.queue_microtask(say(&log, "m1"));
    let l = log.clone();
    lp.spawn(async move { push(&l, "task") });
    lp.queue_microtask(say(&log, "m2"));
    lp.next_tick(say(&log, "tick"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["tick", "m1", "task", "m2"]);
}

/// A task woken by a fired timer resumes after the ticks that timer's
/// callback queued and before the next timer callback of the same list,
/// as a promise continuation does in Node (`A B(promise) C`, §12.8).
#[test]
fn a_woken_task_resumes_between_timers() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(10, move |lp| {
        push(&l, "A");
        lp.next_tick(say(&l, "A-tick"));
    });
    let l = log.clone();
    lp.scope(|| {
        let s = time::sleep(ms(10));
        EventLoop::with_current(|lp| {
            lp.spawn(async move {
                s.await;
                push(&l, "B");
            })
        })
    });
    let l = log.clone();
    lp.set_timeout(10, move |lp| {
        push(&l, "C");
        lp.queue_microtask(say(&l, "C-micro"));
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["A", "A-tick", "B", "C", "C-micro"]);
}

/// A task that wakes itself while being polled is queued at the back:
/// microtasks queued before its wake run first.
#[test]
fn a_self_wake_goes_to_the_back() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.spawn(async move {
        push(&l, "t1");
        EventLoop::with_current(|lp| lp.queue_microtask(say(&l, "m")));
        task::yield_now().await;
        push(&l, "t2");
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["t1", "m", "t2"]);
}

/// Wakes coalesce: many wakes before the poll give one poll.
#[test]
fn wakes_coalesce() {
    let polls = Rc::new(Cell::new(0));
    let mut lp = EventLoop::with_virtual_clock();
    let p = polls.clone();
    let h = lp.spawn(poll_fn(move |cx| {
        p.set(p.get() + 1);
        if p.get() == 1 {
            for _ in 0..5 {
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }));
    lp.block_on(h).unwrap().unwrap();
    assert_eq!(polls.get(), 2);
}

/// A pending task keeps nothing alive: `run` returns with the task still
/// pending, as Node exits with a promise still pending. What it waits on
/// (a refed sleep) does.
#[test]
fn a_pending_task_does_not_keep_the_loop_alive() {
    let mut lp = EventLoop::with_virtual_clock();
    let h = lp.spawn(std::future::pending::<()>());
    lp.run().unwrap();
    assert!(!h.is_finished());
    assert_eq!(lp.stats().tasks, 1);
    let h2 = lp.spawn(async { time::sleep(ms(40)).await });
    lp.run().unwrap();
    assert!(h2.is_finished());
    assert_eq!(lp.now(), 40);
    h.abort();
    lp.run().unwrap();
    assert_eq!(lp.stats(), Stats::default());
}

/// `block_on` returns the output as soon as its future completes; the rest
/// of the loop's work stays queued for the next run.
#[test]
fn block_on_returns_at_once() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(10, say_at(&log, "same-list-later"));
    let out = lp
        .block_on(async {
            time::sleep(ms(5)).await;
            7
        })
        .unwrap();
    assert_eq!(out, 7);
    assert_eq!(lp.now(), 5);
    assert!(log.borrow().is_empty());
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["same-list-later@10"]);
}

/// Within a timers pass: the main task completes in the microtask after
/// the first timer of a list; the second timer of the list has not run
/// when `block_on` returns, and runs on the next run.
#[test]
fn block_on_stops_mid_pass_and_the_pass_resumes() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    let out = lp.block_on(async move {
        let s = time::sleep(ms(10));
        EventLoop::with_current(|lp| lp.set_timeout(10, say_at(&l, "after")));
        s.await;
        push(&l, "main");
    });
    out.unwrap();
    assert_eq!(*log.borrow(), ["main"]);
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["main", "after@10"]);
}

/// Nothing refed left while the future is pending: `Error::Stalled`
/// (Node's exit code 13), not a hang; an unrefed sleep does not count.
#[test]
fn block_on_with_nothing_left_is_stalled() {
    let mut lp = EventLoop::with_virtual_clock();
    let r = lp.block_on(std::future::pending::<()>());
    assert!(matches!(r, Err(Error::Stalled)), "{r:?}");
    let r = lp.block_on(async {
        let s = time::sleep(ms(10));
        s.set_ref(false);
        s.await;
    });
    assert!(matches!(r, Err(Error::Stalled)), "{r:?}");
    assert_eq!(lp.stats().tasks, 0, "a stalled main task is dropped");
    assert_eq!(lp.stats().timers, 0);
}

/// `block_on` from inside the loop is `Reentrant`; a panicking main future
/// is an uncaught error of kind `Task`.
#[test]
fn block_on_errors() {
    let mut lp = EventLoop::with_virtual_clock();
    let seen = Rc::new(RefCell::new(None));
    let s = seen.clone();
    lp.set_timeout(1, move |lp| {
        *s.borrow_mut() = Some(matches!(lp.block_on(async {}), Err(Error::Reentrant)));
    });
    lp.run().unwrap();
    assert_eq!(*seen.borrow(), Some(true));
    let r = lp.block_on(async { panic!("main failed") });
    let e = r.unwrap_err().into_callback_error().unwrap();
    assert_eq!(e.kind(), CallbackKind::Task);
    assert_eq!(e.message(), "main failed");
}

/// A JoinHandle polled again after it returned its output panics with a
/// message, as tokio's does, instead of pending forever (a `block_on`
/// then reported `Stalled`; with a timeout, the timeout elapsed). Found
/// by round 35's audit.
#[test]
fn a_join_handle_polled_after_completion_panics() {
    let mut lp = EventLoop::with_virtual_clock();
    let mut h = lp.spawn(async { 5 });
    lp.run().unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    assert_eq!(Pin::new(&mut h).poll(&mut cx), Poll::Ready(Ok(5)));
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = Pin::new(&mut h).poll(&mut cx);
    }));
    let payload = again.unwrap_err();
    let msg = payload.downcast_ref::<&str>().copied().unwrap_or_default();
    assert!(msg.contains("polled after it completed"), "{msg}");

    // Inside a task: the task fails with that panic, not a stall.
    let err = lp
        .block_on(async {
            let mut h = task::spawn(async { 5 });
            assert_eq!((&mut h).await, Ok(5));
            let _ = time::timeout(Duration::from_millis(10), &mut h).await;
        })
        .unwrap_err();
    let err = err.into_callback_error().expect("the task's panic");
    assert!(err.message().contains("polled after it completed"), "{err}");
    assert_eq!(lp.now(), 0, "it did not wait for the timeout");
}

/// A `block_on` whose task completes in the middle of a timers pass leaves
/// the rest of the pass to a later run, even when the next run is another
/// `block_on` whose future completes before any phase. Found by round
/// 35's audit: that second `block_on` took the pass's resume and dropped
/// it, and the timeout left in the pass never ran (the loop not alive,
/// one refed timer pending).
#[test]
fn a_pass_interrupted_by_block_on_survives_the_next_block_on() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    let first = lp.block_on(async move {
        let s = time::sleep(ms(5));
        EventLoop::with_current(|lp| lp.set_timeout(5, at(&l, "b")));
        s.await;
        5
    });
    assert_eq!(first.unwrap(), 5);
    assert!(
        log.borrow().is_empty(),
        "the task completed before b's turn"
    );
    assert_eq!(lp.block_on(async { 7 }).unwrap(), 7);
    assert!(lp.is_alive(), "b is pending");
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["b@5"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// `stop()` inside `block_on` does not end it: the future still pending
/// (a refed sleep keeps the loop alive), `block_on` runs on and returns
/// the future's output. Found by round 35's audit: the stopped run was
/// taken for a stall, `block_on` returned `Error::Stalled` and aborted the
/// task with its sleep.
#[test]
fn stop_inside_block_on_does_not_end_it() {
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(10, |lp| lp.stop());
    lp.set_interval(20, |lp| lp.stop());
    let out = lp.block_on(async {
        time::sleep(ms(30)).await;
        42
    });
    assert_eq!(out.unwrap(), 42);
    assert_eq!(lp.now(), 30);
    assert_eq!(lp.stats().tasks, 0);
}

/// A JoinHandle completes with the output, a panic, or cancellation.
#[test]
fn join_handles() {
    let mut lp = EventLoop::with_virtual_clock();
    let ok = lp.spawn(async { 5 });
    let bad = lp.spawn(async {
        time::sleep(ms(3)).await;
        panic!("bad task")
    });
    let slow = lp.spawn(async { time::sleep(ms(100)).await });
    let out = lp
        .block_on(async move {
            let a = ok.await;
            let b = bad.await.unwrap_err();
            slow.abort();
            let c = slow.await.unwrap_err();
            (a, b, c)
        })
        .unwrap();
    assert_eq!(out.0, Ok(5));
    assert!(out.1.is_panic() && out.1.panic_message().as_deref() == Some("bad task"));
    assert!(out.2.is_cancelled());
    assert_eq!(lp.now(), 3, "the aborted task's sleep went with it");
    lp.run().unwrap();
    assert_eq!(lp.now(), 3);
    assert_eq!(lp.stats(), Stats::default());
    let e: JoinError = out.2;
    assert_eq!(e.to_string(), format!("task {} was cancelled", e.id()));
    assert_eq!(
        out.1.to_string(),
        format!("task {} panicked with message \"bad task\"", out.1.id())
    );
}

/// Aborting a task from a callback drops its future (and clears its
/// sleep) before anything else runs; nothing is woken afterwards.
#[test]
fn abort_from_a_callback() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    let h = lp.spawn(async move {
        time::sleep(ms(50)).await;
        push(&l, "never");
    });
    lp.set_timeout(10, move |_| h.abort());
    lp.run().unwrap();
    assert!(log.borrow().is_empty());
    assert_eq!(lp.now(), 10, "the sleep's ref went with the task");
    assert_eq!(lp.stats(), Stats::default());
}

/// A task that aborts itself through its own handle and drops the handle
/// in the same poll is not resumed, and a panic after the abort is not an
/// unhandled rejection (the abort completed the handle, cancelled), whether
/// or not the deferred abort was applied during that poll (a `set_timeout`
/// is a flush point).
#[test]
fn a_task_aborting_itself_and_dropping_its_handle() {
    for flush in [false, true] {
        for fail in [false, true] {
            let log = new_log();
            let mut lp = EventLoop::with_virtual_clock();
            let l = log.clone();
            lp.set_uncaught_handler(move |_, e| push(&l, format!("uncaught {}", e.message())));
            let slot: Rc<RefCell<Option<task::JoinHandle<()>>>> = Rc::default();
            let (s, l) = (slot.clone(), log.clone());
            let h = lp.spawn(async move {
                let me = s.borrow_mut().take().expect("the handle");
                me.abort();
                drop(me);
                if flush {
                    EventLoop::with_current(|lp| lp.set_timeout(1, |_| {}));
                }
                if fail {
                    panic!("after the abort");
                }
                time::sleep(ms(5)).await;
                push(&l, "resumed");
            });
            *slot.borrow_mut() = Some(h);
            lp.run().unwrap();
            assert!(log.borrow().is_empty(), "{flush} {fail}: {log:?}");
            assert_eq!(lp.stats().tasks, 0, "{flush} {fail}");
            assert!(lp.now() <= 1, "{flush} {fail}: the sleep never started");
        }
    }
}

/// A detached task that panics is an unhandled rejection: reported as an
/// uncaught `Task` error after the microtask queue drains, not at the
/// panic; a task whose JoinHandle is alive reports to it instead.
#[test]
fn a_detached_panic_is_an_unhandled_rejection() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_uncaught_handler(move |_, e| {
        push(&l, format!("uncaught {} ({:?})", e.message(), e.kind()))
    });
    let l = log.clone();
    lp.spawn(async move {
        EventLoop::with_current(|lp| {
            lp.queue_microtask(say(&l, "micro-after"));
            lp.next_tick(say(&l, "tick"));
        });
        panic!("x")
    });
    let l = log.clone();
    lp.queue_microtask(say(&l, "micro-before"));
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        ["micro-before", "micro-after", "tick", "uncaught x (Task)"]
    );
    // Without a handler, run returns it.
    let mut lp = EventLoop::with_virtual_clock();
    lp.spawn(async { panic!("y") });
    let e = lp.run().unwrap_err().into_callback_error().unwrap();
    assert_eq!((e.kind(), e.message().as_str()), (CallbackKind::Task, "y"));
}

/// A JoinHandle that was polled is as a promise that was awaited: a
/// handler is attached for good. So a task given up on by a `timeout` (or
/// a `select`) that then panics is handled, as node's
/// `await Promise.race([p, timeout])` handles `p`'s later rejection,
/// where before it ended the run as an unhandled rejection. A handle
/// dropped without being polled still leaves an unhandled rejection.
#[test]
fn a_panic_after_its_awaiting_timeout_gave_up_is_handled() {
    let mut lp = EventLoop::with_virtual_clock();
    let r = lp.block_on(async {
        let h = task::spawn(async {
            time::sleep(ms(50)).await;
            panic!("late failure");
        });
        let waited = time::timeout(ms(10), h).await;
        assert!(waited.is_err(), "the timeout gave up");
        time::sleep(ms(100)).await;
        "main done"
    });
    assert_eq!(r.unwrap(), "main done");
    assert_eq!(lp.now(), 110);
    // In a callback program, by hand: polled once, dropped, then the
    // panic; and beside it one never polled, whose panic is unhandled.
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_uncaught_handler(move |_, e| push(&l, format!("uncaught {}", e.message())));
    let mut awaited = lp.spawn(async {
        time::sleep(ms(5)).await;
        panic!("awaited");
    });
    let mut cx = Context::from_waker(Waker::noop());
    assert!(Pin::new(&mut awaited).poll(&mut cx).is_pending());
    drop(awaited);
    drop(lp.spawn(async {
        time::sleep(ms(5)).await;
        panic!("never awaited");
    }));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["uncaught never awaited"]);
    assert_eq!(lp.stats().tasks, 0);
}

/// A task that panics while its JoinHandle is kept but was never polled
/// holds the panic for the handle (tokio's: awaiting it later gives the
/// JoinError). Dropped without reading it, the handle reports it as an
/// unhandled rejection, as a detached task's: nobody attached a handler
/// and nobody can read it any more. Before, it was lost silently, and a
/// failed `assert!` in a task held as `let _h = lp.spawn(..)` passed.
#[test]
fn a_panic_left_unread_in_a_dropped_handle_is_reported() {
    let mut lp = EventLoop::with_virtual_clock();
    let h = lp.spawn(async {
        time::sleep(ms(10)).await;
        panic!("task boom");
    });
    lp.run_until(30).unwrap();
    assert!(h.is_finished());
    drop(h);
    let e = lp.run().unwrap_err().into_callback_error().unwrap();
    assert_eq!(
        (e.kind(), e.message().as_str()),
        (CallbackKind::Task, "task boom")
    );
    // Read, it is the handle's and nothing else's.
    let mut lp = EventLoop::with_virtual_clock();
    let h = lp.spawn(async {
        time::sleep(ms(10)).await;
        panic!("read");
    });
    lp.run_until(30).unwrap();
    let r = lp.block_on(h).unwrap();
    assert!(r.unwrap_err().is_panic());
    lp.run().unwrap();
    // Dropped in a task: reported once the microtasks have drained, to
    // the uncaught handler; a handle with an abort handle beside it too.
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_uncaught_handler(move |_, e| push(&l, format!("uncaught {}", e.message())));
    let h = lp.spawn(async { panic!("held") });
    let stop = h.abort_handle();
    let mut h = Some(h);
    let l = log.clone();
    lp.set_timeout(5, move |lp| {
        let (l, h) = (l.clone(), h.take());
        lp.spawn(async move {
            drop(h);
            EventLoop::with_current(|lp| lp.queue_microtask(say(&l, "micro")));
        });
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["micro", "uncaught held"]);
    assert!(stop.is_finished());
}

/// `with_current` panics outside a loop, inside a callback (the loop is
/// lent to it) and nested; `scope` lends it.
#[test]
fn with_current_is_lent_only_where_no_other_borrow_lives() {
    let r = std::panic::catch_unwind(|| EventLoop::with_current(|_| ()));
    assert!(r.is_err(), "outside any loop");
    let mut lp = EventLoop::with_virtual_clock();
    let nested = lp.scope(|| {
        EventLoop::with_current(|_| {
            std::panic::catch_unwind(|| EventLoop::with_current(|_| ())).is_err()
        })
    });
    assert!(nested, "nested with_current panics");
    let in_callback = Rc::new(Cell::new(false));
    let c = in_callback.clone();
    lp.set_timeout(1, move |_| {
        let r = std::panic::catch_unwind(|| EventLoop::with_current(|_| ()));
        c.set(r.is_err());
    });
    lp.run().unwrap();
    assert!(in_callback.get(), "inside a callback");
    let now = lp.scope(|| EventLoop::with_current(|lp| lp.now()));
    assert_eq!(now, 1);
}

/// A waker sent to another thread wakes the task through the loop's
/// cross-thread path: a blocked poll phase wakes, and the task runs as a
/// microtask after that poll-phase callback. A refed Remote keeps the loop
/// alive while the other thread may still wake it. Real clock.
#[test]
fn a_wake_from_another_thread() {
    type Slot = Arc<Mutex<(bool, Option<Waker>)>>;
    struct Flag(Slot);
    impl Future for Flag {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            let mut s = self.0.lock().unwrap();
            if s.0 {
                Poll::Ready(())
            } else {
                s.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
    let slot: Slot = Arc::default();
    let mut lp = EventLoop::new();
    let remote = lp.remote();
    let s = slot.clone();
    let other = std::thread::spawn(move || {
        std::thread::sleep(ms(30));
        let waker = {
            let mut g = s.lock().unwrap();
            g.0 = true;
            g.1.take()
        };
        waker.expect("the task registered its waker").wake();
        drop(remote);
    });
    let start = std::time::Instant::now();
    let h = lp.spawn(Flag(slot));
    lp.block_on(h).unwrap().unwrap();
    other.join().unwrap();
    assert!(start.elapsed() >= ms(25));
}

/// Where a test keeps the waker of a task's latest poll.
type WakerSlot = Rc<RefCell<Option<Waker>>>;

/// Spawns a task that counts its polls and keeps the waker of the latest
/// in the slot returned, completing on poll `ready_at`.
fn spawn_keeping_waker(
    lp: &mut EventLoop,
    ready_at: u32,
) -> (WakerSlot, Rc<Cell<u32>>, task::JoinHandle<()>) {
    let slot: WakerSlot = Rc::default();
    let polls = Rc::new(Cell::new(0));
    let (s, p) = (slot.clone(), polls.clone());
    let h = lp.spawn(poll_fn(move |cx| {
        p.set(p.get() + 1);
        *s.borrow_mut() = Some(cx.waker().clone());
        if p.get() == ready_at {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }));
    (slot, polls, h)
}

/// A waker called on the loop's thread while the loop is not running
/// (between two runs, or in `EventLoop::scope`) queues the task as main-body
/// work: the next run polls it even when nothing else keeps the loop alive.
/// Found by the executor model (`tests/executor_model.rs`): the wake was
/// queued, but `run` drained the microtask queue only when a tick or
/// microtask had been queued from outside, so the task stayed unpolled.
#[test]
fn a_wake_between_runs_is_polled_by_the_next_run() {
    let mut lp = EventLoop::with_virtual_clock();
    let (slot, polls, h) = spawn_keeping_waker(&mut lp, 3);
    lp.run().unwrap();
    assert_eq!(polls.get(), 1);
    slot.borrow_mut().take().unwrap().wake();
    lp.run().unwrap();
    assert_eq!(polls.get(), 2, "woken outside the loop, polled by run()");
    let w = slot.borrow_mut().take().unwrap();
    lp.scope(|| w.wake());
    lp.run_nowait().unwrap();
    assert_eq!(polls.get(), 3, "woken in scope(), polled by run_nowait()");
    assert!(h.is_finished());
}

/// A wake from another thread while the loop is idle between runs, with
/// nothing refed left, is work queued for the loop: the next run step
/// (`run`, `run_once` or `run_nowait`) polls the task, and `block_on`
/// returns the woken future's output, not `Error::Stalled`. Found by
/// round 35's audit: the wake sat in the cross-thread queue, `run` found
/// the loop dead and returned, and `block_on` aborted the woken future.
#[test]
fn a_wake_from_another_thread_between_runs_is_polled_by_the_next_run_step() {
    /// Wakes `w` from another thread and waits until it has.
    fn wake_elsewhere(w: Waker) {
        std::thread::spawn(move || w.wake()).join().unwrap();
    }
    type Step = (&'static str, fn(&mut EventLoop));
    let steps: [Step; 3] = [
        ("run", |lp| lp.run().unwrap()),
        ("run_once", |lp| {
            lp.run_once().unwrap();
        }),
        ("run_nowait", |lp| {
            lp.run_nowait().unwrap();
        }),
    ];
    for (what, step) in steps {
        let mut lp = EventLoop::with_virtual_clock();
        let (slot, polls, h) = spawn_keeping_waker(&mut lp, 2);
        lp.run().unwrap();
        assert_eq!(polls.get(), 1, "{what}");
        assert!(!lp.is_alive(), "{what}: nothing refed");
        wake_elsewhere(slot.borrow_mut().take().unwrap());
        assert!(lp.is_alive(), "{what}: the queued wake keeps it alive");
        step(&mut lp);
        assert_eq!(polls.get(), 2, "{what}: woken elsewhere, polled by it");
        assert!(h.is_finished(), "{what}");
        assert!(!lp.is_alive(), "{what}: the wake's hold is let go");
    }

    // block_on: the first poll hands its waker to a thread and waits for
    // the wake to be queued before it returns Pending.
    let mut lp = EventLoop::new();
    let mut first = true;
    let r = lp.block_on(poll_fn(move |cx| {
        if std::mem::take(&mut first) {
            wake_elsewhere(cx.waker().clone());
            Poll::Pending
        } else {
            Poll::Ready(42)
        }
    }));
    assert_eq!(r.unwrap(), 42);
    assert!(!lp.is_alive());
}

/// Dropping the loop drops its tasks' futures (and what they hold).
#[test]
fn dropping_the_loop_drops_task_futures() {
    let token = Rc::new(());
    let mut lp = EventLoop::with_virtual_clock();
    let t = token.clone();
    lp.spawn(async move {
        let _held = t;
        time::sleep(ms(1000)).await;
    });
    lp.run_nowait().unwrap();
    assert_eq!(Rc::strong_count(&token), 2);
    drop(lp);
    assert_eq!(Rc::strong_count(&token), 1);
}

/// A callback that logs `name@<loop time>` (for `set_timeout`).
fn say_at(log: &Log, name: &'static str) -> impl FnMut(&mut EventLoop) + 'static {
    at(log, name)
}

/// A task that wakes itself inside a microtask checkpoint (`yield_now`)
/// runs again in that checkpoint: it is not "woken outside the loop", so it
/// does not make the next `run` drain the main body's queues first. Here
/// the main body's drain ends at a tick that fails, with a handled error:
/// the tick after it waits for the next scope to close (R10.4), which is
/// the I/O callback's, already complete when the loop first polls; Node
/// prints `caught:x io tick` (the `.tl` form of this script, on Node
/// v20.20.2). A stale wake flag, set by the yield and cleared only when a
/// checkpoint started, made `run` drain first: `caught:x tick io`.
#[test]
fn a_yield_inside_a_checkpoint_is_not_main_body_work() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    catch_into(&mut lp, &log);
    let io = lp.completion(say(&log, "io"));
    io.complete();
    let l = log.clone();
    lp.enter(move |lp| {
        lp.spawn(async {
            task::yield_now().await;
        });
        lp.next_tick(move |lp| {
            lp.queue_microtask(move |lp| {
                lp.next_tick(move |lp| {
                    lp.next_tick(|_| Err::<(), _>("x"));
                    lp.next_tick(say(&l, "tick"));
                });
            });
        });
    })
    .unwrap();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["caught:x", "io", "tick"]);
}

/// A loop whose last run a panic left from inside a microtask checkpoint,
/// after the checkpoint had run a task it woke (the flag that says a task
/// was woken since the last checkpoint was set, and the queue is empty):
/// task U holds a value whose drop panics; T parks, A wakes it, and T,
/// polled, aborts U, whose drop (deferred after T's poll) panics out of
/// `run`.
fn loop_unwound_after_a_wake() -> EventLoop {
    struct PanicOnDrop;
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            panic!("drop boom");
        }
    }
    let mut lp = EventLoop::with_virtual_clock();
    let u = lp.spawn(async {
        let _g = PanicOnDrop;
        std::future::pending::<()>().await;
    });
    spawn_woken_in_checkpoint(&mut lp, move || u.abort());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lp.run()));
    assert!(r.is_err(), "the drop's panic leaves run");
    assert_eq!(lp.stats().microtasks, 0);
    lp
}

/// After such a panic, the woken task it flagged counts as run: the next
/// run does not drain first as if a task had been woken outside the loop.
/// Ticks that a handled failure in a later `enter` left behind wait for
/// the next scope (after a due timer), as on a loop that never panicked,
/// whether or not an `enter` with nothing to drain came between.
#[test]
fn a_panic_out_of_a_checkpoint_leaves_no_wake_to_drain_first() {
    for (panicked, empty_enter) in [(false, false), (true, false), (true, true)] {
        let mut lp = if panicked {
            loop_unwound_after_a_wake()
        } else {
            EventLoop::with_virtual_clock()
        };
        if empty_enter {
            lp.enter(|_| {}).unwrap();
        }
        let log: Rc<RefCell<Vec<&str>>> = Rc::default();
        lp.set_uncaught_handler(|_, _| {});
        let l = log.clone();
        lp.set_timeout(1, move |_| l.borrow_mut().push("timer"));
        lp.block(5);
        let l = log.clone();
        lp.enter(move |lp| {
            lp.next_tick(|_| Err::<(), _>("t1"));
            lp.next_tick(move |_| l.borrow_mut().push("t2"));
        })
        .unwrap();
        lp.run().unwrap();
        assert_eq!(
            *log.borrow(),
            ["timer", "t2"],
            "panicked {panicked}, empty enter {empty_enter}"
        );
    }
}

/// Counts the polls of a task that waits forever.
fn pending_counting(polls: Rc<Cell<u32>>) -> impl Future<Output = ()> {
    poll_fn(move |_| {
        polls.set(polls.get() + 1);
        Poll::Pending
    })
}

/// A sleep's timer wakes the task that polled it last, and only through
/// that task's own waker: a sleep handed from one task to another wakes
/// the second; one left pending by a finished task wakes nobody, not even
/// a new task in the finished task's arena slot (the loop queues a task
/// directly only for its own waker, `Waker::will_wake`).
#[test]
fn a_sleep_wakes_the_task_that_polled_it_last() {
    let mut lp = EventLoop::with_virtual_clock();
    let log = new_log();
    type Held = Rc<RefCell<Option<Pin<Box<time::Sleep>>>>>;
    let handed: Held = Rc::default();
    let left: Held = Rc::default();
    let (h, l) = (handed.clone(), left.clone());
    // A makes both sleeps and polls them once: each stores A's waker.
    lp.spawn(async move {
        let mut a = Box::pin(time::sleep(ms(5)));
        let mut b = Box::pin(time::sleep(ms(7)));
        poll_fn(|cx| {
            assert!(a.as_mut().poll(cx).is_pending() && b.as_mut().poll(cx).is_pending());
            Poll::Ready(())
        })
        .await;
        *h.borrow_mut() = Some(a);
        *l.borrow_mut() = Some(b);
    });
    lp.run_once().unwrap();
    assert_eq!(lp.stats().tasks, 0, "A finished");
    // C, spawned first after A finished, takes A's arena slot and waits
    // forever; B takes the first sleep over.
    let c_polls = Rc::new(Cell::new(0));
    lp.spawn(pending_counting(c_polls.clone()));
    let (h, lg) = (handed.clone(), log.clone());
    lp.spawn(async move {
        let s = h.borrow_mut().take().unwrap();
        s.await;
        push(&lg, "B woke");
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["B woke"]);
    assert_eq!(lp.now(), 7, "the second sleep fired too");
    assert!(left.borrow().as_ref().unwrap().is_elapsed());
    assert_eq!(c_polls.get(), 1, "C was polled once, at its spawn");
}

/// A sleep polled inside a task with a waker that is not the task's (a
/// combinator's own) wakes that waker, not the task.
#[test]
fn a_sleep_polled_with_a_foreign_waker_inside_a_task_wakes_that_waker() {
    struct Count(std::sync::atomic::AtomicU32);
    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let count = Arc::new(Count(std::sync::atomic::AtomicU32::new(0)));
    let foreign = Waker::from(count.clone());
    let polls = Rc::new(Cell::new(0));
    let mut lp = EventLoop::with_virtual_clock();
    let p = polls.clone();
    lp.spawn(async move {
        let mut s = Box::pin(time::sleep(ms(5)));
        let mut cx = Context::from_waker(&foreign);
        assert!(s.as_mut().poll(&mut cx).is_pending());
        // Kept pending past the sleep, by a later one of its own.
        let mut own = Box::pin(time::sleep(ms(9)));
        poll_fn(|cx| {
            p.set(p.get() + 1);
            own.as_mut().poll(cx)
        })
        .await;
        assert!(s.is_elapsed());
    });
    lp.run().unwrap();
    assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(polls.get(), 2, "polled at its start and by its own sleep");
    assert_eq!(lp.now(), 9);
}

/// Lending follows the top frame: inside a task, a scope of the same loop
/// (through `with_current`) lends it again and gives it back, so the
/// task's next sleep and `with_current` work; a scope of another loop
/// entered from the task makes that loop the current one (its sleeps, its
/// `with_current`) until it returns, and work on the first loop's futures
/// inside it goes to the first loop.
#[test]
fn lending_follows_the_top_frame_across_nested_scopes() {
    let mut lp = EventLoop::with_virtual_clock();
    let log = new_log();
    let lg = log.clone();
    lp.spawn(async move {
        let inner = EventLoop::with_current(|lp| lp.scope(|| time::sleep(ms(4))));
        let mut outer = Box::pin(time::sleep(ms(2)));
        EventLoop::with_current(|lp| assert_eq!(lp.stats().timers, 2));
        let mut other = EventLoop::with_virtual_clock();
        let theirs = other.scope(|| {
            let theirs = time::sleep(ms(9));
            outer.as_mut().reset(time::Instant::now() + ms(50));
            let lent = EventLoop::with_current(|b| b.stats().timers);
            assert_eq!(lent, 1, "the other loop is the one lent");
            theirs
        });
        assert_eq!(other.stats().timers, 1, "a sleep made in its scope");
        EventLoop::with_current(|lp| assert_eq!(lp.stats().timers, 2, "inner and outer"));
        drop(theirs);
        inner.await;
        log_with_now(&lg, "inner at");
        outer.await;
        log_with_now(&lg, "outer at");
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["inner at 4", "outer at 50"]);
}

/// Logs `what` followed by the current loop's time (`"woke at 4"`), from
/// inside a task.
fn log_with_now(log: &Log, what: &str) {
    let now = EventLoop::with_current(|lp| lp.now());
    push(log, format!("{what} {now}"));
}

/// The message of a caught panic.
fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// A loop moved out of the `&mut` lent to a task (`mem::replace`) and then
/// entered is not lendable inside its own callback: `with_current` panics
/// there as in any callback, and a sleep made there is armed on that loop
/// (deferred to the callback's end), not on whatever the lent pointer now
/// holds. Swapped back, the loop runs on and the sleep fires.
#[test]
fn a_loop_moved_out_of_its_lend_is_not_lent_in_its_own_callbacks() {
    let mut lp = EventLoop::with_virtual_clock();
    let log = new_log();
    let lg = log.clone();
    lp.spawn(async move {
        let mut moved =
            EventLoop::with_current(|lp| std::mem::replace(lp, EventLoop::with_virtual_clock()));
        let made: Rc<RefCell<Option<time::Sleep>>> = Rc::default();
        let (m, l2) = (made.clone(), lg.clone());
        moved
            .enter(move |_| {
                let r = std::panic::catch_unwind(|| EventLoop::with_current(|x| x.now()));
                push(&l2, panic_message(r.unwrap_err()));
                *m.borrow_mut() = Some(time::sleep(ms(5)));
            })
            .unwrap();
        assert_eq!(moved.stats().timers, 1, "armed on the moved loop");
        EventLoop::with_current(|stand_in| {
            assert_eq!(stand_in.stats().timers, 0);
            std::mem::swap(stand_in, &mut moved);
        });
        let s = made.borrow_mut().take().unwrap();
        s.await;
        log_with_now(&lg, "slept to");
    });
    lp.run().unwrap();
    let log = log.borrow();
    assert!(log[0].contains("already lent"), "{log:?}");
    assert_eq!(log[1], "slept to 5");
}

/// Frames of loops A, B, A: inside a task of A, a scope of B, and inside
/// it a scope of A again. Each frame lends its own loop and makes its
/// sleeps there; B is lent again once A's inner frame is gone.
#[test]
fn frames_of_a_b_and_a_again() {
    let log = new_log();
    let lg = log.clone();
    let mut lp = EventLoop::with_virtual_clock();
    lp.spawn(async move {
        let mut other = EventLoop::with_virtual_clock();
        let inner = EventLoop::with_current(|a| {
            other.scope(|| {
                let b_sleep = time::sleep(ms(7));
                let a_sleep = a.scope(|| {
                    let s = time::sleep(ms(4));
                    let n = EventLoop::with_current(|a2| a2.stats().timers);
                    push(&lg, format!("A in A timers {n}"));
                    s
                });
                let n = EventLoop::with_current(|b| b.stats().timers);
                push(&lg, format!("B after A's scope timers {n}"));
                drop(b_sleep);
                a_sleep
            })
        });
        push(&lg, format!("other timers {}", other.stats().timers));
        let n = EventLoop::with_current(|a| a.stats().timers);
        push(&lg, format!("A timers {n}"));
        inner.await;
        log_with_now(&lg, "woke at");
    });
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        [
            "A in A timers 1",
            "B after A's scope timers 1",
            "other timers 0",
            "A timers 1",
            "woke at 4"
        ]
    );
}

/// A task of loop A runs loop B's `block_on`: B's task polls one of A's
/// sleeps with A's task's waker and another with its own. Back in A, A's
/// sleeps arm and fire on A, and wake A's task.
#[test]
fn a_task_running_another_loops_block_on() {
    let log = new_log();
    let lg = log.clone();
    let mut lp = EventLoop::with_virtual_clock();
    lp.spawn(async move {
        let mut a_sleep = Box::pin(time::sleep(ms(3)));
        let mut mine = Box::pin(time::sleep(ms(2)));
        let my_waker: Waker = poll_fn(|cx| Poll::Ready(cx.waker().clone())).await;
        let mut other = EventLoop::with_virtual_clock();
        let l2 = lg.clone();
        let (a_sleep, mine) = other
            .block_on(async move {
                let mut cx = Context::from_waker(&my_waker);
                assert!(mine.as_mut().poll(&mut cx).is_pending());
                poll_fn(|cx| {
                    assert!(a_sleep.as_mut().poll(cx).is_pending());
                    Poll::Ready(())
                })
                .await;
                time::sleep(ms(1)).await;
                log_with_now(&l2, "B's task done at");
                (a_sleep, mine)
            })
            .unwrap();
        let n = EventLoop::with_current(|a| a.stats().timers);
        push(&lg, format!("A timers {n}"));
        mine.await;
        log_with_now(&lg, "mine at");
        a_sleep.await;
        log_with_now(&lg, "a_sleep at");
    });
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        [
            "B's task done at 1",
            "A timers 2",
            "mine at 2",
            "a_sleep at 3"
        ]
    );
}

/// A panic unwinding out of another loop's scope inside a task leaves the
/// task's loop current and lendable: a sleep made after it arms at once,
/// on the task's loop.
#[test]
fn unwinding_out_of_another_loops_scope_inside_a_task() {
    let log = new_log();
    let lg = log.clone();
    let mut lp = EventLoop::with_virtual_clock();
    lp.spawn(async move {
        let mut other = EventLoop::with_virtual_clock();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            other.scope(|| {
                let _s = time::sleep(ms(1));
                EventLoop::with_current(|_| std::panic::resume_unwind(Box::new("inner")))
            })
        }));
        push(&lg, format!("scope: {}", panic_message(r.unwrap_err())));
        let s = time::sleep(ms(3));
        let n = EventLoop::with_current(|lp| lp.stats().timers);
        push(&lg, format!("timers {n}"));
        s.await;
        log_with_now(&lg, "woke at");
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["scope: inner", "timers 1", "woke at 3"]);
}

/// Polls nested in a poll: a task enters its own loop (through
/// `with_current`), whose scope drains a task spawned there. The inner
/// task's sleeps, the one it hands over included, wake the task that
/// polled them last.
#[test]
fn polls_nested_in_a_poll_through_enter() {
    let log = new_log();
    let lg = log.clone();
    let mut lp = EventLoop::with_virtual_clock();
    lp.spawn(async move {
        let l2 = lg.clone();
        let held: Rc<RefCell<Option<Pin<Box<time::Sleep>>>>> = Rc::default();
        let h = held.clone();
        EventLoop::with_current(|lp| {
            lp.enter(move |lp| {
                lp.spawn(async move {
                    let mut s = Box::pin(time::sleep(ms(6)));
                    poll_fn(|cx| {
                        assert!(s.as_mut().poll(cx).is_pending());
                        Poll::Ready(())
                    })
                    .await;
                    *h.borrow_mut() = Some(s);
                    time::sleep(ms(2)).await;
                    log_with_now(&l2, "inner at");
                });
            })
            .unwrap();
        });
        time::sleep(ms(4)).await;
        log_with_now(&lg, "outer at");
        let s = held.borrow_mut().take().unwrap();
        s.await;
        log_with_now(&lg, "handed at");
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["inner at 2", "outer at 4", "handed at 6"]);
}

/// A task's panic payload comes back whole from `JoinError::into_panic`,
/// to be resumed with `resume_unwind` as tokio code does; a clone of the
/// error shares it (the first taker gets it, later ones the message); an
/// aborted task's error has none.
#[test]
fn into_panic_returns_the_tasks_own_payload() {
    #[derive(Debug, PartialEq)]
    struct Custom(u32);
    let mut lp = EventLoop::with_virtual_clock();
    let h = lp.spawn(async { std::panic::panic_any(Custom(9)) });
    let e = lp.block_on(h).unwrap().unwrap_err();
    assert!(e.is_panic());
    assert_eq!(
        e.panic_message().as_deref(),
        Some("panic with a non-string payload")
    );
    let copy = e.clone();
    assert_eq!(e.into_panic().downcast_ref::<Custom>(), Some(&Custom(9)));
    let again = copy.into_panic();
    assert_eq!(
        again.downcast_ref::<String>().map(String::as_str),
        Some("panic with a non-string payload")
    );

    let n = std::hint::black_box(3);
    let h = lp.spawn(async move { panic!("formatted {n}") });
    let e = lp.block_on(h).unwrap().unwrap_err();
    let resumed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        std::panic::resume_unwind(e.into_panic())
    }))
    .unwrap_err();
    assert_eq!(
        resumed.downcast_ref::<String>().map(String::as_str),
        Some("formatted 3")
    );

    let h = lp.spawn(std::future::pending::<()>());
    h.abort();
    let e = lp.block_on(h).unwrap().unwrap_err();
    let e = e.try_into_panic().unwrap_err();
    assert!(e.is_cancelled());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| e.into_panic()));
    assert!(r.is_err(), "into_panic of an abort panics, as tokio's");
}

/// A `JoinError` converts into an `io::Error` (kind `Other`, tokio's), so
/// `handle.await?` works in a function returning `io::Result`, and the
/// `JoinError` comes back out by downcasting.
#[test]
fn a_join_error_is_an_io_error_for_question_mark() {
    async fn both(
        ok: task::JoinHandle<u32>,
        aborted: task::JoinHandle<u32>,
    ) -> std::io::Result<u32> {
        let a = ok.await?;
        let b = aborted.await?;
        Ok(a + b)
    }
    let mut lp = EventLoop::with_virtual_clock();
    let ok = lp.spawn(async { 2 });
    let aborted = lp.spawn(std::future::pending::<u32>());
    let id = aborted.id();
    aborted.abort();
    let e = lp.block_on(both(ok, aborted)).unwrap().unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::Other);
    let join: JoinError = e.downcast().unwrap();
    assert!(join.is_cancelled());
    assert_eq!(join.id(), id);
}
