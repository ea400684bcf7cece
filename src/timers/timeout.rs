//! Timeouts and intervals: Node's `Timeout` object and its operations
//! (`setTimeout`, `setInterval`, `clearTimeout`, `refresh`, `ref`, `unref`,
//! `hasRef`). Storage is in `lists.rs`, firing in `process.rs`.
//!
//! # State
//!
//! A timer's life is one [`State`]. Three more flags are orthogonal to
//! it: `refed` (Node's `kRefed`), `repeat` (an interval) and `kept` (its
//! storage outlives firing and clearing: [`EventLoop::keep_timeout`]). A
//! timer is *live* (counted in the ref count while refed) in `Armed`,
//! `Running` and `Zombie`; every other state is Node's `_destroyed`.
//!
//! | state | linked in a list | callback stored | Node's fields |
//! |---|---|---|---|
//! | `Armed` | yes | yes | live |
//! | `Running` | only if refreshed by its own callback | no: the callback is running | live |
//! | `RunningCleared` | no | no: dropped when it returns | `_destroyed`, `_idleTimeout = -1`, `_onTimeout = null` |
//! | `Fired` | no | yes | `_destroyed` (a timeout that ran; kept timers only) |
//! | `FiredCleared` | no | no | `_destroyed`, `_onTimeout = null` (cleared after it fired) |
//! | `Zombie` | yes | no | live, `_onTimeout = null` (a `FiredCleared` timer refreshed) |
//! | `Cleared` | no | no | `_destroyed`, `_idleTimeout = -1`, `_onTimeout = null` |
//!
//! ```text
//!            set_timeout / set_interval
//!                      │
//!                      ▼        refresh (moves it to its list's end)
//!   ┌──────────────► Armed ◄──┐
//!   │ interval, or     │  └───┘
//!   │ refreshed in     │ its list fires it (R5.2)
//!   │ its callback     ▼
//!   └────────────── Running ──── clear ───► RunningCleared
//!                      │                          │ callback returns
//!    timeout returns,  │                          ▼
//!    not refreshed     ▼                       Cleared ◄── clear ── Armed
//!                    Fired ─── refresh ──► Armed
//!                      │
//!                    clear
//!                      ▼          refresh              its list reaches it
//!                FiredCleared ─────────────► Zombie ──────────────────────┐
//!                      ▲                                                   │
//!                      └───────────────────────────────────────────────────┘
//! ```
//!
//! The one destroy step is [`EventLoop::destroy`] (live to not live, and
//! the ref count follows), in two halves that paths holding the timer call
//! themselves: `Timer::destroy` (the state) and `EventLoop::destroyed`
//! (the ref count). Storage is freed when a timer that is not kept
//! becomes `Fired`, `FiredCleared` or `Cleared`; its handle is then stale.
//!
//! # Unsafe
//!
//! One function has `unsafe`: `clear_armed_plain`, the fast path of
//! [`EventLoop::clear_timeout`] (inlined there, and out of line for
//! unrefed timers and intervals), frees the cleared timer's slot without
//! testing it again (its caller has just found the timer live at that
//! index) and reads its list and links without bounds tests (issue 12: a
//! pooled cancel 55 → 49 instructions, 1.06× as fast), each read live by
//! an invariant the timers layer keeps and asserts in debug builds:
//! - an `Armed` timer is linked (the table above), into the list of the
//!   map slot it records, which stays mapped while the list holds a timer
//!   (a list leaves the map only when empty);
//! - every live timer has links (`Timers::reset_links` grows them to
//!   cover its index, and they shrink only when the arena is empty).

use super::EventLoop;
use super::coerce::{Delay, LONG_MAX_MS};
use super::error::{CallbackResult, TimerError};
use super::lists::NO_TIMER;
use super::thin::{SlotFn, ThinFn};
use super::wakeup::Wakeup;
use std::num::{NonZeroU32, NonZeroU64};
use std::rc::Rc;

use crate::collections::arena::{Key, stored_inline};
use crate::collections::durations::SlotId;
use crate::collections::list::Links;

/// A handle to a timeout or interval: small, `Copy`, and generation checked.
///
/// A handle to a timer that fired (and was not
/// [kept](EventLoop::keep_timeout)) or was cleared is *stale*: commands on
/// it return [`TimerError::Stale`], queries answer `false`, and it never
/// touches the timer that later reuses its storage slot.
///
/// ```
/// use timerloop::{EventLoop, TimerError};
/// let mut lp = EventLoop::with_virtual_clock();
/// let t = lp.set_timeout(5, |_| {});
/// assert!(lp.timeout_is_pending(t));
/// lp.run().unwrap();
/// assert!(!lp.timeout_is_pending(t));
/// assert_eq!(lp.refresh(t), Err(TimerError::Stale)); // fired and freed
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timeout {
    key: Key,
    loop_id: NonZeroU32,
}

/// A callback closure, stored ([`ThinFn`]), and whether dropping it does
/// nothing: the closure is a word or less (stored inline) and has no drop
/// glue. Then the timer is [plain](Timer::plain). A future's [`Wakeup`]
/// is stored so too: a closure of one `Rc`, inline (no allocation).
#[inline(always)]
fn stored<F, R>(f: F) -> (ThinFn, bool)
where
    F: FnMut(&mut EventLoop) -> R + 'static,
    R: CallbackResult,
{
    ThinFn::callback(f)
}

/// Where a timer is in its life; see the module docs' table. (Its value is
/// what a [`Timer`] keeps in three bits.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum State {
    Armed = 0,
    Running = 1,
    RunningCleared = 2,
    Fired = 3,
    FiredCleared = 4,
    Zombie = 5,
    Cleared = 6,
}

/// The states by their three bits (7 is never stored).
const STATES: [State; 8] = [
    State::Armed,
    State::Running,
    State::RunningCleared,
    State::Fired,
    State::FiredCleared,
    State::Zombie,
    State::Cleared,
    State::Cleared,
];

impl State {
    /// Not `_destroyed`: counted in the ref count while refed.
    pub(super) fn is_live(self) -> bool {
        matches!(self, State::Armed | State::Running | State::Zombie)
    }

    /// `_idleTimeout === -1`: unenrolled; refresh does nothing.
    fn is_unenrolled(self) -> bool {
        matches!(self, State::Cleared | State::RunningCleared)
    }

    /// `_onTimeout === null`: clearing again does nothing.
    fn is_cleared(self) -> bool {
        matches!(
            self,
            State::Cleared | State::RunningCleared | State::FiredCleared | State::Zombie
        )
    }
}

/// `Ok(())`, which the compiler cannot see through: returned by the cold
/// functions a fast path ends in, so that it does not know what they
/// return and the fast path jumps to them instead of calling them and
/// returning a constant itself (a call needs the stack aligned: a push
/// and a pop on every path of the fast one). The value that hides it is
/// a whole word: a byte would be stored into the word a frame's
/// alignment push wrote, and the pop's 8-byte load could not be
/// forwarded from the two stores (a stall that halved
/// timers-cancel-unpooled-end).
#[inline(always)]
fn opaque_ok() -> Result<(), TimerError> {
    if std::hint::black_box(0_u64) == 0 {
        Ok(())
    } else {
        Err(TimerError::Stale)
    }
}

