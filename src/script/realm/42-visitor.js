// The visitor globals inside the script realm, after the models: `Messages` (docs/messages.md),
// the `Cookie` builder (docs/request.md) and the `Email` builder (docs/email.md).
//
// None of them reaches the host while the script runs: each records an effect on the request's
// budget (one per request, so a script never sees another request's effects), and the host takes
// them when the request's scripts are done (`kit.takeEffects`) — writing cookies and queueing
// e-mail only when the request succeeded, leaving messages for the visitor's next page.
// 4c. Visitor effects ----------------------------------------------------------------------------
const VFX = slotMap();
const fx = (what) => {
  const b = S.cur;
  if (b === null) throw new OTypeError(what + ' is used only while a script runs');
  let v = VFX.get(b);
  if (v === undefined) { v = { messages: [], data: {}, cookies: [], emails: [], notes: [] }; VFX.set(b, v); }
  return v;
};
const MAX_EFFECTS = 50;
const text = (v, what, max) => {
  if (v === null || v === undefined) throw new OTypeError(what + ' needs a value');
  const s = OString(v);
  if (s.length > max) throw new ORangeError(what + ' is longer than ' + max + ' characters');
  return s;
};
const addMessage = (type, field, value) => {
  const v = fx('Messages');
  if (v.messages.length >= MAX_EFFECTS) throw new ORangeError('a request may leave at most ' + MAX_EFFECTS + ' messages');
  const m = field === null ? { type: type, value: text(value, 'a message', 2000) } : { type: type, field: text(field, 'a field name', 200), value: text(value, 'a message', 2000) };
  push(v.messages, freeze(m));
};
const copyMessages = (list) => {
  const out = [];
  for (let i = 0; i < list.length; i++) {
    const m = list[i];
    push(out, m.field === undefined ? { type: m.type, value: m.value } : { type: m.type, field: m.field, value: m.value });
  }
  return out;
};
// A field message returns what "throw Messages.fieldError(…)" throws: a $ModelInvalid carrying the
// request's messages (the answer is 422 with them, docs/messages.md "Messages").
const fieldMessage = (type, field, value) => {
  addMessage(type, field, value);
  const list = fx('Messages').messages;
  return modelError(2, list[list.length - 1].value, { field: list[list.length - 1].field, messages: freeze(copyMessages(list)) });
};
const Messages = {
  success: (m) => { addMessage('success', null, m); },
  info: (m) => { addMessage('info', null, m); },
  warning: (m) => { addMessage('warning', null, m); },
  error: (m) => { addMessage('error', null, m); },
  fieldSuccess: (f, m) => fieldMessage('success', f, m),
  fieldInfo: (f, m) => fieldMessage('info', f, m),
  fieldWarning: (f, m) => fieldMessage('warning', f, m),
  fieldError: (f, m) => fieldMessage('error', f, m),
  // The pending messages, as data; they no longer go to the next page.
  now: () => { const v = fx('Messages'); const out = copyMessages(v.messages); v.messages = []; return out; },
  data: (k, s) => {
    const v = fx('Messages');
    const key = text(k, 'a Messages.data key', 100);
    if (!hasOwn(v.data, key) && keys(v.data).length >= MAX_EFFECTS) throw new ORangeError('a request may leave at most ' + MAX_EFFECTS + ' Messages.data values');
    v.data[key] = text(s, 'a Messages.data value', 2000);
  },
};

// Cookie builder: Cookie.name('a').value('1').days(30).submit(), or new Cookie().name('a')…
const CK = slotMap();
const ck = (c) => { const s = CK.get(c); if (s === undefined) throw new OTypeError('not a Cookie'); return s; };
class Cookie {
  constructor() {
    const s = { name: null, value: '', days: null, invalidate: false, submitted: false };
    CK.set(this, s);
    const v = fx('Cookie');
    if (v.cookies.length >= MAX_EFFECTS) throw new ORangeError('a request may write at most ' + MAX_EFFECTS + ' cookies');
    push(v.cookies, s);
    freeze(this);
  }
  static name(n) { const c = new Cookie(); ck(c).submitted = false; ck(c).builder = true; return c.name(n); }
  name(n) { ck(this).name = text(n, 'a cookie name', 64); return this; }
  value(x) { ck(this).value = text(x, 'a cookie value', 4000); return this; }
  days(n) {
    const d = ONumber(n);
    if (!(d > 0) || d > 400) throw new ORangeError('Cookie days(n) takes a number of days from 1 to 400');
    ck(this).days = d; return this;
  }
  invalidate() { const s = ck(this); s.invalidate = true; s.value = ''; return this; }
  submit() { ck(this).submitted = true; return this; }
}

