//! Async sockets on the loop's own poll, for tasks, with no other
//! runtime: [`TcpListener`] and [`TcpStream`], [`UdpSocket`], and
//! [`AsyncSource`] for any other mio source (Unix sockets, pipes,
//! signal-hook-mio's `Signals`).
//!
//! # Invariants
//!
//! - **A socket is a refed handle of its loop**, as in Node: while a
//!   `TcpListener` or `TcpStream` exists, the loop stays alive (a server
//!   task waiting in `accept` is never reported as stalled), unless it
//!   is unrefed (below). Dropping it
//!   in a task (or a scope) deregisters it and closes the socket at once,
//!   so its address can be bound again at once, as in tokio; dropped
//!   where the loop is held (a callback), before the loop next polls.
//! - **Readiness comes from the loop's poll phase**, as an I/O callback:
//!   the task waiting on it is woken there, and runs as a microtask right
//!   after that callback, so in Node's order with timers and immediates.
//! - **No socket starves the loop**: a task whose socket is always ready
//!   (a peer that writes as fast as it reads) yields to the loop after 32
//!   operations in a row with no wait and no event between, as libuv
//!   reads a stream at most 32 times per event; it goes on in the check
//!   phase, after the iteration's timers and I/O have run.
//! - **Nothing is lost**: an operation is tried first, and only a
//!   `WouldBlock`, or a TCP read or write that moved fewer bytes than
//!   asked, makes the next one wait for a readiness event; a read or write
//!   that is dropped before it completes has transferred nothing.
//! - **Every waiting task is woken, and nothing waits for nothing**: each
//!   async operation waiting on a direction (`read().await`,
//!   `readable().await`, `recv_from`, `accept`, in any number of tasks
//!   sharing the socket) is woken by its next event, in the order the
//!   operations began to wait, and one dropped before it ends (a
//!   `timeout` that expired, a `select!` that chose another branch) takes
//!   its waker back at once, leaving the others' order. The poll API
//!   (`poll_read`, `poll_recv_ready`, the io traits) keeps one waker per
//!   direction, its latest caller's, as tokio's `poll_` methods do.
//! - **Never a wait that cannot end**: readiness comes only from the loop
//!   that made the socket, so once that loop is dropped, an operation that
//!   would wait fails instead ([`io::ErrorKind::Other`]); one the socket
//!   can still do at once (data already buffered) succeeds. (A socket
//!   awaited under another loop, a `block_on` of a second loop, waits
//!   until its own loop polls again: use a socket on the loop that made
//!   it.)
//! - **A socket keeps its loop alive until it is unrefed**:
//!   `set_ref(false)` on a [`TcpListener`], [`TcpStream`], [`UdpSocket`]
//!   or [`AsyncSource`] is Node's `unref()` (a background listener, a
//!   keep-alive connection), and `set_ref(true)` takes it back. Its
//!   events still come while anything else keeps the loop running.
//! - Sockets can be made wherever a loop is current (tasks, `block_on`,
//!   callbacks, [`EventLoop::scope`](crate::EventLoop::scope)): the loop
//!   registers them at its next flush point, before it polls.
//!
//! Names and shapes follow `tokio::net` (`bind(..).await`, `accept()`,
//! `connect(..).await`, `split`, `into_split` and `reunite`; `send_to`
//! and `recv_from`), with inherent `read`, `write` and `write_all`.
//! [`AsyncSource`] is tokio's `AsyncFd` for a mio source: its
//! `async_io(interest, op)` tries `op` and waits for readiness only when
//! `op` says `WouldBlock`, and `into_inner` deregisters the source and
//! gives it back.
//!
//! # Readiness and the `try_` operations
//!
//! As in tokio, [`TcpStream`], its halves and [`UdpSocket`] have
//! readiness waits (`ready(interest)`, `readable()`, `writable()`, and,
//! on [`TcpStream`] and [`UdpSocket`], their `poll_` forms) and operations that never wait (`try_read`,
//! `try_write`, `try_send`, `try_recv_from`, ...), for code that waits
//! for readiness and then does what it can: `loop { s.readable().await?;
//! match s.try_read(&mut buf) { .. WouldBlock => continue } }`.
//! [`Interest`] is mio's (tokio's `READABLE` and `WRITABLE`; tokio's
//! `ERROR` is not here); [`Ready`]
//! says what a wait found.
//!
//! - **A wait ends at once while its direction may be ready**: nothing
//!   has said `WouldBlock` (or read or written short) since the loop last
//!   reported it ready, or it is closed (final, as in tokio). Otherwise it waits
//!   for the loop's next event for the socket, as a `read` does: every
//!   task waiting is woken by it. It can end with a false positive.
//! - **A `try_` operation asks the socket every time** (tokio's skips the
//!   system call while its cached readiness says `WouldBlock`), so bytes
//!   that came before the loop's poll are found. Its `WouldBlock` clears
//!   the direction's readiness: the next wait really waits.
//! - **The `try_` operations count in the streak** that keeps a socket
//!   from starving the loop, as the waiting operations do, and so does a
//!   wait that ends at once: a wait at the end of a streak of 32 yields
//!   to the loop first, so a `readable`/`try_read` loop on a peer that is
//!   always ahead yields (every 16 rounds) as a `read` loop does, and a
//!   `ready` loop that ignores what it is told (a writable socket with
//!   nothing to write) cannot keep the loop from its timers.
//! - **Once the loop is dropped**, a wait ends at once while its
//!   direction may still be ready, and fails ([`io::ErrorKind::Other`])
//!   once a `try_` has said `WouldBlock`; the `try_` operations work as
//!   ever (they never wait).
//!
//! # The ecosystems' io traits
//!
//! Two features, off by default, implement the byte-stream traits on
//! [`TcpStream`] and its halves (and on an [`AsyncSource`] of a byte
//! source, such as a Unix stream), so the ecosystems' adapters work on the
//! loop's sockets (buffered readers, `lines`, `copy`, codecs):
//!
//! - `futures-io`: `futures_io::AsyncRead` and `AsyncWrite` (what
//!   `futures::io` and futures-util's `AsyncReadExt` build on);
//! - `tokio-io`: `tokio::io::AsyncRead` and `AsyncWrite`, with tokio
//!   built without features (its traits, no runtime), for
//!   `tokio::io::{BufReader, copy, AsyncBufReadExt}` and tokio-util.
//!
//! The traits are the inherent calls: the same readiness and errors,
//! nothing buffered, a flush ready at once. `poll_shutdown` (tokio) and
//! `poll_close` (futures) shut the write direction down, as
//! [`TcpStream::shutdown`]`(Write)` does; an owned write half shut down
//! so does not shut down again when dropped. On an [`AsyncSource`], the
//! write traits need its source to be [`HalfClose`] (a Unix stream, a
//! pipe's writing end, or a source of your own), whose `half_close` is
//! the shutdown (a pipe's does nothing: its reader sees the end when the
//! source is dropped). With the inherent calls in scope, call a trait method
//! the inherent one shadows by its path
//! (`AsyncWriteExt::shutdown(&mut stream)`).
//!
//! ```
//! # #[cfg(feature = "tokio-io")] {
//! use timerloop::{EventLoop, net::{TcpListener, TcpStream}, task};
//! use tokio::io::{AsyncBufReadExt, BufReader};
//! let mut lp = EventLoop::new();
//! let lines = lp
//!     .block_on(async {
//!         let l = TcpListener::bind("127.0.0.1:0").await?;
//!         let mut c = TcpStream::connect(l.local_addr()?).await?;
//!         let (s, _) = l.accept().await?;
//!         task::spawn(async move {
//!             c.write_all(b"one\ntwo\n").await?;
//!             c.shutdown(std::net::Shutdown::Write) // the end of the lines
//!         });
//!         let mut lines = BufReader::new(s).lines();
//!         let mut got = Vec::new();
//!         while let Some(line) = lines.next_line().await? {
//!             got.push(line);
//!         }
//!         std::io::Result::Ok(got)
//!     })
//!     .unwrap()
//!     .unwrap();
//! assert_eq!(lines, ["one", "two"]);
//! # }
//! ```
//!
//! # Examples
//!
//! ```
//! use timerloop::{EventLoop, net::{TcpListener, TcpStream}};
//! let mut lp = EventLoop::new();
//! lp.block_on(async {
//!     let l = TcpListener::bind("127.0.0.1:0").await?;
//!     let mut c = TcpStream::connect(l.local_addr()?).await?;
//!     let (mut s, peer) = l.accept().await?;
//!     assert_eq!(peer, c.local_addr()?);
//!     c.write_all(b"hello").await?;
//!     let mut buf = [0; 5];
//!     let n = s.read(&mut buf).await?;
//!     assert_eq!(&buf[..n], b"hello");
//!     std::io::Result::Ok(())
//! })
//! .unwrap()
//! .unwrap();
//! ```
#![forbid(unsafe_code)]