/// One timeout or interval: 32 bytes, its arena generation included (it
/// keeps it itself: [`Stored`](crate::collections::arena::Stored)); its
/// list links live apart, in `Timers::links`.
pub(super) struct Timer {
    /// In bits 0..53, while the timer is linked in a list, that list's
    /// slot in the duration map (`Timers::map`), whose `msecs` is the
    /// duration; while it is not, `_idleTimeout` (and `_repeat` for
    /// intervals), truncated: the coerced duration is at most
    /// [`LONG_MAX_MS`] (2^53 - 1) and only ever used truncated (R3.3), so
    /// it is truncated once rather than converted from `f64` on every
    /// insert. Which of the two is the links' to say (`Timers::links`):
    /// every unlinking writes the duration back
    /// ([`set_unlinked`](Timer::set_unlinked)), every linking the slot.
    /// Then `refed`, `repeat`, `plain` and `kept` (bits 56 to 59), the
    /// [`State`] (bits 60..63), and bit 63, always set: the word is never
    /// zero, which is the niche the arena's vacant slots use, so the slot
    /// needs no tag of its own. Bits 53..56 are clear. The order puts
    /// what the hot tests ask in the top bits, so each is a shift and a
    /// compare with a small constant, not a mask and a compare with two
    /// 64-bit ones: [`is_plain_armed_timeout`](Timer::is_plain_armed_timeout)
    /// the top seven (all but `refed`), [`is_unkept`](Timer::is_unkept)
    /// the top five.
    meta: NonZeroU64,
    /// `_idleStart`, in loop time.
    pub(super) start: u64,
    /// `_onTimeout`, split ([`SlotFn`]); none while it runs and once
    /// cleared.
    pub(super) cb: SlotFn,
    /// The arena generation of the slot (see [`Stored`](crate::collections::arena::Stored)).
    generation: u32,
}

const MSECS: u64 = (1 << 53) - 1;
const STATE_SHIFT: u32 = 60;
const STATE_BITS: u64 = 0b111 << STATE_SHIFT;
const REFED: u64 = 1 << 56;
const REPEAT: u64 = 1 << 57;
const PLAIN: u64 = 1 << 58;
const KEPT: u64 = 1 << 59;
const SET: u64 = 1 << 63;

impl Timer {
    /// An armed, refed timer started at `start`, to be appended to the
    /// list in `list` (which is its duration's); `plain` as [`stored`]
    /// answered for `cb`.
    #[inline(always)]
    fn new(start: u64, (cb, plain): (ThinFn, bool), repeat: bool, list: SlotId) -> Timer {
        let flags = REFED | if repeat { REPEAT } else { 0 } | if plain { PLAIN } else { 0 };
        let mut t = Timer {
            meta: NonZeroU64::MIN,
            start,
            cb: SlotFn::new(cb),
            generation: 0,
        };
        t.set_meta(u64::from(list) | flags | ((State::Armed as u64) << STATE_SHIFT));
        t
    }

    #[inline(always)]
    fn set_meta(&mut self, bits: u64) {
        self.meta = match NonZeroU64::new(bits | SET) {
            Some(m) => m,
            None => unreachable!("bit 63 is set"),
        };
    }

    #[inline(always)]
    fn flag(&self, flag: u64) -> bool {
        self.meta.get() & flag != 0
    }

    #[inline(always)]
    fn set_flag(&mut self, flag: u64, on: bool) {
        let bits = self.meta.get() & !flag;
        self.set_meta(if on { bits | flag } else { bits });
    }

    /// The truncated duration, of a timer that is not linked (a linked
    /// one's is its list's).
    #[inline(always)]
    pub(super) fn msecs(&self) -> u64 {
        self.meta.get() & MSECS
    }

    /// Its list's slot in the duration map, of a linked timer.
    #[inline(always)]
    pub(super) fn list(&self) -> SlotId {
        self.meta.get() as SlotId
    }

    /// Linked into the list in `slot`: the payload is the slot.
    #[inline(always)]
    pub(super) fn set_linked(&mut self, slot: SlotId) {
        let bits = self.meta.get() & !MSECS;
        self.set_meta(bits | u64::from(slot));
    }

    /// Unlinked from its list, whose duration is `msecs`: the payload is
    /// the duration again.
    #[inline(always)]
    pub(super) fn set_unlinked(&mut self, msecs: u64) {
        debug_assert!((1..=MSECS).contains(&msecs), "uncoerced {msecs}");
        let bits = self.meta.get() & !MSECS;
        self.set_meta(bits | msecs);
    }

    #[inline(always)]
    pub(super) fn state(&self) -> State {
        STATES[((self.meta.get() >> STATE_SHIFT) & 0b111) as usize]
    }

    /// Running ([`State::Running`]), unlinked from its list, whose
    /// duration is `msecs`: [`set_unlinked`](Self::set_unlinked) and
    /// [`set_state`](Self::set_state) in one store.
    #[inline(always)]
    pub(super) fn run_unlinked(&mut self, msecs: u64) {
        debug_assert!((1..=MSECS).contains(&msecs), "uncoerced {msecs}");
        let bits = self.meta.get() & !(STATE_BITS | MSECS);
        self.set_meta(bits | msecs | ((State::Running as u64) << STATE_SHIFT));
    }

    #[inline(always)]
    pub(super) fn set_state(&mut self, state: State) {
        let bits = self.meta.get() & !STATE_BITS;
        self.set_meta(bits | ((state as u64) << STATE_SHIFT));
    }

    /// Node's `kRefed`.
    #[inline(always)]
    pub(super) fn refed(&self) -> bool {
        self.flag(REFED)
    }

    #[inline(always)]
    fn set_refed(&mut self, on: bool) {
        self.set_flag(REFED, on);
    }

    /// An interval.
    #[inline(always)]
    pub(super) fn repeat(&self) -> bool {
        self.flag(REPEAT)
    }

    /// Its storage outlives firing and clearing ([`EventLoop::keep_timeout`]).
    #[inline(always)]
    pub(super) fn kept(&self) -> bool {
        self.flag(KEPT)
    }

    #[inline(always)]
    fn set_kept(&mut self, on: bool) {
        self.set_flag(KEPT, on);
    }

    /// Dropping its callback does nothing: it was made by [`stored`] from a
    /// closure of at most a word, stored inline, without drop glue. Its
    /// callback is that closure
    /// or, while it runs and once cleared, none; either way
    /// the timer can be forgotten instead of dropped
    /// ([`Timers::free`](super::lists::Timers::free)).
    #[inline(always)]
    pub(super) fn plain(&self) -> bool {
        self.flag(PLAIN)
    }

    /// In `state`, kept or not.
    #[inline(always)]
    pub(super) fn is_state(&self, state: State) -> bool {
        self.meta.get() & STATE_BITS == (state as u64) << STATE_SHIFT
    }

    /// An armed, unkept, plain timeout (not an interval): one comparison
    /// of the top seven bits (see `meta`), the timers pass's test for its
    /// specialized run
    /// ([`EventLoop::fire_once`](super::EventLoop), plain).
    #[inline(always)]
    pub(super) fn is_plain_armed_timeout(&self) -> bool {
        self.meta.get() >> 57 == (SET | (State::Armed as u64) << STATE_SHIFT | PLAIN) >> 57
    }

