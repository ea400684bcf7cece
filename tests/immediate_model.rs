//! Immediates against a model of Node's own two linked lists
//! (`immediateQueue`, `outstandingQueue`, `processImmediate`), over
//! random scripts (R9.4–R9.7, R7.3).
//!
//! Each script sets immediates (half of them plain, capturing nothing,
//! half capturing an `Rc`), clears random ones and recent ones, queues
//! next ticks that do the same, asks `immediate_is_pending` and
//! `immediate_has_ref` of every handle ever made, and (in some
//! configurations) has immediates fail with no handler, `run` then being
//! called again. The library's log of what ran, what each clear answered
//! and what was pending must equal the model's. Written by a helper
//! reviewing round 16's ring of immediates; it catches each of three
//! mutations of that code tried by hand (the fast clear's batch check,
//! `tidy`'s batch bound, an off-by-one in `compact`).
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use timerloop::{EventLoop, Immediate, TimerError};

struct Shared {
    rng: u64,
    log: Vec<String>,
    sets: usize,
    ticks: usize,
    max_sets: usize,
    lib_handles: Vec<Immediate>,
    fails: bool,
}

impl Shared {
    fn r(&mut self, n: u64) -> u64 {
        self.rng = self
            .rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.rng >> 33) % n
    }
}

type Sh = Rc<RefCell<Shared>>;
thread_local! { static SH: RefCell<Option<Sh>> = const { RefCell::new(None) }; }

trait Api {
    fn set(&mut self, sh: &Sh);
    fn clear(&mut self, j: usize) -> bool;
    fn tick(&mut self, sh: &Sh);
    fn pending(&self, j: usize) -> bool;
}

fn actions(api: &mut dyn Api, sh: &Sh, depth: u32) {
    let k = sh.borrow_mut().r(5);
    for _ in 0..k {
        let a = sh.borrow_mut().r(10);
        match a {
            0..=3 => {
                if sh.borrow().sets < sh.borrow().max_sets {
                    api.set(sh);
                }
            }
            4..=6 => {
                let n = sh.borrow().sets;
                if n > 0 {
                    // Bias to the newest ones.
                    let j = if sh.borrow_mut().r(2) == 0 {
                        n - 1 - (sh.borrow_mut().r(3) as usize).min(n - 1)
                    } else {
                        sh.borrow_mut().r(n as u64) as usize
                    };
                    let ok = api.clear(j);
                    sh.borrow_mut().log.push(format!("C{j}:{ok}"));
                }
            }
            7..=8 => {
                if depth < 3 && sh.borrow().ticks < 400 {
                    api.tick(sh);
                }
            }
            _ => {
                let n = sh.borrow().sets;
                let s: String = (0..n)
                    .map(|j| if api.pending(j) { '1' } else { '0' })
                    .collect();
                sh.borrow_mut().log.push(format!("P{s}"));
            }
        }
    }
}