mod compat;
mod ready;
mod source;
mod split;
mod tcp;
mod udp;

/// What a readiness wait (`ready`, and [`AsyncSource`]'s operations)
/// waits for: mio's `Interest`, the same type as
/// [`timerloop::mio::Interest`](crate::mio::Interest), here under the name
/// and path a port from `tokio::io::Interest` looks for.
/// `Interest::READABLE | Interest::WRITABLE` waits for either in `ready`;
/// [`AsyncSource`]'s operations take one direction alone.
pub use mio::Interest;
pub use ready::Ready;
pub use source::{AsyncSource, HalfClose};
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use tcp::{TcpListener, TcpStream};
pub use udp::UdpSocket;

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, RawWakerVTable, Waker};

use crate::EventLoop;
use crate::timers::{CallbackKind, LoopShared, current_shared};
use crate::uv::{self, Readiness};

/// Wakes the operations waiting on a socket when what could report its
/// readiness is let go of: the loop's callback for it (the loop dropped,
/// or the socket deregistered), or its registration, queued and dropped
/// unrun with the loop. A waiting operation then polls again, finds the
/// loop gone and fails ([`loop_gone`]) instead of waiting forever.
struct WakeWhenReleased<S>(Weak<Inner<S>>);

impl<S> WakeWhenReleased<S> {
    /// The registration ran: nothing to wake for.
    fn disarm(mut self) {
        self.0 = Weak::new();
    }
}

