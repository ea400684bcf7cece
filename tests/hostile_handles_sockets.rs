//! Hostile use of abort handles, panic payloads and socket readiness:
//! `task::AbortHandle` (every order of clones, drops and aborts, deferred
//! spawns, reentrant drops), `JoinError::into_panic`/`try_into_panic`
//! (payloads whose drop panics or spawns, clones across threads,
//! `JoinSet::join_all` resuming a payload), and the readiness API of
//! `timerloop::net` (shared waiters, exact streaks, loops that ignore
//! what a wait says, wakers of waits that gave up).
//! Tests that could hang run in a thread with a deadline, so a hang is a
//! failure, not a stuck run.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::io::{self, ErrorKind, Read, Write};
use std::rc::Rc;
use std::sync::mpsc;
use std::task::Poll;
use std::time::{Duration, Instant};

use timerloop::net::{Interest, TcpListener, TcpStream, UdpSocket};
use timerloop::task::{self, AbortHandle, JoinError, JoinSet};
use timerloop::{CallbackKind, EventLoop, time};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
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
    // Away from its loop: over at once (its future goes when it runs).
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

/// An abort from a callback of a task that the same callback woke (its
/// poll is queued, not run): it is not resumed, and its future is dropped
/// once.
#[test]
fn an_abort_of_a_woken_task_from_a_callback_does_not_resume_it() {
    let mut lp = EventLoop::with_virtual_clock();
    let resumed = Rc::new(Cell::new(false));
    let dropped = Rc::new(Cell::new(0));
    let waker: Rc<RefCell<Option<std::task::Waker>>> = Rc::default();
    let (r, d, w) = (resumed.clone(), DropFlag(dropped.clone()), waker.clone());
    let h = lp.spawn(async move {
        let _d = d;
        let mut first = true;
        poll_fn(|cx| {
            if first {
                first = false;
                *w.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        })
        .await;
        r.set(true);
    });
    let a = h.abort_handle();
    drop(h);
    lp.set_timeout(5, move |_| {
        waker.borrow_mut().take().unwrap().wake();
        a.abort();
    });
    lp.run().unwrap();
    assert!(!resumed.get());
    assert_eq!((dropped.get(), lp.stats().tasks), (1, 0));
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
        // Over once this poll returns and the future is dropped.
        assert!(!me.is_finished(), "not finished while its future runs");
        task::yield_now().await;
        unreachable!("not resumed");
    });
    *slot.borrow_mut() = Some(self_abort.abort_handle());
    let self_abort = {
        let a = self_abort.abort_handle();
        drop(self_abort);
        a
    };
    assert!(
        ![&pending, &done, &panicked, &slow, &self_abort]
            .iter()
            .any(|a| a.is_finished())
    );
    lp.run_until(0).unwrap();
    assert!(!pending.is_finished() && !slow.is_finished());
    assert!(done.is_finished() && panicked.is_finished() && self_abort.is_finished());
    slow.abort();
    assert!(slow.is_finished(), "away from its loop: over at once");
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
            // As tokio's: over once the loop has dropped its future.
            assert!(!a.is_finished());
            time::sleep(ms(50)).await;
            assert!(a.is_finished());

            let mut set = JoinSet::new();
            let b = set.spawn(std::future::pending::<()>());
            let c = set.spawn(async {});
            set.abort_all();
            assert!(!b.is_finished() && !c.is_finished());
            let mut n = 0;
            while let Some(r) = set.join_next().await {
                assert!(r.unwrap_err().is_cancelled(), "c aborted before its poll");
                n += 1;
            }
            assert!(b.is_finished() && c.is_finished());
            b.abort();

            let mut set = JoinSet::new();
            let d = set.spawn(std::future::pending::<()>());
            set.shutdown().await;
            assert!(d.is_finished());

            let mut set = JoinSet::new();
            let e = set.spawn(std::future::pending::<()>());
            drop(set);
            task::yield_now().await;
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
    within(20, || {
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
    within(20, || {
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
    // Unread: the handle, never polled, dropped with the error in it
    // (reported, as a detached task's panic).
    let h = lp.spawn(async { std::panic::panic_any(PanicOnDrop) });
    lp.run().unwrap();
    assert!(h.is_finished());
    drop(h);
    // Detached.
    drop(lp.spawn(async { std::panic::panic_any(PanicOnDrop) }));
    // Detached, with an abort handle.
    let a = lp
        .spawn(async { std::panic::panic_any(PanicOnDrop) })
        .abort_handle();
    // Aborts itself then panics.
    let slot: Rc<RefCell<Option<AbortHandle>>> = Rc::default();
    let sl = slot.clone();
    let h = lp.spawn(async move {
        sl.borrow().as_ref().unwrap().abort();
        std::panic::panic_any(PanicOnDrop)
    });
    *slot.borrow_mut() = Some(h.abort_handle());
    lp.run().unwrap();
    assert_eq!(seen.borrow().len(), 3, "{:?}", seen.borrow());
    assert!(a.is_finished());
    assert!(lp.block_on(h).unwrap().unwrap_err().is_cancelled());
    // into_panic hands the payload out: its drop is the caller's.
    let h = lp.spawn(async { std::panic::panic_any(PanicOnDrop) });
    let p = lp.block_on(h).unwrap().unwrap_err().into_panic();
    assert!(p.is::<PanicOnDrop>());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(p)));
    assert!(r.is_err());
}

/// A JoinError whose payload's drop panics, dropped while its holder
/// unwinds (a task that holds it panics): the nested panic is caught in
/// the drop, the process goes on, and the holder's panic is the one
/// reported.
#[test]
fn a_panicking_payload_dropped_during_unwinding() {
    struct PanicOnDrop;
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            panic!("payload drop panics");
        }
    }
    let mut lp = EventLoop::with_virtual_clock();
    let h = lp.spawn(async {
        let inner = task::spawn(async { std::panic::panic_any(PanicOnDrop) });
        let err = inner.await.unwrap_err();
        let _held = err.clone();
        panic!("outer fails holding the error");
    });
    let err = lp.block_on(h).unwrap().unwrap_err();
    assert_eq!(
        err.panic_message().as_deref(),
        Some("outer fails holding the error")
    );
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
    assert!(
        err.panic_message().unwrap().ends_with("was cancelled"),
        "{err}"
    );
    lp.run().unwrap();
    assert_eq!(left.get(), 1, "the rest were aborted");
    assert_eq!(lp.stats().tasks, 0);
}

