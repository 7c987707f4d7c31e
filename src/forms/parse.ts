/**
 * A form file (`📤/⏳Name.yaml`, docs/forms.md "Form files") → a FormType. The shapes:
 *
 * ```yaml
 * 🎛: {requirePreviousState: false}     # optional, any shape
 *
 * 📦.Product: [name, price]             # one model: a `fields` form
 *
 * 📦.Product:                           # with per-field overrides
 *   - name: {label: Product Name, placeholder: A short name, about: Shown in lists}
 *   - price
 *
 * OneForm: {📦.One: [fieldOne]}         # groups: each a form of its own model (SetupForm.OneForm)
 * TwoForm: {📦.Two: [fieldTwo]}
 *
 * Begin: {📦.Product: [name]}           # steps of one model: the first names the model,
 * +End: [price]                         # `+` adds to the step before (End: name, price);
 * Review: [name]                        # a later step without `+` has only its own fields
 * ```
 *
 * A file is a steps form when a name starts with `+` or an entry after the first is a bare field
 * list (`Review: [name]`); otherwise entries of the form `Name: {📦.Model: …}` are groups. Every
 * problem is reported at the YAML key or value it concerns, and parsing carries on with what is
 * valid.
 */
import { isMap, isScalar, isSeq, parseDocument, type Node, type Pair } from 'yaml';
import { locate, type Code, type DiagnosticList } from '../diag/index.js';
import type { FieldDefinition, ModelDefinition, ModelSchema, SourcePosition } from '../models/index.js';
import { fieldsForm, makeFormField, notFillableReason, type FieldOverrides } from './fields.js';
import type { FormField, FormType } from './types.js';

const MODEL_PREFIX = '📦.';
const SETTINGS_KEY = '🎛';
const PASCAL = /^[A-Z][A-Za-z0-9]*$/;
const FIELD_OPTIONS = ['label', 'placeholder', 'about', 'readOnly'];
const SETTINGS = ['requirePreviousState'];
const SHAPES = '`📦.Product: [name, price]`, groups such as `OneForm: {📦.One: [fieldOne]}`, or steps such as `Begin: {📦.Product: [name]}` then `+End: [price]`';

type YamlPair = Pair<Node | null, Node | null>;

/** One top-level `Name:` or `+Name:` entry (a group or a step). */
interface SubEntry {
  name: string;
  plus: boolean;
  pair: YamlPair;
}

/** Helpers bound to one file. */
class FormScope {
  constructor(
    readonly file: string,
    readonly source: string,
    readonly schema: ModelSchema,
    readonly diagnostics: DiagnosticList,
  ) {}

  error(code: Code, message: string, node: Node | null | undefined, fallback?: Node | null): void {
    this.diagnostics.error(code, message, this.file, this.source, offsetOf(node) ?? offsetOf(fallback) ?? 0);
  }

  at(node: Node | null | undefined): SourcePosition {
    return { file: this.file, ...locate(this.source, offsetOf(node) ?? 0) };
  }
}

/** No value written (`key:` alone): report at the key rather than at the end of its line. */
function isNull(node: Node | null | undefined): boolean {
  return node === null || node === undefined || (isScalar(node) && node.value === null);
}

function offsetOf(node: Node | null | undefined): number | undefined {
  return node?.range?.[0];
}

/** A key or value as text, with U+FE0F removed (`🎛️` is `🎛`); undefined when it is not a scalar string. */
function text(node: Node | null | undefined): string | undefined {
  if (!isScalar(node) || typeof node.value !== 'string') return undefined;
  return node.value.replace(/\uFE0F/g, '');
}

/** `⏳NewTask.yaml` (the last segment of `file`) → `NewTask`, or undefined when it is not a form file name. */
export function formNameOf(file: string): string | undefined {
  const base = file.slice(file.lastIndexOf('/') + 1).replace(/\uFE0F/g, '');
  const m = /^⏳(.*)\.yaml$/u.exec(base);
  return m && PASCAL.test(m[1]!) ? m[1] : undefined;
}

/**
 * Parses one form file. Returns undefined when the name, the YAML or the whole shape is wrong
 * (each reported); otherwise a form holding every valid part, the rest reported.
 */
