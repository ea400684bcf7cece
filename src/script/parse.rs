//! Parser for timer scripts (`.tl` files).
//!
//! One file of about 860 lines (a quarter of them tests), on purpose: the
//! tokenizer, the parser and the semantic checks mirror the Node
//! translator's single parser (the repository's `tl.js`), and keeping them
//! side by side keeps that mirror checkable.
//!
//! In short, a script is a
//! sequence of statements such as `timeout a 10 { log a }`, and a body is
//! `{ statement* }`.
//!
//! Ground rules:
//!
//! The parser mirrors the Node translator (`tl.js`) token for
//! token and message for message, so a malformed script gets the same
//! `FILE:LINE:COL: message` from both:
//!
//! - Whitespace is space, tab, LF, CR and form feed; every other character
//!   belongs to a word. `{` and `}` are tokens of their own even when glued
//!   to a word. `#` starts a comment running to the end of its line,
//!   wherever it appears, even in the middle of a word.
//! - Lines are 1-based; columns are 1-based and count Unicode scalar values
//!   (a tab is one column). The end of file is the position just past the
//!   last character.
//! - DELAY is `-?[0-9]+(.[0-9]+)?`, `NaN`, `Infinity` or `-Infinity`; MS and
//!   N are `[0-9]+` up to 4294967295 (N at least 1).
//! - Syntax errors come first, then, in source order, a name declared for
//!   both kinds (its kind is that of its first `timeout`/`interval`/
//!   `immediate`), then `refresh` of an immediate's name. A name no
//!   statement declares is a timer name.
//! - Parsing never panics, and bodies nested deeper than [`MAX_DEPTH`] are
//!   an error rather than a stack overflow.
//!
//! # Examples
//!
//! ```
//! use timerloop::script::parse::{NameKind, Stmt, parse};
//! let s = parse("x.tl", "timeout t 10 { log hi }\nimmediate i { }\n").unwrap();
//! assert_eq!(s.names[0].name, "t");
//! assert_eq!(s.names[1].kind, NameKind::Immediate);
//! assert!(matches!(&s.body[0], Stmt::Timeout { delay, .. } if *delay == 10.0));
//! let err = parse("bad.tl", "timeout t { }").unwrap_err();
//! assert!(err.to_string().starts_with("bad.tl:1:"));
//! ```

use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

/// The deepest nesting of bodies the parser accepts.
///
/// Each `{` opens one level. A script that nests deeper gets a
/// [`ParseError`] at the `{` that crosses the limit.
///
/// # Examples
///
/// ```
/// use timerloop::script::parse::{MAX_DEPTH, parse};
/// let nested = |n: usize| format!("{}log x {}", "tick { ".repeat(n), "} ".repeat(n));
/// assert!(parse("ok.tl", &nested(MAX_DEPTH)).is_ok());
/// assert!(parse("deep.tl", &nested(MAX_DEPTH + 1)).is_err()); // an error, not a stack overflow
/// ```
pub const MAX_DEPTH: usize = 200;

/// A sequence of statements: a script's top level or a callback's body.
///
/// Bodies are reference counted so that an interpreter can hand a body to a
/// callback without copying it.
///
/// # Examples
///
/// ```
/// use timerloop::script::parse::{Body, parse};
/// let s = parse("x.tl", "log a\nlog b\n").unwrap();
/// let body: &Body = &s.body;
/// assert_eq!(body.len(), 2);
/// ```
pub type Body = Rc<[Stmt]>;

