//! Controlling timers: clear (R8.1, R8.2, §12.9), refresh (R8.4, R8.5),
//! ref/unref/has_ref (R8.6) and the loop's liveness. Virtual clock only.

use std::{cell::Cell, rc::Rc};

use timerloop::{EventLoop, Stats, Timeout, TimerError};

mod common;
use common::*;

type Slot = Rc<Cell<Option<Timeout>>>;

/// R8.1/R8.2: the first clear cancels and reports it; the second is a
/// no-op; the emptied ref'd list is dropped at once.
#[test]
fn clear_twice() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(10, at(&log, "T"));
    assert!(lp.timeout_is_pending(t));
    lp.clear_timeout(t).unwrap();
    assert_eq!(lp.clear_timeout(t), Err(TimerError::Stale));
    assert_eq!(lp.clear_interval(t), Err(TimerError::Stale));
    assert!(!lp.timeout_is_pending(t));
    assert_eq!(lp.stats(), Stats::default());
    assert!(!lp.is_alive());
    lp.run().unwrap();
    assert!(log.borrow().is_empty());
    assert_eq!(lp.now(), 0, "nothing to wait for");
}

/// R8.1: clearing a timeout inside its own callback is allowed (it reports
/// success once, then the handle is stale, as after any clear of a timer
/// that is not kept) and leaves nothing behind.
#[test]
fn clear_inside_own_callback() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(3, move |lp| {
        push(&l, "T");
        let me = lp.current_timeout().unwrap();
        lp.clear_timeout(me).unwrap();
        assert_eq!(lp.clear_timeout(me), Err(TimerError::Stale));
        assert_eq!(
            lp.refresh(me),
            Err(TimerError::Stale),
            "a cleared timer's handle is stale at once, even in its own callback"
        );
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["T"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// §12.9 (verified): a callback that clears due timers later in the same
/// pass prevents them, in its own list or another; the other timers of
/// those lists still run. Node: `A B2 C2 D`.
///
/// ```text
/// t=0 A(1) B(1) B2(1) C(2) C2(2) D(3); busy 5 ms
/// t=5 one pass: A clears B and C -> A B2 C2 D
/// ```
#[test]
fn clear_sibling_due_later_in_the_same_pass() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let (b, c): (Slot, Slot) = Default::default();
    let (l, bb, cc) = (log.clone(), b.clone(), c.clone());
    lp.set_timeout(1, move |lp| {
        push(&l, "A");
        lp.clear_timeout(bb.get().unwrap()).unwrap();
        lp.clear_timeout(cc.get().unwrap()).unwrap();
    });
    b.set(Some(lp.set_timeout(1, at(&log, "B"))));
    lp.set_timeout(1, at(&log, "B2"));
    c.set(Some(lp.set_timeout(2, at(&log, "C"))));
    lp.set_timeout(2, at(&log, "C2"));
    lp.set_timeout(3, at(&log, "D"));
    lp.block(5);
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["A", "B2@5", "C2@5", "D@5"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// §12.9: clearing every timer of a list due later in the pass removes the
/// whole list; the pass goes on with the next list.
#[test]
fn clear_whole_list_due_later_in_the_same_pass() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let c: Slot = Slot::default();
    let (l, cc) = (log.clone(), c.clone());
    lp.set_timeout(1, move |lp| {
        push(&l, "A");
        lp.clear_timeout(cc.get().unwrap()).unwrap();
        assert_eq!(
            lp.stats().lists,
            2,
            "list 1 (running) and list 3: list 2 is gone"
        );
    });
    c.set(Some(lp.set_timeout(2, at(&log, "C"))));
    lp.set_timeout(3, at(&log, "D"));
    lp.block(5);
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["A", "D@5"]);
}

/// R8.4 (verified): `t1 = setTimeout(A, 10); t2 = setTimeout(B, 10);
/// t1.refresh()` gives B, A: refresh moves the timer to the newest end of
/// its list.
#[test]
fn refresh_moves_behind_a_same_delay_timer() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let t1 = lp.set_timeout(10, at(&log, "A"));
    lp.set_timeout(10, at(&log, "B"));
    lp.refresh(t1).unwrap();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["B@10", "A@10"]);
}

