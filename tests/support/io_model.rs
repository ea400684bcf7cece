//! A reference model of the I/O API (`EventLoop::insert_io`,
//! `set_io_interest`, `close_io`, `remove_io`, `io_source`, `unref_io`,
//! `ref_io`), run on a virtual-clock loop over a sequence of operations on
//! real `mio::net::UnixStream` pairs (the loop holds one end, the test the
//! other), with timers interleaved. Shared by `tests/io_model.rs`
//! (proptest) and the `io` fuzz target (`fuzz/src/lib.rs`).
//!
//! Checked:
//!
//! - **No callback for a closed or removed source**, even when another
//!   callback of the same poll batch (or a timer) closed it.
//! - **Typed errors**: every call on a handle returns what the model says:
//!   `Ok` while registered, [`IoError::Stale`] once closed or removed,
//!   [`IoError::Busy`] for `io_source`/`remove_io` from the source's own
//!   callback, [`IoError::WrongType`] for the wrong source type (nothing
//!   removed), [`IoError::ForeignLoop`] for another loop's handle;
//!   `io_is_active` agrees.
//! - **Nothing lost**: after a run step of a live loop, every byte the
//!   peer wrote to a registered source watched for `READABLE` has been
//!   read by its callback (the callback reads until `WouldBlock`).
//! - **The loop exits** once every source is closed, removed or unrefed
//!   (`run()` returns, `is_alive()` is false), `stats().io_sources` counts
//!   the registered ones, and closing the rest leaves zero.
//! - No panic anywhere.
#![allow(dead_code)] // each user calls a different subset

use std::cell::RefCell;
use std::fmt::Write as _;
use std::io::{ErrorKind, Read, Write};
use std::rc::Rc;
use std::time::Duration;

use timerloop::mio::{Interest, net::UnixStream};
use timerloop::{EventLoop, IoError, IoHandle};

/// What a source's callback does after reading what is there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CbAction {
    Nothing,
    /// `close_io` of its own handle.
    CloseSelf,
    /// `close_io` of another source (index mod the number made).
    CloseOther(u8),
    /// `set_io_interest` of its own handle.
    Interest(u8),
    UnrefSelf,
    /// `remove_io` and `io_source` of its own handle: `Busy`.
    TouchSelf,
    /// Writes a byte to another source's peer.
    WriteOther(u8),
}

/// What a timer's callback does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerAction {
    Close(u8),
    Write(u8),
    Unref(u8),
}

/// One operation; source indices pick among all sources made so far (mod
/// their number), closed ones included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOp {
    /// A new pair; the loop's end registered with this interest (0:
    /// readable, 1: writable, 2: both) and callback action.
    Insert(u8, CbAction),
    /// The peer writes this many bytes (1..).
    Write(u8, u8),
    /// The peer is dropped (the source sees end of file).
    PeerClose(u8),
    Close(u8),
    Remove(u8),
    /// `remove_io` with the wrong type: `WrongType`, nothing removed.
    RemoveWrongType(u8),
    Source(u8),
    SetInterest(u8, u8),
    Unref(u8),
    Ref(u8),
    /// A call with a handle of another loop: `ForeignLoop`.
    Foreign,
    /// `set_timeout` of this many ms with an action.
    Timer(u8, TimerAction),
    RunNowait,
    /// `run_once` when a timer is pending (so it cannot wait on I/O
    /// forever), else `run_nowait`.
    RunOnce,
}

fn interest(b: u8) -> Interest {
    match b % 3 {
        0 => Interest::READABLE,
        1 => Interest::WRITABLE,
        _ => Interest::READABLE | Interest::WRITABLE,
    }
}