    /// An armed, unkept timeout (not an interval) whose callback is not
    /// plain: [`is_plain_armed_timeout`](Self::is_plain_armed_timeout)'s
    /// test with the plain bit clear, the pass's second specialized run
    /// ([`EventLoop::fire_once`](super::EventLoop), owning).
    #[inline(always)]
    pub(super) fn is_owning_armed_timeout(&self) -> bool {
        self.meta.get() >> 57 == (SET | (State::Armed as u64) << STATE_SHIFT) >> 57
    }

    /// A refed, plain, unkept timeout (not an interval) that is running:
    /// its top byte, one comparison (a byte of memory against a constant),
    /// which also answers [`refed`](Self::refed). The timers pass's test
    /// after a plain callback, for freeing it at once.
    #[inline(always)]
    pub(super) fn is_plain_refed_running_timeout(&self) -> bool {
        const TOP: u8 =
            ((SET | (State::Running as u64) << STATE_SHIFT | PLAIN | REFED) >> 56) as u8;
        (self.meta.get() >> 56) as u8 == TOP
    }

    /// An armed, plain, refed timeout (not an interval), not kept: its top
    /// byte, one comparison, which answers [`plain`](Self::plain) and
    /// [`refed`](Self::refed) as well.
    /// [`EventLoop::clear_timeout`]'s test for its fast path.
    #[inline(always)]
    pub(super) fn is_plain_refed_armed_timeout(&self) -> bool {
        const TOP: u8 = ((SET | (State::Armed as u64) << STATE_SHIFT | PLAIN | REFED) >> 56) as u8;
        (self.meta.get() >> 56) as u8 == TOP
    }

    /// In `state` and not kept: one comparison of the top five bits (the
    /// fast paths' test).
    #[inline(always)]
    pub(super) fn is_unkept(&self, state: State) -> bool {
        self.meta.get() >> 59 == (SET | (state as u64) << STATE_SHIFT) >> 59
    }

    /// The timer's half of the destroy step (Node's `_destroyed = true`):
    /// a live timer's state becomes `to`, which is not live. Returns whether
    /// it was refed, so that the caller hands that to
    /// [`EventLoop::destroyed`] (the ref count's half).
    #[inline(always)]
    #[must_use = "a destroyed refed timer must leave the ref count"]
    pub(super) fn destroy(&mut self, to: State) -> bool {
        debug_assert!(
            self.state().is_live(),
            "destroying a {:?} timer",
            self.state()
        );
        debug_assert!(!to.is_live(), "destroying into {to:?}");
        self.set_state(to);
        self.refed()
    }
}

stored_inline!(Timer);

impl Timeout {
    /// The handle of the timer stored under `key` in loop `loop_id`.
    pub(super) fn from_key(key: Key, loop_id: NonZeroU32) -> Self {
        Timeout { key, loop_id }
    }
}

impl EventLoop {
    fn lookup(&self, t: Timeout) -> Result<usize, TimerError> {
        if t.loop_id != self.id {
            return Err(TimerError::ForeignLoop);
        }
        match self.timers.slab.get(t.key) {
            // A timer cleared by its own running callback is stored until
            // the callback returns; unless kept, its handle is stale at
            // once, as after any other clear.
            Some(t) if t.state() == State::RunningCleared && !t.kept() => Err(TimerError::Stale),
            Some(_) => Ok(t.key.index()),
            None => Err(TimerError::Stale),
        }
    }

    fn timer(&self, t: Timeout) -> Option<&Timer> {
        let key = self.lookup(t).ok()?;
        Some(&self.timers.slab[key])
    }

    /// A delay (its [`parts`](Delay::parts), passed in registers) that is
    /// not simply a whole number of milliseconds in range, coerced as Node
    /// does (R3.1), its warning reported.
    #[cold]
    #[inline(never)]
    fn coerce_delay(&mut self, ms: f64, long_ok: bool) -> u64 {
        let (ms, warning) = Delay::coerce_whole_parts(ms, long_ok);
        if let Some(w) = warning {
            self.warn(w);
        }
        ms
    }

    fn new_timer<F, R>(&mut self, delay: Delay, f: F, repeat: bool) -> Timeout
    where
        F: FnMut(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        // An integer in range, the common case, is its own delay; the rest
        // (a float, out of range, with a warning) is coerced out of line,
        // so that no `Option<Warning>` is made on this path.
        let ms = match delay.whole_fast() {
            Some(ms) => ms,
            None => {
                let (ms, long_ok) = delay.parts();
                self.coerce_delay(ms, long_ok)
            }
        };
        // The clock is read before anything is stored, so a clock that
        // panics leaves nothing half made.
        let start = self.libuv_now();
        self.timer_from(start, ms, repeat, || stored(f))
    }

    /// A timeout whose `getLibuvNow()` was read as `start` by code that did
    /// not have the loop at hand (a future created its timer through a
    /// deferred operation): stored exactly as if made at that moment.
    /// `ms` is already coerced.
    pub(crate) fn timeout_started_at<F, R>(&mut self, start: u64, ms: u64, f: F) -> Timeout
    where
        F: FnMut(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        self.started_at(start, ms, || stored(f))
    }

    /// [`timeout_started_at`](Self::timeout_started_at) for a future's
    /// [`Wakeup`]: the timeout wakes it, with no closure to box.
    pub(crate) fn wakeup_started_at(&mut self, start: u64, ms: u64, w: Rc<Wakeup>) -> Timeout {
        self.started_at(start, ms, || {
            stored(move |lp: &mut EventLoop| {
                w.on_fire(lp);
            })
        })
    }

    /// The two above, for either kind of callback.
    #[inline(always)]
    fn started_at(&mut self, start: u64, ms: u64, cb: impl FnOnce() -> (ThinFn, bool)) -> Timeout {
        self.uv.advance_time_to(start);
        self.timer_from(start, ms, false, cb)
    }

    #[inline(always)]
    fn timer_from(
        &mut self,
        start: u64,
        ms: u64,
        repeat: bool,
        cb: impl FnOnce() -> (ThinFn, bool),
    ) -> Timeout {
        debug_assert!((1..=LONG_MAX_MS).contains(&ms), "uncoerced {ms}");
        // Timers futures created without the loop at hand are older: they
        // go first, into their lists and the slab.
        self.flush_deferred();
        // The list first, so the timer is stored knowing it and appended
        // without being looked up again.
        let slot = self.list_for(ms, start);
        // The callback is made here, not by the caller, and the timer with
        // it in its slot (`Arena::insert_with`): built first, it was
        // spilled to the stack and copied back with loads wider than the
        // stores that wrote it, which the CPU cannot forward. The closure
        // takes its values (`move`): holding references, it made each of
        // them live on the stack and was itself copied through memory, the
        // same stall (a sleep's arming, `wakeup_started_at`).
        let handle = self
            .timers
            .slab
            .insert_with(move |_| Timer::new(start, cb(), repeat, slot));
        let key = handle.index();
        self.timers.reset_links(key);
        self.count_ref(true);
        let tm = &mut self.timers;
        tm.map
            .slot_mut(slot)
            .list
            .append_fresh(&mut tm.links[..], key);
        Timeout::from_key(handle, self.id)
    }

