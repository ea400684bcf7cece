//! One poll thread: its share of the connections, from connect to close.
//! The definitions of what is measured and checked are in the crate docs
//! (main.rs); this file implements them.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::stats::push_capped;

/// The server's goodbye.
pub const IDLE_MSG: &[u8] = b"idle timeout\n";

/// Connect attempts per connection (the first one included).
const MAX_ATTEMPTS: u32 = 5;
/// A connect that has not completed after this long is retried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// A connection whose first echo has not come back after this long stops
/// holding a connect-window slot (the missing echo is reported later).
const SLOT_TIMEOUT: Duration = Duration::from_secs(3);
/// How often the connect phase scans for the two timeouts above.
const SCAN_EVERY: Duration = Duration::from_millis(100);
/// Violation messages kept per worker (the counts are always complete).
const MAX_MESSAGES: usize = 50;

/// The run's parameters, shared by every worker.
#[derive(Clone, Debug)]
pub struct Config {
    pub addr: SocketAddr,
    pub period: Duration,
    pub duration: Duration,
    pub idle: Duration,
    pub threads: usize,
    pub late_limit_ms: f64,
    pub early_tolerance_ms: f64,
}

/// What the workers share: the time origin of the lines' `t` field, and
/// the start of the measured window D, set by the last worker to finish
/// its connect phase.
pub struct Shared {
    pub base: Instant,
    pub connected_workers: AtomicUsize,
    pub t0: OnceLock<Instant>,
    /// Connections established and not yet closed, over all workers, and
    /// the most there ever were.
    pub open: AtomicUsize,
    pub peak_open: AtomicUsize,
}

/// One worker's connections: `(id, active)`.
pub struct Plan {
    pub conns: Vec<(u32, bool)>,
    /// Most connections of this worker that may be connecting or waiting
    /// for their first echo at once.
    pub window: usize,
    /// Connect attempts per second for this worker, if limited.
    pub rate: Option<f64>,
}

/// What one worker measured. Merged by main.
#[derive(Debug, Default)]
pub struct Report {
    pub lines_sent: u64,
    pub lines_echoed: u64,
    /// Echoes received during [t0, t0 + D).
    pub echoed_in_d: u64,
    /// Echo latency (µs) of the lines sent during [t0, t0 + D).
    pub latencies_us: Vec<u64>,
    /// Per idle close: arrival of `idle timeout` − arrival of the last
    /// echo − MS, in ms.
    pub lateness_ms: Vec<f64>,
    /// Per idle close: arrival of `idle timeout` − send of the last line −
    /// MS, in ms (must be ≥ 0, up to the tolerance).
    pub margins_ms: Vec<f64>,
    pub idle_closes: u64,
    pub early_closes: u64,
    pub early_within_tolerance: u64,
    pub late_closes: u64,
    pub active_closed: u64,
    pub lost_echoes: u64,
    pub corrupt_echoes: u64,
    pub closed_without_notice: u64,
    pub not_closed: u64,
    pub connect_failures: u64,
    pub connect_retries: u64,
    /// Longest time between two sends of one active connection while it
    /// was supposed to send every P (shows whether the generator kept up).
    pub max_send_gap: Duration,
    /// When this worker's last connection was established.
    pub connected_at: Option<Instant>,
    pub messages: Vec<String>,
    pub messages_dropped: u64,
}

impl Report {
    fn violation(&mut self, msg: String) {
        push_capped(
            &mut self.messages,
            &mut self.messages_dropped,
            MAX_MESSAGES,
            msg,
        );
    }

    pub fn violations(&self) -> u64 {
        self.early_closes
            + self.late_closes
            + self.active_closed
            + self.lost_echoes
            + self.corrupt_echoes
            + self.closed_without_notice
            + self.not_closed
            + self.connect_failures
    }

