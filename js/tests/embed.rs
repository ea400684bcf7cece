//! Embedding: the globals on an application's own context and loop;
//! `process.exit` stops the loop and reports its code instead of ending
//! the process; fatal exceptions are reported the same way.

use std::rc::Rc;

use rquickjs::{Context, Runtime};
use timerloop::EventLoop;
use timerloop_js::{Options, QuickJsHost, install};

fn host() -> (Context, Rc<QuickJsHost>, EventLoop) {
    let rt = Runtime::new().unwrap();
    let ctx = Context::full(&rt).unwrap();
    let host = install(&ctx, Options::default()).unwrap();
    (ctx, host, EventLoop::with_virtual_clock())
}

fn global<T: for<'js> rquickjs::FromJs<'js>>(ctx: &Context, name: &str) -> T {
    ctx.with(|c| c.globals().get(name)).unwrap()
}

#[test]
fn process_exit_stops_the_loop_and_reports_the_code() {
    let (ctx, host, mut lp) = host();
    host.enter(&mut lp, |c| {
        c.eval::<(), _>(
            "globalThis.log = [];
             process.on('exit', (c) => log.push('exit ' + c));
             setTimeout(() => log.push('never'), 50);
             setTimeout(() => {
               try { log.push('before'); process.exit(4); log.push('after'); }
               catch (e) { log.push('caught'); }
               finally { log.push('finally'); }
             }, 10);
             setTimeout(() => log.push('same phase, not run'), 10);
             Promise.resolve().then(() => log.push('microtask'));",
        )
    })
    .unwrap();
    assert_eq!(host.run(&mut lp), 4);
    assert_eq!(host.exited(), Some(4));
    assert_eq!(lp.now(), 10, "the loop stopped at the exit");
    let log: Vec<String> = global(&ctx, "log");
    assert_eq!(log, ["microtask", "before", "exit 4"]);
    // The context runs no more JavaScript after the exit.
    assert_eq!(
        host.enter(&mut lp, |c| c.eval::<i32, _>("1")).unwrap(),
        None
    );
}

#[test]
fn process_exit_in_the_main_script() {
    let (ctx, host, mut lp) = host();
    let r = host.eval_main(
        &mut lp,
        "main.js",
        "process.exitCode = 9; globalThis.x = 1; process.exit(); globalThis.x = 2;",
    );
    assert!(r.is_ok());
    assert_eq!(host.run(&mut lp), 9);
    assert_eq!(global::<i32>(&ctx, "x"), 1);
}

#[test]
fn exit_code_and_uncaught_exception_are_returned() {
    let (_ctx, host, mut lp) = host();
    host.enter(&mut lp, |c| {
        c.eval::<(), _>("setTimeout(() => { throw new Error('boom'); }, 5)")
    })
    .unwrap();
    assert_eq!(host.run(&mut lp), 1);
    assert_eq!(host.exited(), Some(1));

    let (_ctx, host, mut lp) = self::host();
    host.enter(&mut lp, |c| {
        c.eval::<(), _>("process.on('beforeExit', () => { if (!process.exitCode) setTimeout(() => process.exitCode = 6, 5) })")
    })
    .unwrap();
    assert_eq!(host.run(&mut lp), 6);
    assert_eq!(lp.now(), 5);
}

#[test]
fn application_timers_and_js_timers_share_the_loop() {
    let (ctx, host, mut lp) = host();
    host.enter(&mut lp, |c| {
        c.eval::<(), _>(
            "globalThis.log = [];
             setTimeout(() => log.push('js 5'), 5);
             setTimeout(() => log.push('js 15'), 15);",
        )
    })
    .unwrap();
    let h = host.clone();
    lp.set_timeout(10, move |lp| {
        h.callback(lp, |c| {
            c.eval::<(), _>("log.push('rust 10'); process.nextTick(() => log.push('tick'))")
        })
        .map(|_| ())
    });
    assert_eq!(host.run(&mut lp), 0);
    let log: Vec<String> = global(&ctx, "log");
    assert_eq!(log, ["js 5", "rust 10", "tick", "js 15"]);
}