    /// Node's `unenroll` (R8.2): destroy, unlink, drop an emptied refed
    /// list. `to` is the state of an unenrolled timer (`Cleared`, or
    /// `RunningCleared` from inside its own callback).
    fn unenroll(&mut self, key: usize, to: State) {
        let tm = &mut self.timers;
        let was_in = tm.unlink(key);
        let t = &mut tm.slab[key];
        // A linked timer's list is the map's list for its duration (a list
        // leaves the map only when empty); a running timer's is looked up
        // by duration, as Node does (only for a refed one: nothing else
        // drops a list).
        let slot = if was_in.is_some() {
            was_in
        } else if t.refed() {
            tm.map.get(t.msecs())
        } else {
            None
        };
        let refed = t.destroy(to);
        self.end_unenroll(slot, refed);
    }

    /// The rest of [`unenroll`](Self::unenroll) once the timer is
    /// unlinked and [destroyed](Timer::destroy) (`refed` is what that
    /// returned): a refed timer's list (in the map's `slot`, if any) is
    /// dropped if it is now empty, and the timer leaves the ref count.
    #[inline(always)]
    fn end_unenroll(&mut self, slot: Option<SlotId>, refed: bool) {
        let tm = &mut self.timers;
        if refed
            && let Some(slot) = slot
            && let found = tm.map.slot(slot)
            && found.list.is_empty()
        {
            tm.discard_list(slot);
        }
        self.destroyed(refed);
    }

    /// Schedules `f` to run once, `delay` from now (`setTimeout`).
    ///
    /// A plain number is milliseconds, coerced as Node does (R3.2): a
    /// delay below 1 ms, NaN, or above [`TIMEOUT_MAX`] becomes 1 ms (the
    /// last with a `TimeoutOverflowWarning`); fractions are kept, but the
    /// timer joins the list of the truncated duration, so 1.5 ms fires with
    /// the 1 ms timers. A [`Duration`](std::time::Duration) is rounded **up**
    /// to whole milliseconds (1.5 ms is 2 ms), counted from the loop's
    /// current millisecond as every timer is: it fires no earlier than its
    /// deadline in loop time, and on a real clock at most 1 ms short of
    /// its full duration in real time, as Node's timeouts. A `Duration`
    /// beyond [`TIMEOUT_MAX`] is not coerced: it waits its full length (up
    /// to [`LONG_MAX_MS`](crate::LONG_MAX_MS)). So for a long timer (35 days, say) pass a `Duration`:
    /// the same number of milliseconds as a number fires after 1 ms, and
    /// its warning reaches only a [warning
    /// handler](Self::set_warning_handler), if one is set (the library
    /// prints nothing itself).
    ///
    /// `f` returns `()` or a `Result` ([`CallbackResult`]); a closure
    /// that never returns needs `-> ()` written (see there).
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
    /// lp.set_timeout(Duration::from_micros(1500), move |lp| l.borrow_mut().push(("d", lp.now())));
    /// lp.run().unwrap();
    /// // 1.5 and 0 share the 1 ms list, in insertion order; the Duration
    /// // rounds up to 2 ms, after the 2 ms timer created before it.
    /// assert_eq!(*log.borrow(), [("a", 1), ("c", 1), ("b", 2), ("d", 2)]);
    /// ```
    pub fn set_timeout<F, R>(&mut self, delay: impl Into<Delay>, f: F) -> Timeout
    where
        F: FnMut(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        self.new_timer(delay.into(), f, false)
    }

    /// Schedules `f` to run every `period` (`setInterval`), coerced as in
    /// [`set_timeout`](Self::set_timeout). Each next run is due `period`
    /// after the loop time read just before the callback started; lateness
    /// is not made up and the callback's own duration is not added (R5.5).
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::{EventLoop, TimerError};
    /// let runs = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let r = runs.clone();
    /// let iv = lp.set_interval(10, move |lp| {
    ///     r.borrow_mut().push(lp.now());
    ///     if r.borrow().len() == 3 {
    ///         let me = lp.current_timeout().unwrap();
    ///         lp.clear_interval(me).unwrap();
    ///     }
    /// });
    /// lp.run().unwrap();
    /// assert_eq!(*runs.borrow(), [10, 20, 30]);
    /// assert_eq!(lp.clear_interval(iv), Err(TimerError::Stale), "already cleared");
    /// ```
    pub fn set_interval<F, R>(&mut self, period: impl Into<Delay>, f: F) -> Timeout
    where
        F: FnMut(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        self.new_timer(period.into(), f, true)
    }

    /// Cancels a timeout or interval (`clearTimeout`, R8.1). Clearing a
    /// timer from inside its own callback stops an interval from
    /// repeating. Clearing a [kept](Self::keep_timeout) timer that was
    /// already cleared does nothing, as in Node.
    ///
    /// ```
    /// use timerloop::{EventLoop, TimerError};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.set_timeout(10, |_| -> Result<(), &str> { panic!("cleared timers never run") });
    /// lp.clear_timeout(t).unwrap();
    /// assert_eq!(lp.clear_timeout(t), Err(TimerError::Stale));
    /// lp.run().unwrap();
    /// assert_eq!(lp.now(), 0, "nothing was left to wait for");
    /// ```
    ///
    /// # Errors
    ///
    /// [`TimerError::Stale`] if the timer is gone (it fired and was not
    /// kept, or was cleared); [`TimerError::ForeignLoop`] for another
    /// loop's handle.
    pub fn clear_timeout(&mut self, t: Timeout) -> Result<(), TimerError> {
        // A handle of another loop, or of a timer that is gone, goes to
        // the slow path at once; the rest by the top byte. Two exits, not
        // one: told apart, the two tests are two branches, where one exit
        // had the compiler combine them with flag stores.
        if t.loop_id != self.id {
            return self.clear_timeout_slow(t);
        }
        let Some(timer) = self.timers.slab.get_mut(t.key) else {
            return self.clear_timeout_slow(t);
        };
        let (key, slot) = (t.key.index(), timer.list());
        if !timer.is_plain_refed_armed_timeout() {
            // The rest of the pending, unkept timers (an interval, an
            // unrefed timer, a callback that must be dropped) are cleared
            // out of line, without a second lookup; anything else is not
            // simply pending.
            if !timer.is_unkept(State::Armed) {
                return self.clear_timeout_slow(t);
            }
            if !timer.plain() {
                return self.clear_pending_dropping(key, slot);
            }
            let refed = timer.refed();
            return self.clear_pending_plain(key, slot, refed);
        }
        // The commonest case, told by one test of the top byte: a pending,
        // refed timeout that is not kept and whose callback needs no drop.
        self.clear_armed_plain(key, slot, true)
    }

    /// [`clear_armed_plain`](Self::clear_armed_plain) out of line, for
    /// the pending plain timers that are not the fast path's: intervals
    /// and unrefed timers.
    #[inline(never)]
    fn clear_pending_plain(
        &mut self,
        key: usize,
        slot: SlotId,
        refed: bool,
    ) -> Result<(), TimerError> {
        self.clear_armed_plain(key, slot, refed)
    }

