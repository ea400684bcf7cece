//! Helpers shared by the integration tests: an event log that callbacks
//! append to, callbacks that log their name (and the loop time), and a
//! guard against a loop that hangs.
#![allow(dead_code)] // each test file uses a different subset

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::time::Duration;
use std::{cell::RefCell, rc::Rc};

use timerloop::EventLoop;

/// The lines callbacks logged, in order.
pub type Log = Rc<RefCell<Vec<String>>>;

/// An empty log.
pub fn new_log() -> Log {
    Rc::default()
}

/// Appends a line.
pub fn push(log: &Log, s: impl Into<String>) {
    log.borrow_mut().push(s.into());
}

/// A repeatable callback that logs `name@<loop time>`.
pub fn at(log: &Log, name: &'static str) -> impl FnMut(&mut EventLoop) + 'static {
    let log = log.clone();
    move |lp| push(&log, format!("{name}@{}", lp.now()))
}

/// A one-shot callback that logs `name@<loop time>` (for immediates and
/// ticks, which take `FnOnce`).
pub fn once(log: &Log, name: &'static str) -> impl FnOnce(&mut EventLoop) + 'static {
    let log = log.clone();
    move |lp| push(&log, format!("{name}@{}", lp.now()))
}

/// Installs an uncaught-error handler that logs `caught:<message>`.
pub fn catch_into(lp: &mut EventLoop, log: &Log) {
    let l = log.clone();
    lp.set_uncaught_handler(move |_, e| push(&l, format!("caught:{}", e.message())));
}

/// A one-shot callback that logs `name` alone.
pub fn say(log: &Log, name: &'static str) -> impl FnOnce(&mut EventLoop) + 'static {
    let log = log.clone();
    move |_| push(&log, name)
}

/// A proptest configuration of `n` cases, or `PROPTEST_CASES` when set.
pub fn cases(n: u32) -> proptest::prelude::ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n);
    proptest::prelude::ProptestConfig {
        cases: n,
        ..proptest::prelude::ProptestConfig::default()
    }
}

/// The inputs saved under `fuzz/regressions/` whose file names start with
/// `prefix` (`"tasks-"`, `"ops-"`, ...), as (file name, bytes), in name
/// order: the replays of the fuzz targets' finds.
pub fn fuzz_regressions(prefix: &str) -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut found: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("fuzz/regressions")
        .map(|entry| entry.expect("a directory entry").path())
        .filter_map(|path| {
            let name = path.file_name()?.to_string_lossy().into_owned();
            name.starts_with(prefix)
                .then(|| (name, std::fs::read(&path).expect("a regression input")))
        })
        .collect();
    found.sort();
    found
}

/// Runs `f` on a thread of its own and waits up to `secs` seconds for it,
/// so that a loop that hangs fails the test instead of hanging it (the
/// spinning thread is left behind; the test process ends anyway). A panic
/// in `f` is resumed here, with its own message.
pub fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("still running after {secs} s: the loop hangs"),
    }
}

/// Spawns a task that parks at its first poll and, polled again, calls
/// `then`; and after it a task that wakes it. Run, both are polled in one
/// microtask checkpoint, which the wake then extends: the parked task's
/// second poll is a task woken inside a checkpoint.
pub fn spawn_woken_in_checkpoint(lp: &mut EventLoop, then: impl FnOnce() + 'static) {
    use std::future::poll_fn;
    use std::task::{Poll, Waker};
    let parked: Rc<RefCell<Option<Waker>>> = Rc::default();
    let p = parked.clone();
    lp.spawn(async move {
        let mut first = true;
        poll_fn(|cx| {
            if std::mem::take(&mut first) {
                *p.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        })
        .await;
        then();
    });
    lp.spawn(async move {
        parked.borrow_mut().take().expect("the task parked").wake();
    });
}

/// A listener on loopback, a client connected to it and the server's end
/// of that connection, made on the current loop.
pub async fn connected() -> std::io::Result<(
    timerloop::net::TcpListener,
    timerloop::net::TcpStream,
    timerloop::net::TcpStream,
)> {
    use timerloop::net::{TcpListener, TcpStream};
    let l = TcpListener::bind("127.0.0.1:0").await?;
    let c = TcpStream::connect(l.local_addr()?).await?;
    let (s, _) = l.accept().await?;
    Ok((l, c, s))
}

/// A UDP socket and a connection ([`connected`]), both found empty by a
/// `try_` (so that waits on them wait: a new socket starts ready).
pub async fn idle_udp_and_tcp() -> std::io::Result<(
    timerloop::net::UdpSocket,
    (
        timerloop::net::TcpListener,
        timerloop::net::TcpStream,
        timerloop::net::TcpStream,
    ),
)> {
    let u = timerloop::net::UdpSocket::bind("127.0.0.1:0").await?;
    let tcp = connected().await?;
    assert!(would_block(u.try_recv(&mut [0; 4])));
    assert!(would_block(tcp.2.try_read(&mut [0; 4])));
    Ok((u, tcp))
}

/// Whether `r` is a `WouldBlock` error (true) or another error (false);
/// panics on `Ok`, with the value.
pub fn would_block<T: std::fmt::Debug>(r: std::io::Result<T>) -> bool {
    match r {
        Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
        Ok(t) => panic!("expected WouldBlock, got Ok({t:?})"),
    }
}

/// Whether `fut`'s first poll is ready, with the current task's waker.
pub async fn ready_at_once<F: std::future::Future>(fut: F) -> std::task::Poll<F::Output> {
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(|cx| std::task::Poll::Ready(fut.as_mut().poll(cx))).await
}
