//! [`Semaphore`]: its state, every transition of that state, and the
//! permits.
//!
//! # State
//!
//! One mutex guards `taken` (Go's `cur`: tokens held by permits, forgotten
//! permits and granted waiters), `unowned` (the part of `taken` that
//! forgotten permits left: the only tokens [`Semaphore::release`] may give
//! back), a slab of waiters, and the FIFO queue
//! threaded through that slab (an intrusive list whose links are slab
//! keys). A waiter is in one of two states, told apart by whether it is
//! linked into the queue:
//!
//! | state | in the queue | its tokens | leaves by |
//! |---|---|---|---|
//! | queued | yes | not taken | a grant (to *granted*); its future dropped (unlinked and removed; if it was the head, the waiters behind it are granted what fits) |
//! | granted | no | in `taken` | its future's poll (removed, a permit made); its future dropped (removed, tokens back, waiters granted what fits) |
//!
//! A slab slot belongs to the future that made it until that future
//! completes or is dropped, so the key the future holds is never stale.
//! Requests larger than the size never get a slot.
//!
//! Invariants, whenever the lock is free and no grant is under way (a
//! grant that wakes many waiters unlocks between batches of wakes):
//! `unowned <= taken <= size`, and `taken - unowned` is what live permits
//! and granted waiters hold, so a permit's drop always finds its tokens
//! in `taken`; the head of the queue does not fit
//! (`size - taken < head.n`), else it would have been granted; and a
//! queued waiter holds the waker of its latest poll.
//!
//! Every function that can make room ends in [`Semaphore::grant_and_unlock`]:
//! it grants from the head while the head fits, collects the wakers of
//! those it granted, and calls them after the lock is released. A waker
//! that panics (another executor's, or a hand-made one) does not stop
//! it: every waker granted is called and every batch granted, then the
//! first panic resumes. A panic that cut it short had left the waiters
//! granted with it unwoken, holding their tokens, and the ones behind
//! them queued at a head that fit.

use std::any::Any;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, PoisonError};
use std::task::Waker;

use slab::Slab;

use super::acquire::{Acquire, AcquireOwned};
use crate::collections::list::{Linked, Links, List};
use crate::prim::{Mutex, MutexGuard};
use crate::timers::discard_payload;

/// A weighted, FIFO, all-or-nothing semaphore: Go's
/// `x/sync/semaphore.Weighted`, `Send + Sync`, for tasks of any loop or
/// executor (see the [module docs](super) for the rules).
///
/// ```
/// use std::sync::Arc;
/// use timerloop::{EventLoop, sync::Semaphore};
/// let sem = Arc::new(Semaphore::new(3));
/// let mut lp = EventLoop::with_virtual_clock();
/// let s = sem.clone();
/// lp.block_on(async move {
///     let a = s.acquire(2).await;
///     assert_eq!(s.available(), 1);
///     assert!(s.try_acquire(2).is_none());
///     drop(a);
///     assert_eq!(s.available(), 3);
/// })
/// .unwrap();
/// ```
pub struct Semaphore {
    size: u64,
    state: Mutex<State>,
}

/// What the lock guards; see the module docs.
struct State {
    taken: u64,
    /// Tokens of forgotten permits, not yet released by hand.
    unowned: u64,
    waiters: Slab<Waiter>,
    queue: List,
}

struct Waiter {
    n: u64,
    links: Links,
    /// The waker of the latest poll while queued; taken when granted.
    waker: Option<Waker>,
}

impl Linked for Waiter {
    fn links_mut(&mut self) -> &mut Links {
        &mut self.links
    }
}

/// What the first poll of an acquire found.
pub(super) enum Start {
    /// The tokens were free and nobody waited: they are taken.
    Taken,
    /// Larger than the size: never granted, not queued.
    TooBig,
    /// Queued, with this slab key.
    Queued(usize),
}

/// How many wakers a grant collects before it unlocks to call them (and
/// locks again to go on): a release normally grants one or two waiters,
/// and this keeps the list off the heap.
const WAKE_BATCH: usize = 8;

/// Wakers collected under the lock, called after it is released.
struct WakeList {
    wakers: [Option<Waker>; WAKE_BATCH],
    len: usize,
}

