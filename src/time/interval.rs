//! [`Interval`]: tokio's `Interval`, its rules exactly, on a [`Sleep`]
//! (a Node timeout), with `Delay` as the default missed-tick behaviour.

use std::future::poll_fn;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::{Instant, Sleep, sleep_until};
use crate::uv::ms_ceil;

/// How late a tick may be before it counts as missed (tokio's threshold).
const MISSED_AFTER_MS: u64 = 5;

/// What an [`Interval`] does with ticks it could not deliver on time; see
/// the [module docs](super) for a timeline of each.
///
/// ```
/// use timerloop::time::MissedTickBehavior;
/// assert_eq!(MissedTickBehavior::default(), MissedTickBehavior::Delay);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissedTickBehavior {
    /// Fire the missed ticks back to back, then keep the original grid
    /// (tokio's default).
    Burst,
    /// The next tick is one period after the late one (the default here).
    /// This is Node's `setInterval` rule for a tick that counts as missed,
    /// more than 5 ms late (tokio's threshold); a tick 5 ms late or less
    /// keeps the grid, where Node's `setInterval` always counts its next
    /// run from the late one. For Node's rule exactly, use
    /// [`EventLoop::set_interval`](crate::EventLoop::set_interval).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let ms = Duration::from_millis;
    /// let at = lp
    ///     .block_on(async move {
    ///         let mut iv = time::interval(ms(10));
    ///         let mut at = Vec::new();
    ///         let now = || time::Instant::now().as_millis();
    ///         iv.tick().await; // at once, at 0
    ///         time::sleep(ms(13)).await; // busy: the tick due at 10 is 3 ms late
    ///         iv.tick().await;
    ///         at.push(now());
    ///         iv.tick().await; // not missed: the grid holds
    ///         at.push(now());
    ///         time::sleep(ms(16)).await; // busy: the tick due at 30 is 6 ms late
    ///         iv.tick().await;
    ///         at.push(now());
    ///         iv.tick().await; // missed: one period after the late tick
    ///         at.push(now());
    ///         at
    ///     })
    ///     .unwrap();
    /// assert_eq!(at, [13, 20, 36, 46]);
    /// ```
    #[default]
    Delay,
    /// Drop the missed ticks; the next tick is on the original grid (like
    /// Go's `Ticker`; .NET's `PeriodicTimer` keeps its grid only while less
    /// than a period late, and is due 1 ms on after that).
    Skip,
}

impl MissedTickBehavior {
    /// The next deadline after a tick scheduled at `timeout` was delivered
    /// late, at `now`.
    fn next_timeout(self, timeout: u64, now: u64, period: u64) -> u64 {
        match self {
            MissedTickBehavior::Burst => timeout.saturating_add(period),
            MissedTickBehavior::Delay => now.saturating_add(period),
            MissedTickBehavior::Skip => now.saturating_add(period) - ((now - timeout) % period),
        }
    }
}

/// A stream of ticks, one every `period`; made by [`interval`] and
/// [`interval_at`]. Its first tick is at once (at the start instant).
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time};
/// let mut lp = EventLoop::with_virtual_clock();
/// let ticks = lp
///     .block_on(async {
///         let mut iv = time::interval(Duration::from_millis(10));
///         let mut at = Vec::new();
///         for _ in 0..3 {
///             iv.tick().await;
///             at.push(time::Instant::now());
///         }
///         at
///     })
///     .unwrap();
/// assert_eq!(ticks[2] - ticks[0], Duration::from_millis(20));
/// ```
#[derive(Debug)]
pub struct Interval {
    delay: Sleep,
    period: u64,
    missed_tick_behavior: MissedTickBehavior,
}