#[test]
fn an_exception_from_the_application_code_is_an_error() {
    let (_ctx, host, mut lp) = host();
    let r = host.enter(&mut lp, |c| c.eval::<(), _>("null.x"));
    let e = r.unwrap_err().to_string();
    assert!(e.contains("TypeError"), "{e}");
}

#[test]
fn a_programs_uncaught_exception_is_printed_once_by_an_error_chain() {
    // anyhow and eyre print an error, then each `source()` below it: the
    // exception's text is in the loop's error already, so no link of the
    // chain may show it again (the host's wrapper added one that did).
    let host = QuickJsHost::create_with(Default::default()).unwrap();
    let mut lp = EventLoop::with_virtual_clock();
    let e = host.eval_main(&mut lp, "bad.js", "null.x").unwrap_err();
    let mut chain = vec![e.to_string()];
    let mut next = std::error::Error::source(&e);
    while let Some(s) = next {
        chain.push(s.to_string());
        next = s.source();
    }
    assert!(chain[0].contains("TypeError"), "{chain:?}");
    for (i, later) in chain.iter().enumerate().skip(1) {
        assert!(
            chain[..i].iter().all(|m| !m.contains(later.as_str())),
            "{chain:?}"
        );
    }
}

#[test]
fn an_exited_host_leaves_nothing_on_the_loop() {
    // process.exit: the interval, a pending timeout, an unrefed one and an
    // immediate leave the loop, so the application's own run ends.
    let (ctx, host, mut lp) = host();
    host.eval_main(
        &mut lp,
        "p.js",
        "globalThis.n = 0;
         setInterval(() => n++, 10);
         setTimeout(() => n += 100, 1000);
         setTimeout(() => {}, 5000).unref();
         setTimeout(() => { setImmediate(() => n += 1000); process.exit(2) }, 25);",
    )
    .unwrap();
    assert_eq!(host.run(&mut lp), 2);
    assert_eq!(lp.now(), 25);
    assert!(!lp.is_alive(), "{:?}", lp.stats());
    assert_eq!(lp.stats().timers, 0, "{:?}", lp.stats());
    assert_eq!(lp.stats().immediates, 0, "{:?}", lp.stats());
    let ran = Rc::new(std::cell::Cell::new(0));
    let r = ran.clone();
    lp.set_timeout(100, move |lp| r.set(lp.now()));
    lp.run().unwrap();
    assert_eq!(ran.get(), 125, "the application's loop ran to its end");
    assert_eq!(
        global::<i32>(&ctx, "n"),
        2,
        "nothing of the exited program ran"
    );

    // A fatal exception: the same.
    let (_ctx, host, mut lp) = self::host();
    host.eval_main(
        &mut lp,
        "p.js",
        "setInterval(() => {}, 10); setTimeout(() => { throw new Error('boom') }, 25)",
    )
    .unwrap();
    assert_eq!(host.run(&mut lp), 1);
    assert!(!lp.is_alive(), "{:?}", lp.stats());
    lp.run().unwrap();
    assert_eq!(lp.now(), 25);

    // Driven by the application's own `lp.run()`: the exit stops it, and
    // the next run ends at once.
    let (_ctx, host, mut lp) = self::host();
    host.eval_main(
        &mut lp,
        "p.js",
        "setInterval(() => {}, 10); setTimeout(() => process.exit(3), 25)",
    )
    .unwrap();
    lp.run().unwrap();
    assert_eq!(host.exited(), Some(3));
    lp.run().unwrap();
    assert_eq!(lp.now(), 25);
    assert_eq!(lp.stats().timers, 0, "{:?}", lp.stats());
}

