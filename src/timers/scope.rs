//! Callback scopes: how user code is entered, what drains when it returns,
//! and where failures are reported (Node's `InternalCallbackScope` and
//! `process._fatalException`, R10.4, §7).
//!
//! Ground rules:
//! - every user callback runs through [`EventLoop::invoke`], which turns a
//!   panic into a [`Cause`]: nothing a user writes unwinds through the
//!   loop;
//! - `depth` counts open scopes; ticks and microtasks drain only when the
//!   outermost one closes, and never after a fatal failure;
//! - a failure is reported once, at the boundary Node reports it: to the
//!   uncaught-error handler if there is one (the loop goes on as Node
//!   does), else it becomes fatal: the loop halts and `run` returns it.
#![forbid(unsafe_code)]

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use super::error::{self, BoxError, CallbackError, CallbackKind, CallbackResult, Cause, Error};
use super::thin::ThinOnce;
use super::{EventLoop, Warning};
use crate::uv;

/// How a failure travels up to the boundary that reports it (the C++ side
/// of Node): either still to be reported, or already recorded as fatal.
#[derive(Debug)]
pub(crate) enum Thrown {
    Error(CallbackError),
    Fatal,
    /// Not a failure: `block_on`'s task completed, and the run stops where
    /// it is, to resume later as after a fatal failure.
    Halt,
}

pub(crate) type Flow = Result<(), Thrown>;

/// A stored one-shot callback (ticks, microtasks): inline when it
/// captures at most a word, boxed otherwise ([`ThinOnce`]).
pub(crate) type OnceFn = ThinOnce;

impl EventLoop {
    /// Installs the uncaught-error handler: Node's
    /// `process.on('uncaughtException', ...)`. With it, a failing callback
    /// is reported to `handler` and the loop goes on with Node's semantics;
    /// without it, [`run`](Self::run) returns the error.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let seen = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let s = seen.clone();
    /// lp.set_uncaught_handler(move |_, err| s.borrow_mut().push(err.message()));
    /// lp.set_timeout(1, |_| Err::<(), _>("boom"));
    /// lp.set_timeout(1, |_| -> Result<(), &str> { panic!("bang") });
    /// lp.run().unwrap();
    /// assert_eq!(*seen.borrow(), ["boom", "bang"]);
    /// ```
    pub fn set_uncaught_handler(
        &mut self,
        handler: impl FnMut(&mut EventLoop, CallbackError) + 'static,
    ) {
        self.uncaught = Some(Box::new(handler));
        self.uncaught_changed = true;
    }

    /// Removes the uncaught-error handler. Called by the handler itself,
    /// it handles no later failure (as a listener that removes itself in
    /// Node: the next exception is fatal).
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_uncaught_handler(|_, _| {});
    /// lp.clear_uncaught_handler();
    /// lp.set_timeout(1, |_| Err::<(), _>("boom"));
    /// assert!(lp.run().is_err());
    /// ```
    pub fn clear_uncaught_handler(&mut self) {
        self.uncaught = None;
        self.uncaught_changed = true;
    }

    /// Takes the uncaught-error handler out, leaving none (as
    /// `std::panic::take_hook`): for a layer that puts its own handler in
    /// front of the application's and hands it what is not its own (an
    /// embedded script engine's router), then puts it back. Called by the
    /// handler itself, it answers `None` (a handler is out of the loop while
    /// it runs) and, as [`clear_uncaught_handler`](Self::clear_uncaught_handler),
    /// leaves no handler for later failures.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let seen = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let s = seen.clone();
    /// lp.set_uncaught_handler(move |_, err| s.borrow_mut().push(format!("app: {}", err.message())));
    /// // A layer in front: takes what says "mine", hands on the rest.
    /// let mut app = lp.take_uncaught_handler().unwrap();
    /// let s = seen.clone();
    /// lp.set_uncaught_handler(move |lp, err| {
    ///     if err.message() == "mine" {
    ///         s.borrow_mut().push("layer: mine".to_string());
    ///     } else {
    ///         app(lp, err);
    ///     }
    /// });
    /// lp.set_timeout(1, |_| Err::<(), _>("mine"));
    /// lp.set_timeout(2, |_| Err::<(), _>("theirs"));
    /// lp.run().unwrap();
    /// assert_eq!(*seen.borrow(), ["layer: mine", "app: theirs"]);
    /// assert!(lp.take_uncaught_handler().is_some());
    /// assert!(lp.take_uncaught_handler().is_none());
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn take_uncaught_handler(
        &mut self,
    ) -> Option<Box<dyn FnMut(&mut EventLoop, CallbackError)>> {
        self.uncaught_changed = true;
        self.uncaught.take()
    }

