//! The loop's shared state and the thread's *current* loop: how code that
//! holds no `&mut EventLoop` (wakers, futures, `Drop`s) reaches a loop.
//!
//! # Ground rules
//!
//! - **Shared state** ([`LoopShared`]) is what such code may touch without
//!   the loop: the microtask queue (a waker pushes its task there, in FIFO
//!   order with `queue_microtask`), a queue of *deferred operations*
//!   (closures that need `&mut EventLoop`), the clock, the loop's id. It
//!   never lends the loop itself.
//! - **Deferred operations run before anything could observe them.** The
//!   loop applies them, in the order they were queued, before it inserts a
//!   timer or an immediate, before a timers pass, when a callback, a task
//!   poll or a scope returns, and before it lends itself. A future that
//!   creates its timer through one (a `Sleep`) therefore lands in its
//!   duration's list exactly where a `set_timeout` made at that moment
//!   would, with the start time read when it was created. Where the loop
//!   could be lent and nothing is queued, such an operation runs at once
//!   instead (`LoopShared::run_now`): the same result, without the
//!   queue.
//! - **The current loop** is a per-thread stack of frames, one per loop
//!   that is running or entered ([`EventLoop::scope`]) on the thread. Free
//!   functions (`time::sleep`, `Instant::now`) use the top frame's shared
//!   state, so they work wherever a loop is current: in callbacks, tasks,
//!   `block_on` and scopes.
//! - **Lending** ([`EventLoop::with_current`], and `run_now` inside the
//!   crate) hands out the loop itself, as `&mut EventLoop`, and only
//!   where no other `&mut EventLoop` is in use: while a task is polled,
//!   and inside [`EventLoop::scope`]. Inside a callback the loop is already
//!   lent (to that callback's argument), so `with_current` panics there,
//!   as it does when nested, and `run_now` declines (its caller defers).
//!
//! # Safety
//!
//! This is one of the crate's few modules with hand-written `unsafe`
//! (`src/lib.rs` lists them all; `thin.rs` stores a timer's or an
//! immediate's small closure inline, and `pool.rs` keeps the blocks of
//! larger ones): a raw
//! pointer to the loop, stored in the loop's shared state
//! (`LoopShared::lend`) while lending is allowed, turned into
//! `&mut EventLoop` in one place, `lent`, for `with_current` and
//! `run_now`, and only while that loop's frame is the top one on the
//! thread (`LoopShared::top`, kept by the frames' push and pop, so that
//! asking costs no thread-local access). The argument:
//!
//! 1. The pointer is created from the `&mut EventLoop` of the function
//!    that allows lending (`EventLoop::lend_during`, `EventLoop::scope`),
//!    and is removed from the shared state before that function uses its
//!    own reference again. Only three things change the pointer, each
//!    undone by a guard, even on unwind, and the guards go last in, first
//!    out: `lend_during` sets it (and puts back what it found),
//!    `take_lend` takes it (and `lent` puts it back), and a frame's push
//!    empties it (and its pop puts back what it found). So the pointer is
//!    null or that of the innermost `lend_during` still running for the
//!    loop, and while it is reachable the only other live `&mut EventLoop`
//!    is that function's, which is not used. The pointer is to a place:
//!    user code lent it may move the loop out and leave another there, so
//!    what it reaches is that function's loop or whatever took its place.
//!    `run_now` lends only the shared state's own loop (crate operations
//!    for one loop never run on another), and `lend_during` panics if the
//!    place still holds another when the user code returns.
//! 2. `with_current` and `run_now` take the pointer out of the shared
//!    state (`take_lend`) for the duration of their closure, so two
//!    `&mut EventLoop` made from it never coexist (a nested call finds
//!    none: `with_current` panics, `run_now` declines), and put it back
//!    after, even on unwind.
//! 3. What is polled while lending is allowed (a task's future, a scope's
//!    closure) is not stored inside the loop: a task's future is moved out
//!    of the loop for its poll. The lent `&mut EventLoop` cannot reach it.
//!
//! The alternative, the whole loop behind `Rc<RefCell<..>>` and released
//! around every callback, costs a borrow check on every operation and
//! rewrites every entry point; the scoped pointer costs nothing on paths
//! that do not lend.
#![allow(unsafe_code)]

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::rc::{Rc, Weak};

