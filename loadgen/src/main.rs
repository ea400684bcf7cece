//! `loadgen`: load and behaviour checks for the idle-timeout line-echo
//! servers of issue 11 (the Rust `examples/idle_server.rs` and its Node
//! twin `bench/node/idle_server.js`; the protocol is at the top of the
//! latter).
//!
//! ```text
//! loadgen --addr 127.0.0.1:PORT [--conns C=10000] [--active-frac F=0.1]
//!         [--period-ms P=100] [--duration-s D=10] [--idle-ms MS=1000]
//!         [--server-pid PID] [--connect-rate R] [--connect-window W=256]
//!         [--threads T=cores] [--late-ms L=50] [--early-tolerance-ms E=1]
//! loadgen --soak --addr 127.0.0.1:PORT [...]
//! ```
//!
//! With `--soak`, it is instead the faulty-network soak of issue 14 (peers
//! that reset, half-close, stall mid-line, trickle bytes, stay silent, with
//! churn, and the server's RSS and descriptors sampled): see `soak.rs` for
//! its options, checks and output, and `bench/soak-net`, which runs it.
//! The rest of this page is about the load mode.
//!
//! # What it does
//!
//! It raises its soft `RLIMIT_NOFILE` to the hard limit (and stops with a
//! message if C connections cannot fit), then opens C connections to the
//! server from T threads, each a mio poll loop owning every T-th
//! connection. Connects are paced so that the server's listen backlog
//! never overflows (an overflow costs a 1 s SYN retransmit and would
//! distort everything): at most W connections are at once connecting or
//! waiting for the echo of their first line (the echo proves that the
//! server accepted them), optionally also at most R connects per second.
//! A refused connect (ECONNREFUSED, EAGAIN, a 3 s timeout) is retried up to
//! 5 attempts.
//!
//! round(C·F) connections, spread evenly over the ids, are *active*; the
//! others are *idle*. Every connection sends one line as soon as it is
//! connected; idle ones then send nothing more. Active ones then send one
//! line every P ms (each with its own phase in the period), starting from
//! their connect, so that they stay alive however long the connect phase
//! takes. A line is `c<id> s<seq> t<µs since loadgen start>\n`.
//!
//! **D**, the measured window, starts when the last connection is
//! established (t0) and lasts D seconds. At t0 + D active connections stop
//! sending; from then on they are idle too. The generator then waits until
//! the server has closed every connection, or MS + 1 s.
//!
//! # What is measured
//!
//! * `lines_per_s` — echoes received during D, divided by D.
//! * `echo_p50_us`, `echo_p99_us`, `echo_max_us` — echo latency, from
//!   queueing a line (just before it is written) to receiving its echo
//!   complete, for the lines sent during D.
//! * Idle-close timing, for every connection the server closes after its
//!   last line (idle ones, and active ones after D). Let `sent` be the
//!   instant just before the write() that wrote the last line's last byte,
//!   `echo` the arrival of its echo and `close` the arrival of
//!   `idle timeout\n`. The server refreshed its timer when it read the
//!   line, at some instant in [sent, echo], so:
//!   - `margin = close − sent − MS` is a valid lower bound check: a correct
//!     server has margin ≥ 0 (its timer started after `sent`);
//!   - `lateness = close − echo − MS` is the lateness reported
//!     (`lateness_p50_ms`, `lateness_p99_ms`, `lateness_max_ms`): the timer
//!     started before `echo`, so `lateness` never exceeds the server's true
//!     lateness plus the delivery of its goodbye; it can be slightly
//!     negative without anything being wrong (by at most the echo's own
//!     round trip; `margin` is the early check).
//! * `connect_ms` — from loadgen start to t0; `peak_open` — the most
//!   connections open at once (established, not yet closed), client side.
//!   Idle connections are closed MS after their line, so with a connect
//!   phase longer than MS, `peak_open` (and the server's `max_open`) stays
//!   below C: it is bounded by about MS × the server's accept rate.
//! * With `--server-pid`: the server's `VmHWM` (peak RSS, kB) and
//!   `VmRSS` from `/proc/PID/status`, and its CPU time (utime + stime from
//!   `/proc/PID/stat`, ticks → ms via `sysconf(_SC_CLK_TCK)`), sampled when
//!   the run ends (`server_cpu_ms`, its kernel part `server_sys_ms`,
//!   `server_rss_peak_kb`,
//!   `server_rss_end_kb`), plus the CPU it used during D alone
//!   (`server_cpu_ms_d`) and its `VmRSS` when loadgen started
//!   (`server_rss_start_kb`, the baseline). `server_rss_per_conn_b` =
//!   VmHWM / C in bytes (baseline included, C not `peak_open`: a rough
//!   figure; bench/server-compare also shows the marginal one).
//!
//! # What is checked (each failure is a violation: printed on stderr,
//! counted, and the exit status is 1)
//!
//! * Echoes are exact and in order: every line received is the oldest
//!   line not yet echoed, byte for byte (`corrupt_echoes`); a line never
//!   echoed before the server closes is lost (`lost_echoes`).
//! * Every close is an idle close: `idle timeout\n`, then EOF, nothing
//!   after it (`closed_without_notice`; data after it is corrupt); every
//!   connection is closed by the end of the wait (`not_closed`).
//! * No active connection is closed while it still sends every P < MS
//!   (`active_closed`; P < MS is required at startup).
//! * Not early: `margin ≥ −E` (`early_closes`). E, 1 ms by default, is the
//!   granularity of the servers' clocks: libuv and timerloop keep loop time
//!   in whole milliseconds rounded down and start a timer from the loop's
//!   cached time, which can be up to ~1 ms (plus the time since the poll
//!   returned) before the instant the line was read. Closes with
//!   −E ≤ margin < 0 are counted (`early_within_tolerance`), not flagged;
//!   `margin_min_ms` is the smallest margin seen.
//! * Not late: `lateness ≤ L` (50 ms by default; `late_closes`).
//! * Every connect succeeds within 5 attempts (`connect_failures`).
//!
//! `max_send_gap_ms` is the longest interval between two sends of one
//! active connection: well above P means that the generator itself fell
//! behind (the machine is overloaded), which would make its numbers
//! pessimistic.
//!
//! # Output
//!
//! One `key=value` per line on stdout, always the same keys in the same
//! order (see [`print_results`]); `NA` where there is no sample. Progress
//! and violations go to stderr. Exit status: 0 no violation, 1 violations,
//! 2 usage or setup error.

