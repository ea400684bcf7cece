//! Criterion micro-benchmarks of timerloop's timer operations, all on a
//! virtual clock (nothing sleeps; time moves only when told to).
//!
//! ```text
//! cargo bench -p timerloop-bench --bench micro             # all
//! cargo bench -p timerloop-bench --bench micro -- insert   # a filter
//! ```
//!
//! * `insert_existing_list`: `set_timeout` into a duration list that already
//!   exists (Node's pooled case): a slab insert, a map lookup, a link.
//! * `insert_new_list`: `set_timeout` with a new duration each time: also
//!   creates a list and pushes it on the heap.
//! * `cancel`: `clear_timeout` of a timer in a list of many.
//! * `refresh`: `refresh` of a timer in a list of 1,000 (moves it to the tail).
//! * `list_expiry`: firing the timers of one due list, per timer.
//! * `heap_reschedule`: 1,000 due lists whose timers were refreshed, so
//!   the timers phase finds each list's head not yet due and re-keys the
//!   list in the heap (new expiry and id); per list, one loop iteration.
//! * `many_lists_expiry`: 1,000 due lists of one timer each: each fires and
//!   is dropped from the map and the heap; per list, one loop iteration.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use timerloop::EventLoop;

fn noop(_: &mut EventLoop) {}

fn advance(lp: &EventLoop, ms: u64) {
    lp.virtual_clock()
        .expect("a virtual clock")
        .advance(Duration::from_millis(ms));
}

fn insert(c: &mut Criterion) {
    let mut g = c.benchmark_group("insert");
    g.throughput(Throughput::Elements(1));
    g.bench_function("insert_existing_list", |b| {
        b.iter_custom(|iters| {
            let mut lp = EventLoop::with_virtual_clock();
            let mut handles = Vec::with_capacity(iters as usize + 1);
            handles.push(lp.set_timeout(1000, noop)); // the list exists
            let t0 = Instant::now();
            for _ in 0..iters {
                handles.push(lp.set_timeout(1000, noop));
            }
            let elapsed = t0.elapsed();
            black_box(&handles);
            elapsed
        });
    });
    g.bench_function("insert_new_list", |b| {
        b.iter_custom(|iters| {
            let mut lp = EventLoop::with_virtual_clock();
            let mut handles = Vec::with_capacity(iters as usize);
            let t0 = Instant::now();
            for d in 1..=iters {
                handles.push(lp.set_timeout(d, noop));
            }
            let elapsed = t0.elapsed();
            black_box(&handles);
            elapsed
        });
    });
    g.finish();
}

fn cancel(c: &mut Criterion) {
    let mut g = c.benchmark_group("cancel");
    g.throughput(Throughput::Elements(1));
    g.bench_function("cancel", |b| {
        b.iter_custom(|iters| {
            let mut lp = EventLoop::with_virtual_clock();
            // One extra timer keeps the list alive throughout.
            lp.set_timeout(1000, noop);
            let handles: Vec<_> = (0..iters).map(|_| lp.set_timeout(1000, noop)).collect();
            let t0 = Instant::now();
            for &t in &handles {
                let _ = black_box(lp.clear_timeout(t));
            }
            t0.elapsed()
        });
    });
    g.finish();
}

fn refresh(c: &mut Criterion) {
    let mut g = c.benchmark_group("refresh");
    g.throughput(Throughput::Elements(1));
    g.bench_function("refresh", |b| {
        let mut lp = EventLoop::with_virtual_clock();
        let handles: Vec<_> = (0..1000).map(|_| lp.set_timeout(1000, noop)).collect();
        let mut i = 0;
        b.iter(|| {
            // The oldest timer each time: it moves from the head to the tail.
            lp.refresh(handles[i]).expect("pending");
            i = (i + 1) % handles.len();
        });
    });
    g.finish();
}

fn expiry(c: &mut Criterion) {
    let mut g = c.benchmark_group("expiry");
    g.throughput(Throughput::Elements(1));
    g.bench_function("list_expiry", |b| {
        b.iter_custom(|iters| {
            let mut lp = EventLoop::with_virtual_clock();
            for _ in 0..iters {
                lp.set_timeout(1, noop);
            }
            advance(&lp, 1);
            let t0 = Instant::now();
            lp.run().expect("no failures");
            t0.elapsed()
        });
    });
    g.finish();

    // Both below run one loop iteration (`run_nowait`) whose timers phase
    // finds all LISTS lists due at once, so they measure the list heap, not
    // loop iterations.
    const LISTS: u64 = 1000;
    let mut g = c.benchmark_group("many_lists");
    g.throughput(Throughput::Elements(LISTS));
    g.bench_function("heap_reschedule", |b| {
        b.iter_batched(
            || {
                // Lists of LISTS+1 ..= 2*LISTS ms made at t = 0; their timers
                // refreshed at t = LISTS; at t = 2*LISTS every list is due
                // but none of its timers is: each list gets a new expiry and
                // id (a heap re-key) and nothing fires.
                let mut lp = EventLoop::with_virtual_clock();
                let handles: Vec<_> = (LISTS + 1..=2 * LISTS)
                    .map(|d| lp.set_timeout(d, noop))
                    .collect();
                advance(&lp, LISTS);
                for &t in &handles {
                    lp.refresh(t).expect("pending");
                }
                advance(&lp, LISTS);
                lp
            },
            |mut lp| {
                lp.run_nowait().expect("no failures");
                assert_eq!(lp.stats().lists, LISTS as usize, "all rescheduled");
                lp
            },
            BatchSize::LargeInput,
        );
    });
    g.bench_function("many_lists_expiry", |b| {
        b.iter_batched(
            || {
                // Lists of 1 ..= LISTS ms, one timer each, all due.
                let mut lp = EventLoop::with_virtual_clock();
                for d in 1..=LISTS {
                    lp.set_timeout(d, noop);
                }
                advance(&lp, LISTS);
                lp
            },
            |mut lp| {
                lp.run_nowait().expect("no failures");
                assert_eq!(lp.stats().lists, 0, "all expired");
                lp
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();
}

criterion_group!(benches, insert, cancel, refresh, expiry);
criterion_main!(benches);
