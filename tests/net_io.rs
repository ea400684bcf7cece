//! The `futures-io` and `tokio-io` features: the two ecosystems'
//! `AsyncRead`/`AsyncWrite` on `timerloop::net`'s `TcpStream` and its
//! halves, driven by the ecosystems' own adapters (buffered readers,
//! `lines`, `copy`, `shutdown`) on real loopback sockets. Behaviour only,
//! never speed; the idle test runs on the virtual clock.
//!
//! Built only with both features (`required-features` in Cargo.toml):
//! `cargo test --release --features futures-io,tokio-io --test net_io`.

use std::io;
use std::time::Duration;

use timerloop::mio::Interest;
use timerloop::net::{AsyncSource, TcpListener, TcpStream};
use timerloop::time::{self, Instant};
use timerloop::{EventLoop, task};

/// A listener on loopback, a client connected to it and the server's end
/// of that connection, made on the current loop.
async fn connected() -> io::Result<(TcpStream, TcpStream)> {
    let l = TcpListener::bind("127.0.0.1:0").await?;
    let c = TcpStream::connect(l.local_addr()?).await?;
    let (s, _) = l.accept().await?;
    Ok((c, s))
}

/// A line server written against futures-io: futures-util's `BufReader`
/// and `lines` over the owned read half, `write_all` and `close` on the
/// write half. Every line comes back upper-cased, in order; the client's
/// `close` ends the server's `lines`, and the server's `close` is the
/// client's end of stream.
#[test]
fn futures_io_line_server() {
    use futures_util::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    use futures_util::stream::StreamExt;

    let mut lp = EventLoop::new();
    let (got, served) = lp
        .block_on(async {
            let (mut c, s) = connected().await?;
            let server = task::spawn(async move {
                let (r, mut w) = s.into_split();
                let mut lines = BufReader::new(r).lines();
                let mut served = 0;
                while let Some(line) = lines.next().await {
                    w.write_all(format!("{}\n", line?.to_uppercase()).as_bytes())
                        .await?;
                    served += 1;
                }
                w.close().await?;
                io::Result::Ok(served)
            });
            // Many small writes, some lines split across them.
            for chunk in ["alpha\nbe", "ta\n", "gamma\ndelta", "\n"] {
                AsyncWriteExt::write_all(&mut c, chunk.as_bytes()).await?;
            }
            AsyncWriteExt::close(&mut c).await?; // the write direction only
            let mut got = String::new();
            AsyncReadExt::read_to_string(&mut c, &mut got).await?;
            let served = server.await.unwrap()?;
            io::Result::Ok((got, served))
        })
        .unwrap()
        .unwrap();
    assert_eq!(got, "ALPHA\nBETA\nGAMMA\nDELTA\n");
    assert_eq!(served, 4);
}

/// An echo server written against tokio's traits: `tokio::io::copy` from
/// the read half to the write half, on a borrowed split, while the client
/// writes 4 MiB (far more than the sockets buffer) from one task and
/// reads it back from another. Every byte comes back, in order.
#[test]
fn tokio_io_copy_echo() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const LEN: usize = 4 << 20;
    let mut lp = EventLoop::new();
    let (copied, back) = lp
        .block_on(async {
            let (c, mut s) = connected().await?;
            let server = task::spawn(async move {
                let (mut r, mut w) = s.split();
                let n = tokio::io::copy(&mut r, &mut w).await?;
                w.shutdown().await?;
                io::Result::Ok(n)
            });
            let (mut cr, mut cw) = c.into_split();
            let writer = task::spawn(async move {
                let data: Vec<u8> = (0..LEN).map(|i| (i % 251) as u8).collect();
                cw.write_all(&data).await?;
                cw.shutdown().await?;
                io::Result::Ok(())
            });
            let mut back = Vec::new();
            cr.read_to_end(&mut back).await?;
            writer.await.unwrap()?;
            let copied = server.await.unwrap()?;
            io::Result::Ok((copied, back))
        })
        .unwrap()
        .unwrap();
    assert_eq!(copied, LEN as u64);
    assert_eq!(back.len(), LEN);
    assert!(back.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
}

