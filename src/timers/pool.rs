//! The thread's pool of blocks for the callbacks that [`ThinFn`] and
//! [`ThinOnce`] cannot keep inline: closures of two to eight words
//! (Node's `setTimeout(f, ms, ...args)` and `setImmediate(f, ...args)`
//! shapes), which the global allocator served one `malloc` and one `free`
//! each.
//!
//! # Invariants
//!
//! 1. A block is [`BLOCK_WORDS`]`[c]` words of one class `c`, aligned to a
//!    word, inside a chunk that this thread's [`Pool`] allocated and frees
//!    only when none of the chunk's blocks is handed out (all of them are
//!    free, invariant 2): a block handed out stays valid memory until it
//!    is given back, whatever else happens to the pool.
//! 2. A block of a chunk is exactly one of: handed out (counted in
//!    `live`), on the class's free list (its first word links to the
//!    next), beyond the class's `bump` in its newest chunk (not handed out
//!    since that chunk was made or emptied), or, while the class is armed
//!    for a sweep, on the list set aside (`stash`) or beyond the bump set
//!    aside (`stash_bump`). Never two: a block is handed out once until it
//!    is given back, which soundness needs. Always one: a chunk none of
//!    whose blocks is out has every one of them free, where a sweep counts
//!    them, which reclaiming needs.
//! 3. Blocks are given back on the thread that took them: the wrappers
//!    that hold them are neither `Send` nor `Sync` (`thin.rs`).
//! 4. Once the thread's pool is destroyed (the thread is exiting and its
//!    thread-locals are being dropped), blocks come from the global
//!    allocator and are never freed, and blocks given back are leaked: a
//!    pool destroyed with blocks out leaks its chunks, which keeps those
//!    blocks valid (invariant 1). Which of the two holds is [`GONE`]'s,
//!    a thread-local with no destructor, set by the pool's: a platform
//!    whose thread-locals may be made again after their destructor ran
//!    cannot hand a block of the old pool to a new one.
//!
//! # Safety
//!
//! One of the crate's three modules with hand-written `unsafe` (with
//! `thin.rs`, its only user, and `current.rs`). Its blocks rely on the
//! invariants above, which the private fields keep: a block's pointer
//! leaves the module only through [`take`] and comes back only through
//! [`give`], whose contract is invariant 2's; the list and bump pointers
//! are written nowhere else. Its tests and the timer and immediate tests
//! run clean under valgrind's memcheck.
//!
//! # Why
//!
//! A timers pass frees its callbacks in the order they were added, after
//! adding them all: glibc's per-thread cache holds seven blocks of a size,
//! so every other `malloc` of a breadth workload carves the top chunk and
//! every `free` goes through `_int_free`, about 250 instructions a
//! callback (callgrind, `timers-breadth-args`). Here a block is a pointer
//! bump or a free-list pop to take, and a push to give back. The commit
//! that added this module gives the measurements.
//!
//! # Memory
//!
//! A class's first chunk holds [`FIRST_CHUNK`] blocks and each later one as
//! many as the class holds already (so its capacity doubles), up to
//! [`MAX_CHUNK`]. When the last block of a class comes back and its chunks
//! hold more than [`KEEP_BYTES`], they are freed, as the loop's arenas give
//! back what a burst left (`SHRINK_ABOVE`), all but the largest chunk that
//! holds at most [`KEEP_BYTES`]: that one is kept, empty, for the next
//! burst. So a class that fills past [`KEEP_BYTES`] and drains, over and
//! over, goes back to the allocator only for what is beyond it, and never
//! starts again from [`FIRST_CHUNK`] blocks; an idle class holds at most
//! [`KEEP_BYTES`] either way.
//!
//! A class that drains only in part is swept when it is used again. A give
//! that leaves fewer blocks out than its threshold arms it: a quarter of
//! what the chunks hold after a growth, and after a sweep the smaller of
//! that and half the blocks then out (a quarter, if the sweep freed
//! nothing). Armed, its free blocks are set aside, and so is each block
//! given back after, so that its free list stays empty and its next take
//! goes the cold way. That take sweeps: a pass over the blocks set aside
//! counts each against its chunk (a binary search, skipped while blocks
//! stay in the chunk of the one before); every chunk whose blocks are all
//! free is freed, but for the largest of at most [`KEEP_BYTES`], and one
//! more if nothing else would be left free for the take; a second pass
//! puts the other free blocks back on the free list in their order (none
//! is needed when nothing was freed). Gives never sweep: a class that
//! drains entirely, as a timers pass drains its callbacks, is released as
//! above, and the sweep it was armed for never happens: each give of its
//! last quarter costs a few instructions more, to set its block aside.
//!
//! So a few long-lived blocks keep the chunks they held at the last sweep,
//! not the peak of a burst they outlived. What a sweep does not free stays
//! until the next: a class never used again keeps what it holds, and
//! chunks held at a sweep by blocks given back since stay until the blocks
//! out fall below the threshold again, or the class grows or drains.
//!
//! A class that grows again after a sweep bursts, and freeing its chunks
//! would only have the next burst fault them in again (glibc trims the
//! heap's top on `free`, so each burst would pay its page faults anew: 26
//! → 40 ns per immediate in bursts of 100,000 beside one long-lived
//! callback). So a sweep keeps unused chunks, the largest first, up to the
//! most the class grew by between two sweeps, until it drains and is
//! released: the first burst's chunks go back, and a burst that comes
//! back keeps its own.
//!
//! Each sweep after the first since a growth comes once the threshold has
//! at least halved (only a growth raises it), so there are at most
//! `log2(n / 4) + 1` of them between two growths of a class of `n` blocks,
//! each at most two passes over `n` blocks; and the first needs the blocks
//! out to fall from half of `n` (the class was full when it grew) to a
//! quarter. So sweeping costs at most `O(log n)` block visits per take and
//! give, and none in a class that fills and drains.
#![allow(unsafe_code)]

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::cell::{Cell, RefCell};
use std::ptr::{self, NonNull};