    /// Declines, from inside the uncaught-error handler, the failure it
    /// was given: it is then fatal exactly as with no handler installed
    /// (the loop halts and [`run`](Self::run) returns
    /// [`Error::Uncaught`] with it). For a handler that takes only some
    /// failures, such as an embedded script engine's own, and leaves the
    /// rest to the application as if it were not there.
    ///
    /// ```
    /// use timerloop::{Cause, EventLoop};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.set_uncaught_handler(|lp, err| {
    ///     if err.message() != "mine" {
    ///         lp.decline_uncaught(err).unwrap();
    ///     }
    /// });
    /// lp.set_timeout(1, |_| Err::<(), _>("mine")); // handled
    /// lp.set_timeout(2, |_| Err::<(), _>(std::io::Error::other("theirs")));
    /// let err = lp.run().unwrap_err().into_callback_error().unwrap();
    /// assert_eq!(lp.now(), 2);
    /// let Cause::Error(e) = err.cause() else { panic!() };
    /// assert!(e.downcast_ref::<std::io::Error>().is_some()); // the error itself
    /// // Outside the handler, nothing is declined:
    /// lp.set_timeout(1, |_| Err::<(), _>("later"));
    /// let err = lp.run().unwrap_err().into_callback_error().unwrap();
    /// assert!(lp.decline_uncaught(err).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// `err` back, with nothing done, when called outside the handler, or
    /// a second time in the same call of the handler.
    pub fn decline_uncaught(&mut self, err: CallbackError) -> Result<(), CallbackError> {
        let d = self.shared.layer::<Declining>();
        if !d.handling.get() || d.declined.borrow().is_some() {
            return Err(err);
        }
        *d.declined.borrow_mut() = Some(err);
        Ok(())
    }

    /// Installs the warning handler, which receives warnings such as
    /// `TimeoutOverflowWarning` (Node prints them; the library does not).
    /// As in Node, a warning is delivered from a `nextTick` callback queued
    /// when it arises.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let seen = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let s = seen.clone();
    /// lp.set_warning_handler(move |w| s.borrow_mut().push(w.name));
    /// lp.set_timeout(2_147_483_648u64, |_| {}); // too long: 1 ms, and a warning
    /// lp.run().unwrap();
    /// assert_eq!(*seen.borrow(), ["TimeoutOverflowWarning"]);
    /// ```
    pub fn set_warning_handler(&mut self, handler: impl FnMut(&Warning) + 'static) {
        self.warn = Some(Box::new(handler));
    }

    /// Node's `process.emitWarning`: the warning is delivered from a tick,
    /// not synchronously (and that tick exists even with no handler, as in
    /// Node, where the default handler prints it).
    pub(crate) fn warn(&mut self, w: Warning) {
        self.next_tick(move |lp| {
            if let Some(h) = lp.warn.as_mut() {
                h(&w);
            }
        });
    }