impl<S> Drop for WakeWhenReleased<S> {
    fn drop(&mut self) {
        if let Some(i) = self.0.upgrade() {
            i.wake_all();
        }
    }
}

/// The source, borrowed for the loop or an operation; a borrow the
/// caller still holds (through `AsyncSource::get_ref`) is a panic that
/// says what to do.
fn borrow_source<S>(source: &RefCell<S>) -> std::cell::RefMut<'_, S> {
    match source.try_borrow_mut() {
        Ok(s) => s,
        Err(_) => source_in_use(),
    }
}

#[cold]
#[track_caller]
fn source_in_use() -> ! {
    panic!(
        "timerloop::net: the source is borrowed (AsyncSource::get_ref or get_mut) where the loop \
         or an operation needs it: let the borrow go before an .await and before the next \
         operation, and inside an operation use the `&mut S` its closure is given"
    )
}

/// The error of an operation that would wait for readiness on a socket
/// whose loop was dropped.
#[cold]
fn loop_gone() -> io::Error {
    io::Error::other(
        "the socket's EventLoop was dropped: no readiness can come (a socket is \
         polled by the loop that made it)",
    )
}

/// A mio source registered with the current loop for a future's use: the
/// source, its readiness as last reported, and the tasks waiting on it.
struct Registration<S: mio::event::Source + 'static> {
    inner: Rc<Inner<S>>,
}

struct Inner<S> {
    shared: Rc<LoopShared>,
    source: RefCell<S>,
    interest: mio::Interest,
    handle: Cell<Option<uv::Handle>>,
    /// Dropped: a registration still queued does nothing.
    dropped: Cell<bool>,
    /// Why registering failed, for the next operation to report.
    failed: RefCell<Option<io::Error>>,
    /// An event reported an error or a closed side: from then on a short
    /// read or write does not wait for readiness (see [`Registration::short`]).
    troubled: Cell<bool>,
    read: Side,
    write: Side,
    /// Set while a [`Wait`] polls its operation: a wait then goes into
    /// [`wants`](Self::wants), for the `Wait` to keep in the directions'
    /// lists, instead of the poll API's slot.
    collecting: Cell<bool>,
    /// The directions the operation a [`Wait`] polls waits in.
    wants: Cell<u8>,
    /// Keeps the loop alive (the default, as a Node socket), or not
    /// (`set_ref(false)`, Node's `unref()`): applied to the handle when it
    /// is registered, and at once to a registered one.
    refed: Cell<bool>,
    /// Its owner may take the source back
    /// ([`into_inner`](Registration::into_inner)): registering it makes
    /// sure its loop has a [`NetRegistry`] to deregister it with.
    reclaimable: bool,
}

/// A clone of a loop's mio registry, made by the first registration of a
/// source that may be taken back ([`Registration::into_inner`]): a
/// source given back must be deregistered at once (it may be registered
/// again at once, or closed), where the loop may not be lent (inside a
/// callback, or away from the loop). One descriptor per loop, dropped
/// with the loop's layers when the loop goes.
#[derive(Default)]
struct NetRegistry(RefCell<Option<Rc<mio::Registry>>>);

/// One direction of a socket.
struct Side {
    /// May be ready: the next operation tries the socket. Cleared by a
    /// `WouldBlock`, set by the poll phase.
    ready: Cell<bool>,
    /// The tasks waiting: the waker of each async operation waiting
    /// ([`Wait`]: tasks sharing the socket through an `Rc` may wait in the
    /// same direction at once), each taken out when its operation is
    /// dropped, and the poll API's one waker, its latest caller's (as
    /// tokio's `poll_` methods keep). All are woken by a readiness event.
    waiters: Waiters,
    /// Operations done at once, in a row, since its tasks last waited or
    /// the loop last reported an event for the socket (see [`STREAK`]).
    /// The `try_` operations count too: they are operations done at once.
    streak: Cell<u32>,
    /// An event reported this direction closed (the peer's write side
    /// shut, or the connection gone): final, as tokio's `READ_CLOSED` and
    /// `WRITE_CLOSED` are, and a readiness wait in it ends at once.
    closed: Cell<bool>,
}

impl Side {
    fn new() -> Side {
        Side {
            ready: Cell::new(true),
            waiters: Waiters::default(),
            streak: Cell::new(0),
            closed: Cell::new(false),
        }
    }

    /// What a readiness wait in direction `dir` finds here.
    fn readiness(&self, dir: Dir) -> Ready {
        let (ready, closed) = match dir {
            Dir::Read => (Ready::READABLE, Ready::READ_CLOSED),
            Dir::Write => (Ready::WRITABLE, Ready::WRITE_CLOSED),
        };
        let mut r = Ready::EMPTY;
        if self.ready.get() {
            r |= ready;
        }
        if self.closed.get() {
            r |= closed;
        }
        r
    }
}

