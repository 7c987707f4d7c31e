/**
 * The users configuration of an app (docs/users.md, docs/permissions.md): every `👤.yaml` read once
 * at load into a checked AuthConfig — whether users are on, the auth mode of each directory, the
 * sign-in providers, the declared roles and every permission grant — and the `👤:` key of endpoint
 * configurations (docs/permissions.md "Endpoint configuration"). Pure: texts in, data and
 * diagnostics out; no HTTP, no database. Every mistake is reported at its YAML line and column, and
 * reading carries on.
 */
import { isMap, isScalar, isSeq, parseDocument, type Node, type Pair } from 'yaml';
import { locate, type Code, type DiagnosticList } from '../diag/index.js';
import type { ModelDefinition, ModelSchema, SourcePosition } from '../models/index.js';
import { normalizeName } from '../shared/index.js';

/** What a directory asks of its visitors once the modes are resolved. */
export type AuthMode = 'none' | 'required' | 'optional';
/** `auth:` as written; `inherit` (the default) takes the mode of the enclosing directory. */
export type DeclaredAuthMode = AuthMode | 'inherit';

/** The operations a permission grants. `all` (every one of them) and `none` are written, never stored. */
export const OPERATIONS = ['access', 'read', 'create', 'update', 'delete', 'state', 'list'] as const;
export type Operation = (typeof OPERATIONS)[number];

/**
 * What a grant is about, from the broadest to the most specific: `all` (a whole role written as
 * `Name: all`), `📦` (every model), `📦.Model`, `📦.Model.field` and `📦.Model.Embedded`; the user
 * model's `👤.User.name` and `👤.User.picture`; and connector resources (`stripe.com`,
 * `stripe.com.charges.list`), kept as written.
 */
export type Resource =
  | { kind: 'all' }
  | { kind: 'models' }
  | { kind: 'model'; model: string }
  | { kind: 'field'; model: string; field: string }
  | { kind: 'embedded'; model: string; embedded: string }
  | { kind: 'user'; field: 'name' | 'picture' }
  | { kind: 'connector'; name: string };

/** One `resource: operations` line of a role, or a whole role written `Name: all`. */
export interface Grant {
  role: string;
  resource: Resource;
  /** The resource as text: `*` for a whole role, else as written (`📦.Task.title`, `stripe.com`). */
  key: string;
  /** The operations granted: every one for `all`, none for `none`. */
  ops: readonly Operation[];
  at: SourcePosition;
}

/** One 👤.yaml. */
export interface AuthFile {
  /** `/👤.yaml`, `/auth/👤.yaml`. */
  file: string;
  /** The directory it governs: `` for the root, `/auth`, `/projects/{project}`. */
  dir: string;
  /** `auth:` as written (`inherit` when absent). */
  mode: DeclaredAuthMode;
  /** The mode once `inherit` is resolved against the enclosing files. */
  effectiveMode: AuthMode;
  /** Its grants, in the order written. */
  grants: readonly Grant[];
}

/** A provider of `providers:`; its client id and secret come from the environment, never from the app. */
export interface AuthProvider {
  name: string;
  /** `google` and `github` are known; any other name is a generic OpenID Connect provider. */
  kind: 'google' | 'github' | 'oidc';
  at: SourcePosition;
}

/** A role name, where /👤.yaml declares it (`default` exists without being written). */
export interface RoleDeclaration {
  name: string;
  at?: SourcePosition;
}

export interface AuthConfig {
  /** Whether the app has a /👤.yaml. Without one there are no users, and `default` may do everything. */
  readonly enabled: boolean;
  /** `providers:` of /👤.yaml, in order. */
  readonly providers: readonly AuthProvider[];
  /** `default` and every role /👤.yaml declares. */
  readonly roles: ReadonlyMap<string, RoleDeclaration>;
  /** Every 👤.yaml taken into account, parents before their sub-directories. */
  readonly files: readonly AuthFile[];
  /** The models the resources were checked against (permissions look up embedded fields in it). */
  readonly schema: ModelSchema;
  /**
   * The effective auth mode of an app path (a directory such as `/auth` or `/projects/{project}`,
   * or a file in it): that of the nearest 👤.yaml above it that does not inherit, else the
   * parent site's mode (for a nested site), else `none`.
   */
  modeFor(path: string): AuthMode;
}