/// R8.4: refresh restarts the countdown from now.
#[test]
fn refresh_restarts_the_countdown() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let t1 = lp.set_timeout(10, at(&log, "A"));
    lp.set_timeout(10, at(&log, "B"));
    lp.block(3);
    lp.refresh(t1).unwrap();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["B@10", "A@13"]);
}

/// R8.4 step 1 (verified): refresh of a cleared timer is a no-op; the
/// crate reports the handle as stale.
#[test]
fn refresh_of_a_cleared_timer_is_a_no_op() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(10, at(&log, "T"));
    lp.clear_timeout(t).unwrap();
    assert_eq!(lp.refresh(t), Err(TimerError::Stale));
    lp.run().unwrap();
    assert!(log.borrow().is_empty());
    assert_eq!(lp.stats(), Stats::default());
}

/// R8.4 step 1: a retained timer that was cleared while pending is
/// refreshed as a no-op (`_idleTimeout` is -1); its storage stays until
/// `release`, which makes the handle stale.
#[test]
fn refresh_of_a_cleared_retained_timer_does_not_fire() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(10, at(&log, "T"));
    lp.keep_timeout(t).unwrap();
    lp.clear_timeout(t).unwrap();
    assert_eq!(lp.refresh(t), Ok(()));
    assert!(!lp.timeout_is_pending(t));
    assert!(
        lp.timeout_has_ref(t),
        "Node keeps kRefed on a cleared timer"
    );
    lp.run().unwrap();
    assert!(log.borrow().is_empty());
    assert_eq!(lp.stats().timers, 1);
    lp.release_timeout(t).unwrap();
    assert!(lp.refresh(t).is_err());
    assert_eq!(lp.stats(), Stats::default());
}

/// R8.2 step 1, R8.4: clearing a retained timeout after it fired leaves
/// `_idleTimeout` alone (unenroll returns early), so a refresh re-arms it:
/// it never runs (its callback is gone) but keeps the loop alive until its
/// expiry, as in Node (found by differential fuzzing, seed 8000339).
#[test]
fn refresh_after_clearing_a_fired_retained_timeout_keeps_the_loop_alive() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(5, at(&log, "T"));
    lp.keep_timeout(t).unwrap();
    lp.run().unwrap();
    lp.clear_timeout(t).unwrap();
    lp.refresh(t).unwrap();
    assert!(lp.is_alive());
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["T@5"]);
    assert_eq!(lp.now(), 10, "the loop waited for the dead timer");
    lp.release_timeout(t).unwrap();
    assert_eq!(lp.stats(), Stats::default());
}

/// R8.4 step 3 (verified): refreshing a timeout that already fired makes
/// it fire again, when its storage was retained.
#[test]
fn refresh_of_a_retained_fired_timeout_fires_again() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(5, at(&log, "T"));
    lp.keep_timeout(t).unwrap();
    lp.run().unwrap();
    assert_eq!(lp.stats().refed_timers, 0, "fired: no longer refed");
    assert!(!lp.timeout_is_pending(t));
    assert!(lp.timeout_has_ref(t));
    lp.block(2);
    lp.refresh(t).unwrap();
    assert!(lp.timeout_is_pending(t));
    assert!(
        lp.is_alive(),
        "a refreshed ref'd timeout keeps the loop alive"
    );
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["T@5", "T@12"]);
    lp.release_timeout(t)
        .expect("a kept timer is freed by release_timeout");
    assert_eq!(lp.stats(), Stats::default());
}

/// `release_timeout` of a timer that is not kept is `clear_timeout`: it
/// succeeds (pending, or running and releasing itself), the timer never
/// runs again, and only a handle that was stale before says so.
#[test]
fn release_of_a_timer_that_is_not_kept() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(5, at(&log, "T"));
    assert_eq!(lp.release_timeout(t), Ok(()));
    assert_eq!(lp.stats(), Stats::default());
    assert_eq!(lp.release_timeout(t), Err(TimerError::Stale));
    let l = log.clone();
    let slot = Rc::new(Cell::new(None));
    let s = slot.clone();
    let i = lp.set_interval(3, move |lp| {
        push(&l, format!("I@{}", lp.now()));
        assert_eq!(lp.release_timeout(s.get().unwrap()), Ok(()));
    });
    slot.set(Some(i));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["I@3"]);
    assert_eq!(lp.stats(), Stats::default());
    assert_eq!(lp.release_timeout(i), Err(TimerError::Stale));
}

