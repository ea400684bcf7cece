//! Timeout storage: the duration map, the lists, the heap of lists, the
//! ref count, and the one function that keeps the native timer in line
//! with them (see the [parent module](super) for the picture).
//!
//! Ground rules:
//! - **One time base.** Every stored time (a timer's start, a list's
//!   expiry) is loop time: the loop's cached milliseconds of its clock,
//!   which is also the time the crate shows ([`EventLoop::now`],
//!   `time::Instant`). Node's JavaScript times are loop time minus
//!   `timer_base` (R1.2); a new clock starts at 0, where Node's base is
//!   the loop time at start-up, and the rules only add and compare times,
//!   so they hold with either.
//! - **The native timer follows the heap's root.** Only
//!   [`EventLoop::sync_native`] arms it and only [`EventLoop::sync_ref`]
//!   refs or unrefs it; the expiry it is armed for is kept by the loop layer
//!   alone (it is Node's `nextExpiry`, R2.6).
//! - **The handle is refed exactly while `ref_count > 0`.** Node lets the
//!   handle's ref lag behind the count inside `processTimers` and fixes it
//!   from the return value (R5.2 step 4, R6.2); nothing can observe the
//!   difference between phases, so here the two never disagree.
//! - **Storage that empties is given back by the loop, not by the
//!   operation that emptied it.** Freeing a large store unmaps its pages,
//!   milliseconds for a million timers; a `clear_timeout` or a timer's
//!   firing only notes that it emptied, and the loop gives the memory back
//!   between callbacks ([`Timers::release_emptied`]) once it has stayed
//!   empty for a whole iteration, or at once when the loop is idle (about
//!   to wait with no deadline, or done).
#![forbid(unsafe_code)]

use super::EventLoop;
use super::coerce::NATIVE_MAX_MS;
use super::timeout::{State, Timer};
use crate::collections::arena::{Arena, Emptied};
use crate::collections::durations::{DurationMap, Lookup, SlotId};
use crate::collections::list::{Links, List};
use crate::collections::queue::PriorityQueue;
use crate::uv;

/// Storage larger than this many entries is released when it empties (by
/// the loop, between callbacks, once it stayed empty for an iteration:
/// [`Timers::release_emptied`]).
pub(super) const SHRINK_ABOVE: usize = 4096;

