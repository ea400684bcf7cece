//! Timer futures whose names and signatures mirror `tokio::time`, on Node
//! timeouts: a tokio user ports code by changing imports, and every
//! wake-up gets Node's order.
//!
//! # Ground rules
//!
//! - **A [`Sleep`] is a Node timeout**, in the list of its duration rounded
//!   up to whole milliseconds (0 becomes 1 ms, as Node coerces it), created
//!   when [`sleep`] is called (as Node creates the `Timeout` when
//!   `timers/promises`' `setTimeout` is called): it is FIFO with the
//!   `set_timeout` callbacks of the same duration. A deadline already
//!   reached ([`sleep_until`] of the past) is ready at once, with no timer.
//! - **Time is loop time**: an [`Instant`] is a point in the loop's
//!   millisecond clock (real or virtual), so a future never fires before
//!   its deadline in loop time, and on a virtual clock deadlines are exact
//!   in whole loop milliseconds. (A virtual clock moved by a fraction of a
//!   millisecond by hand, [`VirtualClock::advance`](crate::VirtualClock::advance),
//!   leaves loop time at the whole millisecond below, as Node's loop time
//!   is truncated: a sleep made then counts from that millisecond.)
//! - **Dropping** a `Sleep`, [`Timeout`] or [`Interval`] clears its timer
//!   and its ref before anything else runs; nothing is woken afterwards.
//! - **A future outlives its loop** only on another executor (a task's
//!   futures are dropped with the loop): there, once the loop is dropped,
//!   a pending `Sleep`, `Timeout` or `Interval` tick never completes, its
//!   timer gone with the loop and nothing left to fire it (tokio's panic
//!   when polled after their runtime shut down), and a [`go`]/[`dotnet`]
//!   wait is never woken (a [`go`] receive polled after its deadline, or
//!   a [`dotnet`] tick already pending, still returns its value).
//!   Drop the loop last, or the futures first. A socket tells it instead
//!   ([`net`](crate::net): an error), and a `JoinHandle` completes as
//!   cancelled.
//! - **Refs.** A `Sleep` keeps the loop alive while pending, as a refed
//!   timeout does; [`Sleep::set_ref`] opts out (Node's `{ ref: false }`).
//! - These functions work wherever a loop is current on the thread (in
//!   `run`, `block_on`, spawned tasks, callbacks and
//!   [`EventLoop::scope`](crate::EventLoop::scope)); elsewhere they panic
//!   with a message that says so, reported at the caller's line (they are
//!   `#[track_caller]`, as are `task::spawn`, the [`go`] and [`dotnet`]
//!   constructors and `net`'s), as tokio's do.
//! - **Long sleeps** (beyond Node's 2^31-1 ms limit) are long timers, as
//!   `set_timeout` of such a `Duration` is: one timeout of the whole
//!   length (up to [`LONG_MAX_MS`](crate::LONG_MAX_MS); beyond, in legs),
//!   in that length's list; the loop's native timer is armed at
//!   most [`NATIVE_MAX_MS`](crate::NATIVE_MAX_MS) ahead and re-armed (as
//!   .NET does), so they never fire early and never at 1 ms.
//! - [`go`] has Go's `Timer`, `Ticker` and `AfterFunc` (Go 1.23 rules) on
//!   the same Node timeouts; [`dotnet`] has .NET's `Timer` (`Change`) and
//!   `PeriodicTimer`, on one queue per loop.
//!
//! # Missed ticks
//!
//! [`Interval`] follows tokio's rules exactly (first tick at once; a tick
//! is *missed* when it is more than 5 ms late; a zero period panics), but
//! its default [`MissedTickBehavior`] is `Delay`, which is what Node's
//! `setInterval` does with a missed tick. A tick 5 ms late or less is not
//! missed and keeps the grid, where Node's `setInterval` counts every next
//! run from the late one; [`EventLoop::set_interval`](crate::EventLoop::set_interval)
//! has Node's rule exactly.
//!
//! | behaviour | after a late tick | who does this |
//! |---|---|---|
//! | `Burst` | the missed ticks fire back to back, then the original grid | tokio's default |
//! | `Delay` (default) | the next tick is one period after the late one | Node's `setInterval` (for a tick more than 5 ms late) |
//! | `Skip` | the missed ticks are dropped; the next is on the original grid | Go's `Ticker`; .NET's `PeriodicTimer` while less than a period late (more, and .NET's is due 1 ms on) |
//!
//! ```text
//! period 300 ms, ticks at 0 and 300, then the task is busy until 950:
//!   Burst:  0 ... 300 ...... 600(at 950) 900(at 950) 1200 1500 ...
//!   Delay:  0 ... 300 ...... 600(at 950) 1250 1550 ...
//!   Skip:   0 ... 300 ...... 600(at 950) 1200 1500 ...
//! ```
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//! use timerloop::{EventLoop, time};
//! let mut lp = EventLoop::with_virtual_clock();
//! lp.block_on(async {
//!     let start = time::Instant::now();
//!     time::sleep(Duration::from_millis(20)).await; // a Node timeout of 20 ms
//!     let never = time::sleep(Duration::from_secs(1));
//!     let late = time::timeout(Duration::from_millis(5), never).await;
//!     assert!(late.is_err());
//!     let mut iv = time::interval(Duration::from_millis(10));
//!     iv.tick().await; // at once
//!     iv.tick().await; // 10 ms later
//!     assert_eq!(start.elapsed(), Duration::from_millis(35));
//! })
//! .unwrap();
//! ```
#![forbid(unsafe_code)]