#[test]
fn a_finished_host_is_freed_when_dropped() {
    // Plugins one after another on one long-lived loop, each keeping a
    // Timeout object (kept by the loop for refresh/hasRef) and listening
    // for uncaught exceptions: once `run` returned and the handle is
    // dropped, the host and its runtime are gone and the loop holds
    // nothing of it.
    let mut lp = EventLoop::with_virtual_clock();
    let before = lp.stats().timers;
    for _ in 0..3 {
        let host = QuickJsHost::create_with(Options::default()).unwrap();
        let src = "globalThis.t = setTimeout(() => {}, 5); \
                   globalThis.u = setTimeout(() => {}, 50).unref(); \
                   process.on('uncaughtException', () => {})";
        assert_eq!(host.run_main(&mut lp, "p.js", src), 0);
        let w = Rc::downgrade(&host);
        drop(host);
        assert!(w.upgrade().is_none(), "the host outlived its handle");
        assert_eq!(lp.stats().timers, before, "{:?}", lp.stats());
    }

    // Driven by the application's `lp.run()`, never finished: dropping the
    // handle frees the host (the loop's callbacks do not keep it), and its
    // pending interval then ends without running JavaScript.
    let host = QuickJsHost::create_with(Options::default()).unwrap();
    host.eval_main(
        &mut lp,
        "p.js",
        "globalThis.t = setTimeout(() => {}, 5); setInterval(() => {}, 10)",
    )
    .unwrap();
    lp.run_until(lp.now() + 25).unwrap();
    let w = Rc::downgrade(&host);
    drop(host);
    assert!(w.upgrade().is_none(), "the host outlived its handle");
    lp.run().unwrap();
    assert!(!lp.is_alive());

    // An `fs.stat` in flight does not keep a dropped host either, and its
    // callback runs no JavaScript (its completion held the host strongly
    // before: the host outlived its handle and the callback ran).
    let out = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let o = out.clone();
    let options = Options {
        console: Some(std::sync::Arc::new(move |_, text: &str| {
            o.lock().unwrap().push_str(text)
        })),
        ..Default::default()
    };
    let host = QuickJsHost::create_with(options).unwrap();
    host.eval_main(
        &mut lp,
        "p.js",
        "require('fs').stat('.', () => console.log('stat callback'))",
    )
    .unwrap();
    let w = Rc::downgrade(&host);
    drop(host);
    assert!(w.upgrade().is_none(), "a stat in flight kept the host");
    lp.run().unwrap();
    assert_eq!(*out.lock().unwrap(), "");
    assert!(!lp.is_alive());
}

#[test]
fn an_uncaught_exception_in_the_main_script_is_fatal() {
    // A throw, and a promise rejected with no handler: `eval_main` returns
    // the error, the `exit` listeners hear 1, nothing else runs and `run`
    // returns 1 at once, as `run_main` (and node) end.
    for src in [
        "setTimeout(() => log.push('timer'), 5); throw new Error('fatal')",
        "setTimeout(() => log.push('timer'), 5); Promise.reject(new Error('nobody catches'))",
    ] {
        let src =
            format!("globalThis.log = []; process.on('exit', c => log.push('exit ' + c)); {src}");
        let (ctx, host, mut lp) = host();
        let e = host.eval_main(&mut lp, "p.js", &src).unwrap_err();
        assert!(matches!(e, timerloop::Error::Uncaught(_)), "{e}");
        assert_eq!(host.exited(), Some(1));
        assert_eq!(host.run(&mut lp), 1);
        assert_eq!(lp.now(), 0);
        assert!(!lp.is_alive());
        let log: Vec<String> = global(&ctx, "log");
        assert_eq!(log, ["exit 1"], "{src}");

        let (ctx, host, mut lp) = self::host();
        assert_eq!(host.run_main(&mut lp, "p.js", &src), 1);
        let log: Vec<String> = global(&ctx, "log");
        assert_eq!(log, ["exit 1"], "{src}");
    }
    // With a listener the exception is not fatal.
    let (_ctx, host, mut lp) = host();
    host.eval_main(
        &mut lp,
        "p.js",
        "process.on('uncaughtException', () => {}); setTimeout(() => {}, 5); throw 1",
    )
    .unwrap();
    assert_eq!(host.run(&mut lp), 0);
    assert_eq!(lp.now(), 5);
}