/// Operations in one direction a socket does at once, in a row (no wait,
/// no event between), before the task doing them yields to the loop for
/// one iteration: libuv reads a stream at most 32 times per readiness
/// event, for the same reason (a peer as fast as the reader would starve
/// the loop; tokio's tasks have a budget of 128 operations per poll). An
/// echo server, whose every line is an event, never reaches it.
const STREAK: u32 = 32;

/// The wakers of the tasks waiting on one direction of a socket: the
/// async operations' ([`Wait`]), the first inline (one task per direction
/// is the common case, and it costs no allocation), any others beside it,
/// in the order they began to wait (an event wakes them in that order);
/// and the poll API's slot, woken last. An event takes them all and starts a new
/// epoch: a `Wait` whose waker was taken has nothing to take back. Cells
/// taken and put back (no user code runs between), not `RefCell`s: a
/// socket keeps two of these, and every connection of a server one
/// socket.
#[derive(Default)]
struct Waiters {
    first: Cell<Option<Waker>>,
    more: Cell<Vec<Waker>>,
    /// The latest waker of the poll API (`poll_read`, `poll_recv_ready`,
    /// the io traits): one, replaced by each call, as tokio's `poll_`
    /// methods keep only their latest caller's.
    slot: Cell<Option<Waker>>,
    /// Counts the wakes: a [`Wait`]'s entry is in the lists only while
    /// the epoch it was put in lasts.
    epoch: Cell<u64>,
}

impl Waiters {
    /// Adds an async operation's waker (one entry per operation: tasks
    /// with two operations waiting have two).
    fn push(&self, w: Waker) {
        match self.first.take() {
            None => self.first.set(Some(w)),
            f @ Some(_) => {
                self.first.set(f);
                let mut more = self.more.take();
                more.push(w);
                self.more.set(more);
            }
        }
    }

    /// Takes the entry `id` out (an operation's own; several entries of
    /// one task may share an identity, and then which one goes makes no
    /// difference).
    fn remove(&self, id: WakerId) {
        let mut more = self.more.take();
        let gone = match self.first.take() {
            Some(f) if id.is(&f) => {
                // The first of the others moves inline; the rest keep
                // their order (the lists are short: a shift, not a swap,
                // so tasks are woken in the order they waited).
                self.first.set((!more.is_empty()).then(|| more.remove(0)));
                Some(f)
            }
            f => {
                self.first.set(f);
                more.iter().position(|o| id.is(o)).map(|i| more.remove(i))
            }
        };
        self.more.set(more);
        drop(gone); // after the cells are whole again: a waker's drop is foreign code
    }

    /// Keeps `w` as the poll API's waker (the one it replaces is dropped
    /// once the slot is whole again: a waker's drop is foreign code).
    fn set_slot(&self, w: &Waker) {
        match self.slot.take() {
            Some(s) if s.will_wake(w) => self.slot.set(Some(s)),
            old => {
                self.slot.set(Some(w.clone()));
                drop(old);
            }
        }
    }
}

/// Wakes every waiter (each then polls again and, if it finds nothing,
/// waits again), taken out of the cells first; a new epoch begins.
fn wake_stored(w: &Waiters) {
    w.epoch.set(w.epoch.get() + 1);
    let first = w.first.take();
    let more = w.more.take();
    let slot = w.slot.take();
    if let Some(f) = first {
        f.wake();
    }
    for waker in more {
        waker.wake();
    }
    if let Some(s) = slot {
        s.wake();
    }
}

impl Dir {
    fn bit(self) -> u8 {
        match self {
            Dir::Read => 1,
            Dir::Write => 2,
        }
    }
}

/// An async operation on a socket: its poll function (`f`), polled as
/// `poll_fn` would, with its waits kept in the directions' waiter lists,
/// so every task waiting is woken by an event, and taken out again when
/// the operation ends or is dropped first (a `select!` that chose another
/// branch, a `timeout` that expired): an idle socket keeps no waker of an
/// operation that gave up.
struct Wait<S, F> {
    inner: Rc<Inner<S>>,
    f: F,
    /// Per direction: the entry this operation put in its list, by the
    /// identity of the waker put there (not `will_wake`, which may miss a
    /// waker whose clones differ: its entries would pile up), and the
    /// epoch it was put in.
    held: [Option<WakerId>; 2],
    epochs: [u64; 2],
}

/// A waker's identity: its data pointer and its table.
#[derive(Clone, Copy)]
struct WakerId(*const (), &'static RawWakerVTable);

impl WakerId {
    fn of(w: &Waker) -> WakerId {
        WakerId(w.data(), w.vtable())
    }

    fn is(self, w: &Waker) -> bool {
        std::ptr::eq(self.0, w.data()) && std::ptr::eq(self.1, w.vtable())
    }
}

impl<S: mio::event::Source + 'static> Registration<S> {
    /// The registration's shared state, for a [`wait`] on it (taken
    /// before the poll function borrows the socket).
    fn rc(&self) -> Rc<Inner<S>> {
        self.inner.clone()
    }
}