/// Each class's block size, in words: 16, 24, 32, 48 and 64 bytes, the
/// small sizes of general-purpose allocators' classes. A closure's block
/// is at most a fifth larger than it (five words in six); with classes of
/// 2, 4 and 8 words, until round 20, a closure of three words took four
/// and one of five took eight.
pub(super) const BLOCK_WORDS: [usize; CLASSES] = [2, 3, 4, 6, 8];

/// How many classes there are.
const CLASSES: usize = 5;

/// Blocks in a class's first chunk; a later chunk holds as many as the
/// class does already, up to [`MAX_CHUNK`].
pub(super) const FIRST_CHUNK: usize = 64;

/// The most blocks a chunk holds.
pub(super) const MAX_CHUNK: usize = 4096;

/// A class whose last block comes back keeps its chunks if they hold at
/// most this many bytes; otherwise it keeps only its largest chunk of at
/// most this many bytes, and frees the others.
pub(super) const KEEP_BYTES: usize = 64 * 1024;

const WORD: usize = size_of::<usize>();

/// The class whose blocks hold a `G`, or `None` for one that is too big
/// or more aligned than a word (the global allocator keeps those).
pub(super) const fn class_of<G>() -> Option<usize> {
    if align_of::<G>() > WORD {
        return None;
    }
    let mut c = 0;
    while c < BLOCK_WORDS.len() {
        if size_of::<G>() <= BLOCK_WORDS[c] * WORD {
            return Some(c);
        }
        c += 1;
    }
    None
}

/// One class's blocks (see the module's invariants).
struct Class {
    /// The first block of the free list, or null.
    free: Cell<*mut u8>,
    /// The newest chunk's first never-used block, and its end.
    bump: Cell<*mut u8>,
    end: Cell<*mut u8>,
    /// Blocks handed out and not given back.
    live: Cell<usize>,
    /// Every chunk, to free: its first block and its layout.
    chunks: RefCell<Vec<(NonNull<u8>, Layout)>>,
    /// The blocks the chunks hold, altogether.
    capacity: Cell<usize>,
    /// A give that leaves fewer blocks out than this releases the class
    /// (none out) or arms it ([`Class::give_low`]); while it is armed,
    /// such gives set their block aside inline. 0 while the chunks hold at
    /// most [`KEEP_BYTES`] (never), at least 1 otherwise (a class that
    /// drains is released).
    low: Cell<usize>,
    /// Whether the class is set aside for a sweep: its free blocks are
    /// on `stash` and beyond `stash_bump`, and `free`, `bump` and `end`
    /// are null, so that the next take goes the cold way and sweeps.
    armed: Cell<bool>,
    /// While armed: the free list, and the bump and end, set aside.
    stash: Cell<*mut u8>,
    stash_bump: Cell<*mut u8>,
    stash_end: Cell<*mut u8>,
    /// What the chunks held after the last sweep, or `usize::MAX` if the
    /// class was not swept since it was made or released.
    swept_to: Cell<usize>,
    /// Blocks of unused chunks a sweep keeps: the most the class grew by
    /// between two sweeps (a class that bursts again keeps what its
    /// bursts take).
    retain: Cell<usize>,
    /// Sweeps, and chunks they freed: for tests.
    #[cfg(test)]
    stats: Cell<[usize; 2]>,
}

impl Class {
    const fn new() -> Class {
        Class {
            free: Cell::new(ptr::null_mut()),
            bump: Cell::new(ptr::null_mut()),
            end: Cell::new(ptr::null_mut()),
            live: Cell::new(0),
            chunks: RefCell::new(Vec::new()),
            capacity: Cell::new(0),
            low: Cell::new(0),
            armed: Cell::new(false),
            stash: Cell::new(ptr::null_mut()),
            stash_bump: Cell::new(ptr::null_mut()),
            stash_end: Cell::new(ptr::null_mut()),
            swept_to: Cell::new(usize::MAX),
            retain: Cell::new(0),
            #[cfg(test)]
            stats: Cell::new([0; 2]),
        }
    }

    #[inline(always)]
    fn take(&self, bytes: usize) -> *mut u8 {
        self.live.set(self.live.get() + 1);
        if let Some(block) = self.take_free(bytes) {
            return block;
        }
        self.grow(bytes)
    }

    /// A block from the free list or beyond the bump, if either has one.
    #[inline(always)]
    fn take_free(&self, bytes: usize) -> Option<*mut u8> {
        let free = self.free.get();
        if !free.is_null() {
            // SAFETY: a block on the free list is a block of this class
            // that is not handed out (invariant 2), valid (invariant 1),
            // whose first word is the next free block, written by `give`.
            self.free.set(unsafe { free.cast::<*mut u8>().read() });
            return Some(free);
        }
        let bump = self.bump.get();
        if bump != self.end.get() {
            // SAFETY: `bump` is a block of the newest chunk and `end` that
            // chunk's end, a whole number of blocks past it: the next block
            // is in the chunk or is its end.
            self.bump.set(unsafe { bump.add(bytes) });
            return Some(bump);
        }
        None
    }

    /// Sweeps the class if it is armed, and takes a free block if that
    /// left one; otherwise takes the first block of a new chunk.
    #[cold]
    #[inline(never)]
    fn grow(&self, bytes: usize) -> *mut u8 {
        if self.armed.get() {
            self.sweep(bytes);
            if let Some(block) = self.take_free(bytes) {
                return block;
            }
        }
        let blocks = self.capacity.get().clamp(FIRST_CHUNK, MAX_CHUNK);
        let layout = Layout::from_size_align(blocks * bytes, WORD).expect("a chunk's layout");
        // SAFETY: the layout's size is not zero.
        let Some(chunk) = NonNull::new(unsafe { alloc(layout) }) else {
            handle_alloc_error(layout)
        };
        self.chunks.borrow_mut().push((chunk, layout));
        self.capacity.set(self.capacity.get() + blocks);
        self.set_low(bytes, self.capacity.get() / 4);
        let first = chunk.as_ptr();
        // SAFETY: both are in the chunk or its end (`blocks` >= 1).
        unsafe {
            self.bump.set(first.add(bytes));
            self.end.set(first.add(blocks * bytes));
        }
        first
    }

