//! Immediates: Node's `Immediate`, `processImmediate` and the C++
//! `CheckImmediate` that runs it from the loop's check phase.
//!
//! New immediates go on `queue`. The check phase detaches the whole queue
//! as one batch (`outstanding`); immediates added while the batch runs wait
//! for the next check phase. While refed immediates exist an idle handle is
//! active, so the poll phase does not block.

use slab::Slab;

use super::error::{CallbackError, CallbackKind, CallbackResult, TimerError};
use super::{EventLoop, Flow, OnceFn, Thrown};
use crate::collections::list::{Linked, Links, List};
use crate::uv;

type ImmediateFn = OnceFn;

/// A handle to an immediate: small, `Copy`, generation checked. It goes
/// stale once the immediate has run or been cleared.
///
/// Immediates and timeouts have distinct handle types, so clearing one
/// with the other's function (which Node allows, with odd results) cannot
/// be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Immediate {
    key: u32,
    generation: u32,
    loop_id: u32,
}

struct Entry {
    links: Links,
    generation: u32,
    refed: bool,
    in_batch: bool,
    cb: Option<ImmediateFn>,
}

impl Linked for Entry {
    fn links(&self) -> &Links {
        &self.links
    }
    fn links_mut(&mut self) -> &mut Links {
        &mut self.links
    }
}

pub(super) struct Immediates {
    slab: Slab<Entry>,
    next_generation: u32,
    queue: List,
    outstanding: List,
    /// `immediateInfo[kRefCount]`.
    ref_count: u32,
    /// `immediateInfo[kHasOutstanding]`: a batch started and has not
    /// finished normally.
    has_outstanding: bool,
    idle: uv::Handle,
}

impl Immediates {
    pub(super) fn new(idle: uv::Handle) -> Self {
        Immediates {
            slab: Slab::new(),
            next_generation: 0,
            queue: List::new(),
            outstanding: List::new(),
            ref_count: 0,
            has_outstanding: false,
            idle,
        }
    }

    /// `immediateInfo[kCount]`: immediates not yet run or cleared.
    pub(super) fn len(&self) -> usize {
        self.slab.len()
    }

    fn unlink(&mut self, key: usize) {
        let e = &self.slab[key];
        if e.links.is_linked() {
            if e.in_batch {
                self.outstanding.remove(&mut self.slab, key);
            } else {
                self.queue.remove(&mut self.slab, key);
            }
        }
    }
}

impl EventLoop {
    fn lookup_immediate(&self, i: Immediate) -> Result<usize, TimerError> {
        if i.loop_id != self.id {
            return Err(TimerError::ForeignLoop);
        }
        match self.immediates.slab.get(i.key as usize) {
            Some(e) if e.generation == i.generation => Ok(i.key as usize),
            _ => Err(TimerError::Stale),
        }
    }

    fn toggle_immediate_ref(&mut self, on: bool) {
        let idle = self.immediates.idle;
        let _ = if on {
            self.uv.watcher_start(idle)
        } else {
            self.uv.watcher_stop(idle)
        };
    }

    /// Schedules `f` for the loop's next check phase (`setImmediate`).
    /// Immediates run in the order they were scheduled; one scheduled from
    /// an immediate waits for the next iteration.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let l = log.clone();
    /// lp.set_timeout(0, move |lp| {
    ///     let (a, b) = (l.clone(), l.clone());
    ///     lp.set_timeout(0, move |_| a.borrow_mut().push("timeout"));
    ///     lp.set_immediate(move |_| b.borrow_mut().push("immediate"));
    /// });
    /// lp.run().unwrap();
    /// // From a timer callback, the immediate always comes first.
    /// assert_eq!(*log.borrow(), ["immediate", "timeout"]);
    /// ```
    pub fn set_immediate<F, R>(&mut self, f: F) -> Immediate
    where
        F: FnOnce(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        let im = &mut self.immediates;
        let generation = im.next_generation;
        im.next_generation = generation.wrapping_add(1);
        let key = im.slab.insert(Entry {
            links: Links::default(),
            generation,
            refed: true,
            in_batch: false,
            cb: Some(Box::new(move |lp| f(lp).into_result())),
        });
        assert!(key < u32::MAX as usize, "more than 2^32 - 1 immediates");
        im.queue.append(&mut im.slab, key);
        im.ref_count += 1;
        if im.ref_count == 1 {
            self.toggle_immediate_ref(true);
        }
        Immediate {
            key: key as u32,
            generation,
            loop_id: self.id,
        }
    }

