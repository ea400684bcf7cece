//! A reference model of [`Semaphore`] (the rules of `src/sync`: Go's
//! `semaphore.Weighted`, all or nothing, FIFO without barging, a request
//! larger than the size pending alone, cancelling is dropping), run
//! against the real one over a sequence of operations. Shared by
//! `tests/semaphore_model.rs` (proptest) and the `semaphore` fuzz target
//! (`fuzz/src/lib.rs`).
//!
//! The acquires are `AcquireOwned` futures polled by hand (no loop current),
//! each with a waker that counts its wakes; some polls and permit drops
//! happen on another thread. Checked after every operation:
//!
//! - **Tokens conserved**: `available()` is the model's, and
//!   `available + Σ live permits + Σ granted-but-unobserved acquires +
//!   forgotten tokens == size`, counted from the test's own objects.
//! - **FIFO, all or nothing**: every poll's outcome is the model's (ready
//!   exactly when the model granted it, in queue order, whole).
//! - **No waiter stranded**: while anyone waits, the head does not fit in
//!   the real `available()`.
//! - **Wakes**: a granted acquire's latest waker has been woken; a queued
//!   one has not (no spurious wakes); `try_acquire` succeeds exactly when
//!   the model says so; releasing more than is taken is an error that
//!   changes nothing.
//! - At the end, with everything dropped and forgotten tokens released,
//!   all tokens are back.
#![allow(dead_code)] // each user calls a different subset

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use timerloop::sync::{AcquireOwned, OwnedPermit, Semaphore};

/// One operation; indices pick among the live acquires or permits (mod
/// their number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SemOp {
    /// Makes (does not poll) an acquire of this weight.
    Acquire(Weight),
    /// Polls an acquire on this thread.
    Poll(u8),
    /// Polls an acquire on another thread.
    PollRemote(u8),
    /// Polls every live acquire, oldest first.
    PollAll,
    /// Drops an acquire future: before its first poll, while queued, after
    /// the grant but before a poll observed it, or while too big.
    Cancel(u8),
    /// `try_acquire_owned` of this weight.
    TryAcquire(Weight),
    /// Drops a permit on this thread.
    DropPermit(u8),
    /// Drops a permit on another thread.
    DropPermitRemote(u8),
    /// Forgets a permit (its tokens stay taken).
    Forget(u8),
    /// `release` of part of the forgotten tokens (this value mod
    /// forgotten + 1).
    Release(u8),
    /// `release` of more than forgotten permits hold (forgotten + 1 + this
    /// mod 4; live permits' tokens count for nothing): an error.
    OverRelease(u8),
}

/// A requested weight: small (relative to the size), or huge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weight {
    Small(u8),
    Max,
}

impl Weight {
    fn get(self) -> u64 {
        match self {
            Weight::Small(n) => u64::from(n),
            Weight::Max => u64::MAX,
        }
    }
}

