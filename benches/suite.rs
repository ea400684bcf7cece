//! Rust twins of the Node.js timer benchmarks in `bench/node/`, plus
//! data-structure baselines, a memory probe and a lateness probe.
//!
//! ```text
//! cargo bench -p timerloop-bench --bench suite -- --list
//! cargo bench -p timerloop-bench --bench suite -- WORKLOAD [N]   # WORKLOAD n=N ops/s=RATE
//! cargo bench -p timerloop-bench --bench suite -- baseline IMPL OP DIST COUNT [--reps R]
//! cargo bench -p timerloop-bench --bench suite -- memory [--same] [--count N] [--impl IMPL]
//! cargo bench -p timerloop-bench --bench suite -- lateness [--samples K]
//! cargo bench -p timerloop-bench --bench suite -- clock [--reads N]
//! cargo bench -p timerloop-bench --bench suite -- sweep [--count N]
//! cargo bench -p timerloop-bench --bench suite -- rivals (tasks | sleeps | semaphore | wake | timers-refresh-idle | all) [N] [--reps R]
//! ```
//!
//! This bench belongs to the `timerloop-bench` package (`bench/Cargo.toml`),
//! which has the dependencies it needs (tokio, tokio-util, slab).
//!
//! `bench/node/README.md` is the specification of every workload; each
//! twin schedules the same things in the same order, times the same region
//! and reports the same number of ops. See `baseline.rs` and `probes.rs`
//! (in `benches/suite/`) for the other modes, and `rivals.rs` for the
//! workloads run against tokio (tasks, semaphores, cross-thread
//! wakes, and the idle-timeout pattern against `DelayQueue`; `rivals all`
//! runs every one in one process).

#[path = "suite/baseline.rs"]
mod baseline;
#[path = "suite/probes.rs"]
mod probes;
#[path = "suite/rivals.rs"]
mod rivals;
#[path = "suite/workloads.rs"]
mod workloads;

use std::alloc::{GlobalAlloc, Layout, System};
use std::process::exit;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

/// The system allocator, counting live bytes while [`COUNTING`] is set
/// (only the memory probe sets it, so the workloads pay one relaxed load
/// and a not-taken branch per allocation).
struct CountingAlloc;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

fn count(delta: isize) {
    if COUNTING.load(Ordering::Relaxed) {
        LIVE_BYTES.fetch_add(delta, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the same arguments; the
// counters are only bookkeeping.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Starts counting allocations (from zero).
pub(crate) fn start_counting() {
    LIVE_BYTES.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
}

/// Bytes allocated and not yet freed since [`start_counting`].
pub(crate) fn live_bytes() -> isize {
    LIVE_BYTES.load(Ordering::SeqCst)
}

/// The process's CPU time, split into user and kernel, and its minor page
/// faults (`getrusage`), for `SUITE_CPU=1`: where a timed region's time
/// went. Node's side reads the same counters (`process.resourceUsage()`).
#[derive(Clone, Copy)]
pub(crate) struct Cpu {
    user_us: i64,
    sys_us: i64,
    minflt: i64,
}

impl Cpu {
    /// Whether `SUITE_CPU` asks for the split.
    pub(crate) fn wanted() -> bool {
        std::env::var_os("SUITE_CPU").is_some_and(|v| !v.is_empty() && v != "0")
    }

    pub(crate) fn now() -> Cpu {
        // SAFETY: `getrusage` writes one `rusage` into the zeroed value we
        // own and reads nothing else.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut ru);
            ru
        };
        // The fields' widths vary by platform (i32 `tv_usec` on macOS).
        #[allow(clippy::unnecessary_cast)]
        let us = |t: libc::timeval| t.tv_sec as i64 * 1_000_000 + t.tv_usec as i64;
        #[allow(clippy::unnecessary_cast)]
        let minflt = ru.ru_minflt as i64;
        Cpu {
            user_us: us(ru.ru_utime),
            sys_us: us(ru.ru_stime),
            minflt,
        }
    }

    pub(crate) fn since(self, earlier: Cpu) -> Cpu {
        Cpu {
            user_us: self.user_us - earlier.user_us,
            sys_us: self.sys_us - earlier.sys_us,
            minflt: self.minflt - earlier.minflt,
        }
    }

    /// ` user_ns/op=U sys_ns/op=S minflt/Mop=F`, as suite.js prints them.
    pub(crate) fn per_op(self, ops: u64) -> String {
        let ops = ops.max(1) as f64;
        format!(
            " user_ns/op={:.1} sys_ns/op={:.1} minflt/Mop={:.0}",
            self.user_us as f64 * 1e3 / ops,
            self.sys_us as f64 * 1e3 / ops,
            self.minflt as f64 * 1e6 / ops
        )
    }
}

/// A fixed-seed PRNG (SplitMix64), so every run draws the same delays.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-ish integer in `1..=max` (modulo bias is below 1e-15).
    pub(crate) fn delay(&mut self, max: u64) -> u64 {
        1 + self.next_u64() % max
    }
}

/// The median of `v` (its upper one for an even count): the statistic
/// every repeated measurement of the suite reports.
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Parses a count the way `Number()` + `Number.isSafeInteger` do for the
/// values we accept: `5e6`, `1000000`, `1e7`.
pub(crate) fn parse_count(s: &str) -> Option<u64> {
    let v: f64 = s.trim().parse().ok()?;
    (v.fract() == 0.0 && (1.0..=9_007_199_254_740_991.0).contains(&v)).then_some(v as u64)
}

/// The value following `flag` in `args`, if the flag is present.
pub(crate) fn flag_value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    let i = args.iter().position(|a| a == flag)?;
    match args.get(i + 1) {
        Some(v) => Some(v.as_str()),
        None => die(&format!("{flag} needs a value")),
    }
}

pub(crate) fn die(msg: &str) -> ! {
    eprintln!("{msg}");
    exit(2)
}

fn usage() -> ! {
    eprintln!(
        "usage: cargo bench -p timerloop-bench --bench suite -- (--list | WORKLOAD [N]\n\
         \x20      | baseline IMPL OP DIST COUNT [--reps R]\n\
         \x20      | memory [--same] [--count N] [--impl timerloop|delayqueue]\n\
         \x20      | lateness [--samples K]\n\
         \x20      | clock [--reads N]\n\
         \x20      | sweep [--count N]\n\
         \x20      | rivals (tasks | sleeps | semaphore | wake | timers-refresh-idle | all) [N] [--reps R])"
    );
    exit(2)
}

fn main() {
    // `cargo bench` appends `--bench` to the arguments of every bench
    // target; it means nothing here.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(first) = args.first() else {
        // `cargo bench -p timerloop-bench` without arguments (or `cargo test
        // --workspace --benches`) runs every bench target: say how to use
        // this one and succeed.
        eprintln!(
            "suite: no workload given; try `cargo bench -p timerloop-bench --bench suite -- --list`"
        );
        return;
    };
    match first.as_str() {
        "--list" => workloads::list(),
        "baseline" => baseline::main(&args[1..]),
        "memory" => probes::memory(&args[1..]),
        "lateness" => probes::lateness(&args[1..]),
        "clock" => probes::clock(&args[1..]),
        "sweep" => probes::sweep(&args[1..]),
        "rivals" => rivals::main(&args[1..]),
        "-h" | "--help" => usage(),
        name => {
            if args.len() > 2 {
                usage();
            }
            workloads::run(name, args.get(1).map(String::as_str));
        }
    }
}
