//! A timer's storage (round 21's 32-byte slot): its `meta` word holds the
//! list's slot while the timer is linked and its duration while it is
//! not, and its callback is kept split (a data word and a 32-bit code of
//! its table). Each test reaches a path where reading the wrong meaning
//! would change when (or whether) a timer fires, or where the split
//! callback must be dropped at the right moment.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::time::Duration;

use timerloop::{EventLoop, Timeout, time};

type Log = Rc<RefCell<Vec<(&'static str, u64)>>>;

fn push(log: &Log, name: &'static str) -> impl FnMut(&mut EventLoop) + 'static {
    let l = log.clone();
    move |lp: &mut EventLoop| l.borrow_mut().push((name, lp.now()))
}

/// A kept timeout of a far duration (>= 2^22 ms: a slot from the far
/// pages, reused by any far duration) fires; its list goes; another far
/// duration takes the same slot; refreshing the kept one must re-list it
/// under its own duration, not under the slot's new one.
#[test]
fn refresh_of_a_fired_kept_timeout_after_its_list_slot_was_reused() {
    let mut lp = EventLoop::with_virtual_clock();
    let log: Log = Rc::default();
    let d1: u64 = 5_000_000; // far (>= 2^22)
    let d2: u64 = 6_000_000;
    let a = lp.set_timeout(d1 as f64, push(&log, "a"));
    lp.keep_timeout(a).unwrap();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), [("a", d1)]);
    assert_eq!(lp.stats().lists, 0, "a's list went");
    // Takes a's old far slot.
    lp.set_timeout(d2 as f64, push(&log, "b"));
    // And a small duration too, to have a direct slot about.
    lp.set_timeout(3, push(&log, "c"));
    let t0 = lp.now();
    lp.refresh(a).unwrap();
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        [("a", d1), ("c", t0 + 3), ("a", t0 + d1), ("b", t0 + d2)]
    );
    // Once more, through clear (FiredCleared) and a zombie's refresh.
    lp.clear_timeout(a).unwrap();
    let t1 = lp.now();
    lp.refresh(a).unwrap(); // a zombie: keeps the loop alive, never runs
    lp.set_timeout(d2 as f64, push(&log, "b2"));
    lp.run().unwrap();
    assert_eq!(log.borrow().last(), Some(&("b2", t1 + d2)));
    assert_eq!(lp.now(), t1 + d2);
    lp.refresh(a).unwrap(); // a zombie again, with the right duration
    lp.run().unwrap();
    assert_eq!(lp.now(), t1 + d2 + d1, "the zombie kept its duration");
    lp.release_timeout(a).unwrap();
    assert_eq!(lp.stats().timers, 0);
}

/// An interval that refreshes itself, and then is refreshed again from
/// outside; it stays on its grid and keeps its period.
#[test]
fn an_interval_refreshing_itself_keeps_its_period() {
    let mut lp = EventLoop::with_virtual_clock();
    let runs: Rc<RefCell<Vec<u64>>> = Rc::default();
    let r = runs.clone();
    let iv = lp.set_interval(7, move |lp| {
        r.borrow_mut().push(lp.now());
        let me = lp.current_timeout().unwrap();
        lp.refresh(me).unwrap();
        lp.refresh(me).unwrap();
        if r.borrow().len() == 3 {
            lp.clear_interval(me).unwrap();
        }
    });
    // Another list in the map, so a wrong slot would point at a real list.
    lp.set_timeout(1, |_| {});
    lp.run().unwrap();
    assert_eq!(*runs.borrow(), [7, 14, 21]);
    assert!(lp.refresh(iv).is_err());
}

/// A kept timeout refreshed by its own callback, then refreshed once it
/// fired again: it keeps its duration each time.
#[test]
fn a_kept_timeout_refreshed_by_its_callback_then_from_outside() {
    let mut lp = EventLoop::with_virtual_clock();
    let runs: Rc<RefCell<Vec<u64>>> = Rc::default();
    let r = runs.clone();
    let t = lp.set_timeout(9, move |lp| {
        r.borrow_mut().push(lp.now());
        if r.borrow().len() == 1 {
            let me = lp.current_timeout().unwrap();
            lp.refresh(me).unwrap();
        }
    });
    lp.keep_timeout(t).unwrap();
    lp.set_timeout(2, |_| {});
    lp.run().unwrap();
    assert_eq!(*runs.borrow(), [9, 18]);
    lp.refresh(t).unwrap();
    lp.run().unwrap();
    assert_eq!(*runs.borrow(), [9, 18, 27]);
    // Refreshed, then cleared, inside its callback: unenroll after a
    // link; nothing left.
    let r = runs.clone();
    let u = lp.set_timeout(4, move |lp| {
        r.borrow_mut().push(lp.now());
        let me = lp.current_timeout().unwrap();
        lp.refresh(me).unwrap();
        lp.clear_timeout(me).unwrap();
    });
    lp.keep_timeout(u).unwrap();
    lp.run().unwrap();
    assert_eq!(*runs.borrow(), [9, 18, 27, 31]);
    assert!(!lp.timeout_is_pending(u));
    lp.refresh(u).unwrap(); // cleared: nothing
    lp.run().unwrap();
    assert_eq!(*runs.borrow(), [9, 18, 27, 31]);
    lp.release_timeout(u).unwrap();
    lp.release_timeout(t).unwrap();
    assert_eq!(lp.stats().timers, 0);
}