use super::EventLoop;
use super::error::Error;
use super::inline::{InlineFn, inline_once};
use super::scope::OnceFn;
use crate::collections::arena::Key;
use crate::uv::{self, Clock};

/// An entry of the microtask queue.
pub(crate) enum Micro {
    /// A `queue_microtask` callback.
    Call(OnceFn),
    /// Poll the task with this key (a wake-up, or its first poll).
    Task(Key),
}

/// The microtask queue, with its length beside it: whether anything is
/// queued (asked after every callback) is one load, not a `RefCell`
/// borrow. The length is the queue's whenever no method is running: only
/// these methods touch either.
pub(crate) struct MicroQueue {
    queue: RefCell<VecDeque<Micro>>,
    len: Cell<usize>,
}

impl MicroQueue {
    const fn new() -> MicroQueue {
        MicroQueue {
            queue: RefCell::new(VecDeque::new()),
            len: Cell::new(0),
        }
    }

    /// Appends `m`.
    pub(crate) fn push(&self, m: Micro) {
        self.queue.borrow_mut().push_back(m);
        self.len.set(self.len.get() + 1);
    }

    /// Takes the oldest entry.
    pub(crate) fn pop(&self) -> Option<Micro> {
        if self.len.get() == 0 {
            return None;
        }
        let m = self.queue.borrow_mut().pop_front();
        debug_assert!(m.is_some(), "the length counted an entry that is not there");
        self.len.set(self.len.get() - 1);
        m
    }

    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len.get() == 0
    }

    pub(crate) fn len(&self) -> usize {
        self.len.get()
    }

    /// Takes every entry (to drop them).
    fn take(&self) -> VecDeque<Micro> {
        self.len.set(0);
        std::mem::take(&mut *self.queue.borrow_mut())
    }
}

/// A deferred operation, inline when it captures at most two words (a
/// timer future's shared state and a time): no allocation per sleep.
type Deferred = InlineFn;

/// State the loop shares with code that holds no `&mut EventLoop`; see the
/// module docs.
pub(crate) struct LoopShared {
    pub(crate) id: u32,
    pub(crate) clock: Rc<dyn Clock>,
    /// `clock`'s millisecond cache when it is a
    /// [`SystemClock`](crate::SystemClock) (the loop keeps its own).
    ms_cache: Option<RefCell<uv::MsCache>>,
    pub(crate) micro: MicroQueue,
    /// A same-thread waker queued a task since the latest microtask
    /// checkpoint. If that happened while the loop was not running, the
    /// task is main-body work: the next run drains it first.
    pub(crate) woke_task: Cell<bool>,
    deferred: RefCell<VecDeque<Deferred>>,
    has_deferred: Cell<bool>,
    /// Reaches the loop from other threads (wakes a blocked poll). Holds
    /// no ref: a waker does not keep the loop alive.
    pub(crate) sender: uv::Sender<EventLoop>,
    /// Per-loop state of the layers on top (one value per type, made on
    /// first use: the .NET timer queue), so this layer names none of them.
    layers: RefCell<Vec<Rc<dyn Any>>>,
    /// Finished sleeps' states, for the next sleeps to reuse (at most
    /// [`WAKEUP_POOL`]): a sleep's state is its one allocation.
    pub(crate) wakeups: RefCell<Vec<Rc<super::Wakeup>>>,
    /// The loop is gone ([`clear`](Self::clear) ran): nothing is pooled
    /// any more (a pooled state holds this state, so it would be a cycle
    /// nothing breaks).
    pub(crate) closed: Cell<bool>,
    /// Tasks aborted through their handles whose futures are not dropped
    /// yet (the abort is deferred). A task's poll checks it, so a task
    /// aborted while it runs is not resumed, whether or not its handle
    /// (and so its join state) is still there.
    pub(crate) aborted: RefCell<Vec<Key>>,
    /// The loop, while it may be lent (a task's poll, a scope); null
    /// otherwise. Read only while [`top`](Self::top) is set: the loop's
    /// frame is the top of its thread's stack (see the module docs).
    lend: Cell<*mut EventLoop>,
    /// The arena index of the task being polled, or
    /// [`NO_TASK`](super::wakeup::NO_TASK): a hint a sleep stores with its
    /// waker ([`Wakeup::task`](super::Wakeup::task)).
    pub(crate) polling: Cell<u32>,
    /// This loop's frame is the top one on its thread's stack: lending
    /// it is allowed only then. Kept here so that code holding the shared
    /// state (a sleep's, a task's poll) asks it without the thread-local.
    top: Cell<bool>,
}

