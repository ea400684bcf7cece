'use strict';
// Standalone twins of Node v20's benchmark/timers/*.js workloads.
//
//   node bench/node/suite.js WORKLOAD [N]
//   node bench/node/suite.js --list
//
// Prints exactly one line on stdout:  WORKLOAD n=N ops/s=RATE
// N is the benchmark's config value (what Node prints as n=...); RATE is
// ops / seconds, where ops is what the Node benchmark passes to bench.end()
// (equal to N except immediate-breadth4: N/2, immediate-clear: 4N).
// Timing uses process.hrtime.bigint() around the same region Node times.
// See README.md in this directory for the exact specification of each one.

// ---------------------------------------------------------------------------
// Timing helpers (equivalent of common.js bench.start()/bench.end(ops)).

let name = '';
let configN = 0;
let t0 = 0n;
let finished = false;

// SUITE_CPU=1: also the timed region's CPU, split into user and kernel
// time, and its minor page faults, per op (as the Rust twin prints them).
const wantCpu = !!process.env.SUITE_CPU && process.env.SUITE_CPU !== '0';
let cpu0 = null;

function start() {
  if (wantCpu) cpu0 = process.resourceUsage();
  t0 = process.hrtime.bigint();
}

function stop(ops) {
  const t1 = process.hrtime.bigint();
  if (finished) throw new Error('stop() called twice');
  finished = true;
  const secs = Number(t1 - t0) / 1e9;
  let cpu = '';
  if (cpu0) {
    const c = process.resourceUsage();
    const per = (d, k) => (d * k / Math.max(ops, 1));
    cpu = ` user_ns/op=${per(c.userCPUTime - cpu0.userCPUTime, 1e3).toFixed(1)}` +
      ` sys_ns/op=${per(c.systemCPUTime - cpu0.systemCPUTime, 1e3).toFixed(1)}` +
      ` minflt/Mop=${per(c.minorPageFault - cpu0.minorPageFault, 1e6).toFixed(0)}`;
  }
  process.stdout.write(`${name} n=${configN} ops/s=${(ops / secs).toFixed(1)}${cpu}\n`);
}

// Finish and leave right away: whatever is still pending (e.g. 5e6 pooled
// timers in timers-insert-pooled) would only run after the timed region.
function stopAndExit(ops) {
  stop(ops);
  process.exit(0);
}

// For the workloads Node measures up to process 'exit'.
function stopAtExit(ops) {
  process.on('exit', () => stop(ops));
}

function neverCalled() {
  throw new Error('a cancelled timer fired');
}

// ---------------------------------------------------------------------------
// immediate.js (config n = 5e6)

// One immediate pending at a time; each callback schedules the next.
function immediateDepth(n) {
  let count = 0;
  function step() {
    if (++count === n) stopAndExit(n);
    else setImmediate(step);
  }
  start();
  setImmediate(step);
}

// Same, each setImmediate passes one argument (1).
function immediateDepth1(n) {
  let count = 0;
  function step(a) {
    if (++count === n) stopAndExit(n);
    else setImmediate(step, 1);
  }
  start();
  setImmediate(step, 1);
}

// n immediates queued in one synchronous loop, then all run.
function immediateBreadth(n) {
  let count = 0;
  function hit() {
    if (++count === n) stopAndExit(n);
  }
  start();
  for (let i = 0; i < n; i++) setImmediate(hit);
}

function immediateBreadth1(n) {
  let count = 0;
  function hit(a) {
    if (++count === n) stopAndExit(n);
  }
  start();
  for (let i = 0; i < n; i++) setImmediate(hit, 1);
}

// Only n/2 immediates, four arguments each (1, 2, 3, 4); ops = n/2.
function immediateBreadth4(n) {
  const total = n / 2;
  let count = 0;
  function hit(a, b, c, d) {
    if (++count === total) stopAndExit(total);
  }
  start();
  for (let i = 0; i < total; i++) setImmediate(hit, 1, 2, 3, 4);
}

// 4n pairs of setImmediate(cb, 1) + immediate clearImmediate, then one
// sentinel setImmediate(cb, 2); timed until the sentinel runs; ops = 4n.
function immediateClear(n) {
  const total = n * 4;
  function hit(tag) {
    if (tag === 2) stopAndExit(total);
  }
  start();
  for (let i = 0; i < total; i++) clearImmediate(setImmediate(hit, 1));
  setImmediate(hit, 2);
}

