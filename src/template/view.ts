/**
 * Laneway views: files whose line 1 is `<!--TEMPLATE mustache-->`, with pragmas, imports,
 * partials and layouts resolved at load time (docs/views.md).
 *
 * `compileView` loads the view and every file it uses (each once per load, shared between
 * views), checks them, reports every problem to the load's DiagnosticList, and generates render
 * code. Rendering never throws: a failing value stops it, and the output says where and why
 * (`RenderOutput.failed`); the server answers such a render with an error page, never with the
 * page cut off.
 */
import { posix } from 'node:path';
import { parseDocument } from 'yaml';

/** YAML data files already parsed, per file tree (one load of an app): file → its text and value. */
const parsedData = new WeakMap<object, Map<string, { text: string; value: unknown }>>();
import { locate, type Code, type DiagnosticList } from '../diag/index.js';
import { normalizePath, yamlToJS, type SourceTree } from '../shared/index.js';
import { walkTemplate, type Expr, type Node, type PathExpr, type TextNode } from './ast.js';
import { ByteSink } from './bytes.js';
import { generate, type Declaration, type Fallback, type UnitCode } from './codegen.js';
import { parseTemplate } from './parse.js';
import type { Pragma } from './pragma.js';
import { declare, escapeHtml, isStackOverflow, isThenable, RenderError, RenderState, type Link } from './runtime.js';

/**
 * A value failed while a view rendered: `cause` is what it threw (a script limit is a
 * LanewayError with status 503), and the position is the tag being rendered. An HTML supplier's
 * failure reaches the view that called it as this same error, keeping the innermost position.
 */
export class ViewRenderError extends Error {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** The text of `file`, for a code frame. */
  readonly source: string | undefined;
  constructor(cause: unknown, where: { file: string; line: number; column: number }, source: string | undefined) {
    super(`${where.file}:${where.line}:${where.column}: ${errorMessage(cause)}`, { cause });
    this.name = 'ViewRenderError';
    this.file = where.file;
    this.line = where.line;
    this.column = where.column;
    this.source = source;
  }
}

/** Line 1 of every Mustache file. */
export const TEMPLATE_MARKER = '<!--TEMPLATE mustache-->';

/** Offset where the template starts (after the marker line), or -1 when line 1 is not the marker. */
export function markerEnd(source: string): number {
  const s = source.charCodeAt(0) === 0xfeff ? 1 : 0;
  if (!source.startsWith(TEMPLATE_MARKER, s)) return -1;
  let i = s + TEMPLATE_MARKER.length;
  while (i < source.length && (source[i] === ' ' || source[i] === '\t')) i++;
  if (i === source.length) return i;
  if (source[i] === '\n') return i + 1;
  if (source[i] === '\r' && source[i + 1] === '\n') return i + 2;
  return s + TEMPLATE_MARKER.length;
}

/** True when `source` is a Mustache file (line 1 is the marker); other `.html` is served as is. */
export function isTemplate(source: string): boolean {
  return markerEnd(source) >= 0;
}

export interface ViewCompileOptions {
  /** Reads partials, layouts, SVG, YAML and JSON files by app path. */
  tree: SourceTree;
  /** Every problem is reported here, with file:line:column. */
  diagnostics: DiagnosticList;
  /**
   * Compile-time check of each `{{% import {A} from 'mod' }}` entry: true, or a message saying
   * why not. Absent: every import is accepted. A namespace import asks for the name `*`.
   */
  checkImport?(module: string, name: string, file: string): true | string;
  /**
   * Compile-time check of a path that starts at an imported name (`{{#Task.all}}` with `Task`
   * imported from '📦': name `Task`, segments `['all']`): true, or a message saying what is wrong
   * (reported as LW_MODEL_MEMBER), or a code and message. Paths at the `🎨` root are checked as
   * module `🎨`, name `*`; paths into '🎨' are checked even without segments, with `call`: the
   * number of positional arguments of the tag and the names of its `k=v` arguments.
   */
  checkMember?(module: string, name: string, segs: readonly string[], call?: { args: number; named: readonly string[] }): true | string | { code: Code; message: string };
  /** Compile-time types of records, to check field reads (`{{#Task.all as t}}{{t.titel}}`). */
  records?: ViewRecords | undefined;
  /**
   * A load-time pass over each file's parse tree (the CSP and asset pass), run once per file
   * before its render code is generated. It may rewrite text nodes' `text` (keeping `marks` in
   * step) and set the `escape` of value tags inside JSON data blocks. Once given, it stays set
   * for the load (files compiled earlier without it are regenerated when a view compiled with it
   * uses them).
   */
  prepare?(file: TemplateFile): void;
}

/** A record of `model` (or, with `link`, a link to one) as the view's field-read check sees it. */
export interface ViewRecordType {
  model: string;
  link: boolean;
}

/**
 * What the app tells the compiler about records (docs/views.md "Models in views"). A name whose
 * type is not known this way is not checked: no false errors.
 */
export interface ViewRecords {
  /**
   * The records a path from an import gives, iterated or alone (`Task.all`, `Task.all.desc`,
   * `Task.get`, `Note.list`; a path parameter's link: module '🔗', no segments), in `file`.
   */
  of(module: string, name: string, segs: readonly string[], file: string): ViewRecordType | undefined;
  /**
   * Checks `segs` read on a record: a message when the model has no such member; else the type
   * the path ends on (a link field, a link's `get`) and, for a plain text field, its description.
   */
  read(type: ViewRecordType, segs: readonly string[]): { error?: string; type?: ViewRecordType; plain?: string };
}