export interface AuthFileSource {
  /** App-relative path of a file the loader classified as `users`: `/👤.yaml`, `/auth/👤.yaml`. */
  path: string;
  text: string;
}

export interface ReadAuthOptions {
  /**
   * For a nested site: the parent site's effective mode at the mount point. `inherit` at the root
   * takes it, and no directory of the nested site is looser (docs/users.md "Nested sites").
   */
  parentMode?: AuthMode;
}

/** How strict each mode is: a nested site may raise its parent's mode, never lower it. */
const STRICTNESS: Readonly<Record<AuthMode, number>> = { none: 0, optional: 1, required: 2 };

/** The stricter of two modes. */
function stricter(a: AuthMode, b: AuthMode): AuthMode {
  return STRICTNESS[a] >= STRICTNESS[b] ? a : b;
}

/** Whether a directory is the sign-in area (`/auth` and below). */
function inSignInArea(dir: string): boolean {
  return dir === '/auth' || dir.startsWith('/auth/');
}

const MODES: readonly DeclaredAuthMode[] = ['inherit', 'none', 'required', 'optional'];
const KNOWN_PROVIDERS: Record<string, AuthProvider['kind']> = { google: 'google', github: 'github' };
/** Lowercase, so that `LANEWAY_AUTH_<NAME>_CLIENT_ID` names it once upper-cased. */
const PROVIDER_NAME = /^[a-z][a-z0-9_]{0,31}$/;
const ROLE_NAME = /^[A-Z][A-Za-z0-9_]*$/;
/** A connector resource: a domain, then the connector's endpoint path in dots (`stripe.com.charges.list`). */
const CONNECTOR = /^[a-z0-9][a-z0-9-]*(?:\.[A-Za-z0-9_-]+)+$/;
const USER_FIELDS = ['name', 'picture'] as const;
/** Fields every profile model has besides those it defines (docs/models.md: reserved names). */
const PROFILE_FIELDS = ['user', 'role'];
const RESOURCE_FORMS = '📦, 📦.Model, 📦.Model.field, 📦.Model.Embedded, 👤.User.name, 👤.User.picture, or a connector such as stripe.com';
const OPERATION_LIST = `all, ${OPERATIONS.join(', ')}, none`;
/** Words people reach for, and the operation to write instead. */
const OPERATION_HINTS: Record<string, Operation> = {
  get: 'read', load: 'read', view: 'read', select: 'access', exists: 'access', visible: 'access', accessible: 'access',
  new: 'create', add: 'create', insert: 'create', write: 'update', set: 'update', edit: 'update', modify: 'update',
  remove: 'delete', destroy: 'delete', query: 'list', find: 'list', status: 'state',
};

/**
 * Reads every 👤.yaml of an app. `files` are the app's `users` files with their texts, in any
 * order; `schema` holds the models resources are checked against. Problems go to `diagnostics`;
 * the config holds what is valid.
 */
