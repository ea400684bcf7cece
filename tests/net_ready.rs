//! `timerloop::net`'s readiness API, tokio's: `ready`/`readable`/
//! `writable`, the `try_` operations, peeking, and the socket options,
//! on real loopback sockets. Behaviour only, never speed: what is
//! asserted is what the loop's own bookkeeping decides (a wait right
//! after a `WouldBlock` is pending, a wait with no bytes sent never ends
//! by itself), and the one timed test runs on the virtual clock.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::io::{self, ErrorKind};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use timerloop::net::{Interest, Ready, UdpSocket};
use timerloop::time::{self, Instant};
use timerloop::{EventLoop, task};

mod common;
use common::*;

/// `try_read` on an empty socket says `WouldBlock` and clears the read
/// readiness: `readable()` then waits (it is still waiting after the
/// loop has gone round with nothing sent), ends once the peer writes, and
/// `try_read` returns the bytes.
#[test]
fn try_read_would_block_then_readable_waits_for_the_peer() {
    let mut lp = EventLoop::new();
    let got = lp
        .block_on(async {
            let (_l, mut c, s) = connected().await?;
            let s = Rc::new(s);
            let mut buf = [0; 16];
            assert!(would_block(s.try_read(&mut buf)));
            let woke = Rc::new(Cell::new(false));
            let reader = task::spawn({
                let (s, woke) = (s.clone(), woke.clone());
                async move {
                    s.readable().await?;
                    woke.set(true);
                    io::Result::Ok(())
                }
            });
            time::sleep(Duration::from_millis(30)).await;
            assert!(!woke.get(), "readable() ended with no byte sent");
            c.write_all(b"bytes").await?;
            reader.await.unwrap()?;
            let n = loop {
                match s.try_read(&mut buf) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => s.readable().await?,
                    r => break r?,
                }
            };
            io::Result::Ok(buf[..n].to_vec())
        })
        .unwrap()
        .unwrap();
    assert_eq!(got, b"bytes");
}

/// A vectored read of more slices than one system call takes (std passes
/// at most `IOV_MAX`, 1024 on Linux, to `readv`) moves fewer bytes than
/// the slices hold with bytes still queued: that is not the short read
/// that drains the socket, so the read readiness stays and `readable()`
/// is ready at once. Before, it was cleared, and the wait depended on a
/// new event from the kernel: with the peer silent, on Linux's
/// edge-triggered epoll, one may never come.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn a_vectored_read_capped_by_iov_max_keeps_the_readiness() {
    let mut lp = EventLoop::new();
    let rest = lp
        .block_on(async {
            let (_l, mut c, s) = connected().await?;
            c.write_all(&[7; 4096]).await?;
            // Until all 4096 bytes are queued at `s` (a peek takes none).
            let mut probe = [0; 4096];
            while s.peek(&mut probe).await? < probe.len() {
                task::yield_now().await;
            }
            let mut store = vec![0u8; 2048];
            let mut bufs: Vec<io::IoSliceMut<'_>> =
                store.chunks_mut(1).map(io::IoSliceMut::new).collect();
            assert_eq!(s.try_read_vectored(&mut bufs)?, 1024, "one readv's slices");
            assert!(
                ready_at_once(s.readable()).await.is_ready(),
                "readable() waits with 3072 bytes queued"
            );
            let mut rest = [0; 4096];
            s.try_read(&mut rest)
        })
        .unwrap()
        .unwrap();
    assert_eq!(rest, 3072);
}

/// Every task waiting in `readable()` on one stream is woken by the
/// bytes, not only the last one to poll.
#[test]
fn every_readable_waiter_is_woken() {
    let mut lp = EventLoop::new();
    let woken = lp
        .block_on(async {
            let (_l, mut c, s) = connected().await?;
            let s = Rc::new(s);
            assert!(would_block(s.try_read(&mut [0; 4])));
            let woken = Rc::new(Cell::new(0));
            let waiters: Vec<_> = (0..3)
                .map(|_| {
                    let (s, woken) = (s.clone(), woken.clone());
                    task::spawn(async move {
                        s.readable().await?;
                        woken.set(woken.get() + 1);
                        io::Result::Ok(())
                    })
                })
                .collect();
            time::sleep(Duration::from_millis(20)).await;
            assert_eq!(woken.get(), 0);
            c.write_all(b"!").await?;
            for w in waiters {
                w.await.unwrap()?;
            }
            io::Result::Ok(woken.get())
        })
        .unwrap()
        .unwrap();
    assert_eq!(woken, 3);
}

