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
import path from 'node:path';
import { LanewayError } from '../../diag/index.js';
import { slots } from '../../shared/index.js';
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
} from '../../models/index.js';
import { currentBudgetToken, installModels, mapChannelErrors, ViewRenderers, type AggregateKind, type Answer, type CheckedValue, type FormReading, type FieldDescriptor, type HostChannel, type ModelDescriptor, type ModelsDescriptor, type ModelShape, type RecordRow, isInsert, isRemove, isUpdate, ROW, WRITE } from '../../script/index.js';
import { ensureImageTables, importImageFiles, openImageStore, type ImageStoreOptions, type ImportResult } from '../../images/index.js';
import { storeNotOpen } from '../endpoint/answers.js';
import { ImageService } from './images.js';
import { AuthService } from './auth.js';
import { permissionScope, RequestPermissions, UserStore, type AuthConfig, type ContainerKey, type Operation, type ProfileRoles } from '../../auth/index.js';
import { RichTextRenderer } from '../../content/index.js';
import { AppStore, StoreError, type DataSession, type QuerySpec, type WriteOp } from '../../store/index.js';
import { loadSecret, randomText, Signer, VisitorStore, type Visitor, type VisitorContext } from '../../session/index.js';
import { defaultForm, enteredTexts, readSubmission, type FormType } from '../../forms/index.js';
import { ensureMailTables, mailTransportFromEnv, MailWorker, renderNotification, type MailMessage, type NotificationDefinition } from '../../mail/index.js';
import type { Writer } from '../../store/index.js';
import { Limiter, NO_SETTINGS } from '../../limits/index.js';
import type { FieldMap } from '../endpoint/request-data.js';
import type { EndpointPermit } from '../endpoint/endpoint.js';

export interface DataOptions {
  /** The data directory (default `.laneway/` inside the app directory; LANEWAY_DATA). */
  dataDir?: string;
  /** `postgres://…` (DATABASE_URL): PostgreSQL instead of SQLite. */
  databaseUrl?: string;
  /** Apply narrowing schema changes (`laneway migrate --accept`). */
  accept?: boolean;
  /** A nested site's data namespace (set by openAppData for mounted sites). */
  namespace?: string;
  /** Where the mail worker reports (default: standard error). */
  log?: { info(message: string): void; error(message: string, fields?: Record<string, unknown>): void };
}

/** What a form submission needs of its request (RequestScope fills it). */
export interface FormRequest {
  /** The body fields (read once). */
  body(): FieldMap | Promise<FieldMap>;
  /** `?_form=` of the request, or null. */
  formId(): string | null;
  visitor(): Visitor | undefined;
  /** Charges the host work of the request so far to its budget: past it, throws its CPU limit (a 503). */
  meter?(): void;
}

/** The per-request side: what the channel needs of the request that is running. */
export interface DataRequest {
  /** The request's write transaction (POST, PUT, DELETE scripts). */
  writer?: Writer | undefined;
  form?: FormRequest;
  session: DataSession | undefined;
  /** What the request is, for the read-only error ("a GET script"). */
  what: string;
  /** Model-backed path parameters selecting containers: model name → id. */
  containers: Record<string, string>;
  /** Uploads stored in image fields by this request (attached in its transaction). */
  images?: Set<string>;
  /** Upload addresses this request made (`newPutUrl`): counted against `uploads` once it ran (docs/security.md "Limits per visitor"). */
  uploadUrls?: number;
  /** Users: the signed-in user's id (null: a visitor); undefined where users do not apply. */
  user?: string | null;
  /** Users: the endpoint file (its directory's 👤.yaml scope) and the roles it runs as (`👤: {as}`). */
  permit?: EndpointPermit;
  /** Users: this request's permissions, made on first check. */
  permissions?: RequestPermissions;
  /** Form states this request has claimed (`stateKey \0 id`): each is claimed once. */
  claimed?: Set<string>;
}

const STDERR_LOG = {
  info: (message: string) => process.stderr.write(`${message}\n`),
  error: (message: string, fields?: Record<string, unknown>) => process.stderr.write(`error: ${message}${fields ? ' ' + JSON.stringify(fields) : ''}\n`),
};

/** The notices of unconfigured sign-in providers said so far in this process (see AppData.open). */
const noticed = new Set<string>();

/** How often expired visitor state is swept. */
const SWEEP_MS = 10 * 60_000;

const ID_BYTES = 12; // 16 characters of base64url: 96 random bits

