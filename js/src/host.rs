//! The engine-independent half of the host: timers, immediates and ticks
//! bound to a timerloop [`EventLoop`], and the engine's job queue driven as
//! Node drives V8's microtask queue.
//!
//! Invariants:
//! - JavaScript runs only inside a loop callback, [`Host::eval_main`], or
//!   [`Host::run`]'s own calls (the `beforeExit` and `exit` listeners, and
//!   those of a fatal exception), and always inside [`EventLoop::scope`]
//!   (through `run_engine`), so the natives reach the loop
//!   through [`EventLoop::with_current`]; no native runs JavaScript, so
//!   lending never nests;
//! - after any JavaScript ran, if the engine holds a pending job, exactly
//!   one *pump* is queued on the loop's microtask queue (`pump_queued`;
//!   after `unhandledRejection` listeners, behind the ticks they queued).
//!   A pump runs one job and, if jobs remain, queues the next pump. So the
//!   engine's jobs (promise reactions and `queueMicrotask` callbacks, one
//!   FIFO in QuickJS) run where the loop drains microtasks: after the
//!   `nextTick` queue, until both are empty, as Node's
//!   `processTicksAndRejections` does with V8's queue; a job that throws is
//!   reported alone and the rest still run;
//! - unhandled rejections are checked by a loop microtask that waits until
//!   no job and no tick is left (Node's `processPromiseRejections`);
//! - every timeout is kept ([`EventLoop::keep_timeout`]) until the engine
//!   says its JavaScript object is gone ([`Host::release`]), so `refresh`
//!   and `hasRef` work on fired timeouts as on Node's, or until the
//!   program ends ([`Host::exited`]), when all of the host's timers and
//!   immediates leave the loop;
//! - every call into the engine goes through `run_engine`, which ends the
//!   program at once if the engine stopped its JavaScript on its own
//!   ([`Engine::interrupted`]: a run budget, the embedder's interrupt):
//!   no JavaScript of that program runs after, its listeners included;
//! - the loop's waiting callbacks (timers, immediates, the uncaught
//!   handler) hold the host weakly: a kept timeout whose JavaScript object
//!   lives in the engine would otherwise hold the engine through the host,
//!   a cycle that nothing frees. The application's `Rc` keeps the host
//!   alive; dropped, the host is freed, and its timers leave the loop as
//!   they come due, running nothing.
//!
//! ```
//! let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
//! let mut lp = timerloop::EventLoop::with_virtual_clock();
//! let src = "globalThis.log = []; setTimeout(() => log.push('timeout'), 5);
//!     setImmediate(() => log.push('immediate')); Promise.resolve().then(() => log.push('job'));
//!     process.nextTick(() => log.push('tick')); log.push('main')";
//! assert_eq!(host.run_main(&mut lp, "main.js", src), 0);
//! let log: String = host.context().with(|c| c.eval("log.join()")).unwrap();
//! assert_eq!(log, "main,tick,job,immediate,timeout");
//! ```

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::rc::{Rc, Weak};
use std::time::Instant;

use timerloop::{BoxError, CallbackError, Cause, Clock, EventLoop, Immediate, Timeout};

use crate::engine::{Engine, Kind, Stream};

/// An exception that reached the top of a callback, formatted as Node
/// prints it after the source-location header (for an `Error`: its
/// `toString()` then the stack).
///
/// ```
/// use timerloop_js::{Engine, QuickJsHost, Thrown};
/// let host = QuickJsHost::create_with(Default::default()).unwrap();
/// let e: Thrown = host.engine().eval_main("main.js", "throw new RangeError('too far')").unwrap_err();
/// assert!(e.to_string().starts_with("RangeError: too far\n"), "{e}");
/// let e = host.engine().eval_main("main.js", "throw 42").unwrap_err();
/// assert!(e.0.starts_with("42\n(Use `node --trace-uncaught ...`"), "{e}");
/// let _: Box<dyn std::error::Error> = Box::new(e);
/// ```
#[derive(Debug, Clone)]
pub struct Thrown(pub String);

impl fmt::Display for Thrown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Thrown {}

/// A host's own uncaught exception as the loop carries it: the exception
/// (its `Display`, and its `source()`, so that the wrapper adds no link
/// to a chain: the loop's error shows this message and continues with
/// its source, which would otherwise repeat it) and the id of the host
/// whose JavaScript threw it, so that the loop's uncaught handler gives
/// it to that host's `uncaughtException` listeners and to no other's.
struct Own {
    thrown: Thrown,
    host: u64,
}

impl fmt::Display for Own {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.thrown.fmt(f)
    }
}

impl fmt::Debug for Own {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.thrown.fmt(f)
    }
}

impl std::error::Error for Own {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.thrown)
    }
}

/// What the uncaught handler and another host's [`Host::run`] do with a
/// host's own failure, whatever its engine.
trait Owner {
    /// To this host's `uncaughtException` listeners, or fatal.
    fn uncaught(self: Rc<Self>, lp: &mut EventLoop, err: CallbackError);
    /// Fatal, reported where another host's `run` found it.
    fn die_of(&self, lp: &mut EventLoop, message: &str);
}

/// The host whose JavaScript failed, if `err` is a host's own and that
/// host lives.
fn owner_of(err: &CallbackError) -> Option<Rc<dyn Owner>> {
    match err.cause() {
        Cause::Error(e) => {
            let id = e.downcast_ref::<Own>()?.host;
            HOSTS.with(|m| m.borrow().get(&id).and_then(Weak::upgrade))
        }
        _ => None,
    }
}

/// Host ids, unique in the process (an error may be sent to another
/// thread, where it is no host's).
static NEXT_HOST: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The application's uncaught-error handler, as the router found it when
/// it was installed, and whether the router is still the loop's handler.
struct Router {
    /// Gets every failure that is no host's.
    app: RefCell<Option<AppHandler>>,
    /// The router is the loop's handler (the application has not replaced
    /// or cleared it since): cleared when the loop drops it.
    installed: Cell<bool>,
}

type AppHandler = Box<dyn FnMut(&mut EventLoop, CallbackError)>;

/// Held by the installed router's closure: the loop dropping that closure
/// (the application set or cleared a handler) marks the router gone.
struct Installed(Rc<Router>);

impl Drop for Installed {
    fn drop(&mut self) {
        self.0.installed.set(false);
    }
}

/// The loop's uncaught handler while any host on the thread has
/// `uncaughtException` listeners: a host's own failure goes to that host;
/// any other (the application's own callbacks) goes to the handler the
/// application had set before the router, or, if it had none, is declined,
/// so it is fatal exactly as with no handler ([`EventLoop::run`] returns it).
fn route_uncaught(lp: &mut EventLoop, err: CallbackError, router: &Router) {
    if let Some(h) = owner_of(&err) {
        return h.uncaught(lp, err);
    }
    // Out of its cell while it runs: it may do anything to the loop.
    let app = router.app.borrow_mut().take();
    match app {
        Some(mut app) => {
            app(lp, err);
            let mut slot = router.app.borrow_mut();
            if slot.is_none() {
                *slot = Some(app);
            }
        }
        None => {
            let _ = lp.decline_uncaught(err);
        }
    }
}

/// Makes the router the loop's uncaught handler, in front of whatever
/// handler the application has set (unless the router already is).
fn install_router(lp: &mut EventLoop) {
    if ROUTER.with(|r| r.borrow().as_ref().is_some_and(|r| r.installed.get())) {
        return;
    }
    let router = Rc::new(Router {
        app: RefCell::new(lp.take_uncaught_handler()),
        installed: Cell::new(true),
    });
    ROUTER.with(|r| *r.borrow_mut() = Some(router.clone()));
    let held = Installed(router);
    lp.set_uncaught_handler(move |lp, err| route_uncaught(lp, err, &held.0));
}

/// Gives the loop back the application's handler, if the router is still
/// the loop's handler (if the application set or cleared one since, that
/// one stays).
fn uninstall_router(lp: &mut EventLoop) {
    let Some(router) = ROUTER.with(|r| r.borrow_mut().take()) else {
        return;
    };
    if !router.installed.get() {
        return;
    }
    drop(lp.take_uncaught_handler());
    match router.app.borrow_mut().take() {
        Some(app) => lp.set_uncaught_handler(app),
        None => lp.clear_uncaught_handler(),
    }
}

