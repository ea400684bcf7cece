//! The poll phase: mio readiness for registered I/O sources, and work that
//! other threads queue for the loop ([`Remote`], [`Completion`]).
//!
//! Cross-thread work arrives through one shared queue and one
//! [`mio::Waker`]. A [`Completion`] is a *request*: while one is in flight
//! the loop stays alive, and a virtual clock waits for it for real instead
//! of jumping ahead, so off-thread work takes no virtual time and completes
//! in the first poll phase that can see it. A [`Remote`] is an *async
//! handle* (`uv_async_t`): active from its creation until its last clone is
//! dropped, and refed unless unrefed, so a refed `Remote` keeps the loop
//! alive while another thread may still post to it.
//!
//! Ground rules:
//! - messages are delivered in the order they were queued, one batch per
//!   poll phase; a `Remote`'s posts all come before its closing. The one
//!   exception is the virtual clock's: a request started during a poll
//!   phase completes in the next one, however fast it was, and the posts
//!   queued after its completion wait with it (so a worker's post after
//!   its `complete` still follows it), while completions of older
//!   requests, which the phase waits for, go ahead of them;
//! - once the loop is dropped the queue is closed: a post is refused with
//!   [`PostError::Closed`] and its closure dropped, so nothing piles up
//!   for a loop that will never run it;
//! - no user code runs while the queue's lock is held (closures are
//!   dropped after it is released);
//! - a poll phase blocked in the kernel is woken by every message, and
//!   every cross-thread event that can change what the loop waits for is a
//!   message (a post, a completion or its cancel, the close of a `Remote`,
//!   the release of the last keep-alive guard from another thread), so a
//!   poll phase never sleeps on after the loop has nothing left to wait for.
//!
//! The shared state (queue, `has_msgs` flag, keep-alive count) is apart
//! from the OS wake ([`Wake`]: a [`mio::Waker`] in the loop, a model of it
//! in the loom tests, `src/uv/loom_tests.rs`, which check every
//! interleaving of posting, closing, dropping a `Remote` and releasing a
//! keep-alive against a loop that blocks until woken).

use std::any::Any;
use std::collections::VecDeque;
use std::fmt;
use std::panic::resume_unwind;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mio::event::Source;
use mio::{Events, Interest, Poll, Token, Waker};
use slab::Slab;

use super::{Handle, Host, IoCb, Kind, Loop, OnceCb, UvError, catch_unless_replaced};
use crate::prim::{AtomicBool, AtomicUsize, Mutex, MutexGuard, ThreadId, current_thread_id};

#[cfg(all(test, loom))]
#[path = "loom_tests.rs"]
mod loom_tests;

const WAKER: Token = Token(usize::MAX);
/// The [`DeadlineTimer`]'s token. Handle tokens are arena indexes, far
/// below both.
const DEADLINE: Token = Token(usize::MAX - 1);

/// Wakes the poll phase at the exact instant a timer is due.
///
/// `epoll_wait` takes whole milliseconds (mio rounds up) and the kernel
/// adds the thread's timer slack (50 µs by default), so a loop woken by
/// it alone wakes 1 ms + slack after a wait of 0.05 ms, and a chain of
/// 1 ms timeouts runs at about 1.09 ms per hop. A timerfd armed for the
/// wait's exact length (nanoseconds, no slack) wakes the poll at the
/// deadline; the millisecond timeout stays as the backstop. Linux only,
/// real clocks only (a virtual clock never waits): made with the loop, a
/// third descriptor beside the poller and its waker; where it cannot be
/// made the loop waits as libuv does.
///
/// It remembers the deadline it is armed for until it fires: a poll phase
/// waiting for the same deadline again (woken by I/O before it, the common
/// case in a busy server, whose earliest timer rarely changes between
/// polls) makes no system call to arm it.
#[cfg(target_os = "linux")]
pub(super) struct DeadlineTimer {
    fd: std::os::fd::OwnedFd,
    /// The loop time (ms) it is armed for and has not yet reported.
    armed: Option<u64>,
    /// How many times it was armed (a system call each).
    #[cfg(test)]
    pub(super) arms: u32,
}

#[cfg(target_os = "linux")]
impl DeadlineTimer {
    fn new(poll: &Poll) -> Option<Self> {
        use rustix::time::{TimerfdClockId, TimerfdFlags, timerfd_create};
        use std::os::fd::AsRawFd;
        let fd = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )
        .ok()?;
        poll.registry()
            .register(
                &mut mio::unix::SourceFd(&fd.as_raw_fd()),
                DEADLINE,
                Interest::READABLE,
            )
            .ok()?;
        Some(DeadlineTimer {
            fd,
            armed: None,
            #[cfg(test)]
            arms: 0,
        })
    }

    /// Fires once at loop time `at` (ms), `after` from now (a zero `after`
    /// would disarm it); nothing to do if it is armed for `at` already.
    fn arm(&mut self, at: u64, after: Duration) {
        use rustix::time::{Itimerspec, TimerfdTimerFlags, Timespec, timerfd_settime};
        if self.armed == Some(at) {
            return;
        }
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let Ok(value) = Timespec::try_from(after.max(Duration::from_nanos(1))) else {
            return; // beyond the timerfd's range: the backstop will do
        };
        let spec = Itimerspec {
            it_interval: zero,
            it_value: value,
        };
        if timerfd_settime(&self.fd, TimerfdTimerFlags::empty(), &spec).is_ok() {
            self.armed = Some(at);
            #[cfg(test)]
            {
                self.arms += 1;
            }
        }
    }

    /// Takes the expirations it counted, so that it reads as not ready; it
    /// is armed for nothing until armed again.
    fn clear(&mut self) {
        let mut buf = [0_u8; 8];
        let _ = rustix::io::read(&self.fd, &mut buf);
        self.armed = None;
    }
}

