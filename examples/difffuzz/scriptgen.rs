//! Random timer scripts for differential testing against Node.
//!
//! [`generate`] builds a random script from a seed. The difffuzz tool
//! (`examples/difffuzz/main.rs`) runs each generated script on Node
//! (through `fixtures/node/tl.js`) and on this crate's loop, reports every
//! script whose outputs differ, and shrinks it with `shrink.rs` (next to
//! this file, which also prints parsed scripts back as source).
//! `tests/difffuzz.rs` compiles this file too (`#[path]`), for its seeded
//! batch; so it uses only the crate's public API.
//!
//! This file is the generator alone, and stays one file on purpose: `Gen`
//! is one recursive descent (`body` -> `stmt` -> a statement kind -> `body`
//! of its callback) whose every step reads and updates the same timing
//! model (clusters, reserved windows, `[lo, hi]` ranges), and the rules of
//! that model, below, are what each step enforces; split across files, a
//! rule would sit apart from the code that keeps it.
//!
//! # What a generated script contains
//!
//! Nested timeouts, intervals, immediates, ticks, microtasks, `io`, `block`,
//! `throw`, `nth`, and `clear`/`refresh`/`ref`/`unref`/`hasref` of random
//! names; and `task`s, at the top level, in callbacks and in other tasks,
//! whose bodies mix those statements with `sleep MS`, `yield`, `check` and
//! now and then a `throw` (an unhandled rejection). Every script ends on
//! Node: every interval clears itself with `nth K { clear NAME }` in its own
//! body (its name is bound exactly once), a timeout only runs again after a
//! `refresh` that the generator accounted for, and a task only waits for
//! timers and immediates of its own.
//!
//! Tasks come from a random stream of their own. Each script draws a task
//! rate (0, no tasks, for a quarter of the seeds; else 5 to 15 %), and each
//! statement the main stream is about to make is, with that chance, a
//! `task` made wholly from the task stream (its body, and whatever nests in
//! it, tasks included). A seed whose task stream never says "task" gives
//! exactly the script it gave before tasks existed; after a first task the
//! main stream sees the names, windows and budgets the task used, so the
//! rest of the script drifts from the old one.
//!
//! # Timing
//!
//! Node's output must not depend on how late the machine runs a callback, so
//! the generator keeps a model of virtual time (the time of the crate's
//! virtual clock, where only `block` and waiting move time):
//!
//! - Activity is grouped into *clusters*: the main script, or one run of a
//!   timer that starts a new cluster, together with everything it causes
//!   before the loop goes idle again (its ticks, microtasks, immediates,
//!   `io` callbacks and *attached* timers, below). A cluster gets a budget of
//!   `block` milliseconds when it is created, so its whole activity lies in
//!   a known window `[earliest start, latest start + budget + drift]`.
//! - Each callback carries a range `[lo, hi]` for the virtual time at which
//!   it runs: `lo` is exact (virtual time never runs late), `hi` adds 1 ms of
//!   drift per timer hop to cover Node's real lateness.
//! - A timer that starts a cluster (a *detached* timer) gets a delay, a
//!   multiple of 5 ms or a few ms off one, such that its window (and the
//!   window of each later run of an interval or a self-refreshing timeout) is
//!   at least [`GAP`] ms away from every window reserved so far. So any two
//!   things of different clusters are ordered the same way on Node and on the
//!   virtual clock.
//! - An *attached* timer (delay 0, 1, NaN, negative, or 5 to 15 ms) is
//!   followed in the same body by a `block` at least 4 ms longer than its
//!   delay, so it is overdue, never racing, when its creator returns; it then
//!   runs inside its creator's cluster. Only one callback of a cluster (its
//!   root, or a child the root handed the right to) creates attached timers,
//!   and their expiries are at least 3 ms apart unless they share a list.
//!   A timer callback reads the loop's clock (creates a timer, `refresh`es)
//!   after making an attached timer only where a `block` follows (as the
//!   attached timer's own does); so does an attached interval's body after
//!   its first `block`. At the end of a timers pass Node re-arms its timer
//!   `max(1, due - now)` ms after the clock's last reading (R6.2 step 6): a
//!   reading after the `block` would make the attached timer due 1 ms after
//!   it, racing the check phase, rather than overdue.
//! - `io` is followed by `block 10`, so the completion has arrived before
//!   the next poll phase, except in *quiet* clusters, which have no immediates
//!   or attached timers that the poll phase could race (and no `throw`:
//!   Node's handler queues an immediate). At most one `io` of a cluster is
//!   in flight at a time. The process's first `io` starts libuv's thread
//!   pool, which takes its caller a few ms: so an `io` also takes 3 ms more
//!   of its cluster's budget (and its `hi`), unless one at the main
//!   script's top level, which runs before it, came first.
//! - An immediate that `unref` may target (a *light* one) does nothing that
//!   takes or depends on time: an unref'd immediate does not keep poll from
//!   waiting, so it runs whenever the loop next wakes up, which is in
//!   another cluster, before its timers, or earlier, for reasons of Node's
//!   own: V8 posts tasks to the loop, such as the scavenges that `block`'s
//!   garbage calls for (`node --trace-gc` shows one run as a task there;
//!   seed 23000476, size 60, woke early on 10 runs of 10). So its body
//!   makes no immediate (which would run before that cluster's timers
//!   after a wake-up of Node's own, after them otherwise) and no `unref`
//!   (which could leave the loop without the timer it is waiting for).
//! - `refresh` is emitted only where the new expiry is known: right after
//!   its timeout was created and a `block`, as the first statement of a
//!   timeout's own body (`nth N { refresh SELF }`), or for names whose
//!   timeouts all share one delay and have bodies without timers, `io` or
//!   `refresh` (whose re-runs get windows of their own).
//!
//! ## Tasks
//!
//! A task body runs in pieces, one per poll; each piece is a callback of its
//! own in the model, and each `sleep`, `yield` or `check` ends one.
//!
//! - The first poll is a microtask queued by the `task` statement: the body
//!   starts as a `microtask`'s would, in the spawner's cluster, from the
//!   spawner's `lo` up to the cluster's end. It often takes over from an
//!   owner spawner the right to create attached timers.
//! - `yield` is one microtask hop and `check` waits for an immediate of its
//!   own (`setImmediate` from `timers/promises`): the rest of the body runs
//!   later in the same cluster, as a microtask or an immediate created there
//!   would. So `check`, like `immediate`, is not made in quiet clusters, nor
//!   in the light bodies that `unref` may leave to another cluster.
//! - `sleep MS` is a timeout of MS ms (0 is 1 ms), created when it runs,
//!   whose callback is the rest of the body, so it obeys the rules of a
//!   timeout created there. Mostly it is detached: MS is a whole delay
//!   placed as a detached timeout's, and the rest of the body is the root of
//!   the new cluster. Where the task's first poll owns its cluster's
//!   attached timers, it may end in an attached `sleep 0`, `sleep 1` or
//!   `sleep 5`: nothing can follow it in the same poll, so the `task`
//!   statement is followed by `microtask { block 5 }` (`block 10` for
//!   `sleep 5`), the very next microtask after the first poll, which makes
//!   the timer overdue as the `block` after an attached timeout does; its
//!   expiry is spaced from the owner's other attached timers, and the rest
//!   of the body runs in the same cluster and owns them, or nobody does. A
//!   `sleep` is a timer: none in the bodies of refreshable timeouts or of
//!   light immediates.
//! - `throw` in a task body rejects the task's promise; Node reports the
//!   unhandled rejection as an uncaught exception, whose handler queues an
//!   immediate, so, as any `throw`, not in quiet clusters. It ends the task.
//!   A task body has no `nth` of its own (its callbacks do).
//!
//! Scripts span at most about 110 ms of virtual time.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::shrink::fmt_delay;