export interface RenderInput {
  /** Value of an imported name; may return a Promise. */
  importValue(module: string, name: string): unknown;
  /** Values visible without import (`🎨`, `Messages`). */
  globals?: Record<string, unknown>;
  /** For {{%year}} (UTC); default: now. */
  now?: Date;
  /** Development mode: run-time error details go into an HTML comment. */
  dev: boolean;
  /** Called with the position of a run-time error (the page shows ⚠️ there). */
  onError?(info: { file: string; line: number; column: number; error: unknown }): void;
  /**
   * Called every thousand or so section items with the length of the output so far, so that the caller can charge the time the view takes
   * to the request's budget; throwing (a limit) stops the render like any run-time error.
   */
  meter?(outputLength: number): void;
  /**
   * The page is an HTTP answer: the output is written as UTF-8 bytes while it is rendered and
   * comes back in `body` (`html` is then empty, unless the render failed).
   */
  bytes?: boolean;
}

export interface RenderOutput {
  html: string;
  /** With `bytes`: the page's UTF-8 bytes. */
  body?: Buffer;
  /** Render-If was falsy: answer 200 with an empty body. */
  empty: boolean;
  /** The resolved Cache-Control-Seconds value. */
  cacheSeconds?: number;
  /**
   * Rendering stopped at a run-time error: where, and the error. `html` then holds the output up
   * to that point followed by `⚠️` (and, in development mode, the details in an HTML comment).
   */
  failed?: ViewRenderError;
}

/** The parse tree of one file a view uses (for later passes such as CSP). */
export interface TemplateFile {
  file: string;
  source: string;
  nodes: Node[];
  /** The partial and SVG names this file declares, with the files they name. */
  partials: Record<string, { kind: 'partial' | 'svg'; file: string }>;
}

export interface CompiledView {
  file: string;
  /** Imports of the view and of every partial and layout it uses. */
  imports: Array<{ module: string; name: string; file: string }>;
  /** Every source file the view depends on (itself, partials, layouts, SVG, data). */
  files: string[];
  /** Directories listed by partial and svg pragmas (a new file there may change the view). */
  directories: string[];
  cacheSeconds: { literal: number } | { variable: string } | undefined;
  /** Renders `Messages.*` (a single-user page, for Cache-Control). */
  usesMessages: boolean;
  /** Reads a model's default form (`Task.Form.view`): a single-user page too. */
  usesFormView: boolean;
  /** `{{% Network-First }}` / `{{% Stale-While-Revalidate }}`, when present. */
  strategy: string | undefined;
  /** The parse trees of the view and of every file it uses, view first. */
  templates: TemplateFile[];
  /** `thisValue` is the argument of an HTML supplier call (`this` in the template). */
  render(input: RenderInput, thisValue?: unknown): RenderOutput | Promise<RenderOutput>;
}

type PartialDecl = { kind: 'partial' | 'svg'; file: string; at: number };

interface Unit {
  file: string;
  source: string;
  marker: boolean;
  nodes: Node[];
  /** No error was reported for this file. */
  ok: boolean;
  partials: Map<string, PartialDecl>;
  imports: Map<string, { module: string; name: string; key: string }>;
  importList: Array<{ module: string; name: string; file: string }>;
  data: Map<string, unknown>;
  dataFiles: string[];
  directories: string[];
  choices: Map<string, ReadonlyMap<string, string>>;
  decls: Declaration[];
  renderIf?: { expr: Expr; at: number };
  cache?: { seconds?: number; variable?: PathExpr; at: number };
  strategy?: string;
  link: Link;
  deps: Set<Unit>;
  svgFiles: Set<string>;
  linked: boolean;
  code?: UnitCode | null;
  /** The `prepare` pass ran. */
  prepared?: boolean;
  blocks?: Set<string>;
  placementChecked?: boolean;
}

interface Context {
  tree: SourceTree;
  diagnostics: DiagnosticList;
  checkImport: ViewCompileOptions['checkImport'];
  checkMember: ViewCompileOptions['checkMember'];
  records: ViewCompileOptions['records'];
  prepare: ViewCompileOptions['prepare'];
  units: Map<string, Unit | null>;
  svgs: Map<string, string | null>;
  /** Bumped when a unit's generated code is dropped: views then generate theirs again. */
  epoch: number;
}

// One context per load (per DiagnosticList): a file used by many views is parsed, checked and
// compiled once, and its problems are reported once.
const contexts = new WeakMap<DiagnosticList, Context>();

function contextOf(options: ViewCompileOptions): Context {
  let ctx = contexts.get(options.diagnostics);
  if (ctx === undefined || ctx.tree !== options.tree) {
    ctx = { tree: options.tree, diagnostics: options.diagnostics, checkImport: options.checkImport, checkMember: options.checkMember, records: options.records, prepare: options.prepare, units: new Map(), svgs: new Map(), epoch: 0 };
    contexts.set(options.diagnostics, ctx);
  }
  ctx.checkImport = options.checkImport;
  ctx.checkMember = options.checkMember;
  ctx.records = options.records;
  if (options.prepare !== undefined) ctx.prepare = options.prepare;
  return ctx;
}

