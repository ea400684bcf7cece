//! .NET's timers on the loop: [`Timer`] (`System.Threading.Timer`, with
//! `Change(due, period)`) and [`PeriodicTimer`]
//! (`System.Threading.PeriodicTimer`).
//!
//! # Invariants
//!
//! - **One queue per loop**, as .NET keeps one `TimerQueue` per core: every
//!   scheduled timer of a loop is in it, ordered by (deadline, time it was
//!   scheduled, order of creation), the order in which .NET's
//!   `FakeTimeProvider` fires them. The queue owns exactly one Node timeout,
//!   armed for its earliest deadline; it is the only thing that keeps the
//!   loop alive for .NET timers, and it does so exactly while some refed
//!   timer is scheduled (a disabled, disposed or unrefed timer keeps
//!   nothing alive; [`Timer::set_ref`]).
//! - **One at a time.** When the queue's timeout fires, the due timers run
//!   in that order, each callback to its end before the next, all on the
//!   loop's thread: .NET's overlapping callbacks (N2) cannot happen here.
//!   A timer scheduled while they run (by a callback's `change`) is never
//!   due in the same run.
//! - **A panic is a failing timer's** (Node's `processTimers`): the
//!   loop's uncaught error, of kind
//!   [`Timeout`](crate::CallbackKind::Timeout). With a handler
//!   ([`EventLoop::set_uncaught_handler`]) it is reported at once, and the
//!   timers due with it run on, in order, with the same `now`, before
//!   anything else (the ticks the callback queued, later deadlines).
//!   Without one, the run stops right after it and returns it; the next
//!   run drains the ticks and microtasks left first, then runs the rest
//!   of them, still before any later deadline.
//! - **Never early, never stale.** A timer fires at or after its deadline in
//!   loop time. After `change` or `dispose` returns, nothing of the old
//!   schedule runs: a disposed timer never runs again.
//! - **No drift** (N3). A periodic timer is re-armed *before* its callback
//!   runs (a `change` inside the callback wins): the next due time is one
//!   period after the *scheduled* time, so lateness is not carried over; if
//!   a whole period or more was missed, the missed periods are dropped and
//!   it is due 1 ms on, as .NET does.
//! - **Due zero** is 1 ms on, Node's shortest timeout: it runs in the first
//!   timers phase at least 1 ms later (not one in the same millisecond),
//!   never inline (.NET queues it to the pool).
//! - **Any length.** There is no 0xFFFFFFFE ms limit (.NET's
//!   `ArgumentOutOfRangeException`): a due time or period of any
//!   [`Duration`] is kept, as a long timer (see
//!   [`NATIVE_MAX_MS`](crate::NATIVE_MAX_MS)), up to
//!   [`LONG_MAX_MS`] (longer is clamped to it).
//!
//! # .NET and here
//!
//! | .NET | here |
//! |---|---|
//! | `new Timer(cb, state, due, period)` | [`Timer::new`]`(cb, due, period)`; `Timeout.Infinite` is `None`; the state is whatever `cb` captures |
//! | `timer.Change(due, period)` | [`Timer::change`] |
//! | `timer.Dispose()` | [`Timer::dispose`], or dropping the last handle |
//! | a timer never keeps the process alive | a scheduled timer keeps the loop alive, as a Node timeout; [`Timer::set_ref`]`(false)` (and [`PeriodicTimer::set_ref`]) is .NET's way |
//! | callbacks overlapping on the pool (N2) | one at a time on the loop |
//! | `new PeriodicTimer(period)` | [`PeriodicTimer::new`] |
//! | `await t.WaitForNextTickAsync()` | [`PeriodicTimer::wait_for_next_tick`]`().await` |
//! | a second concurrent `WaitForNextTickAsync` (`InvalidOperationException`) | impossible through [`PeriodicTimer::wait_for_next_tick`], which borrows the timer mutably; no error through [`PeriodicTimer::poll_wait_for_next_tick`] on a shared timer, which wakes only its latest caller (as tokio's `poll_` methods): the task it replaced is not woken |
//! | `t.Period = p` | [`PeriodicTimer::set_period`] |
//! | `FakeTimeProvider.Advance(d)` | a [`VirtualClock`](crate::VirtualClock): the loop jumps from deadline to deadline |
//! | fractions of a millisecond truncated (a 500 µs period is no period, 1.5 ms is 1 ms) | rounded up, as every `Duration` here (500 µs is 1 ms, 1.5 ms is 2 ms): never early |
//! | `Change` or `Period` after `Dispose`: `ObjectDisposedException` | [`Timer::change`] returns `false` (as `FakeTimeProvider`'s), [`PeriodicTimer::set_period`] `Ok` |
//! | `Dispose` completes a pending `WaitForNextTickAsync` with `false` | [`wait_for_next_tick`](PeriodicTimer::wait_for_next_tick) borrows the timer mutably: drop the wait's future (or its task) to end it; a task in [`poll_wait_for_next_tick`](PeriodicTimer::poll_wait_for_next_tick) on a shared timer is woken and reads `false` |
//! | a callback's `Change` of another timer due at the same instant: that run, already queued, still happens | it is cancelled: nothing of the old schedule runs after `change` returns |
//!
//! A periodic timer whose own callback runs past its next deadline runs
//! one at a time here, where .NET's pool would start the runs due
//! meanwhile on other threads (period 10, a callback at 10 busy until 35:
//! .NET starts runs at 20 and 30 beside it). Against .NET's own rule for
//! a run more than a period late (due 1 ms on), it is up to 1 ms later:
//! the queue's timeout is armed after the callbacks, at least 1 ms on, and
//! the no-drift rule counts from that run, so the shift carries on (were
//! .NET's runs one at a time, the run due at 20 would start at 35, then
//! 36 and 46; here at 36, then 37 and 47). At the end of loop time (a
//! saturated virtual clock) a periodic timer runs once a timers pass.
//!
//! The loop's time never goes backwards, so when several deadlines passed
//! while the loop was blocked, their callbacks all see the time at which
//! they ran; on a virtual clock that runs freely, the loop stops at each
//! deadline in turn, and each callback sees its own deadline, as under
//! `FakeTimeProvider`.
//!
//! # Examples
//!
//! ```
//! use std::{cell::RefCell, rc::Rc, time::Duration};
//! use timerloop::{EventLoop, time::dotnet::Timer};
//! let ms = Duration::from_millis;
//! let runs = Rc::new(RefCell::new(Vec::new()));
//! let mut lp = EventLoop::with_virtual_clock();
//! let r = runs.clone();
//! let timer = lp.scope(|| {
//!     Timer::new(
//!         move |lp, t| {
//!             r.borrow_mut().push(lp.now());
//!             if r.borrow().len() == 3 {
//!                 t.dispose();
//!             }
//!         },
//!         Some(ms(5)),  // due
//!         Some(ms(10)), // period
//!     )
//! });
//! lp.run().unwrap();
//! assert_eq!(*runs.borrow(), [5, 15, 25]);
//! assert!(timer.is_disposed());
//! ```

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::{Instant, InvalidPeriod};
use crate::task::{store_waker, wake_stored};
use crate::timers::{
    AlreadyFatal, LONG_MAX_MS, LoopShared, Thrown, current_shared, discard_payload, panic_message,
};
use crate::uv::ms_ceil;
use crate::{BoxError, CallbackError, CallbackKind, Cause, EventLoop, Timeout};