/// An interval whose first tick is now, then one every `period`.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time};
/// let mut lp = EventLoop::with_virtual_clock();
/// let iv = lp.scope(|| time::interval(Duration::from_millis(100)));
/// assert_eq!(iv.period(), Duration::from_millis(100));
/// ```
///
/// # Hostile input
///
/// A zero period panics, as tokio's `interval` does: an interval of 0
/// would tick without end in one instant. (Node's `setInterval(f, 0)`
/// runs every 1 ms; use `interval(Duration::from_millis(1))` for that, or
/// [`EventLoop::set_interval`](crate::EventLoop::set_interval).) A period
/// under 1 ms rounds up to 1 ms; [`Duration::MAX`] ticks once, at once,
/// and then at the end of loop time (`u64::MAX` ms: never on a real
/// clock). There, where every deadline saturates, an interval ticks once
/// per timers pass, as Node's `setInterval` runs there.
///
/// # Panics
///
/// If `period` is zero, and if no loop is current on this thread.
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    interval_at(Instant::now(), period)
}

/// An interval whose first tick is at `start`, then one every `period`.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, time};
/// let mut lp = EventLoop::with_virtual_clock();
/// let first = lp
///     .block_on(async {
///         let start = time::Instant::now() + Duration::from_millis(30);
///         let mut iv = time::interval_at(start, Duration::from_millis(10));
///         iv.tick().await
///     })
///     .unwrap();
/// assert_eq!(lp.now(), 30);
/// # let _ = first;
/// ```
///
/// A `start` in the past makes the first tick due at once (it returns
/// `start`); later ticks follow the [`MissedTickBehavior`].
///
/// # Panics
///
/// If `period` is zero, and if no loop is current on this thread.
#[track_caller]
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(period > Duration::ZERO, "`period` must be non-zero.");
    Interval {
        delay: sleep_until(start),
        period: ms_ceil(period),
        missed_tick_behavior: MissedTickBehavior::default(),
    }
}

