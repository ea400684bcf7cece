//! Errors: what a callback can fail with, and what running the loop returns.
#![forbid(unsafe_code)]

use std::any::Any;
use std::fmt;

/// The error type callbacks may return: anything that converts into a boxed
/// error (`&str`, `String`, `std::io::Error`, your own error types, ...).
///
/// # Examples
///
/// ```
/// use timerloop::{BoxError, EventLoop};
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.set_timeout(1, |_| -> Result<(), BoxError> { Err("bad input".into()) });
/// let err = lp.run().unwrap_err();
/// assert!(err.to_string().ends_with("bad input"));
/// ```
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What a callback may return: `()` for callbacks that cannot fail, or
/// `Result<(), E>` for any `E` that converts into a [`BoxError`].
///
/// ```
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.set_timeout(1, |_| {});                                // returns ()
/// lp.set_timeout(2, |_| -> Result<(), std::io::Error> { Ok(()) });
/// lp.set_timeout(3, |_| Err::<(), _>("went wrong"));           // &str errors
/// let err = lp.run().unwrap_err();
/// assert_eq!(err.to_string(), "uncaught error in a timeout callback: went wrong");
/// ```
///
/// A closure that never returns (it ends in `panic!`, `todo!` or
/// `std::process::exit`) needs its return type written. Rust 2024 gives
/// such a closure the never type, `!`, which stable Rust cannot make a
/// `CallbackResult`:
///
/// ```compile_fail
/// # use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.set_timeout(1, |_| std::process::exit(2)); // error: `!` is not a CallbackResult
/// ```
///
/// ```
/// # use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// let t = lp.set_timeout(1000, |_| -> () { std::process::exit(2) });
/// # lp.clear_timeout(t).unwrap();
/// ```
pub trait CallbackResult {
    /// Converts the callback's return value into a result.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::CallbackResult;
    /// assert!(().into_result().is_ok());
    /// let err = Err::<(), _>("no").into_result().unwrap_err();
    /// assert_eq!(err.to_string(), "no");
    /// ```
    fn into_result(self) -> Result<(), BoxError>;
}

impl CallbackResult for () {
    fn into_result(self) -> Result<(), BoxError> {
        Ok(())
    }
}

impl<E: Into<BoxError>> CallbackResult for Result<(), E> {
    fn into_result(self) -> Result<(), BoxError> {
        self.map_err(Into::into)
    }
}

/// Which kind of callback failed.
///
/// ```
/// use timerloop::{CallbackKind, EventLoop};
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.set_immediate(|_| Err::<(), _>("no"));
/// let err = lp.run().unwrap_err().into_callback_error().unwrap();
/// assert_eq!(err.kind(), CallbackKind::Immediate);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallbackKind {
    /// A [`set_timeout`](crate::EventLoop::set_timeout) callback.
    Timeout,
    /// A [`set_interval`](crate::EventLoop::set_interval) callback.
    Interval,
    /// A [`set_immediate`](crate::EventLoop::set_immediate) callback.
    Immediate,
    /// A [`next_tick`](crate::EventLoop::next_tick) callback.
    Tick,
    /// A [`queue_microtask`](crate::EventLoop::queue_microtask) callback.
    Microtask,
    /// An I/O callback: a completion, a posted closure or a readiness callback.
    Io,
    /// A closure run by [`enter`](crate::EventLoop::enter) (the "main body").
    Main,
    /// The uncaught-error handler itself
    /// ([`set_uncaught_handler`](crate::EventLoop::set_uncaught_handler))
    /// panicked while handling another failure: fatal, as a throwing
    /// `uncaughtException` handler is in Node.
    UncaughtHandler,
    /// A spawned task that panicked with no [`JoinHandle`](crate::task::JoinHandle)
    /// to receive it (detached): Node's unhandled rejection, reported once
    /// the microtask queue has drained. Also `block_on`'s own future.
    Task,
}

impl fmt::Display for CallbackKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CallbackKind::Timeout => "timeout",
            CallbackKind::Interval => "interval",
            CallbackKind::Immediate => "immediate",
            CallbackKind::Tick => "nextTick",
            CallbackKind::Microtask => "microtask",
            CallbackKind::Io => "I/O",
            CallbackKind::Main => "main",
            CallbackKind::UncaughtHandler => "uncaught-error handler",
            CallbackKind::Task => "task",
        })
    }
}