    pub fn merge(&mut self, o: Report) {
        self.lines_sent += o.lines_sent;
        self.lines_echoed += o.lines_echoed;
        self.echoed_in_d += o.echoed_in_d;
        self.latencies_us.extend(o.latencies_us);
        self.lateness_ms.extend(o.lateness_ms);
        self.margins_ms.extend(o.margins_ms);
        self.idle_closes += o.idle_closes;
        self.early_closes += o.early_closes;
        self.early_within_tolerance += o.early_within_tolerance;
        self.late_closes += o.late_closes;
        self.active_closed += o.active_closed;
        self.lost_echoes += o.lost_echoes;
        self.corrupt_echoes += o.corrupt_echoes;
        self.closed_without_notice += o.closed_without_notice;
        self.not_closed += o.not_closed;
        self.connect_failures += o.connect_failures;
        self.connect_retries += o.connect_retries;
        self.max_send_gap = self.max_send_gap.max(o.max_send_gap);
        self.connected_at = match (self.connected_at, o.connected_at) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.messages.extend(o.messages);
        self.messages_dropped += o.messages_dropped;
    }
}

/// A line sent whose echo has not come back yet.
struct Sent {
    line: Vec<u8>,
    queued: Instant,
    in_d: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Not yet (or, between retries, no longer) connecting.
    Queued,
    Connecting {
        since: Instant,
    },
    Open,
    Closed,
}

struct Conn {
    id: u32,
    active: bool,
    phase: Phase,
    attempts: u32,
    stream: Option<TcpStream>,
    /// Bytes not yet written, from `out_pos`.
    out: Vec<u8>,
    out_pos: usize,
    /// Bytes received after the last complete line.
    inbuf: Vec<u8>,
    pending: VecDeque<Sent>,
    seq: u64,
    /// Holds one slot of the connect window (until its first echo).
    holds_slot: bool,
    /// When the first line was queued.
    opened_at: Option<Instant>,
    /// Taken just before the write() call that emptied `out`: a lower
    /// bound of when the server could have read the last line.
    last_write: Option<Instant>,
    /// Arrival of the last echo: an upper bound of when the server read
    /// the last line (and so refreshed its timer).
    last_echo: Option<Instant>,
    /// When the last periodic send happened (active connections).
    last_tick: Option<Instant>,
    /// Arrival of `idle timeout\n`.
    notice: Option<Instant>,
}

/// The times that decide where an event falls, known once t0 is.
#[derive(Clone, Copy)]
struct Window {
    t0: Option<Instant>,
    stop: Option<Instant>,
}

impl Window {
    fn contains(&self, t: Instant) -> bool {
        matches!((self.t0, self.stop), (Some(a), Some(b)) if t >= a && t < b)
    }

    /// Whether active connections have stopped sending at `t`.
    fn stopped(&self, t: Instant) -> bool {
        matches!(self.stop, Some(s) if t >= s)
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `a − b` in ms, signed.
fn signed_ms(a: Instant, b: Instant) -> f64 {
    if a >= b { ms(a - b) } else { -ms(b - a) }
}

fn is_newline(b: &u8) -> bool {
    *b == b'\n'
}

struct Worker<'a> {
    cfg: &'a Config,
    shared: &'a Shared,
    poll: Poll,
    conns: Vec<Conn>,
    to_open: VecDeque<usize>,
    retries: BinaryHeap<Reverse<(Instant, usize)>>,
    sends: BinaryHeap<Reverse<(Instant, usize)>>,
    window: usize,
    rate: Option<f64>,
    in_flight: usize,
    connecting: usize,
    live: usize,
    opened: u64,
    connect_start: Instant,
    connect_done: bool,
    win: Window,
    stopped: bool,
    deadline: Option<Instant>,
    last_scan: Instant,
    buf: Vec<u8>,
    report: Report,
}

/// Runs one worker to the end and returns what it measured.
pub fn run(cfg: &Config, shared: &Shared, plan: Plan) -> io::Result<Report> {
    let now = Instant::now();
    let conns: Vec<Conn> = plan
        .conns
        .iter()
        .map(|&(id, active)| Conn {
            id,
            active,
            phase: Phase::Queued,
            attempts: 0,
            stream: None,
            out: Vec::new(),
            out_pos: 0,
            inbuf: Vec::new(),
            pending: VecDeque::new(),
            seq: 0,
            holds_slot: false,
            opened_at: None,
            last_write: None,
            last_echo: None,
            last_tick: None,
            notice: None,
        })
        .collect();
    let mut w = Worker {
        cfg,
        shared,
        poll: Poll::new()?,
        to_open: (0..conns.len()).collect(),
        conns,
        retries: BinaryHeap::new(),
        sends: BinaryHeap::new(),
        window: plan.window.max(1),
        rate: plan.rate,
        in_flight: 0,
        connecting: 0,
        live: 0,
        opened: 0,
        connect_start: now,
        connect_done: false,
        win: Window {
            t0: None,
            stop: None,
        },
        stopped: false,
        deadline: None,
        last_scan: now,
        buf: vec![0; 64 * 1024],
        report: Report::default(),
    };
    w.run()?;
    Ok(w.report)
}

impl Worker<'_> {
    fn run(&mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        loop {
            let now = Instant::now();
            self.phases(now);
            if self.stopped {
                let deadline = self.deadline.expect("set with stop");
                if self.live == 0 || now >= deadline {
                    break;
                }
            }
            if !self.connect_done {
                self.open_more(now);
                if now >= self.last_scan + SCAN_EVERY {
                    self.last_scan = now;
                    self.scan_timeouts(now);
                }
            }
            self.send_due(now);

            let timeout = self.next_wakeup(now);
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            for event in events.iter() {
                let idx = event.token().0;
                let now = Instant::now();
                match self.conns[idx].phase {
                    Phase::Connecting { .. } => self.check_connected(idx, now),
                    Phase::Open => {
                        if event.is_writable() {
                            self.flush(idx);
                        }
                        if event.is_readable() || event.is_read_closed() || event.is_error() {
                            self.read(idx, now);
                        }
                    }
                    Phase::Queued | Phase::Closed => {}
                }
            }
        }
        // Whatever the server has not closed by the deadline.
        for idx in 0..self.conns.len() {
            let c = &self.conns[idx];
            if matches!(c.phase, Phase::Open | Phase::Connecting { .. }) {
                self.report.not_closed += 1;
                let what = if c.notice.is_some() {
                    "got `idle timeout` but no EOF"
                } else {
                    "never closed by the server"
                };
                let msg = format!("conn {}: {what} by the end of the run", c.id);
                self.report.violation(msg);
                self.close(idx);
            }
        }
        Ok(())
    }

