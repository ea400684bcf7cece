//! The twins of `bench/node/memory.js` and `bench/node/lateness.js`.
//!
//! ```text
//! memory [--same] [--count N] [--impl timerloop|delayqueue]
//!     -> IMPL bytes/timer rss=X heap=Y
//! lateness [--samples K]
//!     -> timerloop lateness delay=D p50=X p99=Y min=Z
//! clock [--reads N]
//!     -> timerloop clock read ns=X
//! sweep [--count N]
//!     -> timerloop cancel sweep ns=X
//! ```
//!
//! `clock` has no Node twin: it measures what every `set_timeout` and
//! `refresh` pays before any timer work, one read of the system clock
//! (`update_time`, which Node's `getLibuvNow` also makes, R1.3), as the
//! median over five timed runs of N reads. Nor has `sweep`: the memory
//! traffic alone of cancelling N pooled timers with timerloop's layout
//! (see [`sweep`]).
//!
//! `memory` without `--impl` runs each implementation in a child process of
//! its own (so one's freed pages cannot hide the other's growth) and
//! prints both lines. "heap" is the live bytes counted by the bench's
//! global allocator; "rss" comes from `/proc/self/statm`.

use std::cell::RefCell;
use std::hint::black_box;
use std::process::{Command, exit};
use std::rc::Rc;
use std::time::{Duration, Instant};

use timerloop::EventLoop;
use tokio_util::time::DelayQueue;

use crate::{SplitMix64, die, flag_value, live_bytes, median, parse_count, start_counting};

const SAME_DELAY: u64 = 10_000;
const MAX_DELAY: u64 = 10_000;
const PAGE: u64 = 4096;

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let resident: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("statm's second field");
    resident * PAGE
}

struct Reading {
    rss: u64,
    heap: isize,
}

fn read() -> Reading {
    Reading {
        rss: rss_bytes(),
        heap: live_bytes(),
    }
}

fn report(imp: &str, before: &Reading, after: &Reading, n: usize) {
    let rss = (after.rss as f64 - before.rss as f64) / n as f64;
    let heap = (after.heap - before.heap) as f64 / n as f64;
    println!("{imp} bytes/timer rss={rss:.1} heap={heap:.1}");
}

fn never_called(_: &mut EventLoop) {
    panic!("timer fired during the measurement");
}

pub(crate) fn memory(args: &[String]) {
    let same = args.iter().any(|a| a == "--same");
    let count = match flag_value(args, "--count") {
        Some(c) => parse_count(c).unwrap_or_else(|| die("bad --count")) as usize,
        None => 1_000_000,
    };
    let Some(imp) = flag_value(args, "--impl") else {
        for imp in ["timerloop", "delayqueue"] {
            let exe = std::env::current_exe().expect("the bench's own path");
            let mut cmd = Command::new(exe);
            cmd.args(["memory", "--count", &count.to_string(), "--impl", imp]);
            if same {
                cmd.arg("--same");
            }
            let out = cmd.output().expect("run the memory probe");
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
            print!("{}", String::from_utf8_lossy(&out.stdout));
            if !out.status.success() {
                exit(1);
            }
        }
        return;
    };

    // 1. Delays drawn up front; the handle array allocated and written
    //    (so its pages are resident) before the baseline reading.
    let mut rng = SplitMix64::new(0x6d65_6d6f_7279);
    let delays: Vec<u64> = (0..count)
        .map(|_| {
            if same {
                SAME_DELAY
            } else {
                rng.delay(MAX_DELAY)
            }
        })
        .collect();
    start_counting();
    match imp {
        "timerloop" => {
            let mut lp = EventLoop::new();
            let mut handles = Vec::with_capacity(count);
            for _ in 0..count {
                handles.push(None);
            }
            black_box(&mut handles);
            let before = read();
            for (h, &d) in handles.iter_mut().zip(&delays) {
                *h = Some(lp.set_timeout(d, never_called));
            }
            let after = read();
            assert_eq!(lp.stats().timers, count);
            report(imp, &before, &after, count);
            for t in handles.into_iter().flatten() {
                let _ = lp.clear_timeout(t);
            }
        }
        "delayqueue" => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .expect("a tokio runtime");
            rt.block_on(async {
                type Cb = Box<dyn FnMut()>;
                let mut dq: DelayQueue<Cb> = DelayQueue::new();
                let mut handles = Vec::with_capacity(count);
                for _ in 0..count {
                    handles.push(None);
                }
                black_box(&mut handles);
                let before = read();
                for (h, &d) in handles.iter_mut().zip(&delays) {
                    let cb: Cb = Box::new(|| panic!("timer fired during the measurement"));
                    *h = Some(dq.insert(cb, Duration::from_millis(d)));
                }
                let after = read();
                assert_eq!(dq.len(), count);
                report(imp, &before, &after, count);
                for k in handles.into_iter().flatten() {
                    drop(dq.remove(&k));
                }
            });
        }
        other => die(&format!("unknown --impl {other} (timerloop or delayqueue)")),
    }
    // Exit without tearing down the rest, as memory.js does.
    exit(0);
}

