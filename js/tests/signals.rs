//! Signals (`process.on('SIGINT')`, `process.kill`), which
//! fixtures/js/signals.js checks against node where a program can print
//! it; here what it cannot: a signal whose listeners are gone ends the
//! process as by default, and an embedded program never takes the
//! application's signals.
#![cfg(unix)]

mod common;
use common::node_available;

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use timerloop::EventLoop;
use timerloop_js::QuickJsHost;

const TLJS: &str = env!("CARGO_BIN_EXE_tljs");

/// A listener added and removed leaves the signal to its default action:
/// the process ends, killed by it (as node's), and nothing after runs.
#[test]
fn a_signal_whose_listeners_are_gone_ends_the_process() {
    let file = common::write_program(
        "gone.js",
        "const f = () => console.log('listener');
         process.on('SIGUSR2', f);
         process.off('SIGUSR2', f);
         setTimeout(() => process.kill(process.pid, 'SIGUSR2'), 1);
         setTimeout(() => console.log('survived'), 300);",
    );
    let mut cmds = vec![TLJS];
    if node_available() {
        cmds.push("node");
    }
    for cmd in cmds {
        let mut child = Command::new(cmd)
            .arg(&file)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let status = common::wait_for(&mut child, cmd, Duration::from_secs(30));
        let out = std::io::read_to_string(child.stdout.take().unwrap()).unwrap();
        assert_eq!(status.signal(), Some(12), "{cmd}: {status}");
        assert_eq!(out, "", "{cmd}");
    }
    let _ = std::fs::remove_file(&file);
}

/// An embedded host (whose `process.exit` does not end the OS process)
/// keeps the listener but never watches the signal: the application's
/// signals stay its own.
#[test]
fn an_embedded_program_never_takes_the_signals() {
    let host = QuickJsHost::create_with(Default::default()).unwrap();
    let mut lp = EventLoop::new();
    let src = "globalThis.got = false;
        process.on('SIGWINCH', () => { got = true; });
        globalThis.count = process.listenerCount('SIGWINCH');
        setTimeout(() => {}, 100);";
    host.eval_main(&mut lp, "main.js", src).unwrap();
    // SIGWINCH does nothing by default: were it watched, the listener
    // would run in the next poll phase.
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGWINCH).unwrap();
    assert_eq!(host.run(&mut lp), 0);
    let (got, count): (bool, u32) = host
        .context()
        .with(|c| Ok::<_, rquickjs::Error>((c.globals().get("got")?, c.globals().get("count")?)))
        .unwrap();
    assert_eq!((got, count), (false, 1));
}

/// `process.kill` in an embedded program is refused as a process
/// without the permission is (EPERM, Node's error shape), whatever the
/// target: its pid is the application's own, and 0 or -1 would reach
/// the application's process group or every process of its user. Before,
/// `process.kill(process.pid, 'SIGUSR1')` ended the application.
#[test]
fn an_embedded_program_cannot_send_signals() {
    let host = QuickJsHost::create_with(Default::default()).unwrap();
    let mut lp = EventLoop::new();
    // SIGWINCH for the real pid: ignored by default, so a regression
    // shows as a missing error, not as a killed test process.
    let src = "globalThis.out = [];
        for (const [pid, sig] of [[process.pid, 'SIGWINCH'], [process.pid, 0], [0, 0], [-1, 0]]) {
          try { process.kill(pid, sig); out.push('sent'); }
          catch (e) { out.push([e.message, e.code, e.errno, e.syscall].join(' ')); }
        }
        globalThis.out = out.join('|');";
    host.eval_main(&mut lp, "main.js", src).unwrap();
    let out: String = host.context().with(|c| c.globals().get("out")).unwrap();
    assert_eq!(out, ["kill EPERM EPERM -1 kill"; 4].join("|"));
    assert_eq!(host.run(&mut lp), 0);
}