/// Elsewhere the poll phase waits in milliseconds, as libuv does.
#[cfg(not(target_os = "linux"))]
pub(super) struct DeadlineTimer;

#[cfg(not(target_os = "linux"))]
impl DeadlineTimer {
    fn new(_: &Poll) -> Option<Self> {
        None
    }
    fn arm(&mut self, _: u64, _: Duration) {}
    fn clear(&mut self) {}
}

/// The default I/O grace of a virtual clock: long enough for a loopback
/// client's bytes to arrive, short enough for tests.
pub(crate) const DEFAULT_GRACE: Duration = Duration::from_millis(10);

/// What an I/O source is ready for, copied out of a [`mio::event::Event`].
///
/// `#[non_exhaustive]`: a later kind of readiness can be added without a
/// breaking change. To make one (to call a callback in a test, say),
/// start from [`Readiness::default`], which is ready for nothing, and set
/// the fields:
///
/// ```
/// use timerloop::Readiness;
/// let mut r = Readiness::default();
/// r.readable = true;
/// assert!(r.readable && !r.writable);
/// ```
///
/// A struct expression does not compile outside the crate:
///
/// ```compile_fail,E0639
/// use timerloop::Readiness;
/// let r = Readiness { readable: true, writable: false, error: false, read_closed: false, write_closed: false };
/// ```
///
/// # Examples
///
/// ```
/// use std::io::Write;
/// use timerloop::{EventLoop, Readiness, mio};
/// let none = Readiness::default();
/// assert!(!(none.readable || none.writable || none.error || none.read_closed || none.write_closed));
/// let mut lp = EventLoop::with_virtual_clock();
/// let (mut a, b) = mio::net::UnixStream::pair().unwrap();
/// a.write_all(b"x").unwrap();
/// lp.insert_io(b, mio::Interest::READABLE, |lp, _, ev| {
///     assert!(ev.readiness.readable);
///     lp.close_io(ev.handle).unwrap();
/// })
/// .unwrap();
/// lp.run().unwrap();
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Readiness {
    /// Readable.
    pub readable: bool,
    /// Writable.
    pub writable: bool,
    /// An error condition.
    pub error: bool,
    /// The read half was closed by the peer.
    pub read_closed: bool,
    /// The write half was closed.
    pub write_closed: bool,
}

impl Readiness {
    fn of(ev: &mio::event::Event) -> Self {
        Readiness {
            readable: ev.is_readable(),
            writable: ev.is_writable(),
            error: ev.is_error(),
            read_closed: ev.is_read_closed(),
            write_closed: ev.is_write_closed(),
        }
    }
}

type SendCb<H> = Box<dyn FnOnce(&mut H) + Send>;

enum Msg<H> {
    Run(SendCb<H>),
    Complete(usize),
    Cancel(usize),
    /// The last clone of a [`Remote`] was dropped: close its async handle.
    CloseAsync(Handle),
    /// The last [`KeepAlive`] was dropped on another thread: the loop may
    /// have nothing left to wait for.
    Released,
}

/// How another thread wakes a poll phase blocked in the kernel.
pub(crate) trait Wake: Send + Sync {
    /// Wakes the poll phase (now, or the next time it blocks).
    fn wake(&self) -> std::io::Result<()>;
}

impl Wake for Waker {
    fn wake(&self) -> std::io::Result<()> {
        Waker::wake(self)
    }
}

struct Queue<H> {
    msgs: VecDeque<Msg<H>>,
    /// The loop was dropped: nothing will ever take a message again.
    closed: bool,
}

struct Shared<H, W = Waker> {
    queue: Mutex<Queue<H>>,
    /// Set after a message is queued, cleared (under the lock) when the
    /// loop takes the queue: lets a poll phase with no sources skip the
    /// syscall.
    has_msgs: AtomicBool,
    waker: W,
    /// Live [`KeepAlive`]s: waits whose wake may come from another thread.
    keepalive: AtomicUsize,
    /// The loop's thread.
    owner: ThreadId,
}

/// Why a closure could not be posted to a loop.
///
/// The `Display` of [`Wake`](PostError::Wake) includes the OS error's
/// message, so [`source()`](std::error::Error::source) continues below
/// it, with the OS error's own `source()` (a chain walked by anyhow or
/// eyre prints each message once); the OS error itself is the variant's
/// field.
///
/// # Examples
///
/// ```
/// use timerloop::{EventLoop, PostError};
/// let mut lp = EventLoop::new();
/// let remote = lp.remote();
/// drop(lp);
/// assert!(matches!(remote.post(|_| {}), Err(PostError::Closed))); // never lost silently
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum PostError {
    /// The loop was dropped; the closure was dropped unrun.
    Closed,
    /// The loop's waker could not be signalled (the OS error). The closure
    /// is queued, but a loop blocked in its poll phase may not see it until
    /// something else wakes it.
    Wake(std::io::Error),
}

impl fmt::Display for PostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PostError::Closed => f.write_str("the loop was dropped; the closure was not run"),
            PostError::Wake(e) => write!(f, "the loop's waker could not be signalled: {e}"),
        }
    }
}

