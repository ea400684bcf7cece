//! An intrusive doubly linked FIFO list whose links are slab keys.
//!
//! The list owns nothing: its entries live in a [`Slab`] (or any other
//! [`ListStore`]) and carry their own [`Links`]. The list itself is two
//! keys (oldest and newest), 8 bytes, and no length (its users count what
//! they need), so appending, removing any entry and popping the oldest are all O(1) and
//! allocate nothing. Like Node's `lib/internal/linkedlist.js`, it knows
//! nothing about what it links.
//!
//! Ground rules:
//! - keys are below [`MAX_KEY`] + 1 (two values are reserved for "none"
//!   and "not linked");
//! - an entry is in at most one list at a time, and the caller knows which
//!   one (the list does not record it);
//! - [`List::append`] unlinks nothing: appending an entry that is already
//!   linked is a caller bug, caught by a debug assertion;
//! - removing an entry from a list it is not in is a caller bug too;
//! - the list's newest key means nothing while the list is empty
//!   (emptiness is its oldest key's to say): removing the oldest entry
//!   writes the oldest key only, whether or not the list is then empty;
//! - the oldest entry's `prev` means nothing (the list knows its head):
//!   removing the oldest entry leaves the next one's `prev` as it was,
//!   so popping or cancelling in FIFO order writes nothing but the list
//!   and the entry removed. The next one may lie anywhere in the store
//!   (the timers of one duration among a million of others): not touching
//!   it saves a cache miss per removal. Every other entry's `prev` is its
//!   older neighbour;
//! - an entry removed with [`List::remove_head_freeing`] or
//!   [`List::remove_behind_head_freeing`] (one about to be
//!   freed) keeps the links it had, which mean nothing: an entry stored
//!   there again is linked with [`List::append_fresh`], which writes them
//!   without reading them.
#![forbid(unsafe_code)]

use slab::Slab;

/// The "no entry" key.
const NIL: u32 = u32::MAX;
/// `prev` of an entry that is in no list. Keys are below it, so links stay
/// two words with no flag beside them.
const UNLINKED: u32 = u32::MAX - 1;

/// The links an entry embeds to be a member of a [`List`]: 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Links {
    prev: u32,
    next: u32,
}

impl Default for Links {
    fn default() -> Self {
        Links {
            prev: UNLINKED,
            next: NIL,
        }
    }
}

impl Links {
    /// Whether the entry is currently in a list.
    pub fn is_linked(&self) -> bool {
        self.prev != UNLINKED
    }
}

/// An entry type that can be linked into a [`List`].
pub trait Linked {
    /// The entry's embedded links, mutably.
    fn links_mut(&mut self) -> &mut Links;
}

/// Storage whose entries, found by key, embed [`Links`]: a [`Slab`] of
/// [`Linked`] entries, or anything built on one.
pub trait ListStore {
    /// The links of the entry at `key` (which must exist), mutably.
    fn links_mut(&mut self, key: usize) -> &mut Links;
}

/// Links kept apart from their entries, indexed by the entries' keys: a
/// list's append then touches the old tail's 8 bytes in a dense array
/// rather than the tail entry itself, wherever it lies.
impl ListStore for Vec<Links> {
    fn links_mut(&mut self, key: usize) -> &mut Links {
        &mut self[key]
    }
}

/// A dense array of links as a slice: its pointer and length stay in
/// registers across a list operation's writes (through a `Vec`, each write
/// makes the compiler load them again).
impl ListStore for [Links] {
    fn links_mut(&mut self, key: usize) -> &mut Links {
        &mut self[key]
    }
}

impl<T: Linked> ListStore for Slab<T> {
    fn links_mut(&mut self, key: usize) -> &mut Links {
        self[key].links_mut()
    }
}

/// A FIFO list threaded through the entries of a slab.
///
/// No `PartialEq`: an emptied list keeps its last `tail`, so two empty
/// lists may differ in their bits; [`is_empty`](List::is_empty) is the
/// question to ask.
#[derive(Clone, Copy, Debug)]
pub struct List {
    /// Oldest entry; [`NIL`] when the list is empty.
    head: u32,
    /// Newest entry, while the list has one. Removing the oldest entry
    /// never writes it, even when that empties the list: popping or
    /// running a list from its oldest end writes only `head`, with no
    /// branch on whether the list is now empty. An append to an empty
    /// list asks `head`, not this.
    tail: u32,
}

impl Default for List {
    fn default() -> Self {
        List {
            head: NIL,
            tail: NIL,
        }
    }
}

/// The largest key a list can link.
pub const MAX_KEY: usize = UNLINKED as usize - 1;

#[inline]
fn key32(key: usize) -> u32 {
    u32::try_from(key)
        .ok()
        .filter(|&k| k < UNLINKED)
        .expect("slab key does not fit the list's 32-bit links")
}

