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

/// The operating system's monotonic clock ([`std::time::Instant`], which
/// is `CLOCK_MONOTONIC` on Linux: the clock Node's `uv_hrtime` reads).
///
/// A loop on this clock reads its milliseconds through a cache kept per
/// loop: the CPU's time-stamp counter (through `quanta`, where the counter
/// is invariant) says when the cached millisecond may have ended, and only
/// then is the OS clock read again. A `set_timeout` or `refresh` inside a
/// millisecond that was already read costs a counter read and two
/// comparisons, not a `clock_gettime` (which was about 40% of a `refresh`
/// on this crate's benchmark VM; every `set_timeout` and `refresh` reads
/// the clock, as Node's `getLibuvNow()` does).
///
/// The counter never supplies the time itself, only the moment to look
/// again: `quanta`'s calibration of the counter against the OS clock,
/// made once per process in about a millisecond, is off by tens of parts
/// per million in a process started under load (-462 to +35 in 2,400), so
/// time scaled from the counter could run ahead of `Instant` by tens of
/// microseconds a second and fire a long timer early. The loop's time is
/// never ahead of `Instant`, and behind it only where that calibration is
/// off by more than 0.1% (then by at most that share of a millisecond, at
/// a millisecond's end). The loop's time never goes backwards
/// (it keeps the largest reading it has seen), and a timer is due only
/// when this clock says so: the poll phase waits again if the OS woke it
/// a little before.
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
    /// The counter the loop's millisecond cache checks ([`MsCache`]).
    counter: quanta::Clock,
    origin: Instant,
}

impl SystemClock {
    /// A clock whose origin is now.
    ///
    /// ```
    /// use timerloop::{Clock, SystemClock};
    /// assert!(SystemClock::new().now() < std::time::Duration::from_secs(1));
    /// ```
    pub fn new() -> Self {
        SystemClock {
            counter: quanta::Clock::new(),
            origin: Instant::now(),
        }
    }

    /// Nanoseconds since the origin, saturating.
    fn now_nanos(&self) -> u64 {
        to_nanos(self.origin.elapsed())
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    fn now_ms(&self) -> u64 {
        nanos_to_ms_floor(self.now_nanos())
    }

    fn wait_until(&self, deadline: Option<Duration>, _work_in_flight: bool) -> Option<Duration> {
        deadline.map(|d| d.saturating_sub(self.now()))
    }

    fn block(&self, d: Duration) {
        // A duration past what `Instant` holds spins for ever, as the
        // time it asks for never comes (it panicked on the addition).
        let end = Instant::now().checked_add(d);
        while end.is_none_or(|end| Instant::now() < end) {
            std::hint::spin_loop();
        }
    }
}

/// One reader's cache of a [`SystemClock`]'s millisecond: the millisecond
/// the OS clock read when the cache was filled, and the range of raw
/// counter values read before that millisecond can have ended. A read
/// inside that range is a counter read and two comparisons; outside it,
/// the OS clock is read again and the range is made anew.
///
/// **Never ahead of the OS clock**, whatever the counter does: the cached
/// millisecond is the floor of an OS reading taken before any read that
/// answers it, and that clock never goes back. The counter decides only
/// when to read the OS clock again. The range ends 1/1024 of the time
/// left plus [`GUARD_NS`](Self::GUARD_NS) before the millisecond's end as
/// `quanta`'s calibration scales the counter, so the cache lags the OS
/// clock only if that calibration is off by more than 0.1% or the CPUs'
/// counters differ by more than the guard; and then only until the range
/// ends, at most one millisecond of counter ticks later.
#[derive(Clone, Debug)]
pub(crate) struct MsCache {
    /// The clock it caches: its OS reading and its counter.
    clock: SystemClock,
    /// `ns(PROBE) + 1`, with `ns` the calibration's scaling of counter
    /// ticks to nanoseconds.
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

    /// How long before the millisecond's end, beyond the relative margin,
    /// the range ends: more than the few nanoseconds the CPUs' counters
    /// differ by, so that a thread moved to another CPU does not read a
    /// millisecond that has ended.
    const GUARD_NS: u64 = 500;

    /// A cache for `clock`, empty.
    pub(crate) fn new(clock: &SystemClock) -> Self {
        let probe_ns = clock
            .counter
            .delta_as_nanos(0, Self::PROBE)
            .saturating_add(1);
        Self::with_probe_ns(clock, probe_ns)
    }

    /// A cache that scales the counter by `probe_ns` nanoseconds per
    /// [`PROBE`](Self::PROBE) ticks (a test gives a wrong scale on purpose).
    fn with_probe_ns(clock: &SystemClock, probe_ns: u64) -> Self {
        MsCache {
            clock: clock.clone(),
            probe_ns: probe_ns.max(1),
            lo: 0,
            hi: 0,
            ms: 0,
        }
    }

