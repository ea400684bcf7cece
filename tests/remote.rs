//! Cross-thread posting through a `Remote`, libuv's async handle: it keeps
//! the loop alive while it exists and is refed, its posts run in poll
//! phases in the order they were made, and posting to a loop that is gone
//! is an error that drops the closure. Virtual clock unless stated.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use std::sync::Mutex;

use timerloop::{EventLoop, PostError, TimerError};

/// A log that posted closures (which must be `Send`) can write to.
type Log = Arc<Mutex<Vec<&'static str>>>;

fn push(log: &Log, s: &'static str) {
    log.lock().unwrap().push(s);
}

fn lines(log: &Log) -> Vec<&'static str> {
    log.lock().unwrap().clone()
}

/// A callback of any kind that logs `s`.
fn say(log: &Log, s: &'static str) -> impl FnMut(&mut EventLoop) + Send + 'static {
    let log = log.clone();
    move |_| push(&log, s)
}

/// A producer thread posts five jobs, 5 ms of real time apart, and then
/// drops its `Remote`: `run()` waits for all five (the remote keeps the loop
/// alive, though nothing else does) and returns once the remote is gone.
#[test]
fn a_refed_remote_keeps_run_going_until_it_is_dropped() {
    let done = Arc::new(AtomicUsize::new(0));
    let mut lp = EventLoop::with_virtual_clock();
    let remote = lp.remote();
    let d = done.clone();
    let producer = std::thread::spawn(move || {
        for _ in 0..5 {
            std::thread::sleep(Duration::from_millis(5));
            let d = d.clone();
            remote
                .post(move |_| {
                    d.fetch_add(1, Ordering::SeqCst);
                })
                .unwrap();
        }
    });
    lp.run().unwrap();
    producer.join().unwrap();
    assert_eq!(
        done.load(Ordering::SeqCst),
        5,
        "run returned before the last post"
    );
    assert!(!lp.is_alive());
    assert_eq!(lp.now(), 0, "waiting for a remote takes no virtual time");
}

/// The loop unrefs the remote from one of its posts: `run()` returns at the
/// end of that iteration, though the producer still holds the remote.
#[test]
fn unrefing_a_remote_lets_run_return_while_it_exists() {
    let log = Log::default();
    let mut lp = EventLoop::with_virtual_clock();
    let remote = lp.remote();
    let (tx, rx) = mpsc::channel::<()>();
    let held = remote.clone();
    // Holds a clone until the test says so, long after run() returned.
    let producer = std::thread::spawn(move || {
        let _ = rx.recv();
        drop(held);
    });
    let l = log.clone();
    let r2 = remote.clone();
    remote
        .post(move |lp| {
            push(&l, "unref");
            lp.unref_remote(&r2).unwrap();
        })
        .unwrap();
    drop(remote);
    lp.run().unwrap();
    assert_eq!(lines(&log), ["unref"]);
    assert!(!lp.is_alive(), "the remote still exists, unrefed");
    tx.send(()).unwrap();
    producer.join().unwrap();
}

/// Work posted before `run()` waits for the first poll phase of a run,
/// which a refed remote makes sure there is: it runs after the pre-loop
/// timers pass and before the check phase.
#[test]
fn work_posted_before_run_runs_in_its_first_poll_phase() {
    let log = Log::default();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_immediate(say(&log, "immediate"));
    lp.set_timeout(0, say(&log, "timeout"));
    lp.block(2); // the timeout is due in the pre-loop timers pass
    let remote = lp.remote();
    let l = log.clone();
    remote.post(move |_| push(&l, "posted")).unwrap();
    drop(remote);
    lp.run().unwrap();
    assert_eq!(lines(&log), ["timeout", "posted", "immediate"]);
}

/// An unrefed remote does not make a run reach a poll phase: posted work
/// waits, and runs in the first poll phase of a later run that has one.
#[test]
fn unrefed_remote_work_waits_for_a_run_that_polls() {
    let log = Log::default();
    let mut lp = EventLoop::with_virtual_clock();
    let remote = lp.remote();
    lp.unref_remote(&remote).unwrap();
    let l = log.clone();
    remote.post(move |_| push(&l, "posted")).unwrap();
    lp.run().unwrap();
    assert!(lines(&log).is_empty(), "nothing refed: no poll phase ran");
    lp.set_timeout(5, say(&log, "timeout"));
    lp.run().unwrap();
    assert_eq!(lines(&log), ["posted", "timeout"]);
}

/// Clones share one handle: dropping one clone keeps the loop alive; the
/// last drop ends it.
#[test]
fn the_last_clone_closes_the_remote() {
    let mut lp = EventLoop::with_virtual_clock();
    let a = lp.remote();
    let b = a.clone();
    drop(a);
    lp.run_nowait().unwrap();
    assert!(lp.is_alive(), "a clone is still alive");
    assert!(lp.remote_has_ref(&b));
    drop(b);
    lp.run().unwrap();
    assert!(!lp.is_alive());
}

/// Posting to a dropped loop is `PostError::Closed` and drops the closure
/// at once; closures still queued when the loop is dropped are dropped
/// with it. Nothing piles up: 100,000 posts of 1 KiB closures leave no
/// closure alive.
#[test]
fn posting_to_a_dropped_loop_is_an_error_and_drops_the_closure() {
    let token = Arc::new(());
    let mut lp = EventLoop::with_virtual_clock();
    let remote = lp.remote();
    let t = token.clone();
    remote.post(move |_| drop(t)).unwrap();
    assert_eq!(Arc::strong_count(&token), 2, "queued");
    drop(lp);
    assert_eq!(Arc::strong_count(&token), 1, "dropped with the loop");
    for _ in 0..100_000 {
        let t = token.clone();
        let ballast = [0u8; 1024];
        let r = remote.post(move |_| {
            let _ = (&t, ballast);
        });
        assert!(matches!(r, Err(PostError::Closed)), "{r:?}");
    }
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "every refused closure dropped"
    );
    assert_eq!(
        PostError::Closed.to_string(),
        "the loop was dropped; the closure was not run"
    );
}