export function readAuthConfig(
  files: readonly AuthFileSource[],
  schema: ModelSchema,
  diagnostics: DiagnosticList,
  options: ReadAuthOptions = {},
): AuthConfig {
  const rootInherit: AuthMode = options.parentMode ?? 'none';
  const sources = files
    .map((f) => ({ path: f.path, text: f.text, dir: f.path.slice(0, f.path.lastIndexOf('/')) }))
    .sort((a, b) => depth(a.dir) - depth(b.dir) || (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
  const root = sources.find((s) => s.dir === '');
  /**
   * The least a directory of a nested site may be: the parent's mode at the mount point; but a
   * nested site with users of its own keeps its sign-in area (`/auth/`, where its gate sends
   * visitors) open to visitors who are not signed in yet: there the least is `optional`.
   */
  const floor = (dir: string): AuthMode => (rootInherit === 'required' && root !== undefined && inSignInArea(dir) ? 'optional' : rootInherit);
  const roles = new Map<string, RoleDeclaration>([['default', { name: 'default' }]]);
  const providers: AuthProvider[] = [];
  const read: AuthFile[] = [];
  const modes = new Map<string, AuthMode>();
  /** Whether /👤.yaml parsed: when not, its roles are unknown and sub-directories' are not reported as undeclared. */
  let rootRead = true;

  for (const source of sources) {
    const isRoot = source.dir === '';
    if (!root) {
      diagnostics.error(
        'LW_AUTH_NO_ROOT',
        `${source.path} has no effect: users are turned on by a /👤.yaml at the root of the app; add one (it may hold just \`auth: none\`), or remove this file`,
        source.path,
      );
      continue;
    }
    const reader = new FileReader(source.path, source.text, diagnostics, schema, roles, isRoot, rootRead);
    const parsed = reader.read(providers);
    if (isRoot) rootRead = parsed.parsed;
    let effective = parsed.mode === 'inherit' ? undefined : parsed.mode;
    if (effective === undefined) {
      for (let d = source.dir; effective === undefined && d !== ''; ) {
        d = d.slice(0, d.lastIndexOf('/'));
        effective = modes.get(d);
      }
      effective ??= rootInherit;
    }
    const least = floor(source.dir);
    if (parsed.mode !== 'inherit' && stricter(parsed.mode, least) !== parsed.mode) {
      diagnostics.warn(
        'LW_AUTH_NESTED_MODE',
        `auth: ${parsed.mode} is looser than the site this one is mounted in allows here (${least}): a nested site may make its parent's mode stricter, never looser, so this directory is ${least}`,
        source.path,
        source.text,
        parsed.modeAt ?? 0,
      );
    }
    // Kept as the site says; the parent's floor is applied where a mode is asked for.
    modes.set(source.dir, effective);
    read.push({ file: source.path, dir: source.dir, mode: parsed.mode, effectiveMode: stricter(effective, least), grants: parsed.grants });
  }

  return {
    enabled: root !== undefined,
    providers,
    roles,
    files: read,
    schema,
    modeFor(path: string): AuthMode {
      const key = dirKey(path);
      for (let d = key; ; d = d.slice(0, d.lastIndexOf('/'))) {
        const mode = modes.get(d);
        if (mode !== undefined) return stricter(mode, floor(key));
        if (d === '') return floor(key);
      }
    },
  };
}

/** `/a/b/` and `/a/b` → `/a/b`; `/` → `` (the form AuthFile.dir has). */
export function dirKey(path: string): string {
  let p = path.startsWith('/') ? path : '/' + path;
  while (p.endsWith('/')) p = p.slice(0, -1);
  return p;
}

function depth(dir: string): number {
  let n = 0;
  for (let i = 0; i < dir.length; i++) if (dir.charCodeAt(i) === 47) n++;
  return n;
}

type Entry = Pair<Node | null, Node | null>;

/** Reads one 👤.yaml, reporting at its nodes. */
class FileReader {
  private readonly grants: Grant[] = [];

  constructor(
    readonly file: string,
    readonly source: string,
    readonly diagnostics: DiagnosticList,
    readonly schema: ModelSchema,
    /** Declared roles: the root file adds to it, the others only read it. */
    readonly roles: Map<string, RoleDeclaration>,
    readonly isRoot: boolean,
    /** False when /👤.yaml did not parse: its roles are unknown, so none is reported as undeclared. */
    readonly rolesKnown: boolean,
  ) {}

  read(providers: AuthProvider[]): { mode: DeclaredAuthMode; modeAt?: number; grants: Grant[]; parsed: boolean } {
    const root = parseYaml(this.file, this.source, this.diagnostics);
    let mode: DeclaredAuthMode = 'inherit';
    let modeAt: number | undefined;
    if (root === undefined) return { mode, grants: this.grants, parsed: false };
    if (root === null || (isScalar(root) && root.value === null)) return { mode, grants: this.grants, parsed: true };
    if (!isMap(root)) {
      this.error('LW_AUTH_FILE', 'a 👤.yaml is a map of keys, such as `auth: required` and roles like `Owner: all`', root);
      return { mode, grants: this.grants, parsed: false };
    }
    const entries = root.items as Entry[];
    // The root file declares its roles first, so that the order of its keys does not matter.
    if (this.isRoot) {
      for (const entry of entries) {
        const key = keyText(entry);
        if (key !== undefined && ROLE_NAME.test(key) && !this.roles.has(key)) this.roles.set(key, { name: key, at: this.at(entry.key) });
      }
    }
    for (const entry of entries) {
      const key = keyText(entry);
      if (key === undefined) {
        this.error('LW_AUTH_UNKNOWN_KEY', 'keys of a 👤.yaml are plain names: auth, providers, default, or a role name', entry.key);
      } else if (key === 'auth') {
        mode = this.readMode(entry) ?? mode;
        modeAt = offsetOf(entry.value);
      } else if (key === 'providers') {
        this.readProviders(entry, providers);
      } else if (key === 'default' || /^[A-Z]/.test(key)) {
        this.readRole(key, entry);
      } else {
        // A lowercase key holding what a role holds is most likely a role written in lowercase.
        const asRole = [...this.roles.keys()].find((r) => r.toLowerCase() === key.toLowerCase()) ?? key.charAt(0).toUpperCase() + key.slice(1);
        const looksLikeRole = isMap(entry.value) || (isScalar(entry.value) && (entry.value.value === 'all' || entry.value.value === 'none'));
        const hint = looksLikeRole && ROLE_NAME.test(asRole) ? ` (role names start with an uppercase letter: did you mean ${asRole}?)` : '';
        this.error('LW_AUTH_UNKNOWN_KEY', `"${key}" is not a key of 👤.yaml${hint}: the keys are auth, providers, default, and role names that start with an uppercase letter`, entry.key);
      }
    }
    return { mode, ...(modeAt === undefined ? {} : { modeAt }), grants: this.grants, parsed: true };
  }

  private readMode(entry: Entry): DeclaredAuthMode | undefined {
    const value = isScalar(entry.value) ? entry.value.value : undefined;
    if (typeof value === 'string' && (MODES as readonly string[]).includes(value)) return value as DeclaredAuthMode;
    this.error('LW_AUTH_MODE', `auth: takes one of ${MODES.join(', ')}, not ${describe(entry.value)}`, entry.value, entry.key);
    return undefined;
  }

  private readProviders(entry: Entry, providers: AuthProvider[]): void {
    if (!this.isRoot) {
      this.error('LW_AUTH_PROVIDERS', 'providers: belongs in /👤.yaml: sign-in is the same for the whole site; move the list there', entry.key);
      return;
    }
    if (entry.value === null || (isScalar(entry.value) && entry.value.value === null)) return; // an empty list
    if (!isSeq(entry.value)) {
      this.error('LW_AUTH_PROVIDERS', 'providers: is a list of provider names, such as `providers: [google, github]`', entry.value, entry.key);
      return;
    }
    for (const item of entry.value.items as Array<Node | null>) {
      const name = isScalar(item) ? item.value : undefined;
      if (typeof name !== 'string' || !PROVIDER_NAME.test(name)) {
        this.error('LW_AUTH_PROVIDERS', `${describe(item)} is not a provider name: use google, github, or a name of your own for an OpenID Connect provider (lowercase letters, digits and _, starting with a letter)`, item, entry.key);
        continue;
      }
      if (providers.some((p) => p.name === name)) {
        this.error('LW_AUTH_PROVIDERS', `the provider ${name} is listed twice`, item);
        continue;
      }
      providers.push({ name, kind: KNOWN_PROVIDERS[name] ?? 'oidc', at: this.at(item) });
    }
  }

  private readRole(role: string, entry: Entry): void {
    if (role !== 'default' && !ROLE_NAME.test(role)) {
      this.error('LW_AUTH_ROLE_NAME', `"${role}" is not a role name: use letters, digits and _, starting with an uppercase letter, such as ${role.replace(/[^A-Za-z0-9_]+/g, '') || 'Owner'}`, entry.key);
      return;
    }
    if (!this.roles.has(role)) {
      if (!this.rolesKnown) return;
      const declared = [...this.roles.keys()];
      const close = suggest(role, declared);
      this.error(
        'LW_AUTH_ROLE_UNDECLARED',
        `the role ${role} is not declared in /👤.yaml${close ? ` (did you mean ${close}?)` : ''}: sub-directories only add permissions to roles the root file declares; declare it there, as \`${role}: none\` to grant nothing outside this directory (the roles are ${declared.join(', ')})`,
        entry.key,
      );
      return;
    }
    const value = entry.value;
    const word = isScalar(value) ? value.value : undefined;
    if (word === 'all') {
      this.grants.push({ role, resource: { kind: 'all' }, key: '*', ops: OPERATIONS, at: this.at(value) });
      return;
    }
    if (word === 'none') {
      if (!this.isRoot) this.noneOutsideRoot(value);
      return;
    }
    if (!isMap(value)) {
      const lower = role.toLowerCase();
      const hint =
        lower === 'auth' || lower === 'providers'
          ? `; did you mean \`${lower}:\`?`
          : typeof word === 'string' && isOperationList(word)
            ? `; to grant ${word} on every model, write \`${role}: {📦: ${word}}\``
            : '';
      const empty = value === null || (isScalar(value) && value.value === null);
      this.error(
        'LW_AUTH_ROLE_VALUE',
        `the role ${role} is \`all\`, \`none\` (in /👤.yaml only) or a map of resources to operations, such as \`📦.Task: read, list\`, not ${describe(value)}${hint}`,
        empty ? entry.key : value,
        entry.key,
      );
      return;
    }
    const own = new Map<string, { grant: Grant; item: Entry }>();
    for (const item of value.items as Entry[]) {
      const key = keyText(item);
      const resource = key === undefined ? undefined : this.readResource(key, item.key);
      const ops = this.readOperations(item);
      if (resource === undefined || ops === undefined || key === undefined) continue;
      const grant: Grant = { role, resource, key: normalizeName(key), ops, at: this.at(item.key) };
      own.set(grant.key, { grant, item });
      this.grants.push(grant);
    }
    this.warnNoneCovered(own);
  }

  /** `📦.Secret: none` next to `📦: read` of the same role: the broader grant still reaches Secret. */
  private warnNoneCovered(own: Map<string, { grant: Grant; item: Entry }>): void {
    for (const { grant, item } of own.values()) {
      if (grant.ops.length > 0) continue;
      const broader = broaderKeys(grant.resource).find((k) => (own.get(k)?.grant.ops.length ?? 0) > 0);
      if (broader === undefined) continue;
      this.warn(
        'LW_AUTH_NONE_COVERED',
        `\`${grant.key}: none\` grants nothing, but ${broader} of the same role still applies to ${grant.key}: permissions are only ever granted; to keep ${grant.key} from this role, grant the narrower resources one by one instead of ${broader}`,
        item.value,
        item.key,
      );
    }
  }

  /** A resource key of a role: checked against the models; connectors are kept as written. */
  private readResource(raw: string, node: Node | null): Resource | undefined {
    const key = normalizeName(raw);
    const parts = key.split('.');
    if (parts[0] === '📦') {
      if (parts.length === 1) return { kind: 'models' };
      const modelName = parts[1]!;
      const model = this.schema.models.get(modelName);
      if (!model) {
        this.reportModel(modelName, key, node);
        return undefined;
      }
      if (parts.length === 2) return { kind: 'model', model: modelName };
      const member = parts[2]!;
      if (parts.length > 3) {
        this.error('LW_AUTH_RESOURCE', `"${key}" is too deep: a model resource is 📦.${modelName}, 📦.${modelName}.field or 📦.${modelName}.Embedded`, node);
        return undefined;
      }
      if (/^[A-Z]/.test(member)) {
        const embedded = embeddedTypesOf(model);
        if (embedded.has(member)) return { kind: 'embedded', model: modelName, embedded: member };
        const list = [...embedded.keys()];
        this.error(
          'LW_AUTH_RESOURCE',
          `${modelName} has no embedded type ${member}${hintFor(member, list)}: ${list.length ? `its embedded types are ${list.join(', ')}` : `${modelName} has no embedded fields`}`,
          node,
        );
        return undefined;
      }
      const fields = fieldNamesOf(model);
      if (fields.includes(member)) return { kind: 'field', model: modelName, field: member };
      this.error('LW_AUTH_RESOURCE', `${modelName} has no field "${member}"${hintFor(member, fields)}: its fields are ${fields.join(', ')}`, node);
      return undefined;
    }
    if (parts[0] === '👤') {
      if (parts.length === 3 && parts[1] === 'User' && (USER_FIELDS as readonly string[]).includes(parts[2]!)) {
        return { kind: 'user', field: parts[2] as 'name' | 'picture' };
      }
      this.error('LW_AUTH_RESOURCE', `"${key}" is not a user resource: the user resources are 👤.User.name and 👤.User.picture`, node);
      return undefined;
    }
    if (CONNECTOR.test(key)) return { kind: 'connector', name: key };
    const models = [...this.schema.models.keys()].sort();
    const bare = parts[0]!;
    const hint = this.schema.models.has(bare) ? ` (did you mean 📦.${key}?)` : key.startsWith('📦') ? ` (write a dot after 📦, as 📦.${key.slice('📦'.length)})` : '';
    this.error('LW_AUTH_RESOURCE', `"${key}" is not a resource${hint}: write ${RESOURCE_FORMS}${models.length ? ` (the models are ${models.join(', ')})` : ''}`, node);
    return undefined;
  }

  private reportModel(name: string, key: string, node: Node | null): void {
    const unavailable = this.schema.unavailable?.get(name);
    if (unavailable !== undefined) {
      // A model Laneway cannot define (docs/status.md "What degrades"): its rule has nothing to apply to.
      this.warn('LW_APP_NOT_AVAILABLE', `the model ${name} is left out: it is one of the ${unavailable} (docs/status.md, "Not available": ${unavailable}); the rule for "${key}" is skipped`, node);
      return;
    }
    const models = [...this.schema.models.keys()].sort();
    if (this.schema.embedded.has(name)) {
      const owners = models.filter((m) => embeddedTypesOf(this.schema.models.get(m)!).has(name));
      const example = owners.length ? `, as 📦.${owners[0]}.${name}` : '';
      this.error('LW_AUTH_RESOURCE', `${name} is an embedded type, not a model: write its rule under a model that holds it${example}`, node);
      return;
    }
    const list = models.length ? `the models are ${models.join(', ')}` : 'the app defines no models under /📦/';
    this.error('LW_AUTH_RESOURCE', `there is no model ${name}${hintFor(name, models)} for "${key}": ${list}`, node);
  }

  /** `read, list` → the operations; undefined (reported) when any is wrong. */
  private readOperations(item: Entry): Operation[] | undefined {
    const node = item.value;
    const text = isScalar(node) ? node.value : undefined;
    if (typeof text !== 'string' || text.trim() === '') {
      const empty = node === null || (isScalar(node) && node.value === null);
      this.error('LW_AUTH_OPERATION', `write the operations this role may do, comma-separated, such as \`read, list\`: the operations are ${OPERATION_LIST}`, empty ? item.key : node, item.key);
      return undefined;
    }
    const words = text.split(',').map((w) => w.trim());
    const offsets = this.wordOffsets(node!, words);
    const ops = new Set<Operation>();
    let ok = true;
    let none = false;
    words.forEach((word, i) => {
      const at = offsets[i];
      if (word === '') {
        this.errorAt('LW_AUTH_OPERATION', 'an empty operation between commas: write them as `read, list`', at, node);
        ok = false;
      } else if (word === 'all') {
        for (const op of OPERATIONS) ops.add(op);
      } else if (word === 'none') {
        none = true;
      } else if ((OPERATIONS as readonly string[]).includes(word)) {
        ops.add(word as Operation);
      } else {
        const hint = OPERATION_HINTS[word.toLowerCase()] ?? suggest(word, [...OPERATIONS, 'all', 'none']);
        this.errorAt('LW_AUTH_OPERATION', `"${word}" is not an operation${hint ? `; did you mean ${hint}?` : ''}: the operations are ${OPERATION_LIST}`, at, node);
        ok = false;
      }
    });
    if (none && words.length > 1) {
      this.errorAt('LW_AUTH_OPERATION', '`none` stands alone: it grants nothing, so it cannot be listed with other operations', offsets[words.indexOf('none')], node);
      ok = false;
    } else if (none && !this.isRoot) {
      this.noneOutsideRoot(node);
      ok = false;
    }
    return ok ? OPERATIONS.filter((op) => ops.has(op)) : undefined;
  }

  private noneOutsideRoot(node: Node | null): void {
    const message = '`none` is written only in /👤.yaml (to declare a role that grants nothing there); a sub-directory file only adds permissions: leave the role or resource out of this file';
    this.error('LW_AUTH_OPERATION', message, node);
  }

  /** The offset of each comma-separated word in the source, when the scalar is written on one line as is. */
  private wordOffsets(node: Node, words: string[]): Array<number | undefined> {
    const range = node.range;
    if (!range) return [];
    const raw = this.source.slice(range[0], range[1]);
    const quoted = raw.startsWith('"') || raw.startsWith("'");
    const inner = quoted ? raw.slice(1, -1) : raw;
    if (inner.includes('\n') || inner.split(',').map((w) => w.trim()).join() !== words.join()) return [];
    const out: number[] = [];
    let pos = 0;
    for (const part of inner.split(',')) {
      const lead = part.length - part.trimStart().length;
      out.push(range[0] + (quoted ? 1 : 0) + pos + lead);
      pos += part.length + 1;
    }
    return out;
  }

  error(code: Code, message: string, node: Node | null | undefined, fallback?: Node | null): void {
    this.diagnostics.error(code, message, this.file, this.source, offsetOf(node) ?? offsetOf(fallback) ?? 0);
  }

  warn(code: Code, message: string, node: Node | null | undefined, fallback?: Node | null): void {
    this.diagnostics.warn(code, message, this.file, this.source, offsetOf(node) ?? offsetOf(fallback) ?? 0);
  }

  private errorAt(code: Code, message: string, offset: number | undefined, node: Node | null): void {
    this.diagnostics.error(code, message, this.file, this.source, offset ?? offsetOf(node) ?? 0);
  }

  at(node: Node | null | undefined): SourcePosition {
    return { file: this.file, ...locate(this.source, offsetOf(node) ?? 0) };
  }
}

/** The broader resources of the same role whose grants also reach `resource`, most specific first. */
export function broaderKeys(resource: Resource): string[] {
  switch (resource.kind) {
    case 'field':
    case 'embedded':
      return [`📦.${resource.model}`, '📦', '*'];
    case 'model':
      return ['📦', '*'];
    case 'models':
    case 'user':
      return ['*'];
    case 'connector': {
      const out: string[] = [];
      for (let n = resource.name, i = n.lastIndexOf('.'); i > 0; i = n.lastIndexOf('.')) {
        n = n.slice(0, i);
        if (n.includes('.')) out.push(n);
      }
      return [...out, '*'];
    }
    case 'all':
      return [];
  }
}

/** The names a `📦.Model.field` resource may take: the fields, and `user` and `role` of profiles. */
function fieldNamesOf(model: ModelDefinition): string[] {
  const names = model.fields.map((f) => f.name);
  if (model.kind === 'profile') for (const n of PROFILE_FIELDS) if (!names.includes(n)) names.push(n);
  return names;
}

/**
 * The embedded types a model's fields hold, by the name a resource uses (`Contact` for the inline
 * `Order.Contact` and for a global `Contact`), each with the fields holding it.
 */
export function embeddedTypesOf(model: ModelDefinition): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of model.fields) {
    if (f.type !== 'embedded' || !f.embedded) continue;
    const name = f.embedded.slice(f.embedded.lastIndexOf('.') + 1);
    const list = out.get(name);
    if (list) list.push(f.name);
    else out.set(name, [f.name]);
  }
  return out;
}

