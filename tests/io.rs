//! The loop's I/O API (issue 11, item 0): the loop owns a registered source
//! and lends it to its callback with its handle; the source is reachable
//! from timers, its interest can change, closing or removing it lets the
//! loop end, dropping the loop drops it; and on a virtual clock, time
//! jumps to the next timer only once the sources have been quiet for the
//! grace period.

use std::cell::RefCell;
use std::io::{ErrorKind, Read, Write};
use std::rc::Rc;
use std::time::Duration;

use timerloop::mio::net::UnixStream;
use timerloop::mio::{self, Interest};
use timerloop::{EventLoop, IoError, IoHandle};

mod common;
use common::*;

/// The callback gets the source itself and its own handle; closing from
/// inside drops the source when the callback returns (the peer sees EOF)
/// and the loop ends.
#[test]
fn the_callback_gets_its_source_and_handle_and_can_close_it() {
    let log = new_log();
    let mut lp = EventLoop::new();
    let (mut tx, rx) = UnixStream::pair().unwrap();
    let l = log.clone();
    let h = lp
        .insert_io(rx, Interest::READABLE, move |lp, rx, ev| {
            let mut buf = [0; 16];
            let n = rx.read(&mut buf).unwrap();
            push(&l, String::from_utf8_lossy(&buf[..n]).into_owned());
            assert!(ev.readiness.readable);
            assert!(matches!(
                lp.io_source::<UnixStream>(ev.handle),
                Err(IoError::Busy)
            ));
            assert!(matches!(
                lp.remove_io::<UnixStream>(ev.handle),
                Err(IoError::Busy)
            ));
            lp.close_io(ev.handle).unwrap();
        })
        .unwrap();
    assert!(lp.io_is_active(h));
    assert_eq!(lp.stats().io_sources, 1);
    tx.write_all(b"hello").unwrap();
    lp.run().unwrap();
    assert_eq!(*log.borrow(), ["hello"]);
    assert!(!lp.io_is_active(h));
    assert_eq!(lp.stats().io_sources, 0);
    let mut buf = [0; 1];
    assert_eq!(tx.read(&mut buf).unwrap(), 0, "the peer sees EOF: closed");
}

/// A timer reaches the source through its handle (the idle timeout that
/// writes a goodbye and closes the connection).
#[test]
fn a_timer_reaches_the_source_through_its_handle() {
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_io_grace(Duration::ZERO);
    let (tx, mut rx) = UnixStream::pair().unwrap();
    let h = lp.insert_io(tx, Interest::READABLE, |_, _, _| {}).unwrap();
    lp.set_timeout(100, move |lp| {
        lp.io_source::<UnixStream>(h)
            .unwrap()
            .write_all(b"idle timeout\n")
            .unwrap();
        lp.close_io(h).unwrap();
    });
    lp.run().unwrap();
    assert_eq!(lp.now(), 100);
    let mut got = Vec::new();
    rx.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"idle timeout\n");
}

/// Errors are typed: a wrong type, a stale handle, another loop's handle.
#[test]
fn bad_handles_get_typed_errors() {
    let mut lp = EventLoop::with_virtual_clock();
    let mut other = EventLoop::with_virtual_clock();
    let (a, _b) = UnixStream::pair().unwrap();
    let h = lp.insert_io(a, Interest::READABLE, |_, _, _| {}).unwrap();
    assert!(matches!(
        lp.io_source::<mio::net::TcpStream>(h),
        Err(IoError::WrongType)
    ));
    assert!(matches!(
        lp.remove_io::<mio::net::TcpStream>(h),
        Err(IoError::WrongType)
    ));
    assert!(lp.io_is_active(h), "a wrong-type remove removes nothing");
    assert!(matches!(other.close_io(h), Err(IoError::ForeignLoop)));
    assert!(!other.io_is_active(h));
    let back: UnixStream = lp.remove_io(h).unwrap();
    drop(back);
    for e in [
        lp.close_io(h).unwrap_err(),
        lp.set_io_interest(h, Interest::WRITABLE).unwrap_err(),
        lp.unref_io(h).unwrap_err(),
    ] {
        assert!(matches!(e, IoError::Stale), "{e}");
    }
}