/// Decodes fuzz bytes: one operation per byte, with argument bytes after
/// it where needed. The first byte also says how the end goes (see
/// [`exec`]).
pub fn decode(data: &[u8]) -> (Vec<IoOp>, u64) {
    let end = u64::from(data.first().copied().unwrap_or(0)) * 0x0101_0101_0101_0101;
    let mut ops = Vec::new();
    let mut it = data.iter().copied();
    while let Some(b) = it.next() {
        let mut arg = || it.next().unwrap_or(0);
        ops.push(match b % 20 {
            0 | 1 => {
                let i = arg();
                let a = arg();
                let action = match a % 8 {
                    0 | 1 => CbAction::Nothing,
                    2 => CbAction::CloseSelf,
                    3 => CbAction::CloseOther(a / 8),
                    4 => CbAction::Interest(a / 8),
                    5 => CbAction::UnrefSelf,
                    6 => CbAction::TouchSelf,
                    _ => CbAction::WriteOther(a / 8),
                };
                IoOp::Insert(i, action)
            }
            2..=4 => IoOp::Write(arg(), 1 + arg() % 64),
            5 => IoOp::PeerClose(arg()),
            6 => IoOp::Close(arg()),
            7 => IoOp::Remove(arg()),
            8 => IoOp::RemoveWrongType(arg()),
            9 => IoOp::Source(arg()),
            10 => IoOp::SetInterest(arg(), arg()),
            11 => IoOp::Unref(arg()),
            12 => IoOp::Ref(arg()),
            13 => IoOp::Foreign,
            14 => {
                let ms = arg() % 30;
                let a = arg();
                let action = match a % 3 {
                    0 => TimerAction::Close(a / 3),
                    1 => TimerAction::Write(a / 3),
                    _ => TimerAction::Unref(a / 3),
                };
                IoOp::Timer(ms, action)
            }
            15..=17 => IoOp::RunNowait,
            _ => IoOp::RunOnce,
        });
    }
    (ops, end)
}

/// The model of one source.
struct Src {
    handle: IoHandle,
    registered: bool,
    refed: bool,
    interest: Interest,
    peer: Option<UnixStream>,
    written: usize,
    read: usize,
}

#[derive(Default)]
struct Shared {
    srcs: Vec<Src>,
    timers_pending: usize,
    /// A source was closed or removed since the last run step (outside
    /// it, or in an I/O callback, before the step's closing phase).
    closing: bool,
    /// One was closed by a timer's callback, after the closing phase of
    /// its step: still closing after it.
    closing_late: bool,
    /// A timer's callback is running.
    in_timer: bool,
    errors: String,
}

type Sh = Rc<RefCell<Shared>>;

fn err(sh: &Sh, s: String) {
    let _ = writeln!(sh.borrow_mut().errors, "  {s}");
}

fn pick(sh: &Sh, i: u8) -> Option<usize> {
    let n = sh.borrow().srcs.len();
    (n > 0).then(|| usize::from(i) % n)
}

/// Compares an API result with the model's expectation.
fn expect<T>(sh: &Sh, what: &str, k: usize, got: &Result<T, IoError>, want_ok: bool) {
    match (got, want_ok) {
        (Ok(_), true) | (Err(IoError::Stale), false) => {}
        (Ok(_), false) => err(
            sh,
            format!("{what} of source {k}: Ok, the model says Stale"),
        ),
        (Err(e), _) => err(
            sh,
            format!("{what} of source {k}: {e:?}, the model says ok={want_ok}"),
        ),
    }
}

/// Marks a timer's callback as running for as long as it lives.
struct InTimer(Sh);

impl Drop for InTimer {
    fn drop(&mut self) {
        self.0.borrow_mut().in_timer = false;
    }
}

/// Source `k` is closed or removed: its peer goes too, so that no write
/// ever meets a closed socket (`EPIPE`, and `SIGPIPE` in a fuzz binary,
/// whose `main` is libFuzzer's and does not ignore it).
fn gone(sh: &Sh, k: usize) {
    let peer = {
        let mut g = sh.borrow_mut();
        // Its handle is closing until the next closing phase: the loop is
        // alive till then, as libuv's `uv__loop_alive` counts closing
        // handles. A timer's callback runs after its iteration's closing
        // phase, so its close outlasts the run step.
        if g.srcs[k].registered {
            if g.in_timer {
                g.closing_late = true;
            } else {
                g.closing = true;
            }
        }
        let s = &mut g.srcs[k];
        s.registered = false;
        s.peer.take()
    };
    drop(peer);
}

