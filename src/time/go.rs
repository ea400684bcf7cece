//! Go's timers (Go 1.23 and later): [`Timer`], [`after`], [`after_func`]
//! and [`Ticker`], on Node timeouts of the current loop.
//!
//! # Invariants
//!
//! - **A value is the scheduled time** (Go's `sendTime` subtracts the
//!   delay): a receive that comes late still gets the [`Instant`] the value
//!   was due at, never the time it was received.
//! - **Active until received or stopped.** A [`Timer`] is active from
//!   [`Timer::new`] or [`Timer::reset`] until its value is received or it
//!   is stopped. A deadline that has passed but whose value nobody
//!   received leaves it active: [`stop`](Timer::stop) and
//!   [`reset`](Timer::reset) return `true` and the value is discarded.
//!   Received means taken by a receive ([`recv`](Timer::recv)'s poll,
//!   [`poll_recv`](Timer::poll_recv), [`try_recv`](Timer::try_recv)). A
//!   task waiting in `recv` takes the value when it is next polled, after
//!   the timers phase has woken it; Go's runtime hands the value to a
//!   goroutine blocked on `t.C` at the deadline itself. So where the loop
//!   is busy past a deadline (a callback or task that runs on) and the
//!   same callback then stops or resets a timer another task waits on
//!   (both sharing it through a `RefCell`), `stop` and `reset` return
//!   `true` here where Go's return `false`, and the waiting task does not
//!   get the old value.
//!   After a receive or a stop, `stop` returns `false` and a receive pends
//!   forever (Go blocks forever; a [`block_on`](EventLoop::block_on) that
//!   waits for nothing else reports [`Error::Stalled`](crate::Error::Stalled)).
//! - **No stale value, by construction.** A value is never stored: it is
//!   computed when it is received, from the current settings (the
//!   deadline, or the ticker's next tick), as Go 1.23's runtime does when
//!   a goroutine receives from a timer channel (`maybeRunChan`). Every
//!   stop, reset and drop also bumps a generation number, and a Node
//!   timeout armed for an older generation does nothing when it fires: it
//!   cannot wake, re-arm or call anything.
//! - **One value at most.** A [`Ticker`] holds at most one pending tick;
//!   ticks that come while one is unreceived are dropped, and the next
//!   tick stays on the original grid: a tick scheduled at `when` and
//!   received at `now` makes the next one `when + p*(1 + (now-when)/p)`
//!   (Go's `unlockAndRun`).
//! - **Never before `d`** (Go: "after at least duration d"). A deadline
//!   is the loop's clock rounded **up** to the millisecond, plus `d`
//!   rounded up to whole milliseconds; a Node timeout counts from the
//!   clock rounded down, and may fire up to 1 ms short of its delay in
//!   real time, as Node's does.
//! - **Node timeouts, in Node's order.** A timer or [`AfterFunc`] is a
//!   Node timeout made when it is created or reset, for the time left to
//!   its deadline. On a virtual clock at a whole millisecond (where the
//!   two roundings agree) a timer of `d` is a timeout of `d`, FIFO with
//!   the [`set_timeout`](EventLoop::set_timeout)s of that duration made
//!   around it; a fraction of a millisecond into one, it is 1 ms longer.
//!   A [`Timer`] of [`Duration::ZERO`] is due at once: its value is
//!   available immediately and it has no Node timeout. An `AfterFunc` of
//!   zero is a 1 ms timeout (Node coerces 0 to 1). A running ticker has
//!   one Node timeout armed for its next tick.
//! - **Loop time.** Values are [`Instant`]s of the loop's clock (real or
//!   virtual), in whole milliseconds. At the end of loop time (a
//!   saturated virtual clock, about 584 years) every deadline has passed:
//!   a timer longer than that is due there, and a ticker's grid ends
//!   there, with a last tick, after which it is stopped.
//! - **One receiver at a time.** Only the task that polled last is woken
//!   ([`Timer::poll_recv`]); `recv` borrows the timer mutably, so two
//!   tasks can wait on one only by sharing it through a `RefCell` and
//!   polling it in turn, and then the first to wait is not woken again.
//!   Go serves the goroutines blocked on one channel in turn (a pool of
//!   workers ranging over one ticker); here give each worker its own
//!   ticker, or hand the ticks on through a queue.
//! - **Keeping the loop alive.** A pending timer, a running ticker and an
//!   `AfterFunc` not yet dispatched keep the loop alive, as a refed timeout
//!   does (`set_ref(false)` opts out, Node's `unref()`). A stopped timer, a
//!   received one, one whose Node timeout already fired, and a stopped
//!   ticker do not.
//! - **Dropping** a [`Timer`], [`After`] or [`Ticker`] clears its Node
//!   timeout before anything else runs. Dropping every [`AfterFunc`]
//!   handle does **not** cancel the call, as in Go (the runtime keeps an
//!   `AfterFunc` timer); only [`AfterFunc::stop`] does.
//! - **One thread.** Operations happen one at a time on the loop's thread,
//!   and a firing is a loop callback that runs to its end, so the races of
//!   Go's multi-threaded runtime cannot happen here; in particular
//!   golang/go#80760 (open in 2026: a `Stop` that returns `true`, then a
//!   `Reset` that also returns `true`, both counting the same firing, still
//!   in flight on another thread, as pending): after a `stop`, `reset`
//!   returns `false`.
//! - **The current loop.** The constructors use the thread's current loop
//!   (in `run`, `block_on`, spawned tasks, callbacks and
//!   [`EventLoop::scope`]) and panic elsewhere, as
//!   [`time::sleep`](crate::time::sleep) does; the methods use the loop
//!   the value was made on.
//!
//! # Go and here
//!
//! | Go | here |
//! |---|---|
//! | `t := time.NewTimer(d)` | `let mut t = go::Timer::new(d);` |
//! | `t.Stop()` | [`t.stop()`](Timer::stop) → `bool` |
//! | `t.Reset(d)` | [`t.reset(d)`](Timer::reset) → `bool` |
//! | `v := <-t.C` | `let v = t.recv().await;` ([`Timer::recv`], or [`Timer::poll_recv`]) |
//! | `select { case v := <-t.C: …; default: … }` | [`t.try_recv()`](Timer::try_recv) → `Option<Instant>` |
//! | `v := <-time.After(d)` | `let v = go::after(d).await;` ([`after`]) |
//! | `f := time.AfterFunc(d, fn)`; `f.Stop()`; `f.Reset(d)` | `let f = go::after_func(d, fn);` [`f.stop()`](AfterFunc::stop); [`f.reset(d)`](AfterFunc::reset); `fn` runs as a loop callback |
//! | `tk := time.NewTicker(d)` (panics if `d <= 0`) | `let mut tk = go::Ticker::new(d)?;` ([`Ticker::new`]: [`InvalidPeriod`] for zero) |
//! | `tk.Stop()` | [`tk.stop()`](Ticker::stop) |
//! | `tk.Reset(d)` (panics if `d <= 0`) | [`tk.reset(d)?`](Ticker::reset) |
//! | `<-tk.C` | [`tk.recv().await`](Ticker::recv), [`tk.try_recv()`](Ticker::try_recv) |
//! | `for range time.Tick(d)` | a [`Ticker`] that is never stopped (Go's `Tick` returns a nil channel, which blocks forever, for `d <= 0`; here that is the [`InvalidPeriod`] error) |
//! | `GODEBUG=asynctimerchan=1` | not offered (see below) |
//!
//! `GODEBUG=asynctimerchan=1` brings back the pre-1.23 channel: a buffer of
//! one value filled when the timer fires, so a receive after `Stop` or
//! `Reset` can get a stale value unless the caller drains it
//! (`if !t.Stop() { <-t.C }`, golang/go#11513, #14383). Its only use is
//! compatibility with code written for that hazard, and Go may remove the
//! setting in Go 1.27 or later. Here values are computed on receive, so
//! there is no buffer to bring back, and a program ported from Go wants
//! the 1.23 behaviour anyway.
//!
//! # How it runs
//!
//! Values are computed when received ([`Timer::poll_recv`] and
//! [`Ticker::poll_recv`] compare the loop's clock with the scheduled
//! time), so a receive that comes after the deadline gets the value at
//! once, even before the loop's timers phase has run the Node timeout, as
//! Go's receive does. The Node timeout only wakes a task waiting in
//! `recv` (in Node's order, from the timers phase) and keeps the loop
//! alive. A ticker's Node timeout fires at each tick of its grid, like a
//! `setInterval`, whether or not the last tick was received; a tick that
//! nobody receives is simply not taken, which is Go's "drop ticks to make
//! up for slow receivers".
//!
//! ```
//! use std::time::Duration;
//! use timerloop::{EventLoop, time::go};
//! let mut lp = EventLoop::with_virtual_clock();
//! let (first, late) = lp
//!     .block_on(async {
//!         let start = timerloop::time::Instant::now();
//!         let mut tk = go::Ticker::new(Duration::from_millis(100)).unwrap();
//!         let first = tk.recv().await - start; // 100
//!         // Busy until 350: the tick of 200 waits, the one of 300 is dropped.
//!         timerloop::EventLoop::with_current(|lp| lp.block(250));
//!         let late = tk.recv().await - start; // 200, received at 350
//!         assert_eq!(tk.recv().await - start, Duration::from_millis(400));
//!         (first, late)
//!     })
//!     .unwrap();
//! assert_eq!((first.as_millis(), late.as_millis()), (100, 200));
//! ```

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::{Instant, InvalidPeriod};
use crate::task::{store_waker, wake_stored};
use crate::timers::{LONG_MAX_MS, LoopShared, current_shared};
use crate::uv::{ms_ceil, ms_floor};
use crate::{EventLoop, Timeout};

