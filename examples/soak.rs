//! Soak: churns millions of timer operations through one loop on the
//! virtual clock and reports throughput and peak memory.
//!
//! ```text
//! cargo run --release --example soak -- [--ops 10000000] [--live 100000] [--seed N]
//! ```
//!
//! Each step is one operation, picked at random: insert a timeout (mixed
//! durations: 1-10 ms on a few shared lists, up to 1 s, and up to 100 s on
//! distinct lists), insert an interval (0.1 to 5 s), clear a live timer,
//! refresh a live timer, or advance the virtual clock by 0-2 ms and run the
//! loop without waiting, which fires whatever is due (each callback that
//! runs counts as one operation too). Above `--live` live timers, inserts
//! slow down and clears speed up, which bounds the pool. At the end
//! everything is cleared, the loop runs out, and the program checks that
//! the loop holds nothing (exit status 1 if it does).
//!
//! It prints the operations by kind, the throughput in operations per
//! second, and the peak resident set size (`VmHWM` from
//! `/proc/self/status`).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use timerloop::{EventLoop, Stats, Timeout};

/// splitmix64: a small, fast, deterministic PRNG.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A field of `/proc/self/status` in kB (`VmHWM`, `VmRSS`), if readable.
fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

struct Args {
    ops: u64,
    live: usize,
    seed: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        ops: 10_000_000,
        live: 100_000,
        seed: 0x5eed,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .and_then(|v| v.replace('_', "").parse::<u64>().ok())
                .ok_or_else(|| format!("{flag} needs a number"))
        };
        match flag.as_str() {
            "--ops" => args.ops = value()?,
            "--live" => args.live = usize::try_from(value()?).map_err(|e| e.to_string())?,
            "--seed" => args.seed = value()?,
            "-h" | "--help" => {
                return Err("usage: soak [--ops N] [--live N] [--seed N]".into());
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(args)
}

#[derive(Default)]
struct Counts {
    inserts: u64,
    intervals: u64,
    clears: u64,
    refreshes: u64,
    runs: u64,
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut rng = Rng(args.seed);
    let mut lp = EventLoop::with_virtual_clock();
    let clock = lp.virtual_clock().expect("virtual clock").clone();
    let fired = Rc::new(Cell::new(0u64));
    let mut live: Vec<Timeout> = Vec::with_capacity(args.live * 2);
    let mut c = Counts::default();
    let mut peak_live = 0usize;

    let started = Instant::now();
    let mut done = 0u64;
    while done + fired.get() < args.ops {
        let roll = rng.below(100);
        // Keep the number of live timers near the target: insert more
        // below it, clear more above it.
        let (insert_pct, clear_pct) = if live.len() < args.live {
            (45, 60)
        } else {
            (30, 60)
        };
        if roll < insert_pct {
            let d = match rng.below(10) {
                0..=2 => 1 + rng.below(10),
                3..=5 => rng.below(1_000),
                _ => rng.below(100_000),
            };
            let f = fired.clone();
            let t = if rng.below(200) == 0 {
                c.intervals += 1;
                lp.set_interval(100 + d % 5_000, move |_| f.set(f.get() + 1))
            } else {
                c.inserts += 1;
                lp.set_timeout(d, move |_| f.set(f.get() + 1))
            };
            live.push(t);
        } else if roll < 85 {
            // Pick a live timer; a timeout that fired since is dropped from
            // the pool without counting.
            let Some((i, t)) = pick(&lp, &mut live, &mut rng) else {
                continue;
            };
            if roll < clear_pct {
                c.clears += 1;
                live.swap_remove(i);
                lp.clear_timeout(t).expect("a pending timer clears");
            } else {
                c.refreshes += 1;
                lp.refresh(t).expect("a pending timer refreshes");
            }
        } else {
            c.runs += 1;
            clock.advance(Duration::from_millis(rng.below(3)));
            if let Err(e) = lp.run_nowait() {
                eprintln!("run_nowait failed: {e}");
                std::process::exit(1);
            }
        }
        done += 1;
        peak_live = peak_live.max(live.len());
    }
    let elapsed = started.elapsed();
    let total = done + fired.get();

    let before_cleanup = lp.stats();
    for t in live.drain(..) {
        lp.clear_timeout(t).expect("a live timer clears");
    }
    if let Err(e) = lp.run() {
        eprintln!("final run failed: {e}");
        std::process::exit(1);
    }
    let end = lp.stats();

    let secs = elapsed.as_secs_f64();
    println!(
        "timerloop soak: seed {:#x}, target {} ops",
        args.seed, args.ops
    );
    println!(
        "  operations   {total} in {secs:.2} s = {:.2} M ops/s",
        total as f64 / secs / 1e6
    );
    println!(
        "    inserts {}  intervals {}  clears {}  refreshes {}  fires {}  clock steps {}",
        c.inserts,
        c.intervals,
        c.clears,
        c.refreshes,
        fired.get(),
        c.runs
    );
    println!(
        "  live timers  peak {peak_live}, at the end {} in {} lists",
        before_cleanup.timers, before_cleanup.lists
    );
    println!("  virtual time {} ms", lp.now());
    match (status_kb("VmHWM:"), status_kb("VmRSS:")) {
        (Some(hwm), Some(rss)) => println!(
            "  memory       peak RSS (VmHWM) {:.1} MB, RSS now {:.1} MB",
            hwm as f64 / 1024.0,
            rss as f64 / 1024.0
        ),
        _ => println!("  memory       /proc/self/status not readable"),
    }
    if end != Stats::default() {
        println!("  LEAK: after clearing everything and running out, stats {end:?}");
        std::process::exit(1);
    }
    println!("  after clearing everything: stats all zero");
}

/// A random timer of the pool that is still pending; fired timeouts met on
/// the way are removed from the pool.
fn pick(lp: &EventLoop, live: &mut Vec<Timeout>, rng: &mut Rng) -> Option<(usize, Timeout)> {
    while !live.is_empty() {
        let i = rng.below(live.len() as u64) as usize;
        let t = live[i];
        if lp.timeout_is_pending(t) {
            return Some((i, t));
        }
        live.swap_remove(i);
    }
    None
}
