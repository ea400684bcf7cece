//! The interpreter: runs a parsed [`Script`] on an [`EventLoop`].
//!
//! Each statement maps onto the crate's public API exactly as the Node
//! translator (the repository's `tl.js`) maps it onto Node's, so that both
//! print the same lines:
//!
//! | statement | here |
//! |---|---|
//! | `timeout`/`interval` | [`EventLoop::set_timeout`] / [`EventLoop::set_interval`], then [`EventLoop::keep_timeout`] (a Node `Timeout` object outlives its firing and clearing) |
//! | `immediate` | [`EventLoop::set_immediate`] |
//! | `tick` / `microtask` | [`EventLoop::next_tick`] / [`EventLoop::queue_microtask`] |
//! | `io` | an [`EventLoop::completion`], completed at once, so the body runs in the next poll phase |
//! | `block MS` | [`EventLoop::block`]: busy-wait, or advance the virtual clock |
//! | `throw WORD` | the callback returns `Err(WORD)`; in a task body, the task fails (a panic, reported as an unhandled rejection) |
//! | `task` | [`EventLoop::spawn`] of the body as an async block (its first poll is a microtask, as `queueMicrotask(async () => ...)`) |
//! | `sleep MS` | [`time::sleep`](crate::time::sleep) of MS ms, coerced as Node coerces it (0 is 1 ms) |
//! | `yield` | [`task::yield_now`](crate::task::yield_now): one microtask hop (`await null`) |
//! | `check` | [`time::immediate`](crate::time::immediate) (`await setImmediate()`) |
//!
//! Every callback made by a `timeout`/`interval`/`immediate`/`tick`/
//! `microtask`/`io` statement counts its own runs, which `nth` reads.
//!
//! How the callbacks are stored is [`Callbacks`]: by default each owns its
//! body and the script's state, and every timer is kept, as Node's
//! `Timeout` objects outlive their firing. [`Callbacks::Plain`] runs the
//! same statements with callbacks of one word and no drop glue, and keeps
//! only the timers whose names a `refresh` or `hasref` mentions, so that
//! the other timeouts take the loop's fast path for plain timers, which
//! the default never reaches; the conformance tests and the differential
//! fuzzer run every script both ways.
//!
//! # Examples
//!
//! ```
//! use std::{cell::RefCell, rc::Rc};
//! use timerloop::{EventLoop, script::{parse::parse, run::run}};
//! let script = parse("t.tl", "timeout a 5 { log a tick { log t } }\nlog main\n").unwrap();
//! let out = Rc::new(RefCell::new(Vec::new()));
//! let o = out.clone();
//! let mut lp = EventLoop::with_virtual_clock();
//! run(&script, &mut lp, move |line| o.borrow_mut().push(line.to_string())).unwrap();
//! lp.run().unwrap();
//! assert_eq!(*out.borrow(), ["main", "a", "t"]);
//! ```

use std::cell::RefCell;
use std::rc::Rc;

use std::time::Duration;

use super::parse::{Body, Script, Stmt};
use crate::timers::coerce;
use crate::{BoxError, Delay, Error, EventLoop, Immediate, Timeout};

/// What a name is bound to.
#[derive(Clone, Copy, Debug)]
enum Binding {
    Timer(Timeout),
    Immediate(Immediate),
}

struct State {
    names: Vec<Option<Binding>>,
    display: Vec<String>,
    out: Box<dyn FnMut(&str)>,
    /// [`Callbacks::Plain`]: callbacks are entries of [`PLAIN`].
    plain: bool,
    /// By name: whether a `refresh` or `hasref` mentions it, which a plain
    /// run keeps the timer for (Node's `Timeout` outlives its firing: a
    /// refresh re-arms a fired one, and `hasRef` still answers).
    keep: Vec<bool>,
}

type Shared = Rc<RefCell<State>>;

