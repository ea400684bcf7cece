//! Native timers (`uv_timer_*`), idle, prepare and check handles, the
//! pending queue, and the poll timeout (`uv__backend_timeout`).
//!
//! Ground rules, as libuv 1.46's `src/timer.c`:
//! - timers sit in a min-heap ordered by `(timeout, start_id)`; `start_id`
//!   grows with every start, so ties go to the timer started first;
//! - a deadline is the cached loop time plus the delay, saturating at
//!   `u64::MAX`;
//! - the most recently started idle, prepare or check handle runs first.

use super::{Handle, Host, Kind, Loop, Phase, Rec, UvError, mark_active};
use crate::collections::queue::PriorityQueue;

/// A new start id from `counter`, larger than every started timer's in
/// `heap`: libuv's `timer_counter`, which is 64 bits. This one is 32 (the
/// tie word sits in the heap entry's padding), and before it would wrap the
/// heap renumbers the started timers' ids, in their order, and the counter
/// goes on from their count.
#[inline]
fn next_start_id(counter: &mut u32, heap: &mut PriorityQueue) -> u32 {
    if *counter == u32::MAX {
        *counter = heap.renumber();
    }
    let id = *counter;
    *counter += 1;
    id
}

impl<H: Host> Loop<H> {
    // ----- native timers ---------------------------------------------------

    /// A stopped timer handle that calls `cb` when it expires (`uv_timer_init`).
    pub(crate) fn timer_init(&mut self, cb: impl FnMut(&mut H) + 'static) -> Handle {
        self.insert(Kind::Timer {
            timeout: 0,
            repeat: 0,
            started: false,
            cb: Some(Box::new(cb)),
        })
    }

    /// Starts (or restarts) a timer to expire `timeout` ms after the cached
    /// loop time, then every `repeat` ms if `repeat` is not zero
    /// (`uv_timer_start`). The deadline saturates at `u64::MAX`.
    pub(crate) fn timer_start(
        &mut self,
        h: Handle,
        timeout: u64,
        repeat: u64,
    ) -> Result<(), UvError> {
        self.timer_start_at(h, self.time.saturating_add(timeout), repeat)
    }

    /// [`timer_start`](Self::timer_start) with the deadline `due` given
    /// in loop time, not as a wait from the cached loop time: what
    /// `timer_start` would have done when that time was `due - timeout`.
    /// For a host that arms its timer lazily (`Host::sync_handles`) and
    /// must not let the loop time that passed since move the deadline.
    pub(crate) fn timer_start_at(
        &mut self,
        h: Handle,
        due: u64,
        repeat: u64,
    ) -> Result<(), UvError> {
        // One lookup of the handle: the fields it borrows are apart from
        // the counter and the heap.
        let r = self.handles.get_mut(h).ok_or(UvError::StaleHandle)?;
        if r.closing {
            return Err(UvError::Closing);
        }
        let key = h.index();
        let start_id = next_start_id(&mut self.timer_counter, &mut self.timer_heap);
        match &mut r.kind {
            Kind::Timer {
                timeout: t,
                repeat: rp,
                started,
                ..
            } => {
                *t = due;
                *rp = repeat;
                *started = true;
            }
            _ => return Err(UvError::WrongKind),
        }
        mark_active(r, &mut self.active_refed);
        // An active (started) timer is re-keyed where it is, which is what
        // libuv's stop-then-start leaves (its start id orders it among
        // equal deadlines either way); a stopped one is inserted.
        if !self.timer_heap.update(key, (due, start_id)) {
            self.timer_heap.insert(key, (due, start_id));
        }
        Ok(())
    }

    /// Stops a timer (`uv_timer_stop`); stopping a stopped timer is fine.
    pub(crate) fn timer_stop(&mut self, h: Handle) -> Result<(), UvError> {
        let r = self.rec(h)?;
        if !matches!(r.kind, Kind::Timer { .. }) {
            return Err(UvError::WrongKind);
        }
        self.timer_heap.remove(h.index());
        self.deactivate(h.index());
        Ok(())
    }

