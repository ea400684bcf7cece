//! Data-structure baselines: the same four operations on COUNT timers, for
//! several implementations.
//!
//! ```text
//! baseline IMPL OP DIST COUNT [--reps R]
//!   IMPL  floor | heap | delayqueue | timerloop | timerloop-real | all
//!   OP    insert | cancel | refresh | expire | all
//!   DIST  same (every timer 10,000 ms) | random (1..=10,000 ms, fixed seed) | all
//!   COUNT number of timers, e.g. 1e5 or 1e6
//! ```
//!
//! Prints `baseline IMPL OP DIST COUNT ops/s=RATE` per combination, where
//! RATE is the median over R repetitions (default 5, or 3 for COUNT > 2e5),
//! each on a fresh structure, of COUNT / (seconds in the timed region).
//! `bench/compare` runs this mode with glibc's malloc keeping the memory it
//! gets (`GLIBC_TUNABLES`, see there), so that every repetition after the
//! first reuses pages the previous one faulted in, for every implementation.
//!
//! Timed regions (set-up and teardown are never timed):
//! * `insert`: COUNT inserts into an empty structure; handles go into a
//!   pre-allocated `Vec`.
//! * `cancel`: COUNT timers inserted; then cancel each, in creation order.
//! * `refresh`: COUNT timers inserted; time moves 1 ms; then restart each
//!   one's countdown with its own duration, in creation order.
//! * `expire`: COUNT timers inserted; time moves past the latest deadline
//!   (10,001 ms); then fire every timer (each runs a zero-sized callback
//!   that bumps a counter) until the structure is empty.
//!
//! Implementations (every timer holds a `Box<dyn FnMut>` of a zero-sized
//! closure, which allocates nothing; `floor` and `heap` keep their timers
//! in [`Slots`], a slab that builds each entry in its slot, as timerloop's
//! arena does since issue 12's round 13: through the `slab` crate's
//! out-of-line insert, which copies the entry with loads the CPU cannot
//! forward from the stores that built it, each insert stalled, and the
//! floor was no floor):
//! * `floor`: a slab insert plus an intrusive FIFO list link (the
//!   crate's own list, `src/collections/list.rs`, compiled into this bench
//!   as the `list` module, so that it need not be public API): no timer
//!   logic at all, no ordering by deadline. Cancel = unlink + slab remove;
//!   refresh = unlink + relink at the tail; expire = pop the head + slab
//!   remove + call.
//! * `heap`: `std::collections::BinaryHeap` of `(deadline, seq)` (plus the
//!   slab key), as libuv and Go order their timers. Cancel uses **lazy
//!   deletion**: the slab entry is removed in O(1) and its heap entry stays
//!   until popped, when a sequence-number mismatch (or a vacant slot)
//!   marks it dead. Refresh gives the timer a new sequence number and
//!   pushes a new heap entry; the old one dies the same way. So `cancel`
//!   and `refresh` defer part of their cost to `expire` (which is measured
//!   without dead entries) and the heap holds dead entries meanwhile.
//! * `delayqueue`: `tokio_util::time::DelayQueue` on a current-thread tokio
//!   runtime with a paused clock (`start_paused`); time moves with
//!   `tokio::time::advance`, and expire drains `poll_expired`.
//! * `timerloop`: this crate, on a virtual clock (so expire measures the
//!   data structure and the loop, not sleeping): `set_timeout`,
//!   `clear_timeout`, `refresh`, and `run()` after advancing the clock.
//! * `timerloop-real`: the same on the real clock (`EventLoop::new()`), which
//!   reads the system clock on every insert and refresh as Node does; no
//!   `expire` (it would sleep up to 10 s).

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::poll_fn;
use std::hint::black_box;
use std::time::{Duration, Instant};

use list::{Linked, Links, List, ListStore};
use timerloop::EventLoop;
use tokio_util::time::DelayQueue;

use crate::{SplitMix64, die, flag_value, median, parse_count};

/// The intrusive list timerloop's duration lists are made of: the same
/// source file, so that `floor` measures exactly that list. Not all of it
/// is used here.
#[allow(dead_code)]
#[path = "../../src/collections/list.rs"]
mod list;

const IMPLS: &[&str] = &["floor", "heap", "delayqueue", "timerloop", "timerloop-real"];
const OPS: &[&str] = &["insert", "cancel", "refresh", "expire"];
const DISTS: &[&str] = &["same", "random"];