fn close(lp: &mut EventLoop, sh: &Sh, k: usize) {
    let (h, reg) = {
        let s = &sh.borrow().srcs[k];
        (s.handle, s.registered)
    };
    let r = lp.close_io(h);
    expect(sh, "close_io", k, &r, reg);
    gone(sh, k);
    if lp.io_is_active(h) {
        err(sh, format!("source {k} active after close_io"));
    }
}

fn unref(lp: &mut EventLoop, sh: &Sh, k: usize, refed: bool) {
    let (h, reg) = {
        let s = &sh.borrow().srcs[k];
        (s.handle, s.registered)
    };
    let r = if refed { lp.ref_io(h) } else { lp.unref_io(h) };
    expect(sh, if refed { "ref_io" } else { "unref_io" }, k, &r, reg);
    if reg {
        sh.borrow_mut().srcs[k].refed = refed;
    }
}

fn write_peer(sh: &Sh, k: usize, n: u8) {
    let mut g = sh.borrow_mut();
    let s = &mut g.srcs[k];
    let Some(peer) = &mut s.peer else { return };
    let buf = vec![b'x'; usize::from(n)];
    match peer.write(&buf) {
        Ok(m) => s.written += m,
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Err(e) => {
            drop(g);
            err(sh, format!("peer {k} write: {e}"));
        }
    }
}

fn set_interest(lp: &mut EventLoop, sh: &Sh, k: usize, b: u8) {
    let (h, reg) = {
        let s = &sh.borrow().srcs[k];
        (s.handle, s.registered)
    };
    let i = interest(b);
    let r = lp.set_io_interest(h, i);
    expect(sh, "set_io_interest", k, &r, reg);
    if reg {
        sh.borrow_mut().srcs[k].interest = i;
    }
}

fn insert(lp: &mut EventLoop, sh: &Sh, b: u8, action: CbAction) {
    let (a, peer) = match UnixStream::pair() {
        Ok(p) => p,
        Err(e) => return err(sh, format!("socketpair: {e}")),
    };
    let k = sh.borrow().srcs.len();
    let i = interest(b);
    let s2 = sh.clone();
    let cb = move |lp: &mut EventLoop, src: &mut UnixStream, ev: timerloop::IoEvent| {
        let sh = &s2;
        {
            let g = sh.borrow();
            let me = &g.srcs[k];
            if !me.registered {
                drop(g);
                err(
                    sh,
                    format!("callback of source {k} after it was closed or removed"),
                );
                return;
            }
            if me.handle != ev.handle {
                drop(g);
                err(sh, format!("callback of source {k} with another handle"));
                return;
            }
        }
        let mut buf = [0u8; 256];
        loop {
            match src.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => sh.borrow_mut().srcs[k].read += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
                Err(e) => {
                    err(sh, format!("source {k} read: {e}"));
                    break;
                }
            }
        }
        match action {
            CbAction::Nothing => {}
            CbAction::CloseSelf => close(lp, sh, k),
            CbAction::CloseOther(j) => {
                if let Some(j) = pick(sh, j) {
                    close(lp, sh, j);
                }
            }
            CbAction::Interest(b) => set_interest(lp, sh, k, b),
            CbAction::UnrefSelf => unref(lp, sh, k, false),
            CbAction::TouchSelf => {
                let h = ev.handle;
                if !matches!(lp.io_source::<UnixStream>(h), Err(IoError::Busy)) {
                    err(
                        sh,
                        format!("io_source of source {k} in its callback: not Busy"),
                    );
                }
                if !matches!(lp.remove_io::<UnixStream>(h), Err(IoError::Busy)) {
                    err(
                        sh,
                        format!("remove_io of source {k} in its callback: not Busy"),
                    );
                }
            }
            CbAction::WriteOther(j) => {
                if let Some(j) = pick(sh, j) {
                    write_peer(sh, j, 1);
                }
            }
        }
    };
    match lp.insert_io(a, i, cb) {
        Ok(handle) => sh.borrow_mut().srcs.push(Src {
            handle,
            registered: true,
            refed: true,
            interest: i,
            peer: Some(peer),
            written: 0,
            read: 0,
        }),
        Err(e) => err(sh, format!("insert_io: {}", e.error)),
    }
}