pub mod dotnet;
pub mod go;
mod interval;
mod sleep;

pub use interval::{Interval, MissedTickBehavior, interval, interval_at};
pub use sleep::{Immediate, Sleep, immediate, sleep, sleep_until};

use std::fmt;
use std::future::{Future, IntoFuture};
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::timers::current_shared;
use crate::uv::ms_ceil;

/// A point in the current loop's time, in whole milliseconds (real or
/// virtual): `Copy + Ord`, with `Add`/`Sub` of [`Duration`]. Both round
/// the duration up to whole milliseconds: adding never lands early, and
/// subtracting lands at or before the exact time, never after it
/// (`t - 1.5 ms` is `t - 2 ms`), so `(t + d) - d == t` short of
/// saturation. `+` and `-` saturate, at the end of loop time and at zero,
/// where tokio's panic on overflow; [`checked_add`](Instant::checked_add)
/// and [`checked_sub`](Instant::checked_sub) (which round the same way)
/// tell.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time::Instant};
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.block(10);
/// lp.scope(|| {
///     let a = Instant::now();
///     let b = a + Duration::from_micros(1500);
///     assert_eq!(b - a, Duration::from_millis(2));
///     assert!(b > a);
///     assert_eq!(a - Duration::from_micros(1500), a - Duration::from_millis(2));
///     assert_eq!(b - Duration::from_micros(1500), a);
/// });
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    ms: u64,
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Instant({} ms)", self.ms)
    }
}

impl Instant {
    /// The current loop's time: what Node's `getLibuvNow()` reads.
    ///
    /// ```
    /// use timerloop::{EventLoop, time::Instant};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block(7);
    /// let t = lp.scope(Instant::now);
    /// assert_eq!(lp.scope(|| Instant::now() - t).as_millis(), 0);
    /// ```
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    #[track_caller]
    pub fn now() -> Instant {
        Instant {
            ms: current_shared().now_ms(),
        }
    }

    /// The instant at loop time `ms`: the milliseconds since the loop's
    /// clock began, as [`EventLoop::now`](crate::EventLoop::now) counts
    /// them. Callback code keeps time in those; this and
    /// [`as_millis`](Instant::as_millis) carry it to and from task code.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::{self, Instant}};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block(7);
    /// let due = Instant::from_millis(lp.now() + 5); // from a callback's clock
    /// let woke = lp.block_on(async move {
    ///     time::sleep_until(due).await;
    ///     Instant::now()
    /// });
    /// assert_eq!(woke.unwrap(), due);
    /// assert_eq!(due.as_millis(), 12);
    /// ```
    pub fn from_millis(ms: u64) -> Instant {
        Instant { ms }
    }

