//! Callbacks in two words: [`ThinFn`] (a timer's, called any number of
//! times) and [`ThinOnce`] (an immediate's, called once) keep a closure of
//! up to one word (on 64-bit targets: capturing nothing, or one `i64`, one
//! `Rc` or one thin reference) in place, keep one of up to eight words in
//! a block of the thread's pool (`pool.rs`), and box a larger one. Either
//! way they are two words, the size of a `Box<dyn FnMut>`, while a
//! callback capturing one word makes no heap allocation, and one capturing up to eight makes no call to the
//! global allocator. A timer's slot keeps its `ThinFn` split, in 12 bytes
//! ([`SlotFn`]: the data word and a 32-bit code of the table, its distance
//! from a static of this module), so that the slot is 32 bytes; an
//! immediate's ring entry keeps its `ThinOnce` split the same way
//! ([`OnceSlot`], whose code's two low bits, always 0 in a table's code,
//! are the entry's flags), so that the entry is 16 bytes.
//!
//! # Invariants
//!
//! 1. `table` is the [`Table`] made for the one closure type `G` that
//!    [`ThinFn::new`] (or [`ThinOnce::new`]) stored, of that wrapper's kind
//!    (repeatable or one-shot), and until the closure is consumed or
//!    dropped `data` holds that `G` itself when the table is inline (`G`
//!    is at most a word in size and alignment), or else a pointer to a
//!    `G` that it owns: a block of the thread's pool (`pool.rs`) when
//!    [`pool::class_of`] gives `G` a class, or the pointer
//!    `Box::into_raw` gave for a `Box<G>` when it does not. Nothing else
//!    writes `data`.
//! 2. A [`ThinOnce`] whose closure was called has the [`SPENT`] table: its
//!    `G` was moved out (read, or its box taken back) by that call, and
//!    `data` is never read again. The table is switched *before* the call,
//!    so a closure that panics is dropped once, by the unwinding call.
//! 3. Neither type is `Send`, `Sync` or unwind-safe, whatever the closure
//!    is: the marker field gives them the auto traits of the
//!    `Box<dyn FnMut>` they replace (the closure may hold an `Rc`).
//! 4. The stored closure is never pinned: it is called through `&mut` and
//!    may move with its wrapper between calls, as a boxed one could not
//!    tell apart.
//! 5. A [`SlotFn`]'s or a [`TakenFn`]'s `code` is 0 (no callback) or was
//!    made by `code_of` from the table of the `ThinFn` whose data word is
//!    its `data`. The closure is reached only in a `TakenFn` (aligned: it
//!    is called in place there) or in that `ThinFn`, rebuilt (the same
//!    data word, the same table) only to be dropped; never in the packed
//!    slot, whose fields are only ever copied. The same holds of a
//!    [`OnceSlot`] and a [`TakenOnce`] and the `ThinOnce` they split, with
//!    the code's [`FLAG_BITS`] masked off (the entry's flags, which a
//!    table's code never has): 0 there is no callback, which is also what
//!    a called `TakenOnce` holds (set before the call, as invariant 2
//!    wants of [`SPENT`]; the code 0 decodes to `ANCHOR`, a spent table
//!    as well).
//!
//! # Safety
//!
//! This module is one of the crate's few with hand-written `unsafe`
//! (`src/lib.rs` lists them all). Its blocks rely on
//! invariants 1 and 2, which the private fields keep: the one storing
//! function, [`Thin::store`], is itself `unsafe` and is called only by
//! the two constructors, each with
//! the table its kind's [`Tables`] or [`OnceTables`] picks for `G`; so
//! the functions a table holds are instantiated for the `G` in `data`,
//! and the pointer they cast is to that `G` (or to its box's pointer),
//! initialised and correctly aligned (`MaybeUninit<*mut ()>` is a word in
//! size and alignment, and `G` is stored inline only when [`fits`] says
//! it is no bigger). A stored `G` is consumed once: by `Drop` (dropped in
//! place, or its box freed) or, for a [`ThinOnce`], by its one call,
//! after which the table is [`SPENT`] and `Drop` does nothing.
//!
//! A table's 32-bit code (`code_of`) is its distance in bytes from a
//! static of this module, `ANCHOR`, when that fits (every table of one
//! binary), or else an index into an append-only registry (a table in
//! another shared object). `table_of` turns a distance back into the
//! reference with `ptr::with_exposed_provenance`: `code_of` exposed the
//! table's address, so the rebuilt pointer has the provenance of that
//! live, immutable static (invariant 5 says every code came from
//! `code_of`). Moving a closure's data word between a `ThinFn`, a
//! `SlotFn` and a `TakenFn` (or a `ThinOnce`, a `OnceSlot` and a
//! `TakenOnce`) is a bitwise move, which invariant 4 allows. The code 0
//! itself decodes to `ANCHOR`, whose address is exposed too and whose
//! `call` does nothing: a `TakenOnce` called twice, or empty, calls that.
//!
//! A pooled `G` is given back to the pool once, after it was dropped in
//! place (even by a panicking drop) or moved out for its one call; the
//! pool's own invariants keep its blocks valid while they are out.
//!
//! CI runs the unit tests below, with the timer and immediate ones,
//! under Miri (`.ci/miri`), which checks these blocks against Rust's
//! aliasing model; they also run clean under valgrind's memcheck.
//!
//! Why not `smallbox`, which `inline.rs` uses for the deferred-operation
//! queue and immediates used until this module: a
//! `SmallBox<dyn FnMut, S1>` is three words (its space and a full fat
//! pointer), which made the timer's slot 48 bytes; the arenas are bound by
//! page faults on the breadth and insert workloads, and those eight bytes
//! cost more (insert-pooled 0.71–0.84× in alternating pairs) than the
//! allocation it saves. The measurements that justify this module are in
//! the commits that added it and in the table of changes in
//! `docs/performance.md` (round 15).
#![allow(unsafe_code)]

use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

use super::EventLoop;
use super::error::{BoxError, CallbackResult};
use super::pool;

/// What a stored closure returns.
type Out = Result<(), BoxError>;

/// Calls the stored closure at `data` (see the module's invariants).
type CallFn = unsafe fn(*mut (), &mut EventLoop) -> Out;

/// The box a stored callback replaces: the source of its auto traits.
type Boxed = Box<dyn FnMut(&mut EventLoop) -> Out>;

/// Drops the stored closure at `data`, or frees its box.
type DropFn = unsafe fn(*mut ());

/// The functions for one stored closure type, and how it is stored.
struct Table {
    call: CallFn,
    /// `None` when dropping does nothing: an inline closure without drop
    /// glue, or a spent one.
    drop: Option<DropFn>,
    inline: bool,
    /// [`SPENT`]'s: the closure was consumed.
    spent: bool,
}

/// The table of a [`ThinOnce`] already called: nothing to call or drop.
static SPENT: Table = Table {
    call: call_spent,
    drop: None,
    inline: false,
    spent: true,
};

/// A spent [`ThinOnce`]'s call: does nothing (as the `Option` that an
/// `FnMut` over a one-shot closure empties).
///
/// # Safety
///
/// None needed: it reads nothing. It is `unsafe` only to have the type
/// of a table's `call`, whose other functions read `data` as their `G`.
unsafe fn call_spent(_: *mut (), _: &mut EventLoop) -> Out {
    Ok(())
}

/// Whether a `G` is stored inline: no bigger than a word and no more
/// aligned.
const fn fits<G>() -> bool {
    size_of::<G>() <= size_of::<MaybeUninit<*mut ()>>()
        && align_of::<G>() <= align_of::<MaybeUninit<*mut ()>>()
}

/// The table of a closure type `G` stored by a wrapper whose calls go
/// through `call_inline` (when `G` [`fits`]) or `call_boxed`: the one
/// place a table is made, so the drop matches how `G` is stored.
const fn table<G>(call_inline: CallFn, call_boxed: CallFn) -> Table {
    if fits::<G>() {
        Table {
            call: call_inline,
            drop: if std::mem::needs_drop::<G>() {
                Some(drop_inline::<G>)
            } else {
                None
            },
            inline: true,
            spent: false,
        }
    } else {
        Table {
            call: call_boxed,
            drop: Some(drop_boxed::<G>),
            inline: false,
            spent: false,
        }
    }
}

/// The table of a repeatable closure type `G`, as a constant: a
/// reference to it is `'static`.
struct Tables<G>(PhantomData<G>);

impl<G: FnMut(&mut EventLoop) -> Out + 'static> Tables<G> {
    const TABLE: &'static Table = &table::<G>(call_inline::<G>, call_boxed::<G>);
}

