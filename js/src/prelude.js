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
  const ReflectOwnKeys = Reflect.ownKeys;
  const StringOf = String;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const SymbolToString = Symbol.prototype.toString;
  // Text goes out as UTF-8, which has no lone surrogate: each becomes
  // U+FFFD, as Node writes it (the native takes only well-formed text).
  const ToWellFormed = String.prototype.toWellFormed;
  const hostWrite = host.write;
  // Returns 0, or Node's errno of a write to a pipe whose reader is gone
  // (-32, EPIPE).
  function writeText(fd, s) {
    return hostWrite(fd, ReflectApply(ToWellFormed, s, []));
  }
  // Bytes go out as they are, through the host's byte write (which takes
  // them as a string of one unit a byte). Returns as `writeText`.
  const hostWriteBytes = host.writeBytes;
  function writeBytes(fd, b) {
    return hostWriteBytes(fd, latin1String(b, 0, TypedArrayPrototypeGetLength(b)));
  }
  const { get: MapGet, set: MapSet, delete: MapDelete, has: MapHas, forEach: MapForEach } = Map.prototype;
  // A Map whose methods are its own properties (looked up before the
  // prototype's), for this file's private stores.
  const MapCtor = Map;
  function SafeMap() {
    const m = new MapCtor();
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
  const customInspectSymbol = Symbol.for('nodejs.util.inspect.custom');

  // --- err.stack as V8 shapes it -----------------------------------------
  // QuickJS's own `stack` is the frames alone. V8's is `${name}: ${message}`
  // (Error.prototype.toString) and then the frames, an own property of the
  // error defined before `message`, formatted on its first read (a name or
  // message set after construction shows). QuickJS calls the native slot
  // of `Error.prepareStackTrace` with the call sites whenever it makes an
  // error (and for `Error.captureStackTrace`): that slot holds `onError`,
  // which installs such a property; the frames keep QuickJS's text. The
  // `Error.prepareStackTrace` a program sees is Node's default at first,
  // and a program's own is called with the call sites as V8 calls it, on
  // the first read.
  const ErrorCtor = Error;
  const ErrorToString = Error.prototype.toString;
  const defineProperty = Object.defineProperty;
  const getOwnDescriptor = Object.getOwnPropertyDescriptor;
  const nativeCapture = Error.captureStackTrace;
  const hasOwnProperty = (o, k) => ReflectApply(Object.prototype.hasOwnProperty, o, [k]);
  let userPrepare;
  let capturing = false;
  let captured = null;
  // Each file compiled in the host's CommonJS wrapper (the main script's,
  // each required module's) and how far the wrapper shifts line 1's
  // columns.
  const wrappedFiles = SafeMap();
  function frameText(cs) {
    const file = cs.getFileName();
    const line = cs.getLineNumber();
    let col = cs.getColumnNumber();
    // A position QuickJS puts at the line's start (an interrupt's) is
    // inside the wrapper: column 1, not a negative one.
    if (line === 1 && wrappedFiles.has(file)) {
      const shift = wrappedFiles.get(file);
      col = col > shift ? col - shift : 1;
    }
    const where = (file === null || file === undefined ? '<null>' : file) +
      (line === -1 ? '' : ':' + line + ':' + col);
    // A parse error's own location: no function.
    if (cs.getFunction() === null) return '    at ' + where;
    const name = cs.getFunctionName() || '<anonymous>';
    return '    at ' + name + (cs.isNative() ? ' (native)' : ' (' + where + ')');
  }
  function errorHeader(err) {
    try {
      return ReflectApply(ErrorToString, err, []);
    } catch {
      return '<error>';
    }
  }
  // Node 20's default `Error.prepareStackTrace`.
  function ErrorPrepareStackTrace(error, trace) {
    let s = errorHeader(error);
    for (let i = 0; i < trace.length; i++) s += '\n' + frameText(trace[i]);
    return s;
  }
  userPrepare = ErrorPrepareStackTrace;
  function stackValue(err, callsites) {
    if (userPrepare === ErrorPrepareStackTrace || typeof userPrepare !== 'function') {
      return ErrorPrepareStackTrace(err, callsites);
    }
    return ReflectApply(userPrepare, ErrorCtor, [err, callsites]);
  }
  function setStack(err, value) {
    defineProperty(err, 'stack', { __proto__: null, value, writable: true, enumerable: false, configurable: true });
  }
  function installStack(err, callsites) {
    defineProperty(err, 'stack', { __proto__: null,
      get() {
        const value = stackValue(err, callsites);
        setStack(err, value);
        return value;
      },
      set(value) { setStack(err, value); },
      enumerable: false,
      configurable: true,
    });
  }
  const ownAfterStack = ['message', 'cause', 'errors'];
  // QuickJS also calls it for an exception as it unwinds each frame
  // (until the context has a backtrace to keep, which a null return
  // gives it): an error that has its stack keeps it, as a rethrown one
  // does in V8, and a thrown primitive has none.
  function onError(err, callsites) {
    if (capturing) {
      captured = callsites;
      return null;
    }
    if (err === null || typeof err !== 'object' || hasOwnProperty(err, 'stack')) return null;
    try {
      installStack(err, callsites);
      for (let i = 0; i < ownAfterStack.length; i++) {
        const d = getOwnDescriptor(err, ownAfterStack[i]);
        if (d !== undefined) {
          delete err[ownAfterStack[i]];
          defineProperty(err, ownAfterStack[i], { __proto__: null, ...d });
        }
      }
    } catch {
      // Out of stack or memory: the error keeps QuickJS's stack.
    }
    return null;
  }
  // V8's: the frames above `fn` (above the caller without one); none if
  // `fn` is not on the stack.
  function captureStackTrace(obj, fn) {
    if (obj === null || (typeof obj !== 'object' && typeof obj !== 'function')) {
      return ReflectApply(nativeCapture, ErrorCtor, [obj]);
    }
    capturing = true;
    captured = null;
    try {
      ReflectApply(nativeCapture, ErrorCtor, [obj, typeof fn === 'function' ? fn : captureStackTrace]);
    } finally {
      capturing = false;
    }
    let callsites = captured || [];
    captured = null;
    for (let i = 0; i < callsites.length; i++) {
      if (callsites[i].getFunction() === captureStackTrace) {
        callsites = [];
        break;
      }
    }
    installStack(obj, callsites);
  }
  getOwnDescriptor(Error, 'prepareStackTrace').set.call(Error, onError);
  defineProperty(Error, 'prepareStackTrace', { __proto__: null,
    get() { return userPrepare; },
    set(fn) { userPrepare = fn; },
    enumerable: false,
    configurable: true,
  });
  defineProperty(Error, 'captureStackTrace', { __proto__: null,
    value: captureStackTrace, writable: true, enumerable: false, configurable: true,
  });
  // An error made where `onError` cannot run (out of stack, out of memory)
  // has a null stack in QuickJS: it reads as its header alone.
  const protoStack = getOwnDescriptor(Error.prototype, 'stack');
  if (protoStack && protoStack.get) {
    defineProperty(Error.prototype, 'stack', { __proto__: null,
      get() {
        const v = ReflectApply(protoStack.get, this, []);
        return v === null && this instanceof ErrorCtor ? errorHeader(this) : v;
      },
      set: protoStack.set,
      enumerable: false,
      configurable: true,
    });
  }

  // Promise.any as the spec writes it (the same `then` calls, so the same
  // microtask turns as QuickJS's), so that its AggregateError has V8's
  // message, `All promises were rejected`, and, as V8's, no frames.
  function anyError(errors) {
    const e = new AggregateError(errors, 'All promises were rejected');
    setStack(e, 'AggregateError: All promises were rejected');
    return e;
  }
  defineProperty(Promise, 'any', { __proto__: null,
    value: {
      any(iterable) {
        const C = this;
        let resolve, reject;
        const promise = new C((a, b) => { resolve = a; reject = b; });
        try {
          const promiseResolve = C.resolve;
          if (typeof promiseResolve !== 'function') throw new TypeError('Promise resolve is not a function');
          const errors = [];
          let remaining = 1;
          let index = 0;
          for (const value of iterable) {
            const i = index++;
            errors.push(undefined);
            const next = ReflectApply(promiseResolve, C, [value]);
            let called = false;
            remaining++;
            next.then(resolve, (e) => {
              if (called) return;
              called = true;
              errors[i] = e;
              if (--remaining === 0) reject(anyError(errors));
            });
          }
          if (--remaining === 0) reject(anyError(errors));
        } catch (e) {
          reject(e);
        }
        return promise;
      },
    }.any,
    writable: true,
    enumerable: false,
    configurable: true,
  });

  const enqueueMicrotask = globalThis.queueMicrotask;
  const released = new FinalizationRegistry((id) => host.release(id));
  released.register = FinalizationRegistry.prototype.register;
  released.unregister = FinalizationRegistry.prototype.unregister;

  // Node's symbols on its timer objects (shown by inspect), and the async
  // id of the callback running (Node's executionAsyncId, which a new
  // Timeout or Immediate takes as its trigger id): 1 in the main script,
  // a timer's, immediate's or tick's id in its callback, 0 between them.
  const kRefed = Symbol('refed');
  const kHasPrimitive = Symbol('kHasPrimitive');
  const asyncIdSymbol = Symbol('asyncId');
  const triggerIdSymbol = Symbol('triggerId');
  let executionAsyncId = 1;

  // Node's timer lists as a program sees them through a Timeout's
  // `_idlePrev` and `_idleNext`: one circular list per duration, newest
  // first, a timer linked while it waits. The loop keeps the real lists
  // (and their order); these only mirror the links, and a list shows its
  // links and duration, not Node's `expiry`, `id` or heap position.
  class TimersList {
    constructor(msecs) {
      this._idleNext = this;
      this._idlePrev = this;
      this.msecs = msecs;
    }
    [customInspectSymbol](_, options) {
      return inspectValue(this, { ...options, depth: 0, customInspect: false });
    }
  }
  const timerLists = SafeMap();
  const MathTrunc = Math.trunc;
  // Node's `insert`: `L.append` to the list of the timer's duration,
  // truncated.
  function listAppend(t) {
    if (t._idleNext || t._idlePrev) listRemove(t);
    const msecs = MathTrunc(t._idleTimeout);
    let list = timerLists.get(msecs);
    if (list === undefined) {
      list = new TimersList(msecs);
      timerLists.set(msecs, list);
    }
    t._idleNext = list._idleNext;
    list._idleNext._idlePrev = t;
    t._idlePrev = list;
    list._idleNext = t;
  }
  // Node's `L.remove`. The list stays, even emptied: Node deletes one
  // only after running its last due timer (`listOnTimeout`) and when
  // clearing a refed timer empties it (`unenroll`): `listDrop`.
  function listRemove(t) {
    const next = t._idleNext, prev = t._idlePrev;
    if (next) next._idlePrev = prev;
    if (prev) prev._idleNext = next;
    t._idleNext = null;
    t._idlePrev = null;
  }
  function listDrop(list) {
    if (list !== undefined && list._idleNext === list && timerLists.get(list.msecs) === list) {
      timerLists.delete(list.msecs);
    }
  }
  function noop() {}
  // A one-shot timer whose callback runs: out of `timers` by then, but
  // Node counts it among the active resources until its callback returns.
  let runningTimeout = null, runningTimeoutId = 0;
  // The list whose timer's callback threw: Node's `processTimers`, run
  // again after the uncaughtException listeners, finds it empty and
  // deletes it then (`emitUncaught`).
  let listAfterThrow;

  let idOf;
  class Timeout {
    // The loop's key of its timer.
    #id;
    constructor(cb, after, args, repeat) {
      // Node's check, for the warning only: the loop coerces the delay.
      if (!(after >= 1 && after <= TIMEOUT_MAX)) {
        if (after > TIMEOUT_MAX) {
          process.emitWarning(after + ' does not fit into a 32-bit signed integer.' +
            '\nTimeout duration was set to 1.', 'TimeoutOverflowWarning');
        }
        after = 1;
      }
      // Node's fields, in its order.
      this._idleTimeout = after;
      this._idlePrev = null;
      this._idleNext = null;
      this._idleStart = null;
      this._onTimeout = cb;
      this._timerArgs = args;
      this._repeat = repeat ? after : null;
      this._destroyed = false;
      this[kRefed] = true;
      this[kHasPrimitive] = false;
      const id = this.#id = host.timer(after, !!repeat);
      // The loop's key is the async id, until a refresh of a fired
      // timeout gives it a new one (`refresh`).
      this[asyncIdSymbol] = id;
      this[triggerIdSymbol] = executionAsyncId;
      this._idleStart = host.timerStart(id);
      listAppend(this);
      timers.set(id, this);
      released.register(this, id);
    }
    static {
      idOf = (t) => t.#id;
    }
    // The loop decides what a refresh does to a cleared or fired timer.
    // The fields follow Node's: a cleared timer (`_idleTimeout` -1) stays
    // destroyed; a fired one is pending again, and one cleared after it
    // fired (`_onTimeout` null, see `unenroll`) is pending again with no
    // callback: it keeps the loop alive until it is due, as in Node.
    // Pending, it is held in `timers` (Node's list holds it), so the
    // engine does not collect it and release it early.
    refresh() {
      const id = this.#id;
      host.refresh(id);
      if (this._idleTimeout !== -1) {
        timers.set(id, this);
        // Node's `insertGuarded`: a fired timeout made pending again is a
        // new async resource, with the next id (what `+t` reads) and the
        // running callback's as its trigger; the loop's timer keeps its
        // key.
        if (this._destroyed) {
          this[asyncIdSymbol] = host.asyncId();
          this[triggerIdSymbol] = executionAsyncId;
        }
        this._destroyed = false;
        this._idleStart = host.timerStart(id);
        listAppend(this);
      }
      return this;
    }
    unref() {
      this[kRefed] = false;
      host.unref(this.#id);
      return this;
    }
    ref() {
      this[kRefed] = true;
      host.ref(this.#id);
      return this;
    }
    hasRef() { return host.hasRef(this.#id); }
    close() { clearTimeout(this); return this; }
    // Node's: shown at depth 0 (its links are lists and other timers).
    [customInspectSymbol](_, options) {
      return inspectValue(this, { ...options, depth: 0, customInspect: false });
    }
    [Symbol.dispose]() { clearTimeout(this); }
    // Node's: the first conversion makes the id a key for clearTimeout,
    // later ones do not (after a fire or clear took that key away, and
    // for the new id a refresh of a fired timeout takes).
    [Symbol.toPrimitive]() {
      const id = this[asyncIdSymbol];
      if (!this[kHasPrimitive]) {
        this[kHasPrimitive] = true;
        known.set(StringOf(id), this);
      }
      return id;
    }
  }

  // Node's immediate queue as a program sees it through `_idleNext` and
  // `_idlePrev` (the loop keeps the real one): an immediate is appended
  // when made and unlinked when cleared; the queue is cut loose when its
  // first immediate runs (Node's `processImmediate` empties it before
  // running it, and the immediates it ran keep their links).
  const immediateQueue = { head: null, tail: null };
  let immediateIdOf;
  class Immediate {
    #id;
    constructor(cb, args) {
      this._idleNext = null;
      this._idlePrev = null;
      this._onImmediate = cb;
      this._argv = args;
      this._destroyed = false;
      this[kRefed] = true;
      const id = this.#id = host.immediate();
      this[asyncIdSymbol] = id;
      this[triggerIdSymbol] = executionAsyncId;
      const q = immediateQueue;
      if (q.head === null) {
        q.head = this;
      } else {
        q.tail._idleNext = this;
        this._idlePrev = q.tail;
      }
      q.tail = this;
      immediates.set(id, this);
    }
    static {
      immediateIdOf = (im) => im.#id;
    }
    ref() {
      if (this[kRefed] === false) {
        this[kRefed] = true;
        host.refImmediate(this.#id);
      }
      return this;
    }
    unref() {
      if (this[kRefed] === true) {
        this[kRefed] = false;
        host.unrefImmediate(this.#id);
      }
      return this;
    }
    hasRef() { return !!this[kRefed]; }
    [Symbol.dispose]() { clearImmediate(this); }
  }
  // Node's `immediateQueue.remove`: `L.remove`, the ends moved first.
  function immediateUnlink(im) {
    const q = immediateQueue;
    if (im === q.head) q.head = im._idleNext;
    if (im === q.tail) q.tail = im._idlePrev;
    listRemove(im);
  }

  // A Node internal error (NodeError): its code, and a stack and
  // toString that say `Name [CODE]: message`, as Node's (the name itself
  // stays the constructor's).
  function coded(e, code) {
    e.code = code;
    const name = e.name;
    defineProperty(e, 'name', { __proto__: null, value: `${name} [${code}]`, writable: true, configurable: true });
    void e.stack; // the header is made on the first read
    delete e.name;
    defineProperty(e, 'toString', { __proto__: null,
      value() { return `${this.name} [${code}]: ${this.message}`; },
      writable: true,
      configurable: true,
    });
    return e;
  }
  function checkCallback(cb, name = 'callback') {
    if (typeof cb !== 'function') {
      const e = new TypeError(
        'The "' + name + '" argument must be of type function. Received ' + describe(cb));
      coded(e, 'ERR_INVALID_ARG_TYPE');
      throw e;
    }
  }

  // Node's `determineSpecificType` (v20.20), for ERR_INVALID_ARG_TYPE
  // messages.
  function describe(value) {
    if (value === null) return 'null';
    if (value === undefined) return 'undefined';
    const type = typeof value;
    switch (type) {
      case 'bigint':
        return 'type bigint (' + value + 'n)';
      case 'number':
        if (value === 0) return 1 / value === -Infinity ? 'type number (-0)' : 'type number (0)';
        if (value !== value) return 'type number (NaN)';
        if (value === Infinity) return 'type number (Infinity)';
        if (value === -Infinity) return 'type number (-Infinity)';
        return 'type number (' + value + ')';
      case 'boolean':
        return value ? 'type boolean (true)' : 'type boolean (false)';
      case 'symbol':
        return 'type symbol (' + StringOf(value) + ')';
      case 'function':
        return 'function ' + value.name;
      case 'object':
        if (value.constructor && 'name' in value.constructor) {
          return 'an instance of ' + value.constructor.name;
        }
        return inspectValue(value, { depth: -1 });
      case 'string':
        if (value.length > 28) value = value.slice(0, 25) + '...';
        if (value.indexOf("'") === -1) return "type string ('" + value + "')";
        return 'type string (' + JSON.stringify(value) + ')';
      default:
        value = inspectValue(value, { colors: false });
        if (value.length > 28) value = value.slice(0, 25) + '...';
        return 'type ' + type + ' (' + value + ')';
    }
  }

  // Node's: `_timerArgs` (and an immediate's `_argv`) is undefined when
  // there are no arguments for the callback.
  function setTimeout(cb, after, ...args) {
    checkCallback(cb);
    return new Timeout(cb, after * 1, args.length === 0 ? undefined : args, false);
  }
  function setInterval(cb, after, ...args) {
    checkCallback(cb);
    return new Timeout(cb, after * 1, args.length === 0 ? undefined : args, true);
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
  // A timeout that fired (or was cleared) is left as it is, as Node's
  // `unenroll` leaves it: its callback is gone (`_onTimeout`), its
  // duration stays, so a refresh lists it again with no callback.
  function unenroll(t) {
    if (t._destroyed) return;
    t._destroyed = true;
    if (t[kHasPrimitive]) known.delete(StringOf(t[asyncIdSymbol]));
    listRemove(t);
    if (t[kRefed]) listDrop(timerLists.get(MathTrunc(t._idleTimeout)));
    if (t instanceof Timeout) {
      const id = idOf(t);
      timers.delete(id);
      host.clear(id);
    } else {
      dropEnrolled(t);
    }
    t._idleTimeout = -1;
  }
  // Node's deprecated timers API (lib/timers.js): any object made a timer
  // by `enroll` (its duration), listed by `active` (refed) or
  // `_unrefActive`, taken off by `unenroll` (or clearTimeout, with an
  // `_onTimeout`), whose `_onTimeout()` runs when it is due. Each object
  // gets a loop timer of its own, made on its first listing (and again
  // for a new duration), freed with the object.
  const enrolled = new WeakMap();
  // The object's loop timer, cleared and freed: a later listing makes
  // another.
  function dropEnrolled(item) {
    const e = enrolled.get(item);
    if (e === undefined) return;
    enrolled.delete(item);
    released.unregister(e);
    timers.delete(e.id);
    host.clear(e.id);
    host.release(e.id);
  }
  function getTimerDuration(msecs, name) {
    if (typeof msecs !== 'number') throw argTypeError(name, 'of type number', msecs);
    if (msecs < 0 || !Number.isFinite(msecs)) throw outOfRange(name, 'a non-negative finite number', msecs);
    if (msecs > TIMEOUT_MAX) {
      process.emitWarning(`${msecs} does not fit into a 32-bit signed integer.` +
        `\nTimer duration was truncated to ${TIMEOUT_MAX}.`, 'TimeoutOverflowWarning');
      return TIMEOUT_MAX;
    }
    return msecs;
  }
  function enroll(item, msecs) {
    msecs = getTimerDuration(msecs, 'msecs');
    if (item._idleNext) unenroll(item);
    item._idleNext = item;
    item._idlePrev = item;
    item._idleTimeout = msecs;
  }
  // Node's `insertGuarded`.
  function insertGuarded(item, refed) {
    const msecs = item._idleTimeout;
    if (msecs < 0 || msecs === undefined) return;
    let e = enrolled.get(item);
    if (e !== undefined && e.msecs !== msecs) {
      // The loop's timer keeps its duration: a new one for a new duration.
      dropEnrolled(item);
      e = undefined;
    }
    let made = false;
    if (e === undefined) {
      e = { id: host.timer(msecs, false), msecs };
      enrolled.set(item, e);
      released.register(item, e.id, e);
      made = true;
    } else {
      host.refresh(e.id);
    }
    if (refed) host.ref(e.id);
    else host.unref(e.id);
    timers.set(e.id, item);
    item._idleStart = host.timerStart(e.id);
    listAppend(item);
    if (item._destroyed || !item[asyncIdSymbol]) {
      item._destroyed = false;
      item[asyncIdSymbol] = made ? e.id : host.asyncId();
      item[triggerIdSymbol] = executionAsyncId;
    }
    item[kRefed] = refed;
  }
  // Node's `deprecate` (also util.deprecate): a warning the first time,
  // once per code.
  const codesWarned = new Set();
  function deprecate(fn, msg, code) {
    if (code !== undefined && typeof code !== 'string') throw argTypeError('code', 'of type string', code);
    let warned = false;
    function deprecated(...args) {
      if (!process.noDeprecation && !warned) {
        warned = true;
        if (code === undefined) {
          process.emitWarning(msg, 'DeprecationWarning', deprecated);
        } else if (!codesWarned.has(code)) {
          codesWarned.add(code);
          process.emitWarning(msg, 'DeprecationWarning', code, deprecated);
        }
      }
      if (new.target) return Reflect.construct(fn, args, new.target);
      return ReflectApply(fn, this, args);
    }
    Object.setPrototypeOf(deprecated, fn);
    if (fn.prototype) deprecated.prototype = fn.prototype;
    return deprecated;
  }
  function setImmediate(cb, ...args) {
    checkCallback(cb);
    return new Immediate(cb, args.length === 0 ? undefined : args);
  }
  // Node's own function (it clears as clearTimeout does).
  function clearInterval(timer) {
    clearTimeout(timer);
  }
  // Node's declared parameters (callback, after, arg1, arg2, arg3).
  Object.defineProperty(setTimeout, 'length', { __proto__: null, value: 5 });
  Object.defineProperty(setInterval, 'length', { __proto__: null, value: 5 });
  Object.defineProperty(setImmediate, 'length', { __proto__: null, value: 4 });
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
    if (im[kRefed] !== undefined) im[kRefed] = null;
    im._onImmediate = null;
    if (!(im instanceof Immediate)) return;
    immediateUnlink(im);
    const id = immediateIdOf(im);
    immediates.delete(id);
    host.clearImmediate(id);
  }
  function nextTick(cb, ...args) {
    checkCallback(cb);
    if (process._exiting) return; // as Node's: no ticks once `exit` is emitted
    const id = host.tick();
    ticks[tickTail++] = { cb, args, id };
  }
  // Node's: the callback checked, an async id taken (its AsyncResource),
  // and the callback called with no `this`.
  // The callback runs in its resource's scope (executionAsyncId).
  function queueMicrotask(callback) {
    checkCallback(callback);
    const id = host.asyncId();
    enqueueMicrotask(() => {
      const outer = executionAsyncId;
      executionAsyncId = id;
      try {
        callback();
      } finally {
        executionAsyncId = outer;
      }
    });
  }

  // Called by the loop: 0 a timeout or interval, 1 an immediate, 2 a tick.
  function dispatch(kind, id) {
    if (kind === 0) {
      const t = timers.get(id);
      if (t === undefined) return;
      const list = timerLists.get(MathTrunc(t._idleTimeout));
      listRemove(t);
      if (!t._onTimeout) {
        listDrop(list);
        // Due with no callback (cleared after it fired, then refreshed):
        // Node's `listOnTimeout` marks it destroyed, forgets its id as a
        // key for clearTimeout, and calls nothing.
        timers.delete(id);
        t._destroyed = true;
        known.delete(StringOf(t[asyncIdSymbol]));
        return;
      }
      const once = !t._repeat;
      if (once) timers.delete(id);
      // An interval's next run counts from the loop's time before its
      // callback (Node's `start`), which the loop has noted by now.
      const start = once ? 0 : host.timerStart(id);
      executionAsyncId = t[asyncIdSymbol];
      listAfterThrow = list;
      if (once) {
        runningTimeout = t;
        runningTimeoutId = id;
      }
      try {
        const args = t._timerArgs;
        ReflectApply(t._onTimeout, t, args === undefined ? noArgs : args);
        listAfterThrow = undefined;
      } finally {
        runningTimeout = null;
        // As Node's `listOnTimeout`: an interval not cleared is listed
        // again from `start`; a timeout its callback did not list again
        // (refresh, `active`) is destroyed, and its id no longer works
        // with clearTimeout; until then (inside the callback) it does.
        // (A Timeout repeats as the loop made it; an enrolled object as
        // its `_repeat` says after its callback, as Node reads it.)
        const timeout = t instanceof Timeout;
        if (timeout ? !once : t._repeat) {
          if (t._idleTimeout !== -1) {
            t._idleTimeout = t._repeat;
            if (timeout) {
              t._idleStart = start;
              listAppend(t);
            } else {
              // Its one-shot loop timer armed again, from now (Node's
              // counts from before the callback).
              insertGuarded(t, t[kRefed] !== false);
            }
          }
        } else if (!t._idleNext && !t._idlePrev && !t._destroyed) {
          t._destroyed = true;
          known.delete(StringOf(t[asyncIdSymbol]));
          if (!timeout) timers.delete(id);
        }
      }
      listDrop(list);
      executionAsyncId = 0;
    } else if (kind === 1) {
      const im = immediates.get(id);
      if (im === undefined) return;
      immediates.delete(id);
      // The first of a batch: Node empties its queue before running it.
      if (immediateQueue.head === im) immediateQueue.head = immediateQueue.tail = null;
      im._destroyed = true;
      im[kRefed] = null;
      executionAsyncId = im[asyncIdSymbol];
      try {
        const argv = im._argv;
        ReflectApply(im._onImmediate, im, argv === undefined ? noArgs : argv);
      } finally {
        im._onImmediate = null;
      }
      executionAsyncId = 0;
    } else if (kind === 4) {
      signalArrived(id);
    } else if (kind === 3) {
      const { cb, path } = io.get(id);
      const r = host.statSync(path);
      executionAsyncId = id;
      // The request is active until its callback returns (Node's
      // FSReqCallback, which getActiveResourcesInfo lists then).
      try {
        if (r[0] !== 'ok') cb(fsError(r, 'stat', path));
        else cb(null, stats(r));
      } finally {
        io.delete(id);
      }
      executionAsyncId = 0;
    } else {
      const { cb, args, id: tickId } = ticks[tickHead];
      delete ticks[tickHead++];
      executionAsyncId = tickId;
      ReflectApply(cb, undefined, args);
      executionAsyncId = 0;
    }
  }
  // A callback's arguments when it has none (never written to).
  const noArgs = Object.freeze([]);

  // Builtins Buffer, TextDecoder and the rest of this file use (see
  // "Builtins EventTarget ..." below), captured before user code runs.
  const kEmptyObject = Object.freeze({ __proto__: null });
  const ObjectFreeze = Object.freeze;
  const ObjectSetPrototypeOf = Object.setPrototypeOf;
  const ObjectAssign = Object.assign;
  const ObjectDefineProperties = Object.defineProperties;
  const ObjectGetOwnPropertyDescriptors = Object.getOwnPropertyDescriptors;
  const ObjectValues = Object.values;
  const ArrayIsArray = Array.isArray;
  const ArrayPush = Array.prototype.push;
  const ArrayShift = Array.prototype.shift;
  const ArrayPop = Array.prototype.pop;
  const NumberIsInteger = Number.isInteger;
  const NumberMAX_SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

  // --- Buffer and TextDecoder -----------------------------------------
  // Node 20's Buffer, ported line for line from lib/buffer.js and
  // lib/internal/buffer.js, and its TextDecoder (lib/internal/encoding.js
  // with ICU's decoders for UTF-8, UTF-16 and windows-1252). Node's C++
  // (src/node_buffer.cc, string_bytes.cc: the `*Slice` and `*Write`
  // methods, fill, indexOf, compare, byteLengthUtf8) stands here on the
  // engine's natives where they give the same bytes (Uint8Array's toHex,
  // toBase64, setFromHex and setFromBase64, btoa, escape and the URI
  // codecs, which make and check UTF-8), and on JavaScript where they do
  // not: a string with units above U+00FF (Node takes each unit's low
  // byte), ill-formed UTF-8, base64 only Node's legacy decoder reads.
  // Node's 8 KiB pool is not kept: each Buffer has an ArrayBuffer of its
  // own (`buf.buffer`, `byteOffset` and `parent` tell).
  const FunctionCall = Function.prototype.call;
  const FunctionBind = Function.prototype.bind;
  const uncurryThis = (fn) => ReflectApply(FunctionBind, FunctionCall, [fn]);
  const StringFromCharCode = String.fromCharCode;
  const StringPrototypeCharCodeAt = uncurryThis(String.prototype.charCodeAt);
  const StringPrototypeSlice = uncurryThis(String.prototype.slice);
  const StringPrototypeToLowerCase = uncurryThis(String.prototype.toLowerCase);
  const StringPrototypeToWellFormed = uncurryThis(String.prototype.toWellFormed);
  const StringPrototypeTrim = uncurryThis(String.prototype.trim);
  const RegExpPrototypeExec = uncurryThis(RegExp.prototype.exec);
  const RegExpPrototypeSymbolReplace = uncurryThis(RegExp.prototype[Symbol.replace]);
  const ArrayPrototypeJoin = uncurryThis(Array.prototype.join);
  const NumberIsNaN = Number.isNaN;
  const ArrayFrom = Array.from;
  const MathMin = Math.min;
  const MathFloor = Math.floor;
  const BigIntCtor = BigInt;
  const NumberCtor = Number;
  const Uint8ArrayCtor = Uint8Array;
  const Uint16ArrayCtor = Uint16Array;
  const Uint32ArrayCtor = Uint32Array;
  const Float32ArrayCtor = Float32Array;
  const Float64ArrayCtor = Float64Array;
  const ArrayBufferIsView = ArrayBuffer.isView;
  const TypedArrayPrototype = ObjectGetPrototypeOf(Uint8Array.prototype);
  const typedArrayGetter = (key) => uncurryThis(getOwnDescriptor(TypedArrayPrototype, key).get);
  const TypedArrayPrototypeGetBuffer = typedArrayGetter('buffer');
  const TypedArrayPrototypeGetByteOffset = typedArrayGetter('byteOffset');
  const TypedArrayPrototypeGetByteLength = typedArrayGetter('byteLength');
  const TypedArrayPrototypeGetLength = typedArrayGetter('length');
  const TypedArrayPrototypeGetSymbolToStringTag = typedArrayGetter(Symbol.toStringTag);
  const TypedArrayPrototypeSet = uncurryThis(TypedArrayPrototype.set);
  const TypedArrayPrototypeFill = uncurryThis(TypedArrayPrototype.fill);
  const TypedArrayPrototypeSlice = uncurryThis(TypedArrayPrototype.slice);
  const TypedArrayPrototypeCopyWithin = uncurryThis(TypedArrayPrototype.copyWithin);
  const dataViewGetter = (key) => uncurryThis(getOwnDescriptor(DataView.prototype, key).get);
  const DataViewPrototypeGetBuffer = dataViewGetter('buffer');
  const DataViewPrototypeGetByteOffset = dataViewGetter('byteOffset');
  const DataViewPrototypeGetByteLength = dataViewGetter('byteLength');
  const ArrayBufferPrototypeGetByteLength = uncurryThis(getOwnDescriptor(ArrayBuffer.prototype, 'byteLength').get);
  const SharedArrayBufferPrototypeGetByteLength = typeof SharedArrayBuffer === 'function'
    ? uncurryThis(getOwnDescriptor(SharedArrayBuffer.prototype, 'byteLength').get) : undefined;
  // The engine's codecs (taken before the host removes those V8 11 has
  // not: see the end of this file).
  const Uint8ArrayPrototypeToHex = uncurryThis(Uint8Array.prototype.toHex);
  const Uint8ArrayPrototypeToBase64 = uncurryThis(Uint8Array.prototype.toBase64);
  const Uint8ArrayPrototypeSetFromHex = uncurryThis(Uint8Array.prototype.setFromHex);
  const Uint8ArrayPrototypeSetFromBase64 = uncurryThis(Uint8Array.prototype.setFromBase64);
  const engineBtoa = globalThis.btoa;
  const engineEscape = globalThis.escape;
  const engineUnescape = globalThis.unescape;
  const engineEncodeURIComponent = globalThis.encodeURIComponent;
  const engineDecodeURIComponent = globalThis.decodeURIComponent;

  const isUint8Array = (v) => TypedArrayPrototypeGetSymbolToStringTag(v) === 'Uint8Array';
  const isTypedArray = (v) => TypedArrayPrototypeGetSymbolToStringTag(v) !== undefined;
  const isArrayBufferView = (v) => ArrayBufferIsView(v);
  function isArrayBuffer(v) {
    try {
      ArrayBufferPrototypeGetByteLength(v);
      return true;
    } catch {
      return false;
    }
  }
  function isSharedArrayBuffer(v) {
    if (SharedArrayBufferPrototypeGetByteLength === undefined) return false;
    try {
      SharedArrayBufferPrototypeGetByteLength(v);
      return true;
    } catch {
      return false;
    }
  }
  const isAnyArrayBuffer = (v) => isArrayBuffer(v) || isSharedArrayBuffer(v);
  // The bytes of an ArrayBufferView (a typed array of any kind or a
  // DataView), as a Uint8Array over the same memory.
  function viewBytes(v) {
    if (isUint8Array(v)) return v;
    if (isTypedArray(v)) {
      return new Uint8ArrayCtor(TypedArrayPrototypeGetBuffer(v), TypedArrayPrototypeGetByteOffset(v),
        TypedArrayPrototypeGetByteLength(v));
    }
    return new Uint8ArrayCtor(DataViewPrototypeGetBuffer(v), DataViewPrototypeGetByteOffset(v),
      DataViewPrototypeGetByteLength(v));
  }
  function isDataView(v) {
    try {
      DataViewPrototypeGetBuffer(v);
      return true;
    } catch {
      return false;
    }
  }
  // Node's getOwnNonIndexProperties for a typed array: its own keys that
  // are no index, strings then symbols, only enumerable ones if
  // `enumerableOnly`. Its indices come first, as many as its length: the
  // host skips them without making each a string.
  const ObjectGetOwnPropertySymbols = Object.getOwnPropertySymbols;
  const ObjectPrototypePropertyIsEnumerable = uncurryThis(Object.prototype.propertyIsEnumerable);
  const hostOwnNames = host.ownNames;
  function typedArrayExtraKeys(obj, enumerableOnly) {
    const keys = hostOwnNames(obj, TypedArrayPrototypeGetLength(obj), enumerableOnly);
    const symbols = ObjectGetOwnPropertySymbols(obj);
    for (let i = 0; i < symbols.length; i++) {
      if (!enumerableOnly || ObjectPrototypePropertyIsEnumerable(obj, symbols[i])) keys[keys.length] = symbols[i];
    }
    return keys;
  }
  // Bytes [start, end) of the Uint8Array `b`, as a Uint8Array on them.
  const byteRange = (b, start, end) =>
    new Uint8ArrayCtor(TypedArrayPrototypeGetBuffer(b), TypedArrayPrototypeGetByteOffset(b) + start, end - start);

  // Node's errors (lib/internal/errors.js) for this section.
  const kTypes = ['string', 'function', 'number', 'object', 'Function', 'Object', 'boolean', 'bigint', 'symbol'];
  const classRegExp = /^([A-Z][a-z0-9]*)+$/;
  function formatList(array, type) {
    if (array.length < 3) return ArrayPrototypeJoin(array, ` ${type} `);
    let s = '';
    for (let i = 0; i < array.length - 1; i++) s += (i === 0 ? '' : ', ') + array[i];
    return `${s}, ${type} ${array[array.length - 1]}`;
  }
  // Node's ERR_INVALID_ARG_TYPE, its message made from the expected
  // types, classes and other kinds as Node makes it.
  function invalidArgType(name, expected, actual) {
    if (!ArrayIsArray(expected)) expected = [expected];
    let msg = 'The ';
    if (name.length > 9 && StringPrototypeSlice(name, -9) === ' argument') {
      msg += `${name} `;
    } else {
      msg += `"${name}" ${name.includes('.') ? 'property' : 'argument'} `;
    }
    msg += 'must be ';
    const types = [];
    const instances = [];
    const other = [];
    for (let i = 0; i < expected.length; i++) {
      const value = expected[i];
      if (kTypes.includes(value)) types[types.length] = StringPrototypeToLowerCase(value);
      else if (RegExpPrototypeExec(classRegExp, value) !== null) instances[instances.length] = value;
      else other[other.length] = value;
    }
    if (instances.length > 0) {
      const pos = types.indexOf('object');
      if (pos !== -1) {
        types.splice(pos, 1);
        instances[instances.length] = 'Object';
      }
    }
    if (types.length > 0) {
      msg += `${types.length > 1 ? 'one of type' : 'of type'} ${formatList(types, 'or')}`;
      if (instances.length > 0 || other.length > 0) msg += ' or ';
    }
    if (instances.length > 0) {
      msg += `an instance of ${formatList(instances, 'or')}`;
      if (other.length > 0) msg += ' or ';
    }
    if (other.length > 0) {
      if (other.length > 1) {
        msg += `one of ${formatList(other, 'or')}`;
      } else {
        if (StringPrototypeToLowerCase(other[0]) !== other[0]) msg += 'an ';
        msg += `${other[0]}`;
      }
    }
    msg += `. Received ${describe(actual)}`;
    return coded(new TypeError(msg), 'ERR_INVALID_ARG_TYPE');
  }
  const bufferOutOfBounds = (name = undefined) => coded(new RangeError(name
    ? `"${name}" is outside of buffer bounds` : 'Attempt to access memory outside buffer bounds'),
  'ERR_BUFFER_OUT_OF_BOUNDS');
  const unknownEncoding = (encoding) =>
    coded(new TypeError(formatArgs(['Unknown encoding: %s', encoding])), 'ERR_UNKNOWN_ENCODING');
  // The C++ side's own words (THROW_AND_RETURN_IF_OOB and the checks of
  // `this` and of a string argument).
  const indexOutOfRange = () => coded(new RangeError('Index out of range'), 'ERR_OUT_OF_RANGE');
  const notABuffer = () => coded(new TypeError('argument must be a buffer'), 'ERR_INVALID_ARG_TYPE');

  // Node's validators (lib/internal/validators.js).
  function validateNumber(value, name, min = undefined, max) {
    if (typeof value !== 'number') throw invalidArgType(name, 'number', value);
    if ((min != null && value < min) || (max != null && value > max) ||
        ((min != null || max != null) && NumberIsNaN(value))) {
      throw outOfRange(name,
        `${min != null ? `>= ${min}` : ''}${min != null && max != null ? ' && ' : ''}${max != null ? `<= ${max}` : ''}`,
        value);
    }
  }
  function validateInt32(value, name, min = -2147483648, max = 2147483647) {
    if (typeof value !== 'number') throw invalidArgType(name, 'number', value);
    if (!NumberIsInteger(value)) throw outOfRange(name, 'an integer', value);
    if (value < min || value > max) throw outOfRange(name, `>= ${min} && <= ${max}`, value);
  }
  function validateString(value, name) {
    if (typeof value !== 'string') throw invalidArgType(name, 'string', value);
  }
  function validateArray(value, name) {
    if (!ArrayIsArray(value)) throw invalidArgType(name, 'Array', value);
  }
  function validateBuffer(buffer, name = 'buffer') {
    if (!isArrayBufferView(buffer)) throw invalidArgType(name, ['Buffer', 'TypedArray', 'DataView'], buffer);
  }
  const kMaxLength = 2 ** 32;
  const kStringMaxLength = 536870888;
  // Node's validateInteger with kMaxLength as the default maximum.
  const validateOffset = (value, name, min = 0, max = kMaxLength) => validateInteger(value, name, min, max);

  // Node's normalizeEncoding (lib/internal/util.js).
  function normalizeEncoding(enc) {
    if (enc == null || enc === 'utf8' || enc === 'utf-8') return 'utf8';
    return slowCases(enc);
  }
  function slowCases(enc) {
    switch (enc.length) {
      case 4:
        if (enc === 'UTF8') return 'utf8';
        if (enc === 'ucs2' || enc === 'UCS2') return 'utf16le';
        enc = StringPrototypeToLowerCase(enc);
        if (enc === 'utf8') return 'utf8';
        if (enc === 'ucs2') return 'utf16le';
        break;
      case 3:
        if (enc === 'hex' || enc === 'HEX' || StringPrototypeToLowerCase(enc) === 'hex') return 'hex';
        break;
      case 5:
        if (enc === 'ascii') return 'ascii';
        if (enc === 'ucs-2') return 'utf16le';
        if (enc === 'UTF-8') return 'utf8';
        if (enc === 'ASCII') return 'ascii';
        if (enc === 'UCS-2') return 'utf16le';
        enc = StringPrototypeToLowerCase(enc);
        if (enc === 'utf-8') return 'utf8';
        if (enc === 'ascii') return 'ascii';
        if (enc === 'ucs-2') return 'utf16le';
        break;
      case 6:
        if (enc === 'base64') return 'base64';
        if (enc === 'latin1' || enc === 'binary') return 'latin1';
        if (enc === 'BASE64') return 'base64';
        if (enc === 'LATIN1' || enc === 'BINARY') return 'latin1';
        enc = StringPrototypeToLowerCase(enc);
        if (enc === 'base64') return 'base64';
        if (enc === 'latin1' || enc === 'binary') return 'latin1';
        break;
      case 7:
        if (enc === 'utf16le' || enc === 'UTF16LE' || StringPrototypeToLowerCase(enc) === 'utf16le') return 'utf16le';
        break;
      case 8:
        if (enc === 'utf-16le' || enc === 'UTF-16LE' || StringPrototypeToLowerCase(enc) === 'utf-16le') return 'utf16le';
        break;
      case 9:
        if (enc === 'base64url' || enc === 'BASE64URL' || StringPrototypeToLowerCase(enc) === 'base64url') {
          return 'base64url';
        }
        break;
      default:
        if (enc === '') return 'utf8';
    }
  }

  // --- the byte codecs (Node's StringBytes) ---
  const kChunk = 8192;
  const nonAsciiByte = /[\x80-\xff]/;
  const nonAsciiUnit = /[^\x00-\x7f]/;
  const nonLatin1Unit = /[^\x00-\xff]/;
  const nonHexUnit = /[^0-9A-Fa-f]/;
  const base64Canonical = /^[A-Za-z0-9+/]*={0,2}$/;
  const base64UrlCanonical = /^[A-Za-z0-9_-]*={0,2}$/;
  const kToBase64Url = { __proto__: null, alphabet: 'base64url', omitPadding: true };
  const kFromBase64Url = { __proto__: null, alphabet: 'base64url' };
  // Bytes [start, end) of `b` as a string of one unit a byte, made a
  // chunk at a time.
  function latin1String(b, start, end) {
    if (end - start <= kChunk) return ReflectApply(StringFromCharCode, undefined, byteRange(b, start, end));
    const parts = [];
    let n = 0;
    for (let i = start; i < end; i += kChunk) {
      parts[n++] = ReflectApply(StringFromCharCode, undefined, byteRange(b, i, i + kChunk < end ? i + kChunk : end));
    }
    return ArrayPrototypeJoin(parts, '');
  }
  // Writes a string of units up to U+00FF as bytes into `b` at `at`
  // (its length is the byte count; `b` has room), through the engine's
  // base64 codecs.
  function writeLatin1Units(b, at, s) {
    if (s.length === 0) return;
    if (s.length < 16) {
      for (let i = 0; i < s.length; i++) b[at + i] = StringPrototypeCharCodeAt(s, i);
      return;
    }
    Uint8ArrayPrototypeSetFromBase64(byteRange(b, at, at + s.length), ReflectApply(engineBtoa, undefined, [s]));
  }
  // A string's UTF-8 bytes as a string of one unit a byte; a lone
  // surrogate is U+FFFD's bytes, as V8 writes it.
  function utf8Units(s) {
    if (RegExpPrototypeExec(nonAsciiUnit, s) === null) return s;
    return ReflectApply(engineUnescape, undefined,
      [ReflectApply(engineEncodeURIComponent, undefined, [StringPrototypeToWellFormed(s)])]);
  }
  // Node's byteLengthUtf8 (V8's Utf8Length).
  function byteLengthUtf8(s) {
    return utf8Units(s).length;
  }
  // UTF-8 as the WHATWG decoder reads it (V8's, Node's): each maximal
  // ill-formed subsequence is one U+FFFD. `utf8Replaced` says whether
  // the last decoding replaced anything.
  let utf8Replaced = false;
  function decodeUtf8Slow(b, start, end) {
    let s = '';
    const units = new Uint16ArrayCtor(kChunk + 2);
    let n = 0;
    for (let i = start; i < end;) {
      const c = b[i++];
      let cp;
      if (c < 0x80) {
        cp = c;
      } else {
        let need, lower = 0x80, upper = 0xbf;
        if (c >= 0xc2 && c <= 0xdf) { need = 1; cp = c & 0x1f; }
        else if (c >= 0xe0 && c <= 0xef) { need = 2; cp = c & 0xf; if (c === 0xe0) lower = 0xa0; else if (c === 0xed) upper = 0x9f; }
        else if (c >= 0xf0 && c <= 0xf4) { need = 3; cp = c & 7; if (c === 0xf0) lower = 0x90; else if (c === 0xf4) upper = 0x8f; }
        else need = -1;
        for (; need > 0; need--) {
          const d = i < end ? b[i] : -1;
          if (d < lower || d > upper) break;
          lower = 0x80; upper = 0xbf;
          cp = cp << 6 | d & 0x3f;
          i++;
        }
        if (need !== 0) { cp = 0xfffd; utf8Replaced = true; }
      }
      if (cp < 0x10000) {
        units[n++] = cp;
      } else {
        units[n++] = 0xd800 + (cp - 0x10000 >> 10);
        units[n++] = 0xdc00 + (cp - 0x10000 & 0x3ff);
      }
      if (n >= kChunk) {
        s += ReflectApply(StringFromCharCode, undefined, units.subarray(0, n));
        n = 0;
      }
    }
    return s + ReflectApply(StringFromCharCode, undefined, units.subarray(0, n));
  }
  // The same, a chunk at a time (each cut before a byte that continues
  // no sequence, where the decoding of the whole splits): a chunk that is
  // ASCII is its bytes, one that is well-formed goes through the engine's
  // URI decoder (which refuses any ill-formed UTF-8), any other is read
  // by the loop above, and so is the next chunk after one that needed a
  // replacement (ill-formed input seldom comes alone).
  function decodeUtf8(b, start = 0, end = b.length) {
    utf8Replaced = false;
    if (end - start <= 0) return '';
    const parts = [];
    let n = 0;
    let replaced = false;
    let slow = false;
    for (let i = start; i < end;) {
      let e = i + 65536;
      if (e >= end) {
        e = end;
      } else {
        while (e < end && (b[e] & 0xc0) === 0x80) e++;
      }
      let s;
      if (!slow) {
        s = latin1String(b, i, e);
        if (RegExpPrototypeExec(nonAsciiByte, s) !== null) {
          try {
            s = ReflectApply(engineDecodeURIComponent, undefined, [ReflectApply(engineEscape, undefined, [s])]);
          } catch {
            slow = true;
          }
        }
      }
      if (slow) {
        utf8Replaced = false;
        s = decodeUtf8Slow(b, i, e);
        slow = utf8Replaced;
        replaced ||= utf8Replaced;
      }
      parts[n++] = s;
      i = e;
    }
    utf8Replaced = replaced;
    return n === 1 ? parts[0] : ArrayPrototypeJoin(parts, '');
  }
  // Where an unfinished UTF-8 sequence at the end of [start, end) starts
  // (a lead byte and the valid continuations after it that a streaming
  // decoder keeps for the next chunk), or `end`.
  function utf8Tail(b, start, end) {
    for (let p = end - 1; p >= start && p >= end - 3; p--) {
      const c = b[p];
      if (c < 0x80) return end;
      if (c < 0xc0) continue;
      const need = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
      if (need === 0 || p + need < end) return end;
      if (p + 1 < end) {
        const d = b[p + 1];
        const lower = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
        const upper = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
        if (d < lower || d > upper) return end;
      }
      if (p + 2 < end && (b[p + 2] & 0xc0) !== 0x80) return end;
      return p;
    }
    return end;
  }
  const hexDigits = '0123456789abcdef';
  function unhex(c) {
    if (c >= 48 && c <= 57) return c - 48;
    if (c >= 97 && c <= 102) return c - 87;
    if (c >= 65 && c <= 70) return c - 55;
    return -1;
  }
  // Node's legacy base64 decoder (base64_decode): any character out of
  // either alphabet is skipped, `=` ends it, a unit counts by its low
  // byte; at most `max` bytes and what the string's length (less its
  // closing `=`s) holds.
  const unbase64Table = new Uint8ArrayCtor(256).fill(255);
  for (let i = 0; i < 64; i++) unbase64Table[StringPrototypeCharCodeAt(base64Alphabet(), i)] = i;
  unbase64Table[45] = 62; // '-'
  unbase64Table[95] = 63; // '_'
  function base64Alphabet() {
    return 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  }
  function base64DecodedSize(src) {
    let size = src.length;
    if (size < 2) return 0;
    if (StringPrototypeCharCodeAt(src, size - 1) === 61) {
      size--;
      if (StringPrototypeCharCodeAt(src, size - 1) === 61) size--;
    }
    if (size < 2) return 0;
    const remainder = size % 4;
    size = MathFloor(size / 4) * 3;
    if (remainder) {
      if (size === 0 && remainder === 1) size = 0;
      else size += 1 + (remainder === 3);
    }
    return size;
  }
  function base64DecodeSlow(b, at, max, src) {
    const dstlen = MathMin(max, base64DecodedSize(src));
    const srclen = src.length;
    let i = 0;
    let k = 0;
    let hi = 0;
    let lo;
    // One character of the group: its value, or -1 to stop.
    const next = () => {
      for (;;) {
        const c = StringPrototypeCharCodeAt(src, i) & 255;
        const v = unbase64Table[c];
        i += 1;
        if (v < 64) return v;
        if (c === 61 || i >= srclen) return -1;
      }
    };
    while (i < srclen && k < dstlen) {
      if ((lo = next()) < 0) break;
      if (i >= srclen || k >= dstlen) break;
      hi = lo;
      if ((lo = next()) < 0) break;
      b[at + k++] = (hi & 0x3f) << 2 | (lo & 0x30) >> 4;
      if (i >= srclen || k >= dstlen) break;
      hi = lo;
      if ((lo = next()) < 0) break;
      b[at + k++] = (hi & 0x0f) << 4 | (lo & 0x3c) >> 2;
      if (i >= srclen || k >= dstlen) break;
      hi = lo;
      if ((lo = next()) < 0) break;
      b[at + k++] = (hi & 0x03) << 6 | lo & 0x3f;
    }
    return k;
  }
  // Node's base64ByteLength.
  function base64ByteLength(str, bytes) {
    if (StringPrototypeCharCodeAt(str, bytes - 1) === 0x3D) bytes--;
    if (bytes > 1 && StringPrototypeCharCodeAt(str, bytes - 1) === 0x3D) bytes--;
    return (bytes * 3) >>> 2;
  }
  // StringBytes::Write: `s` as bytes in `enc` into `b` at `at`, at most
  // `max` of them; returns how many.
  function writeString(b, at, max, s, enc) {
    switch (enc) {
      case 'utf8': {
        let u = utf8Units(s);
        if (u.length > max) {
          // V8 writes whole characters only.
          let n = max;
          while (n > 0 && (StringPrototypeCharCodeAt(u, n) & 0xc0) === 0x80) n--;
          u = StringPrototypeSlice(u, 0, n);
        }
        writeLatin1Units(b, at, u);
        return u.length;
      }
      case 'latin1': case 'ascii': {
        const n = MathMin(s.length, max);
        if (n < s.length) s = StringPrototypeSlice(s, 0, n);
        if (RegExpPrototypeExec(nonLatin1Unit, s) === null) {
          writeLatin1Units(b, at, s);
        } else {
          for (let i = 0; i < n; i++) b[at + i] = StringPrototypeCharCodeAt(s, i) & 255;
        }
        return n;
      }
      case 'utf16le': {
        const n = MathMin(s.length, max >>> 1);
        for (let i = 0; i < n; i++) {
          const c = StringPrototypeCharCodeAt(s, i);
          b[at + 2 * i] = c & 255;
          b[at + 2 * i + 1] = c >>> 8;
        }
        return n * 2;
      }
      case 'hex': {
        // Up to the first unit that is no hex digit (a pair with one ends
        // it), unless that unit's low byte may be one.
        const bad = RegExpPrototypeExec(nonHexUnit, s);
        if (bad === null || StringPrototypeCharCodeAt(s, bad.index) <= 0xff) {
          const n = MathMin((bad === null ? s.length : bad.index) >>> 1, max);
          if (n > 0) Uint8ArrayPrototypeSetFromHex(byteRange(b, at, at + n), StringPrototypeSlice(s, 0, 2 * n));
          return n;
        }
        let i = 0;
        for (; i < max && i * 2 + 1 < s.length; ++i) {
          const hi = unhex(StringPrototypeCharCodeAt(s, i * 2) & 255);
          const lo = unhex(StringPrototypeCharCodeAt(s, i * 2 + 1) & 255);
          if (hi < 0 || lo < 0) return i;
          b[at + i] = hi << 4 | lo;
        }
        return i;
      }
      default: { // base64, base64url: either alphabet, as Node reads both
        const url = RegExpPrototypeExec(base64Canonical, s) === null;
        if ((!url || RegExpPrototypeExec(base64UrlCanonical, s) !== null) &&
            base64ByteLength(s, s.length) <= max) {
          try {
            const r = Uint8ArrayPrototypeSetFromBase64(byteRange(b, at, at + max), s, url ? kFromBase64Url : undefined);
            return r.written;
          } catch {
            // Padding the engine refuses and Node's decoder reads.
          }
        }
        return base64DecodeSlow(b, at, max, s);
      }
    }
  }
  // StringBytes::Encode: bytes [start, end) of `b` as text in `enc`.
  function sliceText(b, enc, start, end) {
    switch (enc) {
      case 'utf8': return decodeUtf8(b, start, end);
      case 'latin1': return latin1String(b, start, end);
      case 'ascii': {
        const s = latin1String(b, start, end);
        if (RegExpPrototypeExec(nonAsciiByte, s) === null) return s;
        const masked = new Uint8ArrayCtor(end - start);
        for (let i = start; i < end; i++) masked[i - start] = b[i] & 0x7f;
        return latin1String(masked, 0, end - start);
      }
      case 'utf16le': {
        const n = (end - start) >>> 1;
        const units = new Uint16ArrayCtor(n);
        TypedArrayPrototypeSet(new Uint8ArrayCtor(TypedArrayPrototypeGetBuffer(units)), byteRange(b, start, start + 2 * n));
        const parts = [];
        let k = 0;
        for (let i = 0; i < n; i += kChunk) {
          parts[k++] = ReflectApply(StringFromCharCode, undefined, units.subarray(i, i + kChunk < n ? i + kChunk : n));
        }
        return ArrayPrototypeJoin(parts, '');
      }
      case 'hex': return Uint8ArrayPrototypeToHex(byteRange(b, start, end));
      case 'base64': return Uint8ArrayPrototypeToBase64(byteRange(b, start, end));
      default: return Uint8ArrayPrototypeToBase64(byteRange(b, start, end), kToBase64Url);
    }
  }
  // StringBytes::Size.
  function stringSize(s, enc) {
    if (enc === 'utf8') return byteLengthUtf8(s);
    if (enc === 'utf16le') return s.length * 2;
    return s.length;
  }
  // Node's ParseArrayIndex: undefined is the default, anything else an
  // integer (NaN 0), a negative one out of range.
  function parseArrayIndex(arg, def) {
    if (arg === undefined) return def;
    let n = +arg;
    n = NumberIsNaN(n) ? 0 : MathTrunc(n);
    if (n < 0) throw indexOutOfRange();
    return n;
  }
  // The `*Slice` and `*Write` methods (C++ in Node: no declared
  // parameters, any ArrayBufferView as `this`).
  function makeSlice(enc, name) {
    const fn = function (start, end) {
      if (!isArrayBufferView(this)) throw notABuffer();
      const b = viewBytes(this);
      const len = TypedArrayPrototypeGetLength(b);
      if (len === 0) return '';
      start = parseArrayIndex(start, 0);
      end = parseArrayIndex(end, len);
      if (end < start) end = start;
      if (end > len) throw indexOutOfRange();
      return sliceText(b, enc, start, end);
    };
    defineProperty(fn, 'name', { __proto__: null, value: name, configurable: true });
    defineProperty(fn, 'length', { __proto__: null, value: 0, configurable: true });
    return fn;
  }
  function makeWrite(enc, name) {
    const fn = function (string, offset, length) {
      if (!isArrayBufferView(this)) throw notABuffer();
      const b = viewBytes(this);
      if (typeof string !== 'string') throw coded(new TypeError('argument must be a string'), 'ERR_INVALID_ARG_TYPE');
      const len = TypedArrayPrototypeGetLength(b);
      offset = parseArrayIndex(offset, 0);
      if (offset > len) throw bufferOutOfBounds('offset');
      let max = parseArrayIndex(length, len - offset);
      max = MathMin(len - offset, max);
      if (max === 0) return 0;
      return writeString(b, offset, max, string, enc);
    };
    defineProperty(fn, 'name', { __proto__: null, value: name, configurable: true });
    defineProperty(fn, 'length', { __proto__: null, value: 0, configurable: true });
    return fn;
  }

  // --- the C++ helpers of lib/buffer.js ---
  // Compare: -1, 0 or 1, by the bytes and then the lengths.
  function compareRanges(a, aStart, aLen, b, bStart, bLen, n) {
    let i = 0;
    // Four bytes at a time where both sides are aligned for it.
    if (n >= 64 && ((TypedArrayPrototypeGetByteOffset(a) + aStart) & 3) === 0 &&
        ((TypedArrayPrototypeGetByteOffset(b) + bStart) & 3) === 0) {
      const words = n >>> 2;
      const wa = new Uint32ArrayCtor(TypedArrayPrototypeGetBuffer(a), TypedArrayPrototypeGetByteOffset(a) + aStart, words);
      const wb = new Uint32ArrayCtor(TypedArrayPrototypeGetBuffer(b), TypedArrayPrototypeGetByteOffset(b) + bStart, words);
      while (i < words && wa[i] === wb[i]) i++;
      i *= 4;
    }
    for (; i < n; i++) {
      const x = a[aStart + i], y = b[bStart + i];
      if (x !== y) return x < y ? -1 : 1;
    }
    return aLen > bLen ? 1 : aLen < bLen ? -1 : 0;
  }
  function _compare(a, b) {
    a = viewBytes(a);
    b = viewBytes(b);
    const la = TypedArrayPrototypeGetLength(a), lb = TypedArrayPrototypeGetLength(b);
    return compareRanges(a, 0, la, b, 0, lb, MathMin(la, lb));
  }
  function compareOffset(source, target, targetStart, sourceStart, targetEnd, sourceEnd) {
    if (!isArrayBufferView(source) || !isArrayBufferView(target)) throw notABuffer();
    source = viewBytes(source);
    target = viewBytes(target);
    const sourceLength = TypedArrayPrototypeGetLength(source), targetLength = TypedArrayPrototypeGetLength(target);
    targetStart = parseArrayIndex(targetStart, 0);
    sourceStart = parseArrayIndex(sourceStart, 0);
    targetEnd = parseArrayIndex(targetEnd, targetLength);
    sourceEnd = parseArrayIndex(sourceEnd, sourceLength);
    if (sourceStart > sourceLength) {
      throw coded(new RangeError('The value of "sourceStart" is out of range.'), 'ERR_OUT_OF_RANGE');
    }
    if (targetStart > targetLength) {
      throw coded(new RangeError('The value of "targetStart" is out of range.'), 'ERR_OUT_OF_RANGE');
    }
    const n = MathMin(MathMin(sourceEnd - sourceStart, targetEnd - targetStart), sourceLength - sourceStart);
    return compareRanges(source, sourceStart, sourceEnd - sourceStart, target, targetStart, targetEnd - targetStart, n);
  }
  // IndexOfOffset: where a search starts, or -1 for none.
  function indexOfOffset(length, offset, needleLength, isForward) {
    if (offset < 0) {
      if (offset + length >= 0) return length + offset;
      if (isForward || needleLength === 0) return 0;
      return -1;
    }
    if (offset + needleLength <= length) return offset;
    if (needleLength === 0) return length;
    if (isForward) return -1;
    return length - 1;
  }
  // nbytes::SearchString over `unit`-byte units: the first match at or
  // after `start`, or the last at or before it; `hayLength` when none.
  function searchBytes(hay, hayLength, needle, needleLength, start, isForward, unit) {
    const hayUnits = hayLength / unit | 0, needleUnits = needleLength / unit | 0;
    if (hayUnits < needleUnits) return hayUnits;
    const diff = hayUnits - needleUnits;
    const first = needle[0], firstHi = unit === 2 ? needle[1] : 0;
    const match = (p) => {
      const at = p * unit;
      for (let j = 0; j < needleUnits * unit; j++) if (hay[at + j] !== needle[j]) return false;
      return true;
    };
    if (isForward) {
      for (let p = start; p <= diff; p++) {
        if (hay[p * unit] === first && (unit === 1 || hay[p * unit + 1] === firstHi) && match(p)) return p;
      }
    } else {
      for (let p = start < diff ? start : diff; p >= 0; p--) {
        if (hay[p * unit] === first && (unit === 1 || hay[p * unit + 1] === firstHi) && match(p)) return p;
      }
    }
    return hayUnits;
  }
  function indexOfString(buffer, needle, offset, encoding, isForward) {
    if (!isArrayBufferView(buffer)) throw notABuffer();
    const hay = viewBytes(buffer);
    offset = MathTrunc(offset) || 0; // an int64_t: no -0
    const hayLength = encoding === 'utf16le' ? TypedArrayPrototypeGetLength(hay) & ~1 : TypedArrayPrototypeGetLength(hay);
    const needleLength = stringSize(needle, encoding);
    const optOffset = indexOfOffset(hayLength, offset, needleLength, isForward);
    if (needleLength === 0) return optOffset;
    if (hayLength === 0) return -1;
    if (optOffset <= -1) return -1;
    if ((isForward && needleLength + optOffset > hayLength) || needleLength > hayLength) return -1;
    const bytes = new Uint8ArrayCtor(needleLength);
    writeString(bytes, 0, needleLength, needle, encoding);
    let result;
    if (encoding === 'utf16le') {
      if (hayLength < 2 || needle.length < 1) return -1;
      result = searchBytes(hay, hayLength, bytes, needleLength, optOffset >>> 1, isForward, 2) * 2;
    } else {
      result = searchBytes(hay, hayLength, bytes, needleLength, optOffset, isForward, 1);
    }
    return result === hayLength ? -1 : result;
  }
  function indexOfBuffer(buffer, val, offset, encoding, isForward) {
    if (!isArrayBufferView(buffer) || !isArrayBufferView(val)) throw notABuffer();
    const hay = viewBytes(buffer), needle = viewBytes(val);
    offset = MathTrunc(offset) || 0; // an int64_t: no -0
    const hayLength = TypedArrayPrototypeGetLength(hay), needleLength = TypedArrayPrototypeGetLength(needle);
    const optOffset = indexOfOffset(hayLength, offset, needleLength, isForward);
    if (needleLength === 0) return optOffset;
    if (hayLength === 0) return -1;
    if (optOffset <= -1) return -1;
    if ((isForward && needleLength + optOffset > hayLength) || needleLength > hayLength) return -1;
    let result;
    if (encoding === 'utf16le') {
      if (hayLength < 2 || needleLength < 2) return -1;
      result = searchBytes(hay, hayLength, needle, needleLength, optOffset >>> 1, isForward, 2) * 2;
    } else {
      result = searchBytes(hay, hayLength, needle, needleLength, optOffset, isForward, 1);
    }
    return result === hayLength ? -1 : result;
  }
  function indexOfNumber(buffer, needle, offset, isForward) {
    if (!isArrayBufferView(buffer)) throw notABuffer();
    const b = viewBytes(buffer);
    const length = TypedArrayPrototypeGetLength(b);
    const optOffset = indexOfOffset(length, MathTrunc(offset) || 0, 1, isForward);
    if (optOffset <= -1 || length === 0) return -1;
    needle &= 255;
    if (isForward) {
      for (let i = optOffset; i < length; i++) if (b[i] === needle) return i;
    } else {
      for (let i = optOffset; i >= 0; i--) if (b[i] === needle) return i;
    }
    return -1;
  }
  // Node's C++ Fill: undefined when done, -1 for a value that writes no
  // byte, -2 for a range outside the buffer.
  function bindingFill(buf, value, start, end, encoding) {
    if (!isArrayBufferView(buf)) throw notABuffer();
    const b = viewBytes(buf);
    start = parseArrayIndex(start, 0);
    end = parseArrayIndex(end, 0);
    const fillLength = end - start;
    if (start > end || fillLength + start > TypedArrayPrototypeGetLength(b)) return -2;
    let strLength;
    if (isArrayBufferView(value)) {
      const src = viewBytes(value);
      strLength = TypedArrayPrototypeGetLength(src);
      TypedArrayPrototypeSet(b, strLength > fillLength ? byteRange(src, 0, fillLength) : src, start);
    } else if (typeof value !== 'string') {
      TypedArrayPrototypeFill(b, (value >>> 0) & 255, start, end);
      return;
    } else {
      value = `${value}`;
      const enc = normalizeEncoding(encoding) ?? 'utf8';
      if (enc === 'utf8') {
        const u = utf8Units(value);
        strLength = u.length;
        writeLatin1Units(b, start, strLength > fillLength ? StringPrototypeSlice(u, 0, fillLength) : u);
      } else if (enc === 'utf16le') {
        strLength = value.length * 2;
        const units = MathMin(value.length, (fillLength + 1) >>> 1);
        for (let i = 0, at = start; i < units; i++) {
          const c = StringPrototypeCharCodeAt(value, i);
          if (at < end) b[at++] = c & 255;
          if (at < end) b[at++] = c >>> 8;
        }
      } else {
        strLength = writeString(b, start, fillLength, value, enc);
      }
    }
    if (strLength >= fillLength) return;
    if (strLength === 0) return -1;
    let inThere = strLength;
    while (inThere < fillLength - inThere) {
      TypedArrayPrototypeCopyWithin(b, start + inThere, start, start + inThere);
      inThere *= 2;
    }
    if (inThere < fillLength) TypedArrayPrototypeCopyWithin(b, start + inThere, start, start + fillLength - inThere);
  }
  function swapBytes(b, size) {
    const len = TypedArrayPrototypeGetLength(b);
    for (let i = 0; i < len; i += size) {
      for (let j = 0; j < size >>> 1; j++) {
        const t = b[i + j];
        b[i + j] = b[i + size - 1 - j];
        b[i + size - 1 - j] = t;
      }
    }
    return b;
  }

  // --- lib/internal/buffer.js ---
  const float32Array = new Float32ArrayCtor(1);
  const uInt8Float32Array = new Uint8ArrayCtor(float32Array.buffer);
  const float64Array = new Float64ArrayCtor(1);
  const uInt8Float64Array = new Uint8ArrayCtor(float64Array.buffer);
  float32Array[0] = -1; // 0xBF800000
  const bigEndian = uInt8Float32Array[3] === 0;
  function checkBounds(buf, offset, byteLength) {
    validateNumber(offset, 'offset');
    if (buf[offset] === undefined || buf[offset + byteLength] === undefined) boundsError(offset, buf.length - (byteLength + 1));
  }
  function checkInt(value, min, max, buf, offset, byteLength) {
    if (value > max || value < min) {
      const n = typeof min === 'bigint' ? 'n' : '';
      let range;
      if (byteLength > 3) {
        if (min === 0 || min === 0n) {
          range = `>= 0${n} and < 2${n} ** ${(byteLength + 1) * 8}${n}`;
        } else {
          range = `>= -(2${n} ** ${(byteLength + 1) * 8 - 1}${n}) and < 2${n} ** ${(byteLength + 1) * 8 - 1}${n}`;
        }
      } else {
        range = `>= ${min}${n} and <= ${max}${n}`;
      }
      throw outOfRange('value', range, value);
    }
    checkBounds(buf, offset, byteLength);
  }
  function boundsError(value, length, type) {
    if (MathFloor(value) !== value) {
      validateNumber(value, type);
      throw outOfRange(type || 'offset', 'an integer', value);
    }
    if (length < 0) throw bufferOutOfBounds();
    throw outOfRange(type || 'offset', `>= ${type ? 1 : 0} and <= ${length}`, value);
  }
  function readBigUInt64LE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 7];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 8);
    const lo = first + this[++offset] * 2 ** 8 + this[++offset] * 2 ** 16 + this[++offset] * 2 ** 24;
    const hi = this[++offset] + this[++offset] * 2 ** 8 + this[++offset] * 2 ** 16 + last * 2 ** 24;
    return BigIntCtor(lo) + (BigIntCtor(hi) << 32n);
  }
  function readBigUInt64BE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 7];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 8);
    const hi = first * 2 ** 24 + this[++offset] * 2 ** 16 + this[++offset] * 2 ** 8 + this[++offset];
    const lo = this[++offset] * 2 ** 24 + this[++offset] * 2 ** 16 + this[++offset] * 2 ** 8 + last;
    return (BigIntCtor(hi) << 32n) + BigIntCtor(lo);
  }
  function readBigInt64LE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 7];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 8);
    const val = this[offset + 4] + this[offset + 5] * 2 ** 8 + this[offset + 6] * 2 ** 16 + (last << 24); // Overflow
    return (BigIntCtor(val) << 32n) +
      BigIntCtor(first + this[++offset] * 2 ** 8 + this[++offset] * 2 ** 16 + this[++offset] * 2 ** 24);
  }
  function readBigInt64BE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 7];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 8);
    const val = (first << 24) + // Overflow
      this[++offset] * 2 ** 16 + this[++offset] * 2 ** 8 + this[++offset];
    return (BigIntCtor(val) << 32n) +
      BigIntCtor(this[++offset] * 2 ** 24 + this[++offset] * 2 ** 16 + this[++offset] * 2 ** 8 + last);
  }
  function readUIntLE(offset, byteLength) {
    if (offset === undefined) throw invalidArgType('offset', 'number', offset);
    if (byteLength === 6) return readUInt48LE(this, offset);
    if (byteLength === 5) return readUInt40LE(this, offset);
    if (byteLength === 3) return readUInt24LE(this, offset);
    if (byteLength === 4) return this.readUInt32LE(offset);
    if (byteLength === 2) return this.readUInt16LE(offset);
    if (byteLength === 1) return this.readUInt8(offset);
    boundsError(byteLength, 6, 'byteLength');
  }
  function readUInt48LE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 5];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 6);
    return first + buf[++offset] * 2 ** 8 + buf[++offset] * 2 ** 16 + buf[++offset] * 2 ** 24 +
      (buf[++offset] + last * 2 ** 8) * 2 ** 32;
  }
  function readUInt40LE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 4];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 5);
    return first + buf[++offset] * 2 ** 8 + buf[++offset] * 2 ** 16 + buf[++offset] * 2 ** 24 + last * 2 ** 32;
  }
  function readUInt32LE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 3];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 4);
    return first + this[++offset] * 2 ** 8 + this[++offset] * 2 ** 16 + last * 2 ** 24;
  }
  function readUInt24LE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 2];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 3);
    return first + buf[++offset] * 2 ** 8 + last * 2 ** 16;
  }
  function readUInt16LE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 1];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 2);
    return first + last * 2 ** 8;
  }
  function readUInt8(offset = 0) {
    validateNumber(offset, 'offset');
    const val = this[offset];
    if (val === undefined) boundsError(offset, this.length - 1);
    return val;
  }
  function readUIntBE(offset, byteLength) {
    if (offset === undefined) throw invalidArgType('offset', 'number', offset);
    if (byteLength === 6) return readUInt48BE(this, offset);
    if (byteLength === 5) return readUInt40BE(this, offset);
    if (byteLength === 3) return readUInt24BE(this, offset);
    if (byteLength === 4) return this.readUInt32BE(offset);
    if (byteLength === 2) return this.readUInt16BE(offset);
    if (byteLength === 1) return this.readUInt8(offset);
    boundsError(byteLength, 6, 'byteLength');
  }
  function readUInt48BE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 5];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 6);
    return (first * 2 ** 8 + buf[++offset]) * 2 ** 32 + buf[++offset] * 2 ** 24 + buf[++offset] * 2 ** 16 +
      buf[++offset] * 2 ** 8 + last;
  }
  function readUInt40BE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 4];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 5);
    return first * 2 ** 32 + buf[++offset] * 2 ** 24 + buf[++offset] * 2 ** 16 + buf[++offset] * 2 ** 8 + last;
  }
  function readUInt32BE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 3];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 4);
    return first * 2 ** 24 + this[++offset] * 2 ** 16 + this[++offset] * 2 ** 8 + last;
  }
  function readUInt24BE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 2];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 3);
    return first * 2 ** 16 + buf[++offset] * 2 ** 8 + last;
  }
  function readUInt16BE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 1];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 2);
    return first * 2 ** 8 + last;
  }
  function readIntLE(offset, byteLength) {
    if (offset === undefined) throw invalidArgType('offset', 'number', offset);
    if (byteLength === 6) return readInt48LE(this, offset);
    if (byteLength === 5) return readInt40LE(this, offset);
    if (byteLength === 3) return readInt24LE(this, offset);
    if (byteLength === 4) return this.readInt32LE(offset);
    if (byteLength === 2) return this.readInt16LE(offset);
    if (byteLength === 1) return this.readInt8(offset);
    boundsError(byteLength, 6, 'byteLength');
  }
  function readInt48LE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 5];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 6);
    const val = buf[offset + 4] + last * 2 ** 8;
    return (val | (val & 2 ** 15) * 0x1fffe) * 2 ** 32 + first + buf[++offset] * 2 ** 8 + buf[++offset] * 2 ** 16 +
      buf[++offset] * 2 ** 24;
  }
  function readInt40LE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 4];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 5);
    return (last | (last & 2 ** 7) * 0x1fffffe) * 2 ** 32 + first + buf[++offset] * 2 ** 8 + buf[++offset] * 2 ** 16 +
      buf[++offset] * 2 ** 24;
  }
  function readInt32LE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 3];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 4);
    return first + this[++offset] * 2 ** 8 + this[++offset] * 2 ** 16 + (last << 24); // Overflow
  }
  function readInt24LE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 2];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 3);
    const val = first + buf[++offset] * 2 ** 8 + last * 2 ** 16;
    return val | (val & 2 ** 23) * 0x1fe;
  }
  function readInt16LE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 1];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 2);
    const val = first + last * 2 ** 8;
    return val | (val & 2 ** 15) * 0x1fffe;
  }
  function readInt8(offset = 0) {
    validateNumber(offset, 'offset');
    const val = this[offset];
    if (val === undefined) boundsError(offset, this.length - 1);
    return val | (val & 2 ** 7) * 0x1fffffe;
  }
  function readIntBE(offset, byteLength) {
    if (offset === undefined) throw invalidArgType('offset', 'number', offset);
    if (byteLength === 6) return readInt48BE(this, offset);
    if (byteLength === 5) return readInt40BE(this, offset);
    if (byteLength === 3) return readInt24BE(this, offset);
    if (byteLength === 4) return this.readInt32BE(offset);
    if (byteLength === 2) return this.readInt16BE(offset);
    if (byteLength === 1) return this.readInt8(offset);
    boundsError(byteLength, 6, 'byteLength');
  }
  function readInt48BE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 5];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 6);
    const val = buf[++offset] + first * 2 ** 8;
    return (val | (val & 2 ** 15) * 0x1fffe) * 2 ** 32 + buf[++offset] * 2 ** 24 + buf[++offset] * 2 ** 16 +
      buf[++offset] * 2 ** 8 + last;
  }
  function readInt40BE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 4];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 5);
    return (first | (first & 2 ** 7) * 0x1fffffe) * 2 ** 32 + buf[++offset] * 2 ** 24 + buf[++offset] * 2 ** 16 +
      buf[++offset] * 2 ** 8 + last;
  }
  function readInt32BE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 3];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 4);
    return (first << 24) + // Overflow
      this[++offset] * 2 ** 16 + this[++offset] * 2 ** 8 + last;
  }
  function readInt24BE(buf, offset = 0) {
    validateNumber(offset, 'offset');
    const first = buf[offset];
    const last = buf[offset + 2];
    if (first === undefined || last === undefined) boundsError(offset, buf.length - 3);
    const val = first * 2 ** 16 + buf[++offset] * 2 ** 8 + last;
    return val | (val & 2 ** 23) * 0x1fe;
  }
  function readInt16BE(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 1];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 2);
    const val = first * 2 ** 8 + last;
    return val | (val & 2 ** 15) * 0x1fffe;
  }
  function readFloatBackwards(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 3];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 4);
    uInt8Float32Array[3] = first;
    uInt8Float32Array[2] = this[++offset];
    uInt8Float32Array[1] = this[++offset];
    uInt8Float32Array[0] = last;
    return float32Array[0];
  }
  function readFloatForwards(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 3];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 4);
    uInt8Float32Array[0] = first;
    uInt8Float32Array[1] = this[++offset];
    uInt8Float32Array[2] = this[++offset];
    uInt8Float32Array[3] = last;
    return float32Array[0];
  }
  function readDoubleBackwards(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 7];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 8);
    uInt8Float64Array[7] = first;
    uInt8Float64Array[6] = this[++offset];
    uInt8Float64Array[5] = this[++offset];
    uInt8Float64Array[4] = this[++offset];
    uInt8Float64Array[3] = this[++offset];
    uInt8Float64Array[2] = this[++offset];
    uInt8Float64Array[1] = this[++offset];
    uInt8Float64Array[0] = last;
    return float64Array[0];
  }
  function readDoubleForwards(offset = 0) {
    validateNumber(offset, 'offset');
    const first = this[offset];
    const last = this[offset + 7];
    if (first === undefined || last === undefined) boundsError(offset, this.length - 8);
    uInt8Float64Array[0] = first;
    uInt8Float64Array[1] = this[++offset];
    uInt8Float64Array[2] = this[++offset];
    uInt8Float64Array[3] = this[++offset];
    uInt8Float64Array[4] = this[++offset];
    uInt8Float64Array[5] = this[++offset];
    uInt8Float64Array[6] = this[++offset];
    uInt8Float64Array[7] = last;
    return float64Array[0];
  }
  function writeBigU_Int64LE(buf, value, offset, min, max) {
    checkInt(value, min, max, buf, offset, 7);
    let lo = NumberCtor(value & 0xffffffffn);
    buf[offset++] = lo;
    lo = lo >> 8;
    buf[offset++] = lo;
    lo = lo >> 8;
    buf[offset++] = lo;
    lo = lo >> 8;
    buf[offset++] = lo;
    let hi = NumberCtor(value >> 32n & 0xffffffffn);
    buf[offset++] = hi;
    hi = hi >> 8;
    buf[offset++] = hi;
    hi = hi >> 8;
    buf[offset++] = hi;
    hi = hi >> 8;
    buf[offset++] = hi;
    return offset;
  }
  function writeBigUInt64LE(value, offset = 0) {
    return writeBigU_Int64LE(this, value, offset, 0n, 0xffffffffffffffffn);
  }
  function writeBigU_Int64BE(buf, value, offset, min, max) {
    checkInt(value, min, max, buf, offset, 7);
    let lo = NumberCtor(value & 0xffffffffn);
    buf[offset + 7] = lo;
    lo = lo >> 8;
    buf[offset + 6] = lo;
    lo = lo >> 8;
    buf[offset + 5] = lo;
    lo = lo >> 8;
    buf[offset + 4] = lo;
    let hi = NumberCtor(value >> 32n & 0xffffffffn);
    buf[offset + 3] = hi;
    hi = hi >> 8;
    buf[offset + 2] = hi;
    hi = hi >> 8;
    buf[offset + 1] = hi;
    hi = hi >> 8;
    buf[offset] = hi;
    return offset + 8;
  }
  function writeBigUInt64BE(value, offset = 0) {
    return writeBigU_Int64BE(this, value, offset, 0n, 0xffffffffffffffffn);
  }
  function writeBigInt64LE(value, offset = 0) {
    return writeBigU_Int64LE(this, value, offset, -0x8000000000000000n, 0x7fffffffffffffffn);
  }
  function writeBigInt64BE(value, offset = 0) {
    return writeBigU_Int64BE(this, value, offset, -0x8000000000000000n, 0x7fffffffffffffffn);
  }
  function writeUIntLE(value, offset, byteLength) {
    if (byteLength === 6) return writeU_Int48LE(this, value, offset, 0, 0xffffffffffff);
    if (byteLength === 5) return writeU_Int40LE(this, value, offset, 0, 0xffffffffff);
    if (byteLength === 3) return writeU_Int24LE(this, value, offset, 0, 0xffffff);
    if (byteLength === 4) return writeU_Int32LE(this, value, offset, 0, 0xffffffff);
    if (byteLength === 2) return writeU_Int16LE(this, value, offset, 0, 0xffff);
    if (byteLength === 1) return writeU_Int8(this, value, offset, 0, 0xff);
    boundsError(byteLength, 6, 'byteLength');
  }
  function writeU_Int48LE(buf, value, offset, min, max) {
    value = +value;
    checkInt(value, min, max, buf, offset, 5);
    const newVal = MathFloor(value * 2 ** -32);
    buf[offset++] = value;
    value = value >>> 8;
    buf[offset++] = value;
    value = value >>> 8;
    buf[offset++] = value;
    value = value >>> 8;
    buf[offset++] = value;
    buf[offset++] = newVal;
    buf[offset++] = (newVal >>> 8);
    return offset;
  }
  function writeU_Int40LE(buf, value, offset, min, max) {
    value = +value;
    checkInt(value, min, max, buf, offset, 4);
    const newVal = value;
    buf[offset++] = value;
    value = value >>> 8;
    buf[offset++] = value;
    value = value >>> 8;
    buf[offset++] = value;
    value = value >>> 8;
    buf[offset++] = value;
    buf[offset++] = MathFloor(newVal * 2 ** -32);
    return offset;
  }
  function writeU_Int32LE(buf, value, offset, min, max) {
    value = +value;
    checkInt(value, min, max, buf, offset, 3);
    buf[offset++] = value;
    value = value >>> 8;
    buf[offset++] = value;
    value = value >>> 8;
    buf[offset++] = value;
    value = value >>> 8;
    buf[offset++] = value;
    return offset;
  }
  function writeUInt32LE(value, offset = 0) {
    return writeU_Int32LE(this, value, offset, 0, 0xffffffff);
  }
  function writeU_Int24LE(buf, value, offset, min, max) {
    value = +value;
    checkInt(value, min, max, buf, offset, 2);
    buf[offset++] = value;
    value = value >>> 8;
    buf[offset++] = value;
    value = value >>> 8;
    buf[offset++] = value;
    return offset;
  }
  function writeU_Int16LE(buf, value, offset, min, max) {
    value = +value;
    checkInt(value, min, max, buf, offset, 1);
    buf[offset++] = value;
    buf[offset++] = (value >>> 8);
    return offset;
  }
  function writeUInt16LE(value, offset = 0) {
    return writeU_Int16LE(this, value, offset, 0, 0xffff);
  }
  function writeU_Int8(buf, value, offset, min, max) {
    value = +value;
    // `checkInt()` can not be used here because it checks two entries.
    validateNumber(offset, 'offset');
    if (value > max || value < min) throw outOfRange('value', `>= ${min} and <= ${max}`, value);
    if (buf[offset] === undefined) boundsError(offset, buf.length - 1);
    buf[offset] = value;
    return offset + 1;
  }
  function writeUInt8(value, offset = 0) {
    return writeU_Int8(this, value, offset, 0, 0xff);
  }
  function writeUIntBE(value, offset, byteLength) {
    if (byteLength === 6) return writeU_Int48BE(this, value, offset, 0, 0xffffffffffff);
    if (byteLength === 5) return writeU_Int40BE(this, value, offset, 0, 0xffffffffff);
    if (byteLength === 3) return writeU_Int24BE(this, value, offset, 0, 0xffffff);
    if (byteLength === 4) return writeU_Int32BE(this, value, offset, 0, 0xffffffff);
    if (byteLength === 2) return writeU_Int16BE(this, value, offset, 0, 0xffff);
    if (byteLength === 1) return writeU_Int8(this, value, offset, 0, 0xff);
    boundsError(byteLength, 6, 'byteLength');
  }
  function writeU_Int48BE(buf, value, offset, min, max) {
    value = +value;
    checkInt(value, min, max, buf, offset, 5);
    const newVal = MathFloor(value * 2 ** -32);
    buf[offset++] = (newVal >>> 8);
    buf[offset++] = newVal;
    buf[offset + 3] = value;
    value = value >>> 8;
    buf[offset + 2] = value;
    value = value >>> 8;
    buf[offset + 1] = value;
    value = value >>> 8;
    buf[offset] = value;
    return offset + 4;
  }
  function writeU_Int40BE(buf, value, offset, min, max) {
    value = +value;
    checkInt(value, min, max, buf, offset, 4);
    buf[offset++] = MathFloor(value * 2 ** -32);
    buf[offset + 3] = value;
    value = value >>> 8;
    buf[offset + 2] = value;
    value = value >>> 8;
    buf[offset + 1] = value;
    value = value >>> 8;
    buf[offset] = value;
    return offset + 4;
  }
  function writeU_Int32BE(buf, value, offset, min, max) {
    value = +value;
    checkInt(value, min, max, buf, offset, 3);
    buf[offset + 3] = value;
    value = value >>> 8;
    buf[offset + 2] = value;
    value = value >>> 8;
    buf[offset + 1] = value;
    value = value >>> 8;
    buf[offset] = value;
    return offset + 4;
  }
  function writeUInt32BE(value, offset = 0) {
    return writeU_Int32BE(this, value, offset, 0, 0xffffffff);
  }
  function writeU_Int24BE(buf, value, offset, min, max) {
    value = +value;
    checkInt(value, min, max, buf, offset, 2);
    buf[offset + 2] = value;
    value = value >>> 8;
    buf[offset + 1] = value;
    value = value >>> 8;
    buf[offset] = value;
    return offset + 3;
  }
  function writeU_Int16BE(buf, value, offset, min, max) {
    value = +value;
    checkInt(value, min, max, buf, offset, 1);
    buf[offset++] = (value >>> 8);
    buf[offset++] = value;
    return offset;
  }
  function writeUInt16BE(value, offset = 0) {
    return writeU_Int16BE(this, value, offset, 0, 0xffff);
  }
  function writeIntLE(value, offset, byteLength) {
    if (byteLength === 6) return writeU_Int48LE(this, value, offset, -0x800000000000, 0x7fffffffffff);
    if (byteLength === 5) return writeU_Int40LE(this, value, offset, -0x8000000000, 0x7fffffffff);
    if (byteLength === 3) return writeU_Int24LE(this, value, offset, -0x800000, 0x7fffff);
    if (byteLength === 4) return writeU_Int32LE(this, value, offset, -0x80000000, 0x7fffffff);
    if (byteLength === 2) return writeU_Int16LE(this, value, offset, -0x8000, 0x7fff);
    if (byteLength === 1) return writeU_Int8(this, value, offset, -0x80, 0x7f);
    boundsError(byteLength, 6, 'byteLength');
  }
  function writeInt32LE(value, offset = 0) {
    return writeU_Int32LE(this, value, offset, -0x80000000, 0x7fffffff);
  }
  function writeInt16LE(value, offset = 0) {
    return writeU_Int16LE(this, value, offset, -0x8000, 0x7fff);
  }
  function writeInt8(value, offset = 0) {
    return writeU_Int8(this, value, offset, -0x80, 0x7f);
  }
  function writeIntBE(value, offset, byteLength) {
    if (byteLength === 6) return writeU_Int48BE(this, value, offset, -0x800000000000, 0x7fffffffffff);
    if (byteLength === 5) return writeU_Int40BE(this, value, offset, -0x8000000000, 0x7fffffffff);
    if (byteLength === 3) return writeU_Int24BE(this, value, offset, -0x800000, 0x7fffff);
    if (byteLength === 4) return writeU_Int32BE(this, value, offset, -0x80000000, 0x7fffffff);
    if (byteLength === 2) return writeU_Int16BE(this, value, offset, -0x8000, 0x7fff);
    if (byteLength === 1) return writeU_Int8(this, value, offset, -0x80, 0x7f);
    boundsError(byteLength, 6, 'byteLength');
  }
  function writeInt32BE(value, offset = 0) {
    return writeU_Int32BE(this, value, offset, -0x80000000, 0x7fffffff);
  }
  function writeInt16BE(value, offset = 0) {
    return writeU_Int16BE(this, value, offset, -0x8000, 0x7fff);
  }
  function writeDoubleForwards(val, offset = 0) {
    val = +val;
    checkBounds(this, offset, 7);
    float64Array[0] = val;
    this[offset++] = uInt8Float64Array[0];
    this[offset++] = uInt8Float64Array[1];
    this[offset++] = uInt8Float64Array[2];
    this[offset++] = uInt8Float64Array[3];
    this[offset++] = uInt8Float64Array[4];
    this[offset++] = uInt8Float64Array[5];
    this[offset++] = uInt8Float64Array[6];
    this[offset++] = uInt8Float64Array[7];
    return offset;
  }
  function writeDoubleBackwards(val, offset = 0) {
    val = +val;
    checkBounds(this, offset, 7);
    float64Array[0] = val;
    this[offset++] = uInt8Float64Array[7];
    this[offset++] = uInt8Float64Array[6];
    this[offset++] = uInt8Float64Array[5];
    this[offset++] = uInt8Float64Array[4];
    this[offset++] = uInt8Float64Array[3];
    this[offset++] = uInt8Float64Array[2];
    this[offset++] = uInt8Float64Array[1];
    this[offset++] = uInt8Float64Array[0];
    return offset;
  }
  function writeFloatForwards(val, offset = 0) {
    val = +val;
    checkBounds(this, offset, 3);
    float32Array[0] = val;
    this[offset++] = uInt8Float32Array[0];
    this[offset++] = uInt8Float32Array[1];
    this[offset++] = uInt8Float32Array[2];
    this[offset++] = uInt8Float32Array[3];
    return offset;
  }
  function writeFloatBackwards(val, offset = 0) {
    val = +val;
    checkBounds(this, offset, 3);
    float32Array[0] = val;
    this[offset++] = uInt8Float32Array[3];
    this[offset++] = uInt8Float32Array[2];
    this[offset++] = uInt8Float32Array[1];
    this[offset++] = uInt8Float32Array[0];
    return offset;
  }
  class FastBuffer extends Uint8Array {
    // Using an explicit constructor here is necessary to avoid relying on
    // `Array.prototype[Symbol.iterator]`, which can be mutated by users.
    constructor(bufferOrLength, byteOffset, length) {
      super(bufferOrLength, byteOffset, length);
    }
  }
  function addBufferPrototypeMethods(proto) {
    proto.readBigUInt64LE = readBigUInt64LE;
    proto.readBigUInt64BE = readBigUInt64BE;
    proto.readBigUint64LE = readBigUInt64LE;
    proto.readBigUint64BE = readBigUInt64BE;
    proto.readBigInt64LE = readBigInt64LE;
    proto.readBigInt64BE = readBigInt64BE;
    proto.writeBigUInt64LE = writeBigUInt64LE;
    proto.writeBigUInt64BE = writeBigUInt64BE;
    proto.writeBigUint64LE = writeBigUInt64LE;
    proto.writeBigUint64BE = writeBigUInt64BE;
    proto.writeBigInt64LE = writeBigInt64LE;
    proto.writeBigInt64BE = writeBigInt64BE;

    proto.readUIntLE = readUIntLE;
    proto.readUInt32LE = readUInt32LE;
    proto.readUInt16LE = readUInt16LE;
    proto.readUInt8 = readUInt8;
    proto.readUIntBE = readUIntBE;
    proto.readUInt32BE = readUInt32BE;
    proto.readUInt16BE = readUInt16BE;
    proto.readUintLE = readUIntLE;
    proto.readUint32LE = readUInt32LE;
    proto.readUint16LE = readUInt16LE;
    proto.readUint8 = readUInt8;
    proto.readUintBE = readUIntBE;
    proto.readUint32BE = readUInt32BE;
    proto.readUint16BE = readUInt16BE;
    proto.readIntLE = readIntLE;
    proto.readInt32LE = readInt32LE;
    proto.readInt16LE = readInt16LE;
    proto.readInt8 = readInt8;
    proto.readIntBE = readIntBE;
    proto.readInt32BE = readInt32BE;
    proto.readInt16BE = readInt16BE;

    proto.writeUIntLE = writeUIntLE;
    proto.writeUInt32LE = writeUInt32LE;
    proto.writeUInt16LE = writeUInt16LE;
    proto.writeUInt8 = writeUInt8;
    proto.writeUIntBE = writeUIntBE;
    proto.writeUInt32BE = writeUInt32BE;
    proto.writeUInt16BE = writeUInt16BE;
    proto.writeUintLE = writeUIntLE;
    proto.writeUint32LE = writeUInt32LE;
    proto.writeUint16LE = writeUInt16LE;
    proto.writeUint8 = writeUInt8;
    proto.writeUintBE = writeUIntBE;
    proto.writeUint32BE = writeUInt32BE;
    proto.writeUint16BE = writeUInt16BE;
    proto.writeIntLE = writeIntLE;
    proto.writeInt32LE = writeInt32LE;
    proto.writeInt16LE = writeInt16LE;
    proto.writeInt8 = writeInt8;
    proto.writeIntBE = writeIntBE;
    proto.writeInt32BE = writeInt32BE;
    proto.writeInt16BE = writeInt16BE;

    proto.readFloatLE = bigEndian ? readFloatBackwards : readFloatForwards;
    proto.readFloatBE = bigEndian ? readFloatForwards : readFloatBackwards;
    proto.readDoubleLE = bigEndian ? readDoubleBackwards : readDoubleForwards;
    proto.readDoubleBE = bigEndian ? readDoubleForwards : readDoubleBackwards;
    proto.writeFloatLE = bigEndian ? writeFloatBackwards : writeFloatForwards;
    proto.writeFloatBE = bigEndian ? writeFloatForwards : writeFloatBackwards;
    proto.writeDoubleLE = bigEndian ? writeDoubleBackwards : writeDoubleForwards;
    proto.writeDoubleBE = bigEndian ? writeDoubleForwards : writeDoubleBackwards;

    proto.asciiSlice = makeSlice('ascii', 'asciiSlice');
    proto.base64Slice = makeSlice('base64', 'base64Slice');
    proto.base64urlSlice = makeSlice('base64url', 'base64urlSlice');
    proto.latin1Slice = makeSlice('latin1', 'latin1Slice');
    proto.hexSlice = makeSlice('hex', 'hexSlice');
    proto.ucs2Slice = makeSlice('utf16le', 'ucs2Slice');
    proto.utf8Slice = makeSlice('utf8', 'utf8Slice');
    proto.asciiWrite = makeWrite('ascii', 'asciiWrite');
    proto.base64Write = makeWrite('base64', 'base64Write');
    proto.base64urlWrite = makeWrite('base64url', 'base64urlWrite');
    proto.latin1Write = makeWrite('latin1', 'latin1Write');
    proto.hexWrite = makeWrite('hex', 'hexWrite');
    proto.ucs2Write = makeWrite('utf16le', 'ucs2Write');
    proto.utf8Write = makeWrite('utf8', 'utf8Write');
  }
  // Node's createUnsafeBuffer (its memory zeroed here, as no pool or
  // uninitialized memory is kept).
  const createUnsafeBuffer = (size) => new FastBuffer(size);

  // --- lib/buffer.js ---
  FastBuffer.prototype.constructor = Buffer;
  Buffer.prototype = FastBuffer.prototype;
  addBufferPrototypeMethods(Buffer.prototype);

  const bufferConstants = ObjectDefineProperties({}, {
    MAX_LENGTH: { __proto__: null, value: kMaxLength, writable: false, enumerable: true },
    MAX_STRING_LENGTH: { __proto__: null, value: kStringMaxLength, writable: false, enumerable: true },
  });
  Buffer.poolSize = 8 * 1024;

  let bufferWarningAlreadyEmitted = false;
  const bufferWarning = 'Buffer() is deprecated due to security and usability ' +
                        'issues. Please use the Buffer.alloc(), ' +
                        'Buffer.allocUnsafe(), or Buffer.from() methods instead.';
  // Node's: once, for a call from outside node_modules (here, any).
  function showFlaggedDeprecation() {
    if (bufferWarningAlreadyEmitted) return;
    process.emitWarning(bufferWarning, 'DeprecationWarning', 'DEP0005');
    bufferWarningAlreadyEmitted = true;
  }
  function toInteger(n, defaultVal) {
    n = +n;
    if (!NumberIsNaN(n) && n >= Number.MIN_SAFE_INTEGER && n <= Number.MAX_SAFE_INTEGER) {
      return ((n % 1) === 0 ? n : MathFloor(n));
    }
    return defaultVal;
  }
  function _copy(source, target, targetStart, sourceStart, sourceEnd) {
    if (!isUint8Array(source)) throw invalidArgType('source', ['Buffer', 'Uint8Array'], source);
    if (!isUint8Array(target)) throw invalidArgType('target', ['Buffer', 'Uint8Array'], target);
    if (targetStart === undefined) {
      targetStart = 0;
    } else {
      targetStart = NumberIsInteger(targetStart) ? targetStart : toInteger(targetStart, 0);
      if (targetStart < 0) throw outOfRange('targetStart', '>= 0', targetStart);
    }
    if (sourceStart === undefined) {
      sourceStart = 0;
    } else {
      sourceStart = NumberIsInteger(sourceStart) ? sourceStart : toInteger(sourceStart, 0);
      if (sourceStart < 0 || sourceStart > source.length) {
        throw outOfRange('sourceStart', `>= 0 && <= ${source.length}`, sourceStart);
      }
    }
    if (sourceEnd === undefined) {
      sourceEnd = source.length;
    } else {
      sourceEnd = NumberIsInteger(sourceEnd) ? sourceEnd : toInteger(sourceEnd, 0);
      if (sourceEnd < 0) throw outOfRange('sourceEnd', '>= 0', sourceEnd);
    }
    if (targetStart >= target.length || sourceStart >= sourceEnd) return 0;
    return _copyActual(source, target, targetStart, sourceStart, sourceEnd);
  }
  function _copyActual(source, target, targetStart, sourceStart, sourceEnd) {
    if (sourceEnd - sourceStart > target.length - targetStart) sourceEnd = sourceStart + target.length - targetStart;
    let nb = sourceEnd - sourceStart;
    const sourceLen = source.length - sourceStart;
    if (nb > sourceLen) nb = sourceLen;
    if (sourceStart !== 0 || sourceEnd < source.length) {
      source = new Uint8ArrayCtor(source.buffer, source.byteOffset + sourceStart, nb);
    }
    TypedArrayPrototypeSet(target, source, targetStart);
    return nb;
  }
  // The deprecated constructor (DEP0005): Buffer(arg) and new Buffer(arg)
  // make a Buffer as Buffer.alloc or Buffer.from would.
  function Buffer(arg, encodingOrOffset, length) {
    showFlaggedDeprecation();
    // Common case.
    if (typeof arg === 'number') {
      if (typeof encodingOrOffset === 'string') throw invalidArgType('string', 'string', arg);
      return Buffer.alloc(arg);
    }
    return Buffer.from(arg, encodingOrOffset, length);
  }
  defineProperty(Buffer, Symbol.species, {
    __proto__: null,
    enumerable: false,
    configurable: true,
    get() { return FastBuffer; },
  });
  Buffer.from = function from(value, encodingOrOffset, length) {
    if (typeof value === 'string') return fromString(value, encodingOrOffset);
    if (typeof value === 'object' && value !== null) {
      if (isAnyArrayBuffer(value)) return fromArrayBuffer(value, encodingOrOffset, length);
      const valueOf = value.valueOf && value.valueOf();
      if (valueOf != null && valueOf !== value && (typeof valueOf === 'string' || typeof valueOf === 'object')) {
        return from(valueOf, encodingOrOffset, length);
      }
      const b = fromObject(value);
      if (b) return b;
      if (typeof value[Symbol.toPrimitive] === 'function') {
        const primitive = value[Symbol.toPrimitive]('string');
        if (typeof primitive === 'string') return fromString(primitive, encodingOrOffset);
      }
    }
    throw invalidArgType('first argument', ['string', 'Buffer', 'ArrayBuffer', 'Array', 'Array-like Object'], value);
  };
  Buffer.copyBytesFrom = function copyBytesFrom(view, offset, length) {
    if (!isTypedArray(view)) throw invalidArgType('view', ['TypedArray'], view);
    const viewLength = TypedArrayPrototypeGetLength(view);
    if (viewLength === 0) return Buffer.alloc(0);
    if (offset !== undefined || length !== undefined) {
      if (offset !== undefined) {
        validateInteger(offset, 'offset', 0);
        if (offset >= viewLength) return Buffer.alloc(0);
      } else {
        offset = 0;
      }
      let end;
      if (length !== undefined) {
        validateInteger(length, 'length', 0);
        end = offset + length;
      } else {
        end = viewLength;
      }
      view = TypedArrayPrototypeSlice(view, offset, end);
    }
    return fromArrayLike(new Uint8ArrayCtor(TypedArrayPrototypeGetBuffer(view), TypedArrayPrototypeGetByteOffset(view),
      TypedArrayPrototypeGetByteLength(view)));
  };
  // An arrow, as Node's: Buffer.of is no constructor.
  const of = (...items) => {
    const newObj = createUnsafeBuffer(items.length);
    for (let k = 0; k < items.length; k++) newObj[k] = items[k];
    return newObj;
  };
  Buffer.of = of;
  ObjectSetPrototypeOf(Buffer, Uint8Array);
  Buffer.alloc = function alloc(size, fill, encoding) {
    validateNumber(size, 'size', 0, kMaxLength);
    if (fill !== undefined && fill !== 0 && size > 0) {
      const buf = createUnsafeBuffer(size);
      return _fill(buf, fill, 0, buf.length, encoding);
    }
    return new FastBuffer(size);
  };
  Buffer.allocUnsafe = function allocUnsafe(size) {
    validateNumber(size, 'size', 0, kMaxLength);
    return allocate(size);
  };
  Buffer.allocUnsafeSlow = function allocUnsafeSlow(size) {
    validateNumber(size, 'size', 0, kMaxLength);
    return createUnsafeBuffer(size);
  };
  function SlowBuffer(size) {
    validateNumber(size, 'size', 0, kMaxLength);
    return createUnsafeBuffer(size);
  }
  ObjectSetPrototypeOf(SlowBuffer.prototype, Uint8Array.prototype);
  ObjectSetPrototypeOf(SlowBuffer, Uint8Array);
  function allocate(size) {
    if (size <= 0) return new FastBuffer();
    return createUnsafeBuffer(size);
  }
  // A buffer of exactly the first `actual` bytes of `b`.
  function exactly(b, actual) {
    if (actual === TypedArrayPrototypeGetLength(b)) return b;
    const out = new FastBuffer(actual);
    TypedArrayPrototypeSet(out, byteRange(b, 0, actual));
    return out;
  }
  function fromStringFast(string, ops) {
    const maxLength = Buffer.poolSize >>> 1;
    let length = string.length; // Min length
    if (length >= maxLength) return createFromString(string, ops);
    length *= 4; // Max length (4 bytes per character)
    if (length >= maxLength) length = ops.byteLength(string); // Actual length
    if (length >= maxLength) return createFromString(string, ops, length);
    // Node writes into its pool here; a buffer of the string's own.
    const b = new FastBuffer(length);
    return exactly(b, ops.write(b, string, 0, length));
  }
  function createFromString(string, ops, length = ops.byteLength(string)) {
    const buf = Buffer.allocUnsafeSlow(length);
    const actual = ops.write(buf, string, 0, length);
    return actual < length ? new FastBuffer(buf.buffer, 0, actual) : buf;
  }
  function fromString(string, encoding) {
    let ops;
    if (!encoding || encoding === 'utf8' || typeof encoding !== 'string') {
      ops = encodingOps.utf8;
    } else {
      ops = getEncodingOps(encoding);
      if (ops === undefined) throw unknownEncoding(encoding);
    }
    return string.length === 0 ? new FastBuffer() : fromStringFast(string, ops);
  }
  function fromArrayBuffer(obj, byteOffset, length) {
    // Convert byteOffset to integer
    if (byteOffset === undefined) {
      byteOffset = 0;
    } else {
      byteOffset = +byteOffset;
      if (NumberIsNaN(byteOffset)) byteOffset = 0;
    }
    const maxLength = obj.byteLength - byteOffset;
    if (maxLength < 0) throw bufferOutOfBounds('offset');
    if (length === undefined) {
      length = maxLength;
    } else {
      // Convert length to non-negative integer.
      length = +length;
      if (length > 0) {
        if (length > maxLength) throw bufferOutOfBounds('length');
      } else {
        length = 0;
      }
    }
    // V8's words where its typed array constructor refuses the offset.
    if (byteOffset <= -1) throw new RangeError(`Start offset ${byteOffset} is outside the bounds of the buffer`);
    return new FastBuffer(obj, byteOffset, length);
  }
  function fromArrayLike(obj) {
    if (obj.length <= 0) return new FastBuffer();
    if (obj.length < (Buffer.poolSize >>> 1)) {
      const b = new FastBuffer(obj.length);
      TypedArrayPrototypeSet(b, obj, 0);
      return b;
    }
    return new FastBuffer(obj);
  }
  function fromObject(obj) {
    if (obj.length !== undefined || isAnyArrayBuffer(obj.buffer)) {
      if (typeof obj.length !== 'number') return new FastBuffer();
      return fromArrayLike(obj);
    }
    if (obj.type === 'Buffer' && ArrayIsArray(obj.data)) return fromArrayLike(obj.data);
  }
  Buffer.isBuffer = function isBuffer(b) {
    return b instanceof Buffer;
  };
  Buffer.compare = function compare(buf1, buf2) {
    if (!isUint8Array(buf1)) throw invalidArgType('buf1', ['Buffer', 'Uint8Array'], buf1);
    if (!isUint8Array(buf2)) throw invalidArgType('buf2', ['Buffer', 'Uint8Array'], buf2);
    if (buf1 === buf2) return 0;
    return _compare(buf1, buf2);
  };
  Buffer.isEncoding = function isEncoding(encoding) {
    return typeof encoding === 'string' && encoding.length !== 0 && normalizeEncoding(encoding) !== undefined;
  };
  Buffer[Symbol('kIsEncodingSymbol')] = Buffer.isEncoding;
  Buffer.concat = function concat(list, length) {
    validateArray(list, 'list');
    if (list.length === 0) return new FastBuffer();
    if (length === undefined) {
      length = 0;
      for (let i = 0; i < list.length; i++) {
        if (list[i].length) length += list[i].length;
      }
    } else {
      validateOffset(length, 'length');
    }
    const buffer = Buffer.allocUnsafe(length);
    let pos = 0;
    for (let i = 0; i < list.length; i++) {
      const buf = list[i];
      if (!isUint8Array(buf)) throw invalidArgType(`list[${i}]`, ['Buffer', 'Uint8Array'], list[i]);
      pos += _copyActual(buf, buffer, pos, 0, buf.length);
    }
    // Note: `length` is always equal to `buffer.length` at this point
    if (pos < length) TypedArrayPrototypeFill(buffer, 0, pos, length);
    return buffer;
  };
  const encodingOps = {
    utf8: {
      encoding: 'utf8',
      encodingVal: 'utf8',
      byteLength: byteLengthUtf8,
      write: (buf, string, offset, len) => buf.utf8Write(string, offset, len),
      slice: (buf, start, end) => buf.utf8Slice(start, end),
      indexOf: (buf, val, byteOffset, dir) => indexOfString(buf, val, byteOffset, 'utf8', dir),
    },
    ucs2: {
      encoding: 'ucs2',
      encodingVal: 'utf16le',
      byteLength: (string) => string.length * 2,
      write: (buf, string, offset, len) => buf.ucs2Write(string, offset, len),
      slice: (buf, start, end) => buf.ucs2Slice(start, end),
      indexOf: (buf, val, byteOffset, dir) => indexOfString(buf, val, byteOffset, 'utf16le', dir),
    },
    utf16le: {
      encoding: 'utf16le',
      encodingVal: 'utf16le',
      byteLength: (string) => string.length * 2,
      write: (buf, string, offset, len) => buf.ucs2Write(string, offset, len),
      slice: (buf, start, end) => buf.ucs2Slice(start, end),
      indexOf: (buf, val, byteOffset, dir) => indexOfString(buf, val, byteOffset, 'utf16le', dir),
    },
    latin1: {
      encoding: 'latin1',
      encodingVal: 'latin1',
      byteLength: (string) => string.length,
      write: (buf, string, offset, len) => buf.latin1Write(string, offset, len),
      slice: (buf, start, end) => buf.latin1Slice(start, end),
      indexOf: (buf, val, byteOffset, dir) => indexOfString(buf, val, byteOffset, 'latin1', dir),
    },
    ascii: {
      encoding: 'ascii',
      encodingVal: 'ascii',
      byteLength: (string) => string.length,
      write: (buf, string, offset, len) => buf.asciiWrite(string, offset, len),
      slice: (buf, start, end) => buf.asciiSlice(start, end),
      indexOf: (buf, val, byteOffset, dir) =>
        indexOfBuffer(buf, fromStringFast(val, encodingOps.ascii), byteOffset, 'ascii', dir),
    },
    base64: {
      encoding: 'base64',
      encodingVal: 'base64',
      byteLength: (string) => base64ByteLength(string, string.length),
      write: (buf, string, offset, len) => buf.base64Write(string, offset, len),
      slice: (buf, start, end) => buf.base64Slice(start, end),
      indexOf: (buf, val, byteOffset, dir) =>
        indexOfBuffer(buf, fromStringFast(val, encodingOps.base64), byteOffset, 'base64', dir),
    },
    base64url: {
      encoding: 'base64url',
      encodingVal: 'base64url',
      byteLength: (string) => base64ByteLength(string, string.length),
      write: (buf, string, offset, len) => buf.base64urlWrite(string, offset, len),
      slice: (buf, start, end) => buf.base64urlSlice(start, end),
      indexOf: (buf, val, byteOffset, dir) =>
        indexOfBuffer(buf, fromStringFast(val, encodingOps.base64url), byteOffset, 'base64url', dir),
    },
    hex: {
      encoding: 'hex',
      encodingVal: 'hex',
      byteLength: (string) => string.length >>> 1,
      write: (buf, string, offset, len) => buf.hexWrite(string, offset, len),
      slice: (buf, start, end) => buf.hexSlice(start, end),
      indexOf: (buf, val, byteOffset, dir) =>
        indexOfBuffer(buf, fromStringFast(val, encodingOps.hex), byteOffset, 'hex', dir),
    },
  };
  function getEncodingOps(encoding) {
    encoding += '';
    switch (encoding.length) {
      case 4:
        if (encoding === 'utf8') return encodingOps.utf8;
        if (encoding === 'ucs2') return encodingOps.ucs2;
        encoding = StringPrototypeToLowerCase(encoding);
        if (encoding === 'utf8') return encodingOps.utf8;
        if (encoding === 'ucs2') return encodingOps.ucs2;
        break;
      case 5:
        if (encoding === 'utf-8') return encodingOps.utf8;
        if (encoding === 'ascii') return encodingOps.ascii;
        if (encoding === 'ucs-2') return encodingOps.ucs2;
        encoding = StringPrototypeToLowerCase(encoding);
        if (encoding === 'utf-8') return encodingOps.utf8;
        if (encoding === 'ascii') return encodingOps.ascii;
        if (encoding === 'ucs-2') return encodingOps.ucs2;
        break;
      case 7:
        if (encoding === 'utf16le' || StringPrototypeToLowerCase(encoding) === 'utf16le') return encodingOps.utf16le;
        break;
      case 8:
        if (encoding === 'utf-16le' || StringPrototypeToLowerCase(encoding) === 'utf-16le') return encodingOps.utf16le;
        break;
      case 6:
        if (encoding === 'latin1' || encoding === 'binary') return encodingOps.latin1;
        if (encoding === 'base64') return encodingOps.base64;
        encoding = StringPrototypeToLowerCase(encoding);
        if (encoding === 'latin1' || encoding === 'binary') return encodingOps.latin1;
        if (encoding === 'base64') return encodingOps.base64;
        break;
      case 3:
        if (encoding === 'hex' || StringPrototypeToLowerCase(encoding) === 'hex') return encodingOps.hex;
        break;
      case 9:
        if (encoding === 'base64url' || StringPrototypeToLowerCase(encoding) === 'base64url') {
          return encodingOps.base64url;
        }
        break;
    }
  }
  function byteLength(string, encoding) {
    if (typeof string !== 'string') {
      if (isArrayBufferView(string) || isAnyArrayBuffer(string)) return string.byteLength;
      throw invalidArgType('string', ['string', 'Buffer', 'ArrayBuffer'], string);
    }
    const len = string.length;
    if (len === 0) return 0;
    if (!encoding || encoding === 'utf8') return byteLengthUtf8(string);
    if (encoding === 'ascii') return len;
    const ops = getEncodingOps(encoding);
    if (ops === undefined) {
      // TODO (ronag): Makes more sense to throw here.
      return byteLengthUtf8(string);
    }
    return ops.byteLength(string);
  }
  Buffer.byteLength = byteLength;
  // For backwards compatibility.
  defineProperty(Buffer.prototype, 'parent', {
    __proto__: null,
    enumerable: true,
    get() {
      if (!(this instanceof Buffer)) return undefined;
      return this.buffer;
    },
  });
  defineProperty(Buffer.prototype, 'offset', {
    __proto__: null,
    enumerable: true,
    get() {
      if (!(this instanceof Buffer)) return undefined;
      return this.byteOffset;
    },
  });
  Buffer.prototype.copy = function copy(target, targetStart, sourceStart, sourceEnd) {
    return _copy(this, target, targetStart, sourceStart, sourceEnd);
  };
  // No need to verify that "buf.length <= MAX_UINT32" since it's a read-only
  // property of a typed array.
  // This behaves neither like String nor Uint8Array in that we set start/end
  // to their upper/lower bounds if the value passed is out of range.
  Buffer.prototype.toString = function toString(encoding, start, end) {
    if (arguments.length === 0) return this.utf8Slice(0, this.length);
    const len = this.length;
    if (start <= 0) start = 0;
    else if (start >= len) return '';
    else start = MathTrunc(start) || 0;
    if (end === undefined || end > len) end = len;
    else end = MathTrunc(end) || 0;
    if (end <= start) return '';
    if (encoding === undefined) return this.utf8Slice(start, end);
    const ops = getEncodingOps(encoding);
    if (ops === undefined) throw unknownEncoding(encoding);
    return ops.slice(this, start, end);
  };
  Buffer.prototype.equals = function equals(otherBuffer) {
    if (!isUint8Array(otherBuffer)) throw invalidArgType('otherBuffer', ['Buffer', 'Uint8Array'], otherBuffer);
    if (this === otherBuffer) return true;
    const len = TypedArrayPrototypeGetByteLength(this);
    if (len !== TypedArrayPrototypeGetByteLength(otherBuffer)) return false;
    return len === 0 || _compare(this, otherBuffer) === 0;
  };
  let INSPECT_MAX_BYTES = 50;
  // Override how buffers are presented by util.inspect().
  Buffer.prototype[customInspectSymbol] = function inspect(recurseTimes, ctx) {
    const max = INSPECT_MAX_BYTES;
    const actualMax = MathMin(max, this.length);
    const remaining = this.length - max;
    let str = StringPrototypeTrim(RegExpPrototypeSymbolReplace(/(.{2})/g, this.hexSlice(0, actualMax), '$1 '));
    if (remaining > 0) str += ` ... ${remaining} more byte${remaining > 1 ? 's' : ''}`;
    // Inspect special properties as well, if possible.
    if (ctx) {
      let extras = false;
      const obj = { __proto__: null };
      const keys = typedArrayExtraKeys(this, !ctx.showHidden);
      for (let i = 0; i < keys.length; i++) {
        extras = true;
        obj[keys[i]] = this[keys[i]];
      }
      if (extras) {
        if (this.length !== 0) str += ', ';
        // '[Object: null prototype] {'.length === 26
        // This is guarded with a test.
        str += StringPrototypeSlice(inspectValue(obj, { ...ctx, breakLength: Infinity, compact: true }), 27, -2);
      }
    }
    return `<${this.constructor.name} ${str}>`;
  };
  Buffer.prototype.inspect = Buffer.prototype[customInspectSymbol];
  Buffer.prototype.compare = function compare(target, targetStart, targetEnd, sourceStart, sourceEnd) {
    if (!isUint8Array(target)) throw invalidArgType('target', ['Buffer', 'Uint8Array'], target);
    if (arguments.length === 1) return _compare(this, target);
    if (targetStart === undefined) targetStart = 0;
    else validateOffset(targetStart, 'targetStart');
    if (targetEnd === undefined) targetEnd = target.length;
    else validateOffset(targetEnd, 'targetEnd', 0, target.length);
    if (sourceStart === undefined) sourceStart = 0;
    else validateOffset(sourceStart, 'sourceStart');
    if (sourceEnd === undefined) sourceEnd = this.length;
    else validateOffset(sourceEnd, 'sourceEnd', 0, this.length);
    if (sourceStart >= sourceEnd) return (targetStart >= targetEnd ? 0 : -1);
    if (targetStart >= targetEnd) return 1;
    return compareOffset(this, target, targetStart, sourceStart, targetEnd, sourceEnd);
  };
  // Finds either the first index of `val` in `buffer` at offset >= `byteOffset`,
  // OR the last index of `val` in `buffer` at offset <= `byteOffset`.
  function bidirectionalIndexOf(buffer, val, byteOffset, encoding, dir) {
    validateBuffer(buffer);
    if (typeof byteOffset === 'string') {
      encoding = byteOffset;
      byteOffset = undefined;
    } else if (byteOffset > 0x7fffffff) {
      byteOffset = 0x7fffffff;
    } else if (byteOffset < -0x80000000) {
      byteOffset = -0x80000000;
    }
    // Coerce to Number. Values like null and [] become 0.
    byteOffset = +byteOffset;
    // If the offset is undefined, "foo", {}, coerces to NaN, search whole buffer.
    if (NumberIsNaN(byteOffset)) byteOffset = dir ? 0 : (buffer.length || buffer.byteLength);
    dir = !!dir; // Cast to bool.
    if (typeof val === 'number') return indexOfNumber(buffer, val >>> 0, byteOffset, dir);
    let ops;
    if (encoding === undefined) ops = encodingOps.utf8;
    else ops = getEncodingOps(encoding);
    if (typeof val === 'string') {
      if (ops === undefined) throw unknownEncoding(encoding);
      return ops.indexOf(buffer, val, byteOffset, dir);
    }
    if (isUint8Array(val)) {
      const encodingVal = (ops === undefined ? 'utf8' : ops.encodingVal);
      return indexOfBuffer(buffer, val, byteOffset, encodingVal, dir);
    }
    throw invalidArgType('value', ['number', 'string', 'Buffer', 'Uint8Array'], val);
  }
  Buffer.prototype.indexOf = function indexOf(val, byteOffset, encoding) {
    return bidirectionalIndexOf(this, val, byteOffset, encoding, true);
  };
  Buffer.prototype.lastIndexOf = function lastIndexOf(val, byteOffset, encoding) {
    return bidirectionalIndexOf(this, val, byteOffset, encoding, false);
  };
  Buffer.prototype.includes = function includes(val, byteOffset, encoding) {
    return this.indexOf(val, byteOffset, encoding) !== -1;
  };
  // Usage:
  //    buffer.fill(number[, offset[, end]])
  //    buffer.fill(buffer[, offset[, end]])
  //    buffer.fill(string[, offset[, end]][, encoding])
  Buffer.prototype.fill = function fill(value, offset, end, encoding) {
    return _fill(this, value, offset, end, encoding);
  };
  function _fill(buf, value, offset, end, encoding) {
    if (typeof value === 'string') {
      if (offset === undefined || typeof offset === 'string') {
        encoding = offset;
        offset = 0;
        end = buf.length;
      } else if (typeof end === 'string') {
        encoding = end;
        end = buf.length;
      }
      const normalizedEncoding = normalizeEncoding(encoding);
      if (normalizedEncoding === undefined) {
        validateString(encoding, 'encoding');
        throw unknownEncoding(encoding);
      }
      if (value.length === 0) {
        // If value === '' default to zero.
        value = 0;
      } else if (value.length === 1) {
        // Fast path: If `value` fits into a single byte, use that numeric value.
        if (normalizedEncoding === 'utf8') {
          const code = StringPrototypeCharCodeAt(value, 0);
          if (code < 128) value = code;
        } else if (normalizedEncoding === 'latin1') {
          value = StringPrototypeCharCodeAt(value, 0);
        }
      }
    } else {
      encoding = undefined;
    }
    if (offset === undefined) {
      offset = 0;
      end = buf.length;
    } else {
      validateOffset(offset, 'offset');
      // Invalid ranges are not set to a default, so can range check early.
      if (end === undefined) {
        end = buf.length;
      } else {
        validateOffset(end, 'end', 0, buf.length);
      }
      if (offset >= end) return buf;
    }
    if (typeof value === 'number') {
      // OOB check
      const byteLen = TypedArrayPrototypeGetByteLength(buf);
      const fillLength = end - offset;
      if (offset > end || fillLength + offset > byteLen) throw bufferOutOfBounds();
      TypedArrayPrototypeFill(buf, value, offset, end);
    } else {
      const res = bindingFill(buf, value, offset, end, encoding);
      if (res < 0) {
        if (res === -1) throw invalidArgValue('value', value, 'is invalid');
        throw bufferOutOfBounds();
      }
    }
    return buf;
  }
  Buffer.prototype.write = function write(string, offset, length, encoding) {
    // Buffer#write(string);
    if (offset === undefined) return this.utf8Write(string, 0, this.length);
    // Buffer#write(string, encoding)
    if (length === undefined && typeof offset === 'string') {
      encoding = offset;
      length = this.length;
      offset = 0;
    // Buffer#write(string, offset[, length][, encoding])
    } else {
      validateOffset(offset, 'offset', 0, this.length);
      const remaining = this.length - offset;
      if (length === undefined) {
        length = remaining;
      } else if (typeof length === 'string') {
        encoding = length;
        length = remaining;
      } else {
        validateOffset(length, 'length', 0, this.length);
        if (length > remaining) length = remaining;
      }
    }
    if (!encoding || encoding === 'utf8') return this.utf8Write(string, offset, length);
    if (encoding === 'ascii') return this.asciiWrite(string, offset, length);
    const ops = getEncodingOps(encoding);
    if (ops === undefined) throw unknownEncoding(encoding);
    return ops.write(this, string, offset, length);
  };
  Buffer.prototype.toJSON = function toJSON() {
    if (this.length > 0) {
      const data = new Array(this.length);
      for (let i = 0; i < this.length; ++i) data[i] = this[i];
      return { type: 'Buffer', data };
    }
    return { type: 'Buffer', data: [] };
  };
  function adjustOffset(offset, length) {
    // Use Math.trunc() to convert offset to an integer value that can be larger
    // than an Int32. Hence, don't use offset | 0 or similar techniques.
    offset = MathTrunc(offset);
    if (offset === 0) return 0;
    if (offset < 0) {
      offset += length;
      return offset > 0 ? offset : 0;
    }
    if (offset < length) return offset;
    return NumberIsNaN(offset) ? 0 : length;
  }
  Buffer.prototype.subarray = function subarray(start, end) {
    const srcLength = this.length;
    start = adjustOffset(start, srcLength);
    end = end !== undefined ? adjustOffset(end, srcLength) : srcLength;
    const newLength = end > start ? end - start : 0;
    return new FastBuffer(this.buffer, this.byteOffset + start, newLength);
  };
  Buffer.prototype.slice = function slice(start, end) {
    return this.subarray(start, end);
  };
  function swap(b, n, m) {
    const i = b[n];
    b[n] = b[m];
    b[m] = i;
  }
  Buffer.prototype.swap16 = function swap16() {
    // For Buffer.length < 128, it's generally faster to
    // do the swap in javascript. For larger buffers,
    // dropping down to the native code is faster.
    const len = this.length;
    if (len % 2 !== 0) throw coded(new RangeError('Buffer size must be a multiple of 16-bits'), 'ERR_INVALID_BUFFER_SIZE');
    if (len < 128) {
      for (let i = 0; i < len; i += 2) swap(this, i, i + 1);
      return this;
    }
    swapBytes(viewBytes(this), 2);
    return this;
  };
  Buffer.prototype.swap32 = function swap32() {
    const len = this.length;
    if (len % 4 !== 0) throw coded(new RangeError('Buffer size must be a multiple of 32-bits'), 'ERR_INVALID_BUFFER_SIZE');
    if (len < 192) {
      for (let i = 0; i < len; i += 4) {
        swap(this, i, i + 3);
        swap(this, i + 1, i + 2);
      }
      return this;
    }
    swapBytes(viewBytes(this), 4);
    return this;
  };
  Buffer.prototype.swap64 = function swap64() {
    const len = this.length;
    if (len % 8 !== 0) throw coded(new RangeError('Buffer size must be a multiple of 64-bits'), 'ERR_INVALID_BUFFER_SIZE');
    if (len < 192) {
      for (let i = 0; i < len; i += 8) {
        swap(this, i, i + 7);
        swap(this, i + 1, i + 6);
        swap(this, i + 2, i + 5);
        swap(this, i + 3, i + 4);
      }
      return this;
    }
    swapBytes(viewBytes(this), 8);
    return this;
  };
  Buffer.prototype.toLocaleString = Buffer.prototype.toString;
  // Node's buffer.isUtf8 and isAscii (simdutf's checks).
  function isUtf8(input) {
    if (isTypedArray(input) || isAnyArrayBuffer(input)) {
      const b = isTypedArray(input) ? viewBytes(input) : new Uint8ArrayCtor(input);
      decodeUtf8(b, 0, TypedArrayPrototypeGetLength(b));
      return !utf8Replaced;
    }
    throw invalidArgType('input', ['ArrayBuffer', 'Buffer', 'TypedArray'], input);
  }
  function isAscii(input) {
    if (isTypedArray(input) || isAnyArrayBuffer(input)) {
      const b = isTypedArray(input) ? viewBytes(input) : new Uint8ArrayCtor(input);
      return RegExpPrototypeExec(nonAsciiByte, latin1String(b, 0, TypedArrayPrototypeGetLength(b))) === null;
    }
    throw invalidArgType('input', ['ArrayBuffer', 'Buffer', 'TypedArray'], input);
  }
  // require('buffer'): Node's module, without transcode (ICU's
  // converters and their substitutions), Blob, File and
  // resolveObjectURL.
  const bufferModule = {
    Buffer,
    SlowBuffer,
    isUtf8,
    isAscii,
    // Legacy
    kMaxLength,
    kStringMaxLength,
    btoa: engineBtoa,
    atob: globalThis.atob,
  };
  ObjectDefineProperties(bufferModule, {
    constants: { __proto__: null, configurable: false, enumerable: true, value: bufferConstants },
    INSPECT_MAX_BYTES: {
      __proto__: null,
      configurable: true,
      enumerable: true,
      get() { return INSPECT_MAX_BYTES; },
      set(val) {
        validateNumber(val, 'INSPECT_MAX_BYTES', 0);
        INSPECT_MAX_BYTES = val;
      },
    },
  });

  // --- TextDecoder (lib/internal/encoding.js, on ICU) ---
  // The labels of the encodings decoded here (WHATWG's, as Node's table
  // has them); Node's ICU knows the others too.
  const encodingLabels = SafeMap();
  for (const [enc, labels] of [
    ['utf-8', ['unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'utf8', 'utf-8', 'x-unicode20utf8']],
    ['windows-1252', ['ansi_x3.4-1968', 'ascii', 'cp1252', 'cp819', 'csisolatin1', 'ibm819', 'iso-8859-1',
      'iso-ir-100', 'iso8859-1', 'iso88591', 'iso_8859-1', 'iso_8859-1:1987', 'l1', 'latin1', 'us-ascii',
      'windows-1252', 'x-cp1252']],
    ['utf-16be', ['unicodefffe', 'utf-16be']],
    ['utf-16le', ['csunicode', 'iso-10646-ucs-2', 'ucs-2', 'unicode', 'unicodefeff', 'utf-16le', 'utf-16']],
  ]) {
    for (let i = 0; i < labels.length; i++) encodingLabels.set(labels[i], enc);
  }
  // Unfortunately, String.prototype.trim also removes non-ascii whitespace,
  // so we have to do this manually
  function trimAsciiWhitespace(label) {
    let s = 0;
    let e = label.length;
    const ws = (c) => c === '\u0009' || c === '\u000a' || c === '\u000c' || c === '\u000d' || c === '\u0020';
    while (s < e && ws(label[s])) s++;
    while (e > s && ws(label[e - 1])) e--;
    return StringPrototypeSlice(label, s, e);
  }
  function getEncodingFromLabel(label) {
    const enc = encodingLabels.get(label);
    if (enc !== undefined) return enc;
    return encodingLabels.get(trimAsciiWhitespace(StringPrototypeToLowerCase(label)));
  }
  const kHandle = Symbol('handle');
  const kFlags = Symbol('flags');
  const kEncoding = Symbol('encoding');
  const kDecoder = Symbol('decoder');
  const kFatal = Symbol('kFatal');
  const kUTF8FastPath = Symbol('kUTF8FastPath');
  const kLatin1FastPath = Symbol('kLatin1FastPath');
  const kIgnoreBOM = Symbol('kIgnoreBOM');
  const CONVERTER_FLAGS_FLUSH = 0x1;
  const CONVERTER_FLAGS_FATAL = 0x2;
  const CONVERTER_FLAGS_IGNORE_BOM = 0x4;
  const emptyBytes = new Uint8ArrayCtor(0);
  const encodingNotSupported = (encoding) =>
    coded(new RangeError(`The "${encoding}" encoding is not supported`), 'ERR_ENCODING_NOT_SUPPORTED');
  const invalidEncodedData = (encoding) =>
    coded(new TypeError(`The encoded data was not valid for encoding ${encoding}`), 'ERR_ENCODING_INVALID_ENCODED_DATA');
  function validateDecoder(obj) {
    if (obj == null || obj[kDecoder] !== true) throw invalidThis('TextDecoder');
  }
  // The bytes of a decoder's input, or undefined for an input of another
  // kind.
  function inputBytes(input) {
    if (isAnyArrayBuffer(input)) return new Uint8ArrayCtor(input);
    if (isArrayBufferView(input)) return viewBytes(input);
    return undefined;
  }
  const listTypeError = (name) => coded(new TypeError(`The "${name}" argument must be an instance of ` +
    'SharedArrayBuffer, ArrayBuffer or ArrayBufferView.'), 'ERR_INVALID_ARG_TYPE');
  // Node's decodeUTF8 and decodeLatin1 (a decoder that never streamed).
  function decodeUTF8(input, ignoreBOM, fatal) {
    const b = inputBytes(input);
    if (b === undefined) throw listTypeError('list');
    const len = TypedArrayPrototypeGetLength(b);
    const start = !ignoreBOM && len >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
    const s = decodeUtf8(b, start, len);
    if (fatal && utf8Replaced) throw invalidEncodedData('utf-8');
    return s;
  }
  function decodeLatin1(input, ignoreBOM, fatal) {
    const b = inputBytes(input);
    if (b === undefined) {
      throw coded(new TypeError('The "input" argument must be an instance of ArrayBuffer, SharedArrayBuffer, ' +
        'or ArrayBufferView.'), 'ERR_INVALID_ARG_TYPE');
    }
    return latin1String(b, 0, TypedArrayPrototypeGetLength(b));
  }
  // windows-1252's 0x80-0x9f (WHATWG's index; ICU's converter).
  const cp1252 = [0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039,
    0x152, 0x8d, 0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122,
    0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178];
  // ICU's converter as Node's ConverterObject drives it: a streaming
  // decoder that keeps an unfinished sequence for the next call, drops a
  // BOM at the start of a stream of a Unicode encoding (unless
  // ignoreBOM), and, fatal, throws on ill-formed input and starts over.
  class Converter {
    constructor(encoding, flags) {
      this.encoding = encoding;
      this.fatal = (flags & CONVERTER_FLAGS_FATAL) !== 0;
      this.ignoreBOM = (flags & CONVERTER_FLAGS_IGNORE_BOM) !== 0;
      this.bomSeen = false;
      this.pending = emptyBytes;
    }
    reset() {
      this.bomSeen = false;
      this.pending = emptyBytes;
    }
    decode(b, flush) {
      if (this.pending.length !== 0) {
        const joined = new Uint8ArrayCtor(this.pending.length + TypedArrayPrototypeGetLength(b));
        TypedArrayPrototypeSet(joined, this.pending);
        TypedArrayPrototypeSet(joined, b, this.pending.length);
        b = joined;
        this.pending = emptyBytes;
      }
      const len = TypedArrayPrototypeGetLength(b);
      let result;
      let bad = false;
      if (this.encoding === 'utf-8') {
        const end = flush ? len : utf8Tail(b, 0, len);
        result = decodeUtf8(b, 0, end);
        bad = utf8Replaced;
        if (end < len) this.pending = TypedArrayPrototypeSlice(b, end, len);
      } else if (this.encoding === 'windows-1252') {
        result = latin1String(b, 0, len);
        if (RegExpPrototypeExec(nonAsciiByte, result) !== null) {
          const units = new Uint16ArrayCtor(len);
          for (let i = 0; i < len; i++) units[i] = b[i] >= 0x80 && b[i] < 0xa0 ? cp1252[b[i] - 0x80] : b[i];
          result = sliceText(new Uint8ArrayCtor(units.buffer), 'utf16le', 0, 2 * len);
        }
      } else {
        [result, bad] = this.decodeUtf16(b, len, flush, this.encoding === 'utf-16be');
      }
      if (bad && this.fatal) {
        this.reset();
        throw invalidEncodedData(this.encoding);
      }
      if (this.encoding !== 'windows-1252' && !this.ignoreBOM && !this.bomSeen && result.length > 0) {
        if (StringPrototypeCharCodeAt(result, 0) === 0xfeff) result = StringPrototypeSlice(result, 1);
        this.bomSeen = true;
      }
      if (flush) this.reset();
      return result;
    }
    // UTF-16: a lone surrogate, or an odd byte at the end of the stream,
    // is U+FFFD; an unfinished unit or a high surrogate at the end of a
    // chunk waits for the next.
    decodeUtf16(b, len, flush, be) {
      const units = new Uint16ArrayCtor(len + 1);
      let n = 0;
      let bad = false;
      let i = 0;
      for (; i + 1 < len; i += 2) {
        const u = be ? b[i] << 8 | b[i + 1] : b[i] | b[i + 1] << 8;
        if (u >= 0xd800 && u <= 0xdbff) {
          if (i + 3 >= len) {
            if (!flush) break;
            units[n++] = 0xfffd;
            bad = true;
            continue;
          }
          const v = be ? b[i + 2] << 8 | b[i + 3] : b[i + 2] | b[i + 3] << 8;
          if (v >= 0xdc00 && v <= 0xdfff) {
            units[n++] = u;
            units[n++] = v;
            i += 2;
          } else {
            units[n++] = 0xfffd;
            bad = true;
          }
        } else if (u >= 0xdc00 && u <= 0xdfff) {
          units[n++] = 0xfffd;
          bad = true;
        } else {
          units[n++] = u;
        }
      }
      if (i < len) {
        if (flush) {
          units[n++] = 0xfffd;
          bad = true;
        } else {
          this.pending = TypedArrayPrototypeSlice(b, i, len);
        }
      }
      return [sliceText(new Uint8ArrayCtor(units.buffer), 'utf16le', 0, 2 * n), bad];
    }
  }
  // Node's `_decode` (the ICU binding).
  function converterDecode(handle, input, flags, encoding) {
    const b = inputBytes(input);
    if (b === undefined) throw listTypeError('input');
    return handle.decode(b, (flags & CONVERTER_FLAGS_FLUSH) !== 0);
  }
  class TextDecoder {
    constructor(encoding = 'utf-8', options = kEmptyObject) {
      encoding = `${encoding}`;
      if (options !== null) validateObject(options, 'options', true);
      const enc = getEncodingFromLabel(encoding);
      if (enc === undefined) throw encodingNotSupported(encoding);
      let flags = 0;
      if (options !== null) {
        flags |= options.fatal ? CONVERTER_FLAGS_FATAL : 0;
        flags |= options.ignoreBOM ? CONVERTER_FLAGS_IGNORE_BOM : 0;
      }
      this[kDecoder] = true;
      this[kFlags] = flags;
      this[kEncoding] = enc;
      this[kIgnoreBOM] = Boolean(options?.ignoreBOM);
      this[kFatal] = Boolean(options?.fatal);
      // Only support fast path for UTF-8.
      this[kUTF8FastPath] = enc === 'utf-8';
      this[kLatin1FastPath] = enc === 'windows-1252';
      this[kHandle] = undefined;
      if (!this[kUTF8FastPath] && !this[kLatin1FastPath]) this.#prepareConverter();
    }
    #prepareConverter() {
      if (this[kHandle] !== undefined) return;
      this[kHandle] = new Converter(this[kEncoding], this[kFlags]);
    }
    decode(input = emptyBytes, options = kEmptyObject) {
      validateDecoder(this);
      this[kUTF8FastPath] &&= !(options?.stream);
      this[kLatin1FastPath] &&= !(options?.stream);
      if (this[kUTF8FastPath]) return decodeUTF8(input, this[kIgnoreBOM], this[kFatal]);
      if (this[kLatin1FastPath]) return decodeLatin1(input, this[kIgnoreBOM], this[kFatal]);
      this.#prepareConverter();
      if (options !== null) validateObject(options, 'options', true);
      let flags = 0;
      if (options !== null) flags |= options.stream ? 0 : CONVERTER_FLAGS_FLUSH;
      return converterDecode(this[kHandle], input, flags, this.encoding);
    }
  }
  const getConstructorOf = (obj) => {
    while (obj) {
      const descriptor = getOwnDescriptor(obj, 'constructor');
      if (descriptor !== undefined && typeof descriptor.value === 'function' && descriptor.value.name !== '') {
        return descriptor.value;
      }
      obj = ObjectGetPrototypeOf(obj);
    }
    return null;
  };
  // Mix in some shared properties.
  const textDecoderShared = Object.getOwnPropertyDescriptors({
    get encoding() {
      validateDecoder(this);
      return this[kEncoding];
    },
    get fatal() {
      validateDecoder(this);
      return (this[kFlags] & CONVERTER_FLAGS_FATAL) === CONVERTER_FLAGS_FATAL;
    },
    get ignoreBOM() {
      validateDecoder(this);
      return (this[kFlags] & CONVERTER_FLAGS_IGNORE_BOM) === CONVERTER_FLAGS_IGNORE_BOM;
    },
    [customInspectSymbol](depth, opts) {
      validateDecoder(this);
      if (typeof depth === 'number' && depth < 0) return this;
      const constructor = getConstructorOf(this) || TextDecoder;
      const obj = { __proto__: { constructor } };
      obj.encoding = this.encoding;
      obj.fatal = this.fatal;
      obj.ignoreBOM = this.ignoreBOM;
      if (opts.showHidden) {
        obj[kFlags] = this[kFlags];
        obj[kHandle] = this[kHandle];
      }
      return `${constructor.name} ${inspectValue(obj)}`;
    },
  });
  for (const key of ReflectOwnKeys(textDecoderShared)) ObjectSetPrototypeOf(textDecoderShared[key], null);
  textDecoderShared[customInspectSymbol].enumerable = false;
  const kEnumerableProperty = { __proto__: null, enumerable: true };
  ObjectDefineProperties(TextDecoder.prototype, {
    decode: kEnumerableProperty,
    ...textDecoderShared,
    [Symbol.toStringTag]: { __proto__: null, configurable: true, value: 'TextDecoder' },
  });

  // fs: readFileSync, writeSync, and stat, whose callback runs as an I/O
  // completion in the loop's poll phase.
  const io = SafeMap();
  // How many fs.stat requests are pending (`MapSize`: Map.prototype's
  // size getter, captured below).
  const ioPending = () => ReflectApply(MapSize, io, []);
  // Node's uvException: `errno`, `code`, `syscall`, `path`, in that
  // order (a read of a directory has no path, as Node's).
  function fsError(r, syscall, path) {
    const e = new Error(r[0] + ': ' + r[1] + ', ' + syscall + (path === undefined ? '' : " '" + path + "'"));
    if (r[2]) e.errno = Number(r[2]);
    e.code = r[0];
    e.syscall = syscall;
    if (path !== undefined) e.path = path;
    return e;
  }
  // Node's validatePath (a string; a Uint8Array's bytes and a URL's
  // path as text).
  function checkPath(path) {
    if (typeof path === 'string') return path;
    if (isUint8Array(path)) return decodeUtf8(path, 0, TypedArrayPrototypeGetLength(path));
    if (typeof URL === 'function' && path instanceof URL) return path.pathname;
    throw argTypeError('path', 'of type string or an instance of Buffer or URL', path);
  }
  // Node's Stats: its numbers, dates and type tests (from `mode`).
  class Stats {
    constructor(r) {
      const n = (i) => Number(r[i]);
      this.dev = n(1); this.mode = n(2); this.nlink = n(3); this.uid = n(4);
      this.gid = n(5); this.rdev = n(6); this.blksize = n(7); this.ino = n(8);
      this.size = n(9); this.blocks = n(10);
      this.atimeMs = n(11); this.mtimeMs = n(12); this.ctimeMs = n(13); this.birthtimeMs = n(14);
      // Node's dateFromMs rounds to the millisecond.
      const date = (ms) => new Date(Math.round(ms));
      this.atime = date(this.atimeMs); this.mtime = date(this.mtimeMs);
      this.ctime = date(this.ctimeMs); this.birthtime = date(this.birthtimeMs);
    }
    isFile() { return (this.mode & 0o170000) === 0o100000; }
    isDirectory() { return (this.mode & 0o170000) === 0o040000; }
    isSymbolicLink() { return (this.mode & 0o170000) === 0o120000; }
    isFIFO() { return (this.mode & 0o170000) === 0o010000; }
    isSocket() { return (this.mode & 0o170000) === 0o140000; }
    isCharacterDevice() { return (this.mode & 0o170000) === 0o020000; }
    isBlockDevice() { return (this.mode & 0o170000) === 0o060000; }
  }
  const stats = (r) => new Stats(r);
  // Node's getValidatedFd.
  function getValidatedFd(fd, propName = 'fd') {
    if (Object.is(fd, -0)) return 0;
    validateInt32(fd, propName, 0);
    return fd;
  }
  // Node's validateOffsetLengthWrite (lib/internal/fs/utils.js).
  function validateOffsetLengthWrite(offset, length, byteLength) {
    if (offset > byteLength) throw outOfRange('offset', `<= ${byteLength}`, offset);
    if (length > byteLength - offset) throw outOfRange('length', `<= ${byteLength - offset}`, length);
    if (length < 0) throw outOfRange('length', '>= 0', length);
    validateInt32(length, 'length', 0);
  }
  // Node's validateEncoding (lib/internal/validators.js).
  function validateDataEncoding(data, encoding) {
    const normalizedEncoding = normalizeEncoding(encoding);
    const length = data.length;
    if (normalizedEncoding === 'hex' && length % 2 !== 0) {
      throw invalidArgValue('encoding', encoding, `is invalid for data of length ${length}`);
    }
  }
  // Node's getOptions and assertEncoding (lib/internal/fs/utils.js).
  function getOptions(options, defaultOptions = kEmptyObject) {
    if (options == null || typeof options === 'function') return defaultOptions;
    if (typeof options === 'string') {
      defaultOptions = { ...defaultOptions };
      defaultOptions.encoding = options;
      options = defaultOptions;
    } else if (typeof options !== 'object') {
      throw invalidArgType('options', ['string', 'Object'], options);
    }
    if (options.encoding !== 'buffer' && options.encoding && !Buffer.isEncoding(options.encoding)) {
      throw invalidArgValue('encoding', options.encoding, 'is invalid encoding');
    }
    if (options.signal !== undefined) validateAbortSignal(options.signal, 'options.signal');
    return options;
  }
  // A file's bytes as a Buffer (the host's read), or its error.
  function readFileBytes(path, fd, syscall) {
    const r = host.readFile(path);
    if (ArrayIsArray(r)) {
      if (fd && r[0] === 'ENOENT') throw fsError(['EBADF', 'bad file descriptor', '-9'], syscall);
      // A directory opens, and its read fails (Node's EISDIR, no path).
      if (fd || r[0] === 'EISDIR') throw fsError(r, 'read');
      throw fsError(r, 'open', path);
    }
    return new FastBuffer(r);
  }
  const fs = {
    // Node's writeSync: a view's bytes, or a string in an encoding (its
    // `position`, and a string's, are not taken: the host writes on at
    // the stream's end).
    writeSync(fd, buffer, offsetOrOptions, length, position) {
      fd = getValidatedFd(fd);
      // As Node's, a write to a pipe whose reader is gone throws.
      const check = (errno) => { if (errno !== 0) throw pipeError(true); };
      // Another descriptor than stdout's and stderr's: written as it is
      // (tljs), or EBADF (an embedded program has none of its own).
      const stdio = fd === 1 || fd === 2;
      const put = (bytes) => {
        if (stdio) return check(writeBytes(fd, bytes));
        const r = host.writeFd(fd, latin1String(bytes, 0, TypedArrayPrototypeGetLength(bytes)));
        if (r[0] !== 'ok') throw fsError(r, 'write');
      };
      let offset = offsetOrOptions;
      if (isArrayBufferView(buffer)) {
        if (typeof offset === 'object') {
          ({
            offset = 0,
            length = buffer.byteLength - offset,
            position = null,
          } = offsetOrOptions ?? kEmptyObject);
        }
        if (offset == null) {
          offset = 0;
        } else {
          validateInteger(offset, 'offset', 0);
        }
        if (typeof length !== 'number') length = buffer.byteLength - offset;
        validateOffsetLengthWrite(offset, length, buffer.byteLength);
        put(byteRange(viewBytes(buffer), offset, offset + length));
        return length;
      }
      if (typeof buffer !== 'string') {
        throw invalidArgType('buffer', ['string', 'Buffer', 'TypedArray', 'DataView'], buffer);
      }
      validateDataEncoding(buffer, length);
      // The C++ side's ParseEncoding: UTF-8 for a name it does not know.
      const enc = normalizeEncoding(length) ?? 'utf8';
      if (enc === 'utf8' && stdio) {
        check(writeText(fd, buffer));
        return byteLengthUtf8(buffer);
      }
      const b = new FastBuffer(enc === 'utf8' ? byteLengthUtf8(buffer) : enc === 'utf16le' ? buffer.length * 2 :
        buffer.length);
      const n = writeString(b, 0, b.length, buffer, enc);
      put(byteRange(b, 0, n));
      return n;
    },
    // Node's readFileSync: the file's bytes, as text in an encoding.
    readFileSync(path, options) {
      options = getOptions(options, { flag: 'r' });
      const utf8 = options.encoding === 'utf8' || options.encoding === 'utf-8';
      let buffer;
      if (path === (path | 0)) {
        // A file descriptor (0: standard input), read through its
        // /proc/self/fd link, so from the file's start (Node reads on
        // from the descriptor's position). Node's errors: EBADF for one
        // not open (its syscall `read` for UTF-8, `fstat` otherwise), a
        // negative one out of range but for UTF-8.
        if (path < 0 && !utf8) throw outOfRange('fd', '>= 0 && <= 2147483647', path);
        const syscall = utf8 ? 'read' : 'fstat';
        if (path < 0) throw fsError(['EBADF', 'bad file descriptor', '-9'], syscall);
        buffer = readFileBytes('/proc/self/fd/' + path, true, syscall);
      } else {
        buffer = readFileBytes(checkPath(path), false);
      }
      if (utf8) return decodeUtf8(buffer, 0, buffer.length);
      if (options.encoding) buffer = buffer.toString(options.encoding);
      return buffer;
    },
    stat(path, options, cb) {
      if (typeof options === 'function') cb = options;
      checkCallback(cb, 'cb');
      path = checkPath(path);
      io.set(host.stat(), { cb, path });
    },
    statSync(path, options) {
      path = checkPath(path);
      const r = host.statSync(path);
      if (r[0] === 'ENOENT' && options && options.throwIfNoEntry === false) return undefined;
      if (r[0] !== 'ok') throw fsError(r, 'stat', path);
      return stats(r);
    },
    // Node's: false for any path it would refuse, or that does not exist.
    existsSync(path) {
      try {
        path = checkPath(path);
      } catch {
        return false;
      }
      return !path.includes('\0') && host.statSync(path)[0] === 'ok';
    },
  };

  // --- util.inspect, on Node 20's rules ----------------------------------
  // Node's options (depth, breakLength, compact, maxArrayLength,
  // maxStringLength, showHidden, sorted, getters, customInspect), its line
  // breaking (an entry list goes on one line while it fits in breakLength
  // and the object is at most `compact` levels from its innermost one;
  // arrays of more than 6 entries are grouped in columns) and its formats
  // for arrays (sparse, `... more items`), typed arrays, Map, Set, Date,
  // RegExp, functions and classes, errors (stack, own properties,
  // `[cause]`, `[errors]`), null prototypes, class instances, circular
  // references, getters and symbols. No colors, no proxies (QuickJS cannot
  // tell them), string width is the length.
  const kObjectType = 0;
  const kArrayType = 1;
  const kArrayExtrasType = 2;
  const inspectDefaults = {
    showHidden: false, depth: 2, colors: false, customInspect: true, showProxy: false,
    maxArrayLength: 100, maxStringLength: 10000, breakLength: 80, compact: 3,
    sorted: false, getters: false, numericSeparator: false,
  };
  const ObjectToString = Object.prototype.toString;
  const hasOwn = (o, k) => ReflectApply(Object.prototype.hasOwnProperty, o, [k]);
  const isEnumerable = (o, k) => ReflectApply(Object.prototype.propertyIsEnumerable, o, [k]);
  const SetSize = getOwnDescriptor(Set.prototype, 'size').get;
  const MapSize = getOwnDescriptor(Map.prototype, 'size').get;
  const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);
  const TypedArrayTag = getOwnDescriptor(TypedArrayProto, Symbol.toStringTag).get;
  const DateGetTime = Date.prototype.getTime;
  const RegExpToString = RegExp.prototype.toString;
  const FunctionToString = Function.prototype.toString;
  const brand = (v, f) => { try { ReflectApply(f, v, []); return true; } catch { return false; } };
  const isSet = (v) => brand(v, SetSize);
  const isMap = (v) => brand(v, MapSize);
  const isDate = (v) => brand(v, DateGetTime);
  const isRegExp = (v) => ObjectToString.call(v) === '[object RegExp]' && brand(v, getOwnDescriptor(RegExp.prototype, 'source').get);
  const isError = (v) => v instanceof ErrorCtor || ObjectToString.call(v) === '[object Error]';
  const isPromise = (v) => host.promiseState(v) !== -1;
  const weakKind = (v) => {
    try { WeakMap.prototype.has.call(v, {}); return 'WeakMap'; } catch {}
    try { WeakSet.prototype.has.call(v, {}); return 'WeakSet'; } catch {}
    return '';
  };
  const boxedKind = (v) => {
    for (const [type, proto] of [['Number', Number.prototype], ['String', String.prototype],
      ['Boolean', Boolean.prototype], ['BigInt', BigInt.prototype], ['Symbol', Symbol.prototype]]) {
      if (brand(v, proto.valueOf)) return [type, ReflectApply(proto.valueOf, v, [])];
    }
    return null;
  };
  const indexKey = /^(0|[1-9][0-9]*)$/;
  const plainKey = /^[a-zA-Z_][a-zA-Z_0-9]*$/;
  const escapeAll = /[\x00-\x1f\x27\x5c\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const escapeNoQuote = /[\x00-\x1f\x5c\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const named = { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r', 39: "\\'", 92: '\\\\' };
  function escapeChar(ch) {
    const c = ch.charCodeAt(0);
    if (named[c] !== undefined) return named[c];
    if (c < 0xa0) return '\\x' + (c < 16 ? '0' : '') + c.toString(16).toUpperCase();
    return '\\u' + c.toString(16);
  }
  // Node's quotes: ' unless the string holds one, then ", then `.
  function strEscape(s) {
    let q = "'";
    let re = escapeAll;
    if (s.includes("'")) {
      if (!s.includes('"')) q = '"';
      else if (!s.includes('`') && !s.includes('${')) q = '`';
      if (q !== "'") re = escapeNoQuote;
    }
    re.lastIndex = 0;
    return q + s.replace(re, escapeChar) + q;
  }
  const remainingText = (n) => '... ' + n + ' more item' + (n > 1 ? 's' : '');

  function inspectValue(value, opts) {
    const ctx = { ...inspectDefaults, seen: [], indentationLvl: 0, currentDepth: 0, circular: undefined };
    if (arguments.length > 1) {
      if (arguments.length > 2 && arguments[2] !== undefined) ctx.depth = arguments[2];
      if (typeof opts === 'boolean') ctx.showHidden = opts;
      else if (opts) {
        for (const k of Object.keys(opts)) if (hasOwn(inspectDefaults, k)) ctx[k] = opts[k];
      }
    }
    if (ctx.maxArrayLength === null) ctx.maxArrayLength = Infinity;
    if (ctx.maxStringLength === null) ctx.maxStringLength = Infinity;
    return formatValue(ctx, value, 0);
  }
  const tooDeep = (ctx, recurseTimes) => ctx.depth !== null && recurseTimes > ctx.depth;

  // `typedArray`: the value is a typed array's `buffer`, shown among
  // its hidden fields.
  function formatValue(ctx, value, recurseTimes, typedArray) {
    if (typeof value !== 'object' && typeof value !== 'function') return formatPrimitive(value, ctx);
    if (value === null) return 'null';
    if (ctx.customInspect) {
      const custom = value[customInspectSymbol];
      if (typeof custom === 'function' && custom !== inspectValue &&
          !(value.constructor && value.constructor.prototype === value)) {
        const depth = ctx.depth === null ? null : ctx.depth - recurseTimes;
        const options = { stylize: (s) => s };
        for (const k of Object.keys(inspectDefaults)) options[k] = ctx[k];
        const ret = ReflectApply(custom, value, [depth, options, inspectValue]);
        if (ret !== value) {
          if (typeof ret !== 'string') return formatValue(ctx, ret, recurseTimes);
          return ret.replaceAll('\n', '\n' + ' '.repeat(ctx.indentationLvl));
        }
      }
    }
    if (ctx.seen.includes(value)) {
      if (ctx.circular === undefined) ctx.circular = new Map();
      let index = ctx.circular.get(value);
      if (index === undefined) {
        index = ctx.circular.size + 1;
        ctx.circular.set(value, index);
      }
      return '[Circular *' + index + ']';
    }
    return formatRaw(ctx, value, recurseTimes, typedArray);
  }

  function getConstructorName(obj) {
    const tmp = obj;
    let firstProto;
    while (obj) {
      const d = getOwnDescriptor(obj, 'constructor');
      if (d !== undefined && typeof d.value === 'function' && d.value.name !== '') {
        let is = false;
        try { is = tmp instanceof d.value; } catch {}
        if (is) return String(d.value.name);
      }
      obj = Object.getPrototypeOf(obj);
      if (firstProto === undefined) firstProto = obj;
    }
    if (firstProto === null) return null;
    return internalName(tmp) + ' <Complex prototype>';
  }
  function internalName(v) {
    if (typeof v === 'function') return 'Function';
    if (Array.isArray(v)) return 'Array';
    if (isError(v)) return 'Error';
    return 'Object';
  }
  function getPrefix(constructor, tag, fallback, size = '') {
    if (constructor === null) {
      if (tag !== '' && fallback !== tag) return '[' + fallback + size + ': null prototype] [' + tag + '] ';
      return '[' + fallback + size + ': null prototype] ';
    }
    if (tag !== '' && constructor !== tag) return constructor + size + ' [' + tag + '] ';
    return constructor + size + ' ';
  }
  function getCtxStyle(value, constructor, tag) {
    let fallback = '';
    if (constructor === null) {
      fallback = internalName(value);
      if (fallback === tag) fallback = 'Object';
    }
    return getPrefix(constructor, tag, fallback);
  }
  function getKeys(value, showHidden) {
    const symbols = Object.getOwnPropertySymbols(value);
    let keys;
    if (showHidden) {
      keys = Object.getOwnPropertyNames(value);
      for (const s of symbols) keys.push(s);
    } else {
      keys = Object.keys(value);
      for (const s of symbols) if (isEnumerable(value, s)) keys.push(s);
    }
    return keys;
  }
  // An array's or typed array's own keys that are not indices.
  function nonIndexKeys(value, showHidden) {
    return getKeys(value, showHidden).filter((k) => typeof k !== 'string' || !indexKey.test(k) || +k > 2 ** 32 - 2);
  }

  function formatRaw(ctx, value, recurseTimes, typedArray) {
    let keys;
    const constructor = getConstructorName(value);
    let tag = value[Symbol.toStringTag];
    if (typeof tag !== 'string' ||
        (tag !== '' && (ctx.showHidden ? hasOwn : isEnumerable)(value, Symbol.toStringTag))) {
      tag = '';
    }
    let base = '';
    let formatter = () => [];
    let braces;
    let noIterator = true;
    let extrasType = kObjectType;
    if (Symbol.iterator in value || constructor === null) {
      noIterator = false;
      if (Array.isArray(value)) {
        const prefix = constructor !== 'Array' || tag !== ''
          ? getPrefix(constructor, tag, 'Array', '(' + value.length + ')') : '';
        keys = nonIndexKeys(value, ctx.showHidden);
        braces = [prefix + '[', ']'];
        if (value.length === 0 && keys.length === 0) return braces[0] + ']';
        extrasType = kArrayExtrasType;
        formatter = formatArray;
      } else if (isSet(value)) {
        const size = SetSize.call(value);
        const prefix = getPrefix(constructor, tag, 'Set', '(' + size + ')');
        keys = getKeys(value, ctx.showHidden);
        formatter = (c, v, r) => formatEntries(c, Set.prototype.values.call(v), r, false);
        if (size === 0 && keys.length === 0) return prefix + '{}';
        braces = [prefix + '{', '}'];
      } else if (isMap(value)) {
        const size = MapSize.call(value);
        const prefix = getPrefix(constructor, tag, 'Map', '(' + size + ')');
        keys = getKeys(value, ctx.showHidden);
        formatter = (c, v, r) => formatEntries(c, Map.prototype.entries.call(v), r, true);
        if (size === 0 && keys.length === 0) return prefix + '{}';
        braces = [prefix + '{', '}'];
      } else if (isTypedArray(value)) {
        keys = typedArrayExtraKeys(value, !ctx.showHidden);
        const fallback = constructor === null ? TypedArrayTag.call(value) : '';
        const prefix = getPrefix(constructor, tag, fallback, '(' + value.length + ')');
        braces = [prefix + '[', ']'];
        if (value.length === 0 && keys.length === 0 && !ctx.showHidden) return braces[0] + ']';
        formatter = formatTypedArray;
        extrasType = kArrayExtrasType;
      } else {
        noIterator = true;
      }
    }
    if (noIterator) {
      keys = getKeys(value, ctx.showHidden);
      braces = ['{', '}'];
      let boxed;
      if (typeof value === 'function') {
        base = getFunctionBase(value, constructor, tag);
        if (keys.length === 0) return base;
      } else if (constructor === 'Object') {
        if (ObjectToString.call(value) === '[object Arguments]') braces[0] = '[Arguments] {';
        else if (tag !== '') braces[0] = getPrefix(constructor, tag, 'Object') + '{';
        if (keys.length === 0) return braces[0] + '}';
      } else if (isRegExp(value)) {
        base = ReflectApply(RegExpToString, constructor !== null ? value : new RegExp(value), []);
        const prefix = getPrefix(constructor, tag, 'RegExp');
        if (prefix !== 'RegExp ') base = prefix + base;
        if (keys.length === 0 || tooDeep(ctx, recurseTimes)) return base;
      } else if (isDate(value)) {
        base = Number.isNaN(DateGetTime.call(value)) ? Date.prototype.toString.call(value)
          : Date.prototype.toISOString.call(value);
        const prefix = getPrefix(constructor, tag, 'Date');
        if (prefix !== 'Date ') base = prefix + base;
        if (keys.length === 0) return base;
      } else if (isError(value)) {
        base = formatError(value, constructor, tag, ctx, keys);
        if (keys.length === 0) return base;
      } else if (isAnyArrayBuffer(value)) {
        const prefix = getPrefix(constructor, tag, isArrayBuffer(value) ? 'ArrayBuffer' : 'SharedArrayBuffer');
        if (typedArray === undefined) {
          formatter = formatArrayBuffer;
        } else if (keys.length === 0) {
          return prefix + '{ byteLength: ' + formatPrimitive(value.byteLength, ctx) + ' }';
        }
        braces[0] = prefix + '{';
        keys.unshift('byteLength');
      } else if (isDataView(value)) {
        braces[0] = getPrefix(constructor, tag, 'DataView') + '{';
        // .buffer goes last, it's not a primitive like the others.
        keys.unshift('byteLength', 'byteOffset', 'buffer');
      } else if (isPromise(value)) {
        braces[0] = getPrefix(constructor, tag, 'Promise') + '{';
        formatter = formatPromise;
      } else if (weakKind(value) !== '') {
        braces[0] = getPrefix(constructor, tag, weakKind(value)) + '{';
        formatter = () => ['<items unknown>'];
      } else if ((boxed = boxedKind(value)) !== null) {
        const [type, prim] = boxed;
        if (type === 'String') keys.splice(0, prim.length);
        base = '[' + type;
        if (type !== constructor) base += constructor === null ? ' (null prototype)' : ' (' + constructor + ')';
        base += ': ' + formatPrimitive(prim, { ...inspectDefaults, compact: true, indentationLvl: 0 }) + ']';
        if (tag !== '' && tag !== constructor) base += ' [' + tag + ']';
        if (keys.length === 0) return base;
      } else {
        if (keys.length === 0) return getCtxStyle(value, constructor, tag) + '{}';
        braces[0] = getCtxStyle(value, constructor, tag) + '{';
      }
    }
    if (tooDeep(ctx, recurseTimes)) {
      const name = getCtxStyle(value, constructor, tag).slice(0, -1);
      return constructor !== null ? '[' + name + ']' : name;
    }
    recurseTimes += 1;
    ctx.seen.push(value);
    ctx.currentDepth = recurseTimes;
    let output;
    const indentationLvl = ctx.indentationLvl;
    try {
      output = formatter(ctx, value, recurseTimes);
      for (let i = 0; i < keys.length; i++) {
        output.push(formatProperty(ctx, value, recurseTimes, keys[i], extrasType));
      }
    } catch (err) {
      if (!(err instanceof RangeError && /call stack/.test(err.message))) throw err;
      ctx.seen.pop();
      ctx.indentationLvl = indentationLvl;
      return '[' + getCtxStyle(value, constructor, tag).slice(0, -1) +
        ': Inspection interrupted prematurely. Maximum call stack size exceeded.]';
    }
    if (ctx.circular !== undefined) {
      const index = ctx.circular.get(value);
      if (index !== undefined) {
        const reference = '<ref *' + index + '>';
        if (ctx.compact !== true) base = base === '' ? reference : reference + ' ' + base;
        else braces[0] = reference + ' ' + braces[0];
      }
    }
    ctx.seen.pop();
    if (ctx.sorted) {
      const comparator = ctx.sorted === true ? undefined : ctx.sorted;
      if (extrasType === kObjectType) output.sort(comparator);
      else if (keys.length > 1) {
        const sorted = output.slice(output.length - keys.length).sort(comparator);
        output.splice(output.length - keys.length, keys.length, ...sorted);
      }
    }
    return reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value);
  }

  function getFunctionBase(value, constructor, tag) {
    const text = ReflectApply(FunctionToString, value, []);
    if (text.startsWith('class') && text.endsWith('}')) {
      const rest = text.slice(5, -1);
      const brace = rest.indexOf('{');
      if (brace !== -1 && (!rest.slice(0, brace).includes('(') ||
          /^(\s+[^(]*?)\s*{/.test(rest.replace(/(\/\/.*?\n)|(\/\*(.|\n)*?\*\/)/g, '')))) {
        const name = (hasOwn(value, 'name') && value.name) || '(anonymous)';
        let b = 'class ' + name;
        if (constructor !== 'Function' && constructor !== null) b += ' [' + constructor + ']';
        if (tag !== '' && constructor !== tag) b += ' [' + tag + ']';
        if (constructor !== null) {
          const superName = Object.getPrototypeOf(value).name;
          if (superName) b += ' extends ' + superName;
        } else {
          b += ' extends [null prototype]';
        }
        return '[' + b + ']';
      }
    }
    let type = 'Function';
    const kind = ObjectToString.call(value);
    if (kind === '[object GeneratorFunction]' || kind === '[object AsyncGeneratorFunction]') type = 'Generator' + type;
    if (kind === '[object AsyncFunction]' || kind === '[object AsyncGeneratorFunction]') type = 'Async' + type;
    let b = '[' + type;
    if (constructor === null) b += ' (null prototype)';
    b += value.name === '' ? ' (anonymous)' : ': ' + value.name;
    b += ']';
    if (constructor !== type && constructor !== null) b += ' ' + constructor;
    if (tag !== '' && constructor !== tag) b += ' [' + tag + ']';
    return b;
  }

  function getStackString(err) {
    return err.stack ? String(err.stack) : ReflectApply(ErrorToString, err, []);
  }
  // Node's: frames the error shares with its cause are folded into one line.
  function getStackFrames(err, stack) {
    const frames = stack.split('\n');
    let cause;
    try { cause = err.cause; } catch {}
    if (cause != null && isError(cause)) {
      const causeStack = getStackString(cause);
      const start = causeStack.indexOf('\n    at');
      if (start !== -1) {
        const causeFrames = causeStack.slice(start + 1).split('\n');
        for (let i = 0; i < frames.length - 3; i++) {
          const pos = causeFrames.indexOf(frames[i]);
          if (pos === -1) continue;
          const rest = causeFrames.length - pos;
          if (rest <= 3) continue;
          let len = 1;
          const maxLen = Math.min(frames.length - i, rest);
          while (maxLen > len && frames[i + len] === causeFrames[pos + len]) len++;
          if (len > 3) {
            frames.splice(i + 1, len - 2, '    ... ' + (len - 2) + ' lines matching cause stack trace ...');
            break;
          }
        }
      }
    }
    return frames;
  }
  function formatError(err, constructor, tag, ctx, keys) {
    const name = err.name != null ? String(err.name) : 'Error';
    let stack = getStackString(err);
    if (!ctx.showHidden && keys.length !== 0) {
      for (const k of ['name', 'message', 'stack']) {
        const i = keys.indexOf(k);
        if (i !== -1 && stack.includes(err[k])) keys.splice(i, 1);
      }
    }
    if ('cause' in err && (keys.length === 0 || !keys.includes('cause'))) keys.push('cause');
    if (Array.isArray(err.errors) && (keys.length === 0 || !keys.includes('errors'))) keys.push('errors');
    // Node's improveStack: the constructor's name where the stack has another.
    let len = name.length;
    if (constructor === null || (name.endsWith('Error') && stack.startsWith(name) &&
        (stack.length === len || stack[len] === ':' || stack[len] === '\n'))) {
      let fallback = 'Error';
      if (constructor === null) {
        const start = /^([A-Z][a-z_ A-Z0-9[\]()-]+)(?::|\n {4}at)/.exec(stack) || /^([a-z_A-Z0-9-]*Error)$/.exec(stack);
        fallback = (start && start[1]) || '';
        len = fallback.length;
        fallback = fallback || 'Error';
      }
      const prefix = getPrefix(constructor, tag, fallback).slice(0, -1);
      if (name !== prefix) {
        if (prefix.includes(name)) stack = len === 0 ? prefix + ': ' + stack : prefix + stack.slice(len);
        else stack = prefix + ' [' + name + ']' + stack.slice(len);
      }
    }
    let pos = (err.message && stack.indexOf(err.message)) || -1;
    if (pos !== -1) pos += err.message.length;
    const stackStart = stack.indexOf('\n    at', pos);
    if (stackStart === -1) {
      stack = '[' + stack + ']';
    } else {
      const lines = getStackFrames(err, stack.slice(stackStart + 1));
      stack = stack.slice(0, stackStart) + '\n' + lines.join('\n');
    }
    if (ctx.indentationLvl !== 0) stack = stack.replaceAll('\n', '\n' + ' '.repeat(ctx.indentationLvl));
    return stack;
  }

  function formatPrimitive(value, ctx) {
    switch (typeof value) {
      case 'string': {
        let trailer = '';
        if (value.length > ctx.maxStringLength) {
          const remaining = value.length - ctx.maxStringLength;
          value = value.slice(0, ctx.maxStringLength);
          trailer = '... ' + remaining + ' more character' + (remaining > 1 ? 's' : '');
        }
        if (ctx.compact !== true && value.length > 16 && value.length > ctx.breakLength - ctx.indentationLvl - 4) {
          return value.split(/(?<=\n)/).map(strEscape).join(' +\n' + ' '.repeat(ctx.indentationLvl + 2)) + trailer;
        }
        return strEscape(value) + trailer;
      }
      case 'number': return Object.is(value, -0) ? '-0' : String(value);
      case 'bigint': return value + 'n';
      case 'symbol': return value.toString();
      default: return String(value);
    }
  }

  function formatArray(ctx, value, recurseTimes) {
    const len = Math.min(Math.max(0, ctx.maxArrayLength), value.length);
    const output = [];
    for (let i = 0; i < len; i++) {
      if (!hasOwn(value, i)) return formatSparseArray(ctx, value, recurseTimes, len, output, i);
      output.push(formatProperty(ctx, value, recurseTimes, i, kArrayType));
    }
    if (value.length > len) output.push(remainingText(value.length - len));
    return output;
  }
  function formatSparseArray(ctx, value, recurseTimes, maxLength, output, i) {
    const keys = Object.keys(value);
    let index = i;
    for (; i < keys.length && output.length < maxLength; i++) {
      const key = keys[i];
      const n = +key;
      if (n > 2 ** 32 - 2) break;
      if (String(index) !== key) {
        if (!indexKey.test(key)) break;
        const empty = n - index;
        output.push('<' + empty + ' empty item' + (empty > 1 ? 's' : '') + '>');
        index = n;
        if (output.length === maxLength) break;
      }
      output.push(formatProperty(ctx, value, recurseTimes, key, kArrayType));
      index++;
    }
    const remaining = value.length - index;
    if (output.length !== maxLength) {
      if (remaining > 0) output.push('<' + remaining + ' empty item' + (remaining > 1 ? 's' : '') + '>');
    } else if (remaining > 0) {
      output.push(remainingText(remaining));
    }
    return output;
  }
  function formatTypedArray(ctx, value, recurseTimes) {
    const max = Math.min(Math.max(0, ctx.maxArrayLength), value.length);
    const output = [];
    for (let i = 0; i < max; i++) output.push(formatPrimitive(value[i], ctx));
    if (value.length > max) output.push(remainingText(value.length - max));
    if (ctx.showHidden) {
      // .buffer goes last, it's not a primitive like the others.
      ctx.indentationLvl += 2;
      for (const key of ['BYTES_PER_ELEMENT', 'length', 'byteLength', 'byteOffset', 'buffer']) {
        output.push('[' + key + ']: ' + formatValue(ctx, value[key], recurseTimes, true));
      }
      ctx.indentationLvl -= 2;
    }
    return output;
  }
  // An ArrayBuffer's bytes, in hex as a Buffer shows them.
  function formatArrayBuffer(ctx, value) {
    let buffer;
    try {
      buffer = new Uint8ArrayCtor(value);
    } catch {
      return ['(detached)'];
    }
    const n = Math.min(ctx.maxArrayLength, buffer.length);
    let str = StringPrototypeTrim(RegExpPrototypeSymbolReplace(/(.{2})/g, sliceText(buffer, 'hex', 0, n), '$1 '));
    const remaining = buffer.length - ctx.maxArrayLength;
    if (remaining > 0) str += ` ... ${remaining} more byte${remaining > 1 ? 's' : ''}`;
    return ['[Uint8Contents]: <' + str + '>'];
  }
  function formatEntries(ctx, iterator, recurseTimes, pairs) {
    const output = [];
    ctx.indentationLvl += 2;
    for (const v of iterator) {
      output.push(pairs ? formatValue(ctx, v[0], recurseTimes) + ' => ' + formatValue(ctx, v[1], recurseTimes)
        : formatValue(ctx, v, recurseTimes));
    }
    ctx.indentationLvl -= 2;
    return output;
  }
  function formatPromise(ctx, value, recurseTimes) {
    const state = host.promiseState(value);
    if (state === 0) return ['<pending>'];
    ctx.indentationLvl += 2;
    const str = formatValue(ctx, host.promiseResult(value), recurseTimes);
    ctx.indentationLvl -= 2;
    return [state === 2 ? '<rejected> ' + str : str];
  }

  function formatProperty(ctx, value, recurseTimes, key, type) {
    let str;
    const desc = getOwnDescriptor(value, key) || { value: value[key], enumerable: true };
    if (desc.value !== undefined) {
      const diff = ctx.compact !== true || type !== kObjectType ? 2 : 3;
      ctx.indentationLvl += diff;
      str = formatValue(ctx, desc.value, recurseTimes);
      if (diff === 3 && ctx.breakLength < str.length) {
        str = '\n' + ' '.repeat(ctx.indentationLvl) + str;
        ctx.indentationLvl -= diff;
        return propertyName(key, desc) + ':' + str;
      }
      ctx.indentationLvl -= diff;
    } else if (desc.get !== undefined) {
      const label = desc.set !== undefined ? 'Getter/Setter' : 'Getter';
      const g = ctx.getters;
      if (g && (g === true || (g === 'get' && desc.set === undefined) || (g === 'set' && desc.set !== undefined))) {
        try {
          const v = ReflectApply(desc.get, value, []);
          ctx.indentationLvl += 2;
          if (v === null) str = '[' + label + ': null]';
          else if (typeof v === 'object') str = '[' + label + '] ' + formatValue(ctx, v, recurseTimes);
          else str = '[' + label + ': ' + formatPrimitive(v, ctx) + ']';
          ctx.indentationLvl -= 2;
        } catch (err) {
          str = '[' + label + ': <Inspection threw (' + err.message + ')>]';
        }
      } else {
        str = '[' + label + ']';
      }
    } else if (desc.set !== undefined) {
      str = '[Setter]';
    } else {
      str = 'undefined';
    }
    if (type === kArrayType) return str;
    return propertyName(key, desc) + ': ' + str;
  }
  function propertyName(key, desc) {
    if (typeof key === 'symbol') return '[' + key.toString().replace(escapeAll, escapeChar) + ']';
    if (key === '__proto__') return "['__proto__']";
    if (desc.enumerable === false) return '[' + key.replace(escapeAll, escapeChar) + ']';
    if (plainKey.test(key)) return key;
    return strEscape(key);
  }

  // Node's `isBelowBreakLength`: the entries, a comma and a space each,
  // and `start` fit in breakLength, and `base` is one line.
  function isBelowBreakLength(ctx, output, start, base) {
    let total = output.length + start;
    if (total + output.length > ctx.breakLength) return false;
    for (let i = 0; i < output.length; i++) {
      total += output[i].length;
      if (total > ctx.breakLength) return false;
    }
    return base === '' || !base.includes('\n');
  }
  function reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value) {
    if (ctx.compact !== true) {
      if (typeof ctx.compact === 'number' && ctx.compact >= 1) {
        const entries = output.length;
        if (extrasType === kArrayExtrasType && entries > 6) output = groupArrayElements(ctx, output, value);
        if (ctx.currentDepth - recurseTimes < ctx.compact && entries === output.length) {
          const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
          if (isBelowBreakLength(ctx, output, start, base)) {
            const joined = output.join(', ');
            if (!joined.includes('\n')) return (base ? base + ' ' : '') + braces[0] + ' ' + joined + ' ' + braces[1];
          }
        }
      }
      const indentation = '\n' + ' '.repeat(ctx.indentationLvl);
      return (base ? base + ' ' : '') + braces[0] + indentation + '  ' +
        output.join(',' + indentation + '  ') + indentation + braces[1];
    }
    if (isBelowBreakLength(ctx, output, 0, base)) {
      return braces[0] + (base ? ' ' + base : '') + ' ' + output.join(', ') + ' ' + braces[1];
    }
    const indentation = ' '.repeat(ctx.indentationLvl);
    const ln = base === '' && braces[0].length === 1 ? ' ' : (base ? ' ' + base : '') + '\n' + indentation + '  ';
    return braces[0] + ln + output.join(',\n' + indentation + '  ') + ' ' + braces[1];
  }
  // Node's grouping of more than 6 array entries into aligned columns:
  // about as many columns as make a square (a character 2.5 times as high
  // as wide), at most 15 and what fits in breakLength; numbers are
  // right-aligned, anything else left-aligned.
  function groupArrayElements(ctx, output, value) {
    let totalLength = 0;
    let maxLength = 0;
    let outputLength = output.length;
    if (ctx.maxArrayLength < output.length) outputLength--; // "... more items" stays apart
    const separatorSpace = 2;
    const dataLen = [];
    for (let i = 0; i < outputLength; i++) {
      const len = output[i].length;
      dataLen.push(len);
      totalLength += len + separatorSpace;
      if (maxLength < len) maxLength = len;
    }
    const actualMax = maxLength + separatorSpace;
    if (actualMax * 3 + ctx.indentationLvl < ctx.breakLength &&
        (totalLength / actualMax > 5 || maxLength <= 6)) {
      const averageBias = Math.sqrt(actualMax - totalLength / output.length);
      const biasedMax = Math.max(actualMax - 3 - averageBias, 1);
      const columns = Math.min(
        Math.round(Math.sqrt(2.5 * biasedMax * outputLength) / biasedMax),
        Math.floor((ctx.breakLength - ctx.indentationLvl) / actualMax),
        ctx.compact * 4,
        15,
      );
      if (columns <= 1) return output;
      const maxLineLength = [];
      for (let i = 0; i < columns; i++) {
        let lineMax = 0;
        for (let j = i; j < output.length; j += columns) if (dataLen[j] > lineMax) lineMax = dataLen[j];
        maxLineLength.push(lineMax + separatorSpace);
      }
      let padStart = true;
      if (value !== undefined) {
        for (let i = 0; i < output.length; i++) {
          if (typeof value[i] !== 'number' && typeof value[i] !== 'bigint') {
            padStart = false;
            break;
          }
        }
      }
      const grouped = [];
      for (let i = 0; i < outputLength; i += columns) {
        const max = Math.min(i + columns, outputLength);
        let str = '';
        let j = i;
        for (; j < max - 1; j++) {
          const cell = output[j] + ', ';
          str += padStart ? cell.padStart(maxLineLength[j - i], ' ') : cell.padEnd(maxLineLength[j - i], ' ');
        }
        str += padStart ? output[j].padStart(maxLineLength[j - i] - separatorSpace, ' ') : output[j];
        grouped.push(str);
      }
      if (ctx.maxArrayLength < output.length) grouped.push(output[outputLength]);
      return grouped;
    }
    return output;
  }

  // The console's and the host's: a string as it is, anything else
  // inspected (console.log keeps Node's default depth, 2).
  function inspect(v, _depth, top) {
    if (top && typeof v === 'string') return v;
    return inspectValue(v);
  }
  // Node's formatWithOptions: a first string argument takes %s, %d, %i,
  // %f, %j, %o, %O, %c and %%; the rest are joined with spaces.
  function formatArgs(args) {
    const first = args[0];
    let a = 0;
    let str = '';
    let join = '';
    if (typeof first === 'string') {
      if (args.length === 1) return first;
      let lastPos = 0;
      let tempStr;
      for (let i = 0; i < first.length - 1; i++) {
        if (first.charCodeAt(i) !== 37) continue; // '%'
        const next = first.charCodeAt(++i);
        if (a + 1 !== args.length) {
          switch (next) {
            case 115: { // 's'
              const arg = args[++a];
              if (typeof arg === 'number') tempStr = formatPrimitive(arg, inspectDefaults);
              else if (typeof arg === 'bigint') tempStr = arg + 'n';
              else if (typeof arg !== 'object' || arg === null || !hasBuiltinToString(arg)) tempStr = String(arg);
              else tempStr = inspectValue(arg, { depth: 0, colors: false, compact: 3 });
              break;
            }
            case 106: // 'j'
              try { tempStr = JSON.stringify(args[++a]); } catch (e) {
                if (!(e instanceof TypeError && /circular/i.test(e.message))) throw e;
                tempStr = '[Circular]';
              }
              break;
            case 100: { // 'd'
              const n = args[++a];
              tempStr = typeof n === 'bigint' ? n + 'n' : typeof n === 'symbol' ? 'NaN'
                : formatPrimitive(typeof n === 'object' && n !== null ? Number(n) : Number(n), inspectDefaults);
              break;
            }
            case 79: tempStr = inspectValue(args[++a]); break; // 'O'
            case 111: tempStr = inspectValue(args[++a], { showHidden: true, showProxy: true, depth: 4 }); break; // 'o'
            case 105: { // 'i'
              const n = args[++a];
              tempStr = typeof n === 'bigint' ? n + 'n' : typeof n === 'symbol' ? 'NaN'
                : formatPrimitive(parseInt(n), inspectDefaults);
              break;
            }
            case 102: { // 'f'
              const n = args[++a];
              tempStr = typeof n === 'symbol' ? 'NaN' : formatPrimitive(parseFloat(n), inspectDefaults);
              break;
            }
            case 99: a++; tempStr = ''; break; // 'c'
            case 37: str += first.slice(lastPos, i); lastPos = i + 1; continue;
            default: continue;
          }
          if (lastPos !== i - 1) str += first.slice(lastPos, i - 1);
          str += tempStr;
          lastPos = i + 1;
        } else if (next === 37) {
          str += first.slice(lastPos, i);
          lastPos = i + 1;
        }
      }
      if (lastPos !== 0) {
        a++;
        join = ' ';
        if (lastPos < first.length) str += first.slice(lastPos);
      }
    }
    while (a < args.length) {
      const v = args[a];
      str += join + inspect(v, 0, true);
      join = ' ';
      a++;
    }
    return str;
  }
  // %s prints an object through its own toString or Symbol.toPrimitive,
  // or one of a class that is not a built-in, as Node's.
  function hasBuiltinToString(value) {
    let ownToString = hasOwn;
    let ownToPrimitive = hasOwn;
    if (typeof value.toString !== 'function') {
      if (typeof value[Symbol.toPrimitive] !== 'function') return true;
      if (hasOwn(value, Symbol.toPrimitive)) return false;
      ownToString = () => false;
    } else if (hasOwn(value, 'toString')) {
      return false;
    } else if (typeof value[Symbol.toPrimitive] !== 'function') {
      ownToPrimitive = () => false;
    } else if (hasOwn(value, Symbol.toPrimitive)) {
      return false;
    }
    let p = value;
    do {
      p = Object.getPrototypeOf(p);
    } while (!ownToString(p, 'toString') && !ownToPrimitive(p, Symbol.toPrimitive));
    const d = getOwnDescriptor(p, 'constructor');
    return d !== undefined && typeof d.value === 'function' && builtinNames.has(d.value.name);
  }
  const builtinNames = new Set(Object.getOwnPropertyNames(globalThis).filter((e) => /^[A-Z][a-zA-Z0-9]+$/.test(e)));
  function format(args) {
    return formatArgs(args) + '\n';
  }

  // Node's console writes through the stream with a callback of its own
  // (its write handler, one per stream): a console call ends a run of
  // other same-callback writes, and a run of console calls shares one
  // after-write tick, as any such run does (see `writer`). That tick runs
  // nothing a program sees, but it takes an id, as Node's does. Given a
  // failed write's error (`streamWrite`), the handler adds a no-op 'error'
  // listener if the stream has none and has never raised an error, and
  // every console write removes that listener again once written (Node's
  // `finally`): so the console swallows a failure unless a console write
  // to the stream comes between the failure's callbacks and its raise.
  function consoleNoop() {}
  function consoleHandler(state) {
    return (err) => {
      if (err && !state.emitted) {
        const stream = stdioStreams[state.fd];
        if (stream.listenerCount('error') === 0) stream.once('error', consoleNoop);
      }
    };
  }
  function consoleWrite(fd, args) {
    // The console's streams, made on its first use as Node's are, before
    // the arguments are formatted (Node reads the stream's inspect
    // options first): a write to stdout makes stderr too (Node's console
    // binds both then), a write to stderr makes stderr alone.
    if (fd === 1) stdio(1);
    stdio(2);
    let text = formatArgs(args);
    // console.group's indentation, on every line, as Node's.
    if (groupIndent.length !== 0) {
      if (text.includes('\n')) text = text.replace(/\n/g, `\n${groupIndent}`);
      text = groupIndent + text;
    }
    text += '\n';
    const state = streamState[fd];
    const written = streamWrite(state, text, state.console);
    stdioStreams[fd].removeListener('error', consoleNoop);
    if (!written) return;
    if ((state.after !== null && state.after.cb === state.console) || host.engaged()) {
      afterWrite(state, state.console);
    } else {
      // An embedder's bare `ctx.with`: no loop to queue the tick on, but
      // its id is taken all the same.
      host.asyncId();
      state.after = null;
    }
  }
  // The rest of Node's console (lib/internal/console/constructor.js):
  // group indentation, counters, timers on the host's clock (Node's
  // hrtime), assert, trace (QuickJS's frames), dir (no custom inspect).
  let groupIndent = '';
  // Node's cli_table: a box around a header row and the columns' cells.
  function renderTable(head, columns) {
    const rows = [];
    const widths = head.map((h) => h.length);
    const longest = Math.max(...columns.map((c) => c.length));
    for (let i = 0; i < head.length; i++) {
      for (let j = 0; j < longest; j++) {
        if (rows[j] === undefined) rows[j] = [];
        const value = rows[j][i] = hasOwn(columns[i], j) ? columns[i][j] : '';
        widths[i] = Math.max(widths[i] || 0, value.length);
      }
    }
    const row = (r) => '│ ' + r.map((cell, i) => cell + ' '.repeat(widths[i] - cell.length)).join(' │ ') + ' │';
    const divider = widths.map((w) => '─'.repeat(w + 2));
    let out = '┌' + divider.join('┬') + '┐\n' + row(head) + '\n├' + divider.join('┼') + '┤\n';
    for (const r of rows) out += row(r) + '\n';
    return out + '└' + divider.join('┴') + '┘';
  }
  const counts = new Map();
  const times = new Map();
  function formatTime(ms) {
    let hours = 0, minutes = 0, seconds = 0;
    if (ms >= 1000) {
      if (ms >= 60000) {
        if (ms >= 3600000) {
          hours = Math.floor(ms / 3600000);
          ms %= 3600000;
        }
        minutes = Math.floor(ms / 60000);
        ms %= 60000;
      }
      seconds = ms / 1000;
    }
    const pad = (v) => `${v}`.padStart(2, '0');
    if (hours !== 0 || minutes !== 0) {
      [seconds, ms] = seconds.toFixed(3).split('.');
      const res = hours !== 0 ? `${hours}:${pad(minutes)}` : minutes;
      return `${res}:${pad(seconds)}.${ms} (${hours !== 0 ? 'h:m' : ''}m:ss.mmm)`;
    }
    if (seconds !== 0) return `${seconds.toFixed(3)}s`;
    return `${Number(ms.toFixed(3))}ms`;
  }
  function timeLogImpl(name, label, data) {
    const start = times.get(label);
    if (start === undefined) {
      process.emitWarning(`No such label '${label}' for console.${name}()`);
      return false;
    }
    const formatted = formatTime(host.now() - start);
    // Through console.log, as Node's `this.log` (a replaced log sees it).
    ReflectApply(console.log, console, data === undefined ? ['%s: %s', label, formatted] : ['%s: %s', label, formatted, ...data]);
    return true;
  }
  const console = {
    log: (...a) => consoleWrite(1, a),
    info: (...a) => consoleWrite(1, a),
    debug: (...a) => consoleWrite(1, a),
    dirxml: (...a) => consoleWrite(1, a),
    error: (...a) => consoleWrite(2, a),
    warn: (...a) => consoleWrite(2, a),
    dir(object, options) {
      // One string argument is written as it is (no % formatting).
      consoleWrite(1, [inspectValue(object, { customInspect: false, ...options })]);
    },
    time(label = 'default') {
      label = `${label}`;
      if (times.has(label)) {
        process.emitWarning(`Label '${label}' already exists for console.time()`);
        return;
      }
      times.set(label, host.now());
    },
    timeEnd(label = 'default') {
      label = `${label}`;
      if (timeLogImpl('timeEnd', label)) times.delete(label);
    },
    timeLog(label = 'default', ...data) {
      label = `${label}`;
      timeLogImpl('timeLog', label, data);
    },
    trace: function trace(...args) {
      const err = { name: 'Trace', message: formatArgs(args) };
      Error.captureStackTrace(err, trace);
      ReflectApply(console.error, console, [err.stack]);
    },
    assert(expression, ...args) {
      if (!expression) {
        args[0] = `Assertion failed${args.length === 0 ? '' : `: ${args[0]}`}`;
        ReflectApply(console.warn, console, args);
      }
    },
    clear() {},
    // Node's console.table (its cli_table's box, `(index)`, `Values`,
    // `(iteration index)`/`Key` for a Map or Set); no iterator previews.
    table(tabularData, properties) {
      if (properties !== undefined && !Array.isArray(properties)) {
        throw argTypeError('properties', 'an instance of Array', properties);
      }
      if (tabularData === null || typeof tabularData !== 'object') {
        return ReflectApply(console.log, console, [tabularData]);
      }
      const final = (k, v) => ReflectApply(console.log, console, [renderTable(k, v)]);
      const show = (v) => {
        const depth = v !== null && typeof v === 'object' && !Array.isArray(v) &&
          !ArrayBuffer.isView(v) && Object.keys(v).length > 2 ? -1 : 0;
        return inspectValue(v, { depth, maxArrayLength: 3, breakLength: Infinity });
      };
      const indexes = (n) => Array.from({ length: n }, (_, i) => show(i));
      if (isMap(tabularData)) {
        const keys = [], values = [];
        for (const [k, v] of tabularData) { keys.push(show(k)); values.push(show(v)); }
        return final(['(iteration index)', 'Key', 'Values'], [indexes(keys.length), keys, values]);
      }
      if (isSet(tabularData)) {
        const values = [];
        for (const v of tabularData) values.push(show(v));
        return final(['(iteration index)', 'Values'], [indexes(values.length), values]);
      }
      const map = Object.create(null);
      let hasPrimitives = false;
      const valuesColumn = [];
      const indexColumn = Object.keys(tabularData);
      for (let i = 0; i < indexColumn.length; i++) {
        const item = tabularData[indexColumn[i]];
        const primitive = item === null || (typeof item !== 'function' && typeof item !== 'object');
        if (properties === undefined && primitive) {
          hasPrimitives = true;
          valuesColumn[i] = show(item);
        } else {
          for (const key of properties || Object.keys(item)) {
            map[key] ??= [];
            map[key][i] = (primitive && properties) || !hasOwn(item, key) ? '' : show(item[key]);
          }
        }
      }
      const keys = Object.keys(map);
      const values = Object.values(map);
      if (hasPrimitives) { keys.push('Values'); values.push(valuesColumn); }
      keys.unshift('(index)');
      values.unshift(indexColumn);
      return final(keys, values);
    },
    count(label = 'default') {
      label = `${label}`;
      const n = (counts.get(label) || 0) + 1;
      counts.set(label, n);
      ReflectApply(console.log, console, [`${label}: ${n}`]);
    },
    countReset(label = 'default') {
      if (!counts.has(label)) {
        process.emitWarning(`Count for '${label}' does not exist`);
        return;
      }
      counts.delete(`${label}`);
    },
    group(...data) {
      if (data.length > 0) ReflectApply(console.log, console, data);
      groupIndent += '  ';
    },
    groupCollapsed(...data) {
      if (data.length > 0) ReflectApply(console.log, console, data);
      groupIndent += '  ';
    },
    groupEnd() {
      groupIndent = groupIndent.slice(0, groupIndent.length - 2);
    },
  };

  // process as a small EventEmitter: on/addListener/once/off/
  // removeListener/emit/listenerCount/listeners, with 'newListener' and
  // 'removeListener' events, whose first listeners are Node's signal
  // hooks (a program that removes them stops signals, as in Node).
  const events = new Map();
  function listeners(name) {
    return events.get(name) || [];
  }
  events.set('newListener', [startListeningIfSignal]);
  events.set('removeListener', [stopListeningIfSignal]);
  // The events in the order of Node's `_events` object's keys: array
  // indexes ascending, then the other names as added, then symbols.
  function eventKeys() {
    const index = [], names = [], symbols = [];
    for (const k of events.keys()) {
      if (typeof k === 'symbol') symbols.push(k);
      else if (StringOf(k >>> 0) === k && k !== '4294967295') index.push(k);
      else names.push(k);
    }
    index.sort((a, b) => a - b);
    return [...index, ...names, ...symbols];
  }
  // The loop hands the host its uncaught exceptions while a listener
  // wants them: a handler, or a monitor (which sees even a fatal one).
  function changed(name) {
    if (name === 'uncaughtException' || name === 'uncaughtExceptionMonitor') {
      host.catchUncaught(listeners('uncaughtException').length > 0 ||
        listeners('uncaughtExceptionMonitor').length > 0);
    }
  }
  // Node's: a signal's first listener starts its handle (before it is
  // added: a signal the OS will not give, SIGKILL, throws and adds
  // nothing); its last gone, the handle goes.
  function startListeningIfSignal(name) {
    if (typeof name !== 'string' || signalNumbers[name] === undefined || signalIds.has(name)) return;
    const r = host.watchSignal(signalNumbers[name], true);
    if (r < 0) throw errnoException(-r, 'uv_signal_start');
    signalIds.set(name, r);
  }
  function stopListeningIfSignal(name) {
    if (signalIds.has(name) && listeners(name).length === 0) {
      signalIds.delete(name);
      const signum = signalNumbers[name];
      // SIGIOT is SIGABRT, SIGPOLL is SIGIO: one number, watched while
      // either name has a listener.
      let other = false;
      for (const n of signalIds.keys()) if (signalNumbers[n] === signum) other = true;
      if (!other) host.watchSignal(signum, false);
    }
  }
  // Node's signals (os.constants.signals on Linux), and the async id of
  // each one's handle while it is watched.
  const signalNumbers = {
    __proto__: null, SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGILL: 4, SIGTRAP: 5, SIGABRT: 6, SIGIOT: 6,
    SIGBUS: 7, SIGFPE: 8, SIGKILL: 9, SIGUSR1: 10, SIGSEGV: 11, SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14,
    SIGTERM: 15, SIGCHLD: 17, SIGSTKFLT: 16, SIGCONT: 18, SIGSTOP: 19, SIGTSTP: 20, SIGTTIN: 21,
    SIGTTOU: 22, SIGURG: 23, SIGXCPU: 24, SIGXFSZ: 25, SIGVTALRM: 26, SIGPROF: 27, SIGWINCH: 28,
    SIGIO: 29, SIGPOLL: 29, SIGPWR: 30, SIGSYS: 31,
  };
  const signalIds = SafeMap();
  // A signal came: each name for its number, in its handle's scope, with
  // Node's arguments (the name and the number).
  function signalArrived(signum) {
    for (const [name, id] of [...signalIds]) {
      if (signalNumbers[name] !== signum || !signalIds.has(name)) continue;
      executionAsyncId = id;
      emit(name, name, signum);
      executionAsyncId = 0;
    }
  }
  // Node's errnoException: `${syscall} ${code}`, a negative errno.
  const errnoNames = { __proto__: null, 1: 'EPERM', 3: 'ESRCH', 22: 'EINVAL' };
  function errnoException(errno, syscall) {
    const code = errnoNames[errno] || 'UNKNOWN';
    const e = new Error(syscall + ' ' + code);
    e.errno = -errno;
    e.code = code;
    e.syscall = syscall;
    return e;
  }
  // Node's `process.kill`: a signal by name or number (0 tests that the
  // target exists); true, or the OS's error.
  function kill(pid, sig) {
    // eslint-disable-next-line eqeqeq
    if (pid != (pid | 0)) throw argTypeError('pid', 'of type number', pid);
    let signum;
    if (sig === (sig | 0)) {
      signum = sig;
    } else {
      sig = sig || 'SIGTERM';
      signum = signalNumbers[sig];
      if (signum === undefined) throw coded(new TypeError(formatArgs(['Unknown signal: %s', sig])), 'ERR_UNKNOWN_SIGNAL');
    }
    const err = host.kill(pid | 0, signum);
    if (err !== 0) throw errnoException(err, 'kill');
    return true;
  }
  // As Node's EventEmitter: the listener is checked, and a `once`
  // listener is a wrapper whose `listener` is the function given, so that
  // removing that function removes it.
  // Node's leak check: more listeners of one event than the limit warn
  // once per event (MaxListenersExceededWarning).
  // Unset: EventEmitter.defaultMaxListeners, as an emitter's.
  let maxListeners;
  const processMax = () => (maxListeners === undefined ? defaultMaxListeners : maxListeners);
  const leakWarned = new Set();
  function on(name, fn, prepend = false) {
    checkCallback(fn, 'listener');
    if (listeners('newListener').length > 0) emit('newListener', name, fn.listener ?? fn);
    const l = prepend ? [fn, ...listeners(name)] : [...listeners(name), fn];
    events.set(name, l);
    changed(name);
    const max = processMax();
    if (max > 0 && l.length > max && !leakWarned.has(name)) {
      leakWarned.add(name);
      emitterLeakWarning(process, '[process]', name, l.length, max);
    }
    return process;
  }
  // Node's MaxListenersExceededWarning for an EventEmitter (`process`, or
  // one of `events`): `where` is the emitter as inspect shows it at depth
  // -1.
  function emitterLeakWarning(emitter, where, type, count, max) {
    const w = new Error(`Possible EventEmitter memory leak detected. ${count} ${String(type)} listeners ` +
      `added to ${where}. MaxListeners is ${max}. Use emitter.setMaxListeners() to increase limit`);
    w.name = 'MaxListenersExceededWarning';
    w.emitter = emitter;
    w.type = type;
    w.count = count;
    process.emitWarning(w);
  }
  // Node's `_onceWrap`: a bound `onceWrapper` (its name says so where a
  // 'removeListener' listener sees it), called once.
  const processOnceWrapper = function onceWrapper(...a) {
    if (this.fired) return undefined;
    off(this.type, this.wrapFn);
    this.fired = true;
    return ReflectApply(this.listener, process, a);
  };
  function onceWrapper(name, fn) {
    checkCallback(fn, 'listener');
    const state = { fired: false, wrapFn: undefined, type: name, listener: fn };
    const wrapped = ReflectApply(Function.prototype.bind, processOnceWrapper, [state]);
    wrapped.listener = fn;
    state.wrapFn = wrapped;
    return wrapped;
  }
  function off(name, fn) {
    checkCallback(fn, 'listener');
    const l = listeners(name);
    let i = l.length - 1;
    while (i >= 0 && l[i] !== fn && l[i].listener !== fn) i--;
    if (i < 0) return process;
    const removed = l[i];
    // Node's: an event with no listener left goes (a new one takes the
    // end of `eventNames()`).
    if (l.length === 1) events.delete(name);
    else events.set(name, l.slice(0, i).concat(l.slice(i + 1)));
    // Node's warned flag is on its listener array, which goes when one
    // listener (or none) is left.
    if (listeners(name).length <= 1) leakWarned.delete(name);
    changed(name);
    // Node reports the listener asked for, but the unwrapped one where
    // the event had only that one.
    if (listeners('removeListener').length > 0) emit('removeListener', name, l.length === 1 ? removed.listener || fn : fn);
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
  // Node's validateInteger.
  function validateInteger(value, name, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER) {
    if (typeof value !== 'number') throw argTypeError(name, 'of type number', value);
    if (!Number.isInteger(value)) throw outOfRange(name, 'an integer', value);
    if (value < min || value > max) throw outOfRange(name, `>= ${min} && <= ${max}`, value);
  }
  // Node's addNumericalSeparator.
  function addNumericalSeparator(s) {
    const start = s[0] === '-' ? 1 : 0;
    let i = s.length, res = '';
    for (; i >= start + 4; i -= 3) res = '_' + s.slice(i - 3, i) + res;
    return s.slice(0, i) + res;
  }
  // Node's ERR_OUT_OF_RANGE.
  function outOfRange(name, range, v) {
    let received;
    if (Number.isInteger(v) && Math.abs(v) > 2 ** 32) {
      received = addNumericalSeparator(String(v));
    } else if (typeof v === 'bigint') {
      received = String(v);
      if (v > 2n ** 32n || v < -(2n ** 32n)) received = addNumericalSeparator(received);
      received += 'n';
    } else {
      received = inspect(v, 0);
    }
    const e = new RangeError('The value of "' + name + '" is out of range. It must be ' + range +
      '. Received ' + received);
    coded(e, 'ERR_OUT_OF_RANGE');
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
  // Per stream: its run of after-write callbacks, and its failure period
  // (`streamWrite`).
  const streamState = { 1: null, 2: null };
  for (const fd of [1, 2]) {
    const state = streamState[fd] = {
      fd, after: null, errored: null, callbacks: [], emitted: false, stuck: false, console: null,
      // Node's `writableLength` while the writes are not made: the
      // failure period's (and a stuck stream's) writes, a string's by its
      // length, bytes by theirs.
      unwritten: 0,
    };
    state.console = consoleHandler(state);
  }
  // Node's error for a write to a pipe whose reader is gone: the
  // stream's (`write EPIPE`) or, from fs.writeSync, the system call's.
  function pipeError(sync) {
    const e = new Error(sync ? 'EPIPE: broken pipe, write' : 'write EPIPE');
    // In Node's order of properties (what an uncaught report shows).
    e.errno = -32;
    if (sync) {
      e.syscall = 'write';
      e.code = 'EPIPE';
    } else {
      e.code = 'EPIPE';
      e.syscall = 'write';
    }
    return e;
  }
  // Writes `text` to `state`'s stream as Node's stream does when a write
  // fails for want of a reader (EPIPE, a pipe whose reader is gone). A
  // failed write opens a failure period: the writes after it are not made
  // (they return false), and the failed write queues the period's tick,
  // which gives each of their callbacks the error, in order, and ends the
  // period (writes go through again). It queues two ticks: the raise,
  // which gives the error to the stream's 'error' listeners or, with
  // none, throws it (an uncaught exception, which ends the program with 1
  // unless an 'uncaughtException' listener takes it: a program writing
  // for ever to `head` ends as under node), and then 'close'. The
  // console's handler may have added a no-op listener meanwhile
  // (`consoleHandler`): a program that prints its lines through the
  // console and ends, piped to `head`, ends 0, as under node. A callback
  // that throws leaves the stream failed for good, as Node's: its later
  // writes are not made, their callbacks never run and nothing is
  // raised. The period's ticks take async ids where node's writes take
  // their own; ids read after a failed write may differ from node's.
  // Returns whether the write was made.
  function streamWrite(state, text, cb, size = text.length) {
    if (state.errored !== null) {
      // Not made: it counts in `writableLength` until the period ends, as
      // Node's buffered writes do (the failed write itself does not).
      state.unwritten += size;
      if (state.stuck) return false;
    } else {
      // Text, or bytes (a Uint8Array).
      if ((typeof text === 'string' ? writeText(state.fd, text) : writeBytes(state.fd, text)) === 0) return true;
      // An embedder's bare `ctx.with`: no loop to queue the period's tick
      // on; the failure is dropped, as the write.
      if (!host.engaged()) return false;
      state.errored = pipeError(false);
      nextTick(endFailure, state);
    }
    if (cb !== null) state.callbacks.push(cb);
    state.after = null; // a failed write ends a run of callbacks
    return false;
  }
  function endFailure(state) {
    const e = state.errored;
    while (state.callbacks.length > 0) {
      const cb = state.callbacks.shift();
      try {
        cb(e);
      } catch (thrown) {
        state.stuck = true;
        state.callbacks = [];
        throw thrown;
      }
    }
    state.errored = null;
    state.unwritten = 0;
    nextTick(raiseFailure, state, e);
    nextTick(emitClose, state);
  }
  function raiseFailure(state, e) {
    state.emitted = true;
    const stream = stdioStreams[state.fd];
    if (stream.listenerCount('error') > 0) {
      stream.emit('error', e);
    } else {
      throw e;
    }
  }
  function emitClose(state) {
    stdioStreams[state.fd].emit('close');
  }
  // A stream's events (stdout, stderr): a small EventEmitter, whose
  // 'error' listeners take a failed write's error (`streamWrite`).
  function streamEvents(stream) {
    // Keyed as Node's are, by property key: on(2) and listenerCount('2')
    // are one event, and eventNames() lists them in property order.
    const events = Object.create(null);
    const key = (name) => (typeof name === 'symbol' ? name : StringOf(name));
    const get = (name) => events[key(name)] || [];
    function set(name, list) {
      if (list.length > 0) events[key(name)] = list;
      else delete events[key(name)];
    }
    function add(name, fn, prepend) {
      checkCallback(fn, 'listener');
      set(name, prepend ? [fn, ...get(name)] : [...get(name), fn]);
      return stream;
    }
    function remove(name, fn) {
      checkCallback(fn, 'listener');
      const l = get(name);
      let i = l.length - 1;
      while (i >= 0 && l[i] !== fn && l[i].listener !== fn) i--;
      if (i >= 0) set(name, l.slice(0, i).concat(l.slice(i + 1)));
      return stream;
    }
    function once(name, fn, prepend) {
      checkCallback(fn, 'listener');
      const wrapper = (...a) => { remove(name, wrapper); ReflectApply(fn, stream, a); };
      wrapper.listener = fn;
      return add(name, wrapper, prepend);
    }
    stream.on = stream.addListener = (name, fn) => add(name, fn, false);
    stream.prependListener = (name, fn) => add(name, fn, true);
    stream.once = (name, fn) => once(name, fn, false);
    stream.prependOnceListener = (name, fn) => once(name, fn, true);
    stream.off = stream.removeListener = remove;
    stream.emit = (name, ...args) => {
      const l = get(name);
      if (name === 'error' && l.length === 0) {
        // As Node's EventEmitter: an 'error' nobody listens to is thrown.
        if (args[0] instanceof Error) throw args[0];
        const err = new Error('Unhandled error. (' + inspect(args[0], 0) + ')');
        coded(err, 'ERR_UNHANDLED_ERROR');
        err.context = args[0];
        throw err;
      }
      for (const fn of l) ReflectApply(fn, stream, args);
      return l.length > 0;
    };
    stream.listenerCount = (name) => get(name).length;
    stream.listeners = (name) => get(name).map((f) => f.listener || f);
    stream.rawListeners = (name) => [...get(name)];
    stream.removeAllListeners = function (name) {
      if (arguments.length === 0) {
        for (const k of ReflectOwnKeys(events)) delete events[k];
      } else {
        set(name, []);
      }
      return stream;
    };
    stream.eventNames = () => ReflectOwnKeys(events);
    // The limit is kept; exceeding it does not warn (Node's
    // MaxListenersExceededWarning is not written).
    let max = 10;
    stream.setMaxListeners = (n) => { max = n; return stream; };
    stream.getMaxListeners = () => max;
    return stream;
  }
  function afterWriteTick(state, info) {
    state.after = null;
    for (let n = info.count; n > 0; n--) info.cb(null);
  }
  // `cb` runs after a write to `state`'s stream, from its after-write
  // tick: a run of writes with one callback shares one tick.
  function afterWrite(state, cb) {
    if (state.after !== null && state.after.cb === cb) {
      state.after.count++;
    } else {
      const info = state.after = { cb, count: 1 };
      nextTick(afterWriteTick, state, info);
    }
  }
  function writer(fd, kind) {
    const state = streamState[fd];
    function write(chunk, encoding, cb) {
      if (chunk === null) {
        const e = new TypeError('May not write null values to stream');
        coded(e, 'ERR_STREAM_NULL_VALUES');
        throw e;
      }
      if (typeof encoding === 'function') {
        cb = encoding;
      } else {
        if (encoding && encoding !== 'buffer' && !Buffer.isEncoding(encoding)) throw unknownEncoding(encoding);
        if (typeof cb !== 'function') cb = null;
      }
      // A string in UTF-8 goes out as text, in another encoding and any
      // view as its bytes.
      let text;
      if (typeof chunk === 'string') {
        const e = typeof encoding === 'string' ? normalizeEncoding(encoding) : 'utf8';
        text = e === undefined || e === 'utf8' ? chunk : Buffer.from(chunk, e);
      } else if (isArrayBufferView(chunk)) {
        text = viewBytes(chunk);
      } else {
        throw argTypeError('chunk', 'of type string or an instance of Buffer, TypedArray, or DataView', chunk);
      }
      const size = typeof chunk === 'string' ? chunk.length : chunk.byteLength;
      if (!streamWrite(state, text, cb, size)) return false;
      if (cb !== null) afterWrite(state, cb);
      return true;
    }
    // Node's Writable state as a program reads it, from the prototype as
    // in Node (not own properties): never ended or destroyed (stdio
    // streams are not closed), and not writable, with the error in
    // `errored`, while a failure period lasts (for good on a stuck
    // stream). Only a TTY's stream has `isTTY` (true), as Node's
    // tty.WriteStream.
    // (Descriptors with no prototype: a program's `Object.prototype.get`
    // or `.value` is not read as part of them.)
    const value = (v) => ({ __proto__: null, value: v });
    const getter = (get) => ({ __proto__: null, get });
    // An EventEmitter, as Node's streams are (its own methods below).
    const proto = Object.create(EventEmitter.prototype, {
      writable: getter(() => state.errored === null),
      errored: getter(() => state.errored),
      writableLength: getter(() => state.unwritten),
      destroyed: value(false),
      closed: value(false),
      writableEnded: value(false),
      writableFinished: value(false),
      writableNeedDrain: value(false),
      writableCorked: value(0),
      writableObjectMode: value(false),
      writableHighWaterMark: value(16384),
    });
    if (kind === 2) proto.isTTY = true;
    const stream = Object.create(proto);
    stream.write = write;
    stream.fd = fd;
    return streamEvents(stream);
  }
  // process.stdout and stderr are made on first use, as Node's getters
  // make them. Node's stream for a TTY, a pipe or a socket has a handle,
  // which takes an async id then (a file's SyncWriteStream has none), and
  // a TTY stream listens for SIGWINCH: the first listener makes the
  // signal's handle, one id more. So the ids a program reads after its
  // first output follow what its stdout and stderr are, as in Node.
  const stdioStreams = { 1: null, 2: null };
  // The handles those streams made, in the order they were made, as
  // process.getActiveResourcesInfo() names them (a file's stream has
  // none; SIGWINCH's handle is unrefed, so not listed).
  const stdioHandles = { __proto__: null, length: 0 };
  let sigwinchHandle = false;
  function stdio(fd) {
    if (stdioStreams[fd] === null) {
      const kind = host.stdioKind(fd); // 0 a file or none, 1 a pipe or socket, 2 a TTY
      stdioStreams[fd] = writer(fd, kind);
      if (kind !== 0) stdioHandles[stdioHandles.length++] = kind === 2 ? 'TTYWrap' : 'PipeWrap';
      if (kind !== 0) host.asyncId();
      if (kind === 2 && !sigwinchHandle) {
        sigwinchHandle = true;
        host.asyncId();
      }
    }
    return stdioStreams[fd];
  }

  const process = {
    argv: host.argv(),
    pid: host.pid(),
    kill,
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
    // Node's: with 'removeListener' listeners, each listener is removed
    // (the last first) and reported, 'removeListener' itself last.
    removeAllListeners(name) {
      if (listeners('removeListener').length === 0) {
        if (arguments.length === 0) {
          const names = [...events.keys()];
          events.clear();
          leakWarned.clear();
          for (const n of names) changed(n);
        } else {
          events.delete(name);
          leakWarned.delete(name);
          changed(name);
        }
        return process;
      }
      if (arguments.length === 0) {
        for (const n of eventKeys()) if (n !== 'removeListener') process.removeAllListeners(n);
        process.removeAllListeners('removeListener');
        events.clear();
        leakWarned.clear();
        return process;
      }
      const l = listeners(name);
      for (let i = l.length - 1; i >= 0; i--) off(name, l[i]);
      return process;
    },
    rawListeners: (name) => [...listeners(name)],
    eventNames: () => eventKeys().filter((n) => listeners(n).length > 0),
    setMaxListeners(n) {
      checkMax(n, 'setMaxListeners');
      maxListeners = n;
      return process;
    },
    getMaxListeners: () => processMax(),
    get stdout() { return stdio(1); },
    get stderr() { return stdio(2); },
    // Node's process.emitWarning(warning[, type[, code]][, ctor]) and
    // (warning, { type, code, detail, ctor }): the event comes from a
    // tick, and Node's printer is its first listener (`onWarning`).
    emitWarning(warning, type, code) {
      let detail;
      if (type !== null && typeof type === 'object' && !Array.isArray(type)) {
        code = type.code;
        if (typeof type.detail === 'string') detail = type.detail;
        type = type.type || 'Warning';
      } else if (typeof type === 'function') {
        code = undefined;
        type = 'Warning';
      }
      if (type !== undefined && typeof type !== 'string') throw argTypeError('type', 'of type string', type);
      if (typeof code === 'function') code = undefined;
      else if (code !== undefined && typeof code !== 'string') throw argTypeError('code', 'of type string', code);
      let w = warning;
      if (typeof w === 'string') {
        w = new Error(warning);
        w.name = String(type || 'Warning');
        if (code !== undefined) w.code = code;
        if (detail !== undefined) w.detail = detail;
      } else if (!(w instanceof Error)) {
        throw argTypeError('warning', 'of type string or an instance of Error', w);
      }
      // Node's: a DeprecationWarning goes unseen under
      // `process.noDeprecation`, and is thrown under `throwDeprecation`.
      if (w.name === 'DeprecationWarning') {
        if (process.noDeprecation) return;
        if (process.throwDeprecation) {
          nextTick(() => { throw w; });
          return;
        }
      }
      nextTick(() => emit('warning', w));
    },
    exit(code) {
      // Node's: `process.exit(undefined)` clears exitCode too; the `exit`
      // event gets the value as set (`process.exitCode || 0`).
      // Ended by the application (Host::terminate) while this script ran:
      // no exit listener, no status of its own; the spin meets the
      // engine's next interrupt check.
      if (host.ended()) for (;;);
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
    // Node's: `time`, if given, an array of two (a bigint from
    // `hrtime.bigint()` is not one).
    hrtime(time) {
      const ns = host.hrtime();
      let s = Math.floor(ns / 1e9), n = ns - s * 1e9;
      if (time !== undefined) {
        if (!Array.isArray(time)) throw argTypeError('time', 'an instance of Array', time);
        if (time.length !== 2) throw outOfRange('time', 2, time.length);
        s -= time[0];
        n -= time[1];
        if (n < 0) { s--; n += 1e9; }
      }
      return [s, n];
    },
    platform: 'linux',
    arch: host.arch(),
    // Node's: the strings it was started with (tljs's, the host's).
    argv0: 'node',
    title: 'node',
    // No options reach the program's engine (tljs's own are not node's).
    execArgv: [],
    // Node's: microseconds of CPU time, or their growth since `prev`.
    cpuUsage(prev) {
      const valid = (n) => typeof n === 'number' && n <= Number.MAX_SAFE_INTEGER && n >= 0;
      const invalid = (name, v) => coded(new RangeError(`The property '${name}' is invalid. Received ${inspectValue(v)}`),
        'ERR_INVALID_ARG_VALUE');
      if (prev) {
        if (!valid(prev.user)) {
          if (typeof prev !== 'object' || ArrayIsArray(prev)) throw argTypeError('prevValue', 'of type object', prev);
          if (typeof prev.user !== 'number') throw argTypeError('prevValue.user', 'of type number', prev.user);
          throw invalid('prevValue.user', prev.user);
        }
        if (!valid(prev.system)) {
          if (typeof prev.system !== 'number') throw argTypeError('prevValue.system', 'of type number', prev.system);
          throw invalid('prevValue.system', prev.system);
        }
      }
      const [user, system] = host.cpuUsage();
      return prev ? { user: user - prev.user, system: system - prev.system } : { user, system };
    },
    execPath: host.argv()[0],
    ppid: host.ppid(),
    // Node's process.env: what is stored becomes a string.
    env: (() => {
      const kv = host.env();
      const env = {};
      for (let i = 0; i + 1 < kv.length; i += 2) env[kv[i]] = kv[i + 1];
      return new Proxy(env, {
        set(t, k, v) { t[k] = `${v}`; return true; },
        defineProperty(t, k, d) {
          if ('value' in d) return Reflect.defineProperty(t, k, { __proto__: null, ...d, value: `${d.value}` });
          return Reflect.defineProperty(t, k, d);
        },
      });
    })(),
    cwd: () => host.cwd(),
    uptime: () => host.now() / 1000,
    // Node's: the pending requests (an fs.stat's FSReqCallback), the
    // refed handles (stdout's and stderr's, for a pipe or a TTY), then
    // one 'Timeout' per refed timer not yet destroyed (its own callback
    // running counts) and one 'Immediate' per refed immediate pending.
    getActiveResourcesInfo() {
      const out = [];
      let n = 0;
      const add = (name) => { out[n++] = name; };
      for (let i = 0; i < ioPending(); i++) add('FSReqCallback');
      for (let i = 0; i < stdioHandles.length; i++) add(stdioHandles[i]);
      let timeouts = 0, immediatesRefed = 0;
      ReflectApply(MapForEach, timers, [(t) => { if (t[kRefed] === true && !t._destroyed) timeouts++; }]);
      // The running one-shot timeout, unless its callback listed it again
      // (a refresh: it is in `timers` once more, counted above).
      const running = runningTimeout;
      if (running !== null && running[kRefed] === true && !running._destroyed &&
          timers.get(runningTimeoutId) !== running) timeouts++;
      ReflectApply(MapForEach, immediates, [(im) => { if (im[kRefed] === true) immediatesRefed++; }]);
      for (let i = 0; i < timeouts; i++) add('Timeout');
      for (let i = 0; i < immediatesRefed; i++) add('Immediate');
      return out;
    },
  };
  Object.defineProperty(process, Symbol.toStringTag, { __proto__: null, value: 'process', configurable: true });
  process.hrtime.bigint = () => BigInt(host.hrtime());
  // Node's warning printer (onWarning), the first 'warning' listener:
  // it runs before a program's own, and removing it (removeAllListeners)
  // silences warnings, as in Node.
  function onWarning(w) {
    if (!(w instanceof Error)) return;
    const isDeprecation = w.name === 'DeprecationWarning';
    let msg = '(node:' + process.pid + ') ';
    if (w.code) msg += '[' + w.code + '] ';
    msg += typeof w.toString === 'function' ? `${w.toString()}` : ReflectApply(Error.prototype.toString, w, []);
    if (typeof w.detail === 'string') msg += '\n' + w.detail;
    if (!warned) {
      // Node's hint, once per process: --trace-deprecation for a
      // DeprecationWarning, --trace-warnings for any other.
      const flag = isDeprecation ? '--trace-deprecation' : '--trace-warnings';
      msg += '\n(Use `node ' + flag + ' ...` to show where the warning was created)';
      warned = true;
    }
    // Through the console, as Node's warning handler writes: it makes
    // stderr and takes the console's after-write tick.
    consoleWrite(2, [msg]);
  }
  events.set('warning', [onWarning]);
  Object.defineProperty(process, 'exitCode', { __proto__: null,
    get() { return exitCodeValue; },
    set: setExitCode,
    enumerable: true,
    configurable: false,
  });

  const g = globalThis;
  // Options::clocks = Loop: `Date.now()`, `new Date()` and `Date()` read
  // the host's date, which follows the loop's virtual clock (as Node's
  // `mock.timers` replaces `Date`); every other use of `Date` is the
  // original's, and dates made here are real `Date`s (same prototype).
  if (host.followsLoopClock) {
    const RealDate = Date;
    const dateNow = host.dateNow;
    const ReflectConstruct = Reflect.construct;
    const DateToString = RealDate.prototype.toString;
    const LoopDate = function Date(...args) {
      if (new.target === undefined) {
        return ReflectApply(DateToString, new RealDate(dateNow()), []);
      }
      return ReflectConstruct(RealDate, args.length === 0 ? [dateNow()] : args, new.target);
    };
    Object.defineProperty(LoopDate, 'length', { __proto__: null, value: 7 });
    LoopDate.prototype = RealDate.prototype;
    LoopDate.now = function now() { return dateNow(); };
    LoopDate.parse = RealDate.parse;
    LoopDate.UTC = RealDate.UTC;
    Object.defineProperty(RealDate.prototype, 'constructor', { __proto__: null,
      value: LoopDate, writable: true, enumerable: false, configurable: true,
    });
    Object.defineProperty(g, 'Date', { __proto__: null,
      value: LoopDate, writable: true, enumerable: false, configurable: true,
    });
  }
  Object.assign(g, {
    setTimeout, setInterval, setImmediate, clearTimeout, clearImmediate,
    clearInterval, console, process,
    // timeOrigin: the wall clock at performance.now()'s origin.
    performance: { now: () => host.now(), timeOrigin: Date.now() - host.now() },
  });
  g.global = g;
  g.queueMicrotask = queueMicrotask;
  g.Buffer = Buffer;
  if (typeof g.TextDecoder !== 'function') g.TextDecoder = TextDecoder;

  // Node's order; `promises` is added below, as Node's getter.
  const timersModule = {
    setTimeout, clearTimeout, setImmediate, clearImmediate, setInterval, clearInterval,
    _unrefActive: deprecate((item) => insertGuarded(item, false),
      'timers._unrefActive() is deprecated. Please use timeout.refresh() instead.', 'DEP0127'),
    active: deprecate((item) => insertGuarded(item, true),
      'timers.active() is deprecated. Please use timeout.refresh() instead.', 'DEP0126'),
    unenroll: deprecate(unenroll, 'timers.unenroll() is deprecated. Please use clearTimeout instead.', 'DEP0096'),
    enroll: deprecate(enroll, 'timers.enroll() is deprecated. Please use setTimeout instead.', 'DEP0095'),
  };
  // --- Errors with Node's codes -------------------------------------
  function argTypeError(name, what, v) {
    const kind = name.includes('.') ? 'property' : 'argument';
    const e = new TypeError('The "' + name + '" ' + kind + ' must be ' + what + '. Received ' + describe(v));
    coded(e, 'ERR_INVALID_ARG_TYPE');
    return e;
  }
  class AbortError extends Error {
    constructor(message = 'The operation was aborted', options = undefined) {
      super(message, options);
      this.code = 'ABORT_ERR';
      this.name = 'AbortError';
    }
  }
  // Builtins EventTarget, Event, AbortSignal, DOMException,
  // timers/promises, events.once/on and util.promisify use, captured
  // before user code runs (as Node's primordials): a program that
  // replaces `Array.prototype.slice` or `push`, a Map's, WeakMap's or
  // Set's methods, `Promise.prototype.then` or `finally` does not reach
  // them. Option bags made here have a null prototype, and defaults are
  // Node's `kEmptyObject`, so a property a program puts on
  // `Object.prototype` is not read as an option.
  const TimeoutUnref = Timeout.prototype.unref;
  const SymbolDispose = Symbol.dispose;
  const SymbolAsyncIterator = Symbol.asyncIterator;
  const PromiseCtor = Promise;
  const PromisePrototypeThen = Promise.prototype.then;
  const PromiseResolveFn = Promise.resolve;
  const PromiseRejectFn = Promise.reject;
  const PromiseResolve = (v) => ReflectApply(PromiseResolveFn, PromiseCtor, [v]);
  const PromiseReject = (e) => ReflectApply(PromiseRejectFn, PromiseCtor, [e]);
  const WeakMapCtor = WeakMap;
  const { get: WeakMapGet, set: WeakMapSet, has: WeakMapHas } = WeakMap.prototype;
  function SafeWeakMap() {
    const m = new WeakMapCtor();
    m.get = WeakMapGet;
    m.set = WeakMapSet;
    m.has = WeakMapHas;
    return m;
  }
  const SetCtor = Set;
  const { add: SetAdd, delete: SetDelete } = Set.prototype;
  function SafeSet() {
    const s = new SetCtor();
    s.add = SetAdd;
    s.delete = SetDelete;
    return s;
  }
  const WeakRefCtor = typeof WeakRef === 'function' ? WeakRef : undefined;
  const WeakRefDeref = WeakRefCtor && WeakRefCtor.prototype.deref;
  // Node's SafePromise: a Promise whose prototype (frozen, with no
  // prototype of its own) holds the original `then`, `catch` and
  // `finally`, so its `finally` (which calls `then`, and makes more
  // SafePromises) runs no method a program replaced.
  class SafePromise extends PromiseCtor {
    constructor(executor) { super(executor); }
  }
  for (const [from, to] of [[PromiseCtor.prototype, SafePromise.prototype], [PromiseCtor, SafePromise]]) {
    const keys = ReflectOwnKeys(from);
    for (let i = 0; i < keys.length; i++) {
      if (!hasOwnProperty(to, keys[i])) defineProperty(to, keys[i], getOwnDescriptor(from, keys[i]));
    }
  }
  ObjectSetPrototypeOf(SafePromise.prototype, null);
  ObjectFreeze(SafePromise.prototype);
  ObjectFreeze(SafePromise);
  // Node's SafePromisePrototypeFinally, with its extra turns.
  const SafePromisePrototypeFinally = (thisPromise, onFinally) =>
    new PromiseCtor((a, b) =>
      new SafePromise((a2, b2) => ReflectApply(PromisePrototypeThen, thisPromise, [a2, b2]))
        .finally(onFinally)
        .then(a, b));

  // --- DOMException, as Node 20's internal/per_context/domexception ---
  // Not made by Error (its prototype's prototype is Error.prototype): the
  // name and message are in a private store behind the prototype's
  // getters, so an instance's own properties are its stack and, when the
  // options give one, its cause. A name of no legacy code (or a disused
  // one) has code 0.
  function domInvalidThis() {
    const err = new TypeError();
    ObjectDefineProperties(err, {
      message: {
        __proto__: null,
        value: 'Value of "this" must be of DOMException',
        enumerable: false,
        writable: true,
        configurable: true,
      },
      toString: {
        __proto__: null,
        value() { return `${this.name} [ERR_INVALID_THIS]: ${this.message}`; },
        enumerable: false,
        writable: true,
        configurable: true,
      },
    });
    err.code = 'ERR_INVALID_THIS';
    throw err;
  }
  const domInternals = SafeWeakMap();
  const domCodeOf = SafeMap();
  const disusedDomNames = SafeMap();
  disusedDomNames.set('DOMStringSizeError', true);
  disusedDomNames.set('NoDataAllowedError', true);
  disusedDomNames.set('ValidationError', true);
  class DOMException {
    constructor(message = '', options = 'Error') {
      captureStackTrace(this);
      if (options && typeof options === 'object') {
        const { name } = options;
        domInternals.set(this, { __proto__: null, message: `${message}`, name: `${name}` });
        if ('cause' in options) {
          defineProperty(this, 'cause', {
            __proto__: null, value: options.cause, configurable: true, writable: true, enumerable: false,
          });
        }
      } else {
        domInternals.set(this, { __proto__: null, message: `${message}`, name: `${options}` });
      }
    }
    get name() {
      const internals = domInternals.get(this);
      if (internals === undefined) domInvalidThis();
      return internals.name;
    }
    get message() {
      const internals = domInternals.get(this);
      if (internals === undefined) domInvalidThis();
      return internals.message;
    }
    get code() {
      const internals = domInternals.get(this);
      if (internals === undefined) domInvalidThis();
      if (disusedDomNames.has(internals.name)) return 0;
      const code = domCodeOf.get(internals.name);
      return code === undefined ? 0 : code;
    }
  }
  ObjectSetPrototypeOf(DOMException.prototype, ErrorCtor.prototype);
  ObjectDefineProperties(DOMException.prototype, {
    [Symbol.toStringTag]: { __proto__: null, configurable: true, value: 'DOMException' },
    name: { __proto__: null, enumerable: true, configurable: true },
    message: { __proto__: null, enumerable: true, configurable: true },
    code: { __proto__: null, enumerable: true, configurable: true },
  });
  {
    const legacy = [
      'IndexSizeError', 'INDEX_SIZE_ERR', 'DOMStringSizeError', 'DOMSTRING_SIZE_ERR',
      'HierarchyRequestError', 'HIERARCHY_REQUEST_ERR', 'WrongDocumentError', 'WRONG_DOCUMENT_ERR',
      'InvalidCharacterError', 'INVALID_CHARACTER_ERR', 'NoDataAllowedError', 'NO_DATA_ALLOWED_ERR',
      'NoModificationAllowedError', 'NO_MODIFICATION_ALLOWED_ERR', 'NotFoundError', 'NOT_FOUND_ERR',
      'NotSupportedError', 'NOT_SUPPORTED_ERR', 'InUseAttributeError', 'INUSE_ATTRIBUTE_ERR',
      'InvalidStateError', 'INVALID_STATE_ERR', 'SyntaxError', 'SYNTAX_ERR',
      'InvalidModificationError', 'INVALID_MODIFICATION_ERR', 'NamespaceError', 'NAMESPACE_ERR',
      'InvalidAccessError', 'INVALID_ACCESS_ERR', 'ValidationError', 'VALIDATION_ERR',
      'TypeMismatchError', 'TYPE_MISMATCH_ERR', 'SecurityError', 'SECURITY_ERR',
      'NetworkError', 'NETWORK_ERR', 'AbortError', 'ABORT_ERR', 'URLMismatchError', 'URL_MISMATCH_ERR',
      'QuotaExceededError', 'QUOTA_EXCEEDED_ERR', 'TimeoutError', 'TIMEOUT_ERR',
      'InvalidNodeTypeError', 'INVALID_NODE_TYPE_ERR', 'DataCloneError', 'DATA_CLONE_ERR',
    ];
    for (let i = 0; i < legacy.length; i += 2) {
      const desc = { __proto__: null, enumerable: true, value: i / 2 + 1 };
      defineProperty(DOMException, legacy[i + 1], desc);
      defineProperty(DOMException.prototype, legacy[i + 1], desc);
      domCodeOf.set(legacy[i], i / 2 + 1);
    }
  }

  // --- EventTarget, Event, AbortController, AbortSignal ---------------
  // As Node 20's event_target.js and abort_controller.js: dispatch is
  // synchronous, listeners in the order they were added; a listener's
  // exception (or its returned promise's rejection) becomes an uncaught
  // exception from a tick. Each type's listeners are Node's linked list,
  // walked with the next one taken before a listener runs: a listener
  // added during a dispatch runs in it (unless the adder was the last one
  // then), a removed one is skipped by its flag. State is in private
  // fields (nothing shows in Object.keys, JSON or inspect, which prints
  // Node's custom forms). Node's own listeners (timers/promises', a
  // `signal` option's) resist stopImmediatePropagation (kResist).
  const kResist = Symbol('kResistStopPropagation');
  const kWeakHandler = Symbol('kWeak');
  const kIsEventTarget = Symbol.for('nodejs.event_target');
  function missingArgs(a, b) {
    const e = new TypeError(b === undefined ?
      `The "${a}" argument must be specified` : `The "${a}" and "${b}" arguments must be specified`);
    return coded(e, 'ERR_MISSING_ARGS');
  }
  // Node's validateObject: with `allowObjects`, arrays and functions too.
  function validateObject(value, name, allowObjects) {
    if (value === null || (!allowObjects && ArrayIsArray(value)) ||
        (typeof value !== 'object' && (!allowObjects || typeof value !== 'function'))) {
      throw argTypeError(name, 'of type object', value);
    }
  }
  // webidl's DOMString: a symbol is ERR_INVALID_ARG_VALUE.
  function domString(v) {
    if (typeof v === 'symbol') {
      let shown = inspectValue(v);
      if (shown.length > 128) shown = shown.slice(0, 128) + '...';
      throw coded(new TypeError(`The argument 'value' is invalid. Received ${shown}`), 'ERR_INVALID_ARG_VALUE');
    }
    return StringOf(v);
  }
  const kEnumerable = { __proto__: null, enumerable: true };
  function enumerableProps(proto, names) {
    for (let i = 0; i < names.length; i++) defineProperty(proto, names[i], kEnumerable);
  }
  function toStringTag(proto, value) {
    defineProperty(proto, Symbol.toStringTag, {
      __proto__: null, writable: false, enumerable: false, configurable: true, value,
    });
  }
  let eventState, isEvent;
  class Event {
    #type; #target = null; #dispatching = false; #stop = false;
    #cancelable = false; #bubbles = false; #composed = false; #defaultPrevented = false;
    #timeStamp = host.now(); #propagationStopped = false; #trusted = false;
    constructor(type, options = undefined) {
      if (arguments.length === 0) throw missingArgs('type');
      if (options != null) validateObject(options, 'options');
      this.#bubbles = !!options?.bubbles;
      this.#cancelable = !!options?.cancelable;
      this.#composed = !!options?.composed;
      this.#type = `${type}`;
    }
    static {
      isEvent = (e) => e !== null && typeof e === 'object' && #type in e;
      eventState = {
        begin(e, target) { e.#target = target; e.#dispatching = true; },
        end(e) { e.#dispatching = false; },
        dispatching: (e) => e.#dispatching,
        stopped: (e) => e.#stop,
        trust(e) { e.#trusted = true; },
      };
    }
    initEvent(type, bubbles = false, cancelable = false) {
      if (arguments.length === 0) throw missingArgs('type');
      if (this.#dispatching) return;
      this.#type = `${type}`;
      this.#bubbles = !!bubbles;
      this.#cancelable = !!cancelable;
    }
    [customInspectSymbol](depth, options) {
      if (!isEvent(this)) throw invalidThis('Event');
      const name = this.constructor.name;
      if (depth < 0) return name;
      const o = ObjectAssign({}, options, { depth: NumberIsInteger(options.depth) ? options.depth - 1 : options.depth });
      return `${name} ${inspectValue({
        type: this.#type, defaultPrevented: this.#defaultPrevented,
        cancelable: this.#cancelable, timeStamp: this.#timeStamp,
      }, o)}`;
    }
    stopImmediatePropagation() {
      if (!isEvent(this)) throw invalidThis('Event');
      this.stopPropagation();
      this.#stop = true;
    }
    preventDefault() {
      if (!isEvent(this)) throw invalidThis('Event');
      this.#defaultPrevented = true;
    }
    get target() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#target;
    }
    get currentTarget() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#dispatching ? this.#target : null;
    }
    get srcElement() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#target;
    }
    get type() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#type;
    }
    get cancelable() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#cancelable;
    }
    get defaultPrevented() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#cancelable && this.#defaultPrevented;
    }
    get timeStamp() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#timeStamp;
    }
    composedPath() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#dispatching ? [this.#target] : [];
    }
    get returnValue() {
      if (!isEvent(this)) throw invalidThis('Event');
      return !this.#cancelable || !this.#defaultPrevented;
    }
    get bubbles() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#bubbles;
    }
    get composed() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#composed;
    }
    // 0 (NONE) outside a dispatch, 2 (AT_TARGET) during one: listeners
    // only ever run at the target here.
    get eventPhase() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#dispatching ? 2 : 0;
    }
    get cancelBubble() {
      if (!isEvent(this)) throw invalidThis('Event');
      return this.#propagationStopped;
    }
    set cancelBubble(value) {
      if (!isEvent(this)) throw invalidThis('Event');
      if (value) this.#propagationStopped = true;
    }
    stopPropagation() {
      if (!isEvent(this)) throw invalidThis('Event');
      this.#propagationStopped = true;
    }
    // Node's: on the prototype, not the instance (a getter of no name).
    static {
      defineProperty(Event.prototype, 'isTrusted', {
        __proto__: null,
        configurable: false,
        enumerable: true,
        get: getOwnDescriptor({
          get isTrusted() { return this !== null && typeof this === 'object' && #trusted in this && this.#trusted; },
        }, 'isTrusted').get,
      });
    }
  }
  toStringTag(Event.prototype, 'Event');
  enumerableProps(Event.prototype, [
    'initEvent', 'stopImmediatePropagation', 'preventDefault', 'target', 'currentTarget', 'srcElement',
    'type', 'cancelable', 'defaultPrevented', 'timeStamp', 'composedPath', 'returnValue', 'bubbles',
    'composed', 'eventPhase', 'cancelBubble', 'stopPropagation',
  ]);
  {
    const phases = ['NONE', 'CAPTURING_PHASE', 'AT_TARGET', 'BUBBLING_PHASE'];
    for (let i = 0; i < phases.length; i++) {
      defineProperty(Event, phases[i], { __proto__: null, writable: false, configurable: false, enumerable: true, value: i });
    }
  }
  // EventEmitter.defaultMaxListeners (also the limit an EventTarget takes
  // when made).
  let defaultMaxListeners = 10;
  // AbortSignal's hooks (a composite kept alive while listened to).
  let signalListened, signalUnlistened;
  // Node's Listener, as a null-prototype record: `next`/`previous` links
  // (the list's root is the first `previous`), flags, and the callback
  // (for an object, an async function calling its `handleEvent`).
  function newListener(previous, listener, once, capture, passive, weak, resist) {
    const l = {
      __proto__: null,
      next: undefined, previous, listener, callback: listener,
      once: !!once, capture: !!capture, passive: !!passive, weak: !!weak, resist: !!resist,
      removed: false,
    };
    if (previous !== undefined) previous.next = l;
    if (typeof listener !== 'function') {
      l.callback = async (...args) => {
        if (listener.handleEvent) await ReflectApply(listener.handleEvent, listener, args);
      };
    }
    return l;
  }
  function unlinkListener(l) {
    if (l.previous !== undefined) l.previous.next = l.next;
    if (l.next !== undefined) l.next.previous = l.previous;
    l.removed = true;
  }
  // Node's: true when a function, or an object (its `handleEvent` looked
  // up when called); false (no effect) for null and undefined.
  function validateEventListener(listener) {
    if (typeof listener === 'function' || typeof listener?.handleEvent === 'function') return true;
    if (listener == null) return false;
    if (typeof listener === 'object') return true;
    throw argTypeError('listener', 'an instance of EventListener', listener);
  }
  // Node's: a boolean is the capture flag (the rest then read from
  // Object.prototype, as Node's plain object gives them).
  function validateEventListenerOptions(options) {
    if (typeof options === 'boolean') return { capture: options };
    if (options === null) return kEmptyObject;
    validateObject(options, 'options', true);
    return {
      __proto__: null,
      once: !!options.once,
      capture: !!options.capture,
      passive: !!options.passive,
      signal: options.signal,
      weak: options[kWeakHandler],
      resistStopPropagation: options[kResist] ?? false,
    };
  }
  function emitUncaughtException(err) {
    nextTick(() => { throw err; });
  }
  function addCatch(promise) {
    const then = promise.then;
    if (typeof then === 'function') {
      ReflectApply(then, promise, [undefined, function (err) { emitUncaughtException(err); }]);
    }
  }
  // Node's isEventTarget: by the constructor's well-known symbol.
  const isEventTarget = (obj) => obj?.constructor?.[kIsEventTarget];
  let targetState;
  class EventTarget {
    static [kIsEventTarget] = true;
    #events = SafeMap();
    #max = defaultMaxListeners;
    #warned = false;
    #handlers = SafeMap();
    static {
      targetState = {
        has: (t) => t !== null && typeof t === 'object' && #events in t,
        events: (t) => t.#events,
        handlers: (t) => t.#handlers,
        max: (t) => t.#max,
        setMax(t, n) { t.#max = n; t.#warned = false; },
        // Node's kNewListener: the warning past the limit (once per
        // target), then AbortSignal's hook.
        added(t, size, type, weak) {
          if (t.#max > 0 && size > t.#max && !t.#warned) {
            t.#warned = true;
            const w = new Error('Possible EventTarget memory leak detected. ' +
              `${size} ${type} listeners added to ${inspectValue(t, { depth: -1 })}. MaxListeners is ${t.#max}. Use ` +
              'events.setMaxListeners() to increase limit');
            w.name = 'MaxListenersExceededWarning';
            w.target = t;
            w.type = type;
            w.count = size;
            process.emitWarning(w);
          }
          signalListened(t, size, type, weak);
        },
        removed(t, size, type) { signalUnlistened(t, size, type); },
      };
    }
    addEventListener(type, listener, options = kEmptyObject) {
      if (!isEventTarget(this)) throw invalidThis('EventTarget');
      if (arguments.length < 2) throw missingArgs('type', 'listener');
      let once = false, capture = false, passive = false, weak = false, resist = false;
      if (options !== kEmptyObject) {
        // Validated before the listener, as Node's (the spec has the
        // getters read first).
        options = validateEventListenerOptions(options);
        once = options.once;
        capture = options.capture;
        passive = options.passive;
        weak = options.weak;
        resist = options.resistStopPropagation;
        const signal = options.signal;
        validateAbortSignal(signal, 'options.signal');
        if (signal) {
          if (signal.aborted) return;
          signal.addEventListener('abort', () => {
            this.removeEventListener(type, listener, options);
          }, { __proto__: null, once: true, [kWeakHandler]: this, [kResist]: true });
        }
      }
      if (!validateEventListener(listener)) {
        const w = new Error(`addEventListener called with ${listener} which has no effect.`);
        w.name = 'AddEventListenerArgumentTypeWarning';
        w.target = this;
        w.type = type;
        process.emitWarning(w);
        return;
      }
      type = domString(type);
      const events = this.#events;
      let root = events.get(type);
      if (root === undefined) {
        root = { __proto__: null, size: 1, next: undefined, resist: !!resist };
        newListener(root, listener, once, capture, passive, weak, resist);
        targetState.added(this, root.size, type, weak);
        events.set(type, root);
        return;
      }
      let handler = root.next;
      let previous = root;
      // One listener per function and capture flag.
      while (handler !== undefined && !(handler.listener === listener && handler.capture === capture)) {
        previous = handler;
        handler = handler.next;
      }
      if (handler !== undefined) return;
      newListener(previous, listener, once, capture, passive, weak, resist);
      root.size++;
      root.resist ||= !!resist;
      targetState.added(this, root.size, type, weak);
    }
    removeEventListener(type, listener, options = kEmptyObject) {
      if (!isEventTarget(this)) throw invalidThis('EventTarget');
      if (arguments.length < 2) throw missingArgs('type', 'listener');
      if (!validateEventListener(listener)) return;
      type = domString(type);
      // Node's: only `{ capture: true }`, not a bare `true`, names a
      // capture listener.
      const capture = options?.capture === true;
      const events = this.#events;
      const root = events.get(type);
      if (root === undefined || root.next === undefined) return;
      let handler = root.next;
      while (handler !== undefined) {
        if (handler.listener === listener && handler.capture === capture) {
          unlinkListener(handler);
          root.size--;
          if (root.size === 0) events.delete(type);
          targetState.removed(this, root.size, type);
          break;
        }
        handler = handler.next;
      }
    }
    dispatchEvent(event) {
      if (!isEventTarget(this)) throw invalidThis('EventTarget');
      if (arguments.length < 1) throw missingArgs('event');
      if (!(event instanceof Event)) throw argTypeError('event', 'an instance of Event', event);
      if (eventState.dispatching(event)) {
        throw coded(new Error(`The event "${event.type}" is already being dispatched`), 'ERR_EVENT_RECURSION');
      }
      const type = event.type;
      eventState.begin(event, this);
      const root = this.#events.get(type);
      if (root === undefined || root.next === undefined) {
        eventState.end(event);
        return event.defaultPrevented !== true;
      }
      let handler = root.next;
      let next;
      while (handler !== undefined && (root.resist || handler.passive || !eventState.stopped(event))) {
        // Taken before the listener runs, which may remove this one.
        next = handler.next;
        // Removed while the event was dispatched, or after
        // stopImmediatePropagation (only Node's own listeners run).
        if (handler.removed || (eventState.stopped(event) && !handler.resist)) {
          handler = next;
          continue;
        }
        if (handler.once) {
          unlinkListener(handler);
          root.size--;
          targetState.removed(this, root.size, type);
        }
        try {
          const result = ReflectApply(handler.callback, this, [event]);
          // As Node 20's: the event is "being dispatched" (phase 2,
          // currentTarget set, a re-dispatch ERR_EVENT_RECURSION) until a
          // listener returns.
          eventState.end(event);
          if (result !== undefined && result !== null) addCatch(result);
        } catch (err) {
          emitUncaughtException(err);
        }
        handler = next;
      }
      eventState.end(event);
      return event.defaultPrevented !== true;
    }
    [customInspectSymbol](depth, options) {
      if (!isEventTarget(this)) throw invalidThis('EventTarget');
      const name = this.constructor.name;
      if (depth < 0) return name;
      const o = ObjectAssign({}, options, { depth: NumberIsInteger(options.depth) ? options.depth - 1 : options.depth });
      return `${name} ${inspectValue({}, o)}`;
    }
  }
  enumerableProps(EventTarget.prototype, ['addEventListener', 'removeEventListener', 'dispatchEvent']);
  toStringTag(EventTarget.prototype, 'EventTarget');
  class CustomEvent extends Event {
    #detail;
    constructor(type, options = kEmptyObject) {
      if (arguments.length === 0) throw missingArgs('type');
      super(type, options);
      this.#detail = options?.detail ?? null;
    }
    get detail() {
      if (!(isEvent(this) && #detail in this)) throw invalidThis('CustomEvent');
      return this.#detail;
    }
  }
  toStringTag(CustomEvent.prototype, 'CustomEvent');
  enumerableProps(CustomEvent.prototype, ['detail']);
  // Node's `on<name>` handler attribute: one listener (a wrapper calling
  // what was last set), added at the first assignment (as the DOM's); a
  // later function counts as a listener again, anything else as none.
  function makeEventHandler(handler) {
    function eventHandler(...args) {
      if (typeof eventHandler.handler !== 'function') return;
      return ReflectApply(eventHandler.handler, this, args);
    }
    eventHandler.handler = handler;
    return eventHandler;
  }
  function defineEventHandler(emitter, name) {
    const propName = `on${name}`;
    // Node's validateInternalField.
    function get() {
      if (!targetState.has(this)) throw argTypeError('this', 'an instance of EventTarget', this);
      return targetState.handlers(this).get(name)?.handler ?? null;
    }
    defineProperty(get, 'name', { __proto__: null, value: `get ${propName}` });
    function set(value) {
      if (!targetState.has(this)) throw argTypeError('this', 'an instance of EventTarget', this);
      const handlers = targetState.handlers(this);
      let wrappedHandler = handlers.get(name);
      if (wrappedHandler) {
        const root = targetState.events(this).get(name);
        if (typeof wrappedHandler.handler === 'function') {
          root.size--;
          targetState.removed(this, root.size, name);
        }
        wrappedHandler.handler = value;
        if (typeof wrappedHandler.handler === 'function') {
          root.size++;
          targetState.added(this, root.size, name, false);
        }
      } else {
        wrappedHandler = makeEventHandler(value);
        this.addEventListener(name, wrappedHandler);
      }
      handlers.set(name, wrappedHandler);
    }
    defineProperty(set, 'name', { __proto__: null, value: `set ${propName}` });
    defineProperty(emitter, propName, { __proto__: null, get, set, configurable: true, enumerable: true });
  }
  let makingSignal = false, signalState, isSignal;
  // Composite signals (AbortSignal.any) with abort listeners, kept alive
  // while they may still abort: their sources hold them only weakly.
  const persistentSignals = SafeSet();
  const weak = WeakRefCtor !== undefined ?
    (v) => { const r = new WeakRefCtor(v); return () => ReflectApply(WeakRefDeref, r, []); } :
    (v) => () => v;
  class AbortSignal extends EventTarget {
    #aborted = false; #reason = undefined; #dependants = null; #sources = null;
    constructor() {
      if (!makingSignal) {
        const e = new TypeError('Illegal constructor');
        coded(e, 'ERR_ILLEGAL_CONSTRUCTOR');
        throw e;
      }
      super();
    }
    static {
      isSignal = (s) => s !== null && typeof s === 'object' && #aborted in s;
      signalState = {
        // Node's abortSignal: the signal's listeners first, then its
        // dependants (the AbortSignal.any signals made from it), in the
        // order they were made.
        // Node's createAbortSignal({ aborted: true }): aborted from the
        // start, with no event (AbortSignal.abort).
        aborted(reason) {
          const s = newSignal();
          s.#aborted = true;
          s.#reason = reason;
          return s;
        },
        abort(s, reason) {
          if (s.#aborted) return;
          s.#aborted = true;
          s.#reason = reason;
          persistentSignals.delete(s);
          const e = new Event('abort');
          eventState.trust(e);
          s.dispatchEvent(e);
          const dependants = s.#dependants;
          if (dependants !== null) {
            for (let i = 0; i < dependants.length; i++) {
              const ds = dependants[i]();
              if (ds !== undefined) signalState.abort(ds, reason);
            }
          }
        },
        any(signals) {
          const result = newSignal();
          const sources = result.#sources = [];
          const ref = weak(result);
          for (let i = 0; i < signals.length; i++) {
            const signal = signals[i];
            if (signal.#aborted) {
              signalState.abort(result, signal.#reason);
              return result;
            }
            // A composite's own sources stand for it (one level deep).
            const from = signal.#sources === null ? [signal] : signal.#sources;
            for (let j = 0; j < from.length; j++) {
              const src = from[j];
              let known = false;
              for (let k = 0; k < sources.length && !known; k++) known = sources[k] === src;
              if (known) continue;
              ReflectApply(ArrayPush, sources, [src]);
              ReflectApply(ArrayPush, src.#dependants ??= [], [ref]);
            }
          }
          return result;
        },
        // Node's kNewListener and kRemoveListener: a composite with
        // sources stays alive while it has abort listeners (but for weak
        // ones, a `signal` option's).
        listened(s, size, type, weakListener) {
          if (type === 'abort' && size === 1 && !weakListener && !s.#aborted &&
              s.#sources !== null && s.#sources.length > 0) {
            persistentSignals.add(s);
          }
        },
        unlistened(s, size, type) {
          if (type === 'abort' && size === 0 && s.#sources !== null && s.#sources.length > 0) {
            persistentSignals.delete(s);
          }
        },
      };
    }
    get aborted() {
      if (!isSignal(this)) throw invalidThis('AbortSignal');
      return this.#aborted;
    }
    get reason() {
      if (!isSignal(this)) throw invalidThis('AbortSignal');
      return this.#reason;
    }
    throwIfAborted() {
      if (!isSignal(this)) throw invalidThis('AbortSignal');
      if (this.#aborted) throw this.#reason;
    }
    [customInspectSymbol](depth, options) {
      // Too deep: Node's signal has own (symbol) keys, so it shows as
      // `[AbortSignal]`.
      if (depth < 0) return `[${this.constructor.name}]`;
      const o = ObjectAssign({}, options, { depth: options.depth === null ? null : options.depth - 1 });
      return `${this.constructor.name} ${inspectValue({ aborted: this.#aborted }, o)}`;
    }
    static abort(reason = new DOMException('This operation was aborted', 'AbortError')) {
      return signalState.aborted(reason);
    }
    // Node's timer for it is unrefed: it does not keep the process alive.
    static timeout(delay) {
      if (typeof delay !== 'number') throw argTypeError('delay', 'of type number', delay);
      if (!NumberIsInteger(delay)) throw outOfRange('delay', 'an integer', delay);
      if (delay < 0 || delay > 4294967295) throw outOfRange('delay', '>= 0 && <= 4294967295', delay);
      const s = newSignal();
      setTimeout(() => abortSignal(s, new DOMException('The operation was aborted due to timeout', 'TimeoutError')), delay).unref();
      return s;
    }
    static any(signals) {
      if (!ArrayIsArray(signals)) throw argTypeError('signals', 'an instance of Array', signals);
      for (let i = 0; i < signals.length; i++) {
        if (!(signals[i] instanceof AbortSignal)) {
          throw argTypeError(`signals[${i}]`, 'an instance of AbortSignal', signals[i]);
        }
      }
      return signalState.any(signals);
    }
  }
  enumerableProps(AbortSignal.prototype, ['aborted']);
  toStringTag(AbortSignal.prototype, 'AbortSignal');
  signalListened = (target, size, type, weakListener) => {
    if (isSignal(target)) signalState.listened(target, size, type, weakListener);
  };
  signalUnlistened = (target, size, type) => {
    if (isSignal(target)) signalState.unlistened(target, size, type);
  };
  defineEventHandler(AbortSignal.prototype, 'abort');
  function newSignal() {
    makingSignal = true;
    try { return new AbortSignal(); } finally { makingSignal = false; }
  }
  function abortSignal(s, reason) {
    signalState.abort(s, reason);
  }
  class AbortController {
    #signal = undefined;
    get signal() { return this.#signal ??= newSignal(); }
    abort(reason = new DOMException('This operation was aborted', 'AbortError')) {
      abortSignal(this.#signal ??= newSignal(), reason);
    }
    [customInspectSymbol](depth, options) {
      // Too deep: Node's controller has no own keys (a private field).
      if (depth < 0) return `${this.constructor.name} {}`;
      const o = ObjectAssign({}, options, { depth: options.depth === null ? null : options.depth - 1 });
      return `${this.constructor.name} ${inspectValue({ signal: this.signal }, o)}`;
    }
  }
  enumerableProps(AbortController.prototype, ['signal', 'abort']);
  toStringTag(AbortController.prototype, 'AbortController');

  // --- TextEncoder, structuredClone ----------------------------------
  // Node's TextEncoder (lib/internal/encoding.js): UTF-8, a lone
  // surrogate as U+FFFD (as the WHATWG encoder).
  const kEncoder = Symbol('encoder');
  function validateEncoder(obj) {
    if (obj == null || obj[kEncoder] !== true) throw invalidThis('TextEncoder');
  }
  // Node's encodeUtf8String: a Uint8Array of the string's UTF-8.
  function encodeUtf8String(s) {
    const u = utf8Units(s);
    const out = new Uint8ArrayCtor(u.length);
    writeLatin1Units(out, 0, u);
    return out;
  }
  // Node's encodeInto (V8's WriteUtf8: whole characters only): how many
  // UTF-16 units were read and bytes written.
  function encodeInto(src, dest) {
    const room = TypedArrayPrototypeGetLength(dest);
    let u = utf8Units(src);
    let read = src.length;
    if (u.length > room) {
      let n = room;
      while (n > 0 && (StringPrototypeCharCodeAt(u, n) & 0xc0) === 0x80) n--;
      u = StringPrototypeSlice(u, 0, n);
      read = 0;
      for (let i = 0; i < n; i++) {
        const c = StringPrototypeCharCodeAt(u, i);
        if ((c & 0xc0) !== 0x80) read += c >= 0xf0 ? 2 : 1;
      }
    }
    writeLatin1Units(dest, 0, u);
    return { read, written: u.length };
  }
  class TextEncoder {
    constructor() {
      this[kEncoder] = true;
    }
    get encoding() {
      validateEncoder(this);
      return 'utf-8';
    }
    encode(input = '') {
      validateEncoder(this);
      return encodeUtf8String(`${input}`);
    }
    encodeInto(src, dest) {
      validateEncoder(this);
      validateString(src, 'src');
      if (!dest || !isUint8Array(dest)) throw invalidArgType('dest', 'Uint8Array', dest);
      return encodeInto(src, dest);
    }
    [customInspectSymbol](depth, opts) {
      validateEncoder(this);
      if (typeof depth === 'number' && depth < 0) return this;
      const ctor = getConstructorOf(this);
      const obj = { __proto__: { constructor: ctor === null ? TextEncoder : ctor } };
      obj.encoding = this.encoding;
      return inspectValue(obj, opts);
    }
  }
  ObjectDefineProperties(TextEncoder.prototype, {
    encode: kEnumerableProperty,
    encodeInto: kEnumerableProperty,
    encoding: kEnumerableProperty,
    [Symbol.toStringTag]: { __proto__: null, configurable: true, value: 'TextEncoder' },
  });
  // structuredClone as V8's serializer clones within one realm: plain
  // data (objects as plain objects, own enumerable keys; arrays with
  // their holes), Date, RegExp, Map, Set, boxed primitives, BigInt,
  // ArrayBuffers (shared by their views in the clone too), typed arrays,
  // DataViews and errors (name, message, stack, cause); anything else
  // (functions, symbols, WeakMap, Promise...) is a DataCloneError.
  const errorTypes = { EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  function structuredClone(value, options = undefined) {
    if (arguments.length === 0) {
      const e = new TypeError('The value argument must be specified');
      e.code = 'ERR_MISSING_ARGS';
      throw e;
    }
    if (options != null && typeof options !== 'object' && typeof options !== 'function') {
      const e = new TypeError('The options argument must be either an object or undefined');
      e.code = 'ERR_INVALID_ARG_TYPE';
      throw e;
    }
    if (options != null && options.transfer !== undefined &&
        (options.transfer === null || typeof options.transfer[Symbol.iterator] !== 'function')) {
      const e = new TypeError('Optional transferList argument must be an iterable');
      e.code = 'ERR_INVALID_ARG_TYPE';
      throw e;
    }
    const seen = new Map();
    const fail = (v) => {
      let text;
      if (typeof v === 'function') text = ReflectApply(FunctionToString, v, []);
      else if (typeof v === 'symbol') text = v.toString();
      else text = `#<${(v.constructor && v.constructor.name) || 'Object'}>`;
      throw new DOMException(`${text} could not be cloned.`, 'DataCloneError');
    };
    const tag = (v) => ReflectApply(ObjectToString, v, []);
    function clone(v) {
      if (typeof v === 'symbol' || typeof v === 'function') fail(v);
      if (typeof v !== 'object' || v === null) return v;
      if (seen.has(v)) return seen.get(v);
      let out;
      const keep = (o) => { seen.set(v, o); return o; };
      if (Array.isArray(v)) {
        out = keep(new Array(v.length));
      } else if (isDate(v)) {
        return keep(new Date(ReflectApply(DateGetTime, v, [])));
      } else if (isRegExp(v)) {
        return keep(new RegExp(v.source, v.flags));
      } else if (isMap(v)) {
        out = keep(new Map());
        for (const [k, x] of v) out.set(clone(k), clone(x));
        return out;
      } else if (isSet(v)) {
        out = keep(new Set());
        for (const x of v) out.add(clone(x));
        return out;
      } else if (v instanceof ArrayBuffer) {
        return keep(v.slice(0));
      } else if (ArrayBuffer.isView(v)) {
        const buffer = clone(v.buffer);
        if (v instanceof DataView) return keep(new DataView(buffer, v.byteOffset, v.byteLength));
        // Its own typed array kind (a Buffer comes back a Uint8Array).
        const Kind = globalThis[TypedArrayTag.call(v)];
        return keep(new Kind(buffer, v.byteOffset, v.length));
      } else if (tag(v) === '[object Error]') {
        const Ctor = errorTypes[v.name] || Error;
        out = keep(Object.create(Ctor.prototype));
        for (const k of ['message', 'stack']) {
          if (v[k] !== undefined) Object.defineProperty(out, k, { __proto__: null, value: `${v[k]}`, writable: true, configurable: true });
        }
        if (hasOwn(v, 'cause')) Object.defineProperty(out, 'cause', { __proto__: null, value: clone(v.cause), writable: true, configurable: true });
        return out;
      } else if (v instanceof WeakMap || v instanceof WeakSet || v instanceof Promise ||
                 (typeof WeakRef === 'function' && v instanceof WeakRef) ||
                 ['[object Generator]', '[object AsyncGenerator]'].includes(tag(v))) {
        fail(v);
      } else if (v instanceof String || v instanceof Number || v instanceof Boolean ||
                 (typeof BigInt === 'function' && v instanceof BigInt)) {
        return keep(Object(v.valueOf()));
      } else {
        out = keep({});
      }
      for (const k of Object.keys(v)) out[k] = clone(v[k]);
      return out;
    }
    return clone(value);
  }

  if (typeof g.TextEncoder !== 'function') {
    Object.defineProperty(g, 'TextEncoder', { __proto__: null, value: TextEncoder, writable: true, configurable: true });
  }
  if (typeof g.structuredClone !== 'function') g.structuredClone = structuredClone;

  // --- timers/promises, as Node 20's lib/timers/promises.js -------------
  function timerOptions(options, after) {
    if (after !== undefined && typeof after !== 'number') return argTypeError('delay', 'of type number', after);
    if (options == null || typeof options !== 'object' || ArrayIsArray(options)) {
      return argTypeError('options', 'of type object', options);
    }
    // Node's reads, in its order (a getter runs as often as under node:
    // a check, the check's own read, then the destructuring), and its
    // duck-typed signal (any object with `aborted`).
    if (typeof options?.signal !== 'undefined') {
      try {
        validateAbortSignal(options.signal, 'options.signal');
      } catch (e) {
        return e;
      }
    }
    if (typeof options?.ref !== 'undefined') {
      const r = options.ref;
      if (typeof r !== 'boolean') return argTypeError('options.ref', 'of type boolean', r);
    }
    const { signal, ref = true } = options;
    return { signal, ref };
  }
  // The promise for one timeout or immediate: `start(resolve, ref)` makes
  // the handle, `cancel(handle)` clears it on abort. With a signal, the
  // promise is Node's `ret.finally(remove the listener)`, ticks included.
  function timerPromise(options, after, start, cancel) {
    const o = timerOptions(options, after);
    if (o instanceof Error) return PromiseReject(o);
    const { signal, ref } = o;
    if (signal && signal.aborted) return PromiseReject(new AbortError(undefined, { cause: signal.reason }));
    let oncancel;
    const ret = new PromiseCtor((resolve, reject) => {
      const handle = start(resolve, ref);
      if (signal) {
        oncancel = () => {
          if (handle._destroyed || handle._onTimeout === null) return;
          if (handle._onTimeout !== undefined && handle._repeat === null && !timers.has(idOf(handle))) return;
          cancel(handle);
          reject(new AbortError(undefined, { cause: signal.reason }));
        };
        signal.addEventListener('abort', oncancel, { __proto__: null, [kResist]: true });
      }
    });
    if (oncancel === undefined) return ret;
    return SafePromisePrototypeFinally(ret, () => signal.removeEventListener('abort', oncancel));
  }
  async function* intervalIterator(after, value, options = kEmptyObject) {
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
      if (!ref) ReflectApply(TimeoutUnref, interval, []);
      if (signal) {
        onCancel = () => {
          clearTimeout(interval);
          if (callback) {
            callback(PromiseReject(new AbortError(undefined, { cause: signal.reason })));
            callback = undefined;
          }
        };
        signal.addEventListener('abort', onCancel, { __proto__: null, once: true, [kResist]: true });
      }
      while (!(signal && signal.aborted)) {
        if (notYielded === 0) await new PromiseCtor((resolve) => { callback = resolve; });
        for (; notYielded > 0; notYielded--) yield value;
      }
      throw new AbortError(undefined, { cause: signal && signal.reason });
    } finally {
      clearTimeout(interval);
      if (signal) signal.removeEventListener('abort', onCancel);
    }
  }
  // Node's `Scheduler`: made once, by the module, never by a program.
  const kScheduler = Symbol('kScheduler');
  let makingScheduler = false;
  class Scheduler {
    constructor() {
      if (!makingScheduler) throw coded(new TypeError('Illegal constructor'), 'ERR_ILLEGAL_CONSTRUCTOR');
      this[kScheduler] = true;
    }
    yield() {
      if (!this[kScheduler]) throw invalidThis('Scheduler');
      return timersPromises.setImmediate();
    }
    wait(delay, options) {
      if (!this[kScheduler]) throw invalidThis('Scheduler');
      return timersPromises.setTimeout(delay, undefined, options);
    }
  }
  function invalidThis(type) {
    return coded(new TypeError('Value of "this" must be of type ' + type), 'ERR_INVALID_THIS');
  }
  makingScheduler = true;
  const scheduler = new Scheduler();
  makingScheduler = false;
  const timersPromises = {
    setTimeout: function setTimeout(after, value, options = kEmptyObject) {
      return timerPromise(options, after, (r, ref) => {
        const t = new Timeout(r, after * 1, [value], false);
        // Node's Timeout takes `ref`: no method of the handle is called.
        if (!ref) ReflectApply(TimeoutUnref, t, []);
        return t;
      }, clearTimeout);
    },
    setImmediate: function setImmediate(value, options = kEmptyObject) {
      return timerPromise(options, undefined, (r, ref) => {
        const im = new Immediate(r, [value]);
        if (!ref) im.unref(); // as Node's
        return im;
      }, clearImmediate);
    },
    setInterval: intervalIterator,
    scheduler,
  };
  defineProperty(intervalIterator, 'name', { __proto__: null, value: 'setInterval', configurable: true });
  defineProperty(timersModule, 'promises', { __proto__: null,
    get() { return timersPromises; },
    enumerable: true,
    configurable: true,
  });

  // --- util: promisify (with Node's custom symbol), inspect ------------
  const custom = Symbol.for('nodejs.util.promisify.custom');
  function promisify(original) {
    if (typeof original !== 'function') throw argTypeError('original', 'of type function', original);
    if (original[custom]) {
      const fn = original[custom];
      if (typeof fn !== 'function') throw argTypeError('util.promisify.custom', 'of type function', fn);
      return defineProperty(fn, custom, {
        __proto__: null, value: fn, enumerable: false, writable: false, configurable: true,
      });
    }
    function fn(...args) {
      return new PromiseCtor((resolve, reject) => {
        ReflectApply(ArrayPush, args, [(err, ...values) => (err ? reject(err) : resolve(values[0]))]);
        ReflectApply(original, this, args);
      });
    }
    ObjectSetPrototypeOf(fn, ObjectGetPrototypeOf(original));
    defineProperty(fn, custom, { __proto__: null, value: fn, enumerable: false, writable: false, configurable: true });
    // The descriptors with no prototype, as Node's: a program's
    // Object.prototype.get or .value does not change them.
    const descriptors = ObjectGetOwnPropertyDescriptors(original);
    const values = ObjectValues(descriptors);
    for (let i = 0; i < values.length; i++) ObjectSetPrototypeOf(values[i], null);
    return ObjectDefineProperties(fn, descriptors);
  }
  promisify.custom = custom;
  // Node's: an enumerable getter, fixed.
  Object.defineProperty(setTimeout, custom, { __proto__: null, get() { return timersPromises.setTimeout; }, enumerable: true });
  Object.defineProperty(setImmediate, custom, { __proto__: null, get() { return timersPromises.setImmediate; }, enumerable: true });
  defineProperty(inspectValue, 'name', { __proto__: null, value: 'inspect', configurable: true });
  inspectValue.custom = customInspectSymbol;
  inspectValue.defaultOptions = inspectDefaults;
  // Node's util.callbackify: the callback runs from a tick, a falsy
  // rejection wrapped in ERR_FALSY_VALUE_REJECTION (its `reason`).
  function callbackify(original) {
    checkCallback(original, 'original');
    function callbackified(...args) {
      const maybeCb = ReflectApply(ArrayPop, args, []);
      if (typeof maybeCb !== 'function') {
        throw coded(new TypeError('The last argument must be of type function. Received ' + describe(maybeCb)),
          'ERR_INVALID_ARG_TYPE');
      }
      const cb = ReflectApply(Function.prototype.bind, maybeCb, [this]);
      ReflectApply(original, this, args).then(
        (ret) => process.nextTick(cb, null, ret),
        (rej) => process.nextTick(callbackifyOnRejected, rej, cb));
    }
    const descriptors = Object.getOwnPropertyDescriptors(original);
    if (typeof descriptors.length.value === 'number') descriptors.length.value++;
    if (typeof descriptors.name.value === 'string') descriptors.name.value += 'Callbackified';
    for (const k of ReflectOwnKeys(descriptors)) ObjectSetPrototypeOf(descriptors[k], null);
    Object.defineProperties(callbackified, descriptors);
    return callbackified;
  }
  function callbackifyOnRejected(reason, cb) {
    if (!reason) {
      const e = coded(new Error('Promise was rejected with falsy value'), 'ERR_FALSY_VALUE_REJECTION');
      e.reason = reason;
      reason = e;
    }
    return cb(reason);
  }
  const util = {
    promisify,
    inspect: inspectValue,
    format: (...args) => formatArgs(args),
    isDeepStrictEqual: (a, b) => deepEqual(a, b, true),
    deprecate,
    callbackify,
    // Node's: resolves when `signal` aborts (at once if it has), its
    // listener held for as long as `resource` lives.
    async aborted(signal, resource) {
      if (signal === undefined) throw argTypeError('signal', 'an instance of AbortSignal', signal);
      validateAbortSignal(signal, 'signal');
      if (resource === null || (typeof resource !== 'object' && typeof resource !== 'function')) {
        throw argTypeError('resource', 'of type object', resource);
      }
      if (signal.aborted) return PromiseResolve();
      let resolve;
      const promise = new Promise((r) => { resolve = r; });
      signal.addEventListener('abort', resolve, { __proto__: null, [kWeakHandler]: resource, once: true, [kResist]: true });
      return promise;
    },
    types: { isPromise: (p) => p instanceof Promise },
    // Node's: the old way to subclass (`EventEmitter.call(this)`).
    inherits(ctor, superCtor) {
      if (ctor === undefined || ctor === null) throw argTypeError('ctor', 'of type function', ctor);
      if (superCtor === undefined || superCtor === null) throw argTypeError('superCtor', 'of type function', superCtor);
      if (superCtor.prototype === undefined) {
        throw argTypeError('superCtor.prototype', 'of type object', superCtor.prototype);
      }
      Object.defineProperty(ctor, 'super_', { __proto__: null, value: superCtor, writable: true, configurable: true });
      Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
    },
    TextDecoder,
    TextEncoder,
  };

  // --- assert: Node 20's AssertionError and its messages -----------------
  // Ported from lib/internal/assert/assertion_error.js, without colors
  // (as Node's with stderr no TTY): the line diff of strictEqual and
  // deepStrictEqual (`+ actual - expected`, the identical lines around a
  // change collapsed), and the other operators' forms, all over Node's
  // inspect options for assert.
  const kReadableOperator = {
    __proto__: null,
    deepStrictEqual: 'Expected values to be strictly deep-equal:',
    strictEqual: 'Expected values to be strictly equal:',
    strictEqualObject: 'Expected "actual" to be reference-equal to "expected":',
    deepEqual: 'Expected values to be loosely deep-equal:',
    notDeepStrictEqual: 'Expected "actual" not to be strictly deep-equal to:',
    notStrictEqual: 'Expected "actual" to be strictly unequal to:',
    notStrictEqualObject: 'Expected "actual" not to be reference-equal to "expected":',
    notDeepEqual: 'Expected "actual" not to be loosely deep-equal to:',
    notIdentical: 'Values have same structure but are not reference-equal:',
    notDeepEqualUnequal: 'Expected values not to be loosely deep-equal:',
  };
  const kMaxShortLength = 12;
  function assertInspect(val) {
    return inspectValue(val, {
      compact: false, customInspect: false, depth: 1000, maxArrayLength: Infinity,
      showHidden: false, showProxy: false, sorted: true, getters: true,
    });
  }
  function copyError(source) {
    const target = ObjectAssign({ __proto__: ObjectGetPrototypeOf(source) }, source);
    defineProperty(target, 'message', { __proto__: null, value: source.message });
    return target;
  }
  function createErrDiff(actual, expected, operator, message = '') {
    let other = '';
    let res = '';
    let end = '';
    let skipped = false;
    const actualInspected = assertInspect(actual);
    const actualLines = actualInspected.split('\n');
    const expectedLines = assertInspect(expected).split('\n');
    let i = 0;
    let indicator = '';
    if (operator === 'strictEqual' &&
        ((typeof actual === 'object' && actual !== null && typeof expected === 'object' && expected !== null) ||
         (typeof actual === 'function' && typeof expected === 'function'))) {
      operator = 'strictEqualObject';
    }
    const header = message || kReadableOperator[operator];
    if (actualLines.length === 1 && expectedLines.length === 1 && actualLines[0] !== expectedLines[0]) {
      const actualRaw = actualLines[0];
      const expectedRaw = expectedLines[0];
      const inputLength = actualRaw.length + expectedRaw.length;
      if (inputLength <= kMaxShortLength) {
        if ((typeof actual !== 'object' || actual === null) &&
            (typeof expected !== 'object' || expected === null) &&
            (actual !== 0 || expected !== 0)) {
          return `${header}\n\n${actualLines[0]} !== ${expectedLines[0]}\n`;
        }
      } else if (operator !== 'strictEqualObject') {
        const maxLength = process.stderr.isTTY ? process.stderr.columns : 80;
        if (inputLength < maxLength) {
          while (actualRaw[i] === expectedRaw[i]) i++;
          if (i > 2) {
            indicator = `\n  ${' '.repeat(i)}^`;
            i = 0;
          }
        }
      }
    }
    let a = actualLines[actualLines.length - 1];
    let b = expectedLines[expectedLines.length - 1];
    while (a === b) {
      if (i++ < 3) end = `\n  ${a}${end}`;
      else other = a;
      actualLines.pop();
      expectedLines.pop();
      if (actualLines.length === 0 || expectedLines.length === 0) break;
      a = actualLines[actualLines.length - 1];
      b = expectedLines[expectedLines.length - 1];
    }
    const maxLines = Math.max(actualLines.length, expectedLines.length);
    if (maxLines === 0) {
      const lines = actualInspected.split('\n');
      if (lines.length > 50) {
        lines[46] = '...';
        while (lines.length > 47) lines.pop();
      }
      return `${kReadableOperator.notIdentical}\n\n${lines.join('\n')}\n`;
    }
    if (i >= 5) {
      end = `\n...${end}`;
      skipped = true;
    }
    if (other !== '') {
      end = `\n  ${other}${end}`;
      other = '';
    }
    let printedLines = 0;
    let identical = 0;
    const msg = `${header}\n+ actual - expected`;
    const skippedMsg = ' ... Lines skipped';
    let lines = actualLines;
    let plusMinus = '+';
    let maxLength = expectedLines.length;
    if (actualLines.length < maxLines) {
      lines = expectedLines;
      plusMinus = '-';
      maxLength = actualLines.length;
    }
    // The lines identical before a change: up to two shown, five as five,
    // more as `...` and the last two.
    const flushIdentical = (from) => {
      if (identical > 2) {
        if (identical > 3) {
          if (identical > 4) {
            if (identical === 5) {
              res += `\n  ${from[i - 3]}`;
              printedLines++;
            } else {
              res += '\n...';
              skipped = true;
            }
          }
          res += `\n  ${from[i - 2]}`;
          printedLines++;
        }
        res += `\n  ${from[i - 1]}`;
        printedLines++;
      }
      identical = 0;
    };
    for (i = 0; i < maxLines; i++) {
      if (maxLength < i + 1) {
        flushIdentical(lines);
        if (lines === actualLines) res += `\n${plusMinus} ${lines[i]}`;
        else other += `\n${plusMinus} ${lines[i]}`;
        printedLines++;
      } else {
        const expectedLine = expectedLines[i];
        let actualLine = actualLines[i];
        let divergingLines = actualLine !== expectedLine &&
          (!actualLine.endsWith(',') || actualLine.slice(0, -1) !== expectedLine);
        if (divergingLines && expectedLine.endsWith(',') && expectedLine.slice(0, -1) === actualLine) {
          divergingLines = false;
          actualLine += ',';
        }
        if (divergingLines) {
          flushIdentical(actualLines);
          res += `\n+ ${actualLine}`;
          other += `\n- ${expectedLine}`;
          printedLines += 2;
        } else {
          res += other;
          other = '';
          identical++;
          if (identical <= 2) {
            res += `\n  ${actualLine}`;
            printedLines++;
          }
        }
      }
      if (printedLines > 50 && i < maxLines - 2) {
        return `${msg}${skippedMsg}\n${res}\n...${other}\n...`;
      }
    }
    return `${msg}${skipped ? skippedMsg : ''}\n${res}${other}${end}${indicator}`;
  }
  function addEllipsis(string) {
    const lines = string.split('\n', 11);
    if (lines.length > 10) {
      lines.length = 10;
      return `${lines.join('\n')}\n...`;
    } else if (string.length > 512) {
      return `${string.slice(512)}...`;
    }
    return string;
  }
  // Node's message for options without one.
  function assertionMessage(actual, expected, operator) {
    if (typeof actual === 'object' && actual !== null && typeof expected === 'object' && expected !== null &&
        'stack' in actual && actual instanceof Error && 'stack' in expected && expected instanceof Error) {
      actual = copyError(actual);
      expected = copyError(expected);
    }
    if (operator === 'deepStrictEqual' || operator === 'strictEqual') return createErrDiff(actual, expected, operator);
    if (operator === 'notDeepStrictEqual' || operator === 'notStrictEqual') {
      let base = kReadableOperator[operator];
      const res = assertInspect(actual).split('\n');
      if (operator === 'notStrictEqual' && ((typeof actual === 'object' && actual !== null) || typeof actual === 'function')) {
        base = kReadableOperator.notStrictEqualObject;
      }
      if (res.length > 50) {
        res[46] = '...';
        while (res.length > 47) res.pop();
      }
      if (res.length === 1) return `${base}${res[0].length > 5 ? '\n\n' : ' '}${res[0]}`;
      return `${base}\n\n${res.join('\n')}\n`;
    }
    let res = assertInspect(actual);
    let other = assertInspect(expected);
    const knownOperator = kReadableOperator[operator];
    if (operator === 'notDeepEqual' && res === other) {
      res = `${knownOperator}\n\n${res}`;
      if (res.length > 1024) res = `${res.slice(0, 1021)}...`;
      return res;
    }
    if (res.length > 512) res = `${res.slice(0, 509)}...`;
    if (other.length > 512) other = `${other.slice(0, 509)}...`;
    if (operator === 'deepEqual') {
      res = `${knownOperator}\n\n${res}\n\nshould loosely deep-equal\n\n`;
    } else {
      const newOp = kReadableOperator[`${operator}Unequal`];
      if (newOp) res = `${newOp}\n\n${res}\n\nshould not loosely deep-equal\n\n`;
      else other = ` ${operator} ${other}`;
    }
    return `${res}${other}`;
  }
  class AssertionError extends Error {
    constructor(options) {
      if (options === null || typeof options !== 'object' || ArrayIsArray(options)) {
        throw argTypeError('options', 'of type object', options);
      }
      const { message, operator, stackStartFn, details, stackStartFunction } = options;
      const { actual, expected } = options;
      let text;
      if (message != null) {
        text = operator === 'deepStrictEqual' || operator === 'strictEqual' ?
          createErrDiff(actual, expected, operator, message) : String(message);
      } else {
        text = assertionMessage(actual, expected, operator);
      }
      super(text);
      this.generatedMessage = !message;
      // Node's stack header says `AssertionError [ERR_ASSERTION]: ...`.
      defineProperty(this, 'name', {
        __proto__: null, value: 'AssertionError [ERR_ASSERTION]', enumerable: false, writable: true, configurable: true,
      });
      this.code = 'ERR_ASSERTION';
      if (details) {
        this.actual = undefined;
        this.expected = undefined;
        this.operator = undefined;
        for (let i = 0; i < details.length; i++) {
          this['message ' + i] = details[i].message;
          this['actual ' + i] = details[i].actual;
          this['expected ' + i] = details[i].expected;
          this['operator ' + i] = details[i].operator;
          this['stack trace ' + i] = details[i].stack;
        }
      } else {
        this.actual = actual;
        this.expected = expected;
        this.operator = operator;
      }
      const start = stackStartFn || stackStartFunction;
      if (typeof start === 'function') Error.captureStackTrace(this, start);
      void this.stack;
      this.name = 'AssertionError';
    }
    toString() { return `${this.name} [${this.code}]: ${this.message}`; }
    // Long strings shortened, actual and expected at depth 0.
    [customInspectSymbol](recurseTimes, ctx) {
      const tmpActual = this.actual;
      const tmpExpected = this.expected;
      if (typeof this.actual === 'string') this.actual = addEllipsis(this.actual);
      if (typeof this.expected === 'string') this.expected = addEllipsis(this.expected);
      const result = inspectValue(this, { ...ctx, customInspect: false, depth: 0 });
      this.actual = tmpActual;
      this.expected = tmpExpected;
      return result;
    }
  }
  // Node's innerFail: a user's Error is thrown as it is.
  function innerFail(obj) {
    if (obj.message instanceof Error) throw obj.message;
    throw new AssertionError(obj);
  }
  // For the assertions whose text tljs makes (ok, throws, rejects and
  // their negations): `generated` unless the user gave a message.
  function fail(actual, expected, operator, generated, message, extra = '') {
    if (message instanceof Error) throw message;
    const userMessage = message !== undefined;
    const e = new AssertionError({ message: userMessage ? String(message) + extra : generated, actual, expected, operator });
    // Node says false for throws/doesNotThrow even with its own text.
    e.generatedMessage = !userMessage && operator !== 'doesNotThrow' && operator !== 'doesNotReject';
    throw e;
  }
  // Node 20's deep equality (lib/internal/util/comparisons.js), ported:
  // type tags and prototypes (strict), Dates, RegExps (source, flags,
  // lastIndex), typed arrays by their bytes (loose floats by value),
  // ArrayBuffers, errors (message, name, cause, errors), boxed
  // primitives, sets and maps with object members matched pairwise,
  // loose primitives in loose mode, symbol keys (strict), sparse arrays,
  // and cycles through Node's memos.
  const ObjectKeys = Object.keys;
  const kNoIterator = 0;
  const kIsArray = 1;
  const kIsSet = 2;
  const kIsMap = 3;
  const isFloatArray = (v) => v instanceof Float32Array || v instanceof Float64Array;
  const arrayIndex = (k) => typeof k === 'string' && indexKey.test(k) && +k < 4294967295;
  // Node's getOwnNonIndexProperties(v, ONLY_ENUMERABLE [| SKIP_SYMBOLS]).
  function ownNonIndexKeys(v, skipSymbols) {
    // A typed array's indices are not made into strings to be skipped.
    const keys = isTypedArray(v) ? typedArrayExtraKeys(v, false) : ReflectOwnKeys(v);
    const out = [];
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (typeof k === 'symbol' ? !skipSymbols : !arrayIndex(k)) {
        if (isEnumerable(v, k)) out.push(k);
      }
    }
    return out;
  }
  function sameBytes(a, b) {
    return a.length === b.length && _compare(a, b) === 0;
  }
  function isEqualBoxedPrimitive(val1, val2) {
    const a = boxedKind(val1), b = boxedKind(val2);
    return b !== null && a[0] === b[0] && (a[0] === 'Number' ? Object.is(a[1], b[1]) : a[1] === b[1]);
  }
  function innerDeepEqual(val1, val2, strict, memos) {
    if (val1 === val2) return val1 !== 0 || Object.is(val1, val2) || !strict;
    if (strict) {
      if (typeof val1 === 'number') return NumberIsNaN(val1) && NumberIsNaN(val2);
      if (typeof val2 !== 'object' || typeof val1 !== 'object' || val1 === null || val2 === null ||
          ObjectGetPrototypeOf(val1) !== ObjectGetPrototypeOf(val2)) {
        return false;
      }
    } else {
      if (val1 === null || typeof val1 !== 'object') {
        if (val2 === null || typeof val2 !== 'object') {
          // eslint-disable-next-line eqeqeq
          return val1 == val2 || (NumberIsNaN(val1) && NumberIsNaN(val2));
        }
        return false;
      }
      if (val2 === null || typeof val2 !== 'object') return false;
    }
    const val1Tag = ReflectApply(ObjectToString, val1, []);
    const val2Tag = ReflectApply(ObjectToString, val2, []);
    if (val1Tag !== val2Tag) return false;
    if (ArrayIsArray(val1)) {
      if (!ArrayIsArray(val2) || val1.length !== val2.length) return false;
      const keys1 = ownNonIndexKeys(val1, !strict);
      const keys2 = ownNonIndexKeys(val2, !strict);
      if (keys1.length !== keys2.length) return false;
      return keyCheck(val1, val2, strict, memos, kIsArray, keys1);
    } else if (val1Tag === '[object Object]') {
      return keyCheck(val1, val2, strict, memos, kNoIterator);
    } else if (isDate(val1)) {
      if (!isDate(val2) || ReflectApply(DateGetTime, val1, []) !== ReflectApply(DateGetTime, val2, [])) return false;
    } else if (isRegExp(val1)) {
      if (!isRegExp(val2) || val1.source !== val2.source || val1.flags !== val2.flags ||
          val1.lastIndex !== val2.lastIndex) {
        return false;
      }
    } else if (ArrayBuffer.isView(val1)) {
      if (ReflectApply(TypedArrayTag, val1, []) !== ReflectApply(TypedArrayTag, val2, [])) return false;
      if (!strict && isFloatArray(val1)) {
        if (val1.byteLength !== val2.byteLength) return false;
        for (let i = 0; i < val1.byteLength; i++) if (val1[i] !== val2[i]) return false;
      } else if (val1.byteLength !== val2.byteLength ||
          !sameBytes(new Uint8Array(val1.buffer, val1.byteOffset, val1.byteLength),
            new Uint8Array(val2.buffer, val2.byteOffset, val2.byteLength))) {
        return false;
      }
      const keys1 = ownNonIndexKeys(val1, !strict);
      const keys2 = ownNonIndexKeys(val2, !strict);
      if (keys1.length !== keys2.length) return false;
      return keyCheck(val1, val2, strict, memos, kNoIterator, keys1);
    } else if (isSet(val1)) {
      if (!isSet(val2) || ReflectApply(SetSize, val1, []) !== ReflectApply(SetSize, val2, [])) return false;
      return keyCheck(val1, val2, strict, memos, kIsSet);
    } else if (isMap(val1)) {
      if (!isMap(val2) || ReflectApply(MapSize, val1, []) !== ReflectApply(MapSize, val2, [])) return false;
      return keyCheck(val1, val2, strict, memos, kIsMap);
    } else if (isAnyArrayBuffer(val1)) {
      if (!isAnyArrayBuffer(val2) || val1.byteLength !== val2.byteLength ||
          !sameBytes(new Uint8Array(val1), new Uint8Array(val2))) {
        return false;
      }
    } else if (isError(val1)) {
      if (!isError(val2)) return false;
      const m1 = isEnumerable(val1, 'message');
      const n1 = isEnumerable(val1, 'name');
      const c1 = isEnumerable(val1, 'cause');
      const e1 = isEnumerable(val1, 'errors');
      if ((m1 !== isEnumerable(val2, 'message') || (!m1 && val1.message !== val2.message)) ||
          (n1 !== isEnumerable(val2, 'name') || (!n1 && val1.name !== val2.name)) ||
          (c1 !== isEnumerable(val2, 'cause') || (!c1 && !innerDeepEqual(val1.cause, val2.cause, strict, memos))) ||
          (e1 !== isEnumerable(val2, 'errors') || (!e1 && !innerDeepEqual(val1.errors, val2.errors, strict, memos)))) {
        return false;
      }
    } else if (boxedKind(val1) !== null) {
      if (!isEqualBoxedPrimitive(val1, val2)) return false;
    } else if (ArrayIsArray(val2) || ArrayBuffer.isView(val2) || isSet(val2) || isMap(val2) || isDate(val2) ||
        isRegExp(val2) || isAnyArrayBuffer(val2) || boxedKind(val2) !== null || isError(val2)) {
      return false;
    }
    return keyCheck(val1, val2, strict, memos, kNoIterator);
  }
  function keyCheck(val1, val2, strict, memos, iterationType, aKeys) {
    const isArrayLikeObject = aKeys !== undefined;
    if (aKeys === undefined) aKeys = ObjectKeys(val1);
    for (let i = 0; i < aKeys.length; i++) if (!isEnumerable(val2, aKeys[i])) return false;
    if (!isArrayLikeObject) {
      if (aKeys.length !== ObjectKeys(val2).length) return false;
      if (strict) {
        const symbolKeysA = ObjectGetOwnPropertySymbols(val1);
        if (symbolKeysA.length !== 0) {
          let count = 0;
          for (let i = 0; i < symbolKeysA.length; i++) {
            const key = symbolKeysA[i];
            if (isEnumerable(val1, key)) {
              if (!isEnumerable(val2, key)) return false;
              aKeys.push(key);
              count++;
            } else if (isEnumerable(val2, key)) {
              return false;
            }
          }
          const symbolKeysB = ObjectGetOwnPropertySymbols(val2);
          if (symbolKeysA.length !== symbolKeysB.length &&
              symbolKeysB.filter((k) => isEnumerable(val2, k)).length !== count) {
            return false;
          }
        } else {
          const symbolKeysB = ObjectGetOwnPropertySymbols(val2);
          if (symbolKeysB.length !== 0 && symbolKeysB.filter((k) => isEnumerable(val2, k)).length !== 0) return false;
        }
      }
    }
    if (aKeys.length === 0 &&
        (iterationType === kNoIterator || (iterationType === kIsArray && val1.length === 0) ||
         (iterationType !== kIsArray && collectionSize(val1) === 0))) {
      return true;
    }
    if (memos === undefined) {
      memos = { set: undefined, a: val1, b: val2, c: undefined, d: undefined, deep: false, deleteFailures: false };
      return objEquiv(val1, val2, strict, aKeys, memos, iterationType);
    }
    if (memos.set === undefined) {
      if (memos.deep === false) {
        if (memos.a === val1 && memos.b === val2) return true;
        memos.c = val1;
        memos.d = val2;
        memos.deep = true;
        const result = objEquiv(val1, val2, strict, aKeys, memos, iterationType);
        memos.deep = false;
        return result;
      }
      memos.set = SafeSet();
      memos.set.add(memos.a);
      memos.set.add(memos.b);
      memos.set.add(memos.c);
      memos.set.add(memos.d);
    }
    const { set } = memos;
    const originalSize = ReflectApply(SetSize, set, []);
    set.add(val1);
    set.add(val2);
    if (originalSize === ReflectApply(SetSize, set, [])) return true;
    const areEq = objEquiv(val1, val2, strict, aKeys, memos, iterationType);
    if (areEq || memos.deleteFailures) {
      set.delete(val1);
      set.delete(val2);
    }
    return areEq;
  }
  const collectionSize = (v) => (isSet(v) ? ReflectApply(SetSize, v, []) : ReflectApply(MapSize, v, []));
  function setHasEqualElement(set, val2, strict, memo) {
    const { deleteFailures } = memo;
    memo.deleteFailures = true;
    for (const val1 of setMembers(set)) {
      if (innerDeepEqual(val1, val2, strict, memo)) {
        set.delete(val1);
        memo.deleteFailures = deleteFailures;
        return true;
      }
    }
    memo.deleteFailures = deleteFailures;
    return false;
  }
  function findLooseMatchingPrimitives(prim) {
    switch (typeof prim) {
      case 'undefined': return null;
      case 'object': return undefined;
      case 'symbol': return false;
      case 'string':
        prim = +prim;
        // falls through
      case 'number':
        if (NumberIsNaN(prim)) return false;
    }
    return true;
  }
  function setMightHaveLoosePrim(a, b, prim) {
    const altValue = findLooseMatchingPrimitives(prim);
    if (altValue != null) return altValue;
    return setHas(b, altValue) && !setHas(a, altValue);
  }
  function mapMightHaveLoosePrim(a, b, prim, item, memo) {
    const altValue = findLooseMatchingPrimitives(prim);
    if (altValue != null) return altValue;
    const curB = mapGet(b, altValue);
    if ((curB === undefined && !mapHas(b, altValue)) || !innerDeepEqual(item, curB, false, memo)) return false;
    return !mapHas(a, altValue) && innerDeepEqual(item, curB, false, memo);
  }
  const SetHas = Set.prototype.has, SetValues = Set.prototype.values;
  const MapEntries = Map.prototype.entries;
  const setHas = (s, v) => ReflectApply(SetHas, s, [v]);
  const mapHas = (m, k) => ReflectApply(MapHas, m, [k]);
  const mapGet = (m, k) => ReflectApply(MapGet, m, [k]);
  // A collection's members as an array, read through the builtins.
  const setMembers = (s) => ArrayFrom({ [Symbol.iterator]: () => ReflectApply(SetValues, s, []) });
  const mapEntries = (m) => ArrayFrom({ [Symbol.iterator]: () => ReflectApply(MapEntries, m, []) });
  function setEquiv(a, b, strict, memo) {
    let set = null;
    const as = setMembers(a);
    for (let i = 0; i < as.length; i++) {
      const val = as[i];
      if (!setHas(b, val)) {
        if ((typeof val !== 'object' || val === null) && (strict || !setMightHaveLoosePrim(a, b, val))) return false;
        if (set === null) {
          if (ReflectApply(SetSize, b, []) === 1) return innerDeepEqual(val, setMembers(b)[0], strict, memo);
          set = SafeSet();
        }
        set.add(val);
      }
    }
    if (set !== null) {
      const bs = setMembers(b);
      for (let i = 0; i < bs.length; i++) {
        const val = bs[i];
        if (typeof val === 'object' && val !== null) {
          if (!setHas(a, val) && !setHasEqualElement(set, val, strict, memo)) return false;
        } else if (!strict && !setHas(a, val) && !setHasEqualElement(set, val, strict, memo)) {
          return false;
        }
      }
      return ReflectApply(SetSize, set, []) === 0;
    }
    return true;
  }
  function mapHasEqualEntry(set, map, key2, item2, strict, memo) {
    const { deleteFailures } = memo;
    memo.deleteFailures = true;
    for (const key1 of setMembers(set)) {
      if (innerDeepEqual(key1, key2, strict, memo) && innerDeepEqual(mapGet(map, key1), item2, strict, memo)) {
        set.delete(key1);
        memo.deleteFailures = deleteFailures;
        return true;
      }
    }
    memo.deleteFailures = deleteFailures;
    return false;
  }
  function mapEquiv(a, b, strict, memo) {
    let set = null;
    const ae = mapEntries(a);
    for (let i = 0; i < ae.length; i++) {
      const { 0: key, 1: item1 } = ae[i];
      if (typeof key === 'object' && key !== null) {
        if (set === null) {
          if (ReflectApply(MapSize, b, []) === 1) {
            const { 0: key2, 1: item2 } = mapEntries(b)[0];
            return innerDeepEqual(key, key2, strict, memo) && innerDeepEqual(item1, item2, strict, memo);
          }
          set = SafeSet();
        }
        set.add(key);
      } else {
        const item2 = mapGet(b, key);
        if ((item2 === undefined && !mapHas(b, key)) || !innerDeepEqual(item1, item2, strict, memo)) {
          if (strict) return false;
          if (!mapMightHaveLoosePrim(a, b, key, item1, memo)) return false;
          if (set === null) set = SafeSet();
          set.add(key);
        }
      }
    }
    if (set !== null) {
      const be = mapEntries(b);
      for (let i = 0; i < be.length; i++) {
        const { 0: key, 1: item } = be[i];
        if (typeof key === 'object' && key !== null) {
          if (!mapHasEqualEntry(set, a, key, item, strict, memo)) return false;
        } else if (!strict && (!mapHas(a, key) || !innerDeepEqual(mapGet(a, key), item, strict, memo)) &&
            !mapHasEqualEntry(set, a, key, item, strict, memo)) {
          return false;
        }
      }
      return ReflectApply(SetSize, set, []) === 0;
    }
    return true;
  }
  function objEquiv(a, b, strict, keys, memos, iterationType) {
    for (let i = 0; i < keys.length; i++) {
      if (!innerDeepEqual(a[keys[i]], b[keys[i]], strict, memos)) return false;
    }
    if (iterationType === kIsArray) {
      for (let i = 0; i < a.length; i++) {
        if (hasOwn(a, i)) {
          if (!hasOwn(b, i) || !innerDeepEqual(a[i], b[i], strict, memos)) return false;
        } else if (hasOwn(b, i)) {
          return false;
        } else {
          // Sparse: the rest by keys.
          const keysA = ObjectKeys(a);
          for (; i < keysA.length; i++) {
            const key = keysA[i];
            if (!hasOwn(b, key) || !innerDeepEqual(a[key], b[key], strict, memos)) return false;
          }
          return keysA.length === ObjectKeys(b).length;
        }
      }
    } else if (iterationType === kIsSet) {
      if (!setEquiv(a, b, strict, memos)) return false;
    } else if (iterationType === kIsMap) {
      if (!mapEquiv(a, b, strict, memos)) return false;
    }
    return true;
  }
  function deepEqual(a, b, strict) {
    return innerDeepEqual(a, b, strict, undefined);
  }
  const show = (v) => inspect(v, 0, false);
  // Node 20's throws/rejects/doesNotThrow/doesNotReject (lib/assert.js):
  // expectsError, expectedException with its Comparison objects,
  // expectsNoError, and waitForActual's microtask turns.
  const NO_EXCEPTION_SENTINEL = {};
  class Comparison {
    constructor(obj, keys, actual) {
      for (const key of keys) {
        if (key in obj) {
          if (actual !== undefined && typeof actual[key] === 'string' && isRegExp(obj[key]) &&
              ReflectApply(RegExp.prototype.exec, obj[key], [actual[key]]) !== null) {
            this[key] = actual[key];
          } else {
            this[key] = obj[key];
          }
        }
      }
    }
  }
  function compareExceptionKey(actual, expected, key, message, keys, fn) {
    if (!(key in actual) || !deepEqual(actual[key], expected[key], true)) {
      if (!message) {
        const a = new Comparison(actual, keys);
        const b = new Comparison(expected, keys, actual);
        const err = new AssertionError({ actual: a, expected: b, operator: 'deepStrictEqual', stackStartFn: fn });
        err.actual = actual;
        err.expected = expected;
        err.operator = fn.name;
        throw err;
      }
      innerFail({ actual, expected, message, operator: fn.name, stackStartFn: fn });
    }
  }
  function invalidArgValue(name, value, reason) {
    let inspected = inspectValue(value);
    if (inspected.length > 128) inspected = `${inspected.slice(0, 128)}...`;
    const type = name.includes('.') ? 'property' : 'argument';
    return coded(new TypeError(`The ${type} '${name}' ${reason}. Received ${inspected}`), 'ERR_INVALID_ARG_VALUE');
  }
  function expectedException(actual, expected, message, fn) {
    let generatedMessage = false;
    let throwError = false;
    if (typeof expected !== 'function') {
      if (isRegExp(expected)) {
        const str = String(actual);
        if (ReflectApply(RegExp.prototype.exec, expected, [str]) !== null) return;
        if (!message) {
          generatedMessage = true;
          message = 'The input did not match the regular expression ' +
            `${inspectValue(expected)}. Input:\n\n${inspectValue(str)}\n`;
        }
        throwError = true;
      } else if (typeof actual !== 'object' || actual === null) {
        const err = new AssertionError({ actual, expected, message, operator: 'deepStrictEqual', stackStartFn: fn });
        err.operator = fn.name;
        throw err;
      } else {
        const keys = ObjectKeys(expected);
        if (expected instanceof Error) {
          keys.push('name', 'message');
        } else if (keys.length === 0) {
          throw invalidArgValue('error', expected, 'may not be an empty object');
        }
        for (const key of keys) {
          if (typeof actual[key] === 'string' && isRegExp(expected[key]) &&
              ReflectApply(RegExp.prototype.exec, expected[key], [actual[key]]) !== null) {
            continue;
          }
          compareExceptionKey(actual, expected, key, message, keys, fn);
        }
        return;
      }
    } else if (expected.prototype !== undefined && actual instanceof expected) {
      return;
    } else if (ReflectApply(Object.prototype.isPrototypeOf, Error, [expected])) {
      if (!message) {
        generatedMessage = true;
        message = `The error is expected to be an instance of "${expected.name}". Received `;
        if (isError(actual)) {
          const name = (actual.constructor && actual.constructor.name) || actual.name;
          if (expected.name === name) message += 'an error with identical name but a different prototype.';
          else message += `"${name}"`;
          if (actual.message) message += `\n\nError message:\n\n${actual.message}`;
        } else {
          message += `"${inspectValue(actual, { depth: -1 })}"`;
        }
      }
      throwError = true;
    } else {
      const res = ReflectApply(expected, {}, [actual]);
      if (res !== true) {
        if (!message) {
          generatedMessage = true;
          const name = expected.name ? `"${expected.name}" ` : '';
          message = `The ${name}validation function is expected to return "true". Received ${inspectValue(res)}`;
          if (isError(actual)) message += `\n\nCaught error:\n\n${actual}`;
        }
        throwError = true;
      }
    }
    if (throwError) {
      const err = new AssertionError({ actual, expected, message, operator: fn.name, stackStartFn: fn });
      err.generatedMessage = generatedMessage;
      throw err;
    }
  }
  function getActual(fn) {
    checkCallback(fn, 'fn');
    try {
      fn();
    } catch (e) {
      return e;
    }
    return NO_EXCEPTION_SENTINEL;
  }
  function checkIsPromise(obj) {
    return isPromise(obj) ||
      (obj !== null && typeof obj === 'object' && typeof obj.then === 'function' && typeof obj.catch === 'function');
  }
  async function waitForActual(promiseFn) {
    let resultPromise;
    if (typeof promiseFn === 'function') {
      resultPromise = promiseFn();
      if (!checkIsPromise(resultPromise)) {
        throw coded(new TypeError('Expected instance of Promise to be returned from the "promiseFn" function but got ' +
          `${describe(resultPromise)}.`), 'ERR_INVALID_RETURN_VALUE');
      }
    } else if (checkIsPromise(promiseFn)) {
      resultPromise = promiseFn;
    } else {
      throw argTypeError('promiseFn', 'of type function or an instance of Promise', promiseFn);
    }
    try {
      await resultPromise;
    } catch (e) {
      return e;
    }
    return NO_EXCEPTION_SENTINEL;
  }
  const errorKinds = 'of type function or an instance of Error, RegExp, or Object';
  function expectsError(stackStartFn, actual, error, message) {
    if (typeof error === 'string') {
      if (arguments.length === 4) throw argTypeError('error', errorKinds, error);
      if (typeof actual === 'object' && actual !== null) {
        if (actual.message === error) {
          throw coded(new TypeError('The "error/message" argument is ambiguous. ' +
            `The error message "${actual.message}" is identical to the message.`), 'ERR_AMBIGUOUS_ARGUMENT');
        }
      } else if (actual === error) {
        throw coded(new TypeError('The "error/message" argument is ambiguous. ' +
          `The error "${actual}" is identical to the message.`), 'ERR_AMBIGUOUS_ARGUMENT');
      }
      message = error;
      error = undefined;
    } else if (error != null && typeof error !== 'object' && typeof error !== 'function') {
      throw argTypeError('error', errorKinds, error);
    }
    if (actual === NO_EXCEPTION_SENTINEL) {
      let details = '';
      if (error && error.name) details += ` (${error.name})`;
      details += message ? `: ${message}` : '.';
      const fnType = stackStartFn === assert.rejects ? 'rejection' : 'exception';
      innerFail({ actual: undefined, expected: error, operator: stackStartFn.name,
        message: `Missing expected ${fnType}${details}`, stackStartFn });
    }
    if (!error) return;
    expectedException(actual, error, message, stackStartFn);
  }
  function hasMatchingError(actual, expected) {
    if (typeof expected !== 'function') {
      if (isRegExp(expected)) return ReflectApply(RegExp.prototype.exec, expected, [String(actual)]) !== null;
      throw argTypeError('expected', 'of type function or an instance of RegExp', expected);
    }
    if (expected.prototype !== undefined && actual instanceof expected) return true;
    if (ReflectApply(Object.prototype.isPrototypeOf, Error, [expected])) return false;
    return ReflectApply(expected, {}, [actual]) === true;
  }
  function expectsNoError(stackStartFn, actual, error, message) {
    if (actual === NO_EXCEPTION_SENTINEL) return;
    if (typeof error === 'string') {
      message = error;
      error = undefined;
    }
    if (!error || hasMatchingError(actual, error)) {
      const details = message ? `: ${message}` : '.';
      const fnType = stackStartFn === assert.doesNotReject ? 'rejection' : 'exception';
      innerFail({ actual, expected: error, operator: stackStartFn.name,
        message: `Got unwanted ${fnType}${details}\nActual message: "${actual && actual.message}"`, stackStartFn });
    }
    throw actual;
  }
  // Node's internalMatch, for match and doesNotMatch.
  function internalMatch(string, regexp, message, match) {
    if (!(regexp instanceof RegExp)) throw argTypeError('regexp', 'an instance of RegExp', regexp);
    if (typeof string !== 'string' || (ReflectApply(RegExp.prototype.exec, regexp, [string]) !== null) !== match) {
      if (message instanceof Error) throw message;
      const generated = !message;
      const text = message || (typeof string !== 'string' ?
        'The "string" argument must be of type string. Received type ' + `${typeof string} (${inspectValue(string)})` :
        (match ? 'The input did not match the regular expression ' :
          'The input was expected to not match the regular expression ') +
          `${inspectValue(regexp)}. Input:\n\n${inspectValue(string)}\n`);
      const e = new AssertionError({ message: text, actual: string, expected: regexp,
        operator: match ? 'match' : 'doesNotMatch' });
      e.generatedMessage = generated;
      throw e;
    }
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
    fail(message) {
      if (message instanceof Error) throw message;
      const internal = message == null && arguments.length <= 1;
      const e = new AssertionError({ message: internal ? 'Failed' : message, operator: 'fail', stackStartFn: assert.fail });
      if (internal) e.generatedMessage = true;
      throw e;
    },
    equal(actual, expected, message) {
      if (!(actual == expected || (actual !== actual && expected !== expected))) {
        innerFail({ actual, expected, message, operator: '==', stackStartFn: assert.equal });
      }
    },
    notEqual(actual, expected, message) {
      if (actual == expected || (actual !== actual && expected !== expected)) {
        innerFail({ actual, expected, message, operator: '!=', stackStartFn: assert.notEqual });
      }
    },
    strictEqual(actual, expected, message) {
      if (!Object.is(actual, expected)) {
        innerFail({ actual, expected, message, operator: 'strictEqual', stackStartFn: assert.strictEqual });
      }
    },
    notStrictEqual(actual, expected, message) {
      if (Object.is(actual, expected)) {
        innerFail({ actual, expected, message, operator: 'notStrictEqual', stackStartFn: assert.notStrictEqual });
      }
    },
    deepEqual(actual, expected, message) {
      if (!deepEqual(actual, expected, false)) {
        innerFail({ actual, expected, message, operator: 'deepEqual', stackStartFn: assert.deepEqual });
      }
    },
    deepStrictEqual(actual, expected, message) {
      if (!deepEqual(actual, expected, true)) {
        innerFail({ actual, expected, message, operator: 'deepStrictEqual', stackStartFn: assert.deepStrictEqual });
      }
    },
    notDeepStrictEqual(actual, expected, message) {
      if (deepEqual(actual, expected, true)) {
        innerFail({ actual, expected, message, operator: 'notDeepStrictEqual', stackStartFn: assert.notDeepStrictEqual });
      }
    },
    notDeepEqual(actual, expected, message) {
      if (deepEqual(actual, expected, false)) {
        innerFail({ actual, expected, message, operator: 'notDeepEqual', stackStartFn: assert.notDeepEqual });
      }
    },
    match(string, regexp, message) { internalMatch(string, regexp, message, true); },
    doesNotMatch(string, regexp, message) { internalMatch(string, regexp, message, false); },
    // Node's: throws an AssertionError for any value but null and undefined.
    ifError(err) {
      if (err === null || err === undefined) return;
      let m = 'ifError got unwanted exception: ';
      if (typeof err === 'object' && typeof err.message === 'string') {
        m += err.message.length === 0 && err.constructor ? err.constructor.name : err.message;
      } else {
        m += inspectValue(err);
      }
      throw new AssertionError({ message: m, actual: err, expected: null, operator: 'ifError' });
    },
    throws(promiseFn, ...args) {
      ReflectApply(expectsError, undefined, [assert.throws, getActual(promiseFn), ...args]);
    },
    async rejects(promiseFn, ...args) {
      ReflectApply(expectsError, undefined, [assert.rejects, await waitForActual(promiseFn), ...args]);
    },
    doesNotThrow(fn, ...args) {
      ReflectApply(expectsNoError, undefined, [assert.doesNotThrow, getActual(fn), ...args]);
    },
    async doesNotReject(fn, ...args) {
      ReflectApply(expectsNoError, undefined, [assert.doesNotReject, await waitForActual(fn), ...args]);
    },
  });
  assert.strict = Object.assign(function strict(v, m) { assert.ok(v, m); }, assert, {
    equal: assert.strictEqual, notEqual: assert.notStrictEqual,
    deepEqual: assert.deepStrictEqual, notDeepEqual: assert.notDeepStrictEqual,
  });
  assert.strict.strict = assert.strict;

  Object.assign(g, { AbortController, AbortSignal, EventTarget, Event, CustomEvent, DOMException });
  // --- require('events'): Node 20's EventEmitter ----------------------
  // Its observable shape (`_events` with a null prototype, a lone
  // listener stored bare and several in an array, `_eventsCount`,
  // `_maxListeners`, the shapeMode and kCapture symbols, a once listener
  // as a bound `onceWrapper` with its `listener`), its order
  // (`newListener` before the listener is added, `removeListener`
  // after), its errors (an unheard 'error' thrown, a non-Error as
  // ERR_UNHANDLED_ERROR), the leak warning, errorMonitor, and the static
  // once, getEventListeners, getMaxListeners, setMaxListeners,
  // addAbortListener, listenerCount, and `on` (the async iterator);
  // captureRejections, per emitter or for all (a listener's rejected
  // promise becomes the emitter's `error` event, or a call of its
  // Symbol.for('nodejs.rejection') method, from a tick).
  // Node's validateNumber(n, name, 0).
  function checkMax(n, name) {
    if (typeof n !== 'number') throw argTypeError(name, 'of type number', n);
    if (!(n >= 0)) throw outOfRange(name, '>= 0', n);
  }
  const kShapeMode = Symbol('shapeMode');
  const kCapture = Symbol('kCapture');
  const kErrorMonitor = Symbol('events.errorMonitor');
  function EventEmitter(opts) {
    ReflectApply(EventEmitter.init, this, [opts]);
  }
  EventEmitter.prototype._events = undefined;
  EventEmitter.prototype._eventsCount = 0;
  EventEmitter.prototype._maxListeners = undefined;
  Object.defineProperty(EventEmitter.prototype, kCapture, { __proto__: null, value: false, writable: true });
  EventEmitter.init = function (opts) {
    if (this._events === undefined || this._events === ObjectGetPrototypeOf(this)._events) {
      this._events = Object.create(null);
      this._eventsCount = 0;
      this[kShapeMode] = false;
    } else {
      this[kShapeMode] = true;
    }
    this._maxListeners = this._maxListeners || undefined;
    if (opts?.captureRejections) {
      if (typeof opts.captureRejections !== 'boolean') {
        throw argTypeError('options.captureRejections', 'of type boolean', opts.captureRejections);
      }
      this[kCapture] = Boolean(opts.captureRejections);
    } else {
      this[kCapture] = EventEmitter.prototype[kCapture];
    }
  };
  const kRejection = Symbol.for('nodejs.rejection');
  // Node's events.js addCatch (eeAddCatch: EventTarget has its own
  // addCatch above): a listener's returned thenable, on an emitter that
  // captures rejections, reports its rejection from a tick.
  function eeAddCatch(ee, promise, type, args) {
    if (!ee[kCapture]) return;
    try {
      const then = promise.then;
      if (typeof then === 'function') {
        ReflectApply(then, promise, [undefined, function (err) {
          process.nextTick(emitUnhandledRejectionOrErr, ee, err, type, args);
        }]);
      }
    } catch (err) {
      ee.emit('error', err);
    }
  }
  function emitUnhandledRejectionOrErr(ee, err, type, args) {
    if (typeof ee[kRejection] === 'function') {
      ee[kRejection](err, type, ...args);
    } else {
      // Capture is off while the error is emitted (no loop through an
      // async error listener), and back on after, even if it throws.
      const prev = ee[kCapture];
      try {
        ee[kCapture] = false;
        ee.emit('error', err);
      } finally {
        ee[kCapture] = prev;
      }
    }
  }
  Object.defineProperty(EventEmitter, 'defaultMaxListeners', { __proto__: null,
    enumerable: true,
    configurable: true, // until the statics are put in order, below
    get() { return defaultMaxListeners; },
    set(n) {
      checkMax(n, 'defaultMaxListeners');
      defaultMaxListeners = n;
    },
  });
  const maxOf = (ee) => (ee._maxListeners === undefined ? defaultMaxListeners : ee._maxListeners);
  const hasListeners = (ee, type) => ee._events !== undefined && (type === undefined || ee._events[type] !== undefined);
  function addListener(ee, type, listener, prepend) {
    checkCallback(listener, 'listener');
    let events = ee._events;
    let existing;
    if (events === undefined) {
      events = ee._events = Object.create(null);
      ee._eventsCount = 0;
    } else {
      if (events.newListener !== undefined) {
        ee.emit('newListener', type, listener.listener ?? listener);
        events = ee._events;
      }
      existing = events[type];
    }
    if (existing === undefined) {
      events[type] = listener;
      ++ee._eventsCount;
      return ee;
    }
    if (typeof existing === 'function') {
      existing = events[type] = prepend ? [listener, existing] : [existing, listener];
    } else if (prepend) {
      existing.unshift(listener);
    } else {
      existing.push(listener);
    }
    const m = maxOf(ee);
    if (m > 0 && existing.length > m && !existing.warned) {
      existing.warned = true;
      emitterLeakWarning(ee, inspectValue(ee, { depth: -1 }), type, existing.length, m);
    }
    return ee;
  }
  // Named `onceWrapper`, as Node's (its bound form shows as `bound
  // onceWrapper`); kept apart from `process`'s own once wrapper.
  const eeOnceWrapper = {
    onceWrapper(...args) {
      if (!this.fired) {
        this.target.removeListener(this.type, this.wrapFn);
        this.fired = true;
        return ReflectApply(this.listener, this.target, args);
      }
    },
  }.onceWrapper;
  function onceWrap(target, type, listener) {
    const state = { fired: false, wrapFn: undefined, target, type, listener };
    const wrapped = ReflectApply(Function.prototype.bind, eeOnceWrapper, [state]);
    wrapped.listener = listener;
    state.wrapFn = wrapped;
    return wrapped;
  }
  Object.assign(EventEmitter.prototype, {
    setMaxListeners(n) {
      checkMax(n, 'setMaxListeners');
      this._maxListeners = n;
      return this;
    },
    getMaxListeners() { return maxOf(this); },
    emit(type, ...args) {
      let doError = type === 'error';
      const events = this._events;
      if (events !== undefined) {
        if (doError && events[kErrorMonitor] !== undefined) this.emit(kErrorMonitor, ...args);
        doError = doError && events.error === undefined;
      } else if (!doError) {
        return false;
      }
      if (doError) {
        const er = args.length > 0 ? args[0] : undefined;
        if (er instanceof Error) throw er; // Unhandled 'error' event
        let text;
        try { text = inspectValue(er); } catch { text = er; }
        const err = new Error(`Unhandled error. (${text})`);
        coded(err, 'ERR_UNHANDLED_ERROR');
        err.context = er;
        throw err; // Unhandled 'error' event
      }
      const handler = events[type];
      if (handler === undefined) return false;
      if (typeof handler === 'function') {
        const result = ReflectApply(handler, this, args);
        if (result !== undefined && result !== null) eeAddCatch(this, result, type, args);
      } else {
        for (const fn of [...handler]) {
          const result = ReflectApply(fn, this, args);
          if (result !== undefined && result !== null) eeAddCatch(this, result, type, args);
        }
      }
      return true;
    },
    addListener(type, listener) { return addListener(this, type, listener, false); },
    prependListener(type, listener) { return addListener(this, type, listener, true); },
    once(type, listener) {
      checkCallback(listener, 'listener');
      return this.on(type, onceWrap(this, type, listener));
    },
    prependOnceListener(type, listener) {
      checkCallback(listener, 'listener');
      return this.prependListener(type, onceWrap(this, type, listener));
    },
    removeListener(type, listener) {
      checkCallback(listener, 'listener');
      if (!hasListeners(this, type)) return this;
      const events = this._events;
      const list = events[type];
      if (list === listener || list.listener === listener) {
        this._eventsCount -= 1;
        if (this[kShapeMode]) {
          events[type] = undefined;
        } else if (this._eventsCount === 0) {
          this._events = Object.create(null);
        } else {
          delete events[type];
          if (events.removeListener) this.emit('removeListener', type, list.listener || listener);
        }
      } else if (typeof list !== 'function') {
        let position = -1;
        for (let i = list.length - 1; i >= 0; i--) {
          if (list[i] === listener || list[i].listener === listener) {
            position = i;
            break;
          }
        }
        if (position < 0) return this;
        list.splice(position, 1);
        if (list.length === 1) events[type] = list[0];
        if (events.removeListener !== undefined) this.emit('removeListener', type, listener);
      }
      return this;
    },
    removeAllListeners(type) {
      if (!hasListeners(this)) return this;
      const events = this._events;
      if (events.removeListener === undefined) {
        if (arguments.length === 0) {
          this._events = Object.create(null);
          this._eventsCount = 0;
        } else if (events[type] !== undefined) {
          if (--this._eventsCount === 0) this._events = Object.create(null);
          else delete events[type];
        }
        this[kShapeMode] = false;
        return this;
      }
      if (arguments.length === 0) {
        for (const key of ReflectOwnKeys(events)) {
          if (key !== 'removeListener') this.removeAllListeners(key);
        }
        this.removeAllListeners('removeListener');
        this._events = Object.create(null);
        this._eventsCount = 0;
        this[kShapeMode] = false;
        return this;
      }
      const listeners = events[type];
      if (typeof listeners === 'function') {
        this.removeListener(type, listeners);
      } else if (listeners !== undefined) {
        for (let i = listeners.length - 1; i >= 0; i--) this.removeListener(type, listeners[i]);
      }
      return this;
    },
    listeners(type) { return rawOrUnwrapped(this, type, true); },
    rawListeners(type) { return rawOrUnwrapped(this, type, false); },
    listenerCount(type, listener) {
      const l = this._events !== undefined ? this._events[type] : undefined;
      if (l === undefined) return 0;
      const all = typeof l === 'function' ? [l] : l;
      if (listener == null) return all.length;
      return all.filter((f) => f === listener || f.listener === listener).length;
    },
    eventNames() { return this._eventsCount > 0 ? ReflectOwnKeys(this._events) : []; },
  });
  EventEmitter.prototype.on = EventEmitter.prototype.addListener;
  const eeListenerCount = EventEmitter.prototype.listenerCount;
  EventEmitter.prototype.off = EventEmitter.prototype.removeListener;
  function rawOrUnwrapped(ee, type, unwrap) {
    if (!hasListeners(ee, type)) return [];
    const l = ee._events[type];
    if (typeof l === 'function') return unwrap ? [l.listener || l] : [l];
    return unwrap ? l.map((f) => f.listener || f) : [...l];
  }
  // events.once: a promise of the event's arguments; rejected by an
  // 'error' event (unless that is the one awaited) or the signal.
  // An async function, as Node's: its promise settles two turns after
  // the event's.
  // Node 20's events.once, line for line: the signal checked by duck
  // typing (any object with `aborted`), the emitter used through
  // whichever API it has (`on`/`once` first, then `addEventListener`),
  // an `error` listener only on an emitter with `once`.
  const eventsOnce = { async once(emitter, name, options = kEmptyObject) {
    const signal = options?.signal;
    validateAbortSignal(signal, 'options.signal');
    if (signal?.aborted) throw new AbortError(undefined, { cause: signal?.reason });
    return new PromiseCtor((resolve, reject) => {
      const errorListener = (err) => {
        emitter.removeListener(name, resolver);
        if (signal != null) agnosticRemove(signal, 'abort', abortListener);
        reject(err);
      };
      const resolver = (...args) => {
        if (typeof emitter.removeListener === 'function') emitter.removeListener('error', errorListener);
        if (signal != null) agnosticRemove(signal, 'abort', abortListener);
        resolve(args);
      };
      agnosticAdd(emitter, name, resolver, { __proto__: null, once: true, [kResist]: true });
      if (name !== 'error' && typeof emitter.once === 'function') emitter.once('error', errorListener);
      function abortListener() {
        agnosticRemove(emitter, name, resolver);
        agnosticRemove(emitter, 'error', errorListener);
        reject(new AbortError(undefined, { cause: signal?.reason }));
      }
      if (signal != null) {
        agnosticAdd(signal, 'abort', abortListener, { __proto__: null, once: true, [kResist]: true });
      }
    });
  } }.once;
  // events.on: Node 20's async iterator of an event's arguments. Events
  // not yet asked for queue up (the emitter paused above `highWaterMark`,
  // resumed below `lowWaterMark`); an 'error' event (unless it is the one
  // iterated), the signal, `throw` or a `close` event ends it, the first
  // pending or next `next` rejecting with the error.
  const AsyncIteratorPrototype = ObjectGetPrototypeOf(ObjectGetPrototypeOf(async function* () {}).prototype);
  const kWatermarkData = Symbol('nodejs.watermarkData');
  function watermark(options, name, alias, fallback) {
    const v = options[name] ?? options[alias] ?? fallback;
    if (typeof v !== 'number') throw argTypeError('options.' + name, 'of type number', v);
    if (!NumberIsInteger(v)) throw outOfRange('options.' + name, 'an integer', v);
    if (v < 1 || v > NumberMAX_SAFE_INTEGER) throw outOfRange('options.' + name, '>= 1 && <= ' + NumberMAX_SAFE_INTEGER, v);
    return v;
  }
  function agnosticAdd(emitter, name, listener, flags) {
    if (typeof emitter.on === 'function') {
      if (flags && flags.once) emitter.once(name, listener);
      else emitter.on(name, listener);
    } else if (typeof emitter.addEventListener === 'function') {
      emitter.addEventListener(name, listener, flags);
    } else {
      throw argTypeError('emitter', 'an instance of EventEmitter', emitter);
    }
  }
  function agnosticRemove(emitter, name, listener, flags) {
    if (typeof emitter.removeListener === 'function') emitter.removeListener(name, listener);
    else if (typeof emitter.removeEventListener === 'function') emitter.removeEventListener(name, listener, flags);
    else throw argTypeError('emitter', 'an instance of EventEmitter', emitter);
  }
  // Node's validateAbortSignal: any object with `aborted`.
  function validateAbortSignal(signal, name) {
    if (signal !== undefined && (signal === null || typeof signal !== 'object' || !('aborted' in signal))) {
      throw argTypeError(name, 'an instance of AbortSignal', signal);
    }
  }
  function eventsOn(emitter, event, options = kEmptyObject) {
    const signal = options.signal;
    validateAbortSignal(signal, 'options.signal');
    if (signal && signal.aborted) throw new AbortError(undefined, { cause: signal.reason });
    const high = watermark(options, 'highWaterMark', 'highWatermark', NumberMAX_SAFE_INTEGER);
    const low = watermark(options, 'lowWaterMark', 'lowWatermark', 1);
    const unconsumedEvents = [];
    const unconsumedPromises = [];
    let paused = false, error = null, finished = false, size = 0;
    const done = (value, isDone) => ({ value, done: isDone });
    const iterator = ObjectSetPrototypeOf({
      next() {
        if (size) {
          const value = ReflectApply(ArrayShift, unconsumedEvents, []);
          size--;
          if (paused && size < low) {
            emitter.resume();
            paused = false;
          }
          return PromiseResolve(done(value, false));
        }
        if (error) {
          const p = PromiseReject(error);
          error = null;
          return p;
        }
        if (finished) return closeHandler();
        return new PromiseCtor(function (resolve, reject) {
          ReflectApply(ArrayPush, unconsumedPromises, [{ resolve, reject }]);
        });
      },
      return() {
        return closeHandler();
      },
      throw(err) {
        if (!err || !(err instanceof Error)) {
          throw argTypeError('EventEmitter.AsyncIterator', 'an instance of Error', err);
        }
        errorHandler(err);
      },
      [SymbolAsyncIterator]() {
        return this;
      },
      [kWatermarkData]: {
        get size() { return size; },
        get low() { return low; },
        get high() { return high; },
        get isPaused() { return paused; },
      },
    }, AsyncIteratorPrototype);
    const added = [];
    const add = (target, name, handler, flags) => {
      agnosticAdd(target, name, handler, flags);
      ReflectApply(ArrayPush, added, [[target, name, handler, flags]]);
    };
    add(emitter, event, function (...args) { return eventHandler(args); });
    if (event !== 'error' && typeof emitter.on === 'function') add(emitter, 'error', errorHandler);
    const closeEvents = options.close;
    if (closeEvents && closeEvents.length) {
      for (let i = 0; i < closeEvents.length; i++) add(emitter, closeEvents[i], closeHandler);
    }
    const abortDisposable = signal ? addAbortListener(signal, abortListener) : null;
    return iterator;

    function abortListener() {
      errorHandler(new AbortError(undefined, { cause: signal.reason }));
    }
    function eventHandler(value) {
      if (unconsumedPromises.length === 0) {
        size++;
        if (!paused && size > high) {
          paused = true;
          emitter.pause();
        }
        ReflectApply(ArrayPush, unconsumedEvents, [value]);
      } else {
        ReflectApply(ArrayShift, unconsumedPromises, []).resolve(done(value, false));
      }
    }
    function errorHandler(err) {
      if (unconsumedPromises.length === 0) error = err;
      else ReflectApply(ArrayShift, unconsumedPromises, []).reject(err);
      closeHandler();
    }
    function closeHandler() {
      if (abortDisposable) abortDisposable[SymbolDispose]();
      while (added.length > 0) ReflectApply(agnosticRemove, undefined, ReflectApply(ArrayPop, added, []));
      finished = true;
      const result = done(undefined, true);
      while (unconsumedPromises.length > 0) ReflectApply(ArrayShift, unconsumedPromises, []).resolve(result);
      return PromiseResolve(result);
    }
  }
  defineProperty(eventsOn, 'name', { __proto__: null, value: 'on', configurable: true });
  // process is an EventEmitter, as Node's (its own methods above).
  Object.setPrototypeOf(process, EventEmitter.prototype);
  Object.assign(EventEmitter, {
    EventEmitter,
    once: eventsOnce,
    on: eventsOn,
    usingDomains: false,
    captureRejectionSymbol: kRejection,
    captureRejections: false,
    errorMonitor: kErrorMonitor,
    // Node's EventEmitter.listenerCount: the emitter's own method, else
    // EventEmitter's on it (0 for an object with no _events).
    listenerCount(emitter, type) {
      if (typeof emitter.listenerCount === 'function') return emitter.listenerCount(type);
      return ReflectApply(eeListenerCount, emitter, [type]);
    },
    getEventListeners(target, type) {
      if (targetState.has(target)) {
        const listeners = [];
        const root = targetState.events(target).get(type);
        for (let l = root?.next; l !== undefined; l = l.next) ReflectApply(ArrayPush, listeners, [l.listener]);
        return listeners;
      }
      if (target != null && typeof target.listeners === 'function') return target.listeners(type);
      throw argTypeError('emitter', 'an instance of EventEmitter or EventTarget', target);
    },
    // Node's: an emitter (anything with a getMaxListeners method) by its
    // `_maxListeners`, not its method; an EventTarget's limit read as a
    // truthy value, so one set to 0 is taken for no EventTarget at all.
    getMaxListeners(target) {
      if (typeof target?.getMaxListeners === 'function') {
        // process and the stdio streams keep theirs inside (their own methods).
        if (target === process || target === process.stdout || target === process.stderr) return target.getMaxListeners();
        return target._maxListeners === undefined ? defaultMaxListeners : target._maxListeners;
      }
      if (targetState.has(target) && targetState.max(target)) return targetState.max(target);
      throw argTypeError('emitter', 'an instance of EventEmitter or EventTarget', target);
    },
    setMaxListeners(n = defaultMaxListeners, ...targets) {
      checkMax(n, 'setMaxListeners');
      if (targets.length === 0) defaultMaxListeners = n;
      for (let i = 0; i < targets.length; i++) {
        const t = targets[i];
        if (targetState.has(t)) {
          targetState.setMax(t, n);
        } else if (t != null && typeof t.setMaxListeners === 'function') {
          t.setMaxListeners(n);
        } else {
          throw argTypeError('eventTargets', 'an instance of EventEmitter or EventTarget', t);
        }
      }
    },
    addAbortListener,
  });
  // Every emitter's default (an accessor in Node's place among the
  // statics).
  defineProperty(EventEmitter, 'captureRejections', {
    __proto__: null,
    get() { return EventEmitter.prototype[kCapture]; },
    set(value) {
      if (typeof value !== 'boolean') throw argTypeError('EventEmitter.captureRejections', 'of type boolean', value);
      EventEmitter.prototype[kCapture] = value;
    },
    enumerable: true,
    configurable: true,
  });
  // The statics in Node's order (what Object.keys(EventEmitter) shows;
  // Node's lazy EventEmitterAsyncResource is not here).
  {
    const order = ['addAbortListener', 'once', 'on', 'getEventListeners', 'getMaxListeners', 'EventEmitter',
      'usingDomains', 'captureRejectionSymbol', 'captureRejections', 'errorMonitor', 'defaultMaxListeners',
      'setMaxListeners', 'init', 'listenerCount'];
    for (let i = 0; i < order.length; i++) {
      const d = Object.getOwnPropertyDescriptor(EventEmitter, order[i]);
      delete EventEmitter[order[i]];
      // Node's two accessors are not configurable.
      if (d.get !== undefined) d.configurable = false;
      defineProperty(EventEmitter, order[i], d);
    }
  }
  function addAbortListener(signal, listener) {
    if (signal === undefined) throw argTypeError('signal', 'an instance of AbortSignal', signal);
    validateAbortSignal(signal, 'signal');
    checkCallback(listener, 'listener');
    if (signal.aborted) {
      queueMicrotask(() => listener());
      return { __proto__: null, [SymbolDispose]() {} };
    }
    signal.addEventListener('abort', listener, { __proto__: null, once: true, [kResist]: true });
    return { __proto__: null, [SymbolDispose]() { signal.removeEventListener('abort', listener); } };
  }

  // --- require('path'): Node's POSIX path, from its rules --------------
  // normalize (`.` and `..` resolved, repeated slashes joined, a trailing
  // slash kept), join, resolve (from process.cwd()), relative, dirname,
  // basename (with a suffix), extname, parse, format, isAbsolute; `sep`
  // and `delimiter`; path.posix is path itself. No path.win32.
  function checkString(v, name) {
    if (typeof v !== 'string') throw argTypeError(name, 'of type string', v);
  }
  // The segments of `p` with `.` dropped and `..` applied; above the root
  // `..` stays only where it may (a relative path).
  function normalizeSegments(p, allowAboveRoot) {
    const out = [];
    for (const seg of p.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '..') {
        if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
        else if (allowAboveRoot) out.push('..');
      } else {
        out.push(seg);
      }
    }
    return out.join('/');
  }
  // The last part of `p` (from index `from` on), scanned from its end as
  // Node's does: where it starts and ends (trailing slashes ignored),
  // where its extension's dot is, and whether that dot makes an
  // extension (`dotState` 0: the only dots are the name's first
  // characters, as `..` or `.a`).
  function lastPart(p, from) {
    let start = 0, end = -1, dot = -1, dotState = 0;
    for (let i = p.length - 1; i >= from; --i) {
      const ch = p[i];
      if (ch === '/') {
        if (end !== -1) { start = i + 1; break; }
        continue;
      }
      if (end === -1) end = i + 1;
      if (ch === '.') {
        if (dot === -1) dot = i;
        else if (dotState !== 1) dotState = 1;
      } else if (dot !== -1) {
        dotState = -1;
      }
    }
    const noExt = dot === -1 || end === -1 || dotState === 0 ||
      (dotState === 1 && dot === end - 1 && dot === start + 1);
    return { start, end, dot: noExt ? -1 : dot };
  }
  const path = {
    sep: '/',
    delimiter: ':',
    normalize(p) {
      checkString(p, 'path');
      if (p.length === 0) return '.';
      const absolute = p[0] === '/';
      const trailing = p[p.length - 1] === '/';
      let out = normalizeSegments(p, !absolute);
      if (out.length === 0) {
        if (absolute) return '/';
        return trailing ? './' : '.';
      }
      if (trailing) out += '/';
      return absolute ? '/' + out : out;
    },
    isAbsolute(p) {
      checkString(p, 'path');
      return p.length > 0 && p[0] === '/';
    },
    join(...args) {
      if (args.length === 0) return '.';
      let joined;
      for (const arg of args) {
        checkString(arg, 'path');
        if (arg.length > 0) joined = joined === undefined ? arg : `${joined}/${arg}`;
      }
      return joined === undefined ? '.' : path.normalize(joined);
    },
    resolve(...args) {
      let resolved = '';
      let absolute = false;
      for (let i = args.length - 1; i >= -1 && !absolute; i--) {
        const p = i >= 0 ? args[i] : process.cwd();
        checkString(p, `paths[${i}]`);
        if (p.length === 0) continue;
        resolved = `${p}/${resolved}`;
        absolute = p[0] === '/';
      }
      const out = normalizeSegments(resolved, !absolute);
      if (absolute) return `/${out}`;
      return out.length > 0 ? out : '.';
    },
    relative(from, to) {
      checkString(from, 'from');
      checkString(to, 'to');
      if (from === to) return '';
      from = path.resolve(from);
      to = path.resolve(to);
      if (from === to) return '';
      const f = from === '/' ? [] : from.slice(1).split('/');
      const t = to === '/' ? [] : to.slice(1).split('/');
      let common = 0;
      while (common < f.length && common < t.length && f[common] === t[common]) common++;
      return [...Array(f.length - common).fill('..'), ...t.slice(common)].join('/');
    },
    toNamespacedPath(p) { return p; },
    dirname(p) {
      checkString(p, 'path');
      if (p.length === 0) return '.';
      const hasRoot = p[0] === '/';
      let end = -1;
      let matchedSlash = true;
      for (let i = p.length - 1; i >= 1; --i) {
        if (p[i] === '/') {
          if (!matchedSlash) { end = i; break; }
        } else {
          matchedSlash = false;
        }
      }
      if (end === -1) return hasRoot ? '/' : '.';
      if (hasRoot && end === 1) return '//';
      return p.slice(0, end);
    },
    basename(p, suffix) {
      if (suffix !== undefined) checkString(suffix, 'suffix');
      checkString(p, 'path');
      let start = 0, end = -1;
      if (suffix !== undefined && suffix.length > 0 && suffix.length <= p.length) {
        // Node's: the suffix is matched backwards from the last
        // non-slash character; a mismatch ends the match, leaving the
        // name whole (quirks and all: a name that is all suffix stays).
        if (suffix === p) return '';
        let k = suffix.length - 1;
        let nameEnd = -1;
        for (let i = p.length - 1; i >= 0; --i) {
          if (p[i] === '/') {
            if (nameEnd !== -1) { start = i + 1; break; }
            continue;
          }
          if (nameEnd === -1) nameEnd = i + 1;
          if (k >= 0) {
            if (p[i] === suffix[k]) {
              if (--k === -1) end = i;
            } else {
              k = -1;
              end = nameEnd;
            }
          }
        }
        if (start === end) end = nameEnd;
        else if (end === -1) end = p.length;
        return p.slice(start, end);
      }
      for (let i = p.length - 1; i >= 0; --i) {
        if (p[i] === '/') {
          if (end !== -1) { start = i + 1; break; }
        } else if (end === -1) {
          end = i + 1;
        }
      }
      return end === -1 ? '' : p.slice(start, end);
    },
    extname(p) {
      checkString(p, 'path');
      const { end, dot } = lastPart(p, 0);
      return dot === -1 ? '' : p.slice(dot, end);
    },
    format(o) {
      if (o === null || typeof o !== 'object') throw argTypeError('pathObject', 'of type object', o);
      const dir = o.dir || o.root;
      const base = o.base || `${o.name || ''}${o.ext ? (o.ext[0] === '.' ? '' : '.') + o.ext : ''}`;
      if (!dir) return base;
      return dir === o.root ? `${dir}${base}` : `${dir}/${base}`;
    },
    parse(p) {
      checkString(p, 'path');
      const ret = { root: '', dir: '', base: '', ext: '', name: '' };
      if (p.length === 0) return ret;
      const absolute = p[0] === '/';
      if (absolute) ret.root = '/';
      const { start: part, end, dot } = lastPart(p, absolute ? 1 : 0);
      if (end !== -1) {
        const start = part === 0 && absolute ? 1 : part;
        ret.base = p.slice(start, end);
        if (dot === -1) {
          ret.name = ret.base;
        } else {
          ret.name = p.slice(start, dot);
          ret.ext = p.slice(dot, end);
        }
      }
      // Node's: the part's own slash goes, any before it stay.
      if (part > 0) ret.dir = p.slice(0, part - 1);
      else if (absolute) ret.dir = '/';
      return ret;
    },
  };
  path.posix = path;

  const modules = {
    timers: timersModule, 'timers/promises': timersPromises, fs, util, assert, events: EventEmitter, path,
    buffer: bufferModule,
    // Node's `performance` (the global's), for `const { performance } =
    // require('perf_hooks')`; no observers, marks or measures.
    perf_hooks: { performance: g.performance },
    'assert/strict': assert.strict,
  };
  // V8's NoSideEffectsToString, as Node's unhandled-rejection message
  // shows a reason: a primitive as `String` makes it (a bigint without
  // its `n`), a function as its source, an object whose `toString` is
  // Object.prototype's as `#<Constructor>`, any other object as its
  // builtin tag, `[object Array]`. Only data properties are read.
  function dataProperty(o, key) {
    for (let p = o; p !== null; p = ObjectGetPrototypeOf(p)) {
      const d = getOwnDescriptor(p, key);
      if (d !== undefined) return 'value' in d ? d.value : undefined;
    }
    return undefined;
  }
  function noSideEffectsToString(v) {
    if (typeof v === 'symbol') return ReflectApply(SymbolToString, v, []);
    if (typeof v === 'function') return ReflectApply(FunctionToString, v, []);
    if (typeof v !== 'object' || v === null) return '' + v;
    if (dataProperty(v, 'toString') === ObjectToString) {
      const ctor = dataProperty(v, 'constructor');
      const name = typeof ctor === 'function' ? dataProperty(ctor, 'name') : undefined;
      return '#<' + (typeof name === 'string' && name !== '' ? name : 'Object') + '>';
    }
    return ReflectApply(ObjectToString, v, []);
  }
  // Node's error for an unhandled rejection whose reason is not an
  // error: what `uncaughtException` listeners get, and what is fatal.
  class UnhandledPromiseRejection extends Error {
    constructor(reason) {
      super('This error originated either by throwing inside of an async function without a ' +
        'catch block, or by rejecting a promise which was not handled with .catch(). The ' +
        'promise rejected with the reason "' + noSideEffectsToString(reason) + '".');
      this.code = 'ERR_UNHANDLED_REJECTION';
      this.name = 'UnhandledPromiseRejection';
    }
  }
  // --- require: Node 20's CommonJS loader --------------------------------
  // lib/internal/modules/cjs/loader.js for a program's own files, its
  // names and its order: `Module._load` (the cache, cycles, a module that
  // throws leaves the cache and its parent's children), `_resolveFilename`
  // (built-ins first, `Cannot find module` with the require stack),
  // `_findPath` (the file, its extensions in `Module._extensions`' order,
  // then a directory's package.json `main` and `index`), `node_modules`
  // up the tree with package.json `exports` (a string, conditions
  // `require`/`node`/`default`, subpaths and `*` patterns), each module
  // with its own `require` (Node's makeRequireFunction). Each module is
  // compiled by the host in Node's wrapper, under its real file name.
  // Not here: ES modules ("type": "module"), a package's self-reference
  // by name, package `imports` (`#x`), native addons, policies.
  const { startMain, endMain } = (() => {
    const JSONParse = JSON.parse;
    const ArrayIsArray = Array.isArray;
    const ObjectKeys = Object.keys;
    const ObjectSetPrototypeOf = Object.setPrototypeOf;
    const ObjectPrototype = Object.prototype;
    const { push: ArrayPush, indexOf: ArrayIndexOf, splice: ArraySplice, includes: ArrayIncludes,
      join: ArrayJoin, slice: ArraySlice } = Array.prototype;
    const { startsWith: StringStartsWith, endsWith: StringEndsWith, indexOf: StringIndexOf,
      lastIndexOf: StringLastIndexOf, slice: StringSlice, charCodeAt: StringCharCodeAt } = String.prototype;
    const WeakMapCtor = WeakMap;
    const { get: WeakMapGet, set: WeakMapSet } = WeakMap.prototype;
    const call = (f, self, ...args) => ReflectApply(f, self, args);
    const setOwn = (o, k, value) => defineProperty(o, k,
      { __proto__: null, value, writable: true, enumerable: true, configurable: true });
    // Node 20's `require('module').builtinModules`: these names are never
    // looked for on disk (`node:` names too, and `node:test`); tljs has
    // the ones in `modules`, the others are MODULE_NOT_FOUND, as before.
    const nodeBuiltins = [
      '_http_agent', '_http_client', '_http_common', '_http_incoming', '_http_outgoing', '_http_server',
      '_stream_duplex', '_stream_passthrough', '_stream_readable', '_stream_transform', '_stream_wrap',
      '_stream_writable', '_tls_common', '_tls_wrap', 'assert', 'assert/strict', 'async_hooks', 'buffer',
      'child_process', 'cluster', 'console', 'constants', 'crypto', 'dgram', 'diagnostics_channel', 'dns',
      'dns/promises', 'domain', 'events', 'fs', 'fs/promises', 'http', 'http2', 'https', 'inspector',
      'inspector/promises', 'module', 'net', 'os', 'path', 'path/posix', 'path/win32', 'perf_hooks',
      'process', 'punycode', 'querystring', 'readline', 'readline/promises', 'repl', 'stream',
      'stream/consumers', 'stream/promises', 'stream/web', 'string_decoder', 'sys', 'timers',
      'timers/promises', 'tls', 'trace_events', 'tty', 'url', 'util', 'util/types', 'v8', 'vm', 'wasi',
      'worker_threads', 'zlib',
    ];
    const schemeOnly = ['test', 'test/reporters'];
    const isBuiltin = (id) => call(ArrayIncludes, nodeBuiltins, id);
    const isBuiltinByScheme = (id) => isBuiltin(id) || call(ArrayIncludes, schemeOnly, id);
    // Node's normalizeRequirableId: the built-in's id, or undefined.
    function builtinId(request) {
      if (call(StringStartsWith, request, 'node:')) {
        const id = call(StringSlice, request, 5);
        return isBuiltinByScheme(id) ? id : undefined;
      }
      return isBuiltin(request) ? request : undefined;
    }
    // A built-in's exports; one tljs lacks is MODULE_NOT_FOUND, as it was.
    function loadBuiltin(id, request) {
      if (hasOwn(modules, id)) return modules[id];
      const e = new ErrorCtor("Cannot find module '" + request + "'");
      e.code = 'MODULE_NOT_FOUND';
      throw e;
    }
    function invalidArgValue(name, value, reason = 'is invalid') {
      let shown = inspect(value, 0);
      if (shown.length > 128) shown = call(StringSlice, shown, 0, 128) + '...';
      const kind = call(StringIndexOf, name, '.') !== -1 ? 'property' : 'argument';
      return coded(new TypeError(`The ${kind} '${name}' ${reason}. Received ${shown}`), 'ERR_INVALID_ARG_VALUE');
    }

    // The width of the host's wrapper, on each compiled module's line 1.
    const wrapperWidth = host.wrapperWidth;
    const moduleParents = new WeakMapCtor();
    const relativeResolveCache = { __proto__: null };
    // internalModuleStat: 0 a file, 1 a directory, negative: neither.
    const statPath = (p) => host.moduleStat(p);

    function updateChildren(parent, child, scan) {
      const children = parent == null ? undefined : parent.children;
      if (children && !(scan && call(ArrayIncludes, children, child))) call(ArrayPush, children, child);
    }
    function Module(id = '', parent) {
      this.id = id;
      this.path = path.dirname(id);
      setOwn(this, 'exports', {});
      call(WeakMapSet, moduleParents, this, parent);
      updateChildren(parent, this, false);
      this.filename = null;
      this.loaded = false;
      this.children = [];
    }
    Module._cache = { __proto__: null };
    Module._pathCache = { __proto__: null };
    Module._extensions = { __proto__: null };
    // Node's _initPaths: NODE_PATH's folders, ~/.node_modules,
    // ~/.node_libraries and <prefix>/lib/node (the prefix two folders up
    // from the executable), searched after a module's node_modules.
    let modulePaths = [];
    {
      const env = process.env;
      const paths = [];
      if (typeof process.execPath === 'string' && process.execPath !== '') {
        call(ArrayPush, paths, path.resolve(process.execPath, '..', '..', 'lib', 'node'));
      }
      if (env.HOME) paths.unshift(path.resolve(env.HOME, '.node_modules'), path.resolve(env.HOME, '.node_libraries'));
      if (env.NODE_PATH) paths.unshift(...env.NODE_PATH.split(':').filter(Boolean));
      modulePaths = paths;
    }
    Module.globalPaths = call(ArraySlice, modulePaths);
    Module.builtinModules = call(ArraySlice, nodeBuiltins);
    Module.isBuiltin = (id) => typeof id === 'string' && builtinId(id) !== undefined;
    defineProperty(Module.prototype, 'constructor', { __proto__: null,
      get() { return Module; }, configurable: false, enumerable: false });
    defineProperty(Module.prototype, 'isPreloading', { __proto__: null, get() { return false; } });
    defineProperty(Module.prototype, 'parent', { __proto__: null,
      get() { return call(WeakMapGet, moduleParents, this); },
      set(value) { call(WeakMapSet, moduleParents, this, value); },
      enumerable: false, configurable: true });

    // A byte order mark is not JSON (Node's stripBOM).
    const stripBOM = (text) => (call(StringCharCodeAt, text, 0) === 0xFEFF ? call(StringSlice, text, 1) : text);
    // package.json, read once each (Node's package_json_reader).
    const packages = SafeMap();
    function readPackage(dir) {
      const jsonPath = path.resolve(dir, 'package.json');
      const known = packages.get(jsonPath);
      if (known !== undefined) return known;
      // The file's bytes (an ArrayBuffer), or its error as an array.
      const r = host.readFile(jsonPath);
      const pkg = { __proto__: null, exists: false, pjsonPath: jsonPath, main: undefined, name: undefined,
        exports: undefined };
      if (!ArrayIsArray(r)) {
        let parsed;
        try {
          parsed = JSONParse(stripBOM(new FastBuffer(r).toString('utf8')));
        } catch (error) {
          error.message = 'Error parsing ' + jsonPath + ': ' + error.message;
          error.path = jsonPath;
          throw error;
        }
        pkg.exists = true;
        if (parsed !== null && typeof parsed === 'object') {
          if (hasOwn(parsed, 'name') && typeof parsed.name === 'string') pkg.name = parsed.name;
          if (hasOwn(parsed, 'main') && typeof parsed.main === 'string') pkg.main = parsed.main;
          if (hasOwn(parsed, 'exports')) pkg.exports = parsed.exports;
        }
      }
      packages.set(jsonPath, pkg);
      return pkg;
    }
    function toRealPath(p) {
      return host.realpath(p);
    }
    function tryFile(requestPath) {
      if (statPath(requestPath) !== 0) return undefined;
      return toRealPath(requestPath);
    }
    function tryExtensions(basePath, exts) {
      for (let i = 0; i < exts.length; i++) {
        const filename = tryFile(basePath + exts[i]);
        if (filename) return filename;
      }
      return false;
    }
    function tryPackage(requestPath, exts, originalPath) {
      const main = readPackage(requestPath).main;
      if (!main) return tryExtensions(path.resolve(requestPath, 'index'), exts);
      const filename = path.resolve(requestPath, main);
      let actual = tryFile(filename) || tryExtensions(filename, exts) ||
        tryExtensions(path.resolve(filename, 'index'), exts);
      if (actual === false) {
        actual = tryExtensions(path.resolve(requestPath, 'index'), exts);
        if (!actual) {
          const err = new ErrorCtor(`Cannot find module '${filename}'. ` +
            'Please verify that the package.json has a valid "main" entry');
          err.code = 'MODULE_NOT_FOUND';
          err.path = path.resolve(requestPath, 'package.json');
          err.requestPath = originalPath;
          throw err;
        }
        const jsonPath = path.resolve(requestPath, 'package.json');
        process.emitWarning(`Invalid 'main' field in '${jsonPath}' of '${main}'. ` +
          'Please either fix that or report it to the module author', 'DeprecationWarning', 'DEP0128');
      }
      return actual;
    }
    function findLongestRegisteredExtension(filename) {
      const name = path.basename(filename);
      let index, startIndex = 0;
      while ((index = call(StringIndexOf, name, '.', startIndex)) !== -1) {
        startIndex = index + 1;
        if (index === 0) continue; // a dotfile's dot
        const ext = call(StringSlice, name, index);
        if (Module._extensions[ext]) return ext;
      }
      return '.js';
    }
    function isRelative(p) {
      if (call(StringCharCodeAt, p, 0) !== 46) return false;
      return p.length === 1 || p === '..' || call(StringStartsWith, p, './') || call(StringStartsWith, p, '../');
    }

    // package.json `exports` (Node's packageExportsResolve, on paths: no
    // URL encoding, no deprecated-segment warnings), for `require`.
    const cjsConditions = ['require', 'node', 'node-addons'];
    function exportsNotFound(subpath, pkgDir) {
      return coded(new ErrorCtor(subpath === '.'
        ? `No "exports" main defined in ${pkgDir}package.json`
        : `Package subpath '${subpath}' is not defined by "exports" in ${pkgDir}package.json`),
      'ERR_PACKAGE_PATH_NOT_EXPORTED');
    }
    function invalidPackageConfig(jsonPath, message) {
      return coded(new ErrorCtor(`Invalid package config ${jsonPath}. ${message}`), 'ERR_INVALID_PACKAGE_CONFIG');
    }
    function invalidPackageTarget(pkgDir, key, target) {
      target = typeof target === 'object' && target !== null ? JSON.stringify(target, null, '') : `${target}`;
      const relError = target.length > 0 && !call(StringStartsWith, target, './');
      const tail = `${pkgDir}package.json${relError ? '; targets must start with "./"' : ''}`;
      return coded(new ErrorCtor(key === '.'
        ? `Invalid "exports" main target ${JSON.stringify(target)} defined in the package config ${tail}`
        : `Invalid "exports" target ${JSON.stringify(target)} defined for '${key}' in the package config ${tail}`),
      'ERR_INVALID_PACKAGE_TARGET');
    }
    // A target's `.`, `..` or `node_modules` segment (Node's invalidSegmentRegEx).
    const invalidSegment = (p) => p.split(/[\\/]/).some((seg) => seg === '.' || seg === '..' ||
      seg.toLowerCase() === 'node_modules');
    const isArrayIndex = (key) => {
      const n = +key;
      return `${n}` === key && n >= 0 && n < 0xFFFFFFFF;
    };
    // A target: a path (with `*` replaced by the pattern's match), or null
    // (excluded), or undefined (no condition applies).
    function resolveTarget(pkgDir, target, subpath, key, pattern) {
      if (typeof target === 'string') {
        if (subpath !== '' && !pattern && target[target.length - 1] !== '/') {
          throw invalidPackageTarget(pkgDir, key, target);
        }
        if (!call(StringStartsWith, target, './') || invalidSegment(call(StringSlice, target, 2))) {
          throw invalidPackageTarget(pkgDir, key, target);
        }
        const resolved = path.resolve(pkgDir, pattern ? target.split('*').join(subpath) : target + subpath);
        if (!call(StringStartsWith, resolved + '/', pkgDir)) throw invalidPackageTarget(pkgDir, key, target);
        return resolved;
      }
      if (ArrayIsArray(target)) {
        if (target.length === 0) return null;
        let last;
        for (let i = 0; i < target.length; i++) {
          let r;
          try {
            r = resolveTarget(pkgDir, target[i], subpath, key, pattern);
          } catch (e) {
            last = e;
            if (e.code === 'ERR_INVALID_PACKAGE_TARGET') continue;
            throw e;
          }
          if (r === undefined) continue;
          if (r === null) {
            last = null;
            continue;
          }
          return r;
        }
        if (last === undefined || last === null) return last;
        throw last;
      }
      if (typeof target === 'object' && target !== null) {
        const keys = Object.getOwnPropertyNames(target);
        for (let i = 0; i < keys.length; i++) {
          if (isArrayIndex(keys[i])) {
            throw invalidPackageConfig(pkgDir + 'package.json', '"exports" cannot contain numeric property keys.');
          }
        }
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i];
          if (k === 'default' || call(ArrayIncludes, cjsConditions, k)) {
            const r = resolveTarget(pkgDir, target[k], subpath, key, pattern);
            if (r !== undefined) return r;
          }
        }
        return undefined;
      }
      if (target === null) return null;
      throw invalidPackageTarget(pkgDir, key, target);
    }
    function patternKeyCompare(a, b) {
      const ai = call(StringIndexOf, a, '*'), bi = call(StringIndexOf, b, '*');
      const baseA = ai === -1 ? a.length : ai + 1, baseB = bi === -1 ? b.length : bi + 1;
      if (baseA > baseB) return -1;
      if (baseB > baseA) return 1;
      if (ai === -1) return 1;
      if (bi === -1) return -1;
      if (a.length > b.length) return -1;
      if (b.length > a.length) return 1;
      return 0;
    }
    function packageExportsResolve(pkgDir, subpath, exports) {
      let sugar = typeof exports === 'string' || ArrayIsArray(exports);
      if (!sugar && typeof exports === 'object' && exports !== null) {
        const keys = Object.getOwnPropertyNames(exports);
        for (let j = 0; j < keys.length; j++) {
          const cur = keys[j] === '' || keys[j][0] !== '.';
          if (j === 0) sugar = cur;
          else if (sugar !== cur) {
            throw invalidPackageConfig(pkgDir + 'package.json',
              '"exports" cannot contain some keys starting with \'.\' and some not. The exports object must ' +
              'either be an object of package subpath keys or an object of main entry condition name keys only.');
          }
        }
      }
      if (sugar) exports = { '.': exports };
      if (hasOwn(exports, subpath) && call(StringIndexOf, subpath, '*') === -1 &&
          !call(StringEndsWith, subpath, '/')) {
        const r = resolveTarget(pkgDir, exports[subpath], '', subpath, false);
        if (r == null) throw exportsNotFound(subpath, pkgDir);
        return r;
      }
      let bestMatch = '', bestMatchSubpath;
      const keys = Object.getOwnPropertyNames(exports);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        const star = call(StringIndexOf, key, '*');
        if (star !== -1 && call(StringStartsWith, subpath, call(StringSlice, key, 0, star))) {
          const trailer = call(StringSlice, key, star + 1);
          if (subpath.length >= key.length && call(StringEndsWith, subpath, trailer) &&
              patternKeyCompare(bestMatch, key) === 1 && call(StringLastIndexOf, key, '*') === star) {
            bestMatch = key;
            bestMatchSubpath = call(StringSlice, subpath, star, subpath.length - trailer.length);
          }
        }
      }
      if (bestMatch) {
        const r = resolveTarget(pkgDir, exports[bestMatch], bestMatchSubpath, bestMatch, true);
        if (r == null) throw exportsNotFound(subpath, pkgDir);
        return r;
      }
      throw exportsNotFound(subpath, pkgDir);
    }
    const EXPORTS_PATTERN = /^((?:@[^/\\%]+\/)?[^./\\%][^/\\%]*)(\/.*)?$/;
    function resolveExports(nmPath, request) {
      const m = EXPORTS_PATTERN.exec(request);
      if (m === null) return undefined;
      const pkgPath = path.resolve(nmPath, m[1]);
      const pkg = readPackage(pkgPath);
      if (!pkg.exists || pkg.exports == null) return undefined;
      const filename = packageExportsResolve(pkgPath + '/', '.' + (m[2] || ''), pkg.exports);
      const actual = tryFile(filename);
      if (actual) return actual;
      const err = new ErrorCtor(`Cannot find module '${filename}'`);
      err.code = 'MODULE_NOT_FOUND';
      err.path = path.resolve(pkgPath, 'package.json');
      throw err;
    }

    Module._findPath = function _findPath(request, paths, isMain) {
      const absoluteRequest = path.isAbsolute(request);
      if (absoluteRequest) paths = [''];
      else if (!paths || paths.length === 0) return false;
      const cacheKey = request + '\x00' + call(ArrayJoin, paths, '\x00');
      const entry = Module._pathCache[cacheKey];
      if (entry) return entry;
      let exts;
      const n = request.length;
      const trailingSlash = n > 0 && (request[n - 1] === '/' || (request[n - 1] === '.' &&
        (n === 1 || request[n - 2] === '/' || (request[n - 2] === '.' && (n === 2 || request[n - 3] === '/')))));
      let insidePath = true;
      if (isRelative(request) && call(StringStartsWith, path.normalize(request), '..')) insidePath = false;
      for (let i = 0; i < paths.length; i++) {
        const curPath = paths[i];
        if (typeof curPath !== 'string') throw argTypeError('paths', 'array of strings', paths);
        if (insidePath && curPath && statPath(curPath) < 1) continue;
        if (!absoluteRequest) {
          const exportsResolved = resolveExports(curPath, request);
          if (exportsResolved) return exportsResolved;
        }
        const basePath = path.resolve(curPath, request);
        let filename;
        const rc = statPath(basePath);
        if (!trailingSlash) {
          if (rc === 0) filename = toRealPath(basePath);
          if (!filename) {
            if (exts === undefined) exts = ObjectKeys(Module._extensions);
            filename = tryExtensions(basePath, exts);
          }
        }
        if (!filename && rc === 1) {
          if (exts === undefined) exts = ObjectKeys(Module._extensions);
          filename = tryPackage(basePath, exts, request);
        }
        if (filename) {
          Module._pathCache[cacheKey] = filename;
          return filename;
        }
      }
      return false;
    };
    Module._nodeModulePaths = function _nodeModulePaths(from) {
      from = path.resolve(from);
      if (from === '/') return ['/node_modules'];
      const paths = [];
      const nm = 'node_modules';
      // Each folder from `from` up but those named node_modules, then the root's.
      for (let i = from.length - 1, last = from.length; i >= 0; --i) {
        if (call(StringCharCodeAt, from, i) === 47) {
          if (call(StringSlice, from, i + 1, last) !== nm) {
            call(ArrayPush, paths, call(StringSlice, from, 0, last) + '/node_modules');
          }
          last = i;
        }
      }
      call(ArrayPush, paths, '/node_modules');
      return paths;
    };
    Module._resolveLookupPaths = function _resolveLookupPaths(request, parent) {
      if (builtinId(request) !== undefined) return null;
      if (request[0] !== '.' || (request.length > 1 && request[1] !== '.' && request[1] !== '/')) {
        let paths;
        if (parent != null && parent.paths != null && parent.paths.length) {
          paths = call(ArraySlice, modulePaths);
          paths.unshift(...parent.paths);
        } else {
          paths = modulePaths;
        }
        return paths.length > 0 ? paths : null;
      }
      if (!parent || !parent.id || !parent.filename) return ['.'];
      return [path.dirname(parent.filename)];
    };
    Module._resolveFilename = function _resolveFilename(request, parent, isMain, options) {
      if (builtinId(request) !== undefined) return request;
      let paths;
      if (typeof options === 'object' && options !== null) {
        if (ArrayIsArray(options.paths)) {
          if (isRelative(request)) {
            paths = options.paths;
          } else {
            const fakeParent = new Module('', null);
            paths = [];
            for (let i = 0; i < options.paths.length; i++) {
              fakeParent.paths = Module._nodeModulePaths(options.paths[i]);
              const lookupPaths = Module._resolveLookupPaths(request, fakeParent);
              for (let j = 0; j < lookupPaths.length; j++) {
                if (!call(ArrayIncludes, paths, lookupPaths[j])) call(ArrayPush, paths, lookupPaths[j]);
              }
            }
          }
        } else if (options.paths === undefined) {
          paths = Module._resolveLookupPaths(request, parent);
        } else {
          throw invalidArgValue('options.paths', options.paths);
        }
      } else {
        paths = Module._resolveLookupPaths(request, parent);
      }
      const filename = Module._findPath(request, paths, isMain);
      if (filename) return filename;
      const requireStack = [];
      for (let cursor = parent; cursor; cursor = call(WeakMapGet, moduleParents, cursor)) {
        call(ArrayPush, requireStack, cursor.filename || cursor.id);
      }
      let message = `Cannot find module '${request}'`;
      if (requireStack.length > 0) message += '\nRequire stack:\n- ' + call(ArrayJoin, requireStack, '\n- ');
      const err = new ErrorCtor(message);
      err.code = 'MODULE_NOT_FOUND';
      err.requireStack = requireStack;
      throw err;
    };

    // A cycle's partial exports: a plain object warns when a property it
    // does not have is read, until its module has loaded (Node's
    // CircularRequirePrototypeWarningProxy).
    function emitCircularRequireWarning(prop) {
      process.emitWarning(`Accessing non-existent property '${StringOf(prop)}' of module exports ` +
        'inside circular dependency');
    }
    const CircularRequirePrototypeWarningProxy = new Proxy({}, {
      __proto__: null,
      get(target, prop) {
        if (prop in target || prop === '__esModule') return target[prop];
        emitCircularRequireWarning(prop);
        return undefined;
      },
      getOwnPropertyDescriptor(target, prop) {
        if (hasOwn(target, prop) || prop === '__esModule') return getOwnDescriptor(target, prop);
        emitCircularRequireWarning(prop);
        return undefined;
      },
    });
    function getExportsForCircularRequire(module) {
      const exports = module.exports;
      if (exports && ObjectGetPrototypeOf(exports) === ObjectPrototype && !exports.__esModule) {
        ObjectSetPrototypeOf(exports, CircularRequirePrototypeWarningProxy);
      }
      return module.exports;
    }
    function loadedOrCircular(parent, cached) {
      updateChildren(parent, cached, true);
      return cached.loaded ? cached.exports : getExportsForCircularRequire(cached);
    }

    Module._load = function _load(request, parent, isMain) {
      let relResolveCacheIdentifier;
      if (parent) {
        relResolveCacheIdentifier = `${parent.path}\x00${request}`;
        const filename = relativeResolveCache[relResolveCacheIdentifier];
        if (filename !== undefined) {
          const cached = Module._cache[filename];
          if (cached !== undefined) return loadedOrCircular(parent, cached);
          delete relativeResolveCache[relResolveCacheIdentifier];
        }
      }
      if (call(StringStartsWith, request, 'node:')) {
        const id = call(StringSlice, request, 5);
        if (!isBuiltinByScheme(id)) {
          throw coded(new ErrorCtor(`No such built-in module: ${request}`), 'ERR_UNKNOWN_BUILTIN_MODULE');
        }
        return loadBuiltin(id, request);
      }
      const filename = Module._resolveFilename(request, parent, isMain);
      const cached = Module._cache[filename];
      if (cached !== undefined) return loadedOrCircular(parent, cached);
      if (isBuiltin(filename)) return loadBuiltin(filename, request);
      const module = new Module(filename, parent);
      Module._cache[filename] = module;
      if (parent !== undefined) relativeResolveCache[relResolveCacheIdentifier] = filename;
      let threw = true;
      try {
        module.load(filename);
        threw = false;
      } finally {
        if (threw) {
          delete Module._cache[filename];
          if (parent !== undefined) {
            delete relativeResolveCache[relResolveCacheIdentifier];
            const children = parent == null ? undefined : parent.children;
            if (ArrayIsArray(children)) {
              const index = call(ArrayIndexOf, children, module);
              if (index !== -1) call(ArraySplice, children, index, 1);
            }
          }
        } else if (module.exports && ObjectGetPrototypeOf(module.exports) === CircularRequirePrototypeWarningProxy) {
          ObjectSetPrototypeOf(module.exports, ObjectPrototype);
        }
      }
      return module.exports;
    };

    function makeRequireFunction(mod) {
      const require = function require(path) {
        return mod.require(path);
      };
      function resolve(request, options) {
        checkString(request, 'request');
        return Module._resolveFilename(request, mod, false, options);
      }
      require.resolve = resolve;
      function paths(request) {
        checkString(request, 'request');
        return Module._resolveLookupPaths(request, mod);
      }
      resolve.paths = paths;
      setOwn(require, 'main', process.mainModule);
      require.extensions = Module._extensions;
      require.cache = Module._cache;
      return require;
    }
    Module.prototype.load = function load(filename) {
      this.filename = filename;
      this.paths = Module._nodeModulePaths(path.dirname(filename));
      const extension = findLongestRegisteredExtension(filename);
      Module._extensions[extension](this, filename);
      this.loaded = true;
    };
    Module.prototype.require = function require(id) {
      checkString(id, 'id');
      if (id === '') throw invalidArgValue('id', id, 'must be a non-empty string');
      return Module._load(id, this, false);
    };
    // The host compiles the source in Node's wrapper under `filename`, so
    // stacks name the file (line 1's columns put right by frameText).
    Module.prototype._compile = function _compile(content, filename) {
      wrappedFiles.set(filename, wrapperWidth);
      const compiledWrapper = host.compile(`${content}`, `${filename}`);
      const dirname = path.dirname(filename);
      const require = makeRequireFunction(this);
      const exports = this.exports;
      return ReflectApply(compiledWrapper, exports, [exports, require, this, filename, dirname]);
    };
    Module._extensions['.js'] = function (module, filename) {
      // Node 20.19+ loads an ES module here (require(esm)); tljs runs
      // CommonJS only, and says so with the code older Nodes gave.
      if (call(StringEndsWith, filename, '.mjs')) {
        const parent = call(WeakMapGet, moduleParents, module);
        const from = parent && parent.filename ? ` from ${parent.filename}` : '';
        throw coded(new ErrorCtor(`require() of ES Module ${filename}${from} not supported.\n` +
          'tljs runs CommonJS modules only.'), 'ERR_REQUIRE_ESM');
      }
      // Through `fs.readFileSync`, as Node's loader reads.
      module._compile(fs.readFileSync(filename, 'utf8'), filename);
    };
    Module._extensions['.json'] = function (module, filename) {
      const content = fs.readFileSync(filename, 'utf8');
      try {
        setOwn(module, 'exports', JSONParse(stripBOM(content)));
      } catch (err) {
        err.message = filename + ': ' + err.message;
        throw err;
      }
    };
    Module._extensions['.node'] = function (module, filename) {
      const e = new ErrorCtor(`${filename}: tljs cannot load native addons`);
      e.code = 'ERR_DLOPEN_FAILED';
      throw e;
    };
    Module.createRequire = function createRequire(filename) {
      let filepath;
      const reason = 'must be a file URL object, file URL string, or absolute path string';
      if (typeof URL === 'function' && filename instanceof URL) {
        if (filename.protocol !== 'file:') throw invalidArgValue('filename', filename, reason);
        filepath = decodeURIComponent(filename.pathname);
      } else if (typeof filename !== 'string') {
        throw invalidArgValue('filename', filename, reason);
      } else if (!path.isAbsolute(filename)) {
        if (!call(StringStartsWith, filename, 'file://')) throw invalidArgValue('filename', filename, reason);
        filepath = decodeURIComponent(call(StringSlice, filename, 7));
      } else {
        filepath = filename;
      }
      const proxyPath = call(StringEndsWith, filepath, '/') ? path.join(filepath, 'noop.js') : filepath;
      const m = new Module(proxyPath);
      m.filename = proxyPath;
      m.paths = Module._nodeModulePaths(m.path);
      return makeRequireFunction(m);
    };
    Module.Module = Module;
    modules.module = Module;

    // The main script's module (Node's `Module._load(main, null, true)`),
    // and what the host calls its wrapper with: `this`, `exports`,
    // `require`, the module, `__filename` (the name as given) and
    // `__dirname`. A name that is not absolute (an embedder's `main.js`)
    // is in the working directory. `[stdin]` (`tljs -`) is Node's program
    // from standard input, which its evalScript runs as a module of the
    // working directory that is not the main one: id `[stdin]`, not in
    // the cache, no `require.main`, `this` the global object (its
    // top-level declarations stay the wrapper's, where Node's are global).
    let entryModule = null;
    function startMain(name) {
      const filename = path.resolve(name);
      wrappedFiles.set(name, wrapperWidth);
      let module;
      if (name === '[stdin]') {
        entryModule = null;
        module = new Module(name);
      } else {
        module = new Module(filename, null);
        entryModule = module;
        setOwn(process, 'mainModule', module);
        module.id = '.';
        Module._cache[filename] = module;
      }
      module.filename = filename;
      module.paths = Module._nodeModulePaths(path.dirname(filename));
      const self = entryModule === null ? g : module.exports;
      return [self, module.exports, makeRequireFunction(module), module, name, path.dirname(name)];
    }
    function endMain() {
      const module = entryModule;
      if (module === null) return;
      module.loaded = true;
      if (module.exports && ObjectGetPrototypeOf(module.exports) === CircularRequirePrototypeWarningProxy) {
        ObjectSetPrototypeOf(module.exports, ObjectPrototype);
      }
    }
    return { startMain, endMain };
  })();
  // Atomics.wait on the main thread, which QuickJS refuses ("cannot
  // block"): no other agent here can notify (no workers), so a wait whose
  // value matches sleeps out its timeout, as node's main thread waits
  // (`atomic-sleep`, a synchronous sleep). The engine's own checks and
  // errors for the array; outside the loop, the engine's refusal.
  {
    const AtomicsWait = Atomics.wait;
    const AtomicsLoad = Atomics.load;
    defineProperty(Atomics, 'wait', { __proto__: null,
      value: function wait(typedArray, index, value, timeout) {
        const big = typedArray instanceof BigInt64Array;
        if (!host.engaged() || !(big || typedArray instanceof Int32Array) ||
            !(typedArray.buffer instanceof SharedArrayBuffer)) {
          return ReflectApply(AtomicsWait, Atomics, [typedArray, index, value, timeout]);
        }
        AtomicsLoad(typedArray, index); // the engine's index checks
        // The spec's conversions, by the engine: an element store is
        // ToInt32 or ToBigInt64 (a Number for a BigInt64Array is a
        // TypeError), unary plus is ToNumber (a BigInt is a TypeError).
        const cell = big ? new BigInt64Array(1) : new Int32Array(1);
        cell[0] = value;
        let t = +timeout;
        if (t !== t) t = Infinity;
        if (AtomicsLoad(typedArray, index) !== cell[0]) return 'not-equal';
        // True when the program must stop (its budget ran out, or the
        // embedder's handler said so): the spin meets the engine's next
        // interrupt check, and nothing after the wait runs.
        if (host.sleep(t)) for (;;);
        return 'timed-out';
      },
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }

  // The engine's builtins that Node 20's V8 (11.3) does not have, taken
  // away: a program that tests for one (`if (Promise.withResolvers)`)
  // takes node's path, and one that uses one fails as it does on node.
  // (QuickJS's own `InternalError`, `Function.prototype.fileName` and
  // the `using` syntax stay: the host's errors and stacks need the first
  // two, and syntax cannot be taken away.)
  {
    const drop = (o, ...keys) => { for (let i = 0; i < keys.length; i++) delete o[keys[i]]; };
    const iteratorProto = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
    const asyncIteratorProto = Object.getPrototypeOf(Object.getPrototypeOf(Object.getPrototypeOf((async function* () {})())));
    drop(g, 'Iterator', 'DisposableStack', 'AsyncDisposableStack', 'SuppressedError', 'Float16Array');
    drop(iteratorProto, 'map', 'filter', 'take', 'drop', 'flatMap', 'reduce', 'toArray', 'forEach', 'some',
      'every', 'find', 'chunks', 'windows', 'includes', 'join', 'constructor', Symbol.dispose, Symbol.toStringTag);
    drop(asyncIteratorProto, Symbol.asyncDispose);
    drop(Array, 'fromAsync');
    drop(ArrayBuffer.prototype, 'detached', 'immutable', 'sliceToImmutable', 'transfer', 'transferToFixedLength',
      'transferToImmutable');
    drop(Atomics, 'pause');
    drop(DataView.prototype, 'getFloat16', 'setFloat16');
    drop(Error, 'isError');
    drop(JSON, 'isRawJSON', 'rawJSON');
    drop(Map, 'groupBy');
    drop(Object, 'groupBy');
    drop(Map.prototype, 'getOrInsert', 'getOrInsertComputed');
    drop(WeakMap.prototype, 'getOrInsert', 'getOrInsertComputed');
    drop(Math, 'f16round', 'sumPrecise');
    drop(Promise, 'try', 'withResolvers');
    drop(RegExp, 'escape');
    drop(Set.prototype, 'difference', 'intersection', 'isDisjointFrom', 'isSubsetOf', 'isSupersetOf',
      'symmetricDifference', 'union');
    drop(Uint8Array, 'fromBase64', 'fromHex');
    drop(Uint8Array.prototype, 'setFromBase64', 'setFromHex', 'toBase64', 'toHex');
  }

  // The globals Node adds, with its attributes, and its enumerable ones
  // in its order (what `Object.keys(globalThis)` and a test runner's leak
  // check see): Node's lazy ones are accessors a program may replace.
  {
    const data = (v, enumerable) => ({ __proto__: null, value: v, writable: true, enumerable, configurable: true });
    // Node's lazy globals (its defineLazyProperties): the first read or
    // an assignment, through any receiver, makes the global a data
    // property; the accessors are named `get X` and `set X`.
    const named = (f, name) => { defineProperty(f, 'name', { __proto__: null, value: name }); return f; };
    const lazy = (v, enumerable, name) => {
      const set = named(function (value) {
        defineProperty(g, name, { __proto__: null, writable: true, value });
      }, `set ${name}`);
      // Node's: only the first read defines the property (a getter kept
      // and called after an assignment returns the first value and
      // leaves the global alone).
      let loaded = false;
      const get = named(function () {
        if (!loaded) {
          loaded = true;
          set(v);
        }
        return v;
      }, `get ${name}`);
      return { __proto__: null, get, set, enumerable, configurable: true };
    };
    // `process`, `Buffer` and `performance` stay accessors holding what
    // is assigned (performance's named as a lazy one's, Node's
    // defineReplaceableLazyAttribute).
    const replaceable = (v, enumerable, name) => {
      const d = {
        __proto__: null,
        get() { return v; },
        set(value) { v = value; },
        enumerable,
        configurable: true,
      };
      if (name !== undefined) {
        named(d.get, `get ${name}`);
        named(d.set, `set ${name}`);
      }
      return d;
    };
    // DOMException's accessors are two anonymous arrows (Node's
    // exposeGetterAndSetter); either makes it a data property.
    const exposeDOMException = (v) => {
      const expose = (value) => defineProperty(g, 'DOMException', data(value, false));
      return {
        __proto__: null,
        get: [() => { expose(v); return v; }][0],
        set: [(value) => { expose(value); }][0],
        enumerable: false,
        configurable: true,
      };
    };
    const own = (k) => g[k];
    const hidden = {
      process: replaceable(process, false), Buffer: replaceable(Buffer, false), console: data(console, false),
      DOMException: exposeDOMException(own('DOMException')),
      AbortController: lazy(AbortController, false, 'AbortController'),
      AbortSignal: lazy(AbortSignal, false, 'AbortSignal'),
      Event: data(Event, false), EventTarget: data(EventTarget, false), CustomEvent: data(CustomEvent, false),
      TextEncoder: lazy(own('TextEncoder'), false, 'TextEncoder'),
      TextDecoder: lazy(own('TextDecoder'), false, 'TextDecoder'),
    };
    const shown = {
      global: data(g, true),
      clearImmediate: data(clearImmediate, true), setImmediate: data(setImmediate, true),
      clearInterval: data(clearInterval, true), clearTimeout: data(clearTimeout, true),
      setInterval: data(setInterval, true), setTimeout: data(setTimeout, true),
      queueMicrotask: data(queueMicrotask, true), structuredClone: data(own('structuredClone'), true),
      atob: lazy(own('atob'), true, 'atob'), btoa: lazy(own('btoa'), true, 'btoa'),
      performance: replaceable(own('performance'), true, 'performance'),
    };
    for (const k of Object.keys(hidden)) defineProperty(g, k, hidden[k]);
    for (const k of Object.keys(shown)) {
      delete g[k];
      defineProperty(g, k, shown[k]);
    }
  }

  // Before the main script, which runs in async scope 1: its module, and
  // the wrapper's arguments (startMain's); `done` after it returned: it
  // has loaded, and the microtasks after it run in none. (A main that
  // threw stays in scope 1 for the uncaughtException listeners, as
  // Node's.)
  function setMain(name, done) {
    if (done) {
      executionAsyncId = 0;
      endMain();
      return undefined;
    }
    executionAsyncId = 1;
    return startMain(name);
  }
  return { dispatch, emitExit, exitCode, setMain,
           // Node's isErrorLike: an object with an own `stack` (an Error,
           // a DOMException, any object so made) is reported as itself;
           // null says so.
           rejectionError: (reason) => (typeof reason === 'object' && reason !== null && hasOwn(reason, 'stack')
             ? null : new UnhandledPromiseRejection(reason)),
           // Node's `process._fatalException`: the monitor, then the
           // handlers, in the failed callback's async scope; then none.
           emitUncaught(err, origin) {
             try {
               emit('uncaughtExceptionMonitor', err, origin);
               const handled = emit('uncaughtException', err, origin);
               // Node's: "make sure any ticks get processed by ensuring
               // that the next Immediate cycle isn't empty" (where there
               // is a loop: not under an embedder's bare call).
               if (handled && host.engaged()) setImmediate(noop);
               return handled;
             } finally {
               executionAsyncId = 0;
               const list = listAfterThrow;
               listAfterThrow = undefined;
               listDrop(list);
             }
           },
           emitRejection: (reason, promise) => emit('unhandledRejection', reason, promise),
           emitHandled(promise, id) {
             if (emit('rejectionHandled', promise)) return;
             const w = new Error('Promise rejection was handled asynchronously (rejection id: ' + id + ')');
             w.name = 'PromiseRejectionHandledWarning';
             process.emitWarning(w);
           },
           setExitCode: (code) => { process.exitCode = code; },
           // How a fatal exception is shown: Node's afterInspector, its
           // own inspectors not called and 5 levels deep (a string as it is).
           inspect: (v) => (typeof v === 'string' ? v :
             inspectValue(v, { customInspect: false, depth: Math.max(inspectDefaults.depth, 5) })) };
})