    /// # Safety
    /// `block` came from this class's `take` and is given back once.
    #[inline(always)]
    unsafe fn give(&self, block: *mut u8, bytes: usize) {
        let live = self.live.get() - 1;
        self.live.set(live);
        // SAFETY (the three `push`es): the caller's contract: a block of
        // this class, handed out, so valid and a word aligned (invariant
        // 1); the pool owns it again.
        if live >= self.low.get() {
            unsafe { push(&self.free, block) };
        } else if self.armed.get() {
            // Set aside, inline: a class that drains comes here for each
            // block of its last quarter.
            unsafe { push(&self.stash, block) };
            if live == 0 {
                self.give_low(bytes);
            }
        } else {
            unsafe { push(&self.free, block) };
            self.give_low(bytes);
        }
    }

    /// Gives back go the cold way once fewer than `below` blocks are out
    /// (at least 1), if the chunks hold more than [`KEEP_BYTES`]; never
    /// otherwise.
    fn set_low(&self, bytes: usize, below: usize) {
        let low = if self.capacity.get() * bytes > KEEP_BYTES {
            below.max(1)
        } else {
            0
        };
        self.low.set(low);
    }

    /// A give left fewer than `low` blocks out. With none out, releases
    /// the class. Otherwise arms it: sets its free blocks aside, so that
    /// the gives that follow set theirs aside too and its next take
    /// sweeps.
    #[cold]
    #[inline(never)]
    fn give_low(&self, bytes: usize) {
        if self.live.get() == 0 {
            self.release(KEEP_BYTES, bytes);
        } else {
            debug_assert!(!self.armed.get() && self.stash.get().is_null());
            self.armed.set(true);
            self.stash.set(self.free.replace(ptr::null_mut()));
            self.stash_bump.set(self.bump.replace(ptr::null_mut()));
            self.stash_end.set(self.end.replace(ptr::null_mut()));
        }
    }

    /// Frees every chunk none of whose blocks is out, but for the largest
    /// of them that holds at most [`KEEP_BYTES`] (and one more if nothing
    /// would be left free for the take that sweeps), and puts the other
    /// free blocks back, in their order: the class is disarmed. The next
    /// sweep comes once the blocks out have halved (fallen to a quarter,
    /// if this sweep freed nothing) and are fewer than a quarter of what
    /// the chunks hold.
    #[cold]
    #[inline(never)]
    fn sweep(&self, bytes: usize) {
        debug_assert!(self.armed.get() && self.free.get().is_null());
        #[cfg(test)]
        self.stats
            .set([self.stats.get()[0] + 1, self.stats.get()[1]]);
        let mut chunks = self.chunks.borrow_mut();
        // The chunks by address, to find a block's with a binary search
        // (free blocks given back in order sit together: the last chunk
        // found is tried first).
        let mut order: Vec<usize> = (0..chunks.len()).collect();
        order.sort_unstable_by_key(|&i| chunks[i].0.as_ptr() as usize);
        let ranges: Vec<(usize, usize)> = order
            .iter()
            .map(|&i| {
                let start = chunks[i].0.as_ptr() as usize;
                (start, start + chunks[i].1.size())
            })
            .collect();
        let last = Cell::new(0);
        let chunk_of = |block: *mut u8| {
            let a = block as usize;
            let (start, end) = ranges[last.get()];
            if a < start || a >= end {
                // Every block is in a chunk (invariant 1), so one starts at
                // or before it.
                last.set(ranges.partition_point(|&(s, _)| s <= a) - 1);
            }
            order[last.get()]
        };
        // Each chunk's free blocks: set aside, or beyond the bump.
        let mut free = vec![0usize; chunks.len()];
        let mut block = self.stash.get();
        while !block.is_null() {
            free[chunk_of(block)] += 1;
            // SAFETY: a free block, whose first word is the next free
            // block (invariant 2).
            block = unsafe { block.cast::<*mut u8>().read() };
        }
        let (bump, end) = (self.stash_bump.get(), self.stash_end.get());
        if bump != end {
            free[chunk_of(bump)] += (end as usize - bump as usize) / bytes;
        }
        // A chunk is unused when all its blocks are free (invariant 2: a
        // block not out is free exactly once).
        let size = |i: usize| chunks[i].1.size();
        let unused = |i: usize| free[i] * bytes == size(i);
        let kept = (0..chunks.len())
            .filter(|&i| unused(i) && size(i) <= KEEP_BYTES)
            .max_by_key(|&i| size(i));
        let mut freed: Vec<bool> = (0..chunks.len())
            .map(|i| unused(i) && Some(i) != kept)
            .collect();
        // A class that grew back since its last sweep bursts: the unused
        // chunks its bursts take stay, the largest first, rather than go
        // back to the allocator and be faulted in again by the next burst.
        let grown = self.capacity.get().saturating_sub(self.swept_to.get());
        let retain = self.retain.get().max(grown);
        self.retain.set(retain);
        let mut retained = 0;
        let mut by_size: Vec<usize> = (0..chunks.len()).filter(|&i| freed[i]).collect();
        by_size.sort_unstable_by_key(|&i| std::cmp::Reverse(size(i)));
        for i in by_size {
            if retained + size(i) / bytes <= retain {
                retained += size(i) / bytes;
                freed[i] = false;
            }
        }
        // The take that swept needs a block: if every chunk that stays is
        // full, one unused chunk stays too, rather than be freed and
        // another allocated at once.
        if (0..chunks.len()).all(|i| freed[i] || free[i] == 0)
            && let Some(i) = (0..chunks.len())
                .filter(|&i| freed[i])
                .max_by_key(|&i| size(i))
        {
            freed[i] = false;
        }
        let any = freed.contains(&true);
        if any {
            // The blocks that stay, in order, back on the free list:
            // unlinked from the freed chunks' before those are freed (the
            // links are in them).
            let (mut head, mut tail) = (ptr::null_mut::<u8>(), ptr::null_mut::<u8>());
            let mut block = self.stash.get();
            while !block.is_null() {
                // SAFETY: as above, the next free block.
                let next = unsafe { block.cast::<*mut u8>().read() };
                if !freed[chunk_of(block)] {
                    if tail.is_null() {
                        head = block;
                    } else {
                        // SAFETY: `tail` is a free block of a chunk that
                        // stays: its first word is the pool's to write.
                        unsafe { tail.cast::<*mut u8>().write(block) };
                    }
                    tail = block;
                }
                block = next;
            }
            if !tail.is_null() {
                // SAFETY: as above.
                unsafe { tail.cast::<*mut u8>().write(ptr::null_mut()) };
            }
            self.free.set(head);
        } else {
            // Nothing freed: the blocks set aside are the free list as
            // they are.
            self.free.set(self.stash.get());
        }
        if bump != end && !freed[chunk_of(bump)] {
            self.bump.set(bump);
            self.end.set(end);
        }
        self.stash.set(ptr::null_mut());
        self.stash_bump.set(ptr::null_mut());
        self.stash_end.set(ptr::null_mut());
        self.armed.set(false);
        if any {
            let mut i = 0;
            chunks.retain(|&(chunk, layout)| {
                let stays = !freed[i];
                i += 1;
                if !stays {
                    self.capacity
                        .set(self.capacity.get() - layout.size() / bytes);
                    #[cfg(test)]
                    self.stats
                        .set([self.stats.get()[0], self.stats.get()[1] + 1]);
                    // SAFETY: allocated by `grow` with this layout; none of
                    // its blocks is out, on the free list or beyond the
                    // bump, so nothing points into it.
                    unsafe { dealloc(chunk.as_ptr(), layout) };
                }
                stays
            });
        }
        drop(chunks);
        self.swept_to.set(self.capacity.get());
        // A sweep that freed nothing found the blocks out spread over the
        // chunks: the next waits for a steeper fall.
        let live = self.live.get();
        let fall = if any { live / 2 } else { live / 4 };
        self.set_low(bytes, fall.min(self.capacity.get() / 4));
    }

