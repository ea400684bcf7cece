//! `timerloop::net::AsyncSource` (any mio source, for tasks) and
//! `timerloop::net::UdpSocket` on it: real pipes, signals and loopback
//! datagrams. Behaviour only, never speed: real-clock tests have generous
//! bounds; the idle test runs on the virtual clock, whose I/O grace makes
//! it deterministic.

use std::cell::{Cell, RefCell};
use std::io::{self, Read, Write};
use std::rc::Rc;
use std::time::Duration;

use timerloop::mio::Interest;
use timerloop::net::{AsyncSource, TcpListener, TcpStream, UdpSocket};
use timerloop::time::{self, Instant};
use timerloop::{EventLoop, task};

/// A pipe's reading end waits for bytes another thread writes later, and
/// keeps the loop alive meanwhile: `run` returns only after the task read
/// everything up to the end of the pipe.
#[test]
fn a_pipe_read_waits_and_keeps_the_loop_alive() {
    let (tx, rx) = mio::unix::pipe::new().unwrap();
    let mut lp = EventLoop::new();
    let got = Rc::new(RefCell::new(Vec::new()));
    let g = got.clone();
    lp.spawn(async move {
        let rx = AsyncSource::with_interest(rx, Interest::READABLE);
        let mut buf = [0; 3];
        loop {
            match rx.async_io(Interest::READABLE, |p| p.read(&mut buf)).await {
                Ok(0) => break,
                Ok(n) => g.borrow_mut().extend_from_slice(&buf[..n]),
                Err(e) => panic!("{e}"),
            }
        }
    });
    let writer = std::thread::spawn(move || {
        let mut tx = tx;
        tx.set_nonblocking(false).unwrap();
        for chunk in [&b"hello "[..], b"from ", b"a thread"] {
            std::thread::sleep(Duration::from_millis(20));
            tx.write_all(chunk).unwrap();
        }
        // Dropping the writing end is the reader's end of the pipe.
    });
    lp.run().unwrap();
    writer.join().unwrap();
    assert_eq!(&*got.borrow(), b"hello from a thread");
}

/// A dropped source is deregistered: the loop has nothing left and
/// `run` returns at once, though nothing was ever read.
#[test]
fn a_dropped_source_lets_the_loop_end() {
    let (_tx, rx) = mio::unix::pipe::new().unwrap();
    let mut lp = EventLoop::new();
    let src = lp.scope(|| AsyncSource::with_interest(rx, Interest::READABLE));
    assert!(lp.is_alive(), "a registered source keeps its loop alive");
    drop(src);
    let t = std::time::Instant::now();
    lp.run().unwrap();
    assert!(!lp.is_alive());
    assert!(t.elapsed() < Duration::from_secs(5));
}

/// An interest the source was not registered for, or two at once, is an
/// `InvalidInput` error, not a wait that cannot end.
#[test]
fn an_interest_it_cannot_wait_for_is_an_error() {
    let (_tx, rx) = mio::unix::pipe::new().unwrap();
    let mut lp = EventLoop::new();
    let kinds = lp
        .block_on(async move {
            let rx = AsyncSource::with_interest(rx, Interest::READABLE);
            let write = rx.async_io(Interest::WRITABLE, |_| Ok(())).await;
            let both = rx
                .async_io(Interest::READABLE | Interest::WRITABLE, |_| Ok(()))
                .await;
            [write.unwrap_err().kind(), both.unwrap_err().kind()]
        })
        .unwrap();
    assert_eq!(kinds, [io::ErrorKind::InvalidInput; 2]);
}

/// signal-hook-mio's `Signals` as a source: a task waits for SIGUSR2 (a
/// graceful shutdown's SIGTERM, in a test that must not end the process)
/// while a timer raises it; the task then stops a ticking interval, and
/// the loop ends.
#[test]
fn a_signal_source_ends_a_task_gracefully() {
    use signal_hook::consts::SIGUSR2;
    use signal_hook_mio::v1_0::Signals;

    let mut lp = EventLoop::new();
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    let signals = Signals::new([SIGUSR2]).unwrap();
    lp.set_timeout(30, |_| {
        signal_hook::low_level::raise(SIGUSR2).unwrap();
    });
    lp.spawn(async move {
        let signals = AsyncSource::with_interest(signals, Interest::READABLE);
        let mut ticks = time::interval(Duration::from_millis(5));
        let ticker = task::spawn({
            let l = l.clone();
            async move {
                loop {
                    ticks.tick().await;
                    l.borrow_mut().push("tick");
                }
            }
        });
        let sigs = signals
            .async_io(Interest::READABLE, |s| {
                let got: Vec<i32> = s.pending().collect();
                if got.is_empty() {
                    Err(io::ErrorKind::WouldBlock.into())
                } else {
                    Ok(got)
                }
            })
            .await
            .unwrap();
        assert_eq!(sigs, [SIGUSR2]);
        ticker.abort();
        l.borrow_mut().push("signal");
    });
    let t = std::time::Instant::now();
    lp.run().unwrap();
    assert!(t.elapsed() < Duration::from_secs(10));
    let log = log.borrow();
    assert_eq!(log.last(), Some(&"signal"));
    assert!(
        log.len() >= 2,
        "the interval ticked before the signal: {log:?}"
    );
}

