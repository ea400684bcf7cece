//! Handles: generation-checked `Timeout` and `Immediate` handles never
//! touch a reused storage slot, handles of another loop are refused, and
//! the loop holds nothing once everything has ended. Virtual clock only.

use timerloop::{EventLoop, Stats, TimerError};

mod common;
use common::*;

/// The storage slot a handle points at (a timeout's arena key, an
/// immediate's position in its ring), read from its `Debug` output, to
/// check that a test really exercises slot reuse.
fn slot(h: impl std::fmt::Debug) -> String {
    let d = format!("{h:?}");
    let start = d
        .find("key: ")
        .or_else(|| d.find("seq: "))
        .expect("handle Debug shows its slot");
    d[start..].split(',').next().unwrap().to_owned()
}

/// Every operation on a stale timeout handle reports `Stale` or `false`.
fn assert_stale(lp: &mut EventLoop, old: timerloop::Timeout) {
    assert_eq!(lp.clear_timeout(old), Err(TimerError::Stale));
    assert_eq!(lp.clear_interval(old), Err(TimerError::Stale));
    assert!(!lp.timeout_is_pending(old));
    assert_eq!(lp.refresh(old), Err(TimerError::Stale));
    assert_eq!(lp.keep_timeout(old), Err(TimerError::Stale));
    assert_eq!(lp.unref_timeout(old), Err(TimerError::Stale));
    assert_eq!(lp.ref_timeout(old), Err(TimerError::Stale));
    assert!(!lp.timeout_has_ref(old));
}

