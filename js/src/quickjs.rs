//! The QuickJS engine (rquickjs, QuickJS-NG): the natives the prelude
//! builds Node's globals from, and the [`Engine`] methods.
//!
//! Invariants:
//! - the persistent handles are declared before the context and the
//!   runtime, so they drop first (a `Persistent` outliving its runtime
//!   aborts the process);
//! - natives hold only a weak reference to the host, so the engine and the
//!   host form no cycle;
//! - natives never call JavaScript (`compile` only evaluates a module's
//!   wrapper expression, which makes its function, unless the source closes
//!   the wrapper itself, as the main script's could always do).
//!
//! ```
//! let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
//! let mut lp = timerloop::EventLoop::with_virtual_clock();
//! // The main script sees Node's globals, and `require` from its wrapper.
//! let src = "globalThis.kinds = [setTimeout, setImmediate, queueMicrotask, process.nextTick,
//!     require('timers').setTimeout].map(f => typeof f).join()";
//! host.eval_main(&mut lp, "main.js", src).unwrap();
//! let kinds: String = host.context().with(|c| c.globals().get("kinds")).unwrap();
//! assert_eq!(kinds, "function,function,function,function,function");
//! ```

use std::cell::RefCell;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::function::This;
use rquickjs::object::Filter;
use rquickjs::promise::PromiseState;
use rquickjs::{
    Array, ArrayBuffer, Atom, Context, Ctx, Function, IntoJs, Object, Persistent, Runtime, Value,
};
use timerloop::{BoxError, EventLoop};

use crate::engine::{Engine, Kind, Stream, write_std};
use crate::host::{Host, Thrown};
use crate::watch::{Entry, Watch};

const PRELUDE: &str = include_str!("prelude.js");

/// The largest stack limit rquickjs passes on to QuickJS (above it, it
/// sets none); [`Options::max_stack`] is clamped to it.
const MAX_STACK: usize = 1 << 24;

/// How long `Atomics.wait` sleeps between asking whether the program must
/// stop, when it has a budget or an interrupt handler.
const SLEEP_SLICE: Duration = Duration::from_millis(10);

/// A rejected promise with no handler: the promise, its reason, its id.
type Rejection = (Persistent<Value<'static>>, Persistent<Value<'static>>, u32);

/// The host on QuickJS.
///
/// ```
/// use std::rc::Rc;
/// use timerloop_js::{Host, QuickJs, QuickJsHost};
/// let host: Rc<Host<QuickJs>> = QuickJsHost::create_with(Default::default()).unwrap();
/// let mut lp = timerloop::EventLoop::with_virtual_clock();
/// assert_eq!(host.run_main(&mut lp, "main.js", "setTimeout(() => {}, 3)"), 0);
/// assert_eq!(lp.now(), 3);
/// ```
pub type QuickJsHost = Host<QuickJs>;

/// A QuickJS runtime and context with the prelude installed.
///
/// ```
/// use timerloop_js::{Engine, QuickJs};
/// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
/// let engine: &QuickJs = host.engine();
/// engine.eval_main("main.js", "process.exitCode = 2").unwrap();
/// assert_eq!(engine.exit_code(), Some(2));
/// ```
pub struct QuickJs {
    dispatch: Option<Persistent<Function<'static>>>,
    inspect: Option<Persistent<Function<'static>>>,
    emit_exit: Option<Persistent<Function<'static>>>,
    emit_uncaught: Option<Persistent<Function<'static>>>,
    emit_rejection: Option<Persistent<Function<'static>>>,
    emit_handled: Option<Persistent<Function<'static>>>,
    /// Makes the main script's module (its wrapper's arguments), and
    /// marks it loaded after it ran.
    set_main: Option<Persistent<Function<'static>>>,
    /// Makes Node's `UnhandledPromiseRejection` error for a reason that is
    /// not an error.
    rejection_error: Option<Persistent<Function<'static>>>,
    /// `process.exitCode` as the status takes it: validated and truncated
    /// to int32 by the prelude's setter (Node's `fields[kExitCode]`), `None`
    /// when unset.
    exit_status: std::cell::Cell<Option<i32>>,
    /// The exception most recently reported, for `uncaughtException`.
    last_thrown: RefCell<Option<Persistent<Value<'static>>>>,
    /// The heap limit set by [`Options::max_memory`].
    max_memory: Option<usize>,
    /// `last_thrown` is an unhandled rejection's reason.
    last_was_rejection: std::cell::Cell<bool>,
    /// Rejected promises with no handler yet, and their reasons, in the
    /// order they were rejected (Node's `pendingUnhandledRejections`).
    unhandled: RefCell<Vec<Rejection>>,
    /// The rejections being reported, taken from `unhandled` at once as
    /// Node's `processPromiseRejections` swaps its map: one a listener
    /// makes meanwhile waits for the next batch (after the ticks and
    /// microtasks), one handled meanwhile is still reported, and a
    /// listener that throws drops the rest of the batch, as in Node.
    batch: RefCell<std::collections::VecDeque<Rejection>>,
    /// The `unhandledRejection` listener threw (set by `report_rejection`).
    listener_threw: std::cell::Cell<bool>,
    /// Rejections reported, to `unhandledRejection` listeners or as an
    /// uncaught exception (Node's `warned`): one that gets a handler later
    /// is `rejectionHandled`. See [`Reported`].
    reported: Option<Reported>,
    /// Reported rejections handled since, with their ids, for the next
    /// check (Node's `asyncHandledRejections`).
    handled_late: RefCell<Vec<(Persistent<Value<'static>>, u32)>>,
    /// Node's `lastPromiseId`: every rejection without a handler has one.
    last_rejection_id: std::cell::Cell<u32>,
    /// [`Options::console`].
    console: Option<ConsoleSink>,
    /// [`Options::max_run`] and [`Options::interrupt`].
    watch: Watch,
    /// The report of the interrupt that stopped the program, with the
    /// stack where it stopped, once the exception came out.
    interrupt_report: RefCell<Option<Thrown>>,
    ctx: Context,
    rt: Runtime,
}

impl std::fmt::Debug for QuickJs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuickJs").finish_non_exhaustive()
    }
}

fn up(w: &Weak<QuickJsHost>) -> Option<Rc<QuickJsHost>> {
    w.upgrade()
}

/// The interrupt handler's answer: whether the host's JavaScript running
/// now must stop (its program exited in an embedding, ran past
/// `max_run`, or the embedder's handler says so).
fn must_stop(h: &QuickJsHost) -> bool {
    let watch = &h.engine().watch;
    watch.inside() && (h.exited().is_some() || watch.poll())
}

/// `["ok", fields...]`, or `[code, message]` as Node's fs errors have.
/// The bytes the prelude hands a byte write (`writeBytes`, `writeFd`) as
/// a string of one unit a byte: each char's value, `?` for one above 0xff
/// (the prelude never makes one).
fn unit_bytes(s: &str) -> Vec<u8> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

fn fs_result(r: std::io::Result<Vec<String>>) -> Vec<String> {
    match r {
        Ok(mut v) => {
            v.insert(0, "ok".into());
            v
        }
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => vec![
            "ERR_ENCODING_INVALID_ENCODED_DATA".into(),
            e.to_string(),
            String::new(),
        ],
        Err(e) => {
            // libuv's name, message and (negative) errno, as Node's
            // error has them.
            let errno = e.raw_os_error().unwrap_or(5);
            let (code, msg) = match errno {
                1 => ("EPERM", "operation not permitted"),
                2 => ("ENOENT", "no such file or directory"),
                5 => ("EIO", "i/o error"),
                6 => ("ENXIO", "no such device or address"),
                9 => ("EBADF", "bad file descriptor"),
                11 => ("EAGAIN", "resource temporarily unavailable"),
                12 => ("ENOMEM", "not enough memory"),
                13 => ("EACCES", "permission denied"),
                16 => ("EBUSY", "resource busy or locked"),
                17 => ("EEXIST", "file already exists"),
                19 => ("ENODEV", "no such device"),
                20 => ("ENOTDIR", "not a directory"),
                21 => ("EISDIR", "illegal operation on a directory"),
                22 => ("EINVAL", "invalid argument"),
                23 => ("ENFILE", "file table overflow"),
                24 => ("EMFILE", "too many open files"),
                26 => ("ETXTBSY", "text file is busy"),
                27 => ("EFBIG", "file too large"),
                28 => ("ENOSPC", "no space left on device"),
                30 => ("EROFS", "read-only file system"),
                36 => ("ENAMETOOLONG", "name too long"),
                39 => ("ENOTEMPTY", "directory not empty"),
                40 => ("ELOOP", "too many symbolic links encountered"),
                // libuv's name for an errno it does not map.
                _ => ("UNKNOWN", "unknown error"),
            };
            vec![code.into(), msg.into(), format!("-{errno}")]
        }
    }
}