/// tokio's `BufReader::read_line` under timerloop's `time::timeout`, on
/// the virtual clock: a quiet client is dropped exactly `idle` after its
/// last line, and the lines before come back whole.
#[test]
fn tokio_io_read_line_with_an_idle_timeout_on_the_virtual_clock() {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

    let mut lp = EventLoop::with_virtual_clock();
    lp.set_io_grace(Duration::from_millis(200));
    let idle = Duration::from_millis(300);
    let (lines, quiet_for, rest) = lp
        .block_on(async move {
            let (mut c, s) = connected().await?;
            c.set_nodelay(true)?;
            let server = task::spawn(async move {
                let (r, mut w) = s.into_split();
                let mut r = BufReader::new(r);
                let mut lines = Vec::new();
                let mut last = Instant::now();
                loop {
                    let mut line = String::new();
                    match time::timeout(idle, r.read_line(&mut line)).await {
                        Ok(Ok(0)) => return io::Result::Ok((lines, None)),
                        Ok(Ok(_)) => {
                            lines.push(line);
                            last = Instant::now();
                        }
                        Ok(Err(e)) => return Err(e),
                        Err(_elapsed) => {
                            w.write_all(b"bye\n").await?;
                            return Ok((lines, Some(Instant::now() - last)));
                        }
                    }
                }
            });
            for line in ["one\n", "two\n"] {
                c.write_all(line.as_bytes()).await?;
                time::sleep(Duration::from_millis(100)).await;
            }
            let mut rest = String::new();
            c.read_to_string(&mut rest).await?;
            let (lines, quiet_for) = server.await.unwrap()?;
            io::Result::Ok((lines, quiet_for, rest))
        })
        .unwrap()
        .unwrap();
    assert_eq!(lines, ["one\n", "two\n"]);
    assert_eq!(quiet_for, Some(idle), "exactly the idle time, not before");
    assert_eq!(rest, "bye\n");
}

