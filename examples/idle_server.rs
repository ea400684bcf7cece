//! A TCP line-echo server with a per-connection idle timeout, on the
//! public API only: the server Node's `socket.setTimeout` is made for.
//!
//! ```text
//! cargo run --release --example idle_server -- --port PORT --idle-ms MS [--threads N] [--async]
//! ```
//!
//! Every line read is written back and refreshes its connection's idle
//! timer (one Node timeout per connection, refreshed in O(1): all of one
//! duration share one list). When the timer fires, the server writes
//! `idle timeout\n` and closes the connection: it shuts its write side
//! and drops what the peer still sends until the peer's EOF (a close with
//! bytes unread would be a reset). Only a complete line is
//! activity: bytes of a line not yet ended (a peer trickling one byte at a
//! time, or stalled mid-line) do not refresh the timer, so the connection
//! is closed MS after its last complete line. A peer that shuts down its
//! write side (half-close) gets the echoes of the lines it sent, then the
//! server closes (as Node's `allowHalfOpen: false`); a peer that resets is
//! dropped at once. Both count as closed by the peer, as does a peer whose
//! line grows past 1 MiB, which is dropped rather than buffered without
//! end. A peer that does not read its echoes stops being read (below), so
//! no line comes and its idle timer fires; a goodbye it does not take
//! within another idle period is not waited for: the connection is
//! dropped. It prints
//! `listening on 127.0.0.1:PORT` once ready (PORT 0 picks a free port);
//! on SIGINT or SIGTERM (watched by the loop itself through
//! `signal-hook-mio`) it prints
//! `accepted=A closed_idle=I closed_by_peer=P max_open=M` and exits 0.
//!
//! - Default: callbacks. The loop owns each connection (`insert_io`), lends
//!   it to its I/O callback, and the idle timer reaches it by handle
//!   (`io_source`). Writes that do not fit wait in the connection's buffer
//!   with WRITABLE interest; a reader too slow for its echoes stops being
//!   read until its buffer drains (no busy loop, no lost bytes). An
//!   `accept` that fails for want of descriptors is tried again every
//!   10 ms while it does (no new event would say the backlog still
//!   waits).
//! - `--async`: the same server as tasks (`spawn`, `timeout_at`) on
//!   `timerloop::net`.
//! - `--threads N`: N loops, one per thread, each with its own listener on
//!   the same port (`SO_REUSEPORT`), as Node's cluster does with processes.
//! - `--trace-early` (callbacks only): a diagnostic for loadgen's
//!   early-close check. Each connection keeps std's `Instant` of its last
//!   refresh, and an idle close less than MS − 1 ms after it is reported
//!   on stderr (`early close: ...`). The loop's timers count whole
//!   milliseconds, so a close can come up to 1 ms before MS, never more.

