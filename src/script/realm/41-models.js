// The model runtime inside the script realm (docs/models.md, docs/queries.md). It runs in the
// same function as the other files of this folder, before the realm is frozen, so it shares the
// realm's intrinsics and budgets.
//
// The host installs each app's models once (`kit.models(descriptor, channel)`): plain data about
// the models, and the channel (HostChannel, src/script/channel.ts), whose methods are the bridge
// functions through which every query, write and value check goes to the store of the request whose code is running (realm.ts finds it by the current
// budget). Everything else — instances with field accessors, lazy query streams, links, hierarchy
// values, the unit of work that collects a request's changes — lives here, in the realm, so that
// reading fields never crosses the membrane.
//
// - Instances and links are callable (`list(() => Task.all())` selects the container for the
//   callback); their state sits in private fields, never reachable from a script.
// - Changes are collected per request (the budget) and written before the next query of the
//   request (records still missing a required value wait) and at the end of an endpoint, in order.
// - Every channel call may answer a Promise (PostgreSQL): the code here continues with `andThen`, and
//   scripts wait for it without seeing it (generated code awaits Promises).
// 4b. Models -------------------------------------------------------------------------------------
// The positions of a record's row (IState.v, the rows the channel answers) and of a write
// (src/script/records.ts ROW, WRITE, WRITE_KIND): realm copies of the host's constants.
/** @type {<T extends object>(o: T) => T} */
const copyLayout = (o) => {
  const c = OObject.create(null), ks = keys(o);
  for (let i = 0; i < ks.length; i++) { const v = o[ks[i]]; c[ks[i]] = typeof v === 'object' ? copyLayout(v) : v; }
  return freeze(c);
};
const ROW = copyLayout(host.records.row), WRITE = copyLayout(host.records.write), WRITE_KIND = copyLayout(host.records.kind);
// The positions of the channel's array answers (CheckedValue, FormReading: src/script/channel.ts ANSWER).
const ANSWER = copyLayout(host.answers);
// After a real wait (PostgreSQL, an async callback) the request's budget is current again, and
// its clock runs: a callback that loops after the wait is still stopped by the CPU limit.
const resume = (f) => {
  const b = S.cur;
  if (b === null) return f;
  return (x) => {
    if (b.dead !== null) throw b.dead;
    const entered = b.enter();
    try { return f(x); } finally { if (entered) b.leave(); }
  };
};
// f(v) for a value, or once it is there for a Promise (PostgreSQL), on the request's clock.
const andThen = (v, f) => isP(v) ? apply(then, v, [resume(f)]) : f(v);
// Runs f(i) for i < n one after the other, waiting for Promises between steps.
const seq = (n, f) => {
  const step = (i) => {
    for (; i < n; i++) { const r = f(i); if (isP(r)) return apply(then, r, [resume(() => step(i + 1))]); }
    return undefined;
  };
  return step(0);
};
const MERR = slotMap();
const modelError = (kind, message, extra) => {
  const e = new OError(message);
  defProp(e, 'name', { value: kind === 1 ? 'ModelNotFound' : 'ModelInvalid', writable: true, configurable: true });
  if (extra) { for (const k of keys(extra)) defProp(e, k, { value: extra[k], enumerable: true }); }
  MERR.set(e, kind);
  return e;
};
const notFound = (name) => modelError(1, name + ' not found');
const invalid = (model, field, message) => modelError(2, message, { field: field, messages: freeze([freeze({ type: 'error', field: model + '_' + field, value: message })]) });
// catch ($ModelNotFound) / catch ($ModelInvalid): kind 1 / 2.
const isModelError = (e, kind) => MERR.get(e) === kind;

// One unit of work per request budget: the instances with changes not yet written, in order.
/**
 * @typedef {object} UnitOfWork
 * @property {IState[]} pend the records with changes not yet written, in order
 * @property {Map<string, unknown>} hier the last hierarchy value given out, per model and container
 * @property {Record<string, unknown> | null} ctx the containers the request's URL selects (asked once)
 * @property {Array<[string, unknown]>} inCb the containers selected by record callbacks, innermost last
 * @property {Set<string> | null} pr the field reads the host allowed (mayRead)
 */
/** @type {SlotMap<UnitOfWork>} */
const UNITS_OF_WORK = slotMap();
const unitOfWork = () => {
  const b = S.cur;
  if (b === null) throw new OTypeError('models are used only while a script runs');
  let u = UNITS_OF_WORK.get(b);
  if (u === undefined) { u = { pend: [], hier: new OMap(), ctx: null, inCb: [], pr: null }; UNITS_OF_WORK.set(b, u); }
  return u;
};
// With users: may this request read field f of the stored record in state s? The host answers
// (403 when throwing); a yes is kept for the request, per field and container, until a profile
// is written (roles change then).
const mayRead = (app, d, f, s, throwing) => {
  const u = unitOfWork();
  const key = f.readKey + '|' + (d.container !== null ? s.v[ROW.container] : '') + '|' + (d.isContainer ? s.v[ROW.id] : '');
  if (u.pr !== null && u.pr.has(key)) return true;
  const ok = app.ch.mayRead(f.readKey, s.v, throwing);
  if (ok === true) { if (u.pr === null) u.pr = new OSet(); u.pr.add(key); }
  return ok === true;
};
// The same for a record in any state (docs/security.md "Field permissions and queries"): a
// stored record's fields take read on them; a record of this request's own reads freely, except
// the values it took from a stored record (s.from: a copy(), a new record's hierarchy position),
// which read as reading that record would until the script sets them.
const mayReadState = (app, d, f, s, throwing) => {
  if (s.st !== 0) return mayRead(app, d, f, s, throwing);
  return s.from === null || !s.from.hide.has(f.name) || mayRead(app, d, f, s.from, throwing);
};
const OMap = Map;
let lastTime = 0;
const stamp = () => { let t = ODate.now(); if (t <= lastTime) t = lastTime + 1; lastTime = t; return t; };

