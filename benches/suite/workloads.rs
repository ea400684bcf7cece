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
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use timerloop::{EventLoop, Timeout};

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
    ("timers-refresh-idle", 10_000_000, timers_refresh_idle),
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
    /// What `finish()` reports as ops.
    static OPS: Cell<u64> = const { Cell::new(0) };
    /// The process's CPU use when the timed region began, if `SUITE_CPU`
    /// is set.
    static CPU0: Cell<Option<crate::Cpu>> = const { Cell::new(None) };
}

/// The callback counter (`count` in suite.js) and the value at which the
/// workload ends: statics, not thread-locals. Every callback reads both,
/// and a thread-local's accessor is inlined only where the codegen unit
/// allows: in some builds one of `cb_a`'s and `cb_b`'s copies called it
/// three times, 20 instructions a callback that timerloop had not changed
/// (callgrind, timers-timeout-pooled). A static is a plain load and store
/// wherever the callback lands, as the closure's variable is in Node.
static COUNT: Counter = Counter(AtomicU64::new(0));
static TARGET: Counter = Counter(AtomicU64::new(0));

/// A `Cell<u64>` that can be a static: the suite runs on one thread, so
/// relaxed loads and stores are plain moves.
struct Counter(AtomicU64);

impl Counter {
    #[inline(always)]
    fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }

    #[inline(always)]
    fn set(&self, v: u64) {
        self.0.store(v, Relaxed);
    }
}

fn start() {
    CPU0.set(crate::Cpu::wanted().then(crate::Cpu::now));
    T0.set(Some(Instant::now()));
}

