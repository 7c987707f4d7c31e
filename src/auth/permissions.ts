/**
 * Effective permissions (docs/permissions.md "How effective permissions are computed"), compiled
 * from an AuthConfig for the request path. Grants are only ever added: a role's permissions in a
 * directory are its grants in every 👤.yaml from the root down to the directory's nearest one; the
 * effective permissions of a visitor are the union of `default` and the roles they hold there; a
 * resource takes its own grants and those of the broader resources above it (`📦.Task.title` ←
 * `📦.Task` ← `📦` ← `Role: all`), so the rule most specific to a resource is built on the broader
 * ones.
 *
 * A page checks permissions on every request, so the work is done ahead: per scope (a directory
 * with a 👤.yaml) and role, a table of resource → operation bits, made once; per scope and set of
 * roles, one `Permissions` whose model and field answers are resolved when it is made and cached.
 * A check is then one or two Map lookups and a bit test.
 */
import { dirKey, embeddedTypesOf, type AuthConfig, type Operation } from './config.js';

/** Field names whose updates are a change of state: updating them takes `state`, not `update`. */
export const STATE_FIELDS: ReadonlySet<string> = new Set(['state', 'status', 'stage', 'lifecycle']);

/**
 * What an operation is about: a model (`{model: 'Task'}`), one of its fields (`{model: 'Task',
 * field: 'title'}`) or embedded types by name (`{model: 'Order', field: 'Contact'}`); a field of
 * the user model; or a connector resource (`{connector: 'stripe.com.charges.list'}`).
 */
export type PermissionTarget = { model: string; field?: string } | { user: 'name' | 'picture' } | { connector: string };

/** The roles a visitor holds besides `default`. */
export interface RoleSet {
  /** Roles of the visitor's top-level profile, and those an endpoint runs as (`👤: {as: …}`). */
  top?: readonly string[];
  /** Roles of the visitor's profile in the container of the record concerned. */
  inContainer?: readonly string[];
}

export interface Permissions {
  /** The roles in effect besides `default` (only those the config declares), sorted. */
  readonly roles: readonly string[];
  /**
   * Whether `op` is allowed on `target`. `update` of a field named state, status, stage or
   * lifecycle asks for `state`. An unknown model or field answers as its broader resource does.
   */
  can(op: Operation, target: PermissionTarget): boolean;
}

const BIT: Readonly<Record<Operation, number>> = { access: 1, read: 2, create: 4, update: 8, delete: 16, state: 32, list: 64 };
const UPDATE = BIT.update;
const STATE = BIT.state;
/** Role sets (as given) kept per scope before the cache starts over (apps have a handful). */
const CACHE_MAX = 512;

type Table = ReadonlyMap<string, number>;

/** The permissions of one directory with a 👤.yaml (and of everything under it without one). */
export class PermissionScope {
  private readonly cache = new Map<string, Permissions>();

  constructor(
    /** The directory (`` for the root) whose 👤.yaml is the nearest. */
    readonly dir: string,
    private readonly config: AuthConfig,
    /** Per declared role: resource key → operation bits, accumulated from the root down to `dir`. */
    private readonly tables: ReadonlyMap<string, Table>,
  ) {}

  /** The effective permissions of a visitor holding `roles` (unknown role names grant nothing). */
  for(roles: RoleSet = {}): Permissions {
    // The key lists the declared roles as given, top and container apart: no sorting and no
    // arrays on the way to a cache hit. Unknown names are left out before the key is made, so a
    // stored name can never pose as a list of roles.
    const top = roles.top ?? NONE;
    const inContainer = roles.inContainer ?? NONE;
    let key = '';
    for (let i = 0; i < top.length; i++) if (this.isRole(top[i]!)) key += top[i] + ',';
    if (inContainer.length > 0) {
      key += '|';
      for (let i = 0; i < inContainer.length; i++) if (this.isRole(inContainer[i]!)) key += inContainer[i] + ',';
    }
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    // The same roles in another order or split otherwise share one Permissions.
    const names = [...new Set(key.split(/[,|]/).filter((r) => r !== ''))].sort();
    const canonical = names.join(',');
    let made = this.cache.get(canonical);
    if (made === undefined) {
      made = this.config.enabled ? new CompiledPermissions(names, this.merge(names), this.config) : new FullPermissions(names);
      this.remember(canonical, made);
    }
    this.remember(key, made);
    return made;
  }

  private remember(key: string, permissions: Permissions): void {
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(key, permissions);
  }

  private isRole(name: string): boolean {
    return name !== 'default' && this.tables.has(name);
  }

  private merge(roles: readonly string[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const role of ['default', ...roles]) {
      for (const [k, bits] of this.tables.get(role) ?? []) out.set(k, (out.get(k) ?? 0) | bits);
    }
    return out;
  }
}

const NONE: readonly string[] = [];

/** No /👤.yaml: there are no users, and `default` may do everything (docs/permissions.md "Roles"). */
class FullPermissions implements Permissions {
  constructor(readonly roles: readonly string[]) {}
  can(): boolean {
    return true;
  }
}

interface ModelBits {
  /** `📦.Model` with everything broader. */
  bits: number;
  /** Per field (and per embedded type name): its own grants with the model's. */
  fields: Map<string, number>;
}

