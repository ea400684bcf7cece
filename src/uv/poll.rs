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
//!   poll phase; a `Remote`'s posts all come before its closing;
//! - once the loop is dropped the queue is closed: a post is refused with
//!   [`PostError::Closed`] and its closure dropped, so nothing piles up
//!   for a loop that will never run it;
//! - no user code runs while the queue's lock is held (closures are
//!   dropped after it is released).

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mio::event::Source;
use mio::{Events, Interest, Poll, Token, Waker};
use slab::Slab;

use super::{Handle, Host, IoCb, Kind, Loop, OnceCb, UvError};

const WAKER: Token = Token(usize::MAX);

/// What an I/O source is ready for, copied out of a [`mio::event::Event`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
}

struct Queue<H> {
    msgs: VecDeque<Msg<H>>,
    /// The loop was dropped: nothing will ever take a message again.
    closed: bool,
}

struct Shared<H> {
    queue: Mutex<Queue<H>>,
    has_msgs: AtomicBool,
    waker: Waker,
    /// Live [`KeepAlive`]s: waits whose wake may come from another thread.
    keepalive: AtomicUsize,
}

/// Why a closure could not be posted to a loop.
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

impl std::error::Error for PostError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PostError::Closed => None,
            PostError::Wake(e) => Some(e),
        }
    }
}

impl<H> Shared<H> {
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
        drop(q);
        self.has_msgs.store(true, Ordering::Release);
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
        self.shared.keepalive.fetch_add(1, Ordering::AcqRel);
        KeepAlive {
            counter: self.shared.clone(),
        }
    }
}

trait Counter: Send + Sync {
    fn release(&self);
}

impl<H> Counter for Shared<H> {
    fn release(&self) {
        if self.keepalive.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The loop may be waiting for nothing else: let it look again.
            let _ = self.waker.wake();
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
struct AsyncHandle<H> {
    shared: Arc<Shared<H>>,
    handle: Handle,
}

impl<H> Drop for AsyncHandle<H> {
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
pub(crate) struct Remote<H> {
    inner: Arc<AsyncHandle<H>>,
}

impl<H> Clone for Remote<H> {
    fn clone(&self) -> Self {
        Remote {
            inner: self.inner.clone(),
        }
    }
}

impl<H> fmt::Debug for Remote<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote")
            .field("handle", &self.inner.handle)
            .finish_non_exhaustive()
    }
}

impl<H: 'static> Remote<H> {
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

impl<H: 'static> Signal for Shared<H> {
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
}

