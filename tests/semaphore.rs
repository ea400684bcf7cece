//! `sync::Semaphore`: every test of Go's `x/sync/semaphore/semaphore_test.go`
//! written again for this crate (context cancellation is dropping the
//! future, `context.WithTimeout` is `time::timeout`, goroutines are tasks
//! and threads), then what Rust adds: wakes from another thread and the
//! loop kept alive meanwhile, tokio-test mock tasks polling acquires with no
//! loop at all, and a property test against a reference model of Go's
//! rules. Virtual clock unless stated.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use proptest::prelude::*;
use timerloop::sync::{Acquire, AcquireOwned, OwnedPermit, Permit, Semaphore};
use timerloop::{Error, EventLoop, task, time};
use tokio_test::task::{Spawn, spawn};
use tokio_test::{assert_pending, assert_ready};

mod common;
use common::cases;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Polls `f` once with a waker that does nothing: Go's `Acquire` with a
/// background context where it cannot block.
fn now_or_never<F: Future>(f: F) -> Option<F::Output> {
    let mut f = pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

/// A small deterministic generator (xorshift64*), so the hammer needs no
/// `rand`.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

#[test]
fn the_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Semaphore>();
    send_sync::<Permit<'static>>();
    send_sync::<OwnedPermit>();
    send::<Acquire<'static>>();
    send::<AcquireOwned>();
}

#[test]
fn debug_output() {
    let sem = Arc::new(Semaphore::new(3));
    let p = sem.try_acquire(1).unwrap();
    let mut a = spawn(sem.acquire(3));
    assert_pending!(a.poll());
    assert_eq!(
        format!("{sem:?}"),
        "Semaphore { size: 3, available: 2, waiting: 1 }"
    );
    assert_eq!(format!("{p:?}"), "Permit { n: 1 }");
    assert_eq!(format!("{:?}", *a), r#"Acquire { n: 3, state: "queued" }"#);
    let o = sem.clone().acquire_owned(4);
    assert_eq!(
        format!("{o:?}"),
        r#"AcquireOwned { n: 4, state: "not polled" }"#
    );
}

// ---------------------------------------------------------------------
// Go's semaphore_test.go

/// `TestWeighted`: a hammer. Four threads, each running its own loop with
/// four tasks, acquire random weights (0 to the size, the size included)
/// from one semaphore, hold them across a few microtask hops and now and
/// then a 1 ms sleep, and give them back; some use `try_acquire`, some
/// `acquire_owned`. Nothing may be lost, every task completes (a task
/// waiting for a permit from another thread keeps its loop alive), and the
/// weight held at once never exceeds the size. Real clock.
#[test]
fn weighted_hammer_across_four_loops_on_four_threads() {
    const SIZE: u64 = 4;
    const THREADS: u64 = 4;
    const TASKS: u64 = 4;
    const ROUNDS: u64 = 500;
    let sem = Arc::new(Semaphore::new(SIZE));
    let held = Arc::new(AtomicU64::new(0));
    let max_held = Arc::new(AtomicU64::new(0));
    let completed = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (sem, held, max_held, completed, refused) = (
                sem.clone(),
                held.clone(),
                max_held.clone(),
                completed.clone(),
                refused.clone(),
            );
            std::thread::spawn(move || {
                let mut lp = EventLoop::new();
                for k in 0..TASKS {
                    let (sem, held, max_held, completed, refused) = (
                        sem.clone(),
                        held.clone(),
                        max_held.clone(),
                        completed.clone(),
                        refused.clone(),
                    );
                    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (t * TASKS + k + 1));
                    lp.spawn(async move {
                        for _ in 0..ROUNDS {
                            let w = rng.below(SIZE + 1);
                            // Some permits are owned, some are forgotten
                            // and released by hand (`None`).
                            let permit = match rng.below(4) {
                                0 => match sem.clone().try_acquire_owned(w) {
                                    Some(p) => Some(p),
                                    None => {
                                        refused.fetch_add(1, Ordering::SeqCst);
                                        Some(sem.clone().acquire_owned(w).await)
                                    }
                                },
                                1 => Some(sem.clone().acquire_owned(w).await),
                                _ => {
                                    sem.acquire(w).await.forget();
                                    None
                                }
                            };
                            let now = held.fetch_add(w, Ordering::SeqCst) + w;
                            max_held.fetch_max(now, Ordering::SeqCst);
                            for _ in 0..rng.below(3) {
                                task::yield_now().await;
                            }
                            if rng.below(16) == 0 {
                                time::sleep(ms(1)).await;
                            }
                            held.fetch_sub(w, Ordering::SeqCst);
                            match permit {
                                Some(p) => drop(p),
                                None => sem.release(w).unwrap(),
                            }
                        }
                        completed.fetch_add(1, Ordering::SeqCst);
                    });
                }
                lp.run().unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(completed.load(Ordering::SeqCst), (THREADS * TASKS) as usize);
    assert_eq!(sem.available(), SIZE, "nothing lost");
    assert!(max_held.load(Ordering::SeqCst) <= SIZE);
    assert!(
        refused.load(Ordering::SeqCst) > 0,
        "the semaphore was contended"
    );
}

/// `TestWeightedPanic`: releasing what is not held. Go panics with
/// "semaphore: released more than held"; here it is an error, and nothing
/// changes (the count never wraps).
#[test]
fn releasing_more_than_held_is_an_error_that_changes_nothing() {
    let sem = Semaphore::new(1);
    let err = sem.release(1).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "semaphore: released more than held (1 released, 0 held without a permit)"
        ),
        "{err}"
    );
    assert_eq!(sem.available(), 1);

    let sem = Semaphore::new(5);
    sem.try_acquire(3).unwrap().forget();
    assert!(sem.release(4).is_err());
    assert_eq!(sem.available(), 2, "nothing was released");
    sem.release(3).unwrap();
    assert!(sem.release(1).is_err());
    assert_eq!(sem.available(), 5);
}