/// How [`run_with`] stores the callbacks a script makes. Either way, a
/// script prints the same lines.
///
/// ```
/// use timerloop::script::{parse::parse, run::{Callbacks, run_to_lines_with}};
/// let s = parse("c.tl", "timeout a 1 { log a } timeout b 1 { log b refresh a }").unwrap();
/// assert_eq!(Callbacks::default(), Callbacks::Owned);
/// let owned = run_to_lines_with(&s, true, Callbacks::Owned).unwrap();
/// let plain = run_to_lines_with(&s, true, Callbacks::Plain).unwrap();
/// assert_eq!(owned, ["a", "b", "a"]);
/// assert_eq!(plain, owned);
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Callbacks {
    /// Each callback owns its body and the script's state (two reference
    /// counts), and every timer is kept ([`EventLoop::keep_timeout`]): a
    /// Node `Timeout` object outlives its firing and clearing.
    #[default]
    Owned,
    /// Each callback is one word with no drop glue (an index into a table
    /// that lives as long as the run, on the running thread), and a timer
    /// is kept only if a `refresh` or `hasref` statement mentions its
    /// name: what a script prints is the same, and the loop runs the other
    /// timeouts on its path for plain timers. After the run returns, such
    /// a callback has no table: if the loop runs one then, it fails
    /// ("the script's run has ended").
    Plain,
}

/// One callback of a plain run: its body, its runs so far.
struct PlainEntry {
    body: Body,
    runs: u64,
}

/// A plain run's callbacks and state.
struct PlainTable {
    /// Which plain run this is, of the thread's: a callback of another run
    /// (one that outlived its run, unrefed, and runs in a later one on the
    /// same loop) finds another number here, not its own entry.
    run: u32,
    state: Shared,
    entries: Vec<PlainEntry>,
}

