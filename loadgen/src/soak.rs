//! `loadgen --soak`: a faulty-network soak of the idle-timeout line-echo
//! servers (issue 14, item 4).
//!
//! ```text
//! loadgen --soak --addr 127.0.0.1:PORT [--conns C=10000] [--duration-s D=600]
//!         [--idle-ms MS=5000] [--server-pid PID] [--threads T=cores]
//!         [--late-ms L=1000] [--early-tolerance-ms E=5] [--seed S=1]
//!         [--rss-tol X=0.10] [--fd-tol Y=0.05]
//! ```
//!
//! # The load
//!
//! C *slots*, each a client that runs one session after another until D
//! has passed: connect, behave as one of the kinds below (drawn at
//! random per session), end, wait 0-100 ms, reconnect. So connections
//! keep being created and destroyed over the whole run (churn), about C
//! of them open at once. At most 64 connects per thread are in flight at
//! once (the listen backlog never overflows). Active lines go every
//! P = MS/5. Kinds (weights in parentheses):
//!
//! * `active` (30): 3-15 lines, one every P, each echoed exactly; then it
//!   closes (FIN), resets, or goes idle and must be closed on time (a
//!   third each).
//! * `reset` (15): 0-3 lines every P, then a reset (`SO_LINGER` 0, then
//!   close: RST), half of the time with a line or a partial line just
//!   written and not answered.
//! * `half-close` (15): 1-5 lines and a partial one in one write, then
//!   `shutdown(Write)`; it keeps reading and must get every echo, then EOF
//!   (the server answers what was sent, then closes), before any idle
//!   timeout.
//! * `stall` (10): one line, echoed; then 1-8 bytes of a line, one every
//!   MS/20, then silence. The server must close it MS after the complete
//!   line: partial bytes are not activity (see the server docs), so a
//!   server that counted them would be up to 0.4·MS late (beyond L).
//! * `trickle` (10): 1-3 lines, each sent in 1-byte pieces every MS/100
//!   (a whole line takes well under MS), each echoed exactly; then idle,
//!   closed on time.
//! * `silent` (20): connects and sends nothing; closed MS after the
//!   connect.
//!
//! After D, no new session starts; actives stop sending and end as their
//! kind says; the run waits until every connection is closed, or
//! 2·MS + L + 5 s.
//!
//! # What is checked (violations: printed, counted, exit status 1)
//!
//! * Exact, in-order echoes (`corrupt_echoes`, `lost_echoes`).
//! * Idle closes: `idle timeout\n` then EOF. For a connection whose script
//!   is idle (`idle_closes`), not early:
//!   `close − sent − MS ≥ −E`, where `sent` is the write of the last
//!   complete line's last byte (for `silent`, the start of the connect)
//!   (`early_closes`). E is 5 ms here, not the load mode's 1 ms: the
//!   server starts a timer from its loop time, cached in whole ms when the
//!   poll returned (libuv's and Node's rule), and under this load one
//!   batch of events takes long enough that a line whose last byte was
//!   sent after the poll returned is read in that batch: its timer starts
//!   up to 1 ms + the batch's processing time before the byte was sent.
//!   Margins in [−E, −1 ms) are counted (`early_beyond_1ms`), as are all
//!   negative ones (`early_within_tolerance`); `margin_min_ms` is printed. Late: `close − echo − MS > L`, with `echo` the
//!   arrival of that line's echo (for `silent`, the connect's completion),
//!   counted and reported (`late_closes`, lateness percentiles) but not a
//!   violation: this runs on shared machines. A connection still open at
//!   the end is a violation (`not_closed`).
//! * An idle close of a connection whose script is not idle (an active
//!   client between lines, a trickle mid-line) is a violation if it comes
//!   before MS since the last line the server answered was sent
//!   (`unexpected_idle_closes`). Otherwise it is counted
//!   (`idle_closes_busy`) and told apart: `client_behind` when the client
//!   itself had not completed a line within MS of that one (loadgen fell
//!   behind: `client_lag_max_ms`, `client_lag_over_100ms` show by how
//!   much), `server_behind` when a complete line was sent before the
//!   earliest possible deadline and the server timed the connection out
//!   instead of reading it (it was behind: its timers run before its poll,
//!   as libuv's), with the line's age at the close
//!   (`unread_line_age_*_ms`). Like late closes, both are reported, not
//!   violations; their unanswered lines are `lost_echoes_excused`. A line
//!   older than L at the close was not read at all, behind or not: that is
//!   `unexpected_idle_closes`.
//! * No other close by the server (`closed_without_notice`), except the
//!   EOF a half-close expects; a half-close answered by an idle timeout
//!   more than L after its FIN is `unexpected_idle_closes` (within L, a
//!   server behind: `server_behind`, the FIN's age as the line's).
//! * Every connect succeeds within 20 attempts (`connect_failures`).
//! * With `--server-pid`: the server's `VmRSS` and open descriptors
//!   (`/proc/PID/fd`) are sampled every second. If D ≥ 120 s, with the
//!   warm-up the first 20 % of D and the reference window 20-50 % of D,
//!   the maximum over the last half of D must be at most the reference
//!   maximum × (1 + X) for RSS and × (1 + Y) for descriptors (`rss_flat`,
//!   `fds_flat`); shorter runs report `skipped`. After the run, once every
//!   connection is closed, the server's descriptor count must be back to
//!   what it was before the first connect (`fds_back`; waited for up to
//!   10 s). The server being alive at the end is checked too
//!   (`server_alive`).
//!
//! # Output
//!
//! A table per minute (connects, idle closes, server RSS and descriptors,
//! client connections open), then `key=value` lines, then `soak: PASS` or
//! `soak: FAIL (reasons)`. Exit status 0 on PASS, 1 on FAIL, 2 on a usage
//! or setup error.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::flags::Flags;
use crate::stats::{ms3, or_na, percentile, push_capped};
use crate::sys;
use crate::worker::IDLE_MSG;

const USAGE: &str = "usage: loadgen --soak --addr 127.0.0.1:PORT [--conns C=10000] \
[--duration-s D=600] [--idle-ms MS=5000] [--server-pid PID] [--threads T] \
[--late-ms L=1000] [--early-tolerance-ms E=5] [--seed S=1] [--rss-tol X=0.10] [--fd-tol Y=0.05]";

/// Connects in flight per worker thread.
const CONNECT_WINDOW: usize = 64;
/// Connect attempts per session before it counts as a failure.
const MAX_ATTEMPTS: u32 = 20;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const MAX_MESSAGES: usize = 30;
/// Runs shorter than this skip the flatness checks (too few samples after
/// a warm-up to say anything).
const FLAT_MIN: Duration = Duration::from_secs(120);

