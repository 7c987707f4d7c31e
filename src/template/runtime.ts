/**
 * Run-time support for generated render code (codegen.ts): the render state, name lookup,
 * escaping, sections, partials and blocks.
 *
 * Sync first, async where needed: every helper that may meet a Promise returns `undefined` when
 * it finished synchronously, or a Promise that settles when its output has been written. Output
 * goes to one string (`S.s`) in order, because nothing renders past a pending Promise until it
 * settles; a template whose values are all at hand never allocates a Promise.
 */
import { randomBytes } from 'node:crypto';
import { BARE, FRESH_FORM, WebSafe, plainText, safeMarkup } from '../shared/index.js';
import { FLUSH_CHARS, type ByteSink } from './bytes.js';
import { chooseString } from './pragma.js';

/** A compiled list of nodes. `at` is the resume point (0 on entry). */
export type Body = (S: RenderState, c: unknown, ind: string, at: number) => void | Promise<void>;

/** Where a node is, for run-time error reports. */
export interface Pos {
  file: string;
  source: string;
  offset: number;
}

/** A partial reference, filled in when the partial's code exists (views link files this way). */
export interface Link {
  fn: Body | undefined;
  /** Inlined SVG markup (for `{{> icon}}` on an svg pragma name). */
  svg?: string;
}

export type Blocks = Record<string, Body>;

export const NO_BLOCKS: Blocks = Object.freeze(Object.create(null) as Blocks);

/** Returned by `look` when no context frame has the name. */
export const MISS: unique symbol = Symbol('miss');

// Alias frames (`{{#list as item}}`) are null-prototype objects keyed by symbols, so no name
// lookup can ever read them as data.
export const ALIAS: unique symbol = Symbol('alias');
export const VAL: unique symbol = Symbol('value');
export const IDX: unique symbol = Symbol('index');
export const LEN: unique symbol = Symbol('length');

interface AliasFrame {
  [ALIAS]: string;
  [VAL]: unknown;
  [IDX]: number;
  [LEN]: number;
}

interface Iteration {
  i: number;
  n: number;
}

/** Partials and parents nesting deeper than this stop rendering (runaway recursion). */
export const MAX_DEPTH = 200;

/** An error raised by the renderer itself (not by a value's method). */
export class RenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderError';
  }
}

/** Whether `e` is the engine's "Maximum call stack size exceeded". */
export function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && /call stack/i.test(e.message);
}

/** Per-render state. One instance per `render` call; never shared. */
/** Section items rendered between two calls of RenderState.meter. */
const METER_EVERY = 1024;

export class RenderState {
  /** The output so far (since the last flush to `out`). */
  s = '';
  /** Views answering a request: the bytes of the output before `s` (written every FLUSH_CHARS characters of `s`). */
  out: ByteSink | null = null;
  /** The context stack: section values and alias frames, innermost last. */
  stack: unknown[];
  /** The object the last looked-up value was read from (`this` for an implicit method call). */
  f: unknown = undefined;
  /** The node being rendered (views), for error reports. */
  p: Pos | null = null;
  blocks: Blocks = NO_BLOCKS;
  /** Block overrides being rendered. */
  active: Body[] = [];
  its: Iteration[] = [];
  depth = 0;
  /** Views: called every METER_EVERY section items (the request's CPU budget); may throw. */
  meter: ((outputLength: number) => void) | null = null;
  k = METER_EVERY;
  /** Views: memoised imported values, by module + NUL + name. */
  imp = new Map<string, unknown>();
  /** Views: page variables (`const`, `default`). */
  vars = new Map<string, unknown>();
  /** Views: files whose `const`/`default` lines ran. */
  entered = new Set<object>();
  year = 0;
  /** The stack a file's declarations are evaluated against. */
  root: unknown[];
  importValue: ((module: string, name: string) => unknown) | null = null;
  globals: Record<string, unknown> | null = null;
  /** Plain API: never wait for a Promise (one in the data is an ordinary object). */
  sync = false;
  /** Plain API, text output: values are never HTML-escaped. */
  text = false;
  /** Plain API: the compiled template of a partial name. */
  partial: ((name: string) => Body | undefined) | null = null;
  /** Plain API: compiles a lambda's result (cached). */
  compile: ((source: string, delims: [string, string]) => Body) | null = null;

  constructor(stack: unknown[]) {
    this.stack = stack;
    this.root = stack.slice();
  }
}

// --- property access -------------------------------------------------------------------------