/// A UDP echo server task shared by two client tasks through an `Rc`
/// (every operation takes `&self`), each sending numbered datagrams:
/// every datagram comes back to the client that sent it, whole.
#[test]
fn udp_echo_with_two_clients() {
    let mut lp = EventLoop::new();
    let (a, b) = lp
        .block_on(async {
            let server = Rc::new(UdpSocket::bind("127.0.0.1:0").await?);
            let addr = server.local_addr()?;
            let s = server.clone();
            let echo = task::spawn(async move {
                let mut buf = [0; 64];
                for _ in 0..40 {
                    let (n, from) = s.recv_from(&mut buf).await?;
                    s.send_to(&buf[..n], from).await?;
                }
                io::Result::Ok(())
            });
            let client = |name: &'static str| {
                task::spawn(async move {
                    let c = UdpSocket::bind("127.0.0.1:0").await?;
                    c.connect(addr).await?;
                    let mut got = Vec::new();
                    let mut buf = [0; 64];
                    for i in 0..20 {
                        c.send(format!("{name}{i}").as_bytes()).await?;
                        let n = c.recv(&mut buf).await?;
                        got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
                    }
                    io::Result::Ok(got)
                })
            };
            let (a, b) = (client("a"), client("b"));
            let (a, b) = (a.await.unwrap()?, b.await.unwrap()?);
            echo.await.unwrap()?;
            io::Result::Ok((a, b))
        })
        .unwrap()
        .unwrap();
    let want = |name: &str| (0..20).map(|i| format!("{name}{i}")).collect::<Vec<_>>();
    assert_eq!((a, b), (want("a"), want("b")));
}

/// A UDP server that forgets a peer quiet for `idle`, on the virtual
/// clock: it notices exactly `idle` after the last datagram.
#[test]
fn udp_idle_timeout_on_the_virtual_clock() {
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_io_grace(Duration::from_millis(200));
    let idle = Duration::from_millis(300);
    let (seen, quiet_for) = lp
        .block_on(async move {
            let server = UdpSocket::bind("127.0.0.1:0").await?;
            let addr = server.local_addr()?;
            let watcher = task::spawn(async move {
                let mut buf = [0; 64];
                let mut seen = 0;
                let mut last = Instant::now();
                loop {
                    match time::timeout(idle, server.recv_from(&mut buf)).await {
                        Ok(r) => {
                            r?;
                            seen += 1;
                            last = Instant::now();
                        }
                        Err(_elapsed) => return io::Result::Ok((seen, Instant::now() - last)),
                    }
                }
            });
            let c = UdpSocket::bind("127.0.0.1:0").await?;
            for _ in 0..3 {
                c.send_to(b"beat", addr).await?;
                time::sleep(Duration::from_millis(100)).await;
            }
            watcher.await.unwrap()
        })
        .unwrap()
        .unwrap();
    assert_eq!(seen, 3);
    assert_eq!(quiet_for, idle, "exactly the idle time, not before");
}

/// What a wait that could hang is given, on the real clock.
const LIMIT: Duration = Duration::from_secs(10);