/// The OS error's own source, for [`Wake`](PostError::Wake): the OS error
/// is in `Display` already.
///
/// ```
/// use std::error::Error as _;
/// use timerloop::PostError;
/// let e = PostError::Wake(std::io::Error::from_raw_os_error(9));
/// assert!(e.to_string().starts_with("the loop's waker could not be signalled: "));
/// assert!(e.source().is_none());
/// ```
impl std::error::Error for PostError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PostError::Closed => None,
            PostError::Wake(e) => e.source(),
        }
    }
}

impl<H, W: Wake> Shared<H, W> {
    fn new(waker: W) -> Self {
        Shared {
            queue: Mutex::new(Queue {
                msgs: VecDeque::new(),
                closed: false,
            }),
            has_msgs: AtomicBool::new(false),
            keepalive: AtomicUsize::new(0),
            owner: current_thread_id(),
            waker,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue<H>> {
        // A poisoned queue is still valid: nothing panics while holding the
        // lock except allocation failure.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn send(&self, msg: Msg<H>) -> Result<(), PostError> {
        let mut q = self.lock();
        if q.closed {
            drop(q);
            // Dropped here, outside the lock: the closure's captures may
            // run code of their own when dropped.
            drop(msg);
            return Err(PostError::Closed);
        }
        q.msgs.push_back(msg);
        // Set under the lock, where the loop clears it: the flag and the
        // queue change together. Set after the unlock, loom reported a
        // schedule in which the loop, woken after this store, still read
        // the flag clear and slept on with the message queued; no C11
        // execution for it was found by hand (it may be loom's model), but
        // under the lock there is nothing left to argue about.
        self.has_msgs.store(true, Ordering::Release);
        drop(q);
        self.waker.wake().map_err(PostError::Wake)
    }

    /// Refuses every later message and drops the queued ones.
    fn close(&self) {
        let mut q = self.lock();
        q.closed = true;
        let msgs = std::mem::take(&mut q.msgs);
        drop(q);
        drop(msgs);
    }

    /// Moves the queued messages to the end of `batch` (the loop's side).
    fn take_msgs(&self, batch: &mut VecDeque<Msg<H>>) {
        if self.has_msgs.load(Ordering::Acquire) {
            let mut q = self.lock();
            batch.append(&mut q.msgs);
            self.has_msgs.store(false, Ordering::Release);
        }
    }

    /// Whether messages may be queued (checked before blocking).
    fn has_msgs(&self) -> bool {
        self.has_msgs.load(Ordering::Acquire)
    }

    /// Whether a [`KeepAlive`] is live.
    fn kept_alive(&self) -> bool {
        self.keepalive.load(Ordering::Acquire) > 0
    }
}

impl<H: 'static, W: Wake + 'static> Shared<H, W> {
    /// A new keep-alive guard; see [`Sender::keep_alive`].
    fn keep_alive(self: &Arc<Self>) -> KeepAlive {
        self.keepalive.fetch_add(1, Ordering::AcqRel);
        KeepAlive {
            counter: self.clone(),
        }
    }
}

/// A plain way for other threads to queue work for the loop's poll phase,
/// with no handle: it does not keep the loop alive (a waker's path).
pub(crate) struct Sender<H> {
    shared: Arc<Shared<H>>,
}

impl<H> Clone for Sender<H> {
    fn clone(&self) -> Self {
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl<H: 'static> Sender<H> {
    /// Queues `f` for the loop's next poll phase and wakes the loop.
    pub(crate) fn send(&self, f: impl FnOnce(&mut H) + Send + 'static) -> Result<(), PostError> {
        self.shared.send(Msg::Run(Box::new(f)))
    }

    /// Keeps the loop alive until the guard is dropped (from any thread),
    /// as a refed handle would, with no handle: for a wait whose wake may
    /// come from another thread (a semaphore's waiter).
    pub(crate) fn keep_alive(&self) -> KeepAlive {
        self.shared.keep_alive()
    }
}

trait Counter: Send + Sync {
    fn release(&self);
}

impl<H, W: Wake> Counter for Shared<H, W> {
    fn release(&self) {
        // The last one gone: a loop blocked in its poll may be waiting for
        // nothing else, so it must look again: a message, as a bare wake
        // would only make the poll phase find nothing delivered and block
        // again (a hang, found by tests/hostile_async.rs and the loom
        // model). On the loop's own thread the loop is not blocked (this
        // code is running there) and checks liveness again before it
        // polls: no message, no eventfd write (one per granted semaphore
        // acquire, before). A loop that is gone needs no message.
        if self.keepalive.fetch_sub(1, Ordering::AcqRel) == 1 && current_thread_id() != self.owner {
            let _ = self.send(Msg::Released);
        }
    }
}

/// See [`Sender::keep_alive`].
pub(crate) struct KeepAlive {
    counter: Arc<dyn Counter>,
}

impl fmt::Debug for KeepAlive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeepAlive").finish_non_exhaustive()
    }
}

impl Drop for KeepAlive {
    fn drop(&mut self) {
        self.counter.release();
    }
}

/// The loop side of a [`Remote`]: its async handle, closed when the last
/// clone of the `Remote` is dropped.
struct AsyncHandle<H, W: Wake = Waker> {
    shared: Arc<Shared<H, W>>,
    handle: Handle,
}

impl<H, W: Wake> Drop for AsyncHandle<H, W> {
    fn drop(&mut self) {
        // A loop that is gone has nothing left to close.
        let _ = self.shared.send(Msg::CloseAsync(self.handle));
    }
}

/// A `Send + Clone` way for other threads to run work on the loop's thread,
/// in its poll phase: libuv's `uv_async_t`, carrying a closure.
///
/// A `Remote` is an active handle of the loop from its creation until its
/// last clone is dropped; while it is refed (the default) it keeps the loop
/// alive, so a loop does not return from `run` while a producer thread may
/// still post. Unref it ([`Loop::unref_handle`] with [`Remote::handle`])
/// for a `Remote` that should not hold the loop.
pub(crate) struct Remote<H, W: Wake = Waker> {
    inner: Arc<AsyncHandle<H, W>>,
}

impl<H, W: Wake> Clone for Remote<H, W> {
    fn clone(&self) -> Self {
        Remote {
            inner: self.inner.clone(),
        }
    }
}

impl<H, W: Wake> fmt::Debug for Remote<H, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote")
            .field("handle", &self.inner.handle)
            .finish_non_exhaustive()
    }
}

