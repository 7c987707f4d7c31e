/**
 * Wires the data layer to the script runtime for one app (docs/data.md):
 *
 * - at load, the model definitions become the realm's model namespace (`'📦'`), whose one channel
 *   to the host is `channel` below;
 * - at start, `open` connects the store (SQLite in the data directory, or PostgreSQL) and brings
 *   the schema to the definitions;
 * - per request, the request's `DataSession` is found through the request budget whose code is
 *   running: a read session for GET requests, suppliers and views, a write transaction for POST,
 *   PUT and DELETE scripts (begun before the script runs, committed before the answer is sent).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { LanewayError } from '../diag/index.js';
import {
  checkFieldValue,
  hierarchyAfterLast,
  hierarchyBefore,
  hierarchyHasParent,
  hierarchyNext,
  hierarchyParent,
  hierarchyPrevious,
  type FieldDefinition,
  type ModelDefinition,
  type ModelSchema,
} from '../models/index.js';
import { currentBudgetToken, installModels, registerRichText, type ModelShape } from '../script/index.js';
import { RichTextRenderer } from '../content/index.js';

/** Loads of the process: keys of rich-text makers are unique per load. */
let loads = 0;
import { AppStore, StoreError, type DataSession, type QuerySpec, type WriteOp } from '../store/index.js';
import { loadSecret, Signer, VisitorStore, type VisitorContext } from '../session/index.js';
import type { App } from './load.js';

export interface DataOptions {
  /** The data directory (default `.laneway/` inside the app directory; LANEWAY_DATA). */
  dataDir?: string;
  /** `postgres://…` (DATABASE_URL): PostgreSQL instead of SQLite. */
  databaseUrl?: string;
  /** Apply narrowing schema changes (`laneway migrate --accept`). */
  accept?: boolean;
  /** A nested site's data namespace (set by openAppData for mounted sites). */
  namespace?: string;
}

/** The per-request side: what the channel needs of the request that is running. */
export interface DataRequest {
  session: DataSession | undefined;
  /** What the request is, for the read-only error ("a GET script"). */
  what: string;
  /** Model-backed path parameters selecting containers: model name → id. */
  containers: Record<string, string>;
}

/** How often expired visitor state is swept. */
const SWEEP_MS = 10 * 60_000;

const ID_BYTES = 12; // 16 characters of base64url: 96 random bits

export class AppData {
  readonly schema: ModelSchema;
  /** `'📦'` for scripts: shared realm values (models and global embedded types) by name. */
  readonly namespace: Record<string, unknown>;
  /** A link (realm value) to a record: model-backed path parameters. */
  readonly link: (model: string, id: string) => unknown;
  /** The field names of every model (fluent setters, generate.ts). */
  readonly fieldNames: ReadonlySet<string>;
  /** What scripts may name on each model (build-time checks, script/model-use.ts). */
  readonly shapes: ReadonlyMap<string, ModelShape>;
  store: AppStore | undefined;
  /** Sessions, flash messages and form states of the app's visitors (made when the store opens). */
  visitors: VisitorContext | undefined;
  #sweeper: NodeJS.Timeout | undefined;
  readonly #requests = new WeakMap<object, DataRequest>();
  /** Renderers of the Markdown fields by rich-text key; '' renders `Model.markdown(text)`. */
  readonly #renderers = new Map<string, RichTextRenderer>([['', new RichTextRenderer(undefined, {}, 500)]]);

