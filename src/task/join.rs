//! [`JoinHandle`] and [`JoinError`]: a task's output, shared between the
//! task and its handle.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use crate::collections::arena::{Arena, Key};
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

/// The loop's join states, one per task whose handle is still there, in
/// one arena: a spawn allocates no shared cell for them. A state lives
/// exactly as long as its handle: dropping the handle (detaching the task)
/// frees it, so a spawn whose handle is dropped at once reuses the slot
/// the previous one freed. Keys are generation checked: a task whose state
/// is gone is detached, and its output is dropped unread.
#[derive(Default)]
pub(crate) struct Joins {
    states: RefCell<Arena<JoinState>>,
    /// The task keys of deferred spawns made by their microtask whose
    /// handles are still there (for `abort`), by join key: kept here, not
    /// in every join state, which every spawn writes.
    made: RefCell<HashMap<Key, Key>>,
}

struct JoinState {
    /// The output (boxed only if its handle is still there to read it; a
    /// zero-sized output, such as `()`, allocates nothing).
    out: Option<Result<Box<dyn Any>, JoinError>>,
    waker: Option<Waker>,
    /// The output is in (or was taken): the task is over.
    done: bool,
    /// Whether the task is made yet (see [`Deferred`]).
    deferred: Deferred,
}

/// A task spawned where its loop was held (`task::spawn` inside a
/// callback) is made by its first-poll microtask, queued at the spawn:
/// until then its handle has no task key, and its state says what the
/// microtask must do. One byte, beside `done`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Deferred {
    /// Made at once: the handle holds the task's key.
    No,
    /// Not made yet; `detached`: its handle was dropped meanwhile (the
    /// state stays, for the microtask to read, and goes with it).
    Waiting { detached: bool },
    /// Made by its microtask: the task's key is in [`Joins::made`].
    Made,
}

/// What a deferred spawn's first-poll microtask does
/// ([`Joins::take_deferred`]).
pub(super) enum Start {
    /// Make the task and poll it; its handle is there.
    Attached,
    /// Make the task and poll it, detached (its handle was dropped).
    Detached,
    /// Drop the future unpolled: the handle aborted it.
    Aborted,
}

impl Joins {
    /// A join state for a task about to be spawned.
    pub(super) fn open(&self) -> Key {
        self.open_as(Deferred::No)
    }

    /// A join state for a task its first-poll microtask will make.
    pub(super) fn open_deferred(&self) -> Key {
        self.open_as(Deferred::Waiting { detached: false })
    }

    fn open_as(&self, deferred: Deferred) -> Key {
        self.states.borrow_mut().insert(JoinState {
            out: None,
            waker: None,
            done: false,
            deferred,
        })
    }

