//! An 8-ary min-heap of small integer ids that tracks each id's position.
//!
//! Each id (a small integer: a slab key, a map slot) in the heap has a key of two
//! words, `(primary, tie)`, ordered as a pair. The heap keeps a position
//! table indexed by id, so an arbitrary entry can be removed or re-keyed
//! in O(log n), which is what both Node's `PriorityQueue`
//! (`priorityQueuePosition`) and libuv's intrusive timer heap provide.
//! Like Node's `lib/internal/priority_queue.js`, it knows nothing of
//! timers; its two users key by `(expiry, list id)` and `(due, start id)`.
//!
//! The heap is 8-ary rather than binary: a third of the levels. A new
//! minimum rises past one parent a level (the heap of lists, where every
//! new list of a shorter duration than all others is one:
//! `timers-insert-unpooled-end`), and a hole sinks along the least child
//! a level, whose eight entries (128 bytes) are read together; a million
//! entries are seven levels deep, not twenty. It was 4-ary until round 26
//! of issue 12: eight children made an unpooled-end insert 887 → 785
//! instructions (1.05× in pairs) and an unpooled-start cancel (the root of
//! a million lists) 151 → 129 (1.19×). With unique keys, the arity cannot
//! change which entry is the minimum.
//!
//! An entry is the primary word, the id and the tie word, 16 bytes: the
//! tie word is 32 bits, in what would be the padding after the id. Until
//! round 28 of issue 12 it was 64 bits, kept by id in a table of its own
//! (8 bytes more for every id the heap had held, and a load of another
//! line when two primaries tied); a million one-timer lists made 8% fewer
//! page faults without it (`timers-insert-unpooled-start` 1.07× in pairs). Tie
//! words come from a caller's counter (a list id, a start id), which
//! runs out after 2^32 keys: before it would wrap, the caller has the
//! heap [renumber](PriorityQueue::renumber) its live entries `0..n` in
//! key order, which moves none, and goes on from `n`.
//!
//! The position table is indexed by id, so it spans the
//! largest id inserted: ids should be dense. The heap of lists uses a
//! list's duration-map slot id, dense where the map's pages are full and
//! otherwise as sparse as they are (4 bytes per slot of a page, beside
//! the page's own 8).
//!
//! An entry can also be *discarded* ([`PriorityQueue::discard_id`]): its id
//! leaves at once (absent, free to be inserted again), but its entry stays
//! in place, dead, until it comes to the root or dead entries outnumber
//! live ones, when the heap is rebuilt around the live ones in O(n)
//! (Floyd's heapify). That is the lazy deletion of Go's runtime timers
//! (`clearDeletedTimers`): a run of discards costs O(1) each, amortized,
//! where removing each one would sift a hole down O(log n) levels (the
//! heap of lists, where a `clearTimeout` that empties a list removes it:
//! `timers-cancel-unpooled-start` removes the root of a million lists
//! every time). [`discard_last`](PriorityQueue::discard_last) is the
//! cheapest case on its own, for a caller that wants it without a call:
//! the last entry (the newest list, which mostly stays where it lands)
//! is removed at once. Only [`peek`](PriorityQueue::peek) and
//! [`pop`](PriorityQueue::pop) clear dead entries off the root, so only a
//! heap whose owner discards needs `&mut` to peek; the others can use
//! [`peek_live`](PriorityQueue::peek_live).
//!
//! Ground rules:
//! - an id is in the heap at most once;
//! - keys are totally ordered and callers make them unique (a list id, a
//!   start id), so the minimum is never ambiguous and the heap's shape can
//!   never change which entry is seen first;
//! - a dead entry's id is [`DEAD`]; `dead` counts them, and is at most
//!   half the entries when a discard returns: more, and the discard
//!   rebuilds the heap (an empty one is cleared);
//! - a dead entry keeps its primary word, and comes before every live
//!   entry with the same primary (dead ones tie with each other), so the
//!   order of live entries is the order of their keys, dead ones or not.
#![forbid(unsafe_code)]

const ABSENT: u32 = u32::MAX;

/// The id of a dead entry: no id's (`id32` refuses it).
const DEAD: u32 = ABSENT;

/// Children per node.
const ARITY: usize = 8;

/// A heap key: the primary word, then the tie word.
pub type HeapKey = (u64, u32);

/// A heap entry: 16 bytes, the tie word in what would be the padding
/// after the id.
#[derive(Clone, Copy, Debug)]
struct Entry {
    primary: u64,
    /// The entry's id, or [`DEAD`].
    id: u32,
    tie: u32,
}

/// An indexed 8-ary min-heap; see the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct PriorityQueue {
    /// The entries (primary, id, tie) in heap order.
    heap: Vec<Entry>,
    /// Heap position by id, or `ABSENT`.
    pos: Vec<u32>,
    /// Dead entries in `heap`.
    dead: usize,
}

fn id32(id: usize) -> u32 {
    u32::try_from(id)
        .ok()
        .filter(|&i| i != ABSENT)
        .expect("heap id does not fit 32 bits")
}

