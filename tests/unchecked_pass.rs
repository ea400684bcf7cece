//! The timers pass's unchecked lookups, the running timer's index (was
//! `Key::NONE`), the emptied-list cancel and `PriorityQueue::discard_id`
//! (issue 12, round 23; round 23's review wrote these), driven from inside *plain* timer callbacks (each captures
//! one `&'static` word, so unkept timeouts take `fire_once::<true>`).
//!
//! In a debug build every unchecked lookup asserts its promise, so any
//! scenario here that broke one panics out of `run` (outside a callback:
//! the loop does not catch it). Scenarios: a callback that clears every
//! timer of every list (the running list and the whole map empty), that
//! clears or releases or refreshes itself in every order, that frees the
//! next timer and reuses its slot, the same from a tick (the pass's
//! non-quiet path), at the end of (virtual) time, with tasks and Go timers
//! created and dropped by the callback, with a deferred panic that empties
//! the running list, and with the storage given back between callbacks
//! (more than `SHRINK_ABOVE` timers and lists).

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use timerloop::{EventLoop, Stats, Timeout, TimerError, task::JoinHandle, time};

mod common;
use common::within;

/// The one word a plain callback captures.
#[derive(Default)]
struct St {
    log: RefCell<Vec<(String, u64)>>,
    handles: RefCell<Vec<Timeout>>,
    runs: Cell<u32>,
    variant: Cell<u32>,
}

fn st() -> &'static St {
    Box::leak(Box::default())
}

impl St {
    fn push(&self, name: impl Into<String>, lp: &EventLoop) {
        self.log.borrow_mut().push((name.into(), lp.now()));
    }
    fn names(&self) -> Vec<String> {
        self.log.borrow().iter().map(|(n, _)| n.clone()).collect()
    }
    fn log(&self) -> Vec<(String, u64)> {
        self.log.borrow().clone()
    }
}

fn log_of(items: &[(&str, u64)]) -> Vec<(String, u64)> {
    items.iter().map(|&(n, t)| (n.to_string(), t)).collect()
}

/// A callback that clears every other timer of every list, so that the
/// running list and then the whole duration map empty while it runs;
/// variants also clear, keep, release or refresh the running timer
/// itself, and set a timer of the running list's duration (a new list,
/// perhaps in the same map slot).
#[test]
fn a_callback_emptying_every_list() {
    for variant in 0..8u32 {
        let s = st();
        s.variant.set(variant);
        let mut lp = EventLoop::with_virtual_clock();
        let a = lp.set_timeout(5, move |lp| {
            s.push("a", lp);
            let me = lp.current_timeout().unwrap();
            let v = s.variant.get();
            // Taken: a second run (refreshed) clears nothing.
            let handles = std::mem::take(&mut *s.handles.borrow_mut());
            let first = !handles.is_empty();
            if !first {
                return;
            }
            if v & 4 != 0 {
                lp.keep_timeout(me).unwrap();
                lp.refresh(me).unwrap();
            }
            // The unrefed one first (its clear drops no list), then the
            // rest: the last clear of each refed list drops it.
            for h in handles {
                lp.clear_timeout(h).unwrap();
            }
            if first {
                // Refreshed, it holds its list; otherwise the list went
                // with its last other refed timer.
                let s = lp.stats();
                assert_eq!(s.lists, usize::from(v & 4 != 0), "{s:?}");
                assert_eq!(s.timers, 1, "{s:?}");
            }
            match v & 3 {
                0 => {}
                1 => lp.clear_timeout(me).unwrap(),
                2 => {
                    // The running timer, kept and refreshed (6) or not
                    // (2): released (cleared and freed) either way.
                    assert_eq!(lp.release_timeout(me), Ok(()), "variant {v}");
                }
                _ => {
                    lp.clear_timeout(me).unwrap();
                    lp.set_timeout(5, move |lp| s.push("n", lp));
                }
            }
        });
        let u = lp.set_timeout(5, move |lp| s.push("u (cleared)", lp));
        lp.unref_timeout(u).unwrap();
        let mut hs = vec![u];
        for d in [5, 5, 7, 5, 9, 7] {
            hs.push(lp.set_timeout(d, move |lp| s.push("cleared", lp)));
        }
        *s.handles.borrow_mut() = hs;
        lp.run().unwrap();
        let mut want = vec![("a", 5)];
        match (variant & 4 != 0, variant & 3) {
            // Refreshed, not cleared: runs again at 10, kept.
            (true, 0) => want.push(("a", 10)),
            (_, 3) => want.push(("n", 10)),
            _ => {}
        }
        assert_eq!(s.log(), log_of(&want), "variant {variant}");
        if variant & 4 != 0 {
            // Kept: still stored, unless released in its callback (6).
            let released = lp.release_timeout(a);
            let want = if variant & 3 == 2 {
                Err(TimerError::Stale)
            } else {
                Ok(())
            };
            assert_eq!(released, want, "variant {variant}");
        }
        assert_eq!(lp.stats(), Stats::default(), "variant {variant}");
        assert!(!lp.is_alive());
    }
}