/// R8.4 step 3: without `retain`, a fired timeout's handle is stale and
/// refresh says so instead of touching anything.
#[test]
fn refresh_of_a_fired_timeout_without_retain_is_stale() {
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(5, |_| {});
    lp.run().unwrap();
    assert_eq!(lp.refresh(t), Err(TimerError::Stale));
    assert_eq!(lp.stats(), Stats::default());
}

/// R8.4 step 3 (verified): the refresh of a fired timeout fires it again
/// even when it comes from another timer in the same pass. Node:
/// `a = setTimeout(A, 10); setTimeout(() => { B; a.refresh() }, 10)` gives
/// A B A.
#[test]
fn refresh_from_another_timer_in_the_same_pass() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let a = lp.set_timeout(10, at(&log, "A"));
    lp.keep_timeout(a).unwrap();
    let l = log.clone();
    lp.set_timeout(10, move |lp| {
        push(&l, format!("B@{}", lp.now()));
        lp.refresh(a).unwrap();
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["A@10", "B@10", "A@20"]);
    lp.release_timeout(a).unwrap();
    assert_eq!(lp.stats(), Stats::default());
}

/// R8.4 + R5.3: refreshing a timer that is still pending later in the same
/// pass moves it out of the pass: it fires a full delay later.
#[test]
fn refresh_of_a_pending_sibling_in_the_same_pass_postpones_it() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let b: Slot = Slot::default();
    let (l, bb) = (log.clone(), b.clone());
    lp.set_timeout(10, move |lp| {
        push(&l, "A");
        lp.refresh(bb.get().unwrap()).unwrap();
    });
    b.set(Some(lp.set_timeout(10, at(&log, "B"))));
    lp.set_timeout(10, at(&log, "C"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["A", "C@10", "B@20"]);
}

/// R8.5 (test-timers-refresh-in-callback.js): refresh inside a timeout's
/// own callback makes it fire again and keeps the loop alive.
#[test]
fn refresh_in_own_timeout_callback_fires_again() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    let first = Rc::new(Cell::new(true));
    lp.set_timeout(10, move |lp| {
        push(&l, format!("T@{}", lp.now()));
        if first.replace(false) {
            let me = lp.current_timeout().unwrap();
            lp.refresh(me).unwrap();
            assert!(lp.timeout_has_ref(me));
        }
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["T@10", "T@20"]);
    assert_eq!(lp.stats(), Stats::default());
}

/// R8.6: has_ref starts true; unref/ref toggle it and are idempotent.
#[test]
fn has_ref_follows_ref_and_unref() {
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(10, |_| {});
    assert!(lp.timeout_has_ref(t));
    assert_eq!(lp.stats().refed_timers, 1);
    lp.unref_timeout(t).unwrap();
    lp.unref_timeout(t).unwrap();
    assert!(!lp.timeout_has_ref(t));
    assert_eq!(lp.stats().refed_timers, 0);
    assert!(!lp.is_alive());
    lp.ref_timeout(t).unwrap();
    lp.ref_timeout(t).unwrap();
    assert!(lp.timeout_has_ref(t));
    assert_eq!(lp.stats().refed_timers, 1);
    assert!(lp.is_alive());
    lp.run().unwrap();
    assert_eq!(lp.now(), 10);
}

/// R8.6 (verified): an unref'd 10 ms timer fires while a ref'd 30 ms timer
/// is alive; an unref'd 40 ms timer never fires, and the loop ends at 30.
#[test]
fn unrefed_timers_fire_only_while_the_loop_lives() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let short = lp.set_timeout(10, at(&log, "unref10"));
    lp.unref_timeout(short).unwrap();
    lp.set_timeout(30, at(&log, "ref30"));
    let long = lp.set_timeout(40, at(&log, "unref40"));
    lp.unref_timeout(long).unwrap();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["unref10@10", "ref30@30"]);
    assert_eq!(lp.now(), 30);
    assert!(lp.timeout_is_pending(long));
    assert!(!lp.is_alive());
}

