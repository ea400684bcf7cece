//! `task::JoinSet`: tasks joined in the order they complete, aborted when
//! the set is dropped. On the virtual clock, so every order and time is
//! exact.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use timerloop::task::JoinSet;
use timerloop::{EventLoop, task, time};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A thousand tasks sleeping pseudo-random times come out in completion
/// order: by duration, and in spawn order among equal durations (a Node
/// timer list is FIFO), each at its own virtual time.
#[test]
fn outputs_come_out_in_completion_order() {
    let mut lp = EventLoop::with_virtual_clock();
    let mut x = 12345u64;
    let durations: Vec<u64> = (0..1000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 50
        })
        .collect();
    let d = durations.clone();
    let got = lp
        .block_on(async move {
            let mut set = JoinSet::new();
            for (i, &ms_) in d.iter().enumerate() {
                set.spawn(async move {
                    time::sleep(ms(ms_)).await;
                    (i, time::Instant::now().as_millis())
                });
            }
            let mut got = Vec::new();
            while let Some(r) = set.join_next().await {
                got.push(r.unwrap());
            }
            got
        })
        .unwrap();
    let mut want: Vec<usize> = (0..durations.len()).collect();
    // sleep(0) is 1 ms, as setTimeout(0) is.
    want.sort_by_key(|&i| durations[i].max(1));
    assert_eq!(got.iter().map(|&(i, _)| i).collect::<Vec<_>>(), want);
    assert!(
        got.iter().all(|&(i, at)| at == durations[i].max(1)),
        "each task ended at its own deadline"
    );
}

/// Tasks that complete in one microtask drain (before the joining task
/// runs again) still come out in the order they completed.
#[test]
fn completions_within_one_drain_keep_their_order() {
    let mut lp = EventLoop::with_virtual_clock();
    let got = lp
        .block_on(async {
            let mut set = JoinSet::new();
            for i in 0..5 {
                set.spawn(async move {
                    // Later tasks complete first: 4 yields none, 0 yields four.
                    for _ in 0..(4 - i) {
                        task::yield_now().await;
                    }
                    i
                });
            }
            // One look registers every entry's waker; then several
            // complete in one stretch of the microtask queue, before this
            // task runs again.
            let pending = std::future::poll_fn(|cx| {
                std::task::Poll::Ready(set.poll_join_next(cx).is_pending())
            })
            .await;
            assert!(pending);
            let mut got = Vec::new();
            while let Some(r) = set.join_next().await {
                got.push(r.unwrap());
            }
            got
        })
        .unwrap();
    assert_eq!(got, [4, 3, 2, 1, 0]);
}

/// A panicking task and an aborted one are errors of their own; the
/// others' outputs still come, and a held set reports no uncaught error.
#[test]
fn failures_are_join_errors_and_the_rest_complete() {
    let mut lp = EventLoop::with_virtual_clock();
    let (oks, panics, cancels) = lp
        .block_on(async {
            let mut set = JoinSet::new();
            set.spawn(async {
                time::sleep(ms(5)).await;
                1
            });
            set.spawn(async {
                time::sleep(ms(3)).await;
                panic!("task failed")
            });
            set.spawn(async {
                time::sleep(ms(10)).await;
                3
            });
            let mut oks = Vec::new();
            let (mut panics, mut cancels) = (Vec::new(), 0);
            while let Some(r) = set.join_next().await {
                match r {
                    Ok(v) => {
                        oks.push(v);
                        if v == 1 {
                            set.spawn(std::future::pending::<u32>());
                            set.abort_all();
                        }
                    }
                    Err(e) if e.is_panic() => panics.push(e.panic_message().unwrap()),
                    Err(e) => cancels += e.is_cancelled() as usize,
                }
            }
            (oks, panics, cancels)
        })
        .unwrap();
    assert_eq!(oks, [1]);
    assert_eq!(panics, ["task failed"]);
    assert_eq!(cancels, 2, "the 10 ms task and the pending one, aborted");
    assert_eq!(lp.now(), 5, "the aborted 10 ms sleep did not run");
}