impl Interval {
    /// Completes at the next tick, returning the instant it was scheduled
    /// for (not when it was delivered). Cancel-safe: dropping the future
    /// loses no tick.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block_on(async {
    ///     let mut iv = time::interval(Duration::from_millis(5));
    ///     let a = iv.tick().await;
    ///     let b = iv.tick().await;
    ///     assert_eq!(b - a, Duration::from_millis(5));
    /// })
    /// .unwrap();
    /// ```
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick; only the waker of the latest poll is woken.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut iv = lp.scope(|| time::interval(Duration::from_millis(5)));
    /// let mut t = tokio_test::task::spawn(());
    /// lp.scope(|| t.enter(|cx, _| assert!(iv.poll_tick(cx).is_ready())));
    /// lp.scope(|| t.enter(|cx, _| assert!(iv.poll_tick(cx).is_pending())));
    /// ```
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        if Pin::new(&mut self.delay).poll(cx).is_pending() {
            return Poll::Pending;
        }
        let timeout = self.delay.deadline().as_millis();
        let now = self.now_ms();
        let next = if now > timeout.saturating_add(MISSED_AFTER_MS) {
            self.missed_tick_behavior
                .next_timeout(timeout, now, self.period)
        } else {
            timeout.saturating_add(self.period)
        };
        // The caller is the task to wake: no wake (the next tick is due
        // at once after a missed one, under `Burst`).
        Pin::new(&mut self.delay).reset_waking(Instant::from_millis(next), false);
        Poll::Ready(Instant::from_millis(timeout))
    }

    /// The time of the interval's own loop (not the thread's current one:
    /// an interval polled or reset away from its loop, by hand or on
    /// another executor, reads the loop it was made on, as its sleep does).
    fn now_ms(&self) -> u64 {
        self.delay.entry.shared.now_ms()
    }

    /// Restarts the period from now: the next tick is one period away.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block_on(async {
    ///     let mut iv = time::interval(Duration::from_millis(10));
    ///     iv.tick().await; // at 0
    ///     time::sleep(Duration::from_millis(4)).await;
    ///     iv.reset();
    ///     iv.tick().await; // at 14
    /// })
    /// .unwrap();
    /// assert_eq!(lp.now(), 14);
    /// ```
    pub fn reset(&mut self) {
        let next = self.now_ms().saturating_add(self.period);
        self.reset_to(next);
    }

    /// The next tick is now.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block_on(async {
    ///     let mut iv = time::interval(Duration::from_millis(10));
    ///     iv.tick().await;
    ///     iv.reset_immediately();
    ///     iv.tick().await; // no wait
    /// })
    /// .unwrap();
    /// assert_eq!(lp.now(), 0);
    /// ```
    pub fn reset_immediately(&mut self) {
        self.reset_to(self.now_ms());
    }

    /// The next tick is `after` from now.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block_on(async {
    ///     let mut iv = time::interval(Duration::from_millis(10));
    ///     iv.tick().await;
    ///     iv.reset_after(Duration::from_millis(3));
    ///     iv.tick().await;
    /// })
    /// .unwrap();
    /// assert_eq!(lp.now(), 3);
    /// ```
    pub fn reset_after(&mut self, after: Duration) {
        let next = self.now_ms().saturating_add(ms_ceil(after));
        self.reset_to(next);
    }

    /// The next tick is at `deadline` (at once if it has passed; the
    /// missed-tick behaviour then decides the one after).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block_on(async {
    ///     let mut iv = time::interval(Duration::from_millis(10));
    ///     iv.tick().await;
    ///     iv.reset_at(time::Instant::now() + Duration::from_millis(7));
    ///     iv.tick().await;
    /// })
    /// .unwrap();
    /// assert_eq!(lp.now(), 7);
    /// ```
    pub fn reset_at(&mut self, deadline: Instant) {
        self.reset_to(deadline.as_millis());
    }

    fn reset_to(&mut self, ms: u64) {
        Pin::new(&mut self.delay).reset(Instant::from_millis(ms));
    }

    /// The missed-tick behaviour.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let iv = lp.scope(|| time::interval(Duration::from_millis(10)));
    /// assert_eq!(iv.missed_tick_behavior(), time::MissedTickBehavior::Delay);
    /// ```
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed_tick_behavior
    }

    /// Sets the missed-tick behaviour.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut iv = lp.scope(|| time::interval(Duration::from_millis(10)));
    /// iv.set_missed_tick_behavior(time::MissedTickBehavior::Burst);
    /// assert_eq!(iv.missed_tick_behavior(), time::MissedTickBehavior::Burst);
    /// ```
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed_tick_behavior = behavior;
    }

    /// The period.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let iv = lp.scope(|| time::interval(Duration::from_micros(1500)));
    /// assert_eq!(iv.period(), Duration::from_millis(2), "whole milliseconds, rounded up");
    /// ```
    pub fn period(&self) -> Duration {
        Duration::from_millis(self.period)
    }

    /// Whether the interval keeps the loop alive while it waits for its
    /// next tick (by default it does, as Node's `setInterval`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let iv = lp.scope(|| time::interval(Duration::from_millis(10)));
    /// assert!(iv.has_ref());
    /// ```
    pub fn has_ref(&self) -> bool {
        self.delay.has_ref()
    }

    /// Makes the interval keep the loop alive (`true`, the default) or not
    /// (`false`: Node's `interval.unref()`, or `timers/promises`'
    /// `setInterval(ms, value, { ref: false })`). The choice holds for
    /// every tick that follows, across resets, until changed again. A task
    /// waiting on an unrefed interval does not keep the loop running: the
    /// loop returns once nothing refed is left, as Node's process exits.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc, time::Duration};
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let ticks = Rc::new(RefCell::new(Vec::new()));
    /// let t = ticks.clone();
    /// lp.spawn(async move {
    ///     // housekeeping that must not keep the program alive
    ///     let mut iv = time::interval(Duration::from_millis(10));
    ///     iv.set_ref(false);
    ///     loop {
    ///         iv.tick().await;
    ///         t.borrow_mut().push(time::Instant::now().as_millis());
    ///     }
    /// });
    /// lp.set_timeout(35, |_| {}); // the program's real work
    /// lp.run().unwrap();
    /// assert_eq!(*ticks.borrow(), [0, 10, 20, 30]);
    /// assert_eq!(lp.now(), 35); // the interval did not keep it running
    /// ```
    pub fn set_ref(&self, refed: bool) {
        self.delay.set_ref(refed);
    }
}