class CompiledPermissions implements Permissions {
  private readonly all: number;
  private readonly models = new Map<string, ModelBits>();
  /** Everything broader than a model: for names the schema does not have. */
  private readonly pkg: number;
  private readonly userName: number;
  private readonly userPicture: number;
  private readonly connectors: Map<string, number>;

  constructor(
    readonly roles: readonly string[],
    table: Map<string, number>,
    config: AuthConfig,
  ) {
    const get = (k: string): number => table.get(k) ?? 0;
    this.all = get('*');
    this.pkg = this.all | get('📦');
    this.userName = this.all | get('👤.User.name');
    this.userPicture = this.all | get('👤.User.picture');
    this.connectors = new Map([...table].filter(([k]) => !k.startsWith('📦') && !k.startsWith('👤') && k !== '*'));
    for (const model of config.schema.models.values()) {
      const bits = this.pkg | get(`📦.${model.name}`);
      const fields = new Map<string, number>();
      const embedded = embeddedTypesOf(model);
      for (const [type, holders] of embedded) {
        const typeBits = bits | get(`📦.${model.name}.${type}`);
        fields.set(type, typeBits);
        for (const f of holders) fields.set(f, typeBits);
      }
      for (const f of model.fields) fields.set(f.name, (fields.get(f.name) ?? bits) | get(`📦.${model.name}.${f.name}`));
      if (model.kind === 'profile') for (const f of ['user', 'role']) fields.set(f, bits | get(`📦.${model.name}.${f}`));
      this.models.set(model.name, { bits, fields });
    }
  }

  can(op: Operation, target: PermissionTarget): boolean {
    let bit = BIT[op];
    if (bit === undefined) return false;
    if ('model' in target) {
      const field = target.field;
      if (bit === UPDATE && field !== undefined && STATE_FIELDS.has(field)) bit = STATE;
      const m = this.models.get(target.model);
      if (m === undefined) return (this.pkg & bit) !== 0;
      if (field === undefined) return (m.bits & bit) !== 0;
      return ((m.fields.get(field) ?? m.bits) & bit) !== 0;
    }
    if ('user' in target) return ((target.user === 'name' ? this.userName : target.user === 'picture' ? this.userPicture : this.all) & bit) !== 0;
    if ((this.all & bit) !== 0) return true;
    // A connector resource: its own grants, then those of each shorter path (`stripe.com.charges` …).
    let name = target.connector;
    for (;;) {
      if (((this.connectors.get(name) ?? 0) & bit) !== 0) return true;
      const dot = name.lastIndexOf('.');
      if (dot <= 0) return false;
      name = name.slice(0, dot);
    }
  }
}

/** Per config: its scopes by directory, compiled on first use. */
const compiled = new WeakMap<AuthConfig, Map<string, PermissionScope>>();

/** The scopes of a config: one per 👤.yaml, each role's table holding its ancestors' grants. */
function scopesOf(config: AuthConfig): Map<string, PermissionScope> {
  let scopes = compiled.get(config);
  if (scopes !== undefined) return scopes;
  scopes = new Map();
  const tablesByDir = new Map<string, Map<string, Map<string, number>>>();
  for (const file of config.files) {
    // Files come parents first: start from the nearest enclosing file's tables.
    let parent: Map<string, Map<string, number>> | undefined;
    for (let d = file.dir; parent === undefined && d !== ''; ) {
      d = d.slice(0, d.lastIndexOf('/'));
      parent = tablesByDir.get(d);
    }
    const tables = new Map<string, Map<string, number>>();
    for (const role of config.roles.keys()) tables.set(role, new Map(parent?.get(role) ?? []));
    for (const grant of file.grants) {
      const table = tables.get(grant.role);
      if (table === undefined) continue;
      let bits = 0;
      for (const op of grant.ops) bits |= BIT[op];
      table.set(grant.key, (table.get(grant.key) ?? 0) | bits);
    }
    tablesByDir.set(file.dir, tables);
    scopes.set(file.dir, new PermissionScope(file.dir, config, tables));
  }
  if (!scopes.has('')) scopes.set('', new PermissionScope('', config, new Map([['default', new Map()]])));
  compiled.set(config, scopes);
  return scopes;
}

/**
 * The permission scope of an app path (a directory such as `/projects/{project}`, or a file in
 * it): that of its nearest 👤.yaml. The loader keeps one per endpoint; a request then calls `for`.
 */
export function permissionScope(config: AuthConfig, path: string): PermissionScope {
  const scopes = scopesOf(config);
  // Walk up to the nearest directory with a 👤.yaml; the root always has a scope.
  for (let d = dirKey(path); d !== ''; d = d.slice(0, d.lastIndexOf('/'))) {
    const scope = scopes.get(d);
    if (scope !== undefined) return scope;
  }
  return scopes.get('')!;
}

/** The effective permissions at `path` of a visitor holding `roles`: `permissionScope(config, path).for(roles)`. */
export function permissionsFor(config: AuthConfig, path: string, roles: RoleSet = {}): Permissions {
  return permissionScope(config, path).for(roles);
}

/** Whether updating a field of this name is a change of state (docs/permissions.md "Operations": `state`). */
export function isStateField(name: string): boolean {
  return STATE_FIELDS.has(name);
}
