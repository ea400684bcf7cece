//! A reference model of the timer API, driven by a sequence of operations.
//!
//! One file of about 950 lines, on purpose: it is shared by `#[path]` with
//! a fuzz target that is its own crate, so the operations, their decoding,
//! the model and its checks travel together as one reference.
//!
//! Shared, by `#[path]`, between `tests/properties.rs` (proptest generates
//! the operations), `tests/hostile.rs` (regression inputs) and the fuzz
//! target `fuzz/fuzz_targets/ops.rs` (bytes are decoded into operations
//! with [`decode`]). [`exec`] runs the operations on an
//! [`EventLoop::with_virtual_clock`] and checks, after every operation and
//! inside every callback:
//!
//! - a timer fires at most once per arming (creation, `refresh`, or the
//!   previous run of an interval), and a cleared timer never fires;
//! - a timer never fires before its deadline in loop time: `lp.now()` in the
//!   callback is at least the arming time plus the truncated coerced delay;
//! - while nothing blocked and the clock was never moved by hand, every
//!   timer fires exactly at its deadline (so an interval of P armed at t
//!   fires at t+P, t+2P, ...) and, after each run step, no armed timer is
//!   overdue (none was skipped);
//! - `timeout_has_ref`, `timeout_is_pending`, `immediate_has_ref`, `is_alive()` and the
//!   counters of `stats()` agree with a simple counting model;
//! - a `TimeoutOverflowWarning` is reported for exactly the delays above
//!   2^31-1 ms, from a tick (as Node's `process.emitWarning`): by the end
//!   of the next run step;
//! - `VirtualClock::set` refuses exactly the times before the clock's own;
//! - a callback error the model injects (a timeout, interval, tick or
//!   microtask returning `Err`, with no uncaught-error handler) ends the
//!   run step with exactly that `Error::Uncaught`, and nothing else does
//!   (the run stops right after the failing callback, so until a later run
//!   step succeeds, ticks may stay queued and due timers unrun; every
//!   other check holds throughout, exact timing and `is_alive()`
//!   included);
//! - once every timer is cleared and the loop has run out, `stats()` is all
//!   zeros (nothing leaked).
//!
//! A violation is recorded (never panicked on inside a callback, where the
//! loop would catch it) and returned as `Err` by [`exec`].

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::rc::Rc;
use std::time::Duration;

use timerloop::{CallbackKind, EventLoop, Immediate, Stats, Timeout, TimerError};

/// The largest delay Node accepts, 2^31-1 ms.
const TIMEOUT_MAX: f64 = 2_147_483_647.0;

/// A delay as a caller may pass it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DelaySpec {
    /// Milliseconds, possibly fractional, negative, NaN or infinite.
    Ms(f64),
    /// A `Duration`.
    Dur(Duration),
}

/// Special delays, picked by index (see [`DelaySpec::pick`]).
pub const SPECIAL_DELAYS: &[DelaySpec] = &[
    DelaySpec::Ms(0.5),
    DelaySpec::Ms(1.5),
    DelaySpec::Ms(1.9),
    DelaySpec::Ms(2.99),
    DelaySpec::Ms(5.7),
    DelaySpec::Ms(-5.0),
    DelaySpec::Ms(-0.5),
    DelaySpec::Ms(f64::NAN),
    DelaySpec::Ms(f64::NEG_INFINITY),
    DelaySpec::Ms(f64::INFINITY),
    DelaySpec::Ms(2_147_483_648.0),
    DelaySpec::Ms(2_147_483_647.5),
    DelaySpec::Ms(TIMEOUT_MAX),
    DelaySpec::Ms(u64::MAX as f64),
    DelaySpec::Ms(1e300),
    DelaySpec::Ms(100.0),
    DelaySpec::Ms(1000.0),
    DelaySpec::Ms(65_536.0),
    // Long timers: just past Node's limit, and 40 days. (Not
    // `Duration::MAX`: it would take the virtual clock to its end, where
    // time stops; tests/long_timers.rs covers it.)
    DelaySpec::Dur(Duration::from_millis(2_147_483_648)),
    DelaySpec::Dur(Duration::from_secs(40 * 86_400)),
    DelaySpec::Dur(Duration::ZERO),
    DelaySpec::Dur(Duration::from_micros(2500)),
    DelaySpec::Dur(Duration::from_millis(7)),
    DelaySpec::Dur(Duration::from_nanos(999_999)),
    DelaySpec::Dur(Duration::from_secs(3)),
];

