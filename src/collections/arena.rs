//! A generational arena: a [`Slab`] whose keys carry a generation.
//!
//! Every handle the crate gives out (timeouts, immediates, the loop's own
//! handles, lists) is a [`Key`]: a slot index and the generation the slot
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
//!   40 bytes, not 48, an immediate's 48, not 56.

use std::ops::{Index, IndexMut};

use slab::Slab;

use super::list::{Linked, Links, ListStore, MAX_KEY};

/// A generation-checked key into an [`Arena`]: small and `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    index: u32,
    generation: u32,
}

impl Key {
    /// The slot index.
    pub fn index(self) -> usize {
        self.index as usize
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

/// A slab of `T` with generation-checked keys, each entry stored as an `S`;
/// see the [module docs](self).
pub struct Arena<T, S: Stored<Value = T> = Slot<T>> {
    slots: Slab<S>,
    next_generation: u32,
}

impl<T, S: Stored<Value = T>> Default for Arena<T, S> {
    fn default() -> Self {
        Arena {
            slots: Slab::new(),
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
        self.slots.len()
    }

    /// Whether the arena is empty.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Inserts `value` and returns its key.
    ///
    /// # Panics
    ///
    /// If the arena already holds more than [`MAX_KEY`] entries.
    pub fn insert(&mut self, value: T) -> Key {
        let generation = self.next_generation;
        self.next_generation = generation.wrapping_add(1);
        let index = self.slots.insert(S::store(generation, value));
        assert!(index <= MAX_KEY, "more than {MAX_KEY} entries in one arena");
        let index = index as u32;
        Key { index, generation }
    }

    /// Inserts the value `make` builds from its own key.
    ///
    /// # Panics
    ///
    /// As [`Arena::insert`].
    pub fn insert_with(&mut self, make: impl FnOnce(Key) -> T) -> Key {
        let index = self.slots.vacant_key();
        assert!(index <= MAX_KEY, "more than {MAX_KEY} entries in one arena");
        let key = Key {
            index: index as u32,
            generation: self.next_generation,
        };
        self.next_generation = self.next_generation.wrapping_add(1);
        let at = self.slots.insert(S::store(key.generation, make(key)));
        debug_assert_eq!(at, index);
        key
    }

    /// The entry `key` names, unless it was removed.
    pub fn get(&self, key: Key) -> Option<&T> {
        match self.slots.get(key.index()) {
            Some(s) if s.generation() == key.generation => Some(s.value()),
            _ => None,
        }
    }

    /// The entry `key` names, mutably, unless it was removed.
    pub fn get_mut(&mut self, key: Key) -> Option<&mut T> {
        match self.slots.get_mut(key.index()) {
            Some(s) if s.generation() == key.generation => Some(s.value_mut()),
            _ => None,
        }
    }

    /// Whether `key` names a live entry.
    pub fn contains(&self, key: Key) -> bool {
        self.get(key).is_some()
    }

    /// The live entries, by index.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().map(|(_, s)| s.value())
    }

    /// The entry at a live `index`, if any (no generation check).
    pub fn get_at(&self, index: usize) -> Option<&T> {
        self.slots.get(index).map(S::value)
    }

    /// The entry at a live `index`, mutably, if any (no generation check).
    pub fn get_at_mut(&mut self, index: usize) -> Option<&mut T> {
        self.slots.get_mut(index).map(S::value_mut)
    }

    /// The key of the live entry at `index` and the entry, mutably: one
    /// lookup where [`Arena::key_at`] and indexing would take two.
    ///
    /// # Panics
    ///
    /// If no entry is at `index`.
    pub fn keyed_at_mut(&mut self, index: usize) -> (Key, &mut T) {
        let slot = &mut self.slots[index];
        let key = Key {
            index: index as u32,
            generation: slot.generation(),
        };
        (key, slot.value_mut())
    }

    /// The key of the live entry at `index`.
    ///
    /// # Panics
    ///
    /// If no entry is at `index`.
    pub fn key_at(&self, index: usize) -> Key {
        Key {
            index: index as u32,
            generation: self.slots[index].generation(),
        }
    }

    /// Removes the entry at a live `index` and returns it.
    ///
    /// # Panics
    ///
    /// If no entry is at `index`.
    pub fn remove_at(&mut self, index: usize) -> T {
        self.slots.remove(index).into_value()
    }

    /// How many entries the arena has room for without growing.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// The bytes one slot of the arena takes: the size of the slab's own
    /// entry around an `S` (a vacant entry's link, and its tag unless `S`
    /// has a niche for it).
    #[cfg(test)]
    pub fn slot_size() -> usize {
        // The shape of `slab::Entry`, never built: only its size matters.
        #[allow(dead_code)]
        enum SlabEntry<T> {
            Vacant(usize),
            Occupied(T),
        }
        std::mem::size_of::<SlabEntry<S>>()
    }

    /// How many entries were ever inserted, wrapping (the next entry's
    /// generation): an arena that reads the same count twice had nothing
    /// inserted in between.
    pub fn inserts(&self) -> u32 {
        self.next_generation
    }

    /// Gives a large, empty arena's memory back (a slab never shrinks by
    /// itself). Generations survive, so stale keys stay stale.
    pub fn shrink_if_empty(&mut self, above: usize) {
        if self.slots.is_empty() && self.slots.capacity() > above {
            self.slots = Slab::new();
        }
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

    /// Whether to give `arena`'s memory back now (never unless it was
    /// [noted](Self::note) empty), the loop being `idle` (nothing expected
    /// soon) or not. An arena that filled again is forgotten until it
    /// empties again.
    pub fn due<T, S: Stored<Value = T>>(&mut self, arena: &Arena<T, S>, idle: bool) -> bool {
        if !self.noted {
            return false;
        }
        let inserts = arena.inserts();
        if !arena.is_empty() {
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
    fn index(&self, index: usize) -> &T {
        self.slots[index].value()
    }
}

impl<T, S: Stored<Value = T>> IndexMut<usize> for Arena<T, S> {
    fn index_mut(&mut self, index: usize) -> &mut T {
        self.slots[index].value_mut()
    }
}

impl<T: Linked, S: Stored<Value = T>> ListStore for Arena<T, S> {
    fn links(&self, key: usize) -> &Links {
        self[key].links()
    }
    fn links_mut(&mut self, key: usize) -> &mut Links {
        self[key].links_mut()
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
}
