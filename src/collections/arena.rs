//! A generational arena: a slab whose keys carry a generation.
//!
//! The handles of timeouts and of the loop's own handles are [`Key`]s
//! (immediates, since round 16, are positions in a ring with a tag, and
//! timer lists are duration-map slots): a slot index and the generation the slot
//! had when the entry was inserted. A key to an entry that was removed is
//! *stale*: it never reaches the entry that later reuses its slot, because
//! that entry has another generation.
//!
//! Ground rules:
//! - generations come from one counter per arena, bumped on every insert
//!   (wrapping after 2^32 inserts; a stale key is only mistaken for a live
//!   one if its slot was reused exactly 2^32 inserts later);
//! - indexes are at most [`MAX_KEY`] (just under 2^32), so an index can be
//!   a link of an intrusive [`List`](super::list::List);
//! - code that holds an index it knows is live (a list link, a heap id) uses
//!   the index directly; code that holds a key from a user checks it with
//!   [`Arena::get`] first;
//! - an entry's generation is kept beside it (a [`Slot`], by default) or, by
//!   a type with four bytes to spare, in the entry itself (it implements
//!   [`Stored`] through [`stored_inline!`]): a slot of the timer arena is
//!   32 bytes, not 40;
//! - the slots are a `Vec` with a free list threaded through the vacant
//!   ones, as the `slab` crate keeps them, and an insert builds its entry
//!   in the slot it goes to ([`Arena::insert_with`]).
//!
//! Why not `slab::Slab` itself (which this arena wrapped until round 13 of
//! issue 12): its `insert` is an out-of-line call that takes the value by
//! reference and copies it into the slot with 16-byte loads, while the
//! caller had built the value on the stack field by field, with 1-, 4- and
//! 8-byte stores. A load that spans several earlier stores cannot be
//! forwarded from them, so every insert waited for those stores to reach
//! the cache (perf, sampling the CPU clock: 76% of `insert_at`'s samples
//! on that one load, which was 37% of a same-duration insert's time and
//! 43% of an immediate's set + clear). Inlined here, with the entry made
//! only once its slot is known, the fields are stored straight into the
//! slot; what that bought is in the table of changes in
//! `docs/performance.md` (round 13).
//!
//! # Unchecked lookups
//!
//! [`Arena::keyed_at_unchecked_mut`], [`Arena::at_unchecked_mut`] and
//! [`Arena::forget_at_unchecked`] are the checked ones without the bounds
//! and occupancy tests, for an index the caller *knows* is live: in the
//! timers pass, the head of a live list (a linked timer is never freed) and
//! the running timer after its callback (a running timer's slot is freed
//! only by the pass). Each is `unsafe`: a wrong index is undefined behaviour
//! in a release build. In a debug build each asserts what its caller
//! promises, so the test suite checks every promise it reaches. Why they
//! exist: the pass looks a timer up five times (the head, its links, then
//! its slot, its links and its release after the callback), each with a
//! test or two; without them a fired timeout is 109 instructions, not 126,
//! and timeout-pooled ran 1.16–1.20× as fast in seven alternating pairs
//! (round 23, `docs/performance.md`).
#![allow(unsafe_code)]

use std::ops::{Index, IndexMut};

use super::list::MAX_KEY;

/// A generation-checked key into an [`Arena`]: small and `Copy`.
///
/// The slot index (low half) and the generation (high half) are one
/// `u64`, so a key is written with one 8-byte store and read back with
/// one 8-byte load, which the CPU forwards from the store (written as two
/// 4-byte halves, the load had to wait for both to reach the cache). A
/// handle of a key and a loop id (`NonZeroU32`) is then a pair of
/// scalars, which Rust passes and returns in two registers: a handle
/// returned by `set_timeout` and given straight to `clear_timeout` never
/// goes through memory. Such a handle is 16 bytes, and `Option` of it
/// too (the loop id's zero is the niche).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Key {
    bits: u64,
}

impl Key {
    #[inline(always)]
    fn new(index: usize, generation: u32) -> Key {
        debug_assert!(index <= MAX_KEY);
        Key {
            bits: index as u64 | u64::from(generation) << 32,
        }
    }

    /// The slot index.
    #[inline(always)]
    pub fn index(self) -> usize {
        self.bits as u32 as usize
    }

    /// The generation the slot had when the entry was inserted.
    #[inline(always)]
    fn generation(self) -> u32 {
        (self.bits >> 32) as u32
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key")
            .field("index", &self.index())
            .field("generation", &self.generation())
            .finish()
    }
}

