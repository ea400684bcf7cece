//! Node.js 20 timers on one native timer handle of the [`uv`](crate::uv)
//! loop: timeouts, intervals, immediates, `nextTick` and microtasks.
//!
//! # The data structure
//!
//! As in Node's `lib/internal/timers.js`, timeouts are grouped by their
//! duration, truncated to whole milliseconds. Each duration has one FIFO
//! list; within a list, append order is expiry order, because every entry
//! has the same duration and start times never decrease. The lists sit in
//! a min-heap ordered by `(expiry, list id)` (8-ary; Node's is binary,
//! which orders the same since keys are unique), and only the heap's root
//! decides when the single native timer fires:
//!
//! ```text
//!  map (DurationMap: duration ms -> list)       heap of lists by (expiry, id)
//!  ┌────────┬──────────────────────────────┐        ┌──────────────┐
//!  │  10 ms │ TimersList                    │◄───────┤ root: 10 ms  │── native uv timer
//!  │        │  oldest ◄─► T ◄─► T ◄─► newest│        ├──────┬───────┤   armed for root.expiry
//!  ├────────┼──────────────────────────────┤        │ 50ms │ 1000ms│
//!  │  50 ms │ TimersList  T ◄─► T           │◄───────┤      │       │
//!  ├────────┼──────────────────────────────┤        └──────┴───────┘
//!  │1000 ms │ TimersList  T                 │◄───────────────┘
//!  └────────┴──────────────────────────────┘
//!   T = a timer in the slab; list links are slab keys
//! ```
//!
//! A list is its map slot: the duration and the FIFO's two ends, 16
//! bytes. The heap knows a list by the slot's id and keeps its key
//! `(expiry, list id)` itself; list ids are unique over the loop's life,
//! which tells a list from a later one in the same slot.
//!
//! Inserting into an existing list, clearing, and refreshing are O(1);
//! only a list's creation, expiry or reschedule touches the heap. Every
//! stored time is loop time, the clock's (one time base, which
//! [`EventLoop::now`] shows as it is), and the native timer is armed and refed from
//! one function that reads the heap's root (`lists.rs`). When the
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
//!
//! # Files
//!
//! This file holds [`EventLoop`] and running it; `timeout.rs` the
//! `Timeout` handle and its state machine, `lists.rs` the storage and the
//! native timer, `process.rs` firing, `immediate.rs`, `ticks.rs`,
//! `scope.rs` the callback scopes and error reporting, `io.rs` I/O and
//! cross-thread work, `coerce.rs` delays, `error.rs` errors.

// `unsafe` is denied here by the crate, not forbidden: `current.rs`,
// `thin.rs` and `inline.rs` allow it (the first two for their own blocks,
// each with its safety argument; the last for smallbox's macro), which a
// `forbid` on this module would refuse; every other module under this one
// forbids it.
mod coerce;
mod current;
mod error;
mod immediate;
mod inline;
mod io;
mod lists;
mod pool;
mod process;
mod scope;
mod thin;
mod ticks;
mod timeout;
mod wakeup;

pub use coerce::{Delay, LONG_MAX_MS, NATIVE_MAX_MS, TIMEOUT_MAX, Warning};
pub use error::{BoxError, CallbackError, CallbackKind, CallbackResult, Cause, Error, TimerError};
pub use immediate::Immediate;
pub use io::{InsertError, IoError, IoEvent, IoHandle, Remote};
pub use timeout::Timeout;

pub(crate) use coerce::coerce;
pub(crate) use current::{
    LoopShared, Micro, current_shared, thread_exiting, try_current_shared, with_current_or_held,
    with_current_shared,
};
pub(crate) use error::{AlreadyFatal, discard_payload, panic_message, panic_message_of};
pub(crate) use scope::{Flow, OnceFn, Thrown};
pub(crate) use wakeup::Wakeup;

use std::fmt;
use std::num::NonZeroU32;
use std::panic::resume_unwind;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::uv::{self, Clock, Host, Loop, RunMode, SystemClock, VirtualClock};

