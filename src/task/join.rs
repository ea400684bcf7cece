//! [`JoinHandle`] and [`JoinError`]: a task's output, shared between the
//! task and its handle.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::num::NonZeroU64;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use crate::collections::arena::{Arena, Key};
use crate::timers::LoopShared;
use crate::timers::{CallbackError, CallbackKind, Cause};

/// Why a task did not produce its output.
///
/// ```
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// let h = lp.spawn(async { panic!("task failed") });
/// let out = lp.block_on(h).unwrap();
/// let err = out.unwrap_err();
/// assert!(err.is_panic());
/// assert_eq!(err.panic_message(), Some("task failed".to_owned()));
/// ```
#[derive(Clone)]
pub struct JoinError {
    repr: Repr,
    id: Id,
}

#[derive(Clone)]
pub(super) enum Repr {
    Cancelled,
    /// Shared by clones (one word: a join state holds an error).
    Panic(Arc<Panicked>),
}

/// A task's panic: its message, and its payload for
/// [`JoinError::into_panic`] (the first clone to take it has it).
pub(super) struct Panicked {
    msg: String,
    /// Whether the payload was a string (`msg` is then its text, not a
    /// stand-in), for `Display`, which quotes only a real message.
    text: bool,
    payload: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Panicked {
    fn take(&self) -> Option<Box<dyn Any + Send>> {
        self.payload
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

impl Drop for Panicked {
    fn drop(&mut self) {
        // A payload whose own drop panics loses nothing else.
        if let Some(p) = self.take() {
            crate::timers::discard_payload(p);
        }
    }
}

impl Repr {
    fn panicked(payload: Box<dyn Any + Send>) -> Repr {
        let msg = crate::timers::panic_message(&*payload);
        let text = payload.is::<&str>() || payload.is::<String>();
        Repr::Panic(Arc::new(Panicked {
            msg,
            text,
            payload: Mutex::new(Some(payload)),
        }))
    }
}

/// A task's identity, tokio's `task::Id`: what [`JoinHandle::id`],
/// [`AbortHandle::id`], [`JoinError::id`], [`task::id`](super::id) and
/// [`JoinSet::join_next_with_id`](super::JoinSet::join_next_with_id)
/// give. Ids are numbered from 1 in the order of the spawns of their
/// loop, and never reused by it (another loop numbers its own).
///
/// ```
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// let a = lp.spawn(async {});
/// let b = lp.spawn(async {});
/// assert_ne!(a.id(), b.id());
/// assert!(a.id() < b.id());
/// assert_eq!(a.id().to_string(), "1");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

impl Id {
    /// The id numbered `n`, none for 0.
    pub(super) fn from_raw(n: u64) -> Option<Id> {
        NonZeroU64::new(n).map(Id)
    }

    pub(super) fn get(self) -> u64 {
        self.0.get()
    }
}

impl fmt::Debug for Id {
    /// `Id(7)`, as tokio's.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// assert_eq!(format!("{:?}", lp.spawn(async {}).id()), "Id(1)");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({})", self.0)
    }
}

impl fmt::Display for Id {
    /// The number alone.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.spawn(async {});
    /// assert_eq!(lp.spawn(async {}).id().to_string(), "2");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl JoinError {
    /// Whether the task was aborted ([`JoinHandle::abort`]), or dropped
    /// unfinished with its loop.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async { time::sleep(Duration::from_secs(60)).await });
    /// h.abort();
    /// let err = lp.block_on(h).unwrap().unwrap_err();
    /// assert!(err.is_cancelled());
    /// assert_eq!(lp.now(), 0, "the sleep's timer went with the task");
    /// ```
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// Whether the task panicked.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async { panic!("no") });
    /// assert!(lp.block_on(h).unwrap().unwrap_err().is_panic());
    /// ```
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(..))
    }

    /// The panic's message, if the task panicked.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async { panic!("boom {}", 7) });
    /// let err = lp.block_on(h).unwrap().unwrap_err();
    /// assert_eq!(err.panic_message().as_deref(), Some("boom 7"));
    /// ```
    pub fn panic_message(&self) -> Option<String> {
        match &self.repr {
            Repr::Panic(p) => Some(p.msg.clone()),
            Repr::Cancelled => None,
        }
    }

    /// The [`Id`] of the task that failed.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async { panic!("no") });
    /// let id = h.id();
    /// assert_eq!(lp.block_on(h).unwrap().unwrap_err().id(), id);
    /// ```
    pub fn id(&self) -> Id {
        self.id
    }

    /// The task's panic payload, to resume the panic with
    /// [`std::panic::resume_unwind`] as tokio code does. A clone of the
    /// error shares it: the first of them to take it gets the payload
    /// itself, the others a `String` of its message.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async { std::panic::panic_any(42u32) });
    /// let err = lp.block_on(h).unwrap().unwrap_err();
    /// let payload = err.into_panic();
    /// assert_eq!(payload.downcast_ref::<u32>(), Some(&42));
    /// ```
    ///
    /// # Panics
    ///
    /// If the task did not panic (it was aborted), as tokio's does; see
    /// [`try_into_panic`](Self::try_into_panic).
    pub fn into_panic(self) -> Box<dyn Any + Send> {
        self.try_into_panic()
            .unwrap_or_else(|_| panic!("JoinError::into_panic: the task was aborted, not panicked"))
    }

    /// The task's panic payload, or the error back if the task was
    /// aborted.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(std::future::pending::<()>());
    /// h.abort();
    /// let err = lp.block_on(h).unwrap().unwrap_err();
    /// assert!(err.try_into_panic().unwrap_err().is_cancelled());
    ///
    /// let h = lp.spawn(async { panic!("boom") });
    /// let err = lp.block_on(h).unwrap().unwrap_err();
    /// let p = err.try_into_panic().unwrap();
    /// assert_eq!(p.downcast_ref::<&str>(), Some(&"boom"));
    /// ```
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send>, JoinError> {
        match &self.repr {
            Repr::Panic(p) => Ok(p.take().unwrap_or_else(|| Box::new(p.msg.clone()))),
            Repr::Cancelled => Err(self),
        }
    }
}

