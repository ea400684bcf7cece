//! [`AsyncSource`]: any mio event source, for tasks, on the loop's poll.

use std::cell::{Ref, RefMut};
use std::fmt;
use std::io;
use std::task::{Context, Poll};

use mio::Interest;

use super::{Dir, Registration};

/// A mio event source (a `mio::net::UdpSocket`, a `mio::net::UnixStream`,
/// a `mio::unix::pipe`, signal-hook-mio's `Signals`, or a source of your
/// own) registered on the thread's current loop, for tasks: tokio's
/// `AsyncFd`, for mio sources.
///
/// An operation is tried first; only a [`WouldBlock`](io::ErrorKind::WouldBlock)
/// waits, for the source's next readiness event in the loop's poll phase,
/// and then it is tried again. The source is a refed handle of its loop,
/// as a [`TcpStream`](super::TcpStream) is (the loop stays alive while it
/// exists), and is deregistered when dropped (or taken back with
/// [`into_inner`](Self::into_inner)). What `timerloop::net`'s
/// module docs say of sockets holds for it: an operation that would wait
/// once the loop is gone fails instead.
///
/// An operation must report "not now" as `WouldBlock` (mio's sources do):
/// the source's events are edge-triggered, and only a `WouldBlock` says
/// that the next event is worth waiting for.
///
/// With the features `futures-io` and `tokio-io`, an `AsyncSource` of a
/// byte source, and a shared reference to one, is `AsyncRead` (for
/// `S: Read`) and `AsyncWrite` (for `S: Write +` [`HalfClose`]: a
/// `mio::net::UnixStream`, a pipe's writing end): buffered readers,
/// `lines`, `copy` and `copy_bidirectional` work on it. Its shutdown is
/// the source's [`HalfClose::half_close`]. Like the poll API, the traits
/// keep one waker per direction, their latest caller's: one task may read
/// through a shared reference while another writes, but of two tasks
/// reading (or writing) through one at once, only the latest is woken.
///
/// Inside an operation's closure, use the `&mut S` it is given: the
/// source is borrowed for the operation, and [`get_ref`](Self::get_ref)
/// there panics.
///
/// tokio's readiness guards (`AsyncFd::readable()` returning a guard
/// with `clear_ready` and `try_io`) are not here: their loop (wait, try,
/// clear the readiness on `WouldBlock`, wait again) is
/// [`async_io`](Self::async_io) (or [`poll_io`](Self::poll_io)) in one
/// call, and a single try is [`try_io`](Self::try_io).
///
/// ```
/// use timerloop::{EventLoop, mio::Interest, net::AsyncSource};
/// let mut lp = EventLoop::new();
/// let got = lp
///     .block_on(async {
///         let a = AsyncSource::new(mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap())?);
///         let b = AsyncSource::new(mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap())?);
///         let to = b.get_ref().local_addr()?;
///         a.async_io(Interest::WRITABLE, |s| s.send_to(b"ping", to)).await?;
///         let mut buf = [0; 16];
///         let (n, from) = b.async_io(Interest::READABLE, |s| s.recv_from(&mut buf)).await?;
///         assert_eq!(from, a.get_ref().local_addr()?);
///         std::io::Result::Ok(buf[..n].to_vec())
///     })
///     .unwrap()
///     .unwrap();
/// assert_eq!(got, b"ping");
/// ```
pub struct AsyncSource<S: mio::event::Source + 'static> {
    io: Registration<S>,
}