/// The longest one timeout can be (a long timer, as `sleep`'s); a
/// deadline further away is reached in legs.
const MAX_MS: u64 = LONG_MAX_MS;

// ----- the part every Go timer shares --------------------------------------

/// The loop-side state of a [`Timer`], [`Ticker`] or [`AfterFunc`], shared
/// with the Node timeout's callback.
struct Core {
    shared: Rc<LoopShared>,
    /// When the value is due (the next tick, for a ticker; the call, for
    /// an `AfterFunc`), in loop milliseconds.
    when: Cell<u64>,
    /// Timer: its value is neither received nor stopped. Ticker: running.
    /// AfterFunc: neither dispatched nor stopped.
    active: Cell<bool>,
    /// Bumped by every stop, reset and drop. A Node timeout armed for
    /// another generation does nothing when it fires, and a queued arming
    /// for another generation makes no timeout.
    generation: Cell<u64>,
    refed: Cell<bool>,
    /// The Node timeout, with the generation it was armed for.
    timer: Cell<Option<(u64, Timeout)>>,
    /// The current generation's value (a timer's, a ticker's pending
    /// tick) was found due by its Node timeout, which read the loop's
    /// time, or at once (a zero timer): it is due to a receive whatever a
    /// later read of the clock says, so a receiver woken for it gets it.
    /// Cleared by [`restart`](Self::restart); `AfterFunc` has no use for it.
    reached: Cell<bool>,
}

impl Core {
    fn new(shared: Rc<LoopShared>) -> Core {
        Core {
            shared,
            when: Cell::new(0),
            active: Cell::new(false),
            generation: Cell::new(0),
            refed: Cell::new(true),
            timer: Cell::new(None),
            reached: Cell::new(false),
        }
    }

    /// Retires the current generation: what is armed or queued for it
    /// will do nothing.
    fn bump(&self) -> u64 {
        let g = self.generation.get().wrapping_add(1);
        self.generation.set(g);
        g
    }

    /// Starts a new, active generation due at `when`.
    fn restart(&self, when: u64) {
        self.bump();
        self.when.set(when);
        self.active.set(true);
        self.reached.set(false);
    }

    fn now(&self) -> u64 {
        self.shared.now_ms()
    }

    /// One read of the loop's clock, in whole milliseconds rounded down
    /// (the loop's time, which a Node timeout counts from) and rounded up
    /// (what a Go deadline counts from, so that it is never before `d`
    /// has passed: Go's "after at least duration d").
    fn now_down_up(&self) -> (u64, u64) {
        let t = self.shared.clock.now();
        let down = ms_floor(t);
        // The end of time (a saturated clock) stays the end of time.
        let up = if down == u64::MAX { down } else { ms_ceil(t) };
        (down, up)
    }

