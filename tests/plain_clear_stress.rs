//! `clear_timeout`'s fast path for plain timers (round 24 of issue 12: it
//! reads the timer's list and links unchecked and leaves the freed slot's
//! links stale, for the next timer stored there to overwrite), driven by
//! random runs of plain timeouts and intervals (every callback captures
//! one `&'static`, so each is plain). They are cleared, refreshed, kept,
//! released, unrefed and set again from inside timer callbacks (other
//! timers of the same list while the pass runs it, and themselves),
//! ticks, microtasks, immediates and tasks (with sleeps and Go timers
//! sharing the lists), against a model of what each handle must answer.
//! Debug builds assert the layer's invariants (a linked head is live, an
//! appended entry is unlinked, the unchecked slot is mapped, ...).
//! `STRESS_SEEDS`, `STRESS_FROM` and `TRACE` widen or trace the random runs.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::Duration;

use timerloop::time::{self, go};
use timerloop::{EventLoop, Timeout, TimerError};

#[derive(Clone, Debug)]
struct Info {
    t: Timeout,
    ms: u64,
    repeat: bool,
    /// In its list, to fire at `due`.
    pending: bool,
    due: u64,
    /// Its handle works (storage kept or not yet freed).
    alive: bool,
    cleared: bool,
    kept: bool,
    fired: u32,
    /// Refreshed while due (by a tick or microtask between two timers of
    /// its list, maybe after the pass peeked it): Node runs a peeked timer
    /// even if a tick refreshed it, so it may run before `due`.
    early_ok: bool,
}

struct St {
    rng: Cell<u64>,
    timers: RefCell<Vec<Info>>,
    ids: RefCell<HashMap<Timeout, usize>>,
    /// New timers still to make.
    budget: Cell<u32>,
    /// Whether futures' timers share the storage (stats not checked).
    futures: bool,
    /// The id of the timer whose callback runs.
    running: Cell<Option<usize>>,
    fast_clears: Cell<u64>,
}

const DURATIONS: [u64; 8] = [1, 2, 2, 3, 3, 5, 8, (1 << 22) + 1];

impl St {
    fn rand(&self, n: u64) -> u64 {
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        x % n
    }

    fn pick(&self) -> Option<usize> {
        let n = self.timers.borrow().len() as u64;
        if n == 0 {
            return None;
        }
        // Mostly the newest ones (alive, same lists), sometimes any (stale).
        if self.rand(4) == 0 {
            Some(self.rand(n) as usize)
        } else {
            let w = n.min(12);
            Some((n - 1 - self.rand(w)) as usize)
        }
    }

    fn info(&self, id: usize) -> Info {
        self.timers.borrow()[id].clone()
    }

    fn with<R>(&self, id: usize, f: impl FnOnce(&mut Info) -> R) -> R {
        f(&mut self.timers.borrow_mut()[id])
    }

    fn stored(&self) -> usize {
        let alive = self.timers.borrow().iter().filter(|i| i.alive).count();
        let running_dead = self.running.get().is_some_and(|id| !self.info(id).alive);
        alive + usize::from(running_dead)
    }
}

fn leak(seed: u64, budget: u32, futures: bool) -> &'static St {
    Box::leak(Box::new(St {
        rng: Cell::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
        timers: RefCell::default(),
        ids: RefCell::default(),
        budget: Cell::new(budget),
        futures,
        running: Cell::new(None),
        fast_clears: Cell::new(0),
    }))
}

fn make(s: &'static St, lp: &mut EventLoop) {
    if s.budget.get() == 0 {
        return;
    }
    s.budget.set(s.budget.get() - 1);
    let ms = DURATIONS[s.rand(DURATIONS.len() as u64) as usize];
    let repeat = s.rand(6) == 0;
    let t = if repeat {
        lp.set_interval(ms, move |lp| on_fire(s, lp))
    } else {
        lp.set_timeout(ms, move |lp| on_fire(s, lp))
    };
    let now = lp.now();
    let mut timers = s.timers.borrow_mut();
    let id = timers.len();
    assert!(
        s.ids.borrow_mut().insert(t, id).is_none(),
        "a handle reused"
    );
    timers.push(Info {
        t,
        ms,
        repeat,
        pending: true,
        due: now + ms,
        alive: true,
        cleared: false,
        kept: false,
        fired: 0,
        early_ok: false,
    });
}

