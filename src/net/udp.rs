//! [`UdpSocket`].

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::task::{Context, Poll};

use super::tcp::each_addr;
use super::{AsyncSource, Interest, Ready};

/// A UDP socket on the current loop (`tokio::net::UdpSocket`'s shape;
/// Node's `dgram.Socket`). Keeps its loop alive while it exists; every
/// operation takes `&self`, so tasks can share it in an `Rc`.
///
/// ```
/// use timerloop::{EventLoop, net::UdpSocket};
/// let mut lp = EventLoop::new();
/// let got = lp
///     .block_on(async {
///         let server = UdpSocket::bind("127.0.0.1:0").await?;
///         let client = UdpSocket::bind("127.0.0.1:0").await?;
///         client.connect(server.local_addr()?).await?;
///         client.send(b"ping").await?;
///         let mut buf = [0; 64];
///         let (n, from) = server.recv_from(&mut buf).await?;
///         server.send_to(&buf[..n], from).await?; // echo it back
///         let n = client.recv(&mut buf).await?;
///         std::io::Result::Ok(buf[..n].to_vec())
///     })
///     .unwrap()
///     .unwrap();
/// assert_eq!(got, b"ping");
/// ```
pub struct UdpSocket {
    io: AsyncSource<mio::net::UdpSocket>,
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpSocket").field("io", &self.io).finish()
    }
}

impl UdpSocket {
    /// Binds a socket to `addr` (the first of its addresses that works).
    /// Resolving a host name blocks the thread; pass an IP address to
    /// avoid that.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let port = lp
    ///     .block_on(async { UdpSocket::bind("127.0.0.1:0").await?.local_addr() })
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
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<UdpSocket> {
        let s = each_addr(addr, mio::net::UdpSocket::bind)?;
        Ok(UdpSocket {
            io: AsyncSource::new(s),
        })
    }

