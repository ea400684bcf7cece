//! Delays, and Node's coercion of them.
//!
//! Node computes `after *= 1` and then, unless `1 <= after <= 2^31 - 1`,
//! uses 1 ms, emitting a `TimeoutOverflowWarning` when `after` was too
//! large. Below 1, negative and NaN become 1 silently (Node 20 has no
//! warning for them). Fractions are kept, but the timer is listed under the
//! truncated duration, so 1.9 ms shares the 1 ms list (R3.2).
//!
//! A number is a Node delay and keeps exactly that coercion. A
//! [`Duration`] has no Node meaning to keep: it is rounded **up** to whole
//! milliseconds first, so a `Duration` timer never fires before its
//! duration has passed (1.5 ms is 2 ms, where the number 1.5 is listed
//! with the 1 ms timers). A `Duration` above [`TIMEOUT_MAX`] is a *long
//! timer*: kept at its length (up to [`LONG_MAX_MS`]), never turned into
//! 1 ms, as .NET keeps timers longer than its native timer allows. The loop
//! never arms its native timer more than [`NATIVE_MAX_MS`] ahead and simply
//! re-arms when it wakes early, so a long timer fires at its deadline, not
//! before.
#![forbid(unsafe_code)]

use std::fmt;
use std::time::Duration;

/// The largest delay Node accepts: `2^31 - 1` ms (about 24.8 days).
///
/// # Examples
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use timerloop::{EventLoop, TIMEOUT_MAX};
/// let warnings = Rc::new(RefCell::new(Vec::new()));
/// let mut lp = EventLoop::with_virtual_clock();
/// let w = warnings.clone();
/// lp.set_warning_handler(move |warning| w.borrow_mut().push(warning.name));
/// // A number above TIMEOUT_MAX becomes 1 ms, with a warning, as in Node.
/// lp.set_timeout(TIMEOUT_MAX + 1.0, |_| {});
/// lp.run().unwrap();
/// assert_eq!(lp.now(), 1);
/// assert_eq!(*warnings.borrow(), ["TimeoutOverflowWarning"]);
/// ```
pub const TIMEOUT_MAX: f64 = 2_147_483_647.0;

/// The longest [`Duration`] delay kept as given: 2^53 - 1 ms (about
/// 285,000 years; the largest whole number a delay's `f64` holds exactly).
/// Longer ones are this long. Either is beyond any clock's end (a
/// [`VirtualClock`](crate::VirtualClock) saturates after about 584 years):
/// on a virtual clock with nothing else to do, the loop jumps to the end of
/// time, where every timer counts as due, and fires it there. An interval
/// there fires once a timers pass (each pass runs only the timers queued
/// when it began), as a 1 ms interval does on a loop that never sleeps.
///
/// # Examples
///
/// ```
/// use std::{cell::Cell, rc::Rc, time::Duration};
/// use timerloop::{EventLoop, LONG_MAX_MS};
/// let fired = Rc::new(Cell::new(false));
/// let mut lp = EventLoop::with_virtual_clock();
/// let f = fired.clone();
/// // Far beyond LONG_MAX_MS: kept as a long timer (not cut to 1 ms); with
/// // nothing else to do, the virtual clock jumps to the end of time.
/// let t = lp.set_timeout(Duration::from_millis(LONG_MAX_MS) * 4, move |_| f.set(true));
/// assert!(lp.timeout_is_pending(t));
/// lp.run().unwrap();
/// assert!(fired.get());
/// assert!(lp.now() >= 365 * 24 * 3600 * 1000); // not 1 ms
/// ```
pub const LONG_MAX_MS: u64 = (1 << 53) - 1;

/// How far ahead the loop arms its one native timer at most:
/// `0x0fff_ffff` ms (about 3.1 days), .NET's cap in `EnsureTimerFiresBy`.
/// A timer further away wakes the loop early, which finds nothing due and
/// re-arms.
///
/// # Examples
///
/// ```
/// use std::{cell::Cell, rc::Rc, time::Duration};
/// use timerloop::{EventLoop, NATIVE_MAX_MS};
/// let at = Rc::new(Cell::new(0));
/// let mut lp = EventLoop::with_virtual_clock();
/// let a = at.clone();
/// // Further away than the native timer is armed at once: the loop re-arms
/// // and the timer fires at its deadline, not before.
/// lp.set_timeout(Duration::from_millis(NATIVE_MAX_MS + 1000), move |lp| a.set(lp.now()));
/// lp.run().unwrap();
/// assert_eq!(at.get(), NATIVE_MAX_MS + 1000);
/// ```
pub const NATIVE_MAX_MS: u64 = 0x0fff_ffff;