mod flags;
mod soak;
mod stats;
mod sys;
mod worker;

use std::net::SocketAddr;

use stats::{ms3, or_na, percentile};
use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use flags::Flags;
use worker::{Config, Plan, Report, Shared};

const USAGE: &str = "usage: loadgen --addr 127.0.0.1:PORT [--conns C=10000] \
[--active-frac F=0.1] [--period-ms P=100] [--duration-s D=10] [--idle-ms MS=1000] \
[--server-pid PID] [--connect-rate R] [--connect-window W=256] [--threads T] \
[--late-ms L=50] [--early-tolerance-ms E=1]";

/// Descriptors kept free beside the connections (stdio, epoll, ...).
const SPARE_FDS: u64 = 64;

#[derive(Debug)]
struct Args {
    addr: SocketAddr,
    conns: usize,
    active_frac: f64,
    period_ms: u64,
    duration_s: f64,
    idle_ms: u64,
    server_pid: Option<u32>,
    connect_rate: Option<f64>,
    connect_window: usize,
    threads: usize,
    late_ms: f64,
    early_tolerance_ms: f64,
}

fn parse_args() -> Result<Args, String> {
    let mut addr = None;
    let mut a = Args {
        addr: "127.0.0.1:0".parse().expect("literal"),
        conns: 10_000,
        active_frac: 0.1,
        period_ms: 100,
        duration_s: 10.0,
        idle_ms: 1000,
        server_pid: None,
        connect_rate: None,
        connect_window: 256,
        threads: thread::available_parallelism().map_or(2, |n| n.get()),
        late_ms: 50.0,
        early_tolerance_ms: 1.0,
    };
    let mut flags = Flags::new(std::env::args().skip(1));
    while let Some(f) = flags.next_flag()? {
        match f.key.as_str() {
            "--addr" => addr = Some(flags.value::<SocketAddr>(&f)?),
            "--conns" => a.conns = flags.value(&f)?,
            "--active-frac" => a.active_frac = flags.value(&f)?,
            "--period-ms" => a.period_ms = flags.value(&f)?,
            "--duration-s" => a.duration_s = flags.value(&f)?,
            "--idle-ms" => a.idle_ms = flags.value(&f)?,
            "--server-pid" => a.server_pid = Some(flags.value(&f)?),
            "--connect-rate" => a.connect_rate = Some(flags.value(&f)?),
            "--connect-window" => a.connect_window = flags.value(&f)?,
            "--threads" => a.threads = flags.value(&f)?,
            "--late-ms" => a.late_ms = flags.value(&f)?,
            "--early-tolerance-ms" => a.early_tolerance_ms = flags.value(&f)?,
            _ => return Err(format!("unknown argument {:?}", f.arg)),
        }
    }
    a.addr = addr.ok_or("--addr is required")?;
    if a.conns == 0 {
        return Err("--conns must be at least 1".into());
    }
    if !(0.0..=1.0).contains(&a.active_frac) {
        return Err("--active-frac must be in [0, 1]".into());
    }
    if a.period_ms == 0 || a.idle_ms == 0 {
        return Err("--period-ms and --idle-ms must be at least 1".into());
    }
    if a.period_ms >= a.idle_ms {
        return Err(format!(
            "--period-ms ({}) must be less than --idle-ms ({}): active connections \
             must never go idle",
            a.period_ms, a.idle_ms
        ));
    }
    if !(a.duration_s > 0.0 && a.duration_s.is_finite()) {
        return Err("--duration-s must be positive".into());
    }
    if matches!(a.connect_rate, Some(r) if !(r > 0.0 && r.is_finite())) {
        return Err("--connect-rate must be positive".into());
    }
    if a.connect_window == 0 || a.threads == 0 {
        return Err("--connect-window and --threads must be at least 1".into());
    }
    Ok(a)
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.iter().any(|a| a == "--soak") {
        return soak::main(&argv);
    }
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("loadgen: {msg}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Err(msg) = sys::raise_nofile(args.conns as u64 + SPARE_FDS) {
        eprintln!("loadgen: {msg}");
        return ExitCode::from(2);
    }
    if let Some(pid) = args.server_pid
        && let Err(msg) = sys::sample(pid)
    {
        eprintln!("loadgen: --server-pid {pid}: {msg}");
        return ExitCode::from(2);
    }
    match run(&args) {
        Ok(report) if report.violations() == 0 => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(msg) => {
            eprintln!("loadgen: {msg}");
            ExitCode::from(2)
        }
    }
}

