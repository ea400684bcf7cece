//! Clocks: where the loop's time comes from, and what "waiting" means.
//!
//! The loop never reads a clock directly except through [`Clock`]. It caches
//! the reading in whole milliseconds (libuv's `loop->time`) and refreshes it
//! only at the points libuv does. Two clocks come with the crate:
//!
//! - [`SystemClock`]: the monotonic clock ([`std::time::Instant`]); waiting
//!   for the next timer really sleeps in the poller.
//! - [`VirtualClock`]: time moves only when told to ([`VirtualClock::advance`]),
//!   by [`Clock::block`], or when the loop would otherwise wait, in which case
//!   it jumps straight to the deadline it would have waited for. A program
//!   driven by a virtual clock gives the same order every run and finishes
//!   at once, whatever the machine's speed.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A source of monotonic time for the loop.
///
/// Implement it to drive a loop from your own notion of time; most programs
/// use [`SystemClock`] or [`VirtualClock`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use timerloop::{Clock, EventLoop, VirtualClock};
/// let clock = VirtualClock::new();
/// let mut lp = EventLoop::with_clock(clock.clone()); // any Clock
/// lp.set_timeout(5, |_| {});
/// lp.run().unwrap();
/// assert_eq!(clock.now(), Duration::from_millis(5)); // the loop moved it
/// ```
pub trait Clock: fmt::Debug + 'static {
    /// Time elapsed since the clock's origin. Must never decrease.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{Clock, SystemClock};
    /// let c = SystemClock::new();
    /// let a = c.now();
    /// assert!(c.now() >= a); // never decreases
    /// ```
    fn now(&self) -> Duration;

    /// [`now`](Clock::now) in whole milliseconds, rounded down: what the
    /// loop reads on every timer insert (`uv_update_time`). The default
    /// converts [`now`](Clock::now); a clock that counts in integer units
    /// can answer without building a `Duration`. It must equal the default.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{Clock, VirtualClock};
    /// let v = VirtualClock::new();
    /// v.advance(Duration::from_micros(2_999));
    /// assert_eq!(v.now_ms(), 2); // rounded down, as libuv's uv_now
    /// ```
    fn now_ms(&self) -> u64 {
        ms_floor(self.now())
    }

    /// The loop's poll phase would block until `deadline` (a [`Clock::now`]
    /// value; `None` means "until an event arrives"). Returns how long the
    /// poller may really block: the real clock answers the time left, a
    /// virtual clock moves itself to `deadline` and answers zero.
    ///
    /// `work_in_flight` is true while some other thread owes the loop a
    /// completion; a virtual clock then waits for it for real instead of
    /// moving time, so that such work takes no virtual time.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{Clock, SystemClock, VirtualClock};
    /// let ms = Duration::from_millis;
    /// let v = VirtualClock::new();
    /// assert_eq!(v.wait_until(Some(ms(7)), false), Some(Duration::ZERO));
    /// assert_eq!(v.now(), ms(7)); // it moved to the deadline
    /// let s = SystemClock::new();
    /// let left = s.wait_until(Some(s.now() + ms(1000)), false).unwrap();
    /// assert!(left <= ms(1000)); // the real clock answers the time left
    /// ```
    fn wait_until(&self, deadline: Option<Duration>, work_in_flight: bool) -> Option<Duration>;

    /// Lets `d` pass on the calling thread, as a busy callback would: the
    /// real clock spins, a virtual clock advances.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{Clock, VirtualClock};
    /// let v = VirtualClock::new();
    /// v.block(Duration::from_millis(3)); // no real waiting
    /// assert_eq!(v.now(), Duration::from_millis(3));
    /// ```
    fn block(&self, d: Duration);

    /// Whether this clock is virtual (time moves only when told to).
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{Clock, SystemClock, VirtualClock};
    /// assert!(VirtualClock::new().is_virtual());
    /// assert!(!SystemClock::new().is_virtual());
    /// ```
    fn is_virtual(&self) -> bool {
        false
    }
}

/// The monotonic system clock, read through `quanta`: the CPU's time-stamp
/// counter, calibrated against the OS's monotonic clock, where the counter
/// is invariant (cheaper than `clock_gettime`, which was about 40% of a
/// `refresh` on this crate's benchmark VM; every `set_timeout` and
/// `refresh` reads the clock, as Node's `getLibuvNow()` does), and the OS
/// clock itself where it is not. The loop's time never goes backwards (it keeps the largest reading
/// it has seen), and a timer is due only when this clock says so: the
/// poll phase waits again if the OS woke it a little before.
///
/// # Examples
///
/// ```
/// use timerloop::{Clock, SystemClock};
/// let c = SystemClock::new();
/// let a = c.now();
/// assert!(c.now() >= a);
/// ```
#[derive(Clone, Debug)]
pub struct SystemClock {
    clock: quanta::Clock,
    origin: u64,
}