export class AppData {
  readonly schema: ModelSchema;
  /** `'📦'` for scripts: shared realm values (models and global embedded types) by name. */
  readonly namespace: Record<string, unknown>;
  /** `'📡'` for scripts: the notification types by name. */
  readonly notificationTypes: Record<string, unknown>;
  /** The notifications of `/📡/` by name (empty without). */
  readonly notifications: ReadonlyMap<string, NotificationDefinition>;
  /** A link (realm value) to a record: model-backed path parameters. */
  readonly link: (model: string, id: string, row?: unknown[]) => unknown;
  /** The field names of every model (fluent setters, generate.ts). */
  readonly fieldNames: ReadonlySet<string>;
  /** What scripts may name on each model (build-time checks, script/model-use.ts). */
  readonly shapes: ReadonlyMap<string, ModelShape>;
  store: AppStore | undefined;
  /**
   * Form types by key: `📦.Task` (every model's default form), `/📤/⏳NewTask.yaml` (form files,
   * added by the loader); a group is `key#Group`.
   */
  readonly forms = new Map<string, FormType>();
  /** Sessions, flash messages and form states of the app's visitors (made when the store opens). */
  visitors: VisitorContext | undefined;
  #sweeper: NodeJS.Timeout | undefined;
  /** Where the images are kept (set when the app has image fields and its data is open). */
  #imageOptions: ImageStoreOptions | undefined;
  /** The app sends e-mail (`'📧'`, notifications): its outbox worker runs while the store is open. */
  sendsMail = false;
  /** The limits per visitor (docs/security.md "Limits per visitor"), set by the loader; counting once the store is open. */
  limiter = new Limiter(NO_SETTINGS);
  /** Delivers the outbox (started by `open` when the app sends e-mail). */
  mail: MailWorker | undefined;
  /** `Model.field` of every image field, with its `public:` (empty without image fields). */
  readonly imageFields: ReadonlyMap<string, { public: boolean }>;
  /** Uploads, processing and serving of images (made by `open` when the app has image fields). */
  images: ImageService | undefined;
  /** The app's users (/👤.yaml), set by the loader when it has them. */
  authConfig: AuthConfig | undefined;
  /** For a nested site, the path it is served at (`/app`), set by the loader: its sign-in callback is under it. */
  mount: string | undefined;
  /** Sign-in, sign-out and the signed-in user of a request (made by `open` when the app has users). */
  auth: AuthService | undefined;
  /** Side tables (shared/slots.ts), not WeakMaps: their keys live for one request. */
  readonly #requests = slots<object, DataRequest>();
  readonly #formType: (key: string, groups: string[]) => unknown;
  /** Renderers of the Markdown and html fields by rich-text key; '' renders `Model.markdown(text)`. */
  readonly #renderers = new Map<string, RichTextRenderer>([['', new RichTextRenderer(undefined, {}, 500)]]);
  /** What the app's views render its rich text and images with (its requests' budgets carry it). */
  readonly renderers: ViewRenderers;

  /** Per model, the containers (`Model:id`) whose profiles give roles over its records (users on). */
  readonly #containerKeys = new Map<string, (row: readonly unknown[]) => ContainerKey[]>();
  /** Top-level profile models, and contained ones by their container model. */
  readonly #topProfiles: ModelDefinition[] = [];
  /** Request permissions whose roles are read through their request's session. */
  readonly #bound = slots<RequestPermissions, true>();
  readonly #containedProfiles = new Map<string, ModelDefinition[]>();
  /** Per model, the field its natural order reads (a hierarchy, else `order: true`), as store/tables.ts orders. */
  readonly #orderField = new Map<string, string>();