#[test]
fn the_applications_errors_do_not_reach_a_hosts_listeners() {
    let (ctx, host, mut lp) = host();
    host.eval_main(
        &mut lp,
        "p.js",
        "globalThis.seen = []; process.on('uncaughtException', e => seen.push(String(e)));
         setTimeout(() => { throw new Error('mine') }, 5); setTimeout(() => {}, 20)",
    )
    .unwrap();
    lp.set_timeout(10, |_| Err::<(), _>(std::io::Error::other("app db down")));
    let err = lp.run().unwrap_err().into_callback_error().unwrap();
    assert_eq!(lp.now(), 10);
    let timerloop::Cause::Error(e) = err.cause() else {
        panic!("{err}")
    };
    assert!(e.downcast_ref::<std::io::Error>().is_some(), "{e}");
    assert_eq!(host.exited(), None, "the host's program goes on");
    let seen: Vec<String> = global(&ctx, "seen");
    assert_eq!(seen, ["Error: mine"]);
    assert_eq!(host.run(&mut lp), 0);
    assert_eq!(lp.now(), 20);
}

#[test]
fn each_hosts_uncaught_exceptions_are_its_own() {
    let log = "globalThis.log = []; process.on('exit', c => log.push('exit ' + c));";
    // B throws with no listener: B ends with 1, A goes on, whether A
    // listens (it hears nothing) or not (B's fatal exception, found by
    // A's `run`, ends B).
    for a_listens in [true, false] {
        let mut lp = EventLoop::with_virtual_clock();
        let a = QuickJsHost::create_with(Options::default()).unwrap();
        let b = QuickJsHost::create_with(Options::default()).unwrap();
        let listener = if a_listens {
            "process.on('uncaughtException', e => log.push('A caught ' + e.message));"
        } else {
            ""
        };
        let src = format!("{log} {listener} setTimeout(() => log.push('t40'), 40)");
        a.eval_main(&mut lp, "a.js", &src).unwrap();
        let src = format!("{log} setTimeout(() => {{ throw new Error('B broke') }}, 5)");
        b.eval_main(&mut lp, "b.js", &src).unwrap();
        assert_eq!(a.run(&mut lp), 0, "A listens: {a_listens}");
        assert_eq!(lp.now(), 40);
        assert_eq!((a.exited(), b.exited()), (Some(0), Some(1)));
        let la: Vec<String> = global(a.context(), "log");
        let lb: Vec<String> = global(b.context(), "log");
        assert_eq!(la, ["t40", "exit 0"]);
        assert_eq!(lb, ["exit 1"]);
    }

    // Both listen: each hears its own.
    let mut lp = EventLoop::with_virtual_clock();
    let a = QuickJsHost::create_with(Options::default()).unwrap();
    let b = QuickJsHost::create_with(Options::default()).unwrap();
    for (h, name) in [(&a, "A"), (&b, "B")] {
        let src = format!(
            "{log} process.on('uncaughtException', e => log.push('caught ' + e.message));
             setTimeout(() => {{ throw new Error('{name}') }}, 5)"
        );
        h.eval_main(&mut lp, "p.js", &src).unwrap();
    }
    lp.run().unwrap();
    let la: Vec<String> = global(a.context(), "log");
    let lb: Vec<String> = global(b.context(), "log");
    assert_eq!(la, ["caught A"]);
    assert_eq!(lb, ["caught B"]);
    // B ends: A's listener still takes A's exceptions.
    b.enter(&mut lp, |c| c.eval::<(), _>("process.exit(0)"))
        .unwrap();
    a.enter(&mut lp, |c| {
        c.eval::<(), _>("setTimeout(() => { throw new Error('again') }, 1)")
    })
    .unwrap();
    assert_eq!(a.run(&mut lp), 0);
    let la: Vec<String> = global(a.context(), "log");
    assert_eq!(la, ["caught A", "caught again", "exit 0"]);
}

