//! Timeouts: list ordering, lists due in one pass, timers added during a
//! pass, list reschedules, and fractional delays (R3.2, R3.4, R5.3, R5.4,
//! §12.6, §12.7). Every test runs on the virtual clock.

use std::{cell::RefCell, rc::Rc};

use timerloop::{EventLoop, Stats};

mod common;
use common::*;

/// R3.4: timers of one duration fire in the order they were added, and a
/// shorter list that expires first fires before them.
#[test]
fn same_delay_timers_fire_in_insertion_order() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(10, at(&log, "A"));
    lp.set_timeout(10, at(&log, "B"));
    lp.set_timeout(5, at(&log, "D"));
    lp.set_timeout(10, at(&log, "C"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["D@5", "A@10", "B@10", "C@10"]);
    assert_eq!(lp.now(), 10);
    assert_eq!(lp.stats(), Stats::default());
}

/// §12.6: `setTimeout(cb, 1)` and `setTimeout(cb, 0)` share list 1 and fire
/// in insertion order; every delay that coerces to 1 ms runs before a 2 ms
/// timer created earlier (test-timers.js).
#[test]
fn zero_and_one_share_list_one() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(2, at(&log, "two"));
    lp.set_timeout(1, at(&log, "one"));
    lp.set_timeout(0, at(&log, "zero"));
    lp.set_timeout(1, at(&log, "one-again"));
    lp.set_timeout(0.5, at(&log, "half"));
    assert_eq!(lp.stats().lists, 2);
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        ["one@1", "zero@1", "one-again@1", "half@1", "two@2"]
    );
}

/// test-timers-ordering.js: a chain of 30 `setTimeout(f, 1)` fires in
/// order, each exactly 1 ms of loop time after the previous.
#[test]
fn chain_of_one_ms_timers_steps_one_ms_each() {
    fn step(times: Rc<RefCell<Vec<u64>>>, left: u32) -> impl FnMut(&mut EventLoop) + 'static {
        move |lp| {
            times.borrow_mut().push(lp.now());
            if left > 1 {
                lp.set_timeout(1, step(times.clone(), left - 1));
            }
        }
    }
    let times = Rc::new(RefCell::new(Vec::new()));
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(1, step(times.clone(), 30));
    lp.run().unwrap();
    assert_eq!(*times.borrow(), (1..=30).collect::<Vec<u64>>());
}

/// §12.7: two lists due in one processTimers call fire by expiry, not by
/// duration; ticks run between the lists.
///
/// ```text
/// t=0  A = setTimeout(5)   list 5: expiry 5
/// t=3  B = setTimeout(1)   list 1: expiry 4
/// t=13 loop starts: both due in one pass -> B (4), tickB, A (5)
/// ```
#[test]
fn lists_due_in_one_pass_fire_by_expiry() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(5, at(&log, "A"));
    lp.block(3);
    let l = log.clone();
    lp.set_timeout(1, move |lp| {
        l.borrow_mut().push(format!("B@{}", lp.now()));
        let l = l.clone();
        lp.next_tick(move |_| l.borrow_mut().push("tickB".into()));
    });
    lp.block(10);
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["B@13", "tickB", "A@13"]);
}

/// §12.7: with equal expiry the older list id wins: A(10) at t0 and B(5) at
/// t0+5 both expire at 10, and A's list is older.
#[test]
fn equal_expiry_older_list_wins() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(10, at(&log, "A"));
    lp.block(5);
    lp.set_timeout(5, at(&log, "B"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["A@10", "B@10"]);
}

/// R5.3: a timer added during a pass never runs in that pass, even when it
/// joins the list being processed and the callback blocks past its due
/// time. Node (verified): `A B Imm N`.
///
/// ```text
/// t=1  A runs: N = setTimeout(1) (start 1), setImmediate(Imm), blocks 5 ms
/// t=6  B runs (same pass, now frozen at 1); N: 1 - 1 < 1 -> reschedule
///      check: Imm; timers: N
/// ```
#[test]
fn timer_added_during_a_pass_waits_for_the_next_pass() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(1, move |lp| {
        l.borrow_mut().push(format!("A@{}", lp.now()));
        lp.set_timeout(1, at(&l, "N"));
        lp.set_immediate(at(&l, "Imm"));
        lp.block(5);
    });
    lp.set_timeout(1, at(&log, "B"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["A@1", "B@6", "Imm@6", "N@6"]);
}

