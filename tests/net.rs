//! `timerloop::net` (issue 11, item 2): async TCP on the loop's own poll,
//! real sockets on loopback. Behaviour only, never speed: real-clock
//! tests have generous bounds; the idle-timeout test runs on the virtual
//! clock, whose I/O grace makes it deterministic.

use std::io::{Read, Write};
use std::time::Duration;

use timerloop::net::{TcpListener, TcpStream};
use timerloop::time::{self, Instant};
use timerloop::{Error, EventLoop, task};

/// A line-echo server task with an idle timeout, and a client task:
/// every line comes back; after the client goes quiet, the server says
/// goodbye exactly `idle` (virtual) ms after the last line.
#[test]
fn idle_timeout_server_on_the_virtual_clock() {
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_io_grace(Duration::from_millis(200));
    let idle = Duration::from_millis(300);
    let (echoes, closed_after) = lp
        .block_on(async move {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            let server = task::spawn(async move {
                let (mut s, _) = listener.accept().await?;
                let mut last = Instant::now();
                let mut buf = [0; 256];
                loop {
                    match time::timeout(idle, s.read(&mut buf)).await {
                        Ok(Ok(0)) => return std::io::Result::Ok(None),
                        Ok(Ok(n)) => {
                            s.write_all(&buf[..n]).await?;
                            last = Instant::now();
                        }
                        Ok(Err(e)) => return Err(e),
                        Err(_elapsed) => {
                            s.write_all(b"idle timeout\n").await?;
                            return Ok(Some(Instant::now() - last));
                        }
                    }
                }
            });
            let mut c = TcpStream::connect(addr).await?;
            let mut echoes = Vec::new();
            for line in ["one\n", "two\n", "three\n"] {
                c.write_all(line.as_bytes()).await?;
                let mut buf = [0; 64];
                let n = c.read(&mut buf).await?;
                echoes.push(String::from_utf8_lossy(&buf[..n]).into_owned());
                time::sleep(Duration::from_millis(100)).await;
            }
            let mut rest = Vec::new();
            let mut buf = [0; 64];
            loop {
                match c.read(&mut buf).await? {
                    0 => break,
                    n => rest.extend_from_slice(&buf[..n]),
                }
            }
            echoes.push(String::from_utf8_lossy(&rest).into_owned());
            let closed_after = server.await.unwrap()?;
            std::io::Result::Ok((echoes, closed_after))
        })
        .unwrap()
        .unwrap();
    assert_eq!(echoes, ["one\n", "two\n", "three\n", "idle timeout\n"]);
    assert_eq!(
        closed_after,
        Some(idle),
        "exactly the idle time, not before"
    );
}

/// A listener on loopback, a client connected to it and the server's end
/// of that connection, made on the current loop.
async fn connected() -> std::io::Result<(TcpListener, TcpStream, TcpStream)> {
    let l = TcpListener::bind("127.0.0.1:0").await?;
    let c = TcpStream::connect(l.local_addr()?).await?;
    let (s, _) = l.accept().await?;
    Ok((l, c, s))
}

/// A read into an empty buffer returns 0 at once, with no data waiting
/// and no wait for any (before, it waited for bytes it could not take and
/// then returned the 0 that means end of stream); the stream reads on.
#[test]
fn a_read_into_an_empty_buffer_returns_0_at_once() {
    let mut lp = EventLoop::new();
    let got = lp
        .block_on(async {
            let (_l, mut c, mut s) = connected().await?;
            let empty = time::timeout(Duration::from_secs(5), s.read(&mut [])).await;
            c.write_all(b"a").await?;
            let mut buf = [0; 4];
            let n = s.read(&mut buf).await?;
            let empty = empty.expect("no wait")?;
            std::io::Result::Ok((empty, buf[..n].to_vec()))
        })
        .unwrap()
        .unwrap();
    assert_eq!(got, (0, b"a".to_vec()));
}

