//! The watchdog behind [`Options::max_run`](crate::Options::max_run) and
//! [`Options::interrupt`](crate::Options::interrupt): how long the host's
//! JavaScript has run in the current turn, and what the engine's interrupt
//! handler answers.
//!
//! A *turn* is what Node runs for one macrotask: an entry into JavaScript
//! (the main script, a timer, an immediate, an I/O callback, `beforeExit`
//! or `exit`, the application's own `callback`/`enter`) and the ticks,
//! promise jobs, `queueMicrotask` callbacks and rejection checks that
//! drain after it. Each entry is a [`Entry::Turn`], whose count starts at
//! zero, or a [`Entry::Drain`], which adds to the turn before; so a
//! program that keeps queueing microtasks, each of them short, runs out of
//! budget as a `while (true) {}` does. Only the time inside JavaScript
//! counts: the loop's own work between two microtasks, the application's
//! callbacks and other hosts' JavaScript do not.
//!
//! The clock is quanta's raw counter (the TSC where it is reliable, as
//! the loop's own clock), read as each entry begins and ends: a pair of
//! reads costs about 20 ns where `std::time::Instant` took 55, and a
//! timer-heavy program enters JavaScript a million times a second.
//!
//! Invariants:
//! - with neither a budget nor a handler, [`Watch::run`] marks the host's
//!   JavaScript as running (the interrupt handler asks, for
//!   `process.exit`) and calls `f`, nothing else (no clock read);
//! - the budget, the handler and an ended program stop JavaScript only
//!   while the host runs it: the application's own `ctx.with` on its
//!   context, outside the host, is never stopped by them;
//! - once the watch has fired it answers yes to every poll: the host ends
//!   the program, and no more of its JavaScript may run.

use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

/// How an entry into JavaScript counts against the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A macrotask (or the application's own entry): a new turn.
    Turn,
    /// A tick, a job, a rejection check or an `uncaughtException`
    /// listener: part of the turn before.
    Drain,
}

/// Why the watch stopped the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fired {
    /// The turn's JavaScript ran longer than this budget.
    Budget(Duration),
    /// The embedder's handler said so.
    Handler,
}

impl Fired {
    /// What the host reports in place of QuickJS's bare `interrupted`.
    pub(crate) fn headline(self) -> String {
        match self {
            Fired::Budget(max) => format!(
                "InternalError: interrupted: the program's JavaScript ran for more than \
                 max_run ({max:?}) in one turn"
            ),
            Fired::Handler => {
                "InternalError: interrupted by the embedder's interrupt handler".to_owned()
            }
        }
    }
}

/// The interrupt handler an embedder gives: `true` stops the program.
pub(crate) type Handler = Arc<dyn Fn() -> bool + Send + Sync>;

pub(crate) struct Watch {
    /// The budget, and the clock it is counted on.
    max_run: Option<(Duration, quanta::Clock)>,
    handler: Option<Handler>,
    /// JavaScript runs now, entered through [`Watch::run`].
    inside: Cell<bool>,
    /// The clock's raw count when it was entered (with a budget).
    since: Cell<u64>,
    /// The turn's JavaScript time before `since`, in nanoseconds.
    spent: Cell<u64>,
    fired: Cell<Option<Fired>>,
}

impl Watch {
    pub(crate) fn new(max_run: Option<Duration>, handler: Option<Handler>) -> Self {
        Watch {
            // The first clock of the process calibrates the counter, about
            // 0.6 ms, once.
            max_run: max_run.map(|max| (max, quanta::Clock::new())),
            handler,
            inside: Cell::new(false),
            since: Cell::new(0),
            spent: Cell::new(0),
            fired: Cell::new(None),
        }
    }

