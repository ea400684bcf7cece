//! `task::AbortHandle`: aborting a task without owning its output, with
//! its join handle there, dropped, or in a `JoinSet`; for tasks made at
//! once and for those a callback spawned (made by their first-poll
//! microtask).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use timerloop::task::{self, AbortHandle, JoinSet};
use timerloop::{CallbackKind, Error, EventLoop, time};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Counts its drops: a future's drop is when an abort takes effect.
struct DropFlag(Rc<Cell<u32>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

/// A task that ticks every 10 ms until aborted, counting its ticks.
fn ticker(ticks: &Rc<Cell<u32>>, dropped: &Rc<Cell<u32>>) -> impl Future<Output = ()> + 'static {
    let (t, flag) = (ticks.clone(), DropFlag(dropped.clone()));
    async move {
        let _flag = flag;
        loop {
            time::sleep(ms(10)).await;
            t.set(t.get() + 1);
        }
    }
}

#[test]
fn aborts_a_task_whose_handle_is_awaited_elsewhere() {
    let mut lp = EventLoop::with_virtual_clock();
    let (ticks, dropped) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let h = lp.spawn(ticker(&ticks, &dropped));
    let a = h.abort_handle();
    assert!(!a.is_finished());
    lp.set_timeout(25, move |_| a.abort());
    let out = lp.block_on(h).unwrap();
    assert!(out.unwrap_err().is_cancelled());
    assert_eq!((ticks.get(), dropped.get(), lp.now()), (2, 1, 25));
    assert_eq!(lp.stats().timers, 0, "the sleep's timer went with it");
}

#[test]
fn aborts_a_detached_task_and_follows_it_to_its_end() {
    let mut lp = EventLoop::with_virtual_clock();
    let (ticks, dropped) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let a = lp.spawn(ticker(&ticks, &dropped)).abort_handle();
    let b = a.clone();
    let finished_at_20 = Rc::new(Cell::new(None));
    let f = finished_at_20.clone();
    lp.set_timeout(20, move |_| f.set(Some(b.is_finished())));
    let c = a.clone();
    lp.set_timeout(45, move |_| c.abort());
    lp.run().unwrap();
    assert_eq!(finished_at_20.get(), Some(false), "it ran on, detached");
    assert!(a.is_finished());
    assert_eq!((ticks.get(), dropped.get(), lp.now()), (4, 1, 45));
    assert_eq!(lp.stats().tasks, 0);
}

#[test]
fn a_detached_task_that_completes_is_finished_and_abort_does_nothing() {
    let mut lp = EventLoop::with_virtual_clock();
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    let a = lp
        .spawn(async move {
            time::sleep(ms(5)).await;
            r.set(true);
        })
        .abort_handle();
    lp.run().unwrap();
    assert!(ran.get() && a.is_finished());
    a.abort(); // over: nothing to do
    lp.run().unwrap();
    assert_eq!(lp.now(), 5);
}

#[test]
fn an_abort_after_completion_leaves_the_output() {
    let mut lp = EventLoop::with_virtual_clock();
    let h = lp.spawn(async { 7 });
    let a = h.abort_handle();
    lp.run().unwrap();
    assert!(a.is_finished());
    a.abort();
    assert_eq!(lp.block_on(h).unwrap(), Ok(7));
}