impl<S: mio::event::Source + 'static> AsyncSource<S> {
    /// Registers `source` on the thread's current loop for reading and
    /// writing. The source must be in non-blocking mode (mio's are).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::AsyncSource};
    /// let mut lp = EventLoop::new();
    /// let sock = mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    /// let s = lp.scope(|| AsyncSource::new(sock));
    /// assert!(s.get_ref().local_addr().is_ok());
    /// ```
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    #[track_caller]
    pub fn new(source: S) -> AsyncSource<S> {
        AsyncSource::with_interest(source, Interest::READABLE | Interest::WRITABLE)
    }

    /// Registers `source` for `interest` only: a source that cannot be
    /// written (a pipe's reading end, a signal source) is registered for
    /// [`Interest::READABLE`].
    ///
    /// ```
    /// use timerloop::{EventLoop, mio::Interest, net::AsyncSource};
    /// let mut lp = EventLoop::new();
    /// let (tx, rx) = mio::unix::pipe::new().unwrap();
    /// let got = lp
    ///     .block_on(async move {
    ///         use std::io::{Read, Write};
    ///         let rx = AsyncSource::with_interest(rx, Interest::READABLE);
    ///         let tx = AsyncSource::with_interest(tx, Interest::WRITABLE);
    ///         tx.async_io(Interest::WRITABLE, |p| p.write(b"hi")).await?;
    ///         let mut buf = [0; 8];
    ///         let n = rx.async_io(Interest::READABLE, |p| p.read(&mut buf)).await?;
    ///         std::io::Result::Ok(buf[..n].to_vec())
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(got, b"hi");
    /// ```
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    #[track_caller]
    pub fn with_interest(source: S, interest: Interest) -> AsyncSource<S> {
        AsyncSource {
            io: Registration::reclaimable(source, interest),
        }
    }

    /// Deregisters the source from its loop and gives it back, as tokio's
    /// `AsyncFd::into_inner`: the loop no longer watches it, so it can be
    /// registered again at once (a new `AsyncSource`, on this loop or
    /// another) or handed to other code. That works wherever it is called
    /// (a task, a callback, away from the loop), because the loop keeps a
    /// clone of its poller's registry for it, made at the first
    /// registration of an `AsyncSource` on the loop (one more descriptor
    /// per loop, closed with the loop). The loop lets go of its handle of
    /// the source at its next flush point (at once in a task), so a loop
    /// with nothing else to do ends then.
    ///
    /// ```
    /// use std::io::{Read, Write};
    /// use timerloop::{EventLoop, mio::Interest, net::AsyncSource};
    /// let mut lp = EventLoop::new();
    /// let (a, b) = mio::net::UnixStream::pair().unwrap();
    /// let got = lp
    ///     .block_on(async move {
    ///         let a = AsyncSource::new(a);
    ///         a.async_io(Interest::WRITABLE, |s| s.write(b"one")).await?;
    ///         let mut a = a.into_inner(); // a plain mio stream again
    ///         a.write_all(b" two")?;
    ///         let b = AsyncSource::new(b);
    ///         let mut buf = [0; 16];
    ///         let n = b.async_io(Interest::READABLE, |s| s.read(&mut buf)).await?;
    ///         let b = AsyncSource::new(b.into_inner()); // registered again at once
    ///         drop(b);
    ///         std::io::Result::Ok(buf[..n].to_vec())
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(got, b"one two");
    /// ```
    ///
    /// # Panics
    ///
    /// If the future of an operation on the source was leaked
    /// (`std::mem::forget`): it holds the source.
    pub fn into_inner(self) -> S {
        self.io.into_inner()
    }

    /// The source, borrowed (for its addresses and options). Let the
    /// borrow go before the next operation on this `AsyncSource` and
    /// before an `.await`, and inside an operation's closure use the
    /// `&mut S` it is given: the source is in a `RefCell` shared with the
    /// loop, which borrows it to register and deregister it, and a borrow
    /// still held then panics (with a message that says so).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::AsyncSource};
    /// let mut lp = EventLoop::new();
    /// let sock = mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    /// let s = lp.scope(|| AsyncSource::new(sock));
    /// s.get_ref().set_ttl(7).unwrap();
    /// assert_eq!(s.get_ref().ttl().unwrap(), 7);
    /// ```
    pub fn get_ref(&self) -> Ref<'_, S> {
        self.io.source()
    }

    /// The source, borrowed mutably (as [`get_ref`](Self::get_ref)).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::AsyncSource};
    /// let mut lp = EventLoop::new();
    /// let sock = mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    /// let mut s = lp.scope(|| AsyncSource::new(sock));
    /// s.get_mut().set_broadcast(true).unwrap();
    /// assert!(s.get_ref().broadcast().unwrap());
    /// ```
    pub fn get_mut(&mut self) -> RefMut<'_, S> {
        self.io.source_mut()
    }

    /// Whether the source keeps its loop alive (by default it does, as a
    /// Node handle).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::AsyncSource};
    /// let mut lp = EventLoop::new();
    /// let (_tx, rx) = mio::unix::pipe::new().unwrap();
    /// let s = lp.scope(|| AsyncSource::new(rx));
    /// assert!(s.has_ref());
    /// ```
    pub fn has_ref(&self) -> bool {
        self.io.has_ref()
    }

    /// Makes the source keep its loop alive (`true`, the default) or not
    /// (`false`, Node's `unref()`): a task waiting on an unrefed source
    /// alone does not keep the loop running (a signal source a program
    /// listens on in the background, as Node's signal handles are).
    ///
    /// ```
    /// use timerloop::{EventLoop, mio::Interest, net::AsyncSource, task};
    /// let mut lp = EventLoop::new();
    /// let (_tx, rx) = mio::unix::pipe::new().unwrap();
    /// lp.scope(|| {
    ///     let rx = AsyncSource::with_interest(rx, Interest::READABLE);
    ///     rx.set_ref(false);
    ///     task::spawn(async move {
    ///         use std::io::Read;
    ///         rx.async_io(Interest::READABLE, |p| p.read(&mut [0; 8])).await
    ///     });
    /// });
    /// lp.run().unwrap(); // returns: the read waits on an unrefed pipe
    /// ```
    pub fn set_ref(&self, refed: bool) {
        self.io.set_ref(refed);
    }

    /// Runs `op` on the source until it does not say `WouldBlock`, waiting
    /// for the source to become readable ([`Interest::READABLE`]) or
    /// writable ([`Interest::WRITABLE`]) between tries, and returns what
    /// it returned. `Interrupted` is tried again at once. Dropping the
    /// future between tries does nothing more: each try is `op` alone.
    ///
    /// ```
    /// use timerloop::{EventLoop, mio::Interest, net::AsyncSource};
    /// let mut lp = EventLoop::new();
    /// let n = lp
    ///     .block_on(async {
    ///         let s = AsyncSource::new(mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap())?);
    ///         let me = s.get_ref().local_addr()?;
    ///         s.async_io(Interest::WRITABLE, |s| s.send_to(b"to myself", me)).await?;
    ///         let mut buf = [0; 64];
    ///         s.async_io(Interest::READABLE, |s| s.recv(&mut buf)).await
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(n, 9);
    /// ```
    ///
    /// # Errors
    ///
    /// What `op` returned; [`io::ErrorKind::InvalidInput`] if `interest`
    /// is not exactly one of readable and writable, or not one the source
    /// was registered for (it would wait for ever); the registration's
    /// error if the loop could not register the source;
    /// [`io::ErrorKind::Other`] if it would wait and the loop is gone.
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut op: impl FnMut(&mut S) -> io::Result<R>,
    ) -> io::Result<R> {
        super::wait(self.io.rc(), |cx| self.poll_io(cx, interest, &mut op)).await
    }

    /// [`async_io`](Self::async_io) as a poll function: for a type's own
    /// `poll_` methods (a `Stream` of datagrams, an `AsyncRead`).
    ///
    /// ```
    /// use std::io::Read;
    /// use timerloop::{EventLoop, mio::Interest, net::AsyncSource};
    /// let mut lp = EventLoop::new();
    /// let (mut tx, rx) = mio::unix::pipe::new().unwrap();
    /// std::io::Write::write_all(&mut tx, b"abc").unwrap();
    /// drop(tx);
    /// let got = lp
    ///     .block_on(async move {
    ///         let rx = AsyncSource::with_interest(rx, Interest::READABLE);
    ///         let mut all = Vec::new();
    ///         loop {
    ///             let mut buf = [0; 2];
    ///             let n = std::future::poll_fn(|cx| {
    ///                 rx.poll_io(cx, Interest::READABLE, |p| p.read(&mut buf))
    ///             })
    ///             .await?;
    ///             if n == 0 {
    ///                 break; // the writing end is closed
    ///             }
    ///             all.extend_from_slice(&buf[..n]);
    ///         }
    ///         std::io::Result::Ok(all)
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(got, b"abc");
    /// ```
    ///
    /// # Errors
    ///
    /// As [`async_io`](Self::async_io).
    pub fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        interest: Interest,
        op: impl FnMut(&mut S) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        match self.dir(interest) {
            Ok(dir) => self.io.poll_io(cx, dir, op),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    /// Runs `op` once, now, with no wait (tokio's `AsyncFd::try_io`, which
    /// gives its closure `&T`): what it returned. A `WouldBlock` clears
    /// the readiness of `interest`'s direction, so the next wait in it
    /// (an [`async_io`](Self::async_io), a `UdpSocket`'s `readable`)
    /// waits for the loop's next event. `op` runs whatever the last
    /// readiness was (tokio's skips it while that said `WouldBlock`).
    ///
    /// ```
    /// use timerloop::{EventLoop, mio::Interest, net::AsyncSource};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let s = AsyncSource::new(mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap())?);
    ///     let mut buf = [0; 16];
    ///     let e = s.try_io(Interest::READABLE, |s| s.recv(&mut buf)).unwrap_err();
    ///     assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock); // nothing sent yet
    ///     let me = s.get_ref().local_addr()?;
    ///     s.try_io(Interest::WRITABLE, |s| s.send_to(b"hi", me))?;
    ///     let n = s.async_io(Interest::READABLE, |s| s.recv(&mut buf)).await?;
    ///     assert_eq!(&buf[..n], b"hi");
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// What `op` returned; [`io::ErrorKind::InvalidInput`] if `interest`
    /// is not exactly one of readable and writable, or not one the source
    /// was registered for; the registration's error if the loop could not
    /// register the source.
    pub fn try_io<R>(
        &self,
        interest: Interest,
        op: impl FnOnce(&mut S) -> io::Result<R>,
    ) -> io::Result<R> {
        self.io.try_io(self.dir(interest)?, op)
    }

    /// Its registration's shared state, for a [`wait`](super::wait).
    pub(super) fn rc(&self) -> std::rc::Rc<super::Inner<S>> {
        self.io.rc()
    }

    /// Waits until the source may be ready for `interest` (readable,
    /// writable or both): the readiness waits of the types built on it.
    pub(super) fn poll_ready(
        &self,
        cx: &mut Context<'_>,
        interest: Interest,
    ) -> Poll<io::Result<super::Ready>> {
        self.io.poll_ready(cx, interest)
    }

    /// Runs `op` once, now, whatever the last readiness was.
    #[cfg(any(feature = "futures-io", feature = "tokio-io"))]
    pub(super) fn try_io_now<R>(&self, op: impl FnOnce(&mut S) -> io::Result<R>) -> io::Result<R> {
        op(&mut self.io.source_mut())
    }

    /// The direction `interest` waits in, if the source can wait for it.
    fn dir(&self, interest: Interest) -> io::Result<Dir> {
        let registered = self.io.interest();
        if interest == Interest::READABLE && registered.is_readable() {
            Ok(Dir::Read)
        } else if interest == Interest::WRITABLE && registered.is_writable() {
            Ok(Dir::Write)
        } else {
            Err(bad_interest(interest, registered))
        }
    }
}