    /// Whether the value is due: active, and its deadline reached (its
    /// Node timeout fired) or its time come on the loop's clock (a receive
    /// made before the timers phase ran that timeout).
    fn due(&self) -> bool {
        self.active.get() && (self.reached.get() || self.now() >= self.when.get())
    }
}

/// What a Go timer does when its Node timeout reaches its deadline.
trait Fire: Sized + 'static {
    fn core(&self) -> &Core;
    /// The armed deadline was reached, for the current generation, while
    /// active.
    fn fire(self: &Rc<Self>, lp: &mut EventLoop);
}

/// Makes the Node timeout for `deadline`, counted from `start` (the loop
/// time when it was asked for), for generation `generation`.
fn arm<E: Fire>(me: &Rc<E>, lp: &mut EventLoop, start: u64, deadline: u64, generation: u64) {
    let c = me.core();
    let left = deadline.saturating_sub(start).clamp(1, MAX_MS);
    let e = me.clone();
    let t = lp.timeout_started_at(start, left, move |lp| on_fire(&e, lp, generation, deadline));
    if !c.refed.get() {
        let _ = lp.unref_timeout(t);
    }
    c.timer.set(Some((generation, t)));
}

fn on_fire<E: Fire>(me: &Rc<E>, lp: &mut EventLoop, generation: u64, deadline: u64) {
    let c = me.core();
    if c.timer.get().is_some_and(|(g, _)| g == generation) {
        c.timer.set(None);
    }
    if generation != c.generation.get() || !c.active.get() {
        return; // stopped, reset, received or dropped: nothing to do
    }
    let now = lp.loop_time();
    if now < deadline {
        // A deadline beyond one timeout's reach: the next leg.
        arm(me, lp, now, deadline, generation);
        return;
    }
    me.fire(lp);
}

/// Queues the arming of the current generation's Node timeout for
/// `deadline`, from `start`; it makes nothing if the generation is over
/// by then.
fn schedule<E: Fire>(me: &Rc<E>, start: u64, deadline: u64) {
    let generation = me.core().generation.get();
    let e = me.clone();
    me.core().shared.defer(move |lp| {
        let c = e.core();
        if c.generation.get() == generation && c.active.get() {
            debug_assert!(c.timer.get().is_none(), "armed twice");
            arm(&e, lp, start, deadline, generation);
        }
    });
}

/// Queues the clearing of a Node timeout that no longer belongs to the
/// current, active generation.
fn retire<E: Fire>(me: &Rc<E>) {
    if me.core().timer.get().is_none() {
        // Nothing armed; a queued arming checks the generation itself.
        return;
    }
    let e = me.clone();
    me.core().shared.defer(move |lp| {
        let c = e.core();
        if let Some((g, t)) = c.timer.get()
            && (g != c.generation.get() || !c.active.get())
        {
            c.timer.set(None);
            let _ = lp.clear_timeout(t);
        }
    });
}

/// Stops `me`: no longer active, no armed timeout or queued arming of it
/// fires, and its timeout goes. Whether it was active (Go's `Stop`).
fn halt<E: Fire>(me: &Rc<E>) -> bool {
    let c = me.core();
    let was = c.active.replace(false);
    c.bump();
    retire(me);
    was
}

/// What dropping a `Timer` or `Ticker` does: [`halt`], and nothing is
/// woken.
fn close<E: Fire>(me: &Rc<E>, waker: &RefCell<Option<Waker>>) {
    halt(me);
    waker.borrow_mut().take();
}

fn set_ref<E: Fire>(me: &Rc<E>, refed: bool) {
    let c = me.core();
    if c.refed.replace(refed) == refed {
        return;
    }
    let e = me.clone();
    c.shared.defer(move |lp| {
        let c = e.core();
        if let Some((_, t)) = c.timer.get() {
            let _ = if c.refed.get() {
                lp.ref_timeout(t)
            } else {
                lp.unref_timeout(t)
            };
        }
    });
}

// ----- Timer -----------------------------------------------------------------

struct TimerEntry {
    core: Core,
    waker: RefCell<Option<Waker>>,
}

impl Fire for TimerEntry {
    fn core(&self) -> &Core {
        &self.core
    }

    fn fire(self: &Rc<Self>, _lp: &mut EventLoop) {
        // The value stays until received or discarded (G5): only wake.
        self.core.reached.set(true);
        wake_stored(&self.waker);
    }
}

/// Go's `time.Timer` made by `NewTimer`: one value, the scheduled time,
/// received with [`recv`](Timer::recv) (Go's `<-t.C`). See the
/// [module docs](self) for the rules.
///
/// Stop and reset follow Go 1.23: `stop` returns `true` whenever the
/// value has not been received (even if its deadline has passed), and no
/// receive after a `stop` or `reset` ever yields a value of the old
/// settings. On one thread the race of golang/go#80760 cannot happen: in
/// Go a `Stop` can return `true` and the `Reset` right after it `true`
/// again, both counting as pending the same firing, still in flight on
/// another thread. Here a firing is a loop callback that runs to its end,
/// never during a `stop` or `reset`, so after `stop`, `reset` returns
/// `false`.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time::{Instant, go}};
/// let mut lp = EventLoop::with_virtual_clock();
/// let waited = lp
///     .block_on(async {
///         let start = Instant::now();
///         let mut t = go::Timer::new(Duration::from_millis(30));
///         t.recv().await - start
///     })
///     .unwrap();
/// assert_eq!(waited, Duration::from_millis(30));
/// ```
pub struct Timer {
    entry: Rc<TimerEntry>,
}

impl fmt::Debug for Timer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.entry.core;
        f.debug_struct("Timer")
            .field("when", &Instant::from_millis(c.when.get()))
            .field("active", &c.active.get())
            .finish_non_exhaustive()
    }
}