/// `peek` waits for bytes and leaves them in the socket: a second peek
/// and then a read get them again.
#[test]
fn peek_does_not_consume() {
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let (_l, mut c, mut s) = connected().await?;
        let peeker = task::spawn(async move {
            let mut buf = [0; 16];
            let n = s.peek(&mut buf).await?;
            let first = buf[..n].to_vec();
            let n = poll_fn(|cx| s.poll_peek(cx, &mut buf)).await?;
            assert_eq!(&buf[..n], &first[..], "a second peek sees the same bytes");
            let mut all = Vec::new();
            while all.len() < 5 {
                let n = s.read(&mut buf).await?;
                all.extend_from_slice(&buf[..n]);
            }
            io::Result::Ok((first, all))
        });
        time::sleep(Duration::from_millis(10)).await;
        c.write_all(b"hello").await?;
        let (first, all) = peeker.await.unwrap()?;
        assert!(!first.is_empty() && b"hello".starts_with(&first));
        assert_eq!(all, b"hello");
        assert!(an_empty_peek_is_0().await?);
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// A peek into an empty buffer is 0 at once, as a read is.
async fn an_empty_peek_is_0() -> io::Result<bool> {
    let (_l, _c, s) = connected().await?;
    let r = ready_at_once(s.peek(&mut [])).await;
    Ok(matches!(r, Poll::Ready(Ok(0))))
}

/// `try_write` until `WouldBlock` fills the send buffer and clears the
/// write readiness: a `writable()` right after is pending, and it ends
/// once the peer drains what was written; `try_write` then succeeds.
#[test]
fn try_write_until_would_block_then_writable_waits_for_the_drain() {
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let (_l, c, mut s) = connected().await?;
        let chunk = vec![1u8; 64 << 10];
        let mut written = 0;
        loop {
            match c.try_write(&chunk) {
                Ok(n) => written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        assert!(written > 0);
        assert!(
            ready_at_once(c.writable()).await.is_pending(),
            "writable() right after WouldBlock waits"
        );
        let drain = task::spawn(async move {
            let mut buf = vec![0; 64 << 10];
            let mut read = 0;
            while read < written {
                read += s.read(&mut buf).await?;
            }
            io::Result::Ok((s, read))
        });
        c.writable().await?;
        let (_s, read) = drain.await.unwrap()?;
        assert_eq!(read, written);
        let n = loop {
            match c.try_write(b"more") {
                Err(e) if e.kind() == ErrorKind::WouldBlock => c.writable().await?,
                r => break r?,
            }
        };
        assert_eq!(n, 4);
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// `ready(READABLE | WRITABLE)` says which direction: writable alone on
/// an idle stream whose reads said `WouldBlock`; pending once the writes
/// said so too; readable once the peer writes.
#[test]
fn ready_for_both_directions_says_which() {
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let (_l, mut c, s) = connected().await?;
        let both = Interest::READABLE | Interest::WRITABLE;
        assert!(would_block(s.try_read(&mut [0; 8])));
        let r = s.ready(both).await?;
        assert!(r.is_writable() && !r.is_readable(), "{r:?}");
        assert_eq!(r, Ready::WRITABLE);
        let chunk = vec![0u8; 64 << 10];
        while s.try_write(&chunk).is_ok() {}
        assert!(ready_at_once(s.ready(both)).await.is_pending());
        c.write_all(b"x").await?;
        let r = s.ready(both).await?;
        assert!(r.is_readable(), "{r:?}");
        assert_eq!(s.try_read(&mut [0; 8])?, 1);
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// A closed read direction is final and ready: `ready(READABLE)` ends
/// at once with `is_read_closed`, and a read returns 0.
#[test]
fn a_closed_read_direction_is_ready_and_says_so() {
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let (_l, c, s) = connected().await?;
        assert!(would_block(s.try_read(&mut [0; 8])));
        c.shutdown(std::net::Shutdown::Write)?;
        let r = s.ready(Interest::READABLE).await?;
        assert!(r.is_readable(), "{r:?}");
        assert_eq!(s.try_read(&mut [0; 8])?, 0, "the end of the stream");
        let r = s.ready(Interest::READABLE).await?;
        assert!(r.is_read_closed(), "{r:?}");
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// An interest with neither direction (PRIORITY) is refused: the stream
/// is not registered for it, and a wait for it would never end.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn ready_for_an_unregistered_interest_is_an_error() {
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let (_l, _c, s) = connected().await?;
        let e = s.ready(Interest::PRIORITY).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        let e = s.ready(Interest::READABLE | Interest::PRIORITY).await;
        assert_eq!(e.unwrap_err().kind(), ErrorKind::InvalidInput);
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// Sockets whose loop was dropped: a readiness wait ends when the
/// direction may still be ready (nothing said `WouldBlock`), and once a
/// `try_` said `WouldBlock` it fails (`ErrorKind::Other`) instead of
/// waiting for readiness only the dropped loop could report.
#[test]
fn a_readiness_wait_after_the_loop_is_dropped_fails() {
    let mut a = EventLoop::new();
    let (_l, c, s) = a.block_on(connected()).unwrap().unwrap();
    drop(a);
    let mut b = EventLoop::new();
    let got = b
        .block_on(async move {
            let mut log = Vec::new();
            log.push(format!("{:?}", s.readable().await.map_err(|e| e.kind())));
            log.push(format!(
                "{:?}",
                s.try_read(&mut [0; 4]).map_err(|e| e.kind())
            ));
            log.push(format!("{:?}", s.readable().await.map_err(|e| e.kind())));
            log.push(format!(
                "{:?}",
                s.ready(Interest::READABLE).await.map_err(|e| e.kind())
            ));
            c.try_write(b"late")?;
            time::sleep(Duration::from_millis(30)).await;
            // The bytes are there, but only a try finds them: the wait
            // cannot know.
            log.push(format!("{:?}", s.readable().await.map_err(|e| e.kind())));
            log.push(format!(
                "{:?}",
                s.try_read(&mut [0; 8]).map_err(|e| e.kind())
            ));
            io::Result::Ok(log)
        })
        .unwrap()
        .unwrap();
    assert_eq!(
        got,
        [
            "Ok(())",
            "Err(WouldBlock)",
            "Err(Other)",
            "Err(Other)",
            "Err(Other)",
            "Ok(4)"
        ]
    );
}

/// A `readable()` already waiting when the stream's loop is dropped is
/// woken, and fails, instead of waiting forever.
#[test]
fn a_readable_waiting_when_the_loop_is_dropped_fails() {
    let mut a = EventLoop::new();
    let (_l, c, s) = a.block_on(connected()).unwrap().unwrap();
    let a = Rc::new(RefCell::new(Some(a)));
    let mut b = EventLoop::new();
    let got = b
        .block_on(async move {
            let _client = c;
            let waiter = task::spawn(async move {
                assert!(would_block(s.try_read(&mut [0; 4])));
                s.readable().await.map_err(|e| e.kind())
            });
            time::sleep(Duration::from_millis(20)).await;
            drop(a.borrow_mut().take()); // the stream's loop goes
            time::timeout(Duration::from_secs(10), waiter).await
        })
        .unwrap();
    assert_eq!(
        got.map(Result::unwrap),
        Ok(Err(ErrorKind::Other)),
        "woken, and failed"
    );
}

/// On the virtual clock, a `readable()` that nothing ends, under
/// `time::timeout`, expires at exactly the timeout's virtual time.
#[test]
fn a_readable_under_a_virtual_timeout_expires_exactly() {
    let mut lp = EventLoop::with_virtual_clock();
    let waited = lp
        .block_on(async {
            let (_l, _c, s) = connected().await?;
            assert!(would_block(s.try_read(&mut [0; 4])));
            let start = Instant::now();
            let r = time::timeout(Duration::from_millis(250), s.readable()).await;
            assert!(r.is_err(), "elapsed: {r:?}");
            io::Result::Ok(Instant::now() - start)
        })
        .unwrap()
        .unwrap();
    assert_eq!(waited, Duration::from_millis(250));
}

/// A `readable()`/`try_read` loop on a socket that always has bytes
/// yields to the loop as a `read` loop does (the `try_` reads count in
/// the streak): an immediate queued beside it runs long before the loop
/// has read everything.
#[test]
fn a_readable_try_read_loop_yields_to_the_loop() {
    const BYTES: usize = 300;
    let mut lp = EventLoop::new();
    let seen_at = lp
        .block_on(async {
            let (_l, mut c, s) = connected().await?;
            c.write_all(&[7; BYTES]).await?;
            let mut buf = [0; BYTES];
            while s.peek(&mut buf).await? < BYTES {
                time::sleep(Duration::from_millis(1)).await;
            }
            let reads = Rc::new(Cell::new(0));
            let seen_at = Rc::new(Cell::new(None));
            let other = task::spawn({
                let (reads, seen_at) = (reads.clone(), seen_at.clone());
                async move {
                    time::immediate().await;
                    seen_at.set(Some(reads.get()));
                }
            });
            while reads.get() < BYTES {
                s.readable().await?;
                match s.try_read(&mut [0; 1]) {
                    Ok(1) => reads.set(reads.get() + 1),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    other => panic!("{other:?}"),
                }
            }
            other.await.unwrap();
            io::Result::Ok(seen_at.get())
        })
        .unwrap()
        .unwrap();
    let seen_at = seen_at.expect("the other task ran");
    assert!(
        seen_at < BYTES,
        "the reader yielded (other ran after {seen_at} reads)"
    );
}

/// The owned halves in two tasks: the read half's `readable`/`try_read`/
/// `peek`, the write half's `writable`/`try_write`/`ready`.
#[test]
fn owned_halves_have_the_readiness_api() {
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let (_l, c, s) = connected().await?;
        let (mut r, _sw) = s.into_split();
        let (_cr, w) = c.into_split();
        assert!(would_block(r.try_read(&mut [0; 8])));
        let reader = task::spawn(async move {
            let mut buf = [0; 8];
            let n = r.peek(&mut buf).await?;
            assert_eq!(&buf[..n], &b"half"[..n]);
            let mut got = Vec::new();
            while got.len() < 4 {
                r.readable().await?;
                match r.try_read(&mut buf) {
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            io::Result::Ok(got)
        });
        assert!(w.ready(Interest::WRITABLE).await?.is_writable());
        w.writable().await?;
        assert_eq!(w.try_write(b"half")?, 4);
        assert_eq!(reader.await.unwrap()?, b"half");
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// The TCP options: `TCP_NODELAY` and `IP_TTL` on a stream, `IP_TTL` on
/// a listener, each read back as set.
#[test]
fn tcp_options_round_trip() {
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let (l, c, _s) = connected().await?;
        for on in [true, false] {
            c.set_nodelay(on)?;
            assert_eq!(c.nodelay()?, on);
        }
        c.set_ttl(17)?;
        assert_eq!(c.ttl()?, 17);
        l.set_ttl(33)?;
        assert_eq!(l.ttl()?, 33);
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// UDP: `try_recv` says `WouldBlock` on an empty socket and `readable()`
/// then waits for a datagram; `try_send`, `try_send_to` and
/// `try_recv_from` move datagrams at once; `peek_from` leaves the
/// datagram for the next receive.
#[test]
fn udp_try_operations_and_peek() {
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let a = UdpSocket::bind("127.0.0.1:0").await?;
        let b = Rc::new(UdpSocket::bind("127.0.0.1:0").await?);
        a.connect(b.local_addr()?).await?;
        let mut buf = [0; 16];
        assert!(would_block(b.try_recv(&mut buf)));
        assert!(would_block(b.try_recv_from(&mut buf)));
        assert!(ready_at_once(b.readable()).await.is_pending());
        let woke = Rc::new(Cell::new(false));
        let waiter = task::spawn({
            let (b, woke) = (b.clone(), woke.clone());
            async move {
                b.readable().await?;
                woke.set(true);
                io::Result::Ok(())
            }
        });
        time::sleep(Duration::from_millis(20)).await;
        assert!(!woke.get(), "readable() ended with no datagram sent");
        assert_eq!(a.try_send(b"one")?, 3);
        waiter.await.unwrap()?;
        let peeked = b.peek_from(&mut buf).await?;
        assert_eq!(peeked, (3, a.local_addr()?));
        let peeked = poll_fn(|cx| b.poll_peek_from(cx, &mut buf)).await?;
        assert_eq!(peeked, (3, a.local_addr()?));
        assert_eq!(b.try_recv_from(&mut buf)?, (3, a.local_addr()?));
        assert_eq!(&buf[..3], b"one");
        assert!(would_block(b.try_recv_from(&mut buf)));

        assert_eq!(b.try_send_to(b"two", a.local_addr()?)?, 3);
        let r = a.ready(Interest::READABLE | Interest::WRITABLE).await?;
        assert!(r.is_writable(), "{r:?}");
        let n = loop {
            a.readable().await?;
            match a.try_recv(&mut buf) {
                Err(e) if e.kind() == ErrorKind::WouldBlock => continue,
                r => break r?,
            }
        };
        assert_eq!(&buf[..n], b"two");
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// UDP's multicast options read back as set. Joining and leaving a
/// group needs the host's multicast support (an interface, a route):
/// where joining fails, only the options are asserted.
#[test]
fn udp_multicast_options_round_trip() {
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let s = UdpSocket::bind("0.0.0.0:0").await?;
        for on in [false, true] {
            s.set_multicast_loop_v4(on)?;
            assert_eq!(s.multicast_loop_v4()?, on);
        }
        s.set_multicast_ttl_v4(5)?;
        assert_eq!(s.multicast_ttl_v4()?, 5);
        let group = Ipv4Addr::new(239, 255, 42, 99);
        match s.join_multicast_v4(group, Ipv4Addr::LOCALHOST) {
            Ok(()) => {
                s.leave_multicast_v4(group, Ipv4Addr::LOCALHOST)?;
                let e = s.leave_multicast_v4(group, Ipv4Addr::LOCALHOST);
                assert!(e.is_err(), "left twice");
            }
            Err(e) => eprintln!("no IPv4 multicast here ({e}): options only"),
        }
        if let Ok(s6) = UdpSocket::bind("[::]:0").await {
            for on in [false, true] {
                s6.set_multicast_loop_v6(on)?;
                assert_eq!(s6.multicast_loop_v6()?, on);
            }
            let group6: Ipv6Addr = "ff02::1:3a5".parse().unwrap();
            match s6.join_multicast_v6(&group6, 0) {
                Ok(()) => s6.leave_multicast_v6(&group6, 0)?,
                Err(e) => eprintln!("no IPv6 multicast here ({e}): options only"),
            }
        } else {
            eprintln!("no IPv6 here: IPv4 options only");
        }
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// A waker that counts the live copies of itself.
struct Counted(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl std::task::Wake for Counted {
    fn wake(self: std::sync::Arc<Self>) {}
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

fn counted_waker(live: &std::sync::Arc<std::sync::atomic::AtomicUsize>) -> std::task::Waker {
    live.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::task::Waker::from(std::sync::Arc::new(Counted(live.clone())))
}

/// An async operation that gives up (dropped while it waits: a
/// `timeout`, a `select!` that chose another branch) takes its waker out
/// of the socket's list: a thousand of them on an idle socket leave none.
/// The poll API keeps only its latest caller's waker, as tokio's does.
#[test]
fn waits_that_give_up_leave_no_waker_behind() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Context;
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let (u, (_l, _c, s)) = idle_udp_and_tcp().await?;
        let live = Arc::new(AtomicUsize::new(0));
        let mut buf = [0; 8];
        for _ in 0..1000 {
            let w = counted_waker(&live);
            let mut cx = Context::from_waker(&w);
            assert!(pin!(u.readable()).poll(&mut cx).is_pending());
            assert!(pin!(u.recv_from(&mut buf)).poll(&mut cx).is_pending());
            assert!(pin!(s.ready(Interest::READABLE)).poll(&mut cx).is_pending());
            assert!(pin!(s.peek(&mut buf)).poll(&mut cx).is_pending());
        }
        assert_eq!(
            live.load(Ordering::Relaxed),
            0,
            "async waits gave their wakers back"
        );
        for _ in 0..1000 {
            let w = counted_waker(&live);
            let mut cx = Context::from_waker(&w);
            assert!(u.poll_recv_ready(&mut cx).is_pending());
            assert!(s.poll_read_ready(&mut cx).is_pending());
        }
        assert_eq!(
            live.load(Ordering::Relaxed),
            1,
            "the poll API keeps its latest caller's"
        );
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// Two waits of one task on one direction (a `join!` of two reads of a
/// shared socket): dropping one while both wait leaves the other's entry,
/// and the next datagram wakes it.
#[test]
fn dropping_one_of_a_tasks_two_waits_keeps_the_other() {
    let mut lp = EventLoop::new();
    let got = lp
        .block_on(async {
            let u = UdpSocket::bind("127.0.0.1:0").await?;
            let addr = u.local_addr()?;
            assert!(would_block(u.try_recv(&mut [0; 4])));
            let mut a = Box::pin(u.readable());
            let mut b = Box::pin(u.readable());
            poll_fn(|cx| {
                assert!(a.as_mut().poll(cx).is_pending());
                assert!(b.as_mut().poll(cx).is_pending());
                Poll::Ready(())
            })
            .await;
            drop(a);
            task::spawn(async move {
                let s = UdpSocket::bind("127.0.0.1:0").await?;
                s.send_to(b"hi", addr).await
            });
            // Woken by the datagram at once; a lost waker would end only
            // when the timeout polls it again, at 10 s.
            let t0 = Instant::now();
            time::timeout(Duration::from_secs(10), b)
                .await
                .expect("the other wait ended")?;
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "woken only by the timeout"
            );
            let mut buf = [0; 4];
            let (n, _) = u.recv_from(&mut buf).await?;
            io::Result::Ok(buf[..n].to_vec())
        })
        .unwrap()
        .unwrap();
    assert_eq!(got, b"hi");
}
