//! [`TcpListener`] and [`TcpStream`].

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, ToSocketAddrs};
use std::task::{Context, Poll};

use super::{Dir, Interest, Ready, Registration};

/// A TCP listener on the current loop (`tokio::net::TcpListener`'s shape;
/// Node's `net.Server`). Keeps its loop alive while it exists.
///
/// ```
/// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
/// let mut lp = EventLoop::new();
/// let echoed = lp
///     .block_on(async {
///         let listener = TcpListener::bind("127.0.0.1:0").await?;
///         let addr = listener.local_addr()?;
///         let server = timerloop::task::spawn(async move {
///             let (mut s, _) = listener.accept().await?;
///             let mut buf = [0; 16];
///             let n = s.read(&mut buf).await?;
///             s.write_all(&buf[..n]).await?;
///             std::io::Result::Ok(())
///         });
///         let mut c = TcpStream::connect(addr).await?;
///         c.write_all(b"ping").await?;
///         let mut buf = [0; 16];
///         let n = c.read(&mut buf).await?;
///         server.await.unwrap()?;
///         std::io::Result::Ok(buf[..n].to_vec())
///     })
///     .unwrap()
///     .unwrap();
/// assert_eq!(echoed, b"ping");
/// ```
pub struct TcpListener {
    io: Registration<mio::net::TcpListener>,
}

impl fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpListener").field("io", &self.io).finish()
    }
}