    /// Connect phase → (all workers connected) t0 → t0 + D: stop → wait.
    fn phases(&mut self, now: Instant) {
        if !self.connect_done
            && self.to_open.is_empty()
            && self.retries.is_empty()
            && self.connecting == 0
        {
            self.connect_done = true;
            self.report.connected_at = Some(now);
            let done = self.shared.connected_workers.fetch_add(1, Ordering::AcqRel) + 1;
            if done == self.cfg.threads {
                let _ = self.shared.t0.set(now);
            }
        }
        if self.win.t0.is_none()
            && let Some(&t0) = self.shared.t0.get()
        {
            self.win.t0 = Some(t0);
            self.win.stop = Some(t0 + self.cfg.duration);
        }
        if !self.stopped && self.win.stopped(now) {
            self.stopped = true;
            self.sends.clear();
            self.deadline = Some(now + self.cfg.idle + Duration::from_secs(1));
        }
    }

    fn next_wakeup(&self, now: Instant) -> Duration {
        let mut next = now + SCAN_EVERY;
        let mut at = |t: Instant| next = next.min(t);
        if let Some(Reverse((t, _))) = self.sends.peek() {
            at(*t);
        }
        if let Some(Reverse((t, _))) = self.retries.peek() {
            at(*t);
        }
        if !self.to_open.is_empty()
            && self.in_flight < self.window
            && let Some(rate) = self.rate
        {
            let due = self.connect_start + Duration::from_secs_f64(self.opened as f64 / rate);
            at(due);
        }
        if let Some(stop) = self.win.stop
            && !self.stopped
        {
            at(stop);
        }
        if let Some(d) = self.deadline {
            at(d);
        }
        if self.connect_done && self.win.t0.is_none() {
            // Waiting for the other workers to finish connecting.
            at(now + Duration::from_millis(1));
        }
        next.saturating_duration_since(now)
    }

    // ----- connecting ---------------------------------------------------

    fn open_more(&mut self, now: Instant) {
        while let Some(Reverse((t, idx))) = self.retries.peek().copied() {
            if t > now || self.in_flight >= self.window {
                break;
            }
            self.retries.pop();
            self.start_connect(idx, now);
        }
        while self.in_flight < self.window {
            if let Some(rate) = self.rate {
                let allowed = (now - self.connect_start).as_secs_f64() * rate + 1.0;
                if self.opened as f64 >= allowed {
                    break;
                }
            }
            let Some(idx) = self.to_open.pop_front() else {
                break;
            };
            self.opened += 1;
            self.start_connect(idx, now);
        }
    }