    /// Runs `f`, which runs JavaScript, as `entry` of the current turn.
    /// An entry inside another (a nested `ctx.with`) is part of it.
    #[inline]
    pub(crate) fn run<T>(&self, entry: Entry, f: impl FnOnce() -> T) -> T {
        if self.inside.get() {
            return f();
        }
        if entry == Entry::Turn {
            self.spent.set(0);
        }
        self.inside.set(true);
        if let Some((_, clock)) = &self.max_run {
            self.since.set(clock.raw());
        }
        // Left as it was even if `f` unwinds.
        struct Leave<'a>(&'a Watch);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                let w = self.0;
                w.spent.set(w.spent.get() + w.ran());
                w.inside.set(false);
            }
        }
        let _leave = Leave(self);
        f()
    }

    /// Whether anything can stop the program's JavaScript: a budget or
    /// an embedder's handler.
    #[inline]
    pub(crate) fn watches(&self) -> bool {
        self.max_run.is_some() || self.handler.is_some()
    }

    /// Whether the host's JavaScript runs now (entered through
    /// [`Watch::run`]): the interrupt handler stops nothing else.
    #[inline]
    pub(crate) fn inside(&self) -> bool {
        self.inside.get()
    }

    /// The interrupt handler's answer: whether the JavaScript running now
    /// must stop.
    pub(crate) fn poll(&self) -> bool {
        if self.fired.get().is_some() {
            return true;
        }
        if !self.inside.get() {
            return false;
        }
        let over = self
            .max_run
            .as_ref()
            .filter(|(max, _)| u128::from(self.spent.get() + self.ran()) > max.as_nanos());
        let fired = if let Some((max, _)) = over {
            Some(Fired::Budget(*max))
        } else if self.handler.as_ref().is_some_and(|h| h()) {
            Some(Fired::Handler)
        } else {
            None
        };
        self.fired.set(fired);
        fired.is_some()
    }

    /// Nanoseconds since the running entry began (0 without a budget).
    fn ran(&self) -> u64 {
        self.max_run.as_ref().map_or(0, |(_, clock)| {
            clock.delta_as_nanos(self.since.get(), clock.raw())
        })
    }

    /// Why the watch stopped the program, once it has.
    #[inline]
    pub(crate) fn fired(&self) -> Option<Fired> {
        self.fired.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    fn spin(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {}
    }

    #[test]
    fn without_a_budget_or_handler_nothing_fires() {
        let w = Watch::new(None, None);
        assert!(!w.run(Entry::Turn, || w.poll()));
        assert_eq!(w.fired(), None);
    }

    #[test]
    fn a_turn_adds_up_its_drains_and_a_new_turn_starts_at_zero() {
        let max = Duration::from_millis(40);
        let w = Watch::new(Some(max), None);
        w.run(Entry::Turn, || spin(Duration::from_millis(15)));
        // Time outside JavaScript does not count.
        spin(Duration::from_millis(50));
        assert!(!w.run(Entry::Drain, || w.poll()));
        w.run(Entry::Drain, || spin(Duration::from_millis(15)));
        assert!(!w.run(Entry::Turn, || {
            spin(Duration::from_millis(15));
            w.poll()
        }));
        // 15 + 30 > 40: a drain adds to its turn.
        let over = w.run(Entry::Drain, || {
            spin(Duration::from_millis(30));
            w.poll()
        });
        assert!(over);
        assert_eq!(w.fired(), Some(Fired::Budget(max)));
        // Fired: yes from now on, inside or not.
        assert!(w.poll());
        assert!(w.run(Entry::Turn, || w.poll()));
    }

    #[test]
    fn the_handler_is_asked_only_inside() {
        let stop = Arc::new(AtomicBool::new(true));
        let s = stop.clone();
        let w = Watch::new(None, Some(Arc::new(move || s.load(Ordering::Relaxed))));
        assert!(!w.poll(), "outside the host's JavaScript");
        assert!(w.run(Entry::Turn, || w.poll()));
        assert_eq!(w.fired(), Some(Fired::Handler));
        assert!(Fired::Handler.headline().contains("interrupt handler"));
        assert!(
            Fired::Budget(Duration::from_millis(5))
                .headline()
                .contains("(5ms)")
        );
    }

    #[test]
    fn a_nested_entry_is_part_of_the_outer_one() {
        let w = Watch::new(Some(Duration::from_secs(60)), None);
        w.run(Entry::Turn, || {
            w.run(Entry::Turn, || spin(Duration::from_millis(2)))
        });
        assert!(!w.inside.get());
        assert!(w.spent.get() >= 2_000_000, "{} ns", w.spent.get());
    }
}
