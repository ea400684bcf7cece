//! Async tasks on the loop, ordered as Node orders promise continuations.
//!
//! # Ground rules
//!
//! - **A task's poll is a microtask.** [`EventLoop::spawn`] queues the
//!   task's first poll on the `queue_microtask` FIFO, and every wake-up
//!   queues another: so a task woken by a fired timer resumes after the
//!   ticks that timer's callback queued and before the next timer callback,
//!   as a promise continuation does in Node (R10.2, R10.3).
//! - **Wakes coalesce.** A task is queued at most once at a time; a task
//!   that wakes itself while being polled is queued at the back.
//! - **Wakers are `Send + Sync`.** A wake on the loop's thread queues the
//!   task at once (while the loop is not running, as main-body work: the
//!   next run polls it first, as it drains ticks queued from outside); a
//!   wake from another thread goes through the loop's
//!   cross-thread queue, wakes a blocked poll phase, and the task then runs
//!   as a microtask after that poll-phase callback.
//! - **A pending task keeps nothing alive by itself**, as a pending promise
//!   does not keep Node alive: what it waits on does (a refed timer, an I/O
//!   source, a refed [`Remote`](crate::Remote) through which another thread
//!   will wake it, an acquire waiting in a
//!   [`Semaphore`](crate::sync::Semaphore)'s queue).
//! - **Failures.** A task that panics completes its [`JoinHandle`] with a
//!   [`JoinError`]. A detached task (its `JoinHandle` dropped unpolled)
//!   that panics is an unhandled rejection: reported as an uncaught error
//!   of kind [`CallbackKind::Task`] where Node reports
//!   unhandled rejections, once the microtask queue has drained. A handle
//!   that was polled is as a promise that was awaited, a handler attached
//!   for good: if it is dropped before its task panics (a
//!   [`timeout`](crate::time::timeout) or a `select` gave up on it), the
//!   panic is handled, as Node handles the later rejection of a promise
//!   that lost a `Promise.race`. A handle kept but never polled holds its
//!   task's panic for a later `.await` (tokio's); dropped with the panic
//!   unread, it reports it then as an unhandled rejection (the loop's
//!   next run, or the current one, returns or hands it on), so a failed
//!   `assert!` in a task held as `let _h = spawn(..)` fails the test's
//!   next run. A handle still alive when the last run returns reports
//!   nothing: await it, or drop it and run once more.
//! - **Dropping** a `JoinHandle` detaches its task; [`JoinHandle::abort`]
//!   drops the task's future (and with it its timers) at the loop's next
//!   flush point, at the latest when the current callback or task poll
//!   returns. Made in the loop, the handle completes cancelled only then,
//!   as tokio's: awaiting an aborted task returns once what its future
//!   held is released. Made away from the loop (it is idle), the handle
//!   completes at once, so that awaiting it elsewhere never waits for
//!   that loop. An [`AbortHandle`] does the same without the output, and
//!   works on a detached task too.
//! - **A [`JoinSet`]** only collects its tasks' outputs, in the order
//!   they complete: its tasks are ordinary tasks, ordered as above.
//!   Dropping the set aborts the tasks still in it.
//! - **Dropping the loop** drops the futures of the tasks still pending
//!   with the loop current, as an abort does while it runs (a future's
//!   `drop` may read the clock, sleep or spawn; what it makes goes with
//!   the loop), and completes their handles cancelled.
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//! use timerloop::{EventLoop, task, time};
//! let mut lp = EventLoop::with_virtual_clock();
//! let sum = lp
//!     .block_on(async {
//!         let a = task::spawn(async {
//!             time::sleep(Duration::from_millis(10)).await;
//!             1
//!         });
//!         let b = task::spawn(async { 2 });
//!         task::yield_now().await;
//!         a.await.unwrap() + b.await.unwrap()
//!     })
//!     .unwrap();
//! assert_eq!((sum, lp.now()), (3, 10));
//! ```
#![forbid(unsafe_code)]

mod join;
mod join_set;

pub(crate) use join::Joins;
pub use join::{AbortHandle, Id, JoinError, JoinHandle};
pub use join_set::JoinSet;

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, RawWakerVTable, Wake, Waker};