/// Errors are equal if both are cancellations, or panics with the same
/// message, whatever their tasks' ids.
///
/// ```
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// let a = lp.spawn(async { panic!("same") });
/// let b = lp.spawn(async { panic!("same") });
/// let a = lp.block_on(a).unwrap().unwrap_err();
/// let b = lp.block_on(b).unwrap().unwrap_err();
/// assert_eq!(a, b);
/// assert_eq!(a.clone(), a);
/// ```
impl PartialEq for JoinError {
    fn eq(&self, other: &Self) -> bool {
        match (&self.repr, &other.repr) {
            (Repr::Cancelled, Repr::Cancelled) => true,
            (Repr::Panic(a), Repr::Panic(b)) => a.msg == b.msg,
            _ => false,
        }
    }
}

impl Eq for JoinError {}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => write!(f, "JoinError::Cancelled({:?})", self.id),
            Repr::Panic(p) => write!(f, "JoinError::Panic({:?}, {:?})", self.id, p.msg),
        }
    }
}

impl fmt::Display for JoinError {
    /// What happened to which task, as tokio's words it: `task 3 was
    /// cancelled`, `task 3 panicked with message "boom"` (the message
    /// quoted and escaped as `{:?}` does), or `task 3 panicked` for a
    /// payload that is not a string. The [`Id`] is the task's number in
    /// its loop's spawns, so the text is the same on every run.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let aborted = lp.spawn(std::future::pending::<()>());
    /// let boom = lp.spawn(async { panic!("boom") });
    /// let odd = lp.spawn(async { std::panic::panic_any(7u8) });
    /// aborted.abort();
    /// let [a, b, c] = lp.block_on(async { [aborted.await, boom.await, odd.await] }).unwrap();
    /// assert_eq!(a.unwrap_err().to_string(), "task 1 was cancelled");
    /// assert_eq!(b.unwrap_err().to_string(), r#"task 2 panicked with message "boom""#);
    /// assert_eq!(c.unwrap_err().to_string(), "task 3 panicked");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => write!(f, "task {} was cancelled", self.id),
            Repr::Panic(p) if p.text => {
                write!(f, "task {} panicked with message {:?}", self.id, p.msg)
            }
            Repr::Panic(_) => write!(f, "task {} panicked", self.id),
        }
    }
}

impl std::error::Error for JoinError {}

impl From<JoinError> for std::io::Error {
    /// An error of kind [`Other`](std::io::ErrorKind::Other) that wraps
    /// the `JoinError`, as tokio's: `handle.await?` works in a function
    /// returning `io::Result`, and the `JoinError` can be taken back out
    /// with [`downcast`](std::io::Error::downcast).
    ///
    /// ```
    /// use timerloop::{EventLoop, task::{self, JoinError}};
    /// async fn worker() -> std::io::Result<u32> {
    ///     let n = task::spawn(async { panic!("boom") }).await?; // JoinError into io::Error
    ///     Ok(n)
    /// }
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let e = lp.block_on(worker()).unwrap().unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::Other);
    /// let join: JoinError = e.downcast().unwrap();
    /// assert_eq!(join.panic_message().as_deref(), Some("boom"));
    /// ```
    fn from(e: JoinError) -> std::io::Error {
        std::io::Error::other(e)
    }
}

/// The loop's join states, one per task whose handle (or an
/// [`AbortHandle`] of it) is still there, in one arena: a spawn allocates
/// no shared cell for them. A state lives as long as its handle and
/// abort handles: dropping the handle (detaching the task) frees it if no
/// abort handle is left, so a spawn whose handle is dropped at once
/// reuses the slot the previous one freed. Keys are generation checked: a
/// task whose state is gone, or says it has no handle, is detached, and
/// its output is dropped unread.
#[derive(Default)]
pub(crate) struct Joins {
    states: RefCell<Arena<JoinState>>,
    /// The task keys of deferred spawns made by their microtask whose
    /// states are still there (for `abort`), by join key: kept here, not
    /// in every join state, which every spawn writes.
    made: RefCell<HashMap<Key, Key>>,
    /// The last task id given out (ids count from 1).
    last_id: Cell<u64>,
    /// The id of the task being polled, 0 if none ([`super::try_id`]).
    pub(super) current: Cell<u64>,
}

struct JoinState {
    /// The output (boxed only if its handle is still there to read it; a
    /// zero-sized output, such as `()`, allocates nothing).
    out: Option<Result<Box<dyn Any>, Repr>>,
    waker: Option<Waker>,
    /// The output is in (or was taken, or nobody will read it): the task
    /// is over.
    done: bool,
    /// Its [`JoinHandle`]: still there, or dropped (the task detached,
    /// the state staying only for its abort handles, a deferred spawn's
    /// microtask, or to say that the handle was awaited); and whether it
    /// was polled while the task ran.
    handle: Handle,
    /// Whether the task is made yet (see [`Deferred`]).
    deferred: Deferred,
    /// Aborted, its future not dropped yet: the state completes
    /// cancelled once it is (whatever the future returned meanwhile), as
    /// tokio's handle does, so that what the future held is released by
    /// the time its handle says it is over.
    cancelling: bool,
    /// How many [`AbortHandle`]s of the task are there. With the flags
    /// above, in the padding after `waker`: the state is 48 bytes either
    /// way.
    aborts: u32,
}

/// A join state's [`JoinHandle`]. One polled while its task ran is as a
/// promise that was awaited (a handler attached for good): a panic of the
/// task is handled even if the handle is dropped before it (given up on
/// by a `timeout` or a `select`), so its state stays until the task is
/// over to say so. One byte, beside `done`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Handle {
    /// There, not polled yet.
    Held,
    /// There, and polled while the task ran.
    Awaited,
    /// Dropped unpolled: a panic of the task is an unhandled rejection.
    Detached,
    /// Dropped after it was polled: a panic of the task is handled.
    GaveUp,
}