/// The same, the emptying done by a tick queued by the callback: the next
/// turn of the pass runs it (not quiet), then finds the list gone.
#[test]
fn a_tick_emptying_every_list_between_two_timers() {
    let s = st();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(5, move |lp| {
        s.push("a", lp);
        lp.next_tick(move |lp| {
            let handles = s.handles.borrow().clone();
            for h in handles {
                lp.clear_timeout(h).unwrap();
            }
            assert_eq!(lp.stats().lists, 0);
            lp.set_timeout(5, move |lp| s.push("n", lp));
        });
    });
    let mut hs = Vec::new();
    for d in [5, 5, 7] {
        hs.push(lp.set_timeout(d, move |lp| s.push("cleared", lp)));
    }
    *s.handles.borrow_mut() = hs;
    lp.run().unwrap();
    assert_eq!(s.log(), log_of(&[("a", 5), ("n", 10)]));
    assert_eq!(lp.stats(), Stats::default());
}

/// A callback that clears the next timer of its list (freed: its slot is
/// first on the arena's free list) and sets one of the same duration,
/// which takes that slot and joins the running list's end; directly, and
/// from a tick (which the pass runs after peeking the cleared timer: the
/// generation tells the new one from it). With the cleared timer the last
/// of the list or not.
#[test]
fn a_freed_slot_reused_during_the_pass() {
    for (from_tick, last) in [(false, false), (false, true), (true, false), (true, true)] {
        let s = st();
        let mut lp = EventLoop::with_virtual_clock();
        lp.set_timeout(5, move |lp| {
            s.push("a", lp);
            let f = move |lp: &mut EventLoop| {
                let b = s.handles.borrow()[0];
                lp.clear_timeout(b).unwrap();
                let n = lp.set_timeout(5, move |lp| s.push("n", lp));
                s.handles.borrow_mut().push(n);
            };
            if s.variant.get() == 1 {
                lp.next_tick(f);
            } else {
                f(lp);
            }
        });
        s.variant.set(u32::from(from_tick));
        let b = lp.set_timeout(5, move |lp| s.push("b (cleared)", lp));
        s.handles.borrow_mut().push(b);
        if !last {
            lp.set_timeout(5, move |lp| s.push("c", lp));
        }
        lp.run().unwrap();
        let mut want = vec![("a", 5)];
        if !last {
            want.push(("c", 5));
        }
        want.push(("n", 10));
        assert_eq!(s.log(), log_of(&want), "tick {from_tick} last {last}");
        assert_eq!(lp.stats(), Stats::default());
    }
}