/// The least distance, in ms, between the windows of two clusters.
pub const GAP: f64 = 5.0;
/// Node's lateness allowed per timer hop, in ms.
const DRIFT: f64 = 1.0;
/// Node's lateness allowed for the main script (module loading, the first
/// loop iteration).
const MAIN_DRIFT: f64 = 3.0;
/// How long an `io` completion may take, in ms, where nothing waits for it.
const IO_LATENCY: f64 = 5.0;
/// The `block` after an `io`: long enough for the thread pool to complete
/// it even on a busy machine.
const IO_BLOCK: u32 = 10;
/// What the process's first `io` costs its caller, in ms: it starts libuv's
/// thread pool and waits until the pool's threads run (0.4 to 4 ms measured
/// on the 2-core test machine under load).
const IO_START: u32 = 3;
/// No window ends later than this, in ms.
const HORIZON: f64 = 110.0;
/// Deepest nesting of bodies the generator produces.
const MAX_DEPTH: usize = 4;
/// Delays that Node coerces to 1 ms (without a warning).
const SMALL_DELAYS: &[&str] = &[
    "0",
    "1",
    "-5",
    "NaN",
    "-Infinity",
    "0.5",
    "1.5",
    "-0",
    "1.9",
];

/// A tiny deterministic PRNG (SplitMix64).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

/// One cluster of activity (see the module docs).
#[derive(Debug)]
struct Cluster {
    /// `block` milliseconds still available.
    budget: u32,
    /// The latest virtual time any of its activity may reach.
    end: f64,
    /// No immediates or attached timers, so that an `io` may go without a
    /// `block`.
    quiet: bool,
    /// An `io` without a `block` is still allowed (the window has room for
    /// the latency of one).
    lazy_io: bool,
    /// The callback instance that may create attached timers.
    owner: Option<u64>,
    /// Expiry and effective delay of the owner's attached timers.
    attached: Vec<(f64, f64)>,
}

type ClusterRef = Rc<RefCell<Cluster>>;

/// Whether an attached timer of duration `d` made now, in every run, keeps
/// its expiry at least 3 ms from each attached timer of its cluster, unless
/// it shares that timer's list and expiry.
fn spaced(runs: &[Run], d: f64) -> bool {
    runs.iter().all(|r| {
        let e = r.lo + d;
        r.cluster
            .borrow()
            .attached
            .iter()
            .all(|&(e2, d2)| (e - e2).abs() >= 3.0 || (e == e2 && d == d2))
    })
}

/// One execution of the body being generated.
#[derive(Debug, Clone)]
struct Run {
    /// The value `nth` compares with.
    counter: u32,
    /// Earliest virtual time at this point of the body.
    lo: f64,
    /// Latest virtual time at this point of the body.
    hi: f64,
    cluster: ClusterRef,
    /// Whether this part of the cluster may start an `io`.
    io: Rc<Cell<bool>>,
    /// Callback instance id.
    cb: u64,
}

/// How the body being generated is executed.
#[derive(Debug, Clone)]
struct Mode {
    depth: usize,
    /// Inside a callback (so `nth` is allowed).
    callback: bool,
    /// In the body of a refreshable timeout: no timers, `io` or `refresh`;
    /// the cell holds the `block` milliseconds still allowed.
    simple: Option<Rc<Cell<u32>>>,
    /// In the body of an immediate that may be unref'd: simple, without
    /// `block`, and any immediate in it is light too.
    light: bool,
    /// Directly in a task body (not in a callback inside one): `sleep`,
    /// `yield` and `check` are allowed, `nth` is not.
    task: Option<Rc<TaskBody>>,
    /// In a timer callback (its body and its `nth`s): set once it has an
    /// attached timer pending (see the module docs), after which it reads
    /// the loop's clock only right before a `block`.
    timer: Option<Rc<Cell<bool>>>,
}

impl Mode {
    fn deeper(&self) -> Mode {
        Mode {
            depth: self.depth + 1,
            callback: true,
            simple: self.simple.clone(),
            light: self.light,
            task: None,
            timer: None,
        }
    }

    /// The mode of a timer's body.
    fn timer_body(&self) -> Mode {
        Mode {
            timer: Some(Rc::new(Cell::new(false))),
            ..self.deeper()
        }
    }

    /// Whether this callback has an attached timer pending: a new timer or
    /// a `refresh` now would reset the loop's clock (R6.2 step 6).
    fn attached_pending(&self) -> bool {
        self.timer.as_ref().is_some_and(|t| t.get())
    }
}

