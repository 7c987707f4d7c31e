/**
 * Path parameter definitions (docs/routing.md "Dynamic segments", docs/request.md): every `{param}`
 * directory has a 🔗.yaml and every `{param}.html` page a `{param}🔗.yaml`, holding one of `values:`
 * (a list, or an options field of a model), `field:` (a model's id or uid field) or `feature:`.
 * Read once at load; the router checks fixed values, model-params.ts resolves records at request
 * time.
 *
 * `values: 📦.Task.status` becomes the list of that options field's values here, checked by the
 * router like a written list.
 */
import { parseDocument } from 'yaml';
import type { DiagnosticList } from '../../diag/index.js';
import type { ModelSchema } from '../../models/index.js';
import { paramName, type ParamValue } from '../../router/index.js';
import { yamlToJS, type SourceTree } from '../../shared/index.js';
import { isPrivateDir, type ClassifiedFile } from './classify.js';

/** How a `{param}` segment turns into a value (🔗.yaml; docs/request.md "Path parameters: `'🔗'`"). */
export type ParamDefinition = (
  | { form: 'values'; values: Set<string> }
  | { form: 'field'; field: string }
  | { form: 'options'; field: string }
  | { form: 'feature'; feature: string }
) & {
  /** The 🔗.yaml it comes from. */
  source?: string | undefined;
  /**
   * The feature Laneway does not have that the parameter's model needs (a key-vault model…): the
   * parameter is then any segment, and the files under it answer 501 (docs/status.md "What degrades").
   */
  unavailable?: string | undefined;
};

/** A model field named by a 🔗.yaml: `📦.Task.id` → Task, id. */
export const MODEL_FIELD = /^📦\.(\w+)\.(\w+)$/;

/** The definitions by key: the `{param}` directory, or `dir/name` for a `{name}.html` page. */
export type ParamDefinitions = Map<string, ParamDefinition>;

/** The definition that applies to a matched parameter. */
export function paramDefinitionOf(params: ParamDefinitions, p: ParamValue): ParamDefinition | undefined {
  // A directory parameter's dir is its own `{name}` directory; a `{name}.html` page's is the
  // directory holding the page (which may itself be a parameter directory with another name).
  return params.get(p.dir.endsWith(`/{${p.name}}`) ? p.dir : p.dir + '/' + p.name);
}

export function readParamDefinitions(
  dirs: string[],
  files: ClassifiedFile[],
  tree: SourceTree,
  diagnostics: DiagnosticList,
): Map<string, ParamDefinition> {
  const defs = new Map<string, ParamDefinition>();
  const read = (defPath: string, key: string): void => {
    const source = tree.read(defPath);
    if (source === undefined) return;
    const def = parseParamDefinition(defPath, source, diagnostics);
    if (def) defs.set(key, { ...def, source: defPath });
  };
  const paramDirsByParent = new Map<string, string[]>();
  for (const dir of dirs) {
    if (isPrivateDir(dir)) continue;
    const name = dir.slice(dir.lastIndexOf('/') + 1);
    const param = paramName(name);
    if (param === undefined) continue;
    const parent = dir.slice(0, dir.lastIndexOf('/'));
    paramDirsByParent.set(parent, [...(paramDirsByParent.get(parent) ?? []), dir]);
    checkParamName(param, dir, diagnostics);
    if (tree.read(dir + '/🔗.yaml') === undefined) {
      diagnostics.error('LW_ROUTE_PARAM_NO_DEFINITION', `the dynamic directory ${name} has no 🔗.yaml: add ${dir}/🔗.yaml with a "values:" list or a "field:" of a model`, dir);
    } else {
      read(dir + '/🔗.yaml', dir);
    }
  }
  for (const [parent, list] of paramDirsByParent) {
    if (list.length > 1) {
      for (const dir of list.slice(1)) {
        diagnostics.error('LW_ROUTE_TWO_PARAMS', `two dynamic directories at one level (${list.map((d) => d.slice(parent.length + 1)).join(', ')}): keep one and tell values apart inside it`, dir);
      }
    }
  }
  const fileParamsByDir = new Map<string, ClassifiedFile[]>();
  for (const file of files) {
    if (file.hidden || (file.kind !== 'view' && file.kind !== 'page')) continue;
    const param = paramName(file.name.slice(0, -'.html'.length));
    if (param === undefined) continue;
    checkParamName(param, file.path, diagnostics);
    fileParamsByDir.set(file.dir, [...(fileParamsByDir.get(file.dir) ?? []), file]);
    const defPath = `${file.dir}/{${param}}🔗.yaml`;
    if (tree.read(defPath) === undefined) {
      diagnostics.error('LW_ROUTE_PARAM_NO_DEFINITION', `the dynamic page ${file.name} has no definition: add ${defPath} with a "values:" list or a "field:" of a model`, file.path);
    } else {
      read(defPath, file.dir + '/' + param);
    }
  }
  for (const list of fileParamsByDir.values()) {
    for (const file of list.slice(1)) {
      diagnostics.error('LW_ROUTE_TWO_PARAMS', `two dynamic pages in one directory (${list.map((f) => f.name).join(', ')}): keep one`, file.path);
    }
  }
  return defs;
}

function checkParamName(name: string, path: string, diagnostics: DiagnosticList): void {
  if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)) {
    diagnostics.error('LW_ROUTE_PARAM_NAME', `"{${name}}" is not a valid parameter name: use a lowerCamel identifier such as {taskId}`, path);
  }
}