    /// [`SystemClock::now_ms`], from the cache when the counter is in range.
    #[inline]
    pub(crate) fn now_ms(&mut self) -> u64 {
        let raw = self.clock.counter.raw();
        if self.lo <= raw && raw < self.hi {
            return self.ms;
        }
        self.fill()
    }

    /// Reads the OS clock, then the counter, and caches the millisecond
    /// for the counter values from there to (about) its end.
    #[cold]
    fn fill(&mut self) -> u64 {
        // The OS clock first: every counter value read from here on is
        // read later, when the OS clock is at `ns` or beyond.
        let ns = self.clock.now_nanos();
        let raw = self.clock.counter.raw();
        let ms = nanos_to_ms_floor(ns);
        if ms == u64::MAX {
            // The end of time: nothing to cache.
            (self.lo, self.hi) = (0, 0);
            return ms;
        }
        let left = (ms + 1).saturating_mul(1_000_000).saturating_sub(ns);
        let left = (left - (left >> 10)).saturating_sub(Self::GUARD_NS);
        // Counter ticks that the calibration scales to fewer than `left`
        // nanoseconds (`ns(d) <= d * probe_ns / PROBE`).
        let span = u128::from(left) * u128::from(Self::PROBE) / u128::from(self.probe_ns);
        self.lo = raw;
        self.hi = u64::try_from(u128::from(raw) + span).unwrap_or(u64::MAX);
        self.ms = ms;
        ms
    }
}

/// Why a [`VirtualClock`] refused to move.
///
/// `#[non_exhaustive]`: a match needs a wildcard arm, so that a later
/// reason is not a breaking change.
///
/// ```compile_fail,E0004
/// use std::time::Duration;
/// use timerloop::ClockError;
/// fn now(e: ClockError) -> Duration {
///     match e {
///         ClockError::Backwards { now, .. } => now, // error: `_` not covered
///     }
/// }
/// ```
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
#[non_exhaustive]
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
/// It counts nanoseconds from 0 and stops at `u64::MAX` of them (about
/// 584 years), the end of time: there every deadline has passed.
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

    /// Reads `cache` between two OS readings `n` times: panics if the
    /// cache is ever ahead of the later one; answers how often it was
    /// behind the earlier one (it lagged) and how often the counter range
    /// answered (no fill).
    fn probe_cache(sys: &SystemClock, cache: &mut MsCache, n: usize) -> (usize, usize) {
        let (mut lags, mut hits) = (0, 0);
        for i in 0..n {
            let a = sys.now_ms();
            let raw = cache.clock.counter.raw();
            hits += usize::from(cache.lo <= raw && raw < cache.hi);
            let b = cache.now_ms();
            let c = sys.now_ms();
            assert!(
                b <= c,
                "read {i}: the cache read {b} ms, ahead of the clock's {c}"
            );
            lags += usize::from(b < a);
        }
        (lags, hits)
    }

    #[test]
    fn the_ms_cache_is_never_ahead_of_the_os_clock() {
        let sys = SystemClock::new();
        let exact = MsCache::new(&sys).probe_ns;
        // A calibration that is exact, and ones that are wrong (by 100 ppm,
        // what quanta's can be under load, and by half and double): the
        // counter's scale says only when to look again, never the time.
        for (num, den) in [(1, 1), (10_000, 10_001), (10_001, 10_000), (1, 2), (2, 1)] {
            let probe_ns = u64::try_from(u128::from(exact) * num / den).unwrap();
            let mut cache = MsCache::with_probe_ns(&sys, probe_ns);
            // About 3 ms of reads, so that several milliseconds end.
            let start = Instant::now();
            let (mut lags, mut hits, mut n) = (0, 0, 0);
            while start.elapsed() < Duration::from_millis(3) {
                let (l, h) = probe_cache(&sys, &mut cache, 1_000);
                (lags, hits, n) = (lags + l, hits + h, n + 1_000);
            }
            if num == den {
                // Exact: the cache answers most reads and lags none (but
                // for a thread moved between CPUs whose counters differ by
                // more than the guard; a hundredth is far more than that).
                assert!(hits * 2 > n, "the cache answered {hits} of {n} reads");
                assert!(lags * 100 <= n, "the cache lagged {lags} of {n} reads");
            }
            if den == 2 {
                // The scale halves the counter's ticks: the range is twice
                // too long, and reads late in a millisecond lag.
                assert!(hits * 2 > n, "the cache answered {hits} of {n} reads");
            }
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