thread_local! {
    /// This thread's hosts, by id, for [`owner_of`].
    static HOSTS: RefCell<HashMap<u64, Weak<dyn Owner>>> = RefCell::new(HashMap::new());
    /// Hosts on this thread (on its one loop) with `uncaughtException`
    /// listeners: the handler is [`route_uncaught`] while there are any.
    static LISTENING: Cell<usize> = const { Cell::new(0) };
    /// The router, from its installation until the last listener goes.
    static ROUTER: RefCell<Option<Rc<Router>>> = const { RefCell::new(None) };
}

#[derive(Default)]
struct State {
    /// Shared by timeouts, immediates and ticks, from 2, as Node's async
    /// ids in a plain script.
    next_id: u32,
    /// The ids ran past `u32::MAX` and start again from 2: from then on
    /// an id still held by a timeout or immediate is skipped.
    wrapped: bool,
    timers: HashMap<u32, Timeout>,
    immediates: HashMap<u32, Immediate>,
    /// The signals watched (`process.on(signal)`), by number: whether a
    /// listener wants them now. A signal once watched stays registered
    /// with the OS; arriving with no listener, it does what it would by
    /// default ([`Host::watch_signal`]).
    signals: HashMap<i32, bool>,
}

/// A JavaScript engine bound to the thread's [`EventLoop`].
///
/// The application's `Rc` keeps the host and its engine alive: the loop's
/// timers, immediates and `fs.stat` completions hold it weakly, so
/// dropping the last handle ends the program (its timers leave the loop as
/// they come due, running no JavaScript), and a host whose program ended
/// (see [`exited`](Self::exited)) leaves nothing on the loop but an
/// `fs.stat` in flight, which keeps the loop alive until the next poll
/// phase and then runs nothing.
///
/// ```
/// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
/// let mut lp = timerloop::EventLoop::with_virtual_clock();
/// host.eval_main(&mut lp, "main.js", "setInterval(() => {}, 10)").unwrap();
/// let w = std::rc::Rc::downgrade(&host);
/// drop(host);
/// assert!(w.upgrade().is_none()); // freed, its runtime with it
/// lp.run().unwrap(); // the interval comes due once, and goes
/// assert_eq!(lp.now(), 10);
/// ```
///
/// ```
/// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
/// let mut lp = timerloop::EventLoop::with_virtual_clock();
/// let src = "setTimeout(() => { process.exitCode = 1 }, 100)";
/// assert_eq!(host.run_main(&mut lp, "main.js", src), 1);
/// assert_eq!(lp.now(), 100);
/// ```
pub struct Host<E: Engine> {
    engine: E,
    state: RefCell<State>,
    pump_queued: Cell<bool>,
    rejections_queued: Cell<bool>,
    /// A rejection event (a new rejection, a reported one handled) came
    /// while a check was queued or running: the check ends by queueing
    /// another, as Node's tick loop runs `processPromiseRejections` again
    /// after the microtasks its listeners queued.
    rejections_again: Cell<bool>,
    /// The failure going to the loop is an unhandled rejection's, reported
    /// from Node's tick loop: the uncaughtException listeners' ticks run
    /// before their promise jobs ([`Owner::uncaught`]).
    rejection_failing: Cell<bool>,
    /// How many of [`run_engine`](Self::run_engine)'s scopes are open:
    /// JavaScript running with none (an embedder's bare `ctx.with`) has
    /// no current loop to queue a tick on.
    engaged: Cell<u32>,
    start: Instant,
    /// `process.hrtime`'s reading when the host was made: the system's
    /// monotonic clock since boot, as libuv's `uv_hrtime` (0 where there
    /// is none to read).
    hrtime_origin: f64,
    /// The JavaScript clocks follow the loop's virtual clock
    /// ([`Clocks::Loop`](crate::Clocks::Loop)), from the first time the
    /// host runs JavaScript on a loop that has one.
    follow_loop_clock: Cell<bool>,
    loop_clock: RefCell<Option<LoopClock>>,
    /// `process.exit` ends the OS process (`tljs`), else it stops the loop.
    exit_process: bool,
    /// The status `process.exit` (or a fatal exception) ended the program
    /// with, when it does not end the OS process: no JavaScript runs after.
    exited: Cell<Option<i32>>,
    /// The host's `uncaughtException` listeners are the loop's uncaught
    /// handler.
    listening: Cell<bool>,
    /// A fatal exception's report while its `exit` listeners run: printed
    /// after them, or first by [`stopped`](Self::stopped) if the engine
    /// stops a listener (its run budget), so that the exception that ended
    /// the program is never lost.
    fatal_report: RefCell<Option<String>>,
    /// This host, for the loop's callbacks that wait (timers, immediates):
    /// they must not keep it alive, or a host whose JavaScript keeps a
    /// Timeout object would never be freed.
    me: Weak<Self>,
    /// Tells this host's failures from others' ([`Own`]).
    id: u64,
}

impl<E: Engine> fmt::Debug for Host<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.state.borrow();
        f.debug_struct("Host")
            .field("timers", &s.timers.len())
            .field("immediates", &s.immediates.len())
            .field("pump_queued", &self.pump_queued.get())
            .finish_non_exhaustive()
    }
}

impl<E: Engine> Owner for Host<E> {
    fn uncaught(self: Rc<Self>, lp: &mut EventLoop, err: CallbackError) {
        if self.exited().is_some() {
            return;
        }
        let message = err.message();
        let rejection = self.rejection_failing.replace(false);
        let r = self.run_engine(lp, |e| e.emit_uncaught(&message));
        if rejection {
            // Node reports it from its tick loop's condition: the ticks
            // the listeners queued run before their promise jobs.
            self.pump_behind_ticks(lp);
        } else {
            self.after_js(lp);
        }
        // The last listener may have gone in the meantime; a listener
        // that throws ends the process with 7, as in Node.
        if self.exited().is_some() {
            return;
        }
        let code = match r {
            Ok(true) => return,
            Ok(false) => self.die(lp, &message, 1),
            Err(t) => {
                // Node's kExceptionInFatalExceptionHandler: the process
                // ends at once, with no `exit` event.
                self.eprint(&t.0);
                7
            }
        };
        if self.exit_process {
            let _ = std::io::Write::flush(&mut std::io::stdout());
            std::process::exit(code);
        }
        self.finish(lp, code);
        lp.stop();
    }

    fn die_of(&self, lp: &mut EventLoop, message: &str) {
        if self.exited().is_some() {
            return;
        }
        let code = self.die(lp, message, 1);
        if self.exit_process {
            let _ = std::io::Write::flush(&mut std::io::stdout());
            std::process::exit(code);
        }
    }
}

impl<E: Engine> Drop for Host<E> {
    fn drop(&mut self) {
        // Not while the thread's locals are being destroyed.
        let _ = HOSTS.try_with(|m| m.borrow_mut().remove(&self.id));
        if self.listening.get() {
            let _ = LISTENING.try_with(|n| n.set(n.get().saturating_sub(1)));
        }
    }
}