/// One statement of a timer script.
///
/// Names are indexes into [`Script::names`]. `#[non_exhaustive]`: the
/// language may gain statements, so a match needs a wildcard arm.
///
/// ```compile_fail,E0004
/// use timerloop::script::parse::Stmt;
/// fn has_body(s: &Stmt) -> bool {
///     match s {
///         Stmt::Log(_) | Stmt::Throw(_) | Stmt::Clear(_) | Stmt::Refresh(_) | Stmt::Ref(_) => false,
///         Stmt::Unref(_) | Stmt::HasRef(_) | Stmt::Block(_) | Stmt::Sleep(_) => false,
///         Stmt::Yield | Stmt::Check => false,
///         Stmt::Timeout { .. } | Stmt::Interval { .. } | Stmt::Immediate { .. } => true,
///         Stmt::Tick(_) | Stmt::Microtask(_) | Stmt::Io(_) | Stmt::Nth(..) | Stmt::Task(_) => true,
///     } // error: `_` not covered
/// }
/// ```
///
/// # Examples
///
/// ```
/// use timerloop::script::parse::{Stmt, parse};
/// let s = parse("x.tl", "log hello\nclear t\n").unwrap();
/// assert!(matches!(&s.body[0], Stmt::Log(w) if &**w == "hello"));
/// assert!(matches!(s.body[1], Stmt::Clear(0)));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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
    /// `task BODY`: `queueMicrotask(async () => { BODY })`, a spawned task.
    Task(Body),
    /// `sleep MS` (task bodies only): `await setTimeout(MS)`.
    Sleep(u64),
    /// `yield` (task bodies only): `await null`, one microtask hop.
    Yield,
    /// `check` (task bodies only): `await setImmediate()`.
    Check,
}

impl Stmt {
    /// The body of a statement that has one: a callback's (`timeout`,
    /// `interval`, `immediate`, `tick`, `microtask`, `io`), a `task`'s or
    /// an `nth`'s.
    ///
    /// ```
    /// use timerloop::script::parse::parse;
    /// let s = parse("x.tl", "timeout t 1 { log a nth 2 { log b } }\nlog c\n").unwrap();
    /// let body = s.body[0].body().unwrap();
    /// assert_eq!(body.len(), 2);
    /// assert_eq!(body[1].body().map(|b| b.len()), Some(1));
    /// assert!(s.body[1].body().is_none());
    /// ```
    pub fn body(&self) -> Option<&Body> {
        match self {
            Stmt::Timeout { body, .. }
            | Stmt::Interval { body, .. }
            | Stmt::Immediate { body, .. }
            | Stmt::Tick(body)
            | Stmt::Microtask(body)
            | Stmt::Io(body)
            | Stmt::Task(body)
            | Stmt::Nth(_, body) => Some(body),
            _ => None,
        }
    }

    /// The index in [`Script::names`] of the name a statement makes or
    /// acts on, if it has one: a `timeout`'s, `interval`'s or
    /// `immediate`'s, or the one a `clear`, `refresh`, `ref`, `unref` or
    /// `hasref` names.
    ///
    /// ```
    /// use timerloop::script::parse::parse;
    /// let s = parse("x.tl", "timeout t 1 { log a }\nclear t\nlog c\n").unwrap();
    /// let t = s.name_index("t");
    /// assert_eq!((s.body[0].name(), s.body[1].name()), (t, t));
    /// assert!(s.body[2].name().is_none());
    /// ```
    pub fn name(&self) -> Option<usize> {
        match self {
            Stmt::Timeout { name, .. }
            | Stmt::Interval { name, .. }
            | Stmt::Immediate { name, .. }
            | Stmt::Clear(name)
            | Stmt::Refresh(name)
            | Stmt::Ref(name)
            | Stmt::Unref(name)
            | Stmt::HasRef(name) => Some(*name),
            _ => None,
        }
    }
}

/// The kind of body a statement is directly in; a body takes its kind
/// from the statement that owns it, never from the bodies around it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    /// The script's top level.
    Top,
    /// The body of a timeout, interval, immediate, tick, microtask or io,
    /// or of an `nth` inside one.
    Callback,
    /// A task body.
    Task,
}

/// Which kind of handle a name holds (`#[non_exhaustive]`: a match
/// needs a wildcard arm).
///
/// ```compile_fail,E0004
/// use timerloop::script::parse::NameKind;
/// fn is_timer(k: NameKind) -> bool {
///     match k {
///         NameKind::Timer => true,
///         NameKind::Immediate => false,
///     } // error: `_` not covered
/// }
/// ```
///
/// # Examples
///
/// ```
/// use timerloop::script::parse::{NameKind, parse};
/// let s = parse("x.tl", "immediate i { }\nclear t\n").unwrap();
/// assert_eq!(s.names[0].kind, NameKind::Immediate);
/// assert_eq!(s.names[1].kind, NameKind::Timer); // bound by no statement
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NameKind {
    /// A timeout or an interval (also the kind of a name no statement binds).
    Timer,
    /// An immediate.
    Immediate,
}