// ---------------------------------------------------------------------------
// lateness

const DELAYS: [u64; 3] = [1, 10, 100];
const WARMUP: usize = 20;

type Done = Box<dyn FnOnce(&mut EventLoop, Vec<f64>)>;

struct Series {
    delay: u64,
    k: usize,
    out: Vec<f64>,
    t_sched: Instant,
    done: Option<Done>,
}

/// Runs `k` sequential timers of `delay` ms, then calls `done` with their
/// latenesses in ms.
fn series(lp: &mut EventLoop, delay: u64, k: usize, done: Done) {
    let st = Rc::new(RefCell::new(Series {
        delay,
        k,
        out: Vec::with_capacity(k),
        t_sched: Instant::now(),
        done: Some(done),
    }));
    schedule(lp, st);
}

fn schedule(lp: &mut EventLoop, st: Rc<RefCell<Series>>) {
    let delay = st.borrow().delay;
    let cb_state = st.clone();
    // t_sched is read immediately before set_timeout.
    st.borrow_mut().t_sched = Instant::now();
    lp.set_timeout(delay, move |lp: &mut EventLoop| fire(lp, &cb_state));
}

fn fire(lp: &mut EventLoop, st: &Rc<RefCell<Series>>) {
    let t_fire = Instant::now();
    let finished = {
        let mut s = st.borrow_mut();
        let ms = (t_fire - s.t_sched).as_secs_f64() * 1e3 - s.delay as f64;
        s.out.push(ms);
        s.out.len() == s.k
    };
    if finished {
        let (done, out) = {
            let mut s = st.borrow_mut();
            (s.done.take(), std::mem::take(&mut s.out))
        };
        if let Some(done) = done {
            done(lp, out);
        }
    } else {
        schedule(lp, st.clone());
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.max(1) - 1]
}

fn run_delay(lp: &mut EventLoop, idx: usize, samples: usize) {
    let Some(&d) = DELAYS.get(idx) else {
        return;
    };
    series(
        lp,
        d,
        samples,
        Box::new(move |lp, mut vals| {
            vals.sort_by(f64::total_cmp);
            let p50 = percentile(&vals, 50.0);
            let p99 = percentile(&vals, 99.0);
            // The earliest sample: below 0 by more than the few
            // microseconds a start's whole millisecond can take off, a
            // timer fired early.
            let min = vals[0];
            println!("timerloop lateness delay={d} p50={p50:.3} p99={p99:.3} min={min:.3}");
            run_delay(lp, idx + 1, samples);
        }),
    );
}

pub(crate) fn lateness(args: &[String]) {
    let samples = match flag_value(args, "--samples") {
        Some(s) => parse_count(s).unwrap_or_else(|| die("bad --samples")) as usize,
        None => 200,
    };
    let mut lp = EventLoop::new();
    series(
        &mut lp,
        1,
        WARMUP,
        Box::new(move |lp, _| run_delay(lp, 0, samples)),
    );
    lp.run().expect("lateness callbacks do not fail");
}