impl DelaySpec {
    /// Delay number `b`: small whole milliseconds 0..=31 for most values,
    /// otherwise one of [`SPECIAL_DELAYS`].
    pub fn pick(b: u8) -> Self {
        if b < 160 {
            DelaySpec::Ms(f64::from(b % 32))
        } else {
            SPECIAL_DELAYS[usize::from(b - 160) % SPECIAL_DELAYS.len()]
        }
    }

    /// The delay in milliseconds as the loop takes it: a number as given, a
    /// `Duration` rounded up to whole milliseconds (so it never fires
    /// early).
    fn raw_ms(self) -> f64 {
        match self {
            DelaySpec::Ms(ms) => ms,
            DelaySpec::Dur(d) => {
                let ms = d.as_nanos().div_ceil(1_000_000);
                u64::try_from(ms).unwrap_or(u64::MAX) as f64
            }
        }
    }

    /// Node's coercion (R3.2), computed independently of the library: the
    /// list key (truncated duration) and whether a warning is due.
    pub fn expected(self) -> (u64, bool) {
        let ms = self.raw_ms();
        if let DelaySpec::Dur(_) = self
            && ms > TIMEOUT_MAX
        {
            // A long timer: kept at its length, up to 2^53 - 1 ms.
            return ((ms as u64).min((1 << 53) - 1), false);
        }
        if (1.0..=TIMEOUT_MAX).contains(&ms) {
            (ms.trunc() as u64, false)
        } else {
            (1, ms > TIMEOUT_MAX)
        }
    }

    fn set_timeout(
        self,
        lp: &mut EventLoop,
        f: impl FnMut(&mut EventLoop) -> Result<(), &'static str> + 'static,
        interval: bool,
    ) -> Timeout {
        match (self, interval) {
            (DelaySpec::Ms(ms), false) => lp.set_timeout(ms, f),
            (DelaySpec::Ms(ms), true) => lp.set_interval(ms, f),
            (DelaySpec::Dur(d), false) => lp.set_timeout(d, f),
            (DelaySpec::Dur(d), true) => lp.set_interval(d, f),
        }
    }
}

/// What a timer's callback does when it runs. Indexes name timers in
/// creation order, modulo the number of timers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// Nothing.
    Nothing,
    /// `clear_timeout` of another timer (or itself).
    Clear(u8),
    /// `clear_timeout` of itself.
    ClearSelf,
    /// `refresh` of another timer (or itself).
    Refresh(u8),
    /// `refresh` of itself: a timeout fires again, an interval stays on
    /// its grid (R8.5).
    RefreshSelf,
    /// `unref` of a timer.
    Unref(u8),
    /// `ref_` of a timer.
    Ref(u8),
    /// A new timeout (whose callback does nothing more).
    Spawn(DelaySpec),
    /// A `next_tick` that clears a timer (clears from ticks hold).
    TickClear(u8),
    /// A microtask that clears a timer.
    MicrotaskClear(u8),
    /// A new immediate.
    Immediate,
    /// `lp.block(ms)`: the callback is busy for that long.
    Block(u8),
    /// The callback returns an error (there is no uncaught-error handler):
    /// the run step must return `Error::Uncaught` right after it.
    Fail,
    /// A `next_tick` that returns an error.
    TickFail,
    /// A microtask that returns an error.
    MicrotaskFail,
}

/// One operation on the loop, from outside its callbacks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// `set_timeout(delay, ..)`; the callback performs the action.
    Timeout(DelaySpec, Action),
    /// `set_interval(period, ..)`; every run performs the action.
    Interval(DelaySpec, Action),
    /// `clear_timeout`.
    Clear(u8),
    /// `refresh`.
    Refresh(u8),
    /// `retain`.
    Retain(u8),
    /// `unref`.
    Unref(u8),
    /// `ref_`.
    Ref(u8),
    /// `set_immediate`.
    Immediate,
    /// `clear_immediate`.
    ClearImmediate(u8),
    /// `unref_immediate`.
    UnrefImmediate(u8),
    /// `ref_immediate`.
    RefImmediate(u8),
    /// `next_tick` from the main body.
    Tick,
    /// `queue_microtask` from the main body.
    Microtask,
    /// `VirtualClock::advance` by this many ms.
    Advance(u16),
    /// `lp.block(ms)` from the main body.
    Block(u16),
    /// `VirtualClock::set` to the clock's time plus this many ms, or minus
    /// it when negative (which must be refused).
    SetClock(i16),
    /// Up to this many `run_once` calls, while the loop is alive.
    RunOnce(u8),
    /// One `run_nowait`.
    RunNowait,
}