/// The application's own uncaught-error handler stays behind the hosts'
/// router: while a host listens for `uncaughtException`, the host's
/// exceptions go to its listeners and the application's failures to the
/// application's handler; when the host stops listening, that handler is
/// the loop's again. Before, the router replaced it (the application's
/// failures were fatal while a host listened) and then cleared it.
#[test]
fn the_applications_handler_stays_behind_the_hosts_router() {
    use std::cell::RefCell;
    let app_log = Rc::new(RefCell::new(Vec::<String>::new()));
    let mut lp = EventLoop::with_virtual_clock();
    let l = app_log.clone();
    lp.set_uncaught_handler(move |_, e| l.borrow_mut().push(e.message()));
    let host = QuickJsHost::create_with(Options::default()).unwrap();
    let src = "globalThis.log = [];
        globalThis.listener = e => log.push('caught ' + e.message);
        process.on('uncaughtException', listener);
        setTimeout(() => { throw new Error('js broke') }, 5)";
    host.eval_main(&mut lp, "main.js", src).unwrap();
    lp.set_timeout(10, |_| Err::<(), _>("app broke"));
    lp.run().unwrap();
    let log: Vec<String> = global(host.context(), "log");
    assert_eq!(log, ["caught js broke"]);
    assert_eq!(*app_log.borrow(), ["app broke"]);

    // The host stops listening: the application's handler is back.
    host.enter(&mut lp, |c| {
        c.eval::<(), _>("process.removeListener('uncaughtException', listener)")
    })
    .unwrap();
    lp.set_timeout(1, |_| Err::<(), _>("app again"));
    lp.run().unwrap();
    assert_eq!(*app_log.borrow(), ["app broke", "app again"]);

    // A handler the application sets while the host listens replaces the
    // router, and stays when the host stops listening.
    host.enter(&mut lp, |c| {
        c.eval::<(), _>("process.on('uncaughtException', listener)")
    })
    .unwrap();
    let l = app_log.clone();
    lp.set_uncaught_handler(move |_, e| l.borrow_mut().push(format!("new: {}", e.message())));
    host.enter(&mut lp, |c| {
        c.eval::<(), _>("process.removeListener('uncaughtException', listener)")
    })
    .unwrap();
    lp.set_timeout(1, |_| Err::<(), _>("app third"));
    lp.run().unwrap();
    assert_eq!(
        *app_log.borrow(),
        ["app broke", "app again", "new: app third"]
    );
}

/// A rejection reported to an `unhandledRejection` listener is not kept
/// alive by the host: once the program drops its promise, a collection
/// frees it (Node keeps reported promises in a `WeakMap`). Before, the
/// host kept every reported promise for a `rejectionHandled` that might
/// come, so the finalizer never ran.
#[test]
fn a_reported_rejection_is_freed_with_its_promise() {
    let (ctx, host, mut lp) = host();
    let src = "globalThis.freed = 0;
        const reg = globalThis.reg = new FinalizationRegistry(() => { freed++ });
        process.on('unhandledRejection', () => {});
        for (let i = 0; i < 3; i++) reg.register(Promise.reject(new Error('x' + i)), i);
        setTimeout(() => {}, 10);
        setTimeout(() => {}, 20);";
    host.eval_main(&mut lp, "main.js", src).unwrap();
    lp.run_until(5).unwrap(); // the rejections are reported
    ctx.runtime().run_gc();
    assert_eq!(host.run(&mut lp), 0);
    assert_eq!(global::<i32>(&ctx, "freed"), 3);
}