    /// A deferred spawn's microtask runs: what it must do. The state of a
    /// dropped handle goes here; an attached one stays (and is told the
    /// task's key with [`made`](Self::made)).
    pub(super) fn take_deferred(&self, join: Key) -> Start {
        let mut states = self.states.borrow_mut();
        let Some(st) = states.get_mut(join) else {
            return Start::Aborted; // not reached: the state waits for this
        };
        let detached = st.deferred == (Deferred::Waiting { detached: true });
        let start = match (st.done, detached) {
            (true, _) => Start::Aborted,
            (false, true) => Start::Detached,
            (false, false) => return Start::Attached,
        };
        // An aborted task's handle, if there, frees the state as any.
        st.deferred = Deferred::No;
        if detached {
            let gone = states.remove_at(join.index());
            drop(states);
            drop(gone);
        }
        start
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
    /// and a dropped handle's state goes.
    pub(super) fn deferred_dropped(&self, join: Key) {
        let detached = self
            .states
            .borrow()
            .get(join)
            .is_some_and(|st| st.deferred == (Deferred::Waiting { detached: true }));
        if detached {
            let gone = self.states.borrow_mut().remove_at(join.index());
            drop(gone);
        } else {
            if let Some(st) = self.states.borrow_mut().get_mut(join) {
                st.deferred = Deferred::No;
            }
            self.complete(join, cancelled);
        }
    }

    /// The task `key` is over with `out` (built only if a handle will read
    /// it). Nothing if it was over already, or is detached.
    pub(super) fn complete(&self, key: Key, out: impl FnOnce() -> Result<Box<dyn Any>, JoinError>) {
        let waker = {
            let mut states = self.states.borrow_mut();
            let Some(st) = states.get_mut(key) else {
                return;
            };
            if st.done {
                return;
            }
            st.done = true;
            st.out = Some(out());
            st.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Records the panic of a task that was not aborted. Returns the
    /// message back if nobody will read it (the task is detached): an
    /// unhandled rejection.
    pub(super) fn fail(&self, key: Key, msg: String) -> Option<String> {
        match self.states.borrow().get(key) {
            None => return Some(msg),
            Some(st) if st.done => return None,
            Some(_) => {}
        }
        self.complete(key, || {
            Err(JoinError {
                repr: Repr::Panic(msg),
            })
        });
        None
    }

    /// Whether the task `key`, whose handle asks, is over.
    pub(super) fn is_done(&self, key: Key) -> bool {
        self.states.borrow().get(key).is_none_or(|st| st.done)
    }

    /// The task's future was dropped before it finished (its loop was
    /// dropped): the handle completes cancelled, as tokio's do when their
    /// runtime shuts down. Nothing if the task is over already.
    pub(super) fn orphan(&self, key: Key) {
        self.complete(key, cancelled);
    }
}

fn cancelled() -> Result<Box<dyn Any>, JoinError> {
    Err(JoinError {
        repr: Repr::Cancelled,
    })
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
    shared: Rc<LoopShared>,
    _output: PhantomData<fn() -> T>,
    _not_send: PhantomData<*const ()>,
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("finished", &self.is_finished())
            .finish_non_exhaustive()
    }
}

impl<T: 'static> JoinHandle<T> {
    pub(super) fn new(joins: Rc<Joins>, join: Key, key: Key, shared: Rc<LoopShared>) -> Self {
        JoinHandle {
            joins,
            join,
            key,
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
        Some(out.map(|b| {
            *b.downcast::<T>()
                .expect("a task's output has its handle's type")
        }))
    }
}

impl<T> JoinHandle<T> {
    /// Aborts the task: its future is dropped (with its timers) at the
    /// loop's next flush point, at the latest when the current callback
    /// returns, and the handle completes with a cancelled [`JoinError`].
    /// Aborting a finished task does nothing.
    ///
    /// The handle completes at once, in this call: a task that aborts its
    /// own handle and then returns a value in the same poll ends
    /// cancelled (tokio allows either answer and most often gives the
    /// value).
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
        if self.is_finished() {
            return;
        }
        let task = match self
            .joins
            .states
            .borrow()
            .get(self.join)
            .map(|st| st.deferred)
        {
            Some(Deferred::Made) => self.joins.made.borrow().get(&self.join).copied(),
            // Not made yet: its microtask finds the state done and drops
            // the future unpolled.
            Some(Deferred::Waiting { .. }) => None,
            Some(Deferred::No) | None => Some(self.key),
        };
        self.joins.complete(self.join, cancelled);
        if let Some(key) = task {
            self.shared.aborted.borrow_mut().push(key);
            self.shared.defer(move |lp| lp.abort_task(key));
        }
    }

    /// Whether the task is over: completed, panicked or aborted. True as
    /// soon as [`abort`](Self::abort) returns, though the task's future is
    /// dropped only at the loop's next flush point (tokio's stays false
    /// until the runtime has dropped it).
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
        self.joins.is_done(self.join)
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        // What goes (an output nobody took, a waker) is dropped after the
        // states are released: an output's drop may drop other handles.
        // Over or not, the state goes: a running task without one is
        // detached. A task not made yet keeps it, marked detached: its
        // first-poll microtask reads it, then frees it.
        let mut states = self.joins.states.borrow_mut();
        let gone = match states.get_mut(self.join) {
            Some(st) if matches!(st.deferred, Deferred::Waiting { .. }) => {
                st.deferred = Deferred::Waiting { detached: true };
                None
            }
            Some(st) => {
                if st.deferred == Deferred::Made {
                    self.joins.made.borrow_mut().remove(&self.join);
                }
                Some(states.remove_at(self.join.index()))
            }
            None => None,
        };
        drop(states);
        drop(gone);
    }
}

impl<T: 'static> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(out) = self.take_output() {
            return Poll::Ready(out);
        }
        let mut states = self.joins.states.borrow_mut();
        if let Some(st) = states.get_mut(self.join) {
            if st.done {
                // Done and its output taken: by an earlier poll's `Ready`.
                drop(states);
                polled_after_completion();
            }
            super::store_waker(&mut st.waker, cx.waker());
        }
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