impl Op {
    /// Whether this operation moves the clock by other means than the loop
    /// waiting for its next deadline (so timers may fire late).
    pub fn moves_clock(&self) -> bool {
        matches!(
            self,
            Op::Advance(_)
                | Op::Block(_)
                | Op::SetClock(_)
                | Op::Timeout(_, Action::Block(_))
                | Op::Interval(_, Action::Block(_))
        )
    }
}

/// Reads bytes, giving zeros once they run out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
}

fn decode_action(b: &mut Bytes<'_>) -> Action {
    let tag = b.u8();
    match tag % 19 {
        0..=4 => Action::Nothing,
        5 => Action::Clear(b.u8()),
        6 => Action::ClearSelf,
        7 => Action::Refresh(b.u8()),
        8 => Action::RefreshSelf,
        9 => Action::Unref(b.u8()),
        10 => Action::Ref(b.u8()),
        11 => Action::Spawn(DelaySpec::pick(b.u8())),
        12 => Action::TickClear(b.u8()),
        13 => Action::MicrotaskClear(b.u8()),
        14 => Action::Immediate,
        15 => Action::Block(b.u8() % 64),
        16 => Action::Fail,
        17 => Action::TickFail,
        _ => Action::MicrotaskFail,
    }
}

/// Decodes fuzzer bytes into at most 256 operations.
pub fn decode(data: &[u8]) -> Vec<Op> {
    let mut b = Bytes(data);
    let mut ops = Vec::new();
    while !b.0.is_empty() && ops.len() < 256 {
        let op = match b.u8() % 24 {
            0..=3 => Op::Timeout(DelaySpec::pick(b.u8()), decode_action(&mut b)),
            4 | 5 => Op::Interval(DelaySpec::pick(b.u8()), decode_action(&mut b)),
            6 => Op::Clear(b.u8()),
            7 => Op::Refresh(b.u8()),
            8 => Op::Retain(b.u8()),
            9 => Op::Unref(b.u8()),
            10 => Op::Ref(b.u8()),
            11 => Op::Immediate,
            12 => Op::ClearImmediate(b.u8()),
            13 => Op::UnrefImmediate(b.u8()),
            14 => Op::RefImmediate(b.u8()),
            15 => Op::Tick,
            16 => Op::Microtask,
            17 => Op::Advance(b.u16() % 5000),
            18 => Op::Block(b.u16() % 5000),
            19 => Op::SetClock(b.u16() as i16 % 5000),
            20..=22 => Op::RunOnce(b.u8() % 16 + 1),
            _ => Op::RunNowait,
        };
        ops.push(op);
    }
    ops
}

struct TimerM {
    handle: Timeout,
    interval: bool,
    /// The truncated coerced duration.
    ms: u64,
    /// When it is due, while armed.
    deadline: u64,
    /// Waiting to fire (linked, in Node's terms).
    armed: bool,
    cleared: bool,
    refed: bool,
    retained: bool,
    fires: u32,
    action: Action,
}

struct ImmM {
    handle: Immediate,
    pending: bool,
    refed: bool,
}

#[derive(Default)]
struct Model {
    /// Timer callbacks capture only their index, and reach the model
    /// through [`MODEL`]: *plain* callbacks (one word, no drop glue),
    /// which the timers pass runs on its `fire_once::<true>` path with its
    /// unchecked lookups ([`exec_plain`]). Otherwise they capture the
    /// model's `Rc` and take the general path.
    plain: bool,
    timers: Vec<TimerM>,
    imms: Vec<ImmM>,
    /// The timer whose callback is running.
    current: Option<usize>,
    /// Ticks and microtasks queued and not yet run.
    queued_tasks: usize,
    /// Fires must be exactly on time (nothing has blocked or moved the
    /// clock by hand so far).
    exact: bool,
    warnings_expected: usize,
    /// Kinds of the callbacks that failed since the last run step ended.
    failures: Vec<CallbackKind>,
    /// The last run step ended with a failure: until a run step succeeds,
    /// the loop may hold due timers and undrained ticks (the run stopped
    /// right after the failing callback).
    after_failure: bool,
    violations: Vec<String>,
}