impl Timer {
    /// A timer whose value is due `d` from now (Go's `time.NewTimer`),
    /// never before `d` has passed.
    ///
    /// `d` rounds up to whole milliseconds, counted from the loop's clock
    /// rounded up (see the [module docs](self)). A non-zero `d` is a Node
    /// timeout made now; on a virtual clock at a whole millisecond it is a
    /// timeout of `d`, FIFO with the `set_timeout`s of that duration.
    /// [`Duration::ZERO`] is due at once (its value can be received
    /// immediately) and makes no timeout.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut now = lp.scope(|| go::Timer::new(Duration::ZERO));
    /// assert!(lp.scope(|| now.try_recv()).is_some());
    /// let mut later = lp.scope(|| go::Timer::new(Duration::from_millis(5)));
    /// assert!(lp.scope(|| later.try_recv()).is_none());
    /// assert_eq!(lp.stats().timers, 1);
    /// ```
    ///
    /// Zero is due at once (no Node timeout); [`Duration::MAX`] is the
    /// longest timer (its deadline saturates at the end of loop time, see
    /// [`sleep`](crate::time::sleep)), which [`stop`](Self::stop) stops as any
    /// other.
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    #[track_caller]
    pub fn new(d: Duration) -> Timer {
        let entry = Rc::new(TimerEntry {
            core: Core::new(current_shared()),
            waker: RefCell::new(None),
        });
        let timer = Timer { entry };
        timer.start(d);
        timer
    }

    /// A new generation due `d` from now.
    fn start(&self, d: Duration) {
        let c = &self.entry.core;
        let (now, up) = c.now_down_up();
        let ms = ms_ceil(d);
        let when = if ms == 0 { now } else { up.saturating_add(ms) };
        c.restart(when);
        c.reached.set(ms == 0);
        retire(&self.entry);
        if ms > 0 {
            schedule(&self.entry, now, when);
        } else {
            // Due at once, with no Node timeout to wake a task already
            // waiting in `recv` (a reset of a timer it waits on): woken
            // here, as Go hands the value to a blocked receiver.
            wake_stored(&self.entry.waker);
        }
    }

    /// Stops the timer (Go's `t.Stop()`): `true` if this call stopped it,
    /// that is, if it was active (its value not yet received, even if its
    /// deadline has passed); `false` if its value was received or it was
    /// already stopped. A value not received is discarded: a receive after
    /// `stop` pends until a [`reset`](Self::reset).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut t = lp.scope(|| go::Timer::new(Duration::from_millis(10)));
    /// lp.block(20); // the deadline passes, nobody receives
    /// assert!(t.stop(), "not received: still active");
    /// assert!(!t.stop());
    /// assert_eq!(lp.scope(|| t.try_recv()), None, "no stale value");
    /// ```
    pub fn stop(&mut self) -> bool {
        halt(&self.entry)
    }

    /// Makes the timer due `d` from now (Go's `t.Reset(d)`), whatever its
    /// state: returns `true` if it was active (a value not yet received is
    /// discarded), `false` if its value was received or it was stopped.
    /// The new Node timeout is made now, at the back of its duration's
    /// list. A reset to [`Duration::ZERO`] makes the value due at once and
    /// wakes a task waiting in [`recv`](Self::recv).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::{Instant, go}};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let got = lp
    ///     .block_on(async {
    ///         let start = Instant::now();
    ///         let mut t = go::Timer::new(Duration::from_millis(10));
    ///         assert!(t.reset(Duration::from_millis(50)), "it was active");
    ///         let v = t.recv().await;
    ///         assert!(!t.reset(Duration::from_millis(5)), "received: expired");
    ///         (v - start, t.recv().await - start)
    ///     })
    ///     .unwrap();
    /// assert_eq!(got, (Duration::from_millis(50), Duration::from_millis(55)));
    /// ```
    pub fn reset(&mut self, d: Duration) -> bool {
        let was = self.entry.core.active.get();
        self.start(d);
        was
    }

    /// Receives the value (Go's `<-t.C`): a future of the [`Instant`] the
    /// value was scheduled for, even if received later. It pends forever
    /// once the value was received or the timer stopped (until a
    /// [`reset`](Self::reset)). Cancel-safe: dropping it loses nothing.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::{self, Instant, go}};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (value, received) = lp
    ///     .block_on(async {
    ///         let start = Instant::now();
    ///         let mut t = go::Timer::new(Duration::from_millis(10));
    ///         time::sleep(Duration::from_millis(40)).await; // late
    ///         (t.recv().await - start, Instant::now() - start)
    ///     })
    ///     .unwrap();
    /// assert_eq!(value, Duration::from_millis(10), "the scheduled time");
    /// assert_eq!(received, Duration::from_millis(40));
    /// ```
    pub fn recv(&mut self) -> Recv<'_> {
        Recv {
            from: Source::Timer(self),
        }
    }

    /// Polls for the value; only the waker of the latest poll is woken.
    /// Ready once the deadline has come on the loop's clock (it does not
    /// wait for the loop's timers phase).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut t = lp.scope(|| go::Timer::new(Duration::from_millis(5)));
    /// let mut task = tokio_test::task::spawn(());
    /// assert!(task.enter(|cx, _| t.poll_recv(cx)).is_pending());
    /// lp.run().unwrap(); // the timer's Node timeout wakes the task
    /// assert!(task.is_woken());
    /// assert!(task.enter(|cx, _| t.poll_recv(cx)).is_ready());
    /// assert!(task.enter(|cx, _| t.poll_recv(cx)).is_pending(), "received");
    /// ```
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        match self.try_recv() {
            Some(v) => Poll::Ready(v),
            None => {
                store_waker(&mut self.entry.waker.borrow_mut(), cx.waker());
                Poll::Pending
            }
        }
    }

    /// Receives the value if it is due, without waiting (Go's
    /// `select { case v := <-t.C: …; default: … }`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut t = lp.scope(|| go::Timer::new(Duration::from_millis(5)));
    /// assert_eq!(t.try_recv(), None);
    /// lp.block(5);
    /// assert!(t.try_recv().is_some());
    /// assert_eq!(t.try_recv(), None, "one value");
    /// ```
    pub fn try_recv(&mut self) -> Option<Instant> {
        let e = &self.entry;
        if !e.core.due() {
            return None;
        }
        e.core.active.set(false);
        e.waker.borrow_mut().take();
        // Received before the timers phase ran its Node timeout.
        retire(e);
        Some(Instant::from_millis(e.core.when.get()))
    }

    /// Whether the timer keeps the loop alive while pending (by default it
    /// does, as a refed timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.scope(|| go::Timer::new(Duration::from_secs(1)));
    /// assert!(t.has_ref());
    /// ```
    pub fn has_ref(&self) -> bool {
        self.entry.core.refed.get()
    }

    /// Makes the timer keep the loop alive while pending (`true`, the
    /// default) or not (`false`, Node's `timeout.unref()`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.scope(|| go::Timer::new(Duration::from_secs(1)));
    /// t.set_ref(false);
    /// lp.run().unwrap(); // returns at once
    /// assert_eq!(lp.now(), 0);
    /// ```
    pub fn set_ref(&self, refed: bool) {
        set_ref(&self.entry, refed);
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        close(&self.entry, &self.entry.waker);
    }
}

