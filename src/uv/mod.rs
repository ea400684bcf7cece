//! A libuv-like event loop. It knows nothing of Node timers.
//!
//! This is the lower layer of the crate: libuv 1.46's `uv_run` for one
//! thread, with the pieces Node's timers stand on and nothing else.
//!
//! - **Time**: `loop->time`, whole milliseconds read from a [`Clock`] and
//!   cached; it is refreshed when a run starts, after every poll, and before
//!   the timers phase, or when someone calls [`Loop::update_time`].
//! - **Handles** ([`Handle`]): timers, idle, prepare and check handles, and
//!   I/O sources. Each is active or not and refed or not; the loop is *alive*
//!   exactly as `uv__loop_alive`: while some handle is active and refed, some
//!   request is in flight, the pending queue is not empty, or handles are
//!   closing.
//! - **Native timers**: a min-heap ordered by `(timeout, start_id)`, with
//!   `start` / `stop` / `again` / `set_repeat`; deadlines saturate.
//! - **Phases** of one iteration, as `uv_run` in libuv 1.46:
//!
//! ```text
//!   run(Default): [update time, timers]            <- pre-loop pass (1.45+)
//!   while alive && !stopped:
//!       pending -> idle -> prepare -> poll(timeout) -> pending (up to 8x)
//!       -> check -> closing -> update time -> timers
//! ```
//!
//!   The poll timeout is `uv__backend_timeout`: 0 when stopped, when nothing
//!   is active, when work is pending, when an idle handle is active or when
//!   handles are closing; otherwise the time to the earliest native timer,
//!   or "forever" when there is none.
//! - **Poll**: [`mio::Poll`], with I/O sources registered with a callback,
//!   async handles ([`Remote`], libuv's `uv_async_t`: active, and refed
//!   unless unrefed, for as long as the `Remote` exists) and requests
//!   ([`Completion`]), through which other threads queue work that runs in
//!   the poll phase.
//!
//! The loop is generic over its *host* `H`, the value that owns it (see
//! [`Host`]): every callback receives `&mut H`, so callbacks can reach the
//! loop and whatever the host keeps beside it. The Node layer
//! ([`crate::EventLoop`]) is such a host; it uses exactly one native timer
//! handle, one check handle and one idle handle.
//!
//! This module is crate-private: the only way to run it is through
//! [`crate::EventLoop`], whose guarantees (the main-body drain, resuming
//! after a failure, error mapping) a direct `run` would skip. Its files:
//! this one (handles and liveness), `timer.rs` (native timers, idle,
//! prepare and check handles, the poll timeout), `run.rs` (`uv_run` and
//! its phases), `poll.rs` (the poll phase, I/O, cross-thread work) and
//! `clock.rs`.
#![forbid(unsafe_code)]

mod clock;
mod poll;
mod run;
mod timer;

pub use clock::{Clock, ClockError, SystemClock, VirtualClock};
pub(crate) use clock::{MsCache, ms_ceil, ms_floor};
pub use poll::{Completion, PostError, Readiness};
pub(crate) use poll::{IoOpError, KeepAlive, OwnedSource, Remote, Sender};
pub(crate) use run::{catch_unless_replaced, run};

use std::any::Any;
use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;

use crate::collections::arena::{Arena, Key};
use crate::collections::queue::PriorityQueue;

/// A value that owns a [`Loop`] and is handed to the loop's callbacks.
pub trait Host: Sized + 'static {
    /// The loop this host owns.
    fn uv(&mut self) -> &mut Loop<Self>;

    /// Applies handle starts and stops the host deferred. [`run`] calls it
    /// before every read of the loop's liveness, of its poll timeout, of
    /// its timers (in the timers phase, again after each timer's
    /// callback) and of the idle watchers (the only places a handle's
    /// state is observable), so a host may toggle a handle lazily: a start
    /// and a stop between two such reads cost nothing, and a timer
    /// restarted many times between them is started once.
    fn sync_handles(&mut self) {}

    /// Does work that no callback waits for, such as giving back the
    /// memory of storage that emptied. [`run`] calls it once per
    /// iteration, after the prepare watchers, once it knows how long the
    /// poll phase may block, and once more before it returns a loop that is
    /// no longer alive; so the cost lands between callbacks, not inside
    /// the operation that emptied the storage. `idle` is set when nothing
    /// is expected soon: the poll phase is about to wait with no deadline
    /// (only I/O or another thread can wake it), or the loop is done.
    fn housekeep(&mut self, _idle: bool) {}

    /// A number no other host on this thread has. [`run`] reads it before
    /// calling into the host and, if a panic unwinds with the number
    /// changed (a callback moved the host out of its `&mut` and left
    /// another in its place), lets the panic go on without touching the
    /// host, whose loop the run is not. A host that cannot be replaced may
    /// keep the default.
    fn instance(&self) -> u64 {
        0
    }
}

