//! A [`TcpStream`]'s read and write halves, to read and write at once:
//! borrowed ([`TcpStream::split`]) within one task, owned
//! ([`TcpStream::into_split`]) across tasks. tokio's names and shapes.
//!
//! The halves share the stream's one registration, whose read and write
//! wake-ups are already apart: a task waiting to read and one waiting to
//! write are each woken by their own readiness. The socket stays open
//! while either owned half exists; dropping the owned write half shuts
//! the stream's write direction down (the peer reads the end of the
//! stream), as tokio's does.

use std::fmt;
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::rc::Rc;
use std::task::{Context, Poll};

use super::{Interest, Ready, TcpStream};

/// The read half of a [`TcpStream`], borrowed from it by
/// [`TcpStream::split`].
///
/// ```
/// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
/// let mut lp = EventLoop::new();
/// lp.block_on(async {
///     let l = TcpListener::bind("127.0.0.1:0").await?;
///     let mut c = TcpStream::connect(l.local_addr()?).await?;
///     let (mut s, _) = l.accept().await?;
///     let (mut r, mut w) = s.split();
///     c.write_all(b"ping").await?;
///     let mut buf = [0; 4];
///     let n = r.read(&mut buf).await?;
///     w.write_all(&buf[..n]).await?; // both halves of one stream
///     assert_eq!(c.read(&mut buf).await?, 4);
///     std::io::Result::Ok(())
/// })
/// .unwrap()
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct ReadHalf<'a>(pub(super) &'a TcpStream);

/// The write half of a [`TcpStream`], borrowed from it by
/// [`TcpStream::split`]. Dropping it changes nothing on the stream.
///
/// ```
/// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
/// let mut lp = EventLoop::new();
/// lp.block_on(async {
///     let l = TcpListener::bind("127.0.0.1:0").await?;
///     let mut c = TcpStream::connect(l.local_addr()?).await?;
///     let (_s, _) = l.accept().await?;
///     let (_r, mut w) = c.split();
///     w.write_all(b"hello").await?;
///     std::io::Result::Ok(())
/// })
/// .unwrap()
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct WriteHalf<'a>(pub(super) &'a TcpStream);

/// The read half of a [`TcpStream`], owned: made by
/// [`TcpStream::into_split`], for a task of its own.
///
/// ```
/// use timerloop::{EventLoop, net::{TcpListener, TcpStream}, task};
/// let mut lp = EventLoop::new();
/// let got = lp
///     .block_on(async {
///         let l = TcpListener::bind("127.0.0.1:0").await?;
///         let mut c = TcpStream::connect(l.local_addr()?).await?;
///         let (s, _) = l.accept().await?;
///         let (mut r, _w) = s.into_split();
///         let reader = task::spawn(async move {
///             let mut buf = [0; 8];
///             let n = r.read(&mut buf).await?;
///             std::io::Result::Ok(buf[..n].to_vec())
///         });
///         c.write_all(b"hi").await?;
///         reader.await.unwrap()
///     })
///     .unwrap()
///     .unwrap();
/// assert_eq!(got, b"hi");
/// ```
#[derive(Debug)]
pub struct OwnedReadHalf {
    pub(super) stream: Rc<TcpStream>,
}

/// The write half of a [`TcpStream`], owned: made by
/// [`TcpStream::into_split`]. Dropping it shuts the stream's write
/// direction down, so the peer reads the end of the stream (unless it was
/// given back to [`OwnedReadHalf::reunite`]).
///
/// ```
/// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
/// let mut lp = EventLoop::new();
/// lp.block_on(async {
///     let l = TcpListener::bind("127.0.0.1:0").await?;
///     let mut c = TcpStream::connect(l.local_addr()?).await?;
///     let (s, _) = l.accept().await?;
///     let (_r, mut w) = s.into_split();
///     w.write_all(b"bye").await?;
///     drop(w); // shuts the write direction down
///     let mut buf = [0; 8];
///     assert_eq!(c.read(&mut buf).await?, 3);
///     assert_eq!(c.read(&mut buf).await?, 0); // the end of the stream
///     std::io::Result::Ok(())
/// })
/// .unwrap()
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct OwnedWriteHalf {
    pub(super) stream: Rc<TcpStream>,
    /// Shut the write direction down on drop (not when reunited, nor once
    /// shut down through an `AsyncWrite` impl's `poll_shutdown`/`poll_close`).
    pub(super) shutdown_on_drop: bool,
}

