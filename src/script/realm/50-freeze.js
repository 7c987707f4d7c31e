// 5. Patch and freeze ---------------------------------------------------------------------------------
// Function source text is the script's own text for its arrows (generate.ts marks each with the id
// of its source text), and never the code of Laneway or of the instrumented script.
const FP = getProto(noop), FTS = FP.toString;
defProp(FP, 'toString', { writable: true, configurable: true, enumerable: false, value: { toString() {
  if (typeof this !== 'function') throw new OTypeError('Function.prototype.toString needs a function');
  const t = apply(FTS, this, []);
  if (apply(S_.slice, t, [0, 4]) === '(/*#') {
    const text = host.source(ONumber(apply(S_.slice, t, [4, apply(S_.indexOf, t, ['*/'])])));
    if (typeof text === 'string') return text;
  }
  const d = getDesc(this, 'name');
  return 'function ' + (d && typeof d.value === 'string' ? d.value : '') + '() { [native code] }';
} }.toString });
// Stack traces name only the script's own frames, as file:line:column of the script.
OError.prepareStackTrace = (e, frames) => {
  let out = OString(e.name) + ': ' + OString(e.message);
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i].getFileName();
    if (typeof f !== 'string' || apply(S_.slice, f, [0, 15]) !== 'laneway-script:') continue;
    const at = host.frame(f, frames[i].getLineNumber(), frames[i].getColumnNumber());
    if (at) out += '\n    at ' + at;
  }
  return out;
};
for (const n of keys(arrayMethods)) defProp(AP, n, { value: arrayMethods[n], writable: true, enumerable: false, configurable: true });
for (const n of keys(stringMethods)) defProp(SP, n, { value: stringMethods[n], writable: true, enumerable: false, configurable: true });
// Spreading or destructuring a string makes one element per character: past the array limit,
// refused before the array is made.
const stringIterator = SP[SymIterator];
const codePoints = (str, max) => {
  let n = 0;
  for (let i = 0; i < str.length && n <= max; i++) {
    const c = apply(S_.charCodeAt, str, [i]);
    if (c >= 0xd800 && c <= 0xdbff) i++;
    n++;
  }
  return n;
};
defProp(SP, SymIterator, { writable: true, enumerable: false, configurable: true, value: { [SymIterator]() {
  const str = OString(this), max = lim().ma;
  if (str.length > max && codePoints(str, max) > max) limitArray('the characters of a string');
  return apply(stringIterator, str, []);
} }[SymIterator] });
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
  Redirect: freeze(Redirect), Messages: freeze(Messages), Cookie: Cookie, Math: OMath, JSON: freeze(JSONFacade), Date: LDate, Number: NumberFacade,
  String: StringFacade, Boolean: BooleanFacade, Array: ArrayGlobal, Object: ObjectGlobal,
  parseInt: parseInt, parseFloat: parseFloat, isNaN: isNaN, isFinite: isFinite,
  encodeURIComponent: encodeURIComponentG, decodeURIComponent: decodeURIComponent, encodeURI: encodeURIG, decodeURI: decodeURI,
  console: ConsoleGlobal,
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
      const d = /** @type {PropertyDescriptor} */ (getDesc(o, ks[i]));
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
harden(Hierarchy); harden(ValueList); harden(queryMethods); harden(Cookie); harden(EmailBuilder); harden(Email);
harden(AsyncFunctionPrototype); harden(getProto(function* () {})); harden(getProto(async function* () {}));
harden(getProto([][SymIterator]())); harden(getProto(''[SymIterator]()));

const K = freeze({ $lw_A: topLevel, $lw_M: markWaiting, $lw_Y: SY, $lw_B: BAIL, $lw_q: pure, $lw_bail: bail, $lw_P: OPromise, $lw_key: key, $lw_set: set, $lw_del: del, $lw_pk: pk, $lw_cs: cs, $lw_ca: ca,
  $lw_S: S, $lw_apply: apply, $lw_nt: noThen, $lw_os: objectSpread, $lw_fs: fluent, $lw_out: endpointOut, $lw_me: isModelError });

// The host's view, which the realm source returns (realm-source.ts). Nothing here is ever handed to
// a script.
const kit = freeze({
  G: G, K: K, OP: OP, AP: AP,
  newBudget: (l, path, origin) => new Budget(l, { path: path, origin: origin }),
  newRun: (b, imp) => new Run(b, imp),
  enter: (b) => b.enter(),
  leave: (b) => b.leave(),
  current: () => S.cur,
  takeConsole: takeConsole,
  setCurrent: (b) => { S.cur = b; },
  deadInfo: (b) => b.dead === null ? undefined : { code: b.dead.code, message: b.dead.message },
  usedOf: (b) => b.used + (b.on ? now() - b.t0 : 0),
  limitsOf: (b) => ({ cpuMs: b.cpu, maxStringLength: b.ms, maxArrayLength: b.ma, maxDepth: b.md, memoryMb: b.mb }),
  renew: (b, cpuMs) => b.renew(cpuMs),
  kill: (b, code, message) => { try { b.fail(code, message); } catch { /* marked dead */ } },
  newObject: () => ({}),
  newArray: () => [],
  // A copy of a host array of primitives (a database row). The loop runs here, in the realm, where
  // push is the realm's own and inlined: eight times faster than pushing from the host side. A new
  // array's push is the frozen Array.prototype's, called directly (push() makes an argument list
  // per element, twice the time).
  copyFlat: (a) => { const o = []; for (let i = 0; i < a.length; i++) o.push(a[i]); return o; },
  copyRows: (rows) => { const out = []; for (let i = 0; i < rows.length; i++) { const a = rows[i], o = []; for (let j = 0; j < a.length; j++) o.push(a[j]); out.push(o); } return out; },
  newDate: (t) => new LDate(t),
  dateValue: (o) => DV.has(o) ? apply(ODate.prototype.getTime, DV.get(o), []) : undefined,
  newSafeHtml: (h) => new SafeHtml(h),
  safeHtmlValue: (o) => SH.get(o),
  richTextValue: (o) => RICH.get(o),
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
  models: installModels,
  modelLink: modelLink,
  modelErrorInfo: modelErrorInfo,
  takeEffects: takeEffects,
  formType: formType,
  notifications: notificationsOf,
  imageValue: imageValue,
  formErrorInfo: formErrorInfo,
  Email: Email,
  Cookie: Cookie,
  viewValue: viewValue,
  viewKind: viewKind,
  viewOp: viewOp,
  linkViewOp: linkViewOp,
  linkViewNames: linkViewNames,
  isModelish: isModelish,
});