/// What an [`Arena`] stores per entry: the value and its generation.
pub trait Stored {
    /// The entry's type.
    type Value;
    /// `value`, stored with `generation`.
    fn store(generation: u32, value: Self::Value) -> Self;
    /// The generation it was stored with.
    fn generation(&self) -> u32;
    /// The value.
    fn value(&self) -> &Self::Value;
    /// The value, mutably.
    fn value_mut(&mut self) -> &mut Self::Value;
    /// The value, taken out.
    fn into_value(self) -> Self::Value;
}

/// The default storage: the generation beside the value.
pub struct Slot<T> {
    generation: u32,
    value: T,
}

impl<T> Stored for Slot<T> {
    type Value = T;
    #[inline]
    fn store(generation: u32, value: T) -> Self {
        Slot { generation, value }
    }
    #[inline]
    fn generation(&self) -> u32 {
        self.generation
    }
    #[inline]
    fn value(&self) -> &T {
        &self.value
    }
    #[inline]
    fn value_mut(&mut self) -> &mut T {
        &mut self.value
    }
    #[inline]
    fn into_value(self) -> T {
        self.value
    }
}

/// One slot: a stored entry, or vacant with the index of the next vacant
/// slot (the arena's length when it is the last). Indexes are at most
/// [`MAX_KEY`], so that next index fits in a `u32`.
enum Entry<S> {
    Vacant(u32),
    Occupied(S),
}

/// A slab of `T` with generation-checked keys, each entry stored as an `S`;
/// see the [module docs](self).
pub struct Arena<T, S: Stored<Value = T> = Slot<T>> {
    slots: Vec<Entry<S>>,
    /// The first vacant slot, or `slots.len()` if none is.
    next: usize,
    /// Occupied slots.
    len: usize,
    next_generation: u32,
}

impl<T, S: Stored<Value = T>> Default for Arena<T, S> {
    fn default() -> Self {
        Arena {
            slots: Vec::new(),
            next: 0,
            len: 0,
            next_generation: 0,
        }
    }
}