/// The table of a one-shot closure type `G`: its `call` moves the closure
/// out and consumes it.
struct OnceTables<G>(PhantomData<G>);

impl<G: FnOnce(&mut EventLoop) -> Out + 'static> OnceTables<G> {
    const TABLE: &'static Table = &table::<G>(call_once_inline::<G>, call_once_boxed::<G>);
}

/// # Safety
/// `data` points at an initialised `G` (stored inline), which is moved
/// out: the caller has already marked it spent.
unsafe fn call_once_inline<G: FnOnce(&mut EventLoop) -> Out>(
    data: *mut (),
    lp: &mut EventLoop,
) -> Out {
    // SAFETY: the caller's contract; the slot is spent, so this read is
    // the `G`'s one move out.
    let g = unsafe { data.cast::<G>().read() };
    g(lp)
}

/// # Safety
/// `data` points at the pointer to an owned `G` (a pool block or a
/// `Box<G>`), taken back here: the caller has already marked it spent.
unsafe fn call_once_boxed<G: FnOnce(&mut EventLoop) -> Out>(
    data: *mut (),
    lp: &mut EventLoop,
) -> Out {
    // SAFETY: the caller's contract: the word is the pointer `store` wrote.
    let p = unsafe { *data.cast::<*mut G>() };
    match const { pool::class_of::<G>() } {
        Some(c) => {
            // SAFETY: the caller's contract: a pool block holding a `G`,
            // moved out once (the slot is spent).
            let g = unsafe { p.read() };
            // SAFETY: that block, given back once; before the call, so that
            // the callback may reuse it.
            unsafe { pool::give(c, NonNull::new_unchecked(p)) };
            g(lp)
        }
        None => {
            // SAFETY: the caller's contract: the pointer came from
            // `Box::into_raw` and, the slot spent, is taken back once.
            let g = unsafe { Box::from_raw(p) };
            g(lp)
        }
    }
}

/// # Safety
/// `data` points at an initialised `G` (stored inline).
unsafe fn call_inline<G: FnMut(&mut EventLoop) -> Out>(data: *mut (), lp: &mut EventLoop) -> Out {
    // SAFETY: the caller's contract; the `&mut` lasts for this call only,
    // and nothing else reaches the `ThinFn` it was made from meanwhile
    // (`call` holds it by `&mut`).
    let g = unsafe { &mut *data.cast::<G>() };
    g(lp)
}

/// # Safety
/// `data` points at an initialised `G` (stored inline), dropped here.
unsafe fn drop_inline<G>(data: *mut ()) {
    // SAFETY: the caller's contract; `Drop` calls this once and the slot
    // is never read again.
    unsafe { data.cast::<G>().drop_in_place() }
}

/// # Safety
/// `data` points at the pointer to a live, owned `G` (a pool block or a
/// `Box<G>`).
unsafe fn call_boxed<G: FnMut(&mut EventLoop) -> Out>(data: *mut (), lp: &mut EventLoop) -> Out {
    // SAFETY: the caller's contract: the word is the pointer `store`
    // wrote, not yet freed.
    let g = unsafe { &mut **data.cast::<*mut G>() };
    g(lp)
}

/// # Safety
/// `data` points at the pointer to a live, owned `G` (a pool block or a
/// `Box<G>`), dropped and freed here.
unsafe fn drop_boxed<G>(data: *mut ()) {
    // SAFETY: the caller's contract: the word is the pointer `store` wrote.
    let p = unsafe { *data.cast::<*mut G>() };
    match const { pool::class_of::<G>() } {
        Some(c) => {
            // Given back when this goes, after the drop: even one that
            // panics.
            // SAFETY: a pool block of class `c` (`store`), non-null.
            let _give = GiveBack(c, unsafe { NonNull::new_unchecked(p) });
            // SAFETY: the caller's contract: the block holds a live `G`,
            // dropped once.
            unsafe { p.drop_in_place() }
        }
        // SAFETY: the caller's contract: the pointer came from
        // `Box::into_raw` and `Drop` gives it back once.
        None => drop(unsafe { Box::from_raw(p) }),
    }
}

/// Gives a pool block back when dropped: made once per block, by
/// [`drop_boxed`].
struct GiveBack<G>(usize, NonNull<G>);

impl<G> Drop for GiveBack<G> {
    fn drop(&mut self) {
        // SAFETY: the block came from `pool::take::<G>(self.0)` (`store`)
        // and its `G` was just dropped; given back once, here.
        unsafe { pool::give(self.0, self.1) }
    }
}

/// The two words both callback types are: the closure (or its box's
/// pointer) and its table. See the module's invariants.
struct Thin {
    data: MaybeUninit<*mut ()>,
    table: &'static Table,
    /// The auto traits of the `Box<dyn FnMut>` this replaces: neither
    /// `Send`, `Sync` nor unwind-safe, whatever the closure is.
    _boxed: PhantomData<Boxed>,
}

impl Thin {
    /// Stores `g` (inline if it [`fits`], boxed otherwise) with `table`;
    /// and says whether dropping it does nothing (inline, no drop glue).
    ///
    /// # Safety
    ///
    /// `table` is the table made for this `G` by the kind of wrapper that
    /// will call it: `Tables::<G>::TABLE` for a [`ThinFn`],
    /// `OnceTables::<G>::TABLE` for a [`ThinOnce`] (the module's first
    /// invariant).
    #[inline(always)]
    unsafe fn store<G: 'static>(g: G, table: &'static Table) -> (Thin, bool) {
        debug_assert!(table.inline == fits::<G>() && !table.spent);
        let mut data = MaybeUninit::<*mut ()>::uninit();
        if const { fits::<G>() } {
            // SAFETY: `G` fits in the word (size and alignment, `fits`),
            // which is ours and uninitialised: nothing is overwritten.
            unsafe { data.as_mut_ptr().cast::<G>().write(g) };
        } else if let Some(c) = const { pool::class_of::<G>() } {
            let block = pool::take::<G>(c);
            // SAFETY: a fresh block for a `G` (its class fits its size and
            // alignment), ours until given back.
            unsafe { block.as_ptr().write(g) };
            data.write(block.as_ptr().cast());
        } else {
            data.write(Box::into_raw(Box::new(g)).cast());
        }
        let thin = Thin {
            data,
            table,
            _boxed: PhantomData,
        };
        // A boxed table always has a drop (the box's).
        (thin, table.drop.is_none())
    }

    /// The stored closure's place, for its table's functions.
    #[inline(always)]
    fn place(&mut self) -> *mut () {
        self.data.as_mut_ptr().cast()
    }

    /// Whether dropping it does nothing: inline without drop glue, or
    /// spent.
    fn drops_nothing(&self) -> bool {
        self.table.drop.is_none()
    }
}

impl Drop for Thin {
    #[inline]
    fn drop(&mut self) {
        if let Some(drop) = self.table.drop {
            // SAFETY: the table's drop is for the closure in `data`, not
            // spent (a spent table has none; the module's invariants), and
            // this runs once.
            unsafe { drop(self.place()) }
        }
    }
}

impl fmt::Debug for Thin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Thin")
            .field("inline", &self.table.inline)
            .field("spent", &self.table.spent)
            .finish_non_exhaustive()
    }
}

/// A stored repeatable callback, two words: inline when the closure is a
/// word or less, boxed otherwise. See the module's invariants.
#[derive(Debug)]
pub(crate) struct ThinFn(Thin);

impl ThinFn {
    /// Stores `g`, and says whether dropping it does nothing (it is inline
    /// and has no drop glue): then it may be forgotten instead.
    #[inline(always)]
    pub(crate) fn new<G>(g: G) -> (ThinFn, bool)
    where
        G: FnMut(&mut EventLoop) -> Out + 'static,
    {
        // SAFETY: `G`'s table for a repeatable callback.
        let (thin, plain) = unsafe { Thin::store(g, Tables::<G>::TABLE) };
        (ThinFn(thin), plain)
    }

    /// [`new`](Self::new) for a user's callback, whose result is turned
    /// into the loop's (`CallbackResult`).
    #[inline(always)]
    pub(crate) fn callback<F, R>(mut f: F) -> (ThinFn, bool)
    where
        F: FnMut(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        Self::new(move |lp: &mut EventLoop| f(lp).into_result())
    }

    /// Calls the closure. (A timer's is called split, as a
    /// [`TakenFn`]: this is the tests'.)
    #[cfg(test)]
    #[inline(always)]
    pub(crate) fn call(&mut self, lp: &mut EventLoop) -> Out {
        let call = self.0.table.call;
        // SAFETY: `call` is the function for the closure `new` stored
        // (the module's invariant); `&mut self` keeps anything else from
        // touching it during the call.
        unsafe { call(self.0.place(), lp) }
    }

