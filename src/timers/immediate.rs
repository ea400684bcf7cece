//! Immediates: Node's `Immediate`, `processImmediate` and the C++
//! `CheckImmediate` that runs it from the loop's check phase.
//!
//! New immediates go on `queue`. The check phase detaches the whole queue
//! as one batch (`outstanding`); immediates added while the batch runs wait
//! for the next check phase (R9.6, R9.7).
//!
//! Ground rules:
//! - the idle handle is started exactly while refed immediates exist, so
//!   the poll phase does not block for them (R9.8), as the loop sees it:
//!   the count changes at once, the handle follows when the loop next
//!   looks ([`Host::sync_handles`](crate::uv::Host::sync_handles)), so a
//!   set-and-clear between two looks never touches it;
//! - a batch that a failure interrupted finishes in the same check phase
//!   if a handler took the failure (R7.3), else when `run` resumes.
#![forbid(unsafe_code)]

use std::num::NonZeroU32;

use super::error::{CallbackError, CallbackKind, CallbackResult, TimerError};
use super::lists::SHRINK_ABOVE;
use super::thin::ThinOnce;
use super::{EventLoop, Flow, Thrown};
use crate::collections::arena::{Arena, Emptied, Key, stored_inline};
use crate::collections::list::{Linked, Links, List};
use crate::uv;

/// An immediate's callback: inline, no allocation, when it captures at
/// most a word (most do).
type ImmediateFn = ThinOnce;

/// A handle to an immediate: small, `Copy`, generation checked. It goes
/// stale once the immediate has run or been cleared.
///
/// Immediates and timeouts have distinct handle types, so clearing one
/// with the other's function (which Node allows, with odd results, §14.13)
/// cannot be written.
///
/// ```
/// use timerloop::{EventLoop, TimerError};
/// let mut lp = EventLoop::with_virtual_clock();
/// let i = lp.set_immediate(|_| {});
/// assert!(lp.immediate_is_pending(i));
/// lp.run().unwrap();
/// assert_eq!(lp.clear_immediate(i), Err(TimerError::Stale)); // it ran
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Immediate {
    key: Key,
    loop_id: NonZeroU32,
}

/// One pending immediate: 32 bytes in its arena slot, its generation
/// inside (a generic [`Slot`](crate::collections::arena::Slot) around it
/// would pad it to 40). A batch of a million immediates touches that many
/// slots of fresh memory, and a fresh page costs its fault.
struct Entry {
    links: Links,
    generation: u32,
    refed: bool,
    in_batch: bool,
    /// Dropping `cb` does nothing ([`ThinOnce::discard`]).
    plain: bool,
    cb: ImmediateFn,
}

stored_inline!(Entry);

impl Linked for Entry {
    fn links(&self) -> &Links {
        &self.links
    }
    fn links_mut(&mut self) -> &mut Links {
        &mut self.links
    }
}

pub(super) struct Immediates {
    slab: Arena<Entry, Entry>,
    queue: List,
    outstanding: List,
    /// `immediateInfo[kRefCount]`.
    ref_count: u32,
    /// `immediateInfo[kHasOutstanding]`: a batch started and has not
    /// finished normally.
    has_outstanding: bool,
    idle: uv::Handle,
    /// Whether `idle` is started: `ref_count > 0` as of the last
    /// [`EventLoop::sync_idle`].
    idle_on: bool,
    /// Whether and when the arena emptied at the end of a check phase
    /// ([`EventLoop::release_emptied_immediates`]).
    pub(super) emptied: Emptied,
}

impl Immediates {
    pub(super) fn new(idle: uv::Handle) -> Self {
        Immediates {
            slab: Arena::default(),
            queue: List::new(),
            outstanding: List::new(),
            ref_count: 0,
            has_outstanding: false,
            idle,
            idle_on: false,
            emptied: Emptied::default(),
        }
    }

    /// `immediateInfo[kCount]`: immediates not yet run or cleared.
    pub(super) fn len(&self) -> usize {
        self.slab.len()
    }

    /// Unlinks an entry already taken out of the slab, given its links.
    fn unlink_taken(&mut self, links: Links, in_batch: bool) {
        if links.is_linked() {
            let list = if in_batch {
                &mut self.outstanding
            } else {
                &mut self.queue
            };
            list.remove_taken(&mut self.slab, links);
        }
    }
}