impl<T> Arena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<T, S: Stored<Value = T>> Arena<T, S> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the arena is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Stores the entry `make` builds for `key` in the vacant slot `key`
    /// names (the first vacant one, or one past the end), made only once
    /// that slot is known and has room: so it is written straight into
    /// the slot, not first built elsewhere and copied (see the module
    /// docs). `make` is called as it was given, not wrapped in another
    /// closure: moving a closure moves its captures through memory, with
    /// the same unforwardable loads.
    #[inline(always)]
    fn store_at(&mut self, key: Key, make: impl FnOnce(Key) -> T) {
        let index = key.index();
        let generation = key.generation();
        // The slot is found first and `make` called once, below, so that
        // it is inlined here: called on two paths, a closure that takes a
        // pooled callback was outlined, and its captures went through the
        // stack to reach it (the loads that cannot be forwarded).
        let next = if index == self.slots.len() {
            // A new slot at the end, vacant, made inside `extend` by a
            // closure that holds only its link, then filled: no entry and
            // no `make` is moved to get there (moving a closure moves its
            // captures through memory, with the same unforwardable loads).
            // Linked to the new end, so that a `make` that panics leaves a
            // sound free list: this slot first, as `next` still says.
            let end = index as u32 + 1;
            self.slots
                .extend(std::iter::once_with(move || Entry::Vacant(end)));
            end
        } else {
            let Entry::Vacant(next) = self.slots[index] else {
                unreachable!("slot {index} is the first vacant one")
            };
            next
        };
        // Vacant: the value replaced needs no drop.
        std::mem::forget(std::mem::replace(
            &mut self.slots[index],
            Entry::Occupied(S::store(generation, make(key))),
        ));
        self.next = next as usize;
        // Only now (and the generation in the callers): a `make` that
        // panics leaves the arena as it was, but for room it made.
        self.len += 1;
    }

    /// The entry at `index`, unless the slot is vacant or beyond the end.
    #[inline(always)]
    fn slot(&self, index: usize) -> Option<&S> {
        match self.slots.get(index) {
            Some(Entry::Occupied(s)) => Some(s),
            _ => None,
        }
    }

    /// [`slot`](Self::slot), mutably.
    #[inline(always)]
    fn slot_mut(&mut self, index: usize) -> Option<&mut S> {
        match self.slots.get_mut(index) {
            Some(Entry::Occupied(s)) => Some(s),
            _ => None,
        }
    }

    /// The slot at `index`, known to be occupied, without the bounds test;
    /// a debug build asserts it is occupied.
    ///
    /// # Safety
    ///
    /// An entry is at `index` (see the [module docs](self)).
    #[inline(always)]
    unsafe fn entry_unchecked_mut(&mut self, index: usize) -> &mut Entry<S> {
        debug_assert!(
            matches!(self.slots.get(index), Some(Entry::Occupied(_))),
            "no entry at {index}"
        );
        // SAFETY: the caller promises an entry at `index`, so `index` is
        // within `slots`.
        unsafe { self.slots.get_unchecked_mut(index) }
    }

    /// The entry at `index`, known to be occupied, without checks.
    ///
    /// # Safety
    ///
    /// As [`entry_unchecked_mut`](Self::entry_unchecked_mut).
    #[inline(always)]
    unsafe fn live_unchecked_mut(&mut self, index: usize) -> &mut S {
        // SAFETY: the caller's promise is this function's.
        match unsafe { self.entry_unchecked_mut(index) } {
            Entry::Occupied(s) => s,
            // SAFETY: the caller promises that the slot is occupied.
            Entry::Vacant(_) => unsafe { std::hint::unreachable_unchecked() },
        }
    }

    /// The entry at an index known to be live.
    #[inline(always)]
    #[track_caller]
    fn live(&self, index: usize) -> &S {
        match self.slot(index) {
            Some(s) => s,
            None => panic!("no entry at {index}"),
        }
    }

    /// [`live`](Self::live), mutably.
    #[inline(always)]
    #[track_caller]
    fn live_mut(&mut self, index: usize) -> &mut S {
        match self.slot_mut(index) {
            Some(s) => s,
            None => panic!("no entry at {index}"),
        }
    }

    /// Inserts `value` and returns its key.
    ///
    /// # Panics
    ///
    /// If the arena already holds more than [`MAX_KEY`] entries.
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> Key {
        self.insert_with(move |_| value)
    }

    /// Inserts the value `make` builds from its own key, built in its slot
    /// (so a value made at the call is best made in `make`; see the
    /// module docs). If `make` panics, nothing was inserted and no
    /// generation was used.
    ///
    /// # Panics
    ///
    /// As [`Arena::insert`].
    #[inline(always)]
    pub fn insert_with(&mut self, make: impl FnOnce(Key) -> T) -> Key {
        let index = self.next;
        assert!(index <= MAX_KEY, "more than {MAX_KEY} entries in one arena");
        let key = Key::new(index, self.next_generation);
        self.store_at(key, make);
        self.next_generation = self.next_generation.wrapping_add(1);
        key
    }

    /// The entry `key` names, unless it was removed.
    pub fn get(&self, key: Key) -> Option<&T> {
        match self.slot(key.index()) {
            Some(s) if s.generation() == key.generation() => Some(s.value()),
            _ => None,
        }
    }

    /// The entry `key` names, mutably, unless it was removed.
    pub fn get_mut(&mut self, key: Key) -> Option<&mut T> {
        match self.slot_mut(key.index()) {
            Some(s) if s.generation() == key.generation() => Some(s.value_mut()),
            _ => None,
        }
    }

    /// Whether `key` names a live entry.
    pub fn contains(&self, key: Key) -> bool {
        self.get(key).is_some()
    }

    /// The live entries, by index.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().filter_map(|e| match e {
            Entry::Occupied(s) => Some(s.value()),
            Entry::Vacant(_) => None,
        })
    }

    /// The entry at a live `index`, if any (no generation check).
    pub fn get_at(&self, index: usize) -> Option<&T> {
        self.slot(index).map(S::value)
    }

    /// The entry at a live `index`, mutably, if any (no generation check).
    pub fn get_at_mut(&mut self, index: usize) -> Option<&mut T> {
        self.slot_mut(index).map(S::value_mut)
    }

    /// The key of the live entry at `index` and the entry, mutably: one
    /// lookup where [`Arena::key_at`] and indexing would take two.
    ///
    /// # Panics
    ///
    /// If no entry is at `index`.
    #[track_caller]
    pub fn keyed_at_mut(&mut self, index: usize) -> (Key, &mut T) {
        let slot = self.live_mut(index);
        let key = Key::new(index, slot.generation());
        (key, slot.value_mut())
    }

    /// [`keyed_at_mut`](Self::keyed_at_mut) without its bounds and
    /// occupancy tests (see the [module docs](self)).
    ///
    /// # Safety
    ///
    /// An entry is at `index`: the caller knows it is live. Checked by a
    /// debug assertion in a debug build.
    #[inline(always)]
    pub unsafe fn keyed_at_unchecked_mut(&mut self, index: usize) -> (Key, &mut T) {
        // SAFETY: the caller's promise is this function's.
        let slot = unsafe { self.live_unchecked_mut(index) };
        let key = Key::new(index, slot.generation());
        (key, slot.value_mut())
    }

    /// The entry at `index`, mutably, without the bounds and occupancy
    /// tests of indexing (see the [module docs](self)).
    ///
    /// # Safety
    ///
    /// As [`keyed_at_unchecked_mut`](Self::keyed_at_unchecked_mut).
    #[inline(always)]
    pub unsafe fn at_unchecked_mut(&mut self, index: usize) -> &mut T {
        // SAFETY: the caller's promise is this function's.
        unsafe { self.live_unchecked_mut(index) }.value_mut()
    }

    /// [`keyed_at_mut`](Self::keyed_at_mut) of an `index` that may hold
    /// no entry: `None` then.
    pub fn try_keyed_at_mut(&mut self, index: usize) -> Option<(Key, &mut T)> {
        let slot = self.slot_mut(index)?;
        let key = Key::new(index, slot.generation());
        Some((key, slot.value_mut()))
    }

    /// The key of the live entry at `index`.
    ///
    /// # Panics
    ///
    /// If no entry is at `index`.
    #[track_caller]
    pub fn key_at(&self, index: usize) -> Key {
        Key::new(index, self.live(index).generation())
    }

    /// The key of the entry at `index`, if one is there.
    pub fn try_key_at(&self, index: usize) -> Option<Key> {
        let slot = self.slot(index)?;
        Some(Key::new(index, slot.generation()))
    }

    /// Removes the entry at a live `index` and returns it.
    ///
    /// # Panics
    ///
    /// If no entry is at `index`.
    #[track_caller]
    pub fn remove_at(&mut self, index: usize) -> T {
        self.vacate(index).into_value()
    }

    /// Removes the entry at a live `index` without reading or dropping
    /// it: for an entry whose drop would do nothing, which the caller
    /// knows (a timer whose callback it took, a plain one). Only the
    /// slot's tag is read; [`remove_at`](Self::remove_at) copies the whole
    /// entry out, and a timers pass or a pooled cancel that then forgets
    /// it has paid for the copy. Anything the entry owns is leaked.
    ///
    /// # Panics
    ///
    /// If no entry is at `index`.
    #[track_caller]
    pub fn forget_at(&mut self, index: usize) {
        // Inlined, so the entry's loads are dead and go: only the tag is
        // read.
        std::mem::forget(self.vacate(index));
    }

    /// [`forget_at`](Self::forget_at) without its bounds and occupancy
    /// tests (see the [module docs](self)): anything the entry owns is
    /// leaked.
    ///
    /// # Safety
    ///
    /// As [`keyed_at_unchecked_mut`](Self::keyed_at_unchecked_mut).
    #[inline(always)]
    pub unsafe fn forget_at_unchecked(&mut self, index: usize) {
        debug_assert!(self.next <= MAX_KEY + 1);
        let next = self.next as u32;
        // SAFETY: the caller's promise is this function's.
        let slot = unsafe { self.entry_unchecked_mut(index) };
        // Moved out and forgotten, not dropped: inlined, the entry's loads
        // are dead and go, as in `forget_at`.
        std::mem::forget(std::mem::replace(slot, Entry::Vacant(next)));
        self.len -= 1;
        self.next = index;
    }

    /// Makes the live slot at `index` vacant, first on the free list, and
    /// returns what it held: the one removal step of `remove_at` and
    /// `forget_at`.
    #[inline(always)]
    #[track_caller]
    fn vacate(&mut self, index: usize) -> S {
        // At most `MAX_KEY + 1`: an index the arena handed out, or its end.
        debug_assert!(self.next <= MAX_KEY + 1);
        let next = self.next as u32;
        let slot = match self.slots.get_mut(index) {
            Some(slot @ Entry::Occupied(_)) => slot,
            _ => panic!("no entry at {index}"),
        };
        let Entry::Occupied(s) = std::mem::replace(slot, Entry::Vacant(next)) else {
            unreachable!("slot {index} was occupied")
        };
        self.len -= 1;
        self.next = index;
        s
    }

    /// How many entries the arena has room for without growing.
    pub fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// The bytes one slot of the arena takes: an `S`, or a vacant slot's
    /// link (and a tag, unless `S` has a niche for it).
    #[cfg(test)]
    pub fn slot_size() -> usize {
        std::mem::size_of::<Entry<S>>()
    }

    /// How many entries were ever inserted, wrapping (the next entry's
    /// generation): an arena that reads the same count twice had nothing
    /// inserted in between.
    pub fn inserts(&self) -> u32 {
        self.next_generation
    }

    /// Gives a large, empty arena's memory back (it never shrinks by
    /// itself). Generations survive, so stale keys stay stale.
    pub fn shrink_if_empty(&mut self, above: usize) {
        if self.is_empty() && self.slots.capacity() > above {
            self.slots = Vec::new();
            self.next = 0;
        }
    }
}

