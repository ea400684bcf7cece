//! Parser for timer scripts (`.tl` files).
//!
//! The format is described in `timer-scripts.md`; in short, a script is a
//! sequence of statements such as `timeout a 10 { log a }`, and a body is
//! `{ statement* }`.
//!
//! Ground rules:
//!
//! - Tokens are separated by whitespace, as JavaScript's `\s` defines it
//!   (so that a `split(/\s+/)` translator agrees): [`char::is_whitespace`]
//!   minus U+0085, plus U+FEFF. `{` and
//!   `}` are tokens of their own even when glued to a word (`{log` is `{`
//!   then `log`). `#` starts a comment running to the end of its line,
//!   wherever it appears, even in the middle of a word.
//! - Lines are separated by `\n`; a `\r` before it is ordinary whitespace.
//!   Lines and columns are 1-based, and columns count Unicode scalar values
//!   (a tab is one column).
//! - Parsing stops at the first error. The parser never panics and never
//!   recurses: bodies are built with an explicit stack whose depth is capped
//!   at [`MAX_DEPTH`], so hostile input yields a [`ParseError`], not a stack
//!   overflow.
//! - Names are interned: every distinct NAME gets a dense index into
//!   [`Script::names`], so an interpreter can keep bindings in a `Vec`.
//!   Each name has one [`NameKind`], fixed by its `timeout`, `interval`,
//!   `immediate` or `refresh` statements; using one name for both kinds is an
//!   error. A name that only `clear`, `ref`, `unref` or `hasref` ever mention
//!   is never bound at run time and is given the kind [`NameKind::Timer`].

use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

/// The deepest nesting of bodies the parser accepts.
///
/// Each `{` opens one level. A script that nests deeper gets a
/// [`ParseError`] at the `{` that crosses the limit.
pub const MAX_DEPTH: usize = 1000;

/// A sequence of statements: a script's top level or a callback's body.
///
/// Bodies are reference counted so that an interpreter can hand a body to a
/// callback without copying it.
pub type Body = Rc<[Stmt]>;

/// One statement of a timer script.
///
/// Names are indexes into [`Script::names`].
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `log WORD`: print WORD on a line of its own.
    Log(Rc<str>),
    /// `timeout NAME DELAY BODY`: `NAME = setTimeout(body, DELAY)`.
    Timeout {
        /// The name the new timeout is bound to.
        name: usize,
        /// The delay as written, before Node's coercion.
        delay: f64,
        /// The callback's body.
        body: Body,
    },
    /// `interval NAME DELAY BODY`: `NAME = setInterval(body, DELAY)`.
    Interval {
        /// The name the new interval is bound to.
        name: usize,
        /// The delay as written, before Node's coercion.
        delay: f64,
        /// The callback's body.
        body: Body,
    },
    /// `immediate NAME BODY`: `NAME = setImmediate(body)`.
    Immediate {
        /// The name the new immediate is bound to.
        name: usize,
        /// The callback's body.
        body: Body,
    },
    /// `tick BODY`: `process.nextTick(body)`.
    Tick(Body),
    /// `microtask BODY`: `queueMicrotask(body)`.
    Microtask(Body),
    /// `io BODY`: BODY runs as an I/O completion in a later poll phase.
    Io(Body),
    /// `clear NAME`: `clearTimeout` / `clearInterval` / `clearImmediate`.
    Clear(usize),
    /// `refresh NAME`: `NAME.refresh()` (timeouts and intervals only).
    Refresh(usize),
    /// `ref NAME`: `NAME.ref()`.
    Ref(usize),
    /// `unref NAME`: `NAME.unref()`.
    Unref(usize),
    /// `hasref NAME`: print `hasref NAME true|false|unbound`.
    HasRef(usize),
    /// `block MS`: busy-wait MS milliseconds.
    Block(u64),
    /// `throw WORD`: throw an error with message WORD.
    Throw(Rc<str>),
    /// `nth N BODY`: run BODY only on the enclosing callback's N-th run
    /// (1-based; N is at least 1). Only allowed inside a callback.
    Nth(u64, Body),
}

/// Which kind of handle a name holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NameKind {
    /// A timeout or an interval (also the kind of a name no statement binds).
    Timer,
    /// An immediate.
    Immediate,
}

/// An interned name of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameInfo {
    /// The name as written in the script.
    pub name: String,
    /// The kind of handle the name holds.
    pub kind: NameKind,
}

/// A parsed timer script.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// The top-level statements.
    pub body: Body,
    /// Every name the script mentions, indexed by the `usize` in [`Stmt`],
    /// in order of first mention.
    pub names: Vec<NameInfo>,
    /// Whether the first line is exactly `# virtual-only`: the script is meant
    /// to run only on the virtual clock.
    pub virtual_only: bool,
}

