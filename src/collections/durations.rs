//! A map from a timer duration (whole ms) to its list: the list's index
//! and the list's FIFO itself, in one 16-byte slot. Shaped like the object
//! Node keeps it in.
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
//! pages live in one pool (a `Vec` of pages), so a burst's pages are one
//! allocation that shrinking gives back to the OS whole, not a thousand
//! small ones that fragment the heap.
//!
//! A slot holds the list's FIFO beside its index, so appending a timer to
//! the list of a duration that has one reads one line after the page
//! directory: with the FIFO in an array by list index, the append read the
//! slot, then (a dependent load) the FIFO. Every slot has a [`SlotId`], its
//! position in the pool, which stays the same while its duration is
//! mapped: a linked timer keeps its list's id and reaches the FIFO with
//! one index, as it did by list index.
//!
//! Invariants: a duration is in exactly one of the two parts (the table
//! below `DIRECT`, the hash map from it); `len` counts both; a vacant slot
//! holds [`VACANT`] (its `lk` is `EMPTY`), a directory entry without a
//! page `NO_PAGE`; a far duration's slot is in no directory page and,
//! while vacant, in `far_free`; list indexes are below `u32::MAX`; a slot
//! is vacated only with its FIFO empty.

use std::collections::HashMap;

use super::hash::BuildIntHasher;
use super::list::List;

/// Slots per page: 16 KiB of 16-byte slots.
const PAGE: usize = 1024;
/// Durations below this are in the direct table: 2^22 ms (about 70 min);
/// at most 4,096 pages, so the page directory stays within 16 KiB.
const DIRECT: u64 = 1 << 22;
const EMPTY: u32 = u32::MAX;
const NO_PAGE: u32 = u32::MAX;

/// A slot's position in the pool (page index × [`PAGE`] + offset).
pub(crate) type SlotId = u32;

/// What the map keeps for a duration: its list's index and FIFO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    /// The list's index (in the timers' list arena); `EMPTY` if vacant.
    pub(crate) lk: u32,
    /// The list's timers, oldest first.
    pub(crate) list: List,
}

/// A slot with no duration mapped to it.
const VACANT: Slot = Slot {
    lk: EMPTY,
    list: List::new(),
};

#[derive(Default)]
pub(crate) struct DurationMap {
    /// Page number -> index in `pool`, or `NO_PAGE`.
    dir: Vec<u32>,
    pool: Vec<[Slot; PAGE]>,
    /// A far duration -> its slot.
    far: HashMap<u64, SlotId, BuildIntHasher>,
    /// Vacant slots of the far durations' pages.
    far_free: Vec<SlotId>,
    len: usize,
}

impl DurationMap {
    /// The slot of `ms`, if `ms` is mapped.
    #[inline]
    pub(crate) fn get(&self, ms: u64) -> Option<SlotId> {
        if ms < DIRECT {
            let (p, s) = split(ms);
            let &at = self.dir.get(p)?;
            if at == NO_PAGE {
                return None;
            }
            let lk = self.pool[at as usize][s].lk;
            (lk != EMPTY).then_some(at * PAGE as u32 + s as u32)
        } else {
            self.far.get(&ms).copied()
        }
    }

    /// The slot `id` (from [`get`](Self::get) or [`insert`](Self::insert),
    /// its duration still mapped).
    #[inline]
    pub(crate) fn slot(&self, id: SlotId) -> &Slot {
        &self.pool.as_flattened()[id as usize]
    }

    /// The slot `id`, mutably.
    #[inline]
    pub(crate) fn slot_mut(&mut self, id: SlotId) -> &mut Slot {
        &mut self.pool.as_flattened_mut()[id as usize]
    }

    /// Maps `ms` (which must not be mapped yet) to the list `lk`, with an
    /// empty FIFO; returns its slot.
    pub(crate) fn insert(&mut self, ms: u64, lk: usize) -> SlotId {
        debug_assert!(self.get(ms).is_none(), "{ms} is mapped already");
        debug_assert!(lk < EMPTY as usize);
        self.len += 1;
        let id = if ms < DIRECT {
            let (p, s) = split(ms);
            if self.dir.len() <= p {
                self.dir.resize(p + 1, NO_PAGE);
            }
            if self.dir[p] == NO_PAGE {
                self.dir[p] = self.new_page();
            }
            self.dir[p] * PAGE as u32 + s as u32
        } else {
            let id = match self.far_free.pop() {
                Some(id) => id,
                None => {
                    let at = self.new_page();
                    let first = at * PAGE as u32;
                    self.far_free.extend((first + 1..first + PAGE as u32).rev());
                    first
                }
            };
            self.far.insert(ms, id);
            id
        };
        let slot = self.slot_mut(id);
        debug_assert_eq!(*slot, VACANT);
        slot.lk = lk as u32;
        id
    }

