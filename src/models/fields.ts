/**
 * One definition file → a ModelDefinition: the `🎛:` block, then each field in short form
 * (`title?: string`, `tags[5]: string`) or long form (a map with `type:` and options). Every
 * problem is reported at the YAML key or value it concerns, and parsing carries on.
 */
import { isMap, isScalar, isSeq, parseDocument, type Node, type Pair } from 'yaml';
import { locate, type Code, type DiagnosticList } from '../diag/index.js';
import {
  FIELDS_MAX,
  LIST_MAX,
  LIST_TYPES,
  NAME_MAX,
  labelFromName,
  type FieldDefinition,
  type FieldType,
  type ModelDefinition,
  type ModelKind,
  type OptionValue,
  type ValueType,
} from './schema.js';

const VALUE_TYPES: ReadonlySet<string> = new Set<ValueType>([
  'string', 'boolean', 'integer', 'double', 'timestamp', 'date', 'options', 'country',
  'map', 'geo', 'hierarchy', 'svg-icon', 'uid', 'html', 'markdown', 'image',
]);

/** Types of the platform that this version does not store yet. */
const NOT_AVAILABLE: Record<string, string> = {
  source: 'a git URL of a site',
  namespace: "a namespace of the platform's",
  domain: 'a domain name',
};

/** Names people reach for, and the type to write instead. */
const TYPE_HINTS: Record<string, string> = {
  text: 'string', str: 'string', int: 'integer', long: 'integer', number: 'double', float: 'double',
  decimal: 'double', bool: 'boolean', datetime: 'timestamp', time: 'timestamp', enum: 'options',
  select: 'options', slug: 'uid', svg: 'svg-icon', icon: 'svg-icon', json: 'map', object: 'map',
  location: 'geo', md: 'markdown', list: 'string[] (a list of strings)', array: 'string[] (a list of strings)',
};

/** Types of static-model documents (/🗄/): the stored type each one is, and what it reads from the document. */
const DOCUMENT_TYPES: Record<string, { type: ValueType; document: 'markdown' | 'uid' | 'date' }> = {
  'document-markdown': { type: 'markdown', document: 'markdown' },
  'document-text': { type: 'markdown', document: 'markdown' },
  'document-uid': { type: 'uid', document: 'uid' },
  'document-date': { type: 'date', document: 'date' },
};

const COMMON_OPTIONS = ['optional', 'label', 'placeholder', 'about', 'protected', 'order'];
const TYPE_OPTIONS: Record<FieldType, string[]> = {
  string: ['min', 'max', 'unique'],
  boolean: ['init'],
  integer: ['min', 'max', 'init'],
  double: ['min', 'max'],
  timestamp: ['init'],
  date: ['init'],
  options: ['values', 'init'],
  country: [],
  map: [],
  geo: [],
  hierarchy: ['init'],
  'svg-icon': [],
  uid: [],
  html: ['min', 'max', 'render'],
  markdown: ['min', 'max', 'render'],
  image: ['public'],
  id: [],
  link: [],
  embedded: [],
};

/** Types an `order: true` field may have. */
const ORDER_TYPES: ReadonlySet<FieldType> = new Set<FieldType>(['string', 'integer', 'double', 'timestamp', 'date']);
/** In a contained model, only these names may order (docs/models.md "Ordering"). */
const CONTAINED_ORDER_NAMES = new Set(['title', 'name', 'order', 'hierarchy']);
const RICH_TEXT_MAX = 20000;
const INT64_HINT = 'a whole number between -9223372036854775808 and 9223372036854775807';

const CAMEL = /^[a-z][A-Za-z0-9]*$/;
const PASCAL = /^[A-Z][A-Za-z0-9]*$/;
const OPTION_VALUE = /^[a-z0-9][a-z0-9_-]*$/;
const OPTION_VALUE_MAX = 50;
const PREFIX = /^[a-z]{1,3}_?$/;
const KEY = /^([^?[\]]*)(\?)?(?:\[([^\]]*)\])?(\?)?$/;

/** What the reader knows before parsing a file: every model name (from file names) and its kind. */
export interface ParseContext {
  diagnostics: DiagnosticList;
  known: ReadonlyMap<string, ModelKind>;
  /** Inline embedded types found while parsing are added here (`Order.Contact`). */
  inline: Map<string, ModelDefinition>;
  /** Definitions of static models (/🗄/): the document types are allowed, and links name static models. */
  static?: boolean;
  /**
   * Other `🎛:` settings this file takes (notifications: `default`, `subject`): called for each key
   * other than `prefix`; answers an error message, or undefined when the key was taken.
   */
  setting?: (key: string, value: Node | null, keyNode: Node | null) => string | undefined;
}

