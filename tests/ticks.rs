//! `next_tick` and microtasks: the drain orders of R10.2 and R10.3, ticks
//! between timers, lists and immediates but never before the first, deep
//! tick chains without stack growth, and §12.10. `queue_microtask` stands
//! for both promise jobs and `queueMicrotask` jobs (one FIFO queue, R10.5).
//! Virtual clock only.

use std::{cell::Cell, cell::RefCell, rc::Rc};

use timerloop::{EventLoop, Stats};

mod common;
use common::*;

/// A repeatable callback that logs `name` (for timeouts).
fn said(log: &Log, name: &'static str) -> impl FnMut(&mut EventLoop) + 'static {
    let log = log.clone();
    move |_| push(&log, name)
}

/// R10.2 (CJS main, verified): `sync tick1 tick2 tick1b p1 p3 qm
/// pFromTick1 p2 tickFromP1`: all ticks (including ticks queued by ticks),
/// then one full microtask checkpoint (including chained jobs), then the
/// ticks microtasks queued.
///
/// ```js
/// Promise.resolve().then(() => { log('p1'); process.nextTick(tickFromP1);
///                                Promise.resolve().then(p2) });
/// process.nextTick(() => { log('tick1'); process.nextTick(tick1b);
///                          Promise.resolve().then(pFromTick1) });
/// Promise.resolve().then(p3); queueMicrotask(qm); process.nextTick(tick2);
/// log('sync');
/// ```
#[test]
fn main_body_drain_order() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.enter(move |lp| {
        let l1 = l.clone();
        lp.queue_microtask(move |lp| {
            push(&l1, "p1");
            lp.next_tick(say(&l1, "tickFromP1"));
            lp.queue_microtask(say(&l1, "p2"));
        });
        let l2 = l.clone();
        lp.next_tick(move |lp| {
            push(&l2, "tick1");
            lp.next_tick(say(&l2, "tick1b"));
            lp.queue_microtask(say(&l2, "pFromTick1"));
        });
        lp.queue_microtask(say(&l, "p3"));
        lp.queue_microtask(say(&l, "qm"));
        lp.next_tick(say(&l, "tick2"));
        push(&l, "sync");
    })
    .unwrap();
    assert_eq!(
        *log.borrow(),
        [
            "sync",
            "tick1",
            "tick2",
            "tick1b",
            "p1",
            "p3",
            "qm",
            "pFromTick1",
            "p2",
            "tickFromP1"
        ]
    );
    assert_eq!(lp.stats(), Stats::default());
}

/// R10.4 (the bootstrap scope) with R10.2: what the main body queues
/// outside `enter` drains when the loop starts, before any timer or
/// immediate.
#[test]
fn main_body_ticks_drain_when_run_starts() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(0, said(&log, "T"));
    lp.set_immediate(say(&log, "I"));
    lp.queue_microtask(say(&log, "micro"));
    lp.next_tick(say(&log, "tick"));
    lp.block(5);
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["tick", "micro", "T", "I"]);
}

/// R10.3 (verified): ticks and microtasks drain between timers, between
/// lists and between immediates, and after the last of each:
/// `t1 tick1 p1 q1 t2 tick2 p2 t3(list2) tick3 i1 itick1 ip1 i2 itick2 i3`.
///
/// ```text
/// t=0  t1, t2 = setTimeout(1); t3 = setTimeout(2); i1, i2 = setImmediate
///      busy 5 ms
/// t=5  pre-loop timers pass: list 1 (t1, t2), list 2 (t3)
///      check: i1 (queues i3), i2;   next check: i3
/// ```
#[test]
fn drains_between_timers_lists_and_immediates() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(1, move |lp| {
        push(&l, "t1");
        lp.next_tick(say(&l, "tick1"));
        lp.queue_microtask(say(&l, "p1"));
        lp.queue_microtask(say(&l, "q1"));
    });
    let l = log.clone();
    lp.set_timeout(1, move |lp| {
        push(&l, "t2");
        lp.next_tick(say(&l, "tick2"));
        lp.queue_microtask(say(&l, "p2"));
    });
    let l = log.clone();
    lp.set_timeout(2, move |lp| {
        push(&l, "t3");
        lp.next_tick(say(&l, "tick3"));
    });
    let l = log.clone();
    lp.set_immediate(move |lp| {
        push(&l, "i1");
        lp.next_tick(say(&l, "itick1"));
        lp.queue_microtask(say(&l, "ip1"));
        lp.set_immediate(say(&l, "i3"));
    });
    let l = log.clone();
    lp.set_immediate(move |lp| {
        push(&l, "i2");
        lp.next_tick(say(&l, "itick2"));
    });
    lp.block(5);
    lp.run().unwrap();
    assert_eq!(
        log.borrow().join(" "),
        "t1 tick1 p1 q1 t2 tick2 p2 t3 tick3 i1 itick1 ip1 i2 itick2 i3"
    );
}