/// Storage whose emptying an [`Emptied`] watches: an [`Arena`], or the
/// duration map.
pub trait Refills {
    /// Whether it holds nothing.
    fn is_empty(&self) -> bool;
    /// Its inserts so far, wrapping: a change between two looks means it
    /// filled again.
    fn inserts(&self) -> u32;
}

impl<T, S: Stored<Value = T>> Refills for Arena<T, S> {
    fn is_empty(&self) -> bool {
        Arena::is_empty(self)
    }
    fn inserts(&self) -> u32 {
        Arena::inserts(self)
    }
}

impl Refills for super::durations::DurationMap {
    fn is_empty(&self) -> bool {
        super::durations::DurationMap::is_empty(self)
    }
    fn inserts(&self) -> u32 {
        super::durations::DurationMap::inserts(self)
    }
}

/// When an arena that emptied gives its memory back: once it has stayed
/// empty, with nothing inserted, from one look of the loop's to the next
/// (a whole loop iteration), or at once when the loop is idle (about to
/// wait with no deadline, or done with nothing left to run). An arena
/// that fills and drains every iteration (a batch of immediates queued
/// from a timer, a burst of request timeouts) keeps its memory, instead
/// of faulting fresh pages in for every batch.
#[derive(Debug, Default)]
pub struct Emptied {
    /// The arena emptied since the loop last gave its memory back or saw
    /// it filled again.
    pub noted: bool,
    /// The arena's insert count when the loop last found it empty.
    mark: Option<u32>,
}