impl<H: 'static> Io<H> {
    pub(super) fn new() -> std::io::Result<Self> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        Ok(Io {
            poll,
            events: Events::with_capacity(256),
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue {
                    msgs: VecDeque::new(),
                    closed: false,
                }),
                has_msgs: AtomicBool::new(false),
                keepalive: AtomicUsize::new(0),
                waker,
            }),
            requests: Slab::new(),
            next_request: 0,
            undelivered: VecDeque::new(),
            held: VecDeque::new(),
            sources: 0,
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

    /// Registers an I/O source; `cb` runs in the poll phase with its
    /// readiness. The handle is active and refed until closed with
    /// [`Loop::io_close`].
    ///
    /// # Errors
    ///
    /// The operating system's error if the source cannot be registered.
    pub(crate) fn io_register<S: Source + ?Sized>(
        &mut self,
        source: &mut S,
        interest: Interest,
        cb: impl FnMut(&mut H, Readiness) + 'static,
    ) -> std::io::Result<Handle> {
        let h = self.insert(Kind::Io {
            cb: Some(Box::new(cb) as IoCb<H>),
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

    /// Deregisters the source and closes its handle.
    ///
    /// # Errors
    ///
    /// [`UvError::StaleHandle`] / [`UvError::WrongKind`] / [`UvError::Closing`]
    /// for a bad handle; deregistration errors from the OS are ignored, as
    /// the source may already be closed.
    pub(crate) fn io_close<S: Source + ?Sized>(
        &mut self,
        h: Handle,
        source: &mut S,
    ) -> Result<(), UvError> {
        if !matches!(self.rec(h)?.kind, Kind::Io { .. }) {
            return Err(UvError::WrongKind);
        }
        let _ = self.io.poll.registry().deregister(source);
        self.close(h, None)
    }
}

/// `uv__io_poll`: waits up to `timeout` ms past the loop time at entry
/// (`None`: until something happens), then runs what arrived.
///
/// On a virtual clock, requests already in flight when the poll phase
/// starts are waited for (in real time, with virtual time standing still)
/// and completed in this poll phase: off-thread work takes no virtual time,
/// so the order of a virtual run never depends on a worker's speed.
pub(super) fn io_poll<H: Host>(host: &mut H, timeout: Option<u64>) {
    let lp = host.uv();
    let base = lp.time;
    let deadline = timeout.map(|t| base.saturating_add(t));
    let owed = lp.clock.is_virtual().then_some(lp.io.next_request);
    // Messages held back by the previous poll phase are deliverable now.
    let mut held = !lp.io.held.is_empty();
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
        } else {
            let until = deadline.map(Duration::from_millis);
            (lp.clock.wait_until(until, lp.io.requests() > 0), true)
        };
        let io = &mut lp.io;
        // A non-blocking poll with no sources registered can only find the
        // waker, whose messages the flag already announces: skip the
        // syscall (libuv likewise returns early when it watches no fds),
        // and the clock read after it, since no time was spent waiting.
        let syscall = wait != Some(Duration::ZERO) || io.sources > 0;
        if syscall {
            match io.poll.poll(&mut io.events, wait) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // The poller itself failing (EBADF, ENOMEM) leaves nothing to
                // wait on; treat it as a spurious wake-up rather than spinning
                // silently forever: the deadline check below still ends the
                // wait.
                Err(_) => {}
            }
            for ev in io.events.iter() {
                if ev.token() != WAKER {
                    io.undelivered.push_back((ev.token().0, Readiness::of(ev)));
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
        self.shared.keepalive.load(Ordering::Acquire) > 0
    }

    /// Whether a request started before request id `id` is still in flight.
    fn in_flight_before(&self, id: u64) -> bool {
        self.requests.iter().any(|(_, &(rid, _))| rid < id)
    }

    fn has_work(&self) -> bool {
        !self.undelivered.is_empty() || self.shared.has_msgs.load(Ordering::Acquire)
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
        let Kind::Io { cb } = &mut rec.kind else {
            continue;
        };
        let Some(mut f) = cb.take() else { continue };
        let handle = lp.handles.key_at(key);
        f(host, readiness);
        ran = true;
        if let Some(rec) = host.uv().handles.get_mut(handle)
            && let Kind::Io { cb } = &mut rec.kind
        {
            *cb = Some(f);
        }
        if host.uv().halted {
            return ran;
        }
    }
    // Messages that arrived so far, as one batch (libuv's uv__work_done
    // takes the whole completed queue too): work completed while the
    // batch runs waits for the next poll phase.
    let lp = host.uv();
    let mut batch = std::mem::take(&mut lp.io.held);
    if lp.io.shared.has_msgs.load(Ordering::Acquire) {
        let mut q = lp.io.shared.lock();
        batch.append(&mut q.msgs);
        lp.io.shared.has_msgs.store(false, Ordering::Release);
    }
    while let Some(msg) = batch.pop_front() {
        let lp = host.uv();
        match msg {
            Msg::Run(f) => {
                f(host);
                ran = true;
            }
            Msg::Complete(key) | Msg::Cancel(key)
                if owed.is_some_and(|id| lp.io.requests.get(key).is_some_and(|r| r.0 >= id)) =>
            {
                // On a virtual clock, a request started during this poll
                // phase completes in the next one, however fast it was.
                lp.io.held.push_back(msg);
            }
            Msg::Complete(key) => {
                if let Some((_, Some(cb))) = lp.io.requests.try_remove(key) {
                    cb(host);
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
        }
        if host.uv().halted {
            break;
        }
    }
    let lp = host.uv();
    lp.io.held.append(&mut batch);
    ran
}