impl fmt::Debug for LoopShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopShared")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

thread_local! {
    /// The loops made on this thread, for same-thread wakers.
    static LOOPS: RefCell<Vec<(u32, Weak<LoopShared>)>> = const { RefCell::new(Vec::new()) };
    /// The current loops (each frame a loop's shared state), innermost
    /// last. The top frame's loop has [`LoopShared::top`] set.
    static STACK: RefCell<Vec<Rc<LoopShared>>> = const { RefCell::new(Vec::new()) };
}

impl LoopShared {
    pub(crate) fn new(
        id: u32,
        clock: Rc<dyn Clock>,
        ms_cache: Option<uv::MsCache>,
        sender: uv::Sender<EventLoop>,
    ) -> Rc<Self> {
        let shared = Rc::new(LoopShared {
            id,
            clock,
            ms_cache: ms_cache.map(RefCell::new),
            micro: MicroQueue::new(),
            woke_task: Cell::new(false),
            deferred: RefCell::new(VecDeque::new()),
            has_deferred: Cell::new(false),
            sender,
            layers: RefCell::new(Vec::new()),
            wakeups: RefCell::new(Vec::new()),
            closed: Cell::new(false),
            aborted: RefCell::new(Vec::new()),
            lend: Cell::new(std::ptr::null_mut()),
            polling: Cell::new(super::wakeup::NO_TASK),
            top: Cell::new(false),
        });
        // Made in a thread-local's destructor after the list is gone, the
        // loop is not listed: it could not be found by id anyway.
        let _ = LOOPS.try_with(|l| {
            let mut l = l.borrow_mut();
            l.retain(|(_, w)| w.strong_count() > 0);
            l.push((id, Rc::downgrade(&shared)));
        });
        shared
    }

    /// The loop with this id on this thread, if it still exists.
    pub(crate) fn by_id(id: u32) -> Option<Rc<LoopShared>> {
        // Every task wake comes here, from any thread: compare ids before
        // upgrading. A thread tearing its thread-locals down has no loop.
        LOOPS
            .try_with(|l| {
                l.borrow()
                    .iter()
                    .find(|(i, _)| *i == id)
                    .and_then(|(_, w)| w.upgrade())
            })
            .ok()
            .flatten()
    }

    /// Queues `f` as a microtask from where the loop is held (a callback
    /// has it): as a same-thread waker queues a task, so a run that has
    /// not started drains it first, as main-body work.
    pub(crate) fn queue_microtask_held(&self, f: impl FnOnce(&mut EventLoop) + 'static) {
        self.micro
            .push(Micro::Call(super::thin::ThinOnce::callback(f).0));
        self.woke_task.set(true);
    }

    /// This loop's one value of type `T`, made with `T::default()` on
    /// first use: where a layer on top keeps per-loop state.
    pub(crate) fn layer<T: Any + Default>(&self) -> Rc<T> {
        let mut layers = self.layers.borrow_mut();
        if let Some(found) = layers.iter().find_map(|l| l.clone().downcast::<T>().ok()) {
            return found;
        }
        let made = Rc::new(T::default());
        layers.push(made.clone());
        made
    }