/// Two tasks wait in `recv_from` on one `Rc<UdpSocket>` at once: each
/// gets one of the two datagrams (every waiter is woken by an event, as
/// in tokio; a socket kept one waker per direction, and the first
/// receiver waited for ever).
#[test]
fn two_receivers_on_one_udp_socket_both_get_a_datagram() {
    let mut lp = EventLoop::new();
    let mut got = lp
        .block_on(async {
            let server = Rc::new(UdpSocket::bind("127.0.0.1:0").await?);
            let addr = server.local_addr()?;
            let recv = |s: Rc<UdpSocket>| {
                task::spawn(async move {
                    let mut buf = [0; 64];
                    let (n, _) = s.recv_from(&mut buf).await?;
                    io::Result::Ok(buf[..n].to_vec())
                })
            };
            let (a, b) = (recv(server.clone()), recv(server.clone()));
            time::sleep(Duration::from_millis(20)).await; // both waiting
            let c = UdpSocket::bind("127.0.0.1:0").await?;
            c.send_to(b"one", addr).await?;
            time::sleep(Duration::from_millis(20)).await;
            c.send_to(b"two", addr).await?;
            let (a, b) = time::timeout(LIMIT, async { (a.await, b.await) })
                .await
                .expect("both receivers woken");
            io::Result::Ok(vec![a.unwrap()?, b.unwrap()?])
        })
        .unwrap()
        .unwrap();
    got.sort();
    assert_eq!(got, [b"one".to_vec(), b"two".to_vec()]);
}

/// The same with two tasks reading one pipe through `async_io`, and two
/// tasks accepting on one `Rc<TcpListener>`.
#[test]
fn two_waiters_on_a_pipe_and_on_a_listener() {
    let (mut tx, rx) = mio::unix::pipe::new().unwrap();
    let mut lp = EventLoop::new();
    let (mut bytes, accepted) = lp
        .block_on(async move {
            let rx = Rc::new(AsyncSource::with_interest(rx, Interest::READABLE));
            let reader = |rx: Rc<AsyncSource<mio::unix::pipe::Receiver>>| {
                task::spawn(async move {
                    let mut b = [0; 1];
                    rx.async_io(Interest::READABLE, |p| p.read(&mut b))
                        .await
                        .map(|_| b[0])
                })
            };
            let (a, b) = (reader(rx.clone()), reader(rx.clone()));
            let l = Rc::new(TcpListener::bind("127.0.0.1:0").await?);
            let addr = l.local_addr()?;
            let acceptor =
                |l: Rc<TcpListener>| task::spawn(async move { l.accept().await.map(|_| ()) });
            let (c, d) = (acceptor(l.clone()), acceptor(l.clone()));
            time::sleep(Duration::from_millis(20)).await; // all four waiting
            tx.write_all(b"x").unwrap();
            let _c1 = TcpStream::connect(addr).await?;
            time::sleep(Duration::from_millis(20)).await;
            tx.write_all(b"y").unwrap();
            let _c2 = TcpStream::connect(addr).await?;
            let all = time::timeout(LIMIT, async { (a.await, b.await, c.await, d.await) })
                .await
                .expect("every waiter woken");
            let bytes = vec![all.0.unwrap()?, all.1.unwrap()?];
            all.2.unwrap()?;
            all.3.unwrap()?;
            io::Result::Ok((bytes, 2))
        })
        .unwrap()
        .unwrap();
    bytes.sort();
    assert_eq!((bytes, accepted), (b"xy".to_vec(), 2));
}

/// A source the loop cannot register (its fd is registered already)
/// fails every operation with the registration's error, not only the
/// first: a later one that waited would wait for ever.
#[test]
fn a_failed_registration_fails_every_operation() {
    use std::os::fd::AsRawFd;
    let (_tx, rx) = mio::unix::pipe::new().unwrap();
    let mut lp = EventLoop::new();
    let kinds = lp
        .block_on(async move {
            let fd = rx.as_raw_fd();
            let a = AsyncSource::with_interest(rx, Interest::READABLE);
            time::sleep(Duration::from_millis(1)).await; // `a` registered
            let b = AsyncSource::with_interest(Fd(fd), Interest::READABLE);
            time::sleep(Duration::from_millis(1)).await; // `b` refused
            let mut kinds = Vec::new();
            for _ in 0..3 {
                let r = time::timeout(
                    LIMIT,
                    b.async_io(Interest::READABLE, |_| Ok::<_, io::Error>(())),
                )
                .await
                .expect("not a wait");
                kinds.push(r.unwrap_err().kind());
            }
            drop(b);
            drop(a);
            kinds
        })
        .unwrap();
    assert_eq!(kinds, [io::ErrorKind::AlreadyExists; 3]);
}

/// A file descriptor as a mio source, by number (the test's second
/// registration of a descriptor the loop has already).
struct Fd(std::os::fd::RawFd);

impl mio::event::Source for Fd {
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: Interest,
    ) -> io::Result<()> {
        mio::unix::SourceFd(&self.0).register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: Interest,
    ) -> io::Result<()> {
        mio::unix::SourceFd(&self.0).reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        mio::unix::SourceFd(&self.0).deregister(registry)
    }
}

