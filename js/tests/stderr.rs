//! What tljs writes to stderr, against Node's shape (checked against node
//! too when it is installed): an uncaught error or unhandled rejection is
//! its stack (`Name: message`, then `    at` frames) once, then its own
//! properties and `[cause]` as `util.inspect` shows them; warnings carry
//! Node's `(Use ...)` hint once per process, `--trace-deprecation` for a
//! `DeprecationWarning`. Node puts the throwing source line first; tljs
//! does not, so errors are compared from their `Name: message` line on.

mod common;
use common::{node_available, run};

/// stderr from the line `header` on, up to the `Node.js` trailer, with
/// every frame line made `    at …` (frames are each engine's own).
fn error_part(stderr: &str, header: &str) -> String {
    let start = stderr
        .find(&format!("{header}\n"))
        .unwrap_or_else(|| panic!("no {header:?} line in:\n{stderr}"));
    let rest = &stderr[start..];
    let end = rest.find("\n\nNode.js ").unwrap_or(rest.len());
    let mut out: Vec<String> = Vec::new();
    for line in rest[..end].lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("at ") || trimmed.starts_with("... ") {
            let indent = &line[..line.len() - trimmed.len()];
            // One line per run of frames; the last one's ` {` stays.
            let brace = if line.ends_with(" {") { " {" } else { "" };
            if out
                .last()
                .is_some_and(|l| l.starts_with(&format!("{indent}at …")))
            {
                out.pop();
            }
            out.push(format!("{indent}at …{brace}"));
        } else {
            out.push(line.to_owned());
        }
    }
    out.join("\n")
}

/// tljs prints `expected` (frames folded) from `header` on, exits 1, and
/// node prints the same.
fn check_error(program: &str, header: &str, expected: &str) {
    let r = run(env!("CARGO_BIN_EXE_tljs"), &[], program);
    let (status, stderr) = (r.status, r.stderr);
    assert_eq!(status, 1, "tljs stderr:\n{stderr}");
    assert!(
        stderr.starts_with(&format!("{header}\n    at ")),
        "tljs stderr does not start with the stack:\n{stderr}"
    );
    assert_eq!(
        stderr.matches(header).count(),
        1,
        "header printed twice:\n{stderr}"
    );
    assert!(stderr.ends_with("\n\nNode.js v20 (tljs)\n"), "{stderr}");
    assert_eq!(error_part(&stderr, header), expected, "tljs:\n{stderr}");
    if node_available() {
        let r = run("node", &[], program);
        let (status, stderr) = (r.status, r.stderr);
        assert_eq!(status, 1, "node stderr:\n{stderr}");
        assert_eq!(error_part(&stderr, header), expected, "node:\n{stderr}");
    }
}

#[test]
fn an_uncaught_error_is_its_stack_once() {
    check_error(
        "setTimeout(() => { throw new Error('boom'); }, 1);",
        "Error: boom",
        "Error: boom\n    at …",
    );
    check_error(
        "class AppError extends Error { constructor(m) { super(m); this.name = 'AppError'; } }\n\
         throw new AppError('bad');",
        "AppError: bad",
        "AppError: bad\n    at …",
    );
}

#[test]
fn an_unhandled_rejection_is_its_stack_once() {
    check_error(
        "Promise.reject(new TypeError('bad'));",
        "TypeError: bad",
        "TypeError: bad\n    at …",
    );
}

#[test]
fn an_uncaught_error_shows_its_properties_and_cause() {
    check_error(
        "const e = new Error('outer', { cause: new Error('inner') });\n\
         e.code = 'E_X';\n\
         throw e;",
        "Error: outer",
        "Error: outer\n    at … {\n  code: 'E_X',\n  [cause]: Error: inner\n      at …\n}",
    );
}