impl<E: Engine> Host<E> {
    /// Makes the host; `make` builds the engine, whose natives call back
    /// through the weak reference it is given. With `exit_process`,
    /// `process.exit` ends the OS process as in Node, and so does a fatal
    /// exception reported through the router (while some host on the
    /// thread has `uncaughtException` listeners) or found by another
    /// host's [`run`](Self::run); otherwise a fatal exception's status is
    /// what this host's [`run`](Self::run) returns. Without,
    /// they stop the loop and [`exited`](Self::exited) tells the status.
    ///
    /// With an engine of one's own (here one that counts callbacks):
    ///
    /// ```
    /// use std::cell::Cell;
    /// use timerloop_js::{Engine, Host, Kind, Thrown};
    /// struct Count(Cell<u32>);
    /// impl Engine for Count {
    ///     fn eval_main(&self, _: &str, _: &str) -> Result<(), Thrown> { Ok(()) }
    ///     fn emit_process(&self, _: &str, _: Option<i32>) -> Result<(), Thrown> { Ok(()) }
    ///     fn emit_uncaught(&self, _: &str) -> Result<bool, Thrown> { Ok(false) }
    ///     fn dispatch(&self, _: Kind, _: u32) -> Result<(), Thrown> {
    ///         self.0.set(self.0.get() + 1);
    ///         Ok(())
    ///     }
    ///     fn has_pending_job(&self) -> bool { false }
    ///     fn run_pending_job(&self) -> Result<bool, Thrown> { Ok(false) }
    ///     fn emit_rejections_handled(&self) -> Result<(), Thrown> { Ok(()) }
    ///     fn take_unhandled_rejection(&self) -> Option<Thrown> { None }
    ///     fn exit_code(&self) -> Option<i32> { None }
    /// }
    /// let host = Host::new(false, |_host| Count(Cell::new(0)));
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// lp.scope(|| (host.set_timer(5.0, false), host.set_immediate()));
    /// assert_eq!(host.run(&mut lp), 0);
    /// assert_eq!(host.engine().0.get(), 2);
    /// ```
    pub fn new(exit_process: bool, make: impl FnOnce(Weak<Self>) -> E) -> Rc<Self> {
        let id = NEXT_HOST.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Rc::new_cyclic(|w: &Weak<Self>| Host {
            id: {
                let owner: Weak<dyn Owner> = w.clone();
                HOSTS.with(|m| m.borrow_mut().insert(id, owner));
                id
            },
            me: w.clone(),
            listening: Cell::new(false),
            fatal_report: RefCell::new(None),
            exit_process,
            exited: Cell::new(None),
            engine: make(w.clone()),
            state: RefCell::new(State {
                next_id: 2,
                ..State::default()
            }),
            pump_queued: Cell::new(false),
            engaged: Cell::new(0),
            rejections_queued: Cell::new(false),
            rejections_again: Cell::new(false),
            rejection_failing: Cell::new(false),
            start: Instant::now(),
            hrtime_origin: monotonic_ns(),
            follow_loop_clock: Cell::new(false),
            loop_clock: RefCell::new(None),
        })
    }

    /// Makes `performance.now()`, `process.hrtime` and
    /// [`date_now_ms`](Self::date_now_ms) follow the loop's virtual clock
    /// from the first time the host runs JavaScript on a loop that has
    /// one (on a real clock they read the wall clock, as the loop does).
    pub(crate) fn follow_loop_clock(&self, on: bool) {
        self.follow_loop_clock.set(on);
    }

    /// Attaches the loop's virtual clock, the first time it is seen,
    /// where the JavaScript clocks follow it.
    fn attach_clock(&self, lp: &EventLoop) {
        if !self.follow_loop_clock.get() || self.loop_clock.borrow().is_some() {
            return;
        }
        if let Some(v) = lp.virtual_clock() {
            let wall = system_ms();
            // `performance.now()` goes on from the next whole millisecond
            // (never back), so that it moves in the virtual clock's steps
            // and a program's differences are exact.
            let since = self.start.elapsed();
            let whole = std::time::Duration::from_millis(since.as_micros().div_ceil(1000) as u64);
            *self.loop_clock.borrow_mut() = Some(LoopClock {
                at: v.now(),
                clock: v.clone(),
                wall_ms: wall,
                since_start: whole,
            });
        }
    }

    /// Time since the host was made: on the wall clock, or, once a
    /// followed virtual clock is attached, the wall time until then plus
    /// the virtual time since.
    fn elapsed(&self) -> std::time::Duration {
        match &*self.loop_clock.borrow() {
            Some(c) => c.since_start + c.clock.now().saturating_sub(c.at),
            None => self.start.elapsed(),
        }
    }

    /// The engine.
    ///
    /// ```
    /// use timerloop_js::Engine;
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// host.eval_main(&mut lp, "main.js", "process.exitCode = 3").unwrap();
    /// assert_eq!(host.engine().exit_code(), Some(3));
    /// ```
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// Runs the main script as Node does: as a top-level callback whose
    /// ticks and microtasks drain when it returns. `name` is its file name
    /// (for stacks, `__filename` and `module.filename`); its `require`s of
    /// relative paths resolve against the name's folder, the working
    /// directory for a name that is not absolute (`main.js`), and
    /// `node_modules` from there.
    ///
    /// An uncaught exception there (a throw, or a promise rejected with no
    /// handler by the time the main script's microtasks drained), with no
    /// `uncaughtException` listener to take it, is fatal as in Node: the
    /// `exit` listeners run with 1, the program ends
    /// ([`exited`](Self::exited) is `Some(1)` unless a listener set
    /// another code; its timers leave the loop), [`run`](Self::run)
    /// returns that status at once, and the exception is this call's
    /// `Err` (not printed; [`run_main`](Self::run_main) prints it as
    /// `node` does). That holds while the loop has no uncaught-error
    /// handler: if another host on the thread listens, the router reports
    /// it (printed, the program ended) and this returns `Ok`; if the
    /// application set a handler of its own, that handler gets it and the
    /// program goes on.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "globalThis.log = []; process.nextTick(() => log.push('tick'));
    ///     Promise.resolve().then(() => log.push('job')); log.push('main')";
    /// host.eval_main(&mut lp, "main.js", src).unwrap();
    /// let log: String = host.context().with(|c| c.eval("log.join()")).unwrap();
    /// assert_eq!(log, "main,tick,job");
    ///
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let src = "process.on('exit', c => { globalThis.code = c }); setTimeout(() => {}, 5); null.x";
    /// let e = host.eval_main(&mut lp, "bad.js", src).unwrap_err();
    /// assert!(matches!(e, timerloop::Error::Uncaught(_)));
    /// assert!(e.to_string().contains("TypeError"), "{e}");
    /// assert_eq!(host.exited(), Some(1));
    /// let code: i32 = host.context().with(|c| c.globals().get("code")).unwrap();
    /// assert_eq!(code, 1); // the `exit` listeners heard it
    /// assert_eq!(host.run(&mut lp), 1);
    /// assert_eq!(lp.now(), 0); // the timer went with the program
    /// ```
    ///
    /// # Errors
    ///
    /// The script's uncaught exception ([`timerloop::Error::Uncaught`]),
    /// fatal as above; or what else [`EventLoop::enter`] returns.
    pub fn eval_main(
        self: &Rc<Self>,
        lp: &mut EventLoop,
        name: &str,
        source: &str,
    ) -> Result<(), timerloop::Error> {
        let r = self.eval_main_only(lp, name, source);
        if let Err(timerloop::Error::Uncaught(e)) = &r
            && self.exited().is_none()
            && owner_of(e).is_some_and(|o| self.is(&o))
        {
            self.fatal_exit(lp, 1, None);
        }
        r
    }

    /// The main script, its failure left to the caller.
    fn eval_main_only(
        self: &Rc<Self>,
        lp: &mut EventLoop,
        name: &str,
        source: &str,
    ) -> Result<(), timerloop::Error> {
        let h = self.clone();
        lp.enter(move |lp| {
            if h.exited().is_some() {
                return Ok(());
            }
            let r = h.run_engine(lp, |e| e.eval_main(name, source));
            h.after_js(lp);
            h.result(r)
        })
    }

    /// The status the program ended with by `process.exit` or a fatal
    /// exception, when the host does not end the OS process itself, or at
    /// the end of [`run`](Self::run); once set, the host runs no more
    /// JavaScript, and its timeouts, intervals and immediates have left the
    /// loop (cleared, their storage freed), as a process that is gone
    /// leaves nothing behind. `process.exit` and a fatal exception also
    /// stop the loop.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// assert_eq!(host.exited(), None);
    /// let src = "setInterval(() => {}, 10); setImmediate(() => process.exit(6))";
    /// host.eval_main(&mut lp, "main.js", src).unwrap();
    /// assert_eq!(host.exited(), None);
    /// lp.run().unwrap(); // stops at the exit
    /// assert_eq!(host.exited(), Some(6));
    /// assert!(!lp.is_alive()); // the interval went with the program
    /// ```
    pub fn exited(&self) -> Option<i32> {
        self.exited.get()
    }