// ---------------------------------------------------------------------------
// set-immediate-*.js (timed until process 'exit')

// set-immediate-breadth.js, n = 1e7: n no-op immediates queued in a loop.
function setImmediateBreadth(n) {
  function noop() {}
  stopAtExit(n);
  start();
  for (let i = 0; i < n; i++) setImmediate(noop);
}

// set-immediate-breadth-args.js, n = 5e6: like above, but the i-th call
// passes 6 args if i%3==0, else 3 args if i%2==0, else 1 arg.
function setImmediateBreadthArgs(n) {
  function one(a) {}
  function three(a, b) {}
  function six(a, b, c) {}
  stopAtExit(n);
  start();
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) setImmediate(six, 512, true, null, 512, true, null);
    else if (i % 2 === 0) setImmediate(three, false, 5.1, 512);
    else setImmediate(one, 0);
  }
}

// set-immediate-depth-args.js, n = 5e6: a chain of n immediates. The first
// carries the counter k = n as its only arg; a callback receiving k stops if
// k-1 == 0, otherwise schedules the next with k' = k-1 as first arg and
// 6 args total if k'%3==0, else 3 args if k'%2==0, else 1 arg.
function setImmediateDepthArgs(n) {
  function next(k) {
    if (k % 3 === 0) setImmediate(six, k, true, null, 5.1, null, true);
    else if (k % 2 === 0) setImmediate(three, k, 5.1, true);
    else setImmediate(one, k);
  }
  function six(k, b, c) { if (--k) next(k); }
  function three(k, b) { if (--k) next(k); }
  function one(k) { if (--k) next(k); }
  stopAtExit(n);
  start();
  setImmediate(one, n);
}

// ---------------------------------------------------------------------------
// timers-breadth / timers-breadth-args / timers-depth

// timers-breadth.js, n = 5e6: n setTimeout(cb, 1) in a loop; timed from
// before the loop to the n-th callback.
function timersBreadth(n) {
  let count = 0;
  function hit() {
    if (++count === n) stopAndExit(n);
  }
  start();
  for (let i = 0; i < n; i++) setTimeout(hit, 1);
}

// timers-breadth-args.js, n = 1e6: as timers-breadth, the i-th call passes
// 4 args if i%4==0, else 3 if i%3==0, else 2 if i%2==0, else 1.
function timersBreadthArgs(n) {
  let count = 0;
  function one(a) { if (++count === n) stopAndExit(n); }
  function two(a, b) { if (++count === n) stopAndExit(n); }
  function three(a, b, c) { if (++count === n) stopAndExit(n); }
  function four(a, b, c, d) { if (++count === n) stopAndExit(n); }
  start();
  for (let i = 0; i < n; i++) {
    if (i % 4 === 0) setTimeout(four, 1, 3.14, 1024, true, false);
    else if (i % 3 === 0) setTimeout(three, 1, 512, true, null);
    else if (i % 2 === 0) setTimeout(two, 1, false, 5.1);
    else setTimeout(one, 1, 0);
  }
}

// timers-depth.js, n = 1e3: one 1 ms timeout at a time, each callback
// schedules the next; timed from the first setTimeout to the n-th callback.
function timersDepth(n) {
  let count = 0;
  function step() {
    if (++count === n) stopAndExit(n);
    else setTimeout(step, 1);
  }
  start();
  setTimeout(step, 1);
}

// ---------------------------------------------------------------------------
// insert / cancel (synchronous timed regions)

// timers-insert-pooled.js, n = 5e6: timed: n setTimeout(fresh closure, 1)
// calls (all land in the single 1 ms list). Nothing runs afterwards here.
function timersInsertPooled(n) {
  start();
  for (let i = 0; i < n; i++) setTimeout(() => {}, 1);
  stopAndExit(n);
}

// timers-insert-unpooled.js, n = 1e6: timed: n setTimeout calls, each with
// a distinct duration (a new list each): 1, 2, ..., n ('start') or
// n, n-1, ..., 1 ('end'). Then all are cleared, untimed.
function timersInsertUnpooled(direction) {
  return (n) => {
    const list = [];
    start();
    if (direction === 'start') {
      for (let d = 1; d <= n; d++) list.push(setTimeout(neverCalled, d));
    } else {
      for (let d = n; d > 0; d--) list.push(setTimeout(neverCalled, d));
    }
    stop(n);
    for (let i = 0; i < n; i++) clearTimeout(list[i]);
    process.exit(0);
  };
}