// ---- the library ----
/// The library behind the script's operations (the handles live in
/// `Shared`).
struct Lib<'a>(&'a mut EventLoop, Sh);
impl Api for Lib<'_> {
    fn set(&mut self, sh: &Sh) {
        let id = sh.borrow().sets;
        sh.borrow_mut().sets += 1;
        fn body(lp: &mut EventLoop, id: usize) -> Result<(), &'static str> {
            let s = SH.with(|x| x.borrow().clone().unwrap());
            s.borrow_mut().log.push(format!("I{id}"));
            let s2 = s.clone();
            actions(&mut Lib(lp, s2), &s, 0);
            if s.borrow().fails && s.borrow_mut().r(8) == 0 {
                Err("boom")
            } else {
                Ok(())
            }
        }
        let plain = sh.borrow_mut().r(2) == 0;
        let h = if plain {
            self.0.set_immediate(move |lp: &mut EventLoop| body(lp, id))
        } else {
            let big = Rc::new(());
            self.0.set_immediate(move |lp: &mut EventLoop| {
                let _b = &big;
                body(lp, id)
            })
        };
        sh.borrow_mut().lib_handles.push(h);
    }
    fn clear(&mut self, j: usize) -> bool {
        let h = self.1.borrow().lib_handles[j];
        match self.0.clear_immediate(h) {
            Ok(()) => true,
            Err(TimerError::Stale) => false,
            Err(e) => panic!("{e:?}"),
        }
    }
    fn tick(&mut self, sh: &Sh) {
        let id = sh.borrow().ticks;
        sh.borrow_mut().ticks += 1;
        let s = sh.clone();
        self.0.next_tick(move |lp: &mut EventLoop| {
            s.borrow_mut().log.push(format!("T{id}"));
            let s2 = s.clone();
            actions(&mut Lib(lp, s2), &s, 1);
        });
    }
    fn pending(&self, j: usize) -> bool {
        let h = self.1.borrow().lib_handles[j];
        let p = self.0.immediate_is_pending(h);
        assert_eq!(p, self.0.immediate_has_ref(h));
        p
    }
}

/// A script's shared state, drawn from `seed`.
fn shared(seed: u64, max_sets: usize, fails: bool) -> Sh {
    Rc::new(RefCell::new(Shared {
        rng: seed,
        log: vec![],
        sets: 0,
        ticks: 0,
        max_sets,
        lib_handles: vec![],
        fails,
    }))
}

/// The script's main body, on either side: some sets and clears, no
/// ticks.
fn main_body(api: &mut dyn Api, sh: &Sh) {
    let n = 1 + sh.borrow_mut().r(6);
    for _ in 0..n {
        api.set(sh);
        if sh.borrow_mut().r(3) == 0 {
            let n = sh.borrow().sets as u64;
            let j = sh.borrow_mut().r(n) as usize;
            let ok = api.clear(j);
            sh.borrow_mut().log.push(format!("C{j}:{ok}"));
        }
    }
}

fn lib_run(seed: u64, max_sets: usize, fails: bool) -> Vec<String> {
    let sh = shared(seed, max_sets, fails);
    SH.with(|x| *x.borrow_mut() = Some(sh.clone()));
    let mut lp = EventLoop::with_virtual_clock();
    main_body(&mut Lib(&mut lp, sh.clone()), &sh);
    while lp.run().is_err() {
        sh.borrow_mut().log.push("E".into());
    }
    assert_eq!(lp.stats().immediates, 0);
    std::mem::take(&mut sh.borrow_mut().log)
}

// ---- the model (Node's lists) ----
enum Cb {
    Imm(usize),
    Tick(usize),
}

struct Model {
    pending: Vec<bool>,
    queue: Vec<usize>,
    outstanding: Vec<usize>,
    ticks: VecDeque<usize>,
}

struct ModelApi<'a>(&'a mut Model);
impl Api for ModelApi<'_> {
    fn set(&mut self, sh: &Sh) {
        let id = sh.borrow().sets;
        sh.borrow_mut().sets += 1;
        let _plain = sh.borrow_mut().r(2) == 0;
        self.0.pending.push(true);
        self.0.queue.push(id);
    }
    fn clear(&mut self, j: usize) -> bool {
        if !self.0.pending[j] {
            return false;
        }
        self.0.pending[j] = false;
        self.0.queue.retain(|&x| x != j);
        self.0.outstanding.retain(|&x| x != j);
        true
    }
    fn tick(&mut self, sh: &Sh) {
        let id = sh.borrow().ticks;
        sh.borrow_mut().ticks += 1;
        self.0.ticks.push_back(id);
    }
    fn pending(&self, j: usize) -> bool {
        self.0.pending[j]
    }
}