impl<H: 'static, W: Wake> Remote<H, W> {
    /// Queues `f` to run on the loop's thread in a poll phase, and wakes
    /// the loop.
    ///
    /// # Errors
    ///
    /// [`PostError::Closed`] if the loop was dropped (`f` is dropped);
    /// [`PostError::Wake`] if the waker could not be signalled.
    pub(crate) fn post(&self, f: impl FnOnce(&mut H) + Send + 'static) -> Result<(), PostError> {
        self.inner.shared.send(Msg::Run(Box::new(f)))
    }

    /// The async handle, for ref and unref.
    pub(crate) fn handle(&self) -> Handle {
        self.inner.handle
    }
}

impl<H: 'static> Remote<H> {
    /// Whether this `Remote` posts to the loop that owns `shared`.
    fn posts_to(&self, io: &Io<H>) -> bool {
        Arc::ptr_eq(&self.inner.shared, &io.shared)
    }
}

/// A request in flight: created on the loop's thread with the callback to
/// run, sent to another thread, and completed from there. The callback
/// itself never leaves the loop's thread, so it need not be `Send`.
///
/// While a `Completion` exists the loop is alive. Dropping it without
/// calling [`Completion::complete`] cancels the request: the callback is
/// dropped unrun and the loop is released, so a lost request never hangs
/// the loop.
///
/// # Examples
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use timerloop::EventLoop;
/// let done = Rc::new(Cell::new(false));
/// let mut lp = EventLoop::new();
/// let d = done.clone();
/// let c = lp.completion(move |_| d.set(true)); // the callback stays here
/// std::thread::spawn(move || c.complete()); // the Completion travels
/// lp.run().unwrap(); // alive until it is completed (or dropped)
/// assert!(done.get());
/// ```
///
/// `#[must_use]`: a `Completion` dropped at once (the statement
/// `lp.completion(cb);`) cancels its request before anything can
/// complete it, so its callback never runs; the compiler warns.
///
/// ```compile_fail
/// #![deny(unused_must_use)]
/// let mut lp = timerloop::EventLoop::new();
/// lp.completion(|_| println!("never runs")); // error: unused `Completion`
/// ```
#[must_use = "dropping a Completion cancels its request: its callback never runs"]
pub struct Completion {
    key: usize,
    done: bool,
    signal: Arc<dyn Signal>,
}

impl fmt::Debug for Completion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Completion")
            .field("key", &self.key)
            .finish()
    }
}

trait Signal: Send + Sync {
    fn signal(&self, key: usize, complete: bool);
}

impl<H: 'static, W: Wake> Signal for Shared<H, W> {
    fn signal(&self, key: usize, complete: bool) {
        let msg = if complete {
            Msg::Complete(key)
        } else {
            Msg::Cancel(key)
        };
        // If the waker fails the message is still queued; the next poll
        // phase that checks the queue will see it. A loop that is gone has
        // nothing left to signal.
        let _ = self.send(msg);
    }
}

impl Completion {
    /// Completes the request: its callback runs in the loop's next poll
    /// phase. Completing from the loop's own thread works too.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let ran = Rc::new(Cell::new(false));
    /// let r = ran.clone();
    /// let c = lp.completion(move |_| r.set(true));
    /// let worker = std::thread::spawn(move || c.complete());
    /// lp.run().unwrap(); // stays alive until the completion arrives
    /// worker.join().unwrap();
    /// assert!(ran.get());
    /// ```
    pub fn complete(mut self) {
        self.done = true;
        self.signal.signal(self.key, true);
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        if !self.done {
            self.signal.signal(self.key, false);
        }
    }
}

pub(super) struct Io<H> {
    poll: Poll,
    events: Events,
    shared: Arc<Shared<H>>,
    /// Requests in flight: (request id, callback).
    requests: Slab<(u64, Option<OnceCb<H>>)>,
    next_request: u64,
    /// Readiness fetched but not yet delivered (the loop was halted).
    undelivered: VecDeque<(usize, Readiness)>,
    /// Cross-thread messages taken off the shared queue but held for a
    /// later poll phase.
    held: VecDeque<Msg<H>>,
    /// Registered I/O sources. With none, a zero-timeout poll has nothing
    /// to ask the kernel: cross-thread messages are seen through a flag.
    sources: usize,
    /// On a virtual clock with sources registered: how long (real time) the
    /// sources must be quiet before time may jump to the next timer.
    pub(super) grace: Duration,
    /// Made with the loop when its clock is real (a virtual clock never
    /// waits); `None` also where it could not be made.
    pub(super) deadline: Option<DeadlineTimer>,
    /// The poller's own failure (not `EINTR`): the poll phase halted the
    /// loop, and its run returns this ([`Loop::take_poll_error`]).
    failed: Option<std::io::Error>,
    /// Tests: the next poll fails with this, as if the kernel said so.
    #[cfg(test)]
    fail_next: Option<std::io::ErrorKind>,
}