/// Between the peek and the fire, a tick clears the next timer of the
/// list (kept: it stays stored) and refreshes it (nothing: cleared),
/// refreshes another (not the peeked one: it moves on), and clears an
/// unkept one and sets a new timer of the same duration in
/// its arena slot.
#[test]
fn ticks_between_peek_and_fire() {
    let mut lp = EventLoop::with_virtual_clock();
    let log: Log = Rc::default();
    let b_slot: Rc<Cell<Option<Timeout>>> = Rc::default();
    let c_slot: Rc<Cell<Option<Timeout>>> = Rc::default();
    let d_slot: Rc<Cell<Option<Timeout>>> = Rc::default();
    let (bs, cs, ds, l) = (b_slot.clone(), c_slot.clone(), d_slot.clone(), log.clone());
    lp.set_timeout(10, move |lp| {
        l.borrow_mut().push(("a", lp.now()));
        let (b, c, d) = (bs.get().unwrap(), cs.get().unwrap(), ds.get().unwrap());
        let l = l.clone();
        lp.next_tick(move |lp| {
            lp.clear_timeout(b).unwrap();
            lp.refresh(b).unwrap();
            lp.refresh(c).unwrap();
            lp.clear_timeout(d).unwrap();
            // Likely d's arena slot, another generation.
            let l = l.clone();
            lp.set_timeout(10, move |lp| l.borrow_mut().push(("e", lp.now())));
        });
    });
    let b = lp.set_timeout(10, push(&log, "b"));
    lp.keep_timeout(b).unwrap();
    let c = lp.set_timeout(10, push(&log, "c"));
    lp.keep_timeout(c).unwrap();
    let d = lp.set_timeout(10, push(&log, "d"));
    b_slot.set(Some(b));
    c_slot.set(Some(c));
    d_slot.set(Some(d));
    lp.run().unwrap();
    // b was peeked and cleared: it does not run; c, refreshed by the tick
    // (not the peeked timer), is not due until 20, ahead of e.
    assert_eq!(*log.borrow(), [("a", 10), ("c", 20), ("e", 20)]);
    // c ran (kept, Fired) with its duration back: refreshed, 10 more.
    lp.refresh(c).unwrap();
    lp.refresh(b).unwrap(); // cleared: nothing
    lp.run().unwrap();
    assert_eq!(*log.borrow(), [("a", 10), ("c", 20), ("e", 20), ("c", 30)]);
    lp.release_timeout(b).unwrap();
    lp.release_timeout(c).unwrap();
    assert_eq!(lp.stats().timers, 0);
}

/// A peeked timer that a tick refreshes still runs in that pass (Node
/// holds it); kept, it can be refreshed again with its duration.
#[test]
fn a_tick_refreshing_the_peeked_timer() {
    let mut lp = EventLoop::with_virtual_clock();
    let log: Log = Rc::default();
    let b_slot: Rc<Cell<Option<Timeout>>> = Rc::default();
    let (bs, l) = (b_slot.clone(), log.clone());
    lp.set_timeout(5, move |lp| {
        l.borrow_mut().push(("a", lp.now()));
        let b = bs.get().unwrap();
        lp.next_tick(move |lp| {
            lp.refresh(b).unwrap();
            lp.unref_timeout(b).unwrap();
            lp.ref_timeout(b).unwrap();
        });
    });
    let b = lp.set_timeout(5, push(&log, "b"));
    lp.keep_timeout(b).unwrap();
    b_slot.set(Some(b));
    lp.set_timeout(6, push(&log, "x"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), [("a", 5), ("b", 5), ("x", 6)]);
    lp.refresh(b).unwrap();
    lp.run().unwrap();
    assert_eq!(log.borrow().last(), Some(&("b", 11)));
    lp.release_timeout(b).unwrap();
}

/// A zombie (fired, cleared, refreshed) reaching the pass, in the fast
/// path and behind a timer whose tick forces the slow one.
#[test]
fn zombies_reaching_the_pass() {
    let mut lp = EventLoop::with_virtual_clock();
    let log: Log = Rc::default();
    let z = lp.set_timeout(4, push(&log, "z"));
    lp.keep_timeout(z).unwrap();
    lp.run().unwrap();
    lp.clear_timeout(z).unwrap();
    lp.refresh(z).unwrap(); // zombie in the 4 ms list, alone: fast path
    lp.run().unwrap();
    assert_eq!(lp.now(), 8);
    // Behind a timer whose callback queues a tick: the slow path.
    lp.set_timeout(4, |lp| lp.next_tick(|_| {}));
    lp.refresh(z).unwrap();
    lp.run().unwrap();
    assert_eq!(lp.now(), 12);
    // The zombie kept its duration through both passes.
    lp.refresh(z).unwrap();
    lp.run().unwrap();
    assert_eq!(lp.now(), 16);
    assert_eq!(*log.borrow(), [("z", 4)]);
    lp.release_timeout(z).unwrap();
    assert_eq!(lp.stats().timers, 0);
}

