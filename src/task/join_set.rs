//! [`JoinSet`]: a set of tasks whose outputs come out as they complete.

use std::collections::VecDeque;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use slab::Slab;

use super::{AbortHandle, Id, JoinError, JoinHandle};
use crate::EventLoop;

/// A set of tasks on the thread's loop, joined in the order they
/// complete: tokio's `JoinSet`. Dropping the set aborts the tasks still
/// in it.
///
/// Each task keeps the order of a task spawned alone (its first poll a
/// microtask queued at `spawn`); the set only collects the outputs, in
/// the order the tasks complete. A completion is found without polling
/// the other tasks' handles: each handle in the set is given a waker of
/// its own when it is put in, which queues it to be looked at, so a set
/// of ten thousand connections costs the same per completion as a set of
/// one.
///
/// ```
/// use std::time::Duration;
/// use timerloop::{EventLoop, task::JoinSet, time};
/// let mut lp = EventLoop::with_virtual_clock();
/// let order = lp
///     .block_on(async {
///         let mut set = JoinSet::new();
///         for ms in [30u64, 10, 20] {
///             set.spawn(async move {
///                 time::sleep(Duration::from_millis(ms)).await;
///                 ms
///             });
///         }
///         let mut order = Vec::new();
///         while let Some(r) = set.join_next().await {
///             order.push(r.unwrap());
///         }
///         order
///     })
///     .unwrap();
/// assert_eq!(order, [10, 20, 30]); // as they completed
/// assert_eq!(lp.now(), 30);
/// ```
pub struct JoinSet<T> {
    entries: Slab<Entry<T>>,
    notified: Arc<Notified>,
}

struct Entry<T> {
    handle: JoinHandle<T>,
    /// Wakes the set's task and queues this entry to be polled.
    waker: Waker,
}

/// The entries whose handles woke (or were never polled), and the task
/// waiting in [`JoinSet::join_next`]. Behind a `Mutex` because a `Waker`
/// must be `Send + Sync`; a handle's waker is only ever woken on the
/// loop's thread, so the lock is never contended.
#[derive(Default)]
struct Notified {
    state: Mutex<NotifiedState>,
}

#[derive(Default)]
struct NotifiedState {
    /// First in, first looked at: outputs come out in completion order.
    entries: VecDeque<usize>,
    parent: Option<Waker>,
}

impl Notified {
    fn lock(&self) -> std::sync::MutexGuard<'_, NotifiedState> {
        // No code runs under the lock that could panic.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

struct EntryWaker {
    index: usize,
    notified: Arc<Notified>,
}

impl Wake for EntryWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let parent = {
            let mut st = self.notified.lock();
            st.entries.push_back(self.index);
            st.parent.take()
        };
        if let Some(w) = parent {
            w.wake();
        }
    }
}

