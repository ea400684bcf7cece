//! Firing: Node's `RunTimers`, `processTimers` and `listOnTimeout`
//! (R5.1–R5.5, R6.2, §7), run by the native timer in the loop's timers
//! phase.
//!
//! Ground rules:
//! - one frozen `now` per pass (R1.4): a timer added during the pass is
//!   never due in it (R5.3), and every timer that was due still runs,
//!   however long the callbacks block;
//! - ticks and microtasks drain between lists and between timers, never
//!   before the first of a pass (R5.1 step 4, R5.2 step 2), and once more
//!   when the pass's callback scope closes (R6.2 step 2);
//! - after a failure that a handler took, the pass goes on with the same
//!   `now`, and its next timer runs before the ticks the failure left
//!   (R7.1, R7.2); after one with no handler, the pass stops and the next
//!   run finishes it first.
//!
//! # Unchecked lookups
//!
//! The pass's common case, a plain timeout that is due with nothing queued
//! to tick, looks its timer up without bounds or occupancy tests
//! ([`Arena::keyed_at_unchecked_mut`](crate::collections::arena::Arena::keyed_at_unchecked_mut)
//! and its kin, [`Durations::slot_unchecked`](crate::collections::durations::Durations::slot_unchecked),
//! `get_unchecked` on the links). Each `unsafe` block says which of these
//! invariants makes its index live:
//! - **the running list is live**: its slot is mapped when the pass starts
//!   it, and after each timer the pass asks whether it still is (when any
//!   list was removed) before it reads the slot again;
//! - **a linked timer is live**: a timer leaves its list before its slot
//!   is freed (`free` and `free_taken` assert it), or in the same step (a
//!   pending timer cleared, whose links are then left as they were,
//!   meaningless: `List::remove_head_freeing`), so a list's head is an
//!   occupied slot of the arena;
//! - **every live timer has links**: storing a timer grows the links to
//!   cover its index (`reset_links`), and they are given back only with
//!   the arena empty;
//! - **the running timer is live until its `finally`**: a clear of a
//!   running timer marks it (`RunningCleared`) and a release of it keeps
//!   it; only the pass frees its slot, after the callback.
//!
//! All four are about the loop the pass started on, and hold across user
//! code because the loop behind `&mut self` is still that loop: a
//! callback, tick or task poll that moved it out (`mem::replace`,
//! `mem::swap`) and left another in its place makes the run panic as it
//! returns, before the pass reads anything
//! (`EventLoop::assert_not_replaced`).
//!
//! A debug build asserts each promise at the lookup, so the test suite
//! checks every one it reaches. What the checks cost, and the benchmark
//! that justifies this, are in [`arena`](crate::collections::arena)'s
//! module docs.
#![allow(unsafe_code)]

use std::panic::resume_unwind;

use super::error::{CallbackError, CallbackKind, Cause};
use super::lists::{Arm, NO_TIMER, Timers};
use super::thin::TakenFn;
use super::ticks;
use super::timeout::{State, Timer};
use super::{EventLoop, Flow, Thrown};
use crate::collections::durations::SlotId;
use crate::collections::list::Links;
use crate::uv;

impl EventLoop {
    /// Node's `RunTimers` (R6.2): the native timer's callback.
    pub(super) fn run_timers(&mut self) {
        // libuv stopped the native timer before calling this, and
        // `resume_timers` stops it before calling this (an arm that was
        // not applied yet is dropped too: the pass arms it again).
        self.timers.native_due = 0;
        self.timers.native_pending = false;
        if self.stopping() {
            // The run is stopping before this pass (a failure it returns,
            // `block_on`'s task done, both possible before a resumed
            // pass): the pass is left whole for the next run, as an
            // interrupted one is. Returning without it dropped it: the
            // native timer stopped, its timers were never run.
            self.interrupt_pass(self.depth);
            return;
        }
        let depth = self.depth;
        // A callback that replaced the loop unwinds on: the pass is not the
        // new loop's (`EventLoop::assert_not_replaced`). What the pass does
        // before its first timer (the flush, the clock's read) is inside
        // the guard too: a panic there (a deferred future's drop, a
        // `Clock` of the user's) leaves the pass for the next run, as a
        // panic after a timer does.
        let pass = uv::catch_unless_replaced(self, |lp| {
            // Timers futures created since the last flush are older than
            // this pass: they are in their lists before it looks.
            lp.flush_deferred();
            lp.depth += 1;
            let now = lp.libuv_now();
            while let Err(t) = lp.process_timers(now) {
                if !lp.uncaught(t) {
                    return false;
                }
            }
            true
        });
        match pass {
            Ok(true) => {
                self.sync_native(Arm::AfterPass);
                self.depth = depth;
                self.close_scope();
            }
            // No handler: `run` returns the error. The next run finishes
            // this pass first, even if nothing refed is left (the pass was
            // running anyway).
            Ok(false) => self.interrupt_pass(depth),
            // A panic that escaped a deferred operation (a future's drop)
            // or the clock leaves `run`: the next run finishes the pass
            // first, as after an unhandled failure.
            Err(payload) => {
                self.interrupt_pass(depth);
                resume_unwind(payload);
            }
        }
    }