/// `f`, a poll function of the socket whose state is `inner`, as an
/// async operation: see [`Wait`].
fn wait<S, T, F: FnMut(&mut Context<'_>) -> Poll<T> + Unpin>(
    inner: Rc<Inner<S>>,
    f: F,
) -> Wait<S, F> {
    Wait {
        inner,
        f,
        held: [None; 2],
        epochs: [0; 2],
    }
}

/// Takes a [`Wait`]'s entry in `waiters` out, if the list still holds it
/// (a wake took the entries of earlier epochs than the list's).
fn release(waiters: &Waiters, held: &mut Option<WakerId>, epoch: u64) {
    if let Some(id) = held.take()
        && epoch == waiters.epoch.get()
    {
        waiters.remove(id);
    }
}

impl<S, T, F: FnMut(&mut Context<'_>) -> Poll<T> + Unpin> Future for Wait<S, F> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let this = &mut *self;
        let i = &*this.inner;
        let collecting = Collecting {
            outer: (i.collecting.replace(true), i.wants.replace(0)),
            inner: i,
        };
        let r = (this.f)(cx);
        let now = i.wants.get();
        drop(collecting);
        let now = if r.is_pending() { now } else { 0 };
        for dir in [Dir::Read, Dir::Write] {
            let d = dir as usize;
            let waiters = &this.inner.side(dir).waiters;
            let want = now & dir.bit() != 0;
            let current = this.epochs[d] == waiters.epoch.get();
            match this.held[d] {
                // Still there, and it wakes this task: kept.
                Some(id) if want && current && id.is(cx.waker()) => continue,
                // Taken by a wake: nothing to take back.
                Some(_) if !current => this.held[d] = None,
                Some(_) => release(waiters, &mut this.held[d], this.epochs[d]),
                None => {}
            }
            if want {
                let w = cx.waker().clone();
                this.held[d] = Some(WakerId::of(&w));
                this.epochs[d] = waiters.epoch.get();
                waiters.push(w);
            }
        }
        r
    }
}

/// A [`Wait`] polling its operation: puts the socket's `collecting` and
/// `wants` back as they were however the poll ends. An operation's
/// closure may panic (the loop fails its task, not the socket, which
/// other tasks may share): left set, `collecting` would send every later
/// wait of the poll API on the socket to a `Wait` that is gone.
struct Collecting<'a, S> {
    inner: &'a Inner<S>,
    outer: (bool, u8),
}

impl<S> Drop for Collecting<'_, S> {
    fn drop(&mut self) {
        self.inner.collecting.set(self.outer.0);
        self.inner.wants.set(self.outer.1);
    }
}

impl<S, F> Drop for Wait<S, F> {
    fn drop(&mut self) {
        for dir in [Dir::Read, Dir::Write] {
            let d = dir as usize;
            release(
                &self.inner.side(dir).waiters,
                &mut self.held[d],
                self.epochs[d],
            );
        }
    }
}