    /// Restarts a repeating timer from now with its repeat value; does
    /// nothing to a timer whose repeat is zero (`uv_timer_again`).
    pub(crate) fn timer_again(&mut self, h: Handle) -> Result<(), UvError> {
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

    /// Milliseconds until the timer expires, 0 if it is due or stopped
    /// (`uv_timer_get_due_in`).
    #[cfg(test)]
    pub(crate) fn timer_due_in(&self, h: Handle) -> Result<u64, UvError> {
        let r = self.rec(h)?;
        match r.kind {
            Kind::Timer { timeout, .. } if r.active => Ok(timeout.saturating_sub(self.time)),
            Kind::Timer { .. } => Ok(0),
            _ => Err(UvError::WrongKind),
        }
    }

    /// The loop time at which an active timer expires; `None` if it is
    /// stopped or the handle is not a live timer.
    pub(crate) fn timer_due(&self, h: Handle) -> Option<u64> {
        match self.rec(h) {
            Ok(Rec {
                active: true,
                kind: Kind::Timer { timeout, .. },
                ..
            }) => Some(*timeout),
            _ => None,
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
    /// and the poll phase does not block (`uv_idle_init`). Stopped. (The
    /// timers layer's is [bare](Self::idle_init_bare).)
    #[cfg(test)]
    pub(crate) fn idle_init(&mut self, cb: impl FnMut(&mut H) + 'static) -> Handle {
        self.watcher_init(Phase::Idle, cb)
    }

    /// An idle handle with no callback: while active, the poll phase does
    /// not block, and nothing runs for it (Node's immediate idle handle,
    /// whose callback is empty, costs no call per iteration). Stopped.
    pub(crate) fn idle_init_bare(&mut self) -> Handle {
        self.insert(Kind::Watcher {
            phase: Phase::Idle,
            cb: None,
        })
    }

    /// A prepare handle, run just before the poll phase. Stopped.
    #[cfg(test)]
    pub(crate) fn prepare_init(&mut self, cb: impl FnMut(&mut H) + 'static) -> Handle {
        self.watcher_init(Phase::Prepare, cb)
    }

    /// A check handle, run just after the poll phase. Stopped.
    pub(crate) fn check_init(&mut self, cb: impl FnMut(&mut H) + 'static) -> Handle {
        self.watcher_init(Phase::Check, cb)
    }

    /// Starts an idle, prepare or check handle. As in libuv, the most
    /// recently started handle of a phase runs first.
    pub(crate) fn watcher_start(&mut self, h: Handle) -> Result<(), UvError> {
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
        let key = h.index();
        self.list(phase).insert(0, key);
        self.activate(key);
        Ok(())
    }

    /// Stops an idle, prepare or check handle.
    pub(crate) fn watcher_stop(&mut self, h: Handle) -> Result<(), UvError> {
        let r = self.rec(h)?;
        if !matches!(r.kind, Kind::Watcher { .. }) {
            return Err(UvError::WrongKind);
        }
        self.stop_any(h.index());
        Ok(())
    }

    // ----- pending queue ---------------------------------------------------

    /// Queues `cb` for the next pending phase. While it waits the loop is
    /// alive and the poll phase does not block.
    #[cfg(test)]
    pub(crate) fn defer(&mut self, cb: impl FnOnce(&mut H) + 'static) {
        self.pending.push_back(Box::new(cb));
    }

    // ----- poll timeout ----------------------------------------------------

    /// `uv__backend_timeout`: the poll phase's timeout in ms, `None` for
    /// "block until an event".
    pub(crate) fn backend_timeout(&self) -> Option<u64> {
        if self.stop_flag
            || (self.active_refed == 0 && self.io.requests() == 0 && !self.io.kept_alive())
            || !self.pending.is_empty()
            || !self.idle.is_empty()
            || !self.closing.is_empty()
        {
            return Some(0);
        }
        self.next_timeout()
    }

    /// `uv__next_timeout`: `None` with no timers, else ms to the earliest
    /// (0 if due), capped at `i32::MAX` as libuv does (epoll takes an
    /// `int`) on a real clock. A virtual clock jumps straight to the
    /// deadline, however far: capping would only add empty iterations.
    pub(crate) fn next_timeout(&self) -> Option<u64> {
        let (_, (due, _)) = self.timer_heap.peek_live()?;
        let left = due.saturating_sub(self.time);
        if left > i32::MAX as u64 && !self.clock.is_virtual() {
            return Some(i32::MAX as u64);
        }
        Some(left)
    }
}