/// The one duration of the `same` distribution, and the random maximum.
const SAME_MS: u64 = 10_000;
const MAX_MS: u64 = 10_000;
/// How far time moves before `expire`.
const PAST_ALL_MS: u64 = MAX_MS + 1;
const SEED: u64 = 0x7469_6d65_726c_6f6f; // "timerloo"

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Insert,
    Cancel,
    Refresh,
    Expire,
}

thread_local! {
    static FIRED: Cell<u64> = const { Cell::new(0) };
}

fn fire() {
    FIRED.set(FIRED.get() + 1);
}

type Cb = Box<dyn FnMut()>;

fn cb() -> Cb {
    Box::new(fire)
}

fn choose<'a>(arg: &'a str, all: &'a [&'a str], what: &str) -> Vec<&'a str> {
    if arg == "all" {
        all.to_vec()
    } else if all.contains(&arg) {
        vec![arg]
    } else {
        die(&format!("unknown {what}: {arg} (one of {all:?} or all)"))
    }
}

pub(crate) fn main(args: &[String]) {
    if args.len() < 4 {
        die("usage: baseline IMPL OP DIST COUNT [--reps R]");
    }
    let impls = choose(&args[0], IMPLS, "implementation");
    let ops = choose(&args[1], OPS, "operation");
    let dists = choose(&args[2], DISTS, "distribution");
    let count = parse_count(&args[3]).unwrap_or_else(|| die("bad COUNT"));
    let reps = match flag_value(args, "--reps") {
        Some(r) => parse_count(r).unwrap_or_else(|| die("bad --reps")) as usize,
        None if count > 200_000 => 3,
        None => 5,
    };
    for &dist in &dists {
        let delays = draw(dist, count as usize);
        for &op_name in &ops {
            let op = match op_name {
                "insert" => Op::Insert,
                "cancel" => Op::Cancel,
                "refresh" => Op::Refresh,
                _ => Op::Expire,
            };
            for &imp in &impls {
                if imp == "timerloop-real" && op == Op::Expire {
                    continue;
                }
                let rates: Vec<f64> = (0..reps)
                    .map(|_| {
                        let secs = measure(imp, op, &delays).as_secs_f64();
                        count as f64 / secs
                    })
                    .collect();
                let rate = median(rates);
                println!("baseline {imp} {op_name} {dist} {count} ops/s={rate:.1}");
            }
        }
    }
}

fn draw(dist: &str, n: usize) -> Vec<u64> {
    let mut rng = SplitMix64::new(SEED);
    (0..n)
        .map(|_| {
            if dist == "same" {
                SAME_MS
            } else {
                rng.delay(MAX_MS)
            }
        })
        .collect()
}

/// Runs one repetition and returns the time spent in the timed region.
fn measure(imp: &str, op: Op, delays: &[u64]) -> Duration {
    FIRED.set(0);
    let d = match imp {
        "floor" => floor(op, delays),
        "heap" => heap(op, delays),
        "delayqueue" => delayqueue(op, delays),
        "timerloop" => timerloop(op, delays, true),
        _ => timerloop(op, delays, false),
    };
    if op == Op::Expire {
        assert_eq!(FIRED.get(), delays.len() as u64, "{imp}: not all fired");
    } else {
        assert_eq!(FIRED.get(), 0, "{imp}: a timer fired");
    }
    d
}

// ---------------------------------------------------------------------------
// The floor's and the heap's storage.

/// A slab (a `Vec`, a free list threaded through the vacant slots) whose
/// insert builds the entry in its slot: `make` runs once the slot is
/// known and has room, so the entry's fields are stored straight into it.
///
/// Where it grows it still moves `make` into the closure `extend` calls,
/// the form timerloop's arena had in 4a815b8; the arena has since pushed
/// a vacant slot and filled it in place instead (3fb19a7), because a
/// closure moved that way is copied through memory, which stalled its
/// larger closures. The baselines' closures hold a few words and perf
/// shows no stall on them, and every floor and heap figure of issue 12's
/// round 13 (runs Z2–Z4) was taken with this form, so it is kept.
struct Slots<T> {
    slots: Vec<Slot<T>>,
    /// The first vacant slot, or `slots.len()`.
    next: usize,
}

enum Slot<T> {
    Vacant(usize),
    Occupied(T),
}

impl<T> Slots<T> {
    fn new() -> Self {
        Slots {
            slots: Vec::new(),
            next: 0,
        }
    }