    /// Frees every chunk but the largest that holds at most `keep` bytes,
    /// which is emptied: its blocks are all beyond `bump` again. No block
    /// is handed out. Disarms the class.
    #[cold]
    #[inline(never)]
    fn release(&self, keep: usize, bytes: usize) {
        debug_assert_eq!(self.live.get(), 0);
        let mut chunks = self.chunks.borrow_mut();
        let kept = (0..chunks.len())
            .filter(|&i| chunks[i].1.size() <= keep)
            .max_by_key(|&i| chunks[i].1.size());
        let kept = kept.map(|i| chunks.swap_remove(i));
        for (chunk, layout) in chunks.drain(..) {
            // SAFETY: allocated by `grow` with this layout; no block in it
            // is handed out (`live == 0`), so nothing points into it.
            unsafe { dealloc(chunk.as_ptr(), layout) };
        }
        // Nothing is free until the kept chunk's bump hands it out again:
        // the free lists' blocks were in the chunks, kept one included.
        self.free.set(ptr::null_mut());
        self.armed.set(false);
        self.stash.set(ptr::null_mut());
        self.stash_bump.set(ptr::null_mut());
        self.stash_end.set(ptr::null_mut());
        self.swept_to.set(usize::MAX);
        self.retain.set(0);
        match kept {
            Some((chunk, layout)) => {
                chunks.push((chunk, layout));
                let first = chunk.as_ptr();
                self.bump.set(first);
                // SAFETY: the chunk's end, `layout.size()` bytes past its
                // first block, a whole number of blocks.
                self.end.set(unsafe { first.add(layout.size()) });
                self.capacity.set(layout.size() / bytes);
            }
            None => {
                self.bump.set(ptr::null_mut());
                self.end.set(ptr::null_mut());
                self.capacity.set(0);
            }
        }
        drop(chunks);
        self.set_low(bytes, 0);
    }
}

/// Pushes `block` on the free list whose head is `list`.
///
/// # Safety
/// `block` is a block of the list's class that is the pool's: not handed
/// out, on no list, not beyond a bump (invariant 2).
#[inline(always)]
unsafe fn push(list: &Cell<*mut u8>, block: *mut u8) {
    // SAFETY: the caller's contract: the block's first word is the pool's
    // to write, and it is valid and word aligned (invariant 1).
    unsafe { block.cast::<*mut u8>().write(list.get()) };
    list.set(block);
}

/// A thread's classes.
struct Pool {
    classes: [Class; CLASSES],
}

impl Drop for Pool {
    fn drop(&mut self) {
        for (class, words) in self.classes.iter().zip(BLOCK_WORDS) {
            if class.live.get() == 0 {
                class.release(0, words * WORD);
            }
            // Otherwise blocks are still out (a loop in a thread-local
            // dropped later): the chunks are not freed, only the list of
            // them, and stay valid, leaked (invariant 4).
        }
        GONE.set(true);
    }
}

thread_local! {
    static POOL: Pool = const {
        Pool {
            classes: [const { Class::new() }; CLASSES],
        }
    };
    /// The thread's pool was destroyed (invariant 4). No destructor, so it
    /// is never destroyed itself, and never reset.
    static GONE: Cell<bool> = const { Cell::new(false) };
}

/// A block for a `G` of class `c` ([`class_of`]), uninitialised.
#[inline(always)]
pub(super) fn take<G>(c: usize) -> NonNull<G> {
    debug_assert_eq!(class_of::<G>(), Some(c));
    let bytes = BLOCK_WORDS[c] * WORD;
    let block = if GONE.get() {
        after_exit(bytes)
    } else {
        POOL.try_with(|p| p.classes[c].take(bytes))
            .unwrap_or_else(|_| after_exit(bytes))
    };
    // Non-null: a free-list block, a chunk's, or the global allocator's.
    NonNull::new(block).expect("a block").cast()
}

/// Where blocks come from once the thread's pool is gone (invariant 4).
#[cold]
#[inline(never)]
fn after_exit(bytes: usize) -> *mut u8 {
    let layout = Layout::from_size_align(bytes, WORD).expect("a block's layout");
    // SAFETY: the layout's size is not zero.
    let block = unsafe { alloc(layout) };
    if block.is_null() {
        handle_alloc_error(layout)
    }
    block
}

