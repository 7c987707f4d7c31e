// 4. Granted globals --------------------------------------------------------------------------------
// Date: immutable. The time value lives in a WeakMap, so nothing reachable from a script can set it.
const DV = slotMap();
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
const SH = slotMap();
class SafeHtml {
  constructor(html) { this.html = html; SH.set(this, html); freeze(this); }
  toString() { return this.html; }
  toJSON() { return this.html; }
}

// Redirect builder (docs/scripting.md "Redirect builder"). State in a WeakMap; every method returns the builder.
const RS = slotMap();
const st = (b) => { const s = RS.get(b); if (s === undefined) throw new OTypeError('not a Redirect'); return s; };
// Text encodeURIComponent leaves as it is, kept without the call (a runtime call costing about
// 0.4 µs in this realm, against a few nanoseconds for the test).
const UNRESERVED = /^[A-Za-z0-9\-_.!~*'()]*$/;
const reTest = RegExp.prototype.test;
const encodePart = (v) => apply(reTest, UNRESERVED, [v]) ? v : encodeURIComponent(v);
const segment = (x, what) => {
  const v = x === null || x === undefined ? '' : OString(x);
  if (v === '') throw new OTypeError('Redirect.' + what + '() needs a non-empty path segment (it would build an empty one, "//")');
  return encodePart(v);
};
const slash = (p) => p[p.length - 1] === '/' ? p : p + '/';
const locationOf = (s) => {
  let q = '';
  for (let i = 0; i < s.query.length; i++) q += (i ? '&' : '?') + encodePart(s.query[i][0]) + '=' + encodePart(s.query[i][1]);
  return s.path + q + (s.hash ? '#' + encodePart(s.hash) : '');
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
  dir(x) { const s = st(this); s.path = slash(s.path) + segment(x, 'dir') + '/'; return this; }
  name(x) { const s = st(this); s.path = slash(s.path) + segment(x, 'name'); return this; }
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
  /** @type {string[] | null} */
  let allow = null;
  if (isArray(replacer)) {
    // As JavaScript: strings and numbers only, each once, in order.
    allow = [];
    for (let i = 0; i < replacer.length; i++) {
      const k = replacer[i];
      if (typeof k !== 'string' && typeof k !== 'number') continue;
      const name = OString(k);
      if (!apply(A.includes, allow, [name])) push(allow, name);
      heavy(allow.length);
    }
  }
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
      heavy(ks.length);
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
  const out = str(value, '');
  if (out !== undefined) { mem(out.length * 2); heavy(count); }
  return out;
};
// Values in a JSON text (an upper bound: commas and openings outside strings, plus one), counting
// no further than max.
const jsonValues = (text, max) => {
  let n = 1, inString = false;
  for (let i = 0; i < text.length && n <= max; i++) {
    const c = apply(S_.charCodeAt, text, [i]);
    if (inString) { if (c === 92) i++; else if (c === 34) inString = false; }
    else if (c === 34) inString = true;
    else if (c === 44 || c === 91 || c === 123) n++;
  }
  return n;
};
const JSONFacade = {
  parse(text, reviver) {
    if (reviver !== undefined) throw new OTypeError('JSON.parse: revivers are not supported; transform the result with map');
    text = cs(OString(text));
    // At most one value per character; count them (outside strings) before parsing when that could pass the limit.
    if (text.length > lim().ma && jsonValues(text, lim().ma) > lim().ma) limitArray('a parsed JSON value');
    mem(text.length * 6);
    const v = OJSON.parse(text);
    heavy(text.length);
    return v;
  },
  stringify: stringify,
};

// A string as an object has one key per character: past the array limit, refused before the work.
const indexable = (o) => { if (typeof o === 'string' && o.length > lim().ma) limitArray('the keys of a string'); return o; };
const objectSpread = (o) => indexable(o);
const assignInto = (t, k, v) => { if (FORBID.has(k)) return; set(t, k, v); };
const ObjectFacade = {
  keys: (o) => ca(keys(indexable(o))),
  values: (o) => ca(OObject.values(indexable(o))),
  entries: (o) => ca(OObject.entries(indexable(o))),
  assign(t, ...sources) {
    for (let i = 0; i < sources.length; i++) {
      const s = indexable(sources[i]);
      if (s === null || s === undefined) continue;
      const ks = keys(s);
      for (let j = 0; j < ks.length; j++) assignInto(t, ks[j], s[ks[j]]);
      heavy(ks.length);
    }
    return t;
  },
  fromEntries(entries) {
    const o = {};
    if (!isArray(entries)) throw new OTypeError('Object.fromEntries expects an array of [key, value] pairs');
    for (let i = 0; i < entries.length; i++) assignInto(o, OString(entries[i][0]), entries[i][1]);
    heavy(entries.length);
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
    /** @type {unknown[] | null} */
    let items = null, n;
    if (typeof src === 'string' || isArray(src) || typeof src[SymIterator] === 'function') {
      items = ca(apply(OArray.from, OArray, [src]));
      n = items.length;
    } else {
      // ToLength, as JavaScript: a fractional length is cut, a negative or missing one is 0.
      n = OMath.floor(ONumber(src.length));
      if (!(n > 0)) n = 0;
      if (n > lim().ma) limitArray();
    }
    if (mapFn === undefined) {
      if (items !== null) return made(items);
      items = [];
      for (let i = 0; i < n; i++) push(items, src[i]);
      return made(items);
    }
    callable(mapFn, 'Array.from callback');
    // One pass; the callback gets (value, index), as in JavaScript.
    const from = items !== null ? items : src, out = [];
    for (let i = 0; i < n; i++) {
      const v = mapFn(from[i], i);
      if (isP(v)) return loopAsync(i, v, n, (k) => mapFn(from[k], k), (k, w) => { push(out, w); return false; }, () => made(out));
      push(out, v);
    }
    return made(out);
  },
};
// The façades are functions, as the globals they stand for (typeof Array is 'function'), and
// answer instanceof as JavaScript would for the values a script can have.
const named = (f, name, instance) => {
  defProp(f, 'name', { value: name });
  defProp(f, SymHasInstance, { value: instance });
  return f;
};
const statics = (f, names, from) => {
  for (const n of names) defProp(f, n, { value: from[n], enumerable: true });
  return freeze(f);
};
const methods = (f, m) => {
  const ks = keys(m);
  for (let i = 0; i < ks.length; i++) defProp(f, ks[i], { value: m[ks[i]], enumerable: true });
  return freeze(f);
};
const never = () => false; // no wrapper objects (new Number…) exist in scripts
const NumberFacade = statics(named((...a) => a.length ? ONumber(a[0]) : 0, 'Number', never),
  ['isInteger', 'isFinite', 'isNaN', 'isSafeInteger', 'parseFloat', 'parseInt', 'MAX_SAFE_INTEGER', 'MIN_SAFE_INTEGER',
    'EPSILON', 'MAX_VALUE', 'MIN_VALUE', 'POSITIVE_INFINITY', 'NEGATIVE_INFINITY', 'NaN'], ONumber);
const StringFacade = statics(named((...a) => a.length ? OString(a[0]) : '', 'String', never), ['fromCharCode', 'fromCodePoint'], OString);
const BooleanFacade = freeze(named((v) => !!v, 'Boolean', never));
const ArrayGlobal = methods(named((...items) => {
  if (items.length === 1 && typeof items[0] === 'number') {
    throw new ORangeError('Array(n) makes an array of holes, which scripts do not have: write Array.from({length: n}, (_, i) => …)');
  }
  return ca(items);
}, 'Array', (v) => isArray(v)), ArrayFacade);
const ObjectGlobal = methods(named((v) => {
  if (v === null || v === undefined) return {};
  if (typeof v === 'object' || typeof v === 'function') return v;
  throw new OTypeError('Object(value) would box a ' + typeof v + ': use the value itself');
}, 'Object', (v) => {
  if (typeof v === 'function') return true;
  for (let p = v !== null && typeof v === 'object' ? getProto(v) : null; p !== null; p = getProto(p)) if (p === OP) return true;
  return false;
}), ObjectFacade);

// Bridges to host functions (membrane, realm.ts). invoke(thisArg, args, isNew) is the host side.
// While a synchronous variant runs, a bridge restarts it instead (see the SY comment): no host call from there.
defProp(LDate, 'name', { value: 'Date' });
// Host calls are counted like function entries (a host function passed as a sort comparator is
// called many times without entering script code).
const bridge = (invoke, name) => named2(typeof name === 'string' ? name : '', /** @this {unknown} */ function (...args) {
  if (SY.on) bail();
  const b = S.cur;
  if (b !== null && --b.n < 0) { b.n = TICKS; b.check(); }
  const r = invoke(this, args, new.target !== undefined);
  // A long host call is noticed as soon as it returns (reading the clock costs less than a call),
  // and what it made counts as if a built-in had made it.
  if (b !== null && b.on) b.check();
  if (typeof r === 'string') return madeS(r);
  if (isArray(r)) return ca(r);
  return r;
});

// The console of scripts (docs/scripting.md "Logging"): console.log, info, warn and error keep a
// line on the request's budget with the script's file:line:column, and the host writes the lines
// to the server's log with the request id (kit.takeConsole). At most CONSOLE_LINES lines of
// CONSOLE_TEXT characters per request; the text counts towards the request's memory.
const CONSOLE = slotMap();
const CONSOLE_LINES = 50, CONSOLE_TEXT = 2000;
const consoleText = (a) => {
  if (typeof a === 'string') return a;
  if (a === undefined || typeof a === 'function' || typeof a === 'symbol') return OString(typeof a === 'function' ? '[function]' : a);
  try { const j = JSONFacade.stringify(a); return j === undefined ? OString(a) : j; } catch { return '[value]'; }
};
const consoleLine = (level) => (...args) => {
  const b = S.cur;
  if (b === null) return undefined;
  let v = CONSOLE.get(b);
  if (v === undefined) { v = { lines: [], dropped: 0 }; CONSOLE.set(b, v); }
  if (v.lines.length >= CONSOLE_LINES) { v.dropped++; return undefined; }
  let text = '';
  for (let i = 0; i < args.length && text.length <= CONSOLE_TEXT; i++) text += (i ? ' ' : '') + consoleText(args[i]);
  if (text.length > CONSOLE_TEXT) text = apply(S_.slice, text, [0, CONSOLE_TEXT]) + '…';
  mem(text.length * 2);
  // The caller's position: the first script frame of a stack (50-freeze.js prepareStackTrace).
  const stack = OString(new OError().stack), mark = apply(S_.indexOf, stack, ['\n    at ']);
  const end = mark === -1 ? -1 : apply(S_.indexOf, stack, ['\n', mark + 1]);
  push(v.lines, { level: level, text: text, at: mark === -1 ? null : apply(S_.slice, stack, end === -1 ? [mark + 8] : [mark + 8, end]) });
  return undefined;
};
const ConsoleGlobal = freeze({ log: consoleLine('log'), info: consoleLine('info'), warn: consoleLine('warn'), error: consoleLine('error') });
const takeConsole = (b) => { const v = CONSOLE.get(b); if (v !== undefined) CONSOLE.delete(b); return v; };
