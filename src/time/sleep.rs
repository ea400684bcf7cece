//! [`Sleep`] and [`Immediate`]: futures on a Node timeout and a Node
//! immediate. Each keeps its loop-side state in an `Rc` shared with the
//! timer or callback that wakes it (a sleep's timeout holds its
//! `Wakeup` itself, no closure). Every operation that needs the loop is
//! queued on the loop's deferred queue, so a future can be made, reset and
//! dropped anywhere, even inside a callback that holds the loop; the one
//! exception, a sleep's arming, runs at once where the loop can be lent and
//! nothing is queued before it (a sleep made in a task's poll), which
//! gives the same timer in the same place.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::Instant;
use crate::task::{store_waker, wake_stored};
use crate::timers::{LoopShared, Wakeup, current_shared, with_current_shared};
use crate::uv::ms_ceil;

/// A future that completes at a deadline, on a Node timeout; made by
/// [`sleep`] and [`sleep_until`].
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time};
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.block_on(async { time::sleep(Duration::from_millis(25)).await })
///     .unwrap();
/// assert_eq!(lp.now(), 25);
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct Sleep {
    pub(crate) entry: Rc<Wakeup>,
}

impl fmt::Debug for Sleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sleep")
            .field("deadline", &self.deadline())
            .field("elapsed", &self.is_elapsed())
            .finish_non_exhaustive()
    }
}

/// Waits until `duration` has passed in loop time: a Node timeout in the
/// list of `duration` rounded up to whole milliseconds (0 is 1 ms, as in
/// Node), created now, so FIFO with `set_timeout` callbacks of that
/// duration. Its start is the loop's millisecond clock, so on a real clock
/// it can end up to 1 ms short of `duration` in real time, as Node's
/// timeouts do (tokio rounds its deadline up instead).
///
/// ```
/// use std::{cell::RefCell, rc::Rc, time::Duration};
/// use timerloop::{EventLoop, time};
/// let log = Rc::new(RefCell::new(Vec::new()));
/// let mut lp = EventLoop::with_virtual_clock();
/// let l = log.clone();
/// lp.set_timeout(10, move |_| l.borrow_mut().push("timeout before"));
/// let l = log.clone();
/// lp.spawn(async move {
///     time::sleep(Duration::from_millis(10)).await;
///     l.borrow_mut().push("sleep");
/// });
/// lp.run().unwrap();
/// assert_eq!(*log.borrow(), ["timeout before", "sleep"]);
/// ```
///
/// # Hostile input
///
/// [`Duration::MAX`] is the longest timer, not an overflow: the deadline
/// saturates at the end of loop time (`u64::MAX` ms), so on a real clock
/// the sleep never completes and on a virtual clock, alone, it completes
/// when the clock jumps there. A sleep made there (its deadline saturates
/// at now) completes at the next timers pass, not at once, so a task
/// that sleeps in a loop still gives the loop back.
///
/// # Panics
///
/// If no loop is current on this thread.
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    let ms = ms_ceil(duration).max(1);
    Sleep::new(|now| now.saturating_add(ms))
}