/// What the traits add over the inherent calls: a read into a full
/// `ReadBuf` and a zero-length read are ready at once with nothing read
/// (and consume nothing); a flush is ready at once; an owned write half
/// shut down through the trait ends the peer's stream while it lives, and
/// the read direction still works after.
#[test]
fn edges_of_the_traits() {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    let mut lp = EventLoop::new();
    lp.block_on(async {
        let (mut c, mut s) = connected().await?;
        tokio::io::AsyncWriteExt::write_all(&mut c, b"xy").await?;

        // Nothing to read into: ready, 0, no bytes taken.
        let mut none = [0u8; 0];
        let mut full = tokio::io::ReadBuf::new(&mut none);
        std::future::poll_fn(|cx: &mut Context<'_>| {
            tokio::io::AsyncRead::poll_read(Pin::new(&mut s), cx, &mut full)
        })
        .await?;
        assert_eq!(full.filled().len(), 0);
        let n = futures_util::io::AsyncReadExt::read(&mut s, &mut none).await?;
        assert_eq!(n, 0);
        let mut two = [0u8; 2];
        tokio::io::AsyncReadExt::read_exact(&mut s, &mut two).await?;
        assert_eq!(&two, b"xy");

        // A flush has nothing to do.
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(matches!(
            tokio::io::AsyncWrite::poll_flush(Pin::new(&mut c), &mut cx),
            Poll::Ready(Ok(()))
        ));
        assert!(matches!(
            futures_util::io::AsyncWrite::poll_flush(Pin::new(&mut c), &mut cx),
            Poll::Ready(Ok(()))
        ));

        // Shut down through the trait: the peer reads the end of the
        // stream at once, before the half is dropped.
        let (mut sr, mut sw) = s.into_split();
        tokio::io::AsyncWriteExt::shutdown(&mut sw).await?;
        let mut buf = [0u8; 4];
        assert_eq!(tokio::io::AsyncReadExt::read(&mut c, &mut buf).await?, 0);
        drop(sw);
        // This side can still read what the peer writes.
        tokio::io::AsyncWriteExt::write_all(&mut c, b"late").await?;
        tokio::io::AsyncReadExt::read_exact(&mut sr, &mut buf).await?;
        assert_eq!(&buf, b"late");
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// A Unix-socket line server with no Unix types of timerloop's own: the
/// listener's `accept` through `AsyncSource::async_io`, each connection an
/// `AsyncSource<mio::net::UnixStream>` read with tokio's `BufReader` and
/// `lines`, the client's half-close through `get_ref`; the client reads
/// with futures-util. Every line comes back numbered, in order.
#[test]
fn unix_stream_line_server_through_async_source() {
    use futures_util::io::AsyncReadExt as _;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let dir = std::env::temp_dir().join(format!("timerloop-net-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lines.sock");
    let _ = std::fs::remove_file(&path);
    let mut lp = EventLoop::new();
    let p = path.clone();
    let got = lp
        .block_on(async move {
            let listener =
                AsyncSource::with_interest(mio::net::UnixListener::bind(&p)?, Interest::READABLE);
            let server = task::spawn(async move {
                let (conn, _) = listener
                    .async_io(Interest::READABLE, |l| l.accept())
                    .await?;
                let conn = AsyncSource::new(conn);
                let mut lines = BufReader::new(&conn).lines();
                let mut out = Vec::new();
                let mut n = 0;
                while let Some(line) = lines.next_line().await? {
                    n += 1;
                    out.extend_from_slice(format!("{n}: {line}\n").as_bytes());
                }
                let mut w = &conn;
                w.write_all(&out).await?;
                w.shutdown().await?; // HalfClose: shutdown(Write)
                io::Result::Ok(())
            });
            let client = AsyncSource::new(mio::net::UnixStream::connect(&p)?);
            for chunk in ["first\nsec", "ond\n", "third\n"] {
                (&client).write_all(chunk.as_bytes()).await?;
            }
            client.get_ref().shutdown(std::net::Shutdown::Write)?;
            let mut got = String::new();
            (&client).read_to_string(&mut got).await?;
            server.await.unwrap()?;
            io::Result::Ok(got)
        })
        .unwrap()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(got, "1: first\n2: second\n3: third\n");
}

/// tokio's `copy_bidirectional` proxying between two Unix streams, all
/// four ends `AsyncSource`s: each side's end of stream is passed on (the
/// proxy's `shutdown` half-closes the far side, `HalfClose`), so the
/// echo server finishes and the client reads its echo and its end.
#[test]
fn copy_bidirectional_over_unix_sources() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (c, p1) = mio::net::UnixStream::pair().unwrap();
    let (p2, s) = mio::net::UnixStream::pair().unwrap();
    let mut lp = EventLoop::new();
    let (back, copied, echoed) = lp
        .block_on(async move {
            let (mut c, mut p1, mut p2, mut s) = (
                AsyncSource::new(c),
                AsyncSource::new(p1),
                AsyncSource::new(p2),
                AsyncSource::new(s),
            );
            let echo = task::spawn(async move {
                let mut all = Vec::new();
                s.read_to_end(&mut all).await?;
                s.write_all(&all).await?;
                s.shutdown().await?;
                io::Result::Ok(all.len())
            });
            let proxy =
                task::spawn(async move { tokio::io::copy_bidirectional(&mut p1, &mut p2).await });
            let back = time::timeout(Duration::from_secs(10), async {
                c.write_all(b"hello").await?;
                c.shutdown().await?;
                let mut back = Vec::new();
                c.read_to_end(&mut back).await?;
                io::Result::Ok(back)
            })
            .await
            .expect("the ends of stream passed on")?;
            io::Result::Ok((back, proxy.await.unwrap()?, echo.await.unwrap()?))
        })
        .unwrap()
        .unwrap();
    assert_eq!((back, copied, echoed), (b"hello".to_vec(), (5, 5), 5));
}

/// A flush (and a shutdown) of an `AsyncSource` is done at once, even
/// right after a write that found the pipe full and was given up: a mio
/// source buffers nothing, so there is nothing to wait for.
#[test]
fn a_source_flush_does_not_wait_for_room() {
    use tokio::io::AsyncWriteExt;
    let (tx, _rx) = mio::unix::pipe::new().unwrap();
    let mut lp = EventLoop::new();
    let (f, s) = lp
        .block_on(async move {
            let mut tx = AsyncSource::with_interest(tx, Interest::WRITABLE);
            let big = vec![0u8; 1 << 20];
            // Fills the pipe, then waits: given up after 50 ms.
            let w = time::timeout(Duration::from_millis(50), tx.write_all(&big)).await;
            assert!(w.is_err(), "the pipe holds less than 1 MiB");
            let f = time::timeout(Duration::from_secs(5), tx.flush()).await;
            let s = time::timeout(Duration::from_secs(5), tx.shutdown()).await;
            (f.map(|r| r.is_ok()), s.map(|r| r.is_ok()))
        })
        .unwrap();
    assert_eq!((f, s), (Ok(true), Ok(true)));
}
