//! One `sync::Semaphore` shared by loops on four threads: Go's rules hold
//! across threads (FIFO in the order acquires queued, whatever thread they
//! queued from; a large request at the head blocks smaller ones behind it),
//! a release on one thread grants and wakes a waiter on another, a queued
//! acquire keeps its own loop alive until a permit comes from elsewhere,
//! and nothing is lost. Real clock, every loop on its own thread.
//!
//! No test relies on timing: who is granted is read synchronously after
//! each release (a grant happens inside the `release` call, under the
//! semaphore's lock, so `available()` right after it says how many tokens
//! were granted) and confirmed by the granted thread's own report. Every
//! wait for another thread is bounded ([`LIMIT`]), so a lost wake or a
//! loop that never returns fails the test instead of hanging it.
//!
//! (`tests/semaphore.rs` has the random four-thread hammer, Go's
//! `TestWeighted`; these are the deterministic scenarios.)

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::task::Poll;
use std::thread::JoinHandle;
use std::time::Duration;

use timerloop::sync::Semaphore;
use timerloop::{EventLoop, time};

/// How long the main thread waits for another thread's report: generous,
/// since it is only reached when something is lost or hangs.
const LIMIT: Duration = Duration::from_secs(30);

/// What the loop threads tell the main thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// The acquire of thread `.0` was polled once and is pending: it is in
    /// the semaphore's queue (the first poll queues it under the lock).
    Queued(usize),
    /// The first poll of thread `.0`'s acquire completed it: it did not
    /// queue (a test expecting `Queued` fails on this at once).
    NotQueued(usize),
    /// Thread `.0`'s acquire completed: its task holds the tokens.
    Granted(usize),
    /// Thread `.0` ended (its loop returned).
    Ended(usize),
    /// Thread `.0` panicked (its message is on stderr).
    Panicked(usize),
}

/// The main thread's end of the events: [`Event::Ended`] is recorded as
/// it comes (a thread may end while the main thread waits for another's
/// event), [`Event::Panicked`] fails the test at once, every other event
/// is returned.
struct Reports {
    rx: Receiver<Event>,
    ended: Vec<bool>,
}

impl Reports {
    fn new(rx: Receiver<Event>, threads: usize) -> Reports {
        Reports {
            rx,
            ended: vec![false; threads],
        }
    }

    /// The next event other than `Ended`, failing the test after
    /// [`LIMIT`].
    fn next(&mut self, waiting_for: &str) -> Event {
        loop {
            match self.rx.recv_timeout(LIMIT) {
                Ok(Event::Ended(k)) => self.ended[k] = true,
                Ok(Event::Panicked(k)) => panic!("thread {k} panicked"),
                Ok(e) => return e,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "no event in {LIMIT:?} while waiting for {waiting_for}: a lost wake or a hang"
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("every thread is gone while waiting for {waiting_for}")
                }
            }
        }
    }

    /// Whether thread `k` has ended (as far as the events received tell).
    fn has_ended(&mut self, k: usize) -> bool {
        while let Ok(e) = self.rx.try_recv() {
            match e {
                Event::Ended(j) => self.ended[j] = true,
                other => panic!("unexpected {other:?}"),
            }
        }
        self.ended[k]
    }

    /// Waits (bounded) until every thread in `threads` has ended, then
    /// joins them, re-raising a thread's panic. Any other event fails the
    /// test: every other event was expected earlier.
    fn join_all(mut self, threads: Vec<JoinHandle<()>>) {
        while let Some(k) = self.ended.iter().position(|e| !e) {
            match self.rx.recv_timeout(LIMIT) {
                // A panic is re-raised by the join below, with its message.
                Ok(Event::Ended(j) | Event::Panicked(j)) => self.ended[j] = true,
                Ok(other) => panic!("unexpected {other:?} while waiting for the threads to end"),
                Err(_) => panic!("thread {k} did not end in {LIMIT:?}: its loop hangs"),
            }
        }
        for t in threads {
            if let Err(payload) = t.join() {
                std::panic::resume_unwind(payload);
            }
        }
    }
}