    /// Runs `f` as a top-level callback, as Node runs its main script: a
    /// failure goes to the uncaught-error handler, and ticks and microtasks
    /// queued by `f` drain when it returns. Called from inside a callback
    /// of a run, it nests: its ticks and microtasks drain when the outer
    /// callback returns, and a failure no handler took is returned to the
    /// caller, which answers for it: the run goes on.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let l = log.clone();
    /// lp.enter(move |lp| {
    ///     let l2 = l.clone();
    ///     lp.next_tick(move |_| l2.borrow_mut().push("tick"));
    ///     l.borrow_mut().push("sync");
    /// })
    /// .unwrap();
    /// assert_eq!(*log.borrow(), ["sync", "tick"]);
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Uncaught`] if `f` (or a tick or microtask it queued) failed
    /// and no handler took it (none is installed, the handler called
    /// [`decline_uncaught`](Self::decline_uncaught), or the handler
    /// panicked: kind [`UncaughtHandler`](CallbackKind::UncaughtHandler));
    /// or, without running `f`, if a failure
    /// was kept from an earlier run or entry that a panic left (see
    /// [`Error::Uncaught`]; nested in a callback that caught that panic,
    /// the caller answers for it as for `f`'s own, and the run goes on);
    /// [`Error::ThreadExiting`], without running `f`,
    /// if the thread is exiting (see [`run`](Self::run)).
    pub fn enter<R: CallbackResult>(
        &mut self,
        f: impl FnOnce(&mut EventLoop) -> R,
    ) -> Result<(), Error> {
        let _current = self.enter_current()?;
        // A failure a panic carried out of the last run or entry comes
        // first (`report_unwinding`).
        if let Some(e) = self.fatal.take() {
            if self.depth > 0 {
                // Kept from a panic that a callback of the run under way
                // caught: the failure halted that run, and its caller now
                // has it, so the run goes on (as below).
                self.uv.unhalt();
            }
            return Err(Error::Uncaught(e));
        }
        let depth = self.depth;
        let (halt, drain_first) = (self.uv.halt_state(), self.ticks.drain_first);
        // `f` replacing the loop unwinds on: the loop here is another.
        if let Err(payload) =
            uv::catch_unless_replaced(self, |lp| lp.once_scope(CallbackKind::Main, f))
        {
            self.depth = depth;
            if depth == 0 {
                self.ticks.drain_first = true;
            }
            self.unwound_checkpoint();
            resume_unwind(payload);
        }
        match self.fatal.take() {
            Some(e) => {
                if depth > 0 {
                    // Nested in a callback of a run: the failure halted
                    // that run, but goes to `enter`'s caller, which now
                    // answers for it. The run goes on, as after a failure
                    // a handler took (the outer scope drains the ticks).
                    self.uv.restore_halt(halt);
                    self.ticks.drain_first = drain_first;
                }
                Err(Error::Uncaught(e))
            }
            None => Ok(()),
        }
    }

    /// Calls a user callback, turning a panic into a [`Cause`]. Always
    /// inlined into its few callers (firing, immediates, ticks, scopes):
    /// the call and its register saves were 7 % of a fired timeout's cost
    /// (`#[inline]` alone left it out of line).
    ///
    /// `kind` is what a failure is reported as if one of the callback's
    /// deferred operations then panics: the failure goes to the
    /// uncaught-error handler (or is kept for the next
    /// [`run`](Self::run) to return) before the panic leaves, so that it
    /// is not lost ([`report_unwinding`](Self::report_unwinding)).
    #[inline(always)]
    pub(crate) fn invoke(
        &mut self,
        kind: CallbackKind,
        f: &mut dyn FnMut(&mut EventLoop) -> Result<(), BoxError>,
    ) -> Result<(), Cause> {
        // The unmapped result is what stays alive across the flush's call:
        // mapped first (`invoke_unflushed`), the 24-byte `Result<(), Cause>`
        // was spilled and copied back with a 16-byte load over an 8-byte
        // store, a load that waits for the store to reach the cache
        // (set-immediate-breadth 47 → 38 M/s at fewer instructions;
        // `bench/perf-hot` put 55% of the check phase's samples on it).
        let r = self.call_user(|lp| f(lp));
        // Whatever the callback's futures asked of the loop happens now.
        if self.has_deferred() {
            return self.flush_after(kind, r);
        }
        cause_of(r)
    }

    /// [`invoke`](Self::invoke)'s flush of the deferred operations, out
    /// of line: an operation that panics sends its panic on, after the
    /// callback's own failure, if any, was reported.
    #[cold]
    #[inline(never)]
    fn flush_after(
        &mut self,
        kind: CallbackKind,
        r: std::thread::Result<Result<(), BoxError>>,
    ) -> Result<(), Cause> {
        let result = cause_of(r);
        if let Some(payload) = self.flush_deferred_catching() {
            if let Err(cause) = result {
                self.report_unwinding(Thrown::Error(CallbackError::new(kind, cause)));
            }
            resume_unwind(payload);
        }
        result
    }