export function parseFormFile(file: string, source: string, schema: ModelSchema, diagnostics: DiagnosticList): FormType | undefined {
  const name = formNameOf(file);
  if (name === undefined) {
    const base = file.slice(file.lastIndexOf('/') + 1);
    const stem = base.replace(/^⏳/u, '').replace(/\.[^.]*$/, '');
    const pascal = stem.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
    const hint = PASCAL.test(pascal) ? `, such as ⏳${pascal}.yaml` : '';
    diagnostics.error('LW_FORM_FILE_NAME', `${base} is not a form definition: name it ⏳<Name>.yaml with a PascalCase name${hint}`, file);
    return undefined;
  }
  const scope = new FormScope(file, source, schema, diagnostics);
  const doc = parseDocument(source);
  if (doc.errors.length > 0) {
    for (const err of doc.errors) diagnostics.error('LW_APP_YAML', `invalid YAML: ${err.message.split('\n')[0]}`, file, source, err.pos[0]);
    return undefined;
  }
  const root = doc.contents;
  if (!isMap(root) || root.items.length === 0) {
    scope.error('LW_FORM_DEFINITION', `a form names a model and the fields a visitor fills: ${SHAPES}`, root);
    return undefined;
  }

  // Sort the entries: settings, models, groups and steps.
  let requirePreviousState = true;
  const models: YamlPair[] = [];
  const subs: SubEntry[] = [];
  for (const pair of root.items as YamlPair[]) {
    const key = text(pair.key);
    if (key === undefined) {
      scope.error('LW_FORM_DEFINITION', `a form's entries are named: ${SHAPES}`, pair.key, pair.value);
    } else if (key === SETTINGS_KEY) {
      requirePreviousState = readSettings(pair, scope) ?? requirePreviousState;
    } else if (key.startsWith(MODEL_PREFIX)) {
      models.push(pair);
    } else {
      const plus = key.startsWith('+');
      subs.push({ name: plus ? key.slice(1) : key, plus, pair });
    }
  }

  if (models.length > 0) {
    for (const extra of models.slice(1)) {
      scope.error('LW_FORM_DEFINITION', `a form fills one model; to fill several, make each a group, such as \`OneForm: {📦.One: [fieldOne]}\``, extra.key);
    }
    for (const sub of subs) {
      scope.error('LW_FORM_DEFINITION', `a form either fills one model (${MODEL_PREFIX}Model: [fields]) or is made of groups or steps (Name: {${MODEL_PREFIX}Model: [fields]}), not both: move ${text(models[0]!.key)} into a group or step, or remove "${text(sub.pair.key)}"`, sub.pair.key);
    }
    const model = readModelKey(models[0]!.key, scope);
    if (model === undefined) return undefined;
    const fields = readFieldList(model, models[0]!, scope, []);
    return fieldsForm(name, model.name, fields, requirePreviousState, { file });
  }
  if (subs.length === 0) {
    scope.error('LW_FORM_DEFINITION', `a form names a model and the fields a visitor fills: ${SHAPES}`, root);
    return undefined;
  }

  // Names of groups and steps.
  const seen = new Set<string>();
  for (const sub of subs) {
    if (!PASCAL.test(sub.name)) {
      const modelHint = schema.models.has(sub.name) ? `; to fill the model ${sub.name}, write ${MODEL_PREFIX}${sub.name}:` : '';
      scope.error('LW_FORM_NAME', `"${sub.name}" is not a group or step name: use PascalCase letters and digits, such as OneForm${modelHint}`, sub.pair.key);
    } else if (seen.has(sub.name)) {
      scope.error('LW_FORM_DUPLICATE', `${sub.name} is already a ${isSteps(subs) ? 'step' : 'group'} of this form: give each a name of its own`, sub.pair.key);
    }
    seen.add(sub.name);
  }
  return isSteps(subs) ? readSteps(name, file, subs, requirePreviousState, scope) : readGroups(name, file, subs, requirePreviousState, scope);
}

/** Steps: some name starts with `+`, or an entry after the first is a bare field list (a `+` step may also give its fields as a map). */
function isSteps(subs: readonly SubEntry[]): boolean {
  return subs.some((s, i) => s.plus || (i > 0 && isSeq(s.pair.value)));
}