impl<H: 'static> Io<H> {
    /// The poller, its waker and, for a real clock (`precise`), the
    /// deadline timer: all the descriptors a loop holds.
    pub(super) fn new(precise: bool) -> std::io::Result<Self> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        let deadline = if precise {
            DeadlineTimer::new(&poll)
        } else {
            None
        };
        Ok(Io {
            poll,
            events: Events::with_capacity(256),
            shared: Arc::new(Shared::new(waker)),
            requests: Slab::new(),
            next_request: 0,
            undelivered: VecDeque::new(),
            held: VecDeque::new(),
            sources: 0,
            grace: DEFAULT_GRACE,
            deadline,
            failed: None,
            #[cfg(test)]
            fail_next: None,
        })
    }

    pub(super) fn forget(&mut self, key: usize) {
        self.sources -= 1;
        self.undelivered.retain(|&(k, _)| k != key);
    }
}

impl<H> Drop for Io<H> {
    fn drop(&mut self) {
        self.shared.close();
    }
}

impl<H: Host> Loop<H> {
    /// A new [`Remote`] for this loop: an active, refed async handle.
    pub(crate) fn remote(&mut self) -> Remote<H> {
        let handle = self.insert(Kind::Async);
        self.activate(handle.index());
        Remote {
            inner: Arc::new(AsyncHandle {
                shared: self.io.shared.clone(),
                handle,
            }),
        }
    }

    /// Tests: the next poll fails with `kind`, as if the kernel said so.
    #[cfg(test)]
    pub(crate) fn fail_next_poll(&mut self, kind: std::io::ErrorKind) {
        self.io.fail_next = Some(kind);
    }

    /// The poller's failure that halted the last run, if it failed.
    pub(crate) fn take_poll_error(&mut self) -> Option<std::io::Error> {
        self.io.failed.take()
    }

    /// A [`Sender`] for this loop.
    pub(crate) fn sender(&self) -> Sender<H> {
        Sender {
            shared: self.io.shared.clone(),
        }
    }

    /// Registered I/O sources.
    pub(crate) fn io_sources(&self) -> usize {
        self.io.sources
    }

    /// Requests in flight: completions not yet completed or dropped.
    pub(crate) fn requests_in_flight(&self) -> usize {
        self.io.requests()
    }

    /// Live remotes: async handles not closed (a walk of the handles,
    /// for [`Stats`](crate::Stats) only).
    pub(crate) fn remotes(&self) -> usize {
        self.handles
            .values()
            .filter(|r| matches!(r.kind, Kind::Async) && !r.closing)
            .count()
    }

    /// Whether `remote` posts to this loop.
    pub(crate) fn owns_remote(&self, remote: &Remote<H>) -> bool {
        remote.posts_to(&self.io)
    }

    /// Starts a request whose callback `cb` runs in a poll phase once the
    /// returned [`Completion`] is completed (from any thread).
    pub(crate) fn request(&mut self, cb: impl FnOnce(&mut H) + 'static) -> Completion {
        let id = self.io.next_request;
        self.io.next_request += 1;
        let key = self.io.requests.insert((id, Some(Box::new(cb))));
        Completion {
            key,
            done: false,
            signal: self.io.shared.clone(),
        }
    }

    /// Registers an I/O source the loop takes ownership of; `cb` runs in
    /// the poll phase with it and its readiness. The handle is active and
    /// refed until closed ([`Loop::io_close`] drops the source,
    /// [`Loop::io_take`] gives it back); dropping the loop drops it.
    ///
    /// # Errors
    ///
    /// The operating system's error, with the source, if it cannot be
    /// registered.
    pub(crate) fn io_insert(
        &mut self,
        mut source: Box<dyn OwnedSource>,
        interest: Interest,
        cb: IoCb<H>,
    ) -> Result<Handle, (std::io::Error, Box<dyn OwnedSource>)> {
        let h = self.insert(Kind::Io {
            cb: Some(cb),
            source: None,
            owned: true,
            interest: None,
        });
        let key = h.index();
        let registry = self.io.poll.registry();
        if let Err(e) = registry.register(source.source(), Token(key), interest) {
            self.handles.remove_at(key);
            return Err((e, source));
        }
        if let Kind::Io { source: slot, .. } = &mut self.handles[key].kind {
            *slot = Some(source);
        }
        self.io.sources += 1;
        self.activate(key);
        Ok(h)
    }

    /// Registers a source owned elsewhere (a future's); `cb` gets `()` as
    /// its source. Its owner deregisters it with [`Loop::io_close_external`].
    ///
    /// # Errors
    ///
    /// The operating system's error if the source cannot be registered.
    pub(crate) fn io_register_external(
        &mut self,
        source: &mut dyn Source,
        interest: Interest,
        cb: IoCb<H>,
    ) -> std::io::Result<Handle> {
        let h = self.insert(Kind::Io {
            cb: Some(cb),
            source: None,
            owned: false,
            interest: None,
        });
        let key = h.index();
        if let Err(e) = self
            .io
            .poll
            .registry()
            .register(source, Token(key), interest)
        {
            self.handles.remove_at(key);
            return Err(e);
        }
        self.io.sources += 1;
        self.activate(key);
        Ok(h)
    }

