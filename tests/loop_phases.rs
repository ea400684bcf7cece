//! The loop (§11): phase order of completions (poll), immediates (check)
//! and timers; `run_once` / `run_nowait`; unref'd timers that bound the
//! poll without keeping the loop alive (R6.4); the virtual clock jumping to
//! deadlines; completions from other threads. Virtual clock only.

use std::{cell::RefCell, rc::Rc, sync::mpsc, thread, time::Duration};

use timerloop::{EventLoop, Stats};

mod common;
use common::*;

/// §11: one iteration is poll (I/O callbacks), check (immediates), then
/// timers; the pre-loop timer pass runs first in DEFAULT mode.
///
/// ```text
/// t=0  T0 = setTimeout(1), C = completion (completed), I = setImmediate; busy 1
/// run: pre-loop timers: T0 | poll: C | check: I | timers: T1 (set by C, due 2)
/// ```
#[test]
fn pre_loop_timers_then_poll_then_check_then_timers() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(1, at(&log, "T0"));
    let l = log.clone();
    let c = lp.completion(move |lp| {
        push(&l, format!("C@{}", lp.now()));
        lp.set_timeout(0, at(&l, "T1"));
        lp.set_immediate(once(&l, "I-from-C"));
    });
    c.complete();
    lp.set_immediate(once(&log, "I"));
    lp.block(1);
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["T0@1", "C@1", "I@1", "I-from-C@1", "T1@2"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// §11 step 10: timers due after the check phase run in the same
/// iteration, before the next iteration's poll.
#[test]
fn timers_run_after_check_in_the_same_iteration() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_immediate(move |lp| {
        push(&l, "I");
        lp.set_timeout(1, at(&l, "T"));
        let c = lp.completion(once(&l, "C"));
        c.complete();
        lp.block(3);
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I", "T@3", "C@3"]);
}

/// §11 (`uv_run`, step 3.5, ONCE mode): `run_once` runs one iteration, waiting in the poll phase (the
/// virtual clock jumps to the first deadline); it reports whether the loop
/// is still alive.
#[test]
fn run_once_runs_one_iteration() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(10, at(&log, "A"));
    lp.set_timeout(20, at(&log, "B"));
    assert!(lp.run_once().unwrap());
    assert_eq!(*log.borrow(), ["A@10"]);
    assert_eq!(lp.now(), 10);
    assert!(!lp.run_once().unwrap());
    assert_eq!(*log.borrow(), ["A@10", "B@20"]);
    assert!(!lp.run_once().unwrap(), "a dead loop returns at once");
    assert_eq!(lp.now(), 20);
}

/// §11 step 3.5: in ONCE mode the poll does not block when an immediate is
/// pending (the idle handle is active).
#[test]
fn run_once_with_pending_immediate_does_not_wait() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(10, at(&log, "T"));
    lp.set_immediate(once(&log, "I"));
    assert!(lp.run_once().unwrap());
    assert_eq!(*log.borrow(), ["I@0"]);
    assert_eq!(lp.now(), 0);
    assert!(!lp.run_once().unwrap());
    assert_eq!(*log.borrow(), ["I@0", "T@10"]);
}

/// `run_nowait` never waits: it runs what is ready and returns.
#[test]
fn run_nowait_does_not_wait() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(10, at(&log, "T"));
    lp.set_immediate(once(&log, "I"));
    assert!(lp.run_nowait().unwrap());
    assert_eq!(*log.borrow(), ["I@0"]);
    assert!(lp.run_nowait().unwrap());
    assert_eq!(*log.borrow(), ["I@0"], "the timer is not due");
    assert_eq!(lp.now(), 0, "no time passed");
    lp.block(10);
    assert!(!lp.run_nowait().unwrap());
    assert_eq!(*log.borrow(), ["I@0", "T@10"]);
}

/// The virtual clock jumps straight to the next deadline, however far.
#[test]
fn virtual_clock_jumps_to_deadlines() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(1_000_000, at(&log, "far"));
    lp.set_timeout(86_400_000, at(&log, "day"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["far@1000000", "day@86400000"]);
    assert_eq!(lp.now(), 86_400_000);
}

/// `block` moves virtual time without running anything; the loop time
/// seen by new timers starts from there.
#[test]
fn block_moves_time_for_new_timers() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.block(7);
    assert_eq!(lp.now(), 7);
    lp.set_timeout(3, at(&log, "T"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["T@10"]);
}

/// R6.4: an unref'd timer does not keep the loop alive: alone, the loop
/// ends at once and the timer never fires.
#[test]
fn unrefed_timer_alone_does_not_keep_the_loop_alive() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(10, at(&log, "T"));
    lp.unref_timeout(t).unwrap();
    assert!(!lp.is_alive());
    lp.run().unwrap();
    assert!(log.borrow().is_empty());
    assert_eq!(lp.now(), 0);
    assert!(lp.timeout_is_pending(t));
}

/// R6.4: an unref'd timer still bounds the poll timeout while something
/// else keeps the loop alive: here an I/O source that never becomes ready
/// (a pipe nobody writes). The poll wakes for the unref'd timer, whose
/// callback closes the source and lets the loop end.
#[test]
fn unrefed_timer_bounds_the_poll() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let (_tx, rx) = mio::unix::pipe::new().unwrap();
    let l = log.clone();
    let io = lp
        .insert_io(rx, mio::Interest::READABLE, move |_, _, _| {
            push(&l, "readable?!");
        })
        .unwrap();
    let l = log.clone();
    let t = lp.set_timeout(25, move |lp| {
        push(&l, format!("unref'd@{}", lp.now()));
        lp.close_io(io).unwrap();
    });
    lp.unref_timeout(t).unwrap();
    assert!(lp.is_alive(), "the I/O source keeps the loop alive");
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["unref'd@25"]);
    assert!(!lp.is_alive());
}