    /// Whether the closure lives in a heap block of its own.
    #[cfg(test)]
    pub(crate) fn is_heap(&self) -> bool {
        !self.0.table.inline
    }

    /// Whether dropping it does nothing (what [`new`](Self::new) answered).
    #[cfg(test)]
    pub(crate) fn drops_nothing(&self) -> bool {
        self.0.drops_nothing()
    }
}

/// The anchor of the tables' 32-bit codes ([`code_of`]): a static of
/// the crate, in the section the tables are in (it holds a function
/// pointer, as they do), so that no table is at offset 0 (the code
/// [`NO_FN`] stays free; every table's code is a multiple of 4, its
/// [`FLAG_BITS`] free for an immediate's flags). No callback ever
/// has it as its table; the code [`NO_FN`] decodes to it, a spent table
/// (its `call` does nothing, it has no `drop`).
static ANCHOR: Table = Table {
    call: call_spent,
    drop: None,
    inline: false,
    spent: true,
};

/// [`SlotFn`]'s code of "no callback".
const NO_FN: u32 = 0;

/// The lowest direct code (as `i32`): a table up to 1 GiB below the
/// anchor, or 2 GiB above (in bytes: decoding is a sign extension and an
/// add). Codes below it are the registry's ([`REGISTRY`]): `i32::MIN`
/// plus the index shifted past [`FLAG_BITS`].
const DIRECT_MIN: i32 = -(1 << 30);

/// The low bits of every table's code that are 0: a direct code is a
/// distance between two `Table`s, a multiple of their alignment (8 on
/// 64-bit targets, at least 4 anywhere: the assertion below), and a
/// registry code is shifted to keep them free. An immediate's entry keeps
/// its two flags there ([`OnceSlot`]).
const FLAG_BITS: u32 = 0b11;

const _: () = assert!(align_of::<Table>() > FLAG_BITS as usize);

/// A [`OnceSlot`]'s flag: the immediate keeps the loop alive.
const REFED: u32 = 0b01;

/// A [`OnceSlot`]'s flag: dropping the callback does nothing (what
/// [`ThinOnce::new`] answered), so it may be forgotten unread.
const PLAIN: u32 = 0b10;

/// Tables too far from [`ANCHOR`] for a direct code (a closure type
/// instantiated in another shared object), by registry index. Append-only,
/// and global rather than thread-local, so that a code means the same on
/// every thread and at every point of a thread's exit.
static REGISTRY: std::sync::Mutex<Vec<&'static Table>> = std::sync::Mutex::new(Vec::new());

/// The anchor's address, exposed (so that [`table_of`] may rebuild a
/// reference to the anchor itself from [`NO_FN`]).
#[inline(always)]
fn anchor() -> usize {
    (&raw const ANCHOR).expose_provenance()
}

/// The 32-bit code of a [`ThinFn`]'s table: its distance from
/// [`ANCHOR`] in bytes when that is at least [`DIRECT_MIN`] and fits an
/// `i32` (always, for the tables of one binary), or else a registry
/// index with the top bit set. Never [`NO_FN`] or 1 (no table starts in
/// the anchor); its [`FLAG_BITS`] are 0. The table's address is exposed, so that [`table_of`] may
/// rebuild the reference from it.
#[inline(always)]
fn code_of(table: &'static Table) -> u32 {
    match direct_code(table) {
        Some(code) => code,
        None => register(table),
    }
}

/// [`code_of`] for a table near enough to the anchor (every table of
/// one binary): its distance, with no call; `None` for one that needs
/// the registry. (It exposes the table's address either way.)
#[inline(always)]
fn direct_code(table: &'static Table) -> Option<u32> {
    let addr = std::ptr::from_ref(table).expose_provenance();
    // The distance, signed; in `i64`, so that the range test cannot
    // overflow where `isize` is 32 bits (there every distance wraps to one
    // that `table_of`'s wrapping add undoes). The test is one unsigned
    // comparison: `DIRECT_MIN <= offset <= i32::MAX`.
    let offset = addr.wrapping_sub(anchor()) as isize as i64;
    let span = (i64::from(i32::MAX) - i64::from(DIRECT_MIN)) as u64;
    if (offset.wrapping_sub(i64::from(DIRECT_MIN)) as u64) <= span {
        debug_assert!(
            offset != i64::from(NO_FN) && offset != 1,
            "a table in the anchor"
        );
        Some(offset as i32 as u32)
    } else {
        None
    }
}

/// [`code_of`] for a table too far from the anchor: its registry code.
#[cold]
#[inline(never)]
fn register(table: &'static Table) -> u32 {
    let mut reg = REGISTRY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let index = match reg.iter().position(|&t| std::ptr::eq(t, table)) {
        Some(i) => i,
        None => {
            reg.push(table);
            reg.len() - 1
        }
    };
    assert!(index < (1 << 28), "too many distant callback tables");
    (i32::MIN + ((index as i32) << FLAG_BITS.count_ones())) as u32
}

/// The table a code made by [`code_of`] stands for ([`ANCHOR`] for
/// [`NO_FN`]).
#[inline(always)]
fn table_of(code: u32) -> &'static Table {
    debug_assert_eq!(code & FLAG_BITS, 0, "a code with flags");
    let offset = code as i32;
    if offset < DIRECT_MIN {
        return registered(offset);
    }
    let addr = anchor().wrapping_add_signed(offset as isize);
    let p = std::ptr::with_exposed_provenance::<Table>(addr);
    // SAFETY: `code` was made by `code_of` from a `&'static Table` (the
    // fifth invariant): `addr` is that table's address, rebuilt exactly
    // (its distance from the anchor fit the code), and `code_of` exposed
    // it, so `p` has the provenance of a live, immutable static, aligned
    // and valid for `'static`. Or `code` is `NO_FN`: `addr` is the
    // anchor's, exposed by `anchor()`, a static `Table` as well.
    unsafe { &*p }
}

/// [`table_of`] for a registry code.
#[cold]
#[inline(never)]
fn registered(code: i32) -> &'static Table {
    let index = code.wrapping_sub(i32::MIN) as usize >> FLAG_BITS.count_ones();
    REGISTRY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)[index]
}

/// The [`Thin`] a split callback's two fields stand for, whole again:
/// its data word and the table of `code` (a table's code, its flags
/// masked off, not [`NO_FN`]). Only to be dropped (the fifth invariant):
/// the split ones ([`SlotFn`], [`TakenFn`], [`TakenOnce`]) rebuild their
/// `ThinFn` or `ThinOnce` with it when what they hold is dropped unrun.
#[inline(always)]
fn rejoined(data: MaybeUninit<*mut ()>, code: u32) -> Thin {
    debug_assert!(code != NO_FN, "no callback to rejoin");
    Thin {
        data,
        table: table_of(code),
        _boxed: PhantomData,
    }
}

/// Whether dropping the closure of the table of `code` (a table's
/// code, its flags masked off) does nothing: in debug builds, what a
/// plain callback is checked against before it is forgotten.
#[inline(always)]
fn drops_nothing(code: u32) -> bool {
    code == NO_FN || table_of(code).drop.is_none()
}

/// A [`ThinFn`] as a timer's slot keeps it, 12 bytes aligned to 4: the
/// data word and a 32-bit code of its table ([`code_of`]), or
/// [`NO_FN`]: no callback (while it runs, once cleared). With the
/// slot's generation beside it, this is two words where a `ThinFn` and
/// the generation were three.
///
/// Invariant: `code` is [`NO_FN`], or the code of the table of a
/// `ThinFn` whose data word is `data` (the closure moved here, as the
/// fourth invariant allows); the `ThinFn` is rebuilt from the two when
/// taken out, and dropped with the slot otherwise.
#[repr(C, packed(4))]
pub(crate) struct SlotFn {
    data: MaybeUninit<*mut ()>,
    code: u32,
    /// As [`Thin`]'s: neither `Send`, `Sync` nor unwind-safe.
    _boxed: PhantomData<Boxed>,
}

impl SlotFn {
    /// `f`, split.
    #[inline(always)]
    pub(crate) fn new(f: ThinFn) -> SlotFn {
        let f = std::mem::ManuallyDrop::new(f);
        SlotFn {
            data: f.0.data,
            code: code_of(f.0.table),
            _boxed: PhantomData,
        }
    }

