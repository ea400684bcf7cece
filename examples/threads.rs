//! Four worker threads, each running its own `EventLoop` (real clock),
//! share one weighted `sync::Semaphore` of 8 tokens: a pool of jobs
//! limited by how many tokens (say, megabytes of a budget) they need at
//! once. On each thread a job arrives every 3 ms, weighing 1 to 8 tokens
//! (an 8 needs the whole pool: it waits for everyone queued before it, and
//! everyone queued after it waits for it, small or not: Go's FIFO, no
//! barging). A job acquires with a patience of 20 ms,
//! `time::timeout(d, sem.acquire_owned(n))`, and queues again at the back
//! when that runs out; then it works (a `time::sleep` of 1 to 5 ms on its
//! own loop) and drops its permit, which grants the waiters that now fit,
//! often on other threads: the release wakes a task of another loop, which
//! that loop runs as a microtask after its poll phase.
//!
//! A waiting acquire keeps its loop alive, so each worker's `run()`
//! returns only once all its jobs are done. The summary shows that nothing
//! was lost (every job done, never more tokens in use than the size, every
//! token back at the end) and counts the waiters' wakes by where they came
//! from (a waker that counts is passed to each acquire).
//!
//! Run with `cargo run --release --example threads` (about 0.1 s).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};
use std::thread::{self, ThreadId};
use std::time::Duration;

use timerloop::sync::Semaphore;
use timerloop::{EventLoop, time};

const WORKERS: u64 = 4;
const JOBS_PER_WORKER: u64 = 16;
const TOKENS: u64 = 8;
const PATIENCE: Duration = Duration::from_millis(20);
/// The weights jobs cycle through (each worker starts at another place).
const WEIGHTS: [u64; 8] = [1, 2, 3, 1, 4, 2, 1, 8];

#[derive(Default)]
struct Counts {
    done: AtomicU64,
    timeouts: AtomicU64,
    in_use: AtomicU64,
    max_in_use: AtomicU64,
    woken_from_other_thread: AtomicU64,
    woken_from_own_thread: AtomicU64,
}

/// A waker that counts where it is called from, then wakes the task: the
/// semaphore calls a waiter's waker on the thread that released the
/// tokens.
struct CountingWaker {
    task: Waker,
    home: ThreadId,
    counts: Arc<Counts>,
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let counter = if thread::current().id() == self.home {
            &self.counts.woken_from_own_thread
        } else {
            &self.counts.woken_from_other_thread
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.task.wake_by_ref();
    }
}

/// Awaits `fut`, passing it a [`CountingWaker`].
async fn counting_wakes<F: Future + Unpin>(mut fut: F, counts: Arc<Counts>) -> F::Output {
    std::future::poll_fn(move |cx: &mut Context<'_>| {
        let waker = Waker::from(Arc::new(CountingWaker {
            task: cx.waker().clone(),
            home: thread::current().id(),
            counts: counts.clone(),
        }));
        std::pin::Pin::new(&mut fut).poll(&mut Context::from_waker(&waker))
    })
    .await
}

/// One job: wait for `weight` tokens (queueing again whenever the patience
/// runs out), work for `work`, give the tokens back.
async fn job(sem: Arc<Semaphore>, weight: u64, work: Duration, counts: Arc<Counts>) {
    let permit = loop {
        let acquire = counting_wakes(sem.clone().acquire_owned(weight), counts.clone());
        match time::timeout(PATIENCE, acquire).await {
            Ok(permit) => break permit,
            Err(_elapsed) => {
                counts.timeouts.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    let now = counts.in_use.fetch_add(weight, Ordering::SeqCst) + weight;
    counts.max_in_use.fetch_max(now, Ordering::SeqCst);
    time::sleep(work).await;
    counts.in_use.fetch_sub(weight, Ordering::SeqCst);
    drop(permit); // grants the waiters that now fit, on whatever thread
    counts.done.fetch_add(1, Ordering::SeqCst);
}

fn main() -> Result<(), timerloop::Error> {
    let sem = Arc::new(Semaphore::new(TOKENS));
    let counts = Arc::new(Counts::default());
    let per_worker = Arc::new(Mutex::new(vec![0; WORKERS as usize]));
    let wall = std::time::Instant::now();

    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (sem, counts, per_worker) = (sem.clone(), counts.clone(), per_worker.clone());
            thread::spawn(move || -> Result<(), timerloop::Error> {
                let mut lp = EventLoop::new();
                let mut jobs = Vec::new();
                for i in 0..JOBS_PER_WORKER {
                    let weight = WEIGHTS[((i + 3 * w) % 8) as usize];
                    let work = Duration::from_millis(1 + (7 * i + 3 * w) % 5);
                    let (sem, counts) = (sem.clone(), counts.clone());
                    jobs.push(lp.spawn(async move {
                        // Jobs arrive every 3 ms on each thread.
                        time::sleep(Duration::from_millis(3 * i + 1)).await;
                        job(sem, weight, work, counts).await;
                    }));
                }
                // Returns once every job is done: a job waiting for tokens
                // keeps the loop alive, as its permit comes from elsewhere.
                lp.run()?;
                let done = jobs.iter().filter(|j| j.is_finished()).count();
                per_worker.lock().unwrap()[w as usize] = done;
                Ok(())
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("no worker panics")?;
    }

    let c = |a: &AtomicU64| a.load(Ordering::SeqCst);
    println!(
        "{WORKERS} loops on {WORKERS} threads, {} jobs weighing 1 to 8 tokens, one semaphore of {TOKENS}",
        WORKERS * JOBS_PER_WORKER
    );
    println!(
        "jobs done: {} (per thread {:?}); {} acquires ran out of patience ({} ms) and queued again",
        c(&counts.done),
        per_worker.lock().unwrap(),
        c(&counts.timeouts),
        PATIENCE.as_millis()
    );
    println!(
        "waiters woken by a release on another thread: {}, on their own thread: {}",
        c(&counts.woken_from_other_thread),
        c(&counts.woken_from_own_thread)
    );
    println!(
        "most tokens in use at once: {} of {}; available at the end: {} of {}",
        c(&counts.max_in_use),
        sem.size(),
        sem.available(),
        sem.size()
    );
    println!("wall clock {:.1} ms", wall.elapsed().as_secs_f64() * 1e3);

    assert_eq!(c(&counts.done), WORKERS * JOBS_PER_WORKER, "a job was lost");
    assert!(c(&counts.max_in_use) <= sem.size(), "over the limit");
    assert_eq!(sem.available(), sem.size(), "tokens were lost");
    Ok(())
}