/// Sends [`Event::Ended`] when dropped at the end of a thread's closure,
/// [`Event::Panicked`] when dropped while it unwinds, so the main thread
/// never waits [`LIMIT`] for a thread that already died.
struct EndGuard(usize, Sender<Event>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        let e = if std::thread::panicking() {
            Event::Panicked(self.0)
        } else {
            Event::Ended(self.0)
        };
        let _ = self.1.send(e);
    }
}

/// Spawns thread `id`, which reports how it ends.
fn spawn_thread(
    id: usize,
    events: &Sender<Event>,
    f: impl FnOnce() + Send + 'static,
) -> JoinHandle<()> {
    let guard = EndGuard(id, events.clone());
    std::thread::spawn(move || {
        let _guard = guard;
        f();
    })
}

/// Awaits `f`, reporting after its first poll whether that poll left it
/// pending (`Queued`) or completed it (`NotQueued`).
async fn report_first_poll<F: Future + Unpin>(
    id: usize,
    events: Sender<Event>,
    mut f: F,
) -> F::Output {
    let mut first = true;
    poll_fn(move |cx| {
        let r = Pin::new(&mut f).poll(cx);
        if std::mem::take(&mut first) {
            let e = if r.is_pending() {
                Event::Queued(id)
            } else {
                Event::NotQueued(id)
            };
            events.send(e).unwrap();
        }
        r
    })
    .await
}

/// The waiter count, read from the semaphore's `Debug` output (the format
/// `tests/semaphore.rs` pins): a cross-check that an acquire really queued.
fn waiting(sem: &Semaphore) -> usize {
    let s = format!("{sem:?}");
    let (_, rest) = s.split_once("waiting: ").expect("Debug shows the waiters");
    rest.trim_end_matches(" }").parse().unwrap()
}

/// FIFO across threads, with no barging. The main thread holds all 4
/// tokens. Four threads, each with its own loop whose only work is one
/// task, acquire in an order that is not their thread order (2, 0, 3, 1):
/// each is told to start only after the one before it is known to be in
/// the queue. The weights, in queue order, are 3, 1, 2, 1. Then the main
/// thread releases a token or two at a time and checks, after each
/// release, exactly which waiters it granted:
///
/// ```text
/// queue [3 (thread 2)] [1 (thread 0)] [2 (thread 3)] [1 (thread 1)]
/// release 1, 1  -> 2 free: nobody (the head wants 3; 1 and 2 would fit)
/// release 1     -> thread 2 granted 3 (0 free)
/// release 1     -> thread 0 granted 1 (0 free)
/// release 1     -> 1 free: nobody (the head wants 2; the 1 behind would fit)
/// release 2     -> thread 3 granted 2 and thread 1 granted 1: one release
///                  wakes loops on two threads (0 free)
/// release 4     -> 4 free: nothing lost
/// ```
///
/// Each granted task forgets its permit, so the main thread gives every
/// token back by hand and the count is exact at every step.
#[test]
fn fifo_across_threads_in_queue_order_and_no_barging() {
    const SIZE: u64 = 4;
    // (thread, weight), in the order the acquires queue.
    const ORDER: [(usize, u64); 4] = [(2, 3), (0, 1), (3, 2), (1, 1)];
    let sem = Arc::new(Semaphore::new(SIZE));
    sem.try_acquire(SIZE).unwrap().forget();
    let (events, rx) = mpsc::channel();
    let mut go = Vec::new();
    let mut threads = Vec::new();
    for k in 0..ORDER.len() {
        let weight = ORDER.iter().find(|(t, _)| *t == k).unwrap().1;
        let (go_tx, go_rx) = mpsc::channel::<()>();
        go.push(go_tx);
        let (sem, ev) = (sem.clone(), events.clone());
        threads.push(spawn_thread(k, &events, move || {
            go_rx.recv().expect("told to start");
            let mut lp = EventLoop::new();
            let got = lp.block_on(async move {
                let permit = report_first_poll(k, ev.clone(), sem.acquire(weight)).await;
                permit.forget();
                ev.send(Event::Granted(k)).unwrap();
            });
            got.expect("the acquire completes and the loop returns");
            assert!(!lp.is_alive(), "a completed acquire keeps nothing alive");
        }));
    }
    drop(events);
    let mut reports = Reports::new(rx, ORDER.len());

    // Queue them one by one, in ORDER.
    for (i, &(k, _)) in ORDER.iter().enumerate() {
        go[k].send(()).unwrap();
        assert_eq!(reports.next("an acquire to queue"), Event::Queued(k));
        assert_eq!(waiting(&sem), i + 1, "thread {k}'s acquire is queued");
    }
    assert_eq!(sem.available(), 0);

    // Each step: (tokens released, free tokens right after, threads
    // granted by that release).
    let steps: [(u64, u64, &[usize]); 6] = [
        (1, 1, &[]),
        (1, 2, &[]),
        (1, 0, &[2]),
        (1, 0, &[0]),
        (1, 1, &[]),
        (2, 0, &[1, 3]),
    ];
    for (step, &(n, free, granted)) in steps.iter().enumerate() {
        sem.release(n).unwrap();
        // The grant happened inside `release`: the count tells already
        // how many tokens went to waiters.
        assert_eq!(
            sem.available(),
            free,
            "step {step}: release {n} should grant exactly threads {granted:?}"
        );
        if free > 0 {
            assert!(
                sem.try_acquire(1).is_none(),
                "step {step}: tokens are free, but someone waits: no barging"
            );
        }
        let mut reported: Vec<usize> = granted
            .iter()
            .map(|_| match reports.next("a granted acquire to report") {
                Event::Granted(k) => k,
                other => panic!("step {step}: unexpected {other:?}"),
            })
            .collect();
        reported.sort_unstable();
        assert_eq!(reported, granted, "step {step}: granted threads");
    }
    assert_eq!(waiting(&sem), 0);
    reports.join_all(threads);
    sem.release(SIZE).unwrap();
    assert_eq!(sem.available(), SIZE, "every token is back");
}

