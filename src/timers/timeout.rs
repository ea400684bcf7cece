//! Timeouts and intervals: Node's `Timeout`, `insert`, `unenroll`,
//! `processTimers` and `listOnTimeout`, and the `RunTimers` glue that
//! re-arms the one native timer (see the [parent module](super) for the
//! picture).
//!
//! Times here are Node's JavaScript times: loop milliseconds minus
//! `timer_base`, the loop time when the [`EventLoop`] was made.

use indexmap::IndexMap;
use slab::Slab;

use super::coerce::{Delay, coerce};
use super::error::{BoxError, CallbackError, CallbackKind, CallbackResult, TimerError};
use super::{EventLoop, Flow, Thrown};
use crate::collections::hash::BuildIntHasher;
use crate::collections::list::{Linked, Links, List};
use crate::collections::queue::PriorityQueue;
use crate::uv;

type TimerFn = Box<dyn FnMut(&mut EventLoop) -> Result<(), BoxError>>;

/// A handle to a timeout or interval: small, `Copy`, and generation checked.
///
/// A handle to a timer that fired (and was not
/// [retained](EventLoop::retain)) or was cleared is *stale*: operations on
/// it do nothing (or return [`TimerError::Stale`]) and never touch the timer
/// that later reuses its storage slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timeout {
    key: u32,
    generation: u32,
    loop_id: u32,
}

/// Storage larger than this many entries is released when it empties.
const SHRINK_ABOVE: usize = 4096;

const REPEAT: u8 = 1;
const REFED: u8 = 2;
const DESTROYED: u8 = 4;
/// `_idleTimeout = -1`: unenrolled (cleared).
const UNENROLLED: u8 = 8;
/// `_onTimeout = null`: cleared; the callback is dropped.
const CLEARED: u8 = 16;
const RUNNING: u8 = 32;
const RETAINED: u8 = 64;

struct Timer {
    links: Links,
    /// The list (a key into `Timers::lists`) while linked.
    list: u32,
    generation: u32,
    flags: u8,
    /// `_idleTimeout` (and `_repeat` for intervals): the coerced duration.
    delay: f64,
    /// `_idleStart`.
    start: u64,
    /// `_onTimeout`; `None` while the callback runs.
    cb: Option<TimerFn>,
}

impl Linked for Timer {
    fn links(&self) -> &Links {
        &self.links
    }
    fn links_mut(&mut self) -> &mut Links {
        &mut self.links
    }
}

impl Timer {
    fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Node's `TimersList`: the list of timers of one (truncated) duration.
struct TimersList {
    expiry: u64,
    id: u64,
    msecs: u64,
    /// Never changes: tells this list from a later one in the same slot.
    serial: u64,
    /// This list's index in the duration map, kept so removal needs no
    /// hashing (`swap_remove_index`).
    map_index: usize,
    list: List,
}

pub(super) struct Timers {
    slab: Slab<Timer>,
    next_generation: u32,
    lists: Slab<TimersList>,
    map: IndexMap<u64, usize, BuildIntHasher>,
    queue: PriorityQueue<(u64, u64)>,
    /// `timerListId`, bumped on list creation and on every reschedule.
    next_list_id: u64,
    next_serial: u64,
    /// `timeoutInfo[0]`: refed, live timeouts.
    ref_count: usize,
    /// `nextExpiry`; `u64::MAX` stands for Infinity.
    next_expiry: u64,
    native: uv::Handle,
    base: u64,
    /// The timer whose callback is running (Node's `this`).
    current: Option<Timeout>,
    /// A timers pass stopped by an unhandled failure.
    interrupted: bool,
}

impl Timers {
    pub(super) fn new(native: uv::Handle, base: u64) -> Self {
        Timers {
            slab: Slab::new(),
            next_generation: 0,
            lists: Slab::new(),
            map: IndexMap::default(),
            queue: PriorityQueue::new(),
            next_list_id: 0,
            next_serial: 0,
            ref_count: 0,
            next_expiry: u64::MAX,
            native,
            base,
            current: None,
            interrupted: false,
        }
    }

    pub(super) fn base(&self) -> u64 {
        self.base
    }

    pub(super) fn stats(&self) -> (usize, usize, usize, usize) {
        (
            self.slab.len(),
            self.map.len(),
            self.queue.len(),
            self.ref_count,
        )
    }