    /// Puts a callback taken out ([`take`](Self::take)) back in a slot
    /// that holds none, field by field (no table looked up); `f` holds
    /// none after.
    #[inline(always)]
    pub(crate) fn put(&mut self, f: &mut TakenFn) {
        debug_assert!(self.is_none(), "a callback over another");
        self.data = f.data;
        self.code = std::mem::replace(&mut f.code, NO_FN);
    }

    /// No callback is stored.
    #[inline(always)]
    pub(crate) fn is_none(&self) -> bool {
        self.code == NO_FN
    }

    /// Takes the callback out, as it is (none if there is none), leaving
    /// none.
    #[inline(always)]
    pub(crate) fn take(&mut self) -> TakenFn {
        TakenFn {
            data: self.data,
            code: std::mem::replace(&mut self.code, NO_FN),
            _boxed: PhantomData,
        }
    }

    /// In debug builds, that a callback about to be forgotten as plain has
    /// nothing to free: an inline closure without drop glue, or none.
    #[inline(always)]
    pub(crate) fn debug_assert_plain(&self) {
        debug_assert!(drops_nothing(self.code), "a plain timer's closure");
    }
}

/// A timer's callback taken out of its slot ([`SlotFn::take`]) to run:
/// the same two fields, the data word aligned, so that it is called in
/// place. A timers pass keeps it in its frame and hands it on by
/// reference, field by field: a `ThinFn` rebuilt instead was stored to
/// the stack as two words and moved on with one 16-byte load, which the
/// CPU cannot forward from them (timeout-pooled 0.84×).
pub(crate) struct TakenFn {
    data: MaybeUninit<*mut ()>,
    code: u32,
    /// As [`Thin`]'s: neither `Send`, `Sync` nor unwind-safe.
    _boxed: PhantomData<Boxed>,
}

impl TakenFn {
    /// Calls the callback, which is there (an armed timer's).
    #[inline(always)]
    pub(crate) fn call(&mut self, lp: &mut EventLoop) -> Out {
        debug_assert!(self.code != NO_FN, "an armed timer has its callback");
        let call = table_of(self.code).call;
        // SAFETY: `call` is the function of the table `code` stands for,
        // that of the closure whose data word this is (the fifth
        // invariant), aligned here; `&mut self` keeps anything else from
        // touching it during the call.
        unsafe { call(self.data.as_mut_ptr().cast(), lp) }
    }

    /// Forgets a plain timer's callback (one [`ThinFn::new`] said drops
    /// nothing), after its run: [`discard`](Self::discard)`(true)`
    /// without the store of the code and the test of it that the drop
    /// would then make.
    #[inline(always)]
    pub(crate) fn forget_plain(self) {
        debug_assert!(drops_nothing(self.code), "a plain timer's closure");
        std::mem::forget(self);
    }

    /// Drops it; or, if `plain` (as [`ThinFn::new`] answered) says
    /// dropping does nothing, forgets it: no load of its table, no test.
    /// It holds none after.
    #[inline(always)]
    pub(crate) fn discard(&mut self, plain: bool) {
        if plain {
            debug_assert!(drops_nothing(self.code), "a plain timer's closure");
            self.code = NO_FN;
        } else {
            drop(std::mem::replace(
                self,
                TakenFn {
                    data: MaybeUninit::uninit(),
                    code: NO_FN,
                    _boxed: PhantomData,
                },
            ));
        }
    }
}

impl Drop for TakenFn {
    #[inline]
    fn drop(&mut self) {
        if self.code != NO_FN {
            // The `ThinFn` `new` split, dropped once: this is never read
            // after.
            drop(ThinFn(rejoined(self.data, self.code)));
        }
    }
}

impl Drop for SlotFn {
    #[inline]
    fn drop(&mut self) {
        if !self.is_none() {
            // The `ThinFn` `new` split, dropped once: this slot is never
            // read after.
            drop(ThinFn(rejoined(self.data, self.code)));
        }
    }
}

/// A [`ThinOnce`] as an immediate's ring entry keeps it, 12 bytes aligned
/// to 4: the data word, and its table's code ([`code_of`]) with the
/// entry's two flags in its [`FLAG_BITS`] ([`REFED`], [`PLAIN`]); or
/// [`NO_FN`], flags and all: no callback (taken to run, or cleared).
/// With the entry's tag beside it, this is 16 bytes where a `ThinOnce`,
/// the tag and two `bool`s were 24.
///
/// Invariant: `code` is [`NO_FN`], or, its flags masked off, the code of
/// the table of a `ThinOnce` whose data word is `data` (the closure moved
/// here, as the fourth invariant allows; not yet called, so not
/// [`SPENT`]); the callback is taken out whole ([`take`](Self::take)) to
/// be called or dropped.
///
/// It has no drop glue, so that a ring of entries whose callbacks were
/// all taken is emptied with no pass over it (`Vec::clear` is then a
/// store): one dropped while it holds a callback leaks that callback
/// (safe, but its captures are never dropped), so its owner takes the
/// callbacks left out before dropping it (the ring's `Drop`).
#[repr(C, packed(4))]
pub(crate) struct OnceSlot {
    data: MaybeUninit<*mut ()>,
    code: u32,
    /// As [`Thin`]'s: neither `Send`, `Sync` nor unwind-safe.
    _boxed: PhantomData<Boxed>,
}

impl OnceSlot {
    /// `f`, split, refed; `plain` is what [`ThinOnce::new`] answered. Its
    /// table may need the registry: a call, on this cold path.
    #[cold]
    #[inline(never)]
    pub(crate) fn new(f: ThinOnce, plain: bool) -> OnceSlot {
        let code = code_of(f.0.table);
        Self::split(f, code, plain)
    }

    /// [`new`](Self::new), with no call, for a callback whose table has a
    /// direct code (every closure type of this binary); `f` back
    /// otherwise.
    #[inline(always)]
    pub(crate) fn near(f: ThinOnce, plain: bool) -> Result<OnceSlot, ThinOnce> {
        match direct_code(f.0.table) {
            Some(code) => Ok(Self::split(f, code, plain)),
            None => Err(f),
        }
    }

    /// `f` split, given its table's code.
    #[inline(always)]
    fn split(f: ThinOnce, code: u32, plain: bool) -> OnceSlot {
        debug_assert!(
            !plain || f.drops_nothing(),
            "a plain callback drops nothing"
        );
        let f = std::mem::ManuallyDrop::new(f);
        let flags = if plain { REFED | PLAIN } else { REFED };
        OnceSlot {
            data: f.0.data,
            code: code | flags,
            _boxed: PhantomData,
        }
    }

    /// A callback is stored (the entry is live).
    #[inline(always)]
    pub(crate) fn is_some(&self) -> bool {
        self.code != NO_FN
    }

    /// The refed flag (false with no callback).
    #[inline(always)]
    pub(crate) fn refed(&self) -> bool {
        self.code & REFED != 0
    }

    /// Sets the refed flag of a stored callback.
    #[inline(always)]
    pub(crate) fn set_refed(&mut self, on: bool) {
        debug_assert!(self.is_some(), "the flag of no callback");
        self.code = (self.code & !REFED) | if on { REFED } else { 0 };
    }

    /// The plain flag: dropping the callback does nothing (false with no
    /// callback).
    #[inline(always)]
    pub(crate) fn plain(&self) -> bool {
        self.code & PLAIN != 0
    }

    /// Takes the callback out, flags and all (none if there is none),
    /// leaving none.
    #[inline(always)]
    pub(crate) fn take(&mut self) -> TakenOnce {
        TakenOnce {
            data: self.data,
            code: std::mem::replace(&mut self.code, NO_FN),
            _boxed: PhantomData,
        }
    }
}

/// An immediate's callback taken out of its entry ([`OnceSlot::take`]),
/// with the entry's flags: the same two fields, the data word aligned, so
/// that it is called in place, in the caller's frame, by reference (see
/// [`TakenFn`] on why not moved by value).
pub(crate) struct TakenOnce {
    data: MaybeUninit<*mut ()>,
    code: u32,
    /// As [`Thin`]'s: neither `Send`, `Sync` nor unwind-safe.
    _boxed: PhantomData<Boxed>,
}

impl TakenOnce {
    /// A callback is held.
    #[inline(always)]
    pub(crate) fn is_some(&self) -> bool {
        self.code != NO_FN
    }

    /// The entry's refed flag (false with no callback).
    #[inline(always)]
    pub(crate) fn refed(&self) -> bool {
        self.code & REFED != 0
    }