impl PriorityQueue {
    /// An empty heap.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of (live) entries.
    pub fn len(&self) -> usize {
        self.heap.len() - self.dead
    }

    /// Entries it can hold without allocating (by id, the larger of the
    /// heap and the position table).
    pub fn capacity(&self) -> usize {
        self.heap.capacity().max(self.pos.capacity())
    }

    #[cfg(test)]
    /// Whether the heap is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The heap position of `id`, if it is in the heap: the one test of
    /// the position table.
    #[inline(always)]
    fn position(&self, id: usize) -> Option<usize> {
        match self.pos.get(id) {
            Some(&at) if at != ABSENT => Some(at as usize),
            _ => None,
        }
    }

    /// Whether entry `a` comes before entry `b`: by primary word, then
    /// (only when those are equal) by tie word, a dead entry before any
    /// live one.
    #[inline(always)]
    fn before(&self, a: Entry, b: Entry) -> bool {
        a.primary < b.primary || (a.primary == b.primary && Self::tie_before(a, b))
    }

    /// [`before`](Self::before) for equal primaries.
    #[inline(always)]
    fn tie_before(a: Entry, b: Entry) -> bool {
        if a.id == DEAD || b.id == DEAD {
            return a.id == DEAD && b.id != DEAD;
        }
        a.tie < b.tie
    }

    /// The minimum entry as `(id, key)`, after clearing dead entries off
    /// the root.
    #[inline]
    pub fn peek(&mut self) -> Option<(usize, HeapKey)> {
        if self.heap.first().is_some_and(|e| e.id == DEAD) {
            self.clear_dead_root();
        }
        self.peek_live()
    }

    /// The minimum entry as `(id, key)`, for a heap whose root is live:
    /// one nobody [discards](Self::discard_id) from, or just
    /// [peeked](Self::peek).
    pub fn peek_live(&self) -> Option<(usize, HeapKey)> {
        let e = self.heap.first()?;
        // A dead root has no key: this panics rather than answer.
        assert!(e.id != DEAD, "peek_live found a dead root");
        Some((e.id as usize, (e.primary, e.tie)))
    }

    /// Removes dead entries from the root until it is live (or the heap
    /// is empty).
    #[cold]
    #[inline(never)]
    fn clear_dead_root(&mut self) {
        while self.heap.first().is_some_and(|e| e.id == DEAD) {
            self.dead -= 1;
            self.remove_at(0);
        }
    }

    #[cfg(test)]
    /// Whether `id` is in the heap.
    pub fn contains(&self, id: usize) -> bool {
        self.position(id).is_some()
    }

    #[cfg(test)]
    /// The key of `id`, if it is in the heap.
    pub fn key(&self, id: usize) -> Option<HeapKey> {
        let at = self.position(id)?;
        Some((self.heap[at].primary, self.heap[at].tie))
    }

    /// The tie word of `id`'s key, if `id` is in the heap: for a caller
    /// whose tie words are unique (a list id), which entry `id` is now.
    #[inline]
    pub fn tie_of(&self, id: usize) -> Option<u32> {
        self.position(id).map(|at| self.heap[at].tie)
    }

    /// Inserts `id` with `key`. `id` must not be in the heap.
    ///
    /// Inlined where it is called (the timers layer's new list): an id
    /// the tables cover, or the next one while they have room, is written
    /// in place with no call; growing them is out of line
    /// ([`insert_growing`](Self::insert_growing)).
    #[inline]
    pub fn insert(&mut self, id: usize, key: HeapKey) {
        // First, so that an id out of range writes nothing.
        let id32 = id32(id);
        let at = self.heap.len();
        let room = at < self.heap.capacity();
        if room && id < self.pos.len() {
            debug_assert_eq!(self.pos[id], ABSENT, "id {id} inserted twice");
            self.pos[id] = at as u32;
        } else if room && id == self.pos.len() && id < self.pos.capacity() {
            // Ids mostly grow one at a time (list slots of durations made
            // in order, libuv start ids): a push, with room.
            self.pos.push(at as u32);
        } else {
            return self.insert_growing(id, key);
        }
        self.heap.push(Entry {
            primary: key.0,
            id: id32,
            tie: key.1,
        });
        // Most new entries stay where they land (a new list due after its
        // parent's): asked here, without a call.
        if self.belongs_above(at) {
            self.sift_up(at);
        }
    }

    /// [`insert`](Self::insert) where a table must grow first: the heap
    /// and the tables are given room for `id` (the ids skipped up to it
    /// absent), and the insert is made again, on its inlined path.
    #[cold]
    #[inline(never)]
    fn insert_growing(&mut self, id: usize, key: HeapKey) {
        self.heap.reserve(1);
        if id > self.pos.len() {
            self.pos.resize(id, ABSENT);
        }
        if id == self.pos.len() {
            self.pos.reserve(1);
        }
        self.insert(id, key);
    }