/// Number of active connections, and whether connection `id` is one:
/// ids where ⌊id·A/C⌋ steps up, i.e. A of them spread evenly.
fn active_count(a: &Args) -> usize {
    ((a.conns as f64) * a.active_frac).round() as usize
}

fn is_active(id: usize, active: usize, conns: usize) -> bool {
    (id + 1) * active / conns != id * active / conns
}

fn run(a: &Args) -> Result<Report, String> {
    let threads = a.threads.min(a.conns);
    let active = active_count(a);
    let cfg = Config {
        addr: a.addr,
        period: Duration::from_millis(a.period_ms),
        duration: Duration::from_secs_f64(a.duration_s),
        idle: Duration::from_millis(a.idle_ms),
        threads,
        late_limit_ms: a.late_ms,
        early_tolerance_ms: a.early_tolerance_ms,
    };
    let shared = Shared {
        base: Instant::now(),
        connected_workers: AtomicUsize::new(0),
        t0: OnceLock::new(),
        open: AtomicUsize::new(0),
        peak_open: AtomicUsize::new(0),
    };
    let server_start = a.server_pid.map(sys::sample).and_then(Result::ok);
    let plans: Vec<Plan> = (0..threads)
        .map(|w| Plan {
            conns: (w..a.conns)
                .step_by(threads)
                .map(|id| (id as u32, is_active(id, active, a.conns)))
                .collect(),
            window: a.connect_window.div_ceil(threads),
            rate: a.connect_rate.map(|r| r / threads as f64),
        })
        .collect();
    eprintln!(
        "loadgen: {} connections ({active} active) to {} from {threads} threads, D = {} s, MS = {} ms",
        a.conns, a.addr, a.duration_s, a.idle_ms
    );

    let (report, cpu_d) = thread::scope(|s| {
        let handles: Vec<_> = plans
            .into_iter()
            .map(|plan| {
                let (cfg, shared) = (&cfg, &shared);
                s.spawn(move || worker::run(cfg, shared, plan))
            })
            .collect();

        // Sample the server's CPU at t0 and t0 + D, for its use during D.
        let mut cpu_d = None;
        if let Some(pid) = a.server_pid {
            let t0 = loop {
                if let Some(&t0) = shared.t0.get() {
                    break Some(t0);
                }
                if handles.iter().all(|h| h.is_finished()) {
                    break None;
                }
                thread::sleep(Duration::from_millis(1));
            };
            if let Some(t0) = t0 {
                let c0 = sys::sample(pid).map(|p| p.cpu_ms);
                eprintln!(
                    "loadgen: connected in {:.0} ms; measuring for {} s",
                    (t0 - shared.base).as_secs_f64() * 1e3,
                    a.duration_s
                );
                thread::sleep((t0 + cfg.duration).saturating_duration_since(Instant::now()));
                let c1 = sys::sample(pid).map(|p| p.cpu_ms);
                if let (Ok(c0), Ok(c1)) = (c0, c1) {
                    cpu_d = Some(c1.saturating_sub(c0));
                }
            }
        }

        let mut total = Report::default();
        let mut err = None;
        for h in handles {
            match h.join() {
                Ok(Ok(r)) => total.merge(r),
                Ok(Err(e)) => err = Some(format!("worker: {e}")),
                Err(_) => err = Some("a worker panicked".to_string()),
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok((total, cpu_d)),
        }
    })?;

    let server = a.server_pid.map(sys::sample);
    let ctx = RunInfo {
        active,
        threads,
        shared: &shared,
        server_start,
        server,
        cpu_d,
    };
    print_results(a, &ctx, &report);
    for m in &report.messages {
        eprintln!("violation: {m}");
    }
    if report.messages_dropped > 0 {
        eprintln!(
            "violation: ... and {} more (counts above are complete)",
            report.messages_dropped
        );
    }
    Ok(report)
}

/// What `print_results` needs beside the arguments and the merged report.
struct RunInfo<'a> {
    active: usize,
    threads: usize,
    shared: &'a Shared,
    /// The server when loadgen started (its `VmRSS` is the baseline).
    server_start: Option<sys::ProcSample>,
    /// The server when the run ended.
    server: Option<Result<sys::ProcSample, String>>,
    /// Server CPU ms during D.
    cpu_d: Option<u64>,
}