use crate::collections::arena::{Arena, Key};
use crate::prim::AtomicBool;
use crate::timers::{CallbackError, CallbackKind, Cause, Error, EventLoop, LoopShared, Micro};
use crate::uv;

/// The loop's tasks.
pub(crate) struct Tasks {
    slab: Arena<Task>,
    /// Their join states (shared with their handles, and kept in the
    /// loop's layer slots too, where a spawn from a callback finds them).
    joins: Rc<Joins>,
    /// The task `block_on` waits for: the loop halts when it completes.
    main: Option<Key>,
}

impl Tasks {
    pub(crate) fn new(shared: &LoopShared) -> Tasks {
        Tasks {
            slab: Arena::default(),
            joins: shared.layer::<Joins>(),
            main: None,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slab.len()
    }

    /// Drops every task's future (the loop is going away). Each unfinished
    /// task's handle completes cancelled before its future goes.
    pub(crate) fn clear(&mut self) {
        drop(self.take_orphaned());
    }

    /// Takes every task out, each unfinished task's handle completed
    /// cancelled: the caller drops them (the loop is going away).
    pub(crate) fn take_orphaned(&mut self) -> impl Sized + use<> {
        let slab = std::mem::take(&mut self.slab);
        for task in slab.values() {
            self.joins.orphan(task.join);
        }
        slab
    }
}

struct Task {
    /// The future and the waker its polls get; `None` while it is being
    /// polled (taken out together, so a poll clones no waker: a clone and
    /// its drop are two atomic operations on the header's count).
    running: Option<Running>,
    header: Arc<Header>,
    /// Its join state in [`Tasks::joins`].
    join: Key,
    id: Id,
}

/// What a task is polled with.
struct Running {
    future: Pin<Box<dyn Future<Output = ()>>>,
    waker: Waker,
}

pin_project_lite::pin_project! {
    /// A spawned future, which hands its output to its join state when it
    /// completes. Written out rather than as an `async` block, which would
    /// hold the future twice (the moved-in value and the one awaited).
    struct Spawned<F> {
        #[pin]
        future: F,
        joins: Rc<Joins>,
        join: Key,
    }
}

impl<F: Future> Future for Spawned<F>
where
    F::Output: 'static,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        let value = std::task::ready!(this.future.poll(cx));
        this.joins.complete(*this.join, || Ok(Box::new(value)));
        Poll::Ready(())
    }
}

/// The vtable of the loop tasks' wakers, recorded with the first one
/// made: see [`is_task_waker`].
static TASK_WAKER_VTABLE: OnceLock<&'static RawWakerVTable> = OnceLock::new();

/// A task's waker, its vtable recorded.
fn task_waker(header: Arc<Header>) -> Waker {
    let waker = Waker::from(header);
    TASK_WAKER_VTABLE.get_or_init(|| waker.vtable());
    waker
}

/// Whether `w` is a loop task's own waker (one that holds only the task's
/// header), not a foreign executor's or a combinator's: a finished
/// sleep's pooled state keeps only such a waker (`Wakeup::recycle`).
/// Best effort, as `Waker::will_wake`: Rust does not promise one address
/// per vtable (Miri makes a new one each time), and a `false` for a
/// task's waker only costs its next sleep a clone.
pub(crate) fn is_task_waker(w: &Waker) -> bool {
    TASK_WAKER_VTABLE
        .get()
        .is_some_and(|v| std::ptr::eq(*v, w.vtable()))
}

/// What a task's waker knows: enough to queue the task from any thread.
struct Header {
    key: Key,
    loop_id: u32,
    scheduled: Schedule,
    sender: uv::Sender<EventLoop>,
}

impl Wake for Header {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.scheduled.wake() {
            return;
        }
        // A loop is registered only with its own thread, so finding it here
        // means this is the loop's thread (no thread-id comparison needed).
        if let Some(shared) = LoopShared::by_id(self.loop_id) {
            shared.micro.push(Micro::Task(self.key));
            shared.woke_task.set(true);
        } else {
            let key = self.key;
            // A queued wake is work: the loop stays alive until it has
            // queued the task (a task woken between runs, with nothing
            // refed left, is polled by the next run step, not dropped by a
            // `block_on` that finds the loop dead). The guard is let go on
            // the loop's thread, which sends no message.
            let alive = self.sender.keep_alive();
            // As an I/O callback: its scope closes after it, and the
            // microtask queue, the task in it, drains. A loop that is gone
            // has nothing left to wake.
            let _ = self.sender.send(move |lp: &mut EventLoop| {
                lp.once_scope(CallbackKind::Io, move |lp| lp.queue_task(key));
                drop(alive);
            });
        }
    }
}