const WARNINGS = new Set<Code>(['LW_VIEW_IGNORED_IN_PARENT', 'LW_VIEW_SVG_DIR_MISSING', 'LW_VIEW_RAW_NOT_WEB_SAFE', 'LW_VIEW_IMPORT_TWO_WORDS']);

function report(ctx: Context, unit: Unit, code: Code, message: string, offset: number): void {
  if (WARNINGS.has(code)) {
    ctx.diagnostics.warn(code, message, unit.file, unit.source, offset);
  } else {
    ctx.diagnostics.error(code, message, unit.file, unit.source, offset);
    unit.ok = false;
  }
}

/** Resolves a pragma path against the file that names it. */
function resolvePath(file: string, path: string): string {
  const abs = path.startsWith('/') ? path : posix.join(posix.dirname(file), path);
  const trailing = abs.endsWith('/');
  let norm = posix.normalize(abs);
  if (trailing && !norm.endsWith('/')) norm += '/';
  return normalizePath(norm);
}

function baseName(path: string, ext: string): string {
  let b = posix.basename(path);
  if (b.endsWith(ext)) b = b.slice(0, -ext.length);
  return b.startsWith('_') ? b.slice(1) : b;
}

/** Freezes a parsed data file, iteratively: a deeply nested file must not exhaust the stack. */
function deepFreeze<T>(v: T): T {
  const todo: unknown[] = [v];
  while (todo.length > 0) {
    const x = todo.pop();
    if (x !== null && typeof x === 'object' && !Object.isFrozen(x)) {
      Object.freeze(x);
      for (const y of Object.values(x)) todo.push(y);
    }
  }
  return v;
}

function newUnit(file: string, source: string, marker: boolean): Unit {
  return {
    file,
    source,
    marker,
    nodes: [],
    ok: true,
    partials: new Map(),
    imports: new Map(),
    importList: [],
    data: new Map(),
    dataFiles: [],
    directories: [],
    choices: new Map(),
    decls: [],
    link: { fn: undefined },
    deps: new Set(),
    svgFiles: new Set(),
    linked: false,
  };
}

/** Loads and parses a file once per load; null when it does not exist. */
function loadUnit(ctx: Context, file: string, given?: string): Unit | null {
  const cached = ctx.units.get(file);
  if (cached !== undefined) return cached;
  const source = given ?? ctx.tree.read(file);
  if (source === undefined) {
    ctx.units.set(file, null);
    return null;
  }
  const from = markerEnd(source);
  const unit = newUnit(file, source, from >= 0);
  ctx.units.set(file, unit);
  if (from < 0) return unit;
  const parsed = parseTemplate(source, { from, view: true, report: (code, message, offset) => report(ctx, unit, code, message, offset) });
  unit.nodes = parsed.nodes;
  for (const p of parsed.pragmas) declarePragma(ctx, unit, p);
  if (ctx.checkMember) checkMembers(ctx, unit);
  if (ctx.records) checkRecordReads(ctx, ctx.records, unit);
  return unit;
}

/** The `🎨` root of views: the properties, as `{{% import * as 🎨 from '🎨' }}` would bring them. */
const PROPERTIES_ROOT = { module: '🎨', name: '*' };

/** Paths that start at an imported name or at `🎨`, checked by `checkMember` (a misspelt model field…). */
function checkMembers(ctx: Context, unit: Unit): void {
  const check = (e: Expr | undefined): void => {
    if (e === undefined || e.kind !== 'path') return;
    const imp = unit.imports.get(e.root) ?? (e.root === '🎨' && !unit.data.has(e.root) ? PROPERTIES_ROOT : undefined);
    if (imp && (e.segs.length || imp.module === '🎨')) {
      const verdict = ctx.checkMember!(imp.module, imp.name, e.segs, { args: e.args.length, named: e.named.map((x) => x.key) });
      if (typeof verdict === 'string') report(ctx, unit, 'LW_MODEL_MEMBER', verdict, e.start);
      else if (verdict !== true) report(ctx, unit, verdict.code, verdict.message, e.start);
    }
    for (const a of e.args) check(a);
    for (const n of e.named) check(n.value);
  };
  walkTemplate(unit.nodes, (n) => {
    const node = n as { expr?: Expr; test?: { exprs: Expr[] } };
    check(node.expr);
    if (node.test) for (const x of node.test.exprs) check(x);
  });
}

/**
 * Field reads on records (docs/views.md "Models in views"): `{{t.titel}}` under
 * `{{#Task.all as t}}`, `{{t.project.nme}}` through a link field, `{{board.nme}}` of a path
 * parameter; and `{{{t.title}}}` of a plain text field, which is escaped anyway (a warning).
 * Only names whose record type is known are checked; an `as` name of another value hides it.
 */