/// A timer delay in milliseconds, as given (possibly fractional, negative,
/// NaN or infinite); see [`Delay::coerced`] for what the loop makes of it.
///
/// Every numeric type and [`Duration`] converts into a `Delay`, so
/// `set_timeout(10, ..)`, `set_timeout(2.5, ..)` and
/// `set_timeout(Duration::from_secs(1), ..)` all work. A number is Node's
/// delay, coerced as Node does; a `Duration` is rounded up to whole
/// milliseconds and, above [`TIMEOUT_MAX`], kept as a long timer.
///
/// ```
/// use std::time::Duration;
/// use timerloop::Delay;
/// assert_eq!(Delay::from(Duration::from_millis(1500)).coerced(), 1500.0);
/// assert_eq!(Delay::from(Duration::from_micros(1500)).coerced(), 2.0); // rounded up
/// assert_eq!(Delay::from(0).coerced(), 1.0);
/// assert_eq!(Delay::from(f64::NAN).coerced(), 1.0);
/// assert_eq!(Delay::from(1.9).coerced(), 1.9);
/// assert_eq!(Delay::from(2_147_483_648u64).coerced(), 1.0); // and a warning
/// // A Duration is never cut to 1 ms: 40 days stay 40 days.
/// let forty_days = Duration::from_secs(40 * 86_400);
/// assert_eq!(Delay::from(forty_days).coerced(), 3_456_000_000.0);
/// ```
#[derive(Clone, Copy, PartialEq)]
pub struct Delay {
    ms: f64,
    /// Made from a `Duration`: whole ms, kept above `TIMEOUT_MAX`.
    long_ok: bool,
    /// What the delay coerces to, truncated (R3.2), when no warning comes
    /// with it; 0 for the rest (out of range, NaN), which `coerce` handles.
    /// A function of `ms` and `long_ok` however the delay was made, so
    /// equality is still equality of what was given; an integer computes
    /// it without floating point, which saves `set_timeout` the `f64`
    /// round trip.
    whole: u64,
}

impl fmt::Debug for Delay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delay")
            .field("ms", &self.ms)
            .field("long_ok", &self.long_ok)
            .finish()
    }
}

impl Delay {
    /// A delay of `ms` milliseconds, as a Node delay.
    ///
    /// ```
    /// use timerloop::Delay;
    /// assert_eq!(Delay::from_ms(2.5).as_ms(), 2.5);
    /// ```
    pub const fn from_ms(ms: f64) -> Self {
        // NaN fails both comparisons: 0, the slow path.
        let whole = if ms >= 1.0 && ms <= TIMEOUT_MAX {
            ms as u64
        } else {
            0
        };
        Delay {
            ms,
            long_ok: false,
            whole,
        }
    }

    /// The delay as given, in milliseconds (a `Duration` already rounded up).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::Delay;
    /// assert_eq!(Delay::from(-3).as_ms(), -3.0);
    /// assert_eq!(Delay::from(Duration::from_nanos(1)).as_ms(), 1.0);
    /// ```
    pub fn as_ms(self) -> f64 {
        self.ms
    }

    /// The delay the loop uses: Node's coercion for a number; for a
    /// `Duration`, its whole milliseconds (at least 1, at most
    /// [`LONG_MAX_MS`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::Delay;
    /// assert_eq!(Delay::from(-3).coerced(), 1.0);
    /// assert_eq!(Delay::from(1.9).coerced(), 1.9);
    /// assert_eq!(Delay::from(Duration::ZERO).coerced(), 1.0);
    /// assert_eq!(Delay::from(Duration::from_secs(3_000_000)).coerced(), 3e9);
    /// ```
    pub fn coerced(self) -> f64 {
        self.coerce().0
    }

