//! Node.js 20 timers on one native timer handle of the [`uv`]
//! loop: timeouts, intervals, immediates, `nextTick` and microtasks.
//!
//! # The data structure
//!
//! As in Node's `lib/internal/timers.js`, timeouts are grouped by their
//! duration, truncated to whole milliseconds. Each duration has one FIFO
//! list; within a list, append order is expiry order, because every entry
//! has the same duration and start times never decrease. The lists sit in
//! a min-heap ordered by `(expiry, list id)` (4-ary; Node's is binary,
//! which orders the same since keys are unique), and only the heap's root
//! decides when the single native timer fires:
//!
//! ```text
//!  map (IndexMap: duration ms -> list)          heap of lists by (expiry, id)
//!  ┌────────┬──────────────────────────────┐        ┌──────────────┐
//!  │  10 ms │ TimersList { expiry, id }     │◄───────┤ root: 10 ms  │── native uv timer
//!  │        │  oldest ◄─► T ◄─► T ◄─► newest│        ├──────┬───────┤   armed for root.expiry
//!  ├────────┼──────────────────────────────┤        │ 50ms │ 1000ms│
//!  │  50 ms │ TimersList  T ◄─► T           │◄───────┤      │       │
//!  ├────────┼──────────────────────────────┤        └──────┴───────┘
//!  │1000 ms │ TimersList  T                 │◄───────────────┘
//!  └────────┴──────────────────────────────┘
//!   T = a timer in the slab; list links are slab keys
//! ```
//!
//! Inserting into an existing list, clearing, and refreshing are O(1);
//! only a list's creation, expiry or reschedule touches the heap. When the
//! native timer fires, `processTimers` takes one frozen `now` and runs every
//! due list, oldest timer first; a list whose oldest timer is not yet due is
//! rescheduled to `max(start + ms, now + 1)` with a **new** list id, so it
//! loses ties to lists that already exist. The return value re-arms the
//! native timer (`max(d, 1)` ms ahead) and refs it while any refed timeout
//! is pending.
//!
//! # Where callbacks run, and what drains between them
//!
//! - timeouts and intervals: in the loop's timers phase;
//! - immediates: in the check phase, a batch at a time (immediates added
//!   during a batch wait for the next one);
//! - I/O completions: in the poll phase.
//!
//! The `nextTick` queue, then the microtask queue, drain between timers,
//! between lists, between immediates, and after every callback the loop
//! makes (a timers run, an immediate batch, an I/O callback, the main body).
//! They never drain before the first timer of a run or the first immediate
//! of a batch.
//!
//! # Errors
//!
//! A callback may return an error or panic. With an uncaught-error handler
//! ([`EventLoop::set_uncaught_handler`]) the loop reports it and goes on
//! exactly as Node does with a `process.on('uncaughtException')` handler:
//! intervals keep repeating, the remaining timers due in that run run with
//! the same `now`, and they run before the ticks queued by the failing
//! callback. Without a handler, [`EventLoop::run`] stops right after the
//! failing callback and returns the error; the loop stays consistent, and
//! running it again resumes where it stopped.

mod coerce;
mod error;
mod immediate;
mod ticks;
mod timeout;

pub use coerce::{Delay, TIMEOUT_MAX, Warning};
pub use error::{BoxError, CallbackError, CallbackKind, CallbackResult, Cause, Error, TimerError};
pub use immediate::Immediate;
pub use timeout::Timeout;

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::uv::{
    self, Clock, Completion, Host, Loop, Readiness, RunMode, SystemClock, VirtualClock,
};

/// How a failure travels up to the boundary that reports it (the C++ side
/// of Node): either still to be reported, or already recorded as fatal.
#[derive(Debug)]
pub(crate) enum Thrown {
    Error(CallbackError),
    Fatal,
}

pub(crate) type Flow = Result<(), Thrown>;

