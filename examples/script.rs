//! Runs a timer script and prints its lines.
//!
//! ```text
//! cargo run --release --example script -- [--virtual] FILE.tl
//! ```
//!
//! Exit status: 0 after a run, 2 for a script that does not parse (with
//! `FILE:LINE:COL: message` on stderr), a file that cannot be read
//! (`FILE: cannot read: ...`) or a bad command line, 1 if the loop fails.

use std::io::Write;
use std::process::ExitCode;

use timerloop::EventLoop;
use timerloop::script::{parse, run};

fn main() -> ExitCode {
    let mut virtual_clock = false;
    let mut file = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--virtual" => virtual_clock = true,
            _ if file.is_none() && !arg.starts_with("--") => file = Some(arg),
            _ => {
                eprintln!("usage: script [--virtual] FILE.tl");
                return ExitCode::from(2);
            }
        }
    }
    let Some(file) = file else {
        eprintln!("usage: script [--virtual] FILE.tl");
        return ExitCode::from(2);
    };
    let src = match std::fs::read(&file).map(String::from_utf8) {
        Ok(Ok(s)) => s,
        Ok(Err(_)) => {
            eprintln!("{file}: cannot read: invalid UTF-8");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("{file}: cannot read: {e}");
            return ExitCode::from(2);
        }
    };
    let script = match parse::parse(&file, &src) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut lp = if virtual_clock {
        EventLoop::with_virtual_clock()
    } else {
        EventLoop::new()
    };
    let stdout = std::io::stdout();
    let result = run::run(&script, &mut lp, move |line| {
        let mut out = stdout.lock();
        // A closed stdout (e.g. `| head`) is not the loop's failure.
        let _ = writeln!(out, "{line}");
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{file}: {e}");
            ExitCode::from(1)
        }
    }
}
