//! Plain timeouts (a closure of at most a word, no drop glue) on the
//! timers pass's own path (`fire_once::<true>`): failures, deferred panics,
//! self-clears, `keep_timeout` and ref changes from inside the callback;
//! the ref count reaching zero through `clear_timeout`'s fast path; and
//! slots that fast path freed, whose links it leaves as they were, taken
//! again by new timers.
//! Every callback here captures nothing or one `&'static` (leaked) state,
//! so that it is plain.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};

use timerloop::{Error, EventLoop, Timeout, task::JoinHandle};

/// The one word a plain callback captures.
#[derive(Default)]
struct St {
    log: RefCell<Vec<(&'static str, u64)>>,
    a: Cell<Option<Timeout>>,
    b: Cell<Option<Timeout>>,
    runs: Cell<u32>,
}

fn st() -> &'static St {
    Box::leak(Box::default())
}

impl St {
    fn push(&self, name: &'static str, lp: &EventLoop) {
        self.log.borrow_mut().push((name, lp.now()));
    }
    fn log(&self) -> Vec<(&'static str, u64)> {
        self.log.borrow().clone()
    }
    /// A plain timeout of `ms` that logs `name` when it fires.
    fn timeout(&'static self, lp: &mut EventLoop, ms: u64, name: &'static str) -> Timeout {
        lp.set_timeout(ms, move |lp| self.push(name, lp))
    }
}

struct PanicOnDrop(&'static str);

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("{}", self.0);
    }
}

thread_local! {
    static DOOMED: RefCell<Option<JoinHandle<()>>> = const { RefCell::new(None) };
}

/// A plain timeout whose callback fails (an error, or a panic) while a
/// deferred operation it caused panics (a task aborted whose future's drop
/// panics): the deferred panic leaves `run` after the timer's `finally`
/// (freed, its ref gone, not current). The callback's failure is not
/// lost: the handler sees it before the panic leaves, or, with none, the
/// next run returns it; the run after that finishes the pass.
#[test]
fn a_plain_timeout_failing_while_a_deferred_operation_panics() {
    for (panics, handler) in [(false, false), (false, true), (true, false), (true, true)] {
        let s = st();
        let mut lp = EventLoop::with_virtual_clock();
        if handler {
            lp.set_uncaught_handler(move |lp, e| {
                s.log.borrow_mut().push(("handler", lp.now()));
                drop(e);
            });
        }
        let doomed = lp.spawn(async {
            let _guard = PanicOnDrop("a future's drop failed");
            std::future::pending::<()>().await;
        });
        DOOMED.with(|d| *d.borrow_mut() = Some(doomed));
        let a = if panics {
            lp.set_timeout(1, |_| -> Result<(), &str> {
                DOOMED.with(|d| d.borrow_mut().take().unwrap().abort());
                panic!("bang")
            })
        } else {
            lp.set_timeout(1, |_| -> Result<(), &str> {
                DOOMED.with(|d| d.borrow_mut().take().unwrap().abort());
                Err("boom")
            })
        };
        lp.set_timeout(1, move |lp| s.push("b", lp));
        lp.set_timeout(2, move |lp| s.push("c", lp));
        let escaped = catch_unwind(AssertUnwindSafe(|| lp.run()));
        let payload = escaped.expect_err("the deferred panic leaves run");
        assert_eq!(
            payload.downcast_ref::<String>().map(String::as_str),
            Some("a future's drop failed")
        );
        assert_eq!(lp.current_timeout(), None);
        assert!(!lp.timeout_is_pending(a));
        assert_eq!(lp.clear_timeout(a), Err(timerloop::TimerError::Stale));
        let stats = lp.stats();
        assert_eq!((stats.timers, stats.refed_timers), (2, 2), "{stats:?}");
        if handler {
            assert_eq!(s.log(), [("handler", 1)]);
        } else {
            assert!(s.log().is_empty(), "{:?}", s.log());
            match lp.run() {
                Err(Error::Uncaught(e)) => {
                    assert_eq!(e.kind(), timerloop::CallbackKind::Timeout);
                    assert_eq!(e.message(), if panics { "bang" } else { "boom" });
                }
                other => panic!("the failure first, not {other:?}"),
            }
            assert!(s.log().is_empty(), "nothing ran: {:?}", s.log());
        }
        lp.run().unwrap();
        let mut want = vec![("b", 1), ("c", 2)];
        if handler {
            want.insert(0, ("handler", 1));
        }
        assert_eq!(s.log(), want, "panics {panics} handler {handler}");
        assert_eq!(lp.stats().timers, 0);
        assert_eq!(lp.stats().refed_timers, 0);
        assert!(!lp.is_alive());
    }
}

