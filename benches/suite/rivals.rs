//! Workloads measured against their natural rival in one process, one
//! after the other, with the ratio printed.
//!
//! ```text
//! rivals tasks [N] [--reps R]
//! rivals sleeps [N] [--reps R]
//! rivals semaphore [N] [--reps R]
//! rivals wake [N] [--reps R]
//! rivals timers-refresh-idle [N] [--reps R]
//! rivals all [N] [--reps R]
//! ```
//!
//! Every line is `rivals NAME n=N timerloop_ops/s=A tokio_ops/s=B
//! ratio=R`, each rate the median of R repetitions (default 3), each
//! repetition running this crate then tokio, and the ratio the median of
//! the repetitions' ratios.
//!
//! `tasks`: N tasks that each spawn, sleep 1 ms and wake, on this crate's
//! loop (virtual clock) and on tokio's current-thread runtime with a
//! `LocalSet` (paused clock, which auto-advances: neither side waits for
//! real time). Ops are tasks completed. N defaults to 1,000,000. A
//! second line, `tasks-spawn`, runs tokio without the `LocalSet`
//! (`tokio::spawn` of the same, `Send`, futures), which spares it the
//! `LocalSet`'s own queue and waker: what a tokio user whose tasks can be
//! `Send` writes.
//!
//! `sleeps`: the sleep alone, without the spawn: [`SLEEPERS`] tasks
//! each sleep 1 ms N / [`SLEEPERS`] times in a row, so every millisecond
//! a thousand sleeps fire together and their tasks make the next ones (a
//! server's connections each waiting on a timeout). Same runtimes and
//! clocks as `tasks`. Ops are sleeps completed; N defaults to 1,000,000.
//! `sleeps-spawn`: the same with tokio's tasks spawned without the
//! `LocalSet`, as `tasks-spawn`.
//!
//! `semaphore`: `timerloop::sync::Semaphore` against
//! `tokio::sync::Semaphore`, two workloads of N acquire-and-release ops
//! each, one line per workload (`rivals semaphore-uncontended ...`,
//! `rivals semaphore-contended ...`). N defaults to 1,000,000.
//!
//! - *uncontended*: one task acquires 1 from a free semaphore and drops
//!   the permit, N times (the fast path of the future, and a release with
//!   nobody to wake);
//! - *contended*: [`CONTENDERS`] tasks on one loop (tokio: current-thread
//!   runtime and `LocalSet`) cycle through a semaphore of 1, each holding
//!   it across a `yield_now`, so every acquire but the first queues and is
//!   granted by the release of the task before it (a FIFO ring: queue,
//!   grant, wake, poll).
//!
//! `wake`: cross-thread wakes, N round trips of a ping-pong between two
//! threads (N defaults to [`WAKE_N`]). Thread B runs the runtime: this
//! crate's loop on the real clock (`EventLoop::new`), or tokio's
//! current-thread runtime with `enable_all()` (so both park in epoll and
//! are woken through an eventfd). On it one task starts waiting (its
//! first poll of the wait registers its waker) and then says so through a
//! std channel; thread A, a plain thread blocked on that channel, then
//! wakes it. So every round trip is a wake, from another thread, of a
//! pending task (never a fast path that finds the wake already done);
//! B's runtime may or may not have parked by then, as in a program. Ops
//! are round trips; A's side and the task's code are the same for both
//! runtimes. Two lines:
//!
//! - *wake-notify*: the task awaits a `tokio::sync::Notify` and A calls
//!   `notify_one`: the very same primitive on both runtimes, so the
//!   difference is the executor's path from a foreign thread's wake to the
//!   task's poll (timerloop: the loop's cross-thread queue, an I/O
//!   callback in the poll phase, then the task as a microtask). A pending
//!   task keeps nothing alive by itself on timerloop, so a refed `Remote`
//!   keeps the loop waiting, as a program waiting for another thread
//!   would;
//! - *wake-semaphore*: each runtime's own semaphore: the task acquires 1
//!   and forgets it, A gives 1 back (`Semaphore::release(1)`, tokio's
//!   `add_permits(1)`), which grants the waiting acquire and calls its
//!   waker on thread A.
//!
//! `timers-refresh-idle`: the idle-timeout server pattern of the suite
//! workload of that name (`workloads.rs`: 10,000 timeouts of 1,000 ms, the
//! 10 idle connections' timeouts due and the rest freshly refreshed when the
//! timed region starts, then N refreshes round-robin over the 9,990 live
//! ones, 1,000 per loop iteration; the 10 idle ones fire in the first
//! iteration), this crate's `refresh` against tokio-util's
//! `DelayQueue::reset` (the `tokio_ops/s` column). N defaults to
//! 10,000,000. Both clocks are virtual and stand still while timed
//! (timerloop's `VirtualClock`, an atomic load per read; tokio's paused
//! clock, which `DelayQueue::reset` reads through `Instant::now()`, a
//! mutex per read): neither side reads the OS clock, so neither pays a
//! `clock_gettime` the other does not. A loop iteration is, on timerloop,
//! a `set_immediate` chain whose every iteration runs the timers phase
//! (which fires the idle timeouts) and then one batch; on tokio, one
//! `yield_now` in `block_on` (a turn of the runtime, whose time driver
//! then fires what is due without advancing the paused clock), then
//! `poll_expired` until it has nothing more, then one batch. Untimed
//! set-up: the timeouts are made in index order (`DelayQueue::insert`),
//! time moves 1,010 ms, every live one is refreshed (reset) once.
//!
//! `timers-refresh-idle-real`: the same on real clocks, a server's case:
//! timerloop's `EventLoop::new` (every refresh reads the clock: the
//! TSC, and the OS clock about once a millisecond), and a tokio runtime
//! not paused (`DelayQueue::reset` reads `Instant::now()`, the OS clock).
//! The set-up waits the 1,010 ms for real, on each side, every
//! repetition.
//!
//! `all`: `tasks`, `sleeps`, `semaphore`, `wake` and
//! `timers-refresh-idle` in one run, ten lines. Without N each uses its own default; with N, `wake`
//! does N / 10 round trips (a round trip between two threads costs a
//! hundred times an acquire or more, so the run stays short) and
//! `timers-refresh-idle` N × 10 refreshes (a refresh costs a tenth of a
//! task or less).

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::workloads::{
    IDLE_CONNS, IDLE_EVERY, IDLE_FIRED, IDLE_MS, IDLE_SLACK_MS, LINES_PER_ITERATION, Lines,
    idle_connections, refresh_lines,
};
use super::{die, flag_value, median, parse_count};

