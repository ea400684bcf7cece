//! The engine behind the host, as a trait so that another engine (boa)
//! can replace QuickJS.
//!
//! Invariants an engine keeps:
//! - it never runs JavaScript except from these methods;
//! - its job queue holds promise reactions and `queueMicrotask` callbacks
//!   in one FIFO, and [`Engine::run_pending_job`] runs exactly one;
//! - an exception is returned, formatted, never swallowed.
//!
//! ```
//! use timerloop_js::{Engine, QuickJsHost};
//! let host = QuickJsHost::create_with(Default::default()).unwrap();
//! let mut lp = timerloop::EventLoop::with_virtual_clock();
//! // The host drives its engine through this trait; so can its owner.
//! host.eval_main(&mut lp, "main.js", "process.exitCode = 4").unwrap();
//! assert_eq!(host.engine().exit_code(), Some(4));
//! assert!(!host.engine().has_pending_job());
//! ```

use std::io::Write;

use crate::host::Thrown;

/// What the loop calls back into JavaScript for.
///
/// The discriminants are the numbers the prelude's `dispatch(kind, id)`
/// takes.
///
/// ```
/// use timerloop_js::{Engine, Kind, QuickJsHost};
/// assert_eq!(
///     [Kind::Timeout, Kind::Immediate, Kind::Tick, Kind::Io, Kind::Signal].map(|k| k as u32),
///     [0, 1, 2, 3, 4]
/// );
/// let host = QuickJsHost::create_with(Default::default()).unwrap();
/// let mut lp = timerloop::EventLoop::with_virtual_clock();
/// // A timeout's number is its id, as in Node.
/// host.eval_main(&mut lp, "main.js", "globalThis.n = 0; globalThis.id = +setTimeout(() => n++, 5)")
///     .unwrap();
/// let id: u32 = host.context().with(|c| c.globals().get("id")).unwrap();
/// host.engine().dispatch(Kind::Timeout, id).unwrap();
/// let n: i32 = host.context().with(|c| c.globals().get("n")).unwrap();
/// assert_eq!(n, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A timeout or interval fired.
    Timeout = 0,
    /// An immediate's turn came.
    Immediate = 1,
    /// The next `process.nextTick` callback.
    Tick = 2,
    /// An I/O request completed (`fs.stat`).
    Io = 3,
    /// A watched signal came (`process.on('SIGINT')`); the id is the
    /// signal's number ([`Host::watch_signal`](crate::Host::watch_signal)).
    Signal = 4,
}

/// Which of the program's streams a piece of output is for: what
/// `console.log` and `process.stdout.write` write is [`Stdout`](Self::Stdout),
/// what `console.error`, warnings and the host's reports of uncaught
/// exceptions write is [`Stderr`](Self::Stderr).
///
/// An embedder that takes a program's output with
/// [`Options::console`](crate::Options::console) gets it with each piece:
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use timerloop_js::{Options, QuickJsHost, Stream};
/// let out = Arc::new(Mutex::new(Vec::new()));
/// let o = out.clone();
/// let options = Options {
///     console: Some(Arc::new(move |s: Stream, text: &str| o.lock().unwrap().push((s, text.to_owned())))),
///     ..Default::default()
/// };
/// let host = QuickJsHost::create_with(options).unwrap();
/// let mut lp = timerloop::EventLoop::with_virtual_clock();
/// assert_eq!(host.run_main(&mut lp, "main.js", "console.log('hi'); console.warn('careful')"), 0);
/// let want = [(Stream::Stdout, "hi\n".to_owned()), (Stream::Stderr, "careful\n".to_owned())];
/// assert_eq!(*out.lock().unwrap(), want);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stream {
    /// Standard output, file descriptor 1.
    Stdout,
    /// Standard error, file descriptor 2.
    Stderr,
}

