//! I/O and cross-thread work: the loop's poll phase as the Node layer
//! offers it. Every callback here runs as an I/O callback: in the poll
//! phase, in a callback scope of its own, so ticks and microtasks drain
//! after it (R10.4).
//!
//! Ground rules:
//! - a [`Completion`] is a request: the loop stays alive while it is in
//!   flight, and dropping it uncompleted cancels its callback;
//! - a [`Remote`] is an async handle (libuv's `uv_async_t`): it keeps the
//!   loop alive while it exists and is refed, so `run` does not return while
//!   another thread may still post; [`EventLoop::unref_remote`] opts out;
//! - work posted before `run` is run by the first poll phase of the next
//!   run that reaches one (a refed `Remote` makes sure a run does);
//! - once the loop is dropped, posting fails with [`PostError::Closed`] and
//!   the closure is dropped: nothing accumulates for a loop that is gone.
#![forbid(unsafe_code)]

use std::fmt;
use std::num::NonZeroU32;

use super::EventLoop;
use super::error::{CallbackKind, CallbackResult, TimerError};
use crate::collections::arena::Key;
use crate::uv::{self, Completion, PostError, Readiness};

/// A `Send + Clone` handle through which other threads run closures on an
/// [`EventLoop`]'s thread, in its poll phase (see [`EventLoop::remote`]).
///
/// Clones share one async handle of the loop, which closes when the last
/// clone is dropped.
///
/// ```
/// use std::sync::mpsc;
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// let remote = lp.remote();
/// let (tx, rx) = mpsc::channel();
/// std::thread::spawn(move || {
///     for i in 0..3 {
///         remote.post(move |_| println!("job {i}")).unwrap();
///     }
///     tx.send(()).unwrap();
///     // The remote is dropped here: the loop may end.
/// });
/// lp.run().unwrap(); // returns once the remote is gone and its jobs ran
/// rx.recv().unwrap();
/// ```
#[derive(Clone)]
pub struct Remote {
    inner: uv::Remote<EventLoop>,
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl Remote {
    /// Queues `f` to run on the loop's thread in a poll phase, as an I/O
    /// callback, and wakes the loop.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use timerloop::{EventLoop, PostError};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let remote = lp.remote();
    /// remote.post(|lp| {
    ///     lp.set_timeout(5, |_| {});
    /// })
    /// .unwrap();
    /// let r2 = remote.clone();
    /// drop(remote);
    /// drop(r2); // the last clone: the loop may now end
    /// lp.run().unwrap();
    /// assert_eq!(lp.now(), 5);
    ///
    /// let remote = lp.remote();
    /// drop(lp);
    /// assert!(matches!(remote.post(|_| {}), Err(PostError::Closed)));
    /// ```
    ///
    /// # Errors
    ///
    /// [`PostError::Closed`] if the loop was dropped (`f` is dropped
    /// unrun); [`PostError::Wake`] if the loop's waker could not be
    /// signalled.
    pub fn post<R: CallbackResult>(
        &self,
        f: impl FnOnce(&mut EventLoop) -> R + Send + 'static,
    ) -> Result<(), PostError> {
        self.inner
            .post(move |lp: &mut EventLoop| lp.once_scope(CallbackKind::Io, f))
    }
}

/// A registered I/O source (see [`EventLoop::insert_io`]): small,
/// `Copy`, generation checked, so a closed source's handle never reaches a
/// later source in the same slot.
///
/// ```
/// use timerloop::{EventLoop, mio};
/// let mut lp = EventLoop::with_virtual_clock();
/// let (a, _b) = mio::net::UnixStream::pair().unwrap();
/// let h = lp.insert_io(a, mio::Interest::READABLE, |_, _, _| {}).unwrap();
/// let copy = h;
/// lp.close_io(h).unwrap();
/// assert!(!lp.io_is_active(copy));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IoHandle {
    key: Key,
    loop_id: NonZeroU32,
}