/// The two halves given to [`OwnedReadHalf::reunite`] were not split from
/// one stream; both are handed back.
///
/// ```
/// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
/// let mut lp = EventLoop::new();
/// lp.block_on(async {
///     let l = TcpListener::bind("127.0.0.1:0").await?;
///     let c = TcpStream::connect(l.local_addr()?).await?;
///     let (s, _) = l.accept().await?;
///     let (r1, _w1) = c.into_split();
///     let (_r2, w2) = s.into_split();
///     let err = r1.reunite(w2).unwrap_err();
///     assert_eq!(err.to_string(), "the halves were not split from the same TcpStream");
///     std::io::Result::Ok(())
/// })
/// .unwrap()
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

impl fmt::Display for ReuniteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the halves were not split from the same TcpStream")
    }
}

impl std::error::Error for ReuniteError {}

impl TcpStream {
    /// Splits the stream into a read half and a write half that borrow it,
    /// so that one task can read and write at once (in a `select` or
    /// `join`). No allocation.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     let (r, w) = s.split();
    ///     assert_eq!(r.peer_addr()?, w.peer_addr()?);
    ///     let _ = &mut c;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        (ReadHalf(self), WriteHalf(self))
    }

    /// Splits the stream into owned halves, for two tasks (one reading,
    /// one writing). The socket stays open while either half exists;
    /// dropping the write half shuts the write direction down.
    /// [`OwnedReadHalf::reunite`] gives the stream back.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}, task};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, _) = l.accept().await?;
    ///     let (mut r, mut w) = s.into_split();
    ///     // an echo: the read half in a task of its own
    ///     let reader = task::spawn(async move {
    ///         let mut buf = [0; 64];
    ///         let n = r.read(&mut buf).await?;
    ///         std::io::Result::Ok(buf[..n].to_vec())
    ///     });
    ///     c.write_all(b"echo me").await?;
    ///     let got = reader.await.unwrap()?;
    ///     w.write_all(&got).await?;
    ///     let mut buf = [0; 64];
    ///     let n = c.read(&mut buf).await?;
    ///     assert_eq!(&buf[..n], b"echo me");
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        let stream = Rc::new(self);
        (
            OwnedReadHalf {
                stream: stream.clone(),
            },
            OwnedWriteHalf {
                stream,
                shutdown_on_drop: true,
            },
        )
    }
}