/// Sockets whose loop was dropped: what they can do at once they do
/// (buffered bytes are read, a queued connection is accepted, even after
/// a short read), and what would wait for readiness, which only their
/// own loop could report, fails with `ErrorKind::Other` instead of
/// pending forever. Found by round 35's audit: the second read and the
/// accept never returned.
#[test]
fn sockets_whose_loop_was_dropped_fail_instead_of_waiting() {
    let mut a = EventLoop::new();
    let (l, c, s) = a.block_on(connected()).unwrap().unwrap();
    drop(a);
    let mut b = EventLoop::new();
    let got = b.block_on(async move {
        let (mut c, mut s) = (c, s);
        let gone = |r: std::io::Result<usize>| match r {
            Err(e) if e.kind() == std::io::ErrorKind::Other => {
                assert!(e.to_string().contains("dropped"), "{e}");
                "gone".to_owned()
            }
            other => format!("{other:?}"),
        };
        let mut log = Vec::new();
        let mut buf = [0; 64];
        c.write_all(b"hi").await.unwrap();
        time::sleep(Duration::from_millis(50)).await;
        log.push(format!("{:?}", s.read(&mut buf).await.map_err(|_| ())));
        c.write_all(b"x").await.unwrap();
        time::sleep(Duration::from_millis(50)).await;
        log.push(format!("{:?}", s.read(&mut buf).await.map_err(|_| ())));
        log.push(gone(s.read(&mut buf).await));
        log.push(gone(l.accept().await.map(|_| 0)));
        let addr = l.local_addr().unwrap();
        let _peer = std::net::TcpStream::connect(addr).unwrap();
        time::sleep(Duration::from_millis(50)).await;
        log.push(format!("accepted: {}", l.accept().await.is_ok()));
        log
    });
    let got = got.expect("no stall: every operation returns");
    assert_eq!(got, ["Ok(2)", "Ok(1)", "gone", "gone", "accepted: true"]);
}

/// An operation already waiting on a socket when the socket's loop is
/// dropped is woken and fails (`ErrorKind::Other`), instead of waiting
/// forever: what could report its readiness is gone. Found by round 35's
/// review of the fix above, which covered only operations polled after
/// the loop was gone.
#[test]
fn an_operation_waiting_when_its_sockets_loop_is_dropped_fails() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let mut a = EventLoop::new();
    let (l, c, s) = a.block_on(connected()).unwrap().unwrap();
    let a = Rc::new(RefCell::new(Some(a)));
    let mut b = EventLoop::new();
    let got = b
        .block_on(async move {
            let _client = c;
            let reader = task::spawn(async move {
                let mut s = s;
                let mut buf = [0; 8];
                s.read(&mut buf).await.map_err(|e| e.kind())
            });
            let accepter =
                task::spawn(async move { l.accept().await.map(|_| ()).map_err(|e| e.kind()) });
            time::sleep(Duration::from_millis(20)).await;
            drop(a.borrow_mut().take()); // the sockets' loop goes
            let r = time::timeout(Duration::from_secs(10), reader).await;
            let l = time::timeout(Duration::from_secs(10), accepter).await;
            (r.map(Result::unwrap), l.map(Result::unwrap))
        })
        .unwrap();
    let (read, accept) = got;
    let other = std::io::ErrorKind::Other;
    assert_eq!(read.ok(), Some(Err(other)), "the read woken, and failed");
    assert_eq!(
        accept.ok(),
        Some(Err(other)),
        "the accept woken, and failed"
    );
}

/// A slow reader back-pressures `write_all` (no busy loop, no lost
/// bytes): 8 MiB arrive intact, read 4 KiB at a time with pauses.
#[test]
fn write_all_to_a_slow_reader_loses_nothing() {
    const TOTAL: usize = 8 << 20;
    let mut lp = EventLoop::new();
    let got = lp
        .block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            let writer = task::spawn(async move {
                let (mut s, _) = listener.accept().await?;
                let data: Vec<u8> = (0..TOTAL).map(|i| (i % 253) as u8).collect();
                s.write_all(&data).await?;
                std::io::Result::Ok(())
            });
            let mut c = TcpStream::connect(addr).await?;
            let mut got = Vec::with_capacity(TOTAL);
            let mut buf = [0; 4096];
            let mut reads = 0u32;
            loop {
                match c.read(&mut buf).await? {
                    0 => break,
                    n => got.extend_from_slice(&buf[..n]),
                }
                reads += 1;
                if reads.is_multiple_of(256) {
                    time::sleep(Duration::from_millis(1)).await;
                }
            }
            writer.await.unwrap()?;
            std::io::Result::Ok(got)
        })
        .unwrap()
        .unwrap();
    assert_eq!(got.len(), TOTAL);
    assert!(got.iter().enumerate().all(|(i, &b)| b == (i % 253) as u8));
}