/// One random operation on a random timer (maybe stale, maybe the one
/// running), checked against the model.
fn op(s: &'static St, lp: &mut EventLoop) {
    let Some(id) = s.pick() else {
        return make(s, lp);
    };
    let i = s.info(id);
    let running = s.running.get() == Some(id);
    let now = lp.now();
    let which = s.rand(10);
    if std::env::var("TRACE").is_ok() {
        eprintln!(
            "op {which} on {id} at {now} (running {:?}): {i:?}",
            s.running.get()
        );
    }
    match which {
        0..=3 => {
            let r = lp.clear_timeout(i.t);
            if !i.alive {
                assert_eq!(r, Err(TimerError::Stale), "{i:?}");
            } else {
                assert_eq!(r, Ok(()), "{i:?}");
                if i.pending && !i.kept && !running {
                    s.fast_clears.set(s.fast_clears.get() + 1);
                }
                s.with(id, |m| {
                    if !m.cleared {
                        m.cleared = true;
                        m.pending = false;
                        if !m.kept {
                            m.alive = false;
                        }
                    }
                });
            }
        }
        4 => {
            let r = lp.refresh(i.t);
            if !i.alive {
                assert_eq!(r, Err(TimerError::Stale), "{i:?}");
            } else {
                assert_eq!(r, Ok(()));
                // An interval refreshed by its own callback stays on its grid.
                if !(i.cleared || running && i.repeat) {
                    s.with(id, |m| {
                        m.early_ok |= m.pending && m.due <= now && !running;
                        m.pending = true;
                        m.due = now + m.ms;
                    });
                }
            }
        }
        5 => {
            let r = lp.keep_timeout(i.t);
            if i.alive {
                assert_eq!(r, Ok(()));
                s.with(id, |m| m.kept = true);
            } else {
                assert_eq!(r, Err(TimerError::Stale));
            }
        }
        6 => {
            let r = lp.release_timeout(i.t);
            if i.alive {
                // An unkept timer is cleared (and freed) by the clear
                // `release_timeout` starts with: a release that succeeds.
                assert_eq!(r, Ok(()), "{i:?}");
                s.with(id, |m| {
                    m.alive = false;
                    m.pending = false;
                    m.cleared = true;
                    m.kept = false;
                });
            } else {
                assert_eq!(r, Err(TimerError::Stale));
            }
        }
        7 => {
            let on = s.rand(2) == 0;
            let r = if on {
                lp.ref_timeout(i.t)
            } else {
                lp.unref_timeout(i.t)
            };
            assert_eq!(r.is_ok(), i.alive, "{i:?}");
            if i.alive {
                assert_eq!(lp.timeout_has_ref(i.t), on);
            }
        }
        _ => make(s, lp),
    }
    // Every handle answers as the model says.
    if !running {
        let i = s.info(id);
        assert_eq!(lp.timeout_is_pending(i.t), i.pending, "{i:?}");
    }
    if !s.futures {
        assert_eq!(lp.stats().timers, s.stored(), "storage");
    }
}

fn ops(s: &'static St, lp: &mut EventLoop, n: u64) {
    for _ in 0..n {
        op(s, lp);
    }
}

fn on_fire(s: &'static St, lp: &mut EventLoop) {
    let t = lp.current_timeout().expect("a timer runs");
    let id = *s.ids.borrow().get(&t).expect("a known timer");
    let now = lp.now();
    let i = s.info(id);
    if std::env::var("TRACE").is_ok() {
        eprintln!("fire {id} at {now}: {i:?}");
    }
    assert!(i.alive && !i.cleared, "a cleared or freed timer ran: {i:?}");
    assert!(i.pending, "a timer ran while not pending: {i:?}");
    assert!(now >= i.due || i.early_ok, "early: {i:?} at {now}");
    s.with(id, |m| {
        m.early_ok = false;
        m.fired += 1;
        m.pending = false;
    });
    assert_eq!(s.running.replace(Some(id)), None);
    // Out of budget, intervals end themselves, so the run ends.
    if s.budget.get() == 0 && i.repeat {
        lp.clear_interval(t).unwrap();
        s.with(id, |m| {
            m.cleared = true;
            if !m.kept {
                m.alive = false;
            }
        });
    }
    let n = s.rand(5);
    ops(s, lp, n);
    // Ticks, microtasks and immediates that do more, run between timers
    // of this list (a peeked head cleared and its slot taken again).
    match s.rand(4) {
        0 => lp.next_tick(move |lp| ops(s, lp, 3)),
        1 => lp.queue_microtask(move |lp| ops(s, lp, 3)),
        2 => {
            lp.set_immediate(move |lp| ops(s, lp, 2));
        }
        _ => {}
    }
    s.running.set(None);
    s.with(id, |m| {
        if m.alive && !m.cleared && m.repeat {
            m.pending = true;
            m.due = now + m.ms;
        } else if m.alive && !m.pending && !m.kept {
            // A timeout that ran and was not refreshed or kept is freed.
            m.alive = false;
        }
    });
}