/// Waits `d`, then gives the scheduled time (Go's `<-time.After(d)`): a
/// future that owns a [`Timer`]; dropping it stops the timer.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time::{Instant, go}};
/// let mut lp = EventLoop::with_virtual_clock();
/// let v = lp
///     .block_on(async {
///         let start = Instant::now();
///         go::after(Duration::from_millis(15)).await - start
///     })
///     .unwrap();
/// assert_eq!(v, Duration::from_millis(15));
/// ```
///
/// [`Duration::MAX`] is the longest timer, never an overflow; bound it
/// with [`time::timeout`](crate::time::timeout).
///
/// # Panics
///
/// If no loop is current on this thread.
#[track_caller]
pub fn after(d: Duration) -> After {
    After {
        timer: Timer::new(d),
    }
}

/// The future of [`after`]: its output is the [`Instant`] the value was
/// scheduled for.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time::go};
/// let mut lp = EventLoop::with_virtual_clock();
/// let a = lp.scope(|| go::after(Duration::from_millis(1)));
/// assert!(format!("{a:?}").starts_with("After"));
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct After {
    timer: Timer,
}

impl Future for After {
    type Output = Instant;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Instant> {
        self.get_mut().timer.poll_recv(cx)
    }
}

// ----- Recv ------------------------------------------------------------------

#[derive(Debug)]
enum Source<'a> {
    Timer(&'a mut Timer),
    Ticker(&'a mut Ticker),
}

/// A receive from a [`Timer`] or [`Ticker`] (Go's `<-t.C`), made by
/// [`Timer::recv`] and [`Ticker::recv`]: a future of the [`Instant`] the
/// value was scheduled for. Cancel-safe: a dropped `Recv` takes nothing.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time::go};
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.block_on(async {
///     let mut tk = go::Ticker::new(Duration::from_millis(10)).unwrap();
///     let a = tk.recv().await;
///     let b = tk.recv().await;
///     assert_eq!(b - a, Duration::from_millis(10));
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct Recv<'a> {
    from: Source<'a>,
}

impl Future for Recv<'_> {
    type Output = Instant;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Instant> {
        match &mut self.get_mut().from {
            Source::Timer(t) => t.poll_recv(cx),
            Source::Ticker(t) => t.poll_recv(cx),
        }
    }
}

// ----- Ticker ----------------------------------------------------------------

struct TickerEntry {
    core: Core,
    /// The period, in whole milliseconds (at least 1).
    period: Cell<u64>,
    waker: RefCell<Option<Waker>>,
}

impl TickerEntry {
    /// The tick after one scheduled at `when` and taken at `now`: on the
    /// grid, after `now` (Go's `when + period*(1 + delay/period)`). `None`
    /// at the end of loop time (a saturated virtual clock, about 584
    /// years): the grid has no point after it, and the ticker stops there
    /// instead of ticking at the same instant without end.
    fn next_after(&self, when: u64, now: u64) -> Option<u64> {
        let p = self.period.get();
        let skipped = 1 + now.saturating_sub(when) / p;
        let next = when.saturating_add(p.saturating_mul(skipped));
        (next > now).then_some(next)
    }
}

impl Fire for TickerEntry {
    fn core(&self) -> &Core {
        &self.core
    }

    fn fire(self: &Rc<Self>, lp: &mut EventLoop) {
        let c = &self.core;
        let now = lp.loop_time();
        let when = c.when.get();
        let next = if now >= when {
            // A tick is due: wake a waiting receiver. If nobody takes it,
            // it stays the one pending tick and this grid point's tick is
            // dropped.
            c.reached.set(true);
            wake_stored(&self.waker);
            self.next_after(when, now)
        } else {
            // Taken early by a receive (the next tick moved on): wait for it.
            Some(when)
        };
        // At the end of loop time the grid ends: nothing to arm, and the
        // pending tick stays until received.
        if let Some(next) = next {
            arm(self, lp, now, next, c.generation.get());
        }
    }
}

/// Go's `time.Ticker`: a tick every period, each value the time the tick
/// was scheduled for, received with [`recv`](Ticker::recv). See the
/// [module docs](self) for the rules.
///
/// The first tick is one period after [`new`](Ticker::new). At most one
/// tick is pending: a receiver that falls behind gets the oldest tick it
/// missed, and the ticks after it are dropped, keeping the original phase
/// (period 100, receiver busy until 350: it gets 100, then 400).
/// [`reset`](Ticker::reset) and [`stop`](Ticker::stop) discard a pending
/// tick, as Go 1.23 drains the channel. The race of golang/go#80760 (a
/// `Stop` and the `Reset` after it both counting a firing in flight on
/// another thread) is about `Timer`, whose `Stop` and `Reset` report
/// something (Go tracks in-flight sends only for one-shot timers); a
/// ticker here has no firing in flight either: a firing is a loop callback
/// that runs to its end on the loop's thread.
///
/// A running ticker keeps the loop alive, as a `setInterval` does.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time::{Instant, go}};
/// let mut lp = EventLoop::with_virtual_clock();
/// let ticks = lp
///     .block_on(async {
///         let start = Instant::now();
///         let mut tk = go::Ticker::new(Duration::from_millis(20)).unwrap();
///         let mut at = Vec::new();
///         for _ in 0..3 {
///             at.push((tk.recv().await - start).as_millis());
///         }
///         tk.stop();
///         at
///     })
///     .unwrap();
/// assert_eq!(ticks, [20, 40, 60]);
/// ```
pub struct Ticker {
    entry: Rc<TickerEntry>,
}

impl fmt::Debug for Ticker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.entry.core;
        f.debug_struct("Ticker")
            .field("period", &Duration::from_millis(self.entry.period.get()))
            .field("next", &Instant::from_millis(c.when.get()))
            .field("running", &c.active.get())
            .finish_non_exhaustive()
    }
}

