//! A timeout that wakes a future instead of calling a closure: the state a
//! [`Sleep`](crate::time::Sleep) shares with its Node timeout.
//!
//! # Invariants
//!
//! - The timer slot holds the `Rc<Wakeup>` itself, as a closure of that
//!   one word, stored inline ([`ThinFn`]), so a sleep allocates once (this
//!   state), not twice (this state and a boxed closure holding it). The
//!   timeout is an ordinary Node timeout in its duration's list: it fires
//!   in Node's order, FIFO with `set_timeout` callbacks of its duration.
//! - `timer` is the pending timeout's handle, `None` once it fired or was
//!   cleared; only the loop's thread touches any of it.
//! - A finished sleep's state goes back to its loop's pool (at most
//!   `WAKEUP_POOL`) when the sleep is dropped with nothing else referring to
//!   it (no timer, no queued operation), and the next sleep takes it
//!   instead of allocating; the pool is emptied with the loop's shared
//!   state (a state holds that shared state: a cycle otherwise).
//! - `waker` is woken only while `polled` is set: by a poll of the sleep
//!   that owns the state now. A pooled state keeps the waker its last
//!   sleep stored, unset `polled`, if that is a loop task's own (it holds
//!   only the task's small header): a task sleeping in a loop takes back
//!   the state it just gave up (the pool is LIFO), its poll finds its own
//!   waker there (`Waker::will_wake`) and clones nothing, so a round of
//!   sleep, fire and wake makes no atomic reference-count operation on the
//!   task's waker. Any other waker (a foreign executor's, a combinator's)
//!   is dropped with the sleep, as tokio's `Sleep` drops it (seeds A9):
//!   the pool never keeps what it belongs to alive. A stale waker is
//!   never woken: another task's poll replaces it, and a timer that fires
//!   before any poll wakes nothing.
//! - `task` is a hint: the arena index of the task whose poll stored
//!   `waker`. At the deadline the loop queues that task itself, as the
//!   waker would on the loop's thread, but only if the stored waker is
//!   that task's own (`Waker::will_wake` against the task's waker): a
//!   stale index (the task finished, another took its slot) or a foreign
//!   waker (a combinator's) is woken the ordinary way.
//! - A timeout that fires before the deadline (one beyond a single
//!   timeout's reach, [`LONG_MAX_MS`]: it is reached in legs) arms the next
//!   leg; at the deadline, `fired` is set and the stored waker woken.
//!
//! [`ThinFn`]: super::thin::ThinFn
#![forbid(unsafe_code)]

use std::cell::Cell;
use std::rc::Rc;
use std::task::Waker;

use super::{EventLoop, LONG_MAX_MS, LoopShared, Timeout};

/// What a sleep shares with its timeout (see the module docs).
pub(crate) struct Wakeup {
    pub(crate) shared: Rc<LoopShared>,
    pub(crate) deadline: Cell<u64>,
    pub(crate) fired: Cell<bool>,
    pub(crate) refed: Cell<bool>,
    /// `waker` is the current sleep's: it polled since it took the state.
    pub(crate) polled: Cell<bool>,
    /// The waker of the latest poll (a `Cell`: taken out and put back,
    /// never borrowed, which keeps the state at 56 bytes), or of the
    /// previous sleep's latest poll until `polled` is set.
    pub(crate) waker: Cell<Option<Waker>>,
    /// The Node timeout, once the loop has created it.
    pub(crate) timer: Cell<Option<Timeout>>,
    /// The arena index of the task whose poll stored `waker`
    /// ([`NO_TASK`] if none): a hint, checked when the timer fires (the
    /// waker must be that task's own), which lets the loop queue the task
    /// itself instead of going through the waker's search for its loop.
    pub(crate) task: Cell<u32>,
}

/// [`Wakeup::task`] when no task's poll stored the waker.
pub(crate) const NO_TASK: u32 = u32::MAX;

impl Wakeup {
    /// A refed wakeup, not yet armed, its deadline for the caller to set
    /// (the caller reads the clock only once this is made: a clock may be
    /// the user's, and this is made while the thread's stack of loops is
    /// borrowed): a finished sleep's state from the loop's pool if there
    /// is one.
    pub(crate) fn new(shared: &Rc<LoopShared>) -> Rc<Wakeup> {
        let pooled = shared.wakeups.borrow_mut().pop();
        if let Some(w) = pooled {
            // Recycled only with no other reference and no timer (see
            // `recycle`): only these need resetting. The waker stays, not
            // to be woken until a poll sets `polled` (module docs).
            w.fired.set(false);
            w.refed.set(true);
            w.polled.set(false);
            return w;
        }
        Rc::new(Wakeup {
            shared: shared.clone(),
            deadline: Cell::new(0),
            fired: Cell::new(false),
            refed: Cell::new(true),
            polled: Cell::new(false),
            waker: Cell::new(None),
            timer: Cell::new(None),
            task: Cell::new(NO_TASK),
        })
    }