#[cold]
fn bad_interest(asked: Interest, registered: Interest) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "AsyncSource: an operation waits for READABLE or WRITABLE alone, one the source \
             was registered for ({registered:?}); it asked for {asked:?}"
        ),
    )
}

impl<S: mio::event::Source + fmt::Debug + 'static> fmt::Debug for AsyncSource<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncSource")
            .field("source", &self.io)
            .field("interest", &self.io.interest())
            .finish()
    }
}

/// A byte source whose write direction can be closed on its own, the
/// reading one left open: what an [`AsyncSource`]'s `poll_shutdown`
/// (tokio) and `poll_close` (futures) do, with the `tokio-io` and
/// `futures-io` features. Implement it for a source of your own to make
/// its `AsyncSource` an `AsyncWrite`.
///
/// ```
/// use timerloop::net::HalfClose;
/// let (a, mut b) = mio::net::UnixStream::pair().unwrap();
/// b.half_close().unwrap();
/// let mut buf = [0; 4];
/// // The peer reads the end of the stream (0), where it would wait.
/// assert_eq!(std::io::Read::read(&mut &a, &mut buf).unwrap(), 0);
/// ```
pub trait HalfClose {
    /// Closes the write direction: the peer reads the end of the stream
    /// once what was written is read (a pipe's `Sender`: nothing; its
    /// reader sees the end when the `AsyncSource` is dropped).
    ///
    /// ```
    /// use timerloop::net::HalfClose;
    /// let (_a, mut b) = mio::net::UnixStream::pair().unwrap();
    /// b.half_close().unwrap();
    /// assert!(std::io::Write::write(&mut b, b"late").is_err()); // closed
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error (`NotConnected`, for one).
    fn half_close(&mut self) -> io::Result<()>;
}

/// `shutdown(Write)`.
impl HalfClose for mio::net::TcpStream {
    fn half_close(&mut self) -> io::Result<()> {
        self.shutdown(std::net::Shutdown::Write)
    }
}

/// `shutdown(Write)`.
#[cfg(unix)]
impl HalfClose for mio::net::UnixStream {
    fn half_close(&mut self) -> io::Result<()> {
        self.shutdown(std::net::Shutdown::Write)
    }
}

/// Nothing: a pipe has one direction, and its reader sees the end once
/// the writing end is dropped (drop the `AsyncSource`).
#[cfg(unix)]
impl HalfClose for mio::unix::pipe::Sender {
    fn half_close(&mut self) -> io::Result<()> {
        Ok(())
    }
}