    /// Unlinks a timer from the list it is in, if any; returns whether it
    /// was linked. (`list` stays as it was: it still names that list.)
    fn unlink(&mut self, key: usize) -> bool {
        if !self.slab[key].links.is_linked() {
            return false;
        }
        let lk = self.slab[key].list as usize;
        self.lists[lk].list.remove(&mut self.slab, key);
        true
    }

    fn free(&mut self, key: usize) {
        self.slab.remove(key);
        // A slab never shrinks by itself: once the last timer is gone, give
        // a large one back (generations live outside it, so handles into
        // the old storage stay stale).
        if self.slab.is_empty() && self.slab.capacity() > SHRINK_ABOVE {
            self.slab = Slab::new();
        }
    }

    /// Drops a list from the heap, the map and storage. O(log n) for the
    /// heap; the map entry goes by index, and the entry moved into its
    /// place learns its new index.
    fn remove_list(&mut self, lk: usize) {
        self.queue.remove(lk);
        let at = self.lists[lk].map_index;
        debug_assert_eq!(self.map.get_index(at).map(|(_, &l)| l), Some(lk));
        self.map.swap_remove_index(at);
        if let Some((_, &moved)) = self.map.get_index(at) {
            self.lists[moved].map_index = at;
        }
        self.lists.remove(lk);
        if self.lists.is_empty() && self.lists.capacity() > SHRINK_ABOVE {
            self.lists = Slab::new();
            self.map = IndexMap::default();
            self.queue = PriorityQueue::new();
        }
    }
}

enum Next {
    /// No lists left (`return 0`).
    Idle,
    /// The earliest list's expiry, and whether refed timers remain.
    At { expiry: u64, refed: bool },
}

impl EventLoop {
    fn lookup(&self, t: Timeout) -> Result<usize, TimerError> {
        if t.loop_id != self.id {
            return Err(TimerError::ForeignLoop);
        }
        match self.timers.slab.get(t.key as usize) {
            Some(timer) if timer.generation == t.generation => Ok(t.key as usize),
            _ => Err(TimerError::Stale),
        }
    }

    fn handle_of(&self, key: usize) -> Timeout {
        Timeout {
            key: key as u32,
            generation: self.timers.slab[key].generation,
            loop_id: self.id,
        }
    }

    /// `getLibuvNow()`: refreshes the loop time, then reads it.
    fn libuv_now(&mut self) -> u64 {
        self.uv.update_time();
        self.uv.now() - self.timers.base
    }

    fn inc_ref_count(&mut self) {
        self.timers.ref_count += 1;
        if self.timers.ref_count == 1 {
            let _ = self.uv.ref_handle(self.timers.native);
        }
    }

    fn dec_ref_count(&mut self) {
        self.timers.ref_count -= 1;
        if self.timers.ref_count == 0 {
            let _ = self.uv.unref_handle(self.timers.native);
        }
    }

    fn schedule_timer(&mut self, ms: u64) {
        let _ = self.uv.timer_start(self.timers.native, ms, 0);
    }

    fn new_timer<F, R>(&mut self, delay: Delay, f: F, repeat: bool) -> Timeout
    where
        F: FnMut(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        let (ms, warning) = coerce(delay.as_ms());
        if let Some(w) = warning {
            self.warn(w);
        }
        let mut f = f;
        let generation = self.timers.next_generation;
        self.timers.next_generation = generation.wrapping_add(1);
        let key = self.timers.slab.insert(Timer {
            links: Links::default(),
            list: u32::MAX,
            generation,
            flags: REFED | if repeat { REPEAT } else { 0 },
            delay: ms,
            start: 0,
            cb: Some(Box::new(move |lp| f(lp).into_result())),
        });
        assert!(key < u32::MAX as usize, "more than 2^32 - 1 timers");
        self.inc_ref_count();
        let start = self.libuv_now();
        self.insert(key, ms, start);
        self.handle_of(key)
    }

