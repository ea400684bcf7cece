//! `Options::console`: an embedder takes a program's output (its console,
//! its `process.stdout`/`stderr` writes, its warnings) and the host's own
//! report of an uncaught exception, each piece as it would be written,
//! and nothing reaches the process's streams.

use std::process::Command;
use std::sync::{Arc, Mutex};

use timerloop::EventLoop;
use timerloop_js::{Options, QuickJsHost, Stream};

type Pieces = Arc<Mutex<Vec<(Stream, String)>>>;

/// A host whose output goes to the returned list.
fn captured() -> (std::rc::Rc<QuickJsHost>, Pieces) {
    let out: Pieces = Arc::default();
    let o = out.clone();
    let options = Options {
        console: Some(Arc::new(move |s: Stream, text: &str| {
            o.lock().unwrap().push((s, text.to_owned()));
        })),
        ..Default::default()
    };
    (QuickJsHost::create_with(options).unwrap(), out)
}

fn text(out: &Pieces, stream: Stream) -> String {
    let out = out.lock().unwrap();
    out.iter()
        .filter(|(s, _)| *s == stream)
        .map(|(_, t)| t.as_str())
        .collect()
}

/// Everything the program writes, in order, each write one piece, on the
/// stream Node would use; `fs.writeSync` to any fd but 2 is stdout, as
/// tljs writes it.
const WRITES: &str = r#"
    console.log('log', 1, { a: [2] });
    console.info('info');
    console.error('error');
    console.warn('warn');
    process.stdout.write('chunk ');
    process.stdout.write('and more\n');
    process.stderr.write('err chunk');
    const fs = require('fs');
    fs.writeSync(1, 'fd 1\n');
    fs.writeSync(2, 'fd 2\n');
    process.emitWarning('careful', 'MyWarning');
    setTimeout(() => console.log('later'), 5);
"#;

#[test]
fn every_write_reaches_the_sink_as_one_piece_on_its_stream() {
    let (host, out) = captured();
    let mut lp = EventLoop::with_virtual_clock();
    assert_eq!(host.run_main(&mut lp, "main.js", WRITES), 0);
    let pid = std::process::id();
    let want: Vec<(Stream, String)> = [
        (Stream::Stdout, "log 1 { a: [ 2 ] }\n".to_owned()),
        (Stream::Stdout, "info\n".to_owned()),
        (Stream::Stderr, "error\n".to_owned()),
        (Stream::Stderr, "warn\n".to_owned()),
        (Stream::Stdout, "chunk ".to_owned()),
        (Stream::Stdout, "and more\n".to_owned()),
        (Stream::Stderr, "err chunk".to_owned()),
        (Stream::Stdout, "fd 1\n".to_owned()),
        (Stream::Stderr, "fd 2\n".to_owned()),
        (
            Stream::Stderr,
            format!(
                "(node:{pid}) MyWarning: careful\n\
                 (Use `node --trace-warnings ...` to show where the warning was created)\n"
            ),
        ),
        (Stream::Stdout, "later\n".to_owned()),
    ]
    .into_iter()
    .collect();
    assert_eq!(*out.lock().unwrap(), want);
}

#[test]
fn the_hosts_report_of_an_uncaught_exception_is_one_stderr_piece() {
    let (host, out) = captured();
    let mut lp = EventLoop::with_virtual_clock();
    let src = "console.log('before'); setTimeout(() => { throw new TypeError('bad plugin') }, 5)";
    assert_eq!(host.run_main(&mut lp, "plugin.js", src), 1);
    let pieces = out.lock().unwrap().clone();
    assert_eq!(pieces.len(), 2, "{pieces:?}");
    assert_eq!(pieces[0], (Stream::Stdout, "before\n".to_owned()));
    let (stream, report) = &pieces[1];
    assert_eq!(*stream, Stream::Stderr);
    assert!(
        report.starts_with("TypeError: bad plugin\n    at "),
        "{report}"
    );
    assert!(report.ends_with("\n\nNode.js v20 (tljs)\n"), "{report}");

    // An unhandled rejection, and an `uncaughtException` listener that
    // throws (Node's status 7: the listener's error is printed alone).
    let (host, out) = captured();
    assert_eq!(
        host.run_main(
            &mut lp,
            "plugin.js",
            "Promise.reject(new Error('no catch'))"
        ),
        1
    );
    let err = text(&out, Stream::Stderr);
    assert!(err.starts_with("Error: no catch\n"), "{err}");
    let (host, out) = captured();
    let src = "process.on('uncaughtException', () => { throw new Error('listener broke') });
        setTimeout(() => { throw new Error('first') }, 1)";
    host.eval_main(&mut lp, "plugin.js", src).unwrap();
    assert_eq!(host.run(&mut lp), 7);
    let err = text(&out, Stream::Stderr);
    assert!(err.starts_with("Error: listener broke\n"), "{err}");
    assert!(!err.contains("first"), "{err}");
}