impl ReadHalf<'_> {
    /// [`TcpStream::read`] on the borrowed stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::read`].
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
    ///     c.write_all(b"hey").await?;
    ///     let (mut r, _w) = s.split();
    ///     let mut buf = [0; 8];
    ///     assert_eq!(r.read(&mut buf).await?, 3);
    ///     let _ = (&mut c, &mut s);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let io = self.0.io.rc();
        super::wait(io, |cx| self.0.poll_read_shared(cx, buf)).await
    }

    /// [`TcpStream::poll_read`] on the borrowed stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::read`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     c.write_all(b"x").await?;
    ///     let (mut r, _w) = s.split();
    ///     let mut buf = [0; 4];
    ///     assert_eq!(poll_fn(|cx| r.poll_read(cx, &mut buf)).await?, 1);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.0.poll_read_shared(cx, buf)
    }

    /// [`TcpStream::peek`] on the borrowed stream: reads without taking the
    /// bytes, so the next read gets them again.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::read`].
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
    ///     c.write_all(b"hey").await?;
    ///     let (mut r, _w) = s.split();
    ///     let mut buf = [0; 8];
    ///     let n = r.peek(&mut buf).await?;
    ///     assert_eq!(r.read(&mut buf).await?, n); // the same bytes again
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.peek(buf).await
    }

    /// [`TcpStream::poll_peek`] on the borrowed stream (a byte slice where
    /// tokio's takes a `ReadBuf`).
    ///
    /// # Errors
    ///
    /// As [`TcpStream::read`].
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
    ///     c.write_all(b"x").await?;
    ///     let (mut r, _w) = s.split();
    ///     let mut buf = [0; 4];
    ///     let n = std::future::poll_fn(|cx| r.poll_peek(cx, &mut buf)).await?;
    ///     assert_eq!(&buf[..n], b"x");
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_peek(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.0.poll_peek(cx, buf)
    }

    /// [`TcpStream::ready`] on the borrowed stream: either direction may be
    /// asked for, as in tokio.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::ready`].
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{Interest, TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     c.write_all(b"x").await?;
    ///     let (r, _w) = s.split();
    ///     let ready = r.ready(Interest::READABLE).await?;
    ///     assert!(ready.is_readable());
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.0.ready(interest).await
    }

    /// [`TcpStream::readable`] on the borrowed stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::readable`].
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
    ///     let (r, _w) = s.split();
    ///     let mut buf = [0; 8];
    ///     assert!(r.try_read(&mut buf).is_err()); // WouldBlock: nothing yet
    ///     c.write_all(b"hey").await?;
    ///     r.readable().await?; // waits for the bytes
    ///     assert_eq!(r.try_read(&mut buf)?, 3);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        self.0.readable().await
    }

    /// [`TcpStream::try_read`] on the borrowed stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::try_read`].
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
    ///     c.write_all(b"hey").await?;
    ///     let (r, _w) = s.split();
    ///     let mut buf = [0; 8];
    ///     let n = loop {
    ///         r.readable().await?;
    ///         match r.try_read(&mut buf) {
    ///             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
    ///             n => break n?,
    ///         }
    ///     };
    ///     assert_eq!(&buf[..n], b"hey");
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }

    /// [`TcpStream::try_read_vectored`] on the borrowed stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::try_read`].
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
    ///     c.write_all(b"ab").await?;
    ///     let (r, _w) = s.split();
    ///     let (mut x, mut y) = ([0; 1], [0; 1]);
    ///     let n = loop {
    ///         r.readable().await?;
    ///         let mut bufs = [std::io::IoSliceMut::new(&mut x), std::io::IoSliceMut::new(&mut y)];
    ///         match r.try_read_vectored(&mut bufs) {
    ///             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
    ///             n => break n?,
    ///         }
    ///     };
    ///     assert_eq!((n, x, y), (2, *b"a", *b"b"));
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        self.0.try_read_vectored(bufs)
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
    ///     let (r, _w) = s.split();
    ///     assert_eq!(r.peer_addr()?, c.local_addr()?);
    ///     let _ = (&mut c, &mut s);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
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
    ///     let (r, _w) = s.split();
    ///     assert_eq!(r.local_addr()?, l.local_addr()?);
    ///     let _ = (&mut c, &mut s);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