    /// Removes `id`, returning its key, or `None` if it was not there.
    #[inline]
    pub fn remove(&mut self, id: usize) -> Option<HeapKey> {
        let at = self.position(id)?;
        let tie = self.heap[at].tie;
        self.pos[id] = ABSENT;
        let primary = self.remove_at(at);
        Some((primary, tie))
    }

    /// Removes the entry at `at`, whose id's position is already cleared,
    /// and returns its primary word.
    #[inline(always)]
    fn remove_at(&mut self, at: usize) -> u64 {
        // The last entry fills the hole (nothing to move if it is the one
        // removed: the newest list, say).
        let primary = self.heap.swap_remove(at).primary;
        if at < self.heap.len() {
            let filler = self.heap[at].id;
            if filler != DEAD {
                self.pos[filler as usize] = at as u32;
            }
            if ARITY * at + 1 >= self.heap.len() {
                // A leaf (seven places in eight): the filler can only rise,
                // and mostly stays.
                if self.belongs_above(at) {
                    self.sift_up(at);
                }
            } else {
                self.restore_removed(at);
            }
        }
        primary
    }

    /// Removes `id` as [`remove`](Self::remove) does, but lazily: `id` is
    /// absent at once, and its entry, unless it is a leaf (removed at
    /// once, cheaply), stays, dead, until a [`peek`](Self::peek) finds it
    /// at the root or dead entries outnumber live ones, when the heap is
    /// rebuilt (see the [module docs](self)). O(1), amortized; a rebuild
    /// is O(n). Returns whether `id` was in the heap; its key is not
    /// read (the tie word's bounds test was three instructions of an
    /// unpooled cancel).
    #[inline(always)]
    pub fn discard_id(&mut self, id: usize) -> bool {
        self.discard_entry(id).is_some()
    }

    /// [`discard_id`](Self::discard_id) where it makes no call: `id`'s
    /// entry is the last one (the newest list, say, which stayed where it
    /// landed) and no rebuild is due, so it is removed at once, with no
    /// sift. Returns false, having changed nothing, otherwise (the caller
    /// discards it the general way). `id` must be in the heap.
    #[inline(always)]
    pub fn discard_last(&mut self, id: usize) -> bool {
        let Some(at) = self.position(id) else {
            return false;
        };
        if at + 1 != self.heap.len() || self.dead * 2 > at {
            return false;
        }
        self.heap.truncate(at);
        self.pos[id] = ABSENT;
        true
    }

    /// [`discard_id`](Self::discard_id), returning the key `id` had: the
    /// tests' form, checked against a model.
    #[cfg(test)]
    pub fn discard(&mut self, id: usize) -> Option<HeapKey> {
        let tie = self.position(id).map(|at| self.heap[at].tie);
        let primary = self.discard_entry(id)?;
        Some((primary, tie.expect("an id in the heap has a tie word")))
    }

    /// [`discard_id`](Self::discard_id)'s work; returns the entry's primary.
    #[inline(always)]
    fn discard_entry(&mut self, id: usize) -> Option<u64> {
        let at = self.position(id)?;
        self.pos[id] = ABSENT;
        let primary = self.heap[at].primary;
        if ARITY * at + 1 >= self.heap.len() {
            // A leaf (seven entries in eight): removed at once, which costs
            // no sift down, and the filler mostly stays where it lands.
            self.remove_at(at);
        } else {
            self.bury(at);
        }
        if self.dead * 2 > self.heap.len() {
            self.rebuild();
        }
        Some(primary)
    }

    /// Leaves the entry at `at`, not a leaf, dead in place.
    #[inline(never)]
    fn bury(&mut self, at: usize) {
        // Dead, it comes before the live entries of its primary, so it may
        // now belong above a parent of that primary: a decrease of its key
        // (most parents' primaries are smaller, and the root has none).
        self.heap[at].id = DEAD;
        self.dead += 1;
        if self.belongs_above(at) {
            self.sift_up(at);
        }
    }

    /// Drops the dead entries and makes a heap of the live ones again:
    /// Floyd's heapify, from the last parent up, O(n).
    #[cold]
    #[inline(never)]
    fn rebuild(&mut self) {
        self.heap.retain(|e| e.id != DEAD);
        self.dead = 0;
        for (at, e) in self.heap.iter().enumerate() {
            self.pos[e.id as usize] = at as u32;
        }
        if self.heap.len() > 1 {
            for at in (0..=(self.heap.len() - 2) / ARITY).rev() {
                self.sift_down(at);
            }
        }
    }

    /// Removes and returns the minimum entry.
    #[cfg(test)]
    pub fn pop(&mut self) -> Option<(usize, HeapKey)> {
        let (id, key) = self.peek()?;
        self.remove(id);
        Some((id, key))
    }

    /// Gives `id` a new key and moves it to its place.
    ///
    /// # Panics
    ///
    /// If `id` is not in the heap (a caller's bug).
    pub fn set_key(&mut self, id: usize, key: HeapKey) {
        assert!(self.update(id, key), "set_key of absent id {id}");
    }