function readGroups(name: string, file: string, subs: SubEntry[], requirePreviousState: boolean, scope: FormScope): FormType {
  const groups = new Map<string, FormType>();
  for (const sub of subs) {
    const inner = modelPairOf(sub, scope, 'group');
    if (inner === undefined) continue;
    const model = readModelKey(inner.key, scope);
    if (model === undefined) continue;
    const fields = readFieldList(model, inner, scope, []);
    if (!groups.has(sub.name)) groups.set(sub.name, fieldsForm(sub.name, model.name, fields, requirePreviousState, { parent: name, file }));
  }
  return Object.freeze({
    name,
    kind: 'groups' as const,
    model: null,
    fields: Object.freeze([]) as readonly FormField[],
    requirePreviousState,
    groups,
    steps: Object.freeze([]) as readonly FormType[],
    file,
  });
}

function readSteps(name: string, file: string, subs: SubEntry[], requirePreviousState: boolean, scope: FormScope): FormType | undefined {
  const first = subs[0]!;
  if (first.plus) {
    scope.error('LW_FORM_STEP', `the first step has no step before it to add to: write ${first.name}: {${MODEL_PREFIX}Model: [fields]} without +`, first.pair.key);
  }
  if (!isMap(first.pair.value)) {
    scope.error('LW_FORM_STEP', `the first step names the model the steps fill, such as \`${first.name}: {${MODEL_PREFIX}Product: [name]}\``, isNull(first.pair.value) ? first.pair.key : first.pair.value, first.pair.key);
    return undefined;
  }
  const firstInner = modelPairOf(first, scope, 'step');
  const model = firstInner === undefined ? undefined : readModelKey(firstInner.key, scope);
  if (firstInner === undefined || model === undefined) return undefined;

  const steps: FormType[] = [];
  const all: FormField[] = [];
  let previous: readonly FormField[] = [];
  for (const sub of subs) {
    let list: YamlPair | undefined;
    if (sub === first) {
      list = firstInner;
    } else if (isMap(sub.pair.value) && sub.pair.value.items.some((p) => text((p as YamlPair).key)?.startsWith(MODEL_PREFIX))) {
      // `Name: {📦.Product: […]}` after the first step: allowed for the same model.
      const inner = modelPairOf(sub, scope, 'step');
      if (inner === undefined) continue;
      const named = text(inner.key)!.slice(MODEL_PREFIX.length);
      if (named !== model.name) {
        scope.error('LW_FORM_STEP', `the steps of a form fill one model, ${model.name}; to fill ${named} too, make separate forms or groups`, inner.key);
        continue;
      }
      list = inner;
    } else {
      list = sub.pair;
    }
    const inherited = sub.plus ? previous : [];
    const own = readFieldList(model, list, scope, inherited);
    const fields = [...inherited, ...own];
    previous = fields;
    for (const f of fields) if (!all.some((a) => a.name === f.name)) all.push(f);
    if (!steps.some((s) => s.name === sub.name)) steps.push(fieldsForm(sub.name, model.name, fields, requirePreviousState, { parent: name, file }));
  }
  return Object.freeze({
    name,
    kind: 'steps' as const,
    model: model.name,
    fields: Object.freeze(all),
    requirePreviousState,
    groups: new Map<string, FormType>(),
    steps: Object.freeze(steps),
    file,
  });
}

/** The `📦.Model: [fields]` pair inside `Name: {…}`. */
function modelPairOf(sub: SubEntry, scope: FormScope, what: 'group' | 'step'): YamlPair | undefined {
  const value = sub.pair.value;
  const example = `\`${sub.name}: {${MODEL_PREFIX}Product: [name]}\``;
  if (!isMap(value) || value.items.length === 0) {
    const hint = isSeq(value) && scope.schema.models.has(sub.name) ? `to fill the model ${sub.name}, write ${MODEL_PREFIX}${sub.name}: […]; ` : '';
    scope.error('LW_FORM_DEFINITION', `${hint}a ${what} names its model and fields, such as ${example}`, isNull(value) ? sub.pair.key : value, sub.pair.key);
    return undefined;
  }
  const pairs = value.items as YamlPair[];
  const models = pairs.filter((p) => text(p.key)?.startsWith(MODEL_PREFIX));
  for (const p of pairs) {
    if (!text(p.key)?.startsWith(MODEL_PREFIX)) {
      scope.error('LW_FORM_DEFINITION', `a ${what} holds one model and its fields, such as ${example}; "${text(p.key) ?? 'this entry'}" is not one`, p.key, p.value);
    }
  }
  for (const extra of models.slice(1)) {
    scope.error('LW_FORM_DEFINITION', `a ${what} fills one model; make another ${what} for ${text(extra.key)}`, extra.key);
  }
  return models[0];
}

