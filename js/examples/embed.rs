//! An application that owns its QuickJS runtime, context and timerloop
//! `EventLoop`, installs Node's globals on them, runs its own JavaScript
//! and its own Rust timers on the same loop, and reads the program's exit
//! status (`process.exit` stops the loop; it does not end this process).
//!
//! `cargo run -p timerloop-js --example embed`

use rquickjs::{Context, Runtime};
use timerloop::EventLoop;

fn main() {
    let rt = Runtime::new().expect("runtime");
    let ctx = Context::full(&rt).expect("context");
    let host = timerloop_js::install(&ctx, timerloop_js::Options::default()).expect("install");
    let mut lp = EventLoop::new();

    // The application's own JavaScript: a function the Rust side calls.
    host.enter(&mut lp, |ctx| {
        ctx.eval::<(), _>(
            "globalThis.ticks = [];
             globalThis.onTick = (n) => {
               ticks.push(n);
               setTimeout(() => console.log('js saw tick', n), 1);
               if (n === 3) process.exit(5);
             };",
        )
    })
    .expect("script");

    // The application's own timer on the same loop, calling into JavaScript.
    let mut n = 0;
    let h = host.clone();
    lp.set_interval(10, move |lp| {
        n += 1;
        h.callback(lp, |ctx| {
            let f: rquickjs::Function = ctx.globals().get("onTick")?;
            f.call::<_, ()>((n,))
        })
        .map(|_| ())
    });

    let code = host.run(&mut lp);
    let seen: Vec<i32> = ctx.with(|c| c.globals().get("ticks")).expect("ticks");
    println!("exit status {code}, ticks {seen:?}, still running");
    assert_eq!(code, 5);
    assert_eq!(seen, [1, 2, 3]);
}