/// A live permit's tokens are its own: `release` by hand gives back only
/// forgotten permits' tokens, so a permit's tokens are never given back
/// twice (the hand release letting a third acquire in beside the permit,
/// over the size) or stranded (round 35's audit: with permits of 3 and 2
/// out of 10, a hand release of 2 and both drops left 9 available for
/// good, the first drop finding only 1 token to give back of its 3).
#[test]
fn a_live_permits_tokens_cannot_be_released_by_hand() {
    let sem = Semaphore::new(2);
    let p = sem.try_acquire(2).unwrap();
    let err = sem.release(2).unwrap_err();
    assert!(
        err.to_string()
            .contains("(2 released, 0 held without a permit)"),
        "{err}"
    );
    assert!(sem.try_acquire(1).is_none(), "nothing was released");
    drop(p);
    assert_eq!(sem.available(), 2);

    let sem = Semaphore::new(10);
    let (a, b) = (sem.try_acquire(3).unwrap(), sem.try_acquire(2).unwrap());
    sem.try_acquire(1).unwrap().forget();
    assert!(sem.release(2).is_err(), "only 1 is held without a permit");
    assert_eq!(sem.available(), 4);
    drop(b);
    drop(a);
    assert_eq!(sem.available(), 9);
    sem.release(1).unwrap();
    assert_eq!(sem.available(), 10, "every token is back");
}

/// Forgets and hand releases across threads: four threads take permits
/// (owned and borrowed), forget some and send their counts to a fifth,
/// which releases them; others are dropped, some on another thread. No
/// release is refused (each gives back only forgotten tokens), none is
/// counted twice, and every token is back at the end. The review of round
/// 35's `unowned` count asked for this beside the loom models, which race
/// two threads over a handful of steps.
#[test]
fn forgets_and_releases_across_threads_conserve_every_token() {
    const SIZE: u64 = 6;
    let sem = Arc::new(Semaphore::new(SIZE));
    let (forgotten, to_release) = std::sync::mpsc::channel::<u64>();
    let releaser = {
        let sem = sem.clone();
        std::thread::spawn(move || {
            let mut released = 0;
            for n in to_release {
                sem.release(n).expect("only forgotten tokens are released");
                released += n;
            }
            released
        })
    };
    let (dropped, to_drop) = std::sync::mpsc::channel::<OwnedPermit>();
    let dropper = std::thread::spawn(move || to_drop.into_iter().count());
    let takers: Vec<_> = (0..4u64)
        .map(|t| {
            let (sem, forgotten, dropped) = (sem.clone(), forgotten.clone(), dropped.clone());
            std::thread::spawn(move || {
                // Each thread takes 2,000 permits, whatever the others do
                // (a refused try waits its turn).
                let mut taken = 0u64;
                let mut i = t;
                while taken < 2_000 {
                    let n = 1 + i % 3;
                    let got = match i % 4 {
                        0 => sem.try_acquire(n).map(|p| {
                            p.forget();
                            forgotten.send(n).unwrap();
                        }),
                        1 => sem.clone().try_acquire_owned(n).map(|p| {
                            p.forget();
                            forgotten.send(n).unwrap();
                        }),
                        2 => sem
                            .clone()
                            .try_acquire_owned(n)
                            .map(|p| dropped.send(p).unwrap()),
                        _ => sem.try_acquire(n).map(drop),
                    };
                    match got {
                        Some(()) => {
                            taken += 1;
                            i += 1;
                        }
                        None => std::thread::yield_now(),
                    }
                }
                taken
            })
        })
        .collect();
    drop((forgotten, dropped));
    let taken: u64 = takers.into_iter().map(|t| t.join().unwrap()).sum();
    let released = releaser.join().unwrap();
    dropper.join().unwrap();
    assert!(
        taken > 100 && released > 0,
        "{taken} taken, {released} released"
    );
    assert_eq!(sem.available(), SIZE, "every token is back");
    assert!(sem.release(1).is_err(), "and none is held without a permit");
}

/// `TestWeightedTryAcquire`: `[true, false, true, false]`.
#[test]
fn try_acquire_go_sequence() {
    let sem = Semaphore::new(2);
    let mut tries = vec![];
    now_or_never(sem.acquire(1)).unwrap().forget();
    tries.push(sem.try_acquire(1).map(Permit::forget).is_some());
    tries.push(sem.try_acquire(1).map(Permit::forget).is_some());
    sem.release(2).unwrap();
    tries.push(sem.try_acquire(1).map(Permit::forget).is_some());
    now_or_never(sem.acquire(1)).unwrap().forget();
    tries.push(sem.try_acquire(1).map(Permit::forget).is_some());
    assert_eq!(tries, [true, false, true, false]);
}