    /// A socket from a bound std socket (for options the standard library
    /// does not set, through `socket2`). It is made non-blocking here.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let std_s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    /// let mut lp = EventLoop::new();
    /// let s = lp.scope(|| UdpSocket::from_std(std_s)).unwrap();
    /// assert!(s.local_addr().is_ok());
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
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Ok(UdpSocket {
            io: AsyncSource::new(mio::net::UdpSocket::from_std(socket)),
        })
    }

    /// Connects the socket to `addr` (the first of its addresses that
    /// works): [`send`](Self::send) goes there, and
    /// [`recv`](Self::recv) takes datagrams from there only. Resolving a
    /// host name blocks the thread; pass an IP address to avoid that.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.connect(b.local_addr()?).await?;
    ///     assert_eq!(a.peer_addr()?, b.local_addr()?);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The resolver's error; [`io::ErrorKind::InvalidInput`] if `addr`
    /// has no address; otherwise the OS error of the last address tried.
    pub async fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        let s = self.io.get_ref();
        each_addr(addr, |a| s.connect(a))
    }

    /// Sends `buf` as one datagram to the connected peer; the number of
    /// bytes sent.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let n = lp
    ///     .block_on(async {
    ///         let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///         let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///         a.connect(b.local_addr()?).await?;
    ///         a.send(b"datagram").await
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(n, 8);
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error (not connected, for one); [`io::ErrorKind::Other`] if
    /// it would wait and the socket's loop was dropped.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.async_io(Interest::WRITABLE, |s| s.send(buf)).await
    }

    /// Receives one datagram into `buf` (from the connected peer once
    /// [`connect`](Self::connect) was called; from anyone before); its
    /// length (a datagram longer than `buf` is cut to it).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let got = lp
    ///     .block_on(async {
    ///         let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///         let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///         a.connect(b.local_addr()?).await?;
    ///         b.connect(a.local_addr()?).await?;
    ///         b.send(b"one").await?;
    ///         let mut buf = [0; 8];
    ///         let n = a.recv(&mut buf).await?;
    ///         std::io::Result::Ok(buf[..n].to_vec())
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(got, b"one");
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error (an ICMP error a connected socket received, for one);
    /// [`io::ErrorKind::Other`] if it would wait and the socket's loop was
    /// dropped.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.async_io(Interest::READABLE, |s| s.recv(buf)).await
    }

    /// Sends `buf` as one datagram to `target` (its first address:
    /// resolving a host name blocks the thread); the number of bytes sent.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let n = lp
    ///     .block_on(async {
    ///         let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///         let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///         a.send_to(b"hello", b.local_addr()?).await
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(n, 5);
    /// ```
    ///
    /// # Errors
    ///
    /// The resolver's error; [`io::ErrorKind::InvalidInput`] if `target`
    /// has no address; as [`send`](Self::send) otherwise.
    pub async fn send_to<A: ToSocketAddrs>(&self, buf: &[u8], target: A) -> io::Result<usize> {
        let to = target
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to send to"))?;
        self.io
            .async_io(Interest::WRITABLE, |s| s.send_to(buf, to))
            .await
    }

    /// Receives one datagram into `buf`: its length (cut to `buf`) and
    /// its sender.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.send_to(b"hi", b.local_addr()?).await?;
    ///     let mut buf = [0; 8];
    ///     let (n, from) = b.recv_from(&mut buf).await?;
    ///     assert_eq!((&buf[..n], from), (&b"hi"[..], a.local_addr()?));
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .async_io(Interest::READABLE, |s| s.recv_from(buf))
            .await
    }

    /// [`recv_from`](Self::recv_from) as a poll function.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.send_to(b"hi", b.local_addr()?).await?;
    ///     let mut buf = [0; 8];
    ///     let (n, _) = std::future::poll_fn(|cx| b.poll_recv_from(cx, &mut buf)).await?;
    ///     assert_eq!(&buf[..n], b"hi");
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io
            .poll_io(cx, Interest::READABLE, |s| s.recv_from(buf))
    }

    /// [`send_to`](Self::send_to) as a poll function, to an address.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let to = a.local_addr()?;
    ///     let n = std::future::poll_fn(|cx| a.poll_send_to(cx, b"self", to)).await?;
    ///     assert_eq!(n, 4);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.io
            .poll_io(cx, Interest::WRITABLE, |s| s.send_to(buf, target))
    }

    /// The local address.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let a = lp
    ///     .block_on(async { UdpSocket::bind("127.0.0.1:0").await?.local_addr() })
    ///     .unwrap()
    ///     .unwrap();
    /// assert!(a.ip().is_loopback());
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The connected peer's address.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     assert!(a.peer_addr().is_err()); // not connected
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error (`NotConnected` before [`connect`](Self::connect)).
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    /// Sets `SO_BROADCAST`: whether datagrams may go to a broadcast
    /// address.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.set_broadcast(true)?;
    ///     assert!(a.broadcast()?);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error.
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_broadcast(on)
    }

    /// Whether `SO_BROADCAST` is set.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let on = lp
    ///     .block_on(async { UdpSocket::bind("127.0.0.1:0").await?.broadcast() })
    ///     .unwrap()
    ///     .unwrap();
    /// assert!(!on);
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error.
    pub fn broadcast(&self) -> io::Result<bool> {
        self.io.get_ref().broadcast()
    }

    /// Sets `IP_TTL`.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.set_ttl(9)?;
    ///     assert_eq!(a.ttl()?, 9);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_ttl(ttl)
    }

    /// `IP_TTL`.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let ttl = lp
    ///     .block_on(async { UdpSocket::bind("127.0.0.1:0").await?.ttl() })
    ///     .unwrap()
    ///     .unwrap();
    /// assert!(ttl > 0);
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.get_ref().ttl()
    }

    /// Whether the socket keeps its loop alive (by default it does, as a
    /// bound Node `dgram` socket).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let s = lp.block_on(UdpSocket::bind("127.0.0.1:0")).unwrap().unwrap();
    /// assert!(s.has_ref());
    /// ```
    pub fn has_ref(&self) -> bool {
        self.io.has_ref()
    }

    /// Makes the socket keep its loop alive (`true`, the default) or not
    /// (`false`, Node's `socket.unref()`).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket, task};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    ///     s.set_ref(false);
    ///     task::spawn(async move { s.recv_from(&mut [0; 8]).await });
    /// })
    /// .unwrap();
    /// lp.run().unwrap(); // returns: the receive waits on an unrefed socket
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
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let s = lp.block_on(UdpSocket::bind("127.0.0.1:0")).unwrap().unwrap();
    /// assert!(s.take_error().unwrap().is_none());
    /// ```
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }

    /// Calls `f` with the socket's file descriptor, borrowed for the
    /// call: for a socket option this type does not wrap, through
    /// `socket2::SockRef` or the OS. Do not close it, leave it
    /// non-blocking, and do not use the socket's own operations inside
    /// `f` (the socket is borrowed for the call: they panic).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let s = lp.block_on(UdpSocket::bind("127.0.0.1:0")).unwrap().unwrap();
    /// s.with_fd(|fd| socket2::SockRef::from(&fd).set_recv_buffer_size(1 << 16)).unwrap();
    /// ```
    #[cfg(unix)]
    pub fn with_fd<R>(&self, f: impl FnOnce(std::os::fd::BorrowedFd<'_>) -> R) -> R {
        use std::os::fd::AsFd;
        f(self.io.get_ref().as_fd())
    }
}