/// The error message of every failure the model injects.
const FAIL: &str = "model: injected failure";

type Shared = Rc<RefCell<Model>>;

thread_local! {
    /// The model of a plain [`exec_plain`] running on this thread: what a
    /// plain timer callback, which captures only its index, reaches.
    static MODEL: RefCell<Option<Shared>> = const { RefCell::new(None) };
}

fn current_model() -> Shared {
    MODEL.with(|c| c.borrow().clone().expect("a plain model is running"))
}

/// Forgets [`MODEL`] when a plain run ends, panicking or not.
struct ResetModel;

impl Drop for ResetModel {
    fn drop(&mut self) {
        MODEL.with(|c| c.borrow_mut().take());
    }
}

impl TimerM {
    /// Whether the handle still refers to storage (is not stale).
    fn valid(&self, running: bool) -> bool {
        !self.cleared && (self.interval || self.armed || self.retained || running)
    }
}

impl Model {
    fn fail(&mut self, msg: String) {
        if self.violations.len() < 16 {
            self.violations.push(msg);
        }
    }

    fn index(&self, i: u8) -> Option<usize> {
        (!self.timers.is_empty()).then(|| usize::from(i) % self.timers.len())
    }

    fn imm_index(&self, i: u8) -> Option<usize> {
        (!self.imms.is_empty()).then(|| usize::from(i) % self.imms.len())
    }

    fn valid(&self, j: usize) -> bool {
        self.timers[j].valid(self.current == Some(j))
    }
}

/// Creates a timer and its model entry.
fn add_timer(m: &Shared, lp: &mut EventLoop, delay: DelaySpec, action: Action, interval: bool) {
    let i = m.borrow().timers.len();
    let (ms, warns) = delay.expected();
    let h = if m.borrow().plain {
        delay.set_timeout(lp, move |lp| on_fire(&current_model(), lp, i), interval)
    } else {
        let mc = m.clone();
        delay.set_timeout(lp, move |lp| on_fire(&mc, lp, i), interval)
    };
    let now = lp.now();
    let mut md = m.borrow_mut();
    if warns {
        md.warnings_expected += 1;
    }
    md.timers.push(TimerM {
        handle: h,
        interval,
        ms,
        deadline: now + ms,
        armed: true,
        cleared: false,
        refed: true,
        retained: false,
        fires: 0,
        action,
    });
}

fn add_immediate(m: &Shared, lp: &mut EventLoop) {
    let k = m.borrow().imms.len();
    let mc = m.clone();
    let h = lp.set_immediate(move |lp| {
        let mut md = mc.borrow_mut();
        let (pending, h) = (md.imms[k].pending, md.imms[k].handle);
        if !pending {
            md.fail(format!("immediate {k} ran but was cleared or already ran"));
            return;
        }
        md.imms[k].pending = false;
        if lp.immediate_has_ref(h) {
            md.fail(format!("immediate {k}: has_ref while running"));
        }
    });
    m.borrow_mut().imms.push(ImmM {
        handle: h,
        pending: true,
        refed: true,
    });
}

fn clear(m: &Shared, lp: &mut EventLoop, j: usize, ctx: &str) {
    let expect = m.borrow().valid(j);
    let h = m.borrow().timers[j].handle;
    let got = lp.clear_timeout(h).is_ok();
    // A cleared kept timer keeps its storage (as a cleared Node Timeout
    // object lives on) until `release_timeout`; the model's "cleared" is
    // the end of a timer, so release it too. (Its refresh-after-clear
    // behaviour is tested in tests/control.rs.)
    if m.borrow().timers[j].retained {
        let _ = lp.release_timeout(h);
    }
    let mut md = m.borrow_mut();
    if got != expect {
        md.fail(format!(
            "{ctx}: clear_timeout(timer {j}) = {got}, model {expect}"
        ));
    }
    let t = &mut md.timers[j];
    t.cleared = true;
    t.armed = false;
}

fn refresh(m: &Shared, lp: &mut EventLoop, j: usize, ctx: &str) {
    let (expect_ok, h, running) = {
        let md = m.borrow();
        (md.valid(j), md.timers[j].handle, md.current == Some(j))
    };
    let got = lp.refresh(h);
    let now = lp.now();
    let mut md = m.borrow_mut();
    let want = if expect_ok {
        Ok(())
    } else {
        Err(TimerError::Stale)
    };
    if got != want {
        md.fail(format!(
            "{ctx}: refresh(timer {j}) = {got:?}, model {want:?}"
        ));
    }
    let t = &mut md.timers[j];
    if expect_ok && !t.cleared {
        t.armed = true;
        if !(t.interval && running) {
            // R8.5: inside an interval's own callback the refresh is
            // overridden by the re-insert at the pre-callback start, which
            // on_fire already set as the deadline.
            t.deadline = now + t.ms;
        }
    }
}