impl Script {
    /// The index of `name` in [`Script::names`], if the script mentions it.
    #[must_use]
    pub fn name_index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n.name == name)
    }
}

/// Why a script could not be parsed, and where.
///
/// Displays as `FILE:LINE:COL: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The file name given to [`parse`].
    pub file: String,
    /// 1-based line of the offending token, or of the end of file.
    pub line: usize,
    /// 1-based column (in Unicode scalar values) of the offending token, or
    /// of the end of file.
    pub col: usize,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// Parses the timer script `src`; `file` is used only in error messages.
///
/// # Errors
///
/// Returns the first problem found: an unknown statement, a missing or
/// stray brace, a missing argument, a bad NAME, DELAY, MS or N, `nth` outside
/// a callback, a name used for both timers and immediates, `refresh` of an
/// immediate, or nesting deeper than [`MAX_DEPTH`].
///
/// # Examples
///
/// ```
/// use timerloop::script::parse::{parse, NameKind, Stmt};
///
/// let script = parse("demo.tl", "timeout a 10 { log hi nth 2 { clear a } }").unwrap();
/// assert_eq!(script.names[0].name, "a");
/// assert_eq!(script.names[0].kind, NameKind::Timer);
/// let Stmt::Timeout { name, delay, body } = &script.body[0] else { panic!() };
/// assert_eq!((*name, *delay), (0, 10.0));
/// assert_eq!(body[0], Stmt::Log("hi".into()));
///
/// let err = parse("bad.tl", "log a\n  }").unwrap_err();
/// assert_eq!(err.to_string(), "bad.tl:2:3: unexpected `}` with no open `{`");
/// ```
pub fn parse(file: &str, src: &str) -> Result<Script, ParseError> {
    Parser::new(file, src).run()
}

/// A token and where it starts.
#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    text: &'a str,
    pos: Pos,
}

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pos {
    line: usize,
    col: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Splits `src` into tokens, dropping comments. Also returns the position of
/// the end of file.
fn tokenize(src: &str) -> (Vec<Token<'_>>, Pos) {
    let mut tokens = Vec::new();
    let mut end = Pos { line: 1, col: 1 };
    for (i, line) in src.split('\n').enumerate() {
        let line_no = i + 1;
        let mut col = 1;
        let mut start: Option<(usize, usize)> = None; // (byte offset, col) of the word
        let mut comment = false;
        for (off, ch) in line.char_indices() {
            if comment {
                col += 1;
                continue;
            }
            let separator = is_space(ch) || ch == '#' || ch == '{' || ch == '}';
            if separator {
                if let Some((s, c)) = start.take() {
                    tokens.push(Token {
                        text: &line[s..off],
                        pos: Pos {
                            line: line_no,
                            col: c,
                        },
                    });
                }
                if ch == '#' {
                    comment = true;
                } else if ch == '{' || ch == '}' {
                    tokens.push(Token {
                        text: &line[off..off + 1],
                        pos: Pos { line: line_no, col },
                    });
                }
            } else if start.is_none() {
                start = Some((off, col));
            }
            col += 1;
        }
        if let Some((s, c)) = start {
            tokens.push(Token {
                text: &line[s..],
                pos: Pos {
                    line: line_no,
                    col: c,
                },
            });
        }
        end = Pos { line: line_no, col };
    }
    (tokens, end)
}

/// Whether `ch` is whitespace by JavaScript's `\s`.
fn is_space(ch: char) -> bool {
    (ch.is_whitespace() && ch != '\u{85}') || ch == '\u{feff}'
}

/// What a body, once closed, turns into.
enum Pending {
    Timeout { name: usize, delay: f64 },
    Interval { name: usize, delay: f64 },
    Immediate { name: usize },
    Tick,
    Microtask,
    Io,
    Nth(u64),
}

impl Pending {
    fn finish(self, body: Body) -> Stmt {
        match self {
            Pending::Timeout { name, delay } => Stmt::Timeout { name, delay, body },
            Pending::Interval { name, delay } => Stmt::Interval { name, delay, body },
            Pending::Immediate { name } => Stmt::Immediate { name, body },
            Pending::Tick => Stmt::Tick(body),
            Pending::Microtask => Stmt::Microtask(body),
            Pending::Io => Stmt::Io(body),
            Pending::Nth(n) => Stmt::Nth(n, body),
        }
    }
}

/// A body still being read.
struct Frame {
    pending: Pending,
    stmts: Vec<Stmt>,
    open: Pos,
}

/// How a statement uses a name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    /// `timeout` or `interval`.
    BindTimer,
    /// `immediate`.
    BindImmediate,
    /// `refresh`: only timeouts and intervals have it.
    Refresh,
    /// `clear`, `ref`, `unref`, `hasref`: any kind.
    Control,
}