    /// Runs `f` with the loop now, and returns its result, if nothing is
    /// deferred and this loop can be lent here (a task's poll, a scope);
    /// otherwise (an operation is queued, or inside a callback, which holds
    /// the loop, or away from the loop) runs nothing and returns `None`:
    /// the caller then [defers](Self::defer) the operation. On an empty
    /// queue, running first is exactly what the flush would do, with
    /// nothing between: the same result as deferring, without the queue's
    /// round trip. (With operations queued it would not be: some read the
    /// loop's state when they run, not when queued, so running them early,
    /// as a flush here would, could reorder what they create.)
    pub(crate) fn run_now<R>(&self, f: impl FnOnce(&mut EventLoop) -> R) -> Option<R> {
        if self.has_deferred.get() {
            return None;
        }
        match take_lend(self) {
            // Only this state's own loop: user code lent the loop may have
            // moved it out and left another in its place, whose operations
            // these are not (they are deferred to this loop then).
            Lendable::Yes(ptr) => lent(self, ptr, |lp| {
                std::ptr::eq(&*lp.shared, self).then(|| f(lp))
            }),
            Lendable::NoLoop | Lendable::Lent => None,
        }
    }

    /// Runs `f` with the loop now if this loop can be lent here (a task's
    /// poll, a scope), whatever is queued, else [defers](Self::defer) it.
    /// Only for an operation whose effect does not depend on its place
    /// among the queued ones: closing a socket creates nothing an order
    /// could show, and a socket closed at once can be bound again at once,
    /// as a dropped tokio socket can.
    pub(crate) fn run_now_or_defer(&self, f: impl FnOnce(&mut EventLoop) + 'static) {
        match take_lend(self) {
            Lendable::Yes(ptr) => lent(self, ptr, |lp| {
                if std::ptr::eq(&*lp.shared, self) {
                    f(lp);
                } else {
                    self.defer(f);
                }
            }),
            Lendable::NoLoop | Lendable::Lent => self.defer(f),
        }
    }

    /// Whether this loop's frame is the top of the thread's stack (it is
    /// running, entered or in a scope, and no other loop is on top): its
    /// next flush point comes before control leaves it.
    pub(crate) fn is_top(&self) -> bool {
        self.top.get()
    }

    /// Queues `f` to run with the loop at its next flush point; drops it
    /// at once if the loop is gone (it would never run, and what it holds
    /// may hold this state: a sleep's disarm holds its state, which holds
    /// this one, a cycle nothing would break).
    pub(crate) fn defer(&self, f: impl FnOnce(&mut EventLoop) + 'static) {
        if self.closed.get() {
            drop(f);
            return;
        }
        self.deferred.borrow_mut().push_back(inline_once(f));
        self.has_deferred.set(true);
    }

    /// `getLibuvNow()` as code without the loop can compute it: the clock
    /// in whole loop milliseconds (the cached loop time is never ahead of
    /// the clock).
    pub(crate) fn now_ms(&self) -> u64 {
        match &self.ms_cache {
            Some(cache) => cache.borrow_mut().now_ms(),
            None => self.clock.now_ms(),
        }
    }

    /// Drops whatever is queued (the loop is going away): breaks the
    /// reference cycles a queued closure may form with this state.
    pub(crate) fn clear(&self) {
        let micro = self.micro.take();
        let deferred = std::mem::take(&mut *self.deferred.borrow_mut());
        self.has_deferred.set(false);
        let layers = std::mem::take(&mut *self.layers.borrow_mut());
        // Pooled sleep states hold this state: a cycle, broken here, and
        // not made again.
        self.closed.set(true);
        let wakeups = std::mem::take(&mut *self.wakeups.borrow_mut());
        drop(micro);
        drop(deferred);
        drop(layers);
        drop(wakeups);
    }
}

/// The most finished sleep states a loop keeps for reuse.
pub(crate) const WAKEUP_POOL: usize = 1024;