/** Parses YAML, reporting its syntax errors; undefined when it does not parse. */
function parseYaml(file: string, source: string, diagnostics: DiagnosticList): Node | null | undefined {
  const doc = parseDocument(source);
  if (doc.errors.length > 0) {
    for (const err of doc.errors) diagnostics.error('LW_APP_YAML', `invalid YAML: ${err.message.split('\n')[0]}`, file, source, err.pos[0]);
    return undefined;
  }
  return doc.contents as Node | null;
}

function keyText(entry: Entry): string | undefined {
  if (!isScalar(entry.key)) return undefined;
  const value = entry.key.value;
  return typeof value === 'string' ? normalizeName(value) : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
}

function offsetOf(node: Node | null | undefined): number | undefined {
  return node?.range?.[0];
}

function describe(node: Node | null | undefined): string {
  if (node === null || node === undefined) return 'nothing';
  if (isScalar(node)) return node.value === null ? 'nothing' : JSON.stringify(node.value);
  if (isSeq(node)) return 'a list';
  if (isMap(node)) return 'a map';
  return 'this';
}

function isOperationList(text: string): boolean {
  return text.split(',').every((w) => (OPERATIONS as readonly string[]).includes(w.trim()));
}

function hintFor(name: string, known: readonly string[]): string {
  const close = suggest(name, known);
  return close ? ` (did you mean ${close}?)` : '';
}