/// The first address of `addr` that `f` succeeds with.
pub(super) fn each_addr<A: ToSocketAddrs, T>(
    addr: A,
    mut f: impl FnMut(SocketAddr) -> io::Result<T>,
) -> io::Result<T> {
    let mut last = None;
    for a in addr.to_socket_addrs()? {
        match f(a) {
            Ok(t) => return Ok(t),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to use")))
}

/// The listen backlog of [`TcpListener::bind`]: Node's default (its
/// `server.listen`), where std and mio ask for 128.
const BACKLOG: i32 = 511;

impl TcpListener {
    /// Binds a listener to `addr` (the first of its addresses that works),
    /// with `SO_REUSEADDR`, as tokio and Node do. Resolving a host name
    /// blocks the thread; pass an IP address to avoid that.
    ///
    /// It listens with Node's default backlog, 511 connections waiting
    /// to be accepted (capped by the system's, `net.core.somaxconn` on
    /// Linux), where std and mio ask for 128: past the backlog, a client's
    /// connect waits for its SYN to be sent again, a second later on
    /// Linux. For another backlog, bind and listen with `socket2` and hand
    /// the listener to [`from_std`](Self::from_std).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::TcpListener};
    /// let mut lp = EventLoop::new();
    /// let port = lp
    ///     .block_on(async { TcpListener::bind("127.0.0.1:0").await?.local_addr() })
    ///     .unwrap()
    ///     .unwrap()
    ///     .port();
    /// assert_ne!(port, 0);
    /// ```
    ///
    /// # Errors
    ///
    /// The resolver's error; [`io::ErrorKind::InvalidInput`] if `addr`
    /// has no address; otherwise the OS error of the last address tried.
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        let l = each_addr(addr, |a| {
            let l = mio::net::TcpListener::bind(a)?;
            // Listening again sets the backlog of a listening socket.
            socket2::SockRef::from(&l).listen(BACKLOG)?;
            Ok(l)
        })?;
        Ok(TcpListener::from_mio(l))
    }

    /// A listener from a bound, listening std listener (for options the
    /// standard library does not set, such as `SO_REUSEPORT` through
    /// `socket2`). It is made non-blocking here.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::TcpListener};
    /// let std_l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    /// let mut lp = EventLoop::new();
    /// let l = lp.scope(|| TcpListener::from_std(std_l)).unwrap();
    /// assert!(l.local_addr().is_ok());
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error of making it non-blocking.
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    #[track_caller]
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        Ok(TcpListener::from_mio(mio::net::TcpListener::from_std(
            listener,
        )))
    }

    #[track_caller]
    fn from_mio(l: mio::net::TcpListener) -> TcpListener {
        TcpListener {
            io: Registration::new(l, mio::Interest::READABLE),
        }
    }

    /// Accepts a connection: the stream, registered with the loop current
    /// on this thread (as tokio's with the current runtime), and the
    /// peer's address.
    ///
    /// # Errors
    ///
    /// The OS error of `accept` (running out of descriptors, for one); the
    /// listener stays usable. [`io::ErrorKind::Other`] if it would wait and
    /// the listener's loop was dropped (see the [module docs](super)).
    ///
    /// Out of descriptors (`EMFILE`, `ENFILE`), the connection stays
    /// queued, so the next `accept` fails again at once: a loop that only
    /// logs the error and accepts again spins (as tokio's does; libuv
    /// closes such connections with a spare descriptor). Back off first,
    /// `time::sleep` a few milliseconds, so that the loop's timers and
    /// other sockets run and descriptors can be freed.
    ///
    /// # Panics
    ///
    /// If a connection is accepted while no loop is current on this
    /// thread (polled on another executor after the loop was dropped), as
    /// tokio's does outside a runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     assert_eq!(s.peer_addr()?, c.local_addr()?);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        super::wait(self.io.rc(), |cx| self.poll_accept(cx)).await
    }

    /// [`accept`](Self::accept) as a poll function.
    ///
    /// # Errors
    ///
    /// As [`accept`](Self::accept).
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     let _c2 = TcpStream::connect(l.local_addr()?).await?;
    ///     let (_s2, peer) = std::future::poll_fn(|cx| l.poll_accept(cx)).await?;
    ///     let _ = (&mut s, &mut c, peer);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        self.io
            .poll_io(cx, Dir::Read, |l| l.accept())
            .map_ok(|(s, a)| (TcpStream::from_mio(s), a))
    }

    /// The address the listener is bound to.
    ///
    /// # Errors
    ///
    /// The OS error.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     assert_eq!(l.local_addr()?.ip(), std::net::Ipv4Addr::LOCALHOST);
    ///     let _ = (&mut s, &mut c);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.source().local_addr()
    }

    /// `IP_TTL`: the time-to-live of the packets of the connections it
    /// accepts.
    ///
    /// # Errors
    ///
    /// The OS error.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::TcpListener};
    /// let mut lp = EventLoop::new();
    /// let ttl = lp
    ///     .block_on(async { TcpListener::bind("127.0.0.1:0").await?.ttl() })
    ///     .unwrap()
    ///     .unwrap();
    /// assert!(ttl > 0);
    /// ```
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.source().ttl()
    }

    /// Sets `IP_TTL`.
    ///
    /// # Errors
    ///
    /// The OS error.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::TcpListener};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     l.set_ttl(100)?;
    ///     assert_eq!(l.ttl()?, 100);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.source().set_ttl(ttl)
    }

    /// Whether the listener keeps its loop alive (by default it does, as
    /// a listening Node server).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::TcpListener};
    /// let mut lp = EventLoop::new();
    /// let l = lp.block_on(TcpListener::bind("127.0.0.1:0")).unwrap().unwrap();
    /// assert!(l.has_ref());
    /// ```
    pub fn has_ref(&self) -> bool {
        self.io.has_ref()
    }

    /// Makes the listener keep its loop alive (`true`, the default) or not
    /// (`false`, Node's `server.unref()`): a loop with nothing else to do
    /// then ends, and a `block_on` whose future waits only in `accept`
    /// returns [`Error::Stalled`](crate::Error::Stalled), as Node exits
    /// with an unrefed server listening.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, net::TcpListener, task, time};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    ///     l.set_ref(false); // a background listener
    ///     task::spawn(async move { while l.accept().await.is_ok() {} });
    ///     time::sleep(Duration::from_millis(5)).await;
    /// })
    /// .unwrap();
    /// lp.run().unwrap(); // returns: only the unrefed listener is left
    /// ```
    pub fn set_ref(&self, refed: bool) {
        self.io.set_ref(refed);
    }

    /// The socket's pending error (`SO_ERROR`), taken: `None` if there
    /// is none.
    ///
    /// # Errors
    ///
    /// The OS error of reading it.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::TcpListener};
    /// let mut lp = EventLoop::new();
    /// let l = lp.block_on(TcpListener::bind("127.0.0.1:0")).unwrap().unwrap();
    /// assert!(l.take_error().unwrap().is_none());
    /// ```
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.source().take_error()
    }

    /// Calls `f` with the listener's file descriptor, borrowed for the
    /// call: for a socket option this type does not wrap, through
    /// `socket2::SockRef` or the OS. Do not close it, leave it
    /// non-blocking, and do not use the socket's own operations inside
    /// `f` (the socket is borrowed for the call: they panic).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::TcpListener};
    /// let mut lp = EventLoop::new();
    /// let l = lp.block_on(TcpListener::bind("127.0.0.1:0")).unwrap().unwrap();
    /// let addr = l.with_fd(|fd| socket2::SockRef::from(&fd).local_addr()).unwrap();
    /// assert_eq!(addr.as_socket(), Some(l.local_addr().unwrap()));
    /// ```
    #[cfg(unix)]
    pub fn with_fd<R>(&self, f: impl FnOnce(std::os::fd::BorrowedFd<'_>) -> R) -> R {
        use std::os::fd::AsFd;
        f(self.io.source().as_fd())
    }
}

