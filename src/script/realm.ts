/**
 * The script realm and the membrane between it and the host.
 *
 * One `node:vm` context per process, created on first use, with string code generation disabled.
 * Its global object keeps the standard intrinsics (frozen), but scripts never see it: every name a
 * script uses is resolved at build time to a declaration, an import, or a granted global that the
 * generated code receives as a parameter.
 *
 * Values cross the boundary only through `toRealm` and `toHost`:
 * - plain data is copied (objects, arrays, Dates, web-safe HTML, Redirect builders); an object's
 *   accessors are never called on the realm side, and `__proto__` keys never reach host objects;
 * - a host function becomes a realm function (a bridge) that converts arguments out and results
 *   in, turns host exceptions into realm errors and host Promises into realm Promises — the
 *   script never holds a host function, object or error;
 * - a script function becomes a host function the same way (for function suppliers), and
 *   crossing back unwraps it, so suppliers keep their identity between scripts.
 */
import vm from 'node:vm';
import { performance } from 'node:perf_hooks';
import { LanewayError, type Code } from '../diag/index.js';
import { BARE, WebSafe, bare, slots } from '../shared/index.js';
import { DEFAULT_LIMITS, type ScriptLimits } from './limits.js';
import { FORBIDDEN_MEMBERS, HOOK_MEMBERS } from './names.js';
import { REALM_SOURCE } from './realm-source.js';
import type { RealmHost } from './realm-host.js';
import { ANSWER, type HostChannel, type ModelsDescriptor } from './channel.js';
import { RECORD_LAYOUT } from './records.js';
import { ScriptRedirect, type FlashMessage } from './redirect.js';

/** An opaque value of the realm. */
type RealmValue = unknown;
type RealmFunction = (...args: unknown[]) => unknown;

/** What the realm's code (realm/*.js, assembled by realm-source.ts) returns: its kit (realm/50-freeze.js). */
export interface RealmKit {
  G: object;
  K: object;
  /** The realm's Object.prototype and Array.prototype (frozen). */
  OP: object;
  AP: object;
  newBudget(limits: ScriptLimits, path: string, origin: () => string): RealmBudget;
  /** The console lines of a request's scripts so far, taken (realm/40-globals.js). */
  takeConsole(b: RealmBudget): { lines: Array<{ level: string; text: string; at: string | null }>; dropped: number } | undefined;
  newRun(budget: RealmBudget, imp: (i: number) => unknown): RealmRun;
  /** Starts the budget's clock and makes it current; false when its clock was running already. */
  enter(budget: RealmBudget): boolean;
  /** Stops the budget's clock; no budget is current after it. */
  leave(budget: RealmBudget): void;
  current(): RealmBudget | null;
  setCurrent(budget: RealmBudget | null): void;
  deadInfo(budget: RealmBudget): { code: Code; message: string } | undefined;
  limitsOf(budget: RealmBudget): ScriptLimits;
  usedOf(budget: RealmBudget): number;
  kill(budget: RealmBudget, code: Code, message: string): void;
  renew(budget: RealmBudget, cpuMs: number): boolean;
  newObject(): Record<string, unknown>;
  newArray(): unknown[];
  /** A realm copy of a host array of strings, numbers, booleans and nulls. */
  copyFlat(a: readonly unknown[]): unknown[];
  /** Copies arrays of flat arrays (the rows of a query) in one call. */
  copyRows(rows: ReadonlyArray<readonly unknown[]>): unknown[][];
  newDate(time: number): object;
  dateValue(o: unknown): number | undefined;
  newSafeHtml(html: string): object;
  safeHtmlValue(o: unknown): string | undefined;
  richTextValue(o: unknown): { text: string; key: string } | undefined;
  /** An image of a record (realm/41-models.js ImageRef): its id and its app's image key. */
  imageValue(o: unknown): { id: string; key: string | null } | undefined;
  newRedirect(path: string, query: ReadonlyArray<readonly [string, string]>, hash: string, messages: readonly FlashMessage[], failed: boolean): object;
  redirectState(o: unknown):
    | { path: string; query: Array<[string, string]>; hash: string; messages: FlashMessage[]; failed: boolean; invalid: unknown; form: unknown }
    | undefined;
  signalInfo(e: unknown): { code: Code; message: string } | undefined;
  errorInfo(e: unknown): { name: string; message: string; stack: string; stackOverflow: boolean } | undefined;
  newError(name: string, message: string): object;
  isPromise(v: unknown): boolean;
  fromHost(subscribe: (resolve: (v: unknown) => void, reject: (e: unknown) => void) => void): object;
  subscribe(p: unknown, onValue: (v: unknown) => void, onError: (e: unknown) => void): void;
  bridge(invoke: (self: unknown, args: unknown[], isNew: boolean) => unknown, name?: string): RealmFunction;
  freeze<T>(o: T): T;
  /** Installs one app's models (realm/41-models.js): the namespace object of `'📦'`; `channel` is the realm copy of a HostChannel. */
  models(descriptor: unknown, channel: RealmValue): Record<string, unknown>;
  modelErrorInfo(e: unknown): { kind: 'notFound' | 'invalid'; message: string; messages: unknown } | undefined;
  /** The visitor effects a request's scripts recorded (realm/42-visitor.js), taken once. */
  takeEffects(b: RealmBudget): RequestEffects | undefined;
  /** A form type for scripts (realm/41-models.js): `submit`, `validate`, `get`, and one per group. */
  formType(ns: Record<string, unknown>, key: string, groups: string[]): object;
  /** The notification types of an app (`'📡'`), by name. */
  notifications(ns: Record<string, unknown>): Record<string, unknown>;
  /** The form and submitted values a form's $ModelInvalid carries (for `Redirect.invalid`). */
  formErrorInfo(e: unknown): { key: string; values: unknown; messages: unknown } | undefined;
  /** The `Email` builder of `'📧'` and the `Cookie` class (also importable from `'🍪'`). */
  Email: object;
  Cookie: object;
  /** What a view reads of a record, link, hierarchy value, list or query (may be a realm Promise). */
  viewValue(v: unknown): unknown;
  /** 1 for a query, 2 for a model (its class), 0 otherwise. */
  viewKind(v: unknown): number;
  /** `q.asc()`, `q.count()`, `q.limit(n)`…: the query methods a view may call. */
  viewOp: RealmFunction;
  /** `linkViewOp(link, name)`: a link's `id`, `get`, `optional`, `exists`, or the `record` a view reads its fields from. */
  linkViewOp: RealmFunction;
  /** The names a view reads through a link of this link's model (one frozen array per model). */
  linkViewNames(link: unknown): readonly string[];
  isModelish(v: unknown): boolean;
  modelLink(ns: unknown, model: string, id: string, row?: unknown): unknown;
}

/** A run object of the realm (fields read by generated code; see realm/20-budgets.js). */
export interface RealmRun {
  finish(): void;
}

/** A request budget of the realm (see realm/20-budgets.js Budget). */
export interface RealmBudget {
  readonly __budget: true;
}

export interface Realm {
  kit: RealmKit;
  context: vm.Context;
}

let realm: Realm | undefined;

/** CPU time of the whole process in milliseconds (user + system): the budget's second clock. */
function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** The file name of a script's generated code in stack frames. */
export const SCRIPT_SCHEME = 'laneway-script:';
/** Source text of every script arrow, by the id generate.ts writes into its code (Function#toString). */
const sources: string[] = [];
/** Generated position → script position, by script file. */
const positions = new Map<string, (line: number, column: number) => { line: number; column: number }>();