/// A plain timeout that clears itself while it is the last refed timer:
/// the loop stops being alive, the unrefed timer of its list still runs
/// in that pass, a later unrefed one never does. Both with its list left
/// holding an unrefed timer and with its list emptied.
#[test]
fn a_plain_timeout_clearing_itself_as_the_last_refed_timer() {
    for same_list in [true, false] {
        let s = st();
        let mut lp = EventLoop::with_virtual_clock();
        let a = lp.set_timeout(5, move |lp| {
            s.push("a", lp);
            let me = lp.current_timeout().unwrap();
            lp.clear_timeout(me).unwrap();
            assert_eq!(lp.stats().refed_timers, 0);
            assert_eq!(lp.clear_timeout(me), Err(timerloop::TimerError::Stale));
        });
        s.a.set(Some(a));
        let u = lp.set_timeout(if same_list { 5 } else { 6 }, move |lp| s.push("u", lp));
        lp.unref_timeout(u).unwrap();
        let v = lp.set_timeout(50, move |lp| s.push("v", lp));
        lp.unref_timeout(v).unwrap();
        lp.run().unwrap();
        let want: &[(&str, u64)] = if same_list {
            &[("a", 5), ("u", 5)]
        } else {
            &[("a", 5)]
        };
        assert_eq!(s.log(), want);
        assert_eq!(lp.now(), 5);
        assert!(!lp.is_alive());
        assert_eq!(lp.stats().refed_timers, 0);
        assert_eq!(lp.stats().timers, if same_list { 1 } else { 2 });
        assert_eq!(lp.refresh(a), Err(timerloop::TimerError::Stale));
        // The unrefed one refed again: the loop waits for it.
        lp.ref_timeout(v).unwrap();
        assert!(lp.is_alive());
        lp.run().unwrap();
        assert_eq!(s.log().last(), Some(&("v", 50)));
        assert_eq!(lp.stats().refed_timers, 0);
    }
}

/// A plain timeout that keeps itself from inside its callback (the flag
/// changes mid-callback): it is not freed; it fires again when refreshed;
/// kept and cleared by itself the next time, it stays stored, cleared.
#[test]
fn a_plain_timeout_keeping_itself() {
    let s = st();
    let mut lp = EventLoop::with_virtual_clock();
    let a = lp.set_timeout(3, move |lp| {
        s.runs.set(s.runs.get() + 1);
        s.push("a", lp);
        let me = lp.current_timeout().unwrap();
        lp.keep_timeout(me).unwrap();
        if s.runs.get() == 2 {
            lp.unref_timeout(me).unwrap();
            lp.clear_timeout(me).unwrap();
        }
    });
    lp.set_timeout(3, move |lp| s.push("b", lp));
    lp.run().unwrap();
    assert_eq!(s.log(), [("a", 3), ("b", 3)]);
    assert!(lp.timeout_has_ref(a));
    assert!(!lp.timeout_is_pending(a));
    assert_eq!((lp.stats().timers, lp.stats().refed_timers), (1, 0));
    lp.refresh(a).unwrap();
    assert_eq!(lp.stats().refed_timers, 1);
    lp.run().unwrap();
    assert_eq!(s.log(), [("a", 3), ("b", 3), ("a", 6)]);
    assert!(!lp.timeout_has_ref(a));
    assert_eq!((lp.stats().timers, lp.stats().refed_timers), (1, 0));
    lp.refresh(a).unwrap(); // cleared: nothing
    assert!(!lp.is_alive());
    lp.release_timeout(a).unwrap();
    assert_eq!(lp.stats().timers, 0);
}