/// A running timer cleared, released, refreshed, unrefed and re-refed by
/// its own callback in many orders, with timers before and after it in
/// its list: its slot stays its own until the pass frees it, its handle
/// goes stale exactly when it should, and the rest of the list runs.
#[test]
fn a_callback_doing_everything_to_itself() {
    // Each step: 0 clear, 1 release, 2 refresh, 3 keep, 4 unref, 5 ref.
    let programs: &[&[u8]] = &[
        &[0],
        &[1],
        &[2],
        &[3],
        &[3, 1],
        &[3, 0, 1],
        &[2, 0],
        &[2, 1],
        &[2, 3, 1],
        &[2, 4, 0],
        &[4, 2, 5],
        &[3, 2, 0, 2, 1],
        &[0, 2, 3, 1],
        &[4, 3, 0],
        &[2, 2, 4],
        &[3, 4, 2],
    ];
    thread_local! {
        static PROGRAM: Cell<&'static [u8]> = const { Cell::new(&[]) };
    }
    for &program in programs {
        let s = st();
        PROGRAM.with(|p| p.set(program));
        let mut lp = EventLoop::with_virtual_clock();
        lp.set_timeout(4, move |lp| s.push("x", lp));
        let a = lp.set_timeout(4, move |lp| {
            s.push("a", lp);
            s.runs.set(s.runs.get() + 1);
            if s.runs.get() > 1 {
                return;
            }
            let me = lp.current_timeout().unwrap();
            for &step in PROGRAM.with(Cell::get) {
                let _ = match step {
                    0 => lp.clear_timeout(me),
                    1 => lp.release_timeout(me),
                    2 => lp.refresh(me),
                    3 => lp.keep_timeout(me),
                    4 => lp.unref_timeout(me),
                    _ => lp.ref_timeout(me),
                };
                // Whatever it did, a new timer never takes its slot.
                let n = lp.set_timeout(4, move |lp| s.push("n", lp));
                assert_ne!(Some(n), lp.current_timeout());
                s.handles.borrow_mut().push(n);
            }
            assert!(lp.current_timeout().is_some());
        });
        lp.set_timeout(4, move |lp| s.push("y", lp));
        lp.run().unwrap();
        let names = s.names();
        assert_eq!(&names[..3], ["x", "a", "y"], "{program:?}: {names:?}");
        let ns = names.iter().filter(|n| *n == "n").count();
        assert_eq!(ns, program.len(), "{program:?}: {names:?}");
        // Refreshed and never cleared afterwards: ran again (at 8, whether
        // refed or not: the n's keep the loop running).
        // (A clear unlinks a refreshed one; a refresh after a clear does
        // nothing.)
        let again = program.contains(&2) && !program.iter().any(|&p| p == 0 || p == 1);
        assert_eq!(s.runs.get(), 1 + u32::from(again), "{program:?}: {names:?}");
        let _ = lp.release_timeout(a);
        assert_eq!(lp.stats(), Stats::default(), "{program:?}");
    }
}

/// At the end of time (a saturated virtual clock) every listed timer is
/// due, however recently it started, but a pass runs no more of a list's
/// timers than the list held when its run began, and no more lists than
/// were queued when the pass began (since round 36: an interval, due
/// again as soon as it was re-armed, ran without end in one pass). A
/// callback that frees the next timer, sets one that reuses its slot and
/// refreshes itself once: the new timer takes the freed one's turn in this
/// pass, the refreshed one and the lists made during the pass run in the
/// next ones, and the run ends.
#[test]
fn the_end_of_time() {
    let log = within(20, || {
        let s = st();
        let mut lp = EventLoop::with_virtual_clock();
        lp.block(u64::MAX);
        lp.update_time();
        lp.set_timeout(10, move |lp| {
            s.push("a", lp);
            s.runs.set(s.runs.get() + 1);
            if s.runs.get() == 1 {
                let b = s.handles.borrow()[0];
                lp.clear_timeout(b).unwrap();
                lp.set_timeout(10, move |lp| s.push("n", lp));
                let me = lp.current_timeout().unwrap();
                lp.refresh(me).unwrap();
                // And one that empties its own list, then sets one there.
                lp.set_timeout(3, move |lp| {
                    s.push("p", lp);
                    let me = lp.current_timeout().unwrap();
                    lp.clear_timeout(me).unwrap();
                    lp.set_timeout(3, move |lp| s.push("q", lp));
                });
            }
        });
        let b = lp.set_timeout(10, move |lp| s.push("b (cleared)", lp));
        s.handles.borrow_mut().push(b);
        lp.set_timeout(10, move |lp| s.push("c", lp));
        lp.run().unwrap();
        assert_eq!(lp.stats(), Stats::default());
        s.names()
    });
    assert_eq!(log, ["a", "c", "n", "p", "a", "q"]);
}