impl JoinState {
    /// Its handle is still there.
    fn attached(&self) -> bool {
        matches!(self.handle, Handle::Held | Handle::Awaited)
    }

    /// Held by something other than its handle: an abort handle, a
    /// deferred spawn's microtask still to come, or a task still running
    /// whose handle was awaited and dropped (to say its panic is handled).
    fn held_elsewhere(&self) -> bool {
        self.aborts > 0
            || self.deferred == Deferred::Waiting
            || (self.handle == Handle::GaveUp && !self.done)
    }
}

/// A task spawned where its loop was held (`task::spawn` inside a
/// callback) is made by its first-poll microtask, queued at the spawn:
/// until then its handles have no task key. One byte, beside `done`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Deferred {
    /// Made at once: the handles hold the task's key.
    No,
    /// Not made yet: the microtask reads the state (and frees it if
    /// nothing else holds it).
    Waiting,
    /// Made by its microtask: the task's key is in [`Joins::made`].
    Made,
}

impl Joins {
    /// The id of a task about to be spawned.
    pub(super) fn new_id(&self) -> Id {
        let id = self.last_id.get() + 1;
        self.last_id.set(id);
        Id(NonZeroU64::new(id).expect("ids start at 1"))
    }

    /// A join state for a task about to be spawned.
    pub(super) fn open(&self) -> Key {
        self.open_as(Deferred::No)
    }

    /// A join state for a task its first-poll microtask will make.
    pub(super) fn open_deferred(&self) -> Key {
        self.open_as(Deferred::Waiting)
    }

    fn open_as(&self, deferred: Deferred) -> Key {
        self.states.borrow_mut().insert(JoinState {
            out: None,
            waker: None,
            done: false,
            handle: Handle::Held,
            deferred,
            cancelling: false,
            aborts: 0,
        })
    }

    /// Takes the state `join` out if nothing refers to it any more: no
    /// handle, no abort handle, no deferred spawn's microtask to come. The
    /// caller drops what it returns after releasing the states (an
    /// output's drop may drop other handles).
    fn free_if_unowned(&self, states: &mut Arena<JoinState>, join: Key) -> Option<JoinState> {
        let st = states.get(join)?;
        if st.attached() || st.held_elsewhere() {
            return None;
        }
        if st.deferred == Deferred::Made {
            self.made.borrow_mut().remove(&join);
        }
        Some(states.remove_at(join.index()))
    }

    /// A deferred spawn's microtask runs: whether it makes the task and
    /// polls it (false: the task was aborted, and the future is dropped
    /// unpolled). A state nothing else holds goes here; one that stays is
    /// told the task's key with [`made`](Self::made).
    pub(super) fn take_deferred(&self, join: Key) -> bool {
        let mut states = self.states.borrow_mut();
        let Some(st) = states.get_mut(join) else {
            return false; // not reached: the state waits for this
        };
        let run = !st.done && !st.cancelling;
        if !run {
            st.deferred = Deferred::No; // no task will be made
        }
        if st.aborts == 0
            && (st.handle == Handle::Detached || (st.handle == Handle::GaveUp && !run))
        {
            let gone = states.remove_at(join.index());
            drop(states);
            drop(gone);
        }
        run
    }

    /// A deferred spawn's task was made with the key `task`.
    pub(super) fn made(&self, join: Key, task: Key) {
        if let Some(st) = self.states.borrow_mut().get_mut(join) {
            st.deferred = Deferred::Made;
            self.made.borrow_mut().insert(join, task);
        }
    }

    /// A deferred spawn's microtask was dropped unrun (its loop went
    /// away): the task is cancelled, as the loop's other tasks are then,
    /// and a state nothing else holds goes.
    pub(super) fn deferred_dropped(&self, join: Key) {
        let gone = {
            let mut states = self.states.borrow_mut();
            let Some(st) = states.get_mut(join) else {
                return;
            };
            st.deferred = Deferred::No;
            self.free_if_unowned(&mut states, join)
        };
        match gone {
            Some(gone) => drop(gone),
            None => self.complete(join, cancelled),
        }
    }

