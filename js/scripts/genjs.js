#!/usr/bin/env node
// Writes one random Node timer program, plain JavaScript, to stdout:
// `node js/scripts/genjs.js SEED [SIZE]`. The same seed gives the same
// program. Every callback logs a label and may schedule more work, with
// timers, intervals (always cleared), immediates, nextTick, queueMicrotask,
// promise chains, async functions awaiting timers/promises, refresh,
// unref, ref, clear*, AbortController on a promise timer, and
// timers/promises setInterval iterators (always ended). Programs end by
// themselves: every repeating thing has a bounded count.
'use strict';
const seed = Number(process.argv[2] || 1);
const size = Number(process.argv[3] || 25);

// mulberry32: a small seeded PRNG, so programs are reproducible.
let state = seed >>> 0;
function rand() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const chance = (p) => rand() < p;

// Timing. Node's order between two timers armed at different moments
// depends on how late each callback ran, which on a loaded machine varies
// run to run. So every timer is due at its own *slot*, a multiple of SLOT
// ms on the program's virtual clock (the time its callback would run on an
// idle machine), and no two timers share a slot: lateness must exceed a
// slot's width to change the order. (No 0 or 1 ms delays: whether one
// fires before an immediate queued by an immediate depends on whether the
// loop iteration took 1 ms, which node's often does and tljs's not.)
const SLOT = 25;
const used = new Set();
function slotAfter(t, span = 1) {
  // From the main script, not the first slot: node's loop starts late
  // (bootstrap), and its cached loop time is stale by then.
  const base = Math.floor(t / SLOT) + (t === 0 ? 2 : 1);
  for (let tries = 0; tries < 40; tries++) {
    const k = base + Math.floor(rand() * 8);
    let ok = true;
    for (let j = 0; j < span; j++) if (used.has(k + j)) ok = false;
    if (ok) return k;
  }
  let k = base;
  while (used.has(k)) k++;
  return k;
}
function take(t) {
  const k = slotAfter(t);
  used.add(k);
  return k * SLOT;
}
// An interval of `times` runs from `t`: every multiple of its period free.
// (Only from a context on a slot boundary, so that every run is on one.)
function takeInterval(t, times) {
  if (t % SLOT !== 0) return null;
  for (let tries = 0; tries < 40; tries++) {
    const period = (t === 0 ? 2 : 1 + Math.floor(rand() * 3)) * SLOT;
    const first = t + period;
    let ok = true;
    for (let j = 0; j < times; j++) if (used.has((first + j * period) / SLOT)) ok = false;
    if (!ok) continue;
    for (let j = 0; j < times; j++) used.add((first + j * period) / SLOT);
    return { delay: first - t, period, first };
  }
  return null;
}

let budget = size;
let label = 0;
let handles = 0; // names of timers that later code may touch
const out = [];
const line = (depth, s) => out.push('  '.repeat(depth) + s);

// Emits statements scheduling up to `n` things at `depth`; `cx` is the
// context: its virtual time `t`, whether it is a timer callback, whether
// it may await.
function block(depth, n, cx) {
  for (let i = 0; i < n && budget > 0; i++) stmt(depth, cx);
}
// A callback body: a log, then maybe more scheduling.
function body(depth, cx, extra = '') {
  const l = 'L' + label++;
  line(depth, `log('${l}'${extra});`);
  if (depth < 7 && chance(0.6)) block(depth, 1 + Math.floor(rand() * 3), cx);
}
const sub = (cx, o) => Object.assign({}, cx, { timer: false, async: false }, o);