type UncaughtHandler = Box<dyn FnMut(&mut EventLoop, CallbackError)>;
type WarningHandler = Box<dyn FnMut(&Warning)>;

static NEXT_LOOP_ID: AtomicU32 = AtomicU32::new(1);

thread_local! {
    /// The instance number the next loop made on this thread gets.
    static NEXT_INSTANCE: std::cell::Cell<u64> = const { std::cell::Cell::new(1) };
}

/// A new loop's instance number: unique among the loops this thread ever
/// makes (an `EventLoop` never leaves its thread), so that code holding
/// the loop's `&mut` across a callback can tell whether the callback
/// replaced the loop behind it ([`EventLoop::assert_not_replaced`]).
fn next_instance() -> u64 {
    NEXT_INSTANCE.with(|n| {
        let i = n.get();
        n.set(i + 1);
        i
    })
}

/// The panic of a run whose loop a callback replaced: see
/// [`EventLoop::assert_not_replaced`]. Only the message: whether a frame
/// unwinding with it touches the loop is decided by the loop's instance
/// number, not by the payload (a nested loop's panic of this kind may
/// unwind through a loop that was not replaced).
pub(crate) const LOOP_REPLACED: &str = "timerloop: a callback or task replaced the running EventLoop \
     (mem::replace or mem::swap on its &mut EventLoop) and did not put it back \
     before returning; the run cannot go on";

#[cold]
#[inline(never)]
fn loop_replaced() -> ! {
    std::panic::panic_any(LOOP_REPLACED)
}

/// A new loop's id: never zero, so that a handle (a key and this id) has
/// a niche and `Option<Timeout>` is no larger than `Timeout`. After 2^32
/// loops the ids wrap around, skipping zero.
fn next_loop_id() -> NonZeroU32 {
    loop {
        if let Some(id) = NonZeroU32::new(NEXT_LOOP_ID.fetch_add(1, Ordering::Relaxed)) {
            return id;
        }
    }
}

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
    id: NonZeroU32,
    /// Unique among this thread's loops ([`next_instance`]).
    instance: u64,
    virtual_clock: Option<VirtualClock>,
    timers: lists::Timers,
    immediates: immediate::Immediates,
    ticks: ticks::Ticks,
    /// Nesting of callback scopes (Node's InternalCallbackScope).
    depth: u32,
    uncaught: Option<UncaughtHandler>,
    /// The handler was set or cleared (while it runs, it is taken out:
    /// this tells its own `clear_uncaught_handler` from no change).
    uncaught_changed: bool,
    warn: Option<WarningHandler>,
    /// What wakers and futures reach without the loop (`current.rs`).
    pub(crate) shared: Rc<LoopShared>,
    /// Applying deferred operations (they may insert timers, which flush).
    flushing: bool,
    /// The loop's tasks (the layer above: their polls are microtasks).
    pub(crate) tasks: crate::task::Tasks,
    /// `block_on`'s task completed: the run stops, as after a fatal error
    /// but with nothing to report.
    halting: bool,
    fatal: Option<CallbackError>,
}

/// [`run_until`](EventLoop::run_until)'s native timer, made at its first
/// call and stopped between calls (a stopped handle keeps nothing alive).
/// Kept in the loop's layer slots, off the structures the hot paths read.
#[derive(Default)]
struct UntilTimer(std::cell::Cell<Option<uv::Handle>>);

impl Host for EventLoop {
    fn uv(&mut self) -> &mut Loop<Self> {
        &mut self.uv
    }

    fn instance(&self) -> u64 {
        self.instance
    }

    fn sync_handles(&mut self) {
        self.sync_idle();
        self.apply_native();
    }