/** The closest known name: the same in another case, or one or two edits away. */
export function suggest(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const same = known.find((k) => k.toLowerCase() === lower);
  if (same !== undefined) return same;
  const limit = name.length >= 5 ? 2 : 1;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const k of known) {
    const d = distance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** Edit distance (insert, delete, replace). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}

/** What an endpoint configuration's `👤:` asks (docs/permissions.md "Endpoint configuration"). */
export interface EndpointAuth {
  /** Roles the endpoint runs with, whoever the visitor: `as:`, and the short forms `👤: Role` and `👤: [A, B]`. */
  as: string[];
  /** Roles a visitor needs one of, else 403: `only:`. */
  only: string[];
  at: SourcePosition;
}

/**
 * Reads an endpoint configuration (`📮setup.yaml` beside `📮setup.js`): its `👤:` key in the
 * documented form `{as: Role, only: Role}` (each also a list) or the apps' short forms `Role` and
 * `[RoleA, RoleB]`, which mean `as`. Every role must be one of `roles` (AuthConfig.roles). Answers
 * undefined when the file has no valid `👤:`.
 */
export function readEndpointAuth(
  text: string,
  file: string,
  roles: ReadonlyMap<string, unknown> | ReadonlySet<string>,
  diagnostics: DiagnosticList,
): EndpointAuth | undefined {
  const root = parseYaml(file, text, diagnostics);
  if (root === undefined || root === null || (isScalar(root) && root.value === null)) return undefined;
  const error = (message: string, node: Node | null | undefined, fallback?: Node | null): void =>
    diagnostics.error('LW_AUTH_ENDPOINT', message, file, text, offsetOf(node) ?? offsetOf(fallback) ?? 0);
  if (!isMap(root)) {
    error('an endpoint configuration is a map of keys, such as `👤: {only: Owner}`', root);
    return undefined;
  }
  const known = [...roles.keys()];
  /** A role name or a list of them; undefined (reported) when any is wrong. */
  const names = (node: Node | null, key: Node | null, what: string): string[] | undefined => {
    const items: Array<Node | null> = isSeq(node) ? (node.items as Array<Node | null>) : [node];
    if (items.length === 0) {
      error(`${what} names at least one role`, node, key);
      return undefined;
    }
    const out: string[] = [];
    let ok = true;
    for (const item of items) {
      const name = isScalar(item) && typeof item.value === 'string' ? normalizeName(item.value) : undefined;
      if (name === undefined) {
        error(`${what} takes a role name or a list of role names, not ${describe(item)}`, item, key);
        ok = false;
      } else if (!roles.has(name)) {
        diagnostics.error(
          'LW_AUTH_ROLE_UNDECLARED',
          `the role ${name} is not declared in /👤.yaml${hintFor(name, known)}: declare it there, or use one of ${known.join(', ')}`,
          file,
          text,
          offsetOf(item) ?? 0,
        );
        ok = false;
      } else if (!out.includes(name)) {
        out.push(name);
      }
    }
    return ok ? out : undefined;
  };

  let result: EndpointAuth | undefined;
  for (const entry of root.items as Entry[]) {
    const key = keyText(entry);
    if (key !== '👤') {
      diagnostics.warn(
        'LW_AUTH_ENDPOINT_KEY',
        `${key === undefined ? 'this key' : `"${key}"`} is not an endpoint setting; it is ignored (the one setting is 👤:, as \`👤: {as: Role}\` or \`👤: {only: Role}\`)`,
        file,
        text,
        offsetOf(entry.key) ?? 0,
      );
      continue;
    }
    const at = { file, ...locate(text, offsetOf(entry.key) ?? 0) };
    const value = entry.value;
    if (isMap(value)) {
      const auth: EndpointAuth = { as: [], only: [], at };
      let ok = true;
      for (const item of value.items as Entry[]) {
        const k = keyText(item);
        if (k !== 'as' && k !== 'only') {
          error(`${k === undefined ? 'this key' : `"${k}"`} is not a key of 👤:; the keys are as (run with the role's permissions) and only (answer 403 to visitors without the role)`, item.key);
          ok = false;
          continue;
        }
        const list = names(item.value, item.key, `👤: ${k}:`);
        if (list) auth[k].push(...list);
        else ok = false;
      }
      if (ok && auth.as.length + auth.only.length === 0) {
        error('👤: names a role, as `👤: {as: Role}` or `👤: {only: Role}`', value, entry.key);
        ok = false;
      }
      if (ok) result = auth;
    } else if (isSeq(value) || (isScalar(value) && typeof value.value === 'string')) {
      const list = names(value, entry.key, '👤:');
      if (list) result = { as: list, only: [], at };
    } else {
      error(`👤: takes a role name, a list of role names, or a map with as: and only:, not ${describe(value)}`, value, entry.key);
    }
  }
  return result;
}