type UncaughtHandler = Box<dyn FnMut(&mut EventLoop, CallbackError)>;
/// A stored one-shot callback (ticks, microtasks, immediates).
pub(crate) type OnceFn = Box<dyn FnOnce(&mut EventLoop) -> Result<(), BoxError>>;
type WarningHandler = Box<dyn FnMut(&Warning)>;

static NEXT_LOOP_ID: AtomicU32 = AtomicU32::new(1);

/// A single-threaded event loop with Node.js 20's timers.
///
/// Callbacks receive `&mut EventLoop`, so they can schedule, clear and
/// refresh timers. Code that runs outside any callback (before
/// [`run`](Self::run)) plays the part of Node's main script: ticks and
/// microtasks it queues drain when the loop starts.
///
/// # Examples
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use timerloop::EventLoop;
///
/// let log = Rc::new(RefCell::new(Vec::new()));
/// let mut lp = EventLoop::with_virtual_clock();
/// let l = log.clone();
/// lp.set_timeout(10, move |lp| {
///     l.borrow_mut().push("a");
///     let l2 = l.clone();
///     lp.next_tick(move |_| l2.borrow_mut().push("a-tick"));
/// });
/// let l = log.clone();
/// lp.set_timeout(10, move |_| l.borrow_mut().push("b"));
/// let l = log.clone();
/// lp.set_immediate(move |_| l.borrow_mut().push("immediate"));
/// lp.run().unwrap();
/// assert_eq!(*log.borrow(), ["immediate", "a", "a-tick", "b"]);
/// assert_eq!(lp.now(), 10); // virtual time jumped straight to the timers
/// ```
pub struct EventLoop {
    uv: Loop<EventLoop>,
    id: u32,
    virtual_clock: Option<VirtualClock>,
    timers: timeout::Timers,
    immediates: immediate::Immediates,
    ticks: ticks::Ticks,
    /// Nesting of callback scopes (Node's InternalCallbackScope).
    depth: u32,
    uncaught: Option<UncaughtHandler>,
    warn: Option<WarningHandler>,
    fatal: Option<CallbackError>,
}

impl Host for EventLoop {
    fn uv(&mut self) -> &mut Loop<Self> {
        &mut self.uv
    }
}

impl fmt::Debug for EventLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventLoop")
            .field("now", &self.now())
            .field("stats", &self.stats())
            .field("uv", &self.uv)
            .finish_non_exhaustive()
    }
}

/// Counts of what the loop holds, for tests and leak checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Timeouts and intervals in storage (pending, running or retained).
    pub timers: usize,
    /// Duration lists in the map.
    pub lists: usize,
    /// Lists in the heap (equal to `lists`, unless an unrefed list emptied
    /// by `clear` is waiting to expire, as in Node).
    pub queued_lists: usize,
    /// Refed, live timeouts (Node's `timeoutInfo[0]`).
    pub refed_timers: usize,
    /// Immediates not yet run or cleared.
    pub immediates: usize,
    /// Queued `next_tick` callbacks.
    pub ticks: usize,
    /// Queued microtasks.
    pub microtasks: usize,
}

impl Default for EventLoop {
    fn default() -> Self {
        Self::new()
    }
}

impl EventLoop {
    /// A loop on the system's monotonic clock.
    ///
    /// # Panics
    ///
    /// If the operating system cannot create a poller (see
    /// [`EventLoop::try_with_clock`] for the fallible form).
    pub fn new() -> Self {
        Self::with_clock(SystemClock::new())
    }

    /// A loop on a [`VirtualClock`] starting at zero: time moves only when
    /// the loop would wait (it jumps to the next deadline), on
    /// [`EventLoop::block`], or when the clock is advanced. Tests driven this
    /// way do not depend on the machine's speed.
    ///
    /// # Panics
    ///
    /// As [`EventLoop::new`].
    pub fn with_virtual_clock() -> Self {
        Self::with_clock(VirtualClock::new())
    }

    /// A loop on `clock`.
    ///
    /// # Panics
    ///
    /// As [`EventLoop::new`].
    pub fn with_clock(clock: impl Clock) -> Self {
        match Self::try_with_clock(clock) {
            Ok(lp) => lp,
            Err(e) => panic!("timerloop: cannot create the poller: {e}"),
        }
    }