/// R5.3 (test-timers-nested.js): a same-delay timer created by the last
/// timer of a list still waits for its own due time.
#[test]
fn nested_same_delay_timer_fires_a_full_delay_later() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(10, move |lp| {
        l.borrow_mut().push(format!("outer@{}", lp.now()));
        lp.set_timeout(10, at(&l, "inner"));
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["outer@10", "inner@20"]);
}

/// R5.4: a list rescheduled on an early return takes a new id, so it loses
/// ties against lists that already exist. Node (verified): X, then Z
/// before Y.
///
/// ```text
/// t=0   X = setTimeout(10)  list 10 (id 0)
/// t=0   Z = setTimeout(15)  list 15 (id 1), expiry 15
/// t=5   Y = setTimeout(10)  joins list 10
/// t=10  X; list 10 rescheduled to expiry 15 with id 2
/// t=15  Z (id 1) before Y (id 2)
/// ```
#[test]
fn rescheduled_list_loses_ties() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(10, at(&log, "X"));
    lp.set_timeout(15, at(&log, "Z"));
    lp.block(5);
    lp.set_timeout(10, at(&log, "Y"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["X@10", "Z@15", "Y@15"]);
}

/// R5.4: the rescheduled expiry is `max(start + msecs, now + 1)`; a list
/// whose next timer is due later keeps that timer's own due time.
#[test]
fn rescheduled_list_fires_at_its_next_timers_due_time() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(10, at(&log, "first"));
    lp.block(7);
    lp.set_timeout(10, at(&log, "second"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["first@10", "second@17"]);
}

/// R3.2: fractions are kept but the list key is truncated. Node (verified):
/// delays 2, 1.9, 0, 1, 1.5, -5, 2.99 create lists {1, 2} and fire
/// B C D E F A G.
#[test]
fn fractional_delays_join_truncated_lists() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(2, at(&log, "A"));
    lp.set_timeout(1.9, at(&log, "B"));
    lp.set_timeout(0, at(&log, "C"));
    lp.set_timeout(1, at(&log, "D"));
    lp.set_timeout(1.5, at(&log, "E"));
    lp.set_timeout(-5, at(&log, "F"));
    lp.set_timeout(2.99, at(&log, "G"));
    let s = lp.stats();
    assert_eq!((s.timers, s.lists, s.queued_lists), (7, 2, 2));
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        ["B@1", "C@1", "D@1", "E@1", "F@1", "A@2", "G@2"]
    );
    assert_eq!(lp.stats(), Stats::default());
}

/// R3.2 (test-timers-non-integer-delay.js): delays 1, 1.8, 1.1, 1 fire in
/// insertion order, all at 1 ms.
#[test]
fn non_integer_delays_keep_insertion_order() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(1, at(&log, "a"));
    lp.set_timeout(1.8, at(&log, "b"));
    lp.set_timeout(1.1, at(&log, "c"));
    lp.set_timeout(1, at(&log, "d"));
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["a@1", "b@1", "c@1", "d@1"]);
}

/// R5.2 / §14.2: `now` is frozen during a pass, but timers that were
/// already due still run in it even after a long block.
#[test]
fn due_timers_still_run_after_a_long_block() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(5, move |lp| {
        l.borrow_mut().push(format!("A@{}", lp.now()));
        lp.block(100);
    });
    lp.set_timeout(5, at(&log, "B"));
    lp.set_timeout(6, at(&log, "C"));
    lp.run().unwrap();
    // C's list expires at 6 > now (5): it runs in the next pass.
    assert_eq!(*log.borrow(), ["A@5", "B@105", "C@105"]);
}

/// A duration whose list was removed (cleared, or fired empty) gets a new
/// list when a timer of that duration comes again, at once or later: the
/// slot remembered for the last duration appended to is forgotten with
/// the list, for near durations (fixed slots) and far ones (reused slots).
#[test]
fn a_duration_whose_list_was_removed_gets_a_new_one() {
    const FAR: u64 = 1 << 22; // the first duration the map keeps apart
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    lp.set_timeout(4, move |lp: &mut EventLoop| {
        lp.set_timeout(3, at(&l, "after"));
    });
    // Cleared: the list goes at once, and the same duration comes next.
    for d in [5, FAR + 1] {
        let t = lp.set_timeout(d, at(&log, "never"));
        lp.clear_timeout(t).unwrap();
        lp.set_timeout(d, at(&log, "again"));
    }
    // Fired: duration 3 is the last appended to when its list goes, at
    // 3 ms; the 4 ms timer adds to duration 3 again.
    lp.set_timeout(3, at(&log, "first"));
    lp.run().unwrap();
    assert_eq!(
        *log.borrow(),
        [
            "first@3".to_string(),
            "again@5".to_string(),
            "after@7".to_string(),
            format!("again@{}", FAR + 1),
        ]
    );
    assert_eq!(lp.stats(), Stats::default());
}