    fn start_connect(&mut self, idx: usize, now: Instant) {
        self.conns[idx].attempts += 1;
        let result = TcpStream::connect(self.cfg.addr).and_then(|mut s| {
            self.poll.registry().register(
                &mut s,
                Token(idx),
                Interest::READABLE | Interest::WRITABLE,
            )?;
            Ok(s)
        });
        match result {
            Ok(s) => {
                let c = &mut self.conns[idx];
                c.stream = Some(s);
                c.phase = Phase::Connecting { since: now };
                c.holds_slot = true;
                self.in_flight += 1;
                self.connecting += 1;
                self.live += 1;
            }
            Err(e) => self.connect_failed(idx, e, now),
        }
    }

    /// Retries (ECONNREFUSED, EAGAIN, a timeout, ...) or gives up.
    fn connect_failed(&mut self, idx: usize, err: io::Error, now: Instant) {
        if matches!(self.conns[idx].phase, Phase::Connecting { .. }) {
            self.connecting -= 1;
            self.close(idx);
        }
        let c = &mut self.conns[idx];
        if c.attempts < MAX_ATTEMPTS {
            c.phase = Phase::Queued;
            self.report.connect_retries += 1;
            let backoff = Duration::from_millis(20) * c.attempts;
            self.retries.push(Reverse((now + backoff, idx)));
        } else {
            c.phase = Phase::Closed;
            self.report.connect_failures += 1;
            let msg = format!("conn {}: connect failed {MAX_ATTEMPTS} times: {err}", c.id);
            self.report.violation(msg);
        }
    }

    fn check_connected(&mut self, idx: usize, now: Instant) {
        let s = self.conns[idx].stream.as_ref().expect("connecting");
        match s.take_error() {
            Ok(None) => {}
            Ok(Some(e)) | Err(e) => return self.connect_failed(idx, e, now),
        }
        match s.peer_addr() {
            Ok(_) => {}
            Err(e)
                if e.kind() == io::ErrorKind::NotConnected
                    || e.raw_os_error() == Some(libc::EINPROGRESS) =>
            {
                return;
            }
            Err(e) => return self.connect_failed(idx, e, now),
        }
        // Small lines: no Nagle delay behind an unacknowledged one.
        let _ = s.set_nodelay(true);
        self.connecting -= 1;
        let open = self.shared.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.shared.peak_open.fetch_max(open, Ordering::Relaxed);
        let c = &mut self.conns[idx];
        c.phase = Phase::Open;
        c.opened_at = Some(now);
        c.last_tick = Some(now);
        let (id, active) = (c.id, c.active);
        self.send_line(idx, now);
        if active && !self.stopped && self.conns[idx].phase == Phase::Open {
            // Spread the actives' phases over the period, so that a burst
            // of connects does not become a burst of sends every P.
            let p = self.cfg.period.as_nanos() as u64;
            let offset = (u64::from(id).wrapping_mul(2_654_435_761) % 1000 + 1) * p / 1000;
            self.sends
                .push(Reverse((now + Duration::from_nanos(offset), idx)));
        }
    }

    /// Connects that take too long are retried; connections whose first
    /// echo is late stop holding a window slot.
    fn scan_timeouts(&mut self, now: Instant) {
        for idx in 0..self.conns.len() {
            let c = &mut self.conns[idx];
            match c.phase {
                Phase::Connecting { since } if now - since > CONNECT_TIMEOUT => {
                    let e = io::Error::new(io::ErrorKind::TimedOut, "connect timed out");
                    self.connect_failed(idx, e, now);
                }
                Phase::Open
                    if c.holds_slot && c.opened_at.is_some_and(|t| now - t > SLOT_TIMEOUT) =>
                {
                    c.holds_slot = false;
                    self.in_flight -= 1;
                }
                _ => {}
            }
        }
    }

    // ----- sending ------------------------------------------------------

