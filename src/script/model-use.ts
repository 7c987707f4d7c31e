/**
 * Build-time checks of a script's use of the app's models (docs/queries.md "Errors"): what the
 * compiler can see from the source alone, reported at the member's line and column.
 *
 * - `Task.titel(…)`, `Task.titel_gt(…)`: a member the model does not have (LW_MODEL_MEMBER);
 * - `new Task().titel('x')`: a setter of a field the model does not have (LW_MODEL_MEMBER);
 * - `Task.settings({…})` where `settings` is a map, list or rich-text field: a query on a field
 *   that cannot be queried (LW_MODEL_QUERY);
 * - `new Task()` or `….modify(fn)` of a model query in a script that cannot write — a GET
 *   endpoint or a supplier (LW_MODEL_READ_ONLY).
 *
 * What a value is at run time (a record held in a variable, a query passed to a function) is not
 * followed: those mistakes are reported by the runtime with the same codes.
 */
import type { DiagnosticList } from '../diag/index.js';

type AnyNode = { type: string; start: number; end: number; [key: string]: unknown };

/** What a script may name on one model (computed by the app from the definitions). */
export interface ModelShape {
  /** `M.x`: queries, field functions, container selection, inline embedded types… */
  statics: ReadonlySet<string>;
  /** Field names: setters of `new M().field(v)`. */
  fields: ReadonlySet<string>;
  /** Record members other than fields (`remove`, `copy`, the container link…). */
  instance: ReadonlySet<string>;
  /** Fields that cannot be queried, with the reason (`a map field`). */
  unqueryable: ReadonlyMap<string, string>;
}

export interface ModelUseRules {
  /** The models of `'📦'` by name (embedded types are not listed: they are not checked). */
  models: ReadonlyMap<string, ModelShape>;
  /** Set when the script cannot write: how to name it in the message ("a GET script"). */
  readOnly?: string | undefined;
  /** The static models of `'🗄'` by name: read-only everywhere. */
  staticModels?: ReadonlyMap<string, ModelShape> | undefined;
}

export interface ImportedName {
  module: string;
  name: string;
  local: string;
}

export function checkModelUse(program: AnyNode, imports: readonly ImportedName[], rules: ModelUseRules, file: string, source: string, diagnostics: DiagnosticList): void {
  const direct = new Map<string, string>(); // local → model
  const namespaces = new Map<string, ReadonlyMap<string, ModelShape>>(); // import * as D from '📦' (or '🗄')
  const statics = rules.staticModels ?? new Map<string, ModelShape>();
  // Shapes by model name, and the static (read-only) ones; names are unique across both modules.
  const shapes = new Map<string, ModelShape>([...rules.models, ...statics]);
  for (const imp of imports) {
    const models = imp.module === '📦' ? rules.models : imp.module === '🗄' ? statics : undefined;
    if (!models) continue;
    if (imp.name === '*') namespaces.set(imp.local, models);
    else if (models.has(imp.name)) direct.set(imp.local, imp.name);
  }
  if (direct.size === 0 && namespaces.size === 0) return;
  // A name declared again somewhere (a parameter `(Task) => …`) is not checked: it may not be the model.
  for (const name of declaredNames(program)) {
    direct.delete(name);
    namespaces.delete(name);
  }
  const error = (code: 'LW_MODEL_MEMBER' | 'LW_MODEL_QUERY' | 'LW_MODEL_READ_ONLY', node: AnyNode, message: string) =>
    diagnostics.error(code, message, file, source, node.start);

  /** The model an expression names: `Task`, `D.Task`. */
  const modelOf = (node: AnyNode): string | undefined => {
    if (node.type === 'Identifier') return direct.get(node.name as string);
    if (node.type === 'MemberExpression' && !node.computed && (node.object as AnyNode).type === 'Identifier' && namespaces.has((node.object as AnyNode).name as string)) {
      const name = (node.property as AnyNode).name as string;
      return namespaces.get((node.object as AnyNode).name as string)!.has(name) ? name : undefined;
    }
    return undefined;
  };
  /** The model of a new record: `new Task()` or a chain of its setters `new Task().title('x')`. */
  const newRecordOf = (node: AnyNode): string | undefined => {
    if (node.type === 'NewExpression') return modelOf(node.callee as AnyNode);
    if (node.type === 'CallExpression') {
      const callee = node.callee as AnyNode;
      if (callee.type === 'MemberExpression' && !callee.computed) {
        const model = newRecordOf(callee.object as AnyNode);
        if (model && shapes.get(model)!.fields.has((callee.property as AnyNode).name as string)) return model;
      }
    }
    return undefined;
  };
  /** The model a query chain starts from: `Task.all().filter(…)` → Task. */
  const rootModel = (node: AnyNode): string | undefined => {
    if (node.type !== 'CallExpression') return undefined;
    const callee = node.callee as AnyNode;
    if (callee.type !== 'MemberExpression') return undefined;
    return modelOf(callee.object as AnyNode) ?? rootModel(callee.object as AnyNode);
  };
  /** Whether an expression is a query (or stream) rooted at a model: `Task.all().filter(…)`. */
  const isModelQuery = (node: AnyNode): boolean => {
    if (node.type !== 'CallExpression') return false;
    const callee = node.callee as AnyNode;
    if (callee.type !== 'MemberExpression') return false;
    return modelOf(callee.object as AnyNode) !== undefined || isModelQuery(callee.object as AnyNode);
  };

  const visit = (node: AnyNode, parent: AnyNode | undefined): void => {
    if (node.type === 'MemberExpression' && !node.computed) {
      const property = node.property as AnyNode;
      const name = property.name as string;
      const model = modelOf(node.object as AnyNode);
      if (model) {
        const shape = shapes.get(model)!;
        if (!shape.statics.has(name)) {
          error('LW_MODEL_MEMBER', property, `${model} has no field or query "${name}"${suggest(name, shape.statics)}`);
        } else if (shape.unqueryable.has(name) && parent?.type === 'CallExpression' && parent.callee === node) {
          error('LW_MODEL_QUERY', property, `${model}.${name} is ${shape.unqueryable.get(name)}, which cannot be queried: filter with .filter((r) => …) instead`);
        }
      }
      const record = newRecordOf(node.object as AnyNode);
      if (record && parent?.type === 'CallExpression' && parent.callee === node) {
        const shape = shapes.get(record)!;
        if (!shape.fields.has(name) && !shape.instance.has(name)) {
          error('LW_MODEL_MEMBER', property, `${record} has no field "${name}" to set${suggest(name, shape.fields)}`);
        }
      }
      if (name === 'modify' && parent?.type === 'CallExpression' && parent.callee === node && rootModel(node.object as AnyNode) !== undefined && statics.has(rootModel(node.object as AnyNode)!)) {
        error('LW_MODEL_READ_ONLY', property, `${rootModel(node.object as AnyNode)} is a static model (/🗄/): its documents are files of the app, read-only; edit the files instead`);
      } else if (rules.readOnly && name === 'modify' && parent?.type === 'CallExpression' && parent.callee === node && isModelQuery(node.object as AnyNode)) {
        error('LW_MODEL_READ_ONLY', property, `${rules.readOnly} cannot change records (modify): write from a POST, PUT or DELETE script`);
      }
    }
    if (node.type === 'NewExpression' && statics.has(modelOf(node.callee as AnyNode) ?? '')) {
      const model = modelOf(node.callee as AnyNode)!;
      error('LW_MODEL_READ_ONLY', node, `${model} is a static model (/🗄/): its documents are files of the app, read-only; add a document file under /🗄/${model}/ instead of new ${model}()`);
    } else if (rules.readOnly && node.type === 'NewExpression') {
      const model = modelOf(node.callee as AnyNode);
      if (model) error('LW_MODEL_READ_ONLY', node, `${rules.readOnly} cannot create records (new ${model}): write from a POST, PUT or DELETE script`);
    }
    for (const key of Object.keys(node)) {
      if (key === 'type' || key === 'start' || key === 'end' || key === 'loc') continue;
      const v = node[key];
      if (Array.isArray(v)) {
        for (const c of v) if (isNode(c)) visit(c, node);
      } else if (isNode(v)) visit(v, node);
    }
  };
  visit(program, undefined);
}