fn set_ref(m: &Shared, lp: &mut EventLoop, j: usize, on: bool, ctx: &str) {
    let (expect_ok, h) = {
        let md = m.borrow();
        (md.valid(j), md.timers[j].handle)
    };
    let got = if on {
        lp.ref_timeout(h)
    } else {
        lp.unref_timeout(h)
    };
    let mut md = m.borrow_mut();
    let want = if expect_ok {
        Ok(())
    } else {
        Err(TimerError::Stale)
    };
    if got != want {
        md.fail(format!(
            "{ctx}: ref({on}) of timer {j} = {got:?}, model {want:?}"
        ));
    }
    if expect_ok {
        md.timers[j].refed = on;
    }
}

/// A timer callback: checks the firing against the model, then performs
/// the timer's action.
fn on_fire(m: &Shared, lp: &mut EventLoop, i: usize) -> Result<(), &'static str> {
    let now = lp.now();
    let action = {
        let mut md = m.borrow_mut();
        let exact = md.exact;
        if md.current.is_some() {
            md.fail(format!("timer {i} fired inside another timer's callback"));
        }
        let t = &md.timers[i];
        let (handle, cleared, armed, deadline, fires) =
            (t.handle, t.cleared, t.armed, t.deadline, t.fires);
        if lp.current_timeout() != Some(handle) {
            md.fail(format!("timer {i}: current_timeout() is not its handle"));
        }
        if cleared {
            md.fail(format!("timer {i} fired after being cleared (at {now})"));
        }
        if !armed {
            md.fail(format!(
                "timer {i} fired twice for one arming (at {now}, fire {})",
                fires + 1
            ));
        }
        if now < deadline {
            md.fail(format!("timer {i} fired early: at {now}, due {deadline}"));
        } else if exact && now != deadline {
            md.fail(format!(
                "timer {i} fired late with nothing blocking: at {now}, due {deadline}"
            ));
        }
        md.current = Some(i);
        let t = &mut md.timers[i];
        t.fires += 1;
        if t.interval {
            t.deadline = now + t.ms;
        } else {
            t.armed = false;
        }
        t.action
    };
    let ctx = format!("in timer {i}");
    match action {
        Action::Nothing => {}
        Action::Clear(j) => {
            let j = m.borrow().index(j).unwrap_or(i);
            clear(m, lp, j, &ctx);
        }
        Action::ClearSelf => clear(m, lp, i, &ctx),
        Action::Refresh(j) => {
            let j = m.borrow().index(j).unwrap_or(i);
            refresh(m, lp, j, &ctx);
        }
        Action::RefreshSelf => refresh(m, lp, i, &ctx),
        Action::Unref(j) => {
            let j = m.borrow().index(j).unwrap_or(i);
            set_ref(m, lp, j, false, &ctx);
        }
        Action::Ref(j) => {
            let j = m.borrow().index(j).unwrap_or(i);
            set_ref(m, lp, j, true, &ctx);
        }
        Action::Spawn(d) => add_timer(m, lp, d, Action::Nothing, false),
        Action::TickClear(j) | Action::MicrotaskClear(j) => {
            let j = m.borrow().index(j).unwrap_or(i);
            let mc = m.clone();
            m.borrow_mut().queued_tasks += 1;
            let task = move |lp: &mut EventLoop| {
                mc.borrow_mut().queued_tasks -= 1;
                clear(&mc, lp, j, "in a tick");
            };
            if matches!(action, Action::TickClear(_)) {
                lp.next_tick(task);
            } else {
                lp.queue_microtask(task);
            }
        }
        Action::Immediate => add_immediate(m, lp),
        Action::Block(ms) => {
            m.borrow_mut().exact = false;
            lp.block(u64::from(ms));
        }
        Action::Fail => {
            let mut md = m.borrow_mut();
            md.current = None;
            let kind = if md.timers[i].interval {
                CallbackKind::Interval
            } else {
                CallbackKind::Timeout
            };
            md.failures.push(kind);
            return Err(FAIL);
        }
        Action::TickFail | Action::MicrotaskFail => {
            let mc = m.clone();
            m.borrow_mut().queued_tasks += 1;
            let tick = action == Action::TickFail;
            let task = move |_: &mut EventLoop| {
                let mut md = mc.borrow_mut();
                md.queued_tasks -= 1;
                md.failures.push(if tick {
                    CallbackKind::Tick
                } else {
                    CallbackKind::Microtask
                });
                Err(FAIL)
            };
            if tick {
                lp.next_tick(task);
            } else {
                lp.queue_microtask(task);
            }
        }
    }
    m.borrow_mut().current = None;
    Ok(())
}

