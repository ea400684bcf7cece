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
  // Builtins the timer and tick paths use, captured before user code runs,
  // as Node's internals use primordials: a program that replaces
  // `Map.prototype.get`, `Array.prototype.shift`, `String` or a
  // callback's own `apply` cannot hijack or stop its timers.
  const ReflectApply = Reflect.apply;
  const StringOf = String;
  const { get: MapGet, set: MapSet, delete: MapDelete, has: MapHas } = Map.prototype;
  // A Map whose methods are its own properties (looked up before the
  // prototype's), for this file's private stores.
  function SafeMap() {
    const m = new Map();
    m.get = MapGet;
    m.set = MapSet;
    m.delete = MapDelete;
    m.has = MapHas;
    return m;
  }
  const timers = SafeMap();
  const immediates = SafeMap();
  // Ids handed out by [Symbol.toPrimitive], keyed as Node's
  // `knownTimersById` object is: by the property key, `String(id)`.
  const known = SafeMap();
  // The tick queue: slots of a null-prototype object, from `tickHead` to
  // `tickTail` (no array method, no setter a program defines on
  // `Array.prototype`, on its path).
  const ticks = { __proto__: null };
  let tickHead = 0;
  let tickTail = 0;
  const TIMEOUT_MAX = 2 ** 31 - 1;

  const enqueueMicrotask = globalThis.queueMicrotask;
  const released = new FinalizationRegistry((id) => host.release(id));
  released.register = FinalizationRegistry.prototype.register;

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
      this._destroyed = false;
      this._id = host.timer(after, !!repeat);
      timers.set(this._id, this);
      released.register(this, this._id);
    }
    ref() { host.ref(this._id); return this; }
    unref() { host.unref(this._id); return this; }
    hasRef() { return host.hasRef(this._id); }
    // The loop decides what a refresh does to a cleared or fired timer
    // (as Node: a timeout cleared after it fired runs again, empty). The
    // fields follow Node's: a cleared timer (`_idleTimeout` -1) stays
    // destroyed; a fired one is pending again.
    refresh() {
      if (this._idleTimeout !== -1) {
        if (this._onTimeout !== null) timers.set(this._id, this);
        this._destroyed = false;
      }
      host.refresh(this._id);
      return this;
    }
    close() { clearTimeout(this); return this; }
    [Symbol.toPrimitive]() {
      known.set(StringOf(this._id), this);
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

  function checkCallback(cb, name = 'callback') {
    if (typeof cb !== 'function') {
      const e = new TypeError(
        'The "' + name + '" argument must be of type function. Received ' + describe(cb));
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
  // Node's `clearTimeout`: an object with a callback is cleared, whatever
  // it is; a number or string is looked up as a property key (' 7 ' is
  // not 7).
  function clearTimeout(timer) {
    if (timer && timer._onTimeout) {
      timer._onTimeout = null;
      unenroll(timer);
      return;
    }
    if (typeof timer === 'number' || typeof timer === 'string') {
      const t = known.get(StringOf(timer));
      if (t !== undefined) {
        t._onTimeout = null;
        unenroll(t);
      }
    }
  }
  // Node's `unenroll` (its fields; the loop does the rest). Only this
  // file's Timeouts reach the loop: a look-alike object's `_id` is not an
  // id of ours.
  function unenroll(t) {
    if (!t._destroyed) {
      t._destroyed = true;
      t._idleTimeout = -1;
    }
    if (t instanceof Timeout) {
      timers.delete(t._id);
      known.delete(StringOf(t._id));
      host.clear(t._id);
    }
  }
  function setImmediate(cb, ...args) {
    checkCallback(cb);
    return new Immediate(cb, args);
  }
  // Node's `clearImmediate` writes its fields on whatever it is given: a
  // truthy primitive throws (its module is strict), an object is marked
  // destroyed. Only this file's Immediates reach the loop. (Node also
  // takes one from its count of pending immediates for any such value,
  // and unlinks a Timeout given to it from its timer list: state it then
  // gets wrong, not copied here.)
  function clearImmediate(im) {
    if (!im || im._destroyed) return;
    if ((typeof im !== 'object' && typeof im !== 'function')) {
      throw new TypeError("Cannot create property '_destroyed' on " + typeof im +
        " '" + String(im) + "'");
    }
    im._destroyed = true;
    im._onImmediate = null;
    if (!(im instanceof Immediate)) return;
    immediates.delete(im._id);
    host.clearImmediate(im._id);
  }
  function nextTick(cb, ...args) {
    checkCallback(cb);
    if (process._exiting) return; // as Node's: no ticks once `exit` is emitted
    ticks[tickTail++] = { cb, args };
    host.tick();
  }
  // Node's: the callback checked, an async id taken (its AsyncResource),
  // and the callback called with no `this`.
  function queueMicrotask(callback) {
    checkCallback(callback);
    host.asyncId();
    enqueueMicrotask(() => { callback(); });
  }

  // Called by the loop: 0 a timeout or interval, 1 an immediate, 2 a tick.
  function dispatch(kind, id) {
    if (kind === 0) {
      const t = timers.get(id);
      if (t === undefined || t._onTimeout === null) return;
      const once = t._repeat === null;
      if (once) timers.delete(id);
      try {
        ReflectApply(t._onTimeout, t, t._timerArgs);
      } finally {
        // As Node's `listOnTimeout`: a timeout its callback did not make
        // pending again (refresh) is destroyed, and its id no longer
        // works with clearTimeout; until then (inside the callback) it
        // does.
        if (once && !timers.has(id) && !t._destroyed) {
          t._destroyed = true;
          known.delete(StringOf(id));
        }
      }
    } else if (kind === 1) {
      const im = immediates.get(id);
      if (im === undefined) return;
      immediates.delete(id);
      im._destroyed = true;
      const cb = im._onImmediate;
      im._onImmediate = null;
      ReflectApply(cb, im, im._argv);
    } else if (kind === 3) {
      const { cb, path } = io.get(id);
      io.delete(id);
      const r = host.statSync(path);
      if (r[0] !== 'ok') cb(fsError(r, 'stat', path));
      else cb(null, stats(r));
    } else {
      const { cb, args } = ticks[tickHead];
      delete ticks[tickHead++];
      ReflectApply(cb, undefined, args);
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
  const io = SafeMap();
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
      io.set(host.stat(), { cb, path: StringOf(path) });
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

  // Node's console writes through the stream with a callback of its own,
  // so a console call ends a run of same-callback writes (see `writer`).
  function consoleWrite(fd, args) {
    host.write(fd, format(args));
    streamState[fd].after = null;
  }
  const console = {
    log: (...a) => consoleWrite(1, a),
    info: (...a) => consoleWrite(1, a),
    error: (...a) => consoleWrite(2, a),
    warn: (...a) => consoleWrite(2, a),
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
  // As Node's EventEmitter: the listener is checked, and a `once`
  // listener is a wrapper whose `listener` is the function given, so that
  // removing that function removes it.
  function on(name, fn, prepend = false) {
    checkCallback(fn, 'listener');
    events.set(name, prepend ? [fn, ...listeners(name)] : [...listeners(name), fn]);
    changed(name);
    return process;
  }
  function onceWrapper(name, fn) {
    checkCallback(fn, 'listener');
    const once = (...a) => { off(name, once); ReflectApply(fn, process, a); };
    once.listener = fn;
    return once;
  }
  function off(name, fn) {
    checkCallback(fn, 'listener');
    const l = listeners(name);
    let i = l.length - 1;
    while (i >= 0 && l[i] !== fn && l[i].listener !== fn) i--;
    if (i >= 0) events.set(name, l.slice(0, i).concat(l.slice(i + 1)));
    changed(name);
    return process;
  }
  function emit(name, ...args) {
    const l = listeners(name);
    for (const fn of l) ReflectApply(fn, process, args);
    return l.length > 0;
  }
  let exiting = false;
  // process.exitCode as Node 20 keeps it: the value as set (what the
  // getter returns) and, once validated, its int32 (Node's
  // fields[kExitCode], what the status and a normal end's `exit` event
  // get). An integer string is accepted; anything else that is not a safe
  // integer throws at the assignment.
  let exitCodeValue;
  let exitCodeSet = false;
  let exitCodeInt = 0;
  function setExitCode(code) {
    if (code !== null && code !== undefined) {
      let value = code;
      if (typeof code === 'string' && code !== '' && Number.isNaN(value = Number(code))) value = code;
      validateInteger(value, 'code');
      exitCodeInt = value | 0;
      exitCodeSet = true;
      host.setExitStatus(exitCodeInt);
    } else {
      exitCodeSet = false;
      host.setExitStatus(null);
    }
    exitCodeValue = code;
  }
  function exitCode() {
    return exitCodeSet ? exitCodeInt : 0;
  }
  function validateInteger(value, name) {
    if (typeof value !== 'number') throw argTypeError(name, 'of type number', value);
    if (!Number.isInteger(value)) throw outOfRange(name, 'an integer', value);
    if (value < Number.MIN_SAFE_INTEGER || value > Number.MAX_SAFE_INTEGER) {
      throw outOfRange(name, '>= ' + Number.MIN_SAFE_INTEGER + ' && <= ' + Number.MAX_SAFE_INTEGER, value);
    }
  }
  // Node's ERR_OUT_OF_RANGE (for numbers).
  function outOfRange(name, range, v) {
    let received;
    if (Number.isInteger(v) && Math.abs(v) > 2 ** 32) {
      const s = String(v);
      const start = s[0] === '-' ? 1 : 0;
      let i = s.length, res = '';
      for (; i >= start + 4; i -= 3) res = '_' + s.slice(i - 3, i) + res;
      received = s.slice(0, i) + res;
    } else {
      received = inspect(v, 0);
    }
    const e = new RangeError('The value of "' + name + '" is out of range. It must be ' + range +
      '. Received ' + received);
    e.code = 'ERR_OUT_OF_RANGE';
    return e;
  }
  // Called by the host when the loop is done ('exit') or empty ('beforeExit').
  // An exit already under way keeps its code (Node's uncaught-exception
  // handler sets exitCode only if process._exiting is false).
  function emitExit(name, code) {
    if (name === 'exit' && exiting) return;
    if (code !== undefined) process.exitCode = code;
    if (name === 'exit') {
      exiting = true;
      process._exiting = true;
    }
    emit(name, exitCode());
  }
  let warned = false;
  // process.stdout/stderr as Node's synchronous streams (a file's
  // SyncWriteStream): the chunk is written at once and the callback runs
  // from a tick queued by the write; consecutive writes with the same
  // callback share one tick, as Writable's afterWriteTickInfo does (a
  // console.log, whose own callback is another function, ends the run).
  const streamState = { 1: { after: null }, 2: { after: null } };
  const encodings = /^(utf-?8|ucs-?2|utf-?16le|latin1|binary|base64|base64url|hex|ascii)$/i;
  // A string in a Buffer encoding, as the text its bytes are in UTF-8
  // (exact when they are valid UTF-8; the host writes text).
  function encodeString(str, enc) {
    let bytes;
    if (enc === 'hex') {
      bytes = [];
      for (let i = 0; i + 1 < str.length; i += 2) {
        const pair = str.slice(i, i + 2);
        if (!/^[0-9a-f]{2}$/i.test(pair)) break; // Node stops at the first bad pair
        bytes.push(parseInt(pair, 16));
      }
    } else if (enc === 'base64' || enc === 'base64url') {
      const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
      bytes = [];
      let acc = 0, bits = 0;
      for (const ch of str) {
        let v = abc.indexOf(ch);
        if (v < 0) v = ch === '+' || ch === '-' ? 62 : ch === '/' || ch === '_' ? 63 : -1;
        if (ch === '=') break;
        if (v < 0) continue;
        acc = (acc << 6 | v) & 0xffffff;
        bits += 6;
        if (bits >= 8) { bits -= 8; bytes.push(acc >> bits & 255); }
      }
    } else if (enc === 'latin1' || enc === 'binary' || enc === 'ascii') {
      bytes = Array.from(str, (c) => c.charCodeAt(0) & 255);
    } else if (/^(ucs-?2|utf-?16le)$/.test(enc)) {
      bytes = [];
      for (let i = 0; i < str.length; i++) bytes.push(str.charCodeAt(i) & 255, str.charCodeAt(i) >> 8);
    } else {
      return str;
    }
    return decodeUtf8(bytes);
  }
  function afterWriteTick(state, info) {
    state.after = null;
    for (let n = info.count; n > 0; n--) info.cb(null);
  }
  function writer(fd) {
    const state = streamState[fd];
    function write(chunk, encoding, cb) {
      if (chunk === null) {
        const e = new TypeError('May not write null values to stream');
        e.code = 'ERR_STREAM_NULL_VALUES';
        throw e;
      }
      if (typeof encoding === 'function') {
        cb = encoding;
      } else {
        if (encoding && encoding !== 'buffer' && !(typeof encoding === 'string' && encodings.test(encoding))) {
          const e = new TypeError('Unknown encoding: ' + encoding);
          e.code = 'ERR_UNKNOWN_ENCODING';
          throw e;
        }
        if (typeof cb !== 'function') cb = null;
      }
      let text;
      if (typeof chunk === 'string') {
        text = typeof encoding === 'string' ? encodeString(chunk, encoding.toLowerCase()) : chunk;
      } else if (ArrayBuffer.isView(chunk)) {
        text = decodeUtf8(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      } else {
        throw argTypeError('chunk', 'of type string or an instance of Buffer, TypedArray, or DataView', chunk);
      }
      host.write(fd, text);
      if (cb !== null) {
        if (state.after !== null && state.after.cb === cb) {
          state.after.count++;
        } else {
          const info = state.after = { cb, count: 1 };
          nextTick(afterWriteTick, state, info);
        }
      }
      return true;
    }
    return { write, fd };
  }

  const process = {
    argv: host.argv(),
    pid: host.pid(),
    _exiting: false,
    nextTick,
    on: (name, fn) => on(name, fn),
    addListener: (name, fn) => on(name, fn),
    prependListener: (name, fn) => on(name, fn, true),
    off,
    removeListener: off,
    emit,
    once: (name, fn) => on(name, onceWrapper(name, fn)),
    prependOnceListener: (name, fn) => on(name, onceWrapper(name, fn), true),
    listenerCount: (name) => listeners(name).length,
    listeners: (name) => listeners(name).map((f) => f.listener || f),
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
      // Node's: `process.exit(undefined)` clears exitCode too; the `exit`
      // event gets the value as set (`process.exitCode || 0`).
      if (arguments.length !== 0) process.exitCode = code;
      if (!process._exiting) {
        exiting = true;
        process._exiting = true;
        emit('exit', process.exitCode || 0);
      }
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
  Object.defineProperty(process, 'exitCode', {
    get() { return exitCodeValue; },
    set: setExitCode,
    enumerable: true,
    configurable: false,
  });

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
  // --- Errors with Node's codes -------------------------------------
  function argTypeError(name, what, v) {
    const kind = name.includes('.') ? 'property' : 'argument';
    const e = new TypeError('The "' + name + '" ' + kind + ' must be ' + what + '. Received ' + describe(v));
    e.code = 'ERR_INVALID_ARG_TYPE';
    return e;
  }
  class AbortError extends Error {
    constructor(message = 'The operation was aborted', options = undefined) {
      super(message, options);
      this.code = 'ABORT_ERR';
      this.name = 'AbortError';
    }
  }
  const domCodes = { AbortError: 20, TimeoutError: 23, NotSupportedError: 9, InvalidStateError: 11 };
  class DOMException extends Error {
    constructor(message = '', name = 'Error') {
      super(message);
      Object.defineProperty(this, 'name', { value: String(name), configurable: true, writable: true });
    }
    get code() { return domCodes[this.name] || 0; }
  }

  // --- EventTarget, Event, AbortController, AbortSignal ---------------
  // Dispatch is synchronous, listeners in the order they were added; a
  // listener's exception becomes an uncaught exception from a tick, as in
  // Node's event_target.js.
  class Event {
    constructor(type, init = {}) {
      this.type = String(type);
      this.target = null;
      this.currentTarget = null;
      this.defaultPrevented = false;
      this.cancelable = !!init.cancelable;
      this.bubbles = !!init.bubbles;
      this.timeStamp = host.now();
      this._stop = false;
    }
    get isTrusted() { return this._trusted === true; }
    preventDefault() { if (this.cancelable) this.defaultPrevented = true; }
    stopImmediatePropagation() { this._stop = true; }
    stopPropagation() {}
  }
  const listenersOf = new WeakMap();
  class EventTarget {
    addEventListener(type, fn, options) {
      if (fn == null) return;
      const once = typeof options === 'object' && options !== null && !!options.once;
      let l = listenersOf.get(this);
      if (!l) listenersOf.set(this, l = new Map());
      const list = l.get(type) || [];
      if (list.some((x) => x.fn === fn)) return;
      list.push({ fn, once });
      l.set(type, list);
    }
    removeEventListener(type, fn) {
      const l = listenersOf.get(this);
      const list = l && l.get(type);
      if (!list) return;
      const i = list.findIndex((x) => x.fn === fn);
      if (i >= 0) { list[i].removed = true; list.splice(i, 1); }
    }
    dispatchEvent(event) {
      event.target = event.currentTarget = this;
      const l = listenersOf.get(this);
      const list = (l && l.get(event.type) || []).slice();
      for (const x of list) {
        if (x.removed) continue;
        if (x.once) this.removeEventListener(event.type, x.fn);
        try {
          if (typeof x.fn === 'function') x.fn.call(this, event);
          else if (x.fn && typeof x.fn.handleEvent === 'function') x.fn.handleEvent(event);
        } catch (err) {
          nextTick(() => { throw err; });
        }
        if (event._stop) break;
      }
      event.currentTarget = null;
      return !event.defaultPrevented;
    }
  }
  function handlerProperty(cls, name) {
    const key = Symbol(name);
    Object.defineProperty(cls.prototype, 'on' + name, {
      get() { return this[key] ? this[key].fn : null; },
      set(fn) {
        if (!this[key]) {
          // Added once, at the place of the first assignment (as the DOM's
          // event handler attributes).
          const h = { fn: null };
          this[key] = h;
          this.addEventListener(name, function (e) { if (typeof h.fn === 'function') return h.fn.call(this, e); });
        }
        this[key].fn = typeof fn === 'function' ? fn : null;
      },
      configurable: true,
    });
  }
  let makingSignal = false;
  class AbortSignal extends EventTarget {
    constructor() {
      if (!makingSignal) {
        const e = new TypeError('Illegal constructor');
        e.code = 'ERR_ILLEGAL_CONSTRUCTOR';
        throw e;
      }
      super();
      this._aborted = false;
      this._reason = undefined;
    }
    get aborted() { return this._aborted; }
    get reason() { return this._reason; }
    get [Symbol.toStringTag]() { return 'AbortSignal'; }
    throwIfAborted() { if (this._aborted) throw this._reason; }
    static abort(reason = new DOMException('This operation was aborted', 'AbortError')) {
      const s = newSignal();
      s._aborted = true;
      s._reason = reason;
      return s;
    }
    // Node's timer for it is unrefed: it does not keep the process alive.
    static timeout(delay) {
      if (typeof delay !== 'number') throw argTypeError('delay', 'of type number', delay);
      const s = newSignal();
      setTimeout(() => abortSignal(s, new DOMException('The operation was aborted due to timeout', 'TimeoutError')), delay).unref();
      return s;
    }
    static any(signals) {
      const s = newSignal();
      for (const x of signals) {
        if (x.aborted) { s._aborted = true; s._reason = x.reason; return s; }
      }
      for (const x of signals) x.addEventListener('abort', () => abortSignal(s, x.reason));
      return s;
    }
  }
  handlerProperty(AbortSignal, 'abort');
  function newSignal() {
    makingSignal = true;
    try { return new AbortSignal(); } finally { makingSignal = false; }
  }
  function abortSignal(s, reason) {
    if (s._aborted) return;
    s._aborted = true;
    s._reason = reason;
    const e = new Event('abort');
    e._trusted = true;
    s.dispatchEvent(e);
  }
  class AbortController {
    constructor() { this._signal = newSignal(); }
    get signal() { return this._signal; }
    abort(reason = new DOMException('This operation was aborted', 'AbortError')) {
      abortSignal(this._signal, reason);
    }
  }

  // --- timers/promises, as Node 20's lib/timers/promises.js -------------
  function timerOptions(options, after) {
    if (after !== undefined && typeof after !== 'number') return argTypeError('delay', 'of type number', after);
    if (options == null || typeof options !== 'object') return argTypeError('options', 'of type object', options);
    const { signal, ref = true } = options;
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      return argTypeError('options.signal', 'an instance of AbortSignal', signal);
    }
    if (typeof ref !== 'boolean') return argTypeError('options.ref', 'of type boolean', ref);
    return { signal, ref };
  }
  // The promise for one timeout or immediate: `start(resolve)` makes the
  // handle, `cancel(handle)` clears it on abort. With a signal, the
  // promise is Node's `ret.finally(remove the listener)`, ticks included.
  function timerPromise(options, after, start, cancel) {
    const o = timerOptions(options, after);
    if (o instanceof Error) return Promise.reject(o);
    const { signal, ref } = o;
    if (signal && signal.aborted) return Promise.reject(new AbortError(undefined, { cause: signal.reason }));
    let oncancel;
    const ret = new Promise((resolve, reject) => {
      const handle = start(resolve);
      if (!ref) handle.unref();
      if (signal) {
        oncancel = () => {
          if (handle._destroyed || handle._onTimeout === null) return;
          if (handle._onTimeout !== undefined && handle._repeat === null && !timers.has(handle._id)) return;
          cancel(handle);
          reject(new AbortError(undefined, { cause: signal.reason }));
        };
        signal.addEventListener('abort', oncancel);
      }
    });
    // Node's SafePromisePrototypeFinally, with its extra turns.
    if (oncancel === undefined) return ret;
    return new Promise((a, b) => new Promise((a2, b2) => ret.then(a2, b2))
      .finally(() => signal.removeEventListener('abort', oncancel)).then(a, b));
  }
  async function* intervalIterator(after, value, options = {}) {
    const o = timerOptions(options, after);
    if (o instanceof Error) throw o;
    const { signal, ref } = o;
    if (signal && signal.aborted) throw new AbortError(undefined, { cause: signal.reason });
    let onCancel, interval;
    try {
      let notYielded = 0;
      let callback;
      interval = new Timeout(() => {
        notYielded++;
        if (callback) { callback(); callback = undefined; }
      }, after * 1, [], true);
      if (!ref) interval.unref();
      if (signal) {
        onCancel = () => {
          clearTimeout(interval);
          if (callback) {
            callback(Promise.reject(new AbortError(undefined, { cause: signal.reason })));
            callback = undefined;
          }
        };
        signal.addEventListener('abort', onCancel, { once: true });
      }
      while (!(signal && signal.aborted)) {
        if (notYielded === 0) await new Promise((resolve) => { callback = resolve; });
        for (; notYielded > 0; notYielded--) yield value;
      }
      throw new AbortError(undefined, { cause: signal && signal.reason });
    } finally {
      clearTimeout(interval);
      if (signal) signal.removeEventListener('abort', onCancel);
    }
  }
  const timersPromises = {
    setTimeout: (after, value, options = {}) =>
      timerPromise(options, after, (r) => new Timeout(r, after * 1, [value], false), clearTimeout),
    setImmediate: (value, options = {}) =>
      timerPromise(options, undefined, (r) => new Immediate(r, [value]), clearImmediate),
    setInterval: intervalIterator,
  };
  timersModule.promises = timersPromises;

  // --- util: promisify (with Node's custom symbol), inspect ------------
  const custom = Symbol.for('nodejs.util.promisify.custom');
  function promisify(original) {
    if (typeof original !== 'function') throw argTypeError('original', 'of type function', original);
    if (original[custom]) {
      const fn = original[custom];
      if (typeof fn !== 'function') throw argTypeError('util.promisify.custom', 'of type function', fn);
      return Object.defineProperty(fn, custom, { value: fn, configurable: true });
    }
    function fn(...args) {
      return new Promise((resolve, reject) => {
        original.call(this, ...args, (err, ...values) => (err ? reject(err) : resolve(values[0])));
      });
    }
    Object.setPrototypeOf(fn, Object.getPrototypeOf(original));
    Object.defineProperty(fn, custom, { value: fn, configurable: true });
    return Object.defineProperties(fn, Object.getOwnPropertyDescriptors(original));
  }
  promisify.custom = custom;
  Object.defineProperty(setTimeout, custom, { value: timersPromises.setTimeout, configurable: true });
  Object.defineProperty(setImmediate, custom, { value: timersPromises.setImmediate, configurable: true });
  const util = {
    promisify,
    inspect: (v) => inspect(v, 0, false),
    isDeepStrictEqual: (a, b) => deepEqual(a, b, true),
    types: { isPromise: (p) => p instanceof Promise },
  };

  // --- assert: the common assertions, Node's messages for primitives ----
  class AssertionError extends Error {
    constructor(options) {
      const { message, actual, expected, operator } = options;
      super(message);
      // Node says false for throws/doesNotThrow even with its own text.
      this.generatedMessage = !options.userMessage && options.generated !== false;
      this.code = 'ERR_ASSERTION';
      this.actual = actual;
      this.expected = expected;
      this.operator = operator;
      Object.defineProperty(this, 'name', { value: 'AssertionError', configurable: true, writable: true });
    }
  }
  function fail(actual, expected, operator, generated, message, extra = '') {
    if (message instanceof Error) throw message;
    const userMessage = message !== undefined;
    throw new AssertionError({
      message: userMessage ? String(message) + extra : generated,
      actual, expected, operator, userMessage,
      generated: operator !== 'doesNotThrow' && operator !== 'doesNotReject',
    });
  }
  function deepEqual(a, b, strict) {
    if (strict ? Object.is(a, b) : (a == b || (a !== a && b !== b))) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    if (strict && Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
    if (a instanceof RegExp && b instanceof RegExp) return String(a) === String(b);
    if (a instanceof Map && b instanceof Map) {
      if (a.size !== b.size) return false;
      for (const [k, v] of a) if (!b.has(k) || !deepEqual(v, b.get(k), strict)) return false;
      return true;
    }
    if (a instanceof Set && b instanceof Set) {
      if (a.size !== b.size) return false;
      for (const v of a) if (!b.has(v)) return false;
      return true;
    }
    const ka = Object.keys(a), kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (const k of ka) {
      if (!Object.prototype.hasOwnProperty.call(b, k) || !deepEqual(a[k], b[k], strict)) return false;
    }
    return true;
  }
  const show = (v) => inspect(v, 0, false);
  function checkError(err, expected, operator, message) {
    if (expected === undefined) return;
    if (typeof expected === 'function') {
      if (expected.prototype !== undefined && err instanceof expected) return;
      if (Error.isPrototypeOf(expected) || expected === Error) {
        const got = err && err.constructor && err.constructor.name;
        fail(err, expected, operator, 'The error is expected to be an instance of "' + expected.name +
          '". Received "' + got + '"\n\nError message:\n\n' + (err && err.message), message);
      }
      if (expected.call({}, err) === true) return;
      fail(err, expected, operator, 'The validation function is expected to return "true". Received ' +
        show(expected.call({}, err)), message);
    }
    if (expected instanceof RegExp) {
      if (expected.test(String(err))) return;
      fail(err, expected, operator, 'The input did not match the regular expression ' + String(expected) +
        '. Input:\n\n' + show(String(err)) + '\n', message);
    }
    if (typeof expected === 'object' && expected !== null) {
      for (const k of Object.keys(expected)) {
        const want = expected[k], got = err == null ? undefined : err[k];
        const same = want instanceof RegExp && typeof got === 'string' ? want.test(got) : deepEqual(got, want, true);
        if (!same) {
          fail(err, expected, operator, 'Expected values to be strictly deep-equal:\n\n' + show(got) + ' !== ' + show(want) + '\n', message);
        }
      }
    }
  }
  function missing(kind, expected, message, operator) {
    let m = 'Missing expected ' + kind;
    if (typeof expected === 'function' && expected.name) m += ' (' + expected.name + ')';
    m += typeof message === 'string' ? ': ' + message : '.';
    throw new AssertionError({ message: m, actual: undefined, expected, operator, generated: false });
  }
  function assert(value, message) { assert.ok(value, message); }
  Object.assign(assert, {
    AssertionError,
    ok(value, message) {
      if (!value) {
        fail(value, true, '==', arguments.length === 0 ? 'No value argument passed to `assert.ok()`'
          : 'The expression evaluated to a falsy value:\n\n  assert.ok(' + show(value) + ')\n', message);
      }
    },
    fail(message = 'Failed') {
      if (message instanceof Error) throw message;
      throw new AssertionError({ message, operator: 'fail', userMessage: message !== 'Failed' });
    },
    equal(a, b, message) {
      if (!(a == b || (a !== a && b !== b))) fail(a, b, '==', show(a) + ' == ' + show(b), message);
    },
    notEqual(a, b, message) {
      if (a == b || (a !== a && b !== b)) fail(a, b, '!=', show(a) + ' != ' + show(b), message);
    },
    strictEqual(a, b, message) {
      if (!Object.is(a, b)) {
        fail(a, b, 'strictEqual', 'Expected values to be strictly equal:\n\n' + show(a) + ' !== ' + show(b) + '\n',
          message, '\n\n' + show(a) + ' !== ' + show(b) + '\n');
      }
    },
    notStrictEqual(a, b, message) {
      if (Object.is(a, b)) fail(a, b, 'notStrictEqual', 'Expected "actual" to be strictly unequal to: ' + show(b), message);
    },
    deepEqual(a, b, message) {
      if (!deepEqual(a, b, false)) fail(a, b, 'deepEqual', 'Expected values to be loosely deep-equal:\n\n' + show(a) + '\n\nshould loosely deep-equal\n\n' + show(b), message);
    },
    deepStrictEqual(a, b, message) {
      if (!deepEqual(a, b, true)) fail(a, b, 'deepStrictEqual', 'Expected values to be strictly deep-equal:\n\n' + show(a) + ' !== ' + show(b) + '\n', message);
    },
    notDeepStrictEqual(a, b, message) {
      if (deepEqual(a, b, true)) fail(a, b, 'notDeepStrictEqual', 'Expected "actual" not to be strictly deep-equal to: ' + show(b), message);
    },
    notDeepEqual(a, b, message) {
      if (deepEqual(a, b, false)) fail(a, b, 'notDeepEqual', '"actual" deepEqual "expected"', message);
    },
    match(s, re, message) {
      if (!re.test(s)) fail(s, re, 'match', 'The input did not match the regular expression ' + String(re) + '. Input:\n\n' + show(s) + '\n', message);
    },
    throws(fn, expected, message) {
      if (typeof expected === 'string') { message = expected; expected = undefined; }
      try { fn(); } catch (err) { checkError(err, expected, 'throws', message); return; }
      missing('exception', expected, message, 'throws');
    },
    doesNotThrow(fn, message) {
      try { fn(); } catch (err) {
        fail(err, undefined, 'doesNotThrow', 'Got unwanted exception.\nActual message: "' + (err && err.message) + '"', message);
      }
    },
    async rejects(p, expected, message) {
      if (typeof expected === 'string') { message = expected; expected = undefined; }
      const promise = typeof p === 'function' ? p() : p;
      try { await promise; } catch (err) { checkError(err, expected, 'rejects', message); return; }
      missing('rejection', expected, message, 'rejects');
    },
    async doesNotReject(p, message) {
      const promise = typeof p === 'function' ? p() : p;
      try { await promise; } catch (err) {
        fail(err, undefined, 'doesNotReject', 'Got unwanted rejection.\nActual message: "' + (err && err.message) + '"', message);
      }
    },
  });
  assert.strict = Object.assign(function strict(v, m) { assert.ok(v, m); }, assert, {
    equal: assert.strictEqual, notEqual: assert.notStrictEqual,
    deepEqual: assert.deepStrictEqual, notDeepEqual: assert.notDeepStrictEqual,
  });
  assert.strict.strict = assert.strict;

  Object.assign(g, { AbortController, AbortSignal, EventTarget, Event, DOMException });
  const modules = {
    timers: timersModule, 'timers/promises': timersPromises, fs, util, assert,
    'assert/strict': assert.strict,
  };
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
