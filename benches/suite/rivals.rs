//! Workloads measured against their natural rival in one process, one
//! after the other, with the ratio printed.
//!
//! ```text
//! rivals tasks [N] [--reps R]
//! rivals semaphore [N] [--reps R]
//! ```
//!
//! `tasks`: N tasks that each spawn, sleep 1 ms and wake, on this crate's
//! loop (virtual clock) and on tokio's current-thread runtime with a
//! `LocalSet` (paused clock, which auto-advances: neither side waits for
//! real time). Ops are tasks completed; prints
//! `rivals tasks n=N timerloop_ops/s=A tokio_ops/s=B ratio=A/B`, each rate
//! the median of R repetitions.
//!
//! `semaphore`: `timerloop::sync::Semaphore` against
//! `tokio::sync::Semaphore`, two workloads of N acquire-and-release ops
//! each, one line per workload (`rivals semaphore-uncontended ...`,
//! `rivals semaphore-contended ...`, same fields):
//!
//! - *uncontended*: one task acquires 1 from a free semaphore and drops
//!   the permit, N times (the fast path of the future, and a release with
//!   nobody to wake);
//! - *contended*: [`CONTENDERS`] tasks on one loop (tokio: current-thread
//!   runtime and `LocalSet`) cycle through a semaphore of 1, each holding
//!   it across a `yield_now`, so every acquire but the first queues and is
//!   granted by the release of the task before it (a FIFO ring: queue,
//!   grant, wake, poll).

use std::time::{Duration, Instant};

use super::{die, flag_value, parse_count};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

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

fn tokio_tasks(n: u64) -> f64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
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

/// Runs `ours` and `theirs` alternately `reps` times and prints the medians
/// as `rivals NAME n=N timerloop_ops/s=A tokio_ops/s=B ratio=A/B`.
fn compare(name: &str, n: u64, reps: u64, ours: fn(u64) -> f64, theirs: fn(u64) -> f64) {
    let mut a = Vec::new();
    let mut b = Vec::new();
    for _ in 0..reps {
        a.push(ours(n));
        b.push(theirs(n));
    }
    let (a, b) = (median(a), median(b));
    println!(
        "rivals {name} n={n} timerloop_ops/s={a:.1} tokio_ops/s={b:.1} ratio={:.2}",
        a / b
    );
}

pub(crate) fn main(args: &[String]) {
    let (Some(what), rest) = (args.first(), args.get(1..).unwrap_or_default()) else {
        die("usage: rivals (tasks | semaphore) [N] [--reps R]");
    };
    let n = rest
        .first()
        .filter(|a| !a.starts_with("--"))
        .map(|s| parse_count(s).unwrap_or_else(|| die("bad N")))
        .unwrap_or(1_000_000);
    let reps = flag_value(rest, "--reps")
        .map(|s| parse_count(s).unwrap_or_else(|| die("bad --reps")))
        .unwrap_or(3);
    match what.as_str() {
        "tasks" => compare("tasks", n, reps, timerloop_tasks, tokio_tasks),
        "semaphore" => {
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
        other => die(&format!("unknown rival workload {other}")),
    }
}
