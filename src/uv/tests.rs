//! Unit tests of the loop layer, driven by a virtual clock.

use super::*;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

struct Host0 {
    uv: Loop<Host0>,
    log: Rc<RefCell<Vec<String>>>,
}

impl Host for Host0 {
    fn uv(&mut self) -> &mut Loop<Self> {
        &mut self.uv
    }
}

fn host() -> (Host0, VirtualClock) {
    let clock = VirtualClock::new();
    let uv = Loop::new(Rc::new(clock.clone())).unwrap();
    (
        Host0 {
            uv,
            log: Rc::default(),
        },
        clock,
    )
}

fn log(h: &mut Host0, s: impl Into<String>) {
    let t = h.uv.now();
    h.log.borrow_mut().push(format!("{}@{t}", s.into()));
}

#[test]
fn timers_fire_by_timeout_then_start_id() {
    let (mut h, _c) = host();
    for (name, ms) in [("a", 10), ("b", 5), ("c", 10), ("d", 5)] {
        let t = h.uv.timer_init(move |h: &mut Host0| log(h, name));
        h.uv.timer_start(t, ms, 0).unwrap();
    }
    assert!(!run(&mut h, RunMode::Default).unwrap());
    assert_eq!(*h.log.borrow(), ["b@5", "d@5", "a@10", "c@10"]);
}

#[test]
fn repeat_restarts_from_loop_time_without_drift_correction() {
    let (mut h, c) = host();
    let count = Rc::new(RefCell::new(0));
    let k = count.clone();
    let t = h.uv.timer_init(move |h: &mut Host0| {
        log(h, "r");
        *k.borrow_mut() += 1;
        // A 3 ms busy callback: the next expiry is still 10 ms after the
        // loop time at which this one was due (uv_timer_again before cb).
        h.uv.clock().block(Duration::from_millis(3));
    });
    h.uv.timer_start(t, 10, 10).unwrap();
    let c2 = count.clone();
    let stopper = h.uv.timer_init(move |h: &mut Host0| {
        let _ = h.uv.timer_stop(t);
        assert_eq!(*c2.borrow(), 3);
    });
    h.uv.timer_start(stopper, 35, 0).unwrap();
    run(&mut h, RunMode::Default).unwrap();
    assert_eq!(*h.log.borrow(), ["r@10", "r@20", "r@30"]);
    assert!(c.now() >= Duration::from_millis(35));
}

#[test]
fn deadlines_saturate_and_timeout_is_capped() {
    let (mut h, _c) = host();
    let t = h.uv.timer_init(|_: &mut Host0| {});
    h.uv.timer_start(t, u64::MAX, 0).unwrap();
    // A virtual clock is not capped: it jumps straight to the deadline.
    assert_eq!(h.uv.next_timeout(), Some(u64::MAX - h.uv.now()));
    assert_eq!(h.uv.timer_due_in(t).unwrap(), u64::MAX - h.uv.now());
    // A real clock's poll is capped at i32::MAX ms, as libuv's.
    let mut real = Host0 {
        uv: Loop::new(Rc::new(crate::uv::SystemClock::new())).unwrap(),
        log: Rc::default(),
    };
    let t = real.uv.timer_init(|_: &mut Host0| {});
    real.uv.timer_start(t, u64::MAX, 0).unwrap();
    assert_eq!(real.uv.next_timeout(), Some(i32::MAX as u64));
    let never = h.uv.timer_init(|_: &mut Host0| {});
    assert_eq!(h.uv.timer_again(never), Err(UvError::NeverStarted));
}

#[test]
fn phase_order_of_one_iteration() {
    let (mut h, _c) = host();
    let idle = h.uv.idle_init(|h: &mut Host0| {
        log(h, "idle");
    });
    h.uv.watcher_start(idle).unwrap();
    let prep = h.uv.prepare_init(|h: &mut Host0| log(h, "prepare"));
    h.uv.watcher_start(prep).unwrap();
    let check = h.uv.check_init(move |h: &mut Host0| {
        log(h, "check");
        let _ = h.uv.watcher_stop(idle);
        let _ = h.uv.watcher_stop(prep);
    });
    h.uv.watcher_start(check).unwrap();
    h.uv.unref_handle(check).unwrap();
    let t = h.uv.timer_init(|h: &mut Host0| log(h, "timer"));
    h.uv.timer_start(t, 0, 0).unwrap();
    h.uv.defer(|h: &mut Host0| log(h, "pending"));
    let doomed = h.uv.idle_init(|_: &mut Host0| {});
    h.uv.close(doomed, Some(Box::new(|h: &mut Host0| log(h, "close"))))
        .unwrap();
    run(&mut h, RunMode::Default).unwrap();
    // Pre-loop timer pass first (libuv >= 1.45), then one iteration.
    assert_eq!(
        *h.log.borrow(),
        [
            "timer@0",
            "pending@0",
            "idle@0",
            "prepare@0",
            "check@0",
            "close@0"
        ]
    );
}

