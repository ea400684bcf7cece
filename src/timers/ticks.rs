//! `process.nextTick` and `queueMicrotask`, drained as Node drains them.
//!
//! - `processTicksAndRejections`: run ticks FIFO (including ticks queued by
//!   ticks) until none are left, then one full microtask checkpoint; repeat
//!   while ticks remain.
//! - `runNextTicks` (between timers, lists and immediates, and when a
//!   callback scope closes): with no tick scheduled, only a microtask
//!   checkpoint; otherwise the above.
//!
//! Both queues are plain FIFO queues and both drains are loops, so a
//! callback that queues millions of nested ticks uses no stack.
//!
//! The microtask queue also holds task polls (a task's poll is a
//! microtask) and lives in the loop's shared state, so that a waker with no
//! `&mut EventLoop` queues its task in FIFO order. Unhandled rejections
//! (detached tasks that panicked) are reported after the microtasks drain,
//! where Node's `processPromiseRejections` reports them (R10.2 step 3).
#![forbid(unsafe_code)]

use std::collections::VecDeque;

use super::current::{LoopShared, Micro};
use super::error::{CallbackError, CallbackKind, CallbackResult};
use super::thin::ThinOnce;
use super::{EventLoop, Flow, OnceFn, Thrown};

type TaskFn = OnceFn;

/// [`Ticks::flags`]: a tick is scheduled.
const TICK_SCHEDULED: u8 = 1;
/// [`Ticks::flags`]: a rejection waits to be reported.
const REJECTION_TO_WARN: u8 = 2;

#[derive(Default)]
pub(super) struct Ticks {
    ticks: VecDeque<TaskFn>,
    /// Node's two flags in one byte, so that asking for either is one
    /// test after every callback: `tickInfo[kHasTickScheduled]`
    /// ([`TICK_SCHEDULED`]: set when a tick is queued onto an empty queue,
    /// cleared only when a drain completes) and `kHasRejectionToWarn`
    /// ([`REJECTION_TO_WARN`]: set while `rejections` is not empty).
    flags: u8,
    /// `pendingUnhandledRejections`.
    rejections: VecDeque<CallbackError>,
    /// Ticks or microtasks were queued by code outside any callback since
    /// the last drain.
    pub(super) drain_first: bool,
}

impl Ticks {
    pub(super) fn ticks_len(&self) -> usize {
        self.ticks.len()
    }

    /// `hasTickScheduled() || hasRejectionToWarn()`.
    #[inline(always)]
    fn ticks_or_rejections(&self) -> bool {
        debug_assert_eq!(
            self.flags & REJECTION_TO_WARN != 0,
            !self.rejections.is_empty()
        );
        self.flags != 0
    }

    /// [`REJECTION_TO_WARN`] after rejections were taken off the queue.
    fn rejections_taken(&mut self) {
        if self.rejections.is_empty() {
            self.flags &= !REJECTION_TO_WARN;
        }
    }
}

impl EventLoop {
    /// Queues `f` on the `nextTick` queue (`process.nextTick`): it runs as
    /// soon as the current callback returns, before microtasks, timers,
    /// immediates and I/O. Ticks queued by ticks run in the same drain, so
    /// an endless chain of ticks starves everything else, as in Node. A
    /// tick queued by a microtask runs once the microtask queue has
    /// drained, after the microtasks queued after it (R10.2).
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let l = log.clone();
    /// lp.set_timeout(1, move |lp| {
    ///     let (a, b) = (l.clone(), l.clone());
    ///     lp.queue_microtask(move |_| a.borrow_mut().push("microtask"));
    ///     lp.next_tick(move |_| b.borrow_mut().push("tick"));
    /// });
    /// lp.run().unwrap();
    /// assert_eq!(*log.borrow(), ["tick", "microtask"]);
    /// ```
    pub fn next_tick<F, R>(&mut self, f: F)
    where
        F: FnOnce(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        if self.ticks.ticks.is_empty() {
            self.ticks.flags |= TICK_SCHEDULED;
        }
        self.note_main_body_work();
        self.ticks.ticks.push_back(ThinOnce::callback(f).0);
    }

