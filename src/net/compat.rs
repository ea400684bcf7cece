//! The byte-stream traits of the two async ecosystems, on the loop's TCP
//! types and on an [`AsyncSource`] of a byte source (a Unix stream, a
//! pipe end): `futures_io::{AsyncRead, AsyncWrite}` (feature
//! `futures-io`) and `tokio::io::{AsyncRead, AsyncWrite}` (feature
//! `tokio-io`, tokio with no runtime). They let the ecosystems' adapters
//! run on the loop: buffered readers and `lines`, `copy`, codecs, TLS
//! streams.
//!
//! # Invariants
//!
//! - **The traits are the inherent calls.** A trait's read is
//!   [`TcpStream::poll_read`] (and a write [`TcpStream::poll_write`]),
//!   with the same readiness, wake-ups and errors: nothing is buffered
//!   here, so a flush has nothing to do and is ready at once.
//! - **Shutting down is `shutdown(Write)`**: the peer reads the end of the
//!   stream, and this side can still read. An owned write half shut down
//!   this way does not shut down again when dropped.
//! - tokio's `ReadBuf` is filled through its initialized part
//!   (`initialize_unfilled`: zeroed once per buffer, as safe code must),
//!   and a read into a full buffer is ready at once with nothing read.

#[cfg(any(feature = "futures-io", feature = "tokio-io"))]
mod imp {
    use std::io;
    use std::net::Shutdown;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use mio::Interest;

    use super::super::{
        AsyncSource, HalfClose, OwnedReadHalf, OwnedWriteHalf, ReadHalf, TcpStream, WriteHalf,
    };

    /// What the trait impls need of each type: its stream, and how it
    /// shuts its write direction down.
    trait Stream: Unpin {
        fn stream(&self) -> &TcpStream;

        fn shutdown_write(&mut self) -> io::Result<()> {
            self.stream().shutdown(Shutdown::Write)
        }
    }

    impl Stream for TcpStream {
        fn stream(&self) -> &TcpStream {
            self
        }
    }

