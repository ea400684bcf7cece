//! The acquire futures, [`Acquire`] and [`AcquireOwned`]: one waiter's life
//! from its first poll to a permit or a drop, and the loop it keeps alive
//! meanwhile.
//!
//! ```text
//!            first poll                    later polls           drop
//! Start ─┬─ free, nobody waits ──► Done (permit)
//!        ├─ n > size ────────────► TooBig (pending until dropped; no slot)
//!        └─ else ────────────────► Queued(key) ── granted ──► Done (permit)
//!                                       │  └─ not yet: store the waker
//!                                       └───────────────────────────► cancel(key)
//! ```
//!
//! Both futures share [`Wait`]; the semaphore's side of each arrow is in
//! `semaphore.rs`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::semaphore::{OwnedPermit, Permit, Semaphore, Start};
use crate::timers::try_current_shared;
use crate::uv::KeepAlive;

#[derive(Clone, Copy, Debug)]
enum Step {
    Start,
    Queued(usize),
    TooBig,
    Done,
}

/// The state an acquire future keeps between polls.
struct Wait {
    n: u64,
    step: Step,
    /// While queued: the loop current at the latest poll (by id), kept
    /// alive because the grant may come from another thread.
    keep: Option<(u32, KeepAlive)>,
}

impl Wait {
    fn new(n: u64) -> Wait {
        Wait {
            n,
            step: Step::Start,
            keep: None,
        }
    }

    /// `Ready` once the tokens are the caller's.
    fn poll(&mut self, sem: &Semaphore, cx: &Context<'_>) -> Poll<()> {
        match self.step {
            Step::Start => match sem.start(self.n, cx.waker()) {
                Start::Taken => {
                    self.step = Step::Done;
                    Poll::Ready(())
                }
                Start::TooBig => {
                    // Never granted: no waker to store, no loop to keep.
                    self.step = Step::TooBig;
                    Poll::Pending
                }
                Start::Queued(key) => {
                    self.step = Step::Queued(key);
                    self.keep_current_loop_alive();
                    Poll::Pending
                }
            },
            Step::Queued(key) => {
                if sem.poll_queued(key, cx.waker()) {
                    self.step = Step::Done;
                    self.keep = None;
                    Poll::Ready(())
                } else {
                    self.keep_current_loop_alive();
                    Poll::Pending
                }
            }
            Step::TooBig => Poll::Pending,
            Step::Done => panic!("a semaphore acquire was polled after it completed"),
        }
    }

    /// Keeps the loop current on this thread alive (and no other): the one
    /// whose task waits, if a loop runs this poll.
    fn keep_current_loop_alive(&mut self) {
        let Some(shared) = try_current_shared() else {
            self.keep = None;
            return;
        };
        if !matches!(&self.keep, Some((id, _)) if *id == shared.id) {
            self.keep = Some((shared.id, shared.sender.keep_alive()));
        }
    }

    /// The future is dropped: a queued or granted acquire gives up.
    fn cancel(&mut self, sem: &Semaphore) {
        if let Step::Queued(key) = self.step {
            self.step = Step::Done;
            sem.cancel(key);
        }
    }
}

impl Wait {
    fn debug(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.step {
            Step::Start => "not polled",
            Step::Queued(_) => "queued",
            Step::TooBig => "larger than the size",
            Step::Done => "done",
        };
        f.debug_struct(name)
            .field("n", &self.n)
            .field("state", &state)
            .finish()
    }
}

/// A future of a [`Permit`] of `n` tokens, made by [`Semaphore::acquire`].
/// `Send`, `Unpin`; dropping it cancels the acquire (see the
/// [module docs](super)).
///
/// # Panics
///
/// Dropping it while queued or granted panics if the waker of a waiter
/// its cancel grants panics, after every grant is done, as
/// [`Semaphore::release`].
///
/// ```
/// use std::sync::Arc;
/// use timerloop::{EventLoop, sync::Semaphore};
/// let sem = Arc::new(Semaphore::new(2));
/// let s = sem.clone();
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.block_on(async move {
///     let fut = s.acquire(2);
///     assert_eq!(s.available(), 2, "nothing is taken until it is polled");
///     fut.await.forget();
/// })
/// .unwrap();
/// assert_eq!(sem.available(), 0);
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct Acquire<'a> {
    sem: &'a Semaphore,
    wait: Wait,
}

impl<'a> Acquire<'a> {
    pub(super) fn new(sem: &'a Semaphore, n: u64) -> Acquire<'a> {
        Acquire {
            sem,
            wait: Wait::new(n),
        }
    }
}

impl<'a> Future for Acquire<'a> {
    type Output = Permit<'a>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Permit<'a>> {
        let me = self.get_mut();
        me.wait
            .poll(me.sem, cx)
            .map(|()| Permit::new(me.sem, me.wait.n))
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        self.wait.cancel(self.sem);
    }
}

impl fmt::Debug for Acquire<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.wait.debug("Acquire", f)
    }
}

/// A future of an [`OwnedPermit`], made by [`Semaphore::acquire_owned`]:
/// an [`Acquire`] that holds an `Arc` of its semaphore, so it is
/// `'static`.
///
/// # Panics
///
/// Dropping it while queued or granted panics if the waker of a waiter
/// its cancel grants panics, after every grant is done, as
/// [`Semaphore::release`].
///
/// ```
/// use std::sync::Arc;
/// use timerloop::{EventLoop, sync::Semaphore};
/// let sem = Arc::new(Semaphore::new(1));
/// let fut = sem.clone().acquire_owned(1);
/// let mut lp = EventLoop::with_virtual_clock();
/// let permit = lp.block_on(fut).unwrap();
/// assert_eq!(sem.available(), 0);
/// drop(permit);
/// assert_eq!(sem.available(), 1);
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct AcquireOwned {
    /// `None` once the permit took it.
    sem: Option<Arc<Semaphore>>,
    wait: Wait,
}

impl AcquireOwned {
    pub(super) fn new(sem: Arc<Semaphore>, n: u64) -> AcquireOwned {
        AcquireOwned {
            sem: Some(sem),
            wait: Wait::new(n),
        }
    }
}

impl Future for AcquireOwned {
    type Output = OwnedPermit;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<OwnedPermit> {
        let me = self.get_mut();
        let Some(sem) = &me.sem else {
            panic!("a semaphore acquire was polled after it completed");
        };
        match me.wait.poll(sem, cx) {
            Poll::Ready(()) => {
                let sem = me.sem.take().expect("checked above");
                Poll::Ready(OwnedPermit::new(sem, me.wait.n))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for AcquireOwned {
    fn drop(&mut self) {
        if let Some(sem) = &self.sem {
            self.wait.cancel(sem);
        }
    }
}

impl fmt::Debug for AcquireOwned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.wait.debug("AcquireOwned", f)
    }
}