    /// Node's `insert(item, msecs, start)`: list the timer under its
    /// truncated duration, creating (and scheduling) the list if needed.
    fn insert(&mut self, key: usize, delay: f64, start: u64) {
        let msecs = delay as u64; // delay is in [1, 2^31-1]: truncation
        let tm = &mut self.timers;
        tm.slab[key].start = start;
        let lk = match tm.map.get(&msecs) {
            Some(&lk) => lk,
            None => {
                let expiry = start.saturating_add(msecs);
                let id = tm.next_list_id;
                tm.next_list_id += 1;
                let serial = tm.next_serial;
                tm.next_serial += 1;
                let lk = tm.lists.insert(TimersList {
                    expiry,
                    id,
                    msecs,
                    serial,
                    map_index: tm.map.len(),
                    list: List::new(),
                });
                tm.queue.insert(lk, (expiry, id));
                tm.map.insert(msecs, lk);
                if tm.next_expiry > expiry {
                    tm.next_expiry = expiry;
                    self.schedule_timer(msecs);
                }
                lk
            }
        };
        let tm = &mut self.timers;
        tm.unlink(key);
        tm.lists[lk].list.append(&mut tm.slab, key);
        tm.slab[key].list = lk as u32;
    }

    /// Node's `unenroll`: destroy, unlink, drop an emptied refed list.
    fn unenroll(&mut self, key: usize) {
        let tm = &mut self.timers;
        let t = &mut tm.slab[key];
        if t.has(DESTROYED) {
            return;
        }
        t.flags |= DESTROYED;
        let was_linked = tm.unlink(key);
        let t = &tm.slab[key];
        if t.has(REFED) {
            // A linked timer's list is the map's list for its duration (a
            // list leaves the map only when empty); only a timer that is
            // running or fired needs the map lookup.
            let lk = if was_linked {
                Some(t.list as usize)
            } else {
                tm.map.get(&(t.delay as u64)).copied()
            };
            if let Some(lk) = lk
                && tm.lists[lk].list.is_empty()
            {
                tm.remove_list(lk);
            }
            self.dec_ref_count();
        }
        self.timers.slab[key].flags |= UNENROLLED;
    }

    /// Schedules `f` to run once, `delay` milliseconds from now
    /// (`setTimeout`). Delays below 1 ms, NaN, and above [`TIMEOUT_MAX`]
    /// become 1 ms (the last with a warning), as in Node.
    ///
    /// [`TIMEOUT_MAX`]: super::TIMEOUT_MAX
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc, time::Duration};
    /// use timerloop::EventLoop;
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// for (name, delay) in [("b", 2.0), ("a", 1.5), ("c", 0.0)] {
    ///     let l = log.clone();
    ///     lp.set_timeout(delay, move |lp| l.borrow_mut().push((name, lp.now())));
    /// }
    /// let l = log.clone();
    /// lp.set_timeout(Duration::from_millis(5), move |lp| l.borrow_mut().push(("d", lp.now())));
    /// lp.run().unwrap();
    /// // 1.5 and 0 share the 1 ms list, in insertion order.
    /// assert_eq!(*log.borrow(), [("a", 1), ("c", 1), ("b", 2), ("d", 5)]);
    /// ```
    pub fn set_timeout<F, R>(&mut self, delay: impl Into<Delay>, f: F) -> Timeout
    where
        F: FnMut(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        self.new_timer(delay.into(), f, false)
    }

    /// Schedules `f` to run every `period` milliseconds (`setInterval`),
    /// coerced as in [`set_timeout`](Self::set_timeout). Each next run is
    /// due `period` after the loop time read just before the callback
    /// started; lateness is not made up and the callback's own duration is
    /// not added.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let runs = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let r = runs.clone();
    /// let iv = lp.set_interval(10, move |lp| {
    ///     r.borrow_mut().push(lp.now());
    ///     if r.borrow().len() == 3 {
    ///         let me = lp.current_timeout().unwrap();
    ///         lp.clear_interval(me);
    ///     }
    /// });
    /// lp.run().unwrap();
    /// assert_eq!(*runs.borrow(), [10, 20, 30]);
    /// assert!(!lp.clear_interval(iv), "already cleared");
    /// ```
    pub fn set_interval<F, R>(&mut self, period: impl Into<Delay>, f: F) -> Timeout
    where
        F: FnMut(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        self.new_timer(period.into(), f, true)
    }

