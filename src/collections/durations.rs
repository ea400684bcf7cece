//! A map from a timer duration (whole ms) to its list: the list's FIFO,
//! in one 8-byte slot that *is* the list (Node's `TimersList`), its
//! duration told by where the slot is. Shaped like the object Node keeps
//! it in.
//!
//! Node's `timerListMap` is a plain object keyed by duration. V8 keeps an
//! object's small integer keys as a dense array ("elements"), so Node's
//! lookup of a duration is an index, and durations created or removed in
//! order walk memory in order. A hash map spreads them instead: each
//! lookup or removal of one of a million durations misses the cache
//! (clearing a million one-timer lists from the newest was half Node's
//! speed). This map does what V8 does: durations below [`DIRECT`] live in a
//! paged direct table (pages of [`PAGE`] slots, made on first use), and
//! longer ones in slots of their own pages, found through a hash map. The
//! pages live in one pool (a `Vec` of slots, a page after another), so a burst's pages are one
//! allocation that shrinking gives back to the OS whole, not a thousand
//! small ones that fragment the heap.
//!
//! A slot holds the list's FIFO, so appending a timer to the list of a
//! duration that has one reads one line after the page directory. Its
//! duration is not stored beside it: a direct duration's is its page's
//! number and its place in the page (each pool page's number is in
//! `page_numbers`), and a far one's is in `far_msecs`. Until round 28 of
//! issue 12 the slot held it, 16 bytes, and a million one-timer lists
//! touched 8 MiB more: without it, an unpooled insert is 1.05-1.06x
//! faster, and a fired one-timer list 0.93-0.95x as fast (the pass loads
//! the page's number to learn the duration, which it read from the
//! slot's own line before).
//!
//! Every slot has a [`SlotId`], its position in the pool, which
//! stays the same while its duration is mapped: a linked timer keeps its
//! list's slot id and reaches the FIFO with one index, and the heap of
//! lists knows a list by its slot id. (Until round 16 a list was also an
//! entry of an arena of its own, 16 more bytes and one more dependent load
//! per list; the slot held that entry's index.)
//!
//! Invariants: a duration is in exactly one of the two parts (the table
//! below `DIRECT`, the hash map from it); `len` counts both; a vacant slot
//! holds [`VACANT`] ([`List::VACANT`], which no list is), a directory
//! entry without a page `NO_PAGE`; `page_numbers[i]` is the number of the
//! pool's page `i` in the directory, or `FAR_PAGE` for a page of far
//! slots; a far duration's slot is in no directory page, its duration in
//! `far_msecs` while mapped, and, while vacant, in `far_free`; a slot is
//! vacated only with its FIFO empty; the pool never shrinks while a
//! duration is mapped, so the slot of a mapped duration stays within it.
//!
//! [`Durations::slot_unchecked`] and its `_mut` form are the one `unsafe`
//! code here: [`slot`](Durations::slot) without its bounds test, for the
//! timers pass, which holds the slot of a list it knows is live (see
//! `timers/process.rs`).
#![allow(unsafe_code)]

use std::collections::HashMap;

use super::hash::BuildIntHasher;
use super::list::List;

/// Slots per page: 8 KiB of 8-byte slots.
const PAGE: usize = 1024;
/// Durations below this are in the direct table: 2^22 ms (about 70 min);
/// at most 4,096 pages, so the page directory stays within 16 KiB.
const DIRECT: u64 = 1 << 22;
const NO_PAGE: u32 = u32::MAX;
/// `page_numbers` of a page of far slots.
const FAR_PAGE: u32 = u32::MAX;

/// A slot's position in the pool (page index × [`PAGE`] + offset).
pub(crate) type SlotId = u32;

/// What the map keeps for a duration: its list, 8 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    /// The list's timers, oldest first; [`List::VACANT`] if no duration
    /// is mapped here.
    pub(crate) list: List,
}

/// A slot with no duration mapped to it.
const VACANT: Slot = Slot { list: List::VACANT };