/// A place in the queue: (deadline, when scheduled, creation order), all
/// in loop milliseconds but the last.
type Key = (u64, u64, u64);

/// A loop's .NET timer queue.
#[derive(Default)]
struct Queue {
    entries: RefCell<BTreeMap<Key, Weak<State>>>,
    /// The next creation number.
    created: Cell<u64>,
    /// The Node timeout that fires the queue, and the deadline it serves.
    native: Cell<Option<(Timeout, u64)>>,
    /// A resync is queued on the loop.
    sync_queued: Cell<bool>,
    /// How many scheduled timers are refed, and whether the native timeout
    /// is: it keeps the loop alive exactly while one of them is.
    refed: Cell<usize>,
    native_refed: Cell<bool>,
}

impl Queue {
    /// Queues a resync of the native timeout with the loop.
    fn request_sync(self: &Rc<Self>, shared: &LoopShared) {
        if !self.sync_queued.replace(true) {
            let q = self.clone();
            shared.defer(move |lp| q.sync(lp));
        }
    }

    /// Arms the native timeout for the earliest deadline, or clears it
    /// when nothing is scheduled.
    fn sync(self: &Rc<Self>, lp: &mut EventLoop) {
        self.sync_queued.set(false);
        let want = self.entries.borrow().keys().next().map(|k| k.0);
        let want_ref = self.refed.get() > 0;
        match (self.native.get(), want) {
            (Some((t, armed)), Some(want)) if armed == want => {
                if self.native_refed.replace(want_ref) != want_ref {
                    let _ = if want_ref {
                        lp.ref_timeout(t)
                    } else {
                        lp.unref_timeout(t)
                    };
                }
                return;
            }
            (Some((t, _)), _) => {
                let _ = lp.clear_timeout(t);
                self.native.set(None);
            }
            (None, _) => {}
        }
        if let Some(deadline) = want {
            let now = lp.shared.now_ms();
            let ms = deadline.saturating_sub(now).clamp(1, LONG_MAX_MS);
            let q = self.clone();
            let t = lp.timeout_started_at(now, ms, move |lp| q.fire(lp));
            if !want_ref {
                let _ = lp.unref_timeout(t);
            }
            self.native_refed.set(want_ref);
            self.native.set(Some((t, deadline)));
        }
    }