pub(super) struct Timers {
    pub(super) slab: Arena<Timer, Timer>,
    /// Each timer's list links, by slab index (apart from the timers, so
    /// appending to a list touches its tail's links in this dense array,
    /// not the tail timer: the cache miss of a random-duration insert).
    pub(super) links: Vec<Links>,
    /// Duration -> its list, in one 8-byte slot (Node's `timerListMap`
    /// and its `TimersList`s): appending to a random duration's list reads
    /// one line after the page directory, and a linked timer reaches its
    /// list's timers by the slot's id (`Timer::list`), its duration by
    /// where the slot is ([`DurationMap::msecs`]). A list is known by its
    /// slot id everywhere, the heap of lists included; its key there,
    /// `(expiry, id)`, is kept by the heap alone, and the list id (unique
    /// among the lists there are) tells a list from a later one in the
    /// same slot.
    pub(super) map: DurationMap,
    /// The duration last appended to and its slot in `map` (duration 0,
    /// which no timer has, when none is remembered): a program's timers
    /// mostly share a few durations (an idle timeout per connection, a
    /// sleep in a loop), and an append to the same duration as the last
    /// one skips the map's lookup. Forgotten whenever a list is removed
    /// (the only time a mapped slot changes).
    last: (u64, SlotId),
    /// The lists by `(expiry, list id)`; a list's heap id is its slot id.
    pub(super) queue: PriorityQueue,
    /// Lists removed so far (wrapping): a pass running a list asks whether
    /// it is still there only after this moved.
    pub(super) list_removals: u64,
    /// At the end of time, how many more of the running list's timers
    /// that R5.3 calls not due may run in its run: the ones it held when
    /// the run began ([`take_end_turn`](Self::take_end_turn)). Zero
    /// elsewhere, set at every list's run.
    pub(super) end_budget: usize,
    /// `timerListId`, bumped on list creation and on every reschedule: a
    /// list's tie word in the heap. Node's is a float that never runs
    /// out; this one is 32 bits, to sit in the heap entry's padding, and
    /// when it would reach [`NO_LIST_ID`] the lists are renumbered
    /// ([`renumber_lists`](Self::renumber_lists)), in their order.
    next_list_id: u32,
    /// The list the timers pass is running (its slot) and its id when the
    /// pass took it, to tell it from a later list in the same slot
    /// ([`holds_running`](Self::holds_running)). Kept here, not by the
    /// pass, so that a renumbering during the pass renumbers it too.
    running: (SlotId, u32),
    /// `timeoutInfo[0]`: live, refed timeouts.
    ref_count: usize,
    pub(super) native: uv::Handle,
    /// When the native timer is due (loop time), 0 while it is stopped:
    /// what `uv.timer_due(native)` answers once [`native_pending`] is
    /// applied, kept here so that a new list asks one field, not the
    /// handle table (its lookup, its generation and kind tests). The
    /// timer is armed in one place, [`EventLoop::arm_native`], which sets
    /// this; it stops only before the timers pass
    /// ([`EventLoop::run_timers`]: libuv stops it before calling the
    /// pass, [`EventLoop::resume_timers`] before resuming one), which
    /// clears this first. [`EventLoop::sync_native`] checks the copy
    /// against the handle in debug builds. No due time is 0: a list is due
    /// at least 1 ms after its start, and the timer is armed for a list's
    /// expiry or later. One word, not an `Option`: with 16 bytes here the
    /// compiler laid the loop's fields out anew, and
    /// `timers-cancel-unpooled-end` ran at 0.94 of its speed.
    ///
    /// [`native_pending`]: Self::native_pending
    pub(super) native_due: u64,
    /// `native_due` is not yet the handle's: [`EventLoop::arm_native`]
    /// set it, and [`EventLoop::apply_native`] starts the handle for it
    /// before the loop next reads its timers (libuv's timers loop reads
    /// its heap again after every timer callback: an arm made in the
    /// pass's callback scope may be due in that same phase), its poll
    /// timeout or its liveness
    /// ([`Host::sync_handles`](crate::uv::Host::sync_handles)), the only
    /// places the handle's due time is observable. Node starts
    /// its timer on every list due earlier than the last (`scheduleTimer`);
    /// a program that sets ever shorter timeouts re-armed the handle on
    /// each (its heap entry re-keyed: 56 instructions), where now it is
    /// started once per turn of the loop.
    pub(super) native_pending: bool,
    /// The slot of the timer whose callback is running (Node's `this`),
    /// or [`NO_TIMER`]. Its index only: the slot is live while the
    /// callback runs, so its generation is read when asked
    /// ([`EventLoop::current_timeout`]), and the loop is this one (one
    /// store to set, not a key built from two words).
    ///
    /// Reset lazily: a plain timeout's callback leaves it set, and it is
    /// reset before anything else that could ask for it runs: ticks and
    /// microtasks, the end of a list's run (and so any failure's report),
    /// another kind of timer's callback, a deferred operation's panic.
    /// Between a plain callback and the next, only the loop's own code
    /// runs (a dropped closure's `Drop` cannot reach the loop).
    pub(super) current: usize,
    /// Whether and when the timers' storage (`slab`, `links`) and the
    /// lists' (`map`, `queue`) emptied
    /// ([`release_emptied`](Self::release_emptied)).
    pub(super) timers_emptied: Emptied,
    pub(super) lists_emptied: Emptied,
    /// A timers pass stopped by an unhandled failure.
    pub(super) interrupted: bool,
}

/// A list id no list has: the list ids are renumbered before the counter
/// reaches it ([`Timers::next_list_id`]).
pub(super) const NO_LIST_ID: u32 = u32::MAX;

/// [`Timers::current`] when no timer callback is running.
pub(super) const NO_TIMER: usize = usize::MAX;

/// How [`EventLoop::sync_native`] arms the native timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arm {
    /// A list due at this expiry was created (Node's `insert`, R3.3): armed
    /// for it if that is earlier than what the timer is armed for, or the
    /// timer is not armed (inside a timers pass it never is: libuv stopped
    /// it). Not the root's expiry: an overdue root waits for the loop time
    /// to move on (R6.3), a new list does not change that.
    IfEarlier(u64),
    /// A timers pass ended (RunTimers, R6.2): armed for the root's expiry,
    /// at least 1 ms after the loop time (so an overdue list waits for the
    /// loop time to move, R6.3). With no list it is left as it is.
    AfterPass,
    /// An unhandled failure interrupted a pass: armed for the root's
    /// expiry, however overdue, so the next run resumes at once.
    Resume,
}

impl Timers {
    pub(super) fn new(native: uv::Handle) -> Self {
        Timers {
            slab: Arena::default(),
            links: Vec::new(),
            map: DurationMap::default(),
            last: (0, 0),
            queue: PriorityQueue::new(),
            list_removals: 0,
            end_budget: 0,
            next_list_id: 0,
            running: (0, NO_LIST_ID),
            ref_count: 0,
            native,
            native_due: 0,
            native_pending: false,
            current: NO_TIMER,
            timers_emptied: Emptied::default(),
            lists_emptied: Emptied::default(),
            interrupted: false,
        }
    }

    pub(super) fn ref_count(&self) -> usize {
        self.ref_count
    }

    /// Takes one timer off the ref count; returns whether that was the
    /// last, when the caller must unref the native handle
    /// ([`EventLoop::sync_ref`], as [`EventLoop::count_ref`] does).
    #[inline(always)]
    #[must_use = "at zero the native handle must be unrefed (sync_ref)"]
    pub(super) fn uncount_ref(&mut self) -> bool {
        self.ref_count -= 1;
        self.ref_count == 0
    }