fn opt(key: u32) -> Option<usize> {
    (key != NIL).then_some(key as usize)
}

impl List {
    /// An empty list.
    pub const fn new() -> Self {
        List {
            head: NIL,
            tail: NIL,
        }
    }

    /// A value that no list has (its newest entry "not linked", which no
    /// key is): for a store of lists to mark a place that holds none, in
    /// the list's own 8 bytes.
    pub const VACANT: List = List {
        head: NIL,
        tail: UNLINKED,
    };

    /// Whether this is [`List::VACANT`], not a list.
    #[inline(always)]
    pub fn is_vacant(&self) -> bool {
        self.tail == UNLINKED
    }

    /// Whether the list has no entries.
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// The oldest entry, if any.
    pub fn peek(&self) -> Option<usize> {
        opt(self.head)
    }

    /// The entry after `key` (towards the newest end), in a dense array
    /// of links.
    pub fn next_of(links: &[Links], key: usize) -> Option<usize> {
        opt(links[key].next)
    }

    /// Appends `key` at the newest end.
    pub fn append<S: ListStore + ?Sized>(&mut self, slab: &mut S, key: usize) {
        let links = slab.links_mut(key);
        debug_assert!(!links.is_linked(), "entry {key} appended while linked");
        *links = self.tail_links();
        self.append_linked(slab, key);
    }

    /// Appends `key`, an entry just stored whose links mean nothing yet
    /// (a slot freed by [`remove_head_freeing`](Self::remove_head_freeing)
    /// or its sibling keeps
    /// the links it had): they are written, not read.
    #[inline(always)]
    pub fn append_fresh<S: ListStore + ?Sized>(&mut self, slab: &mut S, key: usize) {
        let k = key32(key);
        // The tail is read once: the store below could alias it for all
        // the compiler knows, which made it read the tail twice.
        let tail = self.tail;
        *slab.links_mut(key) = Links {
            prev: tail,
            next: NIL,
        };
        if self.head == NIL {
            self.head = k;
        } else {
            slab.links_mut(tail as usize).next = k;
        }
        self.tail = k;
    }

    /// The links an entry appended next gets, for an entry inserted with
    /// them already in place; [`List::append_linked`] then appends it
    /// without looking it up.
    pub fn tail_links(&self) -> Links {
        Links {
            prev: self.tail,
            next: NIL,
        }
    }

    /// Appends `key`, whose links are [`List::tail_links`] as of now.
    pub fn append_linked<S: ListStore + ?Sized>(&mut self, slab: &mut S, key: usize) {
        let k = key32(key);
        if self.head == NIL {
            self.head = k;
        } else {
            slab.links_mut(self.tail as usize).next = k;
        }
        self.tail = k;
    }

    /// The list's side of unlinking its oldest entry, whose links were
    /// `links` (taken out by the caller, which leaves the entry unlinked):
    /// the next one becomes the head, its `prev` left as it is (a head's
    /// means nothing). [`remove`](Self::remove) without asking which end
    /// the entry is, for a caller that took the links out itself (the
    /// timers pass, running a list from its oldest timer).
    #[inline(always)]
    pub fn unlink_head(&mut self, links: Links) {
        self.head = links.next;
    }

    /// Whether `key` is the oldest entry.
    #[inline(always)]
    pub fn is_head(&self, key: usize) -> bool {
        self.head as usize == key
    }

    /// Unlinks the oldest entry, whose links are `links` (read by the
    /// caller), for an entry about to be freed: its own links are not
    /// written, and mean nothing from now on (whoever stores an entry
    /// there again writes them, as [`append_fresh`](Self::append_fresh)
    /// does). Only the list is written: the oldest entry is the usual one
    /// (a duration's timers are cleared mostly in the order they were
    /// set). Returns whether the list is now empty, known from `links`
    /// without reading the list again.
    #[inline(always)]
    pub fn remove_head_freeing(&mut self, links: Links) -> bool {
        debug_assert!(links.is_linked(), "an unlinked entry removed");
        self.unlink_head(links);
        links.next == NIL
    }

    /// [`remove_head_freeing`](Self::remove_head_freeing) of an entry
    /// that is not the oldest, its links `links`: its neighbours are
    /// joined, and the list keeps an entry.
    #[inline(always)]
    pub fn remove_behind_head_freeing<S: ListStore + ?Sized>(
        &mut self,
        slab: &mut S,
        links: Links,
    ) {
        debug_assert!(links.is_linked(), "an unlinked entry removed");
        self.unlink_behind_head(slab, links);
    }

    /// Unlinks `key`, which must be in this list.
    pub fn remove<S: ListStore + ?Sized>(&mut self, slab: &mut S, key: usize) {
        let links = std::mem::take(slab.links_mut(key));
        debug_assert!(links.is_linked(), "entry {key} removed while not linked");
        self.remove_taken(slab, key, links);
    }