  /** `renderers`: the app's (one per app load, shared with its StaticData). */
  constructor(schema: ModelSchema, notifications: ReadonlyMap<string, NotificationDefinition> = new Map(), users = false, renderers = new ViewRenderers()) {
    this.schema = schema;
    this.renderers = renderers;
    for (const m of schema.models.values()) {
      if (m.kind !== 'profile') continue;
      if (m.container === undefined) this.#topProfiles.push(m);
      else this.#containedProfiles.set(m.container, [...(this.#containedProfiles.get(m.container) ?? []), m]);
    }
    for (const m of schema.models.values()) {
      const outer = m.container !== undefined && this.#containedProfiles.has(m.container) ? m.container : undefined;
      const own = this.#containedProfiles.has(m.name);
      const none: ContainerKey[] = [];
      this.#containerKeys.set(
        m.name,
        outer && own ? (r) => [`${outer}:${String(r[ROW.container])}`, `${m.name}:${String(r[ROW.id])}`] : outer ? (r) => [`${outer}:${String(r[ROW.container])}`] : own ? (r) => [`${m.name}:${String(r[ROW.id])}`] : () => none,
      );
    }
    for (const m of schema.models.values()) {
      const f = m.fields.find((x) => x.type === 'hierarchy') ?? m.fields.find((x) => x.order && !x.builtIn);
      if (f) this.#orderField.set(m.name, f.name);
    }
    this.notifications = notifications;
    const names = new Set<string>();
    for (const m of schema.models.values()) for (const f of m.fields) if (!f.builtIn) names.add(f.name);
    for (const m of schema.embedded.values()) for (const f of m.fields) names.add(f.name);
    this.fieldNames = names;
    this.shapes = new Map(
      [...schema.models.values()].map((m) => {
        const shape = shapeOf(m);
        (shape.statics as Set<string>).add('Form'); // the default form, Task.Form
        return [m.name, shape];
      }),
    );
    // Markdown and html fields render with their `render:` options; views and scripts get rich-text values (html(options), sections()…).
    const prefix = '📦:';
    for (const m of [...schema.models.values(), ...schema.embedded.values()]) {
      for (const f of m.fields) {
        if (f.type !== 'markdown' && f.type !== 'html') continue;
        const renderer = new RichTextRenderer(f.render, {}, 500, f.type, (text) => checkFieldValue(f, text).ok);
        this.#renderers.set(prefix + `${m.name}.${f.name}`, renderer);
        renderers.registerRichText(prefix + `${m.name}.${f.name}`, (text) => renderer.value(text));
      }
    }
    const imageFields = new Map<string, { public: boolean }>();
    for (const m of schema.models.values()) for (const f of m.fields) if (f.type === 'image') imageFields.set(`${m.name}.${f.name}`, { public: f.public === true });
    this.imageFields = imageFields;
    if (imageFields.size) {
      renderers.registerImages(prefix + 'image', (id) => {
        if (!this.images) throw storeNotOpen();
        return this.images.view(id);
      });
    }
    const descriptor = describe(schema, {
      richKey: (owner, f) => prefix + `${owner}.${f.name}`,
      notifications: [...notifications.values()].map((n) => n.model),
      ...(imageFields.size ? { imageKey: prefix + 'image' } : {}),
      perm: users,
    });
    // PostgreSQL answers Promises: their failures are mapped like the synchronous ones.
    const installed = installModels(descriptor, mapChannelErrors(this.#channel(), toScriptError));
    this.namespace = installed.namespace;
    this.notificationTypes = installed.notifications;
    this.link = installed.link;
    this.#formType = installed.formType;
    for (const m of schema.models.values()) this.forms.set(`📦.${m.name}`, defaultForm(m));
    for (const n of notifications.values()) this.forms.set(`📡.${n.name}`, defaultForm(n.model));
  }

  /** The message of a submitted notification (`n.submit()`), to queue. */
  notificationMessage(name: string, values: Readonly<Record<string, unknown>>): MailMessage {
    const n = this.notifications.get(name);
    if (!n) throw new LanewayError('LW_HTTP_INTERNAL', `no notification ${name}`, { status: 500 });
    return renderNotification(n, values);
  }

  /** Connects the store and applies the schema (throws StoreError LW_STORE_MIGRATION / UNAVAILABLE). */
  async open(appDir: string, options: DataOptions = {}): Promise<void> {
    const dataDir = resolveDataDir(appDir, options.dataDir);
    const databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL;
    this.store = await AppStore.open(this.schema, { dataDir, databaseUrl, accept: options.accept ?? false, namespace: options.namespace });
    try {
      const engine = this.store.engine;
      const visitors = new VisitorStore(engine);
      await visitors.ensure();
      await this.limiter.open(engine);
      this.visitors = { signer: new Signer(await loadSecret(engine)), store: visitors };
    } catch (e) {
      await this.close();
      throw e;
    }
    if (this.sendsMail) {
      const engine = this.store.engine;
      try {
        await ensureMailTables(engine);
        this.mail = new MailWorker(engine, { dataDir, transport: mailTransportFromEnv(process.env, dataDir), log: options.log ?? STDERR_LOG });
        this.mail.start();
      } catch (e) {
        await this.close();
        throw e;
      }
    }
    if (this.imageFields.size) {
      const engine = this.store.engine;
      try {
        await ensureImageTables(engine);
        this.#imageOptions = { dataDir, namespace: options.namespace, imagesDir: process.env.LANEWAY_IMAGES_DIR };
        const store = await openImageStore(engine, this.#imageOptions);
        this.images = new ImageService(engine, this.visitors.signer, store, this.imageFields, options.log ?? STDERR_LOG);
        this.images.worker.start();
      } catch (e) {
        await this.close();
        throw e;
      }
    }
    if (this.authConfig) {
      try {
        const users = new UserStore(this.store.engine);
        await users.ensure();
        const log = options.log ?? STDERR_LOG;
        // A provider without its settings is a notice, not an error (the site runs without it,
        // docs/users.md "Providers"), said once per process, not again at every reload.
        const notice = (m: string): void => {
          if (noticed.has(m)) return;
          if (noticed.size >= 1000) noticed.clear();
          noticed.add(m);
          log.info(`notice: ${m}`);
        };
        this.auth = new AuthService(this.authConfig, users, this.visitors, process.env, notice, this.mount);
      } catch (e) {
        await this.close();
        throw e;
      }
    }
    // Expired sessions, form states and used form ids are deleted every few minutes (by every
    // instance: the DELETE is idempotent).
    const sweep = () => {
      void this.visitors?.store.sweep().catch(() => {});
      void this.auth?.users.sweep().catch(() => {});
      void this.limiter.sweep().catch(() => {});
    };
    this.#sweeper = setInterval(sweep, SWEEP_MS);
    this.#sweeper.unref();
  }

  /** `laneway migrate --images`: the images directory copied into the PostgreSQL database (src/images/open.ts). */
  async importImages(): Promise<(ImportResult & { from: string }) | undefined> {
    if (!this.store || !this.#imageOptions) return undefined;
    return importImageFiles(this.store.engine, this.#imageOptions);
  }

  async close(): Promise<void> {
    const s = this.store;
    this.store = undefined;
    this.visitors = undefined;
    this.auth = undefined;
    this.limiter.close();
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    const mail = this.mail;
    this.mail = undefined;
    await mail?.stop();
    const images = this.images;
    this.images = undefined;
    await images?.worker.stop();
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

  #session(r: DataRequest = this.#request()): DataSession {
    if (r.session) return r.session;
    if (!this.store) throw storeNotOpen();
    return (r.session = this.store.read(r.what));
  }

  // ---- Permissions (users on): every model operation of a request is checked here -------------

  /** The permissions of a request (undefined without users). */
  #permissions(r: DataRequest): RequestPermissions | undefined {
    const config = this.authConfig;
    if (!config) return undefined;
    let p = r.permissions;
    if (p === undefined || !this.#bound.has(p)) {
      // Made here, or by the endpoint's gate (withPermissions: `👤: {only}`, path parameters): from
      // now on, roles are read through the request's own session.
      const source = this.profileRoles(() => this.#session(r));
      if (p === undefined) p = r.permissions = new RequestPermissions(permissionScope(config, r.permit?.file ?? '/'), r.user ?? null, r.permit?.as ?? [], source);
      else p.source = source;
      this.#bound.set(p, true);
    }
    return p;
  }

  /** Reads the roles on a user's profiles through `session` (the request's own, so a profile it just wrote counts). */
  profileRoles(session: () => DataSession): ProfileRoles {
    const rolesOf = (models: readonly ModelDefinition[], user: string, container?: string): string[] | Promise<string[]> => {
      const out: string[] = [];
      // One query per profile model, in turn (synchronous on SQLite).
      const from = (i: number): string[] | Promise<string[]> => {
        const m = models[i];
        if (m === undefined) return out;
        const at = ROW.fields + m.fields.filter((f) => !f.builtIn).findIndex((f) => f.profile === 'role');
        // No LIMIT: a bound one makes SQLite plan the statement again on every call (a user has few profiles).
        const rows = session().select({ m: m.name, w: [['user', 'eq', user]], ...(container === undefined ? {} : { c: container }) });
        const take = (rs: unknown[][]): string[] | Promise<string[]> => {
          for (const row of rs) if (typeof row[at] === 'string' && row[at] !== '') out.push(row[at] as string);
          return from(i + 1);
        };
        return rows instanceof Promise ? rows.then(take) : take(rows);
      };
      return from(0);
    };
    return {
      top: (user) => rolesOf(this.#topProfiles, user),
      inContainer: (user, key) => {
        const colon = key.indexOf(':');
        return rolesOf(this.#containedProfiles.get(key.slice(0, colon)) ?? [], user, key.slice(colon + 1));
      },
    };
  }

  /** The containers whose profiles give roles over a record of `model` (its row as the store gives it). */
  containersOf(model: string, row: readonly unknown[]): ContainerKey[] {
    return this.#containerKeys.get(model)?.(row) ?? [];
  }

  #forbidden(op: Operation, resource: string): LanewayError {
    return new LanewayError('LW_AUTH_FORBIDDEN', `Permission denied: ${op} on ${resource}.`, { status: 403, expose: true });
  }

  /** A query, checked: `list` for one that may answer several records, `access` for one record (by id: `access` or `read` on Model.id). */
  #select(r: DataRequest, spec: QuerySpec): Answer<RecordRow[]> {
    const p = this.#permissions(r);
    const session = this.#session(r);
    if (!p) return session.select(spec);
    const model = this.schema.models.get(spec.m);
    const op: Operation = spec.one === true ? 'access' : 'list';
    const byId = spec.one === true && spec.w.length === 1 && spec.w[0]![0] === 'id' && spec.w[0]![1] === 'eq';
    const allowed = (containers: ContainerKey[]) => p.can(op, { model: spec.m }, containers) || (byId && p.can('read', { model: spec.m, field: 'id' }, containers));
    // The query's own container (Task.list(list)) when the model is inside one with profiles.
    const queryContainers = this.#queryContainers(model, spec.c);
    // Grouping (spec.cs): the children of the parents listed, each parent its own container.
    const fieldContainers = spec.cs !== undefined && model?.container !== undefined && this.#containedProfiles.has(model.container) ? spec.cs.map((c) => `${model.container}:${c}`) : queryContainers;
    const then = <T, U>(v: T | Promise<T>, f: (x: T) => U | Promise<U>): U | Promise<U> => (v instanceof Promise ? v.then(f) : f(v));
    return then(p.prepare([...queryContainers, ...fieldContainers]), () => {
      const ok = allowed(queryContainers);
      // Before the query runs, so that the answer never depends on the records: a field filtered
      // or ordered on that the visitor may not read refuses it (the operation on the model first
      // when that is refused at this level too).
      const ordered = !(spec.l !== 0 && spec.w.length === 1 && spec.w[0]![0] === 'id' && spec.w[0]![1] === 'eq');
      const hidden = this.#unreadableField(r, p, spec, fieldContainers, ordered);
      if (hidden !== undefined) throw ok ? this.#forbidden('read', `📦.${spec.m}.${hidden}`) : this.#forbidden(byId ? 'access' : op, `📦.${spec.m}`);
      const rows = session.select(spec);
      return then(rows, (rs) => {
        // Roles in each record's container: loaded now (so reading their fields needs no wait), and
        // when the query-level roles do not allow it, the records' own containers must.
        const containers = [...new Set(rs.flatMap((row) => this.containersOf(spec.m, row)))];
        return then(p.prepare(containers), () => {
          if (!ok) {
            // Nothing found: allowed when the roles in the container the request's path selects
            // allow it (Task.exists(id) of a removed task answers false to the team's member). A
            // record found in another container is still judged in its own. A later chunk of a long
            // read (spec.a) may find nothing: the records before it were judged already.
            const pathContainer = model?.container !== undefined ? r.containers[model.container] : undefined;
            const none = rs.length === 0 && spec.a === undefined && pathContainer !== undefined && this.#containedProfiles.has(model!.container!);
            const fine = none ? () => allowed([`${model!.container}:${pathContainer}`]) : () => (rs.length > 0 || spec.a !== undefined) && rs.every((row) => allowed(this.containersOf(spec.m, row)));
            const check = (): unknown[][] => {
              if (!fine()) throw this.#forbidden(byId ? 'access' : op, `📦.${spec.m}`);
              return rs;
            };
            return none ? then(p.prepare([`${model!.container}:${pathContainer}`]), check) : check();
          }
          return rs;
        });
      });
    });
  }

  /** The container a query names (`Board.team(team)`), when its profiles give roles over the query's records. */
  #queryContainers(model: ModelDefinition | undefined, c: string | undefined): ContainerKey[] {
    return model?.container !== undefined && c !== undefined && this.#containedProfiles.has(model.container) ? [`${model.container}:${c}`] : [];
  }

  /**
   * The first field a query filters on (or orders by, when `ordered`) that the visitor may not
   * read with the roles of the query's level — default, the top-level and `as` roles, and those in
   * each of `containers` — never per record found: whether a record matched must not change the
   * answer (docs/security.md "Field permissions and queries"). `id`, `created` and `modified`
   * always read, and so does a profile's `user` compared with the visitor's own id (`P.me()`).
   */
  #unreadableField(r: DataRequest, p: RequestPermissions, spec: QuerySpec, containers: readonly ContainerKey[], ordered: boolean): string | undefined {
    const model = spec.m;
    const can = (field: string) => (containers.length === 0 ? p.can('read', { model, field }) : containers.every((c) => p.can('read', { model, field }, [c])));
    for (const [field, op, value] of spec.w) {
      if (field === 'id' || field === 'created' || field === 'modified') continue;
      if (field === 'user' && op === 'eq' && value === (r.user ?? '') && this.schema.models.get(model)?.kind === 'profile') continue;
      if (!can(field)) return field;
    }
    const order = ordered ? this.#orderField.get(model) : undefined;
    return order !== undefined && !can(order) ? order : undefined;
  }

  /** count, sum, avg: `list`; exists: `access`. */
  #aggregate(r: DataRequest, spec: QuerySpec, kind: AggregateKind, field: string | undefined): Answer<number | boolean | null> {
    const p = this.#permissions(r);
    const session = this.#session(r);
    if (p) {
      const model = this.schema.models.get(spec.m);
      const op: Operation = kind === 'exists' ? 'access' : 'list';
      const containers = this.#queryContainers(model, spec.c);
      const check = () => {
        if (!p.can(op, { model: spec.m }, containers)) throw this.#forbidden(op, `📦.${spec.m}`);
        if (field !== undefined && !p.can('read', { model: spec.m, field }, containers)) throw this.#forbidden('read', `📦.${spec.m}.${field}`);
        // A limited count, sum or avg reads the first rows in the natural order.
        const hidden = this.#unreadableField(r, p, spec, containers, kind !== 'exists' && spec.l !== undefined);
        if (hidden !== undefined) throw this.#forbidden('read', `📦.${spec.m}.${hidden}`);
        return session.aggregate(spec, kind, field);
      };
      const ready = p.prepare(containers);
      return ready instanceof Promise ? ready.then(check) : check();
    }
    return session.aggregate(spec, kind, field);
  }

  /** Writes, checked: `create`, `update` (`state` for state fields) per field, `delete`. */
  #write(r: DataRequest, ops: WriteOp[]): Answer<void> {
    const p = this.#permissions(r);
    const session = this.#session(r);
    if (!p) return session.write(ops);
    const keyed = ops.map((op) => {
      const container = isInsert(op) ? op[WRITE.insert.container] : isUpdate(op) ? op[WRITE.update.container] : op[WRITE.remove.container];
      return { op, containers: this.containersOf(op[WRITE.model], rowOf(op[WRITE.id], container)) };
    });
    const check = () => {
      let profiles = false;
      for (const { op, containers } of keyed) {
        const model = op[WRITE.model];
        if (this.schema.models.get(model)?.kind === 'profile') profiles = true;
        if (isInsert(op)) {
          if (!p.can('create', { model }, containers)) throw this.#forbidden('create', `📦.${model}`);
        } else if (isRemove(op)) {
          if (!p.can('delete', { model }, containers)) throw this.#forbidden('delete', `📦.${model}`);
        } else {
          for (const field of Object.keys(op[WRITE.update.values])) {
            if (!p.can('update', { model, field }, containers)) throw this.#forbidden(isStateFieldName(field) ? 'state' : 'update', `📦.${model}.${field}`);
          }
        }
      }
      const done = session.write(ops);
      // A profile written by this request gives (or takes) roles from now on.
      if (profiles) p.forget();
      return done;
    };
    const ready = p.prepare([...new Set(keyed.flatMap((k) => k.containers))]);
    return ready instanceof Promise ? ready.then(check) : check();
  }