  constructor(schema: ModelSchema) {
    this.schema = schema;
    const names = new Set<string>();
    for (const m of schema.models.values()) for (const f of m.fields) if (!f.builtIn) names.add(f.name);
    for (const m of schema.embedded.values()) for (const f of m.fields) names.add(f.name);
    this.fieldNames = names;
    this.shapes = new Map([...schema.models.values()].map((m) => [m.name, shapeOf(m)]));
    // Markdown fields render with their `render:` options; views get rich-text values (html(options), sections()…).
    const prefix = `📦#${++loads}:`;
    for (const m of [...schema.models.values(), ...schema.embedded.values()]) {
      for (const f of m.fields) {
        if (f.type !== 'markdown') continue;
        const renderer = new RichTextRenderer(f.render, {}, 500);
        this.#renderers.set(prefix + `${m.name}.${f.name}`, renderer);
        registerRichText(prefix + `${m.name}.${f.name}`, (text) => renderer.value(text));
      }
    }
    const installed = installModels(describe(schema, { richKey: (owner, f) => prefix + `${owner}.${f.name}` }), (op: unknown, a: unknown, b: unknown, c: unknown) =>
      this.#channel(String(op), a, b, c),
    );
    this.namespace = installed.namespace;
    this.link = installed.link;
  }

  /** Connects the store and applies the schema (throws StoreError LW_STORE_MIGRATION / UNAVAILABLE). */
  async open(appDir: string, options: DataOptions = {}): Promise<void> {
    const dataDir = path.resolve(appDir, options.dataDir ?? process.env.LANEWAY_DATA ?? '.laneway');
    const databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL;
    this.store = await AppStore.open(this.schema, { dataDir, databaseUrl, accept: options.accept ?? false, namespace: options.namespace });
    try {
      const engine = this.store.engine;
      const visitors = new VisitorStore(engine);
      await visitors.ensure();
      this.visitors = { signer: new Signer(await loadSecret(engine)), store: visitors };
    } catch (e) {
      await this.close();
      throw e;
    }
    // Expired sessions, form states and used form ids are deleted every few minutes (by every
    // instance: the DELETE is idempotent).
    const sweep = () => void this.visitors?.store.sweep().catch(() => {});
    this.#sweeper = setInterval(sweep, SWEEP_MS);
    this.#sweeper.unref();
  }

  async close(): Promise<void> {
    const s = this.store;
    this.store = undefined;
    this.visitors = undefined;
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    await s?.close();
  }

  /** Registers a request's budget (its realm token) so the channel finds the request. */
  bind(token: object, request: DataRequest): void {
    this.#requests.set(token, request);
  }

