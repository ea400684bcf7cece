//! tljs's standard streams, against node when it is installed: `-` runs
//! the program on standard input (`[stdin]`, argv[1] `-`, `__dirname`
//! `.`), and a write to a pipe whose reader is gone raises Node's `EPIPE`
//! error in the program (from a tick for a stream write or a console
//! call, an uncaught exception that ends it with 1; thrown at once by
//! `fs.writeSync`), so a program piped to `head` ends as under node.

mod common;
use common::node_available;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const TLJS: &str = env!("CARGO_BIN_EXE_tljs");

/// Waits for `child` at most 30 s; kills it and fails the test after.
fn wait(child: &mut Child, what: &str) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("{what} did not end");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `cmd` with `args` and `stdin` as its standard input; returns the
/// status and both streams.
fn run_stdin(cmd: &str, args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {cmd}: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().expect("no signal"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_dash_runs_the_program_on_standard_input() {
    let program = "console.log(__filename, JSON.stringify(__dirname), process.argv.slice(1));
        setTimeout(() => { console.log('timer'); process.exitCode = 3 }, 1)";
    let want = "[stdin] \".\" [ '-', 'a', 'b' ]\ntimer\n";
    let (status, out, err) = run_stdin(TLJS, &["-", "a", "b"], program);
    assert_eq!((status, out.as_str()), (3, want), "{err}");
    if node_available() {
        let (status, out, _) = run_stdin("node", &["-", "a", "b"], program);
        assert_eq!((status, out.as_str()), (3, want), "node");
    }
    // An error's frames name the file `[stdin]`, as node's do.
    let (status, _, err) = run_stdin(TLJS, &["-"], "function f() { null.x }\nf()");
    assert_eq!(status, 1);
    assert!(err.contains("    at f ([stdin]:1:"), "{err}");
    // Options come first; `-` after `--` is the same.
    let (status, out, err) = run_stdin(TLJS, &["--max-run", "5000", "--", "-"], "console.log(1)");
    assert_eq!((status, out.as_str()), (0, "1\n"), "{err}");
}

/// A program that writes a line every millisecond for ever: `head -1`'s
/// case. node ends with 1 once the reader is gone (its stream raises
/// `EPIPE`); tljs wrote into nothing for ever before.
#[test]
fn a_program_whose_reader_is_gone_ends_with_epipe() {
    let file = program_file(
        "forever",
        "let i = 0; setInterval(() => console.log('line ' + i++), 1)",
    );
    let mut cmds = vec![TLJS];
    if node_available() {
        cmds.push("node");
    }
    for cmd in cmds {
        let mut child = Command::new(cmd)
            .arg(&file)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert_eq!(first, "line 0\n", "{cmd}");
        // The reader is dropped here: the next write fails.
        let status = wait(&mut child, cmd);
        let err = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
        assert_eq!(status.code(), Some(1), "{cmd}: {err}");
        let from = err
            .find("Error: write EPIPE")
            .unwrap_or_else(|| panic!("{cmd}: {err}"));
        assert!(
            err[from..].contains("code: 'EPIPE'") && err[from..].contains("syscall: 'write'"),
            "{cmd}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}

/// Runs `file` with `cmd`, its standard output a pipe whose reader is
/// gone before the program writes (the programs write 50 ms on or later).
fn run_unread(cmd: &str, file: &std::path::Path) -> (Option<i32>, String) {
    let mut child = Command::new(cmd)
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = wait(&mut child, cmd);
    let err = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
    (status.code(), err)
}

/// Writes `program` to a file of its own in a fresh folder.
fn program_file(name: &str, program: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tljs-stdio-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.js"));
    std::fs::write(&file, program).unwrap();
    file
}

/// Node's console swallows its stream's first failure: a program whose
/// one line of output finds no reader ends normally, under node and tljs.
#[test]
fn the_consoles_first_failed_write_is_not_an_error() {
    let file = program_file(
        "once",
        "setTimeout(() => { console.log('result'); console.error('after'); }, 50);
        process.on('exit', (c) => console.error('exit', c))",
    );
    let mut cmds = vec![TLJS];
    if node_available() {
        cmds.push("node");
    }
    for cmd in cmds {
        assert_eq!(
            run_unread(cmd, &file),
            (Some(0), "after\nexit 0\n".to_owned()),
            "{cmd}"
        );
    }
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}

/// With the reader gone before the program writes, and an
/// `uncaughtException` listener that lets it go on: tljs's order of the
/// write callbacks and the raised error (node's places the error
/// elsewhere among the ticks in some programs: see `streamWrite` in the
/// prelude), and `fs.writeSync`'s error, thrown at once.
#[test]
fn a_failed_writes_callback_gets_the_error_before_it_is_raised() {
    let file = program_file(
        "order",
        "process.on('uncaughtException', (e) =>
          console.error('caught', e.message, e.code, e.errno, e.syscall));
        setTimeout(() => {
          console.log('a'); // the console's first failure: swallowed
          const r = process.stdout.write('c\\n', (e) => console.error('cb c', e && e.code));
          console.error('write returned', r);
          process.stdout.write('d\\n', (e) => console.error('cb d', e && e.code));
          process.nextTick(() => {
            console.error('tick');
            try {
              require('fs').writeSync(1, 'x\\n');
              console.error('no throw');
            } catch (e) {
              console.error('threw', e.message, e.code, e.errno, e.syscall);
            }
          });
        }, 50);
        setTimeout(() => console.log('late'), 100)",
    );
    let want = "write returned false
cb c EPIPE
caught write EPIPE EPIPE -32 write
cb d EPIPE
tick
threw EPIPE: broken pipe, write EPIPE -32 write
caught write EPIPE EPIPE -32 write
";
    assert_eq!(run_unread(TLJS, &file), (Some(0), want.to_owned()));
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}