#[derive(Debug)]
struct Args {
    addr: SocketAddr,
    conns: usize,
    duration: Duration,
    idle: Duration,
    server_pid: Option<u32>,
    threads: usize,
    late_ms: f64,
    early_tolerance_ms: f64,
    seed: u64,
    rss_tol: f64,
    fd_tol: f64,
}

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let mut addr = None;
    let mut duration_s: f64 = 600.0;
    let mut idle_ms = 5000u64;
    let mut a = Args {
        addr: "127.0.0.1:0".parse().expect("literal"),
        conns: 10_000,
        duration: Duration::ZERO,
        idle: Duration::ZERO,
        server_pid: None,
        threads: thread::available_parallelism().map_or(2, |n| n.get()),
        late_ms: 1000.0,
        early_tolerance_ms: 5.0,
        seed: 1,
        rss_tol: 0.10,
        fd_tol: 0.05,
    };
    let mut flags = Flags::new(argv.iter().cloned());
    while let Some(f) = flags.next_flag()? {
        match f.key.as_str() {
            _ if f.arg == "--soak" => {}
            "--addr" => addr = Some(flags.value::<SocketAddr>(&f)?),
            "--conns" => a.conns = flags.value(&f)?,
            "--duration-s" => duration_s = flags.value(&f)?,
            "--idle-ms" => idle_ms = flags.value(&f)?,
            "--server-pid" => a.server_pid = Some(flags.value(&f)?),
            "--threads" => a.threads = flags.value(&f)?,
            "--late-ms" => a.late_ms = flags.value(&f)?,
            "--early-tolerance-ms" => a.early_tolerance_ms = flags.value(&f)?,
            "--seed" => a.seed = flags.value(&f)?,
            "--rss-tol" => a.rss_tol = flags.value(&f)?,
            "--fd-tol" => a.fd_tol = flags.value(&f)?,
            _ => return Err(format!("unknown argument {:?}", f.arg)),
        }
    }
    a.addr = addr.ok_or("--addr is required")?;
    if a.conns == 0 || a.threads == 0 {
        return Err("--conns and --threads must be at least 1".into());
    }
    if !(duration_s > 0.0 && duration_s.is_finite()) {
        return Err("--duration-s must be positive".into());
    }
    if idle_ms < 100 {
        return Err("--idle-ms must be at least 100".into());
    }
    a.duration = Duration::from_secs_f64(duration_s);
    a.idle = Duration::from_millis(idle_ms);
    a.threads = a.threads.min(a.conns);
    Ok(a)
}

/// Entry point of `loadgen --soak ...` (`argv` without the program name).
pub fn main(argv: &[String]) -> ExitCode {
    let a = match parse_args(argv) {
        Ok(a) => a,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("loadgen: {msg}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Err(msg) = sys::raise_nofile(a.conns as u64 + 64) {
        eprintln!("loadgen: {msg}");
        return ExitCode::from(2);
    }
    let start_sample = match a.server_pid.map(sample) {
        Some(Err(e)) => {
            eprintln!("loadgen: --server-pid: {e}");
            return ExitCode::from(2);
        }
        Some(Ok(s)) => Some(s),
        None => None,
    };
    match run(&a, start_sample) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("loadgen: {e}");
            ExitCode::from(2)
        }
    }
}

// ----- sampling the server ------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct Sample {
    /// Seconds since the start.
    t: f64,
    rss_kb: u64,
    fds: u64,
    /// Client connections open at that moment.
    client_open: usize,
}

#[derive(Clone, Copy, Debug)]
struct ServerSample {
    rss_kb: u64,
    fds: u64,
}

fn sample(pid: u32) -> Result<ServerSample, String> {
    let p = sys::sample(pid)?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map_err(|e| format!("/proc/{pid}/fd: {e}"))?
        .count() as u64;
    Ok(ServerSample {
        rss_kb: p.rss_kb,
        fds,
    })
}

// ----- shared state and the report ----------------------------------------

struct Shared {
    stop: Instant,
    open: AtomicUsize,
    connects: AtomicU64,
    idle_closes: AtomicU64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Close,
    Reset,
    Idle,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Active(End),
    Reset { unanswered: bool },
    HalfClose,
    Stall,
    Trickle,
    Silent,
}

const KINDS: [&str; 6] = [
    "active",
    "reset",
    "half-close",
    "stall",
    "trickle",
    "silent",
];

impl Kind {
    fn index(self) -> usize {
        match self {
            Kind::Active(_) => 0,
            Kind::Reset { .. } => 1,
            Kind::HalfClose => 2,
            Kind::Stall => 3,
            Kind::Trickle => 4,
            Kind::Silent => 5,
        }
    }
}

#[derive(Debug, Default)]
struct Report {
    sessions: [u64; 6],
    connects: u64,
    connect_retries: u64,
    connect_failures: u64,
    lines_sent: u64,
    lines_echoed: u64,
    resets_sent: u64,
    client_closes: u64,
    half_closes_answered: u64,
    idle_closes: u64,
    idle_closes_by_kind: [u64; 6],
    early_closes: u64,
    early_within_tolerance: u64,
    early_beyond_1ms: u64,
    late_closes: u64,
    lateness_ms: Vec<f64>,
    margin_min_ms: Option<f64>,
    unexpected_idle_closes: u64,
    /// Idle closes of connections whose script was not idle, not early:
    /// the client had not completed a line within MS (`client_behind`),
    /// or a line completed before the deadline was left unread
    /// (`server_behind`, with the line's age at the close).
    idle_closes_busy: u64,
    client_behind: u64,
    server_behind: u64,
    unread_line_age_ms: Vec<f64>,
    lost_echoes_excused: u64,
    /// Scheduled client steps run late: the most, and how many by more
    /// than 100 ms (the generator itself falling behind).
    client_lag_max: Duration,
    client_lag_over_100ms: u64,
    corrupt_echoes: u64,
    lost_echoes: u64,
    closed_without_notice: u64,
    reset_after_notice: u64,
    not_closed: u64,
    messages: Vec<String>,
    messages_dropped: u64,
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

    fn violations(&self) -> u64 {
        self.connect_failures
            + self.early_closes
            + self.unexpected_idle_closes
            + self.corrupt_echoes
            + self.lost_echoes
            + self.closed_without_notice
            + self.not_closed
    }

