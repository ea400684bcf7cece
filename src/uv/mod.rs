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
//!   and [`Remote`] / [`Completion`], `Send` values (on [`mio::Waker`]) that
//!   let another thread queue work that runs in the poll phase, like libuv's
//!   `uv_async_t`.
//!
//! The loop is generic over its *host* `H`, the value that owns it (see
//! [`Host`]): every callback receives `&mut H`, so callbacks can reach the
//! loop and whatever the host keeps beside it. The Node layer
//! ([`crate::EventLoop`]) is such a host; it uses exactly one native timer
//! handle, one check handle and one idle handle.

mod clock;
mod poll;

pub use clock::{Clock, ClockError, SystemClock, VirtualClock};
pub use poll::{Completion, Readiness, Remote};

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use slab::Slab;

use crate::collections::queue::PriorityQueue;

/// A value that owns a [`Loop`] and is handed to the loop's callbacks.
pub trait Host: Sized + 'static {
    /// The loop this host owns.
    fn uv(&mut self) -> &mut Loop<Self>;
}

/// How [`run`] runs the loop, as libuv's `uv_run_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunMode {
    /// Run until the loop is no longer alive or is stopped.
    Default,
    /// Run one iteration, waiting in the poll phase if there is nothing to do.
    Once,
    /// Run one iteration without waiting.
    NoWait,
}

/// A handle to one of the loop's handles: small, `Copy`, and generation
/// checked, so a handle that was closed never reaches the handle that later
/// reuses its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handle {
    key: u32,
    generation: u32,
}

/// What went wrong with a loop operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UvError {
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
}

impl fmt::Display for UvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UvError::StaleHandle => "the handle was closed or belongs to another loop",
            UvError::WrongKind => "the handle is not of the kind this operation needs",
            UvError::Closing => "the handle is closing",
            UvError::NeverStarted => "the timer was never started",
            UvError::Reentrant => {
                "the loop is already running: run() cannot be called from its own callbacks"
            }
        })
    }
}

impl std::error::Error for UvError {}

type Cb<H> = Box<dyn FnMut(&mut H)>;
type IoCb<H> = Box<dyn FnMut(&mut H, Readiness)>;
type OnceCb<H> = Box<dyn FnOnce(&mut H)>;

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
        start_id: u64,
        started: bool,
        cb: Option<Cb<H>>,
    },
    Watcher {
        phase: Phase,
        cb: Option<Cb<H>>,
    },
    Io {
        cb: Option<IoCb<H>>,
    },
}

struct Rec<H> {
    generation: u32,
    active: bool,
    refed: bool,
    closing: bool,
    kind: Kind<H>,
}