function checkRecordReads(ctx: Context, records: ViewRecords, unit: Unit): void {
  type Scope = ReadonlyMap<string, ViewRecordType | null>;
  /** The record type of a path, reporting a read of a member the model does not have. */
  const typeOf = (e: Expr | undefined, scope: Scope, report: boolean): { type?: ViewRecordType; plain?: string } => {
    if (e === undefined || e.kind !== 'path') return {};
    let base: ViewRecordType | undefined;
    const segs: readonly string[] = e.segs;
    const bound = scope.get(e.root);
    if (bound !== undefined) base = bound ?? undefined;
    else {
      const imp = unit.imports.get(e.root);
      if (!imp) return {};
      base = records.of(imp.module, imp.name, [], unit.file);
      if (!base) return { type: records.of(imp.module, imp.name, e.segs, unit.file) };
    }
    // `$first`-style names are the section's own, not the record's.
    if (!base || segs.some((x) => x.includes('$'))) return {};
    if (segs.length === 0) return { type: base };
    const r = records.read(base, segs);
    if (r.error) {
      if (report) reportOnce(e, r.error);
      return {};
    }
    return r;
  };
  const reported = new Set<number>();
  const reportOnce = (e: Expr, message: string): void => {
    if (reported.has(e.start)) return;
    reported.add(e.start);
    report(ctx, unit, 'LW_MODEL_MEMBER', message, e.start);
  };
  const checkExpr = (e: Expr | undefined, scope: Scope): void => {
    if (e === undefined || e.kind !== 'path') return;
    typeOf(e, scope, true);
    for (const a of e.args) checkExpr(a, scope);
    for (const n of e.named) checkExpr(n.value, scope);
  };
  const walk = (nodes: readonly Node[], scope: Scope): void => {
    for (const n of nodes) {
      if (n.type === 'var' || n.type === 'pragma') {
        checkExpr(n.expr, scope);
        const raw = (n.type === 'var' && n.raw && !n.attributes) || (n.type === 'pragma' && n.name === 'show');
        const plain = raw ? typeOf(n.expr, scope, false).plain : undefined;
        if (plain && n.expr?.kind === 'path') {
          const how = n.type === 'pragma' ? 'show' : unit.source.startsWith('{{{', n.start) ? '{{{ }}}' : '{{& }}';
          report(ctx, unit, 'LW_VIEW_RAW_NOT_WEB_SAFE', `"${n.expr.text}" is ${plain}, plain text that ${how} escapes anyway: write {{${n.expr.text}}} (only html, markdown and svg-icon fields print as markup)`, n.start);
        }
      } else if (n.type === 'section') {
        checkExpr(n.expr, scope);
        if (n.test) for (const x of n.test.exprs) checkExpr(x, scope);
        let inner = scope;
        if (n.alias !== undefined) {
          const type = n.by === undefined && !n.inverted ? typeOf(n.expr, scope, false).type : undefined;
          inner = new Map(scope).set(n.alias, type ?? null);
        }
        walk(n.body, inner);
      } else if (n.type === 'block') walk(n.body, scope);
      else if (n.type === 'parent') walk(n.blocks, scope);
      else if (n.type === 'partial' && n.dynamic) checkExpr(n.dynamic, scope);
    }
  };
  walk(unit.nodes, new Map());
}

function declareName(ctx: Context, unit: Unit, name: string, at: number, what: string): boolean {
  if (unit.imports.has(name) || unit.data.has(name)) {
    report(ctx, unit, 'LW_VIEW_DUPLICATE_NAME', `"${name}" is declared twice in this file (${what})`, at);
    return false;
  }
  return true;
}

function declarePartial(ctx: Context, unit: Unit, name: string, decl: PartialDecl): void {
  const prev = unit.partials.get(name);
  if (prev !== undefined && prev.file !== decl.file) {
    report(ctx, unit, 'LW_VIEW_DUPLICATE_NAME', `partial name "${name}" is declared twice: ${prev.file} and ${decl.file}`, decl.at);
    return;
  }
  unit.partials.set(name, decl);
}

