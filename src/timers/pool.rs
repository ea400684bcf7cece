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
//!    only when no block of the class is handed out (`live == 0`): a block
//!    handed out stays valid memory until it is given back, whatever else
//!    happens to the pool.
//! 2. A block is at most one of: handed out (counted in `live`), on the
//!    class's free list (its first word links to the next), or beyond the
//!    class's `bump` in its newest chunk (not handed out since that chunk
//!    was made or emptied). So a block is handed out once until it is
//!    given back.
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
//! One of the crate's few modules with hand-written `unsafe` (`src/lib.rs`
//! lists them all; `thin.rs` is its only user). Its blocks rely on the
//! invariants above, which the private fields keep: a block's pointer
//! leaves the module only through [`take`] and comes back only through
//! [`give`], whose contract is invariant 2's; the list and bump pointers
//! are written nowhere else. CI runs its tests under Miri (`.ci/miri`);
//! they and the timer and immediate tests also run clean under
//! valgrind's memcheck.
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
//! [`KEEP_BYTES`] either way. (A class is freed only when all its blocks
//! are back: one long-lived block keeps its class's chunks, as one live
//! allocation keeps a `malloc` arena's top. Round 20 tried sweeping a
//! class that drained only in part, freeing its chunks with no block out,
//! and took it out: finding those chunks walked the free list, a cache
//! miss per block when timers fire in random order, and more than doubled
//! the time per timer of such a drain with callbacks setting new timers;
//! a lazier sweep cost less but left the class pinned, and freeing chunks
//! let the next burst fault them in again. The table of changes in
//! `docs/performance.md` has the figures.)
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
        }
    }

    #[inline(always)]
    fn take(&self, bytes: usize) -> *mut u8 {
        self.live.set(self.live.get() + 1);
        let free = self.free.get();
        if !free.is_null() {
            // SAFETY: a block on the free list is a block of this class
            // that is not handed out (invariant 2), valid (invariant 1),
            // whose first word is the next free block, written by `give`.
            self.free.set(unsafe { free.cast::<*mut u8>().read() });
            return free;
        }
        let bump = self.bump.get();
        if bump != self.end.get() {
            // SAFETY: `bump` is a block of the newest chunk and `end` that
            // chunk's end, a whole number of blocks past it: the next block
            // is in the chunk or is its end.
            self.bump.set(unsafe { bump.add(bytes) });
            return bump;
        }
        self.grow(bytes)
    }

    /// Takes the first block of a new chunk.
    #[cold]
    #[inline(never)]
    fn grow(&self, bytes: usize) -> *mut u8 {
        let blocks = self.capacity.get().clamp(FIRST_CHUNK, MAX_CHUNK);
        let layout = Layout::from_size_align(blocks * bytes, WORD).expect("a chunk's layout");
        // SAFETY: the layout's size is not zero.
        let Some(chunk) = NonNull::new(unsafe { alloc(layout) }) else {
            handle_alloc_error(layout)
        };
        self.chunks.borrow_mut().push((chunk, layout));
        self.capacity.set(self.capacity.get() + blocks);
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
        // SAFETY: the caller's contract: a block of this class, handed out,
        // so valid and a word aligned (invariant 1); the pool owns it again.
        unsafe { block.cast::<*mut u8>().write(self.free.get()) };
        self.free.set(block);
        let live = self.live.get() - 1;
        self.live.set(live);
        if live == 0 && self.capacity.get() * bytes > KEEP_BYTES {
            self.release(KEEP_BYTES, bytes);
        }
    }

    /// Frees every chunk but the largest that holds at most `keep` bytes,
    /// which is emptied: its blocks are all beyond `bump` again. No block
    /// is handed out.
    #[cold]
    #[inline(never)]
    fn release(&self, keep: usize, bytes: usize) {
        debug_assert_eq!(self.live.get(), 0);
        let mut chunks = self.chunks.borrow_mut();
        // Chunks only grow, so the last that fits is the largest.
        let kept = chunks
            .iter()
            .rposition(|&(_, layout)| layout.size() <= keep);
        let kept = kept.map(|i| chunks.swap_remove(i));
        for (chunk, layout) in chunks.drain(..) {
            // SAFETY: allocated by `grow` with this layout; no block in it
            // is handed out (`live == 0`), so nothing points into it.
            unsafe { dealloc(chunk.as_ptr(), layout) };
        }
        // Nothing is free until the kept chunk's bump hands it out again:
        // the free list's blocks were in the chunks, kept one included.
        self.free.set(ptr::null_mut());
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
    }
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
}