impl EventLoop {
    fn lookup_immediate(&self, i: Immediate) -> Result<usize, TimerError> {
        if i.loop_id != self.id {
            return Err(TimerError::ForeignLoop);
        }
        match self.immediates.slab.get(i.key) {
            Some(_) => Ok(i.key.index()),
            None => Err(TimerError::Stale),
        }
    }

    /// Adds or removes one refed immediate (`immediateInfo[kRefCount]`,
    /// R9.2, R9.3). The idle handle follows the count lazily, in
    /// [`sync_idle`](Self::sync_idle).
    fn count_immediate_ref(&mut self, up: bool) {
        let im = &mut self.immediates;
        if up {
            im.ref_count += 1;
        } else {
            im.ref_count -= 1;
        }
    }

    /// Starts the idle handle while refed immediates exist and stops it
    /// when none do: the one place it is started or stopped. Node toggles
    /// it on every 0 <-> 1 change of the count; the loop reads it only
    /// between phases, where this runs first, so nothing can tell the two
    /// apart, and a set-and-clear pair costs no handle operations.
    pub(super) fn sync_idle(&mut self) {
        let im = &mut self.immediates;
        let want = im.ref_count > 0;
        if want != im.idle_on {
            im.idle_on = want;
            let idle = im.idle;
            let _ = if want {
                self.uv.watcher_start(idle)
            } else {
                self.uv.watcher_stop(idle)
            };
        }
    }

    /// Gives a large arena that emptied back once it has stayed empty for
    /// a whole loop iteration (or at once when the loop is idle): the loop
    /// calls it between callbacks, before the poll phase
    /// ([`Host::housekeep`](crate::uv::Host::housekeep)). A program that
    /// queues a large batch of immediates every iteration keeps the
    /// arena's memory instead of faulting it in again for every batch.
    #[cold]
    pub(super) fn release_emptied_immediates(&mut self, idle: bool) {
        let im = &mut self.immediates;
        if im.emptied.due(&im.slab, idle) {
            im.slab.shrink_if_empty(SHRINK_ABOVE);
        }
    }

    /// How many refed handles [`sync_idle`](Self::sync_idle) would add
    /// (1) or remove (-1): for liveness asked between two syncs.
    pub(super) fn idle_delta(&self) -> isize {
        let im = &self.immediates;
        match (im.ref_count > 0, im.idle_on) {
            (true, false) => 1,
            (false, true) => -1,
            _ => 0,
        }
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
        // Immediates futures asked for first are queued first.
        self.flush_deferred();
        let im = &mut self.immediates;
        let links = im.queue.tail_links();
        // Inserted already linked: the new entry is not looked up again.
        // The callback is made in the slot, with the entry (see
        // `Arena::insert_with`): made first, it was built on the stack
        // and copied with loads the CPU could not forward.
        let key = im.slab.insert_with(move |_| {
            let (cb, plain) = ThinOnce::callback(f);
            Entry {
                links,
                // Set by the arena.
                generation: 0,
                refed: true,
                in_batch: false,
                plain,
                cb,
            }
        });
        im.queue.append_linked(&mut im.slab, key.index());
        self.count_immediate_ref(true);
        Immediate {
            key,
            loop_id: self.id,
        }
    }

    /// Cancels an immediate (`clearImmediate`, R9.4), even from a tick or
    /// another immediate of the same batch.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let i = lp.set_immediate(|_| -> Result<(), &str> { panic!("cleared immediates never run") });
    /// lp.clear_immediate(i).unwrap();
    /// lp.run().unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`TimerError::Stale`] once the immediate ran or was cleared;
    /// [`TimerError::ForeignLoop`] for another loop's handle.
    pub fn clear_immediate(&mut self, i: Immediate) -> Result<(), TimerError> {
        let key = self.lookup_immediate(i)?;
        let im = &mut self.immediates;
        let e = &im.slab[key];
        if !e.plain {
            self.clear_immediate_dropping(key);
            return Ok(());
        }
        // A plain callback (most): the entry is forgotten where it lies,
        // its callback unread.
        debug_assert!(e.cb.drops_nothing(), "a plain callback drops nothing");
        let (links, refed, in_batch) = (e.links, e.refed, e.in_batch);
        im.slab.forget_at(key);
        im.unlink_taken(links, in_batch);
        if refed {
            self.count_immediate_ref(false);
        }
        Ok(())
    }