/// The task body being generated.
#[derive(Debug)]
struct TaskBody {
    /// No `sleep`, `yield` or `check` yet: the body is still in the task's
    /// first poll, right after its spawner returned.
    first: Cell<bool>,
    /// The `block` of the `microtask { block N }` that must follow the
    /// `task` statement, for an attached `sleep` (0: none).
    guard: Cell<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    /// A timeout name, rebound freely, never refreshed from elsewhere.
    Plain,
    /// An interval's or a self-refreshing timeout's name: bound once.
    Once,
    /// A timeout name that `refresh` may target from anywhere: all its
    /// timeouts have this delay and simple bodies with at most this many ms
    /// of `block`.
    Refreshable { delay: f64, max_block: u32 },
    /// An immediate name that `unref` never targets: the immediate runs
    /// in its cluster's check phase.
    Immediate,
    /// An immediate name that `unref` may target. An unref'd immediate does
    /// not keep poll from waiting, so it may run only at the loop's next
    /// wake-up, in another cluster: its body has nothing that takes or
    /// depends on time (no `block`, timers, `io` or `refresh`).
    LightImmediate,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Log,
    Block,
    Tick,
    Microtask,
    Immediate,
    Io,
    Timeout,
    Attached,
    RefreshUnit,
    SelfRefresh,
    Interval,
    AttachedInterval,
    Control,
    Refresh,
    Throw,
    Nth,
    Task,
    Sleep,
    Yield,
    Check,
}

const KINDS: &[(Kind, u32)] = &[
    (Kind::Log, 10),
    (Kind::Block, 7),
    (Kind::Tick, 6),
    (Kind::Microtask, 5),
    (Kind::Immediate, 7),
    (Kind::Io, 4),
    (Kind::Timeout, 12),
    (Kind::Attached, 5),
    (Kind::RefreshUnit, 3),
    (Kind::SelfRefresh, 2),
    (Kind::Interval, 4),
    (Kind::AttachedInterval, 2),
    (Kind::Control, 10),
    (Kind::Refresh, 3),
    (Kind::Throw, 2),
    (Kind::Nth, 6),
    // Weighed only in the task stream (see `Gen::task_rate`); the last three
    // only directly in a task body.
    (Kind::Task, 4),
    (Kind::Sleep, 20),
    (Kind::Yield, 10),
    (Kind::Check, 8),
];

struct Gen {
    /// The stream of the statement being generated: the main stream, or
    /// the task stream while a `task` statement is generated.
    rng: Rng,
    /// The other stream (swapped with `rng` around each `task`). A script
    /// whose task stream never says "task" is exactly the script the main
    /// stream alone makes, as before tasks existed.
    task_rng: Rng,
    /// Percent chance that a main-stream statement is a `task` (0: none in
    /// this script).
    task_rate: u64,
    /// Generating from the task stream (inside a `task` statement).
    in_task: bool,
    /// Statements still to generate.
    left: usize,
    /// Reserved cluster windows.
    windows: Vec<(f64, f64)>,
    names: Vec<(String, Class)>,
    next_cb: u64,
    next_label: u32,
    /// An `io` has been made at the main script's top level: it runs before
    /// any other `io` made after it, so none of those starts the thread
    /// pool.
    io_started: bool,
}

/// Generates a random timer script from `seed`, with about `size`
/// statements (counting nested ones).
///
/// The same `seed` and `size` always give the same script. The script
/// parses, ends on Node, and keeps the time-sensitive things it does at
/// least [`GAP`] ms apart (see the module docs), so Node prints the same
/// lines on every run unless the machine is very late.
#[must_use]
pub fn generate(seed: u64, size: usize) -> String {
    let mut task_rng = Rng(seed ^ 0x7461_736b_7374_726d);
    let task_rate = task_rng.pick(&[0, 0, 5, 8, 10, 10, 12, 15]);
    let mut g = Gen {
        rng: Rng(seed ^ 0x7469_6d65_726c_6f6f),
        task_rng,
        task_rate,
        in_task: false,
        left: size.max(1),
        windows: Vec::new(),
        names: Vec::new(),
        next_cb: 1,
        next_label: 0,
        io_started: false,
    };
    g.main()
}

fn braces(stmts: &[String]) -> String {
    if stmts.is_empty() {
        "{ }".to_owned()
    } else {
        format!("{{ {} }}", stmts.join(" "))
    }
}

fn apart(a: (f64, f64), b: (f64, f64)) -> bool {
    a.0 >= b.1 + GAP || b.0 >= a.1 + GAP
}

fn advance(runs: &mut [Run], ms: u32) {
    for r in runs {
        r.lo += f64::from(ms);
        r.hi += f64::from(ms);
    }
}

/// Whether no two runs share a cluster.
fn distinct(runs: &[Run]) -> bool {
    runs.iter().enumerate().all(|(i, r)| {
        runs[..i]
            .iter()
            .all(|s| !Rc::ptr_eq(&r.cluster, &s.cluster))
    })
}

/// Whether every run may create attached timers.
fn owners(runs: &[Run]) -> bool {
    distinct(runs)
        && runs.iter().all(|r| {
            let c = r.cluster.borrow();
            !c.quiet && c.owner == Some(r.cb)
        })
}

impl Gen {
    fn main(&mut self) -> String {
        let quiet = self.rng.chance(20);
        let budget = self.rng.pick(&[0, 5, 10, 10, 20, 30]);
        let end = f64::from(budget) + MAIN_DRIFT + if quiet { IO_LATENCY } else { 0.0 };
        self.windows.push((0.0, end));
        let cluster = Rc::new(RefCell::new(Cluster {
            budget,
            end,
            quiet,
            lazy_io: quiet,
            owner: Some(0),
            attached: Vec::new(),
        }));
        let mut runs = vec![Run {
            counter: 0,
            lo: 0.0,
            hi: 0.0,
            cluster,
            io: Rc::new(Cell::new(true)),
            cb: 0,
        }];
        let mode = Mode {
            depth: 0,
            callback: false,
            simple: None,
            light: false,
            task: None,
            timer: None,
        };
        let mut out = Vec::new();
        while self.left > 0 && !runs.is_empty() {
            out.extend(self.stmt(&mut runs, &mode));
        }
        let mut s = out.join("\n");
        s.push('\n');
        s
    }

    fn cb(&mut self) -> u64 {
        self.next_cb += 1;
        self.next_cb
    }

    fn label(&mut self, prefix: char) -> String {
        self.next_label += 1;
        format!("{prefix}{}", self.next_label)
    }

    fn body_len(&mut self) -> usize {
        self.rng.pick(&[0, 1, 1, 2, 2, 2, 3, 3, 4])
    }

    fn body(&mut self, runs: &mut Vec<Run>, mode: &Mode, len: usize) -> Vec<String> {
        let mut out = Vec::new();
        for _ in 0..len {
            if runs.is_empty() || self.left == 0 {
                break;
            }
            out.extend(self.stmt(runs, mode));
        }
        out
    }