/// The shared state of the thread's current loop.
///
/// # Panics
///
/// If no loop is current on this thread, at the caller's location: this
/// and the functions below are `#[track_caller]`, as is every public
/// function on the way to them, so that the panic names the user's line
/// (no closure in between: a closure does not pass the location on).
#[track_caller]
pub(crate) fn current_shared() -> Rc<LoopShared> {
    match try_current_shared() {
        Some(shared) => shared,
        None => no_current_loop(),
    }
}

/// Runs `f` with the shared state of the thread's current loop, borrowed
/// (no reference count taken). `f` must run no code of the user's (a
/// clock, a drop): the thread's stack of loops is borrowed meanwhile, so
/// entering a loop inside it would panic.
///
/// # Panics
///
/// If no loop is current on this thread.
#[track_caller]
pub(crate) fn with_current_shared<R>(f: impl FnOnce(&Rc<LoopShared>) -> R) -> R {
    // The panic is outside the closure, which would be its location.
    match STACK.with(|s| s.borrow().last().map(f)) {
        Some(r) => r,
        None => no_current_loop(),
    }
}

#[cold]
#[track_caller]
fn no_current_loop() -> ! {
    panic!(
        "there is no current timerloop EventLoop on this thread: call this inside \
         EventLoop::run, block_on, a spawned task, a callback, or EventLoop::scope"
    )
}

/// Whether this thread's stack of loops was destroyed: this is a
/// thread-local's destructor at thread exit, and no loop can be entered.
pub(crate) fn thread_exiting() -> bool {
    STACK.try_with(|_| ()).is_err()
}

/// Runs `f` with the thread's current loop, as
/// [`EventLoop::with_current`] does (deferred operations applied first),
/// or, where that loop is held (inside a callback, which has it as its
/// `&mut EventLoop`, or lent already), with its shared state: what a
/// waker reaches, enough to queue a microtask.
///
/// # Panics
///
/// With no current loop on this thread.
#[track_caller]
pub(crate) fn with_current_or_held<R>(
    f: impl FnOnce(Result<&mut EventLoop, &Rc<LoopShared>>) -> R,
) -> R {
    let Some(top) = try_current_shared() else {
        no_current_loop()
    };
    match take_lend(&top) {
        Lendable::Yes(ptr) => lent(&top, ptr, |lp| {
            lp.flush_deferred();
            f(Ok(lp))
        }),
        // The top frame's loop is the current one: not reached.
        Lendable::NoLoop => no_current_loop(),
        Lendable::Lent => f(Err(&top)),
    }
}

/// The shared state of the thread's current loop, if any.
pub(crate) fn try_current_shared() -> Option<Rc<LoopShared>> {
    // A thread tearing its thread-locals down has no current loop.
    STACK
        .try_with(|s| s.borrow().last().cloned())
        .ok()
        .flatten()
}

/// While alive, a loop is current on this thread (its frame is on the
/// stack). Not `Send`: it must be dropped on the thread that made it.
pub(crate) struct Entered {
    /// The loop's lending pointer when the frame was pushed, put back when
    /// it is popped: each frame starts unlendable, as if the pointer were
    /// the frame's own (see the module docs). Also makes the guard `!Send`.
    prev: *mut EventLoop,
}

impl Drop for Entered {
    fn drop(&mut self) {
        // The popped state is dropped after the stack's borrow ends: it may
        // be the last reference to it (its loop was dropped inside its own
        // callback), and its drop (a user's clock) may look at the stack.
        let popped = STACK.with(|s| {
            let mut s = s.borrow_mut();
            let me = s.pop();
            if let Some(me) = &me {
                me.lend.set(self.prev);
                me.top.set(false);
            }
            if let Some(below) = s.last() {
                below.top.set(true);
            }
            me
        });
        drop(popped);
    }
}

/// What a loop's shared state offers to lend.
enum Lendable {
    /// The loop, taken out of its shared state (put it back with [`Lend`]).
    Yes(*mut EventLoop),
    /// The loop of `shared` is not the current one (no frame of it is the
    /// top one).
    NoLoop,
    /// The current loop is lent already, or held by a callback.
    Lent,
}