// Records (callable for container models) carry their state in a private field, stamped on the
// object by a constructor that returns it (cheaper than a WeakMap entry per record, and nothing a
// script can read). RECORDS.has(v) says v is a record.
const Stamp = class extends /** @type {new (o: object) => object} */ (/** @type {unknown} */ (function (o) { return o; })) {
  #s;
  constructor(o, s) { super(o); this.#s = s; }
  static get(o) { return o !== null && (typeof o === 'object' || typeof o === 'function') && #s in o ? o.#s : undefined; }
};
const RECORD_STATES = { get: Stamp.get, set: (o, s) => { new Stamp(o, s); } };
const RECORDS = { has: (v) => Stamp.get(v) !== undefined };
const LINKS = slotSet();  // links (callable for container models)
const QUERIES = slotSet();
const MODEL_CLASSES = slotSet(); // the M of each model (views read them through viewOp)
const HIER = slotSet();
const FIELDFN = slotMap(); // static field function -> [model desc, field desc]

class App {
  /** @param {ModelsDescriptor} desc @param {HostChannel} ch */
  constructor(desc, ch) {
    /** @type {HostChannel} */
    this.ch = freeze(ch); this.models = new OMap(); this.embedded = new OMap(); this.ns = {}; this.static = desc.static === true; this.imageKey = desc.imageKey || null;
    // Users are on (/👤.yaml): reads, writes and queries of records are checked by the host (mayRead, query, write).
    this.checksPermissions = desc.checksPermissions === true;
    for (let i = 0; i < desc.embedded.length; i++) this.embedded.set(desc.embedded[i].name, desc.embedded[i]);
    for (let i = 0; i < desc.models.length; i++) { const d = /** @type {any} the runtime keeps its own state on it */ (desc.models[i]); d.app = this; d.isContainer = false; this.models.set(d.name, d); }
    for (let i = 0; i < desc.models.length; i++) { const c = desc.models[i].container; if (c !== null) this.models.get(c).isContainer = true; }
    for (let i = 0; i < desc.models.length; i++) buildModel(this, desc.models[i]);
    for (let i = 0; i < desc.embedded.length; i++) if (apply(S_.indexOf, desc.embedded[i].name, ['.']) < 0) this.ns[desc.embedded[i].name] = buildEmbeddedCtor(this, desc.embedded[i]);
    // Notifications ('📡', 42-visitor.js): field sets like models, sent instead of stored.
    this.notes = {};
    const notes = desc.notifications || [];
    for (let i = 0; i < notes.length; i++) this.notes[notes[i].name] = buildNotification(this, notes[i]);
  }
}

// Images (docs/images.md): a record's image field holds the upload's id; scripts and views see an
// ImageRef, which views turn into the host's image value (<img>, width, height…). Only an ImageRef
// (read from another record) or a signed upload URL (checked by the host) can be stored: an id
// written as text could name another visitor's private image.
const IMGS = slotMap();
class ImageRef {
  constructor(id, key) { IMGS.set(this, { id: id, key: key }); freeze(this); }
  toJSON() { return IMGS.get(this).id; }
  toString() { return IMGS.get(this).id; }
}
// Shared by every request of the realm: frozen, as the hardened built-ins are.
freeze(ImageRef.prototype.toJSON); freeze(ImageRef.prototype.toString); freeze(ImageRef.prototype); freeze(ImageRef);
const TRUSTED_IMG = slotSet();
const imageValue = (v) => { const s = IMGS.get(v); return s === undefined ? undefined : { id: s.id, key: s.key }; };
const IMAGE_NAME = /^[^\/\\\x00-\x1f\x7f]{1,196}\.(?:png|jpe?g|gif)$/i;
const isValidImageName = (n) => typeof n === 'string' && n.length <= 200 && apply(RegExp.prototype.test, IMAGE_NAME, [n]);

// Values: stored form (numbers for timestamps, strings, plain data) ⇄ what scripts see.
const storeForm = (f, v) => {
  if (v === null || v === undefined) return null;
  if (IMGS.has(v)) {
    if (f.type !== 'image') throw new OTypeError('an image can be stored in an image field only, not in the ' + f.type + ' field ' + f.name);
    const t = { id: IMGS.get(v).id }; TRUSTED_IMG.add(t); return t;
  }
  if (DV.has(v)) return apply(ODate.prototype.getTime, DV.get(v), []);
  // A rich-text value keeps its source in a field of its own type (a copy), elsewhere gives its HTML.
  if (RT.has(v)) { const s = RT.get(v); if (f.type === (s.md ? 'markdown' : 'html')) return s.t; }
  if (SH.has(v)) return SH.get(v);
  if (HIER.has(v)) return v.value;
  if (RECORDS.has(v) || LINKS.has(v)) {
    if (f.type !== 'link') throw new OTypeError('a record cannot be stored in the ' + f.type + ' field ' + f.name);
    const tm = RECORDS.has(v) ? recordState(v).d.name : linkState(v).m;
    if (tm !== f.model) throw new OTypeError(f.name + ' links to a ' + f.model + ', not a ' + tm);
    return RECORDS.has(v) ? recordState(v).v[ROW.id] : linkState(v).id;
  }
  if (EMB.has(v)) return embPlain(v);
  if (LISTS.has(v)) return apply(A.slice, LISTS.get(v).a, []);
  return v;
};
const check = (d, f, v) => {
  if (TRUSTED_IMG.has(v)) return v.id;
  const r = d.app.ch.checkValue(d.name, f.name, v);
  if (r[ANSWER.status] !== ANSWER.ok) throw invalid(d.name, f.name, r[ANSWER.message]);
  return r[ANSWER.value];
};

// Hierarchy values.
class Hierarchy {
  constructor(app, v) { this.value = v; defProp(this, 'app', { value: app }); HIER.add(this); freeze(this); }
  get hasParent() { return this.app.ch.hierarchyHasParent(this.value); }
  parent() { const p = this.app.ch.hierarchyParent(this.value); return p === null ? null : new Hierarchy(this.app, p); }
  previous() { return new Hierarchy(this.app, this.app.ch.hierarchyPrevious(this.value)); }
  next() { return new Hierarchy(this.app, this.app.ch.hierarchyNext(this.value)); }
  before(other) { return new Hierarchy(this.app, this.app.ch.hierarchyBefore(this.value, HIER.has(other) ? other.value : OString(other))); }
  toString() { return this.value; }
  toJSON() { return this.value; }
}

// String lists (distinct values) and embedded lists.
const LISTS = slotMap();
class ValueList {
  constructor(owner, f, a) { LISTS.set(this, { owner: owner, f: f, a: a }); freeze(this); }
  get length() { return LISTS.get(this).a.length; }
  contains(v) { return apply(A.includes, LISTS.get(this).a, [v]); }
  includes(v) { return apply(A.includes, LISTS.get(this).a, [v]); }
  add(v) { return listAdd(this, v, false); }
  push(v) { return listAdd(this, v, false); }
  put(v) { return listAdd(this, v, true); }
  remove(v) {
    const s = LISTS.get(this), i = apply(A.indexOf, s.a, [v]);
    if (i < 0) return false;
    apply(A.splice, s.a, [i, 1]); touch(s.owner, s.f); return true;
  }
  removeIf(fn) {
    const s = LISTS.get(this); const keep = [];
    for (let i = 0; i < s.a.length; i++) if (!fn(s.a[i])) push(keep, s.a[i]);
    const removed = s.a.length - keep.length;
    if (removed) { s.a.length = 0; for (let i = 0; i < keep.length; i++) push(s.a, keep[i]); touch(s.owner, s.f); }
    return removed > 0;
  }
  forEach(fn) { callable(fn, 'forEach callback'); const a = apply(A.slice, LISTS.get(this).a, []); for (let i = 0; i < a.length; i++) fn(a[i], i); }
  map(fn) { return streamOp(listStream(this), 'map', fn); }
  filter(fn) { return streamOp(listStream(this), 'filter', fn); }
  flatMap(fn) { return streamOp(listStream(this), 'flatMap', fn); }
  limit(n) { return streamOp(listStream(this), 'limit', n); }
  distinct() { return streamOp(listStream(this), 'distinct'); }
  count() { return LISTS.get(this).a.length; }
  get() { const a = LISTS.get(this).a; if (!a.length) throw notFound('list entry'); return a[0]; }
  optional() { const a = LISTS.get(this).a; return a.length ? a[0] : null; }
  exists() { return LISTS.get(this).a.length > 0; }
  toJSON() { return apply(A.slice, LISTS.get(this).a, []); }
}
const listWhat = (l) => { const s = LISTS.get(l); return s.owner === null ? s.f.name : s.owner.d.name + '.' + s.f.name; };
const listStream = (l) => makeStream(apply(A.slice, LISTS.get(l).a, []), listWhat(l));

// Streams (docs/queries.md "Lists as streams"): what filter, map, flatMap, limit and distinct of a
// list give — a frozen array that also has a query's result methods. A name that is neither an
// array's nor a stream's is an error naming it and the stream, not "… is not a function".
const STREAMS = slotMap(); // stream -> what it streams ('Product.tags')
const STREAM_NAMES = ['map', 'filter', 'flatMap', 'limit', 'distinct', 'count', 'get', 'optional', 'exists', 'forEach'];
const STREAM_OWN = new OSet(STREAM_NAMES);
const rget = Reflect.get;
const streamProto = OObject.create(AP);
const sitems = (st) => { if (!STREAMS.has(st)) throw new OTypeError('not a stream'); return st; };
defProp(streamProto, 'map', { value: function (fn) { return streamOp(sitems(this), 'map', fn); } });
defProp(streamProto, 'filter', { value: function (fn) { return streamOp(sitems(this), 'filter', fn); } });
defProp(streamProto, 'flatMap', { value: function (fn) { return streamOp(sitems(this), 'flatMap', fn); } });
defProp(streamProto, 'limit', { value: function (n) { return streamOp(sitems(this), 'limit', n); } });
defProp(streamProto, 'distinct', { value: function () { return streamOp(sitems(this), 'distinct'); } });
defProp(streamProto, 'count', { value: function () { return sitems(this).length; } });
defProp(streamProto, 'exists', { value: function () { return sitems(this).length > 0; } });
defProp(streamProto, 'optional', { value: function () { const a = sitems(this); return a.length ? a[0] : null; } });
defProp(streamProto, 'get', { value: function () { const a = sitems(this); if (!a.length) throw notFound('a value of ' + STREAMS.get(a)); return a[0]; } });
defProp(streamProto, 'toJSON', { value: function () { return apply(A.slice, sitems(this), []); } });
freeze(streamProto);
const makeStream = (items, what) => {
  OObject.setPrototypeOf(items, streamProto);
  freeze(items);
  const p = new OProxy(items, {
    get: (t, k, r) => {
      if (typeof k !== 'string' || STREAM_OWN.has(k) || k in AP || k === 'then' || k === 'toJSON' || k === 'length') return rget(t, k, r);
      const c = apply(S_.charCodeAt, k, [0]);
      if (c >= 48 && c <= 57) return rget(t, k, r);
      throw new OTypeError(k + ' is not a method of a stream of ' + what + ': a stream has ' + apply(A.join, STREAM_NAMES, [', ']) + ' and the methods of an array');
    },
  });
  STREAMS.set(p, what);
  return p;
};
// One step over a stream's items: the same stages a query's results go through (runStages).
const streamOp = (items, kind, arg) => {
  if (kind === 'limit') { if (typeof arg !== 'number' || !(arg >= 0)) throw new OTypeError('limit(n) takes a number'); }
  else if (kind !== 'distinct') callable(arg, kind);
  const what = STREAMS.get(items);
  return andThen(runStages(apply(A.slice, items, []), [[kind, arg]], 0), (out) => makeStream(out, what));
};
const listAdd = (list, v, rolling) => {
  const s = LISTS.get(list), f = s.f;
  const d = s.owner.d;
  let stored = storeForm(f, v);
  if (f.type === 'embedded') { if (!EMB.has(v)) stored = embPlain(newEmbedded(d.app, f.embedded, v)); }
  else { const r = d.app.ch.checkListItem(d.name, f.name, stored); if (r[ANSWER.status] !== ANSWER.ok) throw invalid(d.name, f.name, r[ANSWER.message]); stored = r[ANSWER.value]; }
  if (f.type !== 'embedded' && apply(A.includes, s.a, [stored])) return list;
  if (s.a.length >= f.list) {
    if (!rolling) throw invalid(d.name, f.name, f.label + ' holds at most ' + f.list + ' entries');
    apply(A.splice, s.a, [0, 1]);
  }
  push(s.a, stored); touch(s.owner, f);
  return list;
};

// Embedded values: plain data inside the record, with field accessors that check values.
const EMB = slotMap();
const embPlain = (e) => { const s = EMB.get(e); const o = {}; for (let i = 0; i < s.t.fields.length; i++) { const n = s.t.fields[i].name; o[n] = s.v[n] === undefined ? null : s.v[n]; } return o; };
const newEmbedded = (app, typeName, init) => {
  const t = app.embedded.get(typeName);
  if (t === undefined) throw new OTypeError('no embedded type ' + typeName);
  const e = t.proto ? OObject.create(t.proto) : makeEmbProto(app, t);
  EMB.set(e, { t: t, v: {}, owner: null, f: null });
  if (init !== undefined && init !== null && typeof init === 'object') {
    const ks = keys(init);
    for (let i = 0; i < ks.length; i++) e[ks[i]] = init[ks[i]];
  }
  return e;
};
const makeEmbProto = (app, t) => {
  const proto = OObject.create(null);
  for (let i = 0; i < t.fields.length; i++) {
    const f = t.fields[i];
    defProp(proto, f.name, { enumerable: true,
      get() { return readValue(app, f, EMB.get(this).v[f.name], null); },
      set(v) { const s = EMB.get(this); s.v[f.name] = check({ app: app, name: t.name }, f, storeForm(f, v)); if (s.owner) touch(s.owner, s.f); } });
  }
  defProp(proto, 'toJSON', { value: function () { return embPlain(this); } });
  t.proto = freeze(proto);
  return OObject.create(t.proto);
};
const buildEmbeddedCtor = (app, t) => {
  const C = function (init) { if (new.target === undefined) throw new OTypeError('use new ' + t.name + '()'); return newEmbedded(app, t.name, init); };
  defProp(C, 'name', { value: t.name });
  return freeze(C);
};

// Rich text in scripts (docs/models.md "HTML, Markdown and SVG icon"): a markdown field, and an html field, reads as a RichValue.
// It passes wherever SafeHtml does — registered in SH with its HTML (the field's render: options
// applied), so JSON, {{{ }}}, concatenation and storing it in an html field take that HTML — and
// has the members a view's rich-text value has. Everything but the source is the host's work, done
// when asked through the channel with the field's renderer (f.richKey): richHtml (with a call's
// options), richSections, richText, richMarkdown (Markdown of an html field), richValid.
const RT = slotMap(); // value -> { app, t: source, k: rich-text key, md: a markdown field }
const rtState = (v) => { const s = RT.get(v); if (s === undefined) throw new OTypeError('not a rich-text value'); return s; };
const trimS = SP.trim;
class RichValue {
  constructor(app, f, text, html) { RT.set(this, { app: app, t: text, k: f.richKey, md: f.type === 'markdown' }); SH.set(this, html); freeze(this); }
  get value() { return rtState(this).t; }
  // No text but white space: of the Markdown source; of an html field's text (<p><br></p> shows nothing).
  get empty() { const s = rtState(this); return apply(trimS, s.md ? s.t : s.app.ch.richText(s.t, s.k), []) === ''; }
  get length() { const t = rtState(this).t; return codePoints(t, t.length); }
  // Whether the source meets the field's definition now (richValid); an html field's Markdown is made from its HTML (richMarkdown).
  get valid() { const s = rtState(this); return s.app.ch.richValid(s.t, s.k) === true; }
  get invalid() { const s = rtState(this); return s.app.ch.richValid(s.t, s.k) !== true; }
  markdown() { const s = rtState(this); return s.md ? s.t : s.app.ch.richMarkdown(s.t, s.k); }
  text() { const s = rtState(this); return s.app.ch.richText(s.t, s.k); }
  html(options) {
    const s = rtState(this);
    if (options === undefined || options === null) return new SafeHtml(SH.get(this));
    if (typeof options !== 'object' || isArray(options)) throw new OTypeError('html(options) takes an object, such as html({minimumHeaderLevel: 2})');
    return new SafeHtml(s.app.ch.richHtml(s.t, s.k, options));
  }
  sections() { const s = rtState(this); return freeze(s.app.ch.richSections(s.t, s.k)); }
  toString() { rtState(this); return SH.get(this); }
  toJSON() { rtState(this); return SH.get(this); }
}
// Frozen as harden (later in the realm source) freezes the realm's other types: members, prototype, class.
{
  const p = RichValue.prototype, ks = ownKeys(p);
  for (let i = 0; i < ks.length; i++) { const d = /** @type {PropertyDescriptor} */ (getDesc(p, ks[i])); freeze(d.value); freeze(d.get); freeze(d.set); }
  freeze(p); freeze(RichValue);
}
// Model.markdown(text) renders any text, one from a request's body too: it is bounded as the
// largest markdown field is (docs/security.md), and refused before the renderer reads it.
const MARKDOWN_TEXT_MAX = 20000;
const markdownOf = (app, model, text) => {
  const s = OString(text), n = codePoints(s, MARKDOWN_TEXT_MAX);
  if (n > MARKDOWN_TEXT_MAX) throw new ORangeError(model + '.markdown(text) renders at most ' + MARKDOWN_TEXT_MAX + ' characters; this text has more');
  return new SafeHtml(app.ch.markdown(s));
};
// An html field without render: options shows its HTML as stored, with no call to the host.
const richValue = (app, f, v) => new RichValue(app, f, v, f.type === 'html' && !f.hostRendered ? v : app.ch.richHtml(v, f.richKey));

// What a script reads from a stored value.
const readValue = (app, f, v, owner) => {
  if (f.list !== undefined && f.list !== null) {
    if (owner === null) return freeze(apply(A.slice, v || [], []));
    return new ValueList(owner, f, v);
  }
  if (f.type === 'link') return makeLink(app, f.model, v === undefined ? null : v);
  if (v === null || v === undefined) return f.type === 'map' ? (owner === null || app.static ? freeze({}) : mapOf(owner, f)) : null;
  switch (f.type) {
    case 'timestamp': return new LDate(v);
    case 'hierarchy': return new Hierarchy(app, v);
    case 'link': return makeLink(app, f.model, v);
    case 'html': return f.richKey === null ? new SafeHtml(v) : richValue(app, f, v);
    case 'svg-icon': return new SafeHtml(v);
    case 'markdown': return richValue(app, f, v);
    case 'image': return new ImageRef(v, app.imageKey);
    case 'geo': return freeze({ latitude: v.latitude, longitude: v.longitude, value: v.latitude + ',' + v.longitude });
    case 'map': return owner === null || app.static ? freeze(OObject.assign({}, v)) : mapOf(owner, f);
    case 'embedded': {
      const e = newEmbedded(app, f.embedded);
      const s = EMB.get(e); s.v = v; s.owner = owner; s.f = f;
      return e;
    }
    default: return v;
  }
};

// A map field of a record (docs/models.md "Maps"): the record's own map, written key by key
// (prefs['theme'] = 'dark', delete prefs['gone']); each change is checked and stored with the
// record as a new value of the field. One per record and field, reading the record's current value.
const mapOf = (s, f) => {
  if (s.maps === null) s.maps = new OMap();
  let m = s.maps.get(f.name);
  if (m === undefined) {
    const at = ROW.fields + f.i;
    const cur = () => { const v = s.v[at]; return v === null || v === undefined ? {} : v; };
    const change = (k, v, del) => {
      if (typeof k !== 'string') throw new OTypeError(s.d.name + '.' + f.name + ' keys are strings');
      if (k === '__proto__') throw invalid(s.d.name, f.name, f.label + ' cannot have the key __proto__');
      if (!del && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
        throw invalid(s.d.name, f.name, f.label + ' holds texts, numbers and true/false: ' + k + ' cannot be ' + (v === null ? 'null' : typeof v) + ' (delete it instead)');
      }
      const next = {};
      const c = cur(), ks = keys(c);
      for (let i = 0; i < ks.length; i++) if (ks[i] !== k) next[ks[i]] = c[ks[i]];
      if (!del) next[k] = v;
      setField(s, f, next);
      return true;
    };
    m = new OProxy({}, {
      get: (_t, k) => (typeof k === 'string' && hasOwn(cur(), k) ? cur()[k] : k === 'toJSON' ? undefined : OP[k]),
      set: (_t, k, v) => change(k, v, false),
      deleteProperty: (_t, k) => (typeof k === 'string' && !hasOwn(cur(), k) ? true : change(k, undefined, true)),
      has: (_t, k) => (typeof k === 'string' && hasOwn(cur(), k)) || k in OP,
      ownKeys: () => keys(cur()),
      getOwnPropertyDescriptor: (_t, k) => (typeof k === 'string' && hasOwn(cur(), k) ? { value: cur()[k], writable: true, enumerable: true, configurable: true } : undefined),
      defineProperty: () => { throw new OTypeError('set ' + f.name + ' entries with ' + f.name + '[key] = value'); },
      preventExtensions: () => { throw new OTypeError(s.d.name + '.' + f.name + ' cannot be frozen: it is the record\'s own map'); },
      setPrototypeOf: () => false,
    });
    s.maps.set(f.name, m);
    MAPS.add(m);
  }
  return m;
};
const MAPS = slotSet();

// Instances. State: d (model), v (row: id, created, modified, container, fields…), st (0 new, 1 stored, 2 removed), dirty,
// from (values taken from a stored record: mayReadState).
class IState {
  /** @param {any} d @param {any[]} row @param {0 | 1 | 2} st */
  constructor(d, row, st) {
    this.d = d; this.v = row; this.st = st;
    /** @type {Set<string> | null} the fields changed since the last write */
    this.dirty = null;
    this.pending = false;
    /** @type {{ v: any[], hide: Set<string> } | null} */
    this.from = null;
    /** @type {Map<string, object> | null} the map fields handed out (mapOf) */
    this.maps = null;
  }
}
const touch = (s, f) => {
  if (s.st === 2) throw new OTypeError('this ' + s.d.name + ' was removed');
  if (s.dirty === null) s.dirty = new OSet();
  s.dirty.add(f.name);
  if (!s.pending) { s.pending = true; push(unitOfWork().pend, s); }
};
// A record of a model that contains others is callable (list(() => Note.all()) selects it);
// other records are plain objects, which are much cheaper to make.
const newRecordObject = (d, id) => {
  if (!d.isContainer) return OObject.create(d.proto);
  const inst = (cb) => withContainer(d, id, cb);
  delete /** @type {any} */ (inst).name; delete /** @type {any} */ (inst).length;
  OObject.setPrototypeOf(inst, d.proto);
  return inst;
};
const makeInstance = (d, row, st) => {
  const inst = newRecordObject(d, row[ROW.id]);
  RECORD_STATES.set(inst, new IState(d, row, st));
  return inst;
};
/** @type {(o: unknown) => IState} */
const recordState = (o) => { const s = RECORD_STATES.get(o); if (s === undefined) throw new OTypeError('not a record'); return s; };

// Links: a record's id and model; get() loads it.
// A link's state: { m: model, id, d: its model's descriptor, row: the record read with it, inst }.
const LINK_STATES = slotMap();
const linkState = (o) => LINK_STATES.get(o);
// row: the record as it was when the request's path named it (a 🔗 path parameter), so that
// post.title reads at once (and still reads after post.get().remove()).
const makeLink = (app, model, id, row) => {
  const d = app.models.get(model);
  let l;
  if (d.isContainer) {
    l = (cb) => withContainer(d, id, cb);
    delete l.name; delete l.length;
    OObject.setPrototypeOf(l, d.linkProto);
  } else {
    l = OObject.create(d.linkProto);
  }
  LINK_STATES.set(l, { m: model, id: id, d: d, row: row === undefined ? null : row, inst: null }); LINKS.add(l);
  return l;
};

// Container selection by callback: queries made inside cb on children of d use this record.
const withContainer = (d, id, cb) => {
  if (typeof cb !== 'function') throw new OTypeError('call a record with a function: list(() => Task.all())');
  const u = unitOfWork();
  push(u.inCb, [d.name, id]);
  try { return cb(); } finally { apply(A.pop, u.inCb, []); }
};
const containerFor = (d) => {
  const u = unitOfWork();
  for (let i = u.inCb.length - 1; i >= 0; i--) if (u.inCb[i][0] === d.container) return u.inCb[i][1];
  if (u.ctx === null) u.ctx = d.app.ch.pathContainers() || {};
  const c = u.ctx[d.container];
  return c === undefined ? undefined : c;
};
const idOf = (v, model) => {
  if (RECORDS.has(v)) { const s = recordState(v); if (s.d.name !== model) throw new OTypeError('expected a ' + model + ', got a ' + s.d.name); return s.v[ROW.id]; }
  if (LINKS.has(v)) { const s = linkState(v); if (s.m !== model) throw new OTypeError('expected a ' + model + ', got a ' + s.m); return s.id; }
  if (typeof v === 'string') return v;
  throw new OTypeError('expected a ' + model + ' (a record, a link or an id)');
};

// The unit of work: write what changed (strict: every pending record must be complete).
// Each write is a WriteOp (src/script/records.ts, positions WRITE): [insert, model, id, created,
// modified, container, values], [update, model, id, modified, values, container] or [remove,
// model, id, container]; a record's row (IState.v, positions ROW) is [id, created, modified,
// container, ...the model's fields in order].
const flush = (strict) => {
  const b = S.cur;
  const u = b === null ? undefined : UNITS_OF_WORK.get(b);
  if (u === undefined || u.pend.length === 0) return undefined;
  /** @type {WriteOp[]} */
  const ops = [];
  const done = [], keep = [];
  /** @type {App | null} */
  let app = null;
  for (let i = 0; i < u.pend.length; i++) {
    const s = u.pend[i];
    app = s.d.app;
    if (s.st === 2) {
      if (s.wasStored) push(ops, [WRITE_KIND.remove, s.d.name, s.v[ROW.id], s.v[ROW.container]]);
      push(done, s); continue;
    }
    const missing = missingField(s);
    if (missing !== null) {
      if (strict) throw invalid(s.d.name, missing.name, missing.label + ' is required');
      push(keep, s); continue;
    }
    const vals = {};
    const fs = s.d.fields;
    for (let j = 0; j < fs.length; j++) if (s.st === 0 || s.dirty.has(fs[j].name)) vals[fs[j].name] = s.v[ROW.fields + j];
    if (s.st === 0) push(ops, [WRITE_KIND.insert, s.d.name, s.v[ROW.id], s.v[ROW.created], s.v[ROW.modified], s.v[ROW.container], vals]);
    else { s.v[ROW.modified] = stamp(); push(ops, [WRITE_KIND.update, s.d.name, s.v[ROW.id], s.v[ROW.modified], vals, s.v[ROW.container]]); }
    push(done, s);
  }
  u.pend = keep;
  for (let i = 0; i < done.length; i++) { const s = done[i]; s.pending = false; s.dirty = null; if (s.st === 0) { s.st = 1; s.wasStored = true; } }
  if (ops.length === 0) return undefined;
  // A profile written: the roles, so what may be read, change.
  for (let i = 0; i < ops.length; i++) if (app.models.get(ops[i][WRITE.model]).kind === 'profile') { u.pr = null; break; }
  return app.ch.write(ops);
};
const missingField = (s) => {
  const fs = s.d.fields;
  for (let i = 0; i < fs.length; i++) {
    const f = fs[i];
    if (f.optional || f.type === 'map' || (f.list !== undefined && f.list !== null)) continue;
    const v = s.v[ROW.fields + i];
    if (v === null || v === undefined || v === '') return f;
  }
  return null;
};

// Queries: immutable builders; nothing runs until a result is needed.
const QS = slotMap();
const QSTATE = (q) => QS.get(q);
const newQuery = (d, st, proto) => { const q = OObject.create(proto || st.proto || d.queryProto); if (proto) st.proto = proto; QS.set(q, st); QUERIES.add(q); return freeze(q); };
const baseQuery = (d, explicitContainer) => {
  const st = { d: d, w: [], c: undefined, o: undefined, l: undefined, stages: [], filtered: false, any: false };
  if (d.container !== null) {
    if (explicitContainer !== undefined) st.c = explicitContainer;
    else {
      // Made inside list(() => …): the container is the one selected now, even if the query runs later.
      const u = unitOfWork();
      for (let i = u.inCb.length - 1; i >= 0; i--) if (u.inCb[i][0] === d.container) { st.c = u.inCb[i][1]; break; }
    }
  }
  return st;
};
const derive = (q, change) => {
  const s = QSTATE(q);
  const n = { d: s.d, w: apply(A.slice, s.w, []), c: s.c, o: s.o, l: s.l, stages: apply(A.slice, s.stages, []), filtered: s.filtered, any: s.any, proto: s.proto };
  change(n);
  return newQuery(n.d, n);
};
// The spec sent to the store, and the cap of unordered queries.
const specOf = (s, extraLimit, noCap) => {
  const d = s.d;
  let c = s.c;
  if (d.container !== null && c === undefined && !s.any) {
    c = containerFor(d);
    if (c === undefined) throw new OTypeError(d.name + ' records belong to a ' + d.container + ': select one (' + d.name + '.' + d.containerMember + '(' + d.containerMember + ')), call it with a function (' + d.containerMember + '(() => ' + d.name + '.all())), or use ' + d.name + '.any' + d.container + '()');
  }
  const spec = { m: d.name, w: s.w };
  if (c !== undefined) spec.c = c;
  if (s.o !== undefined) spec.o = s.o;
  let l = s.l;
  if (s.filtered && s.o === undefined && !noCap) {
    if (l === undefined) l = 100;
    else if (l > 500) throw new ORangeError('an unordered query returns at most 500 records: add asc() or desc() to order it, or lower limit(' + l + ')');
  }
  if (extraLimit !== undefined && (l === undefined || extraLimit < l)) l = extraLimit;
  if (l !== undefined) spec.l = l;
  return spec;
};
const rowsToInstances = (d, rows) => {
  const out = [];
  for (let i = 0; i < rows.length; i++) push(out, makeInstance(d, rows[i], 1));
  return out;
};
// Runs a query: the store part, then the stages (filter, map, flatMap, limit, distinct) in order.
const execute = (q, firstOnly) => {
  const s = QSTATE(q);
  const stages = s.stages;
  const pure = stages.length === 0;
  return andThen(flush(false), () => {
    const spec = specOf(s, pure && firstOnly ? 1 : undefined);
    // get(), optional(): one record is asked for (permissions: access), not a list.
    if (firstOnly) spec.one = true;
    // Static documents are in memory already: one read.
    if (s.d.app.static) return andThen(s.d.app.ch.query(spec), (rows) => runStages(rowsToInstances(s.d, rows), stages, 0));
    // A leading filter runs chunk by chunk, so that only the records it keeps are held; enough
    // results: get() of that filter alone, or a limit right after it.
    const keep = stages.length && stages[0][0] === 'filter' ? stages[0][1] : null;
    const rest = keep === null ? stages : apply(A.slice, stages, [1]);
    const enough = keep === null ? undefined : rest.length === 0 && firstOnly ? 1 : rest.length && rest[0][0] === 'limit' ? rest[0][1] : undefined;
    return andThen(readChunks(s.d, spec, keep, enough), (items) => runStages(items, rest, 0));
  });
};
// Records are read READ_CHUNK at a time (docs/queries.md, "What a query reads"): every SQL text
// has a LIMIT; each chunk after the first continues after the last record read (spec.a), once the
// host let other requests run ('y': the next turn of the event loop on SQLite); the rows of each
// chunk are charged to the request's memory allowance and its CPU time is checked (on SQLite the
// read runs on the request's clock); and a result holds at most array-length records. A query of
// fewer than READ_CHUNK records is one read, synchronous on SQLite.
const READ_CHUNK = 1000;
const readChunks = (d, spec, keep, enough) => {
  const total = spec.l;
  /** @type {any} null until the first chunk is read */
  let out = null, read = 0;
  const step = (c) => andThen(d.app.ch.query(c), (rows) => {
    const n = rows.length;
    read += n;
    // The cursor is a copy: a record's row is its state, which the script may change.
    const last = n === c.l && n > 0 && (total === undefined || read < total) ? apply(A.slice, rows[n - 1], []) : null;
    if (n > 0) { mem(n * (rows[0].length + 1) * 8); const b = S.cur; if (b !== null) b.check(); }
    const items = rowsToInstances(d, rows);
    // The first chunk's records are the result as they are, unless a filter picks from them.
    const kept = keep === null ? (out === null ? (out = items, undefined) : pushAll(out, items)) : seq(n, (i) => andThen(keep(items[i]), (v) => { if (v) push(out, items[i]); }));
    return andThen(kept, () => {
      if (out.length > lim().ma) signal('LW_SCRIPT_ARRAY_LIMIT', 'a query read more than ' + lim().ma + ' ' + d.name + ' records: add field filters or limit(n) (count() counts them without reading)');
      if (last === null || (enough !== undefined && out.length >= enough)) return out;
      const next = OObject.assign({}, spec);
      next.l = total === undefined ? READ_CHUNK : OMath.min(total - read, READ_CHUNK);
      next.a = last;
      return andThen(d.app.ch.pause(), () => step(next));
    });
  });
  if (keep !== null) out = [];
  spec.l = total === undefined ? READ_CHUNK : OMath.min(total, READ_CHUNK);
  return step(spec);
};
const pushAll = (out, items) => { for (let i = 0; i < items.length; i++) push(out, items[i]); };
const runStages = (items, stages, k) => {
  if (k >= stages.length) return items;
  const [kind, arg] = stages[k];
  if (kind === 'limit') return runStages(apply(A.slice, items, [0, arg]), stages, k + 1);
  if (kind === 'group') return andThen(groupBy(items, arg), (groups) => runStages(groups, stages, k + 1));
  if (kind === 'insert') return andThen(insertInto(items, arg), (out) => runStages(out, stages, k + 1));
  if (kind === 'distinct') {
    const seen = new OSet(), out = [];
    for (let i = 0; i < items.length; i++) { const key = typeof items[i] === 'object' && items[i] !== null ? OJSON.stringify(outValue(items[i], 0)) : items[i]; if (!seen.has(key)) { seen.add(key); push(out, items[i]); } }
    return runStages(out, stages, k + 1);
  }
  const out = [];
  // What the callback gave for items[i] (after its Promise, if it waited): one closure per stage,
  // none per item.
  const take = (i, v) => {
    if (kind === 'filter') { if (v) push(out, items[i]); return; }
    if (kind === 'map') { push(out, v); return; }
    // flatMap: a single value, an array or a query
    if (QUERIES.has(v)) return andThen(execute(v, false), (vs) => { for (let j = 0; j < vs.length; j++) push(out, vs[j]); });
    if (isArray(v)) { for (let j = 0; j < v.length; j++) push(out, v[j]); return; }
    // A list field (p.tags, o.lines): its entries.
    if (LISTS.has(v)) { const a = LISTS.get(v).a; for (let j = 0; j < a.length; j++) push(out, a[j]); return; }
    if (v !== null && v !== undefined) push(out, v);
  };
  const r = seq(items.length, (i) => { const v = arg(items[i]); return isP(v) ? apply(then, v, [resume((x) => take(i, x))]) : take(i, v); });
  return andThen(r, () => runStages(out, stages, k + 1));
};
const aggregate = (q, kind, field) => {
  const s = QSTATE(q);
  if (s.stages.length) {
    return andThen(execute(q, false), (items) => {
      if (kind === 'count') return items.length;
      if (kind === 'exists') return items.length > 0;
      // sum/avg after stages: over the records that remain (a mapped stream has no fields to add).
      let total = 0, n = 0;
      for (let i = 0; i < items.length; i++) { if (!RECORDS.has(items[i])) continue; const v = items[i][field]; if (typeof v === 'number') { total += v; n++; } }
      return kind === 'sum' ? total : n ? total / n : null;
    });
  }
  return andThen(flush(false), () => s.d.app.ch.aggregate(specOf(s, undefined, s.l === undefined), kind, field));
};
// Parent.grouping(childQuery): one group per parent that has matching children, in the parents'
// order: {list: parent, note: [children…]} (at most the child query's limit, else 100, per parent).
const groupBy = (parents, cq) => {
  const cs = QSTATE(cq);
  const per = cs.l === undefined ? 100 : cs.l;
  if (parents.length === 0 || per === 0) return [];
  const ids = [];
  for (let i = 0; i < parents.length; i++) push(ids, recordState(parents[i]).v[ROW.id]);
  // Only the children of these parents, read in chunks (until every group has its first per).
  const spec = { m: cs.d.name, w: cs.w, cs: ids };
  if (cs.o !== undefined) spec.o = cs.o;
  const byParent = new OMap();
  const keep = (child) => {
    const c = recordState(child).v[ROW.container];
    let list = byParent.get(c);
    if (list === undefined) { list = []; byParent.set(c, list); }
    if (list.length >= per) return false;
    push(list, child);
    return true;
  };
  const read = cs.d.app.static ? andThen(cs.d.app.ch.query(spec), (rows) => { for (let i = 0; i < rows.length; i++) keep(makeInstance(cs.d, rows[i], 1)); }) : readChunks(cs.d, spec, keep, ids.length * per);
  return andThen(read, () => {
    const pkey = cs.d.containerMember, ckey = cs.d.memberName;
    const out = [];
    for (let i = 0; i < parents.length; i++) {
      const list = byParent.get(recordState(parents[i]).v[ROW.id]);
      if (list === undefined) continue;
      const g = {};
      g[pkey] = parents[i];
      g[ckey] = list;
      push(out, g);
    }
    return out;
  });
};
// insert(fn): fn is called at every gap — before the first item, between two items, after the
// last, or once when there is none — with {previous, next, first, last, empty}; what it returns
// (null, a value, an array or a query) is inserted there.
const insertInto = (items, fn) => {
  const out = [];
  const add = (v) => {
    if (QUERIES.has(v)) return andThen(execute(v, false), (vs) => { for (let j = 0; j < vs.length; j++) push(out, vs[j]); });
    if (isArray(v)) { for (let j = 0; j < v.length; j++) push(out, v[j]); return; }
    // A list field (p.tags, o.lines): its entries.
    if (LISTS.has(v)) { const a = LISTS.get(v).a; for (let j = 0; j < a.length; j++) push(out, a[j]); return; }
    if (v !== null && v !== undefined) push(out, v);
  };
  const n = items.length;
  const gap = (i) => {
    const previous = i > 0 ? items[i - 1] : null, next = i < n ? items[i] : null;
    return andThen(fn(freeze({ previous: previous, next: next, first: i === 0, last: i === n, empty: n === 0 })), add);
  };
  const r = seq(n + 1, (i) => andThen(gap(i), () => { if (i < n) push(out, items[i]); }));
  return andThen(r, () => out);
};
const queryMethods = {
  asc() { return derive(this, (n) => { n.o = 'asc'; }); },
  desc() { return derive(this, (n) => { n.o = 'desc'; }); },
  limit(n) {
    if (typeof n !== 'number' || !(n >= 0)) throw new OTypeError('limit(n) needs a number');
    return derive(this, (st) => { if (st.stages.length) push(st.stages, ['limit', n]); else st.l = st.l === undefined ? n : OMath.min(st.l, n); });
  },
  filter(fn) { callable(fn, 'filter'); return derive(this, (n) => { push(n.stages, ['filter', fn]); }); },
  map(fn) { callable(fn, 'map'); return derive(this, (n) => { push(n.stages, ['map', fn]); }); },
  flatMap(fn) { callable(fn, 'flatMap'); return derive(this, (n) => { push(n.stages, ['flatMap', fn]); }); },
  distinct() { return derive(this, (n) => { push(n.stages, ['distinct']); }); },
  insert(fn) {
    callable(fn, 'insert');
    const st = QSTATE(this).stages;
    if (!st.some((x) => x[0] === 'map' || x[0] === 'flatMap')) throw new OTypeError('insert(fn) comes after map(…) or flatMap(…): it adds values of the same shape');
    return derive(this, (n) => { push(n.stages, ['insert', fn]); });
  },
  forEach(fn) { callable(fn, 'forEach'); return andThen(execute(this, false), (items) => seq(items.length, (i) => fn(items[i], i))); },
  count() { return aggregate(this, 'count'); },
  exists() { return aggregate(this, 'exists'); },
  sum(field) { return aggregate(this, 'sum', fieldName(this, field)); },
  avg(field) { return aggregate(this, 'avg', fieldName(this, field)); },
  get() { const d = QSTATE(this).d; return andThen(execute(this, true), (items) => { if (!items.length) throw notFound(d.name); return items[0]; }); },
  optional() { return andThen(execute(this, true), (items) => items.length ? items[0] : null); },
  modify(fn) {
    callable(fn, 'modify');
    return andThen(execute(this, false), (items) => andThen(seq(items.length, (i) => fn(items[i])), () => items.length));
  },
  toJSON() { throw new OTypeError('a query becomes JSON only as the result of a script (or inside it)'); },
};
const embeddedMatch = (app, d, f, m) => {
  const t = app.embedded.get(f.embedded);
  const plain = EMB.has(m) ? embPlain(m) : m;
  if (plain === null || typeof plain !== 'object' || isArray(plain)) throw new OTypeError(d.name + '.' + f.name + '(…) takes the field values to match, such as ' + d.name + '.' + f.name + '({' + t.fields[0].name + ': …})');
  const out = [];
  const ks = keys(plain);
  for (let i = 0; i < ks.length; i++) {
    const sub = t.fields.find((x) => x.name === ks[i]);
    if (sub === undefined) throw new OTypeError(f.embedded + ' has no field ' + ks[i]);
    if (!sub.queryable) throw new OTypeError(f.embedded + '.' + ks[i] + ' is a ' + sub.type + ' field, which cannot be matched');
    const v = plain[ks[i]];
    if (EMB.has(m) && (v === null || v === undefined)) continue;
    push(out, [ks[i], v === null || v === undefined ? null : storeForm(sub, v)]);
  }
  if (out.length === 0) throw new OTypeError(d.name + '.' + f.name + '(…) needs at least one field value to match');
  return out;
};
const fieldName = (q, f) => {
  const m = FIELDFN.get(f);
  if (m !== undefined) return m[1].name;
  if (typeof f === 'string') return f;
  throw new OTypeError('pass a field, such as sum(' + QSTATE(q).d.name + '.amount)');
};

// P.me(): the signed-in user's profiles of model d (none for a visitor). get() is the top-level
// profile, get(container) the one in a container; all() every one; shared(container) whether
// other users have a profile in that container too.
const meQuery = (app, d) => {
  const uid = app.ch.userId();
  const st = baseQuery(d);
  st.any = true;
  push(st.w, ['user', 'eq', typeof uid === 'string' ? uid : '']);
  st.filtered = true;
  return newQuery(d, st, d.meProto);
};
const meMethods = {
  get(c) {
    const d = QSTATE(this).d;
    if (c === undefined) return queryMethods.get.call(this);
    if (d.container === null) throw new OTypeError(d.name + ' is a top-level profile: ' + d.name + '.me().get() takes no container');
    const cid = idOf(c, d.container);
    return queryMethods.get.call(derive(this, (n) => { n.c = cid; n.any = false; }));
  },
  all() { return this; },
  shared(c) {
    const d = QSTATE(this).d;
    if (d.container === null) throw new OTypeError(d.name + ' is a top-level profile: shared(container) is for profiles inside a ' + 'container');
    const cid = idOf(c, d.container);
    const everyone = newQuery(d, baseQuery(d, cid));
    const mine = derive(this, (n) => { n.c = cid; n.any = false; });
    return andThen(queryMethods.count.call(everyone), (n) => andThen(queryMethods.count.call(mine), (m) => n > m));
  },
};

// Static side and prototypes of one model.
const buildModel = (app, d) => {
  d.byName = new OMap();
  for (let i = 0; i < d.fields.length; i++) { d.fields[i].i = i; d.byName.set(d.fields[i].name, d.fields[i]); }
  const hf = d.fields.find((f) => f.type === 'hierarchy');
  d.hier = hf === undefined ? null : hf.name;
  const proto = OObject.create(null);
  const linkProto = OObject.create(null);
  const queryProto = OObject.create(null);
  const qm = keys(queryMethods);
  for (let i = 0; i < qm.length; i++) defProp(queryProto, qm[i], { value: queryMethods[qm[i]] });
  const filterMethod = (name, op) => /** @this {object} */ function (v) {
    const f = name === 'id' || name === 'created' || name === 'modified' ? null : d.byName.get(name);
    if (f !== null) v = userValue(f, v);
    const value = v === null || v === undefined ? null : f !== null && f.type === 'link' ? idOf(v, f.model) : storeForm(f || { type: name === 'id' ? 'id' : 'timestamp' }, v);
    return derive(this, (n) => { push(n.w, [name, op, value]); n.filtered = true; });
  };
  const queryable = ['id', 'created', 'modified'];
  for (let i = 0; i < d.fields.length; i++) if (d.fields[i].queryable) push(queryable, d.fields[i].name);
  for (let i = 0; i < queryable.length; i++) {
    const n = queryable[i];
    // A field named like a query method (count, get, limit…) keeps the method; its ranges stay.
    if (!hasOwn(queryProto, n)) defProp(queryProto, n, { value: filterMethod(n, 'eq') });
    defProp(queryProto, n + '_gt', { value: filterMethod(n, 'gt') });
    defProp(queryProto, n + '_gte', { value: filterMethod(n, 'gte') });
    defProp(queryProto, n + '_lt', { value: filterMethod(n, 'lt') });
    defProp(queryProto, n + '_lte', { value: filterMethod(n, 'lte') });
  }
  // Embedded fields: M.metadata({title: 'x'}) matches records whose embedded value (or one entry
  // of an embedded list) has those field values.
  for (let i = 0; i < d.fields.length; i++) {
    const f = d.fields[i];
    if (f.type !== 'embedded' || hasOwn(queryProto, f.name)) continue;
    defProp(queryProto, f.name, { value: function (m) { const match = embeddedMatch(app, d, f, m); return derive(this, (n) => { push(n.w, [f.name, 'match', match]); n.filtered = true; }); } });
  }
  d.queryProto = freeze(queryProto);
  if (d.kind === 'profile') {
    const meProto = OObject.create(queryProto);
    const mm = keys(meMethods);
    for (let i = 0; i < mm.length; i++) defProp(meProto, mm[i], { value: meMethods[mm[i]] });
    d.meProto = freeze(meProto);
  }
  const all = () => newQuery(d, baseQuery(d));

  // Instance accessors.
  defProp(proto, 'id', { get() { return recordState(this).v[ROW.id]; }, enumerable: true });
  defProp(proto, 'created', { get() { return new LDate(recordState(this).v[ROW.created]); }, enumerable: true });
  defProp(proto, 'modified', { get() { return new LDate(recordState(this).v[ROW.modified]); }, enumerable: true });
  for (let i = 0; i < d.fields.length; i++) {
    const f = d.fields[i];
    f.readKey = d.name + '.' + f.name;
    const at = ROW.fields + i;
    defProp(proto, f.name, { enumerable: true,
      // With users, reading a field takes read on it (the host answers 403 otherwise): mayReadState.
      get() { const s = recordState(this); if (app.checksPermissions) mayReadState(app, d, f, s, true); return readValue(app, f, s.v[at], s); },
      set(v) { setField(recordState(this), f, v); } });
  }
  const method = (name, desc) => { if (!hasOwn(proto, name)) defProp(proto, name, desc); };
  method('remove', { value: function () {
    const s = recordState(this);
    if (s.st === 2) return;
    const wasNew = s.st === 0;
    s.wasStored = !wasNew;
    s.st = 2;
    if (!s.pending) { s.pending = true; push(unitOfWork().pend, s); }
  } });
  method('copy', { value: function () {
    const s = recordState(this);
    const row = apply(A.slice, s.v, []);
    const t = stamp();
    row[ROW.id] = app.ch.newId(d.name); row[ROW.created] = t; row[ROW.modified] = t;
    for (let j = 0; j < d.fields.length; j++) if (d.fields[j].type === 'uid' || d.fields[j].unique) row[ROW.fields + j] = null;
    const c = makeInstance(d, row, 0);
    const cs = recordState(c); cs.pending = true; push(unitOfWork().pend, cs);
    // With users, the values copied from a stored record read as reading it (mayReadState).
    if (app.checksPermissions) {
      const own = s.st === 0 || (s.st === 2 && !s.wasStored);
      if (!own || s.from !== null) {
        const hide = new OSet();
        for (let j = 0; j < d.fields.length; j++) {
          const f = d.fields[j];
          if (f.type !== 'uid' && !f.unique && (!own || s.from.hide.has(f.name))) hide.add(f.name);
        }
        cs.from = { v: own ? s.from.v : apply(A.slice, s.v, []), hide: hide };
      }
    }
    return c;
  } });
  method('copyable', { get() { return !d.fields.some((f) => (f.type === 'uid' || f.unique) && !f.optional); } });
  if (d.container !== null) {
    // task.list(): a link to the container, with its record read at once when the visitor may
    // find it, so that task.list().name reads without get() (as apps written for the platform do).
    method(d.containerMember, { value: function () {
      const id = recordState(this).v[ROW.container];
      const cd = app.models.get(d.container);
      return andThen(app.ch.mayFind(d.container, id), (ok) => ok !== true ? makeLink(app, d.container, id)
        : andThen(loadById(cd, id, false), (r) => makeLink(app, d.container, id, r === null ? undefined : apply(A.slice, recordState(r).v, []))));
    } });
  }
  method('toJSON', { value: function () { return outValue(this, 0); } });
  if (d.kind === 'profile') {
    const roleAt = ROW.fields + d.byName.get('role').i;
    // profile.hasRole(Role.Owner): the role stored on this profile.
    const userAt = ROW.fields + d.byName.get('user').i, roleField = d.byName.get('role');
    // Another user's profile answers as reading its role does; the visitor's own roles are theirs to know.
    method('hasRole', { value: function (r) {
      const s = recordState(this);
      if (app.checksPermissions && s.v[userAt] !== app.ch.userId()) mayReadState(app, d, roleField, s, true);
      return typeof r === 'string' && s.v[roleAt] === r;
    } });
  }
  // A static document's get is the document itself (article.get.content, as through a link).
  if (app.static) defProp(proto, 'get', { get() { return this; } });
  d.proto = freeze(proto);

  // Link accessors: id, get, optional, exists, linked.
  defProp(linkProto, 'id', { get() { return linkState(this).id; }, enumerable: true });
  defProp(linkProto, 'get', { value: function () { return loadById(linkState(this).d, linkState(this).id, true); } });
  defProp(linkProto, 'optional', { value: function () { return loadById(linkState(this).d, linkState(this).id, false); } });
  defProp(linkProto, 'exists', { value: function () { return andThen(loadById(linkState(this).d, linkState(this).id, false), (r) => r !== null); } });
  defProp(linkProto, 'linked', { value: function () { return linkState(this).id !== null; } });
  defProp(linkProto, 'toJSON', { value: function () { return linkState(this).id; } });
  if (app.static) {
    // Static documents are in memory: a link reads the document's fields at once
    // (article.title on a path parameter), and a document's get is the document itself.
    for (let i = 0; i < d.fields.length; i++) {
      const f = d.fields[i];
      if (f.isProtected) continue;
      defProp(linkProto, f.name, { get() { const r = staticRecord(linkState(this).d, linkState(this).id); return r === null ? null : r[f.name]; }, enumerable: true });
    }
  }
  if (!app.static) {
    // A path parameter's link reads the fields of its record: the state this request holds for
    // it (changed or removed in this request), else the row read when the path was matched.
    // Other links have no row: their fields are read through get().
    const linked = (l) => {
      const s = linkState(l);
      const u = unitOfWork();
      for (let i = 0; i < u.pend.length; i++) if (u.pend[i].d === s.d && u.pend[i].v[ROW.id] === s.id) return instanceOfState(u.pend[i]);
      if (s.row === null) throw new OTypeError('read the fields of a linked ' + s.d.name + ' through get(), such as link.get().' + (s.d.fields.length ? s.d.fields[0].name : 'id'));
      if (s.inst === null) s.inst = makeInstance(s.d, s.row, 1);
      return s.inst;
    };
    for (let i = 0; i < d.fields.length; i++) {
      const f = d.fields[i];
      if (hasOwn(linkProto, f.name)) continue;
      defProp(linkProto, f.name, { get() { return linked(this)[f.name]; } });
    }
  }
  d.linkProto = freeze(linkProto);

  // The model itself: new M(container?), M.get/optional/exists(id), M.all(), field queries, metadata.
  const M = function (container) {
    if (new.target === undefined) throw new OTypeError('create a record with new ' + d.name + '()');
    const t = stamp();
    const row = [app.ch.newId(d.name), t, t, null]; // id, created, modified, container (ROW), then the fields
    if (d.container !== null) {
      const c = container === undefined ? containerFor(d) : idOf(container, d.container);
      if (c === undefined || c === null) throw new OTypeError('a ' + d.name + ' belongs to a ' + d.container + ': new ' + d.name + '(' + d.containerMember + ')');
      row[ROW.container] = c;
    }
    /** @type {Promise<unknown> | null} */
    let wait = null;
    for (let i = 0; i < d.fields.length; i++) {
      const v = initValue(app, d, d.fields[i], row[ROW.container]);
      if (isP(v)) { const at = row.length; push(row, null); wait = apply(then, v, [(x) => { row[at] = x; }]); }
      else push(row, v);
    }
    const inst = makeInstance(d, row, 0);
    const s = recordState(inst); s.pending = true; push(unitOfWork().pend, s);
    // Its hierarchy position comes after the last stored record's: it reads as reading that record would.
    if (app.checksPermissions && d.hier !== null) { s.from = { v: row, hide: new OSet() }; s.from.hide.add(d.hier); }
    // PostgreSQL: the next hierarchy value comes from a query; new M() then waits (generated code awaits it).
    return wait === null ? inst : apply(then, wait, [() => inst]);
  };
  // A field may be called name or length: the function's own name and length give way to it.
  if (d.byName.has('name')) delete /** @type {any} */ (M).name; else defProp(M, 'name', { value: d.name });
  if (d.byName.has('length')) delete /** @type {any} */ (M).length;
  const statics = {
    all: all,
    get: (id) => loadById(d, id, true),
    optional: (id) => loadById(d, id, false),
    exists: (id) => andThen(loadById(d, id, false), (r) => r !== null),
    asc: () => all().asc(),
    desc: () => all().desc(),
  };
  defProp(M, 'all', { value: statics.all, enumerable: true });
  defProp(M, 'get', { value: statics.get, enumerable: true });
  defProp(M, 'optional', { value: statics.optional, enumerable: true });
  defProp(M, 'exists', { value: statics.exists, enumerable: true });
  if (!d.byName.has('asc')) defProp(M, 'asc', { value: statics.asc, enumerable: true });
  if (!d.byName.has('desc')) defProp(M, 'desc', { value: statics.desc, enumerable: true });
  defProp(M, 'markdown', { value: (text) => markdownOf(app, d.name, text), enumerable: false });
  for (let i = 0; i < queryable.length; i++) {
    const n = queryable[i];
    const f = d.byName.get(n) || null;
    if (n === 'id' || n === 'created' || n === 'modified') continue;
    const ff = function (v) {
      if (new.target !== undefined) return fieldValue(app, d, f, arguments);
      return all()[n](v);
    };
    defProp(ff, 'name', { value: n });
    fieldMeta(ff, app, d, f);
    FIELDFN.set(ff, [d, f]);
    if (!hasOwn(M, n)) defProp(M, n, { value: freeze(ff), enumerable: true });
    for (const op of ['_gt', '_gte', '_lt', '_lte']) defProp(M, n + op, { value: (v) => all()[n + op](v), enumerable: false });
  }
  for (let i = 0; i < d.fields.length; i++) {
    const f = d.fields[i];
    if (f.queryable) continue;
    const ff = function (m) {
      if (new.target !== undefined) return fieldValue(app, d, f, arguments);
      if (f.type === 'embedded') return all()[f.name](m);
      throw new OTypeError(d.name + '.' + f.name + ' is a ' + f.type + (f.list !== null && f.list !== undefined ? ' list' : '') + ' field, which cannot be queried');
    };
    defProp(ff, 'name', { value: f.name });
    fieldMeta(ff, app, d, f);
    FIELDFN.set(ff, [d, f]);
    if (!hasOwn(M, f.name)) defProp(M, f.name, { value: freeze(ff), enumerable: true });
  }
  for (const n of ['id', 'created', 'modified']) {
    for (const op of ['_gt', '_gte', '_lt', '_lte']) defProp(M, n + op, { value: (v) => all()[n + op](v), enumerable: false });
  }
  if (!d.byName.has('grouping')) {
    defProp(M, 'grouping', { value: (cq) => {
      if (!QUERIES.has(cq) || QSTATE(cq).d.container !== d.name) throw new OTypeError(d.name + '.grouping(q) takes a query of a model contained in ' + d.name + ', such as ' + d.name + '.grouping(Child.any' + d.name + '())');
      const cs = QSTATE(cq);
      if (cs.stages.length) throw new OTypeError('the query given to grouping(q) takes field filters, asc/desc and limit only');
      return derive(all(), (n) => { push(n.stages, ['group', cq]); });
    }, enumerable: false });
  }
  if (d.kind === 'profile' && !hasOwn(M, 'me')) defProp(M, 'me', { value: () => meQuery(app, d), enumerable: true });
  if (d.container !== null) {
    defProp(M, d.containerMember, { value: (c) => newQuery(d, baseQuery(d, idOf(c, d.container))), enumerable: true });
    defProp(M, 'any' + d.container, { value: () => { const st = baseQuery(d); st.any = true; return newQuery(d, st); }, enumerable: true });
  }
  // Inline embedded types: new Order.Contact()
  for (let i = 0; i < d.fields.length; i++) {
    const f = d.fields[i];
    if (f.type === 'embedded' && apply(S_.indexOf, f.embedded, ['.']) > 0) {
      const local = apply(S_.slice, f.embedded, [apply(S_.indexOf, f.embedded, ['.']) + 1]);
      if (!hasOwn(M, local)) defProp(M, local, { value: buildEmbeddedCtor(app, app.embedded.get(f.embedded)), enumerable: true });
    }
  }
  // Its default form (docs/forms.md): Task.Form.submit(task). Not enumerable: views get theirs from the host.
  if (!app.static && !hasOwn(M, 'Form')) defProp(M, 'Form', { value: makeFormType(app, '📦.' + d.name, []), enumerable: false });
  app.ns[d.name] = freeze(M);
  MODEL_CLASSES.add(M);
  d.M = M;
};
const fieldMeta = (ff, app, d, f) => {
  defProp(ff, 'label', { value: f.label, enumerable: true });
  defProp(ff, 'placeholder', { value: f.placeholder === undefined ? null : f.placeholder, enumerable: true });
  defProp(ff, 'about', { value: f.about === undefined ? null : f.about, enumerable: true });
  defProp(ff, 'required', { value: !f.optional, enumerable: true });
  defProp(ff, 'optional', { value: f.optional, enumerable: true });
  if (f.type === 'options') {
    for (let j = 0; j < f.values.length; j++) {
      const v = f.values[j][0];
      if (!hasOwn(ff, v)) defProp(ff, v, { value: v, enumerable: true });
    }
    defProp(ff, 'optionLabel', { value: (v) => { for (let j = 0; j < f.values.length; j++) if (f.values[j][0] === v) return f.values[j][1]; return null; } });
  }
  // Post.image.isValidFileName(name), Post.image.newPutUrl(name[, width, height]), Post.image.sizeMax.
  if (f.type === 'image') {
    defProp(ff, 'isValidFileName', { value: (n) => isValidImageName(n), enumerable: true });
    defProp(ff, 'newPutUrl', { value: (n) => {
      if (!isValidImageName(n)) throw new OTypeError(d.name + '.' + f.name + '.newPutUrl(name) takes the name of a .png, .jpg or .gif file; check it with ' + d.name + '.' + f.name + '.isValidFileName(name) first');
      return app.ch.imageUploadUrl(d.name, f.name);
    }, enumerable: true });
    defProp(ff, 'sizeMax', { value: 10485760, enumerable: true });
  }
};
// new Model.field(…): a checked value of that field (geo from two numbers, rich text from a string).
const fieldValue = (app, d, f, args) => {
  let v = args[0];
  if (f.type === 'geo' && args.length === 2) v = args[0] + ',' + args[1];
  return readValue(app, f, check(d, f, storeForm(f, v)), null);
};
const initValue = (app, d, f, container) => {
  if (f.list !== undefined && f.list !== null) return [];
  if (f.type === 'map') return {};
  // A hierarchy always starts after the last record (its only sensible default; the tasks blueprint relies on it).
  if (f.type === 'hierarchy') {
    const u = unitOfWork();
    const key = d.name + '|' + container;
    const mine = u.hier.get(key);
    const v = mine !== undefined ? app.ch.hierarchyAfterLast(mine) : app.ch.positionAtEnd(d.name, container);
    if (isP(v)) return apply(then, v, [(x) => { u.hier.set(key, x); return x; }]);
    u.hier.set(key, v);
    return v;
  }
  if (f.init === undefined || f.init === null || f.init === false) return f.type === 'boolean' && f.init === false ? false : null;
  switch (f.type) {
    case 'boolean': return false;
    case 'integer': case 'double': return typeof f.init === 'number' ? f.init : 0;
    case 'timestamp': return ODate.now();
    case 'date': return apply(S_.slice, apply(ODate.prototype.toISOString, new ODate(), []), [0, 10]);
    case 'options': return f.values.length ? f.values[0][0] : null;
    default: return null;
  }
};
// A profile's user: .user(Me) stores the signed-in user's id (Me.id); an id as text is kept as is.
const userValue = (f, v) => {
  if (f.profile !== 'user' || v === null || typeof v !== 'object') return v;
  const id = v.id;
  if (typeof id !== 'string' || id === '') throw new OTypeError('.user(Me) needs a signed-in user: this visitor is not signed in (check Me.linked)');
  return id;
};
const setField = (s, f, v) => {
  v = userValue(f, v);
  const stored = check(s.d, f, storeForm(f, v));
  if (s.st === 1 && f.type === 'uid' && stored === null) throw invalid(s.d.name, f.name, f.label + ' cannot be removed');
  s.v[ROW.fields + f.i] = stored;
  if (s.from !== null) s.from.hide.delete(f.name);
  touch(s, f);
};
// A static document by id, read synchronously (the static channel answers from memory, with no unit of work).
const staticRecord = (d, id) => {
  if (id === null || id === undefined) return null;
  const rows = d.app.ch.query({ m: d.name, w: [['id', 'eq', id]], l: 1 });
  return rows.length ? makeInstance(d, rows[0], 1) : null;
};
const loadById = (d, id, required) => {
  if (id === null || id === undefined) { if (required) throw notFound(d.name); return null; }
  if (typeof id !== 'string') id = idOf(id, d.name);
  // A record of this request not written yet.
  const u = unitOfWork();
  for (let i = 0; i < u.pend.length; i++) if (u.pend[i].d === d && u.pend[i].v[ROW.id] === id && u.pend[i].st !== 2) return instanceOfState(u.pend[i]);
  return andThen(flush(false), () => andThen(d.app.ch.query({ m: d.name, w: [['id', 'eq', id]], l: 1, one: true }), (rows) => {
    if (!rows.length) { if (required) throw notFound(d.name); return null; }
    return makeInstance(d, rows[0], 1);
  }));
};
const instanceOfState = (s) => {
  const inst = newRecordObject(s.d, s.v[ROW.id]);
  RECORD_STATES.set(inst, s);
  return inst;
};

// Output (docs/queries.md "JSON output"): records, links, queries and streams as JSON data; waits for queries.
// A record as a plain object: the built-ins, then each field but protected ones, through field(app, f, value).
const recordObject = (s, field) => {
  const d = s.d;
  const o = { id: s.v[ROW.id], created: new LDate(s.v[ROW.created]), modified: new LDate(s.v[ROW.modified]) };
  for (let i = 0, at = ROW.fields; i < d.fields.length; i++, at++) {
    const f = d.fields[i];
    // With users, fields the visitor may not read are left out (like protected ones).
    if (!f.isProtected && (!d.app.checksPermissions || mayReadState(d.app, d, f, s, false))) o[f.name] = field(d.app, f, s.v[at]);
  }
  return o;
};
const outValue = (v, depth) => {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return v;
  if (depth > DEF.md) throw new ORangeError('the output nests too deep');
  // A script's own object or array first: records, links, queries, lists, embedded values, dates
  // and web-safe values each have a prototype of their own, never Object.prototype or
  // Array.prototype, so none of the lookups below can match these.
  const p0 = getProto(v);
  if (p0 === OP) return primitivesOnly(v) ? v : outObject(v, depth);
  if (p0 === AP && isArray(v)) return outArray(v, depth);
  if (RECORDS.has(v)) return recordObject(recordState(v), outField);
  if (LINKS.has(v)) return linkState(v).id;
  if (HIER.has(v)) return v.value;
  if (LISTS.has(v)) return apply(A.slice, LISTS.get(v).a, []);
  if (EMB.has(v)) return embPlain(v);
  if (QUERIES.has(v)) return andThen(execute(v, false), (items) => outArray(items, depth));
  if (typeof v === 'function' || DV.has(v) || SH.has(v)) return v;
  if (isArray(v)) return outArray(v, depth);
  const p = getProto(v);
  if (p !== OP && p !== null) return v;
  // Most output objects hold only primitives (a map callback's {id, name, price}): nothing to
  // replace, no allocation. Script objects have data properties only (no accessors), so reading
  // them twice (here, then below when one is an object) has no effect.
  if (primitivesOnly(v)) return v;
  return outObject(v, depth);
};
const outObject = (v, depth) => {
  const ks = keys(v);
  /** @type {Record<PropertyKey, unknown> | null} */
  let copy = null;
  const r = seq(ks.length, (i) => {
    const k = ks[i], x = v[k];
    if (x === null || (typeof x !== 'object' && typeof x !== 'function')) return;
    return andThen(outValue(x, depth + 1), (y) => {
      if (y !== x) { if (copy === null) copy = /** @type {Record<PropertyKey, unknown>} */ (OObject.assign({}, v)); copy[k] = y; }
    });
  });
  return andThen(r, () => copy === null ? v : copy);
};
const primitivesOnly = (v) => {
  for (const k in v) { const x = v[k]; if (x !== null && (typeof x === 'object' || typeof x === 'function')) return false; }
  return true;
};
const outArray = (a, depth) => {
  /** @type {unknown[] | null} */
  let copy = null;
  const put = (i, x, y) => { if (y !== x) { if (copy === null) copy = apply(A.slice, a, []); copy[i] = y; } };
  const r = seq(a.length, (i) => {
    const x = a[i];
    if (x === null || (typeof x !== 'object' && typeof x !== 'function')) return;
    const y = outValue(x, depth + 1);
    return isP(y) ? apply(then, y, [resume((z) => put(i, x, z))]) : put(i, x, y);
  });
  return andThen(r, () => copy === null ? a : copy);
};
const outField = (app, f, v) => {
  if (v === null || v === undefined) return f.list !== undefined && f.list !== null ? [] : f.type === 'map' ? {} : null;
  switch (f.type) {
    case 'timestamp': return new LDate(v);
    case 'markdown': return app.ch.markdown(v, f.richKey);
    case 'html': return f.hostRendered ? app.ch.richHtml(v, f.richKey) : v;
    case 'geo': return { latitude: v.latitude, longitude: v.longitude };
    default: return v;
  }
};
// An endpoint's completion value: write what is pending (every record complete), then the output.
// A failed redirect (.invalid(…)) rolls everything back: records left incomplete do not matter.
const endpointOut = (v) => {
  if (v !== null && typeof v === 'object') { const rs = RS.get(v); if (rs !== undefined && rs.failed) return outValue(v, 0); }
  // A hierarchy value as the whole answer is data, not a path to redirect to: its text (digits,
  // dots and slashes only) goes out as a web-safe value, which the answer writes as a JSON string.
  if (HIER.has(v)) return andThen(flush(true), () => new SafeHtml(v.value));
  return andThen(flush(true), () => outValue(v, 0));
};
// $lw_fs(o, 'title', args): a fluent setter on a record (m.title('x') sets and returns m), else a method call.
const fluent = (o, k, ...args) => {
  if (RECORDS.has(o)) {
    const s = recordState(o);
    const f = s.d.byName.get(k);
    if (f !== undefined && args.length === 1) { setField(s, f, args[0]); return o; }
  }
  // An embedded value: new Address().street(s).city(c) (its setter checks the value).
  if (EMB.has(o) && args.length === 1) {
    const fs = EMB.get(o).t.fields;
    for (let i = 0; i < fs.length; i++) if (fs[i].name === k) { o[k] = args[0]; return o; }
  }
  const fn = o[k];
  if (typeof fn !== 'function') throw new OTypeError(k + ' is not a function');
  return apply(fn, o, args);
};
const APPS = slotMap();

// Form types (docs/forms.md "In scripts and views at run time"): what a script does with a form. The host holds the form's definition
// (src/forms), checks the visitor's form state and reads the submission; here, the values are set
// on the record through its setters, so every field check of the model applies.
const FORMERR = slotMap(); // $ModelInvalid of a form -> { key, values } (for Redirect.invalid)
const formInvalid = (key, messages, values) => {
  const list = [];
  for (let i = 0; i < messages.length; i++) push(list, freeze({ type: OString(messages[i].type), field: OString(messages[i].field), value: OString(messages[i].value) }));
  const e = modelError(2, list.length ? list[0].value : 'invalid', { field: list.length ? list[0].field : null, messages: freeze(list) });
  FORMERR.set(e, { key: key, values: values });
  return e;
};
const submitForm = (app, key, inst) => {
  const note = isNotification(inst);
  if (!note && !RECORDS.has(inst)) throw new OTypeError('Form.submit(record) takes a record: Form.submit(new Task()), or Form.submit(task.get())');
  return andThen(app.ch.submitForm(key, note ? nstate(inst).d.name : recordState(inst).d.name), (r) => {
    if (r[ANSWER.status] === ANSWER.refused) throw formInvalid(key, r[ANSWER.messages], r[ANSWER.texts]);
    const pairs = r[ANSWER.values];
    try {
      for (let i = 0; i < pairs.length; i++) inst[pairs[i][0]] = pairs[i][1];
    } catch (e) {
      if (isModelError(e, 2) && !FORMERR.has(e)) FORMERR.set(e, { key: key, values: r[ANSWER.texts] });
      throw e;
    }
    return undefined;
  });
};
// A read form (Form.validate(), Form.get()) remembers its key and submitted texts, so that
// Redirect….form(f) can carry them to the next step as a form state (docs/forms.md "In scripts and views at run time").
const FORMREAD = slotMap();
const readForm = (app, key, validate) => andThen(app.ch.readForm(key, validate), (r) => {
  if (r[ANSWER.status] === ANSWER.refused) throw formInvalid(key, r[ANSWER.messages], r[ANSWER.texts]);
  const o = {};
  const pairs = r[ANSWER.values];
  for (let i = 0; i < pairs.length; i++) o[pairs[i][0]] = pairs[i][1];
  defProp(o, 'submit', { value: (inst) => submitForm(app, key, inst) });
  FORMREAD.set(o, { key: key, values: r[ANSWER.texts] });
  return freeze(o);
});
const makeFormType = (app, key, groups) => {
  const F = {};
  defProp(F, 'submit', { value: (inst) => submitForm(app, key, inst), enumerable: true });
  defProp(F, 'validate', { value: () => readForm(app, key, true), enumerable: true });
  defProp(F, 'get', { value: () => readForm(app, key, false), enumerable: true });
  for (let i = 0; i < groups.length; i++) defProp(F, groups[i], { value: makeFormType(app, key + '#' + groups[i], []), enumerable: true });
  return freeze(F);
};
const notificationsOf = (ns) => { const app = APPS.get(ns); return app === undefined ? {} : app.notes; };
const formType = (ns, key, groups) => { const app = APPS.get(ns); if (app === undefined) throw new OTypeError('forms need models'); return makeFormType(app, key, groups); };
const formErrorInfo = (e) => {
  const f = FORMERR.get(e);
  if (f !== undefined) return { key: f.key, values: f.values, messages: e.messages };
  const g = FORMREAD.get(e);
  return g === undefined ? undefined : { key: g.key, values: g.values, messages: [] };
};
const modelLink = (ns, model, id, row) => { const app = APPS.get(ns); if (app === undefined || !app.models.has(model)) throw new OTypeError('no model ' + model); return makeLink(app, model, id, row); };
const installModels = (desc, ch) => {
  const app = new App(desc, ch);
  APPS.set(app.ns, app);
  harden(app.ns);
  app.models.forEach((d) => { harden(d.proto); harden(d.linkProto); harden(d.queryProto); if (d.meProto) harden(d.meProto); });
  app.embedded.forEach((t) => { if (t.proto) harden(t.proto); });
  return app.ns;
};
const modelErrorInfo = (e) => {
  const k = MERR.get(e);
  if (k === undefined) return undefined;
  return { kind: k === 1 ? 'notFound' : 'invalid', message: OString(e.message), messages: k === 2 ? e.messages : [] };
};
// What a view reads of a record (host copy): fields, links (loaded only when read), hierarchy as {value}.
const viewValue = (v) => {
  if (RECORDS.has(v)) {
    const s = recordState(v), d = s.d;
    const o = recordObject(s, viewField);
    if (d.container !== null && !hasOwn(o, d.containerMember)) o[d.containerMember] = makeLink(d.app, d.container, s.v[ROW.container]);
    if (d.app.static) o.get = () => v;
    if (!d.app.static && !hasOwn(o, 'copyable')) o.copyable = v.copyable;
    return o;
  }
  if (LINKS.has(v)) {
    const s = linkState(v);
    if (s.d.app.static) {
      // A static document's fields are read at once; get is the document itself.
      const r = staticRecord(s.d, s.id);
      const o = r === null ? {} : viewValue(r);
      o.id = s.id; o.linked = s.id !== null; o.get = () => r; o.optional = () => r; o.exists = r !== null;
      return o;
    }
    const get = () => loadById(s.d, s.id, true);
    const optional = () => loadById(s.d, s.id, false);
    return { id: s.id, linked: s.id !== null, get: s.id === null ? null : get, optional: s.id === null ? null : optional, exists: s.id === null ? false : () => andThen(optional(), (r) => r !== null) };
  }
  if (HIER.has(v)) return { value: v.value };
  if (LISTS.has(v)) return apply(A.slice, LISTS.get(v).a, []);
  if (EMB.has(v)) return embPlain(v);
  if (QUERIES.has(v)) return execute(v, false);
  return undefined;
};
// Views use queries lazily (Release.all.desc, {{#Note.list list as n}}): the methods they may call.
const VIEW_QUERY_OPS = new OSet(['asc', 'desc', 'count', 'exists', 'get', 'optional', 'limit', 'distinct']);
// 3: a link of a stored model, which a view reads field by field (script/realm.ts LinkView).
const viewKind = (v) => (QUERIES.has(v) ? 1 : MODEL_CLASSES.has(v) ? 2 : LINKS.has(v) && !linkState(v).d.app.static ? 3 : 0);
// The names a view may read through a link of model d, made once per model (the same array each time).
const LINK_VIEW_OWN = new OSet(['id', 'linked', 'get', 'optional', 'exists', 'toString', 'toJSON']);
const linkViewNames = (l) => {
  const d = linkState(l).d;
  if (d.viewNames === undefined) {
    const names = ['created', 'modified', 'copyable'];
    for (let i = 0; i < d.fields.length; i++) if (!d.fields[i].isProtected) push(names, d.fields[i].name);
    if (d.container !== null) push(names, d.containerMember);
    const out = [];
    for (let i = 0; i < names.length; i++) if (!LINK_VIEW_OWN.has(names[i])) push(out, names[i]);
    d.viewNames = freeze(out);
  }
  return d.viewNames;
};
// A link in a view: its id, get/optional/exists, and the record its fields are read from (the
// state this request holds for it, the row read at the path match, else one read by id).
const linkViewOp = (l, name) => {
  if (!LINKS.has(l)) throw new OTypeError('not a link');
  const s = linkState(l);
  if (name === 'id') return s.id;
  if (s.id === null) return name === 'exists' ? false : null;
  if (name === 'get') return loadById(s.d, s.id, true);
  if (name === 'optional') return loadById(s.d, s.id, false);
  if (name === 'exists') return andThen(loadById(s.d, s.id, false), (r) => r !== null);
  if (name !== 'record') throw new OTypeError('a view cannot call ' + name + ' on a link');
  const u = unitOfWork();
  for (let i = 0; i < u.pend.length; i++) if (u.pend[i].d === s.d && u.pend[i].v[ROW.id] === s.id) return u.pend[i].st === 2 ? null : instanceOfState(u.pend[i]);
  if (s.row !== null) { if (s.inst === null) s.inst = makeInstance(s.d, s.row, 1); return s.inst; }
  return loadById(s.d, s.id, false);
};
const viewOp = (q, name, arg) => {
  if (QUERIES.has(q) && name === 'all') return execute(q, false);
  if (!QUERIES.has(q) || !VIEW_QUERY_OPS.has(name)) throw new OTypeError('a view cannot call ' + name + ' on a query: make the query in a supplier');
  return name === 'limit' ? q.limit(arg) : q[name]();
};
// A Markdown or html value on its way to a view: the host makes it a rich-text value (content/rich-text.ts)
// with the renderer registered for the field (f.richKey), which gives html(options), sections(), text().
const RICH = slotMap();
class RichRef { constructor(text, key) { RICH.set(this, { text: text, key: key }); freeze(this); } }
const viewField = (app, f, v) => {
  if (f.list !== undefined && f.list !== null) return v || [];
  if (v === null || v === undefined) return f.type === 'map' ? {} : null;
  switch (f.type) {
    case 'timestamp': return new LDate(v);
    case 'hierarchy': return { value: v };
    case 'link': return makeLink(app, f.model, v);
    case 'html': return f.richKey !== null ? new RichRef(v, f.richKey) : new SafeHtml(v);
    case 'svg-icon': return new SafeHtml(v);
    case 'markdown': return f.richKey !== null ? new RichRef(v, f.richKey) : new SafeHtml(app.ch.markdown(v));
    case 'image': return new ImageRef(v, app.imageKey);
    case 'geo': return { latitude: v.latitude, longitude: v.longitude, value: v.latitude + ',' + v.longitude };
    default: return v;
  }
};
const isModelish = (v) => RECORDS.has(v) || LINKS.has(v) || HIER.has(v) || LISTS.has(v) || EMB.has(v) || QUERIES.has(v) || MODEL_CLASSES.has(v);