/** The model a file defines, as its name and place say. */
export interface ModelHeader {
  name: string;
  kind: ModelKind;
  file: string;
  container?: string;
}

/** Helpers bound to one file: report at a YAML node, turn offsets into positions. */
class FileScope {
  constructor(
    readonly file: string,
    readonly source: string,
    readonly ctx: ParseContext,
  ) {}

  error(code: Code, message: string, node: Node | null | undefined, fallback?: Node | null): void {
    this.ctx.diagnostics.error(code, message, this.file, this.source, offsetOf(node) ?? offsetOf(fallback) ?? 0);
  }

  warn(code: Code, message: string, node: Node | null | undefined, fallback?: Node | null): void {
    this.ctx.diagnostics.warn(code, message, this.file, this.source, offsetOf(node) ?? offsetOf(fallback) ?? 0);
  }

  at(node: Node | null | undefined, fallback?: Node | null) {
    return { file: this.file, ...locate(this.source, offsetOf(node) ?? offsetOf(fallback) ?? 0) };
  }
}

function offsetOf(node: Node | null | undefined): number | undefined {
  return node?.range?.[0];
}

/** Parses one definition file. Returns undefined only when the YAML does not parse. */
export function parseDefinition(header: ModelHeader, source: string, ctx: ParseContext): ModelDefinition | undefined {
  const scope = new FileScope(header.file, source, ctx);
  const doc = parseDocument(source);
  if (doc.errors.length > 0) {
    for (const err of doc.errors) {
      ctx.diagnostics.error('LW_APP_YAML', `invalid YAML: ${err.message.split('\n')[0]}`, header.file, source, err.pos[0]);
    }
    return undefined;
  }
  const model: ModelDefinition = {
    name: header.name,
    kind: header.kind,
    file: header.file,
    ...(header.container === undefined ? {} : { container: header.container }),
    fields: header.kind === 'embedded' ? [] : builtIns(header.file),
    at: { file: header.file, line: 1, column: 1 },
  };
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) {
    if (model.kind === 'profile') model.fields.push(...profileFields(header.file));
    return model; // an empty file: built-ins only
  }
  if (!isMap(root)) {
    scope.error('LW_MODEL_DEFINITION', 'a model definition is a map of fields, one per line, such as `title: string`', root);
    return model;
  }
  const pairs = root.items as Array<Pair<Node | null, Node | null>>;
  const fieldPairs: Array<Pair<Node | null, Node | null>> = [];
  for (const pair of pairs) {
    if (isScalar(pair.key) && pair.key.value === '🎛') readSettingsBlock(model, pair, scope);
    else fieldPairs.push(pair);
  }
  addFields(model, fieldPairs, scope, model);
  checkOrdering(model, scope, fieldPairs);
  if (model.kind === 'profile') model.fields.push(...profileFields(header.file));
  return model;
}

/**
 * A profile's own fields (docs/models.md "User profiles"), after the fields it defines: `user`, the user it
 * belongs to (`.user(Me)`), and `role`, the name of a role of /👤.yaml (`.role(Role.Owner)`).
 * Scripts set them; forms never do (notFillableReason).
 */
function profileFields(file: string): FieldDefinition[] {
  const base = { optional: false, protected: false, order: false, unique: false, builtIn: false, type: 'string' as const, max: 100, at: { file, line: 1, column: 1 } };
  return [
    { ...base, name: 'user', label: 'User', profile: 'user' },
    { ...base, name: 'role', label: 'Role', optional: true, profile: 'role' },
  ];
}

function builtIns(file: string): FieldDefinition[] {
  const base = { optional: false, protected: false, order: false, unique: false, builtIn: true, at: { file, line: 1, column: 1 } };
  return [
    { ...base, name: 'id', type: 'id', label: 'Id', unique: true },
    { ...base, name: 'created', type: 'timestamp', label: 'Created' },
    { ...base, name: 'modified', type: 'timestamp', label: 'Modified' },
  ];
}