    /// The delay to use, and the warning to report.
    #[inline]
    pub(crate) fn coerce(self) -> (f64, Option<Warning>) {
        if self.long_ok && self.ms > TIMEOUT_MAX {
            return (self.ms.min(LONG_MAX_MS as f64), None);
        }
        coerce(self.ms)
    }

    /// The whole milliseconds this delay coerces to when that comes with
    /// no warning and no floating point (an integer in range, say): the
    /// common case, told apart by one test; `None` for the rest, which
    /// [`coerce_whole`](Self::coerce_whole) handles.
    #[inline(always)]
    pub(crate) fn whole_fast(self) -> Option<u64> {
        (self.whole != 0).then_some(self.whole)
    }

    /// The delay as given and whether it came from a `Duration`: all a
    /// delay is but its cached whole value, for a caller that passes it on
    /// in registers ([`Delay::coerce_whole_parts`] coerces it from them).
    #[inline(always)]
    pub(crate) fn parts(self) -> (f64, bool) {
        (self.ms, self.long_ok)
    }

    /// [`coerce_whole`](Self::coerce_whole) of the delay whose
    /// [`parts`](Self::parts) these are, when it has no
    /// [`whole_fast`](Self::whole_fast) value.
    pub(crate) fn coerce_whole_parts(ms: f64, long_ok: bool) -> (u64, Option<Warning>) {
        Delay {
            ms,
            long_ok,
            whole: 0,
        }
        .coerce_whole()
    }

    /// [`coerce`](Self::coerce), truncated to whole milliseconds: the
    /// duration a timer is listed under (R3.2).
    #[inline]
    pub(crate) fn coerce_whole(self) -> (u64, Option<Warning>) {
        if self.whole != 0 {
            return (self.whole, None);
        }
        let (ms, warning) = self.coerce();
        // Coerced, `ms` is in 1..=LONG_MAX_MS: through `i64` it truncates to
        // the same value, and that saturating conversion is shorter than
        // the one to `u64`.
        (ms as i64 as u64, warning)
    }
}

/// [`TIMEOUT_MAX`] as an integer.
const TIMEOUT_MAX_INT: i128 = 2_147_483_647;

macro_rules! delay_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Delay {
            #[inline]
            fn from(ms: $t) -> Self {
                // In range, an integer is its own coerced value. (A `u128`
                // above `i128::MAX` wraps negative: out of range either way.)
                // At least 1 (for a signed type, not negative), and at most
                // `TIMEOUT_MAX` once widened (a negative one widens to a
                // huge `u128`, out of range too): for the narrower types
                // the compiler drops what cannot fail, with no 128-bit
                // arithmetic.
                let whole = if ms >= 1 && (ms as u128) <= TIMEOUT_MAX_INT as u128 {
                    ms as u64
                } else {
                    0
                };
                // Integers beyond 2^53 lose precision, but anything that
                // large coerces to 1 ms anyway.
                Delay {
                    ms: ms as f64,
                    long_ok: false,
                    whole,
                }
            }
        }
    )*};
}
delay_from_int!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

macro_rules! delay_from_float {
    ($($t:ty),*) => {$(
        impl From<$t> for Delay {
            #[inline]
            fn from(ms: $t) -> Self {
                Delay::from_ms(ms as f64)
            }
        }
    )*};
}
delay_from_float!(f32, f64);

impl From<Duration> for Delay {
    /// Rounds `d` up to whole milliseconds: a `Duration` timer never fires
    /// before its deadline in loop time (on a real clock, its start is the
    /// loop's current millisecond, so it can end up to 1 ms short in real
    /// time, as Node's). Above [`TIMEOUT_MAX`] it stays a long timer, up to
    /// [`LONG_MAX_MS`].
    #[inline]
    fn from(d: Duration) -> Self {
        let ms = crate::uv::ms_ceil(d).min(LONG_MAX_MS);
        Delay {
            ms: ms as f64,
            long_ok: true,
            // Zero coerces to 1 ms (silently); anything else is kept.
            whole: ms.max(1),
        }
    }
}