    fn housekeep(&mut self, idle: bool) {
        // The timers' arena is looked at here, not noted when it empties
        // (`Timers::timers_emptied_large`); the lists' map is noted.
        let tm = &self.timers;
        if tm.timers_emptied.noted || tm.timers_emptied_large() || tm.lists_emptied.noted {
            self.timers.release_emptied(idle);
        }
        if self.immediates.emptied.noted {
            self.release_emptied_immediates(idle);
        }
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
///
/// ```
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.set_timeout(10, |_| {});
/// lp.set_timeout(10, |_| {});
/// lp.set_immediate(|_| {});
/// let s = lp.stats();
/// assert_eq!((s.timers, s.lists, s.refed_timers, s.immediates), (2, 1, 2, 1));
/// lp.run().unwrap();
/// assert_eq!(lp.stats().timers, 0);
///
/// // What keeps a loop alive that other threads reach:
/// let c = lp.completion(|_| {});
/// let r = lp.remote();
/// let s = lp.stats();
/// assert_eq!((s.completions, s.remotes), (1, 1));
/// drop((c, r));
/// lp.run().unwrap(); // their drops reach the loop as messages
/// assert_eq!((lp.stats().completions, lp.stats().remotes), (0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Timeouts and intervals in storage (pending, running or
    /// [kept](EventLoop::keep_timeout)).
    pub timers: usize,
    /// Duration lists in the map.
    pub lists: usize,
    /// Lists in the heap: always equal to `lists` (a list and its heap
    /// entry come and go together; an unrefed list emptied by `clear`
    /// stays in both until it expires, as in Node).
    pub queued_lists: usize,
    /// Refed, live timeouts (Node's `timeoutInfo[0]`).
    pub refed_timers: usize,
    /// Immediates not yet run or cleared.
    pub immediates: usize,
    /// Queued `next_tick` callbacks.
    pub ticks: usize,
    /// Queued microtasks.
    pub microtasks: usize,
    /// Registered I/O sources.
    pub io_sources: usize,
    /// Spawned tasks not yet completed or aborted.
    pub tasks: usize,
    /// [`Completion`](crate::Completion)s outstanding (not yet completed or dropped): each
    /// keeps the loop alive, and on a virtual clock holds time still.
    pub completions: usize,
    /// [`Remote`](crate::Remote)s alive (some clone not yet dropped): each keeps the loop
    /// alive unless unrefed.
    pub remotes: usize,
}

impl Default for EventLoop {
    fn default() -> Self {
        Self::new()
    }
}

impl EventLoop {
    /// A loop on the system's monotonic clock.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::new();
    /// lp.set_timeout(1, |_| println!("1 ms later"));
    /// lp.run().unwrap();
    /// ```
    ///
    /// # Panics
    ///
    /// If the operating system cannot create a poller (an `epoll` instance
    /// and its waker); [`EventLoop::try_new`] returns that error instead.
    ///
    /// # Resources
    ///
    /// A loop holds the poller's descriptors (on Linux an `epoll` instance
    /// and an `eventfd` waker) and, on Linux with a real clock, a
    /// `timerfd` that wakes the poll phase at a timer's exact deadline.
    /// Without the `timerfd` (it could not be made) the loop still works,
    /// waking in whole milliseconds as libuv does.
    pub fn new() -> Self {
        Self::with_clock(SystemClock::new())
    }

    /// A loop on the system's monotonic clock, or the OS error that
    /// prevented creating its poller.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let lp = EventLoop::try_new()?;
    /// assert!(!lp.is_alive());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The error from `epoll_create`/`kqueue` or from creating the waker
    /// (for example too many open files).
    pub fn try_new() -> std::io::Result<Self> {
        Self::try_with_clock(SystemClock::new())
    }

    /// A loop on a [`VirtualClock`] starting at zero: time moves only when
    /// the loop would wait (it jumps to the next deadline), on
    /// [`EventLoop::block`], or when the clock is advanced. Tests driven this
    /// way do not depend on the machine's speed.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_timeout(60_000, |_| {});
    /// lp.run().unwrap(); // returns at once
    /// assert_eq!(lp.now(), 60_000);
    /// ```
    ///
    /// # Panics
    ///
    /// As [`EventLoop::new`].
    pub fn with_virtual_clock() -> Self {
        Self::with_clock(VirtualClock::new())
    }