    fn merge(&mut self, o: Report) {
        for i in 0..6 {
            self.sessions[i] += o.sessions[i];
            self.idle_closes_by_kind[i] += o.idle_closes_by_kind[i];
        }
        self.connects += o.connects;
        self.connect_retries += o.connect_retries;
        self.connect_failures += o.connect_failures;
        self.lines_sent += o.lines_sent;
        self.lines_echoed += o.lines_echoed;
        self.resets_sent += o.resets_sent;
        self.client_closes += o.client_closes;
        self.half_closes_answered += o.half_closes_answered;
        self.idle_closes += o.idle_closes;
        self.early_closes += o.early_closes;
        self.early_within_tolerance += o.early_within_tolerance;
        self.early_beyond_1ms += o.early_beyond_1ms;
        self.late_closes += o.late_closes;
        self.lateness_ms.extend(o.lateness_ms);
        self.margin_min_ms = match (self.margin_min_ms, o.margin_min_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.unexpected_idle_closes += o.unexpected_idle_closes;
        self.idle_closes_busy += o.idle_closes_busy;
        self.client_behind += o.client_behind;
        self.server_behind += o.server_behind;
        self.unread_line_age_ms.extend(o.unread_line_age_ms);
        self.lost_echoes_excused += o.lost_echoes_excused;
        self.client_lag_max = self.client_lag_max.max(o.client_lag_max);
        self.client_lag_over_100ms += o.client_lag_over_100ms;
        self.corrupt_echoes += o.corrupt_echoes;
        self.lost_echoes += o.lost_echoes;
        self.closed_without_notice += o.closed_without_notice;
        self.reset_after_notice += o.reset_after_notice;
        self.not_closed += o.not_closed;
        self.messages.extend(o.messages);
        self.messages_dropped += o.messages_dropped;
    }
}

// ----- one slot -----------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting to (re)connect at `next_at`.
    Waiting,
    Connecting,
    Open,
    /// No more sessions.
    Done,
}

struct Slot {
    id: u32,
    rng: u64,
    /// Bumped at every connect, so that a token of an old socket is told
    /// apart.
    generation: u32,
    state: State,
    kind: Kind,
    attempts: u32,
    stream: Option<TcpStream>,
    out: Vec<u8>,
    /// `shutdown(Write)` once `out` is written.
    shut_after_flush: bool,
    shut: bool,
    /// When it shut its write side: the server has had its FIN since.
    shut_at: Option<Instant>,
    inbuf: Vec<u8>,
    pending: VecDeque<Vec<u8>>,
    seq: u64,
    /// Complete lines still to send.
    lines_left: u32,
    /// Bytes still to trickle, one per piece, and the gap between pieces.
    pieces: VecDeque<u8>,
    piece_gap: Duration,
    /// The line being trickled, once complete (to expect its echo).
    trickled: Vec<u8>,
    next_at: Option<Instant>,
    connect_start: Instant,
    connected_at: Option<Instant>,
    /// Write of the last complete line's last byte, and its echo: the
    /// server's idle timer restarted in between.
    last_line_write: Option<Instant>,
    last_echo: Option<Instant>,
    /// Waiting for the server's idle close, counting from (lower, upper).
    idle_from: Option<(Instant, Instant)>,
    /// The last moment the server surely refreshed the timer, bounded:
    /// the send of the last line echoed and its echo (connect start and
    /// completion before any echo).
    refresh: (Instant, Instant),
    notice: bool,
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Slot {
    /// Uniform in `lo..=hi`.
    fn rand(&mut self, lo: u64, hi: u64) -> u64 {
        lo + splitmix(&mut self.rng) % (hi - lo + 1)
    }

    fn pick_kind(&mut self) -> Kind {
        let r = self.rand(0, 99);
        match r {
            0..10 => Kind::Active(End::Close),
            10..20 => Kind::Active(End::Reset),
            20..30 => Kind::Active(End::Idle),
            30..45 => Kind::Reset {
                unanswered: r.is_multiple_of(2),
            },
            45..60 => Kind::HalfClose,
            60..70 => Kind::Stall,
            70..80 => Kind::Trickle,
            _ => Kind::Silent,
        }
    }

    fn next_line(&mut self) -> Vec<u8> {
        let k = KINDS[self.kind.index()];
        let line = format!("c{} s{} {k}\n", self.id, self.seq).into_bytes();
        self.seq += 1;
        line
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn signed_ms(a: Instant, b: Instant) -> f64 {
    if a >= b { ms(a - b) } else { -ms(b - a) }
}

struct Worker<'a> {
    a: &'a Args,
    shared: &'a Shared,
    poll: Poll,
    slots: Vec<Slot>,
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    connecting: usize,
    /// Slots waiting for a connect-window place, in order.
    queue: VecDeque<usize>,
    live: usize,
    period: Duration,
    buf: Vec<u8>,
    r: Report,
}

fn token(idx: usize, generation: u32) -> Token {
    Token(idx | ((generation as usize & 0xff_ffff) << 32))
}

fn run_worker(a: &Args, shared: &Shared, ids: Vec<u32>) -> io::Result<Report> {
    let now = Instant::now();
    let slots = ids
        .iter()
        .map(|&id| Slot {
            id,
            rng: a.seed.wrapping_mul(0x1000_0000_01B3) ^ u64::from(id),
            generation: 0,
            state: State::Waiting,
            kind: Kind::Silent,
            attempts: 0,
            stream: None,
            out: Vec::new(),
            shut_after_flush: false,
            shut: false,
            shut_at: None,
            inbuf: Vec::new(),
            pending: VecDeque::new(),
            seq: 0,
            lines_left: 0,
            pieces: VecDeque::new(),
            piece_gap: Duration::ZERO,
            trickled: Vec::new(),
            next_at: None,
            connect_start: now,
            connected_at: None,
            last_line_write: None,
            last_echo: None,
            idle_from: None,
            refresh: (now, now),
            notice: false,
        })
        .collect();
    let mut w = Worker {
        a,
        shared,
        poll: Poll::new()?,
        slots,
        timers: BinaryHeap::new(),
        connecting: 0,
        queue: (0..ids.len()).collect(),
        live: 0,
        period: a.idle / 5,
        buf: vec![0; 16 * 1024],
        r: Report::default(),
    };
    w.run()?;
    Ok(w.r)
}

impl Worker<'_> {
    fn run(&mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let deadline = self.shared.stop
            + self.a.idle * 2
            + Duration::from_secs_f64(self.a.late_ms / 1e3 + 5.0);
        let mut last_scan = Instant::now();
        loop {
            let now = Instant::now();
            if now >= self.shared.stop && self.live == 0 && self.connecting == 0 {
                // Nothing open; no new session after the stop.
                break;
            }
            if now >= deadline {
                break;
            }
            self.due(now);
            self.open_more(now);
            if now >= last_scan + Duration::from_millis(200) {
                last_scan = now;
                self.scan_connects(now);
            }
            let mut wake = now + Duration::from_millis(100);
            if let Some(Reverse((t, _))) = self.timers.peek() {
                wake = wake.min(*t);
            }
            if let Err(e) = self
                .poll
                .poll(&mut events, Some(wake.saturating_duration_since(now)))
                && e.kind() != io::ErrorKind::Interrupted
            {
                return Err(e);
            }
            for ev in events.iter() {
                let idx = ev.token().0 & 0xffff_ffff;
                let generation = (ev.token().0 >> 32) as u32;
                let Some(s) = self.slots.get(idx) else {
                    continue;
                };
                if s.generation & 0xff_ffff != generation {
                    continue;
                }
                let now = Instant::now();
                match s.state {
                    State::Connecting => self.check_connected(idx, now),
                    State::Open => {
                        if ev.is_writable() {
                            self.flush(idx, now);
                        }
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            self.read(idx, now);
                        }
                    }
                    State::Waiting | State::Done => {}
                }
            }
        }
        for idx in 0..self.slots.len() {
            let s = &self.slots[idx];
            if matches!(s.state, State::Open | State::Connecting) {
                self.r.not_closed += 1;
                let msg = format!(
                    "conn {}: {} session ({}) still open at the end of the run",
                    s.id,
                    KINDS[s.kind.index()],
                    if s.idle_from.is_some() {
                        "idle"
                    } else {
                        "not idle"
                    }
                );
                self.r.violation(msg);
                self.drop_stream(idx);
            }
        }
        Ok(())
    }