/// The source borrowed where an operation needs it (`get_ref` inside the
/// operation's closure, as a tokio `AsyncFd::try_io` port would write it)
/// is a panic whose message says what to do, not a `RefCell` message.
#[test]
fn a_borrow_held_into_an_operation_is_a_clear_panic() {
    let mut lp = EventLoop::new();
    let err = lp
        .block_on(async {
            let any = "127.0.0.1:0".parse().unwrap();
            let src = AsyncSource::new(mio::net::UdpSocket::bind(any).unwrap());
            let me = src.get_ref().local_addr().unwrap();
            src.async_io(Interest::WRITABLE, |_| src.get_ref().send_to(b"x", me))
                .await
                .unwrap();
        })
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("the source is borrowed"), "{msg}");
    assert!(
        msg.contains("use the `&mut S` its closure is given"),
        "{msg}"
    );
}

/// A peer that writes as fast as a task reads (64-byte reads, always
/// full) does not starve the loop: the reading task yields to it every
/// few reads, and a 50 ms timer fires while the bytes still flow (it
/// fired only when the peer stopped, 10 s on). Real clock, generous
/// bounds; the writer stops when the timer has fired.
#[test]
fn an_always_ready_reader_does_not_starve_the_loop() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut lp = EventLoop::new();
    let stop = Arc::new(AtomicBool::new(false));
    let (fired_at, read, writer) = lp
        .block_on(async move {
            let l = TcpListener::bind("127.0.0.1:0").await?;
            let addr = l.local_addr()?;
            let s2 = stop.clone();
            let writer = std::thread::spawn(move || {
                let mut c = std::net::TcpStream::connect(addr).unwrap();
                let chunk = [7u8; 65536];
                let t = std::time::Instant::now();
                while !s2.load(Ordering::Relaxed) && t.elapsed() < Duration::from_secs(10) {
                    if c.write_all(&chunk).is_err() {
                        break;
                    }
                }
            });
            let (mut s, _) = l.accept().await?;
            let read = Rc::new(Cell::new(0usize));
            let r = read.clone();
            let reader = task::spawn(async move {
                let mut buf = [0u8; 64];
                while let Ok(n @ 1..) = s.read(&mut buf).await {
                    r.set(r.get() + n);
                }
            });
            let t = std::time::Instant::now();
            time::sleep(Duration::from_millis(50)).await;
            let fired_at = t.elapsed();
            stop.store(true, Ordering::Relaxed);
            let read_then = read.get();
            // The reader's socket closes once the loop drops its future,
            // which frees a writer blocked on a full buffer: joined after
            // the loop has run on, never from inside it.
            reader.abort();
            time::sleep(Duration::from_millis(1)).await;
            io::Result::Ok((fired_at, read_then, writer))
        })
        .unwrap()
        .unwrap();
    writer.join().unwrap();
    assert!(read > 0, "the reader read");
    assert!(
        fired_at < Duration::from_secs(5),
        "the 50 ms timer fired after {fired_at:?}"
    );
}

/// The same for a writer: a task writing 64-byte chunks to a peer that
/// reads as fast yields to the loop, and a 50 ms timer fires meanwhile.
#[test]
fn an_always_ready_writer_does_not_starve_the_loop() {
    use std::io::Read as _;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut lp = EventLoop::new();
    let stop = Arc::new(AtomicBool::new(false));
    let (fired_at, reader) = lp
        .block_on(async move {
            let l = TcpListener::bind("127.0.0.1:0").await?;
            let addr = l.local_addr()?;
            let reader = std::thread::spawn(move || {
                let mut c = std::net::TcpStream::connect(addr).unwrap();
                let mut buf = vec![0u8; 1 << 20];
                while let Ok(1..) = c.read(&mut buf) {}
            });
            let (mut s, _) = l.accept().await?;
            let s2 = stop.clone();
            let writer = task::spawn(async move {
                let t = std::time::Instant::now();
                while !s2.load(Ordering::Relaxed) && t.elapsed() < Duration::from_secs(10) {
                    if s.write_all(&[1u8; 64]).await.is_err() {
                        break;
                    }
                }
                // Dropping the stream ends the reader thread.
            });
            let t = std::time::Instant::now();
            time::sleep(Duration::from_millis(50)).await;
            let fired_at = t.elapsed();
            stop.store(true, Ordering::Relaxed);
            writer.await.unwrap();
            time::sleep(Duration::from_millis(1)).await; // its socket closed
            io::Result::Ok((fired_at, reader))
        })
        .unwrap()
        .unwrap();
    reader.join().unwrap();
    assert!(
        fired_at < Duration::from_secs(5),
        "the 50 ms timer fired after {fired_at:?}"
    );
}