    /// Unlinks a timer from the list it is in, if any; returns that
    /// list's slot if it was linked. Its duration, read from the list,
    /// is back in the timer ([`Timer::set_unlinked`]).
    pub(super) fn unlink(&mut self, key: usize) -> Option<SlotId> {
        if !self.links[key].is_linked() {
            return None;
        }
        let timer = &mut self.slab[key];
        let slot = timer.list();
        let msecs = self.map.msecs(slot);
        self.map
            .slot_mut(slot)
            .list
            .remove(&mut self.links[..], key);
        timer.set_unlinked(msecs);
        Some(slot)
    }

    /// Links for a timer just stored at `key`, which its list then writes
    /// ([`List::append_fresh`](crate::collections::list::List::append_fresh)).
    /// A free slot's links mean nothing (a cleared timer's are not reset
    /// when it is freed), but they are there: only a slot beyond the
    /// array's end needs any work.
    #[inline]
    pub(super) fn reset_links(&mut self, key: usize) {
        if key == self.links.len() {
            // The slab grows one slot at a time, at its end.
            self.links.push(Links::default());
        } else if key > self.links.len() {
            self.grow_links(key);
        }
    }

    #[cold]
    fn grow_links(&mut self, key: usize) {
        self.links.resize(key + 1, Links::default());
    }

    /// Frees an unlinked timer's storage; its handle is stale from now on.
    /// A [plain](Timer::plain) timer is forgotten where it lies, unread;
    /// another is taken out and dropped, callback and all.
    #[inline(always)]
    pub(super) fn free(&mut self, key: usize) {
        debug_assert!(!self.links[key].is_linked(), "freeing a linked timer");
        let timer = &self.slab[key];
        if timer.plain() {
            timer.cb.debug_assert_plain();
            self.forget(key);
        } else {
            self.free_dropping(key);
        }
    }

    /// [`free`](Self::free) of a timer that is not plain: out of line, as
    /// its callback's drop is a call anyway.
    #[inline(never)]
    pub(super) fn free_dropping(&mut self, key: usize) {
        drop(self.slab.remove_at(key));
    }

    /// Frees an unlinked timer whose callback was taken out
    /// (none is left, whose drop does nothing): forgotten
    /// where it lies, unread. A fired timeout's pass frees it so.
    #[inline]
    pub(super) fn free_taken(&mut self, key: usize) {
        debug_assert!(!self.links[key].is_linked(), "freeing a linked timer");
        debug_assert!(self.slab[key].cb.is_none(), "a taken callback");
        self.forget(key);
    }

    /// Vacates a timer's slot without reading it
    /// ([`Arena::forget_at`]), for a timer whose drop would do nothing
    /// (the callers know why), linked or not: the free paths' one
    /// forgetting step.
    #[inline(always)]
    pub(super) fn forget(&mut self, key: usize) {
        self.slab.forget_at(key);
    }

    /// Whether the timers' arena is empty and holds enough memory to give
    /// back ([`release_emptied`](Self::release_emptied)): asked by the
    /// loop between callbacks, so that freeing a timer (a cancel, a fired
    /// timeout) asks nothing. It asked whether the arena had emptied, a
    /// branch whose rare side LLVM laid out on the common path's way: a
    /// taken branch more, which the cancel felt (`docs/performance.md`,
    /// round 24).
    #[inline(always)]
    pub(super) fn timers_emptied_large(&self) -> bool {
        self.slab.is_empty() && self.slab.capacity() > SHRINK_ABOVE
    }

    /// Gives back the memory of large storage that emptied and stayed
    /// empty for a whole loop iteration (or is empty when the loop is
    /// `idle`: about to wait with no deadline, or done): the loop calls it
    /// between callbacks
    /// ([`Host::housekeep`](crate::uv::Host::housekeep)), never the
    /// operation that emptied it. Unmapping a million timers' storage takes
    /// milliseconds, which a `clear_timeout` should not; and storage that
    /// fills again before then is kept ([`Emptied`]).
    #[cold]
    pub(super) fn release_emptied(&mut self, idle: bool) {
        if self.timers_emptied_large() {
            self.timers_emptied.note();
        }
        if self.timers_emptied.due(&self.slab, idle) {
            self.slab.shrink_if_empty(SHRINK_ABOVE);
            release_if_large(&mut self.links);
        }
        if self.lists_emptied.due(&self.map, idle) {
            self.map.shrink_if_empty(SHRINK_ABOVE);
            if self.queue.capacity() > SHRINK_ABOVE {
                self.queue = PriorityQueue::new();
            }
        }
    }