/// R5.2 (`list === timerListMap[msecs]`): a list that one of its own
/// callbacks empties is removed at once, and the timers that callback
/// then sets with the same duration make a new list in the same map slot
/// (or, for durations the map keeps apart, a far list in the slot just
/// freed). The pass tells the new list from the one it ran: it stops
/// running the old one, neither runs nor drops the new one, and the new
/// timers fire a whole duration later. Node 20 prints `a f d e` for the
/// near case (each letter as the 10 ms case below).
#[test]
fn a_list_removed_and_made_again_by_its_own_callback_is_a_new_list() {
    const FAR: u64 = 1 << 22; // the first duration the map keeps apart
    for (d, other) in [(10, 10), (FAR + 10, FAR + 20)] {
        let log = new_log();
        let mut lp = EventLoop::with_virtual_clock();
        let b = Rc::new(std::cell::Cell::new(None));
        let (l, b2) = (log.clone(), b.clone());
        lp.set_timeout(d, move |lp: &mut EventLoop| {
            push(&l, format!("a@{}", lp.now()));
            // Its list empties: removed.
            lp.clear_timeout(b2.get().unwrap()).unwrap();
            // A new list of the same duration, removed again at once.
            let c = lp.set_timeout(d, at(&l, "c"));
            lp.clear_timeout(c).unwrap();
            // A third (for a far duration, one of another duration that
            // takes the freed slot), and a shorter one.
            lp.set_timeout(other, at(&l, "e"));
            lp.set_timeout(3, at(&l, "f"));
            // The new list, the 3 ms one and the `d + 5` one: the list
            // running is gone.
            assert_eq!(lp.stats().lists, 3);
        });
        b.set(Some(lp.set_timeout(d, at(&log, "b"))));
        lp.set_timeout(d + 5, at(&log, "d"));
        lp.run().unwrap();
        let log = log.borrow();
        assert_eq!(
            *log,
            [
                format!("a@{d}"),
                format!("f@{}", d + 3),
                format!("d@{}", d + 5),
                format!("e@{}", d + other),
            ],
            "duration {d}"
        );
        assert_eq!(lp.stats(), Stats::default());
    }
}

/// R8.2 with R5.2: clearing an *unrefed* timer leaves its emptied list in
/// place (Node deletes a list on clear only for a refed timer). A callback
/// that empties its own list and then makes and clears an unrefed timer
/// of that duration leaves that new, empty list behind, in the same map
/// slot (near durations) or the one just freed (far ones); the pass must
/// not take it for the list it ran and drop it. Node's `listOnTimeout`
/// compares list objects (`list === timerListMap[msecs]`), so the new list
/// stays until its own expiry.
#[test]
fn an_emptied_unrefed_list_made_by_a_callback_stays_until_its_expiry() {
    const FAR: u64 = 1 << 22;
    for (d, other) in [(10, 10), (FAR + 10, FAR + 20)] {
        let mut lp = EventLoop::with_virtual_clock();
        let b = Rc::new(std::cell::Cell::new(None));
        let b2 = b.clone();
        lp.set_timeout(d, move |lp: &mut EventLoop| {
            lp.clear_timeout(b2.get().unwrap()).unwrap();
            let u = lp.set_timeout(other, |_| -> Result<(), &str> { Err("cleared") });
            lp.unref_timeout(u).unwrap();
            lp.clear_timeout(u).unwrap();
        });
        b.set(Some(lp.set_timeout(d, |_| {})));
        lp.run().unwrap();
        assert_eq!(lp.now(), d, "nothing refed is left after the pass");
        let s = lp.stats();
        assert_eq!((s.lists, s.queued_lists), (1, 1), "duration {d}: {s:?}");
        // At its expiry it is found empty and removed.
        lp.set_timeout(other + 1, |_| {});
        lp.run().unwrap();
        assert_eq!(lp.stats(), Stats::default());
    }
}