    fn schedule(&mut self, idx: usize, at: Instant) {
        self.slots[idx].next_at = Some(at);
        self.timers.push(Reverse((at, idx)));
    }

    /// Runs the scheduled step of every slot that is due.
    fn due(&mut self, now: Instant) {
        while let Some(Reverse((t, idx))) = self.timers.peek().copied() {
            if t > now {
                break;
            }
            self.timers.pop();
            if self.slots[idx].next_at != Some(t) {
                continue; // superseded
            }
            let lag = now - t;
            self.r.client_lag_max = self.r.client_lag_max.max(lag);
            if lag > Duration::from_millis(100) {
                self.r.client_lag_over_100ms += 1;
            }
            self.slots[idx].next_at = None;
            match self.slots[idx].state {
                State::Waiting => {
                    // A retry (attempts > 0) finishes its session after
                    // the stop; a new session does not start.
                    if now >= self.shared.stop && self.slots[idx].attempts == 0 {
                        self.slots[idx].state = State::Done;
                    } else {
                        self.queue.push_back(idx);
                    }
                }
                // After `idle timeout`, the script stops; EOF ends it.
                State::Open if !self.slots[idx].notice => self.step(idx, now),
                State::Open => {}
                State::Connecting | State::Done => {}
            }
        }
    }

    // ----- connecting ---------------------------------------------------

    fn open_more(&mut self, now: Instant) {
        while self.connecting < CONNECT_WINDOW {
            let Some(idx) = self.queue.pop_front() else {
                break;
            };
            self.start_connect(idx, now);
        }
    }

    fn start_connect(&mut self, idx: usize, now: Instant) {
        let s = &mut self.slots[idx];
        s.attempts += 1;
        s.generation = s.generation.wrapping_add(1);
        let tok = token(idx, s.generation);
        let result = TcpStream::connect(self.a.addr).and_then(|mut st| {
            self.poll
                .registry()
                .register(&mut st, tok, Interest::READABLE | Interest::WRITABLE)?;
            Ok(st)
        });
        match result {
            Ok(st) => {
                let s = &mut self.slots[idx];
                s.stream = Some(st);
                s.state = State::Connecting;
                s.connect_start = now;
                self.connecting += 1;
            }
            Err(e) => self.connect_failed(idx, e, now),
        }
    }

    fn connect_failed(&mut self, idx: usize, err: io::Error, now: Instant) {
        if self.slots[idx].state == State::Connecting {
            self.connecting -= 1;
        }
        let s = &mut self.slots[idx];
        s.stream = None;
        s.state = State::Waiting;
        if s.attempts < MAX_ATTEMPTS {
            self.r.connect_retries += 1;
            let backoff = Duration::from_millis(20 * u64::from(s.attempts.min(10)));
            self.schedule(idx, now + backoff);
        } else {
            self.r.connect_failures += 1;
            let msg = format!("conn {}: connect failed {MAX_ATTEMPTS} times: {err}", s.id);
            s.attempts = 0;
            self.r.violation(msg);
            self.schedule(idx, now + Duration::from_millis(100));
        }
    }

    fn check_connected(&mut self, idx: usize, now: Instant) {
        let st = self.slots[idx].stream.as_ref().expect("connecting");
        match st.take_error() {
            Ok(None) => {}
            Ok(Some(e)) | Err(e) => return self.connect_failed(idx, e, now),
        }
        match st.peer_addr() {
            Ok(_) => {}
            Err(e)
                if e.kind() == io::ErrorKind::NotConnected
                    || e.raw_os_error() == Some(libc::EINPROGRESS) =>
            {
                return;
            }
            Err(e) => return self.connect_failed(idx, e, now),
        }
        let _ = st.set_nodelay(true);
        self.connecting -= 1;
        self.live += 1;
        self.shared.open.fetch_add(1, Ordering::Relaxed);
        self.shared.connects.fetch_add(1, Ordering::Relaxed);
        self.r.connects += 1;
        let s = &mut self.slots[idx];
        s.attempts = 0;
        s.state = State::Open;
        s.connected_at = Some(now);
        s.out.clear();
        s.shut_after_flush = false;
        s.shut = false;
        s.shut_at = None;
        s.inbuf.clear();
        s.pending.clear();
        s.pieces.clear();
        s.trickled.clear();
        s.last_line_write = None;
        s.last_echo = None;
        s.idle_from = None;
        s.refresh = (s.connect_start, now);
        s.notice = false;
        s.kind = s.pick_kind();
        let kind = s.kind;
        self.r.sessions[kind.index()] += 1;
        match kind {
            Kind::Active(_) => {
                let n = self.slots[idx].rand(3, 15) as u32;
                self.slots[idx].lines_left = n;
                self.step(idx, now);
            }
            Kind::Reset { .. } => {
                let n = self.slots[idx].rand(0, 3) as u32;
                self.slots[idx].lines_left = n;
                if n == 0 {
                    self.script_end(idx, now);
                } else {
                    self.step(idx, now);
                }
            }
            Kind::HalfClose => {
                let n = self.slots[idx].rand(1, 5);
                for _ in 0..n {
                    let line = self.slots[idx].next_line();
                    self.queue_line(idx, line);
                }
                let s = &mut self.slots[idx];
                s.out.extend_from_slice(b"unfinished");
                s.shut_after_flush = true;
                self.flush(idx, now);
            }
            Kind::Stall => {
                self.slots[idx].lines_left = 1;
                self.step(idx, now);
            }
            Kind::Trickle => {
                let n = self.slots[idx].rand(1, 3) as u32;
                self.slots[idx].lines_left = n;
                self.start_trickle(idx, now);
            }
            Kind::Silent => {
                let s = &mut self.slots[idx];
                s.idle_from = Some((s.connect_start, now));
            }
        }
    }

