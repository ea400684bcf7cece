//! Runaway JavaScript: `Options::max_run` (a budget per turn) and
//! `Options::interrupt` (the embedder's own handler) end a program that
//! would hang the application, whether it spins in one callback or in a
//! chain of microtasks or ticks that never ends. The program ends with 1,
//! none of its JavaScript runs again (no `catch`, `finally`, `exit` or
//! `uncaughtException` listener), its timers leave the loop, and the
//! application's loop and other hosts go on.
//!
//! Each scenario runs on a thread of its own with a deadline, so that a
//! program the host fails to stop fails its test instead of hanging it.

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use timerloop::EventLoop;
use timerloop_js::{Engine, Options, QuickJsHost, Stream};

const BUDGET: Duration = Duration::from_millis(50);

/// Runs `f` on a thread of its own, failing the test if it has not
/// returned after 60 s (the thread is left spinning; the process ends
/// with the test run).
fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("the program was not stopped: still running after 60 s"),
    }
}

type Stderr = Arc<Mutex<String>>;

/// A host with `max_run` (if given), `interrupt` (if given), and its
/// stderr in the returned string (stdout is dropped).
fn host(
    max_run: Option<Duration>,
    interrupt: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
) -> (Rc<QuickJsHost>, Stderr) {
    let err: Stderr = Arc::default();
    let e = err.clone();
    let options = Options {
        max_run,
        interrupt,
        console: Some(Arc::new(move |s: Stream, text: &str| {
            if s == Stream::Stderr {
                e.lock().unwrap().push_str(text);
            }
        })),
        ..Default::default()
    };
    (QuickJsHost::create_with(options).unwrap(), err)
}

fn global<T: for<'js> rquickjs::FromJs<'js>>(host: &QuickJsHost, name: &str) -> T {
    host.context().with(|c| c.globals().get(name)).unwrap()
}

/// A plugin whose timer at 10 ms spins for ever, with every place
/// JavaScript could take the interrupt back or run after it.
const SPINNER: &str = "
    globalThis.log = [];
    process.exitCode = 5;
    process.on('exit', (c) => log.push('exit ' + c));
    process.on('uncaughtException', (e) => log.push('uncaught ' + e));
    setInterval(() => log.push('interval'), 4);
    setTimeout(() => log.push('after'), 30);
    function spin() {
      try { while (true) {} }
      catch (e) { log.push('catch'); }
      finally { log.push('finally'); }
    }
    setTimeout(spin, 10);
";

#[test]
fn a_spinning_timer_ends_its_program_and_the_application_goes_on() {
    within(|| {
        let (host, err) = host(Some(BUDGET), None);
        let mut lp = EventLoop::with_virtual_clock();
        host.eval_main(&mut lp, "plugin.js", SPINNER).unwrap();
        // The application's own timers, before and after the spin.
        let fired = Rc::new(Cell::new(Vec::new()));
        for at in [7, 25, 100] {
            let f = fired.clone();
            lp.set_timeout(at, move |lp| {
                let mut v = f.take();
                v.push(lp.now());
                f.set(v);
            });
        }
        let t = Instant::now();
        // As at process.exit: the loop stops where the program ended.
        lp.run().unwrap();
        let took = t.elapsed();
        assert_eq!(lp.now(), 10);
        assert_eq!(host.exited(), Some(1), "1, not process.exitCode");
        assert!(took >= BUDGET, "{took:?}");
        // Its interval and its timeout at 30 left the loop: only the
        // application's own timers are there, and they all fire.
        assert_eq!(lp.stats().timers, 2, "{:?}", lp.stats());
        lp.run().unwrap();
        assert_eq!(fired.take(), [7, 25, 100]);
        // Nothing of the program ran after the interrupt.
        let log: Vec<String> = global(&host, "log");
        assert_eq!(log, ["interval", "interval"]);
        // Reported once, on its stderr, with where it was.
        let err = err.lock().unwrap();
        assert!(
            err.starts_with(
                "InternalError: interrupted: the program's JavaScript ran for more than \
                 max_run (50ms) in one turn\n    at spin (plugin.js:"
            ),
            "{err}"
        );
        assert!(err.ends_with("\n\nNode.js v20 (tljs)\n"), "{err}");
        assert_eq!(err.matches("interrupted").count(), 1, "{err}");
        let why = host.engine().interrupted().unwrap();
        assert!(err.starts_with(&why.0), "{why}");
        // The program is over: run says so, and runs nothing.
        assert_eq!(host.run(&mut lp), 1);
        assert_eq!(
            host.enter(&mut lp, |c| c.eval::<i32, _>("1")).unwrap(),
            None
        );
    });
}