impl SystemClock {
    /// A clock whose origin is now.
    ///
    /// ```
    /// use timerloop::{Clock, SystemClock};
    /// assert!(SystemClock::new().now() < std::time::Duration::from_secs(1));
    /// ```
    pub fn new() -> Self {
        let clock = quanta::Clock::new();
        let origin = clock.raw();
        SystemClock { clock, origin }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.clock.delta(self.origin, self.clock.raw())
    }

    fn now_ms(&self) -> u64 {
        nanos_to_ms_floor(self.clock.delta_as_nanos(self.origin, self.clock.raw()))
    }

    fn wait_until(&self, deadline: Option<Duration>, _work_in_flight: bool) -> Option<Duration> {
        deadline.map(|d| d.saturating_sub(self.now()))
    }

    fn block(&self, d: Duration) {
        let end = Instant::now() + d;
        while Instant::now() < end {
            std::hint::spin_loop();
        }
    }
}

/// One loop's reading of a [`SystemClock`] in whole milliseconds, with the
/// range of raw counter values known to give the same reading: a read
/// inside that range is the counter read and two comparisons, without the
/// scaling to nanoseconds and the division (most of the cost of a clock
/// read, which every `set_timeout` and `refresh` makes).
///
/// Exact, not approximate: it answers what [`SystemClock::now_ms`] would
/// answer for the same counter value. The scaling is linear,
/// `ns(d) = floor(d * m)` for a counter delta `d` and a fixed factor `m`;
/// probing it once at `P` gives `m <= (ns(P) + 1) / P`, so every delta
/// below `B * P / (ns(P) + 1)` reads below `B` nanoseconds. The range ends
/// there for `B` the next millisecond's first nanosecond (a hair before
/// the true boundary, never after it), and starts at the counter value it
/// was filled from (below that, nothing is known).
#[derive(Debug)]
pub(crate) struct MsCache {
    clock: quanta::Clock,
    origin: u64,
    /// `ns(PROBE) + 1`.
    probe_ns: u64,
    /// Raw counter values in `lo..hi` read `ms`.
    lo: u64,
    hi: u64,
    ms: u64,
}

impl MsCache {
    /// The probe delta: large enough that the bound loses nothing that
    /// matters (a relative 1e-12), small enough that `ns` cannot overflow.
    const PROBE: u64 = 1 << 40;

    /// A cache for `clock`, empty.
    pub(crate) fn new(clock: &SystemClock) -> Self {
        let probe_ns = clock.clock.delta_as_nanos(0, Self::PROBE).saturating_add(1);
        MsCache {
            clock: clock.clock.clone(),
            origin: clock.origin,
            probe_ns,
            lo: 0,
            hi: 0,
            ms: 0,
        }
    }

    /// [`SystemClock::now_ms`], from the cache when the counter is in range.
    #[inline]
    pub(crate) fn now_ms(&mut self) -> u64 {
        self.ms_at(self.clock.raw())
    }

    /// The reading for counter value `raw`.
    #[inline]
    fn ms_at(&mut self, raw: u64) -> u64 {
        if self.lo <= raw && raw < self.hi {
            return self.ms;
        }
        self.fill(raw)
    }

    #[cold]
    fn fill(&mut self, raw: u64) -> u64 {
        let ns = self.clock.delta_as_nanos(self.origin, raw);
        let ms = nanos_to_ms_floor(ns);
        if raw < self.origin || ms == u64::MAX {
            // Before the origin, or at the end of time: nothing to cache.
            (self.lo, self.hi) = (0, 0);
            return ms;
        }
        let next_ns = (u128::from(ms) + 1) * 1_000_000;
        let span = next_ns * u128::from(Self::PROBE) / u128::from(self.probe_ns);
        let hi = u128::from(self.origin) + span;
        self.lo = raw;
        self.hi = u64::try_from(hi).unwrap_or(u64::MAX);
        self.ms = ms;
        ms
    }
}

/// Why a [`VirtualClock`] refused to move.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use timerloop::{ClockError, VirtualClock};
/// let c = VirtualClock::new();
/// c.advance(Duration::from_millis(5));
/// assert_eq!(
///     c.set(Duration::from_millis(2)),
///     Err(ClockError::Backwards {
///         now: Duration::from_millis(5),
///         requested: Duration::from_millis(2),
///     })
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockError {
    /// The requested time is before the clock's current time; monotonic
    /// clocks never go backwards.
    Backwards {
        /// The clock's time when asked.
        now: Duration,
        /// The time that was asked for.
        requested: Duration,
    },
}

impl fmt::Display for ClockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClockError::Backwards { now, requested } => write!(
                f,
                "virtual clock cannot go backwards from {now:?} to {requested:?}; \
                 use advance() to move it forwards"
            ),
        }
    }
}