    /// Connects that take too long are retried.
    fn scan_connects(&mut self, now: Instant) {
        for idx in 0..self.slots.len() {
            if self.slots[idx].state == State::Connecting
                && now - self.slots[idx].connect_start > CONNECT_TIMEOUT
            {
                let e = io::Error::new(io::ErrorKind::TimedOut, "connect timed out");
                self.connect_failed(idx, e, now);
            }
        }
    }

    // ----- the scripts --------------------------------------------------

    /// A scheduled step of an open connection.
    fn step(&mut self, idx: usize, now: Instant) {
        let s = &mut self.slots[idx];
        match s.kind {
            Kind::Active(_) | Kind::Reset { .. } => {
                if now >= self.shared.stop {
                    s.lines_left = 0;
                    if s.pending.is_empty() {
                        self.script_end(idx, now);
                    }
                    return;
                }
                if s.lines_left > 0 {
                    s.lines_left -= 1;
                    let more = s.lines_left > 0;
                    let line = s.next_line();
                    self.queue_line(idx, line);
                    self.flush(idx, now);
                    if more {
                        self.schedule(idx, now + self.period);
                    }
                }
            }
            Kind::Stall => {
                if s.lines_left > 0 {
                    s.lines_left = 0;
                    let line = s.next_line();
                    self.queue_line(idx, line);
                    self.flush(idx, now);
                } else if let Some(b) = s.pieces.pop_front() {
                    s.out.push(b);
                    let more = !s.pieces.is_empty();
                    let gap = s.piece_gap;
                    self.flush(idx, now);
                    if more {
                        self.schedule(idx, now + gap);
                    }
                }
            }
            Kind::Trickle => {
                if let Some(b) = s.pieces.pop_front() {
                    s.out.push(b);
                    let done = s.pieces.is_empty();
                    let gap = s.piece_gap;
                    if done {
                        let line = std::mem::take(&mut s.trickled);
                        s.pending.push_back(line);
                        self.r.lines_sent += 1;
                        self.flush(idx, now);
                    } else {
                        self.flush(idx, now);
                        self.schedule(idx, now + gap);
                    }
                }
            }
            Kind::HalfClose | Kind::Silent => {}
        }
    }

    fn start_trickle(&mut self, idx: usize, now: Instant) {
        let s = &mut self.slots[idx];
        s.lines_left -= 1;
        let line = s.next_line();
        s.pieces = line.iter().copied().collect();
        s.trickled = line;
        s.piece_gap = self.a.idle / 100;
        self.step(idx, now);
    }

    fn queue_line(&mut self, idx: usize, line: Vec<u8>) {
        let s = &mut self.slots[idx];
        s.out.extend_from_slice(&line);
        s.pending.push_back(line);
        self.r.lines_sent += 1;
    }

    /// Every line of the session is sent and echoed: end it as its kind
    /// says.
    fn script_end(&mut self, idx: usize, now: Instant) {
        let s = &mut self.slots[idx];
        match s.kind {
            Kind::Active(End::Close) => {
                self.r.client_closes += 1;
                self.end_session(idx, now);
            }
            Kind::Active(End::Reset) => self.reset(idx, now),
            Kind::Reset { unanswered } => {
                if unanswered {
                    if s.rand(0, 1) == 0 {
                        let line = s.next_line();
                        s.out.extend_from_slice(&line);
                    } else {
                        s.out.extend_from_slice(b"half a li");
                    }
                    self.flush(idx, now);
                }
                self.reset(idx, now);
            }
            Kind::Active(End::Idle) | Kind::Trickle => self.go_idle(idx),
            Kind::Stall => {
                self.go_idle(idx);
                let s = &mut self.slots[idx];
                let n = s.rand(1, 8) as usize;
                s.pieces = b"stalled!".iter().copied().take(n).collect();
                s.piece_gap = self.a.idle / 20;
                let gap = s.piece_gap;
                self.schedule(idx, now + gap);
            }
            Kind::HalfClose | Kind::Silent => {}
        }
    }

    /// From now on the server must close the connection MS after its last
    /// complete line (or its connect, if it sent none: an active session
    /// connected after the stop).
    fn go_idle(&mut self, idx: usize) {
        let s = &mut self.slots[idx];
        s.idle_from = match (s.last_line_write, s.last_echo, s.connected_at) {
            (Some(lo), Some(hi), _) => Some((lo, hi)),
            (_, _, Some(hi)) => Some((s.connect_start, hi)),
            _ => None,
        };
    }

    fn reset(&mut self, idx: usize, now: Instant) {
        if let Some(st) = self.slots[idx].stream.as_ref() {
            let _ = socket2::SockRef::from(st).set_linger(Some(Duration::ZERO));
        }
        self.r.resets_sent += 1;
        self.end_session(idx, now);
    }

    /// Closes the connection and schedules the next session.
    fn end_session(&mut self, idx: usize, now: Instant) {
        self.drop_stream(idx);
        let s = &mut self.slots[idx];
        s.state = State::Waiting;
        let pause = Duration::from_millis(s.rand(0, 100));
        self.schedule(idx, now + pause);
    }

    fn drop_stream(&mut self, idx: usize) {
        let s = &mut self.slots[idx];
        if s.stream.take().is_some() && s.state == State::Open {
            self.live -= 1;
            self.shared.open.fetch_sub(1, Ordering::Relaxed);
        }
        s.state = State::Done;
        s.next_at = None;
    }

    // ----- I/O ----------------------------------------------------------