#[test]
fn a_bare_idle_handle_keeps_the_poll_from_waiting_and_runs_nothing() {
    let (mut h, _c) = host();
    let idle = h.uv.idle_init_bare();
    h.uv.watcher_start(idle).unwrap();
    let t = h.uv.timer_init(|h: &mut Host0| log(h, "timer"));
    h.uv.timer_start(t, 100, 0).unwrap();
    // Both alive: one iteration, whose poll does not wait for the timer.
    assert!(run(&mut h, RunMode::Once).unwrap());
    assert_eq!(h.uv.now(), 0);
    assert!(h.log.borrow().is_empty());
    h.uv.watcher_stop(idle).unwrap();
    assert!(!run(&mut h, RunMode::Default).unwrap());
    assert_eq!(*h.log.borrow(), ["timer@100"]);
}

#[test]
fn alive_follows_refs_and_unrefed_timers_still_bound_the_poll() {
    let (mut h, c) = host();
    let t = h.uv.timer_init(|h: &mut Host0| log(h, "unrefed"));
    h.uv.timer_start(t, 10, 0).unwrap();
    h.uv.unref_handle(t).unwrap();
    assert!(!h.uv.alive());
    let keep = h.uv.timer_init(|h: &mut Host0| log(h, "refed"));
    h.uv.timer_start(keep, 30, 0).unwrap();
    assert!(h.uv.alive());
    assert_eq!(h.uv.backend_timeout(), Some(10));
    run(&mut h, RunMode::Default).unwrap();
    assert_eq!(*h.log.borrow(), ["unrefed@10", "refed@30"]);
    assert_eq!(c.now(), Duration::from_millis(30));
}

#[test]
fn stale_handles_never_reach_a_reused_slot() {
    let (mut h, _c) = host();
    let a = h.uv.timer_init(|_: &mut Host0| {});
    h.uv.close(a, None).unwrap();
    run(&mut h, RunMode::NoWait).unwrap();
    let b = h.uv.timer_init(|_: &mut Host0| {});
    assert_eq!(a.index(), b.index(), "slot reused");
    assert_eq!(h.uv.timer_start(a, 1, 0), Err(UvError::StaleHandle));
    assert_eq!(h.uv.watcher_start(b), Err(UvError::WrongKind));
    assert!(!h.uv.is_active(b).unwrap());
}

#[test]
fn run_modes_and_reentrancy() {
    let (mut h, _c) = host();
    let t = h.uv.timer_init(|h: &mut Host0| {
        assert_eq!(run(h, RunMode::NoWait), Err(UvError::Reentrant));
        log(h, "t");
    });
    h.uv.timer_start(t, 5, 0).unwrap();
    // NoWait: no waiting, so the virtual clock does not move.
    assert!(run(&mut h, RunMode::NoWait).unwrap());
    assert!(h.log.borrow().is_empty());
    // Once: waits (jumps) to the timer.
    assert!(!run(&mut h, RunMode::Once).unwrap());
    assert_eq!(*h.log.borrow(), ["t@5"]);
}

#[test]
fn completions_run_in_the_poll_phase_and_take_no_virtual_time() {
    let (mut h, c) = host();
    let t = h.uv.timer_init(|h: &mut Host0| log(h, "timer"));
    h.uv.timer_start(t, 50, 0).unwrap();
    let done = h.uv.request(|h: &mut Host0| log(h, "io"));
    let cancelled = h.uv.request(|h: &mut Host0| log(h, "never"));
    let worker = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        done.complete();
        drop(cancelled);
    });
    let remote = h.uv.remote();
    remote.post(|h: &mut Host0| log(h, "posted")).unwrap();
    // A refed remote would keep the loop alive: drop it (its close follows
    // the post in the queue).
    drop(remote);
    run(&mut h, RunMode::Default).unwrap();
    worker.join().unwrap();
    assert_eq!(*h.log.borrow(), ["posted@0", "io@0", "timer@50"]);
    assert_eq!(c.now(), Duration::from_millis(50));
}