impl std::error::Error for ClockError {}

/// A clock that moves only when told to, or when the loop would wait.
///
/// Clones share one time, so a test can keep a clone and advance the clock
/// of a loop that owns another. The clock is `Send + Sync`.
///
/// Work in flight on other threads ([`Completion`](crate::Completion)s)
/// takes no virtual time: the poll phase waits for it in real time. So a
/// worker must not wait for the loop to make progress before completing;
/// on a virtual clock that deadlocks (on the real clock the loop would
/// carry on).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use timerloop::{Clock, VirtualClock};
/// let c = VirtualClock::new();
/// c.advance(Duration::from_millis(5));
/// assert_eq!(c.now(), Duration::from_millis(5));
/// assert!(c.set(Duration::from_millis(1)).is_err());
/// ```
#[derive(Clone, Debug, Default)]
pub struct VirtualClock {
    nanos: Arc<AtomicU64>,
}

fn to_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// [`ms_floor`] of `Duration::from_nanos(n)`, without the `Duration`.
fn nanos_to_ms_floor(n: u64) -> u64 {
    // u64::MAX ns is the end of time, which stays the end of time in ms.
    if n == u64::MAX {
        u64::MAX
    } else {
        n / 1_000_000
    }
}

/// Whole milliseconds of a clock reading, rounded down: the loop time of
/// that reading (libuv's `uv__hrtime(FAST) / 1e6`). The crate's one
/// conversion from a clock reading to loop time.
///
/// A reading at the end of a clock's range (a saturated [`VirtualClock`],
/// `u64::MAX` ns) is the end of time, `u64::MAX`: every deadline has
/// passed, so a loop never waits for one its clock cannot reach.
pub(crate) fn ms_floor(d: Duration) -> u64 {
    if d >= Duration::from_nanos(u64::MAX) {
        return u64::MAX;
    }
    // Below u64::MAX ns, the milliseconds always fit. (No u128 division:
    // this runs on every clock read, and that is a library call.)
    d.as_secs() * 1000 + u64::from(d.subsec_millis())
}

/// Whole milliseconds of a duration, rounded up, saturating at `u64::MAX`:
/// the crate's one conversion from a user's [`Duration`] to a delay, so
/// that a `Duration` timer never fires early.
pub(crate) fn ms_ceil(d: Duration) -> u64 {
    let part = u64::from(d.subsec_nanos().div_ceil(1_000_000));
    d.as_secs().saturating_mul(1000).saturating_add(part)
}

