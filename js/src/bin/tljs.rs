//! `tljs [--max-memory MB] [--stack-size KB] [--max-run MS] FILE.js [ARGS...]`:
//! runs a Node.js timer program on timerloop, as `node FILE.js` would (`-`
//! for FILE.js reads the program from standard input, as node's `-`): the main
//! script, then the loop until nothing refed is left; exits with
//! `process.exitCode`, or 1 after an uncaught exception (printed to stderr
//! as Node prints it, less the source line). `--max-memory` limits the
//! engine's heap (an allocation past it throws `InternalError: out of
//! memory`, which a `catch` can take); `--stack-size` sets the engine's
//! stack limit (default 8 MiB, about 13,000 frames of a small function,
//! about as deep as Node's 11,000 to 14,000 depending on the function; at
//! most 16 MiB, a larger value is taken as 16 MiB);
//! `--max-run` ends the program (status 1, the stack where it was on
//! stderr) when its JavaScript runs longer than MS milliseconds in one
//! turn, a macrotask and the ticks and microtasks after it
//! (`Options::max_run`). `-h`/`--help` prints the options; an unknown
//! option (options come before `FILE.js`) is a usage error, status 2.
//!
//! The engine runs on a thread of its own whose stack is the limit plus
//! [`MARGIN`]: QuickJS checks its limit against the stack pointer, so the
//! thread must have that much and more for the host's own frames (a limit
//! past the thread's stack overflowed it: the process aborted). A thread's
//! stack is reserved, not committed: only the depth a program reaches
//! costs memory.

use std::process::ExitCode;
use std::time::Duration;

use timerloop::EventLoop;
use timerloop_js::{Options, QuickJsHost};

const USAGE: &str =
    "usage: tljs [--max-memory MB] [--stack-size KB] [--max-run MS] FILE.js [ARGS...]";

/// What `--help` prints after the usage line.
const HELP: &str = "Runs a Node.js 20 timer program on timerloop, as `node FILE.js` would.

  --max-memory MB  limit the engine's heap (an allocation past it throws
                   InternalError: out of memory)
  --stack-size KB  the engine's stack limit (default 8192, at most 16384)
  --max-run MS     end the program (status 1) when its JavaScript runs
                   longer than MS in one turn
  -h, --help       this text

Options come before FILE.js (`--` ends them); `-` reads the program from
standard input. What follows FILE.js is the program's process.argv.
Exits with process.exitCode, 1 after an uncaught exception or for a file
that cannot be read, 7 if an uncaughtException listener threw, 70 for an
internal failure, 2 for a usage error.";

/// The program's file name when it is read from standard input (`-`), as
/// node names it.
const STDIN_NAME: &str = "[stdin]";

/// The engine's stack limit when `--stack-size` is not given.
const DEFAULT_STACK: usize = 8 << 20;

/// The largest engine stack limit (`Options::max_stack` is clamped to it:
/// rquickjs takes a larger one as none).
const MAX_STACK: usize = 16 << 20;

/// The engine thread's stack beyond the engine's limit: the frames below
/// the point where JavaScript is entered, and the natives and C code that
/// run between two of QuickJS's checks.
const MARGIN: usize = 4 << 20;