    /// Unmaps `ms`, whose FIFO must be empty; returns its list's index.
    #[cfg(test)]
    pub(crate) fn remove(&mut self, ms: u64) -> Option<usize> {
        let id = self.get(ms)?;
        Some(self.remove_at(id, ms))
    }

    /// Unmaps `ms`, mapped to the slot `id`, whose FIFO must be empty;
    /// returns its list's index.
    #[inline]
    pub(crate) fn remove_at(&mut self, id: SlotId, ms: u64) -> usize {
        debug_assert_eq!(self.get(ms), Some(id));
        if ms >= DIRECT {
            self.far.remove(&ms);
            self.far_free.push(id);
        }
        let slot = std::mem::replace(self.slot_mut(id), VACANT);
        debug_assert!(slot.list.is_empty(), "a list was unmapped with timers");
        self.len -= 1;
        slot.lk as usize
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Gives back the memory of a map that is empty and holds more than
    /// `above` slots' worth (pages and hash capacity), as the other
    /// structures shrink after a burst.
    pub(crate) fn shrink_if_empty(&mut self, above: usize) {
        if self.len != 0 {
            return;
        }
        if self.pool.len() * PAGE > above {
            self.pool = Vec::new();
            self.dir = Vec::new();
            self.far_free = Vec::new();
        }
        if self.far.capacity() > above {
            self.far = HashMap::default();
        }
    }

    /// A new page of vacant slots; returns its index in the pool.
    fn new_page(&mut self) -> u32 {
        let at = self.pool.len();
        assert!(
            (at + 1) * PAGE <= EMPTY as usize,
            "more than 2^32 timer durations at once"
        );
        self.pool.push([VACANT; PAGE]);
        at as u32
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
            0,
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
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(m.get(k), None);
            ids.push(m.insert(k, i));
        }
        assert_eq!(m.len(), keys.len());
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(m.get(k), Some(ids[i]), "{k}");
            assert_eq!(m.slot(ids[i]).lk as usize, i);
        }
        assert_eq!(m.get(2), None);
        assert_eq!(m.get(DIRECT + 1), None);
        for (i, &k) in keys.iter().enumerate().rev() {
            assert_eq!(m.remove(k), Some(i));
            assert_eq!(m.remove(k), None);
            assert_eq!(m.get(k), None);
        }
        assert_eq!(m.len(), 0);
        m.shrink_if_empty(0);
        assert!(m.pool.is_empty() && m.dir.is_empty() && m.far_free.is_empty());
        let id = m.insert(5, 1);
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
        for i in 0..20_000usize {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = match x % 3 {
                0 => x % 2048,
                1 => x % (DIRECT + 4096),
                _ => x >> 20,
            };
            if let std::collections::hash_map::Entry::Vacant(e) = model.entry(k) {
                let id = m.insert(k, i);
                m.slot_mut(id).list.append(&mut links, i);
                e.insert(i);
            } else {
                let id = m.get(k).unwrap();
                let lk = model.remove(&k).unwrap();
                assert_eq!(m.slot(id).list.peek(), Some(lk));
                m.slot_mut(id).list.remove(&mut links, lk);
                assert_eq!(m.remove(k), Some(lk));
            }
            assert_eq!(m.len(), model.len());
        }
        let mut seen = std::collections::HashSet::new();
        for (&k, &v) in &model {
            let id = m.get(k).unwrap();
            assert!(seen.insert(id), "two durations share slot {id}");
            assert_eq!(m.slot(id).lk as usize, v);
            assert_eq!(m.slot(id).list.peek(), Some(v));
            assert_eq!(m.slot(id).list.len(), 1);
        }
        assert!(m.far_free.len() < PAGE * 2, "far slots are reused");
    }
}