/// Durations above 2^32 ms (long `Duration` timers): kept, refreshed,
/// an interval, a zombie; and a sleep of one.
#[test]
fn durations_above_two_to_the_32() {
    let mut lp = EventLoop::with_virtual_clock();
    let log: Log = Rc::default();
    let big: u64 = (1 << 40) + 7;
    let other: u64 = (1 << 33) + 3;
    let t = lp.set_timeout(Duration::from_millis(big), push(&log, "big"));
    lp.keep_timeout(t).unwrap();
    let runs = Rc::new(Cell::new(0));
    let r = runs.clone();
    lp.set_interval(Duration::from_millis(other), move |lp| {
        r.set(r.get() + 1);
        if lp.now() >= 3 * other {
            let me = lp.current_timeout().unwrap();
            lp.clear_interval(me).unwrap();
        }
    });
    lp.run().unwrap();
    assert_eq!(runs.get(), 3);
    assert_eq!(*log.borrow(), [("big", big)]);
    lp.refresh(t).unwrap();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), [("big", big), ("big", 2 * big)]);
    lp.clear_timeout(t).unwrap();
    lp.refresh(t).unwrap(); // zombie
    lp.run().unwrap();
    assert_eq!(lp.now(), 3 * big);
    lp.release_timeout(t).unwrap();
    // A sleep of more than 2^32 ms, and one dropped before it fires.
    let start = lp.now();
    let done = Rc::new(Cell::new(0));
    let d = done.clone();
    lp.spawn(async move {
        let never = time::sleep(Duration::from_millis(other));
        drop(never);
        time::sleep(Duration::from_millis(big)).await;
        d.set(1);
    });
    lp.run().unwrap();
    assert_eq!(done.get(), 1);
    assert_eq!(lp.now(), start + big);
    assert_eq!(lp.stats().timers, 0);
}

/// A list removed and re-created in the same slot during a callback: the
/// callback clears the last other timer of its own duration, then sets a
/// new one and refreshes a kept one.
#[test]
fn a_list_recreated_during_a_callback() {
    let mut lp = EventLoop::with_virtual_clock();
    let log: Log = Rc::default();
    let k = lp.set_timeout(3, push(&log, "k"));
    lp.keep_timeout(k).unwrap();
    lp.run().unwrap(); // k fired (3), kept
    let l = log.clone();
    let other: Rc<Cell<Option<Timeout>>> = Rc::default();
    let o = other.clone();
    lp.set_timeout(3, move |lp| {
        l.borrow_mut().push(("a", lp.now()));
        lp.clear_timeout(o.get().unwrap()).unwrap();
        // The 3 ms list is empty but the pass still holds it.
        let l2 = l.clone();
        lp.set_timeout(3, move |lp| l2.borrow_mut().push(("n", lp.now())));
        lp.refresh(k).unwrap();
    });
    other.set(Some(lp.set_timeout(3, push(&log, "never"))));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), [("k", 3), ("a", 6), ("n", 9), ("k", 9)]);
    lp.release_timeout(k).unwrap();
    assert_eq!(lp.stats().timers, 0);
}

/// A timer callback that clears itself (RunningCleared) while a deferred
/// operation panics (`finally_then_resume`), and whose closure's capture
/// panics on drop: the closure is dropped in the timer's `finally`, before
/// the first panic resumes, not while it unwinds (a panic during a panic
/// aborts the process). Found by the review of the 32-byte slot.
struct PanicOnDrop(&'static str);

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("{}", self.0);
    }
}

#[test]
fn a_self_clearing_timer_whose_capture_panics_on_drop_after_a_deferred_panic() {
    let mut lp = EventLoop::with_virtual_clock();
    let doomed = lp.spawn(async {
        let _guard = PanicOnDrop("a future's drop failed");
        std::future::pending::<()>().await;
    });
    let bomb = PanicOnDrop("the timer closure's capture");
    let mut h = Some(doomed);
    lp.set_timeout(1, move |lp| {
        let _ = &bomb;
        if let Some(h) = h.take() {
            h.abort(); // a deferred operation whose drop panics
        }
        let me = lp.current_timeout().unwrap();
        lp.clear_timeout(me).unwrap(); // RunningCleared
    });
    let escaped = catch_unwind(AssertUnwindSafe(|| lp.run()));
    assert!(escaped.is_err(), "a panic leaves run (not an abort)");
    // The loop is usable after.
    let escaped = catch_unwind(AssertUnwindSafe(|| lp.run()));
    assert!(matches!(escaped, Ok(Ok(())) | Err(_)));
    std::mem::forget(lp);
}