/** `🎛: {prefix: tsk_}` */
function readSettingsBlock(model: ModelDefinition, pair: Pair<Node | null, Node | null>, scope: FileScope): void {
  const block = pair.value;
  if (model.kind === 'embedded') {
    scope.error('LW_MODEL_SETTINGS', 'embedded types have no ids, so no 🎛: block; remove it', pair.key);
    return;
  }
  if (!isMap(block)) {
    scope.error('LW_MODEL_SETTINGS', 'the 🎛: block is a map, such as `🎛: {prefix: tsk_}`', block, pair.key);
    return;
  }
  for (const item of block.items as Array<Pair<Node | null, Node | null>>) {
    const key = isScalar(item.key) ? String(item.key.value) : '';
    if (key !== 'prefix' && scope.ctx.setting) {
      const problem = scope.ctx.setting(key, item.value, item.key);
      if (problem !== undefined) scope.error('LW_MODEL_SETTINGS', problem, item.value, item.key);
      continue;
    }
    if (key !== 'prefix') {
      scope.error('LW_MODEL_SETTINGS', `unknown setting "${key}" in 🎛:; the block takes \`prefix: abc_\``, item.key);
      continue;
    }
    const value = isScalar(item.value) ? item.value.value : undefined;
    if (typeof value !== 'string' || !PREFIX.test(value)) {
      scope.error('LW_MODEL_SETTINGS', 'prefix: takes 1 to 3 lowercase letters and an optional trailing _, such as `prefix: tsk_`', item.value, item.key);
      continue;
    }
    model.prefix = value;
  }
}

/** Parses the fields of a model or embedded type into `target.fields`. */
function addFields(target: ModelDefinition, pairs: Array<Pair<Node | null, Node | null>>, scope: FileScope, owner: ModelDefinition): void {
  let count = 0;
  let hierarchy: FieldDefinition | undefined;
  const reserved = reservedNames(target);
  for (const pair of pairs) {
    count++;
    if (count === FIELDS_MAX + 1) {
      scope.error('LW_MODEL_TOO_MANY_FIELDS', `${target.name} has more than ${FIELDS_MAX} fields; group related fields into an embedded type (📎) or a second model`, pair.key);
    }
    const field = parseField(pair, target, scope, owner, reserved);
    if (!field) continue;
    if (field.type === 'hierarchy') {
      if (hierarchy) scope.error('LW_MODEL_HIERARCHY', `${target.name} already has the hierarchy field "${hierarchy.name}"; a model has at most one`, pair.key);
      else hierarchy = field;
    }
    target.fields.push(field);
  }
}

function reservedNames(model: ModelDefinition): Map<string, string> {
  const reserved = new Map<string, string>();
  if (model.kind !== 'embedded') {
    for (const name of ['id', 'created', 'modified']) reserved.set(name, `every model has a built-in "${name}" field; choose another name`);
  }
  if (model.kind === 'profile') {
    for (const name of ['user', 'role']) reserved.set(name, `"${name}" is reserved on user profiles (👤) for the signed-in user; choose another name`);
  }
  if (model.container !== undefined) {
    const back = model.container.charAt(0).toLowerCase() + model.container.slice(1);
    const self = model.name.charAt(0).toLowerCase() + model.name.slice(1);
    reserved.set(back, `"${back}" names the container (${self}.${back}() returns its ${model.container}); choose another name`);
  }
  return reserved;
}