  /** Whether the visitor may find the record `id` of `model` (access, or read on its id): no error either way. */
  #mayFind(r: DataRequest, model: string, id: string): boolean | Promise<boolean> {
    const p = this.#permissions(r);
    if (!p) return true;
    const containers = this.containersOf(model, rowOf(id, null));
    const answer = () => p.can('access', { model }, containers) || p.can('read', { model, field: 'id' }, containers);
    const ready = p.prepare(containers);
    return ready instanceof Promise ? ready.then(answer) : answer();
  }

  /** `Me.avatar()`: read on 👤.User.name and 👤.User.picture (403 otherwise). */
  requireAvatarRead(r: DataRequest): void {
    const p = this.#permissions(r);
    if (!p) return;
    for (const user of ['name', 'picture'] as const) if (!p.can('read', { user })) throw this.#forbidden('read', `👤.User.${user}`);
  }

  /** Reading a field of a stored record (`Model.field`, its row): `read`. */
  #read(r: DataRequest, key: string, row: readonly unknown[], throwing: boolean): boolean {
    const p = this.#permissions(r);
    if (!p) return true;
    const dot = key.indexOf('.');
    const model = key.slice(0, dot);
    const field = key.slice(dot + 1);
    if (p.can('read', { model, field }, this.containersOf(model, row))) return true;
    if (throwing) throw this.#forbidden('read', `📦.${key}`);
    return false;
  }

  /** Everything the realm's model runtime asks of the host (script/channel.ts). Values come from the realm: they are coerced where a host API relies on their type. */
  #channel(): HostChannel {
    return {
      query: (spec) => this.#select(this.#request(), spec),
      pause: () => this.#session().pause(),
      aggregate: (spec, kind, field) => this.#aggregate(this.#request(), spec, kind, field),
      write: (ops) => this.#write(this.#request(), ops),
      newId: (model) => (this.schema.models.get(String(model))?.prefix ?? '') + randomText(ID_BYTES),
      positionAtEnd: (model, container) => {
        const s = this.#session();
        const t = this.store!.tables.get(String(model))!;
        const f = t.fields.find((x) => x.field.type === 'hierarchy')!;
        const spec: QuerySpec = { m: String(model), w: [], o: 'desc', l: 1, ...(container === null || container === undefined ? {} : { c: String(container) }) };
        const rows = s.select(spec);
        const last = (r: unknown[][]) => hierarchyAfterLast((r[0]?.[f.index] as string | undefined) ?? null);
        return rows instanceof Promise ? rows.then(last) : last(rows);
      },
      checkValue: (model, field, value) => this.#check(String(model), String(field), value, false),
      checkListItem: (model, field, value) => this.#check(String(model), String(field), value, true),
      pathContainers: () => this.#request().containers,
      mayRead: (key, row, throwing) => this.#read(this.#request(), String(key), row, throwing === true),
      mayFind: (model, id) => this.#mayFind(this.#request(), String(model), String(id)),
      userId: () => this.#request().user ?? null,
      ...HIERARCHY_CHANNEL,
      markdown: (text, key) => this.#renderMarkdown(String(text), key),
      // A rich-text value of a script (realm/41-models.js RichValue): its source and its field's key.
      richHtml: (text, key, options) => this.#renderer(key).htmlWith(String(text), options),
      richSections: (text, key) => this.#renderer(key).sections(String(text)),
      richText: (text, key) => this.#renderer(key).text(String(text)),
      richMarkdown: (text, key) => this.#renderer(key).markdown(String(text)),
      richValid: (text, key) => this.#renderer(key).valid(String(text)),
      submitForm: (formKey, model) => this.#readForm(String(formKey), String(model), true, true),
      readForm: (formKey, validate) => this.#readForm(String(formKey), null, validate === true, false),
      imageUploadUrl: (model, field) => {
        if (!this.images) throw storeNotOpen();
        const url = this.images.putUrl(String(model), String(field));
        const req = this.#request();
        req.uploadUrls = (req.uploadUrls ?? 0) + 1;
        return url;
      },
    };
  }

  /** A form file's type for scripts (`import {NewTask} from '📤'`), registered under `key`. */
  addForm(key: string, form: FormType): unknown {
    this.forms.set(key, form);
    return this.#formType(key, [...form.groups.keys(), ...form.steps.map((s) => s.name)]);
  }

  /** The form of `key` (`key#Group` for a group) and the key of its form state (the whole form's). */
  form(key: string): { form: FormType; stateKey: string } | undefined {
    const hash = key.indexOf('#');
    if (hash === -1) {
      const form = this.forms.get(key);
      return form && { form, stateKey: key };
    }
    const parent = this.forms.get(key.slice(0, hash));
    const name = key.slice(hash + 1);
    const sub = parent?.groups.get(name) ?? parent?.steps.find((s) => s.name === name);
    return sub && { form: sub, stateKey: key.slice(0, hash) };
  }

  /**
   * `Form.submit(record)` (`submit`), `Form.validate()`, `Form.get()`: checks the visitor's form
   * state when the form requires one (marking it used in the request's transaction, so a replayed
   * POST is refused), then reads the submission. Answers `[1, [[field, value]…], raw]` or, with
   * messages, `[2, messages, raw]` (raw: the submitted texts by field, for the view to show again).
   */
  async #readForm(key: string, model: string | null, validate: boolean, submit: boolean): Promise<FormReading> {
    const found = this.form(key);
    if (!found) throw new LanewayError('LW_HTTP_INTERNAL', `no form ${key}`, { status: 500 });
    const { form, stateKey } = found;
    if (model !== null && form.model !== model) {
      throw new LanewayError('LW_MODEL_MEMBER', `the form ${form.name} fills a ${form.model}, not a ${model}`, { status: 500 });
    }
    const req = this.#request();
    const hooks = req.form;
    if (!hooks) throw new LanewayError('LW_HTTP_INTERNAL', 'forms are read by endpoint scripts', { status: 500 });
    // A step (`+End`) starts from the values the steps before it carried in the form state
    // (`Redirect….form(f)`): a field the page does not send again keeps that value.
    let prior: Record<string, unknown> | undefined;
    const isStep = key.includes('#') && this.forms.get(stateKey)?.kind === 'steps';
    if (isStep && hooks.formId() !== null) {
      const st = await hooks.visitor()?.formState(hooks.formId()!, stateKey);
      if (st) prior = st.values;
    }
    if (submit && form.requirePreviousState) {
      const id = hooks.formId();
      const visitor = hooks.visitor();
      // One claim per form state and request: the groups of one form submitted by one script share it.
      const claimed = id !== null && (req.claimed ??= new Set()).has(`${stateKey}\u0000${id}`);
      const ok = claimed || (id !== null && req.writer !== undefined && visitor !== undefined && (await visitor.claimFormState(req.writer, id, stateKey)));
      if (ok && id !== null) req.claimed!.add(`${stateKey}\u0000${id}`);
      if (!ok) {
        throw new LanewayError(
          'LW_SESSION_FORM_STATE',
          id === null
            ? 'This form was sent without its form state. Open the page with the form again and resend it.'
            : 'This form has expired or was sent already. Open the page with the form again and resend it.',
          { status: 400, expose: true },
        );
      }
    }
    const sent = await hooks.body();
    let fields = sent;
    if (prior) {
      fields = new Map(sent);
      for (const f of form.fields) {
        const v = prior[f.name];
        if (!fields.has(f.path) && v !== undefined && v !== null) fields.set(f.path, Array.isArray(v) ? v.map(String) : [String(v)]);
      }
    }
    const body = {
      get: (name: string) => fields.get(name)?.[0] ?? null,
      all: (name: string) => [...(fields.get(name) ?? [])],
      has: (name: string) => fields.has(name),
    };
    // Cleaning html fields is host work: each field read is charged to the request's budget.
    const submission = readSubmission(form, body, hooks.meter?.bind(hooks));
    // What a form state keeps of them: at most each field's own maximum (docs/forms.md).
    const texts = (of: FormType): Record<string, unknown> => {
      const out: Record<string, unknown> = {};
      for (const f of of.fields) {
        const v = enteredTexts(f, fields.get(f.path) ?? []);
        if (v !== undefined) out[f.name] = v;
      }
      return out;
    };
    // A group's texts go back under the group's name, with those of the other groups of the page
    // (its view reads values[group][field]): a refused group keeps everything that was typed.
    const whole = this.forms.get(stateKey);
    const raw: Record<string, unknown> = key.includes('#') && whole?.kind === 'groups' ? Object.fromEntries([...whole.groups].map(([name, g]) => [name, texts(g)])) : texts(form);
    if (submission.messages.length && (validate || submit)) return [2, submission.messages, raw];
    return [1, Object.entries(submission.values).filter(([name]) => !submission.messages.some((m) => m.field === `${form.model}_${name}`)), raw];
  }

  /** A value for a field (`item`: one entry of a list field). */
  #check(model: string, field: string, value: unknown, item: boolean): CheckedValue {
    const def = this.schema.models.get(model) ?? this.schema.embedded.get(model) ?? this.notifications.get(model)?.model;
    let f = def?.fields.find((x) => x.name === field);
    if (!f) return [0, `${model} has no field "${field}"`];
    if (item) {
      const { list: _list, ...single } = f;
      f = { ...single, optional: false };
    }
    // Whole milliseconds within a Date's range: both engines store them exactly (a column of integers).
    if (f.type === 'timestamp' && typeof value === 'number') return Number.isInteger(value) && Math.abs(value) <= 8.64e15 ? [1, value] : [0, `${f.label} must be a time`];
    if (f.type === 'image') {
      if (!this.images) return [0, `${f.label} cannot be stored: the database is not open`];
      const r = this.images.checkValue(model, field, value);
      if ('problem' in r) return [0, `${f.label} ${r.problem}`];
      const req = this.#request();
      (req.images ??= new Set()).add(r.id);
      return [1, r.id];
    }
    const r = checkFieldValue(f, value, this.schema);
    if (!r.ok) return [0, r.message];
    // A profile's role is one /👤.yaml declares (Role.Name).
    if (f.profile === 'role' && r.value !== null && this.authConfig && !(typeof r.value === 'string' && r.value !== 'default' && this.authConfig.roles.has(r.value))) {
      throw new LanewayError('LW_AUTH_ROLE_VALUE_UNKNOWN', `${model}.role: "${String(r.value)}" is not a role of /👤.yaml; use Role.Name with a declared role`, { status: 500 });
    }
    let v = r.value;
    if (f.type === 'timestamp' && typeof v === 'string') v = Date.parse(v);
    // Scripts hold numbers as JavaScript numbers: an integer they could not read back exactly is refused.
    if (typeof v === 'bigint') return [0, `${f.label} must be between -9007199254740991 and 9007199254740991`];
    return [1, v];
  }

  #renderMarkdown(text: string, key: unknown): string {
    return this.#renderer(key).html(text);
  }

  /** The renderer of a field by its rich-text key; the plain Markdown one for none. */
  #renderer(key: unknown): RichTextRenderer {
    return this.#renderers.get(typeof key === 'string' ? key : '') ?? this.#renderers.get('')!;
  }

}