    fn stmt(&mut self, runs: &mut Vec<Run>, mode: &Mode) -> Vec<String> {
        self.left = self.left.saturating_sub(1);
        if let Some(v) = self.maybe_task(runs, mode) {
            return v;
        }
        for _ in 0..10 {
            let kind = self.pick_kind(mode);
            if let Some(v) = self.try_kind(kind, runs, mode) {
                return v;
            }
        }
        vec![format!("log {}", self.label('e'))]
    }

    fn pick_kind(&mut self, mode: &Mode) -> Kind {
        let leaf = mode.depth >= MAX_DEPTH;
        let simple = mode.simple.is_some();
        let in_task = self.in_task;
        let task_body = mode.task.is_some();
        let allowed = |k: Kind| match k {
            Kind::Tick | Kind::Microtask | Kind::Immediate | Kind::Nth | Kind::Task if leaf => {
                false
            }
            Kind::Task => in_task,
            // A `sleep` is a timer; a `check` an immediate that must not be
            // unref'd-light.
            Kind::Sleep => task_body && !simple,
            Kind::Check => task_body && !mode.light,
            Kind::Yield => task_body,
            Kind::Io
            | Kind::Timeout
            | Kind::Attached
            | Kind::RefreshUnit
            | Kind::SelfRefresh
            | Kind::Interval
            | Kind::AttachedInterval
                if leaf || simple =>
            {
                false
            }
            Kind::Refresh if simple => false,
            // Timers and `refresh` read the clock; attached timers, with
            // their `block` after, may.
            Kind::Timeout
            | Kind::RefreshUnit
            | Kind::SelfRefresh
            | Kind::Interval
            | Kind::Refresh
                if mode.attached_pending() =>
            {
                false
            }
            Kind::Block | Kind::Immediate if mode.light => false,
            Kind::Nth => mode.callback,
            _ => true,
        };
        let weight = |k: Kind, w: u32| match k {
            _ if !allowed(k) => 0,
            // A throw at the main script's top level ends the script.
            Kind::Throw if !mode.callback && !task_body => 1,
            _ => w * 2,
        };
        let total: u32 = KINDS.iter().map(|&(k, w)| weight(k, w)).sum();
        let mut x = self.rng.below(total as usize) as u32;
        for &(k, w) in KINDS {
            let w = weight(k, w);
            if x < w {
                return k;
            }
            x -= w;
        }
        Kind::Log
    }

    fn try_kind(&mut self, kind: Kind, runs: &mut Vec<Run>, mode: &Mode) -> Option<Vec<String>> {
        match kind {
            Kind::Log => Some(vec![format!("log {}", self.label('a'))]),
            Kind::Block => {
                let ms = self.rng.pick(&[5, 5, 10, 10, 20, 1, 2, 3]);
                if !self.take(runs, mode, ms) {
                    return None;
                }
                advance(runs, ms);
                Some(vec![format!("block {ms}")])
            }
            Kind::Tick | Kind::Microtask | Kind::Immediate => {
                let quiet = runs.iter().any(|r| r.cluster.borrow().quiet);
                let mut body_mode = mode.deeper();
                let word = match kind {
                    Kind::Tick => "tick".to_owned(),
                    Kind::Microtask => "microtask".to_owned(),
                    _ if quiet => return None,
                    _ if mode.light || self.rng.chance(35) => {
                        body_mode.simple = Some(Rc::new(Cell::new(0)));
                        body_mode.light = true;
                        format!("immediate {}", self.name(Class::LightImmediate))
                    }
                    _ => format!("immediate {}", self.name(Class::Immediate)),
                };
                let mut child = self.children(runs, false, 20);
                let len = self.body_len();
                let stmts = self.body(&mut child, &body_mode, len);
                Some(vec![format!("{word} {}", braces(&stmts))])
            }
            Kind::Io => self.io(runs, mode),
            Kind::Timeout => self.detached(runs, mode, 0),
            Kind::RefreshUnit => {
                let ms = self.rng.pick(&[5, 10, 20]);
                self.detached(runs, mode, ms)
            }
            Kind::Attached => self.attached(runs, mode),
            Kind::SelfRefresh => self.repeating(runs, mode, false),
            Kind::Interval => self.repeating(runs, mode, true),
            Kind::AttachedInterval => self.attached_interval(runs, mode),
            Kind::Control => {
                let op = if mode.light {
                    self.rng
                        .pick(&["clear", "clear", "ref", "hasref", "hasref"])
                } else {
                    self.rng
                        .pick(&["clear", "clear", "ref", "unref", "hasref", "hasref"])
                };
                Some(vec![format!("{op} {}", self.any_name(op))])
            }
            Kind::Refresh => self.refresh(runs),
            Kind::Throw => {
                // Node handles the error and queues `setImmediate(noop)`,
                // which would keep poll from waiting for a quiet `io`.
                if runs.iter().any(|r| r.cluster.borrow().quiet) {
                    return None;
                }
                runs.clear();
                Some(vec![format!("throw {}", self.label('x'))])
            }
            Kind::Nth => self.nth(runs, mode),
            Kind::Task => self.task(runs, mode),
            Kind::Sleep => self.sleep(runs, mode),
            Kind::Yield | Kind::Check => {
                // `check` waits for an immediate of its own.
                if matches!(kind, Kind::Check) && runs.iter().any(|r| r.cluster.borrow().quiet) {
                    return None;
                }
                let tb = mode.task.as_ref()?;
                tb.first.set(false);
                // The rest of the body runs later in the same cluster: after
                // other microtasks (`yield`), or in the check phase.
                *runs = self.children(runs, false, 20);
                let word = if matches!(kind, Kind::Check) {
                    "check"
                } else {
                    "yield"
                };
                Some(vec![word.to_owned()])
            }
        }
    }

    /// Takes `ms` of `block` from the budget of every run's cluster.
    fn take(&mut self, runs: &[Run], mode: &Mode, ms: u32) -> bool {
        if let Some(s) = &mode.simple
            && s.get() < ms
        {
            return false;
        }
        let mut groups: Vec<(ClusterRef, u32)> = Vec::new();
        for r in runs {
            match groups.iter_mut().find(|(c, _)| Rc::ptr_eq(c, &r.cluster)) {
                Some((_, n)) => *n += 1,
                None => groups.push((r.cluster.clone(), 1)),
            }
        }
        if groups.iter().any(|(c, n)| c.borrow().budget < n * ms) {
            return false;
        }
        for (c, n) in groups {
            c.borrow_mut().budget -= n * ms;
        }
        if let Some(s) = &mode.simple {
            s.set(s.get() - ms);
        }
        true
    }