/// How [`run`] runs the loop, as libuv's `uv_run_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RunMode {
    /// Run until the loop is no longer alive or is stopped.
    Default,
    /// Run one iteration, waiting in the poll phase if there is nothing to do.
    Once,
    /// Run one iteration without waiting.
    NoWait,
}

/// A handle to one of the loop's handles: an arena key, so a handle that
/// was closed never reaches the handle that later reuses its slot.
pub(crate) type Handle = Key;

/// What went wrong with a loop operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UvError {
    /// The handle was closed (or belongs to another loop).
    StaleHandle,
    /// The handle is of another kind than the operation needs.
    WrongKind,
    /// The handle is closing (`EINVAL` in libuv).
    Closing,
    /// `again` on a timer that was never started (`EINVAL` in libuv).
    NeverStarted,
    /// [`run`] was called from inside one of the loop's own callbacks.
    Reentrant,
    /// The source is lent to its own running callback.
    Busy,
}

impl fmt::Display for UvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UvError::StaleHandle => "the handle was closed or belongs to another loop",
            UvError::WrongKind => "the handle is not of the kind this operation needs",
            UvError::Closing => "the handle is closing",
            UvError::NeverStarted => "the timer was never started",
            UvError::Busy => "the source is lent to its running callback",
            UvError::Reentrant => {
                "the loop is already running: run() cannot be called from its own callbacks"
            }
        })
    }
}

impl std::error::Error for UvError {}

pub(crate) type Cb<H> = Box<dyn FnMut(&mut H)>;
/// An I/O callback: the loop, the handle, the source it owns (as `Any`,
/// for the layer above to downcast; `()` for a source the loop does not
/// own), and the readiness.
pub(crate) type IoCb<H> = Box<dyn FnMut(&mut H, Handle, &mut dyn Any, Readiness)>;
pub(crate) type OnceCb<H> = Box<dyn FnOnce(&mut H)>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Prepare,
    Check,
}

enum Kind<H> {
    Timer {
        timeout: u64,
        repeat: u64,
        started: bool,
        cb: Option<Cb<H>>,
    },
    Watcher {
        phase: Phase,
        cb: Option<Cb<H>>,
    },
    Io {
        cb: Option<IoCb<H>>,
        /// The source, if the loop owns it; `None` while it is lent to its
        /// callback (or if it is owned elsewhere: `owned` false).
        source: Option<Box<dyn OwnedSource>>,
        owned: bool,
        /// An interest change asked for while the source was lent.
        interest: Option<mio::Interest>,
    },
    /// An async handle: the loop side of a [`Remote`].
    Async,
}

/// [`Loop::halt_state`]'s answer: the loop's stop and halt flags.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HaltState {
    stop_flag: bool,
    halted: bool,
}

struct Rec<H> {
    active: bool,
    refed: bool,
    closing: bool,
    kind: Kind<H>,
}

/// How a loop reads its clock's milliseconds on the hot paths
/// (`uv_update_time` runs on every `set_timeout` and `refresh`): the crate's
/// own clocks without a dynamic call, a [`SystemClock`] through its cached
/// millisecond.
pub(crate) enum FastClock {
    /// Any other [`Clock`]: through the trait object.
    Dyn,
    /// A [`SystemClock`]'s cached millisecond.
    System(MsCache),
    /// A [`VirtualClock`], read directly.
    Virtual(VirtualClock),
}

/// Marks a handle's record active (`uv__handle_start`), counting it in
/// `active_refed` if refed; for callers that hold the record already.
fn mark_active<H>(r: &mut Rec<H>, active_refed: &mut usize) {
    if !r.active {
        r.active = true;
        if r.refed {
            *active_refed += 1;
        }
    }
}

/// The event loop; see the [module docs](self).
pub(crate) struct Loop<H> {
    clock: Rc<dyn Clock>,
    /// `clock` again, for reading its milliseconds without a dynamic call
    /// when it is one of the crate's own clocks.
    fast_clock: FastClock,
    time: u64,
    handles: Arena<Rec<H>>,
    active_refed: usize,
    timer_heap: PriorityQueue,
    /// The next start id: the tie word of a started timer's key. When it
    /// would run out of 32 bits, the heap renumbers the started timers'
    /// ([`PriorityQueue::renumber`]) and it goes on from their count.
    timer_counter: u32,
    idle: Vec<usize>,
    prepare: Vec<usize>,
    check: Vec<usize>,
    /// Reused by phases that run a snapshot of a handle list.
    scratch: Vec<usize>,
    pending: VecDeque<OnceCb<H>>,
    closing: Vec<(usize, Option<OnceCb<H>>)>,
    io: poll::Io<H>,
    stop_flag: bool,
    halted: bool,
    /// [`Loop::stop`] was called (not only [`Loop::halt`]): kept by
    /// [`Loop::reset_stop`].
    user_stop: bool,
    running: bool,
}

