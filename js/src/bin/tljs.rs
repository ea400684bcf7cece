//! `tljs FILE.js [ARGS...]`: runs a Node.js timer program on timerloop,
//! as `node FILE.js` would: the main script, then the loop until nothing
//! refed is left; exits with `process.exitCode`, or 1 after an uncaught
//! exception (printed to stderr as Node prints it, less the source line).

use std::process::ExitCode;

use timerloop::EventLoop;
use timerloop_js::QuickJsHost;

fn main() -> ExitCode {
    let mut args = std::env::args();
    let exe = args.next().unwrap_or_else(|| "tljs".into());
    let Some(file) = args.next() else {
        eprintln!("usage: tljs FILE.js [ARGS...]");
        return ExitCode::from(2);
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
    let argv = [exe, name.clone()].into_iter().chain(args).collect();
    let host = match QuickJsHost::create(argv) {
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
