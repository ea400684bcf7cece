//! `timerloop::net::AsyncSource` (any mio source, for tasks) and
//! `timerloop::net::UdpSocket` on it: real pipes, signals and loopback
//! datagrams. Behaviour only, never speed: real-clock tests have generous
//! bounds; the idle test runs on the virtual clock, whose I/O grace makes
//! it deterministic.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::rc::Rc;
use std::time::Duration;

use timerloop::mio::Interest;
use timerloop::net::{AsyncSource, UdpSocket};
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
        let sig = signals
            .async_io(Interest::READABLE, |s| {
                s.pending().next().ok_or(io::ErrorKind::WouldBlock.into())
            })
            .await
            .unwrap();
        assert_eq!(sig, SIGUSR2);
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