    /// The task `key` is over with `out` (built only if a handle will read
    /// it). Nothing if it was over already, or is detached with no abort
    /// handle; a detached task's abort handles see it over.
    pub(super) fn complete(&self, key: Key, out: impl FnOnce() -> Result<Box<dyn Any>, Repr>) {
        let waker = {
            let mut states = self.states.borrow_mut();
            let Some(st) = states.get_mut(key) else {
                return;
            };
            if st.done {
                return;
            }
            st.done = true;
            if !st.attached() {
                // Nobody will read it. A state kept only to say that its
                // dropped handle was awaited goes now.
                let gone = self.free_if_unowned(&mut states, key);
                drop(states);
                drop(gone);
                return;
            }
            // An aborted task ends cancelled, even if its future returned
            // (or panicked) in the poll that was under way.
            st.out = Some(if st.cancelling { cancelled() } else { out() });
            st.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Records the panic of a task that was not aborted, its payload
    /// kept for [`JoinError::into_panic`]. Returns the message if nobody
    /// will read it and nobody ever waited for it (the task was detached
    /// without its handle being polled): an unhandled rejection. A
    /// handle polled and then dropped (a `timeout` that gave up on it)
    /// handled it, as an awaited promise's rejection is handled.
    ///
    /// The payload is dropped (or kept) only after the states are let go
    /// of: its drop may use handles or spawn (it runs on this thread).
    pub(super) fn fail(&self, key: Key, payload: Box<dyn Any + Send>) -> Option<String> {
        let state = self.states.borrow().get(key).map(|st| (st.done, st.handle));
        let handle = match state {
            None => return Some(crate::timers::panic_message_of(payload)),
            Some((true, _)) => {
                crate::timers::discard_payload(payload);
                return None;
            }
            Some((false, handle)) => handle,
        };
        if matches!(handle, Handle::Detached | Handle::GaveUp) {
            self.complete(key, cancelled); // over, for its abort handles
            if handle == Handle::GaveUp {
                crate::timers::discard_payload(payload);
                return None;
            }
            return Some(crate::timers::panic_message_of(payload));
        }
        self.complete(key, || Err(Repr::panicked(payload)));
        None
    }

    /// Whether the task of the state `key`, whose handle or abort handle
    /// asks, is over.
    pub(super) fn is_done(&self, key: Key) -> bool {
        self.states.borrow().get(key).is_none_or(|st| st.done)
    }

    /// The task's future was dropped before it finished (its loop was
    /// dropped): the handle completes cancelled, as tokio's do when their
    /// runtime shuts down. Nothing if the task is over already.
    pub(super) fn orphan(&self, key: Key) {
        self.complete(key, cancelled);
    }

    /// Aborts the task of the state `join`, whose key is `task` if it was
    /// made at its spawn: for [`JoinHandle::abort`] and
    /// [`AbortHandle::abort`]. The future is dropped at the loop's next
    /// flush point (or, if the task is being polled, when its poll
    /// returns), and, for an abort made in the loop (its frame on top),
    /// the state completes cancelled then
    /// ([`cancelled_dropped`](Self::cancelled_dropped)), as tokio's does:
    /// whoever awaits the handle finds what the future held released. An
    /// abort made away from the loop completes the state at once. A
    /// deferred spawn not made yet is dropped unpolled by its microtask.
    fn abort(&self, join: Key, task: Key, shared: &LoopShared) {
        let task = {
            let mut states = self.states.borrow_mut();
            let Some(st) = states.get_mut(join) else {
                return;
            };
            if st.done || st.cancelling {
                return;
            }
            st.cancelling = true;
            match st.deferred {
                Deferred::No => Some(task),
                Deferred::Waiting => None,
                Deferred::Made => self.made.borrow().get(&join).copied(),
            }
        };
        if let Some(key) = task {
            if shared.closed.get() {
                // No loop to drop it (its tasks were dropped with it).
                self.complete(join, cancelled);
                return;
            }
            shared.aborted.borrow_mut().push(key);
            shared.defer(move |lp| lp.abort_task(key));
            if !shared.is_top() {
                // Made away from the task's loop (before it runs, or from
                // another loop above it): its next flush may be far off,
                // or wait for whoever awaits this handle. The handle
                // completes now, as awaiting it elsewhere must not wait
                // for ever; the future is still dropped at that flush.
                self.complete(join, cancelled);
            }
        } else if !shared.is_top() {
            // A deferred spawn not made yet, aborted away from its loop:
            // likewise (its microtask drops the future).
            self.complete(join, cancelled);
        }
    }

    /// An aborted task's future was dropped: its state completes
    /// cancelled (nothing if it is over already, or gone).
    pub(super) fn cancelled_dropped(&self, join: Key) {
        self.complete(join, cancelled);
    }

    /// One more abort handle of the state `join`.
    fn add_abort(&self, join: Key) {
        if let Some(st) = self.states.borrow_mut().get_mut(join) {
            st.aborts = st
                .aborts
                .checked_add(1)
                .expect("fewer than 2^32 abort handles of one task");
        }
    }

    /// An abort handle of the state `join` is dropped.
    fn drop_abort(&self, join: Key) {
        let gone = {
            let mut states = self.states.borrow_mut();
            let Some(st) = states.get_mut(join) else {
                return;
            };
            st.aborts -= 1;
            self.free_if_unowned(&mut states, join)
        };
        drop(gone);
    }
}

fn cancelled() -> Result<Box<dyn Any>, Repr> {
    Err(Repr::Cancelled)
}

/// A spawned task's output: a future of `Result<T, JoinError>`.
///
/// Dropping it detaches the task, which goes on running; a detached task
/// that panics is reported as an uncaught error (see the
/// [`task`](crate::task) module), unless the handle was polled before it
/// was dropped: awaiting it is attaching a handler, as on a promise, so a
/// task given up on by a [`timeout`](crate::time::timeout) may panic
/// later without ending the run. A handle never polled that is dropped
/// after its task panicked reports the panic then, as a detached task's,
/// to the loop's current or next run (none reports it if the loop never
/// runs again). Not `Send`: tasks belong to their loop's
/// thread.
///
/// If the loop is dropped before the task finishes, the task's future is
/// dropped with it and the handle completes with a cancelled
/// [`JoinError`] (as tokio's do when their runtime shuts down), so
/// awaiting it elsewhere (another loop, any executor) never waits forever.
///
/// ```
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// let h = lp.spawn(std::future::pending::<()>());
/// drop(lp);
/// let mut other = EventLoop::with_virtual_clock();
/// assert!(other.block_on(h).unwrap().unwrap_err().is_cancelled());
/// ```
///
/// ```
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// let h = lp.spawn(async { "done" });
/// assert_eq!(lp.block_on(h).unwrap(), Ok("done"));
/// ```
///
/// # Panics
///
/// Polled again after it returned `Ready` (awaited through `&mut` a
/// second time), as tokio's `JoinHandle` does: its output was handed out,
/// and pending instead would wait forever.
pub struct JoinHandle<T> {
    joins: Rc<Joins>,
    /// Its join state.
    join: Key,
    /// Its task.
    key: Key,
    id: Id,
    shared: Rc<LoopShared>,
    _output: PhantomData<fn() -> T>,
    _not_send: PhantomData<*const ()>,
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("id", &self.id)
            .field("finished", &self.is_finished())
            .finish_non_exhaustive()
    }
}

impl<T: 'static> JoinHandle<T> {
    pub(super) fn new(
        joins: Rc<Joins>,
        join: Key,
        key: Key,
        id: Id,
        shared: Rc<LoopShared>,
    ) -> Self {
        JoinHandle {
            joins,
            join,
            key,
            id,
            shared,
            _output: PhantomData,
            _not_send: PhantomData,
        }
    }

