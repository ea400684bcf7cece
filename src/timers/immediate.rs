//! Immediates: Node's `Immediate`, `processImmediate` and the C++
//! `CheckImmediate` that runs it from the loop's check phase.
//!
//! Immediates live in one ring, in the order they were set: a `Vec`
//! consumed from its front ([`Ring`]). Each has a position (its sequence
//! number, counted from the loop's first immediate) and a tag drawn from
//! a counter, both in its handle. The check phase takes the ring's whole
//! content as one batch: the positions before `batch_end` are Node's
//! `outstandingQueue`, the ones from it on its `immediateQueue`, so
//! immediates added while the batch runs wait for the next check phase
//! (R9.6, R9.7). A cleared immediate stays in its place, dead (its
//! callback taken), until the batch reaches it, unless it is the newest,
//! which is popped at once: a set-and-clear pair leaves nothing behind.
//! Node keeps two linked lists; here an immediate needs no links and no
//! arena slot, and an entry is 16 bytes: the callback's data word, its
//! table's 32-bit code with the two flags in its low bits, and the tag
//! (32 in an arena with list links until round 16, then 24).
//!
//! The cost of that: positions are the handles' identity, so a dead entry
//! in the middle cannot be squeezed out before the batch passes it. A
//! program that, within one loop iteration, keeps setting an immediate
//! and then clearing an older one while another is pending after it
//! holds 16 bytes per such clear until the next check phase (an arena
//! with links held only the live ones). The check phase drains them all,
//! and a ring that then stays empty for an iteration gives its memory
//! back, as before.
//!
//! Ground rules:
//! - `head <= batch_end <= end`, where `head` is the front entry's
//!   position and `end` the next one to be given; the batch is
//!   `head..batch_end`, the queue `batch_end..end`;
//! - an entry is live exactly while it holds its callback; `count` counts
//!   the live ones (`immediateInfo[kCount]`); a clear leaves no dead
//!   entry at the ring's back after `batch_end`, and none at all if no
//!   live one is left;
//! - a handle names a live immediate only if its position is in the ring
//!   and its tag is that entry's; positions only grow, but the newest
//!   one, popped when cleared, is given again (with a new tag); tags are
//!   32 bits and wrap, so a stale handle could match again only if
//!   exactly a multiple of 2^32 immediates were set while its position
//!   was given again (the arena's generations before had the same
//!   bound);
//! - only the newest entries, at or after `batch_end`, are popped when
//!   cleared, so the batch never loses a position;
//! - the idle handle is started exactly while refed immediates exist, so
//!   the poll phase does not block for them (R9.8), as the loop sees it:
//!   the count changes at once, the handle follows when the loop next
//!   looks ([`Host::sync_handles`](crate::uv::Host::sync_handles)), so a
//!   set-and-clear between two looks never touches it;
//! - a batch that a failure interrupted finishes in the same check phase
//!   if a handler took the failure (R7.3), else when `run` resumes.
#![forbid(unsafe_code)]

use std::num::{NonZeroU32, NonZeroU64};

use super::error::{CallbackError, CallbackKind, CallbackResult, TimerError};
use super::lists::SHRINK_ABOVE;
use super::thin::{OnceSlot, TakenOnce, ThinOnce};
use super::{EventLoop, Flow, Thrown};
use crate::collections::arena::{Emptied, Refills};
use crate::uv;

/// A handle to an immediate: small, `Copy`, checked by its tag. It goes
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
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Immediate {
    /// Its position in the ring.
    seq: u64,
    /// Its loop's id (high half) and its entry's tag (low half), in one
    /// word: two scalars, a handle is passed and returned in two registers
    /// (three fields went through memory, a store and a load per call),
    /// and the loop id's zero stays a niche for `Option<Immediate>`.
    loop_tag: NonZeroU64,
}

impl Immediate {
    // Inlined into `set_immediate`, which is generic and so built in the
    // caller's crate: without it, a call per immediate (callgrind).
    #[inline]
    fn new(seq: u64, tag: u32, loop_id: NonZeroU32) -> Immediate {
        let loop_tag = (u64::from(loop_id.get()) << 32) | u64::from(tag);
        Immediate {
            seq,
            loop_tag: match NonZeroU64::new(loop_tag) {
                Some(w) => w,
                None => unreachable!("the loop id is not zero"),
            },
        }
    }

