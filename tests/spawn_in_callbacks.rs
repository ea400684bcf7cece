//! `task::spawn` where the loop is held (inside a callback, which has it
//! as its `&mut EventLoop`, or inside `EventLoop::with_current`): the task
//! is made by its first-poll microtask, queued at the spawn, so it keeps
//! exactly the order of `EventLoop::spawn`; its handle can be awaited,
//! aborted or dropped before that poll. Virtual clock.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use timerloop::task::{self, JoinHandle, JoinSet};
use timerloop::{CallbackKind, Error, EventLoop, time};

mod common;
use common::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The same callback with `task::spawn` and with `lp.spawn` logs the same
/// order: the task's first poll is a microtask queued where it was
/// spawned, FIFO with the callback's other microtasks, after its ticks.
#[test]
fn the_order_is_that_of_lp_spawn() {
    let run = |held: bool| {
        let log = new_log();
        let mut lp = EventLoop::with_virtual_clock();
        let l = log.clone();
        lp.set_timeout(3, move |lp| {
            lp.queue_microtask(say(&l, "m1"));
            let l1 = l.clone();
            let body = async move {
                push(&l1, "task");
                task::yield_now().await;
                push(&l1, "task again");
                time::sleep(ms(1)).await;
                push(&l1, "task slept");
            };
            if held {
                task::spawn(body);
            } else {
                lp.spawn(body);
            }
            lp.queue_microtask(say(&l, "m2"));
            lp.next_tick(say(&l, "tick"));
        });
        let l = log.clone();
        lp.set_timeout(4, move |_| push(&l, "timeout 4"));
        lp.run().unwrap();
        (log.borrow().clone(), lp.now())
    };
    let held = run(true);
    assert_eq!(held, run(false));
    assert_eq!(
        held.0,
        [
            "tick",
            "m1",
            "task",
            "m2",
            "task again",
            "timeout 4",
            "task slept"
        ]
    );
}

/// The handle of a task spawned in a callback is a handle like any:
/// awaited by another task, it gives the output, at the task's time.
#[test]
fn the_handle_gives_the_output() {
    let mut lp = EventLoop::with_virtual_clock();
    let handle: Rc<RefCell<Option<JoinHandle<u32>>>> = Rc::default();
    let h = handle.clone();
    lp.set_timeout(2, move |_| {
        *h.borrow_mut() = Some(task::spawn(async {
            time::sleep(ms(10)).await;
            42
        }));
    });
    let got = lp
        .block_on(async move {
            time::sleep(ms(5)).await;
            let h = handle.borrow_mut().take().unwrap();
            let v = h.await.unwrap();
            (v, time::Instant::now().as_millis())
        })
        .unwrap();
    assert_eq!(got, (42, 12));
}

/// Aborted before its first poll (in the callback that spawned it): the
/// future is dropped unpolled, and the handle says cancelled.
#[test]
fn aborted_before_its_first_poll() {
    let mut lp = EventLoop::with_virtual_clock();
    let ran = Rc::new(Cell::new(false));
    let dropped = Rc::new(Cell::new(false));
    let handle: Rc<RefCell<Option<JoinHandle<()>>>> = Rc::default();
    let (r, d, h) = (ran.clone(), dropped.clone(), handle.clone());
    lp.set_timeout(1, move |_| {
        let guard = DropFlag(d.clone());
        let r = r.clone();
        let t = task::spawn(async move {
            let _g = guard;
            r.set(true);
        });
        t.abort();
        // Over once its microtask has dropped the future, as in tokio.
        assert!(!t.is_finished());
        *h.borrow_mut() = Some(t);
    });
    lp.run().unwrap();
    assert!(!ran.get(), "never polled");
    assert!(dropped.get(), "its future was dropped");
    let t = handle.borrow_mut().take().unwrap();
    assert!(t.is_finished());
    let err = lp.block_on(t).unwrap().unwrap_err();
    assert!(err.is_cancelled());
    assert_eq!(lp.stats().tasks, 0);
}