    pub(super) fn key(&self) -> Key {
        self.key
    }

    pub(super) fn take_output(&mut self) -> Option<Result<T, JoinError>> {
        let out = self
            .joins
            .states
            .borrow_mut()
            .get_mut(self.join)?
            .out
            .take()?;
        Some(
            out.map(|b| {
                *b.downcast::<T>()
                    .expect("a task's output has its handle's type")
            })
            .map_err(|repr| JoinError { repr, id: self.id }),
        )
    }
}

impl<T> JoinHandle<T> {
    /// Aborts the task: its future is dropped (with its timers, permits
    /// and sockets) at the loop's next flush point, at the latest when the
    /// current callback or task poll returns, and then the handle
    /// completes with a cancelled [`JoinError`]. Aborting a finished task
    /// does nothing.
    ///
    /// Made in the task's loop (a task, a callback), as tokio's: the
    /// handle is not [finished](Self::is_finished) in this call but once
    /// the future is dropped, so awaiting it after `abort` returns when
    /// what the future held is released (a permit is back, a listener's
    /// address free). Made away from the loop (its loop idle), the handle
    /// completes in this call, and the future goes when the loop next
    /// runs. A task that aborts its own handle and then returns a value in
    /// the same poll ends cancelled (tokio allows either answer and most
    /// often gives the value).
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use timerloop::{EventLoop, time};
    /// let ran = Rc::new(Cell::new(false));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let r = ran.clone();
    /// let h = lp.spawn(async move {
    ///     time::sleep(Duration::from_millis(10)).await;
    ///     r.set(true);
    /// });
    /// h.abort();
    /// lp.run().unwrap();
    /// assert!(!ran.get());
    /// assert!(h.is_finished());
    /// ```
    pub fn abort(&self) {
        self.joins.abort(self.join, self.key, &self.shared);
    }

    /// A handle that aborts the task without owning its output: one
    /// to keep where the task may have to be cancelled while this handle
    /// is awaited elsewhere, or after it is dropped (an abort handle
    /// aborts a detached task too). As tokio's, it is `Clone`, not `Copy`;
    /// unlike tokio's, it belongs to the loop's thread (not `Send`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async { time::sleep(Duration::from_secs(60)).await; "late" });
    /// let stop = h.abort_handle();
    /// lp.set_timeout(100, move |_| stop.abort());
    /// let err = lp.block_on(h).unwrap().unwrap_err();
    /// assert!(err.is_cancelled());
    /// assert_eq!(lp.now(), 100);
    /// ```
    ///
    /// `#[must_use]`, as tokio's: the handle does nothing unless kept
    /// and [`abort`](AbortHandle::abort)ed (to abort now, call
    /// [`abort`](Self::abort)).
    ///
    /// ```compile_fail
    /// #![deny(unused_must_use)]
    /// let mut lp = timerloop::EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async {});
    /// h.abort_handle(); // error: unused `AbortHandle`; this aborts nothing
    /// ```
    #[must_use = "an AbortHandle does nothing unless `abort` is called on it"]
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle::counted(&self.joins, self.join, self.key, self.id, &self.shared)
    }

    /// Whether the task is over: completed, panicked or aborted. A task
    /// aborted in its loop (a task, a callback, a scope) is over once the
    /// loop has dropped its future, at its next flush point, as tokio's;
    /// one aborted away from it (its loop idle, or another loop on top)
    /// is over as soon as [`abort`](Self::abort) returns, so that
    /// awaiting it elsewhere never waits for its loop (the future goes
    /// when the loop next runs).
    ///
    /// ```
    /// use timerloop::{EventLoop, task};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async {});
    /// assert!(!h.is_finished());
    /// lp.run().unwrap();
    /// assert!(h.is_finished());
    /// lp.block_on(async {
    ///     let p = task::spawn(std::future::pending::<()>());
    ///     p.abort();
    ///     assert!(!p.is_finished()); // its future is not dropped yet
    ///     task::yield_now().await;
    ///     assert!(p.is_finished());
    /// })
    /// .unwrap();
    /// let idle = lp.spawn(std::future::pending::<()>());
    /// idle.abort(); // away from its loop
    /// assert!(idle.is_finished());
    /// ```
    pub fn is_finished(&self) -> bool {
        self.joins.is_done(self.join)
    }

    /// The task's [`Id`], tokio's `JoinHandle::id`.
    ///
    /// ```
    /// use timerloop::{EventLoop, task};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async { task::id() });
    /// let id = h.id();
    /// assert_eq!(lp.block_on(h).unwrap(), Ok(id)); // what the task saw
    /// ```
    pub fn id(&self) -> Id {
        self.id
    }

    /// Forgets that the handle was polled (a [`JoinSet`](super::JoinSet)'s
    /// own poll, which no program awaited): dropped, it detaches its task
    /// as an unpolled handle does.
    pub(super) fn forget_polls(&self) {
        if let Some(st) = self.joins.states.borrow_mut().get_mut(self.join)
            && st.handle == Handle::Awaited
        {
            st.handle = Handle::Held;
        }
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        // The task is detached: its state goes unless abort handles hold
        // it (or a deferred spawn's microtask, which frees it, or the
        // task still runs and this handle was awaited: the state says its
        // panic is handled, and goes when the task is over). What goes
        // (an output nobody took, a waker) is dropped after the states
        // are released: an output's drop may drop other handles.
        // One lookup, on the path of every spawn whose handle is dropped:
        // `free_if_unowned`'s test, with the handle marked gone first.
        // A panic it holds unread, never having been polled, is reported
        // now, as a detached task's is: nobody attached a handler, and
        // nobody can read it any more.
        let mut states = self.joins.states.borrow_mut();
        let Some(st) = states.get_mut(self.join) else {
            return;
        };
        let unread = unread_panic(st.handle, &st.out);
        st.handle = if st.handle == Handle::Awaited {
            Handle::GaveUp
        } else {
            Handle::Detached
        };
        let (gone, left) = if st.held_elsewhere() {
            (None, Some((st.out.take(), st.waker.take())))
        } else {
            if st.deferred == Deferred::Made {
                self.joins.made.borrow_mut().remove(&self.join);
            }
            (Some(states.remove_at(self.join.index())), None)
        };
        drop(states);
        drop(gone);
        drop(left);
        if let Some(msg) = unread {
            self.shared.run_now_or_defer(move |lp| {
                lp.reject(CallbackError::new(CallbackKind::Task, Cause::Panic(msg)));
            });
        }
    }
}