impl EventLoop {
    /// Starts a piece of off-thread work: returns a `Send` [`Completion`] to
    /// hand to the thread doing it. When that thread calls
    /// [`Completion::complete`], `cb` runs on the loop's thread in the next
    /// poll phase, as an I/O callback (ticks and microtasks drain after it).
    /// The loop stays alive while the completion is outstanding; dropping it
    /// uncompleted cancels `cb`, silently.
    ///
    /// On a virtual clock the work takes no virtual time: while the
    /// completion is outstanding the clock waits for it for real rather
    /// than jump to the next timer. So the worker must not wait for the
    /// loop (for something a timer sends) before completing: the two would
    /// wait for each other and `run` would not return. A worker that needs
    /// the loop's timers posts through a [`Remote`] instead.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let done = Rc::new(Cell::new(false));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let d = done.clone();
    /// let c = lp.completion(move |_| d.set(true));
    /// std::thread::spawn(move || c.complete());
    /// lp.run().unwrap();
    /// assert!(done.get());
    /// ```
    pub fn completion<R: CallbackResult>(
        &mut self,
        cb: impl FnOnce(&mut EventLoop) -> R + 'static,
    ) -> Completion {
        self.uv
            .request(move |lp: &mut EventLoop| lp.once_scope(CallbackKind::Io, cb))
    }

    /// A new `Send + Clone` [`Remote`] through which other threads run
    /// closures on this loop's thread, in its poll phase, as I/O callbacks.
    /// Like libuv's `uv_async_t`, it keeps the loop alive while it exists
    /// and is refed (see [`unref_remote`](Self::unref_remote)). Work posted
    /// while the loop is not running waits for the next run's poll phase.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let remote = lp.remote();
    /// assert!(lp.is_alive(), "a refed remote keeps the loop alive");
    /// drop(remote);
    /// lp.run().unwrap(); // closes the remote's handle, then ends
    /// assert!(!lp.is_alive());
    /// ```
    pub fn remote(&mut self) -> Remote {
        Remote {
            inner: self.uv.remote(),
        }
    }

    fn remote_handle(&self, r: &Remote) -> Result<uv::Handle, TimerError> {
        if self.uv.owns_remote(&r.inner) {
            Ok(r.inner.handle())
        } else {
            Err(TimerError::ForeignLoop)
        }
    }

    /// Lets the loop end while `remote` exists (`uv_unref` of the async
    /// handle); posts still run whenever the loop polls.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let remote = lp.remote();
    /// lp.unref_remote(&remote).unwrap();
    /// assert!(!lp.remote_has_ref(&remote));
    /// lp.run().unwrap(); // returns at once, though the remote still exists
    /// ```
    ///
    /// # Errors
    ///
    /// [`TimerError::ForeignLoop`] for another loop's remote.
    pub fn unref_remote(&mut self, remote: &Remote) -> Result<(), TimerError> {
        let h = self.remote_handle(remote)?;
        self.uv.unref_handle(h).map_err(|_| TimerError::Stale)
    }

    /// Makes `remote` keep the loop alive again (`uv_ref`).
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let remote = lp.remote();
    /// lp.unref_remote(&remote).unwrap();
    /// lp.ref_remote(&remote).unwrap();
    /// assert!(lp.remote_has_ref(&remote) && lp.is_alive());
    /// ```
    ///
    /// # Errors
    ///
    /// As [`unref_remote`](Self::unref_remote).
    pub fn ref_remote(&mut self, remote: &Remote) -> Result<(), TimerError> {
        let h = self.remote_handle(remote)?;
        self.uv.ref_handle(h).map_err(|_| TimerError::Stale)
    }

    /// Whether `remote` keeps this loop alive; `false` for another loop's.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let remote = lp.remote();
    /// assert!(lp.remote_has_ref(&remote));
    /// assert!(!EventLoop::with_virtual_clock().remote_has_ref(&remote));
    /// ```
    pub fn remote_has_ref(&self, remote: &Remote) -> bool {
        self.remote_handle(remote)
            .is_ok_and(|h| self.uv.has_ref(h).unwrap_or(false))
    }