/// A warning the loop reports through
/// [`set_warning_handler`](crate::EventLoop::set_warning_handler) instead of
/// printing it.
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use timerloop::EventLoop;
/// let seen = Rc::new(RefCell::new(Vec::new()));
/// let mut lp = EventLoop::with_virtual_clock();
/// let s = seen.clone();
/// lp.set_warning_handler(move |w| s.borrow_mut().push(w.to_string()));
/// lp.set_timeout(f64::INFINITY, |_| {});
/// lp.run().unwrap();
/// assert_eq!(
///     seen.borrow()[0],
///     "TimeoutOverflowWarning: Infinity does not fit into a 32-bit signed integer.\n\
///      Timeout duration was set to 1."
/// );
/// ```
///
/// `Eq` and `Hash`, so a handler can keep each distinct warning once:
///
/// ```
/// use std::{cell::RefCell, collections::HashSet, rc::Rc};
/// use timerloop::{EventLoop, Warning};
/// let seen: Rc<RefCell<HashSet<Warning>>> = Rc::default();
/// let mut lp = EventLoop::with_virtual_clock();
/// let s = seen.clone();
/// lp.set_warning_handler(move |w| {
///     s.borrow_mut().insert(w.clone());
/// });
/// for _ in 0..3 {
///     lp.set_timeout(2_147_483_648u64, |_| {}); // the same warning each time
/// }
/// lp.set_timeout(f64::INFINITY, |_| {});
/// lp.run().unwrap();
/// assert_eq!(seen.borrow().len(), 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Warning {
    /// The warning's name, as Node's (`"TimeoutOverflowWarning"`).
    pub name: &'static str,
    /// The warning's text, as Node prints it.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.message)
    }
}

/// Formats a number as JavaScript's `String(n)` does for the values a
/// warning can carry.
fn js_number(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if n.abs() >= 1e21 {
        let s = format!("{n:e}");
        // Rust prints 1e21 / 1.5e300; JavaScript prints 1e+21 / 1.5e+300.
        match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
            _ => s,
        }
    } else {
        format!("{n}")
    }
}

/// Node's delay coercion: the delay to use, and the warning to report.
#[inline]
pub(crate) fn coerce(after: f64) -> (f64, Option<Warning>) {
    if (1.0..=TIMEOUT_MAX).contains(&after) {
        return (after, None);
    }
    coerce_out_of_range(after)
}

