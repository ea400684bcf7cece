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

use std::fmt;

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

/// A registered I/O source (see [`EventLoop::register_io`]): small,
/// `Copy`, generation checked.
///
/// ```
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// let (mut a, _b) = mio::net::UnixStream::pair().unwrap();
/// let h = lp.register_io(&mut a, mio::Interest::READABLE, |_, _| {}).unwrap();
/// lp.deregister_io(h, &mut a).unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IoHandle {
    key: Key,
    loop_id: u32,
}

impl EventLoop {
    /// Starts a piece of off-thread work: returns a `Send` [`Completion`] to
    /// hand to the thread doing it. When that thread calls
    /// [`Completion::complete`], `cb` runs on the loop's thread in the next
    /// poll phase, as an I/O callback (ticks and microtasks drain after it).
    /// The loop stays alive while the completion is outstanding; dropping it
    /// uncompleted cancels `cb`.
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

    /// Registers a mio I/O source; `cb` runs in the poll phase, as an I/O
    /// callback, with the source's readiness. The source keeps the loop
    /// alive until [`deregister_io`](Self::deregister_io).
    ///
    /// ```
    /// use std::{cell::Cell, io::Write, rc::Rc};
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (mut tx, rx) = mio::net::UnixStream::pair().unwrap();
    /// let rx = Rc::new(std::cell::RefCell::new(rx));
    /// let (r, handle) = (rx.clone(), Rc::new(Cell::new(None)));
    /// let h2 = handle.clone();
    /// let h = lp
    ///     .register_io(&mut *rx.borrow_mut(), mio::Interest::READABLE, move |lp, ready| {
    ///         assert!(ready.readable);
    ///         lp.deregister_io(h2.get().unwrap(), &mut *r.borrow_mut()).unwrap();
    ///     })
    ///     .unwrap();
    /// handle.set(Some(h));
    /// tx.write_all(b"x").unwrap();
    /// lp.run().unwrap(); // returns once the source is deregistered
    /// assert_eq!(lp.stats().io_sources, 0);
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error if the source cannot be registered.
    pub fn register_io<S, R>(
        &mut self,
        source: &mut S,
        interest: mio::Interest,
        mut cb: impl FnMut(&mut EventLoop, Readiness) -> R + 'static,
    ) -> std::io::Result<IoHandle>
    where
        S: mio::event::Source + ?Sized,
        R: CallbackResult,
    {
        let key = self
            .uv
            .io_register(source, interest, move |lp: &mut EventLoop, r| {
                lp.callback_scope(CallbackKind::Io, &mut |lp| cb(lp, r).into_result());
            })?;
        Ok(IoHandle {
            key,
            loop_id: self.id,
        })
    }

    /// Deregisters a source registered with [`register_io`](Self::register_io);
    /// its callback never runs again.
    ///
    /// ```
    /// use timerloop::{EventLoop, TimerError};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (mut a, _b) = mio::net::UnixStream::pair().unwrap();
    /// let h = lp.register_io(&mut a, mio::Interest::READABLE, |_, _| {}).unwrap();
    /// lp.deregister_io(h, &mut a).unwrap();
    /// assert_eq!(lp.deregister_io(h, &mut a), Err(TimerError::Stale));
    /// ```
    ///
    /// # Errors
    ///
    /// [`TimerError::Stale`] if the source was already deregistered;
    /// [`TimerError::ForeignLoop`] for another loop's handle.
    pub fn deregister_io<S: mio::event::Source + ?Sized>(
        &mut self,
        h: IoHandle,
        source: &mut S,
    ) -> Result<(), TimerError> {
        if h.loop_id != self.id {
            return Err(TimerError::ForeignLoop);
        }
        self.uv
            .io_close(h.key, source)
            .map_err(|_| TimerError::Stale)
    }
}