/// Waits until `deadline`; ready at once if it has passed (no timer).
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time};
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.block_on(async {
///     let at = time::Instant::now() + Duration::from_millis(40);
///     time::sleep_until(at).await;
///     time::sleep_until(at).await; // already reached: no wait
/// })
/// .unwrap();
/// assert_eq!(lp.now(), 40);
/// ```
///
/// A deadline in the past (however far: `Instant - Duration::MAX`
/// saturates at the loop's time 0) or equal to now is ready on the first
/// poll, and no timer is made; except at the end of loop time
/// (`u64::MAX` ms), where it waits for the next timers pass (see
/// [`sleep`]).
///
/// # Panics
///
/// If no loop is current on this thread.
#[track_caller]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(|_| deadline.as_millis())
}

impl Sleep {
    /// A sleep on the current loop until `deadline(now)` (loop time),
    /// armed. Its state is made (or taken from the pool) while the current
    /// loop's shared state is borrowed, not cloned; the clock, which may be
    /// the user's, is read after.
    #[track_caller]
    fn new(deadline: impl FnOnce(u64) -> u64) -> Sleep {
        let entry = with_current_shared(Wakeup::new);
        let now = entry.shared.now_ms();
        entry.deadline.set(deadline(now));
        entry.schedule(now);
        Sleep { entry }
    }

    /// The instant the sleep completes at.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.scope(|| {
    ///     let s = time::sleep(Duration::from_millis(3));
    ///     assert_eq!(s.deadline() - time::Instant::now(), Duration::from_millis(3));
    /// });
    /// ```
    pub fn deadline(&self) -> Instant {
        Instant::from_millis(self.entry.deadline.get())
    }

    /// Whether the deadline has been reached (the timer fired). A sleep
    /// made (or reset) with its deadline already reached is elapsed from
    /// the start, before any poll (tokio's is not until polled).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let s = lp.scope(|| time::sleep(Duration::from_millis(3)));
    /// assert!(!s.is_elapsed());
    /// lp.run().unwrap();
    /// assert!(s.is_elapsed());
    /// ```
    pub fn is_elapsed(&self) -> bool {
        self.entry.fired.get()
    }

    /// Moves the deadline to `deadline`, counted from now: the old timer is
    /// cleared and a new one made (at the back of its duration's list).
    /// Works on an elapsed `Sleep` too. A deadline already reached makes
    /// the sleep elapsed at once and wakes the task waiting on it, if one
    /// polled it (it may be another task, sharing the sleep), as tokio's
    /// `reset` does; at the end of loop time it waits for the next timers
    /// pass instead (see [`sleep`]).
    ///
    /// ```
    /// use std::{pin::pin, time::Duration};
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block_on(async {
    ///     let mut s = pin!(time::sleep(Duration::from_millis(10)));
    ///     s.as_mut().reset(time::Instant::now() + Duration::from_millis(50));
    ///     s.await;
    /// })
    /// .unwrap();
    /// assert_eq!(lp.now(), 50);
    /// ```
    ///
    /// Like polling, it works away from the sleep's loop too: it reads and
    /// re-arms the loop the sleep was made on.
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        self.reset_waking(deadline, true);
    }

    /// [`reset`](Self::reset). `wake`: a deadline already reached wakes
    /// the task waiting on the sleep (its latest poll's), as tokio's
    /// `reset` does: the sleep may be shared, and another task or a
    /// callback reset it. Off where the caller is that poll itself
    /// ([`Interval`](super::Interval)'s next tick; tokio's
    /// `reset_without_reregister`).
    pub(crate) fn reset_waking(self: Pin<&mut Self>, deadline: Instant, wake: bool) {
        let e = &self.entry;
        let now = e.shared.now_ms();
        e.deadline.set(deadline.as_millis());
        e.fired.set(false);
        let old = e.clone();
        e.shared.defer(move |lp| old.disarm(lp));
        e.schedule(now);
        if wake {
            e.wake_if_reached();
        }
    }

    /// Whether the sleep keeps the loop alive while pending (by default it
    /// does, as a refed timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let s = lp.scope(|| time::sleep(Duration::from_secs(5)));
    /// assert!(s.has_ref());
    /// ```
    pub fn has_ref(&self) -> bool {
        self.entry.refed.get()
    }

    /// Makes the sleep keep the loop alive (`true`, the default) or not
    /// (`false`: Node's `{ ref: false }`, `timeout.unref()`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let s = lp.scope(|| time::sleep(Duration::from_secs(5)));
    /// s.set_ref(false);
    /// lp.run().unwrap(); // returns at once: nothing refed is left
    /// assert_eq!(lp.now(), 0);
    /// ```
    pub fn set_ref(&self, refed: bool) {
        self.entry.set_ref(refed);
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let e = &self.entry;
        if e.fired.get() {
            return Poll::Ready(());
        }
        e.store_waker(cx.waker());
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        let e = &self.entry;
        if e.fired.get() && e.timer.get().is_none() {
            // The waker goes with the state, pooled or not.
            Wakeup::recycle(e);
            return;
        }
        drop(e.waker.take());
        let me = e.clone();
        e.shared.defer(move |lp| me.disarm(lp));
    }
}

/// What an [`Immediate`] shares with its callback.
struct ImmediateEntry {
    fired: Cell<bool>,
    waker: RefCell<Option<Waker>>,
    handle: Cell<Option<crate::Immediate>>,
}

/// A future that completes in the loop's next check phase (Node's
/// `await setImmediate()`); made by [`immediate`].
///
/// # Examples
///
/// ```
/// use timerloop::{EventLoop, time};
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.block_on(async { time::immediate().await }).unwrap(); // the next check phase
/// assert_eq!(lp.now(), 0);
/// ```
#[must_use = "futures do nothing unless awaited"]
pub struct Immediate {
    entry: Rc<ImmediateEntry>,
    shared: Rc<LoopShared>,
}

impl fmt::Debug for Immediate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Immediate")
            .field("fired", &self.entry.fired.get())
            .finish_non_exhaustive()
    }
}

/// Waits for the loop's next check phase: an immediate made now, FIFO with
/// `set_immediate` callbacks (Node's `await setImmediate()`).
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use timerloop::{EventLoop, time};
/// let log = Rc::new(RefCell::new(Vec::new()));
/// let mut lp = EventLoop::with_virtual_clock();
/// let l = log.clone();
/// lp.spawn(async move {
///     time::immediate().await;
///     l.borrow_mut().push("after check");
/// });
/// let l = log.clone();
/// lp.set_timeout(0, move |_| l.borrow_mut().push("timeout"));
/// lp.run().unwrap();
/// // The timer is not due in the pre-loop pass (virtual time stands still),
/// // so the check phase comes first.
/// assert_eq!(*log.borrow(), ["after check", "timeout"]);
/// ```
///
/// # Panics
///
/// If no loop is current on this thread.
#[track_caller]
pub fn immediate() -> Immediate {
    let shared = current_shared();
    let entry = Rc::new(ImmediateEntry {
        fired: Cell::new(false),
        waker: RefCell::new(None),
        handle: Cell::new(None),
    });
    let me = entry.clone();
    shared.defer(move |lp| {
        let fire = me.clone();
        let h = lp.set_immediate(move |_| {
            fire.handle.set(None);
            fire.fired.set(true);
            wake_stored(&fire.waker);
        });
        me.handle.set(Some(h));
    });
    Immediate { entry, shared }
}

impl Future for Immediate {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.entry.fired.get() {
            return Poll::Ready(());
        }
        store_waker(&mut self.entry.waker.borrow_mut(), cx.waker());
        Poll::Pending
    }
}

impl Drop for Immediate {
    fn drop(&mut self) {
        self.entry.waker.borrow_mut().take();
        if self.entry.fired.get() {
            return;
        }
        let me = self.entry.clone();
        self.shared.defer(move |lp| {
            if let Some(h) = me.handle.take() {
                let _ = lp.clear_immediate(h);
            }
        });
    }
}