/// Compares what the loop reports with the model, outside callbacks.
fn check(m: &Shared, lp: &EventLoop, warnings: usize, ctx: &str, after_run: bool) {
    let mut md = m.borrow_mut();
    let mut errs = Vec::new();
    let now = lp.now();
    let (mut storage, mut refed_live, mut alive) = (0, 0, false);
    for (j, t) in md.timers.iter().enumerate() {
        let valid = t.valid(false);
        let want = valid && t.refed;
        let got = lp.timeout_has_ref(t.handle);
        if got != want {
            errs.push(format!("has_ref(timer {j}) = {got:?}, model {want:?}"));
        }
        let pending = valid && t.armed;
        if lp.timeout_is_pending(t.handle) != pending {
            errs.push(format!("is_pending(timer {j}) != model {pending}"));
        }
        if md.exact && after_run && !md.after_failure && pending && t.deadline <= now {
            errs.push(format!(
                "timer {j} overdue after a run step: due {}, now {now}",
                t.deadline
            ));
        }
        storage += usize::from(valid);
        if pending && t.refed {
            refed_live += 1;
            alive = true;
        }
    }
    let mut imms = 0;
    for (k, im) in md.imms.iter().enumerate() {
        let want = im.pending && im.refed;
        if lp.immediate_has_ref(im.handle) != want {
            errs.push(format!("immediate_has_ref({k}) != model {want}"));
        }
        imms += usize::from(im.pending);
        alive |= want;
    }
    let s = lp.stats();
    let tasks = s.ticks + s.microtasks;
    // A warning is delivered from a tick queued when it arises, as Node's
    // process.emitWarning does: undelivered warnings are queued ticks.
    let undelivered = md.warnings_expected.saturating_sub(warnings);
    if (s.timers, s.refed_timers, s.immediates, tasks)
        != (storage, refed_live, imms, md.queued_tasks + undelivered)
    {
        errs.push(format!(
            "stats {s:?}, model timers {storage} refed {refed_live} immediates {imms} \
             ticks+microtasks {} + {undelivered} warning ticks",
            md.queued_tasks
        ));
    }
    if after_run && !md.after_failure && md.queued_tasks != 0 {
        errs.push(format!(
            "{} ticks or microtasks did not run",
            md.queued_tasks
        ));
    }
    if s.queued_lists > s.lists {
        errs.push(format!("more queued lists than lists: {s:?}"));
    }
    if lp.is_alive() != alive {
        errs.push(format!("is_alive() = {}, model {alive}", lp.is_alive()));
    }
    if warnings > md.warnings_expected
        || (after_run && !md.after_failure && warnings != md.warnings_expected)
    {
        errs.push(format!(
            "{warnings} overflow warnings delivered, model {}",
            md.warnings_expected
        ));
    }
    for e in errs {
        md.fail(format!("after {ctx}: {e}"));
    }
}

/// Checks a run step's result against the failures injected during it.
/// Returns whether to go on stepping.
fn run_step(m: &Shared, r: Result<bool, timerloop::Error>, ctx: &str) -> bool {
    let mut md = m.borrow_mut();
    let failures = std::mem::take(&mut md.failures);
    match r {
        Ok(alive) => {
            if !failures.is_empty() {
                md.fail(format!(
                    "{ctx}: {failures:?} failed, yet the run step succeeded"
                ));
            }
            md.after_failure = false;
            alive
        }
        Err(timerloop::Error::Uncaught(e)) => {
            if failures != [e.kind()] || e.message() != FAIL || e.is_panic() {
                md.fail(format!(
                    "{ctx}: run returned {e:?}; the model injected {failures:?}"
                ));
            }
            md.after_failure = true;
            false
        }
        Err(e) => {
            md.fail(format!("{ctx}: {e}"));
            false
        }
    }
}