/** One field: its key (name, `?`, `[]`/`[N]`), its type, its options. */
function parseField(
  pair: Pair<Node | null, Node | null>,
  model: ModelDefinition,
  scope: FileScope,
  owner: ModelDefinition,
  reserved: Map<string, string>,
): FieldDefinition | undefined {
  const keyNode = pair.key;
  const rawKey = isScalar(keyNode) && (typeof keyNode.value === 'string' || typeof keyNode.value === 'number') ? String(keyNode.value) : undefined;
  const m = rawKey === undefined ? null : KEY.exec(rawKey);
  if (!m) {
    scope.error('LW_MODEL_FIELD_NAME', 'a field is written `name: type`, with a camelCase name such as `dueDate`', keyNode, pair.value);
    return undefined;
  }
  const name = m[1]!;
  let ok = true;
  if (!CAMEL.test(name) || name.length > NAME_MAX) {
    const hint = name && /^[A-Za-z0-9_ -]+$/.test(name) ? `, such as "${toCamel(name)}"` : ', such as "dueDate"';
    scope.error('LW_MODEL_FIELD_NAME', `"${name}" is not a field name: use camelCase letters and digits, at most ${NAME_MAX} characters${hint}`, keyNode);
    ok = false;
  } else if (reserved.has(name)) {
    scope.error('LW_MODEL_FIELD_RESERVED', reserved.get(name)!, keyNode);
    ok = false;
  }
  if (m[2] && m[4]) {
    scope.error('LW_MODEL_FIELD_NAME', `write one "?" only: \`${name}?[${m[3]}]\``, keyNode);
  }
  let list: number | undefined;
  if (m[3] !== undefined) {
    const n = m[3] === '' ? LIST_MAX : /^[0-9]+$/.test(m[3]) ? Number(m[3]) : NaN;
    if (!(n >= 1 && n <= LIST_MAX) || (m[3] !== '' && n >= LIST_MAX)) {
      scope.error('LW_MODEL_LIST', `a list is written \`${name}[]\` (up to ${LIST_MAX} entries) or \`${name}[N]\` with N from 1 to ${LIST_MAX - 1}`, keyNode);
    } else {
      list = n;
    }
  }

  // The value: a type name (short form) or a map with `type:` (long form).
  const value = pair.value;
  let typeNode: Node | null = null;
  let options: Array<Pair<Node | null, Node | null>> = [];
  if (isScalar(value) && typeof value.value === 'string') {
    typeNode = value;
  } else if (isMap(value)) {
    const items = value.items as Array<Pair<Node | null, Node | null>>;
    const typePair = items.find((p) => isScalar(p.key) && p.key.value === 'type');
    if (!typePair) {
      scope.error('LW_MODEL_DEFINITION', `the field "${name}" has no type: add \`type: string\` (or another type) to its map`, keyNode);
      return undefined;
    }
    typeNode = typePair.value;
    options = items.filter((p) => p !== typePair);
  } else {
    scope.error('LW_MODEL_DEFINITION', `the field "${name}" has no type: write \`${name}: string\` (or another type), or a map with \`type:\``, isScalar(value) && value.value !== null ? value : keyNode);
    return undefined;
  }

  const field: FieldDefinition = {
    name,
    type: 'string',
    label: labelFromName(name),
    optional: Boolean(m[2] || m[4]),
    protected: false,
    order: false,
    unique: false,
    builtIn: false,
    at: scope.at(keyNode),
  };
  if (list !== undefined) field.list = list;

  // The type.
  if (isMap(typeNode)) {
    // Inline embedded type: `type:` followed by a nested field map.
    const inlineName = `${model.name}.${name.charAt(0).toUpperCase()}${name.slice(1)}`;
    const inline: ModelDefinition = { name: inlineName, kind: 'embedded', file: owner.file, fields: [], at: scope.at(typeNode) };
    const inlinePairs = typeNode.items as Array<Pair<Node | null, Node | null>>;
    addFields(inline, inlinePairs, scope, owner);
    checkOrdering(inline, scope, inlinePairs);
    scope.ctx.inline.set(inlineName, inline);
    field.type = 'embedded';
    field.embedded = inlineName;
  } else {
    const typeName = isScalar(typeNode) && typeof typeNode.value === 'string' ? typeNode.value.trim() : undefined;
    if (typeName === undefined || typeName === '') {
      scope.error('LW_MODEL_DEFINITION', `\`type:\` of "${name}" names a field type such as string, or a model`, typeNode, keyNode);
      return undefined;
    }
    const resolved = resolveType(typeName, model, scope, typeNode);
    if (!resolved) return undefined;
    Object.assign(field, resolved);
  }
  if (!ok) return undefined;

  // A platform-internal type kept as a string: its own options (`init:` of a namespace) are ignored.
  const platform = !isMap(typeNode) && isScalar(typeNode) && typeof typeNode.value === 'string' && typeNode.value.trim() in NOT_AVAILABLE;
  applyOptions(field, platform ? options.filter((pair) => platformOption(pair, field, scope)) : options, model, scope);
  if (field.type === 'options' && field.values === undefined) {
    scope.error('LW_MODEL_OPTIONS_VALUES', `the options field "${name}" needs its values: write \`${rawKey}: {type: options, values: [first, second]}\``, keyNode);
  }
  applyDefaults(field);
  checkTypeInModel(field, model, scope, keyNode, typeNode);
  if (field.list !== undefined && !LIST_TYPES.has(field.type)) {
    scope.error('LW_MODEL_LIST', `${describeType(field)} fields cannot be lists; only string, options and embedded types can: write \`${name}: ${describeType(field)}\``, keyNode);
  }
  return field;
}