const BUILTIN_PROTOS = new Set<object>();
for (const ctor of [Object, Function, Array, String, Number, Boolean, Symbol, BigInt, Date, RegExp, Error, Map, Set, WeakMap, WeakSet, Promise, ArrayBuffer, DataView]) {
  BUILTIN_PROTOS.add(ctor.prototype);
}
BUILTIN_PROTOS.add(Object.getPrototypeOf(Uint8Array.prototype));
for (const ctor of [Uint8Array, Int8Array, Uint16Array, Int16Array, Uint32Array, Int32Array, Float32Array, Float64Array, Uint8ClampedArray, BigInt64Array, BigUint64Array]) {
  BUILTIN_PROTOS.add(ctor.prototype);
}
const arrayIterator = Object.getPrototypeOf([][Symbol.iterator]());
BUILTIN_PROTOS.add(arrayIterator);
BUILTIN_PROTOS.add(Object.getPrototypeOf(arrayIterator));
BUILTIN_PROTOS.add(Object.getPrototypeOf(function* () {}).prototype);
BUILTIN_PROTOS.add(Object.getPrototypeOf(function* () {}));
BUILTIN_PROTOS.add(Object.getPrototypeOf(async function () {}));
if (typeof Buffer === 'function') BUILTIN_PROTOS.add(Buffer.prototype);

/**
 * Names under which a built-in prototype holds a function (`pop`, `then`, `toString`), plus
 * `constructor`, `prototype` and `__proto__`. Generated code reads other names straight off the
 * current object (the fast path: at worst it reads a harmless inherited value such as an error's
 * `name`); these always go through `has`, which refuses inherited built-ins, so a template can
 * neither reach `Function` nor call a mutating method.
 */
export const BUILTIN_NAMES = new Set<string>(['__proto__', 'constructor', 'prototype']);
for (const proto of BUILTIN_PROTOS) {
  for (const name of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name)!;
    if (typeof d.value === 'function' || (d.get !== undefined && name === '__proto__')) BUILTIN_NAMES.add(name);
  }
}

function inheritedAllowed(obj: object, key: string): boolean {
  if (key === 'constructor' || key === '__proto__') return false;
  let o = Object.getPrototypeOf(obj) as object | null;
  while (o !== null) {
    if (BUILTIN_PROTOS.has(o)) return false;
    if (Object.hasOwn(o, key)) return true;
    o = Object.getPrototypeOf(o) as object | null;
  }
  return false;
}

/** True when `obj` (an object or function) has `key` as data a template may read. */
export function has(obj: object, key: string): boolean {
  if (Object.hasOwn(obj, key)) return key !== 'constructor' || isPlainData(obj);
  return key in obj && inheritedAllowed(obj, key);
}

/** A JSON-like object (its own `constructor` key is data, not a class). */
function isPlainData(obj: object): boolean {
  const proto = Object.getPrototypeOf(obj) as object | null;
  return typeof obj === 'object' && (proto === null || proto === Object.prototype || proto === BARE);
}

/** Reads `key` of any value the way templates do (undefined when absent or not allowed). */
export function get(v: unknown, key: string): unknown {
  if (v === null || v === undefined) return undefined;
  const t = typeof v;
  if (t === 'object' || t === 'function') return has(v as object, key) ? (v as Record<string, unknown>)[key] : undefined;
  if (t === 'string' && key === 'length') return (v as string).length;
  return undefined;
}

/** A function value whose next path segment is one of its own properties is read, not called. */
function isProp(fn: unknown, key: string): boolean {
  if (key === 'length' || key === 'name' || key === 'prototype' || key === 'caller' || key === 'arguments') return false;
  return has(fn as object, key);
}

export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}

// --- lookup ----------------------------------------------------------------------------------

/** Walks the context stack for `name`; sets `S.f` to the frame. Returns MISS when absent. */
export function look(S: RenderState, name: string): unknown {
  const st = S.stack;
  for (let i = st.length - 1; i >= 0; i--) {
    const f = st[i];
    if (typeof f === 'object') {
      if (f === null) continue;
      const alias = (f as AliasFrame)[ALIAS];
      if (alias !== undefined) {
        if (alias === name) {
          S.f = undefined;
          return (f as AliasFrame)[VAL];
        }
        continue;
      }
      if (has(f, name)) {
        S.f = f;
        return (f as Record<string, unknown>)[name];
      }
    } else if (typeof f === 'function') {
      if (has(f, name)) {
        S.f = f;
        return (f as unknown as Record<string, unknown>)[name];
      }
    }
  }
  return MISS;
}

/** Plain Mustache lookup: like `look`, undefined when absent. */
export function lookPlain(S: RenderState, name: string): unknown {
  const v = look(S, name);
  if (v === MISS) {
    S.f = undefined;
    return undefined;
  }
  return v;
}

/** The current element (`this`, `.`). */
export function current(c: unknown): unknown {
  if (c !== null && typeof c === 'object' && (c as AliasFrame)[ALIAS] !== undefined) return (c as AliasFrame)[VAL];
  return c;
}