/// The message of a panic a handle that was never polled leaves unread.
fn unread_panic(handle: Handle, out: &Option<Result<Box<dyn Any>, Repr>>) -> Option<String> {
    match (handle, out) {
        (Handle::Held, Some(Err(Repr::Panic(p)))) => Some(p.msg.clone()),
        _ => None,
    }
}

/// Aborts a task without owning its output: what
/// [`JoinHandle::abort_handle`] and [`JoinSet::spawn`](super::JoinSet::spawn)
/// return. Dropping it does nothing to the task.
///
/// It works whether or not the task's [`JoinHandle`] is still there: a
/// detached task can be aborted through it too, and
/// [`is_finished`](Self::is_finished) follows the task to its end.
///
/// ```
/// use std::{cell::Cell, rc::Rc, time::Duration};
/// use timerloop::{EventLoop, time};
/// let mut lp = EventLoop::with_virtual_clock();
/// let ticks = Rc::new(Cell::new(0));
/// let t = ticks.clone();
/// let h = lp.spawn(async move {
///     loop {
///         time::sleep(Duration::from_millis(10)).await;
///         t.set(t.get() + 1);
///     }
/// });
/// let stop = h.abort_handle();
/// drop(h); // detached: it runs on
/// lp.set_timeout(35, move |_| stop.abort());
/// lp.run().unwrap();
/// assert_eq!((ticks.get(), lp.now()), (3, 35));
/// ```
pub struct AbortHandle {
    joins: Rc<Joins>,
    join: Key,
    /// Its task (a deferred spawn's is in [`Joins::made`]).
    key: Key,
    id: Id,
    shared: Rc<LoopShared>,
    _not_send: PhantomData<*const ()>,
}

impl AbortHandle {
    /// A new abort handle of the join state `join`, counted in it.
    fn counted(joins: &Rc<Joins>, join: Key, key: Key, id: Id, shared: &Rc<LoopShared>) -> Self {
        joins.add_abort(join);
        AbortHandle {
            joins: joins.clone(),
            join,
            key,
            id,
            shared: shared.clone(),
            _not_send: PhantomData,
        }
    }

    /// Aborts the task, as [`JoinHandle::abort`] does: its future is
    /// dropped (with its timers) at the loop's next flush point, and then
    /// the task is [finished](Self::is_finished) and its join handle, if
    /// there, completes with a cancelled [`JoinError`]. Aborting a
    /// finished task does nothing.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(std::future::pending::<()>());
    /// h.abort_handle().abort();
    /// assert!(lp.block_on(h).unwrap().unwrap_err().is_cancelled());
    /// ```
    pub fn abort(&self) {
        self.joins.abort(self.join, self.key, &self.shared);
    }

    /// Whether the task is over: completed, panicked or aborted, whether
    /// or not its join handle is still there.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let a = lp.spawn(async { 1 }).abort_handle(); // the handle is dropped
    /// assert!(!a.is_finished());
    /// lp.run().unwrap();
    /// assert!(a.is_finished());
    /// ```
    pub fn is_finished(&self) -> bool {
        self.joins.is_done(self.join)
    }

    /// The task's [`Id`].
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async {});
    /// assert_eq!(h.abort_handle().id(), h.id());
    /// ```
    pub fn id(&self) -> Id {
        self.id
    }
}

impl Clone for AbortHandle {
    /// Another abort handle of the same task.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(std::future::pending::<()>());
    /// let a = h.abort_handle();
    /// let b = a.clone();
    /// drop(a);
    /// b.abort();
    /// lp.run().unwrap(); // drops the future: the task is over
    /// assert!(h.is_finished());
    /// ```
    fn clone(&self) -> Self {
        AbortHandle::counted(&self.joins, self.join, self.key, self.id, &self.shared)
    }
}

impl Drop for AbortHandle {
    fn drop(&mut self) {
        self.joins.drop_abort(self.join);
    }
}

// Unwind safety, as tokio's handles have it: a handle shares its task's
// join state with the loop (`Rc`s of `RefCell`s, which make it
// `!UnwindSafe` by default), but a panic never leaves that state half
// changed. Each operation changes it whole under one borrow and runs the
// user's code (a waker's `wake` or drop, an output's or a payload's drop)
// only after the borrow is released; a panic inside a borrow (a waker's
// `clone` in `poll`) releases it as it unwinds, and every state the
// operation may have written by then is a state the handle knows. So a
// handle used after `catch_unwind` caught a panic sees the task as it
// is, with nothing broken. Neither impl needs a bound on `T`: the output
// is reached only by polling the handle, which hands it over whole.

/// A [`JoinHandle`] may cross [`catch_unwind`](std::panic::catch_unwind)
/// without `AssertUnwindSafe`, as tokio's: a panic leaves its task's
/// state consistent.
///
/// ```
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// let h = lp.spawn(std::future::pending::<()>());
/// let caught = std::panic::catch_unwind(|| {
///     h.abort();
///     panic!("after the abort");
/// });
/// assert!(caught.is_err());
/// assert!(lp.block_on(h).unwrap().unwrap_err().is_cancelled());
/// ```
impl<T> std::panic::UnwindSafe for JoinHandle<T> {}

