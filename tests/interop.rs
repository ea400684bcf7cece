//! The executor-agnostic ecosystem on the loop: what timerloop leaves to
//! other crates (`select`, `join_all`, channels, `Notify`) works unchanged,
//! woken in Node's order by the loop's timers. `docs/guide/tokio.md`
//! points here. Virtual clock throughout, so every time is exact.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use futures_util::future::{self, Either};
use timerloop::time::{self, Instant};
use timerloop::{EventLoop, task};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn now() -> u64 {
    Instant::now().as_millis()
}

/// `futures_util::future::select` races two join handles: the first to
/// finish wins, and the loser keeps running (a `JoinHandle` dropped does
/// not abort its task, as in tokio).
#[test]
fn select_races_join_handles() {
    let mut lp = EventLoop::with_virtual_clock();
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    let (winner, at) = lp
        .block_on(async move {
            let slow = task::spawn({
                let l = l.clone();
                async move {
                    time::sleep(ms(30)).await;
                    l.borrow_mut().push(("slow done", now()));
                    "slow"
                }
            });
            let fast = task::spawn(async {
                time::sleep(ms(10)).await;
                "fast"
            });
            let winner = match future::select(slow, fast).await {
                Either::Left((v, _)) | Either::Right((v, _)) => v.unwrap(),
            };
            (winner, now())
        })
        .unwrap();
    assert_eq!((winner, at), ("fast", 10));
    lp.run().unwrap(); // the loser finishes on its own
    assert_eq!(*log.borrow(), [("slow done", 30)]);
}

/// `join_all` waits for every handle and keeps their order, whatever the
/// order they finish in.
#[test]
fn join_all_keeps_the_order_of_its_futures() {
    let mut lp = EventLoop::with_virtual_clock();
    let (values, at) = lp
        .block_on(async {
            let handles: Vec<_> = [40u64, 10, 30, 20]
                .into_iter()
                .map(|d| {
                    task::spawn(async move {
                        time::sleep(ms(d)).await;
                        (d, now())
                    })
                })
                .collect();
            let values: Vec<_> = future::join_all(handles)
                .await
                .into_iter()
                .map(Result::unwrap)
                .collect();
            (values, now())
        })
        .unwrap();
    assert_eq!(values, [(40, 40), (10, 10), (30, 30), (20, 20)]);
    assert_eq!(at, 40);
}

/// tokio's channels and `Notify` need no tokio runtime: a producer task
/// paced by the loop's sleeps feeds an `mpsc` channel, a `Notify` says it
/// is done, and a `oneshot` carries a reply from a plain timer callback.
#[test]
fn tokio_sync_channels_and_notify() {
    let mut lp = EventLoop::with_virtual_clock();
    let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
    let mut reply_tx = Some(reply_tx);
    lp.set_timeout(25, move |lp| {
        let _ = reply_tx.take().unwrap().send(lp.now());
    });
    let (got, done_at, reply) = lp
        .block_on(async {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let done = Rc::new(tokio::sync::Notify::new());
            let d = done.clone();
            task::spawn(async move {
                for i in 0..3 {
                    time::sleep(ms(5)).await;
                    tx.send((i, now())).unwrap();
                }
                d.notify_one();
            });
            done.notified().await;
            let done_at = now();
            let mut got = Vec::new();
            while let Ok(v) = rx.try_recv() {
                got.push(v);
            }
            (got, done_at, reply_rx.await.unwrap())
        })
        .unwrap();
    assert_eq!(got, [(0, 5), (1, 10), (2, 15)]);
    assert_eq!((done_at, reply), (15, 25));
}

/// A debounce as a future: `timeout` around a channel's `recv` is the
/// select of "a new value" against "quiet for 50 ms". Values at 10, 30 and
/// 45 ms settle to the last of them at 95; the one at 200 settles when the
/// channel closes.
#[test]
fn debounce_with_timeout_over_a_channel() {
    let mut lp = EventLoop::with_virtual_clock();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<&'static str>();
    for (at, v) in [(10u64, "a"), (30, "b"), (45, "c"), (200, "d")] {
        let tx = tx.clone();
        lp.set_timeout(at, move |_| {
            let _ = tx.send(v);
        });
    }
    drop(tx);
    let settled = lp
        .block_on(async move {
            let mut settled = Vec::new();
            let mut last = None;
            loop {
                let next = if last.is_some() {
                    time::timeout(ms(50), rx.recv()).await
                } else {
                    Ok(rx.recv().await)
                };
                match next {
                    Ok(Some(v)) => last = Some(v),
                    Ok(None) => {
                        settled.extend(last.take().map(|v| (v, now())));
                        break;
                    }
                    Err(_elapsed) => settled.push((last.take().unwrap(), now())),
                }
            }
            settled
        })
        .unwrap();
    assert_eq!(settled, [("c", 95), ("d", 200)]);
}

/// tokio's own `select!` and `join!` (its `macros` feature, no runtime)
/// work on the loop: `select!` takes the branch whose timer fires first
/// and drops the other, `join!` waits for both, at their exact times.
#[test]
fn tokio_select_and_join_macros() {
    let mut lp = EventLoop::with_virtual_clock();
    let got = lp
        .block_on(async {
            let first = tokio::select! {
                _ = time::sleep(ms(30)) => "slow",
                _ = time::sleep(ms(10)) => "fast",
            };
            let at_select = now();
            let (a, b) = tokio::join!(
                async {
                    time::sleep(ms(5)).await;
                    now()
                },
                async {
                    time::sleep(ms(20)).await;
                    now()
                }
            );
            (first, at_select, a, b, now())
        })
        .unwrap();
    assert_eq!(got, ("fast", 10, 15, 30, 30));
    assert_eq!(lp.stats().timers, 0, "the losing sleep was dropped");
}
