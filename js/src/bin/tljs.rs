//! `tljs [--max-memory MB] [--stack-size KB] FILE.js [ARGS...]`: runs a
//! Node.js timer program on timerloop, as `node FILE.js` would: the main
//! script, then the loop until nothing refed is left; exits with
//! `process.exitCode`, or 1 after an uncaught exception (printed to stderr
//! as Node prints it, less the source line). `--max-memory` limits the
//! engine's heap (an allocation past it is an uncaught `InternalError: out
//! of memory`); `--stack-size` sets the engine's stack limit.

use std::process::ExitCode;

use timerloop::EventLoop;
use timerloop_js::{Options, QuickJsHost};

const USAGE: &str = "usage: tljs [--max-memory MB] [--stack-size KB] FILE.js [ARGS...]";

fn main() -> ExitCode {
    let mut args = std::env::args();
    let exe = args.next().unwrap_or_else(|| "tljs".into());
    let mut options = Options {
        exit_process: true,
        ..Options::default()
    };
    let file = loop {
        let Some(a) = args.next() else {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        };
        let (slot, unit) = match a.as_str() {
            "--max-memory" => (&mut options.max_memory, 1 << 20),
            "--stack-size" => (&mut options.max_stack, 1 << 10),
            _ => break a,
        };
        match args.next().and_then(|n| n.parse::<usize>().ok()) {
            Some(n) if n > 0 => *slot = Some(n.saturating_mul(unit)),
            _ => {
                eprintln!("tljs: {a} needs a positive whole number\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    };
    let path = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone().into());
    let name = path.display().to_string();
    let source = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tljs: cannot read {file}: {e}");
            return ExitCode::from(1);
        }
    };
    let exe = std::fs::canonicalize(&exe).map_or(exe, |p| p.display().to_string());
    options.argv = [exe, name.clone()].into_iter().chain(args).collect();
    let host = match QuickJsHost::create_with(options) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(70);
        }
    };
    let mut lp = EventLoop::new();
    let code = host.run_main(&mut lp, &name, &source);
    // Leave without dropping the loop or the engine: queued callbacks hold
    // JavaScript values, and the process ends here anyway.
    std::process::exit(code)
}