/// Dropping the set aborts its tasks: their timers go with their futures,
/// so the loop ends at once, and none of them runs on.
#[test]
fn dropping_the_set_aborts_its_tasks() {
    let mut lp = EventLoop::with_virtual_clock();
    let ran = Rc::new(Cell::new(0));
    {
        let mut set = JoinSet::new();
        for i in 0..10u64 {
            let r = ran.clone();
            set.spawn_on(
                async move {
                    time::sleep(ms(10 + i)).await;
                    r.set(r.get() + 1);
                },
                &mut lp,
            );
        }
        lp.run_until(5).unwrap();
        assert_eq!(set.len(), 10);
    }
    lp.run().unwrap();
    assert_eq!((ran.get(), lp.now()), (0, 5));
    assert_eq!(lp.stats().tasks, 0);
}

/// `join_next` is cancel-safe: a timeout around it loses no output, and
/// the next `join_next` returns it.
#[test]
fn join_next_under_a_timeout_loses_nothing() {
    let mut lp = EventLoop::with_virtual_clock();
    let got = lp
        .block_on(async {
            let mut set = JoinSet::new();
            set.spawn(async {
                time::sleep(ms(20)).await;
                "late"
            });
            let first = time::timeout(ms(5), set.join_next()).await;
            assert!(first.is_err(), "nothing done at 5 ms");
            let second = set.join_next().await;
            (second, time::Instant::now().as_millis())
        })
        .unwrap();
    assert_eq!(got, (Some(Ok("late")), 20));
}

/// `detach_all` lets the tasks run on; `shutdown` aborts and waits, and
/// leaves the set empty and usable.
#[test]
fn detach_and_shutdown() {
    let mut lp = EventLoop::with_virtual_clock();
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    lp.block_on(async move {
        let mut set = JoinSet::new();
        let l2 = l.clone();
        set.spawn(async move {
            time::sleep(ms(10)).await;
            l2.borrow_mut().push("detached ran");
        });
        set.detach_all();
        assert!(set.is_empty());
        let l3 = l.clone();
        set.spawn(async move {
            time::sleep(ms(5)).await;
            l3.borrow_mut().push("shut down task ran");
        });
        set.shutdown().await;
        assert!(set.is_empty());
        set.spawn(async { time::sleep(ms(1)).await });
        assert!(set.join_next().await.unwrap().is_ok());
        time::sleep(ms(20)).await;
    })
    .unwrap();
    assert_eq!(*log.borrow(), ["detached ran"]);
}

/// A task detached from its set by `detach_all` that panics is an
/// unhandled rejection, as a detached task's (the set's own poll of its
/// handle, at the spawn, is not an `.await` of the program's); dropping
/// the set instead aborts it.
#[test]
fn a_detached_sets_panicking_task_is_an_unhandled_rejection() {
    let mut lp = EventLoop::with_virtual_clock();
    let r = lp.block_on(async {
        let mut set = JoinSet::new();
        set.spawn(async {
            time::sleep(ms(5)).await;
            panic!("detached boom");
        });
        set.detach_all();
        time::sleep(ms(20)).await;
    });
    let e = r.unwrap_err().into_callback_error().unwrap();
    assert_eq!(e.message(), "detached boom");
}