// timers-cancel-pooled.js, n = 5e6: untimed: one extra 1 ms timer then n
// more 1 ms timers (all in the one 1 ms list), then the extra one cleared.
// Timed: clearTimeout of the n timers in insertion order. Like Node's
// benchmark, no array of handles is kept: the list is walked through the
// internal _idlePrev link (which points at the next-newer timer).
function timersCancelPooled(n) {
  const first = setTimeout(() => {}, 1);
  for (let i = 0; i < n; i++) setTimeout(neverCalled, 1);
  let cursor = first._idlePrev;
  clearTimeout(first);
  start();
  for (let i = 0; i < n; i++) {
    const t = cursor;
    cursor = t._idlePrev;
    clearTimeout(t);
  }
  stop(n);
}

// timers-cancel-unpooled.js, n = 1e6: untimed: n timers with durations
// 1..n (in that order, one list each). Timed: clearTimeout of all n in
// creation order ('start') or reverse order ('end').
function timersCancelUnpooled(direction) {
  return (n) => {
    const list = [];
    for (let i = 0; i < n; i++) list.push(setTimeout(neverCalled, i + 1));
    start();
    if (direction === 'start') {
      for (let i = 0; i < n; i++) clearTimeout(list[i]);
    } else {
      for (let i = n - 1; i >= 0; i--) clearTimeout(list[i]);
    }
    stop(n);
  };
}

// ---------------------------------------------------------------------------
// timers-timeout-*.js: timers created untimed; timed = running them.

// timers-timeout-pooled.js, n = 1e7: n setTimeout(cb, 1), alternating two
// callbacks (odd i -> a, even i -> b); timed from after creation to the
// n-th callback.
function timersTimeoutPooled(n) {
  let count = 0;
  function a() { if (++count === n) stopAndExit(n); }
  function b() { if (++count === n) stopAndExit(n); }
  for (let i = 0; i < n; i++) setTimeout(i % 2 ? a : b, 1);
  start();
}

// timers-timeout-unpooled.js, n = 1e6: same, but each timer gets
// .unref().ref() right after creation (untimed). In Node >= 11 this no longer
// gives each timer its own handle; they share the 1 ms list.
function timersTimeoutUnpooled(n) {
  let count = 0;
  function a() { if (++count === n) stopAndExit(n); }
  function b() { if (++count === n) stopAndExit(n); }
  for (let i = 0; i < n; i++) setTimeout(i % 2 ? a : b, 1).unref().ref();
  start();
}

// timers-timeout-nexttick.js, n = 5e4 and 5e6: like timeout-pooled, but each
// timer callback only does process.nextTick(counter); timed until the n-th
// counter() runs. (Node drains nextTicks after every timer callback.)
function timersTimeoutNexttick(n) {
  let count = 0;
  function counter() { if (++count === n) stopAndExit(n); }
  function a() { process.nextTick(counter); }
  function b() { process.nextTick(counter); }
  for (let i = 0; i < n; i++) setTimeout(i % 2 ? a : b, 1);
  start();
}

// ---------------------------------------------------------------------------
// timers-refresh-idle (not in Node's suite; issue 12): the idle-timeout
// server pattern.

const IDLE_CONNS = 10000; // connections, one idle timeout each
const IDLE_MS = 1000; // the idle timeout (all in one list)
const IDLE_EVERY = 1000; // every IDLE_EVERY-th connection has gone idle
const IDLE_SLACK_MS = 10; // past IDLE_MS, so that the idle ones are due
const LINES_PER_ITERATION = 1000; // refreshes per loop iteration