    /// Ends the program from the application (unloading a plugin), as a
    /// watchdog kills a process: it ends with `code` at once, none of its
    /// JavaScript runs again (no `exit` listeners, whatever the program
    /// did to `process.exit`; JavaScript of it running now, if this is
    /// called from inside it, stops at the engine's next check), and its
    /// timeouts, intervals and immediates leave the loop, so the loop
    /// does not wait for a program that is gone. Nothing if the program
    /// has already ended. The loop is not stopped, and the OS process
    /// does not end, even for a host made to end it.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::new(); // the real clock
    /// let src = "process.exit = () => {}; setInterval(() => {}, 1000)";
    /// host.eval_main(&mut lp, "plugin.js", src).unwrap();
    /// host.terminate(&mut lp, 9);
    /// assert_eq!(host.exited(), Some(9));
    /// assert!(!lp.is_alive()); // its interval is gone: run returns at once
    /// lp.run().unwrap();
    /// ```
    pub fn terminate(&self, lp: &mut EventLoop, code: i32) {
        if self.exited().is_none() {
            self.finish(lp, code);
        }
    }

    /// Whether `process.exit` ends the OS process (`tljs`), not only the
    /// program (an embedding).
    pub(crate) fn exits_process(&self) -> bool {
        self.exit_process
    }

    /// `process.exit(code)`, after the `exit` listeners ran: the OS
    /// process ends (`tljs`), or the loop stops and no more JavaScript runs.
    /// Called by the natives, inside the loop's scope.
    pub(crate) fn exit(&self, code: i32) {
        // Ended already (terminated from a native the program called):
        // its status stays, and the OS process goes on.
        if self.exited().is_some() {
            return;
        }
        if self.exit_process {
            let _ = std::io::Write::flush(&mut std::io::stdout());
            std::process::exit(code);
        }
        EventLoop::with_current(|lp| {
            self.finish(lp, code);
            lp.stop();
        });
    }

    /// The program ended with `code`: no more JavaScript runs, and
    /// everything the host has on the loop leaves it (its timeouts,
    /// intervals and immediates are cleared and their storage freed), as
    /// the loop would be without a process that is gone. Ticks and
    /// microtasks already queued drain as no-ops.
    fn finish(&self, lp: &mut EventLoop, code: i32) {
        self.exited.set(Some(code));
        let (timers, immediates) = {
            let mut s = self.state.borrow_mut();
            (
                std::mem::take(&mut s.timers),
                std::mem::take(&mut s.immediates),
            )
        };
        for t in timers.into_values() {
            let _ = lp.release_timeout(t);
        }
        for i in immediates.into_values() {
            let _ = lp.clear_immediate(i);
        }
        self.stop_listening(lp);
    }

    /// The host no longer takes uncaught exceptions; the loop's handler
    /// goes when no host on the thread does.
    fn stop_listening(&self, lp: &mut EventLoop) {
        if self.listening.replace(false) {
            let n = LISTENING.with(|n| {
                n.set(n.get().saturating_sub(1));
                n.get()
            });
            if n == 0 {
                uninstall_router(lp);
            }
        }
    }