impl<H> fmt::Debug for Loop<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loop")
            .field("clock", &self.clock)
            .field("time", &self.time)
            .field("handles", &self.handles.len())
            .field("active_refed", &self.active_refed)
            .field("timers", &self.timer_heap.len())
            .field("pending", &self.pending.len())
            .field("requests", &self.io.requests())
            .finish_non_exhaustive()
    }
}

impl<H: Host> Loop<H> {
    /// A loop reading time from `clock`.
    ///
    /// # Errors
    ///
    /// The operating system's error if the poller (`epoll`/`kqueue`) or its
    /// waker cannot be created.
    pub(crate) fn new(clock: Rc<dyn Clock>) -> std::io::Result<Self> {
        let time = ms_floor(clock.now());
        let io = poll::Io::new(!clock.is_virtual())?;
        Ok(Loop {
            clock,
            fast_clock: FastClock::Dyn,
            time,
            handles: Arena::new(),
            active_refed: 0,
            timer_heap: PriorityQueue::new(),
            timer_counter: 0,
            idle: Vec::new(),
            prepare: Vec::new(),
            check: Vec::new(),
            scratch: Vec::new(),
            pending: VecDeque::new(),
            closing: Vec::new(),
            io,
            stop_flag: false,
            halted: false,
            user_stop: false,
            running: false,
        })
    }

    /// The clock the loop reads.
    pub(crate) fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    /// The clock, shared.
    pub(crate) fn clock_rc(&self) -> Rc<dyn Clock> {
        self.clock.clone()
    }

    /// Moves the cached loop time forward to `ms` if it is behind (the
    /// side effect of a `getLibuvNow()` made without the loop at hand).
    pub(crate) fn advance_time_to(&mut self, ms: u64) {
        self.time = self.time.max(ms);
    }

    /// The cached loop time in milliseconds (`uv_now`).
    pub(crate) fn now(&self) -> u64 {
        self.time
    }

    /// Reads the loop's clock through `fast`, which must be (or have been
    /// made from) that same clock.
    pub(crate) fn set_fast_clock(&mut self, fast: FastClock) {
        self.fast_clock = fast;
    }

    /// Refreshes the cached loop time from the clock (`uv_update_time`).
    #[inline]
    pub(crate) fn update_time(&mut self) {
        let ms = match &mut self.fast_clock {
            FastClock::System(cache) => cache.now_ms(),
            FastClock::Virtual(v) => v.now_ms(),
            FastClock::Dyn => self.clock.now_ms(),
        };
        self.time = self.time.max(ms);
    }

    /// Whether the loop is alive (`uv__loop_alive`).
    pub(crate) fn alive(&self) -> bool {
        self.alive_adjusted(0)
    }

    /// [`alive`](Self::alive) as it will be once `delta` refed handles
    /// more (or fewer) are active: for a host that has deferred a start or
    /// stop ([`Host::sync_handles`]) and is asked from a `&self` method.
    pub(crate) fn alive_adjusted(&self, delta: isize) -> bool {
        self.active_refed
            .checked_add_signed(delta)
            .is_some_and(|n| n > 0)
            || self.io.requests() > 0
            || !self.pending.is_empty()
            || !self.closing.is_empty()
            || self.io.kept_alive()
    }

    /// Whether [`run`] is executing (true inside the loop's callbacks).
    pub(crate) fn is_running(&self) -> bool {
        self.running
    }

    /// Asks [`run`] to return at the end of the current iteration
    /// (`uv_stop`); the poll phase of that iteration does not block.
    pub(crate) fn stop(&mut self) {
        self.stop_flag = true;
        self.user_stop = true;
    }

    /// Like [`Loop::stop`], but no further callback runs in this iteration:
    /// [`run`] returns as soon as the running callback does. Work that did
    /// not run stays queued for the next run. (Not in libuv; the Node layer
    /// uses it when an error has no handler.)
    pub(crate) fn halt(&mut self) {
        self.stop_flag = true;
        self.halted = true;
    }

    /// Whether the loop is stopped or halted, for
    /// [`Loop::restore_halt`].
    pub(crate) fn halt_state(&self) -> HaltState {
        HaltState {
            stop_flag: self.stop_flag,
            halted: self.halted,
        }
    }