fn run_seed(seed: u64, futures: bool) -> u64 {
    let s = leak(seed, 400, futures);
    let mut lp = EventLoop::with_virtual_clock();
    for _ in 0..20 {
        make(s, &mut lp);
    }
    ops(s, &mut lp, 10);
    if futures {
        for k in 0..3u64 {
            lp.spawn(async move {
                let mut g = go::Timer::new(Duration::from_millis(2 + k));
                for j in 0..15u64 {
                    let ms = DURATIONS[((seed + j + k) % 7) as usize];
                    time::sleep(Duration::from_millis(ms)).await;
                    EventLoop::with_current(|lp| ops(s, lp, 3));
                    match j % 3 {
                        0 => {
                            g.reset(Duration::from_millis(ms));
                        }
                        1 => {
                            g.stop();
                        }
                        _ => {
                            g.reset(Duration::from_millis(1 + j % 4));
                        }
                    }
                }
                drop(g);
            });
        }
    }
    lp.run().unwrap();
    // Refed timers all ran: what is left pending is unrefed (or kept and
    // refreshed after a clear, a zombie). Clear and release it all.
    let all = s.timers.borrow().clone();
    for (id, i) in all.iter().enumerate() {
        let r = lp.clear_timeout(i.t);
        assert_eq!(r.is_ok(), i.alive, "{i:?}");
        if i.alive && i.kept {
            assert_eq!(lp.release_timeout(i.t), Ok(()));
        }
        s.with(id, |m| m.alive = false);
        assert!(!lp.timeout_is_pending(i.t));
    }
    lp.run().unwrap();
    assert_eq!(lp.stats().timers, 0, "seed {seed}");
    assert_eq!(lp.stats().refed_timers, 0, "seed {seed}");
    s.fast_clears.get()
}

/// The number in environment variable `name`, or `default`.
fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_plain_clears_refreshes_keeps_and_reuses() {
    let seeds = env_u64("STRESS_SEEDS", 150);
    let mut fast = 0;
    for seed in env_u64("STRESS_FROM", 0)..seeds {
        fast += run_seed(seed, false);
    }
    assert!(fast > 1000, "the fast path ran {fast} times");
}

#[test]
fn random_plain_clears_beside_sleeps_and_go_timers() {
    for seed in 0..env_u64("STRESS_SEEDS", 80) {
        run_seed(seed, true);
    }
}

/// Targeted: the callback of a list's head clears the next timer of the
/// same list (the one the pass peeks next), and a new timer takes its slot
/// at once, appended to the same list; then the newest, then the middle;
/// the pass runs what is left in order.
#[test]
fn clearing_the_next_head_from_a_callback_and_taking_its_slot() {
    #[derive(Default)]
    struct S {
        log: RefCell<Vec<(u32, u64)>>,
        hs: RefCell<Vec<Timeout>>,
    }
    let s: &'static S = Box::leak(Box::default());
    let mut lp = EventLoop::with_virtual_clock();
    fn cb(s: &'static S, lp: &mut EventLoop, me: u32) {
        s.log.borrow_mut().push((me, lp.now()));
    }
    // Timers 0..6 in the 5 ms list; timer 0's callback clears 1 (next head),
    // 5 (tail) and 3 (middle), and sets three new ones (their slots).
    let first = lp.set_timeout(5, move |lp| {
        cb(s, lp, 0);
        let hs = s.hs.borrow().clone();
        for k in [1, 5, 3] {
            lp.clear_timeout(hs[k]).unwrap();
        }
        for _ in 0..3 {
            let t = lp.set_timeout(5, move |lp| cb(s, lp, 100));
            assert!(lp.timeout_is_pending(t));
        }
        for k in [1, 5, 3] {
            assert!(!lp.timeout_is_pending(hs[k]));
            assert_eq!(lp.clear_timeout(hs[k]), Err(TimerError::Stale));
        }
    });
    s.hs.borrow_mut().push(first);
    for k in 1..6u32 {
        let t = match k {
            1 => lp.set_timeout(5, move |lp| cb(s, lp, 1)),
            2 => lp.set_timeout(5, move |lp| cb(s, lp, 2)),
            3 => lp.set_timeout(5, move |lp| cb(s, lp, 3)),
            4 => lp.set_timeout(5, move |lp| cb(s, lp, 4)),
            _ => lp.set_timeout(5, move |lp| cb(s, lp, 5)),
        };
        s.hs.borrow_mut().push(t);
    }
    lp.run().unwrap();
    assert_eq!(
        *s.log.borrow(),
        [(0, 5), (2, 5), (4, 5), (100, 10), (100, 10), (100, 10)]
    );
    assert_eq!(lp.stats().timers, 0);
}