/// Node's `Stats` numbers, as strings for [`fs_result`]: `dev`, `mode`,
/// `nlink`, `uid`, `gid`, `rdev`, `blksize`, `ino`, `size`, `blocks`,
/// then the access, modification, change and birth times in ms (birth 0
/// where the system gives none, as Node's).
fn stat(path: &str) -> std::io::Result<Vec<String>> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path)?;
    let ms = |s: i64, ns: i64| (s as f64) * 1e3 + (ns as f64) / 1e6;
    let mut v: Vec<String> = [
        m.dev(),
        u64::from(m.mode()),
        m.nlink(),
        u64::from(m.uid()),
        u64::from(m.gid()),
        m.rdev(),
        m.blksize(),
        m.ino(),
        m.size(),
        m.blocks(),
    ]
    .iter()
    .map(u64::to_string)
    .collect();
    let birth = m
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64() * 1e3);
    v.extend(
        [
            ms(m.atime(), m.atime_nsec()),
            ms(m.mtime(), m.mtime_nsec()),
            ms(m.ctime(), m.ctime_nsec()),
            birth,
        ]
        .iter()
        .map(f64::to_string),
    );
    Ok(v)
}

/// Node's CommonJS wrapper, which a module's source follows on its first
/// line, so that line numbers in stacks are the file's (the prelude takes
/// the wrapper's width off the columns of line 1).
const WRAPPER_HEAD: &str = "(function (exports, require, module, __filename, __dirname) { ";

/// Compiles a CommonJS module's `source` in Node's wrapper under the file
/// name `name` (what stacks show), to the function Node calls with
/// `exports, require, module, __filename, __dirname`. A shebang line
/// becomes a comment of the same width (Node strips it).
fn compile_module<'js>(
    ctx: &Ctx<'js>,
    name: &str,
    source: &str,
) -> rquickjs::Result<Function<'js>> {
    let source = match source.strip_prefix("#!") {
        Some(rest) => format!("//{rest}"),
        None => source.to_owned(),
    };
    let wrapped = format!("{WRAPPER_HEAD}{source}\n}})");
    ctx.eval_with_options(wrapped, options(name, false))
}

/// Node's `internalModuleStat`: 0 for a file (anything but a directory),
/// 1 for a directory, a negative errno when there is nothing to stat.
fn module_stat(path: &str) -> i32 {
    match std::fs::metadata(path) {
        Ok(m) => i32::from(m.is_dir()),
        Err(e) => -e.raw_os_error().unwrap_or(2),
    }
}

fn options(name: &str, strict: bool) -> EvalOptions {
    let mut o = EvalOptions::default();
    o.strict = strict;
    o.filename = Some(name.to_owned());
    o
}

/// Sets `obj[name]` to a native function.
fn native<'js, P, F>(ctx: &Ctx<'js>, obj: &Object<'js>, name: &str, f: F) -> rquickjs::Result<()>
where
    F: rquickjs::function::IntoJsFunc<'js, P> + 'js,
{
    obj.set(name, Function::new(ctx.clone(), f)?)
}

/// A native of one id (a timer's or an immediate's) that calls `f` on the
/// host while the host lives.
fn on_id<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    name: &str,
    w: &Weak<QuickJsHost>,
    f: fn(&QuickJsHost, u32),
) -> rquickjs::Result<()> {
    let h = w.clone();
    native(ctx, obj, name, move |id: u32| {
        if let Some(h) = up(&h) {
            f(&h, id);
        }
    })
}

/// The stream a program's write to `fd` goes to: fd 2 is stderr, any
/// other stdout (`fs.writeSync(fd)` takes any).
fn stdio_stream(fd: i32) -> Stream {
    if fd == 2 {
        Stream::Stderr
    } else {
        Stream::Stdout
    }
}

/// What Node's `process.stdout` (fd 1) or `stderr` (fd 2) would be, by
/// what libuv's `uv_guess_handle` finds there: 0 a file or a character
/// device (`SyncWriteStream`, no handle), 1 a pipe or a socket
/// (`net.Socket`, whose handle takes an async id), 2 a TTY
/// (`tty.WriteStream`: its handle's id, and the first TTY stream's
/// `SIGWINCH` listener makes the signal's handle, one more).
fn stdio_kind(fd: i32) -> u32 {
    #[cfg(unix)]
    {
        use std::io::IsTerminal;
        use std::os::fd::AsFd;
        use std::os::unix::fs::FileTypeExt;
        let (out, err) = (std::io::stdout(), std::io::stderr());
        let handle = match fd {
            1 => out.as_fd(),
            2 => err.as_fd(),
            _ => return 0,
        };
        if handle.is_terminal() {
            return 2;
        }
        let Ok(owned) = handle.try_clone_to_owned() else {
            return 0;
        };
        let piped = std::fs::File::from(owned)
            .metadata()
            .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket());
        u32::from(piped)
    }
    #[cfg(not(unix))]
    {
        let _ = fd;
        0
    }
}