#[cfg(unix)]
impl std::os::fd::AsRawFd for TcpListener {
    /// The listener's file descriptor (see [`TcpListener::with_fd`] for
    /// a borrowed one).
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.source().as_raw_fd()
    }
}

/// A TCP connection on the current loop (`tokio::net::TcpStream`'s shape;
/// Node's `net.Socket`). Keeps its loop alive while it exists; dropping it
/// closes it.
///
/// See [`TcpListener`] for an example.
///
/// Of tokio's socket options, `SO_LINGER` (`linger`/`set_linger`) is not
/// wrapped (tokio deprecates `set_linger`): set it, or any option this
/// type does not wrap (keep-alive, buffer sizes), with `socket2` through
/// [`with_fd`](Self::with_fd), on accepted streams too.
///
/// # Examples
///
/// ```
/// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
/// let mut lp = EventLoop::new();
/// lp.block_on(async {
///     let l = TcpListener::bind("127.0.0.1:0").await?;
///     let mut c = TcpStream::connect(l.local_addr()?).await?;
///     let (mut s, _) = l.accept().await?;
///     c.write_all(b"ping").await?;
///     let mut buf = [0; 4];
///     let n = s.read(&mut buf).await?;
///     s.write_all(&buf[..n]).await?;
///     c.read(&mut buf).await?;
///     assert_eq!(&buf, b"ping");
///     std::io::Result::Ok(())
/// })
/// .unwrap()
/// .unwrap();
/// ```
pub struct TcpStream {
    pub(super) io: Registration<mio::net::TcpStream>,
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpStream").field("io", &self.io).finish()
    }
}

impl TcpStream {
    #[track_caller]
    fn from_mio(s: mio::net::TcpStream) -> TcpStream {
        TcpStream {
            io: Registration::new(s, mio::Interest::READABLE | mio::Interest::WRITABLE),
        }
    }