/// An interned name of a script, made by [`parse`] (`#[non_exhaustive]`:
/// its fields can be read, and it can gain more).
///
/// ```compile_fail,E0639
/// use timerloop::script::parse::{NameInfo, NameKind};
/// let n = NameInfo { name: "t".into(), kind: NameKind::Timer };
/// ```
///
/// # Examples
///
/// ```
/// use timerloop::script::parse::{NameKind, parse};
/// let s = parse("x.tl", "timeout t 1 { }").unwrap();
/// assert_eq!((s.names[0].name.as_str(), s.names[0].kind), ("t", NameKind::Timer));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NameInfo {
    /// The name as written in the script.
    pub name: String,
    /// The kind of handle the name holds.
    pub kind: NameKind,
}

/// A parsed timer script.
///
/// `#[non_exhaustive]`: a script can gain fields without a breaking
/// change. One is made by [`parse`]; to build one by hand (for a test
/// of an interpreter, say), start from [`Script::default`], the empty
/// script, and set its fields:
///
/// ```
/// use timerloop::script::parse::{Script, Stmt, parse};
/// let mut s = Script::default();
/// s.body = vec![Stmt::Log("hi".into())].into();
/// assert_eq!(s, parse("x.tl", "log hi").unwrap());
/// ```
///
/// A struct expression does not compile outside the crate:
///
/// ```compile_fail,E0639
/// use timerloop::script::parse::Script;
/// let s = Script { body: Vec::new().into(), names: Vec::new(), virtual_only: false };
/// ```
///
/// # Examples
///
/// ```
/// use timerloop::script::parse::parse;
/// let s = parse("x.tl", "# virtual-only\ntimeout t 1 { log t }\n").unwrap();
/// assert!(s.virtual_only);
/// assert_eq!((s.body.len(), s.names.len()), (1, 1));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
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
    ///
    /// ```
    /// use timerloop::script::parse::parse;
    /// let s = parse("x.tl", "timeout a 1 { clear b }").unwrap();
    /// assert_eq!(s.name_index("a"), Some(0));
    /// assert_eq!(s.name_index("b"), Some(1));
    /// assert_eq!(s.name_index("c"), None);
    /// ```
    #[must_use]
    pub fn name_index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n.name == name)
    }
}

/// Why a script could not be parsed, and where.
///
/// Displays as `FILE:LINE:COL: message`. Made by [`parse`] only
/// (`#[non_exhaustive]`: its fields can be read, and it can gain more).
///
/// ```compile_fail,E0639
/// use timerloop::script::parse::ParseError;
/// let e = ParseError { file: "f.tl".into(), line: 1, col: 1, message: "m".into() };
/// ```
///
/// # Examples
///
/// ```
/// use timerloop::script::parse::parse;
/// let err = parse("bad.tl", "log a\ntimeout t x { }\n").unwrap_err(); // x is no delay
/// assert_eq!((err.file.as_str(), err.line), ("bad.tl", 2));
/// assert!(err.to_string().starts_with("bad.tl:2:"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
/// The first problem found: an unknown statement, a missing or stray brace,
/// a bad WORD, NAME, DELAY, MS or N, the end of file inside a statement,
/// `nth` outside a callback or directly in a task body, `sleep`, `yield` or
/// `check` outside a task body, nesting deeper than [`MAX_DEPTH`], a name used
/// for both timers and immediates, or `refresh` of an immediate.
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
/// assert_eq!(err.to_string(), "bad.tl:2:3: unexpected '}'");
/// ```
pub fn parse(file: &str, src: &str) -> Result<Script, ParseError> {
    let (toks, eof) = tokenize(src);
    let mut p = Parser {
        file,
        toks,
        eof,
        at: 0,
        names: Vec::new(),
        index: HashMap::new(),
        decls: Vec::new(),
        refreshes: Vec::new(),
    };
    let mut top = Vec::new();
    while p.at < p.toks.len() {
        let t = p.next()?;
        top.push(p.statement(t, Where::Top, 0)?);
    }
    p.check_kinds()?;
    let first_line = src.split('\n').next().unwrap_or("");
    Ok(Script {
        body: top.into(),
        names: p.names,
        virtual_only: first_line.strip_suffix('\r').unwrap_or(first_line) == "# virtual-only",
    })
}