/// `join_all` resumes a failed task's panic, its own payload, after
/// aborting the others; the panic is the main task's, which `block_on`
/// hands back as an error. An aborted task's panic is the error's message.
#[test]
fn join_all_panics_on_a_failed_task() {
    let mut lp = EventLoop::with_virtual_clock();
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    let res = lp.block_on(async move {
        let mut set = JoinSet::new();
        set.spawn(async {
            time::sleep(ms(1)).await;
            panic!("boom")
        });
        set.spawn(async move {
            time::sleep(ms(50)).await;
            r.set(true);
        });
        set.join_all().await
    });
    let err = res.unwrap_err().into_callback_error().unwrap();
    assert_eq!(err.message(), "boom", "the task's own panic, resumed");
    lp.run().unwrap();
    assert!(!ran.get(), "the other task was aborted");

    let h = lp.spawn(async {
        let mut set = JoinSet::new();
        set.spawn(async { std::panic::panic_any(vec![1u8, 2]) });
        set.join_all().await
    });
    let payload = lp.block_on(h).unwrap().unwrap_err().into_panic();
    assert_eq!(payload.downcast_ref::<Vec<u8>>(), Some(&vec![1, 2]));

    let aborted = Rc::new(Cell::new(None));
    let id = aborted.clone();
    let h = lp.spawn(async move {
        let mut set = JoinSet::new();
        let a = set.spawn(std::future::pending::<()>());
        id.set(Some(a.id()));
        a.abort();
        set.join_all().await
    });
    let err = lp.block_on(h).unwrap().unwrap_err();
    let id = aborted.get().unwrap();
    assert_eq!(
        err.panic_message(),
        Some(format!("JoinSet::join_all: task {id} was cancelled"))
    );
}

/// Tasks spawned into the set from a callback (with `spawn_on`) and from
/// tasks (with `spawn`) keep the order tasks spawned alone have: the first
/// poll is a microtask queued at the spawn.
#[test]
fn a_set_keeps_the_order_of_spawn() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut lp = EventLoop::with_virtual_clock();
    let set = Rc::new(RefCell::new(JoinSet::new()));
    let (s, l) = (set.clone(), log.clone());
    lp.set_timeout(1, move |lp| {
        let l1 = l.clone();
        s.borrow_mut()
            .spawn_on(async move { l1.borrow_mut().push("set task") }, lp);
        let l2 = l.clone();
        lp.queue_microtask(move |_| l2.borrow_mut().push("microtask"));
        let l3 = l.clone();
        lp.spawn(async move { l3.borrow_mut().push("lone task") });
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["set task", "microtask", "lone task"]);
    assert_eq!(set.borrow().len(), 1);
    let mut set = Rc::try_unwrap(set).ok().unwrap().into_inner();
    let n = lp
        .block_on(async move {
            let mut n = 0;
            while set.join_next().await.is_some() {
                n += 1;
            }
            task::yield_now().await;
            n
        })
        .unwrap();
    assert_eq!(n, 1);
}

/// Completion order holds for tasks that complete before any join, and
/// between a task the set was waiting on and one it had not looked at
/// yet (tokio's order: each handle wakes the set at its completion).
#[test]
fn completion_order_without_a_join_waiting() {
    let mut lp = EventLoop::with_virtual_clock();
    let mut set = JoinSet::new();
    for ms_ in [30u64, 10, 20] {
        set.spawn_on(
            async move {
                time::sleep(ms(ms_)).await;
                ms_
            },
            &mut lp,
        );
    }
    lp.run().unwrap(); // all three complete, nobody joining
    let mut order = Vec::new();
    while let Some(r) = set.try_join_next() {
        order.push(r.unwrap());
    }
    assert_eq!(order, [10, 20, 30]);

    let got = lp
        .block_on(async {
            let mut set = JoinSet::new();
            set.spawn(async {
                time::sleep(ms(5)).await;
                "watched, done at +5"
            });
            // The set looks at the first task; the second comes later.
            assert!(
                std::future::poll_fn(|cx| std::task::Poll::Ready(
                    set.poll_join_next(cx).is_pending()
                ))
                .await
            );
            set.spawn(async {
                time::sleep(ms(10)).await;
                "unwatched, done at +10"
            });
            time::sleep(ms(20)).await;
            let a = set.join_next().await.unwrap().unwrap();
            let b = set.join_next().await.unwrap().unwrap();
            [a, b]
        })
        .unwrap();
    assert_eq!(got, ["watched, done at +5", "unwatched, done at +10"]);
}

/// A set is `Unpin` whatever its output type, as tokio's is (a pinned
/// `join_next` future borrows it; nothing in it is pinned).
#[test]
fn a_set_is_unpin_for_any_output() {
    fn unpin<T: Unpin>() {}
    unpin::<JoinSet<std::marker::PhantomPinned>>();
}