    /// Whether a timer that started too recently to be due by R5.3 runs
    /// anyway: only at the end of time (a saturated virtual clock, where
    /// no time can pass, so every listed timer counts as due), and only
    /// for the timers its list held when its run began, not the ones
    /// appended after them (an interval re-armed by this run, due again at
    /// once there), which wait for the next pass. Without the count such
    /// an interval ran without end in one pass.
    /// (A function of the field, not a method, so that the pass can call
    /// it while it holds a timer of the same `Timers`.)
    #[inline(always)]
    pub(super) fn take_end_turn(end_budget: &mut usize) -> bool {
        if *end_budget == 0 {
            return false;
        }
        *end_budget -= 1;
        true
    }

    /// How many timers of the list in `slot` started at `from` or later.
    /// A walk, for the end of time only.
    #[cold]
    pub(super) fn count_started_from(&self, slot: SlotId, from: u64) -> usize {
        let mut n = 0;
        let mut at = self.map.slot(slot).list.peek();
        while let Some(key) = at {
            if self.slab[key].start >= from {
                n += 1;
            }
            at = List::next_of(&self.links, key);
        }
        n
    }

    /// A new list id: lists created or rescheduled later lose ties (R2.3).
    #[inline(always)]
    pub(super) fn next_list_id(&mut self) -> u32 {
        if self.next_list_id == NO_LIST_ID {
            self.renumber_lists();
        }
        let id = self.next_list_id;
        self.next_list_id += 1;
        id
    }

    /// Gives the lists the ids `0..n` in their heap order, and the next
    /// one `n`: the counter had run out of 32 bits. Ids only break ties
    /// between lists due at the same time, so the order of every pair of
    /// lists is what it was, and lists made later still lose ties. The
    /// list the timers pass is running gets its new id, or, if it is gone,
    /// [`NO_LIST_ID`], which no list has.
    #[cold]
    #[inline(never)]
    fn renumber_lists(&mut self) {
        let held = self.holds_running();
        self.next_list_id = self.queue.renumber();
        self.running.1 = if held {
            self.list_id(self.running.0)
        } else {
            NO_LIST_ID
        };
    }

    /// Drops the (empty) list of `msecs` in `slot`, the heap's root, from
    /// the heap and the map: the timers pass's, once a list has run out.
    /// O(log n) for the heap, O(1) for the map (an index for durations
    /// below 70 min).
    pub(super) fn remove_list(&mut self, slot: SlotId, msecs: u64) {
        let removed = self.queue.remove(slot as usize);
        debug_assert!(removed.is_some(), "list {slot} was not in the heap");
        self.map.remove_at_of(slot, msecs);
        self.list_unmapped();
    }

    /// [`remove_list`](Self::remove_list) for a cancel that empties its
    /// list, inlined (an unpooled cancel, 135 → 128 instructions; the
    /// timers pass keeps the call, whose inlining cost its fired timeouts
    /// 3 instructions each). The list's heap entry is discarded, not
    /// removed: O(1) amortized, where removing sifts a hole down the heap
    /// (see [`PriorityQueue::discard_id`]). A run of cancels of the earliest
    /// lists, each the root, is a run of removals of the root otherwise.
    #[inline(always)]
    pub(super) fn discard_list(&mut self, slot: SlotId) {
        let removed = self.queue.discard_id(slot as usize);
        self.forget_list(slot, removed);
    }

    /// The rest of dropping a list whose heap entry is gone, as
    /// [`forget_list`](Self::forget_list) does, where it makes no call:
    /// the list's duration is a direct one. Returns false, having changed
    /// nothing, for a far one.
    #[inline(always)]
    pub(super) fn forget_direct_list(&mut self, slot: SlotId) -> bool {
        if !self.map.remove_direct_at(slot) {
            return false;
        }
        self.list_unmapped();
        true
    }

    /// The rest of dropping a list, once its heap entry is gone.
    #[inline(always)]
    pub(super) fn forget_list(&mut self, slot: SlotId, removed: bool) {
        debug_assert!(removed, "list {slot} was not in the heap");
        self.map.remove_at(slot);
        self.list_unmapped();
    }

    /// What follows a list's leaving the map, either way: the removal
    /// counted (the pass asks after it), the memo forgotten (whatever list
    /// it was: one store, cheaper than asking whether it named this one),
    /// an emptied map noted.
    #[inline(always)]
    fn list_unmapped(&mut self) {
        self.list_removals = self.list_removals.wrapping_add(1);
        self.last.0 = 0;
        if self.map.is_empty() {
            self.lists_emptied.note();
        }
    }

    /// The id of the list in `slot` (which holds one).
    fn list_id(&self, slot: SlotId) -> u32 {
        let id = self.queue.tie_of(slot as usize);
        debug_assert!(id.is_some(), "no list in slot {slot}");
        id.unwrap_or(NO_LIST_ID)
    }

