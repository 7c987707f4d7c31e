// 3. Callback-aware iteration ---------------------------------------------------------------------
// loop(n, step, on, done): calls step(i) for i < n; on(i, value) returns true to stop; done(stopped, i)
// gives the result. Synchronous until a step returns a Promise, then continues asynchronously,
// one callback at a time (never two pending Promises, so no rejection goes unhandled).
const loop = (n, step, on, done) => {
  for (let i = 0; i < n; i++) {
    heavy(16);
    const v = step(i);
    if (isP(v)) return loopAsync(i, v, n, step, on, done);
    if (on(i, v)) return done(true, i);
  }
  return done(false, -1);
};
const loopAsync = async (i, v, n, step, on, done) => {
  const r = S.cur;
  for (;;) {
    if (isP(v)) v = r ? r.q(await r.p(v)) : await v;
    if (on(i, v)) return noThen(done(true, i));
    if (++i >= n) return noThen(done(false, -1));
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
    if (r.done) return noThen(r.value);
    p = r.value;
  }
};
const topLevel = (g) => (r) => drive(g(r));
// What an async function returns is adopted by JavaScript when it has a then method: never one of
// a script's values (scripts cannot define then; this holds whatever reached the value).
const noThen = (v) => {
  if (v !== null && (typeof v === 'object' || typeof v === 'function') && !isP(v) && typeof v.then === 'function') hook('then');
  return v;
};

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
const cb3 = (cb, thisArg, x, i, a) => { heavy(16); return thisArg === undefined ? cb(x, i, a) : apply(cb, thisArg, [x, i, a]); };
const arrayMethods = {
  forEach(cb, thisArg) {
    const a = this, n = a.length; callable(cb, 'forEach callback');
    for (let i = 0; i < n; i++) {
      const v = cb3(cb, thisArg, a[i], i, a);
      if (isP(v)) return loopAsync(i, v, n, (k) => cb3(cb, thisArg, a[k], k, a), () => false, () => undefined);
    }
    heavy(n);
    return undefined;
  },
  map(cb, thisArg) {
    const a = this, n = a.length, out = []; callable(cb, 'map callback');
    for (let i = 0; i < n; i++) {
      const v = cb3(cb, thisArg, a[i], i, a);
      if (isP(v)) return loopAsync(i, v, n, (k) => cb3(cb, thisArg, a[k], k, a), (k, w) => { push(out, w); return false; }, () => made(out));
      push(out, v);
    }
    return made(out);
  },
  filter(cb, thisArg) {
    const a = this, n = a.length, out = []; let el; callable(cb, 'filter callback');
    for (let i = 0; i < n; i++) {
      el = a[i];
      const v = cb3(cb, thisArg, el, i, a);
      if (isP(v)) {
        return loopAsync(i, v, n, (k) => { el = a[k]; return cb3(cb, thisArg, el, k, a); }, (k, w) => { if (w) push(out, el); return false; }, () => made(out));
      }
      if (v) push(out, el);
    }
    heavy(n);
    return made(out);
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
    }, () => made(out));
  },
  sort(cmp) { return sortArray(this, cmp); },
  toSorted(cmp) { return sortArray(made(apply(A.slice, this, [])), cmp); },
  join(sep) { return madeS(joinArray(this, sep === undefined ? ',' : OString(sep), { count: 0, size: 0 }, [])); },
  toString() { return madeS(joinArray(this, ',', { count: 0, size: 0 }, [])); },
  toLocaleString() { return madeS(joinArray(this, ',', { count: 0, size: 0 }, [])); },
  concat(...items) {
    let n = this.length;
    for (let i = 0; i < items.length; i++) n += isArray(items[i]) ? items[i].length : 1;
    if (n > lim().ma) limitArray();
    return made(apply(A.concat, this, items));
  },
  slice(start, end) { return made(apply(A.slice, this, [start, end])); },
  toReversed() { return made(apply(A.toReversed, this, [])); },
  with(i, v) { return made(apply(A.with, this, [i, v])); },
  reverse() { heavy(this.length); return apply(A.reverse, this, []); },
  indexOf(v, from) { const r = apply(A.indexOf, this, arguments); heavy(this.length); return r; },
  lastIndexOf(v, from) { const r = apply(A.lastIndexOf, this, arguments); heavy(this.length); return r; },
  includes(v, from) { const r = apply(A.includes, this, arguments); heavy(this.length); return r; },
  fill(v, start, end) { heavy(this.length); return apply(A.fill, this, arguments); },
  push(...items) { if (this.length + items.length > lim().ma) limitArray(); return apply(A.push, this, items); },
  unshift(...items) { if (this.length + items.length > lim().ma) limitArray(); return apply(A.unshift, this, items); },
  splice(...args) { if (this.length + args.length > lim().ma) limitArray(); return apply(A.splice, this, args); },
  toSpliced(...args) { if (this.length + args.length > lim().ma) limitArray(); return made(apply(A.toSpliced, this, args)); },
  flat(depth) {
    const d = depth === undefined ? 1 : ONumber(depth); const out = []; const l = lim(); let count = 0;
    let level = 0;
    const rec = (a, d) => {
      if (++level > l.md) limitDepth();
      for (let i = 0; i < a.length; i++) {
        if (++count > l.ma) limitArray();
        const e = a[i];
        if (d >= 1 && isArray(e)) rec(e, d - 1); else push(out, e);
      }
      level--;
    };
    rec(this, d);
    return made(out);
  },
};
const sortArray = (a, cmp) => {
  if (cmp !== undefined) callable(cmp, 'sort comparator');
  if (cmp !== undefined && (cmp[WAITS] === true || getProto(cmp) === AsyncFunctionPrototype)) return drive(sortWaiting(a, cmp));
  // Without a comparator, the native order (undefined last, then by string), as in JavaScript.
  const args = cmp === undefined ? [] : [(x, y) => {
    const r = cmp(x, y);
    if (isP(r)) { apply(then, r, [undefined, noop]); throw new OTypeError('this sort comparator waits for a result: compare plain values'); }
    return r;
  }];
  apply(A.sort, a, args);
  heavy(a.length * 8);
  return a;
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
        if (isP(v)) v = r ? r.q(yield r.p(v)) : yield v;
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
  if (stack.length >= lim().md) limitDepth();
  push(stack, a);
  const l = lim(), n = a.length, parts = [];
  heavy(n + 1);
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
// Occurrences of pattern as replaceAll finds them (non-overlapping), counting no further than max.
const occurrences = (str, pattern, max) => {
  if (pattern.length === 0) return str.length + 1;
  let n = 0;
  for (let i = apply(S_.indexOf, str, [pattern]); i !== -1 && n <= max; i = apply(S_.indexOf, str, [pattern, i + pattern.length])) n++;
  return n;
};
const replaceString = (str, pattern, replacement, all) => {
  str = OString(str); pattern = OString(pattern);
  const l = lim();
  if (typeof replacement !== 'function') {
    replacement = OString(replacement);
    const dollar = apply(S_.indexOf, replacement, ['$']) !== -1;
    // Fast path: the native replacement (linear; string patterns never backtrack), once the result
    // length is known to fit. With $\u0060 or $' in the replacement the length depends on the
    // positions: the piecewise path below checks as it builds.
    if (!dollar || (apply(S_.indexOf, replacement, ['$\u0060']) === -1 && apply(S_.indexOf, replacement, ["$'"]) === -1)) {
      const piece = dollar ? substitution(replacement, pattern, 0, '') : replacement;
      if (piece.length > pattern.length) {
        const n = all ? occurrences(str, pattern, l.ms) : (apply(S_.indexOf, str, [pattern]) === -1 ? 0 : 1);
        if (str.length + n * (piece.length - pattern.length) > l.ms) limitString();
      }
      return madeS(apply(all ? S_.replaceAll : S_.replace, str, [pattern, replacement]));
    }
  }
  const positions = [];
  const step = pattern.length || 1;
  for (let i = apply(S_.indexOf, str, [pattern]); i !== -1; i = apply(S_.indexOf, str, [pattern, i + step])) {
    push(positions, i);
    if (!all || i >= str.length) break;
  }
  heavy(str.length);
  if (positions.length === 0) return str;
  const build = (pieces) => {
    let size = str.length - positions.length * pattern.length;
    for (let k = 0; k < pieces.length; k++) { size += pieces[k].length; if (size > l.ms) limitString(); }
    let out = '', last = 0;
    for (let k = 0; k < positions.length; k++) {
      out += apply(S_.slice, str, [last, positions[k]]) + pieces[k];
      last = positions[k] + pattern.length;
    }
    return madeS(out + apply(S_.slice, str, [last]));
  };
  const pieces = [];
  if (typeof replacement === 'function') {
    if (SY.on) bail(); // a script function: not from a synchronous variant (see the SY comment)
    return loop(positions.length, (k) => call(replacement, undefined, pattern, positions[k], str),
      (k, v) => { push(pieces, OString(v)); return false; }, () => build(pieces));
  }
  let size = str.length;
  for (let k = 0; k < positions.length; k++) {
    push(pieces, substitution(replacement, pattern, positions[k], str));
    size += pieces[k].length - pattern.length;
    if (size > l.ms) limitString();
    if ((k & 1023) === 1023) heavy(4096);
  }
  return build(pieces);
};
const noRegExp = (name) => function () {
  throw new OTypeError(name + ' is not available (regular expressions can make a request hang): use includes, indexOf, startsWith or split');
};
// Methods that only read the string: the clock is read after a long one.
/** @param {string} name */
const reading = (name) => {
  const f = SP[name];
  return { [name]: function () { const r = apply(f, this, arguments); heavy(OString(this).length); return r; } }[name];
};
// Methods that make a string at most grow times as long as the input.
/** @param {string} name @param {number} grow */
const making = (name, grow) => {
  const f = SP[name];
  return { [name]: function () {
    const str = OString(this), l = lim();
    if (str.length * grow > l.ms) {
      // The result could pass a limit: reserve the worst case from the allowance while it is made.
      mem(str.length * grow * 2);
      const r = apply(f, str, arguments);
      mem(-str.length * grow * 2);
      return madeS(r);
    }
    return madeS(apply(f, str, arguments));
  } }[name];
};
const MARK_RUN = 256;
const LONG_MARK_RUN = /\p{M}{257}/u;
const normalizeMade = making('normalize', 18);
// The HTML methods of old browsers (s.bold(), s.link(url), …): not escaped, so never what a script
// means; views make HTML.
const legacy = (name) => function () { throw new OTypeError(name + ' is not available: build HTML in a view'); };
const stringMethods = {
  repeat(count) {
    const s = OString(this), n = ONumber(count);
    if (n > 0 && s.length * n > lim().ms) limitString();
    return madeS(apply(S_.repeat, s, [count]));
  },
  padStart(max, fill) { if (ONumber(max) > lim().ms) limitString(); return madeS(apply(S_.padStart, OString(this), [max, fill])); },
  padEnd(max, fill) { if (ONumber(max) > lim().ms) limitString(); return madeS(apply(S_.padEnd, OString(this), [max, fill])); },
  concat(...parts) { return madeS(cs(apply(S_.concat, OString(this), parts))); },
  replace(pattern, replacement) { return replaceString(this, pattern, replacement, false); },
  replaceAll(pattern, replacement) { return replaceString(this, pattern, replacement, true); },
  split(sep, limit) {
    const s = OString(this), l = lim();
    if (sep !== undefined) {
      sep = OString(sep);
      const max = limit === undefined ? l.ma : OMath.min(l.ma, ONumber(limit) >>> 0);
      if ((sep.length === 0 ? s.length : occurrences(s, sep, l.ma) + 1) > max && max === l.ma) limitArray();
    }
    const out = apply(S_.split, s, [sep, limit]);
    if (out.length > l.ma) limitArray();
    mem(s.length * 2);
    return made(out);
  },
  normalize(form) {
    // Canonical reordering takes time quadratic in the length of a run of combining marks: no text
    // has hundreds in a row, so a longer run is refused before the work.
    const str = OString(this);
    if (str.length > MARK_RUN && LONG_MARK_RUN.test(str)) throw new ORangeError('normalize: the string has more than ' + MARK_RUN + ' combining marks in a row');
    return normalizeMade.call(str, form);
  },
  anchor: legacy('anchor'), big: legacy('big'), blink: legacy('blink'), bold: legacy('bold'), fixed: legacy('fixed'),
  fontcolor: legacy('fontcolor'), fontsize: legacy('fontsize'), italics: legacy('italics'), link: legacy('link'),
  small: legacy('small'), strike: legacy('strike'), sub: legacy('sub'), sup: legacy('sup'),
  toUpperCase: making('toUpperCase', 3),
  toLowerCase: making('toLowerCase', 3),
  toLocaleUpperCase: making('toLocaleUpperCase', 3),
  toLocaleLowerCase: making('toLocaleLowerCase', 3),
  toWellFormed: making('toWellFormed', 1),
  trim: reading('trim'),
  trimStart: reading('trimStart'),
  trimEnd: reading('trimEnd'),
  indexOf: reading('indexOf'),
  lastIndexOf: reading('lastIndexOf'),
  includes: reading('includes'),
  startsWith: reading('startsWith'),
  endsWith: reading('endsWith'),
  localeCompare: reading('localeCompare'),
  isWellFormed: reading('isWellFormed'),
  match: noRegExp('match'),
  matchAll: noRegExp('matchAll'),
  search: noRegExp('search'),
};
// encodeURIComponent and encodeURI: the exact output length is known before encoding (3 characters
// per UTF-8 byte of what is escaped), so a result past the limit is refused before it is made.
const encodedLength = (str, keep) => {
  let n = 0;
  for (let i = 0; i < str.length; i++) {
    const c = apply(S_.charCodeAt, str, [i]);
    if (c < 0x80) n += keep(c) ? 1 : 3;
    else if (c < 0x800) n += 6;
    else if (c >= 0xd800 && c <= 0xdbff) { n += 12; i++; }
    else n += 9;
  }
  return n;
};
const unreserved = (c) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 95 || c === 46 || c === 33 || c === 126 || c === 42 || c === 39 || c === 40 || c === 41;
const uriKept = (c) => unreserved(c) || c === 59 || c === 47 || c === 63 || c === 58 || c === 64 || c === 38 || c === 61 || c === 43 || c === 36 || c === 44 || c === 35;
const named2 = (name, f) => { defProp(f, 'name', { value: name }); return f; };
const encoder = (f, keep) => named2(f.name, (v) => {
  const str = OString(v);
  if (str.length * 3 > lim().ms && encodedLength(str, keep) > lim().ms) limitString();
  return madeS(f(str));
});
const encodeURIComponentG = encoder(encodeURIComponent, unreserved);
const encodeURIG = encoder(encodeURI, uriKept);