/// Why a callback failed: it returned an error, or it panicked.
///
/// ```
/// use timerloop::{Cause, EventLoop};
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.set_timeout(1, |_| -> Result<(), &str> { panic!("bang") });
/// let err = lp.run().unwrap_err().into_callback_error().unwrap();
/// assert!(matches!(err.cause(), Cause::Panic(m) if m == "bang"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Cause {
    /// The callback returned `Err`.
    Error(BoxError),
    /// The callback panicked; the panic's message, if it had one.
    Panic(String),
}

/// What a callback that reports its own failures (the .NET timer queue
/// runs several user callbacks in one) returns after one of them was
/// fatal: the loop has halted on that failure, kept it for `run` to
/// return, and reports nothing more; the callback's own run (a timers
/// pass, a microtask checkpoint) stops there, as it would have at the
/// failure itself.
#[derive(Debug)]
pub(crate) struct AlreadyFatal;

impl fmt::Display for AlreadyFatal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a failure already reported as fatal")
    }
}

impl std::error::Error for AlreadyFatal {}

/// A callback that returned an error or panicked: Node's "uncaught
/// exception".
///
/// Its `Display` includes the cause's own message (`uncaught error in a
/// timeout callback: disk full`), so printing it alone says everything;
/// [`source()`](std::error::Error::source) therefore continues *below*
/// the cause, with the cause's own `source()`, as `std::io::Error` does
/// for an error it wraps: a report that walks the chain (anyhow's,
/// eyre's) prints each message once. The cause itself is
/// [`cause`](Self::cause) and [`into_cause`](Self::into_cause).
///
/// ```
/// use timerloop::{CallbackKind, EventLoop};
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.next_tick(|_| Err::<(), _>("tick failed"));
/// let err = lp.run().unwrap_err().into_callback_error().unwrap();
/// assert_eq!(err.kind(), CallbackKind::Tick);
/// assert!(!err.is_panic());
/// assert_eq!(err.message(), "tick failed");
/// assert_eq!(err.to_string(), "uncaught error in a nextTick callback: tick failed");
/// ```
#[derive(Debug)]
pub struct CallbackError {
    kind: CallbackKind,
    cause: Cause,
}

impl CallbackError {
    pub(crate) fn new(kind: CallbackKind, cause: Cause) -> Self {
        CallbackError { kind, cause }
    }

    /// Whether this is a callback's [`AlreadyFatal`]: nothing to report.
    pub(crate) fn is_already_fatal(&self) -> bool {
        matches!(&self.cause, Cause::Error(e) if e.is::<AlreadyFatal>())
    }

    /// Which kind of callback failed.
    ///
    /// ```
    /// use timerloop::{CallbackKind, Cause, EventLoop};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_timeout(1, |_| Err::<(), _>("boom"));
    /// let err = lp.run().unwrap_err().into_callback_error().unwrap();
    /// assert_eq!(err.kind(), CallbackKind::Timeout);
    /// ```
    pub fn kind(&self) -> CallbackKind {
        self.kind
    }

    /// Whether the callback panicked (rather than returned an error).
    ///
    /// ```
    /// use timerloop::{CallbackKind, Cause, EventLoop};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_timeout(1, |_| Err::<(), _>("boom"));
    /// let err = lp.run().unwrap_err().into_callback_error().unwrap();
    /// assert!(!err.is_panic());
    /// ```
    pub fn is_panic(&self) -> bool {
        matches!(self.cause, Cause::Panic(_))
    }

    /// The error or panic message alone, without the kind of callback (as
    /// Node's `err.message`).
    ///
    /// ```
    /// use timerloop::{CallbackKind, Cause, EventLoop};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_timeout(1, |_| Err::<(), _>("boom"));
    /// let err = lp.run().unwrap_err().into_callback_error().unwrap();
    /// assert_eq!(err.message(), "boom");
    /// ```
    pub fn message(&self) -> String {
        match &self.cause {
            Cause::Error(e) => e.to_string(),
            Cause::Panic(m) => m.clone(),
        }
    }

    /// The cause.
    ///
    /// ```
    /// use timerloop::{CallbackKind, Cause, EventLoop};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_timeout(1, |_| Err::<(), _>("boom"));
    /// let err = lp.run().unwrap_err().into_callback_error().unwrap();
    /// assert!(matches!(err.cause(), Cause::Error(e) if e.to_string() == "boom"));
    /// ```
    pub fn cause(&self) -> &Cause {
        &self.cause
    }