#[test]
fn host_run_returns_1_and_the_application_timer_still_fires() {
    within(|| {
        let (host, _err) = host(Some(BUDGET), None);
        let mut lp = EventLoop::with_virtual_clock();
        let ran = Rc::new(Cell::new(0));
        let r = ran.clone();
        lp.set_timeout(40, move |lp| r.set(lp.now()));
        assert_eq!(host.run_main(&mut lp, "plugin.js", SPINNER), 1);
        assert_eq!(lp.now(), 10);
        lp.run().unwrap();
        assert_eq!(ran.get(), 40);
    });
}

#[test]
fn the_budget_covers_the_ticks_and_microtasks_after_a_macrotask() {
    // Each of these turns is a chain of short pieces that never ends: no
    // single one runs long, the turn does.
    for (name, src) in [
        (
            "queueMicrotask",
            "function f() { queueMicrotask(f) } setTimeout(f, 1)",
        ),
        ("nextTick", "function f() { process.nextTick(f) } f()"),
        (
            "promise jobs",
            "async function f() { for (;;) await null } setImmediate(f)",
        ),
        (
            "ticks and jobs",
            "function f() { process.nextTick(() => Promise.resolve().then(f)) } f()",
        ),
    ] {
        let status = within(move || {
            let (host, err) = host(Some(BUDGET), None);
            let mut lp = EventLoop::with_virtual_clock();
            let after = Rc::new(Cell::new(false));
            let a = after.clone();
            lp.set_timeout(20, move |_| a.set(true));
            let status = host.run_main(&mut lp, "chain.js", src);
            lp.run().unwrap();
            assert!(after.get(), "{name}: the application's timer");
            let err = err.lock().unwrap().clone();
            assert!(err.contains("ran for more than max_run"), "{name}: {err}");
            status
        });
        assert_eq!(status, 1, "{name}");
    }
}

#[test]
fn many_short_turns_run_as_long_as_they_like() {
    // 30 turns of about 20 ms each, near 600 ms in all, under a 400 ms
    // budget per turn (a margin for a loaded machine); and a long finite
    // microtask chain in each.
    within(|| {
        let (host, err) = host(Some(Duration::from_millis(400)), None);
        let mut lp = EventLoop::with_virtual_clock();
        let src = "let turns = 0;
            const iv = setInterval(() => {
              const t = Date.now();
              while (Date.now() - t < 20) {}
              let n = 0;
              const next = () => { if (++n < 1000) queueMicrotask(next) };
              next();
              if (++turns === 30) { clearInterval(iv); process.exitCode = 3 }
            }, 1)";
        let t = Instant::now();
        assert_eq!(host.run_main(&mut lp, "busy.js", src), 3);
        // Each turn spins 19 to 20 ms (Date.now() counts whole ms), so
        // the program ran well past one turn's 400 ms budget.
        assert!(
            t.elapsed() >= Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );
        assert!(host.engine().interrupted().is_none());
        assert_eq!(*err.lock().unwrap(), "");
    });
}