fn timerloop_tasks(n: u64) -> f64 {
    let mut lp = timerloop::EventLoop::with_virtual_clock();
    let start = Instant::now();
    for _ in 0..n {
        lp.spawn(async {
            timerloop::time::sleep(Duration::from_millis(1)).await;
        });
    }
    lp.run().expect("the tasks run");
    assert_eq!(lp.stats().tasks, 0, "every task completed");
    n as f64 / start.elapsed().as_secs_f64()
}

/// Tokio's current-thread runtime with its clock paused (it auto-advances:
/// no side waits for real time), the rival of a virtual-clock loop.
fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime")
}

fn tokio_tasks(n: u64) -> f64 {
    let rt = paused_runtime();
    let local = tokio::task::LocalSet::new();
    let start = Instant::now();
    for _ in 0..n {
        local.spawn_local(async {
            tokio::time::sleep(Duration::from_millis(1)).await;
        });
    }
    // A LocalSet is a future that completes when its tasks have.
    rt.block_on(local);
    n as f64 / start.elapsed().as_secs_f64()
}

/// `tasks` on tokio without a `LocalSet`: `tokio::spawn` on the
/// current-thread runtime (the futures are `Send`), as a tokio user whose
/// tasks can be `Send` writes it; the `block_on` future waits past the
/// sleeps' millisecond, by which the paused clock has fired them all.
fn tokio_tasks_spawn(n: u64) -> f64 {
    let rt = paused_runtime();
    let start = Instant::now();
    rt.block_on(async {
        for _ in 0..n {
            tokio::spawn(async {
                tokio::time::sleep(Duration::from_millis(1)).await;
            });
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    });
    let rate = n as f64 / start.elapsed().as_secs_f64();
    assert_eq!(rt.metrics().num_alive_tasks(), 0, "every task completed");
    rate
}

/// Tasks in the `sleeps` workload.
const SLEEPERS: u64 = 1_000;

fn timerloop_sleeps(n: u64) -> f64 {
    let per = (n / SLEEPERS).max(1);
    let mut lp = timerloop::EventLoop::with_virtual_clock();
    let start = Instant::now();
    for _ in 0..SLEEPERS {
        lp.spawn(async move {
            for _ in 0..per {
                timerloop::time::sleep(Duration::from_millis(1)).await;
            }
        });
    }
    lp.run().expect("the sleepers run");
    let elapsed = start.elapsed().as_secs_f64();
    assert_eq!(lp.now(), per, "one millisecond per round of sleeps");
    (SLEEPERS * per) as f64 / elapsed
}

fn tokio_sleeps(n: u64) -> f64 {
    let per = (n / SLEEPERS).max(1);
    let rt = paused_runtime();
    let local = tokio::task::LocalSet::new();
    let start = Instant::now();
    for _ in 0..SLEEPERS {
        local.spawn_local(async move {
            for _ in 0..per {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        });
    }
    rt.block_on(local);
    (SLEEPERS * per) as f64 / start.elapsed().as_secs_f64()
}

/// `sleeps` on tokio without a `LocalSet` (see [`tokio_tasks_spawn`]).
fn tokio_sleeps_spawn(n: u64) -> f64 {
    let per = (n / SLEEPERS).max(1);
    let rt = paused_runtime();
    let start = Instant::now();
    rt.block_on(async {
        for _ in 0..SLEEPERS {
            tokio::spawn(async move {
                for _ in 0..per {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            });
        }
        tokio::time::sleep(Duration::from_millis(per + 1)).await;
    });
    let rate = (SLEEPERS * per) as f64 / start.elapsed().as_secs_f64();
    assert_eq!(rt.metrics().num_alive_tasks(), 0, "every sleeper finished");
    rate
}

/// Tasks in the contended semaphore workload.
const CONTENDERS: u64 = 4;

fn timerloop_sem_uncontended(n: u64) -> f64 {
    let sem = timerloop::sync::Semaphore::new(1);
    let mut lp = timerloop::EventLoop::with_virtual_clock();
    let start = Instant::now();
    lp.block_on(async move {
        for _ in 0..n {
            drop(std::hint::black_box(sem.acquire(1).await));
        }
        assert_eq!(sem.available(), 1);
    })
    .expect("the acquires complete");
    n as f64 / start.elapsed().as_secs_f64()
}

fn tokio_sem_uncontended(n: u64) -> f64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    let sem = tokio::sync::Semaphore::new(1);
    let start = Instant::now();
    rt.block_on(async {
        for _ in 0..n {
            drop(std::hint::black_box(sem.acquire().await.expect("open")));
        }
    });
    assert_eq!(sem.available_permits(), 1);
    n as f64 / start.elapsed().as_secs_f64()
}

fn timerloop_sem_contended(n: u64) -> f64 {
    use timerloop::{sync::Semaphore, task};
    let sem = std::rc::Rc::new(Semaphore::new(1));
    let mut lp = timerloop::EventLoop::with_virtual_clock();
    let start = Instant::now();
    for _ in 0..CONTENDERS {
        let sem = sem.clone();
        lp.spawn(async move {
            for _ in 0..n / CONTENDERS {
                let permit = sem.acquire(1).await;
                task::yield_now().await;
                drop(permit);
            }
        });
    }
    lp.run().expect("the tasks run");
    assert_eq!(lp.stats().tasks, 0, "every task completed");
    assert_eq!(sem.available(), 1);
    (n / CONTENDERS * CONTENDERS) as f64 / start.elapsed().as_secs_f64()
}

fn tokio_sem_contended(n: u64) -> f64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    let sem = std::rc::Rc::new(tokio::sync::Semaphore::new(1));
    let local = tokio::task::LocalSet::new();
    let start = Instant::now();
    for _ in 0..CONTENDERS {
        let sem = sem.clone();
        local.spawn_local(async move {
            for _ in 0..n / CONTENDERS {
                let permit = sem.acquire().await.expect("open");
                tokio::task::yield_now().await;
                drop(permit);
            }
        });
    }
    rt.block_on(local);
    assert_eq!(sem.available_permits(), 1);
    (n / CONTENDERS * CONTENDERS) as f64 / start.elapsed().as_secs_f64()
}

/// Round trips in the `wake` workloads when no N is given.
const WAKE_N: u64 = 100_000;

/// Thread A's side of a `wake` workload, the same for both runtimes: waits
/// until B's task waits, then N times wakes it with `wake` and blocks
/// until it says it waits again (or, the last time, that it is done).
/// Joins B; returns round trips per second.
fn ping(n: u64, b: JoinHandle<()>, back: mpsc::Receiver<()>, mut wake: impl FnMut()) -> f64 {
    back.recv().expect("B's task waits");
    let start = Instant::now();
    for _ in 0..n {
        wake();
        back.recv().expect("B's task answers");
    }
    let elapsed = start.elapsed();
    b.join().expect("B ends");
    n as f64 / elapsed.as_secs_f64()
}

/// The task on thread B, the same for both runtimes: N times, awaits
/// `wait()`, telling A through `back` once it waits (after the first poll,
/// which registers its waker; it must be pending, as A wakes it only after
/// hearing this, so every round trip is a wake of a pending task from
/// another thread, never a fast path); then tells A it is done.
async fn pong<W: Future<Output = ()>>(n: u64, back: mpsc::Sender<()>, mut wait: impl FnMut() -> W) {
    for _ in 0..n {
        let mut w = pin!(wait());
        let mut first = true;
        poll_fn(|cx| {
            let r = w.as_mut().poll(cx);
            if std::mem::take(&mut first) {
                assert!(r.is_pending(), "A wakes only a waiting task");
                back.send(()).expect("A listens");
            }
            r
        })
        .await;
    }
    back.send(()).expect("A listens");
}

/// Runs `task` on a new thread B, on a timerloop loop (real clock) kept
/// alive by a refed `Remote` (a task waiting on a tokio `Notify` keeps
/// nothing alive by itself).
fn on_timerloop(task: impl Future<Output = ()> + Send + 'static) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut lp = timerloop::EventLoop::new();
        let remote = lp.remote();
        lp.block_on(task).expect("B's task completes");
        drop(remote);
    })
}