impl WakeList {
    fn new() -> WakeList {
        WakeList {
            wakers: [const { None }; WAKE_BATCH],
            len: 0,
        }
    }

    fn is_full(&self) -> bool {
        self.len == WAKE_BATCH
    }

    fn push(&mut self, w: Waker) {
        debug_assert!(!self.is_full(), "WakeList overflow");
        self.wakers[self.len] = Some(w);
        self.len += 1;
    }

    /// Calls every waker, even after one panics: the others' waiters were
    /// granted and must run. Keeps the first panic in `panicked`, for the
    /// caller to resume once its grants are done; a later one's payload is
    /// dropped (under a guard: it may panic too).
    fn wake_all(mut self, panicked: &mut Option<Box<dyn Any + Send>>) {
        for w in self.wakers[..self.len].iter_mut() {
            if let Some(w) = w.take()
                && let Err(payload) = catch_unwind(AssertUnwindSafe(|| w.wake()))
            {
                match panicked {
                    None => *panicked = Some(payload),
                    Some(_) => discard_payload(payload),
                }
            }
        }
    }
}

impl State {
    const fn new() -> State {
        State {
            taken: 0,
            unowned: 0,
            waiters: Slab::new(),
            queue: List::new(),
        }
    }

    /// Go's `notifyWaiters`: grants queued waiters from the head while the
    /// head fits, collecting their wakers. Returns true if it stopped
    /// because `woken` is full (the head may still fit).
    fn grant(&mut self, size: u64, woken: &mut WakeList) -> bool {
        while let Some(key) = self.queue.peek() {
            let n = self.waiters[key].n;
            if size - self.taken < n {
                // The head does not fit: everyone waits behind it, so a
                // large request is not starved by small ones.
                return false;
            }
            if woken.is_full() {
                return true;
            }
            self.taken += n;
            self.queue.remove(&mut self.waiters, key);
            if let Some(w) = self.waiters[key].waker.take() {
                woken.push(w);
            }
        }
        false
    }

    /// Gives back `n` tokens a permit or a granted waiter held: they are in
    /// `taken` and not `unowned` (a hand-made `release` gives back only
    /// forgotten permits'), so the count never goes below zero.
    fn untake(&mut self, n: u64) {
        debug_assert!(
            n <= self.taken - self.unowned,
            "a holder's tokens are taken"
        );
        self.taken -= n.min(self.taken);
    }

    /// Takes `n` if nobody waits and `n` fits: the fast path of `acquire`
    /// and all of `try_acquire`.
    fn try_take(&mut self, size: u64, n: u64) -> bool {
        let ok = self.queue.is_empty() && size - self.taken >= n;
        if ok {
            self.taken += n;
        }
        ok
    }
}

impl Semaphore {
    /// A semaphore of `size` tokens, all available. `const`, so it can be a
    /// `static`.
    ///
    /// ```
    /// use timerloop::sync::Semaphore;
    /// static LIMIT: Semaphore = Semaphore::new(4);
    /// let p = LIMIT.try_acquire(3).unwrap();
    /// assert_eq!(LIMIT.available(), 1);
    /// drop(p);
    /// assert_eq!(LIMIT.available(), 4);
    /// ```
    ///
    /// Any size is allowed: 0 (only zero-weight requests succeed) up to
    /// `u64::MAX` (the count never wraps: held + available = size).
    #[cfg(not(loom))]
    pub const fn new(size: u64) -> Semaphore {
        Semaphore {
            size,
            state: Mutex::new(State::new()),
        }
    }

    /// The same, with loom's lock (not `const`), for the loom tests.
    #[cfg(loom)]
    pub fn new(size: u64) -> Semaphore {
        Semaphore {
            size,
            state: Mutex::new(State::new()),
        }
    }