/** The budget of the request whose script is running now (the caller of a bridge), if any. */
function currentBudget(): ScriptBudget | undefined {
  const { kit } = getRealm();
  const b = kit.current();
  return b === null ? undefined : new ScriptBudget(kit.limitsOf(b), b);
}

/** Registers a script arrow's own text; its id goes into the generated code. */
export function registerSource(text: string): number {
  return sources.push(text) - 1;
}

/** Registers how positions in a script's generated code map back to the script. */
export function registerPositions(file: string, map: (line: number, column: number) => { line: number; column: number }): void {
  positions.set(file, map);
}

/**
 * The budget of one request (docs/scripting.md "The request budget"): every script, supplier,
 * function call and view of the request draws from its CPU time and memory allowance. Made by
 * whoever handles the request (RequestScope) and passed in RunContext.budget and to
 * ScriptValue.toHost / openValue, so that a script function called by host code is charged to the
 * request that calls it.
 */
export class ScriptBudget {
  /** @internal */
  readonly realm: RealmBudget;
  readonly limits: ScriptLimits;
  /** @internal Host wrappers of script functions, made for this request (on first use). */
  wrappers: Map<object, (...args: unknown[]) => unknown> | undefined;

  /** `renderers`: those of the request's app, for the rich text and images its views show (ViewRenderers). */
  constructor(limits: ScriptLimits, request: { path: string; readonly url: string } | RealmBudget, renderers?: ViewRenderers) {
    this.limits = limits;
    if (!('path' in request)) {
      this.realm = request; // the host side of a budget that exists already (see currentBudget)
      return;
    }
    const origin = (): string => {
      try {
        const o = new URL(request.url).origin;
        return o === 'null' ? '' : o;
      } catch {
        return ''; // A relative URL: `Redirect….url` then has no origin.
      }
    };
    this.realm = getRealm().kit.newBudget(limits, request.path, origin);
    if (renderers) budgetRenderers.set(this.realm, renderers);
  }

  /**
   * A fresh allowance for the next stretch of work of a long-lived request (each call of an event
   * stream's polled function, src/app/request/events.ts): CPU used and memory used back to zero, and a CPU
   * limit of `cpuMs`. Returns false (and changes nothing) while script code of the budget runs or
   * once a limit has ended it.
   */
  renew(cpuMs: number): boolean {
    this.#hostCpu = 0;
    this.#stretch = undefined;
    return getRealm().kit.renew(this.realm, cpuMs);
  }

  /** CPU time of host work charged to the budget (views, see chargeHostCpu). */
  #hostCpu = 0;
  /** Process CPU time (ms) when the current stretch of host work was first metered. */
  #stretch: number | undefined;

  /**
   * Meters host work done for the request (a view rendering a long section): called every so
   * often, it charges the process CPU time since the first call of the same synchronous stretch
   * (a stretch ends when the current microtasks have run) and throws the CPU limit, as a 503
   * LanewayError, once the request's scripts and host work together pass the budget; and the
   * memory limit once the output (`outputLength` characters) passes the memory allowance.
   */
  meterHost(outputLength = 0): void {
    const { kit } = getRealm();
    const dead = kit.deadInfo(this.realm);
    if (dead) throw new OutputLimitError(dead.code, dead.message, { status: 503 });
    if (outputLength * 2 > this.limits.memoryMb * 1048576) {
      const message = `made a page larger than the memory allowance (${this.limits.memoryMb} MiB)`;
      kit.kill(this.realm, 'LW_SCRIPT_MEMORY_LIMIT', message);
      throw new OutputLimitError('LW_SCRIPT_MEMORY_LIMIT', `view: ${message}`, { status: 503 });
    }
    const now = processCpuMs();
    if (this.#stretch === undefined) {
      queueMicrotask(() => {
        this.#stretch = undefined;
      });
    } else {
      this.#hostCpu += now - this.#stretch;
      if (this.#hostCpu + kit.usedOf(this.realm) > this.limits.cpuMs) {
        const message = `used more than ${this.limits.cpuMs} ms of CPU`;
        kit.kill(this.realm, 'LW_SCRIPT_CPU_LIMIT', message);
        throw new OutputLimitError('LW_SCRIPT_CPU_LIMIT', `view: ${message}`, { status: 503 });
      }
    }
    this.#stretch = now;
  }

  /** The limit that ended the request, if one did. */
  get exhausted(): { code: Code; message: string } | undefined {
    return getRealm().kit.deadInfo(this.realm);
  }
}

/** The process-wide script realm, created on first use (about a millisecond). */
export function getRealm(): Realm {
  if (realm) return realm;
  const context = vm.createContext(Object.create(null), {
    name: 'laneway-scripts',
    codeGeneration: { strings: false, wasm: false },
  });
  const boot = vm.runInContext(REALM_SOURCE, context, { filename: 'laneway:realm' }) as (host: RealmHost) => RealmKit;
  const kit = boot({
    now: () => performance.now(),
    cpu: processCpuMs,
    source: (id: number) => sources[id],
    frame: (file: string, line: number, column: number) => {
      const name = file.slice(SCRIPT_SCHEME.length);
      const map = positions.get(name);
      if (!map) return undefined;
      const at = map(line, column);
      return `${name}:${at.line}:${at.column}`;
    },
    maxStringLength: DEFAULT_LIMITS.maxStringLength,
    maxArrayLength: DEFAULT_LIMITS.maxArrayLength,
    maxDepth: DEFAULT_LIMITS.maxDepth,
    forbidden: [...FORBIDDEN_MEMBERS],
    hooks: [...HOOK_MEMBERS],
    records: RECORD_LAYOUT,
    answers: ANSWER,
  });
  realm = { kit, context };
  return realm;
}

// ---- identity maps ---------------------------------------------------------------------------
// Side tables (shared/slots.ts), not WeakMaps: many of their keys live for one request.

/** Host function → its realm bridge (static bridges only; bound methods are made per object). */
const bridges = slots<object, RealmFunction>();
/** Realm bridge → the host function it calls. */
const bridged = slots<object, object>();
/** Realm (script) function → its host wrapper, and back. */
const wrapped = slots<object, object>();
/** Realm copy of a host class instance → the instance (so it can be passed back to the host). */
const copies = slots<object, object>();
/** Whether `copies` was ever written (plainJson skips the lookup until then). */
let anyCopies = false;
/** Realm error made from a host error → the host error. */
const hostErrors = slots<object, unknown>();
/** Frozen host object → its frozen realm copy (e.g. the 'util' module, read by every request). */
const frozenCopies = slots<object, RealmValue>();

const hostPush = Array.prototype.push;
const OBJECT_PROTOTYPE_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype));
const SKIP_STATICS = new Set(['length', 'name', 'prototype', 'caller', 'arguments']);

// ---- values kept in the realm -----------------------------------------------------------------

const SHARE = Symbol('ScriptValue');

/**
 * A script's value kept inside the realm (a supplier's export, an endpoint's completion value), so
 * that another script of the same request receives it without a copy: `toRealm` passes it through
 * as the very same realm value. Host code never opens it; `toHost()` gives a host copy (data
 * properties only, within the limits) for views and the HTTP layer. Only this module makes them,
 * so a ScriptValue never wraps a host object.
 */