    /// Notes that the timers pass is about to run the list in `slot`
    /// ([`holds_running`](Self::holds_running) asks about it).
    #[inline(always)]
    pub(super) fn start_running(&mut self, slot: SlotId) {
        self.running = (slot, self.list_id(slot));
    }

    /// Whether the list the timers pass runs is still in its slot: not
    /// removed (and maybe replaced by a later list of its duration, which
    /// Node's `list === timerListMap[msecs]` tells apart by identity).
    #[inline]
    pub(super) fn holds_running(&self) -> bool {
        let (slot, id) = self.running;
        self.queue.tie_of(slot as usize) == Some(id)
    }

    /// Sets the next list id: for tests of the renumbering.
    #[cfg(test)]
    pub(super) fn set_next_list_id(&mut self, id: u32) {
        self.next_list_id = id;
    }
}

/// Gives an array's memory back if it grew past [`SHRINK_ABOVE`] (the
/// caller knows nothing in it is live).
fn release_if_large<T>(v: &mut Vec<T>) {
    if v.capacity() > SHRINK_ABOVE {
        *v = Vec::new();
    }
}

impl EventLoop {
    /// `getLibuvNow()` (R1.3): refreshes the loop time, then reads it.
    #[inline]
    pub(super) fn libuv_now(&mut self) -> u64 {
        self.uv.update_time();
        self.uv.now()
    }

    /// Node's `insert(item, msecs, start)` (R3.3): list the timer under its
    /// truncated duration, creating (and scheduling) the list if needed.
    /// The timer moves to the newest end of its list.
    pub(super) fn insert(&mut self, key: usize, start: u64) {
        // Timers that futures created without the loop at hand go first.
        self.flush_deferred();
        let tm = &mut self.timers;
        let timer = &mut tm.slab[key];
        timer.start = start;
        if tm.links[key].is_linked() {
            // A linked timer's list is the map's list for its duration (a
            // list leaves the map only when empty): it moves to that
            // list's end, with no lookup (a refresh of a pending timer).
            let slot = timer.list();
            debug_assert_eq!(tm.map.get(tm.map.msecs(slot)), Some(slot));
            let list = &mut tm.map.slot_mut(slot).list;
            list.move_to_back(&mut tm.links[..], key);
        } else {
            self.append(key, start);
        }
    }

    /// The slot of the list for `msecs`, the list created (its first
    /// timer started at `start`) if there is none: where a timer of that
    /// duration is appended next.
    #[inline(always)]
    pub(super) fn list_for(&mut self, msecs: u64, start: u64) -> SlotId {
        let tm = &mut self.timers;
        if tm.last.0 == msecs {
            debug_assert_eq!(tm.map.get(msecs), Some(tm.last.1));
            return tm.last.1;
        }
        // One lookup: a missing duration's slot, found vacant, is mapped
        // without another.
        let slot = match tm.map.lookup(msecs) {
            Lookup::Mapped(slot) => slot,
            at => self.new_list(msecs, start, at),
        };
        self.timers.last = (msecs, slot);
        slot
    }

    /// Appends the unlinked timer `key` to its duration's list.
    #[inline(always)]
    fn append(&mut self, key: usize, start: u64) {
        let msecs = self.timers.slab[key].msecs();
        let slot = self.list_for(msecs, start);
        let tm = &mut self.timers;
        tm.map.slot_mut(slot).list.append(&mut tm.links[..], key);
        tm.slab[key].set_linked(slot);
    }

    /// Creates and schedules the list for `msecs`, its first timer started
    /// at `start`, where the map's [`lookup`](DurationMap::lookup) found
    /// `at` (not mapped); returns its slot in the map.
    #[inline(never)]
    fn new_list(&mut self, msecs: u64, start: u64, at: Lookup) -> SlotId {
        let tm = &mut self.timers;
        let expiry = start.saturating_add(msecs);
        let id = tm.next_list_id();
        let slot = match at {
            Lookup::Vacant(slot) => tm.map.map_vacant(slot, msecs),
            at => {
                debug_assert_eq!(at, Lookup::Absent, "{msecs} is mapped already");
                tm.map.insert_slow(msecs)
            }
        };
        tm.queue.insert(slot as usize, (expiry, id));
        self.sync_native(Arm::IfEarlier(expiry));
        slot
    }

    /// The one destroy step (Node's `_destroyed = true`) for the timer at
    /// `key`: [`Timer::destroy`], then [`destroyed`](Self::destroyed).
    #[inline]
    pub(super) fn destroy(&mut self, key: usize, to: State) {
        let refed = self.timers.slab[key].destroy(to);
        self.destroyed(refed);
    }

    /// The loop's half of the destroy step, for a timer that
    /// [`Timer::destroy`] destroyed (`refed` is what it returned): a
    /// destroyed refed timer stops counting toward the ref count. Paths
    /// that hold the timer already call the two halves themselves, so the
    /// timer is not looked up again.
    #[inline(always)]
    pub(super) fn destroyed(&mut self, refed: bool) {
        if refed {
            self.count_ref(false);
        }
    }

