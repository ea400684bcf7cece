//! A reference model of the executor (`src/task`) and the timer futures
//! (`src/time`: `sleep`, `Sleep::reset`, `interval`, `timeout`) on a
//! virtual-clock loop, run over a sequence of operations. Shared by
//! `tests/executor_model.rs` (proptest) and the `tasks` fuzz target
//! (`fuzz/src/lib.rs`).
//!
//! Each task is a probe future whose shared state the test drives from
//! outside: finish, reset its sleep, drop its timer; its stored waker is
//! woken on the loop's thread or from another thread; its `JoinHandle`
//! is aborted or dropped. Checked:
//!
//! - **No poll after the end**: a probe is never polled after it returned
//!   `Ready` or after its task was aborted; an aborted task's future is
//!   dropped by the next run step, a completed one at once; its
//!   `JoinHandle` is finished at once on an `abort` made between run
//!   steps (away from its loop, as here) and yields `Err(cancelled)`, a
//!   completed task's yields `Ok`.
//! - **Every wake polls**: after any run step, every task woken since its
//!   latest poll (same thread or another, by hand or by a timer) that is
//!   neither done nor aborted has been polled.
//! - **Timers**: a sleep or interval tick never completes before its
//!   deadline in loop time; while the clock moves only when the loop waits
//!   (no `advance`), exactly on it; interval ticks are at least a period
//!   apart; a timeout fails only once its duration has passed; a refed
//!   timer keeps the loop alive, so after `run()` returns no task holds a
//!   live timer.
//! - After the loop is dropped, every task's future has been dropped.
#![allow(dead_code)] // each user calls a different subset

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use timerloop::EventLoop;
use timerloop::task::JoinHandle;
use timerloop::time::{self, Instant, Interval, Sleep};

/// What a spawned task does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Pending until finished by hand.
    Gate,
    /// Sleeps this many ms (1..), then completes.
    Sleep(u8),
    /// Ticks an interval of this period (1.. ms) this many times (1..).
    Interval(u8, u8),
    /// A gate under `time::timeout` of this many ms.
    Timeout(u8),
}

/// One operation; task indices pick among all tasks spawned so far (mod
/// their number), finished ones included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecOp {
    Spawn(Kind),
    /// Wakes the task's latest waker on this thread.
    Wake(u8),
    /// Wakes it from another thread.
    WakeRemote(u8),
    /// Asks the task to complete at its next poll, and wakes it.
    Finish(u8),
    /// Resets the task's sleep to this many ms from its next poll, and
    /// wakes it.
    Reset(u8, u8),
    /// Asks the task to drop its timer at its next poll, and wakes it.
    DropTimer(u8),
    /// `JoinHandle::abort`.
    Abort(u8),
    /// Drops the `JoinHandle` (detaches the task).
    DropHandle(u8),
    RunNowait,
    RunOnce,
    /// `VirtualClock::advance` by this many ms, then `run_nowait`.
    Advance(u8),
    /// `run()` to the end.
    Run,
}

/// Decodes fuzz bytes: one operation per byte, with argument bytes
/// after it where needed.
pub fn decode(data: &[u8]) -> Vec<ExecOp> {
    let mut ops = Vec::new();
    let mut it = data.iter().copied();
    while let Some(b) = it.next() {
        let mut arg = || it.next().unwrap_or(0);
        ops.push(match b % 20 {
            0 => ExecOp::Spawn(Kind::Gate),
            1 => ExecOp::Spawn(Kind::Sleep(1 + arg() % 40)),
            2 => ExecOp::Spawn(Kind::Interval(1 + arg() % 20, 1 + arg() % 5)),
            3 => ExecOp::Spawn(Kind::Timeout(1 + arg() % 40)),
            4 | 5 => ExecOp::Wake(arg()),
            6 => ExecOp::WakeRemote(arg()),
            7 | 8 => ExecOp::Finish(arg()),
            9 => ExecOp::Reset(arg(), arg() % 40),
            10 => ExecOp::DropTimer(arg()),
            11 => ExecOp::Abort(arg()),
            12 => ExecOp::DropHandle(arg()),
            13 | 14 => ExecOp::RunNowait,
            15 | 16 => ExecOp::RunOnce,
            17 => ExecOp::Advance(arg() % 50),
            _ => ExecOp::Run,
        });
    }
    ops
}