export class ScriptValue {
  readonly #value: RealmValue;
  readonly #file: string;
  /** The JSON of the value, when it is plain data checked during the run (endpoints, see `plainJson`). */
  readonly json: string | undefined;

  constructor(token: typeof SHARE, value: RealmValue, file: string, json?: string) {
    if (token !== SHARE) throw new TypeError('ScriptValue: made by the script runtime only');
    this.#value = value;
    this.#file = file;
    this.json = json;
  }

  /** A host copy of the value, as `run()` returns without `share` (throws a LanewayError past a limit). */
  toHost(limits: ScriptLimits = DEFAULT_LIMITS, budget?: ScriptBudget | (() => ScriptBudget)): unknown {
    try {
      return toHost(this.#value, limits, typeof budget === 'function' ? lazyBudgetState(budget, this.#file) : { count: 0, size: 0, stack: [], budget, file: this.#file });
    } catch (e) {
      const err = errorToHost(e, this.#file);
      if (err instanceof OutputLimitError) err.message = `${this.#file}: ${err.message}`;
      if (err instanceof LanewayError && !err.file) err.file = this.#file;
      throw err;
    }
  }

  /** @internal The realm value (for toRealm only). */
  static realmValue(v: ScriptValue): RealmValue {
    return v.#value;
  }
}

/** Keeps a realm value in the realm: objects and functions become a ScriptValue, primitives stay as they are. */
export function shareValue(value: RealmValue, file: string, json?: string): unknown {
  return (value !== null && typeof value === 'object') || typeof value === 'function' ? new ScriptValue(SHARE, value, file, json) : value;
}

/** A host view of a value that may be (or resolve to) a ScriptValue: ScriptValues are copied out. */
export function openValue(value: unknown, limits: ScriptLimits = DEFAULT_LIMITS, budget?: ScriptBudget | (() => ScriptBudget)): unknown {
  if (value instanceof ScriptValue) return value.toHost(limits, budget);
  if (value instanceof Promise) return value.then((v: unknown) => (v instanceof ScriptValue ? v.toHost(limits, budget) : v));
  return value;
}

// ---- host → realm ----------------------------------------------------------------------------

/** True when every element is a string, a finite or other number, a boolean or null. */
function flatArray(a: unknown[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    const t = typeof v;
    if (v !== null && t !== 'string' && t !== 'number' && t !== 'boolean') return false;
  }
  return true;
}

/** An array of unfrozen flat arrays (see flatArray). */
function flatRows(a: unknown[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const r = a[i];
    if (!Array.isArray(r) || Object.isFrozen(r) || !flatArray(r)) return false;
  }
  return true;
}

/** Copies a host value into the realm (see the file comment). Never hands out a host object. */
export function toRealm(value: unknown, seen?: Map<object, RealmValue>): RealmValue {
  const kit = realm?.kit ?? getRealm().kit;
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return value;
    case 'symbol':
      return undefined;
    case 'function':
      return bridgeFunction(value as (...a: unknown[]) => unknown);
  }
  if (value === null) return null;
  const obj = value as object;
  if (obj instanceof ScriptValue) return ScriptValue.realmValue(obj);
  if (Array.isArray(obj) && !Object.isFrozen(obj)) {
    // Only strings, numbers, booleans and null (a database row): no cycle or shared value to track.
    if (flatArray(obj)) return kit.copyFlat(obj);
    // Rows (each flat), as a query answers them: copied in one call into the realm.
    if (flatRows(obj)) return kit.copyRows(obj as unknown[][]);
  }
  seen ??= new Map();
  const known = seen.get(obj) ?? frozenCopies.get(obj);
  if (known !== undefined) return known;
  if (wrapped.has(obj)) return wrapped.get(obj);
  if (Array.isArray(obj)) {
    const a = kit.newArray();
    seen.set(obj, a);
    // push, not `a[i] =`: with the realm's Array.prototype frozen, V8 stores elements by index
    // through its slow path (Object.freeze of the prototypes invalidates its "no elements" fast path).
    for (let i = 0; i < obj.length; i++) hostPush.call(a, toRealm(obj[i], seen));
    return a;
  }
  if (obj instanceof Date) return kit.newDate(obj.getTime());
  if (obj instanceof WebSafe) return kit.newSafeHtml(obj.html);
  if (obj instanceof ScriptRedirect) return kit.newRedirect(obj.path, obj.query, obj.hash, obj.messages, obj.failed);
  if (obj instanceof Error) return errorToRealm(obj);
  if (typeof (obj as { then?: unknown }).then === 'function') {
    const thenable = obj as PromiseLike<unknown>;
    return kit.fromHost((resolve, reject) => {
      Promise.resolve(thenable).then(
        (v) => {
          try {
            resolve(toRealm(v));
          } catch (e) {
            reject(errorToRealm(e));
          }
        },
        (e) => reject(errorToRealm(e)),
      );
    });
  }
  const proto = Object.getPrototypeOf(obj);
  const plain = proto === Object.prototype || proto === null || proto === BARE;
  const out = kit.newObject();
  seen.set(obj, out);
  for (const k of Object.keys(obj)) {
    const v = toRealm((obj as Record<string, unknown>)[k], seen);
    // Plain assignment is ~5x faster than defineProperty; it is only wrong for `__proto__` (it
    // would set the prototype) and for names of the frozen Object.prototype (it would throw).
    if (OBJECT_PROTOTYPE_NAMES.has(k)) Object.defineProperty(out, k, { value: v, writable: true, enumerable: true, configurable: true });
    else out[k] = v;
  }
  if (!plain) {
    // A host class instance: its methods become bridges bound to it, its getters a snapshot.
    for (let p = proto; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      for (const k of Object.getOwnPropertyNames(p)) {
        if (k === 'constructor' || Object.prototype.hasOwnProperty.call(out, k) || FORBIDDEN_MEMBERS.has(k)) continue;
        const d = Object.getOwnPropertyDescriptor(p, k)!;
        const v = typeof d.value === 'function' ? bridgeFunction(d.value, obj) : toRealm('value' in d ? d.value : (obj as Record<string, unknown>)[k], seen);
        Object.defineProperty(out, k, { value: v, writable: true, enumerable: false, configurable: true });
      }
    }
    copies.set(out, obj);
    anyCopies = true;
  }
  if (Object.isFrozen(obj) && deeplyShareable(obj)) {
    // Shared by every run from now on, so only when nothing inside can be changed by a script.
    kit.freeze(out);
    frozenCopies.set(obj, out);
  }
  return out;
}

/** True when every value inside a (frozen) host object is a primitive, a function, or itself cached. */
function deeplyShareable(obj: object): boolean {
  for (const k of Object.keys(obj)) {
    const v = (obj as Record<string, unknown>)[k];
    if (v !== null && typeof v === 'object' && !frozenCopies.has(v)) return false;
  }
  return true;
}

/** The realm bridge of a host function (cached unless bound to an instance). */
function bridgeFunction(fn: (...a: unknown[]) => unknown, self?: object): RealmValue {
  if (wrapped.has(fn)) return wrapped.get(fn);
  if (self === undefined) {
    const cached = bridges.get(fn);
    if (cached) return cached;
  }
  const { kit } = getRealm();
  const b = kit.bridge((_this, args, isNew) => {
    let result: unknown;
    try {
      const hostArgs = hostArguments(args);
      result = isNew ? Reflect.construct(fn, hostArgs) : Reflect.apply(fn, self, hostArgs);
      return toRealm(result);
    } catch (e) {
      throw errorToRealm(e);
    }
  }, fn.name);
  if (self === undefined) {
    for (const k of Object.getOwnPropertyNames(fn)) {
      if (SKIP_STATICS.has(k) || FORBIDDEN_MEMBERS.has(k)) continue;
      const d = Object.getOwnPropertyDescriptor(fn, k)!;
      const v = typeof d.value === 'function' ? bridgeFunction(d.value, fn) : toRealm('value' in d ? d.value : (fn as unknown as Record<string, unknown>)[k]);
      Object.defineProperty(b, k, { value: v, enumerable: true });
    }
    kit.freeze(b);
    bridges.set(fn, b);
  }
  bridged.set(b, fn);
  return b;
}

/**
 * The arguments of a bridge call copied out of the realm, each within the limits on its own.
 * Primitives are as they are (a string within the length limit), and the request's budget is made
 * only for an argument that needs it (an object or a function).
 */
function hostArguments(args: ArrayLike<RealmValue>): unknown[] {
  const out = new Array<unknown>(args.length);
  let budget: ScriptBudget | undefined | null = null;
  let limits: ScriptLimits | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === null || a === undefined || typeof a === 'number' || typeof a === 'boolean') {
      out[i] = a;
      continue;
    }
    if (typeof a === 'string' && a.length <= (limits ??= currentLimits()).maxStringLength) {
      out[i] = a;
      continue;
    }
    if (budget === null) budget = currentBudget();
    out[i] = toHost(a, budget?.limits ?? DEFAULT_LIMITS, { count: 0, size: 0, stack: [], budget });
  }
  return out;
}