/// Takes the lending pointer out of `shared`, if its loop's frame is the
/// top one on this thread and the loop is lendable now.
fn take_lend(shared: &LoopShared) -> Lendable {
    if !shared.top.get() {
        return Lendable::NoLoop;
    }
    let ptr = shared.lend.replace(std::ptr::null_mut());
    if ptr.is_null() {
        Lendable::Lent
    } else {
        Lendable::Yes(ptr)
    }
}

/// Runs `f` with the loop behind `ptr`, just taken out of `shared` by
/// [`take_lend`]; puts the pointer back after, even on unwind.
fn lent<R>(shared: &LoopShared, ptr: *mut EventLoop, f: impl FnOnce(&mut EventLoop) -> R) -> R {
    let _restore = Lend { shared, prev: ptr };
    // SAFETY: see the module docs. The pointer was made from a live
    // `&mut EventLoop` whose owner does not use it while the pointer is in
    // the shared state (point 1); it was taken out of there by
    // `take_lend`, so no other reference is made from it until `_restore`
    // puts it back (point 2); and nothing the loop stores is borrowed by
    // the caller (point 3).
    let lp = unsafe { &mut *ptr };
    f(lp)
}

/// Restores a loop's lending pointer when dropped.
struct Lend<'a> {
    shared: &'a LoopShared,
    prev: *mut EventLoop,
}

impl Drop for Lend<'_> {
    fn drop(&mut self) {
        self.shared.lend.set(self.prev);
    }
}

impl EventLoop {
    /// Makes this loop the thread's current loop until the guard drops,
    /// with lending not allowed (a callback holds the loop).
    ///
    /// # Errors
    ///
    /// [`Error::ThreadExiting`] if the thread's stack of loops was
    /// destroyed (this is a thread-local's destructor at thread exit);
    /// nothing changed.
    pub(crate) fn enter_current(&self) -> Result<Entered, Error> {
        let shared = &self.shared;
        STACK
            .try_with(|s| {
                let mut s = s.borrow_mut();
                if let Some(below) = s.last() {
                    below.top.set(false);
                }
                s.push(shared.clone());
            })
            .map_err(|_| Error::ThreadExiting)?;
        // The frame starts unlendable. The pointer is nearly always null
        // here already: whoever enters holds `&mut EventLoop`, which it got
        // by lending (taking the pointer) or as the loop's owner. But a
        // loop moved out of a lent `&mut` (`mem::replace`) leaves its old
        // shared state holding the lent pointer; entering that state's
        // loop must not lend it.
        let prev = shared.lend.replace(std::ptr::null_mut());
        shared.top.set(true);
        Ok(Entered { prev })
    }

    /// Runs `f` (which must not touch `self`: it gets no reference to it)
    /// with this loop lendable through [`EventLoop::with_current`]. The
    /// loop's frame must be the top one.
    pub(crate) fn lend_during<R>(&mut self, f: impl FnOnce() -> R) -> R {
        debug_assert!(
            self.shared.top.get(),
            "lending a loop that is not the current one"
        );
        // The guard holds its own reference to the shared state: a borrow
        // of `self.shared` held across the lend would alias the lent
        // `&mut EventLoop`.
        let shared = self.shared.clone();
        // Read before the lend: user code lent the loop may replace it.
        let instance = self.instance;
        // Safety argument, point 1: the pointer comes from `self`, which
        // this function does not use until the guard has removed it.
        let ptr: *mut EventLoop = self;
        let guard = Lend {
            prev: shared.lend.replace(ptr),
            shared: &shared,
        };
        let r = f();
        drop(guard);
        self.assert_not_replaced(instance, r)
    }

    /// [`lend_during`](Self::lend_during) where this loop is the current
    /// one (its frame the top of the thread's stack), else `f` alone: for
    /// dropping a task's future, whose `drop` may use
    /// [`with_current`](Self::with_current) as its polls do, from wherever
    /// the drop happens (an abort applied by a plain insert's flush, with
    /// no loop current, drops it unlent).
    pub(crate) fn lend_if_current<R>(&mut self, f: impl FnOnce() -> R) -> R {
        if self.shared.top.get() {
            self.lend_during(f)
        } else {
            f()
        }
    }

