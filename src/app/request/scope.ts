/**
 * The modules scripts and views import from (docs/request.md "Where each module can be used"), for one app:
 *
 * - at load, `checkImport(consumer)` tells the compilers whether a name exists;
 * - per request, a `RequestScope` answers `importValue(module, name)`, running each supplier at
 *   most once, lazily, when a consumer first asks for one of its exports.
 */
import { LanewayError, type Code } from '../../diag/index.js';
import { paramName, type ParamValue } from '../../router/index.js';
import type { CompiledScript, RunOutcome, ScriptLimits } from '../../script/index.js';
import { openScriptValue, suggestName, withViewMembers, linkViewRecord, ScriptBudget, takeConsole, takeEffects, utilModule, platformModuleValues, visitorModuleValue, type ModelUseRules, type RequestEffects, type ViewRenderers } from '../../script/index.js';
import { secureContext, Visitor } from '../../session/index.js';
import { formView, freshFormView, type FormType, type FormViewValue } from '../../forms/index.js';
import type { CompiledView, RenderOutput, ViewRecords, ViewRecordType } from '../../template/index.js';
import { WebSafe } from '../../shared/index.js';
import { clientOf, type RequestInfo } from '../endpoint/endpoint.js';
import type { SignedInUser } from '../../auth/index.js';
import { MODEL_FIELD, paramDefinitionOf, type ParamDefinition } from '../definitions/params.js';
import {
  fieldsRecord,
  FormFields,
  listValue,
  parseBody,
  parseBodyBytes,
  parseCookies,
  parseQuery,
  singleValue,
  type FieldMap,
} from '../endpoint/request-data.js';
import type { Consumer, SupplierFile, SupplierIndex } from '../definitions/suppliers.js';
import { CONNECTOR_MODULE, FEATURES, type UnitNeeds } from '../definitions/degrade.js';
import type { AppData, DataRequest } from '../services/data.js';
import type { StaticData } from '../services/static-data.js';
import type { AppProperties } from '../../content/index.js';
import { budgetToken } from '../../script/index.js';
import { forScripts } from './pins.js';

/** Modules that exist in Laneway today. Others (📦, 🗄, 👤, 📧, 📡) arrive with their issues; '🎨' and '🎛' are checked below. */
const REQUEST_MODULES = new Set(['form', 'form[]', 'form{}', '&', '🍪']);
const UTIL = utilModule() as Record<string, unknown>;
const PLATFORM = platformModuleValues() as Record<string, unknown>;

/** The compiled form of each supplier, filled in by the loader. */
export interface SupplierCode {
  file: SupplierFile;
  script?: CompiledScript;
  view?: CompiledView;
  /** A form file: its type, and the realm value scripts get (`NewTask.submit(task)`). */
  form?: FormType;
  formType?: unknown;
}

export interface ModuleSystem {
  suppliers: SupplierIndex;
  code: Map<string, SupplierCode>;
  /** `{param}` definitions by directory (and `dir/name` for `{name}.html`). */
  params: Map<string, ParamDefinition>;
  dev: boolean;
  /** The app's models and store (absent when the app defines no models). */
  data?: AppData | undefined;
  /** The app's static models and their documents (`'🗄'`; absent when /🗄/ defines none). */
  content?: StaticData | undefined;
  /** What the app's views render rich text and images with (given to each request's budget). */
  renderers?: ViewRenderers | undefined;
  /** The limits of every request's budget (DEFAULT_LIMITS with the app's `limits:` of /🎛.yaml). */
  limits: ScriptLimits;
  /** The properties of /🎨.scss (`'🎨'`, and the `🎨` root of views); made at load. */
  properties?: AppProperties | undefined;
  /** `Manage` of `'🎛'` (views): the site's name and icon URL, from /🎛.yaml and /🎛.svg. */
  manage?: Readonly<{ name: string; icon: string | null }> | undefined;
  /** `Role` of `'👤'`: each declared role by name (`Role.Owner` is `'Owner'`). */
  roles?: Readonly<Record<string, string>> | undefined;
  /** Suppliers that need a feature Laneway does not have, by path: the feature (definitions/degrade.ts). */
  degraded?: Map<string, string> | undefined;
  /** Models the app defines that Laneway cannot (ModelSchema `unavailable`): the feature each needs. */
  unavailable?: ReadonlyMap<string, string> | undefined;
  /** What every view sees without an import (`🎨`); made at load. */
  globals?: Record<string, unknown> | undefined;
  log(message: string, fields: Record<string, unknown>): void;
}

/** Names of the path parameters visible at a source directory (and a `{name}.html` page). */
export function paramsInScope(dir: string, fileParam?: string): string[] {
  const names = [...dir.matchAll(/\/\{([^{}/]+)\}/g)].map((m) => m[1]!);
  if (fileParam) names.push(fileParam);
  return names;
}

/**
 * The path parameters in scope of a file in `dir` that name records of a model (`🔗.yaml`
 * `field: 📦.Task.id`), by name: the innermost of one name wins, as at request time.
 */