    /// Its entry's tag.
    fn tag(self) -> u32 {
        self.loop_tag.get() as u32
    }

    /// Its loop's id.
    fn loop_id(self) -> u32 {
        (self.loop_tag.get() >> 32) as u32
    }
}

impl std::fmt::Debug for Immediate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Immediate")
            .field("seq", &self.seq)
            .field("tag", &self.tag())
            .field("loop_id", &self.loop_id())
            .finish()
    }
}

/// One immediate in the ring: 16 bytes, aligned to 8 (so the callback's
/// data word is).
#[repr(C, align(8))]
struct Entry {
    /// The callback while the immediate is live ([`ThinOnce`], split:
    /// inline, no allocation, when it captures at most a word, as most
    /// do), none once cleared or taken to run; and the immediate's refed
    /// and plain flags (dropping the callback does nothing), in its
    /// code's low bits.
    cb: OnceSlot,
    tag: u32,
}

/// The immediates in order: a `Vec` whose front is consumed by moving
/// `start` on, so no access pays for wrapping around. The entry at
/// position `seq` is `entries[seq - base]`; entries before `start` are
/// dead (their callbacks taken). Consumed whole, it is cleared; a push
/// that finds it full drops the consumed prefix instead of growing, if
/// that is at least half of it (immediates that keep setting immediates
/// may never let it empty).
#[derive(Default)]
struct Ring {
    entries: Vec<Entry>,
    start: usize,
    /// The position of `entries[0]`.
    base: u64,
}

impl Ring {
    /// The position of the front entry (the next to run).
    fn head(&self) -> u64 {
        self.base + self.start as u64
    }

    /// The position the next entry pushed gets.
    fn end(&self) -> u64 {
        self.base + self.entries.len() as u64
    }

    fn is_empty(&self) -> bool {
        self.start == self.entries.len()
    }

    /// Entries from the front on, dead ones included.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len() - self.start
    }

    fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    /// The index in `entries` of position `seq`, if it is there.
    #[inline]
    fn index(&self, seq: u64) -> Option<usize> {
        let idx = usize::try_from(seq.wrapping_sub(self.base)).ok()?;
        (idx < self.entries.len()).then_some(idx)
    }

    /// Whether the ring's back entry is dead (for a ring that is not
    /// empty).
    #[inline]
    fn back_dead(&self) -> bool {
        self.entries.last().is_some_and(|e| !e.cb.is_some())
    }

    fn is_full(&self) -> bool {
        self.entries.len() == self.entries.capacity()
    }

    /// Appends an entry to a ring that is [not full](Self::is_full): no
    /// call to grow.
    #[inline(always)]
    fn push_back_within_capacity(&mut self, e: Entry) {
        debug_assert!(!self.is_full(), "pushed without room");
        self.entries.push(e);
    }

    /// Makes room for one more entry, if there is none: drops the consumed
    /// prefix of a full ring (if it is at least half of it), else grows
    /// it.
    #[cold]
    fn make_room(&mut self) {
        if self.is_full() && self.start > 0 {
            self.compact();
        }
        self.entries.reserve(1);
    }

    /// Takes the front entry's callback, with its flags, and moves past it
    /// (the ring must not be empty).
    #[inline]
    fn pop_front(&mut self) -> TakenOnce {
        let out = self.entries[self.start].cb.take();
        self.start += 1;
        if self.start == self.entries.len() {
            self.clear();
        }
        out
    }

    /// Drops every entry (the caller knows none is live): entries have
    /// no drop glue, so this is a store, not a pass over them.
    #[inline]
    fn clear(&mut self) {
        debug_assert!(
            self.entries.iter().all(|e| !e.cb.is_some()),
            "a live entry cleared"
        );
        self.base += self.entries.len() as u64;
        self.entries.clear();
        self.start = 0;
    }

    /// Drops the consumed prefix of a full ring, if it is at least half
    /// of it (then the push that found it full moves at most as many
    /// entries as it gained room for).
    #[cold]
    fn compact(&mut self) {
        if 2 * self.start >= self.entries.len() {
            self.entries.drain(..self.start);
            self.base += self.start as u64;
            self.start = 0;
        }
    }
}