impl Ticker {
    /// A ticker whose first tick is `period` from now, then one every
    /// `period` (Go's `time.NewTicker`). The period rounds up to whole
    /// milliseconds, and the first tick counts from the loop's clock
    /// rounded up (never before `period` has passed: the
    /// [module docs](self)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::{InvalidPeriod, go}};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let tk = lp.scope(|| go::Ticker::new(Duration::from_millis(10)));
    /// assert!(tk.is_ok());
    /// let zero = lp.scope(|| go::Ticker::new(Duration::ZERO));
    /// assert_eq!(zero.unwrap_err(), InvalidPeriod::zero());
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidPeriod`] for a zero period (Go panics).
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    #[track_caller]
    pub fn new(period: Duration) -> Result<Ticker, InvalidPeriod> {
        let ms = InvalidPeriod::check(period)?;
        let entry = Rc::new(TickerEntry {
            core: Core::new(current_shared()),
            period: Cell::new(ms),
            waker: RefCell::new(None),
        });
        let ticker = Ticker { entry };
        ticker.start(ms);
        Ok(ticker)
    }

    fn start(&self, ms: u64) {
        let e = &self.entry;
        let (now, up) = e.core.now_down_up();
        let when = up.saturating_add(ms);
        e.period.set(ms);
        e.core.restart(when);
        retire(e);
        schedule(e, now, when);
    }

    /// Stops the ticker (Go's `tk.Stop()`): no more ticks, and a pending
    /// tick is discarded. It does not "close" anything: a receive then
    /// pends forever, until a [`reset`](Self::reset) starts it again.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut tk = lp.scope(|| go::Ticker::new(Duration::from_millis(10)).unwrap());
    /// lp.block(15); // a tick is pending
    /// tk.stop();
    /// assert_eq!(tk.try_recv(), None);
    /// lp.run().unwrap(); // nothing keeps the loop alive
    /// ```
    pub fn stop(&mut self) {
        halt(&self.entry);
    }

    /// Restarts the ticker with a new period (Go's `tk.Reset(d)`): the next
    /// tick is `period` from now, then one every `period`; a pending tick
    /// is discarded. Works on a stopped ticker too. On error the ticker is
    /// left as it was.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::{Instant, go}};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let at = lp
    ///     .block_on(async {
    ///         let start = Instant::now();
    ///         let mut tk = go::Ticker::new(Duration::from_millis(100)).unwrap();
    ///         timerloop::EventLoop::with_current(|lp| lp.block(30));
    ///         tk.reset(Duration::from_millis(50)).unwrap();
    ///         (tk.recv().await - start, tk.recv().await - start)
    ///     })
    ///     .unwrap();
    /// assert_eq!(at, (Duration::from_millis(80), Duration::from_millis(130)));
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidPeriod`] for a zero period (Go panics).
    pub fn reset(&mut self, period: Duration) -> Result<(), InvalidPeriod> {
        let ms = InvalidPeriod::check(period)?;
        self.start(ms);
        Ok(())
    }

    /// Receives the next tick (Go's `<-tk.C`): a future of the [`Instant`]
    /// the tick was scheduled for. Pends forever while the ticker is
    /// stopped. Cancel-safe: dropping it loses no tick.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::{Instant, go}};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let first = lp
    ///     .block_on(async {
    ///         let start = Instant::now();
    ///         let mut tk = go::Ticker::new(Duration::from_millis(7)).unwrap();
    ///         tk.recv().await - start
    ///     })
    ///     .unwrap();
    /// assert_eq!(first, Duration::from_millis(7));
    /// ```
    pub fn recv(&mut self) -> Recv<'_> {
        Recv {
            from: Source::Ticker(self),
        }
    }

    /// Polls for the next tick; only the waker of the latest poll is
    /// woken. Ready once a tick's time has come on the loop's clock.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut tk = lp.scope(|| go::Ticker::new(Duration::from_millis(5)).unwrap());
    /// let mut task = tokio_test::task::spawn(());
    /// assert!(task.enter(|cx, _| tk.poll_recv(cx)).is_pending());
    /// lp.run_once().unwrap(); // the tick's Node timeout wakes the task
    /// assert!(task.is_woken());
    /// assert!(task.enter(|cx, _| tk.poll_recv(cx)).is_ready());
    /// assert!(task.enter(|cx, _| tk.poll_recv(cx)).is_pending());
    /// ```
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        match self.try_recv() {
            Some(v) => Poll::Ready(v),
            None => {
                store_waker(&mut self.entry.waker.borrow_mut(), cx.waker());
                Poll::Pending
            }
        }
    }

    /// Receives a pending tick without waiting (Go's
    /// `select { case v := <-tk.C: …; default: … }`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::{Instant, go}};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let start = lp.scope(Instant::now);
    /// let mut tk = lp.scope(|| go::Ticker::new(Duration::from_millis(10)).unwrap());
    /// lp.block(35); // ticks at 10, 20, 30: one is kept, the oldest
    /// assert_eq!(tk.try_recv().map(|v| v - start), Some(Duration::from_millis(10)));
    /// assert_eq!(tk.try_recv(), None, "the others were dropped");
    /// lp.block(5);
    /// assert_eq!(tk.try_recv().map(|v| v - start), Some(Duration::from_millis(40)));
    /// ```
    pub fn try_recv(&mut self) -> Option<Instant> {
        let e = &self.entry;
        // A tick its timeout found due counts as due now, even if this
        // read of the clock is behind the loop's.
        let when = e.core.when.get();
        let now = if e.core.reached.replace(false) {
            e.core.now().max(when)
        } else {
            e.core.now()
        };
        if !e.core.active.get() || now < when {
            return None;
        }
        match e.next_after(when, now) {
            Some(next) => e.core.when.set(next),
            None => {
                // The last tick of a grid that reached the end of loop
                // time: the ticker stops.
                halt(e);
            }
        }
        e.waker.borrow_mut().take();
        Some(Instant::from_millis(when))
    }

    /// The period.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let tk = lp.scope(|| go::Ticker::new(Duration::from_micros(1500)).unwrap());
    /// assert_eq!(tk.period(), Duration::from_millis(2), "rounded up");
    /// ```
    pub fn period(&self) -> Duration {
        Duration::from_millis(self.entry.period.get())
    }

    /// Whether the ticker keeps the loop alive while running (by default
    /// it does, as a refed interval).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let tk = lp.scope(|| go::Ticker::new(Duration::from_secs(1)).unwrap());
    /// assert!(tk.has_ref());
    /// ```
    pub fn has_ref(&self) -> bool {
        self.entry.core.refed.get()
    }

    /// Makes the ticker keep the loop alive while running (`true`, the
    /// default) or not (`false`, Node's `interval.unref()`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let tk = lp.scope(|| go::Ticker::new(Duration::from_millis(10)).unwrap());
    /// tk.set_ref(false);
    /// lp.run().unwrap(); // returns at once
    /// assert_eq!(lp.now(), 0);
    /// ```
    pub fn set_ref(&self, refed: bool) {
        set_ref(&self.entry, refed);
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        close(&self.entry, &self.entry.waker);
    }
}