    #[inline(always)]
    fn insert_with(&mut self, make: impl FnOnce() -> T) -> usize {
        let key = self.next;
        if key == self.slots.len() {
            self.slots
                .extend(std::iter::once_with(|| Slot::Occupied(make())));
            self.next = key + 1;
        } else {
            let slot = &mut self.slots[key];
            let Slot::Vacant(next) = *slot else {
                unreachable!("the first vacant slot")
            };
            *slot = Slot::Occupied(make());
            self.next = next;
        }
        key
    }

    fn get(&self, key: usize) -> Option<&T> {
        match self.slots.get(key) {
            Some(Slot::Occupied(t)) => Some(t),
            _ => None,
        }
    }

    fn remove(&mut self, key: usize) -> T {
        let next = self.next;
        let slot = match self.slots.get_mut(key) {
            Some(slot @ Slot::Occupied(_)) => slot,
            _ => panic!("no entry at {key}"),
        };
        let Slot::Occupied(t) = std::mem::replace(slot, Slot::Vacant(next)) else {
            unreachable!("occupied")
        };
        self.next = key;
        t
    }
}

impl<T> std::ops::Index<usize> for Slots<T> {
    type Output = T;
    fn index(&self, key: usize) -> &T {
        self.get(key).expect("a live key")
    }
}

impl<T> std::ops::IndexMut<usize> for Slots<T> {
    fn index_mut(&mut self, key: usize) -> &mut T {
        match self.slots.get_mut(key) {
            Some(Slot::Occupied(t)) => t,
            _ => panic!("no entry at {key}"),
        }
    }
}

impl<T: Linked> ListStore for Slots<T> {
    fn links_mut(&mut self, key: usize) -> &mut Links {
        self[key].links_mut()
    }
}

// ---------------------------------------------------------------------------
// (a) floor: slab + intrusive list, no timer logic.

struct FloorNode {
    links: Links,
    deadline: u64,
    cb: Cb,
}

impl Linked for FloorNode {
    fn links_mut(&mut self) -> &mut Links {
        &mut self.links
    }
}

struct Floor {
    slab: Slots<FloorNode>,
    list: List,
    now: u64,
}

impl Floor {
    fn insert(&mut self, d: u64) -> usize {
        let deadline = self.now + d;
        let key = self.slab.insert_with(move || FloorNode {
            links: Links::default(),
            deadline,
            cb: cb(),
        });
        self.list.append(&mut self.slab, key);
        key
    }

    fn cancel(&mut self, key: usize) {
        self.list.remove(&mut self.slab, key);
        drop(self.slab.remove(key));
    }

    fn refresh(&mut self, key: usize, d: u64) {
        self.list.remove(&mut self.slab, key);
        self.slab[key].deadline = self.now + d;
        self.list.append(&mut self.slab, key);
    }

    fn expire(&mut self) {
        while let Some(key) = self.list.pop_front(&mut self.slab) {
            let mut node = self.slab.remove(key);
            black_box(node.deadline);
            (node.cb)();
        }
    }
}

fn floor(op: Op, delays: &[u64]) -> Duration {
    let mut f = Floor {
        slab: Slots::new(),
        list: List::new(),
        now: 0,
    };
    let mut keys = Vec::with_capacity(delays.len());
    let t0 = Instant::now();
    for &d in delays {
        keys.push(f.insert(d));
    }
    let inserted = t0.elapsed();
    match op {
        Op::Insert => inserted,
        Op::Cancel => {
            let t0 = Instant::now();
            for &k in &keys {
                f.cancel(k);
            }
            t0.elapsed()
        }
        Op::Refresh => {
            f.now += 1;
            let t0 = Instant::now();
            for (&k, &d) in keys.iter().zip(delays) {
                f.refresh(k, d);
            }
            t0.elapsed()
        }
        Op::Expire => {
            f.now += PAST_ALL_MS;
            let t0 = Instant::now();
            f.expire();
            t0.elapsed()
        }
    }
}

// ---------------------------------------------------------------------------
// (b) BinaryHeap of (deadline, seq) with lazy deletion.

struct HeapTimer {
    seq: u64,
    deadline: u64,
    cb: Cb,
}

struct HeapTimers {
    heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
    slab: Slots<HeapTimer>,
    seq: u64,
    now: u64,
}

impl HeapTimers {
    fn insert(&mut self, d: u64) -> usize {
        self.seq += 1;
        let deadline = self.now + d;
        let seq = self.seq;
        let key = self.slab.insert_with(move || HeapTimer {
            seq,
            deadline,
            cb: cb(),
        });
        self.heap.push(Reverse((deadline, self.seq, key as u32)));
        key
    }