#[derive(Default)]
pub(crate) struct DurationMap {
    /// Page number -> index of the page in `pool`, or `NO_PAGE`.
    dir: Vec<u32>,
    /// The pages' slots, [`PAGE`] a page, one flat `Vec`: a new page is
    /// filled in place (pushed as an array, it was built on the stack and
    /// copied, a page twice).
    pool: Vec<Slot>,
    /// Pool page -> its number in the directory (the high bits of its
    /// durations), or `FAR_PAGE`.
    page_numbers: Vec<u32>,
    /// A far duration -> its slot.
    far: HashMap<u64, SlotId, BuildIntHasher>,
    /// A far duration's slot -> the duration (the reverse of `far`).
    far_msecs: HashMap<SlotId, u64, BuildIntHasher>,
    /// Vacant slots of the far durations' pages.
    far_free: Vec<SlotId>,
    len: usize,
    /// Durations mapped so far (wrapping): whether the map filled again
    /// between two looks ([`Emptied`](super::arena::Emptied)).
    inserts: u32,
}

/// What [`DurationMap::lookup`] found for a duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// Mapped, to this slot.
    Mapped(SlotId),
    /// Not mapped; a direct duration whose page exists, so this slot is
    /// where it goes.
    Vacant(SlotId),
    /// Not mapped, and no slot is ready for it: a direct duration whose
    /// page is not made yet, or a far one.
    Absent,
}

impl DurationMap {
    /// The slot of `ms`, if `ms` is mapped.
    #[inline]
    pub(crate) fn get(&self, ms: u64) -> Option<SlotId> {
        match self.lookup(ms) {
            Lookup::Mapped(id) => Some(id),
            Lookup::Vacant(_) | Lookup::Absent => None,
        }
    }

    /// Where `ms` is in the map, or would go: [`get`](Self::get) that also
    /// tells a direct duration's vacant slot whose page exists, so that a
    /// new list takes it ([`map_vacant`](Self::map_vacant)) with nothing
    /// looked up again.
    #[inline]
    pub(crate) fn lookup(&self, ms: u64) -> Lookup {
        if ms < DIRECT {
            let (p, s) = split(ms);
            match self.dir.get(p) {
                Some(&at) if at != NO_PAGE => {
                    let id = at * PAGE as u32 + s as u32;
                    if self.pool[id as usize].list.is_vacant() {
                        Lookup::Vacant(id)
                    } else {
                        Lookup::Mapped(id)
                    }
                }
                _ => Lookup::Absent,
            }
        } else {
            match self.far.get(&ms) {
                Some(&id) => Lookup::Mapped(id),
                None => Lookup::Absent,
            }
        }
    }

    /// [`slot`](Self::slot) without its bounds test.
    ///
    /// # Safety
    ///
    /// `id` is the slot of a mapped duration (a live list): by the module's
    /// invariants it is within the pool. Checked by a debug assertion in a
    /// debug build.
    #[inline(always)]
    pub(crate) unsafe fn slot_unchecked(&self, id: SlotId) -> &Slot {
        debug_assert!(
            self.pool
                .get(id as usize)
                .is_some_and(|s| !s.list.is_vacant())
        );
        // SAFETY: the caller promises a mapped slot, within the pool.
        unsafe { self.pool.get_unchecked(id as usize) }
    }

    /// [`slot_unchecked`](Self::slot_unchecked), mutably.
    ///
    /// # Safety
    ///
    /// As [`slot_unchecked`](Self::slot_unchecked).
    #[inline(always)]
    pub(crate) unsafe fn slot_unchecked_mut(&mut self, id: SlotId) -> &mut Slot {
        debug_assert!(
            self.pool
                .get(id as usize)
                .is_some_and(|s| !s.list.is_vacant())
        );
        // SAFETY: the caller promises a mapped slot, within the pool.
        unsafe { self.pool.get_unchecked_mut(id as usize) }
    }

    /// The slot `id` (from [`get`](Self::get), [`lookup`](Self::lookup) or
    /// a mapping, its duration still mapped).
    #[inline]
    pub(crate) fn slot(&self, id: SlotId) -> &Slot {
        &self.pool[id as usize]
    }

    /// The slot `id`, mutably.
    #[inline]
    pub(crate) fn slot_mut(&mut self, id: SlotId) -> &mut Slot {
        &mut self.pool[id as usize]
    }

    /// The duration mapped to the slot `id` (mapped): a direct one from
    /// the slot's place, with one load of its page's number; a far one
    /// out of line.
    #[inline]
    pub(crate) fn msecs(&self, id: SlotId) -> u64 {
        debug_assert!(!self.slot(id).list.is_vacant(), "slot {id} is vacant");
        match self.page_number(id) {
            FAR_PAGE => self.far_msecs(id),
            number => number as u64 * PAGE as u64 + (id as usize % PAGE) as u64,
        }
    }