/** The limits of the budget running now (currentBudget's), without making its host side. */
function currentLimits(): ScriptLimits {
  const { kit } = getRealm();
  const b = kit.current();
  return b === null ? DEFAULT_LIMITS : kit.limitsOf(b);
}

/**
 * What a script sees for a host exception: signals and realm errors pass through unchanged, a host
 * `Error` becomes a realm error of the same name and message (remembered, so the outcome can report
 * the original), and anything else thrown is copied like data.
 */
export function errorToRealm(e: unknown): RealmValue {
  const { kit } = getRealm();
  if (e !== null && typeof e === 'object') {
    if (hostErrors.has(e) || kit.signalInfo(e) || kit.errorInfo(e)) return e;
    if (e instanceof Error) {
      // Laneway's own error class is a host detail: scripts see a plain Error.
      const realmError = kit.newError(e instanceof LanewayError ? 'Error' : e.name, e.message);
      hostErrors.set(realmError, e);
      return realmError;
    }
  }
  try {
    return toRealm(e);
  } catch {
    return kit.newError('Error', 'a host function failed');
  }
}

// ---- realm → host ----------------------------------------------------------------------------

/** Thrown by toHost when an output exceeds a limit (mapped to a 'limit' outcome). */
export class OutputLimitError extends LanewayError {}

interface HostState {
  count: number;
  size: number;
  stack: object[];
  /** The request that receives the value: script functions in it are charged to this budget. */
  budget?: ScriptBudget;
  /** The script the value comes from (named in the errors of its functions). */
  file?: string;
}

/**
 * A HostState whose budget is made on first use: a view that imports a model but only reads its
 * form (`{{#Note.Form.view}}`) never calls into the realm, so it never needs one.
 *
 * A class, not an object literal with a getter: V8 gives each such literal (its getter is a new
 * closure) a hidden class of its own, made in the old generation; at one per request that cost
 * more than a microsecond each in garbage collection.
 */
class LazyBudgetState implements HostState {
  count = 0;
  size = 0;
  stack: object[] = [];
  readonly file: string | undefined;
  #make: () => ScriptBudget;
  #budget: ScriptBudget | undefined;
  constructor(make: () => ScriptBudget, file: string | undefined) {
    this.#make = make;
    this.file = file;
  }
  get budget(): ScriptBudget {
    return (this.#budget ??= this.#make());
  }
}

function lazyBudgetState(make: () => ScriptBudget, file: string | undefined): HostState {
  return new LazyBudgetState(make, file);
}

/** Whether toHost returns `v` itself (or undefined for a symbol): neither an object nor a function. */
function isPrimitive(v: RealmValue): boolean {
  return v === null || (typeof v !== 'object' && typeof v !== 'function');
}

/** toHost of a value isPrimitive says yes to: a string counts towards the output's length. */
function primitiveToHost(v: RealmValue, limits: ScriptLimits, state: HostState): unknown {
  if (typeof v === 'string') {
    countString(v, limits, state);
    return v;
  }
  return typeof v === 'symbol' ? undefined : v;
}

/** Adds a string copied out to the output's length, which may not pass the limit. */
function countString(v: string, limits: ScriptLimits, state: HostState): void {
  state.size += v.length;
  if (state.size > limits.maxStringLength) {
    throw new OutputLimitError('LW_SCRIPT_STRING_LIMIT', `the output is longer than ${limits.maxStringLength} characters`, { status: 503 });
  }
}

/**
 * Copies a realm value out to the host: data properties only (accessors are skipped, never
 * called), no `__proto__` keys, script functions as host wrappers, within the limits (values
 * counted as a tree, so a shared sub-array is counted each time it would be serialised).
 */
export function toHost(value: RealmValue, limits: ScriptLimits, state: HostState = { count: 0, size: 0, stack: [] }): unknown {
  const { kit } = getRealm();
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
    case 'symbol':
      return primitiveToHost(value, limits, state);
    case 'function':
      if (kit.isModelish(value)) return modelToHost(value, limits, state);
      return hostFunction(value as RealmFunction, state.budget, state.file);
  }
  if (value === null) return null;
  const obj = value as object;
  // A script's own objects and arrays (the usual case): none of Laneway's types, nothing to ask the realm.
  const proto = Object.getPrototypeOf(obj);
  if (proto === kit.OP) return plainToHost(obj, limits, state);
  if (proto === kit.AP && Array.isArray(obj)) return arrayToHost(obj, limits, state);
  const copy = enterObject(obj, limits, state);
  if (copy) return copy;
  // Not a plain object (handled above), but maybe an array of another prototype.
  const special = proto !== kit.AP;
  if (special && kit.isModelish(obj)) return modelToHost(obj, limits, state);
  if (special) {
    const time = kit.dateValue(obj);
    if (time !== undefined) return new Date(time);
    const html = kit.safeHtmlValue(obj);
    if (html !== undefined) return new WebSafe(html);
    const rich = kit.richTextValue(obj);
    if (rich !== undefined) {
      const make = renderersOf(state)?.richText(String(rich.key));
      if (make) return make(String(rich.text));
    }
    const image = kit.imageValue(obj);
    if (image !== undefined) {
      const make = image.key === null ? undefined : renderersOf(state)?.images(String(image.key));
      return make ? make(String(image.id)) : null;
    }
  }
  state.stack.push(obj);
  try {
    const rs = special ? kit.redirectState(obj) : undefined;
    if (rs) {
      // The state's arrays are realm arrays: copy them into host arrays of strings.
      const query: Array<[string, string]> = [];
      for (let i = 0; i < rs.query.length; i++) query.push([String(rs.query[i]![0]), String(rs.query[i]![1])]);
      const messages: FlashMessage[] = [];
      for (let i = 0; i < rs.messages.length; i++) messages.push({ type: rs.messages[i]!.type, value: String(rs.messages[i]!.value) });
      return new ScriptRedirect({
        path: String(rs.path),
        query,
        hash: String(rs.hash),
        messages,
        failed: rs.failed,
        invalid: toHost(rs.invalid, limits, state),
        formError: formErrorOf(rs.invalid),
        formState: formErrorOf(rs.form),
        form: toHost(rs.form, limits, state),
      });
    }
    if (Array.isArray(obj)) {
      const out: unknown[] = [];
      for (let i = 0; i < obj.length; i++) out.push(elementToHost(obj[i] as RealmValue, limits, state));
      return out;
    }
    const err = special ? kit.errorInfo(obj) : undefined;
    if (err) return { name: err.name, message: err.message };
    if (!special) return plainFieldsToHost(obj, limits, state);
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(obj)) {
      if (k === '__proto__') continue;
      const d = Object.getOwnPropertyDescriptor(obj, k);
      if (!d || !('value' in d)) continue;
      // A function under a hook name (then, toJSON, …) would be called by host code: never copied.
      if (typeof d.value === 'function' && HOOK_MEMBERS.has(k)) continue;
      out[k] = toHost(d.value, limits, state);
    }
    return out;
  } finally {
    state.stack.pop();
  }
}