/// A task waiting in `accept` keeps the loop alive (it is not stalled):
/// a client on another thread connects later and is served.
#[test]
fn a_waiting_accept_keeps_the_loop_alive() {
    let mut lp = EventLoop::new();
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = std_listener.local_addr().unwrap();
    let client = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.write_all(b"hi").unwrap();
        let mut back = String::new();
        c.read_to_string(&mut back).unwrap();
        back
    });
    lp.block_on(async move {
        let l = TcpListener::from_std(std_listener)?;
        let (mut s, _) = l.accept().await?;
        let mut buf = [0; 2];
        let mut n = 0;
        while n < 2 {
            n += s.read(&mut buf[n..]).await?;
        }
        s.write_all(b"bye").await?;
        std::io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
    assert_eq!(client.join().unwrap(), "bye");
    assert_eq!(lp.stats().io_sources, 0, "both sockets dropped and closed");
}

/// Dropped sockets are deregistered and closed before the loop next
/// polls, even one dropped before it was ever registered: nothing keeps
/// the loop waiting on nothing.
#[test]
fn dropped_sockets_leave_nothing_behind() {
    let mut lp = EventLoop::with_virtual_clock();
    lp.block_on(async {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let _ = TcpListener::bind("127.0.0.1:0").await.unwrap(); // made and dropped at once
        let c = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (s, _) = l.accept().await.unwrap();
        drop((c, s, l));
        time::sleep(Duration::from_millis(1)).await;
    })
    .unwrap();
    assert_eq!(lp.stats().io_sources, 0);
    assert!(!lp.is_alive());
}

/// A socket dropped in a task is closed at once, as a tokio socket is:
/// its address can be bound again right away, whether the loop had
/// registered it yet or not, and a connection's peer sees the end with
/// no turn of the loop between. (Before, the close waited for the loop's
/// next flush point, and the bind failed with `AddrInUse`.)
#[test]
fn a_socket_dropped_in_a_task_is_closed_at_once() {
    let mut lp = EventLoop::with_virtual_clock();
    lp.block_on(async {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        // Registered: it has waited in accept.
        let pending = time::timeout(Duration::from_millis(5), l.accept()).await;
        assert!(pending.is_err());
        drop(l);
        let again = TcpListener::bind(addr).await.expect("rebound at once");
        // Dropped before the loop registered it.
        drop(again);
        let third = TcpListener::bind(addr).await.expect("rebound at once");

        // The peer of a dropped stream reads its end without waiting.
        let mut c = TcpStream::connect(addr).await.unwrap();
        let (s, _) = third.accept().await.unwrap();
        drop(s);
        let mut buf = [0; 8];
        assert_eq!(c.read(&mut buf).await.unwrap(), 0);
    })
    .unwrap();
    assert_eq!(lp.stats().io_sources, 0);
}

/// A socket dropped in a callback, where the loop is held, is closed
/// before the loop next polls, as before: the next task to run can bind
/// its address.
#[test]
fn a_socket_dropped_in_a_callback_is_closed_before_the_next_poll() {
    let mut lp = EventLoop::with_virtual_clock();
    let l = lp
        .block_on(async { TcpListener::bind("127.0.0.1:0").await.unwrap() })
        .unwrap();
    let addr = l.local_addr().unwrap();
    let mut l = Some(l);
    lp.set_timeout(1, move |_| drop(l.take()));
    let rebound = lp
        .block_on(async move {
            time::sleep(Duration::from_millis(2)).await;
            TcpListener::bind(addr).await.is_ok()
        })
        .unwrap();
    assert!(rebound);
}

/// A refused connection is an error, not a hang; an unconnected future
/// dropped midway leaves nothing registered.
#[test]
fn a_refused_connect_is_an_error() {
    let mut lp = EventLoop::new();
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    }; // closed: nobody listens there now
    let r = lp.block_on(async move { TcpStream::connect(addr).await.map(|_| ()) });
    let e = r.unwrap().unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
    assert_eq!(lp.stats().io_sources, 0);
}