    /// Gives back what [`Gen::take`] took.
    fn untake(&mut self, runs: &[Run], mode: &Mode, ms: u32) {
        for r in runs {
            r.cluster.borrow_mut().budget += ms;
        }
        if let Some(s) = &mode.simple {
            s.set(s.get() + ms);
        }
    }

    /// Callbacks created by `runs` that run inside the same cluster (ticks,
    /// microtasks, immediates, `io`). `fresh_io` gives them an `io` permit
    /// of their own.
    /// `hand_over` is the percent chance that the children become the
    /// owners of attached timers in their clusters, where `runs` own them
    /// and have created none.
    fn children(&mut self, runs: &[Run], fresh_io: bool, hand_over: u64) -> Vec<Run> {
        let hand_over = owners(runs)
            && runs.iter().all(|r| r.cluster.borrow().attached.is_empty())
            && self.rng.chance(hand_over);
        let mut out = Vec::new();
        for r in runs {
            let cb = self.cb();
            let c = r.cluster.borrow();
            let hi = c.end.max(r.hi);
            drop(c);
            if hand_over {
                r.cluster.borrow_mut().owner = Some(cb);
            }
            out.push(Run {
                counter: 1,
                lo: r.lo,
                hi,
                cluster: r.cluster.clone(),
                io: if fresh_io {
                    Rc::new(Cell::new(true))
                } else {
                    r.io.clone()
                },
                cb,
            });
        }
        out
    }

    fn name(&mut self, class: Class) -> String {
        let reuse: Vec<usize> = (0..self.names.len())
            .filter(|&i| match (self.names[i].1, class) {
                (Class::Refreshable { .. }, Class::Refreshable { .. }) => true,
                (a, b) => a == b && a != Class::Once,
            })
            .collect();
        if !reuse.is_empty() && self.rng.chance(45) {
            let i = reuse[self.rng.below(reuse.len())];
            return self.names[i].0.clone();
        }
        let prefix = match class {
            Class::Plain => 't',
            Class::Once => 'i',
            Class::Refreshable { .. } => 'r',
            Class::Immediate | Class::LightImmediate => 'm',
        };
        let name = format!("{prefix}{}", self.names.len());
        self.names.push((name.clone(), class));
        name
    }

    /// A random name for `op` (`unref` never targets a non-light
    /// immediate).
    fn any_name(&mut self, op: &str) -> String {
        let names: Vec<&String> = self
            .names
            .iter()
            .filter(|(_, c)| op != "unref" || *c != Class::Immediate)
            .map(|(n, _)| n)
            .collect();
        if names.is_empty() || self.rng.chance(10) {
            return format!("u{}", self.rng.below(3));
        }
        names[self.rng.below(names.len())].clone()
    }

    /// Finds a delay for a timer armed at `extra` ms after each run's
    /// current time, repeating `reps` times (interval runs, refreshes), so
    /// that every cluster it starts fits; reserves their windows and returns
    /// the delay (a whole number of ms if `whole`) and the runs of its body.
    #[allow(clippy::too_many_arguments)]
    fn place(
        &mut self,
        runs: &[Run],
        reps: u32,
        extra: f64,
        budget: u32,
        quiet: bool,
        fixed: Option<f64>,
        whole: bool,
    ) -> Option<(f64, Vec<Run>)> {
        let tail = f64::from(budget) + DRIFT + if quiet { IO_LATENCY } else { 0.0 };
        let windows = |d: f64| {
            let mut ws = Vec::new();
            for r in runs {
                for j in 1..=reps {
                    let j = f64::from(j);
                    let lo = r.lo + extra + j * d.trunc();
                    let hi = r.hi + extra + j * (d.trunc() + DRIFT);
                    ws.push((lo, hi, hi + tail));
                }
            }
            ws
        };
        let fits = |ws: &[(f64, f64, f64)], reserved: &[(f64, f64)]| {
            ws.iter().enumerate().all(|(i, &(lo, _, end))| {
                end <= HORIZON
                    && reserved.iter().all(|&w| apart((lo, end), w))
                    && ws[..i].iter().all(|&(l, _, e)| apart((lo, end), (l, e)))
            })
        };
        let candidates: Vec<f64> = match fixed {
            Some(d) => vec![d],
            None => {
                let start = self.rng.below(8);
                (0..32)
                    .map(|i| {
                        let d = 5.0 * (1 + (start + i) % 32) as f64;
                        match self.rng.below(100) {
                            0..=9 => d + self.rng.pick(&[1.0, 2.0, 3.0, 4.0]),
                            10..=17 => d + 0.5,
                            18..=20 => d + 0.25,
                            _ => d,
                        }
                    })
                    .map(|d| if whole { d.trunc() } else { d })
                    .collect()
            }
        };
        let d = candidates
            .into_iter()
            .find(|&d| fits(&windows(d), &self.windows))?;
        let mut body_runs = Vec::new();
        for (k, (lo, hi, end)) in windows(d).into_iter().enumerate() {
            self.windows.push((lo, end));
            let cb = self.cb();
            body_runs.push(Run {
                counter: k as u32 % reps + 1,
                lo,
                hi,
                cluster: Rc::new(RefCell::new(Cluster {
                    budget,
                    end,
                    quiet,
                    lazy_io: quiet,
                    owner: Some(cb),
                    attached: Vec::new(),
                })),
                io: Rc::new(Cell::new(true)),
                cb,
            });
        }
        Some((d, body_runs))
    }

    fn delay_text(&mut self, d: f64) -> String {
        if d.fract() == 0.0 && self.rng.chance(3) {
            format!("0{d}")
        } else {
            fmt_delay(d)
        }
    }