    /// Unlinks entry `k` of this list, already taken out of `slab`, given
    /// the links it had: its neighbours are updated, the entry is not
    /// looked up again.
    #[inline(always)]
    fn remove_taken<S: ListStore + ?Sized>(&mut self, slab: &mut S, key: usize, links: Links) {
        debug_assert!(links.is_linked(), "an unlinked entry removed");
        if self.head as usize == key {
            self.unlink_head(links);
            return;
        }
        self.unlink_behind_head(slab, links);
    }

    /// Unlinks an entry that is not the oldest, whose links were `links`:
    /// its neighbours are joined (its `prev` is its older neighbour).
    #[inline(always)]
    fn unlink_behind_head<S: ListStore + ?Sized>(&mut self, slab: &mut S, links: Links) {
        slab.links_mut(links.prev as usize).next = links.next;
        match opt(links.next) {
            Some(n) => slab.links_mut(n).prev = links.prev,
            None => self.tail = links.prev,
        }
    }

    /// Moves `key`, which must be in this list, to the newest end: the
    /// same as [`List::remove`] then [`List::append`], with one lookup.
    #[inline]
    pub fn move_to_back<S: ListStore + ?Sized>(&mut self, slab: &mut S, key: usize) {
        let k = key32(key);
        if self.tail == k {
            return;
        }
        let links = std::mem::replace(slab.links_mut(key), self.tail_links());
        debug_assert!(links.is_linked(), "entry {key} moved while not linked");
        // Not the newest, so it has a next entry: unlinking it joins its
        // neighbours (or makes the next one the head) and leaves the tail
        // (its new `prev`) as it was.
        self.remove_taken(slab, key, links);
        self.append_linked(slab, key);
    }