/// A task that waits for a read that can never come, with nothing else
/// alive: the socket keeps the loop alive (Node keeps an open socket's
/// process alive), so `block_on` does not report a stall; the peer
/// closing ends the read with EOF.
#[test]
fn an_open_socket_is_not_a_stall() {
    let mut lp = EventLoop::new();
    let r = lp.block_on(async {
        let l = TcpListener::bind("127.0.0.1:0").await?;
        let addr = l.local_addr()?;
        let closer = std::thread::spawn(move || {
            let c = std::net::TcpStream::connect(addr).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            drop(c);
        });
        let (mut s, _) = l.accept().await?;
        let mut buf = [0; 1];
        let n = s.read(&mut buf).await?;
        closer.join().unwrap();
        std::io::Result::Ok(n)
    });
    assert!(!matches!(r, Err(Error::Stalled)));
    assert_eq!(r.unwrap().unwrap(), 0);
}

/// A short read (fewer bytes than the buffer holds) waits for the next
/// readiness event instead of reading again to find `WouldBlock`: bytes
/// that arrive later, in pieces, with and without the peer's close right
/// behind them, are all read, and the close is read as 0.
#[test]
fn short_reads_wait_for_readiness_and_lose_nothing() {
    let mut lp = EventLoop::new();
    let got = lp
        .block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            let client = task::spawn(async move {
                let mut c = TcpStream::connect(addr).await?;
                for piece in [&b"one "[..], b"two ", b"three "] {
                    c.write_all(piece).await?;
                    time::sleep(Duration::from_millis(5)).await;
                }
                // The last piece and the close arrive together.
                c.write_all(b"four").await?;
                drop(c);
                std::io::Result::Ok(())
            });
            let (mut s, _) = listener.accept().await?;
            let mut got = Vec::new();
            let mut buf = [0; 64];
            loop {
                match s.read(&mut buf).await? {
                    0 => break,
                    n => {
                        assert!(n < buf.len(), "every read here is short");
                        got.extend_from_slice(&buf[..n]);
                    }
                }
            }
            client.await.unwrap()?;
            std::io::Result::Ok(got)
        })
        .unwrap()
        .unwrap();
    assert_eq!(got, b"one two three four");
}

/// Data and the peer's close that are both there before the first read:
/// the short read of the data is followed by the 0 of the close, without
/// waiting for an event that will not come again; whether or not an event
/// reported them before the first read.
#[test]
fn data_and_close_before_the_first_read() {
    for event_first in [true, false] {
        let mut lp = EventLoop::new();
        let got = lp
            .block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await?;
                let addr = listener.local_addr()?;
                let mut c = std::net::TcpStream::connect(addr)?;
                c.write_all(b"all at once")?;
                drop(c);
                let (mut s, _) = listener.accept().await?;
                if event_first {
                    // The loop polls: an event reports the data and the close.
                    time::sleep(Duration::from_millis(20)).await;
                }
                let mut buf = [0; 64];
                let n = s.read(&mut buf).await?;
                let eof = time::timeout(Duration::from_secs(10), s.read(&mut buf)).await;
                std::io::Result::Ok((buf[..n].to_vec(), eof.map(|r| r.ok())))
            })
            .unwrap()
            .unwrap();
        assert_eq!(got.0, b"all at once", "event first: {event_first}");
        assert_eq!(
            got.1,
            Ok(Some(0)),
            "the close is read (event first: {event_first})"
        );
    }
}

/// A task waiting on a stream that another task drops (the two share it
/// through a cell, polling with `poll_read`) is woken, sees it gone and
/// ends, instead of waiting for readiness that can no longer come. Found
/// by round 37's audit: the drop threw the stored waker away.
#[test]
fn a_waiter_on_a_dropped_stream_is_woken() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let mut lp = EventLoop::new();
    let got = lp
        .block_on(async {
            let (_l, _c, s) = connected().await?;
            let cell = Rc::new(RefCell::new(Some(s)));
            let c2 = cell.clone();
            let reader = task::spawn(async move {
                let mut b = [0u8; 8];
                std::future::poll_fn(|cx| match c2.borrow_mut().as_mut() {
                    Some(s) => s.poll_read(cx, &mut b),
                    None => std::task::Poll::Ready(Err(std::io::ErrorKind::NotConnected.into())),
                })
                .await
            });
            time::sleep(Duration::from_millis(10)).await;
            drop(cell.borrow_mut().take());
            let r = time::timeout(Duration::from_secs(5), reader).await;
            std::io::Result::Ok(r.map(|j| j.unwrap().map_err(|e| e.kind())))
        })
        .unwrap()
        .unwrap();
    assert_eq!(got, Ok(Err(std::io::ErrorKind::NotConnected)));
}