/// R8.6: unref never moves a timer; ref'ing it back before its time makes
/// it fire at its original due time.
#[test]
fn unref_then_ref_keeps_due_time() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let t = lp.set_timeout(10, at(&log, "T"));
    lp.set_timeout(20, at(&log, "U"));
    lp.unref_timeout(t).unwrap();
    lp.block(4);
    lp.ref_timeout(t).unwrap();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["T@10", "U@20"]);
}

/// R8.6 (test-timers-unref.js): `this.unref_timeout()` inside a ref'd interval
/// lets the loop end; a timer ref'd from a callback keeps it alive.
#[test]
fn unref_and_ref_from_callbacks_change_liveness() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let late = lp.set_timeout(50, at(&log, "late"));
    lp.unref_timeout(late).unwrap();
    let l = log.clone();
    lp.set_interval(10, move |lp| {
        push(&l, format!("iv@{}", lp.now()));
        let me = lp.current_timeout().unwrap();
        if lp.now() == 20 {
            lp.unref_timeout(me).unwrap();
            lp.ref_timeout(late).unwrap();
        }
    });
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        ["iv@10", "iv@20", "iv@30", "iv@40", "late@50", "iv@50"]
    );
    assert!(!lp.is_alive(), "only the unref'd interval is left");
}

/// R6.4 / R2.5: the loop's liveness follows the count of ref'd timers,
/// through creation, firing, clearing and unref.
#[test]
fn loop_liveness_tracks_refed_timers() {
    let mut lp = EventLoop::with_virtual_clock();
    assert!(!lp.is_alive());
    let a = lp.set_timeout(5, |_| {});
    let b = lp.set_timeout(6, |_| {});
    assert!(lp.is_alive());
    lp.unref_timeout(a).unwrap();
    assert!(lp.is_alive());
    lp.clear_timeout(b).unwrap();
    assert!(!lp.is_alive());
    lp.ref_timeout(a).unwrap();
    assert!(lp.is_alive());
    lp.run().unwrap();
    assert!(!lp.is_alive());
    assert_eq!(lp.now(), 5);
    assert_eq!(lp.stats(), Stats::default());
}

/// `stop()` from the work a run does before its first iteration (a tick or
/// microtask of the main body, the uncaught handler for one of them, a
/// timer of a pass a failure interrupted and the run resumes) makes that
/// run return before its first iteration, the rest queued; `stop()` where
/// no run is under way does nothing. Found by round 35's audit: the run
/// forgot every stop made before its first iteration, so such a stop was
/// lost (with an interval pending, the run never returned).
#[test]
fn stop_from_the_work_before_the_first_iteration_ends_the_run() {
    type Stopper = fn(&mut EventLoop);
    let stoppers: [(&str, Stopper); 3] = [
        ("tick", |lp| lp.next_tick(|lp| lp.stop())),
        ("microtask", |lp| lp.queue_microtask(|lp| lp.stop())),
        ("uncaught handler", |lp| {
            lp.set_uncaught_handler(|lp, _| lp.stop());
            lp.next_tick(|_| Err::<(), _>("tick failed"));
        }),
    ];
    for (what, stopper) in stoppers {
        let log = new_log();
        let mut lp = EventLoop::with_virtual_clock();
        lp.set_timeout(10, at(&log, "t"));
        stopper(&mut lp);
        lp.run().unwrap();
        assert_eq!(lp.now(), 0, "{what}: returned before the first iteration");
        assert!(log.borrow().is_empty(), "{what}");
        lp.run().unwrap();
        assert_eq!(*log.borrow(), ["t@10"], "{what}: the next run goes on");
    }

    // A timer of a resumed pass.
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(5, |_| Err::<(), _>("failed"));
    lp.set_timeout(5, |lp| lp.stop());
    lp.set_timeout(5, at(&log, "a"));
    lp.set_timeout(10, at(&log, "b"));
    assert!(lp.run().is_err());
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        ["a@5"],
        "the pass finished, then the run returned"
    );
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["a@5", "b@10"]);

    // Where no run is under way.
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(5, at(&log, "c"));
    lp.stop();
    lp.enter(|lp| lp.stop()).unwrap();
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        ["c@5"],
        "a stop from before the run is not its own"
    );
}