/// Node's fatal report inspects the error as its `afterInspector` does:
/// the error's own inspector is not called (an AssertionError's, which
/// shows `actual` and `expected` one level deep, would print `[Object]`)
/// and properties go 5 levels deep, not `util.inspect`'s 2.
#[test]
fn the_fatal_report_skips_custom_inspectors_and_goes_five_deep() {
    check_error(
        "const e = new Error('deep');\n\
         e.d = { a: { b: { c: { d: { e: { f: 1 } } } } } };\n\
         e[Symbol.for('nodejs.util.inspect.custom')] = () => 'CUSTOM';\n\
         throw e;",
        "Error: deep",
        "Error: deep\n    at … {\n  d: {\n    a: {\n      b: { c: { d: { e: [Object] } } }\n    }\n  },\n  \
         [Symbol(nodejs.util.inspect.custom)]: [Function (anonymous)]\n}",
    );
    check_error(
        "const { AssertionError } = require('assert');\n\
         throw new AssertionError({ message: 'm', actual: { a: [1] }, expected: 3, operator: 'x' });",
        "AssertionError [ERR_ASSERTION]: m",
        "AssertionError [ERR_ASSERTION]: m\n    at … {\n  generatedMessage: false,\n  code: 'ERR_ASSERTION',\n  \
         actual: { a: [ 1 ] },\n  expected: 3,\n  operator: 'x'\n}",
    );
}

/// Warnings are the same text as Node's, but for the pid.
fn check_warnings(program: &str, expected: &str) {
    let pid = regex_free_pid(&run(env!("CARGO_BIN_EXE_tljs"), &[], program).stderr);
    assert_eq!(pid, expected, "tljs");
    if node_available() {
        assert_eq!(
            regex_free_pid(&run("node", &[], program).stderr),
            expected,
            "node"
        );
    }
}