/// `split` lets one task read and write one stream at once: 4 MiB sent
/// to an echo peer while its echo is read back, in a `join`. Without the
/// halves, writing it all before reading would fill both directions'
/// buffers and wait for ever.
#[test]
fn split_halves_read_and_write_at_once() {
    const SIZE: usize = 4 << 20;
    let mut lp = EventLoop::new();
    let echoed = lp
        .block_on(async {
            let (_l, mut c, s) = connected().await?;
            let echo = task::spawn(async move {
                let (mut r, mut w) = s.into_split();
                let mut buf = vec![0; 64 << 10];
                loop {
                    let n = r.read(&mut buf).await?;
                    if n == 0 {
                        return std::io::Result::Ok(());
                    }
                    w.write_all(&buf[..n]).await?;
                }
            });
            let data: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
            let (mut r, mut w) = c.split();
            let send = async {
                w.write_all(&data).await?;
                std::io::Result::Ok(())
            };
            let receive = async {
                let mut got = Vec::with_capacity(SIZE);
                let mut buf = vec![0; 64 << 10];
                while got.len() < SIZE {
                    let n = r.read(&mut buf).await?;
                    assert_ne!(n, 0, "the echo ended early");
                    got.extend_from_slice(&buf[..n]);
                }
                std::io::Result::Ok(got)
            };
            let (sent, got) = futures_util::future::join(send, receive).await;
            sent?;
            c.shutdown(std::net::Shutdown::Write)?;
            echo.await.unwrap()?;
            std::io::Result::Ok(got? == data)
        })
        .unwrap()
        .unwrap();
    assert!(echoed);
}

/// Owned halves in two tasks: the write half's drop shuts the write
/// direction down (the peer reads the end of the stream) while the read
/// half still reads; `reunite` takes only one stream's two halves, and
/// gives the stream back with nothing shut down.
#[test]
fn owned_halves_drop_and_reunite() {
    let mut lp = EventLoop::new();
    let got = lp
        .block_on(async {
            let (_l, mut c, s) = connected().await?;
            let (mut r, w) = s.into_split();
            let writer = task::spawn(async move {
                let mut w = w;
                w.write_all(b"last words").await?;
                std::io::Result::Ok(()) // w dropped: write direction shut down
            });
            writer.await.unwrap()?;
            let mut from_server = Vec::new();
            let mut buf = [0; 32];
            loop {
                let n = c.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                from_server.extend_from_slice(&buf[..n]);
            }
            c.write_all(b"still heard").await?;
            let n = r.read(&mut buf).await?;
            let heard = buf[..n].to_vec();

            let (_l2, c2, s2) = connected().await?;
            let (r2, w2) = s2.into_split();
            let (r3, w3) = c2.into_split();
            let mismatched = r2.reunite(w3).unwrap_err();
            let timerloop::net::ReuniteError(r2, w3) = mismatched;
            let mut s2 = r2.reunite(w2).expect("one stream's halves");
            let mut c2 = r3.reunite(w3).expect("one stream's halves");
            s2.write_all(b"ok").await?;
            let n = c2.read(&mut buf).await?;
            std::io::Result::Ok((from_server, heard, buf[..n].to_vec()))
        })
        .unwrap()
        .unwrap();
    assert_eq!(got.0, b"last words");
    assert_eq!(got.1, b"still heard");
    assert_eq!(got.2, b"ok");
}

/// `TcpListener::bind` listens with Node's backlog (511), not std's 128:
/// 400 clients that connect while nobody accepts all get their
/// connection at once. With a backlog of 128, the connects past the
/// 129th wait for a SYN sent again a second later, and fail here (the
/// listener never accepts, so they time out at 3 s).
#[test]
fn bind_listens_with_nodes_backlog() {
    let cap = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(4096);
    if cap < 511 {
        eprintln!("net.core.somaxconn is {cap}: the kernel caps the backlog, nothing to check");
        return;
    }
    let mut lp = EventLoop::new();
    let l = lp
        .block_on(async { TcpListener::bind("127.0.0.1:0").await })
        .unwrap()
        .unwrap();
    let addr = l.local_addr().unwrap();
    // The loop registers the listener at its next flush point; no accept
    // ever runs, so the connections stay in the backlog.
    lp.run_nowait().unwrap();
    let clients: Vec<_> = (0..400)
        .map(|i| {
            std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(3))
                .unwrap_or_else(|e| panic!("connect {i}: {e}"))
        })
        .collect();
    assert_eq!(clients.len(), 400);
    drop(l);
}