    /// Undoes the [`Loop::halt`]s made since `before` was taken (a failure
    /// whose halt its taker answered for); a [`Loop::stop`] made since
    /// stays.
    pub(crate) fn restore_halt(&mut self, before: HaltState) {
        self.stop_flag = before.stop_flag || self.user_stop;
        self.halted = before.halted;
    }

    /// Undoes every [`Loop::halt`] of the run under way (the failure that
    /// made it went to a caller that answers for it); a [`Loop::stop`]
    /// stays.
    pub(crate) fn unhalt(&mut self) {
        self.restore_halt(HaltState {
            stop_flag: false,
            halted: false,
        });
    }

    /// Forgets a [`Loop::halt`] made while [`run`] was not running (the
    /// Node layer finishes interrupted work outside it, and a failure
    /// there halts). A [`Loop::stop`] stays: the next [`run`] returns at
    /// once, as `uv_run` after `uv_stop`.
    pub(crate) fn reset_stop(&mut self) {
        if !self.running {
            self.stop_flag = self.user_stop;
            self.halted = false;
        }
    }

    /// Forgets a [`Loop::stop`] or [`Loop::halt`] made while [`run`] was
    /// not running: the Node layer's run ignores a stop from before it
    /// started, and one its own work before [`run`] made ends with it.
    pub(crate) fn forget_stop(&mut self) {
        if !self.running {
            self.stop_flag = false;
            self.halted = false;
            self.user_stop = false;
        }
    }

    fn insert(&mut self, kind: Kind<H>) -> Handle {
        self.handles.insert(Rec {
            active: false,
            refed: true,
            closing: false,
            kind,
        })
    }

    fn rec(&self, h: Handle) -> Result<&Rec<H>, UvError> {
        self.handles.get(h).ok_or(UvError::StaleHandle)
    }

    fn rec_mut(&mut self, h: Handle) -> Result<&mut Rec<H>, UvError> {
        self.handles.get_mut(h).ok_or(UvError::StaleHandle)
    }

    fn activate(&mut self, key: usize) {
        mark_active(&mut self.handles[key], &mut self.active_refed);
    }

    fn deactivate(&mut self, key: usize) {
        let r = &mut self.handles[key];
        if r.active {
            r.active = false;
            if r.refed {
                self.active_refed -= 1;
            }
        }
    }

    /// Whether the handle is active (started and not stopped).
    pub(crate) fn is_active(&self, h: Handle) -> Result<bool, UvError> {
        self.rec(h).map(|r| r.active)
    }

    /// Whether the handle is refed (`uv_has_ref`).
    pub(crate) fn has_ref(&self, h: Handle) -> Result<bool, UvError> {
        self.rec(h).map(|r| r.refed)
    }

    /// Makes the handle keep the loop alive while active (`uv_ref`).
    pub(crate) fn ref_handle(&mut self, h: Handle) -> Result<(), UvError> {
        let r = self.rec_mut(h)?;
        if !r.refed {
            r.refed = true;
            if r.active {
                self.active_refed += 1;
            }
        }
        Ok(())
    }

    /// Stops the handle from keeping the loop alive (`uv_unref`).
    pub(crate) fn unref_handle(&mut self, h: Handle) -> Result<(), UvError> {
        let r = self.rec_mut(h)?;
        if r.refed {
            r.refed = false;
            if r.active {
                self.active_refed -= 1;
            }
        }
        Ok(())
    }

    /// Closes the handle (`uv_close`): it is stopped now, and `on_close` runs
    /// in the closing phase, after which the handle is stale.
    pub(crate) fn close(&mut self, h: Handle, on_close: Option<OnceCb<H>>) -> Result<(), UvError> {
        let closing = self.rec(h)?.closing;
        if closing {
            return Err(UvError::Closing);
        }
        let key = h.index();
        self.stop_any(key);
        if let Kind::Io { .. } = self.handles[key].kind {
            self.io.forget(key);
        }
        self.handles[key].closing = true;
        self.closing.push((key, on_close));
        Ok(())
    }

    fn stop_any(&mut self, key: usize) {
        match self.handles[key].kind {
            Kind::Timer { .. } => {
                self.timer_heap.remove(key);
            }
            Kind::Watcher { phase, .. } => self.list(phase).retain(|&k| k != key),
            Kind::Io { .. } | Kind::Async => {}
        }
        self.deactivate(key);
    }

    fn list(&mut self, phase: Phase) -> &mut Vec<usize> {
        match phase {
            Phase::Idle => &mut self.idle,
            Phase::Prepare => &mut self.prepare,
            Phase::Check => &mut self.check,
        }
    }
}

#[cfg(test)]
mod tests;