/// An interned name and the statement (keyword, position) that fixed its
/// kind, if any.
struct NameSlot<'a> {
    name: String,
    kind: Option<(NameKind, &'a str, Pos)>,
}

struct Parser<'a> {
    file: &'a str,
    tokens: Vec<Token<'a>>,
    next: usize,
    eof: Pos,
    virtual_only: bool,
    names: Vec<NameSlot<'a>>,
    index: HashMap<&'a str, usize>,
}

impl<'a> Parser<'a> {
    fn new(file: &'a str, src: &'a str) -> Self {
        let first = src.split('\n').next().unwrap_or("");
        let first = first.strip_suffix('\r').unwrap_or(first);
        let (tokens, eof) = tokenize(src);
        Parser {
            file,
            tokens,
            next: 0,
            eof,
            virtual_only: first == "# virtual-only",
            names: Vec::new(),
            index: HashMap::new(),
        }
    }

    fn error(&self, pos: Pos, message: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file.to_string(),
            line: pos.line,
            col: pos.col,
            message: message.into(),
        }
    }

    fn bump(&mut self) -> Option<Token<'a>> {
        let t = self.tokens.get(self.next).copied();
        if t.is_some() {
            self.next += 1;
        }
        t
    }

    fn run(mut self) -> Result<Script, ParseError> {
        let mut top: Vec<Stmt> = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            let Some(tok) = self.bump() else {
                if let Some(frame) = stack.last() {
                    return Err(self.error(
                        self.eof,
                        format!(
                            "unexpected end of file: missing `}}` to close the `{{` at {}",
                            frame.open
                        ),
                    ));
                }
                break;
            };
            let in_callback = !stack.is_empty();
            let stmt = match tok.text {
                "}" => {
                    let Some(frame) = stack.pop() else {
                        return Err(self.error(tok.pos, "unexpected `}` with no open `{`"));
                    };
                    frame.pending.finish(frame.stmts.into())
                }
                "{" => {
                    return Err(self.error(
                        tok.pos,
                        "unexpected `{`: a body must follow a statement such as `tick`",
                    ));
                }
                "log" => Stmt::Log(self.word(tok)?),
                "throw" => Stmt::Throw(self.word(tok)?),
                "clear" => Stmt::Clear(self.name(tok, Use::Control)?),
                "refresh" => Stmt::Refresh(self.name(tok, Use::Refresh)?),
                "ref" => Stmt::Ref(self.name(tok, Use::Control)?),
                "unref" => Stmt::Unref(self.name(tok, Use::Control)?),
                "hasref" => Stmt::HasRef(self.name(tok, Use::Control)?),
                "block" => Stmt::Block(self.whole(tok, "MS")?),
                kw @ ("timeout" | "interval" | "immediate" | "tick" | "microtask" | "io"
                | "nth") => {
                    let pending = self.pending(tok, kw, in_callback)?;
                    let open = self.open_brace(tok)?;
                    if stack.len() >= MAX_DEPTH {
                        return Err(self.error(
                            open,
                            format!("bodies nested too deeply (the limit is {MAX_DEPTH})"),
                        ));
                    }
                    stack.push(Frame {
                        pending,
                        stmts: Vec::new(),
                        open,
                    });
                    continue;
                }
                other => {
                    return Err(self.error(
                        tok.pos,
                        format!(
                            "unknown statement `{other}` (expected one of log, timeout, \
                             interval, immediate, tick, microtask, io, clear, refresh, ref, \
                             unref, hasref, block, throw, nth)"
                        ),
                    ));
                }
            };
            match stack.last_mut() {
                Some(frame) => frame.stmts.push(stmt),
                None => top.push(stmt),
            }
        }
        let names = self
            .names
            .into_iter()
            .map(|slot| NameInfo {
                name: slot.name,
                kind: slot.kind.map_or(NameKind::Timer, |(k, _, _)| k),
            })
            .collect();
        Ok(Script {
            body: top.into(),
            names,
            virtual_only: self.virtual_only,
        })
    }

    /// Reads the arguments of a statement that takes a body, up to its `{`.
    fn pending(
        &mut self,
        tok: Token<'a>,
        kw: &str,
        in_callback: bool,
    ) -> Result<Pending, ParseError> {
        Ok(match kw {
            "timeout" => {
                let name = self.name(tok, Use::BindTimer)?;
                let delay = self.delay(tok)?;
                Pending::Timeout { name, delay }
            }
            "interval" => {
                let name = self.name(tok, Use::BindTimer)?;
                let delay = self.delay(tok)?;
                Pending::Interval { name, delay }
            }
            "immediate" => Pending::Immediate {
                name: self.name(tok, Use::BindImmediate)?,
            },
            "tick" => Pending::Tick,
            "microtask" => Pending::Microtask,
            "io" => Pending::Io,
            _ => {
                if !in_callback {
                    return Err(self.error(
                        tok.pos,
                        "`nth` is only allowed inside a callback body (it counts that \
                         callback's runs)",
                    ));
                }
                let n = self.whole(tok, "N")?;
                if n == 0 {
                    let pos = self.tokens[self.next - 1].pos;
                    return Err(self.error(pos, "bad number `0` for N: runs are counted from 1"));
                }
                Pending::Nth(n)
            }
        })
    }

    /// Reads an argument of `stmt` described by `what`; braces and the end of
    /// file are a missing argument.
    fn arg(&mut self, stmt: Token<'a>, what: &str) -> Result<Token<'a>, ParseError> {
        match self.tokens.get(self.next).copied() {
            Some(t) if t.text != "{" && t.text != "}" => {
                self.next += 1;
                Ok(t)
            }
            found => {
                let (pos, found) = match found {
                    Some(t) => (t.pos, format!("`{}`", t.text)),
                    None => (self.eof, "end of file".to_string()),
                };
                Err(self.error(
                    pos,
                    format!(
                        "missing argument: `{}` needs {what}, found {found}",
                        stmt.text
                    ),
                ))
            }
        }
    }

    fn open_brace(&mut self, stmt: Token<'a>) -> Result<Pos, ParseError> {
        match self.bump() {
            Some(t) if t.text == "{" => Ok(t.pos),
            found => {
                let (pos, found) = match found {
                    Some(t) => (t.pos, format!("`{}`", t.text)),
                    None => (self.eof, "end of file".to_string()),
                };
                Err(self.error(
                    pos,
                    format!("missing `{{`: `{}` needs a body, found {found}", stmt.text),
                ))
            }
        }
    }

    fn word(&mut self, stmt: Token<'a>) -> Result<Rc<str>, ParseError> {
        Ok(self.arg(stmt, "a WORD")?.text.into())
    }

    fn whole(&mut self, stmt: Token<'a>, what: &str) -> Result<u64, ParseError> {
        let t = self.arg(stmt, &format!("a whole number {what}"))?;
        if !t.text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.error(
                t.pos,
                format!(
                    "bad number `{}` for {what}: expected a whole number such as 5",
                    t.text
                ),
            ));
        }
        t.text.parse::<u64>().map_err(|_| {
            self.error(
                t.pos,
                format!("bad number `{}` for {what}: too large", t.text),
            )
        })
    }

    fn delay(&mut self, stmt: Token<'a>) -> Result<f64, ParseError> {
        let t = self.arg(stmt, "a DELAY")?;
        parse_delay(t.text).ok_or_else(|| {
            self.error(
                t.pos,
                format!(
                    "bad number `{}` for DELAY: expected a decimal number such as 10, \
                     -5 or 1.5, or NaN, Infinity, -Infinity",
                    t.text
                ),
            )
        })
    }

    /// Reads a NAME, interns it and checks it against the kind of its earlier
    /// uses.
    fn name(&mut self, stmt: Token<'a>, usage: Use) -> Result<usize, ParseError> {
        let t = self.arg(stmt, "a NAME")?;
        if !is_name(t.text) {
            return Err(self.error(
                t.pos,
                format!(
                    "bad name `{}`: a NAME is a letter or `_` followed by letters, \
                     digits, `_` or `-`",
                    t.text
                ),
            ));
        }
        let idx = match self.index.get(t.text) {
            Some(&i) => i,
            None => {
                let i = self.names.len();
                self.names.push(NameSlot {
                    name: t.text.to_string(),
                    kind: None,
                });
                self.index.insert(t.text, i);
                i
            }
        };
        let wanted = match usage {
            Use::BindTimer | Use::Refresh => NameKind::Timer,
            Use::BindImmediate => NameKind::Immediate,
            Use::Control => return Ok(idx),
        };
        match self.names[idx].kind {
            None => self.names[idx].kind = Some((wanted, stmt.text, t.pos)),
            Some((kind, _, _)) if kind == wanted => {}
            Some((_, by, at)) => {
                let message = if usage == Use::Refresh {
                    format!(
                        "cannot `refresh` immediate `{}` (bound by `immediate` at {at}): \
                         only timeouts and intervals can be refreshed",
                        t.text
                    )
                } else {
                    format!(
                        "name `{}` is used by `{}` here but by `{by}` at {at}: a name \
                         holds either timeouts/intervals or immediates, never both",
                        t.text, stmt.text
                    )
                };
                return Err(self.error(t.pos, message));
            }
        }
        Ok(idx)
    }
}