/** `$first` / `$last` of the innermost iteration. */
export function edge(S: RenderState, last: boolean): boolean {
  const it = S.its[S.its.length - 1];
  if (it === undefined) return false;
  return last ? it.i === it.n - 1 : it.i === 0;
}

/** `item$first` / `item$last`: the alias frame named `alias`; MISS when there is none. */
export function aliasEdge(S: RenderState, alias: string, last: boolean): unknown {
  const st = S.stack;
  for (let i = st.length - 1; i >= 0; i--) {
    const f = st[i];
    if (f !== null && typeof f === 'object' && (f as AliasFrame)[ALIAS] === alias) {
      const a = f as AliasFrame;
      return last ? a[IDX] === a[LEN] - 1 : a[IDX] === 0;
    }
  }
  return MISS;
}

/** An imported value, asked for once per render. */
export function imported(S: RenderState, key: string, module: string, name: string): unknown {
  S.f = undefined;
  const memo = S.imp;
  let v = memo.get(key);
  if (v === undefined && !memo.has(key)) {
    v = S.importValue!(module, name);
    memo.set(key, v);
    if (isThenable(v)) {
      v.then(
        (x) => memo.set(key, x),
        () => undefined,
      );
    }
  }
  return v;
}

/** A page variable (`const`/`default`), else a global (`🎨`, `Messages`). */
export function pageValue(S: RenderState, name: string): unknown {
  S.f = undefined;
  const vars = S.vars;
  if (vars.size !== 0 && vars.has(name)) return vars.get(name);
  const g = S.globals;
  if (g !== null && Object.hasOwn(g, name)) return g[name];
  return undefined;
}

/**
 * Follows `segs[i..n)` from `v`. A function met on the way is called (a zero-argument method:
 * `article.get.content`) unless the next segment is its own property (`Task.all`). With
 * `callLast`, a function at the end is called too; otherwise the value is returned as the holder
 * of `segs[n]`, called if it is a function without that property.
 */
export function follow(v: unknown, self: unknown, segs: readonly string[], i: number, n: number, callLast: boolean): unknown {
  for (;;) {
    if (isThenable(v)) {
      const s = self;
      const j = i;
      return v.then((x) => follow(x, s, segs, j, n, callLast));
    }
    if (i === n) {
      if (typeof v === 'function' && (callLast ? true : n < segs.length && !isProp(v, segs[n]!))) {
        const r = (v as (this: unknown) => unknown).call(self);
        if (!callLast && isThenable(r)) return r.then((x) => follow(x, undefined, segs, n, n, false));
        return r;
      }
      return v;
    }
    if (typeof v === 'function' && !isProp(v, segs[i]!)) {
      v = (v as (this: unknown) => unknown).call(self);
      if (isThenable(v)) continue;
    }
    if (v === null || v === undefined) return undefined;
    self = v;
    v = get(v, segs[i]!);
    i++;
  }
}

/** Plain Mustache: follows a dotted name; a final function is left for lambda handling. */
export function followPlain(S: RenderState, v: unknown, self: unknown, segs: readonly string[]): unknown {
  for (let i = 0; i < segs.length; i++) {
    if (typeof v === 'function') v = (v as (this: unknown) => unknown).call(self);
    if (v === null || v === undefined) return undefined;
    self = v;
    v = get(v, segs[i]!);
  }
  S.f = self;
  return v;
}

/** Calls a zero-argument method found by lookup (views). */
export function call0(fn: unknown, self: unknown): unknown {
  return (fn as (this: unknown) => unknown).call(self);
}

/**
 * `{{ fn a b k=v }}`: calls the last segment of a path with positional arguments and, when there
 * are `k=v` pairs, one object built from them. Arguments that are Promises are awaited first.
 */
export function invoke(
  v: unknown,
  self: unknown,
  segs: readonly string[],
  args: unknown[],
  keys: readonly string[] | null,
  text: string,
): unknown {
  const n = segs.length;
  if (n > 0) {
    const holder = follow(v, self, segs, 0, n - 1, false);
    if (isThenable(holder)) return holder.then((h) => apply(get(h, segs[n - 1]!), h, args, keys, text));
    return apply(get(holder, segs[n - 1]!), holder, args, keys, text);
  }
  if (isThenable(v)) return v.then((f) => apply(f, undefined, args, keys, text));
  return apply(v, self, args, keys, text);
}