    /// A loop on `clock`, or the OS error that prevented creating its poller.
    ///
    /// # Errors
    ///
    /// The error from `epoll_create`/`kqueue` or from creating the waker.
    pub fn try_with_clock(clock: impl Clock) -> std::io::Result<Self> {
        let virtual_clock = (&clock as &dyn std::any::Any)
            .downcast_ref::<VirtualClock>()
            .cloned();
        let mut uv = Loop::new(Box::new(clock))?;
        // Node: the timer handle and the check handle are unrefed; the idle
        // handle is started only while refed immediates exist.
        let native = uv.timer_init(EventLoop::run_timers);
        let _ = uv.unref_handle(native);
        let check = uv.check_init(EventLoop::check_immediates);
        let _ = uv.unref_handle(check);
        let _ = uv.watcher_start(check);
        let idle = uv.idle_init(|_| {});
        let timer_base = uv.now();
        Ok(EventLoop {
            uv,
            id: NEXT_LOOP_ID.fetch_add(1, Ordering::Relaxed),
            virtual_clock,
            timers: timeout::Timers::new(native, timer_base),
            immediates: immediate::Immediates::new(idle),
            ticks: ticks::Ticks::default(),
            depth: 0,
            uncaught: None,
            warn: None,
            fatal: None,
        })
    }

    /// The virtual clock, if the loop runs on one.
    pub fn virtual_clock(&self) -> Option<&VirtualClock> {
        self.virtual_clock.as_ref()
    }

    /// The underlying libuv-like loop.
    pub fn uv_loop(&mut self) -> &mut Loop<EventLoop> {
        &mut self.uv
    }

    /// The loop's time in ms since the loop was made, as timers see it
    /// (Node's `getLibuvNow()`, which refreshes the cached loop time first).
    pub fn now(&self) -> u64 {
        let mut t = self.uv.now();
        t = t.max(u64::try_from(self.uv.clock().now().as_millis()).unwrap_or(u64::MAX));
        t - self.timers.base()
    }

    /// Lets `ms` milliseconds pass while the loop is blocked, as a busy
    /// callback would: a virtual clock advances, the real clock spins. The
    /// cached loop time is not refreshed (it is, as in libuv, at the next
    /// point the loop refreshes it).
    pub fn block(&mut self, ms: u64) {
        self.uv.clock().block(std::time::Duration::from_millis(ms));
    }

    /// Counts of what the loop holds.
    pub fn stats(&self) -> Stats {
        let (timers, lists, queued_lists, refed_timers) = self.timers.stats();
        Stats {
            timers,
            lists,
            queued_lists,
            refed_timers,
            immediates: self.immediates.len(),
            ticks: self.ticks.ticks_len(),
            microtasks: self.ticks.microtasks_len(),
        }
    }

    /// Whether the loop has anything refed left to do (`uv__loop_alive`).
    pub fn is_alive(&self) -> bool {
        self.uv.alive()
    }

    /// Installs the uncaught-error handler: Node's
    /// `process.on('uncaughtException', ...)`. With it, a failing callback
    /// is reported to `handler` and the loop goes on with Node's semantics;
    /// without it, [`run`](Self::run) returns the error.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let seen = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let s = seen.clone();
    /// lp.set_uncaught_handler(move |_, err| s.borrow_mut().push(err.message()));
    /// lp.set_timeout(1, |_| Err::<(), _>("boom"));
    /// lp.set_timeout(1, |_| -> Result<(), &str> { panic!("bang") });
    /// lp.run().unwrap();
    /// assert_eq!(*seen.borrow(), ["boom", "bang"]);
    /// ```
    pub fn set_uncaught_handler(
        &mut self,
        handler: impl FnMut(&mut EventLoop, CallbackError) + 'static,
    ) {
        self.uncaught = Some(Box::new(handler));
    }

    /// Removes the uncaught-error handler.
    pub fn clear_uncaught_handler(&mut self) {
        self.uncaught = None;
    }