/// `(node:1234)` as `(node:PID)`.
fn regex_free_pid(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("(node:") {
        out.push_str(&rest[..i + 6]);
        rest = rest[i + 6..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push_str("PID");
    }
    out.push_str(rest);
    out
}

#[test]
fn the_warning_hint_names_the_flag_for_the_first_warning_only() {
    check_warnings(
        "process.emitWarning('old API', 'DeprecationWarning', 'DEP0999');\n\
         process.emitWarning('plain');",
        "(node:PID) [DEP0999] DeprecationWarning: old API\n\
         (Use `node --trace-deprecation ...` to show where the warning was created)\n\
         (node:PID) Warning: plain\n",
    );
    check_warnings(
        "process.emitWarning('plain');\n\
         process.emitWarning('old API', 'DeprecationWarning', 'DEP0999');",
        "(node:PID) Warning: plain\n\
         (Use `node --trace-warnings ...` to show where the warning was created)\n\
         (node:PID) [DEP0999] DeprecationWarning: old API\n",
    );
}

/// A fatal exception runs the `exit` listeners before it is reported, as
/// Node does (its handler emits `exit`, then the report is printed); an
/// `exit` listener that throws then is ignored silently, and one that
/// calls `process.exit` ends the program with no report. Before the fix
/// tljs printed the report first and the listener's own error after it.
#[test]
fn exit_listeners_run_before_the_fatal_report() {
    let cases = [
        (
            "process.on('exit', c => console.error('listener', c));\n\
             setTimeout(() => { throw new Error('boom'); }, 1);",
            1,
            true,
        ),
        (
            "process.on('exit', c => { console.error('listener', c); throw new Error('in exit'); });\n\
             throw new Error('boom');",
            1,
            true,
        ),
        (
            "process.on('exit', c => { console.error('listener', c); process.exit(5); });\n\
             throw new Error('boom');",
            5,
            false,
        ),
    ];
    let mut cmds = vec![env!("CARGO_BIN_EXE_tljs")];
    if node_available() {
        cmds.push("node");
    }
    for (program, status, reported) in cases {
        for cmd in &cmds {
            let r = run(cmd, &[], program);
            let what = format!("{cmd} on {program:?}:\n{}", r.stderr);
            assert_eq!(r.status, status, "{what}");
            assert!(r.stderr.starts_with("listener 1\n"), "{what}");
            assert!(!r.stderr.contains("in exit"), "{what}");
            assert_eq!(r.stderr.contains("Error: boom"), reported, "{what}");
        }
    }
}

/// Node's warning printer is the first `warning` listener: it prints
/// before a program's own listener runs (here one that writes to stderr
/// too), prints a warning's `code` and `detail`, and removing the
/// listeners silences it. Before, tljs printed after the listeners, so a
/// listener that called `process.exit` lost the warning, and ignored
/// `detail`.
#[test]
fn the_warning_printer_is_the_first_listener() {
    check_warnings(
        "process.on('warning', (w) => console.error('listener saw', w.name));\n\
         process.emitWarning('w3', { type: 'T', code: 'X', detail: 'some detail' });\n\
         setTimeout(() => { process.removeAllListeners('warning'); process.emitWarning('silenced'); }, 5);",
        "(node:PID) [X] T: w3\n\
         some detail\n\
         (Use `node --trace-warnings ...` to show where the warning was created)\n\
         listener saw T\n",
    );
}

/// Node's leak checks: an EventTarget warns once (its first type over
/// ten listeners), the `process` emitter once per event; a signal shared
/// by more than ten `timers/promises` timers is the common case.
#[test]
fn too_many_listeners_warn_as_in_node() {
    check_warnings(
        "const tp = require('timers/promises');\n\
         const ac = new AbortController();\n\
         for (let i = 0; i < 11; i++) tp.setTimeout(1, i, { signal: ac.signal });\n\
         for (let i = 0; i < 11; i++) process.on('exit', () => {});\n\
         const t = new EventTarget();\n\
         for (let i = 0; i < 12; i++) { t.addEventListener('a', () => {}); t.addEventListener('b', () => {}); }",
        "(node:PID) MaxListenersExceededWarning: Possible EventTarget memory leak detected. \
         11 abort listeners added to [AbortSignal]. MaxListeners is 10. Use events.setMaxListeners() to increase limit\n\
         (Use `node --trace-warnings ...` to show where the warning was created)\n\
         (node:PID) MaxListenersExceededWarning: Possible EventEmitter memory leak detected. \
         11 exit listeners added to [process]. MaxListeners is 10. Use emitter.setMaxListeners() to increase limit\n\
         (node:PID) MaxListenersExceededWarning: Possible EventTarget memory leak detected. \
         11 a listeners added to EventTarget. MaxListeners is 10. Use events.setMaxListeners() to increase limit\n",
    );
}

/// An uncaught object that is not an error (an array, a plain object) is
/// printed as `util.inspect` shows it with no hint, as Node does; only a
/// primitive gets the `--trace-uncaught` hint. (Node's source-line header
/// is not compared.)
#[test]
fn only_a_thrown_primitive_gets_the_trace_uncaught_hint() {
    let hint = "(Use `node --trace-uncaught ...` to show where the exception was thrown)";
    let mut cmds = vec![env!("CARGO_BIN_EXE_tljs")];
    if node_available() {
        cmds.push("node");
    }
    for (thrown, shown, hinted) in [
        ("{ a: 1 }", "{ a: 1 }", false),
        ("[1, 2]", "[ 1, 2 ]", false),
        ("5", "5", true),
        ("10n", "10", true),
    ] {
        for cmd in &cmds {
            let r = run(
                cmd,
                &[],
                &format!("setImmediate(() => {{ throw {thrown}; }});"),
            );
            let what = format!("{cmd} throwing {thrown}:\n{}", r.stderr);
            assert_eq!(r.status, 1, "{what}");
            assert!(
                r.stderr.contains(&format!("\n{shown}\n"))
                    || r.stderr.starts_with(&format!("{shown}\n")),
                "{what}"
            );
            assert_eq!(r.stderr.contains(hint), hinted, "{what}");
        }
    }
}

/// Node's own errors (its NodeError, and assert's AssertionError) say
/// their code in the stack's header and in `toString`: `TypeError
/// [ERR_INVALID_ARG_TYPE]: ...`, their `name` staying `TypeError`. tljs's
/// said `TypeError: ...`.
#[test]
fn node_errors_carry_their_code_in_the_header() {
    let header = "TypeError [ERR_INVALID_ARG_TYPE]: The \"callback\" argument must be of type \
                  function. Received type string ('x')";
    check_error(
        "setTimeout('x');",
        header,
        &format!("{header}\n    at … {{\n  code: 'ERR_INVALID_ARG_TYPE'\n}}"),
    );
}