    /// Leaves a pass for the next run to finish
    /// ([`resume_timers`](Self::resume_timers)), with the callback depth
    /// it started at.
    fn interrupt_pass(&mut self, depth: u32) {
        self.depth = depth;
        self.timers.interrupted = true;
        self.sync_native(Arm::Resume);
    }

    /// Finishes a timers pass that an unhandled failure interrupted.
    pub(super) fn resume_timers(&mut self) {
        if std::mem::take(&mut self.timers.interrupted) {
            // As when the loop runs the pass: libuv stops the (non-repeating)
            // native timer before calling RunTimers.
            let _ = self.uv.timer_stop(self.timers.native);
            self.run_timers();
        }
    }

    /// Node's `processTimers(now)` (R5.1). The native timer is re-armed by
    /// the caller, from the heap's root.
    fn process_timers(&mut self, now: u64) -> Flow {
        let mut ran_list = false;
        // At the end of time (a saturated virtual clock) a list rescheduled
        // by this pass is due again at once: `now + 1` saturates. The pass
        // runs at most as many lists as were queued when it began (those
        // first: a rescheduled list takes a new, later id), and the rest
        // wait for the next pass, so that an interval fires once a pass
        // there instead of without end in this one.
        let mut lists_left = self.timers.queue.len();
        while let Some((slot, key)) = self.timers.queue.peek() {
            if key.0 > now {
                break;
            }
            if now == u64::MAX {
                if lists_left == 0 {
                    break;
                }
                lists_left -= 1;
            }
            if ran_list {
                self.run_next_ticks()?;
                // A tick may have removed this list (Node then runs the dead
                // list, which is empty, and peeks again: the same thing).
                if self.timers.queue.peek() != Some((slot, key)) {
                    continue;
                }
            } else {
                ran_list = true;
            }
            self.list_on_timeout(slot as SlotId, now)?;
        }
        Ok(())
    }

    /// Node's `listOnTimeout(list, now)` (R5.2), for the list in `slot`.
    /// No timer is current after it, however it ends (a plain timeout's
    /// callback leaves its index: see `Timers::current`).
    #[inline(always)]
    fn list_on_timeout(&mut self, slot: SlotId, now: u64) -> Flow {
        let flow = self.run_list(slot, now);
        self.timers.current = NO_TIMER;
        flow
    }