impl<S: mio::event::Source + 'static> Registration<S> {
    /// Registers `source` with the current loop (at its next flush point).
    #[track_caller]
    fn new(source: S, interest: mio::Interest) -> Registration<S> {
        Registration::with(source, interest, false)
    }

    /// [`new`](Self::new), for a source its owner may take back with
    /// [`into_inner`](Self::into_inner).
    #[track_caller]
    fn reclaimable(source: S, interest: mio::Interest) -> Registration<S> {
        Registration::with(source, interest, true)
    }

    #[track_caller]
    fn with(source: S, interest: mio::Interest, reclaimable: bool) -> Registration<S> {
        let shared = current_shared();
        let inner = Rc::new(Inner {
            shared: shared.clone(),
            source: RefCell::new(source),
            interest,
            handle: Cell::new(None),
            dropped: Cell::new(false),
            failed: RefCell::new(None),
            troubled: Cell::new(false),
            read: Side::new(),
            write: Side::new(),
            collecting: Cell::new(false),
            wants: Cell::new(0),
            refed: Cell::new(true),
            reclaimable,
        });
        // The queued registration holds the state weakly: a socket dropped
        // before it runs is closed at once (the last `Rc`), not kept open
        // until then.
        let me = Rc::downgrade(&inner);
        let unrun = WakeWhenReleased(Rc::downgrade(&inner));
        shared.defer(move |lp| {
            if let Some(me) = me.upgrade() {
                me.register(lp);
            }
            unrun.disarm();
        });
        Registration { inner }
    }

    /// Deregisters the source now and gives it back: nothing of the loop's
    /// refers to it any more, so it may be registered again at once (with
    /// this loop or another poller) or closed. The loop's handle of it is
    /// closed at the loop's next flush point (at once where the loop can
    /// be lent); until then an event already collected for it reaches
    /// nobody (the callback holds this state weakly, and it is gone). A
    /// registration still queued finds the state gone and does nothing.
    ///
    /// # Panics
    ///
    /// If an operation's future on the source was leaked (`mem::forget`):
    /// it holds the source's state, so the source cannot be taken out.
    fn into_inner(self) -> S {
        debug_assert!(self.inner.reclaimable, "made by Registration::reclaimable");
        let inner = self.inner.clone();
        // With its handle taken, the drop marks the registration dropped
        // and wakes what waits, and closes nothing.
        let handle = inner.handle.take();
        drop(self);
        if let Some(h) = handle
            && !inner.shared.closed.get()
        {
            // A loop that is gone took its poller, and with it the source's
            // registration, along.
            let registry = inner.shared.layer::<NetRegistry>().0.borrow().clone();
            let registry =
                registry.expect("a registered reclaimable source's loop has its registry");
            let _ = registry.deregister(&mut *borrow_source(&inner.source));
            inner
                .shared
                .run_now_or_defer(move |lp| lp.close_deregistered_io(h));
        }
        match Rc::try_unwrap(inner) {
            Ok(inner) => inner.source.into_inner(),
            Err(_) => panic!(
                "AsyncSource::into_inner: a future of an operation on the source was leaked \
                 (std::mem::forget), and holds the source"
            ),
        }
    }

    /// Whether the socket keeps its loop alive.
    fn has_ref(&self) -> bool {
        self.inner.refed.get()
    }

    /// Makes the socket keep its loop alive (`true`, the default) or not
    /// (Node's `unref()`): at once where the loop can be lent (a task, a
    /// scope), else at its next flush point; a socket not registered yet
    /// is registered so.
    fn set_ref(&self, refed: bool) {
        let i = &self.inner;
        if i.refed.replace(refed) == refed || i.handle.get().is_none() {
            return;
        }
        let me = Rc::downgrade(i);
        i.shared.run_now_or_defer(move |lp| {
            if let Some(me) = me.upgrade()
                && let Some(h) = me.handle.get()
            {
                lp.ref_external_io(h, me.refed.get());
            }
        });
    }

    fn source(&self) -> std::cell::Ref<'_, S> {
        match self.inner.source.try_borrow() {
            Ok(s) => s,
            Err(_) => source_in_use(),
        }
    }

    /// What the source is registered for.
    fn interest(&self) -> mio::Interest {
        self.inner.interest
    }

    /// The source, borrowed mutably (the loop borrows it only while it
    /// registers or closes it, at flush points, never during a poll).
    fn source_mut(&self) -> std::cell::RefMut<'_, S> {
        borrow_source(&self.inner.source)
    }

    /// Runs `op` on the source while it may be ready for `dir`; on
    /// `WouldBlock`, waits for the next readiness event.
    fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        dir: Dir,
        mut op: impl FnMut(&mut S) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        let i = &*self.inner;
        if let Some(e) = self.failure() {
            return Poll::Ready(Err(e));
        }
        let Side {
            ready,
            waiters,
            streak,
            ..
        } = i.side(dir);
        // Only the loop's poll phase reports readiness: with the loop gone,
        // the socket itself is asked every time, and what would wait fails.
        let gone = i.shared.closed.get();
        if streak.get() >= STREAK && !gone {
            // A source that is always ready (a peer that writes as fast as
            // this task reads) would keep the task, and the whole loop,
            // here: it yields to the loop instead, and goes on in the check
            // phase, after timers, I/O and immediates have had their turn.
            streak.set(0);
            i.wait_in(dir, waiters, cx.waker());
            self.yield_to_loop(dir);
            return Poll::Pending;
        }
        loop {
            if !ready.get() && !gone {
                streak.set(0);
                i.wait_in(dir, waiters, cx.waker());
                return Poll::Pending;
            }
            // `op` is the caller's code (an `AsyncSource` closure): a poll
            // function it calls on this socket is the poll API's, not the
            // operation a `Wait` may be collecting for.
            let collecting = i.collecting.replace(false);
            let r = op(&mut borrow_source(&i.source));
            i.collecting.set(collecting);
            match r {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && gone => {
                    return Poll::Ready(Err(loop_gone()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => ready.set(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => {
                    streak.set(streak.get().saturating_add(1));
                    return Poll::Ready(r);
                }
            }
        }
    }

    /// Why registering the source failed, if it did: every operation
    /// reports it (the source is not registered, and one that waited
    /// would wait for ever).
    fn failure(&self) -> Option<io::Error> {
        self.inner
            .failed
            .borrow()
            .as_ref()
            .map(|e| match e.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(e.kind(), e.to_string()),
            })
    }

    /// Waits until one of the directions `interest` names may be ready
    /// (tokio's `ready`): what each of them is, as far as the loop knows.
    /// Ready at once while a direction is (no `WouldBlock` since its last
    /// event), or closed; a false positive is possible, as in tokio, and
    /// the `try_` operation that finds it clears the readiness. Waits as
    /// [`poll_io`](Self::poll_io) does: every waiter is woken by the
    /// direction's next event, a direction whose operations ran
    /// [`STREAK`] times in a row yields to the loop first, and with the
    /// loop gone, what would wait fails.
    fn poll_ready(&self, cx: &mut Context<'_>, interest: Interest) -> Poll<io::Result<Ready>> {
        let i = &*self.inner;
        if let Some(e) = self.failure() {
            return Poll::Ready(Err(e));
        }
        let dirs = match directions(interest, i.interest) {
            Ok(dirs) => dirs,
            Err(e) => return Poll::Ready(Err(e)),
        };
        let wanted = || dirs.into_iter().flatten();
        let gone = i.shared.closed.get();
        let mut found = Ready::EMPTY;
        for dir in wanted() {
            let side = i.side(dir);
            // A direction at the end of a streak is not ready until the
            // loop has had its turn (unless the loop is gone: then no
            // turn is coming, and nothing is starved).
            if gone || side.streak.get() < STREAK {
                found |= side.readiness(dir);
            }
        }
        if !found.is_empty() {
            // A readiness found at once counts in its direction's streak,
            // as an operation done at once does: a loop that waits and
            // then does nothing (a writable answer it ignores) still
            // yields to the loop.
            for dir in wanted() {
                let side = i.side(dir);
                if !side.readiness(dir).is_empty() {
                    side.streak.set(side.streak.get().saturating_add(1));
                }
            }
            return Poll::Ready(Ok(found));
        }
        if gone {
            return Poll::Ready(Err(loop_gone()));
        }
        for dir in wanted() {
            let side = i.side(dir);
            i.wait_in(dir, &side.waiters, cx.waker());
            if side.streak.get() >= STREAK && !side.readiness(dir).is_empty() {
                self.yield_to_loop(dir);
            }
            side.streak.set(0);
        }
        Poll::Pending
    }

    /// Runs `op` once, now, whatever the last readiness was (tokio's
    /// `try_io`, which skips the call when it last saw `WouldBlock`; this
    /// one asks the socket, so bytes that came before the loop's poll
    /// are found). A `WouldBlock` clears `dir`'s readiness, so the next
    /// readiness wait waits for an event; anything else counts in the
    /// direction's streak, as an operation done at once does in
    /// [`poll_io`](Self::poll_io).
    fn try_io<R>(&self, dir: Dir, op: impl FnOnce(&mut S) -> io::Result<R>) -> io::Result<R> {
        if let Some(e) = self.failure() {
            return Err(e);
        }
        let side = self.inner.side(dir);
        let r = op(&mut borrow_source(&self.inner.source));
        match &r {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => side.ready.set(false),
            _ => side.streak.set(side.streak.get().saturating_add(1)),
        }
        r
    }

    /// Wakes the tasks waiting in `dir` from an immediate: in the loop's
    /// check phase, once the rest of this iteration has run.
    #[cold]
    fn yield_to_loop(&self, dir: Dir) {
        let weak = Rc::downgrade(&self.inner);
        self.inner.shared.defer(move |lp| {
            let _ = lp.set_immediate(move |_| {
                if let Some(i) = weak.upgrade() {
                    wake_stored(&i.side(dir).waiters);
                }
            });
        });
    }
}

impl<S: mio::event::Source + 'static> Registration<S> {
    /// [`poll_io`](Self::poll_io) of a read or write of `len` bytes; one
    /// that moves some but fewer is [short](Self::short).
    fn poll_bytes(
        &self,
        cx: &mut Context<'_>,
        dir: Dir,
        len: usize,
        op: impl FnMut(&mut S) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        let r = self.poll_io(cx, dir, op);
        if let Poll::Ready(Ok(n)) = r
            && 0 < n
            && n < len
        {
            self.short(dir);
        }
        r
    }

    /// [`try_io`](Self::try_io) of a read or write of `len` bytes; one
    /// that moves some but fewer is [short](Self::short), as in
    /// [`poll_bytes`](Self::poll_bytes).
    fn try_bytes(
        &self,
        dir: Dir,
        len: usize,
        op: impl FnOnce(&mut S) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let r = self.try_io(dir, op);
        if let Ok(n) = r
            && 0 < n
            && n < len
        {
            self.short(dir);
        }
        r
    }

    /// Notes that an operation in `dir` moved some bytes but fewer than it
    /// was given: the socket's receive buffer is drained (a read) or its
    /// send buffer full (a write) for now. The next operation then waits
    /// for a readiness event instead of making a system call that would
    /// return `WouldBlock` (tokio does the same): one `read` per echoed line
    /// instead of two. Readiness is edge-triggered, so bytes (or space)
    /// arriving after this operation are reported anew. A peer's close or
    /// an error that an event already reported is not reported again, so
    /// after one, operations go on until they return 0 or `WouldBlock`.
    fn short(&self, dir: Dir) {
        let i = &*self.inner;
        if i.troubled.get() {
            return;
        }
        i.side(dir).ready.set(false);
    }
}