#[test]
fn listeners_and_the_main_script_are_bounded_too() {
    for (name, src) in [
        ("main script", "for (;;) {}"),
        (
            "uncaughtException listener",
            "process.on('uncaughtException', () => { for (;;) {} });
             setTimeout(() => { throw new Error('first') }, 1)",
        ),
        ("exit listener", "process.on('exit', () => { for (;;) {} })"),
        (
            "beforeExit listener",
            "process.on('beforeExit', () => { for (;;) {} })",
        ),
        (
            "unhandledRejection listener",
            "process.on('unhandledRejection', () => { for (;;) {} }); Promise.reject(1)",
        ),
    ] {
        let (status, err) = within(move || {
            let (host, err) = host(Some(BUDGET), None);
            let mut lp = EventLoop::with_virtual_clock();
            let status = host.run_main(&mut lp, "p.js", src);
            let err = err.lock().unwrap().clone();
            (status, err)
        });
        assert_eq!(status, 1, "{name}: {err}");
        assert!(err.contains("ran for more than max_run"), "{name}: {err}");
    }
}

#[test]
fn the_application_callback_gets_a_turn_of_its_own() {
    within(|| {
        let (host, _err) = host(Some(BUDGET), None);
        let mut lp = EventLoop::with_virtual_clock();
        host.enter(&mut lp, |c| {
            c.eval::<(), _>("globalThis.spin = () => { for (;;) {} }")
        })
        .unwrap();
        let h = host.clone();
        let got = Rc::new(Cell::new(Some(Some(0))));
        let g = got.clone();
        lp.set_timeout(5, move |lp| {
            // The plugin's end is not the application's failure.
            let r = h.callback(lp, |c| c.eval::<i32, _>("spin(); 1"))?;
            g.set(Some(r));
            Ok::<(), timerloop::BoxError>(())
        });
        lp.set_timeout(6, |_| {});
        lp.run().unwrap();
        assert_eq!(got.get(), Some(None), "Ok(None): the program has exited");
        assert_eq!(host.exited(), Some(1));
        lp.run().unwrap();
        assert_eq!(lp.now(), 6);
    });
}

#[test]
fn other_hosts_on_the_loop_go_on() {
    within(|| {
        let (a, _) = host(Some(BUDGET), None);
        let (b, _) = host(None, None);
        let mut lp = EventLoop::with_virtual_clock();
        a.eval_main(&mut lp, "a.js", SPINNER).unwrap();
        // B listens for its own exceptions: the loop's handler is the
        // hosts' router, which must not hand A's interrupt to B.
        b.eval_main(
            &mut lp,
            "b.js",
            "globalThis.seen = [];
             process.on('uncaughtException', (e) => seen.push('uncaught'));
             for (const t of [5, 20, 40]) setTimeout(() => seen.push(t), t);
             process.on('exit', () => seen.push('exit'))",
        )
        .unwrap();
        assert_eq!(b.run(&mut lp), 0);
        assert_eq!(a.exited(), Some(1));
        let seen: String = b.context().with(|c| c.eval("seen.join()")).unwrap();
        assert_eq!(seen, "5,20,40,exit");
        assert_eq!(lp.now(), 40);
    });
}

#[test]
fn the_embedders_handler_stops_it_and_is_asked_only_while_the_host_runs() {
    within(|| {
        // Yes from the fourth poll on: deterministic, no clock.
        let polls = Arc::new(AtomicUsize::new(0));
        let p = polls.clone();
        let stop = Arc::new(move || p.fetch_add(1, Ordering::Relaxed) >= 3);
        let rt = rquickjs::Runtime::new().unwrap();
        let ctx = rquickjs::Context::full(&rt).unwrap();
        let err: Stderr = Arc::default();
        let e = err.clone();
        let options = Options {
            interrupt: Some(stop),
            console: Some(Arc::new(move |_, text: &str| {
                e.lock().unwrap().push_str(text)
            })),
            ..Default::default()
        };
        let host = timerloop_js::install(&ctx, options).unwrap();
        // The application's own JavaScript on its context, outside the
        // host: never asked about, never stopped.
        let n: i32 = ctx
            .with(|c| c.eval("let n = 0; for (let i = 0; i < 1e6; i++) n++; n"))
            .unwrap();
        assert_eq!(n, 1_000_000);
        assert_eq!(polls.load(Ordering::Relaxed), 0);
        let mut lp = EventLoop::with_virtual_clock();
        // The main script is stopped: eval_main is Ok, as at
        // process.exit(1), and the program has ended.
        host.eval_main(&mut lp, "main.js", "globalThis.x = 1; for (;;) {}")
            .unwrap();
        assert_eq!(host.exited(), Some(1));
        assert_eq!(polls.load(Ordering::Relaxed), 4);
        let err = err.lock().unwrap();
        assert!(
            err.starts_with(
                "InternalError: interrupted by the embedder's interrupt handler\n    at <anonymous> (main.js:"
            ),
            "{err}"
        );
        assert_eq!(host.run(&mut lp), 1);
    });
}

