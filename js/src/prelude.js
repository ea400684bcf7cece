// The JavaScript side of the host: Node's global objects as thin shells
// over the natives in `host` (installed by the engine). Scheduling, order,
// refresh, ref counting and coercion all happen in timerloop; this file
// only keeps each callback with its arguments until the loop calls
// `dispatch(kind, id)`, and gives the handles Node's shape.
//
// Invariants:
// - every pending timeout, interval and immediate is in `timers` or
//   `immediates` under its id, and nowhere else is a callback kept;
// - `ticks` holds one entry per tick queued in the loop, in the same order
//   (each `host.tick()` queues exactly one loop tick, which shifts one);
// - ids come from one counter shared by Timeout, Immediate and ticks,
//   starting at 2, which is what Node's async ids give a plain script.
(function (host) {
  'use strict';
  const timers = new Map();
  const immediates = new Map();
  const known = new Map(); // ids handed out by [Symbol.toPrimitive]
  const ticks = [];
  const TIMEOUT_MAX = 2 ** 31 - 1;

  const queueMicrotask = globalThis.queueMicrotask;
  const released = new FinalizationRegistry((id) => host.release(id));

  class Timeout {
    constructor(cb, after, args, repeat) {
      // Node's check, for the warning only: the loop coerces the delay.
      if (!(after >= 1 && after <= TIMEOUT_MAX)) {
        if (after > TIMEOUT_MAX) {
          process.emitWarning(after + ' does not fit into a 32-bit signed integer.' +
            '\nTimeout duration was set to 1.', 'TimeoutOverflowWarning');
        }
        after = 1;
      }
      this._idleTimeout = after;
      this._onTimeout = cb;
      this._timerArgs = args;
      this._repeat = repeat ? after : null;
      this._id = host.timer(after, !!repeat);
      timers.set(this._id, this);
      released.register(this, this._id);
    }
    ref() { host.ref(this._id); return this; }
    unref() { host.unref(this._id); return this; }
    hasRef() { return host.hasRef(this._id); }
    // The loop decides what a refresh does to a cleared or fired timer
    // (as Node: a timeout cleared after it fired runs again, empty).
    refresh() {
      if (this._onTimeout !== null) timers.set(this._id, this);
      host.refresh(this._id);
      return this;
    }
    close() { clearTimeout(this); return this; }
    [Symbol.toPrimitive]() {
      known.set(this._id, this);
      return this._id;
    }
  }

  class Immediate {
    constructor(cb, args) {
      this._onImmediate = cb;
      this._argv = args;
      this._destroyed = false;
      this._id = host.immediate();
      immediates.set(this._id, this);
    }
    ref() { if (!this._destroyed) host.refImmediate(this._id); return this; }
    unref() { if (!this._destroyed) host.unrefImmediate(this._id); return this; }
    hasRef() { return !this._destroyed && host.immediateHasRef(this._id); }
  }

  function checkCallback(cb) {
    if (typeof cb !== 'function') {
      const e = new TypeError(
        'The "callback" argument must be of type function. Received ' + describe(cb));
      e.code = 'ERR_INVALID_ARG_TYPE';
      throw e;
    }
  }

  function describe(v) {
    if (v === null || v === undefined) return String(v);
    if (typeof v === 'function') return 'function ' + v.name;
    if (typeof v === 'object') return 'an instance of ' + (v.constructor && v.constructor.name || 'Object');
    return 'type ' + typeof v + ' (' + inspect(v, 0) + ')';
  }

  function setTimeout(cb, after, ...args) {
    checkCallback(cb);
    return new Timeout(cb, after * 1, args, false);
  }
  function setInterval(cb, after, ...args) {
    checkCallback(cb);
    return new Timeout(cb, after * 1, args, true);
  }
  function clearTimeout(timer) {
    if (timer && timer._onTimeout) {
      timer._onTimeout = null;
      unenroll(timer);
      return;
    }
    if (typeof timer === 'number' || typeof timer === 'string') {
      const t = known.get(Number(timer));
      if (t !== undefined) unenroll(t);
    }
  }
  function unenroll(t) {
    timers.delete(t._id);
    known.delete(t._id);
    host.clear(t._id);
  }
  function setImmediate(cb, ...args) {
    checkCallback(cb);
    return new Immediate(cb, args);
  }
  function clearImmediate(im) {
    if (!im || im._destroyed || !(im instanceof Immediate)) return;
    im._destroyed = true;
    im._onImmediate = null;
    immediates.delete(im._id);
    host.clearImmediate(im._id);
  }
  function nextTick(cb, ...args) {
    checkCallback(cb);
    ticks.push([cb, args]);
    host.tick();
  }

  // Called by the loop: 0 a timeout or interval, 1 an immediate, 2 a tick.
  function dispatch(kind, id) {
    if (kind === 0) {
      const t = timers.get(id);
      if (t === undefined || t._onTimeout === null) return;
      // As Node: a fired timeout's id no longer works with clearTimeout.
      if (t._repeat === null) {
        timers.delete(id);
        known.delete(id);
      }
      t._onTimeout.apply(t, t._timerArgs);
    } else if (kind === 1) {
      const im = immediates.get(id);
      if (im === undefined) return;
      immediates.delete(id);
      im._destroyed = true;
      const cb = im._onImmediate;
      im._onImmediate = null;
      cb.apply(im, im._argv);
    } else if (kind === 3) {
      const [cb, path] = io.get(id);
      io.delete(id);
      const r = host.statSync(path);
      if (r[0] !== 'ok') cb(fsError(r, 'stat', path));
      else cb(null, stats(r));
    } else {
      const [cb, args] = ticks.shift();
      cb.apply(undefined, args);
    }
  }

  // UTF-8 by hand (QuickJS has no TextEncoder): enough for Buffer.from,
  // fs.writeSync and TextDecoder on valid text.
  function encodeUtf8(s) {
    const out = [];
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | c >> 6, 0x80 | c & 63);
      else if (c < 0x10000) out.push(0xe0 | c >> 12, 0x80 | c >> 6 & 63, 0x80 | c & 63);
      else out.push(0xf0 | c >> 18, 0x80 | c >> 12 & 63, 0x80 | c >> 6 & 63, 0x80 | c & 63);
    }
    return out;
  }
  function decodeUtf8(b, start = 0, end = b.length) {
    let s = '';
    for (let i = start; i < end;) {
      const c = b[i++];
      let cp;
      if (c < 0x80) cp = c;
      else if (c < 0xe0) cp = (c & 31) << 6 | b[i++] & 63;
      else if (c < 0xf0) cp = (c & 15) << 12 | (b[i++] & 63) << 6 | b[i++] & 63;
      else cp = (c & 7) << 18 | (b[i++] & 63) << 12 | (b[i++] & 63) << 6 | b[i++] & 63;
      s += String.fromCodePoint(cp);
    }
    return s;
  }
  class Buffer extends Uint8Array {
    static from(v, enc) {
      if (typeof v === 'string') {
        if (enc !== undefined && !/^utf-?8$/i.test(enc)) throw new TypeError('tljs: Buffer.from supports utf8 only');
        v = encodeUtf8(v);
      }
      const b = new Buffer(v.length);
      b.set(v);
      return b;
    }
    static isBuffer(b) { return b instanceof Buffer; }
    toString() { return decodeUtf8(this); }
  }
  class TextDecoder {
    decode(b) { return b === undefined ? '' : decodeUtf8(b instanceof ArrayBuffer ? new Uint8Array(b) : b); }
  }

  // fs: readFileSync, writeSync, and stat, whose callback runs as an I/O
  // completion in the loop's poll phase.
  const io = new Map();
  function fsError(r, syscall, path) {
    const e = new Error(r[0] + ': ' + r[1] + ", " + syscall + " '" + path + "'");
    e.code = r[0];
    e.syscall = syscall;
    e.path = path;
    return e;
  }
  function stats(r) {
    const [, size, kind, mtimeMs] = r;
    return {
      size: Number(size), mtimeMs: Number(mtimeMs),
      isFile: () => kind === 'file',
      isDirectory: () => kind === 'dir',
      isSymbolicLink: () => false,
    };
  }
  const fs = {
    writeSync(fd, buf, off = 0, len) {
      if (typeof buf === 'string') {
        host.write(fd, buf);
        return encodeUtf8(buf).length;
      }
      if (len === undefined) len = buf.length - off;
      host.write(fd, decodeUtf8(buf, off, off + len));
      return len;
    },
    readFileSync(path, opts) {
      const r = host.readFile(String(path));
      if (r[0] !== 'ok') throw fsError(r, 'open', path);
      const enc = typeof opts === 'string' ? opts : opts && opts.encoding;
      return enc ? r[1] : Buffer.from(r[1]);
    },
    stat(path, cb) {
      checkCallback(cb);
      io.set(host.stat(), [cb, String(path)]);
    },
    statSync(path) {
      const r = host.statSync(String(path));
      if (r[0] !== 'ok') throw fsError(r, 'stat', path);
      return stats(r);
    },
  };

  // A small util.inspect: strings, numbers, booleans, undefined, null,
  // bigints, symbols, functions, arrays and plain objects, nested 2 deep
  // as Node's default depth; no line breaking past 72 columns, no
  // Map/Set/class-instance details.
  function inspect(v, depth, top) {
    switch (typeof v) {
      case 'string': return top ? v : quote(v);
      case 'number': return Object.is(v, -0) ? '-0' : String(v);
      case 'bigint': return v + 'n';
      case 'undefined': case 'boolean': return String(v);
      case 'symbol': return v.toString();
      case 'function': return v.name ? '[Function: ' + v.name + ']' : '[Function (anonymous)]';
    }
    if (v === null) return 'null';
    if (v instanceof Error) return v.stack ? String(v) + '\n' + v.stack.replace(/\n$/, '') : String(v);
    if (Array.isArray(v)) {
      if (depth > 2) return '[Array]';
      if (v.length === 0) return '[]';
      return '[ ' + v.map((x) => inspect(x, depth + 1, false)).join(', ') + ' ]';
    }
    if (v instanceof Timeout) return 'Timeout { _idleTimeout: ' + v._idleTimeout + ' }';
    if (depth > 2) return '[Object]';
    const keys = Object.keys(v);
    const ctor = v.constructor && v.constructor !== Object ? v.constructor.name + ' ' : '';
    if (keys.length === 0) return ctor + '{}';
    return ctor + '{ ' + keys.map((k) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : "'" + k + "'") + ': ' + inspect(v[k], depth + 1, false)).join(', ') + ' }';
  }
  // Node's choice of quotes: ' unless the string holds one, then ", then `.
  function quote(s) {
    let q = "'";
    if (s.includes("'")) {
      if (!s.includes('"')) q = '"';
      else if (!s.includes('`') && !s.includes('${')) q = '`';
    }
    const esc = s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
    return q + (q === "'" ? esc.replace(/'/g, "\\'") : esc) + q;
  }
  function format(args) {
    return args.map((a) => inspect(a, 0, true)).join(' ') + '\n';
  }

  const console = {
    log: (...a) => host.write(1, format(a)),
    info: (...a) => host.write(1, format(a)),
    error: (...a) => host.write(2, format(a)),
    warn: (...a) => host.write(2, format(a)),
  };

  // process as a small EventEmitter: on/addListener/once/off/
  // removeListener/emit/listenerCount/listeners.
  const events = new Map();
  function listeners(name) {
    return events.get(name) || [];
  }
  function changed(name) {
    if (name === 'uncaughtException') host.catchUncaught(listeners(name).length > 0);
  }
  function on(name, fn) {
    checkCallback(fn);
    events.set(name, [...listeners(name), fn]);
    changed(name);
    return process;
  }
  function off(name, fn) {
    const l = listeners(name);
    const i = l.lastIndexOf(fn);
    if (i >= 0) events.set(name, l.slice(0, i).concat(l.slice(i + 1)));
    changed(name);
    return process;
  }
  function emit(name, ...args) {
    const l = listeners(name);
    for (const fn of l) fn.apply(process, args);
    return l.length > 0;
  }
  let exiting = false;
  function exitCode() {
    return process.exitCode === undefined ? 0 : process.exitCode | 0;
  }
  // Called by the host when the loop is done ('exit') or empty ('beforeExit').
  function emitExit(name, code) {
    if (code !== undefined) process.exitCode = code;
    if (name === 'exit') {
      if (exiting) return;
      exiting = true;
      process._exiting = true;
    }
    emit(name, exitCode());
  }
  let warned = false;
  function writer(fd) {
    return { write(s) { host.write(fd, typeof s === 'string' ? s : decodeUtf8(s)); return true; }, fd };
  }

  const process = {
    argv: host.argv(),
    exitCode: undefined,
    pid: host.pid(),
    _exiting: false,
    nextTick,
    on, addListener: on, off, removeListener: off, emit,
    once(name, fn) {
      checkCallback(fn);
      const once = (...a) => { off(name, once); fn.apply(process, a); };
      return on(name, once);
    },
    listenerCount: (name) => listeners(name).length,
    listeners: (name) => listeners(name).slice(),
    removeAllListeners(name) { events.delete(name); changed(name); return process; },
    stdout: writer(1),
    stderr: writer(2),
    emitWarning(warning, type, code) {
      let w = warning;
      if (typeof w === 'string') {
        w = new Error(warning);
        w.name = (typeof type === 'string' && type) || (type && type.type) || 'Warning';
        if (typeof code === 'string') w.code = code;
      }
      nextTick(() => {
        emit('warning', w);
        host.write(2, '(node:' + process.pid + ') ' + (w.code ? '[' + w.code + '] ' : '') +
          w.name + ': ' + w.message + '\n' +
          (warned ? '' : '(Use `node --trace-warnings ...` to show where the warning was created)\n'));
        warned = true;
      });
    },
    exit(code) {
      if (code !== undefined) process.exitCode = code;
      emitExit('exit');
      host.exit(exitCode());
      // Only in an embedding does host.exit return: the engine's interrupt
      // handler, which now answers yes, ends this script here (uncatchable).
      for (;;);
    },
    hrtime(prev) {
      const ns = host.hrtime();
      let s = Math.floor(ns / 1e9), n = ns - s * 1e9;
      if (prev) { s -= prev[0]; n -= prev[1]; if (n < 0) { s--; n += 1e9; } }
      return [s, n];
    },
    platform: 'linux',
    env: {},
  };
  process.hrtime.bigint = () => BigInt(host.hrtime());

  const g = globalThis;
  Object.assign(g, {
    setTimeout, setInterval, setImmediate, clearTimeout, clearImmediate,
    clearInterval: clearTimeout, console, process,
    performance: { now: () => host.now() },
  });
  g.global = g;
  g.queueMicrotask = queueMicrotask;
  g.Buffer = Buffer;
  if (typeof g.TextDecoder !== 'function') g.TextDecoder = TextDecoder;

  const timersModule = {
    setTimeout, setInterval, setImmediate, clearTimeout,
    clearInterval: clearTimeout, clearImmediate,
  };
  // timers/promises: the basics (no `signal`, no `ref` option, no async
  // iterator for setInterval).
  const timersPromises = {
    setTimeout: (after, value) => new Promise((r) => setTimeout(r, after, value)),
    setImmediate: (value) => new Promise((r) => setImmediate(r, value)),
  };
  timersModule.promises = timersPromises;
  const modules = { timers: timersModule, 'timers/promises': timersPromises, fs };
  function require(name) {
    const key = String(name).replace(/^node:/, '');
    if (Object.prototype.hasOwnProperty.call(modules, key)) return modules[key];
    const e = new Error("Cannot find module '" + name + "'");
    e.code = 'MODULE_NOT_FOUND';
    throw e;
  }
  return { dispatch, require, emitExit, exitCode,
           emitUncaught: (err, origin) => emit('uncaughtException', err, origin),
           emitRejection: (reason, promise) => emit('unhandledRejection', reason, promise),
           emitHandled(promise, id) {
             if (emit('rejectionHandled', promise)) return;
             const w = new Error('Promise rejection was handled asynchronously (rejection id: ' + id + ')');
             w.name = 'PromiseRejectionHandledWarning';
             process.emitWarning(w);
           },
           setExitCode: (code) => { process.exitCode = code; }, inspect: (v) => inspect(v, 0, true) };
})