/// `eprintln!` that does not panic when stderr is a pipe whose reader is
/// gone (std's does: status 101 and a panic message nobody reads); the
/// line is lost, as the program's own output is then.
macro_rules! say_err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` that does not panic on a broken stdout (see `say_err!`).
macro_rules! say_out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

fn main() -> ExitCode {
    let mut args = std::env::args();
    let exe = args.next().unwrap_or_else(|| "tljs".into());
    let mut options = Options {
        exit_process: true,
        ..Options::default()
    };
    let mut max_run = None;
    let file = loop {
        let Some(a) = args.next() else {
            say_err!("{USAGE}");
            return ExitCode::from(2);
        };
        let (slot, unit) = match a.as_str() {
            "--max-memory" => (&mut options.max_memory, 1 << 20),
            "--stack-size" => (&mut options.max_stack, 1 << 10),
            "--max-run" => (&mut max_run, 1),
            "--" => match args.next() {
                Some(file) => break file,
                None => {
                    say_err!("{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                say_out!("{USAGE}\n\n{HELP}");
                return ExitCode::SUCCESS;
            }
            o if o.starts_with('-') && o != "-" => {
                say_err!("tljs: unknown option {o} (options come before FILE.js)\n{USAGE}");
                return ExitCode::from(2);
            }
            _ => break a,
        };
        match args.next().and_then(|n| n.parse::<usize>().ok()) {
            Some(n) if n > 0 => *slot = Some(n.saturating_mul(unit)),
            _ => {
                say_err!("tljs: {a} needs a positive whole number\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    };
    options.max_run = max_run.map(|ms| Duration::from_millis(ms as u64));
    // `-` is the program on standard input, read to its end first, as
    // node's `-`: its file name is `[stdin]`, and argv[1] stays `-`.
    let (name, source, arg1) = if file == "-" {
        let mut source = Vec::new();
        let read = std::io::Read::read_to_end(&mut std::io::stdin(), &mut source).map(|_| source);
        (STDIN_NAME.to_owned(), read, file.clone())
    } else {
        let path = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone().into());
        let name = path.display().to_string();
        (name.clone(), std::fs::read(&path), name)
    };
    let source = match source {
        // As node reads a program: UTF-8, an invalid sequence read as
        // U+FFFD (node does not refuse the file).
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            let what = if file == "-" { "standard input" } else { &file };
            say_err!("tljs: cannot read {what}: {e}");
            return ExitCode::from(1);
        }
    };
    let exe = std::fs::canonicalize(&exe).map_or(exe, |p| p.display().to_string());
    options.argv = [exe, arg1].into_iter().chain(args).collect();
    // node's process.env: the process's own variables (those that are
    // valid Unicode; node shows others lossily, tljs leaves them out).
    options.env = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let limit = options.max_stack.unwrap_or(DEFAULT_STACK).min(MAX_STACK);
    options.max_stack = Some(limit);
    let engine = std::thread::Builder::new()
        .name("tljs".into())
        .stack_size(limit.saturating_add(MARGIN))
        .spawn(move || run(options, &name, &source));
    leave_signals_to_the_engine();
    match engine.map(std::thread::JoinHandle::join) {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => ExitCode::from(70), // a panic, already printed
        Err(e) => {
            say_err!(
                "tljs: --stack-size {} KB: no thread with that stack: {e}",
                limit >> 10
            );
            ExitCode::from(2)
        }
    }
}

/// Blocks, on this thread (which only waits for the engine's), every
/// signal that is not a fault's: a signal sent to the process is then the
/// engine thread's, as a Node process's is its main thread's (libuv's
/// threads block them). So a signal the program sends itself
/// (`process.kill(process.pid, ...)`) is taken before `kill` returns, and
/// its listeners run in the next poll phase, as in node; taken on this
/// thread, it reached the loop some time later, or after the loop ended.
fn leave_signals_to_the_engine() {
    #[cfg(unix)]
    {
        use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
        let mut set = SigSet::all();
        for fault in [
            Signal::SIGSEGV,
            Signal::SIGBUS,
            Signal::SIGFPE,
            Signal::SIGILL,
            Signal::SIGTRAP,
            Signal::SIGSYS,
        ] {
            set.remove(fault);
        }
        let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
    }
}

/// Runs the program on the engine's thread; returns only if the host could
/// not be made (the status of a program ends the process there).
fn run(options: Options, name: &str, source: &str) -> ExitCode {
    let host = match QuickJsHost::create_with(options) {
        Ok(h) => h,
        Err(e) => {
            say_err!("{e}");
            return ExitCode::from(70);
        }
    };
    let mut lp = EventLoop::new();
    let code = host.run_main(&mut lp, name, source);
    // Leave without dropping the loop or the engine: queued callbacks hold
    // JavaScript values, and the process ends here anyway.
    std::process::exit(code)
}