    /// Registers a mio I/O source, which the loop owns from now on, and
    /// runs `cb` in the poll phase (as an I/O callback, so ticks and
    /// microtasks drain after it) with the loop, the source itself and the
    /// [`IoEvent`] (its handle and readiness). The source keeps the loop
    /// alive until [`close_io`](Self::close_io) (which drops it) or
    /// [`remove_io`](Self::remove_io) (which gives it back); dropping the
    /// loop drops it. Outside its callback, reach it with
    /// [`io_source`](Self::io_source).
    ///
    /// ```
    /// use std::io::{Read, Write};
    /// use timerloop::{EventLoop, mio};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (mut tx, rx) = mio::net::UnixStream::pair().unwrap();
    /// lp.insert_io(rx, mio::Interest::READABLE, |lp, rx, ev| {
    ///     let mut buf = [0; 8];
    ///     let n = rx.read(&mut buf).unwrap();
    ///     assert_eq!(&buf[..n], b"hi");
    ///     lp.close_io(ev.handle).unwrap(); // the stream is dropped on return
    /// })
    /// .unwrap();
    /// tx.write_all(b"hi").unwrap();
    /// lp.run().unwrap(); // returns once the source is closed
    /// assert_eq!(lp.stats().io_sources, 0);
    /// ```
    ///
    /// # Errors
    ///
    /// [`InsertError`], with the source back, if the OS refuses to
    /// register it.
    pub fn insert_io<S, F, R>(
        &mut self,
        source: S,
        interest: mio::Interest,
        mut cb: F,
    ) -> Result<IoHandle, InsertError<S>>
    where
        S: mio::event::Source + 'static,
        F: FnMut(&mut EventLoop, &mut S, IoEvent) -> R + 'static,
        R: CallbackResult,
    {
        let id = self.id;
        let uv_cb: uv::IoCb<EventLoop> = Box::new(move |lp, key, src, readiness| {
            let Some(src) = src.downcast_mut::<S>() else {
                return; // unreachable: the loop stores what it was given
            };
            let ev = IoEvent {
                handle: IoHandle { key, loop_id: id },
                readiness,
            };
            lp.callback_scope(CallbackKind::Io, &mut |lp| cb(lp, src, ev).into_result());
        });
        match self.uv.io_insert(Box::new(source), interest, uv_cb) {
            Ok(key) => Ok(IoHandle { key, loop_id: id }),
            Err((error, source)) => match source.into_any().downcast::<S>() {
                Ok(source) => Err(InsertError {
                    source: *source,
                    error,
                }),
                Err(_) => unreachable!("the loop gives back what it was given"),
            },
        }
    }

    /// Registers a source that a future owns (the net types): `cb` gets
    /// `()` as its source. The owner closes it with
    /// [`close_external_io`](Self::close_external_io).
    pub(crate) fn register_external_io(
        &mut self,
        source: &mut dyn mio::event::Source,
        interest: mio::Interest,
        cb: uv::IoCb<EventLoop>,
    ) -> std::io::Result<Key> {
        self.uv.io_register_external(source, interest, cb)
    }

    /// Makes a source registered with
    /// [`register_external_io`](Self::register_external_io) keep the loop
    /// alive or not (`uv_ref`/`uv_unref`); nothing if it is closed.
    pub(crate) fn ref_external_io(&mut self, key: Key, refed: bool) {
        let _ = if refed {
            self.uv.ref_handle(key)
        } else {
            self.uv.unref_handle(key)
        };
    }

    /// Deregisters a source registered with
    /// [`register_external_io`](Self::register_external_io) and closes its
    /// handle.
    pub(crate) fn close_external_io(&mut self, key: Key, source: &mut dyn mio::event::Source) {
        let _ = self.uv.io_close_external(key, source);
    }