    /// Connects to `addr` (the first of its addresses that accepts).
    /// Resolving a host name blocks the thread; pass an IP address (or
    /// resolve off the loop's thread) to avoid that.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, peer) = l.accept().await?;
    ///     assert_eq!(peer, c.local_addr()?);
    ///     assert_eq!(s.peer_addr()?, c.local_addr()?);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The resolver's error; [`io::ErrorKind::InvalidInput`] if `addr`
    /// has no address; otherwise the OS error of the last address tried
    /// (refused, unreachable); [`io::ErrorKind::Other`] if it would wait
    /// and the loop it was made on was dropped.
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        let mut last = None;
        for a in addr.to_socket_addrs()? {
            match TcpStream::connect_one(a).await {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "no address to connect to")
        }))
    }

    async fn connect_one(addr: SocketAddr) -> io::Result<TcpStream> {
        let s = TcpStream::from_mio(mio::net::TcpStream::connect(addr)?);
        // mio's connect is non-blocking: writable means it finished, and
        // then `take_error` / `peer_addr` say how.
        super::wait(s.io.rc(), |cx| {
            s.io.poll_io(cx, Dir::Write, |s| {
                if let Some(e) = s.take_error()? {
                    return Err(e);
                }
                match s.peer_addr() {
                    Ok(_) => Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                        Err(io::ErrorKind::WouldBlock.into())
                    }
                    Err(e) => Err(e),
                }
            })
        })
        .await?;
        Ok(s)
    }

    /// A stream from a connected std stream. It is made non-blocking here.
    ///
    /// # Errors
    ///
    /// The OS error of making it non-blocking.
    ///
    /// # Panics
    ///
    /// If no loop is current on this thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::TcpStream};
    /// let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    /// let std_stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    /// let mut lp = EventLoop::new();
    /// let s = lp.scope(|| TcpStream::from_std(std_stream)).unwrap();
    /// assert_eq!(s.peer_addr().unwrap(), listener.local_addr().unwrap());
    /// ```
    #[track_caller]
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        Ok(TcpStream::from_mio(mio::net::TcpStream::from_std(stream)))
    }

    /// Reads into `buf`: the number of bytes read, 0 at end of stream (or
    /// at once, with no system call, if `buf` is empty, as std's `Read`
    /// allows).
    ///
    /// # Errors
    ///
    /// The OS error (reset by the peer, for one); [`io::ErrorKind::Other`]
    /// if it would wait and the stream's loop was dropped (see the
    /// [module docs](super)).
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     c.write_all(b"hi").await?;
    ///     let mut buf = [0; 8];
    ///     let n = s.read(&mut buf).await?;
    ///     assert_eq!(&buf[..n], b"hi");
    ///     drop(c);
    ///     assert_eq!(s.read(&mut buf).await?, 0); // end of stream
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let io = self.io.rc();
        super::wait(io, |cx| self.poll_read(cx, buf)).await
    }

    /// [`read`](Self::read) as a poll function.
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read).
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     c.write_all(b"hi").await?;
    ///     let mut buf = [0; 8];
    ///     let n = std::future::poll_fn(|cx| s.poll_read(cx, &mut buf)).await?;
    ///     assert_eq!(&buf[..n], b"hi");
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.poll_read_shared(cx, buf)
    }

    /// [`poll_read`](Self::poll_read) through a shared reference: for the
    /// read halves, which share the stream with a write half.
    pub(super) fn poll_read_shared(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            // Nothing to read into: no system call, and no wait for bytes
            // it could not take (the kernel would say `WouldBlock`, then
            // 0 once bytes came, which reads as the end of the stream).
            return Poll::Ready(Ok(0));
        }
        self.io
            .poll_bytes(cx, Dir::Read, buf.len(), |s| s.read(buf))
    }

    /// Writes some of `buf`: the number of bytes written (fewer than
    /// `buf.len()` when the socket's buffer fills; the writer waits for
    /// room rather than spinning).
    ///
    /// # Errors
    ///
    /// The OS error (a broken pipe, for one); [`io::ErrorKind::Other`] if it
    /// would wait and the stream's loop was dropped (see the
    /// [module docs](super)).
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     let n = c.write(b"hello").await?;
    ///     assert!(n > 0);
    ///     let mut buf = [0; 8];
    ///     let got = s.read(&mut buf).await?;
    ///     assert_eq!(&buf[..got], &b"hello"[..got]);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let io = self.io.rc();
        super::wait(io, |cx| self.poll_write(cx, buf)).await
    }

    /// [`write`](Self::write) as a poll function.
    ///
    /// # Errors
    ///
    /// As [`write`](Self::write).
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     let n = std::future::poll_fn(|cx| c.poll_write(cx, b"hello")).await?;
    ///     assert!(n > 0);
    ///     let mut buf = [0; 8];
    ///     assert!(s.read(&mut buf).await? > 0);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_write_shared(cx, buf)
    }

    /// [`poll_write`](Self::poll_write) through a shared reference: for
    /// the write halves.
    pub(super) fn poll_write_shared(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.io
            .poll_bytes(cx, Dir::Write, buf.len(), |s| s.write(buf))
    }

    /// Writes all of `buf`, waiting for room as often as needed (a slow
    /// reader back-pressures the writer, with no busy loop).
    ///
    /// # Errors
    ///
    /// The OS error; [`io::ErrorKind::WriteZero`] if the socket accepts no
    /// more bytes; [`io::ErrorKind::Other`] if it would wait and the
    /// stream's loop was dropped. What was written before the error stays
    /// written.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     let big = vec![7u8; 1 << 20]; // more than the socket buffers hold
    ///     let writer = timerloop::task::spawn(async move { c.write_all(&big).await });
    ///     let mut total = 0;
    ///     let mut buf = [0; 65536];
    ///     while total < 1 << 20 {
    ///         total += s.read(&mut buf).await?;
    ///     }
    ///     writer.await.unwrap()?;
    ///     assert_eq!(total, 1 << 20);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.write_all_shared(buf).await
    }

    /// [`write_all`](Self::write_all) through a shared reference.
    pub(super) async fn write_all_shared(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match super::wait(self.io.rc(), |cx| self.poll_write_shared(cx, buf)).await? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => buf = &buf[n..],
            }
        }
        Ok(())
    }

    /// Shuts down the write half, the read half or both.
    ///
    /// # Errors
    ///
    /// The OS error.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     c.shutdown(std::net::Shutdown::Write)?;
    ///     let mut buf = [0; 8];
    ///     assert_eq!(s.read(&mut buf).await?, 0); // the peer sees end of stream
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.source().shutdown(how)
    }

    /// Sets `TCP_NODELAY`.
    ///
    /// On a virtual clock, a test client that writes small messages needs
    /// it: Nagle's algorithm can hold a write back for longer than the
    /// loop's I/O grace ([`EventLoop::set_io_grace`](crate::EventLoop::set_io_grace)),
    /// and virtual time then jumps as if it never came.
    ///
    /// # Errors
    ///
    /// The OS error.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     c.set_nodelay(true)?;
    ///     c.write_all(b"small").await?;
    ///     let mut buf = [0; 8];
    ///     assert_eq!(s.read(&mut buf).await?, 5);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.io.source().set_nodelay(nodelay)
    }

    /// The local address.
    ///
    /// # Errors
    ///
    /// The OS error.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     assert_eq!(c.local_addr()?, s.peer_addr()?);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.source().local_addr()
    }

    /// The peer's address.
    ///
    /// # Errors
    ///
    /// The OS error (not connected).
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     assert_eq!(c.peer_addr()?, l.local_addr()?);
    ///     let _ = &mut s;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.source().peer_addr()
    }

    /// Whether the stream keeps its loop alive (by default it does, as a
    /// Node socket).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     assert!(c.has_ref());
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn has_ref(&self) -> bool {
        self.io.has_ref()
    }

    /// Makes the stream keep its loop alive (`true`, the default) or not
    /// (`false`, Node's `socket.unref()`): a keep-alive connection that
    /// should not hold a program open. A task waiting on an unrefed
    /// stream alone does not keep the loop running.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}, task};
    /// let mut lp = EventLoop::new();
    /// let l = lp
    ///     .block_on(async {
    ///         let l = TcpListener::bind("127.0.0.1:0").await?;
    ///         let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///         c.set_ref(false);
    ///         task::spawn(async move { c.read(&mut [0; 8]).await });
    ///         std::io::Result::Ok(l)
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// l.set_ref(false);
    /// lp.run().unwrap(); // the read still waits, and the loop ends
    /// ```
    pub fn set_ref(&self, refed: bool) {
        self.io.set_ref(refed);
    }

    /// The socket's pending error (`SO_ERROR`), taken: `None` if there
    /// is none.
    ///
    /// # Errors
    ///
    /// The OS error of reading it.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     assert!(c.take_error()?.is_none());
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.source().take_error()
    }

    /// Calls `f` with the stream's file descriptor, borrowed for the
    /// call: for a socket option this type does not wrap, through
    /// `socket2::SockRef` or the OS, on an accepted stream as on one of
    /// your own. Do not close it, leave it non-blocking, and do not use
    /// the stream's own operations inside `f` (the stream is borrowed for
    /// the call: they panic). (A non-zero
    /// `SO_LINGER` makes dropping the stream block the loop's thread
    /// until the data is sent or the time is up; zero resets the
    /// connection at the drop, Node's `resetAndDestroy()`.)
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let _c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, _) = l.accept().await?;
    ///     s.with_fd(|fd| socket2::SockRef::from(&fd).set_keepalive(true))?;
    ///     assert!(s.with_fd(|fd| socket2::SockRef::from(&fd).keepalive())?);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    #[cfg(unix)]
    pub fn with_fd<R>(&self, f: impl FnOnce(std::os::fd::BorrowedFd<'_>) -> R) -> R {
        use std::os::fd::AsFd;
        f(self.io.source().as_fd())
    }
}