/// §12.8 / R10.3: within a timer, its ticks (including nested ones), then
/// its microtasks, then the next timer.
#[test]
fn nested_ticks_run_before_microtasks_and_the_next_timer() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(1, move |lp| {
        push(&l, "A");
        lp.queue_microtask(say(&l, "pA"));
        let l2 = l.clone();
        lp.next_tick(move |lp| {
            push(&l2, "tickA");
            lp.next_tick(say(&l2, "tickA-nested"));
        });
    });
    lp.set_timeout(1, said(&log, "B"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["A", "tickA", "tickA-nested", "pA", "B"]);
}

/// R5.2 step 2 / R7.2: ticks never drain before the first timer of a
/// processTimers call. The only way to have ticks pending then is a
/// handled failure: the failing scope does not drain, and the re-call with
/// the same `now` runs the next timer first.
#[test]
fn ticks_never_run_before_the_first_timer_of_a_pass() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    catch_into(&mut lp, &log);
    let l = log.clone();
    lp.set_timeout(1, move |lp| {
        push(&l, "A");
        lp.next_tick(say(&l, "tickA"));
        Err::<(), _>("A")
    });
    lp.set_timeout(1, said(&log, "B"));
    lp.set_timeout(1, said(&log, "C"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["A", "caught:A", "B", "tickA", "C"]);
}

/// R9.6 / R7.3: likewise ticks never drain before the first immediate of a
/// processImmediate call.
#[test]
fn ticks_never_run_before_the_first_immediate_of_a_batch() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    catch_into(&mut lp, &log);
    let l = log.clone();
    lp.set_immediate(move |lp| {
        push(&l, "I1");
        lp.next_tick(say(&l, "tick1"));
        Err::<(), _>("I1")
    });
    lp.set_immediate(say(&log, "I2"));
    lp.set_immediate(say(&log, "I3"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I1", "caught:I1", "I2", "tick1", "I3"]);
}

/// R10.2 / §12.10 (test-next-tick-intentional-starvation.js, bounded): a
/// chain of 100 000 ticks, each queueing the next, drains in one go
/// without growing the stack, and starves a timer that was due all along.
#[test]
fn hundred_thousand_nested_ticks_drain_without_stack_overflow() {
    const N: u32 = 100_000;
    fn chain(count: Rc<Cell<u32>>) -> impl FnOnce(&mut EventLoop) + 'static {
        move |lp| {
            count.set(count.get() + 1);
            if count.get() < N {
                lp.next_tick(chain(count));
            }
        }
    }
    let count = Rc::new(Cell::new(0));
    let seen_by_timer = Rc::new(Cell::new(0));
    let mut lp = EventLoop::with_virtual_clock();
    let (c, s) = (count.clone(), seen_by_timer.clone());
    lp.set_timeout(0, move |_| s.set(c.get()));
    lp.block(1);
    lp.next_tick(chain(count.clone()));
    lp.run().unwrap();
    assert_eq!(count.get(), N);
    assert_eq!(
        seen_by_timer.get(),
        N,
        "the timer ran after the whole chain"
    );
    assert_eq!(lp.stats(), Stats::default());
}