/// A task's `scheduled` flag: set while the task is queued (or being
/// queued) for a poll, cleared just before the poll. It makes wakes
/// coalesce: a wake that finds it set queues nothing, since the coming
/// poll will see whatever the waker saw. Model-checked under loom
/// (`src/uv/loom_tests.rs`): a wake from another thread during a poll is
/// never lost.
pub(crate) struct Schedule {
    queued: AtomicBool,
}

impl Schedule {
    /// A task queued for its first poll.
    pub(crate) fn queued() -> Schedule {
        Schedule {
            queued: AtomicBool::new(true),
        }
    }

    /// A wake-up: true if the caller must queue the task (it was not
    /// queued), false if a poll is already coming.
    pub(crate) fn wake(&self) -> bool {
        !self.queued.swap(true, Ordering::AcqRel)
    }

    /// The loop queued the task itself.
    pub(crate) fn set_queued(&self) {
        self.queued.store(true, Ordering::Release);
    }

    /// The loop is about to poll the task: from now on a wake queues it
    /// again. A read-modify-write, not a store: a wake that found the flag
    /// still set (and so queued nothing) wrote its `true` with the swap in
    /// [`wake`](Self::wake); this swap reads that write, so the poll sees
    /// everything the waker did before waking. With a plain release store,
    /// loom finds the lost wake-up: the waker's swap is ordered before the
    /// store, nothing synchronizes, and a future that reads a flag the
    /// waker set (with acquire/release, no lock) can read it unset and
    /// stay pending forever.
    pub(crate) fn begin_poll(&self) {
        self.queued.swap(false, Ordering::AcqRel);
    }
}

/// Stores `waker` as the one to wake, keeping the stored one when it would
/// wake the same task (`Waker::clone_from` skips the clone then): only the
/// latest poll's waker is ever woken.
pub(crate) fn store_waker(slot: &mut Option<Waker>, waker: &Waker) {
    match slot {
        Some(old) => old.clone_from(waker),
        None => *slot = Some(waker.clone()),
    }
}

/// Wakes the stored waker, if any, after taking it out of its cell (so a
/// wake that polls again can store a new one).
pub(crate) fn wake_stored(slot: &std::cell::RefCell<Option<Waker>>) {
    let waker = slot.borrow_mut().take();
    if let Some(w) = waker {
        w.wake();
    }
}

/// A future that is ready on its second poll: one microtask hop, like
/// `await null` in JavaScript. Made by [`yield_now`].
///
/// # Examples
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use timerloop::{EventLoop, task};
/// let log = Rc::new(RefCell::new(Vec::new()));
/// let mut lp = EventLoop::with_virtual_clock();
/// let l = log.clone();
/// lp.spawn(async move {
///     l.borrow_mut().push("task");
///     task::yield_now().await; // one microtask hop
///     l.borrow_mut().push("task again");
/// });
/// let l = log.clone();
/// lp.queue_microtask(move |_| l.borrow_mut().push("microtask"));
/// lp.run().unwrap();
/// assert_eq!(*log.borrow(), ["task", "microtask", "task again"]);
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Yields to the microtasks queued before this task's wake-up: one
/// microtask hop (`await null`).
///
/// Unlike tokio's, it does not let the loop's phases run: timers, I/O
/// and immediates wait until the microtask queue is empty, so a task that
/// spins on `yield_now` until a timer or a socket sets a flag never ends
/// (as a Node `while (!flag) await null;` never does). To give the loop
/// a turn, await [`time::immediate`](crate::time::immediate) (Node's
/// `await setImmediate()`: one loop iteration).
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use timerloop::{EventLoop, task};
/// let log = Rc::new(RefCell::new(Vec::new()));
/// let mut lp = EventLoop::with_virtual_clock();
/// let l = log.clone();
/// lp.spawn(async move {
///     l.borrow_mut().push("a1");
///     task::yield_now().await;
///     l.borrow_mut().push("a2");
/// });
/// let l = log.clone();
/// lp.queue_microtask(move |_| l.borrow_mut().push("m"));
/// lp.run().unwrap();
/// assert_eq!(*log.borrow(), ["a1", "m", "a2"]);
/// ```
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// The [`Id`] of the task being polled: tokio's `task::id`.
///
/// ```
/// use timerloop::{EventLoop, task};
/// let mut lp = EventLoop::with_virtual_clock();
/// let h = lp.spawn(async { task::id() });
/// let id = h.id();
/// assert_eq!(lp.block_on(h).unwrap(), Ok(id));
/// ```
///
/// # Panics
///
/// Outside a task (in a callback, or with no loop): see [`try_id`].
#[track_caller]
pub fn id() -> Id {
    try_id().expect("task::id called outside a task (try_id says None there)")
}

