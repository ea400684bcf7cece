//! Every interleaving of the cross-thread paths, with loom (issue 14,
//! item 2). Run with
//! `RUSTFLAGS="--cfg loom" cargo test --release --lib loom_tests` in a
//! target directory of its own; `.ci/run` runs the two-thread models
//! unbounded (every interleaving) and the three-thread one under
//! `LOOM_MAX_PREEMPTIONS=3`. Each prints how many interleavings it ran.
//!
//! What is checked, each with two or three threads of one or two
//! operations:
//!
//! - the posting queue ([`Shared`]) against a model of the loop's poll
//!   phase that blocks until woken, with a model of the eventfd
//!   ([`ModelWake`]): a post, a `Remote` dropped while another clone
//!   posts, the release of the last keep-alive guard, the loop dropped
//!   while a thread posts, a `Completion` completed and another dropped. A lost wake-up is a deadlock, which loom
//!   reports; so is a poll phase that sleeps on with nothing to wait for.
//! - a task's `scheduled` flag ([`Schedule`]) with a wake from another
//!   thread while the loop polls the task;
//! - the semaphore: a grant from another thread, a cancel racing a grant
//!   (no token leaked, no waiter stranded), a release racing the cancel
//!   of the head, `try_acquire` racing a release, two threads contending
//!   for one token (mutual exclusion).
//!
//! What is not: the kernel's side of the wake (the eventfd and epoll, for
//! which [`ModelWake`] stands in: a wake is remembered until a wait
//! consumes it, as an eventfd's counter is), and std's `Arc`s (trusted,
//! see `src/prim.rs`).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use loom::sync::atomic::{AtomicBool, AtomicUsize};
use loom::sync::{Condvar, Mutex};
use loom::thread;

use super::{AsyncHandle, Completion, Msg, PostError, Remote, Shared, Wake};
use crate::collections::arena::Arena;
use crate::sync::Semaphore;
use crate::task::Schedule;

/// Runs `f` under loom (bounded by `LOOM_MAX_PREEMPTIONS`, if set) and
/// prints how many interleavings it explored.
fn check(name: &str, f: impl Fn() + Sync + Send + 'static) {
    let runs = Arc::new(StdAtomicUsize::new(0));
    let r = runs.clone();
    let start = std::time::Instant::now();
    loom::model::Builder::new().check(move || {
        r.fetch_add(1, Ordering::Relaxed);
        f();
    });
    eprintln!(
        "loom {name}: {} interleavings in {:.2?}",
        runs.load(Ordering::Relaxed),
        start.elapsed()
    );
}

/// The eventfd, modelled: a wake is remembered until a wait takes it.
struct ModelWake {
    woken: Mutex<bool>,
    cv: Condvar,
}