/**
 * The checks toHost makes of every object it copies: the count of values, a value that contains
 * itself, the depth; then a realm copy of a host object gives back that object (undefined otherwise).
 */
function enterObject(obj: object, limits: ScriptLimits, state: HostState): object | undefined {
  if (++state.count > limits.maxArrayLength) {
    throw new OutputLimitError('LW_SCRIPT_ARRAY_LIMIT', `the output has more than ${limits.maxArrayLength} values`, { status: 503 });
  }
  if (state.stack.includes(obj)) throw new LanewayError('LW_SCRIPT_BAD_OUTPUT', 'the value is circular (an object contains itself)', { status: 500 });
  if (state.stack.length >= limits.maxDepth) {
    throw new OutputLimitError('LW_SCRIPT_DEPTH_LIMIT', `the output nests deeper than ${limits.maxDepth} levels`, { status: 503 });
  }
  return anyCopies ? copies.get(obj) : undefined;
}

/** toHost of one element or field value: primitives, then the realm's plain objects and arrays, without going through toHost's dispatch. */
function elementToHost(v: RealmValue, limits: ScriptLimits, state: HostState): unknown {
  if (isPrimitive(v)) return primitiveToHost(v, limits, state);
  if (typeof v === 'object') {
    const proto = Object.getPrototypeOf(v);
    const kit = realm!.kit;
    if (proto === kit.OP) return plainToHost(v as object, limits, state);
    if (proto === kit.AP && Array.isArray(v)) return arrayToHost(v, limits, state);
  }
  return toHost(v, limits, state);
}

/** A script's own object (its prototype is the realm's Object.prototype), copied field by field. */
function plainToHost(obj: object, limits: ScriptLimits, state: HostState): unknown {
  const copy = enterObject(obj, limits, state);
  if (copy) return copy;
  state.stack.push(obj);
  try {
    return plainFieldsToHost(obj, limits, state);
  } finally {
    state.stack.pop();
  }
}

/** A script's own array (the realm's Array.prototype), copied element by element. */
function arrayToHost(obj: readonly unknown[], limits: ScriptLimits, state: HostState): unknown {
  const copy = enterObject(obj, limits, state);
  if (copy) return copy;
  state.stack.push(obj);
  try {
    const out: unknown[] = [];
    for (let i = 0; i < obj.length; i++) out.push(elementToHost(obj[i] as RealmValue, limits, state));
    return out;
  } finally {
    state.stack.pop();
  }
}

/**
 * A host copy of a script's own object. Such objects have data properties under string keys only
 * (the subset has no getters, no defineProperty and no symbols, realm/40-globals.js), so `{...obj}`
 * copies them in one step, in Object.keys order: V8 clones an object of a known shape in half the
 * time of a store per key (a page's rows are copied here). Then every value that is not a string,
 * number or boolean is replaced by its own host copy, so nothing of the realm stays behind.
 */
function plainFieldsToHost(obj: object, limits: ScriptLimits, state: HostState): Record<string, unknown> {
  const out: Record<string, unknown> = { ...obj };
  for (const k in out) {
    if (k === '__proto__') {
      // The realm never makes an own property of that name (realm/20-budgets.js FORBID); were one
      // there, it is left out rather than kept as a key of the copy.
      delete out[k];
      continue;
    }
    const v = out[k] as RealmValue;
    if (typeof v === 'string') {
      countString(v, limits, state);
    } else if (isPrimitive(v)) {
      if (typeof v === 'symbol') out[k] = undefined;
    } else if (typeof v === 'function' && HOOK_MEMBERS.has(k)) {
      // A function under a hook name (then, toJSON, …) would be called by host code: never copied.
      delete out[k];
    } else {
      out[k] = elementToHost(v, limits, state);
    }
  }
  return out;
}

/**
 * A record, link, hierarchy value, list, query or model as a view reads it (realm/41-models.js
 * viewValue), computed with the request's budget current (it may load records). Records and links
 * keep their realm value behind the host copy, so that a view passing one back to a script
 * function (`{{#Note.list list as n}}`) passes the record itself.
 */
function modelToHost(value: RealmValue, limits: ScriptLimits, state: HostState): unknown {
  const { kit } = getRealm();
  const kind = kit.viewKind(value);
  if (kind === 1) return new QueryView(value, state.budget, state.file);
  if (kind === 2) return modelView(value as Record<string, RealmValue>, limits, state);
  if (kind === 3) return linkView(value, state);
  const prev = kit.current();
  if (state.budget) kit.setCurrent(state.budget.realm);
  let v: unknown;
  try {
    v = kit.viewValue(value);
  } finally {
    kit.setCurrent(prev);
  }
  const keep = (host: unknown): unknown => {
    if (host !== null && typeof host === 'object' && !Array.isArray(host)) wrapped.set(host, value as object);
    return host;
  };
  if (kit.isPromise(v)) {
    return new Promise((resolve, reject) => kit.subscribe(v, (x) => {
      try {
        resolve(keep(toHost(x, limits, state)));
      } catch (e) {
        reject(e);
      }
    }, (e) => reject(errorToHost(e))));
  }
  return keep(toHost(v, limits, state));
}

/** The symbol of lazy lists: a section asks `v[LAZY_LIST]()` for the items (template/runtime.ts). */
const LAZY_LIST = Symbol.for('laneway.list');

/**
 * A query in a view: nothing runs until a section iterates it (`{{#Task.all as t}}`) or a
 * property asks for a result (`count`, `exists`, `get`); `asc`, `desc` and `distinct` give
 * other queries (`{{#Release.all.desc}}`).
 */
class QueryView {
  readonly #op: (...args: unknown[]) => unknown;