    /// Queues `f` as a microtask (`queueMicrotask`): microtasks run after
    /// the `nextTick` queue drains, FIFO, including microtasks they queue.
    /// A failing microtask is reported at once; with an uncaught-error
    /// handler the others still run, without one the run stops with the
    /// error and they run when it is called again.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (a, b) = (log.clone(), log.clone());
    /// lp.queue_microtask(move |lp| {
    ///     a.borrow_mut().push("m1");
    ///     lp.queue_microtask(move |_| b.borrow_mut().push("m1-nested"));
    /// });
    /// let c = log.clone();
    /// lp.queue_microtask(move |_| c.borrow_mut().push("m2"));
    /// lp.run().unwrap();
    /// assert_eq!(*log.borrow(), ["m1", "m2", "m1-nested"]);
    /// ```
    pub fn queue_microtask<F, R>(&mut self, f: F)
    where
        F: FnOnce(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        self.push_microtask(Micro::Call(ThinOnce::callback(f).0));
    }

    /// Appends to the microtask queue.
    pub(crate) fn push_microtask(&mut self, m: Micro) {
        self.note_main_body_work();
        self.shared.micro.push(m);
    }

    pub(super) fn microtasks_len(&self) -> usize {
        self.shared.micro.len()
    }

    /// A detached task panicked (or a handle that was never polled was
    /// dropped with its task's panic unread): an unhandled rejection,
    /// reported once the microtask queue has drained.
    pub(crate) fn reject(&mut self, err: CallbackError) {
        self.ticks.rejections.push_back(err);
        self.ticks.flags |= REJECTION_TO_WARN;
        // Outside any callback (a dropped JoinHandle's unread panic, at
        // the next flush point): reported by the next run's first drain.
        self.note_main_body_work();
    }

    /// Work queued outside any callback, with the loop not running, is the
    /// "main body" whose ticks drain when `run` starts.
    fn note_main_body_work(&mut self) {
        if self.depth == 0 && !self.uv.is_running() {
            self.ticks.drain_first = true;
        }
    }

    /// After a panic unwound out of a callback scope, maybe out of a
    /// microtask checkpoint before its end: with the queue empty, every
    /// task that checkpoint flagged as woken has run, so the flag goes, as
    /// at the checkpoint's end. Left set, it would make the next run drain
    /// first, as if a task had been woken outside the loop.
    pub(crate) fn unwound_checkpoint(&mut self) {
        if self.shared.micro.is_empty() {
            self.shared.woke_task.set(false);
        }
    }

    fn run_task(&mut self, f: TaskFn, kind: CallbackKind) -> Flow {
        self.invoke_once(kind, f)
            .map_err(|c| Thrown::Error(CallbackError::new(kind, c)))
    }

    /// A microtask checkpoint. Each failure is reported where it happens,
    /// as Node's `queueMicrotask` wrapper does; only a fatal one stops it.
    fn run_microtasks(&mut self) -> Flow {
        // Whatever a waker queued is drained here: before the first job,
        // and again once the queue is empty, since a task woken by a job of
        // this checkpoint (a `yield_now`, a wake from a callback inside it)
        // was queued behind it and has run too.
        self.shared.woke_task.set(false);
        loop {
            let next = self.shared.micro.pop();
            match next {
                None => {
                    self.shared.woke_task.set(false);
                    return Ok(());
                }
                Some(Micro::Call(f)) => {
                    if let Err(t) = self.run_task(f, CallbackKind::Microtask)
                        && !self.uncaught(t)
                    {
                        return Err(Thrown::Fatal);
                    }
                }
                Some(Micro::Task(key)) => self.poll_task(key),
            }
            if self.halting {
                return Err(Thrown::Halt);
            }
        }
    }

    /// Node's `processPromiseRejections`: reports the rejections pending
    /// when it starts, each as an uncaught exception. Returns whether it
    /// reported any (the handler may have queued work) or more arrived.
    fn process_rejections(&mut self) -> Result<bool, Thrown> {
        let n = self.ticks.rejections.len();
        for _ in 0..n {
            let Some(e) = self.ticks.rejections.pop_front() else {
                break;
            };
            self.ticks.rejections_taken();
            if !self.uncaught(Thrown::Error(e)) {
                return Err(Thrown::Fatal);
            }
        }
        Ok(n > 0 || !self.ticks.rejections.is_empty())
    }