    /// Arms the timeout, counted from `now`: at once where the loop can be
    /// lent (in a task's poll), deferred elsewhere (or, for a deadline
    /// already reached, fires at once: no timer). At the end of loop time
    /// (`u64::MAX` ms), where every deadline saturates at now, it is armed
    /// all the same and fires in the next timers pass (as a Node timeout
    /// there does): ready at once, a task sleeping or ticking in a loop
    /// would never give the loop back.
    pub(crate) fn schedule(self: &Rc<Self>, now: u64) {
        if self.deadline.get() <= now && now != u64::MAX {
            self.fired.set(true);
            return;
        }
        if self.shared.run_now(|lp| self.arm(lp, now)).is_none() {
            let me = self.clone();
            self.shared.defer(move |lp| me.arm(lp, now));
        }
    }

    /// Arms the Node timeout for the time left until the deadline, counted
    /// from `start` (the loop time when the future asked for it).
    fn arm(self: &Rc<Self>, lp: &mut EventLoop, start: u64) {
        let left = self
            .deadline
            .get()
            .saturating_sub(start)
            .clamp(1, LONG_MAX_MS);
        let refed = self.refed.get();
        let t = lp.wakeup_started_at(start, left, self.clone());
        if !refed {
            let _ = lp.unref_timeout(t);
        }
        self.timer.set(Some(t));
    }

    /// Clears the pending timeout, if any.
    pub(crate) fn disarm(&self, lp: &mut EventLoop) {
        if let Some(t) = self.timer.take() {
            let _ = lp.clear_timeout(t);
        }
    }

    /// The timeout fired: the next leg, or the wake-up.
    pub(super) fn on_fire(self: &Rc<Self>, lp: &mut EventLoop) {
        self.timer.set(None);
        let now = lp.loop_time();
        if now < self.deadline.get() {
            // A deadline beyond one timeout's reach: the next leg.
            self.arm(lp, now);
            return;
        }
        self.fired.set(true);
        if !self.polled.get() {
            return; // no poll yet: nobody to wake
        }
        // A task's own waker, as it nearly always is, is woken by the loop
        // at hand (the same queueing, without the waker finding its loop
        // through the thread's list of loops).
        self.wake_kept(|w| {
            if !lp.wake_own_task(self.task.get(), w) {
                w.wake_by_ref();
            }
        });
    }

    /// After a reset to a deadline already reached (no timeout to fire
    /// and wake it): wakes the task whose poll stored the waker, if the
    /// current sleep was polled, as the timeout would have.
    pub(crate) fn wake_if_reached(&self) {
        if self.fired.get() && self.polled.get() {
            self.wake_kept(Waker::wake_by_ref);
        }
    }

    /// Wakes the stored waker with `wake`, by reference, and keeps it, for
    /// the next sleep of the same task (module docs). Taken out of its
    /// cell for the wake, so a wake that polls at once finds the cell free
    /// (it stores nothing: the sleep is ready); a waker stored meanwhile
    /// wins.
    #[inline(always)]
    fn wake_kept(&self, wake: impl FnOnce(&Waker)) {
        if let Some(w) = self.waker.take() {
            wake(&w);
            if let Some(newer) = self.waker.replace(Some(w)) {
                self.waker.set(Some(newer));
            }
        }
    }

    /// A poll of the current sleep: `waker` is the one to wake (cloned
    /// only if the stored one would not wake the same task).
    pub(crate) fn store_waker(&self, waker: &Waker) {
        let mut slot = self.waker.take();
        crate::task::store_waker(&mut slot, waker);
        self.waker.set(slot);
        self.polled.set(true);
        self.task.set(self.shared.polling.get());
    }