export function paramModels(system: Pick<ModuleSystem, 'params'>, dir: string, fileParam?: string): Map<string, string> {
  const out = new Map<string, string>();
  const add = (name: string, key: string): void => {
    const def = system.params.get(key);
    const m = def?.form === 'field' ? MODEL_FIELD.exec(def.field) : null;
    if (m) out.set(name, m[1]!);
    else out.delete(name);
  };
  for (const m of dir.matchAll(/\/\{([^{}/]+)\}/g)) add(m[1]!, dir.slice(0, m.index + m[0].length));
  if (fileParam) add(fileParam, dir + '/' + fileParam);
  return out;
}

/** The compile-time import check for one consumer. */
export function importChecker(system: Pick<ModuleSystem, 'suppliers' | 'data' | 'content' | 'properties' | 'degraded' | 'unavailable'>, consumer: Consumer, params: string[], needs?: UnitNeeds) {
  // A verdict that names a feature Laneway does not have (definitions/degrade.ts).
  const lacks = (verdict: string, feature: string): string => (needs ? needs.note(verdict, feature) : verdict);
  return (module: string, name: string): true | string => {
    if (module === '📤') {
      if (name === '*') return "import the supplier values you need by name: import {A, B} from '📤'";
      const found = system.suppliers.resolve(consumer, name);
      if (!found) {
        const missing = `no supplier in scope exports "${name}": export it from a 📤/ file in this directory or a parent`;
        // A page (a view) importing a name no supplier of the app exports answers 501 and the rest
        // serves, as the platform served such apps (definitions/degrade.ts). A name exported out
        // of the page's scope, and any such import of a script or supplier, stays an error.
        return consumer.type === 'endpoint' && consumer.view && !system.suppliers.exportsAnywhere(name) ? lacks(missing, FEATURES.unsupplied) : missing;
      }
      const feature = system.degraded?.get(found.supplier.path);
      return feature === undefined ? true : lacks(`"${name}" comes from ${found.supplier.path}, which needs ${feature}`, feature);
    }
    if (module === '📦' && system.unavailable?.has(name)) {
      const feature = system.unavailable.get(name)!;
      return lacks(`the model ${name} is left out: it is one of the ${feature}`, feature);
    }
    if (module === '🔗') {
      if (name === '*' || name === 'Request' || params.includes(name)) return true;
      return params.length
        ? `"${name}" is not a path parameter here; the parameters in scope are ${params.join(', ')} (and Request)`
        : `"${name}" is not a path parameter: there is no {${name}} directory above this file (Request is always there)`;
    }
    if (REQUEST_MODULES.has(module)) return true;
    if (module === '📧') {
      if (!system.data) return "e-mail needs the app's store; this should not happen: report it";
      return name === 'Email' || name === '*' ? true : `'📧' exports Email (Email.to(address).subject(s).text(t).send()); not "${name}"`;
    }
    if (module === '📡') {
      const notes = system.data?.notifications;
      if (!notes?.size) return 'there are no notifications: define one in /📡/, such as /📡/ContactSales.yaml with its message in /📡/ContactSales/email.txt';
      if (name === '*' || notes.has(name)) return true;
      return `there is no notification "${name}" in /📡/; the notifications are ${[...notes.keys()].join(', ')}`;
    }
    if (module === '🎨') return system.properties ? system.properties.checkImport(name) : 'the app has no /🎨.scss';
    if (module === '👤') {
      const auth = system.data?.authConfig;
      if (!auth) return "users are off: add /👤.yaml (with auth: and providers:) to turn them on; see docs/users.md";
      if (name === '*' || USER_EXPORTS.has(name)) return true;
      return `'👤' exports ${[...USER_EXPORTS].join(', ')}; not "${name}"`;
    }
    if (module === '🎛') {
      const view = consumer.type === 'endpoint' ? consumer.view : consumer.supplier.kind === 'html-supplier';
      if (!view) return "'🎛' is imported by views only: {{% import {Manage} from '🎛' }}";
      return name === 'Manage' || name === '*' ? true : `'🎛' exports Manage (Manage.name, Manage.icon); not "${name}"`;
    }
    if (module === '📦') {
      const ns = system.data?.namespace;
      if (!ns) return "there are no models: define one in /📦/, such as /📦/🌐Task.yaml";
      if (name === '*' || name in ns) return true;
      return `there is no model "${name}" in /📦/; the models are ${Object.keys(ns).join(', ')}`;
    }
    if (module === '🗄') {
      const ns = system.content?.namespace;
      if (!ns) return 'there are no static models: define one in /🗄/, such as /🗄/📄Article.yaml, with its documents in /🗄/Article/';
      if (name === '*' || name in ns) return true;
      return `there is no static model "${name}" in /🗄/; the static models are ${Object.keys(ns).join(', ')}`;
    }
    if (module === 'util') return name === '*' || name in UTIL ? true : `'util' exports ${Object.keys(UTIL).join(', ')}; not "${name}"`;
    // The platform's services: what needs no hosted service (Source) is computed here; the others
    // make the file answer 501 (definitions/degrade.ts).
    if (module === '🔌' && name !== '*' && name in PLATFORM) return true;
    if (module === '🔌') return lacks("'🔌' is the hosting platform's own services (its sources, builds and deployments), which Laneway does not have", FEATURES.platform);
    if (CONNECTOR_MODULE.test(module)) return lacks(`'${module}' is a connector's REST API, which Laneway does not have`, FEATURES.connector);
    return `the module '${module}' is not available in this version of Laneway`;
  };
}