impl VirtualClock {
    /// A virtual clock at time zero.
    ///
    /// ```
    /// use timerloop::{Clock, VirtualClock};
    /// assert_eq!(VirtualClock::new().now(), std::time::Duration::ZERO);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock forwards by `d` (saturating at about 584 years).
    /// Every clone moves with it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{Clock, VirtualClock};
    /// let c = VirtualClock::new();
    /// let seen_by_a_loop = c.clone();
    /// c.advance(Duration::from_millis(3));
    /// assert_eq!(seen_by_a_loop.now(), Duration::from_millis(3));
    /// ```
    pub fn advance(&self, d: Duration) {
        let d = to_nanos(d);
        // fetch_update cannot fail with a closure that always returns Some.
        let _ = self
            .nanos
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                Some(n.saturating_add(d))
            });
    }

    /// Moves the clock to `t`, which must not be before its current time.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{Clock, ClockError, VirtualClock};
    /// let c = VirtualClock::new();
    /// c.set(Duration::from_millis(10)).unwrap();
    /// let err = c.set(Duration::from_millis(4)).unwrap_err();
    /// assert!(matches!(err, ClockError::Backwards { .. }));
    /// assert_eq!(c.now(), Duration::from_millis(10));
    /// ```
    ///
    /// # Errors
    ///
    /// [`ClockError::Backwards`] if `t` is earlier than now; the clock is
    /// left unchanged.
    pub fn set(&self, t: Duration) -> Result<(), ClockError> {
        let want = to_nanos(t);
        self.nanos
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (want >= n).then_some(want)
            })
            .map(|_| ())
            .map_err(|n| ClockError::Backwards {
                now: Duration::from_nanos(n),
                requested: t,
            })
    }

    fn advance_to(&self, t: Duration) {
        self.nanos.fetch_max(to_nanos(t), Ordering::SeqCst);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::SeqCst))
    }

    fn now_ms(&self) -> u64 {
        nanos_to_ms_floor(self.nanos.load(Ordering::SeqCst))
    }

    fn wait_until(&self, deadline: Option<Duration>, work_in_flight: bool) -> Option<Duration> {
        match deadline {
            _ if work_in_flight => None,
            Some(t) => {
                self.advance_to(t);
                Some(Duration::ZERO)
            }
            None => None,
        }
    }

    fn block(&self, d: Duration) {
        self.advance(d);
    }

    fn is_virtual(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ms_cache_reads_what_the_clock_reads() {
        let sys = SystemClock::new();
        let mut cache = MsCache::new(&sys);
        let exact = |raw: u64| nanos_to_ms_floor(sys.clock.delta_as_nanos(sys.origin, raw));
        // Counter values around many millisecond boundaries, in small and
        // large steps, forwards and (never expected, still exact) back.
        let mut raw = sys.origin;
        let mut s = 7_u64;
        let mut hits = 0;
        for i in 0..200_000_u64 {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let step = match i % 4 {
                0 => s >> 62,
                1 => s >> 50,
                2 => s >> 44,
                _ => s >> 40,
            };
            raw = if i % 997 == 0 {
                raw.saturating_sub(step)
            } else {
                raw.saturating_add(step)
            };
            let in_range = cache.lo <= raw && raw < cache.hi;
            assert_eq!(cache.ms_at(raw), exact(raw), "raw {raw}");
            hits += usize::from(in_range);
        }
        assert!(hits > 100_000, "the cache answered only {hits} of 200000");
        // And on the live counter.
        for _ in 0..10_000 {
            let a = sys.now_ms();
            let b = cache.now_ms();
            let c = sys.now_ms();
            assert!(a <= b && b <= c, "{a} {b} {c}");
        }
    }

    #[test]
    fn virtual_clock_jumps_to_deadline_only_forwards() {
        let c = VirtualClock::new();
        c.advance(Duration::from_millis(7));
        assert_eq!(
            c.wait_until(Some(Duration::from_millis(5)), false),
            Some(Duration::ZERO)
        );
        assert_eq!(c.now(), Duration::from_millis(7), "never moves back");
        c.wait_until(Some(Duration::from_millis(12)), false);
        assert_eq!(c.now(), Duration::from_millis(12));
        assert_eq!(c.wait_until(Some(Duration::from_millis(99)), true), None);
        assert_eq!(
            c.now(),
            Duration::from_millis(12),
            "work in flight holds time"
        );
        let err = c.set(Duration::from_millis(1)).unwrap_err();
        assert!(err.to_string().contains("backwards"), "{err}");
        c.advance(Duration::MAX);
        assert_eq!(c.now(), Duration::from_nanos(u64::MAX), "saturates");
    }

    #[test]
    fn now_ms_is_ms_floor_of_now() {
        let v = VirtualClock::new();
        for step in [0, 1, 999_999, 1, 1_000_000, 123_456_789_012, u64::MAX / 3] {
            v.advance(Duration::from_nanos(step));
            assert_eq!(v.now_ms(), ms_floor(v.now()), "at {:?}", v.now());
        }
        v.advance(Duration::MAX); // the end of time stays the end of time
        assert_eq!(v.now_ms(), u64::MAX);
        assert_eq!(v.now_ms(), ms_floor(v.now()));
        let s = SystemClock::new();
        let (a, m, b) = (ms_floor(s.now()), s.now_ms(), ms_floor(s.now()));
        assert!(a <= m && m <= b, "{a} <= {m} <= {b}");
        for n in [0, 1, 999_999, 1_000_000, u64::MAX - 1, u64::MAX] {
            assert_eq!(nanos_to_ms_floor(n), ms_floor(Duration::from_nanos(n)));
        }
    }

    #[test]
    fn one_conversion_each_way() {
        let ms = Duration::from_millis;
        assert_eq!(ms_floor(Duration::from_micros(1999)), 1);
        assert_eq!(ms_floor(ms(7)), 7);
        assert_eq!(ms_floor(Duration::from_nanos(u64::MAX)), u64::MAX);
        assert_eq!(ms_floor(Duration::MAX), u64::MAX);
        assert_eq!(
            ms_floor(Duration::from_nanos(u64::MAX - 1)),
            (u64::MAX - 1) / 1_000_000
        );
        assert_eq!(ms_ceil(Duration::ZERO), 0);
        assert_eq!(ms_ceil(Duration::from_nanos(1)), 1);
        assert_eq!(ms_ceil(Duration::from_micros(1500)), 2);
        assert_eq!(ms_ceil(ms(3)), 3);
        assert_eq!(ms_ceil(Duration::MAX), u64::MAX);
    }

    #[test]
    fn system_clock_waits_for_the_time_left() {
        let c = SystemClock::new();
        let left = c
            .wait_until(Some(Duration::from_secs(3600)), false)
            .unwrap();
        assert!(left > Duration::from_secs(3000));
        assert_eq!(
            c.wait_until(Some(Duration::ZERO), false),
            Some(Duration::ZERO)
        );
        assert_eq!(c.wait_until(None, false), None);
    }
}