    /// Closes the handle of a source registered with
    /// [`register_external_io`](Self::register_external_io) whose owner
    /// deregistered it already, with a clone of the registry
    /// ([`io_registry_clone`](Self::io_registry_clone)); nothing if it is
    /// closed.
    pub(crate) fn close_deregistered_io(&mut self, key: Key) {
        let _ = self.uv.io_close_external_deregistered(key);
    }

    /// A clone of the loop's mio registry (a descriptor of its own, on
    /// Unix), to deregister a source from where the loop cannot be lent.
    pub(crate) fn io_registry_clone(&self) -> std::io::Result<mio::Registry> {
        self.uv.io_registry().try_clone()
    }

    fn io_key(&self, h: IoHandle) -> Result<Key, IoError> {
        if h.loop_id == self.id {
            Ok(h.key)
        } else {
            Err(IoError::ForeignLoop)
        }
    }

    /// The source registered under `h`, to use outside its callback (a
    /// timer that writes to a socket).
    ///
    /// ```
    /// use std::io::Write;
    /// use timerloop::{EventLoop, IoError, mio};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (tx, _rx) = mio::net::UnixStream::pair().unwrap();
    /// let h = lp.insert_io(tx, mio::Interest::WRITABLE, |_, _, _| {}).unwrap();
    /// lp.io_source::<mio::net::UnixStream>(h).unwrap().write_all(b"x").unwrap();
    /// assert!(matches!(lp.io_source::<mio::net::TcpStream>(h), Err(IoError::WrongType)));
    /// lp.close_io(h).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`IoError::Stale`] once closed or removed, [`IoError::ForeignLoop`],
    /// [`IoError::WrongType`] if `S` is not the source's type,
    /// [`IoError::Busy`] from inside the source's own callback (it has the
    /// source as its argument).
    pub fn io_source<S: 'static>(&mut self, h: IoHandle) -> Result<&mut S, IoError> {
        let key = self.io_key(h)?;
        let src = self.uv.io_source(key).map_err(IoError::from_uv)?;
        src.as_any().downcast_mut::<S>().ok_or(IoError::WrongType)
    }

    /// Changes what the source is watched for (to add
    /// [`WRITABLE`](mio::Interest::WRITABLE) under back-pressure, and take
    /// it away once drained). From inside the source's own callback the
    /// change applies when the callback returns; if the OS refuses it
    /// then, the refusal is not reported and the old interest stays.
    ///
    /// ```
    /// use timerloop::{EventLoop, mio::{self, Interest}};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (a, _b) = mio::net::UnixStream::pair().unwrap();
    /// let h = lp.insert_io(a, Interest::READABLE, |_, _, _| {}).unwrap();
    /// lp.set_io_interest(h, Interest::READABLE | Interest::WRITABLE).unwrap();
    /// lp.close_io(h).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`IoError::Stale`], [`IoError::ForeignLoop`], or [`IoError::Os`] if
    /// the OS refuses (the old interest stays).
    pub fn set_io_interest(&mut self, h: IoHandle, interest: mio::Interest) -> Result<(), IoError> {
        let key = self.io_key(h)?;
        self.uv.io_set_interest(key, interest).map_err(|e| match e {
            uv::IoOpError::Uv(e) => IoError::from_uv(e),
            uv::IoOpError::Os(e) => IoError::Os(e),
        })
    }

    /// Deregisters the source and drops it (closing a socket); its callback
    /// never runs again, and it keeps the loop alive only until the next
    /// run's close phase, as a closing libuv handle. From inside its own
    /// callback, the source is dropped when the callback returns.
    ///
    /// ```
    /// use timerloop::{EventLoop, IoError, mio};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (a, _b) = mio::net::UnixStream::pair().unwrap();
    /// let h = lp.insert_io(a, mio::Interest::READABLE, |_, _, _| {}).unwrap();
    /// lp.close_io(h).unwrap();
    /// assert!(matches!(lp.close_io(h), Err(IoError::Stale)));
    /// lp.run().unwrap(); // nothing left to wait for
    /// ```
    ///
    /// # Errors
    ///
    /// [`IoError::Stale`] if already closed or removed;
    /// [`IoError::ForeignLoop`].
    pub fn close_io(&mut self, h: IoHandle) -> Result<(), IoError> {
        let key = self.io_key(h)?;
        self.uv.io_close(key).map_err(IoError::from_uv)
    }

    /// Deregisters the source and gives it back; its callback never runs
    /// again.
    ///
    /// ```
    /// use timerloop::{EventLoop, mio};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (a, _b) = mio::net::UnixStream::pair().unwrap();
    /// let h = lp.insert_io(a, mio::Interest::READABLE, |_, _, _| {}).unwrap();
    /// let a: mio::net::UnixStream = lp.remove_io(h).unwrap();
    /// assert_eq!(lp.stats().io_sources, 0);
    /// # drop(a);
    /// ```
    ///
    /// # Errors
    ///
    /// [`IoError::Stale`], [`IoError::ForeignLoop`]; [`IoError::WrongType`]
    /// if `S` is not the source's type (nothing is removed);
    /// [`IoError::Busy`] from inside its own callback (use
    /// [`close_io`](Self::close_io) there).
    pub fn remove_io<S: 'static>(&mut self, h: IoHandle) -> Result<S, IoError> {
        let key = self.io_key(h)?;
        let src = self.uv.io_source(key).map_err(IoError::from_uv)?;
        if !src.as_any().is::<S>() {
            return Err(IoError::WrongType);
        }
        let src = self.uv.io_take(key).map_err(IoError::from_uv)?;
        match src.into_any().downcast::<S>() {
            Ok(s) => Ok(*s),
            Err(_) => Err(IoError::WrongType),
        }
    }

    /// Whether `h` names a registered source of this loop.
    ///
    /// ```
    /// use timerloop::{EventLoop, mio};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (a, _b) = mio::net::UnixStream::pair().unwrap();
    /// let h = lp.insert_io(a, mio::Interest::READABLE, |_, _, _| {}).unwrap();
    /// assert!(lp.io_is_active(h));
    /// lp.close_io(h).unwrap();
    /// assert!(!lp.io_is_active(h));
    /// ```
    pub fn io_is_active(&self, h: IoHandle) -> bool {
        h.loop_id == self.id && self.uv.is_active(h.key).unwrap_or(false)
    }

    /// Lets the loop end while the source is registered (Node's
    /// `socket.unref()`); its callback still runs whenever the loop polls.
    ///
    /// ```
    /// use timerloop::{EventLoop, mio};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (a, _b) = mio::net::UnixStream::pair().unwrap();
    /// let h = lp.insert_io(a, mio::Interest::READABLE, |_, _, _| {}).unwrap();
    /// lp.unref_io(h).unwrap();
    /// lp.run().unwrap(); // returns: an unrefed source keeps nothing alive
    /// lp.ref_io(h).unwrap();
    /// assert!(lp.is_alive());
    /// # lp.close_io(h).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`IoError::Stale`], [`IoError::ForeignLoop`].
    pub fn unref_io(&mut self, h: IoHandle) -> Result<(), IoError> {
        let key = self.io_key(h)?;
        self.uv.io_check(key).map_err(IoError::from_uv)?;
        self.uv.unref_handle(key).map_err(IoError::from_uv)
    }

    /// On a virtual clock, how long the registered sources must be quiet,
    /// in real time, before the loop lets virtual time jump to its next
    /// timer (default 10 ms; zero: jump at once, as with no sources). A
    /// server's timeouts can then be tested deterministically on real
    /// sockets: bytes in flight on loopback arrive before any timer that
    /// they would have refreshed fires. Bytes a sender still holds are not
    /// in flight: a TCP socket with a small write not yet acknowledged
    /// holds the next small one back (Nagle's algorithm) until the peer's
    /// delayed acknowledgement, about 40 ms on Linux, so test clients
    /// should set `TCP_NODELAY` (or the test a longer grace). The grace
    /// bets on the scheduler: a peer on another thread or process must
    /// write within it, which a machine busy with other work can delay
    /// past a short grace; keep the default or longer on shared CI (the
    /// testing guide has measurements). No effect on a real clock, or
    /// while no source is registered.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// assert_eq!(lp.io_grace(), Duration::from_millis(10));
    /// lp.set_io_grace(Duration::from_millis(50));
    /// assert_eq!(lp.io_grace(), Duration::from_millis(50));
    /// ```
    pub fn set_io_grace(&mut self, grace: std::time::Duration) {
        self.uv.set_io_grace(grace);
    }

    /// The virtual clock's I/O grace (see [`set_io_grace`](Self::set_io_grace)).
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// assert!(!EventLoop::with_virtual_clock().io_grace().is_zero());
    /// ```
    pub fn io_grace(&self) -> std::time::Duration {
        self.uv.io_grace()
    }

    /// Makes the source keep the loop alive again (`socket.ref()`).
    ///
    /// # Errors
    ///
    /// As [`unref_io`](Self::unref_io).
    ///
    /// ```
    /// use timerloop::{EventLoop, mio};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (a, _b) = mio::net::UnixStream::pair().unwrap();
    /// let h = lp.insert_io(a, mio::Interest::READABLE, |_, _, _| {}).unwrap();
    /// lp.unref_io(h).unwrap();
    /// lp.ref_io(h).unwrap();
    /// assert!(lp.is_alive());
    /// # lp.close_io(h).unwrap();
    /// ```
    pub fn ref_io(&mut self, h: IoHandle) -> Result<(), IoError> {
        let key = self.io_key(h)?;
        self.uv.io_check(key).map_err(IoError::from_uv)?;
        self.uv.ref_handle(key).map_err(IoError::from_uv)
    }
}