function declarePragma(ctx: Context, unit: Unit, p: Pragma): void {
  const { tree, diagnostics } = ctx;
  switch (p.kind) {
    case 'partial':
    case 'svg': {
      const path = resolvePath(unit.file, p.path);
      const ext = p.kind === 'partial' ? '.html' : '.svg';
      if (path.endsWith('/')) {
        unit.directories.push(path);
        const names = tree.list(path);
        if (names === undefined) {
          if (p.kind === 'svg') report(ctx, unit, 'LW_VIEW_SVG_DIR_MISSING', `svg directory ${path} does not exist; no icons are declared`, p.at);
          else report(ctx, unit, 'LW_VIEW_MISSING_FILE', `partial directory ${path} does not exist`, p.at);
          return;
        }
        for (const n of [...names].sort()) {
          if (!n.endsWith(ext)) continue;
          const base = n.slice(0, -ext.length);
          declarePartial(ctx, unit, p.alias === undefined ? base : `${p.alias}-${base}`, { kind: p.kind, file: path + n, at: p.at });
        }
        return;
      }
      const file = path.endsWith(ext) ? path : path + ext;
      if (tree.read(file) === undefined) {
        report(ctx, unit, 'LW_VIEW_MISSING_FILE', `${p.kind === 'partial' ? 'partial' : 'SVG'} file ${file} does not exist`, p.at);
        return;
      }
      declarePartial(ctx, unit, p.alias ?? baseName(path, ext), { kind: p.kind, file, at: p.at });
      return;
    }
    case 'data': {
      const path = resolvePath(unit.file, p.path);
      const candidates = p.format === 'json' ? [path.endsWith('.json') ? path : `${path}.json`] : path.endsWith('.yaml') || path.endsWith('.yml') ? [path] : [`${path}.yaml`, `${path}.yml`];
      let file: string | undefined;
      let text: string | undefined;
      for (const c of candidates) {
        text = tree.read(c);
        if (text !== undefined) {
          file = c;
          break;
        }
      }
      if (file === undefined || text === undefined) {
        report(ctx, unit, 'LW_VIEW_MISSING_FILE', `${p.format.toUpperCase()} file ${candidates.join(' or ')} does not exist`, p.at);
        return;
      }
      unit.dataFiles.push(file);
      let value: unknown;
      if (p.format === 'json') {
        try {
          value = JSON.parse(text);
        } catch (e) {
          diagnostics.error('LW_VIEW_DATA_PARSE', `${file} is not valid JSON: ${(e as Error).message}`, file);
          report(ctx, unit, 'LW_VIEW_DATA_PARSE', `${file} (imported here as "${p.name}") does not parse`, p.at);
          return;
        }
      } else {
        const known = parsedData.get(tree)?.get(file);
        const doc = known !== undefined && known.text === text ? undefined : parseDocument(text);
        if (doc !== undefined && doc.errors.length > 0) {
          for (const err of doc.errors) {
            const pos = err.linePos?.[0];
            if (pos) diagnostics.at('error', 'LW_VIEW_DATA_PARSE', `YAML: ${err.message.split('\n')[0]}`, file, { line: pos.line, column: pos.col });
            else diagnostics.error('LW_VIEW_DATA_PARSE', `YAML: ${err.message}`, file);
          }
          report(ctx, unit, 'LW_VIEW_DATA_PARSE', `${file} (imported here as "${p.name}") does not parse`, p.at);
          return;
        }
        if (doc === undefined) value = known!.value;
        else {
          // Parsed once per file and text, however many views declare it (toJS, not a second parse).
          const js = yamlToJS(doc);
          if ('error' in js) {
            diagnostics.error('LW_VIEW_DATA_PARSE', js.error, file, text, js.offset);
            report(ctx, unit, 'LW_VIEW_DATA_PARSE', `${file} (imported here as "${p.name}") does not parse`, p.at);
            return;
          }
          value = deepFreeze(js.value);
          let byFile = parsedData.get(tree);
          if (byFile === undefined) parsedData.set(tree, (byFile = new Map()));
          byFile.set(file, { text, value });
        }
      }
      if (declareName(ctx, unit, p.name, p.at, p.format)) unit.data.set(p.name, deepFreeze(value));
      return;
    }
    case 'import': {
      const entries = p.namespace !== undefined ? [{ name: '*', alias: p.namespace, at: p.at }] : p.names.map((n) => ({ name: n.name, alias: n.name, at: n.at }));
      for (const e of entries) {
        const verdict = ctx.checkImport === undefined ? true : ctx.checkImport(p.module, e.name, unit.file);
        if (verdict !== true) {
          report(ctx, unit, 'LW_VIEW_IMPORT', `cannot import ${e.name === '*' ? '* as ' + e.alias : `"${e.name}"`} from '${p.module}': ${verdict}`, e.at);
          continue;
        }
        if (!declareName(ctx, unit, e.alias, e.at, 'import')) continue;
        unit.imports.set(e.alias, { module: p.module, name: e.name, key: `${p.module}\u0000${e.name}` });
        unit.importList.push({ module: p.module, name: e.name, file: unit.file });
      }
      return;
    }
    case 'const':
    case 'default':
      unit.decls.push({ kind: p.kind, name: p.name, expr: p.expr, at: p.at });
      return;
    case 'render-if':
      if (unit.renderIf !== undefined) report(ctx, unit, 'LW_VIEW_DUPLICATE_NAME', 'Render-If is declared twice in this file', p.at);
      else unit.renderIf = { expr: p.expr, at: p.at };
      return;
    case 'cache':
      if (unit.cache !== undefined) report(ctx, unit, 'LW_VIEW_DUPLICATE_NAME', 'Cache-Control-Seconds is declared twice in this file', p.at);
      else unit.cache = p.seconds !== undefined ? { seconds: p.seconds, at: p.at } : { variable: p.variable!, at: p.at };
      return;
    case 'choice':
      if (unit.choices.has(p.name)) report(ctx, unit, 'LW_VIEW_DUPLICATE_NAME', `string map "${p.name}" is declared twice in this file`, p.at);
      else unit.choices.set(p.name, p.map);
      return;
    case 'strategy':
      unit.strategy = p.name;
      return;
    default:
      return;
  }
}

/** Inlined SVG markup: the file without an XML declaration, doctype or trailing white space. */
function svgMarkup(ctx: Context, file: string): string | null {
  let svg = ctx.svgs.get(file);
  if (svg === undefined) {
    const text = ctx.tree.read(file);
    svg = text === undefined ? null : text.replace(/^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!DOCTYPE[^>]*>\s*)?/i, '').trimEnd();
    ctx.svgs.set(file, svg);
  }
  return svg;
}

/** Every path expression of a node list (arguments included), for checks. */
function expressionsOf(nodes: readonly Node[]): Expr[] {
  const out: Expr[] = [];
  const add = (e: Expr | undefined): void => {
    if (e === undefined) return;
    out.push(e);
    if (e.kind === 'path') {
      for (const a of e.args) add(a);
      for (const n of e.named) add(n.value);
    }
  };
  walkTemplate(nodes, (n) => {
    if (n.type === 'var' || n.type === 'pragma') add(n.expr);
    else if (n.type === 'section') {
      add(n.expr);
      for (const e of n.test?.exprs ?? []) add(e);
    } else if (n.type === 'partial' || n.type === 'parent') add(n.dynamic);
  });
  return out;
}

