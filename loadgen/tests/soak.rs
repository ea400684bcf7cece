//! The faulty-network soak, short: `loadgen --soak` with 500 slots for
//! 8 s (idle time 1 s) against `examples/idle_server`, callbacks and
//! tasks. Every fault kind (resets, half-closes, mid-line stalls, 1-byte
//! trickles, silent connects, active clients) runs a few thousand times;
//! the run must PASS (exact echoes, no early or unexpected idle close, no
//! connection left open, the server's descriptors back to their start)
//! and the server's stats line must account for every connection
//! loadgen made. About 10 s per mode; timing checks have wide margins
//! (actives send every 200 ms against a 1,000 ms idle time; lateness is
//! reported, not checked).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Builds `examples/idle_server` in this test's profile (cargo does
/// nothing if it is fresh) and returns its path.
fn server_binary() -> PathBuf {
    let mut dir = std::env::current_exe().unwrap();
    dir.pop(); // the test binary
    if dir.ends_with("deps") {
        dir.pop();
    }
    let release = dir.ends_with("release");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(&root).args([
        "build",
        "--quiet",
        "--example",
        "idle_server",
        "-p",
        "timerloop",
    ]);
    if release {
        cmd.arg("--release");
    }
    assert!(
        cmd.status().unwrap().success(),
        "building idle_server failed"
    );
    dir.join("examples").join("idle_server")
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn kv<'a>(out: &'a str, key: &str) -> &'a str {
    out.split_whitespace()
        .filter_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .next_back()
        .unwrap_or_else(|| panic!("no {key}= in {out}"))
}

fn soak(server: &PathBuf, extra: &[&str]) {
    let mut child = Command::new(server)
        .args(["--port", "0", "--idle-ms", "1000"])
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let pid = child.id();
    let server = Server(child);
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let port = line
        .trim()
        .strip_prefix("listening on 127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();

    let lg = Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .args(["--soak", "--addr", &format!("127.0.0.1:{port}")])
        .args(["--conns", "500", "--duration-s", "8", "--idle-ms", "1000"])
        .args(["--server-pid", &pid.to_string()])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&lg.stdout).into_owned();
    let errors = String::from_utf8_lossy(&lg.stderr);
    assert!(
        lg.status.success() && report.contains("soak: PASS"),
        "{extra:?}: {report}\n{errors}"
    );
    // Every fault kind really ran, many times.
    for key in [
        "sessions_active",
        "sessions_reset",
        "sessions_half_close",
        "sessions_stall",
        "sessions_trickle",
        "sessions_silent",
        "half_closes_answered",
        "idle_closes_stall",
        "idle_closes_trickle",
        "resets_sent",
    ] {
        let n: u64 = kv(&report, key).parse().unwrap();
        assert!(n >= 100, "{extra:?}: {key}={n}\n{report}");
    }

    // SIGINT: the stats line accounts for every connection loadgen made.
    let ok = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = out.read_line(&mut line);
        let _ = tx.send(line);
    });
    let stats = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the server did not answer SIGINT within 30 s");
    let mut server = server;
    assert!(server.0.wait().unwrap().success());
    let num = |s: &str, k: &str| -> u64 { kv(s, k).parse().unwrap() };
    let accepted = num(&stats, "accepted");
    assert_eq!(
        accepted,
        num(&stats, "closed_idle") + num(&stats, "closed_by_peer"),
        "{extra:?}: {stats}"
    );
    assert_eq!(accepted, num(&report, "connects"), "{extra:?}: {stats}");
    assert_eq!(
        num(&stats, "closed_idle"),
        num(&report, "idle_closes_all"),
        "{extra:?}: {stats}"
    );
}

#[test]
fn faulty_peers_callbacks_and_tasks() {
    let server = server_binary();
    soak(&server, &[]);
    soak(&server, &["--async"]);
}