#[derive(Clone, Copy)]
enum Dir {
    Read,
    Write,
}

/// The directions a readiness wait for `interest` waits in: readable,
/// writable or both, and only ones the source is registered for (it would
/// wait for ever in another).
fn directions(interest: Interest, registered: Interest) -> io::Result<[Option<Dir>; 2]> {
    let other = interest
        .remove(Interest::READABLE)
        .and_then(|i| i.remove(Interest::WRITABLE));
    let read = interest.is_readable() && registered.is_readable();
    let write = interest.is_writable() && registered.is_writable();
    if other.is_some() || read != interest.is_readable() || write != interest.is_writable() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "a readiness wait is for READABLE, WRITABLE or both, ones the socket was \
                 registered for ({registered:?}); it asked for {interest:?}"
            ),
        ));
    }
    Ok([read.then_some(Dir::Read), write.then_some(Dir::Write)])
}

impl<S> Inner<S> {
    /// A poll function waits in `dir`: under a [`Wait`], which keeps its
    /// waker in the list, noted for it; otherwise (the poll API) in the
    /// slot.
    fn wait_in(&self, dir: Dir, waiters: &Waiters, w: &Waker) {
        if self.collecting.get() {
            self.wants.set(self.wants.get() | dir.bit());
        } else {
            waiters.set_slot(w);
        }
    }

