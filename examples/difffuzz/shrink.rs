//! Printing parsed timer scripts back as source ([`to_source`]), and
//! shrinking a script that shows a difference from Node to a small one that
//! still shows it ([`shrink`]), for the difffuzz tool (`main.rs`, next to
//! this file). `tests/difffuzz.rs` compiles this file too (`#[path]`); it
//! uses only the crate's public API.

use std::collections::HashSet;

use timerloop::script::parse::{Body, Script, Stmt, parse};

// ------------------------------------------------------------ printing ---

/// A delay as a script writes it (`NaN`, `Infinity`, `-Infinity` or the
/// number).
pub fn fmt_delay(d: f64) -> String {
    if d.is_nan() {
        "NaN".to_owned()
    } else if d.is_infinite() {
        if d > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        format!("{d}")
    }
}

/// Prints `script` as timer-script source that parses back to the same
/// statements (comments are not kept).
///
/// Top-level statements go on lines of their own; a body goes on one line
/// when it is short, else one statement per line, indented.
#[must_use]
pub fn to_source(script: &Script) -> String {
    let mut out = String::new();
    for s in script.body.iter() {
        print_stmt(script, s, 0, &mut out);
        out.push('\n');
    }
    out
}

fn print_stmt(script: &Script, s: &Stmt, indent: usize, out: &mut String) {
    let name = |i: &usize| script.names[*i].name.as_str();
    let (head, body) = match s {
        Stmt::Log(w) => (format!("log {w}"), None),
        Stmt::Throw(w) => (format!("throw {w}"), None),
        Stmt::Timeout {
            name: n,
            delay,
            body,
        } => (
            format!("timeout {} {}", name(n), fmt_delay(*delay)),
            Some(body),
        ),
        Stmt::Interval {
            name: n,
            delay,
            body,
        } => (
            format!("interval {} {}", name(n), fmt_delay(*delay)),
            Some(body),
        ),
        Stmt::Immediate { name: n, body } => (format!("immediate {}", name(n)), Some(body)),
        Stmt::Tick(body) => ("tick".to_owned(), Some(body)),
        Stmt::Microtask(body) => ("microtask".to_owned(), Some(body)),
        Stmt::Io(body) => ("io".to_owned(), Some(body)),
        Stmt::Clear(n) => (format!("clear {}", name(n)), None),
        Stmt::Refresh(n) => (format!("refresh {}", name(n)), None),
        Stmt::Ref(n) => (format!("ref {}", name(n)), None),
        Stmt::Unref(n) => (format!("unref {}", name(n)), None),
        Stmt::HasRef(n) => (format!("hasref {}", name(n)), None),
        Stmt::Block(ms) => (format!("block {ms}"), None),
        Stmt::Nth(n, body) => (format!("nth {n}"), Some(body)),
        Stmt::Task(body) => ("task".to_owned(), Some(body)),
        Stmt::Sleep(ms) => (format!("sleep {ms}"), None),
        Stmt::Yield => ("yield".to_owned(), None),
        Stmt::Check => ("check".to_owned(), None),
        // `Stmt` is `#[non_exhaustive]`: a statement added to the language
        // must be taught to this printer (its unit tests print every
        // generated script back to itself).
        other => panic!("to_source: a statement this printer does not know: {other:?}"),
    };
    out.push_str(&head);
    let Some(body) = body else { return };
    let mut inline = String::new();
    for (i, t) in body.iter().enumerate() {
        if i > 0 {
            inline.push(' ');
        }
        print_stmt(script, t, 0, &mut inline);
    }
    if inline.contains('\n') || indent * 2 + head.len() + inline.len() > 72 {
        out.push_str(" {\n");
        for t in body.iter() {
            out.push_str(&"  ".repeat(indent + 1));
            print_stmt(script, t, indent + 1, out);
            out.push('\n');
        }
        out.push_str(&"  ".repeat(indent));
        out.push('}');
    } else if inline.is_empty() {
        out.push_str(" { }");
    } else {
        out.push_str(" { ");
        out.push_str(&inline);
        out.push_str(" }");
    }
}

// ----------------------------------------------------------- shrinking ---

fn with_body(s: &Stmt, body: Body) -> Stmt {
    match s {
        Stmt::Timeout { name, delay, .. } => Stmt::Timeout {
            name: *name,
            delay: *delay,
            body,
        },
        Stmt::Interval { name, delay, .. } => Stmt::Interval {
            name: *name,
            delay: *delay,
            body,
        },
        Stmt::Immediate { name, .. } => Stmt::Immediate { name: *name, body },
        Stmt::Tick(_) => Stmt::Tick(body),
        Stmt::Microtask(_) => Stmt::Microtask(body),
        Stmt::Io(_) => Stmt::Io(body),
        Stmt::Nth(n, _) => Stmt::Nth(*n, body),
        Stmt::Task(_) => Stmt::Task(body),
        other => other.clone(),
    }
}