impl Emptied {
    /// The arena just emptied.
    #[inline]
    pub fn note(&mut self) {
        self.noted = true;
    }

    /// Whether to give `store`'s memory back now (never unless it was
    /// [noted](Self::note) empty), the loop being `idle` (nothing expected
    /// soon) or not. A store that filled again is forgotten until it
    /// empties again.
    pub fn due<R: Refills>(&mut self, store: &R, idle: bool) -> bool {
        if !self.noted {
            return false;
        }
        let inserts = store.inserts();
        if !store.is_empty() {
            *self = Emptied::default();
            return false;
        }
        if idle || self.mark == Some(inserts) {
            *self = Emptied::default();
            return true;
        }
        self.mark = Some(inserts);
        false
    }
}

/// Implements [`Stored`] for a type that keeps its arena generation in a
/// `generation: u32` field of its own, so that no [`Slot`] pads it.
macro_rules! stored_inline {
    ($t:ty) => {
        impl $crate::collections::arena::Stored for $t {
            type Value = $t;
            #[inline(always)]
            fn store(generation: u32, mut value: $t) -> $t {
                value.generation = generation;
                value
            }
            #[inline(always)]
            fn generation(&self) -> u32 {
                self.generation
            }
            #[inline(always)]
            fn value(&self) -> &$t {
                self
            }
            #[inline(always)]
            fn value_mut(&mut self) -> &mut $t {
                self
            }
            #[inline(always)]
            fn into_value(self) -> $t {
                self
            }
        }
    };
}
pub(crate) use stored_inline;

impl<T, S: Stored<Value = T>> Index<usize> for Arena<T, S> {
    type Output = T;
    #[track_caller]
    fn index(&self, index: usize) -> &T {
        self.live(index).value()
    }
}