/// Writes `bytes` to the process's `stream`, at once, as Node's console
/// writes to files and pipes: nothing stays in a buffer across a callback,
/// so `process.exit` loses nothing. The caller decides what a failed
/// write means: the program's own writes raise `EPIPE` as Node's streams
/// do ([`QuickJs`](crate::QuickJs)), the host's reports ignore it.
pub(crate) fn write_std(stream: Stream, bytes: &[u8]) -> std::io::Result<()> {
    match stream {
        Stream::Stderr => std::io::stderr().lock().write_all(bytes),
        Stream::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush())
        }
    }
}

/// A JavaScript engine the host can drive.
///
/// [`QuickJs`](crate::QuickJs) is the one this crate has; code generic over
/// the engine reaches it through a [`Host`](crate::Host):
///
/// ```
/// use timerloop_js::{Engine, Host, QuickJsHost};
/// fn status<E: Engine>(host: &Host<E>) -> i32 {
///     host.engine().exit_code().unwrap_or(0)
/// }
/// let host = QuickJsHost::create_with(Default::default()).unwrap();
/// let mut lp = timerloop::EventLoop::with_virtual_clock();
/// assert_eq!(status(&host), 0);
/// host.eval_main(&mut lp, "main.js", "process.exitCode = 9").unwrap();
/// assert_eq!(status(&host), 9);
/// ```
pub trait Engine: 'static {
    /// Runs the main script (`name` is its path, for stacks and for the
    /// files it `require`s; one that is not absolute is in the working
    /// directory).
    ///
    /// Called as is, outside the loop's scope, it runs a script that uses
    /// no timer; [`Host::eval_main`](crate::Host::eval_main) is the way
    /// to run a program.
    ///
    /// ```
    /// use timerloop_js::{Engine, QuickJsHost};
    /// let host = QuickJsHost::create_with(Default::default()).unwrap();
    /// // Node's CommonJS wrapper: `__filename` and `module` are there.
    /// host.engine().eval_main("/app/main.js", "globalThis.f = __filename").unwrap();
    /// let f: String = host.context().with(|c| c.globals().get("f")).unwrap();
    /// assert_eq!(f, "/app/main.js");
    /// let e = host.engine().eval_main("bad.js", "throw new TypeError('no')").unwrap_err();
    /// assert!(e.0.starts_with("TypeError: no"), "{e}");
    /// ```
    ///
    /// # Errors
    ///
    /// The script's uncaught exception.
    fn eval_main(&self, name: &str, source: &str) -> Result<(), Thrown>;
    /// Emits `exit` or `beforeExit` on `process` with `process.exitCode`,
    /// after setting it to `code` if given. `exit` is emitted once.
    ///
    /// ```
    /// use timerloop_js::{Engine, QuickJsHost};
    /// let host = QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "globalThis.seen = []; process.on('exit', c => seen.push(c))";
    /// host.eval_main(&mut lp, "main.js", src).unwrap();
    /// host.engine().emit_process("exit", Some(3)).unwrap();
    /// host.engine().emit_process("exit", None).unwrap(); // not again
    /// let seen: Vec<i32> = host.context().with(|c| c.eval("seen")).unwrap();
    /// assert_eq!(seen, [3]);
    /// assert_eq!(host.engine().exit_code(), Some(3));
    /// ```
    ///
    /// # Errors
    ///
    /// A listener's exception.
    fn emit_process(&self, event: &str, code: Option<i32>) -> Result<(), Thrown>;
    /// Emits `uncaughtException` with the last exception reported (or
    /// `message` if there is none); `false` if nobody listens.
    ///
    /// ```
    /// use timerloop_js::{Engine, QuickJsHost};
    /// let host = QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// assert!(!host.engine().emit_uncaught("Error: boom").unwrap());
    /// let src = "process.on('uncaughtException', e => { globalThis.got = String(e) })";
    /// host.eval_main(&mut lp, "main.js", src).unwrap();
    /// assert!(host.engine().emit_uncaught("Error: boom").unwrap());
    /// let got: String = host.context().with(|c| c.globals().get("got")).unwrap();
    /// assert_eq!(got, "Error: boom");
    /// ```
    ///
    /// # Errors
    ///
    /// A listener's exception.
    fn emit_uncaught(&self, message: &str) -> Result<bool, Thrown>;
    /// Calls the JavaScript side's dispatcher for `kind` and `id`.
    ///
    /// ```
    /// use timerloop_js::{Engine, Kind, QuickJsHost};
    /// let host = QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "globalThis.n = 0; globalThis.id = +setTimeout(() => n++, 5)";
    /// host.eval_main(&mut lp, "main.js", src).unwrap();
    /// let id: u32 = host.context().with(|c| c.globals().get("id")).unwrap();
    /// host.engine().dispatch(Kind::Timeout, id).unwrap(); // fires it now
    /// assert_eq!(host.run(&mut lp), 0); // the loop's turn finds it fired
    /// let n: i32 = host.context().with(|c| c.globals().get("n")).unwrap();
    /// assert_eq!(n, 1);
    /// ```
    ///
    /// # Errors
    ///
    /// The callback's uncaught exception.
    fn dispatch(&self, kind: Kind, id: u32) -> Result<(), Thrown>;
    /// Whether a job (microtask) is pending.
    ///
    /// ```
    /// use timerloop_js::{Engine, QuickJsHost};
    /// let host = QuickJsHost::create_with(Default::default()).unwrap();
    /// assert!(!host.engine().has_pending_job());
    /// host.engine().eval_main("main.js", "Promise.resolve().then(() => {})").unwrap();
    /// assert!(host.engine().has_pending_job());
    /// ```
    fn has_pending_job(&self) -> bool;
    /// Runs one pending job; `false` if there was none.
    ///
    /// ```
    /// use timerloop_js::{Engine, QuickJsHost};
    /// let host = QuickJsHost::create_with(Default::default()).unwrap();
    /// let e = host.engine();
    /// e.eval_main("main.js", "globalThis.n = 0; queueMicrotask(() => n++); queueMicrotask(() => n++)")
    ///     .unwrap();
    /// assert!(e.run_pending_job().unwrap());
    /// let n: i32 = host.context().with(|c| c.globals().get("n")).unwrap();
    /// assert_eq!(n, 1); // exactly one
    /// assert!(e.run_pending_job().unwrap());
    /// assert!(!e.run_pending_job().unwrap());
    /// ```
    ///
    /// # Errors
    ///
    /// The job's uncaught exception.
    fn run_pending_job(&self) -> Result<bool, Thrown>;
    /// Emits `rejectionHandled` for each promise that got a handler after
    /// it was reported (to `unhandledRejection` listeners, or as an
    /// uncaught exception), oldest first; or prints Node's
    /// `PromiseRejectionHandledWarning` if nobody listens.
    ///
    /// The host calls it when it checks for unhandled rejections:
    ///
    /// ```
    /// use timerloop_js::{Engine, QuickJsHost};
    /// let host = QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "process.on('unhandledRejection', () => {});
    ///     process.on('rejectionHandled', () => { globalThis.late = true });
    ///     const p = Promise.reject(1); setTimeout(() => p.catch(() => {}), 5)";
    /// host.eval_main(&mut lp, "main.js", src).unwrap();
    /// assert_eq!(host.run(&mut lp), 0);
    /// let late: bool = host.context().with(|c| c.globals().get("late")).unwrap();
    /// assert!(late);
    /// host.engine().emit_rejections_handled().unwrap(); // none left
    /// ```
    ///
    /// # Errors
    ///
    /// A listener's exception.
    fn emit_rejections_handled(&self) -> Result<(), Thrown>;
    /// Whether the batch of rejections being reported has more, after
    /// [`take_unhandled_rejection`](Self::take_unhandled_rejection)
    /// returned one as an uncaught exception: the host reports the rest
    /// right after that exception's listeners, as Node's
    /// `processPromiseRejections` goes on with its loop, where rejections
    /// made since wait for the next batch. The default, true, has the
    /// host ask again at once either way.
    ///
    /// ```
    /// use timerloop_js::{Engine, QuickJsHost};
    /// let host = QuickJsHost::create_with(Default::default()).unwrap();
    /// assert!(!host.engine().rejection_batch_pending());
    /// ```
    fn rejection_batch_pending(&self) -> bool {
        true
    }
    /// The oldest rejected promise that still has no handler, formatted as
    /// Node 20 reports it (`--unhandled-rejections=throw`), and forgotten.
    /// The engine emits `unhandledRejection` itself (the host never does):
    /// it returns `None` once listeners heard of every such promise, and a
    /// listener's own exception as `Some`; only a rejection nobody listens
    /// for comes back to be reported as an uncaught exception.
    ///
    /// ```
    /// use timerloop_js::{Engine, QuickJsHost};
    /// let host = QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// // In the loop's scope: the engine tells the host of the rejection.
    /// lp.scope(|| host.engine().eval_main("main.js", "Promise.reject(new Error('late'))"))
    ///     .unwrap();
    /// let t = host.engine().take_unhandled_rejection().unwrap();
    /// assert!(t.0.starts_with("Error: late"), "{t}");
    /// assert!(host.engine().take_unhandled_rejection().is_none());
    /// ```
    fn take_unhandled_rejection(&self) -> Option<Thrown>;
    /// `process.exitCode` as an integer, `None` when unset.
    ///
    /// ```
    /// use timerloop_js::{Engine, QuickJsHost};
    /// let host = QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// assert_eq!(host.engine().exit_code(), None);
    /// host.eval_main(&mut lp, "main.js", "process.exitCode = 5").unwrap();
    /// assert_eq!(host.engine().exit_code(), Some(5));
    /// ```
    fn exit_code(&self) -> Option<i32>;
    /// Writes a piece of the program's output: what its JavaScript writes
    /// (`console`, `process.stdout.write`, warnings) and what the host
    /// reports (an uncaught exception, as Node prints it). `text` is
    /// written as is, its newlines included. By default, to the process's
    /// stream; [`QuickJs`](crate::QuickJs) gives it to
    /// [`Options::console`](crate::Options::console) when set. A failed
    /// write is ignored here. [`QuickJs`](crate::QuickJs)'s program writes
    /// its own output through the same stream but not through this
    /// method: a pipe whose reader is gone raises Node's `EPIPE` error in
    /// the program, as Node's streams do (the crate's README, "Standard
    /// output and error").
    ///
    /// ```
    /// use timerloop_js::{Engine, QuickJsHost, Stream};
    /// let host = QuickJsHost::create_with(Default::default()).unwrap();
    /// // No sink: to the process's standard output.
    /// host.engine().write(Stream::Stdout, "from the application\n");
    /// ```
    fn write(&self, stream: Stream, text: &str) {
        let _ = write_std(stream, text.as_bytes());
    }
    /// Why the engine stopped the program's JavaScript on its own, once it
    /// has: its run budget ran out ([`Options::max_run`](crate::Options::max_run))
    /// or the embedder's handler said so
    /// ([`Options::interrupt`](crate::Options::interrupt)), formatted as
    /// the host reports it (why, then the stack where it stopped). The host
    /// asks after each call that ran JavaScript and, on `Some`, ends the
    /// program at once with status 1, running none of its JavaScript
    /// again. By default `None`: an engine with no such limit.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop_js::{Engine, Options, QuickJsHost};
    /// let options = Options { max_run: Some(Duration::from_millis(10)), ..Default::default() };
    /// let host = QuickJsHost::create_with(options).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// assert!(host.engine().interrupted().is_none());
    /// let src = "function spin() { while (true) {} }\nsetImmediate(spin)";
    /// assert_eq!(host.run_main(&mut lp, "spin.js", src), 1);
    /// let why = host.engine().interrupted().unwrap();
    /// assert!(why.0.starts_with("InternalError: interrupted: the program's JavaScript ran"), "{why}");
    /// assert!(why.0.contains("at spin (spin.js:1:"), "{why}");
    /// ```
    fn interrupted(&self) -> Option<Thrown> {
        None
    }
}