impl WriteHalf<'_> {
    /// [`TcpStream::write`] on the borrowed stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::write`].
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (_s, _) = l.accept().await?;
    ///     let (_r, mut w) = c.split();
    ///     assert_eq!(w.write(b"abc").await?, 3);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let io = self.0.io.rc();
        super::wait(io, |cx| self.0.poll_write_shared(cx, buf)).await
    }

    /// [`TcpStream::poll_write`] on the borrowed stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::write`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (_s, _) = l.accept().await?;
    ///     let (_r, mut w) = c.split();
    ///     assert_eq!(poll_fn(|cx| w.poll_write(cx, b"ab")).await?, 2);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.0.poll_write_shared(cx, buf)
    }

    /// [`TcpStream::write_all`] on the borrowed stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::write_all`].
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
    ///     let (_r, mut w) = s.split();
    ///     w.write_all(b"all of it").await?;
    ///     let mut buf = [0; 16];
    ///     assert_eq!(c.read(&mut buf).await?, 9);
    ///     let _ = (&mut c, &mut s);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all_shared(buf).await
    }

    /// [`TcpStream::ready`] on the borrowed stream: either direction may be
    /// asked for, as in tokio.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::ready`].
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{Interest, TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (mut s, _) = l.accept().await?;
    ///     let (_r, w) = s.split();
    ///     let ready = w.ready(Interest::WRITABLE).await?;
    ///     assert!(ready.is_writable());
    ///     let _ = &mut c;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.0.ready(interest).await
    }

    /// [`TcpStream::writable`] on the borrowed stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::writable`].
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
    ///     let (_r, w) = s.split();
    ///     w.writable().await?;
    ///     assert_eq!(w.try_write(b"abc")?, 3);
    ///     let mut buf = [0; 8];
    ///     assert_eq!(c.read(&mut buf).await?, 3);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn writable(&self) -> io::Result<()> {
        self.0.writable().await
    }

    /// [`TcpStream::try_write`] on the borrowed stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::try_write`].
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
    ///     let (_r, w) = s.split();
    ///     assert_eq!(w.try_write(b"now")?, 3);
    ///     let mut buf = [0; 8];
    ///     assert_eq!(c.read(&mut buf).await?, 3);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }

    /// [`TcpStream::try_write_vectored`] on the borrowed stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::try_write`].
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
    ///     let (_r, w) = s.split();
    ///     let bufs = [std::io::IoSlice::new(b"a"), std::io::IoSlice::new(b"b")];
    ///     assert_eq!(w.try_write_vectored(&bufs)?, 2);
    ///     let _ = &mut c;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.0.try_write_vectored(bufs)
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
    ///     let (_r, w) = s.split();
    ///     assert_eq!(w.peer_addr()?, c.local_addr()?);
    ///     let _ = (&mut c, &mut s);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
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
    ///     let (_r, w) = s.split();
    ///     assert_eq!(w.local_addr()?, l.local_addr()?);
    ///     let _ = (&mut c, &mut s);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