/// Prints the results, one `key=value` per line, in this order (units in
/// the key; `NA` when there is no sample or no `--server-pid`):
///
/// ```text
/// conns active threads idle_ms period_ms duration_s connect_ms peak_open
/// lines_sent lines_echoed lines_per_s echo_p50_us echo_p99_us echo_max_us
/// idle_closes lateness_p50_ms lateness_p99_ms lateness_max_ms margin_min_ms
/// early_closes early_within_tolerance late_closes active_closed
/// lost_echoes corrupt_echoes closed_without_notice not_closed
/// connect_failures connect_retries max_send_gap_ms
/// server_rss_start_kb server_rss_peak_kb server_rss_end_kb server_rss_per_conn_b
/// server_cpu_ms server_sys_ms server_cpu_ms_d violations
/// ```
fn print_results(a: &Args, info: &RunInfo, r: &Report) {
    let shared = info.shared;
    let mut lat = r.latencies_us.clone();
    lat.sort_unstable();
    let mut late = r.lateness_ms.clone();
    late.sort_unstable_by(f64::total_cmp);
    let margin_min = r.margins_ms.iter().copied().min_by(f64::total_cmp);
    let connect_ms = shared
        .t0
        .get()
        .map(|t| format!("{:.0}", (*t - shared.base).as_secs_f64() * 1e3));

    let server = match &info.server {
        Some(Ok(p)) => Some(*p),
        Some(Err(e)) => {
            eprintln!("loadgen: server sample: {e}");
            None
        }
        None => None,
    };

    let kv = |k: &str, v: String| println!("{k}={v}");
    kv("conns", a.conns.to_string());
    kv("active", info.active.to_string());
    kv("threads", info.threads.to_string());
    kv("idle_ms", a.idle_ms.to_string());
    kv("period_ms", a.period_ms.to_string());
    kv("duration_s", a.duration_s.to_string());
    kv("connect_ms", or_na(connect_ms));
    kv(
        "peak_open",
        shared.peak_open.load(Ordering::Relaxed).to_string(),
    );
    kv("lines_sent", r.lines_sent.to_string());
    kv("lines_echoed", r.lines_echoed.to_string());
    kv(
        "lines_per_s",
        format!("{:.0}", r.echoed_in_d as f64 / a.duration_s),
    );
    kv("echo_p50_us", or_na(percentile(&lat, 50.0)));
    kv("echo_p99_us", or_na(percentile(&lat, 99.0)));
    kv("echo_max_us", or_na(lat.last().copied()));
    kv("idle_closes", r.idle_closes.to_string());
    kv("lateness_p50_ms", ms3(percentile(&late, 50.0)));
    kv("lateness_p99_ms", ms3(percentile(&late, 99.0)));
    kv("lateness_max_ms", ms3(late.last().copied()));
    kv("margin_min_ms", ms3(margin_min));
    kv("early_closes", r.early_closes.to_string());
    kv(
        "early_within_tolerance",
        r.early_within_tolerance.to_string(),
    );
    kv("late_closes", r.late_closes.to_string());
    kv("active_closed", r.active_closed.to_string());
    kv("lost_echoes", r.lost_echoes.to_string());
    kv("corrupt_echoes", r.corrupt_echoes.to_string());
    kv("closed_without_notice", r.closed_without_notice.to_string());
    kv("not_closed", r.not_closed.to_string());
    kv("connect_failures", r.connect_failures.to_string());
    kv("connect_retries", r.connect_retries.to_string());
    kv(
        "max_send_gap_ms",
        format!("{:.3}", r.max_send_gap.as_secs_f64() * 1e3),
    );
    kv(
        "server_rss_start_kb",
        or_na(info.server_start.map(|p| p.rss_kb)),
    );
    kv("server_rss_peak_kb", or_na(server.map(|p| p.hwm_kb)));
    kv("server_rss_end_kb", or_na(server.map(|p| p.rss_kb)));
    kv(
        "server_rss_per_conn_b",
        or_na(server.map(|p| p.hwm_kb * 1024 / a.conns as u64)),
    );
    kv("server_cpu_ms", or_na(server.map(|p| p.cpu_ms)));
    kv("server_sys_ms", or_na(server.map(|p| p.sys_ms)));
    kv("server_cpu_ms_d", or_na(info.cpu_d));
    kv("violations", r.violations().to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actives_are_spread_and_counted() {
        for (conns, active) in [(10, 1), (10_000, 1000), (7, 3), (5, 5), (5, 0)] {
            let ids: Vec<usize> = (0..conns)
                .filter(|&i| is_active(i, active, conns))
                .collect();
            assert_eq!(ids.len(), active, "{conns} {active}");
        }
        let ids: Vec<usize> = (0..100).filter(|&i| is_active(i, 10, 100)).collect();
        assert_eq!(ids, [9, 19, 29, 39, 49, 59, 69, 79, 89, 99]);
    }
}