/// Another loop's remote: ref and unref are `ForeignLoop`, `remote_has_ref`
/// is false, and nothing about the other loop changes.
#[test]
fn another_loops_remote_is_foreign() {
    let mut a = EventLoop::with_virtual_clock();
    let mut b = EventLoop::with_virtual_clock();
    let ra = a.remote();
    assert_eq!(b.unref_remote(&ra), Err(TimerError::ForeignLoop));
    assert_eq!(b.ref_remote(&ra), Err(TimerError::ForeignLoop));
    assert!(!b.remote_has_ref(&ra));
    assert!(a.remote_has_ref(&ra));
    assert!(!b.is_alive());
    drop(ra);
    a.run().unwrap();
}

/// On the real clock too: a remote keeps a loop with no timers waiting in
/// its poll phase (blocked, not spinning) until the post arrives.
#[test]
fn real_clock_loop_blocks_until_the_post_arrives() {
    let mut lp = EventLoop::new();
    let remote = lp.remote();
    let got = Arc::new(AtomicUsize::new(0));
    let g = got.clone();
    let producer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        remote
            .post(move |_| {
                g.store(1, Ordering::SeqCst);
            })
            .unwrap();
    });
    let start = std::time::Instant::now();
    lp.run().unwrap();
    producer.join().unwrap();
    assert_eq!(got.load(Ordering::SeqCst), 1);
    assert!(start.elapsed() >= Duration::from_millis(40), "it waited");
}

/// On a virtual clock a request started during a poll phase completes in
/// the next one however fast it was; a worker's post made after its
/// `complete` waits with the completion, so it still runs after it, while
/// an older request the phase waits for goes first. The same order whether
/// the second worker is fast or slow (round 37's audit: the post ran
/// before the completion queued ahead of it, every time).
#[test]
fn a_post_after_a_held_completion_waits_with_it() {
    for slow_second in [false, true] {
        for _ in 0..25 {
            let log: Log = Log::default();
            let mut lp = EventLoop::with_virtual_clock();
            let remote = lp.remote();
            let (tx, rx) = mpsc::channel::<timerloop::Completion>();
            let l = log.clone();
            let second = std::thread::spawn(move || {
                let c = rx.recv().unwrap();
                if slow_second {
                    std::thread::sleep(Duration::from_millis(40));
                }
                c.complete();
                remote.post(move |_| push(&l, "post")).unwrap();
            });
            let slow = lp.completion(say(&log, "slow"));
            let l = log.clone();
            let fast = lp.completion(move |lp| {
                push(&l, "fast");
                let l = l.clone();
                tx.send(lp.completion(move |_| push(&l, "started by fast")))
                    .unwrap();
            });
            std::thread::spawn(move || fast.complete());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                slow.complete();
            });
            lp.run().unwrap();
            second.join().unwrap();
            assert_eq!(
                lines(&log),
                ["fast", "slow", "started by fast", "post"],
                "second worker slow: {slow_second}"
            );
            assert_eq!(lp.now(), 0);
        }
    }
}