const USER_EXPORTS = new Set(['Me', 'Providers', 'Role', 'SessionId']);

/**
 * `Me` (docs/users.md "`'👤'` in pages and scripts"): in a view, the signed-in user or null
 * (`{{#Me}}…{{/Me}}`, `{{^Me}}…{{/Me}}`); in a script always an object whose `linked` says whether
 * the visitor is signed in (`if (Me.linked) …`). `avatar()` is an inline SVG of the initials: no
 * request to another origin, so no page policy changes for it.
 */
function meValue(user: SignedInUser | null, view: boolean, mayShowAvatar: () => void): unknown {
  if (!user) return view ? null : Object.freeze({ linked: false, id: null, name: null, email: null, avatar: () => new WebSafe('') });
  // The avatar shows the user's name and picture: it takes read on 👤.User.name and 👤.User.picture.
  const avatar = () => {
    mayShowAvatar();
    return new WebSafe(avatarSvg(user.name));
  };
  return Object.freeze({ linked: true, id: user.id, name: user.name, email: user.email, avatar });
}

function avatarSvg(name: string): string {
  const initials = name.split(/\s+/).filter(Boolean).slice(0, 2).map((w) => [...w][0]!.toUpperCase()).join('') || '?';
  let h = 0;
  for (const c of name) h = (h * 31 + c.codePointAt(0)!) % 360;
  const text = initials.replace(/[&<>"']/g, (c) => `&#${c.codePointAt(0)};`);
  return `<svg xmlns="http://www.w3.org/2000/svg" class="avatar" width="32" height="32" viewBox="0 0 32 32" role="img" aria-label="${text}"><circle cx="16" cy="16" r="16" fill="hsl(${h} 45% 45%)"/><text x="16" y="21" text-anchor="middle" font-size="14" font-family="sans-serif" fill="#fff">${text}</text></svg>`;
}

/** `RunContext.request`: a class, not an object literal with a getter (those are slow to make). */
class ScriptRequest {
  readonly #scope: RequestScope;
  readonly path: string;
  constructor(scope: RequestScope) {
    this.#scope = scope;
    this.path = scope.req.path;
  }
  get url(): string {
    return this.#scope.request().url;
  }
}

/** A script supplier's exports, or the error its failure becomes for every consumer. */
function exportsOf(supplier: SupplierFile, outcome: RunOutcome): Record<string, unknown> {
  if (outcome.kind === 'value') return (outcome.value ?? {}) as Record<string, unknown>;
  if (outcome.kind === 'thrown') {
    throw new LanewayError('LW_SUPPLIER_FAILED', `the supplier ${supplier.path} threw`, { status: 500, cause: outcome.value });
  }
  throw outcome.error;
}

/** The value of a fixed-`values:` parameter: `$value` plus one boolean switch per option. */
function paramValue(def: ParamDefinition | undefined, raw: string): unknown {
  if (def?.form !== 'values') return raw;
  const value: Record<string, unknown> = Object.create(null);
  value.$value = raw;
  for (const option of def.values) value[option] = option === raw;
  return value;
}

/**
 * Everything one request can import. Suppliers run lazily, each at most once; their results are
 * shared by every consumer of the request.
 */
export class RequestScope {
  readonly #system: ModuleSystem;
  readonly req: RequestInfo;
  readonly #runs = new Map<SupplierFile, Record<string, unknown> | Promise<Record<string, unknown>>>();
  #body: FieldMap | Promise<FieldMap> | undefined;
  /** The body, once the endpoint has read it (bodyRead): its fields parse without a wait. */
  #bodyBytes: Buffer | undefined;
  #query: FieldMap | undefined;
  #cookies: Map<string, string> | undefined;
  #budget: ScriptBudget | undefined;

  constructor(system: ModuleSystem, req: RequestInfo) {
    this.#system = system;
    this.req = req;
  }

  /**
   * The request's script budget: every script, supplier, function call and view of the request
   * draws from it (docs/scripting.md "The request budget"). Made on first use.
   */
  budget(): ScriptBudget {
    if (this.#budget) return this.#budget;
    this.#budget = new ScriptBudget(this.#system.limits, this.scriptRequest(), this.#system.renderers);
    this.#system.data?.bind(budgetToken(this.#budget), this.dataRequest());
    return this.#budget;
  }

  #data: DataRequest | undefined;
  #visitor: Visitor | null | undefined;

  /** The request's cookies by name. */
  cookies(): Map<string, string> {
    return (this.#cookies ??= parseCookies(this.req.headers.cookie));
  }

  /** The request's visitor (its session is made only when a feature needs one); undefined without a store. */
  visitor(): Visitor | undefined {
    if (this.#visitor === undefined) {
      const ctx = this.#system.data?.visitors;
      this.#visitor = ctx ? new Visitor(ctx, this.cookies().get('sid'), secureContext(clientOf(this.req))) : null;
    }
    return this.#visitor ?? undefined;
  }

  /** `?_form=` of the request: the form state a form view or submission continues from. */
  formId(): string | null {
    const id = (this.#query ??= parseQuery(this.req.query)).get('_form')?.[0];
    return id && id.length <= 200 ? id : null;
  }

  /**
   * A form as views read it: `view` (called with no argument, or a record or `{field: value}`
   * to start from) gives the form instance — the state of `?_form=` when it is this visitor's,
   * with its values and messages, else a fresh one whose id is bound to the visitor (starting
   * its session); groups are members (`{{#SetupForm.OneForm.view}}`).
   */
  formViewType(key: string): Record<string, unknown> | undefined {
    const data = this.#system.data;
    const found = data?.form(key);
    if (!data || !found) return undefined;
    // Made whole (a literal, or from entries), never by assigning a function to a property of an
    // object made before: that costs a hidden class per object in V8 (see shared/slots.ts).
    const view = (init?: unknown) => this.#formView(key, init);
    const groups = [...found.form.groups.keys(), ...found.form.steps.map((s) => s.name)];
    if (groups.length === 0) return Object.freeze({ view });
    return Object.freeze(Object.fromEntries([['view', view], ...groups.map((g) => [g, this.formViewType(`${key}#${g}`)])]));
  }

  #formView(key: string, init: unknown): FormViewValue | Promise<FormViewValue> {
    // A link (`{{#EditTask.view task as form}}`, task from '🔗') shows the record it names.
    const record = linkViewRecord(init);
    if (record !== undefined) return record instanceof Promise ? record.then((r) => this.#formView(key, r)) : this.#formView(key, record);
    const { form, stateKey } = this.#system.data!.form(key)!;
    const visitor = this.visitor();
    if (!visitor) throw new LanewayError('LW_SESSION_UNAVAILABLE', 'forms need the app\'s store, which is not open', { status: 503 });
    const fresh = (): FormViewValue =>
      init === null || typeof init !== 'object'
        ? freshFormView(form, visitor.formToken(stateKey), () => initialValues(form, undefined))
        : formView(form, { id: visitor.formToken(stateKey), values: initialValues(form, init), invalid: false, ready: false });
    const id = this.formId();
    if (id === null) return fresh();
    const state = visitor.formState(id, stateKey);
    const show = (st: Awaited<typeof state>): FormViewValue =>
      st ? formView(form, { id, values: st.values, messages: st.messages.filter((m) => m.type === 'error') as Array<{ type: 'error'; field: string; value: string }>, invalid: !st.ready, ready: st.ready }) : fresh();
    return state instanceof Promise ? state.then(show) : show(state);
  }

  #sessionId(): string | null {
    const sid = this.visitor()?.known;
    const signer = this.#system.data?.visitors?.signer;
    return sid && signer ? signer.mac('session-id', sid) : null;
  }

  /** Whether the request's page shows a fresh form id (its body is then never the same twice). */
  issuedFormToken(): boolean {
    return this.#visitor?.issuedFormToken === true;
  }

  /** Whether the request made its visitor (a session cookie may have to go out). */
  visitorTouched(): boolean {
    return this.#visitor !== undefined && this.#visitor !== null;
  }

  /** The upload addresses the request's scripts made (`newPutUrl`), to count against `uploads`. */
  uploadUrls(): number {
    return this.#data?.uploadUrls ?? 0;
  }

  /** What the request's scripts asked for besides their answer (messages, cookies, e-mail); taken once. */
  takeEffects(): RequestEffects | undefined {
    return this.#budget ? takeEffects(this.#budget) : undefined;
  }

  /**
   * Writes what the request's scripts logged with `console.…` so far to the app's log, with the
   * request id and the script's position (docs/scripting.md "Logging"); one more line says how
   * many were left out past the bound.
   */
  writeConsole(): void {
    const taken = this.#budget ? takeConsole(this.#budget) : undefined;
    if (!taken) return;
    const id = this.req.id;
    for (const l of taken.lines) {
      const at = l.at === undefined ? undefined : /^(.*):(\d+):(\d+)$/.exec(l.at);
      const where = at ? { file: at[1], line: Number(at[2]), column: Number(at[3]) } : {};
      this.#system.log(`${l.at === undefined ? '' : `${l.at}: `}console.${l.level}: ${l.text}`, { id, console: l.level, ...where });
    }
    if (taken.dropped > 0) this.#system.log(`console: ${taken.dropped} more line${taken.dropped === 1 ? '' : 's'} of this request left out (at most 50 per request)`, { id, console: 'warn' });
  }

  /** Per-request values every view sees (`Messages` with the visitor's flash), replacing the app's. */
  #globals: Record<string, unknown> | undefined;
  setGlobals(globals: Record<string, unknown>): void {
    this.#globals = globals;
  }

  /** What the model channel knows of this request: its session and selected containers. */
  dataRequest(): DataRequest {
    if (this.#data) return this.#data;
    const containers: Record<string, string> = {};
    for (const p of this.req.params) {
      const def = this.#paramDef(p);
      const m = def?.form === 'field' ? /^📦\.(\w+)\.\w+$/.exec(def.field) : null;
      if (m) containers[m[1]!] = this.req.paramIds?.get(p) ?? p.value;
    }
    return (this.#data = {
      session: undefined,
      what: `a ${this.req.method} request`,
      containers,
      ...(this.req.user !== undefined && { user: this.req.user?.id ?? null }),
      ...(this.req.permit && { permit: this.req.permit }),
      ...(this.req.permissions && { permissions: this.req.permissions }),
      form: {
        body: () => this.#fields('form'),
        formId: () => this.formId(),
        visitor: () => this.visitor(),
        meter: () => this.budget().meterHost(),
      },
    });
  }

  #paramDef(p: ParamValue): ParamDefinition | undefined {
    return paramDefinitionOf(this.#system.params, p);
  }

  /** RunContext.request of the scripts of this request (the URL is built only if a script reads it). */
  scriptRequest(): { path: string; readonly url: string } {
    return new ScriptRequest(this);
  }

  /** The request as `Request` of `'🔗'` shows it. */
  request(): { url: string; base: string; domain: string } {
    const client = clientOf(this.req);
    const host = client.host || 'localhost';
    const base = `${client.proto}://${host}`;
    return { url: base + this.req.path, base, domain: host.replace(/:\d+$/, '') };
  }

  #fields(module: string): FieldMap | Promise<FieldMap> {
    if (module === '&') return (this.#query ??= parseQuery(this.req.query));
    return (this.#body ??= this.#parseBody());
  }

  /**
   * Tells the scope the request's body, read by its endpoint before the script runs: a script's
   * form imports are then values, not Promises, and a script that waits for nothing else runs
   * without a wait.
   */
  bodyRead(body: Buffer): void {
    this.#bodyBytes = body;
  }

  #parseBody(): FieldMap | Promise<FieldMap> {
    if (this.#bodyBytes === undefined) return parseBody(this.req);
    try {
      return parseBodyBytes(this.req, this.#bodyBytes);
    } catch (e) {
      // A malformed body fails every import of it, after a wait as when it is parsed as it is read.
      const failed = Promise.reject(e);
      failed.catch(() => {});
      return failed;
    }
  }

  /**
   * `importValue` for a script consumer; `'📤'` names resolve through the supplier index. A script
   * supplier's objects and functions come as ScriptValues (see `renderInput` for host copies).
   */
  value(consumer: Consumer, module: string, name: string): unknown {
    switch (module) {
      case '📤': {
        const provider = this.#system.suppliers.resolve(consumer, name);
        if (!provider) throw new LanewayError('LW_SUPPLIER_MISSING', `no supplier provides "${name}"`, { status: 500 });
        const exports = this.#run(provider.supplier);
        const view = provider.supplier.kind === 'html-supplier' ? this.#system.code.get(provider.supplier.path)?.view : undefined;
        // An HTML supplier's pinned URLs are absolute in the HTML a script gets (pins.ts).
        const pick = (e: Record<string, unknown>): unknown => (view ? forScripts(e[provider.name], view, provider.supplier, this.#system, this.req) : e[provider.name]);
        return exports instanceof Promise ? exports.then(pick) : pick(exports);
      }
      case '🔗': {
        if (name === 'Request') return this.request();
        const params = this.req.params;
        if (name === '*') {
          const all: Record<string, unknown> = Object.create(null);
          for (const p of params) all[p.name] = this.#param(p);
          all.Request = this.request();
          return all;
        }
        const p = [...params].reverse().find((x) => x.name === name);
        return p ? this.#param(p) : null;
      }
      case 'util':
        return name === '*' ? UTIL : UTIL[name];
      case '🔌':
        return name === '*' ? PLATFORM : PLATFORM[name];
      case '📦':
      case '🗄': {
        const ns = (module === '📦' ? this.#system.data?.namespace : this.#system.content?.namespace) ?? {};
        if (name === '*') return Object.assign(Object.create(null), ns);
        return ns[name];
      }
      case '🍪': {
        // `Cookie` is the builder that writes cookies; other names read the request's cookies,
        // except the session's own `sid`, which scripts never see.
        if (name === 'Cookie') return visitorModuleValue('Cookie');
        const cookies = this.cookies();
        if (name === '*') {
          const all = Object.assign(Object.create(null), Object.fromEntries(cookies));
          delete all.sid;
          all.Cookie = visitorModuleValue('Cookie');
          return all;
        }
        return name === 'sid' ? null : cookies.get(name) ?? null;
      }
      case '📧':
        return name === '*' ? Object.freeze({ Email: visitorModuleValue('Email') }) : visitorModuleValue('Email');
      case '📡': {
        const ns = this.#system.data?.notificationTypes ?? {};
        return name === '*' ? Object.assign(Object.create(null), ns) : ns[name];
      }
      case '&':
      case 'form':
      case 'form[]':
      case 'form{}': {
        const fields = this.#fields(module);
        const pick = (f: FieldMap) =>
          module === 'form{}' ? new FormFields(f) : name === '*' ? fieldsRecord(f) : module === 'form[]' ? listValue(f, name) : singleValue(f, name);
        return fields instanceof Promise ? fields.then(pick) : pick(fields);
      }
      case '👤': {
        const view = consumer.type === 'endpoint' ? consumer.view : consumer.supplier.kind === 'html-supplier';
        // Only the exports named are made (a page importing Me makes no provider list, no SessionId).
        const make: Record<string, () => unknown> = {
          Me: () => meValue(this.req.user ?? null, view, () => this.#system.data?.requireAvatarRead(this.dataRequest())),
          Providers: () => Object.freeze({ all: Object.freeze(this.#system.data?.auth?.providers((this.#query ??= parseQuery(this.req.query)).get('next')?.[0] ?? null) ?? []) }),
          Role: () => this.#system.roles ?? Object.freeze({}),
          // An opaque name of the visitor's session (never the sid itself, which stays in its
          // HttpOnly cookie): the same for every request of the session, null without one.
          SessionId: () => this.#sessionId(),
        };
        if (name !== '*') return Object.hasOwn(make, name) ? make[name]!() : undefined;
        return Object.freeze(Object.fromEntries(Object.entries(make).map(([k, f]) => [k, f()])));
      }
      case '🎨':
        // Made once at load, frozen: the same object for every request.
        return this.#system.properties?.importValue(name);
      case '🎛': {
        const manage = this.#system.manage;
        return name === '*' ? Object.freeze({ Manage: manage }) : manage;
      }
      default:
        throw new LanewayError('LW_HTTP_INTERNAL', `module '${module}' is not available`);
    }
  }

  #param(p: ParamValue): unknown {
    const def = this.#paramDef(p);
    const m = def?.form === 'field' ? /^📦\.(\w+)\.\w+$/.exec(def.field) : null;
    const data = this.#system.data;
    // A model-backed parameter is a link to the record (docs/request.md "`field:`: a record"):
    // get() loads it.
    if (m && data && data.schema.models.has(m[1]!)) return data.link(m[1]!, this.req.paramIds?.get(p) ?? p.value, this.req.paramRows?.get(p));
    const s = def?.form === 'field' ? /^🗄\.(\w+)\.\w+$/.exec(def.field) : null;
    const content = this.#system.content;
    if (s && content && content.schema.models.has(s[1]!)) return content.link(s[1]!, this.req.paramIds?.get(p) ?? p.value);
    return paramValue(def, p.value);
  }

  /** The exports of a supplier: evaluated on first use, at most once per request (a failure is kept too). */
  #run(supplier: SupplierFile): Record<string, unknown> | Promise<Record<string, unknown>> {
    let run = this.#runs.get(supplier);
    if (!run) {
      try {
        run = this.#evaluate(supplier);
      } catch (e) {
        run = Promise.reject(e);
        run.catch(() => {}); // rejected again to each consumer; not an unhandled rejection
        this.#runs.set(supplier, run);
        throw e;
      }
      this.#runs.set(supplier, run);
    }
    return run;
  }

  /** Without a Promise when the supplier did not wait (script suppliers run synchronously until they do). */
  #evaluate(supplier: SupplierFile): Record<string, unknown> | Promise<Record<string, unknown>> {
    const code = this.#system.code.get(supplier.path);
    const consumer: Consumer = { type: 'supplier', supplier };
    if (code?.view) {
      const view = code.view;
      // An HTML supplier is a function of one argument (`this` in its template) giving web-safe HTML.
      // A failed render fails the view that called it (a ViewRenderError, keeping its position).
      const render = (arg: unknown): WebSafe | Promise<WebSafe> => {
        const out = view.render(this.renderInput(consumer), arg === undefined ? {} : arg);
        const done = (o: RenderOutput): WebSafe => {
          if (o.failed !== undefined) throw o.failed;
          return new WebSafe(o.html);
        };
        return out instanceof Promise ? out.then(done) : done(out);
      };
      return { [supplier.base]: render };
    }
    if (code?.form) return { [supplier.base]: code.formType };
    if (!code?.script) throw new LanewayError('LW_SUPPLIER_MISSING', `the supplier ${supplier.path} did not compile`);
    // Its exports stay in the script realm: scripts of this request import them without a copy
    // (shared, as a module's exports are); views get a host copy (renderInput).
    const outcome = code.script.run({
      importValue: (m, n) => this.value(consumer, m, n),
      request: this.scriptRequest(),
      share: true,
      budget: this.budget(),
    });
    return outcome instanceof Promise ? outcome.then((o) => exportsOf(supplier, o)) : exportsOf(supplier, outcome);
  }

  /** What a view (or HTML supplier) rendered in this request needs. */
  renderInput(consumer: Consumer, onError?: (info: { file: string; line: number; column: number; error: unknown }) => void) {
    return {
      importValue: (m: string, n: string) => {
        // Forms as views read them: a form file's (`📤`), a model's default form (`Task.Form`).
        if (m === '📤') {
          const p = this.#system.suppliers.resolve(consumer, n);
          if (p?.supplier.kind === 'form-supplier') return this.formViewType(p.supplier.path);
        }
        // A notification in a view is its form: {{#ContactSales.Form.view}}.
        if (m === '📡') {
          const data = this.#system.data;
          const formOf = (k: string) => Object.freeze({ Form: this.formViewType(`📡.${k}`) });
          if (n !== '*') return data?.notifications.has(n) ? formOf(n) : undefined;
          return Object.freeze(Object.fromEntries([...(data?.notifications.keys() ?? [])].map((k) => [k, formOf(k)])));
        }
        const v = openScriptValue(this.value(consumer, m, n), this.#system.limits, () => this.budget());
        if (m === '📦' && n !== '*' && v !== null && typeof v === 'object' && this.#system.data?.forms.has(`📦.${n}`)) {
          return withViewMembers(v, { Form: this.formViewType(`📦.${n}`) });
        }
        return v;
      },
      dev: this.#system.dev,
      globals: this.#globals ?? this.#system.globals,
      meter: (length: number) => this.budget().meterHost(length),
      onError:
        onError ??
        ((info: { file: string; line: number; column: number; error: unknown }) => {
          // A refusal (403 of a permission, 404 of a record) is the visitor's answer, not a server error.
          const e = info.error;
          if (e instanceof LanewayError && e.status >= 400 && e.status < 500) return;
          this.#system.log('render error', { id: this.req.id, file: info.file, line: info.line, column: info.column, error: String((e as Error)?.message ?? e) });
        }),
    };
  }
}

/**
 * Compile options that let scripts use the app's models (fluent setters, writes at the end), and
 * check their use at build time; `readOnly` names a script that cannot write ("a GET script").
 */
export function scriptModelOptions(system: Pick<ModuleSystem, 'data' | 'content'>, readOnly?: string, params?: ReadonlyMap<string, string>): { fluent?: ReadonlySet<string>; models?: boolean; modelUse?: ModelUseRules } {
  if (!system.data && !system.content) return {};
  return {
    ...(system.data ? { fluent: system.data.fieldNames } : {}),
    models: true,
    modelUse: { models: system.data?.shapes ?? new Map(), readOnly, staticModels: system.content?.shapes, params },
  };
}

const VIEW_QUERY_MEMBERS = new Set(['asc', 'desc', 'count', 'exists', 'get', 'optional', 'limit', 'distinct']);
const FIELD_METADATA = new Set(['label', 'placeholder', 'about', 'required', 'optional', 'optionLabel']);

/**
 * Build-time check of view paths into '📦' (`{{#Task.all.desc}}`, `{{Task.status.optionLabel s}}`):
 * the model's members, the query members a view may use, an options field's values and metadata.
 */
export function viewMemberChecker(system: Pick<ModuleSystem, 'data' | 'content'>): ((module: string, name: string, segs: readonly string[]) => true | string) | undefined {
  if (!system.data && !system.content) return undefined;
  return (module, name, segs) => {
    const data = module === '📦' ? system.data : module === '🗄' ? system.content : undefined;
    if (!data) return true;
    let model = name;
    let rest = segs;
    if (name === '*') {
      model = segs[0]!;
      rest = segs.slice(1);
    }
    const shape = data.shapes.get(model);
    const def = data.schema.models.get(model);
    if (!shape || !def || rest.length === 0) return true;
    const first = rest[0]!;
    if (!shape.statics.has(first)) return `${model} has no field or query "${first}"`;
    // The default form: {{#Task.Form.view as form}}.
    if (first === 'Form' && module === '📦' && !def.fields.some((f) => f.name === 'Form')) {
      return rest.length === 1 || rest[1] === 'view' ? true : `a view reads ${model}.Form.view (the form instance); not "${rest[1]}"`;
    }
    const field = def.fields.find((f) => f.name === first && !f.builtIn);
    const second = rest[1];
    if (second === undefined) return true;
    if (!field) {
      if (VIEW_QUERY_MEMBERS.has(second) || first === 'get' || first === 'optional') return true;
      // `{{#Profile.me.all}}`: the user's profiles in every container, as `{{#Profile.me}}` (docs/users.md).
      if (first === 'me' && second === 'all' && module === '📦') {
        const third = rest[2];
        return third === undefined || VIEW_QUERY_MEMBERS.has(third) ? true : `a view can read ${[...VIEW_QUERY_MEMBERS].join(', ')} of ${model}.me.all; make other queries in a supplier`;
      }
      return `a view can read ${[...VIEW_QUERY_MEMBERS].join(', ')} of ${model}.${first}; make other queries in a supplier`;
    }
    if (FIELD_METADATA.has(second) || (field.values ?? []).some((v) => v.value === second)) return true;
    if (field.type === 'image' && (second === 'sizeMax' || second === 'isValidFileName')) return true;
    if (field.type === 'options') return `${model}.${first} has no value "${second}"; its values are ${(field.values ?? []).map((v) => v.value).join(', ')}`;
    return VIEW_QUERY_MEMBERS.has(second) ? true : `${model}.${first} has no "${second}": a field gives label, placeholder, about, required and optional`;
  };
}

/** Queries a view may chain that give the same records (docs/views.md "Models in views"). */
const VIEW_SAME_QUERY = new Set(['asc', 'desc', 'limit', 'distinct']);
const VIEW_LINK_MEMBERS = new Set(['id', 'linked', 'get', 'optional', 'exists']);
/** Field types whose value is plain text: `{{{ }}}` escapes it anyway. */
const PLAIN_TEXT_TYPES = new Set(['string', 'uid', 'options']);

/**
 * The record types of views, for the build-time check of field reads (`{{#Task.all as t}}`
 * then `{{t.titel}}`; docs/views.md "Models in views"): what `Task.all`, `Task.get`, a
 * container selection and a path parameter backed by a model give, and what a record has.
 */
export function viewRecords(system: Pick<ModuleSystem, 'data' | 'content' | 'params'>): ViewRecords | undefined {
  if (!system.data && !system.content) return undefined;
  const defOf = (model: string) => system.data?.schema.models.get(model) ?? system.content?.schema.models.get(model);
  const shapeOf = (model: string) => system.data?.shapes.get(model) ?? system.content?.shapes.get(model);
  const isStatic = (model: string) => system.content?.schema.models.has(model) === true;
  const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);
  const of = (module: string, name: string, segs: readonly string[], file: string): ViewRecordType | undefined => {
    if (module === '🔗') {
      if (segs.length !== 0) return undefined;
      const slash = file.lastIndexOf('/');
      const base = file.slice(slash + 1);
      const params = paramModels(system, file.slice(0, slash), base.endsWith('.html') ? paramName(base.slice(0, -'.html'.length)) : undefined);
      const model = params.get(name);
      return model && shapeOf(model) ? { model, link: true } : undefined;
    }
    if (module !== '📦' && module !== '🗄') return undefined;
    let model = name;
    let rest = segs;
    if (name === '*') {
      model = segs[0] ?? '';
      rest = segs.slice(1);
    }
    const def = defOf(model);
    if (!def || (module === '🗄') !== isStatic(model)) return undefined;
    const first = rest[0];
    let i = 1;
    if (first === 'get' || first === 'optional') return rest.length === 1 ? { model, link: false } : undefined;
    const query = first === 'all' || (def.container !== undefined && (first === lowerFirst(def.container) || first === 'any' + def.container));
    if (!query) return undefined;
    for (; i < rest.length && VIEW_SAME_QUERY.has(rest[i]!); i++);
    if (i === rest.length) return { model, link: false };
    if ((rest[i] === 'get' || rest[i] === 'optional') && i === rest.length - 1) return { model, link: false };
    return undefined;
  };
  const read = (type: ViewRecordType, segs: readonly string[]): { error?: string; type?: ViewRecordType; plain?: string } => {
    const def = defOf(type.model);
    const shape = shapeOf(type.model);
    const first = segs[0];
    if (!def || !shape || first === undefined) return {};
    const rest = segs.slice(1);
    const field = def.fields.find((f) => f.name === first);
    if (!field) {
      if (type.link && VIEW_LINK_MEMBERS.has(first)) {
        if (first !== 'get' && first !== 'optional') return {};
        const record = { model: type.model, link: false };
        return rest.length ? read(record, rest) : { type: record };
      }
      if (!type.link && (shape.instance.has(first) || (first === 'get' && isStatic(type.model)))) {
        // task.list: the link to its container.
        const container = def.container !== undefined && first === lowerFirst(def.container) ? { model: def.container, link: true } : undefined;
        if (container && shapeOf(container.model)) return rest.length ? read(container, rest) : { type: container };
        if (first === 'get') return rest.length ? read(type, rest) : { type };
        return {};
      }
      const fields = def.fields.filter((f) => !f.builtIn).map((f) => f.name);
      const hint = suggestName(first, new Set(fields));
      const what = type.link ? `${type.model} (the model this link names)` : type.model;
      return { error: `${what} has no field "${first}"${hint || `; its fields are ${fields.join(', ') || 'none'}`}` };
    }
    if (field.type === 'link' && field.model && shapeOf(field.model)) {
      const link = { model: field.model, link: true };
      return rest.length ? read(link, rest) : { type: link };
    }
    if (rest.length === 0 && PLAIN_TEXT_TYPES.has(field.type)) return { plain: `${type.model}.${field.name}, ${field.list !== undefined ? `a ${field.type} list` : `a ${field.type} field`}` };
    // Other members (rich text's html, embedded fields, image sizes…) are the value's own.
    return {};
  };
  return { of, read };
}

/**
 * Adds the build-time check of view paths into the properties (`{{🎨.ui-home}}`, `{{P.x}}` with
 * `P` imported from '🎨', `{{🎨.hello name}}`: the property exists, takes these arguments) to the
 * view checker `inner`.
 */
export function withPropertyChecks(
  system: Pick<ModuleSystem, 'properties'>,
  inner: ((module: string, name: string, segs: readonly string[]) => true | string) | undefined,
): ViewMemberCheck | undefined {
  const properties = system.properties;
  if (!properties) return inner;
  return (module, name, segs, call) => {
    if (module === '🎨') return properties.checkViewPath(name, segs, call ?? { args: 0, named: [] });
    return inner ? inner(module, name, segs) : true;
  };
}

type ViewMemberCheck = (module: string, name: string, segs: readonly string[], call?: { args: number; named: readonly string[] }) => true | string | { code: Code; message: string };

/** The values a form view starts from: a record (its readable fields) or `{field: value}`. */
function initialValues(form: FormType, init: unknown): Record<string, unknown> | undefined {
  const values: Record<string, unknown> = {};
  // An options field with `init: true` starts at its first value, as a new record would.
  for (const f of form.fields) if (f.definition.type === 'options' && f.definition.init === true && f.definition.values?.length) values[f.name] = f.definition.values[0]!.value;
  if (init === null || typeof init !== 'object') return values;
  const source = init as Record<string, unknown>;
  for (const f of form.fields) {
    const v = source[f.name];
    if (v === undefined || typeof v === 'function') continue;
    values[f.name] = v !== null && typeof v === 'object' && !Array.isArray(v) && 'value' in v ? (v as { value: unknown }).value : v;
  }
  return values;
}