/// What the loop tells a source's callback: which source, and what it is
/// ready for.
///
/// # Examples
///
/// ```
/// use std::{cell::Cell, io::Write, rc::Rc};
/// use timerloop::{EventLoop, mio};
/// let seen = Rc::new(Cell::new(None));
/// let mut lp = EventLoop::with_virtual_clock();
/// let (mut a, b) = mio::net::UnixStream::pair().unwrap();
/// a.write_all(b"x").unwrap();
/// let s = seen.clone();
/// let h = lp
///     .insert_io(b, mio::Interest::READABLE, move |lp, _, ev| {
///         s.set(Some(ev.handle));
///         lp.close_io(ev.handle).unwrap();
///     })
///     .unwrap();
/// lp.run().unwrap();
/// assert_eq!(seen.get(), Some(h));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IoEvent {
    /// The source's handle (to close it, change its interest, or hand to
    /// its timers).
    pub handle: IoHandle,
    /// What it is ready for.
    pub readiness: Readiness,
}

/// [`EventLoop::insert_io`] failed: the OS error, and the source, given
/// back unregistered (never silently dropped).
///
/// Its `Display` includes the OS error's message, so
/// [`source()`](std::error::Error::source) continues below it, with the
/// OS error's own `source()` (a chain walked by anyhow or eyre prints
/// each message once); the OS error itself is the field `error`.
///
/// ```
/// use timerloop::{EventLoop, InsertError, mio};
/// let mut lp = EventLoop::with_virtual_clock();
/// let (a, _b) = mio::net::UnixStream::pair().unwrap();
/// match lp.insert_io(a, mio::Interest::READABLE, |_, _, _| {}) {
///     Ok(h) => lp.close_io(h).unwrap(),
///     Err(InsertError { source, error, .. }) => {
///         eprintln!("cannot watch {source:?}: {error}");
///     }
/// }
/// ```
#[non_exhaustive]
pub struct InsertError<S> {
    /// The source, not registered.
    pub source: S,
    /// Why.
    pub error: std::io::Error,
}