    /// Clears the pending, unkept, plain timer at `key`, linked in the
    /// list of `slot`; `refed` is whether it was. Dropping its callback
    /// would do nothing: it is forgotten where it lies at once, without
    /// the destroy step's state (the slot is vacant, the handle stale,
    /// before anything could read it) and without a second lookup to
    /// free it.
    #[allow(unsafe_code)]
    #[inline(always)]
    fn clear_armed_plain(
        &mut self,
        key: usize,
        slot: SlotId,
        refed: bool,
    ) -> Result<(), TimerError> {
        let tm = &mut self.timers;
        #[cfg(debug_assertions)]
        {
            let timer = &tm.slab.get_at(key).expect("a live timer");
            assert!(timer.plain() && timer.refed() == refed && timer.is_unkept(State::Armed));
            timer.cb.debug_assert_plain();
        }
        debug_assert!(key < tm.links.len() && tm.links[key].is_linked());
        // SAFETY: the caller found the timer live at `key` (its handle's
        // generation matched) and nothing has freed it since; it is
        // `Armed`, so it has links and is linked into the list of `slot`,
        // which is mapped (see the module docs).
        let (list, links) = unsafe {
            tm.slab.forget_at_unchecked(key);
            (
                &mut tm.map.slot_unchecked_mut(slot).list,
                *tm.links.get_unchecked(key),
            )
        };
        // Its links are read, not reset: the slot is free, and a timer
        // stored there next writes them (`List::append_fresh`). A timer
        // behind its list's oldest is unlinked out of line: its
        // neighbours' links are indexed, and the bounds tests' panics are
        // calls, which would have every path here align the stack.
        if !list.is_head(key) {
            return self.clear_behind_head(slot, links, refed);
        }
        let emptied = list.remove_head_freeing(links);
        // `end_unenroll`, its rare steps (dropping the emptied list, the
        // ref count reaching zero) out of line and last, so that this
        // path makes no call it must come back from. The count goes down
        // first and is tested after: a decrement and a branch on its
        // flags.
        if refed {
            if emptied {
                return self.end_unenroll_emptied(slot);
            }
            if tm.uncount_ref() {
                return self.ref_count_reached_zero();
            }
        }
        Ok(())
    }

    /// The rest of [`clear_armed_plain`](Self::clear_armed_plain) for a
    /// timer behind its list's oldest, its links `links`, already freed:
    /// unlinked (the list keeps its oldest), and the ref count down if it
    /// was `refed`.
    #[inline(never)]
    fn clear_behind_head(
        &mut self,
        slot: SlotId,
        links: Links,
        refed: bool,
    ) -> Result<(), TimerError> {
        let tm = &mut self.timers;
        tm.map
            .slot_mut(slot)
            .list
            .remove_behind_head_freeing(&mut tm.links[..], links);
        if refed && tm.uncount_ref() {
            return self.ref_count_reached_zero();
        }
        opaque_ok()
    }

    /// The rest of [`clear_timeout`](Self::clear_timeout)'s fast path for
    /// a timer that is not plain: destroyed, unlinked and unenrolled, its
    /// callback dropped last, the loop consistent.
    #[inline(never)]
    fn clear_pending_dropping(&mut self, key: usize, slot: SlotId) -> Result<(), TimerError> {
        let tm = &mut self.timers;
        let refed = tm.slab[key].destroy(State::Cleared);
        tm.map.slot_mut(slot).list.remove(&mut tm.links[..], key);
        self.end_unenroll(Some(slot), refed);
        self.timers.free_dropping(key);
        Ok(())
    }

    /// [`end_unenroll`](Self::end_unenroll) of a refed timer whose
    /// clear emptied its list, which the caller saw: the list is dropped
    /// without asking again, and the ref count goes down.
    #[cold]
    #[inline(never)]
    fn end_unenroll_emptied(&mut self, slot: SlotId) -> Result<(), TimerError> {
        debug_assert!(self.timers.map.slot(slot).list.is_empty());
        // The newest list of a direct duration (the usual one) leaves with
        // no call: then this function needs no stack frame, and each rare
        // case is a jump to the function that finishes it.
        let tm = &mut self.timers;
        if !tm.queue.discard_last(slot as usize) {
            return self.end_unenroll_emptied_slow(slot);
        }
        if !tm.forget_direct_list(slot) {
            return self.end_unenroll_far_emptied(slot);
        }
        if tm.uncount_ref() {
            return self.ref_count_reached_zero();
        }
        opaque_ok()
    }

    /// [`end_unenroll_emptied`](Self::end_unenroll_emptied) of a list
    /// whose heap entry leaves the general way.
    #[cold]
    #[inline(never)]
    fn end_unenroll_emptied_slow(&mut self, slot: SlotId) -> Result<(), TimerError> {
        self.timers.discard_list(slot);
        self.destroyed(true);
        Ok(())
    }

    /// [`end_unenroll_emptied`](Self::end_unenroll_emptied) of a list of
    /// a far duration, its heap entry gone.
    #[cold]
    #[inline(never)]
    fn end_unenroll_far_emptied(&mut self, slot: SlotId) -> Result<(), TimerError> {
        self.timers.forget_list(slot, true);
        self.destroyed(true);
        Ok(())
    }

    /// The native timer unrefed after a clear brought the ref count to
    /// zero (the rest of [`count_ref`](Self::count_ref)'s decrement).
    #[cold]
    #[inline(never)]
    fn ref_count_reached_zero(&mut self) -> Result<(), TimerError> {
        self.sync_ref();
        opaque_ok()
    }

    /// [`clear_timeout`](Self::clear_timeout) of a timer that is not simply
    /// pending: running, fired, kept, cleared already, or not there.
    #[inline(never)]
    fn clear_timeout_slow(&mut self, t: Timeout) -> Result<(), TimerError> {
        let key = self.lookup(t)?;
        let timer = &mut self.timers.slab[key];
        let state = timer.state();
        if state.is_cleared() {
            return Ok(());
        }
        // Taken out, and dropped once the loop is consistent: a drop that
        // panics then leaves no timer half cleared.
        let cb = timer.cb.take();
        match state {
            State::Fired => timer.set_state(State::FiredCleared),
            State::Running => self.unenroll(key, State::RunningCleared),
            _ => self.unenroll(key, State::Cleared),
        }
        let timer = &self.timers.slab[key];
        if !timer.kept() && timer.state() != State::RunningCleared {
            self.timers.free(key);
        }
        drop(cb);
        Ok(())
    }

    /// Cancels an interval; the same as [`clear_timeout`](Self::clear_timeout),
    /// as in Node, where the two are interchangeable.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let iv = lp.set_interval(10, |_| {});
    /// lp.clear_interval(iv).unwrap();
    /// lp.run().unwrap();
    /// assert_eq!(lp.stats().timers, 0);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`clear_timeout`](Self::clear_timeout).
    pub fn clear_interval(&mut self, t: Timeout) -> Result<(), TimerError> {
        self.clear_timeout(t)
    }

