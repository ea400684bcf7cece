//! The idle-timeout server example (issue 11, item 6) on real sockets and
//! the real clock: 100 connections, idle 200 ms, in each of its modes
//! (callbacks, tasks, two threads). Behaviour is asserted, never speed:
//! every echo is exact, no connection is closed before it has been idle
//! for 200 ms, none is left open (generous upper bound), an active one is
//! never closed, and the stats line on SIGINT counts them all.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const IDLE_MS: u64 = 200;
const CONNS: usize = 100;
const ACTIVE: usize = 20;

/// The example's binary, which `cargo test` builds beside the tests.
fn server_binary() -> PathBuf {
    let mut p = std::env::current_exe().unwrap();
    p.pop(); // the test binary
    if p.ends_with("deps") {
        p.pop();
    }
    let bin = p.join("examples").join("idle_server");
    if !bin.exists() {
        let profile = if p.ends_with("release") {
            "--release"
        } else {
            "--quiet"
        };
        let ok = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--example", "idle_server", profile])
            .status()
            .unwrap()
            .success();
        assert!(ok, "building the example failed");
    }
    bin
}

struct Server {
    child: Child,
    /// Its stdout, after the first line (taken by `stop`).
    out: Option<BufReader<std::process::ChildStdout>>,
    port: u16,
}