impl<S> fmt::Debug for InsertError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InsertError")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl<S> fmt::Display for InsertError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the I/O source could not be registered: {}", self.error)
    }
}

/// The OS error's own source: the OS error is in `Display` already.
///
/// ```
/// use std::error::Error as _;
/// use std::io;
/// use timerloop::{EventLoop, mio::{self, Interest, Registry, Token}};
/// struct Refuses; // a source the OS will not watch
/// impl mio::event::Source for Refuses {
///     fn register(&mut self, _: &Registry, _: Token, _: Interest) -> io::Result<()> {
///         Err(io::Error::other("no room"))
///     }
///     fn reregister(&mut self, _: &Registry, _: Token, _: Interest) -> io::Result<()> {
///         Ok(())
///     }
///     fn deregister(&mut self, _: &Registry) -> io::Result<()> {
///         Ok(())
///     }
/// }
/// let mut lp = EventLoop::with_virtual_clock();
/// let err = lp.insert_io(Refuses, Interest::READABLE, |_, _, _| {}).unwrap_err();
/// assert_eq!(err.to_string(), "the I/O source could not be registered: no room");
/// assert!(err.source().is_none());
/// assert_eq!(err.error.to_string(), "no room");
/// ```
impl<S> std::error::Error for InsertError<S> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