    /// A loop on `clock`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, VirtualClock};
    /// let clock = VirtualClock::new();
    /// let mut lp = EventLoop::with_clock(clock.clone());
    /// clock.advance(Duration::from_millis(5)); // the test keeps a handle
    /// lp.update_time();
    /// assert_eq!(lp.now(), 5);
    /// ```
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
    /// ```
    /// use timerloop::{EventLoop, VirtualClock};
    /// let lp = EventLoop::try_with_clock(VirtualClock::new())?;
    /// assert!(lp.virtual_clock().is_some());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`EventLoop::try_new`].
    pub fn try_with_clock(clock: impl Clock) -> std::io::Result<Self> {
        let virtual_clock = (&clock as &dyn std::any::Any)
            .downcast_ref::<VirtualClock>()
            .cloned();
        let ms_cache = (&clock as &dyn std::any::Any)
            .downcast_ref::<SystemClock>()
            .map(uv::MsCache::new);
        let mut uv = Loop::new(Rc::new(clock))?;
        if let Some(cache) = &ms_cache {
            uv.set_fast_clock(uv::FastClock::System(cache.clone()));
        } else if let Some(v) = &virtual_clock {
            uv.set_fast_clock(uv::FastClock::Virtual(v.clone()));
        }
        // Node: the timer handle and the check handle are unrefed; the idle
        // handle is started only while refed immediates exist.
        let native = uv.timer_init(EventLoop::run_timers);
        let _ = uv.unref_handle(native);
        let check = uv.check_init(EventLoop::check_immediates);
        let _ = uv.unref_handle(check);
        let _ = uv.watcher_start(check);
        let idle = uv.idle_init_bare();
        let id = next_loop_id();
        let shared = LoopShared::new(id.get(), uv.clock_rc(), ms_cache, uv.sender());
        let tasks = crate::task::Tasks::new(&shared);
        Ok(EventLoop {
            uv,
            id,
            instance: next_instance(),
            virtual_clock,
            timers: lists::Timers::new(native),
            immediates: immediate::Immediates::new(idle),
            ticks: ticks::Ticks::default(),
            depth: 0,
            uncaught: None,
            uncaught_changed: false,
            warn: None,
            fatal: None,
            shared,
            flushing: false,
            tasks,
            halting: false,
        })
    }

    /// The virtual clock, if the loop runs on one.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// assert!(EventLoop::with_virtual_clock().virtual_clock().is_some());
    /// assert!(EventLoop::new().virtual_clock().is_none());
    /// ```
    pub fn virtual_clock(&self) -> Option<&VirtualClock> {
        self.virtual_clock.as_ref()
    }

    /// The loop's time: its clock's time in whole ms, what Node's
    /// `getLibuvNow()` returns, read without storing it (a `&self` method
    /// cannot refresh the loop's cached time; [`update_time`](Self::update_time)
    /// does). A new clock starts at 0; a loop made on a clock that has
    /// already run (a [`VirtualClock`] moved first, or shared with another
    /// loop) goes on from the clock's time, as every loop on that clock
    /// does, and [`run_until`](Self::run_until), [`time::Instant`](crate::time::Instant)
    /// and the timers count in the same time.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block(7);
    /// assert_eq!(lp.now(), 7);
    /// ```
    pub fn now(&self) -> u64 {
        self.uv.now().max(uv::ms_floor(self.uv.clock().now()))
    }

    /// Refreshes the loop's cached time from its clock (`uv_update_time`).
    /// The loop does so itself where libuv does; a callback that busy-waits
    /// calls this to do what Node's own busy loops do when they read
    /// `getLibuvNow()`.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block(10);
    /// lp.update_time();
    /// lp.set_timeout(5, |_| {}); // due at 15
    /// lp.run().unwrap();
    /// assert_eq!(lp.now(), 15);
    /// ```
    pub fn update_time(&mut self) {
        self.flush_deferred();
        self.uv.update_time();
    }

