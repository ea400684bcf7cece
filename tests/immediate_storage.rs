//! An immediate's storage (round 21's 16-byte entry, with no drop glue):
//! random scripts of
//! set / clear / ref / unref / run / drop-the-loop, through the public API
//! only, checking for every immediate ever set that
//!
//! - what it captured is dropped exactly once, and exactly when it should
//!   be: at its clear, after it ran, or with the loop (never before,
//!   never twice, never lost);
//! - it ran at most once, and only while pending;
//! - `immediate_is_pending`, `immediate_has_ref` and `stats().immediates`
//!   agree with what ran and what was cleared, ref'd and unref'd;
//!   `is_alive` with whether a refed immediate is pending.
//!
//! Callbacks come in every storage class (capturing nothing, one word,
//! pooled, boxed) and may return errors, panic, set and clear other
//! immediates, queue ticks and microtasks that clear them, and capture a
//! value whose drop panics. Runs with and without an uncaught handler.
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use timerloop::{EventLoop, Immediate, TimerError};

thread_local! {
    /// Drops of each immediate's probe, by id.
    static DROPS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// Runs of each immediate, by id.
    static RUNS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Counts its drop against its immediate's id; panics then if `bomb`.
struct Probe {
    id: usize,
    bomb: bool,
}

impl Drop for Probe {
    fn drop(&mut self) {
        DROPS.with(|d| d.borrow_mut()[self.id] += 1);
        if self.bomb {
            panic!("a panicking drop");
        }
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Fate {
    Pending,
    Ran,
    Cleared,
}

struct Imm {
    h: Immediate,
    fate: Fate,
    refed: bool,
    /// Whether it captured a probe (plain ones capture none).
    probe: bool,
    bomb: bool,
}

struct Shared {
    rng: u64,
    imms: Vec<Imm>,
    /// A bomb is set only while no other is pending: two panicking drops
    /// while the loop is dropped would abort.
    bombs_pending: usize,
    sets_left: usize,
}

type Sh = Rc<RefCell<Shared>>;

fn dbg(msg: std::fmt::Arguments<'_>) {
    if std::env::var("IMM16_DEBUG").is_ok() {
        eprintln!("{msg}");
    }
}

fn r(sh: &Sh, n: u64) -> u64 {
    let mut s = sh.borrow_mut();
    s.rng = s
        .rng
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (s.rng >> 33) % n
}

/// What a callback does when it runs, then how it ends.
fn body(lp: &mut EventLoop, sh: &Sh, id: usize, depth: u32) -> Result<(), &'static str> {
    RUNS.with(|r| r.borrow_mut()[id] += 1);
    dbg(format_args!("run {id} count {}", lp.stats().immediates));
    let bomb = {
        let mut s = sh.borrow_mut();
        assert_eq!(s.imms[id].fate, Fate::Pending, "ran while not pending");
        s.imms[id].fate = Fate::Ran;
        if s.imms[id].bomb {
            s.bombs_pending -= 1;
        }
        s.imms[id].bomb
    };
    if depth < 3 {
        for _ in 0..r(sh, 3) {
            action(lp, sh, depth + 1, true);
        }
    }
    match r(sh, 10) {
        0 => Err("an error"),
        // Not a bomb's: its capture's drop would panic while unwinding.
        1 if !bomb => panic!("a panicking callback"),
        _ => Ok(()),
    }
}

/// Sets an immediate of a random storage class.
fn set(lp: &mut EventLoop, sh: &Sh, depth: u32) {
    {
        let mut s = sh.borrow_mut();
        if s.sets_left == 0 {
            return;
        }
        s.sets_left -= 1;
    }
    let id = sh.borrow().imms.len();
    DROPS.with(|d| d.borrow_mut().push(0));
    RUNS.with(|r| r.borrow_mut().push(0));
    let kind = r(sh, 6);
    let bomb = kind == 5 && sh.borrow().bombs_pending == 0;
    let kind = if kind == 5 && !bomb { 1 } else { kind };
    let s2 = sh.clone();
    let probe = || Probe { id, bomb };
    // The plain and inline ones reach the shared state through a thread
    // local, so that they capture one word.
    let h = match kind {
        0 => {
            // Plain: captures one word without drop glue (id and depth).
            let word = ((id as u64) << 8) | u64::from(depth);
            lp.set_immediate(move |lp: &mut EventLoop| {
                let sh = PLAIN_SH.with(|p| p.borrow().clone().unwrap());
                body(lp, &sh, (word >> 8) as usize, (word & 0xff) as u32)
            })
        }
        1 | 5 => {
            // One word with drop glue: inline.
            let c = Rc::new((probe(), id, depth));
            lp.set_immediate(move |lp: &mut EventLoop| {
                let sh = PLAIN_SH.with(|p| p.borrow().clone().unwrap());
                body(lp, &sh, c.1, c.2)
            })
        }
        2 => {
            // Pooled: a few words.
            let (p, pad) = (probe(), [id as u64; 2]);
            lp.set_immediate(move |lp: &mut EventLoop| {
                let _keep = (&p, pad);
                body(lp, &s2, id, depth)
            })
        }
        3 => {
            // Boxed: more than eight words.
            let (p, pad) = (probe(), [id as u64; 12]);
            lp.set_immediate(move |lp: &mut EventLoop| {
                let _keep = (&p, pad);
                body(lp, &s2, id, depth)
            })
        }
        _ => {
            // Plain, capturing nothing; its run is not logged.
            lp.set_immediate(|_: &mut EventLoop| {})
        }
    };
    let probe = matches!(kind, 1 | 2 | 3 | 5);
    dbg(format_args!(
        "set {id} kind {kind} bomb {bomb} depth {depth} count {}",
        lp.stats().immediates
    ));
    // Kind 4 never records its run: mark it as one that may run unseen.
    let mut s = sh.borrow_mut();
    if bomb {
        s.bombs_pending += 1;
    }
    s.imms.push(Imm {
        h,
        fate: Fate::Pending,
        refed: true,
        probe,
        bomb,
    });
    if kind == 4 {
        NOBODY.with(|n| n.borrow_mut().push(id));
    }
}

thread_local! {
    static PLAIN_SH: RefCell<Option<Sh>> = const { RefCell::new(None) };
    /// Ids of immediates that capture nothing and do not log their run.
    static NOBODY: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Clears immediate `j` and checks the answer against the model.
fn clear(lp: &mut EventLoop, sh: &Sh, j: usize) {
    let (h, fate, bomb) = {
        let s = sh.borrow();
        let m = &s.imms[j];
        (m.h, m.fate, m.bomb)
    };
    let silent = NOBODY.with(|n| n.borrow().contains(&j));
    let was_pending = lp.immediate_is_pending(h);
    if !silent {
        assert_eq!(was_pending, fate == Fate::Pending, "pending of {j}");
    }
    if bomb && was_pending {
        // Its capture's drop panics out of the clear: the immediate is
        // cleared all the same.
        sh.borrow_mut().imms[j].fate = Fate::Cleared;
        sh.borrow_mut().bombs_pending -= 1;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lp.clear_immediate(h)));
        assert!(r.is_err());
        assert!(!lp.immediate_is_pending(h));
        return;
    }
    let r = lp.clear_immediate(h);
    dbg(format_args!(
        "clear {j} was {was_pending} -> {r:?} count {}",
        lp.stats().immediates
    ));
    if was_pending {
        assert_eq!(r, Ok(()));
        sh.borrow_mut().imms[j].fate = Fate::Cleared;
    } else {
        assert_eq!(r, Err(TimerError::Stale));
    }
}

fn action(lp: &mut EventLoop, sh: &Sh, depth: u32, nested: bool) {
    let n = sh.borrow().imms.len();
    match r(sh, 10) {
        0..=2 => set(lp, sh, depth),
        3 if n > 0 => {
            let j = r(sh, n as u64) as usize;
            clear(lp, sh, j);
        }
        4 if n > 0 => clear(lp, sh, n - 1), // the newest: the fast path
        5 if n > 0 => {
            // Set and clear at once.
            set(lp, sh, depth);
            let n = sh.borrow().imms.len();
            clear(lp, sh, n - 1);
        }
        6 if n > 0 => {
            let j = r(sh, n as u64) as usize;
            let on = r(sh, 2) == 0;
            let h = sh.borrow().imms[j].h;
            let pending = lp.immediate_is_pending(h);
            let res = if on {
                lp.ref_immediate(h)
            } else {
                lp.unref_immediate(h)
            };
            assert_eq!(res.is_ok(), pending);
            if pending {
                sh.borrow_mut().imms[j].refed = on;
            }
        }
        7 if nested && n > 0 => {
            let s2 = sh.clone();
            let j = r(sh, n as u64) as usize;
            lp.next_tick(move |lp: &mut EventLoop| clear(lp, &s2, j));
        }
        8 if nested && n > 0 => {
            let s2 = sh.clone();
            let j = r(sh, n as u64) as usize;
            lp.queue_microtask(move |lp: &mut EventLoop| {
                clear(lp, &s2, j);
                set(lp, &s2, depth);
            });
        }
        _ => {}
    }
}

/// Checks every immediate against the model, between top-level calls.
/// `extra`: how many failures a handler took, each of which queues a
/// plain, refed immediate of the loop's own (Node's "make sure the next
/// immediate cycle isn't empty").
fn check(lp: &EventLoop, sh: &Sh, extra: Option<u32>) {
    let s = sh.borrow();
    let drops = DROPS.with(|d| d.borrow().clone());
    let runs = RUNS.with(|r| r.borrow().clone());
    let nobody = NOBODY.with(|n| n.borrow().clone());
    let (mut pending, mut refed) = (0, 0);
    for (id, m) in s.imms.iter().enumerate() {
        let lib_pending = lp.immediate_is_pending(m.h);
        if nobody.contains(&id) {
            // Its run is unseen: only its flags are checked.
            if lib_pending {
                pending += 1;
                refed += usize::from(m.refed);
                assert_eq!(lp.immediate_has_ref(m.h), m.refed, "has_ref of {id}");
            } else {
                assert!(!lp.immediate_has_ref(m.h));
            }
            continue;
        }
        assert_eq!(lib_pending, m.fate == Fate::Pending, "pending of {id}");
        assert_eq!(runs[id], u32::from(m.fate == Fate::Ran), "runs of {id}");
        let want_drops = u32::from(m.probe && m.fate != Fate::Pending);
        assert_eq!(drops[id], want_drops, "drops of {id} ({:?})", m.fate);
        assert_eq!(
            lp.immediate_has_ref(m.h),
            m.fate == Fate::Pending && m.refed,
            "has_ref of {id}"
        );
        if m.fate == Fate::Pending {
            pending += 1;
            refed += usize::from(m.refed);
        }
    }
    match extra {
        None => {
            assert_eq!(lp.stats().immediates, pending, "pending count");
            assert_eq!(lp.is_alive(), refed > 0, "liveness");
        }
        Some(extra) => {
            let n = lp.stats().immediates;
            assert!(
                pending <= n && n <= pending + extra as usize,
                "pending count"
            );
            assert!(refed == 0 || lp.is_alive(), "liveness");
            assert_eq!(lp.is_alive(), refed > 0 || n > pending, "liveness");
        }
    }
}

fn script(seed: u64, handler: bool, steps: usize) {
    DROPS.with(|d| d.borrow_mut().clear());
    RUNS.with(|r| r.borrow_mut().clear());
    NOBODY.with(|n| n.borrow_mut().clear());
    let sh: Sh = Rc::new(RefCell::new(Shared {
        rng: seed,
        imms: Vec::new(),
        bombs_pending: 0,
        sets_left: 400,
    }));
    PLAIN_SH.with(|p| *p.borrow_mut() = Some(sh.clone()));
    let mut lp = EventLoop::with_virtual_clock();
    let failures = Rc::new(Cell::new(0_u32));
    if handler {
        let f = failures.clone();
        lp.set_uncaught_handler(move |_, _| f.set(f.get() + 1));
    }
    for _ in 0..steps {
        match r(&sh, 8) {
            0 => {
                let r = lp.run();
                dbg(format_args!(
                    "run() -> {r:?} count {}",
                    lp.stats().immediates
                ));
            }
            1 => {
                let r = lp.run_nowait();
                dbg(format_args!(
                    "run_nowait() -> {r:?} count {}",
                    lp.stats().immediates
                ));
            }
            _ => action(&mut lp, &sh, 0, false),
        }
        check(&lp, &sh, handler.then(|| failures.get()));
    }
    // The loop goes, with whatever is pending: each capture dropped once.
    let bomb_pending = sh.borrow().bombs_pending > 0;
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(lp)));
    assert_eq!(r.is_err(), bomb_pending, "a bomb pending panics the drop");
    PLAIN_SH.with(|p| *p.borrow_mut() = None);
    let drops = DROPS.with(|d| d.borrow().clone());
    for (id, m) in sh.borrow().imms.iter().enumerate() {
        assert_eq!(
            drops[id],
            u32::from(m.probe),
            "drops of {id} after the loop"
        );
    }
    assert_eq!(
        Rc::strong_count(&sh),
        1,
        "every capture of the shared state dropped"
    );
}

