//! Immediates: the batch snapshot (R9.6, R9.7), clearing during a batch
//! (R9.4, R9.8), ref/unref (R9.3, R9.8), and their order against timeouts
//! from timer, I/O and immediate callbacks (§12.3, §12.4, §12.5). Virtual
//! clock only.

use std::{cell::RefCell, rc::Rc};

use timerloop::{EventLoop, Immediate, Stats, TimerError};

mod common;
use common::*;

/// R9.6/R10.3: immediates run FIFO; ticks, then microtasks, drain between
/// them, never before the first.
#[test]
fn immediates_run_fifo_with_ticks_between() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_immediate(move |lp| {
        push(&l, "I1");
        let (a, b) = (l.clone(), l.clone());
        lp.queue_microtask(move |_| push(&a, "micro1"));
        lp.next_tick(move |_| push(&b, "tick1"));
    });
    let l = log.clone();
    lp.set_immediate(move |_| push(&l, "I2"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I1", "tick1", "micro1", "I2"]);
    assert_eq!(lp.now(), 0, "immediates take no time");
    assert_eq!(lp.stats(), Stats::default());
}

/// R9.6/R9.7 (test-timers-immediate-queue.js): the batch is a snapshot;
/// an immediate queued during a batch waits for the next check phase, and
/// due timers run in between (§11 step 10).
///
/// ```text
/// iteration 1  check: I1 (queues I3, T = setTimeout(0), blocks 2 ms), I2
///              timers (t=2): T
/// iteration 2  check: I3
/// ```
#[test]
fn batch_is_a_snapshot_and_timers_run_between_batches() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_immediate(move |lp| {
        push(&l, format!("I1@{}", lp.now()));
        lp.set_immediate(once(&l, "I3"));
        lp.set_timeout(0, at(&l, "T"));
        lp.block(2);
    });
    lp.set_immediate(once(&log, "I2"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I1@0", "I2@2", "T@2", "I3@2"]);
}

/// R9.4 (test-timers-immediate.js): clearing a sibling of the running
/// batch prevents it; the rest of the batch still runs.
#[test]
fn clear_sibling_during_batch() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let victim: Rc<RefCell<Option<Immediate>>> = Rc::default();
    let (l, v) = (log.clone(), victim.clone());
    lp.set_immediate(move |lp| {
        push(&l, "I1");
        lp.clear_immediate(v.borrow().unwrap()).unwrap();
    });
    *victim.borrow_mut() = Some(lp.set_immediate(once(&log, "I2")));
    lp.set_immediate(once(&log, "I3"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I1", "I3@0"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// R9.8 (test-timers-next-tick.js): an immediate cleared from a tick that
/// runs between two immediates of the same batch never runs.
#[test]
fn clear_from_tick_between_immediates() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let victim: Rc<RefCell<Option<Immediate>>> = Rc::default();
    let (l, v) = (log.clone(), victim.clone());
    lp.set_immediate(move |lp| {
        push(&l, "I1");
        let (l, v) = (l.clone(), v.clone());
        lp.next_tick(move |lp| {
            push(&l, "tick");
            lp.clear_immediate(v.borrow().unwrap()).unwrap();
        });
    });
    *victim.borrow_mut() = Some(lp.set_immediate(once(&log, "I2")));
    lp.set_immediate(once(&log, "I3"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I1", "tick", "I3@0"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// R9.4: clearing the last immediate of a batch (and the one right after
/// the running one) from a microtask works the same.
#[test]
fn clear_rest_of_batch_from_microtask() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let rest: Rc<RefCell<Vec<Immediate>>> = Rc::default();
    let (l, r) = (log.clone(), rest.clone());
    lp.set_immediate(move |lp| {
        push(&l, "I1");
        let (l, r) = (l.clone(), r.clone());
        lp.queue_microtask(move |lp| {
            push(&l, "micro");
            for i in r.borrow().iter() {
                lp.clear_immediate(*i).unwrap();
            }
        });
    });
    let i2 = lp.set_immediate(once(&log, "I2"));
    let i3 = lp.set_immediate(once(&log, "I3"));
    rest.borrow_mut().extend([i2, i3]);
    lp.set_timeout(1, at(&log, "T"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I1", "micro", "T@1"]);
}

/// R9.7 + R9.4: an immediate queued for the next batch can be cleared by a
/// later immediate of the current batch.
#[test]
fn clear_immediate_queued_for_next_batch() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let next: Rc<RefCell<Option<Immediate>>> = Rc::default();
    let (l, n) = (log.clone(), next.clone());
    lp.set_immediate(move |lp| {
        push(&l, "I1");
        *n.borrow_mut() = Some(lp.set_immediate(once(&l, "I3")));
    });
    let (l, n) = (log.clone(), next.clone());
    lp.set_immediate(move |lp| {
        push(&l, "I2");
        lp.clear_immediate(n.borrow().unwrap()).unwrap();
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I1", "I2"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// test-timers-clearImmediate.js: an immediate clearing itself still runs
/// exactly once (its handle is already spent).
#[test]
fn immediate_clearing_itself_runs_once() {
    let runs = Rc::new(RefCell::new(0));
    let mut lp = EventLoop::with_virtual_clock();
    let me: Rc<RefCell<Option<Immediate>>> = Rc::default();
    let (r, m) = (runs.clone(), me.clone());
    *me.borrow_mut() = Some(lp.set_immediate(move |lp| {
        *r.borrow_mut() += 1;
        assert_eq!(
            lp.clear_immediate(m.borrow().unwrap()),
            Err(TimerError::Stale)
        );
    }));
    lp.run().unwrap();
    assert_eq!(*runs.borrow(), 1);
}

/// R9.8: an unref'd immediate never runs if nothing else keeps the loop
/// alive (verified on Node: `setImmediate(f).unref_timeout()` alone exits without
/// running f). Ref'ing it again makes it run.
#[test]
fn unrefed_immediate_alone_never_runs() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let i = lp.set_immediate(once(&log, "imm"));
    lp.unref_immediate(i).unwrap();
    assert!(!lp.immediate_has_ref(i));
    assert!(!lp.is_alive());
    lp.run().unwrap();
    assert!(log.borrow().is_empty());
    assert_eq!(lp.stats().immediates, 1, "still pending");
    lp.ref_immediate(i).unwrap();
    assert!(lp.immediate_has_ref(i));
    assert!(lp.is_alive());
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["imm@0"]);
    assert!(!lp.immediate_has_ref(i), "false once it ran");
    assert_eq!(lp.stats(), Stats::default());
}

/// R9.8 (test-timers-immediate-unref.js): an unref'd immediate runs while a
/// ref'd timer keeps the loop alive, but does not make the poll
/// non-blocking: it runs in the check phase after the poll waited for the
/// timer. Node (verified): `imm T`.
#[test]
fn unrefed_immediate_runs_while_a_timer_is_alive_but_poll_blocks() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let i = lp.set_immediate(once(&log, "imm"));
    lp.unref_immediate(i).unwrap();
    lp.set_timeout(5, at(&log, "T"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["imm@5", "T@5"]);
}

/// R9.8 / R11.3: a ref'd immediate makes the poll return at once.
#[test]
fn refed_immediate_makes_poll_non_blocking() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_immediate(once(&log, "imm"));
    lp.set_timeout(5, at(&log, "T"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["imm@0", "T@5"]);
}

/// R9.3: ref/unref toggle the immediate's ref state; the loop's liveness
/// follows the count of ref'd immediates.
#[test]
fn immediate_ref_unref_and_liveness() {
    let mut lp = EventLoop::with_virtual_clock();
    let a = lp.set_immediate(|_| {});
    let b = lp.set_immediate(|_| {});
    assert!(lp.immediate_has_ref(a) && lp.immediate_has_ref(b));
    lp.unref_immediate(a).unwrap();
    lp.unref_immediate(a).unwrap(); // twice: no double decrement
    assert!(lp.is_alive(), "b still refed");
    lp.unref_immediate(b).unwrap();
    assert!(!lp.is_alive());
    lp.ref_immediate(b).unwrap();
    assert!(lp.is_alive());
    lp.run().unwrap();
    assert_eq!(lp.stats(), Stats::default(), "the unref'd one ran too");
}

/// §12.4: inside a timer callback, a new immediate always runs before a new
/// `setTimeout(0)` (the timer cannot fire in the current pass; check comes
/// first in the next iteration).
#[test]
fn from_a_timer_immediate_before_timeout() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(1, move |lp| {
        lp.set_timeout(0, at(&l, "T"));
        lp.set_immediate(once(&l, "I"));
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I@1", "T@2"]);
}

/// §12.3: inside an I/O callback (a completion, run in the poll phase) the
/// immediate always runs first.
#[test]
fn from_an_io_callback_immediate_before_timeout() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    let c = lp.completion(move |lp| {
        lp.set_timeout(0, at(&l, "T"));
        lp.set_immediate(once(&l, "I"));
    });
    c.complete();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I@0", "T@1"]);
}

/// §12.5: inside an immediate, nested `setImmediate` vs `setTimeout(0)` is
/// nondeterministic on Node (38 IT / 2 TI): timers run right after check in
/// the same iteration, so it depends on whether 1 ms passed. On the virtual
/// clock no time passes, so the immediate wins.
#[test]
fn from_an_immediate_without_busy_work_immediate_first() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_immediate(move |lp| {
        lp.set_timeout(0, at(&l, "T"));
        lp.set_immediate(once(&l, "I"));
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I@0", "T@1"]);
}

/// §12.5: with ≥ 2 ms of busy work in the immediate, the timeout always
/// wins: it is due when the same iteration's timers phase runs.
#[test]
fn from_an_immediate_with_busy_work_timeout_first() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_immediate(move |lp| {
        lp.set_timeout(0, at(&l, "T"));
        lp.set_immediate(once(&l, "I"));
        lp.block(2);
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["T@2", "I@2"]);
}

/// §12.1: from the main body, `setTimeout(0)` vs `setImmediate` is
/// nondeterministic on Node; the timeout wins whenever the ms clock ticked
/// before the pre-loop timer pass (always with ≥ 2 ms of busy work).
#[test]
fn from_main_body_timeout_first_after_busy_work() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(0, at(&log, "T"));
    lp.set_immediate(once(&log, "I"));
    lp.block(2);
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["T@2", "I@2"]);
}

/// §12.1 on the virtual clock: with no time passing, the pre-loop timer
/// pass finds nothing due and the immediate runs first.
#[test]
fn from_main_body_immediate_first_when_no_time_passes() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(0, at(&log, "T"));
    lp.set_immediate(once(&log, "I"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I@0", "T@1"]);
}

/// What an immediate's callback captured is dropped when the immediate is
/// cleared and after it ran, whether the closure is stored inline (one
/// `Rc`) or boxed (an `Rc` and more). (A callback with nothing to drop is
/// forgotten rather than dropped; these are not.)
#[test]
fn captures_are_dropped_on_clear_and_after_running() {
    struct Probe(Rc<RefCell<Vec<&'static str>>>, &'static str);
    impl Drop for Probe {
        fn drop(&mut self) {
            self.0.borrow_mut().push(self.1);
        }
    }
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut lp = EventLoop::with_virtual_clock();
    let inline = Probe(log.clone(), "inline cleared");
    let i = lp.set_immediate(move |_| drop(inline));
    let boxed = (Probe(log.clone(), "boxed cleared"), [0_u64; 4]);
    let j = lp.set_immediate(move |_| drop(boxed));
    let ran = Probe(log.clone(), "inline ran");
    lp.set_immediate(move |_| {
        let _keep = &ran;
    });
    let ran_boxed = (Probe(log.clone(), "boxed ran"), [0_u64; 4]);
    lp.set_immediate(move |_| {
        let _keep = &ran_boxed;
    });
    lp.clear_immediate(i).unwrap();
    lp.clear_immediate(j).unwrap();
    assert_eq!(*log.borrow(), ["inline cleared", "boxed cleared"]);
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        ["inline cleared", "boxed cleared", "inline ran", "boxed ran"]
    );
    assert_eq!(Rc::strong_count(&log), 1);
}

/// An immediate's closure is stored in its slot when it is one word (an
/// `Rc`) and boxed when bigger; either way what it captured is let go
/// exactly once, however the immediate ends: run, cleared, failed by a
/// panic, or still pending when the loop is dropped.
#[test]
fn captures_inline_or_boxed_are_dropped_once() {
    let seen = Rc::new(RefCell::new(0_u64));
    let mut lp = EventLoop::with_virtual_clock();
    // Run: one word, and three.
    let s = seen.clone();
    lp.set_immediate(move |_: &mut EventLoop| *s.borrow_mut() += 1);
    let (s, pad) = (seen.clone(), [10_u64, 0, 0]);
    lp.set_immediate(move |_: &mut EventLoop| *s.borrow_mut() += pad[0]);
    // Cleared, both sizes.
    let s = seen.clone();
    let a = lp.set_immediate(move |_: &mut EventLoop| *s.borrow_mut() += 100);
    let (s, pad) = (seen.clone(), [1000_u64, 0, 0]);
    let b = lp.set_immediate(move |_: &mut EventLoop| *s.borrow_mut() += pad[0]);
    assert_eq!(Rc::strong_count(&seen), 5);
    lp.clear_immediate(a).unwrap();
    lp.clear_immediate(b).unwrap();
    assert_eq!(Rc::strong_count(&seen), 3);
    lp.run().unwrap();
    assert_eq!((*seen.borrow(), Rc::strong_count(&seen)), (11, 1));

    // A panicking one of each size: the loop reports the failure, and
    // what each captured is gone.
    for big in [false, true] {
        let s = seen.clone();
        let pad = [0_u64; 3];
        if big {
            lp.set_immediate(move |_: &mut EventLoop| -> Result<(), &str> {
                *s.borrow_mut() += pad[0] + 1;
                panic!("boom");
            });
        } else {
            lp.set_immediate(move |_: &mut EventLoop| -> Result<(), &str> {
                *s.borrow_mut() += 1;
                panic!("boom");
            });
        }
        assert!(lp.run().is_err());
        assert_eq!(Rc::strong_count(&seen), 1);
    }
    assert_eq!(*seen.borrow(), 13);

    // Pending when the loop goes.
    let s = seen.clone();
    lp.set_immediate(move |_: &mut EventLoop| *s.borrow_mut() = 0);
    let (s, pad) = (seen.clone(), [0_u64; 3]);
    lp.set_immediate(move |_: &mut EventLoop| *s.borrow_mut() = pad[0]);
    assert_eq!(Rc::strong_count(&seen), 3);
    drop(lp);
    assert_eq!((*seen.borrow(), Rc::strong_count(&seen)), (13, 1));
}

/// A future's immediate asked for in a callback is deferred; a plain
/// `set_immediate` after it is queued after it, whether or not the ring
/// is full at that moment (the fast path is taken only with nothing
/// deferred and room in the ring).
#[test]
fn a_set_immediate_after_a_deferred_future_immediate_queues_behind_it() {
    for pre in 0..40 {
        let log = new_log();
        let mut lp = EventLoop::with_virtual_clock();
        let l = log.clone();
        lp.set_timeout(1, move |lp| {
            for _ in 0..pre {
                lp.set_immediate(|_| {});
            }
            let f = timerloop::time::immediate();
            let l2 = l.clone();
            lp.spawn(async move {
                f.await;
                push(&l2, "future");
            });
            let l3 = l.clone();
            lp.set_immediate(move |_| push(&l3, "plain"));
        });
        lp.run().unwrap();
        assert_eq!(*log.borrow(), ["future", "plain"], "{pre} before");
    }
}

/// A ring that fills while its batch runs is compacted or grown in the
/// middle of the batch: every immediate of the batch still runs once, in
/// order, and those it set run in the next check phase, in order.
#[test]
fn a_ring_filled_during_its_batch_keeps_every_immediate_in_order() {
    for n in [1usize, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64] {
        let log = new_log();
        let mut lp = EventLoop::with_virtual_clock();
        for i in 0..n {
            let l = log.clone();
            lp.set_immediate(move |lp: &mut EventLoop| {
                push(&l, format!("a{i}"));
                for j in 0..2 {
                    let l = l.clone();
                    let h = lp.set_immediate(move |_| push(&l, format!("b{i}.{j}")));
                    if j == 1 && i % 3 == 0 {
                        lp.clear_immediate(h).unwrap();
                    }
                }
            });
        }
        lp.run().unwrap();
        let mut want: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
        for i in 0..n {
            want.push(format!("b{i}.0"));
            if i % 3 != 0 {
                want.push(format!("b{i}.1"));
            }
        }
        assert_eq!(*log.borrow(), want, "n {n}");
        assert_eq!(lp.stats(), Stats::default());
    }
}