    /// Reports a callback's failure that a panic is about to carry out of
    /// `run` (one of its deferred operations panicked): to the
    /// uncaught-error handler, or, with none, kept as the fatal failure
    /// that the next [`run`](Self::run) or [`enter`](Self::enter)
    /// returns before anything else. Without this the panic's unwinding
    /// dropped the failure unseen.
    #[cold]
    pub(crate) fn report_unwinding(&mut self, t: Thrown) {
        // The operations after the one that panicked stay queued for the
        // next flush: none runs (and panics) inside the report.
        let flushing = std::mem::replace(&mut self.flushing, true);
        let _ = self.uncaught(t);
        self.flushing = flushing;
    }

    /// [`invoke`](Self::invoke) without its flush of the deferred
    /// operations, which the caller makes (a fired timer's, catching a
    /// panic that escapes one until its `finally` has run).
    #[inline(always)]
    pub(crate) fn invoke_unflushed(
        &mut self,
        f: &mut dyn FnMut(&mut EventLoop) -> Result<(), BoxError>,
    ) -> Result<(), Cause> {
        cause_of(self.call_user(|lp| f(lp)))
    }

    /// `f` given the loop, its panic caught; a panic of its own if `f`
    /// replaced the loop ([`assert_not_replaced`](Self::assert_not_replaced)),
    /// before anything reads the loop again. Every callback and handler
    /// runs through it.
    #[inline(always)]
    fn call_user<R>(&mut self, f: impl FnOnce(&mut EventLoop) -> R) -> std::thread::Result<R> {
        let instance = self.instance;
        let r = catch_unwind(AssertUnwindSafe(|| f(self)));
        self.assert_not_replaced(instance, r)
    }

    /// Calls a stored one-shot callback, turning a panic into a
    /// [`Cause`].
    pub(crate) fn invoke_once(&mut self, kind: CallbackKind, mut f: OnceFn) -> Result<(), Cause> {
        self.invoke(kind, &mut |lp| f.call(lp))
    }

    /// [`callback_scope`](Self::callback_scope) for a one-shot callback.
    pub(crate) fn once_scope<R: CallbackResult>(
        &mut self,
        kind: CallbackKind,
        f: impl FnOnce(&mut EventLoop) -> R,
    ) {
        let mut f = Some(f);
        self.callback_scope(kind, &mut |lp| match f.take() {
            Some(f) => f(lp).into_result(),
            None => Ok(()),
        });
    }

    /// A top-level entry from the loop into user code (an I/O callback or
    /// the main body): the callback runs, then — unless this entry is nested
    /// or failed fatally — ticks and microtasks drain.
    pub(crate) fn callback_scope(
        &mut self,
        kind: CallbackKind,
        f: &mut dyn FnMut(&mut EventLoop) -> Result<(), BoxError>,
    ) {
        if self.stopping() {
            return;
        }
        self.depth += 1;
        let r = self.invoke(kind, f);
        self.depth -= 1;
        // A failure is reported first. A failed I/O callback's scope then
        // does not drain (R10.4 step 1): its ticks and microtasks wait for
        // the next scope to close, the next I/O callback's or the check
        // phase's, which the handler's no-op immediate guarantees (R9.5).
        // Verified on Node: `io{tick{log t1} throw} io{log io2}` prints
        // `uncaught io2 t1`, and `io{tick{throw} tick{log a5} throw}` with
        // an immediate pending runs the immediate before `a5` (the first
        // tick's throw ends the check phase's drain). The main body's
        // scope drains after a handled failure, as Node's bootstrap does.
        if let Err(cause) = r {
            let handled = self.uncaught(Thrown::Error(CallbackError::new(kind, cause)));
            if !handled || kind != CallbackKind::Main {
                return;
            }
        }
        self.close_scope();
    }