    /// The native timeout fired: runs the due timers one at a time.
    fn fire(self: &Rc<Self>, lp: &mut EventLoop) -> Result<(), BoxError> {
        self.native.set(None);
        let now = lp.loop_time();
        self.run_due(lp, now)
    }

    /// Runs the timers due at `now`, in order. A callback that panics is
    /// the loop's uncaught error, reported here as the timers pass reports
    /// a failing Node timeout's (Node's `processTimers`): a handler took
    /// it, and the rest run on, with the same `now`; none did, and the
    /// run stops right here ([`AlreadyFatal`] stops the pass, or the
    /// microtask checkpoint, this runs in, reporting nothing more),
    /// leaving the rest to a microtask, which the next run drains first,
    /// before anything else is due. Not leaving them to the native
    /// timeout: armed again, it is due at least 1 ms on, behind deadlines
    /// later than theirs.
    fn run_due(self: &Rc<Self>, lp: &mut EventLoop, now: u64) -> Result<(), BoxError> {
        // Whatever happens (a callback may panic), the native timeout is
        // brought back in line once this returns.
        let _resync = Resync(self.clone(), lp.shared.clone());
        let instance = crate::uv::Host::instance(lp);
        // A snapshot: a timer scheduled by a callback of this run is not
        // due in it.
        let due: Vec<Key> = self
            .entries
            .borrow()
            .range(..=(now, u64::MAX, u64::MAX))
            .map(|(k, _)| *k)
            .collect();
        for key in due {
            let Some(weak) = self.entries.borrow_mut().remove(&key) else {
                continue; // changed or disposed by an earlier callback
            };
            let Some(state) = weak.upgrade() else {
                continue;
            };
            self.unscheduled(&state);
            if let Some(period) = state.period.get() {
                // N3: re-armed before the callback, without drift.
                let late = now
                    .saturating_sub(state.start.get())
                    .saturating_sub(state.due.get());
                let next = if late < period { period - late } else { 1 };
                state.start.set(now);
                state.due.set(next);
                self.insert(&state, now.saturating_add(next), now);
            }
            let ran = state.run(lp);
            if crate::uv::Host::instance(lp) != instance {
                // The callback replaced the loop: the rest are not the new
                // loop's (the run panics once this Node callback returns).
                if let Err(panic) = ran {
                    resume_unwind(panic);
                }
                return Ok(());
            }
            if let Err(panic) = ran {
                let cause = Cause::Panic(panic_message(&*panic));
                discard_payload(panic);
                let err = CallbackError::new(CallbackKind::Timeout, cause);
                if lp.uncaught(Thrown::Error(err)) {
                    continue;
                }
                // Fatal: the loop is halted, and the run returns the
                // failure. The next run drains the microtasks first.
                let q = self.clone();
                lp.queue_microtask(move |lp| q.run_due(lp, now));
                return Err(Box::new(AlreadyFatal));
            }
        }
        Ok(())
    }

    /// Puts `state` in the queue at `deadline` (scheduled at `now`).
    fn insert(&self, state: &Rc<State>, deadline: u64, now: u64) {
        let key = (deadline, now, state.id);
        self.entries.borrow_mut().insert(key, Rc::downgrade(state));
        state.key.set(Some(key));
        if state.refed.get() {
            self.refed.set(self.refed.get() + 1);
        }
    }