/// What an operation on a registered source can fail with.
///
/// The `Display` of [`Os`](IoError::Os) includes the OS error's message,
/// so [`source()`](std::error::Error::source) continues below it, with
/// the OS error's own `source()` (a chain walked by anyhow or eyre prints
/// each message once); the OS error itself is the variant's field.
///
/// ```
/// use timerloop::{EventLoop, IoError, mio};
/// let mut lp = EventLoop::with_virtual_clock();
/// let (a, _b) = mio::net::UnixStream::pair().unwrap();
/// let h = lp.insert_io(a, mio::Interest::READABLE, |_, _, _| {}).unwrap();
/// lp.close_io(h).unwrap();
/// let e = lp.set_io_interest(h, mio::Interest::WRITABLE).unwrap_err();
/// assert!(matches!(e, IoError::Stale));
/// assert_eq!(e.to_string(), "the source was closed or removed");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum IoError {
    /// The source was closed or removed (its handle may now name nothing,
    /// or something else, which it never touches).
    Stale,
    /// The handle was made by another loop.
    ForeignLoop,
    /// The source is lent to its own running callback, which has it as
    /// its argument.
    Busy,
    /// The source is not of the type asked for.
    WrongType,
    /// The operating system refused.
    Os(std::io::Error),
}

impl IoError {
    fn from_uv(e: uv::UvError) -> IoError {
        match e {
            uv::UvError::Busy => IoError::Busy,
            // Closing, stale, another kind of handle: as far as an
            // IoHandle can tell, the source is gone.
            _ => IoError::Stale,
        }
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IoError::Stale => f.write_str("the source was closed or removed"),
            IoError::ForeignLoop => f.write_str("the handle belongs to another EventLoop"),
            IoError::Busy => f.write_str(
                "the source is lent to its own running callback (use the callback's argument)",
            ),
            IoError::WrongType => f.write_str("the source is not of the type asked for"),
            IoError::Os(e) => write!(f, "the OS refused: {e}"),
        }
    }
}

/// The OS error's own source, for [`Os`](IoError::Os): the OS error is in
/// `Display` already.
///
/// ```
/// use std::error::Error as _;
/// use timerloop::IoError;
/// let e = IoError::Os(std::io::Error::from_raw_os_error(9));
/// assert!(e.to_string().starts_with("the OS refused: "));
/// assert!(e.source().is_none());
/// ```
impl std::error::Error for IoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IoError::Os(e) => e.source(),
            _ => None,
        }
    }
}