function stmt(depth, cx) {
  budget--;
  const kinds = ['timeout', 'timeout', 'timeout', 'immediate', 'immediate', 'tick', 'micro', 'then',
    'async', 'interval', 'touch', 'ptimeout', 'abort', 'iter'];
  if (cx.async) kinds.push('await', 'await', 'await');
  switch (pick(kinds)) {
    case 'timeout': {
      const h = 'h' + handles++;
      let at, d; // eslint-disable-line prefer-const
      at = take(cx.t);
      d = at - cx.t;
      const withArgs = chance(0.3);
      line(depth, `const ${h} = setTimeout((...args) => {`);
      body(depth + 1, sub(cx, { t: at, timer: true }), withArgs ? ', args' : '');
      line(depth, `}, ${d}${withArgs ? `, 'a${label}', ${label % 7}` : ''});`);
      if (chance(0.5)) line(depth, `hs.push(${h});`);
      break;
    }
    case 'interval': {
      const times = 1 + Math.floor(rand() * 3);
      const iv = takeInterval(cx.t, times);
      if (!iv) break;
      const h = 'h' + handles++;
      line(depth, `let n${h} = 0;`);
      line(depth, `const ${h} = setInterval(() => {`);
      line(depth + 1, `if (++n${h} >= ${times}) clearInterval(${h});`);
      // Its callback runs several times: it only logs, so that what it
      // would schedule does not land on several slots.
      line(depth + 1, `log('L${label++}', n${h});`);
      line(depth, `}, ${iv.period});`);
      break;
    }
    case 'immediate': {
      const h = 'i' + handles++;
      line(depth, `const ${h} = setImmediate(() => {`);
      body(depth + 1, sub(cx, {}));
      line(depth, `});`);
      if (chance(0.15)) line(depth, `clearImmediate(${h});`);
      break;
    }
    case 'tick':
      line(depth, `process.nextTick(() => {`);
      body(depth + 1, sub(cx, { timer: cx.timer }));
      line(depth, `});`);
      break;
    case 'micro':
      line(depth, `queueMicrotask(() => {`);
      body(depth + 1, sub(cx, { timer: cx.timer }));
      line(depth, `});`);
      break;
    case 'then': {
      const k = 1 + Math.floor(rand() * 3);
      let s = 'Promise.resolve()';
      for (let j = 0; j < k; j++) s += `.then(() => log('L${label++}'))`;
      line(depth, s + '.then(() => {');
      body(depth + 1, sub(cx, { timer: cx.timer }));
      line(depth, `});`);
      break;
    }
    case 'async':
      line(depth, `(async () => {`);
      body(depth + 1, sub(cx, { async: true, timer: cx.timer }));
      line(depth, `})();`);
      break;
    case 'await': {
      const w = pick(['null', 'ptimeout', 'immediate', 'timeout', 'tick']);
      if (w === 'null') line(depth, 'await null;');
      if (w === 'immediate') { line(depth, 'await tp.setImmediate();'); cx.timer = false; }
      if (w === 'tick') line(depth, 'await new Promise((r) => process.nextTick(r));');
      if (w === 'ptimeout' || w === 'timeout') {
        const at = take(cx.t);
        line(depth, w === 'ptimeout' ? `await tp.setTimeout(${at - cx.t});`
          : `await new Promise((r) => setTimeout(r, ${at - cx.t}));`);
        cx.t = at;
        cx.timer = true;
      }
      line(depth, `log('L${label++}');`);
      break;
    }
    case 'touch':
      // Unref, ref or clear a timer made earlier (it may have fired, been
      // cleared, or be pending), or ask hasRef. (No refresh: it moves a
      // timer off its slot.)
      line(depth, `if (hs.length) ${pick([
        `clearTimeout(hs[${Math.floor(rand() * 8)} % hs.length]);`,
        `clearTimeout(+hs[${Math.floor(rand() * 8)} % hs.length]);`,
        `hs[${Math.floor(rand() * 8)} % hs.length].unref();`,
        `hs[${Math.floor(rand() * 8)} % hs.length].ref();`,
        `log('hasRef', hs[${Math.floor(rand() * 8)} % hs.length].hasRef());`,
      ])}`);
      break;
    case 'ptimeout': {
      const at = take(cx.t);
      const ref = chance(0.2) ? ', undefined, { ref: false }' : '';
      line(depth, `tp.setTimeout(${at - cx.t}${ref}).then(() => {`);
      body(depth + 1, sub(cx, { t: at, timer: true }));
      line(depth, `});`);
      break;
    }
    case 'abort': {
      const c = 'c' + handles++;
      const a1 = take(cx.t), a2 = take(cx.t);
      line(depth, `const ${c} = new AbortController();`);
      line(depth, `tp.setTimeout(${a1 - cx.t}, 'v', { signal: ${c}.signal }).then((v) => log('L${label++}', v), (e) => log('L${label++}', e.name));`);
      line(depth, `setTimeout(() => { log('L${label++}'); ${c}.abort(); }, ${a2 - cx.t});`);
      break;
    }
    case 'iter': {
      const times = 1 + Math.floor(rand() * 3);
      const iv = takeInterval(cx.t, times);
      if (!iv) break;
      line(depth, `(async () => {`);
      line(depth + 1, `let k = 0;`);
      line(depth + 1, `for await (const v of tp.setInterval(${iv.period}, 'L${label++}')) {`);
      line(depth + 2, `log(v, k);`);
      line(depth + 2, `if (++k >= ${times}) break;`);
      line(depth + 1, `}`);
      line(depth + 1, `log('L${label++}');`);
      line(depth, `})();`);
      break;
    }
  }
}

out.push(`// genjs.js seed ${seed} size ${size}`);
out.push(`const tp = require('timers/promises');`);
out.push(`const hs = [];`);
out.push(`const log = (...a) => console.log(...a);`);
out.push(`process.on('exit', (c) => log('exit', c));`);
// Half the programs start inside a timeout, where a new immediate comes
// before any new timer; at the top of the main script a 1 ms timer and an
// immediate race on node (whether 1 ms passed before the loop starts).
const wrapped = chance(0.5);
if (wrapped) out.push('setTimeout(() => {');
const top = { t: 0, timer: wrapped, async: false };
while (budget > 0) block(wrapped ? 1 : 0, 1, top);
if (wrapped) out.push('}, 0);');
// (The wrapping timeout runs at about 1 ms: slots start at 15.)
process.stdout.write(out.join('\n') + '\n');