/** A hierarchy function whose refusal (a position out of range) is a TypeError for the script. */
const hierarchyFn =
  <A extends unknown[], R>(fn: (...args: A) => R) =>
  (...args: A): R => {
    try {
      return fn(...args);
    } catch (e) {
      throw new TypeError((e as Error).message);
    }
  };

/** The hierarchy operations of the model channel (the same for stored and static models). */
export const HIERARCHY_CHANNEL: Pick<HostChannel, 'hierarchyNext' | 'hierarchyPrevious' | 'hierarchyParent' | 'hierarchyHasParent' | 'hierarchyBefore' | 'hierarchyAfterLast'> = {
  hierarchyNext: hierarchyFn((v: string) => hierarchyNext(String(v))),
  hierarchyPrevious: hierarchyFn((v: string) => hierarchyPrevious(String(v))),
  hierarchyParent: hierarchyFn((v: string) => hierarchyParent(String(v))),
  hierarchyHasParent: hierarchyFn((v: string) => hierarchyHasParent(String(v))),
  hierarchyBefore: hierarchyFn((v: string, other: string) => hierarchyBefore(String(v), String(other))),
  hierarchyAfterLast: hierarchyFn((v: string) => hierarchyAfterLast(String(v))),
};

/** A row with only the positions containersOf reads (id and container), for a record not read. */
const rowOf = (id: string, container: string | null | undefined): RecordRow => {
  const row: RecordRow = [null, 0, 0, null];
  row[ROW.id] = id;
  row[ROW.container] = container;
  return row;
};