    /// The I/O record of `h`, checked.
    #[allow(clippy::type_complexity)]
    fn io_rec(
        &mut self,
        h: Handle,
    ) -> Result<
        (
            &mut Option<Box<dyn OwnedSource>>,
            bool,
            &mut Option<Interest>,
        ),
        UvError,
    > {
        let rec = self.rec_mut(h)?;
        if rec.closing {
            return Err(UvError::Closing);
        }
        match &mut rec.kind {
            Kind::Io {
                source,
                owned,
                interest,
                ..
            } => Ok((source, *owned, interest)),
            _ => Err(UvError::WrongKind),
        }
    }

    /// Checks that `h` is a live (not closing) I/O handle.
    pub(crate) fn io_check(&mut self, h: Handle) -> Result<(), UvError> {
        self.io_rec(h).map(|_| ())
    }

    /// The owned source of `h`.
    ///
    /// # Errors
    ///
    /// A bad handle; [`UvError::Busy`] while the source is lent to its
    /// callback; [`UvError::WrongKind`] for a source the loop does not own.
    pub(crate) fn io_source(&mut self, h: Handle) -> Result<&mut dyn OwnedSource, UvError> {
        match self.io_rec(h)? {
            (Some(src), _, _) => Ok(&mut **src),
            (None, true, _) => Err(UvError::Busy),
            (None, false, _) => Err(UvError::WrongKind),
        }
    }

    /// Changes the interest of an owned source; asked for while the source
    /// is lent to its callback, it applies when the callback returns.
    ///
    /// # Errors
    ///
    /// A bad handle; the OS error of re-registering (the handle stays as it
    /// was, with its old interest).
    pub(crate) fn io_set_interest(
        &mut self,
        h: Handle,
        interest: Interest,
    ) -> Result<(), IoOpError> {
        let key = h.index();
        let (src, owned, pending) = self.io_rec(h)?;
        let Some(mut taken) = src.take() else {
            if !owned {
                return Err(IoOpError::Uv(UvError::WrongKind));
            }
            *pending = Some(interest);
            return Ok(());
        };
        let r = self
            .io
            .poll
            .registry()
            .reregister(taken.source(), Token(key), interest)
            .map_err(IoOpError::Os);
        if let Ok((slot, _, _)) = self.io_rec(h) {
            *slot = Some(taken);
        }
        r
    }

    /// Deregisters and drops an owned source and closes its handle. From
    /// inside the source's own callback, the source is dropped when the
    /// callback returns.
    ///
    /// # Errors
    ///
    /// [`UvError::StaleHandle`] / [`UvError::WrongKind`] / [`UvError::Closing`]
    /// for a bad handle. Deregistration errors from the OS are ignored: the
    /// source is being dropped, which removes it from the poller anyway.
    pub(crate) fn io_close(&mut self, h: Handle) -> Result<(), UvError> {
        let (src, owned, _) = self.io_rec(h)?;
        if !owned {
            return Err(UvError::WrongKind);
        }
        let src = src.take();
        if let Some(mut src) = src {
            let _ = self.io.poll.registry().deregister(src.source());
            drop(src);
        }
        self.close(h, None)
    }

    /// Deregisters an owned source, closes its handle and gives the source
    /// back.
    ///
    /// # Errors
    ///
    /// A bad handle; [`UvError::Busy`] from inside the source's own
    /// callback (use [`Loop::io_close`] there).
    pub(crate) fn io_take(&mut self, h: Handle) -> Result<Box<dyn OwnedSource>, UvError> {
        let (src, owned, _) = self.io_rec(h)?;
        if !owned {
            return Err(UvError::WrongKind);
        }
        let mut src = src.take().ok_or(UvError::Busy)?;
        let _ = self.io.poll.registry().deregister(src.source());
        self.close(h, None)?;
        Ok(src)
    }

    /// Deregisters a source owned elsewhere and closes its handle.
    ///
    /// # Errors
    ///
    /// As [`Loop::io_close`].
    pub(crate) fn io_close_external(
        &mut self,
        h: Handle,
        source: &mut dyn Source,
    ) -> Result<(), UvError> {
        if self.io_rec(h)?.1 {
            return Err(UvError::WrongKind);
        }
        let _ = self.io.poll.registry().deregister(source);
        self.close(h, None)
    }

    /// Closes the handle of a source owned elsewhere that its owner has
    /// deregistered already (it took the source back, deregistering it
    /// through a clone of [`io_registry`](Self::io_registry)).
    ///
    /// # Errors
    ///
    /// As [`Loop::io_close`].
    pub(crate) fn io_close_external_deregistered(&mut self, h: Handle) -> Result<(), UvError> {
        if self.io_rec(h)?.1 {
            return Err(UvError::WrongKind);
        }
        self.close(h, None)
    }

    /// The poller's registry.
    pub(crate) fn io_registry(&self) -> &mio::Registry {
        self.io.poll.registry()
    }

    /// Sets the I/O grace of a virtual clock (see [`io_poll`]).
    pub(crate) fn set_io_grace(&mut self, grace: Duration) {
        self.io.grace = grace;
    }

    /// The I/O grace of a virtual clock.
    pub(crate) fn io_grace(&self) -> Duration {
        self.io.grace
    }
}