/// A plain timeout that unrefs itself, refs itself, refreshes itself,
/// then fails: the handler's turn, the ref count as the flags say.
#[test]
fn a_plain_timeout_changing_its_ref_then_failing() {
    for handler in [false, true] {
        let s = st();
        let mut lp = EventLoop::with_virtual_clock();
        if handler {
            lp.set_uncaught_handler(move |lp, e| {
                assert_eq!(e.message(), "boom");
                s.log.borrow_mut().push(("handler", lp.now()));
            });
        }
        lp.set_timeout(2, move |lp| -> Result<(), &str> {
            s.runs.set(s.runs.get() + 1);
            s.push("a", lp);
            let me = lp.current_timeout().unwrap();
            lp.unref_timeout(me).unwrap();
            if s.runs.get() == 1 {
                lp.ref_timeout(me).unwrap();
                lp.unref_timeout(me).unwrap();
                lp.ref_timeout(me).unwrap();
                lp.refresh(me).unwrap(); // runs again at 4, unrefed
                lp.unref_timeout(me).unwrap();
            }
            lp.next_tick(move |lp| s.push("tick", lp));
            Err("boom")
        });
        let b = lp.set_timeout(2, move |lp| s.push("b", lp));
        s.b.set(Some(b));
        lp.set_timeout(4, move |lp| s.push("c", lp));
        if handler {
            lp.run().unwrap();
            assert_eq!(
                s.log(),
                [
                    ("a", 2),
                    ("handler", 2),
                    ("b", 2),
                    ("tick", 2),
                    ("c", 4),
                    ("a", 4),
                    ("handler", 4),
                    ("tick", 4)
                ]
            );
        } else {
            assert!(matches!(lp.run(), Err(Error::Uncaught(_))));
            assert_eq!(lp.stats().refed_timers, 2, "b and c; a unrefed");
            assert!(matches!(lp.run(), Err(Error::Uncaught(_))));
            lp.run().unwrap();
            assert_eq!(
                s.log(),
                [
                    ("a", 2),
                    ("tick", 2),
                    ("b", 2),
                    ("c", 4),
                    ("a", 4),
                    ("tick", 4)
                ]
            );
        }
        assert_eq!(lp.stats(), timerloop::Stats::default());
    }
}

/// The ref count reaching zero through `clear_timeout`'s fast path (a
/// pending, plain, refed timer, its list left non-empty), from outside and
/// from inside a pass: the loop stops being alive at once.
#[test]
fn the_ref_count_reaching_zero_through_a_clear() {
    // From outside.
    let s = st();
    let mut lp = EventLoop::with_virtual_clock();
    let a = lp.set_timeout(10, move |lp| s.push("a", lp));
    let u1 = lp.set_timeout(10, move |lp| s.push("u1", lp));
    let u2 = lp.set_timeout(20, move |lp| s.push("u2", lp));
    lp.unref_timeout(u1).unwrap();
    lp.unref_timeout(u2).unwrap();
    assert!(lp.is_alive());
    lp.clear_timeout(a).unwrap();
    assert!(!lp.is_alive());
    assert_eq!(lp.stats().refed_timers, 0);
    assert_eq!((lp.stats().lists, lp.stats().timers), (2, 2));
    lp.run().unwrap();
    assert_eq!(lp.now(), 0);
    assert!(s.log().is_empty());
    // Refed again (0 -> 1): the loop waits for it.
    lp.ref_timeout(u1).unwrap();
    lp.run().unwrap();
    assert_eq!(s.log(), [("u1", 10)]);
    assert_eq!(lp.now(), 10);

    // From inside a pass: x (unrefed) clears y, the last refed timer,
    // whose list keeps w (unrefed).
    let s = st();
    let mut lp = EventLoop::with_virtual_clock();
    let y = lp.set_timeout(5, move |lp| s.push("y", lp));
    let w = lp.set_timeout(5, move |lp| s.push("w", lp));
    lp.unref_timeout(w).unwrap();
    s.a.set(Some(y));
    let x = lp.set_timeout(1, move |lp| {
        s.push("x", lp);
        lp.clear_timeout(s.a.get().unwrap()).unwrap();
        assert_eq!(lp.stats().refed_timers, 0);
        assert!(!lp.is_alive());
    });
    lp.unref_timeout(x).unwrap();
    lp.run().unwrap();
    assert_eq!(s.log(), [("x", 1)]);
    assert_eq!(lp.now(), 1);
    assert_eq!((lp.stats().timers, lp.stats().refed_timers), (1, 0));
    lp.ref_timeout(w).unwrap();
    lp.run().unwrap();
    assert_eq!(s.log(), [("x", 1), ("w", 5)]);
    assert_eq!(lp.stats(), timerloop::Stats::default());
}

/// Ticks and microtasks queued by plain timeouts drain between them (not
/// before the first), a tick that clears the next peeked timer stops it,
/// and one queued by the last timer of a list drains before the next list.
#[test]
fn ticks_between_plain_timeouts() {
    let s = st();
    let mut lp = EventLoop::with_virtual_clock();
    lp.next_tick(move |lp| s.push("main-tick", lp));
    lp.set_timeout(1, move |lp| {
        s.push("a", lp);
        lp.queue_microtask(move |lp| s.push("a-micro", lp));
    });
    lp.set_timeout(1, move |lp| {
        s.push("b", lp);
        lp.next_tick(move |lp| {
            s.push("b-tick", lp);
            lp.clear_timeout(s.a.get().unwrap()).unwrap();
        });
    });
    let c = lp.set_timeout(1, move |lp| s.push("c (cleared)", lp));
    s.a.set(Some(c));
    lp.set_timeout(1, move |lp| {
        s.push("d", lp);
        lp.next_tick(move |lp| s.push("d-tick", lp));
    });
    lp.set_timeout(2, move |lp| s.push("e", lp));
    lp.run().unwrap();
    assert_eq!(
        s.log(),
        [
            ("main-tick", 0),
            ("a", 1),
            ("a-micro", 1),
            ("b", 1),
            ("b-tick", 1),
            ("d", 1),
            ("d-tick", 1),
            ("e", 2)
        ]
    );
}