  #request(): DataRequest {
    const token = currentBudgetToken();
    const r = token ? this.#requests.get(token) : undefined;
    if (!r) throw new LanewayError('LW_STORE_UNAVAILABLE', 'models are used outside a request', { status: 500 });
    return r;
  }

  #session(): DataSession {
    const r = this.#request();
    if (r.session) return r.session;
    if (!this.store) throw new LanewayError('LW_STORE_UNAVAILABLE', 'the database is not open', { status: 503 });
    return (r.session = this.store.read(r.what));
  }

  /** Everything the realm's model runtime asks of the host. */
  #channel(op: string, a: unknown, b: unknown, c: unknown): unknown {
    // PostgreSQL answers Promises: their failures are mapped like the synchronous ones.
    const r = this.#operation(op, a, b, c);
    return r instanceof Promise ? r.catch((e: unknown) => Promise.reject(toScriptError(e))) : r;
  }

  #operation(op: string, a: unknown, b: unknown, c: unknown): unknown {
    try {
      switch (op) {
        case 'q':
          return this.#session().select(a as QuerySpec);
        case 'a':
          return this.#session().aggregate(a as QuerySpec, b as 'count', c as string | undefined);
        case 'w':
          return this.#session().write(a as WriteOp[]);
        case 'v':
          return this.#check(String(a), String(b), c, false);
        case 'vi':
          return this.#check(String(a), String(b), c, true);
        case 'id': {
          const m = this.schema.models.get(String(a));
          return (m?.prefix ?? '') + randomBytes(ID_BYTES).toString('base64url');
        }
        case 'hl': {
          const s = this.#session();
          const t = this.store!.tables.get(String(a))!;
          const f = t.fields.find((x) => x.field.type === 'hierarchy')!;
          const spec: QuerySpec = { m: String(a), w: [], o: 'desc', l: 1, ...(b === null || b === undefined ? {} : { c: String(b) }) };
          const rows = s.select(spec);
          const last = (r: unknown[][]) => hierarchyAfterLast((r[0]?.[f.index] as string | undefined) ?? null);
          return rows instanceof Promise ? rows.then(last) : last(rows);
        }
        case 'hy':
          return hierarchyOp(String(a), String(b), c);
        case 'md':
          return this.#renderMarkdown(String(a), b);
        case 'ctx':
          return this.#request().containers;
        default:
          throw new Error(`unknown model channel operation ${op}`);
      }
    } catch (e) {
      throw toScriptError(e);
    }
  }

  /** A value for a field (`item`: one entry of a list field). */
  #check(model: string, field: string, value: unknown, item: boolean): [number, unknown] {
    const def = this.schema.models.get(model) ?? this.schema.embedded.get(model);
    let f = def?.fields.find((x) => x.name === field);
    if (!f) return [0, `${model} has no field "${field}"`];
    if (item) {
      const { list: _list, ...single } = f;
      f = { ...single, optional: false };
    }
    if (f.type === 'timestamp' && typeof value === 'number') return Number.isFinite(value) ? [1, value] : [0, `${f.label} must be a time`];
    const r = checkFieldValue(f, value, this.schema);
    if (!r.ok) return [0, r.message];
    let v = r.value;
    if (f.type === 'timestamp' && typeof v === 'string') v = Date.parse(v);
    // Scripts hold numbers as JavaScript numbers: an integer they could not read back exactly is refused.
    if (typeof v === 'bigint') return [0, `${f.label} must be between -9007199254740991 and 9007199254740991`];
    return [1, v];
  }

  #renderMarkdown(text: string, key: unknown): string {
    return (this.#renderers.get(typeof key === 'string' ? key : '') ?? this.#renderers.get('')!).html(text);
  }

}

export function hierarchyOp(fn: string, v: string, other: unknown): unknown {
  try {
    switch (fn) {
      case 'next':
        return hierarchyNext(v);
      case 'previous':
        return hierarchyPrevious(v);
      case 'parent':
        return hierarchyParent(v);
      case 'hasParent':
        return hierarchyHasParent(v);
      case 'before':
        return hierarchyBefore(v, String(other));
      case 'afterLast':
        return hierarchyAfterLast(v);
    }
  } catch (e) {
    throw new TypeError((e as Error).message);
  }
  throw new Error(`unknown hierarchy operation ${fn}`);
}

/** Fields that queries can filter (the runtime's `q` flag, and the store's indexes). */
const queryable = (f: FieldDefinition): boolean => f.list === undefined && !['map', 'geo', 'embedded', 'html', 'markdown', 'svg-icon'].includes(f.type);
const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

/** What a script may name on a model, as realm-models.ts builds it (M.x statics, record members). */
export function shapeOf(m: ModelDefinition): ModelShape {
  const fields = m.fields.filter((f) => !f.builtIn);
  const statics = new Set(['all', 'get', 'optional', 'exists', 'asc', 'desc', 'grouping', 'markdown', 'name']);
  const unqueryable = new Map<string, string>();
  for (const n of ['id', 'created', 'modified']) for (const op of ['_gt', '_gte', '_lt', '_lte']) statics.add(n + op);
  for (const f of fields) {
    statics.add(f.name);
    if (queryable(f)) for (const op of ['_gt', '_gte', '_lt', '_lte']) statics.add(f.name + op);
    else if (f.type !== 'embedded' || f.list !== undefined) unqueryable.set(f.name, f.list !== undefined ? `a ${f.type} list field` : `a ${f.type} field`);
    if (f.type === 'embedded' && f.embedded?.includes('.')) statics.add(f.embedded.slice(f.embedded.indexOf('.') + 1));
  }
  // An embedded list can be matched too (Place.stops({city})).
  for (const f of fields) if (f.type === 'embedded') unqueryable.delete(f.name);
  const instance = new Set(['id', 'created', 'modified', 'remove', 'copy', 'copyable', 'toJSON']);
  if (m.container) {
    statics.add(lowerFirst(m.container));
    statics.add('any' + m.container);
    instance.add(lowerFirst(m.container));
  }
  return { statics, fields: new Set(fields.map((f) => f.name)), instance, unqueryable };
}