/** Fields that queries can filter (the runtime's `q` flag, and the store's indexes). */
const isStateFieldName = (name: string): boolean => name === 'state' || name === 'status' || name === 'stage' || name === 'lifecycle';

const queryable = (f: FieldDefinition): boolean => f.list === undefined && !['map', 'geo', 'embedded', 'html', 'markdown', 'svg-icon', 'image'].includes(f.type);
const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

/** What a script may name on a model, as realm/41-models.js builds it (M.x statics, record members). */
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
  if (m.kind === 'profile') {
    statics.add('me');
    instance.add('hasRole');
  }
  if (m.container) {
    statics.add(lowerFirst(m.container));
    statics.add('any' + m.container);
    instance.add(lowerFirst(m.container));
  }
  const links = new Map(fields.filter((f) => f.type === 'link' && f.model).map((f) => [f.name, f.model!]));
  return { statics, fields: new Set(fields.map((f) => f.name)), instance, unqueryable, links };
}

export function toScriptError(e: unknown): unknown {
  if (e instanceof StoreError) {
    const status = e.code === 'LW_STORE_UNAVAILABLE' || e.code === 'LW_STORE_CONFLICT' ? 503 : 500;
    return new LanewayError(e.code as 'LW_STORE_QUERY', e.message, { status });
  }
  return e;
}