/// A plain timeout whose callback clears the last other timer of its
/// list (the list goes) and sets a new one of that duration (a new list,
/// perhaps in the same slot): the pass leaves the old list alone.
#[test]
fn a_plain_timeout_recreating_its_list() {
    let s = st();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(3, move |lp| {
        s.push("a", lp);
        lp.clear_timeout(s.a.get().unwrap()).unwrap();
        lp.set_timeout(3, move |lp| s.push("n", lp));
    });
    let o = lp.set_timeout(3, move |lp| s.push("never", lp));
    s.a.set(Some(o));
    lp.run().unwrap();
    assert_eq!(s.log(), [("a", 3), ("n", 6)]);
    assert_eq!(lp.stats(), timerloop::Stats::default());
}

/// `clear_timeout`'s fast path frees a plain timer's slot without
/// resetting its links (`List::remove_head_freeing`): the stale links must
/// never be read as a list's. Slots freed from each place in a list (the
/// oldest, the middle, the newest, the last one left) are taken again by
/// new timers of the same and of other durations, and every timer fires
/// in Node's order, once; the stale handles stay stale.
#[test]
fn slots_freed_by_a_clear_are_taken_again_with_fresh_links() {
    let s = st();
    let mut lp = EventLoop::with_virtual_clock();
    let a = s.timeout(&mut lp, 10, "a");
    let b = s.timeout(&mut lp, 10, "b");
    let c = s.timeout(&mut lp, 10, "c");
    let d = s.timeout(&mut lp, 10, "d");
    let e = s.timeout(&mut lp, 10, "e");
    let lone = s.timeout(&mut lp, 7, "lone");
    // The middle, the oldest, the newest, and a list's only timer.
    for t in [c, a, e, lone] {
        lp.clear_timeout(t).unwrap();
    }
    assert_eq!(lp.stats().timers, 2);
    // New timers take the freed slots (newest freed first): one of
    // another duration, then ones of the list the clears left.
    let f = s.timeout(&mut lp, 5, "f");
    let g = s.timeout(&mut lp, 10, "g");
    let h = s.timeout(&mut lp, 10, "h");
    let i = s.timeout(&mut lp, 7, "i");
    assert_eq!(lp.stats().timers, 6);
    for t in [a, c, e, lone] {
        assert!(!lp.timeout_is_pending(t), "a cleared handle is stale");
        assert_eq!(lp.clear_timeout(t), Err(timerloop::TimerError::Stale));
    }
    for t in [b, d, f, g, h, i] {
        assert!(lp.timeout_is_pending(t));
    }
    // One more clear of a reused slot, from the middle of its list.
    lp.clear_timeout(g).unwrap();
    let j = s.timeout(&mut lp, 10, "j");
    lp.run().unwrap();
    assert_eq!(
        s.log(),
        [
            ("f", 5),
            ("i", 7),
            ("b", 10),
            ("d", 10),
            ("h", 10),
            ("j", 10)
        ]
    );
    assert_eq!(lp.stats().timers, 0);
    assert!(!lp.timeout_is_pending(j));
}