    /// Cancels a timeout or interval (`clearTimeout`). Returns whether the
    /// handle referred to a timer that this call cleared; clearing a stale
    /// handle, or clearing twice, does nothing. Clearing a timer from inside
    /// its own callback stops an interval from repeating.
    pub fn clear_timeout(&mut self, t: Timeout) -> bool {
        let Ok(key) = self.lookup(t) else {
            return false;
        };
        let timer = &mut self.timers.slab[key];
        if timer.has(CLEARED) {
            return false;
        }
        timer.flags |= CLEARED;
        timer.cb = None;
        self.unenroll(key);
        let timer = &self.timers.slab[key];
        if !timer.has(RUNNING) && !timer.has(RETAINED) {
            self.timers.free(key);
        }
        true
    }

    /// Frees a [retained](Self::retain) timer's storage, clearing it first
    /// if it is pending: the handle goes stale. Returns whether the handle
    /// referred to a timer.
    pub fn release(&mut self, t: Timeout) -> bool {
        let Ok(key) = self.lookup(t) else {
            return false;
        };
        self.clear_timeout(t);
        let timer = &mut self.timers.slab[key];
        timer.flags &= !RETAINED;
        if !timer.has(RUNNING) {
            self.timers.free(key);
        }
        true
    }

    /// Cancels an interval; the same as [`clear_timeout`](Self::clear_timeout),
    /// as in Node, where the two are interchangeable.
    pub fn clear_interval(&mut self, t: Timeout) -> bool {
        self.clear_timeout(t)
    }

    /// Restarts the timer's countdown from now, keeping its duration
    /// (`timeout.refresh()`); the timer moves behind the other timers of its
    /// duration. A timeout that already fired fires again, if it was
    /// [retained](Self::retain) (Node keeps every timeout object alive while
    /// referenced; Rust handles are `Copy`, so the crate frees a fired
    /// timeout unless asked to keep it). Refreshing an interval from inside
    /// its own callback has no effect: the next run stays on its grid.
    ///
    /// # Errors
    ///
    /// [`TimerError::Stale`] if the timer was cleared, or fired and was not
    /// retained; [`TimerError::ForeignLoop`] for another loop's handle.
    pub fn refresh(&mut self, t: Timeout) -> Result<(), TimerError> {
        let key = self.lookup(t)?;
        let timer = &self.timers.slab[key];
        if timer.has(UNENROLLED) {
            return Ok(()); // Node: refresh of a cleared timer is a no-op
        }
        let delay = timer.delay;
        let start = self.libuv_now();
        self.insert(key, delay, start);
        let timer = &mut self.timers.slab[key];
        if timer.has(DESTROYED) {
            timer.flags &= !DESTROYED;
            if timer.has(REFED) {
                self.inc_ref_count();
            }
        }
        Ok(())
    }

    /// Keeps a timeout's storage after it fires or is cleared, so that
    /// [`refresh`](Self::refresh), [`has_ref`](Self::has_ref) and friends
    /// keep working on it exactly as on a Node `Timeout` object (which
    /// lives while referenced): a fired timeout fires again when
    /// refreshed; one cleared after it fired can still be refreshed and
    /// then keeps the loop alive until its (empty) expiry, as in Node. The
    /// storage is freed by [`release`](Self::release).
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let runs = Rc::new(Cell::new(0));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let r = runs.clone();
    /// let t = lp.set_timeout(5, move |_| r.set(r.get() + 1));
    /// lp.retain(t).unwrap();
    /// lp.run().unwrap();
    /// lp.refresh(t).unwrap(); // a fired timeout fires again
    /// lp.run().unwrap();
    /// assert_eq!(runs.get(), 2);
    /// assert!(lp.release(t));
    /// assert_eq!(lp.stats().timers, 0);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`refresh`](Self::refresh).
    pub fn retain(&mut self, t: Timeout) -> Result<(), TimerError> {
        let key = self.lookup(t)?;
        self.timers.slab[key].flags |= RETAINED;
        Ok(())
    }

    /// Lets the loop exit while this timer is pending (`timeout.unref()`).
    /// An unrefed timer still fires if the loop is running anyway.
    ///
    /// # Errors
    ///
    /// As [`refresh`](Self::refresh).
    pub fn unref(&mut self, t: Timeout) -> Result<(), TimerError> {
        let key = self.lookup(t)?;
        let timer = &mut self.timers.slab[key];
        if timer.has(REFED) {
            timer.flags &= !REFED;
            if !timer.has(DESTROYED) {
                self.dec_ref_count();
            }
        }
        Ok(())
    }