/// Runs `ops` on a fresh virtual-clock loop, checking the model
/// throughout, then clears everything, runs the loop out and checks that
/// nothing is left. Returns the violations found, if any.
pub fn exec(ops: &[Op]) -> Result<(), String> {
    exec_with(ops, false)
}

/// [`exec`] with plain timer callbacks (see `Model::plain`), so that every
/// unkept timeout fires on the timers pass's `fire_once::<true>` path.
#[allow(dead_code)] // properties.rs runs it; hostile.rs and the fuzz target do not
pub fn exec_plain(ops: &[Op]) -> Result<(), String> {
    exec_with(ops, true)
}

fn exec_with(ops: &[Op], plain: bool) -> Result<(), String> {
    let mut lp = EventLoop::with_virtual_clock();
    let clock = lp.virtual_clock().expect("a virtual clock").clone();
    let warnings = Rc::new(Cell::new(0usize));
    let w = warnings.clone();
    lp.set_warning_handler(move |warning| {
        if warning.name == "TimeoutOverflowWarning" {
            w.set(w.get() + 1);
        }
    });
    let m: Shared = Rc::new(RefCell::new(Model {
        plain,
        exact: true,
        ..Model::default()
    }));
    let _reset = plain.then(|| {
        MODEL.with(|c| *c.borrow_mut() = Some(m.clone()));
        ResetModel
    });
    for (n, &op) in ops.iter().enumerate() {
        let ctx = format!("op {n} {op:?}");
        let mut after_run = false;
        match op {
            Op::Timeout(d, a) => add_timer(&m, &mut lp, d, a, false),
            Op::Interval(d, a) => add_timer(&m, &mut lp, d, a, true),
            Op::Clear(j) => {
                let j = m.borrow().index(j);
                if let Some(j) = j {
                    clear(&m, &mut lp, j, &ctx);
                }
            }
            Op::Refresh(j) => {
                let j = m.borrow().index(j);
                if let Some(j) = j {
                    refresh(&m, &mut lp, j, &ctx);
                }
            }
            Op::Retain(j) => {
                let j = m.borrow().index(j);
                if let Some(j) = j {
                    let (ok, h) = (m.borrow().valid(j), m.borrow().timers[j].handle);
                    let got = lp.keep_timeout(h);
                    let mut md = m.borrow_mut();
                    if got.is_ok() != ok {
                        md.fail(format!("{ctx}: retain = {got:?}, model valid {ok}"));
                    }
                    if ok {
                        md.timers[j].retained = true;
                    }
                }
            }
            Op::Unref(j) | Op::Ref(j) => {
                let j = m.borrow().index(j);
                if let Some(j) = j {
                    set_ref(&m, &mut lp, j, matches!(op, Op::Ref(_)), &ctx);
                }
            }
            Op::Immediate => add_immediate(&m, &mut lp),
            Op::ClearImmediate(k) => {
                let k = m.borrow().imm_index(k);
                if let Some(k) = k {
                    let (pending, h) = {
                        let md = m.borrow();
                        (md.imms[k].pending, md.imms[k].handle)
                    };
                    let got = lp.clear_immediate(h).is_ok();
                    let mut md = m.borrow_mut();
                    if got != pending {
                        md.fail(format!("{ctx}: clear_immediate = {got}, model {pending}"));
                    }
                    md.imms[k].pending = false;
                }
            }
            Op::UnrefImmediate(k) | Op::RefImmediate(k) => {
                let k = m.borrow().imm_index(k);
                if let Some(k) = k {
                    let on = matches!(op, Op::RefImmediate(_));
                    let (pending, h) = {
                        let md = m.borrow();
                        (md.imms[k].pending, md.imms[k].handle)
                    };
                    let got = if on {
                        lp.ref_immediate(h)
                    } else {
                        lp.unref_immediate(h)
                    };
                    let mut md = m.borrow_mut();
                    if got.is_ok() != pending {
                        md.fail(format!("{ctx}: = {got:?}, model pending {pending}"));
                    }
                    if pending {
                        md.imms[k].refed = on;
                    }
                }
            }
            Op::Tick | Op::Microtask => {
                let mc = m.clone();
                m.borrow_mut().queued_tasks += 1;
                let task = move |_: &mut EventLoop| mc.borrow_mut().queued_tasks -= 1;
                if op == Op::Tick {
                    lp.next_tick(task);
                } else {
                    lp.queue_microtask(task);
                }
            }
            Op::Advance(ms) => {
                m.borrow_mut().exact = false;
                clock.advance(Duration::from_millis(u64::from(ms)));
            }
            Op::Block(ms) => {
                m.borrow_mut().exact = false;
                lp.block(u64::from(ms));
            }
            Op::SetClock(delta) => {
                use timerloop::Clock as _;
                let before = clock.now();
                let target = if delta >= 0 {
                    before + Duration::from_millis(delta as u64)
                } else {
                    before.saturating_sub(Duration::from_millis(u64::from(delta.unsigned_abs())))
                };
                let loop_now = lp.now();
                let got = clock.set(target);
                let mut md = m.borrow_mut();
                if target > before {
                    md.exact = false;
                }
                match (target < before, got) {
                    (false, Ok(())) | (true, Err(timerloop::ClockError::Backwards { .. })) => {}
                    (_, got) => {
                        md.fail(format!("{ctx}: set({target:?}) from {before:?} = {got:?}"))
                    }
                }
                if target < before && (clock.now() != before || lp.now() != loop_now) {
                    md.fail(format!("{ctx}: a refused set moved the clock"));
                }
            }
            Op::RunOnce(n) => {
                for _ in 0..n {
                    let r = lp.run_once();
                    if !run_step(&m, r, &ctx) {
                        break;
                    }
                }
                after_run = true;
            }
            Op::RunNowait => {
                let r = lp.run_nowait();
                run_step(&m, r, &ctx);
                after_run = true;
            }
        }
        check(&m, &lp, warnings.get(), &ctx, after_run);
        if !m.borrow().violations.is_empty() {
            break;
        }
    }
    if m.borrow().violations.is_empty() {
        finish(&m, &mut lp, &warnings);
    }
    let md = m.borrow();
    if md.violations.is_empty() {
        return Ok(());
    }
    let mut out = String::new();
    for v in &md.violations {
        let _ = writeln!(out, "{v}");
    }
    Err(out)
}