thread_local! {
    static TASK: RefCell<Option<JoinHandle<()>>> = const { RefCell::new(None) };
    static GO: RefCell<Option<time::go::Timer>> = const { RefCell::new(None) };
}

/// Futures inside the running list: a plain callback aborts a task whose
/// sleep is the list's only other timer (the deferred clear, flushed after
/// the callback, empties and drops the running list), spawns one that
/// sleeps on the same duration, and creates and stops Go timers (deferred
/// inserts and clears, some in the running list).
#[test]
fn tasks_and_go_timers_in_the_running_list() {
    let s = st();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(5, move |lp| {
        s.push("a", lp);
        TASK.with(|t| t.borrow_mut().take().unwrap().abort());
        lp.spawn(async move {
            time::sleep(Duration::from_millis(5)).await;
            EventLoop::with_current(|lp| s.push("t2", lp));
        });
        let g = time::go::Timer::new(Duration::from_millis(5));
        GO.with(|c| *c.borrow_mut() = Some(g));
        // A second Go timer, stopped at once: inserted and cleared by the
        // flush after this callback.
        let mut g2 = time::go::Timer::new(Duration::from_millis(5));
        assert!(g2.stop());
    });
    let t = lp.spawn(async move {
        time::sleep(Duration::from_millis(5)).await;
        EventLoop::with_current(|lp| s.push("t1 (aborted)", lp));
    });
    TASK.with(|c| *c.borrow_mut() = Some(t));
    lp.set_timeout(7, move |lp| {
        s.push("b", lp);
        // Stops the Go timer (in the 5 ms list that now runs at 10).
        GO.with(|c| assert!(c.borrow_mut().as_mut().unwrap().stop()));
    });
    lp.run().unwrap();
    assert_eq!(s.log(), log_of(&[("a", 5), ("b", 7), ("t2", 10)]));
    GO.with(|c| c.borrow_mut().take());
    lp.run().unwrap();
    assert_eq!(lp.stats(), Stats::default());
}

struct PanicOnDrop(&'static str);

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("{}", self.0);
    }
}

/// A deferred operation that panics in the flush after a plain callback
/// (a task's drop), the task's sleep the running list's last timer: the
/// panic leaves `run` after the timer's `finally`; the next run clears the
/// sleep (queued behind the panic), finds the list gone and goes on.
/// The list is `[a, sleep]`: the task is polled (its sleep armed) by a
/// first `run_nowait`.
#[test]
fn a_deferred_panic_with_the_running_list_emptied() {
    for order in [false, true] {
        let s = st();
        let mut lp = EventLoop::with_virtual_clock();
        lp.set_timeout(5, move |lp| {
            s.push("a", lp);
            TASK.with(|t| t.borrow_mut().take().unwrap().abort());
        });
        let t = if order {
            lp.spawn(async move {
                let _g = PanicOnDrop("drop");
                time::sleep(Duration::from_millis(5)).await;
            })
        } else {
            lp.spawn(async move {
                let sl = time::sleep(Duration::from_millis(5));
                let _g = PanicOnDrop("drop");
                sl.await;
            })
        };
        TASK.with(|c| *c.borrow_mut() = Some(t));
        lp.set_timeout(6, move |lp| s.push("b", lp));
        assert!(lp.run_nowait().unwrap());
        assert_eq!(lp.stats().timers, 3);
        let p = catch_unwind(AssertUnwindSafe(|| lp.run())).expect_err("the drop's panic");
        assert_eq!(p.downcast_ref::<String>().map(String::as_str), Some("drop"));
        assert_eq!(lp.current_timeout(), None);
        lp.run().unwrap();
        assert_eq!(s.log(), log_of(&[("a", 5), ("b", 6)]), "{order}");
        assert_eq!(lp.stats(), Stats::default());
    }
}

