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

use std::collections::VecDeque;

use super::error::{CallbackError, CallbackKind, CallbackResult};
use super::{EventLoop, Flow, OnceFn, Thrown};

type TaskFn = OnceFn;

#[derive(Default)]
pub(super) struct Ticks {
    ticks: VecDeque<TaskFn>,
    microtasks: VecDeque<TaskFn>,
    /// `tickInfo[kHasTickScheduled]`: set when a tick is queued onto an
    /// empty queue, cleared only when a drain completes.
    scheduled: bool,
    /// Ticks or microtasks were queued by code outside any callback since
    /// the last drain.
    pub(super) drain_first: bool,
}

impl Ticks {
    pub(super) fn ticks_len(&self) -> usize {
        self.ticks.len()
    }

    pub(super) fn microtasks_len(&self) -> usize {
        self.microtasks.len()
    }
}

fn boxed<F, R>(f: F) -> TaskFn
where
    F: FnOnce(&mut EventLoop) -> R + 'static,
    R: CallbackResult,
{
    Box::new(move |lp| f(lp).into_result())
}

impl EventLoop {
    /// Queues `f` on the `nextTick` queue (`process.nextTick`): it runs as
    /// soon as the current callback returns, before microtasks, timers,
    /// immediates and I/O. Ticks queued by ticks run in the same drain, so
    /// an endless chain of ticks starves everything else, as in Node.
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
            self.ticks.scheduled = true;
        }
        self.note_main_body_work();
        self.ticks.ticks.push_back(boxed(f));
    }

    /// Queues `f` as a microtask (`queueMicrotask`): microtasks run after
    /// the `nextTick` queue drains, FIFO, including microtasks they queue.
    /// A failing microtask is reported at once and the others still run.
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
        self.note_main_body_work();
        self.ticks.microtasks.push_back(boxed(f));
    }

    /// Work queued outside any callback, with the loop not running, is the
    /// "main body" whose ticks drain when `run` starts.
    fn note_main_body_work(&mut self) {
        if self.depth == 0 && !self.uv.is_running() {
            self.ticks.drain_first = true;
        }
    }

    fn run_task(&mut self, f: TaskFn, kind: CallbackKind) -> Flow {
        self.invoke_once(f)
            .map_err(|c| Thrown::Error(CallbackError::new(kind, c)))
    }

    /// A microtask checkpoint. Each failure is reported where it happens,
    /// as Node's `queueMicrotask` wrapper does; only a fatal one stops it.
    fn run_microtasks(&mut self) -> Flow {
        while let Some(m) = self.ticks.microtasks.pop_front() {
            if let Err(t) = self.run_task(m, CallbackKind::Microtask)
                && !self.uncaught(t)
            {
                return Err(Thrown::Fatal);
            }
        }
        Ok(())
    }

    /// Node's `processTicksAndRejections`. A failing tick is already off
    /// the queue when its error propagates; the rest stay queued.
    fn process_ticks(&mut self) -> Flow {
        loop {
            while let Some(t) = self.ticks.ticks.pop_front() {
                self.run_task(t, CallbackKind::Tick)?;
            }
            self.run_microtasks()?;
            if self.ticks.ticks.is_empty() {
                break;
            }
        }
        self.ticks.scheduled = false;
        Ok(())
    }

    /// Node's `runNextTicks`.
    pub(crate) fn run_next_ticks(&mut self) -> Flow {
        if !self.ticks.scheduled {
            self.run_microtasks()?;
        }
        if !self.ticks.scheduled {
            return Ok(());
        }
        self.process_ticks()
    }
}