export function toScriptError(e: unknown): unknown {
  if (e instanceof StoreError) {
    const status = e.code === 'LW_STORE_UNAVAILABLE' || e.code === 'LW_STORE_CONFLICT' ? 503 : 500;
    return new LanewayError(e.code as 'LW_STORE_QUERY', e.message, { status });
  }
  return e;
}

/** The plain data the realm's model runtime is built from (realm-models.ts). */
export function describe(schema: ModelSchema, options: { static?: boolean; richKey?: (owner: string, f: FieldDefinition) => string | null } = {}): unknown {
  const fieldOf = (f: FieldDefinition, owner: string) => ({
    rk: f.type === 'markdown' && options.richKey ? options.richKey(owner, f) : null,
    name: f.name,
    type: f.type,
    list: f.list ?? null,
    optional: f.optional,
    label: f.label,
    placeholder: f.placeholder,
    about: f.about,
    prot: f.protected,
    values: (f.values ?? []).map((v) => [v.value, v.label]),
    model: f.model ?? null,
    emb: f.embedded ?? null,
    init: f.init ?? null,
    unique: f.unique,
    order: f.order,
    q: queryable(f),
  });
  const modelOf = (m: ModelDefinition) => ({
    name: m.name,
    kind: m.kind,
    container: m.container ?? null,
    ckey: m.container ? lowerFirst(m.container) : null,
    lkey: lowerFirst(m.name),
    prefix: m.prefix ?? '',
    fields: m.fields.filter((f) => !f.builtIn).map((f) => fieldOf(f, m.name)),
  });
  return {
    static: options.static === true,
    models: [...schema.models.values()].map(modelOf),
    embedded: [...schema.embedded.values()].map((m) => ({ name: m.name, fields: m.fields.map((f) => fieldOf(f, m.name)) })),
  };
}

/**
 * Opens the stores of an app and of its nested sites: each child with models keeps its data in
 * the parent's data directory or database, apart, under its `namespace:` (a nested child's
 * namespace is prefixed with its parent's). Stores opened before a failure are closed again.
 */
export async function openAppData(app: App, options: DataOptions = {}): Promise<void> {
  const dataDir = path.resolve(app.root, options.dataDir ?? process.env.LANEWAY_DATA ?? '.laneway');
  const opened: AppData[] = [];
  const open = async (a: App, namespace: string | undefined): Promise<void> => {
    if (a.data) {
      await a.data.open(a.root, { ...options, dataDir, ...(namespace === undefined ? {} : { namespace }) });
      opened.push(a.data);
    }
    for (const m of a.mounts) if (m.namespace !== undefined || m.app.mounts.length) await open(m.app, m.namespace === undefined ? namespace : namespace === undefined ? m.namespace : `${namespace}-${m.namespace}`);
  };
  try {
    await open(app, options.namespace);
  } catch (e) {
    await Promise.all(opened.map((d) => d.close()));
    throw e;
  }
}

/** Closes the stores openAppData opened. */
export async function closeAppData(app: App): Promise<void> {
  await Promise.all([app.data?.close(), ...app.mounts.map((m) => closeAppData(m.app))]);
}

/** Whether an app or one of its nested sites defines models. */
export function appHasData(app: App): boolean {
  return app.data !== undefined || app.mounts.some((m) => appHasData(m.app));
}