    fn flush(&mut self, idx: usize, now: Instant) {
        let s = &mut self.slots[idx];
        let Some(st) = s.stream.as_mut() else { return };
        let mut at = 0;
        while at < s.out.len() {
            let t = Instant::now();
            match st.write(&s.out[at..]) {
                Ok(0) => break,
                Ok(n) => {
                    at += n;
                    if at == s.out.len() && s.out.last() == Some(&b'\n') {
                        s.last_line_write = Some(t);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The server is gone: the read side says how.
                Err(_) => break,
            }
        }
        s.out.drain(..at);
        if s.out.is_empty() && s.shut_after_flush && !s.shut {
            s.shut = true;
            s.shut_at = Some(now);
            let _ = st.shutdown(Shutdown::Write);
        }
    }

    fn read(&mut self, idx: usize, now: Instant) {
        let mut buf = std::mem::take(&mut self.buf);
        loop {
            if self.slots[idx].state != State::Open {
                break;
            }
            let Some(st) = self.slots[idx].stream.as_mut() else {
                break;
            };
            match st.read(&mut buf) {
                Ok(0) => {
                    self.on_eof(idx, now);
                    break;
                }
                Ok(n) => {
                    self.slots[idx].inbuf.extend_from_slice(&buf[..n]);
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

    fn lines(&mut self, idx: usize, now: Instant) {
        let mut start = 0;
        loop {
            let s = &mut self.slots[idx];
            if s.state != State::Open {
                return;
            }
            let Some(len) = s.inbuf[start..].iter().position(|&b| b == b'\n') else {
                break;
            };
            let line = s.inbuf[start..start + len + 1].to_vec();
            start += len + 1;
            if s.notice {
                self.r.corrupt_echoes += 1;
                let msg = format!(
                    "conn {}: data after `idle timeout`: {:?}",
                    s.id,
                    String::from_utf8_lossy(&line)
                );
                self.r.violation(msg);
            } else if line == IDLE_MSG {
                s.notice = true;
                self.on_notice(idx, now);
            } else {
                match s.pending.pop_front() {
                    Some(sent) if sent == line => {
                        self.r.lines_echoed += 1;
                        s.last_echo = Some(now);
                        if s.pending.is_empty() {
                            s.refresh = (s.last_line_write.unwrap_or(s.connect_start), now);
                            self.on_echoed(idx, now);
                        }
                    }
                    other => {
                        self.r.corrupt_echoes += 1;
                        let msg = format!(
                            "conn {} ({}): expected {:?}, got {:?}",
                            s.id,
                            KINDS[s.kind.index()],
                            other.map(|l| String::from_utf8_lossy(&l).into_owned()),
                            String::from_utf8_lossy(&line)
                        );
                        self.r.violation(msg);
                    }
                }
            }
        }
        let s = &mut self.slots[idx];
        s.inbuf.drain(..start);
    }

    /// Every line sent so far is echoed.
    fn on_echoed(&mut self, idx: usize, now: Instant) {
        let s = &mut self.slots[idx];
        match s.kind {
            Kind::Active(_) | Kind::Reset { .. } => {
                if s.lines_left == 0 {
                    self.script_end(idx, now);
                }
            }
            Kind::Stall => self.script_end(idx, now),
            Kind::Trickle => {
                if s.lines_left > 0 {
                    self.start_trickle(idx, now);
                } else {
                    self.script_end(idx, now);
                }
            }
            Kind::HalfClose | Kind::Silent => {}
        }
    }

    fn on_notice(&mut self, idx: usize, now: Instant) {
        let s = &mut self.slots[idx];
        let kind = KINDS[s.kind.index()];
        let Some((lo, hi)) = s.idle_from else {
            // Closed while its script was not idle. Early (before MS since
            // the last refresh) is a violation; otherwise either the
            // client itself fell behind (no complete line within MS of the
            // last refresh: a correct close) or a complete line was in the
            // server's socket before its deadline and the server, behind,
            // timed the connection out instead of reading it (its timers
            // run before its poll, as libuv's): reported with the line's
            // age, like late closes.
            let (rlo, _) = s.refresh;
            let margin = signed_ms(now, rlo) - ms(self.a.idle);
            let line_done = if s.pending.is_empty() {
                None
            } else {
                s.last_line_write
            };
            // A half-close's FIN was in the server's socket: the server
            // owed it its echoes and EOF, not a timeout; judged as an
            // unread line sent when the FIN was.
            let fin = match (s.kind, s.shut_at) {
                (Kind::HalfClose, Some(fin)) => Some(fin),
                _ => None,
            };
            if let Some(fin) = fin {
                let age = signed_ms(now, fin);
                unread_at_close(&mut self.r, self.a.late_ms, age, || {
                    format!(
                        "conn {} (half-close): `idle timeout` {age:.3} ms after its FIN, not its echoes and EOF",
                        s.id
                    )
                });
            } else if margin < -self.a.early_tolerance_ms {
                self.r.unexpected_idle_closes += 1;
                let msg = format!(
                    "conn {} ({kind}): `idle timeout` {:.3} ms after the last line it answered was sent (< {} ms)",
                    s.id,
                    margin + ms(self.a.idle),
                    self.a.idle.as_millis()
                );
                self.r.violation(msg);
            } else {
                match line_done {
                    Some(t) if t < rlo + self.a.idle => {
                        let age = signed_ms(now, t);
                        unread_at_close(&mut self.r, self.a.late_ms, age, || {
                            format!(
                                "conn {} ({kind}): `idle timeout` with a complete line {age:.3} ms old unread",
                                s.id
                            )
                        });
                    }
                    _ => self.r.client_behind += 1,
                }
                self.r.lost_echoes_excused += s.pending.len() as u64;
                s.pending.clear();
                self.shared.idle_closes.fetch_add(1, Ordering::Relaxed);
                self.r.idle_closes_busy += 1;
            }
            return;
        };
        if !s.pending.is_empty() {
            self.r.lost_echoes += s.pending.len() as u64;
            let msg = format!("conn {} ({kind}): `idle timeout` before an echo", s.id);
            self.r.violation(msg);
        }
        let idle = ms(self.a.idle);
        let margin = signed_ms(now, lo) - idle;
        let lateness = signed_ms(now, hi) - idle;
        self.r.idle_closes += 1;
        self.r.idle_closes_by_kind[s.kind.index()] += 1;
        self.shared.idle_closes.fetch_add(1, Ordering::Relaxed);
        self.r.lateness_ms.push(lateness);
        self.r.margin_min_ms = Some(self.r.margin_min_ms.map_or(margin, |m| m.min(margin)));
        if margin < -self.a.early_tolerance_ms {
            self.r.early_closes += 1;
            let msg = format!(
                "conn {} ({kind}): idle close {:.3} ms after the last line was sent (< {idle} ms)",
                s.id,
                margin + idle
            );
            self.r.violation(msg);
        } else if margin < 0.0 {
            self.r.early_within_tolerance += 1;
            if margin < -1.0 {
                self.r.early_beyond_1ms += 1;
            }
        }
        if lateness > self.a.late_ms {
            self.r.late_closes += 1;
        }
    }

    fn on_eof(&mut self, idx: usize, now: Instant) {
        let s = &mut self.slots[idx];
        let kind = KINDS[s.kind.index()];
        if !s.inbuf.is_empty() {
            self.r.corrupt_echoes += 1;
            let msg = format!(
                "conn {} ({kind}): partial line before EOF: {:?}",
                s.id,
                String::from_utf8_lossy(&s.inbuf)
            );
            self.r.violation(msg);
        }
        if s.notice {
            // The idle close, complete.
        } else if s.kind == Kind::HalfClose && s.shut {
            if s.pending.is_empty() {
                self.r.half_closes_answered += 1;
            } else {
                self.r.lost_echoes += s.pending.len() as u64;
                let msg = format!(
                    "conn {} (half-close): EOF with {} line(s) not echoed",
                    s.id,
                    s.pending.len()
                );
                self.r.violation(msg);
            }
        } else {
            self.closed_without_notice(idx, "EOF", now);
        }
        self.end_session(idx, now);
    }

    fn on_reset(&mut self, idx: usize, err: io::Error, now: Instant) {
        if self.slots[idx].notice {
            self.r.reset_after_notice += 1;
        } else {
            self.closed_without_notice(idx, &err.to_string(), now);
        }
        self.end_session(idx, now);
    }

    fn closed_without_notice(&mut self, idx: usize, how: &str, now: Instant) {
        let s = &mut self.slots[idx];
        self.r.closed_without_notice += 1;
        let msg = format!(
            "conn {} ({}): closed by the server without `idle timeout` ({how}, {:.1} ms after connecting)",
            s.id,
            KINDS[s.kind.index()],
            s.connected_at.map_or(f64::NAN, |t| signed_ms(now, t))
        );
        self.r.violation(msg);
        self.r.lost_echoes += s.pending.len() as u64;
    }
}

// ----- the run ------------------------------------------------------------

fn run(a: &Args, start: Option<ServerSample>) -> Result<bool, String> {
    let base = Instant::now();
    let shared = Shared {
        stop: base + a.duration,
        open: AtomicUsize::new(0),
        connects: AtomicU64::new(0),
        idle_closes: AtomicU64::new(0),
    };
    eprintln!(
        "loadgen: soak, {} slots to {} from {} threads for {:.0} s, MS = {} ms",
        a.conns,
        a.addr,
        a.threads,
        a.duration.as_secs_f64(),
        a.idle.as_millis()
    );
    let mut samples: Vec<Sample> = Vec::new();
    let mut minutes: Vec<(u64, u64)> = Vec::new(); // (connects, idle closes) at each minute
    let mut server_gone = None;
    let report = thread::scope(|sc| {
        let handles: Vec<_> = (0..a.threads)
            .map(|w| {
                let ids: Vec<u32> = (w..a.conns).step_by(a.threads).map(|i| i as u32).collect();
                let shared = &shared;
                sc.spawn(move || run_worker(a, shared, ids))
            })
            .collect();
        let mut next = base + Duration::from_secs(1);
        let mut next_minute = base + Duration::from_secs(60);
        while !handles.iter().all(|h| h.is_finished()) {
            thread::sleep(Duration::from_millis(20));
            let now = Instant::now();
            if now >= next_minute {
                next_minute += Duration::from_secs(60);
                minutes.push((
                    shared.connects.load(Ordering::Relaxed),
                    shared.idle_closes.load(Ordering::Relaxed),
                ));
            }
            if now < next {
                continue;
            }
            next += Duration::from_secs(1);
            if let Some(pid) = a.server_pid
                && server_gone.is_none()
            {
                match sample(pid) {
                    Ok(p) => samples.push(Sample {
                        t: (now - base).as_secs_f64(),
                        rss_kb: p.rss_kb,
                        fds: p.fds,
                        client_open: shared.open.load(Ordering::Relaxed),
                    }),
                    Err(e) => {
                        eprintln!("loadgen: the server is gone: {e}");
                        server_gone = Some(e);
                    }
                }
            }
        }
        let mut total = Report::default();
        for h in handles {
            match h.join() {
                Ok(Ok(r)) => total.merge(r),
                Ok(Err(e)) => return Err(format!("worker: {e}")),
                Err(_) => return Err("a worker panicked".to_string()),
            }
        }
        Ok(total)
    })?;
    let ended = base.elapsed().as_secs_f64();
    minutes.push((
        shared.connects.load(Ordering::Relaxed),
        shared.idle_closes.load(Ordering::Relaxed),
    ));

    // Descriptors back to where they started, once the server has seen
    // every close.
    let mut end = None;
    if let Some(pid) = a.server_pid
        && server_gone.is_none()
    {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            match sample(pid) {
                Ok(p) => {
                    end = Some(p);
                    if start.is_some_and(|s| p.fds <= s.fds) || Instant::now() >= until {
                        break;
                    }
                }
                Err(e) => {
                    server_gone = Some(e);
                    break;
                }
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    Ok(print(
        a,
        &report,
        &samples,
        &minutes,
        start,
        end,
        server_gone,
        ended,
    ))
}

#[allow(clippy::too_many_arguments)]
fn print(
    a: &Args,
    r: &Report,
    samples: &[Sample],
    minutes: &[(u64, u64)],
    start: Option<ServerSample>,
    end: Option<ServerSample>,
    server_gone: Option<String>,
    ended: f64,
) -> bool {
    let d = a.duration.as_secs_f64();
    // Per minute.
    println!(
        "{:>6} {:>9} {:>11} {:>10} {:>10} {:>9} {:>9}",
        "minute", "connects", "idle_closes", "rss_max_kB", "rss_min_kB", "fds_max", "open_max"
    );
    let mut prev = (0, 0);
    for (m, &(c, i)) in minutes.iter().enumerate() {
        let lo = m as f64 * 60.0;
        let hi = lo + 60.0;
        let in_m: Vec<&Sample> = samples.iter().filter(|s| s.t >= lo && s.t < hi).collect();
        println!(
            "{:>6} {:>9} {:>11} {:>10} {:>10} {:>9} {:>9}",
            m + 1,
            c - prev.0,
            i - prev.1,
            or_na(in_m.iter().map(|s| s.rss_kb).max()),
            or_na(in_m.iter().map(|s| s.rss_kb).min()),
            or_na(in_m.iter().map(|s| s.fds).max()),
            or_na(in_m.iter().map(|s| s.client_open).max()),
        );
        prev = (c, i);
    }

    let window = |lo: f64, hi: f64| {
        samples
            .iter()
            .filter(move |s| s.t >= lo * d && s.t < hi * d)
    };
    let rss_ref = window(0.2, 0.5).map(|s| s.rss_kb).max();
    let rss_last = window(0.5, 1.0).map(|s| s.rss_kb).max();
    let fds_ref = window(0.2, 0.5).map(|s| s.fds).max();
    let fds_last = window(0.5, 1.0).map(|s| s.fds).max();
    let flat_checked = a.server_pid.is_some() && a.duration >= FLAT_MIN;
    let flat = |reference: Option<u64>, last: Option<u64>, tol: f64| -> String {
        if !flat_checked {
            return "skipped".into();
        }
        match (reference, last) {
            (Some(x), Some(y)) if y as f64 <= x as f64 * (1.0 + tol) => "yes".into(),
            (Some(_), Some(_)) => "no".into(),
            _ => "no samples".into(),
        }
    };
    let rss_flat = flat(rss_ref, rss_last, a.rss_tol);
    let fds_flat = flat(fds_ref, fds_last, a.fd_tol);
    let fds_back = match (start, end) {
        (Some(s), Some(e)) if e.fds <= s.fds => "yes",
        (Some(_), Some(_)) => "no",
        _ => "NA",
    };

    let mut late = r.lateness_ms.clone();
    late.sort_unstable_by(f64::total_cmp);
    let kv = |k: &str, v: String| println!("{k}={v}");
    kv("conns", a.conns.to_string());
    kv("threads", a.threads.to_string());
    kv("idle_ms", a.idle.as_millis().to_string());
    kv("duration_s", format!("{d}"));
    kv("run_s", format!("{ended:.1}"));
    kv("connects", r.connects.to_string());
    for (i, k) in KINDS.iter().enumerate() {
        kv(
            &format!("sessions_{}", k.replace('-', "_")),
            r.sessions[i].to_string(),
        );
    }
    kv("connect_retries", r.connect_retries.to_string());
    kv("lines_sent", r.lines_sent.to_string());
    kv("lines_echoed", r.lines_echoed.to_string());
    kv("resets_sent", r.resets_sent.to_string());
    kv("client_closes", r.client_closes.to_string());
    kv("half_closes_answered", r.half_closes_answered.to_string());
    kv("idle_closes", r.idle_closes.to_string());
    kv(
        "idle_closes_all",
        (r.idle_closes + r.idle_closes_busy).to_string(),
    );
    for (i, k) in KINDS.iter().enumerate() {
        if r.idle_closes_by_kind[i] > 0 {
            kv(
                &format!("idle_closes_{}", k.replace('-', "_")),
                r.idle_closes_by_kind[i].to_string(),
            );
        }
    }
    kv("lateness_p50_ms", ms3(percentile(&late, 50.0)));
    kv("lateness_p99_ms", ms3(percentile(&late, 99.0)));
    kv("lateness_max_ms", ms3(late.last().copied()));
    kv("margin_min_ms", ms3(r.margin_min_ms));
    kv("late_ms", a.late_ms.to_string());
    kv("late_closes", r.late_closes.to_string());
    kv(
        "early_within_tolerance",
        r.early_within_tolerance.to_string(),
    );
    kv("early_beyond_1ms", r.early_beyond_1ms.to_string());
    kv("early_tolerance_ms", a.early_tolerance_ms.to_string());
    kv("early_closes", r.early_closes.to_string());
    kv(
        "unexpected_idle_closes",
        r.unexpected_idle_closes.to_string(),
    );
    kv("idle_closes_busy", r.idle_closes_busy.to_string());
    kv("client_behind", r.client_behind.to_string());
    kv("server_behind", r.server_behind.to_string());
    let mut age = r.unread_line_age_ms.clone();
    age.sort_unstable_by(f64::total_cmp);
    kv("unread_line_age_p50_ms", ms3(percentile(&age, 50.0)));
    kv("unread_line_age_max_ms", ms3(age.last().copied()));
    kv("lost_echoes_excused", r.lost_echoes_excused.to_string());
    kv(
        "client_lag_max_ms",
        format!("{:.1}", r.client_lag_max.as_secs_f64() * 1e3),
    );
    kv("client_lag_over_100ms", r.client_lag_over_100ms.to_string());
    kv("corrupt_echoes", r.corrupt_echoes.to_string());
    kv("lost_echoes", r.lost_echoes.to_string());
    kv("closed_without_notice", r.closed_without_notice.to_string());
    kv("reset_after_notice", r.reset_after_notice.to_string());
    kv("not_closed", r.not_closed.to_string());
    kv("connect_failures", r.connect_failures.to_string());
    kv("server_samples", samples.len().to_string());
    kv("server_rss_start_kb", or_na(start.map(|s| s.rss_kb)));
    kv("server_rss_ref_max_kb", or_na(rss_ref));
    kv("server_rss_last_half_max_kb", or_na(rss_last));
    kv("server_rss_end_kb", or_na(end.map(|s| s.rss_kb)));
    kv("server_fds_start", or_na(start.map(|s| s.fds)));
    kv("server_fds_ref_max", or_na(fds_ref));
    kv("server_fds_last_half_max", or_na(fds_last));
    kv("server_fds_end", or_na(end.map(|s| s.fds)));
    kv("rss_flat", rss_flat.clone());
    kv("fds_flat", fds_flat.clone());
    kv("fds_back", fds_back.into());
    kv(
        "server_alive",
        match (&server_gone, a.server_pid) {
            (_, None) => "NA".into(),
            (None, _) => "yes".into(),
            (Some(_), _) => "no".into(),
        },
    );
    kv("violations", r.violations().to_string());

    for m in &r.messages {
        eprintln!("violation: {m}");
    }
    if r.messages_dropped > 0 {
        eprintln!("violation: ... and {} more", r.messages_dropped);
    }
    let mut why = Vec::new();
    if r.violations() > 0 {
        why.push(format!("{} violations", r.violations()));
    }
    if let Some(e) = server_gone {
        why.push(format!("server gone: {e}"));
    }
    if rss_flat == "no" || rss_flat == "no samples" {
        why.push(format!("RSS not flat ({rss_flat})"));
    }
    if fds_flat == "no" || fds_flat == "no samples" {
        why.push(format!("descriptors not flat ({fds_flat})"));
    }
    if fds_back == "no" {
        why.push("descriptors not back to their start".into());
    }
    if r.connects == 0 {
        why.push("no connection".into());
    }
    if why.is_empty() {
        println!("soak: PASS");
        true
    } else {
        println!("soak: FAIL ({})", why.join("; "));
        false
    }
}

/// An `idle timeout` with data the server had been sent and not read (a
/// complete line, or a half-close's FIN), `age` ms old at the close. A
/// server behind by about that much could not have read it (its timers
/// run before its poll): within L, `server_behind`, with the age; older,
/// it was not read at all, behind or not: a violation (`what` says which).
fn unread_at_close(r: &mut Report, late_ms: f64, age: f64, what: impl FnOnce() -> String) {
    if age > late_ms {
        r.unexpected_idle_closes += 1;
        r.violation(what());
    } else {
        r.server_behind += 1;
        r.unread_line_age_ms.push(age);
    }
}