thread_local! {
    /// The plain run on this thread, if any (see [`Callbacks::Plain`]).
    static PLAIN: RefCell<Option<PlainTable>> = const { RefCell::new(None) };
    /// The number of the thread's next plain run.
    static PLAIN_RUNS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Puts back the plain table that was there before a run, when it ends.
struct RestorePlain(Option<PlainTable>);

impl Drop for RestorePlain {
    fn drop(&mut self) {
        let before = self.0.take();
        PLAIN.with(|p| *p.borrow_mut() = before);
    }
}

/// Runs `script` on `lp` to the end, sending each printed line to `out`.
///
/// Installs an uncaught-error handler that prints `uncaught MESSAGE` (as the
/// Node translator's `process.on('uncaughtException')` does) and a warning
/// handler that writes warnings to standard error. The script's top level
/// runs through [`EventLoop::enter`], as Node's main module.
///
/// # Errors
///
/// What [`EventLoop::enter`] and [`EventLoop::run`] return; with the
/// handler installed: [`Error::Reentrant`] (if `lp` is already running),
/// [`Error::Poll`] (if the OS refuses to wait on its poller),
/// [`Error::ThreadExiting`], and [`Error::Uncaught`] for a failure kept
/// from an earlier run or a handler that panicked (`out` panicking).
///
/// # Examples
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use timerloop::script::{parse::parse, run::run};
/// use timerloop::EventLoop;
///
/// let script = parse("example.tl", "
///     timeout a 10 { log a tick { log a-tick } microtask { log a-micro } }
///     timeout b 10 { log b }
/// ").unwrap();
/// let lines = Rc::new(RefCell::new(Vec::new()));
/// let l = lines.clone();
/// let mut lp = EventLoop::with_virtual_clock();
/// run(&script, &mut lp, move |s| l.borrow_mut().push(s.to_owned())).unwrap();
/// assert_eq!(*lines.borrow(), ["a", "a-tick", "a-micro", "b"]);
/// ```
pub fn run(
    script: &Script,
    lp: &mut EventLoop,
    out: impl FnMut(&str) + 'static,
) -> Result<(), Error> {
    run_with(script, lp, out, Callbacks::Owned)
}

/// [`run`], with its callbacks stored as `callbacks` says.
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use timerloop::script::{parse::parse, run::{Callbacks, run_with}};
/// use timerloop::EventLoop;
///
/// let script = parse("plain.tl", "
///     timeout a 10 { log a refresh b }
///     timeout b 10 { log b nth 1 { log b-again } }
/// ").unwrap();
/// let lines = Rc::new(RefCell::new(Vec::new()));
/// let l = lines.clone();
/// let mut lp = EventLoop::with_virtual_clock();
/// run_with(&script, &mut lp, move |s| l.borrow_mut().push(s.to_owned()), Callbacks::Plain)
///     .unwrap();
/// // `b` is refreshed before it runs, so it runs once, at 20 ms.
/// assert_eq!(*lines.borrow(), ["a", "b", "b-again"]);
/// ```
///
/// # Errors
///
/// As [`run`].
pub fn run_with(
    script: &Script,
    lp: &mut EventLoop,
    out: impl FnMut(&str) + 'static,
    callbacks: Callbacks,
) -> Result<(), Error> {
    drive(script, lp, out, callbacks, EventLoop::run)
}

/// [`run`], with the loop run until loop time `ms`
/// ([`EventLoop::run_until`]) instead of to its end: a script that never
/// ends by itself (an interval never cleared, a timeout that refreshes
/// itself) ends there, as a test needs. On a virtual clock every timer
/// due by `ms` fires at its own time and the run takes no real time.
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use timerloop::script::{parse::parse, run::run_until};
/// use timerloop::EventLoop;
///
/// let script = parse("forever.tl", "interval i 10 { log tick }").unwrap();
/// let lines = Rc::new(RefCell::new(Vec::new()));
/// let l = lines.clone();
/// let mut lp = EventLoop::with_virtual_clock();
/// run_until(&script, &mut lp, move |s| l.borrow_mut().push(s.to_owned()), 35).unwrap();
/// assert_eq!(*lines.borrow(), ["tick"; 3]);
/// assert_eq!(lp.now(), 35);
/// ```
///
/// # Errors
///
/// As [`run`].
pub fn run_until(
    script: &Script,
    lp: &mut EventLoop,
    out: impl FnMut(&str) + 'static,
    ms: u64,
) -> Result<(), Error> {
    drive(script, lp, out, Callbacks::Owned, |lp| lp.run_until(ms))
}

/// Sets the script up on `lp` and runs its top level, then `run`s the
/// loop, with the plain callbacks' table in place throughout.
fn drive(
    script: &Script,
    lp: &mut EventLoop,
    out: impl FnMut(&str) + 'static,
    callbacks: Callbacks,
    run: impl FnOnce(&mut EventLoop) -> Result<(), Error>,
) -> Result<(), Error> {
    // Nothing is touched, no line printed, if the loop runs already.
    if lp.is_running_or_nested() {
        return Err(Error::Reentrant);
    }
    let plain = callbacks == Callbacks::Plain;
    // A name a statement uses past the script's list (a `Script` built by
    // hand, not by `parse`) gets a slot too, shown as `#N`.
    let slots = script
        .names
        .len()
        .max(max_name(&script.body).map_or(0, |n| n + 1));
    let mut keep = vec![false; slots];
    if plain {
        mark_kept(&script.body, &mut keep);
    }
    let mut display: Vec<String> = script.names.iter().map(|n| n.name.clone()).collect();
    display.extend((display.len()..slots).map(|i| format!("#{i}")));
    let state: Shared = Rc::new(RefCell::new(State {
        names: vec![None; slots],
        display,
        out: Box::new(out),
        plain,
        keep,
    }));
    let _restore = plain.then(|| {
        let run = PLAIN_RUNS.with(|n| {
            let run = n.get();
            n.set(run.wrapping_add(1));
            run
        });
        let table = PlainTable {
            run,
            state: state.clone(),
            entries: Vec::new(),
        };
        RestorePlain(PLAIN.with(|p| p.borrow_mut().replace(table)))
    });
    let s = state.clone();
    lp.set_uncaught_handler(move |_, err| {
        let line = format!("uncaught {}", err.message());
        (s.borrow_mut().out)(&line);
    });
    lp.set_warning_handler(|w| eprintln!("(timerloop) {w}"));
    let body = script.body.clone();
    let s = state.clone();
    lp.enter(move |lp| exec(&body, 0, lp, &s))?;
    run(lp)
}

/// Runs `script` on a fresh loop (virtual clock if `virtual_clock`) and
/// returns the lines it printed.
///
/// ```
/// use timerloop::script::{parse::parse, run::run_to_lines};
/// let s = parse("x.tl", "immediate i { log i } timeout t 0 { log t }").unwrap();
/// // From the main body the order of these two depends on the clock (as in
/// // Node, §12.1); on a virtual clock, the timer is not due yet.
/// assert_eq!(run_to_lines(&s, true).unwrap(), ["i", "t"]);
/// ```
///
/// # Errors
///
/// As [`run`].
pub fn run_to_lines(script: &Script, virtual_clock: bool) -> Result<Vec<String>, Error> {
    run_to_lines_with(script, virtual_clock, Callbacks::Owned)
}

/// Runs `script` on a fresh loop on a virtual clock until loop time `ms`
/// ([`run_until`]) and returns the lines it printed: bounded, whatever
/// the script does.
///
/// ```
/// use timerloop::script::{parse::parse, run::run_to_lines_until};
/// let s = parse("x.tl", "timeout a 5 { log a refresh a }").unwrap();
/// assert_eq!(run_to_lines_until(&s, 22).unwrap(), ["a"; 4]);
/// ```
///
/// # Errors
///
/// As [`run`].
pub fn run_to_lines_until(script: &Script, ms: u64) -> Result<Vec<String>, Error> {
    lines_of(EventLoop::with_virtual_clock(), |lp, out| {
        run_until(script, lp, out, ms)
    })
}

/// The lines `run` prints on `lp`, given the sink that collects them,
/// once the loop (and with it every callback holding the sink) is gone.
fn lines_of(
    mut lp: EventLoop,
    run: impl FnOnce(&mut EventLoop, Box<dyn FnMut(&str)>) -> Result<(), Error>,
) -> Result<Vec<String>, Error> {
    let lines = Rc::new(RefCell::new(Vec::new()));
    let l = lines.clone();
    run(
        &mut lp,
        Box::new(move |s| l.borrow_mut().push(s.to_owned())),
    )?;
    drop(lp);
    Ok(Rc::try_unwrap(lines)
        .map(RefCell::into_inner)
        .unwrap_or_else(|l| l.borrow().clone()))
}

/// [`run_to_lines`], with the callbacks stored as `callbacks` says.
///
/// ```
/// use timerloop::script::{parse::parse, run::{Callbacks, run_to_lines_with}};
/// let s = parse("x.tl", "timeout t 1 { log t } timeout u 1 { log u clear t }").unwrap();
/// for c in [Callbacks::Owned, Callbacks::Plain] {
///     assert_eq!(run_to_lines_with(&s, true, c).unwrap(), ["t", "u"]);
/// }
/// ```
///
/// # Errors
///
/// As [`run`].
pub fn run_to_lines_with(
    script: &Script,
    virtual_clock: bool,
    callbacks: Callbacks,
) -> Result<Vec<String>, Error> {
    let lp = if virtual_clock {
        EventLoop::with_virtual_clock()
    } else {
        EventLoop::new()
    };
    lines_of(lp, |lp, out| run_with(script, lp, out, callbacks))
}

fn print(state: &Shared, line: &str) {
    (state.borrow_mut().out)(line);
}

/// A callback that counts its runs and executes `body` each time.
fn callback(
    body: &super::parse::Body,
    state: &Shared,
) -> impl FnMut(&mut EventLoop) -> Result<(), BoxError> + 'static {
    let body = body.clone();
    let state = state.clone();
    let mut runs = 0u64;
    move |lp| {
        runs += 1;
        exec(&body, runs, lp, &state)
    }
}