function resolveType(typeName: string, model: ModelDefinition, scope: FileScope, node: Node | null): Partial<FieldDefinition> | undefined {
  if (VALUE_TYPES.has(typeName)) return { type: typeName as ValueType };
  const doc = DOCUMENT_TYPES[typeName];
  if (doc) {
    if (scope.ctx.static) return { ...doc };
    scope.error('LW_MODEL_TYPE_NOT_ALLOWED', `${typeName} belongs to static models: define this model under /🗄/ (documents in /🗄/${model.name}/), or use ${doc.type}`, node);
    return undefined;
  }
  if (typeName in NOT_AVAILABLE) {
    // Degraded, not refused (docs/status.md "What degrades"): the value is kept as text.
    scope.warn(
      'LW_MODEL_TYPE_NOT_AVAILABLE',
      `${typeName} (${NOT_AVAILABLE[typeName]}) is a platform-internal type that Laneway does not check (docs/status.md, "Not available": the platform-internal field types): the field is a string; write \`string\` to say so`,
      node,
    );
    return { type: 'string' };
  }
  const kind = scope.ctx.known.get(typeName);
  if (kind === 'embedded') return { type: 'embedded', embedded: typeName };
  if (kind !== undefined) return { type: 'link', model: typeName };
  if (PASCAL.test(typeName)) {
    const root = scope.ctx.static ? '/🗄' : '/📦';
    scope.error('LW_MODEL_FIELD_TYPE', `there is no model or embedded type "${typeName}": add ${root}/🌐${typeName}.yaml (a model to link to) or ${root}/📎${typeName}.yaml (an embedded type), or fix the name`, node);
    return undefined;
  }
  const hint = TYPE_HINTS[typeName.toLowerCase()] ?? (VALUE_TYPES.has(typeName.toLowerCase()) ? typeName.toLowerCase() : undefined);
  scope.error(
    'LW_MODEL_FIELD_TYPE',
    `unknown field type "${typeName}"${hint ? `: write ${hint}` : ''}; the types are ${[...VALUE_TYPES].join(', ')}, or the name of a model or embedded type`,
    node,
  );
  void model;
  return undefined;
}

function describeType(field: FieldDefinition): string {
  return field.type === 'link' ? field.model! : field.type === 'embedded' ? field.embedded! : field.type;
}

/** An option of a platform-internal type's field: kept when a string field takes it, else a warning. */
function platformOption(pair: Pair<Node | null, Node | null>, field: FieldDefinition, scope: FileScope): boolean {
  const key = isScalar(pair.key) ? String(pair.key.value) : '';
  if ([...COMMON_OPTIONS, ...TYPE_OPTIONS[field.type]].includes(key)) return true;
  scope.warn('LW_MODEL_TYPE_NOT_AVAILABLE', `${key}: belongs to the platform-internal type, which Laneway stores as a string: it is ignored`, pair.key);
  return false;
}