#[test]
fn io_sources_deliver_readiness() {
    use std::io::Write;
    let (mut h, _c) = host();
    let (mut tx, mut rx) = mio::net::UnixStream::pair().unwrap();
    let hd =
        h.uv.io_register_external(
            &mut rx,
            mio::Interest::READABLE,
            Box::new(move |h: &mut Host0, hd, _, r| {
                assert!(r.readable);
                log(h, "readable");
                h.uv.close(hd, None).unwrap();
            }),
        )
        .unwrap();
    tx.write_all(b"x").unwrap();
    run(&mut h, RunMode::Default).unwrap();
    assert_eq!(*h.log.borrow(), ["readable@0"]);
    assert!(!h.uv.alive());
    assert_eq!(
        h.uv.io_close_external(hd, &mut rx),
        Err(UvError::StaleHandle)
    );
}

/// An owned source is lent to its callback and put back after; closing it
/// from there drops it when the callback returns; an interest change asked
/// for meanwhile applies then; `io_take` gives it back, refused while lent.
#[test]
fn owned_sources_are_lent_to_their_callback() {
    use std::io::{Read, Write};
    let (mut h, _c) = host();
    let (mut tx, rx) = mio::net::UnixStream::pair().unwrap();
    let hd =
        h.uv.io_insert(
            Box::new(rx),
            mio::Interest::READABLE,
            Box::new(move |h: &mut Host0, hd, src, r| {
                let rx = src.downcast_mut::<mio::net::UnixStream>().unwrap();
                let mut buf = [0; 4];
                let n = rx.read(&mut buf).unwrap_or(0);
                log(h, if r.readable { "readable" } else { "?" });
                assert_eq!(h.uv.io_source(hd).err(), Some(UvError::Busy));
                assert!(matches!(h.uv.io_take(hd), Err(UvError::Busy)));
                if &buf[..n] == b"bye" {
                    h.uv.io_close(hd).unwrap();
                } else {
                    h.uv.io_set_interest(hd, mio::Interest::READABLE).unwrap();
                }
            }),
        )
        .map_err(|e| e.0)
        .unwrap();
    tx.write_all(b"x").unwrap();
    run(&mut h, RunMode::Once).unwrap();
    assert!(h.uv.io_source(hd).is_ok(), "put back after the callback");
    tx.write_all(b"bye").unwrap();
    run(&mut h, RunMode::Default).unwrap();
    assert_eq!(*h.log.borrow(), ["readable@0", "readable@0"]);
    assert_eq!(h.uv.io_sources(), 0);
    assert!(!h.uv.alive());
    // Taken back outside its callback: deregistered and returned.
    let (_tx, rx) = mio::net::UnixStream::pair().unwrap();
    let hd =
        h.uv.io_insert(
            Box::new(rx),
            mio::Interest::READABLE,
            Box::new(|_: &mut Host0, _, _, _| {}),
        )
        .map_err(|e| e.0)
        .unwrap();
    let back = h.uv.io_take(hd).unwrap();
    assert!(back.into_any().downcast::<mio::net::UnixStream>().is_ok());
    assert_eq!(h.uv.io_sources(), 0);
}

/// A real-clock loop holds a deadline timer (Linux) and waits for a
/// timer's deadline through it, and the timer still fires no earlier in
/// loop time than it is due; a virtual-clock loop has none.
#[cfg(target_os = "linux")]
#[test]
fn a_real_clock_waits_for_a_deadline_with_the_deadline_timer() {
    let clock = Rc::new(crate::uv::SystemClock::new());
    let mut real = Host0 {
        uv: Loop::new(clock.clone()).unwrap(),
        log: Rc::default(),
    };
    let t = real.uv.timer_init(|h: &mut Host0| log(h, "t"));
    real.uv.timer_start(t, 3, 0).unwrap();
    let due = real.uv.now() + 3;
    run(&mut real, RunMode::Default).unwrap();
    assert_eq!(real.log.borrow().len(), 1);
    assert!(real.uv.now() >= due, "fired at {} < {due}", real.uv.now());
    assert!(clock.now() >= Duration::from_millis(due));
    assert!(real.uv.io.deadline.is_some());

    let (mut h, _c) = host();
    let t = h.uv.timer_init(|h: &mut Host0| log(h, "t"));
    h.uv.timer_start(t, 3, 0).unwrap();
    run(&mut h, RunMode::Default).unwrap();
    assert_eq!(*h.log.borrow(), ["t@3"]);
    assert!(h.uv.io.deadline.is_none());
}