    /// Restarts the timer's countdown from now, keeping its duration
    /// (`timeout.refresh()`, R8.4); the timer moves behind the other timers
    /// of its duration. A timeout that already fired fires again, if it was
    /// [kept](Self::keep_timeout). Refreshing an interval from inside its
    /// own callback has no effect: the next run stays on its grid (R8.5).
    /// Refreshing a timer cleared before it fired does nothing, as in
    /// Node: a [kept](Self::keep_timeout) one answers `Ok(())`, and one that
    /// was not kept is gone, so its handle is stale ([`TimerError::Stale`]).
    /// A kept timeout cleared after it fired is listed again with no
    /// callback and keeps the loop alive until its expiry, as in Node (see
    /// [`keep_timeout`](Self::keep_timeout)).
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (a, b) = (log.clone(), log.clone());
    /// let t1 = lp.set_timeout(10, move |_| a.borrow_mut().push("t1"));
    /// lp.set_timeout(10, move |_| b.borrow_mut().push("t2"));
    /// lp.refresh(t1).unwrap(); // t1 moves behind t2
    /// lp.run().unwrap();
    /// assert_eq!(*log.borrow(), ["t2", "t1"]);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`clear_timeout`](Self::clear_timeout).
    pub fn refresh(&mut self, t: Timeout) -> Result<(), TimerError> {
        if t.loop_id == self.id
            && !self.has_deferred()
            && let Some(timer) = self.timers.slab.get_mut(t.key)
            && timer.is_state(State::Armed)
        {
            // The common case, checked in one lookup: a pending timer
            // (linked: `list()` is its list's slot) moves to its list's
            // newest end, with nothing deferred to flush first. The clock
            // is read before anything is stored (a clock that panics leaves
            // it as it was).
            self.uv.update_time();
            timer.start = self.uv.now();
            let (key, slot) = (t.key.index(), timer.list());
            let tm = &mut self.timers;
            tm.map
                .slot_mut(slot)
                .list
                .move_to_back(&mut tm.links[..], key);
            return Ok(());
        }
        self.refresh_slow(t)
    }

    /// [`refresh`](Self::refresh) of a timer that is not simply pending:
    /// fired, cleared, running, a zombie, not there; or of any timer while
    /// operations are deferred.
    #[inline(never)]
    fn refresh_slow(&mut self, t: Timeout) -> Result<(), TimerError> {
        let key = self.lookup(t)?;
        let state = self.timers.slab[key].state();
        if state.is_unenrolled() {
            return Ok(());
        }
        // A fired timer comes back to life (a cleared one as a zombie); a
        // pending one, the common case, only moves, and is not looked up
        // again.
        let revived = match state {
            State::Fired => Some(State::Armed),
            State::FiredCleared => Some(State::Zombie),
            _ => None,
        };
        let start = self.libuv_now();
        self.insert(key, start);
        let Some(revived) = revived else {
            return Ok(());
        };
        let timer = &mut self.timers.slab[key];
        timer.set_state(revived);
        if timer.refed() {
            self.count_ref(true);
        }
        Ok(())
    }

    /// Keeps a timeout's storage after it fires or is cleared, so that
    /// [`refresh`](Self::refresh), [`timeout_has_ref`](Self::timeout_has_ref)
    /// and the rest keep working on it exactly as on a Node `Timeout`
    /// object (which lives while referenced): a fired timeout fires again
    /// when refreshed; one cleared after it fired can still be refreshed
    /// and then keeps the loop alive until its (empty) expiry, as in Node.
    /// [`release_timeout`](Self::release_timeout) frees the storage.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let runs = Rc::new(Cell::new(0));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let r = runs.clone();
    /// let t = lp.set_timeout(5, move |_| r.set(r.get() + 1));
    /// lp.keep_timeout(t).unwrap();
    /// lp.run().unwrap();
    /// lp.refresh(t).unwrap(); // a fired timeout fires again
    /// lp.run().unwrap();
    /// assert_eq!(runs.get(), 2);
    /// lp.release_timeout(t).unwrap();
    /// assert_eq!(lp.stats().timers, 0);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`clear_timeout`](Self::clear_timeout).
    pub fn keep_timeout(&mut self, t: Timeout) -> Result<(), TimerError> {
        let key = self.lookup(t)?;
        self.timers.slab[key].set_kept(true);
        Ok(())
    }

    /// Frees a timeout's storage, clearing it first if it is pending: the
    /// handle goes stale. The way to let go of a
    /// [kept](Self::keep_timeout) timeout; of one that is not kept it is
    /// [`clear_timeout`](Self::clear_timeout).
    ///
    /// ```
    /// use timerloop::{EventLoop, TimerError};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.set_timeout(5, |_| {});
    /// lp.keep_timeout(t).unwrap();
    /// lp.release_timeout(t).unwrap();
    /// assert_eq!(lp.refresh(t), Err(TimerError::Stale));
    /// assert_eq!(lp.stats().timers, 0);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`clear_timeout`](Self::clear_timeout).
    pub fn release_timeout(&mut self, t: Timeout) -> Result<(), TimerError> {
        self.clear_timeout(t)?;
        // A timer that was not kept is freed by that clear (a running one
        // when its callback returns): there is nothing left to release,
        // and the handle was good.
        let Ok(key) = self.lookup(t) else {
            return Ok(());
        };
        // A zombie (cleared after it fired, then refreshed: in its list
        // again, keeping the loop alive, with no callback) is one that
        // `clear_timeout` leaves as it is, as Node does; released, it
        // leaves its list and the ref count before its storage goes.
        if self.timers.slab[key].state() == State::Zombie {
            self.unenroll(key, State::Cleared);
        }
        let timer = &mut self.timers.slab[key];
        timer.set_kept(false);
        if timer.state() != State::RunningCleared {
            self.timers.free(key);
        }
        Ok(())
    }

    /// Lets the loop exit while this timer is pending (`timeout.unref()`,
    /// R8.6). An unrefed timer still fires if the loop is running anyway.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.set_timeout(1000, |_| -> Result<(), &str> { panic!("never runs") });
    /// lp.unref_timeout(t).unwrap();
    /// lp.run().unwrap(); // returns at once: nothing refed is left
    /// assert_eq!(lp.now(), 0);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`clear_timeout`](Self::clear_timeout).
    pub fn unref_timeout(&mut self, t: Timeout) -> Result<(), TimerError> {
        self.set_timeout_ref(t, false)
    }

    /// Makes the timer keep the loop alive again (`timeout.ref()`, R8.6).
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.set_timeout(10, |_| {});
    /// lp.unref_timeout(t).unwrap();
    /// lp.ref_timeout(t).unwrap();
    /// lp.run().unwrap();
    /// assert_eq!(lp.now(), 10, "the loop waited for it");
    /// ```
    ///
    /// # Errors
    ///
    /// As [`clear_timeout`](Self::clear_timeout).
    pub fn ref_timeout(&mut self, t: Timeout) -> Result<(), TimerError> {
        self.set_timeout_ref(t, true)
    }

    fn set_timeout_ref(&mut self, t: Timeout, on: bool) -> Result<(), TimerError> {
        let key = self.lookup(t)?;
        let timer = &mut self.timers.slab[key];
        if timer.refed() != on {
            timer.set_refed(on);
            if timer.state().is_live() {
                self.count_ref(on);
            }
        }
        Ok(())
    }

    /// Whether the timer keeps the loop alive (`timeout.hasRef()`): its ref
    /// flag, which a [kept](Self::keep_timeout) timer keeps after it fired
    /// or was cleared (R8.7); `false` for a stale handle.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.set_timeout(10, |_| {});
    /// assert!(lp.timeout_has_ref(t));
    /// lp.unref_timeout(t).unwrap();
    /// assert!(!lp.timeout_has_ref(t));
    /// ```
    pub fn timeout_has_ref(&self, t: Timeout) -> bool {
        self.timer(t).is_some_and(|t| t.refed())
    }