impl<T, S: Stored<Value = T>> IndexMut<usize> for Arena<T, S> {
    #[track_caller]
    fn index_mut(&mut self, index: usize) -> &mut T {
        self.live_mut(index).value_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emptied_store_is_due_after_a_whole_quiet_look_or_when_idle() {
        let mut a: Arena<u32> = Arena::new();
        let mut e = Emptied::default();
        // Never noted empty: never due.
        assert!(!e.due(&a, false));
        assert!(!e.due(&a, true));
        let use_once = |a: &mut Arena<u32>| {
            let k = a.insert(1);
            a.remove_at(k.index());
        };
        use_once(&mut a);
        e.note();
        // First look: empty, but just emptied: wait one iteration.
        assert!(!e.due(&a, false));
        assert!(e.noted);
        // Nothing inserted since: due, and forgotten.
        assert!(e.due(&a, false));
        assert!(!e.noted);
        // Used again in between (inserts moved): wait again.
        use_once(&mut a);
        e.note();
        assert!(!e.due(&a, false));
        use_once(&mut a);
        assert!(!e.due(&a, false));
        assert!(e.due(&a, false));
        // Filled again: forgotten, not due.
        use_once(&mut a);
        e.note();
        assert!(!e.due(&a, false));
        let k = a.insert(2);
        assert!(!e.due(&a, false));
        assert!(!e.noted);
        // Idle: due at once.
        a.remove_at(k.index());
        e.note();
        assert!(e.due(&a, true));
    }

    #[test]
    fn stale_keys_never_reach_a_reused_slot() {
        let mut a = Arena::new();
        let k1 = a.insert("one");
        assert_eq!(a.get(k1), Some(&"one"));
        assert_eq!(a.remove_at(k1.index()), "one");
        assert_eq!(a.get(k1), None);
        let k2 = a.insert("two");
        assert_eq!(k2.index(), k1.index(), "the slot is reused");
        assert_eq!(a.get(k1), None, "with another generation");
        assert_eq!(a.get(k2), Some(&"two"));
        assert_eq!(a.key_at(k2.index()), k2);
        *a.get_mut(k2).unwrap() = "deux";
        assert_eq!(a[k2.index()], "deux");
        assert_eq!(a.len(), 1);
    }

    /// `try_keyed_at_mut` answers for a live index with its current key
    /// (the reused slot's generation), and `None` for a vacant or absent
    /// one.
    #[test]
    fn try_keyed_at_mut_gives_the_live_key_or_none() {
        let mut a = Arena::new();
        let k1 = a.insert(1);
        a.remove_at(k1.index());
        assert!(a.try_keyed_at_mut(k1.index()).is_none(), "vacant");
        assert!(a.try_keyed_at_mut(7).is_none(), "never used");
        let k2 = a.insert(2);
        let (k, v) = a.try_keyed_at_mut(k2.index()).unwrap();
        assert_eq!(k, k2);
        assert_ne!(k, k1);
        *v = 3;
        assert_eq!(a.get(k2), Some(&3));
    }

    #[test]
    fn unchecked_lookups_match_the_checked_ones() {
        let mut a = Arena::new();
        let k1 = a.insert(String::from("one"));
        let k2 = a.insert(String::from("two"));
        // SAFETY: both entries are live.
        let (k, v) = unsafe { a.keyed_at_unchecked_mut(k2.index()) };
        assert_eq!(k, k2);
        v.push('!');
        // SAFETY: as above.
        unsafe { a.at_unchecked_mut(k1.index()) }.push('?');
        assert_eq!(a.get(k1).map(String::as_str), Some("one?"));
        assert_eq!(a.get(k2).map(String::as_str), Some("two!"));
        // Forgotten: vacant, first on the free list, the key stale, and
        // the string leaked (taken out first here, so nothing leaks).
        let taken = std::mem::take(&mut a[k1.index()]);
        // SAFETY: `k1`'s entry is live.
        unsafe { a.forget_at_unchecked(k1.index()) };
        assert_eq!(taken, "one?");
        assert_eq!(a.len(), 1);
        assert!(a.get(k1).is_none());
        let k3 = a.insert(String::from("three"));
        assert_eq!(k3.index(), k1.index(), "the forgotten slot is reused");
        assert_ne!(k3, k1);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "no entry at 0")]
    fn an_unchecked_lookup_of_a_vacant_slot_is_caught_in_a_debug_build() {
        let mut a = Arena::new();
        let k = a.insert(1);
        a.remove_at(k.index());
        // SAFETY: not met, on purpose: the debug assertion panics before
        // the slot is read.
        let _ = unsafe { a.at_unchecked_mut(k.index()) };
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "no entry at 3")]
    fn an_unchecked_lookup_past_the_end_is_caught_in_a_debug_build() {
        let mut a = Arena::new();
        a.insert(1);
        // SAFETY: not met, on purpose, as above.
        unsafe { a.forget_at_unchecked(3) };
    }

    #[test]
    fn shrinking_keeps_generations() {
        let mut a = Arena::new();
        let keys: Vec<Key> = (0..100).map(|i| a.insert(i)).collect();
        for k in &keys {
            a.remove_at(k.index());
        }
        a.shrink_if_empty(10);
        assert!(a.is_empty());
        let fresh = a.insert(7);
        assert!(keys.iter().all(|&k| a.get(k).is_none()));
        assert_eq!(a.get(fresh), Some(&7));
    }

    /// Random inserts and removals against a model: every live key reaches
    /// its value and no other, removed keys are stale, the most recently
    /// vacated slot is reused first (as `slab` reuses them), nothing grows
    /// while a slot is vacant, and the live entries come out by index.
    #[test]
    fn matches_a_model_under_random_inserts_and_removals() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut rand = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut a: Arena<u64> = Arena::new();
        // By index: the live key and value there.
        let mut model: Vec<Option<(Key, u64)>> = Vec::new();
        let mut vacated: Vec<usize> = Vec::new();
        let mut stale: Vec<Key> = Vec::new();
        for step in 0..crate::test_steps(20_000) as u64 {
            let live: Vec<usize> = (0..model.len()).filter(|&i| model[i].is_some()).collect();
            if live.is_empty() || rand(3) != 0 {
                let before = a.slots.len();
                let k = if step % 2 == 0 {
                    a.insert(step)
                } else {
                    a.insert_with(|k| k.index() as u64 * 1_000_000 + step)
                };
                let value = if step % 2 == 0 {
                    step
                } else {
                    k.index() as u64 * 1_000_000 + step
                };
                match vacated.pop() {
                    Some(i) => {
                        assert_eq!(k.index(), i, "the slot vacated last is reused first");
                        assert_eq!(a.slots.len(), before, "no growth while a slot is vacant");
                    }
                    None => assert_eq!(k.index(), before, "appended"),
                }
                if model.len() <= k.index() {
                    model.resize(k.index() + 1, None);
                }
                assert!(model[k.index()].is_none());
                model[k.index()] = Some((k, value));
            } else {
                let i = live[rand(live.len())];
                let (k, v) = model[i].take().unwrap();
                assert_eq!(a.remove_at(i), v);
                vacated.retain(|&j| j != i);
                vacated.push(i);
                stale.push(k);
            }
            let n = model.iter().flatten().count();
            assert_eq!(a.len(), n);
            assert_eq!(a.is_empty(), n == 0);
            if step % 97 == 0 {
                for (i, m) in model.iter().enumerate() {
                    match m {
                        Some((k, v)) => {
                            assert_eq!(a.get(*k), Some(v));
                            assert_eq!(a.key_at(i), *k);
                            assert_eq!(a.get_at(i), Some(v));
                        }
                        None => assert_eq!(a.get_at(i), None),
                    }
                }
                assert!(
                    stale.iter().all(|&k| a.get(k).is_none()),
                    "stale keys stay stale"
                );
                let by_index: Vec<u64> = model.iter().flatten().map(|&(_, v)| v).collect();
                assert_eq!(a.values().copied().collect::<Vec<_>>(), by_index);
            }
        }
    }

    /// A key is one word: the handles built around it (a key and a
    /// `NonZeroU32`) are a pair of scalars of 16 bytes, `Option` of them
    /// too. Index and generation come back as they went in, at the
    /// extremes.
    #[test]
    fn a_key_is_one_word_and_round_trips() {
        use std::mem::size_of;
        assert_eq!(size_of::<Key>(), 8);
        assert_eq!(std::mem::align_of::<Key>(), 8);
        assert_eq!(size_of::<crate::Timeout>(), 16);
        assert_eq!(size_of::<Option<crate::Timeout>>(), 16);
        assert_eq!(size_of::<crate::Immediate>(), 16);
        assert_eq!(size_of::<Option<crate::Immediate>>(), 16);
        for index in [0, 1, 1 << 31, MAX_KEY] {
            for generation in [0, 1, 1 << 31, u32::MAX] {
                let k = Key::new(index, generation);
                assert_eq!((k.index(), k.generation()), (index, generation));
                assert_eq!(
                    format!("{k:?}"),
                    format!("Key {{ index: {index}, generation: {generation} }}")
                );
            }
        }
        assert_ne!(Key::new(1, 2), Key::new(2, 1));
    }

    #[test]
    fn a_panicking_make_inserts_nothing() {
        let mut a: Arena<u32> = Arena::new();
        let k0 = a.insert(0);
        let k1 = a.insert(1);
        a.remove_at(k0.index());
        for vacant in [true, false] {
            if !vacant {
                // The free slot taken: the next insert appends.
                let k = a.insert(2);
                assert_eq!(k.index(), k0.index());
            }
            let (len, inserts) = (a.len(), a.inserts());
            let values: Vec<u32> = a.values().copied().collect();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                a.insert_with(|_| panic!("no value"));
            }));
            assert!(r.is_err());
            assert_eq!(a.len(), len, "nothing inserted");
            assert_eq!(a.inserts(), inserts, "no generation used");
            assert_eq!(a.values().copied().collect::<Vec<_>>(), values);
            assert_eq!(a.get_at(2), None);
            assert_eq!(a.get(k1), Some(&1));
            // The slot the failed insert would have taken is taken next.
            let k = a.insert(3);
            assert_eq!(k.index(), if vacant { k0.index() } else { 2 });
            a.remove_at(k.index());
        }
    }

    /// An emptied arena gives its memory back only above the threshold,
    /// and either way the next insert takes a sound slot: index 0 after a
    /// shrink, the slot vacated last without one.
    #[test]
    fn shrinking_or_not_leaves_a_sound_free_list() {
        for (above, shrinks) in [(2, true), (1_000, false)] {
            let mut a: Arena<u32> = Arena::new();
            let keys: Vec<Key> = (0..10).map(|i| a.insert(i)).collect();
            for k in &keys {
                a.remove_at(k.index());
            }
            let capacity = a.capacity();
            a.shrink_if_empty(above);
            assert_eq!(a.capacity() == 0, shrinks);
            if !shrinks {
                assert_eq!(a.capacity(), capacity);
            }
            let k = a.insert(7);
            assert_eq!(k.index(), if shrinks { 0 } else { 9 });
            let again: Vec<Key> = (0..12).map(|i| a.insert(i)).collect();
            assert_eq!(a.len(), 13);
            assert!(keys.iter().all(|&old| a.get(old).is_none()));
            assert_eq!(a.get(k), Some(&7));
            assert!(
                again
                    .iter()
                    .enumerate()
                    .all(|(i, &k)| a.get(k) == Some(&(i as u32)))
            );
        }
    }

    #[test]
    #[should_panic(expected = "no entry at 1")]
    fn removing_a_vacant_slot_panics() {
        let mut a: Arena<u32> = Arena::new();
        a.insert(0);
        let k = a.insert(1);
        a.remove_at(k.index());
        a.remove_at(k.index());
    }

    /// `forget_at` vacates the slot like `remove_at` (the key goes stale,
    /// the slot is reused first) and drops nothing.
    #[test]
    fn forget_at_vacates_without_dropping() {
        use std::cell::Cell;
        // Counts its drops, and owns no memory: what is forgotten leaks
        // nothing (Miri checks for leaks; an `Rc` forgotten did leak).
        struct Counted<'a>(&'a Cell<u32>);
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
            }
        }
        let drops = Cell::new(0);
        let mut a: Arena<Counted<'_>> = Arena::new();
        let k0 = a.insert(Counted(&drops));
        let k1 = a.insert(Counted(&drops));
        a.forget_at(k0.index());
        assert_eq!(drops.get(), 0, "forgotten, not dropped");
        assert_eq!(a.len(), 1);
        assert!(a.get(k0).is_none());
        let k2 = a.insert(Counted(&drops));
        assert_eq!(k2.index(), k0.index(), "the vacated slot is reused");
        assert_ne!(k2, k0);
        drop(a.remove_at(k1.index()));
        assert_eq!(drops.get(), 1);
        // Forgetting the last entry empties the arena; slots forgotten in
        // turn are reused last-forgotten first, as removed ones are.
        a.forget_at(k2.index());
        assert!(a.is_empty());
        let keys: Vec<Key> = (0..3).map(|_| a.insert(Counted(&drops))).collect();
        for k in &keys {
            a.forget_at(k.index());
        }
        assert!(a.is_empty());
        for k in keys.iter().rev() {
            assert_eq!(a.insert(Counted(&drops)).index(), k.index());
        }
        drop(a);
        assert_eq!(drops.get(), 4, "one removed, three dropped with the arena");
    }

    #[test]
    #[should_panic(expected = "no entry at 1")]
    fn forgetting_a_vacant_slot_panics() {
        let mut a: Arena<u32> = Arena::new();
        a.insert(0);
        let k = a.insert(1);
        a.forget_at(k.index());
        a.forget_at(k.index());
    }
}