/** Options of the long form, each checked against the field's type and the model's kind. */
function applyOptions(field: FieldDefinition, options: Array<Pair<Node | null, Node | null>>, model: ModelDefinition, scope: FileScope): void {
  const allowed = [...COMMON_OPTIONS, ...TYPE_OPTIONS[field.type], ...(field.document === 'uid' ? ['path'] : [])];
  const type = describeType(field);
  for (const pair of options) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    const node = pair.value;
    const raw: unknown = isScalar(node) ? node.value : isMap(node) || isSeq(node) ? node.toJSON() : null;
    const bad = (message: string) => scope.error('LW_MODEL_OPTION', message, node && !(isScalar(node) && node.value === null) ? node : pair.key);
    if (!allowed.includes(key)) {
      const known = Object.values(TYPE_OPTIONS).some((list) => list.includes(key));
      const why = known
          ? `${key}: does not apply to ${type} fields`
          : `unknown option "${key}"`;
      scope.error('LW_MODEL_OPTION', `${why}; a ${type} field takes ${allowed.join(', ')}`, pair.key);
      continue;
    }
    switch (key) {
      case 'optional':
      case 'protected':
      case 'order':
      case 'unique': {
        if (typeof raw !== 'boolean') {
          bad(`${key}: takes true or false`);
          break;
        }
        if (key === 'unique' && raw && model.kind !== 'universal' && model.kind !== 'profile') {
          scope.error('LW_MODEL_OPTION', `unique: applies to string fields of Universal (🌐) models; ${model.name} is ${kindName(model.kind)}: remove unique:`, pair.key);
          break;
        }
        field[key] = raw;
        break;
      }
      case 'label': {
        if (typeof raw === 'string' && raw.trim()) field.label = raw;
        else if (raw && typeof raw === 'object' && !Array.isArray(raw) && Object.values(raw).length > 0 && Object.values(raw).every((v) => typeof v === 'string')) {
          field.labels = raw as Record<string, string>;
          field.label = Object.values(raw)[0] as string;
        } else bad('label: takes a text, such as `label: Due date`, or a map of languages to texts, such as `label: {en: Due, de: Fällig}`');
        break;
      }
      case 'placeholder':
      case 'about':
        if (typeof raw === 'string') field[key] = raw;
        else bad(`${key}: takes a text, such as \`${key}: ${key === 'about' ? 'When the task is due' : 'e.g. 2024-05-01'}\``);
        break;
      case 'min':
      case 'max':
        readBound(field, key, raw, bad);
        break;
      case 'init':
        readInit(field, raw, bad);
        break;
      case 'values':
        field.values = readOptionValues(node, scope, pair.key);
        break;
      case 'render':
        field.render = readRender(node, scope, pair.key);
        break;
      case 'path':
        if (typeof raw !== 'boolean') bad('path: takes true (the uid is the document path) or false');
        else field.path = raw;
        break;
      case 'public':
        if (typeof raw !== 'boolean') bad('public: takes true (non-expiring, publicly cacheable image URLs) or false (the default: URLs valid for an hour)');
        else field.public = raw;
        break;
    }
  }
  if (field.min !== undefined && field.max !== undefined && field.min > field.max) {
    const maxPair = options.find((p) => isScalar(p.key) && p.key.value === 'max');
    scope.error('LW_MODEL_OPTION', `min: (${field.min}) is larger than max: (${field.max}); swap them or change one`, maxPair?.value ?? null, maxPair?.key);
  }
}

function kindName(kind: ModelKind): string {
  return kind === 'universal' ? 'a Universal model' : kind === 'content' ? 'a Content (📄) model' : kind === 'profile' ? 'a User Profile (👤)' : 'an embedded type (📎)';
}

function readBound(field: FieldDefinition, key: 'min' | 'max', raw: unknown, bad: (m: string) => void): void {
  const n = typeof raw === 'number' ? raw : NaN;
  switch (field.type) {
    case 'double':
      if (!Number.isFinite(n)) return bad(`${key}: of a double field takes a number, such as \`${key}: 9.99\``);
      break;
    case 'integer':
      if (!Number.isSafeInteger(n)) return bad(`${key}: of an integer field takes ${INT64_HINT.replace('-9223372036854775808 and 9223372036854775807', '-9007199254740991 and 9007199254740991')}, such as \`${key}: 10\``);
      break;
    case 'string':
      if (!Number.isSafeInteger(n) || n < (key === 'min' ? 0 : 1)) return bad(`${key}: of a string field takes a whole number of characters${key === 'max' ? ' of at least 1' : ''}, such as \`${key}: ${key === 'min' ? 3 : 200}\``);
      break;
    case 'html':
    case 'markdown': {
      const unit = field.type === 'html' ? 'bytes' : 'characters';
      if (!Number.isSafeInteger(n) || n < (key === 'min' ? 0 : 1) || n > RICH_TEXT_MAX) {
        return bad(`${key}: of a ${field.type} field takes a whole number of ${unit} from ${key === 'min' ? 0 : 1} to ${RICH_TEXT_MAX}, such as \`${key}: 5000\``);
      }
      break;
    }
  }
  field[key] = n;
}

function readInit(field: FieldDefinition, raw: unknown, bad: (m: string) => void): void {
  if (field.type === 'integer') {
    if (typeof raw === 'boolean' || Number.isSafeInteger(raw)) field.init = raw as boolean | number;
    else bad('init: of an integer field takes true (start at 0) or a whole number, such as `init: 1`');
    return;
  }
  if (typeof raw !== 'boolean') {
    const meaning: Partial<Record<FieldType, string>> = {
      boolean: 'true (start as false)',
      timestamp: 'true (the time of creation)',
      date: 'true (the day of creation)',
      options: 'true (the first value)',
      hierarchy: 'true (after the last record)',
    };
    bad(`init: of a ${field.type} field takes ${meaning[field.type] ?? 'true or false'}`);
    return;
  }
  field.init = raw;
}