    /// Cancels an immediate (`clearImmediate`), even from a tick or another
    /// immediate of the same batch. Returns whether it was pending.
    pub fn clear_immediate(&mut self, i: Immediate) -> bool {
        let Ok(key) = self.lookup_immediate(i) else {
            return false;
        };
        let refed = self.immediates.slab[key].refed;
        self.immediates.unlink(key);
        self.immediates.slab.remove(key);
        if refed {
            self.immediates.ref_count -= 1;
            if self.immediates.ref_count == 0 {
                self.toggle_immediate_ref(false);
            }
        }
        true
    }

    /// Lets the loop exit while this immediate is pending
    /// (`immediate.unref()`); it still runs if the loop iterates anyway.
    ///
    /// # Errors
    ///
    /// [`TimerError::Stale`] once the immediate ran or was cleared.
    pub fn unref_immediate(&mut self, i: Immediate) -> Result<(), TimerError> {
        let key = self.lookup_immediate(i)?;
        let e = &mut self.immediates.slab[key];
        if e.refed {
            e.refed = false;
            self.immediates.ref_count -= 1;
            if self.immediates.ref_count == 0 {
                self.toggle_immediate_ref(false);
            }
        }
        Ok(())
    }

    /// Makes the immediate keep the loop alive again (`immediate.ref()`).
    ///
    /// # Errors
    ///
    /// As [`unref_immediate`](Self::unref_immediate).
    pub fn ref_immediate(&mut self, i: Immediate) -> Result<(), TimerError> {
        let key = self.lookup_immediate(i)?;
        let e = &mut self.immediates.slab[key];
        if !e.refed {
            e.refed = true;
            self.immediates.ref_count += 1;
            if self.immediates.ref_count == 1 {
                self.toggle_immediate_ref(true);
            }
        }
        Ok(())
    }

    /// Whether the immediate keeps the loop alive (`immediate.hasRef()`);
    /// false once it ran or was cleared, as in Node.
    pub fn immediate_has_ref(&self, i: Immediate) -> bool {
        self.lookup_immediate(i)
            .is_ok_and(|k| self.immediates.slab[k].refed)
    }

    /// Node's `CheckImmediate`: the check handle's callback.
    pub(super) fn check_immediates(&mut self) {
        if self.fatal.is_some() {
            return;
        }
        // `RunAndClearNativeImmediates` runs first, inside a callback scope
        // of its own; closing it drains whatever ticks and microtasks a
        // failure left behind, before any immediate.
        self.close_scope();
        if self.fatal.is_some() || self.immediates.len() == 0 {
            return;
        }
        loop {
            self.depth += 1;
            let r = self.process_immediate();
            self.depth -= 1;
            match r {
                Ok(()) => self.close_scope(),
                Err(t) => {
                    // The failed scope does not drain; the batch's rest runs
                    // in a new scope, in this same check phase (or, after an
                    // unhandled failure, when `run` resumes).
                    if !self.uncaught(t) {
                        break;
                    }
                }
            }
            if !self.immediates.has_outstanding || self.fatal.is_some() {
                break;
            }
        }
        if self.immediates.ref_count == 0 {
            self.toggle_immediate_ref(false);
        }
        let im = &mut self.immediates;
        if im.slab.is_empty() && im.slab.capacity() > 4096 {
            im.slab = Slab::new();
        }
    }

    /// Finishes an immediate batch that an unhandled failure interrupted.
    pub(super) fn resume_immediates(&mut self) {
        if self.immediates.has_outstanding && !self.immediates.outstanding.is_empty() {
            self.check_immediates();
        }
    }

    /// Node's `processImmediate()`.
    fn process_immediate(&mut self) -> Flow {
        let im = &mut self.immediates;
        if im.outstanding.is_empty() {
            // After a failure on a batch's last immediate this takes the
            // immediates queued since, in the same check phase, as Node's
            // `kHasOutstanding` re-entry does.
            im.has_outstanding = true;
            im.outstanding = std::mem::take(&mut im.queue);
            let mut cur = im.outstanding.peek();
            while let Some(k) = cur {
                im.slab[k].in_batch = true;
                cur = List::next_of(&im.slab, k);
            }
        }
        let mut ran = false;
        while let Some(key) = self.immediates.outstanding.peek() {
            if ran {
                self.run_next_ticks()?;
                // A tick may have cleared the next one: look again.
                if self.immediates.outstanding.peek() != Some(key) {
                    continue;
                }
            } else {
                ran = true;
            }
            let im = &mut self.immediates;
            im.outstanding.remove(&mut im.slab, key);
            let e = im.slab.remove(key);
            if e.refed {
                im.ref_count -= 1;
            }
            let Some(cb) = e.cb else { continue };
            let r = self.invoke_once(cb);
            r.map_err(|c| Thrown::Error(CallbackError::new(CallbackKind::Immediate, c)))?;
        }
        self.immediates.has_outstanding = false;
        Ok(())
    }
}