    /// Whether the timer is waiting to fire: armed in its list, or
    /// refreshed by its own running callback. An interval asked from its
    /// own callback answers `false` (it is out of its list while it runs)
    /// unless refreshed there, though it is re-armed when the callback
    /// returns.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.set_timeout(10, |_| {});
    /// assert!(lp.timeout_is_pending(t));
    /// lp.clear_timeout(t).unwrap();
    /// assert!(!lp.timeout_is_pending(t));
    /// ```
    pub fn timeout_is_pending(&self, t: Timeout) -> bool {
        self.lookup(t).is_ok_and(|key| {
            self.timers.links[key].is_linked() && self.timers.slab[key].state() != State::Zombie
        })
    }

    /// The loop time the timer counts its duration from (Node's
    /// `_idleStart`): when it was made or last refreshed, or an interval's
    /// last run began; for an interval whose callback is running, when
    /// that run began, which its next counts from (R5.5). A fired or
    /// cleared timer keeps its last. `None` for a stale handle.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.set_timeout(10, |_| {});
    /// assert_eq!(lp.timeout_start(t), Some(0));
    /// lp.block(4);
    /// lp.refresh(t).unwrap();
    /// assert_eq!(lp.timeout_start(t), Some(4));
    /// ```
    pub fn timeout_start(&self, t: Timeout) -> Option<u64> {
        self.timer(t).map(|t| t.start)
    }

