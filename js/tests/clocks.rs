//! `Options::clocks`: with `Clocks::Loop` on a virtual loop clock, a
//! program's `Date.now()`, `new Date()`, `Date()`, `performance.now()`
//! and `process.hrtime` move with its timers; with the default
//! `Clocks::Wall` they read the system's clocks, as node's do.

use timerloop::EventLoop;
use timerloop_js::{Clocks, Options, QuickJsHost};

/// Runs `src` on a virtual clock with `clocks`; the program reports
/// through `globalThis.out`, read back as JSON.
fn run(clocks: Clocks, src: &str) -> (i32, String, u64) {
    let host = QuickJsHost::create_with(Options {
        clocks,
        ..Default::default()
    })
    .unwrap();
    let mut lp = EventLoop::with_virtual_clock();
    let status = host.run_main(&mut lp, "clocks.js", src);
    let out: String = host
        .context()
        .with(|c| c.eval("JSON.stringify(globalThis.out)"))
        .unwrap();
    (status, out, lp.now())
}

const MEASURE: &str = "
    const t0 = Date.now(), p0 = performance.now(), h0 = process.hrtime.bigint();
    const d0 = new Date();
    globalThis.out = [];
    setTimeout(() => {
      out.push(Date.now() - t0, performance.now() - p0,
        Number((process.hrtime.bigint() - h0) / 1000000n), new Date() - d0);
      setTimeout(() => out.push(Date.now() - t0), 90000);
    }, 2500);
";

/// Each clock moves by the virtual time between two timers: 2,500 ms,
/// then 92,500 ms in all, with no real time spent.
#[test]
fn loop_clocks_move_with_the_timers() {
    let t = std::time::Instant::now();
    let (status, out, now) = run(Clocks::Loop, MEASURE);
    assert_eq!(status, 0);
    assert_eq!(out, "[2500,2500,2500,2500,92500]");
    assert_eq!(now, 92_500);
    assert!(t.elapsed() < std::time::Duration::from_secs(30));
}

/// The default: the system's clocks, which a virtual clock does not move
/// (a run that takes no real time sees almost none pass).
#[test]
fn wall_clocks_do_not_follow_a_virtual_clock() {
    let (status, out, now) = run(Clocks::Wall, MEASURE);
    assert_eq!(status, 0);
    assert_eq!(now, 92_500);
    let v: Vec<f64> = out
        .trim_matches(['[', ']'])
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(v.iter().all(|&ms| ms < 2_000.0), "{out}");
}

/// `Date` stays `Date`: explicit dates, `Date.parse`, `Date.UTC`,
/// `instanceof`, subclasses, `Date()` as a function (a string of now),
/// and the epoch starting at the system clock's reading.
#[test]
fn date_keeps_its_shape() {
    let src = "
        const before = Date.now();
        class Stamp extends Date { tag() { return 's' } }
        const s = new Stamp();
        setTimeout(() => {
          const d = new Date(2020, 0, 2);
          globalThis.out = [
            d.getFullYear(), d instanceof Date, new Date(0).toISOString(),
            Date.parse('1970-01-01T00:00:01Z'), Date.UTC(1970, 0, 1, 0, 0, 2),
            s instanceof Date, s instanceof Stamp, s.tag(), new Stamp().getTime() - s.getTime(),
            typeof Date(), Date() === new Date(Date.now()).toString(),
            Object.prototype.toString.call(new Date()), Date.length, Date.name,
            Math.abs(before - REAL) < 60000,
          ];
        }, 10);
    ";
    let real = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let src = src.replace("REAL", &real.to_string());
    let (status, out, _) = run(Clocks::Loop, &src);
    assert_eq!(status, 0);
    assert_eq!(
        out,
        "[2020,true,\"1970-01-01T00:00:00.000Z\",1000,2000,true,true,\"s\",10,\"string\",true,\"[object Date]\",7,\"Date\",true]"
    );
}

/// The same program on node: what `Clocks::Loop` must agree with where a
/// real clock passes the same time (a sanity check of the expectations
/// above, not a check of the host). Skipped without node.
#[test]
fn date_shape_matches_node() {
    let Ok(out) = std::process::Command::new("node")
        .args([
            "-e",
            "class Stamp extends Date {}; const s = new Stamp();
             console.log(JSON.stringify([new Date(2020, 0, 2).getFullYear(),
               new Date(0).toISOString(), Date.parse('1970-01-01T00:00:01Z'),
               Date.UTC(1970, 0, 1, 0, 0, 2), s instanceof Date, typeof Date(),
               Object.prototype.toString.call(new Date()), Date.length, Date.name]))",
        ])
        .output()
    else {
        eprintln!("node not found: skipped");
        return;
    };
    let got = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        got.trim(),
        "[2020,\"1970-01-01T00:00:00.000Z\",1000,2000,true,\"string\",\"[object Date]\",7,\"Date\"]"
    );
}

/// A Timeout's `_idleStart` is the loop time its duration counts from, as
/// Node's: when it was made or refreshed; an interval's, when its last run
/// began (the previous one's inside its callback, as Node updates it after).
#[test]
fn idle_start_is_the_loop_time_a_timer_counts_from() {
    let (status, out, now) = run(
        Clocks::Wall,
        "
        globalThis.out = [];
        let n = 0;
        const a = setTimeout(() => out.push(['a', a._idleStart]), 50);
        out.push(a._idleStart);
        const iv = setInterval(function () {
          out.push(['iv', this._idleStart]);
          if (++n === 3) clearInterval(iv);
        }, 10);
        setTimeout(() => {
          out.push(['at 15', iv._idleStart]);
          a.refresh();
          out.push(['refreshed', a._idleStart]);
        }, 15);
        ",
    );
    assert_eq!(status, 0);
    assert_eq!(
        out,
        r#"[0,["iv",0],["at 15",10],["refreshed",15],["iv",10],["iv",20],["a",15]]"#
    );
    assert_eq!(now, 65);
}

/// `Atomics.wait` on the main thread sleeps out its timeout; on a virtual
/// clock the clock moves instead, with no real waiting.
#[test]
fn atomics_wait_moves_a_virtual_clock() {
    let start = std::time::Instant::now();
    let (status, out, now) = run(
        Clocks::Loop,
        "
        const ia = new Int32Array(new SharedArrayBuffer(4));
        const t0 = Date.now();
        globalThis.out = [Atomics.wait(ia, 0, 0, 60000), Date.now() - t0];
        setTimeout(() => out.push(Date.now() - t0), 10);
        ",
    );
    assert_eq!(status, 0);
    assert_eq!(out, r#"["timed-out",60000,60010]"#);
    assert_eq!(now, 60010);
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
}