impl Drop for Ring {
    /// Drops the callbacks of the immediates still pending (a loop
    /// dropped with some): an entry has no drop glue ([`OnceSlot`]), so
    /// that a consumed ring is cleared with no pass over it. In place and
    /// in order, and on past one whose drop panics, as the entries' drop
    /// glue did (a second panic aborts, as it would for a `Vec`'s
    /// elements); each is taken out of its entry before it is dropped, so
    /// none is dropped twice.
    fn drop(&mut self) {
        /// Drops the rest if one callback's drop panics.
        struct Rest<'a>(std::slice::IterMut<'a, Entry>);
        impl Drop for Rest<'_> {
            fn drop(&mut self) {
                for e in &mut self.0 {
                    drop(e.cb.take());
                }
            }
        }
        let start = self.start.min(self.entries.len());
        let mut rest = Rest(self.entries[start..].iter_mut());
        for e in rest.0.by_ref() {
            drop(e.cb.take());
        }
    }
}

/// In declared order (`repr(C)`), so that no two counters a
/// `set_immediate` bumps lie side by side: inlined into a loop, LLVM bumped
/// adjacent ones with one wide load and store (`count` and `ref_count` in
/// 16 bytes, or `next_tag` and a `u32` ref count in 8), and that load
/// cannot be forwarded from the narrower stores of the `clear_immediate`
/// just before: a set + clear pair took 20% longer.
#[repr(C)]
pub(super) struct Immediates {
    ring: Ring,
    /// Live immediates (`immediateInfo[kCount]`).
    count: usize,
    /// The first position after the running (or interrupted) batch.
    batch_end: u64,
    /// `immediateInfo[kRefCount]`.
    ref_count: u32,
    /// `immediateInfo[kHasOutstanding]`: a batch started and has not
    /// finished normally.
    has_outstanding: bool,
    /// Whether `idle` is started: `ref_count > 0` as of the last
    /// [`EventLoop::sync_idle`].
    idle_on: bool,
    idle: uv::Handle,
    /// The next entry's tag (wrapping): immediates set so far.
    next_tag: u32,
    /// Whether and when the ring emptied at the end of a check phase
    /// ([`EventLoop::release_emptied_immediates`]).
    pub(super) emptied: Emptied,
}

impl Immediates {
    pub(super) fn new(idle: uv::Handle) -> Self {
        Immediates {
            ring: Ring::default(),
            batch_end: 0,
            count: 0,
            next_tag: 0,
            ref_count: 0,
            has_outstanding: false,
            idle,
            idle_on: false,
            emptied: Emptied::default(),
        }
    }

    /// `immediateInfo[kCount]`: immediates not yet run or cleared.
    pub(super) fn len(&self) -> usize {
        self.count
    }

    /// The index in the ring's entries of the live immediate `i` names
    /// (of this loop).
    #[inline]
    fn index_of(&self, i: Immediate) -> Option<usize> {
        let idx = self.ring.index(i.seq)?;
        let e = &self.ring.entries[idx];
        (e.tag == i.tag() && e.cb.is_some()).then_some(idx)
    }

    /// Moves past the batch's dead entries at the front; returns whether
    /// a live one is left in the batch.
    #[inline]
    fn batch_live(&mut self) -> bool {
        while self.ring.head() < self.batch_end {
            if self.ring.entries[self.ring.start].cb.is_some() {
                return true;
            }
            self.ring.pop_front();
        }
        false
    }

    /// Whether the entry at `idx` (position `seq`) is the ring's newest and
    /// in the queue, not the batch: a clear may pop it.
    #[inline(always)]
    fn newest_queued(&self, idx: usize, seq: u64) -> bool {
        idx + 1 == self.ring.entries.len() && seq >= self.batch_end
    }

    /// The bookkeeping of a clear, once the entry was popped or left dead:
    /// one live immediate fewer, and the ring noted if it emptied, or
    /// tidied if the clear left a dead entry at its back or none live.
    #[inline(always)]
    fn cleared(&mut self) {
        self.count -= 1;
        if self.ring.is_empty() {
            self.emptied.note();
        } else if self.count == 0 || self.ring.back_dead() {
            self.tidy();
        }
    }