    fn remove(&self, state: &State) {
        if let Some(key) = state.key.get() {
            self.entries.borrow_mut().remove(&key);
            self.unscheduled(state);
        }
    }

    /// `state` has left the queue's entries: no longer scheduled.
    fn unscheduled(&self, state: &State) {
        if state.key.take().is_some() && state.refed.get() {
            self.refed.set(self.refed.get() - 1);
        }
    }
}

/// Resyncs the queue's native timeout when dropped.
struct Resync(Rc<Queue>, Rc<LoopShared>);

impl Drop for Resync {
    fn drop(&mut self) {
        self.0.request_sync(&self.1);
    }
}

type Callback = Box<dyn FnMut(&mut EventLoop, &Timer)>;

/// One timer's state, shared by its handles and (weakly) by the queue.
struct State {
    shared: Rc<LoopShared>,
    queue: Rc<Queue>,
    id: u64,
    callback: RefCell<Option<Callback>>,
    /// Its place in the queue, while scheduled.
    key: Cell<Option<Key>>,
    /// .NET's `_startTicks` and `_dueTime`: when it was last armed (or
    /// fired) and how long after that it is due.
    start: Cell<u64>,
    due: Cell<u64>,
    /// The period, for a periodic timer.
    period: Cell<Option<u64>>,
    disposed: Cell<bool>,
    /// Keeps the loop alive while scheduled (the default).
    refed: Cell<bool>,
}

impl State {
    /// Runs the callback; its panic, caught, is handed back.
    fn run(self: &Rc<Self>, lp: &mut EventLoop) -> std::thread::Result<()> {
        let Some(mut cb) = self.callback.borrow_mut().take() else {
            return Ok(()); // its own callback is running (a nested loop run)
        };
        let handle = Timer {
            state: self.clone(),
        };
        let r = catch_unwind(AssertUnwindSafe(|| cb(lp, &handle)));
        if !self.disposed.get() {
            *self.callback.borrow_mut() = Some(cb);
        }
        drop(handle);
        r
    }
}

impl Drop for State {
    fn drop(&mut self) {
        if self.key.get().is_some() {
            self.queue.remove(self);
            self.queue.request_sync(&self.shared);
        }
    }
}

/// `System.Threading.Timer`: a callback run once after a due time, then
/// every period, re-armed with [`change`](Timer::change). A cheap `Clone`
/// handle; the timer is disposed by [`dispose`](Timer::dispose) or when
/// its last handle is dropped (keep one, as .NET asks you to keep a
/// reference). See the [module docs](self) for the rules.
///
/// ```
/// use std::{cell::RefCell, rc::Rc, time::Duration};
/// use timerloop::{EventLoop, time::dotnet::Timer};
/// let ticks = Rc::new(RefCell::new(Vec::new()));
/// let mut lp = EventLoop::with_virtual_clock();
/// let t = ticks.clone();
/// let timer = lp.scope(|| {
///     Timer::new(
///         move |lp, timer| {
///             t.borrow_mut().push(lp.now());
///             if t.borrow().len() == 3 {
///                 timer.dispose();
///             }
///         },
///         Some(Duration::from_millis(50)),
///         Some(Duration::from_millis(100)),
///     )
/// });
/// lp.run().unwrap();
/// assert_eq!(*ticks.borrow(), [50, 150, 250]);
/// assert!(timer.is_disposed());
/// ```
#[derive(Clone)]
pub struct Timer {
    state: Rc<State>,
}

impl fmt::Debug for Timer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timer")
            .field("next_due", &self.next_due())
            .field("period", &self.period())
            .field("disposed", &self.is_disposed())
            .finish_non_exhaustive()
    }
}

/// Whole milliseconds of a due time or period; `None` is `Infinite`.
fn ms_of(d: Option<Duration>) -> Option<u64> {
    d.map(|d| ms_ceil(d).min(LONG_MAX_MS))
}