/// Once a program has ended (here normally, at the end of `run`), the
/// host's interrupt handler no longer stops JavaScript the application
/// runs itself on the host's context (reading results, as the docs'
/// examples do) or on another context of the runtime. Before the fix it
/// answered yes whenever the program had exited, so QuickJS's check,
/// about once in 10,000 calls, threw `InternalError: interrupted` into
/// the application's own code.
#[test]
fn the_applications_javascript_runs_after_the_program_ended() {
    within(|| {
        let host = QuickJsHost::create_with(Options::default()).unwrap();
        let mut lp = EventLoop::with_virtual_clock();
        host.eval_main(
            &mut lp,
            "main.js",
            "globalThis.out = 41; setTimeout(() => out++, 5)",
        )
        .unwrap();
        assert_eq!(host.run(&mut lp), 0);
        assert_eq!(host.exited(), Some(0));
        let src = "let s = 0; const f = (x) => x + 1; \
                   for (let i = 0; i < 100000; i++) s = f(s); s + out";
        let ctx = host.context();
        let n: i32 = ctx.with(|c| c.eval(src)).unwrap();
        assert_eq!(n, 100_042);
        let other = rquickjs::Context::full(&ctx.runtime().clone()).unwrap();
        let m: i32 = other.with(|c| c.eval(src.replace(" + out", ""))).unwrap();
        assert_eq!(m, 100_000);
    });
}

/// `process.exit` in an embedding spins until the interrupt handler stops
/// the script, and the budget stops a spinning one, also when the
/// application calls the engine directly (`Engine::eval_main` in the
/// loop's scope, as the trait's docs show), not through the host. A first
/// version of the fix above asked whether the host had entered the
/// engine itself, and such a `process.exit` then spun for ever.
#[test]
fn exit_and_the_budget_stop_javascript_the_application_runs_through_the_engine() {
    within(|| {
        let plain = QuickJsHost::create_with(Options::default()).unwrap();
        let mut lp = EventLoop::with_virtual_clock();
        let r = lp.scope(|| {
            plain.engine().eval_main(
                "m.js",
                "globalThis.before = 1; process.exit(2); globalThis.after = 1",
            )
        });
        assert!(r.is_err(), "the script was stopped at process.exit");
        assert_eq!(plain.exited(), Some(2));
        assert_eq!(plain.run(&mut lp), 2);
        let (budgeted, _err) = host(Some(BUDGET), None);
        let r = lp.scope(|| budgeted.engine().eval_main("m.js", "for (;;) {}"));
        assert!(r.is_err(), "the budget stopped the spin");
    });
}

/// `Atomics.wait` with no timeout on the main thread sleeps for ever, as
/// node's does; under a budget, or with the embedder's handler, it is
/// stopped as a spin is: the program ends with 1 and nothing after the
/// wait runs. Before, the wait slept on past `max_run` unstoppable.
#[test]
fn an_endless_atomics_wait_is_stopped_on_the_real_clock() {
    const WAIT: &str = "
        globalThis.log = ['before'];
        process.on('exit', () => log.push('exit'));
        setTimeout(() => log.push('timer'), 1);
        try { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); }
        finally { log.push('after'); }
    ";
    within(|| {
        let (host, err) = host(Some(BUDGET), None);
        let mut lp = EventLoop::new();
        let t = Instant::now();
        host.eval_main(&mut lp, "wait.js", WAIT).unwrap();
        assert!(t.elapsed() >= BUDGET, "{:?}", t.elapsed());
        assert_eq!(host.exited(), Some(1));
        let log: Vec<String> = global(&host, "log");
        assert_eq!(log, ["before"]);
        let err = err.lock().unwrap();
        assert!(
            err.starts_with(
                "InternalError: interrupted: the program's JavaScript ran for more than \
                 max_run (50ms) in one turn\n    at wait ("
            ),
            "{err}"
        );
    });
    within(|| {
        let asked = Arc::new(AtomicUsize::new(0));
        let a = asked.clone();
        // Yes once the wait has been asked about a few times.
        let stop = Arc::new(move || a.fetch_add(1, Ordering::Relaxed) >= 5);
        let (host, _err) = host(None, Some(stop));
        let mut lp = EventLoop::new();
        host.eval_main(&mut lp, "wait.js", WAIT).unwrap();
        assert_eq!(host.exited(), Some(1));
        let log: Vec<String> = global(&host, "log");
        assert_eq!(log, ["before"]);
    });
}

