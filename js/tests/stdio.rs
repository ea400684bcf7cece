//! tljs's standard streams, against node when it is installed: `-` runs
//! the program on standard input (`[stdin]`, argv[1] `-`, `__dirname`
//! `.`), and a write to a pipe whose reader is gone follows Node's stream
//! and console (`EPIPE`): a failure period whose writes are not made,
//! whose callbacks get the error, and whose tick raises it (to `error`
//! listeners, or uncaught: status 1) unless the console swallows it;
//! `fs.writeSync` throws it at once. So a program piped to `head` ends
//! as under node.

mod common;
use common::node_available;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

const TLJS: &str = env!("CARGO_BIN_EXE_tljs");

/// Waits for `child` at most 30 s; kills it and fails the test after.
fn wait(child: &mut Child, what: &str) -> ExitStatus {
    common::wait_for(child, what, Duration::from_secs(30))
}

/// Runs `cmd` with `args` and `stdin` as its standard input, in `dir`
/// if given; returns the status and both streams.
fn run_stdin(
    cmd: &str,
    args: &[&str],
    stdin: &str,
    dir: Option<&std::path::Path>,
) -> (i32, String, String) {
    let mut command = Command::new(cmd);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let mut child = command
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
    let (status, out, err) = run_stdin(TLJS, &["-", "a", "b"], program, None);
    assert_eq!((status, out.as_str()), (3, want), "{err}");
    if node_available() {
        let (status, out, _) = run_stdin("node", &["-", "a", "b"], program, None);
        assert_eq!((status, out.as_str()), (3, want), "node");
    }
    // An error's frames name the file `[stdin]`, as node's do.
    let (status, _, err) = run_stdin(TLJS, &["-"], "function f() { null.x }\nf()", None);
    assert_eq!(status, 1);
    assert!(err.contains("    at f ([stdin]:1:"), "{err}");
    // Options come first; `-` after `--` is the same.
    let (status, out, err) = run_stdin(
        TLJS,
        &["--max-run", "5000", "--", "-"],
        "console.log(1)",
        None,
    );
    assert_eq!((status, out.as_str()), (0, "1\n"), "{err}");
}