impl Timer {
    /// A timer on the current loop (.NET's `new Timer(callback, state,
    /// dueTime, period)`): `callback` runs `due` from now (`None`:
    /// `Timeout.Infinite`, not started; zero: 1 ms on, never inline),
    /// then every `period` (`None` or zero: once). The callback receives
    /// the loop and a handle to its timer, so it can change or dispose it.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use timerloop::{EventLoop, time::dotnet::Timer};
    /// let fired = Rc::new(Cell::new(0));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let f = fired.clone();
    /// let _t = lp.scope(|| {
    ///     Timer::new(move |lp, _| f.set(lp.now()), Some(Duration::from_millis(30)), None)
    /// });
    /// lp.run().unwrap();
    /// assert_eq!(fired.get(), 30);
    /// ```
    ///
    /// [`Duration::MAX`] as `due` or `period` is the longest timer, never
    /// an overflow: a due time or period is kept up to
    /// [`LONG_MAX_MS`] (2^53 − 1 ms, about 285,000
    /// years), and a deadline beyond the end of loop time saturates there.
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    #[must_use = "dropping the last handle disposes the timer: keep one while it should fire"]
    #[track_caller]
    pub fn new<F>(callback: F, due: Option<Duration>, period: Option<Duration>) -> Timer
    where
        F: FnMut(&mut EventLoop, &Timer) + 'static,
    {
        let shared = current_shared();
        let queue = shared.layer::<Queue>();
        let id = queue.created.get();
        queue.created.set(id + 1);
        let timer = Timer {
            state: Rc::new(State {
                shared,
                queue,
                id,
                callback: RefCell::new(Some(Box::new(callback))),
                key: Cell::new(None),
                start: Cell::new(0),
                due: Cell::new(0),
                period: Cell::new(None),
                disposed: Cell::new(false),
                refed: Cell::new(true),
            }),
        };
        timer.change(due, period);
        timer
    }

    /// Re-arms the timer (.NET's `Change(dueTime, period)`): `due` from now
    /// (`None`: disabled, the period kept for a later change; zero: 1 ms
    /// on, never inline), then every `period` (`None` or zero: once).
    /// Whatever was scheduled before is dropped, even a run that was due.
    /// Returns `false` if the timer was disposed (and does nothing then),
    /// `true` otherwise.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc, time::Duration};
    /// use timerloop::{EventLoop, time::dotnet::Timer};
    /// let ms = Duration::from_millis;
    /// let runs = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let r = runs.clone();
    /// let timer = lp.scope(|| Timer::new(move |lp, _| r.borrow_mut().push(lp.now()), None, None));
    /// assert!(timer.change(Some(ms(40)), None)); // start it: once, at 40
    /// lp.run().unwrap();
    /// assert!(timer.change(Some(ms(10)), Some(ms(0)))); // period 0: once again
    /// lp.run().unwrap();
    /// assert_eq!(*runs.borrow(), [40, 50]);
    /// timer.dispose();
    /// assert!(!timer.change(Some(ms(10)), None));
    /// ```
    ///
    pub fn change(&self, due: Option<Duration>, period: Option<Duration>) -> bool {
        let st = &self.state;
        if st.disposed.get() {
            return false;
        }
        let q = &st.queue;
        q.remove(st);
        st.period.set(ms_of(period).filter(|&p| p > 0));
        if let Some(due) = ms_of(due) {
            let now = st.shared.now_ms();
            st.start.set(now);
            st.due.set(due);
            // Due zero is 1 ms on, as the native timeout would be: its
            // deadline is never `now`, so a queue already armed for `now`
            // (or firing at `now`, with this timer in its snapshot under
            // the same key) does not run it in this timers phase.
            q.insert(st, now.saturating_add(due.max(1)), now);
        }
        q.request_sync(&st.shared);
        true
    }

    /// Disposes the timer (.NET's `Dispose()`): it never runs again, and a
    /// run that was due is dropped. Returns `false` if it was already
    /// disposed. (A callback running at that moment finishes.)
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use timerloop::{EventLoop, time::dotnet::Timer};
    /// let fired = Rc::new(Cell::new(false));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let f = fired.clone();
    /// let t = lp.scope(|| Timer::new(move |_, _| f.set(true), Some(Duration::ZERO), None));
    /// assert!(t.dispose());
    /// assert!(!t.dispose());
    /// lp.run().unwrap();
    /// assert!(!fired.get());
    /// assert_eq!(lp.now(), 0, "a disposed timer keeps nothing alive");
    /// ```
    pub fn dispose(&self) -> bool {
        let st = &self.state;
        if st.disposed.replace(true) {
            return false;
        }
        st.queue.remove(st);
        st.callback.borrow_mut().take();
        st.queue.request_sync(&st.shared);
        true
    }