/// [`coerce`] for a delay outside 1..=[`TIMEOUT_MAX`]: rare, kept out of
/// line so that the common case inlines into `set_timeout`.
#[cold]
fn coerce_out_of_range(after: f64) -> (f64, Option<Warning>) {
    let warning = (after > TIMEOUT_MAX).then(|| Warning {
        name: "TimeoutOverflowWarning",
        message: format!(
            "{} does not fit into a 32-bit signed integer.\nTimeout duration was set to 1.",
            js_number(after)
        ),
    });
    (1.0, warning)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_coercion_table() {
        // R3.2, verified on Node v20.20.2.
        for v in [0.0, 0.5, -0.5, -1.0, f64::NAN, f64::NEG_INFINITY, 1.0] {
            assert_eq!(coerce(v), (1.0, None), "{v}");
        }
        for v in [f64::INFINITY, 2147483648.0, 2147483647.5, 1e300] {
            let (d, w) = coerce(v);
            assert_eq!(d, 1.0);
            assert!(w.is_some(), "{v} warns");
        }
        for v in [5.7, 1.9, 2147483647.0, 10.0] {
            assert_eq!(coerce(v), (v, None));
        }
    }

    #[test]
    fn warning_text_matches_node() {
        let w = coerce(2147483648.0).1.unwrap();
        assert_eq!(w.name, "TimeoutOverflowWarning");
        assert_eq!(
            w.message,
            "2147483648 does not fit into a 32-bit signed integer.\nTimeout duration was set to 1."
        );
        assert!(
            coerce(f64::INFINITY)
                .1
                .unwrap()
                .message
                .starts_with("Infinity ")
        );
        assert!(
            coerce(2147483647.5)
                .1
                .unwrap()
                .message
                .starts_with("2147483647.5 ")
        );
        assert!(coerce(1e21).1.unwrap().message.starts_with("1e+21 "));
    }

    #[test]
    fn conversions() {
        assert_eq!(Delay::from(Duration::MAX).coerced(), LONG_MAX_MS as f64);
        assert_eq!(Delay::from(Duration::MAX).coerce().1, None, "no warning");
        let just_over = Duration::from_millis(TIMEOUT_MAX as u64 + 1);
        assert_eq!(Delay::from(just_over).coerced(), TIMEOUT_MAX + 1.0);
        assert_eq!(Delay::from(u64::MAX).coerced(), 1.0);
        assert_eq!(Delay::from(-5i32).coerced(), 1.0);
        assert_eq!(Delay::from(Duration::from_micros(2500)).as_ms(), 3.0);
        assert_eq!(Delay::from(Duration::from_micros(1500)).coerced(), 2.0);
        assert_eq!(Delay::from(Duration::ZERO).coerced(), 1.0);
        assert_eq!(Delay::from(Duration::from_millis(7)).coerced(), 7.0);
    }

    /// The integer fast path gives what the `f64` path gives, warning
    /// included, for every kind of delay near the edges of the range.
    #[test]
    fn whole_matches_the_float_path() {
        // `coerce` reads `ms` and `long_ok` only: the `f64` path itself.
        let slow = |d: Delay| {
            let (ms, w) = d.coerce();
            (ms as u64, w)
        };
        // `set_timeout`'s way: the whole value, or the parts coerced.
        let split = |d: Delay| match d.whole_fast() {
            Some(ms) => (ms, None),
            None => {
                let (ms, long_ok) = d.parts();
                Delay::coerce_whole_parts(ms, long_ok)
            }
        };
        let ints: [i128; 12] = [
            i128::MIN,
            -1,
            0,
            1,
            2,
            1000,
            TIMEOUT_MAX_INT - 1,
            TIMEOUT_MAX_INT,
            TIMEOUT_MAX_INT + 1,
            1 << 53,
            u64::MAX as i128,
            i128::MAX,
        ];
        for v in ints {
            let mut ds = vec![Delay::from(v)];
            if let Ok(x) = i64::try_from(v) {
                ds.push(Delay::from(x));
            }
            if let Ok(x) = u64::try_from(v) {
                ds.push(Delay::from(x));
                ds.push(Delay::from(Duration::from_millis(x)));
            }
            if let Ok(x) = i32::try_from(v) {
                ds.push(Delay::from(x));
            }
            if let Ok(x) = u32::try_from(v) {
                ds.push(Delay::from(x));
            }
            if let Ok(x) = u8::try_from(v) {
                ds.push(Delay::from(x));
            }
            if let Ok(x) = u128::try_from(v) {
                ds.push(Delay::from(x));
            }
            for d in ds {
                assert_eq!(d.coerce_whole(), slow(d), "{v} as {d:?}");
                assert_eq!(split(d), slow(d), "{v} as {d:?}, split");
            }
        }
        assert_eq!(Delay::from(u128::MAX).coerce_whole().0, 1);
        assert!(Delay::from(u128::MAX).coerce_whole().1.is_some(), "warns");
        assert_eq!(Delay::from(Duration::ZERO).coerce_whole(), (1, None));
        assert_eq!(Delay::from(2.9).coerce_whole(), (2, None));
        assert_eq!(Delay::from(5u64), Delay::from_ms(5.0), "equal as given");
        // `whole` is the same however the delay was made.
        for v in [-1_i64, 0, 1, 7, 2_147_483_647, 2_147_483_648, 1 << 53] {
            assert_eq!(Delay::from(v).whole, Delay::from_ms(v as f64).whole, "{v}");
        }
        for v in [0.5, 1.0, 2.9, 2_147_483_647.5, f64::NAN, f64::INFINITY] {
            assert_eq!(
                Delay::from_ms(v).coerce_whole(),
                slow(Delay::from_ms(v)),
                "{v}"
            );
            assert_eq!(split(Delay::from_ms(v)), slow(Delay::from_ms(v)), "{v}");
        }
        for d in [
            Duration::ZERO,
            Duration::from_secs(3_000_000),
            Duration::MAX,
        ] {
            assert_eq!(split(Delay::from(d)), slow(Delay::from(d)), "{d:?}");
        }
    }
}
