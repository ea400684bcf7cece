//! Dropping an `EventLoop` with tasks still pending: their futures are
//! dropped with the loop current, as an abort drops them while the loop
//! runs, so a future's `drop` may read the clock, sleep or spawn; and a
//! loop dropped while a panic unwinds does not abort the process.
//! Virtual clock.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use timerloop::time::{self, Instant};
use timerloop::{EventLoop, task};

/// A guard whose drop uses the loop, as cleanup code does: it reads the
/// clock, makes a sleep and spawns a task (whose own guard does the same).
struct Guard {
    log: Rc<RefCell<Vec<String>>>,
    depth: u32,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let now = Instant::now().as_millis();
        drop(time::sleep(Duration::from_millis(5)));
        self.log
            .borrow_mut()
            .push(format!("guard {} at {now}", self.depth));
        if self.depth < 2 {
            let inner = Guard {
                log: self.log.clone(),
                depth: self.depth + 1,
            };
            drop(task::spawn(async move {
                let _g = inner;
                std::future::pending::<()>().await;
            }));
        }
    }
}

/// The loop ends with a task still pending (nothing refed is left), and
/// is dropped: the guard's drop runs with the loop current, at the loop's
/// time, and so do the guards of the tasks it spawned there.
#[test]
fn a_pending_tasks_drop_may_use_the_loop() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut lp = EventLoop::with_virtual_clock();
    let g = Guard {
        log: log.clone(),
        depth: 0,
    };
    let h = lp.spawn(async move {
        time::sleep(Duration::from_millis(7)).await;
        let _g = g;
        std::future::pending::<()>().await;
    });
    lp.run().unwrap();
    assert_eq!(lp.now(), 7);
    assert!(!h.is_finished());
    drop(lp);
    assert!(h.is_finished(), "cancelled with its loop");
    assert_eq!(
        *log.borrow(),
        ["guard 0 at 7", "guard 1 at 7", "guard 2 at 7"]
    );
}

/// A loop dropped while an unrelated panic unwinds: its tasks' guards
/// use the loop in their drops without a second panic (which would abort
/// the process); the first panic comes out as it was.
#[test]
fn a_loop_dropped_while_unwinding_does_not_abort() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let dropped = Rc::new(Cell::new(false));
    let (l, d) = (log.clone(), dropped.clone());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let mut lp = EventLoop::with_virtual_clock();
        let g = Guard { log: l, depth: 2 };
        lp.spawn(async move {
            let _g = g;
            std::future::pending::<()>().await;
        });
        lp.run().unwrap();
        d.set(true);
        panic!("unrelated");
    }));
    let msg = r.unwrap_err();
    assert_eq!(msg.downcast_ref::<&str>(), Some(&"unrelated"));
    assert!(dropped.get());
    assert_eq!(*log.borrow(), ["guard 2 at 0"]);
}