/// Gives the program a global `killSwitch()`: a native of the
/// application's that ends the program with `code` (`Host::terminate`).
fn kill_switch(host: &Rc<QuickJsHost>, code: i32) {
    let weak = Rc::downgrade(host);
    host.context().with(|c| {
        let kill = rquickjs::Function::new(c.clone(), move || {
            if let Some(h) = weak.upgrade() {
                EventLoop::with_current(|lp| h.terminate(lp, code));
            }
        })
        .unwrap();
        c.globals().set("killSwitch", kill).unwrap();
    });
}

/// `Host::terminate`: the application unloads a plugin. The program ends
/// with the code given, whatever it did to `process.exit`; none of its
/// JavaScript runs again (no `exit` listener, no pending tick or
/// microtask, no timer); its timers and immediates leave the loop at
/// once, so the application's run ends with its own work, not the
/// plugin's day-long timer. Called from inside the program's own
/// JavaScript (a native the application gave it), the script stops
/// there. Before, there was no such call: dropping the host left its
/// refed timers on the loop until they came due.
#[test]
fn terminate_unloads_a_plugin() {
    let (ctx, host, mut lp) = host();
    host.eval_main(
        &mut lp,
        "plugin.js",
        "globalThis.log = [];
         process.exit = () => log.push('no exit');
         process.on('exit', () => log.push('exit listener'));
         setInterval(() => log.push('interval'), 10);
         setTimeout(() => log.push('a day'), 86400000);
         setImmediate(() => log.push('immediate'));
         process.nextTick(() => log.push('tick'));",
    )
    .unwrap();
    let app = Rc::new(std::cell::Cell::new(0));
    let a = app.clone();
    lp.set_timeout(25, move |lp| a.set(lp.now()));
    lp.run_until(15).unwrap();
    host.terminate(&mut lp, 9);
    assert_eq!(host.exited(), Some(9));
    assert_eq!(
        lp.stats().timers,
        1,
        "only the application's: {:?}",
        lp.stats()
    );
    lp.run().unwrap();
    assert_eq!((app.get(), lp.now()), (25, 25));
    let log: Vec<String> = global(&ctx, "log");
    assert_eq!(log, ["tick", "immediate", "interval"]);
    // Nothing runs in it any more; a second terminate changes nothing.
    host.terminate(&mut lp, 3);
    assert_eq!(host.exited(), Some(9));
    assert_eq!(host.run(&mut lp), 9);
    assert_eq!(
        host.enter(&mut lp, |c| c.eval::<i32, _>("1")).unwrap(),
        None
    );

    // From inside the program: a native of the application's that
    // terminates it (a kill switch) stops the script at the next check.
    let (ctx, host, mut lp) = self::host();
    kill_switch(&host, 4);
    host.eval_main(
        &mut lp,
        "plugin.js",
        "globalThis.after = 0;
         setTimeout(() => { killSwitch(); for (let i = 0; i < 1e7; i++) after++; }, 5);",
    )
    .unwrap();
    lp.run().unwrap();
    assert_eq!(host.exited(), Some(4));
    assert!(
        global::<i32>(&ctx, "after") < 1_000_000,
        "stopped soon after"
    );
    assert!(!lp.is_alive());
}

/// `max_memory: Some(0)` is a limit too small for the host's setup, as
/// the docs say only `None` is none: `create_with` fails. Before, QuickJS
/// took the 0 as no limit, and the program allocated freely.
#[test]
fn a_zero_memory_limit_is_a_limit() {
    let r = QuickJsHost::create_with(Options {
        max_memory: Some(0),
        ..Default::default()
    });
    assert!(r.is_err());
    let r = QuickJsHost::create_with(Options {
        max_memory: Some(64 << 20),
        ..Default::default()
    });
    assert!(r.is_ok());
}