    /// Installs the warning handler, which receives warnings such as
    /// `TimeoutOverflowWarning` (Node prints them; the library does not).
    /// As in Node, a warning is delivered from a `nextTick` callback queued
    /// when it arises.
    pub fn set_warning_handler(&mut self, handler: impl FnMut(&Warning) + 'static) {
        self.warn = Some(Box::new(handler));
    }

    /// Node's `process.emitWarning`: the warning is delivered from a tick,
    /// not synchronously (and that tick exists even with no handler, as in
    /// Node, where the default handler prints it).
    pub(crate) fn warn(&mut self, w: Warning) {
        self.next_tick(move |lp| {
            if let Some(h) = lp.warn.as_mut() {
                h(&w);
            }
        });
    }

    // ----- running -----------------------------------------------------

    /// Runs the loop until nothing refed is left (Node's event loop).
    ///
    /// # Errors
    ///
    /// [`Error::Uncaught`] if a callback failed and no uncaught-error
    /// handler is installed; [`Error::Reentrant`] if called from one of the
    /// loop's own callbacks.
    pub fn run(&mut self) -> Result<(), Error> {
        self.run_mode(RunMode::Default).map(|_| ())
    }

    /// Runs one iteration of the loop, waiting in the poll phase if there is
    /// nothing else to do. Returns whether the loop is still alive.
    ///
    /// # Errors
    ///
    /// As [`EventLoop::run`].
    pub fn run_once(&mut self) -> Result<bool, Error> {
        self.run_mode(RunMode::Once)
    }

    /// Runs one iteration of the loop without waiting. Returns whether the
    /// loop is still alive.
    ///
    /// # Errors
    ///
    /// As [`EventLoop::run`].
    pub fn run_nowait(&mut self) -> Result<bool, Error> {
        self.run_mode(RunMode::NoWait)
    }

    /// Makes the running [`run`](Self::run) return at the end of the
    /// current loop iteration (`uv_stop`); pending work stays queued for the
    /// next run.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_interval(10, |lp| lp.stop());
    /// lp.run().unwrap(); // returns after the first run of the interval
    /// assert_eq!(lp.now(), 10);
    /// assert!(lp.is_alive());
    /// ```
    pub fn stop(&mut self) {
        self.uv.stop();
    }

    fn run_mode(&mut self, mode: RunMode) -> Result<bool, Error> {
        if self.uv.is_running() || self.depth > 0 {
            return Err(Error::Reentrant);
        }
        // Whatever the caller queued outside callbacks is the main body:
        // its ticks and microtasks drain first, as when Node's bootstrap
        // scope closes; so do those an unhandled failure interrupted. (Ticks
        // a *handled* failure left behind are not: they wait for the next
        // scope, as in Node.)
        if self.ticks.drain_first {
            self.close_scope();
        }
        // A phase an unhandled failure interrupted finishes first, whether
        // or not anything refed is left: it was running anyway.
        self.resume_timers();
        self.resume_immediates();
        // A failure there halted a loop that was not running yet.
        self.uv.reset_stop();
        if let Some(e) = self.fatal.take() {
            return Err(Error::Uncaught(e));
        }
        let alive = uv::run(self, mode).map_err(|_| Error::Reentrant)?;
        match self.fatal.take() {
            Some(e) => Err(Error::Uncaught(e)),
            None => Ok(alive),
        }
    }