    /// Whether the timer was disposed.
    ///
    /// ```
    /// use timerloop::{EventLoop, time::dotnet::Timer};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.scope(|| Timer::new(|_, _| {}, None, None));
    /// assert!(!t.is_disposed());
    /// t.dispose();
    /// assert!(t.is_disposed());
    /// ```
    pub fn is_disposed(&self) -> bool {
        self.state.disposed.get()
    }

    /// When the timer is next due, if it is scheduled.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::{Instant, dotnet::Timer}};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.scope(|| {
    ///     let t = Timer::new(|_, _| {}, Some(Duration::from_millis(5)), None);
    ///     assert_eq!(t.next_due(), Some(Instant::now() + Duration::from_millis(5)));
    ///     t.change(None, None);
    ///     assert_eq!(t.next_due(), None);
    /// });
    /// ```
    pub fn next_due(&self) -> Option<Instant> {
        self.state.key.get().map(|k| Instant::from_millis(k.0))
    }

    /// The period of a periodic timer (`None` for a one-shot).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::dotnet::Timer};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let p = Some(Duration::from_millis(20));
    /// let t = lp.scope(|| Timer::new(|_, _| {}, None, p));
    /// assert_eq!(t.period(), p, "kept while disabled");
    /// ```
    pub fn period(&self) -> Option<Duration> {
        self.state.period.get().map(Duration::from_millis)
    }

    /// Whether the timer keeps the loop alive while it is scheduled (by
    /// default it does, as a Node timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::dotnet::Timer};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.scope(|| Timer::new(|_, _| {}, Some(Duration::from_secs(1)), None));
    /// assert!(t.has_ref());
    /// ```
    pub fn has_ref(&self) -> bool {
        self.state.refed.get()
    }

    /// Makes the timer keep the loop alive while scheduled (`true`, the
    /// default) or not (`false`, Node's `unref()`). A .NET `Timer` never
    /// keeps its process alive; `set_ref(false)` is that behaviour: a
    /// housekeeping timer that lets `run` return once the program's other
    /// work is done. The choice holds across `change`.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use timerloop::{EventLoop, time::dotnet::Timer};
    /// let sweeps = Rc::new(Cell::new(0));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let s = sweeps.clone();
    /// let every = Some(Duration::from_millis(60));
    /// let sweep = lp.scope(|| Timer::new(move |_, _| s.set(s.get() + 1), every, every));
    /// sweep.set_ref(false); // a cache sweep: no reason to keep running
    /// lp.set_timeout(200, |_| {}); // the program's own work
    /// lp.run().unwrap();
    /// assert_eq!((lp.now(), sweeps.get()), (200, 3)); // at 60, 120 and 180
    /// ```
    pub fn set_ref(&self, refed: bool) {
        let st = &self.state;
        if st.refed.replace(refed) == refed {
            return;
        }
        if st.key.get().is_some() {
            let q = &st.queue;
            q.refed.set(if refed {
                q.refed.get() + 1
            } else {
                q.refed.get() - 1
            });
            q.request_sync(&st.shared);
        }
    }
}

/// What a [`PeriodicTimer`] shares with its timer's callback.
#[derive(Default)]
struct Ticks {
    pending: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

/// `System.Threading.PeriodicTimer`: a tick every period, awaited with
/// [`wait_for_next_tick`](PeriodicTimer::wait_for_next_tick). Ticks that
/// come while nobody waits **coalesce into one**; the period does not
/// drift (a [`Timer`] underneath). While it exists it keeps ticking, and
/// keeps the loop alive, as `setInterval` does; drop it or
/// [`dispose`](PeriodicTimer::dispose) it to stop.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time::{Instant, dotnet::PeriodicTimer}};
/// let mut lp = EventLoop::with_virtual_clock();
/// let seen = lp
///     .block_on(async {
///         let mut t = PeriodicTimer::new(Duration::from_millis(100)).unwrap();
///         let start = Instant::now();
///         let mut seen = Vec::new();
///         while t.wait_for_next_tick().await {
///             seen.push((Instant::now() - start).as_millis());
///             if seen.len() == 3 {
///                 t.dispose();
///             }
///         }
///         seen
///     })
///     .unwrap();
/// assert_eq!(seen, [100, 200, 300]);
/// ```
pub struct PeriodicTimer {
    timer: Timer,
    ticks: Rc<Ticks>,
}

impl fmt::Debug for PeriodicTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeriodicTimer")
            .field("period", &self.timer.period())
            .field("tick_pending", &self.ticks.pending.get())
            .field("disposed", &self.timer.is_disposed())
            .finish()
    }
}