fn install_prelude<'js>(
    ctx: &Ctx<'js>,
    w: &Weak<QuickJsHost>,
    argv: Vec<String>,
    env: Vec<(String, String)>,
    follow_loop_clock: bool,
) -> rquickjs::Result<Object<'js>> {
    let o = Object::new(ctx.clone())?;
    o.set("followsLoopClock", follow_loop_clock)?;
    let h = w.clone();
    native(ctx, &o, "timer", move |after: f64, repeat: bool| {
        up(&h).map_or(0, |h| h.set_timer(after, repeat))
    })?;
    on_id(ctx, &o, "clear", w, |h, id| h.clear(id))?;
    on_id(ctx, &o, "refresh", w, |h, id| h.refresh(id))?;
    on_id(ctx, &o, "ref", w, |h, id| h.set_ref(id, true))?;
    on_id(ctx, &o, "unref", w, |h, id| h.set_ref(id, false))?;
    let h = w.clone();
    native(ctx, &o, "hasRef", move |id: u32| {
        up(&h).is_some_and(|h| h.has_ref(id))
    })?;
    on_id(ctx, &o, "release", w, |h, id| h.release(id))?;
    let h = w.clone();
    native(ctx, &o, "immediate", move || {
        up(&h).map_or(0, |h| h.set_immediate())
    })?;
    on_id(ctx, &o, "clearImmediate", w, |h, id| h.clear_immediate(id))?;
    on_id(ctx, &o, "refImmediate", w, |h, id| {
        h.set_immediate_ref(id, true)
    })?;
    on_id(ctx, &o, "unrefImmediate", w, |h, id| {
        h.set_immediate_ref(id, false)
    })?;
    let h = w.clone();
    native(ctx, &o, "immediateHasRef", move |id: u32| {
        up(&h).is_some_and(|h| h.immediate_has_ref(id))
    })?;
    let h = w.clone();
    native(ctx, &o, "tick", move || up(&h).map_or(0, |h| h.tick()))?;
    let h = w.clone();
    native(ctx, &o, "watchSignal", move |signum: i32, on: bool| {
        up(&h).map_or(0.0, |h| match h.watch_signal(signum, on) {
            Ok(id) => f64::from(id),
            Err(errno) => -f64::from(errno),
        })
    })?;
    // process.kill: only a host that ends the OS process (tljs) sends
    // signals. An embedded program is refused as a process without the
    // permission is (EPERM), whatever the pid: its pid is the
    // application's, and 0 or -1 would reach the application's group or
    // every process of its user.
    let h = w.clone();
    native(ctx, &o, "kill", move |pid: i32, signum: i32| {
        if !up(&h).is_some_and(|h| h.exits_process()) {
            return crate::signals::EPERM;
        }
        crate::signals::kill(pid, signum).err().unwrap_or(0)
    })?;
    // `Atomics.wait` on the main thread: the thread sleeps (a virtual
    // clock moves instead, as under a callback that blocks). A program
    // with a budget or an interrupt handler sleeps in slices, asking
    // between them whether it must stop, so a wait without a timeout
    // cannot outlast `max_run`: it returns true, and the prelude spins
    // into the engine's next check, which stops it.
    let h = w.clone();
    native(ctx, &o, "sleep", move |ms: f64| {
        // NaN and anything not above 0 wait for nothing.
        if ms.is_nan() || ms <= 0.0 {
            return false;
        }
        EventLoop::with_current(|lp| {
            if lp.virtual_clock().is_some() {
                lp.block(ms.ceil().min(u64::MAX as f64) as u64);
                return false;
            }
            let total = Duration::try_from_secs_f64(ms / 1e3).unwrap_or(Duration::MAX);
            let watched = up(&h).is_some_and(|h| h.engine().watch.watches());
            if !watched {
                std::thread::sleep(total);
                return false;
            }
            let end = Instant::now().checked_add(total);
            loop {
                if up(&h).is_none_or(|h| must_stop(&h)) {
                    return true;
                }
                let left = end.map_or(Duration::MAX, |e| {
                    e.saturating_duration_since(Instant::now())
                });
                if left.is_zero() {
                    return false;
                }
                std::thread::sleep(left.min(SLEEP_SLICE));
            }
        })
    })?;
    let h = w.clone();
    native(ctx, &o, "timerStart", move |id: u32| {
        up(&h).map_or(f64::NAN, |h| h.timer_start(id))
    })?;
    let h = w.clone();
    native(ctx, &o, "now", move || up(&h).map_or(0.0, |h| h.now_ms()))?;
    let h = w.clone();
    native(ctx, &o, "hrtime", move || {
        up(&h).map_or(0.0, |h| h.hrtime_ns())
    })?;
    let h = w.clone();
    native(ctx, &o, "dateNow", move || {
        up(&h).map_or(0.0, |h| h.date_now_ms())
    })?;
    let h = w.clone();
    native(ctx, &o, "catchUncaught", move |on: bool| {
        if let Some(h) = up(&h) {
            h.catch_uncaught(on);
        }
    })?;
    let h = w.clone();
    native(ctx, &o, "stat", move || up(&h).map_or(0, |h| h.stat()))?;
    let h = w.clone();
    native(ctx, &o, "engaged", move || {
        up(&h).is_some_and(|h| h.engaged())
    })?;
    let h = w.clone();
    native(ctx, &o, "asyncId", move || {
        up(&h).map_or(0, |h| h.async_id())
    })?;
    native(ctx, &o, "statSync", |path: String| fs_result(stat(&path)))?;
    // A file's bytes (an ArrayBuffer), or `[code, message, errno]`.
    native(
        ctx,
        &o,
        "readFile",
        |c: Ctx<'js>, path: String| -> rquickjs::Result<Value<'js>> {
            match std::fs::read(&path) {
                Ok(bytes) => Ok(ArrayBuffer::new(c, bytes)?.into_value()),
                Err(e) => fs_result(Err(e)).into_js(&c),
            }
        },
    )?;
    // An object's own string keys (only enumerable ones if `enum_only`)
    // after its first `skip`: a typed array's indices come first, as many
    // as its length, and are skipped without being made into strings
    // (for Node's getOwnNonIndexProperties).
    native(
        ctx,
        &o,
        "ownNames",
        |c: Ctx<'js>,
         obj: Object<'js>,
         skip: usize,
         enum_only: bool|
         -> rquickjs::Result<Array<'js>> {
            let mut filter = Filter::new().string();
            if enum_only {
                filter = filter.enum_only();
            }
            let out = Array::new(c)?;
            let mut n = 0;
            for (i, key) in obj.own_keys::<Atom>(filter).enumerate() {
                let key = key?;
                if i >= skip {
                    out.set(n, key.to_value()?)?;
                    n += 1;
                }
            }
            Ok(out)
        },
    )?;
    // The CommonJS loader's: compiling a module in its wrapper (the
    // function; a syntax error is thrown), what a path is, and a file's
    // real path (symbolic links followed; as given if it has none).
    native(
        ctx,
        &o,
        "compile",
        |c: Ctx<'js>, source: String, name: String| compile_module(&c, &name, &source),
    )?;
    o.set("wrapperWidth", WRAPPER_HEAD.len())?;
    native(ctx, &o, "moduleStat", |path: String| module_stat(&path))?;
    native(ctx, &o, "realpath", |path: String| {
        std::fs::canonicalize(&path).map_or(path, |p| p.display().to_string())
    })?;
    native(ctx, &o, "pid", std::process::id)?;
    let h = w.clone();
    native(ctx, &o, "stdioKind", move |fd: i32| {
        // Written to the embedder's sink: no stream of the process's.
        if up(&h).is_some_and(|h| h.engine().console.is_none()) {
            stdio_kind(fd)
        } else {
            0
        }
    })?;
    // A promise's state for util.inspect: -1 not a promise, 0 pending, 1
    // fulfilled, 2 rejected; and its value.
    native(ctx, &o, "promiseState", |v: Value<'js>| {
        v.as_promise().map_or(-1, |p| match p.state() {
            PromiseState::Pending => 0,
            PromiseState::Resolved => 1,
            PromiseState::Rejected => 2,
        })
    })?;
    native(
        ctx,
        &o,
        "promiseResult",
        |c: Ctx<'js>, v: Value<'js>| match v.as_promise().and_then(|p| p.result::<Value>()) {
            Some(Ok(v)) => v,
            Some(Err(_)) => c.catch(),
            None => Value::new_undefined(c),
        },
    )?;
    // Text to a program's stream (`stdio_stream`).
    let h = w.clone();
    // Once the program has ended (a `Host::terminate` from a native the
    // program called, until the engine's next check stops its script),
    // nothing it writes goes out.
    native(ctx, &o, "write", move |fd: i32, s: String| {
        if let Some(h) = up(&h)
            && h.exited().is_none()
        {
            h.engine().write_checked(stdio_stream(fd), s.as_bytes())
        } else {
            0
        }
    })?;
    // Bytes as they are (Buffers, TypedArrays, strings in an encoding),
    // given as a string of one unit a byte.
    let h = w.clone();
    native(ctx, &o, "writeBytes", move |fd: i32, s: String| {
        if let Some(h) = up(&h)
            && h.exited().is_none()
        {
            let bytes = unit_bytes(&s);
            h.engine().write_checked(stdio_stream(fd), &bytes)
        } else {
            0
        }
    })?;
    // fs.writeSync to a descriptor other than 1 and 2 (one the shell
    // opened for tljs: `3>out.txt`): its bytes, one unit a byte, written
    // through the descriptor's /proc/self/fd link (opened to append, so a
    // file's bytes go at its end; an fd not open is EBADF, as Node's).
    // An embedded program's descriptors are the application's (its
    // sockets, its files): refused as not open.
    let h = w.clone();
    native(
        ctx,
        &o,
        "writeFd",
        move |fd: i32, s: String| -> Vec<String> {
            let ebadf = || vec!["EBADF".into(), "bad file descriptor".into(), "-9".into()];
            if fd < 0 || !up(&h).is_some_and(|h| h.exits_process() && h.exited().is_none()) {
                return ebadf();
            }
            let bytes = unit_bytes(&s);
            let r = std::fs::OpenOptions::new()
                .append(true)
                .open(format!("/proc/self/fd/{fd}"))
                .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes));
            match r {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => ebadf(),
                r => fs_result(r.map(|()| Vec::new())),
            }
        },
    )?;
    let h = w.clone();
    native(ctx, &o, "exit", move |code: i32| {
        if let Some(h) = up(&h) {
            h.exit(code);
        }
    })?;
    let h = w.clone();
    native(ctx, &o, "ended", move || {
        up(&h).is_none_or(|h| h.exited().is_some())
    })?;
    native(ctx, &o, "argv", move || argv.clone())?;
    // Names and values, one after the other.
    let env: Vec<String> = env.into_iter().flat_map(|(k, v)| [k, v]).collect();
    native(ctx, &o, "env", move || env.clone())?;
    native(ctx, &o, "cwd", || {
        std::env::current_dir().map_or_else(|_| String::new(), |d| d.display().to_string())
    })?;
    native(ctx, &o, "ppid", std::os::unix::process::parent_id)?;
    // process.cpuUsage: the process's user and system CPU time in
    // microseconds (getrusage, as libuv's uv_getrusage); zeros if the
    // system refuses.
    native(ctx, &o, "cpuUsage", || {
        use nix::sys::resource::{UsageWho, getrusage};
        getrusage(UsageWho::RUSAGE_SELF).map_or(vec![0.0, 0.0], |u| {
            let us = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 * 1e6 + t.tv_usec() as f64;
            vec![us(u.user_time()), us(u.system_time())]
        })
    })?;
    native(ctx, &o, "arch", || match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        "powerpc64" => "ppc64",
        other => other,
    })?;
    let h = w.clone();
    native(ctx, &o, "setExitStatus", move |code: Option<i32>| {
        if let Some(h) = up(&h) {
            h.engine().exit_status.set(code);
        }
    })?;
    let prelude: Function = ctx.eval_with_options(PRELUDE, options("node:internal/tljs", true))?;
    prelude.call((o,))
}