    /// Adds or removes one live, refed timeout (Node's `incRefCount` /
    /// `decRefCount`, R2.5).
    #[inline]
    pub(super) fn count_ref(&mut self, up: bool) {
        let tm = &mut self.timers;
        // Whether the count crossed zero: it went 0 -> 1 or 1 -> 0.
        let crossed = if up {
            tm.ref_count += 1;
            tm.ref_count == 1
        } else {
            tm.ref_count -= 1;
            tm.ref_count == 0
        };
        if crossed {
            self.sync_ref();
        }
    }

    /// Refs the native timer exactly while refed timeouts live (R2.5,
    /// R6.4): the one place its ref state changes.
    ///
    /// Cold: the count crosses zero once a busy period, not once a timer.
    /// Without the mark the compiler laid this call out on a fired
    /// timer's straight line, and the common path jumped around it (one
    /// more jump taken and one more instruction a fired timeout; with the
    /// mark the timeout workloads ran 1.08–1.12× in builds with every
    /// function aligned: `docs/performance.md`, round 30).
    #[cold]
    pub(super) fn sync_ref(&mut self) {
        let native = self.timers.native;
        let _ = if self.timers.ref_count > 0 {
            self.uv.ref_handle(native)
        } else {
            self.uv.unref_handle(native)
        };
    }

    /// Brings the native timer in line with the heap's root: armed as `arm`
    /// says. The one place the native timer is armed. (Its ref is
    /// [`count_ref`](Self::count_ref)'s: arming does not change it.)
    pub(super) fn sync_native(&mut self, arm: Arm) {
        let native = self.timers.native;
        debug_assert!(
            self.timers.native_pending
                || Some(self.timers.native_due).filter(|&due| due != 0)
                    == self.uv.timer_due(native),
            "the native timer's due time, kept by the timers"
        );
        let due = match arm {
            // A list was just inserted, so the heap is not empty: its root
            // is not needed, only what the native timer is armed for.
            Arm::IfEarlier(new) => {
                let due = self.timers.native_due;
                (due == 0 || new < due).then_some(new)
            }
            Arm::AfterPass => self
                .timers
                .queue
                .peek()
                .map(|(_, (expiry, _))| expiry.max(self.uv.now().saturating_add(1))),
            Arm::Resume => self.timers.queue.peek().map(|(_, (expiry, _))| expiry),
        };
        if let Some(due) = due {
            self.arm_native(due);
        }
        // Arming leaves the ref as it was; the count's crossings set it.
        debug_assert_eq!(
            self.uv.has_ref(native).ok(),
            Some(self.timers.ref_count > 0),
            "the native timer's ref follows the ref count"
        );
    }

    /// Arms the native timer for loop time `due` (its ref unchanged): the
    /// due time libuv's `uv_timer_start` would give it now, started on the
    /// handle by [`apply_native`](Self::apply_native) before the loop
    /// reads it.
    fn arm_native(&mut self, due: u64) {
        // The native timer counts from the cached loop time. On a real
        // clock it never reaches further than NATIVE_MAX_MS: a long timer
        // wakes the loop early, finds nothing due and re-arms (.NET's
        // EnsureTimerFiresBy). A virtual clock has no OS timer to
        // distrust: it jumps straight there.
        let mut wait = due.saturating_sub(self.uv.now());
        if wait > NATIVE_MAX_MS && !self.uv.clock().is_virtual() {
            wait = NATIVE_MAX_MS;
        }
        // libuv's due time: the cached loop time plus the wait.
        self.timers.native_due = self.uv.now().saturating_add(wait);
        self.timers.native_pending = true;
        debug_assert_ne!(self.timers.native_due, 0, "armed for time 0");
    }

    /// Starts the native timer for the due time [`arm_native`] chose, if
    /// it has not been: [`Host::sync_handles`](crate::uv::Host::sync_handles),
    /// before the loop reads its timers, poll timeout or liveness.
    ///
    /// [`arm_native`]: Self::arm_native
    #[inline]
    pub(super) fn apply_native(&mut self) {
        if self.timers.native_pending {
            self.timers.native_pending = false;
            let tm = &mut self.timers;
            if self.uv.timer_start_at(tm.native, tm.native_due, 0).is_err() {
                // Only a closing handle refuses (the loop is going away).
                tm.native_due = 0;
            }
        }
    }