impl<T: 'static> JoinSet<T> {
    /// An empty set.
    ///
    /// ```
    /// let set = timerloop::task::JoinSet::<u32>::new();
    /// assert!(set.is_empty());
    /// ```
    pub fn new() -> JoinSet<T> {
        JoinSet {
            entries: Slab::new(),
            notified: Arc::default(),
        }
    }

    /// How many tasks are in the set: spawned and not yet joined (a
    /// completed task stays until [`join_next`](Self::join_next) hands
    /// its output over).
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut set = JoinSet::new();
    /// set.spawn_on(async { 1 }, &mut lp);
    /// set.spawn_on(async { 2 }, &mut lp);
    /// assert_eq!(set.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the set holds no task.
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut set = JoinSet::new();
    /// set.spawn_on(async {}, &mut lp);
    /// lp.run().unwrap();
    /// assert!(!set.is_empty()); // done, not yet joined
    /// assert!(set.try_join_next().unwrap().is_ok());
    /// assert!(set.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Spawns `future` on the thread's current loop (as
    /// [`task::spawn`](super::spawn)) into the set, and returns an
    /// [`AbortHandle`] of the task (drop it if you do not need it). A task
    /// aborted through it is joined as a cancelled [`JoinError`], as one
    /// the set aborts.
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let sum = lp
    ///     .block_on(async {
    ///         let mut set = JoinSet::new();
    ///         for i in 1..=4 {
    ///             set.spawn(async move { i * 10 });
    ///         }
    ///         let mut sum = 0;
    ///         while let Some(r) = set.join_next().await {
    ///             sum += r.unwrap();
    ///         }
    ///         sum
    ///     })
    ///     .unwrap();
    /// assert_eq!(sum, 100);
    /// ```
    ///
    /// Aborting one task of the set:
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, task::JoinSet, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let got = lp
    ///     .block_on(async {
    ///         let mut set = JoinSet::new();
    ///         let slow = set.spawn(async { time::sleep(Duration::from_secs(60)).await; 60 });
    ///         set.spawn(async { time::sleep(Duration::from_millis(5)).await; 5 });
    ///         let first = set.join_next().await.unwrap().unwrap();
    ///         slow.abort();
    ///         let second = set.join_next().await.unwrap().unwrap_err();
    ///         (first, second.is_cancelled(), set.is_empty())
    ///     })
    ///     .unwrap();
    /// assert_eq!(got, (5, true, true));
    /// assert_eq!(lp.now(), 5);
    /// ```
    ///
    /// # Panics
    ///
    /// With no current loop on this thread, as
    /// [`task::spawn`](super::spawn).
    #[track_caller]
    pub fn spawn<F>(&mut self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.insert(super::spawn(future))
    }

    /// [`spawn`](Self::spawn) under tokio's name for a `!Send` task
    /// (`JoinSet::spawn_local`): every task here is local to its loop's
    /// thread, so the two are one method.
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let sum = lp
    ///     .block_on(async {
    ///         let mut set = JoinSet::new();
    ///         for i in 0..3 {
    ///             let i = std::rc::Rc::new(i); // not Send: fine
    ///             set.spawn_local(async move { *i });
    ///         }
    ///         set.join_all().await.into_iter().sum::<i32>()
    ///     })
    ///     .unwrap();
    /// assert_eq!(sum, 3);
    /// ```
    ///
    /// # Panics
    ///
    /// As [`spawn`](Self::spawn): with no current loop on this thread.
    #[track_caller]
    pub fn spawn_local<F>(&mut self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.spawn(future)
    }

    /// Spawns `future` on `lp` into the set, and returns an
    /// [`AbortHandle`] of the task, as [`spawn`](Self::spawn) does: where
    /// the loop is at hand but need not be current (before it runs, for
    /// one; in a callback [`spawn`](Self::spawn) works too).
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc};
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let set = Rc::new(RefCell::new(JoinSet::new()));
    /// let s = set.clone();
    /// lp.set_timeout(10, move |lp| {
    ///     s.borrow_mut().spawn_on(async { "from a callback" }, lp);
    /// });
    /// lp.run().unwrap();
    /// let out = set.borrow_mut().try_join_next().unwrap().unwrap();
    /// assert_eq!(out, "from a callback");
    /// ```
    pub fn spawn_on<F>(&mut self, future: F, lp: &mut EventLoop) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.insert(lp.spawn(future))
    }

    fn insert(&mut self, mut handle: JoinHandle<T>) -> AbortHandle {
        let entry = self.entries.vacant_entry();
        let index = entry.key();
        let waker = Waker::from(Arc::new(EntryWaker {
            index,
            notified: self.notified.clone(),
        }));
        // Polled once now, with the entry's waker: the handle then wakes
        // the set at its task's completion, whenever that is, so outputs
        // come out in completion order even for tasks that complete
        // before the set is first joined. The handle is a fresh one (the
        // two spawns above), whose task has not run: it is pending, and
        // the poll takes nothing.
        let pending = Pin::new(&mut handle)
            .poll(&mut Context::from_waker(&waker))
            .is_pending();
        debug_assert!(pending, "a fresh task's handle is pending");
        let abort = handle.abort_handle();
        entry.insert(Entry { handle, waker });
        abort
    }

    /// Waits for one of the tasks to complete and returns its output (or
    /// its [`JoinError`]: a panic, or an abort), in the order the tasks
    /// completed, whether or not a join was waiting then; `None` once the
    /// set is empty. Cancel-safe: a dropped `join_next` loses no output.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, task::JoinSet, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let got = lp
    ///     .block_on(async {
    ///         let mut set = JoinSet::new();
    ///         set.spawn(async { time::sleep(Duration::from_millis(5)).await; "slow" });
    ///         set.spawn(async { "fast" });
    ///         let first = set.join_next().await.unwrap().unwrap();
    ///         let second = set.join_next().await.unwrap().unwrap();
    ///         (first, second, set.join_next().await.is_none())
    ///     })
    ///     .unwrap();
    /// assert_eq!(got, ("fast", "slow", true));
    /// ```
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// [`join_next`](Self::join_next) with the [`Id`] of the task whose
    /// output it is (an error has its task's id too:
    /// [`JoinError::id`]), to find which of the set's tasks completed,
    /// failed or was aborted.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let failed = lp
    ///     .block_on(async {
    ///         let mut set = JoinSet::new();
    ///         let mut names = HashMap::new();
    ///         for name in ["a", "b", "c"] {
    ///             let id = set
    ///                 .spawn(async move {
    ///                     if name == "b" {
    ///                         panic!("b fails");
    ///                     }
    ///                 })
    ///                 .id();
    ///             names.insert(id, name);
    ///         }
    ///         let mut failed = Vec::new();
    ///         while let Some(r) = set.join_next_with_id().await {
    ///             if let Err(e) = r {
    ///                 failed.push(names[&e.id()]);
    ///             }
    ///         }
    ///         failed
    ///     })
    ///     .unwrap();
    /// assert_eq!(failed, ["b"]);
    /// ```
    pub async fn join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        poll_fn(|cx| self.poll_join_next_with_id(cx)).await
    }

    /// [`join_next`](Self::join_next) as a poll function: `Ready(None)`
    /// when the set is empty.
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let got = lp
    ///     .block_on(async {
    ///         let mut set = JoinSet::new();
    ///         set.spawn(async { 7 });
    ///         std::future::poll_fn(|cx| set.poll_join_next(cx)).await
    ///     })
    ///     .unwrap();
    /// assert_eq!(got, Some(Ok(7)));
    /// ```
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.poll_join_next_with_id(cx)
            .map(|o| o.map(|r| r.map(|(_, v)| v)))
    }

    /// [`join_next_with_id`](Self::join_next_with_id) as a poll function.
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let (id, got) = lp
    ///     .block_on(async {
    ///         let mut set = JoinSet::new();
    ///         let id = set.spawn(async { 7 }).id();
    ///         (id, std::future::poll_fn(|cx| set.poll_join_next_with_id(cx)).await)
    ///     })
    ///     .unwrap();
    /// assert_eq!(got, Some(Ok((id, 7))));
    /// ```
    pub fn poll_join_next_with_id(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<(Id, T), JoinError>>> {
        if self.entries.is_empty() {
            return Poll::Ready(None);
        }
        // The waker first: a handle that wakes while the notified entries
        // are looked at then wakes this task too.
        super::store_waker(&mut self.notified.lock().parent, cx.waker());
        match self.next_done() {
            Some(out) => Poll::Ready(Some(with_id(out))),
            None => Poll::Pending,
        }
    }

    /// The output of a task that has completed, if any, without waiting:
    /// `None` if the set is empty or no task in it has completed.
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut set = JoinSet::new();
    /// set.spawn_on(async { "done" }, &mut lp);
    /// assert!(set.try_join_next().is_none()); // not run yet
    /// lp.run().unwrap();
    /// assert_eq!(set.try_join_next(), Some(Ok("done")));
    /// ```
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        self.next_done().map(|(_, r)| r)
    }

    /// [`try_join_next`](Self::try_join_next) with the task's [`Id`], as
    /// [`join_next_with_id`](Self::join_next_with_id) gives it.
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let mut set = JoinSet::new();
    /// let id = set.spawn_on(async { "done" }, &mut lp).id();
    /// lp.run().unwrap();
    /// assert_eq!(set.try_join_next_with_id(), Some(Ok((id, "done"))));
    /// ```
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        self.next_done().map(with_id)
    }

    /// Polls the notified entries, each with its own waker, until one is
    /// done: removes it and returns its output.
    fn next_done(&mut self) -> Option<(Id, Result<T, JoinError>)> {
        loop {
            let index = self.notified.lock().entries.pop_front()?;
            // An entry removed since (joined, or detached) or a reused
            // index: a stale notification, or a poll too many, both
            // harmless.
            let Some(entry) = self.entries.get_mut(index) else {
                continue;
            };
            let mut cx = Context::from_waker(&entry.waker);
            if let Poll::Ready(out) = Pin::new(&mut entry.handle).poll(&mut cx) {
                let id = entry.handle.id();
                self.entries.remove(index);
                return Some((id, out));
            }
        }
    }

    /// Aborts every task in the set. They stay in it, and
    /// [`join_next`](Self::join_next) returns each as cancelled (unless it
    /// completed before).
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let cancelled = lp
    ///     .block_on(async {
    ///         let mut set = JoinSet::new();
    ///         for _ in 0..3 {
    ///             set.spawn(std::future::pending::<()>());
    ///         }
    ///         set.abort_all();
    ///         let mut n = 0;
    ///         while let Some(r) = set.join_next().await {
    ///             n += r.unwrap_err().is_cancelled() as usize;
    ///         }
    ///         n
    ///     })
    ///     .unwrap();
    /// assert_eq!(cancelled, 3);
    /// ```
    pub fn abort_all(&mut self) {
        for (_, e) in &self.entries {
            e.handle.abort();
        }
    }

    /// Lets every task in the set go on detached (as a dropped
    /// [`JoinHandle`] does), and empties the set.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let ran = Rc::new(Cell::new(false));
    /// let r = ran.clone();
    /// let mut set = JoinSet::new();
    /// set.spawn_on(async move { r.set(true) }, &mut lp);
    /// set.detach_all();
    /// drop(set); // aborts nothing: the set is empty
    /// lp.run().unwrap();
    /// assert!(ran.get());
    /// ```
    pub fn detach_all(&mut self) {
        // The set's own poll of each handle (at its spawn, for the
        // completion order) is no `.await` of the program's: detached,
        // a task's panic is an unhandled rejection, as a handle dropped
        // unpolled leaves it.
        for (_, e) in &self.entries {
            e.handle.forget_polls();
        }
        self.entries.clear();
        self.notified.lock().entries.clear();
    }

    /// Aborts every task, then waits until each has ended: the set is
    /// empty after. Outputs are dropped.
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// lp.block_on(async {
    ///     let mut set = JoinSet::new();
    ///     set.spawn(std::future::pending::<()>());
    ///     set.shutdown().await;
    ///     assert!(set.is_empty());
    /// })
    /// .unwrap();
    /// ```
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }

    /// Waits for every task and returns their outputs in the order they
    /// completed.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, task::JoinSet, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let all = lp
    ///     .block_on(async {
    ///         let mut set = JoinSet::new();
    ///         for ms in [20u64, 10] {
    ///             set.spawn(async move { time::sleep(Duration::from_millis(ms)).await; ms });
    ///         }
    ///         set.join_all().await
    ///     })
    ///     .unwrap();
    /// assert_eq!(all, [10, 20]);
    /// ```
    ///
    /// # Panics
    ///
    /// If a task panicked, with its panic (its payload, resumed as
    /// tokio's does), or was aborted (with the [`JoinError`]'s message);
    /// the tasks still in the set are aborted first, as the set is
    /// dropped. To handle failures, loop on
    /// [`join_next`](Self::join_next) instead.
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let h = lp.spawn(async {
    ///     let mut set = JoinSet::new();
    ///     set.spawn(async { std::panic::panic_any(7u8) });
    ///     set.join_all().await
    /// });
    /// let err = lp.block_on(h).unwrap().unwrap_err();
    /// assert_eq!(err.into_panic().downcast_ref::<u8>(), Some(&7)); // the task's own
    /// ```
    pub async fn join_all(mut self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len());
        while let Some(r) = self.join_next().await {
            match r {
                Ok(v) => out.push(v),
                Err(e) => {
                    self.abort_all();
                    match e.try_into_panic() {
                        Ok(payload) => std::panic::resume_unwind(payload),
                        Err(e) => panic!("JoinSet::join_all: {e}"),
                    }
                }
            }
        }
        out
    }
}

