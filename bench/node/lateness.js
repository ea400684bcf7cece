'use strict';
// Real-clock timer lateness.
//
//   node bench/node/lateness.js [--samples K]      (K defaults to 200)
//
// Scheme (a Rust twin must do the same):
//  * One timer pending at a time, never several: strictly sequential.
//  * Warm-up: 20 sequential 1 ms timers, not recorded.
//  * Then for D in 1, 10, 100 (in this order), K samples each:
//      t_sched = process.hrtime.bigint() taken immediately before
//                setTimeout(cb, D);
//      in cb:  t_fire = process.hrtime.bigint() as its first statement;
//              lateness_ms = (t_fire - t_sched) / 1e6 - D;
//      the next sample is scheduled from inside cb (right after recording),
//      so it starts from within the timers phase, as a chained timer would.
//  * Per D: sort the K lateness values ascending; pN = sorted[ceil(N/100*K)-1]
//    (nearest rank); print  node lateness delay=D p50=X p99=Y  with X, Y in
//    ms to 3 decimals.
// Runtime with K = 200: about 200 * (1 + 10 + 100) ms plus lateness ~ 23-25 s.

const argv = process.argv.slice(2);
let samples = 200;
const si = argv.indexOf('--samples');
if (si !== -1) samples = Number(argv[si + 1]);
if (!Number.isSafeInteger(samples) || samples < 1) {
  process.stderr.write('bad --samples\n');
  process.exit(2);
}

const DELAYS = [1, 10, 100];
const WARMUP = 20;

function percentile(sorted, p) {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)];
}

// Runs `k` sequential timers of `delay` ms, then calls done(latenesses).
function series(delay, k, done) {
  const out = new Float64Array(k);
  let i = 0;
  let tSched = 0n;
  function fire() {
    const tFire = process.hrtime.bigint();
    out[i++] = Number(tFire - tSched) / 1e6 - delay;
    if (i === k) {
      done(out);
      return;
    }
    tSched = process.hrtime.bigint();
    setTimeout(fire, delay);
  }
  tSched = process.hrtime.bigint();
  setTimeout(fire, delay);
}

function runDelay(idx) {
  if (idx === DELAYS.length) return;
  const d = DELAYS[idx];
  series(d, samples, (vals) => {
    const sorted = Array.from(vals).sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const p99 = percentile(sorted, 99);
    const min = sorted[0];
    process.stdout.write(
      `node lateness delay=${d} p50=${p50.toFixed(3)} p99=${p99.toFixed(3)} min=${min.toFixed(3)}\n`);
    runDelay(idx + 1);
  });
}

series(1, WARMUP, () => runDelay(0));
