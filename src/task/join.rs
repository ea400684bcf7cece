//! [`JoinHandle`] and [`JoinError`]: a task's output, shared between the
//! task and its handle.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use crate::collections::arena::Key;
use crate::timers::LoopShared;

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinError {
    repr: Repr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr {
    Cancelled,
    Panic(String),
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
        self.repr == Repr::Cancelled
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
        matches!(self.repr, Repr::Panic(_))
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
            Repr::Panic(m) => Some(m.clone()),
            Repr::Cancelled => None,
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => f.write_str("the task was aborted"),
            Repr::Panic(m) => write!(f, "the task panicked: {m}"),
        }
    }
}

impl std::error::Error for JoinError {}

/// What the executor needs of a task's output slot, whatever its type.
pub(super) trait JoinSlot {
    /// Records a panic. Returns the message back if nobody will read it
    /// (the task was detached): an unhandled rejection.
    fn fail(&self, msg: String) -> Option<String>;
    fn is_aborted(&self) -> bool;
    /// The task's future was dropped before it finished (its loop was
    /// dropped): the handle completes cancelled, as tokio's do when their
    /// runtime shuts down. Nothing if the task is over already.
    fn orphan(&self);
}

pub(super) struct Slot<T> {
    out: RefCell<Option<Result<T, JoinError>>>,
    waker: RefCell<Option<Waker>>,
    /// The output is in (or was taken): the task is over.
    done: Cell<bool>,
    detached: Cell<bool>,
    aborted: Cell<bool>,
}

impl<T> Slot<T> {
    pub(super) fn new() -> Rc<Self> {
        Rc::new(Slot {
            out: RefCell::new(None),
            waker: RefCell::new(None),
            done: Cell::new(false),
            detached: Cell::new(false),
            aborted: Cell::new(false),
        })
    }

    pub(super) fn complete(&self, out: Result<T, JoinError>) {
        if self.done.replace(true) {
            return;
        }
        if !self.detached.get() {
            *self.out.borrow_mut() = Some(out);
        }
        super::wake_stored(&self.waker);
    }
}

impl<T> JoinSlot for Slot<T> {
    fn fail(&self, msg: String) -> Option<String> {
        if self.done.get() {
            return None;
        }
        let detached = self.detached.get();
        self.complete(Err(JoinError {
            repr: Repr::Panic(msg.clone()),
        }));
        detached.then_some(msg)
    }

    fn is_aborted(&self) -> bool {
        self.aborted.get()
    }

    fn orphan(&self) {
        self.complete(Err(JoinError {
            repr: Repr::Cancelled,
        }));
    }
}

/// A spawned task's output: a future of `Result<T, JoinError>`.
///
/// Dropping it detaches the task, which goes on running; a detached task
/// that panics is reported as an uncaught error (see the
/// [`task`](crate::task) module). Not `Send`: tasks belong to their loop's
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
pub struct JoinHandle<T> {
    slot: Rc<Slot<T>>,
    key: Key,
    shared: Rc<LoopShared>,
    _not_send: PhantomData<*const ()>,
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("finished", &self.is_finished())
            .finish_non_exhaustive()
    }
}

impl<T> JoinHandle<T> {
    pub(super) fn new(slot: Rc<Slot<T>>, key: Key, shared: Rc<LoopShared>) -> Self {
        JoinHandle {
            slot,
            key,
            shared,
            _not_send: PhantomData,
        }
    }

    pub(super) fn key(&self) -> Key {
        self.key
    }

    pub(super) fn take_output(&mut self) -> Option<Result<T, JoinError>> {
        self.slot.out.borrow_mut().take()
    }

    /// Aborts the task: its future is dropped (with its timers) at the
    /// loop's next flush point, at the latest when the current callback
    /// returns, and the handle completes with a cancelled [`JoinError`].
    /// Aborting a finished task does nothing.
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
        if self.slot.done.get() {
            return;
        }
        self.slot.aborted.set(true);
        self.slot.complete(Err(JoinError {
            repr: Repr::Cancelled,
        }));
        let key = self.key;
        self.shared.defer(move |lp| lp.abort_task(key));
    }

    /// Whether the task is over: completed, panicked or aborted.
    ///
    /// ```
    /// use timerloop::EventLoop;
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async {});
    /// assert!(!h.is_finished());
    /// lp.run().unwrap();
    /// assert!(h.is_finished());
    /// ```
    pub fn is_finished(&self) -> bool {
        self.slot.done.get()
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        self.slot.detached.set(true);
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(out) = self.slot.out.borrow_mut().take() {
            return Poll::Ready(out);
        }
        super::store_waker(&mut self.slot.waker.borrow_mut(), cx.waker());
        Poll::Pending
    }
}