/// Runs `task` on a new thread B, on a tokio current-thread runtime with
/// every driver enabled (I/O included, so it parks in epoll).
fn on_tokio(task: impl Future<Output = ()> + Send + 'static) -> JoinHandle<()> {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime")
            .block_on(task);
    })
}

fn timerloop_wake_notify(n: u64) -> f64 {
    let notify = Arc::new(tokio::sync::Notify::new());
    let (tx, rx) = mpsc::channel();
    let nt = notify.clone();
    let b = on_timerloop(async move { pong(n, tx, || nt.notified()).await });
    ping(n, b, rx, || notify.notify_one())
}

fn tokio_wake_notify(n: u64) -> f64 {
    let notify = Arc::new(tokio::sync::Notify::new());
    let (tx, rx) = mpsc::channel();
    let nt = notify.clone();
    let b = on_tokio(async move { pong(n, tx, || nt.notified()).await });
    ping(n, b, rx, || notify.notify_one())
}

fn timerloop_wake_semaphore(n: u64) -> f64 {
    let sem = Arc::new(timerloop::sync::Semaphore::new(1));
    sem.try_acquire(1).expect("free").forget();
    let (tx, rx) = mpsc::channel();
    let s = sem.clone();
    let b = on_timerloop(async move {
        let s = &*s;
        pong(n, tx, || async move { s.acquire(1).await.forget() }).await
    });
    let rate = ping(n, b, rx, || sem.release(1).expect("1 is held"));
    assert_eq!(sem.available(), 0, "B took every token A gave back");
    rate
}