    /// The cause, by value.
    ///
    /// ```
    /// use timerloop::{CallbackKind, Cause, EventLoop};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_timeout(1, |_| Err::<(), _>("boom"));
    /// let err = lp.run().unwrap_err().into_callback_error().unwrap();
    /// let Cause::Error(e) = err.into_cause() else { panic!() };
    /// assert_eq!(e.to_string(), "boom");
    /// ```
    pub fn into_cause(self) -> Cause {
        self.cause
    }
}

impl fmt::Display for CallbackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cause {
            Cause::Error(e) => write!(f, "uncaught error in a {} callback: {e}", self.kind),
            Cause::Panic(m) => write!(f, "a {} callback panicked: {m}", self.kind),
        }
    }
}

/// The cause's own source: the cause is in `Display` already (see the
/// type's docs).
///
/// ```
/// use std::error::Error as _;
/// use timerloop::{Cause, EventLoop};
/// #[derive(Debug)]
/// struct Outer(std::num::ParseIntError);
/// impl std::fmt::Display for Outer {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("bad config")
///     }
/// }
/// impl std::error::Error for Outer {
///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
///         Some(&self.0)
///     }
/// }
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.set_timeout(1, |_| Err::<(), _>(Outer("x".parse::<u8>().unwrap_err())));
/// let err = lp.run().unwrap_err().into_callback_error().unwrap();
/// assert_eq!(err.to_string(), "uncaught error in a timeout callback: bad config");
/// assert_eq!(err.source().unwrap().to_string(), "invalid digit found in string");
/// assert!(matches!(err.cause(), Cause::Error(e) if e.to_string() == "bad config"));
/// ```
impl std::error::Error for CallbackError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.cause {
            Cause::Error(e) => e.source(),
            Cause::Panic(_) => None,
        }
    }
}

/// A caught panic's message, its payload dropped: see
/// [`discard_payload`].
pub(crate) fn panic_message_of(payload: Box<dyn Any + Send>) -> String {
    let msg = panic_message(&*payload);
    discard_payload(payload);
    msg
}

/// Drops a caught panic's payload. Its own `Drop` may panic (std's warning
/// for `catch_unwind`): that panic is caught and its payload leaked, so
/// the failure the first panic was is reported, not lost to a second one
/// unwinding out of the loop.
#[cold]
#[inline(never)]
pub(crate) fn discard_payload(payload: Box<dyn Any + Send>) {
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(payload)));
    if let Err(again) = dropped {
        std::mem::forget(again);
    }
}

pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