/// Gives back a block, whose `G` was dropped or moved out.
///
/// # Safety
/// `block` came from [`take`]`::<G>(c)` on this thread and is given back
/// once.
#[inline(always)]
pub(super) unsafe fn give<G>(c: usize, block: NonNull<G>) {
    let bytes = BLOCK_WORDS[c] * WORD;
    // Once the pool is gone the block is leaked (invariant 4).
    if GONE.get() {
        return;
    }
    let _ = POOL.try_with(|p| {
        // SAFETY: the caller's contract; the pool was never destroyed
        // (`GONE` is not set), so this is the pool the block came from:
        // blocks taken once it is gone never come back to a pool.
        unsafe { p.classes[c].give(block.as_ptr().cast(), bytes) }
    });
}

/// The blocks of class `c` handed out on this thread, and those its chunks
/// hold: for tests.
#[cfg(test)]
pub(super) fn counts(c: usize) -> (usize, usize) {
    POOL.with(|p| (p.classes[c].live.get(), p.classes[c].capacity.get()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes of four and eight words.
    const C4: usize = match class_of::<[u64; 4]>() {
        Some(c) => c,
        None => unreachable!(),
    };
    const C8: usize = match class_of::<[u64; 8]>() {
        Some(c) => c,
        None => unreachable!(),
    };

    #[test]
    fn classes_by_size_and_alignment() {
        assert_eq!(class_of::<[u64; 2]>(), Some(0));
        assert_eq!(class_of::<(u8, u64)>(), Some(0));
        assert_eq!(class_of::<[u64; 3]>(), Some(1));
        assert_eq!(class_of::<(u64, u64, u8)>(), Some(1));
        assert_eq!(class_of::<[u64; 4]>(), Some(2));
        assert_eq!(class_of::<[u64; 5]>(), Some(3));
        assert_eq!(class_of::<[u64; 6]>(), Some(3));
        assert_eq!(class_of::<[u64; 7]>(), Some(4));
        assert_eq!(class_of::<[u64; 8]>(), Some(4));
        assert_eq!(class_of::<[u64; 9]>(), None);
        assert_eq!(class_of::<u128>(), None, "more aligned than a word");
    }

    /// Blocks are distinct while out, reused once back, and every chunk
    /// is freed when the last block of a large class comes back.
    #[test]
    fn take_give_reuse_and_release() {
        std::thread::spawn(|| {
            let mut out: Vec<NonNull<[u64; 4]>> = Vec::new();
            for i in 0..10_000u64 {
                let b = take::<[u64; 4]>(C4);
                // SAFETY: a fresh block for a `[u64; 4]`.
                unsafe { b.as_ptr().write([i; 4]) };
                out.push(b);
            }
            let mut addrs: Vec<usize> = out.iter().map(|b| b.as_ptr() as usize).collect();
            addrs.sort_unstable();
            addrs.dedup();
            assert_eq!(addrs.len(), 10_000, "blocks out are distinct");
            for (i, b) in out.iter().enumerate() {
                // SAFETY: written above, still out.
                assert_eq!(unsafe { b.as_ptr().read() }, [i as u64; 4]);
            }
            assert_eq!(counts(C4).0, 10_000);
            assert!(counts(C4).1 >= 10_000);
            // Give back all but one: nothing is released, and the next take
            // reuses the last block given back.
            let keep = out.pop().unwrap();
            let last = *out.last().unwrap();
            for b in out.drain(..) {
                // SAFETY: taken above, given back once.
                unsafe { give(C4, b) };
            }
            assert_eq!(counts(C4).0, 1);
            let again = take::<[u64; 4]>(C4);
            assert_eq!(again, last, "the free list is last in, first out");
            // SAFETY: taken above, given back once each.
            unsafe {
                give(C4, again);
                give(C4, keep);
            }
            // A large class is freed when idle, but for its largest chunk
            // that fits in KEEP_BYTES.
            let kept = KEEP_BYTES / (4 * WORD);
            assert_eq!(counts(C4), (0, kept));
            // A small class keeps its first chunk.
            let b = take::<[u64; 2]>(0);
            // SAFETY: taken above, given back once.
            unsafe { give(0, b) };
            assert_eq!(counts(0), (0, FIRST_CHUNK));
        })
        .join()
        .unwrap();
    }

    /// A class that fills past `KEEP_BYTES` and drains, over and over,
    /// reuses the chunk it kept, hands out each of its blocks once, and
    /// grows from there rather than from `FIRST_CHUNK`; an idle class never
    /// holds more than `KEEP_BYTES`.
    #[test]
    fn burst_cycles_keep_one_chunk() {
        std::thread::spawn(|| {
            const C: usize = C8;
            let bytes = 8 * WORD;
            let kept = KEEP_BYTES / bytes;
            let burst = |n: usize| -> Vec<NonNull<[u64; 8]>> {
                (0..n)
                    .map(|i| {
                        let b = take::<[u64; 8]>(C);
                        // SAFETY: a fresh block for a `[u64; 8]`.
                        unsafe { b.as_ptr().write([i as u64; 8]) };
                        b
                    })
                    .collect()
            };
            let drain = |out: Vec<NonNull<[u64; 8]>>| {
                for (i, b) in out.into_iter().enumerate() {
                    // SAFETY: written by `burst`, still out.
                    assert_eq!(unsafe { b.as_ptr().read() }, [i as u64; 8]);
                    // SAFETY: taken by `burst`, given back once.
                    unsafe { give(C, b) };
                }
            };
            for round in 0..3 {
                drain(burst(3 * kept));
                assert_eq!(counts(C), (0, kept), "round {round}: one chunk kept");
                // A burst that fits reuses it: no block twice, no growth.
                let out = burst(kept);
                let mut addrs: Vec<usize> = out.iter().map(|b| b.as_ptr() as usize).collect();
                addrs.sort_unstable();
                addrs.dedup();
                assert_eq!(addrs.len(), kept, "round {round}: blocks out are distinct");
                assert_eq!(counts(C), (kept, kept));
                // One more block grows by as many as the class holds.
                let more = burst(1);
                assert_eq!(counts(C), (kept + 1, 2 * kept));
                drain(more);
                drain(out);
                assert!(counts(C).1 * bytes <= KEEP_BYTES, "round {round}");
            }
        })
        .join()
        .unwrap();
    }

    /// Blocks of class 2 as `[u64; 8]`s holding their number, for the
    /// sweep tests.
    fn taken(n: usize, from: u64) -> Vec<NonNull<[u64; 8]>> {
        (0..n as u64)
            .map(|i| {
                let b = take::<[u64; 8]>(C8);
                // SAFETY: a fresh block for a `[u64; 8]`.
                unsafe { b.as_ptr().write([from + i; 8]) };
                b
            })
            .collect()
    }

    /// Checks that `b` holds `v`, and gives it back.
    fn check_give(b: NonNull<[u64; 8]>, v: u64) {
        // SAFETY: written by `taken`, still out.
        assert_eq!(unsafe { b.as_ptr().read() }, [v; 8]);
        // SAFETY: taken by `taken`, given back once.
        unsafe { give(C8, b) };
    }

    /// A burst's chunks are freed when it has drained and the class is
    /// used again, though two of its blocks live on: only their chunks and
    /// one kept chunk stay, in whatever order the others came back. The blocks left out keep their values,
    /// and the swept free list hands out each block once.
    #[test]
    fn long_lived_blocks_keep_only_their_chunks() {
        for order in ["fifo", "lifo", "shuffled"] {
            std::thread::spawn(move || {
                let bytes = 8 * WORD;
                let n = 100_000;
                let mut out: Vec<(NonNull<[u64; 8]>, u64)> =
                    taken(n, 0).into_iter().zip(0..).collect();
                let peak = counts(C8).1;
                assert!(peak >= n);
                let middle = out.remove(n / 2);
                let first = out.remove(0);
                match order {
                    "lifo" => out.reverse(),
                    "shuffled" => {
                        let mut x = 0x2545_f491_4f6c_dd1d_u64;
                        for i in (1..out.len()).rev() {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            out.swap(i, (x % (i as u64 + 1)) as usize);
                        }
                    }
                    _ => {}
                }
                for (b, v) in out {
                    check_give(b, v);
                }
                let (live, held) = counts(C8);
                assert_eq!(live, 2, "{order}");
                // Gives do not sweep: the class holds its peak until it is
                // used again.
                assert_eq!(held, peak, "{order}");
                // The next take sweeps: the first chunk, the middle
                // block's and the one kept are all that stay (the take
                // pops the free list of one of them).
                let probe = taken(1, 7).pop().unwrap();
                let (live, held) = counts(C8);
                assert_eq!(live, 3, "{order}");
                let held_now = FIRST_CHUNK + MAX_CHUNK + largest_kept(bytes);
                assert_eq!(held, held_now, "{order}: of {peak}");
                audit(C8);
                check_give(probe, 7);
                // The class grows again from what is left, each block once.
                let again = taken(n, 1_000_000);
                let mut addrs: Vec<usize> = again.iter().map(|b| b.as_ptr() as usize).collect();
                addrs.extend([first.0.as_ptr() as usize, middle.0.as_ptr() as usize]);
                addrs.sort_unstable();
                addrs.dedup();
                assert_eq!(addrs.len(), n + 2, "{order}: blocks out are distinct");
                check_give(first.0, first.1);
                check_give(middle.0, middle.1);
                for (b, v) in again.into_iter().zip(1_000_000..) {
                    check_give(b, v);
                }
                assert_eq!(counts(C8), (0, KEEP_BYTES / bytes), "{order}: released");
            })
            .join()
            .unwrap();
        }
    }

    /// Checks every invariant of class `c` on this thread: each free block
    /// (on either list, or beyond either bump) lies on a block boundary of
    /// exactly one chunk and is free once, the free blocks and those out
    /// add up to the capacity (invariant 2), the capacity is the chunks'
    /// sum, the bump is in the newest chunk, and the armed state and the
    /// threshold agree with the fields.
    fn audit(c: usize) {
        POOL.with(|p| {
            let k = &p.classes[c];
            let bytes = BLOCK_WORDS[c] * WORD;
            let chunks = k.chunks.borrow();
            let sum: usize = chunks.iter().map(|(_, l)| l.size() / bytes).sum();
            assert_eq!(sum, k.capacity.get(), "capacity");
            let (live, low) = (k.live.get(), k.low.get());
            if k.capacity.get() * bytes > KEEP_BYTES {
                assert!(low >= 1, "low {low}");
            } else {
                assert_eq!(low, 0, "low of a small class");
            }
            if k.armed.get() {
                let nulls = [k.free.get(), k.bump.get(), k.end.get()];
                assert!(nulls.iter().all(|p| p.is_null()), "armed: free and bump");
                assert!(0 < live && live < low, "armed: {live} out, low {low}");
            } else {
                let nulls = [k.stash.get(), k.stash_bump.get(), k.stash_end.get()];
                assert!(nulls.iter().all(|p| p.is_null()), "disarmed: the stash");
                assert!(live >= low, "disarmed: {live} out, low {low}");
            }
            let chunk_of = |a: usize| {
                let hits: Vec<usize> = (0..chunks.len())
                    .filter(|&i| {
                        let s = chunks[i].0.as_ptr() as usize;
                        (s..s + chunks[i].1.size()).contains(&a)
                    })
                    .collect();
                assert_eq!(hits.len(), 1, "block {a:#x} in one chunk");
                let s = chunks[hits[0]].0.as_ptr() as usize;
                assert_eq!((a - s) % bytes, 0, "on a block boundary");
                hits[0]
            };
            let mut free: Vec<usize> = Vec::new();
            for head in [k.free.get(), k.stash.get()] {
                let mut b = head;
                while !b.is_null() {
                    chunk_of(b as usize);
                    free.push(b as usize);
                    // SAFETY: a free block, whose first word links the next.
                    b = unsafe { b.cast::<*mut u8>().read() };
                }
            }
            for (b, e) in [
                (k.bump.get(), k.end.get()),
                (k.stash_bump.get(), k.stash_end.get()),
            ] {
                if b != e {
                    let i = chunk_of(b as usize);
                    assert_eq!(i, chunks.len() - 1, "the bump is in the newest chunk");
                    let s = chunks[i].0.as_ptr() as usize;
                    assert_eq!(e as usize, s + chunks[i].1.size(), "the end is its end");
                    free.extend((b as usize..e as usize).step_by(bytes));
                }
            }
            let n = free.len();
            free.sort_unstable();
            free.dedup();
            assert_eq!(free.len(), n, "each free block free once");
            assert_eq!(n + live, k.capacity.get(), "free and out add up");
        });
    }

    /// Sweeps on this thread in class `c`, and chunks they freed.
    fn sweeps(c: usize) -> [usize; 2] {
        POOL.with(|p| p.classes[c].stats.get())
    }

    /// A block of class `c`, each word holding `v`.
    fn raw_take(c: usize, v: u64) -> usize {
        let b = POOL.with(|p| p.classes[c].take(BLOCK_WORDS[c] * WORD));
        for w in 0..BLOCK_WORDS[c] {
            // SAFETY: a fresh block of the class's words, word aligned.
            unsafe { b.cast::<u64>().add(w).write(v) };
        }
        b as usize
    }

    /// Checks that block `b` of class `c` holds `v`, and gives it back.
    fn raw_give(c: usize, b: usize, v: u64) {
        for w in 0..BLOCK_WORDS[c] {
            // SAFETY: written by `raw_take`, still out.
            assert_eq!(
                unsafe { (b as *const u64).add(w).read() },
                v,
                "kept its value"
            );
        }
        // SAFETY: taken by `raw_take`, given back once.
        POOL.with(|p| unsafe { p.classes[c].give(b as *mut u8, BLOCK_WORDS[c] * WORD) });
    }

    /// Random rises and falls of every class, its blocks given back in
    /// random, oldest-first or newest-first order: every block out keeps
    /// its value and is out once, every invariant holds whenever the
    /// class's shape changes, sweeps free chunks, and the sweeps between
    /// two growths stay within the module docs' bound.
    #[test]
    fn random_rises_and_falls_in_every_class() {
        for c in 0..BLOCK_WORDS.len() {
            std::thread::spawn(move || {
                let mut x = 0x9e37_79b9_7f4a_7c15_u64 ^ c as u64;
                let mut rand = move |n: usize| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % n as u64) as usize
                };
                let mut out: Vec<(usize, u64)> = Vec::new();
                let mut v = 1u64;
                let (mut growths, mut at_growth, mut cap_at_growth) = (0, [0, 0], 0);
                for phase in 0..24 {
                    let target = if phase % 2 == 0 {
                        1 + rand(40_000)
                    } else {
                        rand(300)
                    };
                    let order = rand(3);
                    let mut steps = 0;
                    while out.len() != target && steps < 200_000 {
                        steps += 1;
                        let shape = (sweeps(c), counts(c).1);
                        // One step in ten goes against the phase.
                        let rising = (out.len() < target) != (rand(10) == 0);
                        if rising || out.is_empty() {
                            out.push((raw_take(c, v), v));
                            v += 1;
                        } else {
                            let i = match order {
                                0 => rand(out.len()),
                                1 => 0,
                                _ => out.len() - 1,
                            };
                            let (b, w) = if order == 1 {
                                out.remove(i)
                            } else {
                                out.swap_remove(i)
                            };
                            raw_give(c, b, w);
                        }
                        if (sweeps(c), counts(c).1) != shape {
                            audit(c);
                            if counts(c).1 > shape.1 {
                                growths += 1;
                                (at_growth, cap_at_growth) = (sweeps(c), counts(c).1);
                            }
                            let since = sweeps(c)[0] - at_growth[0];
                            let bound = (cap_at_growth / 4).max(1).ilog2() as usize + 1;
                            assert!(
                                since <= bound,
                                "class {c}: {since} sweeps since a growth to {cap_at_growth}"
                            );
                        }
                    }
                    assert_eq!(counts(c).0, out.len(), "class {c}, phase {phase}");
                }
                let mut addrs: Vec<usize> = out.iter().map(|b| b.0).collect();
                addrs.sort_unstable();
                addrs.dedup();
                assert_eq!(addrs.len(), out.len(), "class {c}: blocks out are distinct");
                let [swept, freed] = sweeps(c);
                assert!(
                    growths > 0 && swept > 0 && freed > 0,
                    "class {c}: {growths} growths, {swept} sweeps freed {freed}"
                );
                for (b, w) in out {
                    raw_give(c, b, w);
                }
                audit(c);
                assert_eq!(counts(c).0, 0);
            })
            .join()
            .unwrap();
        }
    }

    /// Bursts that recur beside a long-lived block: the first sweep frees
    /// the first burst's chunks, the next burst grows them again, and from
    /// then on sweeps keep what the bursts take, so the class neither
    /// grows nor frees again. A one-off burst is reclaimed
    /// (`long_lived_blocks_keep_only_their_chunks`).
    #[test]
    fn recurring_bursts_keep_what_they_take() {
        std::thread::spawn(|| {
            let long = raw_take(C8, 1);
            let mut after = Vec::new();
            for round in 0..6u64 {
                let burst: Vec<(usize, u64)> = (0..20_000)
                    .map(|v| (raw_take(C8, round << 32 | v), round << 32 | v))
                    .collect();
                after.push((counts(C8).1, sweeps(C8)));
                for (b, v) in burst {
                    raw_give(C8, b, v);
                }
                audit(C8);
            }
            let (peak, _) = after[0];
            let (_, [_, freed_once]) = after[1];
            assert!(freed_once > 0, "the first sweep frees: {after:?}");
            for r in 3..6 {
                assert_eq!(after[r].0, after[2].0, "round {r} did not grow: {after:?}");
                assert_eq!(
                    after[r].1[1], after[2].1[1],
                    "round {r} freed nothing: {after:?}"
                );
            }
            // Grown again from what the sweep kept: at most a chunk more.
            assert!(after[2].0 <= peak + MAX_CHUNK, "{after:?}");
            raw_give(C8, long, 1);
            assert_eq!(counts(C8), (0, largest_kept(8 * WORD)), "released");
        })
        .join()
        .unwrap();
    }

    /// The largest chunk of at most `KEEP_BYTES` that a class of `bytes`
    /// blocks grows, in blocks (chunks double from `FIRST_CHUNK`).
    fn largest_kept(bytes: usize) -> usize {
        let mut blocks = FIRST_CHUNK;
        while blocks * 2 <= MAX_CHUNK && blocks * 2 * bytes <= KEEP_BYTES {
            blocks *= 2;
        }
        blocks
    }

    /// A sweep that keeps the chunk with the bump in it (unused, and at
    /// most `KEEP_BYTES`) keeps its bump: its blocks beyond the bump are
    /// handed out after the free list's, not lost.
    #[test]
    fn a_kept_chunk_keeps_its_bump() {
        std::thread::spawn(|| {
            let bytes = 8 * WORD;
            // Chunks of 64, 64, 128, 256, 512 and 1,024 blocks; the last,
            // 64 KiB, has 476 blocks handed out and 548 beyond its bump.
            let mut out: Vec<(usize, u64)> = (0..1500).map(|v| (raw_take(C8, v), v)).collect();
            assert_eq!(counts(C8), (1500, 2048));
            let (b0, v0) = out.remove(0);
            for (b, v) in out {
                raw_give(C8, b, v);
            }
            audit(C8);
            let probe = raw_take(C8, 9);
            assert_eq!(sweeps(C8), [1, 4], "the 64, 128, 256 and 512 freed");
            assert_eq!(counts(C8), (2, FIRST_CHUNK + largest_kept(bytes)));
            audit(C8);
            // Every block the class holds but the two out is free to take
            // again without growing.
            let again: Vec<(usize, u64)> = (0..(FIRST_CHUNK + 1024 - 2) as u64)
                .map(|v| (raw_take(C8, v), v))
                .collect();
            assert_eq!(counts(C8).1, FIRST_CHUNK + 1024, "no growth");
            audit(C8);
            for (b, v) in again.into_iter().chain([(probe, 9), (b0, v0)]) {
                raw_give(C8, b, v);
            }
        })
        .join()
        .unwrap();
    }

    /// A sweep that would leave nothing free for the take that swept
    /// (every chunk it keeps is full, and no unused one is small enough to
    /// keep) keeps one unused chunk, rather than free it and grow at once.
    #[test]
    fn a_sweep_leaves_its_take_a_block() {
        std::thread::spawn(|| {
            // 20,480 blocks fill chunks of 64, 64, 128, ... 2,048 and four
            // of 4,096 exactly (4,096 blocks of 32 bytes are over
            // KEEP_BYTES): nothing is free, nothing beyond the bump.
            let mut out: Vec<(usize, u64)> = (0..20_480).map(|v| (raw_take(C4, v), v)).collect();
            assert_eq!(counts(C4), (20_480, 20_480));
            for (b, v) in out.drain(4096..) {
                raw_give(C4, b, v);
            }
            let probe = raw_take(C4, 7);
            assert_eq!(sweeps(C4), [1, 3], "three of the four unused chunks freed");
            assert_eq!(counts(C4), (4097, 4096 + 4096), "no chunk allocated");
            audit(C4);
            for (b, v) in out.into_iter().chain([(probe, 7)]) {
                raw_give(C4, b, v);
            }
        })
        .join()
        .unwrap();
    }

    /// A block taken while the pool lives and given back from another
    /// thread-local's destructor, after the pool is gone, stays valid.
    #[test]
    fn blocks_outlive_the_pool_at_thread_exit() {
        use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
        static SAW_GONE: AtomicBool = AtomicBool::new(false);
        struct Late(Cell<Option<NonNull<[u64; 8]>>>);
        impl Drop for Late {
            fn drop(&mut self) {
                SAW_GONE.store(GONE.get(), Relaxed);
                if let Some(b) = self.0.take() {
                    // SAFETY: taken below, still out: readable whether or
                    // not the pool is gone (invariant 1 and 4).
                    assert_eq!(unsafe { b.as_ptr().read() }, [7; 8]);
                    // SAFETY: taken below, given back once.
                    unsafe { give(C8, b) };
                }
                // A block taken now comes from somewhere valid too.
                let c = take::<[u64; 8]>(C8);
                // SAFETY: a fresh block.
                unsafe { c.as_ptr().write([1; 8]) };
                // SAFETY: taken above, given back once.
                unsafe { give(C8, c) };
            }
        }
        thread_local! {
            static LATE: Late = const { Late(Cell::new(None)) };
        }
        std::thread::spawn(|| {
            // The late one first: thread-locals' destructors run last
            // registered, first run, so the pool's runs before LATE's.
            LATE.with(|_| ());
            let b = take::<[u64; 8]>(C8);
            // SAFETY: a fresh block.
            unsafe { b.as_ptr().write([7; 8]) };
            LATE.with(|l| l.0.set(Some(b)));
        })
        .join()
        .unwrap();
        assert!(SAW_GONE.load(Relaxed), "LATE ran after the pool was gone");
    }

    /// A class armed, with blocks out, when the pool is destroyed: its
    /// chunks are leaked, so the blocks still out stay valid for a later
    /// destructor to read and give back (invariant 4).
    #[test]
    fn blocks_of_an_armed_class_outlive_the_pool() {
        struct Late(Cell<Vec<(usize, u64)>>);
        impl Drop for Late {
            fn drop(&mut self) {
                assert!(GONE.get(), "the pool is gone");
                for (b, v) in self.0.take() {
                    // SAFETY: taken below, still out: valid memory,
                    // leaked with its chunk.
                    assert_eq!(unsafe { (b as *const u64).read() }, v);
                    // SAFETY: taken below, given back once.
                    unsafe { give(C8, NonNull::new(b as *mut [u64; 8]).unwrap()) };
                }
            }
        }
        thread_local! {
            static LATE: Late = const { Late(Cell::new(Vec::new())) };
        }
        std::thread::spawn(|| {
            LATE.with(|_| ());
            let mut out: Vec<(usize, u64)> = (0..100_000).map(|v| (raw_take(C8, v), v)).collect();
            let kept: Vec<(usize, u64)> = [90_000, 50_000, 10].map(|i| out.swap_remove(i)).into();
            for (b, v) in out {
                raw_give(C8, b, v);
            }
            assert!(POOL.with(|p| p.classes[C8].armed.get()), "armed");
            audit(C8);
            LATE.with(|l| l.0.set(kept));
        })
        .join()
        .unwrap();
    }
}
