//! Hostile input to the async layers (issue 14, item 5).

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use timerloop::{EventLoop, sync::Semaphore};

#[test]
fn keepalive_released_from_another_thread_lets_run_return() {
    let sem = Arc::new(Semaphore::new(1));
    sem.try_acquire(1).unwrap().forget();
    let mut lp = EventLoop::new();
    let mut acq = Box::pin(sem.clone().acquire_owned(1));
    let (tx, rx) = std::sync::mpsc::channel();
    lp.spawn(async move {
        std::future::poll_fn(|_| {
            let mut cx = Context::from_waker(Waker::noop());
            assert!(acq.as_mut().poll(&mut cx).is_pending());
            Poll::Ready(())
        })
        .await;
        tx.send(acq).unwrap();
    });
    let t = std::thread::spawn(move || {
        let acq = rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        drop(acq);
    });
    let t0 = Instant::now();
    lp.run().unwrap();
    assert!(
        t0.elapsed() >= Duration::from_millis(40),
        "{:?}",
        t0.elapsed()
    );
    t.join().unwrap();
}