/** `📦.Product` → the model, or undefined (reported). */
function readModelKey(key: Node | null, scope: FormScope): ModelDefinition | undefined {
  const name = text(key)!.slice(MODEL_PREFIX.length);
  const model = scope.schema.models.get(name);
  if (model !== undefined) return model;
  if (scope.schema.embedded.has(name)) {
    scope.error('LW_FORM_MODEL', `${name} is an embedded type, which has no form of its own; forms fill the models of /📦/ (🌐, 📄, 👤)`, key);
    return undefined;
  }
  const names = [...scope.schema.models.keys()];
  const near = suggest(name, names);
  const known = names.length === 0 ? 'the app has no models in /📦/' : `the models are ${names.sort().join(', ')}`;
  scope.error('LW_FORM_MODEL', `there is no model ${name}${near === undefined ? `; ${known}` : `; did you mean ${MODEL_PREFIX}${near}?`}`, key);
  return undefined;
}

/**
 * The fields of `📦.Model: …` (or of a step's bare list): a list whose entries are a field name
 * or `name: {overrides}`, or a map of names to overrides. `before` holds the fields of the step
 * a `+` step adds to.
 */
function readFieldList(model: ModelDefinition, pair: YamlPair, scope: FormScope, before: readonly FormField[]): FormField[] {
  const value = pair.value;
  const entries: Array<{ key: Node | null; overrides: Node | null }> = [];
  if (isSeq(value) && value.items.length > 0) {
    for (const item of value.items as Array<Node | null>) {
      if (isMap(item)) for (const p of item.items as YamlPair[]) entries.push({ key: p.key, overrides: p.value });
      else entries.push({ key: item, overrides: null });
    }
  } else if (isMap(value) && value.items.length > 0) {
    for (const p of value.items as YamlPair[]) entries.push({ key: p.key, overrides: p.value });
  } else {
    const first = model.fields.find((f) => notFillableReason(f) === undefined)?.name ?? 'title';
    scope.error('LW_FORM_DEFINITION', `list the fields a visitor fills, such as \`[${first}]\``, isNull(value) ? pair.key : value, pair.key);
    return [];
  }

  const out: FormField[] = [];
  for (const { key, overrides } of entries) {
    const name = text(key);
    if (name === undefined || name === '') {
      scope.error('LW_FORM_DEFINITION', 'a field entry is a field name, or a name with options such as `- title: {label: Title}`', key);
      continue;
    }
    if (out.some((f) => f.name === name)) {
      scope.error('LW_FORM_DUPLICATE', `${name} is already in this form: name each field once`, key);
      continue;
    }
    if (before.some((f) => f.name === name)) {
      scope.error('LW_FORM_DUPLICATE', `${name} is already in the step before, which this + step adds to: remove it here`, key);
      continue;
    }
    const field = model.fields.find((f) => f.name === name);
    if (field === undefined) {
      const fillable = model.fields.filter((f) => notFillableReason(f) === undefined).map((f) => f.name);
      const near = suggest(name, fillable);
      const known = fillable.length === 0 ? `${model.name} has no field a form can fill` : `its fields are ${fillable.join(', ')}`;
      scope.error('LW_FORM_FIELD', `${model.name} has no field "${name}"${near === undefined ? `; ${known}` : `; did you mean "${near}"?`}`, key);
      continue;
    }
    const reason = notFillableReason(field);
    if (reason !== undefined) {
      scope.error('LW_FORM_FIELD_NOT_ALLOWED', `${model.name}.${name} cannot be in a form: ${reason}`, key);
      continue;
    }
    out.push(makeFormField(model.name, field, readOverrides(field, overrides, key, scope), scope.at(key)));
  }
  return out;
}