/// R10.2: a chain alternating microtask -> tick -> microtask ... 100 000
/// links deep, started from a timer, drains before the next timer without
/// stack overflow.
#[test]
fn tick_chain_queued_from_microtasks_drains() {
    const N: u32 = 100_000;
    fn micro(count: Rc<Cell<u32>>) -> impl FnOnce(&mut EventLoop) + 'static {
        move |lp| {
            count.set(count.get() + 1);
            if count.get() < N {
                lp.next_tick(tick(count));
            }
        }
    }
    fn tick(count: Rc<Cell<u32>>) -> impl FnOnce(&mut EventLoop) + 'static {
        move |lp| {
            count.set(count.get() + 1);
            if count.get() < N {
                lp.queue_microtask(micro(count));
            }
        }
    }
    let count = Rc::new(Cell::new(0));
    let seen = Rc::new(Cell::new(0));
    let mut lp = EventLoop::with_virtual_clock();
    let c = count.clone();
    lp.set_timeout(1, move |lp| lp.queue_microtask(micro(c.clone())));
    let (c, s) = (count.clone(), seen.clone());
    lp.set_timeout(1, move |_| s.set(c.get()));
    lp.run().unwrap();
    assert_eq!(count.get(), N);
    assert_eq!(seen.get(), N);
}

/// test-next-tick-fixed-queue-regression.js: more than 2048 ticks queued
/// from one microtask all drain in the same pass, in order.
#[test]
fn many_ticks_queued_from_a_microtask_drain_in_one_pass() {
    let order = Rc::new(RefCell::new(Vec::new()));
    let mut lp = EventLoop::with_virtual_clock();
    let o = order.clone();
    lp.queue_microtask(move |lp| {
        for i in 0..5000u32 {
            let o = o.clone();
            lp.next_tick(move |_| o.borrow_mut().push(i));
        }
    });
    let o = order.clone();
    lp.set_immediate(move |_| o.borrow_mut().push(u32::MAX));
    lp.run().unwrap();
    let mut want: Vec<u32> = (0..5000).collect();
    want.push(u32::MAX);
    assert_eq!(*order.borrow(), want);
}

/// §12.10 (test-next-tick-ordering2.js): `nextTick(() => { setTimeout(0);
/// nextTick() })`: the nested tick runs before the timeout.
#[test]
fn tick_before_timeout_scheduled_from_a_tick() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.next_tick(move |lp| {
        lp.set_timeout(0, said(&l, "setTimeout"));
        lp.next_tick(say(&l, "nextTick"));
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["nextTick", "setTimeout"]);
}

/// test-next-tick-ordering.js: ticks queued by a timer run before 0 ms
/// timers queued by the same timer, and the timeouts queued by ticks keep
/// their order.
#[test]
fn ticks_run_before_zero_ms_timers() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(0, move |lp| {
        lp.set_timeout(0, said(&l, "timeout"));
        let l2 = l.clone();
        lp.next_tick(move |lp| {
            push(&l2, "tick");
            lp.set_timeout(0, said(&l2, "timeout-from-tick"));
        });
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["tick", "timeout", "timeout-from-tick"]);
}

/// R10.4: an I/O callback's ticks and microtasks drain right after it, in
/// the poll phase, before the check phase's immediates.
#[test]
fn io_callback_ticks_drain_before_immediates() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    let c = lp.completion(move |lp| {
        push(&l, "io");
        lp.set_immediate(say(&l, "imm"));
        lp.queue_microtask(say(&l, "micro"));
        lp.next_tick(say(&l, "tick"));
    });
    c.complete();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["io", "tick", "micro", "imm"]);
}

/// R5.2 step 2 with R8.1/R8.2 (test-timers-next-tick.js): a timeout
/// cleared from a tick that runs between two timers of the same list never
/// runs.
#[test]
fn timeout_cleared_from_tick_between_timers() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let victim = Rc::new(Cell::new(None));
    let (l, v) = (log.clone(), victim.clone());
    lp.set_timeout(1, move |lp| {
        push(&l, "A");
        let v = v.clone();
        lp.next_tick(move |lp| {
            lp.clear_timeout(v.get().unwrap()).unwrap();
        });
    });
    victim.set(Some(lp.set_timeout(1, said(&log, "B"))));
    lp.set_timeout(1, said(&log, "C"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["A", "C"]);
    assert_eq!(lp.stats(), Stats::default());
}