#[test]
fn immediates_drop_each_capture_once_with_flags_kept() {
    // Quiet the expected panics' messages.
    let n = std::env::var("IMM16_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300_u64);
    let prev = std::panic::take_hook();
    if std::env::var("IMM16_DEBUG").is_err() {
        std::panic::set_hook(Box::new(|_| {}));
    }
    let from = std::env::var("IMM16_FROM")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0_u64);
    for seed in from..n {
        let steps = 40 + (seed as usize % 4) * 40;
        let r = std::panic::catch_unwind(|| script(seed, seed % 3 != 0, steps));
        if let Err(e) = r {
            std::panic::set_hook(prev);
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
            eprintln!("seed {seed}: {msg:?}");
            std::panic::resume_unwind(e);
        }
    }
    std::panic::set_hook(prev);
}

/// A ring grown past `SHRINK_ABOVE` (4096) and released after it emptied
/// is replaced by a new one; captures of immediates pending then, or set
/// after, are dropped once; refs stay balanced across the replacement.
#[test]
fn a_released_ring_keeps_refs_and_captures() {
    let token = Rc::new(());
    let mut lp = EventLoop::with_virtual_clock();
    for _ in 0..5000 {
        let t = token.clone();
        lp.set_immediate(move |_: &mut EventLoop| drop(t));
    }
    lp.run().unwrap();
    assert_eq!(Rc::strong_count(&token), 1);
    // Empty now; iterate idle so the ring is released.
    lp.run_nowait().unwrap();
    lp.run_nowait().unwrap();
    let t = token.clone();
    let a = lp.set_immediate(move |_: &mut EventLoop| drop(t));
    let t = token.clone();
    let b = lp.set_immediate(move |_: &mut EventLoop| drop(t));
    lp.unref_immediate(a).unwrap();
    assert!(lp.is_alive());
    lp.unref_immediate(b).unwrap();
    assert!(!lp.is_alive());
    lp.ref_immediate(a).unwrap();
    lp.clear_immediate(a).unwrap();
    assert!(!lp.is_alive());
    assert_eq!(Rc::strong_count(&token), 2);
    drop(lp);
    assert_eq!(Rc::strong_count(&token), 1);
}