/// A poll phase woken by I/O before its deadline waits again for the same
/// deadline without arming the deadline timer again (a system call per
/// wake-up in a busy server otherwise), and the timer still fires, no
/// earlier in loop time than it is due.
#[cfg(target_os = "linux")]
#[test]
fn io_wakes_before_a_deadline_do_not_rearm_the_deadline_timer() {
    use std::io::{Read, Write};
    let clock = Rc::new(crate::uv::SystemClock::new());
    let mut h = Host0 {
        uv: Loop::new(clock).unwrap(),
        log: Rc::default(),
    };
    let (mut tx, rx) = mio::net::UnixStream::pair().unwrap();
    let wakes = Rc::new(std::cell::Cell::new(0_u32));
    let w = wakes.clone();
    let io =
        h.uv.io_insert(
            Box::new(rx),
            mio::Interest::READABLE,
            Box::new(move |_: &mut Host0, _, src, _| {
                let rx = src.downcast_mut::<mio::net::UnixStream>().unwrap();
                let mut buf = [0; 64];
                while matches!(rx.read(&mut buf), Ok(n) if n > 0) {}
                w.set(w.get() + 1);
            }),
        )
        .map_err(|e| e.0)
        .unwrap();
    let t = h.uv.timer_init(move |h: &mut Host0| {
        log(h, "t");
        h.uv.io_close(io).unwrap();
    });
    h.uv.timer_start(t, 300, 0).unwrap();
    let due = h.uv.now() + 300;
    // Twenty writes 5 ms apart, all well before the deadline.
    let writer = std::thread::spawn(move || {
        for _ in 0..20 {
            std::thread::sleep(Duration::from_millis(5));
            tx.write_all(b"x").unwrap();
        }
        tx
    });
    run(&mut h, RunMode::Default).unwrap();
    drop(writer.join().unwrap());
    assert_eq!(h.log.borrow().len(), 1);
    assert!(h.uv.now() >= due, "fired at {} < {due}", h.uv.now());
    let arms = h.uv.io.deadline.as_ref().unwrap().arms;
    // Once for the deadline, and at most once more if the timerfd woke the
    // poll a hair before the loop's clock reached it; one per wake-up
    // (at least three) before.
    assert!(
        wakes.get() >= 2,
        "the writes woke the poll {} times",
        wakes.get()
    );
    assert!(
        arms <= 2,
        "armed {arms} times for one deadline ({} I/O wakes)",
        wakes.get()
    );
}

#[test]
fn a_bare_idle_handle_closed_while_active_beside_another_idle() {
    let (mut h, _c) = host();
    let bare = h.uv.idle_init_bare();
    h.uv.watcher_start(bare).unwrap();
    // A second idle with a callback: the multi-watcher snapshot path runs
    // the bare one (nothing) and this one.
    let n = Rc::new(RefCell::new(0));
    let k = n.clone();
    let other = h.uv.idle_init(move |h: &mut Host0| {
        *k.borrow_mut() += 1;
        if *k.borrow() == 2 {
            let me = h.uv.handles.key_at(h.uv.idle[0]);
            let _ = h.uv.watcher_stop(me);
        }
    });
    h.uv.watcher_start(other).unwrap();
    assert!(run(&mut h, RunMode::Once).unwrap());
    assert!(run(&mut h, RunMode::Once).unwrap());
    assert_eq!(*n.borrow(), 2);
    // Closed while active: no longer keeps the loop alive or the poll from
    // waiting, and its close callback runs.
    let closed = Rc::new(RefCell::new(false));
    let c2 = closed.clone();
    h.uv.close(
        bare,
        Some(Box::new(move |_: &mut Host0| *c2.borrow_mut() = true)),
    )
    .unwrap();
    let t = h.uv.timer_init(|h: &mut Host0| log(h, "timer"));
    h.uv.timer_start(t, 100, 0).unwrap();
    assert!(!run(&mut h, RunMode::Default).unwrap());
    assert!(*closed.borrow());
    assert_eq!(*h.log.borrow(), ["timer@100"]);
    assert!(h.uv.watcher_start(bare).is_err());
}

/// Start ids are 32 bits and renumbered before they wrap: timers due
/// together still fire in the order they were started, across the wrap.
#[test]
fn timers_due_together_keep_their_start_order_across_a_renumbering() {
    let (mut h, _c) = host();
    h.uv.timer_counter = u32::MAX - 2;
    for (name, ms) in [
        ("a", 10),
        ("b", 5),
        ("c", 10),
        ("d", 5),
        ("e", 10),
        ("f", 5),
    ] {
        let t = h.uv.timer_init(move |h: &mut Host0| log(h, name));
        h.uv.timer_start(t, ms, 0).unwrap();
    }
    assert!(
        h.uv.timer_counter < 10,
        "renumbered: {}",
        h.uv.timer_counter
    );
    assert!(!run(&mut h, RunMode::Default).unwrap());
    assert_eq!(
        *h.log.borrow(),
        ["b@5", "d@5", "f@5", "a@10", "c@10", "e@10"]
    );
}