    /// Makes the timer keep the loop alive again (`timeout.ref()`).
    ///
    /// # Errors
    ///
    /// As [`refresh`](Self::refresh).
    pub fn ref_(&mut self, t: Timeout) -> Result<(), TimerError> {
        let key = self.lookup(t)?;
        let timer = &mut self.timers.slab[key];
        if !timer.has(REFED) {
            timer.flags |= REFED;
            if !timer.has(DESTROYED) {
                self.inc_ref_count();
            }
        }
        Ok(())
    }

    /// Whether the timer keeps the loop alive (`timeout.hasRef()`).
    ///
    /// # Errors
    ///
    /// As [`refresh`](Self::refresh).
    pub fn has_ref(&self, t: Timeout) -> Result<bool, TimerError> {
        let key = self.lookup(t)?;
        Ok(self.timers.slab[key].has(REFED))
    }

    /// Whether the timer is waiting to fire.
    pub fn is_pending(&self, t: Timeout) -> bool {
        self.lookup(t)
            .is_ok_and(|k| self.timers.slab[k].links.is_linked())
    }

    /// The timeout or interval whose callback is running (Node's `this` in
    /// a timer callback), if any.
    pub fn current_timeout(&self) -> Option<Timeout> {
        self.timers.current
    }

    // ----- firing --------------------------------------------------------

    /// Node's `RunTimers`: the native timer's callback.
    pub(super) fn run_timers(&mut self) {
        if self.fatal.is_some() {
            return;
        }
        self.depth += 1;
        let now = self.libuv_now();
        let next = loop {
            match self.process_timers(now) {
                Ok(next) => break next,
                Err(t) => {
                    if !self.uncaught(t) {
                        self.depth -= 1;
                        self.rearm_after_failure(now);
                        return;
                    }
                }
            }
        };
        match next {
            Next::At { expiry, refed } => {
                let now = self.uv.now() - self.timers.base;
                let d = expiry.saturating_sub(now).max(1);
                self.schedule_timer(d);
                if refed {
                    let _ = self.uv.ref_handle(self.timers.native);
                } else {
                    let _ = self.uv.unref_handle(self.timers.native);
                }
            }
            Next::Idle => {
                let _ = self.uv.unref_handle(self.timers.native);
            }
        }
        self.depth -= 1;
        self.close_scope();
    }

    /// After a failure with no handler, `run` returns; arm the native timer
    /// so that a later run picks up exactly where this one stopped.
    /// The pass is flagged as interrupted: the next `run` finishes it
    /// first, even if nothing refed is left (the pass was running anyway).
    fn rearm_after_failure(&mut self, now: u64) {
        self.timers.interrupted = true;
        let refed = self.timers.ref_count > 0;
        let _ = if refed {
            self.uv.ref_handle(self.timers.native)
        } else {
            self.uv.unref_handle(self.timers.native)
        };
        let Some((_, (expiry, _))) = self.timers.queue.peek() else {
            return;
        };
        self.timers.next_expiry = expiry;
        self.schedule_timer(expiry.saturating_sub(now));
    }

    /// Finishes a timers pass that an unhandled failure interrupted.
    pub(super) fn resume_timers(&mut self) {
        if std::mem::take(&mut self.timers.interrupted) {
            self.run_timers();
        }
    }

    /// Node's `processTimers(now)`.
    fn process_timers(&mut self, now: u64) -> Result<Next, Thrown> {
        self.timers.next_expiry = u64::MAX;
        let mut ran_list = false;
        loop {
            let Some((lk, (expiry, id))) = self.timers.queue.peek() else {
                return Ok(Next::Idle);
            };
            if expiry > now {
                self.timers.next_expiry = expiry;
                return Ok(Next::At {
                    expiry,
                    refed: self.timers.ref_count > 0,
                });
            }
            if ran_list {
                self.run_next_ticks()?;
                // A tick may have removed this list (Node then runs the dead
                // list, which is empty, and peeks again: the same thing).
                if self.timers.queue.peek() != Some((lk, (expiry, id))) {
                    continue;
                }
            } else {
                ran_list = true;
            }
            self.list_on_timeout(lk, now)?;
        }
    }

