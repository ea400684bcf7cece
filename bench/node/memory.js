'use strict';
// Memory cost of pending setTimeout timers.
//
//   node --expose-gc bench/node/memory.js [--same] [--count N]
//
// 1. Pre-fills a plain array with N small integers (so the slot array that
//    later holds the handles is part of the baseline, not of the delta).
// 2. gc() (if exposed), then baseline = process.memoryUsage().
// 3. Creates N pending timers, all sharing one callback function (no
//    per-timer closure): durations are random integers in 1..10000 ms
//    (up to 10000 distinct duration lists), or all 10000 ms with --same
//    (one list). Handles are stored into the pre-filled array.
// 4. gc() (if exposed), then after = process.memoryUsage(), all still in the
//    same synchronous tick, so no timer can have fired.
// 5. Prints: node bytes/timer rss=X heap=Y   ((after - before) / N, 1 decimal)
// 6. Clears every timer and exits.

const argv = process.argv.slice(2);
const same = argv.includes('--same');
let count = 1e6;
const ci = argv.indexOf('--count');
if (ci !== -1) count = Number(argv[ci + 1]);
if (!Number.isSafeInteger(count) || count < 1) {
  process.stderr.write('bad --count\n');
  process.exit(2);
}

const SAME_DELAY = 10000;
const MAX_DELAY = 10000;

function collect() {
  if (typeof globalThis.gc === 'function') {
    globalThis.gc();
    globalThis.gc();
  }
}

function neverCalled() {
  throw new Error('timer fired during the measurement');
}

// Delays are drawn up front so the RNG and the delay array are baseline too.
const delays = new Int32Array(count);
for (let i = 0; i < count; i++) {
  delays[i] = same ? SAME_DELAY : 1 + Math.floor(Math.random() * MAX_DELAY);
}
const handles = [];
for (let i = 0; i < count; i++) handles.push(0);

collect();
const before = process.memoryUsage();

for (let i = 0; i < count; i++) handles[i] = setTimeout(neverCalled, delays[i]);

collect();
const after = process.memoryUsage();

const rss = (after.rss - before.rss) / count;
const heap = (after.heapUsed - before.heapUsed) / count;
process.stdout.write(`node bytes/timer rss=${rss.toFixed(1)} heap=${heap.toFixed(1)}\n`);
if (typeof globalThis.gc !== 'function') {
  process.stderr.write('note: run with --expose-gc for a forced gc before each reading\n');
}

for (let i = 0; i < count; i++) clearTimeout(handles[i]);
process.exit(0);