use std::cell::Cell;
use std::io::{self, ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use signal_hook_mio::v1_0::Signals;
use timerloop::mio::{self, Interest};
use timerloop::net::{TcpListener, TcpStream};
use timerloop::time::{self, Instant};
use timerloop::{EventLoop, IoEvent, IoHandle, Remote, Timeout, task};

/// Output buffered for a slow reader beyond which reading stops until it
/// drains.
const HIGH_WATER: usize = 1 << 20;

/// The longest line: a peer that sends more without a newline is dropped
/// (counted as closed by the peer), not buffered without end.
const MAX_LINE: usize = 1 << 20;

#[derive(Default)]
struct Counters {
    accepted: AtomicU64,
    closed_idle: AtomicU64,
    closed_by_peer: AtomicU64,
    open: AtomicU64,
    max_open: AtomicU64,
}

impl Counters {
    fn opened(&self) {
        self.accepted.fetch_add(1, Ordering::Relaxed);
        let now = self.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.max_open.fetch_max(now, Ordering::Relaxed);
    }

    fn closed(&self, idle: bool) {
        self.open.fetch_sub(1, Ordering::Relaxed);
        let c = if idle {
            &self.closed_idle
        } else {
            &self.closed_by_peer
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    fn line(&self) -> String {
        format!(
            "accepted={} closed_idle={} closed_by_peer={} max_open={}",
            self.accepted.load(Ordering::Relaxed),
            self.closed_idle.load(Ordering::Relaxed),
            self.closed_by_peer.load(Ordering::Relaxed),
            self.max_open.load(Ordering::Relaxed),
        )
    }
}

struct Args {
    port: u16,
    idle_ms: u64,
    threads: usize,
    async_mode: bool,
    trace_early: bool,
}

/// `--trace-early`: keep each connection's last refresh time, and report
/// an idle close more than 1 ms early by it.
static TRACE_EARLY: AtomicBool = AtomicBool::new(false);

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        port: 0,
        idle_ms: 0,
        threads: 1,
        async_mode: false,
        trace_early: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--port" => {
                a.port = value("--port")?
                    .parse()
                    .map_err(|e| format!("--port: {e}"))?
            }
            "--idle-ms" => {
                a.idle_ms = value("--idle-ms")?
                    .parse()
                    .map_err(|e| format!("--idle-ms: {e}"))?;
            }
            "--threads" => {
                a.threads = value("--threads")?
                    .parse()
                    .map_err(|e| format!("--threads: {e}"))?;
            }
            "--async" => a.async_mode = true,
            "--trace-early" => a.trace_early = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.idle_ms == 0 || a.threads == 0 {
        return Err(
            "usage: idle_server --port PORT --idle-ms MS [--threads N] [--async] [--trace-early]"
                .into(),
        );
    }
    Ok(a)
}

/// A listener on 127.0.0.1:`port` with `SO_REUSEADDR` and `SO_REUSEPORT`,
/// so that several loops can each accept on the same port.
fn reuseport_listener(port: u16) -> io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    s.set_reuse_address(true)?;
    s.set_reuse_port(true)?;
    s.set_nonblocking(true)?;
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    s.bind(&addr.into())?;
    s.listen(4096)?;
    Ok(s.into())
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    TRACE_EARLY.store(args.trace_early, Ordering::Relaxed);
    let counters = Arc::new(Counters::default());
    // Bind every listener first: the first picks the port (for --port 0).
    let first = reuseport_listener(args.port).unwrap_or_else(|e| {
        eprintln!("cannot listen on 127.0.0.1:{}: {e}", args.port);
        std::process::exit(1)
    });
    let port = first.local_addr().map(|a| a.port()).unwrap_or(args.port);
    let mut listeners = vec![first];
    for _ in 1..args.threads {
        listeners.push(reuseport_listener(port).unwrap_or_else(|e| {
            eprintln!("cannot listen on 127.0.0.1:{port} again: {e}");
            std::process::exit(1)
        }));
    }
    let remotes: Arc<Mutex<Vec<Remote>>> = Arc::default();
    let (ready_tx, ready_rx) = mpsc::channel();
    let mut threads = Vec::new();
    for (i, listener) in listeners.into_iter().enumerate() {
        let (counters, remotes, ready) = (counters.clone(), remotes.clone(), ready_tx.clone());
        let idle = Duration::from_millis(args.idle_ms);
        let async_mode = args.async_mode;
        threads.push(std::thread::spawn(move || {
            let mut lp = EventLoop::new();
            remotes.lock().unwrap().push(lp.remote());
            if i == 0 {
                watch_signals(&mut lp, remotes.clone());
            }
            if async_mode {
                serve_async(&mut lp, listener, idle, counters);
            } else {
                serve_callbacks(&mut lp, listener, idle, counters);
            }
            ready.send(()).unwrap();
            if let Err(e) = lp.run() {
                eprintln!("loop {i}: {e}");
            }
        }));
    }
    drop(ready_tx);
    for _ in 0..args.threads {
        ready_rx.recv().unwrap();
    }
    println!("listening on 127.0.0.1:{port}");
    io::stdout().flush().unwrap();
    for t in threads {
        t.join().unwrap();
    }
    println!("{}", counters.line());
}