/// What running the loop can fail with.
///
/// The `Display` of [`Uncaught`](Error::Uncaught) and
/// [`Poll`](Error::Poll) includes the inner error's message, so printing
/// the error alone says everything; [`source()`](std::error::Error::source)
/// therefore continues *below* the inner error, with its own `source()`,
/// as `std::io::Error` does for an error it wraps: a report that walks
/// the chain (anyhow's, eyre's) prints each message once. The inner error
/// itself is [`into_callback_error`](Error::into_callback_error), or the
/// variant's field.
///
/// ```
/// use timerloop::{Error, EventLoop};
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.set_timeout(1, |lp| {
///     assert!(matches!(lp.run(), Err(Error::Reentrant)));
/// });
/// lp.run().unwrap();
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A callback failed and no uncaught-error handler took it (none is
    /// installed, the handler [declined](crate::EventLoop::decline_uncaught)
    /// it, or the handler panicked: kind
    /// [`UncaughtHandler`](CallbackKind::UncaughtHandler)). The
    /// loop stopped right after that callback; it is consistent and can be
    /// run again, which resumes the normal flow where it stopped: first the
    /// ticks and microtasks still queued, then the rest of the timers due,
    /// the rest of the immediate batch, and so on. A failure whose
    /// callback's deferred work then panicked (a future dropped by the
    /// callback panicking in its `drop`) is kept while that panic leaves
    /// the run, and the next run returns it before anything else runs.
    Uncaught(CallbackError),
    /// [`run`](crate::EventLoop::run) (or a sibling) was called from inside
    /// one of the loop's own callbacks. Nothing ran.
    Reentrant,
    /// [`block_on`](crate::EventLoop::block_on)'s future is still pending
    /// but nothing refed is left to wake it: the loop would wait forever
    /// (Node exits with code 13 for an unsettled top-level await).
    Stalled,
    /// The loop was run (or [entered](crate::EventLoop::enter)) while its
    /// thread is exiting, from a thread-local's destructor that runs after
    /// the crate's own thread-locals were destroyed: the loop cannot be
    /// made the thread's current loop, so nothing ran. Timers can still be
    /// set on it, cleared, and dropped with it; a loop meant to finish its
    /// work should be run before the thread ends.
    ThreadExiting,
    /// The loop's poller failed (the OS refused to wait on it: its
    /// descriptor was closed under it, say), so the loop cannot wait for
    /// I/O, other threads or time. The run stopped in its poll phase, and
    /// what was queued stays queued (but a
    /// [`block_on`](crate::EventLoop::block_on)'s own future, aborted as
    /// on any error); a run again tries the poller again. (libuv aborts
    /// the process here.)
    Poll(std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Uncaught(e) => e.fmt(f),
            Error::Reentrant => f.write_str(
                "the loop is already running: run(), block_on() and their siblings cannot be called \
                 from inside its callbacks or tasks; schedule the work with set_immediate or \
                 next_tick instead",
            ),
            Error::Stalled => f.write_str(
                "block_on's future is still pending, but nothing refed is left to wake it \
                 (keep a refed timer, I/O source or Remote alive for what it waits on)",
            ),
            Error::ThreadExiting => f.write_str(
                "the thread is exiting (its thread-locals are being destroyed): the loop \
                 cannot be made current, and nothing ran; run it before the thread ends",
            ),
            Error::Poll(e) => write!(f, "the loop's poller failed, so the loop cannot wait: {e}"),
        }
    }
}

/// The inner error's own source: the inner error is in `Display` already
/// (see the type's docs).
///
/// ```
/// use std::error::Error as _;
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// lp.set_timeout(1, |_| Err::<(), _>(std::io::Error::other("disk full")));
/// let err = lp.run().unwrap_err();
/// assert_eq!(err.to_string(), "uncaught error in a timeout callback: disk full");
/// assert!(err.source().is_none(), "\"disk full\" has no source of its own");
/// ```
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Uncaught(e) => e.source(),
            Error::Poll(e) => e.source(),
            Error::Reentrant | Error::Stalled | Error::ThreadExiting => None,
        }
    }
}

impl Error {
    /// The callback error, if this is [`Error::Uncaught`].
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_timeout(1, |_| Err::<(), _>("boom"));
    /// let err = lp.run().unwrap_err();
    /// assert_eq!(err.into_callback_error().unwrap().message(), "boom");
    /// ```
    pub fn into_callback_error(self) -> Option<CallbackError> {
        match self {
            Error::Uncaught(e) => Some(e),
            Error::Reentrant | Error::Stalled | Error::ThreadExiting | Error::Poll(_) => None,
        }
    }
}

/// Why a command on a handle (a timeout, an immediate, a remote) did
/// nothing. Commands on I/O sources answer with
/// [`IoError`](crate::IoError).
///
/// ```
/// use timerloop::{EventLoop, TimerError};
/// let (mut a, mut b) = (EventLoop::with_virtual_clock(), EventLoop::with_virtual_clock());
/// let t = a.set_timeout(1, |_| {});
/// assert_eq!(b.clear_timeout(t), Err(TimerError::ForeignLoop));
/// a.clear_timeout(t).unwrap();
/// assert_eq!(a.clear_timeout(t), Err(TimerError::Stale));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimerError {
    /// What the handle named is gone: a timeout that fired (and was not
    /// [kept](crate::EventLoop::keep_timeout)) or was cleared, an
    /// immediate that ran or was cleared. Its slot may now hold something
    /// else, which the handle never touches.
    Stale,
    /// The handle was made by another [`EventLoop`](crate::EventLoop).
    ForeignLoop,
}

impl fmt::Display for TimerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimerError::Stale => {
                "the handle is stale: its timer fired or was cleared \
                 (keep_timeout() a timeout to refresh it after it fires)"
            }
            TimerError::ForeignLoop => "the handle belongs to another EventLoop",
        })
    }
}

impl std::error::Error for TimerError {}