    /// The number of tokens the semaphore was made with.
    ///
    /// ```
    /// use timerloop::sync::Semaphore;
    /// let sem = Semaphore::new(5);
    /// let _p = sem.try_acquire(2);
    /// assert_eq!(sem.size(), 5);
    /// ```
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The number of tokens not taken right now (a snapshot: other threads
    /// may change it at once). Tokens granted to a waiter that has not yet
    /// been polled count as taken.
    ///
    /// ```
    /// use timerloop::sync::Semaphore;
    /// let sem = Semaphore::new(5);
    /// let p = sem.try_acquire(2).unwrap();
    /// assert_eq!(sem.available(), 3);
    /// p.forget();
    /// assert_eq!(sem.available(), 3);
    /// ```
    pub fn available(&self) -> u64 {
        self.size - self.lock().taken
    }

    /// Waits for `n` tokens: a future of a [`Permit`] that gives them back
    /// when dropped. Nothing happens until the future is first polled; then
    /// the tokens are taken at once if they are free and nobody waits, and
    /// otherwise the acquire queues behind the waiters (FIFO, all or
    /// nothing). A request larger than [`size`](Self::size) stays pending
    /// until dropped, without queueing. Dropping the future cancels the
    /// acquire and gives back whatever it was granted; for an
    /// acquire-with-timeout, wrap it in [`time::timeout`](crate::time::timeout).
    ///
    /// ```
    /// use std::{sync::Arc, time::Duration};
    /// use timerloop::{EventLoop, sync::Semaphore, time};
    /// let sem = Arc::new(Semaphore::new(1));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let s = sem.clone();
    /// let out = lp.block_on(async move {
    ///     let held = s.acquire(1).await;
    ///     // Busy: the acquire-with-timeout gives up after 5 ms.
    ///     let late = time::timeout(Duration::from_millis(5), s.acquire(1)).await;
    ///     drop(held);
    ///     let now = time::timeout(Duration::from_millis(5), s.acquire(1)).await;
    ///     (late.is_err(), now.is_ok())
    /// });
    /// assert_eq!(out.unwrap(), (true, true));
    /// assert_eq!(sem.available(), 1);
    /// ```
    ///
    /// # Hostile input
    ///
    /// Any `n` is accepted; none panics or wraps. `n == 0` completes on the
    /// first poll unless someone waits (then it waits its turn, FIFO). `n`
    /// above [`size`](Self::size) (`u64::MAX` included, or any `n > 0` on a
    /// semaphore of size 0) never completes and keeps no loop alive: awaited
    /// alone in [`EventLoop::block_on`](crate::EventLoop::block_on) it is
    /// [`Error::Stalled`](crate::Error::Stalled), not a hang; bound it with
    /// [`time::timeout`](crate::time::timeout). A task that waits for
    /// tokens it holds itself (two acquires of a semaphore of 1, say)
    /// waits forever, and its loop with it: a waiting acquire keeps its
    /// loop alive, since its tokens may come from another thread (see the
    /// [module docs](super)); Go's runtime would report the deadlock. An
    /// `Acquire` passed to [`mem::forget`](std::mem::forget) while it
    /// waits is never dropped: once granted, its tokens are taken for good
    /// (not a forgotten permit's, so [`release`](Self::release) refuses
    /// them), as with tokio's semaphore.
    ///
    /// # Panics
    ///
    /// The future, polled again after it completed (it returned its
    /// permit).
    pub fn acquire(&self, n: u64) -> Acquire<'_> {
        Acquire::new(self, n)
    }

    /// [`acquire`](Self::acquire) for an `Arc<Semaphore>`: the future and
    /// its [`OwnedPermit`] hold the `Arc`, so they are `'static` and can
    /// move into spawned tasks and other threads.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use timerloop::{EventLoop, sync::Semaphore, task};
    /// let sem = Arc::new(Semaphore::new(2));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let s = sem.clone();
    /// lp.block_on(async move {
    ///     let permit = s.clone().acquire_owned(2).await;
    ///     let worker = task::spawn(async move {
    ///         let _permit = permit; // released when the task ends
    ///     });
    ///     worker.await.unwrap();
    ///     assert_eq!(s.available(), 2);
    /// })
    /// .unwrap();
    /// ```
    pub fn acquire_owned(self: Arc<Self>, n: u64) -> AcquireOwned {
        AcquireOwned::new(self, n)
    }