    /// Runs `f` as a top-level callback, as Node runs its main script: a
    /// failure goes to the uncaught-error handler, and ticks and microtasks
    /// queued by `f` drain when it returns.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let l = log.clone();
    /// lp.enter(move |lp| {
    ///     let l2 = l.clone();
    ///     lp.next_tick(move |_| l2.borrow_mut().push("tick"));
    ///     l.borrow_mut().push("sync");
    /// })
    /// .unwrap();
    /// assert_eq!(*log.borrow(), ["sync", "tick"]);
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Uncaught`] if `f` (or a tick or microtask it queued) failed
    /// and no handler is installed.
    pub fn enter<R: CallbackResult>(
        &mut self,
        f: impl FnOnce(&mut EventLoop) -> R,
    ) -> Result<(), Error> {
        self.once_scope(CallbackKind::Main, f);
        match self.fatal.take() {
            Some(e) => Err(Error::Uncaught(e)),
            None => Ok(()),
        }
    }

    // ----- I/O -----------------------------------------------------------

    /// Starts a piece of off-thread work: returns a `Send` [`Completion`] to
    /// hand to the thread doing it. When that thread calls
    /// [`Completion::complete`], `cb` runs on the loop's thread in the next
    /// poll phase, as an I/O callback (ticks and microtasks drain after it).
    /// The loop stays alive while the completion is outstanding; dropping it
    /// uncompleted cancels `cb`.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let done = Rc::new(Cell::new(false));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let d = done.clone();
    /// let c = lp.completion(move |_| d.set(true));
    /// std::thread::spawn(move || c.complete());
    /// lp.run().unwrap();
    /// assert!(done.get());
    /// ```
    pub fn completion<R: CallbackResult>(
        &mut self,
        cb: impl FnOnce(&mut EventLoop) -> R + 'static,
    ) -> Completion {
        self.uv
            .request(move |lp: &mut EventLoop| lp.once_scope(CallbackKind::Io, cb))
    }

    /// A `Send + Clone` [`Remote`] through which other threads run closures
    /// on this loop's thread, in its poll phase, as I/O callbacks.
    pub fn remote(&self) -> Remote {
        Remote {
            inner: self.uv.remote(),
        }
    }

    /// Registers a mio I/O source; `cb` runs in the poll phase, as an I/O
    /// callback, with the source's readiness. The source keeps the loop
    /// alive until [`EventLoop::deregister_io`].
    ///
    /// # Errors
    ///
    /// The OS error if the source cannot be registered.
    pub fn register_io<S, R>(
        &mut self,
        source: &mut S,
        interest: mio::Interest,
        mut cb: impl FnMut(&mut EventLoop, Readiness) -> R + 'static,
    ) -> std::io::Result<uv::Handle>
    where
        S: mio::event::Source + ?Sized,
        R: CallbackResult,
    {
        self.uv
            .io_register(source, interest, move |lp: &mut EventLoop, r| {
                lp.callback_scope(CallbackKind::Io, &mut |lp| cb(lp, r).into_result());
            })
    }

    /// Deregisters a source registered with [`EventLoop::register_io`].
    ///
    /// # Errors
    ///
    /// [`uv::UvError`] if the handle is stale or not an I/O handle.
    pub fn deregister_io<S: mio::event::Source + ?Sized>(
        &mut self,
        h: uv::Handle,
        source: &mut S,
    ) -> Result<(), uv::UvError> {
        self.uv.io_close(h, source)
    }

    // ----- callback plumbing ---------------------------------------------