/// The [`Id`] of the task being polled, or `None` outside a task (in a
/// callback, in `block_on`'s caller, or with no current loop): tokio's
/// `task::try_id`.
///
/// ```
/// use timerloop::{EventLoop, task};
/// let mut lp = EventLoop::with_virtual_clock();
/// assert_eq!(task::try_id(), None);
/// lp.set_timeout(1, |_| assert_eq!(task::try_id(), None));
/// let seen = lp.block_on(async { task::try_id() }).unwrap();
/// assert!(seen.is_some());
/// ```
pub fn try_id() -> Option<Id> {
    let shared = crate::timers::try_current_shared()?;
    Id::from_raw(shared.layer::<Joins>().current.get())
}

/// Spawns a task on the thread's current loop; the same as
/// [`EventLoop::spawn`], for code that holds no `&mut EventLoop`: inside
/// a task, and in a library function called from anywhere on the loop.
///
/// Inside a callback, which holds the loop, the task is made by its
/// first-poll microtask, queued here: the same place in Node's order as
/// [`EventLoop::spawn`]'s first poll, and the same handle (it can be
/// aborted or dropped before that poll).
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use timerloop::{EventLoop, task};
/// let mut lp = EventLoop::with_virtual_clock();
/// let got = Rc::new(Cell::new(0));
/// let g = got.clone();
/// lp.spawn(async move {
///     let inner = task::spawn(async { 20 + 1 });
///     g.set(inner.await.unwrap());
/// });
/// lp.run().unwrap();
/// assert_eq!(got.get(), 21);
/// ```
///
/// In a callback:
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use timerloop::{EventLoop, task};
/// let log = Rc::new(RefCell::new(Vec::new()));
/// let mut lp = EventLoop::with_virtual_clock();
/// let l = log.clone();
/// lp.set_timeout(5, move |lp| {
///     let l1 = l.clone();
///     task::spawn(async move { l1.borrow_mut().push("task") }); // no `lp` needed
///     let l2 = l.clone();
///     lp.queue_microtask(move |_| l2.borrow_mut().push("microtask"));
/// });
/// lp.run().unwrap();
/// assert_eq!(*log.borrow(), ["task", "microtask"]); // its first poll was queued first
/// ```
///
/// # Panics
///
/// With no current loop on this thread (outside [`EventLoop::run`],
/// `block_on`, a task, a callback and [`EventLoop::scope`]).
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
{
    crate::timers::with_current_or_held(|lp| match lp {
        Ok(lp) => lp.spawn(future),
        Err(held) => spawn_held(held, future),
    })
}

/// [`spawn`] under tokio's name for a `!Send` task (`tokio::task::spawn_local`),
/// so that a port from tokio's `LocalSet` is an import change: every task
/// here is local to its loop's thread, so the two are one function.
///
/// ```
/// use timerloop::{EventLoop, task};
/// let mut lp = EventLoop::with_virtual_clock();
/// let got = lp
///     .block_on(async {
///         let local = std::rc::Rc::new(20); // not Send: fine
///         task::spawn_local(async move { *local + 1 }).await.unwrap()
///     })
///     .unwrap();
/// assert_eq!(got, 21);
/// ```
///
/// # Panics
///
/// As [`spawn`]: with no current loop on this thread.
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
{
    spawn(future)
}

