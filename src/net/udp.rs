//! [`UdpSocket`].

use std::fmt;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::task::{Context, Poll};

use mio::Interest;

use super::AsyncSource;
use super::tcp::each_addr;

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
    /// The OS error of the last address tried.
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
    /// The OS error of the last address tried.
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

    /// Receives one datagram from the connected peer into `buf`; its
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
    /// As [`send`](Self::send).
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
    /// [`io::ErrorKind::InvalidInput`] if `target` has no address; as
    /// [`send`](Self::send) otherwise.
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
}