/// An unhandled error stops the batch; the rest stays pending with its
/// flags, runs when `run` resumes, or is dropped with the loop.
#[test]
fn an_unhandled_error_keeps_the_rest_of_the_batch() {
    let token = Rc::new(());
    for resume in [false, true] {
        let mut lp = EventLoop::with_virtual_clock();
        let t = token.clone();
        lp.set_immediate(move |_: &mut EventLoop| -> Result<(), &str> {
            drop(t);
            Err("stop")
        });
        let mut rest = Vec::new();
        for k in 0..4 {
            let t = token.clone();
            let h = lp.set_immediate(move |_: &mut EventLoop| drop(t));
            if k % 2 == 0 {
                lp.unref_immediate(h).unwrap();
            }
            rest.push(h);
        }
        assert!(lp.run().is_err());
        assert_eq!(Rc::strong_count(&token), 5);
        for (k, &h) in rest.iter().enumerate() {
            assert!(lp.immediate_is_pending(h));
            assert_eq!(lp.immediate_has_ref(h), k % 2 == 1);
        }
        lp.clear_immediate(rest[1]).unwrap();
        assert_eq!(Rc::strong_count(&token), 4);
        if resume {
            lp.run().unwrap();
            assert_eq!(Rc::strong_count(&token), 1);
            assert!(!lp.is_alive());
        }
        drop(lp);
        assert_eq!(Rc::strong_count(&token), 1);
    }
}