    /// Takes `n` tokens now, or returns `None`: only if they are free **and
    /// nobody waits**, so it never jumps the queue. Zero tokens succeed
    /// unless someone waits.
    ///
    /// ```
    /// use timerloop::sync::Semaphore;
    /// let sem = Semaphore::new(2);
    /// let a = sem.try_acquire(1).unwrap();
    /// assert!(sem.try_acquire(1).is_some()); // taken and given back
    /// assert!(sem.try_acquire(2).is_none());
    /// drop(a);
    /// assert!(sem.try_acquire(2).is_some());
    /// assert!(sem.try_acquire(3).is_none()); // larger than the size
    /// ```
    pub fn try_acquire(&self, n: u64) -> Option<Permit<'_>> {
        self.lock()
            .try_take(self.size, n)
            .then(|| Permit::new(self, n))
    }

    /// [`try_acquire`](Self::try_acquire) for an `Arc<Semaphore>`: the
    /// permit holds the `Arc`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use timerloop::sync::Semaphore;
    /// let sem = Arc::new(Semaphore::new(1));
    /// let p = sem.clone().try_acquire_owned(1).unwrap();
    /// assert!(sem.clone().try_acquire_owned(1).is_none());
    /// std::thread::spawn(move || drop(p)).join().unwrap();
    /// assert_eq!(sem.available(), 1);
    /// ```
    pub fn try_acquire_owned(self: Arc<Self>, n: u64) -> Option<OwnedPermit> {
        let ok = self.lock().try_take(self.size, n);
        ok.then(|| OwnedPermit { sem: self, n })
    }

    /// Gives back `n` tokens taken without a permit (one that was
    /// [forgotten](Permit::forget)), and grants the waiters that then fit,
    /// in order. This is Go's `Release`; a live permit's tokens are not
    /// its to give back (the permit's drop does that).
    ///
    /// ```
    /// use timerloop::sync::Semaphore;
    /// let sem = Semaphore::new(4);
    /// sem.try_acquire(3).unwrap().forget();
    /// sem.release(2).unwrap();
    /// assert_eq!(sem.available(), 3);
    /// let err = sem.release(2).unwrap_err(); // only 1 is held
    /// assert_eq!(sem.available(), 3, "nothing was released");
    /// assert!(err.to_string().starts_with("semaphore: released more than held"));
    /// let p = sem.try_acquire(2).unwrap();
    /// assert!(sem.release(2).is_err(), "a live permit's tokens are its own");
    /// drop(p);
    /// assert_eq!(sem.available(), 3);
    /// ```
    ///
    /// # Errors
    ///
    /// [`ReleaseError`] if `n` is more than the tokens forgotten permits
    /// hold (Go panics with "semaphore: released more than held"); nothing
    /// changes then.
    ///
    /// # Panics
    ///
    /// If the waker of a waiter it grants panics (a waker of another
    /// executor's, or a hand-made one): after the release is done, every
    /// waiter it granted woken and every waiter that fits granted, with
    /// the first such panic.
    pub fn release(&self, n: u64) -> Result<(), ReleaseError> {
        let mut st = self.lock();
        if n > st.unowned {
            return Err(ReleaseError {
                released: n,
                held: st.unowned,
            });
        }
        st.unowned -= n;
        st.taken -= n;
        self.grant_and_unlock(st);
        Ok(())
    }

    /// A permit of `n` tokens was forgotten: they are the caller's to
    /// [`release`](Self::release) by hand now.
    fn disown(&self, n: u64) {
        if n > 0 {
            self.lock().unowned += n;
        }
    }

    /// Gives back a permit's `n` tokens (its drop), then grants the
    /// waiters that fit.
    fn give_back(&self, n: u64) {
        let mut st = self.lock();
        st.untake(n);
        self.grant_and_unlock(st);
    }

    /// The lock; a panic while it was held (which only a bug of this
    /// module could cause, and which leaves the state consistent: every
    /// transition is complete before anything that can panic) does not
    /// poison the semaphore for everyone else.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Grants from the head while it fits, releases the lock, then calls
    /// the wakers of those granted (in batches of [`WAKE_BATCH`], locking
    /// again between batches).
    fn grant_and_unlock<'a>(&'a self, mut st: MutexGuard<'a, State>) {
        if st.queue.is_empty() {
            return; // the uncontended release: nobody to grant
        }
        let mut panicked = None;
        loop {
            let mut woken = WakeList::new();
            let more = st.grant(self.size, &mut woken);
            drop(st);
            woken.wake_all(&mut panicked);
            if !more {
                break;
            }
            st = self.lock();
        }
        if let Some(payload) = panicked {
            resume_unwind(payload);
        }
    }

    /// The first poll of an acquire of `n`.
    pub(super) fn start(&self, n: u64, waker: &Waker) -> Start {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.try_take(self.size, n) {
            return Start::Taken;
        }
        if n > self.size {
            return Start::TooBig;
        }
        let key = st.waiters.insert(Waiter {
            n,
            links: Links::default(),
            waker: Some(waker.clone()),
        });
        st.queue.append(&mut st.waiters, key);
        Start::Queued(key)
    }

    /// A later poll of the queued acquire `key`: true if it was granted
    /// (its slot is freed and its tokens are now the caller's); otherwise
    /// stores `waker` as the one to wake.
    pub(super) fn poll_queued(&self, key: usize, waker: &Waker) -> bool {
        let mut st = self.lock();
        let w = &mut st.waiters[key];
        if w.links.is_linked() {
            crate::task::store_waker(&mut w.waker, waker);
            return false;
        }
        st.waiters.remove(key);
        true
    }

    /// The acquire `key` was dropped before it completed: out of the
    /// queue, or its tokens back if it had been granted; then grants what
    /// fits if the head changed or tokens came back.
    pub(super) fn cancel(&self, key: usize) {
        let mut guard = self.lock();
        let st = &mut *guard;
        let room = if st.waiters[key].links.is_linked() {
            let was_head = st.queue.peek() == Some(key);
            st.queue.remove(&mut st.waiters, key);
            // Go checks `size > cur` too, which strands a zero-weight
            // waiter behind a full semaphore; `grant` checks the new head
            // itself.
            was_head
        } else {
            let n = st.waiters[key].n;
            st.untake(n);
            true
        };
        let waiter = st.waiters.remove(key);
        if room {
            self.grant_and_unlock(guard);
        } else {
            drop(guard);
        }
        drop(waiter); // its waker, if any, outside the lock
    }
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (taken, waiting) = {
            let st = self.lock();
            // The queued waiters (a granted one stays in the slab until
            // its future sees the grant): counted here, not upkept on
            // every acquire.
            let queued = st.waiters.iter().filter(|(_, w)| w.links.is_linked());
            (st.taken, queued.count())
        };
        f.debug_struct("Semaphore")
            .field("size", &self.size)
            .field("available", &(self.size - taken))
            .field("waiting", &waiting)
            .finish()
    }
}