    /// This instant's loop time: milliseconds since the loop's clock
    /// began, comparable with [`EventLoop::now`](crate::EventLoop::now).
    ///
    /// ```
    /// use timerloop::{EventLoop, time::Instant};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block(3);
    /// assert_eq!(lp.scope(Instant::now).as_millis(), lp.now());
    /// ```
    pub fn as_millis(&self) -> u64 {
        self.ms
    }

    /// The time from `earlier` to `self`, zero if `earlier` is later.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::Instant};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let a = lp.scope(Instant::now);
    /// let b = a + Duration::from_millis(5);
    /// assert_eq!(b.duration_since(a), Duration::from_millis(5));
    /// assert_eq!(a.duration_since(b), Duration::ZERO);
    /// ```
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        Duration::from_millis(self.ms.saturating_sub(earlier.ms))
    }

    /// The same as [`duration_since`](Self::duration_since) (which already
    /// saturates), for tokio compatibility.
    ///
    /// ```
    /// use timerloop::{EventLoop, time::Instant};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let a = lp.scope(Instant::now);
    /// assert_eq!(a.saturating_duration_since(a).as_millis(), 0);
    /// ```
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }

    /// The time from `earlier` to `self`, or `None` if `earlier` is
    /// later (tokio's and std's): where [`duration_since`](Self::duration_since)
    /// says zero, this tells an instant in the future from the same one.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::time::Instant;
    /// let (a, b) = (Instant::from_millis(3), Instant::from_millis(5));
    /// assert_eq!(b.checked_duration_since(a), Some(Duration::from_millis(2)));
    /// assert_eq!(a.checked_duration_since(a), Some(Duration::ZERO));
    /// assert_eq!(a.checked_duration_since(b), None);
    /// ```
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.ms.checked_sub(earlier.ms).map(Duration::from_millis)
    }

    /// The time elapsed since `self` on the current loop's clock.
    ///
    /// ```
    /// use timerloop::{EventLoop, time::Instant};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let a = lp.scope(Instant::now);
    /// lp.block(12);
    /// assert_eq!(lp.scope(|| a.elapsed()).as_millis(), 12);
    /// ```
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    #[track_caller]
    pub fn elapsed(&self) -> Duration {
        Instant::now().duration_since(*self)
    }

    /// `self + d`, or `None` past the end of loop time.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::Instant};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block(1);
    /// let a = lp.scope(Instant::now);
    /// assert!(a.checked_add(Duration::MAX).is_none());
    /// assert!(a.checked_add(Duration::from_secs(1)).is_some());
    /// // From the loop's time 0 too: Duration::MAX is more milliseconds
    /// // than loop time holds.
    /// assert!(Instant::from_millis(0).checked_add(Duration::MAX).is_none());
    /// ```
    pub fn checked_add(&self, d: Duration) -> Option<Instant> {
        self.ms
            .checked_add(ms_ceil_checked(d)?)
            .map(Instant::from_millis)
    }

    /// `self - d`, or `None` before the loop's time began.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time::Instant};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let a = lp.scope(Instant::now);
    /// assert!(a.checked_sub(Duration::from_millis(1)).is_none());
    /// assert!(Instant::from_millis(u64::MAX).checked_sub(Duration::MAX).is_none());
    /// ```
    pub fn checked_sub(&self, d: Duration) -> Option<Instant> {
        self.ms
            .checked_sub(ms_ceil_checked(d)?)
            .map(Instant::from_millis)
    }
}

/// Whole milliseconds of `d`, rounded up; `None` past `u64::MAX` (where
/// [`ms_ceil`] saturates, which would make `0 + Duration::MAX` fit).
fn ms_ceil_checked(d: Duration) -> Option<u64> {
    let part = u64::from(d.subsec_nanos().div_ceil(1_000_000));
    d.as_secs().checked_mul(1000)?.checked_add(part)
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant::from_millis(self.ms.saturating_add(ms_ceil(d)))
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, d: Duration) -> Instant {
        Instant::from_millis(self.ms.saturating_sub(ms_ceil(d)))
    }
}