/// As `UnwindSafe`, above: a panic leaves the task's state consistent.
impl<T> std::panic::RefUnwindSafe for JoinHandle<T> {}

/// An [`AbortHandle`] may cross [`catch_unwind`](std::panic::catch_unwind)
/// without `AssertUnwindSafe`, as tokio's: a panic leaves its task's
/// state consistent.
///
/// ```
/// use timerloop::EventLoop;
/// let mut lp = EventLoop::with_virtual_clock();
/// let stop = lp.spawn(std::future::pending::<()>()).abort_handle();
/// let caught = std::panic::catch_unwind(|| {
///     stop.abort();
///     panic!("after the abort");
/// });
/// assert!(caught.is_err() && stop.is_finished());
/// ```
impl std::panic::UnwindSafe for AbortHandle {}

/// As `UnwindSafe`, above: a panic leaves the task's state consistent.
impl std::panic::RefUnwindSafe for AbortHandle {}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle")
            .field("id", &self.id)
            .field("finished", &self.is_finished())
            .finish_non_exhaustive()
    }
}

impl<T: 'static> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(out) = self.take_output() {
            return Poll::Ready(out);
        }
        let mut states = self.joins.states.borrow_mut();
        let replaced = match states.get_mut(self.join) {
            Some(st) if st.done => {
                // Done and its output taken: by an earlier poll's `Ready`.
                drop(states);
                polled_after_completion();
            }
            Some(st) => {
                st.handle = Handle::Awaited;
                match &st.waker {
                    Some(w) if w.will_wake(cx.waker()) => None,
                    _ => st.waker.replace(cx.waker().clone()),
                }
            }
            None => None,
        };
        // The waker it replaces is dropped after the states are let go
        // of: a waker's drop is user code, which may use handles.
        drop(states);
        drop(replaced);
        Poll::Pending
    }
}

#[cold]
fn polled_after_completion() -> ! {
    panic!("a JoinHandle was polled after it completed (its output was already returned)")
}

#[cfg(test)]
mod tests {
    use crate::EventLoop;

    fn live_states(lp: &EventLoop) -> usize {
        lp.tasks.joins.states.borrow().len()
    }