    /// Node's `listOnTimeout(list, now)`.
    fn list_on_timeout(&mut self, lk: usize, now: u64) -> Flow {
        let msecs = self.timers.lists[lk].msecs;
        let serial = self.timers.lists[lk].serial;
        let alive = |lp: &EventLoop| lp.timers.lists.get(lk).is_some_and(|l| l.serial == serial);
        let mut ran_timer = false;
        while let Some(key) = self.timers.lists[lk].list.peek() {
            let start = self.timers.slab[key].start;
            // At the end of time (a saturated virtual clock) no time can
            // pass, so every listed timer counts as due.
            let end_of_time = self.uv.now() == u64::MAX;
            if (now as i128 - start as i128) < msecs as i128 && !end_of_time {
                let tm = &mut self.timers;
                let expiry = start.saturating_add(msecs).max(now.saturating_add(1));
                let id = tm.next_list_id;
                tm.next_list_id += 1;
                tm.lists[lk].expiry = expiry;
                tm.lists[lk].id = id;
                tm.queue.set_key(lk, (expiry, id));
                return Ok(());
            }
            if ran_timer {
                let generation = self.timers.slab[key].generation;
                self.run_next_ticks()?;
                if !alive(self) {
                    return Ok(());
                }
                // A tick may have cleared the timer we peeked (then it is
                // skipped). One that a tick refreshed still runs now: Node
                // holds the peeked timer and unlinks it wherever it is.
                let still = self
                    .timers
                    .slab
                    .get(key)
                    .is_some_and(|t| t.generation == generation && !t.has(CLEARED));
                if !still {
                    continue;
                }
            } else {
                ran_timer = true;
            }
            if self.timers.slab[key].has(CLEARED) {
                // `!timer._onTimeout`: a cleared timer that a refresh put
                // back in the list (only a retained one can be). It does
                // not run; it is destroyed, and the ref count drops
                // silently.
                let tm = &mut self.timers;
                tm.lists[lk].list.remove(&mut tm.slab, key);
                let t = &mut tm.slab[key];
                if !t.has(DESTROYED) {
                    t.flags |= DESTROYED;
                    if t.has(REFED) {
                        tm.ref_count -= 1;
                    }
                }
                continue;
            }
            self.fire(key)?;
            if !alive(self) {
                return Ok(());
            }
        }
        // Empty: drop the list, unless it was removed (and maybe recreated)
        // while it ran.
        let tm = &mut self.timers;
        if tm.map.get(&msecs) == Some(&lk) {
            tm.remove_list(lk);
        }
        Ok(())
    }

    /// Runs one due timer: the body of `listOnTimeout`'s loop after the
    /// checks, with its `finally`.
    fn fire(&mut self, key: usize) -> Flow {
        let tm = &mut self.timers;
        tm.unlink(key);
        let timer = &mut tm.slab[key];
        let repeat = timer.has(REPEAT);
        let mut cb = timer.cb.take().expect("a listed timer has its callback");
        timer.flags |= RUNNING;
        let start = if repeat { self.libuv_now() } else { 0 };
        let handle = self.handle_of(key);
        let outer = self.timers.current.replace(handle);
        let result = self.invoke(&mut cb);
        self.timers.current = outer;

        // finally
        let timer = &mut self.timers.slab[key];
        timer.flags &= !RUNNING;
        if repeat && !timer.has(UNENROLLED) {
            let delay = timer.delay;
            self.insert(key, delay, start);
        } else if !timer.links.is_linked() && !timer.has(DESTROYED) {
            timer.flags |= DESTROYED;
            if timer.has(REFED) {
                // Silently: RunTimers fixes the handle's ref from the
                // return value.
                self.timers.ref_count -= 1;
            }
        }
        let timer = &mut self.timers.slab[key];
        if timer.has(RETAINED) {
            if !timer.has(CLEARED) {
                timer.cb = Some(cb);
            }
        } else if timer.has(CLEARED) || timer.has(DESTROYED) {
            self.timers.free(key);
        } else {
            timer.cb = Some(cb);
        }
        let kind = if repeat {
            CallbackKind::Interval
        } else {
            CallbackKind::Timeout
        };
        result.map_err(|cause| Thrown::Error(CallbackError::new(kind, cause)))
    }
}
