//! Helpers shared by the host's integration tests.

// Each test binary compiles this module and uses only some of it.
#![allow(dead_code)]

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// How many runs a real-clock program gets before a difference counts.
pub const REAL_CLOCK_TRIES: usize = 3;

/// Runs `run` until `same` accepts its output, at most
/// [`REAL_CLOCK_TRIES`] runs in all, and returns the last output.
///
/// The programs run on the real clock, where a machine stalled for longer
/// than the gap between two timers can reorder them (node too). Such a run
/// is tried again, as tests/conformance.rs does for its real-clock runs; a
/// real difference fails every run.
pub fn run_on_real_clock(
    mut run: impl FnMut() -> Output,
    same: impl Fn(&Output) -> bool,
) -> Output {
    let mut out = run();
    for _ in 1..REAL_CLOCK_TRIES {
        if same(&out) {
            break;
        }
        out = run();
    }
    out
}

/// What [`run`] saw: the exit status and both streams.
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Writes `program` to `name` in this test binary's own temporary folder
/// (one per binary and process); returns its path.
pub fn write_program(name: &str, program: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "tljs-{}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, program).unwrap();
    file
}

/// Runs `program` (written to a file) with `cmd` and `args`, killed (and
/// the test failed) after 60 s.
pub fn run(cmd: &str, args: &[&str], program: &str) -> Run {
    let file = write_program(
        &format!("p{}.js", program.len() ^ program.as_bytes()[0] as usize),
        program,
    );
    let mut child = Command::new(cmd)
        .args(args)
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {cmd}: {e}"));
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).map(|_| s)
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).map(|_| s)
    });
    let status = wait_for(
        &mut child,
        &format!("{cmd} on:\n{program}\n"),
        Duration::from_secs(60),
    );
    let _ = std::fs::remove_file(&file);
    Run {
        status: status
            .code()
            .unwrap_or_else(|| panic!("{cmd} died of a signal ({status}) on:\n{program}")),
        stdout: o.join().unwrap().unwrap(),
        stderr: e.join().unwrap().unwrap(),
    }
}

/// Waits for `child` to end, at most `limit`: past it, kills it and fails
/// the test ("WHAT hung").
pub fn wait_for(child: &mut Child, what: &str, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{what} hung");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `node` is installed, for the checks against it.
pub fn node_available() -> bool {
    Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}