/// Releasing more tokens than forgotten permits hold: what
/// [`Semaphore::release`] returns instead of Go's panic. Nothing was
/// released.
///
/// ```
/// use timerloop::sync::Semaphore;
/// let err = Semaphore::new(1).release(1).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "semaphore: released more than held (1 released, 0 held without a permit); nothing \
///      was released: release only the tokens of forgotten permits (a live Permit gives \
///      its own back when dropped)"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReleaseError {
    released: u64,
    held: u64,
}

impl ReleaseError {
    /// How many tokens the refused [`Semaphore::release`] asked to give
    /// back.
    ///
    /// ```
    /// use timerloop::sync::Semaphore;
    /// let sem = Semaphore::new(4);
    /// sem.try_acquire(1).unwrap().forget();
    /// let err = sem.release(3).unwrap_err();
    /// assert_eq!((err.released(), err.held()), (3, 1));
    /// ```
    pub fn released(&self) -> u64 {
        self.released
    }

    /// How many tokens forgotten permits held then: the most that
    /// release could have given back.
    ///
    /// ```
    /// use timerloop::sync::Semaphore;
    /// let sem = Semaphore::new(2);
    /// let err = sem.release(1).unwrap_err();
    /// assert_eq!(err.held(), 0); // nothing forgotten
    /// ```
    pub fn held(&self) -> u64 {
        self.held
    }
}

impl fmt::Display for ReleaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "semaphore: released more than held ({} released, {} held without a permit); \
             nothing was released: release only the tokens of forgotten permits (a live \
             Permit gives its own back when dropped)",
            self.released, self.held
        )
    }
}

impl std::error::Error for ReleaseError {}