const WHOLE_MAX: u64 = 4_294_967_295;

/// A token and where it starts.
#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    text: &'a str,
    line: usize,
    col: usize,
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}')
}

fn tokenize(src: &str) -> (Vec<Token<'_>>, Token<'_>) {
    let mut toks = Vec::new();
    let (mut line, mut col) = (1, 1);
    let mut it = src.char_indices().peekable();
    while let Some(&(i, c)) = it.peek() {
        if c == '\n' {
            line += 1;
            col = 1;
            it.next();
        } else if is_space(c) {
            col += 1;
            it.next();
        } else if c == '#' {
            while it.next_if(|&(_, d)| d != '\n').is_some() {
                col += 1;
            }
        } else if c == '{' || c == '}' {
            toks.push(Token {
                text: &src[i..i + 1],
                line,
                col,
            });
            col += 1;
            it.next();
        } else {
            let start = col;
            let mut end = i;
            while let Some((j, d)) =
                it.next_if(|&(_, d)| !is_space(d) && !matches!(d, '#' | '{' | '}'))
            {
                end = j + d.len_utf8();
                col += 1;
            }
            toks.push(Token {
                text: &src[i..end],
                line,
                col: start,
            });
        }
    }
    (
        toks,
        Token {
            text: "",
            line,
            col,
        },
    )
}

fn is_name(s: &str) -> bool {
    let mut cs = s.chars();
    cs.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `-?[0-9]+(\.[0-9]+)?`, or one of JavaScript's non-finite literals.
fn parse_delay(s: &str) -> Option<f64> {
    match s {
        "NaN" => return Some(f64::NAN),
        "Infinity" => return Some(f64::INFINITY),
        "-Infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    let digits = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = match digits.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (digits, None),
    };
    let all_digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int) || frac.is_some_and(|f| !all_digits(f)) {
        return None;
    }
    // Both Rust and JavaScript round decimal text to the nearest f64.
    s.parse().ok()
}