/// A detached task's output whose drop spawns a task and drops an abort
/// handle (kept in a thread-local): dropped unread by `complete`, after
/// the states are let go of. And a task that drops its own JoinHandle in
/// its poll, then panics: uncaught, once.
#[test]
fn detached_outputs_whose_drop_reenters() {
    thread_local! {
        static RAN: Cell<bool> = const { Cell::new(false) };
        static KEPT: RefCell<Vec<AbortHandle>> = const { RefCell::new(Vec::new()) };
    }
    struct Reenter;
    impl Drop for Reenter {
        fn drop(&mut self) {
            KEPT.with(|k| k.borrow_mut().clear());
            drop(task::spawn(async { RAN.with(|r| r.set(true)) }));
        }
    }
    within(20, || {
        let mut lp = EventLoop::with_virtual_clock();
        let seen = Rc::new(Cell::new(0));
        let s = seen.clone();
        lp.set_uncaught_handler(move |_, _| s.set(s.get() + 1));
        let victim = lp.spawn(std::future::pending::<()>());
        KEPT.with(|k| k.borrow_mut().push(victim.abort_handle()));
        drop(lp.spawn(async { Reenter }));
        // With an abort handle left: the state stays, `attached` false.
        let a = lp.spawn(async { Reenter }).abort_handle();
        lp.run_until(0).unwrap();
        assert!(RAN.with(|r| r.get()));
        assert!(a.is_finished());
        // Its own handle dropped in its poll.
        let slot: Rc<RefCell<Option<task::JoinHandle<()>>>> = Rc::default();
        let sl = slot.clone();
        let h = lp.spawn(async move {
            drop(sl.borrow_mut().take());
            task::yield_now().await;
            panic!("after dropping my handle")
        });
        let ab = h.abort_handle();
        *slot.borrow_mut() = Some(h);
        lp.run_until(0).unwrap();
        assert_eq!(seen.get(), 1);
        assert!(ab.is_finished());
        drop(victim);
    });
}

