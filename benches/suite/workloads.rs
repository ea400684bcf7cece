//! The twins of `bench/node/suite.js`, one function per workload, in the
//! same order and with the same names, default N, timed regions and ops.
//!
//! How JavaScript maps onto Rust here:
//!
//! * A callback that JS passes without extra arguments (`setTimeout(hit, 1)`)
//!   is a fn item or a non-capturing closure: zero-sized, so boxing it
//!   allocates nothing, as passing a shared function allocates nothing in
//!   Node. The state JS callbacks close over (`count`, `n`) lives in
//!   thread-locals, which the callbacks share as JS closures share their
//!   scope.
//! * "k args" is a closure capturing k values, typed as the README says
//!   (integers `i64`, `3.14`/`5.1` `f64`, booleans `bool`, `null`
//!   `Option<&'static str>` = `None`); the callback reads them through
//!   `black_box` so that they are really received.
//! * Node's harness calls `main()` from a `process.nextTick()`; the twin
//!   queues the workload with [`EventLoop::next_tick`] before `run()`.
//! * "stop and exit" prints and calls `process::exit(0)` from inside the
//!   callback, as suite.js does; "stop at loop exit" reads t1 when `run()`
//!   returns.

use std::cell::Cell;
use std::hint::black_box;
use std::process::exit;
use std::time::Instant;

use timerloop::EventLoop;

use crate::{die, parse_count};

type Workload = fn(&mut EventLoop, u64);

/// Name, default N, and the twin; the order of suite.js's `WORKLOADS`.
pub(crate) const WORKLOADS: &[(&str, u64, Workload)] = &[
    ("immediate-depth", 5_000_000, immediate_depth),
    ("immediate-depth1", 5_000_000, immediate_depth1),
    ("immediate-breadth", 5_000_000, immediate_breadth),
    ("immediate-breadth1", 5_000_000, immediate_breadth1),
    ("immediate-breadth4", 5_000_000, immediate_breadth4),
    ("immediate-clear", 5_000_000, immediate_clear),
    ("set-immediate-breadth", 10_000_000, set_immediate_breadth),
    (
        "set-immediate-breadth-args",
        5_000_000,
        set_immediate_breadth_args,
    ),
    (
        "set-immediate-depth-args",
        5_000_000,
        set_immediate_depth_args,
    ),
    ("timers-breadth", 5_000_000, timers_breadth),
    ("timers-breadth-args", 1_000_000, timers_breadth_args),
    ("timers-depth", 1_000, timers_depth),
    ("timers-insert-pooled", 5_000_000, timers_insert_pooled),
    (
        "timers-insert-unpooled-start",
        1_000_000,
        timers_insert_unpooled_start,
    ),
    (
        "timers-insert-unpooled-end",
        1_000_000,
        timers_insert_unpooled_end,
    ),
    ("timers-cancel-pooled", 5_000_000, timers_cancel_pooled),
    (
        "timers-cancel-unpooled-start",
        1_000_000,
        timers_cancel_unpooled_start,
    ),
    (
        "timers-cancel-unpooled-end",
        1_000_000,
        timers_cancel_unpooled_end,
    ),
    ("timers-timeout-pooled", 10_000_000, timers_timeout_pooled),
    (
        "timers-timeout-unpooled",
        1_000_000,
        timers_timeout_unpooled,
    ),
    (
        "timers-timeout-nexttick-5e4",
        50_000,
        timers_timeout_nexttick,
    ),
    (
        "timers-timeout-nexttick-5e6",
        5_000_000,
        timers_timeout_nexttick,
    ),
];

pub(crate) fn list() {
    for (name, n, _) in WORKLOADS {
        println!("{name} {n}");
    }
}

// ---------------------------------------------------------------------------
// Timing helpers: bench.start() / bench.end(ops), as in suite.js.