/** `values: [a, b]` or `values: {a: Label A, b: Label B}`. */
function readOptionValues(node: Node | null, scope: FileScope, keyNode: Node | null): OptionValue[] {
  const entries: Array<{ value: unknown; label: unknown; node: Node | null }> = [];
  if (isSeq(node)) {
    for (const item of node.items as Array<Node | null>) entries.push({ value: isScalar(item) ? item.value : undefined, label: undefined, node: item });
  } else if (isMap(node)) {
    for (const p of node.items as Array<Pair<Node | null, Node | null>>) {
      entries.push({ value: isScalar(p.key) ? p.key.value : undefined, label: isScalar(p.value) ? p.value.value : undefined, node: p.key });
    }
  } else {
    scope.error('LW_MODEL_OPTIONS_VALUES', 'values: takes a list, such as `values: [active, complete]`, or a map of values to labels, such as `values: {active: Active, complete: Done}`', node, keyNode);
    return [];
  }
  if (entries.length === 0) scope.error('LW_MODEL_OPTIONS_VALUES', 'values: needs at least one value, such as `values: [active, complete]`', node, keyNode);
  const out: OptionValue[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    const value = typeof e.value === 'number' ? String(e.value) : e.value;
    if (typeof value !== 'string' || !OPTION_VALUE.test(value) || value.length > OPTION_VALUE_MAX) {
      const hint = typeof value === 'string' && value ? ` such as "${value.toLowerCase().normalize('NFD').replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'value'}"` : '';
      scope.error('LW_MODEL_OPTIONS_VALUES', `option values are lowercase a-z, 0-9, _ and -, starting with a letter or digit, at most ${OPTION_VALUE_MAX} characters;${hint ? ` write one${hint}, and put the display text in a label (\`values: {value: Label}\`)` : ' write one such as "active"'}`, e.node, keyNode);
      continue;
    }
    if (seen.has(value)) {
      scope.error('LW_MODEL_OPTIONS_VALUES', `the value "${value}" is listed twice; remove one`, e.node, keyNode);
      continue;
    }
    seen.add(value);
    out.push({ value, label: typeof e.label === 'string' && e.label ? e.label : e.label === undefined || e.label === null ? labelFromName(value.replace(/[-_]+(.)/g, (_, c: string) => c.toUpperCase())) : String(e.label) });
  }
  return out;
}

const RENDER_KEYS: Record<string, (v: unknown) => boolean> = {
  autolink: (v) => typeof v === 'boolean' || v === 'blank',
  minimumHeaderLevel: (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 6,
  generateHeaderId: (v) => typeof v === 'boolean',
  typography: (v) => typeof v === 'boolean',
};
const RENDER_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'div', 'p', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a', 'br', 'code', 'em', 's', 'strong', 'sub', 'sup', 'del', 'ins']);

/** `render: {autolink: blank, minimumHeaderLevel: 2, p: 'lead'}` */
function readRender(node: Node | null, scope: FileScope, keyNode: Node | null): Record<string, string | number | boolean> | undefined {
  if (!isMap(node)) {
    scope.error('LW_MODEL_OPTION', 'render: takes a map, such as `render: {autolink: blank, minimumHeaderLevel: 2}`', node, keyNode);
    return undefined;
  }
  const out: Record<string, string | number | boolean> = {};
  for (const p of node.items as Array<Pair<Node | null, Node | null>>) {
    const key = isScalar(p.key) ? String(p.key.value) : '';
    const value = isScalar(p.value) ? p.value.value : undefined;
    const check = RENDER_KEYS[key];
    if (check) {
      if (check(value)) out[key] = value as string | number | boolean;
      else {
        const expect = key === 'autolink' ? 'true, false or blank' : key === 'minimumHeaderLevel' ? 'a whole number from 1 to 6' : 'true or false';
        scope.error('LW_MODEL_OPTION', `render: ${key} takes ${expect}`, p.value, p.key);
      }
    } else if (RENDER_TAGS.has(key)) {
      if (typeof value === 'string' && /^[A-Za-z0-9_ -]*$/.test(value)) out[key] = value;
      else scope.error('LW_MODEL_OPTION', `render: ${key} takes class names separated by spaces, such as \`${key}: 'lead wide'\``, p.value, p.key);
    } else {
      scope.error('LW_MODEL_OPTION', `render: "${key}" is not a rendering option; use autolink, minimumHeaderLevel, generateHeaderId, typography, or an element name (p, h1, a…) with class names`, p.key);
    }
  }
  return out;
}