/// What [`Options::console`] holds: a function that takes a program's
/// output, each piece with its stream.
///
/// ```
/// use std::sync::{Arc, mpsc};
/// use timerloop_js::{ConsoleSink, Options, QuickJsHost, Stream};
/// // To another thread, through a channel (a `Sender` is `Send + Sync`).
/// let (tx, rx) = mpsc::channel();
/// let sink: ConsoleSink = Arc::new(move |s: Stream, text: &str| {
///     let _ = tx.send((s, text.to_owned()));
/// });
/// let host = QuickJsHost::create_with(Options { console: Some(sink), ..Default::default() }).unwrap();
/// let mut lp = timerloop::EventLoop::with_virtual_clock();
/// host.run_main(&mut lp, "main.js", "process.stdout.write('a'); process.stdout.write('b')");
/// let got: Vec<_> = rx.try_iter().collect();
/// assert_eq!(got, [(Stream::Stdout, "a".to_owned()), (Stream::Stdout, "b".to_owned())]);
/// ```
pub type ConsoleSink = Arc<dyn Fn(Stream, &str) + Send + Sync>;

/// How [`install`] sets up the host on a context.
///
/// ```
/// let options = timerloop_js::Options {
///     argv: vec!["app".into(), "script.js".into()],
///     max_memory: Some(64 << 20),
///     ..Default::default()
/// };
/// let host = timerloop_js::QuickJsHost::create_with(options).unwrap();
/// let mut lp = timerloop::EventLoop::with_virtual_clock();
/// let argv = host.enter(&mut lp, |c| c.eval::<String, _>("process.argv[1]")).unwrap();
/// assert_eq!(argv.as_deref(), Some("script.js"));
/// ```
#[derive(Clone, Default)]
pub struct Options {
    /// `process.argv`.
    pub argv: Vec<String>,
    /// `process.env`: the variables the program sees. Empty by default,
    /// so that an embedding shows the program nothing of the
    /// application's environment unless it chooses to; `tljs` passes the
    /// process's own, as node does.
    ///
    /// ```
    /// let options = timerloop_js::Options {
    ///     env: vec![("MODE".into(), "test".into())],
    ///     ..Default::default()
    /// };
    /// let host = timerloop_js::QuickJsHost::create_with(options).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let mode = host.enter(&mut lp, |c| c.eval::<String, _>("process.env.MODE")).unwrap();
    /// assert_eq!(mode.as_deref(), Some("test"));
    /// ```
    pub env: Vec<(String, String)>,
    /// `process.exit` ends the OS process, as in Node (`tljs`), and so
    /// does a fatal exception the router reports (while some host on the
    /// thread has `uncaughtException` listeners) or that another host's
    /// [`Host::run`] finds; otherwise [`Host::run`] returns its status. When `false` (an embedding), it stops the loop
    /// instead: [`Host::run`] returns the status and
    /// [`Host::exited`] tells it; the script that called `process.exit`
    /// stops there (an uncatchable interrupt, so neither `catch` nor
    /// `finally` runs) and the context runs no more JavaScript.
    pub exit_process: bool,
    /// A limit on the engine's heap, in bytes (`tljs --max-memory MB`):
    /// an allocation past it throws `InternalError: out of memory`, an
    /// exception like any other (a `catch` can take it). `None`: no limit.
    /// A limit too small for the host's own setup (0 among them) makes
    /// [`install`] fail.
    pub max_memory: Option<usize>,
    /// The engine's stack limit in bytes (QuickJS's default is 1 MiB,
    /// about 1,600 frames of a small function); deeper recursion throws
    /// `RangeError: Maximum call stack size exceeded`.
    ///
    /// QuickJS measures it down from where the host enters JavaScript, so
    /// the thread that runs the host needs this much stack and a margin
    /// more (1 MiB is ample for the host's own frames); a limit past the
    /// thread's stack overflows it, and Rust aborts the process. The main
    /// thread usually has 8 MiB (`ulimit -s`), a Rust thread 2 MiB unless
    /// made with [`std::thread::Builder::stack_size`] (as `tljs` does). The
    /// value is clamped to 1 byte ..= 16 MiB: rquickjs takes a larger
    /// one, or 0, as no limit at all.
    ///
    /// ```
    /// use timerloop_js::{Options, QuickJsHost};
    /// // How deep a function recurses before its RangeError.
    /// fn depth(max_stack: Option<usize>) -> u32 {
    ///     let options = Options { max_stack, ..Default::default() };
    ///     let host = QuickJsHost::create_with(options).unwrap();
    ///     let mut lp = timerloop::EventLoop::with_virtual_clock();
    ///     let src = "globalThis.depth = 0; function f() { depth++; f() } try { f() } catch (e) {}";
    ///     host.eval_main(&mut lp, "deep.js", src).unwrap();
    ///     host.context().with(|c| c.globals().get::<_, u32>("depth")).unwrap()
    /// }
    /// // 16 MiB of engine stack (1 << 40 is clamped to it, not "no limit"),
    /// // on a thread that has that and a margin: 16 times QuickJS's default
    /// // (how many frames that is depends on how QuickJS was compiled).
    /// let (default, large) = std::thread::Builder::new()
    ///     .stack_size(20 << 20)
    ///     .spawn(|| (depth(None), depth(Some(1 << 40))))
    ///     .unwrap()
    ///     .join()
    ///     .unwrap();
    /// assert!(large > 8 * default, "{large} frames, {default} by default");
    /// ```
    pub max_stack: Option<usize>,
    /// Where the program's output goes instead of the process's stdout
    /// and stderr: called with each piece, as it would be written, its
    /// newlines included (a `console.log` is one call ending in `\n`; a
    /// `process.stdout.write` chunk is one call as written). It gets what
    /// the program writes (`console.*`, `process.stdout`/`stderr.write`,
    /// `fs.writeSync`, warnings) and what the host itself reports on
    /// stderr (an uncaught exception as Node prints it, in one call).
    /// `None`: the process's streams (`tljs`).
    ///
    /// `Send + Sync`, as the rest of `Options`, so that options made on
    /// one thread can set up a host on another; it is only ever called on
    /// the host's thread, by the host (while the program's JavaScript
    /// runs, or for the host's own reports after it: a fatal exception, a
    /// `tljs: ...` line, a stopped program), or by the application through
    /// the engine's `write`; it must not run the host's JavaScript itself.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use timerloop_js::{Options, QuickJsHost, Stream};
    /// // A plugin's lines, tagged, into the application's own log.
    /// let log = Arc::new(Mutex::new(String::new()));
    /// let l = log.clone();
    /// let console = Arc::new(move |s: Stream, text: &str| {
    ///     let tag = if s == Stream::Stderr { "plugin!" } else { "plugin" };
    ///     for line in text.lines() {
    ///         l.lock().unwrap().push_str(&format!("[{tag}] {line}\n"));
    ///     }
    /// });
    /// let host = QuickJsHost::create_with(Options { console: Some(console), ..Default::default() })
    ///     .unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "console.log('ready'); setTimeout(() => { throw new Error('broke') }, 5)";
    /// assert_eq!(host.run_main(&mut lp, "plugin.js", src), 1);
    /// let log = log.lock().unwrap();
    /// assert!(log.starts_with("[plugin] ready\n[plugin!] Error: broke\n"), "{log}");
    /// ```
    pub console: Option<ConsoleSink>,
    /// The most time the program's JavaScript may run in one turn: what
    /// one macrotask runs (the main script, a timer, an immediate, an I/O
    /// callback, `beforeExit` or `exit`, the application's own
    /// [`callback`](QuickJsHost::callback) or [`enter`](QuickJsHost::enter))
    /// together with the ticks, promise jobs and `queueMicrotask`
    /// callbacks that drain after it, so that a chain of short microtasks
    /// that never ends is stopped as a `while (true) {}` is. Only the time
    /// inside the host's JavaScript counts (wall-clock time, whatever the
    /// loop's clock), each turn afresh: a program that does a little in
    /// each of many timers runs as long as it likes. `None`: no limit
    /// (`tljs --max-run MS` sets one).
    ///
    /// Past it, the program ends at once with status 1, as a process a
    /// watchdog kills: QuickJS throws an uncatchable `InternalError:
    /// interrupted` (no `catch` or `finally` runs), no more of the
    /// program's JavaScript runs (not its `exit` or `uncaughtException`
    /// listeners either), its timers leave the loop and the loop stops, as
    /// at `process.exit(1)`; [`Host::exited`] is `Some(1)` and the host
    /// prints why, with the stack where it stopped, on the program's
    /// stderr (or [`console`](Self::console)). The application's loop and
    /// other hosts on it go on. QuickJS asks every 10,000 calls and
    /// backward jumps or so, so a turn ends a little after its budget, and
    /// a single native call that takes long (a huge `sort`, a
    /// catastrophic regular expression) is not cut short.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop_js::{Options, QuickJsHost};
    /// let options = Options { max_run: Some(Duration::from_millis(20)), ..Default::default() };
    /// let host = QuickJsHost::create_with(options).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "process.on('uncaughtException', () => {}); // cannot take it
    ///     setTimeout(() => { try { while (true) {} } finally { globalThis.cleanedUp = true } }, 10);
    ///     setTimeout(() => {}, 50)";
    /// assert_eq!(host.run_main(&mut lp, "spin.js", src), 1);
    /// assert_eq!(lp.now(), 10); // the program ended there, its other timer with it
    /// let r: Option<bool> = host.context().with(|c| c.globals().get("cleanedUp")).unwrap();
    /// assert_eq!(r, None);
    /// ```
    pub max_run: Option<Duration>,
    /// Asked every so often while the program's JavaScript runs (every
    /// 10,000 calls and backward jumps or so): `true` stops the program
    /// as [`max_run`](Self::max_run) does, with status 1. For a limit of
    /// the embedder's own: a flag another thread sets to cancel a plugin,
    /// a count of polls, a deadline of the application's. Asked only while
    /// the host runs JavaScript, on the host's thread; it must not run
    /// JavaScript itself. `Send + Sync`, as the rest of `Options`.
    ///
    /// ```
    /// use std::sync::{Arc, atomic::{AtomicBool, Ordering}};
    /// use timerloop_js::{Engine, Options, QuickJsHost};
    /// let cancel = Arc::new(AtomicBool::new(false));
    /// let c = cancel.clone();
    /// let options = Options {
    ///     interrupt: Some(Arc::new(move || c.load(Ordering::Relaxed))),
    ///     ..Default::default()
    /// };
    /// let host = QuickJsHost::create_with(options).unwrap();
    /// // Another thread cancels the plugin after 20 ms.
    /// let watchdog = std::thread::spawn(move || {
    ///     std::thread::sleep(std::time::Duration::from_millis(20));
    ///     cancel.store(true, Ordering::Relaxed);
    /// });
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// host.eval_main(&mut lp, "stuck.js", "for (;;) {}").unwrap();
    /// assert_eq!(host.exited(), Some(1));
    /// let why = host.engine().interrupted().unwrap();
    /// assert!(why.0.starts_with("InternalError: interrupted by the embedder's"), "{why}");
    /// watchdog.join().unwrap();
    /// ```
    pub interrupt: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
    /// What the program's clocks read: `performance.now()`,
    /// `process.hrtime`, `Date.now()` and `new Date()`. [`Clocks::Wall`]
    /// (the default, and Node's) reads the system's clocks, whatever the
    /// loop's; [`Clocks::Loop`] follows the loop's virtual clock, so that
    /// a test on one sees a program's dates and measured times move with
    /// its timers, as Node's `mock.timers` does with `Date`.
    ///
    /// ```
    /// use timerloop_js::{Clocks, Options, QuickJsHost};
    /// let host = QuickJsHost::create_with(Options { clocks: Clocks::Loop, ..Default::default() }).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let src = "const t0 = Date.now(), p0 = performance.now();
    ///     setTimeout(() => { process.exitCode = Date.now() - t0 === 1500 &&
    ///         performance.now() - p0 === 1500 && new Date().getTime() - t0 === 1500 ? 0 : 1 }, 1500)";
    /// assert_eq!(host.run_main(&mut lp, "dates.js", src), 0);
    /// ```
    pub clocks: Clocks,
}