thread_local! {
    static NAME: Cell<&'static str> = const { Cell::new("") };
    static CONFIG_N: Cell<u64> = const { Cell::new(0) };
    static T0: Cell<Option<Instant>> = const { Cell::new(None) };
    static FINISHED: Cell<bool> = const { Cell::new(false) };
    /// ops to report when `run()` returns ("end at loop exit").
    static AT_EXIT: Cell<Option<u64>> = const { Cell::new(None) };
    /// The callback counter (`count` in suite.js) and the value at which
    /// the workload ends.
    static COUNT: Cell<u64> = const { Cell::new(0) };
    static TARGET: Cell<u64> = const { Cell::new(0) };
    /// What `finish()` reports as ops.
    static OPS: Cell<u64> = const { Cell::new(0) };
}

fn start() {
    T0.set(Some(Instant::now()));
}

fn stop(ops: u64) {
    let t1 = Instant::now();
    assert!(!FINISHED.get(), "stop() called twice");
    FINISHED.set(true);
    let t0 = T0.get().expect("stop() before start()");
    let secs = (t1 - t0).as_secs_f64();
    println!(
        "{} n={} ops/s={:.1}",
        NAME.get(),
        CONFIG_N.get(),
        ops as f64 / secs
    );
}

/// Finish and leave at once: whatever is still pending would only run
/// outside the timed region.
fn stop_and_exit(ops: u64) -> ! {
    stop(ops);
    exit(0)
}

fn stop_at_exit(ops: u64) {
    AT_EXIT.set(Some(ops));
}

/// `if (++count === target) stopAndExit(ops)`.
#[inline(always)]
fn bump() {
    let c = COUNT.get() + 1;
    COUNT.set(c);
    if c == TARGET.get() {
        stop_and_exit(OPS.get());
    }
}

fn never_called(_: &mut EventLoop) {
    panic!("a cancelled timer fired");
}

/// `null` as a callback argument.
type Null = Option<&'static str>;
const NULL: Null = None;

pub(crate) fn run(name: &str, n_arg: Option<&str>) {
    let Some(&(name, default_n, f)) = WORKLOADS.iter().find(|w| w.0 == name) else {
        eprintln!("unknown workload: {name}");
        eprintln!("usage: cargo bench -p timerloop-bench --bench suite -- WORKLOAD [N] | --list");
        exit(2);
    };
    let n = match n_arg {
        None => default_n,
        Some(s) => parse_count(s).unwrap_or_else(|| die(&format!("bad N: {s}"))),
    };
    if name == "immediate-breadth4" && n % 2 != 0 {
        die("immediate-breadth4 needs an even N");
    }
    NAME.set(name);
    CONFIG_N.set(n);
    // Defaults; the workloads with other ops or targets override them.
    TARGET.set(n);
    OPS.set(n);

    let mut lp = EventLoop::new();
    lp.next_tick(move |lp: &mut EventLoop| f(lp, n));
    if let Err(e) = lp.run() {
        eprintln!("{name}: the loop failed: {e}");
        exit(1);
    }
    if let Some(ops) = AT_EXIT.get() {
        stop(ops);
    }
    if !FINISHED.get() {
        eprintln!("{name}: the loop went idle before the workload finished");
        exit(1);
    }
}

// ---------------------------------------------------------------------------
// immediate.js

fn immediate_depth(lp: &mut EventLoop, _n: u64) {
    fn step(lp: &mut EventLoop) {
        bump();
        lp.set_immediate(step);
    }
    start();
    lp.set_immediate(step);
}

fn immediate_depth1(lp: &mut EventLoop, _n: u64) {
    fn step(lp: &mut EventLoop, a: i64) {
        black_box(a);
        bump();
        let a = 1_i64;
        lp.set_immediate(move |lp: &mut EventLoop| step(lp, a));
    }
    start();
    let a = 1_i64;
    lp.set_immediate(move |lp: &mut EventLoop| step(lp, a));
}

fn immediate_breadth(lp: &mut EventLoop, n: u64) {
    fn hit(_: &mut EventLoop) {
        bump();
    }
    start();
    for _ in 0..n {
        lp.set_immediate(hit);
    }
}

fn immediate_breadth1(lp: &mut EventLoop, n: u64) {
    start();
    for _ in 0..n {
        let a = 1_i64;
        lp.set_immediate(move |_: &mut EventLoop| {
            black_box(a);
            bump();
        });
    }
}