/// Every task has an `Id`, the same through its handle, its abort handle,
/// its error, `task::id()` inside it and `join_next_with_id`; ids count up
/// in spawn order, deferred spawns (from callbacks) included.
#[test]
fn ids_name_tasks_everywhere() {
    use timerloop::task::{self, Id};
    let mut lp = EventLoop::with_virtual_clock();
    type Seen = Rc<RefCell<Vec<(Id, Option<Id>)>>>;
    let seen: Seen = Rc::default();
    let s = seen.clone();
    lp.set_timeout(1, move |_| {
        assert_eq!(task::try_id(), None, "a callback is not a task");
        let s2 = s.clone();
        let h = task::spawn(async move { task::id() });
        let id = h.id();
        task::spawn(async move {
            let inner = h.await.unwrap();
            s2.borrow_mut().push((id, Some(inner)));
        });
    });
    let out = lp
        .block_on(async {
            let me = task::id();
            let mut set = JoinSet::new();
            let a = set.spawn(async {
                time::sleep(ms(20)).await;
                "a"
            });
            let b = set.spawn(async {
                time::sleep(ms(5)).await;
                panic!("b")
            });
            let c = set.spawn(std::future::pending::<&str>());
            let (ia, ib, ic) = (a.id(), b.id(), c.id());
            assert!(me < ia && ia < ib && ib < ic);
            c.abort();
            let mut got = Vec::new();
            while let Some(r) = set.join_next_with_id().await {
                got.push(match r {
                    Ok((id, v)) => (id, v.to_owned()),
                    Err(e) if e.is_panic() => (e.id(), "panicked".to_owned()),
                    Err(e) => (e.id(), format!("{e}")),
                });
            }
            assert_eq!(
                got,
                [
                    (ic, format!("task {ic} was cancelled")),
                    (ib, "panicked".to_owned()),
                    (ia, "a".to_owned()),
                ]
            );
            me
        })
        .unwrap();
    lp.run().unwrap();
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1);
    let (id, inner) = seen[0];
    assert_eq!(Some(id), inner, "the deferred task saw its handle's id");
    assert!(id > out, "spawned after the main task");
    assert_eq!(format!("{:?}", out), format!("Id({out})"));
}

/// As tokio's: `shutdown` and awaiting an aborted task return once the
/// tasks' futures are dropped, so what they held is released by then: a
/// semaphore's permits are back and a listener's address is free at
/// once. (Before, the handles completed in `abort`, and the futures were
/// dropped only when the awaiting task's poll returned.)
#[test]
fn what_aborted_tasks_held_is_released_when_awaiting_them_returns() {
    use std::sync::Arc;
    use timerloop::net::TcpListener;
    use timerloop::sync::Semaphore;
    let mut lp = EventLoop::with_virtual_clock();
    lp.block_on(async {
        let sem = Arc::new(Semaphore::new(2));
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let mut set = JoinSet::new();
        let s = sem.clone();
        set.spawn(async move {
            let _p = s.acquire_owned(1).await;
            loop {
                let _ = l.accept().await;
            }
        });
        time::immediate().await;
        assert!(sem.try_acquire(2).is_none(), "the task holds a permit");
        set.shutdown().await;
        assert!(set.is_empty());
        assert!(sem.try_acquire(2).is_some(), "the permit is back");
        drop(TcpListener::bind(addr).await.expect("the address is free"));

        // One handle, aborted and awaited in the same task.
        let s = sem.clone();
        let h = task::spawn(async move {
            let _p = s.acquire_owned(2).await;
            std::future::pending::<()>().await
        });
        time::immediate().await;
        assert!(sem.try_acquire(1).is_none());
        h.abort();
        assert!(!h.is_finished());
        assert!(h.await.unwrap_err().is_cancelled());
        assert!(sem.try_acquire(2).is_some(), "the permits are back");
    })
    .unwrap();
}