impl PeriodicTimer {
    /// A periodic timer whose first tick is one `period` from now (.NET's
    /// `new PeriodicTimer(period)`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::{InvalidPeriod, dotnet::PeriodicTimer}};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.scope(|| {
    ///     assert!(PeriodicTimer::new(Duration::from_millis(10)).is_ok());
    ///     assert_eq!(PeriodicTimer::new(Duration::ZERO).unwrap_err(), InvalidPeriod::zero());
    /// });
    /// ```
    ///
    /// [`Duration::MAX`] is allowed: a tick at the end of loop time.
    ///
    /// # Errors
    ///
    /// [`InvalidPeriod`] for a zero period (.NET throws
    /// `ArgumentOutOfRangeException`).
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    #[track_caller]
    pub fn new(period: Duration) -> Result<PeriodicTimer, InvalidPeriod> {
        InvalidPeriod::check(period)?;
        let ticks = Rc::new(Ticks::default());
        let t = ticks.clone();
        let timer = Timer::new(
            move |_, _| {
                t.pending.set(true);
                wake_stored(&t.waker);
            },
            Some(period),
            Some(period),
        );
        Ok(PeriodicTimer { timer, ticks })
    }

    /// Waits for the next tick (.NET's `WaitForNextTickAsync`): `true` at
    /// the tick, at once if one came since the last wait (however many
    /// came: they coalesce); `false` once the timer is disposed. Dropping
    /// the future cancels only this wait.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::dotnet::PeriodicTimer};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (first, second, at) = lp
    ///     .block_on(async {
    ///         let mut t = PeriodicTimer::new(Duration::from_millis(10)).unwrap();
    ///         timerloop::time::sleep(Duration::from_millis(35)).await; // ticks at 10, 20, 30
    ///         let first = t.wait_for_next_tick().await; // at once: one coalesced tick
    ///         let second = t.wait_for_next_tick().await; // the tick at 40
    ///         (first, second, timerloop::time::Instant::now())
    ///     })
    ///     .unwrap();
    /// assert!(first && second);
    /// assert_eq!(lp.scope(|| timerloop::time::Instant::now() - at), Duration::ZERO);
    /// assert_eq!(lp.now(), 40);
    /// ```
    pub fn wait_for_next_tick(&mut self) -> WaitForNextTick<'_> {
        WaitForNextTick { timer: self }
    }

    /// [`wait_for_next_tick`](Self::wait_for_next_tick) as a poll function
    /// on a shared timer, for a timer that one task waits on while another
    /// disposes it or changes its period (.NET's `Dispose()` from a
    /// shutdown path ending a `while (await t.WaitForNextTickAsync())`
    /// loop). As tokio's `poll_` methods, it keeps one waker: its latest
    /// caller's.
    ///
    /// ```
    /// use std::{future::poll_fn, rc::Rc, time::Duration};
    /// use timerloop::{EventLoop, task, time::{self, dotnet::PeriodicTimer}};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let ticks = lp
    ///     .block_on(async {
    ///         let t = Rc::new(PeriodicTimer::new(Duration::from_millis(100)).unwrap());
    ///         let stop = t.clone();
    ///         task::spawn(async move {
    ///             time::sleep(Duration::from_millis(350)).await;
    ///             stop.dispose(); // the waiting loop below ends
    ///         });
    ///         let mut ticks = 0;
    ///         while poll_fn(|cx| t.poll_wait_for_next_tick(cx)).await {
    ///             ticks += 1;
    ///         }
    ///         ticks
    ///     })
    ///     .unwrap();
    /// assert_eq!((ticks, lp.now()), (3, 350));
    /// ```
    pub fn poll_wait_for_next_tick(&self, cx: &mut Context<'_>) -> Poll<bool> {
        if self.timer.is_disposed() {
            return Poll::Ready(false);
        }
        if self.ticks.pending.replace(false) {
            return Poll::Ready(true);
        }
        store_waker(&mut self.ticks.waker.borrow_mut(), cx.waker());
        Poll::Pending
    }

    /// The period.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::dotnet::PeriodicTimer};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.scope(|| PeriodicTimer::new(Duration::from_millis(7)).unwrap());
    /// assert_eq!(t.period(), Duration::from_millis(7));
    /// ```
    pub fn period(&self) -> Duration {
        self.timer.period().unwrap_or_default()
    }

    /// Sets the period (.NET's `Period` setter, `Change(p, p)`): the next
    /// tick is one new period from now. A tick already pending stays.
    /// Does nothing on a disposed timer.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::dotnet::PeriodicTimer};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block_on(async {
    ///     let mut t = PeriodicTimer::new(Duration::from_millis(100)).unwrap();
    ///     timerloop::time::sleep(Duration::from_millis(30)).await;
    ///     t.set_period(Duration::from_millis(50)).unwrap();
    ///     t.wait_for_next_tick().await;
    /// })
    /// .unwrap();
    /// assert_eq!(lp.now(), 80);
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidPeriod`] for a zero period; the timer is left unchanged.
    pub fn set_period(&self, period: Duration) -> Result<(), InvalidPeriod> {
        InvalidPeriod::check(period)?;
        self.timer.change(Some(period), Some(period));
        Ok(())
    }

    /// Stops the timer for good (.NET's `Dispose`): a tick not yet waited
    /// for is dropped and every later wait returns `false`. A wait pending
    /// meanwhile (another task's, on a timer shared in an `Rc`, through
    /// [`poll_wait_for_next_tick`](Self::poll_wait_for_next_tick)) ends
    /// with `false`, as .NET's does when another thread disposes the
    /// timer.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::dotnet::PeriodicTimer};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let got = lp
    ///     .block_on(async {
    ///         let mut t = PeriodicTimer::new(Duration::from_millis(10)).unwrap();
    ///         timerloop::time::sleep(Duration::from_millis(15)).await;
    ///         t.dispose(); // the tick at 10 was never waited for
    ///         t.wait_for_next_tick().await
    ///     })
    ///     .unwrap();
    /// assert!(!got);
    /// ```
    pub fn dispose(&self) {
        self.timer.dispose();
        self.ticks.pending.set(false);
        wake_stored(&self.ticks.waker);
    }

    /// Whether the timer keeps the loop alive (by default it does, as
    /// `setInterval`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::dotnet::PeriodicTimer};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.scope(|| PeriodicTimer::new(Duration::from_millis(10)).unwrap());
    /// assert!(t.has_ref());
    /// ```
    pub fn has_ref(&self) -> bool {
        self.timer.has_ref()
    }

    /// Makes the timer keep the loop alive (`true`, the default) or not
    /// (`false`: as a .NET `PeriodicTimer`, which never keeps its process
    /// alive). A task waiting on an unrefed timer does not keep the loop
    /// running.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use timerloop::{EventLoop, time::dotnet::PeriodicTimer};
    /// let ticks = Rc::new(Cell::new(0));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = ticks.clone();
    /// lp.spawn(async move {
    ///     let mut timer = PeriodicTimer::new(Duration::from_millis(10)).unwrap();
    ///     timer.set_ref(false);
    ///     while timer.wait_for_next_tick().await {
    ///         t.set(t.get() + 1);
    ///     }
    /// });
    /// lp.set_timeout(35, |_| {});
    /// lp.run().unwrap();
    /// assert_eq!((lp.now(), ticks.get()), (35, 3));
    /// ```
    pub fn set_ref(&self, refed: bool) {
        self.timer.set_ref(refed);
    }
}

/// The future of [`PeriodicTimer::wait_for_next_tick`]: `true` at the next
/// tick, `false` once the timer is disposed.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time::dotnet::PeriodicTimer};
/// let mut lp = EventLoop::with_virtual_clock();
/// let ticks = lp
///     .block_on(async {
///         let mut t = PeriodicTimer::new(Duration::from_millis(10)).unwrap();
///         let first = t.wait_for_next_tick().await;
///         t.dispose();
///         (first, t.wait_for_next_tick().await)
///     })
///     .unwrap();
/// assert_eq!(ticks, (true, false));
/// assert_eq!(lp.now(), 10);
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct WaitForNextTick<'a> {
    timer: &'a mut PeriodicTimer,
}

impl fmt::Debug for WaitForNextTick<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitForNextTick")
            .field("timer", &self.timer)
            .finish()
    }
}

impl Future for WaitForNextTick<'_> {
    type Output = bool;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        self.timer.poll_wait_for_next_tick(cx)
    }
}

impl Drop for WaitForNextTick<'_> {
    fn drop(&mut self) {
        self.timer.ticks.waker.borrow_mut().take();
    }
}