    /// [`list_on_timeout`](Self::list_on_timeout)'s body.
    fn run_list(&mut self, slot: SlotId, now: u64) -> Flow {
        let msecs = self.timers.map.msecs(slot);
        // Which list this is: one removed while it runs may be replaced by
        // another in the same slot (a timer of its duration set by a
        // callback), which Node's `list === timerListMap[msecs]` tells
        // apart by object identity, and list ids by being unique.
        self.timers.start_running(slot);
        // Whether this list is still there needs asking only after some
        // list was removed.
        let removals = self.timers.list_removals;
        // Whether nothing can run before the oldest timer: true before the
        // first (Node runs no ticks before it), then whether nothing is
        // queued to tick, asked at the end of each turn (nothing runs
        // between there and the peek), so that no store comes between the
        // peek and the unlinking below. Asking that when the list then
        // turns out empty or not due changes nothing: it stores nothing.
        let mut quiet = true;
        // A timer is due when `now - start >= msecs` (R5.3), that is when
        // it started before `due_before` (none is when `now < msecs`): one
        // word for the loop to keep, one comparison a timer. At the end of
        // time (`now` saturated) the bound is one short, and every timer
        // counts as due anyway (below).
        let due_before = now.saturating_add(1).saturating_sub(msecs);
        // At the end of time (a saturated virtual clock, where no time can
        // pass), every timer the list holds now counts as due, however
        // recently it started: this counts the ones R5.3 calls not due
        // (`Timers::take_end_turn`). Kept by the timers, not in a local,
        // which cost the loop below 2–3% (a fired timeout).
        self.timers.end_budget = if now == u64::MAX {
            self.timers.count_started_from(slot, due_before)
        } else {
            0
        };
        // SAFETY (this one and the loop's next): the running list is live,
        // here as the caller peeked it, and at each turn after as checked
        // at the end of the one before. The loop is the one the pass
        // started on throughout: user code that replaced it behind `&mut`
        // (a callback, a tick, a task's poll) made the run panic as it
        // returned (`EventLoop::assert_not_replaced`).
        while let Some(key) = unsafe { self.timers.map.slot_unchecked(slot) }.list.peek() {
            // A timer started during this pass has `start > now`: not due
            // (R5.3), but at the end of time (below).
            let tm = &mut self.timers;
            // SAFETY: a linked timer is live, and `key` heads a list.
            let (handle, timer) = unsafe { tm.slab.keyed_at_unchecked_mut(key) };
            let start = timer.start;
            debug_assert!(
                now == u64::MAX || (start >= due_before) == (now.saturating_sub(start) < msecs)
            );
            if start >= due_before && !Timers::take_end_turn(&mut tm.end_budget) {
                // R5.4: rescheduled, with a new id, so it loses ties.
                let expiry = start.saturating_add(msecs).max(now.saturating_add(1));
                let id = tm.next_list_id();
                tm.queue.set_key(slot as usize, (expiry, id));
                return Ok(());
            }
            let timer = if quiet {
                // Nothing can have run since the peek: the timer is
                // still this list's oldest, and the one lookup serves.
                // Unlinked: its duration goes back in it, below, with the
                // state's store ([`take_to_run`]) or before destroying it.
                debug_assert!(key < tm.links.len() && tm.links[key].is_linked());
                // SAFETY: every live timer has links, and this one is live.
                let own = unsafe { tm.links.get_unchecked_mut(key) };
                // SAFETY: the running list is live (the peek's slot).
                let list = &mut unsafe { tm.map.slot_unchecked_mut(slot) }.list;
                debug_assert_eq!(list.peek(), Some(key));
                // The list's head is written before the timer's links, and
                // both addresses are taken first, so that no store comes
                // between an address's load and its use: the list's,
                // computed for the peek, serves the head's store (two loads
                // fewer a timer), and the links are reset with one store.
                list.unlink_head(*own);
                *own = Links::default();
                debug_assert!(unlinked_in_place(timer.state()));
                timer
            } else {
                self.timers.current = NO_TIMER;
                self.run_queued_ticks()?;
                if self.timers.list_removals != removals && !self.timers.holds_running() {
                    return Ok(());
                }
                // A tick may have cleared the timer we peeked: gone, or
                // (kept) destroyed; either way it does not run. One that
                // a tick refreshed still runs now: Node holds the peeked
                // timer and unlinks it wherever it is.
                if !self.timers.slab.contains(handle) {
                    quiet = ticks::nothing_to_tick(&self.ticks, &self.shared);
                    continue;
                }
                let tm = &mut self.timers;
                let list = &mut tm.map.slot_mut(slot).list;
                if list.is_head(key) {
                    // Still the list's oldest, the usual case (ticks ran,
                    // but none cleared or refreshed it): unlinked as above,
                    // without `unlink`'s lookups of its list and duration.
                    let own = &mut tm.links[key];
                    list.unlink_head(*own);
                    *own = Links::default();
                    debug_assert!(unlinked_in_place(tm.slab[key].state()));
                } else {
                    tm.unlink(key);
                }
                tm.slab.keyed_at_mut(key).1
            };
            // The common case, one test: an armed, plain, unkept timeout.
            if timer.is_plain_armed_timeout() {
                let (cb, _, _) = take_to_run(timer, msecs);
                if let Some(cause) = self.fire_once::<true>(key, cb) {
                    return Err(thrown(*cause, false));
                }
            // A timeout whose callback owns what it captured: the same path,
            // the callback dropped after.
            } else if timer.is_owning_armed_timeout() {
                let (cb, _, _) = take_to_run(timer, msecs);
                if let Some(cause) = self.fire_once::<false>(key, cb) {
                    return Err(thrown(*cause, false));
                }
            // The state's bits, not `state()`'s table: one test.
            } else if timer.is_state(State::Armed) {
                let (cb, repeat, plain) = take_to_run(timer, msecs);
                if let Err(cause) = self.fire(key, cb, repeat, plain) {
                    return Err(thrown(cause, repeat));
                }
            } else if timer.is_state(State::Zombie) {
                // `!timer._onTimeout` (R5.2 step 4): a cleared timer that a
                // refresh put back. It does not run; it is destroyed, the
                // ref count dropping silently.
                timer.set_unlinked(msecs);
                let refed = timer.destroy(State::FiredCleared);
                self.destroyed(refed);
            }
            // Otherwise cleared by a tick, and kept: already destroyed.
            if self.timers.list_removals != removals && !self.timers.holds_running() {
                return Ok(());
            }
            quiet = ticks::nothing_to_tick(&self.ticks, &self.shared);
        }
        // Empty: drop the list, unless it was removed (and maybe recreated)
        // while it ran.
        let tm = &mut self.timers;
        if tm.holds_running() {
            tm.remove_list(slot, msecs);
        }
        Ok(())
    }