#[test]
fn tljs_max_run() {
    let tljs = env!("CARGO_BIN_EXE_tljs");
    let src = "console.log('start');
        process.on('exit', () => console.log('exit listener'));
        setTimeout(function spin() { while (true) {} }, 5)";
    let r = within(move || common::run(tljs, &["--max-run", "50"], src));
    assert_eq!(r.status, 1, "{}", r.stderr);
    assert_eq!(r.stdout, "start\n");
    assert!(
        r.stderr
            .starts_with("InternalError: interrupted: the program's JavaScript ran for more than max_run (50ms) in one turn\n    at spin ("),
        "{}",
        r.stderr
    );
    // On the main file's first line, whose columns the CommonJS wrapper
    // shifts: a real column (it was "1:-61", the wrapper's width taken
    // off QuickJS's column 1).
    let one_line = "setTimeout(function spin() { while (true) {} }, 5)";
    let r = within(move || common::run(tljs, &["--max-run", "50"], one_line));
    assert_eq!(r.status, 1, "{}", r.stderr);
    let frame = r.stderr.lines().nth(1).unwrap_or_default();
    let col: i64 = frame
        .trim_end_matches(')')
        .rsplit(':')
        .next()
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no column in {frame:?}"));
    assert!(
        frame.starts_with("    at spin (") && col >= 1,
        "{}",
        r.stderr
    );
    let r = common::run(tljs, &["--max-run", "0"], src);
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("--max-run needs a positive whole number"));
    // --help prints the options; an unknown option is a usage error (it
    // was taken for the file's name: "cannot read --help", status 1).
    let r = common::run(tljs, &["--help"], src);
    assert_eq!((r.status, r.stderr.as_str()), (0, ""));
    assert!(r.stdout.starts_with("usage: tljs ") && r.stdout.contains("--max-run MS"));
    // `--` ends the options, as node's.
    let r = common::run(tljs, &["--"], "console.log('after --')");
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (0, "after --\n"),
        "{}",
        r.stderr
    );
    let r = common::run(tljs, &["--frobnicate"], src);
    assert_eq!(r.status, 2);
    assert!(
        r.stderr.starts_with("tljs: unknown option --frobnicate"),
        "{}",
        r.stderr
    );
    // An `exit` listener that spins during a fatal exception's exit is
    // stopped by the budget; the exception that ended the program is
    // printed first (it was lost: the budget's report alone).
    let r = within(move || {
        common::run(
            tljs,
            &["--max-run", "50"],
            "process.on('exit', function spinning() { for (;;) {} });
            setTimeout(function thrower() { throw new Error('boom') }, 1)",
        )
    });
    assert_eq!(r.status, 1, "{}", r.stderr);
    let boom = r.stderr.find("Error: boom\n    at thrower (");
    let stop = r.stderr.find("InternalError: interrupted");
    assert!(
        matches!((boom, stop), (Some(b), Some(s)) if b < s),
        "{}",
        r.stderr
    );
    // A program within its budget is not touched.
    let r = common::run(
        tljs,
        &["--max-run", "5000"],
        "setTimeout(() => console.log('ok'), 5)",
    );
    assert_eq!((r.status, r.stdout.as_str()), (0, "ok\n"));
}
