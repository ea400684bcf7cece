//! Adversarial review (review39) of three changes: `task::AbortHandle`,
//! `JoinError::into_panic`/`try_into_panic` (and `JoinSet::join_all`
//! resuming a payload), and the readiness API of `timerloop::net`.
//! Tests that could hang run in a thread with a deadline, so a hang is a
//! failure, not a stuck run.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::io::{self, ErrorKind, Read, Write};
use std::pin::pin;
use std::rc::Rc;
use std::sync::mpsc;
use std::task::Poll;
use std::time::{Duration, Instant};

use timerloop::net::{Interest, TcpListener, TcpStream, UdpSocket};
use timerloop::task::{self, AbortHandle, JoinError, JoinSet};
use timerloop::{CallbackKind, Error, EventLoop, time};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Runs `f` on its own thread and fails if it does not end within
/// `secs` seconds (the thread is left behind: the test binary exits).
fn deadline<R: Send + 'static>(secs: u64, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(r)) => r,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("hung: not done within {secs} s"),
    }
}

/// Counts its drops.
struct DropFlag(Rc<Cell<u32>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

// ---------------------------------------------------------------------
// AbortHandle
// ---------------------------------------------------------------------

/// Autoref probe: whether a type is `Send`/`Sync`, without a compile
/// failure.
struct Probe<T>(std::marker::PhantomData<T>);
trait NotSend {
    fn is_send(&self) -> bool {
        false
    }
}
impl<T> NotSend for Probe<T> {}
impl<T: Send> Probe<T> {
    #[allow(dead_code)]
    fn is_send(&self) -> bool {
        true
    }
}
trait NotSync {
    fn is_sync(&self) -> bool {
        false
    }
}
impl<T> NotSync for Probe<T> {}
impl<T: Sync> Probe<T> {
    #[allow(dead_code)]
    fn is_sync(&self) -> bool {
        true
    }
}

#[test]
fn abort_handle_is_not_send_nor_sync_and_join_error_is_both() {
    assert!(!Probe::<AbortHandle>(Default::default()).is_send());
    assert!(!Probe::<AbortHandle>(Default::default()).is_sync());
    assert!(Probe::<JoinError>(Default::default()).is_send());
    assert!(Probe::<JoinError>(Default::default()).is_sync());
    // The probe works: a Send type says so.
    assert!(Probe::<u32>(Default::default()).is_send());
}

/// An abort from the main body, before the loop first runs: the task's
/// first poll must not run (its future is dropped unpolled).
#[test]
fn an_abort_before_the_first_poll_runs_nothing() {
    let mut lp = EventLoop::with_virtual_clock();
    let ran = Rc::new(Cell::new(0));
    let dropped = Rc::new(Cell::new(0));
    let (r, d) = (ran.clone(), DropFlag(dropped.clone()));
    let h = lp.spawn(async move {
        let _d = d;
        r.set(r.get() + 1);
    });
    h.abort();
    assert!(h.is_finished());
    // Through a detached task's abort handle too.
    let (r, d) = (ran.clone(), DropFlag(dropped.clone()));
    let a = lp
        .spawn(async move {
            let _d = d;
            r.set(r.get() + 1);
        })
        .abort_handle();
    a.abort();
    assert!(a.is_finished());
    lp.run().unwrap();
    assert_eq!((ran.get(), dropped.get()), (0, 2));
    assert!(lp.block_on(h).unwrap().unwrap_err().is_cancelled());
    assert_eq!(lp.stats().tasks, 0);
}

/// An abort from a callback of a task that is queued (woken) but not yet
/// polled: it is not resumed.
#[test]
fn an_abort_of_a_woken_task_from_a_callback_does_not_resume_it() {
    let mut lp = EventLoop::with_virtual_clock();
    let resumed = Rc::new(Cell::new(false));
    let r = resumed.clone();
    let h = lp.spawn(async move {
        time::sleep(ms(5)).await;
        r.set(true);
    });
    let a = h.abort_handle();
    drop(h);
    // Same due time, created after the sleep: runs after the sleep's timer
    // woke the task (its poll is a microtask after that timer's callback,
    // so before this one: a task woken by a timer resumes before the next
    // timer callback). Use a tick-queued abort instead, inside the sleep's
    // own timer turn, by a timer due earlier that re-arms nothing.
    lp.set_timeout(5, move |_| a.abort());
    lp.run().unwrap();
    // Either order is Node-consistent; what must hold: no double drop,
    // no panic, and the task is gone.
    let _ = resumed.get();
    assert_eq!(lp.stats().tasks, 0);
}

/// The JoinHandle's output holds an abort handle of its own task, and one
/// of another task, and that task's JoinHandle: dropping the outer handle
/// drops them all with no RefCell re-borrow, and frees every state.
#[test]
fn an_output_holding_abort_handles_of_itself_and_others_drops_cleanly() {
    let mut lp = EventLoop::with_virtual_clock();
    let own: Rc<RefCell<Option<AbortHandle>>> = Rc::default();
    let other = lp.spawn(std::future::pending::<()>());
    let other_abort = other.abort_handle();
    let o = own.clone();
    let h = lp.spawn(async move {
        task::yield_now().await;
        let mine = o.borrow_mut().take().unwrap();
        (mine, other_abort, other)
    });
    *own.borrow_mut() = Some(h.abort_handle());
    lp.run_until(0).unwrap();
    assert!(h.is_finished());
    drop(h); // drops (own abort handle, other's abort handle, other's handle)
    assert_eq!(lp.stats().tasks, 1, "the pending task runs on, detached");
    // Same, with the handle keeping an extra abort handle alive so the
    // state stays (the `attached = false` path).
    let own: Rc<RefCell<Option<AbortHandle>>> = Rc::default();
    let o = own.clone();
    let h = lp.spawn(async move { o.borrow_mut().take().unwrap() });
    *own.borrow_mut() = Some(h.abort_handle());
    let keep = h.abort_handle();
    lp.run_until(0).unwrap();
    drop(h);
    assert!(keep.is_finished());
    keep.abort();
    drop(keep);
    lp.run().unwrap_or(());
}

/// A task's future whose drop aborts itself (through an abort handle it
/// holds), another task, and a task spawned in the drop: at an abort, at
/// the end of the loop, and while the loop is dropped.
#[test]
fn a_future_whose_drop_aborts_tasks() {
    struct AbortOnDrop(Vec<AbortHandle>, Rc<Cell<u32>>);
    impl Drop for AbortOnDrop {
        fn drop(&mut self) {
            for a in &self.0 {
                a.abort();
                assert!(a.is_finished());
            }
            let h = task::spawn(std::future::pending::<()>());
            h.abort_handle().abort();
            self.1.set(self.1.get() + 1);
        }
    }
    for drop_loop in [false, true] {
        let mut lp = EventLoop::with_virtual_clock();
        let drops = Rc::new(Cell::new(0));
        let victim_dropped = Rc::new(Cell::new(0));
        let vd = DropFlag(victim_dropped.clone());
        let victim = lp.spawn(async move {
            let _vd = vd;
            std::future::pending::<()>().await
        });
        let slot: Rc<RefCell<Option<AbortOnDrop>>> = Rc::default();
        let s = slot.clone();
        let h = lp.spawn(async move {
            let _guard = s.borrow_mut().take().unwrap();
            std::future::pending::<()>().await
        });
        *slot.borrow_mut() = Some(AbortOnDrop(
            vec![h.abort_handle(), victim.abort_handle()],
            drops.clone(),
        ));
        lp.run_until(1).unwrap();
        if drop_loop {
            drop(lp);
        } else {
            h.abort();
            lp.run().unwrap();
            assert_eq!(lp.stats().tasks, 0);
        }
        assert_eq!((drops.get(), victim_dropped.get()), (1, 1));
        assert!(h.is_finished() && victim.is_finished());
    }
}

/// An abort handle used after its loop is dropped: no panic, finished,
/// the join handle cancelled; a clone made after works too.
#[test]
fn abort_handles_after_the_loop_is_dropped() {
    let mut lp = EventLoop::with_virtual_clock();
    let h = lp.spawn(std::future::pending::<u8>());
    let a = h.abort_handle();
    let detached = lp.spawn(std::future::pending::<u8>()).abort_handle();
    drop(lp);
    a.abort();
    detached.abort();
    let b = a.clone();
    drop(a);
    assert!(b.is_finished() && detached.is_finished());
    let mut other = EventLoop::with_virtual_clock();
    assert!(other.block_on(h).unwrap().unwrap_err().is_cancelled());
    drop(b);
    drop(detached);
}

/// Deferred spawns (from a callback): abort before the microtask with the
/// handle kept, dropped, or only an abort handle left; abort after, with
/// the clones dropped in every order. The future is dropped exactly once,
/// polled only when it was not aborted first.
#[test]
fn deferred_spawn_abort_orders() {
    for case in 0..6 {
        let mut lp = EventLoop::with_virtual_clock();
        let polled = Rc::new(Cell::new(0));
        let dropped = Rc::new(Cell::new(0));
        let kept: Rc<RefCell<Vec<AbortHandle>>> = Rc::default();
        let handle: Rc<RefCell<Option<task::JoinHandle<()>>>> = Rc::default();
        let (p, d, k, hs) = (
            polled.clone(),
            dropped.clone(),
            kept.clone(),
            handle.clone(),
        );
        lp.set_timeout(1, move |_| {
            let flag = DropFlag(d.clone());
            let p = p.clone();
            let h = task::spawn(async move {
                let _f = flag;
                p.set(p.get() + 1);
                std::future::pending::<()>().await
            });
            let a = h.abort_handle();
            let b = a.clone();
            match case {
                0 => {
                    a.abort();
                    *hs.borrow_mut() = Some(h);
                }
                1 => {
                    b.abort();
                    drop(h);
                }
                2 => {
                    drop(h);
                    drop(a);
                    b.abort();
                    k.borrow_mut().push(b);
                    return;
                }
                _ => {
                    *hs.borrow_mut() = Some(h);
                }
            }
            k.borrow_mut().push(a);
            k.borrow_mut().push(b);
        });
        lp.run_until(1).unwrap();
        match case {
            0..=2 => assert_eq!((polled.get(), dropped.get()), (0, 1), "case {case}"),
            _ => {
                assert_eq!((polled.get(), dropped.get()), (1, 0), "case {case}");
                match case {
                    3 => {
                        kept.borrow()[1].abort();
                        drop(handle.borrow_mut().take());
                    }
                    4 => {
                        drop(handle.borrow_mut().take());
                        kept.borrow_mut().remove(0);
                        kept.borrow()[0].abort();
                    }
                    _ => {
                        kept.borrow_mut().clear();
                        handle.borrow().as_ref().unwrap().abort();
                    }
                }
                lp.run_until(1).unwrap();
                assert_eq!((polled.get(), dropped.get()), (1, 1), "case {case}");
            }
        }
        assert!(kept.borrow().iter().all(|a| a.is_finished()));
        if let Some(h) = handle.borrow_mut().take() {
            assert!(h.is_finished());
            assert!(lp.block_on(h).unwrap().unwrap_err().is_cancelled());
        }
        kept.borrow_mut().clear();
        assert_eq!(lp.stats().tasks, 0, "case {case}");
    }
}

/// A deferred spawn whose loop is dropped before its microtask: the abort
/// handle sees it finished and aborting it does nothing; the handle is
/// cancelled.
#[test]
fn a_deferred_spawn_dropped_with_its_loop_unrun() {
    let mut lp = EventLoop::with_virtual_clock();
    let (h, a) = lp.scope(|| {
        EventLoop::with_current(|_| {
            let h = task::spawn(async { 5 });
            let a = h.abort_handle();
            (h, a)
        })
    });
    assert!(!a.is_finished());
    drop(lp);
    assert!(a.is_finished());
    a.abort();
    let mut other = EventLoop::with_virtual_clock();
    assert!(other.block_on(h).unwrap().unwrap_err().is_cancelled());
}

/// A detached task that panics while two abort handles exist: exactly one
/// uncaught error, both handles finished, aborting after does nothing.
#[test]
fn a_detached_panic_with_abort_clones_is_uncaught_exactly_once() {
    let mut lp = EventLoop::with_virtual_clock();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    lp.set_uncaught_handler(move |_, e| s.borrow_mut().push((e.kind(), e.message())));
    let h = lp.spawn(async {
        time::sleep(ms(2)).await;
        panic!("once")
    });
    let a = h.abort_handle();
    let b = a.clone();
    drop(h);
    // And a deferred one.
    let kept: Rc<RefCell<Vec<AbortHandle>>> = Rc::default();
    let k = kept.clone();
    lp.set_timeout(1, move |_| {
        let h = task::spawn(async { panic!("deferred once") });
        k.borrow_mut().push(h.abort_handle());
    });
    lp.run().unwrap();
    let seen = seen.borrow().clone();
    assert_eq!(
        seen,
        [
            (CallbackKind::Task, "deferred once".to_owned()),
            (CallbackKind::Task, "once".to_owned())
        ]
    );
    assert!(a.is_finished() && b.is_finished() && kept.borrow()[0].is_finished());
    a.abort();
    kept.borrow()[0].abort();
    lp.run().unwrap();
}

/// `is_finished` on every path: pending, completed, panicked, aborted,
/// aborted while being polled, loop dropped.
#[test]
fn is_finished_on_every_path() {
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_uncaught_handler(|_, _| {});
    let pending = lp.spawn(std::future::pending::<()>()).abort_handle();
    let done = lp.spawn(async {}).abort_handle();
    let panicked = lp.spawn(async { panic!("x") }).abort_handle();
    let slow = lp.spawn(async { time::sleep(ms(10)).await }).abort_handle();
    let slot: Rc<RefCell<Option<AbortHandle>>> = Rc::default();
    let s = slot.clone();
    let self_abort = lp.spawn(async move {
        let me = s.borrow_mut().take().unwrap();
        me.abort();
        assert!(me.is_finished(), "finished as soon as abort returns");
        task::yield_now().await;
        unreachable!("not resumed");
    });
    *slot.borrow_mut() = Some(self_abort.abort_handle());
    let self_abort = {
        let a = self_abort.abort_handle();
        drop(self_abort);
        a
    };
    assert!(![&pending, &done, &panicked, &slow, &self_abort]
        .iter()
        .any(|a| a.is_finished()));
    lp.run_until(0).unwrap();
    assert!(!pending.is_finished() && !slow.is_finished());
    assert!(done.is_finished() && panicked.is_finished() && self_abort.is_finished());
    slow.abort();
    assert!(slow.is_finished());
    lp.run().unwrap();
    assert!(!pending.is_finished());
    drop(lp);
    assert!(pending.is_finished());
}

/// JoinSet abort handles after `detach_all` (still abort the detached
/// task), after `abort_all` + join, after `shutdown`, after the set is
/// dropped, and after `join_all`.
#[test]
fn join_set_abort_handles_after_detach_abort_shutdown_drop() {
    let mut lp = EventLoop::with_virtual_clock();
    let ticks = Rc::new(Cell::new(0));
    let t = ticks.clone();
    let got = lp
        .block_on(async move {
            let mut set = JoinSet::new();
            let a = set.spawn(async move {
                loop {
                    time::sleep(ms(10)).await;
                    t.set(t.get() + 1);
                }
            });
            set.detach_all();
            assert!(set.is_empty());
            time::sleep(ms(25)).await;
            a.abort();
            assert!(a.is_finished());
            time::sleep(ms(50)).await;

            let mut set = JoinSet::new();
            let b = set.spawn(std::future::pending::<()>());
            let c = set.spawn(async {});
            set.abort_all();
            assert!(b.is_finished() && c.is_finished());
            let mut n = 0;
            while let Some(r) = set.join_next().await {
                assert!(r.unwrap_err().is_cancelled(), "c aborted before its poll");
                n += 1;
            }
            b.abort();

            let mut set = JoinSet::new();
            let d = set.spawn(std::future::pending::<()>());
            set.shutdown().await;
            assert!(d.is_finished());

            let mut set = JoinSet::new();
            let e = set.spawn(std::future::pending::<()>());
            drop(set);
            assert!(e.is_finished());

            let mut set = JoinSet::new();
            let f = set.spawn(async { 1 });
            let f2 = f.clone();
            assert_eq!(set.join_all().await, [1]);
            assert!(f.is_finished() && f2.is_finished());
            f2.abort();
            n
        })
        .unwrap();
    assert_eq!(got, 2);
    assert_eq!(ticks.get(), 2);
    lp.run().unwrap();
    assert_eq!(lp.stats().tasks, 0);
}

/// JoinSet::spawn from a callback (deferred): its abort handle aborts
/// the task before its first poll; join_next reports it cancelled.
#[test]
fn join_set_deferred_spawn_abort_handle() {
    let mut lp = EventLoop::with_virtual_clock();
    let set = Rc::new(RefCell::new(JoinSet::new()));
    let polled = Rc::new(Cell::new(false));
    let (s, p) = (set.clone(), polled.clone());
    lp.set_timeout(1, move |_| {
        let p = p.clone();
        let a = s.borrow_mut().spawn(async move {
            p.set(true);
            3
        });
        a.abort();
        let b = s.borrow_mut().spawn(async { 4 });
        drop(b);
    });
    lp.run().unwrap();
    assert!(!polled.get());
    let mut set = set.borrow_mut();
    let mut outs = Vec::new();
    while let Some(r) = set.try_join_next() {
        outs.push(r.map_err(|e| e.is_cancelled()));
    }
    assert_eq!(outs, [Err(true), Ok(4)]);
}

// ---------------------------------------------------------------------
// Panic payloads
// ---------------------------------------------------------------------

thread_local! {
    static SPAWNED_RAN: Cell<bool> = const { Cell::new(false) };
    static HELD_ABORTS: RefCell<Vec<AbortHandle>> = const { RefCell::new(Vec::new()) };
}

/// A panic payload whose drop spawns a task on the loop (a payload is
/// `Send`, but its drop runs on the loop's thread, where `task::spawn`
/// works).
struct SpawnOnDrop;

impl Drop for SpawnOnDrop {
    fn drop(&mut self) {
        drop(task::spawn(async { SPAWNED_RAN.with(|r| r.set(true)) }));
    }
}

/// A detached task panics with a payload whose drop spawns a task: the
/// loop reports the panic and the spawn works (the payload must not be
/// dropped while the join states are borrowed).
#[test]
fn a_detached_panic_payload_whose_drop_spawns() {
    deadline(20, || {
        let mut lp = EventLoop::with_virtual_clock();
        let seen = Rc::new(RefCell::new(Vec::new()));
        let s = seen.clone();
        lp.set_uncaught_handler(move |_, e| s.borrow_mut().push(e.message()));
        drop(lp.spawn(async { std::panic::panic_any(SpawnOnDrop) }));
        lp.run().unwrap();
        assert_eq!(*seen.borrow(), ["panic with a non-string payload"]);
        assert!(
            SPAWNED_RAN.with(|r| r.get()),
            "the task spawned by the payload's drop ran"
        );
    });
}

/// A payload whose drop drops abort handles kept in a thread-local: the
/// handles' drops must work (and so must the tasks they abort).
#[test]
fn a_detached_panic_payload_whose_drop_drops_abort_handles() {
    struct DropAborts;
    impl Drop for DropAborts {
        fn drop(&mut self) {
            HELD_ABORTS.with(|h| {
                for a in h.borrow().iter() {
                    a.abort();
                }
                h.borrow_mut().clear()
            });
        }
    }
    deadline(20, || {
        let mut lp = EventLoop::with_virtual_clock();
        lp.set_uncaught_handler(|_, _| {});
        let victim = lp.spawn(std::future::pending::<()>());
        HELD_ABORTS.with(|h| h.borrow_mut().push(victim.abort_handle()));
        drop(lp.spawn(async { std::panic::panic_any(DropAborts) }));
        lp.run().unwrap();
        assert!(HELD_ABORTS.with(|h| h.borrow().is_empty()));
        assert!(victim.is_finished(), "aborted by the payload's drop");
        assert_eq!(lp.stats().tasks, 0);
    });
}

/// A payload whose drop panics: dropped unread with its JoinError, its
/// clones, or its JoinHandle; on a detached task; on an aborted task.
/// Nothing aborts the process and the failure is reported.
#[test]
fn a_payload_whose_drop_panics() {
    struct PanicOnDrop;
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            panic!("payload drop panics");
        }
    }
    let mut lp = EventLoop::with_virtual_clock();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    lp.set_uncaught_handler(move |_, e| s.borrow_mut().push(e.message()));
    // Awaited: the error, cloned, dropped.
    let h = lp.spawn(async { std::panic::panic_any(PanicOnDrop) });
    let err = lp.block_on(h).unwrap().unwrap_err();
    assert!(err.is_panic());
    let c = err.clone();
    drop(err);
    drop(c);
    // Unread: the handle dropped with the error in it.
    let h = lp.spawn(async { std::panic::panic_any(PanicOnDrop) });
    lp.run().unwrap();
    assert!(h.is_finished());
    drop(h);
    // Detached.
    drop(lp.spawn(async { std::panic::panic_any(PanicOnDrop) }));
    // Detached, with an abort handle.
    let a = lp.spawn(async { std::panic::panic_any(PanicOnDrop) }).abort_handle();
    // Aborts itself then panics.
    let slot: Rc<RefCell<Option<AbortHandle>>> = Rc::default();
    let sl = slot.clone();
    let h = lp.spawn(async move {
        sl.borrow().as_ref().unwrap().abort();
        std::panic::panic_any(PanicOnDrop)
    });
    *slot.borrow_mut() = Some(h.abort_handle());
    lp.run().unwrap();
    assert_eq!(seen.borrow().len(), 2, "{:?}", seen.borrow());
    assert!(a.is_finished());
    assert!(lp.block_on(h).unwrap().unwrap_err().is_cancelled());
    // into_panic hands the payload out: its drop is the caller's.
    let h = lp.spawn(async { std::panic::panic_any(PanicOnDrop) });
    let p = lp.block_on(h).unwrap().unwrap_err().into_panic();
    assert!(p.is::<PanicOnDrop>());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(p)));
    assert!(r.is_err());
}