    /// Runs one due, unlinked timer, whose callback [`take_to_run`] took:
    /// the body of `listOnTimeout`'s loop after its checks, with its
    /// `finally` (R5.2 steps 5–7). A failure is the callback's; the caller
    /// throws it.
    fn fire(
        &mut self,
        key: usize,
        mut cb: TakenFn,
        repeat: bool,
        plain: bool,
    ) -> Result<(), Cause> {
        // An interval's next run counts from before its callback (R5.5);
        // noted in its slot at once for `timeout_start` (nothing else reads
        // the start of a timer out of its list).
        let start = if repeat {
            let start = self.libuv_now();
            self.timers.slab[key].start = start;
            start
        } else {
            0
        };
        // Passes never nest (`run` is not reentrant and a pass runs only
        // from the loop), so no other timer's callback is running: nothing
        // to save (a plain timeout's may have left its own index).
        self.timers.current = key;
        let result = self.invoke_unflushed(&mut |lp| cb.call(lp));
        // Whatever the callback's futures asked of the loop happens now.
        // An operation that panics (a future's drop) sends its panic out
        // of `run`, as from any flush, but only after this timer's
        // `finally` below: its slot, its ref and an interval's next run are
        // settled first, and the pass is left for the next run.
        // The failure, if any, boxed: one word to keep across the flush's
        // call. The 24-byte `Result` kept there was copied through the stack
        // with a 16-byte load over an 8-byte store, a load that waits for
        // the store to reach the cache (no forwarding): 110 → 78 M fired
        // timeouts/s at the same instruction count (`bench/perf-hot` put
        // 58% of the pass's samples on it).
        let failure = result.err().map(Box::new);
        match self.settle(key, &mut cb, repeat, plain, start, failure) {
            None => Ok(()),
            Some(cause) => Err(*cause),
        }
    }

    /// What follows a fired timer's callback: its deferred operations
    /// flushed (one that panics resumes its panic after the `finally` and
    /// the report of `failure`: [`finally_then_resume`]), no timer
    /// current, then its `finally`. Hands `failure` back to throw.
    ///
    /// [`finally_then_resume`]: Self::finally_then_resume
    #[inline(always)]
    fn settle(
        &mut self,
        key: usize,
        cb: &mut TakenFn,
        repeat: bool,
        plain: bool,
        start: u64,
        failure: Option<Box<Cause>>,
    ) -> Option<Box<Cause>> {
        let escaped = self.flush_deferred_catching();
        self.timers.current = NO_TIMER;
        if let Some(payload) = escaped {
            self.finally_then_resume(key, cb, repeat, plain, start, failure, payload);
        }
        self.finally(key, cb, repeat, plain, start);
        failure
    }