/// What an I/O operation on a handle can fail with.
#[derive(Debug)]
pub(crate) enum IoOpError {
    /// The handle.
    Uv(UvError),
    /// The operating system.
    Os(std::io::Error),
}

impl From<UvError> for IoOpError {
    fn from(e: UvError) -> Self {
        IoOpError::Uv(e)
    }
}

/// A source the loop owns: any mio source, kept as `Any` so that the layer
/// above can hand its callback the concrete type.
pub(crate) trait OwnedSource: Any {
    /// The source, to (de)register.
    fn source(&mut self) -> &mut dyn Source;
    /// The source, to downcast.
    fn as_any(&mut self) -> &mut dyn Any;
    /// The source, to give back.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<S: Source + Any> OwnedSource for S {
    fn source(&mut self) -> &mut dyn Source {
        self
    }

    fn as_any(&mut self) -> &mut dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// `uv__io_poll`: waits up to `timeout` ms past the loop time at entry
/// (`None`: until something happens), then runs what arrived.
///
/// On a virtual clock, requests already in flight when the poll phase
/// starts are waited for (in real time, with virtual time standing still)
/// and completed in this poll phase: off-thread work takes no virtual time,
/// so the order of a virtual run never depends on a worker's speed.
#[inline(always)]
pub(super) fn io_poll<H: Host>(host: &mut H, timeout: Option<u64>) {
    // A poll phase that must not wait (an idle handle is active, say),
    // with nothing registered, nothing in flight and nothing queued,
    // has nothing to do: the long way below would find exactly that (no
    // syscall, no clock read, no delivery), at a call and a few dozen
    // instructions an iteration.
    let io = &host.uv().io;
    if timeout == Some(0)
        && io.sources == 0
        && io.requests.is_empty()
        && io.undelivered.is_empty()
        && io.held.is_empty()
        && !io.shared.has_msgs()
    {
        return;
    }
    io_poll_phase(host, timeout);
}

#[inline(never)]
fn io_poll_phase<H: Host>(host: &mut H, timeout: Option<u64>) {
    let lp = host.uv();
    let base = lp.time;
    let deadline = timeout.map(|t| base.saturating_add(t));
    let owed = lp.clock.is_virtual().then_some(lp.io.next_request);
    // Messages held back by the previous poll phase are deliverable now.
    let mut held = !lp.io.held.is_empty();
    // A virtual clock with real sources registered first waits (for real)
    // until they have been quiet for the grace period; only then may time
    // jump to the deadline, so I/O in flight is seen before timers fire.
    let mut graced = !(lp.clock.is_virtual()
        && lp.io.sources > 0
        && !lp.io.grace.is_zero()
        && deadline.is_some_and(|d| d > base));
    loop {
        let lp = host.uv();
        let pending_work = std::mem::take(&mut held) || lp.io.has_work();
        let waiting_for_work = owed.is_some_and(|id| lp.io.in_flight_before(id));
        // `asked_clock`: the clock was told the loop waits (a virtual clock
        // may have jumped), so the loop time must be refreshed.
        let (wait, asked_clock) = if pending_work {
            (Some(Duration::ZERO), false)
        } else if waiting_for_work {
            (None, true)
        } else if timeout == Some(0) {
            (Some(Duration::ZERO), false)
        } else if !graced {
            graced = true;
            (Some(lp.io.grace), false)
        } else {
            let until = deadline.map(Duration::from_millis);
            let wait = lp.clock.wait_until(until, lp.io.requests() > 0);
            if let Some(at) = deadline
                && let Some(left) = wait.filter(|w| !w.is_zero())
                && let Some(timer) = &mut lp.io.deadline
            {
                timer.arm(at, left);
            }
            (wait, true)
        };
        let io = &mut lp.io;
        // A non-blocking poll with no sources registered can only find the
        // waker, whose messages the flag already announces: skip the
        // syscall (libuv likewise returns early when it watches no fds),
        // and the clock read after it, since no time was spent waiting.
        let syscall = wait != Some(Duration::ZERO) || io.sources > 0;
        if syscall {
            #[cfg(test)]
            let polled = match io.fail_next.take() {
                Some(kind) => Err(std::io::Error::from(kind)),
                None => io.poll.poll(&mut io.events, wait),
            };
            #[cfg(not(test))]
            let polled = io.poll.poll(&mut io.events, wait);
            match polled {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // The poller itself failing (its descriptor closed under it,
                // EBADF) leaves the loop nothing to wait with: each poll
                // would fail at once, a silent spin with no deadline to end
                // it (libuv aborts). The loop halts, and its run returns
                // the error.
                Err(e) => {
                    io.failed = Some(e);
                    lp.halt();
                    return;
                }
            }
            for ev in io.events.iter() {
                match ev.token() {
                    WAKER => {}
                    DEADLINE => {
                        if let Some(timer) = &mut io.deadline {
                            timer.clear();
                        }
                    }
                    token => io.undelivered.push_back((token.0, Readiness::of(ev))),
                }
            }
        }
        if syscall || asked_clock {
            lp.update_time();
        }
        let delivered = dispatch(host, owed);
        let lp = host.uv();
        if owed.is_some_and(|id| lp.io.in_flight_before(id)) && !lp.halted {
            continue;
        }
        if delivered || timeout == Some(0) || lp.halted {
            return;
        }
        if let Some(d) = deadline
            && host.uv().time >= d
        {
            return;
        }
    }
}

impl<H> Io<H> {
    pub(super) fn requests(&self) -> usize {
        self.requests.len()
    }

