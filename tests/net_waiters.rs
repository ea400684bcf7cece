//! How sockets keep the wakers of waiting tasks: each async operation
//! one entry (its `Wait`), taken back when it ends or is dropped, exact
//! even for wakers whose clones differ; the poll API one waker per
//! direction. Hostile orders of polls, panics and nested calls, moved
//! and re-polled waits, the loop dropped or the registration failing
//! under a wait. Tests that could hang run in a thread with a deadline.

use std::cell::Cell;
use std::future::{Future, poll_fn};
use std::io::{self, ErrorKind};
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Wake, Waker};
use std::time::Duration;

use timerloop::net::{AsyncSource, Interest, UdpSocket};
use timerloop::{EventLoop, task, time};

mod common;
use common::*;

/// A waker that notes it was woken.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn flag() -> (Arc<Flag>, Waker) {
    let f = Arc::new(Flag(AtomicBool::new(false)));
    (f.clone(), Waker::from(f))
}

fn udp_source() -> AsyncSource<mio::net::UdpSocket> {
    AsyncSource::new(mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap())
}

/// Waits (up to 5 s) for the event of a datagram sent to `src`, peeking
/// at it, so that the event is known to have come and been handled.
async fn datagram_event(src: &AsyncSource<mio::net::UdpSocket>) -> io::Result<()> {
    let mut buf = [0; 8];
    time::timeout(
        Duration::from_secs(5),
        src.async_io(Interest::READABLE, |s| s.peek_from(&mut buf)),
    )
    .await
    .expect("the datagram's event came")?;
    Ok(())
}

// ---------------------------------------------------------------------
// Panics and nested calls while a Wait collects
// ---------------------------------------------------------------------