    /// [`msecs`](Self::msecs) of a far duration's slot.
    #[cold]
    #[inline(never)]
    fn far_msecs(&self, id: SlotId) -> u64 {
        self.far_msecs[&id]
    }

    /// Whether the slot `id` (mapped) is a far duration's.
    #[inline(always)]
    fn is_far(&self, id: SlotId) -> bool {
        self.page_number(id) == FAR_PAGE
    }

    /// The number of the page of the slot `id` (mapped), or `FAR_PAGE`.
    /// A slot beyond the pool, which no mapped slot is, reads as far: its
    /// duration is then looked up among the far ones, which panics. A
    /// bounds test with a conditional move and no panic of its own: with a
    /// panicking test (a call), a cancel that empties its list ran at
    /// 0.891 of the unchecked load's speed (`timers-cancel-unpooled-end`,
    /// eleven alternating pairs, round 28); this costs it nothing
    /// measurable (round 34). Until round 34 the load was unchecked, in
    /// a function callers could not see was unsafe.
    #[inline(always)]
    fn page_number(&self, id: SlotId) -> u32 {
        let page = id as usize / PAGE;
        debug_assert!(
            page < self.page_numbers.len(),
            "slot {id} is beyond the pool"
        );
        self.page_numbers.get(page).copied().unwrap_or(FAR_PAGE)
    }

    /// [`remove_at`](Self::remove_at) of the slot of `ms`, known (the
    /// timers pass has it): a direct duration's with no load.
    #[inline]
    pub(crate) fn remove_at_of(&mut self, id: SlotId, ms: u64) {
        debug_assert_eq!(self.msecs(id), ms);
        if ms < DIRECT {
            self.vacate(id);
        } else {
            self.remove_far_at(id);
        }
    }

    /// Maps `ms` (at least 1, and not mapped yet) to a new list with an
    /// empty FIFO; returns its slot. The timers layer does the same in two
    /// steps, [`lookup`](Self::lookup) then [`map_vacant`](Self::map_vacant)
    /// or [`insert_slow`](Self::insert_slow), with the lookup's answer
    /// carried to where the list is made.
    #[cfg(test)]
    pub(crate) fn insert(&mut self, ms: u64) -> SlotId {
        match self.lookup(ms) {
            Lookup::Vacant(id) => self.map_vacant(id, ms),
            Lookup::Absent => self.insert_slow(ms),
            Lookup::Mapped(id) => panic!("{ms} is mapped already, to slot {id}"),
        }
    }

    /// Maps `ms`, which [`lookup`](Self::lookup) found
    /// [`Absent`](Lookup::Absent), to a new list with an empty FIFO: a
    /// direct duration's page is made first, a far one's slot taken from
    /// the far pages; returns its slot.
    #[cold]
    #[inline(never)]
    pub(crate) fn insert_slow(&mut self, ms: u64) -> SlotId {
        if ms < DIRECT {
            let (p, s) = split(ms);
            if self.dir.len() <= p {
                self.dir.resize(p + 1, NO_PAGE);
            }
            if self.dir[p] == NO_PAGE {
                self.dir[p] = self.new_page(p as u32);
            }
            return self.map_vacant(self.dir[p] * PAGE as u32 + s as u32, ms);
        }
        let id = match self.far_free.pop() {
            Some(id) => id,
            None => {
                let at = self.new_page(FAR_PAGE);
                let first = at * PAGE as u32;
                self.far_free.extend((first + 1..first + PAGE as u32).rev());
                first
            }
        };
        self.far.insert(ms, id);
        self.far_msecs.insert(id, ms);
        self.map_vacant(id, ms)
    }

    /// Maps `ms` to the vacant slot `id`, its duration's: a direct one's
    /// place in its page ([`Lookup::Vacant`]), or a far one's slot,
    /// already in the hash map.
    #[inline(always)]
    pub(crate) fn map_vacant(&mut self, id: SlotId, ms: u64) -> SlotId {
        debug_assert!(ms != 0, "a list of duration 0");
        debug_assert!(
            if ms < DIRECT {
                self.lookup(ms) == Lookup::Vacant(id)
            } else {
                self.far.get(&ms) == Some(&id)
            },
            "slot {id} is not {ms}'s"
        );
        self.len += 1;
        self.inserts = self.inserts.wrapping_add(1);
        let slot = self.slot_mut(id);
        debug_assert!(slot.list.is_vacant(), "{ms} is mapped already");
        slot.list = List::new();
        id
    }