/// A fired timeout's handle is stale; a new timer that reuses its slot is
/// untouched by anything done through the old handle.
#[test]
fn fired_handle_does_not_touch_reused_slot() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let old = lp.set_timeout(1, at(&log, "old"));
    lp.run().unwrap();
    let new = lp.set_timeout(5, at(&log, "new"));
    assert_eq!(slot(old), slot(new), "the slot is reused");
    assert_ne!(old, new, "with a new generation");
    assert_stale(&mut lp, old);
    assert!(lp.timeout_is_pending(new));
    assert!(lp.timeout_has_ref(new), "the old unref did not reach it");
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["old@1", "new@6"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// A cleared timeout's handle is stale; clearing it again does not clear
/// the timer now in its slot.
#[test]
fn cleared_handle_does_not_touch_reused_slot() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let old = lp.set_timeout(3, at(&log, "old"));
    lp.clear_timeout(old).unwrap();
    let new = lp.set_timeout(3, at(&log, "new"));
    assert_eq!(slot(old), slot(new));
    assert_stale(&mut lp, old);
    assert!(lp.timeout_is_pending(new));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["new@3"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// A handle cleared inside its own callback: its slot is freed when the
/// callback returns, and a timer created later (from another callback)
/// reuses it; the old handle does not reach the new timer.
#[test]
fn handle_cleared_in_own_callback_then_slot_reused() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    let first = lp.set_interval(2, move |lp| {
        l.borrow_mut().push(format!("iv@{}", lp.now()));
        let me = lp.current_timeout().unwrap();
        lp.clear_interval(me).unwrap();
        let l = l.clone();
        lp.set_timeout(1, move |lp| {
            l.borrow_mut().push(format!("next@{}", lp.now()));
            let fresh = lp.set_timeout(1, at(&l, "fresh"));
            assert_eq!(slot(me), slot(fresh), "the interval's slot is reused");
            assert_stale(lp, me);
            assert!(lp.timeout_is_pending(fresh));
            assert!(lp.timeout_has_ref(fresh));
        });
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["iv@2", "next@3", "fresh@4"]);
    assert_stale(&mut lp, first);
    assert_eq!(lp.stats(), Stats::default());
}

/// Many create/fire/clear cycles through the same few slots: a set of
/// stale handles never affects the live timers.
#[test]
fn many_reuse_cycles_keep_handles_apart() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let mut stale = Vec::new();
    for round in 0..50u64 {
        let t = lp.set_timeout(1, |_| {});
        if round % 2 == 0 {
            lp.clear_timeout(t).unwrap();
        } else {
            lp.run().unwrap();
        }
        stale.push(t);
    }
    let live = lp.set_timeout(1, at(&log, "live"));
    for &t in &stale {
        assert_stale(&mut lp, t);
    }
    assert!(lp.timeout_is_pending(live));
    lp.run().unwrap();
    assert_eq!(log.borrow().len(), 1);
    assert_eq!(lp.stats(), Stats::default());
}

/// Immediate handles are checked too: a run or cleared immediate's handle
/// is stale, and never reaches the immediate that took its place (a
/// cleared newest immediate gives its position back at once).
#[test]
fn stale_immediate_handle_does_not_touch_reused_slot() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let ran = lp.set_immediate(|_| {});
    lp.run().unwrap();
    let f = log.clone();
    let first = lp.set_immediate(move |_| f.borrow_mut().push("first".into()));
    let cleared = lp.set_immediate(|_| {});
    lp.clear_immediate(cleared).unwrap();
    let l = log.clone();
    let live = lp.set_immediate(move |_| l.borrow_mut().push("live".into()));
    assert_eq!(slot(cleared), slot(live), "the position is reused");
    assert_ne!(slot(first), slot(live));
    for old in [ran, cleared] {
        assert_ne!(old, live);
        assert_eq!(lp.clear_immediate(old), Err(TimerError::Stale));
        assert_eq!(lp.unref_immediate(old), Err(TimerError::Stale));
        assert_eq!(lp.ref_immediate(old), Err(TimerError::Stale));
        assert!(!lp.immediate_has_ref(old));
    }
    assert!(lp.immediate_has_ref(live));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["first", "live"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// Handles made by another loop are refused with `ForeignLoop`, even when
/// a timer of this loop sits in the same slot.
#[test]
fn foreign_loop_handles_are_refused() {
    let log = new_log();
    let mut a = EventLoop::with_virtual_clock();
    let mut b = EventLoop::with_virtual_clock();
    let ta = a.set_timeout(5, at(&log, "a"));
    let tb = b.set_timeout(5, at(&log, "b"));
    assert_eq!(slot(ta), slot(tb));
    assert_eq!(b.refresh(ta), Err(TimerError::ForeignLoop));
    assert_eq!(b.keep_timeout(ta), Err(TimerError::ForeignLoop));
    assert_eq!(b.unref_timeout(ta), Err(TimerError::ForeignLoop));
    assert_eq!(b.ref_timeout(ta), Err(TimerError::ForeignLoop));
    assert!(!b.timeout_has_ref(ta));
    assert_eq!(b.clear_timeout(ta), Err(TimerError::ForeignLoop));
    assert_eq!(b.clear_interval(ta), Err(TimerError::ForeignLoop));
    assert!(!b.timeout_is_pending(ta));
    let ia = a.set_immediate(|_| {});
    let ib = b.set_immediate(|_| {});
    assert_eq!(b.unref_immediate(ia), Err(TimerError::ForeignLoop));
    assert_eq!(b.ref_immediate(ia), Err(TimerError::ForeignLoop));
    assert!(!b.immediate_has_ref(ia));
    assert_eq!(b.clear_immediate(ia), Err(TimerError::ForeignLoop));
    // b's own timer and immediate in the same slots are untouched.
    assert!(b.timeout_is_pending(tb));
    assert!(b.immediate_has_ref(ib));
    b.run().unwrap();
    a.run().unwrap();
    assert_eq!(*log.borrow(), ["b@5", "a@5"]);
    assert_eq!(a.stats(), Stats::default());
    assert_eq!(b.stats(), Stats::default());
}

/// `stats()` is all zero once every kind of work has ended: timeouts,
/// intervals, immediates, ticks, microtasks, completions, cleared and
/// refreshed timers.
#[test]
fn stats_all_zero_after_everything_ends() {
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(5, |lp| {
        lp.next_tick(|lp| lp.queue_microtask(|_| {}));
    });
    lp.keep_timeout(t).unwrap();
    let cleared = lp.set_timeout(7, |_| {});
    let iv = lp.set_interval(3, |lp| {
        if lp.now() >= 9 {
            let me = lp.current_timeout().unwrap();
            lp.clear_interval(me).unwrap();
        }
    });
    lp.set_immediate(|lp| {
        lp.set_immediate(|_| {});
    });
    let c = lp.completion(|lp| {
        lp.set_timeout(1, |_| {});
    });
    c.complete();
    let s = lp.stats();
    assert_eq!(
        (s.timers, s.lists, s.refed_timers, s.immediates),
        (3, 3, 3, 1)
    );
    lp.clear_timeout(cleared).unwrap();
    lp.run().unwrap();
    assert!(!lp.timeout_is_pending(iv));
    assert_eq!(lp.stats().timers, 1, "the retained timeout stays");
    lp.refresh(t).unwrap();
    lp.run().unwrap();
    lp.release_timeout(t).unwrap();
    assert_eq!(lp.stats(), Stats::default());
    assert!(!lp.is_alive());
}

thread_local!(static PLAIN_RAN: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });

/// A plain callback: a function item, zero-sized, nothing to drop. The
/// loop frees such a timer or immediate without reading it (round 14).
fn plain_bump(_: &mut EventLoop) {
    PLAIN_RAN.with(|r| r.set(r.get() + 1));
}

/// Plain timers cleared from the middle of a list, unrefed or not, and
/// fired: the refed count, the lists, staleness and slot reuse are as
/// for any other timer.
#[test]
fn plain_timers_cleared_mid_list_and_fired_keep_the_books() {
    let mut lp = EventLoop::with_virtual_clock();
    let a = lp.set_timeout(5, plain_bump);
    let b = lp.set_timeout(5, plain_bump);
    let c = lp.set_timeout(5, plain_bump);
    let u = lp.set_timeout(7, plain_bump);
    lp.unref_timeout(u).unwrap();
    assert_eq!(lp.stats().refed_timers, 3);
    lp.clear_timeout(b).unwrap();
    assert_eq!((lp.stats().timers, lp.stats().refed_timers), (3, 2));
    assert_stale(&mut lp, b);
    let d = lp.set_timeout(5, plain_bump);
    assert_eq!(slot(d), slot(b), "the cleared timer's slot is reused");
    assert_ne!(b, d);
    assert!(lp.timeout_is_pending(d));
    assert_stale(&mut lp, b);
    // An unrefed timer leaves the refed count alone, and its emptied list
    // stays (Node deletes only refed timers' empty lists).
    lp.clear_timeout(u).unwrap();
    assert_eq!(lp.stats().refed_timers, 3);
    assert_eq!(lp.stats().lists, 2);
    for t in [a, c, d] {
        lp.clear_timeout(t).unwrap();
    }
    assert_eq!(lp.stats().lists, 1);
    lp.run().unwrap();
    assert_eq!(lp.now(), 0, "nothing refed was left");
    assert_eq!(PLAIN_RAN.with(|r| r.get()), 0);
    // Fired, refed and unrefed.
    let e = lp.set_timeout(3, plain_bump);
    let f = lp.set_timeout(3, plain_bump);
    lp.unref_timeout(f).unwrap();
    lp.run().unwrap();
    assert_eq!(PLAIN_RAN.with(|r| r.get()), 2);
    assert_stale(&mut lp, e);
    assert_stale(&mut lp, f);
    assert_eq!((lp.stats().timers, lp.stats().refed_timers), (0, 0));
}

/// A plain immediate cleared by an earlier one of the same batch does not
/// run, and the loop ends holding nothing.
#[test]
fn plain_immediate_cleared_in_its_batch() {
    let mut lp = EventLoop::with_virtual_clock();
    let later: &'static std::cell::Cell<Option<timerloop::Immediate>> =
        Box::leak(Box::new(std::cell::Cell::new(None)));
    lp.set_immediate(move |lp: &mut EventLoop| {
        lp.clear_immediate(later.get().unwrap()).unwrap();
    });
    let mid = lp.set_immediate(plain_bump);
    later.set(Some(mid));
    let last = lp.set_immediate(|_: &mut EventLoop| {});
    lp.unref_immediate(last).unwrap();
    lp.run().unwrap();
    assert_eq!(PLAIN_RAN.with(|r| r.get()), 0);
    assert_eq!(lp.clear_immediate(mid), Err(TimerError::Stale));
    assert_eq!(lp.stats(), Stats::default());
}

/// A closure of one word (an `Rc`, a counter) is stored in the timer's
/// slot, not boxed: an interval's state in it lasts from run to run, and
/// what it captured is let go exactly once whichever way the timer ends:
/// fired, cleared, cleared from its own callback, or dropped with the loop.
#[test]
fn one_word_closures_keep_their_state_and_drop_once() {
    use std::cell::Cell;
    use std::rc::Rc;
    let mut lp = EventLoop::with_virtual_clock();
    let seen = Rc::new(Cell::new(0_u32));

    // An interval counting in its own captured word (its one capture),
    // clearing itself on its third run.
    thread_local!(static LAST: Cell<u64> = const { Cell::new(0) });
    let mut runs = 0_u64;
    lp.set_interval(1, move |lp: &mut EventLoop| {
        runs += 1;
        LAST.with(|l| l.set(runs));
        if runs == 3 {
            let me = lp.current_timeout().expect("inside a timer");
            lp.clear_interval(me).unwrap();
        }
    });
    // And one holding only an `Rc`.
    let s = seen.clone();
    lp.set_interval(1, move |lp: &mut EventLoop| {
        s.set(s.get() + 50);
        if s.get() == 100 {
            let me = lp.current_timeout().expect("inside a timer");
            lp.clear_interval(me).unwrap();
        }
    });
    lp.run().unwrap();
    assert_eq!(LAST.with(Cell::get), 3);
    assert_eq!((seen.get(), Rc::strong_count(&seen)), (100, 1));

    // Fired, and cleared before firing.
    let s = seen.clone();
    lp.set_timeout(1, move |_: &mut EventLoop| s.set(s.get() + 1));
    let s = seen.clone();
    let t = lp.set_timeout(1, move |_: &mut EventLoop| s.set(s.get() + 1000));
    assert_eq!(Rc::strong_count(&seen), 3);
    lp.clear_timeout(t).unwrap();
    assert_eq!(Rc::strong_count(&seen), 2);
    lp.run().unwrap();
    assert_eq!((seen.get(), Rc::strong_count(&seen)), (101, 1));

    // Still pending when the loop goes.
    let s = seen.clone();
    lp.set_timeout(5, move |_: &mut EventLoop| s.set(0));
    assert_eq!(Rc::strong_count(&seen), 2);
    drop(lp);
    assert_eq!((seen.get(), Rc::strong_count(&seen)), (101, 1));
}

/// A kept timeout cleared after it fired and then refreshed is a zombie:
/// in its list again, keeping the loop alive, with no callback.
/// `release_timeout` takes it out of its list and the ref count before
/// freeing it (it freed it still linked, and the count leaked: the next
/// run found a freed timer in the list, or a new timer reusing its slot).
#[test]
fn releasing_a_zombie_unlinks_it_and_drops_its_ref() {
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(5, |_| {});
    lp.keep_timeout(t).unwrap();
    lp.run().unwrap(); // fired, kept
    lp.clear_timeout(t).unwrap(); // cleared after it fired
    lp.refresh(t).unwrap(); // a zombie: linked again, refed
    assert_eq!(lp.stats().refed_timers, 1);
    lp.release_timeout(t).unwrap();
    assert_eq!(lp.stats().refed_timers, 0);
    assert_eq!(lp.refresh(t), Err(TimerError::Stale));
    // A new timer may take its slot; the list must not still link it.
    let log = new_log();
    let l = log.clone();
    lp.set_timeout(5, move |lp| push(&l, format!("new@{}", lp.now())));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["new@10"]);
    assert_eq!(lp.stats(), Stats::default());
}