    /// Calls the closure, the first time; later calls (and the call of
    /// none) do nothing: the code is [`NO_FN`] before the call (as the
    /// second invariant wants of [`SPENT`]), which decodes to the
    /// anchor, whose `call` does nothing.
    #[inline(always)]
    pub(crate) fn call(&mut self, lp: &mut EventLoop) -> Out {
        let code = std::mem::replace(&mut self.code, NO_FN) & !FLAG_BITS;
        let call = table_of(code).call;
        // SAFETY: `call` is the function of the table `code` stands for,
        // that of the one-shot closure whose data word this is (the fifth
        // invariant), aligned here; or, for `NO_FN`, the anchor's
        // `call_spent`, which reads nothing. The code is `NO_FN` from
        // now on, so the closure is moved out once, and `&mut self` keeps
        // anything else from touching it.
        unsafe { call(self.data.as_mut_ptr().cast(), lp) }
    }

    /// Forgets it after its [`call`](Self::call): it holds nothing.
    #[inline(always)]
    pub(crate) fn spent(self) {
        debug_assert!(!self.is_some(), "a callback not called");
        std::mem::forget(self);
    }

    /// Drops it; or, if its plain flag says dropping does nothing,
    /// forgets it: no load of its table, no test.
    #[inline(always)]
    pub(crate) fn discard(self) {
        if self.code & PLAIN != 0 {
            debug_assert!(
                drops_nothing(self.code & !FLAG_BITS),
                "a plain immediate's closure"
            );
            std::mem::forget(self);
        } else {
            drop(self);
        }
    }
}

impl Drop for TakenOnce {
    #[inline]
    fn drop(&mut self) {
        if self.code != NO_FN {
            // The `ThinOnce` `OnceSlot::new` split, dropped once: this is
            // never read after.
            drop(ThinOnce(rejoined(self.data, self.code & !FLAG_BITS)));
        }
    }
}

/// A stored one-shot callback, two words: inline when the closure is a
/// word or less, boxed otherwise. Called once, it runs the closure;
/// called again, it does nothing. See the module's invariants.
#[derive(Debug)]
pub(crate) struct ThinOnce(Thin);

impl ThinOnce {
    /// Stores `g`, and says whether dropping it does nothing (it is inline
    /// and has no drop glue): then it may be forgotten instead.
    #[inline(always)]
    pub(crate) fn new<G>(g: G) -> (ThinOnce, bool)
    where
        G: FnOnce(&mut EventLoop) -> Out + 'static,
    {
        // SAFETY: `G`'s table for a one-shot callback.
        let (thin, plain) = unsafe { Thin::store(g, OnceTables::<G>::TABLE) };
        (ThinOnce(thin), plain)
    }

    /// [`new`](Self::new) for a user's callback, whose result is turned
    /// into the loop's (`CallbackResult`).
    #[inline(always)]
    pub(crate) fn callback<F, R>(f: F) -> (ThinOnce, bool)
    where
        F: FnOnce(&mut EventLoop) -> R + 'static,
        R: CallbackResult,
    {
        Self::new(move |lp: &mut EventLoop| f(lp).into_result())
    }

    /// Calls the closure, the first time; later calls do nothing.
    #[inline(always)]
    pub(crate) fn call(&mut self, lp: &mut EventLoop) -> Out {
        let call = std::mem::replace(&mut self.0.table, &SPENT).call;
        // SAFETY: `call` is the function for the closure `new` stored, or
        // `call_spent`, which reads nothing; the table is spent first (the
        // module's invariants), so the closure is moved out once, and
        // `&mut self` keeps anything else from touching it.
        unsafe { call(self.0.place(), lp) }
    }

    /// Whether the closure lives in a heap block of its own.
    #[cfg(test)]
    pub(crate) fn is_heap(&self) -> bool {
        !self.0.table.inline && !self.0.table.spent
    }

    /// Whether dropping it does nothing: inline without drop glue, or
    /// spent.
    pub(crate) fn drops_nothing(&self) -> bool {
        self.0.drops_nothing()
    }

    /// Drops it; or, if `plain` (as [`new`](Self::new) answered) says
    /// dropping does nothing, forgets it: no load of its table, no test.
    /// (An immediate's is discarded split, as a [`TakenOnce`]: this is
    /// the tests'.)
    #[cfg(test)]
    #[inline(always)]
    pub(crate) fn discard(self, plain: bool) {
        if plain {
            debug_assert!(self.drops_nothing(), "a plain callback drops nothing");
            std::mem::forget(self);
        } else {
            drop(self);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    fn thin<F: FnMut(&mut EventLoop) + 'static>(mut f: F) -> (ThinFn, bool) {
        ThinFn::new(move |lp: &mut EventLoop| {
            f(lp);
            Ok(())
        })
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn two_words_and_a_niche() {
        assert_eq!(size_of::<ThinFn>(), 16);
        assert_eq!(size_of::<Option<ThinFn>>(), 16);
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_word_is_inline_and_more_is_boxed() {
        let (f, plain) = thin(|_| {});
        assert!(!f.is_heap() && plain && f.drops_nothing());
        let word = 7_i64;
        let (f, plain) = thin(move |_| {
            std::hint::black_box(word);
        });
        assert!(!f.is_heap() && plain);
        let rc = Rc::new(1);
        let (f, plain) = thin(move |_| {
            std::hint::black_box(&rc);
        });
        assert!(!f.is_heap() && !plain && !f.drops_nothing());
        let two = (1_i64, 2_i64);
        let (f, plain) = thin(move |_| {
            std::hint::black_box(two);
        });
        assert!(f.is_heap() && !plain && !f.drops_nothing());
        // A one-byte closure over-aligned past a word is boxed.
        #[repr(align(16))]
        #[allow(dead_code)] // only its size and alignment matter
        struct Wide(u8);
        let wide = Wide(3);
        let (f, _) = thin(move |_| {
            std::hint::black_box(&wide);
        });
        assert!(f.is_heap());
    }

    /// Inline and boxed, the closure keeps its state across calls, even
    /// when the `ThinFn` moves between them, and what it captured is
    /// dropped exactly once, with it.
    #[test]
    fn calls_keep_state_across_moves_and_drop_once() {
        let mut lp = EventLoop::with_virtual_clock();
        let seen = Rc::new(Cell::new(0));
        let s = seen.clone();
        let (mut f, _) = thin(move |_| s.set(s.get() + 1));
        assert!(!f.is_heap());
        f.call(&mut lp).unwrap();
        let mut moved = Box::new(f);
        moved.call(&mut lp).unwrap();
        assert_eq!((seen.get(), Rc::strong_count(&seen)), (2, 2));
        drop(moved);
        assert_eq!(Rc::strong_count(&seen), 1);

        let s = seen.clone();
        let mut n = 0_u64;
        let pad = [0_u64; 4];
        let (mut f, _) = thin(move |_| {
            n += 1;
            s.set(n + pad[0]);
        });
        assert!(f.is_heap());
        f.call(&mut lp).unwrap();
        let mut v = vec![f];
        v[0].call(&mut lp).unwrap();
        assert_eq!((seen.get(), Rc::strong_count(&seen)), (2, 2));
        drop(v);
        assert_eq!(Rc::strong_count(&seen), 1);
    }

    /// A counter kept inline (its one word of state) counts.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn inline_state_is_mutable() {
        use std::sync::atomic::{AtomicU64, Ordering};
        static OUT: AtomicU64 = AtomicU64::new(0);
        let mut lp = EventLoop::with_virtual_clock();
        let mut n = 0_u64;
        let (mut f, plain) = thin(move |_| {
            n += 1;
            OUT.store(n, Ordering::Relaxed);
        });
        assert!(plain && !f.is_heap());
        for _ in 0..3 {
            f.call(&mut lp).unwrap();
        }
        assert_eq!(OUT.load(Ordering::Relaxed), 3);
    }

    /// The closure's result comes back: an error is passed through.
    #[test]
    fn an_error_comes_back() {
        let mut lp = EventLoop::with_virtual_clock();
        let (mut f, _) = ThinFn::new(|_: &mut EventLoop| Err::<(), BoxError>("no".into()));
        assert_eq!(f.call(&mut lp).unwrap_err().to_string(), "no");
    }

    fn once<F: FnOnce(&mut EventLoop) + 'static>(f: F) -> (ThinOnce, bool) {
        ThinOnce::new(move |lp: &mut EventLoop| {
            f(lp);
            Ok(())
        })
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn once_is_two_words_inline_up_to_a_word() {
        assert_eq!(size_of::<ThinOnce>(), 16);
        assert_eq!(size_of::<Option<ThinOnce>>(), 16);
        let (f, plain) = once(|_| {});
        assert!(!f.is_heap() && plain);
        let word = 5_i64;
        let (f, plain) = once(move |_| {
            std::hint::black_box(word);
        });
        assert!(!f.is_heap() && plain);
        let rc = Rc::new(0);
        let (f, plain) = once(move |_| {
            std::hint::black_box(&rc);
        });
        assert!(!f.is_heap() && !plain);
        let two = (1_i64, 2_i64);
        let (f, plain) = once(move |_| {
            std::hint::black_box(two);
        });
        assert!(f.is_heap() && !plain);
    }

    /// Inline and boxed: the first call runs the closure and lets go of
    /// what it captured; a second call does nothing; dropping after the
    /// call drops nothing again, and dropping uncalled drops it once.
    #[test]
    fn once_runs_once_and_drops_once() {
        let mut lp = EventLoop::with_virtual_clock();
        let seen = Rc::new(Cell::new(0));
        for boxed in [false, true] {
            let s = seen.clone();
            let pad = [0_u64; 3];
            let (mut f, _) = if boxed {
                once(move |_| s.set(s.get() + 1 + pad[0]))
            } else {
                once(move |_| s.set(s.get() + 1))
            };
            assert_eq!(f.is_heap(), boxed);
            let before = seen.get();
            f.call(&mut lp).unwrap();
            assert_eq!((seen.get(), Rc::strong_count(&seen)), (before + 1, 1));
            assert!(f.drops_nothing());
            f.call(&mut lp).unwrap();
            assert_eq!(seen.get(), before + 1);
            drop(f);
            assert_eq!(Rc::strong_count(&seen), 1);

            let s = seen.clone();
            let (f, _) = if boxed {
                once(move |_| s.set(s.get() + 1 + pad[0]))
            } else {
                once(move |_| s.set(s.get() + 1))
            };
            let moved = vec![f];
            assert_eq!(Rc::strong_count(&seen), 2);
            drop(moved);
            assert_eq!(Rc::strong_count(&seen), 1);
        }
    }

    /// A one-shot closure that panics is dropped once, by the unwinding
    /// call, and the spent callback drops nothing after.
    #[test]
    fn once_panicking_call_drops_its_capture_once() {
        let mut lp = EventLoop::with_virtual_clock();
        let seen = Rc::new(Cell::new(0));
        for boxed in [false, true] {
            let s = seen.clone();
            let pad = [1_u64; 3];
            let (mut f, _) = if boxed {
                once(move |_| {
                    s.set(s.get() + pad[0]);
                    panic!("in the callback");
                })
            } else {
                once(move |_| {
                    s.set(s.get() + 1);
                    panic!("in the callback");
                })
            };
            assert_eq!(f.is_heap(), boxed);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.call(&mut lp)));
            assert!(r.is_err());
            assert_eq!(Rc::strong_count(&seen), 1);
            assert!(f.drops_nothing());
            drop(f);
            assert_eq!(Rc::strong_count(&seen), 1);
        }
        assert_eq!(seen.get(), 2);
    }