// ----- AfterFunc -------------------------------------------------------------

type Func = Box<dyn FnMut(&mut EventLoop)>;

struct FuncEntry {
    core: Core,
    f: RefCell<Func>,
}

impl Fire for FuncEntry {
    fn core(&self) -> &Core {
        &self.core
    }

    fn fire(self: &Rc<Self>, lp: &mut EventLoop) {
        // Dispatched: from here on, stop returns false and reset schedules
        // another call.
        self.core.active.set(false);
        let mut f = self.f.borrow_mut();
        (*f)(lp);
    }
}

impl FuncEntry {
    fn start(self: &Rc<Self>, d: Duration) {
        let c = &self.core;
        let (now, up) = c.now_down_up();
        // At least 1 ms from the loop's time, as Node coerces zero.
        let when = up.saturating_add(ms_ceil(d)).max(now.saturating_add(1));
        c.restart(when);
        retire(self);
        schedule(self, now, when);
    }
}

/// Calls `f` once `d` has passed (Go's `time.AfterFunc`), as a loop
/// callback: a Node timeout made now, for `d` rounded up to whole
/// milliseconds and counted from the loop's clock rounded up, so never
/// before `d` has passed (zero is 1 ms, as Node coerces it); on a virtual
/// clock at a whole millisecond, FIFO with the `set_timeout`s of that
/// duration. The handle stops or reschedules the call.
///
/// A panic in `f` is the loop's to report, as for any timer callback.
/// Dropping every handle does not cancel the call (as in Go). If `f` needs
/// its own handle (to reschedule itself), give it a [`WeakAfterFunc`]: a
/// strong handle inside `f` is a reference cycle that is never freed.
///
/// ```
/// use std::{cell::RefCell, rc::Rc, time::Duration};
/// use timerloop::{EventLoop, time::go};
/// let log = Rc::new(RefCell::new(Vec::new()));
/// let mut lp = EventLoop::with_virtual_clock();
/// let l = log.clone();
/// lp.scope(|| go::after_func(Duration::from_millis(10), move |lp| l.borrow_mut().push(lp.now())));
/// lp.run().unwrap();
/// assert_eq!(*log.borrow(), [10]);
/// ```
///
/// Zero runs `f` after 1 ms, as Node's `setTimeout(f, 0)`;
/// [`Duration::MAX`] is the longest timer, stoppable as any other.
///
/// # Panics
///
/// If no loop is current on this thread.
#[track_caller]
pub fn after_func(d: Duration, f: impl FnMut(&mut EventLoop) + 'static) -> AfterFunc {
    let entry = Rc::new(FuncEntry {
        core: Core::new(current_shared()),
        f: RefCell::new(Box::new(f)),
    });
    entry.start(d);
    AfterFunc { entry }
}

/// A handle to an [`after_func`] call (Go's `*Timer` from `AfterFunc`):
/// `Clone`, and every clone controls the same call.
///
/// ```
/// use std::{cell::Cell, rc::Rc, time::Duration};
/// use timerloop::{EventLoop, time::go};
/// let ran = Rc::new(Cell::new(false));
/// let mut lp = EventLoop::with_virtual_clock();
/// let r = ran.clone();
/// let f = lp.scope(|| go::after_func(Duration::from_millis(10), move |_| r.set(true)));
/// let g = f.clone();
/// assert!(g.stop());
/// assert!(!f.stop(), "already stopped, through the clone");
/// lp.run().unwrap();
/// assert!(!ran.get());
/// ```
#[derive(Clone)]
pub struct AfterFunc {
    entry: Rc<FuncEntry>,
}

impl fmt::Debug for AfterFunc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.entry.core;
        f.debug_struct("AfterFunc")
            .field("when", &Instant::from_millis(c.when.get()))
            .field("pending", &c.active.get())
            .finish_non_exhaustive()
    }
}

impl AfterFunc {
    /// Cancels the call (Go's `Stop`): `true` if this call stopped it
    /// before `f` was dispatched, `false` if `f` already ran (or is
    /// running) or the call was already stopped. A stop made by another
    /// callback of the same timers pass keeps `f` from running even if it
    /// is due in that pass.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let f = lp.scope(|| go::after_func(Duration::from_millis(10), |_| {}));
    /// lp.run().unwrap();
    /// assert!(!f.stop(), "f already ran");
    /// ```
    pub fn stop(&self) -> bool {
        halt(&self.entry)
    }

    /// Reschedules the call for `d` from now (Go's `Reset`): `true` if a
    /// pending call was moved, `false` if `f` already ran or the call was
    /// stopped; it is then scheduled again, and `f` runs once more.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc, time::Duration};
    /// use timerloop::{EventLoop, time::go};
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let l = log.clone();
    /// let f = lp.scope(|| go::after_func(Duration::from_millis(10), move |lp| l.borrow_mut().push(lp.now())));
    /// assert!(lp.scope(|| f.reset(Duration::from_millis(30))), "moved");
    /// lp.run().unwrap();
    /// assert!(!lp.scope(|| f.reset(Duration::from_millis(5))), "ran: scheduled again");
    /// lp.run().unwrap();
    /// assert_eq!(*log.borrow(), [30, 35]);
    /// ```
    pub fn reset(&self, d: Duration) -> bool {
        let c = &self.entry.core;
        let was = c.active.get();
        self.entry.start(d);
        was
    }