    /// Node's `InternalCallbackScope::Close` at the outermost level: drain
    /// ticks and microtasks. A failing tick is reported and ends the drain;
    /// the ticks and microtasks after it wait for the next scope to close,
    /// at the latest the one every check phase opens (verified on Node:
    /// after a main-body `tick{throw} tick{log t3}` with an `fs.stat`
    /// pending, the stat's callback runs before `t3`).
    pub(crate) fn close_scope(&mut self) {
        if self.depth > 0 || self.stopping() {
            return;
        }
        self.ticks.drain_first = false;
        // Ticks run inside the scope: one that calls `enter` nests, and
        // work they queue is not main-body work.
        self.depth += 1;
        let r = self.run_next_ticks();
        self.depth -= 1;
        if let Err(t) = r {
            self.uncaught(t);
        }
    }

    /// A fatal failure or `block_on`'s completion is stopping the run: no
    /// further callback runs in it.
    pub(crate) fn stopping(&self) -> bool {
        self.fatal.is_some() || self.halting
    }

    /// `block_on`'s task completed: stop the run right here.
    pub(crate) fn halt_for_main(&mut self) {
        self.halting = true;
        self.uv.halt();
    }

    /// The boundary where Node reports an uncaught exception. Returns true
    /// if a handler took it (the caller then goes on as Node does), false if
    /// it is now fatal: the loop halts and `run` will return it.
    pub(crate) fn uncaught(&mut self, t: Thrown) -> bool {
        let err = match t {
            Thrown::Fatal => return false,
            Thrown::Error(e) if e.is_already_fatal() => return false,
            Thrown::Halt => {
                self.halt_to_resume();
                return false;
            }
            Thrown::Error(e) => e,
        };
        let Some(mut handler) = self.uncaught.take() else {
            return self.fatal_failure(err);
        };
        self.uncaught_changed = false;
        self.depth += 1;
        let declining = self.shared.layer::<Declining>();
        let handling = declining.handling.replace(true);
        let r = self.call_user(|lp| handler(lp, err));
        declining.handling.set(handling);
        self.depth -= 1;
        // Put back, unless the handler set another or cleared itself.
        if !self.uncaught_changed {
            self.uncaught = Some(handler);
        }
        let declined = declining.declined.borrow_mut().take();
        if let Some(err) = declined {
            // Declined: fatal, as with no handler (a panic after the
            // decline changes nothing: the declined failure came first).
            drop(r);
            return self.fatal_failure(err);
        }
        if let Err(payload) = r {
            // A panicking handler is fatal, as a throwing one is in Node.
            let msg = error::panic_message_of(payload);
            self.fatal = Some(CallbackError::new(
                CallbackKind::UncaughtHandler,
                Cause::Panic(msg),
            ));
            self.halt_to_resume();
            return false;
        }
        // Node: "make sure any ticks get processed by ensuring that the next
        // Immediate cycle isn't empty".
        self.set_immediate(|_| {});
        true
    }

    /// `err` is fatal (no handler took it): the loop halts and `run` will
    /// return it. The first fatal failure wins (one a nested `enter`
    /// stored while a panic carried it out). Returns false, `uncaught`'s
    /// answer.
    fn fatal_failure(&mut self, err: CallbackError) -> bool {
        self.fatal.get_or_insert(err);
        self.halt_to_resume();
        false
    }

    /// Halts the run; the next run resumes the normal flow where this one
    /// stopped, the ticks and microtasks left queued draining first.
    fn halt_to_resume(&mut self) {
        self.uv.halt();
        self.ticks.drain_first = true;
    }
}

/// A callback's outcome as the loop's: its error, or its panic's message.
#[inline(always)]
fn cause_of(r: std::thread::Result<Result<(), BoxError>>) -> Result<(), Cause> {
    match r {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(Cause::Error(e)),
        Err(payload) => Err(Cause::Panic(error::panic_message_of(payload))),
    }
}

/// The uncaught-error handler is running, and the failure it declined
/// ([`decline_uncaught`](EventLoop::decline_uncaught)), if it did. Kept in
/// the loop's layer slots: only a failure's path reads it, and fields of
/// `EventLoop` move the hot paths' code (round 37's `run_until` measured
/// it).
#[derive(Default)]
struct Declining {
    handling: std::cell::Cell<bool>,
    declined: std::cell::RefCell<Option<CallbackError>>,
}