fn model_call(m: &mut Model, sh: &Sh, cb: Cb) -> bool {
    match cb {
        Cb::Imm(id) => {
            sh.borrow_mut().log.push(format!("I{id}"));
            actions(&mut ModelApi(m), sh, 0);
            if sh.borrow().fails && sh.borrow_mut().r(8) == 0 {
                return true;
            }
        }
        Cb::Tick(id) => {
            sh.borrow_mut().log.push(format!("T{id}"));
            actions(&mut ModelApi(m), sh, 1);
        }
    }
    false
}

fn model_ticks(m: &mut Model, sh: &Sh) {
    while let Some(t) = m.ticks.pop_front() {
        model_call(m, sh, Cb::Tick(t));
    }
}

fn model_run(seed: u64, max_sets: usize, fails: bool) -> Vec<String> {
    let sh = shared(seed, max_sets, fails);
    let mut m = Model {
        pending: vec![],
        queue: vec![],
        outstanding: vec![],
        ticks: VecDeque::new(),
    };
    main_body(&mut ModelApi(&mut m), &sh);
    'outer: loop {
        model_ticks(&mut m, &sh);
        if m.queue.is_empty() && m.outstanding.is_empty() {
            break;
        }
        if m.outstanding.is_empty() {
            m.outstanding = std::mem::take(&mut m.queue);
        }
        let mut ran = false;
        while let Some(&h) = m.outstanding.first() {
            if ran {
                model_ticks(&mut m, &sh);
                if m.outstanding.first() != Some(&h) {
                    continue;
                }
            } else {
                ran = true;
            }
            m.outstanding.remove(0);
            m.pending[h] = false;
            if model_call(&mut m, &sh, Cb::Imm(h)) {
                sh.borrow_mut().log.push("E".into());
                continue 'outer;
            }
        }
        model_ticks(&mut m, &sh);
    }
    std::mem::take(&mut sh.borrow_mut().log)
}

/// 3,000 seeds in five configurations (few, some and many immediates;
/// with and without failures).
#[test]
fn immediates_match_a_model_of_nodes_lists() {
    for seed in 0..3000u64 {
        for (max, fails) in [
            (8, false),
            (40, false),
            (300, false),
            (40, true),
            (300, true),
        ] {
            let a = lib_run(seed, max, fails);
            let b = model_run(seed, max, fails);
            if a != b {
                let i = a
                    .iter()
                    .zip(&b)
                    .position(|(x, y)| x != y)
                    .unwrap_or(a.len().min(b.len()));
                panic!(
                    "seed {seed} max {max}: diverge at {i}\nlib  {:?}\nmodel {:?}",
                    &a[i.saturating_sub(8)..(i + 8).min(a.len())],
                    &b[i.saturating_sub(8)..(i + 8).min(b.len())]
                );
            }
        }
    }
}

fn seq(h: Immediate) -> u64 {
    let d = format!("{h:?}");
    let s = d.find("seq: ").unwrap() + 5;
    d[s..].split(',').next().unwrap().trim().parse().unwrap()
}

/// A large batch that ran, its storage given back by an idle loop:
/// positions go on from where they were, and the old handles stay stale.
#[test]
fn release_keeps_positions_and_stale_handles() {
    let mut lp = EventLoop::with_virtual_clock();
    let old: Vec<Immediate> = (0..10_000).map(|_| lp.set_immediate(|_| {})).collect();
    lp.run().unwrap();
    // Idle: released.
    let new: Vec<Immediate> = (0..10).map(|_| lp.set_immediate(|_| {})).collect();
    assert!(seq(new[0]) >= 10_000, "{:?}", new[0]);
    assert!(old.iter().all(|&h| !lp.immediate_is_pending(h)));
    for &h in &old {
        assert_eq!(lp.clear_immediate(h), Err(TimerError::Stale));
    }
    for &h in &new {
        lp.clear_immediate(h).unwrap();
    }
    // Cleared all: ring empty, positions from where they were.
    let again = lp.set_immediate(|_| {});
    assert!(new.iter().all(|&h| !lp.immediate_is_pending(h)));
    assert!(lp.immediate_is_pending(again));
    lp.run().unwrap();
}