    /// Runs `f` with this loop as the thread's current loop, lendable: free
    /// functions of [`time`](crate::time) and [`task`](crate::task) and
    /// [`EventLoop::with_current`] work inside. Deferred work `f` leaves
    /// (a timer a future created) is applied before `scope` returns. This
    /// is how a test polls futures by hand, for example with tokio-test's
    /// mock tasks.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut sleep = tokio_test::task::spawn(lp.scope(|| time::sleep(Duration::from_millis(10))));
    /// lp.scope(|| tokio_test::assert_pending!(sleep.poll()));
    /// lp.run().unwrap(); // the sleep's timer fires at 10 ms
    /// assert!(sleep.is_woken());
    /// lp.scope(|| tokio_test::assert_ready!(sleep.poll()));
    /// assert_eq!(lp.now(), 10);
    /// ```
    ///
    /// # Panics
    ///
    /// If the thread is exiting: called from a thread-local's destructor
    /// after the crate's own thread-locals were destroyed, where
    /// [`run`](Self::run) returns [`Error::ThreadExiting`]. `f` does not
    /// run.
    pub fn scope<R>(&mut self, f: impl FnOnce() -> R) -> R {
        let _entered = self
            .enter_current()
            .unwrap_or_else(|e| panic!("EventLoop::scope: {e}"));
        let r = self.lend_during(f);
        self.flush_deferred();
        r
    }

    /// Lends the thread's current loop to `f`, so that code inside a task
    /// (which holds no `&mut EventLoop`) reaches the Node API: timers,
    /// ticks, immediates, `spawn`, `now`, `block`.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let l = log.clone();
    /// lp.spawn(async move {
    ///     let l2 = l.clone();
    ///     EventLoop::with_current(|lp| {
    ///         lp.set_timeout(5, move |lp| l2.borrow_mut().push(lp.now()));
    ///     });
    ///     l.borrow_mut().push(0);
    /// });
    /// lp.run().unwrap();
    /// assert_eq!(*log.borrow(), [0, 5]);
    /// ```
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread; inside a callback, which
    /// holds the loop already (use its `&mut EventLoop`); and inside
    /// another `with_current`.
    ///
    /// `f` may move the loop out of the `&mut` (`std::mem::replace`,
    /// `std::mem::swap`) if it is put back before the task's poll (or the
    /// `scope`) returns; meanwhile `with_current` lends what is in its
    /// place, and timers futures made then wait for the loop itself. A
    /// poll that returns with another loop in its place makes the run (or
    /// the `block_on`) panic (see [`run`](Self::run)), and so does a
    /// `scope` whose closure does.
    #[track_caller]
    pub fn with_current<R>(f: impl FnOnce(&mut EventLoop) -> R) -> R {
        #[cold]
        #[track_caller]
        fn no_loop() -> ! {
            panic!(
                "EventLoop::with_current: there is no current timerloop EventLoop on this \
                 thread (call it inside a spawned task, block_on or EventLoop::scope)"
            )
        }
        let Some(top) = try_current_shared() else {
            no_loop()
        };
        match take_lend(&top) {
            Lendable::Yes(ptr) => lent(&top, ptr, |lp| {
                lp.flush_deferred();
                f(lp)
            }),
            // The top frame's loop is the current one: not reached.
            Lendable::NoLoop => no_loop(),
            Lendable::Lent => panic!(
                "EventLoop::with_current: the loop is already lent: inside a callback use its \
                 own `&mut EventLoop` argument; with_current does not nest"
            ),
        }
    }

    /// Whether operations are deferred and would be flushed now (by
    /// [`flush_deferred`](Self::flush_deferred)).
    #[inline(always)]
    pub(crate) fn has_deferred(&self) -> bool {
        self.shared.has_deferred.get() && !self.flushing
    }