impl SubAssign<Duration> for Instant {
    fn sub_assign(&mut self, d: Duration) {
        *self = *self - d;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }
}

/// The error of a [`Timeout`] whose deadline came first.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time};
/// let mut lp = EventLoop::with_virtual_clock();
/// let r = lp
///     .block_on(async {
///         time::timeout(Duration::from_millis(5), std::future::pending::<()>()).await
///     })
///     .unwrap();
/// let err = r.unwrap_err();
/// assert_eq!(err.to_string(), "deadline has elapsed");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elapsed(());

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for std::io::Error {
    /// An error of kind [`TimedOut`](std::io::ErrorKind::TimedOut), as
    /// tokio's: `timeout(d, s.read(&mut buf)).await??` works in a
    /// function returning `io::Result`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// async fn read_in_time() -> std::io::Result<usize> {
    ///     let never = std::future::pending::<std::io::Result<usize>>();
    ///     let n = time::timeout(Duration::from_millis(10), never).await??;
    ///     Ok(n)
    /// }
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let e = lp.block_on(read_in_time()).unwrap().unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    /// ```
    fn from(_: Elapsed) -> std::io::Error {
        std::io::ErrorKind::TimedOut.into()
    }
}

/// A period a periodic timer cannot have: zero (after rounding up to whole
/// milliseconds, so only [`Duration::ZERO`] is). Go's `NewTicker` and
/// `Reset` panic on it and .NET's `PeriodicTimer` throws
/// `ArgumentOutOfRangeException`; here it is this error.
///
/// ```
/// use timerloop::time::InvalidPeriod;
/// let e = InvalidPeriod::zero();
/// assert_eq!(e.to_string(), "a periodic timer needs a period of at least 1 ms");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct InvalidPeriod {}

impl InvalidPeriod {
    /// The error for a zero period.
    ///
    /// ```
    /// use timerloop::time::InvalidPeriod;
    /// assert_eq!(InvalidPeriod::zero(), InvalidPeriod::zero());
    /// ```
    pub const fn zero() -> Self {
        InvalidPeriod {}
    }

    /// Checks `period`: `Ok` with its whole milliseconds (rounded up), or
    /// the error for zero.
    pub(crate) fn check(period: Duration) -> Result<u64, InvalidPeriod> {
        match ms_ceil(period) {
            0 => Err(InvalidPeriod::zero()),
            ms => Ok(ms),
        }
    }
}

impl fmt::Display for InvalidPeriod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a periodic timer needs a period of at least 1 ms")
    }
}

impl std::error::Error for InvalidPeriod {}

pin_project_lite::pin_project! {
    /// A future with a deadline, made by [`timeout`] and [`timeout_at`]:
    /// its output is the inner future's, or [`Elapsed`] if the deadline
    /// came first. The inner future is polled first, so one that is ready
    /// at once wins even against a zero duration.
    ///
    /// A future that gets ready at the deadline itself, through a timer it
    /// made after the timeout's (`timeout(d, async { sleep(d).await })`, or
    /// sleeps that add up to `d`), loses: both timers are Node timeouts due
    /// at the same millisecond, the timeout's is older and fires first,
    /// and the task then finds the deadline passed and its future pending,
    /// as Node's `Promise.race` of the two resolves to the older one.
    /// tokio fires every due timer before it polls, and returns the value.
    /// A future whose timer was made before the timeout's wins the tie.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (fast, slow) = lp
    ///     .block_on(async {
    ///         let fast = time::timeout(Duration::ZERO, async { 1 }).await; // polled first: wins
    ///         let never = std::future::pending::<()>();
    ///         let slow = time::timeout(Duration::from_millis(5), never).await;
    ///         (fast, slow)
    ///     })
    ///     .unwrap();
    /// assert_eq!(fast.unwrap(), 1);
    /// assert!(slow.is_err());
    /// assert_eq!(lp.now(), 5);
    /// ```
    #[derive(Debug)]
    #[must_use = "futures do nothing unless awaited"]
    pub struct Timeout<F> {
        #[pin]
        value: F,
        delay: Sleep,
    }
}