/// A plain run's callback (see [`Callbacks::Plain`]): its run's number
/// and the index of its entry, one word with no drop glue.
fn plain_callback(
    body: &super::parse::Body,
) -> impl FnMut(&mut EventLoop) -> Result<(), BoxError> + Copy + 'static {
    let (run, index) = PLAIN.with(|p| {
        let mut p = p.borrow_mut();
        let table = p.as_mut().expect("a plain run's table");
        table.entries.push(PlainEntry {
            body: body.clone(),
            runs: 0,
        });
        let index = u32::try_from(table.entries.len() - 1).expect("fewer than 2^32 callbacks");
        (table.run, index)
    });
    move |lp| run_plain(run, index, lp)
}

/// Runs the plain callback `index` of run `run`: counts the run, then
/// executes its body with no borrow of the table held (the body may make
/// callbacks). Its run over (no table, or another run's), it fails.
fn run_plain(run: u32, index: u32, lp: &mut EventLoop) -> Result<(), BoxError> {
    let taken = PLAIN.with(|p| {
        let mut p = p.borrow_mut();
        let table = p.as_mut().filter(|t| t.run == run)?;
        let entry = table.entries.get_mut(index as usize)?;
        entry.runs += 1;
        Some((entry.body.clone(), entry.runs, table.state.clone()))
    });
    let Some((body, runs, state)) = taken else {
        return Err("the script's run has ended".into());
    };
    exec(&body, runs, lp, &state)
}