/// The state of one probe, shared by the task's future and the test.
#[derive(Default)]
struct ProbeState {
    polls: u32,
    /// The task's future returned `Ready`.
    done: bool,
    /// The test aborted the task before it was done.
    aborted: bool,
    /// The probe (or the task's outer future) was dropped.
    dropped: bool,
    finish: bool,
    reset: Option<u64>,
    drop_timer: bool,
    waker: Option<Waker>,
    /// Woken (by the test or by its timer firing) since its latest poll.
    wake_pending: bool,
    /// Holds a live, refed timer.
    has_timer: bool,
    /// A `time::timeout` task whose timeout has neither fired nor been
    /// beaten by its future: its refed timer must keep `run()` going
    /// until one of the two happens.
    timeout_pending: bool,
}

type Errors = Rc<RefCell<String>>;

enum Timer {
    /// The sleep, and its deadline as the model counts it: made (or
    /// reset) at loop time `t` for `ms`, due at `t + max(ms, 1)`.
    Sleep(Pin<Box<Sleep>>, Instant),
    Interval {
        iv: Interval,
        period: Duration,
        left: u8,
        last: Option<Instant>,
    },
}

struct Probe {
    id: usize,
    st: Rc<RefCell<ProbeState>>,
    timer: Option<Timer>,
    errs: Errors,
    exact: Rc<Cell<bool>>,
}

fn err(errs: &Errors, s: String) {
    let _ = writeln!(errs.borrow_mut(), "  {s}");
}

impl Future for Probe {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let mut st = this.st.borrow_mut();
        if st.done || st.aborted {
            let what = if st.done { "completion" } else { "abort" };
            err(
                &this.errs,
                format!("task {} polled after its {what}", this.id),
            );
        }
        st.polls += 1;
        st.wake_pending = false;
        if st.drop_timer {
            st.drop_timer = false;
            st.has_timer = false;
            this.timer = None;
        }
        if let Some(ms) = st.reset.take()
            && let Some(Timer::Sleep(s, due)) = &mut this.timer
        {
            let now = Instant::now();
            s.as_mut().reset(now + Duration::from_millis(ms));
            // A reset to a deadline already reached is ready at once (no
            // timer; 0 ms is not coerced to 1 here, as in tokio).
            *due = now + Duration::from_millis(ms);
        }
        if st.finish {
            st.done = true;
            st.has_timer = false;
            return Poll::Ready(());
        }
        let exact = this.exact.get();
        match &mut this.timer {
            None => {}
            Some(Timer::Sleep(s, due)) => {
                if s.as_mut().poll(cx).is_pending() {
                    st.waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                // The model's own deadline, not the sleep's report of it.
                let (now, deadline) = (Instant::now(), *due);
                if s.deadline() != deadline {
                    err(
                        &this.errs,
                        format!(
                            "task {}: sleep says due {:?}, model {deadline:?}",
                            this.id,
                            s.deadline()
                        ),
                    );
                }
                if now < deadline || (exact && now != deadline) {
                    err(
                        &this.errs,
                        format!("task {}: sleep due {deadline:?} done at {now:?}", this.id),
                    );
                }
                st.done = true;
                st.has_timer = false;
                return Poll::Ready(());
            }
            Some(Timer::Interval {
                iv,
                period,
                left,
                last,
            }) => {
                while let Poll::Ready(t) = iv.poll_tick(cx) {
                    let now = Instant::now();
                    let early = t > now || last.is_some_and(|l| t < l + *period);
                    if early || (exact && t != now) {
                        err(
                            &this.errs,
                            format!(
                                "task {}: tick for {t:?} at {now:?}, previous {last:?}, period {period:?}",
                                this.id
                            ),
                        );
                    }
                    *last = Some(t);
                    *left -= 1;
                    if *left == 0 {
                        st.done = true;
                        st.has_timer = false;
                        return Poll::Ready(());
                    }
                }
            }
        }
        st.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let mut st = self.st.borrow_mut();
        st.dropped = true;
        st.has_timer = false;
    }
}

struct TaskRec {
    kind: Kind,
    st: Rc<RefCell<ProbeState>>,
    handle: Option<JoinHandle<()>>,
    /// The handle's output was taken (by polling it).
    joined: bool,
}