    /// Gives `id` a new key if it is in the heap, and says whether it was.
    /// For an `id` in the heap it is [`remove`](Self::remove) then
    /// [`insert`](Self::insert) in one step; an absent `id` is left out
    /// (the caller inserts it).
    pub fn update(&mut self, id: usize, key: HeapKey) -> bool {
        let Some(at) = self.position(id) else {
            return false;
        };
        let e = &mut self.heap[at];
        let old = (e.primary, e.tie);
        (e.primary, e.tie) = key;
        // A key that went down can only rise, and one that went up can
        // only sink: one direction is asked, not both. (Re-arming the loop's
        // one timer handle earlier, a new earliest timer's every time, was
        // a call to sift a root down that has no children.)
        if key < old {
            if self.belongs_above(at) {
                self.sift_up(at);
            }
        } else {
            self.sift_down(at);
        }
        true
    }

    /// Gives the live entries the tie words `0..n`, in key order, and
    /// returns `n`: for a caller whose tie words come from a 32-bit counter
    /// (a list id, a start id) that is about to run out, and which goes on
    /// from `n`. Every entry keeps its place in the order, among the live
    /// and the dead, so none moves; a tie word given after is larger than
    /// all of them. O(n log n), and only as often as the counter wraps.
    ///
    /// # Panics
    ///
    /// If `u32::MAX` or more entries are live (their ids would not fit).
    #[cold]
    #[inline(never)]
    pub fn renumber(&mut self) -> u32 {
        let heap = &mut self.heap;
        let mut live: Vec<u32> = (0..heap.len() as u32)
            .filter(|&at| heap[at as usize].id != DEAD)
            .collect();
        live.sort_unstable_by_key(|&at| (heap[at as usize].primary, heap[at as usize].tie));
        for (rank, &at) in live.iter().enumerate() {
            heap[at as usize].tie = rank as u32;
        }
        u32::try_from(live.len())
            .ok()
            .filter(|&n| n != u32::MAX)
            .expect("fewer than u32::MAX live entries")
    }

    /// Whether the entry at `at` comes before its parent's.
    #[inline(always)]
    fn belongs_above(&self, at: usize) -> bool {
        at > 0 && self.before(self.heap[at], self.heap[(at - 1) / ARITY])
    }

    /// Restores the heap's order at the hole a removal filled with the
    /// last entry, which belongs low (it was a leaf, and as late as any):
    /// the hole goes down to a leaf along the least children, without
    /// comparing the entry at each level, and the entry then rises from
    /// there, where it mostly stays (Floyd's bottom-up sift). Removing the
    /// root of a hundred thousand lists (`timers-cancel-unpooled-start`): 777 → 609
    /// instructions per cancel, with [`least_of_family`](Self::least_of_family) (of four then).
    fn restore_removed(&mut self, at: usize) {
        if self.dead == 0 {
            self.restore_removed_in::<false>(at);
        } else {
            self.restore_removed_in::<true>(at);
        }
    }

    /// [`restore_removed`](Self::restore_removed); `D`: the heap may hold
    /// dead entries (see [`place`](Self::place)).
    fn restore_removed_in<const D: bool>(&mut self, at: usize) {
        if self.belongs_above(at) {
            self.sift_up_in::<D>(at);
            return;
        }
        let top = at;
        let mut at = at;
        let entry = self.heap[at];
        while let Some((child, c)) = self.least_child(at) {
            self.place::<D>(at, c);
            at = child;
        }
        let at = self.rise::<D>(entry, at, top);
        self.place::<D>(at, entry);
    }

    /// The position of `at`'s least child and that child, if it has
    /// children.
    #[inline(always)]
    fn least_child(&self, at: usize) -> Option<(usize, Entry)> {
        let first = ARITY * at + 1;
        let len = self.heap.len();
        if first >= len {
            None
        } else if first + ARITY <= len {
            Some(self.least_of_family(first))
        } else {
            let c = self.least_of(first, len);
            Some((c, self.heap[c]))
        }
    }

    /// Moves down the ancestors of the hole at `at`, up to `top`, that
    /// `entry` comes before; returns where `entry` belongs (not placed).
    #[inline(always)]
    fn rise<const D: bool>(&mut self, entry: Entry, mut at: usize, top: usize) -> usize {
        while at > top {
            let parent = (at - 1) / ARITY;
            if !self.before(entry, self.heap[parent]) {
                break;
            }
            let p = self.heap[parent];
            self.place::<D>(at, p);
            at = parent;
        }
        at
    }