    /// Applies the deferred operations, in order (see the module docs).
    /// Inlined: every insert and callback asks, and the answer is nearly
    /// always "nothing deferred".
    #[inline]
    pub(crate) fn flush_deferred(&mut self) {
        // An operation that inserts a timer comes back here: the flush
        // already under way keeps the order.
        if self.has_deferred() {
            self.run_deferred();
        }
    }

    /// [`flush_deferred`](Self::flush_deferred), handing back the panic
    /// of an operation that panicked instead of resuming it: for a caller
    /// that must finish its own step (a fired timer's `finally`) before
    /// the panic leaves `run`. The operations after it stay queued.
    #[inline]
    pub(crate) fn flush_deferred_catching(&mut self) -> Option<Box<dyn Any + Send>> {
        if self.has_deferred() {
            self.try_run_deferred().err()
        } else {
            None
        }
    }

    #[inline(never)]
    fn run_deferred(&mut self) {
        if let Err(payload) = self.try_run_deferred() {
            resume_unwind(payload);
        }
    }

    #[inline(never)]
    fn try_run_deferred(&mut self) -> Result<(), Box<dyn Any + Send>> {
        self.flushing = true;
        // An operation that panics (a closure or a future it drops) leaves
        // the rest queued for the next flush, and the loop able to flush.
        let r = catch_unwind(AssertUnwindSafe(|| {
            loop {
                let op = self.shared.deferred.borrow_mut().pop_front();
                match op {
                    // A deferred operation returns nothing: its result is Ok.
                    Some(mut op) => drop(op(self)),
                    None => break,
                }
            }
            self.shared.has_deferred.set(false);
        }));
        self.flushing = false;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collections::arena::Arena;

    /// `run_now` lends a loop only while its frame is the top one: not
    /// inside a scope of another loop, again once that scope is gone, and
    /// not while it is lent already. (No caller in the crate asks for a
    /// loop other than the top one today: a sleep's arming asks for the
    /// current loop, and a reset defers its disarm first.)
    #[test]
    fn run_now_lends_only_the_top_frames_loop() {
        let mut a = EventLoop::with_virtual_clock();
        let mut b = EventLoop::with_virtual_clock();
        let a_shared = a.shared.clone();
        let b_shared = b.shared.clone();
        a.scope(|| {
            assert_eq!(a_shared.run_now(|lp| lp.id.get()), Some(a_shared.id));
            b.scope(|| {
                assert_eq!(a_shared.run_now(|_| ()), None, "A is not on top");
                assert_eq!(b_shared.run_now(|lp| lp.id.get()), Some(b_shared.id));
            });
            assert_eq!(b_shared.run_now(|_| ()), None, "B has no frame");
            let nested = a_shared.run_now(|_| a_shared.run_now(|_| ()));
            assert_eq!(nested, Some(None), "lent already");
            assert!(a_shared.run_now(|_| ()).is_some(), "given back");
        });
        assert_eq!(a_shared.run_now(|_| ()), None, "no frame");
    }

    /// The length kept beside the queue follows every push, pop and take,
    /// and a pop from an empty queue answers `None` without a borrow.
    #[test]
    fn micro_queue_length_follows_the_queue() {
        let mut keys: Arena<()> = Arena::new();
        let q = MicroQueue::new();
        assert!(q.is_empty() && q.pop().is_none());
        assert_eq!(q.len(), 0);
        let (a, b, c) = (keys.insert(()), keys.insert(()), keys.insert(()));
        q.push(Micro::Task(a));
        q.push(Micro::Task(b));
        assert_eq!(q.len(), 2);
        assert!(matches!(q.pop(), Some(Micro::Task(k)) if k == a));
        assert_eq!(q.len(), 1);
        // A borrow of the queue is not needed to ask.
        let held = q.queue.borrow();
        assert!(!q.is_empty());
        drop(held);
        q.push(Micro::Task(c));
        let all = q.take();
        assert_eq!(all.len(), 2);
        assert!(q.is_empty() && q.pop().is_none());
        q.push(Micro::Task(a));
        assert!(matches!(q.pop(), Some(Micro::Task(k)) if k == a));
        assert!(q.is_empty());
    }
}