/** The plain data the realm's model runtime is built from (realm/41-models.js). */
export function describe(
  schema: ModelSchema,
  options: { static?: boolean; richKey?: (owner: string, f: FieldDefinition) => string | null; notifications?: readonly ModelDefinition[]; imageKey?: string; perm?: boolean } = {},
): ModelsDescriptor {
  const fieldOf = (f: FieldDefinition, owner: string): FieldDescriptor => ({
    richKey: (f.type === 'markdown' || f.type === 'html') && options.richKey ? options.richKey(owner, f) : null,
    hostRendered: f.type === 'html' && f.render !== undefined && Object.keys(f.render).length > 0,
    name: f.name,
    type: f.type,
    list: f.list ?? null,
    optional: f.optional,
    label: f.label,
    placeholder: f.placeholder,
    about: f.about,
    isProtected: f.protected,
    values: (f.values ?? []).map((v) => [v.value, v.label]),
    model: f.model ?? null,
    embedded: f.embedded ?? null,
    init: f.init ?? null,
    unique: f.unique,
    order: f.order,
    queryable: queryable(f),
    profile: f.profile ?? null,
  });
  const modelOf = (m: ModelDefinition): ModelDescriptor => ({
    name: m.name,
    kind: m.kind,
    container: m.container ?? null,
    containerMember: m.container ? lowerFirst(m.container) : null,
    memberName: lowerFirst(m.name),
    prefix: m.prefix ?? '',
    fields: m.fields.filter((f) => !f.builtIn).map((f) => fieldOf(f, m.name)),
  });
  return {
    static: options.static === true,
    checksPermissions: options.perm === true,
    imageKey: options.imageKey ?? null,
    models: [...schema.models.values()].map(modelOf),
    embedded: [...schema.embedded.values()].map((m) => ({ name: m.name, fields: m.fields.map((f) => fieldOf(f, m.name)) })),
    notifications: (options.notifications ?? []).map((m) => ({ name: m.name, fields: m.fields.map((f) => fieldOf(f, m.name)) })),
  };
}

/**
 * The data directory: `--data`, else `$LANEWAY_DATA` (an empty value counts as unset), else
 * `.laneway/` in the app directory. A directory inside the app directory must sit under a private
 * or dot name (`.laneway`, `_data`), or the database, with the app's secret and its sessions,
 * would be served as a static file (docs/data.md, "Where the records are").
 */
export function resolveDataDir(appDir: string, given: string | undefined): string {
  const named = given || process.env.LANEWAY_DATA || '.laneway';
  const dir = path.resolve(appDir, named);
  const inside = path.relative(path.resolve(appDir), dir);
  if (!inside.startsWith('..') && !path.isAbsolute(inside)) {
    const hidden = inside.split(path.sep).some((part) => part.startsWith('.') || part.startsWith('_'));
    if (!hidden) {
      throw new StoreError(
        'LW_STORE_DATA_PUBLIC',
        `The data directory ${dir} is inside the app directory ${path.resolve(appDir)}, where its files would be served. ` +
          `Give a directory outside the app with --data DIR (or $LANEWAY_DATA), or one whose name starts with "." or "_" (the default is .laneway). [LW_STORE_DATA_PUBLIC]`,
      );
    }
  }
  return dir;
}