    fn cancel(&mut self, key: usize) {
        drop(self.slab.remove(key));
    }

    fn refresh(&mut self, key: usize, d: u64) {
        self.seq += 1;
        let deadline = self.now + d;
        let t = &mut self.slab[key];
        t.seq = self.seq;
        t.deadline = deadline;
        self.heap.push(Reverse((deadline, self.seq, key as u32)));
    }

    fn expire(&mut self) {
        while let Some(&Reverse((deadline, seq, key))) = self.heap.peek() {
            if deadline > self.now {
                break;
            }
            self.heap.pop();
            let key = key as usize;
            if self.slab.get(key).is_some_and(|t| t.seq == seq) {
                let mut t = self.slab.remove(key);
                black_box(t.deadline);
                (t.cb)();
            }
        }
    }
}

fn heap(op: Op, delays: &[u64]) -> Duration {
    let mut h = HeapTimers {
        heap: BinaryHeap::new(),
        slab: Slots::new(),
        seq: 0,
        now: 0,
    };
    let mut keys = Vec::with_capacity(delays.len());
    let t0 = Instant::now();
    for &d in delays {
        keys.push(h.insert(d));
    }
    let inserted = t0.elapsed();
    match op {
        Op::Insert => inserted,
        Op::Cancel => {
            let t0 = Instant::now();
            for &k in &keys {
                h.cancel(k);
            }
            t0.elapsed()
        }
        Op::Refresh => {
            h.now += 1;
            let t0 = Instant::now();
            for (&k, &d) in keys.iter().zip(delays) {
                h.refresh(k, d);
            }
            t0.elapsed()
        }
        Op::Expire => {
            h.now += PAST_ALL_MS;
            let t0 = Instant::now();
            h.expire();
            t0.elapsed()
        }
    }
}

// ---------------------------------------------------------------------------
// (c) tokio-util DelayQueue on a paused clock.

fn delayqueue(op: Op, delays: &[u64]) -> Duration {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a tokio runtime");
    rt.block_on(async move {
        let mut dq: DelayQueue<Cb> = DelayQueue::new();
        let mut keys = Vec::with_capacity(delays.len());
        let t0 = Instant::now();
        for &d in delays {
            keys.push(dq.insert(cb(), Duration::from_millis(d)));
        }
        let inserted = t0.elapsed();
        match op {
            Op::Insert => inserted,
            Op::Cancel => {
                let t0 = Instant::now();
                for k in &keys {
                    drop(dq.remove(k));
                }
                t0.elapsed()
            }
            Op::Refresh => {
                tokio::time::advance(Duration::from_millis(1)).await;
                let t0 = Instant::now();
                for (k, &d) in keys.iter().zip(delays) {
                    dq.reset(k, Duration::from_millis(d));
                }
                t0.elapsed()
            }
            Op::Expire => {
                tokio::time::advance(Duration::from_millis(PAST_ALL_MS)).await;
                let t0 = Instant::now();
                while let Some(expired) = poll_fn(|cx| dq.poll_expired(cx)).await {
                    (expired.into_inner())();
                }
                t0.elapsed()
            }
        }
    })
}

// ---------------------------------------------------------------------------
// (d) timerloop.

fn fire_tl(_: &mut EventLoop) {
    fire();
}

fn timerloop(op: Op, delays: &[u64], virtual_clock: bool) -> Duration {
    let mut lp = if virtual_clock {
        EventLoop::with_virtual_clock()
    } else {
        EventLoop::new()
    };
    let mut handles = Vec::with_capacity(delays.len());
    let t0 = Instant::now();
    for &d in delays {
        handles.push(lp.set_timeout(d, fire_tl));
    }
    let inserted = t0.elapsed();
    let advance = |lp: &EventLoop, ms: u64| {
        if let Some(c) = lp.virtual_clock() {
            c.advance(Duration::from_millis(ms));
        }
    };
    match op {
        Op::Insert => inserted,
        Op::Cancel => {
            let t0 = Instant::now();
            for &t in &handles {
                let _ = lp.clear_timeout(t);
            }
            t0.elapsed()
        }
        Op::Refresh => {
            advance(&lp, 1);
            let t0 = Instant::now();
            for &t in &handles {
                lp.refresh(t).expect("a pending timer");
            }
            t0.elapsed()
        }
        Op::Expire => {
            advance(&lp, PAST_ALL_MS);
            let t0 = Instant::now();
            lp.run().expect("callbacks do not fail");
            t0.elapsed()
        }
    }
}