/** Names of the blocks a template defines, through the parents it extends. */
function definedBlocks(ctx: Context, unit: Unit, seen = new Set<Unit>()): Set<string> {
  if (unit.blocks !== undefined) return unit.blocks;
  const names = new Set<string>();
  if (seen.has(unit)) return names;
  seen.add(unit);
  walkTemplate(unit.nodes, (n) => {
    if (n.type === 'block') names.add(n.name);
    else if (n.type === 'parent' && n.dynamic === undefined) {
      const decl = unit.partials.get(n.name);
      const target = decl?.kind === 'partial' ? ctx.units.get(decl.file) : undefined;
      if (target) for (const b of definedBlocks(ctx, target, seen)) names.add(b);
    }
  });
  seen.delete(unit);
  if (seen.size === 0) unit.blocks = names;
  return names;
}

/** Resolves the partials a unit uses (loading them), checks names, blocks and choices. */
function linkUnit(ctx: Context, unit: Unit): void {
  if (unit.linked) return;
  unit.linked = true;
  if (!unit.marker) return;
  const use = (name: string, at: number, asParent: boolean, exact: boolean): Unit | null => {
    const decl = unit.partials.get(name);
    if (decl === undefined) {
      if (exact) {
        const known = [...unit.partials.keys()];
        const hint = known.length === 0 ? 'this file declares no partials; add {{% partial /_dir/ }}' : `declared: ${known.join(', ')}`;
        report(ctx, unit, 'LW_VIEW_UNKNOWN_PARTIAL', `unknown ${asParent ? 'parent' : 'partial or SVG'} name "${name}" (${hint})`, at);
      }
      return null;
    }
    if (decl.kind === 'svg') {
      if (asParent) report(ctx, unit, 'LW_VIEW_UNKNOWN_PARTIAL', `"${name}" is an SVG icon and cannot be used as a parent`, at);
      else if (svgMarkup(ctx, decl.file) === null) report(ctx, unit, 'LW_VIEW_MISSING_FILE', `SVG file ${decl.file} does not exist`, at);
      else unit.svgFiles.add(decl.file);
      return null;
    }
    const target = loadUnit(ctx, decl.file);
    if (target === null) {
      report(ctx, unit, 'LW_VIEW_MISSING_FILE', `partial file ${decl.file} does not exist`, at);
      return null;
    }
    if (!target.marker) {
      if (exact) report(ctx, unit, 'LW_VIEW_PARTIAL_NO_MARKER', `${decl.file} is used as a ${asParent ? 'parent' : 'partial'} but its line 1 is not ${TEMPLATE_MARKER}`, at);
      return null;
    }
    unit.deps.add(target);
    linkUnit(ctx, target);
    return target;
  };
  let dynamic = false;
  walkTemplate(unit.nodes, (n) => {
    if (n.type === 'partial' || n.type === 'parent') {
      if (n.dynamic !== undefined) {
        dynamic = true;
        return;
      }
      const target = use(n.name, n.start, n.type === 'parent', true);
      if (n.type === 'parent' && target !== null) {
        const defined = definedBlocks(ctx, target);
        for (const b of n.blocks) {
          if (!defined.has(b.name)) {
            const list = defined.size === 0 ? 'it defines no blocks' : `it defines: ${[...defined].join(', ')}`;
            report(ctx, unit, 'LW_VIEW_UNKNOWN_BLOCK', `block "${b.name}" is not defined by parent "${n.name}" (${target.file}); ${list}`, b.nameStart);
          }
        }
      }
    } else if (n.type === 'pragma' && n.name === 'choose-string' && !unit.choices.has(n.map!)) {
      report(ctx, unit, 'LW_VIEW_UNKNOWN_CHOICE', `string map "${n.map}" is not declared in this file; add {{% choose-string-map ${n.map} in=out … }}`, n.start);
    } else if ((n.type === 'var' && n.raw) || (n.type === 'pragma' && n.name === 'show')) {
      const e = n.expr!;
      const staticText = e.kind === 'literal' || (e.kind === 'path' && unit.data.has(e.root) && e.args.length === 0);
      if (staticText) report(ctx, unit, 'LW_VIEW_RAW_NOT_WEB_SAFE', `"${e.kind === 'path' ? e.text : String(e.value)}" is plain data, not web-safe markup; it will be escaped`, n.start);
    }
  });
  if (dynamic) for (const name of unit.partials.keys()) use(name, 0, false, false);
  if (unit.renderIf !== undefined) {
    const e = unit.renderIf.expr;
    if (e.kind === 'path') {
      const r = e.root;
      const known = r === 'this' || r === 'Messages' || r === '🎨' || unit.imports.has(r) || unit.data.has(r) || unit.decls.some((d) => d.name === r);
      if (!known) report(ctx, unit, 'LW_VIEW_RENDER_IF_UNDEFINED', `Render-If "${e.text}": "${r}" is not imported or declared in this file; import it, e.g. {{% import {${r}} from '📤' }}`, unit.renderIf.at);
    }
  }
}

/** Runs the page pass (`prepare`: CSP rewrites, inlining, checks) over a unit, once. */
function prepareUnit(ctx: Context, unit: Unit): void {
  if (ctx.prepare === undefined || unit.prepared || !unit.marker) return;
  unit.prepared = true;
  ctx.prepare(templateOf(unit));
  // Generated before the pass was known (an HTML supplier's partial, already rendered): the
  // views using it generate it again before their next render.
  if (unit.code !== undefined) {
    unit.code = undefined;
    ctx.epoch++;
  }
}