/// Back-pressure: a writer that fills the socket adds WRITABLE interest
/// from its own callback, writes the rest when there is room, and takes
/// the interest away once drained; every byte arrives, in order, and the
/// writer never spins (each WRITABLE wake-up writes something).
#[test]
fn interest_changes_for_back_pressure_lose_no_bytes() {
    const TOTAL: usize = 4 << 20;
    let mut lp = EventLoop::new();
    let (tx, rx) = UnixStream::pair().unwrap();
    let data: Rc<Vec<u8>> = Rc::new((0..TOTAL).map(|i| (i % 251) as u8).collect());
    let sent = Rc::new(RefCell::new(0usize));
    let idle_wakes = Rc::new(RefCell::new(0usize));
    let (d, s, w) = (data.clone(), sent.clone(), idle_wakes.clone());
    let writer = lp
        .insert_io(tx, Interest::READABLE, move |lp, tx, ev| {
            let mut wrote = false;
            loop {
                let at = *s.borrow();
                if at == d.len() {
                    lp.close_io(ev.handle).unwrap();
                    return;
                }
                match tx.write(&d[at..]) {
                    Ok(n) => {
                        *s.borrow_mut() += n;
                        wrote = true;
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("{e}"),
                }
            }
            if !wrote && ev.readiness.writable {
                *w.borrow_mut() += 1;
            }
            // Full: wake me when there is room.
            lp.set_io_interest(ev.handle, Interest::WRITABLE).unwrap();
        })
        .unwrap();
    // Kick the writer off from a timer: it writes until full, then waits.
    lp.set_timeout(1, move |lp| {
        lp.set_io_interest(writer, Interest::WRITABLE).unwrap();
    });
    let got = Rc::new(RefCell::new(Vec::with_capacity(TOTAL)));
    let g = got.clone();
    // A slow reader: 64 KiB per poll phase.
    lp.insert_io(rx, Interest::READABLE, move |lp, rx, ev| {
        let mut buf = vec![0; 64 << 10];
        match rx.read(&mut buf) {
            Ok(0) => return lp.close_io(ev.handle).unwrap(),
            Ok(n) => g.borrow_mut().extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
        }
        // Edge-triggered: ask again for the rest.
        lp.set_io_interest(ev.handle, Interest::READABLE).unwrap();
    })
    .unwrap();
    lp.run().unwrap();
    assert_eq!(got.borrow().len(), TOTAL);
    assert!(*got.borrow() == *data, "every byte, in order");
    assert_eq!(*idle_wakes.borrow(), 0, "no WRITABLE wake-up without room");
}

/// Dropping the loop drops the sources it owns (the peer sees EOF).
#[test]
fn dropping_the_loop_drops_its_sources() {
    let mut lp = EventLoop::with_virtual_clock();
    let (a, mut b) = UnixStream::pair().unwrap();
    lp.insert_io(a, Interest::READABLE, |_, _, _| {}).unwrap();
    drop(lp);
    let mut buf = [0; 1];
    assert_eq!(b.read(&mut buf).unwrap(), 0);
}

/// An unrefed source keeps nothing alive; ref makes it keep the loop
/// alive again.
#[test]
fn unref_and_ref() {
    let mut lp = EventLoop::with_virtual_clock();
    let (a, _b) = UnixStream::pair().unwrap();
    let h = lp.insert_io(a, Interest::READABLE, |_, _, _| {}).unwrap();
    assert!(lp.is_alive());
    lp.unref_io(h).unwrap();
    assert!(!lp.is_alive());
    lp.run().unwrap();
    lp.ref_io(h).unwrap();
    assert!(lp.is_alive());
    lp.close_io(h).unwrap();
    lp.run().unwrap();
    assert!(!lp.is_alive());
}

/// Registering a descriptor twice fails with the OS error, and the source
/// comes back in the error (never silently dropped).
#[test]
fn a_refused_registration_gives_the_source_back() {
    use std::os::fd::AsRawFd;
    let mut lp = EventLoop::with_virtual_clock();
    let (a, _b) = UnixStream::pair().unwrap();
    let fd = a.as_raw_fd();
    let h: IoHandle = lp.insert_io(a, Interest::READABLE, |_, _, _| {}).unwrap();
    let err = lp
        .insert_io(Fd(fd), Interest::READABLE, |_, _, _| {})
        .unwrap_err();
    assert_eq!(err.error.kind(), ErrorKind::AlreadyExists);
    assert_eq!(err.source.0, fd, "the source is given back");
    assert!(err.to_string().contains("could not be registered"));
    lp.close_io(h).unwrap();
}

/// A raw descriptor as a source (not owned: closing it is the test's job).
struct Fd(i32);

impl mio::event::Source for Fd {
    fn register(&mut self, r: &mio::Registry, t: mio::Token, i: Interest) -> std::io::Result<()> {
        mio::unix::SourceFd(&self.0).register(r, t, i)
    }
    fn reregister(&mut self, r: &mio::Registry, t: mio::Token, i: Interest) -> std::io::Result<()> {
        mio::unix::SourceFd(&self.0).reregister(r, t, i)
    }
    fn deregister(&mut self, r: &mio::Registry) -> std::io::Result<()> {
        mio::unix::SourceFd(&self.0).deregister(r)
    }
}

/// On a virtual clock with sources registered, time does not jump to the
/// next timer while bytes are in flight: a client thread that writes
/// within the grace period is heard before a 50 ms (virtual) timer fires,
/// though the loop would otherwise jump there at once.
#[test]
fn virtual_time_waits_for_quiet_sources() {
    let log = new_log();
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_io_grace(Duration::from_millis(500)); // generous for slow CI
    let (mut tx, rx) = UnixStream::pair().unwrap();
    let l = log.clone();
    lp.insert_io(rx, Interest::READABLE, move |lp, rx, ev| {
        let mut buf = [0; 16];
        if let Ok(n) = rx.read(&mut buf) {
            push(&l, format!("read {} bytes at {}", n, lp.now()));
        }
        lp.close_io(ev.handle).unwrap();
    })
    .unwrap();
    lp.set_timeout(50, at(&log, "timer"));
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        tx.write_all(b"late").unwrap();
        tx
    });
    lp.run().unwrap();
    let _tx = writer.join().unwrap();
    assert_eq!(*log.borrow(), ["read 4 bytes at 0", "timer@50"]);
}

/// With no source registered, or a zero grace, a virtual clock jumps at
/// once (no real waiting).
#[test]
fn without_sources_virtual_time_jumps_at_once() {
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_timeout(86_400_000, |_| {});
    let start = std::time::Instant::now();
    lp.run().unwrap();
    assert_eq!(lp.now(), 86_400_000);
    let mut lp = EventLoop::with_virtual_clock();
    lp.set_io_grace(Duration::ZERO);
    let (a, _b) = UnixStream::pair().unwrap();
    let h = lp.insert_io(a, Interest::READABLE, |_, _, _| {}).unwrap();
    lp.set_timeout(1000, move |lp| lp.close_io(h).unwrap());
    lp.run().unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
}