// Blocks the thread (the loop too) for ms milliseconds.
function sleepMs(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// n = 1e7. Untimed: IDLE_CONNS timeouts of IDLE_MS, handles kept; connection
// i (0-based) gets onIdle if i % IDLE_EVERY == 0 (10 of them, the idle
// ones), else onLive, which throws (a refreshed connection must never time
// out); the thread sleeps IDLE_MS + IDLE_SLACK_MS; every live connection is
// refreshed once, in creation order (so the idle ones, due now, are the
// oldest in the list). Start; then one batch of LINES_PER_ITERATION
// refreshes per loop iteration (a setImmediate chain, the first batch in
// the first iteration's check phase; the last batch is n % 1000 if that is
// not 0), each refresh the next live connection's timeout round-robin, in
// creation order. The 10 idle timeouts fire in the first iteration's timers
// phase, inside the timed region. End right after the n-th refresh; the
// run fails unless exactly 10 fired. ops = n (refreshes).
function timersRefreshIdle(n) {
  const live = [];
  let fired = 0;
  const idle = IDLE_CONNS / IDLE_EVERY;
  function onIdle() { fired++; }
  function onLive() {
    throw new Error('a refreshed connection timed out (the run stalled for over a second)');
  }
  for (let i = 0; i < IDLE_CONNS; i++) {
    if (i % IDLE_EVERY === 0) setTimeout(onIdle, IDLE_MS);
    else live.push(setTimeout(onLive, IDLE_MS));
  }
  sleepMs(IDLE_MS + IDLE_SLACK_MS);
  for (let i = 0; i < live.length; i++) live[i].refresh();
  let j = 0;
  let left = n;
  function batch() {
    const k = left < LINES_PER_ITERATION ? left : LINES_PER_ITERATION;
    for (let b = 0; b < k; b++) {
      live[j].refresh();
      if (++j === live.length) j = 0;
    }
    left -= k;
    if (left > 0) {
      setImmediate(batch);
      return;
    }
    stop(n);
    if (fired !== idle) {
      process.stderr.write(`timers-refresh-idle: ${fired} idle timeouts fired, not ${idle}\n`);
      process.exit(1);
    }
    process.exit(0);
  }
  start();
  setImmediate(batch);
}

// ---------------------------------------------------------------------------

const WORKLOADS = [
  ['immediate-depth', 5e6, immediateDepth],
  ['immediate-depth1', 5e6, immediateDepth1],
  ['immediate-breadth', 5e6, immediateBreadth],
  ['immediate-breadth1', 5e6, immediateBreadth1],
  ['immediate-breadth4', 5e6, immediateBreadth4],
  ['immediate-clear', 5e6, immediateClear],
  ['set-immediate-breadth', 1e7, setImmediateBreadth],
  ['set-immediate-breadth-args', 5e6, setImmediateBreadthArgs],
  ['set-immediate-depth-args', 5e6, setImmediateDepthArgs],
  ['timers-breadth', 5e6, timersBreadth],
  ['timers-breadth-args', 1e6, timersBreadthArgs],
  ['timers-depth', 1e3, timersDepth],
  ['timers-insert-pooled', 5e6, timersInsertPooled],
  ['timers-insert-unpooled-start', 1e6, timersInsertUnpooled('start')],
  ['timers-insert-unpooled-end', 1e6, timersInsertUnpooled('end')],
  ['timers-cancel-pooled', 5e6, timersCancelPooled],
  ['timers-cancel-unpooled-start', 1e6, timersCancelUnpooled('start')],
  ['timers-cancel-unpooled-end', 1e6, timersCancelUnpooled('end')],
  ['timers-timeout-pooled', 1e7, timersTimeoutPooled],
  ['timers-timeout-unpooled', 1e6, timersTimeoutUnpooled],
  ['timers-timeout-nexttick-5e4', 5e4, timersTimeoutNexttick],
  ['timers-timeout-nexttick-5e6', 5e6, timersTimeoutNexttick],
  ['timers-refresh-idle', 1e7, timersRefreshIdle],
];

function usage() {
  process.stderr.write('usage: node suite.js WORKLOAD [N] | --list\n');
  process.exit(2);
}

const args = process.argv.slice(2);
if (args[0] === '--list') {
  for (const [w, n] of WORKLOADS) process.stdout.write(`${w} ${n}\n`);
} else {
  if (args.length < 1 || args.length > 2) usage();
  const entry = WORKLOADS.find((w) => w[0] === args[0]);
  if (!entry) {
    process.stderr.write(`unknown workload: ${args[0]}\n`);
    usage();
  }
  let n = entry[1];
  if (args.length === 2) {
    n = Number(args[1]);
    if (!Number.isSafeInteger(n) || n < 1) {
      process.stderr.write(`bad N: ${args[1]}\n`);
      process.exit(2);
    }
    if (entry[0] === 'immediate-breadth4' && n % 2 !== 0) {
      process.stderr.write('immediate-breadth4 needs an even N\n');
      process.exit(2);
    }
  }
  name = entry[0];
  configN = n;
  // Node's benchmark harness calls main() from a process.nextTick() after
  // the script has loaded; do the same.
  process.nextTick(entry[2], n);
}