function applyDefaults(field: FieldDefinition): void {
  switch (field.type) {
    case 'string':
      field.max ??= Math.max(100, field.min ?? 0);
      break;
    case 'integer':
    case 'double':
      field.min ??= Math.min(0, field.max ?? 0);
      break;
    case 'html':
    case 'markdown':
      // A document's Markdown body is the app's own text, read at load: no bound.
      if (field.document !== 'markdown') field.max ??= Math.max(2000, field.min ?? 0);
      break;
  }
}

/** Types and options that depend on the kind of model. */
function checkTypeInModel(field: FieldDefinition, model: ModelDefinition, scope: FileScope, keyNode: Node | null, typeNode: Node | null): void {
  const universal = model.kind === 'universal' || model.kind === 'profile';
  if (field.type === 'hierarchy') {
    if (!universal) {
      scope.error('LW_MODEL_TYPE_NOT_ALLOWED', `hierarchy fields belong to Universal (🌐) models; ${model.name} is ${kindName(model.kind)}: use an integer field with order: true, or move the field`, typeNode, keyNode);
    } else if (field.name !== 'hierarchy' && field.name !== 'order') {
      scope.error('LW_MODEL_HIERARCHY', `a hierarchy field is named "hierarchy" or "order": write \`hierarchy: hierarchy\``, keyNode);
    }
    if (field.list !== undefined) scope.error('LW_MODEL_LIST', 'a hierarchy field cannot be a list: write `hierarchy: hierarchy`', keyNode);
  }
  if (field.type === 'uid' && model.kind !== 'universal' && model.kind !== 'content' && model.kind !== 'profile') {
    scope.error('LW_MODEL_TYPE_NOT_ALLOWED', `uid fields belong to Universal (🌐) and Content (📄) models, not to ${kindName(model.kind)}; use a string field`, typeNode, keyNode);
  }
  if (field.type === 'link' && field.model === model.name && model.kind === 'embedded') {
    scope.error('LW_MODEL_TYPE_NOT_ALLOWED', `${model.name} is an embedded type, so fields cannot link to it; write \`${field.name}: ${model.name}\` in a model to embed it`, typeNode, keyNode);
  }
}

/** `order: true` fields: the right types, the right kind of model, one per model, not beside a hierarchy. */
function checkOrdering(model: ModelDefinition, scope: FileScope, pairs: Array<Pair<Node | null, Node | null>>): void {
  const keyOf = (field: FieldDefinition): Node | null => {
    const pair = pairs.find((p) => isScalar(p.key) && KEY.exec(String(p.key.value))?.[1] === field.name);
    const options = pair && isMap(pair.value) ? (pair.value.items as Array<Pair<Node | null, Node | null>>) : [];
    return options.find((p) => isScalar(p.key) && p.key.value === 'order')?.key ?? pair?.key ?? null;
  };
  const hierarchy = model.fields.find((f) => f.type === 'hierarchy');
  let first: FieldDefinition | undefined;
  for (const field of model.fields) {
    if (!field.order) continue;
    const at = keyOf(field);
    if (!ORDER_TYPES.has(field.type) || field.list !== undefined) {
      scope.error('LW_MODEL_ORDER', `order: true applies to single string, integer, double, timestamp and date fields, not to ${field.list !== undefined ? 'lists' : describeType(field)}; remove it`, at);
    } else if (model.kind !== 'universal' && model.kind !== 'profile' && !scope.ctx.static) {
      scope.error('LW_MODEL_ORDER', `only Universal (🌐) models choose their order; ${model.name} is ${kindName(model.kind)} and is ordered by creation: remove order: true`, at);
    } else if (model.container !== undefined && !CONTAINED_ORDER_NAMES.has(field.name)) {
      scope.error('LW_MODEL_ORDER', `in a contained model only a field named title, name, order or hierarchy can order; rename "${field.name}" or remove order: true`, at);
    } else if (hierarchy) {
      scope.error('LW_MODEL_ORDER', `the hierarchy field "${hierarchy.name}" already orders ${model.name}; remove order: true`, at);
    } else if (first) {
      scope.error('LW_MODEL_ORDER', `"${first.name}" already orders ${model.name}; a model has one ordering field: remove order: true here`, at);
    } else {
      first = field;
      continue;
    }
    field.order = false;
  }
}

function toCamel(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const camel = words.map((w, i) => (i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : w.charAt(0).toUpperCase() + w.slice(1))).join('');
  return /^[a-z]/.test(camel) ? camel.slice(0, NAME_MAX) : 'field';
}