  constructor(query: RealmValue, budget: ScriptBudget | undefined, file: string | undefined) {
    const { kit } = getRealm();
    wrapped.set(this, query as object);
    const op = hostFunction(kit.viewOp, budget, file) as (...args: unknown[]) => unknown;
    this.#op = (...args) => op(this, ...args);
  }

  [LAZY_LIST](): unknown {
    return this.#op('all');
  }
  /** `{{#Profile.me.all}}`: the query itself, as `P.me().all()` is in scripts. */
  get all(): unknown {
    return this;
  }
  get asc(): unknown {
    return this.#op('asc');
  }
  get desc(): unknown {
    return this.#op('desc');
  }
  get distinct(): unknown {
    return this.#op('distinct');
  }
  get count(): unknown {
    return this.#op('count');
  }
  get exists(): unknown {
    return this.#op('exists');
  }
  get get(): unknown {
    return this.#op('get');
  }
  get optional(): unknown {
    return this.#op('optional');
  }
  /** `{{#Task.all.limit 5}}` */
  limit(n: unknown): unknown {
    return this.#op('limit', n);
  }
}

/** A record not read yet (LinkView). */
const UNREAD = Symbol('unread');

/**
 * A link in a view (`{{task.project.name}}`, `{{board.name}}` of a path parameter): its `id`,
 * `linked`, `get`, `optional`, `exists`, and the fields of the record it names, read when a view
 * first asks for one (then kept for the other fields). It prints as its id.
 *
 * The field getters are on a prototype made once per model, and the realm calls go through one
 * host function per request (`hostFunction` keeps it on the budget): a list of links allocates
 * one LinkView per row and one copy of each record read, never a function per field or per row.
 */
class LinkView {
  readonly id: unknown;
  readonly linked: boolean;
  readonly #budget: ScriptBudget | undefined;
  readonly #file: string | undefined;
  #record: unknown = UNREAD;

  constructor(link: RealmValue, id: unknown, state: HostState) {
    wrapped.set(this, link as object);
    this.id = id;
    this.linked = id !== null && id !== undefined;
    this.#budget = state.budget;
    this.#file = state.file;
  }