    /// Runs `f`, which runs the engine's JavaScript, in the loop's scope.
    /// If the engine stopped that JavaScript on its own
    /// ([`Engine::interrupted`]), the program ends here: see
    /// [`stopped`](Self::stopped).
    fn run_engine<T>(&self, lp: &mut EventLoop, f: impl FnOnce(&E) -> T) -> T {
        self.attach_clock(lp);
        struct Engaged<'a>(&'a Cell<u32>);
        impl Drop for Engaged<'_> {
            fn drop(&mut self) {
                self.0.set(self.0.get() - 1);
            }
        }
        self.engaged.set(self.engaged.get() + 1);
        let r = {
            let _engaged = Engaged(&self.engaged);
            lp.scope(|| f(&self.engine))
        };
        if self.exited().is_none()
            && let Some(t) = self.engine.interrupted()
        {
            self.stopped(lp, &t);
        }
        r
    }

    /// The engine stopped the program's JavaScript (its run budget ran
    /// out, or the embedder's interrupt handler said so): the program ends
    /// at once with status 1, as a process a watchdog kills. The report
    /// is printed; none of the program's JavaScript runs again, not its
    /// `uncaughtException` listeners (which could otherwise take the
    /// interrupt and carry on) nor its `exit` listeners (which would get a
    /// fresh budget to spin in); its timers and immediates leave the loop
    /// and the loop stops, as at `process.exit(1)`. With `exit_process`
    /// the OS process ends with 1.
    fn stopped(&self, lp: &mut EventLoop, t: &Thrown) {
        if let Some(report) = self.fatal_report.take() {
            self.eprint(&report);
        }
        self.eprint(&format!("{t}\n\nNode.js v20 (tljs)"));
        if self.exit_process {
            let _ = std::io::Write::flush(&mut std::io::stdout());
            std::process::exit(1);
        }
        self.finish(lp, 1);
        lp.stop();
    }

    /// A line of the host's own on the program's stderr: through the
    /// engine, so that an embedder's console sink gets it.
    fn eprint(&self, line: &str) {
        self.engine.write(Stream::Stderr, &format!("{line}\n"));
    }

    /// Whether `owner` is this host.
    fn is(&self, owner: &Rc<dyn Owner>) -> bool {
        std::ptr::addr_eq(Rc::as_ptr(owner), self as *const Self)
    }

    /// A failure of this host's JavaScript, as the loop carries it.
    fn own(&self, thrown: Thrown) -> BoxError {
        BoxError::from(Own {
            thrown,
            host: self.id,
        })
    }

    /// A callback's result: an exception, unless the program has exited
    /// (the exception is then the engine's way to stop the script).
    fn result(&self, r: Result<(), Thrown>) -> Result<(), BoxError> {
        match r {
            Err(_) if self.exited().is_some() => Ok(()),
            r => r.map_err(|t| self.own(t)),
        }
    }

    /// Runs the main script, then the loop until it is done, as `node
    /// FILE` does: `beforeExit` while it schedules more work, then `exit`.
    /// An uncaught exception is printed to stderr as Node prints it (less
    /// the source line). Returns the process's exit status.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "process.on('exit', c => { globalThis.at = c }); setTimeout(() => process.exitCode = 4, 20)";
    /// assert_eq!(host.run_main(&mut lp, "main.js", src), 4);
    /// assert_eq!(lp.now(), 20);
    /// let at: i32 = host.context().with(|c| c.globals().get("at")).unwrap();
    /// assert_eq!(at, 4);
    /// ```
    pub fn run_main(self: &Rc<Self>, lp: &mut EventLoop, name: &str, source: &str) -> i32 {
        let r = self.eval_main_only(lp, name, source);
        self.run_with(lp, r)
    }

    /// Runs the loop as Node does after the main script: until nothing
    /// refed is left, then `beforeExit` while its listeners schedule more
    /// work, then `exit`. An uncaught exception is printed to stderr as
    /// Node prints it (less the source line). Returns the exit status:
    /// `process.exitCode`, 1 after an uncaught exception, 7 if an
    /// `uncaughtException` listener threw, or the code given to
    /// `process.exit` (which, when the host does not end the OS process,
    /// stops the loop and ends this call); 70 when the loop fails for a
    /// reason that is not the program's (an application callback's failure,
    /// below, or [`timerloop::Error::Reentrant`] when called from inside a
    /// loop callback). An application's `lp.stop()` does not end it: the
    /// loop is run again.
    ///
    /// Other programs on the loop: another host's fatal exception ends
    /// that host (its `exit` listeners hear 1) and this run goes on; a
    /// failure of the application's own callbacks (with no uncaught-error
    /// handler to take it) is not this program's: it is printed
    /// (`tljs: ...`) and this call returns 70 without ending the program,
    /// which a later `run` continues. The application that needs that
    /// error itself runs the loop with [`EventLoop::run`] and calls `run`
    /// once that returned `Ok`. Under the application's own
    /// [`EventLoop::run`], though, this program's uncaught exception is
    /// only that call's `Err`: the program is not ended (no `exit`
    /// listeners, [`exited`](Self::exited) stays `None`, its timers stay),
    /// and a later `run` continues it; only this method (or an
    /// `uncaughtException` listener) gives Node's fatal ending.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// host.eval_main(
    ///     &mut lp,
    ///     "main.js",
    ///     "process.on('beforeExit', () => { if (!process.exitCode) setTimeout(() => process.exitCode = 2, 7) })",
    /// )
    /// .unwrap();
    /// assert_eq!(host.run(&mut lp), 2);
    /// assert_eq!(lp.now(), 7);
    /// ```
    pub fn run(self: &Rc<Self>, lp: &mut EventLoop) -> i32 {
        self.run_with(lp, Ok(()))
    }

    fn run_with(self: &Rc<Self>, lp: &mut EventLoop, mut r: Result<(), timerloop::Error>) -> i32 {
        loop {
            if let Some(code) = self.exited() {
                return code;
            }
            if r.is_ok() {
                r = lp.run();
            }
            if let Some(code) = self.exited() {
                return code;
            }
            match r {
                // Stopped (by another host's end, or the application):
                // the loop goes on; `beforeExit` is for an empty loop.
                Ok(()) if lp.is_alive() => continue,
                Ok(()) => {}
                Err(timerloop::Error::Uncaught(e)) => match owner_of(&e) {
                    Some(o) if self.is(&o) => return self.die(lp, &e.message(), 1),
                    Some(o) => {
                        // Another host's program failed: it ends, this
                        // one goes on.
                        o.die_of(lp, &e.message());
                        r = Ok(());
                        continue;
                    }
                    None => {
                        // The application's own callback failed: not this
                        // program's exception, so it does not end it.
                        self.eprint(&format!("tljs: {e}"));
                        return 70;
                    }
                },
                Err(e) => {
                    self.eprint(&format!("tljs: {e}"));
                    return 70;
                }
            }
            // A top-level callback: its ticks and microtasks drain.
            let h = self.clone();
            r = lp.enter(move |lp| {
                let r = h.run_engine(lp, |e| e.emit_process("beforeExit", None));
                h.after_js(lp);
                h.result(r)
            });
            if let Some(code) = self.exited() {
                return code;
            }
            if r.is_ok() && !lp.is_alive() {
                break;
            }
        }
        let r = self.run_engine(lp, |e| e.emit_process("exit", None));
        if let Some(code) = self.exited() {
            return code;
        }
        let code = match r {
            Ok(()) => self.after_exit_listeners(lp),
            Err(t) => self.exit_listener_threw(lp, &t),
        };
        if let Some(code) = self.exited() {
            return code;
        }
        self.finish(lp, code);
        code
    }

    /// The `exit` listeners returned at the normal end. Node emits `exit`
    /// through `MakeCallback`, whose scope, as it closes, runs the
    /// microtasks the listeners queued and checks for unhandled rejections
    /// (`nextTick` is a no-op by then): a microtask's or a rejection's
    /// error is an uncaught exception (`uncaughtException` listeners may
    /// take it, else it is printed and the status is `process.exitCode`,
    /// else 1), and a microtask may still set `process.exitCode` or call
    /// `process.exit`.
    fn after_exit_listeners(self: &Rc<Self>, lp: &mut EventLoop) -> i32 {
        let h = self.clone();
        let r = lp.enter(move |lp| {
            h.after_js(lp);
            Ok::<(), BoxError>(())
        });
        if let Some(code) = self.exited() {
            return code;
        }
        match r {
            Ok(()) => self.engine.exit_code().unwrap_or(0),
            Err(timerloop::Error::Uncaught(e)) => {
                self.eprint(&format!("{}\n\nNode.js v20 (tljs)", e.message()));
                self.engine.exit_code().unwrap_or(1)
            }
            Err(e) => {
                self.eprint(&format!("tljs: {e}"));
                70
            }
        }
    }

    /// An `exit` listener threw at the normal end: as in Node, an uncaught
    /// exception that `uncaughtException` listeners may take (the status is
    /// then `process.exitCode`), else printed, and the status is
    /// `process.exitCode` if set, else 1; `exit` is not emitted again.
    fn exit_listener_threw(&self, lp: &mut EventLoop, t: &Thrown) -> i32 {
        let r = self.run_engine(lp, |e| e.emit_uncaught(&t.0));
        if let Some(code) = self.exited() {
            return code;
        }
        match r {
            Ok(true) => self.engine.exit_code().unwrap_or(0),
            Ok(false) => {
                self.eprint(&format!("{t}\n\nNode.js v20 (tljs)"));
                self.engine.exit_code().unwrap_or(1)
            }
            Err(t) => {
                self.eprint(&t.0);
                7
            }
        }
    }

    /// A fatal exception, in Node's order (`createOnGlobalUncaughtException`
    /// with no listener, then `TriggerUncaughtException`): `exit` emitted
    /// with `code` (unless an exit is under way, whose code stays), then
    /// the exception printed, and the status (`process.exitCode` if a
    /// listener set it). An `exit` listener that throws is ignored
    /// silently, and one that calls `process.exit` ends the program before
    /// the report, as in Node.
    fn die(&self, lp: &mut EventLoop, message: &str, code: i32) -> i32 {
        self.fatal_exit(lp, code, Some(message))
    }

    /// [`die`](Self::die), with the exception printed (`report`) or, with
    /// `None`, handed to the application. A listener that throws is
    /// ignored (Node's `try { .. } catch {}` around the emit).
    fn fatal_exit(&self, lp: &mut EventLoop, code: i32, report: Option<&str>) -> i32 {
        let report = report.map(|message| format!("{message}\n\nNode.js v20 (tljs)"));
        *self.fatal_report.borrow_mut() = report;
        let _ignored = self.run_engine(lp, |e| e.emit_process("exit", Some(code)));
        let report = self.fatal_report.take();
        if let Some(code) = self.exited() {
            // A listener called process.exit (unreported, as in Node), or
            // the engine stopped one (`stopped` printed the report).
            return code;
        }
        if let Some(report) = report {
            self.eprint(&report);
        }
        let code = self.engine.exit_code().unwrap_or(code);
        self.finish(lp, code);
        code
    }

    /// `process.on('uncaughtException')` gained its first listener (`on`)
    /// or lost its last: the loop reports failures to the listeners and
    /// goes on, as Node does.
    ///
    /// The loop has one uncaught-error handler for all its hosts and the
    /// application. While any host on the thread has listeners, the handler
    /// is the hosts' own router, which tells a host's failures by the error
    /// the host returns (its JavaScript's exceptions, and unhandled
    /// rejections, from its callbacks, [`eval_main`](Self::eval_main) and
    /// [`callback`](crate::QuickJsHost::callback)):
    /// - a host's own exception goes to that host's listeners, or, if it
    ///   has none, ends that host's program with 1 (and stops the loop),
    ///   never to another host's;
    /// - any other failure (the application's own callbacks, a panic) goes
    ///   to the handler the application had set, or, with none, is
    ///   declined ([`EventLoop::decline_uncaught`]): fatal as if no host
    ///   were there, so [`EventLoop::run`] returns it
    ///   ([`timerloop::Error::Uncaught`], the callback's own error inside).
    ///
    /// An uncaught-error handler the application set before stays behind
    /// the router: it gets every failure that is no host's while hosts
    /// listen, and is the loop's handler again after. One it sets after
    /// replaces the router, and then gets the hosts' exceptions too (as
    /// their message), until a host next gains its first listener: the
    /// router then goes in front of it again.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "process.on('uncaughtException', e => { globalThis.caught = e.message });
    ///     setTimeout(() => { throw new Error('boom') }, 1); setTimeout(() => {}, 2)";
    /// host.eval_main(&mut lp, "main.js", src).unwrap();
    /// assert_eq!(host.run(&mut lp), 0);
    /// assert_eq!(lp.now(), 2); // the loop went on
    /// let caught: String = host.context().with(|c| c.globals().get("caught")).unwrap();
    /// assert_eq!(caught, "boom");
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn catch_uncaught(self: &Rc<Self>, on: bool) {
        EventLoop::with_current(|lp| {
            if !on {
                self.stop_listening(lp);
                return;
            }
            if self.exited().is_some() || self.listening.replace(true) {
                return;
            }
            LISTENING.with(|n| n.set(n.get() + 1));
            install_router(lp);
        });
    }

    /// Takes an async id for a resource JavaScript makes with no loop
    /// handle behind it (`queueMicrotask`'s `AsyncResource` in Node), from
    /// the counter Timeouts, Immediates and ticks draw from: the ids a
    /// program reads off its Timeouts stay Node's.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "globalThis.gap = (() => { const a = +setTimeout(() => {}, 1); \
    ///            queueMicrotask(() => {}); return +setTimeout(() => {}, 1) - a; })()";
    /// host.eval_main(&mut lp, "main.js", src).unwrap();
    /// let gap: u32 = host.context().with(|c| c.globals().get("gap")).unwrap();
    /// assert_eq!(gap, 2);
    /// ```
    pub fn async_id(&self) -> u32 {
        self.new_id()
    }

    /// `fs.stat`: an I/O request, completed at once, so its callback runs
    /// in the next poll phase, in the order of the calls, as Node's warm
    /// thread pool at rest completes a stat by then (the stat itself is
    /// made when the callback runs). Completed from a thread spawned for
    /// each call, two stats came back in either order; Node's pool may
    /// reorder them too, but only under load.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "require('fs').stat('.', (err, st) => { globalThis.dir = err === null && st.isDirectory() })";
    /// host.eval_main(&mut lp, "main.js", src).unwrap();
    /// assert_eq!(host.run(&mut lp), 0);
    /// let dir: bool = host.context().with(|c| c.globals().get("dir")).unwrap();
    /// assert!(dir);
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn stat(self: &Rc<Self>) -> u32 {
        let id = self.new_id();
        if self.exited().is_some() {
            return id;
        }
        // Weakly, as the loop's other callbacks: a host dropped meanwhile
        // is gone, and its callback runs nothing.
        let w = Rc::downgrade(self);
        EventLoop::with_current(|lp| {
            lp.completion(move |lp| w.upgrade().map_or(Ok(()), |h| h.call(lp, Kind::Io, id)))
                .complete();
        });
        id
    }

    /// `process.on(signal)`'s first listener (`on`), or its last gone
    /// (`!on`): Node's signal handle, which keeps no loop alive (Node's is
    /// unrefed). While a listener wants it, the signal calls the engine's
    /// [`Kind::Signal`] dispatch with its number, in a poll phase; once
    /// none does, it does what it would by default (a `SIGINT` ends the
    /// process). Returns the handle's async id (`on`; 0 otherwise).
    ///
    /// Only a host that ends the OS process (`tljs`) watches signals: an
    /// embedded program's listener is kept but never called, so it cannot
    /// take the application's signals.
    ///
    /// # Errors
    ///
    /// The errno, as Node's `uv_signal_start`: `EINVAL` for a signal no
    /// program may take (`SIGKILL`, `SIGSTOP`, and here also `SIGILL`,
    /// `SIGFPE` and `SIGSEGV`) or no signal at all. The id is taken all
    /// the same, as Node's handle takes it.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// assert_eq!(lp.scope(|| host.watch_signal(9, true)), Err(22)); // SIGKILL
    /// assert!(lp.scope(|| host.watch_signal(2, true)).is_ok()); // SIGINT, not watched here
    /// assert!(!lp.is_alive()); // a signal keeps no loop alive
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn watch_signal(self: &Rc<Self>, signum: i32, on: bool) -> Result<u32, i32> {
        if !on {
            if let Some(wanted) = self.state.borrow_mut().signals.get_mut(&signum) {
                *wanted = false;
            }
            return Ok(0);
        }
        let id = self.new_id();
        if !crate::signals::can_watch(signum) {
            return Err(crate::signals::EINVAL);
        }
        if !self.exit_process || self.exited().is_some() {
            return Ok(id);
        }
        if let Some(wanted) = self.state.borrow_mut().signals.get_mut(&signum) {
            *wanted = true;
            return Ok(id);
        }
        let w = self.me.clone();
        EventLoop::with_current(|lp| {
            crate::signals::watch(lp, signum, move |lp, n| match w.upgrade() {
                Some(h) => h.signal_arrived(lp, n),
                None => Ok(()),
            })
        })?;
        self.state.borrow_mut().signals.insert(signum, true);
        Ok(id)
    }

    fn signal_arrived(self: &Rc<Self>, lp: &mut EventLoop, signum: i32) -> Result<(), BoxError> {
        let wanted = self.state.borrow().signals.get(&signum).copied();
        match wanted {
            Some(true) => self.call(lp, Kind::Signal, signum.unsigned_abs()),
            _ => {
                crate::signals::default_action(signum);
                Ok(())
            }
        }
    }

    fn call(self: &Rc<Self>, lp: &mut EventLoop, kind: Kind, id: u32) -> Result<(), BoxError> {
        if self.exited().is_some() {
            return Ok(());
        }
        let r = self.run_engine(lp, |e| e.dispatch(kind, id));
        self.after_js(lp);
        self.result(r)
    }

    /// Runs `f` (which runs JavaScript) as part of a loop callback: inside
    /// the loop's scope, so that the globals reach the loop, with the
    /// engine's jobs queued behind it. Nothing runs once the program exited.
    pub(crate) fn js<T>(
        self: &Rc<Self>,
        lp: &mut EventLoop,
        f: impl FnOnce() -> Result<T, Thrown>,
    ) -> Result<Option<T>, BoxError> {
        if self.exited().is_some() {
            return Ok(None);
        }
        let r = self.run_engine(lp, |_| f());
        self.after_js(lp);
        match r {
            Ok(v) => Ok(Some(v)),
            Err(e) => self.result(Err(e)).map(|()| None),
        }
    }

    fn after_js(self: &Rc<Self>, lp: &mut EventLoop) {
        if self.exited().is_some() {
            return;
        }
        if !self.pump_queued.get() && self.engine.has_pending_job() {
            self.pump_queued.set(true);
            let h = self.clone();
            lp.queue_microtask(move |lp| h.pump(lp));
        }
    }

    /// After JavaScript that ran in Node's tick loop's condition (the
    /// rejection listeners): the engine's jobs wait behind the ticks it
    /// queued.
    fn pump_behind_ticks(self: &Rc<Self>, lp: &mut EventLoop) {
        if self.exited().is_none() && !self.pump_queued.get() && self.engine.has_pending_job() {
            self.pump_queued.set(true);
            let h = self.clone();
            lp.next_tick(move |lp| lp.queue_microtask(move |lp| h.pump(lp)));
        }
    }

    fn pump(self: &Rc<Self>, lp: &mut EventLoop) -> Result<(), BoxError> {
        self.pump_queued.set(false);
        if self.exited().is_some() {
            return Ok(());
        }
        let r = self.run_engine(lp, |e| e.run_pending_job());
        self.after_js(lp);
        self.result(r.map(|_| ()))
    }

    /// The engine saw a promise rejected with no handler: check it where
    /// Node's `processPromiseRejections` does, once the `nextTick` queue
    /// and the microtasks are both empty. A handler attached before then
    /// takes the promise off the engine's list.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "process.on('unhandledRejection', r => { globalThis.reason = r });
    ///     Promise.reject(7); Promise.reject(8).catch(() => {})";
    /// host.eval_main(&mut lp, "main.js", src).unwrap();
    /// assert_eq!(host.run(&mut lp), 0);
    /// let reason: i32 = host.context().with(|c| c.globals().get("reason")).unwrap();
    /// assert_eq!(reason, 7);
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn rejection_pending(self: &Rc<Self>) {
        if self.rejections_queued.replace(true) {
            self.rejections_again.set(true);
            return;
        }
        let h = self.clone();
        EventLoop::with_current(|lp| lp.queue_microtask(move |lp| h.check_rejections(lp, false)));
    }

    /// A microtask that waits, by queueing itself again, until no job and
    /// no tick is left, then reports the unhandled rejections one at a
    /// time (each to `uncaughtException` if there are listeners): the next
    /// one is reported right after the previous, whatever the listener
    /// queued, as in one `processPromiseRejections` call.
    fn check_rejections(self: &Rc<Self>, lp: &mut EventLoop, now: bool) -> Result<(), BoxError> {
        self.rejection_failing.set(false);
        if self.exited().is_some() {
            return Ok(());
        }
        let h = self.clone();
        if !now && (self.pump_queued.get() || self.engine.has_pending_job()) {
            lp.queue_microtask(move |lp| h.check_rejections(lp, false));
            return Ok(());
        }
        if !now && lp.stats().ticks > 0 {
            lp.next_tick(move |lp| {
                lp.queue_microtask(move |lp| h.check_rejections(lp, false));
            });
            return Ok(());
        }
        // `unhandledRejection` listeners run JavaScript here, from the
        // condition of Node's tick loop: the ticks they queue run before
        // their promise jobs, so the pump goes behind those ticks.
        // Which step failed: a `rejectionHandled` listener's throw leaves
        // Node's processPromiseRejections before its batch is taken, so
        // the rest waits for the next check (behind the ticks).
        let (r, handled_threw) = self.run_engine(lp, |e| match e.emit_rejections_handled() {
            Err(t) => (Some(t), true),
            Ok(()) => (e.take_unhandled_rejection(), false),
        });
        if self.exited().is_some() {
            return Ok(());
        }
        self.pump_behind_ticks(lp);
        match r {
            Some(t) => {
                if handled_threw {
                    self.rejections_again.set(true);
                    self.rejections_done(lp);
                } else if self.engine.rejection_batch_pending() {
                    // The rest of the batch follows at once; the
                    // microtask queue is empty here, so the next check is
                    // the next microtask.
                    lp.queue_microtask(move |lp| h.check_rejections(lp, true));
                } else {
                    self.rejections_done(lp);
                }
                self.rejection_failing.set(true);
                Err(self.own(t))
            }
            None => {
                self.rejections_done(lp);
                Ok(())
            }
        }
    }

    /// A check of the rejections is over: another follows, behind the
    /// ticks and the pump queued since, as the first check of any turn
    /// waits for them, if a rejection came meanwhile.
    fn rejections_done(self: &Rc<Self>, lp: &mut EventLoop) {
        if self.rejections_again.replace(false) {
            let h = self.clone();
            lp.next_tick(move |lp| {
                lp.queue_microtask(move |lp| h.check_rejections(lp, false));
            });
        } else {
            self.rejections_queued.set(false);
        }
    }

    /// The next id. After about 4.3 billion (70 minutes at a million
    /// timers, immediates and ticks a second) they start again from 2,
    /// skipping any a timeout or immediate still holds: a new timer never
    /// takes a live one's id (and with it its loop timer's callback).
    fn new_id(&self) -> u32 {
        let mut s = self.state.borrow_mut();
        loop {
            let id = s.next_id;
            match id.checked_add(1) {
                Some(next) => s.next_id = next,
                None => {
                    s.next_id = 2;
                    s.wrapped = true;
                }
            }
            if !s.wrapped || !(s.timers.contains_key(&id) || s.immediates.contains_key(&id)) {
                return id;
            }
        }
    }

    fn timeout(&self, id: u32) -> Option<Timeout> {
        self.state.borrow().timers.get(&id).copied()
    }

    /// `setTimeout`/`setInterval`: `after` is the number Node has after
    /// `after *= 1`; the loop coerces it as Node does.
    ///
    /// Called in the loop's scope (as the natives are):
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let a = lp.scope(|| host.set_timer(10.0, false));
    /// let b = lp.scope(|| host.set_timer(-5.0, false)); // 1 ms, as in Node
    /// assert_eq!(b, a + 1);
    /// assert_eq!(host.run(&mut lp), 0);
    /// assert_eq!(lp.now(), 10);
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn set_timer(self: &Rc<Self>, after: f64, repeat: bool) -> u32 {
        let id = self.new_id();
        if self.exited().is_some() {
            return id; // a program that has ended schedules nothing
        }
        let w = self.me.clone();
        let t = EventLoop::with_current(|lp| {
            let f = move |lp: &mut EventLoop| match w.upgrade() {
                Some(h) => h.call(lp, Kind::Timeout, id),
                // The host was dropped: its timer goes (an interval too).
                None => {
                    if let Some(t) = lp.current_timeout() {
                        let _ = lp.release_timeout(t);
                    }
                    Ok(())
                }
            };
            let t = if repeat {
                lp.set_interval(after, f)
            } else {
                lp.set_timeout(after, f)
            };
            let _ = lp.keep_timeout(t);
            t
        });
        self.state.borrow_mut().timers.insert(id, t);
        id
    }

    /// `clearTimeout`: the loop forgets the timer (its storage is kept
    /// until [`release`](Self::release)).
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let id = lp.scope(|| host.set_timer(10.0, false));
    /// assert!(lp.is_alive());
    /// lp.scope(|| host.clear(id));
    /// assert!(!lp.is_alive());
    /// assert_eq!(host.run(&mut lp), 0);
    /// assert_eq!(lp.now(), 0);
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn clear(&self, id: u32) {
        if let Some(t) = self.timeout(id) {
            EventLoop::with_current(|lp| {
                let _ = lp.clear_timeout(t);
            });
        }
    }

    /// `timeout.refresh()`.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "const t = setTimeout(() => {}, 10); setTimeout(() => t.refresh(), 6)";
    /// assert_eq!(host.run_main(&mut lp, "main.js", src), 0);
    /// assert_eq!(lp.now(), 16); // 6 + 10
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn refresh(&self, id: u32) {
        if let Some(t) = self.timeout(id) {
            EventLoop::with_current(|lp| {
                let _ = lp.refresh(t);
            });
        }
    }

    /// `timeout.ref()` (`on`) or `timeout.unref()`.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let id = lp.scope(|| host.set_timer(10.0, false));
    /// lp.scope(|| host.set_ref(id, false));
    /// assert!(!lp.is_alive()); // an unrefed timeout keeps no loop alive
    /// lp.scope(|| host.set_ref(id, true));
    /// assert!(lp.is_alive());
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn set_ref(&self, id: u32, on: bool) {
        if let Some(t) = self.timeout(id) {
            EventLoop::with_current(|lp| {
                let _ = if on {
                    lp.ref_timeout(t)
                } else {
                    lp.unref_timeout(t)
                };
            });
        }
    }

    /// `timeout.hasRef()`.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let id = lp.scope(|| host.set_timer(10.0, false));
    /// assert!(lp.scope(|| host.has_ref(id)));
    /// lp.scope(|| host.set_ref(id, false));
    /// assert!(!lp.scope(|| host.has_ref(id)));
    /// assert!(!lp.scope(|| host.has_ref(12345))); // no such timeout
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn has_ref(&self, id: u32) -> bool {
        self.timeout(id)
            .is_some_and(|t| EventLoop::with_current(|lp| lp.timeout_has_ref(t)))
    }

    /// `timeout._idleStart`: the loop time its duration counts from
    /// ([`EventLoop::timeout_start`]); for an interval whose callback is
    /// about to run, the start of that run, which its next counts from.
    /// `NaN` for no such timeout.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// lp.block(3);
    /// let id = lp.scope(|| host.set_timer(10.0, false));
    /// assert_eq!(lp.scope(|| host.timer_start(id)), 3.0);
    /// assert!(lp.scope(|| host.timer_start(12345)).is_nan());
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn timer_start(&self, id: u32) -> f64 {
        self.timeout(id)
            .and_then(|t| EventLoop::with_current(|lp| lp.timeout_start(t)))
            .map_or(f64::NAN, |ms| ms as f64)
    }

    /// The timeout's JavaScript object is gone: free its storage.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let id = lp.scope(|| host.set_timer(1.0, false));
    /// lp.run().unwrap();
    /// lp.scope(|| host.refresh(id)); // a fired timeout is kept: it runs again
    /// assert!(lp.is_alive());
    /// lp.run().unwrap();
    /// lp.scope(|| host.release(id));
    /// lp.scope(|| host.refresh(id)); // gone: nothing to refresh
    /// assert!(!lp.is_alive());
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn release(&self, id: u32) {
        let t = self.state.borrow_mut().timers.remove(&id);
        if let Some(t) = t {
            EventLoop::with_current(|lp| {
                let _ = lp.release_timeout(t);
            });
        }
    }

    /// `setImmediate`.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let id = lp.scope(|| host.set_immediate());
    /// assert!(lp.scope(|| host.immediate_has_ref(id)));
    /// assert_eq!(host.run(&mut lp), 0);
    /// assert!(!lp.scope(|| host.immediate_has_ref(id))); // it ran
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn set_immediate(self: &Rc<Self>) -> u32 {
        let id = self.new_id();
        if self.exited().is_some() {
            return id;
        }
        let w = self.me.clone();
        let i = EventLoop::with_current(|lp| {
            lp.set_immediate(move |lp| {
                let Some(h) = w.upgrade() else { return Ok(()) };
                h.state.borrow_mut().immediates.remove(&id);
                h.call(lp, Kind::Immediate, id)
            })
        });
        self.state.borrow_mut().immediates.insert(id, i);
        id
    }

    fn immediate(&self, id: u32) -> Option<Immediate> {
        self.state.borrow().immediates.get(&id).copied()
    }

    /// `clearImmediate`.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let id = lp.scope(|| host.set_immediate());
    /// assert!(lp.is_alive());
    /// lp.scope(|| host.clear_immediate(id));
    /// assert!(!lp.is_alive());
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn clear_immediate(&self, id: u32) {
        let i = self.state.borrow_mut().immediates.remove(&id);
        if let Some(i) = i {
            EventLoop::with_current(|lp| {
                let _ = lp.clear_immediate(i);
            });
        }
    }

    /// `immediate.ref()` (`on`) or `immediate.unref()`.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let id = lp.scope(|| host.set_immediate());
    /// lp.scope(|| host.set_immediate_ref(id, false));
    /// assert!(!lp.is_alive());
    /// lp.scope(|| host.set_immediate_ref(id, true));
    /// assert!(lp.is_alive());
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn set_immediate_ref(&self, id: u32, on: bool) {
        if let Some(i) = self.immediate(id) {
            EventLoop::with_current(|lp| {
                let _ = if on {
                    lp.ref_immediate(i)
                } else {
                    lp.unref_immediate(i)
                };
            });
        }
    }

    /// `immediate.hasRef()`.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "globalThis.refs = []; const im = setImmediate(() => {});
    ///     refs.push(im.hasRef()); im.unref(); refs.push(im.hasRef())";
    /// host.eval_main(&mut lp, "main.js", src).unwrap();
    /// let refs: Vec<bool> = host.context().with(|c| c.eval("refs")).unwrap();
    /// assert_eq!(refs, [true, false]);
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn immediate_has_ref(&self, id: u32) -> bool {
        self.immediate(id)
            .is_some_and(|i| EventLoop::with_current(|lp| lp.immediate_has_ref(i)))
    }

    /// Whether the host runs JavaScript now, in the loop's scope (not an
    /// embedder's bare `ctx.with`, where no loop is current).
    pub(crate) fn engaged(&self) -> bool {
        self.engaged.get() > 0
    }

    /// `process.nextTick`: one loop tick, which calls the engine's next
    /// queued tick callback. Returns the tick's async id (the callback's
    /// `executionAsyncId`).
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "globalThis.log = []; setImmediate(() => log.push('immediate'));
    ///     process.nextTick(() => log.push('tick')); log.push('main')";
    /// assert_eq!(host.run_main(&mut lp, "main.js", src), 0);
    /// let log: String = host.context().with(|c| c.eval("log.join()")).unwrap();
    /// assert_eq!(log, "main,tick,immediate");
    /// ```
    ///
    /// # Panics
    ///
    /// Outside the loop's scope ([`EventLoop::scope`], where the natives
    /// are called): no loop is current there (see
    /// [`EventLoop::with_current`]).
    pub fn tick(self: &Rc<Self>) -> u32 {
        let id = self.new_id();
        if self.exited().is_some() {
            return id;
        }
        let h = self.clone();
        EventLoop::with_current(|lp| lp.next_tick(move |lp| h.call(lp, Kind::Tick, 0)));
        id
    }

    /// `performance.now()`: milliseconds since the host was made.
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let t: f64 = host.context().with(|c| c.eval("performance.now()")).unwrap();
    /// assert!(t >= 0.0 && t <= host.now_ms());
    /// ```
    pub fn now_ms(&self) -> f64 {
        // From nanoseconds: a whole number of milliseconds comes out whole
        // (`as_secs_f64() * 1e3` can miss it by an ulp).
        self.elapsed().as_nanos() as f64 / 1e6
    }

    /// `process.hrtime.bigint()` as a number of nanoseconds: as Node's,
    /// from the system's monotonic clock (time since boot on Linux), then
    /// moving as [`now_ms`](Self::now_ms) does (with a followed virtual
    /// clock, by its time).
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let t: f64 = host.context().with(|c| c.eval("Number(process.hrtime.bigint())")).unwrap();
    /// assert!(t >= 0.0 && t <= host.hrtime_ns());
    /// ```
    pub fn hrtime_ns(&self) -> f64 {
        self.hrtime_origin + self.elapsed().as_nanos() as f64
    }

    /// `Date.now()`: whole milliseconds since the Unix epoch, from the system
    /// clock; with [`Clocks::Loop`](crate::Clocks::Loop) on a virtual
    /// clock, the system clock's reading when the host first ran
    /// JavaScript on the loop plus the virtual time since, so a program's
    /// dates move with its timers.
    ///
    /// ```
    /// use timerloop_js::{Clocks, Options, QuickJsHost};
    /// let host = QuickJsHost::create_with(Options { clocks: Clocks::Loop, ..Default::default() }).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// host.eval_main(&mut lp, "main.js", "globalThis.t0 = Date.now()").unwrap();
    /// lp.run_until(60_000).unwrap(); // a virtual minute, at once
    /// let t0: f64 = host.context().with(|c| c.globals().get("t0")).unwrap();
    /// assert_eq!(host.date_now_ms() - t0, 60_000.0);
    /// ```
    pub fn date_now_ms(&self) -> f64 {
        match &*self.loop_clock.borrow() {
            Some(c) => {
                let since = c.clock.now().saturating_sub(c.at);
                c.wall_ms + (since.as_micros() / 1000) as f64
            }
            None => system_ms(),
        }
    }
}