/// `TestWeightedAcquire`: the same sequence with 10 ms acquire-with-timeouts
/// (`time::timeout`), on the virtual clock: the two that fail each wait
/// their full 10 ms, and a failed one leaves nothing behind.
#[test]
fn acquire_with_timeouts_go_sequence() {
    let sem = Arc::new(Semaphore::new(2));
    let mut lp = EventLoop::with_virtual_clock();
    let s = sem.clone();
    let tries = lp
        .block_on(async move {
            let try_acquire = |n| {
                let s = s.clone();
                async move {
                    time::timeout(ms(10), s.acquire(n))
                        .await
                        .map(Permit::forget)
                        .is_ok()
                }
            };
            let mut tries = vec![];
            s.acquire(1).await.forget();
            tries.push(try_acquire(1).await);
            tries.push(try_acquire(1).await);
            s.release(2).unwrap();
            tries.push(try_acquire(1).await);
            s.acquire(1).await.forget();
            tries.push(try_acquire(1).await);
            tries
        })
        .unwrap();
    assert_eq!(tries, [true, false, true, false]);
    assert_eq!(lp.now(), 20, "two timeouts elapsed");
    assert_eq!(sem.available(), 0);
    assert!(!lp.is_alive(), "the timed-out acquires keep nothing alive");
}