/// Targeted: a tick between two timers of one list (the pass's
/// non-quiet path) clears the timer the pass peeked and sets a new one
/// that takes its slot (same index, new generation), in another list: the
/// peeked timer does not run, the new one runs at its own time.
#[test]
fn a_tick_clears_the_peeked_head_and_its_slot_is_taken() {
    #[derive(Default)]
    struct S {
        log: RefCell<Vec<(&'static str, u64)>>,
        b: Cell<Option<Timeout>>,
    }
    let s: &'static S = Box::leak(Box::default());
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(4, move |lp| {
        s.log.borrow_mut().push(("a", lp.now()));
        lp.next_tick(move |lp| {
            lp.clear_timeout(s.b.get().unwrap()).unwrap();
            // Takes b's slot (the arena reuses the newest freed slot).
            lp.set_timeout(1, move |lp| s.log.borrow_mut().push(("n", lp.now())));
            lp.set_timeout(4, move |lp| s.log.borrow_mut().push(("m", lp.now())));
        });
    });
    let b = lp.set_timeout(4, move |lp| s.log.borrow_mut().push(("b", lp.now())));
    s.b.set(Some(b));
    lp.set_timeout(4, move |lp| s.log.borrow_mut().push(("c", lp.now())));
    lp.run().unwrap();
    assert_eq!(*s.log.borrow(), [("a", 4), ("c", 4), ("n", 5), ("m", 8)]);
    assert_eq!(lp.stats().timers, 0);
}

/// Many reuses of one slot through the fast path, with unrefed and kept
/// neighbours in the same list and a refresh moving a neighbour between
/// each: the list stays whole (every survivor fires once, in order).
#[test]
fn one_slot_cleared_and_retaken_many_times() {
    #[derive(Default)]
    struct S {
        log: RefCell<Vec<u32>>,
    }
    let s: &'static S = Box::leak(Box::default());
    let mut lp = EventLoop::with_virtual_clock();
    let a = lp.set_timeout(10, move |_| s.log.borrow_mut().push(1));
    let b = lp.set_timeout(10, move |_| s.log.borrow_mut().push(2));
    lp.unref_timeout(b).unwrap();
    let c = lp.set_timeout(10, move |_| s.log.borrow_mut().push(3));
    lp.keep_timeout(c).unwrap();
    for k in 0..10_000u32 {
        let t = lp.set_timeout(10, move |_| s.log.borrow_mut().push(99));
        if k % 3 == 0 {
            lp.refresh([a, b, c][(k / 3 % 3) as usize]).unwrap();
        }
        if k % 5 == 0 {
            lp.unref_timeout(t).unwrap();
        }
        lp.clear_timeout(t).unwrap();
        assert_eq!(lp.clear_timeout(t), Err(TimerError::Stale));
    }
    assert_eq!(lp.stats().timers, 3);
    assert_eq!(lp.stats().lists, 1);
    lp.run().unwrap();
    let log = s.log.borrow().clone();
    let mut sorted = log.clone();
    sorted.sort();
    assert_eq!(sorted, [1, 2, 3], "{log:?}");
    lp.release_timeout(c).unwrap();
    assert_eq!(lp.stats().timers, 0);
}

/// The fast path says from the links whether the clear emptied the list
/// (`remove_head_freeing`): a refed list's last timer cleared, from the head,
/// the tail or alone, drops the list at once, and the loop has nothing
/// left to wait for; a list that keeps a timer stays.
#[test]
fn clearing_a_lists_last_timer_drops_it() {
    let mut lp = EventLoop::with_virtual_clock();
    let a = lp.set_timeout(7, |_| {});
    lp.clear_timeout(a).unwrap();
    assert_eq!((lp.stats().lists, lp.stats().queued_lists), (0, 0));
    let (a, b) = (lp.set_timeout(7, |_| {}), lp.set_timeout(7, |_| {}));
    lp.clear_timeout(a).unwrap(); // the head, with a next one
    assert_eq!(lp.stats().lists, 1);
    lp.clear_timeout(b).unwrap(); // the head, alone
    assert_eq!((lp.stats().lists, lp.stats().queued_lists), (0, 0));
    let (a, b) = (lp.set_timeout(7, |_| {}), lp.set_timeout(7, |_| {}));
    lp.clear_timeout(b).unwrap(); // the tail
    assert_eq!(lp.stats().lists, 1);
    lp.clear_timeout(a).unwrap();
    assert_eq!((lp.stats().lists, lp.stats().queued_lists), (0, 0));
    assert_eq!(lp.stats().refed_timers, 0);
    lp.run().unwrap();
    assert_eq!(lp.now(), 0, "nothing was left to wait for");
}