/// SIGINT and SIGTERM, watched by this loop: on either, every loop stops.
fn watch_signals(lp: &mut EventLoop, remotes: Arc<Mutex<Vec<Remote>>>) {
    let signals = Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM])
        .expect("cannot watch signals");
    lp.insert_io(signals, Interest::READABLE, move |_, signals, _| {
        if signals.pending().next().is_some() {
            for r in remotes.lock().unwrap().drain(..) {
                let _ = r.post(|lp| lp.stop());
            }
        }
    })
    .expect("cannot watch signals");
}

// ----- Callbacks: the loop owns each connection ---------------------------

/// A connection as the loop owns it: the socket, what was read but is not
/// yet a whole line, what waits to be written, and its idle timer.
struct Conn {
    stream: mio::net::TcpStream,
    input: Vec<u8>,
    output: Vec<u8>,
    timer: Option<Timeout>,
    /// Its interest includes WRITABLE.
    writing: bool,
    /// Reading is paused until the output drains.
    paused: bool,
    /// Close once the output is written (after `idle timeout`).
    closing: bool,
    /// The peer shut its write side (EOF): nothing more is read; the
    /// echoes of the lines it sent are written, then the connection is
    /// closed as closed by its peer.
    peer_eof: bool,
    /// With `--trace-early`: when its timer was last refreshed.
    refreshed: Option<std::time::Instant>,
    /// An event reported the peer's close or an error: reads go on until
    /// they return 0 or `WouldBlock` (no later event will say it again).
    drain: bool,
    /// The goodbye is out and the write side shut: what the peer still
    /// sends is read and dropped until its EOF, then the socket closes.
    /// (A close with its bytes unread would be a reset, which can discard
    /// a goodbye the kernel has not yet sent.)
    lingering: bool,
}

impl mio::event::Source for Conn {
    fn register(&mut self, r: &mio::Registry, t: mio::Token, i: Interest) -> io::Result<()> {
        self.stream.register(r, t, i)
    }
    fn reregister(&mut self, r: &mio::Registry, t: mio::Token, i: Interest) -> io::Result<()> {
        self.stream.reregister(r, t, i)
    }
    fn deregister(&mut self, r: &mio::Registry) -> io::Result<()> {
        self.stream.deregister(r)
    }
}

enum Next {
    Open,
    PeerClosed,
    Done,
}

