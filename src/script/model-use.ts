/**
 * Build-time checks of a script's use of the app's models (docs/queries.md "Errors"): what the
 * compiler can see from the source alone, reported at the member's line and column.
 *
 * - `Task.titel(…)`, `Task.titel_gt(…)`: a member the model does not have (LW_MODEL_MEMBER);
 * - `new Task().titel('x')`: a setter of a field the model does not have (LW_MODEL_MEMBER);
 * - `Task.settings({…})` where `settings` is a map, list or rich-text field: a query on a field
 *   that cannot be queried (LW_MODEL_QUERY);
 * - `new Task()` or `….modify(fn)` of a model query in a script that cannot write — a GET
 *   endpoint or a supplier (LW_MODEL_READ_ONLY);
 * - `Task.get(id).titel`, `Task.all().map((t) => t.titel)`: a field read on a record whose model
 *   is certain (LW_MODEL_MEMBER; checkFieldReads).
 *
 * What a value is at run time when the source does not show it (a record passed to a function, a
 * name assigned again) is not followed: those mistakes are left to the runtime.
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
  /** Link fields: the model each names (`project` → Project). */
  links?: ReadonlyMap<string, string>;
}

export interface ModelUseRules {
  /** The models of `'📦'` by name (embedded types are not listed: they are not checked). */
  models: ReadonlyMap<string, ModelShape>;
  /** Set when the script cannot write: how to name it in the message ("a GET script"). */
  readOnly?: string | undefined;
  /** The static models of `'🗄'` by name: read-only everywhere. */
  staticModels?: ReadonlyMap<string, ModelShape> | undefined;
  /** Path parameters backed by a model (`🔗.yaml` `field: 📦.Task.id`): name → model. */
  params?: ReadonlyMap<string, string> | undefined;
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
  const preset = new Map<string, Known>(); // import {task} from '🔗': the parameter's link
  for (const imp of imports) {
    const param = imp.module === '🔗' ? rules.params?.get(imp.name) : undefined;
    if (param && shapes.has(param)) preset.set(imp.local, { kind: 'link', model: param });
    const models = imp.module === '📦' ? rules.models : imp.module === '🗄' ? statics : undefined;
    if (!models) continue;
    if (imp.name === '*') namespaces.set(imp.local, models);
    else if (models.has(imp.name)) direct.set(imp.local, imp.name);
  }
  if (direct.size === 0 && namespaces.size === 0 && preset.size === 0) return;
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
    eachChild(node, (c) => visit(c, node));
  };
  visit(program, undefined);
  // `new Task().titel('x')` is reported above, as a setter.
  const isSetter = (node: AnyNode, parent: AnyNode | undefined) => parent?.type === 'CallExpression' && parent.callee === node && newRecordOf(node.object as AnyNode) !== undefined;
  checkFieldReads(program, modelOf, shapes, statics, preset, isSetter, (node, message) => error('LW_MODEL_MEMBER', node, message));
}

function isNode(v: unknown): v is AnyNode {
  return v !== null && typeof v === 'object' && typeof (v as AnyNode).type === 'string';
}

/** Calls `f` on each child node of `node` (`skip` names keys to leave out), in source order. */
function eachChild(node: AnyNode, f: (child: AnyNode) => void, skip?: (key: string) => boolean): void {
  for (const key of Object.keys(node)) {
    if (skip?.(key)) continue;
    const v = node[key];
    if (Array.isArray(v)) {
      for (const c of v) if (isNode(c)) f(c);
    } else if (isNode(v)) f(v);
  }
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
    eachChild(node, walk);
  };
  walk(program);
  return names;
}