#[test]
fn each_host_on_a_loop_has_its_own_sink() {
    let (a, a_out) = captured();
    let (b, b_out) = captured();
    let mut lp = EventLoop::with_virtual_clock();
    a.eval_main(&mut lp, "a.js", "setTimeout(() => console.log('a 10'), 10)")
        .unwrap();
    b.eval_main(
        &mut lp,
        "b.js",
        "setTimeout(() => console.log('b 5'), 5); setTimeout(() => console.error('b 15'), 15)",
    )
    .unwrap();
    lp.run().unwrap();
    assert_eq!(
        *a_out.lock().unwrap(),
        [(Stream::Stdout, "a 10\n".to_owned())]
    );
    assert_eq!(
        *b_out.lock().unwrap(),
        [
            (Stream::Stdout, "b 5\n".to_owned()),
            (Stream::Stderr, "b 15\n".to_owned())
        ]
    );
}

/// Run in a child process by
/// [`nothing_reaches_the_process_streams`]: a program that writes to both
/// streams, fails, and is reported, all into a sink.
#[test]
fn child_writes_only_to_its_sink() {
    if std::env::var_os("TLJS_CONSOLE_CHILD").is_none() {
        return;
    }
    let (host, out) = captured();
    let mut lp = EventLoop::with_virtual_clock();
    let src = format!("{WRITES}; setTimeout(() => {{ throw new Error('SECRET-3') }}, 9)");
    let src = src
        .replace("'log'", "'SECRET-1'")
        .replace("'error'", "'SECRET-2'");
    assert_eq!(host.run_main(&mut lp, "child.js", &src), 1);
    let all: String = out
        .lock()
        .unwrap()
        .iter()
        .map(|(_, t)| t.as_str())
        .collect();
    assert!(
        all.contains("SECRET-1") && all.contains("SECRET-2") && all.contains("SECRET-3"),
        "{all}"
    );
}

#[test]
fn nothing_reaches_the_process_streams() {
    // Without --nocapture the test harness would take what `print!` writes
    // and hide it; the host writes to the streams directly, and with it
    // neither is hidden.
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writes_only_to_its_sink", "--nocapture"])
        .env("TLJS_CONSOLE_CHILD", "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    for s in [&stdout, &stderr] {
        assert!(!s.contains("SECRET") && !s.contains("Node.js v20"), "{s}");
    }
}

/// The console works from an embedder's bare `ctx.with`, outside the
/// host's scope with no loop current, as a synchronous write: its
/// after-write tick (which needs the loop) is left out there, its id
/// still taken; inside the host the tick is queued as Node's. Before,
/// that first console call panicked (no current loop).
#[test]
fn console_works_outside_the_hosts_scope() {
    let (host, out) = captured();
    host.context()
        .with(|c| c.eval::<(), _>("console.log('bare'); console.error('bare err')"))
        .unwrap();
    assert_eq!(text(&out, Stream::Stdout), "bare\n");
    assert_eq!(text(&out, Stream::Stderr), "bare err\n");
    // And in the host's scope, the ticks are queued and run.
    let mut lp = EventLoop::with_virtual_clock();
    let src = "console.log('in scope'); const t = setTimeout(() => {}, 1); console.log(+t)";
    assert_eq!(host.run_main(&mut lp, "main.js", src), 0);
    // 2, 3: the bare calls' ids; 4: the tick of 'in scope'; 5: the timeout.
    assert_eq!(text(&out, Stream::Stdout), "bare\nin scope\n5\n");
}
