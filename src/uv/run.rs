//! `uv_run` and its phases (libuv 1.46's `src/unix/core.c`).
//!
//! Ground rules:
//! - each phase runs a snapshot: handles started and work queued by its
//!   callbacks wait for the next iteration (the pending queue, the
//!   watchers, the closing handles);
//! - a callback that halts the loop ([`Loop::halt`]) ends the iteration
//!   right after it returns; the work not yet run stays queued, in order,
//!   for the next run;
//! - the loop itself refreshes its time only at the start of a run, after
//!   the poll and before the timers phase; a host's callback may refresh
//!   it too (Node's `getLibuvNow`), and the timers phase compares each
//!   timer with the time as the previous callback left it;
//! - a host that starts its handles lazily ([`Host::sync_handles`]) has
//!   them applied before each read of the loop's liveness, poll timeout
//!   or timers, in the timers phase again after every timer callback.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use super::{Host, Kind, Phase, RunMode, UvError, poll};

/// Runs the loop owned by `host` in `mode` (`uv_run`). Returns whether the
/// loop is still alive.
///
/// # Errors
///
/// [`UvError::Reentrant`] if the loop is already running (a callback called
/// `run`); nothing is run then.
///
/// # Panics
///
/// A panic that escapes a callback (the Node layer catches its users'
/// panics, so only a bug or a panicking [`Clock`](super::Clock) can) goes
/// on unwinding out of `run`, but leaves the loop runnable: it is no longer
/// marked running, so a later `run` is not refused as reentrant.
pub(crate) fn run<H: Host>(host: &mut H, mode: RunMode) -> Result<bool, UvError> {
    let lp = host.uv();
    if lp.running {
        return Err(UvError::Reentrant);
    }
    lp.running = true;
    lp.halted = false;
    // The drop guard: whether run_inner returns or unwinds, the loop ends
    // up not running and not stopped; unless a callback replaced the host,
    // whose loop this run is not.
    let r = catch_unless_replaced(host, |host| run_inner(host, mode));
    let lp = host.uv();
    lp.running = false;
    lp.forget_stop();
    match r {
        Ok(alive) => Ok(alive),
        Err(payload) => resume_unwind(payload),
    }
}

/// `f(host)` with a panic caught, for a caller that puts `host` in order
/// after one; unless the panic unwinds with another host in place (user
/// code moved `host` out of its `&mut` and left another there, see
/// [`Host::instance`]): then it goes on at once, and the caller touches
/// nothing of a host whose run or callback this is not.
pub(crate) fn catch_unless_replaced<H: Host, R>(
    host: &mut H,
    f: impl FnOnce(&mut H) -> R,
) -> std::thread::Result<R> {
    let instance = host.instance();
    match catch_unwind(AssertUnwindSafe(|| f(host))) {
        Err(payload) if host.instance() != instance => resume_unwind(payload),
        r => r,
    }
}

fn run_inner<H: Host>(host: &mut H, mode: RunMode) -> bool {
    host.sync_handles();
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
        host.sync_handles();
        let lp = host.uv();
        let can_sleep = lp.pending.is_empty() && lp.idle.is_empty();
        phase!(run_pending(host));
        phase!(run_watchers(host, Phase::Idle));
        phase!(run_watchers(host, Phase::Prepare));
        host.sync_handles();
        let lp = host.uv();
        let timeout = if (mode == RunMode::Once && can_sleep) || mode == RunMode::Default {
            lp.backend_timeout()
        } else {
            Some(0)
        };
        host.housekeep(timeout.is_none());
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
        host.sync_handles();
        r = host.uv().alive();
        if mode != RunMode::Default {
            break;
        }
    }
    host.sync_handles();
    let alive = host.uv().alive();
    if !alive {
        // Only a loop left with nothing to run: a run that merely ends its
        // iteration (`run_once`, `stop`) is looked at again, once, by the
        // next run's iteration, so a store keeps a whole iteration's grace.
        host.housekeep(true);
    }
    alive
}

/// The phases' "nothing to do" tests are inlined into the loop (a call
/// each, with its saved registers, was most of an empty phase's cost).
#[inline(always)]
fn run_pending<H: Host>(host: &mut H) {
    if !host.uv().pending.is_empty() {
        run_pending_queue(host);
    }
}