/// Tokens taken from a [`Semaphore`]: given back when dropped, unless
/// [forgotten](Self::forget). Made by [`Semaphore::acquire`] and
/// [`Semaphore::try_acquire`].
///
/// Its tokens are its own: [`Semaphore::release`] gives back only the
/// tokens of [forgotten](Self::forget) permits, so a live permit's drop
/// always finds them to give back, and no token is given back twice or
/// stranded.
///
/// # Panics
///
/// Dropping it panics if the waker of a waiter its tokens grant panics (a
/// waker of another executor's, or a hand-made one), after every grant is
/// done, as [`Semaphore::release`].
///
/// ```
/// use timerloop::sync::Semaphore;
/// let sem = Semaphore::new(2);
/// {
///     let _p = sem.try_acquire(2).unwrap();
///     assert_eq!(sem.available(), 0);
/// }
/// assert_eq!(sem.available(), 2);
/// ```
#[must_use = "a permit dropped at once gives its tokens back at once"]
pub struct Permit<'a> {
    sem: &'a Semaphore,
    n: u64,
}

impl<'a> Permit<'a> {
    pub(super) fn new(sem: &'a Semaphore, n: u64) -> Permit<'a> {
        Permit { sem, n }
    }

    /// Keeps the tokens taken: the permit is consumed without giving them
    /// back (give them back later with [`Semaphore::release`]).
    ///
    /// ```
    /// use timerloop::sync::Semaphore;
    /// let sem = Semaphore::new(3);
    /// sem.try_acquire(2).unwrap().forget();
    /// assert_eq!(sem.available(), 1);
    /// sem.release(2).unwrap();
    /// assert_eq!(sem.available(), 3);
    /// ```
    pub fn forget(mut self) {
        self.sem.disown(std::mem::take(&mut self.n));
    }

    /// How many tokens the permit holds (tokio's name): what it gives back
    /// when dropped.
    ///
    /// ```
    /// use timerloop::sync::Semaphore;
    /// let sem = Semaphore::new(3);
    /// let p = sem.try_acquire(2).unwrap();
    /// assert_eq!(p.num_permits(), 2);
    /// assert_eq!(sem.try_acquire(0).unwrap().num_permits(), 0);
    /// ```
    pub fn num_permits(&self) -> u64 {
        self.n
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if self.n > 0 {
            self.sem.give_back(self.n);
        }
    }
}

impl fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").field("n", &self.n).finish()
    }
}

/// A [`Permit`] that holds an `Arc` of its semaphore, so it is `'static`:
/// made by [`Semaphore::acquire_owned`] and
/// [`Semaphore::try_acquire_owned`].
///
/// # Panics
///
/// Dropping it panics if the waker of a waiter its tokens grant panics (a
/// waker of another executor's, or a hand-made one), after every grant is
/// done, as [`Semaphore::release`].
///
/// ```
/// use std::sync::Arc;
/// use timerloop::sync::{OwnedPermit, Semaphore};
/// let sem = Arc::new(Semaphore::new(1));
/// let p: OwnedPermit = sem.clone().try_acquire_owned(1).unwrap();
/// let t = std::thread::spawn(move || drop(p));
/// t.join().unwrap();
/// assert_eq!(sem.available(), 1);
/// ```
#[must_use = "a permit dropped at once gives its tokens back at once"]
pub struct OwnedPermit {
    sem: Arc<Semaphore>,
    n: u64,
}

impl OwnedPermit {
    pub(super) fn new(sem: Arc<Semaphore>, n: u64) -> OwnedPermit {
        OwnedPermit { sem, n }
    }

    /// Keeps the tokens taken; see [`Permit::forget`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use timerloop::sync::Semaphore;
    /// let sem = Arc::new(Semaphore::new(3));
    /// sem.clone().try_acquire_owned(3).unwrap().forget();
    /// assert_eq!(sem.available(), 0);
    /// ```
    pub fn forget(mut self) {
        self.sem.disown(std::mem::take(&mut self.n));
    }

    /// How many tokens the permit holds; see [`Permit::num_permits`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use timerloop::sync::Semaphore;
    /// let sem = Arc::new(Semaphore::new(3));
    /// let p = sem.clone().try_acquire_owned(3).unwrap();
    /// assert_eq!(p.num_permits(), 3);
    /// ```
    pub fn num_permits(&self) -> u64 {
        self.n
    }
}

impl Drop for OwnedPermit {
    fn drop(&mut self) {
        if self.n > 0 {
            self.sem.give_back(self.n);
        }
    }
}

impl fmt::Debug for OwnedPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit").field("n", &self.n).finish()
    }
}