    /// A timeout that starts a cluster of its own; with `refresh_after` > 0,
    /// followed by `block refresh_after` and `refresh NAME`.
    fn detached(
        &mut self,
        runs: &mut [Run],
        mode: &Mode,
        refresh_after: u32,
    ) -> Option<Vec<String>> {
        if refresh_after > 0 && !self.take(runs, mode, refresh_after) {
            return None;
        }
        let refreshable = self.rng.chance(25);
        let class = if refreshable {
            let existing: Vec<(String, Class)> = self
                .names
                .iter()
                .filter(|(_, c)| matches!(c, Class::Refreshable { .. }))
                .cloned()
                .collect();
            if !existing.is_empty() && self.rng.chance(50) {
                existing[self.rng.below(existing.len())].1
            } else {
                Class::Refreshable {
                    delay: 5.0 * (2 + self.rng.below(9)) as f64,
                    max_block: self.rng.pick(&[0, 0, 5]),
                }
            }
        } else {
            Class::Plain
        };
        let (fixed, budget, quiet) = match class {
            Class::Refreshable { delay, max_block } => (Some(delay), max_block, false),
            _ => (
                None,
                self.rng.pick(&[0, 0, 5, 5, 10, 15, 20]),
                self.rng.chance(25),
            ),
        };
        let Some((d, mut body_runs)) = self.place(
            runs,
            1,
            f64::from(refresh_after),
            budget,
            quiet,
            fixed,
            false,
        ) else {
            if refresh_after > 0 {
                self.untake(runs, mode, refresh_after);
            }
            return None;
        };
        let name = match class {
            Class::Refreshable { .. } => self.refreshable_name(class),
            _ => self.name(Class::Plain),
        };
        let body_mode = Mode {
            depth: mode.depth + 1,
            callback: true,
            simple: match class {
                Class::Refreshable { max_block, .. } => Some(Rc::new(Cell::new(max_block))),
                _ => None,
            },
            light: false,
            task: None,
            timer: Some(Rc::new(Cell::new(false))),
        };
        let len = self.body_len();
        let stmts = self.body(&mut body_runs, &body_mode, len);
        let mut out = vec![format!(
            "timeout {name} {} {}",
            self.delay_text(d),
            braces(&stmts)
        )];
        if refresh_after > 0 {
            advance(runs, refresh_after);
            out.push(format!("block {refresh_after}"));
            out.push(format!("refresh {name}"));
        }
        Some(out)
    }

    fn refreshable_name(&mut self, class: Class) -> String {
        if let Some((n, _)) = self.names.iter().find(|(_, c)| *c == class)
            && self.rng.chance(60)
        {
            return n.clone();
        }
        let name = format!("r{}", self.names.len());
        self.names.push((name.clone(), class));
        name
    }

    /// A detached interval (`interval`) or a timeout that refreshes itself
    /// as the first thing of its first one or two runs.
    fn repeating(&mut self, runs: &mut [Run], mode: &Mode, interval: bool) -> Option<Vec<String>> {
        if runs.len() != 1 {
            return None;
        }
        let reps = if interval {
            1 + self.rng.below(4) as u32
        } else {
            2 + self.rng.below(2) as u32
        };
        let budget = self.rng.pick(&[0, 0, 5, 5, 10]);
        let quiet = self.rng.chance(25);
        let (d, mut body_runs) = self.place(runs, reps, 0.0, budget, quiet, None, false)?;
        let name = self.name(Class::Once);
        let body_mode = mode.timer_body();
        let mut stmts = Vec::new();
        if !interval {
            for n in 1..reps {
                stmts.push(format!("nth {n} {{ refresh {name} }}"));
            }
        }
        let len = self.body_len();
        if interval {
            let at = self.rng.below(len + 1);
            stmts = self.body(&mut body_runs, &body_mode, at);
            let clear = format!("nth {reps} {{ clear {name} }}");
            if body_runs.iter().any(|r| r.counter == reps) {
                stmts.push(clear);
            } else {
                stmts.insert(0, clear);
            }
            stmts.extend(self.body(&mut body_runs, &body_mode, len - at));
        } else {
            stmts.extend(self.body(&mut body_runs, &body_mode, len));
        }
        let word = if interval { "interval" } else { "timeout" };
        Some(vec![format!(
            "{word} {name} {} {}",
            self.delay_text(d),
            braces(&stmts)
        )])
    }

    /// A timeout that is overdue when its creator returns, thanks to the
    /// `block` after it.
    fn attached(&mut self, runs: &mut [Run], mode: &Mode) -> Option<Vec<String>> {
        if !owners(runs) {
            return None;
        }
        let (text, d, ms) = match self.rng.below(5) {
            0..=2 => (self.rng.pick(SMALL_DELAYS).to_owned(), 1.0, 5),
            3 => ("5".to_owned(), 5.0, 10),
            _ => (self.rng.pick(&["10", "15", "12.5"]).to_owned(), 0.0, 20),
        };
        let d = if d == 0.0 {
            text.parse::<f64>().unwrap_or(10.0).trunc()
        } else {
            d
        };
        if !spaced(runs, d) || !self.take(runs, mode, ms) {
            return None;
        }
        let hand_over = self.rng.chance(30);
        let mut body_runs = Vec::new();
        for r in runs.iter() {
            let cb = self.cb();
            let mut c = r.cluster.borrow_mut();
            c.attached.push((r.lo + d, d));
            if hand_over {
                c.owner = Some(cb);
                c.attached.clear();
            }
            body_runs.push(Run {
                counter: 1,
                lo: r.lo + d,
                hi: c.end.max(r.hi),
                cluster: r.cluster.clone(),
                io: r.io.clone(),
                cb,
            });
        }
        if let Some(t) = &mode.timer {
            t.set(true);
        }
        let name = self.name(Class::Plain);
        let len = self.body_len();
        let stmts = self.body(&mut body_runs, &mode.timer_body(), len);
        advance(runs, ms);
        Some(vec![
            format!("timeout {name} {text} {}", braces(&stmts)),
            format!("block {ms}"),
        ])
    }