    /// [`fire`](Self::fire) of an unkept timeout (not an interval), the
    /// flags known: no next run to count from. `PLAIN`: its callback
    /// needs no drop (the common case, told by one test of the top byte);
    /// otherwise it owns what it captured and is dropped once its timer is
    /// settled, as `finally` does (a timer of timers-breadth-args: 327 →
    /// 304 instructions against `fire`, 1.02×). Inlined: out of line, the
    /// owning instance lost that gain and cost the plain one more than
    /// inlined (0.983× against 0.987×: where the pass's loop lands).
    #[inline(always)]
    fn fire_once<const PLAIN: bool>(&mut self, key: usize, mut cb: TakenFn) -> Option<Box<Cause>> {
        // A plain callback leaves it set after: see `Timers::current`.
        self.timers.current = key;
        if let Err(cause) = self.invoke_unflushed(&mut |lp| cb.call(lp)) {
            return self.fire_once_failed(key, &mut cb, cause, PLAIN);
        }
        let escaped = self.flush_deferred_catching();
        if !PLAIN || escaped.is_some() {
            self.timers.current = NO_TIMER;
        }
        if let Some(payload) = escaped {
            self.finally_then_resume(key, &mut cb, false, PLAIN, 0, None, payload);
        }
        let tm = &mut self.timers;
        // SAFETY: the running timer is live until its `finally`, which
        // this is, and every live timer has links; the loop is still the
        // pass's (`invoke_unflushed` panics if the callback replaced it).
        let timer = unsafe { tm.slab.at_unchecked_mut(key) };
        debug_assert!(key < tm.links.len());
        // SAFETY: as above.
        let linked = unsafe { tm.links.get_unchecked(key) }.is_linked();
        // Not refreshed, not cleared by its callback: freed at once, with
        // whether it was refed. The usual plain timer (refed as well) is
        // known from one test of its top byte; the others take two.
        let freed = if linked {
            None
        } else if PLAIN && timer.is_plain_refed_running_timeout() {
            Some(true)
        } else if timer.is_unkept(State::Running) {
            Some(timer.refed())
        } else {
            None
        };
        if let Some(refed) = freed {
            // `free_taken` without its lookup.
            debug_assert!(timer.cb.is_none(), "a taken callback");
            // SAFETY: as above.
            unsafe { tm.slab.forget_at_unchecked(key) };
            self.destroyed(refed);
            if PLAIN {
                cb.forget_plain();
            } else {
                cb.discard(false);
            }
        } else {
            self.finally_cold(key, &mut cb, PLAIN);
        }
        None
    }

    /// The rest of [`fire_once`](Self::fire_once) after its callback
    /// failed, out of line: [`settle`](Self::settle), then the failure to
    /// throw. The callback is gone from `cb` after (dropped or put back).
    #[cold]
    #[inline(never)]
    fn fire_once_failed(
        &mut self,
        key: usize,
        cb: &mut TakenFn,
        cause: Cause,
        plain: bool,
    ) -> Option<Box<Cause>> {
        self.settle(key, cb, false, plain, 0, Some(Box::new(cause)))
    }

    /// [`fire_once`](Self::fire_once)'s `finally` when its callback
    /// refreshed, cleared or kept its timer (or released it after keeping
    /// it).
    #[inline(never)]
    fn finally_cold(&mut self, key: usize, cb: &mut TakenFn, plain: bool) {
        self.finally(key, cb, false, plain, 0);
    }