/// A task whose `async_io` closure panics (here on purpose; the source's
/// own "borrowed" panic is the same path) is failed by the loop, and the
/// socket, shared with other tasks, goes on. The poll API on it must still
/// keep its caller's waker: before the fix the Wait's `collecting` flag
/// stayed set by the unwinding, so every later poll-API wait on the socket
/// was noted for a Wait that no longer existed and never woken.
#[test]
fn a_panic_inside_an_operation_leaves_the_poll_api_waking() {
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let src = Rc::new(udp_source());
            let me = src.get_ref().local_addr()?;
            let s2 = src.clone();
            let failed = task::spawn(async move {
                s2.async_io(Interest::READABLE, |_| -> io::Result<()> {
                    panic!("an operation that panics")
                })
                .await
            })
            .await;
            assert!(failed.is_err(), "the task failed with its panic");
            let mut buf = [0; 8];
            assert!(would_block(
                src.try_io(Interest::READABLE, |s| s.recv(&mut buf))
            ));
            let mut recv = pin!(poll_fn(|cx| {
                src.poll_io(cx, Interest::READABLE, |s| s.recv(&mut buf))
            }));
            let (woke, w) = flag();
            assert!(
                recv.as_mut()
                    .poll(&mut Context::from_waker(&w))
                    .is_pending()
            );
            // A datagram to itself; a wait on the event, to know it came.
            src.try_io(Interest::WRITABLE, |s| s.send_to(b"hi", me))?;
            datagram_event(&src).await?;
            assert!(
                woke.0.load(Ordering::SeqCst),
                "the poll API's waker was woken by the event"
            );
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

/// An `async_io` closure that polls the poll API of its own source (the
/// other direction: the source itself is not borrowed for that) runs
/// while the outer Wait collects: the nested poll's wait went to the
/// outer Wait's directions, not the slot, and its caller was never woken.
#[test]
fn the_poll_api_inside_an_operation_keeps_its_own_waker() {
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let src = udp_source();
            let me = src.get_ref().local_addr()?;
            let mut buf = [0; 8];
            assert!(would_block(
                src.try_io(Interest::READABLE, |s| s.recv(&mut buf))
            ));
            let (woke, w) = flag();
            let mut inner_pending = false;
            src.async_io(Interest::WRITABLE, |s| {
                let mut b = [0; 8];
                let r = src.poll_io(&mut Context::from_waker(&w), Interest::READABLE, |s| {
                    s.recv(&mut b)
                });
                inner_pending = r.is_pending();
                s.send_to(b"hi", me)
            })
            .await?;
            assert!(inner_pending);
            datagram_event(&src).await?;
            assert!(
                woke.0.load(Ordering::SeqCst),
                "the nested poll's waker was woken by the event"
            );
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

// ---------------------------------------------------------------------
// Wait bookkeeping
// ---------------------------------------------------------------------

/// A wait polled again and again in one epoch with the same waker keeps
/// one entry; polled with another task's waker (the future moved) it
/// gives the first back; it gives everything back when dropped.
#[test]
fn a_wait_repolled_or_moved_keeps_one_entry() {
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let (u, (_l, _c, s)) = idle_udp_and_tcp().await?;
        let (f1, w1) = flag();
        let (f2, w2) = flag();
        let mut buf = [0; 8];
        {
            let mut a = pin!(u.recv_from(&mut buf));
            for _ in 0..100 {
                assert!(a.as_mut().poll(&mut Context::from_waker(&w1)).is_pending());
            }
            // The list's entry, f1 and w1.
            assert_eq!(Arc::strong_count(&f1), 3);
            assert!(a.as_mut().poll(&mut Context::from_waker(&w2)).is_pending());
            assert_eq!(
                Arc::strong_count(&f1),
                2,
                "moved: the first waker given back"
            );
            assert_eq!(Arc::strong_count(&f2), 3);
        }
        assert_eq!(Arc::strong_count(&f2), 2, "dropped: given back");
        {
            let mut r = pin!(s.ready(Interest::READABLE));
            for _ in 0..100 {
                assert!(r.as_mut().poll(&mut Context::from_waker(&w1)).is_pending());
            }
            assert_eq!(Arc::strong_count(&f1), 3);
        }
        assert_eq!(Arc::strong_count(&f1), 2);
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

/// `ready(READABLE | WRITABLE)` on a stream that can do neither (its send
/// buffer full, nothing to read) waits in both lists; the peer's bytes
/// end it READABLE, and its entry in the write list is taken back then,
/// not left for the write side's next event. Polled after the read event
/// with another waker, the other entry is replaced too.
#[test]
fn ready_both_ended_by_one_side_takes_the_other_entry_back() {
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let (_l, c, s) = connected().await?;
            let chunk = vec![1u8; 1 << 16];
            while s.try_write(&chunk).is_ok() {}
            assert!(would_block(s.try_read(&mut [0; 4])));
            for moved in [false, true] {
                let (f1, w1) = flag();
                let (f2, w2) = flag();
                {
                    let mut r = pin!(s.ready(Interest::READABLE | Interest::WRITABLE));
                    assert!(r.as_mut().poll(&mut Context::from_waker(&w1)).is_pending());
                    assert_eq!(Arc::strong_count(&f1), 4, "two entries, f1, w1");
                    c.try_write(b"x")?;
                    // Let the read event come (a wait of this task on it).
                    time::timeout(Duration::from_secs(5), s.readable())
                        .await
                        .expect("the read event came")?;
                    assert!(f1.0.load(Ordering::SeqCst), "woken by the read event");
                    assert_eq!(Arc::strong_count(&f1), 3, "the read entry was taken");
                    let w = if moved { &w2 } else { &w1 };
                    match r.as_mut().poll(&mut Context::from_waker(w)) {
                        Poll::Ready(Ok(got)) => assert!(got.is_readable()),
                        other => panic!("{other:?}"),
                    }
                    assert_eq!(Arc::strong_count(&f1), 2, "the write entry was taken back");
                    assert_eq!(Arc::strong_count(&f2), 2);
                }
                let mut b = [0; 8];
                assert_eq!(s.try_read(&mut b)?, 1);
                assert!(would_block(s.try_read(&mut b)));
            }
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

/// A waker whose clones are new allocations (legal: `will_wake` is best
/// effort, and may say false for wakers of one task). Counts live copies.
fn boxed_waker(live: &'static AtomicUsize) -> Waker {
    unsafe fn clone(p: *const ()) -> RawWaker {
        let live = unsafe { &*(p as *const &'static AtomicUsize) };
        live.fetch_add(1, Ordering::SeqCst);
        RawWaker::new(Box::into_raw(Box::new(*live)) as *const (), &VTABLE)
    }
    unsafe fn wake(p: *const ()) {
        unsafe { drop_it(p) }
    }
    unsafe fn wake_by_ref(_: *const ()) {}
    unsafe fn drop_it(p: *const ()) {
        let b = unsafe { Box::from_raw(p as *mut &'static AtomicUsize) };
        b.fetch_sub(1, Ordering::SeqCst);
    }
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_it);
    live.fetch_add(1, Ordering::SeqCst);
    let p = Box::into_raw(Box::new(live)) as *const ();
    unsafe { Waker::from_raw(RawWaker::new(p, &VTABLE)) }
}

/// With such a waker, a Wait cannot find its own entry (removal goes by
/// `will_wake`): every poll in one epoch leaves one more entry, and
/// dropping the operation leaves them all until the next event.
#[test]
fn a_wait_with_a_waker_whose_clones_differ_gives_its_entries_back() {
    static LIVE: AtomicUsize = AtomicUsize::new(0);
    let mut lp = EventLoop::new();
    lp.block_on(async {
        let u = UdpSocket::bind("127.0.0.1:0").await?;
        assert!(would_block(u.try_recv(&mut [0; 4])));
        let w = boxed_waker(&LIVE);
        let mut buf = [0; 8];
        {
            let mut a = pin!(u.recv_from(&mut buf));
            for _ in 0..1000 {
                assert!(a.as_mut().poll(&mut Context::from_waker(&w)).is_pending());
            }
        }
        let left = LIVE.load(Ordering::SeqCst) - 1;
        assert_eq!(left, 0, "{left} copies left in the socket's list");
        io::Result::Ok(())
    })
    .unwrap()
    .unwrap();
}

// ---------------------------------------------------------------------
// Many waiters, timeouts, streaks
// ---------------------------------------------------------------------

/// Tasks waiting on one direction of a socket are woken in the order they
/// began to wait, also after some of them gave up: the order of their
/// polls, and of what they do next, is the order they waited in, as Node
/// calls a socket's listeners in the order they were added. Five tasks
/// wait for `readable`; the second and fourth give up (a timeout) before
/// a datagram comes. Removing a waiter by swapping the last into its
/// place woke them A, E, C.
#[test]
fn waiters_are_woken_in_the_order_they_waited_after_others_gave_up() {
    within(20, || {
        let mut lp = EventLoop::new();
        let order = lp
            .block_on(async {
                let u = Rc::new(UdpSocket::bind("127.0.0.1:0").await?);
                let addr = u.local_addr()?;
                // The socket starts ready: find it empty, so that waits wait.
                assert!(would_block(u.try_recv(&mut [0; 8])));
                let order = Rc::new(std::cell::RefCell::new(Vec::new()));
                let mut hs = Vec::new();
                for name in ["A", "B", "C", "D", "E"] {
                    let (u, order) = (u.clone(), order.clone());
                    let gives_up = name == "B" || name == "D";
                    hs.push(task::spawn(async move {
                        if gives_up {
                            let r = time::timeout(Duration::from_millis(5), u.readable()).await;
                            assert!(r.is_err(), "{name} gave up before the datagram");
                        } else {
                            u.readable().await?;
                            order.borrow_mut().push(name);
                        }
                        io::Result::Ok(())
                    }));
                    // Each task begins its wait before the next is spawned.
                    task::yield_now().await;
                }
                time::sleep(Duration::from_millis(20)).await;
                let tx = UdpSocket::bind("127.0.0.1:0").await?;
                tx.send_to(b"x", addr).await?;
                for h in hs {
                    h.await.unwrap()?;
                }
                io::Result::Ok(order.take())
            })
            .unwrap()
            .unwrap();
        assert_eq!(order, ["A", "C", "E"]);
    });
}

/// Eight tasks share one UDP socket, each receiving under a short
/// timeout in a loop (their waits given up again and again), while
/// datagrams come one by one from a timer: every datagram is received
/// once, nobody hangs, and no waker is left behind at the end.
#[test]
fn churning_receivers_on_a_shared_socket_lose_nothing() {
    within(30, || {
        let mut lp = EventLoop::new();
        let got = lp
            .block_on(async {
                let u = Rc::new(UdpSocket::bind("127.0.0.1:0").await?);
                let addr = u.local_addr()?;
                let total = Rc::new(Cell::new(0u32));
                let mut hs = Vec::new();
                for _ in 0..8 {
                    let (u, total) = (u.clone(), total.clone());
                    hs.push(task::spawn(async move {
                        let mut buf = [0; 8];
                        while total.get() < 200 {
                            if let Ok(r) =
                                time::timeout(Duration::from_millis(3), u.recv_from(&mut buf)).await
                            {
                                r?;
                                total.set(total.get() + 1);
                            }
                        }
                        io::Result::Ok(())
                    }));
                }
                let tx = UdpSocket::bind("127.0.0.1:0").await?;
                for i in 0..200u32 {
                    tx.send_to(&i.to_be_bytes(), addr).await?;
                    if i % 3 == 0 {
                        time::sleep(Duration::from_millis(1)).await;
                    }
                }
                for h in hs {
                    h.await.unwrap()?;
                }
                io::Result::Ok(total.get())
            })
            .unwrap()
            .unwrap();
        assert_eq!(got, 200);
    });
}

/// A reader task reads a peer that is always ahead while three other
/// tasks wait `readable()` on the same stream and a timer must fire: the
/// yield at the end of a streak (its immediate) wakes the reader, the
/// waiting tasks are woken by it too (spuriously) and wait again, and the
/// timer fires. Nothing hangs, and every task ran.
#[test]
fn a_streak_yield_with_other_waiters_on_the_direction() {
    let (read, peeked) = within(30, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let (_l, c, s) = connected().await?;
            let (s, c) = (Rc::new(s), Rc::new(c));
            let stop = Rc::new(Cell::new(false));
            // A writer that keeps the reader's side full.
            let writer = task::spawn({
                let (c, stop) = (c.clone(), stop.clone());
                async move {
                    let chunk = vec![7u8; 1 << 12];
                    while !stop.get() {
                        c.writable().await?;
                        let _ = c.try_write(&chunk);
                    }
                    io::Result::Ok(())
                }
            });
            let mut waiters = Vec::new();
            for _ in 0..3 {
                let (s, stop) = (s.clone(), stop.clone());
                waiters.push(task::spawn(async move {
                    let mut n = 0u64;
                    while !stop.get() {
                        s.peek(&mut [0; 1]).await?;
                        n += 1;
                    }
                    io::Result::Ok(n)
                }));
            }
            let reader = task::spawn({
                let (s, stop) = (s.clone(), stop.clone());
                async move {
                    let mut b = [0; 64];
                    let mut n = 0u64;
                    while !stop.get() {
                        n += s.peek(&mut b).await.map(|_| 0)?;
                        n += (s.try_read(&mut b).is_ok()) as u64;
                    }
                    io::Result::Ok(n)
                }
            });
            time::sleep(Duration::from_millis(50)).await;
            stop.set(true);
            writer.await.unwrap()?;
            let read = reader.await.unwrap()?;
            let mut peeked = Vec::new();
            for w in waiters {
                peeked.push(w.await.unwrap()?);
            }
            io::Result::Ok((read, peeked))
        })
        .unwrap()
        .unwrap()
    });
    // Every task got its turns: the reader read, and each waiter, woken
    // with it, peeked and waited again.
    assert!(read > 0, "the reader read nothing");
    assert!(
        peeked.iter().all(|&n| n > 0),
        "a waiter never ran: {peeked:?}"
    );
}

// ---------------------------------------------------------------------
// The io traits: one waker per direction
// ---------------------------------------------------------------------

/// Two tasks read one `&AsyncSource` through the tokio traits (the shared
/// reference is `AsyncRead`): only the latest poller's waker is kept, so
/// the first reader is not woken by the bytes (it is woken only when the
/// second one is done, if ever). Documented in the module docs ("the io
/// traits keep one waker per direction"); tokio has no `AsyncRead` for a
/// shared reference, so the case does not arise there.
#[cfg(feature = "tokio-io")]
#[test]
fn two_trait_readers_of_one_shared_source_wake_only_the_latest() {
    use tokio::io::AsyncReadExt;
    within(20, || {
        let (a, b) = mio::net::UnixStream::pair().unwrap();
        let mut lp = EventLoop::new();
        lp.block_on(async move {
            let a = Rc::new(AsyncSource::new(a));
            let b = AsyncSource::new(b);
            let first_got = Rc::new(Cell::new(false));
            let first = task::spawn({
                let (a, first_got) = (a.clone(), first_got.clone());
                async move {
                    let mut buf = [0; 1];
                    let _n = (&*a).read(&mut buf).await?;
                    first_got.set(true);
                    io::Result::Ok(())
                }
            });
            task::yield_now().await;
            let second = task::spawn({
                let a = a.clone();
                async move {
                    let mut buf = [0; 1];
                    (&*a).read(&mut buf).await
                }
            });
            task::yield_now().await;
            // One byte: the second (latest) reader gets it.
            b.async_io(Interest::WRITABLE, |s| std::io::Write::write(s, b"x"))
                .await?;
            assert_eq!(second.await.unwrap()?, 1);
            time::sleep(Duration::from_millis(20)).await;
            assert!(!first_got.get());
            // A second byte: the first reader was not kept; it does not
            // see it (it is still not woken).
            b.async_io(Interest::WRITABLE, |s| std::io::Write::write(s, b"y"))
                .await?;
            time::sleep(Duration::from_millis(50)).await;
            let woken = first_got.get();
            first.abort();
            eprintln!("first reader woken by a later byte: {woken}");
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}

/// A wait pending when its loop is dropped is woken (the loop lets its
/// callback go), its entry is gone with the new epoch, a poll then fails,
/// and nothing of its waker is left.
#[test]
fn a_wait_pending_when_the_loop_is_dropped() {
    let mut lp = EventLoop::new();
    let u = lp
        .block_on(UdpSocket::bind("127.0.0.1:0"))
        .unwrap()
        .unwrap();
    assert!(would_block(u.try_recv(&mut [0; 4])));
    let (f, w) = flag();
    let mut buf = [0; 8];
    {
        let mut a = pin!(u.recv_from(&mut buf));
        let mut b = pin!(u.readable());
        let mut cx = Context::from_waker(&w);
        assert!(a.as_mut().poll(&mut cx).is_pending());
        assert!(b.as_mut().poll(&mut cx).is_pending());
        assert_eq!(Arc::strong_count(&f), 4);
        drop(lp);
        assert!(f.0.load(Ordering::SeqCst), "woken when the loop went");
        assert_eq!(Arc::strong_count(&f), 2, "the lists were emptied");
        match a.as_mut().poll(&mut cx) {
            Poll::Ready(Err(e)) => assert_eq!(e.kind(), ErrorKind::Other),
            other => panic!("{other:?}"),
        }
        match b.as_mut().poll(&mut cx) {
            Poll::Ready(Err(e)) => assert_eq!(e.kind(), ErrorKind::Other),
            other => panic!("{other:?}"),
        }
        assert_eq!(Arc::strong_count(&f), 2);
    }
    assert_eq!(Arc::strong_count(&f), 2);
}

/// A source whose registration fails (its fd is already in the loop's
/// epoll set): a wait begun before the loop tried is woken by the
/// failure and ends with its error; nothing is kept.
#[cfg(target_os = "linux")]
#[test]
fn a_wait_woken_by_a_failed_registration() {
    use std::os::fd::{AsRawFd, RawFd};
    struct Same(RawFd);
    impl mio::event::Source for Same {
        fn register(
            &mut self,
            r: &mio::Registry,
            t: mio::Token,
            i: mio::Interest,
        ) -> io::Result<()> {
            mio::unix::SourceFd(&self.0).register(r, t, i)
        }
        fn reregister(
            &mut self,
            r: &mio::Registry,
            t: mio::Token,
            i: mio::Interest,
        ) -> io::Result<()> {
            mio::unix::SourceFd(&self.0).reregister(r, t, i)
        }
        fn deregister(&mut self, r: &mio::Registry) -> io::Result<()> {
            mio::unix::SourceFd(&self.0).deregister(r)
        }
    }
    within(20, || {
        let mut lp = EventLoop::new();
        lp.block_on(async {
            let first = udp_source();
            task::yield_now().await; // registered
            let fd = first.get_ref().as_raw_fd();
            let second = AsyncSource::new(Same(fd));
            let (f, w) = flag();
            {
                let mut a = pin!(second.async_io(Interest::READABLE, |_| -> io::Result<()> {
                    Err(ErrorKind::WouldBlock.into())
                }));
                assert!(a.as_mut().poll(&mut Context::from_waker(&w)).is_pending());
                assert_eq!(Arc::strong_count(&f), 3);
                task::yield_now().await; // the registration ran, and failed
                assert!(f.0.load(Ordering::SeqCst), "woken by the failure");
                assert_eq!(Arc::strong_count(&f), 2);
                match a.as_mut().poll(&mut Context::from_waker(&w)) {
                    Poll::Ready(Err(e)) => eprintln!("failed: {e}"),
                    other => panic!("{other:?}"),
                }
                assert_eq!(Arc::strong_count(&f), 2);
            }
            std::mem::forget(second); // its fd is `first`'s
            io::Result::Ok(())
        })
        .unwrap()
        .unwrap()
    });
}