/**
 * Generates a unit's render code (once, on the first render of a view that uses it); its link then
 * points at it. Generation reports nothing: every problem was reported when the unit was loaded.
 */
function codeOf(ctx: Context, unit: Unit): UnitCode | null {
  if (unit.code !== undefined) return unit.code;
  const table: Record<string, Link> = Object.create(null);
  const links = new Map<string, Link>();
  const partialLink = (name: string): Link | null => {
    const decl = unit.partials.get(name);
    if (decl === undefined) return null;
    let link = links.get(name);
    if (link === undefined) {
      if (decl.kind === 'svg') link = { fn: undefined, svg: svgMarkup(ctx, decl.file) ?? '' };
      else link = ctx.units.get(decl.file)?.link ?? { fn: undefined };
      links.set(name, link);
    }
    return link;
  };
  const exprs: Expr[] = [];
  if (unit.renderIf) exprs.push(unit.renderIf.expr);
  if (unit.cache?.variable) exprs.push(unit.cache.variable);
  try {
    unit.code = generate(
      unit.nodes,
      {
        view: true,
        file: unit.file,
        source: unit.source,
        fallback: (name: string): Fallback => {
          const imp = unit.imports.get(name);
          if (imp !== undefined) return { kind: 'import', key: imp.key, module: imp.module, name: imp.name };
          if (unit.data.has(name)) return { kind: 'data', value: unit.data.get(name) };
          return { kind: 'page' };
        },
        partial: partialLink,
        table: () => {
          for (const name of unit.partials.keys()) table[name] = partialLink(name)!;
          return table;
        },
        choice: (name: string) => unit.choices.get(name),
      },
      unit.decls,
      exprs,
    );
    unit.link.fn = unit.code.top;
  } catch (e) {
    ctx.diagnostics.error('LW_VIEW_TAG_SYNTAX', `internal error while compiling this file: ${(e as Error).message}`, unit.file);
    unit.ok = false;
    unit.code = null;
  }
  return unit.code;
}

function templateOf(u: Unit): TemplateFile {
  return {
    file: u.file,
    source: u.source,
    nodes: u.nodes,
    partials: Object.fromEntries([...u.partials].map(([name, d]) => [name, { kind: d.kind, file: d.file }])),
  };
}

/** The view and every file it uses, view first (breadth-first). */
function closure(unit: Unit): Unit[] {
  const all: Unit[] = [unit];
  const seen = new Set<Unit>(all);
  for (let i = 0; i < all.length; i++) {
    for (const d of all[i]!.deps) {
      if (!seen.has(d)) {
        seen.add(d);
        all.push(d);
      }
    }
  }
  return all;
}

function usesFormView(units: readonly Unit[]): boolean {
  const check = (e: Expr): boolean => e.kind === 'path' && (e.segs.some((x, i) => x === 'view' && e.segs[i - 1] === 'Form') || e.args.some(check) || e.named.some((n) => check(n.value)));
  return units.some((u) => expressionsOf(u.nodes).some(check) || u.decls.some((d) => check(d.expr)));
}

function usesMessages(units: readonly Unit[]): boolean {
  const check = (e: Expr): boolean => e.kind === 'path' && (e.root === 'Messages' || e.args.some(check) || e.named.some((n) => check(n.value)));
  for (const u of units) {
    if (expressionsOf(u.nodes).some(check)) return true;
    if (u.decls.some((d) => check(d.expr))) return true;
    if (u.renderIf && check(u.renderIf.expr)) return true;
  }
  return false;
}

/** An HTML comment ends at `-->` (or `--!>`): breaking every `--` keeps the text inside it. */
function commentText(text: string): string {
  return text.replace(/-(?=-)/g, '- ');
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  try {
    return String(error);
  } catch {
    return 'error';
  }
}

/**
 * Compiles a view (a file whose line 1 is the marker). Reports every problem, in the view and in
 * the files it uses, to `options.diagnostics`; returns undefined when there was an error.
 */