/// A sleep made in a callback is deferred until the loop flushes; a
/// refresh made after it of a pending timer of the same duration lands
/// behind it, the sleep having been asked for first (refresh's fast path
/// is taken only with nothing deferred).
#[test]
fn a_refresh_after_a_deferred_sleep_of_its_duration_goes_behind_it() {
    use std::time::Duration;
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    let t = lp.set_timeout(10, move |_| push(&l, "t"));
    let l = log.clone();
    lp.set_timeout(0, move |lp| {
        let s = timerloop::time::sleep(Duration::from_millis(10));
        let l2 = l.clone();
        lp.spawn(async move {
            s.await;
            push(&l2, "sleep");
        });
        lp.refresh(t).unwrap();
    });
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["sleep", "t"]);
}

/// The newest timer of its list refreshed stays last and restarts; a
/// middle one moves behind the rest.
#[test]
fn refreshing_the_newest_and_a_middle_timer_of_a_list() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let _a = lp.set_timeout(10, at(&log, "a"));
    let b = lp.set_timeout(10, at(&log, "b"));
    let c = lp.set_timeout(10, at(&log, "c"));
    lp.block(2);
    lp.refresh(c).unwrap(); // the newest: stays last, starts at 2
    lp.block(2);
    lp.refresh(b).unwrap(); // a middle one: behind c, starts at 4
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["a@10", "c@12", "b@14"]);
}

/// Refreshing unrefed and kept pending timers moves neither the ref
/// count nor the loop's liveness.
#[test]
fn refreshing_unrefed_and_kept_timers_keeps_the_ref_count() {
    let mut lp = EventLoop::with_virtual_clock();
    let u = lp.set_timeout(10, |_| {});
    lp.unref_timeout(u).unwrap();
    let k = lp.set_timeout(10, |_| {});
    lp.keep_timeout(k).unwrap();
    lp.refresh(u).unwrap();
    lp.refresh(k).unwrap();
    assert_eq!(lp.stats().refed_timers, 1);
    lp.unref_timeout(k).unwrap();
    lp.refresh(k).unwrap();
    assert!(!lp.is_alive());
    lp.run().unwrap();
    assert_eq!(lp.now(), 0);
}

/// The last refed timer cleared from a list that keeps an unrefed one:
/// the ref count reaches zero through the path that unrefs the native
/// timer, so the loop exits at once and the unrefed timer never runs.
#[test]
fn clearing_the_last_refed_timer_beside_an_unrefed_one_lets_the_loop_exit() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    let l = log.clone();
    let u = lp.set_timeout(10, move |_| push(&l, "unrefed ran"));
    lp.unref_timeout(u).unwrap();
    let a = lp.set_timeout(10, |_| {});
    lp.clear_timeout(a).unwrap();
    assert_eq!(lp.stats().refed_timers, 0);
    assert!(!lp.is_alive());
    lp.run().unwrap();
    assert_eq!(lp.now(), 0);
    assert!(log.borrow().is_empty());
}

/// Clearing refed timers down to none, lists emptying on the way, with
/// an unrefed one left: the counts stay exact and the loop exits.
#[test]
fn clearing_refed_timers_down_to_none_keeps_the_counts_exact() {
    let mut lp = EventLoop::with_virtual_clock();
    let u = lp.set_timeout(50, |_| {});
    lp.unref_timeout(u).unwrap();
    let a = lp.set_timeout(10, |_| {});
    let b = lp.set_timeout(10, |_| {});
    let c = lp.set_timeout(20, |_| {});
    assert_eq!(lp.stats().refed_timers, 3);
    lp.clear_timeout(a).unwrap();
    assert_eq!(lp.stats().refed_timers, 2);
    lp.clear_timeout(c).unwrap(); // empties the 20 ms list
    assert_eq!((lp.stats().refed_timers, lp.stats().lists), (1, 2));
    lp.clear_timeout(b).unwrap(); // the last refed, empties the 10 ms list
    assert_eq!((lp.stats().refed_timers, lp.stats().lists), (0, 1));
    assert!(!lp.is_alive());
    lp.run().unwrap();
    assert_eq!(lp.now(), 0);
}