    /// Unlinks and returns the oldest entry.
    #[allow(dead_code)] // the bench floor uses it
    pub fn pop_front<S: ListStore + ?Sized>(&mut self, slab: &mut S) -> Option<usize> {
        let head = self.peek()?;
        self.remove(slab, head);
        Some(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct E(u32, Links);
    impl Linked for E {
        fn links_mut(&mut self) -> &mut Links {
            &mut self.1
        }
    }

    /// The entries from `from` on, each followed by `step` of its links.
    fn walk(from: u32, slab: &Slab<E>, step: fn(&Links) -> u32) -> Vec<u32> {
        let mut out = vec![];
        let mut cur = opt(from);
        while let Some(k) = cur {
            out.push(slab[k].0);
            cur = opt(step(&slab[k].1));
        }
        out
    }

    /// The entries from oldest to newest, through the `next` links.
    fn collect(list: &List, slab: &Slab<E>) -> Vec<u32> {
        walk(list.head, slab, |l| l.next)
    }

    #[test]
    fn fifo_order_and_removal_anywhere() {
        let mut slab = Slab::new();
        let mut list = List::new();
        let keys: Vec<usize> = (0..5)
            .map(|i| slab.insert(E(i, Links::default())))
            .collect();
        for &k in &keys {
            list.append(&mut slab, k);
        }
        assert_eq!(collect(&list, &slab), [0, 1, 2, 3, 4]);
        list.remove(&mut slab, keys[2]); // middle
        list.remove(&mut slab, keys[0]); // head
        list.remove(&mut slab, keys[4]); // tail
        assert_eq!(collect(&list, &slab), [1, 3]);
        assert!(!list.is_empty());
        assert!(!slab[keys[2]].1.is_linked());
        // Re-append moves to the newest end.
        list.remove(&mut slab, keys[1]);
        list.append(&mut slab, keys[1]);
        assert_eq!(collect(&list, &slab), [3, 1]);
        assert_eq!(list.pop_front(&mut slab), Some(keys[3]));
        assert_eq!(list.pop_front(&mut slab), Some(keys[1]));
        assert_eq!(list.pop_front(&mut slab), None);
        assert!(list.is_empty());
    }

    /// An emptied list keeps its last newest key, and nothing follows it:
    /// the next append (by either path) makes a new head, writes nothing
    /// into the entry that key names, and the list reads back whole in
    /// both directions. Emptied by a pop, by a removal and by the timers'
    /// freeing removal.
    #[test]
    fn an_emptied_list_starts_afresh() {
        type Empty = fn(&mut List, &mut Slab<E>, usize);
        let ways: [Empty; 3] = [
            |list, slab, _| assert!(list.pop_front(slab).is_some()),
            |list, slab, k| list.remove(slab, k),
            |list, slab, k| {
                let links = std::mem::take(&mut slab[k].1);
                assert!(list.remove_head_freeing(links));
            },
        ];
        for (way, empty) in ways.into_iter().enumerate() {
            for fresh in [false, true] {
                let mut slab = Slab::new();
                let a = slab.insert(E(0, Links::default()));
                let b = slab.insert(E(1, Links::default()));
                let c = slab.insert(E(2, Links::default()));
                let mut list = List::new();
                list.append(&mut slab, a);
                empty(&mut list, &mut slab, a);
                assert!(list.is_empty(), "way {way}");
                let before = slab[a].1;
                if fresh {
                    list.append_fresh(&mut slab, b);
                } else {
                    list.append(&mut slab, b);
                }
                list.append(&mut slab, c);
                assert_eq!(slab[a].1, before, "way {way}, fresh {fresh}");
                assert_eq!(collect(&list, &slab), [1, 2], "way {way}, fresh {fresh}");
                assert_eq!(
                    collect_back(&list, &slab),
                    [2, 1],
                    "way {way}, fresh {fresh}"
                );
                assert_eq!(list.pop_front(&mut slab), Some(b));
                assert_eq!(list.pop_front(&mut slab), Some(c));
                assert_eq!(list.pop_front(&mut slab), None);
            }
        }
    }

    /// The entries from newest to oldest, through the `prev` links, which
    /// end at the head (whose own `prev` means nothing). An empty list's
    /// newest key means nothing either.
    fn collect_back(list: &List, slab: &Slab<E>) -> Vec<u32> {
        let mut out = vec![];
        let mut cur = opt(list.tail).filter(|_| !list.is_empty());
        while let Some(k) = cur {
            out.push(slab[k].0);
            cur = (k as u32 != list.head).then(|| slab[k].1.prev as usize);
        }
        out
    }

    /// Every sequence of appends, removals anywhere, moves to the back and
    /// pops over six entries (random, seeded) against a `VecDeque`: both
    /// directions agree with it after each step, and an entry removed is
    /// unlinked.
    #[test]
    fn against_a_model() {
        use std::collections::VecDeque;
        let mut slab = Slab::new();
        let keys: Vec<usize> = (0..6)
            .map(|i| slab.insert(E(i, Links::default())))
            .collect();
        let mut list = List::new();
        let mut model: VecDeque<u32> = VecDeque::new();
        let mut s: u64 = 5;
        for step in 0..crate::test_steps(20_000) {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = ((s >> 33) % 6) as u32;
            let k = keys[i as usize];
            let linked = model.contains(&i);
            match (linked, (s >> 40) % 4) {
                (false, _) => {
                    list.append(&mut slab, k);
                    model.push_back(i);
                }
                (true, 0) => {
                    list.remove(&mut slab, k);
                    model.retain(|&m| m != i);
                    assert!(!slab[k].1.is_linked());
                }
                (true, 1) => {
                    list.move_to_back(&mut slab, k);
                    model.retain(|&m| m != i);
                    model.push_back(i);
                }
                (true, _) => {
                    let front = list.pop_front(&mut slab).map(|k| slab[k].0);
                    assert_eq!(front, model.pop_front(), "step {step}");
                }
            }
            let want: Vec<u32> = model.iter().copied().collect();
            assert_eq!(collect(&list, &slab), want, "step {step}");
            let mut back = want.clone();
            back.reverse();
            assert_eq!(collect_back(&list, &slab), back, "step {step}");
            assert_eq!(list.is_empty(), model.is_empty());
        }
    }

    #[test]
    fn move_to_back_from_every_position() {
        for n in 1..=4u32 {
            for at in 0..n {
                let mut slab = Slab::new();
                let mut list = List::new();
                let keys: Vec<usize> = (0..n)
                    .map(|i| slab.insert(E(i, Links::default())))
                    .collect();
                for &k in &keys {
                    list.append(&mut slab, k);
                }
                list.move_to_back(&mut slab, keys[at as usize]);
                let mut want: Vec<u32> = (0..n).filter(|&i| i != at).collect();
                want.push(at);
                assert_eq!(collect(&list, &slab), want, "n {n}, moved {at}");
                want.reverse();
                assert_eq!(collect_back(&list, &slab), want, "n {n}, moved {at}");
                assert_eq!(slab[keys[at as usize]].1.next, NIL);
            }
        }
    }

    #[test]
    fn two_lists_share_one_slab() {
        let mut slab = Slab::new();
        let (mut a, mut b) = (List::new(), List::new());
        for i in 0..6 {
            let k = slab.insert(E(i, Links::default()));
            if i % 2 == 0 {
                a.append(&mut slab, k);
            } else {
                b.append(&mut slab, k);
            }
        }
        assert_eq!(collect(&a, &slab), [0, 2, 4]);
        assert_eq!(collect(&b, &slab), [1, 3, 5]);
        let moved = b.pop_front(&mut slab).unwrap();
        a.append(&mut slab, moved);
        assert_eq!(collect(&a, &slab), [0, 2, 4, 1]);
        assert_eq!(collect(&b, &slab), [3, 5]);
    }
}