impl Conn {
    /// Writes what it can; `Err` if the socket failed.
    fn flush(&mut self) -> io::Result<()> {
        let mut at = 0;
        while at < self.output.len() {
            match self.stream.write(&self.output[at..]) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                // A short write filled the send buffer: the rest waits for
                // the writable event (not for a write that would block).
                Ok(n) if at + n < self.output.len() && !self.drain => {
                    at += n;
                    break;
                }
                Ok(n) => at += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.output.drain(..at);
        Ok(())
    }

    /// Reads what is there; echoes each whole line and counts them. A
    /// short read (fewer bytes than the buffer) drained the socket: the
    /// next bytes come with a new (edge-triggered) event, so it stops there
    /// instead of reading again to find `WouldBlock` (one `read` per line,
    /// not two), unless the peer's close was already reported.
    fn read_lines(&mut self) -> io::Result<(usize, bool)> {
        let mut lines = 0;
        let mut buf = [0; 16 << 10];
        while !self.paused {
            match self.stream.read(&mut buf) {
                Ok(0) => return Ok((lines, true)),
                Ok(n) => {
                    let new = &buf[..n];
                    // `input` holds no newline: only the new bytes are
                    // searched, and the whole lines go out in one move.
                    match new.iter().rposition(|&b| b == b'\n') {
                        Some(end) => {
                            lines += new.iter().filter(|&&b| b == b'\n').count();
                            self.output.append(&mut self.input);
                            self.output.extend_from_slice(&new[..=end]);
                            self.input.extend_from_slice(&new[end + 1..]);
                        }
                        None => self.input.extend_from_slice(new),
                    }
                    if self.input.len() > MAX_LINE {
                        return Err(io::Error::new(ErrorKind::InvalidData, "line too long"));
                    }
                    if self.output.len() > HIGH_WATER {
                        self.flush()?;
                        self.paused = self.output.len() > HIGH_WATER;
                    }
                    if n < buf.len() && !self.drain {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok((lines, false))
    }

    /// One readiness event.
    fn on_event(&mut self, ev: IoEvent) -> (usize, Next) {
        let (lines, next) = self.step(ev);
        match next {
            // After the goodbye, the connection is already counted.
            Next::PeerClosed if self.closing => (lines, Next::Done),
            n => (lines, n),
        }
    }

    /// The goodbye is written: shuts the write side (the peer gets its
    /// EOF after the goodbye) and starts dropping what it sends.
    fn linger(&mut self) -> Next {
        if self.stream.shutdown(std::net::Shutdown::Write).is_err() {
            return Next::Done;
        }
        self.lingering = true;
        self.discard()
    }

    /// Reads and drops what the peer sends after the goodbye: `Done` at
    /// its EOF (or a failure), `Open` while it has more to send.
    fn discard(&mut self) -> Next {
        let mut buf = [0; 16 << 10];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return Next::Done,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Next::Open,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Next::Done,
            }
        }
    }

    fn step(&mut self, ev: IoEvent) -> (usize, Next) {
        if self.lingering {
            return (0, self.discard());
        }
        let mut lines = 0;
        if ev.readiness.read_closed || ev.readiness.error {
            self.drain = true;
        }
        if ev.readiness.readable || ev.readiness.read_closed || ev.readiness.error {
            match self.read_lines() {
                Ok((n, eof)) => {
                    lines = n;
                    if eof && !self.closing {
                        // Half-closed (or closed): answer what it sent
                        // first, as Node's `allowHalfOpen: false` does.
                        self.peer_eof = true;
                        self.paused = true;
                    }
                }
                Err(_) => return (lines, Next::PeerClosed),
            }
        }
        if self.flush().is_err() {
            return (lines, Next::PeerClosed);
        }
        if self.paused && !self.peer_eof && !self.closing && self.output.len() <= HIGH_WATER / 2 {
            self.paused = false;
            // Edge-triggered: read what arrived while paused.
            if let Ok((n, eof)) = self.read_lines() {
                lines += n;
                if eof && !self.closing {
                    self.peer_eof = true;
                    self.paused = true;
                }
            }
            if self.flush().is_err() {
                return (lines, Next::PeerClosed);
            }
        }
        if self.closing && self.output.is_empty() {
            return (lines, self.linger());
        }
        if self.peer_eof && self.output.is_empty() {
            return (lines, Next::PeerClosed);
        }
        (lines, Next::Open)
    }

    /// The interest the connection needs now, if it changed.
    fn interest(&mut self) -> Option<Interest> {
        let want_write = !self.output.is_empty();
        if want_write == self.writing {
            return None;
        }
        self.writing = want_write;
        Some(if want_write {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        })
    }
}

fn serve_callbacks(
    lp: &mut EventLoop,
    listener: std::net::TcpListener,
    idle: Duration,
    counters: Arc<Counters>,
) {
    let listener = mio::net::TcpListener::from_std(listener);
    // Whether a retry is queued: one at a time, however many connections
    // arrive meanwhile (each readiness event would start another).
    let retrying = Rc::new(Cell::new(false));
    lp.insert_io(listener, Interest::READABLE, move |lp, listener, ev| {
        let ready = accept_ready(listener);
        admit(lp, ev.handle, ready, idle, &counters, &retrying);
    })
    .expect("cannot watch the listener");
}

/// Takes on what `accept_ready` accepted from the listener `h`, and queues
/// a retry if it is stuck and none is queued yet.
fn admit(
    lp: &mut EventLoop,
    h: IoHandle,
    (accepted, stuck): (Vec<mio::net::TcpStream>, bool),
    idle: Duration,
    counters: &Arc<Counters>,
    retrying: &Rc<Cell<bool>>,
) {
    for stream in accepted {
        accept(lp, stream, idle, counters);
    }
    if stuck && !retrying.replace(true) {
        retry_accept(lp, h, idle, counters.clone(), retrying.clone());
    }
}

/// Accepts what the listener has. `true` beside them: it failed for want
/// of a resource (out of descriptors, of memory) with connections still
/// waiting, which no new readiness event will announce (mio's events are
/// edge-triggered), so the caller must try again later. A connection
/// reset before it was accepted is skipped.
fn accept_ready(listener: &mut mio::net::TcpListener) -> (Vec<mio::net::TcpStream>, bool) {
    let mut accepted = Vec::new();
    loop {
        match listener.accept() {
            Ok((stream, _)) => accepted.push(stream),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return (accepted, false),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionAborted
                        | ErrorKind::ConnectionReset
                        | ErrorKind::Interrupted
                ) => {}
            Err(_) => return (accepted, true),
        }
    }
}

/// Tries the listener again in 10 ms (as the tasks mode waits), and again
/// while it stays stuck; `retrying` is set while a try is queued.
fn retry_accept(
    lp: &mut EventLoop,
    h: IoHandle,
    idle: Duration,
    counters: Arc<Counters>,
    retrying: Rc<Cell<bool>>,
) {
    lp.set_timeout(Duration::from_millis(10), move |lp| {
        // This retry is no longer queued: `admit` queues the next if the
        // listener is still stuck.
        retrying.set(false);
        let Ok(listener) = lp.io_source::<mio::net::TcpListener>(h) else {
            return;
        };
        let ready = accept_ready(listener);
        admit(lp, h, ready, idle, &counters, &retrying);
    });
}

fn accept(
    lp: &mut EventLoop,
    stream: mio::net::TcpStream,
    idle: Duration,
    counters: &Arc<Counters>,
) {
    let _ = stream.set_nodelay(true);
    let conn = Conn {
        stream,
        input: Vec::new(),
        output: Vec::new(),
        timer: None,
        writing: false,
        paused: false,
        drain: false,
        lingering: false,
        closing: false,
        peer_eof: false,
        refreshed: None,
    };
    let c = counters.clone();
    let h = match lp.insert_io(conn, Interest::READABLE, move |lp, conn, ev| {
        let (lines, next) = conn.on_event(ev);
        match next {
            Next::Open => {
                // After the goodbye, `timer` is its last chance: nothing
                // read then (nothing is) refreshes it.
                if lines > 0
                    && !conn.closing
                    && let Some(t) = conn.timer
                {
                    let _ = lp.refresh(t);
                    if TRACE_EARLY.load(Ordering::Relaxed) {
                        conn.refreshed = Some(std::time::Instant::now());
                    }
                }
                if let Some(i) = conn.interest() {
                    let _ = lp.set_io_interest(ev.handle, i);
                }
            }
            Next::PeerClosed => {
                if let Some(t) = conn.timer.take() {
                    let _ = lp.clear_timeout(t);
                }
                c.closed(false);
                let _ = lp.close_io(ev.handle);
            }
            Next::Done => {
                // The goodbye is out (or the peer left meanwhile): its
                // last-chance timer goes too.
                if let Some(t) = conn.timer.take() {
                    let _ = lp.clear_timeout(t);
                }
                let _ = lp.close_io(ev.handle);
            }
        }
    }) {
        Ok(h) => h,
        Err(_) => return, // the stream is dropped: closed
    };
    counters.opened();
    let c = counters.clone();
    let timer = lp.set_timeout(idle, move |lp| on_idle(lp, h, &c, idle));
    if let Ok(conn) = lp.io_source::<Conn>(h) {
        conn.timer = Some(timer);
    }
}

/// The idle timer fired: say so, and close once that is written.
fn on_idle(lp: &mut EventLoop, h: IoHandle, counters: &Counters, idle: Duration) {
    let Ok(conn) = lp.io_source::<Conn>(h) else {
        return;
    };
    conn.timer = None;
    if let Some(at) = conn.refreshed {
        let since = at.elapsed();
        if since + Duration::from_millis(1) < idle {
            eprintln!(
                "early close: {:.3} ms after the last refresh (idle {} ms)",
                since.as_secs_f64() * 1e3,
                idle.as_millis()
            );
        }
    }
    // Idle, or a reader too slow for its echoes (reading it stopped, so no
    // line came): the goodbye goes after what is pending, a half-closed
    // peer's echoes included.
    conn.output.extend_from_slice(b"idle timeout\n");
    conn.closing = true;
    conn.paused = true; // nothing more is read or echoed
    counters.closed(true);
    if conn.flush().is_err() {
        let _ = lp.close_io(h);
        return;
    }
    if conn.output.is_empty() && matches!(conn.linger(), Next::Done) {
        let _ = lp.close_io(h);
        return;
    }
    if let Some(i) = conn.interest() {
        let _ = lp.set_io_interest(h, i);
    }
    // A peer that does not take it (or, lingering, does not close) within
    // another idle period never will: the connection is dropped, its
    // buffer with it.
    let last_chance = lp.set_timeout(idle, move |lp| {
        let _ = lp.close_io(h);
    });
    if let Ok(conn) = lp.io_source::<Conn>(h) {
        conn.timer = Some(last_chance);
    }
}

// ----- Tasks: the same server with async/await ----------------------------

fn serve_async(
    lp: &mut EventLoop,
    listener: std::net::TcpListener,
    idle: Duration,
    counters: Arc<Counters>,
) {
    let listener = lp
        .scope(|| TcpListener::from_std(listener))
        .expect("cannot watch the listener");
    lp.spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    counters.opened();
                    task::spawn(connection(stream, idle, counters.clone()));
                }
                // Out of descriptors: wait a little rather than spin.
                Err(_) => time::sleep(Duration::from_millis(10)).await,
            }
        }
    });
}