#[cfg(unix)]
impl std::os::fd::AsRawFd for UdpSocket {
    /// The socket's file descriptor (see [`UdpSocket::with_fd`] for a
    /// borrowed one).
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.get_ref().as_raw_fd()
    }
}

/// Readiness, the `try_` operations, peeking and multicast: tokio's
/// names and semantics. A readiness wait ends at once while its
/// direction may be ready (nothing has said `WouldBlock` since the loop
/// last reported it ready) and otherwise waits for the loop's next event
/// for the socket; it can end with a false positive, so pair it with a
/// `try_` operation, which may still say `WouldBlock` (and then clears
/// the readiness, so the next wait really waits). The `try_` operations
/// count in the socket's streak as its other operations do (module docs:
/// no socket starves the loop).
impl UdpSocket {
    /// Waits until the socket may be ready for one of `interest`'s
    /// directions ([`Interest::READABLE`], [`Interest::WRITABLE`] or
    /// both), and says which. Cancel-safe.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{Interest, UdpSocket}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let ready = a.ready(Interest::READABLE | Interest::WRITABLE).await?;
    ///     assert!(ready.is_writable());
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::InvalidInput`] for an interest other than
    /// readable, writable or both; [`io::ErrorKind::Other`] if it would
    /// wait and the socket's loop was dropped; the OS error if the loop
    /// could not register the socket.
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        super::wait(self.io.rc(), |cx| self.io.poll_ready(cx, interest)).await
    }

    /// Waits until the socket may be readable: `ready(Interest::READABLE)`.
    /// Pair it with [`try_recv`](Self::try_recv) or
    /// [`try_recv_from`](Self::try_recv_from).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.send_to(b"hi", b.local_addr()?).await?;
    ///     let mut buf = [0; 8];
    ///     let (n, from) = loop {
    ///         b.readable().await?;
    ///         match b.try_recv_from(&mut buf) {
    ///             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
    ///             r => break r?,
    ///         }
    ///     };
    ///     assert_eq!((&buf[..n], from), (&b"hi"[..], a.local_addr()?));
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::Other`] if it would wait and the socket's loop was
    /// dropped.
    pub async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }

    /// [`readable`](Self::readable) as a poll function. It keeps one waker,
    /// its latest caller's, as tokio's does: a task it replaced is not
    /// woken (several tasks wait with [`readable`](Self::readable), which
    /// wakes each).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.send_to(b"me", a.local_addr()?).await?;
    ///     std::future::poll_fn(|cx| a.poll_recv_ready(cx)).await?;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`readable`](Self::readable).
    pub fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_ready(cx, Interest::READABLE).map_ok(drop)
    }

    /// Waits until the socket may be writable: `ready(Interest::WRITABLE)`.
    /// Pair it with [`try_send`](Self::try_send) or
    /// [`try_send_to`](Self::try_send_to).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let to = a.local_addr()?;
    ///     let n = loop {
    ///         a.writable().await?;
    ///         match a.try_send_to(b"self", to) {
    ///             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
    ///             r => break r?,
    ///         }
    ///     };
    ///     assert_eq!(n, 4);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::Other`] if it would wait and the socket's loop was
    /// dropped.
    pub async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }

    /// [`writable`](Self::writable) as a poll function. It keeps one waker,
    /// its latest caller's, as tokio's does: a task it replaced is not
    /// woken (several tasks wait with [`writable`](Self::writable), which
    /// wakes each).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     std::future::poll_fn(|cx| a.poll_send_ready(cx)).await?;
    ///     assert_eq!(a.try_send_to(b"x", a.local_addr()?)?, 1);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`writable`](Self::writable).
    pub fn poll_send_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_ready(cx, Interest::WRITABLE).map_ok(drop)
    }

    /// Sends `buf` as one datagram to the connected peer, now, with no
    /// wait; the number of bytes sent.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.connect(b.local_addr()?).await?;
    ///     assert_eq!(a.try_send(b"now")?, 3);
    ///     let mut buf = [0; 8];
    ///     assert_eq!(b.recv(&mut buf).await?, 3);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::WouldBlock`] if the send buffer is full (the
    /// write readiness is cleared: the next [`writable`](Self::writable)
    /// waits for room); the OS error otherwise (not connected, for one).
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.try_io(Interest::WRITABLE, |s| s.send(buf))
    }

    /// Receives one datagram from the connected peer into `buf`, now,
    /// with no wait; its length (cut to `buf`).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.connect(b.local_addr()?).await?;
    ///     b.connect(a.local_addr()?).await?;
    ///     let mut buf = [0; 8];
    ///     let e = a.try_recv(&mut buf).unwrap_err();
    ///     assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock); // nothing sent yet
    ///     b.send(b"one").await?;
    ///     a.readable().await?; // waits for it
    ///     assert_eq!(a.try_recv(&mut buf)?, 3);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::WouldBlock`] if no datagram is there (the read
    /// readiness is cleared: the next [`readable`](Self::readable) waits
    /// for one); the OS error otherwise.
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.try_io(Interest::READABLE, |s| s.recv(buf))
    }

    /// Sends `buf` as one datagram to `target`, now, with no wait; the
    /// number of bytes sent.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     assert_eq!(a.try_send_to(b"hello", b.local_addr()?)?, 5);
    ///     let mut buf = [0; 8];
    ///     assert_eq!(b.recv_from(&mut buf).await?, (5, a.local_addr()?));
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`try_send`](Self::try_send).
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.io
            .try_io(Interest::WRITABLE, |s| s.send_to(buf, target))
    }

    /// Receives one datagram into `buf`, now, with no wait: its length
    /// (cut to `buf`) and its sender.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.send_to(b"hi", b.local_addr()?).await?;
    ///     b.readable().await?;
    ///     let mut buf = [0; 8];
    ///     let got = loop {
    ///         match b.try_recv_from(&mut buf) {
    ///             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => b.readable().await?,
    ///             r => break r?,
    ///         }
    ///     };
    ///     assert_eq!(got, (2, a.local_addr()?));
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`try_recv`](Self::try_recv).
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.try_io(Interest::READABLE, |s| s.recv_from(buf))
    }

    /// Receives one datagram into `buf` without taking it from the
    /// socket (the next receive or peek gets it again): its length (cut
    /// to `buf`) and its sender. Waits for a datagram as
    /// [`recv_from`](Self::recv_from) does.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.send_to(b"hi", b.local_addr()?).await?;
    ///     let mut buf = [0; 8];
    ///     let peeked = b.peek_from(&mut buf).await?;
    ///     assert_eq!(peeked, (2, a.local_addr()?));
    ///     assert_eq!(b.recv_from(&mut buf).await?, peeked); // still there
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`recv_from`](Self::recv_from).
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        super::wait(self.io.rc(), |cx| self.poll_peek_from(cx, buf)).await
    }

    /// [`peek_from`](Self::peek_from) as a poll function. tokio's takes a
    /// `tokio::io::ReadBuf` and returns the sender; this one, like
    /// [`poll_recv_from`](Self::poll_recv_from), takes a byte slice and
    /// returns the length and the sender.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.send_to(b"me", a.local_addr()?).await?;
    ///     let mut buf = [0; 8];
    ///     let (n, from) = std::future::poll_fn(|cx| a.poll_peek_from(cx, &mut buf)).await?;
    ///     assert_eq!((&buf[..n], from), (&b"me"[..], a.local_addr()?));
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`recv_from`](Self::recv_from).
    pub fn poll_peek_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io
            .poll_io(cx, Interest::READABLE, |s| s.peek_from(buf))
    }

    /// Joins the IPv4 multicast group `multiaddr` on the interface whose
    /// address is `interface` (`Ipv4Addr::UNSPECIFIED`: the one the
    /// system picks): `IP_ADD_MEMBERSHIP`.
    ///
    /// ```
    /// use std::net::Ipv4Addr;
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let s = UdpSocket::bind("0.0.0.0:0").await?;
    ///     let group = Ipv4Addr::new(239, 255, 0, 1);
    ///     s.join_multicast_v4(group, Ipv4Addr::LOCALHOST)?;
    ///     s.leave_multicast_v4(group, Ipv4Addr::LOCALHOST)?;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error (no such interface, or no route for multicast when
    /// `interface` is unspecified).
    pub fn join_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.get_ref().join_multicast_v4(&multiaddr, &interface)
    }

    /// Joins the IPv6 multicast group `multiaddr` on the interface of
    /// index `interface` (0: the one the system picks):
    /// `IPV6_ADD_MEMBERSHIP`.
    ///
    /// ```
    /// use std::net::Ipv6Addr;
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     // A machine without IPv6, or without a route for its multicast,
    ///     // says so in an error.
    ///     let Ok(s) = UdpSocket::bind("[::]:0").await else { return Ok(()) };
    ///     let group: Ipv6Addr = "ff02::1:3".parse().unwrap();
    ///     if s.join_multicast_v6(&group, 0).is_ok() {
    ///         s.leave_multicast_v6(&group, 0)?;
    ///     }
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error.
    pub fn join_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.get_ref().join_multicast_v6(multiaddr, interface)
    }

    /// Leaves an IPv4 multicast group joined with
    /// [`join_multicast_v4`](Self::join_multicast_v4):
    /// `IP_DROP_MEMBERSHIP`.
    ///
    /// ```
    /// use std::net::Ipv4Addr;
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let s = UdpSocket::bind("0.0.0.0:0").await?;
    ///     let group = Ipv4Addr::new(239, 255, 0, 2);
    ///     assert!(s.leave_multicast_v4(group, Ipv4Addr::LOCALHOST).is_err()); // not joined
    ///     s.join_multicast_v4(group, Ipv4Addr::LOCALHOST)?;
    ///     s.leave_multicast_v4(group, Ipv4Addr::LOCALHOST)?;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error (the group was not joined, for one).
    pub fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.get_ref().leave_multicast_v4(&multiaddr, &interface)
    }

    /// Leaves an IPv6 multicast group joined with
    /// [`join_multicast_v6`](Self::join_multicast_v6):
    /// `IPV6_DROP_MEMBERSHIP`.
    ///
    /// ```
    /// use std::net::Ipv6Addr;
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let Ok(s) = UdpSocket::bind("[::]:0").await else { return Ok(()) }; // no IPv6
    ///     let group: Ipv6Addr = "ff02::1:4".parse().unwrap();
    ///     assert!(s.leave_multicast_v6(&group, 0).is_err()); // not joined
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error (the group was not joined, for one).
    pub fn leave_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.get_ref().leave_multicast_v6(multiaddr, interface)
    }

    /// Whether the socket's own IPv4 multicast datagrams loop back to
    /// the sockets of this host that joined the group:
    /// `IP_MULTICAST_LOOP` (on by default).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let on = lp
    ///     .block_on(async { UdpSocket::bind("0.0.0.0:0").await?.multicast_loop_v4() })
    ///     .unwrap()
    ///     .unwrap();
    /// assert!(on);
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error.
    pub fn multicast_loop_v4(&self) -> io::Result<bool> {
        self.io.get_ref().multicast_loop_v4()
    }

    /// Sets `IP_MULTICAST_LOOP`.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let s = UdpSocket::bind("0.0.0.0:0").await?;
    ///     s.set_multicast_loop_v4(false)?;
    ///     assert!(!s.multicast_loop_v4()?);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error.
    pub fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_multicast_loop_v4(on)
    }

    /// The time-to-live of the socket's IPv4 multicast datagrams:
    /// `IP_MULTICAST_TTL` (1 by default: they stay on the local network).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// let ttl = lp
    ///     .block_on(async { UdpSocket::bind("0.0.0.0:0").await?.multicast_ttl_v4() })
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(ttl, 1);
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error.
    pub fn multicast_ttl_v4(&self) -> io::Result<u32> {
        self.io.get_ref().multicast_ttl_v4()
    }

    /// Sets `IP_MULTICAST_TTL`.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let s = UdpSocket::bind("0.0.0.0:0").await?;
    ///     s.set_multicast_ttl_v4(8)?;
    ///     assert_eq!(s.multicast_ttl_v4()?, 8);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error.
    pub fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_multicast_ttl_v4(ttl)
    }

    /// Whether the socket's own IPv6 multicast datagrams loop back to
    /// the sockets of this host that joined the group:
    /// `IPV6_MULTICAST_LOOP` (on by default).
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let Ok(s) = UdpSocket::bind("[::]:0").await else { return Ok(()) }; // no IPv6
    ///     assert!(s.multicast_loop_v6()?);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error (an IPv4 socket, for one).
    pub fn multicast_loop_v6(&self) -> io::Result<bool> {
        self.io.get_ref().multicast_loop_v6()
    }

    /// Sets `IPV6_MULTICAST_LOOP`.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::UdpSocket};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let Ok(s) = UdpSocket::bind("[::]:0").await else { return Ok(()) }; // no IPv6
    ///     s.set_multicast_loop_v6(false)?;
    ///     assert!(!s.multicast_loop_v6()?);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The OS error (an IPv4 socket, for one).
    pub fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_multicast_loop_v6(on)
    }
}