/// Reads once from `s` on `lp`, waiting for the bytes: what a source
/// registered again must still do.
fn read_once(
    lp: &mut EventLoop,
    s: mio::net::UnixStream,
) -> (io::Result<Vec<u8>>, mio::net::UnixStream) {
    lp.block_on(async move {
        let s = AsyncSource::with_interest(s, Interest::READABLE);
        let mut buf = [0; 32];
        let n = s.async_io(Interest::READABLE, |s| s.read(&mut buf)).await;
        (n.map(|n| buf[..n].to_vec()), s.into_inner())
    })
    .unwrap()
}

/// `AsyncSource::into_inner` deregisters the source at once and gives it
/// back, as tokio's `AsyncFd::into_inner`: registered again right away
/// (which the poller refuses, `EEXIST`, for a source still registered)
/// it waits and reads as a new source. Taken back in a task, in a
/// callback (which holds the loop, so it cannot be lent), away from the
/// loop, and after the loop is gone; each time the loop, left with
/// nothing, ends.
#[test]
fn into_inner_deregisters_at_once_wherever_it_is_called() {
    let (mut a, b) = mio::net::UnixStream::pair().unwrap();
    let mut lp = EventLoop::new();

    // In a task: registered (at the end of a poll), taken back and
    // registered again.
    let b = lp
        .block_on(async move {
            let s = AsyncSource::with_interest(b, Interest::READABLE);
            task::yield_now().await;
            let again = AsyncSource::with_interest(s.into_inner(), Interest::READABLE);
            task::yield_now().await;
            let mut buf = [0; 8];
            let r = again.try_io(Interest::READABLE, |s| s.read(&mut buf));
            assert_eq!(r.unwrap_err().kind(), io::ErrorKind::WouldBlock);
            again.into_inner()
        })
        .unwrap();
    a.write_all(b"one").unwrap();
    let (got, b) = read_once(&mut lp, b);
    assert_eq!(got.unwrap(), b"one");

    // In a callback: the loop is held, and the source is taken back and
    // handed to a task that registers it again.
    let s = lp.scope(|| AsyncSource::with_interest(b, Interest::READABLE));
    lp.run_nowait().unwrap(); // registered
    let slot = Rc::new(RefCell::new(Some(s)));
    let got = Rc::new(RefCell::new(None));
    let (sl, g) = (slot.clone(), got.clone());
    lp.set_timeout(1, move |_| {
        let b = sl.borrow_mut().take().unwrap().into_inner();
        let g = g.clone();
        task::spawn(async move {
            let s = AsyncSource::with_interest(b, Interest::READABLE);
            let mut buf = [0; 8];
            let n = s.async_io(Interest::READABLE, |s| s.read(&mut buf)).await;
            *g.borrow_mut() = Some((n.map(|n| buf[..n].to_vec()), s.into_inner()));
        });
    });
    let writer = Rc::new(RefCell::new(a));
    let w = writer.clone();
    lp.set_timeout(20, move |_| w.borrow_mut().write_all(b"two"));
    let t = std::time::Instant::now();
    lp.run().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    let (r, b) = got.borrow_mut().take().unwrap();
    assert_eq!(r.unwrap(), b"two");
    drop((b, writer));
    let (mut a, b2) = mio::net::UnixStream::pair().unwrap();

    // Away from the loop: made and registered in a scope, taken back
    // outside it, registered again.
    let s = lp.scope(|| AsyncSource::with_interest(b2, Interest::READABLE));
    lp.run_nowait().unwrap();
    let b2 = s.into_inner();
    assert!(
        lp.is_alive(),
        "the loop lets go of its handle at its next flush"
    );
    a.write_all(b"three").unwrap();
    let (got, b2) = read_once(&mut lp, b2);
    assert_eq!(got.unwrap(), b"three");
    lp.run().unwrap(); // nothing left

    // The loop gone: the source comes back (its poller went with the
    // loop), and works on another loop.
    let s = lp.scope(|| AsyncSource::with_interest(b2, Interest::READABLE));
    lp.run_nowait().unwrap();
    drop(lp);
    let b2 = s.into_inner();
    let mut other = EventLoop::new();
    a.write_all(b"four").unwrap();
    let (got, _b2) = read_once(&mut other, b2);
    assert_eq!(got.unwrap(), b"four");
}