  #op(name: string): unknown {
    const op = hostFunction(getRealm().kit.linkViewOp, this.#budget, this.#file) as (...args: unknown[]) => unknown;
    return op(this, name);
  }
  /** The record's view copy (null when there is none); a Promise until the store answered. */
  static record(v: LinkView): unknown {
    if (v.#record === UNREAD) {
      const r = v.#op('record');
      v.#record = r;
      if (r instanceof Promise) r.then((x) => (v.#record = x), () => undefined);
    }
    return v.#record;
  }
  static field(v: LinkView, name: string): unknown {
    const r = LinkView.record(v);
    if (r instanceof Promise) return r.then((x) => (x === null || typeof x !== 'object' ? null : (x as Record<string, unknown>)[name]));
    return r === null || typeof r !== 'object' ? null : (r as Record<string, unknown>)[name];
  }
  get(): unknown {
    return this.#op('get');
  }
  optional(): unknown {
    return this.#op('optional');
  }
  exists(): unknown {
    return this.#op('exists');
  }
  toString(): string {
    return this.linked ? String(this.id) : '';
  }
  toJSON(): unknown {
    return this.linked ? this.id : null;
  }
}

/** Per model (its array of names): a LinkView class whose prototype getters read those names. */
const linkViewClasses = new WeakMap<object, new (link: RealmValue, id: unknown, state: HostState) => LinkView>();

function linkView(link: RealmValue, state: HostState): LinkView {
  const { kit } = getRealm();
  const names = kit.linkViewNames(link);
  let View = linkViewClasses.get(names);
  if (View === undefined) {
    View = class extends LinkView {};
    for (let i = 0; i < names.length; i++) {
      const name = String(names[i]);
      Object.defineProperty(View.prototype, name, { get(this: LinkView) { return LinkView.field(this, name); }, enumerable: true });
    }
    Object.freeze(View.prototype);
    linkViewClasses.set(names, View);
  }
  const id = (kit.linkViewOp as unknown as (l: unknown, n: string) => unknown)(link, 'id');
  return new View(link, id, state);
}

/** The record a view's link names, for a form view given the link (null when none); else undefined. */
export function linkViewRecord(v: unknown): unknown {
  return v instanceof LinkView ? LinkView.record(v) : undefined;
}

/**
 * A model in a view (`{{% import {Task} from '📦' }}`): its static entry points — `all`, `asc`,
 * `desc`, `get`, container selection (`Note.list list`), field metadata and options constants
 * (`Task.status.optionLabel t.status`) — as host functions charged to the request.
 *
 * A page reads few of a model's members, and the model is the same on every request: its members
 * are getters on a prototype made once per model, each made into a host value on first read and
 * kept for the rest of the request (in the view's state), instead of copying every member on
 * every request.
 */
interface ModelViewState {
  model: Record<string, RealmValue>;
  limits: ScriptLimits;
  state: HostState;
  members: Map<string, unknown>;
  /** Members of the host's own (withViewMembers). */
  added?: Record<string, unknown>;
}
const modelViews = slots<object, ModelViewState>();
const modelViewProtos = new WeakMap<object, object>();

function modelView(model: Record<string, RealmValue>, limits: ScriptLimits, state: HostState): Record<string, unknown> {
  let proto = modelViewProtos.get(model);
  if (proto === undefined) {
    proto = Object.create(null) as object;
    for (const key of Object.keys(model)) {
      Object.defineProperty(proto, key, { get(this: object) { return modelMember(this, key); }, enumerable: true });
    }
    Object.freeze(proto);
    modelViewProtos.set(model, proto);
  }
  const view = Object.create(proto) as Record<string, unknown>;
  modelViews.set(view, { model, limits, state, members: new Map() });
  wrapped.set(view, model as object);
  return Object.freeze(view);
}

function modelMember(view: object, key: string): unknown {
  const s = modelViews.get(view);
  if (s === undefined) return undefined;
  if (s.members.has(key)) return s.members.get(key);
  const { model, limits, state } = s;
  const v = model[key];
  let out: unknown;
  if (typeof v !== 'function') {
    out = toHost(v, limits, state);
  } else {
    const fn = hostFunction(v as RealmFunction, state.budget, state.file) as Record<string, unknown>;
    // A field's function carries its metadata (label, options constants, optionLabel).
    for (const k of Object.getOwnPropertyNames(v)) {
      if (k === 'length' || k === 'name' || k === 'prototype') continue;
      if (!Object.hasOwn(fn, k)) Object.defineProperty(fn, k, { value: toHost((v as unknown as Record<string, unknown>)[k], limits, state), enumerable: true });
    }
    out = fn;
  }
  s.members.set(key, out);
  return out;
}

/**
 * A model's view with members of the host's own added (a model's default form as `Form`), over
 * the same lazily read members (another object is copied with them added).
 */
export function withViewMembers(view: unknown, members: Record<string, unknown>): unknown {
  if (view === null || typeof view !== 'object') return view;
  const s = modelViews.get(view);
  if (s === undefined) return Object.freeze(Object.assign(bare(), view, members));
  // The added members are getters too, on a prototype made once per model and member names: an
  // own property added to each request's view cost a hidden class in the old generation.
  const base = Object.getPrototypeOf(view) as object;
  const names = Object.keys(members);
  let protos = memberProtos.get(base);
  if (protos === undefined) memberProtos.set(base, (protos = new Map()));
  const signature = names.join('\0');
  let proto = protos.get(signature);
  if (proto === undefined) {
    proto = Object.create(base) as object;
    for (const key of names) {
      Object.defineProperty(proto, key, { get(this: object) { return modelViews.get(this)?.added?.[key]; }, enumerable: true });
    }
    Object.freeze(proto);
    protos.set(signature, proto);
  }
  const out = Object.create(proto) as object;
  modelViews.set(out, { model: s.model, limits: s.limits, state: s.state, members: s.members, added: members });
  wrapped.set(out, s.model as object);
  return Object.freeze(out);
}

/** The prototypes of withViewMembers: per model prototype, per member names. */
const memberProtos = new WeakMap<object, Map<string, object>>();

/**
 * The JSON of a realm value when it is plain data — realm objects and arrays (not copies of host
 * instances), strings, numbers, booleans, null, and what JSON leaves out (undefined, functions) —
 * with no own `toJSON` function and no `__proto__` key, within the limits: then
 * `JSON.stringify` of the realm value itself gives exactly what `serialize(toHost(value))` gives,
 * without the copy. Undefined otherwise (the caller takes the copying path, which reports limits
 * and errors precisely).
 */
export function plainJson(value: RealmValue, limits: ScriptLimits): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { kit } = getRealm();
  const OP = kit.OP;
  const AP = kit.AP;
  const maxCount = limits.maxArrayLength;
  const maxSize = limits.maxStringLength;
  const maxDepth = limits.maxDepth;
  let count = 0;
  let size = 0;
  // A circular value also ends up deeper than maxDepth: the copying path then says which it is.
  const plain = (v: unknown, depth: number): boolean => {
    switch (typeof v) {
      case 'string':
        size += v.length;
        return size <= maxSize;
      case 'object':
        break;
      case 'bigint':
        return false;
      default:
        return true; // number, boolean, undefined, function, symbol
    }
    if (v === null) return true;
    if (++count > maxCount || depth >= maxDepth || (anyCopies && copies.has(v))) return false;
    const proto = Object.getPrototypeOf(v);
    if (proto === AP && Array.isArray(v)) {
      if (Object.hasOwn(v, 'toJSON')) return false;
      const a = v as unknown[];
      for (let i = 0; i < a.length; i++) if (!plain(a[i], depth + 1)) return false;
      return true;
    }
    if (proto !== OP) return false;
    // Own properties of realm objects and arrays are data properties: scripts cannot define
    // accessors (no getter syntax, no defineProperty, __defineGetter__ is refused) and toRealm
    // copies values, so reading them calls nothing.
    // for-in gives the own enumerable string keys here (Object.prototype has no enumerable
    // property), in Object.keys order, and is the fastest way to visit them.
    for (const k in v) {
      if (k === '__proto__') return false;
      const x = (v as Record<string, unknown>)[k];
      // Strings, the usual field value, are counted here rather than in a call (a quarter of the walk).
      if (typeof x === 'string') {
        size += x.length;
        if (size > maxSize) return false;
      } else if (!plain(x, depth + 1) || (k === 'toJSON' && typeof x === 'function')) return false;
    }
    return true;
  };
  if (!plain(value, 0)) return undefined;
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * The host wrapper of a script function: arguments copied in, result (or Promise) copied out. The
 * call is charged to the budget of the request that holds the wrapper; without one (host code
 * outside any request), each call gets a budget of its own with the default limits.
 */
function hostFunction(fn: RealmFunction, budget: ScriptBudget | undefined, file?: string): unknown {
  const original = bridged.get(fn);
  if (original) return original;
  const cached = budget?.wrappers?.get(fn);
  if (cached) return cached;
  const { kit } = getRealm();
  const wrapper = (...args: unknown[]): unknown => {
    const limits = budget?.limits ?? DEFAULT_LIMITS;
    // With a budget, the call is charged to it; without one, a script function charges the run
    // that made it (its code makes that run's budget current on entry).
    const prev = kit.current();
    if (budget) kit.enter(budget.realm);
    let result: unknown;
    try {
      const dead = budget && kit.deadInfo(budget.realm);
      if (dead) throw new OutputLimitError(dead.code, `${file ?? 'script'}: ${dead.message}`, { status: 503 });
      result = Reflect.apply(fn, undefined, args.map((a) => toRealm(a)));
    } catch (e) {
      throw errorToHost(e, file);
    } finally {
      const cur = kit.current();
      if (cur !== null && cur !== prev) kit.leave(cur);
      kit.setCurrent(prev);
    }
    const state = (): HostState => ({ count: 0, size: 0, stack: [], budget, file });
    const settled = (): void => {
      const cur = kit.current();
      if (cur !== null) kit.leave(cur);
    };
    if (kit.isPromise(result)) {
      return new Promise((resolve, reject) => {
        kit.subscribe(
          result,
          (v) => {
            settled();
            try {
              resolve(toHost(v, limits, state()));
            } catch (e) {
              reject(e);
            }
          },
          (e) => {
            settled();
            reject(errorToHost(e, file));
          },
        );
      });
    }
    return toHost(result, limits, state());
  };
  // Host code that prints the function (String(arg)) sees no source of Laneway's.
  Object.defineProperty(wrapper, 'toString', { value: nativeText });
  if (budget) (budget.wrappers ??= new Map()).set(fn, wrapper);
  wrapped.set(wrapper, fn);
  return wrapper;
}

function nativeText(): string {
  return 'function () { [native code] }';
}

/** What a function supplier threw, as seen by host code that called it. */
export class ScriptThrownError extends LanewayError {
  readonly value: unknown;
  constructor(value: unknown) {
    super('LW_SCRIPT_RUNTIME', 'a script function threw a value', { status: 500 });
    this.value = value;
  }
}

/** A host error for anything a script function threw. */
export function errorToHost(e: unknown, file?: string): unknown {
  const { kit } = getRealm();
  if (e instanceof Error) return e;
  const original = e !== null && typeof e === 'object' ? hostErrors.get(e) : undefined;
  if (original !== undefined) return original;
  const sig = kit.signalInfo(e);
  if (sig) {
    return new LanewayError(sig.code, `${file ?? 'script'}: ${sig.message}`, { status: sig.code === 'LW_SCRIPT_FORBIDDEN_ACCESS' ? 500 : 503 });
  }
  const info = kit.errorInfo(e);
  if (info) {
    if (info.stackOverflow) return new LanewayError('LW_SCRIPT_DEPTH_LIMIT', `${file ?? 'script'}: nested calls too deep`, { status: 503 });
    return new LanewayError('LW_SCRIPT_RUNTIME', `${info.name}: ${info.message}`, { status: 500 });
  }
  let value: unknown;
  try {
    value = toHost(e, DEFAULT_LIMITS);
  } catch (inner) {
    return inner;
  }
  return new ScriptThrownError(value);
}

/** The host error a realm error was made from, if any. */
export function hostErrorOf(e: unknown): unknown {
  return e !== null && typeof e === 'object' ? hostErrors.get(e) : undefined;
}

/**
 * How one loaded app's rich-text and image values become host values in views (`{{{post.body}}}`,
 * `{{{post.image}}}`, `post.image.width`): the maker of each Markdown and html field by its
 * rich-text key (`rk` in the model descriptor) and of its images by its image key. Each app load
 * has its own (src/app/load/load.ts gives it to the app's AppData and StaticData), and a request finds
 * its app's through its budget (RequestScope): nothing global refers to one, so it goes with the
 * app a reload replaces, and two apps of one process (a nested site) never use each other's.
 */
export class ViewRenderers {
  readonly #richText = new Map<string, (text: string) => unknown>();
  readonly #images = new Map<string, (id: string) => unknown>();