/// Clearing the only timer of a list drops the list, and the heap of lists
/// drops it lazily (a dead entry, rebuilt away in bulk). Thousands of lists
/// cleared in three orders (earliest first, every one then the heap's root;
/// latest first; scrambled), then durations reused while dead entries may
/// remain: the survivors and the new lists fire in expiry order, each
/// once, and the stats count only live lists.
#[test]
fn mass_clears_of_lists_keep_expiry_order() {
    for order in 0..3 {
        let log: Rc<RefCell<Vec<(u64, u64)>>> = Rc::default();
        let mut lp = EventLoop::with_virtual_clock();
        let n = 3000_u64;
        let mut handles = Vec::new();
        for d in 1..=n {
            let log = log.clone();
            let t = lp.set_timeout(d, move |lp: &mut EventLoop| {
                log.borrow_mut().push((d, lp.now()));
            });
            handles.push((d, t));
        }
        let mut doomed: Vec<(u64, timerloop::Timeout)> = handles
            .iter()
            .copied()
            .filter(|&(d, _)| d <= 2000)
            .collect();
        match order {
            0 => {}
            1 => doomed.reverse(),
            _ => {
                let mut s = 12345_u64;
                for i in (1..doomed.len()).rev() {
                    s = s
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    doomed.swap(i, (s >> 33) as usize % (i + 1));
                }
            }
        }
        for &(_, t) in &doomed {
            lp.clear_timeout(t).unwrap();
        }
        assert_eq!(lp.stats().lists, 1000, "order {order}");
        assert_eq!(lp.stats().queued_lists, 1000, "order {order}");
        // Durations of cleared lists again (their map slots, and heap ids,
        // come back), and one of a live list's.
        for d in (500..=700).chain([2500]) {
            let log = log.clone();
            lp.set_timeout(d, move |lp: &mut EventLoop| {
                log.borrow_mut().push((d + 10_000, lp.now()));
            });
        }
        assert_eq!(lp.stats().queued_lists, 1201, "order {order}");
        lp.run().unwrap();
        let mut want: Vec<(u64, u64)> = (500..=700).map(|d| (d + 10_000, d)).collect();
        for d in 2001..=n {
            want.push((d, d));
            if d == 2500 {
                want.push((12_500, 2500));
            }
        }
        assert_eq!(*log.borrow(), want, "order {order}");
        assert_eq!(lp.now(), n);
        assert_eq!(lp.stats(), Stats::default());
    }
}

/// Lists due at the same ms order by age (R2.3), and clearing lists whose
/// heap entries tie that way leaves the rest in that order: at 100 ms, a
/// callback adds lists due with existing ones (2,100 to 2,400 ms, each a
/// newer list with the same expiry), then clears every third older one
/// and every fifth newer one.
#[test]
fn clears_among_lists_due_together_keep_age_order() {
    type Log = Rc<RefCell<Vec<(&'static str, u64, u64)>>>;
    let log: Log = Rc::default();
    let mut lp = EventLoop::with_virtual_clock();
    let stamp = |log: &Log, tag: &'static str, d: u64| {
        let log = log.clone();
        move |lp: &mut EventLoop| log.borrow_mut().push((tag, d, lp.now()))
    };
    let old: Vec<(u64, timerloop::Timeout)> = (2100..=2400)
        .map(|d| (d, lp.set_timeout(d, stamp(&log, "old", d))))
        .collect();
    let l = log.clone();
    lp.set_timeout(100, move |lp: &mut EventLoop| {
        let new: Vec<(u64, timerloop::Timeout)> = (2100..=2400)
            .rev()
            .map(|e| (e, lp.set_timeout(e - 100, stamp(&l, "new", e))))
            .collect();
        for &(e, t) in &old {
            if e.is_multiple_of(3) {
                lp.clear_timeout(t).unwrap();
            }
        }
        for &(e, t) in &new {
            if e.is_multiple_of(5) {
                lp.clear_timeout(t).unwrap();
            }
        }
    });
    lp.run().unwrap();
    let mut want = Vec::new();
    for e in 2100..=2400_u64 {
        if !e.is_multiple_of(3) {
            want.push(("old", e, e));
        }
        if !e.is_multiple_of(5) {
            want.push(("new", e, e));
        }
    }
    assert_eq!(*log.borrow(), want);
    assert_eq!(lp.stats(), Stats::default());
}