// Email builder (import {Email} from '📧'): Email.to(a).subject(s).text(t).send().
const EM = slotMap();
const em = (e) => { const s = EM.get(e); if (s === undefined) throw new OTypeError('not an Email'); return s; };
class EmailBuilder {
  constructor() { EM.set(this, { to: [], subject: '', text: '', replyTo: null, sent: false }); freeze(this); }
  to(a) {
    const s = em(this);
    if (isArray(a)) { for (let i = 0; i < a.length; i++) push(s.to, text(a[i], 'an e-mail address', 320)); }
    else push(s.to, text(a, 'an e-mail address', 320));
    return this;
  }
  replyTo(a) { em(this).replyTo = text(a, 'an e-mail address', 320); return this; }
  subject(x) { em(this).subject = text(x, 'a subject', 998); return this; }
  text(x) { em(this).text = text(x, 'an e-mail body', 1048576); return this; }
  send() {
    const s = em(this);
    if (s.sent) return undefined;
    if (s.to.length === 0) throw new OTypeError('Email…send() needs a recipient: Email.to(address)');
    const v = fx('Email');
    if (v.emails.length >= MAX_EFFECTS) throw new ORangeError('a request may send at most ' + MAX_EFFECTS + ' e-mails');
    s.sent = true;
    push(v.emails, { to: apply(A.slice, s.to, []), subject: s.subject, text: s.text, replyTo: s.replyTo });
    return undefined;
  }
}
const Email = {
  to: (a) => new EmailBuilder().to(a),
  subject: (x) => new EmailBuilder().subject(x),
};
// Notifications (import {ContactSales} from '📡', docs/email.md "Notifications"): new ContactSales(), its fields set
// through the form (ContactSales.Form.submit(n)) or one by one, each value checked by the host like
// a model field's; n.submit() queues it: the host renders its subject and body when the request
// succeeds, and queues the message in the request's transaction.
const NOTES = slotMap(); // notification -> { d, v: values by field, sent }
const nstate = (n) => { const s = NOTES.get(n); if (s === undefined) throw new OTypeError('not a notification'); return s; };
const isNotification = (n) => NOTES.has(n);
const buildNotification = (app, d) => {
  d.app = app;
  const proto = {};
  for (let i = 0; i < d.fields.length; i++) {
    const f = d.fields[i];
    defProp(proto, f.name, {
      get() { const v = nstate(this).v[f.name]; return v === undefined ? null : v; },
      set(x) { nstate(this).v[f.name] = x === null || x === undefined ? null : check(d, f, storeForm(f, x)); },
      enumerable: true,
    });
  }
  defProp(proto, 'submit', { value: function () {
    const s = nstate(this);
    if (s.sent) return undefined;
    for (let i = 0; i < d.fields.length; i++) {
      const f = d.fields[i];
      const v = s.v[f.name];
      if (!f.optional && (v === undefined || v === null || v === '')) throw invalid(d.name, f.name, f.label + ' is required');
    }
    const v = fx(d.name + '.submit()');
    if (v.notes.length >= MAX_EFFECTS) throw new ORangeError('a request may send at most ' + MAX_EFFECTS + ' notifications');
    s.sent = true;
    const values = {};
    for (let i = 0; i < d.fields.length; i++) { const x = s.v[d.fields[i].name]; values[d.fields[i].name] = x === undefined ? null : x; }
    push(v.notes, { name: d.name, values: values });
    return undefined;
  } });
  defProp(proto, 'toJSON', { value: function () {
    const s = nstate(this), o = {};
    for (let i = 0; i < d.fields.length; i++) { const x = s.v[d.fields[i].name]; o[d.fields[i].name] = x === undefined ? null : x; }
    return o;
  } });
  freeze(proto);
  const N = function () {
    if (new.target === undefined) throw new OTypeError('create a notification with new ' + d.name + '()');
    const o = OObject.create(proto);
    NOTES.set(o, { d: d, v: {}, sent: false });
    return freeze(o);
  };
  defProp(N, 'name', { value: d.name });
  defProp(N, 'Form', { value: makeFormType(app, '📡.' + d.name, []), enumerable: true });
  return freeze(N);
};

// What the host takes at the end of a request: plain data (never script objects).
const takeEffects = (b) => {
  const v = VFX.get(b);
  if (v === undefined) return undefined;
  VFX.delete(b);
  const cookies = [];
  for (let i = 0; i < v.cookies.length; i++) {
    const c = v.cookies[i];
    if (c.builder === true && !c.submitted) continue;
    push(cookies, { name: c.name, value: c.value, days: c.days, invalidate: c.invalidate });
  }
  const data = {};
  const ks = keys(v.data);
  for (let i = 0; i < ks.length; i++) data[ks[i]] = v.data[ks[i]];
  return { messages: copyMessages(v.messages), data: data, cookies: cookies, emails: v.emails, notifications: v.notes };
};