/// Whether `body` (not looking into nested callbacks) clears `name`.
fn clears(body: &[Stmt], name: usize) -> bool {
    body.iter().any(|s| match s {
        Stmt::Clear(n) => *n == name,
        Stmt::Nth(_, b) => clears(b, name),
        _ => false,
    })
}

/// Whether the first await of a task body is a `sleep`: then the sleep's
/// timer is created at the end of the task's first poll, and a
/// `microtask { block N }` right after the `task` statement (the next
/// microtask to run) makes it overdue, as the generator's attached `sleep`.
fn first_await_is_sleep(body: &[Stmt]) -> bool {
    body.iter()
        .find(|s| matches!(s, Stmt::Sleep(_) | Stmt::Yield | Stmt::Check))
        .is_some_and(|s| matches!(s, Stmt::Sleep(_)))
}

/// Whether `s`, after `prev`, is the `microtask { block N }` that makes an
/// attached `sleep` of the task `prev` overdue.
fn sleep_guard(prev: Option<&Stmt>, s: &Stmt) -> bool {
    match (prev, s) {
        (Some(Stmt::Task(task)), Stmt::Microtask(body)) => {
            first_await_is_sleep(task) && matches!(&body[..], [Stmt::Block(_)])
        }
        _ => false,
    }
}

/// Paths (indexes from the top level down) of the statements the shrinker
/// may remove: with `blocks`, the `block`s; otherwise everything else.
///
/// Kept are: an interval's own `clear` (and the `nth` around it), and a
/// timeout that a later statement of its body refreshes (else the `refresh`
/// could restart the running timeout, forever), so that the script still
/// ends; the `block` right after a timeout, interval or `io`, the first
/// `block` of an interval's body, and the `microtask { block N }` right
/// after a task whose first await is a `sleep` (with its block), which keep
/// attached timers, attached `sleep`s and `io` from racing.
fn removable(
    body: &[Stmt],
    interval: Option<usize>,
    blocks: bool,
    path: &mut Vec<usize>,
    out: &mut Vec<Vec<usize>>,
) {
    for (i, s) in body.iter().enumerate() {
        path.push(i);
        let prev = i.checked_sub(1).map(|j| &body[j]);
        if sleep_guard(prev, s) {
            path.pop();
            continue;
        }
        let keep = match s {
            Stmt::Block(_) => {
                !blocks
                    || matches!(
                        prev,
                        Some(Stmt::Timeout { .. } | Stmt::Interval { .. } | Stmt::Io(_))
                    )
                    || (i == 0 && interval.is_some())
            }
            _ if blocks => true,
            Stmt::Clear(n) => interval == Some(*n),
            // `timeout t … block B refresh t`: without the timeout, the
            // refresh would hit another `t`, maybe the running one.
            Stmt::Timeout { name, .. } => body[i + 1..]
                .iter()
                .any(|t| matches!(t, Stmt::Refresh(n) if n == name)),
            Stmt::Nth(_, b) => interval.is_some_and(|n| clears(b, n)),
            _ => false,
        };
        if !keep {
            out.push(path.clone());
        }
        if let Some(b) = s.body() {
            let inner = match s {
                Stmt::Interval { name, .. } => Some(*name),
                Stmt::Nth(..) => interval,
                _ => None,
            };
            removable(b, inner, blocks, path, out);
        }
        path.pop();
    }
}

fn without(body: &[Stmt], gone: &HashSet<Vec<usize>>, path: &mut Vec<usize>) -> Body {
    let mut out = Vec::new();
    for (i, s) in body.iter().enumerate() {
        path.push(i);
        if !gone.contains(path) {
            out.push(match s.body() {
                Some(b) => with_body(s, without(b, gone, path)),
                None => s.clone(),
            });
        }
        path.pop();
    }
    out.into()
}