/// The keep-alive across threads: four loops, each on its own thread, each
/// with one spawned task and nothing else, run with `run()` (not
/// `block_on`). The tasks queue on a semaphore of 2 that the main thread
/// holds entirely, weights 1, 2, 1, 2: their queued acquires are all that
/// keeps the four loops running. While the main thread holds the tokens,
/// no loop returns. Then it releases them: the permits pass from thread to
/// thread (each task holds its permit across a 2 ms sleep on its own loop,
/// then drops it, granting waiters on other threads), every task
/// completes, and every `run()` returns (a completed acquire keeps nothing
/// alive). Each thread checks that its `run()` returned only once its task
/// had completed.
#[test]
fn waiting_acquires_keep_their_loops_alive_until_other_threads_release() {
    const THREADS: usize = 4;
    let sem = Arc::new(Semaphore::new(2));
    let held = sem.clone().try_acquire_owned(2).unwrap();
    let (events, rx) = mpsc::channel();
    let threads: Vec<_> = (0..THREADS)
        .map(|k| {
            let (sem, ev) = (sem.clone(), events.clone());
            spawn_thread(k, &events, move || {
                let mut lp = EventLoop::new();
                let done = Arc::new(AtomicBool::new(false));
                let d = done.clone();
                let task = lp.spawn(async move {
                    let acquire = sem.acquire_owned(1 + k as u64 % 2);
                    let permit = report_first_poll(k, ev.clone(), acquire).await;
                    ev.send(Event::Granted(k)).unwrap();
                    time::sleep(Duration::from_millis(2)).await;
                    drop(permit); // grants waiters on other threads
                    d.store(true, Ordering::SeqCst);
                });
                lp.run().unwrap();
                // The waiting acquire was the loop's only work: run() may
                // return only once the task is done.
                assert!(
                    done.load(Ordering::SeqCst) && task.is_finished(),
                    "thread {k}: run() returned while its task still waited"
                );
                assert_eq!(lp.stats().tasks, 0);
                assert!(!lp.is_alive());
            })
        })
        .collect();
    drop(events);
    let mut reports = Reports::new(rx, THREADS);

    for _ in 0..THREADS {
        match reports.next("the acquires to queue") {
            Event::Queued(_) => {}
            other => panic!("{other:?} while the main thread holds every token"),
        }
    }
    assert_eq!(waiting(&sem), THREADS);
    // Give a loop that wrongly returned the time to say so (if it did not
    // take this long, its own assertion still fails the test).
    std::thread::sleep(Duration::from_millis(20));
    for k in 0..THREADS {
        assert!(
            !reports.has_ended(k),
            "loop {k} returned while its task waited"
        );
    }

    drop(held);
    let mut granted: Vec<usize> = (0..THREADS)
        .map(|_| match reports.next("the tasks to be granted") {
            Event::Granted(k) => k,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    granted.sort_unstable();
    assert_eq!(granted, [0, 1, 2, 3], "every acquire completed, once");
    reports.join_all(threads);
    assert_eq!(sem.available(), 2, "nothing lost");
}

/// A cancel on one thread grants a waiter on another (the cross-thread
/// form of golang/go#37852). Semaphore of 2, the main thread holds 1.
/// Thread 0 queues an acquire of 2 (the head); thread 1 queues an acquire
/// of 1 behind it: it would fit, but waits (no barging). Thread 0's task
/// races its acquire against a second semaphore the main thread holds, its
/// cancel signal; the main thread releases that, thread 0 drops its
/// acquire, and that drop, on thread 0, grants thread 1's acquire and
/// wakes thread 1's loop. The main thread releases nothing on the first
/// semaphore until thread 1 reports its grant.
#[test]
fn dropping_the_head_on_one_thread_grants_the_waiter_behind_it_on_another() {
    let sem = Arc::new(Semaphore::new(2));
    sem.try_acquire(1).unwrap().forget();
    let cancel = Arc::new(Semaphore::new(1));
    let cancel_held = cancel.clone().try_acquire_owned(1).unwrap();
    let (events, rx) = mpsc::channel();
    let (go1_tx, go1_rx) = mpsc::channel::<()>();

    let (s, c, ev) = (sem.clone(), cancel.clone(), events.clone());
    let head = spawn_thread(0, &events, move || {
        let mut lp = EventLoop::new();
        let cancelled = lp.block_on(async move {
            let mut acquire = s.acquire(2);
            let mut first = Some(ev);
            let mut stop = c.acquire(1);
            poll_fn(|cx| {
                if let Poll::Ready(p) = Pin::new(&mut acquire).poll(cx) {
                    p.forget();
                    return Poll::Ready(false);
                }
                if let Some(ev) = first.take() {
                    ev.send(Event::Queued(0)).unwrap();
                }
                Pin::new(&mut stop).poll(cx).map(|_permit| true)
            })
            .await
            // `acquire` is dropped here, on thread 0: the cancel.
        });
        assert!(cancelled.unwrap(), "the head was cancelled, never granted");
    });
    let (s, ev) = (sem.clone(), events.clone());
    let behind = spawn_thread(1, &events, move || {
        go1_rx.recv().expect("told to start");
        let mut lp = EventLoop::new();
        lp.block_on(async move {
            let permit = report_first_poll(1, ev.clone(), s.acquire(1)).await;
            permit.forget();
            ev.send(Event::Granted(1)).unwrap();
        })
        .unwrap();
    });
    drop(events);
    let mut reports = Reports::new(rx, 2);

    assert_eq!(reports.next("the head to queue"), Event::Queued(0));
    go1_tx.send(()).unwrap();
    assert_eq!(reports.next("the small one to queue"), Event::Queued(1));
    assert_eq!(waiting(&sem), 2);
    assert_eq!(sem.available(), 1, "1 is free, but the head wants 2");

    drop(cancel_held); // thread 0 gives up
    assert_eq!(reports.next("the grant behind the head"), Event::Granted(1));
    reports.join_all(vec![head, behind]);
    assert_eq!(waiting(&sem), 0);
    assert_eq!(
        sem.available(),
        0,
        "1 held by the main thread, 1 by thread 1"
    );
    sem.release(2).unwrap();
    assert_eq!(sem.available(), 2);
    assert_eq!(cancel.available(), 1);
}
