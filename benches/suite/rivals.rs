//! Workloads measured against their natural rival in one process, one
//! after the other, with the ratio printed.
//!
//! ```text
//! rivals tasks [N] [--reps R]
//! ```
//!
//! `tasks`: N tasks that each spawn, sleep 1 ms and wake, on this crate's
//! loop (virtual clock) and on tokio's current-thread runtime with a
//! `LocalSet` (paused clock, which auto-advances: neither side waits for
//! real time). Ops are tasks completed; prints
//! `rivals tasks n=N timerloop_ops/s=A tokio_ops/s=B ratio=A/B`, each rate
//! the median of R repetitions.

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

pub(crate) fn main(args: &[String]) {
    let (Some(what), rest) = (args.first(), args.get(1..).unwrap_or_default()) else {
        die("usage: rivals tasks [N] [--reps R]");
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
        "tasks" => {
            let mut ours = Vec::new();
            let mut theirs = Vec::new();
            for _ in 0..reps {
                ours.push(timerloop_tasks(n));
                theirs.push(tokio_tasks(n));
            }
            let (a, b) = (median(ours), median(theirs));
            println!(
                "rivals tasks n={n} timerloop_ops/s={a:.1} tokio_ops/s={b:.1} ratio={:.2}",
                a / b
            );
        }
        other => die(&format!("unknown rival workload {other}")),
    }
}