/// Shrinks `script` by delta debugging over its statements.
///
/// Repeatedly removes chunks of statements (a statement goes with its
/// body), halving the chunk size down to single statements, and keeps a
/// smaller script whenever `keep(candidate, source)` accepts it (`source` is
/// [`to_source`] of the candidate). Statements are tried first; then the
/// `block`s that are not needed to keep the script race-free; then
/// statements again. It never removes an interval's own `clear`, so the
/// candidates still end.
///
/// Returns the smallest accepted script (`script` itself if none was).
pub fn shrink(script: &Script, mut keep: impl FnMut(&Script, &str) -> bool) -> Script {
    let mut cur = script.clone();
    for blocks in [false, true, false] {
        let mut parts = 2;
        loop {
            let mut cands = Vec::new();
            removable(&cur.body, None, blocks, &mut Vec::new(), &mut cands);
            if cands.is_empty() {
                break;
            }
            parts = parts.min(cands.len());
            let chunk = cands.len().div_ceil(parts);
            let mut reduced = false;
            for part in cands.chunks(chunk) {
                let gone: HashSet<Vec<usize>> = part.iter().cloned().collect();
                let body = without(&cur.body, &gone, &mut Vec::new());
                // `Script` is `#[non_exhaustive]`: a copy of the current
                // one with its fields replaced.
                let mut cand = cur.clone();
                cand.body = body;
                cand.virtual_only = false;
                let src = to_source(&cand);
                let Ok(cand) = parse("shrink.tl", &src) else {
                    continue;
                };
                if keep(&cand, &src) {
                    cur = cand;
                    reduced = true;
                    break;
                }
            }
            if reduced {
                parts = parts.saturating_sub(1).max(2);
            } else if chunk == 1 {
                break;
            } else {
                parts *= 2;
            }
        }
    }
    cur
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scriptgen::generate;

    #[test]
    fn printing_drops_comments_and_normalizes() {
        let script = parse("a.tl", "# hi\ntimeout a 007 { log a }  log b").unwrap();
        assert_eq!(to_source(&script), "timeout a 7 { log a }\nlog b\n");
    }

    #[test]
    fn generated_scripts_print_back_to_themselves() {
        for seed in 0..300 {
            let src = generate(seed, 30);
            let script = parse("g.tl", &src).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{src}"));
            let printed = to_source(&script);
            let again = parse("p.tl", &printed).unwrap();
            assert_eq!(to_source(&again), printed, "seed {seed}");
        }
    }

    /// What the shrinker relies on to keep its candidates ending.
    #[test]
    fn every_generated_interval_clears_itself() {
        for seed in 0..300 {
            let script = parse("g.tl", &generate(seed, 40)).unwrap();
            fn check(body: &[Stmt]) {
                for s in body {
                    if let Stmt::Interval { name, body, .. } = s {
                        assert!(clears(body, *name));
                    }
                    if let Some(b) = s.body() {
                        check(b);
                    }
                }
            }
            check(&script.body);
        }
    }

    #[test]
    fn shrink_removes_what_is_not_needed() {
        let script = parse("a.tl", "log a log b timeout t 5 { log c log d }").unwrap();
        // "Fails" while it still logs c.
        let small = shrink(&script, |_, src| src.contains("log c"));
        assert_eq!(to_source(&small), "timeout t 5 { log c }\n");
    }

    #[test]
    fn shrink_keeps_a_refreshed_timeout() {
        let script = parse(
            "a.tl",
            "timeout t 5 { timeout t 5 { } block 5 refresh t log a }",
        )
        .unwrap();
        let small = shrink(&script, |_, src| src.contains("refresh"));
        assert_eq!(
            to_source(&small),
            "timeout t 5 { timeout t 5 { } block 5 refresh t }\n"
        );
    }

    #[test]
    fn shrink_keeps_the_block_after_an_attached_sleep() {
        let script = parse(
            "a.tl",
            "task { log a sleep 0 log b } microtask { block 5 } log c microtask { block 5 }",
        )
        .unwrap();
        let fails = |_: &Script, src: &str| src.contains("sleep 0 log b");
        let small = shrink(&script, fails);
        assert_eq!(
            to_source(&small),
            "task { sleep 0 log b }\nmicrotask { block 5 }\n"
        );
        // After a task whose first await is no sleep, the block may go.
        let script = parse("a.tl", "task { yield sleep 0 log b } microtask { block 5 }").unwrap();
        let small = shrink(&script, fails);
        assert_eq!(to_source(&small), "task { sleep 0 log b }\n");
    }

    #[test]
    fn shrink_keeps_an_interval_clear() {
        let script = parse("a.tl", "interval i 10 { log a nth 3 { clear i log b } }").unwrap();
        let small = shrink(&script, |_, src| src.contains("interval"));
        assert_eq!(to_source(&small), "interval i 10 { nth 3 { clear i } }\n");
    }
}