/// A completion finished by another thread runs in the poll phase and
/// takes no virtual time, however long the thread takes in real time: on
/// the virtual clock the poll phase waits (in real time) for requests that
/// were in flight when it started, so the order never depends on the
/// worker's speed. Timers due later still wait for their deadline.
///
/// ```text
/// iteration 1: poll: waits ~30 ms real, virtual t=0: C | check: I
/// iteration 2: poll jumps to t=10 | timers: T
/// ```
#[test]
fn completion_from_another_thread_takes_zero_virtual_time() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(10, at(&log, "T"));
    let l = log.clone();
    let c = lp.completion(move |lp| {
        push(&l, format!("C@{}", lp.now()));
        lp.set_timeout(0, at(&l, "T-from-C"));
    });
    let worker = thread::spawn(move || {
        thread::sleep(Duration::from_millis(30));
        c.complete();
    });
    lp.set_immediate(once(&log, "I"));
    lp.run().unwrap();
    worker.join().unwrap();
    assert_eq!(*log.borrow(), ["C@0", "I@0", "T-from-C@1", "T@10"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// Several completions finished by threads in any real-time order run in
/// one poll phase, in the order they completed, all at the same virtual
/// time.
#[test]
fn completions_from_threads_all_run_at_the_same_virtual_time() {
    let times = Rc::new(RefCell::new(Vec::new()));
    let mut lp = EventLoop::with_virtual_clock();
    lp.block(3);
    let mut workers = Vec::new();
    for ms in [20u64, 5, 10] {
        let t = times.clone();
        let c = lp.completion(move |lp| t.borrow_mut().push((ms, lp.now())));
        workers.push(thread::spawn(move || {
            thread::sleep(Duration::from_millis(ms));
            c.complete();
        }));
    }
    lp.run().unwrap();
    for w in workers {
        w.join().unwrap();
    }
    let mut got = times.borrow().clone();
    assert!(got.iter().all(|&(_, now)| now == 3), "{got:?}");
    got.sort_unstable();
    assert_eq!(got, [(5, 3), (10, 3), (20, 3)]);
}

/// Runs `f` on a fresh thread and reports whether it finished within
/// `secs` (a hung loop leaks its thread instead of hanging the test).
fn finishes_within(secs: u64, f: impl FnOnce() + Send + 'static) -> bool {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(secs)).is_ok()
}

/// `Completion`'s contract: dropping it uncompleted cancels the callback
/// and releases the loop, "so a lost request never hangs the loop".
#[test]
fn dropped_completion_cancels_and_releases_the_loop() {
    assert!(
        finishes_within(5, || {
            let mut lp = EventLoop::with_virtual_clock();
            let c = lp.completion(|_| -> () { panic!("cancelled callback ran") });
            assert!(lp.is_alive());
            drop(c);
            lp.run().unwrap();
            assert!(!lp.is_alive());
        }),
        "run() did not return after the completion was dropped"
    );
}

/// The same, with the completion dropped by a worker thread while the loop
/// is blocked in the poll phase waiting for it.
#[test]
fn completion_dropped_by_a_worker_releases_the_loop() {
    assert!(
        finishes_within(5, || {
            let mut lp = EventLoop::with_virtual_clock();
            let c = lp.completion(|_| -> () { panic!("cancelled callback ran") });
            let worker = thread::spawn(move || {
                thread::sleep(Duration::from_millis(20));
                drop(c);
            });
            lp.run().unwrap();
            worker.join().unwrap();
        }),
        "run() did not return after the completion was dropped"
    );
}

/// With a timer bounding the poll, a completion dropped by a worker is
/// cancelled (its callback never runs) and the loop goes on to the timer.
#[test]
fn completion_dropped_by_a_worker_with_a_timer_pending() {
    assert!(finishes_within(5, || {
        let fired = Rc::new(RefCell::new(None));
        let mut lp = EventLoop::with_virtual_clock();
        let f = fired.clone();
        lp.set_timeout(10, move |lp| *f.borrow_mut() = Some(lp.now()));
        let c = lp.completion(|_| -> () { panic!("cancelled callback ran") });
        let worker = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            drop(c);
        });
        lp.run().unwrap();
        worker.join().unwrap();
        assert_eq!(*fired.borrow(), Some(10));
        assert!(!lp.is_alive());
    }));
}

/// A closure posted through a `Remote` from another thread runs on the
/// loop's thread in the poll phase, as an I/O callback, with its ticks
/// drained after it; it does not keep the loop alive by itself.
#[test]
fn remote_post_runs_in_poll_phase() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let remote = lp.remote();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    thread::spawn(move || {
        remote
            .post(move |lp| {
                s.lock().unwrap().push(format!("posted@{}", lp.now()));
            })
            .unwrap();
    })
    .join()
    .unwrap();
    lp.set_timeout(5, at(&log, "T"));
    lp.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), ["posted@0"]);
    assert_eq!(*log.borrow(), ["T@5"]);
}