/// Clears every timer and immediate, runs the loop out, and checks that it
/// holds nothing. An unrefed list emptied by a clear stays queued until it
/// expires (R8.2), so a refed timer of the longest delay keeps the loop
/// running past every expiry first.
fn finish(m: &Shared, lp: &mut EventLoop, warnings: &Cell<usize>) {
    let n = m.borrow().timers.len();
    for j in 0..n {
        if m.borrow().valid(j) {
            clear(m, lp, j, "finish");
        }
    }
    let k = m.borrow().imms.len();
    for k in 0..k {
        let (pending, h) = {
            let md = m.borrow();
            (md.imms[k].pending, md.imms[k].handle)
        };
        if pending {
            lp.clear_immediate(h).unwrap();
            m.borrow_mut().imms[k].pending = false;
        }
    }
    check(m, lp, warnings.get(), "clearing everything", false);
    let flushed = Rc::new(Cell::new(false));
    let f = flushed.clone();
    // The longest list decides how far the flush reaches: an unrefed timer
    // cleared leaves its list queued until its expiry (as in Node), and a
    // `Duration` long timer's can be beyond 2^31-1 ms.
    let longest = m.borrow().timers.iter().map(|t| t.ms).max().unwrap_or(0);
    if longest > TIMEOUT_MAX as u64 {
        lp.set_timeout(Duration::from_millis(longest), move |_| f.set(true));
    } else {
        lp.set_timeout(TIMEOUT_MAX, move |_| f.set(true));
    }
    // Failing ticks queued before an unhandled failure still run (and
    // fail) when the loop is next run: run until a run succeeds.
    let mut finished = false;
    for _ in 0..64 {
        let r = lp.run().map(|()| false);
        let failed = r.is_err();
        run_step(m, r, "final run");
        if !failed {
            finished = true;
            break;
        }
    }
    let mut md = m.borrow_mut();
    if !finished {
        md.fail("the final run kept failing".into());
    }
    if !flushed.get() {
        md.fail("the final flushing timer did not fire".into());
    }
    let s = lp.stats();
    if s != Stats::default() {
        md.fail(format!("leak: after everything ended, stats {s:?}"));
    }
    if lp.is_alive() {
        md.fail("the loop is still alive after run() returned".into());
    }
    if warnings.get() != md.warnings_expected {
        let want = md.warnings_expected;
        md.fail(format!(
            "{} overflow warnings in all, model {want}",
            warnings.get()
        ));
    }
}