    /// Node's `processTicksAndRejections`. A failing tick is already off
    /// the queue when its error propagates; the rest stay queued.
    fn process_ticks(&mut self) -> Flow {
        loop {
            while let Some(t) = self.ticks.ticks.pop_front() {
                self.run_task(t, CallbackKind::Tick)?;
            }
            self.run_microtasks()?;
            if self.ticks.ticks.is_empty() && !self.process_rejections()? {
                break;
            }
        }
        self.ticks.flags &= !TICK_SCHEDULED;
        Ok(())
    }

    /// `hasTickScheduled() || hasRejectionToWarn()`.
    fn ticks_or_rejections(&self) -> bool {
        self.ticks.ticks_or_rejections()
    }

    /// Node's `runNextTicks`. Inlined where callbacks return: the common
    /// case, nothing queued at all, is three loads and one branch.
    #[inline(always)]
    pub(crate) fn run_next_ticks(&mut self) -> Flow {
        if self.nothing_to_tick() {
            return Ok(());
        }
        self.run_queued_ticks()
    }

    /// The fast half of [`run_next_ticks`](Self::run_next_ticks): true,
    /// and the checkpoint done, when no tick, rejection or microtask is
    /// queued.
    #[inline(always)]
    pub(crate) fn nothing_to_tick(&mut self) -> bool {
        nothing_to_tick(&self.ticks, &self.shared)
    }

    /// [`run_next_ticks`](Self::run_next_ticks) with something queued.
    #[inline(never)]
    pub(crate) fn run_queued_ticks(&mut self) -> Flow {
        if !self.ticks_or_rejections() {
            self.run_microtasks()?;
        }
        if !self.ticks_or_rejections() {
            return Ok(());
        }
        self.process_ticks()
    }
}

/// [`EventLoop::nothing_to_tick`] over the two fields it reads, for a
/// caller that holds a borrow of another (the timers pass, holding the
/// timer it is about to run).
#[inline(always)]
pub(super) fn nothing_to_tick(ticks: &Ticks, shared: &LoopShared) -> bool {
    // Asked without a branch between (`&`, not `&&`): the timers pass
    // keeps the answer for its next turn and branches once on it (with
    // the short-circuit, LLVM branched on each test at the loop's end:
    // a fired timeout 1.07–1.10× slower, for as many taken jumps).
    // The woken-task flag is asked too, not cleared: set with the queue
    // empty (a checkpoint a panic unwound, a task it flagged already run),
    // it sends the caller to `run_queued_ticks`, whose checkpoint clears
    // it and finds nothing to run, where this used to clear it with a
    // store after every callback.
    !ticks.ticks_or_rejections() & shared.micro.is_empty() & !shared.woke_task.get()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    /// A tick or microtask is two words queued, a closure of one word in
    /// them (no allocation), as the box it replaces was.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_queued_callback_is_two_words() {
        assert_eq!(std::mem::size_of::<TaskFn>(), 16);
        assert_eq!(std::mem::size_of::<Micro>(), 16);
    }

    /// Ticks and microtasks holding one word, or more, run once and let go
    /// of what they captured, also when the loop is dropped with them
    /// queued.
    #[test]
    fn queued_callbacks_run_once_and_drop_their_captures() {
        let seen = Rc::new(Cell::new(0_u64));
        let mut lp = EventLoop::with_virtual_clock();
        let s = seen.clone();
        lp.next_tick(move |_| s.set(s.get() + 1));
        let (s, pad) = (seen.clone(), [10_u64, 0, 0]);
        lp.next_tick(move |_| s.set(s.get() + pad[0]));
        let s = seen.clone();
        lp.queue_microtask(move |_| s.set(s.get() + 100));
        let (s, pad) = (seen.clone(), [1000_u64, 0, 0]);
        lp.queue_microtask(move |_| s.set(s.get() + pad[0]));
        assert_eq!(Rc::strong_count(&seen), 5);
        lp.run().unwrap();
        assert_eq!((seen.get(), Rc::strong_count(&seen)), (1111, 1));
        let s = seen.clone();
        lp.next_tick(move |_| s.set(0));
        let s = seen.clone();
        lp.queue_microtask(move |_| s.set(0));
        drop(lp);
        assert_eq!((seen.get(), Rc::strong_count(&seen)), (1111, 1));
    }
}