/// `terminate` from a native the program calls: what the script does
/// before the engine's next check stops it goes nowhere: its writes are
/// dropped, and its `process.exit` neither runs the `exit` listeners nor
/// changes the status (nor, on a host made to end the OS process, ends
/// it). Before, a `process.exit(3)` right after the kill switch ran the
/// listeners and made the status 3.
#[test]
fn a_terminated_scripts_last_steps_go_nowhere() {
    use std::sync::{Arc, Mutex};
    let out = Arc::new(Mutex::new(String::new()));
    let o = out.clone();
    let options = Options {
        console: Some(Arc::new(move |_, text: &str| {
            o.lock().unwrap().push_str(text)
        })),
        ..Default::default()
    };
    let host = QuickJsHost::create_with(options).unwrap();
    let mut lp = EventLoop::with_virtual_clock();
    kill_switch(&host, 4);
    host.eval_main(
        &mut lp,
        "plugin.js",
        "process.on('exit', (c) => console.log('exit listener', c));
         setTimeout(() => { console.log('before'); killSwitch(); console.log('after'); process.exit(3); }, 5);",
    )
    .unwrap();
    assert_eq!(host.run(&mut lp), 4);
    assert_eq!(host.exited(), Some(4));
    assert_eq!(*out.lock().unwrap(), "before\n");
}

/// An embedder's main script under a name with no file behind it resolves
/// its relative `require`s against the name's folder (a name that is not
/// absolute is in the working directory), as Node resolves a program's.
#[test]
fn a_virtual_main_requires_files_beside_its_name() {
    let dir = std::env::temp_dir().join(format!("tljs-embed-require-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(
        dir.join("lib/helper.js"),
        "exports.double = (n) => 2 * n; exports.from = require('./data.json').from;",
    )
    .unwrap();
    std::fs::write(dir.join("lib/data.json"), r#"{ "from": "data.json" }"#).unwrap();
    let main = dir.join("virtual-main.js").display().to_string();
    let (ctx, virt, mut lp) = host();
    let src = "const h = require('./lib/helper');
        let missing;
        try { require('./absent') } catch (e) { missing = [e.code, e.requireStack[0] === __filename] }
        globalThis.got = JSON.stringify([h.double(21), h.from, require.main === module,
            module.filename === __filename, __dirname === require('path').dirname(__filename), missing]);";
    virt.eval_main(&mut lp, &main, src).unwrap();
    let got: String = global(&ctx, "got");
    assert_eq!(
        got,
        r#"[42,"data.json",true,true,true,["MODULE_NOT_FOUND",true]]"#
    );
    // A bare name is in the working directory: `./Cargo.toml` is this
    // crate's, where cargo runs its tests.
    let (ctx, bare, mut lp) = host();
    let src = "const cwd = process.cwd();
        globalThis.got = JSON.stringify([__filename, __dirname, module.filename === cwd + '/main.js',
            require.resolve('./Cargo.toml') === cwd + '/Cargo.toml']);";
    bare.eval_main(&mut lp, "main.js", src).unwrap();
    let got: String = global(&ctx, "got");
    assert_eq!(got, r#"["main.js",".",true,true]"#);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An embedded program has no descriptors of its own: `fs.writeSync` to
/// one other than 1 and 2 (the application's sockets and files share the
/// numbers) is refused as not open (`EBADF`), where tljs writes there.
#[test]
fn an_embedded_program_cannot_write_to_other_descriptors() {
    let host = QuickJsHost::create_with(Default::default()).unwrap();
    let mut lp = EventLoop::new();
    let src = "const fs = require('fs');
        globalThis.out = [0, 3, 4].map((fd) => {
          try { fs.writeSync(fd, 'x'); return 'wrote'; } catch (e) { return e.code; }
        }).join(' ');";
    host.eval_main(&mut lp, "main.js", src).unwrap();
    let out: String = host.context().with(|c| c.globals().get("out")).unwrap();
    assert_eq!(out, "EBADF EBADF EBADF");
    assert_eq!(host.run(&mut lp), 0);
}