impl OwnedReadHalf {
    /// [`TcpStream::read`] on the shared stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::read`].
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
    ///     c.write_all(b"hey").await?;
    ///     let (mut r, _w) = s.into_split();
    ///     let mut buf = [0; 8];
    ///     assert_eq!(r.read(&mut buf).await?, 3);
    ///     let _ = &mut c;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let io = self.stream.io.rc();
        super::wait(io, |cx| self.stream.poll_read_shared(cx, buf)).await
    }

    /// [`TcpStream::poll_read`] on the shared stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::read`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, _) = l.accept().await?;
    ///     c.write_all(b"x").await?;
    ///     let (mut r, _w) = s.into_split();
    ///     let mut buf = [0; 4];
    ///     assert_eq!(poll_fn(|cx| r.poll_read(cx, &mut buf)).await?, 1);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.stream.poll_read_shared(cx, buf)
    }

    /// [`TcpStream::peek`] on the shared stream: reads without taking the
    /// bytes, so the next read gets them again.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::read`].
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
    ///     c.write_all(b"hey").await?;
    ///     let (mut r, _w) = s.into_split();
    ///     let mut buf = [0; 8];
    ///     let n = r.peek(&mut buf).await?;
    ///     assert_eq!(r.read(&mut buf).await?, n); // the same bytes again
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.peek(buf).await
    }

    /// [`TcpStream::poll_peek`] on the shared stream (a byte slice where
    /// tokio's takes a `ReadBuf`).
    ///
    /// # Errors
    ///
    /// As [`TcpStream::read`].
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
    ///     let (mut r, _w) = s.into_split();
    ///     let mut buf = [0; 4];
    ///     let n = std::future::poll_fn(|cx| r.poll_peek(cx, &mut buf)).await?;
    ///     assert_eq!(&buf[..n], b"x");
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_peek(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.stream.poll_peek(cx, buf)
    }

    /// [`TcpStream::ready`] on the shared stream: either direction may be
    /// asked for, as in tokio.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::ready`].
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{Interest, TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, _) = l.accept().await?;
    ///     c.write_all(b"x").await?;
    ///     let (r, _w) = s.into_split();
    ///     let ready = r.ready(Interest::READABLE).await?;
    ///     assert!(ready.is_readable());
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.stream.ready(interest).await
    }

    /// [`TcpStream::readable`] on the shared stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::readable`].
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
    ///     let (r, _w) = s.into_split();
    ///     let mut buf = [0; 8];
    ///     assert!(r.try_read(&mut buf).is_err()); // WouldBlock: nothing yet
    ///     c.write_all(b"hey").await?;
    ///     r.readable().await?; // waits for the bytes
    ///     assert_eq!(r.try_read(&mut buf)?, 3);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        self.stream.readable().await
    }

    /// [`TcpStream::try_read`] on the shared stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::try_read`].
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
    ///     c.write_all(b"hey").await?;
    ///     let (r, _w) = s.into_split();
    ///     let mut buf = [0; 8];
    ///     let n = loop {
    ///         r.readable().await?;
    ///         match r.try_read(&mut buf) {
    ///             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
    ///             n => break n?,
    ///         }
    ///     };
    ///     assert_eq!(&buf[..n], b"hey");
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.try_read(buf)
    }

    /// [`TcpStream::try_read_vectored`] on the shared stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::try_read`].
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
    ///     c.write_all(b"ab").await?;
    ///     let (r, _w) = s.into_split();
    ///     let (mut x, mut y) = ([0; 1], [0; 1]);
    ///     let n = loop {
    ///         r.readable().await?;
    ///         let mut bufs = [std::io::IoSliceMut::new(&mut x), std::io::IoSliceMut::new(&mut y)];
    ///         match r.try_read_vectored(&mut bufs) {
    ///             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
    ///             n => break n?,
    ///         }
    ///     };
    ///     assert_eq!((n, x, y), (2, *b"a", *b"b"));
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        self.stream.try_read_vectored(bufs)
    }

    /// Puts the stream back together from its two halves.
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, _) = l.accept().await?;
    ///     let (r, w) = s.into_split();
    ///     let mut s = r.reunite(w).expect("one stream's halves");
    ///     s.write_all(b"still open").await?; // reuniting shut nothing down
    ///     let mut buf = [0; 16];
    ///     assert_eq!(c.read(&mut buf).await?, 10);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`ReuniteError`], holding both halves, if they were not split from
    /// the same stream.
    pub fn reunite(self, mut other: OwnedWriteHalf) -> Result<TcpStream, ReuniteError> {
        if !Rc::ptr_eq(&self.stream, &other.stream) {
            return Err(ReuniteError(self, other));
        }
        other.shutdown_on_drop = false;
        drop(other);
        Ok(Rc::into_inner(self.stream).expect("the two halves held the only references"))
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
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (_s, _) = l.accept().await?;
    ///     let (r, w) = c.into_split();
    ///     assert_eq!(r.peer_addr()?, l.local_addr()?);
    ///     assert_eq!(w.local_addr()?, r.local_addr()?);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.stream.peer_addr()
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
    ///     let (s, _) = l.accept().await?;
    ///     let (r, _w) = s.into_split();
    ///     assert_eq!(r.local_addr()?, l.local_addr()?);
    ///     let _ = &mut c;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.stream.local_addr()
    }
}