/// The event loop; see the [module docs](self).
pub struct Loop<H> {
    clock: Box<dyn Clock>,
    time: u64,
    handles: Slab<Rec<H>>,
    next_gen: u32,
    active_refed: usize,
    timer_heap: PriorityQueue<(u64, u64)>,
    timer_counter: u64,
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

/// Whole milliseconds of a clock reading. A reading at the end of a
/// clock's range (a saturated [`VirtualClock`]) is the end of time: every
/// deadline has passed, so a loop never waits for one its clock cannot
/// reach.
fn ms_floor(d: Duration) -> u64 {
    if d >= Duration::from_nanos(u64::MAX) {
        return u64::MAX;
    }
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl<H: Host> Loop<H> {
    /// A loop reading time from `clock`.
    ///
    /// # Errors
    ///
    /// The operating system's error if the poller (`epoll`/`kqueue`) or its
    /// waker cannot be created.
    pub fn new(clock: Box<dyn Clock>) -> std::io::Result<Self> {
        let time = ms_floor(clock.now());
        Ok(Loop {
            clock,
            time,
            handles: Slab::new(),
            next_gen: 0,
            active_refed: 0,
            timer_heap: PriorityQueue::new(),
            timer_counter: 0,
            idle: Vec::new(),
            prepare: Vec::new(),
            check: Vec::new(),
            scratch: Vec::new(),
            pending: VecDeque::new(),
            closing: Vec::new(),
            io: poll::Io::new()?,
            stop_flag: false,
            halted: false,
            running: false,
        })
    }

    /// The clock the loop reads.
    pub fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    /// The cached loop time in milliseconds (`uv_now`).
    pub fn now(&self) -> u64 {
        self.time
    }

    /// Refreshes the cached loop time from the clock (`uv_update_time`).
    pub fn update_time(&mut self) {
        self.time = self.time.max(ms_floor(self.clock.now()));
    }

    /// Whether the loop is alive (`uv__loop_alive`).
    pub fn alive(&self) -> bool {
        self.active_refed > 0
            || self.io.requests() > 0
            || !self.pending.is_empty()
            || !self.closing.is_empty()
    }

    /// Whether [`run`] is executing (true inside the loop's callbacks).
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// Asks [`run`] to return at the end of the current iteration
    /// (`uv_stop`); the poll phase of that iteration does not block.
    pub fn stop(&mut self) {
        self.stop_flag = true;
    }

    /// Like [`Loop::stop`], but no further callback runs in this iteration:
    /// [`run`] returns as soon as the running callback does. Work that did
    /// not run stays queued for the next run. (Not in libuv; the Node layer
    /// uses it when an error has no handler.)
    pub fn halt(&mut self) {
        self.stop_flag = true;
        self.halted = true;
    }

    /// Forgets a [`Loop::stop`] or [`Loop::halt`] made while [`run`] was
    /// not running (the Node layer finishes interrupted work outside it).
    pub(crate) fn reset_stop(&mut self) {
        if !self.running {
            self.stop_flag = false;
            self.halted = false;
        }
    }

    fn insert(&mut self, kind: Kind<H>) -> Handle {
        let generation = self.next_gen;
        self.next_gen = self.next_gen.wrapping_add(1);
        let key = self.handles.insert(Rec {
            generation,
            active: false,
            refed: true,
            closing: false,
            kind,
        });
        Handle {
            key: u32::try_from(key).expect("more than 2^32 loop handles"),
            generation,
        }
    }

    fn rec(&self, h: Handle) -> Result<&Rec<H>, UvError> {
        match self.handles.get(h.key as usize) {
            Some(r) if r.generation == h.generation => Ok(r),
            _ => Err(UvError::StaleHandle),
        }
    }

    fn rec_mut(&mut self, h: Handle) -> Result<&mut Rec<H>, UvError> {
        match self.handles.get_mut(h.key as usize) {
            Some(r) if r.generation == h.generation => Ok(r),
            _ => Err(UvError::StaleHandle),
        }
    }

    fn activate(&mut self, key: usize) {
        let r = &mut self.handles[key];
        if !r.active {
            r.active = true;
            if r.refed {
                self.active_refed += 1;
            }
        }
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
    pub fn is_active(&self, h: Handle) -> Result<bool, UvError> {
        self.rec(h).map(|r| r.active)
    }

    /// Whether the handle is refed (`uv_has_ref`).
    pub fn has_ref(&self, h: Handle) -> Result<bool, UvError> {
        self.rec(h).map(|r| r.refed)
    }

    /// Makes the handle keep the loop alive while active (`uv_ref`).
    pub fn ref_handle(&mut self, h: Handle) -> Result<(), UvError> {
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
    pub fn unref_handle(&mut self, h: Handle) -> Result<(), UvError> {
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
    pub fn close(&mut self, h: Handle, on_close: Option<OnceCb<H>>) -> Result<(), UvError> {
        let closing = self.rec(h)?.closing;
        if closing {
            return Err(UvError::Closing);
        }
        let key = h.key as usize;
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
            Kind::Io { .. } => {}
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

    // ----- native timers ---------------------------------------------------

    /// A stopped timer handle that calls `cb` when it expires (`uv_timer_init`).
    pub fn timer_init(&mut self, cb: impl FnMut(&mut H) + 'static) -> Handle {
        self.insert(Kind::Timer {
            timeout: 0,
            repeat: 0,
            start_id: 0,
            started: false,
            cb: Some(Box::new(cb)),
        })
    }

    /// Starts (or restarts) a timer to expire `timeout` ms after the cached
    /// loop time, then every `repeat` ms if `repeat` is not zero
    /// (`uv_timer_start`). The deadline saturates at `u64::MAX`.
    pub fn timer_start(&mut self, h: Handle, timeout: u64, repeat: u64) -> Result<(), UvError> {
        let r = self.rec(h)?;
        if r.closing {
            return Err(UvError::Closing);
        }
        let key = h.key as usize;
        self.timer_heap.remove(key);
        let due = self.time.saturating_add(timeout);
        let start_id = self.timer_counter;
        self.timer_counter += 1;
        match &mut self.handles[key].kind {
            Kind::Timer {
                timeout: t,
                repeat: rp,
                start_id: s,
                started,
                ..
            } => {
                *t = due;
                *rp = repeat;
                *s = start_id;
                *started = true;
            }
            _ => return Err(UvError::WrongKind),
        }
        self.timer_heap.insert(key, (due, start_id));
        self.activate(key);
        Ok(())
    }

    /// Stops a timer (`uv_timer_stop`); stopping a stopped timer is fine.
    pub fn timer_stop(&mut self, h: Handle) -> Result<(), UvError> {
        let r = self.rec(h)?;
        if !matches!(r.kind, Kind::Timer { .. }) {
            return Err(UvError::WrongKind);
        }
        self.timer_heap.remove(h.key as usize);
        self.deactivate(h.key as usize);
        Ok(())
    }

    /// Restarts a repeating timer from now with its repeat value; does
    /// nothing to a timer whose repeat is zero (`uv_timer_again`).
    pub fn timer_again(&mut self, h: Handle) -> Result<(), UvError> {
        let (started, repeat) = match self.rec(h)?.kind {
            Kind::Timer {
                started, repeat, ..
            } => (started, repeat),
            _ => return Err(UvError::WrongKind),
        };
        if !started {
            return Err(UvError::NeverStarted);
        }
        if repeat != 0 {
            self.timer_start(h, repeat, repeat)?;
        }
        Ok(())
    }

    /// Sets the repeat value used by the next expiry or `again`.
    pub fn timer_set_repeat(&mut self, h: Handle, repeat: u64) -> Result<(), UvError> {
        match &mut self.rec_mut(h)?.kind {
            Kind::Timer { repeat: r, .. } => {
                *r = repeat;
                Ok(())
            }
            _ => Err(UvError::WrongKind),
        }
    }

    /// Milliseconds until the timer expires, 0 if it is due or stopped
    /// (`uv_timer_get_due_in`).
    pub fn timer_due_in(&self, h: Handle) -> Result<u64, UvError> {
        let r = self.rec(h)?;
        match r.kind {
            Kind::Timer { timeout, .. } if r.active => Ok(timeout.saturating_sub(self.time)),
            Kind::Timer { .. } => Ok(0),
            _ => Err(UvError::WrongKind),
        }
    }

    // ----- idle / prepare / check -----------------------------------------

    fn watcher_init(&mut self, phase: Phase, cb: impl FnMut(&mut H) + 'static) -> Handle {
        self.insert(Kind::Watcher {
            phase,
            cb: Some(Box::new(cb)),
        })
    }

    /// An idle handle: while active, its callback runs once per iteration
    /// and the poll phase does not block (`uv_idle_init`). Stopped.
    pub fn idle_init(&mut self, cb: impl FnMut(&mut H) + 'static) -> Handle {
        self.watcher_init(Phase::Idle, cb)
    }

    /// A prepare handle, run just before the poll phase. Stopped.
    pub fn prepare_init(&mut self, cb: impl FnMut(&mut H) + 'static) -> Handle {
        self.watcher_init(Phase::Prepare, cb)
    }

    /// A check handle, run just after the poll phase. Stopped.
    pub fn check_init(&mut self, cb: impl FnMut(&mut H) + 'static) -> Handle {
        self.watcher_init(Phase::Check, cb)
    }

    /// Starts an idle, prepare or check handle. As in libuv, the most
    /// recently started handle of a phase runs first.
    pub fn watcher_start(&mut self, h: Handle) -> Result<(), UvError> {
        let r = self.rec(h)?;
        if r.active {
            return Ok(());
        }
        let Kind::Watcher { phase, .. } = r.kind else {
            return Err(UvError::WrongKind);
        };
        if r.closing {
            return Err(UvError::Closing);
        }
        let key = h.key as usize;
        self.list(phase).insert(0, key);
        self.activate(key);
        Ok(())
    }

    /// Stops an idle, prepare or check handle.
    pub fn watcher_stop(&mut self, h: Handle) -> Result<(), UvError> {
        let r = self.rec(h)?;
        if !matches!(r.kind, Kind::Watcher { .. }) {
            return Err(UvError::WrongKind);
        }
        self.stop_any(h.key as usize);
        Ok(())
    }

    // ----- pending queue ---------------------------------------------------

    /// Queues `cb` for the next pending phase. While it waits the loop is
    /// alive and the poll phase does not block.
    pub fn defer(&mut self, cb: impl FnOnce(&mut H) + 'static) {
        self.pending.push_back(Box::new(cb));
    }

    // ----- poll timeout ----------------------------------------------------

    /// `uv__backend_timeout`: the poll phase's timeout in ms, `None` for
    /// "block until an event".
    pub fn backend_timeout(&self) -> Option<u64> {
        if self.stop_flag
            || (self.active_refed == 0 && self.io.requests() == 0)
            || !self.pending.is_empty()
            || !self.idle.is_empty()
            || !self.closing.is_empty()
        {
            return Some(0);
        }
        self.next_timeout()
    }

    /// `uv__next_timeout`: `None` with no timers, else ms to the earliest
    /// (0 if due), capped at `i32::MAX` as libuv does.
    pub fn next_timeout(&self) -> Option<u64> {
        let (_, (due, _)) = self.timer_heap.peek()?;
        Some(due.saturating_sub(self.time).min(i32::MAX as u64))
    }
}

/// Runs the loop owned by `host` in `mode` (`uv_run`). Returns whether the
/// loop is still alive.
///
/// # Errors
///
/// [`UvError::Reentrant`] if the loop is already running (a callback called
/// `run`); nothing is run then.
pub fn run<H: Host>(host: &mut H, mode: RunMode) -> Result<bool, UvError> {
    let lp = host.uv();
    if lp.running {
        return Err(UvError::Reentrant);
    }
    lp.running = true;
    lp.halted = false;
    let r = run_inner(host, mode);
    let lp = host.uv();
    lp.running = false;
    lp.stop_flag = false;
    lp.halted = false;
    Ok(r)
}

fn run_inner<H: Host>(host: &mut H, mode: RunMode) -> bool {
    let mut r = host.uv().alive();
    if !r {
        host.uv().update_time();
    }
    if mode == RunMode::Default && r && !host.uv().stop_flag {
        host.uv().update_time();
        run_timers(host);
    }
    macro_rules! phase {
        ($e:expr) => {{
            $e;
            if host.uv().halted {
                break;
            }
        }};
    }
    while r && !host.uv().stop_flag {
        let lp = host.uv();
        let can_sleep = lp.pending.is_empty() && lp.idle.is_empty();
        phase!(run_pending(host));
        phase!(run_watchers(host, Phase::Idle));
        phase!(run_watchers(host, Phase::Prepare));
        let lp = host.uv();
        let timeout = if (mode == RunMode::Once && can_sleep) || mode == RunMode::Default {
            lp.backend_timeout()
        } else {
            Some(0)
        };
        phase!(poll::io_poll(host, timeout));
        for _ in 0..8 {
            if host.uv().pending.is_empty() {
                break;
            }
            run_pending(host);
            if host.uv().halted {
                break;
            }
        }
        if host.uv().halted {
            break;
        }
        phase!(run_watchers(host, Phase::Check));
        phase!(run_closing(host));
        host.uv().update_time();
        phase!(run_timers(host));
        r = host.uv().alive();
        if mode != RunMode::Default {
            break;
        }
    }
    host.uv().alive()
}

fn run_pending<H: Host>(host: &mut H) {
    if host.uv().pending.is_empty() {
        return;
    }
    let mut queue = std::mem::take(&mut host.uv().pending);
    while let Some(cb) = queue.pop_front() {
        cb(host);
        if host.uv().halted {
            let lp = host.uv();
            queue.append(&mut lp.pending);
            lp.pending = queue;
            return;
        }
    }
}

/// Takes a handle's callback out, runs it, and puts it back unless the
/// handle was closed (its slot may then belong to a new handle).
fn call_handle<H: Host>(host: &mut H, key: usize) {
    let lp = host.uv();
    let Some(rec) = lp.handles.get_mut(key) else {
        return;
    };
    let generation = rec.generation;
    let cb = match &mut rec.kind {
        Kind::Timer { cb, .. } | Kind::Watcher { cb, .. } => cb.take(),
        Kind::Io { .. } => None,
    };
    let Some(mut cb) = cb else { return };
    cb(host);
    if let Some(rec) = host.uv().handles.get_mut(key)
        && rec.generation == generation
    {
        match &mut rec.kind {
            Kind::Timer { cb: slot, .. } | Kind::Watcher { cb: slot, .. } => *slot = Some(cb),
            Kind::Io { .. } => {}
        }
    }
}

fn run_watchers<H: Host>(host: &mut H, phase: Phase) {
    // Handles started by these callbacks wait for the next iteration, as
    // in libuv: run a snapshot, kept in a reused buffer (no allocation per
    // phase).
    let lp = host.uv();
    if lp.list(phase).is_empty() {
        return;
    }
    let mut snapshot = std::mem::take(&mut lp.scratch);
    snapshot.clear();
    snapshot.extend_from_slice(match phase {
        Phase::Idle => &lp.idle,
        Phase::Prepare => &lp.prepare,
        Phase::Check => &lp.check,
    });
    for &key in &snapshot {
        let lp = host.uv();
        let still = lp.handles.get(key).is_some_and(|r| r.active && !r.closing);
        if still {
            call_handle(host, key);
            if host.uv().halted {
                break;
            }
        }
    }
    host.uv().scratch = snapshot;
}

fn run_closing<H: Host>(host: &mut H) {
    if host.uv().closing.is_empty() {
        return;
    }
    let closing = std::mem::take(&mut host.uv().closing);
    let mut rest = closing.into_iter();
    for (key, cb) in rest.by_ref() {
        host.uv().handles.remove(key);
        if let Some(cb) = cb {
            cb(host);
        }
        if host.uv().halted {
            break;
        }
    }
    // Handles whose close callbacks did not run yet stay closing.
    let lp = host.uv();
    let mut left: Vec<_> = rest.collect();
    left.append(&mut lp.closing);
    lp.closing = left;
}

fn run_timers<H: Host>(host: &mut H) {
    loop {
        let lp = host.uv();
        let Some((key, (due, _))) = lp.timer_heap.peek() else {
            break;
        };
        if due > lp.time {
            break;
        }
        let h = Handle {
            key: key as u32,
            generation: lp.handles[key].generation,
        };
        // Stop, then again (re-arms repeating timers), then the callback:
        // the order of uv__run_timers.
        let _ = lp.timer_stop(h);
        let _ = lp.timer_again(h);
        call_handle(host, key);
        if host.uv().halted {
            break;
        }
    }
}

#[cfg(test)]
mod tests;