    /// Unmaps `ms`, whose FIFO must be empty; returns the slot it had.
    #[cfg(test)]
    pub(crate) fn remove(&mut self, ms: u64) -> Option<SlotId> {
        let id = self.get(ms)?;
        self.remove_at(id);
        Some(id)
    }

    /// Unmaps the duration mapped to the slot `id`, whose FIFO must be
    /// empty.
    #[inline]
    pub(crate) fn remove_at(&mut self, id: SlotId) {
        if !self.remove_direct_at(id) {
            self.remove_far_at(id);
        }
    }

    /// [`remove_at`](Self::remove_at) of a far duration's slot.
    #[cold]
    #[inline(never)]
    fn remove_far_at(&mut self, id: SlotId) {
        self.vacate(id);
        let ms = self.far_msecs.remove(&id);
        debug_assert!(ms.is_some(), "far slot {id} has no duration");
        if let Some(ms) = ms {
            self.far.remove(&ms);
        }
        self.far_free.push(id);
    }

    /// [`remove_at`](Self::remove_at) of a slot whose duration is below
    /// `DIRECT` (no hash entry to remove), with no call; returns false,
    /// changing nothing, for one above.
    #[inline(always)]
    pub(crate) fn remove_direct_at(&mut self, id: SlotId) -> bool {
        if self.is_far(id) {
            return false;
        }
        self.vacate(id);
        true
    }

    /// The step both removals share: slot `id` (mapped, its FIFO empty)
    /// made vacant and uncounted.
    #[inline(always)]
    fn vacate(&mut self, id: SlotId) {
        let slot = std::mem::replace(self.slot_mut(id), VACANT);
        debug_assert!(!slot.list.is_vacant(), "slot {id} was vacant");
        debug_assert!(slot.list.is_empty(), "a list was unmapped with timers");
        self.len -= 1;
    }

    /// Durations mapped.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether no duration is mapped.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Durations mapped so far (wrapping).
    pub(crate) fn inserts(&self) -> u32 {
        self.inserts
    }

    /// Slots it holds (mapped or not) without allocating.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.pool.len()
    }

    /// Gives back the memory of a map that is empty and holds more than
    /// `above` slots' worth (pages and hash capacity), as the other
    /// structures shrink after a burst.
    pub(crate) fn shrink_if_empty(&mut self, above: usize) {
        if self.len != 0 {
            return;
        }
        if self.pool.len() > above {
            self.pool = Vec::new();
            self.dir = Vec::new();
            self.page_numbers = Vec::new();
            self.far_free = Vec::new();
        }
        if self.far.capacity() > above {
            self.far = HashMap::default();
            self.far_msecs = HashMap::default();
        }
    }

    /// A new page of vacant slots, numbered `number` (`FAR_PAGE` for far
    /// slots); returns its index in the pool.
    fn new_page(&mut self, number: u32) -> u32 {
        let len = self.pool.len();
        assert!(
            len + PAGE <= u32::MAX as usize,
            "more than 2^32 timer durations at once"
        );
        self.pool.resize(len + PAGE, VACANT);
        self.page_numbers.push(number);
        (len / PAGE) as u32
    }
}