    /// Calls a user callback, turning a panic into a [`Cause`].
    pub(crate) fn invoke(
        &mut self,
        f: &mut dyn FnMut(&mut EventLoop) -> Result<(), BoxError>,
    ) -> Result<(), Cause> {
        match catch_unwind(AssertUnwindSafe(|| f(self))) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Cause::Error(e)),
            Err(payload) => Err(Cause::Panic(error::panic_message(&*payload))),
        }
    }

    /// Calls a boxed one-shot callback, turning a panic into a [`Cause`].
    pub(crate) fn invoke_once(&mut self, f: OnceFn) -> Result<(), Cause> {
        let mut f = Some(f);
        self.invoke(&mut |lp| match f.take() {
            Some(f) => f(lp),
            None => Ok(()),
        })
    }

    /// [`callback_scope`](Self::callback_scope) for a one-shot callback.
    fn once_scope<R: CallbackResult>(
        &mut self,
        kind: CallbackKind,
        f: impl FnOnce(&mut EventLoop) -> R,
    ) {
        let mut f = Some(f);
        self.callback_scope(kind, &mut |lp| match f.take() {
            Some(f) => f(lp).into_result(),
            None => Ok(()),
        });
    }

    /// A top-level entry from the loop into user code (an I/O callback or
    /// the main body): the callback runs, then — unless this entry is nested
    /// or failed fatally — ticks and microtasks drain.
    pub(crate) fn callback_scope(
        &mut self,
        kind: CallbackKind,
        f: &mut dyn FnMut(&mut EventLoop) -> Result<(), BoxError>,
    ) {
        if self.fatal.is_some() {
            return;
        }
        self.depth += 1;
        let r = self.invoke(f);
        self.depth -= 1;
        // A failure is reported first; then, if it was handled, ticks and
        // microtasks drain as after a normal return. (Verified on Node for
        // an fs callback: `io1 uncaught tick micro immediate`.)
        if let Err(cause) = r
            && !self.uncaught(Thrown::Error(CallbackError::new(kind, cause)))
        {
            return;
        }
        self.close_scope();
    }

    /// Node's `InternalCallbackScope::Close` at the outermost level: drain
    /// ticks and microtasks. A failing tick is reported and ends the drain;
    /// the ticks and microtasks after it wait for the next scope to close,
    /// at the latest the one every check phase opens (verified on Node:
    /// after a main-body `tick{throw} tick{log t3}` with an `fs.stat`
    /// pending, the stat's callback runs before `t3`).
    pub(crate) fn close_scope(&mut self) {
        if self.depth > 0 || self.fatal.is_some() {
            return;
        }
        self.ticks.drain_first = false;
        // Ticks run inside the scope: one that calls `enter` nests, and
        // work they queue is not main-body work.
        self.depth += 1;
        let r = self.run_next_ticks();
        self.depth -= 1;
        if let Err(t) = r {
            self.uncaught(t);
        }
    }

    /// The boundary where Node reports an uncaught exception. Returns true
    /// if a handler took it (the caller then goes on as Node does), false if
    /// it is now fatal: the loop halts and `run` will return it.
    pub(crate) fn uncaught(&mut self, t: Thrown) -> bool {
        let err = match t {
            Thrown::Fatal => return false,
            Thrown::Error(e) => e,
        };
        let Some(mut handler) = self.uncaught.take() else {
            self.fatal = Some(err);
            self.uv.halt();
            // The next run resumes the normal flow where it stopped: ticks
            // and microtasks left queued drain first.
            self.ticks.drain_first = true;
            return false;
        };
        self.depth += 1;
        let r = catch_unwind(AssertUnwindSafe(|| handler(self, err)));
        self.depth -= 1;
        if self.uncaught.is_none() {
            self.uncaught = Some(handler);
        }
        if let Err(payload) = r {
            // A panicking handler is fatal, as a throwing one is in Node.
            let msg = error::panic_message(&*payload);
            self.fatal = Some(CallbackError::new(CallbackKind::Main, Cause::Panic(msg)));
            self.uv.halt();
            return false;
        }
        // Node: "make sure any ticks get processed by ensuring that the next
        // Immediate cycle isn't empty".
        self.set_immediate(|_| {});
        true
    }
}

/// A `Send + Clone` handle through which other threads run closures on an
/// [`EventLoop`]'s thread (see [`EventLoop::remote`]).
#[derive(Clone, Debug)]
pub struct Remote {
    inner: uv::Remote<EventLoop>,
}

impl Remote {
    /// Queues `f` to run on the loop's thread in a poll phase, as an I/O
    /// callback, and wakes the loop. A `Remote` does not keep the loop
    /// alive: use [`EventLoop::completion`] for work the loop must wait for.
    ///
    /// # Errors
    ///
    /// The OS error if the loop's waker could not be signalled.
    pub fn post<R: CallbackResult>(
        &self,
        f: impl FnOnce(&mut EventLoop) -> R + Send + 'static,
    ) -> std::io::Result<()> {
        self.inner
            .post(move |lp: &mut EventLoop| lp.once_scope(CallbackKind::Io, f))
    }
}