/// What a program's clocks read ([`Options::clocks`]).
///
/// ```
/// assert_eq!(timerloop_js::Clocks::default(), timerloop_js::Clocks::Wall);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Clocks {
    /// The system's clocks, as Node's: on a virtual loop clock, a
    /// program's dates and `performance.now()` move with real time only.
    #[default]
    Wall,
    /// On a loop with a virtual clock, the clocks follow it from the first
    /// time the host runs JavaScript on that loop: `Date.now()` is the
    /// system clock's reading then plus the virtual time since, and
    /// `performance.now()` and `process.hrtime` go on from where they
    /// were (from the next whole millisecond) by the virtual time, so
    /// differences of their readings are exact. `new Date()` (no arguments) and `Date()`
    /// read `Date.now()`; the rest of `Date` is untouched. On a real loop
    /// clock, the same as [`Wall`](Self::Wall).
    Loop,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("argv", &self.argv)
            .field("env", &self.env.len())
            .field("exit_process", &self.exit_process)
            .field("max_memory", &self.max_memory)
            .field("max_stack", &self.max_stack)
            .field("console", &self.console.as_ref().map(|_| ".."))
            .field("max_run", &self.max_run)
            .field("interrupt", &self.interrupt.as_ref().map(|_| ".."))
            .field("clocks", &self.clocks)
            .finish()
    }
}