    impl Stream for ReadHalf<'_> {
        fn stream(&self) -> &TcpStream {
            self.0
        }
    }

    impl Stream for WriteHalf<'_> {
        fn stream(&self) -> &TcpStream {
            self.0
        }
    }

    impl Stream for OwnedReadHalf {
        fn stream(&self) -> &TcpStream {
            &self.stream
        }
    }

    impl Stream for OwnedWriteHalf {
        fn stream(&self) -> &TcpStream {
            &self.stream
        }

        fn shutdown_write(&mut self) -> io::Result<()> {
            self.stream.shutdown(Shutdown::Write)?;
            self.shutdown_on_drop = false;
            Ok(())
        }
    }

    #[cfg(feature = "futures-io")]
    fn read_bytes<S: Stream>(
        s: Pin<&mut S>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        s.get_mut().stream().poll_read_shared(cx, buf)
    }

    /// A read into tokio's `ReadBuf` through its initialized part; a
    /// full buffer is ready at once with nothing read.
    #[cfg(feature = "tokio-io")]
    fn fill(
        buf: &mut tokio::io::ReadBuf<'_>,
        read: impl FnOnce(&mut [u8]) -> Poll<io::Result<usize>>,
    ) -> Poll<io::Result<()>> {
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        let n = std::task::ready!(read(buf.initialize_unfilled()))?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }

    #[cfg(feature = "tokio-io")]
    fn read_buf<S: Stream>(
        s: Pin<&mut S>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let stream = s.get_mut().stream();
        fill(buf, |dst| stream.poll_read_shared(cx, dst))
    }

    fn write_bytes<S: Stream>(
        s: Pin<&mut S>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        s.get_mut().stream().poll_write_shared(cx, buf)
    }

    fn shutdown<S: Stream>(s: Pin<&mut S>) -> Poll<io::Result<()>> {
        Poll::Ready(s.get_mut().shutdown_write())
    }

    macro_rules! readers {
        ($($ty:ty),*) => {$(
            #[cfg(feature = "futures-io")]
            impl futures_io::AsyncRead for $ty {
                fn poll_read(
                    self: Pin<&mut Self>,
                    cx: &mut Context<'_>,
                    buf: &mut [u8],
                ) -> Poll<io::Result<usize>> {
                    read_bytes(self, cx, buf)
                }
            }

            #[cfg(feature = "tokio-io")]
            impl tokio::io::AsyncRead for $ty {
                fn poll_read(
                    self: Pin<&mut Self>,
                    cx: &mut Context<'_>,
                    buf: &mut tokio::io::ReadBuf<'_>,
                ) -> Poll<io::Result<()>> {
                    read_buf(self, cx, buf)
                }
            }
        )*};
    }

    macro_rules! writers {
        ($($ty:ty),*) => {$(
            #[cfg(feature = "futures-io")]
            impl futures_io::AsyncWrite for $ty {
                fn poll_write(
                    self: Pin<&mut Self>,
                    cx: &mut Context<'_>,
                    buf: &[u8],
                ) -> Poll<io::Result<usize>> {
                    write_bytes(self, cx, buf)
                }

                fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                    Poll::Ready(Ok(()))
                }

                fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                    shutdown(self)
                }
            }

            #[cfg(feature = "tokio-io")]
            impl tokio::io::AsyncWrite for $ty {
                fn poll_write(
                    self: Pin<&mut Self>,
                    cx: &mut Context<'_>,
                    buf: &[u8],
                ) -> Poll<io::Result<usize>> {
                    write_bytes(self, cx, buf)
                }

                fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                    Poll::Ready(Ok(()))
                }

                fn poll_shutdown(
                    self: Pin<&mut Self>,
                    _: &mut Context<'_>,
                ) -> Poll<io::Result<()>> {
                    shutdown(self)
                }
            }
        )*};
    }

    readers!(TcpStream, ReadHalf<'_>, OwnedReadHalf);
    writers!(TcpStream, WriteHalf<'_>, OwnedWriteHalf);

    // An `AsyncSource` of a byte source (a Unix stream, a pipe end), and
    // a shared reference to one (its operations take `&self`, so one task
    // can read while another writes): reads wait for READABLE, writes
    // for WRITABLE (an error if it was not registered for them). No
    // short-read shortcut: for a source of any kind, only `WouldBlock`
    // says that it is drained. Shutting down is a flush, then the
    // source's `HalfClose`.

    #[cfg(feature = "futures-io")]
    fn source_read<S: mio::event::Source + io::Read>(
        s: &AsyncSource<S>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        s.poll_io(cx, Interest::READABLE, |s| s.read(buf))
    }

    #[cfg(feature = "tokio-io")]
    fn source_read_buf<S: mio::event::Source + io::Read>(
        s: &AsyncSource<S>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        fill(buf, |dst| {
            s.poll_io(cx, Interest::READABLE, |s| s.read(dst))
        })
    }

    fn source_write<S: mio::event::Source + io::Write>(
        s: &AsyncSource<S>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        s.poll_io(cx, Interest::WRITABLE, |s| s.write(buf))
    }

    fn source_flush<S: mio::event::Source + io::Write>(
        s: &AsyncSource<S>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        // Tried at once, whatever the last write found (a write that
        // said `WouldBlock` leaves the source waiting for writability): a
        // mio source buffers nothing, so its flush is done at once. One
        // that buffers and says `WouldBlock` waits for room.
        match s.try_io_now(|s| s.flush()) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                s.poll_io(cx, Interest::WRITABLE, |s| s.flush())
            }
            r => Poll::Ready(r),
        }
    }

    fn source_shutdown<S: mio::event::Source + io::Write + HalfClose>(
        s: &AsyncSource<S>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        std::task::ready!(source_flush(s, cx))?;
        Poll::Ready(s.try_io_now(|s| s.half_close()))
    }

    macro_rules! source_traits {
        ($($ty:ty),*) => {$(
            #[cfg(feature = "futures-io")]
            impl<S: mio::event::Source + io::Read + 'static> futures_io::AsyncRead for $ty {
                fn poll_read(
                    self: Pin<&mut Self>,
                    cx: &mut Context<'_>,
                    buf: &mut [u8],
                ) -> Poll<io::Result<usize>> {
                    source_read(&self, cx, buf)
                }
            }

            #[cfg(feature = "tokio-io")]
            impl<S: mio::event::Source + io::Read + 'static> tokio::io::AsyncRead for $ty {
                fn poll_read(
                    self: Pin<&mut Self>,
                    cx: &mut Context<'_>,
                    buf: &mut tokio::io::ReadBuf<'_>,
                ) -> Poll<io::Result<()>> {
                    source_read_buf(&self, cx, buf)
                }
            }

            #[cfg(feature = "futures-io")]
            impl<S: mio::event::Source + io::Write + HalfClose + 'static> futures_io::AsyncWrite for $ty {
                fn poll_write(
                    self: Pin<&mut Self>,
                    cx: &mut Context<'_>,
                    buf: &[u8],
                ) -> Poll<io::Result<usize>> {
                    source_write(&self, cx, buf)
                }

                fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                    source_flush(&self, cx)
                }

                fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                    source_shutdown(&self, cx)
                }
            }

            #[cfg(feature = "tokio-io")]
            impl<S: mio::event::Source + io::Write + HalfClose + 'static> tokio::io::AsyncWrite for $ty {
                fn poll_write(
                    self: Pin<&mut Self>,
                    cx: &mut Context<'_>,
                    buf: &[u8],
                ) -> Poll<io::Result<usize>> {
                    source_write(&self, cx, buf)
                }

                fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                    source_flush(&self, cx)
                }

                fn poll_shutdown(
                    self: Pin<&mut Self>,
                    cx: &mut Context<'_>,
                ) -> Poll<io::Result<()>> {
                    source_shutdown(&self, cx)
                }
            }
        )*};
    }

    source_traits!(AsyncSource<S>, &AsyncSource<S>);
}