impl<T: 'static> Default for JoinSet<T> {
    /// An empty set.
    ///
    /// ```
    /// let set: timerloop::task::JoinSet<()> = Default::default();
    /// assert_eq!(set.len(), 0);
    /// ```
    fn default() -> Self {
        JoinSet::new()
    }
}

impl<T> Drop for JoinSet<T> {
    fn drop(&mut self) {
        for (_, e) in &self.entries {
            e.handle.abort();
        }
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet")
            .field("len", &self.entries.len())
            .finish()
    }
}

impl<T: 'static, F> FromIterator<F> for JoinSet<T>
where
    F: Future<Output = T> + 'static,
{
    /// Spawns each future on the thread's current loop into a new set.
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let n = lp
    ///     .block_on(async {
    ///         let set: JoinSet<u32> = (0..5).map(|i| async move { i }).collect();
    ///         set.join_all().await.len()
    ///     })
    ///     .unwrap();
    /// assert_eq!(n, 5);
    /// ```
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let mut set = JoinSet::new();
        set.extend(iter);
        set
    }
}

impl<T: 'static, F> Extend<F> for JoinSet<T>
where
    F: Future<Output = T> + 'static,
{
    /// Spawns each future on the thread's current loop into the set.
    ///
    /// ```
    /// use timerloop::{EventLoop, task::JoinSet};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let all = lp
    ///     .block_on(async {
    ///         let mut set = JoinSet::new();
    ///         set.extend((1..=2).map(|i| async move { i }));
    ///         set.join_all().await
    ///     })
    ///     .unwrap();
    /// assert_eq!(all.len(), 2);
    /// ```
    #[track_caller]
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for f in iter {
            self.spawn(f);
        }
    }
}

/// An output with its task's id; an error has it already.
fn with_id<T>((id, r): (Id, Result<T, JoinError>)) -> Result<(Id, T), JoinError> {
    r.map(|v| (id, v))
}