#[test]
fn a_detached_panic_with_an_abort_handle_is_still_uncaught() {
    let mut lp = EventLoop::with_virtual_clock();
    let a = lp
        .spawn(async {
            time::sleep(ms(3)).await;
            panic!("nobody joins me")
        })
        .abort_handle();
    match lp.run().unwrap_err() {
        Error::Uncaught(e) => {
            assert_eq!(e.kind(), CallbackKind::Task);
            assert!(e.to_string().contains("nobody joins me"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    assert!(a.is_finished());
}

#[test]
fn a_task_can_abort_itself_through_its_handle() {
    let mut lp = EventLoop::with_virtual_clock();
    let slot: Rc<RefCell<Option<AbortHandle>>> = Rc::default();
    let s = slot.clone();
    let after = Rc::new(Cell::new(false));
    let af = after.clone();
    let h = lp.spawn(async move {
        time::sleep(ms(4)).await;
        s.borrow().as_ref().unwrap().abort();
        task::yield_now().await; // not resumed: aborted while it ran
        af.set(true);
    });
    *slot.borrow_mut() = Some(h.abort_handle());
    let out = lp.block_on(h).unwrap();
    assert!(out.unwrap_err().is_cancelled());
    lp.run().unwrap();
    assert!(!after.get());
    assert_eq!((lp.now(), lp.stats().tasks), (4, 0));
}

/// Spawned in a callback, where the loop is held: the task is made by its
/// first-poll microtask. An abort handle works before that microtask (the
/// future is dropped unpolled) and after it, with the join handle kept or
/// dropped.
#[test]
fn deferred_spawns_abort_before_and_after_they_are_made() {
    let mut lp = EventLoop::with_virtual_clock();
    let polled = Rc::new(Cell::new(0));
    let dropped = Rc::new(Cell::new(0));
    let ticks = Rc::new(Cell::new(0));
    let later: Rc<RefCell<Vec<AbortHandle>>> = Rc::default();
    let (p, d, t, l) = (
        polled.clone(),
        dropped.clone(),
        ticks.clone(),
        later.clone(),
    );
    lp.set_timeout(1, move |_| {
        // Aborted before its microtask, its handle dropped first.
        let (p1, f1) = (p.clone(), DropFlag(d.clone()));
        let h = task::spawn(async move {
            let _f = f1;
            p1.set(p1.get() + 1);
        });
        let a = h.abort_handle();
        drop(h);
        a.abort();
        // Aborted later, detached, after its microtask made it.
        let h = task::spawn(ticker(&t, &d));
        l.borrow_mut().push(h.abort_handle());
        drop(h);
    });
    let l = later.clone();
    lp.set_timeout(32, move |_| l.borrow().iter().for_each(AbortHandle::abort));
    lp.run().unwrap();
    assert_eq!(polled.get(), 0, "dropped unpolled");
    assert_eq!(dropped.get(), 2, "both futures dropped");
    assert_eq!((ticks.get(), lp.now()), (3, 32));
    assert!(later.borrow()[0].is_finished());
}

#[test]
fn join_set_spawn_returns_an_abort_handle() {
    let mut lp = EventLoop::with_virtual_clock();
    let got = lp
        .block_on(async {
            let mut set = JoinSet::new();
            let mut aborts = Vec::new();
            for i in 1..=4u64 {
                aborts.push(set.spawn(async move {
                    time::sleep(ms(i * 10)).await;
                    i
                }));
            }
            aborts[2].abort(); // the 30 ms task
            let mut got = Vec::new();
            while let Some(r) = set.join_next().await {
                got.push(r.map_err(|e| e.is_cancelled()));
            }
            // Each is over; aborting a joined task does nothing.
            assert!(aborts.iter().all(AbortHandle::is_finished));
            aborts[0].abort();
            got
        })
        .unwrap();
    assert_eq!(got, [Err(true), Ok(1), Ok(2), Ok(4)]);
    assert_eq!(lp.now(), 40);
}

#[test]
fn an_abort_handle_outlives_its_loop() {
    let mut lp = EventLoop::with_virtual_clock();
    let (ticks, dropped) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let a = lp.spawn(ticker(&ticks, &dropped)).abort_handle();
    lp.run_until(15).unwrap();
    assert!(!a.is_finished());
    drop(lp);
    assert_eq!(dropped.get(), 1, "the loop dropped the future");
    assert!(a.is_finished(), "cancelled with its loop");
    a.abort(); // nothing left to abort
    assert_eq!(ticks.get(), 1);
}

/// Schedules a timeout through `EventLoop::with_current` when dropped, as
/// a guard that hands its cleanup to the loop would.
struct CleanupOnDrop(Rc<RefCell<Vec<(&'static str, u64)>>>, &'static str);

impl Drop for CleanupOnDrop {
    fn drop(&mut self) {
        let (log, name) = (self.0.clone(), self.1);
        EventLoop::with_current(|lp| {
            lp.set_timeout(5, move |lp| log.borrow_mut().push((name, lp.now())));
        });
    }
}

/// An aborted task's future is dropped with the loop lendable, as it was
/// polled: a local's `drop` reaches the loop through `with_current`,
/// whether the abort came from a callback, another task or the task
/// itself (before, that `drop` panicked: the loop was not lent).
#[test]
fn an_aborted_tasks_locals_drop_with_the_loop_lendable() {
    let mut lp = EventLoop::with_virtual_clock();
    let log = Rc::new(RefCell::new(Vec::new()));
    let guarded = |name: &'static str| {
        let guard = CleanupOnDrop(log.clone(), name);
        async move {
            let _guard = guard;
            time::sleep(ms(1_000)).await;
        }
    };
    let by_callback = lp.spawn(guarded("callback")).abort_handle();
    lp.set_timeout(10, move |_| by_callback.abort());
    let by_task = lp.spawn(guarded("task")).abort_handle();
    lp.spawn(async move {
        time::sleep(ms(20)).await;
        by_task.abort();
    });
    let slot: Rc<RefCell<Option<AbortHandle>>> = Rc::default();
    let (s, guard) = (slot.clone(), CleanupOnDrop(log.clone(), "itself"));
    let h = lp.spawn(async move {
        let _guard = guard;
        time::sleep(ms(30)).await;
        s.borrow().as_ref().unwrap().abort();
        task::yield_now().await;
    });
    *slot.borrow_mut() = Some(h.abort_handle());
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        [("callback", 15), ("task", 25), ("itself", 35)]
    );
}

/// An abort made away from the task's loop (the loop idle) completes the
/// handle at once, so that awaiting it on another loop returns cancelled
/// instead of waiting for the first loop to run (its future is dropped
/// when that loop next runs); an abort made in the loop completes it
/// once the future is dropped.
#[test]
fn an_abort_away_from_the_loop_completes_the_handle_at_once() {
    struct Flag(Rc<Cell<bool>>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.set(true);
        }
    }
    let mut a = EventLoop::with_virtual_clock();
    let dropped = Rc::new(Cell::new(false));
    let f = Flag(dropped.clone());
    let h = a.spawn(async move {
        let _f = f;
        std::future::pending::<()>().await
    });
    a.run_until(0).unwrap();
    h.abort();
    let mut b = EventLoop::with_virtual_clock();
    b.set_timeout(1_000, |_| {}); // something refed: a wait would be long
    let got = b.block_on(h).unwrap();
    assert!(got.unwrap_err().is_cancelled());
    assert_eq!(b.now(), 0, "returned at once");
    assert!(
        !dropped.get(),
        "the future goes with its own loop's next run"
    );
    a.run().unwrap();
    assert!(dropped.get());
}

/// A waker that panics when woken.
struct PanickingWaker;

impl std::task::Wake for PanickingWaker {
    fn wake(self: std::sync::Arc<Self>) {
        panic!("the waker panicked");
    }
}

/// `JoinHandle` and `AbortHandle` cross `catch_unwind` without
/// `AssertUnwindSafe` (tokio's are `UnwindSafe` too), and a panic in the
/// middle of an operation on them, here the awaiting waker's as the abort
/// completes the task, leaves the task's state whole: afterwards both
/// handles see the task over, the join handle gives the cancellation,
/// and the loop drops the future (at its next flush) and ends as usual.
#[test]
fn handles_are_unwind_safe_and_whole_after_a_panic() {
    use std::panic::{RefUnwindSafe, UnwindSafe, catch_unwind};
    use std::pin::Pin;
    use std::task::{Context, Waker};
    fn unwind_safe<T: UnwindSafe + RefUnwindSafe>(_: &T) {}

    let dropped = Rc::new(Cell::new(0));
    let flag = DropFlag(dropped.clone());
    let mut lp = EventLoop::with_virtual_clock();
    let mut h = lp.spawn(async move {
        let _flag = flag;
        std::future::pending::<()>().await
    });
    let stop = h.abort_handle();
    unwind_safe(&h);
    unwind_safe(&stop);
    lp.run_nowait().unwrap(); // the task runs, and waits
    let waker = Waker::from(std::sync::Arc::new(PanickingWaker));
    assert!(
        Pin::new(&mut h)
            .poll(&mut Context::from_waker(&waker))
            .is_pending()
    );
    // Away from the loop, the abort completes the task at once and wakes
    // the handle's waker, which panics out of `abort`.
    let caught = catch_unwind(|| stop.abort());
    assert!(caught.is_err());
    assert!(stop.is_finished() && h.is_finished());
    let h = catch_unwind(move || h).unwrap(); // moved across: `UnwindSafe`
    assert!(lp.block_on(h).unwrap().unwrap_err().is_cancelled());
    assert_eq!(dropped.get(), 1, "the loop dropped the future");
    lp.run().unwrap();
    assert_eq!(lp.stats().tasks, 0);
}