    /// Lets `ms` milliseconds pass while the loop is blocked, as a busy
    /// callback would: a virtual clock advances, the real clock spins. The
    /// cached loop time is not refreshed (it is, as in libuv, at the next
    /// point the loop refreshes it).
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_timeout(5, |lp| lp.block(20));
    /// lp.run().unwrap();
    /// assert_eq!(lp.now(), 25);
    /// ```
    pub fn block(&mut self, ms: u64) {
        self.uv.clock().block(std::time::Duration::from_millis(ms));
    }

    /// Counts of what the loop holds.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.next_tick(|_| {});
    /// assert_eq!(lp.stats().ticks, 1);
    /// ```
    pub fn stats(&self) -> Stats {
        let tm = &self.timers;
        Stats {
            timers: tm.slab.len(),
            lists: tm.map.len(),
            queued_lists: tm.queue.len(),
            refed_timers: tm.ref_count(),
            immediates: self.immediates.len(),
            ticks: self.ticks.ticks_len(),
            microtasks: self.microtasks_len(),
            io_sources: self.uv.io_sources(),
            tasks: self.tasks.len(),
            completions: self.uv.requests_in_flight(),
            remotes: self.uv.remotes(),
        }
    }

    /// Whether the loop has anything refed left to do (`uv__loop_alive`,
    /// R11.2): refed timeouts, refed immediates, I/O sources, requests in
    /// flight, refed [`Remote`]s, semaphore acquires waiting in a queue
    /// that were polled on this loop (their permit may come from another
    /// thread; see [`sync`](crate::sync)), and handles still closing (a
    /// source just closed or removed, a dropped [`Remote`]) until the next
    /// run's close phase.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// assert!(!lp.is_alive());
    /// let t = lp.set_timeout(1, |_| {});
    /// assert!(lp.is_alive());
    /// lp.unref_timeout(t).unwrap();
    /// assert!(!lp.is_alive());
    /// ```
    pub fn is_alive(&self) -> bool {
        self.uv
            .alive_adjusted(self.idle_delta() + self.native_delta())
    }

    // ----- running -----------------------------------------------------

