//! Synchronization for tasks: [`Semaphore`], Go's weighted semaphore
//! (`golang.org/x/sync/semaphore.Weighted`) with tokio's shape.
//!
//! # Ground rules
//!
//! - **Any thread, any executor.** A [`Semaphore`] is `Send + Sync` and
//!   waker-based: tasks of this loop, of loops on other threads and of any
//!   other executor (or none: a hand-polled future) can wait on one
//!   semaphore, usually shared as an `Arc<Semaphore>`.
//! - **All or nothing.** An acquire of `n` takes `n` tokens at once or
//!   waits; it never holds part of its request (tokio's semaphore hands
//!   the head waiter partial permits; Go's does not, nor does this one).
//! - **FIFO, no barging.** Waiters are granted strictly in the order they
//!   started waiting, and granting stops at the first that does not fit, so
//!   a stream of small requests cannot starve a large one.
//!   [`try_acquire`](Semaphore::try_acquire) fails while anyone waits, and
//!   so does the fast path of [`acquire`](Semaphore::acquire): a new
//!   request with tokens free still queues behind the waiters. This holds
//!   for zero-weight requests too: they succeed at once unless someone
//!   waits.
//! - **Too big waits alone.** A request larger than
//!   [`size`](Semaphore::size) can never be granted: it stays pending until
//!   it is dropped, without being queued, so it blocks nobody behind it,
//!   and it keeps no loop alive (nothing can ever wake it).
//! - **Cancelling is dropping.** Dropping a waiting acquire removes it from
//!   the queue; if it was at the head, the waiters behind it that now fit
//!   are granted at once (golang/go#37852, a starvation Go shipped). An
//!   acquire dropped after it was granted but before it was polled to
//!   completion gives its tokens back, and the waiters behind it are
//!   granted what fits. So an acquire that does not complete holds nothing.
//! - **Releasing is counted.** A [`Permit`] gives its tokens back when
//!   dropped ([`Permit::forget`] keeps them taken);
//!   [`release`](Semaphore::release) gives tokens back by hand, and
//!   releasing more than is held is a [`ReleaseError`] that changes
//!   nothing (Go panics with "semaphore: released more than held"). What
//!   `release` may give back is only what forgotten permits hold, so a
//!   live permit's tokens cannot be released twice (once by hand, once by
//!   its drop) or stranded. The count never wraps: held + available =
//!   size, always.
//! - **A waiting acquire keeps its loop alive**, as a listening
//!   `MessagePort` keeps Node alive: its permit may come from another
//!   thread. While queued, an acquire polled where a loop is current (in a
//!   task, `block_on`, a callback or [`EventLoop::scope`](crate::EventLoop::scope))
//!   keeps that loop alive until it completes or is dropped. Polled with no
//!   loop current, it keeps nothing alive.
//! - **Wakes.** An acquire stores only the waker of its latest poll. Wakers
//!   are called after the semaphore's lock is released, never under it.
//!
//! ```text
//! size 10, 9 taken, queue: [A wants 10] [B wants 1] [C wants 1]
//!   B would fit, but waits behind A (FIFO: no barging)
//! drop A (the head):  B granted (10 taken), C waits (0 available)
//! release 9:          C granted (2 taken)
//! ```
//!
//! # From Go
//!
//! | Go's `semaphore.Weighted` | here |
//! |---|---|
//! | `NewWeighted(n)` | [`Semaphore::new(n)`](Semaphore::new), usually in an `Arc` |
//! | `Acquire(ctx, n)` | [`sem.acquire(n).await`](Semaphore::acquire), a [`Permit`]; [`acquire_owned`](Semaphore::acquire_owned) for an `Arc<Semaphore>` |
//! | `TryAcquire(n)` | [`try_acquire(n)`](Semaphore::try_acquire), `Option<Permit>`; [`try_acquire_owned`](Semaphore::try_acquire_owned) |
//! | `Release(n)` | drop the [`Permit`]; or [`forget`](Permit::forget) it and [`release(n)`](Semaphore::release) later |
//! | `Release` of more than held: panics | [`release`](Semaphore::release) returns [`ReleaseError`], nothing changes |
//! | ctx cancelled while waiting | drop the [`Acquire`] future (in `select!`, or by aborting its task) |
//! | `context.WithTimeout(ctx, d)` | [`time::timeout(d, sem.acquire(n))`](crate::time::timeout) |
//! | ctx already done: fails even if tokens are free | no counterpart: do not start the acquire; a [`time::timeout`](crate::time::timeout) polls the acquire first, so free tokens win even a zero timeout |
//! | the head waiter cancelled while no token is free: nobody is woken, so zero-weight waiters behind it wait for the next `Release` (even `Release(0)`) | the waiters behind it are granted what fits at once: zero-weight ones now |
//!
//! ```
//! use std::{sync::Arc, time::Duration};
//! use timerloop::{EventLoop, sync::Semaphore, task, time};
//!
//! let mut lp = EventLoop::with_virtual_clock();
//! let sem = Arc::new(Semaphore::new(2));
//! let got = lp.block_on(async move {
//!     let two = sem.acquire(2).await; // both tokens, at once
//!     let s = sem.clone();
//!     let waiter = task::spawn(async move { s.acquire(1).await.forget() });
//!     // Nothing is free for 10 ms: the acquire-with-timeout fails.
//!     let timed_out = time::timeout(Duration::from_millis(10), sem.acquire(1)).await.is_err();
//!     drop(two); // the waiting task is granted 1
//!     waiter.await.unwrap();
//!     (timed_out, sem.available())
//! });
//! assert_eq!(got.unwrap(), (true, 1));
//! ```
#![forbid(unsafe_code)]

mod acquire;
mod semaphore;

pub use acquire::{Acquire, AcquireOwned};
pub use semaphore::{OwnedPermit, Permit, ReleaseError, Semaphore};