    /// Whether the pending call keeps the loop alive (by default it does,
    /// as a refed timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let f = lp.scope(|| go::after_func(Duration::from_millis(10), |_| {}));
    /// assert!(f.has_ref());
    /// ```
    pub fn has_ref(&self) -> bool {
        self.entry.core.refed.get()
    }

    /// Makes the pending call keep the loop alive (`true`, the default) or
    /// not (`false`, Node's `timeout.unref()`: the loop may exit first).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let f = lp.scope(|| go::after_func(Duration::from_millis(10), |_| panic!("never runs")));
    /// f.set_ref(false);
    /// lp.run().unwrap();
    /// assert_eq!(lp.now(), 0);
    /// ```
    pub fn set_ref(&self, refed: bool) {
        set_ref(&self.entry, refed);
    }

    /// A handle that does not keep the call's state alive: what `f` should
    /// hold to stop or reschedule itself.
    ///
    /// ```
    /// use std::{cell::{Cell, OnceCell}, rc::Rc, time::Duration};
    /// use timerloop::{EventLoop, time::go};
    /// let runs = Rc::new(Cell::new(0));
    /// let me = Rc::new(OnceCell::<go::WeakAfterFunc>::new());
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (r, m) = (runs.clone(), me.clone());
    /// let f = lp.scope(|| {
    ///     go::after_func(Duration::from_millis(10), move |_| {
    ///         r.set(r.get() + 1);
    ///         if r.get() < 3 {
    ///             m.get().and_then(|w| w.upgrade()).unwrap().reset(Duration::from_millis(10));
    ///         }
    ///     })
    /// });
    /// me.set(f.downgrade()).unwrap();
    /// drop(f); // the pending call keeps running, as in Go
    /// lp.run().unwrap();
    /// assert_eq!((runs.get(), lp.now()), (3, 30));
    /// ```
    pub fn downgrade(&self) -> WeakAfterFunc {
        WeakAfterFunc {
            entry: Rc::downgrade(&self.entry),
        }
    }
}

/// A weak [`AfterFunc`] handle, made by [`AfterFunc::downgrade`]: it
/// upgrades while the call is pending or running, or while a strong
/// handle exists.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time::go};
/// let mut lp = EventLoop::with_virtual_clock();
/// let f = lp.scope(|| go::after_func(Duration::from_millis(10), |_| {}));
/// let w = f.downgrade();
/// drop(f);
/// assert!(w.upgrade().is_some(), "pending: its timer holds it");
/// lp.run().unwrap();
/// assert!(w.upgrade().is_none(), "ran, and no handle is left");
/// ```
#[derive(Clone)]
pub struct WeakAfterFunc {
    entry: Weak<FuncEntry>,
}

impl fmt::Debug for WeakAfterFunc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakAfterFunc").finish_non_exhaustive()
    }
}

impl WeakAfterFunc {
    /// The strong handle, if the call's state still exists.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::go};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let f = lp.scope(|| go::after_func(Duration::from_millis(10), |_| {}));
    /// let w = f.downgrade();
    /// assert!(w.upgrade().unwrap().stop());
    /// ```
    pub fn upgrade(&self) -> Option<AfterFunc> {
        self.entry.upgrade().map(|entry| AfterFunc { entry })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tick its Node timeout found due (`reached`, as `fire` sets it)
    /// is received even where this read of the clock is behind the loop's
    /// (the two millisecond caches of one clock, off by a calibration
    /// error): the receiver it woke gets it, and the next tick is on the
    /// grid. Before, the receive read the clock alone and returned
    /// nothing; at the end of loop time, with no next leg armed, the
    /// receiver waited forever.
    #[test]
    fn a_tick_its_timeout_found_due_is_received_whatever_the_clock_reads() {
        let mut lp = EventLoop::with_virtual_clock();
        let mut tk = lp.scope(|| Ticker::new(Duration::from_millis(10)).unwrap());
        tk.entry.core.reached.set(true); // as the timeout's `fire` on a loop read ahead
        assert_eq!(lp.scope(|| tk.try_recv()), Some(Instant::from_millis(10)));
        assert_eq!(tk.entry.core.when.get(), 20, "the next tick on the grid");
        assert_eq!(lp.scope(|| tk.try_recv()), None, "one tick");
        assert_eq!(lp.scope(|| tk.reset(Duration::from_millis(5))), Ok(()));
        assert!(!tk.entry.core.reached.get(), "a reset starts unreached");
    }

    /// The generation guard alone (no queued clearing, which the public
    /// operations always add and which the loop applies before the next
    /// timer runs): a Node timeout armed for an older generation neither
    /// calls `f`, nor wakes a receiver, nor re-arms a ticker.
    #[test]
    fn a_node_timeout_of_an_older_generation_does_nothing() {
        let mut lp = EventLoop::with_virtual_clock();
        let runs = Rc::new(Cell::new(0));
        let r = runs.clone();
        let f = lp.scope(|| after_func(Duration::from_millis(10), move |_| r.set(r.get() + 1)));
        let mut t = lp.scope(|| Timer::new(Duration::from_millis(10)));
        let tk = lp.scope(|| Ticker::new(Duration::from_millis(10)).unwrap());
        let mut task = tokio_test::task::spawn(());
        assert!(task.enter(|cx, _| t.poll_recv(cx)).is_pending());
        assert_eq!(lp.stats().timers, 3);
        // What a stop or reset does to the state, without its clearing.
        f.entry.core.bump();
        t.entry.core.bump();
        tk.entry.core.bump();
        lp.block(10);
        lp.run_nowait().unwrap(); // one pass: bounded even if a ticker re-arms
        assert_eq!(lp.now(), 10);
        assert_eq!(runs.get(), 0, "f was not called");
        assert!(!task.is_woken(), "the receiver was not woken");
        assert_eq!(lp.stats().timers, 0, "the ticker did not re-arm");
    }
}