/// `clock [--reads N]`: nanoseconds per [`EventLoop::update_time`] on a
/// system-clock loop, the median of five runs of N reads (module docs).
pub(crate) fn clock(args: &[String]) {
    let n = match flag_value(args, "--reads") {
        Some(s) => parse_count(s).unwrap_or_else(|| die("bad --reads")),
        None => 10_000_000,
    }
    .max(1);
    let mut lp = EventLoop::new();
    let per_read: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                lp.update_time();
            }
            black_box(lp.now());
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    println!("timerloop clock read ns={:.2}", median(per_read));
}

// ---------------------------------------------------------------------------
// sweep: the memory a cancel must touch, without any cancel logic.

/// A slot's marker for a vacant one, in its first word (as the arena's
/// free list marks them).
const SWEEP_VACANT: u64 = 1 << 63;
/// The no-link value of an intrusive list's link.
const SWEEP_NIL: u32 = u32::MAX;

/// `sweep [--count N]`: the least a cancel of N pooled timers in creation
/// order (`timers-cancel-pooled`) could cost with timerloop's layout,
/// whatever its code: for each timer, the 16-byte handle read from a
/// `Vec`, the 32-byte slot's generation read and the slot marked vacant
/// (threaded into the free list), the 8-byte links read for the list's
/// new oldest. The same bytes as a cancel touches, in the same order
/// (removing a list's oldest leaves the next one's back link as it was),
/// with no other work; the
/// median over five runs, each on freshly built (and so already faulted
/// in) arrays, of nanoseconds per timer. N defaults to the workload's
/// 5,000,000, where every array is far larger than the caches and the
/// sweep is bound by memory traffic: 56 bytes read and 32 written back
/// per timer.
pub(crate) fn sweep(args: &[String]) {
    let n = match flag_value(args, "--count") {
        Some(s) => parse_count(s).unwrap_or_else(|| die("bad --count")),
        None => 5_000_000,
    }
    .clamp(1, u64::from(SWEEP_NIL - 1)) as usize;
    // The suite's handle is timerloop's own: 16 bytes.
    assert_eq!(std::mem::size_of::<(u64, u32)>(), 16);
    let per_timer: Vec<f64> = (0..5)
        .map(|run| {
            let generation = |i: usize| (i as u64 + run) as u32;
            let mut slots: Vec<[u64; 4]> = (0..n)
                .map(|i| [i as u64, 0, 0, u64::from(generation(i)) << 32])
                .collect();
            let links: Vec<[u32; 2]> = (0..n)
                .map(|i| {
                    let prev = if i == 0 { SWEEP_NIL } else { i as u32 - 1 };
                    let next = if i + 1 == n { SWEEP_NIL } else { i as u32 + 1 };
                    [prev, next]
                })
                .collect();
            let handles: Vec<(u64, u32)> = (0..n)
                .map(|i| (i as u64 | u64::from(generation(i)) << 32, 1))
                .collect();
            let mut free = u64::from(SWEEP_NIL);
            let mut head = 0u32;
            let mut stale = 0u64;
            let t = Instant::now();
            for &(key, _loop_id) in black_box(&handles) {
                let index = key as u32 as usize;
                let slot = &mut slots[index];
                if (slot[3] >> 32) as u32 != (key >> 32) as u32 {
                    stale += 1;
                    continue;
                }
                // The list's oldest becomes the next; the next one's back
                // link is left as it was (the list's rule for its oldest).
                // Every next is summed, so that no load of the links can
                // be dropped as a value overwritten before it is used.
                head = head.wrapping_add(links[index][1]);
                slot[0] = SWEEP_VACANT | free;
                free = index as u64;
            }
            let elapsed = t.elapsed();
            black_box((free, head, &slots));
            assert_eq!(stale, 0, "every handle is live");
            elapsed.as_nanos() as f64 / n as f64
        })
        .collect();
    println!("timerloop cancel sweep ns={:.2}", median(per_timer));
}