    fn send_due(&mut self, now: Instant) {
        while let Some(Reverse((due, idx))) = self.sends.peek().copied() {
            if due > now {
                break;
            }
            self.sends.pop();
            if self.conns[idx].phase != Phase::Open || self.conns[idx].notice.is_some() {
                continue;
            }
            let c = &mut self.conns[idx];
            if let Some(prev) = c.last_tick {
                self.report.max_send_gap = self.report.max_send_gap.max(now - prev);
            }
            c.last_tick = Some(now);
            self.send_line(idx, now);
            // Drift-free while on time; after a stall, skip to now rather
            // than catch up with a burst.
            let mut next = due + self.cfg.period;
            if next <= now {
                next = now + self.cfg.period;
            }
            if self.conns[idx].phase == Phase::Open {
                self.sends.push(Reverse((next, idx)));
            }
        }
    }

    /// Queues `c<id> s<seq> t<µs since start>\n` and writes what it can.
    fn send_line(&mut self, idx: usize, now: Instant) {
        let t_us = (now - self.shared.base).as_micros();
        let in_d = self.win.contains(now);
        let c = &mut self.conns[idx];
        let line = format!("c{} s{} t{}\n", c.id, c.seq, t_us).into_bytes();
        c.seq += 1;
        c.out.extend_from_slice(&line);
        c.pending.push_back(Sent {
            line,
            queued: now,
            in_d,
        });
        self.report.lines_sent += 1;
        self.flush(idx);
    }