/// A program on standard input requires files relative to the working
/// directory, as node's `[stdin]` module does (not the main module: no
/// `require.main`, and its `this` is the global object).
#[test]
fn a_program_on_standard_input_requires_from_the_working_directory() {
    let dir = std::env::temp_dir().join(format!("tljs-stdin-require-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(
        dir.join("lib/x.js"),
        "module.exports = 'x from ' + module.parent.id;",
    )
    .unwrap();
    let program = "console.log(require('./lib/x'), require.resolve('./lib/x') === process.cwd() + '/lib/x.js',
          module.id, module.filename === process.cwd() + '/[stdin]', require.main, this === globalThis);
        try { require('./absent') } catch (e) {
          console.log(e.message.split(process.cwd()).join('.'), e.requireStack.length)
        }";
    let want = "x from [stdin] true [stdin] true undefined true\n\
        Cannot find module './absent'\nRequire stack:\n- ./[stdin] 1\n";
    let run = |cmd: &str| run_stdin(cmd, &["-"], program, Some(&dir));
    let (status, out, err) = run(TLJS);
    assert_eq!((status, out.as_str()), (0, want), "{err}");
    if node_available() {
        let (status, out, err) = run("node");
        assert_eq!((status, out.as_str()), (0, want), "node: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
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
    for cmd in commands() {
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
/// gone before the program starts.
fn run_unread(cmd: &str, file: &std::path::Path) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = Command::new(cmd)
        .arg(file)
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait(&mut child, cmd);
    let err = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
    (status.code(), err)
}

/// tljs, and node when it is installed: what each check runs.
fn commands() -> Vec<&'static str> {
    let mut cmds = vec![TLJS];
    if node_available() {
        cmds.push("node");
    }
    cmds
}

/// Runs `program` (as the file `NAME.js`) on tljs and node with its reader
/// gone ([`run_unread`]): each must end with status 0 and `want` on stderr.
fn unread_as_node(name: &str, program: &str, want: &str) {
    let file = program_file(name, program);
    for cmd in commands() {
        assert_eq!(run_unread(cmd, &file), (Some(0), want.to_owned()), "{cmd}");
    }
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
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
    unread_as_node(
        "once",
        "setTimeout(() => { console.log('result'); console.error('after'); }, 50);
        process.on('exit', (c) => console.error('exit', c))",
        "after\nexit 0\n",
    );
}

/// With the reader gone before the program writes, and an
/// `uncaughtException` listener that lets it go on: the writes of a
/// failure period are not made and their callbacks get the error before
/// it is raised; the console swallows the first period it wrote in; a
/// later period raises; `fs.writeSync` throws at once. As node does.
#[test]
fn a_failure_periods_callbacks_come_before_its_error() {
    unread_as_node(
        "order",
        "process.on('uncaughtException', (e) =>
          console.error('caught', e.message, e.code, e.errno, e.syscall));
        setTimeout(() => {
          console.log('a'); // opens a failure period the console swallows
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
        "write returned false
cb c EPIPE
cb d EPIPE
tick
threw EPIPE: broken pipe, write EPIPE -32 write
caught write EPIPE EPIPE -32 write
",
    );
}

/// A program that prints its lines in one go and ends, its reader gone:
/// the console swallows the failure (every write of the period), so it
/// ends 0, as under node.
#[test]
fn a_program_that_prints_and_ends_ends_normally_without_a_reader() {
    unread_as_node(
        "burst",
        "setTimeout(() => {
          for (let i = 0; i < 1000; i++) console.log('line ' + i);
          process.stdout.write('and a stream write\\n');
          console.error('done');
        }, 50)",
        "done\n",
    );
}

/// The streams are event emitters: an `error` listener takes the error
/// (a console write's too: with a listener the console swallows nothing),
/// and `once('drain')` can be asked for.
#[test]
fn an_error_listener_on_the_stream_takes_the_error() {
    unread_as_node(
        "listener",
        "process.stdout.on('error', (e) => console.error('listener', e.code));
        process.stdout.once('drain', () => console.error('drain'));
        setTimeout(() => console.log('a'), 50);
        setTimeout(() => process.stdout.write('b\\n'), 60);
        process.on('exit', (c) => console.error('exit', c))",
        "listener EPIPE\nlistener EPIPE\nexit 0\n",
    );
}

/// A program file that is not valid UTF-8 runs, each invalid sequence read
/// as U+FFFD, as node reads it (tljs refused it: "cannot read").
#[test]
fn a_file_that_is_not_utf8_runs_as_under_node() {
    let dir = std::env::temp_dir().join(format!("tljs-stdio-latin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("latin.js");
    std::fs::write(&file, b"console.log('caf\xe9', 'x\xc3')\n").unwrap();
    for cmd in commands() {
        let out = Command::new(cmd).arg(&file).output().unwrap();
        assert_eq!(
            (out.status.code(), out.stdout.as_slice()),
            (Some(0), "caf\u{fffd} x\u{fffd}\n".as_bytes()),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// tljs's own messages to a stderr whose reader is gone are lost, not a
/// panic (status 101): a file that cannot be read still ends with 1.
#[test]
fn tljs_own_messages_to_a_broken_stderr_do_not_panic() {
    // The pipe's reader is gone before tljs starts.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = Command::new(TLJS)
        .arg("/nonexistent/program.js")
        .stdout(Stdio::null())
        .stderr(writer)
        .spawn()
        .unwrap();
    assert_eq!(wait(&mut child, "tljs").code(), Some(1));
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = Command::new(TLJS)
        .arg("--help")
        .stdout(writer)
        .spawn()
        .unwrap();
    assert_eq!(wait(&mut child, "tljs --help").code(), Some(0));
}

/// Node's order around a failure period, with an `error` listener: the
/// callbacks (from a tick the failed write queued), the ticks queued after
/// the write and by the callbacks, then the error and `close` (a tick
/// later), then the microtasks; and a later write starts a period of its
/// own.
#[test]
fn the_error_comes_a_tick_after_the_callbacks_then_close() {
    unread_as_node(
        "ticks",
        "process.stdout.on('error', (e) => console.error('L', e.code));
        process.stdout.on('close', () => console.error('close'));
        process.stdout.write('a\\n', () => {
          console.error('cb');
          process.nextTick(() => console.error('tick1'));
          Promise.resolve().then(() => console.error('micro'));
        });
        process.nextTick(() => console.error('tick0'));
        setTimeout(() => { process.stdout.write('b\\n'); console.error('second'); }, 20)",
        "cb\ntick0\ntick1\nL EPIPE\nclose\nmicro\nsecond\nL EPIPE\nclose\n",
    );
}

/// A failed write's callback that throws leaves the stream failed for
/// good, as Node's: nothing more is written, no later callback runs and
/// no error is raised.
#[test]
fn a_throwing_write_callback_leaves_the_stream_failed() {
    unread_as_node(
        "stuck",
        "process.on('uncaughtException', (e) => console.error('UE', e.code || e.message));
        process.stdout.write('a\\n', (e) => { console.error('cb', e && e.code); throw new Error('boom'); });
        process.stdout.write('b\\n', (e) => console.error('cb2', e && e.code));
        setTimeout(() => {
          process.stdout.write('c\\n', (e) => console.error('cb3', e && e.code));
          console.log('d');
          console.error('later');
        }, 10)",
        "cb EPIPE\nUE boom\nlater\n",
    );
}

/// Node's console swallows a failure through a no-op `error` listener
/// that its next write to the stream removes: a console write between a
/// failure's callbacks and its raise lets the error be raised after all.
/// `close` comes after a raised error even when it was thrown (an
/// `uncaughtException` listener took it).
#[test]
fn a_console_write_before_the_raise_lets_the_error_through() {
    unread_as_node(
        "between",
        "process.on('uncaughtException', (e) => console.error('UE', e.code));
        process.stdout.on('close', () => console.error('close'));
        console.log('a');
        process.nextTick(() => { console.log('b'); });
        setTimeout(() => console.error('later'), 500)",
        "UE EPIPE\nclose\nUE EPIPE\nclose\nlater\n",
    );
}

/// A stream's `writable`, `errored` and `writableLength` follow its
/// failure period as Node's do: not writable from the failed write until
/// the period's tick, the writes not made counted (a string by its
/// length, bytes by theirs; the failed write not at all), and all as
/// before once the period ends; for good on a stream a throwing callback
/// left stuck.
#[test]
fn the_streams_state_follows_the_failure_period() {
    unread_as_node(
        "state",
        "const s = process.stdout;
        const show = (tag) => console.error(tag, s.writable, s.errored && s.errored.code,
          s.writableLength, s.destroyed, s.writableEnded, 'isTTY' in s);
        show('start');
        s.on('error', (e) => show('error ' + e.code));
        s.write('h\u{e9}llo\u{20ac}\u{1f600}\\n', (e) => show('cb ' + (e && e.code)));
        show('w1');
        s.write('h\u{e9}llo\u{20ac}\u{1f600}\\n');
        show('w2');
        s.write(Buffer.from('h\u{e9}llo\u{20ac}\u{1f600}\\n'));
        show('w3');
        process.nextTick(() => show('tick'));
        setTimeout(() => {
          s.write('x', () => { throw new Error('stuck'); });
          s.write('yz');
          process.on('uncaughtException', (e) => show('UE ' + e.message));
          setTimeout(() => { s.write('abc'); show('later'); }, 10);
        }, 10)",
        "start true null 0 false false false\n\
         w1 false EPIPE 0 false false false\n\
         w2 false EPIPE 9 false false false\n\
         w3 false EPIPE 23 false false false\n\
         cb EPIPE false EPIPE 23 false false false\n\
         tick true null 0 false false false\n\
         error EPIPE true null 0 false false false\n\
         UE stuck false EPIPE 2 false false false\n\
         later false EPIPE 5 false false false\n",
    );
}

/// `tljs` gives the program the process's environment as node does
/// (`process.env`), and the directory it runs in (`process.cwd()`).
#[test]
fn tljs_passes_the_environment_and_the_working_directory() {
    let file = common::write_program(
        "env.js",
        "console.log(process.env.TLJS_TEST_VALUE, process.cwd())",
    );
    let dir = file.parent().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tljs"))
        .arg(&file)
        .current_dir(dir)
        .env("TLJS_TEST_VALUE", "from the parent")
        .output()
        .unwrap();
    let dir_text = std::fs::canonicalize(dir).unwrap().display().to_string();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("from the parent {dir_text}\n")
    );
    let _ = std::fs::remove_file(&file);
}

/// `fs.writeSync` to a descriptor the shell opened (`3>file`) writes there,
/// bytes as they are (a character split across two writes arrives whole),
/// and one not open is Node's `EBADF`; tljs wrote both to stdout.
#[test]
fn write_sync_reaches_other_descriptors() {
    let program = "const fs = require('fs');\n\
        console.log(fs.writeSync(3, 'to three\\n'), fs.writeSync(3, Buffer.from([0xe2, 0x82])),\n\
          fs.writeSync(3, Buffer.from([0xac, 0x0a])), fs.writeSync(3, '6869', null, 'hex'));\n\
        try { fs.writeSync(99, 'lost'); } catch (e) { console.log(e.code, e.message, e.syscall, e.errno); }\n";
    let file = program_file("fd3", program);
    let dir = file.parent().unwrap().to_owned();
    for cmd in commands() {
        let out = dir.join("three.txt");
        let r = Command::new("sh")
            .arg("-c")
            .arg("exec 3>\"$2\"; exec \"$0\" \"$1\"")
            .args([cmd, file.to_str().unwrap(), out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(
            r.status.code(),
            Some(0),
            "{cmd}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&r.stdout),
            "9 2 2 2\nEBADF EBADF: bad file descriptor, write write -9\n",
            "{cmd}"
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            "to three\n€\nhi".as_bytes(),
            "{cmd}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
