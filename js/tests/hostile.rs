//! Hostile programs: each ends with a documented status, never a hang, a
//! crash or a panic of the host. Where Node defines the answer (every case
//! but the heap limit) the status is Node's, and when `node` is installed
//! the test checks it against node too.
//!
//! | program | status | stderr has |
//! | --- | --- | --- |
//! | throws from a timeout, interval, immediate, nextTick, queueMicrotask, fs.stat callback | 1 | the error |
//! | rejects a promise with no handler | 1 | the error |
//! | an `exit` listener throws at the normal end | 1 (`process.exitCode` if set) | the error |
//! | an `exit` listener throws inside `process.exit(3)` | 3 | the error |
//! | an `exit` listener throws after an uncaught exception | 1 | both errors |
//! | an `exit` listener throws, an `uncaughtException` listener takes it | 0 | |
//! | an `uncaughtException` listener throws | 7 | the listener's error |
//! | recurses forever | 1 | `RangeError: Maximum call stack size exceeded` |
//! | recurses forever inside try/catch | 0 (caught `RangeError`) | |
//! | allocates without bound, `--max-memory 32` | 1 (node: a fatal error, 134) | `out of memory` |
//! | allocates without bound inside try/catch, `--max-memory 32` | 0 (caught `InternalError`, or `null` when QuickJS cannot allocate even that) | |

use timerloop::EventLoop;
use timerloop_js::{Options, QuickJsHost};

mod common;
use common::{node_available, run};

/// tljs ends `program` with `status`, stdout `stdout` and `needle` in
/// stderr; node (if installed) gives the same status and stdout.
fn check(program: &str, status: i32, stdout: &str, needle: &str) {
    let r = run(env!("CARGO_BIN_EXE_tljs"), &[], program);
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (status, stdout),
        "tljs on:\n{program}\nstderr:\n{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(needle),
        "stderr lacks {needle:?}:\n{}",
        r.stderr
    );
    if node_available() {
        let n = run("node", &[], program);
        assert_eq!(
            (n.status, n.stdout.as_str()),
            (status, stdout),
            "node on:\n{program}"
        );
        assert!(
            n.stderr.contains(needle),
            "node's stderr lacks {needle:?}:\n{}",
            n.stderr
        );
    }
}

#[test]
fn a_throw_from_every_callback_kind_is_uncaught_with_status_1() {
    let after = "setTimeout(() => console.log('never'), 30);";
    for (kind, program) in [
        (
            "timeout",
            "setTimeout(() => { throw new Error('boom timeout'); }, 1);",
        ),
        (
            "interval",
            "setInterval(() => { console.log('run'); throw new Error('boom interval'); }, 1);",
        ),
        (
            "immediate",
            "setImmediate(() => { throw new Error('boom immediate'); });",
        ),
        (
            "tick",
            "process.nextTick(() => { throw new Error('boom tick'); });",
        ),
        (
            "microtask",
            "queueMicrotask(() => { throw new Error('boom microtask'); });",
        ),
        ("rejection", "Promise.reject(new Error('boom rejection'));"),
        (
            "stat",
            "require('fs').stat(__filename, () => { throw new Error('boom stat'); });",
        ),
    ] {
        let stdout = if kind == "interval" { "run\n" } else { "" };
        check(
            &format!("{program}\n{after}"),
            1,
            stdout,
            &format!("Error: boom {kind}"),
        );
    }
}