/// Runs `ops` on a virtual-clock loop against the model; every violation
/// is described in the error.
pub fn exec(ops: &[ExecOp]) -> Result<(), String> {
    let errs: Errors = Rc::default();
    let exact = Rc::new(Cell::new(true));
    let mut lp = EventLoop::with_virtual_clock();
    let mut tasks: Vec<TaskRec> = Vec::new();
    let fail = |errs: &Errors, at: &str| {
        let e = errs.borrow();
        (!e.is_empty()).then(|| format!("{at} of {ops:?}:\n{e}"))
    };
    for (i, &op) in ops.iter().enumerate() {
        step(&mut lp, &mut tasks, op, &errs, &exact);
        if let Some(e) = fail(&errs, &format!("after op {i} {op:?}")) {
            return Err(e);
        }
    }
    step(&mut lp, &mut tasks, ExecOp::Run, &errs, &exact);
    drop(lp);
    for (i, t) in tasks.iter().enumerate() {
        if !t.st.borrow().dropped {
            err(&errs, format!("task {i}'s future outlived its loop"));
        }
    }
    match fail(&errs, "at the end") {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn pick(tasks: &[TaskRec], i: u8) -> Option<usize> {
    (!tasks.is_empty()).then(|| usize::from(i) % tasks.len())
}

/// Wakes task `k`'s latest waker, here or on another thread. The other
/// thread holds a refed `Remote` of the loop meanwhile, as the task module
/// asks (a pending task keeps nothing alive by itself): it is dropped after
/// the wake, there.
fn wake(lp: &mut EventLoop, tasks: &[TaskRec], k: usize, remote: bool) {
    let mut st = tasks[k].st.borrow_mut();
    let Some(w) = st.waker.clone() else {
        return;
    };
    if !st.done && !st.aborted {
        st.wake_pending = true;
    }
    drop(st);
    if remote {
        let keep = lp.remote();
        std::thread::spawn(move || {
            w.wake();
            drop(keep);
        })
        .join()
        .expect("remote wake");
    } else {
        w.wake();
    }
}

fn spawn(
    lp: &mut EventLoop,
    kind: Kind,
    id: usize,
    errs: &Errors,
    exact: &Rc<Cell<bool>>,
) -> TaskRec {
    let st: Rc<RefCell<ProbeState>> = Rc::default();
    let (timer, has_timer) = lp.scope(|| match kind {
        Kind::Gate | Kind::Timeout(_) => (None, false),
        Kind::Sleep(ms) => (
            Some(Timer::Sleep(
                Box::pin(time::sleep(Duration::from_millis(u64::from(ms)))),
                // Zero is one millisecond, as Node coerces it.
                Instant::now() + Duration::from_millis(u64::from(ms).max(1)),
            )),
            true,
        ),
        Kind::Interval(ms, n) => {
            let period = Duration::from_millis(u64::from(ms));
            let iv = time::interval(period);
            (
                Some(Timer::Interval {
                    iv,
                    period,
                    left: n,
                    last: None,
                }),
                true,
            )
        }
    });
    st.borrow_mut().has_timer = has_timer;
    st.borrow_mut().timeout_pending = matches!(kind, Kind::Timeout(_));
    // The first poll is queued: it counts as a pending wake.
    st.borrow_mut().wake_pending = true;
    let probe = Probe {
        id,
        st: st.clone(),
        timer,
        errs: errs.clone(),
        exact: exact.clone(),
    };
    let handle = match kind {
        Kind::Timeout(ms) => {
            let (st, errs, exact) = (st.clone(), errs.clone(), exact.clone());
            lp.spawn(async move {
                // Zero is one millisecond, as Node coerces it.
                let d = Duration::from_millis(u64::from(ms).max(1));
                let start = Instant::now();
                let timed_out = time::timeout(d, probe).await.is_err();
                let now = Instant::now();
                // Never early; and exactly on time while the clock is
                // moved only by the loop.
                if timed_out && (now - start < d || (exact.get() && now - start != d)) {
                    err(
                        &errs,
                        format!("task {id}: timeout of {d:?} from {start:?} failed at {now:?}"),
                    );
                }
                let mut st = st.borrow_mut();
                st.done = true;
                st.timeout_pending = false;
            })
        }
        _ => lp.spawn(probe),
    };
    TaskRec {
        kind,
        st,
        handle: Some(handle),
        joined: false,
    }
}

fn step(
    lp: &mut EventLoop,
    tasks: &mut Vec<TaskRec>,
    op: ExecOp,
    errs: &Errors,
    exact: &Rc<Cell<bool>>,
) {
    match op {
        ExecOp::Spawn(kind) => {
            let t = spawn(lp, kind, tasks.len(), errs, exact);
            tasks.push(t);
        }
        ExecOp::Wake(i) | ExecOp::WakeRemote(i) => {
            if let Some(k) = pick(tasks, i) {
                wake(lp, tasks, k, matches!(op, ExecOp::WakeRemote(_)));
            }
        }
        ExecOp::Finish(i) | ExecOp::Reset(i, _) | ExecOp::DropTimer(i) => {
            let Some(k) = pick(tasks, i) else { return };
            {
                let mut st = tasks[k].st.borrow_mut();
                match op {
                    ExecOp::Finish(_) => st.finish = true,
                    ExecOp::Reset(_, ms) => st.reset = Some(u64::from(ms)),
                    _ => st.drop_timer = true,
                }
            }
            wake(lp, tasks, k, false);
        }
        ExecOp::Abort(i) => {
            let Some(k) = pick(tasks, i) else { return };
            let t = &mut tasks[k];
            let Some(h) = &t.handle else { return };
            let was_done = t.st.borrow().done;
            h.abort();
            if !h.is_finished() {
                err(errs, format!("task {k}: not finished right after abort"));
            }
            if !was_done {
                let mut st = t.st.borrow_mut();
                st.aborted = true;
                st.wake_pending = false;
            }
        }
        ExecOp::DropHandle(i) => {
            if let Some(k) = pick(tasks, i) {
                tasks[k].handle = None;
            }
        }
        ExecOp::RunNowait | ExecOp::RunOnce | ExecOp::Advance(_) | ExecOp::Run => {
            let r = match op {
                ExecOp::RunNowait => lp.run_nowait().map(drop),
                ExecOp::RunOnce => lp.run_once().map(drop),
                ExecOp::Advance(ms) => {
                    exact.set(false);
                    let clock = lp.virtual_clock().expect("a virtual clock");
                    clock.advance(Duration::from_millis(u64::from(ms)));
                    lp.run_nowait().map(drop)
                }
                _ => lp.run(),
            };
            if let Err(e) = r {
                err(errs, format!("{op:?} failed: {e}"));
            }
            check_after_run(lp, tasks, errs, op == ExecOp::Run);
        }
    }
}

fn check_after_run(lp: &mut EventLoop, tasks: &mut [TaskRec], errs: &Errors, ran_out: bool) {
    let noop = Waker::noop();
    let mut cx = Context::from_waker(noop);
    for (k, t) in tasks.iter_mut().enumerate() {
        let (done, aborted, dropped, woken, timer, timeout) = {
            let st = t.st.borrow();
            (
                st.done,
                st.aborted,
                st.dropped,
                st.wake_pending,
                st.has_timer,
                st.timeout_pending,
            )
        };
        if woken && !done && !aborted {
            err(errs, format!("task {k} ({:?}) woken, not polled", t.kind));
        }
        if (done || aborted) && !dropped {
            err(
                errs,
                format!("task {k}: future not dropped (done {done}, aborted {aborted})"),
            );
        }
        if ran_out && timer && !aborted {
            err(
                errs,
                format!("task {k} ({:?}) holds a timer after run()", t.kind),
            );
        }
        if ran_out && timeout && !aborted {
            err(
                errs,
                format!("task {k} ({:?}): its timeout never fired in run()", t.kind),
            );
        }
        if let Some(h) = &mut t.handle {
            if (done || aborted) != h.is_finished() {
                err(
                    errs,
                    format!(
                        "task {k}: is_finished {} (done {done}, aborted {aborted})",
                        h.is_finished()
                    ),
                );
            }
            if !t.joined && h.is_finished() {
                match Pin::new(h).poll(&mut cx) {
                    Poll::Ready(Ok(())) if !aborted => {}
                    Poll::Ready(Err(e)) if aborted && e.is_cancelled() => {}
                    other => err(
                        errs,
                        format!("task {k} (aborted {aborted}): JoinHandle gave {other:?}"),
                    ),
                }
                t.joined = true;
            }
        }
    }
    if ran_out && lp.is_alive() {
        err(errs, "run() returned with the loop alive".to_string());
    }
}