async fn connection(mut s: TcpStream, idle: Duration, counters: Arc<Counters>) {
    let _ = s.set_nodelay(true);
    let mut input = Vec::new();
    // Small: a connection's memory is mostly this buffer while it waits.
    let mut buf = vec![0; 1024];
    let last_line = Cell::new(Instant::now());
    loop {
        match time::timeout_at(last_line.get() + idle, s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                counters.closed(false);
                return;
            }
            Ok(Ok(n)) => {
                // `input` holds no newline: only the new bytes are searched.
                let new = &buf[..n];
                match new.iter().rposition(|&b| b == b'\n') {
                    Some(end) => {
                        last_line.set(Instant::now());
                        let mut lines = std::mem::take(&mut input);
                        lines.extend_from_slice(&new[..=end]);
                        input.extend_from_slice(&new[end + 1..]);
                        // A slow reader holds this task here: nothing more
                        // is read until the echoes are written, and they
                        // must be by the idle deadline, as in the callbacks
                        // mode, whose timer no line refreshes meanwhile.
                        // Written by hand, so that a deadline that comes
                        // mid-way knows what is left: the goodbye goes
                        // after whole lines, never inside one.
                        let mut at = 0;
                        while at < lines.len() {
                            match time::timeout_at(last_line.get() + idle, s.write(&lines[at..]))
                                .await
                            {
                                Ok(Ok(0)) | Ok(Err(_)) => {
                                    counters.closed(false);
                                    return;
                                }
                                Ok(Ok(n)) => at += n,
                                Err(_elapsed) => {
                                    return goodbye(&mut s, &lines[at..], idle, &counters).await;
                                }
                            }
                        }
                    }
                    None => input.extend_from_slice(new),
                }
                if input.len() > MAX_LINE {
                    counters.closed(false);
                    return;
                }
            }
            Err(_elapsed) => return goodbye(&mut s, &[], idle, &counters).await,
        }
    }
}

/// The idle timeout: counted, and the echoes still unwritten (`rest`)
/// then the goodbye written if the peer takes them within another idle
/// period (a reader that never reads would hold the task for ever); then
/// the connection is dropped.
async fn goodbye(s: &mut TcpStream, rest: &[u8], idle: Duration, counters: &Counters) {
    counters.closed(true);
    let _ = time::timeout(idle, async {
        s.write_all(rest).await?;
        s.write_all(b"idle timeout\n").await?;
        // The write side shut after the goodbye, and what the peer still
        // sends dropped until its EOF: a close with its bytes unread would
        // be a reset, which can discard a goodbye not yet sent.
        s.shutdown(std::net::Shutdown::Write)?;
        let mut buf = [0; 1024];
        while s.read(&mut buf).await? > 0 {}
        io::Result::Ok(())
    })
    .await;
}