    /// A 1 ms interval whose runs each block 5 ms, inside its creator's
    /// cluster.
    fn attached_interval(&mut self, runs: &mut [Run], mode: &Mode) -> Option<Vec<String>> {
        if runs.len() != 1 || !owners(runs) || !runs[0].cluster.borrow().attached.is_empty() {
            return None;
        }
        let reps = 1 + self.rng.below(3) as u32;
        if runs[0].cluster.borrow().budget < 5 + 5 * reps || !self.take(runs, mode, 5) {
            return None;
        }
        let r = runs[0].clone();
        r.cluster.borrow_mut().owner = None;
        let hi = r.cluster.borrow().end.max(r.hi);
        let mut body_runs: Vec<Run> = (1..=reps)
            .map(|k| Run {
                counter: k,
                lo: r.lo + 1.0 + 6.0 * f64::from(k - 1),
                hi,
                cluster: r.cluster.clone(),
                io: r.io.clone(),
                cb: 0,
            })
            .collect();
        for run in &mut body_runs {
            run.cb = self.cb();
        }
        if let Some(t) = &mode.timer {
            t.set(true);
        }
        // Each run is overdue for the next when it returns: its body reads
        // the clock only before a `block`.
        let body_mode = Mode {
            timer: Some(Rc::new(Cell::new(true))),
            ..mode.deeper()
        };
        let took = self.take(&body_runs, &body_mode, 5);
        debug_assert!(took);
        advance(&mut body_runs, 5);
        let name = self.name(Class::Once);
        let len = self.body_len();
        let at = self.rng.below(len + 1);
        let mut stmts = vec!["block 5".to_owned()];
        stmts.extend(self.body(&mut body_runs, &body_mode, at));
        let clear = format!("nth {reps} {{ clear {name} }}");
        if body_runs.iter().any(|r| r.counter == reps) {
            stmts.push(clear);
        } else {
            stmts.insert(1, clear);
        }
        stmts.extend(self.body(&mut body_runs, &body_mode, len - at));
        advance(runs, 5);
        let text = self.rng.pick(SMALL_DELAYS);
        Some(vec![
            format!("interval {name} {text} {}", braces(&stmts)),
            "block 5".to_owned(),
        ])
    }

    fn io(&mut self, runs: &mut [Run], mode: &Mode) -> Option<Vec<String>> {
        if !distinct(runs) || runs.iter().any(|r| !r.io.get()) {
            return None;
        }
        let lazy = runs.iter().all(|r| {
            let c = r.cluster.borrow();
            c.quiet && c.lazy_io
        });
        let block = !lazy || self.rng.chance(30);
        // It may be the process's first `io` (a lazy one's start is within
        // the `IO_LATENCY` its cluster allows for).
        let start = if self.io_started { 0 } else { IO_START };
        if block && !self.take(runs, mode, IO_BLOCK + start) {
            return None;
        }
        if mode.depth == 0 {
            self.io_started = true;
        }
        if !block {
            // The window allows for the latency of one `io` nobody waits for.
            for r in runs.iter() {
                r.cluster.borrow_mut().lazy_io = false;
            }
        }
        for r in runs.iter() {
            r.io.set(false);
        }
        let mut child = self.children(runs, true, 20);
        let len = self.body_len();
        let stmts = self.body(&mut child, &mode.deeper(), len);
        let mut out = vec![format!("io {}", braces(&stmts))];
        if block {
            advance(runs, IO_BLOCK);
            out.push(format!("block {IO_BLOCK}"));
        }
        for r in runs.iter_mut() {
            r.hi += f64::from(start);
        }
        Some(out)
    }

    fn refresh(&mut self, runs: &[Run]) -> Option<Vec<String>> {
        let targets: Vec<(String, f64, u32)> = self
            .names
            .iter()
            .filter_map(|(n, c)| match *c {
                Class::Refreshable { delay, max_block } => Some((n.clone(), delay, max_block)),
                _ => None,
            })
            .collect();
        if targets.is_empty() || self.rng.chance(10) {
            // Of a name never bound: a no-op.
            return self
                .rng
                .chance(20)
                .then(|| vec![format!("refresh u{}", self.rng.below(3))]);
        }
        let (name, d, max_block) = targets[self.rng.below(targets.len())].clone();
        let ws: Vec<(f64, f64)> = runs
            .iter()
            .map(|r| (r.lo + d, r.hi + d + DRIFT + f64::from(max_block) + DRIFT))
            .collect();
        let fits = ws.iter().enumerate().all(|(i, &w)| {
            w.1 <= HORIZON
                && self.windows.iter().all(|&v| apart(w, v))
                && ws[..i].iter().all(|&v| apart(w, v))
        });
        if !fits {
            return None;
        }
        self.windows.extend(ws);
        Some(vec![format!("refresh {name}")])
    }

    /// In the main stream, with the script's task rate: a `task`
    /// statement, made from the task stream.
    fn maybe_task(&mut self, runs: &mut [Run], mode: &Mode) -> Option<Vec<String>> {
        if self.in_task || self.task_rate == 0 || mode.depth >= MAX_DEPTH {
            return None;
        }
        std::mem::swap(&mut self.rng, &mut self.task_rng);
        self.in_task = true;
        let out = if self.rng.chance(self.task_rate) {
            self.task(runs, mode)
        } else {
            None
        };
        self.in_task = false;
        std::mem::swap(&mut self.rng, &mut self.task_rng);
        out
    }

    /// `task BODY`: its first poll is a microtask of the spawner's cluster;
    /// each `sleep`, `yield` or `check` in BODY moves the runs of the rest.
    /// Followed by `microtask { block N }` if BODY's first poll ends in an
    /// attached `sleep`.
    fn task(&mut self, runs: &[Run], mode: &Mode) -> Option<Vec<String>> {
        if mode.depth >= MAX_DEPTH {
            return None;
        }
        let tb = Rc::new(TaskBody {
            first: Cell::new(true),
            guard: Cell::new(0),
        });
        let body_mode = Mode {
            depth: mode.depth + 1,
            callback: false,
            simple: mode.simple.clone(),
            light: mode.light,
            task: Some(tb.clone()),
            timer: None,
        };
        // Often the owner of attached timers, so that an attached `sleep`
        // is possible.
        let mut child = self.children(runs, false, 60);
        let len = self.rng.pick(&[1, 2, 2, 3, 3, 4, 4, 5, 6]);
        let mut stmts = Vec::new();
        let mut done = 0;
        if mode.simple.is_none() && owners(&child) && self.rng.chance(65) {
            // An attached `sleep` after a statement or two.
            done = self.rng.below(3).min(len);
            stmts = self.body(&mut child, &body_mode, done);
            if tb.first.get()
                && !child.is_empty()
                && self.left > 0
                && let Some(v) = self.attached_sleep(&mut child, &body_mode, &tb)
            {
                self.left -= 1;
                stmts.extend(v);
            }
        }
        stmts.extend(self.body(&mut child, &body_mode, len - done));
        let mut out = vec![format!("task {}", braces(&stmts))];
        if tb.guard.get() > 0 {
            out.push(format!("microtask {{ block {} }}", tb.guard.get()));
        }
        Some(out)
    }