/// Whether `s` matches `[A-Za-z_][A-Za-z0-9_-]*`.
fn is_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Parses a DELAY: `NaN`, `Infinity`, `-Infinity`, or a decimal literal as
/// JavaScript's `Number()` reads it: `[+-]? (D+ (. D*)? | . D+) ([eE] [+-]? D+)?`.
fn parse_delay(s: &str) -> Option<f64> {
    match s {
        "NaN" => return Some(f64::NAN),
        "Infinity" => return Some(f64::INFINITY),
        "-Infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let mut mantissa = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    // The grammar above is a subset of what `f64::from_str` accepts, and it
    // rounds correctly, saturating to infinity as JavaScript does.
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> Script {
        match parse("t.tl", src) {
            Ok(s) => s,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    /// Parses `src`, expecting an error at `line:col` whose message contains
    /// `needle`.
    fn err(src: &str, line: usize, col: usize, needle: &str) -> ParseError {
        let e = match parse("t.tl", src) {
            Ok(s) => panic!("expected an error for {src:?}, got {s:?}"),
            Err(e) => e,
        };
        assert_eq!(
            (e.line, e.col),
            (line, col),
            "wrong position for {src:?}: {e}"
        );
        assert!(
            e.message.contains(needle),
            "message for {src:?} lacks {needle:?}: {e}"
        );
        assert_eq!(e.file, "t.tl");
        e
    }

    fn log(w: &str) -> Stmt {
        Stmt::Log(w.into())
    }

    fn body(stmts: Vec<Stmt>) -> Body {
        stmts.into()
    }

    #[test]
    fn empty_and_blank_scripts() {
        for src in ["", " ", "\n\n", "# only a comment", "\t\r\n  # x\n"] {
            let s = ok(src);
            assert!(s.body.is_empty());
            assert!(s.names.is_empty());
            assert!(!s.virtual_only);
        }
    }

    #[test]
    fn every_statement() {
        let s = ok("log hello\n\
             timeout a 10 { log a }\n\
             interval b 1.5 { nth 3 { clear b } }\n\
             immediate c { tick { microtask { io { throw boom } } } }\n\
             clear a refresh a ref b unref b hasref c\n\
             block 20\n\
             throw top\n");
        assert_eq!(
            s.names,
            vec![
                NameInfo {
                    name: "a".into(),
                    kind: NameKind::Timer
                },
                NameInfo {
                    name: "b".into(),
                    kind: NameKind::Timer
                },
                NameInfo {
                    name: "c".into(),
                    kind: NameKind::Immediate
                },
            ]
        );
        let expected: Vec<Stmt> = vec![
            log("hello"),
            Stmt::Timeout {
                name: 0,
                delay: 10.0,
                body: body(vec![log("a")]),
            },
            Stmt::Interval {
                name: 1,
                delay: 1.5,
                body: body(vec![Stmt::Nth(3, body(vec![Stmt::Clear(1)]))]),
            },
            Stmt::Immediate {
                name: 2,
                body: body(vec![Stmt::Tick(body(vec![Stmt::Microtask(body(vec![
                    Stmt::Io(body(vec![Stmt::Throw("boom".into())])),
                ]))]))]),
            },
            Stmt::Clear(0),
            Stmt::Refresh(0),
            Stmt::Ref(1),
            Stmt::Unref(1),
            Stmt::HasRef(2),
            Stmt::Block(20),
            Stmt::Throw("top".into()),
        ];
        assert_eq!(&*s.body, &expected[..]);
        assert_eq!(s.name_index("b"), Some(1));
        assert_eq!(s.name_index("zz"), None);
    }

    #[test]
    fn spec_example() {
        let s = ok("# ticks and microtasks drain between timers of one list\n\
             timeout a 10 { log a tick { log a-tick } microtask { log a-micro } }\n\
             timeout b 10 { log b }\n");
        assert_eq!(s.body.len(), 2);
        assert!(!s.virtual_only);
    }

    #[test]
    fn glued_braces() {
        let a = ok("timeout a 10{log x}immediate i{tick{log y}}");
        let b = ok("timeout a 10 { log x } immediate i { tick { log y } }");
        assert_eq!(a, b);
        let c = ok("tick{}microtask{}");
        assert_eq!(c.body.len(), 2);
        // A brace ends a word on either side.
        assert_eq!(&*ok("tick{log a}").body, &*ok("tick { log a }").body);
    }

    #[test]
    fn whitespace_is_javascripts() {
        let s = ok("log\u{a0}a\u{3000}log\u{feff}b\x0b\x0clog\tc\r\n");
        assert_eq!(&*s.body, &[log("a"), log("b"), log("c")][..]);
        // U+0085 is not whitespace in JavaScript, so it is part of the word.
        assert_eq!(&*ok("log a\u{85}b").body, &[log("a\u{85}b")][..]);
    }

    #[test]
    fn empty_bodies_and_stray_open_brace_in_body() {
        assert_eq!(&*ok("tick {}").body, &[Stmt::Tick(body(vec![]))][..]);
        err("tick{}microtask{}{}", 1, 18, "unexpected `{`");
        err("tick { log{y} }", 1, 11, "missing argument");
    }

    #[test]
    fn comments() {
        let s = ok("log a#comment\nlog b # c } { nth\n#log c\n  log d#");
        assert_eq!(&*s.body, &[log("a"), log("b"), log("d")][..]);
        // A comment ends a word, and the brace after it is commented out.
        let s = ok("tick { log x#}\n}");
        assert_eq!(&*s.body, &[Stmt::Tick(body(vec![log("x")]))][..]);
    }

    #[test]
    fn words_are_any_token() {
        let s = ok("log 123 log -x log héllo log a\0b log log");
        assert_eq!(
            &*s.body,
            &[log("123"), log("-x"), log("héllo"), log("a\0b"), log("log")][..]
        );
    }

    #[test]
    fn virtual_only_flag() {
        assert!(ok("# virtual-only\nlog a").virtual_only);
        assert!(ok("# virtual-only").virtual_only);
        assert!(ok("# virtual-only\r\nlog a").virtual_only);
        assert!(!ok("#virtual-only\nlog a").virtual_only);
        assert!(!ok(" # virtual-only\n").virtual_only);
        assert!(!ok("# virtual-only!\n").virtual_only);
        assert!(!ok("log a\n# virtual-only\n").virtual_only);
    }

    #[test]
    fn delays() {
        let cases: &[(&str, f64)] = &[
            ("10", 10.0),
            ("0", 0.0),
            ("-5", -5.0),
            ("+5", 5.0),
            ("1.5", 1.5),
            ("1.", 1.0),
            (".5", 0.5),
            ("-.5", -0.5),
            ("2147483648", 2147483648.0),
            ("1e3", 1000.0),
            ("1E-3", 0.001),
            ("2.5e+2", 250.0),
            ("1e999", f64::INFINITY),
            ("-1e999", f64::NEG_INFINITY),
            ("99999999999999999999999999", 1e26),
            ("Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
        ];
        for &(text, want) in cases {
            let s = ok(&format!("timeout a {text} {{}}"));
            let Stmt::Timeout { delay, .. } = s.body[0] else {
                panic!("not a timeout")
            };
            assert_eq!(delay, want, "delay {text}");
        }
        let s = ok("interval a NaN {}");
        let Stmt::Interval { delay, .. } = s.body[0] else {
            panic!("not an interval")
        };
        assert!(delay.is_nan());
        let s = ok("timeout a -0 {}");
        let Stmt::Timeout { delay, .. } = s.body[0] else {
            panic!("not a timeout")
        };
        assert!(delay == 0.0 && delay.is_sign_negative());
    }

    #[test]
    fn bad_delays() {
        for bad in [
            "x",
            ".",
            "-",
            "+",
            "1e",
            "1e+",
            "e3",
            "1.2.3",
            "0x10",
            "inf",
            "nan",
            "infinity",
            "+Infinity",
            "-NaN",
            "1_000",
            "10ms",
            "--1",
            "1..",
            "١",
            "1 e3",
        ] {
            let src = format!("timeout a {bad} {{}}");
            if bad == "1 e3" {
                err(&src, 1, 13, "missing `{`");
            } else {
                err(&src, 1, 11, "bad number");
            }
        }
    }

    #[test]
    fn whole_numbers() {
        assert_eq!(&*ok("block 0").body, &[Stmt::Block(0)][..]);
        assert_eq!(
            &*ok("block 18446744073709551615").body,
            &[Stmt::Block(u64::MAX)][..]
        );
        err("block 18446744073709551616", 1, 7, "too large");
        err("block -1", 1, 7, "bad number");
        err("block 1.5", 1, 7, "bad number");
        err("block +1", 1, 7, "bad number");
        err("block 1e3", 1, 7, "bad number");
        err("block x", 1, 7, "bad number");
        err("tick { nth 0 { } }", 1, 12, "bad number `0`");
        err("tick { nth -1 { } }", 1, 12, "bad number");
        err("tick { nth 99999999999999999999 { } }", 1, 12, "too large");
        let s = ok("tick { nth 1 { log x } }");
        assert_eq!(
            &*s.body,
            &[Stmt::Tick(body(vec![Stmt::Nth(1, body(vec![log("x")]))]))][..]
        );
    }

    #[test]
    fn names() {
        let s = ok("timeout _a-9 1 {} timeout Z 1 {} clear _a-9");
        assert_eq!(s.names[0].name, "_a-9");
        assert_eq!(s.names[1].name, "Z");
        assert_eq!(
            &*s.body,
            &[
                Stmt::Timeout {
                    name: 0,
                    delay: 1.0,
                    body: body(vec![])
                },
                Stmt::Timeout {
                    name: 1,
                    delay: 1.0,
                    body: body(vec![])
                },
                Stmt::Clear(0),
            ][..]
        );
        for bad in ["9a", "-a", "a.b", "é", "a$", "a\0"] {
            err(&format!("clear {bad}"), 1, 7, "bad name");
        }
        err("\n  timeout 1x 5 {}", 2, 11, "bad name");
        err("immediate a+ {}", 1, 11, "bad name");
    }

    #[test]
    fn unbound_names_default_to_timer() {
        let s = ok("hasref x clear y ref z unref w refresh v");
        assert!(s.names.iter().all(|n| n.kind == NameKind::Timer));
        assert_eq!(s.names.len(), 5);
        // Control statements do not fix the kind: an immediate may follow.
        let s = ok("clear i hasref i immediate i { clear i }");
        assert_eq!(s.names[0].kind, NameKind::Immediate);
    }

    #[test]
    fn name_used_for_both_kinds() {
        err("timeout a 1 {}\nimmediate a {}", 2, 11, "never both");
        err("immediate a {}\ninterval a 1 {}", 2, 10, "never both");
        err(
            "tick { immediate a {} } timeout a 5 {}",
            1,
            33,
            "never both",
        );
        // `refresh` first claims the name for timers.
        err("refresh a immediate a {}", 1, 21, "never both");
    }

    #[test]
    fn refresh_of_immediate() {
        let e = err("immediate a {}\n\trefresh a", 2, 10, "cannot `refresh`");
        assert!(e.message.contains("1:11"), "{e}");
        ok("timeout a 1 {} refresh a interval b 1 { refresh b }");
    }

    #[test]
    fn unknown_statement() {
        err("log a\nfoo bar", 2, 1, "unknown statement `foo`");
        err("Log a", 1, 1, "unknown statement");
        err("tick { 10 }", 1, 8, "unknown statement `10`");
        err("  \u{e9}t\u{e9}", 1, 3, "unknown statement");
        err("a\u{e9}\u{e9} b", 1, 1, "unknown statement");
        // Columns count characters, not bytes.
        err("log \u{e9}\u{e9} x", 1, 8, "unknown statement `x`");
    }

    #[test]
    fn missing_open_brace() {
        err("timeout a 10 log a", 1, 14, "missing `{`");
        err("tick\nlog a", 2, 1, "missing `{`");
        err("tick }", 1, 6, "missing `{`");
        err("tick { immediate x }", 1, 20, "missing `{`");
        err("timeout a 10", 1, 13, "end of file");
        err("io\n", 2, 1, "missing `{`");
    }

    #[test]
    fn missing_close_brace() {
        let e = err("timeout a 10 {\n  log a\n", 3, 1, "unexpected end of file");
        assert!(e.message.contains("1:14"), "{e}");
        err("tick { tick { }", 1, 16, "missing `}`");
        err("tick {log a # }", 1, 16, "missing `}`");
    }

    #[test]
    fn stray_close_brace() {
        err("}", 1, 1, "unexpected `}`");
        err("tick { } }", 1, 10, "unexpected `}`");
        err("log a}", 1, 6, "unexpected `}`");
    }

    #[test]
    fn missing_argument() {
        err("log", 1, 4, "missing argument");
        err("log }", 1, 5, "missing argument");
        err("throw {", 1, 7, "missing argument");
        err("clear", 1, 6, "missing argument");
        err(
            "timeout {",
            1,
            9,
            "missing argument: `timeout` needs a NAME",
        );
        err("timeout a {", 1, 11, "needs a DELAY");
        err("interval a\n", 2, 1, "needs a DELAY");
        err("immediate {}", 1, 11, "needs a NAME");
        err("block", 1, 6, "needs a whole number MS");
        err("tick { nth { } }", 1, 12, "needs a whole number N");
        err("hasref\n\n  ", 3, 3, "missing argument");
    }

    #[test]
    fn nth_only_in_callbacks() {
        err("nth 1 { log a }", 1, 1, "only allowed inside a callback");
        err("log a\n  nth 0 {", 2, 3, "only allowed inside a callback");
        for host in [
            "timeout a 1",
            "interval a 1",
            "immediate b",
            "tick",
            "microtask",
            "io",
        ] {
            ok(&format!("{host} {{ nth 2 {{ nth 1 {{ log x }} }} }}"));
        }
    }

    #[test]
    fn display_format() {
        let e = parse("dir/x.tl", "\n\n   bogus").unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(e.col, 4);
        assert!(
            e.to_string()
                .starts_with("dir/x.tl:3:4: unknown statement `bogus`")
        );
    }

    #[test]
    fn nesting_limit() {
        let deep = |n: usize| format!("{}{}", "tick {".repeat(n), "}".repeat(n));
        let s = ok(&deep(MAX_DEPTH));
        drop(s);
        let e = err(
            &deep(MAX_DEPTH + 1),
            1,
            6 * MAX_DEPTH + 6,
            "nested too deeply",
        );
        let _ = e;
        // Far past the limit, still an error rather than a stack overflow.
        err(
            &"tick{".repeat(1_000_000),
            1,
            5 * MAX_DEPTH + 5,
            "nested too deeply",
        );
    }

    #[test]
    fn huge_input_does_not_panic() {
        let src = "log x ".repeat(200_000);
        assert_eq!(ok(&src).body.len(), 200_000);
        let long_word = "9".repeat(100_000);
        err(&format!("block {long_word}"), 1, 7, "too large");
        let s = ok(&format!("timeout a {long_word} {{}}"));
        let Stmt::Timeout { delay, .. } = s.body[0] else {
            panic!("not a timeout")
        };
        assert_eq!(delay, f64::INFINITY);
    }

    /// A small deterministic PRNG (xorshift64*), to avoid extra crates.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn random_token_soup_never_panics() {
        const VOCAB: &[&str] = &[
            "log",
            "timeout",
            "interval",
            "immediate",
            "tick",
            "microtask",
            "io",
            "clear",
            "refresh",
            "ref",
            "unref",
            "hasref",
            "block",
            "throw",
            "nth",
            "{",
            "}",
            "{}",
            "}{",
            "a",
            "b",
            "_x-1",
            "9z",
            "0",
            "1",
            "2",
            "-5",
            "1.5",
            "1e3",
            "NaN",
            "Infinity",
            "-Infinity",
            "18446744073709551616",
            "#",
            "# virtual-only",
            "\n",
            "\r\n",
            "\t",
            "\0",
            "é",
            "\u{1F600}",
            "\u{85}",
            "\u{a0}",
            "log{",
            "}log",
            "x#y",
            "",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut errors = 0;
        for _ in 0..20_000 {
            let len = rng.below(40);
            let mut src = String::new();
            for _ in 0..len {
                src.push_str(VOCAB[rng.below(VOCAB.len())]);
                if rng.below(4) != 0 {
                    src.push(' ');
                }
            }
            match parse("soup.tl", &src) {
                Ok(script) => {
                    // Every name index must be in range.
                    check_indices(&script.body, script.names.len());
                }
                Err(e) => {
                    errors += 1;
                    assert!(e.line >= 1 && e.col >= 1, "{e}");
                    assert!(e.line <= src.split('\n').count(), "{e} for {src:?}");
                }
            }
        }
        assert!(errors > 0 && errors < 20_000, "{errors} errors");
        // Raw bytes, made valid UTF-8.
        for _ in 0..5_000 {
            let len = rng.below(64);
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let src = String::from_utf8_lossy(&bytes);
            let _ = parse("bytes.tl", &src);
        }
    }

    fn check_indices(body: &[Stmt], n: usize) {
        for stmt in body {
            match stmt {
                Stmt::Timeout { name, body, .. }
                | Stmt::Interval { name, body, .. }
                | Stmt::Immediate { name, body } => {
                    assert!(*name < n);
                    check_indices(body, n);
                }
                Stmt::Tick(b) | Stmt::Microtask(b) | Stmt::Io(b) | Stmt::Nth(_, b) => {
                    check_indices(b, n)
                }
                Stmt::Clear(i)
                | Stmt::Refresh(i)
                | Stmt::Ref(i)
                | Stmt::Unref(i)
                | Stmt::HasRef(i) => assert!(*i < n),
                Stmt::Log(_) | Stmt::Throw(_) | Stmt::Block(_) => {}
            }
        }
    }
}
