/**
 * The source of Laneway's code inside the script realm (a `node:vm` context with string code
 * generation disabled). It is evaluated once per process; it receives a few host values (a clock
 * and the names lists) and returns the kit the host side uses (realm.ts).
 *
 * What it does, in order:
 * 1. captures the realm's intrinsics it needs before anything is patched;
 * 2. defines the run object (budget, depth, limits), the signals (uncatchable limit and
 *    forbidden-access errors) and the helpers generated code calls ($lw_key, $lw_set, …);
 * 3. replaces the array and string methods that call back or can grow without bound with versions
 *    that wait for callbacks returning Promises and check the limits;
 * 4. builds the granted globals (Date is a wrapper with no setters, JSON never calls script
 *    functions, Object/Array/Number/String/Boolean are façades, Redirect is Laneway's builder);
 * 5. freezes every intrinsic reachable from the realm's global object, and the façades.
 *
 * It is plain JavaScript in a string because it must be compiled inside the realm; it never
 * uses template literals so the string needs no escaping.
 */
export const REALM_SOURCE = String.raw`(function (host) {
'use strict';
// 1. Intrinsics ------------------------------------------------------------------------------
const OObject = Object, OArray = Array, OString = String, ONumber = Number, OBoolean = Boolean, OJSON = JSON, ODate = Date;
const OPromise = Promise, OMath = Math, OTypeError = TypeError, ORangeError = RangeError, OError = Error;
const OSet = Set, OWeakMap = WeakMap, OWeakSet = WeakSet;
const apply = Reflect.apply, construct = Reflect.construct, ownKeys = Reflect.ownKeys;
const getDesc = OObject.getOwnPropertyDescriptor, defProp = OObject.defineProperty, getProto = OObject.getPrototypeOf;
const freeze = OObject.freeze, keys = OObject.keys, isArray = OArray.isArray, hasOwn = OObject.hasOwn;
const OP = OObject.prototype, AP = OArray.prototype, SP = OString.prototype, PP = OPromise.prototype;
const A = { push: AP.push, pop: AP.pop, slice: AP.slice, join: AP.join, sort: AP.sort, concat: AP.concat, splice: AP.splice,
  unshift: AP.unshift, includes: AP.includes, toSpliced: AP.toSpliced, map: AP.map, indexOf: AP.indexOf };
const S_ = { indexOf: SP.indexOf, slice: SP.slice, repeat: SP.repeat, padStart: SP.padStart, padEnd: SP.padEnd,
  split: SP.split, concat: SP.concat, replace: SP.replace, replaceAll: SP.replaceAll, lastIndexOf: SP.lastIndexOf };
const call = (f, self, ...args) => apply(f, self, args);
const push = (a, v) => apply(A.push, a, [v]);
const then = PP.then;
const noop = () => {};
const isP = (v) => v instanceof OPromise;
const AsyncFunctionPrototype = getProto(async function () {});
const SymIterator = Symbol.iterator, SymToPrimitive = Symbol.toPrimitive;
const now = host.now;
const DEF = { ms: host.maxStringLength, ma: host.maxArrayLength, md: host.maxDepth };
const FORBID = new OSet(host.forbidden);
const HOOKS = new OSet(host.hooks);
const TICKS = 64;

// 2. Runs, signals, helpers for generated code ---------------------------------------------------
class Signal {
  constructor(code, message) { this.code = code; this.message = message; freeze(this); }
}
const S = { cur: null };
const lim = () => S.cur || DEF;
const limitString = () => { throw new Signal('LW_SCRIPT_STRING_LIMIT', 'built a string longer than ' + lim().ms + ' characters'); };
const limitArray = (what) => { throw new Signal('LW_SCRIPT_ARRAY_LIMIT', 'built ' + (what || 'an array') + ' larger than ' + lim().ma + ' items'); };
const limitDepth = () => { throw new Signal('LW_SCRIPT_DEPTH_LIMIT', 'nested values deeper than ' + lim().md); };
const forbidden = (name) => { throw new Signal('LW_SCRIPT_FORBIDDEN_ACCESS', 'the member "' + name + '" is not accessible from scripts'); };
const hook = (name) => { throw new Signal('LW_SCRIPT_FORBIDDEN_ACCESS', 'scripts cannot define "' + name + '"'); };
const isStackOverflow = (e) => e instanceof ORangeError && e.message === 'Maximum call stack size exceeded';

class Run {
  constructor(l, req, imp) {
    this.n = TICKS; this.d = 0; this.md = l.maxDepth; this.maxD = l.maxDepth;
    this.ms = l.maxStringLength; this.ma = l.maxArrayLength; this.cpu = l.cpuMs;
    this.used = 0; this.slice = now(); this.paused = false; this.dead = null; this.done = false;
    this.req = req; this.hostImp = imp; this.org = null;
  }
  // Called at a function entry when the depth passed md or every TICKS entries. When it throws,
  // the entering frame's finally never runs, so it undoes that frame's depth itself.
  slow() {
    if (this.d > this.md) this.n--; // the prologue's || skipped the tick
    if (this.done && this.d === 1) {
      // A function of a finished run (a function supplier) called from elsewhere: a fresh budget.
      this.dead = null; this.used = 0; this.slice = now(); this.paused = false; this.n = TICKS;
    }
    if (this.dead !== null) { this.d--; throw this.dead; }
    if (this.d > this.maxD) { this.d--; this.fail('LW_SCRIPT_DEPTH_LIMIT', 'nested calls deeper than ' + this.maxD); }
    if (this.n < 0) {
      this.n = TICKS;
      if (this.paused) this.q();
      if (this.used + (now() - this.slice) > this.cpu) { this.d--; this.fail('LW_SCRIPT_CPU_LIMIT', 'used more than ' + this.cpu + ' ms of CPU'); }
    }
  }
  fail(code, message) { const s = new Signal(code, message); this.kill(s); throw s; }
  kill(s) { this.dead = s; this.n = -Infinity; if (!this.done) this.md = -1; }
  // Pause / resume the CPU clock around a real await.
  p() { if (!this.paused) { this.used += now() - this.slice; this.paused = true; } }
  q() { if (this.paused) { this.paused = false; this.slice = now(); } S.cur = this; }
  // At every catch entry: limits and forbidden accesses are not catchable.
  chk(e) {
    if (e === BAIL) throw e;
    this.q();
    if (this.dead !== null) throw this.dead;
    if (e instanceof Signal) { this.kill(e); throw e; }
    if (isStackOverflow(e)) this.fail('LW_SCRIPT_DEPTH_LIMIT', 'nested calls too deep (the call stack ran out)');
  }
  imp(i) { return this.hostImp(i); }
  origin() { if (this.org === null) this.org = OString(this.req.origin()); return this.org; }
  // No clock reading: nothing counts the CPU time of a finished run (see slow() for later calls).
  finish() { this.paused = true; this.done = true; this.md = 0; this.hostImp = null; }
}

const key = (k) => {
  if (typeof k === 'number') return k;
  if (typeof k !== 'string') k = OString(k);
  if (FORBID.has(k)) forbidden(k);
  return k;
};
const pk = (k) => {
  k = key(k);
  if (HOOKS.has(k)) hook(k);
  return k;
};
const checkIndex = (o, k, v) => {
  const c = lim().ma;
  if (k === 'length') { if (!(ONumber(v) <= c)) limitArray(); return; }
  const i = typeof k === 'number' ? k : (k === '' ? -1 : ONumber(k));
  if (i >= c) limitArray();
};
const set = (o, k, v) => {
  k = key(k);
  if (typeof v === 'function' && HOOKS.has(k)) hook(k);
  if (isArray(o)) checkIndex(o, k, v);
  o[k] = v;
  return v;
};
const del = (o, k) => {
  k = key(k);
  const p = o !== null && typeof o === 'object' ? getProto(o) : undefined;
  if (p !== OP && p !== null) throw new OTypeError('delete works only on keys of plain objects');
  return delete o[k];
};
const cs = (v) => { if (typeof v === 'string' && v.length > lim().ms) limitString(); return v; };
const ca = (v) => { if (v.length > lim().ma) limitArray(); return v; };
const callable = (f, what) => { if (typeof f !== 'function') throw new OTypeError(what + ' is not a function'); };

// 3. Callback-aware iteration ---------------------------------------------------------------------
// loop(n, step, on, done): calls step(i) for i < n; on(i, value) returns true to stop; done(stopped, i)
// gives the result. Synchronous until a step returns a Promise, then continues asynchronously,
// one callback at a time (never two pending Promises, so no rejection goes unhandled).
const loop = (n, step, on, done) => {
  for (let i = 0; i < n; i++) {
    const v = step(i);
    if (isP(v)) return loopAsync(i, v, n, step, on, done);
    if (on(i, v)) return done(true, i);
  }
  return done(false, -1);
};
const loopAsync = async (i, v, n, step, on, done) => {
  const r = S.cur;
  for (;;) {
    if (isP(v)) { if (r) r.p(); v = await v; if (r) r.q(); }
    if (on(i, v)) return done(true, i);
    if (++i >= n) return done(false, -1);
    v = step(i);
  }
};
// The top level of a script is a generator function that yields only the Promises it meets (a
// waiting import or host call); drive() runs it synchronously and continues asynchronously from
// the first Promise, so a script that meets none gives its result without a Promise.
const drive = (g) => {
  const r = g.next();
  return r.done ? r.value : driveAsync(g, r.value);
};
const driveAsync = async (g, p) => {
  for (;;) {
    let v, failed = false;
    try { v = await p; } catch (e) { v = e; failed = true; }
    const r = failed ? g.throw(v) : g.next(v);
    if (r.done) return r.value;
    p = r.value;
  }
};
const topLevel = (g) => (r) => drive(g(r));

// An arrow that may wait but changes nothing (validate.ts FunctionInfo.pure) is compiled twice: a
// synchronous variant s, whose calls that could wait are made only when the callee is a built-in
// in PURE (no callback, no change to an existing object, no Promise), and the async variant a.
// The generated wrapper (generate.ts) runs s with SY.on set and, when s meets any other callee
// ($lw_bail) or reaches a host bridge (bridges bail while SY.on), runs a from the start instead:
// s has changed nothing and called no host function, so the restart cannot be observed.
// Callbacks such as (p) => p.tags.includes(t) thus cost no Promise.
const BAIL = freeze({ restart: true });
const SY = { on: false };
const bail = () => { throw BAIL; };
// Wrappers of such arrows carry WAITS, so that sort knows their comparisons may wait. (A symbol:
// scripts cannot name it; cheaper than a WeakSet.)
const WAITS = Symbol('waits');
const markWaiting = (f) => { f[WAITS] = true; return f; };
// Built-ins in PURE carry PURE (set in step 5, once they are patched, before they are frozen).
const PURE = Symbol('pure');
const pure = (f) => f != null && f[PURE] === true;
// The common callbacks run in a plain loop; only from the first Promise a callback returns does
// the rest go through loopAsync (with the same step/on/done as loop would use).
const cb3 = (cb, thisArg, x, i, a) => thisArg === undefined ? cb(x, i, a) : apply(cb, thisArg, [x, i, a]);
const arrayMethods = {
  forEach(cb, thisArg) {
    const a = this, n = a.length; callable(cb, 'forEach callback');
    for (let i = 0; i < n; i++) {
      const v = cb3(cb, thisArg, a[i], i, a);
      if (isP(v)) return loopAsync(i, v, n, (k) => cb3(cb, thisArg, a[k], k, a), () => false, () => undefined);
    }
    return undefined;
  },
  map(cb, thisArg) {
    const a = this, n = a.length, out = []; callable(cb, 'map callback');
    for (let i = 0; i < n; i++) {
      const v = cb3(cb, thisArg, a[i], i, a);
      if (isP(v)) return loopAsync(i, v, n, (k) => cb3(cb, thisArg, a[k], k, a), (k, w) => { push(out, w); return false; }, () => out);
      push(out, v);
    }
    return out;
  },
  filter(cb, thisArg) {
    const a = this, n = a.length, out = []; let el; callable(cb, 'filter callback');
    for (let i = 0; i < n; i++) {
      el = a[i];
      const v = cb3(cb, thisArg, el, i, a);
      if (isP(v)) {
        return loopAsync(i, v, n, (k) => { el = a[k]; return cb3(cb, thisArg, el, k, a); }, (k, w) => { if (w) push(out, el); return false; }, () => out);
      }
      if (v) push(out, el);
    }
    return out;
  },
  some(cb, thisArg) {
    const a = this, n = a.length; callable(cb, 'some callback');
    for (let i = 0; i < n; i++) {
      const v = cb3(cb, thisArg, a[i], i, a);
      if (isP(v)) return loopAsync(i, v, n, (k) => cb3(cb, thisArg, a[k], k, a), (k, w) => !!w, (found) => found);
      if (v) return true;
    }
    return false;
  },
  every(cb, thisArg) {
    const a = this, n = a.length; callable(cb, 'every callback');
    for (let i = 0; i < n; i++) {
      const v = cb3(cb, thisArg, a[i], i, a);
      if (isP(v)) return loopAsync(i, v, n, (k) => cb3(cb, thisArg, a[k], k, a), (k, w) => !w, (found) => !found);
      if (!v) return false;
    }
    return true;
  },
  find(cb, thisArg) {
    const a = this, n = a.length; let el; callable(cb, 'find callback');
    for (let i = 0; i < n; i++) {
      el = a[i];
      const v = cb3(cb, thisArg, el, i, a);
      if (isP(v)) return loopAsync(i, v, n, (k) => { el = a[k]; return cb3(cb, thisArg, el, k, a); }, (k, w) => !!w, (found) => found ? el : undefined);
      if (v) return el;
    }
    return undefined;
  },
  findIndex(cb, thisArg) {
    const a = this, n = a.length; callable(cb, 'findIndex callback');
    for (let i = 0; i < n; i++) {
      const v = cb3(cb, thisArg, a[i], i, a);
      if (isP(v)) return loopAsync(i, v, n, (k) => cb3(cb, thisArg, a[k], k, a), (k, w) => !!w, (found, k) => found ? k : -1);
      if (v) return i;
    }
    return -1;
  },
  findLast(cb, thisArg) {
    const a = this, n = a.length; let el; callable(cb, 'findLast callback');
    return loop(n, (j) => { el = a[n - 1 - j]; return call(cb, thisArg, el, n - 1 - j, a); }, (j, v) => !!v, (found) => found ? el : undefined);
  },
  findLastIndex(cb, thisArg) {
    const a = this, n = a.length; callable(cb, 'findLastIndex callback');
    return loop(n, (j) => call(cb, thisArg, a[n - 1 - j], n - 1 - j, a), (j, v) => !!v, (found, j) => found ? n - 1 - j : -1);
  },
  reduce(cb, ...init) {
    const a = this, n = a.length; callable(cb, 'reduce callback');
    let acc, start = 0;
    if (init.length) acc = init[0];
    else { if (n === 0) throw new OTypeError('Reduce of empty array with no initial value'); acc = a[0]; start = 1; }
    for (let j = 0; j < n - start; j++) {
      const v = cb(acc, a[j + start], j + start, a);
      if (isP(v)) return loopAsync(j, v, n - start, (k) => cb(acc, a[k + start], k + start, a), (k, w) => { acc = w; return false; }, () => acc);
      acc = v;
    }
    return acc;
  },
  reduceRight(cb, ...init) {
    const a = this, n = a.length; callable(cb, 'reduceRight callback');
    let acc, start = n - 1;
    if (init.length) acc = init[0];
    else { if (n === 0) throw new OTypeError('Reduce of empty array with no initial value'); acc = a[n - 1]; start = n - 2; }
    return loop(start + 1, (j) => call(cb, undefined, acc, a[start - j], start - j, a), (j, v) => { acc = v; return false; }, () => acc);
  },
  flatMap(cb, thisArg) {
    const a = this, out = []; const c = lim().ma; callable(cb, 'flatMap callback');
    return loop(a.length, (i) => call(cb, thisArg, a[i], i, a), (i, v) => {
      if (isArray(v)) { if (out.length + v.length > c) limitArray(); for (let k = 0; k < v.length; k++) push(out, v[k]); }
      else { if (out.length + 1 > c) limitArray(); push(out, v); }
      return false;
    }, () => out);
  },
  sort(cmp) { return sortArray(this, cmp); },
  toSorted(cmp) { return sortArray(apply(A.slice, this, []), cmp); },
  join(sep) { return joinArray(this, sep === undefined ? ',' : OString(sep), { count: 0, size: 0 }, []); },
  toString() { return joinArray(this, ',', { count: 0, size: 0 }, []); },
  toLocaleString() { return joinArray(this, ',', { count: 0, size: 0 }, []); },
  concat(...items) { return ca(apply(A.concat, this, items)); },
  push(...items) { if (this.length + items.length > lim().ma) limitArray(); return apply(A.push, this, items); },
  unshift(...items) { if (this.length + items.length > lim().ma) limitArray(); return apply(A.unshift, this, items); },
  splice(...args) { if (this.length + args.length > lim().ma) limitArray(); return apply(A.splice, this, args); },
  toSpliced(...args) { if (this.length + args.length > lim().ma) limitArray(); return apply(A.toSpliced, this, args); },
  flat(depth) {
    const d = depth === undefined ? 1 : ONumber(depth); const out = []; const l = lim(); let count = 0;
    const rec = (a, d) => {
      for (let i = 0; i < a.length; i++) {
        if (++count > l.ma) limitArray();
        const e = a[i];
        if (d >= 1 && isArray(e)) rec(e, d - 1); else push(out, e);
      }
    };
    rec(this, d);
    return out;
  },
};
const compare = (x, y) => { const xs = OString(x), ys = OString(y); return xs < ys ? -1 : xs > ys ? 1 : 0; };
const sortArray = (a, cmp) => {
  if (cmp !== undefined) callable(cmp, 'sort comparator');
  if (cmp !== undefined && (cmp[WAITS] === true || getProto(cmp) === AsyncFunctionPrototype)) return drive(sortWaiting(a, cmp));
  const fn = cmp === undefined ? compare : (x, y) => {
    const r = cmp(x, y);
    if (isP(r)) { apply(then, r, [undefined, noop]); throw new OTypeError('this sort comparator waits for a result: compare plain values'); }
    return r;
  };
  return apply(A.sort, a, [fn]);
};
// Merge sort that waits for each comparison that gives a Promise (a comparator that may wait;
// run by drive(), so it is synchronous until a comparison meets one).
const sortWaiting = function* (a, cmp) {
  const r = S.cur;
  const defined = [], undef = [];
  for (let i = 0; i < a.length; i++) push(a[i] === undefined ? undef : defined, a[i]);
  let src = defined, width = 1;
  while (width < src.length) {
    const dst = [];
    for (let lo = 0; lo < src.length; lo += 2 * width) {
      const mid = OMath.min(lo + width, src.length), hi = OMath.min(lo + 2 * width, src.length);
      let i = lo, j = mid;
      while (i < mid && j < hi) {
        let v = cmp(src[j], src[i]);
        if (isP(v)) { if (r) r.p(); v = yield v; if (r) r.q(); }
        v = ONumber(v);
        push(dst, v < 0 ? src[j++] : src[i++]);
      }
      while (i < mid) push(dst, src[i++]);
      while (j < hi) push(dst, src[j++]);
    }
    src = dst; width *= 2;
  }
  for (let i = 0; i < src.length; i++) a[i] = src[i];
  for (let i = 0; i < undef.length; i++) a[src.length + i] = undefined;
  return a;
};
const joinArray = (a, sep, st, stack) => {
  if (apply(A.includes, stack, [a])) return '';
  push(stack, a);
  const l = lim(), n = a.length, parts = [];
  for (let i = 0; i < n; i++) {
    if (++st.count > l.ma) limitArray();
    const e = a[i];
    const s = e === undefined || e === null ? '' : isArray(e) ? joinArray(e, ',', st, stack) : OString(e);
    st.size += s.length + sep.length;
    if (st.size > l.ms) limitString();
    push(parts, s);
  }
  apply(A.pop, stack, []);
  return apply(A.join, parts, [sep]);
};

// Strings: no regular expressions (string patterns only), growth checked before it happens.
const substitution = (rep, matched, pos, str) => {
  // GetSubstitution for string patterns: $$, $&, $\u0060 (before), $' (after).
  let out = '', i = 0;
  for (;;) {
    const j = apply(S_.indexOf, rep, ['$', i]);
    if (j === -1 || j === rep.length - 1) return out + apply(S_.slice, rep, [i]);
    const c = rep[j + 1];
    out += apply(S_.slice, rep, [i, j]);
    if (c === '$') out += '$';
    else if (c === '&') out += matched;
    else if (c === '\u0060') out += apply(S_.slice, str, [0, pos]);
    else if (c === "'") out += apply(S_.slice, str, [pos + matched.length]);
    else { out += '$' + c; }
    i = j + 2;
    if (out.length > lim().ms) limitString();
  }
};
const replaceString = (str, pattern, replacement, all) => {
  str = OString(str); pattern = OString(pattern);
  const positions = [];
  const step = pattern.length || 1;
  for (let i = apply(S_.indexOf, str, [pattern]); i !== -1; i = apply(S_.indexOf, str, [pattern, i + step])) {
    push(positions, i);
    if (!all || i >= str.length) break;
  }
  if (positions.length === 0) return str;
  const l = lim();
  const build = (pieces) => {
    let size = str.length - positions.length * pattern.length;
    for (let k = 0; k < pieces.length; k++) { size += pieces[k].length; if (size > l.ms) limitString(); }
    let out = '', last = 0;
    for (let k = 0; k < positions.length; k++) {
      out += apply(S_.slice, str, [last, positions[k]]) + pieces[k];
      last = positions[k] + pattern.length;
    }
    return out + apply(S_.slice, str, [last]);
  };
  const pieces = [];
  if (typeof replacement === 'function') {
    if (SY.on) bail(); // a script function: not from a synchronous variant (see the SY comment)
    return loop(positions.length, (k) => call(replacement, undefined, pattern, positions[k], str),
      (k, v) => { push(pieces, OString(v)); return false; }, () => build(pieces));
  }
  replacement = OString(replacement);
  const plain = apply(S_.indexOf, replacement, ['$']) === -1;
  for (let k = 0; k < positions.length; k++) {
    push(pieces, plain ? replacement : substitution(replacement, pattern, positions[k], str));
    if (pieces[k].length * (positions.length - k) > l.ms) limitString();
  }
  return build(pieces);
};
const noRegExp = (name) => function () {
  throw new OTypeError(name + ' is not available (regular expressions can make a request hang): use includes, indexOf, startsWith or split');
};
const stringMethods = {
  repeat(count) {
    const s = OString(this), n = ONumber(count);
    if (n > 0 && s.length * n > lim().ms) limitString();
    return apply(S_.repeat, s, [count]);
  },
  padStart(max, fill) { if (ONumber(max) > lim().ms) limitString(); return apply(S_.padStart, OString(this), [max, fill]); },
  padEnd(max, fill) { if (ONumber(max) > lim().ms) limitString(); return apply(S_.padEnd, OString(this), [max, fill]); },
  concat(...parts) { return cs(apply(S_.concat, OString(this), parts)); },
  replace(pattern, replacement) { return replaceString(this, pattern, replacement, false); },
  replaceAll(pattern, replacement) { return replaceString(this, pattern, replacement, true); },
  split(sep, limit) {
    const s = OString(this);
    const out = apply(S_.split, s, [sep === undefined ? undefined : OString(sep), limit]);
    if (out.length > lim().ma) limitArray();
    return out;
  },
  match: noRegExp('match'),
  matchAll: noRegExp('matchAll'),
  search: noRegExp('search'),
};

// 4. Granted globals --------------------------------------------------------------------------------
// Date: immutable. The time value lives in a WeakMap, so nothing reachable from a script can set it.
const DV = new OWeakMap();
const dateOf = (d) => { const v = DV.get(d); if (v === undefined) throw new OTypeError('not a Date'); return v; };
class LDate {
  constructor(...args) {
    let d;
    if (args.length === 1 && DV.has(args[0])) d = new ODate(apply(ODate.prototype.getTime, DV.get(args[0]), []));
    else d = construct(ODate, args);
    DV.set(this, d);
    freeze(this);
  }
  static now() { return ODate.now(); }
  static parse(s) { return ODate.parse(OString(s)); }
  static UTC(...a) { return apply(ODate.UTC, undefined, a); }
  [SymToPrimitive](hint) {
    const d = dateOf(this);
    return hint === 'number' ? apply(ODate.prototype.getTime, d, []) : apply(ODate.prototype.toString, d, []);
  }
  toJSON() {
    const d = dateOf(this);
    return ONumber.isFinite(apply(ODate.prototype.getTime, d, [])) ? apply(ODate.prototype.toISOString, d, []) : null;
  }
}
const DATE_READERS = ['getTime', 'valueOf', 'getFullYear', 'getMonth', 'getDate', 'getDay', 'getHours', 'getMinutes',
  'getSeconds', 'getMilliseconds', 'getUTCFullYear', 'getUTCMonth', 'getUTCDate', 'getUTCDay', 'getUTCHours',
  'getUTCMinutes', 'getUTCSeconds', 'getUTCMilliseconds', 'getTimezoneOffset', 'toISOString', 'toString',
  'toDateString', 'toTimeString', 'toUTCString', 'toLocaleString', 'toLocaleDateString', 'toLocaleTimeString'];
for (const name of DATE_READERS) {
  const orig = ODate.prototype[name];
  const method = { [name](...a) { return apply(orig, dateOf(this), a); } }[name];
  defProp(LDate.prototype, name, { value: method, writable: false, enumerable: false, configurable: false });
}

// Web-safe HTML (an HTML supplier's output) inside the realm.
const SH = new OWeakMap();
class SafeHtml {
  constructor(html) { this.html = html; SH.set(this, html); freeze(this); }
  toString() { return this.html; }
  toJSON() { return this.html; }
}

// Redirect builder (REFERENCE 2.5). State in a WeakMap; every method returns the builder.
const RS = new OWeakMap();
const st = (b) => { const s = RS.get(b); if (s === undefined) throw new OTypeError('not a Redirect'); return s; };
const segment = (x) => encodeURIComponent(OString(x));
const slash = (p) => p[p.length - 1] === '/' ? p : p + '/';
const locationOf = (s) => {
  let q = '';
  for (let i = 0; i < s.query.length; i++) q += (i ? '&' : '?') + encodeURIComponent(s.query[i][0]) + '=' + encodeURIComponent(s.query[i][1]);
  return s.path + q + (s.hash ? '#' + encodeURIComponent(s.hash) : '');
};
const currentDir = () => {
  const p = S.cur ? S.cur.req.path : '/';
  const i = apply(S_.lastIndexOf, p, ['/']);
  return i < 0 ? '/' : apply(S_.slice, p, [0, i + 1]);
};
const newState = () => ({ path: '/', query: [], hash: '', messages: [], failed: false, invalid: undefined, form: undefined });
const message = (b, type, m) => { push(st(b).messages, freeze({ type: type, value: OString(m) })); return b; };
class RedirectBuilder {
  constructor(state) { RS.set(this, state); freeze(this); }
  home() { st(this).path = '/'; return this; }
  dir(x) { const s = st(this); s.path = slash(s.path) + segment(x) + '/'; return this; }
  name(x) { const s = st(this); s.path = slash(s.path) + segment(x); return this; }
  index() { st(this).path = currentDir(); return this; }
  params(o) {
    const s = st(this);
    if (o === null || o === undefined) return this;
    const ks = keys(o);
    for (let i = 0; i < ks.length; i++) {
      const v = o[ks[i]];
      if (v === null || v === undefined) continue;
      if (isArray(v)) { for (let j = 0; j < v.length; j++) if (v[j] !== null && v[j] !== undefined) push(s.query, [OString(ks[i]), OString(v[j])]); }
      else push(s.query, [OString(ks[i]), OString(v)]);
    }
    return this;
  }
  hash(h) { st(this).hash = h === null || h === undefined ? '' : OString(h); return this; }
  success(m) { return message(this, 'success', m); }
  info(m) { return message(this, 'info', m); }
  warning(m) { return message(this, 'warning', m); }
  error(m) { return message(this, 'error', m); }
  invalid(x) { const s = st(this); s.failed = true; s.invalid = x; return this; }
  form(x) { st(this).form = x; return this; }
  get url() {
    const s = st(this), loc = locationOf(s);
    const origin = S.cur ? S.cur.origin() : '';
    const q = apply(S_.indexOf, loc, ['?']), h = apply(S_.indexOf, loc, ['#']);
    const end = q >= 0 ? q : h >= 0 ? h : loc.length;
    return freeze({ href: origin + loc, origin: origin, pathname: apply(S_.slice, loc, [0, end]),
      search: q >= 0 ? apply(S_.slice, loc, [q, h >= 0 ? h : loc.length]) : '', hash: h >= 0 ? apply(S_.slice, loc, [h]) : '' });
  }
  get path() { return locationOf(st(this)); }
  toString() { return locationOf(st(this)); }
  toJSON() {
    const s = st(this), messages = [];
    for (let i = 0; i < s.messages.length; i++) push(messages, { type: s.messages[i].type, value: s.messages[i].value });
    return { path: locationOf(s), messages: messages };
  }
}
const start = () => new RedirectBuilder(newState());
const Redirect = {
  home: () => start(),
  dir: (x) => start().dir(x),
  name: (x) => start().name(x),
  index: () => start().index(),
  params: (o) => start().params(o),
  hash: (h) => start().hash(h),
  success: (m) => start().success(m),
  info: (m) => start().info(m),
  warning: (m) => start().warning(m),
  error: (m) => start().error(m),
};

// JSON: parse without revivers; stringify walks data properties only (never calls script
// functions such as toJSON), with the limits, and knows Laneway's own types.
const jsonValue = (v) => {
  if (v !== null && typeof v === 'object') {
    if (DV.has(v)) return call(LDate.prototype.toJSON, v);
    if (SH.has(v)) return SH.get(v);
    if (RS.has(v)) return call(RedirectBuilder.prototype.toJSON, v);
  }
  return v;
};
const stringify = (value, replacer, space) => {
  if (typeof replacer === 'function') throw new OTypeError('JSON.stringify: replacer functions are not supported; pass an array of keys or null');
  let allow = null;
  if (isArray(replacer)) { allow = []; for (let i = 0; i < replacer.length; i++) push(allow, OString(replacer[i])); }
  let gap = '';
  if (typeof space === 'number') gap = apply(S_.repeat, ' ', [OMath.max(0, OMath.min(10, OMath.floor(space)))]);
  else if (typeof space === 'string') gap = apply(S_.slice, space, [0, 10]);
  const l = lim(), stack = []; let count = 0, size = 0;
  const add = (s) => { size += s.length; if (size > l.ms) limitString(); return s; };
  const str = (v, indent) => {
    if (++count > l.ma) limitArray('a JSON value');
    v = jsonValue(v);
    switch (typeof v) {
      case 'string': return add(OJSON.stringify(v));
      case 'number': return add(ONumber.isFinite(v) ? OString(v) : 'null');
      case 'boolean': return add(v ? 'true' : 'false');
      case 'bigint': throw new OTypeError('Do not know how to serialize a BigInt');
      case 'undefined': case 'function': case 'symbol': return undefined;
    }
    if (v === null) return add('null');
    if (apply(A.includes, stack, [v])) throw new OTypeError('Converting circular structure to JSON');
    if (stack.length >= l.md) limitDepth();
    push(stack, v);
    const inner = indent + gap, parts = [];
    if (isArray(v)) {
      for (let i = 0; i < v.length; i++) { const s = str(v[i], inner); push(parts, s === undefined ? 'null' : s); }
    } else {
      const ks = allow || keys(v);
      for (let i = 0; i < ks.length; i++) {
        const d = getDesc(v, ks[i]);
        if (!d || !('value' in d) || !d.enumerable) continue;
        const s = str(d.value, inner);
        if (s !== undefined) push(parts, add(OJSON.stringify(ks[i])) + (gap ? ': ' : ':') + s);
      }
    }
    apply(A.pop, stack, []);
    const open = isArray(v) ? '[' : '{', close = isArray(v) ? ']' : '}';
    if (parts.length === 0) return open + close;
    if (!gap) return open + apply(A.join, parts, [',']) + close;
    return open + '\n' + inner + apply(A.join, parts, [',\n' + inner]) + '\n' + indent + close;
  };
  return str(value, '');
};
const JSONFacade = {
  parse(text, reviver) {
    if (reviver !== undefined) throw new OTypeError('JSON.parse: revivers are not supported; transform the result with map');
    return OJSON.parse(cs(OString(text)));
  },
  stringify: stringify,
};

const assignInto = (t, k, v) => { if (FORBID.has(k)) return; set(t, k, v); };
const ObjectFacade = {
  keys: (o) => keys(o),
  values: (o) => OObject.values(o),
  entries: (o) => OObject.entries(o),
  assign(t, ...sources) {
    for (let i = 0; i < sources.length; i++) {
      const s = sources[i];
      if (s === null || s === undefined) continue;
      const ks = keys(s);
      for (let j = 0; j < ks.length; j++) assignInto(t, ks[j], s[ks[j]]);
    }
    return t;
  },
  fromEntries(entries) {
    const o = {};
    if (!isArray(entries)) throw new OTypeError('Object.fromEntries expects an array of [key, value] pairs');
    for (let i = 0; i < entries.length; i++) assignInto(o, OString(entries[i][0]), entries[i][1]);
    return o;
  },
  freeze: (o) => freeze(o),
  isFrozen: (o) => OObject.isFrozen(o),
  hasOwn: (o, k) => hasOwn(o, k),
};
const ArrayFacade = {
  isArray: (v) => isArray(v),
  of(...items) { return ca(items); },
  from(src, mapFn) {
    if (src === null || src === undefined) throw new OTypeError('Array.from needs an array, a string or {length: n}');
    let items = null, n;
    if (typeof src === 'string' || isArray(src) || typeof src[SymIterator] === 'function') {
      items = ca(apply(OArray.from, OArray, [src]));
      n = items.length;
    } else {
      n = ONumber(src.length) || 0;
      if (n > lim().ma) limitArray();
    }
    if (mapFn === undefined) {
      if (items !== null) return items;
      items = [];
      for (let i = 0; i < n; i++) push(items, src[i]);
      return items;
    }
    callable(mapFn, 'Array.from callback');
    // One pass; the callback gets (value, index), as in JavaScript.
    const from = items !== null ? items : src, out = [];
    for (let i = 0; i < n; i++) {
      const v = mapFn(from[i], i);
      if (isP(v)) return loopAsync(i, v, n, (k) => mapFn(from[k], k), (k, w) => { push(out, w); return false; }, () => out);
      push(out, v);
    }
    return out;
  },
};
const statics = (f, names, from) => {
  for (const n of names) defProp(f, n, { value: from[n], enumerable: true });
  return freeze(f);
};
const NumberFacade = statics((...a) => a.length ? ONumber(a[0]) : 0,
  ['isInteger', 'isFinite', 'isNaN', 'isSafeInteger', 'parseFloat', 'parseInt', 'MAX_SAFE_INTEGER', 'MIN_SAFE_INTEGER',
    'EPSILON', 'MAX_VALUE', 'MIN_VALUE', 'POSITIVE_INFINITY', 'NEGATIVE_INFINITY', 'NaN'], ONumber);
const StringFacade = statics((...a) => a.length ? OString(a[0]) : '', ['fromCharCode', 'fromCodePoint'], OString);
const BooleanFacade = freeze((v) => !!v);

// Bridges to host functions (membrane, realm.ts). invoke(thisArg, args, isNew) is the host side.
// While a synchronous variant runs, a bridge restarts it instead (see the SY comment): no host call from there.
const bridge = (invoke) => function (...args) { if (SY.on) bail(); return invoke(this, args, new.target !== undefined); };

// 5. Patch and freeze ---------------------------------------------------------------------------------
for (const n of keys(arrayMethods)) defProp(AP, n, { value: arrayMethods[n], writable: true, enumerable: false, configurable: true });
for (const n of keys(stringMethods)) defProp(SP, n, { value: stringMethods[n], writable: true, enumerable: false, configurable: true });
// Built-ins a synchronous variant may call: they call no script function (replace/replaceAll bail
// before calling a replacement function), change no existing object and return no Promise.
// Conversions they make of objects reach only realm built-ins, Laneway's own types, or bridges,
// which bail.
const pureNames = (proto, names) => {
  for (let i = 0; i < names.length; i++) {
    const f = proto[names[i]];
    if (typeof f === 'function' && !hasOwn(f, PURE)) defProp(f, PURE, { value: true });
  }
};
pureNames(SP, ['at', 'charAt', 'charCodeAt', 'codePointAt', 'concat', 'endsWith', 'includes', 'indexOf', 'isWellFormed',
  'lastIndexOf', 'localeCompare', 'normalize', 'padEnd', 'padStart', 'repeat', 'replace', 'replaceAll', 'slice', 'split',
  'startsWith', 'substring', 'substr', 'toLocaleLowerCase', 'toLocaleUpperCase', 'toLowerCase', 'toString',
  'toUpperCase', 'toWellFormed', 'trim', 'trimEnd', 'trimStart', 'valueOf']);
pureNames(AP, ['at', 'concat', 'flat', 'includes', 'indexOf', 'join', 'lastIndexOf', 'slice', 'toLocaleString',
  'toReversed', 'toSpliced', 'toString', 'with']);
pureNames(ONumber.prototype, ['toExponential', 'toFixed', 'toLocaleString', 'toPrecision', 'toString', 'valueOf']);
pureNames(OBoolean.prototype, ['toString', 'valueOf']);
pureNames(OP, ['hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', 'toString', 'valueOf']);
pureNames(LDate.prototype, DATE_READERS);
pureNames(SafeHtml.prototype, ['toString']);
const G = {
  Redirect: freeze(Redirect), Math: OMath, JSON: freeze(JSONFacade), Date: LDate, Number: NumberFacade,
  String: StringFacade, Boolean: BooleanFacade, Array: freeze(ArrayFacade), Object: freeze(ObjectFacade),
  parseInt: parseInt, parseFloat: parseFloat, isNaN: isNaN, isFinite: isFinite,
  encodeURIComponent: encodeURIComponent, decodeURIComponent: decodeURIComponent, encodeURI: encodeURI, decodeURI: decodeURI,
};
const harden = (root) => {
  const todo = [root], seen = new OSet();
  while (todo.length) {
    const o = apply(A.pop, todo, []);
    if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) continue;
    seen.add(o);
    freeze(o);
    push(todo, getProto(o));
    const ks = ownKeys(o);
    for (let i = 0; i < ks.length; i++) {
      const d = getDesc(o, ks[i]);
      if ('value' in d) push(todo, d.value); else { push(todo, d.get); push(todo, d.set); }
    }
  }
};
const globalNames = ownKeys(globalThis);
for (let i = 0; i < globalNames.length; i++) {
  const d = getDesc(globalThis, globalNames[i]);
  if (d && 'value' in d && d.value !== globalThis) harden(d.value);
}
harden(G); harden(Signal); harden(Run); harden(LDate); harden(SafeHtml); harden(RedirectBuilder);
harden(AsyncFunctionPrototype); harden(getProto(function* () {})); harden(getProto(async function* () {}));
harden(getProto([][SymIterator]())); harden(getProto(''[SymIterator]()));

const K = freeze({ $lw_A: topLevel, $lw_M: markWaiting, $lw_Y: SY, $lw_B: BAIL, $lw_q: pure, $lw_bail: bail, $lw_P: OPromise, $lw_key: key, $lw_set: set, $lw_del: del, $lw_pk: pk, $lw_cs: cs, $lw_ca: ca,
  $lw_S: S, $lw_apply: apply });

// The host's view. Nothing here is ever handed to a script.
return freeze({
  G: G, K: K, OP: OP, AP: AP,
  newRun: (l, path, origin, imp) => new Run(l, { path: path, origin: origin }, imp),
  newObject: () => ({}),
  newArray: () => [],
  newDate: (t) => new LDate(t),
  dateValue: (o) => DV.has(o) ? apply(ODate.prototype.getTime, DV.get(o), []) : undefined,
  newSafeHtml: (h) => new SafeHtml(h),
  safeHtmlValue: (o) => SH.get(o),
  newRedirect: (path, query, hash, messages, failed) => {
    const s = newState();
    s.path = path; s.hash = hash; s.failed = failed;
    for (let i = 0; i < query.length; i++) push(s.query, [OString(query[i][0]), OString(query[i][1])]);
    for (let i = 0; i < messages.length; i++) push(s.messages, freeze({ type: OString(messages[i].type), value: OString(messages[i].value) }));
    return new RedirectBuilder(s);
  },
  redirectState: (o) => {
    const s = RS.get(o);
    if (s === undefined) return undefined;
    const query = [], messages = [];
    for (let i = 0; i < s.query.length; i++) push(query, [s.query[i][0], s.query[i][1]]);
    for (let i = 0; i < s.messages.length; i++) push(messages, { type: s.messages[i].type, value: s.messages[i].value });
    return { path: s.path, query: query, hash: s.hash, messages: messages, failed: s.failed, invalid: s.invalid, form: s.form };
  },
  signalInfo: (e) => e instanceof Signal ? { code: e.code, message: e.message } : undefined,
  errorInfo: (e) => e instanceof OError ? { name: OString(e.name), message: OString(e.message), stack: OString(e.stack),
    stackOverflow: isStackOverflow(e) } : undefined,
  newError: (name, message) => {
    const E = name === 'TypeError' ? OTypeError : name === 'RangeError' ? ORangeError : OError;
    const e = new E(message);
    if (E === OError && name !== 'Error') defProp(e, 'name', { value: name, writable: true, configurable: true });
    return e;
  },
  isPromise: isP,
  fromHost: (subscribe) => { const p = new OPromise(subscribe); apply(then, p, [undefined, noop]); return p; },
  subscribe: (p, onValue, onError) => { apply(then, p, [onValue, onError]); },
  bridge: bridge,
  freeze: freeze,
});
})`;