    /// Runs the loop until nothing refed is left (Node's event loop).
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_timeout(10, |lp| {
    ///     lp.set_timeout(10, |_| {});
    /// });
    /// lp.run().unwrap();
    /// assert_eq!(lp.now(), 20);
    /// ```
    ///
    /// # Panics
    ///
    /// Panics in callbacks are caught and reported (see
    /// [`set_uncaught_handler`](Self::set_uncaught_handler)). A panic the
    /// loop cannot catch unwinds out of `run`, and the loop is left
    /// runnable, nothing lost: one from a [`Clock`] of your own, from the
    /// `drop` of a future that a callback let go of (a task it aborted,
    /// say), which the loop drops right after that callback, or from the
    /// `drop` of what a callback captured, when the loop lets go of it
    /// (after a one-shot callback ran). If the callback had failed too,
    /// its failure is not lost: the handler saw it, or the next `run`
    /// returns it.
    ///
    /// A callback that moves the loop out of its `&mut EventLoop`
    /// (`std::mem::replace`, `std::mem::swap`) and returns with another
    /// loop in its place makes `run` panic as soon as it returns: the run
    /// cannot go on with the other loop, which is left as the callback
    /// left it. The loop moved out is frozen in the middle of the run: it
    /// can be dropped, and every run of it returns [`Error::Reentrant`],
    /// even put back in place. Swapped out and back before the callback
    /// returns, the loop is the same one and runs on.
    ///
    /// # Errors
    ///
    /// [`Error::Uncaught`] if a callback failed and no uncaught-error
    /// handler took it (none is installed, the handler
    /// [declined](Self::decline_uncaught) it, or it panicked: see
    /// [`Error::Uncaught`]); [`Error::Reentrant`] if called from one of the
    /// loop's own callbacks; [`Error::ThreadExiting`] if called from a
    /// thread-local's destructor after the crate's own thread-locals were
    /// destroyed (in these two cases nothing ran); [`Error::Poll`] if the
    /// OS refused to wait on the loop's poller.
    pub fn run(&mut self) -> Result<(), Error> {
        self.run_mode(RunMode::Default).map(|_| ())
    }

    /// Runs one iteration of the loop, waiting in the poll phase if there is
    /// nothing else to do. Returns whether the loop is still alive.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_timeout(10, |_| {});
    /// lp.set_timeout(20, |_| {});
    /// assert!(lp.run_once().unwrap()); // waits for the first, still alive
    /// assert_eq!(lp.now(), 10);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`EventLoop::run`].
    pub fn run_once(&mut self) -> Result<bool, Error> {
        self.run_mode(RunMode::Once)
    }

    /// Runs one iteration of the loop without waiting. Returns whether the
    /// loop is still alive. On a virtual clock, which moves only when the
    /// loop waits, a loop of `run_nowait` calls never reaches a pending
    /// timer (use [`run_once`](Self::run_once), or move the clock).
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let ran = Rc::new(Cell::new(false));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let r = ran.clone();
    /// lp.set_immediate(move |_| r.set(true));
    /// lp.set_timeout(10, |_| {});
    /// assert!(lp.run_nowait().unwrap());
    /// assert!(ran.get());
    /// assert_eq!(lp.now(), 0, "it did not wait for the timeout");
    /// ```
    ///
    /// # Errors
    ///
    /// As [`EventLoop::run`].
    pub fn run_nowait(&mut self) -> Result<bool, Error> {
        self.run_mode(RunMode::NoWait)
    }

    /// Runs the loop until loop time `ms`: every timer due by then fires
    /// at its own deadline, in Node's order, and on a virtual clock the
    /// loop ends at `ms` exactly, even with nothing left to run (sinon's
    /// `clock.tick`, .NET's `FakeTimeProvider.Advance`). So a timer that a
    /// callback sets is counted from its callback's time, not from `ms`,
    /// which moving the clock by hand and running once would do (and
    /// which Node 20's `mock.timers.tick` and tokio's `advance` do: they
    /// jump to the end, then run what was due). On the system clock it
    /// runs until that time has passed. A callback that moves the
    /// virtual clock itself ([`block`](Self::block),
    /// [`VirtualClock::advance`]) past `ms` leaves the loop there: the
    /// run then ends at that later time, after the timers due by it.
    ///
    /// The run ends as a [`stop`](Self::stop) at `ms` ends it: after the
    /// timers due at `ms` and their ticks and microtasks; immediates they
    /// queued run in the next run. A `ms` already reached runs the timers
    /// due now and returns. The run returns earlier on a `stop` or an
    /// error, as [`run`](Self::run) does.
    ///
    /// A [`VirtualClock`] counts nanoseconds and ends at `u64::MAX` of
    /// them, about 584 years (loop time 18,446,744,073,709): a `ms` past
    /// that takes the loop to the end of time, loop time `u64::MAX`,
    /// where every timer counts as due, also those due after `ms`.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let l = log.clone();
    /// // a retry every 20 ms, each set from the last one's callback
    /// fn retry(lp: &mut EventLoop, l: Rc<RefCell<Vec<u64>>>) {
    ///     lp.set_timeout(20, move |lp| {
    ///         l.borrow_mut().push(lp.now());
    ///         retry(lp, l.clone());
    ///     });
    /// }
    /// retry(&mut lp, l);
    /// lp.run_until(69).unwrap();
    /// assert_eq!(*log.borrow(), [20, 40, 60]); // each at its own time
    /// assert_eq!(lp.now(), 69);
    /// lp.run_until(100).unwrap();
    /// assert_eq!(*log.borrow(), [20, 40, 60, 80, 100]);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`EventLoop::run`].
    pub fn run_until(&mut self, ms: u64) -> Result<(), Error> {
        if self.is_running_or_nested() {
            return Err(Error::Reentrant);
        }
        let slot = self.shared.layer::<UntilTimer>();
        let h = match slot.0.get() {
            Some(h) => h,
            None => {
                let h = self.uv.timer_init(|lp: &mut EventLoop| lp.uv.stop());
                slot.0.set(Some(h));
                h
            }
        };
        self.uv
            .timer_start_at(h, ms, 0)
            .expect("run_until's own timer handle is never closed");
        let r = self.run_mode(RunMode::Default);
        // Stopped whatever ended the run, so it keeps nothing alive.
        let _ = self.uv.timer_stop(h);
        r.map(|_| ())
    }

    /// Makes the running [`run`](Self::run) return at the end of the
    /// current loop iteration (`uv_stop`); pending work stays queued for the
    /// next run. Called from work a run does before its first iteration
    /// (ticks and microtasks queued before the run, a phase a failure
    /// interrupted and the run finishes), it makes the run return before
    /// that iteration. Called where no run is under way (before `run`, or
    /// in [`enter`](Self::enter)), it does nothing.
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

    /// Panics, touching nothing, if the loop behind `&mut self` is no
    /// longer the one numbered `instance`: user code given the loop's
    /// `&mut` (a callback, a task's poll, the uncaught-error handler)
    /// moved it out (`mem::replace`, `mem::swap`) and left another in its
    /// place. Everything the caller knows of the loop (the running
    /// timer's slot, the list it runs, the task it polls) is the old
    /// loop's, and the timers pass reaches some of it without checks: it
    /// must not go on. Called right after the user code returns, before
    /// anything else reads the loop. A loop swapped out and back before
    /// returning is the same loop, changed only through its public API,
    /// as a callback may change it.
    ///
    /// A loop moved out of a run (by a callback, a task, `enter`'s closure)
    /// is left as that user code saw it, in the middle of the run: it can
    /// be dropped, and every run of it returns [`Error::Reentrant`].
    /// Nothing undoes that, not even putting it back in place after
    /// catching the panic. (One moved out of a `scope` outside any run is
    /// whole.)
    ///
    /// Takes and gives back `r`, the user code's result, which a replaced
    /// loop's panic leaks (a value the user code returned, a failure's
    /// box): with nothing to drop on that path, the result
    /// stays in registers on the common one (checked after it, a result
    /// holding a box was stored to the stack for the unwinding's drop: 12
    /// instructions more a fired timeout).
    #[inline(always)]
    pub(crate) fn assert_not_replaced<R>(&self, instance: u64, r: R) -> R {
        if self.instance != instance {
            std::mem::forget(r);
            loop_replaced();
        }
        r
    }

    /// Whether a run is under way, or a callback of this loop is running.
    pub(crate) fn is_running_or_nested(&self) -> bool {
        self.uv.is_running() || self.depth > 0
    }

    /// The cached loop time, in loop milliseconds (the time
    /// [`now`](Self::now) tells, without its fresh clock read).
    pub(crate) fn loop_time(&self) -> u64 {
        self.uv.now()
    }

    fn run_mode(&mut self, mode: RunMode) -> Result<bool, Error> {
        if self.is_running_or_nested() {
            return Err(Error::Reentrant);
        }
        let _current = self.enter_current()?;
        // A `stop` from before this run (no run was under way) is not
        // this run's.
        self.uv.forget_stop();
        // The drop guard: a panic that escapes (only a panicking clock or a
        // bug can) leaves no callback scope open, so the next run is not
        // refused as reentrant.
        // A callback that replaced the loop unwinds on: none of this run's
        // bookkeeping is the new loop's.
        let r = uv::catch_unless_replaced(self, |lp| lp.run_guarded(mode));
        self.halting = false;
        // A `stop` from this run's own work before its first iteration
        // ended it there (see `run_guarded`), or it returned before that:
        // either way the stop was this run's.
        self.uv.forget_stop();
        match r {
            Ok(r) => r,
            Err(payload) => {
                self.depth = 0;
                self.flushing = false;
                self.timers.current = lists::NO_TIMER;
                // Ticks and microtasks the unwound scope would have drained
                // (those queued after the panicking callback) drain first
                // in the next run, as the main body's do.
                self.ticks.drain_first = true;
                self.unwound_checkpoint();
                resume_unwind(payload)
            }
        }
    }

    /// What `uv::run` does as it returns a loop left with nothing to run,
    /// for the runs that end before reaching it: storage that the main
    /// body's drain or a resumed phase emptied is given back.
    fn housekeep_if_done(&mut self) {
        if !self.is_alive() {
            Host::housekeep(self, true);
        }
    }

    fn run_guarded(&mut self, mode: RunMode) -> Result<bool, Error> {
        // A failure that a panic carried out of the last run (one of its
        // callback's deferred operations panicked, `report_unwinding`) is
        // returned first, as that run would have returned it; the run
        // after this one goes on where it stopped.
        if let Some(e) = self.fatal.take() {
            return Err(Error::Uncaught(e));
        }
        self.flush_deferred();
        // Whatever the caller queued outside callbacks is the main body:
        // its ticks and microtasks drain first, as when Node's bootstrap
        // scope closes; so do those an unhandled failure interrupted. (Ticks
        // a *handled* failure left behind are not: they wait for the next
        // scope, as in Node.) A task woken on this thread since the latest
        // microtask checkpoint was woken outside the loop (a wake inside it
        // is drained when its callback's scope closes): main-body work too.
        if self.shared.woke_task.take() {
            self.ticks.drain_first = true;
        }
        if self.ticks.drain_first {
            self.close_scope();
        }
        // A phase an unhandled failure interrupted finishes first, whether
        // or not anything refed is left: it was running anyway.
        self.resume_timers();
        self.resume_immediates();
        // A failure there halted a loop that was not running yet: that
        // halt is forgotten. A `stop` called there (by a tick of the main
        // body, a resumed timer, the uncaught handler) is kept: the run
        // returns at once, its first iteration not started, as `uv_run`
        // after `uv_stop`.
        self.uv.reset_stop();
        if let Some(e) = self.fatal.take() {
            self.housekeep_if_done();
            return Err(Error::Uncaught(e));
        }
        if self.halting {
            // block_on's task completed in the main-body drain.
            self.housekeep_if_done();
            return Ok(self.is_alive());
        }
        let alive = uv::run(self, mode).map_err(|_| Error::Reentrant)?;
        if let Some(e) = self.fatal.take() {
            return Err(Error::Uncaught(e));
        }
        match self.uv.take_poll_error() {
            Some(e) => Err(Error::Poll(e)),
            None => Ok(alive),
        }
    }
}

impl Drop for EventLoop {
    fn drop(&mut self) {
        // Tasks' futures first (their drops may queue deferred work), then
        // whatever is queued: closures there may hold the shared state.
        // The futures are dropped with the loop current and lendable, as
        // an abort drops them while the loop runs: a future's `drop` may
        // read the clock, sleep or spawn (what it makes goes with the
        // loop; a task spawned there is dropped in a later round, a few
        // rounds at most, then with no loop current).
        for _ in 0..DROP_ROUNDS {
            if self.tasks.len() == 0 {
                break;
            }
            let Ok(_entered) = self.enter_current() else {
                break; // the thread is exiting: no loop can be current
            };
            let futures = self.tasks.take_orphaned();
            self.lend_during(|| drop(futures));
            self.flush_deferred();
        }
        self.tasks.clear();
        self.shared.clear();
    }
}

/// How many times a dropping loop drops its tasks' futures with the loop
/// current (each round drops the tasks the previous round's drops
/// spawned).
const DROP_ROUNDS: usize = 4;