    /// The timeout or interval whose callback is running (Node's `this` in
    /// a timer callback), if any.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let seen = Rc::new(Cell::new(None));
    /// let s = seen.clone();
    /// let t = lp.set_timeout(1, move |lp| s.set(lp.current_timeout()));
    /// assert_eq!(lp.current_timeout(), None);
    /// lp.run().unwrap();
    /// assert_eq!(seen.get(), Some(t));
    /// ```
    pub fn current_timeout(&self) -> Option<Timeout> {
        let key = self.timers.current;
        if key == NO_TIMER {
            return None;
        }
        // Its slot is live while the callback runs (its `finally` frees
        // it), whatever the callback did to it.
        let key = self.timers.slab.try_key_at(key);
        debug_assert!(key.is_some(), "the current timer's slot is free");
        key.map(|key| Timeout::from_key(key, self.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A timer is plain only when its callback is an inline closure (a
    /// word or less) without drop glue; what any other captured is dropped
    /// when it is cleared and after it fired.
    #[test]
    fn plain_only_for_inline_closures_without_drop_glue() {
        use std::cell::Cell;
        struct Marker;
        impl Drop for Marker {
            fn drop(&mut self) {}
        }
        assert!(stored(|_: &mut EventLoop| {}).1);
        let word = 7_i64;
        assert!(
            stored(move |_: &mut EventLoop| {
                std::hint::black_box(word);
            })
            .1
        );
        let two = (7_i64, 8_i64);
        assert!(
            !stored(move |_: &mut EventLoop| {
                std::hint::black_box(two);
            })
            .1
        );
        let marker = Marker;
        assert!(
            !stored(move |_: &mut EventLoop| {
                std::hint::black_box(&marker);
            })
            .1
        );
        let mut lp = EventLoop::with_virtual_clock();
        let plain = lp.set_timeout(1, |_| {});
        assert!(lp.timers.slab[plain.key.index()].plain());
        let plain = lp.set_timeout(1, move |_| {
            std::hint::black_box(word);
        });
        assert!(lp.timers.slab[plain.key.index()].plain());
        let wake = Wakeup::new(&lp.shared);
        wake.deadline.set(1);
        let w = lp.wakeup_started_at(0, 1, wake.clone());
        assert!(!lp.timers.slab[w.key.index()].plain());
        assert_eq!(Rc::strong_count(&wake), 2);
        lp.clear_timeout(w).unwrap();
        assert_eq!(Rc::strong_count(&wake), 1);
        // 'static captures whose drops count, through a shared count (a
        // leaked one, which Miri reports as a leak, served before).
        struct Counted(Rc<Cell<u32>>);
        impl Drop for Counted {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
            }
        }
        let drops = Rc::new(Cell::new(0));
        let cleared = Counted(drops.clone());
        let t = lp.set_timeout(1, move |_| {
            std::hint::black_box(&cleared);
        });
        assert!(!lp.timers.slab[t.key.index()].plain());
        lp.clear_timeout(t).unwrap();
        assert_eq!(drops.get(), 1);
        let fired = Counted(drops.clone());
        lp.set_timeout(1, move |_| {
            std::hint::black_box(&fired);
        });
        lp.run().unwrap();
        assert_eq!(drops.get(), 2);
    }

    /// Storage that empties is given back when the loop comes round
    /// (between callbacks), not by the `clear_timeout` that emptied it;
    /// storage that fills again before then is kept.
    #[test]
    #[cfg_attr(miri, ignore = "thousands of timers: too slow under Miri")]
    fn emptied_storage_is_given_back_by_the_loop_not_by_the_clear() {
        let n = 3 * super::super::lists::SHRINK_ABOVE;
        let mut lp = EventLoop::with_virtual_clock();
        let fill = |lp: &mut EventLoop| -> Vec<Timeout> {
            // Distinct durations: a list per timer, so the lists' storage
            // grows past the threshold too.
            (1..=n as u64).map(|d| lp.set_timeout(d, |_| {})).collect()
        };
        let held = |lp: &EventLoop| {
            let t = &lp.timers;
            (t.slab.capacity(), t.links.capacity(), t.map.capacity())
        };
        for t in fill(&mut lp) {
            lp.clear_timeout(t).unwrap();
        }
        let (slab, links, lists) = held(&lp);
        assert!(slab >= n && links >= n && lists >= n, "{:?}", held(&lp));
        // Filled again before the loop came round: nothing was released,
        // nothing is reallocated.
        let again = fill(&mut lp);
        assert_eq!(held(&lp), (slab, links, lists));
        for t in again {
            lp.clear_timeout(t).unwrap();
        }
        // The loop is not alive: `run` returns at once, giving it back.
        lp.run().unwrap();
        assert_eq!(held(&lp), (0, 0, 0));
        assert_eq!(lp.now(), 0);
        // And the loop goes on as before.
        let t = lp.set_timeout(5, |_| {});
        lp.run().unwrap();
        assert_eq!(lp.now(), 5);
        assert!(!lp.timeout_is_pending(t));
    }

    /// While the loop runs, emptied timer storage is given back once it
    /// has stayed empty, with nothing inserted, for a whole iteration: not
    /// at the first look after it emptied (the program may be about to
    /// refill it), but at the next.
    #[test]
    #[cfg_attr(miri, ignore = "thousands of timers: too slow under Miri")]
    fn storage_is_given_back_after_a_whole_iteration_empty() {
        use std::cell::RefCell;
        use std::rc::Rc;
        let n = 2 * super::super::lists::SHRINK_ABOVE;
        let mut lp = EventLoop::with_virtual_clock();
        let seen = Rc::new(RefCell::new(Vec::new()));
        // An immediate keeps the loop alive and iterating; timers are
        // made and cleared from the first one.
        let s = seen.clone();
        lp.set_immediate(move |lp: &mut EventLoop| {
            let ts: Vec<Timeout> = (0..n).map(|_| lp.set_timeout(50, |_| {})).collect();
            for t in ts {
                lp.clear_timeout(t).unwrap();
            }
            s.borrow_mut().push(lp.timers.slab.capacity());
            let s = s.clone();
            // Next iteration: the loop has looked once (and marked it).
            lp.set_immediate(move |lp: &mut EventLoop| {
                s.borrow_mut().push(lp.timers.slab.capacity());
                let s = s.clone();
                // The iteration after: it stayed empty, so it went.
                lp.set_immediate(move |lp: &mut EventLoop| {
                    s.borrow_mut().push(lp.timers.slab.capacity());
                });
            });
        });
        lp.run().unwrap();
        let seen = seen.borrow();
        assert!(seen[0] >= n, "{seen:?}");
        assert_eq!(seen[1], seen[0], "released at the first look: {seen:?}");
        assert_eq!(seen[2], 0, "kept past a whole empty iteration: {seen:?}");
    }

    /// A timer that fires as the last one gives its storage back in the
    /// same run, at the end of the iteration.
    #[test]
    #[cfg_attr(miri, ignore = "thousands of timers: too slow under Miri")]
    fn storage_emptied_by_firing_is_given_back_before_run_returns() {
        let n = 2 * super::super::lists::SHRINK_ABOVE;
        let mut lp = EventLoop::with_virtual_clock();
        for _ in 0..n {
            lp.set_timeout(1, |_| {});
        }
        assert!(lp.timers.slab.capacity() >= n);
        lp.run().unwrap();
        assert_eq!(lp.timers.slab.capacity(), 0);
        assert_eq!(lp.stats(), crate::Stats::default());
    }

    /// The packed word gives back what was put in, at the extremes, and a
    /// slot of the timer arena is 32 bytes: a vacant arena slot uses the
    /// word's niche rather than a tag beside it.
    #[test]
    fn a_timer_is_thirty_two_bytes_and_its_word_round_trips() {
        // The callback is a word and a 32-bit code (on 64-bit targets;
        // on 32-bit ones 8 bytes, and the slot 28).
        #[cfg(target_pointer_width = "64")]
        {
            assert_eq!(std::mem::size_of::<SlotFn>(), 12);
            assert_eq!(std::mem::size_of::<Timer>(), 32);
            assert_eq!(
                crate::collections::arena::Arena::<Timer, Timer>::slot_size(),
                32
            );
        }
        for msecs in [1, 2, 1 << 31, LONG_MAX_MS] {
            for (repeat, plain) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut t =
                    Timer::new(7, ThinFn::new(|_: &mut EventLoop| Ok(())), repeat, u32::MAX);
                assert_eq!(t.list(), u32::MAX);
                t.set_unlinked(msecs);
                t.set_flag(PLAIN, plain);
                for state in STATES {
                    for (refed, kept) in
                        [(false, false), (true, false), (false, true), (true, true)]
                    {
                        t.set_state(state);
                        t.set_refed(refed);
                        t.set_kept(kept);
                        assert_eq!(
                            (
                                t.msecs(),
                                t.state(),
                                t.refed(),
                                t.repeat(),
                                t.kept(),
                                t.plain()
                            ),
                            (msecs, state, refed, repeat, kept, plain)
                        );
                        assert_eq!(t.is_unkept(state), !kept);
                        assert_eq!(t.is_unkept(State::Armed), state == State::Armed && !kept);
                        assert_eq!(
                            t.is_plain_armed_timeout(),
                            state == State::Armed && !kept && !repeat && plain
                        );
                    }
                }
            }
        }
    }

    /// Round 23's layout: the shift-and-compare tests mean what the
    /// mask-and-compare ones of the old layout (state in bits 53..56,
    /// `kept` 58, `plain` 59) meant, for every state asked about, every
    /// stored state and every flag; bits 53..56 stay clear, bit 63 set,
    /// through every setter (`set_linked`, `set_unlinked`, `run_unlinked`,
    /// `set_state`, `destroy`, the flag setters).
    #[test]
    fn meta_tests_match_their_meaning_for_every_combination() {
        const CLEAR: u64 = 0b111 << 53;
        let check = |t: &Timer| {
            let m = t.meta.get();
            assert_eq!(m & CLEAR, 0, "bits 53..56 set: {m:#x}");
            assert_ne!(m & SET, 0, "bit 63 clear: {m:#x}");
        };
        for payload in [1, 2, 77, u64::from(u32::MAX), LONG_MAX_MS] {
            for bits in 0..16u32 {
                let (refed, repeat, plain, kept) =
                    (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0);
                let mut t = Timer::new(3, ThinFn::new(|_: &mut EventLoop| Ok(())), repeat, 0);
                t.set_flag(PLAIN, plain);
                t.set_refed(refed);
                t.set_kept(kept);
                check(&t);
                if payload <= u64::from(u32::MAX) {
                    t.set_linked(payload as SlotId);
                    assert_eq!(t.list(), payload as SlotId);
                    check(&t);
                }
                t.set_unlinked(payload);
                check(&t);
                assert_eq!(t.msecs(), payload);
                for stored in STATES {
                    t.set_state(stored);
                    check(&t);
                    assert_eq!(t.state(), stored);
                    assert_eq!(t.msecs(), payload);
                    assert_eq!(
                        (t.refed(), t.repeat(), t.plain(), t.kept()),
                        (refed, repeat, plain, kept)
                    );
                    for asked in STATES {
                        assert_eq!(t.is_state(asked), stored == asked);
                        assert_eq!(
                            t.is_unkept(asked),
                            stored == asked && !kept,
                            "is_unkept({asked:?}) of {stored:?} kept {kept}"
                        );
                    }
                    assert_eq!(
                        t.is_plain_armed_timeout(),
                        stored == State::Armed && !kept && !repeat && plain
                    );
                    assert_eq!(
                        t.is_plain_refed_running_timeout(),
                        stored == State::Running && refed && plain && !kept && !repeat
                    );
                    assert_eq!(
                        t.is_plain_refed_armed_timeout(),
                        stored == State::Armed && refed && plain && !kept && !repeat
                    );
                    if stored.is_live() {
                        let mut d =
                            Timer::new(3, ThinFn::new(|_: &mut EventLoop| Ok(())), repeat, 0);
                        d.meta = t.meta;
                        for to in [
                            State::Fired,
                            State::FiredCleared,
                            State::Cleared,
                            State::RunningCleared,
                        ] {
                            let mut e =
                                Timer::new(3, ThinFn::new(|_: &mut EventLoop| Ok(())), repeat, 0);
                            e.meta = d.meta;
                            assert_eq!(e.destroy(to), refed);
                            assert_eq!(e.state(), to);
                            check(&e);
                        }
                    }
                }
                t.set_state(State::Armed);
                t.run_unlinked(payload);
                check(&t);
                assert_eq!((t.state(), t.msecs()), (State::Running, payload));
                assert_eq!(
                    (t.refed(), t.repeat(), t.plain(), t.kept()),
                    (refed, repeat, plain, kept)
                );
                assert_eq!(t.is_unkept(State::Running), !kept);
                assert!(!t.is_plain_armed_timeout());
                assert_eq!(
                    t.is_plain_refed_running_timeout(),
                    refed && plain && !kept && !repeat
                );
            }
        }
    }
}