/// Installs Node's globals (`setTimeout` and the rest of the table in
/// the README, `process`, `console`, `require`) on an application's own
/// QuickJS context, bound to the thread's [`EventLoop`]
/// whenever JavaScript runs through the returned host
/// ([`Host::eval_main`], [`QuickJsHost::enter`], [`QuickJsHost::callback`]).
///
/// JavaScript that uses the globals (or rejects a promise) must run through
/// the host, which puts it in the loop's scope: a bare `ctx.with` that
/// calls `setTimeout` panics (`EventLoop::with_current`: no current loop).
///
/// The application keeps its runtime, context and loop; the host holds
/// clones of the context handle and of its runtime and sets, on that
/// runtime, the promise rejection tracker, the interrupt handler (used by
/// `process.exit`, [`Options::max_run`] and [`Options::interrupt`]) and the
/// limits of `options`.
///
/// ```
/// use rquickjs::{Context, Runtime};
/// use timerloop::EventLoop;
/// let rt = Runtime::new().unwrap();
/// let ctx = Context::full(&rt).unwrap();
/// let host = timerloop_js::install(&ctx, timerloop_js::Options::default()).unwrap();
/// let mut lp = EventLoop::with_virtual_clock();
/// host.enter(&mut lp, |ctx| ctx.eval::<(), _>("setTimeout(() => globalThis.done = 1, 5)"))
///     .unwrap();
/// assert_eq!(host.run(&mut lp), 0);
/// assert_eq!(lp.now(), 5);
/// assert_eq!(ctx.with(|c| c.globals().get::<_, i32>("done")).unwrap(), 1);
/// ```
///
/// # A context no code has run in
///
/// The host takes built-ins (`WeakMap` and its methods, `Reflect`,
/// `Object.getOwnPropertyDescriptor` and others) when it is installed, and
/// its rejection tracker and prelude rely on them being the originals:
/// install it on a context where none of the application's JavaScript has
/// run, or one whose built-ins it has left alone.
///
/// # One host per runtime
///
/// The rejection tracker and the interrupt handler belong to the runtime,
/// not the context, and QuickJS keeps one of each: a second `install` on
/// another context of the same runtime takes them over, and the first
/// host then neither hears of its own unhandled rejections (the second
/// host gets them, as its own) nor stops at its own `process.exit` or
/// budget (its program may spin on). Give each host its own
/// [`Runtime`]; contexts a host does not run can share
/// its runtime (the host's interrupt handler stops only its own
/// JavaScript).
///
/// # Errors
///
/// If the prelude fails on this context (a bug, or a context without the
/// standard intrinsics: use [`Context::full`]).
pub fn install(ctx: &Context, options: Options) -> Result<Rc<QuickJsHost>, Thrown> {
    let rt = ctx.runtime().clone();
    if let Some(bytes) = options.max_memory {
        // rquickjs (QuickJS) takes 0 as no limit at all: 1 byte, which
        // the prelude cannot run in, so `install` fails, as with any
        // limit too small.
        rt.set_memory_limit(bytes.max(1));
    }
    if let Some(bytes) = options.max_stack {
        // rquickjs sets no limit at all for 0 or for more than 16 MiB.
        rt.set_max_stack_size(bytes.clamp(1, MAX_STACK));
    }
    let argv = options.argv;
    let env = options.env;
    let max_memory = options.max_memory;
    let console = options.console;
    let watch = Watch::new(options.max_run, options.interrupt);
    let follow = options.clocks == Clocks::Loop;
    let mut failed = None;
    let host = Host::new(options.exit_process, |w| {
        let api = ctx.with(|c| {
            install_prelude(&c, &w, argv, env, follow)
                .and_then(|api| {
                    let get = |k: &str| -> rquickjs::Result<_> {
                        Ok(Persistent::save(&c, api.get::<_, Function>(k)?))
                    };
                    Ok([
                        get("dispatch")?,
                        get("inspect")?,
                        get("emitExit")?,
                        get("emitUncaught")?,
                        get("emitRejection")?,
                        get("emitHandled")?,
                        get("setMain")?,
                        get("rejectionError")?,
                    ])
                })
                .map_err(|e| Thrown(format!("tljs prelude: {e}: {:?}", c.catch())))
        });
        let [
            dispatch,
            inspect,
            emit_exit,
            emit_uncaught,
            emit_rejection,
            emit_handled,
            set_main,
            rejection_error,
        ] = match api {
            Ok(fs) => fs.map(Some),
            Err(e) => {
                failed = Some(e);
                [None, None, None, None, None, None, None, None]
            }
        };
        let reported = match ctx.with(|c| Reported::new(&c)) {
            Ok(r) => Some(r),
            Err(e) => {
                failed.get_or_insert(e);
                None
            }
        };
        QuickJs {
            dispatch,
            inspect,
            emit_exit,
            emit_uncaught,
            emit_rejection,
            emit_handled,
            set_main,
            rejection_error,
            exit_status: std::cell::Cell::new(None),
            last_thrown: RefCell::new(None),
            max_memory,
            last_was_rejection: std::cell::Cell::new(false),
            unhandled: RefCell::new(Vec::new()),
            batch: RefCell::new(std::collections::VecDeque::new()),
            listener_threw: std::cell::Cell::new(false),
            reported,
            handled_late: RefCell::new(Vec::new()),
            last_rejection_id: std::cell::Cell::new(0),
            console,
            watch,
            interrupt_report: RefCell::new(None),
            ctx: ctx.clone(),
            rt: rt.clone(),
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let w = Rc::downgrade(&host);
    rt.set_host_promise_rejection_tracker(Some(Box::new(
        move |ctx: Ctx<'_>, promise: Value<'_>, reason: Value<'_>, handled: bool| {
            let Some(h) = w.upgrade() else { return };
            let e = h.engine();
            let same = |p: &Persistent<Value<'static>>| {
                p.clone().restore(&ctx).ok().as_ref() == Some(&promise)
            };
            if handled {
                e.unhandled.borrow_mut().retain(|(p, _, _)| !same(p));
                if let Some(id) = e.take_reported(&ctx, &promise) {
                    // Handled after listeners heard of it: `rejectionHandled`
                    // at the next check.
                    e.handled_late
                        .borrow_mut()
                        .push((Persistent::save(&ctx, promise), id));
                    h.rejection_pending();
                }
            } else {
                let id = e.last_rejection_id.get() + 1;
                e.last_rejection_id.set(id);
                e.unhandled.borrow_mut().push((
                    Persistent::save(&ctx, promise),
                    Persistent::save(&ctx, reason),
                    id,
                ));
                h.rejection_pending();
            }
        },
    )));
    host.follow_loop_clock(follow);
    // process.exit in an embedding, max_run, the embedder's interrupt:
    // the script stops at the next check. Only the host's own JavaScript
    // (entered through its watch, as every Engine call is, through the host
    // or not): once its program ended, the application's own on this
    // runtime (its `ctx.with` reading results, another context) runs
    // unstopped.
    let w = Rc::downgrade(&host);
    rt.set_interrupt_handler(Some(Box::new(move || {
        w.upgrade().is_some_and(|h| must_stop(&h))
    })));
    Ok(host)
}

impl QuickJsHost {
    /// A host on a new QuickJS runtime and context, with `argv` as
    /// `process.argv`, whose `process.exit` ends the OS process (as `tljs`
    /// needs). Not for an application's plugins, whose `process.exit(3)`
    /// would end the application: they use
    /// [`create_with`](Self::create_with)`(Options { argv, ..Default::default() })`,
    /// where `process.exit` ends only the script's program and
    /// [`Host::run`] returns its status (an application that keeps its own
    /// runtime uses [`install`]).
    ///
    /// ```
    /// let argv = vec!["tljs".to_owned(), "main.js".to_owned()];
    /// let host = timerloop_js::QuickJsHost::create(argv).unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// // The status of a normal end is returned (only `process.exit` ends the process).
    /// let src = "setTimeout(() => { process.exitCode = process.argv.length }, 1)";
    /// assert_eq!(host.run_main(&mut lp, "main.js", src), 2);
    /// ```
    ///
    /// # Errors
    ///
    /// If the runtime cannot be made or the prelude fails (a bug).
    pub fn create(argv: Vec<String>) -> Result<Rc<Self>, Thrown> {
        Self::create_with(Options {
            argv,
            exit_process: true,
            ..Options::default()
        })
    }

    /// A host on a new QuickJS runtime and context, set up by `options`.
    ///
    /// ```
    /// use timerloop_js::{Options, QuickJsHost};
    /// let host = QuickJsHost::create_with(Options { max_stack: Some(64 << 10), ..Default::default() })
    ///     .unwrap();
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// // Deep recursion is a RangeError, caught here by the script.
    /// let src = "function f() { return f() + 1 } try { f() } catch (e) { globalThis.r = e.name }";
    /// host.eval_main(&mut lp, "deep.js", src).unwrap();
    /// let r: String = host.context().with(|c| c.globals().get("r")).unwrap();
    /// assert_eq!(r, "RangeError");
    /// ```
    ///
    /// # Errors
    ///
    /// As [`QuickJsHost::create`].
    pub fn create_with(options: Options) -> Result<Rc<Self>, Thrown> {
        let rt = Runtime::new().map_err(|e| Thrown(e.to_string()))?;
        let ctx = Context::full(&rt).map_err(|e| Thrown(e.to_string()))?;
        install(&ctx, options)
    }

    /// The context the host runs on (a handle to the application's own
    /// context after [`install`]).
    ///
    /// ```
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let t: String = host.context().with(|c| c.eval("typeof setTimeout")).unwrap();
    /// assert_eq!(t, "function");
    /// ```
    pub fn context(&self) -> &Context {
        &self.engine().ctx
    }

    /// Runs the application's own JavaScript, `f`, as a top-level callback
    /// (as Node runs the main script): inside the loop's scope, so the
    /// globals reach `lp`, and with the ticks and microtasks it queued
    /// drained when it returns. Call [`Host::run`] afterwards to run the
    /// loop. `Ok(None)`: `f` threw and an `uncaughtException` listener
    /// took the exception, or the program has exited.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let host = timerloop_js::install(
    ///     &rquickjs::Context::full(&rquickjs::Runtime::new().unwrap()).unwrap(),
    ///     timerloop_js::Options::default(),
    /// )
    /// .unwrap();
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let n = host.enter(&mut lp, |ctx| ctx.eval::<i32, _>("6 * 7")).unwrap();
    /// assert_eq!(n, Some(42));
    /// ```
    ///
    /// # Errors
    ///
    /// The exception `f` threw ([`timerloop::Error::Uncaught`]) when no
    /// uncaught-error handler took it (no `uncaughtException` listener;
    /// with the application's own handler, that handler gets it and this
    /// is `Ok(None)`; if another host on the thread listens, its router
    /// reports it, ends this program and this is `Ok(None)` too);
    /// otherwise the program is not ended by it (see [`Host::run`]). Or, without running `f`, what else
    /// [`EventLoop::enter`] returns ([`timerloop::Error::ThreadExiting`],
    /// a failure kept from an earlier run).
    pub fn enter<T: 'static>(
        self: &Rc<Self>,
        lp: &mut EventLoop,
        f: impl for<'js> FnOnce(Ctx<'js>) -> rquickjs::Result<T>,
    ) -> Result<Option<T>, timerloop::Error> {
        let out = Rc::new(RefCell::new(None));
        let (h, o) = (self.clone(), out.clone());
        lp.enter(move |lp| {
            let v = h.callback(lp, f)?;
            *o.borrow_mut() = v;
            Ok::<(), BoxError>(())
        })?;
        Ok(out.borrow_mut().take())
    }

    /// Runs `f` (the application's JavaScript) from inside one of the
    /// loop's callbacks (an application timer, an I/O completion): inside
    /// the loop's scope, with the engine's jobs queued behind it. An
    /// exception is returned as the callback's error, for the loop's
    /// uncaught-error handling (`uncaughtException` listeners, else
    /// [`EventLoop::run`] fails). `Ok(None)`: the program has exited.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let host = timerloop_js::QuickJsHost::create_with(Default::default()).unwrap();
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = host.clone();
    /// lp.set_timeout(10, move |lp| {
    ///     h.callback(lp, |ctx| ctx.eval::<(), _>("setTimeout(() => process.exitCode = 3, 5)"))
    ///         .map(|_| ())
    /// });
    /// assert_eq!(host.run(&mut lp), 3);
    /// assert_eq!(lp.now(), 15);
    /// ```
    ///
    /// # Errors
    ///
    /// The exception `f` threw, formatted as Node prints it: the error
    /// displays the [`Thrown`], which is also its `source()`, and is marked
    /// as this host's, so that the loop gives it to this host's
    /// `uncaughtException` listeners (see [`Host::catch_uncaught`]); with
    /// none, [`Host::run`] ends this host's program with it, and the
    /// application's own [`EventLoop::run`] returns it without ending the
    /// program.
    pub fn callback<T>(
        self: &Rc<Self>,
        lp: &mut EventLoop,
        f: impl for<'js> FnOnce(Ctx<'js>) -> rquickjs::Result<T>,
    ) -> Result<Option<T>, BoxError> {
        let e = self.engine();
        self.js(lp, || {
            e.watch.run(Entry::Turn, || {
                e.ctx
                    .with(|c| f(c.clone()).map_err(|err| e.report(&c, err)))
            })
        })
    }
}