fn immediate_breadth4(lp: &mut EventLoop, n: u64) {
    let total = n / 2;
    TARGET.set(total);
    OPS.set(total);
    start();
    for _ in 0..total {
        let (a, b, c, d) = (1_i64, 2_i64, 3_i64, 4_i64);
        lp.set_immediate(move |_: &mut EventLoop| {
            black_box((a, b, c, d));
            bump();
        });
    }
}

fn immediate_clear(lp: &mut EventLoop, n: u64) {
    let total = n * 4;
    OPS.set(total);
    fn hit(tag: i64) {
        if black_box(tag) == 2 {
            stop_and_exit(OPS.get());
        }
    }
    start();
    for _ in 0..total {
        let tag = 1_i64;
        let im = lp.set_immediate(move |_: &mut EventLoop| hit(tag));
        let _ = lp.clear_immediate(im);
    }
    let tag = 2_i64;
    lp.set_immediate(move |_: &mut EventLoop| hit(tag));
}

// ---------------------------------------------------------------------------
// set-immediate-*.js (timed until loop exit)

fn set_immediate_breadth(lp: &mut EventLoop, n: u64) {
    fn noop(_: &mut EventLoop) {}
    stop_at_exit(n);
    start();
    for _ in 0..n {
        lp.set_immediate(noop);
    }
}

fn set_immediate_breadth_args(lp: &mut EventLoop, n: u64) {
    stop_at_exit(n);
    start();
    for i in 0..n {
        if i % 3 == 0 {
            let args = (512_i64, true, NULL, 512_i64, true, NULL);
            lp.set_immediate(move |_: &mut EventLoop| {
                black_box(args);
            });
        } else if i % 2 == 0 {
            let args = (false, 5.1_f64, 512_i64);
            lp.set_immediate(move |_: &mut EventLoop| {
                black_box(args);
            });
        } else {
            let a = 0_i64;
            lp.set_immediate(move |_: &mut EventLoop| {
                black_box(a);
            });
        }
    }
}

fn set_immediate_depth_args(lp: &mut EventLoop, n: u64) {
    fn next(lp: &mut EventLoop, k: i64) {
        if k % 3 == 0 {
            let (b, c, d, e, f) = (true, NULL, 5.1_f64, NULL, true);
            lp.set_immediate(move |lp: &mut EventLoop| {
                black_box((b, c, d, e, f));
                step(lp, k);
            });
        } else if k % 2 == 0 {
            let (b, c) = (5.1_f64, true);
            lp.set_immediate(move |lp: &mut EventLoop| {
                black_box((b, c));
                step(lp, k);
            });
        } else {
            lp.set_immediate(move |lp: &mut EventLoop| step(lp, k));
        }
    }
    fn step(lp: &mut EventLoop, k: i64) {
        let k = black_box(k) - 1;
        if k != 0 {
            next(lp, k);
        }
    }
    stop_at_exit(n);
    start();
    let k = n as i64;
    lp.set_immediate(move |lp: &mut EventLoop| step(lp, k));
}

// ---------------------------------------------------------------------------
// timers-breadth / timers-breadth-args / timers-depth

fn timers_breadth(lp: &mut EventLoop, n: u64) {
    fn hit(_: &mut EventLoop) {
        bump();
    }
    start();
    for _ in 0..n {
        lp.set_timeout(1, hit);
    }
}

// The JS twin passes the literal 3.14, not an approximation of pi.
#[allow(clippy::approx_constant)]
fn timers_breadth_args(lp: &mut EventLoop, n: u64) {
    start();
    for i in 0..n {
        if i % 4 == 0 {
            let args = (3.14_f64, 1024_i64, true, false);
            lp.set_timeout(1, move |_: &mut EventLoop| {
                black_box(args);
                bump();
            });
        } else if i % 3 == 0 {
            let args = (512_i64, true, NULL);
            lp.set_timeout(1, move |_: &mut EventLoop| {
                black_box(args);
                bump();
            });
        } else if i % 2 == 0 {
            let args = (false, 5.1_f64);
            lp.set_timeout(1, move |_: &mut EventLoop| {
                black_box(args);
                bump();
            });
        } else {
            let a = 0_i64;
            lp.set_timeout(1, move |_: &mut EventLoop| {
                black_box(a);
                bump();
            });
        }
    }
}