function isNode(v: unknown): v is AnyNode {
  return v !== null && typeof v === 'object' && typeof (v as AnyNode).type === 'string';
}

/** Every name a declaration or parameter binds (imports aside). */
function declaredNames(program: AnyNode): Set<string> {
  const names = new Set<string>();
  const bind = (p: AnyNode | null | undefined): void => {
    if (!p) return;
    switch (p.type) {
      case 'Identifier':
        names.add(p.name as string);
        break;
      case 'ObjectPattern':
        for (const prop of p.properties as AnyNode[]) bind(prop.type === 'RestElement' ? (prop.argument as AnyNode) : (prop.value as AnyNode));
        break;
      case 'ArrayPattern':
        for (const e of p.elements as Array<AnyNode | null>) bind(e);
        break;
      case 'AssignmentPattern':
        bind(p.left as AnyNode);
        break;
      case 'RestElement':
        bind(p.argument as AnyNode);
        break;
    }
  };
  const walk = (node: AnyNode): void => {
    if (node.type === 'VariableDeclarator') bind(node.id as AnyNode);
    if (node.type === 'ArrowFunctionExpression' || node.type === 'FunctionExpression' || node.type === 'FunctionDeclaration') {
      for (const p of node.params as AnyNode[]) bind(p);
      if (node.id) bind(node.id as AnyNode);
    }
    if (node.type === 'CatchClause' && node.param) bind(node.param as AnyNode);
    for (const key of Object.keys(node)) {
      const v = node[key];
      if (Array.isArray(v)) {
        for (const c of v) if (isNode(c)) walk(c);
      } else if (isNode(v)) walk(v);
    }
  };
  walk(program);
  return names;
}

/** ": did you mean …?" for a close name (one edit, or a different case). */
function suggest(name: string, known: ReadonlySet<string>): string {
  const lower = name.toLowerCase();
  for (const k of known) if (k.toLowerCase() === lower || editDistanceAtMostOne(k, name)) return `; did you mean "${k}"?`;
  return '';
}

function editDistanceAtMostOne(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1 || a === b) return false;
  let i = 0;
  let j = 0;
  let edits = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      i++;
      j++;
      continue;
    }
    if (++edits > 1) return false;
    if (a.length > b.length) i++;
    else if (b.length > a.length) j++;
    else {
      // a swap of two neighbours counts as one edit
      if (a[i + 1] === b[j] && a[i] === b[j + 1]) {
        i += 2;
        j += 2;
        continue;
      }
      i++;
      j++;
    }
  }
  return edits + (a.length - i) + (b.length - j) <= 1;
}