/// [`spawn`] where the loop is held: the task is made by its first-poll
/// microtask, queued now on the loop's shared state. Its handle has a join
/// state that says whether the task is made yet ([`Joins::open_deferred`]).
fn spawn_held<F>(shared: &Rc<LoopShared>, future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
{
    let joins = shared.layer::<Joins>();
    let join = joins.open_deferred();
    let id = joins.new_id();
    let start = Deferred {
        future: Some(future),
        joins: joins.clone(),
        join,
        id,
    };
    shared.queue_microtask_held(move |lp| start.run(lp));
    // The handle's own key is never read: its state holds the task's.
    JoinHandle::new(joins, join, join, id, shared.clone())
}

/// A deferred spawn's future, until its first-poll microtask makes the
/// task; if the microtask is dropped unrun (its loop went away), the
/// task is cancelled, as the loop's other tasks are then.
struct Deferred<F> {
    future: Option<F>,
    joins: Rc<Joins>,
    join: Key,
    id: Id,
}

impl<F: Future + 'static> Deferred<F> {
    fn run(mut self, lp: &mut EventLoop) {
        let future = self.future.take().expect("run once");
        if !self.joins.take_deferred(self.join) {
            // Aborted: dropped unpolled, then its handle completes.
            let _over = CancelledWhenDropped(self.joins.clone(), self.join);
            drop(future);
            return;
        }
        let key = lp.insert_task(future, self.join, self.id);
        self.joins.made(self.join, key);
        // Made queued (`Schedule::queued`): its poll is this microtask.
        lp.poll_task(key);
    }
}

/// Completes an aborted task's join state cancelled when dropped: after
/// its future's drop, even one that panics (the handle would otherwise
/// wait for ever).
struct CancelledWhenDropped(Rc<Joins>, Key);

impl Drop for CancelledWhenDropped {
    fn drop(&mut self) {
        self.0.cancelled_dropped(self.1);
    }
}

impl<F> Drop for Deferred<F> {
    fn drop(&mut self) {
        if self.future.is_some() {
            self.joins.deferred_dropped(self.join);
        }
    }
}