    /// [`clear_immediate`](Self::clear_immediate) of a live immediate
    /// whose callback is not plain: taken out, dropped last.
    #[inline(never)]
    fn clear_immediate_dropping(&mut self, key: usize) {
        // Taken apart at once: the entry is not copied out whole.
        let Entry {
            links,
            refed,
            in_batch,
            plain,
            cb,
            ..
        } = self.immediates.slab.remove_at(key);
        self.immediates.unlink_taken(links, in_batch);
        if refed {
            self.count_immediate_ref(false);
        }
        // What the callback captured is dropped last, the loop consistent.
        cb.discard(plain);
    }

    /// Lets the loop exit while this immediate is pending
    /// (`immediate.unref()`, R9.3); it still runs if the loop iterates
    /// anyway (R9.8).
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let i = lp.set_immediate(|_| -> Result<(), &str> { panic!("nothing keeps the loop iterating") });
    /// lp.unref_immediate(i).unwrap();
    /// lp.run().unwrap();
    /// assert!(lp.immediate_is_pending(i));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`clear_immediate`](Self::clear_immediate).
    pub fn unref_immediate(&mut self, i: Immediate) -> Result<(), TimerError> {
        self.set_immediate_ref(i, false)
    }

    /// Makes the immediate keep the loop alive again (`immediate.ref()`).
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let ran = Rc::new(Cell::new(false));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let r = ran.clone();
    /// let i = lp.set_immediate(move |_| r.set(true));
    /// lp.unref_immediate(i).unwrap();
    /// lp.ref_immediate(i).unwrap();
    /// lp.run().unwrap();
    /// assert!(ran.get());
    /// ```
    ///
    /// # Errors
    ///
    /// As [`clear_immediate`](Self::clear_immediate).
    pub fn ref_immediate(&mut self, i: Immediate) -> Result<(), TimerError> {
        self.set_immediate_ref(i, true)
    }

    fn set_immediate_ref(&mut self, i: Immediate, on: bool) -> Result<(), TimerError> {
        let key = self.lookup_immediate(i)?;
        let e = &mut self.immediates.slab[key];
        if e.refed != on {
            e.refed = on;
            self.count_immediate_ref(on);
        }
        Ok(())
    }

    /// Whether the immediate keeps the loop alive (`immediate.hasRef()`);
    /// false once it ran or was cleared, as in Node.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let i = lp.set_immediate(|_| {});
    /// assert!(lp.immediate_has_ref(i));
    /// lp.unref_immediate(i).unwrap();
    /// assert!(!lp.immediate_has_ref(i));
    /// ```
    pub fn immediate_has_ref(&self, i: Immediate) -> bool {
        self.lookup_immediate(i)
            .is_ok_and(|k| self.immediates.slab[k].refed)
    }

    /// Whether the immediate is waiting to run.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let i = lp.set_immediate(|_| {});
    /// assert!(lp.immediate_is_pending(i));
    /// lp.run().unwrap();
    /// assert!(!lp.immediate_is_pending(i));
    /// ```
    pub fn immediate_is_pending(&self, i: Immediate) -> bool {
        self.lookup_immediate(i).is_ok()
    }

    /// Node's `CheckImmediate`: the check handle's callback.
    pub(super) fn check_immediates(&mut self) {
        if self.stopping() {
            return;
        }
        // `RunAndClearNativeImmediates` runs first, inside a callback scope
        // of its own; closing it drains whatever ticks and microtasks a
        // failure left behind, before any immediate.
        self.close_scope();
        if self.stopping() || self.immediates.len() == 0 {
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
            if !self.immediates.has_outstanding || self.stopping() {
                break;
            }
        }
        if self.immediates.slab.is_empty() {
            self.immediates.emptied.note();
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
            // Taken apart at once, as in clear_immediate.
            let Entry {
                links,
                refed,
                plain,
                mut cb,
                ..
            } = im.slab.remove_at(key);
            im.outstanding.remove_taken(&mut im.slab, links);
            if refed {
                // Node decrements silently and stops the idle handle when
                // the batch ends (R9.5 step 4); nothing can tell the two
                // apart before the next poll phase, so it stops here.
                self.count_immediate_ref(false);
            }
            let r = self.invoke(&mut |lp| cb.call(lp));
            cb.discard(plain);
            r.map_err(|c| Thrown::Error(CallbackError::new(CallbackKind::Immediate, c)))?;
        }
        self.immediates.has_outstanding = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot of the immediates' arena is 32 bytes: the generation sits
    /// in the entry, the callback is two words ([`ThinOnce`]), and a
    /// vacant arena slot uses a flag's niche rather than a tag beside it.
    #[test]
    fn an_immediate_slot_is_thirty_two_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
        assert_eq!(Arena::<Entry, Entry>::slot_size(), 32);
    }