/// Decodes fuzz bytes: the first byte is the size (0..=9), then one
/// operation per byte (with an argument byte where one is needed).
pub fn decode(data: &[u8]) -> (u64, Vec<SemOp>) {
    let Some((&first, rest)) = data.split_first() else {
        return (0, Vec::new());
    };
    let size = u64::from(first % 10);
    let mut ops = Vec::new();
    let mut it = rest.iter().copied();
    while let Some(b) = it.next() {
        let arg = it.next().unwrap_or(0);
        let weight = if arg == 0xff {
            Weight::Max
        } else {
            Weight::Small(arg % 12)
        };
        ops.push(match b % 16 {
            0..=2 => SemOp::Acquire(weight),
            3..=4 => SemOp::Poll(arg),
            5 => SemOp::PollRemote(arg),
            6 => SemOp::PollAll,
            7..=8 => SemOp::Cancel(arg),
            9 => SemOp::TryAcquire(weight),
            10..=11 => SemOp::DropPermit(arg),
            12 => SemOp::DropPermitRemote(arg),
            13 => SemOp::Forget(arg),
            14 => SemOp::Release(arg),
            _ => SemOp::OverRelease(arg),
        });
    }
    (size, ops)
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Counter(AtomicUsize);

impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Counter {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// The model's view of one acquire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Unpolled,
    Queued,
    Granted,
    TooBig,
}

struct Acq {
    id: usize,
    n: u64,
    fut: Pin<Box<AcquireOwned>>,
    st: St,
    counter: Arc<Counter>,
    /// The counter's value at the latest poll.
    wakes_at_poll: usize,
}

struct Run {
    sem: Arc<Semaphore>,
    size: u64,
    taken: u64,
    forgotten: u64,
    /// Acquire ids, in queue order.
    queue: VecDeque<usize>,
    acqs: Vec<Acq>,
    permits: Vec<(OwnedPermit, u64)>,
    next_id: usize,
    errors: String,
}

/// Runs `ops` on a semaphore of `size` tokens against the model; every
/// violation is described in the error.
pub fn exec(size: u64, ops: &[SemOp]) -> Result<(), String> {
    let mut r = Run {
        sem: Arc::new(Semaphore::new(size)),
        size,
        taken: 0,
        forgotten: 0,
        queue: VecDeque::new(),
        acqs: Vec::new(),
        permits: Vec::new(),
        next_id: 0,
        errors: String::new(),
    };
    for (i, &op) in ops.iter().enumerate() {
        r.step(op);
        r.check();
        if !r.errors.is_empty() {
            return Err(format!("after op {i} {op:?} of {ops:?}:\n{}", r.errors));
        }
    }
    r.finish();
    if r.errors.is_empty() {
        Ok(())
    } else {
        Err(format!("at the end of {ops:?}:\n{}", r.errors))
    }
}

/// Polls `fut` once with `waker`, on this thread or another.
fn poll_acquire(
    fut: Pin<Box<AcquireOwned>>,
    waker: Waker,
    remote: bool,
) -> (Pin<Box<AcquireOwned>>, Option<OwnedPermit>) {
    let go = move |mut fut: Pin<Box<AcquireOwned>>| {
        let mut cx = Context::from_waker(&waker);
        let p = match fut.as_mut().poll(&mut cx) {
            Poll::Ready(p) => Some(p),
            Poll::Pending => None,
        };
        (fut, p)
    };
    if remote {
        std::thread::spawn(move || go(fut))
            .join()
            .expect("remote poll")
    } else {
        go(fut)
    }
}

impl Run {
    fn err(&mut self, s: String) {
        let _ = writeln!(self.errors, "  {s}");
    }

    fn pick(len: usize, i: u8) -> Option<usize> {
        (len > 0).then(|| usize::from(i) % len)
    }

    /// The model's `notifyWaiters`: grants from the head while it fits.
    fn grant(&mut self) {
        while let Some(&id) = self.queue.front() {
            let a = self.acqs.iter_mut().find(|a| a.id == id).expect("queued");
            if self.size - self.taken < a.n {
                break;
            }
            self.taken += a.n;
            a.st = St::Granted;
            self.queue.pop_front();
        }
    }

    fn poll(&mut self, k: usize, remote: bool) {
        let a = self.acqs.remove(k);
        let Acq {
            id,
            n,
            fut,
            st,
            counter,
            ..
        } = a;
        let expect_ready = match st {
            St::Unpolled => {
                if self.queue.is_empty() && self.size - self.taken >= n {
                    self.taken += n;
                    true
                } else if n > self.size {
                    false
                } else {
                    self.queue.push_back(id);
                    false
                }
            }
            St::Queued | St::TooBig => false,
            St::Granted => true,
        };
        let new_st = match st {
            St::Unpolled if !expect_ready && n > self.size => St::TooBig,
            St::Unpolled if !expect_ready => St::Queued,
            s => s,
        };
        let (fut, permit) = poll_acquire(fut, Waker::from(counter.clone()), remote);
        match (permit, expect_ready) {
            (Some(p), true) => self.permits.push((p, n)),
            (Some(p), false) => {
                self.err(format!(
                    "acquire #{id} of {n} ({st:?}) was ready; the model has it waiting"
                ));
                self.permits.push((p, n));
            }
            (None, true) => {
                self.err(format!(
                    "acquire #{id} of {n} ({st:?}) pending; the model granted it"
                ));
            }
            (None, false) => {
                let wakes_at_poll = counter.get();
                self.acqs.insert(
                    k,
                    Acq {
                        id,
                        n,
                        fut,
                        st: new_st,
                        counter,
                        wakes_at_poll,
                    },
                );
            }
        }
    }

    fn step(&mut self, op: SemOp) {
        match op {
            SemOp::Acquire(w) => {
                let n = w.get();
                let counter = Arc::new(Counter::default());
                self.acqs.push(Acq {
                    id: self.next_id,
                    n,
                    fut: Box::pin(self.sem.clone().acquire_owned(n)),
                    st: St::Unpolled,
                    counter,
                    wakes_at_poll: 0,
                });
                self.next_id += 1;
            }
            SemOp::Poll(i) | SemOp::PollRemote(i) => {
                if let Some(k) = Self::pick(self.acqs.len(), i) {
                    self.poll(k, matches!(op, SemOp::PollRemote(_)));
                }
            }
            SemOp::PollAll => {
                let mut k = 0;
                while k < self.acqs.len() {
                    let before = self.acqs.len();
                    self.poll(k, false);
                    if self.acqs.len() == before {
                        k += 1;
                    }
                }
            }
            SemOp::Cancel(i) => {
                let Some(k) = Self::pick(self.acqs.len(), i) else {
                    return;
                };
                let a = self.acqs.remove(k);
                match a.st {
                    St::Unpolled | St::TooBig => {}
                    St::Queued => {
                        let was_head = self.queue.front() == Some(&a.id);
                        self.queue.retain(|&id| id != a.id);
                        if was_head {
                            self.grant();
                        }
                    }
                    St::Granted => {
                        self.taken -= a.n;
                        self.grant();
                    }
                }
                drop(a);
            }
            SemOp::TryAcquire(w) => {
                let n = w.get();
                let expect = self.queue.is_empty() && self.size - self.taken >= n;
                match self.sem.clone().try_acquire_owned(n) {
                    Some(p) => {
                        self.permits.push((p, n));
                        if expect {
                            self.taken += n;
                        } else {
                            self.err(format!("try_acquire({n}) succeeded; the model says no"));
                        }
                    }
                    None if expect => {
                        self.err(format!("try_acquire({n}) failed; the model says yes"));
                    }
                    None => {}
                }
            }
            SemOp::DropPermit(i) | SemOp::DropPermitRemote(i) => {
                let Some(k) = Self::pick(self.permits.len(), i) else {
                    return;
                };
                let (p, n) = self.permits.remove(k);
                if matches!(op, SemOp::DropPermitRemote(_)) {
                    std::thread::spawn(move || drop(p))
                        .join()
                        .expect("remote drop");
                } else {
                    drop(p);
                }
                self.taken -= n;
                self.grant();
            }
            SemOp::Forget(i) => {
                let Some(k) = Self::pick(self.permits.len(), i) else {
                    return;
                };
                let (p, n) = self.permits.remove(k);
                p.forget();
                self.forgotten += n;
            }
            SemOp::Release(i) => {
                let k = u64::from(i) % (self.forgotten + 1);
                match self.sem.release(k) {
                    Ok(()) => {
                        self.forgotten -= k;
                        self.taken -= k;
                        self.grant();
                    }
                    Err(e) => self.err(format!("release({k}) of forgotten tokens: {e}")),
                }
            }
            SemOp::OverRelease(i) => {
                // Beyond what forgotten permits hold: live permits' tokens
                // (when `k <= taken`) are not the caller's to release.
                let k = self.forgotten.saturating_add(1 + u64::from(i % 4));
                let before = self.sem.available();
                match self.sem.release(k) {
                    Ok(()) => self.err(format!(
                        "release({k}) with {} forgotten ({} taken) succeeded",
                        self.forgotten, self.taken
                    )),
                    Err(e) => {
                        if !e
                            .to_string()
                            .starts_with("semaphore: released more than held")
                        {
                            self.err(format!("release error reads {e}"));
                        }
                    }
                }
                if self.sem.available() != before {
                    self.err(format!("a failed release changed available from {before}"));
                }
            }
        }
    }

    fn check(&mut self) {
        let available = self.sem.available();
        if available != self.size - self.taken {
            self.err(format!(
                "available() is {available}; the model has {} of {} taken",
                self.taken, self.size
            ));
        }
        let held: u64 = self.permits.iter().map(|&(_, n)| n).sum();
        let granted: u64 = self
            .acqs
            .iter()
            .filter(|a| a.st == St::Granted)
            .map(|a| a.n)
            .sum();
        if available + held + granted + self.forgotten != self.size {
            self.err(format!(
                "tokens not conserved: available {available} + held {held} + granted {granted} \
                 + forgotten {} != size {}",
                self.forgotten, self.size
            ));
        }
        if let Some(&head) = self.queue.front() {
            let n = self.acqs.iter().find(|a| a.id == head).map_or(0, |a| a.n);
            if n <= available {
                self.err(format!(
                    "waiter #{head} of {n} stranded at the head with {available} available"
                ));
            }
        }
        let mut bad = Vec::new();
        for a in &self.acqs {
            let woken = a.counter.get() > a.wakes_at_poll;
            match a.st {
                St::Granted if !woken => {
                    bad.push(format!("acquire #{} granted, never woken", a.id))
                }
                St::Queued | St::TooBig | St::Unpolled if woken => {
                    bad.push(format!("acquire #{} woken while {:?}", a.id, a.st));
                }
                _ => {}
            }
        }
        for b in bad {
            self.err(b);
        }
    }

    /// Polls every acquire one last time, then drops everything, and
    /// checks that every token came back.
    fn finish(&mut self) {
        self.step(SemOp::PollAll);
        self.check();
        while !self.acqs.is_empty() {
            self.step(SemOp::Cancel(0));
            self.check();
        }
        while !self.permits.is_empty() {
            self.step(SemOp::DropPermit(0));
            self.check();
        }
        if self.forgotten > 0 {
            if let Err(e) = self.sem.release(self.forgotten) {
                self.err(format!("release of all forgotten tokens: {e}"));
            }
            self.taken -= self.forgotten;
            self.forgotten = 0;
        }
        if self.sem.available() != self.size {
            self.err(format!(
                "{} of {} tokens came back",
                self.sem.available(),
                self.size
            ));
        }
    }
}