/// The system clock in whole milliseconds since the Unix epoch (what
/// `Date.now()` reads); 0 before the epoch.
fn system_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_millis() as f64)
}

/// The system's monotonic clock in nanoseconds (`CLOCK_MONOTONIC`, which
/// `Instant` and libuv's `uv_hrtime` read: time since boot on Linux); 0
/// where there is none.
#[cfg(unix)]
fn monotonic_ns() -> f64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .map_or(0.0, |t| t.tv_sec() as f64 * 1e9 + t.tv_nsec() as f64)
}

#[cfg(not(unix))]
fn monotonic_ns() -> f64 {
    0.0
}

/// A followed virtual clock, and where the host's clocks stood when it
/// was attached.
struct LoopClock {
    clock: timerloop::VirtualClock,
    /// The virtual clock's reading then.
    at: std::time::Duration,
    /// `Date.now()` then (wall).
    wall_ms: f64,
    /// Time since the host was made, then (wall).
    since_start: std::time::Duration,
}

#[cfg(test)]
mod tests {
    /// Past `u32::MAX` the ids start again from 2 and skip those a live
    /// timeout or immediate holds: the interval made first keeps id 2 and
    /// its own callback.
    #[test]
    fn ids_past_u32_max_skip_the_ones_in_use() {
        let host = crate::QuickJsHost::create_with(Default::default()).unwrap();
        let mut lp = timerloop::EventLoop::with_virtual_clock();
        let interval = lp.scope(|| host.set_timer(10.0, true));
        let immediate = lp.scope(|| host.set_immediate());
        host.state.borrow_mut().next_id = u32::MAX;
        let ids: Vec<u32> = (0..3)
            .map(|_| lp.scope(|| host.set_timer(5.0, false)))
            .collect();
        assert_eq!((interval, immediate), (2, 3));
        assert_eq!(ids, [u32::MAX, 4, 5]);
        let state = host.state.borrow();
        assert_eq!(state.timers.len(), 4, "no timer replaced another");
        assert!(state.immediates.contains_key(&3));
    }
}