  /** How a Markdown or html field's value reaches views: `make` turns its source into the host value. */
  registerRichText(key: string, make: (text: string) => unknown): void {
    this.#richText.set(key, make);
  }

  /** What the app's images become in views. */
  registerImages(key: string, make: (id: string) => unknown): void {
    this.#images.set(key, make);
  }

  /** @internal */
  richText(key: string): ((text: string) => unknown) | undefined {
    return this.#richText.get(key);
  }

  /** @internal */
  images(key: string): ((id: string) => unknown) | undefined {
    return this.#images.get(key);
  }
}

/** The renderers of the app whose request a budget is, by its realm budget (see ScriptBudget). */
const budgetRenderers = slots<object, ViewRenderers>();

/** The renderers of the request a value goes to: the state's budget, else the budget running now. */
function renderersOf(state: HostState): ViewRenderers | undefined {
  const budget = state.budget?.realm ?? getRealm().kit.current();
  return budget == null ? undefined : budgetRenderers.get(budget);
}

/**
 * Installs one app's models in the realm (realm/41-models.js): `descriptor` is plain data, `channel`
 * the host methods every query, write and value check goes through (channel.ts; each becomes a
 * bridge). Returns `'📦'`: each model (and global embedded type) as a shared realm value.
 */
export function installModels(
  descriptor: ModelsDescriptor,
  channel: HostChannel,
): { namespace: Record<string, unknown>; notifications: Record<string, unknown>; link(model: string, id: string, row?: unknown[]): unknown; formType(key: string, groups: string[]): unknown } {
  const { kit } = getRealm();
  const ns = kit.models(toRealm(descriptor), toRealm(channel));
  const out: Record<string, unknown> = Object.create(null);
  for (const k of Object.keys(ns)) out[k] = shareValue(ns[k], '/📦');
  const notes = kit.notifications(ns);
  const notifications: Record<string, unknown> = Object.create(null);
  for (const k of Object.keys(notes)) notifications[k] = shareValue(notes[k], '/📡');
  return {
    namespace: out,
    notifications,
    link: (model, id, row) => shareValue(kit.modelLink(ns, model, id, row === undefined ? undefined : toRealm(row)), '/🔗'),
    formType: (key, groups) => shareValue(kit.formType(ns, key, toRealm(groups) as string[]), key),
  };
}

/** What a request's scripts asked for besides their answer (realm/42-visitor.js): plain data. */
export interface RequestEffects {
  messages: Array<{ type: 'success' | 'info' | 'warning' | 'error'; field?: string; value: string }>;
  data: Record<string, string>;
  cookies: Array<{ name: string | null; value: string; days: number | null; invalidate: boolean }>;
  emails: Array<{ to: string[]; subject: string; text: string; replyTo: string | null }>;
  /** Submitted notifications (`n.submit()`): the type's name and its field values. */
  notifications: Array<{ name: string; values: Record<string, unknown> }>;
}

/** Takes (once) the effects recorded on a request's budget: messages, cookies, e-mail. */
/** One line a script logged with `console.…` (docs/scripting.md "Logging"). */
export interface ConsoleLine {
  level: 'log' | 'info' | 'warn' | 'error';
  text: string;
  /** The script's `file:line:column` that logged it, when known. */
  at?: string;
}

/** The console lines of a request's scripts so far (taken: each is given once), and how many were left out. */
export function takeConsole(budget: ScriptBudget): { lines: ConsoleLine[]; dropped: number } | undefined {
  const v = getRealm().kit.takeConsole(budget.realm);
  if (!v) return undefined;
  const lines = Array.from(v.lines, (l): ConsoleLine => ({ level: String(l.level) as ConsoleLine['level'], text: String(l.text), ...(l.at !== null && { at: String(l.at) }) }));
  return { lines, dropped: Number(v.dropped) };
}

export function takeEffects(budget: ScriptBudget): RequestEffects | undefined {
  const e = getRealm().kit.takeEffects(budget.realm);
  if (!e) return undefined;
  // Copied into host arrays of primitives: nothing of the realm outlives this call.
  return {
    messages: Array.from(e.messages, (m) => (m.field === undefined ? { type: m.type, value: String(m.value) } : { type: m.type, field: String(m.field), value: String(m.value) })),
    data: Object.fromEntries(Object.entries(e.data).map(([k, v]) => [String(k), String(v)])),
    cookies: Array.from(e.cookies, (c) => ({ name: c.name === null ? null : String(c.name), value: String(c.value), days: c.days === null ? null : Number(c.days), invalidate: c.invalidate === true })),
    emails: Array.from(e.emails, (m) => ({ to: Array.from(m.to, String), subject: String(m.subject), text: String(m.text), replyTo: m.replyTo === null ? null : String(m.replyTo) })),
    notifications: Array.from(e.notifications, (n) => ({ name: String(n.name), values: Object.fromEntries(Object.keys(n.values).map((k) => [String(k), hostData(n.values[k])])) })),
  };
}

/**
 * The form and the submitted values a form's $ModelInvalid carries, as host data, when `e` (a
 * realm value, `Redirect….invalid(e)`) is one; messages as `{type, field, value}`.
 */
export function formErrorOf(e: unknown): { key: string; values: Record<string, unknown>; messages: Array<{ type: string; field: string; value: string }> } | undefined {
  const info = getRealm().kit.formErrorInfo(e);
  if (!info) return undefined;
  const values: Record<string, unknown> = {};
  const raw = info.values as Record<string, unknown> | null;
  if (raw) for (const k of Object.keys(raw)) values[k] = hostData(raw[k]);
  const messages = Array.from(info.messages as ArrayLike<{ type: unknown; field: unknown; value: unknown }>, (m) => ({ type: String(m.type), field: String(m.field), value: String(m.value) }));
  return { key: String(info.key), values, messages };
}

/**
 * Strings, numbers, booleans, null and arrays of them, copied out of the realm, and one level of
 * objects of those (a form in groups: its texts by group, then field); anything else becomes null.
 */
function hostData(v: unknown, nested = true): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return Array.from(v as unknown[], (x) => (x === null || typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean' ? x : null));
  if (nested && typeof v === 'object' && !Array.isArray(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) out[k] = hostData((v as Record<string, unknown>)[k], false);
    return out;
  }
  return null;
}

/** The realm values of `'📧'` (Email) and `Cookie` of `'🍪'`, shared like the models. */
export function visitorModuleValue(name: 'Email' | 'Cookie'): unknown {
  const { kit } = getRealm();
  return shareValue(name === 'Email' ? kit.Email : kit.Cookie, name === 'Email' ? '/📧' : '/🍪');
}

/** The realm budget whose code is running (an opaque token identifying the request), or null. */
export function currentBudgetToken(): object | null {
  return getRealm().kit.current() as object | null;
}

/** The realm token of a host budget (see currentBudgetToken). */
export function budgetToken(budget: ScriptBudget): object {
  return budget.realm as object;
}