/// A JoinHandle polled by hand with one waker, then another: the first
/// waker (the last reference to it) is dropped when the second replaces
/// it. A waker's drop is user code (here it spawns a task, as any code on
/// the loop's thread may): it must not run while the join states are
/// borrowed.
#[test]
fn a_replaced_join_waker_whose_drop_spawns() {
    use std::sync::Arc as SArc;
    use std::task::{Context, Wake, Waker};
    thread_local! {
        static RAN: Cell<bool> = const { Cell::new(false) };
    }
    struct SpawnWhenDropped(bool);
    impl Wake for SpawnWhenDropped {
        fn wake(self: SArc<Self>) {}
    }
    impl Drop for SpawnWhenDropped {
        fn drop(&mut self) {
            if self.0 {
                drop(task::spawn(async { RAN.with(|r| r.set(true)) }));
            }
        }
    }
    within(20, || {
        let mut lp = EventLoop::with_virtual_clock();
        let mut h = lp.spawn(std::future::pending::<()>());
        lp.scope(|| {
            let w1 = Waker::from(SArc::new(SpawnWhenDropped(true)));
            assert!(
                std::pin::Pin::new(&mut h)
                    .poll(&mut Context::from_waker(&w1))
                    .is_pending()
            );
            drop(w1); // the handle's copy is the last
            let w2 = Waker::from(SArc::new(SpawnWhenDropped(false)));
            assert!(
                std::pin::Pin::new(&mut h)
                    .poll(&mut Context::from_waker(&w2))
                    .is_pending()
            );
        });
        lp.run_until(0).unwrap();
        assert!(RAN.with(|r| r.get()));
        h.abort();
    });
}

// ---------------------------------------------------------------------
// Readiness
// ---------------------------------------------------------------------

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

mod common;
use common::*;

/// A std peer on another thread connected to a loop listener: the loop's
/// end of the connection, and the peer's thread (it runs `peer` on its
/// std stream).
async fn with_std_peer(
    peer: impl FnOnce(std::net::TcpStream) + Send + 'static,
) -> io::Result<(TcpStream, std::thread::JoinHandle<()>)> {
    let l = TcpListener::bind("127.0.0.1:0").await?;
    let addr = l.local_addr()?;
    let t = std::thread::spawn(move || {
        let s = std::net::TcpStream::connect(addr).unwrap();
        peer(s)
    });
    let (s, _) = l.accept().await?;
    Ok((s, t))
}

/// Two tasks wait `readable()` on one `Rc<UdpSocket>`: one datagram wakes
/// both; one gets it, the other `WouldBlock`s and waits again, and gets
/// the next datagram. Nobody hangs.
#[test]
fn two_udp_readers_share_the_wakes() {
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await?;
            let b = Rc::new(UdpSocket::bind("127.0.0.1:0").await?);
            a.connect(b.local_addr()?).await?;
            assert!(would_block(b.try_recv(&mut [0; 8])));
            let got = Rc::new(RefCell::new(Vec::new()));
            let blocked = Rc::new(Cell::new(0));
            let readers: Vec<_> = (0..2)
                .map(|i| {
                    let (b, got, blocked) = (b.clone(), got.clone(), blocked.clone());
                    task::spawn(async move {
                        let mut buf = [0; 8];
                        loop {
                            b.readable().await?;
                            match b.try_recv(&mut buf) {
                                Ok(n) => {
                                    got.borrow_mut().push((i, buf[..n].to_vec()));
                                    return io::Result::Ok(());
                                }
                                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                                    blocked.set(blocked.get() + 1)
                                }
                                Err(e) => return Err(e),
                            }
                        }
                    })
                })
                .collect();
            time::sleep(ms(10)).await;
            a.try_send(b"one")?;
            time::sleep(ms(30)).await;
            assert_eq!(got.borrow().len(), 1, "one datagram, one reader");
            a.try_send(b"two")?;
            for r in readers {
                r.await.unwrap()?;
            }
            let mut msgs: Vec<_> = got.borrow().iter().map(|g| g.1.clone()).collect();
            msgs.sort();
            assert_eq!(msgs, [b"one".to_vec(), b"two".to_vec()]);
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