    /// A boxed closure whose capture panics on drop, uncalled: the drop
    /// runs once and unwinds out of the wrapper's drop (the box is freed
    /// on the way, which memcheck checks).
    #[test]
    fn a_panicking_drop_of_a_boxed_closure_runs_once() {
        struct Bomb(Rc<Cell<u32>>);
        impl Drop for Bomb {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
                panic!("bomb");
            }
        }
        let drops = Rc::new(Cell::new(0));
        let (bomb, pad) = (Bomb(drops.clone()), [0_u64; 3]);
        let (f, _) = thin(move |_| {
            std::hint::black_box((&bomb, pad));
        });
        assert!(f.is_heap());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(f)));
        assert!(r.is_err());
        let (bomb, pad) = (Bomb(drops.clone()), [0_u64; 3]);
        let (f, _) = once(move |_| {
            std::hint::black_box((&bomb, pad));
        });
        assert!(f.is_heap());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(f)));
        assert!(r.is_err());
        assert_eq!((drops.get(), Rc::strong_count(&drops)), (2, 1));
    }

    /// Closures of two to eight words live in the thread's pool while
    /// stored, and give their block back however they end: dropped,
    /// called once, dropped by a panicking drop, or consumed by a call
    /// that panics. A ninth word goes to the global allocator.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn pooled_closures_give_their_blocks_back() {
        // The classes of the closures below: an `Rc` and one, three or
        // seven words.
        let [c2, c4, c8] =
            [2, 4, 8].map(|w| pool::BLOCK_WORDS.iter().position(|&b| b == w).unwrap());
        let live = || [c2, c4, c8].map(|c| pool::counts(c).0);
        let before = live();
        let drops = Rc::new(());
        let d = drops.clone();
        let (two, four, eight) = ([1_u64; 1], [2_u64; 3], [3_u64; 7]);
        let (f2, _) = thin({
            let d = d.clone();
            move |_| {
                std::hint::black_box((&d, two));
            }
        });
        let (f4, _) = thin({
            let d = d.clone();
            move |_| {
                std::hint::black_box((&d, four));
            }
        });
        let (mut o8, _) = once({
            let d = d.clone();
            move |_| {
                std::hint::black_box((&d, eight));
            }
        });
        assert!(f2.is_heap() && f4.is_heap() && o8.is_heap());
        assert_eq!(live(), [before[0] + 1, before[1] + 1, before[2] + 1]);
        let mut lp = EventLoop::with_virtual_clock();
        o8.call(&mut lp).unwrap();
        assert_eq!(live()[2], before[2], "a one-shot call gives its block back");
        drop((f2, f4, o8));
        assert_eq!(live(), before);
        assert_eq!(Rc::strong_count(&drops), 2);
        // A call that panics has consumed its closure and its block.
        let (mut boom, _) = once({
            let d = d.clone();
            move |_| {
                std::hint::black_box((&d, four));
                panic!("boom");
            }
        });
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| boom.call(&mut lp)));
        assert!(r.is_err());
        drop(boom);
        assert_eq!(live(), before);
        // Nine words: boxed, not pooled.
        let nine = [4_u64; 8];
        let (f9, _) = thin(move |_| {
            std::hint::black_box((&d, nine));
        });
        assert!(f9.is_heap());
        assert_eq!(live(), before);
        drop(f9);
        assert_eq!(Rc::strong_count(&drops), 1);
    }

    /// The wrappers are `Unpin` whatever the closure captures (nothing
    /// pins it), as the box they replace was; that they are neither `Send`
    /// nor unwind-safe comes from the marker field, the box's own.
    #[test]
    fn stored_callbacks_are_unpin_whatever_they_capture() {
        fn unpin<T: Unpin>(_: &T) {}
        let pinned = std::marker::PhantomPinned;
        let (f, _) = thin(move |_| {
            let _ = &pinned;
        });
        unpin(&f);
        let pinned = std::marker::PhantomPinned;
        let (f, _) = once(move |_| {
            let _ = &pinned;
        });
        unpin(&f);
    }

    /// A table's 32-bit code gives the table back, direct (near the
    /// anchor, as every table of this binary is) or through the registry
    /// (as a table in another shared object would be); and a split
    /// callback is called and dropped as the `ThinFn` it was.
    #[test]
    fn table_codes_round_trip_and_split_callbacks_work() {
        let table = Tables::<fn(&mut EventLoop) -> Out>::TABLE;
        let direct = code_of(table);
        assert!((direct as i32) >= DIRECT_MIN && direct > 1);
        assert!(std::ptr::eq(table_of(direct), table));
        let far = register(table);
        assert!((far as i32) < DIRECT_MIN);
        assert_eq!(register(table), far, "registered once");
        assert!(std::ptr::eq(table_of(far), table));

        let mut lp = EventLoop::with_virtual_clock();
        let seen = Rc::new(Cell::new(0));
        let s = seen.clone();
        let (f, plain) = thin(move |_| s.set(s.get() + 1));
        assert!(!plain);
        let mut slot = SlotFn::new(f);
        #[cfg(target_pointer_width = "64")]
        assert_eq!(size_of::<SlotFn>(), 12);
        let mut f = slot.take();
        assert!(slot.is_none() && slot.take().code == NO_FN);
        f.call(&mut lp).unwrap();
        slot.put(&mut f);
        assert_eq!(f.code, NO_FN);
        slot.take().call(&mut lp).unwrap();
        assert_eq!(
            (seen.get(), Rc::strong_count(&seen)),
            (2, 1),
            "taken and dropped"
        );
        // An inline closure's own state survives calls from the slot.
        let mut n = 0_u64;
        let (f, _) = ThinFn::new(move |_: &mut EventLoop| {
            n += 1;
            if n == 3 { Err("three".into()) } else { Ok(()) }
        });
        let mut f = SlotFn::new(f).take();
        f.call(&mut lp).unwrap();
        f.call(&mut lp).unwrap();
        assert!(f.call(&mut lp).is_err());
        f.discard(true);
        let s = seen.clone();
        let (f, _) = thin(move |_| s.set(s.get() + 1));
        SlotFn::new(f).take().discard(false);
        assert_eq!(Rc::strong_count(&seen), 1, "discarded");
        let s = seen.clone();
        let (f, _) = thin(move |_| s.set(s.get() + 1));
        drop(SlotFn::new(f));
        assert_eq!(Rc::strong_count(&seen), 1, "dropped with its slot");
    }

    /// Review of 07c55cd: split callbacks whose table goes through the
    /// registry (as one from another shared object would), of every
    /// storage (inline with drop glue, inline with state, pooled, boxed):
    /// taken, called, put back, taken again, dropped in the slot, dropped
    /// taken, and a panicking drop through either. Counts say each
    /// capture is dropped once; memcheck checks the reads.
    #[test]
    fn registered_split_callbacks_call_and_drop_once() {
        /// `f` split with its table's registry code, not its direct one.
        fn far(f: ThinFn) -> SlotFn {
            let f = std::mem::ManuallyDrop::new(f);
            let code = register(f.0.table);
            assert!((code as i32) < DIRECT_MIN);
            SlotFn {
                data: f.0.data,
                code,
                _boxed: PhantomData,
            }
        }
        let mut lp = EventLoop::with_virtual_clock();
        let seen = Rc::new(Cell::new(0_u64));
        type Make = fn(Rc<Cell<u64>>) -> ThinFn;
        let makers: [Make; 4] = [
            |s| thin(move |_| s.set(s.get() + 1)).0,
            |s| {
                let mut n = 0_u64;
                ThinFn::new(move |_: &mut EventLoop| {
                    n += 1;
                    s.set(s.get() + 1);
                    std::hint::black_box(n);
                    Ok(())
                })
                .0
            },
            |s| {
                let pad = [1_u64; 3];
                thin(move |_| {
                    std::hint::black_box(pad);
                    s.set(s.get() + 1);
                })
                .0
            },
            |s| {
                let pad = [1_u64; 12];
                thin(move |_| {
                    std::hint::black_box(pad);
                    s.set(s.get() + 1);
                })
                .0
            },
        ];
        for make in makers {
            let mut slot = far(make(seen.clone()));
            let mut f = slot.take();
            f.call(&mut lp).unwrap();
            slot.put(&mut f);
            drop(f);
            let mut f = slot.take();
            f.call(&mut lp).unwrap();
            slot.put(&mut f);
            drop(slot);
            let mut f = far(make(seen.clone())).take();
            f.call(&mut lp).unwrap();
            drop(f);
            let mut f = far(make(seen.clone())).take();
            f.discard(false);
            assert_eq!(Rc::strong_count(&seen), 1);
        }
        assert_eq!(seen.get(), 4 * 3);

        struct Bomb(Rc<Cell<u32>>);
        impl Drop for Bomb {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
                panic!("bomb");
            }
        }
        let drops = Rc::new(Cell::new(0));
        let b = Bomb(drops.clone());
        let slot = far(thin(move |_| {
            std::hint::black_box(&b);
        })
        .0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(slot)));
        assert!(r.is_err());
        let (b, pad) = (Bomb(drops.clone()), [0_u64; 5]);
        let mut f = far(thin(move |_| {
            std::hint::black_box((&b, pad));
        })
        .0)
        .take();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.discard(false)));
        assert!(r.is_err());
        drop(f); // emptied by `discard` before the panic: nothing twice
        assert_eq!((drops.get(), Rc::strong_count(&drops)), (2, 1));
    }

    /// A code's flag bits are free, direct or registered; the code of no
    /// callback decodes to the anchor, whose call does nothing; and an
    /// immediate's split callback keeps its flags, runs once (also when
    /// it panics: its capture is dropped once, by the unwinding call) and
    /// is dropped or discarded as the `ThinOnce` it was.
    #[test]
    fn once_slots_keep_flags_in_the_code_and_run_once() {
        let table = OnceTables::<fn(&mut EventLoop) -> Out>::TABLE;
        for code in [code_of(table), register(table)] {
            assert_eq!(code & FLAG_BITS, 0);
            for flags in 0..=FLAG_BITS {
                assert!(std::ptr::eq(table_of((code | flags) & !FLAG_BITS), table));
            }
        }
        assert!(std::ptr::eq(table_of(NO_FN), &ANCHOR));
        #[cfg(target_pointer_width = "64")]
        assert_eq!(size_of::<OnceSlot>(), 12);

        let mut lp = EventLoop::with_virtual_clock();
        let seen = Rc::new(Cell::new(0));
        let s = seen.clone();
        let (f, plain) = once(move |_| s.set(s.get() + 1));
        let mut e = OnceSlot::new(f, plain);
        assert!(e.is_some() && e.refed() && !e.plain());
        e.set_refed(false);
        assert!(e.is_some() && !e.refed());
        e.set_refed(true);
        let mut f = e.take();
        assert!(!e.is_some() && !e.refed() && e.code == NO_FN);
        assert!(f.is_some() && f.refed());
        f.call(&mut lp).unwrap();
        assert!(!f.is_some());
        f.call(&mut lp).unwrap();
        f.spent();
        assert_eq!((seen.get(), Rc::strong_count(&seen)), (1, 1), "ran once");
        // Plain: discarded unread.
        let (f, plain) = once(|_| {});
        assert!(plain);
        let mut e = OnceSlot::new(f, plain);
        assert!(e.plain() && e.refed());
        e.take().discard();
        // Taken out and dropped, or discarded, without running; an entry
        // has no drop glue (its owner takes what it holds out first).
        assert!(!std::mem::needs_drop::<OnceSlot>());
        for discard in [false, true] {
            let s = seen.clone();
            let (f, plain) = once(move |_| s.set(s.get() + 10));
            let mut e = OnceSlot::near(f, plain).ok().unwrap();
            if discard {
                e.take().discard();
            } else {
                drop(e.take());
            }
            assert_eq!((seen.get(), Rc::strong_count(&seen)), (1, 1));
        }
        // A panicking one drops its capture once.
        let s = seen.clone();
        let (f, plain) = once(move |_| {
            let _ = &s;
            panic!("boom")
        });
        let mut f = OnceSlot::new(f, plain).take();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = f.call(&mut lp);
        }));
        assert!(r.is_err());
        assert_eq!(Rc::strong_count(&seen), 1, "dropped by the unwinding call");
        drop(f);
        assert_eq!(Rc::strong_count(&seen), 1);
    }

    /// An immediate's split callback whose table has a registry code (a
    /// closure type of another shared object: `push_far`), with every
    /// combination of flags, of every storage class: the flags round-trip
    /// beside the shifted index, and it runs once, or is dropped or
    /// discarded once, its capture let go exactly once.
    #[test]
    fn far_once_slots_keep_flags_and_run_or_drop_once() {
        /// `f` split with its registry code, as `OnceSlot::new` makes it
        /// for a table too far for a direct code.
        fn far(f: ThinOnce, plain: bool) -> OnceSlot {
            let code = register(f.0.table);
            assert!((code as i32) < DIRECT_MIN);
            assert_eq!(code & FLAG_BITS, 0);
            OnceSlot::split(f, code, plain)
        }
        let mut lp = EventLoop::with_virtual_clock();
        let seen = Rc::new(Cell::new(0_u64));
        type Make = fn(Rc<Cell<u64>>) -> (ThinOnce, bool);
        let makers: [Make; 4] = [
            // Inline, one `Rc`.
            |s| once(move |_| s.set(s.get() + 1)),
            // Pooled.
            |s| {
                let pad = [1_u64; 3];
                once(move |_| s.set(s.get() + pad[0]))
            },
            // Boxed.
            |s| {
                let pad = [1_u64; 12];
                once(move |_| s.set(s.get() + pad[0]))
            },
            // Plain: nothing captured (counted through a thread local).
            |_| {
                thread_local!(static N: Cell<u64> = const { Cell::new(0) });
                once(|_| N.with(|n| n.set(n.get() + 1)))
            },
        ];
        let mut runs = 0;
        for (k, make) in makers.iter().enumerate() {
            for refed in [false, true] {
                for end in 0..3 {
                    let (f, plain) = make(seen.clone());
                    assert_eq!(plain, k == 3);
                    let mut e = far(f, plain);
                    assert!(e.is_some() && e.refed() && e.plain() == plain);
                    e.set_refed(refed);
                    assert_eq!((e.refed(), e.plain()), (refed, plain));
                    let mut f = e.take();
                    assert!(!e.is_some() && !e.refed() && !e.plain());
                    assert_eq!(f.refed(), refed);
                    match end {
                        0 => {
                            f.call(&mut lp).unwrap();
                            f.call(&mut lp).unwrap();
                            f.spent();
                            runs += u64::from(k != 3);
                        }
                        1 => f.discard(),
                        _ => drop(f),
                    }
                    assert_eq!(Rc::strong_count(&seen), 1, "class {k} end {end}");
                    assert_eq!(seen.get(), runs);
                }
            }
        }
        // The taken-out empty one: its call is the anchor's, reading
        // nothing; discarded or dropped, it does nothing.
        let mut e = far(make_plain(), true);
        drop(e.take());
        let mut f = e.take();
        assert!(!f.is_some() && !f.refed());
        f.call(&mut lp).unwrap();
        f.discard();
        fn make_plain() -> ThinOnce {
            once(|_| {}).0
        }
    }

    /// A panicking drop of the captured value still runs once.
    #[test]
    fn a_panicking_drop_runs_once() {
        struct Bomb(Rc<Cell<u32>>);
        impl Drop for Bomb {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
                panic!("bomb");
            }
        }
        let drops = Rc::new(Cell::new(0));
        let bomb = Bomb(drops.clone());
        let (f, _) = thin(move |_| {
            std::hint::black_box(&bomb);
        });
        assert!(!f.is_heap());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(f)));
        assert!(r.is_err());
        assert_eq!(drops.get(), 1);
    }

    /// A model of both wrappers: random stores of closures of every size
    /// (nothing, one word without and with drop glue, two and four words),
    /// calls, moves, drops and discards, against counts of what must have
    /// run and what must still be alive. Run under valgrind's memcheck it
    /// also checks every read, write and free the unsafe blocks make.
    mod model {
        use super::*;
        use proptest::prelude::*;

        thread_local! {
            static CALLS: Cell<u64> = const { Cell::new(0) };
            static LIVE: Cell<i64> = const { Cell::new(0) };
        }

        /// Counts itself alive; dropping it counts it gone.
        struct Probe;
        impl Probe {
            fn new() -> Rc<Probe> {
                LIVE.with(|l| l.set(l.get() + 1));
                Rc::new(Probe)
            }
        }
        impl Drop for Probe {
            fn drop(&mut self) {
                LIVE.with(|l| l.set(l.get() - 1));
            }
        }

        fn called() {
            CALLS.with(|c| c.set(c.get() + 1));
        }

        enum Stored {
            Fn(ThinFn),
            Once(ThinOnce, bool, bool),
            /// Split as an immediate's entry keeps it, with its plain
            /// answer and the refed flag it should have.
            Entry(Owned, bool, bool),
        }

        /// An entry whose owner drops what it holds, as the ring does.
        struct Owned(OnceSlot);
        impl Drop for Owned {
            fn drop(&mut self) {
                drop(self.0.take());
            }
        }

        /// A closure of size class `k`, as a repeatable callback, and
        /// whether it holds a probe.
        fn make_fn(k: u8) -> (ThinFn, bool) {
            match k {
                0 => (thin(|_| called()).0, false),
                1 => {
                    let p = Probe::new();
                    (
                        thin(move |_| {
                            let _ = &p;
                            called();
                        })
                        .0,
                        true,
                    )
                }
                2 => {
                    let (p, w) = (Probe::new(), 7_u64);
                    (
                        thin(move |_| {
                            let _ = (&p, w);
                            called();
                        })
                        .0,
                        true,
                    )
                }
                3 => {
                    let (p, w) = (Probe::new(), [7_u64; 3]);
                    (
                        thin(move |_| {
                            let _ = (&p, w);
                            called();
                        })
                        .0,
                        true,
                    )
                }
                _ => {
                    let mut n = 0_u64;
                    (
                        thin(move |_| {
                            n += 1;
                            std::hint::black_box(n);
                            called();
                        })
                        .0,
                        false,
                    )
                }
            }
        }

        /// The same as a one-shot callback, with its `plain` answer.
        fn make_once(k: u8) -> (ThinOnce, bool, bool) {
            let ((f, plain), probe) = match k {
                0 => (once(|_| called()), false),
                1 => {
                    let p = Probe::new();
                    (
                        once(move |_| {
                            let _ = &p;
                            called();
                        }),
                        true,
                    )
                }
                2 => {
                    let (p, w) = (Probe::new(), 7_u64);
                    (
                        once(move |_| {
                            let _ = (&p, w);
                            called();
                        }),
                        true,
                    )
                }
                3 => {
                    let (p, w) = (Probe::new(), [7_u64; 3]);
                    (
                        once(move |_| {
                            let _ = (&p, w);
                            called();
                        }),
                        true,
                    )
                }
                _ => {
                    let n = 5_u64;
                    (
                        once(move |_| {
                            std::hint::black_box(n);
                            called();
                        }),
                        false,
                    )
                }
            };
            (f, plain, probe)
        }

        proptest! {
            #[test]
            fn wrappers_match_the_model(
                ops in proptest::collection::vec((0_u8..6, 0_usize..6, 0_u8..5, 0_usize..6), 1..120)
            ) {
                CALLS.with(|c| c.set(0));
                let live_before = LIVE.with(Cell::get);
                let mut lp = EventLoop::with_virtual_clock();
                // Each slot: what it holds, and (for the model) whether
                // it holds a live probe.
                let mut slots: Vec<Option<(Stored, bool)>> = (0..6).map(|_| None).collect();
                let (mut calls, mut live) = (0_u64, 0_i64);
                for (op, i, k, j) in ops {
                    match op {
                        0 => {
                            let (f, probe) = make_fn(k);
                            if let Some((_, true)) = slots[i] { live -= 1; }
                            live += i64::from(probe);
                            slots[i] = Some((Stored::Fn(f), probe));
                        }
                        1 => {
                            let (f, plain, probe) = make_once(k);
                            if let Some((_, true)) = slots[i] { live -= 1; }
                            live += i64::from(probe);
                            let stored = if j % 2 == 0 {
                                Stored::Once(f, plain, false)
                            } else {
                                let mut e = OnceSlot::new(f, plain);
                                let refed = j % 4 == 1;
                                e.set_refed(refed);
                                Stored::Entry(Owned(e), plain, refed)
                            };
                            slots[i] = Some((stored, probe));
                        }
                        2 => match &mut slots[i] {
                            Some((Stored::Fn(f), _)) => {
                                f.call(&mut lp).unwrap();
                                calls += 1;
                            }
                            Some((Stored::Once(f, _, spent), probe)) => {
                                f.call(&mut lp).unwrap();
                                if !*spent {
                                    calls += 1;
                                    *spent = true;
                                    if *probe { live -= 1; *probe = false; }
                                }
                                prop_assert!(f.drops_nothing());
                            }
                            Some((Stored::Entry(Owned(e), _, _), _)) if !e.is_some() => {}
                            Some((Stored::Entry(Owned(e), plain, refed), probe)) => {
                                prop_assert_eq!((e.plain(), e.refed()), (*plain, *refed));
                                let mut f = e.take();
                                prop_assert!(!e.is_some() && !e.refed() && !e.plain());
                                prop_assert_eq!(f.refed(), *refed);
                                f.call(&mut lp).unwrap();
                                calls += 1;
                                if *probe { live -= 1; *probe = false; }
                                // Called again, it does nothing.
                                f.call(&mut lp).unwrap();
                                f.spent();
                            }
                            None => {}
                        },
                        3 => slots.swap(i, j),
                        4 => {
                            if let Some((_, true)) = slots[i].take() { live -= 1; }
                        }
                        _ => {
                            match slots[i].take() {
                                Some((Stored::Once(f, plain, spent), probe)) => {
                                    // Forgetting is only ever asked of a
                                    // plain one, which holds no probe.
                                    prop_assert!(!plain || !probe || spent);
                                    f.discard(plain);
                                    live -= i64::from(probe);
                                }
                                Some((Stored::Entry(mut e, plain, _), probe)) => {
                                    prop_assert!(!plain || !probe || !e.0.is_some());
                                    e.0.take().discard();
                                    live -= i64::from(probe);
                                }
                                Some((_, probe)) => live -= i64::from(probe),
                                None => {}
                            }
                        }
                    }
                    prop_assert_eq!(CALLS.with(Cell::get), calls);
                    prop_assert_eq!(LIVE.with(Cell::get) - live_before, live);
                }
                drop(slots);
                prop_assert_eq!(LIVE.with(Cell::get), live_before);
            }
        }
    }
}