/// The largest name index a statement of `body` (or of a body inside it)
/// uses, if any.
fn max_name(body: &[Stmt]) -> Option<usize> {
    body.iter()
        .filter_map(|stmt| stmt.name().max(stmt.body().and_then(|b| max_name(b))))
        .max()
}

/// Marks the names a `refresh` or `hasref` mentions, in `body` and every
/// body inside it: a plain run keeps those timers.
fn mark_kept(body: &[Stmt], keep: &mut [bool]) {
    for stmt in body {
        if let Stmt::Refresh(name) | Stmt::HasRef(name) = stmt {
            keep[*name] = true;
        } else if let Some(body) = stmt.body() {
            mark_kept(body, keep);
        }
    }
}

/// Sets the timer a `timeout` or `interval` statement makes.
fn set_timer<F>(lp: &mut EventLoop, interval: bool, delay: Delay, cb: F) -> Timeout
where
    F: FnMut(&mut EventLoop) -> Result<(), BoxError> + 'static,
{
    if interval {
        lp.set_interval(delay, cb)
    } else {
        lp.set_timeout(delay, cb)
    }
}

/// What an `immediate`, `tick`, `microtask` or `io` statement queues.
#[derive(Clone, Copy)]
enum Queue {
    Immediate,
    Tick,
    Microtask,
    Io,
}

/// Queues a callback running `body` as `kind` says, stored as the run's
/// [`Callbacks`] say; an immediate's handle is returned.
fn queue_body(
    lp: &mut EventLoop,
    state: &Shared,
    kind: Queue,
    body: &super::parse::Body,
) -> Option<Immediate> {
    if state.borrow().plain {
        queue(lp, kind, plain_callback(body))
    } else {
        queue(lp, kind, callback(body, state))
    }
}

/// Queues `cb` as `kind` says; an immediate's handle is returned.
fn queue<F>(lp: &mut EventLoop, kind: Queue, mut cb: F) -> Option<Immediate>
where
    F: FnMut(&mut EventLoop) -> Result<(), BoxError> + 'static,
{
    match kind {
        Queue::Immediate => return Some(lp.set_immediate(move |lp| cb(lp))),
        Queue::Tick => lp.next_tick(move |lp| cb(lp)),
        Queue::Microtask => lp.queue_microtask(move |lp| cb(lp)),
        // Complete at once: the body runs in the next poll phase, as
        // Node's `fs.stat` on its warm threadpool is done by then (a
        // thread spawned to complete it was often not, and Node's
        // order then depended on the race).
        Queue::Io => lp.completion(move |lp| cb(lp)).complete(),
    }
    None
}

fn exec(body: &[Stmt], runs: u64, lp: &mut EventLoop, state: &Shared) -> Result<(), BoxError> {
    for stmt in body {
        step(stmt, runs, lp, state)?;
    }
    Ok(())
}

fn binding(state: &Shared, name: usize) -> Option<Binding> {
    state.borrow().names[name]
}

fn bind(state: &Shared, name: usize, b: Binding) {
    state.borrow_mut().names[name] = Some(b);
}