/// Several datagrams queued, each shorter than the buffer: a short
/// datagram must not clear the readiness (more are queued, and
/// edge-triggered readiness reports none of them again).
#[test]
fn short_datagrams_do_not_lose_queued_ones() {
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await?;
            let b = UdpSocket::bind("127.0.0.1:0").await?;
            a.connect(b.local_addr()?).await?;
            for m in [&b"1"[..], b"22", b"333", b"4444"] {
                a.try_send(m)?;
            }
            time::sleep(ms(20)).await;
            let mut buf = [0; 64];
            let mut got = Vec::new();
            // recv (poll_io) for two, readable + try_recv for the rest.
            for _ in 0..2 {
                let n = b.recv(&mut buf).await?;
                got.push(buf[..n].to_vec());
            }
            while got.len() < 4 {
                b.readable().await?;
                match b.try_recv(&mut buf) {
                    Ok(n) => got.push(buf[..n].to_vec()),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            assert_eq!(got.concat(), b"1223334444");
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

/// `read()` in one task and `ready(READABLE)` (through the other owned
/// half) in another, on one connection: every byte is read, the waiter is
/// woken along, and, once the reader has drained, it waits again (it is
/// aborted at the end through its AbortHandle).
#[test]
fn readable_races_read_in_another_task() {
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let (_l, mut c, s) = connected().await?;
            let (mut r, w) = s.into_split();
            let wakes = Rc::new(Cell::new(0u32));
            let wk = wakes.clone();
            let waiter = task::spawn(async move {
                loop {
                    w.ready(Interest::READABLE).await?;
                    wk.set(wk.get() + 1);
                    time::sleep(ms(1)).await;
                }
                #[allow(unreachable_code)]
                io::Result::Ok(())
            });
            let stop = waiter.abort_handle();
            let reader = task::spawn(async move {
                let mut total = 0;
                let mut buf = [0; 3];
                while total < 100 {
                    let n = r.read(&mut buf).await?;
                    assert!(n > 0);
                    total += n;
                }
                io::Result::Ok(total)
            });
            for _ in 0..10 {
                c.write_all(&[9; 10]).await?;
                time::sleep(ms(3)).await;
            }
            assert_eq!(reader.await.unwrap()?, 100);
            assert!(wakes.get() > 0);
            stop.abort();
            assert!(waiter.await.unwrap_err().is_cancelled());
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

/// A peek shorter than its buffer leaves the readiness (the bytes are
/// still there): `readable()` is ready at once, and a read returns the
/// peeked bytes.
#[test]
fn peek_then_read_the_same_bytes() {
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let (_l, mut c, mut s) = connected().await?;
            c.write_all(b"hello").await?;
            let mut buf = [0; 16];
            let mut n = 0;
            while n < 5 {
                n = s.peek(&mut buf).await?;
                if n < 5 {
                    time::sleep(ms(1)).await;
                }
            }
            assert_eq!(&buf[..5], b"hello");
            assert!(ready_at_once(s.readable()).await.is_ready());
            let mut again = [0; 16];
            assert_eq!(s.peek(&mut again).await?, 5);
            let mut out = [0; 16];
            assert_eq!(s.read(&mut out).await?, 5);
            assert_eq!(&out[..5], b"hello");
            // Drained by a short read: the next readable waits.
            assert!(ready_at_once(s.readable()).await.is_pending());
            c.write_all(b"!").await?;
            s.readable().await?;
            assert_eq!(s.try_read(&mut out)?, 1);
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

/// EOF: bytes before the FIN are read, then `try_read` returns 0 and
/// `ready(READABLE | WRITABLE)` says READ_CLOSED (and not WRITE_CLOSED:
/// the peer's FIN closes only the read direction).
#[test]
fn eof_and_read_closed() {
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let (_l, mut c, s) = connected().await?;
            c.write_all(b"ab").await?;
            c.shutdown(std::net::Shutdown::Write)?;
            let mut buf = [0; 1];
            let mut got = Vec::new();
            loop {
                s.readable().await?;
                match s.try_read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            assert_eq!(got, b"ab");
            // A FIN the loop reported is final: READ_CLOSED from now on.
            let mut r = s.ready(Interest::READABLE | Interest::WRITABLE).await?;
            for _ in 0..50 {
                if r.is_read_closed() {
                    break;
                }
                time::sleep(ms(2)).await;
                r = s.ready(Interest::READABLE | Interest::WRITABLE).await?;
            }
            assert!(r.is_read_closed() && r.is_readable(), "{r:?}");
            assert!(!r.is_write_closed(), "{r:?}");
            assert_eq!(s.try_read(&mut buf)?, 0);
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

/// `writable()` after `try_write` filled the send buffer waits until the
/// peer (a std thread) drains, then ends.
#[test]
fn writable_waits_for_a_full_buffer_until_the_peer_drains() {
    within(20, || {
        let mut lp = EventLoop::new();
        let peer = lp
            .block_on(async {
                let (go_tx, go_rx) = mpsc::channel::<()>();
                let (s, peer) = with_std_peer(move |mut p| {
                    go_rx.recv().unwrap();
                    let mut buf = vec![0; 1 << 16];
                    while let Ok(n) = p.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                    }
                })
                .await?;
                let chunk = vec![1u8; 1 << 16];
                let mut sent = 0usize;
                loop {
                    match s.try_write(&chunk) {
                        Ok(n) => sent += n,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) => return Err(e),
                    }
                }
                assert!(sent > 0);
                assert!(ready_at_once(s.writable()).await.is_pending());
                let pending = Rc::new(Cell::new(true));
                let p = pending.clone();
                let s = Rc::new(s);
                let s2 = s.clone();
                let w = task::spawn(async move {
                    s2.writable().await?;
                    p.set(false);
                    io::Result::Ok(())
                });
                time::sleep(ms(30)).await;
                assert!(pending.get(), "writable ended with the buffer full");
                go_tx.send(()).unwrap();
                w.await.unwrap()?;
                assert!(s.try_write(b"more")? > 0);
                io::Result::Ok(peer)
            })
            .unwrap()
            .unwrap();
        drop(lp); // closes the socket: the peer reads its end
        peer.join().unwrap();
    });
}

/// Runs `reader` (a loop on the loop's end of a connection whose std peer
/// writes as fast as it can) until a 50 ms timer sets the flag it is
/// given; returns when the timer fired, in real ms since the start.
fn timer_fires_beside(
    reader: impl FnOnce(Rc<TcpStream>, Rc<Cell<bool>>) -> task::JoinHandle<io::Result<u64>>
    + Send
    + 'static,
    peer_reads: bool,
) -> (u128, u64) {
    within(20, move || {
        let mut lp = EventLoop::new();
        let out = lp
            .block_on(async move {
                let stop_peer = Arc::new(AtomicBool::new(false));
                let sp = stop_peer.clone();
                let (s, peer) = with_std_peer(move |mut p| {
                    p.set_nonblocking(false).unwrap();
                    let chunk = vec![5u8; 1 << 14];
                    let mut buf = vec![0u8; 1 << 16];
                    while !sp.load(Ordering::Relaxed) {
                        if peer_reads {
                            if p.read(&mut buf).map(|n| n == 0).unwrap_or(true) {
                                break;
                            }
                        } else if p.write_all(&chunk).is_err() {
                            break;
                        }
                    }
                })
                .await?;
                let s = Rc::new(s);
                // Let the peer get ahead.
                if !peer_reads {
                    let mut b = [0; 1];
                    while s.peek(&mut b).await? == 0 {}
                    time::sleep(ms(20)).await;
                }
                let start = Instant::now();
                let stop = Rc::new(Cell::new(false));
                let st = stop.clone();
                let timer = task::spawn(async move {
                    time::sleep(ms(50)).await;
                    st.set(true);
                    start.elapsed().as_millis()
                });
                let r = reader(s.clone(), stop);
                let fired = timer.await.unwrap();
                let ops = r.await.unwrap()?;
                stop_peer.store(true, Ordering::Relaxed);
                io::Result::Ok((fired, ops, peer))
            })
            .unwrap()
            .unwrap();
        drop(lp); // closes the socket: the peer's read or write ends
        let (fired, ops, peer) = out;
        peer.join().unwrap();
        (fired, ops)
    })
}

/// Counts a `try_` that did something; one that would block counts
/// nothing; any other error is the task's.
fn count_done(r: io::Result<usize>, ops: &mut u64) -> io::Result<()> {
    match r {
        Ok(_) => *ops += 1,
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Err(e) => return Err(e),
    }
    Ok(())
}

/// The 50 ms timer beside a starving loop fired on time (generous margin:
/// under 2 s); `what` the loop's operations, for the message.
fn fired_on_time(fired: u128, ops: u64, what: &str) {
    eprintln!("fired at {fired} ms ({ops} {what})");
    assert!(
        (40..2000).contains(&fired),
        "fired at {fired} ms ({ops} {what})"
    );
}

/// A `readable()` + `try_read` loop (one byte at a time: never a short
/// read) against a peer that is always ahead lets a 50 ms timer fire on
/// time (generous margin: under 2 s).
#[test]
fn starvation_readable_try_read() {
    let (fired, ops) = timer_fires_beside(
        |s, stop| {
            task::spawn(async move {
                let mut ops = 0;
                let mut b = [0; 1];
                while !stop.get() {
                    s.readable().await?;
                    count_done(s.try_read(&mut b), &mut ops)?;
                }
                Ok(ops)
            })
        },
        false,
    );
    fired_on_time(fired, ops, "reads");
    assert!(ops > 0);
}

/// The same with `peek` + `try_read`, and with `ready(READABLE)`.
#[test]
fn starvation_peek_and_ready() {
    let (fired, ops) = timer_fires_beside(
        |s, stop| {
            task::spawn(async move {
                let mut ops = 0;
                let mut b = [0; 1];
                while !stop.get() {
                    s.peek(&mut b).await?;
                    s.ready(Interest::READABLE).await?;
                    count_done(s.try_read(&mut b), &mut ops)?;
                }
                Ok(ops)
            })
        },
        false,
    );
    fired_on_time(fired, ops, "reads");
    assert!(ops > 0, "the loop under test ran");
}

/// A `writable()` + `try_write` loop (small writes: never short) against
/// a peer that drains as fast as it can.
#[test]
fn starvation_writable_try_write() {
    let (fired, ops) = timer_fires_beside(
        |s, stop| {
            task::spawn(async move {
                let mut ops = 0;
                while !stop.get() {
                    s.writable().await?;
                    count_done(s.try_write(&[1; 4]), &mut ops)?;
                }
                Ok(ops)
            })
        },
        true,
    );
    fired_on_time(fired, ops, "writes");
    assert!(ops > 0, "the loop under test ran");
}

/// A wait loop that does no operation in the direction it was told is
/// ready: `ready(READABLE | WRITABLE)` whose writable answer is ignored
/// (nothing to write), the peer idle. The wait ends at once every time
/// (a writable socket) and counts in no streak, so the task never
/// returns from its poll: the 50 ms timer never fires and the thread
/// hangs. tokio's `ready` spends the task's coop budget and yields every
/// 128 polls, so the same loop there is a busy loop that lets timers run.
#[test]
fn a_ready_loop_that_ignores_writable_hangs_the_loop() {
    within(10, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let (_l, _c, s) = connected().await?;
            assert!(would_block(s.try_read(&mut [0; 8])));
            let stop = Rc::new(Cell::new(false));
            let st = stop.clone();
            lp_timer(st);
            let mut spins = 0u64;
            while !stop.get() {
                let r = s.ready(Interest::READABLE | Interest::WRITABLE).await?;
                if r.is_readable() {
                    let _ = s.try_read(&mut [0; 8]);
                }
                spins += 1;
            }
            io::Result::Ok(spins)
        })
        .unwrap()
        .unwrap()
    });
}

fn lp_timer(stop: Rc<Cell<bool>>) {
    drop(task::spawn(async move {
        time::sleep(ms(50)).await;
        stop.set(true);
    }));
}

/// Interests that are neither direction, or a direction the source is not
/// registered for, fail at once on UDP and AsyncSource: never a wait.
#[test]
fn invalid_interests_fail_at_once() {
    use timerloop::net::AsyncSource;
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let u = UdpSocket::bind("127.0.0.1:0").await?;
            #[cfg(any(target_os = "linux", target_os = "android"))]
            {
                for i in [Interest::PRIORITY, Interest::PRIORITY | Interest::WRITABLE] {
                    let e = u.ready(i).await.unwrap_err();
                    assert_eq!(e.kind(), ErrorKind::InvalidInput);
                }
            }
            let r = u.ready(Interest::READABLE | Interest::WRITABLE).await?;
            assert!(r.is_writable());
            let m = mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap())?;
            let src = AsyncSource::with_interest(m, Interest::READABLE);
            let e = src.try_io(Interest::WRITABLE, |s| {
                s.send_to(b"x", "127.0.0.1:9".parse().unwrap())
            });
            assert_eq!(e.unwrap_err().kind(), ErrorKind::InvalidInput);
            let e = src.try_io(Interest::READABLE | Interest::WRITABLE, |s| {
                s.recv(&mut [0; 4])
            });
            assert_eq!(e.unwrap_err().kind(), ErrorKind::InvalidInput);
            let e = src
                .async_io(Interest::WRITABLE, |s| {
                    s.send_to(b"x", "127.0.0.1:9".parse().unwrap())
                })
                .await;
            assert_eq!(e.unwrap_err().kind(), ErrorKind::InvalidInput);
            // try_io's WouldBlock clears the readiness; an op's own error
            // other than WouldBlock does not.
            assert!(would_block(
                src.try_io(Interest::READABLE, |s| s.recv(&mut [0; 4]))
            ));
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

/// UDP after its loop is dropped: a wait ends while the direction may be
/// ready, fails once a try_ said WouldBlock; writes go on.
#[test]
fn udp_after_the_loop_is_dropped() {
    within(20, || {
        let mut a = EventLoop::new();
        let (x, y) = a
            .block_on(async {
                let x = UdpSocket::bind("127.0.0.1:0").await?;
                let y = UdpSocket::bind("127.0.0.1:0").await?;
                x.connect(y.local_addr()?).await?;
                y.connect(x.local_addr()?).await?;
                io::Result::Ok((x, y))
            })
            .unwrap()
            .unwrap();
        drop(a);
        let mut b = EventLoop::with_virtual_clock();
        let log = b
            .block_on(async move {
                let mut log = Vec::new();
                log.push(format!("{:?}", y.readable().await.map_err(|e| e.kind())));
                log.push(format!(
                    "{:?}",
                    y.try_recv(&mut [0; 4]).map_err(|e| e.kind())
                ));
                log.push(format!("{:?}", y.readable().await.map_err(|e| e.kind())));
                log.push(format!("{:?}", x.writable().await.map_err(|e| e.kind())));
                log.push(format!("{:?}", x.try_send(b"hi").map_err(|e| e.kind())));
                log.push(format!("{:?}", x.send(b"yo").await.map_err(|e| e.kind())));
                log
            })
            .unwrap();
        assert_eq!(
            log,
            [
                "Ok(())",
                "Err(WouldBlock)",
                "Err(Other)",
                "Ok(())",
                "Ok(2)",
                "Ok(2)"
            ]
        );
    });
}

/// A task waiting `readable()` is aborted (its waker stays in the
/// socket's list); another task's wait is still woken by the next
/// datagram, and a third waiter added after it too.
#[test]
fn an_aborted_waiter_does_not_take_a_wake() {
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await?;
            let b = Rc::new(UdpSocket::bind("127.0.0.1:0").await?);
            a.connect(b.local_addr()?).await?;
            assert!(would_block(b.try_recv(&mut [0; 8])));
            let b1 = b.clone();
            let first = task::spawn(async move { b1.readable().await });
            time::sleep(ms(5)).await;
            first.abort_handle().abort();
            let woke = Rc::new(AtomicUsize::new(0));
            let mut hs = Vec::new();
            for _ in 0..2 {
                let (b, w) = (b.clone(), woke.clone());
                hs.push(task::spawn(async move {
                    b.readable().await?;
                    w.fetch_add(1, Ordering::Relaxed);
                    io::Result::Ok(())
                }));
                time::sleep(ms(2)).await;
            }
            a.try_send(b"x")?;
            for h in hs {
                h.await.unwrap()?;
            }
            assert_eq!(woke.load(Ordering::Relaxed), 2);
            assert!(first.await.unwrap_err().is_cancelled());
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

/// Multicast on whatever this host offers: join a group on loopback,
/// send to it with loop on, and receive (or, where the sandbox has no
/// multicast route, an error from the join or the send, never a hang).
#[test]
fn multicast_send_and_receive_if_the_host_allows() {
    use std::net::Ipv4Addr;
    within(20, || {
        let mut lp = EventLoop::new();
        let outcome = lp
            .block_on(async {
                let group = Ipv4Addr::new(239, 255, 42, 98);
                let r = UdpSocket::bind("0.0.0.0:0").await?;
                let port = r.local_addr()?.port();
                if let Err(e) = r.join_multicast_v4(group, Ipv4Addr::LOCALHOST) {
                    return Ok(format!("join: {e}"));
                }
                let s = UdpSocket::bind("127.0.0.1:0").await?;
                s.set_multicast_loop_v4(true)?;
                if let Err(e) = s.send_to(b"mc", (group, port)).await {
                    return Ok(format!("send: {e}"));
                }
                let mut buf = [0; 8];
                match time::timeout(Duration::from_secs(2), r.recv_from(&mut buf)).await {
                    Ok(Ok((n, _))) => {
                        assert_eq!(&buf[..n], b"mc");
                        r.leave_multicast_v4(group, Ipv4Addr::LOCALHOST)?;
                        Ok("received".to_owned())
                    }
                    Ok(Err(e)) => Err(e),
                    Err(_) => Ok("no delivery within 2 s".to_owned()),
                }
            })
            .unwrap()
            .unwrap();
        eprintln!("multicast: {outcome}");
    });
}

/// The streak claim, exactly: 32 operations done at once (the readiness
/// `readable()` found when the event woke it counts as one, then 31
/// `try_read`s), then a wait in that direction yields (pending at its
/// first poll) although the socket is ready, and ends after one loop
/// turn; after 31 (30 reads) it does not. The same for 32 UDP writes.
#[test]
fn a_wait_after_32_try_operations_yields_once() {
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            for n in [30, 31] {
                let (_l, mut c, s) = connected().await?;
                let mut b = [0; 1];
                // A real wait (after a WouldBlock): the streak starts at 0.
                assert!(would_block(s.try_read(&mut b)));
                c.write_all(&[1; 200]).await?;
                s.readable().await?;
                time::sleep(ms(20)).await; // every byte in, every event seen
                for _ in 0..n {
                    assert_eq!(s.try_read(&mut b)?, 1);
                }
                let first = ready_at_once(s.readable()).await;
                assert_eq!(first.is_pending(), n == 31, "after {n} reads: {first:?}");
                s.readable().await?;
            }
            let u = UdpSocket::bind("127.0.0.1:0").await?;
            u.connect(u.local_addr()?).await?;
            for _ in 0..32 {
                u.try_send(b"x")?;
            }
            assert!(ready_at_once(u.writable()).await.is_pending());
            u.writable().await?;
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

/// `poll_recv_ready` keeps only the waker of its latest call, as tokio's
/// `poll_read_ready` does: a poll loop with a fresh waker each time (a
/// `FuturesUnordered` entry, a short-lived task waiting on a shared idle
/// socket) does not pile up the wakers of abandoned polls until the
/// socket's next event.
#[test]
fn poll_recv_ready_keeps_only_its_latest_callers_waker() {
    use std::sync::Arc as SArc;
    use std::task::{Context, Wake, Waker};
    struct Counted(SArc<AtomicUsize>);
    impl Wake for Counted {
        fn wake(self: SArc<Self>) {}
    }
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::Relaxed);
        }
    }
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let u = UdpSocket::bind("127.0.0.1:0").await?;
            assert!(would_block(u.try_recv(&mut [0; 4])));
            let live = SArc::new(AtomicUsize::new(0));
            for _ in 0..1000 {
                live.fetch_add(1, Ordering::Relaxed);
                let w = Waker::from(SArc::new(Counted(live.clone())));
                assert!(u.poll_recv_ready(&mut Context::from_waker(&w)).is_pending());
            }
            let left = live.load(Ordering::Relaxed);
            assert!(left <= 2, "{left} wakers of abandoned polls still held");
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}