fn tokio_wake_semaphore(n: u64) -> f64 {
    let sem = Arc::new(tokio::sync::Semaphore::new(0));
    let (tx, rx) = mpsc::channel();
    let s = sem.clone();
    let b = on_tokio(async move {
        let s = &*s;
        pong(n, tx, || async move {
            s.acquire().await.expect("open").forget()
        })
        .await
    });
    let rate = ping(n, b, rx, || sem.add_permits(1));
    assert_eq!(sem.available_permits(), 0, "B took every permit A added");
    rate
}

/// `timers-refresh-idle` on timerloop's virtual clock: the suite twin's
/// set-up and batches, with the clock advanced instead of slept on; the
/// last batch stops the loop (the live timeouts stay pending).
fn timerloop_refresh_idle(n: u64) -> f64 {
    refresh_idle_on(n, false)
}

/// `timers-refresh-idle` on the real clock (`EventLoop::new`): what a
/// server pays, a clock read in every refresh (the TSC, and the OS clock
/// once a millisecond); the set-up waits the 1,010 ms for real.
fn timerloop_refresh_idle_real(n: u64) -> f64 {
    refresh_idle_on(n, true)
}

fn refresh_idle_on(n: u64, real: bool) -> f64 {
    use std::cell::Cell;
    use std::rc::Rc;
    use timerloop::EventLoop;

    type Done = Rc<Cell<Option<Duration>>>;
    fn batch(lp: &mut EventLoop, mut lines: Lines, t0: Instant, done: Done) {
        if refresh_lines(lp, &mut lines) {
            done.set(Some(t0.elapsed()));
            lp.stop();
            return;
        }
        lp.set_immediate(move |lp: &mut EventLoop| batch(lp, lines, t0, done));
    }

    IDLE_FIRED.set(0);
    let mut lp = if real {
        EventLoop::new()
    } else {
        EventLoop::with_virtual_clock()
    };
    let live = idle_connections(&mut lp);
    let idle = Duration::from_millis(IDLE_MS + IDLE_SLACK_MS);
    match lp.virtual_clock() {
        Some(clock) => clock.advance(idle),
        None => std::thread::sleep(idle),
    }
    for &t in &live {
        lp.refresh(t).expect("a pending timeout");
    }
    let lines = Lines {
        live,
        next: 0,
        left: n,
    };
    let done: Done = Rc::default();
    let d = done.clone();
    let t0 = Instant::now();
    lp.set_immediate(move |lp: &mut EventLoop| batch(lp, lines, t0, d));
    lp.run().expect("no live connection times out");
    let elapsed = done.get().expect("the last batch ran");
    assert_eq!(IDLE_FIRED.get(), (IDLE_CONNS / IDLE_EVERY) as u64);
    n as f64 / elapsed.as_secs_f64()
}