    /// Live keep-alive guards.
    pub(super) fn kept_alive(&self) -> bool {
        self.shared.kept_alive()
    }

    /// Whether a request started before request id `id` is still in flight.
    fn in_flight_before(&self, id: u64) -> bool {
        self.requests.iter().any(|(_, &(rid, _))| rid < id)
    }

    fn has_work(&self) -> bool {
        !self.undelivered.is_empty() || self.shared.has_msgs()
    }
}

/// Delivers queued readiness and cross-thread messages. Returns whether
/// anything ran.
fn dispatch<H: Host>(host: &mut H, owed: Option<u64>) -> bool {
    let mut ran = false;
    while let Some((key, readiness)) = host.uv().io.undelivered.pop_front() {
        let lp = host.uv();
        let Some(rec) = lp.handles.get_at_mut(key) else {
            continue;
        };
        if rec.closing {
            continue;
        }
        let Kind::Io { cb, source, .. } = &mut rec.kind else {
            continue;
        };
        let Some(mut f) = cb.take() else { continue };
        let mut lent = source.take();
        let handle = lp.handles.key_at(key);
        // Caught, so that the callback and the source go back (as
        // `call_handle` puts a timer's back) before a panic unwinds on:
        // dropped, the source would be closed under a live handle, busy
        // for ever.
        let r = catch_unless_replaced(host, |host| match &mut lent {
            Some(src) => f(host, handle, src.as_any(), readiness),
            None => f(host, handle, &mut (), readiness),
        });
        ran = true;
        let lp = host.uv();
        if let Some(rec) = lp.handles.get_mut(handle)
            && let Kind::Io {
                cb,
                source,
                interest,
                ..
            } = &mut rec.kind
        {
            if rec.closing {
                // Closed by its own callback: the source goes now.
                if let Some(mut src) = lent {
                    let _ = lp.io.poll.registry().deregister(src.source());
                }
            } else {
                *cb = Some(f);
                if let Some(mut src) = lent {
                    if let Some(i) = interest.take() {
                        // A failure leaves the old interest; the callback
                        // asked from a place that could not see the error.
                        let _ = lp
                            .io
                            .poll
                            .registry()
                            .reregister(src.source(), Token(key), i);
                    }
                    *source = Some(src);
                }
            }
        }
        if let Err(payload) = r {
            resume_unwind(payload);
        }
        if host.uv().halted {
            return ran;
        }
    }
    // Messages that arrived so far, as one batch (libuv's uv__work_done
    // takes the whole completed queue too): work completed while the
    // batch runs waits for the next poll phase.
    let lp = host.uv();
    if lp.io.held.is_empty() && !lp.io.shared.has_msgs() {
        // Nothing to deliver, the common case of every poll phase: no
        // batch to take and give back (moving the queues' buffers, then
        // an append and a drop, was a sixth of an otherwise empty loop
        // iteration, `immediate-depth`).
        return ran;
    }
    let mut batch = std::mem::take(&mut lp.io.held);
    lp.io.shared.take_msgs(&mut batch);
    // A completion held back (below) holds back the posts, closes and
    // releases queued after it too, so a worker's post after its
    // `complete` still comes after the completion (round 37's audit: it
    // ran first). Completions of older requests are not held: the phase
    // waits for those.
    let mut holding = false;
    while let Some(msg) = batch.pop_front() {
        let lp = host.uv();
        match msg {
            Msg::Run(_) | Msg::CloseAsync(_) | Msg::Released if holding => {
                lp.io.held.push_back(msg);
            }
            Msg::Run(f) => {
                run_keeping(host, &mut batch, f);
                ran = true;
            }
            Msg::Complete(key) | Msg::Cancel(key)
                if owed.is_some_and(|id| lp.io.requests.get(key).is_some_and(|r| r.0 >= id)) =>
            {
                // On a virtual clock, a request started during this poll
                // phase completes in the next one, however fast it was.
                lp.io.held.push_back(msg);
                holding = true;
            }
            Msg::Complete(key) => {
                if let Some((_, Some(cb))) = lp.io.requests.try_remove(key) {
                    run_keeping(host, &mut batch, cb);
                    ran = true;
                }
            }
            Msg::Cancel(key) => {
                // Like a request ending with UV_ECANCELED: something
                // happened, and the poll phase must not go back to sleep
                // (the loop may have nothing left to wait for).
                ran |= lp.io.requests.try_remove(key).is_some();
            }
            Msg::CloseAsync(h) => {
                // As a close: the poll phase must not sleep on, the loop may
                // have nothing left to wait for.
                ran |= lp.close(h, None).is_ok();
            }
            Msg::Released => {
                // The same: the last keep-alive went on another thread.
                ran = true;
            }
        }
        if host.uv().halted {
            break;
        }
    }
    let lp = host.uv();
    lp.io.held.append(&mut batch);
    ran
}

/// Runs one message's closure; if a panic escapes it, the messages of the
/// batch not yet delivered go back to the loop (after those held back)
/// before it unwinds on, for the next poll phase: a lost completion would
/// leave its request in flight, and the loop waiting, for ever.
fn run_keeping<H: Host>(host: &mut H, batch: &mut VecDeque<Msg<H>>, f: impl FnOnce(&mut H)) {
    if let Err(payload) = catch_unless_replaced(host, f) {
        host.uv().io.held.append(batch);
        resume_unwind(payload);
    }
}