fn timers_depth(lp: &mut EventLoop, _n: u64) {
    fn step(lp: &mut EventLoop) {
        bump();
        lp.set_timeout(1, step);
    }
    start();
    lp.set_timeout(1, step);
}

// ---------------------------------------------------------------------------
// insert / cancel (synchronous timed regions)

fn timers_insert_pooled(lp: &mut EventLoop, n: u64) {
    start();
    for _ in 0..n {
        // A fresh (zero-capture) closure each iteration, as `() => {}`.
        lp.set_timeout(1, |_: &mut EventLoop| {});
    }
    stop_and_exit(n);
}

fn timers_insert_unpooled(lp: &mut EventLoop, n: u64, ascending: bool) {
    let mut list = Vec::new();
    start();
    if ascending {
        for d in 1..=n {
            list.push(lp.set_timeout(d, never_called));
        }
    } else {
        for d in (1..=n).rev() {
            list.push(lp.set_timeout(d, never_called));
        }
    }
    stop(n);
    for t in list {
        let _ = lp.clear_timeout(t);
    }
    exit(0);
}

fn timers_insert_unpooled_start(lp: &mut EventLoop, n: u64) {
    timers_insert_unpooled(lp, n, true);
}

fn timers_insert_unpooled_end(lp: &mut EventLoop, n: u64) {
    timers_insert_unpooled(lp, n, false);
}

fn timers_cancel_pooled(lp: &mut EventLoop, n: u64) {
    // Node walks the list's links; the twin keeps a pre-built Vec.
    let first = lp.set_timeout(1, |_: &mut EventLoop| {});
    let mut handles = Vec::with_capacity(n as usize);
    for _ in 0..n {
        handles.push(lp.set_timeout(1, never_called));
    }
    let _ = lp.clear_timeout(first);
    start();
    for &t in &handles {
        let _ = lp.clear_timeout(t);
    }
    stop(n);
}

fn timers_cancel_unpooled(lp: &mut EventLoop, n: u64, oldest_first: bool) {
    let mut list = Vec::new();
    for i in 0..n {
        list.push(lp.set_timeout(i + 1, never_called));
    }
    start();
    if oldest_first {
        for &t in &list {
            let _ = lp.clear_timeout(t);
        }
    } else {
        for &t in list.iter().rev() {
            let _ = lp.clear_timeout(t);
        }
    }
    stop(n);
}

fn timers_cancel_unpooled_start(lp: &mut EventLoop, n: u64) {
    timers_cancel_unpooled(lp, n, true);
}

fn timers_cancel_unpooled_end(lp: &mut EventLoop, n: u64) {
    timers_cancel_unpooled(lp, n, false);
}

// ---------------------------------------------------------------------------
// timers-timeout-*.js: created untimed; timed = firing them.

fn cb_a(_: &mut EventLoop) {
    bump();
}

fn cb_b(_: &mut EventLoop) {
    bump();
}

fn timers_timeout_pooled(lp: &mut EventLoop, n: u64) {
    for i in 0..n {
        if i % 2 == 1 {
            lp.set_timeout(1, cb_a);
        } else {
            lp.set_timeout(1, cb_b);
        }
    }
    start();
}

fn timers_timeout_unpooled(lp: &mut EventLoop, n: u64) {
    for i in 0..n {
        let t = if i % 2 == 1 {
            lp.set_timeout(1, cb_a)
        } else {
            lp.set_timeout(1, cb_b)
        };
        lp.unref_timeout(t).expect("a fresh timer");
        lp.ref_timeout(t).expect("a fresh timer");
    }
    start();
}

fn timers_timeout_nexttick(lp: &mut EventLoop, n: u64) {
    fn counter(_: &mut EventLoop) {
        bump();
    }
    fn a(lp: &mut EventLoop) {
        lp.next_tick(counter);
    }
    fn b(lp: &mut EventLoop) {
        lp.next_tick(counter);
    }
    for i in 0..n {
        if i % 2 == 1 {
            lp.set_timeout(1, a);
        } else {
            lp.set_timeout(1, b);
        }
    }
    start();
}