/// `TestWeightedDoesntBlockIfTooBig`: an acquire of more than the size
/// waits, unqueued, and six tasks that each take 1 for 1 ms go past it.
/// It keeps nothing alive: the loop ends with it still pending.
#[test]
fn a_request_larger_than_the_size_blocks_nobody() {
    const N: u64 = 2;
    let sem = Arc::new(Semaphore::new(N));
    let mut lp = EventLoop::with_virtual_clock();
    let s = sem.clone();
    let too_big = lp.spawn(async move { s.acquire(N + 1).await.forget() });
    let done = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..N * 3)
        .map(|_| {
            let (s, done) = (sem.clone(), done.clone());
            lp.spawn(async move {
                let _p = s.acquire(1).await;
                time::sleep(ms(1)).await;
                done.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    lp.run().unwrap();
    assert_eq!(done.load(Ordering::SeqCst), 6);
    assert!(workers.iter().all(|w| w.is_finished()));
    assert!(!too_big.is_finished(), "still waiting, alone");
    assert_eq!(lp.now(), 3, "two at a time, 1 ms each");
    assert_eq!(sem.available(), N);
    too_big.abort();
    lp.run().unwrap();

    // Awaited directly, it cannot settle and nothing else is left: stalled
    // (Node's exit code 13 for an unsettled top-level await).
    let s = sem.clone();
    let r = lp.block_on(async move { s.acquire(N + 1).await.forget() });
    assert!(matches!(r, Err(Error::Stalled)), "{r:?}");
    assert_eq!(sem.available(), N);
}

/// `TestLargeAcquireDoesntStarve`: N workers each hold 1 of N tokens and
/// every 1 ms give it back and take it again. An acquire of all N queues;
/// from then on each worker's re-acquire queues behind it, so it is granted
/// once all four have given theirs back (FIFO: small requests do not
/// starve a large one). Then the workers stop.
#[test]
fn a_large_acquire_does_not_starve() {
    const N: u64 = 4;
    let sem = Arc::new(Semaphore::new(N));
    let running = Arc::new(AtomicBool::new(true));
    let mut lp = EventLoop::with_virtual_clock();
    let mut workers = vec![];
    for _ in 0..N {
        let mut permit = sem.clone().try_acquire_owned(1).unwrap();
        let (s, running) = (sem.clone(), running.clone());
        workers.push(lp.spawn(async move {
            while running.load(Ordering::SeqCst) {
                time::sleep(ms(1)).await;
                drop(permit);
                permit = s.clone().acquire_owned(1).await;
            }
            drop(permit);
        }));
    }
    let s = sem.clone();
    let r = running.clone();
    let granted_at = lp
        .block_on(async move {
            let all = s.acquire(N).await;
            let at = time::Instant::now();
            r.store(false, Ordering::SeqCst);
            drop(all);
            at
        })
        .unwrap();
    lp.run().unwrap();
    assert!(workers.iter().all(|w| w.is_finished()));
    assert_eq!(lp.scope(|| granted_at.elapsed()), ms(0));
    assert_eq!(lp.now(), 1, "granted when the four gave back at 1 ms");
    assert_eq!(sem.available(), N);
}

/// `TestAllocCancelDoesntStarve` (golang/go#37852, the starvation Go
/// shipped): with 1 of 10 taken, an acquire of 10 waits at the head and an
/// acquire of 1 queues behind it (no barging). When the 10 is cancelled
/// (its 5 ms timeout), the 1 behind it fits and must be granted at once,
/// not left stranded until some unrelated release.
#[test]
fn cancelling_the_head_grants_those_behind_it() {
    let sem = Arc::new(Semaphore::new(10));
    let mut lp = EventLoop::with_virtual_clock();
    sem.try_acquire(1).unwrap().forget();
    let s = sem.clone();
    let big = lp.spawn(async move { time::timeout(ms(5), s.acquire(10)).await.is_err() });
    let s = sem.clone();
    let small = lp.block_on(async move {
        task::yield_now().await; // the big one queues first
        assert!(s.try_acquire(1).is_none(), "someone waits: no barging");
        s.acquire(1).await.forget();
        time::Instant::now()
    });
    let small_at = small.unwrap();
    assert_eq!(lp.scope(|| small_at.elapsed()), ms(0));
    assert_eq!(lp.now(), 5, "granted when the head was cancelled");
    lp.run().unwrap();
    assert!(big.is_finished());
    assert_eq!(sem.available(), 8);

    // The same with mock tasks, watching the wake.
    let sem = Semaphore::new(10);
    sem.try_acquire(1).unwrap().forget();
    let mut big = spawn(sem.acquire(10));
    assert_pending!(big.poll());
    let mut small = spawn(sem.acquire(1));
    assert_pending!(small.poll());
    assert!(!small.is_woken());
    drop(big);
    assert!(small.is_woken(), "granted when the head was dropped");
    assert_ready!(small.poll()).forget();
    assert_eq!(sem.available(), 8);
}

/// `TestWeightedAcquireCanceled` (golang/go#63615), with cancellation as
/// dropping: an acquire of 2 waits while 1 is held; it is cancelled, then
/// the 1 is released. No stale waiter may hold tokens: `try_acquire(2)`
/// succeeds. Then the race Go's fix is about: the acquire is granted and
/// dropped before it is polled (its task was cancelled at the moment of the
/// grant): it gives its tokens back, and the waiter behind it is granted.
#[test]
fn a_cancelled_acquire_holds_nothing() {
    let sem = Semaphore::new(2);
    let held = sem.try_acquire(1).unwrap();
    let mut two = spawn(sem.acquire(2));
    assert_pending!(two.poll());
    drop(two); // cancel ...
    drop(held); // ... then release
    let p = sem.try_acquire(2).expect("no stale waiter holds tokens");
    drop(p);

    // Granted, then dropped unpolled.
    let held = sem.try_acquire(2).unwrap();
    let mut two = spawn(sem.acquire(2));
    assert_pending!(two.poll());
    let mut one = spawn(sem.acquire(1));
    assert_pending!(one.poll());
    drop(held);
    assert!(two.is_woken(), "granted");
    assert!(!one.is_woken(), "behind it, nothing left");
    assert_eq!(sem.available(), 0, "granted tokens are taken");
    drop(two);
    assert!(one.is_woken(), "the tokens came back and the next fits");
    assert_eq!(sem.available(), 1);
    drop(assert_ready!(one.poll()));
    assert!(sem.try_acquire(2).is_some());

    // The same with the task on a loop cancelled (aborted) by a timer in
    // the same pass as the release that granted it.
    let sem = Arc::new(Semaphore::new(2));
    let mut lp = EventLoop::with_virtual_clock();
    let held = sem.clone().try_acquire_owned(1).unwrap();
    let s = sem.clone();
    let waiter = lp.spawn(async move { s.acquire(2).await.forget() });
    let w = std::rc::Rc::new(waiter);
    let w2 = w.clone();
    let mut held = Some(held);
    lp.set_timeout(5, move |_| {
        drop(held.take()); // grants the waiter (its poll is queued) ...
        w2.abort(); // ... which is cancelled before it runs
    });
    lp.run().unwrap();
    assert!(w.is_finished());
    assert_eq!(sem.available(), 2, "the grant came back");
}

// ---------------------------------------------------------------------
// Wakes from other threads, and the loop kept alive meanwhile

/// A task on a loop waits for a permit that another thread holds; the
/// waiting acquire keeps the loop alive (nothing else does) until the
/// other thread releases, 30 ms later, and the task completes. Real clock.
#[test]
fn a_release_on_another_thread_wakes_a_task_and_the_loop_waits_for_it() {
    let sem = Arc::new(Semaphore::new(1));
    let held = sem.clone().try_acquire_owned(1).unwrap();
    let mut lp = EventLoop::new();
    let other = std::thread::spawn(move || {
        std::thread::sleep(ms(30));
        drop(held);
    });
    let s = sem.clone();
    let start = std::time::Instant::now();
    let got = lp.block_on(async move { s.acquire(1).await.forget() });
    assert!(got.is_ok(), "{got:?}");
    assert!(start.elapsed() >= ms(25), "it waited for the release");
    other.join().unwrap();
    assert_eq!(sem.available(), 0);
    assert!(!lp.is_alive());
}

/// Two loops on two threads share a semaphore of 1: each task takes it,
/// sleeps 1 ms on its own loop and gives it back, 50 times; the permit
/// passes between the threads through cross-thread wakes. Real clock.
#[test]
fn two_loops_on_two_threads_pass_a_permit_back_and_forth() {
    let sem = Arc::new(Semaphore::new(1));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let sem = sem.clone();
            std::thread::spawn(move || {
                let mut lp = EventLoop::new();
                lp.block_on(async move {
                    for _ in 0..50 {
                        let _p = sem.acquire(1).await;
                        time::sleep(ms(1)).await;
                    }
                })
                .unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(sem.available(), 1);
}

/// The keep-alive follows the acquire: queued and polled where a loop is
/// current, the loop is alive; dropped, or granted and completed, it is
/// not. Acquires that complete at once or are too big keep nothing alive.
#[test]
fn a_queued_acquire_keeps_its_loop_alive_until_it_completes_or_is_dropped() {
    let sem = Semaphore::new(2);
    let mut lp = EventLoop::with_virtual_clock();
    let held = sem.try_acquire(2).unwrap();
    let mut a = spawn(sem.acquire(1));
    assert!(!lp.is_alive(), "not polled yet");
    lp.scope(|| assert_pending!(a.poll()));
    assert!(lp.is_alive(), "queued, polled in the loop's scope");
    drop(a);
    assert!(!lp.is_alive(), "dropped");

    let mut a = spawn(sem.acquire(1));
    lp.scope(|| assert_pending!(a.poll()));
    assert!(lp.is_alive());
    drop(held);
    assert!(lp.is_alive(), "granted, not yet polled");
    lp.scope(|| drop(assert_ready!(a.poll())));
    assert!(!lp.is_alive(), "completed");

    let mut big = spawn(sem.acquire(3));
    lp.scope(|| assert_pending!(big.poll()));
    assert!(!lp.is_alive(), "too big: nothing can wake it");
    let mut free = spawn(sem.acquire(2));
    lp.scope(|| drop(assert_ready!(free.poll())));
    assert!(!lp.is_alive());

    // Polled with no loop current: nothing kept alive; polled again in the
    // scope: that loop is.
    let held = sem.try_acquire(2).unwrap();
    let mut a = spawn(sem.acquire(2));
    assert_pending!(a.poll());
    assert!(!lp.is_alive());
    lp.scope(|| assert_pending!(a.poll()));
    assert!(lp.is_alive());
    drop(held);
    drop(a); // granted, dropped: tokens back, keep-alive gone
    assert!(!lp.is_alive());
    assert_eq!(sem.available(), 2);
}

// ---------------------------------------------------------------------
// tokio-test mock tasks, no loop at all

/// Acquires polled by mock tasks with no loop anywhere: pending, woken by
/// a release, ready; the waker is stored once (the latest poll's) and let
/// go when a pending acquire is dropped; FIFO wakes, all or nothing.
#[test]
fn mock_tasks_without_a_loop() {
    let sem = Semaphore::new(2);
    let held = sem.try_acquire(2).unwrap();
    let mut a = spawn(sem.acquire(2));
    assert_pending!(a.poll());
    assert_eq!(a.waker_ref_count(), 2, "the acquire stores one clone");
    assert_pending!(a.poll());
    assert_eq!(a.waker_ref_count(), 2, "the same waker: not cloned again");
    assert!(!a.is_woken());

    let mut b = spawn(sem.acquire(1));
    assert_pending!(b.poll());
    let mut c = spawn(sem.acquire(1));
    assert_pending!(c.poll());
    drop(held);
    assert!(a.is_woken(), "the head is granted");
    assert!(!b.is_woken() && !c.is_woken(), "nothing left for them");
    let pa = assert_ready!(a.poll());
    assert_eq!(a.waker_ref_count(), 1, "let go once completed");
    drop(pa);
    assert!(b.is_woken() && c.is_woken(), "1 + 1 fit together");
    let (pb, pc) = (assert_ready!(b.poll()), assert_ready!(c.poll()));
    assert_eq!(sem.available(), 0);

    // Dropping a pending acquire lets go of its waker.
    let mut d = spawn(sem.acquire(1));
    assert_pending!(d.poll());
    assert_eq!(d.waker_ref_count(), 2);
    drop(std::mem::replace(&mut *d, sem.acquire(0)));
    assert_eq!(d.waker_ref_count(), 1, "dropped with the acquire");

    // A waker from a new task replaces the old one: only the latest wakes.
    let mut e = spawn(sem.acquire(1));
    assert_pending!(e.poll());
    let mut e2 = spawn(std::mem::replace(&mut *e, sem.acquire(0)));
    assert_pending!(e2.poll());
    assert_eq!(e.waker_ref_count(), 1, "the old waker was replaced");
    drop(pb);
    assert!(e2.is_woken() && !e.is_woken());
    drop(assert_ready!(e2.poll()));
    drop(pc);
    assert_eq!(sem.available(), 2);
}

/// One release that grants more waiters than one batch of wakes holds:
/// all are granted, in order, and woken.
#[test]
fn a_release_grants_many_waiters() {
    let sem = Semaphore::new(30);
    let held = sem.try_acquire(30).unwrap();
    let mut waiters: Vec<_> = (0..25).map(|_| spawn(sem.acquire(1))).collect();
    for w in &mut waiters {
        assert_pending!(w.poll());
    }
    let mut big = spawn(sem.acquire(6));
    assert_pending!(big.poll());
    drop(held);
    assert!(waiters.iter().all(|w| w.is_woken()));
    assert!(!big.is_woken(), "5 left, it wants 6");
    assert_eq!(sem.available(), 5);
    let permits: Vec<_> = waiters
        .iter_mut()
        .map(|w| assert_ready!(w.poll()))
        .collect();
    drop(permits);
    assert!(big.is_woken());
    drop(assert_ready!(big.poll()));
    assert_eq!(sem.available(), 30);
}

/// Zero-weight acquires, as Go's: ready at once unless someone waits;
/// behind a waiter they queue, and are granted when they reach the head.
#[test]
fn zero_weight_acquires() {
    let sem = Semaphore::new(1);
    let held = sem.try_acquire(1).unwrap();
    let mut z = spawn(sem.acquire(0));
    drop(assert_ready!(z.poll()));
    assert!(sem.try_acquire(0).is_some());

    let mut one = spawn(sem.acquire(1));
    assert_pending!(one.poll());
    assert!(sem.try_acquire(0).is_none(), "someone waits: no barging");
    let mut z = spawn(sem.acquire(0));
    assert_pending!(z.poll());
    // The head is cancelled while the semaphore is full: the zero behind it
    // fits and is granted (Go checks `size > cur` first and strands it).
    drop(one);
    assert!(z.is_woken());
    drop(assert_ready!(z.poll()));
    drop(held);
    assert_eq!(sem.available(), 1);
}

/// An acquire larger than the size stores no waker (nothing will ever
/// wake it) and blocks nobody; `Semaphore::new(0)` grants only zeros.
#[test]
fn too_big_stores_no_waker_and_blocks_nobody() {
    let sem = Semaphore::new(2);
    let mut big = spawn(sem.acquire(3));
    assert_pending!(big.poll());
    assert_eq!(big.waker_ref_count(), 1);
    assert!(sem.try_acquire(2).map(Permit::forget).is_some());
    sem.release(2).unwrap();
    assert_pending!(big.poll());
    assert!(!big.is_woken());

    let zero = Semaphore::new(0);
    assert!(zero.try_acquire(0).is_some());
    let mut one = spawn(zero.acquire(1));
    assert_pending!(one.poll());
    let mut z = spawn(zero.acquire(0));
    drop(assert_ready!(z.poll()));
}

/// The owned variants hold the `Arc`: the future and the permit move to
/// other threads; dropping the future cancels.
#[test]
fn owned_acquires_and_permits() {
    let sem = Arc::new(Semaphore::new(1));
    let p = sem.clone().try_acquire_owned(1).unwrap();
    let mut a = spawn(sem.clone().acquire_owned(1));
    assert_pending!(a.poll());
    assert_eq!(Arc::strong_count(&sem), 3);
    std::thread::spawn(move || drop(p)).join().unwrap();
    assert!(a.is_woken());
    let p = assert_ready!(a.poll());
    assert!(sem.clone().try_acquire_owned(1).is_none());
    drop(a);
    assert_eq!(Arc::strong_count(&sem), 2, "the permit holds the Arc");
    p.forget();
    assert_eq!(Arc::strong_count(&sem), 1, "forget drops the Arc");
    assert_eq!(sem.available(), 0);
    sem.release(1).unwrap();

    // A future moved to another thread and polled there, woken from here.
    let held = sem.clone().try_acquire_owned(1).unwrap();
    let fut = sem.clone().acquire_owned(1);
    let woken = Arc::new(Mutex::new(None));
    let w = woken.clone();
    let t = std::thread::spawn(move || {
        let mut f = spawn(fut);
        assert_pending!(f.poll());
        *w.lock().unwrap() = Some(());
        while !f.is_woken() {
            std::thread::yield_now();
        }
        assert_ready!(f.poll()).forget();
    });
    while woken.lock().unwrap().is_none() {
        std::thread::yield_now();
    }
    drop(held);
    t.join().unwrap();
    assert_eq!(sem.available(), 0);
}

// ---------------------------------------------------------------------
// Property test against a reference model

/// The rules as Go's `semaphore.go` states them, on plain data: `taken`,
/// a FIFO queue of `(id, n)`, the ids granted but not yet polled.
#[derive(Debug, Default)]
struct Model {
    size: u64,
    taken: u64,
    queue: VecDeque<(usize, u64)>,
    granted: Vec<(usize, u64)>,
}

/// What the first poll of an acquire does.
#[derive(Debug, PartialEq)]
enum First {
    Ready,
    Queued,
    TooBig,
}

impl Model {
    fn fits(&self, n: u64) -> bool {
        self.size - self.taken >= n
    }

    /// `notifyWaiters`.
    fn grant(&mut self) {
        while let Some(&(id, n)) = self.queue.front() {
            if !self.fits(n) {
                break;
            }
            self.taken += n;
            self.queue.pop_front();
            self.granted.push((id, n));
        }
    }

    fn acquire(&mut self, id: usize, n: u64) -> First {
        if self.queue.is_empty() && self.fits(n) {
            self.taken += n;
            First::Ready
        } else if n > self.size {
            First::TooBig
        } else {
            self.queue.push_back((id, n));
            First::Queued
        }
    }

    fn try_acquire(&mut self, n: u64) -> bool {
        let ok = self.queue.is_empty() && self.fits(n);
        if ok {
            self.taken += n;
        }
        ok
    }

    fn release(&mut self, n: u64) -> bool {
        if n > self.taken {
            return false;
        }
        self.taken -= n;
        self.grant();
        true
    }

    /// A pending acquire dropped: out of the queue (granting behind it if
    /// it was the head), or its granted tokens back.
    fn drop_pending(&mut self, id: usize) {
        if let Some(i) = self.granted.iter().position(|&(g, _)| g == id) {
            let (_, n) = self.granted.remove(i);
            self.taken -= n;
            self.grant();
        } else if let Some(i) = self.queue.iter().position(|&(q, _)| q == id) {
            self.queue.remove(i);
            if i == 0 {
                self.grant();
            }
        }
    }

    /// A pending acquire polled: ready if it was granted.
    fn poll(&mut self, id: usize) -> bool {
        match self.granted.iter().position(|&(g, _)| g == id) {
            Some(i) => {
                self.granted.remove(i);
                true
            }
            None => false,
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// Start an acquire of `n` (polled once by a mock task).
    Acquire(u64),
    TryAcquire(u64),
    /// Release `n` by hand: done when `n` is within the forgotten tokens
    /// (or more than is taken: the error); skipped when it would take
    /// tokens that permits hold.
    Release(u64),
    /// Drop the pending acquire at this position (modulo their number).
    DropPending(usize),
    /// Poll the pending acquire at this position.
    Poll(usize),
    PollAll,
    DropPermit(usize),
    ForgetPermit(usize),
}

fn op(size: u64) -> impl Strategy<Value = Op> {
    let w = 0..=size + 1;
    prop_oneof![
        6 => w.clone().prop_map(Op::Acquire),
        2 => w.clone().prop_map(Op::TryAcquire),
        2 => w.prop_map(Op::Release),
        2 => any::<usize>().prop_map(Op::DropPending),
        2 => any::<usize>().prop_map(Op::Poll),
        1 => Just(Op::PollAll),
        3 => any::<usize>().prop_map(Op::DropPermit),
        1 => any::<usize>().prop_map(Op::ForgetPermit),
    ]
}

fn case() -> impl Strategy<Value = (u64, Vec<Op>)> {
    (1u64..=6).prop_flat_map(|size| (Just(size), prop::collection::vec(op(size), 1..80)))
}

/// Runs `ops` on a semaphore of `size` and on the model, checking after
/// every step: tokens conserved (held by permits + granted-unpolled +
/// forgotten + available == size); every pending acquire woken exactly
/// when the model granted it, so grants come in FIFO order; no waiter
/// stranded while the head fits; `try_acquire` never barging; a queue
/// that is empty exactly when the model's is (`try_acquire(0)` probes it:
/// no stale waiter is left behind a drop).
fn check(size: u64, ops: &[Op]) -> Result<(), TestCaseError> {
    let sem = Semaphore::new(size);
    let mut model = Model {
        size,
        ..Model::default()
    };
    let mut pending: Vec<(usize, u64, Spawn<Acquire<'_>>)> = vec![];
    let mut permits: Vec<(u64, Permit<'_>)> = vec![];
    let mut forgotten = 0u64;
    let mut next_id = 0;
    for op in ops {
        match *op {
            Op::Acquire(n) => {
                let id = next_id;
                next_id += 1;
                let mut a = spawn(sem.acquire(n));
                let first = model.acquire(id, n);
                match a.poll() {
                    Poll::Ready(p) => {
                        prop_assert_eq!(first, First::Ready, "acquire({}) was ready", n);
                        permits.push((n, p));
                    }
                    Poll::Pending => {
                        prop_assert_ne!(first, First::Ready, "acquire({}) was pending", n);
                        pending.push((id, n, a));
                    }
                }
            }
            Op::TryAcquire(n) => {
                let expected = model.try_acquire(n);
                let got = sem.try_acquire(n);
                prop_assert_eq!(got.is_some(), expected, "try_acquire({})", n);
                if let Some(p) = got {
                    permits.push((n, p));
                }
            }
            Op::Release(n) => {
                if n <= forgotten {
                    prop_assert!(sem.release(n).is_ok());
                    prop_assert!(model.release(n));
                    forgotten -= n;
                } else {
                    // More than forgotten permits hold (live permits'
                    // tokens included): refused, nothing changes.
                    let before = sem.available();
                    prop_assert!(sem.release(n).is_err());
                    prop_assert_eq!(sem.available(), before);
                }
            }
            Op::DropPending(i) if !pending.is_empty() => {
                let (id, _, a) = pending.remove(i % pending.len());
                drop(a);
                model.drop_pending(id);
            }
            Op::Poll(i) if !pending.is_empty() => {
                let i = i % pending.len();
                let id = pending[i].0;
                let ready = model.poll(id);
                match pending[i].2.poll() {
                    Poll::Ready(p) => {
                        prop_assert!(ready, "acquire #{} ready, not granted", id);
                        let (_, n, _) = pending.remove(i);
                        permits.push((n, p));
                    }
                    Poll::Pending => prop_assert!(!ready, "acquire #{} granted, pending", id),
                }
            }
            Op::PollAll => {
                let mut still = vec![];
                for (id, n, mut a) in pending.drain(..) {
                    let ready = model.poll(id);
                    match a.poll() {
                        Poll::Ready(p) => {
                            prop_assert!(ready, "acquire #{} ready, not granted", id);
                            permits.push((n, p));
                        }
                        Poll::Pending => {
                            prop_assert!(!ready, "acquire #{} granted, pending", id);
                            still.push((id, n, a));
                        }
                    }
                }
                pending = still;
            }
            Op::DropPermit(i) if !permits.is_empty() => {
                let (n, p) = permits.remove(i % permits.len());
                drop(p);
                prop_assert!(model.release(n), "a permit's tokens are held");
            }
            Op::ForgetPermit(i) if !permits.is_empty() => {
                let (n, p) = permits.remove(i % permits.len());
                p.forget();
                forgotten += n;
            }
            _ => {}
        }

        // Tokens conserved.
        let in_permits: u64 = permits.iter().map(|(n, _)| n).sum();
        let in_grants: u64 = model.granted.iter().map(|(_, n)| n).sum();
        prop_assert_eq!(sem.available(), size - model.taken);
        prop_assert_eq!(in_permits + in_grants + forgotten + sem.available(), size);
        // Woken exactly when granted: the model grants in FIFO order.
        for (id, _, a) in &pending {
            let granted = model.granted.iter().any(|(g, _)| g == id);
            prop_assert_eq!(a.is_woken(), granted, "acquire #{} woken", id);
        }
        // No waiter stranded while the head fits.
        if let Some(&(_, n)) = model.queue.front() {
            prop_assert!(!model.fits(n), "the head fits but waits");
        }
        // The real queue is empty exactly when the model's is; a
        // zero-weight try_acquire changes nothing either way.
        prop_assert_eq!(sem.try_acquire(0).is_some(), model.queue.is_empty());
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn semaphore_matches_the_model((size, ops) in case()) {
        check(size, &ops)?;
    }
}

/// A waker that panics (another executor's, or a hand-made one) does not
/// cut a grant short: the release wakes every waiter it granted and grants
/// every one that fits, past the first batch of eight wakes, and only then
/// resumes the panic. Before round 36 the panic left the waiters granted
/// with the hostile one unwoken (holding their tokens) and the ones of the
/// next batch queued at a head that fit (found by round 36's check against
/// Go's x/sync/semaphore).
#[test]
fn a_panicking_waker_does_not_cut_a_grant_short() {
    struct W(usize, Arc<Mutex<Vec<usize>>>);
    impl std::task::Wake for W {
        fn wake(self: Arc<Self>) {
            self.1.lock().unwrap().push(self.0);
            if self.0 == 0 || self.0 == 9 {
                panic!("hostile waker {}", self.0);
            }
        }
    }
    let sem = Semaphore::new(20);
    sem.try_acquire(20).unwrap().forget();
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut futs = Vec::new();
    for i in 0..12 {
        let waker = Waker::from(Arc::new(W(i, log.clone())));
        let mut f = Box::pin(sem.acquire(1));
        assert!(
            f.as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
        futs.push((f, waker));
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sem.release(12)));
    let payload = r.expect_err("the first waker's panic, resumed");
    assert_eq!(payload.downcast_ref::<String>().unwrap(), "hostile waker 0");
    assert_eq!(
        *log.lock().unwrap(),
        (0..12).collect::<Vec<_>>(),
        "all woken"
    );
    assert_eq!(sem.available(), 0, "all twelve granted");
    for (i, (f, w)) in futs.iter_mut().enumerate() {
        match f.as_mut().poll(&mut Context::from_waker(w)) {
            Poll::Ready(p) => p.forget(),
            Poll::Pending => panic!("waiter {i} was granted"),
        }
    }
    assert!(sem.release(20).is_ok(), "every token accounted for");
    assert_eq!(sem.available(), 20);
}

/// A permit says how many tokens it holds (tokio's `num_permits`),
/// whichever way it was taken, and gives back exactly that many; a
/// refused release says what it asked for and what was held.
#[test]
fn permits_say_how_many_tokens_they_hold() {
    let sem = Arc::new(Semaphore::new(10));
    let mut lp = EventLoop::with_virtual_clock();
    let s = sem.clone();
    let (a, b) = lp
        .block_on(async move {
            let a = s.acquire(3).await;
            let b = s.clone().acquire_owned(4).await;
            (a.num_permits(), b.num_permits())
        })
        .unwrap();
    assert_eq!((a, b), (3, 4));
    let p = sem.try_acquire(6).unwrap();
    assert_eq!(p.num_permits(), 6);
    assert_eq!(sem.available(), 4);
    p.forget();
    let err = sem.release(7).unwrap_err();
    assert_eq!((err.released(), err.held()), (7, 6));
    sem.release(6).unwrap();
    assert_eq!(sem.available(), 10);
}