#[inline]
fn split(ms: u64) -> (usize, usize) {
    let ms = ms as usize;
    (ms / PAGE, ms % PAGE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collections::list::Links;

    #[test]
    fn both_parts_map_and_unmap() {
        let mut m = DurationMap::default();
        let keys = [
            1,
            1023,
            1024,
            5000,
            DIRECT - 1,
            DIRECT,
            DIRECT + 7,
            u64::MAX,
        ];
        let mut ids = Vec::new();
        for &k in &keys {
            assert_eq!(m.get(k), None);
            ids.push(m.insert(k));
        }
        assert_eq!(m.len(), keys.len());
        assert_eq!(m.inserts(), keys.len() as u32);
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(m.get(k), Some(ids[i]), "{k}");
            assert_eq!(m.msecs(ids[i]), k);
        }
        assert_eq!(m.get(0), None, "0 is never mapped");
        assert_eq!(m.get(2), None);
        assert_eq!(m.get(DIRECT + 1), None);
        for (i, &k) in keys.iter().enumerate().rev() {
            assert_eq!(m.remove(k), Some(ids[i]));
            assert_eq!(m.remove(k), None);
            assert_eq!(m.get(k), None);
        }
        assert!(m.is_empty());
        m.shrink_if_empty(0);
        assert!(m.pool.is_empty() && m.dir.is_empty() && m.far_free.is_empty());
        let id = m.insert(5);
        assert_eq!(m.get(5), Some(id), "usable after shrinking");
    }

    /// Random inserts and removes against a `HashMap`, each mapped
    /// duration's FIFO holding one entry: slots are distinct, keep their
    /// list through the pool's growth, and far slots are reused.
    #[test]
    fn a_model_of_random_operations() {
        let mut m = DurationMap::default();
        let mut model = std::collections::HashMap::new();
        let mut links = vec![Links::default(); 20_000];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for i in 0..crate::test_steps(20_000) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = match x % 3 {
                0 => x % 2048,
                1 => x % (DIRECT + 4096),
                _ => x >> 20,
            }
            .max(1);
            if let std::collections::hash_map::Entry::Vacant(e) = model.entry(k) {
                // `insert` maps as the timers layer does: `lookup`, then
                // the vacant slot it found or `insert_slow`.
                let id = m.insert(k);
                assert_eq!(m.lookup(k), Lookup::Mapped(id));
                m.slot_mut(id).list.append(&mut links, i);
                e.insert(i);
            } else {
                let id = m.get(k).unwrap();
                assert_eq!(m.lookup(k), Lookup::Mapped(id));
                let entry = model.remove(&k).unwrap();
                assert_eq!(m.slot(id).list.peek(), Some(entry));
                m.slot_mut(id).list.remove(&mut links, entry);
                assert_eq!(m.remove(k), Some(id));
            }
            assert_eq!(m.len(), model.len());
        }
        let mut seen = std::collections::HashSet::new();
        for (&k, &v) in &model {
            let id = m.get(k).unwrap();
            assert!(seen.insert(id), "two durations share slot {id}");
            assert_eq!(m.msecs(id), k);
            assert_eq!(m.slot(id).list.peek(), Some(v));
            assert_eq!(List::next_of(&links, v), None, "one entry");
        }
        assert!(m.far_free.len() < PAGE * 2, "far slots are reused");
    }

    /// `lookup` tells a mapped duration from an unmapped one whose slot is
    /// ready (a direct duration whose page exists) and from one with no
    /// slot yet (no page, or far); the vacant slot it gives is the one
    /// `insert` would have taken.
    #[test]
    fn lookup_tells_mapped_from_vacant_from_absent() {
        let mut m = DurationMap::default();
        assert_eq!(m.lookup(5), Lookup::Absent, "no page yet");
        assert_eq!(m.lookup(DIRECT), Lookup::Absent, "far");
        let five = m.insert(5);
        assert_eq!(m.lookup(5), Lookup::Mapped(five));
        let Lookup::Vacant(six) = m.lookup(6) else {
            panic!("6's page exists: {:?}", m.lookup(6));
        };
        assert_eq!(m.lookup(PAGE as u64 + 6), Lookup::Absent, "the next page");
        let mut other = DurationMap::default();
        other.insert(5);
        assert_eq!(other.insert(6), six, "where insert puts it");
        assert_eq!(m.map_vacant(six, 6), six);
        assert_eq!(m.get(6), Some(six));
        assert_eq!(m.msecs(six), 6);
        assert_eq!(m.len(), 2);
        let far = m.insert_slow(DIRECT + 3);
        assert_eq!(m.lookup(DIRECT + 3), Lookup::Mapped(far));
        assert_eq!(m.msecs(far), DIRECT + 3);
        m.remove(6);
        assert_eq!(m.lookup(6), Lookup::Vacant(six), "vacant again");
    }

    /// A slot is the list: its FIFO, 8 bytes.
    #[test]
    fn a_slot_is_eight_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 8);
        assert_eq!(std::mem::size_of::<List>(), 8);
    }
}