fn step(lp: &mut EventLoop, other: &mut EventLoop, foreign: IoHandle, sh: &Sh, op: IoOp) {
    let handle = |k: usize| {
        let s = &sh.borrow().srcs[k];
        (s.handle, s.registered)
    };
    match op {
        IoOp::Insert(b, action) => insert(lp, sh, b, action),
        IoOp::Write(i, n) => {
            if let Some(k) = pick(sh, i) {
                write_peer(sh, k, n);
            }
        }
        IoOp::PeerClose(i) => {
            if let Some(k) = pick(sh, i) {
                sh.borrow_mut().srcs[k].peer = None;
            }
        }
        IoOp::Close(i) => {
            if let Some(k) = pick(sh, i) {
                close(lp, sh, k);
            }
        }
        IoOp::Remove(i) => {
            let Some(k) = pick(sh, i) else { return };
            let (h, reg) = handle(k);
            let r = lp.remove_io::<UnixStream>(h);
            expect(sh, "remove_io", k, &r, reg);
            drop(r);
            gone(sh, k);
            if lp.io_is_active(h) {
                err(sh, format!("source {k} active after remove_io"));
            }
        }
        IoOp::RemoveWrongType(i) => {
            let Some(k) = pick(sh, i) else { return };
            let (h, reg) = handle(k);
            let r = lp.remove_io::<timerloop::mio::net::TcpStream>(h);
            match (r, reg) {
                (Err(IoError::WrongType), true) | (Err(IoError::Stale), false) => {}
                (r, _) => err(
                    sh,
                    format!("remove_io of the wrong type, source {k} (registered {reg}): {r:?}"),
                ),
            }
            if lp.io_is_active(h) != reg {
                err(
                    sh,
                    format!("source {k}: io_is_active disagrees after a wrong-type remove"),
                );
            }
        }
        IoOp::Source(i) => {
            let Some(k) = pick(sh, i) else { return };
            let (h, reg) = handle(k);
            let r = lp.io_source::<UnixStream>(h).map(drop);
            expect(sh, "io_source", k, &r, reg);
        }
        IoOp::SetInterest(i, b) => {
            if let Some(k) = pick(sh, i) {
                set_interest(lp, sh, k, b);
            }
        }
        IoOp::Unref(i) | IoOp::Ref(i) => {
            if let Some(k) = pick(sh, i) {
                unref(lp, sh, k, matches!(op, IoOp::Ref(_)));
            }
        }
        IoOp::Foreign => {
            let r = lp.set_io_interest(foreign, Interest::READABLE);
            if !matches!(r, Err(IoError::ForeignLoop)) {
                err(
                    sh,
                    format!("set_io_interest with another loop's handle: {r:?}"),
                );
            }
            if lp.io_is_active(foreign) {
                err(sh, "another loop's handle is active here".to_string());
            }
            if !other.io_is_active(foreign) {
                err(sh, "the other loop lost its source".to_string());
            }
        }
        IoOp::Timer(ms, action) => {
            sh.borrow_mut().timers_pending += 1;
            let s2 = sh.clone();
            lp.set_timeout(u64::from(ms), move |lp| {
                let sh = &s2;
                {
                    let mut g = sh.borrow_mut();
                    g.timers_pending -= 1;
                    g.in_timer = true;
                }
                let _in_timer = InTimer(sh.clone());
                match action {
                    TimerAction::Close(j) => {
                        if let Some(k) = pick(sh, j) {
                            close(lp, sh, k);
                        }
                    }
                    TimerAction::Write(j) => {
                        if let Some(k) = pick(sh, j) {
                            write_peer(sh, k, 3);
                        }
                    }
                    TimerAction::Unref(j) => {
                        if let Some(k) = pick(sh, j) {
                            unref(lp, sh, k, false);
                        }
                    }
                }
            });
        }
        IoOp::RunNowait | IoOp::RunOnce => {
            // The model says whether the loop is alive (a pending timer, a
            // registered refed source), and the loop must agree: a read
            // check gated on the loop's own answer would go quiet exactly
            // when a refed source failed to keep it alive.
            let alive = {
                let g = sh.borrow();
                g.timers_pending > 0 || g.closing || g.srcs.iter().any(|s| s.registered && s.refed)
            };
            if lp.is_alive() != alive {
                err(
                    sh,
                    format!("{op:?}: is_alive() = {}, model {alive}", lp.is_alive()),
                );
            }
            let before = snapshot(sh);
            let once = op == IoOp::RunOnce && sh.borrow().timers_pending > 0;
            let r = if once { lp.run_once() } else { lp.run_nowait() };
            // The step's closing phase closed them; closes made by its
            // timers' callbacks, after that phase, wait for the next.
            {
                let mut g = sh.borrow_mut();
                g.closing = std::mem::take(&mut g.closing_late);
            }
            if let Err(e) = r {
                err(sh, format!("{op:?}: {e}"));
            }
            if alive {
                check_read(sh, &before);
            }
        }
    }
}