/** Parses a 🔗.yaml: exactly one of `values:` (a list, or an options field), `field:`, `feature:`. */
export function parseParamDefinition(path: string, source: string, diagnostics: DiagnosticList): ParamDefinition | undefined {
  const doc = parseDocument(source);
  const err = doc.errors[0];
  if (err) {
    const pos = err.linePos?.[0];
    diagnostics.at('error', 'LW_APP_YAML', `invalid YAML: ${err.message.split('\n')[0]}`, path, { line: pos?.line ?? 1, column: pos?.col ?? 1 });
    return undefined;
  }
  const js = yamlToJS(doc);
  if ('error' in js) {
    diagnostics.error('LW_APP_YAML', js.error, path, source, js.offset);
    return undefined;
  }
  const data = js.value;
  const fail = (message: string): undefined => {
    diagnostics.error('LW_ROUTE_PARAM_DEFINITION', message, path);
    return undefined;
  };
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    return fail('a 🔗.yaml holds one key: "values: [a, b]", "values: 📦.Model.field", "field: 📦.Model.field" or "feature: name"');
  }
  const keys = Object.keys(data);
  if (keys.length !== 1) return fail(`a 🔗.yaml holds exactly one of "values", "field", "feature"; found ${keys.join(', ') || 'nothing'}`);
  const value = (data as Record<string, unknown>)[keys[0]!];
  switch (keys[0]) {
    case 'values':
      if (Array.isArray(value)) {
        const bad = value.find((v) => typeof v !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(v));
        if (bad !== undefined) return fail(`"values:" entries must be URL-safe lowercase strings (a-z, 0-9, -); "${String(bad)}" is not`);
        return { form: 'values', values: new Set(value as string[]) };
      }
      if (typeof value === 'string' && /^(📦|🗄)\.\w+\.\w+$/.test(value)) return { form: 'options', field: value };
      return fail('"values:" is a list of URL-safe strings, or an options field such as 📦.Task.status');
    case 'field':
      if (typeof value === 'string' && /^(📦|🗄)\.\w+\.\w+$/.test(value)) return { form: 'field', field: value };
      return fail('"field:" names a model field such as 📦.Task.id or 🗄.Article.uid');
    case 'feature':
      if (typeof value === 'string' && value) return { form: 'feature', feature: value };
      return fail('"feature:" names a resolver');
    default:
      return fail(`unknown key "${keys[0]}": use "values", "field" or "feature"`);
  }
}

/** A static model field named by a 🔗.yaml: `🗄.Article.uid` → Article, uid. */
export const STATIC_FIELD = /^🗄\.(\w+)\.(\w+)$/;

/**
 * Checks model references of the 🔗.yaml files against the definitions (`📦.M.f` against
 * /📦/, `🗄.M.f` against /🗄/); options become value lists.
 */
export function checkModelParams(params: Map<string, ParamDefinition>, schema: ModelSchema, diagnostics: DiagnosticList, staticSchema?: ModelSchema): void {
  for (const [key, def] of params) {
    if (def.form !== 'field' && def.form !== 'options') continue;
    const isStatic = STATIC_FIELD.test(def.field);
    const m = isStatic ? STATIC_FIELD.exec(def.field) : MODEL_FIELD.exec(def.field);
    if (!m) continue;
    const where = def.source ?? key;
    const models: ModelSchema["models"] = isStatic ? staticSchema?.models ?? new Map() : schema.models;
    const model = models.get(m[1]!);
    const unavailable = isStatic ? undefined : schema.unavailable?.get(m[1]!);
    if (!model && unavailable !== undefined) {
      diagnostics.warn(
        'LW_APP_NOT_AVAILABLE',
        `the model ${m[1]} is left out: it is one of the ${unavailable} (docs/status.md, "Not available": ${unavailable}); the files that take this parameter answer 501 Not Implemented, and the rest of the app runs`,
        where,
      );
      params.set(key, { form: 'feature', feature: m[1]!, source: def.source, unavailable });
      continue;
    }
    if (!model) {
      const names = [...models.keys()];
      diagnostics.error('LW_ROUTE_PARAM_DEFINITION', `there is no ${isStatic ? 'static ' : ''}model ${m[1]} in ${isStatic ? '/🗄/' : '/📦/'}${names.length ? `; the models are ${names.join(', ')}` : ''}`, where);
      params.delete(key);
      continue;
    }
    const field = model.fields.find((f) => f.name === m[2]);
    if (def.form === 'options') {
      if (field?.type !== 'options') {
        diagnostics.error('LW_ROUTE_PARAM_DEFINITION', `"values: ${def.field}" needs an options field; ${model.name}.${m[2]} is ${field ? `a ${field.type} field` : 'not a field'}`, where);
        params.delete(key);
        continue;
      }
      params.set(key, { form: 'values', values: new Set((field.values ?? []).map((v) => v.value)), source: def.source });
      continue;
    }
    if (m[2] !== 'id' && (field?.type !== 'uid' || field.list !== undefined)) {
      diagnostics.error(
        'LW_ROUTE_PARAM_DEFINITION',
        `"field: ${def.field}" must name the id or a uid field of ${model.name}${field ? ` (${m[2]} is a ${field.type} field)` : ` (it has no field ${m[2]})`}`,
        where,
      );
      params.delete(key);
    }
  }
}