    /// [`fire`](Self::fire)'s `finally` after a deferred operation
    /// panicked: the operations after it stay queued, held while the
    /// `finally` runs (so that none sees an interval re-armed but not yet
    /// linked); then the callback's own failure, if any, is reported
    /// ([`report_unwinding`](Self::report_unwinding)), and the panic
    /// resumes.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)] // `finally`'s five and the two it carries on
    fn finally_then_resume(
        &mut self,
        key: usize,
        cb: &mut TakenFn,
        repeat: bool,
        plain: bool,
        start: u64,
        failure: Option<Box<Cause>>,
        payload: Box<dyn std::any::Any + Send>,
    ) -> ! {
        let flushing = std::mem::replace(&mut self.flushing, true);
        self.finally(key, cb, repeat, plain, start);
        self.flushing = flushing;
        if let Some(cause) = failure {
            self.report_unwinding(thrown(*cause, repeat));
        }
        resume_unwind(payload)
    }

    /// The `finally` of a fired timer (R5.2 steps 6–7): freed, kept,
    /// re-armed (an interval) or left armed (refreshed by its callback).
    #[inline(always)]
    fn finally(&mut self, key: usize, cb: &mut TakenFn, repeat: bool, plain: bool, start: u64) {
        // The callback's deferred operations were flushed and nothing ran
        // since (or, after a panic in one, the flush is held), so the flush
        // inside `insert` below finds nothing: no deferred operation can see
        // a re-armed interval before it is linked (the refresh and clear
        // fast paths take an armed timer for a linked one).
        debug_assert!(!self.has_deferred(), "deferred work left after a callback");
        let tm = &mut self.timers;
        let linked = tm.links[key].is_linked();
        let timer = &mut tm.slab[key];
        if !repeat && !linked && timer.is_unkept(State::Running) {
            // The common case: a timeout that ran, was not refreshed and is
            // not kept is freed at once, unread (without the destroy step's
            // state, which the vacant slot would overwrite before anything
            // could read it); its callback is dropped after.
            let refed = timer.refed();
            self.timers.free_taken(key);
            self.destroyed(refed);
            cb.discard(plain);
            return;
        }
        match timer.state() {
            State::Running if repeat => {
                timer.set_state(State::Armed);
                timer.cb.put(cb);
                self.insert(key, start);
            }
            // Refreshed by its own callback.
            State::Running if linked => {
                timer.set_state(State::Armed);
                timer.cb.put(cb);
            }
            // Kept (a timeout that ran, not refreshed).
            State::Running => {
                self.destroy(key, State::Fired);
                self.timers.slab[key].cb.put(cb);
            }
            // Cleared by its own callback: the callback is dropped here,
            // as before the split, not left to `fire`'s frame (where
            // `finally_then_resume`'s unwinding would drop it: a panicking
            // drop there aborts).
            State::RunningCleared if timer.kept() => {
                timer.set_state(State::Cleared);
                cb.discard(plain);
            }
            State::RunningCleared => {
                tm.free(key);
                cb.discard(plain);
            }
            other => unreachable!("a running timer cannot become {other:?}"),
        }
    }
}

/// Whether a timer in `state` may be unlinked in place by the pass
/// (`List::unlink_head`), which leaves its list's slot where its
/// duration goes: only a timer whose branch of the pass writes the
/// duration back before anything reads it, an armed one
/// ([`take_to_run`]) or a zombie (`Timer::set_unlinked`). A linked
/// timer at its list's head is one of the two when the pass peeks it: a
/// cleared one is not linked, and a running one (linked again if its own
/// callback refreshed it) is settled by its `finally` before the pass
/// peeks again, with no tick or turn in between.
fn unlinked_in_place(state: State) -> bool {
    matches!(state, State::Armed | State::Zombie)
}

/// Takes a due, armed timer's callback (and whether it is an interval,
/// and plain) to run it; the timer is running, and unlinked from its
/// list, whose duration is `msecs` (written back with the state, one
/// store: [`Timer::run_unlinked`]).
#[inline(always)]
fn take_to_run(timer: &mut Timer, msecs: u64) -> (TakenFn, bool, bool) {
    let taken = (timer.cb.take(), timer.repeat(), timer.plain());
    timer.run_unlinked(msecs);
    taken
}

/// A timer callback's failure as the pass's flow: thrown as an
/// interval's or a timeout's.
#[cold]
fn thrown(cause: Cause, repeat: bool) -> Thrown {
    let kind = if repeat {
        CallbackKind::Interval
    } else {
        CallbackKind::Timeout
    };
    Thrown::Error(CallbackError::new(kind, cause))
}