struct Parser<'a> {
    file: &'a str,
    toks: Vec<Token<'a>>,
    eof: Token<'a>,
    at: usize,
    names: Vec<NameInfo>,
    index: HashMap<&'a str, usize>,
    /// Declarations (timeout/interval/immediate) in source order.
    decls: Vec<(usize, NameKind, Token<'a>)>,
    /// `refresh` statements in source order.
    refreshes: Vec<(usize, Token<'a>)>,
}

impl<'a> Parser<'a> {
    fn error(&self, t: Token<'_>, message: String) -> ParseError {
        ParseError {
            file: self.file.to_owned(),
            line: t.line,
            col: t.col,
            message,
        }
    }

    fn next(&mut self) -> Result<Token<'a>, ParseError> {
        match self.toks.get(self.at) {
            Some(&t) => {
                self.at += 1;
                Ok(t)
            }
            None => Err(self.error(self.eof, "unexpected end of file".into())),
        }
    }

    fn word(&mut self) -> Result<Rc<str>, ParseError> {
        let t = self.next()?;
        if t.text == "{" || t.text == "}" {
            return Err(self.error(t, format!("bad WORD '{}'", t.text)));
        }
        Ok(t.text.into())
    }

    fn name(&mut self) -> Result<(usize, Token<'a>), ParseError> {
        let t = self.next()?;
        if !is_name(t.text) {
            return Err(self.error(t, format!("bad NAME '{}'", t.text)));
        }
        let idx = *self.index.entry(t.text).or_insert_with(|| {
            self.names.push(NameInfo {
                name: t.text.to_owned(),
                kind: NameKind::Timer,
            });
            self.names.len() - 1
        });
        Ok((idx, t))
    }

    fn delay(&mut self) -> Result<f64, ParseError> {
        let t = self.next()?;
        parse_delay(t.text).ok_or_else(|| self.error(t, format!("bad number '{}'", t.text)))
    }

    fn whole(&mut self, min: u64) -> Result<u64, ParseError> {
        let t = self.next()?;
        t.text
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| t.text.parse::<u64>().ok())
            .flatten()
            .filter(|v| (min..=WHOLE_MAX).contains(v))
            .ok_or_else(|| self.error(t, format!("bad number '{}'", t.text)))
    }

    fn body(&mut self, depth: usize, kind: Where) -> Result<Body, ParseError> {
        let open = self.next()?;
        if open.text != "{" {
            return Err(self.error(open, format!("expected '{{', found '{}'", open.text)));
        }
        if depth >= MAX_DEPTH {
            return Err(self.error(open, format!("bodies nested deeper than {MAX_DEPTH}")));
        }
        let mut stmts = Vec::new();
        loop {
            let t = self.next()?;
            if t.text == "}" {
                return Ok(stmts.into());
            }
            stmts.push(self.statement(t, kind, depth + 1)?);
        }
    }

    fn statement(&mut self, t: Token<'a>, at: Where, depth: usize) -> Result<Stmt, ParseError> {
        let callback = Where::Callback;
        Ok(match t.text {
            "log" => Stmt::Log(self.word()?),
            "throw" => Stmt::Throw(self.word()?),
            "timeout" | "interval" => {
                let (name, tok) = self.name()?;
                let delay = self.delay()?;
                let body = self.body(depth, callback)?;
                self.decls.push((name, NameKind::Timer, tok));
                if t.text == "timeout" {
                    Stmt::Timeout { name, delay, body }
                } else {
                    Stmt::Interval { name, delay, body }
                }
            }
            "immediate" => {
                let (name, tok) = self.name()?;
                self.decls.push((name, NameKind::Immediate, tok));
                Stmt::Immediate {
                    name,
                    body: self.body(depth, callback)?,
                }
            }
            "tick" => Stmt::Tick(self.body(depth, callback)?),
            "microtask" => Stmt::Microtask(self.body(depth, callback)?),
            "io" => Stmt::Io(self.body(depth, callback)?),
            "task" => Stmt::Task(self.body(depth, Where::Task)?),
            "clear" => Stmt::Clear(self.name()?.0),
            "refresh" => {
                let (name, tok) = self.name()?;
                self.refreshes.push((name, tok));
                Stmt::Refresh(name)
            }
            "ref" => Stmt::Ref(self.name()?.0),
            "unref" => Stmt::Unref(self.name()?.0),
            "hasref" => Stmt::HasRef(self.name()?.0),
            "block" => Stmt::Block(self.whole(0)?),
            "nth" => {
                match at {
                    Where::Top => return Err(self.error(t, "nth outside a callback".into())),
                    Where::Task => return Err(self.error(t, "nth inside a task body".into())),
                    Where::Callback => {}
                }
                let n = self.whole(1)?;
                Stmt::Nth(n, self.body(depth, callback)?)
            }
            "sleep" | "yield" | "check" => {
                if at != Where::Task {
                    return Err(self.error(t, format!("{} outside a task body", t.text)));
                }
                match t.text {
                    "sleep" => Stmt::Sleep(self.whole(0)?),
                    "yield" => Stmt::Yield,
                    _ => Stmt::Check,
                }
            }
            "{" | "}" => return Err(self.error(t, format!("unexpected '{}'", t.text))),
            other => return Err(self.error(t, format!("unknown statement '{other}'"))),
        })
    }

    fn check_kinds(&mut self) -> Result<(), ParseError> {
        // Declarations were recorded when their statement ended; the
        // translator walks in source order, i.e. by token position.
        self.decls.sort_by_key(|&(_, _, t)| (t.line, t.col));
        let mut kind: Vec<Option<NameKind>> = vec![None; self.names.len()];
        for &(name, k, tok) in &self.decls {
            match kind[name] {
                None => kind[name] = Some(k),
                Some(prev) if prev != k => {
                    let n = &self.names[name].name;
                    return Err(self.error(
                        tok,
                        format!("name '{n}' is used for both timers and immediates"),
                    ));
                }
                Some(_) => {}
            }
        }
        for (info, k) in self.names.iter_mut().zip(&kind) {
            info.kind = k.unwrap_or(NameKind::Timer);
        }
        for &(name, tok) in &self.refreshes {
            if self.names[name].kind == NameKind::Immediate {
                let n = &self.names[name].name;
                return Err(self.error(tok, format!("refresh of immediate '{n}'")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> Script {
        parse("t.tl", src).unwrap_or_else(|e| panic!("{src:?}: {e}"))
    }

    fn err(src: &str) -> String {
        parse("t.tl", src).unwrap_err().to_string()
    }

    #[test]
    fn every_statement_and_glued_braces() {
        let s = ok(
            "timeout a 1.5{log x tick{nth 2{clear a}}}\ninterval b -5 {}\nimmediate c {refresh a ref b unref c hasref d block 7 throw e microtask{} io{}}",
        );
        assert_eq!(
            s.names
                .iter()
                .map(|n| (n.name.as_str(), n.kind))
                .collect::<Vec<_>>(),
            [
                ("a", NameKind::Timer),
                ("b", NameKind::Timer),
                ("c", NameKind::Immediate),
                ("d", NameKind::Timer)
            ]
        );
        let Stmt::Timeout { delay, body, .. } = &s.body[0] else {
            panic!()
        };
        assert_eq!(*delay, 1.5);
        assert_eq!(body[0], Stmt::Log("x".into()));
        let Stmt::Tick(t) = &body[1] else { panic!() };
        assert_eq!(t[0], Stmt::Nth(2, vec![Stmt::Clear(0)].into()));
        let Stmt::Immediate { body, .. } = &s.body[2] else {
            panic!()
        };
        assert_eq!(
            body[..6],
            [
                Stmt::Refresh(0),
                Stmt::Ref(1),
                Stmt::Unref(2),
                Stmt::HasRef(3),
                Stmt::Block(7),
                Stmt::Throw("e".into())
            ]
        );
    }

    #[test]
    fn comments_whitespace_and_flag() {
        let s = ok("# virtual-only\r\nlog a#b c\n\u{c}log\tx");
        assert!(s.virtual_only);
        assert_eq!(&*s.body, [Stmt::Log("a".into()), Stmt::Log("x".into())]);
        assert!(!ok("#virtual-only\n").virtual_only);
        // Non-ASCII spaces are part of words, as in the translator.
        assert_eq!(&*ok("log a\u{a0}b").body, [Stmt::Log("a\u{a0}b".into())]);
    }

    #[test]
    fn numbers() {
        for (text, v) in [
            ("0", 0.0),
            ("-5", -5.0),
            ("2147483648", 2147483648.0),
            ("1.25", 1.25),
        ] {
            let Stmt::Timeout { delay, .. } = ok(&format!("timeout a {text} {{}}")).body[0] else {
                panic!()
            };
            assert_eq!(delay, v);
        }
        let Stmt::Timeout { delay, .. } = ok("timeout a NaN {}").body[0] else {
            panic!()
        };
        assert!(delay.is_nan());
        for bad in [".5", "1.", "+5", "1e3", "nan", "0x10", "-", "1.2.3"] {
            assert_eq!(
                err(&format!("timeout a {bad} {{}}")),
                format!("t.tl:1:11: bad number '{bad}'")
            );
        }
        assert_eq!(ok("block 4294967295").body[0], Stmt::Block(4_294_967_295));
        assert_eq!(err("block 4294967296"), "t.tl:1:7: bad number '4294967296'");
        assert_eq!(
            err("block 99999999999999999999999"),
            "t.tl:1:7: bad number '99999999999999999999999'"
        );
        assert_eq!(err("tick { nth 0 {} }"), "t.tl:1:12: bad number '0'");
    }

    #[test]
    fn errors_carry_positions() {
        assert_eq!(err("log"), "t.tl:1:4: unexpected end of file");
        assert_eq!(err("tick {\n"), "t.tl:2:1: unexpected end of file");
        assert_eq!(err("wait 5"), "t.tl:1:1: unknown statement 'wait'");
        assert_eq!(err("sleep 5"), "t.tl:1:1: sleep outside a task body");
        assert_eq!(err("tick { yield }"), "t.tl:1:8: yield outside a task body");
        assert_eq!(
            err("task { timeout a 1 { check } }"),
            "t.tl:1:22: check outside a task body"
        );
        assert_eq!(err("task { nth 1 {} }"), "t.tl:1:8: nth inside a task body");
        assert_eq!(err("task { sleep -1 }"), "t.tl:1:14: bad number '-1'");
        assert!(
            ok("task { sleep 0 yield check task { yield } tick { task { check } } }")
                .body
                .len()
                == 1
        );
        assert_eq!(err("  }"), "t.tl:1:3: unexpected '}'");
        assert_eq!(err("{"), "t.tl:1:1: unexpected '{'");
        assert_eq!(err("tick log"), "t.tl:1:6: expected '{', found 'log'");
        assert_eq!(err("log }"), "t.tl:1:5: bad WORD '}'");
        assert_eq!(err("clear 1a"), "t.tl:1:7: bad NAME '1a'");
        assert_eq!(err("nth 1 {}"), "t.tl:1:1: nth outside a callback");
        assert_eq!(
            err("\u{e9}t\u{e9} x"),
            "t.tl:1:1: unknown statement '\u{e9}t\u{e9}'"
        );
        assert_eq!(err("log \u{e9} foo"), "t.tl:1:7: unknown statement 'foo'");
        assert_eq!(
            err("timeout a 1 {}\nimmediate a {}"),
            "t.tl:2:11: name 'a' is used for both timers and immediates"
        );
        assert_eq!(
            err("refresh i immediate i {}"),
            "t.tl:1:9: refresh of immediate 'i'"
        );
        // Syntax errors win over the static checks, wherever they are.
        assert_eq!(
            err("timeout a 1 {} immediate a {} sleep"),
            "t.tl:1:31: sleep outside a task body"
        );
        // Nested declarations are checked in source order.
        assert_eq!(
            err("timeout a 1 { immediate b {} } timeout b 1 {}"),
            "t.tl:1:40: name 'b' is used for both timers and immediates"
        );
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "tick {".repeat(MAX_DEPTH) + &"}".repeat(MAX_DEPTH);
        assert!(parse("t.tl", &deep).is_ok());
        let too_deep = "tick {".repeat(100_000);
        assert!(err(&too_deep).contains("nested deeper"));
    }

    #[test]
    fn random_input_never_panics() {
        let atoms = [
            "log",
            "timeout",
            "interval",
            "immediate",
            "tick",
            "nth",
            "clear",
            "refresh",
            "{",
            "}",
            "a",
            "1",
            "-1.5",
            "#",
            "\n",
            " ",
            "\u{0}",
            "\u{e9}",
            "NaN",
            "block",
            "io",
            "throw",
        ];
        let mut s = 0x9e3779b97f4a7c15u64;
        let (mut oks, mut errs) = (0, 0);
        for _ in 0..20_000 {
            let mut src = String::new();
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
            for _ in 0..(s >> 59) {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                src.push_str(atoms[(s % atoms.len() as u64) as usize]);
                if s & 8 == 0 {
                    src.push(' ');
                }
            }
            match parse("r.tl", &src) {
                Ok(script) => {
                    oks += 1;
                    assert!(script.names.len() <= src.len());
                }
                Err(e) => {
                    errs += 1;
                    assert!(e.line >= 1 && e.col >= 1, "{e}");
                }
            }
        }
        assert!(oks > 500 && errs > 1000, "{oks} {errs}");
    }
}