/** ": did you mean …?" for a close name (one edit, or a different case). */
export function suggest(name: string, known: ReadonlySet<string>): string {
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

/** What the field-read check knows an expression is: records, a query of records, or a link. */
type Known = { kind: 'model' | 'record' | 'query' | 'link'; model: string };

/** Query members that keep a query of the same records (docs/queries.md). */
const SAME_QUERY = new Set(['asc', 'desc', 'limit', 'filter', 'distinct']);
/** Query members whose callback receives each record. */
const RECORD_CALLBACKS = new Set(['filter', 'map', 'flatMap', 'forEach', 'modify']);
/** What every object has (`t.toString()`, `t.hasOwnProperty(…)`). */
const OBJECT_MEMBERS = new Set(['toString', 'toLocaleString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', 'constructor']);
/** A link's own members besides the linked model's fields (docs/models.md, links). */
const LINK_MEMBERS = new Set(['id', 'get', 'optional', 'exists', 'linked', 'toJSON']);

/**
 * Build-time check of field reads on records (docs/queries.md "Field reads are checked at build time"):
 * `t.titel` where `t` is certainly a record of a model — `Task.get(id)`, `new Task()`, a query's
 * callback parameter (`Task.all().map((t) => …)`), a path parameter's record — and `t.project.nme` through a link field. A name bound anywhere to a value
 * this check cannot see the type of is left alone: no false errors.
 */
function checkFieldReads(
  program: AnyNode,
  modelOf: (node: AnyNode) => string | undefined,
  shapes: ReadonlyMap<string, ModelShape>,
  staticModels: ReadonlyMap<string, ModelShape>,
  preset: ReadonlyMap<string, Known>,
  skip: (node: AnyNode, parent: AnyNode | undefined) => boolean,
  report: (node: AnyNode, message: string) => void,
): void {
  const assigned = assignedNames(program);
  type Scope = { names: Map<string, Known | null>; parent: Scope | undefined };
  const lookup = (scope: Scope | undefined, name: string): Known | null | undefined => {
    for (let s = scope; s; s = s.parent) if (s.names.has(name)) return s.names.get(name)!;
    return undefined;
  };
  const setType = (scope: Scope, name: string, type: Known | undefined): void => {
    for (let s: Scope | undefined = scope; s; s = s.parent) {
      if (s.names.has(name)) {
        if (type && !assigned.has(name)) s.names.set(name, type);
        return;
      }
    }
  };
  const typeOf = (node: AnyNode, scope: Scope): Known | undefined => {
    switch (node.type) {
      case 'Identifier': {
        const bound = lookup(scope, node.name as string);
        if (bound !== undefined) return bound ?? undefined;
        const model = modelOf(node);
        if (model) return { kind: 'model', model };
        return preset.get(node.name as string);
      }
      case 'AwaitExpression':
        return typeOf(node.argument as AnyNode, scope);
      case 'ChainExpression':
        return typeOf(node.expression as AnyNode, scope);
      case 'NewExpression': {
        const t = typeOf(node.callee as AnyNode, scope);
        return t?.kind === 'model' ? { kind: 'record', model: t.model } : undefined;
      }
      case 'MemberExpression': {
        if (node.computed) return undefined;
        const model = modelOf(node);
        if (model) return { kind: 'model', model };
        const t = typeOf(node.object as AnyNode, scope);
        const name = (node.property as AnyNode).name as string;
        if (t && (t.kind === 'record' || t.kind === 'link')) {
          const target = shapes.get(t.model)?.links?.get(name);
          if (target && shapes.has(target)) return { kind: 'link', model: target };
        }
        return undefined;
      }
      case 'CallExpression': {
        const callee = node.callee as AnyNode;
        if (callee.type !== 'MemberExpression' || callee.computed) return undefined;
        const name = (callee.property as AnyNode).name as string;
        const t = typeOf(callee.object as AnyNode, scope);
        if (!t) return undefined;
        const shape = shapes.get(t.model)!;
        const model = t.model;
        if (t.kind === 'model') {
          if (name === 'get' || name === 'optional') return { kind: 'record', model };
          // Profile.me(): the user's profiles (docs/users.md), a query whose get() is one.
          if (name === 'all' || name === 'asc' || name === 'desc' || (name === 'me' && shape.instance.has('hasRole')) || shape.fields.has(name) || shape.fields.has(name.replace(/_(gt|gte|lt|lte)$/, ''))) return { kind: 'query', model };
          // The container selections: Note.list(l), Note.anyList().
          if (shape.statics.has(name) && (shape.instance.has(name) || (name.startsWith('any') && shape.instance.has(name.charAt(3).toLowerCase() + name.slice(4))))) return { kind: 'query', model };
          return undefined;
        }
        if (t.kind === 'query') {
          if (SAME_QUERY.has(name)) return t;
          if (name === 'get' || name === 'optional') return { kind: 'record', model };
          return undefined;
        }
        if (t.kind === 'record') {
          if (name === 'copy') return t;
          // A fluent setter gives the record back: new Task().title('x').done(false).
          if (shape.fields.has(name) && (node.arguments as AnyNode[]).length === 1 && !shape.links?.has(name) && !staticModels.has(model)) return t;
          return undefined;
        }
        if (name === 'get' || name === 'optional') return { kind: 'record', model };
        return undefined;
      }
    }
    return undefined;
  };

  const checkMember = (node: AnyNode, parent: AnyNode | undefined, scope: Scope): void => {
    if (node.computed || skip(node, parent)) return;
    const t = typeOf(node.object as AnyNode, scope);
    if (!t || (t.kind !== 'record' && t.kind !== 'link')) return;
    const shape = shapes.get(t.model);
    if (!shape) return;
    const property = node.property as AnyNode;
    const name = property.name as string;
    if (shape.fields.has(name) || OBJECT_MEMBERS.has(name)) return;
    if (t.kind === 'record' && (shape.instance.has(name) || (name === 'get' && staticModels.has(t.model)))) return;
    if (t.kind === 'link' && LINK_MEMBERS.has(name)) return;
    const hint = suggest(name, shape.fields);
    const list = shape.fields.size ? `its fields are ${[...shape.fields].join(', ')}` : 'it has no fields';
    const what = t.kind === 'link' ? `${t.model} (the model this link names)` : t.model;
    report(property, `${what} has no field "${name}"${hint || `; ${list}`}`);
  };

  /** Binds the names a declaration introduces directly in `body` (hoisting) as not yet known. */
  const hoist = (statements: AnyNode[], scope: Scope, functionScope: boolean): void => {
    const bindAll = (p: AnyNode | null | undefined) => {
      for (const n of patternNames(p)) scope.names.set(n, null);
    };
    const varsIn = (node: AnyNode): void => {
      if (node.type === 'VariableDeclaration' && node.kind === 'var') for (const d of node.declarations as AnyNode[]) bindAll(d.id as AnyNode);
      if (node.type === 'FunctionDeclaration' || node.type === 'FunctionExpression' || node.type === 'ArrowFunctionExpression' || node.type === 'ClassExpression') return;
      eachChild(node, varsIn);
    };
    for (const s of statements) {
      if (s.type === 'VariableDeclaration' && s.kind !== 'var') for (const d of s.declarations as AnyNode[]) bindAll(d.id as AnyNode);
      if ((s.type === 'FunctionDeclaration' || s.type === 'ClassDeclaration') && s.id) scope.names.set((s.id as AnyNode).name as string, null);
      if ((s.type === 'ExportNamedDeclaration' || s.type === 'ExportDefaultDeclaration') && s.declaration) hoist([s.declaration as AnyNode], scope, false);
      if (functionScope) varsIn(s);
    }
  };

  const walkFunction = (fn: AnyNode, scope: Scope, first: Known | undefined): void => {
    const inner: Scope = { names: new Map(), parent: scope };
    if (fn.type === 'FunctionExpression' && fn.id) inner.names.set((fn.id as AnyNode).name as string, null);
    const params = fn.params as AnyNode[];
    params.forEach((p, i) => {
      for (const n of patternNames(p)) inner.names.set(n, null);
      if (i === 0 && first && p.type === 'Identifier' && !assigned.has(p.name as string)) inner.names.set(p.name as string, first);
    });
    for (const p of params) walk(p, fn, inner);
    const body = fn.body as AnyNode;
    if (body.type === 'BlockStatement') {
      hoist(body.body as AnyNode[], inner, true);
      for (const s of body.body as AnyNode[]) walk(s, body, inner);
    } else walk(body, fn, inner);
  };

  const walk = (node: AnyNode, parent: AnyNode | undefined, scope: Scope): void => {
    switch (node.type) {
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
        walkFunction(node, scope, undefined);
        return;
      case 'BlockStatement':
      case 'StaticBlock': {
        const inner: Scope = { names: new Map(), parent: scope };
        hoist(node.body as AnyNode[], inner, false);
        for (const s of node.body as AnyNode[]) walk(s, node, inner);
        return;
      }
      case 'ForOfStatement':
      case 'ForInStatement':
      case 'ForStatement': {
        const inner: Scope = { names: new Map(), parent: scope };
        const left = (node.left ?? node.init) as AnyNode | null;
        if (left && left.type === 'VariableDeclaration' && left.kind !== 'var') for (const d of left.declarations as AnyNode[]) for (const n of patternNames(d.id as AnyNode)) inner.names.set(n, null);
        for (const key of ['init', 'test', 'update', 'left', 'right']) if (isNode(node[key])) walk(node[key] as AnyNode, node, key === 'right' ? scope : inner);
        walk(node.body as AnyNode, node, inner);
        return;
      }
      case 'CatchClause': {
        const inner: Scope = { names: new Map(), parent: scope };
        for (const n of patternNames(node.param as AnyNode | null)) inner.names.set(n, null);
        if (node.param) walk(node.param as AnyNode, node, inner);
        walk(node.body as AnyNode, node, inner);
        return;
      }
      case 'VariableDeclarator': {
        if (node.init) walk(node.init as AnyNode, node, scope);
        const id = node.id as AnyNode;
        if (id.type === 'Identifier' && node.init) setType(scope, id.name as string, typeOf(node.init as AnyNode, scope));
        else walk(id, node, scope);
        return;
      }
      case 'CallExpression': {
        const callee = node.callee as AnyNode;
        walk(callee, node, scope);
        let each: Known | undefined;
        if (callee.type === 'MemberExpression' && !callee.computed && RECORD_CALLBACKS.has((callee.property as AnyNode).name as string)) {
          const t = typeOf(callee.object as AnyNode, scope);
          if (t?.kind === 'query') each = { kind: 'record', model: t.model };
        }
        for (const a of node.arguments as AnyNode[]) {
          if (each && (a.type === 'ArrowFunctionExpression' || a.type === 'FunctionExpression')) walkFunction(a, scope, each);
          else walk(a, node, scope);
        }
        return;
      }
      case 'MemberExpression':
        checkMember(node, parent, scope);
        break;
      case 'Property':
        // `{title}` shorthand and keys are not reads of a record.
        if (node.computed) walk(node.key as AnyNode, node, scope);
        walk(node.value as AnyNode, node, scope);
        return;
    }
    const plainMember = node.type === 'MemberExpression' && !node.computed;
    eachChild(node, (c) => walk(c, node, scope), plainMember ? (key) => key === 'property' : undefined);
  };
  const top: Scope = { names: new Map(), parent: undefined };
  hoist(program.body as AnyNode[], top, true);
  for (const s of program.body as AnyNode[]) walk(s, program, top);
}

/** The names a binding pattern introduces. */
function patternNames(p: AnyNode | null | undefined, out: string[] = []): string[] {
  if (!p) return out;
  switch (p.type) {
    case 'Identifier':
      out.push(p.name as string);
      break;
    case 'ObjectPattern':
      for (const prop of p.properties as AnyNode[]) patternNames(prop.type === 'RestElement' ? (prop.argument as AnyNode) : (prop.value as AnyNode), out);
      break;
    case 'ArrayPattern':
      for (const e of p.elements as Array<AnyNode | null>) patternNames(e, out);
      break;
    case 'AssignmentPattern':
      patternNames(p.left as AnyNode, out);
      break;
    case 'RestElement':
      patternNames(p.argument as AnyNode, out);
      break;
  }
  return out;
}

/** Names assigned anywhere (`t = …`, `t++`, `[t] = …`): their type is not followed. */
function assignedNames(program: AnyNode): Set<string> {
  const names = new Set<string>();
  const walk = (node: AnyNode): void => {
    if (node.type === 'AssignmentExpression') for (const n of patternNames(node.left as AnyNode)) names.add(n);
    if (node.type === 'UpdateExpression' && (node.argument as AnyNode).type === 'Identifier') names.add((node.argument as AnyNode).name as string);
    eachChild(node, walk);
  };
  walk(program);
  return names;
}