/// Each source's registration, interest and bytes written so far.
fn snapshot(sh: &Sh) -> Vec<(bool, Interest, usize)> {
    let g = sh.borrow();
    g.srcs
        .iter()
        .map(|s| (s.registered, s.interest, s.written))
        .collect()
}

/// After a run step of a live loop: every byte written to the peer of a
/// source that was registered and watched for `READABLE` before the step
/// (and still is, with the same interest) was read by its callback. Bytes
/// written during the step (by callbacks) may wait for the next poll.
fn check_read(sh: &Sh, before: &[(bool, Interest, usize)]) {
    let mut bad = Vec::new();
    for (k, (s, &(reg, interest, written))) in sh.borrow().srcs.iter().zip(before).enumerate() {
        let watched = reg && interest.is_readable() && s.registered && s.interest == interest;
        if watched && s.read < written {
            bad.push(format!(
                "source {k}: {written} bytes written before the run step, {} read",
                s.read
            ));
        }
    }
    for b in bad {
        err(sh, b);
    }
}

/// Runs `ops`, then ends the loop: each source still registered is closed
/// or unrefed (as `end` says, bit by bit); `run()` must return with the
/// loop not alive. Every violation is described in the error.
pub fn exec(ops: &[IoOp], end: u64) -> Result<(), String> {
    let sh: Sh = Rc::default();
    let mut lp = EventLoop::with_virtual_clock();
    // Socketpair bytes arrive at once: no grace needed before time jumps.
    lp.set_io_grace(Duration::ZERO);
    let mut other = EventLoop::with_virtual_clock();
    let (fa, _fb) = UnixStream::pair().map_err(|e| e.to_string())?;
    let foreign = other
        .insert_io(fa, Interest::READABLE, |_, _, _| {})
        .map_err(|e| e.error.to_string())?;
    let fail = |sh: &Sh, at: &str| {
        let e = &sh.borrow().errors;
        (!e.is_empty()).then(|| format!("{at} of {ops:?} (end {end:#x}):\n{e}"))
    };
    for (i, &op) in ops.iter().enumerate() {
        step(&mut lp, &mut other, foreign, &sh, op);
        if let Some(e) = fail(&sh, &format!("after op {i} {op:?}")) {
            return Err(e);
        }
    }
    let n = sh.borrow().srcs.len();
    for k in 0..n {
        if !sh.borrow().srcs[k].registered {
            continue;
        }
        if end >> (k % 64) & 1 == 1 {
            close(&mut lp, &sh, k);
        } else {
            unref(&mut lp, &sh, k, false);
        }
    }
    if let Err(e) = lp.run() {
        err(&sh, format!("the final run: {e}"));
    }
    if lp.is_alive() {
        err(&sh, "alive after the final run".to_string());
    }
    let registered = sh.borrow().srcs.iter().filter(|s| s.registered).count();
    if lp.stats().io_sources != registered {
        err(
            &sh,
            format!(
                "stats().io_sources {} with {registered} registered",
                lp.stats().io_sources
            ),
        );
    }
    for k in 0..n {
        if sh.borrow().srcs[k].registered {
            close(&mut lp, &sh, k);
        }
    }
    if let Err(e) = lp.run() {
        err(&sh, format!("the run after closing all: {e}"));
    }
    if lp.stats().io_sources != 0 {
        err(&sh, format!("{} sources left", lp.stats().io_sources));
    }
    other.close_io(foreign).map_err(|e| e.to_string())?;
    match fail(&sh, "at the end") {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