function apply(fn: unknown, self: unknown, args: unknown[], keys: readonly string[] | null, text: string): unknown {
  for (const a of args) {
    if (isThenable(a)) return Promise.all(args).then((vals) => apply(fn, self, vals, keys, text));
  }
  if (isThenable(fn)) return fn.then((f) => apply(f, self, args, keys, text));
  if (typeof fn !== 'function') throw new RenderError(`"${text}" is not a function, so it cannot take arguments`);
  let list = args;
  if (keys !== null) {
    const named: Record<string, unknown> = {};
    const first = args.length - keys.length;
    for (let k = 0; k < keys.length; k++) named[keys[k]!] = args[first + k];
    list = args.slice(0, first);
    list.push(named);
  }
  return (fn as (...a: unknown[]) => unknown).apply(self, list);
}

// --- output ----------------------------------------------------------------------------------

const ESCAPED = /[&<>"']/;

/** Escapes `& < > " '` for HTML text and attribute values. */
export function escapeHtml(s: string): string {
  if (!ESCAPED.test(s)) return s;
  let out = '';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    let rep: string;
    switch (s.charCodeAt(i)) {
      case 38:
        rep = '&amp;';
        break;
      case 60:
        rep = '&lt;';
        break;
      case 62:
        rep = '&gt;';
        break;
      case 34:
        rep = '&quot;';
        break;
      case 39:
        rep = '&#39;';
        break;
      default:
        continue;
    }
    if (i > last) out += s.slice(last, i);
    out += rep;
    last = i + 1;
  }
  return last < s.length ? out + s.slice(last) : out;
}

/** Text of a value as Mustache prints it ('' for null and undefined). */
export function str(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'function' || typeof v === 'symbol') return '';
  try {
    return String(v);
  } catch {
    return '';
  }
}

/**
 * Writes a value (views). `raw` lets a WebSafe value through unescaped; every other value is
 * escaped, whatever the tag.
 */
export function out(S: RenderState, v: unknown, raw: boolean): void | Promise<void> {
  switch (typeof v) {
    case 'string':
      S.s += escapeHtml(v);
      return;
    case 'number':
    case 'bigint':
      S.s += String(v);
      return;
    case 'boolean':
      S.s += v ? 'true' : 'false';
      return;
    case 'object':
      if (v === null) return;
      if (v instanceof WebSafe) {
        S.s += raw ? v.html : escapeHtml(v.html);
        return;
      }
      if (isThenable(v)) return Promise.resolve(v).then((x) => out(S, x, raw));
      if (!raw) {
        // A rich-text value prints its source in {{ }}, escaped; its HTML only in {{{ }}}.
        const text = plainText(v);
        if (text !== undefined) {
          S.s += escapeHtml(text);
          return;
        }
      }
      {
        const markup = safeMarkup(v);
        if (markup !== undefined) {
          S.s += raw ? markup : escapeHtml(markup);
          return;
        }
      }
      S.s += escapeHtml(str(v));
      return;
    default:
      return;
  }
}

const JSON_UNSAFE = /[<>&\u2028\u2029]/g;
const JSON_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/**
 * JSON text safe inside a `<script>` element: `<`, `>`, `&`, U+2028 and U+2029 written as `\uXXXX`
 * escapes, so no value can end the element (`</script>`), open a comment (`<!--`) or break a
 * line for an older JavaScript parser.
 */
export function scriptSafeJson(json: string): string {
  return json.replace(JSON_UNSAFE, (c) => JSON_ESCAPES[c]!);
}

/** A string as the body of a JSON string literal (no quotes around it), script-safe. */
export function jsonStringBody(s: string): string {
  const quoted = JSON.stringify(s);
  return scriptSafeJson(quoted.slice(1, -1));
}

/** A value as JSON text, script-safe: what has no JSON form (undefined, a function) is `null`. */
export function jsonValue(v: unknown): string {
  const markup = safeMarkup(v);
  if (markup !== undefined) v = markup;
  const json = JSON.stringify(v) as string | undefined;
  return json === undefined ? 'null' : scriptSafeJson(json);
}

/**
 * Writes a value inside a JSON data block (views): `inString`, as the body of the string it
 * stands in; otherwise as a whole JSON value.
 */
/**
 * `{{{input.attributes}}}` between the attributes of a start tag: web-safe text only (a form
 * control's attributes, made by Laneway). Anything else — a string from data above all, which
 * could add an attribute even escaped — prints nothing there.
 */
export function outAttributes(S: RenderState, v: unknown): void | Promise<void> {
  if (isThenable(v)) return Promise.resolve(v).then((x) => outAttributes(S, x));
  const markup = v instanceof WebSafe ? v.html : v !== null && typeof v === 'object' ? safeMarkup(v) : undefined;
  // And only a list of attributes with double-quoted values: nothing that could end the tag.
  if (markup !== undefined && ATTRIBUTE_LIST.test(markup)) S.s += markup;
}