/// More timers and lists than `SHRINK_ABOVE` (4096): a callback clears
/// them all (the map and, once it returns, the arena empty), the storage
/// is given back between callbacks (the loop kept alive by immediates for
/// the iterations that takes), and then a callback fills it again and
/// the next passes run from the new storage. Twice over.
#[test]
fn storage_given_back_between_passes() {
    const N: u64 = 5000;
    fn fill(lp: &mut EventLoop, s: &'static St, base: u64) {
        let mut hs = Vec::new();
        for d in 0..N {
            hs.push(lp.set_timeout(base + 2 + d, move |lp| s.push("cleared", lp)));
        }
        *s.handles.borrow_mut() = hs;
        lp.set_timeout(base + 1, move |lp| {
            s.push("clear-all", lp);
            let handles = std::mem::take(&mut *s.handles.borrow_mut());
            for h in handles {
                lp.clear_timeout(h).unwrap();
            }
            assert_eq!(lp.stats().lists, 1, "the running one");
            // Immediates keep the loop busy (not idle) while the storage
            // is noted empty, then given back a whole iteration later.
            lp.set_immediate(move |lp| {
                s.push("i1", lp);
                lp.set_immediate(move |lp| {
                    s.push("i2", lp);
                    lp.set_immediate(move |lp| {
                        s.push("i3", lp);
                        if s.runs.get() == 0 {
                            s.runs.set(1);
                            fill(lp, s, 0);
                            // Several plain ones in one list after it.
                            for _ in 0..3 {
                                lp.set_timeout(1, move |lp| s.push("z", lp));
                            }
                        }
                    });
                });
            });
        });
    }
    let s = st();
    let mut lp = EventLoop::with_virtual_clock();
    fill(&mut lp, s, 0);
    lp.run().unwrap();
    let names = s.names();
    assert_eq!(
        names,
        [
            "clear-all",
            "i1",
            "i2",
            "i3",
            "clear-all",
            "z",
            "z",
            "z",
            "i1",
            "i2",
            "i3"
        ]
    );
    assert_eq!(lp.stats(), Stats::default());
}

/// `current_timeout` is `None` outside timer callbacks (the main body, a
/// tick and a microtask between timers, an immediate, after a panic left
/// `run`, the uncaught handler of a timer's failure) and the running
/// timer's handle inside, for timers at large slot indexes too.
#[test]
fn current_timeout_is_none_outside_timer_callbacks() {
    let s = st();
    let mut lp = EventLoop::with_virtual_clock();
    assert_eq!(lp.current_timeout(), None);
    lp.set_uncaught_handler(move |lp, _| {
        assert_eq!(lp.current_timeout(), None);
        s.push("handler", lp);
    });
    let mut hs = Vec::new();
    for _ in 0..300 {
        hs.push(lp.set_timeout(2, move |lp| {
            let me = lp.current_timeout().unwrap();
            assert!(lp.timeout_has_ref(me));
            s.handles.borrow_mut().push(me);
            lp.next_tick(move |lp| assert_eq!(lp.current_timeout(), None));
            lp.queue_microtask(move |lp| assert_eq!(lp.current_timeout(), None));
            lp.set_immediate(move |lp| assert_eq!(lp.current_timeout(), None));
        }));
    }
    lp.set_timeout(3, |_| -> Result<(), &str> { Err("boom") });
    lp.run().unwrap();
    assert_eq!(*s.handles.borrow(), hs);
    assert_eq!(lp.current_timeout(), None);
    assert_eq!(s.names(), ["handler"]);
    assert_eq!(lp.stats(), Stats::default());
}