#[cfg(unix)]
impl std::os::fd::AsRawFd for TcpStream {
    /// The stream's file descriptor (see [`TcpStream::with_fd`] for a
    /// borrowed one).
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.source().as_raw_fd()
    }
}

/// Readiness, the `try_` operations and peeking: tokio's names and
/// semantics.
///
/// A readiness wait ([`ready`](TcpStream::ready),
/// [`readable`](TcpStream::readable), [`writable`](TcpStream::writable))
/// ends at once while its direction may be ready (nothing has said
/// `WouldBlock` since the loop last reported it ready, or it is closed)
/// and otherwise waits for the loop's next event for the stream, as a
/// `read` does; it can end with a false positive, so pair it with a
/// `try_` operation that may still say `WouldBlock` (which clears the
/// readiness, so the next wait really waits). The `try_` operations count
/// in the stream's streak (module docs: no socket starves the loop), as
/// does a wait that ends at once, so a `readable`/`try_read` loop yields
/// to the loop every 16 rounds (32 operations), as a `read` loop does. A
/// read or write that moves fewer bytes than asked clears the readiness
/// too.
impl TcpStream {
    /// Waits until the stream may be ready for one of `interest`'s
    /// directions ([`Interest::READABLE`], [`Interest::WRITABLE`] or
    /// both), and says which (with [`Ready::READ_CLOSED`] or
    /// [`Ready::WRITE_CLOSED`] once a direction is closed). Cancel-safe.
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::InvalidInput`] for an interest other than
    /// readable, writable or both; [`io::ErrorKind::Other`] if it would
    /// wait and the stream's loop was dropped (see the
    /// [module docs](super)); the OS error if the loop could not register
    /// the stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{Interest, TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, _) = l.accept().await?;
    ///     c.try_write(b"hi")?;
    ///     let mut buf = [0; 8];
    ///     loop {
    ///         let ready = s.ready(Interest::READABLE | Interest::WRITABLE).await?;
    ///         if ready.is_readable() {
    ///             match s.try_read(&mut buf) {
    ///                 Ok(n) => {
    ///                     assert_eq!(&buf[..n], b"hi");
    ///                     break;
    ///                 }
    ///                 Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
    ///                 Err(e) => return Err(e),
    ///             }
    ///         }
    ///         if ready.is_writable() {
    ///             // nothing to write here: wait for the bytes alone
    ///             s.readable().await?;
    ///         }
    ///     }
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        super::wait(self.io.rc(), |cx| self.io.poll_ready(cx, interest)).await
    }

    /// Waits until the stream may be readable: `ready(Interest::READABLE)`.
    /// Pair it with [`try_read`](Self::try_read).
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::Other`] if it would wait and the stream's loop was
    /// dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// let got = lp
    ///     .block_on(async {
    ///         let l = TcpListener::bind("127.0.0.1:0").await?;
    ///         let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///         let (s, _) = l.accept().await?;
    ///         c.write_all(b"ping").await?;
    ///         let mut buf = [0; 8];
    ///         loop {
    ///             s.readable().await?;
    ///             match s.try_read(&mut buf) {
    ///                 Ok(n) => return Ok(buf[..n].to_vec()),
    ///                 Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
    ///                 Err(e) => return Err(e),
    ///             }
    ///         }
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(got, b"ping");
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }

    /// [`readable`](Self::readable) as a poll function. It keeps one waker,
    /// its latest caller's, as tokio's does: a task it replaced is not
    /// woken (several tasks wait with [`readable`](Self::readable), which
    /// wakes each).
    ///
    /// # Errors
    ///
    /// As [`readable`](Self::readable).
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, _) = l.accept().await?;
    ///     c.write_all(b"x").await?;
    ///     std::future::poll_fn(|cx| s.poll_read_ready(cx)).await?;
    ///     let mut buf = [0; 4];
    ///     assert_eq!(s.try_read(&mut buf)?, 1);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_ready(cx, Interest::READABLE).map_ok(drop)
    }

    /// Waits until the stream may be writable: `ready(Interest::WRITABLE)`.
    /// Pair it with [`try_write`](Self::try_write).
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::Other`] if it would wait and the stream's loop was
    /// dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     let n = loop {
    ///         c.writable().await?;
    ///         match c.try_write(b"hello") {
    ///             Ok(n) => break n,
    ///             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
    ///             Err(e) => return Err(e),
    ///         }
    ///     };
    ///     assert_eq!(n, 5);
    ///     let mut buf = [0; 8];
    ///     assert_eq!(s.read(&mut buf).await?, 5);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }

    /// [`writable`](Self::writable) as a poll function. It keeps one waker,
    /// its latest caller's, as tokio's does: a task it replaced is not
    /// woken (several tasks wait with [`writable`](Self::writable), which
    /// wakes each).
    ///
    /// # Errors
    ///
    /// As [`writable`](Self::writable).
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (_s, _) = l.accept().await?;
    ///     std::future::poll_fn(|cx| c.poll_write_ready(cx)).await?;
    ///     assert_eq!(c.try_write(b"ok")?, 2);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_ready(cx, Interest::WRITABLE).map_ok(drop)
    }

    /// Reads into `buf` now, with no wait: the number of bytes read, 0 at
    /// end of stream (or at once, with no system call, if `buf` is
    /// empty). The socket is asked every time (tokio's skips the call
    /// while its last readiness said `WouldBlock`).
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::WouldBlock`] if no bytes are there: the read
    /// readiness is cleared, so the next [`readable`](Self::readable)
    /// waits for the loop's next event. The OS error otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, _) = l.accept().await?;
    ///     let mut buf = [0; 8];
    ///     let e = s.try_read(&mut buf).unwrap_err();
    ///     assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock); // nothing sent yet
    ///     c.write_all(b"now").await?;
    ///     s.readable().await?; // waits for the bytes
    ///     assert_eq!(s.try_read(&mut buf)?, 3);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.io.try_bytes(Dir::Read, buf.len(), |s| s.read(buf))
    }

    /// [`try_read`](Self::try_read) into several buffers, in order (one
    /// `readv`).
    ///
    /// # Errors
    ///
    /// As [`try_read`](Self::try_read).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::IoSliceMut;
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, _) = l.accept().await?;
    ///     c.write_all(b"headbody").await?;
    ///     s.readable().await?;
    ///     let (mut head, mut body) = ([0; 4], [0; 8]);
    ///     let n = loop {
    ///         let mut bufs = [IoSliceMut::new(&mut head), IoSliceMut::new(&mut body)];
    ///         match s.try_read_vectored(&mut bufs) {
    ///             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => s.readable().await?,
    ///             r => break r?,
    ///         }
    ///     };
    ///     assert_eq!((n, &head, &body[..4]), (8, b"head", &b"body"[..]));
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        if bufs.iter().all(|b| b.is_empty()) {
            return Ok(0);
        }
        let len = one_call_len(bufs.iter().map(|b| b.len()));
        self.io.try_bytes(Dir::Read, len, |s| s.read_vectored(bufs))
    }

    /// Writes some of `buf` now, with no wait: the number of bytes
    /// written.
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::WouldBlock`] if the socket's send buffer is full:
    /// the write readiness is cleared, so the next
    /// [`writable`](Self::writable) waits until the peer has read some.
    /// The OS error otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     assert_eq!(c.try_write(b"quick")?, 5);
    ///     let mut buf = [0; 8];
    ///     assert_eq!(s.read(&mut buf).await?, 5);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.try_bytes(Dir::Write, buf.len(), |s| s.write(buf))
    }

    /// [`try_write`](Self::try_write) from several buffers, in order (one
    /// `writev`).
    ///
    /// # Errors
    ///
    /// As [`try_write`](Self::try_write).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::IoSlice;
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     let n = c.try_write_vectored(&[IoSlice::new(b"head"), IoSlice::new(b"body")])?;
    ///     assert_eq!(n, 8);
    ///     let mut buf = [0; 8];
    ///     let mut got = 0;
    ///     while got < 8 {
    ///         got += s.read(&mut buf[got..]).await?;
    ///     }
    ///     assert_eq!(&buf, b"headbody");
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let len = one_call_len(bufs.iter().map(|b| b.len()));
        self.io
            .try_bytes(Dir::Write, len, |s| s.write_vectored(bufs))
    }

    /// Reads into `buf` without taking the bytes from the socket: the
    /// next read or peek gets them again. Waits for bytes as
    /// [`read`](Self::read) does; 0 at end of stream (or at once if `buf`
    /// is empty).
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read).
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     c.write_all(b"GET /").await?;
    ///     let mut head = [0; 3];
    ///     let n = s.peek(&mut head).await?;
    ///     assert_eq!(&head[..n], &b"GET"[..n]);
    ///     let mut buf = [0; 8];
    ///     let mut got = 0;
    ///     while got < 5 {
    ///         got += s.read(&mut buf[got..]).await?;
    ///     }
    ///     assert_eq!(&buf[..5], b"GET /"); // the peeked bytes are still there
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        super::wait(self.io.rc(), |cx| self.poll_peek(cx, buf)).await
    }

    /// [`peek`](Self::peek) as a poll function. tokio's takes a
    /// `tokio::io::ReadBuf` and fills it; this one, like
    /// [`poll_read`](Self::poll_read), takes a byte slice and returns the
    /// number of bytes peeked (the core crate does not depend on tokio).
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read).
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, _) = l.accept().await?;
    ///     c.write_all(b"x").await?;
    ///     let mut buf = [0; 4];
    ///     let n = std::future::poll_fn(|cx| s.poll_peek(cx, &mut buf)).await?;
    ///     assert_eq!(&buf[..n], b"x");
    ///     assert_eq!(s.try_read(&mut buf)?, 1); // still there to read
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_peek(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        // Not `poll_bytes`: a short peek leaves the bytes in the socket,
        // so it must not clear the readiness (the next read would wait
        // for an event that already came).
        self.io.poll_io(cx, Dir::Read, |s| s.peek(buf))
    }

    /// Whether `TCP_NODELAY` is set.
    ///
    /// # Errors
    ///
    /// The OS error.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     c.set_nodelay(true)?;
    ///     assert!(c.nodelay()?);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn nodelay(&self) -> io::Result<bool> {
        self.io.source().nodelay()
    }

    /// `IP_TTL`: the time-to-live of the stream's packets.
    ///
    /// # Errors
    ///
    /// The OS error.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// let ttl = lp
    ///     .block_on(async {
    ///         let l = TcpListener::bind("127.0.0.1:0").await?;
    ///         TcpStream::connect(l.local_addr()?).await?.ttl()
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// assert!(ttl > 0);
    /// ```
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.source().ttl()
    }

    /// Sets `IP_TTL`.
    ///
    /// # Errors
    ///
    /// The OS error.
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     c.set_ttl(42)?;
    ///     assert_eq!(c.ttl()?, 42);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.source().set_ttl(ttl)
    }
}

/// How many slices of a vectored read or write one system call surely
/// takes: std passes at most the platform's `IOV_MAX` to `readv` and
/// `writev` (1024 on Linux, `UIO_MAXIOV`); elsewhere the first 16, the
/// least POSIX allows, which is safe whatever the platform's limit.
#[cfg(any(target_os = "linux", target_os = "android"))]
const ONE_CALL_SLICES: usize = 1024;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const ONE_CALL_SLICES: usize = 16;

/// The bytes of the slices one vectored call surely takes
/// ([`ONE_CALL_SLICES`]): a call that moves fewer drained the receive
/// buffer or filled the send buffer (`Registration::short`); one
/// that moves fewer than all the slices hold may have met the cap, with
/// bytes (or room) left, and must not clear the readiness, whose next
/// edge would then never come.
fn one_call_len(lens: impl Iterator<Item = usize>) -> usize {
    lens.take(ONE_CALL_SLICES).fold(0, usize::saturating_add)
}