    fn side(&self, dir: Dir) -> &Side {
        match dir {
            Dir::Read => &self.read,
            Dir::Write => &self.write,
        }
    }

    /// Wakes every task waiting on the socket, in either direction.
    fn wake_all(&self) {
        wake_stored(&self.read.waiters);
        wake_stored(&self.write.waiters);
    }
}

impl<S: mio::event::Source + 'static> Inner<S> {
    fn register(self: &Rc<Self>, lp: &mut EventLoop) {
        if self.dropped.get() {
            return;
        }
        if self.reclaimable
            && let Err(e) = self.keep_registry(lp)
        {
            *self.failed.borrow_mut() = Some(e);
            self.on_ready(Readiness {
                error: true,
                ..Readiness::default()
            });
            return;
        }
        // Dropped with the callback, when the loop lets go of it (the
        // socket deregistered, or the loop dropped): wakes what waits.
        let me = WakeWhenReleased(Rc::downgrade(self));
        let cb: uv::IoCb<EventLoop> = Box::new(move |lp, _, _, r| {
            if me.0.strong_count() > 0 {
                // The state is held while `on_ready` runs, not while the
                // scope's ticks and microtasks (the polls of the tasks it
                // woke) run after it: a task there may take the source
                // back (`into_inner`), which needs the state's only `Rc`.
                lp.callback_scope(CallbackKind::Io, &mut |_| {
                    if let Some(me) = me.0.upgrade() {
                        me.on_ready(r);
                    }
                    Ok(())
                });
            }
        });
        let mut src = borrow_source(&self.source);
        match lp.register_external_io(&mut *src, self.interest, cb) {
            Ok(h) => {
                self.handle.set(Some(h));
                if !self.refed.get() {
                    lp.ref_external_io(h, false);
                }
            }
            Err(e) => {
                *self.failed.borrow_mut() = Some(e);
                drop(src);
                self.on_ready(Readiness {
                    error: true,
                    ..Readiness::default()
                });
            }
        }
    }

    /// Makes sure the loop has its [`NetRegistry`] (made at the first
    /// registration of a reclaimable source): failing that (out of
    /// descriptors), the source is not registered, as if the poller had
    /// refused it, so that [`Registration::into_inner`] can always
    /// deregister what is registered.
    fn keep_registry(&self, lp: &EventLoop) -> io::Result<()> {
        let layer = self.shared.layer::<NetRegistry>();
        if layer.0.borrow().is_none() {
            let registry = lp.io_registry_clone()?;
            *layer.0.borrow_mut() = Some(Rc::new(registry));
        }
        Ok(())
    }

    fn on_ready(&self, r: Readiness) {
        // An event: the loop has come round to its poll phase, so the
        // operations done since were not a streak that kept it away.
        self.read.streak.set(0);
        self.write.streak.set(0);
        let trouble = r.error || r.read_closed || r.write_closed;
        if trouble {
            self.troubled.set(true);
        }
        if r.read_closed {
            self.read.closed.set(true);
        }
        if r.write_closed {
            self.write.closed.set(true);
        }
        for (side, ready) in [(&self.read, r.readable), (&self.write, r.writable)] {
            if ready || trouble {
                side.ready.set(true);
                wake_stored(&side.waiters);
            }
        }
    }
}

impl<S: mio::event::Source + 'static> Drop for Registration<S> {
    fn drop(&mut self) {
        let i = &self.inner;
        i.dropped.set(true);
        // A task still waiting on the socket (it polled through a shared
        // cell that has now dropped it) is woken to see that, not left
        // waiting on readiness that will never come.
        i.wake_all();
        // Deregistered, then the socket closed (the last Rc): at once
        // where the loop can be lent (a task's poll), so that the address
        // can be bound again at once, as after a tokio socket's drop; else
        // at the next flush point. A registration still queued holds the
        // state weakly: the socket is closed with this drop.
        if let Some(h) = i.handle.take() {
            let me = i.clone();
            i.shared.run_now_or_defer(move |lp| {
                lp.close_external_io(h, &mut *borrow_source(&me.source));
            });
        }
    }
}

impl<S: mio::event::Source + fmt::Debug + 'static> fmt::Debug for Registration<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.inner.source.try_borrow() {
            Ok(s) => s.fmt(f),
            Err(_) => f.write_str("<in use>"),
        }
    }
}