    /// The position of the least of the `ARITY` entries from `first` (a
    /// full family of children), and that entry: one bounds check, not
    /// one per read, and the entry is not read again. The comparisons run
    /// in a row; a tournament (pairs, then pairs of winners) was slower
    /// (`baseline timerloop expire random 1e5`, 0.88×).
    #[inline(always)]
    fn least_of_family(&self, first: usize) -> (usize, Entry) {
        let g: &[Entry; ARITY] = match self.heap[first..first + ARITY].try_into() {
            Ok(g) => g,
            Err(_) => unreachable!("a slice of ARITY entries"),
        };
        let mut least = 0;
        for c in 1..ARITY {
            if self.before(g[c], g[least]) {
                least = c;
            }
        }
        (first + least, g[least])
    }

    /// The position of the least entry in `first..end`.
    #[inline(always)]
    fn least_of(&self, first: usize, end: usize) -> usize {
        let mut least = first;
        for c in first + 1..end {
            if self.before(self.heap[c], self.heap[least]) {
                least = c;
            }
        }
        least
    }

    /// Puts `entry` at `at` and notes its position. `D`: the heap may hold
    /// dead entries, which have no position to note; a heap with none (the
    /// usual case, and always the libuv heap's) sifts without asking.
    #[inline(always)]
    fn place<const D: bool>(&mut self, at: usize, entry: Entry) {
        if !D || entry.id != DEAD {
            self.pos[entry.id as usize] = at as u32;
        }
        self.heap[at] = entry;
    }

    fn sift_up(&mut self, from: usize) {
        if self.dead == 0 {
            self.sift_up_in::<false>(from);
        } else {
            self.sift_up_in::<true>(from);
        }
    }

    fn sift_up_in<const D: bool>(&mut self, from: usize) {
        let entry = self.heap[from];
        let at = self.rise::<D>(entry, from, 0);
        // An entry that stays where it is (a new list due after its
        // parent's, the usual case) is already placed, its position noted.
        if at != from {
            self.place::<D>(at, entry);
        }
    }

    fn sift_down(&mut self, at: usize) {
        if self.dead == 0 {
            self.sift_down_in::<false>(at);
        } else {
            self.sift_down_in::<true>(at);
        }
    }