fn stop(ops: u64) {
    let t1 = Instant::now();
    assert!(!FINISHED.get(), "stop() called twice");
    FINISHED.set(true);
    let t0 = T0.get().expect("stop() before start()");
    let secs = (t1 - t0).as_secs_f64();
    // Only with SUITE_CPU: the timed region's CPU, split, per op.
    let cpu = match CPU0.get() {
        Some(c0) => crate::Cpu::now().since(c0).per_op(ops),
        None => String::new(),
    };
    println!(
        "{} n={} ops/s={:.1}{cpu}",
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
    // SUITE_WATCH=1: one idle socket registered (unrefed, never ready), as
    // any program with a connection or listener has, and as Node always
    // has descriptors to watch: the loop's poll phase then asks the kernel
    // every iteration (`epoll_wait`, timeout 0 where it must not wait),
    // which it skips while it watches nothing. The depth rows run one
    // iteration per op, so this shows what that call costs them.
    let _watched = std::env::var_os("SUITE_WATCH")
        .is_some_and(|v| v == "1")
        .then(|| {
            let (a, b) = timerloop::mio::net::UnixStream::pair().expect("a socket pair");
            let h = lp
                .insert_io(a, timerloop::mio::Interest::READABLE, |_, _, _| {})
                .expect("registered");
            lp.unref_io(h).expect("a live handle");
            b // the peer stays open, silent: never readable
        });
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

// ---------------------------------------------------------------------------
// timers-refresh-idle (issue 12; not in Node's suite): the idle-timeout
// server pattern. `rivals timers-refresh-idle` runs the same pattern on a
// virtual clock against tokio-util's `DelayQueue::reset`, with these
// constants and [`idle_connections`] / [`refresh_lines`].

/// Connections, one idle timeout each.
pub(crate) const IDLE_CONNS: usize = 10_000;
/// The idle timeout: every timer has this duration (one list).
pub(crate) const IDLE_MS: u64 = 1_000;
/// Every `IDLE_EVERY`-th connection (index 0, 1000, ...) has gone idle:
/// 10 of them.
pub(crate) const IDLE_EVERY: usize = 1_000;
/// How far past `IDLE_MS` the set-up lets time go, so that the idle
/// connections' timeouts are due when the timed region starts.
pub(crate) const IDLE_SLACK_MS: u64 = 10;
/// Refreshes ("lines read") per loop iteration, about what one
/// `epoll_wait` of a busy server returns (libuv asks for up to 1024).
pub(crate) const LINES_PER_ITERATION: u64 = 1_000;

thread_local! {
    /// Idle timeouts that fired.
    pub(crate) static IDLE_FIRED: Cell<u64> = const { Cell::new(0) };
}

fn on_idle(_: &mut EventLoop) {
    IDLE_FIRED.set(IDLE_FIRED.get() + 1);
}

fn on_live(_: &mut EventLoop) -> Result<(), &'static str> {
    Err("a refreshed connection timed out (the run stalled for over a second)")
}

/// Creates the [`IDLE_CONNS`] timeouts of [`IDLE_MS`] in index order
/// (connection `i` is idle if `i % IDLE_EVERY == 0`; its timeout counts in
/// [`IDLE_FIRED`], a live one's fails the loop) and returns the live
/// connections' handles, in creation order.
pub(crate) fn idle_connections(lp: &mut EventLoop) -> Vec<Timeout> {
    let mut live = Vec::with_capacity(IDLE_CONNS);
    for i in 0..IDLE_CONNS {
        if i % IDLE_EVERY == 0 {
            lp.set_timeout(IDLE_MS, on_idle);
        } else {
            live.push(lp.set_timeout(IDLE_MS, on_live));
        }
    }
    live
}

/// The round-robin over the live connections: the next one to get a line,
/// and how many lines are left.
pub(crate) struct Lines {
    pub(crate) live: Vec<Timeout>,
    pub(crate) next: usize,
    pub(crate) left: u64,
}

/// One loop iteration's lines: up to [`LINES_PER_ITERATION`] refreshes,
/// each of the next live connection's timeout. True when none are left.
#[inline]
pub(crate) fn refresh_lines(lp: &mut EventLoop, lines: &mut Lines) -> bool {
    let k = lines.left.min(LINES_PER_ITERATION);
    for _ in 0..k {
        lp.refresh(lines.live[lines.next])
            .expect("a pending timeout");
        lines.next += 1;
        if lines.next == lines.live.len() {
            lines.next = 0;
        }
    }
    lines.left -= k;
    lines.left == 0
}

/// Untimed: [`idle_connections`]; the thread sleeps `IDLE_MS +
/// IDLE_SLACK_MS`; every live connection is refreshed once, in creation
/// order (so the 10 idle ones, due now, are the oldest of the list).
/// Timed: one batch of [`LINES_PER_ITERATION`] refreshes per loop
/// iteration (a `set_immediate` chain; the first batch runs in the first
/// iteration's check phase, after its timers phase has fired the 10 idle
/// timeouts), round-robin over the live connections in creation order;
/// end right after the n-th refresh; the run fails unless exactly 10 idle
/// timeouts fired. ops = n (refreshes).
///
/// Time source: the real clock on both sides, as in every twin. Each
/// refresh reads the clock once on both, as Node's semantics require (a
/// refresh restarts the countdown from `getLibuvNow()`): Node's
/// `uv_update_time` reads `CLOCK_MONOTONIC_COARSE` when its resolution is
/// 1 ms or better and `CLOCK_MONOTONIC` otherwise (the coarse clock is
/// 4 ms with CONFIG_HZ=250, as on the VM of `bench/results-*`, so both
/// read `CLOCK_MONOTONIC` there, a vDSO call, about 23 ns). timerloop's
/// loop reads its `SystemClock` through a millisecond cache (`MsCache`,
/// `src/uv/clock.rs`): one `rdtsc` per read, and `CLOCK_MONOTONIC` itself
/// only when the counter says the next millisecond may have begun, about
/// once a millisecond; the loop's time is still the OS clock's, never
/// ahead of it. So the clock work is not the same on both sides: that is
/// timerloop's own saving, counted in its rate. On a kernel whose coarse
/// clock is 1 ms (CONFIG_HZ=1000) Node reads that cheaper one instead.
/// Per batch, Node's poll phase makes one `epoll_wait` with timeout 0 (Node
/// always watches some fds) that timerloop skips (it watches none here):
/// one syscall per 1,000 ops.
fn timers_refresh_idle(lp: &mut EventLoop, n: u64) {
    fn batch(lp: &mut EventLoop, mut lines: Lines) {
        if refresh_lines(lp, &mut lines) {
            stop(OPS.get());
            let fired = IDLE_FIRED.get();
            let idle = (IDLE_CONNS / IDLE_EVERY) as u64;
            if fired != idle {
                eprintln!("timers-refresh-idle: {fired} idle timeouts fired, not {idle}");
                exit(1);
            }
            exit(0);
        }
        lp.set_immediate(move |lp: &mut EventLoop| batch(lp, lines));
    }
    let live = idle_connections(lp);
    std::thread::sleep(Duration::from_millis(IDLE_MS + IDLE_SLACK_MS));
    for &t in &live {
        lp.refresh(t).expect("a pending timeout");
    }
    let lines = Lines {
        live,
        next: 0,
        left: n,
    };
    start();
    lp.set_immediate(move |lp: &mut EventLoop| batch(lp, lines));
}