    /// `sleep MS`: a timeout of MS ms whose callback is the rest of the
    /// task body; attached, or else detached (a cluster of its own).
    fn sleep(&mut self, runs: &mut Vec<Run>, mode: &Mode) -> Option<Vec<String>> {
        let tb = mode.task.clone()?;
        if tb.first.get()
            && self.rng.chance(75)
            && let Some(v) = self.attached_sleep(runs, mode, &tb)
        {
            return Some(v);
        }
        let budget = self.rng.pick(&[0, 0, 5, 5, 10, 15]);
        let quiet = self.rng.chance(20);
        let (d, body_runs) = self.place(runs, 1, 0.0, budget, quiet, None, true)?;
        tb.first.set(false);
        *runs = body_runs;
        Some(vec![format!("sleep {d}")])
    }

    /// A `sleep` at the end of the task's first poll, made overdue by the
    /// `microtask { block N }` queued right after the task (the next
    /// microtask after this poll): an attached timer of the task, which
    /// must own the cluster's attached timers. The rest of the body runs
    /// when it fires, in the same cluster, and owns them if handed over.
    fn attached_sleep(
        &mut self,
        runs: &mut Vec<Run>,
        mode: &Mode,
        tb: &TaskBody,
    ) -> Option<Vec<String>> {
        if !owners(runs) {
            return None;
        }
        let (ms, d, block) = self
            .rng
            .pick(&[(0, 1.0, 5), (0, 1.0, 5), (1, 1.0, 5), (5, 5.0, 10)]);
        if !spaced(runs, d) || !self.take(runs, mode, block) {
            return None;
        }
        tb.first.set(false);
        tb.guard.set(block);
        let hand_over = self.rng.chance(50);
        let mut next = Vec::new();
        for r in runs.iter() {
            let cb = self.cb();
            let mut c = r.cluster.borrow_mut();
            c.attached.push((r.lo + d, d));
            if hand_over {
                c.owner = Some(cb);
                c.attached.clear();
            } else {
                // The task's first poll, the owner, has returned.
                c.owner = None;
            }
            next.push(Run {
                counter: 1,
                lo: r.lo + d,
                hi: c.end.max(r.hi),
                cluster: r.cluster.clone(),
                io: r.io.clone(),
                cb,
            });
        }
        *runs = next;
        Some(vec![format!("sleep {ms}")])
    }

    fn nth(&mut self, runs: &mut Vec<Run>, mode: &Mode) -> Option<Vec<String>> {
        let mut counters: Vec<u32> = runs.iter().map(|r| r.counter).collect();
        counters.dedup();
        let n = if self.rng.chance(8) {
            counters.iter().max().copied().unwrap_or(1) + 1
        } else {
            counters[self.rng.below(counters.len())]
        };
        // An `nth` body is part of its callback's body.
        let body_mode = Mode {
            timer: mode.timer.clone(),
            ..mode.deeper()
        };
        let idx: Vec<usize> = (0..runs.len()).filter(|&i| runs[i].counter == n).collect();
        let len = self.body_len().max(1);
        if idx.is_empty() {
            if mode.simple.is_some() {
                // A re-run of a refreshable timeout may reach it: keep it
                // within the body's block allowance (checked by `take`).
                let mut sub = runs.clone();
                let stmts = self.body(&mut sub, &body_mode, len);
                return Some(vec![format!("nth {n} {}", braces(&stmts))]);
            }
            return Some(vec![format!("nth {n} {{ log {} }}", self.label('d'))]);
        }
        let mut sub: Vec<Run> = idx.iter().map(|&i| runs[i].clone()).collect();
        let stmts = self.body(&mut sub, &body_mode, len);
        if sub.is_empty() {
            runs.retain(|r| r.counter != n);
        } else {
            for (&i, s) in idx.iter().zip(&sub) {
                runs[i].lo = s.lo;
                runs[i].hi = s.hi;
            }
        }
        Some(vec![format!("nth {n} {}", braces(&stmts))])
    }
}

#[cfg(test)]
mod tests {
    use timerloop::script::parse::{Stmt, parse};
    use timerloop::script::run::run_to_lines;

    use super::*;

    #[test]
    fn generation_is_deterministic_and_varied() {
        assert_eq!(generate(42, 25), generate(42, 25));
        assert_ne!(generate(42, 25), generate(43, 25));
    }

    /// Tasks are a weighted choice: some scripts have none, and the others
    /// use every task statement, attached `sleep`s included.
    #[test]
    fn tasks_come_and_go() {
        let (mut with, mut without) = (0, 0);
        let mut seen = [0; 6];
        let words = ["sleep", "yield", "check", "throw", "guard", "nested"];
        for seed in 0..300 {
            let src = generate(seed, 40);
            let script = parse("g.tl", &src).unwrap();
            fn walk(body: &[Stmt], in_task: bool, seen: &mut [usize; 6]) -> bool {
                let mut any = false;
                for (i, s) in body.iter().enumerate() {
                    match s {
                        Stmt::Sleep(_) => seen[0] += 1,
                        Stmt::Yield => seen[1] += 1,
                        Stmt::Check => seen[2] += 1,
                        Stmt::Throw(_) if in_task => seen[3] += 1,
                        Stmt::Microtask(b)
                            if matches!(&b[..], [Stmt::Block(_)])
                                && i > 0
                                && matches!(body[i - 1], Stmt::Task(_)) =>
                        {
                            seen[4] += 1;
                        }
                        _ => {}
                    }
                    if let Stmt::Task(b) = s {
                        any = true;
                        if in_task {
                            seen[5] += 1;
                        }
                        walk(b, true, seen);
                    } else if let Some(b) = s.body() {
                        // A callback in a task body is no task body.
                        any |= walk(b, false, seen);
                    }
                }
                any
            }
            if walk(&script.body, false, &mut seen) {
                with += 1;
            } else {
                without += 1;
            }
        }
        assert!(
            with > 150 && without > 40,
            "{with} with tasks, {without} without"
        );
        for (w, n) in words.iter().zip(seen) {
            assert!(n >= 10, "only {n} {w}");
        }
    }

    #[test]
    fn generated_scripts_parse_and_end() {
        for seed in 0..300 {
            let src = generate(seed, 30);
            let script = parse("g.tl", &src).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
            run_to_lines(&script, true).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
        }
    }
}