/// `timers-refresh-idle` on tokio-util's `DelayQueue` (paused clock): the
/// same keys in the same order, `reset` for `refresh`.
fn delayqueue_refresh_idle(n: u64) -> f64 {
    delayqueue_refresh_idle_on(n, paused_runtime())
}

/// The same on a runtime whose clock is real: `DelayQueue::reset` reads
/// `Instant::now()` (the OS clock) every time, as in a server.
fn delayqueue_refresh_idle_real(n: u64) -> f64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    delayqueue_refresh_idle_on(n, rt)
}

fn delayqueue_refresh_idle_on(n: u64, rt: tokio::runtime::Runtime) -> f64 {
    use std::task::Poll;
    use tokio_util::time::DelayQueue;

    rt.block_on(async move {
        let idle_ms = Duration::from_millis(IDLE_MS);
        // The value: whether the connection is idle.
        let mut dq: DelayQueue<bool> = DelayQueue::with_capacity(IDLE_CONNS);
        let mut live = Vec::with_capacity(IDLE_CONNS);
        for i in 0..IDLE_CONNS {
            let idle = i % IDLE_EVERY == 0;
            let key = dq.insert(idle, idle_ms);
            if !idle {
                live.push(key);
            }
        }
        // The paused clock moves at once; a real one is waited for.
        tokio::time::sleep(Duration::from_millis(IDLE_MS + IDLE_SLACK_MS)).await;
        for k in &live {
            dq.reset(k, idle_ms);
        }
        let mut fired = 0;
        let (mut next, mut left) = (0, n);
        let t0 = Instant::now();
        loop {
            // A turn of the runtime: the time driver fires what is due.
            tokio::task::yield_now().await;
            // The timers phase: whatever expired, without waiting.
            while let Poll::Ready(Some(e)) = poll_fn(|cx| Poll::Ready(dq.poll_expired(cx))).await {
                assert!(e.into_inner(), "a refreshed connection timed out");
                fired += 1;
            }
            let k = left.min(LINES_PER_ITERATION);
            for _ in 0..k {
                dq.reset(&live[next], idle_ms);
                next += 1;
                if next == live.len() {
                    next = 0;
                }
            }
            left -= k;
            if left == 0 {
                break;
            }
        }
        let elapsed = t0.elapsed();
        assert_eq!(fired, (IDLE_CONNS / IDLE_EVERY) as u64);
        n as f64 / elapsed.as_secs_f64()
    })
}