/// Node's (libuv's) errno of a write to a pipe whose reader is gone.
const EPIPE: i32 = -32;

impl QuickJs {
    /// Writes as [`Engine::write`], and tells the program's writes what
    /// Node's stream would: Node's errno, -32, for a pipe whose reader is
    /// gone (`EPIPE`), and 0 for a write made, given to the sink, or
    /// failed otherwise (ignored, as before: a socket's `ECONNRESET`
    /// too, where Node would raise it).
    /// The bytes need not be UTF-8: the sink, which takes text, gets
    /// them decoded with U+FFFD for what is not.
    fn write_checked(&self, stream: Stream, bytes: &[u8]) -> i32 {
        match &self.console {
            Some(sink) => {
                sink(stream, &String::from_utf8_lossy(bytes));
                0
            }
            None => match write_std(stream, bytes) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EPIPE,
                _ => 0,
            },
        }
    }

    /// Formats an exception as Node prints an uncaught one (without the
    /// source-location header Node puts first).
    fn describe<'js>(&self, ctx: &Ctx<'js>, v: Value<'js>) -> Thrown {
        *self.last_thrown.borrow_mut() = Some(Persistent::save(ctx, v.clone()));
        let text = self
            .inspect
            .clone()
            .and_then(|i| i.restore(ctx).ok())
            .and_then(|i| i.call::<_, String>((v.clone(),)).ok())
            .unwrap_or_else(|| format!("{v:?}"));
        if v.is_object() {
            // An error or any other object (an array, a function): Node
            // prints it as `util.inspect` shows it, with no hint.
            Thrown(text)
        } else {
            // A primitive: Node adds its `--trace-uncaught` hint. A symbol
            // it cannot print as text: an empty line.
            // A BigInt as its digits (`10`, where inspect says `10n`).
            let text = if v.is_symbol() {
                ""
            } else if v.is_big_int() {
                text.strip_suffix('n').unwrap_or(&text)
            } else {
                text.as_str()
            };
            Thrown(format!(
                "{text}\n(Use `node --trace-uncaught ...` to show where the exception was thrown)"
            ))
        }
    }

    /// Out of memory, QuickJS cannot make even the error object and leaves
    /// `null` as the exception (which it then cannot tell from `throw
    /// null`; the memory is freed by the time the host looks): with a heap
    /// limit set, say so. (Outside `ctx.with`, which holds the runtime.)
    fn oom<T>(&self, r: Result<T, Thrown>) -> Result<T, Thrown> {
        r.map_err(|t| match self.max_memory {
            Some(limit) if t.0.starts_with("null\n") => Thrown(format!(
                "InternalError: out of memory (the engine's heap limit, {limit} bytes, was \
                 reached; QuickJS could not allocate the error, so this is `null`, as a \
                 `throw null` would be)"
            )),
            _ => t,
        })
    }

    fn report<'js>(&self, ctx: &Ctx<'js>, e: rquickjs::Error) -> Thrown {
        if e.is_exception() {
            self.thrown(ctx, ctx.catch())
        } else {
            Thrown(e.to_string())
        }
    }

    /// The exception that came out of the JavaScript the host ran: an
    /// uncaught one as Node prints it, or the watch's interrupt.
    fn thrown<'js>(&self, ctx: &Ctx<'js>, v: Value<'js>) -> Thrown {
        match self.watch.fired() {
            Some(why) => self.interrupt_report(why, v),
            None => self.describe(ctx, v),
        }
    }

    /// The watch stopped the program: why, then the stack QuickJS took
    /// where it stopped, read as it is (`inspect` would run the program's
    /// JavaScript again).
    fn interrupt_report(&self, why: crate::watch::Fired, v: Value<'_>) -> Thrown {
        let stack = v
            .as_object()
            .and_then(|o| o.get::<_, String>("stack").ok())
            .unwrap_or_default();
        let frames: String = stack
            .lines()
            .filter(|l| l.trim_start().starts_with("at "))
            .map(|l| format!("\n{l}"))
            .collect();
        let t = Thrown(format!("{}{frames}", why.headline()));
        *self.interrupt_report.borrow_mut() = Some(t.clone());
        t
    }
}

impl QuickJs {
    /// Runs `f` in the context as `entry` of the current turn (counted by
    /// the watch), an exception it throws reported as the host reports
    /// one.
    fn js<T>(
        &self,
        entry: Entry,
        f: impl for<'js> FnOnce(&Ctx<'js>) -> rquickjs::Result<T>,
    ) -> Result<T, Thrown> {
        self.watch.run(entry, || {
            self.ctx.with(|c| f(&c).map_err(|e| self.report(&c, e)))
        })
    }
}

impl Engine for QuickJs {
    fn eval_main(&self, name: &str, source: &str) -> Result<(), Thrown> {
        self.js(Entry::Turn, |c| {
            let Some(set) = self.set_main.clone() else {
                return Ok(());
            };
            let set = set.restore(c)?;
            // As Node's: the entry module is `require.main`, and the
            // wrapper is called with `this` = module.exports (the
            // prelude's `startMain` makes them), then exports, require,
            // module, __filename, __dirname.
            let args: rquickjs::Array = set.call((name, false))?;
            let f = compile_module(c, name, source)?;
            let arg = |i: usize| args.get::<Value>(i);
            let this = This(arg(0)?);
            f.call::<_, ()>((this, arg(1)?, arg(2)?, arg(3)?, arg(4)?, arg(5)?))?;
            set.call::<_, ()>((name, true))
        })
        .map_err(|t| self.oom::<()>(Err(t)).unwrap_err())
    }

    fn emit_process(&self, event: &str, code: Option<i32>) -> Result<(), Thrown> {
        let Some(f) = self.emit_exit.clone() else {
            return Ok(());
        };
        self.js(Entry::Turn, |c| {
            f.restore(c).and_then(|f| f.call::<_, ()>((event, code)))
        })
    }

    fn emit_uncaught(&self, message: &str) -> Result<bool, Thrown> {
        let Some(f) = self.emit_uncaught.clone() else {
            return Ok(false);
        };
        let thrown = self.last_thrown.borrow_mut().take();
        let origin = if self.last_was_rejection.replace(false) {
            "unhandledRejection"
        } else {
            "uncaughtException"
        };
        self.watch.run(Entry::Drain, || {
            self.ctx.with(|c| {
                let err = match thrown.map(|t| t.restore(&c)) {
                    Some(Ok(v)) => v,
                    _ => rquickjs::String::from_str(c.clone(), message)
                        .map(|s| s.into_value())
                        .map_err(|e| Thrown(e.to_string()))?,
                };
                f.restore(&c)
                    .and_then(|f| f.call::<_, bool>((err, origin)))
                    .map_err(|e| self.report(&c, e))
            })
        })
    }

    fn dispatch(&self, kind: Kind, id: u32) -> Result<(), Thrown> {
        let Some(d) = self.dispatch.clone() else {
            return Ok(());
        };
        // A tick drains after the macrotask that queued it.
        let entry = match kind {
            Kind::Tick => Entry::Drain,
            Kind::Timeout | Kind::Immediate | Kind::Io | Kind::Signal => Entry::Turn,
        };
        self.oom(self.js(entry, |c| {
            d.restore(c)
                .and_then(|d| d.call::<_, ()>((kind as u32, id)))
        }))
    }