    /// A handle awaited and then dropped while its task runs leaves its
    /// state until the task is over (to say that its panic is handled),
    /// then the state goes: made at once or by a deferred spawn's
    /// microtask, panicking or returning, with an abort handle or not.
    #[test]
    fn a_given_up_handles_state_goes_with_its_task() {
        use std::future::Future;
        use std::task::{Context, Waker};
        use std::time::Duration;
        fn poll_once<T: 'static>(mut h: crate::task::JoinHandle<T>) {
            let mut cx = Context::from_waker(Waker::noop());
            assert!(std::pin::Pin::new(&mut h).poll(&mut cx).is_pending());
        }
        for panics in [false, true] {
            for abort_handle in [false, true] {
                let mut lp = EventLoop::with_virtual_clock();
                let h = lp.spawn(async move {
                    crate::time::sleep(Duration::from_millis(5)).await;
                    assert!(!panics, "late");
                });
                let stop = abort_handle.then(|| h.abort_handle());
                poll_once(h);
                assert_eq!(live_states(&lp), 1, "kept for the task");
                lp.run().unwrap();
                assert_eq!(live_states(&lp), usize::from(abort_handle));
                if let Some(stop) = stop {
                    assert!(stop.is_finished());
                    drop(stop);
                }
                assert_eq!(live_states(&lp), 0);
            }
            // A deferred spawn (made by its first-poll microtask), given
            // up on before that microtask ran.
            let mut lp = EventLoop::with_virtual_clock();
            lp.set_timeout(1, move |_| {
                poll_once(crate::task::spawn(async move {
                    assert!(!panics, "late");
                }));
            });
            lp.run().unwrap();
            assert_eq!(live_states(&lp), 0);
        }
    }

    /// A join state lives exactly as long as its handle: a detached
    /// task's goes at once and its slot is reused by the next spawn.
    #[test]
    fn join_states_are_freed() {
        let mut lp = EventLoop::with_virtual_clock();
        for _ in 0..100 {
            lp.spawn(async {}); // detached at once
        }
        assert_eq!(live_states(&lp), 0);
        assert_eq!(lp.stats().tasks, 100, "detached tasks still run");
        let kept: Vec<_> = (0..10).map(|i| lp.spawn(async move { i })).collect();
        assert_eq!(live_states(&lp), 10);
        lp.run().unwrap();
        assert_eq!(
            live_states(&lp),
            10,
            "only the held handles' states are left"
        );
        assert!(kept.iter().all(|h| h.is_finished()));
        drop(kept);
        assert_eq!(live_states(&lp), 0);
        let h = lp.spawn(std::future::pending::<()>());
        h.abort();
        drop(h);
        lp.run().unwrap();
        assert_eq!((live_states(&lp), lp.stats().tasks), (0, 0));
    }

    /// An output that holds other handles is dropped after the states are
    /// released (its handles' drops use them).
    #[test]
    fn an_output_holding_handles_drops_cleanly() {
        let mut lp = EventLoop::with_virtual_clock();
        let inner = lp.spawn(async { 7 });
        let outer = lp.spawn(async move { vec![inner] });
        lp.run().unwrap();
        assert!(outer.is_finished());
        drop(outer); // drops the untaken Vec, and the inner handle in it
        assert_eq!(live_states(&lp), 0);
    }

    /// A state held by abort handles lives until the last of them and
    /// the handle are gone, in either order, whether the task is over or
    /// not; its `made` key (a deferred spawn's) goes with it.
    #[test]
    fn abort_handles_hold_states_until_the_last_goes() {
        use std::cell::RefCell;
        use std::rc::Rc;
        let mut lp = EventLoop::with_virtual_clock();
        let h = lp.spawn(std::future::pending::<()>());
        let (a, b) = (h.abort_handle(), h.abort_handle());
        drop(h);
        assert_eq!(live_states(&lp), 1);
        drop(a);
        assert_eq!(live_states(&lp), 1, "b holds it");
        drop(b);
        assert_eq!(live_states(&lp), 0);
        assert_eq!(lp.stats().tasks, 1, "detached, still pending");

        let h = lp.spawn(async { 3 });
        let a = h.abort_handle();
        drop(a);
        assert_eq!(live_states(&lp), 1, "the handle holds it");
        lp.run_until(0).unwrap();
        let a = h.abort_handle();
        drop(h); // its output, unread, goes now
        assert!(a.is_finished());
        drop(a);
        assert_eq!(live_states(&lp), 0);

        let kept = Rc::new(RefCell::new(Vec::new()));
        let k = kept.clone();
        lp.set_timeout(1, move |_| {
            for i in 0..3 {
                let h = crate::task::spawn(std::future::pending::<()>());
                let a = h.abort_handle();
                if i == 0 {
                    a.abort(); // dropped unpolled
                }
                drop(h);
                k.borrow_mut().push(a);
            }
        });
        lp.run_until(1).unwrap();
        assert_eq!(live_states(&lp), 3);
        assert_eq!(lp.tasks.joins.made.borrow().len(), 2, "the two made");
        kept.borrow()[1].abort();
        lp.run_until(1).unwrap();
        kept.borrow_mut().clear();
        assert_eq!(live_states(&lp), 0);
        assert!(lp.tasks.joins.made.borrow().is_empty());
        drop(lp);
    }

    /// review39: states and `made` keys are freed on the paths a panic,
    /// a JoinSet and a self-abort take, whatever order the handles go in.
    #[test]
    fn states_are_freed_after_panics_sets_and_self_aborts() {
        use crate::task::{AbortHandle, JoinSet};
        use std::cell::RefCell;
        use std::rc::Rc;
        let mut lp = EventLoop::with_virtual_clock();
        lp.set_uncaught_handler(|_, _| {});
        let kept: Rc<RefCell<Vec<AbortHandle>>> = Rc::default();
        let k = kept.clone();
        lp.set_timeout(1, move |_| {
            // Deferred, detached, panicking, with two abort handles.
            let h = crate::task::spawn(async {
                crate::task::yield_now().await;
                panic!("p")
            });
            let a = h.abort_handle();
            k.borrow_mut().push(a.clone());
            k.borrow_mut().push(a);
            drop(h);
            // Deferred, aborting itself through its own abort handle.
            let slot: Rc<RefCell<Option<AbortHandle>>> = Rc::default();
            let s = slot.clone();
            let h = crate::task::spawn(async move {
                s.borrow().as_ref().unwrap().abort();
                std::future::pending::<()>().await
            });
            *slot.borrow_mut() = Some(h.abort_handle());
            k.borrow_mut().push(h.abort_handle());
            drop(h);
            drop(slot); // the task holds the other Rc: its drop frees it
        });
        lp.run_until(1).unwrap();
        assert!(kept.borrow().iter().all(|a| a.is_finished()));
        assert_eq!(lp.stats().tasks, 0);
        kept.borrow_mut().reverse();
        kept.borrow_mut().clear();
        assert_eq!(live_states(&lp), 0);
        assert!(lp.tasks.joins.made.borrow().is_empty());

        let aborts = lp.scope(|| {
            let mut set = JoinSet::new();
            let a = set.spawn(std::future::pending::<()>());
            let b = set.spawn(async {});
            set.detach_all();
            let mut set2 = JoinSet::new();
            let c = set2.spawn(std::future::pending::<()>());
            drop(set2);
            vec![a, b, c]
        });
        lp.run_until(1).unwrap();
        assert_eq!(live_states(&lp), 3);
        aborts[0].abort();
        drop(aborts);
        lp.run_until(1).unwrap();
        assert_eq!((live_states(&lp), lp.stats().tasks), (0, 0));
    }

    /// The abort count lives in the state's padding: no spawn writes more.
    #[test]
    fn a_join_state_is_48_bytes() {
        assert_eq!(std::mem::size_of::<super::JoinState>(), 48);
    }

    /// Spawns from a callback (made by their first-poll microtask): the
    /// states of handles dropped, aborted, aborted then dropped, or kept
    /// before that microtask are all freed once their handles are gone;
    /// so are those of a loop dropped before it.
    #[test]
    fn deferred_join_states_are_freed() {
        use std::cell::RefCell;
        use std::rc::Rc;
        let mut lp = EventLoop::with_virtual_clock();
        let kept = Rc::new(RefCell::new(Vec::new()));
        let k = kept.clone();
        lp.set_timeout(1, move |_| {
            for i in 0..8 {
                let h = crate::task::spawn(async move { i });
                match i % 4 {
                    0 => drop(h),
                    1 => h.abort(),
                    2 => {
                        h.abort();
                        drop(h);
                    }
                    _ => k.borrow_mut().push(h),
                }
            }
        });
        lp.run().unwrap();
        assert_eq!(live_states(&lp), 2, "the two kept handles' states");
        assert!(kept.borrow().iter().all(|h| h.is_finished()));
        assert_eq!(lp.tasks.joins.made.borrow().len(), 2, "their task keys");
        kept.borrow_mut().clear();
        assert_eq!(live_states(&lp), 0);
        assert!(lp.tasks.joins.made.borrow().is_empty());

        let mut lp = EventLoop::with_virtual_clock();
        let kept = lp.scope(|| {
            EventLoop::with_current(|_| {
                drop(crate::task::spawn(async {}));
                crate::task::spawn(async {})
            })
        });
        assert_eq!(live_states(&lp), 2, "a dropped handle's state waits");
        let joins = lp.tasks.joins.clone();
        drop(lp);
        assert_eq!(joins.states.borrow().len(), 1, "only the kept handle's");
        assert!(kept.is_finished());
        drop(kept);
        assert_eq!(joins.states.borrow().len(), 0);
    }
}