#[inline(never)]
fn run_pending_queue<H: Host>(host: &mut H) {
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
/// handle was closed (its slot may then belong to a new handle); back even
/// when the callback unwinds, so that the loop stays runnable after a panic
/// escapes (a check handle that lost its callback would leave every later
/// immediate unrun, and the poll phase waiting for nothing).
fn call_handle<H: Host>(host: &mut H, key: usize) {
    let lp = host.uv();
    let Some((handle, rec)) = lp.handles.try_keyed_at_mut(key) else {
        return;
    };
    let cb = match &mut rec.kind {
        Kind::Timer { cb, .. } | Kind::Watcher { cb, .. } => cb.take(),
        Kind::Io { .. } | Kind::Async => None,
    };
    let Some(mut cb) = cb else { return };
    // A callback that replaced the host unwinds on: `handle` is not its
    // new loop's.
    let r = catch_unless_replaced(host, |host| cb(host));
    if let Some(rec) = host.uv().handles.get_mut(handle) {
        match &mut rec.kind {
            Kind::Timer { cb: slot, .. } | Kind::Watcher { cb: slot, .. } => *slot = Some(cb),
            Kind::Io { .. } | Kind::Async => {}
        }
    }
    if let Err(payload) = r {
        resume_unwind(payload);
    }
}

#[inline(always)]
fn run_watchers<H: Host>(host: &mut H, phase: Phase) {
    if !host.uv().list(phase).is_empty() {
        run_watchers_listed(host, phase);
    }
}

#[inline(never)]
fn run_watchers_listed<H: Host>(host: &mut H, phase: Phase) {
    // Handles started by these callbacks wait for the next iteration, as
    // in libuv: run a snapshot, kept in a reused buffer (no allocation per
    // phase).
    let lp = host.uv();
    // One watcher (the timers layer's check handle, say): the snapshot is
    // its key, with no buffer to fill.
    if let [key] = lp.list(phase)[..] {
        call_watcher(host, key);
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
        if call_watcher(host, key) && host.uv().halted {
            break;
        }
    }
    host.uv().scratch = snapshot;
}

/// Calls the watcher at `key` if it is still active and not closing (an
/// earlier callback of its phase may have stopped or closed it); returns
/// whether it did.
#[inline(always)]
fn call_watcher<H: Host>(host: &mut H, key: usize) -> bool {
    let active = host
        .uv()
        .handles
        .get_at(key)
        .is_some_and(|r| r.active && !r.closing);
    if active {
        call_handle(host, key);
    }
    active
}

#[inline(always)]
fn run_closing<H: Host>(host: &mut H) {
    if !host.uv().closing.is_empty() {
        run_closing_handles(host);
    }
}

#[inline(never)]
fn run_closing_handles<H: Host>(host: &mut H) {
    let closing = std::mem::take(&mut host.uv().closing);
    let mut rest = closing.into_iter();
    for (key, cb) in rest.by_ref() {
        host.uv().handles.remove_at(key);
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
    // At the end of time (a saturated virtual clock, `u64::MAX` ms) a timer
    // re-armed by its callback is due again at once: the 1 ms that keeps
    // an overdue timer out of the pass that ran it (R6.3) saturates. There
    // the phase runs at most as many timers as the heap held when time was
    // first seen at its end (those first: a re-armed timer sorts after
    // them by its new start id); the rest wait for the next iteration's
    // phase. Without the count the phase never ended.
    let mut end_left: Option<usize> = None;
    loop {
        // Handles toggled lazily are applied before every read of the
        // heap: since the poll phase (a timer armed by an I/O, check or
        // close callback), and since the previous timer's callback, which
        // libuv's `uv_timer_start` would have put in the heap at once (a
        // callback that also moved the loop's time past its due time,
        // as a later `set_timeout` reads the clock, has it run in this
        // very phase).
        host.sync_handles();
        let lp = host.uv();
        let Some((key, (due, _))) = lp.timer_heap.peek_live() else {
            break;
        };
        if due > lp.time {
            break;
        }
        if lp.time == u64::MAX {
            let left = end_left.get_or_insert(lp.timer_heap.len());
            if *left == 0 {
                break;
            }
            *left -= 1;
        }
        let h = lp.handles.key_at(key);
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