    fn has_pending_job(&self) -> bool {
        self.rt.is_job_pending()
    }

    fn run_pending_job(&self) -> Result<bool, Thrown> {
        let r = self.watch.run(Entry::Drain, || {
            self.rt.execute_pending_job().map_err(|e| {
                e.0.with(|c| {
                    let v = c.catch();
                    self.thrown(&c, v)
                })
            })
        });
        self.oom(r)
    }

    fn emit_rejections_handled(&self) -> Result<(), Thrown> {
        let Some(f) = self.emit_handled.clone() else {
            return Ok(());
        };
        loop {
            let next = {
                let mut list = self.handled_late.borrow_mut();
                if list.is_empty() {
                    return Ok(());
                }
                list.remove(0)
            };
            self.js(Entry::Drain, |c| {
                let Ok(p) = next.0.restore(c) else {
                    return Ok(());
                };
                f.clone()
                    .restore(c)
                    .and_then(|f| f.call::<_, ()>((p, next.1)))
            })?;
        }
    }

    fn take_unhandled_rejection(&self) -> Option<Thrown> {
        if self.batch.borrow().is_empty() {
            let now = std::mem::take(&mut *self.unhandled.borrow_mut());
            self.batch.borrow_mut().extend(now);
        }
        loop {
            let first = self.batch.borrow_mut().pop_front()?;
            self.listener_threw.set(false);
            match self
                .watch
                .run(Entry::Drain, || self.report_rejection(first))
            {
                Ok(true) => {}
                Ok(false) => return None,
                Err(t) => {
                    if self.listener_threw.get() {
                        // Node's loop leaves with the exception: the rest
                        // of its batch is never reported.
                        self.batch.borrow_mut().clear();
                    }
                    return Some(t);
                }
            }
        }
    }

    fn rejection_batch_pending(&self) -> bool {
        !self.batch.borrow().is_empty()
    }

    fn interrupted(&self) -> Option<Thrown> {
        let why = self.watch.fired()?;
        let report = self.interrupt_report.borrow().clone();
        Some(report.unwrap_or_else(|| Thrown(why.headline())))
    }

    fn write(&self, stream: Stream, text: &str) {
        self.write_checked(stream, text.as_bytes());
    }

    fn exit_code(&self) -> Option<i32> {
        // What the prelude's setter recorded, not a read of
        // `process.exitCode`: the value was validated and truncated to
        // int32 as Node does (`2 ** 31` is -2147483648, status 0).
        self.exit_status.get()
    }
}

/// The reported rejections' ids, in a `WeakMap` keyed by promise, as
/// Node keeps them (`maybeUnhandledPromises`): an entry goes with its
/// promise, and nothing shows on the promise itself (frozen or not).
///
/// The map and `WeakMap.prototype`'s `get`, `set` and `delete` are taken
/// at start-up, before any program runs, and called with the map as
/// `this`: built-ins the program cannot replace, which call none of its
/// code (a key is an object, never converted), so the rejection tracker
/// runs nothing of the program's.
struct Reported {
    map: Persistent<Object<'static>>,
    get: Persistent<Function<'static>>,
    set: Persistent<Function<'static>>,
    delete: Persistent<Function<'static>>,
}

impl Reported {
    fn new(c: &Ctx<'_>) -> Result<Self, Thrown> {
        let made = c
            .eval::<rquickjs::Array, _>(
                "(() => { const p = WeakMap.prototype; return [new WeakMap(), p.get, p.set, p.delete] })()",
            )
            .and_then(|a| {
                Ok(Reported {
                    map: Persistent::save(c, a.get::<Object>(0)?),
                    get: Persistent::save(c, a.get::<Function>(1)?),
                    set: Persistent::save(c, a.get::<Function>(2)?),
                    delete: Persistent::save(c, a.get::<Function>(3)?),
                })
            });
        made.map_err(|e| Thrown(format!("tljs prelude: {e}: {:?}", c.catch())))
    }

    /// The map and one of its methods; `None` only if the runtime is gone.
    fn with<'js>(
        &self,
        c: &Ctx<'js>,
        f: &Persistent<Function<'static>>,
    ) -> Option<(This<Object<'js>>, Function<'js>)> {
        let map = self.map.clone().restore(c).ok()?;
        Some((This(map), f.clone().restore(c).ok()?))
    }

    fn set<'js>(&self, c: &Ctx<'js>, promise: Value<'js>, id: u32) {
        if let Some((map, set)) = self.with(c, &self.set) {
            cleared(c, set.call::<_, Value>((map, promise, id)));
        }
    }

    fn take<'js>(&self, c: &Ctx<'js>, promise: &Value<'js>) -> Option<u32> {
        let (map, get) = self.with(c, &self.get)?;
        let id = cleared(c, get.call::<_, Value>((map, promise.clone())))?.as_number()?;
        let (map, delete) = self.with(c, &self.delete)?;
        cleared(c, delete.call::<_, Value>((map, promise.clone())));
        Some(id as u32)
    }
}

/// A call's value; its error (none is expected from these built-ins,
/// whose key is a promise) cleared, not left pending for the program.
fn cleared<'js, T>(c: &Ctx<'js>, r: rquickjs::Result<T>) -> Option<T> {
    r.map_err(|_| c.catch()).ok()
}

impl QuickJs {
    /// One unhandled rejection, as Node 20's `throw` mode treats it: to
    /// `unhandledRejection` listeners if there are any (`Ok(true)`: look
    /// at the next), else an uncaught exception (`Err`). `Ok(false)`: its
    /// values are gone.
    fn report_rejection(&self, (promise, reason, id): Rejection) -> Result<bool, Thrown> {
        self.ctx.with(|c| {
            let Ok(reason) = reason.restore(&c) else {
                return Ok(false);
            };
            // Reported, whoever takes it, before anyone does (Node marks it
            // `warned` before it dispatches): a handler added later, even
            // by the `unhandledRejection` listener itself or after an
            // `uncaughtException` listener took it, is a `rejectionHandled`.
            self.mark_reported(&c, promise.clone(), id);
            if let (Some(f), Ok(p)) = (self.emit_rejection.clone(), promise.restore(&c)) {
                let heard = f
                    .restore(&c)
                    .and_then(|f| f.call::<_, bool>((reason.clone(), p)))
                    .map_err(|e| {
                        self.listener_threw.set(true);
                        self.report(&c, e)
                    })?;
                if heard {
                    return Ok(true);
                }
            }
            Err(self.rejection_error(&c, reason))
        })
    }

    /// Records a reported rejection: a handler added later finds its id
    /// (a `rejectionHandled`).
    fn mark_reported(&self, c: &Ctx<'_>, promise: Persistent<Value<'static>>, id: u32) {
        if let (Some(r), Ok(p)) = (&self.reported, promise.restore(c)) {
            r.set(c, p, id);
        }
    }

    /// The id of a reported rejection whose promise now has a handler,
    /// forgotten; `None` if it was not reported.
    fn take_reported<'js>(&self, c: &Ctx<'js>, promise: &Value<'js>) -> Option<u32> {
        self.reported.as_ref()?.take(c, promise)
    }

    /// The uncaught exception an unhandled rejection becomes, as Node
    /// prints it.
    fn rejection_error<'js>(&self, c: &Ctx<'js>, reason: Value<'js>) -> Thrown {
        self.last_was_rejection.set(true);
        // Node's `UnhandledPromiseRejection`, which `uncaughtException`
        // listeners get: its message shows the reason as V8's
        // `NoSideEffectsToString` does. An error-like reason is reported
        // as itself; Node's test (an own `stack`), not whether the value
        // is an engine Error, decides: the prelude's `rejectionError`.
        let made = self
            .rejection_error
            .clone()
            .and_then(|f| f.restore(c).ok())
            .and_then(|f| match f.call::<_, Value>((reason.clone(),)) {
                // Null for an error-like reason (Node's isErrorLike: an
                // own `stack`), which is reported as itself.
                Ok(err) => err.into_object(),
                Err(_) => {
                    let _ = c.catch(); // the reason's own failure: the old text below
                    None
                }
            });
        let Some(err) = made else {
            return self.describe(c, reason);
        };
        let message: String = err.get("message").unwrap_or_default();
        *self.last_thrown.borrow_mut() = Some(Persistent::save(c, err.into_value()));
        Thrown(format!(
            "UnhandledPromiseRejection: {message} {{\n  code: 'ERR_UNHANDLED_REJECTION'\n}}"
        ))
    }
}