    fn sift_down_in<const D: bool>(&mut self, mut at: usize) {
        let entry = self.heap[at];
        while let Some((child, c)) = self.least_child(at) {
            if !self.before(c, entry) {
                break;
            }
            self.place::<D>(at, c);
            at = child;
        }
        self.place::<D>(at, entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator so the test needs no crates.
    pub(super) fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *state >> 33
    }

    /// What a model step does to an id that is in the heap.
    pub(super) enum Step {
        Remove,
        Discard,
        /// [`PriorityQueue::discard_last`], then, where it declines,
        /// [`PriorityQueue::discard`]: the timers layer's way.
        DiscardLast,
        Rekey,
        Pop,
    }

    /// A heap and a sorted model of it, driven together.
    pub(super) struct SortedModel {
        pub(super) q: PriorityQueue,
        model: std::collections::BTreeSet<(HeapKey, usize)>,
        keys: Vec<Option<HeapKey>>,
    }

    impl SortedModel {
        /// Room for ids below `ids`.
        pub(super) fn new(ids: usize) -> Self {
            SortedModel {
                q: PriorityQueue::new(),
                model: Default::default(),
                keys: vec![None; ids],
            }
        }

        /// Inserts `id` with `key` if it is absent; otherwise does `step`
        /// to it (`Rekey` gives it `key`; `Pop` pops the minimum, whatever
        /// it is), checking the heap's answer against the model's.
        pub(super) fn step(&mut self, id: usize, key: HeapKey, step: Step) {
            let q = &mut self.q;
            let Some(old) = self.keys[id] else {
                q.insert(id, key);
                self.model.insert((key, id));
                self.keys[id] = Some(key);
                return;
            };
            match step {
                Step::DiscardLast => {
                    let (len, dead) = (q.heap.len(), q.dead);
                    if q.discard_last(id) {
                        assert_eq!(q.heap.len(), len - 1, "the last entry went");
                        assert_eq!(q.dead, dead);
                        assert!(!q.contains(id));
                    } else {
                        assert_eq!((q.heap.len(), q.dead), (len, dead), "declined, unchanged");
                        assert_eq!(q.key(id), Some(old));
                        assert_eq!(q.discard(id), Some(old));
                    }
                    self.model.remove(&(old, id));
                    self.keys[id] = None;
                }
                Step::Remove | Step::Discard => {
                    let got = match step {
                        Step::Remove => q.remove(id),
                        _ => q.discard(id),
                    };
                    assert_eq!(got, Some(old));
                    self.model.remove(&(old, id));
                    self.keys[id] = None;
                }
                Step::Rekey => {
                    q.set_key(id, key);
                    self.model.remove(&(old, id));
                    self.model.insert((key, id));
                    self.keys[id] = Some(key);
                }
                Step::Pop => {
                    let (k, i) = *self.model.first().unwrap();
                    assert_eq!(q.pop(), Some((i, k)));
                    self.model.remove(&(k, i));
                    self.keys[i] = None;
                }
            }
        }

        /// The heap's minimum is the model's, and so is its length.
        pub(super) fn check_min(&mut self) {
            assert_eq!(self.q.len(), self.model.len());
            assert_eq!(
                self.q.peek().map(|(i, k)| (k, i)),
                self.model.first().copied()
            );
        }
    }

    #[test]
    fn pops_in_key_order() {
        let mut q = PriorityQueue::new();
        for (id, key) in [(0, 5), (1, 3), (2, 9), (3, 1), (4, 7)] {
            q.insert(id, (key, id as u32));
        }
        let order: Vec<usize> = std::iter::from_fn(|| q.pop().map(|(id, _)| id)).collect();
        assert_eq!(order, [3, 1, 0, 4, 2]);
        assert!(q.is_empty());
    }

    /// `tie_of` answers for present ids only, sparse ids included (a
    /// list's id is its duration map slot, which need not be dense).
    #[test]
    fn tie_of_is_the_present_entrys_tie_word() {
        let mut q = PriorityQueue::new();
        q.insert(5000, (9, 70));
        q.insert(3, (9, 71));
        assert_eq!((q.tie_of(5000), q.tie_of(3)), (Some(70), Some(71)));
        assert_eq!((q.tie_of(4), q.tie_of(1 << 20)), (None, None));
        q.set_key(5000, (1, 72));
        assert_eq!(q.tie_of(5000), Some(72));
        assert_eq!(q.remove(5000), Some((1, 72)));
        assert_eq!(q.tie_of(5000), None, "a removed id has no tie word");
        assert_eq!(q.peek(), Some((3, (9, 71))));
    }

    #[test]
    fn update_rekeys_a_present_id_and_leaves_an_absent_one_out() {
        let mut q = PriorityQueue::new();
        q.insert(0, (5, 0));
        q.insert(1, (3, 1));
        assert!(q.update(0, (1, 0)));
        assert_eq!(q.peek(), Some((0, (1, 0))));
        // Later, then earlier again: it sinks below 1 and comes back up.
        assert!(q.update(0, (7, 0)));
        assert_eq!(q.peek(), Some((1, (3, 1))));
        assert_eq!(q.key(0), Some((7, 0)));
        assert!(q.update(0, (1, 0)));
        assert_eq!(q.peek(), Some((0, (1, 0))));
        assert!(!q.update(2, (0, 2)));
        assert!(!q.contains(2));
        q.remove(0);
        assert!(!q.update(0, (0, 0)));
        assert_eq!(q.peek(), Some((1, (3, 1))));
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn remove_and_rekey_anywhere_against_a_model() {
        let mut q = PriorityQueue::new();
        let mut model: Vec<Option<HeapKey>> = vec![None; 64];
        let mut s = 42;
        let mut tick = 0_u32;
        for _ in 0..crate::test_steps(20_000) {
            let id = (lcg(&mut s) % 64) as usize;
            // Few primaries, so that many keys tie on them; tie words
            // unique (a counter times an odd constant) but in an order
            // unrelated to the ids' or to the order they are given in, so
            // that an insert or a re-key may win a tie, not only lose it.
            tick += 1;
            let key = (lcg(&mut s) % 100, tick.wrapping_mul(0x9E37_79B9));
            match lcg(&mut s) % 4 {
                0 | 1 => {
                    if model[id].is_none() {
                        q.insert(id, key);
                        model[id] = Some(key);
                    } else {
                        q.set_key(id, key);
                        model[id] = Some(key);
                    }
                }
                2 => {
                    if lcg(&mut s).is_multiple_of(2) {
                        assert_eq!(q.remove(id), model[id].take());
                    } else {
                        assert_eq!(q.discard(id), model[id].take());
                    }
                }
                _ => {
                    let want = model
                        .iter()
                        .enumerate()
                        .filter_map(|(i, k)| k.map(|k| (k, i)))
                        .min();
                    assert_eq!(q.peek().map(|(i, k)| (k, i)), want);
                    if let Some((_, i)) = want {
                        q.pop();
                        model[i] = None;
                    }
                }
            }
            assert_eq!(q.len(), model.iter().flatten().count());
            assert_eq!(q.contains(id), model[id].is_some());
            assert_eq!(q.key(id), model[id]);
        }
    }

    /// Deep heaps (a few thousand ids, five levels): removals anywhere sift
    /// their hole to a leaf and the filler back up (Floyd's), through full
    /// and partial families, against a sorted model.
    #[test]
    fn deep_removals_against_a_sorted_model() {
        let mut m = SortedModel::new(3000);
        let mut s = 7;
        for step in 0..crate::test_steps(60_000) as u32 {
            let id = (lcg(&mut s) % 3000) as usize;
            let key = (lcg(&mut s) % 5000, step);
            let what = match lcg(&mut s) % 3 {
                0 if step.is_multiple_of(3) => Step::Remove,
                0 if step % 3 == 1 => Step::DiscardLast,
                0 => Step::Discard,
                1 => Step::Rekey,
                _ => Step::Pop,
            };
            m.step(id, key, what);
            m.check_min();
        }
        let q = &m.q;
        assert!(q.len() > 1000, "the heap stayed deep: {}", q.len());
    }
}

#[cfg(test)]
mod discard_tests {
    use super::removal_tests::check;
    use super::tests::{SortedModel, Step, lcg};
    use super::*;

    /// The key of `id` in [`in_order`]'s heaps: ids in key order.
    fn key_of(id: usize) -> HeapKey {
        (id as u64 + 1, id as u32)
    }

    /// A heap of ids `0..n`, each with [`key_of`]'s key.
    fn in_order(n: usize) -> PriorityQueue {
        let mut q = PriorityQueue::new();
        for id in 0..n {
            q.insert(id, key_of(id));
        }
        q
    }

    /// Discarding the root again and again (cancels of the earliest lists,
    /// in order) leaves dead entries behind and rebuilds when they pass
    /// half: never more than half dead, the live ones always in key order,
    /// and the heap emptied when the last live entry goes.
    #[test]
    fn discarding_the_root_in_order() {
        let n = 10_000;
        let mut q = in_order(n);
        let mut most_dead = 0;
        for id in 0..n {
            if q.dead == 0 {
                assert_eq!(q.peek_live().map(|(i, _)| i), Some(id));
            }
            assert_eq!(q.discard(id), Some(key_of(id)));
            assert_eq!(q.len(), n - id - 1);
            assert!(q.dead * 2 <= q.heap.len(), "at most half dead");
            most_dead = most_dead.max(q.dead);
            if id.is_multiple_of(997) {
                check(&q);
                assert_eq!(
                    q.clone().peek().map(|(i, _)| i),
                    (id + 1 < n).then_some(id + 1)
                );
            }
        }
        // Only the roots that are not leaves stay dead: one in `ARITY` of
        // the heap's entries (n / 8 measured at eight children, n / 4 at
        // four).
        assert!(
            most_dead >= n / ARITY,
            "the discards were lazy: {most_dead}"
        );
        assert!(q.heap.is_empty() && q.dead == 0, "cleared when none live");
        assert_eq!(q.peek(), None);
    }

    /// Discarding the newest entry, again and again (cancels of the
    /// latest lists, newest first), takes the quick way where it may: with
    /// dead roots about (cancels of the earliest ones too), it declines
    /// only where a rebuild is due or one has moved the newest entry off
    /// the end, and the heap stays in order.
    #[test]
    fn discarding_the_last_entry_quickly() {
        let n = 4_000;
        let mut q = in_order(n);
        let (mut quick, mut declined) = (0, 0);
        let (mut low, mut high) = (0, n);
        while low < high {
            // Three newest for each earliest.
            for _ in 0..3 {
                if low == high {
                    break;
                }
                high -= 1;
                if q.discard_last(high) {
                    quick += 1;
                } else {
                    declined += 1;
                    let last = q.heap.len() - 1;
                    assert!(
                        q.position(high) != Some(last) || q.dead * 2 > last,
                        "declined only off the end (a rebuild reorders) or for a rebuild"
                    );
                    assert_eq!(q.discard(high), Some(key_of(high)));
                }
                assert!(!q.contains(high));
            }
            if low < high {
                assert_eq!(q.discard(low), Some(key_of(low)));
                low += 1;
            }
            if (low + high).is_multiple_of(101) {
                check(&q);
            }
            assert_eq!(q.len(), high - low);
        }
        // Until the first rebuild every one is quick; after, where the
        // rebuild left it. Fewer are quick the more children a node has
        // (the rebuild comes sooner): 1,100 of 4,000 measured at eight,
        // more than a third at four.
        assert!(quick >= n / 4, "quick: {quick}, declined {declined}");
        assert!(declined > 0, "a rebuild came due");
        assert_eq!(q.peek(), None);
    }

    /// A discarded id can come back while its dead entry is still in the
    /// heap; both are told apart, and equal primaries order by tie words
    /// among the live, whatever dead entries share them.
    #[test]
    fn a_discarded_id_returns_beside_its_dead_entry() {
        let mut q = PriorityQueue::new();
        for id in 0..8 {
            q.insert(id, (5, 100 - id as u32));
        }
        assert_eq!(q.discard(7), Some((5, 93)));
        assert_eq!(q.dead, 1, "the root, discarded, stays dead");
        q.insert(7, (5, 1000));
        assert_eq!(q.key(7), Some((5, 1000)));
        check(&q);
        let order: Vec<(usize, HeapKey)> = std::iter::from_fn(|| q.pop()).collect();
        let ids: Vec<usize> = order.iter().map(|&(i, _)| i).collect();
        assert_eq!(ids, [6, 5, 4, 3, 2, 1, 0, 7]);
        assert_eq!(order[7].1, (5, 1000));
        assert!(q.heap.is_empty());
    }

    /// Renumbering gives the live entries `0..n` in key order, moves none
    /// of them (dead ones included), and a key made after with the next
    /// tie word comes after every equal primary: against a sorted model,
    /// with ties on few primaries and tie words near the end of 32 bits.
    #[test]
    fn renumbering_keeps_the_order() {
        let mut m = SortedModel::new(300);
        let mut s: u64 = 5;
        for step in 0..crate::test_steps(20_000) as u32 {
            let id = (lcg(&mut s) % 300) as usize;
            // Tie words from a counter near the end of 32 bits.
            let key = (lcg(&mut s) % 40, u32::MAX - 20_000 + step);
            let what = match lcg(&mut s) % 4 {
                0 => Step::Discard,
                1 => Step::Rekey,
                _ if step % 7 == 0 => Step::Pop,
                _ => Step::Remove,
            };
            m.step(id, key, what);
        }
        assert!(m.q.dead > 0 && m.q.len() > 50, "dead and live entries");
        let before: Vec<(u64, u32)> = m.q.heap.iter().map(|e| (e.primary, e.id)).collect();
        let order: Vec<usize> = {
            let mut q = m.q.clone();
            std::iter::from_fn(|| q.pop().map(|(i, _)| i)).collect()
        };
        let n = m.q.renumber();
        assert_eq!(n as usize, m.q.len());
        let after: Vec<(u64, u32)> = m.q.heap.iter().map(|e| (e.primary, e.id)).collect();
        assert_eq!(before, after, "no entry moved");
        check(&m.q);
        for (rank, &id) in order.iter().enumerate() {
            assert_eq!(m.q.tie_of(id), Some(rank as u32));
        }
        // A new entry on the earliest primary, with the next tie word,
        // comes out after every live entry that shares it.
        let primary = m.q.peek().unwrap().1.0;
        let newcomer = (0..300).find(|&i| !m.q.contains(i)).unwrap();
        m.q.insert(newcomer, (primary, n));
        check(&m.q);
        let mut q = m.q.clone();
        let popped: Vec<usize> = std::iter::from_fn(|| q.pop())
            .take_while(|&(_, k)| k.0 == primary)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(popped.last(), Some(&newcomer));
        assert_eq!(&popped[..popped.len() - 1], &order[..popped.len() - 1]);
    }

    /// Random inserts, re-keys, removals, discards and pops of ids that
    /// return often, against a sorted model, checked whole every step.
    #[test]
    fn discards_against_a_sorted_model() {
        let mut m = SortedModel::new(200);
        let mut s: u64 = 99;
        for step in 0..crate::test_steps(40_000) as u32 {
            let id = (lcg(&mut s) % 200) as usize;
            let key = (lcg(&mut s) % 50, step);
            let what = match lcg(&mut s) % 5 {
                0 | 1 => Step::Discard,
                2 => Step::Remove,
                3 => Step::Rekey,
                _ => Step::Pop,
            };
            let discarding = matches!(what, Step::Discard) && m.q.contains(id);
            m.step(id, key, what);
            if discarding {
                assert!(
                    m.q.dead * 2 <= m.q.heap.len(),
                    "at most half dead after a discard"
                );
            }
            check(&m.q);
            m.check_min();
        }
    }
}

#[cfg(test)]
mod removal_tests {
    use super::*;

    pub(super) fn check(q: &PriorityQueue) {
        let dead = q.heap.iter().filter(|e| e.id == DEAD).count();
        assert_eq!(q.dead, dead);
        for (at, &e) in q.heap.iter().enumerate() {
            if e.id != DEAD {
                assert_eq!(q.pos[e.id as usize] as usize, at);
            }
            if at > 0 {
                let parent = q.heap[(at - 1) / ARITY];
                assert!(!q.before(e, parent), "heap order at {at}");
            }
        }
    }

    /// Every position of heaps of 1..=90 entries (full and partial last
    /// families, up to four levels), keys ascending, descending and mixed.
    #[test]
    fn remove_at_every_position() {
        for n in 1..=if cfg!(miri) { 10 } else { 90_usize } {
            for order in 0..3 {
                for victim in 0..n {
                    let mut q = PriorityQueue::new();
                    for id in 0..n {
                        let k = match order {
                            0 => id as u64,
                            1 => (n - id) as u64,
                            _ => (id as u64 * 37) % 101,
                        };
                        q.insert(id, (k, id as u32));
                    }
                    check(&q);
                    let at = q.pos[victim] as usize;
                    let key = q.key(victim).unwrap();
                    if order == 2 && !victim.is_multiple_of(2) {
                        assert_eq!(q.discard(victim), Some(key), "n {n} at {at}");
                    } else {
                        assert_eq!(q.remove(victim), Some(key), "n {n} at {at}");
                    }
                    assert!(!q.contains(victim));
                    assert_eq!(q.len(), n - 1);
                    check(&q);
                    let mut last = None;
                    while let Some((_, k)) = q.pop() {
                        assert!(last.is_none_or(|l| l < k));
                        last = Some(k);
                        check(&q);
                    }
                }
            }
        }
    }
}
