//! A map from a timer duration (whole ms) to a list index, shaped like the
//! object Node keeps it in.
//!
//! Node's `timerListMap` is a plain object keyed by duration. V8 keeps an
//! object's small integer keys as a dense array ("elements"), so Node's
//! lookup of a duration is an index, and durations created or removed in
//! order walk memory in order. A hash map spreads them instead: each
//! lookup or removal of one of a million durations misses the cache
//! (clearing a million one-timer lists from the newest was half Node's
//! speed). This map does what V8 does: durations below [`DIRECT`] live in a
//! paged direct table (pages of [`PAGE`] slots, made on first use), and
//! longer ones in a hash map. The pages live in one pool (a `Vec` of
//! pages), so a burst's pages are one allocation that shrinking gives back
//! to the OS whole, not a thousand small ones that fragment the heap.
//!
//! Invariants: a duration is in exactly one of the two parts (the table
//! below `DIRECT`, the hash map from it); `len` counts both; an empty slot
//! holds `EMPTY`, a directory entry without a page `NO_PAGE`. List indexes
//! are below `u32::MAX`.

use std::collections::HashMap;

use super::hash::BuildIntHasher;

/// Slots per page of the direct table: 4 KiB of `u32`.
const PAGE: usize = 1024;
/// Durations below this are in the direct table: 2^22 ms (about 70 min);
/// at most 4,096 pages, so the page directory stays within 32 KiB.
const DIRECT: u64 = 1 << 22;
const EMPTY: u32 = u32::MAX;
const NO_PAGE: u32 = u32::MAX;

#[derive(Default)]
pub(crate) struct DurationMap {
    /// Page number -> index in `pool`, or `NO_PAGE`.
    dir: Vec<u32>,
    pool: Vec<[u32; PAGE]>,
    far: HashMap<u64, usize, BuildIntHasher>,
    len: usize,
}

impl DurationMap {
    /// The list for `ms`.
    #[inline]
    pub(crate) fn get(&self, ms: u64) -> Option<usize> {
        if ms < DIRECT {
            let (p, s) = split(ms);
            let &at = self.dir.get(p)?;
            if at == NO_PAGE {
                return None;
            }
            let lk = self.pool[at as usize][s];
            (lk != EMPTY).then_some(lk as usize)
        } else {
            self.far.get(&ms).copied()
        }
    }

    /// Maps `ms` to `lk` (which must not be mapped yet).
    pub(crate) fn insert(&mut self, ms: u64, lk: usize) {
        debug_assert!(self.get(ms).is_none(), "{ms} is mapped already");
        debug_assert!(lk < EMPTY as usize);
        self.len += 1;
        if ms >= DIRECT {
            self.far.insert(ms, lk);
            return;
        }
        let (p, s) = split(ms);
        if self.dir.len() <= p {
            self.dir.resize(p + 1, NO_PAGE);
        }
        if self.dir[p] == NO_PAGE {
            self.dir[p] = self.pool.len() as u32;
            self.pool.push([EMPTY; PAGE]);
        }
        self.pool[self.dir[p] as usize][s] = lk as u32;
    }

    /// Unmaps `ms`; returns its list.
    pub(crate) fn remove(&mut self, ms: u64) -> Option<usize> {
        let lk = if ms < DIRECT {
            let (p, s) = split(ms);
            let &at = self.dir.get(p)?;
            if at == NO_PAGE {
                return None;
            }
            let lk = std::mem::replace(&mut self.pool[at as usize][s], EMPTY);
            (lk != EMPTY).then_some(lk as usize)
        } else {
            self.far.remove(&ms)
        };
        if lk.is_some() {
            self.len -= 1;
        }
        lk
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
        }
        if self.far.capacity() > above {
            self.far = HashMap::default();
        }
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
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(m.get(k), None);
            m.insert(k, i);
        }
        assert_eq!(m.len(), keys.len());
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(m.get(k), Some(i), "{k}");
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
        assert!(m.pool.is_empty() && m.dir.is_empty());
        m.insert(5, 1);
        assert_eq!(m.get(5), Some(1), "usable after shrinking");
    }

    #[test]
    fn a_model_of_random_operations() {
        let mut m = DurationMap::default();
        let mut model = std::collections::HashMap::new();
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
                m.insert(k, i);
                e.insert(i);
            } else {
                assert_eq!(m.remove(k), model.remove(&k));
            }
            assert_eq!(m.len(), model.len());
        }
        for (&k, &v) in &model {
            assert_eq!(m.get(k), Some(v));
        }
    }
}