#[test]
fn exit_listeners_that_throw() {
    let throws =
        "process.on('exit', (c) => { console.log('exit', c); throw new Error('from exit'); });";
    check(
        &format!("{throws} console.log('main');"),
        1,
        "main\nexit 0\n",
        "Error: from exit",
    );
    check(
        &format!("{throws} process.exitCode = 5;"),
        5,
        "exit 5\n",
        "Error: from exit",
    );
    check(
        &format!("{throws} setTimeout(() => process.exit(3), 1);"),
        3,
        "exit 3\n",
        "Error: from exit",
    );
    check(
        &format!("{throws} setTimeout(() => {{ throw new Error('first'); }}, 1);"),
        1,
        "exit 1\n",
        "Error: first",
    );
    check(
        &format!(
            "process.on('uncaughtException', (e) => console.log('listener', e.message)); {throws}"
        ),
        0,
        "exit 0\nlistener from exit\n",
        "",
    );
    check(
        "process.on('uncaughtException', () => { throw new Error('listener throws'); });
         setTimeout(() => { throw new Error('first'); }, 1);",
        7,
        "",
        "listener throws",
    );
}

#[test]
fn endless_recursion_is_a_range_error() {
    let f = "function f(n) { return f(n + 1) + 1; }";
    check(
        &format!("{f} setTimeout(() => f(0), 1);"),
        1,
        "",
        "RangeError: Maximum call stack size exceeded",
    );
    check(
        &format!("{f} try {{ f(0); }} catch (e) {{ console.log(e.name, e.message); }}"),
        0,
        "RangeError Maximum call stack size exceeded\n",
        "",
    );
    // Recursion through promise jobs and ticks does not grow the stack:
    // it is a queue, bounded here by a count.
    check(
        "let n = 0; function t() { if (++n < 100000) process.nextTick(t); else console.log(n); } t();",
        0,
        "100000\n",
        "",
    );
}

#[test]
fn unbounded_allocation_under_a_heap_limit_ends_with_status_1() {
    let tljs = env!("CARGO_BIN_EXE_tljs");
    for program in [
        "const a = []; for (;;) a.push({ s: 'x'.repeat(50) + a.length });",
        "const a = []; setTimeout(function grow() { for (let i = 0; i < 1e5; i++) a.push('y'.repeat(80) + i); setImmediate(grow); }, 1);",
        "let s = 'x'; for (;;) s += s;",
    ] {
        let r = run(tljs, &["--max-memory", "32"], program);
        assert_eq!(r.status, 1, "{program}\n{}", r.stderr);
        assert!(
            r.stderr.contains("out of memory") || r.stderr.contains("string too long"),
            "{program}\n{}",
            r.stderr
        );
    }
    let r = run(
        tljs,
        &["--max-memory", "32"],
        // What is caught is an InternalError, with no message when QuickJS
        // could not allocate that (which layout of the heap hits it moves
        // with the prelude's size), or null when it could not allocate
        // even the error.
        "const a = []; try { for (;;) a.push('x'.repeat(1000) + a.length); } catch (e) { a.length = 0; console.log(e === null || /^InternalError(: out of memory)?$/.test(String(e))); }
         setTimeout(() => console.log('the loop goes on'), 1);",
    );
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (0, "true\nthe loop goes on\n"),
        "{}",
        r.stderr
    );
    let r = run(tljs, &["--max-memory", "x"], "1");
    assert_eq!(r.status, 2, "a bad --max-memory is a usage error");
}

#[test]
fn embedded_hostile_programs_end_the_program_not_the_host() {
    for (program, status) in [
        (
            "const a = []; for (;;) a.push({ s: 'x'.repeat(50) + a.length });",
            1,
        ),
        ("function f() { return f() + 1; } setTimeout(f, 1);", 1),
        (
            "process.on('uncaughtException', () => { throw new Error('again'); }); setImmediate(() => { throw 1; });",
            7,
        ),
        (
            "process.on('exit', () => { throw new Error('x'); }); process.exitCode = 4;",
            4,
        ),
    ] {
        let host = QuickJsHost::create_with(Options {
            max_memory: Some(32 << 20),
            ..Options::default()
        })
        .unwrap();
        let mut lp = EventLoop::new();
        assert_eq!(
            host.run_main(&mut lp, "hostile.js", program),
            status,
            "{program}"
        );
        assert_eq!(host.exited(), Some(status));
    }
}