impl ModelWake {
    fn new() -> ModelWake {
        ModelWake {
            woken: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    /// Blocks until woken (`epoll_wait` with no timeout).
    fn wait(&self) {
        let mut w = self.woken.lock().unwrap();
        while !*w {
            w = self.cv.wait(w).unwrap();
        }
        *w = false;
    }
}

impl Wake for ModelWake {
    fn wake(&self) -> std::io::Result<()> {
        *self.woken.lock().unwrap() = true;
        self.cv.notify_one();
        Ok(())
    }
}

/// What the modelled loop owns: what ran, in order.
#[derive(Default)]
struct Host {
    log: Vec<Event>,
    /// A refed `Remote` is open (its handle keeps the loop alive).
    remote_open: bool,
    /// A task's wake-up arrived through the queue.
    task_queued: bool,
    /// Requests in flight (`Completion`s), and how they ended.
    requests: usize,
    completed: usize,
    cancelled: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    Ran(u32),
    Closed,
}

type Posting = Shared<Host, ModelWake>;

fn posting() -> Arc<Posting> {
    Arc::new(Shared::new(ModelWake::new()))
}

/// A `Remote` of the modelled loop, refed: as `Loop::remote`.
fn remote(shared: &Arc<Posting>, host: &mut Host) -> Remote<Host, ModelWake> {
    host.remote_open = true;
    let mut arena = Arena::new();
    let handle = arena.insert(());
    Remote {
        inner: Arc::new(AsyncHandle {
            shared: shared.clone(),
            handle,
        }),
    }
}

/// The loop's side of one message, as `dispatch` does it; true if it
/// counts as something delivered.
fn deliver(host: &mut Host, msg: Msg<Host>) -> bool {
    match msg {
        Msg::Run(f) => {
            f(host);
            true
        }
        Msg::CloseAsync(_) => {
            host.log.push(Event::Closed);
            host.remote_open = false;
            true
        }
        Msg::Released => true,
        Msg::Complete(_) => {
            host.requests -= 1;
            host.completed += 1;
            true
        }
        Msg::Cancel(_) => {
            host.requests -= 1;
            host.cancelled += 1;
            true
        }
    }
}

/// One poll phase with no timeout, as `io_poll` runs it: block unless the
/// flag says messages wait, take them all, and return once something was
/// delivered; otherwise (a spurious wake) block again.
fn poll_phase(shared: &Posting, host: &mut Host) {
    loop {
        if !shared.has_msgs() {
            shared.waker.wait();
        }
        let mut batch = VecDeque::new();
        shared.take_msgs(&mut batch);
        let mut delivered = false;
        for msg in batch {
            delivered |= deliver(host, msg);
        }
        if delivered {
            return;
        }
    }
}

/// `uv_run` for a loop whose only liveness is a refed `Remote`, requests
/// in flight and the keep-alive count: poll phases while alive.
fn run(shared: &Posting, host: &mut Host) {
    while host.remote_open || host.requests > 0 || shared.kept_alive() {
        poll_phase(shared, host);
    }
}

#[test]
fn loom_tests_post_then_drop_remote() {
    check("post, then drop the Remote", || {
        let shared = posting();
        let mut host = Host::default();
        let r = remote(&shared, &mut host);
        let t = thread::spawn(move || {
            r.post(|h: &mut Host| h.log.push(Event::Ran(1))).unwrap();
            drop(r);
        });
        run(&shared, &mut host);
        t.join().unwrap();
        // The post ran, before the close: a Remote's posts all come first.
        assert_eq!(host.log, [Event::Ran(1), Event::Closed]);
    });
}

#[test]
fn loom_tests_remote_dropped_while_another_clone_posts() {
    check("a Remote dropped while a clone posts", || {
        let shared = posting();
        let mut host = Host::default();
        let r1 = remote(&shared, &mut host);
        let r2 = r1.clone();
        let a = thread::spawn(move || {
            r1.post(|h: &mut Host| h.log.push(Event::Ran(1))).unwrap();
            drop(r1);
        });
        let b = thread::spawn(move || {
            r2.post(|h: &mut Host| h.log.push(Event::Ran(2))).unwrap();
            drop(r2);
        });
        run(&shared, &mut host);
        a.join().unwrap();
        b.join().unwrap();
        // Both posts ran once, in either order, and the handle closed once,
        // after both.
        assert_eq!(host.log.len(), 3, "{:?}", host.log);
        assert_eq!(host.log[2], Event::Closed);
        let mut ran = host.log[..2].to_vec();
        ran.sort_by_key(|e| matches!(e, Event::Ran(2)));
        assert_eq!(ran, [Event::Ran(1), Event::Ran(2)]);
    });
}

#[test]
fn loom_tests_keepalive_released_on_another_thread_ends_the_run() {
    // Before the release sent a message, this deadlocked: the bare wake
    // made the poll phase find nothing delivered and block again.
    check("the last keep-alive released on another thread", || {
        let shared = posting();
        let mut host = Host::default();
        let guard = shared.keep_alive();
        let t = thread::spawn(move || drop(guard));
        run(&shared, &mut host);
        t.join().unwrap();
        assert!(!shared.kept_alive());
    });
}

#[test]
fn loom_tests_post_then_release_keepalive() {
    check("a post, then the keep-alive released", || {
        let shared = posting();
        let mut host = Host::default();
        let guard = shared.keep_alive();
        let s = shared.clone();
        let t = thread::spawn(move || {
            s.send(Msg::Run(Box::new(|h: &mut Host| h.log.push(Event::Ran(1)))))
                .unwrap();
            drop(guard);
        });
        run(&shared, &mut host);
        t.join().unwrap();
        // The run ends (no deadlock), and the post is not lost: it ran, or
        // (the loop saw the count at zero first: a `Sender`'s message keeps
        // nothing alive, as an unrefed `uv_async_t` does not) it waits in
        // the queue for the next run.
        if host.log.is_empty() {
            assert!(shared.has_msgs());
            poll_phase(&shared, &mut host);
        }
        assert_eq!(host.log, [Event::Ran(1)]);
    });
}

/// Counts drops of the closure it is moved into.
struct DropCount(Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

#[test]
fn loom_tests_post_races_the_loop_being_dropped() {
    check("a post while the loop is dropped", || {
        let shared = posting();
        let mut host = Host::default();
        let r = remote(&shared, &mut host);
        let drops = Arc::new(AtomicUsize::new(0));
        let d = DropCount(drops.clone());
        let t = thread::spawn(move || {
            let out = r.post(move |_: &mut Host| drop(d));
            drop(r);
            out
        });
        // `Io`'s drop.
        shared.close();
        let out = t.join().unwrap();
        // Refused or queued, the closure was dropped exactly once, unrun,
        // and nothing is left in the queue.
        assert!(matches!(out, Ok(()) | Err(PostError::Closed)));
        assert_eq!(drops.load(Ordering::Acquire), 1);
        assert!(shared.lock().msgs.is_empty());
        // A later post is refused.
        let late = Remote::<Host, ModelWake> {
            inner: Arc::new(AsyncHandle {
                shared: shared.clone(),
                handle: Arena::new().insert(()),
            }),
        };
        assert!(matches!(late.post(|_| ()), Err(PostError::Closed)));
    });
}

#[test]
fn loom_tests_task_woken_from_another_thread_while_polled() {
    check("a task woken from another thread while polled", || {
        let shared = posting();
        let mut host = Host::default();
        let sched = Arc::new(Schedule::queued());
        let ready = Arc::new(AtomicBool::new(false));
        // What the task waits on keeps the loop alive (a refed Remote the
        // other thread holds, as in tests/threads.rs).
        let r = remote(&shared, &mut host);
        let (s2, ready2) = (sched.clone(), ready.clone());
        let t = thread::spawn(move || {
            ready2.store(true, Ordering::Release);
            // `Header::wake_by_ref` from another thread.
            if s2.wake() {
                r.post(|h: &mut Host| h.task_queued = true).unwrap();
            }
            drop(r);
        });
        // The loop polls the task (its first poll, queued at spawn), and
        // again on every wake-up the queue brings, until it is ready.
        let mut polls = 0;
        loop {
            sched.begin_poll();
            polls += 1;
            if ready.load(Ordering::Acquire) {
                break;
            }
            // Pending: run poll phases until the task is queued again. A
            // lost wake-up leaves the loop blocked (the Remote closes, and
            // then nothing is alive: caught below) or deadlocked.
            while !host.task_queued {
                assert!(
                    host.remote_open,
                    "the task is pending, its waker was called, and nothing queued it"
                );
                poll_phase(&shared, &mut host);
            }
            host.task_queued = false;
        }
        t.join().unwrap();
        assert!(polls <= 2);
    });
}

/// Polls `fut` once with a waker that does nothing.
fn poll_once<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
    Pin::new(fut).poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn loom_tests_semaphore_grant_from_another_thread() {
    check("semaphore: a grant from another thread", || {
        let sem = Arc::new(Semaphore::new(1));
        let held = sem.clone().try_acquire_owned(1).unwrap();
        let t = thread::spawn(move || drop(held));
        // A lost wake-up deadlocks block_on, which loom reports.
        let p = loom::future::block_on(sem.acquire(1));
        assert_eq!(sem.available(), 0);
        drop(p);
        t.join().unwrap();
        assert_eq!(sem.available(), 1);
    });
}

#[test]
fn loom_tests_semaphore_cancel_races_grant() {
    check("semaphore: a cancel racing a grant", || {
        let sem = Arc::new(Semaphore::new(1));
        let held = sem.clone().try_acquire_owned(1).unwrap();
        let s = sem.clone();
        let a = thread::spawn(move || {
            // Queues (or, after the release, takes the token), then gives
            // up: whether it was granted or not, it must give back all.
            let mut acq = s.acquire(1);
            let r = poll_once(&mut acq);
            drop(r);
            drop(acq);
        });
        let b = thread::spawn(move || drop(held));
        a.join().unwrap();
        b.join().unwrap();
        assert_eq!(sem.available(), 1, "a cancelled acquire kept a token");
        assert!(sem.try_acquire(1).is_some(), "the queue is not empty");
    });
}

#[test]
fn loom_tests_semaphore_cancel_does_not_strand_the_next_waiter() {
    check(
        "semaphore: a cancel does not strand the waiter behind",
        || {
            let sem = Arc::new(Semaphore::new(2));
            let held = sem.clone().try_acquire_owned(1).unwrap();
            // A wants 2 and queues first: the main thread's acquire of 1 waits
            // behind it (FIFO) although a token is free.
            let mut a = sem.clone().acquire_owned(2);
            assert!(poll_once(&mut a).is_pending());
            let ta = thread::spawn(move || drop(a));
            // Granted once A is gone (the token `held` leaves free fits), never
            // stranded: a stranded waiter deadlocks block_on. (With `cancel`
            // changed not to grant after removing the head, loom reports that
            // deadlock.)
            let p = loom::future::block_on(sem.acquire(1));
            ta.join().unwrap();
            assert_eq!(sem.available(), 0);
            drop((p, held));
            assert_eq!(sem.available(), 2);
        },
    );
}

#[test]
fn loom_tests_semaphore_try_acquire_races_release() {
    check("semaphore: try_acquire racing a release", || {
        let sem = Arc::new(Semaphore::new(2));
        sem.try_acquire(2).unwrap().forget();
        let s = sem.clone();
        let t = thread::spawn(move || s.release(1).unwrap());
        let got = sem.try_acquire(1).map(|p| p.forget()).is_some();
        t.join().unwrap();
        // Never more taken than the size, never a token lost.
        assert_eq!(sem.available(), if got { 0 } else { 1 });
    });
}

#[test]
fn loom_tests_semaphore_release_races_cancel_of_the_head() {
    check("semaphore: a release racing the head's cancel", || {
        let sem = Arc::new(Semaphore::new(3));
        sem.try_acquire(3).unwrap().forget();
        // Queue: [A wants 2] [B wants 1].
        let mut a = sem.clone().acquire_owned(2);
        let mut b = sem.clone().acquire_owned(1);
        assert!(poll_once(&mut a).is_pending());
        assert!(poll_once(&mut b).is_pending());
        let s = sem.clone();
        let x = thread::spawn(move || s.release(3).unwrap());
        let y = thread::spawn(move || drop(a));
        x.join().unwrap();
        y.join().unwrap();
        // Whatever the order, B is granted, A's tokens (if it was granted
        // first) came back, and nothing else is taken.
        let Poll::Ready(pb) = poll_once(&mut b) else {
            panic!("B was stranded behind a cancelled head");
        };
        assert_eq!(sem.available(), 2);
        drop(pb);
        assert_eq!(sem.available(), 3);
    });
}

#[test]
fn loom_tests_semaphore_two_threads_contend_for_one_token() {
    check("semaphore: two threads contend for one token", || {
        let sem = Arc::new(Semaphore::new(1));
        let inside = Arc::new(AtomicUsize::new(0));
        let worker = |sem: Arc<Semaphore>, inside: Arc<AtomicUsize>| {
            move || {
                let p = loom::future::block_on(sem.acquire(1));
                // Mutual exclusion: the permit is this thread's alone.
                assert_eq!(inside.fetch_add(1, Ordering::AcqRel), 0);
                inside.fetch_sub(1, Ordering::AcqRel);
                drop(p);
            }
        };
        let t = thread::spawn(worker(sem.clone(), inside.clone()));
        worker(sem.clone(), inside.clone())();
        t.join().unwrap();
        assert_eq!(sem.available(), 1);
    });
}

#[test]
fn loom_tests_completions_from_another_thread() {
    check(
        "a completion completed, another dropped, on another thread",
        || {
            let shared = posting();
            let mut host = Host {
                requests: 2,
                ..Host::default()
            };
            // As `Loop::request`: two requests in flight.
            let done = Completion {
                key: 0,
                done: false,
                signal: shared.clone(),
            };
            let lost = Completion {
                key: 1,
                done: false,
                signal: shared.clone(),
            };
            let t = thread::spawn(move || {
                done.complete();
                drop(lost); // a lost request cancels itself
            });
            run(&shared, &mut host);
            t.join().unwrap();
            assert_eq!((host.completed, host.cancelled), (1, 1));
        },
    );
}