    /// What [`is_alive`](Self::is_alive) adds to the loop's count of
    /// active, refed handles for a native timer armed but not yet started
    /// ([`apply_native`](Self::apply_native)): 1 if that start will make
    /// it active and it is refed.
    pub(super) fn native_delta(&self) -> isize {
        let tm = &self.timers;
        let starts = tm.native_pending && self.uv.is_active(tm.native) == Ok(false);
        isize::from(starts && tm.ref_count > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    type Log = Rc<RefCell<Vec<String>>>;

    fn logger(log: &Log, name: &'static str) -> impl FnMut(&mut EventLoop) + 'static {
        let log = log.clone();
        move |lp: &mut EventLoop| log.borrow_mut().push(format!("{name}@{}", lp.now()))
    }

    /// The poller failing (not `EINTR`) halts the run with
    /// `Error::Poll`, where every poll failing at once spun for ever with
    /// no deadline to end it; what was queued stays for the next run.
    #[test]
    fn a_failing_poller_ends_the_run_with_its_error() {
        // A virtual clock (Miri runs this; the system clock's counter is
        // inline assembly), with nothing to time: a poll with no deadline
        // asks the kernel.
        let mut lp = EventLoop::with_virtual_clock();
        let remote = lp.remote(); // refed: the poll phase would wait for ever
        let log: Log = Rc::default();
        lp.uv.fail_next_poll(std::io::ErrorKind::InvalidInput);
        lp.set_immediate(mark(&log, "immediate"));
        // The first iteration's poll phase need not wait (an immediate is
        // queued): no syscall. The second's waits, and fails.
        let err = lp.run().unwrap_err();
        assert!(
            matches!(&err, crate::Error::Poll(e) if e.kind() == std::io::ErrorKind::InvalidInput)
        );
        assert!(err.to_string().contains("poller failed"), "{err}");
        // The OS error is in the message, and has no source of its own:
        // nothing below it in the chain.
        assert!(std::error::Error::source(&err).is_none());
        assert_eq!(*log.borrow(), ["immediate"]);
        // The next run polls again (successfully) and goes on: the
        // remote's close arrives, and the loop ends.
        drop(remote);
        lp.set_timeout(1, mark(&log, "timeout"));
        lp.run().unwrap();
        assert_eq!(*log.borrow(), ["immediate", "timeout"]);
    }

    /// A callback that logs `name` alone.
    fn mark(log: &Log, name: &'static str) -> impl FnMut(&mut EventLoop) + 'static {
        let log = log.clone();
        move |_: &mut EventLoop| log.borrow_mut().push(name.to_string())
    }

    /// An arm the timers layer has not given the handle yet
    /// (`Timers::native_pending`) is given before the loop reads its
    /// timers: a timeout set by an immediate that then blocks past the
    /// timeout's due time fires in the timers phase that ends that turn,
    /// before the next turn's immediate, as Node orders them (B,
    /// immediate2, A; checked on node v20). Without the sync before the
    /// timers phase, the handle still said 100 ms there, and B ran after
    /// immediate2. And `is_alive` counts a first arm not yet applied.
    #[test]
    fn a_lazily_armed_timer_is_started_before_the_timers_are_read() {
        let log = Log::default();
        let mut lp = EventLoop::with_virtual_clock();
        lp.set_timeout(100, mark(&log, "A"));
        assert!(lp.timers.native_pending, "armed lazily");
        assert!(lp.is_alive(), "a first arm not applied yet counts");
        let l = log.clone();
        lp.set_immediate(move |lp: &mut EventLoop| {
            lp.set_timeout(1, mark(&l, "B"));
            lp.block(5);
            lp.set_immediate(mark(&l, "immediate2"));
        });
        lp.run().unwrap();
        assert_eq!(*log.borrow(), ["B", "immediate2", "A"]);
        assert!(!lp.is_alive());
    }

    /// An arm made after a pass, in its callback scope, is given the handle
    /// before libuv's timers loop reads its heap again. A microtask queued
    /// by the last timer sets a 5 ms timeout (the native timer due at 30),
    /// blocks 10 ms and sets another timeout, whose clock read moves the
    /// loop's time to 35: the native timer is due, and libuv runs it again
    /// in the same timers phase, so t0 runs before the check phase's
    /// immediate (a, t0, imm, as on node v20). Without the sync after each
    /// timer callback the heap was empty there, and imm ran first: the
    /// difference the generated script seed 222000010 found.
    #[test]
    fn an_arm_made_in_the_pass_scope_runs_in_the_same_timers_phase() {
        let log = Log::default();
        let mut lp = EventLoop::with_virtual_clock();
        let l = log.clone();
        lp.set_timeout(25, move |lp: &mut EventLoop| {
            l.borrow_mut().push("a".to_string());
            let l = l.clone();
            lp.queue_microtask(move |lp: &mut EventLoop| {
                lp.set_timeout(5, mark(&l, "t0"));
                lp.block(10);
                lp.set_timeout(100, mark(&l, "t1"));
                lp.set_immediate(mark(&l, "imm"));
            });
        });
        lp.run().unwrap();
        assert_eq!(*log.borrow(), ["a", "t0", "imm", "t1"]);
    }

    /// The timers' copy of the native timer's due time
    /// (`Timers::native_due`) is what the handle says after everything
    /// that arms or stops it: a first list, an earlier one, a later one, a
    /// pass (libuv stops the timer first), lists made during a pass
    /// (earlier and later than the pass's own), a pass that a failure
    /// interrupted, and the run that resumes it.
    #[test]
    fn the_native_due_time_follows_the_handle() {
        // As the loop reads the handle: after `sync_handles` applied an arm.
        fn same(lp: &mut EventLoop) -> Option<u64> {
            lp.apply_native();
            let due = lp.uv.timer_due(lp.timers.native);
            assert_eq!(Some(lp.timers.native_due).filter(|&d| d != 0), due);
            due
        }
        let mut lp = EventLoop::with_virtual_clock();
        assert_eq!(same(&mut lp), None);
        lp.set_timeout(10, |_| {});
        assert_eq!(same(&mut lp), Some(10));
        lp.set_timeout(5, |lp: &mut EventLoop| {
            assert_eq!(same(lp), None, "stopped during the pass");
            lp.set_timeout(2, |_| {});
            assert_eq!(same(lp), Some(7), "armed by a list made in the pass");
            lp.set_timeout(1, |_| {});
            assert_eq!(same(lp), Some(6));
            lp.set_timeout(30, |_| {});
            assert_eq!(same(lp), Some(6));
        });
        assert_eq!(same(&mut lp), Some(5), "an earlier list");
        lp.set_timeout(20, |_| {});
        assert_eq!(same(&mut lp), Some(5), "a later list");
        lp.set_timeout(6, |_| Err::<(), _>("boom"));
        assert!(lp.run_once().is_ok());
        assert_eq!(same(&mut lp), Some(6), "after the pass, the root");
        assert!(lp.run().is_err(), "the 6 ms timer fails");
        assert_eq!(same(&mut lp), Some(6), "armed to resume the pass");
        lp.run().unwrap();
        assert_eq!(same(&mut lp), None, "nothing left");
        assert_eq!(lp.now(), 35);
    }

    /// List ids are 32 bits, renumbered when they run out: lists due at
    /// the same time still run in the order they were made (R2.3), whether
    /// they were made before the renumbering or after.
    #[test]
    fn lists_due_together_keep_their_order_across_a_renumbering() {
        let mut lp = EventLoop::with_virtual_clock();
        let log = Log::default();
        lp.timers.set_next_list_id(NO_LIST_ID - 4);
        // Due at 20: a list of 20 ms made at 0, of 15 made at 5 (before
        // the ids run out) and of 12 made at 8 (after).
        lp.set_timeout(20, logger(&log, "a"));
        let l = log.clone();
        lp.set_timeout(5, move |lp: &mut EventLoop| {
            lp.set_timeout(15, logger(&l, "b"));
            // Three more lists use up the ids; the last is renumbered.
            for ms in [100, 101, 102] {
                lp.set_timeout(ms, |_: &mut EventLoop| {});
            }
        });
        let l = log.clone();
        lp.set_timeout(8, move |lp: &mut EventLoop| {
            lp.set_timeout(12, logger(&l, "c"));
        });
        lp.run().unwrap();
        assert!(lp.timers.next_list_id < 16, "renumbered");
        assert_eq!(*log.borrow(), ["a@20", "b@20", "c@20"]);
    }

    /// The list a pass runs keeps being told from a later list in its slot
    /// across a renumbering: it is still held if it is still there (with
    /// its new id), and not if it was removed, whatever id its replacement
    /// gets.
    #[test]
    fn the_running_list_is_renumbered_with_the_rest() {
        let mut lp = EventLoop::with_virtual_clock();
        let nothing = |_: &mut EventLoop| {};
        lp.timers.set_next_list_id(NO_LIST_ID - 3);
        let t5 = lp.set_timeout(5, nothing);
        let t10 = lp.set_timeout(10, nothing);
        let t30 = lp.set_timeout(30, nothing);
        let slot = lp.timers.map.get(10).unwrap();
        lp.timers.start_running(slot);
        assert_eq!(lp.timers.running, (slot, NO_LIST_ID - 2));
        // The ids run out at the fourth list: the three are renumbered.
        let t20 = lp.set_timeout(20, nothing);
        assert_eq!(lp.timers.next_list_id, 4);
        assert_eq!(lp.timers.running, (slot, 1), "the second due, second");
        assert!(lp.timers.holds_running());

        // Removed, then replaced in its slot by a list that a renumbering
        // gave the number it had.
        for t in [t5, t10, t30, t20] {
            lp.clear_timeout(t).unwrap();
        }
        lp.timers.set_next_list_id(NO_LIST_ID);
        let t5 = lp.set_timeout(5, nothing);
        let t10 = lp.set_timeout(10, nothing);
        assert_eq!(lp.timers.map.get(10), Some(slot), "the same slot");
        assert_eq!(lp.timers.list_id(slot), 1);
        assert!(!lp.timers.holds_running());
        for t in [t5, t10] {
            lp.clear_timeout(t).unwrap();
        }
    }
}