export function compileView(file: string, source: string, options: ViewCompileOptions): CompiledView | undefined {
  const ctx = contextOf(options);
  const unit = loadUnit(ctx, file, source);
  if (unit === null) return undefined;
  if (!unit.marker) {
    ctx.diagnostics.error('LW_VIEW_NO_MARKER', `line 1 must be ${TEMPLATE_MARKER} for this file to be a view`, file, source, 0);
    return undefined;
  }
  linkUnit(ctx, unit);
  const units = closure(unit);
  for (const u of units.slice(1)) {
    if (u.placementChecked) continue;
    u.placementChecked = true;
    if (u.renderIf !== undefined && u !== unit) {
      report(ctx, u, 'LW_VIEW_PRAGMA_PLACEMENT', 'Render-If only works in the view itself, not in a partial or layout', u.renderIf.at);
    }
  }
  for (const u of units) prepareUnit(ctx, u);
  if (units.some((u) => !u.ok)) return undefined;

  const imports: CompiledView['imports'] = [];
  const files = new Set<string>();
  for (const u of units) {
    imports.push(...u.importList);
    files.add(u.file);
    for (const f of u.dataFiles) files.add(f);
    for (const f of u.svgFiles) files.add(f);
  }
  const cacheUnit = units.find((u) => u.cache !== undefined);
  const cache = cacheUnit?.cache;
  let cacheSeconds: CompiledView['cacheSeconds'];
  if (cache?.seconds !== undefined) cacheSeconds = { literal: cache.seconds };
  else if (cache?.variable !== undefined) cacheSeconds = { variable: cache.variable.text };

  // The render code of the view and of the files it uses is generated on the first render, not
  // here: `laneway check` and a server's start do not pay for the code of pages nobody asked for
  // (docs/architecture.md, "Compile at load, generate at first use").
  let code!: UnitCode;
  let cacheExpr: UnitCode['exprs'][number] | undefined;
  let renderIf: UnitCode['exprs'][number] | undefined;
  let generated = -1;
  const generateCode = (): void => {
    for (const u of units) {
      if (codeOf(ctx, u) === null) throw new RenderError(`internal error while compiling ${u.file}`);
    }
    code = unit.code!;
    cacheExpr = cacheUnit?.code?.exprs[cacheUnit.renderIf ? 1 : 0];
    // Steps before the body: the view's own const/default lines, Render-If, the cache variable.
    renderIf = unit.renderIf !== undefined ? code.exprs[0] : undefined;
    generated = ctx.epoch;
  };
  const renderIfPos = unit.renderIf && { file, source, offset: unit.renderIf.at };
  const cachePos = cache && cacheUnit && { file: cacheUnit.file, source: cacheUnit.source, offset: cache.at };

  /** The size of the last page rendered as bytes: the next one's Buffer starts that large. */
  let sizeHint = 0;
  const view: CompiledView = {
    file,
    imports,
    files: [...files],
    cacheSeconds,
    usesMessages: usesMessages(units),
    usesFormView: usesFormView(units),
    strategy: units.find((u) => u.strategy !== undefined)?.strategy,
    templates: units.map(templateOf),
    directories: [...new Set(units.flatMap((u) => u.directories))],
    render(input: RenderInput, thisValue?: unknown): RenderOutput | Promise<RenderOutput> {
      const S = new RenderState(thisValue === undefined ? [] : [thisValue]);
      S.importValue = input.importValue;
      if (input.meter) S.meter = input.meter;
      if (input.bytes === true) S.out = new ByteSink(sizeHint);
      S.globals = input.globals ?? null;
      S.year = (input.now ?? new Date()).getUTCFullYear();
      const c = thisValue;
      let seconds: number | undefined;

      const fail = (error: unknown): RenderOutput => {
        let failure: ViewRenderError;
        if (error instanceof ViewRenderError) {
          // An HTML supplier called here failed: reported where it happened, already.
          failure = error;
        } else {
          const pos = S.p;
          const where = pos === null ? { file, line: 1, column: 1 } : { file: pos.file, ...locate(pos.source, pos.offset) };
          const cause = isStackOverflow(error)
            ? new RenderError('sections, partials and layouts nest too deeply here: the call stack ran out (a partial that includes itself?)')
            : error;
          failure = new ViewRenderError(cause, where, pos === null ? source : pos.source);
          try {
            input.onError?.({ ...where, error: cause });
          } catch {
            // The error hook must not turn a rendering problem into a crash.
          }
        }
        let html = (S.out === null ? '' : S.out.bytes().toString('utf8')) + S.s + '⚠️';
        if (input.dev) html += `<!-- ${commentText(failure.message)} -->`;
        const outcome: RenderOutput = { html, empty: false, failed: failure };
        if (seconds !== undefined) outcome.cacheSeconds = seconds;
        return outcome;
      };
      const finish = (): RenderOutput => {
        let outcome: RenderOutput;
        if (S.out !== null) {
          const bytes = S.out.end(S.s);
          sizeHint = bytes.length;
          outcome = { html: '', body: bytes, empty: false };
        } else {
          outcome = { html: S.s, empty: false };
        }
        if (seconds !== undefined) outcome.cacheSeconds = seconds;
        return outcome;
      };
      const then = (r: unknown, next: (v: unknown) => RenderOutput | Promise<RenderOutput>): RenderOutput | Promise<RenderOutput> =>
        isThenable(r) ? Promise.resolve(r).then(next) : next(r);

      const body = (): RenderOutput | Promise<RenderOutput> => {
        const r = code.top(S, c, '', 0);
        return r === undefined ? finish() : r.then(finish);
      };
      const cacheStep = (): RenderOutput | Promise<RenderOutput> => {
        if (cacheSeconds === undefined) return body();
        if ('literal' in cacheSeconds) {
          seconds = cacheSeconds.literal;
          return body();
        }
        S.p = cachePos!;
        return then(cacheExpr!(S, c), (v) => {
          const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
          if (Number.isFinite(n) && n >= 0) seconds = Math.floor(n);
          return body();
        });
      };
      const renderIfStep = (): RenderOutput | Promise<RenderOutput> => {
        if (renderIf === undefined) return cacheStep();
        S.p = renderIfPos!;
        return then(renderIf(S, c), (v) => {
          if (!v || (Array.isArray(v) && v.length === 0)) return { html: '', empty: true };
          return cacheStep();
        });
      };
      try {
        if (generated !== ctx.epoch) generateCode();
        let started: unknown;
        if (unit.decls.length > 0) started = code.declare(S);
        const result = then(started, () => renderIfStep());
        return isThenable(result) ? Promise.resolve(result).catch(fail) : result;
      } catch (error) {
        return fail(error);
      }
    },
  };
  return view;
}