/** `{label: …, placeholder: …, about: …, readOnly: true}` */
function readOverrides(field: FieldDefinition, node: Node | null, key: Node | null, scope: FormScope): FieldOverrides {
  const out: FieldOverrides = {};
  if (isNull(node)) return out;
  if (!isMap(node)) {
    scope.error('LW_FORM_OPTION', `the options of ${field.name} are a map, such as \`- ${field.name}: {label: ${field.label}}\``, node, key);
    return out;
  }
  for (const p of node.items as YamlPair[]) {
    const option = text(p.key);
    switch (option) {
      case 'label': {
        const label = labelOf(p.value);
        if (label === undefined) scope.error('LW_FORM_OPTION', `label: takes a text, or a map of languages to texts such as \`{en: Due, de: Fällig}\``, p.value, p.key);
        else out.label = label;
        break;
      }
      case 'placeholder':
      case 'about': {
        const value = isScalar(p.value) && (typeof p.value.value === 'string' || typeof p.value.value === 'number') ? String(p.value.value) : undefined;
        if (value === undefined) scope.error('LW_FORM_OPTION', `${option}: takes a text`, p.value, p.key);
        else out[option] = value;
        break;
      }
      case 'readOnly': {
        const value = isScalar(p.value) ? p.value.value : undefined;
        if (typeof value !== 'boolean') scope.error('LW_FORM_OPTION', 'readOnly: takes true or false', p.value, p.key);
        else out.readOnly = value;
        break;
      }
      default: {
        const near = option === undefined ? undefined : suggest(option, FIELD_OPTIONS);
        const shown = option === undefined || !/^[\w.-]{1,40}$/.test(option) ? 'this option' : `"${option}"`;
        scope.error('LW_FORM_OPTION', `${shown} is not a form field option${near === undefined ? '' : ` (did you mean ${near}?)`}; the options are ${FIELD_OPTIONS.join(', ')}`, p.key);
      }
    }
  }
  return out;
}

/** A text, or the first text of a per-locale map (as model labels are read). */
function labelOf(node: Node | null): string | undefined {
  if (isScalar(node) && (typeof node.value === 'string' || typeof node.value === 'number')) return String(node.value);
  if (isMap(node) && node.items.length > 0) {
    const values = (node.items as YamlPair[]).map((p) => (isScalar(p.value) && typeof p.value.value === 'string' ? p.value.value : undefined));
    return values.every((v) => v !== undefined) ? values[0] : undefined;
  }
  return undefined;
}

/** `🎛: {requirePreviousState: false}` → the setting, or undefined when absent or wrong (reported). */
function readSettings(pair: YamlPair, scope: FormScope): boolean | undefined {
  const block = pair.value;
  if (!isMap(block)) {
    scope.error('LW_FORM_SETTINGS', 'the 🎛: block of a form is a map, such as `🎛: {requirePreviousState: false}`', block, pair.key);
    return undefined;
  }
  let result: boolean | undefined;
  for (const p of block.items as YamlPair[]) {
    const key = text(p.key);
    if (key !== 'requirePreviousState') {
      const near = key === undefined ? undefined : suggest(key, SETTINGS);
      const shown = key === undefined || !/^[\w.-]{1,40}$/.test(key) ? 'this setting' : `"${key}"`;
      scope.error('LW_FORM_SETTINGS', `${shown} is not a form setting${near === undefined ? '' : ` (did you mean ${near}?)`}; the 🎛: block of a form takes \`requirePreviousState: false\``, p.key);
      continue;
    }
    const value = isScalar(p.value) ? p.value.value : undefined;
    if (typeof value !== 'boolean') {
      scope.error('LW_FORM_SETTINGS', 'requirePreviousState: takes true or false', p.value, p.key);
      continue;
    }
    result = value;
  }
  return result;
}

/**
 * The closest of `known` to `name`: the same name in another case, a name it begins (from 4
 * characters: `desc` → `description`), or one within a small edit distance (1 for short names, 2
 * from 5 characters, 3 from 9); undefined when none is close.
 */
export function suggest(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const same = known.find((k) => k.toLowerCase() === lower);
  if (same !== undefined) return same;
  const longer = lower.length >= 4 ? known.find((k) => k.toLowerCase().startsWith(lower)) : undefined;
  if (longer !== undefined) return longer;
  const limit = name.length >= 9 ? 3 : name.length >= 5 ? 2 : 1;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance with adjacent transpositions, giving up (returning `cap`) once it reaches `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin >= cap) return cap;
    prev2 = prev;
    prev = row;
  }
  return Math.min(prev[b.length]!, cap);
}