/// A JoinError's clones on several threads: exactly one gets the payload,
/// the others the message as a String.
#[test]
fn into_panic_clones_across_threads() {
    let mut lp = EventLoop::with_virtual_clock();
    let h = lp.spawn(async { std::panic::panic_any(99u64) });
    let err = lp.block_on(h).unwrap().unwrap_err();
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let e = err.clone();
            std::thread::spawn(move || {
                let p = e.into_panic();
                if let Some(v) = p.downcast_ref::<u64>() {
                    (1, *v)
                } else {
                    assert_eq!(
                        p.downcast_ref::<String>().map(String::as_str),
                        Some("panic with a non-string payload")
                    );
                    (0, 0)
                }
            })
        })
        .collect();
    let mut got: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    got.push(match err.try_into_panic().unwrap().downcast::<u64>() {
        Ok(v) => (1, *v),
        Err(_) => (0, 0),
    });
    let n: u32 = got.iter().map(|g| g.0).sum();
    assert_eq!(n, 1, "{got:?}");
    assert!(got.contains(&(1, 99)));
}

/// join_all inside nested tasks: an inner task's payload comes out of the
/// outermost join as itself, through two join_alls; an aborted task makes
/// join_all panic with the cancel message, and aborts the rest.
#[test]
fn join_all_nested_resumes_the_payload() {
    let mut lp = EventLoop::with_virtual_clock();
    let h = lp.spawn(async {
        let mut outer = JoinSet::new();
        outer.spawn(async {
            let mut inner = JoinSet::new();
            inner.spawn(async {
                time::sleep(ms(5)).await;
                std::panic::panic_any(7i16)
            });
            inner.spawn(async { 1i16 });
            inner.join_all().await
        });
        outer.spawn(async { vec![2i16] });
        outer.join_all().await
    });
    let err = lp.block_on(h).unwrap().unwrap_err();
    assert_eq!(err.into_panic().downcast_ref::<i16>(), Some(&7));

    let left = Rc::new(Cell::new(0));
    let l = DropFlag(left.clone());
    let h = lp.spawn(async move {
        let mut set = JoinSet::new();
        let a = set.spawn(async { time::sleep(ms(1)).await });
        set.spawn(async move {
            let _l = l;
            std::future::pending::<()>().await
        });
        a.abort();
        set.join_all().await
    });
    let err = lp.block_on(h).unwrap().unwrap_err();
    assert!(err.panic_message().unwrap().contains("aborted"), "{err}");
    lp.run().unwrap();
    assert_eq!(left.get(), 1, "the rest were aborted");
    assert_eq!(lp.stats().tasks, 0);
}

#[allow(dead_code)]
fn unused(_: Error, _: Instant, _: &mut dyn Read, _: &mut dyn Write) {}

#[allow(dead_code)]
async fn unused_async() -> io::Result<()> {
    let _ = (ErrorKind::Other, Interest::READABLE);
    let _: Option<(TcpListener, TcpStream, UdpSocket)> = None;
    let _ = poll_fn(|_| Poll::Ready(())).await;
    let _ = pin!(async {});
    Ok(())
}

#[allow(dead_code)]
fn unused_fut<F: Future>(_: F) {}