fn start(extra: &[&str]) -> Server {
    let mut child = Command::new(server_binary())
        .args(["--port", "0", "--idle-ms", &IDLE_MS.to_string()])
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let port = line
        .trim()
        .strip_prefix("listening on 127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap();
    Server {
        child,
        out: Some(out),
        port,
    }
}

impl Drop for Server {
    /// A failing test leaves no server behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// SIGINT, then the stats line, and exit code 0 — within 30 s: a
    /// server that ignores the signal fails the test instead of hanging it.
    fn stop(mut self) -> String {
        let ok = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let mut out = self.out.take().expect("stopped once");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = out.read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the server did not answer SIGINT within 30 s");
        let status = self.child.wait().unwrap();
        assert!(status.success(), "exit status {status}");
        line.trim().to_owned()
    }
}

/// What one client saw.
struct Seen {
    /// From its last line's echo to the server's goodbye.
    idle_for: Duration,
    /// From sending its last line to the goodbye (an upper bound of the
    /// server's idle time: the timer started after that line arrived).
    since_send: Duration,
}

/// One client: `lines` lines, one every `every`, each echoed exactly; then
/// waits for `idle timeout\n` and EOF.
fn client(port: u16, id: usize, lines: usize, every: Duration) -> Seen {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut last_echo = Instant::now();
    let mut last_send = Instant::now();
    for n in 0..lines {
        if n > 0 {
            std::thread::sleep(every);
        }
        let line = format!("client {id} line {n}\n");
        last_send = Instant::now();
        s.write_all(line.as_bytes()).unwrap();
        let mut back = String::new();
        r.read_line(&mut back).unwrap();
        last_echo = Instant::now();
        assert_eq!(back, line, "echo of client {id}");
    }
    let mut rest = String::new();
    r.read_to_string(&mut rest).unwrap();
    let now = Instant::now();
    assert_eq!(rest, "idle timeout\n", "client {id}: goodbye, then EOF");
    Seen {
        idle_for: now - last_echo,
        since_send: now - last_send,
    }
}

fn exercise(extra: &[&str]) {
    let server = start(extra);
    let port = server.port;
    let clients: Vec<_> = (0..CONNS)
        .map(|id| {
            std::thread::spawn(move || {
                if id < ACTIVE {
                    // Active: a line every 50 ms for a second, always
                    // within the idle time, so never closed meanwhile.
                    client(port, id, 20, Duration::from_millis(50))
                } else {
                    client(port, id, 1, Duration::ZERO)
                }
            })
        })
        .collect();
    for (id, c) in clients.into_iter().enumerate() {
        let seen = c.join().unwrap_or_else(|_| panic!("client {id} failed"));
        let idle = Duration::from_millis(IDLE_MS);
        // The loop's clock counts whole milliseconds, read rounded down
        // (libuv's, and so Node's): a timer started up to 1 ms after a
        // millisecond began counts from that millisecond, and may fire up
        // to 1 ms of real time before its duration. Node does the same.
        let resolution = Duration::from_millis(1);
        assert!(
            seen.since_send + resolution >= idle,
            "client {id} closed early: {:?} after its last line",
            seen.since_send
        );
        assert!(
            seen.idle_for < idle + Duration::from_secs(5),
            "client {id} closed far too late: {:?}",
            seen.idle_for
        );
    }
    let stats = server.stop();
    assert_eq!(
        stats,
        format!("accepted={CONNS} closed_idle={CONNS} closed_by_peer=0 max_open={CONNS}")
    );
}

#[test]
fn callbacks() {
    exercise(&[]);
}

#[test]
fn tasks() {
    exercise(&["--async"]);
}

#[test]
fn two_threads() {
    exercise(&["--threads", "2"]);
}

/// A client that closes first is counted as closed by its peer, and its
/// idle timer never fires.
#[test]
fn peers_that_leave_are_counted() {
    for extra in [&[][..], &["--async"][..]] {
        let server = start(extra);
        for _ in 0..3 {
            let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
            s.write_all(b"bye\n").unwrap();
            let mut back = [0; 4];
            s.read_exact(&mut back).unwrap();
            assert_eq!(&back, b"bye\n");
        }
        std::thread::sleep(Duration::from_millis(IDLE_MS + 300));
        let stats = server.stop();
        // How many were open at once depends on how fast the server saw
        // each close; the rest does not.
        assert!(
            stats.starts_with("accepted=3 closed_idle=0 closed_by_peer=3 max_open="),
            "{stats}"
        );
    }
}

/// A peer that half-closes (shuts down its write side right after its
/// lines) gets every echo, then EOF, before any idle timeout, and is
/// counted as closed by its peer. The callback server used to close at
/// the EOF it read together with the lines, dropping their echoes
/// (found by the faulty-network soak, `bench/soak-net`).
#[test]
fn half_close_gets_its_echoes_then_eof() {
    for extra in [&[][..], &["--async"][..]] {
        let server = start(extra);
        for _ in 0..20 {
            let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            let t = Instant::now();
            // One write, so that the lines and the FIN arrive together.
            s.write_all(b"one\ntwo\nthree\nunfinished").unwrap();
            s.shutdown(std::net::Shutdown::Write).unwrap();
            let mut got = String::new();
            s.read_to_string(&mut got).unwrap();
            assert_eq!(got, "one\ntwo\nthree\n", "{extra:?}");
            assert!(
                t.elapsed() < Duration::from_millis(IDLE_MS),
                "{extra:?}: closed by the idle timer, not at the half-close"
            );
        }
        let stats = server.stop();
        assert!(
            stats.starts_with("accepted=20 closed_idle=0 closed_by_peer=20 max_open="),
            "{extra:?}: {stats}"
        );
    }
}

/// The server's open descriptors (Linux: `/proc/PID/fd`).
#[cfg(target_os = "linux")]
fn open_fds(server: &Server) -> usize {
    std::fs::read_dir(format!("/proc/{}/fd", server.child.id()))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// A peer that sends and never reads its echoes fills the server's
/// buffers: the server stops reading it, the idle timer fires MS after
/// its last complete line, and the goodbye cannot be written either. It
/// gets one more idle period to take it, then the connection is dropped:
/// its descriptor comes back. (It was kept for ever in both modes, the
/// callbacks' output buffer with it.)
#[cfg(target_os = "linux")]
#[test]
fn a_peer_that_never_reads_is_dropped() {
    for extra in [&[][..], &["--async"][..]] {
        let server = start(extra);
        let before = open_fds(&server);
        let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        s.set_write_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let chunk = b"0123456789abcdef\n".repeat(1 << 10);
        let t = Instant::now();
        // Lines until both sides' buffers are full and a write blocks.
        while s.write_all(&chunk).is_ok() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "{extra:?}: writes never blocked"
            );
        }
        let sent = Instant::now();
        let deadline = sent + Duration::from_secs(10);
        while open_fds(&server) > before {
            assert!(
                Instant::now() < deadline,
                "{extra:?}: the connection is still open 10 s after the peer stopped"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // Its last line came before `sent`: the drop comes after two idle
        // periods at most from it (generous bound), never before one.
        let waited = sent.elapsed();
        assert!(
            waited < Duration::from_millis(4 * IDLE_MS + 2000),
            "{extra:?}: {waited:?}"
        );
        drop(s);
        let stats = server.stop();
        assert!(
            stats.starts_with("accepted=1 closed_idle=1 closed_by_peer=0 max_open=1"),
            "{extra:?}: {stats}"
        );
    }
}

/// A line longer than the server's limit (1 MiB) is not buffered without
/// end: the connection is dropped, counted as closed by its peer, well
/// before the idle timer.
#[test]
fn a_line_longer_than_the_limit_is_dropped() {
    for extra in [&[][..], &["--async"][..]] {
        let server = start(extra);
        let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let t = Instant::now();
        // No newline in 2 MiB; the server may drop it (and reset) before
        // all of it is written.
        let _ = s.write_all(&vec![b'x'; 2 << 20]);
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        assert!(
            got.is_empty(),
            "{extra:?}: {:?}",
            String::from_utf8_lossy(&got)
        );
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{extra:?}: not dropped"
        );
        let stats = server.stop();
        assert!(
            stats.starts_with("accepted=1 closed_idle=0 closed_by_peer=1"),
            "{extra:?}: {stats}"
        );
    }
}

/// A peer still sending when its idle timer fires (a trickle of bytes
/// that never ends a line) gets the goodbye and then, once it stops and
/// shuts its side, an orderly EOF: the server shuts its write side after
/// the goodbye and drops what arrives until the peer's EOF. Closing at
/// once, with the trickle's bytes arriving after, made the kernel answer
/// them with a reset, which the peer read as an error.
#[test]
fn a_peer_sending_after_the_goodbye_gets_an_orderly_close() {
    for extra in [&[][..], &["--async"][..]] {
        let server = start(extra);
        let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        let t = Instant::now();
        // A byte every 5 ms, never a newline: not activity. The goodbye
        // is due at IDLE_MS; the trickle goes on 100 ms past it.
        while t.elapsed() < Duration::from_millis(IDLE_MS + 100) {
            s.write_all(b"x").unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        s.shutdown(std::net::Shutdown::Write).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        let r = s.read_to_end(&mut got);
        assert!(
            r.is_ok(),
            "{extra:?}: {r:?} after {:?}",
            String::from_utf8_lossy(&got)
        );
        assert_eq!(got, b"idle timeout\n", "{extra:?}");
        let stats = server.stop();
        assert!(
            stats.starts_with("accepted=1 closed_idle=1 closed_by_peer=0"),
            "{extra:?}: {stats}"
        );
    }
}