    /// After a clear left a dead entry at the back, or no live one: pops
    /// the dead entries at the back (the queue's newest; never the
    /// batch's), and empties a ring left with dead entries only.
    #[cold]
    fn tidy(&mut self) {
        if self.ring.is_empty() {
            return;
        }
        while self.ring.end() > self.batch_end && !self.ring.is_empty() && self.ring.back_dead() {
            self.ring.entries.pop();
        }
        if self.count == 0 && !self.ring.is_empty() {
            self.ring.clear();
            self.batch_end = self.ring.base;
        }
        if self.ring.is_empty() {
            self.emptied.note();
        }
    }
}

impl Refills for Immediates {
    fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }
    fn inserts(&self) -> u32 {
        self.next_tag
    }
}

impl EventLoop {
    /// The index in the ring's entries of the live immediate `i`.
    #[inline]
    fn lookup_immediate(&self, i: Immediate) -> Result<usize, TimerError> {
        if i.loop_id() != self.id.get() {
            return Err(TimerError::ForeignLoop);
        }
        self.immediates.index_of(i).ok_or(TimerError::Stale)
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
        let mut emptied = std::mem::take(&mut im.emptied);
        let due = emptied.due(im, idle);
        im.emptied = emptied;
        if due && im.ring.capacity() > SHRINK_ABOVE {
            // Positions go on from where they were.
            im.ring = Ring {
                entries: Vec::new(),
                start: 0,
                base: im.ring.end(),
            };
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
        // The common case (nothing deferred, room in the ring) makes no
        // call it returns from, so it keeps its values in scratch
        // registers: no saved registers, no frame.
        if self.has_deferred() || self.immediates.ring.is_full() {
            return self.set_immediate_making_room(f);
        }
        self.push_immediate(f)
    }

    /// [`set_immediate`](Self::set_immediate) when operations are deferred
    /// or the ring is full: the deferred ones first (immediates futures
    /// asked for first are queued first), then room for one more.
    #[inline(never)]
    fn set_immediate_making_room<F, R>(&mut self, f: F) -> Immediate
    where
        F: FnOnce(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        self.flush_deferred();
        self.immediates.ring.make_room();
        self.push_immediate(f)
    }

    /// Queues `f` in a ring with room for it.
    #[inline(always)]
    fn push_immediate<F, R>(&mut self, f: F) -> Immediate
    where
        F: FnOnce(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        let (cb, plain) = ThinOnce::callback(f);
        match OnceSlot::near(cb, plain) {
            Ok(cb) => self.push_entry(cb),
            // A closure type of another shared object, whose table is
            // registered: on a path of its own, so that this one makes no
            // call it returns from.
            Err(cb) => self.push_far(cb, plain),
        }
    }

    /// [`push_immediate`](Self::push_immediate) of a callback whose
    /// table needs the registry.
    #[cold]
    #[inline(never)]
    fn push_far(&mut self, cb: ThinOnce, plain: bool) -> Immediate {
        self.push_entry(OnceSlot::new(cb, plain))
    }

    /// Queues a split callback in a ring with room for it.
    #[inline(always)]
    fn push_entry(&mut self, cb: OnceSlot) -> Immediate {
        let im = &mut self.immediates;
        let seq = im.ring.end();
        let tag = im.next_tag;
        im.next_tag = tag.wrapping_add(1);
        im.ring.push_back_within_capacity(Entry { cb, tag });
        im.count += 1;
        self.count_immediate_ref(true);
        Immediate::new(seq, tag, self.id)
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
    #[inline]
    pub fn clear_immediate(&mut self, i: Immediate) -> Result<(), TimerError> {
        let idx = self.lookup_immediate(i)?;
        let im = &mut self.immediates;
        let e = &im.ring.entries[idx];
        if e.cb.plain() && im.newest_queued(idx, i.seq) {
            // The common case, a set-and-clear pair say: the newest
            // immediate, in the queue, whose callback drops nothing. Its
            // entry is popped, unread (an entry has no drop glue: the
            // callback is forgotten, which its plain flag allows), and its
            // position goes back at once.
            // The ref count first and the bookkeeping last: its rare
            // tidying is then the path's one call, with nothing after it.
            if e.cb.refed() {
                self.count_immediate_ref(false);
            }
            let im = &mut self.immediates;
            im.ring.entries.pop();
            im.cleared();
            return Ok(());
        }
        // Last, so that the fast path above makes no call it returns from.
        self.clear_immediate_at(idx, i.seq)
    }

    /// [`clear_immediate`](Self::clear_immediate) of the live immediate
    /// at `idx` (position `seq`) that is not a plain newest one.
    #[inline(never)]
    fn clear_immediate_at(&mut self, idx: usize, seq: u64) -> Result<(), TimerError> {
        let im = &mut self.immediates;
        // The newest, in the queue, gives its position back at once;
        // another is left in place, dead.
        let newest = im.newest_queued(idx, seq);
        let entries = &mut im.ring.entries;
        let cb = entries[idx].cb.take();
        if newest {
            entries.pop();
        }
        im.cleared();
        if cb.refed() {
            self.count_immediate_ref(false);
        }
        // What the callback captured is dropped last, the loop consistent.
        cb.discard();
        Ok(())
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
        let at = self.lookup_immediate(i)?;
        let e = &mut self.immediates.ring.entries[at];
        if e.cb.refed() != on {
            e.cb.set_refed(on);
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
            .is_ok_and(|at| self.immediates.ring.entries[at].cb.refed())
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
        if self.stopping() {
            return;
        }
        if self.immediates.len() == 0 {
            // Nothing to run; dead entries a failed batch left go.
            self.immediates.tidy();
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
        if self.immediates.ring.is_empty() {
            self.immediates.emptied.note();
        }
    }

    /// Finishes an immediate batch that an unhandled failure interrupted.
    pub(super) fn resume_immediates(&mut self) {
        let im = &mut self.immediates;
        if im.has_outstanding {
            if im.batch_live() {
                self.check_immediates();
            } else if im.ring.is_empty() {
                // The batch's rest was all cleared.
                im.emptied.note();
            }
        }
    }

    /// Node's `processImmediate()`.
    fn process_immediate(&mut self) -> Flow {
        let im = &mut self.immediates;
        if !im.batch_live() {
            // After a failure on a batch's last immediate this takes the
            // immediates queued since, in the same check phase, as Node's
            // `kHasOutstanding` re-entry does.
            im.has_outstanding = true;
            im.batch_end = im.ring.end();
        }
        let mut ran = false;
        while self.immediates.batch_live() {
            let seq = self.immediates.ring.head();
            if ran {
                self.run_next_ticks()?;
                // A tick may have cleared the next one: look again (Node
                // then runs the ticks again before the one after it).
                let im = &mut self.immediates;
                if !im.batch_live() || im.ring.head() != seq {
                    continue;
                }
            } else {
                ran = true;
            }
            let im = &mut self.immediates;
            let mut cb = im.ring.pop_front();
            debug_assert!(cb.is_some(), "batch_live found a live front entry");
            im.count -= 1;
            if cb.refed() {
                // Node decrements silently and stops the idle handle when
                // the batch ends (R9.5 step 4); nothing can tell the two
                // apart before the next poll phase, so it stops here.
                self.count_immediate_ref(false);
            }
            let r = self.invoke(CallbackKind::Immediate, &mut |lp| cb.call(lp));
            // Called: spent, nothing to drop.
            cb.spent();
            r.map_err(|c| Thrown::Error(CallbackError::new(CallbackKind::Immediate, c)))?;
        }
        self.immediates.has_outstanding = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An immediate is 16 bytes in the ring: the callback's data word,
    /// its table's code (0 marks a cleared one) with the two flags in its
    /// low bits, then the tag; no links, no arena generation.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn an_immediate_entry_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 16);
        assert_eq!(std::mem::align_of::<Entry>(), 8);
        assert_eq!(std::mem::size_of::<Immediate>(), 16);
    }

    /// A loop dropped with immediates pending drops what they captured,
    /// in order, and on past a capture whose drop panics (as the entries'
    /// drop glue did before they lost it).
    #[test]
    fn pending_captures_are_dropped_with_the_loop_past_a_panicking_one() {
        use std::cell::RefCell;
        use std::rc::Rc;
        struct Noisy(u32, Rc<RefCell<Vec<u32>>>);
        impl Drop for Noisy {
            fn drop(&mut self) {
                self.1.borrow_mut().push(self.0);
                if self.0 == 1 {
                    panic!("a panicking drop");
                }
            }
        }
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut lp = EventLoop::with_virtual_clock();
        let mut handles = Vec::new();
        for n in 0..4 {
            let noisy = Noisy(n, log.clone());
            handles.push(lp.set_immediate(move |_: &mut EventLoop| drop(noisy)));
        }
        // One cleared (dropped now), one dead in the middle.
        lp.clear_immediate(handles[2]).unwrap();
        assert_eq!(*log.borrow(), [2]);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(lp)));
        assert!(r.is_err());
        assert_eq!(*log.borrow(), [2, 0, 1, 3]);
        assert_eq!(Rc::strong_count(&log), 1);
    }

    /// A handle keeps its loop id and tag in one word, whole: every tag
    /// and loop id come back out, and `Debug` shows the three fields.
    #[test]
    fn a_handle_packs_its_loop_and_tag_in_one_word() {
        for (tag, id) in [(0, 1), (u32::MAX, u32::MAX), (7, 0x8000_0000)] {
            let i = Immediate::new(9, tag, NonZeroU32::new(id).unwrap());
            assert_eq!((i.seq, i.tag(), i.loop_id()), (9, tag, id));
        }
        let i = Immediate::new(7, 3, NonZeroU32::new(5).unwrap());
        assert_eq!(format!("{i:?}"), "Immediate { seq: 7, tag: 3, loop_id: 5 }");
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
            c.borrow_mut().push(lp.immediates.ring.capacity());
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
            c.borrow_mut().push(lp.immediates.ring.capacity());
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
        assert_eq!(lp.immediates.ring.capacity(), 0);
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
                    tx.send(lp.immediates.ring.capacity()).unwrap();
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

    /// A cleared newest immediate gives its position back at once, and
    /// the next one set takes it with a new tag: the old handle is stale,
    /// not a handle to the new immediate.
    #[test]
    fn a_cleared_immediates_handle_is_stale_when_its_position_is_reused() {
        let mut lp = EventLoop::with_virtual_clock();
        let first = lp.set_immediate(|_| {});
        let a = lp.set_immediate(|_| {});
        lp.clear_immediate(a).unwrap();
        assert_eq!(
            lp.immediates.ring.len(),
            1,
            "the newest, cleared, is popped"
        );
        let b = lp.set_immediate(|_| {});
        assert_eq!(a.seq, b.seq); // the position is reused
        assert_ne!(a.tag(), b.tag());
        assert_eq!(lp.clear_immediate(a), Err(TimerError::Stale));
        assert_eq!(lp.unref_immediate(a), Err(TimerError::Stale));
        assert!(!lp.immediate_is_pending(a) && !lp.immediate_has_ref(a));
        assert!(lp.immediate_is_pending(b) && lp.immediate_has_ref(b));
        lp.clear_immediate(b).unwrap();
        lp.clear_immediate(first).unwrap();
        assert!(lp.immediates.ring.is_empty());
    }

    /// Cleared immediates in the middle stay, dead, until the batch
    /// reaches them; the ring empties once no live one is left, and a
    /// handle from before stays stale.
    #[test]
    fn dead_entries_are_skipped_and_the_ring_empties_with_the_last_live_one() {
        let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut lp = EventLoop::with_virtual_clock();
        let handles: Vec<Immediate> = (0..6)
            .map(|n| {
                let l = log.clone();
                lp.set_immediate(move |_: &mut EventLoop| l.borrow_mut().push(n))
            })
            .collect();
        for &i in [&handles[0], &handles[2], &handles[3]] {
            lp.clear_immediate(i).unwrap();
        }
        assert_eq!(lp.stats().immediates, 3);
        assert_eq!(lp.immediates.ring.len(), 6, "dead ones stay in place");
        lp.run().unwrap();
        assert_eq!(*log.borrow(), [1, 4, 5]);
        assert!(lp.immediates.ring.is_empty());
        // All cleared before any runs: the ring empties at the last clear.
        let more: Vec<Immediate> = (0..4).map(|_| lp.set_immediate(|_| {})).collect();
        for &i in [&more[1], &more[0], &more[3], &more[2]] {
            lp.clear_immediate(i).unwrap();
        }
        assert!(lp.immediates.ring.is_empty());
        assert_eq!(lp.stats().immediates, 0);
        let next = lp.set_immediate(|_| {});
        assert!(more.iter().all(|&i| !lp.immediate_is_pending(i)));
        assert!(more.iter().all(|&i| i.tag() != next.tag()), "a new tag");
        lp.run().unwrap();
    }

    /// A plain immediate that is the newest entry of the running batch
    /// (nothing queued after it), cleared by an earlier one of the batch
    /// while another is live: it stays in place, dead (popping it would
    /// take a position from the batch), and never runs; one set in the
    /// same callback runs in the next check phase.
    #[test]
    fn the_newest_entry_of_a_running_batch_cleared_by_a_sibling() {
        use std::cell::{Cell, RefCell};
        use std::rc::Rc;
        let log = Rc::new(RefCell::new(Vec::new()));
        let last = Rc::new(Cell::new(None));
        let mut lp = EventLoop::with_virtual_clock();
        let (l, h) = (log.clone(), last.clone());
        lp.set_immediate(move |lp: &mut EventLoop| {
            l.borrow_mut().push("first");
            lp.clear_immediate(h.get().unwrap()).unwrap();
            // `keep` and the dead newest.
            assert_eq!(lp.immediates.ring.len(), 2, "the dead newest stays");
            let l2 = l.clone();
            lp.set_immediate(move |_: &mut EventLoop| l2.borrow_mut().push("next phase"));
        });
        let l = log.clone();
        lp.set_immediate(move |_: &mut EventLoop| l.borrow_mut().push("keep"));
        // Plain: captures nothing, so its clear would take the fast path.
        last.set(Some(lp.set_immediate(|_| -> Result<(), &str> {
            Err("cleared: never runs")
        })));
        lp.run_once().unwrap();
        assert_eq!(*log.borrow(), ["first", "keep"]);
        assert_eq!(lp.stats().immediates, 1);
        lp.run().unwrap();
        assert_eq!(*log.borrow(), ["first", "keep", "next phase"]);
        assert!(lp.immediates.ring.is_empty());
    }

    /// The last live immediate cleared during a batch (by the batch's
    /// running immediate) empties the ring at once; one set right after
    /// in the same callback waits for the next check phase.
    #[test]
    fn the_last_live_immediate_cleared_during_a_batch_then_one_set() {
        use std::cell::{Cell, RefCell};
        use std::rc::Rc;
        let log = Rc::new(RefCell::new(Vec::new()));
        let others = Rc::new(RefCell::new(Vec::new()));
        let mut lp = EventLoop::with_virtual_clock();
        let (l, o) = (log.clone(), others.clone());
        lp.set_immediate(move |lp: &mut EventLoop| {
            l.borrow_mut().push("first".to_string());
            for &h in o.borrow().iter() {
                lp.clear_immediate(h).unwrap();
            }
            assert_eq!(lp.stats().immediates, 0);
            assert!(lp.immediates.ring.is_empty(), "no live one left");
            let l2 = l.clone();
            lp.set_immediate(move |_: &mut EventLoop| l2.borrow_mut().push("later".into()));
        });
        let ran = Rc::new(Cell::new(0));
        for _ in 0..3 {
            let r = ran.clone();
            let h = lp.set_immediate(move |_: &mut EventLoop| r.set(r.get() + 1));
            others.borrow_mut().push(h);
        }
        lp.run_once().unwrap();
        assert_eq!(*log.borrow(), ["first"]);
        lp.run().unwrap();
        assert_eq!(*log.borrow(), ["first", "later"]);
        assert_eq!(ran.get(), 0);
    }

    /// A push that finds the ring full drops the consumed prefix when it
    /// is half of it: the entries move, and handles made before still
    /// name their own immediates (a queued one can be cleared, a consumed
    /// one is stale).
    #[test]
    fn compaction_keeps_every_handle_on_its_immediate() {
        use std::cell::RefCell;
        use std::rc::Rc;
        type Log = Rc<RefCell<Vec<u32>>>;
        type Handles = Rc<RefCell<Vec<Immediate>>>;
        // Immediate `n` logs `n` and, below 300, sets `n + 100`: the
        // 200s that were cleared set no 300s.
        fn set(lp: &mut EventLoop, n: u32, log: &Log, hs: &Handles) {
            let (l, h) = (log.clone(), hs.clone());
            let i = lp.set_immediate(move |lp: &mut EventLoop| {
                l.borrow_mut().push(n);
                if n < 300 {
                    set(lp, n + 100, &l, &h);
                }
            });
            hs.borrow_mut().push(i);
        }
        let log: Log = Rc::default();
        let hs: Handles = Rc::default();
        let mut lp = EventLoop::with_virtual_clock();
        for n in 0..8 {
            set(&mut lp, n, &log, &hs);
        }
        assert_eq!(lp.immediates.ring.capacity(), 8);
        lp.run_once().unwrap();
        // Eight ran, eight queued: full at 16, with half consumed.
        assert_eq!(lp.immediates.ring.capacity(), 16);
        assert_eq!(lp.immediates.ring.start, 8);
        lp.run_once().unwrap();
        // The first push of this phase found it full with 9 consumed, and
        // dropped them instead of growing.
        assert_eq!(lp.immediates.ring.capacity(), 16, "compacted, not grown");
        let handles = hs.borrow().clone();
        for &h in &handles[..16] {
            assert_eq!(lp.clear_immediate(h), Err(TimerError::Stale));
        }
        for &h in &handles[16..] {
            assert!(lp.immediate_is_pending(h));
        }
        lp.clear_immediate(handles[16 + 3]).unwrap();
        lp.clear_immediate(handles[16 + 7]).unwrap();
        lp.run().unwrap();
        let expect: Vec<u32> = (0..8)
            .chain(100..108)
            .chain([200, 201, 202, 204, 205, 206])
            .chain([300, 301, 302, 304, 305, 306])
            .collect();
        assert_eq!(*log.borrow(), expect);
        assert!(lp.immediates.ring.is_empty());
    }

    /// Setting an immediate and then clearing an older one, with another
    /// pending after it, leaves the cleared ones in place until the check
    /// phase (the module's docs): the ring holds them, then drains, and an
    /// idle loop gives the memory back.
    #[test]
    fn dead_entries_in_the_middle_last_until_the_check_phase() {
        let mut lp = EventLoop::with_virtual_clock();
        let rounds = 3 * SHRINK_ABOVE;
        let mut prev = lp.set_immediate(|_| {});
        let _pending = lp.set_immediate(|_| {});
        for _ in 0..rounds {
            let next = lp.set_immediate(|_| {});
            lp.clear_immediate(prev).unwrap();
            prev = next;
        }
        assert_eq!(lp.stats().immediates, 2);
        assert_eq!(
            lp.immediates.ring.len(),
            rounds + 2,
            "one dead entry per round"
        );
        lp.run().unwrap();
        assert!(lp.immediates.ring.is_empty());
        assert_eq!(
            lp.immediates.ring.capacity(),
            0,
            "given back by the idle loop"
        );
    }

    /// A batch that failed with no handler after its rest was cleared:
    /// the next `run` finds nothing live, and the emptied ring is still
    /// given back.
    #[test]
    fn a_failed_batch_whose_rest_was_cleared_gives_its_memory_back() {
        use std::cell::RefCell;
        use std::rc::Rc;
        let n = 2 * SHRINK_ABOVE;
        let handles = Rc::new(RefCell::new(Vec::new()));
        let mut lp = EventLoop::with_virtual_clock();
        for k in 0..n {
            let hs = handles.clone();
            let h = lp.set_immediate(move |lp: &mut EventLoop| -> Result<(), &str> {
                if k == 0 {
                    // Clears the rest of the batch, then fails.
                    for &h in &hs.borrow()[1..] {
                        lp.clear_immediate(h).unwrap();
                    }
                    return Err("boom");
                }
                Ok(())
            });
            handles.borrow_mut().push(h);
        }
        assert!(lp.run().is_err());
        lp.run().unwrap();
        assert_eq!(lp.stats().immediates, 0);
        assert_eq!(lp.immediates.ring.capacity(), 0);
    }
}