/// Node's `server.unref()` and `socket.unref()`: `set_ref(false)` makes
/// a socket stop keeping its loop alive, before it is registered (made
/// and unrefed in the same scope) or after (in a task, at once), and
/// `set_ref(true)` takes it back. An unrefed socket still delivers its
/// events while something else keeps the loop running.
#[test]
fn unrefed_sockets_do_not_keep_the_loop_alive() {
    // Unrefed before its registration: an accept that waits on it alone
    // is a stall, as node exits with an unrefed server listening.
    let mut lp = EventLoop::new();
    let r = lp.block_on(async {
        let l = TcpListener::bind("127.0.0.1:0").await?;
        l.set_ref(false);
        assert!(!l.has_ref());
        l.accept().await.map(drop)
    });
    assert!(matches!(r, Err(Error::Stalled)), "{r:?}");
    // Made and unrefed where the loop is lent: applied when registered.
    let mut lp = EventLoop::new();
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    lp.scope(|| {
        let l = TcpListener::from_std(std_listener).unwrap();
        l.set_ref(false);
        task::spawn(async move { l.accept().await.map(drop) });
    });
    let t = std::time::Instant::now();
    lp.run().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "run returned at once");
    // Unrefed and refed again: served, as before.
    let mut lp = EventLoop::new();
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = std_listener.local_addr().unwrap();
    let client = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        let mut back = String::new();
        c.read_to_string(&mut back).unwrap();
        back
    });
    lp.block_on(async move {
        let l = TcpListener::from_std(std_listener)?;
        l.set_ref(false);
        time::sleep(Duration::from_millis(1)).await; // registered, unrefed
        l.set_ref(true);
        assert!(l.has_ref());
        let (mut s, _) = l.accept().await?;
        s.write_all(b"served").await?;
        std::io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
    assert_eq!(client.join().unwrap(), "served");
    // An unrefed stream's read completes while a refed timer keeps the
    // loop running; once nothing refed is left, the loop ends with the
    // next read still waiting.
    let mut lp = EventLoop::new();
    let got = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let g = got.clone();
    lp.block_on(async move {
        let (l, mut c, mut s) = connected().await?;
        l.set_ref(false);
        s.set_ref(false);
        assert!(!s.has_ref() && c.has_ref());
        task::spawn(async move {
            let mut buf = [0; 8];
            while let Ok(n @ 1..) = s.read(&mut buf).await {
                g.borrow_mut().extend_from_slice(&buf[..n]);
            }
        });
        c.write_all(b"hi").await?;
        time::sleep(Duration::from_millis(50)).await;
        // The client stays open (refed) in a detached task that leaves.
        task::spawn(async move {
            time::sleep(Duration::from_millis(20)).await;
            drop(c);
        });
        std::io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
    let t = std::time::Instant::now();
    lp.run().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(*got.borrow(), b"hi");
}

/// A socket's file descriptor, borrowed for a call (`with_fd`), sets an
/// option the type does not wrap on an accepted stream, through socket2;
/// `take_error` and `AsRawFd` as std's.
#[test]
fn with_fd_reaches_options_the_types_do_not_wrap() {
    use std::os::fd::AsRawFd;
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let (l, c, s) = connected().await?;
        assert!(!s.with_fd(|fd| socket2::SockRef::from(&fd).keepalive())?);
        s.with_fd(|fd| socket2::SockRef::from(&fd).set_keepalive(true))?;
        assert!(s.with_fd(|fd| socket2::SockRef::from(&fd).keepalive())?);
        assert_eq!(s.with_fd(|fd| fd.as_raw_fd()), s.as_raw_fd());
        assert_ne!(s.as_raw_fd(), c.as_raw_fd());
        assert!(l.as_raw_fd() >= 0);
        assert!(s.take_error()?.is_none() && l.take_error()?.is_none());
        // Zero linger: the drop resets the connection, as node's
        // resetAndDestroy(); the peer reads a reset, not an end.
        s.with_fd(|fd| socket2::SockRef::from(&fd).set_linger(Some(Duration::ZERO)))?;
        drop(s);
        let mut c = c;
        let r = c.read(&mut [0; 4]).await;
        assert_eq!(r.unwrap_err().kind(), std::io::ErrorKind::ConnectionReset);
        std::io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}