    /// A batch of immediates queued from a timer every iteration keeps
    /// the arena's memory from batch to batch (it is never found empty
    /// for a whole iteration); once no batch comes, the loop gives it
    /// back while it runs, and a loop left with nothing to run at once.
    #[test]
    fn a_batch_queued_every_iteration_keeps_the_arena_and_a_quiet_loop_gives_it_back() {
        use std::cell::{Cell, RefCell};
        use std::rc::Rc;
        let n = 2 * SHRINK_ABOVE;
        let mut lp = EventLoop::with_virtual_clock();
        let caps = Rc::new(RefCell::new(Vec::new()));
        let rounds = Rc::new(Cell::new(0));
        let (c, r) = (caps.clone(), rounds.clone());
        let iv = lp.set_interval(1, move |lp: &mut EventLoop| {
            // The arena as the previous batch left it, drained.
            c.borrow_mut().push(lp.immediates.slab.capacity());
            r.set(r.get() + 1);
            if r.get() <= 4 {
                for _ in 0..n {
                    lp.set_immediate(|_| {});
                }
            }
        });
        // A longer timer keeps the loop alive after the batches stop.
        let c = caps.clone();
        lp.set_timeout(10, move |lp: &mut EventLoop| {
            c.borrow_mut().push(lp.immediates.slab.capacity());
            lp.clear_interval(iv).unwrap();
        });
        lp.run().unwrap();
        let caps = caps.borrow();
        let full = caps[1];
        assert!(full >= n, "{caps:?}");
        // Batches 2 to 4 found the memory the previous one used...
        assert_eq!(&caps[1..4], &[full; 3], "{caps:?}");
        // ... and after two quiet iterations it was given back.
        assert_eq!(caps[caps.len() - 1], 0, "{caps:?}");
        assert_eq!(lp.immediates.slab.capacity(), 0);
    }

    /// A loop about to wait with no deadline (nothing but another thread
    /// can wake it) gives emptied storage back at once, without waiting
    /// for a next iteration that may not come for a long time.
    #[test]
    fn a_loop_waiting_with_no_deadline_gives_emptied_storage_back_first() {
        use std::sync::mpsc;
        let n = 2 * SHRINK_ABOVE;
        let mut lp = EventLoop::with_virtual_clock();
        // Only the remote keeps the loop alive once the batch has run: its
        // poll phase then waits with no deadline until the thread posts,
        // which it does when the batch's last immediate tells it to.
        let remote = lp.remote();
        let (go, wait) = mpsc::channel::<()>();
        let (tx, rx) = mpsc::channel();
        let poster = std::thread::spawn(move || {
            wait.recv().unwrap();
            remote
                .post(move |lp: &mut EventLoop| {
                    tx.send(lp.immediates.slab.capacity()).unwrap();
                })
                .unwrap();
        });
        for i in 0..n {
            let go = go.clone();
            lp.set_immediate(move |_: &mut EventLoop| {
                if i == n - 1 {
                    go.send(()).unwrap();
                }
            });
        }
        drop(go);
        lp.run().unwrap();
        poster.join().unwrap();
        assert_eq!(rx.recv().unwrap(), 0, "released before the wait");
    }

    /// The generation the arena gives an entry is the one its key carries,
    /// so a key outlives its entry only as a stale key.
    #[test]
    fn a_cleared_immediates_key_is_stale_when_its_slot_is_reused() {
        let mut lp = EventLoop::with_virtual_clock();
        let a = lp.set_immediate(|_| {});
        lp.clear_immediate(a).unwrap();
        let b = lp.set_immediate(|_| {});
        assert_eq!(a.key.index(), b.key.index()); // the slot is reused
        assert_eq!(lp.clear_immediate(a), Err(TimerError::Stale));
        assert!(lp.immediate_is_pending(b));
        lp.clear_immediate(b).unwrap();
    }
}