/// Aborted after its first poll, from a later callback: its sleep goes
/// with its future, so the loop ends at the abort, not at the sleep.
#[test]
fn aborted_after_its_first_poll() {
    let mut lp = EventLoop::with_virtual_clock();
    let handle: Rc<RefCell<Option<JoinHandle<()>>>> = Rc::default();
    let woke = Rc::new(Cell::new(false));
    let (h, w) = (handle.clone(), woke.clone());
    lp.set_timeout(1, move |_| {
        let w = w.clone();
        *h.borrow_mut() = Some(task::spawn(async move {
            time::sleep(ms(100)).await;
            w.set(true);
        }));
    });
    let h = handle.clone();
    lp.set_timeout(5, move |_| h.borrow().as_ref().unwrap().abort());
    lp.run().unwrap();
    assert!(!woke.get());
    assert_eq!((lp.now(), lp.stats().tasks, lp.stats().timers), (5, 0, 0));
}

/// Dropped before its first poll: the task runs detached, and its panic
/// is an unhandled rejection (an uncaught error of kind `Task`), as a
/// detached task's is.
#[test]
fn dropped_before_its_first_poll_runs_detached() {
    let mut lp = EventLoop::with_virtual_clock();
    let ran = Rc::new(Cell::new(0));
    let r = ran.clone();
    lp.set_timeout(1, move |_| {
        let r2 = r.clone();
        drop(task::spawn(async move {
            time::sleep(ms(2)).await;
            r2.set(r2.get() + 1);
        }));
        drop(task::spawn(async { panic!("detached and failed") }));
    });
    let err = lp.run().unwrap_err();
    match err {
        Error::Uncaught(e) => {
            assert_eq!(e.kind(), CallbackKind::Task);
            assert!(e.to_string().contains("detached and failed"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    lp.run().unwrap();
    assert_eq!((ran.get(), lp.now()), (1, 3));
}

/// A held task that panics completes its handle with the panic, and
/// nothing is reported as uncaught.
#[test]
fn a_held_task_that_panics_fails_its_handle() {
    let mut lp = EventLoop::with_virtual_clock();
    let handle: Rc<RefCell<Option<JoinHandle<()>>>> = Rc::default();
    let h = handle.clone();
    lp.set_timeout(1, move |_| {
        *h.borrow_mut() = Some(task::spawn(async { panic!("held and failed") }));
    });
    lp.run().unwrap();
    let t = handle.borrow_mut().take().unwrap();
    assert!(t.is_finished());
    let err = lp.block_on(t).unwrap().unwrap_err();
    assert_eq!(err.panic_message().as_deref(), Some("held and failed"));
}

/// Spawned inside `with_current` while the loop is not running (the loop
/// lent already): main-body work, polled first by the next run, before
/// the loop's timers. Dropping the loop instead cancels the task unrun.
#[test]
fn held_outside_a_run_is_main_body_work() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(0, move |_| push(&l, "timeout"));
    let l = log.clone();
    let h =
        lp.scope(|| EventLoop::with_current(|_lp| task::spawn(async move { push(&l, "task") })));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["task", "timeout"]);
    assert!(h.is_finished());

    let mut lp = EventLoop::with_virtual_clock();
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    let h = lp.scope(|| EventLoop::with_current(|_| task::spawn(async move { r.set(true) })));
    assert!(!h.is_finished());
    drop(lp);
    assert!(h.is_finished(), "cancelled with its loop");
    assert!(!ran.get());
}

/// `JoinSet::spawn` works in a callback too, and a thousand spawns in
/// one callback, a third dropped, a third aborted, all end: nothing is
/// left on the loop.
#[test]
fn many_in_one_callback_and_a_join_set() {
    let mut lp = EventLoop::with_virtual_clock();
    let set: Rc<RefCell<JoinSet<u32>>> = Rc::default();
    let done = Rc::new(Cell::new(0));
    let (s, d) = (set.clone(), done.clone());
    lp.set_timeout(1, move |_| {
        for i in 0..1000u32 {
            let d = d.clone();
            let t = task::spawn(async move {
                time::sleep(ms(u64::from(i % 7))).await;
                d.set(d.get() + 1);
                i
            });
            match i % 3 {
                0 => drop(t),
                1 => t.abort(),
                _ => drop(s.borrow_mut().spawn(async move { t.await.unwrap() })),
            }
        }
    });
    lp.run().unwrap();
    assert_eq!(done.get(), 334 + 333, "the dropped and the joined ran");
    assert_eq!((lp.stats().tasks, lp.stats().timers), (0, 0));
    let mut set = Rc::try_unwrap(set).ok().unwrap().into_inner();
    let mut joined = 0;
    while let Some(r) = set.try_join_next() {
        assert_eq!(r.unwrap() % 3, 2);
        joined += 1;
    }
    assert_eq!(joined, 333);
}

struct DropFlag(Rc<Cell<bool>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}