impl<F> Timeout<F> {
    /// The inner future.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.scope(|| time::timeout(Duration::from_millis(5), async { 1 }));
    /// let _inner = t.get_ref();
    /// ```
    pub fn get_ref(&self) -> &F {
        &self.value
    }

    /// The inner future, mutably.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut t = lp.scope(|| time::timeout(Duration::from_millis(5), async { 1 }));
    /// let _inner = t.get_mut();
    /// ```
    pub fn get_mut(&mut self) -> &mut F {
        &mut self.value
    }

    /// The inner future, by value (its timer is cleared).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let t = lp.scope(|| time::timeout(Duration::from_millis(5), async { 1 }));
    /// assert_eq!(lp.block_on(t.into_inner()).unwrap(), 1);
    /// ```
    pub fn into_inner(self) -> F {
        self.value
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.project();
        if let Poll::Ready(v) = me.value.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        match Pin::new(me.delay).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed(()))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Requires `future` to complete within `duration` (its deadline is fixed
/// now): a future of `Result<F::Output, Elapsed>`. This is also the
/// acquire-with-timeout of anything awaitable: `future` is anything
/// [`IntoFuture`] (a future, or a request builder that becomes one when
/// awaited), as tokio's. It is turned into its future first, then the
/// deadline's timer is made, so `timeout(d, x)` is `timeout(d,
/// x.into_future())`: a timer that `into_future` makes is the older and
/// wins a tie with the deadline (see [`Timeout`]).
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time};
/// let mut lp = EventLoop::with_virtual_clock();
/// let out = lp.block_on(async {
///     let quick = time::timeout(Duration::from_millis(50), time::sleep(Duration::from_millis(10)));
///     let slow = time::timeout(Duration::from_millis(50), time::sleep(Duration::from_millis(90)));
///     (quick.await.is_ok(), slow.await.is_ok())
/// });
/// assert_eq!(out.unwrap(), (true, false));
/// assert_eq!(lp.now(), 50, "both deadlines were fixed at 0");
/// ```
///
/// # Hostile input
///
/// `future` is polled before the deadline is looked at, so a ready future
/// wins even a zero timeout; zero is 1 ms, as for [`sleep`].
/// [`Duration::MAX`] never elapses on a real clock; on a virtual clock it
/// elapses at the end of loop time, as a [`sleep`] of it does.
///
/// A type that is only [`IntoFuture`]:
///
/// ```
/// use std::future::{IntoFuture, Ready, ready};
/// use std::time::Duration;
/// use timerloop::{EventLoop, time};
/// struct Query(u32);
/// impl IntoFuture for Query {
///     type Output = u32;
///     type IntoFuture = Ready<u32>;
///     fn into_future(self) -> Ready<u32> {
///         ready(self.0 * 2)
///     }
/// }
/// let mut lp = EventLoop::with_virtual_clock();
/// let got = lp.block_on(async { time::timeout(Duration::from_millis(5), Query(21)).await });
/// assert_eq!(got.unwrap(), Ok(42));
/// ```
///
/// # Panics
///
/// If no loop is current on this thread.
#[track_caller]
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    let value = future.into_future();
    Timeout {
        value,
        delay: sleep(duration),
    }
}

/// Requires `future` (anything [`IntoFuture`]) to complete by
/// `deadline`; see [`timeout`].
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time};
/// let mut lp = EventLoop::with_virtual_clock();
/// let r = lp.block_on(async {
///     let at = time::Instant::now() + Duration::from_millis(20);
///     time::timeout_at(at, std::future::pending::<()>()).await
/// });
/// assert!(r.unwrap().is_err());
/// assert_eq!(lp.now(), 20);
/// ```
///
/// A deadline already reached fails on the first poll with [`Elapsed`],
/// unless `future` is ready on that poll.
///
/// # Panics
///
/// If no loop is current on this thread.
#[track_caller]
pub fn timeout_at<F: IntoFuture>(deadline: Instant, future: F) -> Timeout<F::IntoFuture> {
    let value = future.into_future();
    Timeout {
        value,
        delay: sleep_until(deadline),
    }
}