/// A clear that empties its list drops the list. The newest list of a
/// direct duration leaves with no call (its heap entry the last one, the
/// map slot a direct one); a far duration's, or a list whose heap entry
/// lies elsewhere, leaves the general way; and the last refed timer's
/// clear brings the ref count to zero either way. Every other list stays
/// and fires in order.
#[test]
fn clears_that_empty_their_lists() {
    const FAR: u64 = 1 << 23; // above the direct durations (2^22 ms)
    let s = st();
    let mut lp = EventLoop::with_virtual_clock();
    let d1 = s.timeout(&mut lp, 1, "d1");
    let d2 = s.timeout(&mut lp, 2, "d2");
    let d3 = s.timeout(&mut lp, 3, "d3");
    let f1 = s.timeout(&mut lp, FAR, "f1");
    let f2 = s.timeout(&mut lp, FAR + 1, "f2");
    let d4 = s.timeout(&mut lp, 4, "d4");
    let lists = |lp: &EventLoop| (lp.stats().lists, lp.stats().queued_lists);
    assert_eq!(lists(&lp), (6, 6));
    // Newest first: a direct list (the heap's last entry), then a far one.
    lp.clear_timeout(d4).unwrap();
    assert_eq!(lists(&lp), (5, 5));
    lp.clear_timeout(f2).unwrap();
    assert_eq!(lists(&lp), (4, 4));
    // The earliest (the heap's root), and one from the middle.
    lp.clear_timeout(d1).unwrap();
    lp.clear_timeout(d2).unwrap();
    assert_eq!(lists(&lp), (2, 2));
    assert_eq!(lp.stats().refed_timers, 2);
    // Lists made again for the durations cleared take their slots.
    let d2b = s.timeout(&mut lp, 2, "d2b");
    let f2b = s.timeout(&mut lp, FAR + 1, "f2b");
    assert_eq!(lists(&lp), (4, 4));
    lp.clear_timeout(f2b).unwrap();
    lp.unref_timeout(f1).unwrap();
    lp.run().unwrap();
    assert_eq!(s.log(), [("d2b", 2), ("d3", 3)]);
    // The last refed timer, the newest list: the ref count reaches zero
    // on the quick way, and the loop has nothing left to wait for.
    let last = s.timeout(&mut lp, 7, "last");
    assert!(lp.is_alive());
    lp.clear_timeout(last).unwrap();
    assert!(!lp.is_alive());
    assert_eq!(lp.stats().refed_timers, 0);
    // f1, unrefed, keeps its list.
    assert_eq!(lists(&lp), (1, 1));
    for t in [d1, d2, d2b, d3, d4, f2, f2b, last] {
        assert!(!lp.timeout_is_pending(t));
    }
    lp.ref_timeout(f1).unwrap();
    lp.run().unwrap();
    assert_eq!(s.log(), [("d2b", 2), ("d3", 3), ("f1", FAR)]);
    assert_eq!(lp.stats(), timerloop::Stats::default());
}

/// A plain timeout is current while its callback runs, and at no other
/// moment: not in the ticks and microtasks it queues (which run before the
/// next timer of its list, or after its list), not in the next list's
/// timers' ticks, not in the uncaught handler after a plain callback
/// fails, not in an immediate after the pass, not after `run`. (The pass
/// leaves a plain callback's index behind it and resets it before any of
/// those can run.)
#[test]
fn a_plain_timeout_is_current_only_inside_its_callback() {
    #[derive(Default)]
    struct Cur {
        log: RefCell<Vec<(&'static str, Option<Timeout>)>>,
        t: [Cell<Option<Timeout>>; 4],
    }
    fn cur() -> &'static Cur {
        Box::leak(Box::default())
    }
    impl Cur {
        fn see(&self, name: &'static str, lp: &EventLoop) {
            self.log.borrow_mut().push((name, lp.current_timeout()));
        }
        fn t(&self, i: usize) -> Option<Timeout> {
            self.t[i].get()
        }
    }
    let c = cur();
    let mut lp = EventLoop::with_virtual_clock();
    let l = c;
    lp.set_uncaught_handler(move |lp, _| l.see("handler", lp));
    // Two timers of one list: the first queues a tick and a microtask,
    // which run between the two (the pass's path with work queued).
    c.t[0].set(Some(lp.set_timeout(1, move |lp| {
        c.see("a", lp);
        lp.next_tick(move |lp| c.see("a.tick", lp));
        lp.queue_microtask(move |lp| c.see("a.micro", lp));
    })));
    // The second queues nothing (the quiet path), the third fails.
    c.t[1].set(Some(lp.set_timeout(1, move |lp| c.see("b", lp))));
    c.t[2].set(Some(lp.set_timeout(1, move |lp| -> Result<(), &str> {
        c.see("c", lp);
        lp.queue_microtask(move |lp| c.see("c.micro", lp));
        Err("boom")
    })));
    // The last of a later list: its tick runs after the list, then an
    // immediate after the pass.
    c.t[3].set(Some(lp.set_timeout(2, move |lp| {
        c.see("d", lp);
        lp.next_tick(move |lp| c.see("d.tick", lp));
        lp.set_immediate(move |lp| c.see("immediate", lp));
    })));
    lp.run().unwrap();
    assert_eq!(lp.current_timeout(), None);
    assert_eq!(
        *c.log.borrow(),
        [
            ("a", c.t(0)),
            ("a.tick", None),
            ("a.micro", None),
            ("b", c.t(1)),
            ("c", c.t(2)),
            ("handler", None),
            ("c.micro", None),
            ("d", c.t(3)),
            ("d.tick", None),
            ("immediate", None),
        ]
    );
}