impl EventLoop {
    /// Spawns `future` as a task of this loop: its first poll runs as a
    /// microtask, and so does every wake-up (see the [`task`](crate::task)
    /// module). The future need not be `Send`. The returned
    /// [`JoinHandle`] is a future of its output; dropping it detaches the
    /// task.
    ///
    /// ```
    /// use std::{cell::RefCell, rc::Rc, time::Duration};
    /// use timerloop::{EventLoop, time};
    /// let log = Rc::new(RefCell::new(Vec::new()));
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let l = log.clone();
    /// lp.spawn(async move {
    ///     time::sleep(Duration::from_millis(10)).await;
    ///     l.borrow_mut().push("task");
    /// });
    /// let l = log.clone();
    /// lp.set_timeout(10, move |lp| {
    ///     let l2 = l.clone();
    ///     lp.next_tick(move |_| l2.borrow_mut().push("tick"));
    ///     l.borrow_mut().push("timeout");
    /// });
    /// lp.run().unwrap();
    /// // The task's first poll is a microtask: it runs after the main body,
    /// // so its sleep joins the 10 ms list after the timeout, as
    /// // `queueMicrotask(async () => await setTimeout(10))` would in Node.
    /// assert_eq!(*log.borrow(), ["timeout", "tick", "task"]);
    /// ```
    pub fn spawn<F>(&mut self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
    {
        let join = self.tasks.joins.open();
        let id = self.tasks.joins.new_id();
        let key = self.insert_task(future, join, id);
        self.queue_task(key);
        JoinHandle::new(self.tasks.joins.clone(), join, key, id, self.shared.clone())
    }

    /// Makes the task of `future`, whose output goes to the join state
    /// `join`, queued for its first poll (not yet on the microtask queue).
    #[inline(always)]
    fn insert_task<F>(&mut self, future: F, join: Key, id: Id) -> Key
    where
        F: Future + 'static,
    {
        let task_joins = self.tasks.joins.clone();
        let shared = &self.shared;
        let (loop_id, sender) = (shared.id, shared.sender.clone());
        // Everything is made in the arena's closure, which takes its
        // values (`move`): a closure holding references, or a future made
        // before it, is copied through memory on the way in, with loads
        // the CPU cannot forward (see `Arena::insert_with`).
        self.tasks.slab.insert_with(move |key| {
            let header = Arc::new(Header {
                key,
                loop_id,
                scheduled: Schedule::queued(),
                sender,
            });
            Task {
                running: Some(Running {
                    future: Box::pin(Spawned {
                        future,
                        joins: task_joins,
                        join,
                    }),
                    waker: task_waker(header.clone()),
                }),
                header,
                join,
                id,
            }
        })
    }

    /// Queues a poll of the task `key` on the microtask queue.
    pub(crate) fn queue_task(&mut self, key: Key) {
        if let Some(t) = self.tasks.slab.get(key) {
            t.header.scheduled.set_queued();
            self.push_microtask(Micro::Task(key));
        }
    }

    /// Polls the task `key`: the microtask a wake-up queued.
    pub(crate) fn poll_task(&mut self, key: Key) {
        let Some(task) = self.tasks.slab.get_mut(key) else {
            return; // completed or aborted since it was queued
        };
        let Some(mut running) = task.running.take() else {
            return;
        };
        task.header.scheduled.begin_poll();
        let join = task.join;
        let outer = self.shared.polling.replace(key.index() as u32);
        let outer_id = self.tasks.joins.current.replace(task.id.get());
        let r = self.lend_during(|| {
            let mut cx = Context::from_waker(&running.waker);
            catch_unwind(AssertUnwindSafe(|| running.future.as_mut().poll(&mut cx)))
        });
        self.shared.polling.set(outer);
        self.tasks.joins.current.set(outer_id);
        let aborted = self.take_aborted(key);
        let mut running = Some(running);
        let done = match r {
            Ok(Poll::Pending) if !aborted => {
                if let Some(task) = self.tasks.slab.get_mut(key) {
                    task.running = running.take();
                }
                false
            }
            Ok(_) => true,
            // An aborted task's handle completes cancelled below, once
            // its future is dropped.
            Err(payload) if aborted => {
                crate::timers::discard_payload(payload);
                true
            }
            Err(payload) => {
                if let Some(rejected) = self.tasks.joins.fail(join, payload) {
                    self.reject(CallbackError::new(
                        CallbackKind::Task,
                        Cause::Panic(rejected),
                    ));
                }
                true
            }
        };
        if done {
            self.tasks.slab.remove_at(key.index());
            // What is left of it (an aborted task's locals, a hand-written
            // future's fields) drops with the loop lendable, as it polled.
            let over = aborted.then(|| CancelledWhenDropped(self.tasks.joins.clone(), join));
            self.lend_if_current(|| drop(running));
            drop(over);
            if self.tasks.main == Some(key) {
                self.halt_for_main();
            }
        }
        self.flush_deferred();
    }

    /// Wakes the task at arena index `index` (a hint: any value) if
    /// `waker` is its own waker, as [`Header::wake_by_ref`] would on the
    /// loop's thread, and says whether it did: the caller wakes `waker`
    /// the ordinary way if not. A waker is the task's own when it wakes
    /// the same header through the same functions (`Waker::will_wake`).
    pub(crate) fn wake_own_task(&mut self, index: u32, waker: &Waker) -> bool {
        let Some(task) = self.tasks.slab.get_at(index as usize) else {
            return false;
        };
        let Some(running) = &task.running else {
            return false; // being polled: its waker is not at hand
        };
        if !running.waker.will_wake(waker) {
            return false;
        }
        if task.header.scheduled.wake() {
            self.shared.micro.push(Micro::Task(task.header.key));
            self.shared.woke_task.set(true);
        }
        true
    }

    /// Drops an aborted task's future, unless it is being polled (then its
    /// poll drops it, finding it in [`LoopShared::aborted`]).
    pub(crate) fn abort_task(&mut self, key: Key) {
        let Some(task) = self.tasks.slab.get_mut(key) else {
            self.take_aborted(key);
            return;
        };
        if let Some(running) = task.running.take() {
            let join = task.join;
            self.tasks.slab.remove_at(key.index());
            self.take_aborted(key);
            // Its locals' drops may use `EventLoop::with_current`, as its
            // polls could.
            // Over once what it held is released, as in tokio.
            let _over = CancelledWhenDropped(self.tasks.joins.clone(), join);
            self.lend_if_current(|| drop(running));
        }
    }

    /// Whether the task `key` was aborted through its handle since its
    /// future was last dropped or polled; forgets it. (The list is almost
    /// always empty: a poll reads its length.)
    fn take_aborted(&self, key: Key) -> bool {
        let mut aborted = self.shared.aborted.borrow_mut();
        match aborted.iter().position(|&k| k == key) {
            Some(i) => {
                aborted.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// Runs the loop until `future` completes, and returns its output at
    /// once (the rest of the loop's work stays queued for a later run). The
    /// future runs as a task (its first poll a microtask), after the
    /// main-body drain, as [`run`](Self::run) does.
    ///
    /// ```
    /// use std::time::Duration;
    /// use timerloop::{EventLoop, time};
    /// let mut lp = EventLoop::with_virtual_clock();
    /// let answer = lp
    ///     .block_on(async {
    ///         time::sleep(Duration::from_millis(30)).await;
    ///         42
    ///     })
    ///     .unwrap();
    /// assert_eq!((answer, lp.now()), (42, 30));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Stalled`] if nothing refed is left while `future` is still
    /// pending (Node exits with code 13 for an unsettled top-level await).
    /// A waiting [`Semaphore`](crate::sync::Semaphore) acquire is
    /// something refed (its permit may come from another thread), so a
    /// task that waits for a permit its own loop holds waits for ever
    /// rather than stalling: bound such a wait with
    /// [`time::timeout`](crate::time::timeout) where that can happen;
    /// [`Error::Uncaught`] if `future` panicked (kind
    /// [`CallbackKind::Task`]) or if a callback failed with no handler;
    /// [`Error::Reentrant`] if called from inside the loop;
    /// [`Error::ThreadExiting`] if called while the thread is exiting (see
    /// [`run`](Self::run)); [`Error::Poll`] if the OS refused to wait on
    /// the loop's poller. In the two before the last, `future` is dropped
    /// unpolled; after any other error its task is aborted (the rest of
    /// the loop's work stays queued).
    ///
    /// A [`stop`](Self::stop) inside `block_on` ends the current run's
    /// iteration, and `block_on` goes on with the next: it returns when
    /// its future completes, fails or stalls.
    ///
    /// # Nesting
    ///
    /// A `block_on` inside the loop (from a task through
    /// [`with_current`](Self::with_current), or from a callback) returns
    /// [`Error::Reentrant`] at once and runs nothing; the outer run goes on.
    pub fn block_on<F>(&mut self, future: F) -> Result<F::Output, Error>
    where
        F: Future + 'static,
    {
        if self.is_running_or_nested() {
            return Err(Error::Reentrant);
        }
        if crate::timers::thread_exiting() {
            return Err(Error::ThreadExiting);
        }
        let mut handle = self.spawn(future);
        self.tasks.main = Some(handle.key());
        // A panic that leaves the run (a `Clock`'s, or a dropped future's)
        // leaves `future`'s task an ordinary, detached one: marked as the
        // main task, its completion would stop a later run early.
        // A task that replaced the loop unwinds on: the loop here is another.
        let ran = loop {
            let ran = match uv::catch_unless_replaced(self, |lp| lp.run()) {
                Ok(ran) => ran,
                Err(payload) => {
                    self.tasks.main = None;
                    resume_unwind(payload)
                }
            };
            // A run that a `stop()` ended, the future pending and the
            // loop alive: `block_on` is not over (its future's output is
            // what it returns), so it runs on.
            if ran.is_err() || handle.is_finished() || !self.is_alive() {
                break ran;
            }
        };
        self.tasks.main = None;
        let result = match handle.take_output() {
            Some(out) => out.map_err(|e| {
                Error::Uncaught(CallbackError::new(
                    CallbackKind::Task,
                    Cause::Panic(e.panic_message().unwrap_or_default()),
                ))
            }),
            None => ran.and(Err(Error::Stalled)),
        };
        if result.is_err() {
            // A stalled or failed main task is not left to run later.
            handle.abort();
            self.flush_deferred();
        }
        result
    }
}