    /// Offers a finished sleep's state (`me`: the sleep's own reference,
    /// about to go; the sleep fired and has no timer) to the loop's pool:
    /// kept if nothing else refers to it (no queued operation holds it),
    /// the loop is still there and the pool has room; with its waker only
    /// if that is a loop task's own (module docs).
    pub(crate) fn recycle(me: &Rc<Wakeup>) {
        debug_assert!(me.fired.get() && me.timer.get().is_none());
        if Rc::strong_count(me) != 1 || Rc::weak_count(me) != 0 || me.shared.closed.get() {
            return;
        }
        // Dropped before the pool is borrowed: a foreign waker's drop may
        // run anything, a sleep's drop among it.
        if let Some(w) = me.waker.take() {
            if crate::task::is_task_waker(&w) {
                me.waker.set(Some(w));
            } else {
                drop(w);
            }
        }
        let mut pool = me.shared.wakeups.borrow_mut();
        if pool.len() < super::current::WAKEUP_POOL {
            pool.push(me.clone());
        }
    }

    /// Sets whether the pending timeout keeps the loop alive.
    pub(crate) fn set_ref(self: &Rc<Self>, refed: bool) {
        if self.refed.replace(refed) == refed {
            return;
        }
        let me = self.clone();
        self.shared.defer(move |lp| {
            if let Some(t) = me.timer.get() {
                let _ = if me.refed.get() {
                    lp.ref_timeout(t)
                } else {
                    lp.unref_timeout(t)
                };
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;
    use std::time::Duration;

    use crate::{EventLoop, time};

    /// A sleep dropped after its loop leaves nothing of the loop behind.
    /// A fired one is not pooled: the pool would hold the loop's shared
    /// state, which the pooled state holds (a cycle nothing would break).
    /// A pending one's disarm, which would have been deferred to the loop,
    /// is dropped instead, and with it the last reference to the loop's
    /// shared state.
    #[test]
    fn a_sleep_dropped_after_its_loop_leaves_nothing_behind() {
        for fired in [true, false] {
            let mut lp = EventLoop::with_virtual_clock();
            let s = lp.scope(|| time::sleep(Duration::from_millis(3)));
            if fired {
                lp.run().unwrap();
                assert!(s.is_elapsed());
            }
            let shared = Rc::downgrade(&lp.shared);
            drop(lp);
            drop(s);
            assert!(
                shared.upgrade().is_none(),
                "the loop's shared state is freed (fired: {fired})"
            );
        }
    }

    /// While the loop lives, a finished sleep's state is pooled and taken
    /// by the next sleep.
    #[test]
    fn a_finished_sleep_state_is_reused() {
        let mut lp = EventLoop::with_virtual_clock();
        let s = lp.scope(|| time::sleep(Duration::from_millis(3)));
        lp.run().unwrap();
        let first = Rc::as_ptr(&s.entry);
        drop(s);
        assert_eq!(lp.shared.wakeups.borrow().len(), 1);
        let t = lp.scope(|| time::sleep(Duration::from_millis(3)));
        assert_eq!(Rc::as_ptr(&t.entry), first);
        assert!(lp.shared.wakeups.borrow().is_empty());
    }

    /// The pool keeps a loop task's own waker with a finished sleep's
    /// state, for that task's next sleep, and no other: a foreign waker
    /// (tokio-test's here) is dropped with its sleep. Which waker is a
    /// task's is told by its vtable's address, which Rust does not promise
    /// to keep (as `Waker::will_wake`'s answer): Miri gives each vtable
    /// made a new one, so there only the second half holds.
    #[test]
    fn the_pool_keeps_a_tasks_own_waker_and_no_other() {
        let mut lp = EventLoop::with_virtual_clock();
        let pooled_waker = |lp: &EventLoop| {
            let pool = lp.shared.wakeups.borrow();
            assert_eq!(pool.len(), 1);
            let w = pool[0].waker.take();
            let kept = w.is_some();
            pool[0].waker.set(w);
            kept
        };
        lp.spawn(async { time::sleep(Duration::from_millis(3)).await });
        lp.run().unwrap();
        assert!(
            cfg!(miri) || pooled_waker(&lp),
            "the task's own waker stays"
        );
        lp.shared.wakeups.borrow_mut().clear();
        let mut s = tokio_test::task::spawn(lp.scope(|| time::sleep(Duration::from_millis(3))));
        assert!(lp.scope(|| s.poll()).is_pending());
        lp.run().unwrap();
        assert!(s.is_woken());
        assert!(lp.scope(|| s.poll()).is_ready());
        drop(s);
        assert!(!pooled_waker(&lp), "a foreign waker goes with its sleep");
    }

    /// The state stays 56 bytes (72 with the `Rc`'s counts: an 80-byte
    /// `malloc` chunk): the pending timeout's handle, 16 bytes, needs no
    /// tag beside it in its `Option`.
    #[test]
    fn the_state_is_56_bytes() {
        assert_eq!(std::mem::size_of::<super::Wakeup>(), 56);
    }
}