fn step(stmt: &Stmt, runs: u64, lp: &mut EventLoop, state: &Shared) -> Result<(), BoxError> {
    match stmt {
        Stmt::Log(word) => print(state, word),
        Stmt::Timeout { name, delay, body } | Stmt::Interval { name, delay, body } => {
            let delay = Delay::from_ms(*delay);
            let interval = matches!(stmt, Stmt::Interval { .. });
            let (plain, keep) = {
                let s = state.borrow();
                (s.plain, s.keep[*name])
            };
            let t = if plain {
                set_timer(lp, interval, delay, plain_callback(body))
            } else {
                set_timer(lp, interval, delay, callback(body, state))
            };
            if !plain || keep {
                // A fresh handle is never stale.
                let _ = lp.keep_timeout(t);
            }
            bind(state, *name, Binding::Timer(t));
        }
        Stmt::Immediate { name, body } => {
            if let Some(i) = queue_body(lp, state, Queue::Immediate, body) {
                bind(state, *name, Binding::Immediate(i));
            }
        }
        Stmt::Tick(body) => {
            queue_body(lp, state, Queue::Tick, body);
        }
        Stmt::Microtask(body) => {
            queue_body(lp, state, Queue::Microtask, body);
        }
        Stmt::Io(body) => {
            queue_body(lp, state, Queue::Io, body);
        }
        Stmt::Clear(name) => match binding(state, *name) {
            Some(Binding::Timer(t)) => {
                let _ = lp.clear_timeout(t);
            }
            Some(Binding::Immediate(i)) => {
                let _ = lp.clear_immediate(i);
            }
            None => {}
        },
        Stmt::Refresh(name) => {
            if let Some(Binding::Timer(t)) = binding(state, *name) {
                let _ = lp.refresh(t);
            }
        }
        Stmt::Ref(name) | Stmt::Unref(name) => {
            let on = matches!(stmt, Stmt::Ref(_));
            match binding(state, *name) {
                Some(Binding::Timer(t)) => {
                    let _ = if on {
                        lp.ref_timeout(t)
                    } else {
                        lp.unref_timeout(t)
                    };
                }
                Some(Binding::Immediate(i)) => {
                    let _ = if on {
                        lp.ref_immediate(i)
                    } else {
                        lp.unref_immediate(i)
                    };
                }
                None => {}
            }
        }
        Stmt::HasRef(name) => {
            let value = match binding(state, *name) {
                None => "unbound".to_owned(),
                Some(Binding::Timer(t)) => lp.timeout_has_ref(t).to_string(),
                Some(Binding::Immediate(i)) => lp.immediate_has_ref(i).to_string(),
            };
            let line = format!("hasref {} {value}", state.borrow().display[*name]);
            print(state, &line);
        }
        Stmt::Block(ms) => lp.block(*ms),
        Stmt::Throw(word) => return Err(word.to_string().into()),
        Stmt::Nth(n, body) => {
            if runs == *n {
                exec(body, runs, lp, state)?;
            }
        }
        Stmt::Task(body) => {
            lp.spawn(task(body.clone(), state.clone()));
        }
        // The parser allows these only in task bodies, which `task` runs;
        // a `Script` built by hand may have them anywhere.
        Stmt::Sleep(_) | Stmt::Yield | Stmt::Check => {
            return Err("an await (sleep, yield, check) outside a task body".into());
        }
    }
    Ok(())
}

/// A task body: `async () => { BODY }`, whose awaits are exactly its
/// `sleep`, `yield` and `check` statements. Every other statement runs as
/// anywhere else, with the loop lent by [`EventLoop::with_current`].
async fn task(body: Body, state: Shared) {
    for stmt in body.iter() {
        match stmt {
            Stmt::Sleep(ms) => {
                // timers/promises' setTimeout coerces as setTimeout does.
                let (ms, warning) = coerce(*ms as f64);
                if let Some(w) = warning {
                    EventLoop::with_current(|lp| lp.warn(w));
                }
                crate::time::sleep(Duration::from_millis(ms as u64)).await;
            }
            Stmt::Yield => crate::task::yield_now().await,
            Stmt::Check => crate::time::immediate().await,
            other => {
                if let Err(e) = EventLoop::with_current(|lp| step(other, 0, lp, &state)) {
                    // A throw rejects the task's promise, which nothing
                    // handles: the task fails, detached, and the loop
                    // reports it as Node reports an unhandled rejection.
                    // (resume_unwind: no panic hook, no noise on stderr.)
                    std::panic::resume_unwind(Box::new(e.to_string()));
                }
            }
        }
    }
}