impl OwnedWriteHalf {
    /// [`TcpStream::write`] on the shared stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::write`].
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
    ///     let (_r, mut w) = c.into_split();
    ///     assert_eq!(w.write(b"abc").await?, 3);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let io = self.stream.io.rc();
        super::wait(io, |cx| self.stream.poll_write_shared(cx, buf)).await
    }

    /// [`TcpStream::poll_write`] on the shared stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::write`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (_s, _) = l.accept().await?;
    ///     let (_r, mut w) = c.into_split();
    ///     assert_eq!(poll_fn(|cx| w.poll_write(cx, b"ab")).await?, 2);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.stream.poll_write_shared(cx, buf)
    }

    /// [`TcpStream::write_all`] on the shared stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::write_all`].
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
    ///     let (_r, mut w) = s.into_split();
    ///     w.write_all(b"all of it").await?;
    ///     let mut buf = [0; 16];
    ///     assert_eq!(c.read(&mut buf).await?, 9);
    ///     let _ = &mut c;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.stream.write_all_shared(buf).await
    }

    /// [`TcpStream::ready`] on the shared stream: either direction may be
    /// asked for, as in tokio.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::ready`].
    ///
    /// # Examples
    ///
    /// ```
    /// use timerloop::{EventLoop, net::{Interest, TcpListener, TcpStream}};
    /// let mut lp = EventLoop::new();
    /// lp.block_on(async {
    ///     let l = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut c = TcpStream::connect(l.local_addr()?).await?;
    ///     let (s, _) = l.accept().await?;
    ///     let (_r, w) = s.into_split();
    ///     let ready = w.ready(Interest::WRITABLE).await?;
    ///     assert!(ready.is_writable());
    ///     let _ = &mut c;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.stream.ready(interest).await
    }

    /// [`TcpStream::writable`] on the shared stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::writable`].
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
    ///     let (_r, w) = s.into_split();
    ///     w.writable().await?;
    ///     assert_eq!(w.try_write(b"abc")?, 3);
    ///     let mut buf = [0; 8];
    ///     assert_eq!(c.read(&mut buf).await?, 3);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub async fn writable(&self) -> io::Result<()> {
        self.stream.writable().await
    }

    /// [`TcpStream::try_write`] on the shared stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::try_write`].
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
    ///     let (_r, w) = s.into_split();
    ///     assert_eq!(w.try_write(b"now")?, 3);
    ///     let mut buf = [0; 8];
    ///     assert_eq!(c.read(&mut buf).await?, 3);
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.stream.try_write(buf)
    }

    /// [`TcpStream::try_write_vectored`] on the shared stream.
    ///
    /// # Errors
    ///
    /// As [`TcpStream::try_write`].
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
    ///     let (_r, w) = s.into_split();
    ///     let bufs = [std::io::IoSlice::new(b"a"), std::io::IoSlice::new(b"b")];
    ///     assert_eq!(w.try_write_vectored(&bufs)?, 2);
    ///     let _ = &mut c;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.stream.try_write_vectored(bufs)
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
    ///     let (s, _) = l.accept().await?;
    ///     let (_r, w) = s.into_split();
    ///     assert_eq!(w.peer_addr()?, c.local_addr()?);
    ///     let _ = &mut c;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.stream.peer_addr()
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
    ///     let (s, _) = l.accept().await?;
    ///     let (_r, w) = s.into_split();
    ///     assert_eq!(w.local_addr()?, l.local_addr()?);
    ///     let _ = &mut c;
    ///     std::io::Result::Ok(())
    /// })
    /// .unwrap()
    /// .unwrap();
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.stream.local_addr()
    }
}

impl Drop for OwnedWriteHalf {
    fn drop(&mut self) {
        if self.shutdown_on_drop {
            // Already shut down, or the peer gone: nothing left to tell.
            let _ = self.stream.shutdown(Shutdown::Write);
        }
    }
}
