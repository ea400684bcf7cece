//! The README's example: timers, an immediate, ticks and a microtask, in
//! Node's order. Run with `cargo run --release --example hello`.

use timerloop::EventLoop;

fn main() -> Result<(), timerloop::Error> {
    let mut lp = EventLoop::new();
    lp.set_timeout(10, |lp| {
        println!("timeout a at {} ms", lp.now());
        lp.next_tick(|_| println!("  tick queued by a"));
        lp.queue_microtask(|_| println!("  microtask queued by a"));
    });
    lp.set_timeout(10, |_| {
        println!("timeout b (same 10 ms list, after a's ticks)")
    });
    let iv = lp.set_interval(4, |lp| println!("interval at {} ms", lp.now()));
    lp.set_timeout(13, move |lp| -> Result<(), timerloop::TimerError> {
        lp.clear_interval(iv)?;
        println!("cleared the interval");
        Ok(())
    });
    lp.set_immediate(|_| println!("immediate: the check phase comes before the first timer"));
    lp.next_tick(|_| println!("tick from the main body"));
    lp.run()
}
