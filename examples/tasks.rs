//! A few hundred tasks on one loop: some sleep, some race a timeout, some
//! tick an interval; then a summary. Run with
//! `cargo run --release --example tasks [-- --virtual]`
//! (`--virtual`: a virtual clock, so it finishes at once with exact times).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use timerloop::time::{self, Instant};
use timerloop::{EventLoop, task};

#[derive(Default)]
struct Summary {
    slept: u32,
    timed_out: u32,
    in_time: u32,
    ticks: u32,
    latest_ms: u64,
}

fn main() -> Result<(), timerloop::Error> {
    let virtual_clock = std::env::args().any(|a| a == "--virtual");
    let mut lp = if virtual_clock {
        EventLoop::with_virtual_clock()
    } else {
        EventLoop::new()
    };
    let summary = Rc::new(RefCell::new(Summary::default()));
    let wall = std::time::Instant::now();

    let report = lp.block_on({
        let summary = summary.clone();
        async move {
            let start = Instant::now();
            let mut handles = Vec::new();
            for i in 0..300u64 {
                let s = summary.clone();
                handles.push(task::spawn(async move {
                    match i % 3 {
                        // Sleep 1 to 100 ms.
                        0 => {
                            time::sleep(Duration::from_millis(1 + i % 100)).await;
                            s.borrow_mut().slept += 1;
                        }
                        // Race a sleep against a 50 ms timeout.
                        1 => {
                            let work = time::sleep(Duration::from_millis(i % 100));
                            match time::timeout(Duration::from_millis(50), work).await {
                                Ok(()) => s.borrow_mut().in_time += 1,
                                Err(_elapsed) => s.borrow_mut().timed_out += 1,
                            }
                        }
                        // Five ticks of a 10 to 29 ms interval.
                        _ => {
                            let mut iv = time::interval(Duration::from_millis(10 + i % 20));
                            for _ in 0..5 {
                                iv.tick().await;
                                s.borrow_mut().ticks += 1;
                            }
                        }
                    }
                    let done = start.elapsed().as_millis() as u64;
                    let mut s = s.borrow_mut();
                    s.latest_ms = s.latest_ms.max(done);
                }));
            }
            for h in handles {
                h.await.expect("no task panics");
            }
            start.elapsed()
        }
    })?;

    let s = summary.borrow();
    println!(
        "300 tasks on one {} loop: {} slept, {} beat their timeout, {} timed out, {} interval ticks",
        if virtual_clock {
            "virtual-clock"
        } else {
            "real-clock"
        },
        s.slept,
        s.in_time,
        s.timed_out,
        s.ticks
    );
    println!(
        "the last finished at {} ms of loop time ({} ms in all); wall clock {:.1} ms",
        s.latest_ms,
        report.as_millis(),
        wall.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}