// Each name is read whole (the lookahead): `(?:\s*[a-z][a-z0-9-]*…)*` could split a long name
// every way, and tried them all before failing (docs/architecture.md "Regular expressions on what
// a visitor sends"). The same lists match.
export const ATTRIBUTE_LIST = /^\s*(?:[a-z][a-z0-9-]*(?![a-z0-9-])(?:="[^"<>]*")?\s*)*$/;

export function outJson(S: RenderState, v: unknown, inString: boolean): void | Promise<void> {
  if (isThenable(v)) return Promise.resolve(v).then((x) => outJson(S, x, inString));
  S.s += inString ? jsonStringBody(safeMarkup(v) ?? str(v)) : jsonValue(v);
}

/** Writes a value (plain API): raw tags print strings as they are. */
export function outPlain(S: RenderState, v: unknown, raw: boolean): void {
  const s = str(v);
  S.s += raw || S.text ? s : escapeHtml(s);
}

// --- sections --------------------------------------------------------------------------------

function aliasFrame(name: string, value: unknown, i: number, n: number): AliasFrame {
  const f = Object.create(null) as AliasFrame;
  f[ALIAS] = name;
  f[VAL] = value;
  f[IDX] = i;
  f[LEN] = n;
  return f;
}

function chunk(list: readonly unknown[], size: number): unknown[][] {
  const groups: unknown[][] = [];
  for (let i = 0; i < list.length; i += size) groups.push(list.slice(i, i + size));
  return groups;
}

async function collect(v: AsyncIterable<unknown>): Promise<unknown[]> {
  const items: unknown[] = [];
  for await (const item of v) items.push(item);
  return items;
}

/**
 * Lazy lists (a query of models in a view) give their items, or a Promise of them, when a
 * section asks: `v[Symbol.for('laneway.list')]()`.
 */
const LAZY_LIST = Symbol.for('laneway.list');

/** Turns iterables other than strings and arrays into arrays; returns `v` unchanged otherwise. */
function listOf(v: object): unknown {
  const lazy = (v as { [LAZY_LIST]?: () => unknown })[LAZY_LIST];
  if (typeof lazy === 'function') return lazy.call(v);
  if (typeof (v as Iterable<unknown>)[Symbol.iterator] === 'function') return Array.from(v as Iterable<unknown>);
  if (typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') return collect(v as AsyncIterable<unknown>);
  return v;
}

/** Mustache falsiness: false, null, undefined, 0, '', NaN and empty lists. */
export function isFalsy(v: unknown): boolean {
  return !v || (Array.isArray(v) && v.length === 0);
}

/** `{{#v}}…{{/v}}` in views: iterate lists (`by` groups them), render once for other truthy values. */
export function section(S: RenderState, v: unknown, body: Body, ind: string, alias: string | null, by: number): void | Promise<void> {
  if (v === null || v === undefined || v === false) return;
  if (Array.isArray(v)) {
    if (v.length === 0) return;
    return loop(S, by > 0 ? chunk(v, by) : v, body, ind, alias);
  }
  if (typeof v === 'object') {
    if (isThenable(v)) return Promise.resolve(v).then((x) => section(S, x, body, ind, alias, by));
    if (!(v instanceof WebSafe) && !(S.sync && typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function')) {
      const list = listOf(v);
      if (list !== v) {
        if (isThenable(list)) return Promise.resolve(list).then((x) => section(S, x, body, ind, alias, by));
        return section(S, list, body, ind, alias, by);
      }
    }
  } else if (!v) {
    return;
  }
  if (by > 0) return loop(S, [[v]], body, ind, alias);
  if (!S.sync && (v as { [FRESH_FORM]?: object })[FRESH_FORM] !== undefined && freshSection(S, v as FreshView, body, ind, alias)) return;
  const frame = alias === null ? v : aliasFrame(alias, v, 0, 1);
  S.stack.push(frame);
  const r = body(S, frame, ind, 0);
  if (r !== undefined) {
    return r.then(() => {
      S.stack.pop();
    });
  }
  S.stack.pop();
}

function loop(S: RenderState, list: readonly unknown[], body: Body, ind: string, alias: string | null): void | Promise<void> {
  const it: Iteration = { i: 0, n: list.length };
  S.its.push(it);
  const frame = alias === null ? null : aliasFrame(alias, undefined, 0, list.length);
  const top = S.stack.length;
  S.stack.push(undefined);
  return loopFrom(S, list, 0, body, ind, frame, it, top);
}

function loopFrom(
  S: RenderState,
  list: readonly unknown[],
  from: number,
  body: Body,
  ind: string,
  frame: AliasFrame | null,
  it: Iteration,
  top: number,
): void | Promise<void> {
  const n = list.length;
  for (let i = from; i < n; i++) {
    const item = list[i];
    if (!S.sync && isThenable(item)) {
      return Promise.resolve(item).then((x) => {
        const r = renderItem(S, x, i, body, ind, frame, it, top);
        if (r !== undefined) return r.then(() => loopFrom(S, list, i + 1, body, ind, frame, it, top));
        return loopFrom(S, list, i + 1, body, ind, frame, it, top);
      });
    }
    const r = renderItem(S, item, i, body, ind, frame, it, top);
    if (r !== undefined) return r.then(() => loopFrom(S, list, i + 1, body, ind, frame, it, top));
  }
  S.stack.length = top;
  S.its.pop();
}

function renderItem(S: RenderState, item: unknown, i: number, body: Body, ind: string, frame: AliasFrame | null, it: Iteration, top: number): void | Promise<void> {
  if (S.out !== null && S.s.length > FLUSH_CHARS) {
    S.out.write(S.s);
    S.s = '';
  }
  if (S.meter !== null && --S.k < 0) {
    S.k = METER_EVERY;
    S.meter(S.s.length + (S.out === null ? 0 : S.out.chars));
  }
  it.i = i;
  let c = item;
  if (frame !== null) {
    frame[VAL] = item;
    frame[IDX] = i;
    c = frame;
  }
  S.stack[top] = c;
  return body(S, c, ind, 0);
}

/** Plain API sections: synchronous only, so a Promise in the data is an ordinary (truthy) object. */
export function sectionPlain(S: RenderState, v: unknown, body: Body, ind: string): void {
  if (isThenable(v)) {
    S.stack.push(v);
    body(S, v, ind, 0);
    S.stack.pop();
    return;
  }
  void section(S, v, body, ind, null, 0);
}

/** `{{^v}}…{{/v}}`: renders once, in the current context, when `v` is falsy or an empty list. */
export function inverted(S: RenderState, v: unknown, body: Body, ind: string, c: unknown): void | Promise<void> {
  if (v !== null && typeof v === 'object') {
    if (isThenable(v)) return Promise.resolve(v).then((x) => inverted(S, x, body, ind, c));
    if (!Array.isArray(v) && !(v instanceof WebSafe) && !(S.sync && typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function')) {
      const list = listOf(v);
      if (list !== v) {
        if (isThenable(list)) return Promise.resolve(list).then((x) => inverted(S, x, body, ind, c));
        return inverted(S, list, body, ind, c);
      }
    }
  }
  if (isFalsy(v)) return body(S, c, ind, 0);
}

/** `{{#$any a b}}` / `{{#$all a b}}` (and their inverted forms): renders once, in the current context. */
export function test(S: RenderState, values: unknown[], all: boolean, invert: boolean, body: Body, ind: string, c: unknown): void | Promise<void> {
  for (const v of values) {
    if (isThenable(v)) return Promise.all(values).then((vals) => test(S, vals, all, invert, body, ind, c));
  }
  let ok = all;
  for (const v of values) {
    if (all ? isFalsy(v) : !isFalsy(v)) {
      ok = !all;
      break;
    }
  }
  if (ok !== invert) return body(S, c, ind, 0);
}

// --- fresh forms -----------------------------------------------------------------------------
//
// A section over a fresh form view (`{{#Note.Form.view as form}}…`) renders the same markup for
// every visitor but for the form's id (src/shared/fresh-form.ts). The first time, it is rendered
// alone: against a view whose id is a placeholder, with nothing else in reach. If what it printed
// came from the view alone (no name looked up outside it, no import, global, page variable, block,
// outer iteration or year) and the id was printed as it is wherever it was read, the markup is kept
// in pieces around the id; each later render joins the pieces with its own id
// (docs/architecture.md "Fresh forms in views").

interface FreshView {
  readonly id: unknown;
  readonly [FRESH_FORM]: object;
}

/** Stands for the id while a section is rendered alone: shaped like one (src/session/tokens.ts), so every escaping leaves it as it is. */
const PLACEHOLDER = (() => {
  const b = randomBytes(54);
  let day = '';
  for (let i = 0; i < 8; i++) day += (b[i]! % 36).toString(36);
  return `f${day}.${b.subarray(8, 17).toString('base64url')}.${b.subarray(17, 41).toString('base64url')}`;
})();
/** What an id may hold for its text to print unchanged in HTML, in attributes and in JSON strings. */
const ID_TEXT = /^[\w.-]*$/;

/** Kept markup by body, then by the form's shared field views, then by alias and indentation; null when a section cannot be kept. */
const freshMarkup = new WeakMap<Body, WeakMap<object, Map<string, string[] | null>>>();

/** Writes the section from its kept markup; false when it cannot be (then it renders as usual). */
function freshSection(S: RenderState, v: FreshView, body: Body, ind: string, alias: string | null): boolean {
  const id = v.id;
  if (typeof id !== 'string' || !ID_TEXT.test(id)) return false;
  let byForm = freshMarkup.get(body);
  if (byForm === undefined) freshMarkup.set(body, (byForm = new WeakMap()));
  let byKey = byForm.get(v[FRESH_FORM]);
  if (byKey === undefined) byForm.set(v[FRESH_FORM], (byKey = new Map()));
  const key = alias === null ? ind : alias + '\0' + ind;
  let parts = byKey.get(key);
  if (parts === undefined) {
    parts = renderAlone(S, v, body, ind, alias);
    byKey.set(key, parts);
  }
  if (parts === null) return false;
  let out = parts[0]!;
  for (let i = 1; i < parts.length; i++) out += id + parts[i]!;
  S.s += out;
  return true;
}

/** Set when a section rendered alone reached past its form view. */
let reachedOut = false;
const reach = (): undefined => {
  reachedOut = true;
  return undefined;
};

/** A map that is never empty and holds nothing: page variables and memoised imports, out of reach. */
class OutOfReach<K, V> extends Map<K, V> {
  override get size(): number {
    return 1;
  }
  override has(): boolean {
    reachedOut = true;
    return false;
  }
  override get(): V | undefined {
    return reach();
  }
  override set(): this {
    reachedOut = true;
    return this;
  }
}

/** Globals and blocks out of reach: any read of them is noticed. */
const OUT_OF_REACH_RECORD = new Proxy(Object.create(null) as Record<string, never>, {
  get: reach,
  has: () => (reachedOut = true) && false,
  ownKeys: () => ((reachedOut = true), []),
  getOwnPropertyDescriptor: reach,
});

/** Files entered: asking whether one was (to run its `const` lines) reaches out. */
class NoneEntered extends Set<object> {
  override has(): boolean {
    reachedOut = true;
    return true;
  }
}

/** The iteration outside the section (`$first`, `$last`): out of reach. */
const OUTER_ITERATION: Iteration = Object.freeze({
  get i(): number {
    reachedOut = true;
    return 0;
  },
  get n(): number {
    reachedOut = true;
    return 1;
  },
}) as Iteration;

/** The section rendered with nothing but `v` in reach; its markup in pieces around the id, or null. */
function renderAlone(S: RenderState, v: FreshView, body: Body, ind: string, alias: string | null): string[] | null {
  let reads = 0;
  const view = { ...v } as Record<PropertyKey, unknown>;
  Object.defineProperty(view, 'id', {
    enumerable: true,
    get: () => {
      reads++;
      return PLACEHOLDER;
    },
  });
  Object.freeze(view);
  const frame = alias === null ? view : aliasFrame(alias, view, 0, 1);
  const P = new RenderState([frame]);
  P.blocks = OUT_OF_REACH_RECORD;
  P.globals = OUT_OF_REACH_RECORD;
  P.vars = new OutOfReach();
  P.imp = new OutOfReach();
  P.entered = new NoneEntered();
  P.its = [OUTER_ITERATION];
  P.importValue = reach;
  P.depth = S.depth;
  Object.defineProperty(P, 'year', { get: () => ((reachedOut = true), 0) });
  reachedOut = false;
  try {
    const r = body(P, frame, ind, 0);
    // Waiting on something: the view holds no Promise, so it came from out of reach.
    if (r !== undefined) {
      r.then(undefined, () => undefined);
      return null;
    }
  } catch {
    return null;
  }
  if (reachedOut) return null;
  const parts = P.s.split(PLACEHOLDER);
  return parts.length - 1 === reads ? parts : null;
}

// --- partials and blocks ---------------------------------------------------------------------

function enter(S: RenderState): void {
  if (++S.depth > MAX_DEPTH) throw new RenderError(`partials and layouts nest more than ${MAX_DEPTH} deep (a partial that includes itself?)`);
}

function leave(S: RenderState, saved: Blocks, r: void | Promise<void>): void | Promise<void> {
  if (r !== undefined) {
    return r.then(() => {
      S.blocks = saved;
      S.depth--;
    });
  }
  S.blocks = saved;
  S.depth--;
}

/** `{{> name}}`: renders a partial in the current context, without the caller's block overrides. */
export function partial(S: RenderState, c: unknown, ind: string, fn: Body | undefined): void | Promise<void> {
  if (fn === undefined) return;
  enter(S);
  const saved = S.blocks;
  S.blocks = NO_BLOCKS;
  return leave(S, saved, fn(S, c, ind, 0));
}

/**
 * `{{< name}}…{{/name}}`: renders a parent with these overrides; overrides from further out win.
 * An override is rendered with the overrides in force where it is written (the caller's), not
 * with those of the parent it fills: a parent called inside an override takes its own arguments
 * (a layout's `{{$id}}` does not leak into an item written in one of its blocks), as in
 * mustache.java; the spec's inheritance tests hold either way.
 */
export function parent(S: RenderState, c: unknown, ind: string, fn: Body | undefined, own: Blocks): void | Promise<void> {
  if (fn === undefined) return;
  enter(S);
  const saved = S.blocks;
  const merged = Object.create(null) as Blocks;
  for (const name in own) merged[name] = scoped(own[name]!, saved);
  Object.assign(merged, saved);
  S.blocks = merged;
  return leave(S, saved, fn(S, c, ind, 0));
}

/** An override rendered with the overrides `scope` (those where it was written). */
function scoped(body: Body, scope: Blocks): Body {
  return (S, c, ind, k) => {
    const outer = S.blocks;
    S.blocks = scope;
    const r = body(S, c, ind, k);
    if (r !== undefined) {
      return r.then(() => {
        S.blocks = outer;
      });
    }
    S.blocks = outer;
  };
}

/**
 * `{{$name}}default{{/name}}`: the override in force, else the default content. Inside an
 * override, a block site of the same name shows its default (an override cannot include itself).
 * `dind`: the indentation of the default content, when it differs from an override's.
 */
export function block(S: RenderState, c: unknown, ind: string, name: string, dflt: Body, dind = ind): void | Promise<void> {
  const b = S.blocks[name];
  if (b === undefined || S.active.includes(b)) return dflt(S, c, dind, 0);
  S.active.push(b);
  const r = b(S, c, ind, 0);
  if (r !== undefined) {
    return r.then(() => {
      S.active.pop();
    });
  }
  S.active.pop();
}

/** `{{>*expr}}` in views: a partial (or SVG) of this file chosen by name at run time. */
export function dynamicPartial(S: RenderState, c: unknown, ind: string, name: unknown, table: Record<string, Link>, own: Blocks | null): void | Promise<void> {
  if (isThenable(name)) return Promise.resolve(name).then((n) => dynamicPartial(S, c, ind, n, table, own));
  const key = str(name);
  const link = Object.hasOwn(table, key) ? table[key] : undefined;
  if (link === undefined) return;
  if (link.svg !== undefined) {
    S.s += ind === '' ? link.svg : ind + link.svg + '\n';
    return;
  }
  return own === null ? partial(S, c, ind, link.fn) : parent(S, c, ind, link.fn, own);
}

/** Renders a body into a separate string (lambdas), restoring the output afterwards. */
export function capture(S: RenderState, c: unknown, body: Body): string {
  const saved = S.s;
  const out = S.out;
  S.s = '';
  S.out = null;
  body(S, c, '', 0);
  const result = S.s;
  S.s = saved;
  S.out = out;
  return result;
}

/** Runs a file's `const`/`default` lines against the stack the render started with. */
export function declare(S: RenderState, fn: Body): void | Promise<void> {
  const saved = S.stack;
  S.stack = S.root;
  const r = fn(S, S.root[S.root.length - 1], '', 0);
  if (r !== undefined) {
    return r.then(() => {
      S.stack = saved;
    });
  }
  S.stack = saved;
}

/** Sets a page variable once its value is at hand. */
export function setVar(S: RenderState, name: string, v: unknown): void | Promise<void> {
  if (isThenable(v)) {
    return Promise.resolve(v).then((x) => {
      S.vars.set(name, x);
    });
  }
  S.vars.set(name, v);
}

/** `{{% choose-string map value }}`. */
export function choose(v: unknown, map: ReadonlyMap<string, string>): unknown {
  if (isThenable(v)) return Promise.resolve(v).then((x) => chooseString(map, str(x)));
  return chooseString(map, str(v));
}

// --- plain API lambdas (spec ~lambdas) -------------------------------------------------------

/** `{{lambda}}`: calls it; a string result is rendered as a template (default delimiters). */
export function lambdaValue(S: RenderState, fn: unknown, self: unknown, c: unknown): unknown {
  const v = (fn as (this: unknown) => unknown).call(self);
  if (typeof v !== 'string') return v;
  return capture(S, c, S.compile!(v, ['{{', '}}']));
}

/** `{{#lambda}}…{{/lambda}}`: calls it with the raw section text and renders the result. */
export function lambdaSection(S: RenderState, fn: unknown, self: unknown, c: unknown, ind: string, body: Body, raw: string, delims: [string, string]): void {
  const v = (fn as (this: unknown, text: string) => unknown).call(self, raw);
  if (v === raw) {
    body(S, c, ind, 0);
    return;
  }
  if (typeof v === 'string') {
    S.compile!(v, delims)(S, c, ind, 0);
    return;
  }
  sectionPlain(S, v, body, ind);
}