    fn flush(&mut self, idx: usize) {
        let c = &mut self.conns[idx];
        let Some(s) = c.stream.as_mut() else { return };
        while c.out_pos < c.out.len() {
            let t = Instant::now();
            match s.write(&c.out[c.out_pos..]) {
                Ok(0) => break,
                Ok(n) => {
                    c.out_pos += n;
                    if c.out_pos == c.out.len() {
                        c.last_write = Some(t);
                        c.out.clear();
                        c.out_pos = 0;
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // EPIPE/ECONNRESET: the server is gone. The read side
                    // reports how (EOF after the notice, or not).
                    let _ = e;
                    break;
                }
            }
        }
    }

    // ----- receiving ----------------------------------------------------

    fn read(&mut self, idx: usize, now: Instant) {
        let mut buf = std::mem::take(&mut self.buf);
        while let Some(s) = self.conns[idx].stream.as_mut() {
            match s.read(&mut buf) {
                Ok(0) => {
                    self.on_eof(idx, now);
                    break;
                }
                Ok(n) => {
                    self.conns[idx].inbuf.extend_from_slice(&buf[..n]);
                    self.lines(idx, now);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.on_reset(idx, e, now);
                    break;
                }
            }
        }
        self.buf = buf;
    }

    /// Checks every complete line received.
    fn lines(&mut self, idx: usize, now: Instant) {
        let c = &mut self.conns[idx];
        let r = &mut self.report;
        let mut start = 0;
        while let Some(len) = c.inbuf[start..].iter().position(is_newline) {
            let line = &c.inbuf[start..start + len + 1];
            start += len + 1;
            if c.notice.is_some() {
                r.corrupt_echoes += 1;
                let msg = format!(
                    "conn {}: data after `idle timeout`: {:?}",
                    c.id,
                    String::from_utf8_lossy(line)
                );
                r.violation(msg);
            } else if line == IDLE_MSG {
                c.notice = Some(now);
                on_notice(c, r, self.cfg, self.win, now);
            } else {
                // An echo that matches a later line: the ones before it
                // were lost (or will come out of order, and then count as
                // corrupt). Resynchronise on it.
                if let Some(j) = c.pending.iter().skip(1).position(|s| s.line == line) {
                    let skipped = j as u64 + 1;
                    r.lost_echoes += skipped;
                    let msg = format!(
                        "conn {}: {skipped} line(s) not echoed before {:?}",
                        c.id,
                        String::from_utf8_lossy(line)
                    );
                    r.violation(msg);
                    c.pending.drain(..=j);
                }
                match c.pending.pop_front() {
                    Some(sent) if sent.line == line => {
                        r.lines_echoed += 1;
                        if self.win.contains(now) {
                            r.echoed_in_d += 1;
                        }
                        if sent.in_d {
                            r.latencies_us.push((now - sent.queued).as_micros() as u64);
                        }
                        c.last_echo = Some(now);
                        if c.holds_slot {
                            c.holds_slot = false;
                            self.in_flight -= 1;
                        }
                    }
                    Some(sent) => {
                        r.corrupt_echoes += 1;
                        let msg = format!(
                            "conn {}: expected echo {:?}, got {:?}",
                            c.id,
                            String::from_utf8_lossy(&sent.line),
                            String::from_utf8_lossy(line)
                        );
                        r.violation(msg);
                    }
                    None => {
                        r.corrupt_echoes += 1;
                        let msg = format!(
                            "conn {}: unexpected line {:?}",
                            c.id,
                            String::from_utf8_lossy(line)
                        );
                        r.violation(msg);
                    }
                }
            }
        }
        c.inbuf.drain(..start);
    }

    fn on_eof(&mut self, idx: usize, now: Instant) {
        let c = &mut self.conns[idx];
        let r = &mut self.report;
        if !c.inbuf.is_empty() {
            r.corrupt_echoes += 1;
            let msg = format!(
                "conn {}: partial line before EOF: {:?}",
                c.id,
                String::from_utf8_lossy(&c.inbuf)
            );
            r.violation(msg);
        }
        if c.notice.is_none() {
            closed_without_notice(c, r, "EOF", now);
        }
        self.close(idx);
    }

    fn on_reset(&mut self, idx: usize, err: io::Error, now: Instant) {
        let c = &mut self.conns[idx];
        if c.notice.is_none() {
            closed_without_notice(c, &mut self.report, &err.to_string(), now);
        }
        self.close(idx);
    }

    /// Closes our side (dropping the stream also removes it from epoll).
    fn close(&mut self, idx: usize) {
        let c = &mut self.conns[idx];
        if c.stream.take().is_some() {
            self.live -= 1;
        }
        if c.holds_slot {
            c.holds_slot = false;
            self.in_flight -= 1;
        }
        if c.phase == Phase::Open {
            self.shared.open.fetch_sub(1, Ordering::Relaxed);
        }
        c.phase = Phase::Closed;
    }
}

/// `idle timeout\n` arrived at `now`: classify the close.
fn on_notice(c: &mut Conn, r: &mut Report, cfg: &Config, win: Window, now: Instant) {
    if !c.pending.is_empty() {
        r.lost_echoes += c.pending.len() as u64;
        let msg = format!(
            "conn {}: `idle timeout` with {} line(s) not echoed",
            c.id,
            c.pending.len()
        );
        r.violation(msg);
        c.pending.clear();
        return;
    }
    if c.active && !win.stopped(now) {
        r.active_closed += 1;
        let since = c.last_write.map_or(f64::NAN, |t| signed_ms(now, t));
        let msg = format!(
            "conn {}: active connection closed by the server during D ({since:.3} ms after its last line)",
            c.id
        );
        r.violation(msg);
        return;
    }
    let (Some(sent), Some(echo)) = (c.last_write, c.last_echo) else {
        // Unreachable in practice: nothing pending means the line went out
        // and its echo came back.
        return;
    };
    let idle = ms(cfg.idle);
    let margin = signed_ms(now, sent) - idle;
    let lateness = signed_ms(now, echo) - idle;
    r.idle_closes += 1;
    r.margins_ms.push(margin);
    r.lateness_ms.push(lateness);
    if margin < -cfg.early_tolerance_ms {
        r.early_closes += 1;
        let msg = format!(
            "conn {}: idle close {:.3} ms after the last line was sent (< {} ms)",
            c.id,
            margin + idle,
            cfg.idle.as_millis()
        );
        r.violation(msg);
    } else if margin < 0.0 {
        r.early_within_tolerance += 1;
    }
    if lateness > cfg.late_limit_ms {
        r.late_closes += 1;
        let msg = format!(
            "conn {}: idle close {lateness:.3} ms late (after the last echo + {} ms)",
            c.id,
            cfg.idle.as_millis()
        );
        r.violation(msg);
    }
}

fn closed_without_notice(c: &mut Conn, r: &mut Report, how: &str, now: Instant) {
    r.closed_without_notice += 1;
    let since = c.last_write.map_or(f64::NAN, |t| signed_ms(now, t));
    let msg = format!(
        "conn {}: closed by the server without `idle timeout` ({how}, {since:.3} ms after the last line)",
        c.id
    );
    r.violation(msg);
    if !c.pending.is_empty() {
        r.lost_echoes += c.pending.len() as u64;
        c.pending.clear();
    }
}