/// Runs `ours` and `theirs` alternately `reps` times and prints the medians
/// as `rivals NAME n=N timerloop_ops/s=A tokio_ops/s=B ratio=A/B`.
fn compare(name: &str, n: u64, reps: u64, ours: fn(u64) -> f64, theirs: fn(u64) -> f64) {
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut ratios = Vec::new();
    for _ in 0..reps {
        let (x, y) = (ours(n), theirs(n));
        a.push(x);
        b.push(y);
        ratios.push(x / y);
    }
    // The ratio is the median of the per-repetition ratios (each pair ran
    // back to back, so both sides saw the same machine), as the suite's
    // table does: steadier than the ratio of the two medians on a VM
    // whose speed drifts.
    let (a, b, ratio) = (median(a), median(b), median(ratios));
    println!("rivals {name} n={n} timerloop_ops/s={a:.1} tokio_ops/s={b:.1} ratio={ratio:.2}");
}

const USAGE: &str =
    "usage: rivals (tasks | sleeps | semaphore | wake | timers-refresh-idle | all) [N] [--reps R]";

fn tasks(n: Option<u64>, reps: u64) {
    let n = n.unwrap_or(1_000_000);
    compare("tasks", n, reps, timerloop_tasks, tokio_tasks);
    compare("tasks-spawn", n, reps, timerloop_tasks, tokio_tasks_spawn);
}

fn sleeps(n: Option<u64>, reps: u64) {
    let n = n.unwrap_or(1_000_000);
    compare("sleeps", n, reps, timerloop_sleeps, tokio_sleeps);
    compare(
        "sleeps-spawn",
        n,
        reps,
        timerloop_sleeps,
        tokio_sleeps_spawn,
    );
}

fn semaphore(n: Option<u64>, reps: u64) {
    let n = n.unwrap_or(1_000_000);
    compare(
        "semaphore-uncontended",
        n,
        reps,
        timerloop_sem_uncontended,
        tokio_sem_uncontended,
    );
    compare(
        "semaphore-contended",
        n,
        reps,
        timerloop_sem_contended,
        tokio_sem_contended,
    );
}

fn wake(n: Option<u64>, reps: u64) {
    let n = n.unwrap_or(WAKE_N);
    compare(
        "wake-notify",
        n,
        reps,
        timerloop_wake_notify,
        tokio_wake_notify,
    );
    compare(
        "wake-semaphore",
        n,
        reps,
        timerloop_wake_semaphore,
        tokio_wake_semaphore,
    );
}

fn refresh_idle(n: Option<u64>, reps: u64) {
    let n = n.unwrap_or(10_000_000);
    compare(
        "timers-refresh-idle",
        n,
        reps,
        timerloop_refresh_idle,
        delayqueue_refresh_idle,
    );
    compare(
        "timers-refresh-idle-real",
        n,
        reps,
        timerloop_refresh_idle_real,
        delayqueue_refresh_idle_real,
    );
}

pub(crate) fn main(args: &[String]) {
    let (Some(what), rest) = (args.first(), args.get(1..).unwrap_or_default()) else {
        die(USAGE);
    };
    let n = rest
        .first()
        .filter(|a| !a.starts_with("--"))
        .map(|s| parse_count(s).unwrap_or_else(|| die("bad N")));
    let reps = flag_value(rest, "--reps")
        .map(|s| parse_count(s).unwrap_or_else(|| die("bad --reps")))
        .unwrap_or(3);
    match what.as_str() {
        "tasks" => tasks(n, reps),
        "sleeps" => sleeps(n, reps),
        "semaphore" => semaphore(n, reps),
        "wake" => wake(n, reps),
        "timers-refresh-idle" => refresh_idle(n, reps),
        "all" => {
            tasks(n, reps);
            sleeps(n, reps);
            semaphore(n, reps);
            wake(n.map(|n| (n / 10).max(1)), reps);
            refresh_idle(n.map(|n| n.saturating_mul(10)), reps);
        }
        other => die(&format!("unknown rival workload {other}; {USAGE}")),
    }
}
